//! The navigator agent: acting (sampled while training, greedy when judged) and the A2C update
//! with entropy regularisation (Mnih et al. 2016), as both generation papers train it.
//!
//! Reads of tensors are `async` (`into_data_async`) as the web requires; natively the futures
//! are ready at once (`crate::util::block_on`).

use burn::module::{ModuleVisitor, Param};
use burn::optim::GradientsParams;
use burn::prelude::*;
use serde::{Deserialize, Serialize};

use super::config::NavigatorConfig;
use super::features::{EpisodeMemory, NavAction, NavState, encode};
use super::model::{NavigatorModel, Padded};
use crate::env::Observation;
use crate::learn::adam::Adam;
use crate::learn::vocab::Vocab;
use crate::rng::Rng;

/// One step of an episode: the state acted in, the choice, and the learning reward that followed.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Transition {
    pub state: NavState,
    pub action: NavAction,
    pub reward: f64,
}

pub use crate::learn::Counters;

/// What one update did (means over the batch's steps).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct UpdateStats {
    pub loss: f32,
    pub policy_loss: f32,
    pub value_loss: f32,
    pub entropy: f32,
    /// Mean discounted return from each step.
    pub mean_return: f32,
    pub steps: u32,
}

pub struct Navigator {
    pub cfg: NavigatorConfig,
    pub vocab: Vocab,
    pub counters: Counters,
    model: Option<NavigatorModel>,
    optim: Adam,
    /// Sampling the policy's choices.
    rng: Rng,
}

/// Parameter init draws from the backend's process-wide generator: hold this while seeding and
/// initialising so concurrent agents (e.g. parallel tests) cannot interleave their draws.
static INIT_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

struct Touch;
impl ModuleVisitor for Touch {
    fn visit_float<const D: usize>(&mut self, p: &Param<Tensor<D>>) {
        let _ = p.val();
    }
}

impl Navigator {
    /// A fresh navigator training on `device` (an autodiff device, e.g. `Device::flex().autodiff()`).
    pub fn new(cfg: NavigatorConfig, device: &Device, seed: u64) -> Result<Self, String> {
        cfg.validate()?;
        let model = {
            let _guard = INIT_LOCK.lock().unwrap_or_else(|e| e.into_inner());
            device.seed(seed);
            let m = NavigatorModel::new(&cfg, device);
            m.visit(&mut Touch);
            m
        };
        Ok(Navigator {
            vocab: Vocab::new(cfg.vocab_cap),
            optim: Adam::new(cfg.adam_epsilon, None),
            counters: Counters::default(),
            model: Some(model),
            rng: Rng::new(seed ^ 0x6e61_7669_6761_746f),
            cfg,
        })
    }

    /// A navigator from its parts (a loaded checkpoint).
    pub(crate) fn assemble(cfg: NavigatorConfig, vocab: Vocab, counters: Counters, model: NavigatorModel, optim: Adam, rng: Rng) -> Self {
        Navigator { cfg, vocab, counters, model: Some(model), optim, rng }
    }

    /// Adam's moments (see [`Adam::save`]); `None` before the first update.
    pub async fn optimizer_state(&self) -> Result<Option<Vec<u8>>, String> {
        if self.optim.is_empty() {
            return Ok(None);
        }
        self.optim.save(self.model()).await.map(Some)
    }

    /// Continues with Adam state saved by [`Self::optimizer_state`].
    pub fn load_optimizer_state(&mut self, bytes: &[u8]) -> Result<(), String> {
        let model = self.model.as_ref().expect("model");
        self.optim.load(model, bytes)
    }

    /// The sampling generator's state, so a resumed run draws what the original would have.
    pub fn rng_state(&self) -> u64 {
        self.rng.state()
    }

    pub fn set_rng_state(&mut self, state: u64) {
        self.rng = Rng::from_state(state);
    }

    pub fn model(&self) -> &NavigatorModel {
        self.model.as_ref().expect("the model is only taken during an update")
    }

    /// Reads an observation; new tokens join the vocabulary only while `grow` (training).
    pub fn encode(&mut self, obs: &Observation, memory: &mut EpisodeMemory, grow: bool) -> NavState {
        encode(obs, &self.cfg, &mut self.vocab, grow, memory)
    }

    /// The policy's probabilities over `state`'s open choices (in its own flat layout: sets, then
    /// clicks), and the value.
    pub async fn policy(&self, state: &NavState) -> Result<(Vec<(NavAction, f32)>, f32), String> {
        let p = Padded::new(&[state]);
        let out = self.model().valid().forward(&p);
        let lp = read(out.log_probs.reshape([p.width()])).await?;
        let v = read(out.value).await?;
        let probs = (0..p.width())
            .map(|i| (p.choice(i), lp[i].exp()))
            .filter(|&(a, _)| state.is_open(a))
            .collect();
        Ok((probs, v[0]))
    }

    /// A choice in `state`: sampled from the policy, or its most likely one when `greedy`.
    /// `None` when nothing is open.
    pub async fn act(&mut self, state: &NavState, greedy: bool) -> Result<Option<NavAction>, String> {
        if !state.any_open() {
            return Ok(None);
        }
        let (probs, _) = self.policy(state).await?;
        if greedy {
            // Ties go to the first, so evaluation is deterministic.
            let best = probs.iter().fold(None::<(NavAction, f32)>, |b, &(a, p)| match b {
                Some((_, bp)) if bp >= p => b,
                _ => Some((a, p)),
            });
            return Ok(best.map(|(a, _)| a));
        }
        let total: f32 = probs.iter().map(|&(_, p)| p).sum();
        let mut x = self.rng.next_f64() as f32 * total;
        for &(a, p) in &probs {
            if x < p {
                return Ok(Some(a));
            }
            x -= p;
        }
        Ok(probs.last().map(|&(a, _)| a))
    }

    /// One A2C update on whole episodes: returns are discounted to each episode's end (episodes
    /// end by success, failure or the step limit, all terminal), advantage = return − value.
    pub async fn update(&mut self, episodes: &[Vec<Transition>]) -> Result<UpdateStats, String> {
        let steps: Vec<&Transition> = episodes.iter().flatten().collect();
        if steps.is_empty() {
            return Err("an update needs at least one step".into());
        }
        let mut returns = Vec::with_capacity(steps.len());
        for ep in episodes {
            let mut g = 0.0;
            let mut rs: Vec<f32> = ep
                .iter()
                .rev()
                .map(|t| {
                    g = t.reward + self.cfg.discount * g;
                    g as f32
                })
                .collect();
            rs.reverse();
            returns.extend(rs);
        }
        let states: Vec<&NavState> = steps.iter().map(|t| &t.state).collect();
        let p = Padded::new(&states);
        let n = steps.len();
        let model = self.model.take().expect("model");
        let dev = model.device();
        let plain = dev.clone().without_autodiff();

        let out = model.forward(&p);
        let idx: Vec<i64> = steps.iter().map(|t| p.index(t.action) as i64).collect();
        let idx = Tensor::<2, Int>::from_data(TensorData::new(idx, [n, 1]), &plain);
        let logp_a = out.log_probs.clone().gather(1, idx).reshape([n]);
        let g = Tensor::<1>::from_data(TensorData::new(returns.clone(), [n]), &plain);
        let advantage = g.clone() - out.value.clone().detach();
        let policy_loss = (logp_a * advantage).mean().neg();
        let value_loss = (g - out.value).square().mean();
        let probs = out.log_probs.clone().exp();
        let entropy = (probs * out.log_probs).sum_dim(1).mean().neg();
        let loss = policy_loss.clone()
            + value_loss.clone().mul_scalar(self.cfg.value_coef)
            - entropy.clone().mul_scalar(self.cfg.entropy_coef);

        let figures = Tensor::cat(
            vec![loss.clone().detach(), policy_loss.detach(), value_loss.detach(), entropy.detach()],
            0,
        );
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        let grads = match self.cfg.max_grad_norm {
            Some(max) => clip_global_norm(&model, grads, max),
            None => grads,
        };
        let model = self.optim.step(self.cfg.learning_rate, model, grads);
        self.model = Some(model);
        self.counters.updates += 1;

        let f = read(figures).await?;
        if f.iter().any(|x| !x.is_finite()) {
            return Err(format!("the update gave a non-finite loss ({:?}): training stopped", f));
        }
        Ok(UpdateStats {
            loss: f[0],
            policy_loss: f[1],
            value_loss: f[2],
            entropy: f[3],
            mean_return: returns.iter().sum::<f32>() / n as f32,
            steps: n as u32,
        })
    }
}

/// One update of a navigator on `device` on a made-up batch, for timing a backend before a run.
pub async fn probe_update(cfg: &NavigatorConfig, device: &Device) -> Result<(), String> {
    use super::features::ELEMENT_FEATURES;
    let (e, f, t) = (60usize, 6usize, cfg.max_tokens);
    let state = NavState {
        elements: e,
        fields: f,
        element_tokens: (0..e * super::features::ATTRIBUTES * t).map(|i| if i % t < 2 { 2 + (i % 97) as u32 } else { crate::learn::vocab::PAD }).collect(),
        element_features: (0..e * ELEMENT_FEATURES).map(|i| (i % 7) as f32 / 7.0).collect(),
        field_tokens: (0..f * t).map(|i| if i % t == 0 { 2 + i as u32 } else { crate::learn::vocab::PAD }).collect(),
        set_open: vec![true; f * e],
        click_open: vec![true; e],
        refs: (1..=e as u32).collect(),
        values: vec![String::new(); f],
        max_tokens: t,
    };
    let cfg = NavigatorConfig { vocab_cap: cfg.vocab_cap.max(200), ..cfg.clone() };
    let mut nav = Navigator::new(cfg, device, 1)?;
    let episode: Vec<Transition> =
        (0..16).map(|i| Transition { state: state.clone(), action: NavAction::Click { element: i }, reward: 0.1 }).collect();
    nav.update(&[episode]).await.map(|_| ())
}

/// Scales every gradient by min(1, max / ‖g‖) with ‖g‖ the norm over all of them (Pascanu et
/// al., 2013), without reading anything back.
fn clip_global_norm(model: &NavigatorModel, mut grads: GradientsParams, max: f64) -> GradientsParams {
    struct Norm<'a> {
        grads: &'a GradientsParams,
        sum: Option<Tensor<1>>,
    }
    impl ModuleVisitor for Norm<'_> {
        fn visit_float<const D: usize>(&mut self, p: &Param<Tensor<D>>) {
            if let Some(g) = self.grads.get::<D>(p.id) {
                let s = g.square().sum();
                self.sum = Some(match self.sum.take() {
                    Some(acc) => acc + s,
                    None => s,
                });
            }
        }
    }
    struct Scale<'a> {
        grads: &'a mut GradientsParams,
        factor: Tensor<1>,
    }
    impl ModuleVisitor for Scale<'_> {
        fn visit_float<const D: usize>(&mut self, p: &Param<Tensor<D>>) {
            if let Some(g) = self.grads.remove::<D>(p.id) {
                let f = self.factor.clone().reshape([1; D]);
                self.grads.register::<D>(p.id, g * f);
            }
        }
    }
    let mut norm = Norm { grads: &grads, sum: None };
    model.visit(&mut norm);
    let Some(sum) = norm.sum else { return grads };
    let factor = (sum.sqrt().add_scalar(1e-6)).recip().mul_scalar(max).clamp_max(1.0);
    model.visit(&mut Scale { grads: &mut grads, factor });
    grads
}

async fn read<const D: usize>(t: Tensor<D>) -> Result<Vec<f32>, String> {
    let data = t.into_data_async().await.map_err(|e| format!("reading a tensor failed: {e:?}"))?;
    data.try_to_vec::<f32>().map_err(|e| format!("unexpected tensor data: {e:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::navigator::features::tests::observation;
    use crate::util::block_on;

    fn small() -> NavigatorConfig {
        NavigatorConfig { vocab_cap: 64, embedding_dim: 16, latent_dim: 12, ..NavigatorConfig::default() }
    }

    /// A fixed batch: two episodes on the fixture page, one rewarded and one not.
    fn batch(nav: &mut Navigator) -> Vec<Vec<Transition>> {
        let mut eps = Vec::new();
        for (choice, reward) in [(NavAction::Set { field: 1, element: 1 }, 1.0), (NavAction::Click { element: 0 }, -1.0)] {
            let mut mem = EpisodeMemory::default();
            let s = nav.encode(&observation(), &mut mem, true);
            eps.push(vec![Transition { state: s, action: choice, reward }]);
        }
        eps
    }

    #[test]
    fn greedy_and_sampled_choices_are_always_open() {
        let mut nav = Navigator::new(small(), &Device::flex().autodiff(), 3).unwrap();
        let mut mem = EpisodeMemory::default();
        let s0 = nav.encode(&observation(), &mut mem, true);
        mem.acted(&s0, NavAction::Set { field: 0, element: 1 });
        mem.acted(&s0, NavAction::Set { field: 1, element: 1 });
        mem.acted(&s0, NavAction::Click { element: 1 });
        let s = nav.encode(&observation(), &mut mem, true);
        for i in 0..200 {
            let a = block_on(nav.act(&s, i % 10 == 0)).unwrap().unwrap();
            assert!(s.is_open(a), "{a:?} was closed");
        }
        // With every choice taken, nothing is chosen.
        for a in [NavAction::Set { field: 0, element: 0 }, NavAction::Set { field: 1, element: 0 }, NavAction::Click { element: 0 }] {
            mem.acted(&s, a);
        }
        let none = nav.encode(&observation(), &mut mem, true);
        assert_eq!(block_on(nav.act(&none, false)).unwrap(), None);
    }

    #[test]
    fn a2c_moves_the_policy_toward_rewarded_choices() {
        let mut nav = Navigator::new(small(), &Device::flex().autodiff(), 7).unwrap();
        let eps = batch(&mut nav);
        let good = eps[0][0].action;
        let bad = eps[1][0].action;
        let prob = |nav: &Navigator, a: NavAction| {
            block_on(nav.policy(&eps[0][0].state)).unwrap().0.iter().find(|(b, _)| *b == a).unwrap().1
        };
        let (p_good, p_bad) = (prob(&nav, good), prob(&nav, bad));
        let first = block_on(nav.update(&eps)).unwrap();
        assert!(first.loss.is_finite() && first.entropy > 0.0);
        assert!((first.mean_return - 0.0).abs() < 1e-6, "returns +1 and −1");
        for _ in 0..30 {
            block_on(nav.update(&eps)).unwrap();
        }
        assert!(prob(&nav, good) > p_good, "rewarded choice: {p_good} → {}", prob(&nav, good));
        assert!(prob(&nav, bad) < p_bad, "punished choice: {p_bad} → {}", prob(&nav, bad));
        assert_eq!(nav.counters.updates, 31);
    }

    #[test]
    fn the_value_moves_toward_the_return() {
        let cfg = NavigatorConfig { learning_rate: 1e-2, ..small() };
        let mut nav = Navigator::new(cfg, &Device::flex().autodiff(), 9).unwrap();
        let mut eps = batch(&mut nav);
        eps.truncate(1);
        eps[0][0].reward = 0.8;
        let value = |nav: &Navigator| block_on(nav.policy(&eps[0][0].state)).unwrap().1;
        let v0 = value(&nav);
        for _ in 0..40 {
            block_on(nav.update(&eps)).unwrap();
        }
        let v = value(&nav);
        assert!((v - 0.8).abs() < (v0 - 0.8).abs() / 2.0, "{v0} → {v}");
    }

    #[test]
    fn entropy_alone_flattens_the_policy() {
        // With only the entropy term (zero advantages and value weight), the policy's entropy
        // rises: the regulariser has the right sign.
        let cfg = NavigatorConfig { entropy_coef: 1.0, value_coef: 0.0, ..small() };
        let mut nav = Navigator::new(cfg, &Device::flex().autodiff(), 11).unwrap();
        let mut eps = batch(&mut nav);
        for ep in &mut eps {
            ep[0].reward = 0.0;
        }
        let e0 = block_on(nav.update(&eps)).unwrap().entropy;
        let mut e = e0;
        for _ in 0..20 {
            e = block_on(nav.update(&eps)).unwrap().entropy;
        }
        assert!(e > e0, "{e0} → {e}");
    }

    #[test]
    fn the_same_seed_gives_the_same_losses() {
        let run = || {
            let mut nav = Navigator::new(small(), &Device::flex().autodiff(), 5).unwrap();
            let eps = batch(&mut nav);
            (0..5).map(|_| block_on(nav.update(&eps)).unwrap().loss).collect::<Vec<_>>()
        };
        assert_eq!(run(), run());
    }

    #[test]
    fn global_norm_clipping_scales_every_gradient_to_the_bound() {
        struct Grads<'a>(&'a GradientsParams, Vec<f32>);
        impl ModuleVisitor for Grads<'_> {
            fn visit_float<const D: usize>(&mut self, p: &Param<Tensor<D>>) {
                if let Some(g) = self.0.get::<D>(p.id) {
                    self.1.extend(g.into_data().try_to_vec::<f32>().unwrap());
                }
            }
        }
        let flat = |model: &NavigatorModel, g: &GradientsParams| {
            let mut v = Grads(g, Vec::new());
            model.visit(&mut v);
            v.1
        };
        let mut nav = Navigator::new(small(), &Device::flex().autodiff(), 2).unwrap();
        let eps = batch(&mut nav);
        let states: Vec<&NavState> = eps.iter().map(|e| &e[0].state).collect();
        let p = Padded::new(&states);
        let model = nav.model();
        let grads = || GradientsParams::from_grads(model.forward(&p).value.sum().backward(), model);
        let raw = flat(model, &grads());
        let norm = raw.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!(norm > 0.01, "{norm}");
        let clipped = flat(model, &clip_global_norm(model, grads(), 0.01));
        let clipped_norm = clipped.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((clipped_norm - 0.01).abs() < 1e-4, "{clipped_norm}");
        for (a, b) in raw.iter().zip(&clipped) {
            assert!((a * 0.01 / norm - b).abs() < 1e-6, "same direction");
        }
        let loose = flat(model, &clip_global_norm(model, grads(), 1e6));
        assert_eq!(loose, raw, "under the bound nothing changes");
    }
}

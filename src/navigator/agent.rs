//! The navigator agent: acting (sampled or ε-greedy while training, greedy when judged) and
//! its learner: the A2C update with entropy regularisation (Mnih et al. 2016), as both
//! generation papers train it, or the reference code's DQN head (n-step double DQN with a
//! replay buffer and a target network, as ACME's DQN agent that CoDE is built on; its TD
//! update and learner state in [`dqn`]).
//!
//! Reads of tensors are `async` (`into_data_async`) as the web requires; natively the futures
//! are ready at once (`crate::util::block_on`).

use burn::optim::GradientsParams;
use burn::prelude::*;
use serde::{Deserialize, Serialize};

use super::config::{Head, NavigatorConfig};
use super::features::{EpisodeMemory, NavAction, NavState, encode};
use super::model::{NavigatorModel, Padded};
use super::replay::Replay;
use crate::env::Observation;
use crate::learn::adam::Adam;
use crate::learn::clip::clip_global_norm;
use crate::learn::init::{read, seeded};
use crate::learn::shards::{self, balanced_split, halves_gradients};
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

/// An update of at least this many steps is taken in two halves where the machine splits work
/// (`learn::shards`). A judgement, not a sweep: each half pays the whole network's fixed cost
/// (about 100 tensor operations), which is most of an update this small (docs/benchmarks-code.md
/// §2d).
const SPLIT_UPDATES_FROM: usize = 8;
/// A forward pass over at least this many states while acting is split likewise (measured: a
/// batch of 8 costs as much whole as in halves of 4; docs/benchmarks-code.md §2d).
#[cfg(not(target_family = "wasm"))]
const SPLIT_ACTING_FROM: usize = 16;

mod dqn;
pub use dqn::DqnState;

/// What one iteration's learning did (means over the batch's steps). Under DQN, `loss` is the
/// mean TD loss of the iteration's updates (0 when it made none) and the A2C terms are 0.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct UpdateStats {
    pub loss: f32,
    pub policy_loss: f32,
    pub value_loss: f32,
    pub entropy: f32,
    /// Mean discounted return from each step.
    pub mean_return: f32,
    pub steps: u32,
    /// Gradient steps taken (A2C: 1; DQN: as many as the replay ratio owes).
    #[serde(default)]
    pub updates: u32,
    /// The DQN head's ε while these episodes were played (A2C: 0).
    #[serde(default)]
    pub epsilon: f32,
}

pub struct Navigator {
    pub cfg: NavigatorConfig,
    pub vocab: Vocab,
    pub counters: Counters,
    model: Option<NavigatorModel>,
    optim: Adam,
    /// Sampling the policy's choices, ε-greedy draws and replay samples.
    rng: Rng,
    /// `Some` under the DQN head.
    dqn: Option<DqnState>,
}

impl Navigator {
    /// A fresh navigator training on `device` (an autodiff device, e.g. `Device::flex().autodiff()`).
    pub fn new(cfg: NavigatorConfig, device: &Device, seed: u64) -> Result<Self, String> {
        cfg.validate()?;
        let model = seeded(device, seed, |d| NavigatorModel::new(&cfg, d));
        Ok(Navigator::assemble(
            cfg.clone(),
            Vocab::new(cfg.vocab_cap),
            Counters::default(),
            model,
            Adam::new(cfg.adam_epsilon, None),
            Rng::new(seed ^ 0x6e61_7669_6761_746f),
        ))
    }

    /// A navigator from its parts (a loaded checkpoint); under DQN the target network starts as
    /// a copy of `model` and the replay empty.
    pub(crate) fn assemble(cfg: NavigatorConfig, vocab: Vocab, counters: Counters, model: NavigatorModel, optim: Adam, rng: Rng) -> Self {
        let dqn = (cfg.head == Head::Dqn).then(|| DqnState { target: model.valid(), replay: Replay::new(cfg.dqn_replay_capacity) });
        Navigator { cfg, vocab, counters, model: Some(model), optim, rng, dqn }
    }

    /// The DQN head's target network and replay (`None` under A2C).
    pub fn dqn(&self) -> Option<&DqnState> {
        self.dqn.as_ref()
    }

    /// What a snapshot needs beside the checkpoint to resume exactly; `None` when there is
    /// nothing yet. A2C: Adam's moments (see [`Adam::save`]); DQN: those, the target network
    /// and the replay ([`Self::dqn_state`]).
    pub async fn optimizer_state(&self) -> Result<Option<Vec<u8>>, String> {
        let adam = if self.optim.is_empty() { None } else { Some(self.optim.save(self.model()).await?) };
        match &self.dqn {
            None => Ok(adam),
            Some(dqn) => self.dqn_state(dqn, adam).await,
        }
    }

    /// Continues with the state saved by [`Self::optimizer_state`]. A damaged record, or one of
    /// another network or head, is refused and nothing changes.
    pub fn load_optimizer_state(&mut self, bytes: &[u8]) -> Result<(), String> {
        match (self.dqn.is_some(), bytes.starts_with(dqn::STATE_MAGIC)) {
            (false, false) => self.optim.load(self.model.as_ref().expect("model"), bytes),
            (false, true) => Err("the saved state belongs to a DQN navigator; this one learns with A2C".into()),
            (true, false) => Err("the saved state belongs to an A2C navigator; this one learns with DQN".into()),
            (true, true) => self.load_dqn_state(bytes),
        }
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
        let probs = (0..p.width()).map(|i| (p.choice(i), lp[i].exp())).filter(|&(a, _)| state.is_open(a)).collect();
        Ok((probs, v[0]))
    }

    /// The DQN head's Q-values of `state`'s open choices (in its flat layout: sets, then clicks).
    pub async fn q_values(&self, state: &NavState) -> Result<Vec<(NavAction, f32)>, String> {
        let p = Padded::new(&[state]);
        let q = read(self.model().valid().q_values(&p).reshape([p.width()])).await?;
        Ok((0..p.width()).map(|i| (p.choice(i), q[i])).filter(|&(a, _)| state.is_open(a)).collect())
    }

    /// A choice in `state`, `None` when nothing is open, drawn from the navigator's own
    /// generator (see [`Self::choose`]; ε from the schedule at the current env step).
    pub async fn act(&mut self, state: &NavState, greedy: bool) -> Result<Option<NavAction>, String> {
        let mut rng = [self.rng.clone()];
        let epsilon = self.cfg.epsilon(self.counters.env_steps);
        let choice = self.choose(&[state], greedy, &mut rng, epsilon).await?;
        self.rng = rng.into_iter().next().expect("one generator");
        Ok(choice[0])
    }

    /// A choice in each of `states` from one forward pass over all of them, `None` where
    /// nothing is open; `rngs[i]` draws state i's choice. When `greedy`: the policy's most
    /// likely choice (A2C) or the highest Q (DQN). Otherwise sampled from the policy (A2C), or
    /// ε-greedy (DQN); either way only open choices. A state's choice depends only on the
    /// state, the weights and its own generator, not on the others in the batch.
    pub async fn choose(&self, states: &[&NavState], greedy: bool, rngs: &mut [Rng], epsilon: f64) -> Result<Vec<Option<NavAction>>, String> {
        assert_eq!(states.len(), rngs.len(), "a generator per state");
        // Each state's choice is its own (above), so halves of the batch may be chosen apart.
        #[cfg(not(target_family = "wasm"))]
        if states.len() >= SPLIT_ACTING_FROM && shards::splits(&self.model().device()) {
            use crate::util::block_on;
            let mid = states.len() / 2;
            let (ra, rb) = rngs.split_at_mut(mid);
            let (a, b) = shards::join(
                || block_on(self.choose_in_one_pass(&states[..mid], greedy, ra, epsilon)),
                || block_on(self.choose_in_one_pass(&states[mid..], greedy, rb, epsilon)),
            );
            return Ok([a?, b?].concat());
        }
        self.choose_in_one_pass(states, greedy, rngs, epsilon).await
    }

    /// [`Self::choose`] with one forward pass over all of `states`.
    async fn choose_in_one_pass(&self, states: &[&NavState], greedy: bool, rngs: &mut [Rng], epsilon: f64) -> Result<Vec<Option<NavAction>>, String> {
        let live: Vec<&NavState> = states.iter().copied().filter(|s| s.any_open()).collect();
        if live.is_empty() {
            return Ok(vec![None; states.len()]);
        }
        let p = Padded::new(&live);
        let w = p.width();
        let dqn = self.cfg.head == Head::Dqn;
        let scores = if dqn { read(self.model().valid().q_values(&p)).await? } else { read(self.model().valid().forward(&p).log_probs).await? };
        let mut row = 0;
        let mut out = Vec::with_capacity(states.len());
        for (state, rng) in states.iter().zip(rngs.iter_mut()) {
            if !state.any_open() {
                out.push(None);
                continue;
            }
            let scored = &scores[row * w..(row + 1) * w];
            row += 1;
            if dqn {
                if !greedy && rng.next_f64() < epsilon {
                    let open: Vec<NavAction> = (0..state.choices()).map(|i| choice_at(state, i)).filter(|&a| state.is_open(a)).collect();
                    out.push(Some(open[rng.below(open.len())]));
                    continue;
                }
                let q: Vec<(NavAction, f32)> = (0..w).map(|i| (p.choice(i), scored[i])).filter(|&(a, _)| state.is_open(a)).collect();
                out.push(argmax(&q));
                continue;
            }
            let probs: Vec<(NavAction, f32)> = (0..w).map(|i| (p.choice(i), scored[i].exp())).filter(|&(a, _)| state.is_open(a)).collect();
            out.push(if greedy { argmax(&probs) } else { sample(&probs, rng) });
        }
        Ok(out)
    }

    /// A fresh generator for one episode's choices, drawn from the navigator's own: each
    /// episode of an iteration samples from its own stream, so episodes played side by side
    /// choose what they would have chosen one at a time.
    pub fn episode_stream(&mut self) -> Rng {
        Rng::new(self.rng.next_u64())
    }

    /// Learns from an iteration's whole episodes: one A2C update, or under DQN the episodes go
    /// into the replay and the TD updates the replay ratio owes follow.
    pub async fn update(&mut self, episodes: &[Vec<Transition>]) -> Result<UpdateStats, String> {
        if episodes.iter().all(|e| e.is_empty()) {
            return Err("an update needs at least one step".into());
        }
        match self.cfg.head {
            Head::A2c => self.a2c_update(episodes).await,
            Head::Dqn => self.dqn_update(episodes).await,
        }
    }

    /// One A2C update on whole episodes: returns are discounted to each episode's end (episodes
    /// end by success, failure or the step limit, all terminal), advantage = return − value.
    async fn a2c_update(&mut self, episodes: &[Vec<Transition>]) -> Result<UpdateStats, String> {
        let model = self.model.take().expect("model");
        let (grads, figures, returns) = self.a2c_gradients(&model, episodes, shards::splits(&model.device()));
        let n = returns.len();
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
            updates: 1,
            epsilon: 0.0,
        })
    }

    /// The gradients of [`Self::a2c_loss`] over `episodes`, its figures and returns: in one pass,
    /// or when `split` in two halves of the episodes side by side (`learn::shards`: the same
    /// gradients within float rounding), the figures and returns put back together as one
    /// pass gives them.
    fn a2c_gradients(&self, model: &NavigatorModel, episodes: &[Vec<Transition>], split: bool) -> (GradientsParams, Tensor<1>, Vec<f32>) {
        let sizes: Vec<usize> = episodes.iter().map(Vec::len).collect();
        let n: usize = sizes.iter().sum();
        let both_halves_step = |&k: &usize| sizes[..k].iter().sum::<usize>() > 0 && sizes[k..].iter().sum::<usize>() > 0;
        let Some(k) = balanced_split(&sizes).filter(|k| split && n >= SPLIT_UPDATES_FROM && both_halves_step(k)) else {
            let (loss, figures, returns) = self.a2c_loss(model, episodes);
            return (GradientsParams::from_grads(loss.backward(), model), figures, returns);
        };
        let (grads, [(fa, ra), (fb, rb)]) = halves_gradients(model, [&episodes[..k], &episodes[k..]], |m, half| {
            let (loss, figures, returns) = self.a2c_loss(m, half);
            // The loss and figures are means over the half's steps: weighted by its share, they
            // add up to the whole batch's.
            let share = returns.len() as f32 / n as f32;
            (loss.mul_scalar(share), (figures.mul_scalar(share), returns))
        });
        (grads, fa + fb, [ra, rb].concat())
    }

    /// The A2C loss over every step of `episodes` in one forward pass: the mean over the steps
    /// of −log π(a|s)·(G − V) + value_coef·(G − V)² − entropy_coef·H(π(·|s)) − uniform_coef·
    /// mean over the open choices of log π(·|s), so a batch's loss
    /// (and gradient) is its episodes' losses weighted by their share of the steps. Also the
    /// figures [loss, policy loss, value loss, entropy] (detached) and each step's return G.
    fn a2c_loss(&self, model: &NavigatorModel, episodes: &[Vec<Transition>]) -> (Tensor<1>, Tensor<1>, Vec<f32>) {
        let steps: Vec<&Transition> = episodes.iter().flatten().collect();
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
        let plain = model.device().without_autodiff();

        let out = model.forward(&p);
        let idx: Vec<i64> = steps.iter().map(|t| p.index(t.action) as i64).collect();
        let idx = Tensor::<2, Int>::from_data(TensorData::new(idx, [n, 1]), &plain);
        let logp_a = out.log_probs.clone().gather(1, idx).reshape([n]);
        let g = Tensor::<1>::from_data(TensorData::new(returns.clone(), [n]), &plain);
        let advantage = g.clone() - out.value.clone().detach();
        let policy_loss = (logp_a * advantage).mean().neg();
        let value_loss = (g - out.value).square().mean();
        let probs = out.log_probs.clone().exp();
        let entropy = (probs * out.log_probs.clone()).sum_dim(1).mean().neg();
        let mut loss = policy_loss.clone() + value_loss.clone().mul_scalar(self.cfg.value_coef) - entropy.clone().mul_scalar(self.cfg.entropy_coef);
        if self.cfg.uniform_coef > 0.0 {
            let w = p.mask.len() / n;
            let open: Vec<f32> = p.mask.iter().map(|&m| if m == 0.0 { 1.0 } else { 0.0 }).collect();
            let open = Tensor::<2>::from_data(TensorData::new(open, [n, w]), &plain);
            let cross = (out.log_probs * open.clone()).sum_dim(1) / open.sum_dim(1).clamp_min(1.0);
            loss = loss - cross.mean().mul_scalar(self.cfg.uniform_coef);
        }
        let figures = Tensor::cat(vec![loss.clone().detach(), policy_loss.detach(), value_loss.detach(), entropy.detach()], 0);
        (loss, figures, returns)
    }
}

/// The choice at index `i` of a state's own flat layout (sets, then clicks).
fn choice_at(s: &NavState, i: usize) -> NavAction {
    if i < s.fields * s.elements {
        NavAction::Set { field: i / s.elements, element: i % s.elements }
    } else {
        NavAction::Click { element: i - s.fields * s.elements }
    }
}

/// A choice drawn in proportion to its probability.
fn sample(probs: &[(NavAction, f32)], rng: &mut Rng) -> Option<NavAction> {
    let total: f32 = probs.iter().map(|&(_, p)| p).sum();
    let mut x = rng.next_f64() as f32 * total;
    for &(a, p) in probs {
        if x < p {
            return Some(a);
        }
        x -= p;
    }
    probs.last().map(|&(a, _)| a)
}

/// The highest-scored choice; ties go to the first, so judging is deterministic.
fn argmax(scored: &[(NavAction, f32)]) -> Option<NavAction> {
    scored
        .iter()
        .fold(None::<(NavAction, f32)>, |b, &(a, p)| match b {
            Some((_, bp)) if bp >= p => b,
            _ => Some((a, p)),
        })
        .map(|(a, _)| a)
}

/// One update of a navigator on `device` on a made-up batch, for timing a backend before a run.
pub async fn probe_update(cfg: &NavigatorConfig, device: &Device) -> Result<(), String> {
    use super::features::ELEMENT_FEATURES;
    let (e, f, t) = (60usize, 6usize, cfg.max_tokens);
    let state = NavState {
        elements: e,
        fields: f,
        element_tokens: (0..e * super::features::ATTRIBUTES * t)
            .map(|i| if i % t < 2 { 2 + (i % 97) as u32 } else { crate::learn::vocab::PAD })
            .collect(),
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
    let Some(dqn) = nav.dqn.as_mut() else {
        return nav.update(&[episode]).await.map(|_| ());
    };
    // DQN: one TD update of a full batch (a fresh replay owes none yet).
    dqn.replay.push_episode(&episode, nav.cfg.dqn_n_step, nav.cfg.discount, nav.cfg.dqn_reward_clip);
    let batch = dqn.replay.sample(&mut nav.rng, nav.cfg.dqn_batch_size);
    nav.td_update(&batch).await.map(|_| ())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::navigator::features::tests::observation;
    use crate::util::block_on;
    use burn::module::{ModuleVisitor, Param};

    pub(crate) fn small() -> NavigatorConfig {
        NavigatorConfig { vocab_cap: 64, embedding_dim: 16, latent_dim: 12, ..NavigatorConfig::default() }
    }

    /// A fixed batch: two episodes on the fixture page, one rewarded and one not.
    pub(crate) fn batch(nav: &mut Navigator) -> Vec<Vec<Transition>> {
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
        let (s, mut mem) = partly_acted(&mut nav);
        for i in 0..200 {
            let a = block_on(nav.act(&s, i % 10 == 0)).unwrap().unwrap();
            assert!(s.is_open(a), "{a:?} was closed");
        }
        assert_nothing_left(&mut nav, &s, &mut mem);
    }

    /// The fixture page after three choices, so some are open and some closed.
    pub(crate) fn partly_acted(nav: &mut Navigator) -> (NavState, EpisodeMemory) {
        let mut mem = EpisodeMemory::default();
        let s0 = nav.encode(&observation(), &mut mem, true);
        mem.acted(&s0, NavAction::Set { field: 0, element: 1 });
        mem.acted(&s0, NavAction::Set { field: 1, element: 1 });
        mem.acted(&s0, NavAction::Click { element: 1 });
        (nav.encode(&observation(), &mut mem, true), mem)
    }

    /// With every choice on the fixture page taken, nothing is chosen.
    pub(crate) fn assert_nothing_left(nav: &mut Navigator, s: &NavState, mem: &mut EpisodeMemory) {
        for a in [NavAction::Set { field: 0, element: 0 }, NavAction::Set { field: 1, element: 0 }, NavAction::Click { element: 0 }] {
            mem.acted(s, a);
        }
        let none = nav.encode(&observation(), mem, true);
        assert_eq!(block_on(nav.act(&none, false)).unwrap(), None);
    }

    #[test]
    fn a2c_moves_the_policy_toward_rewarded_choices() {
        let mut nav = Navigator::new(small(), &Device::flex().autodiff(), 7).unwrap();
        let eps = batch(&mut nav);
        let good = eps[0][0].action;
        let bad = eps[1][0].action;
        let prob = |nav: &Navigator, a: NavAction| block_on(nav.policy(&eps[0][0].state)).unwrap().0.iter().find(|(b, _)| *b == a).unwrap().1;
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
    fn the_uniform_term_lifts_the_least_likely_choice() {
        // Drive one state's policy onto one choice so the rest sink, then go on with the same
        // updates with and without the cross-entropy from uniform (no entropy bonus either way):
        // with it, the least likely open choice ends far likelier. The term has the right sign
        // and reaches the choices A2C left.
        let least_after = |uniform_coef: f64| {
            let cfg = NavigatorConfig { learning_rate: 1e-2, entropy_coef: 0.0, ..small() };
            let mut nav = Navigator::new(cfg.clone(), &Device::flex().autodiff(), 12).unwrap();
            let mut eps = batch(&mut nav);
            eps.truncate(1);
            eps[0].truncate(1);
            eps[0][0].reward = 1.0;
            for _ in 0..30 {
                block_on(nav.update(&eps)).unwrap();
            }
            nav.cfg = NavigatorConfig { uniform_coef, ..cfg };
            for _ in 0..20 {
                block_on(nav.update(&eps)).unwrap();
            }
            block_on(nav.policy(&eps[0][0].state)).unwrap().0.iter().map(|&(_, p)| p).fold(1.0f32, f32::min)
        };
        let (without, with) = (least_after(0.0), least_after(1.0));
        assert!(with > 2.0 * without, "least likely choice: {without} without the term, {with} with it");
    }

    /// Every gradient of `loss` w.r.t. the model's parameters, flattened in visiting order.
    fn gradients(model: &NavigatorModel, loss: Tensor<1>) -> Vec<f32> {
        flat(model, &GradientsParams::from_grads(loss.backward(), model))
    }

    /// `grads` flattened in the model's visiting order (0 where a parameter has none).
    fn flat(model: &NavigatorModel, grads: &GradientsParams) -> Vec<f32> {
        struct Flat<'a>(&'a GradientsParams, Vec<f32>);
        impl ModuleVisitor for Flat<'_> {
            fn visit_float<const D: usize>(&mut self, p: &Param<Tensor<D>>) {
                if let Some(g) = self.0.get::<D>(p.id) {
                    self.1.extend(g.into_data().try_to_vec::<f32>().unwrap());
                } else {
                    self.1.extend(std::iter::repeat_n(0.0, p.val().shape().num_elements()));
                }
            }
        }
        let mut flat = Flat(grads, Vec::new());
        model.visit(&mut flat);
        flat.1
    }

    /// Six episodes of different lengths, sampled on two test sites.
    fn uneven_episodes(nav: &mut Navigator) -> Vec<Vec<Transition>> {
        use crate::gminiwob::test_sites::test_site;
        use crate::navigator::rollout::{Job, play};
        use crate::navigator::train::{sim_pool, site_task};
        let tasks = [site_task("login-2", test_site("login", 2).unwrap()), site_task("shopping-1", test_site("shopping", 1).unwrap())];
        let jobs: Vec<Job> = (0..6).map(|i| Job { task: &tasks[i % 2], seed: i as u32, stream: Rng::new(i as u64) }).collect();
        let episodes: Vec<Vec<Transition>> =
            block_on(play(&mut sim_pool(6), nav, &jobs, false, true)).unwrap().into_iter().map(|p| p.steps).collect();
        let sizes: Vec<usize> = episodes.iter().map(Vec::len).collect();
        assert!(sizes.iter().any(|&n| n != sizes[0]), "episodes of different lengths: {sizes:?}");
        episodes
    }

    /// The update taken in two halves side by side (the second core) learns what one pass
    /// does: the same gradients within float rounding, the same figures and returns.
    #[test]
    fn an_update_in_two_halves_has_the_whole_passes_gradients_and_figures() {
        let mut nav = Navigator::new(NavigatorConfig { vocab_cap: 300, ..small() }, &Device::flex().autodiff(), 4).unwrap();
        let episodes = uneven_episodes(&mut nav);
        assert!(episodes.iter().map(Vec::len).sum::<usize>() >= SPLIT_UPDATES_FROM, "a batch the update splits");
        let model = nav.model();
        let (g1, f1, r1) = nav.a2c_gradients(model, &episodes, false);
        let (g2, f2, r2) = nav.a2c_gradients(model, &episodes, true);
        assert_eq!(r1, r2, "each step's return, in order");
        let (f1, f2) = (f1.into_data().try_to_vec::<f32>().unwrap(), f2.into_data().try_to_vec::<f32>().unwrap());
        for (a, b) in f1.iter().zip(&f2) {
            assert!((a - b).abs() < 1e-5 * a.abs().max(1.0), "figures {f1:?} in one pass, {f2:?} by halves");
        }
        let (g1, g2) = (flat(model, &g1), flat(model, &g2));
        let scale = g1.iter().map(|g| g.abs()).fold(0.0, f32::max);
        assert!(scale > 1e-3, "the gradients are not all zero");
        assert_ne!(g1, g2, "two halves are not one pass bit for bit (so the halves did run)");
        for (i, (a, b)) in g1.iter().zip(&g2).enumerate() {
            assert!((a - b).abs() < 1e-5 * scale, "gradient {i}: {a} in one pass, {b} by halves");
        }
    }

    /// The batched update's loss and gradients are its episodes' own, each weighted by its share
    /// of the steps: one forward over a batch of episodes of different sizes (padded to the
    /// largest) learns what their separate losses would.
    #[test]
    fn a_batchs_loss_and_gradients_are_its_episodes_weighted_by_their_steps() {
        let mut nav = Navigator::new(NavigatorConfig { vocab_cap: 300, ..small() }, &Device::flex().autodiff(), 4).unwrap();
        let episodes = uneven_episodes(&mut nav);
        let n: usize = episodes.iter().map(Vec::len).sum();
        let model = nav.model();
        let (loss, _, _) = nav.a2c_loss(model, &episodes);
        let whole = loss.clone().into_data().try_to_vec::<f32>().unwrap()[0];
        let whole_grads = gradients(model, loss);
        let (mut sum, mut sum_grads) = (0.0f64, vec![0.0f64; whole_grads.len()]);
        for ep in &episodes {
            let w = ep.len() as f64 / n as f64;
            let (loss, _, _) = nav.a2c_loss(model, std::slice::from_ref(ep));
            sum += w * loss.clone().into_data().try_to_vec::<f32>().unwrap()[0] as f64;
            for (s, g) in sum_grads.iter_mut().zip(gradients(model, loss)) {
                *s += w * g as f64;
            }
        }
        assert!((whole as f64 - sum).abs() < 1e-4 * sum.abs().max(1.0), "{whole} vs {sum}");
        let scale = sum_grads.iter().map(|g| g.abs()).fold(0.0, f64::max);
        assert!(scale > 1e-3, "the gradients are not all zero");
        for (i, (a, b)) in whole_grads.iter().zip(&sum_grads).enumerate() {
            assert!((*a as f64 - b).abs() < 1e-4 * scale, "gradient {i}: {a} vs {b}");
        }
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
}

//! The navigator agent: acting (sampled or ε-greedy while training, greedy when judged) and
//! its learner: the A2C update with entropy regularisation (Mnih et al. 2016), as both
//! generation papers train it, or the reference code's DQN head (n-step double DQN with a
//! replay buffer and a target network, as ACME's DQN agent that CoDE is built on).
//!
//! Reads of tensors are `async` (`into_data_async`) as the web requires; natively the futures
//! are ready at once (`crate::util::block_on`).

use burn::module::{ModuleVisitor, Param};
use burn::optim::GradientsParams;
use burn::prelude::*;
use serde::{Deserialize, Serialize};

use super::config::{Head, NavigatorConfig};
use super::features::{EpisodeMemory, NavAction, NavState, encode};
use super::model::{NavigatorModel, Padded};
use super::replay::Replay;
use crate::env::Observation;
use crate::learn::adam::Adam;
use crate::learn::init::{read, seeded};
use crate::learn::vocab::Vocab;
use crate::rng::Rng;

const DQN_STATE_MAGIC: &[u8; 8] = b"WLNVDQN1";

/// One step of an episode: the state acted in, the choice, and the learning reward that followed.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Transition {
    pub state: NavState,
    pub action: NavAction,
    pub reward: f64,
}

pub use crate::learn::Counters;

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

/// What the DQN head keeps beside the online network.
pub struct DqnState {
    /// The target network (not differentiated), a copy of the online one every
    /// `dqn_target_update_period` updates.
    pub target: NavigatorModel,
    pub replay: Replay,
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
    /// nothing yet. A2C: Adam's moments (see [`Adam::save`]). DQN: `WLNVDQN1` · u64 length ·
    /// Adam's moments (empty before the first update) · u64 length · the target network's
    /// record · the replay (see [`Replay::to_bytes`]). The replay is the large part: about
    /// 1–3 kB per step on the test sites, so at most tens of MB at the default capacity.
    pub async fn optimizer_state(&self) -> Result<Option<Vec<u8>>, String> {
        let adam = if self.optim.is_empty() { None } else { Some(self.optim.save(self.model()).await?) };
        let Some(dqn) = &self.dqn else { return Ok(adam) };
        if adam.is_none() && dqn.replay.is_empty() {
            return Ok(None);
        }
        let cfg = self.cfg.clone();
        let target =
            crate::learn::checkpoint::record_bytes(&dqn.target, |d| NavigatorModel::new(&cfg, d), crate::learn::checkpoint::Precision::Full).await?;
        let adam = adam.unwrap_or_default();
        let mut out = Vec::with_capacity(32 + adam.len() + target.len());
        out.extend_from_slice(DQN_STATE_MAGIC);
        out.extend_from_slice(&(adam.len() as u64).to_le_bytes());
        out.extend_from_slice(&adam);
        out.extend_from_slice(&(target.len() as u64).to_le_bytes());
        out.extend_from_slice(&target);
        out.extend_from_slice(&dqn.replay.to_bytes());
        Ok(Some(out))
    }

    /// Continues with the state saved by [`Self::optimizer_state`]. A damaged record, or one of
    /// another network or head, is refused and nothing changes.
    pub fn load_optimizer_state(&mut self, bytes: &[u8]) -> Result<(), String> {
        let model = self.model.as_ref().expect("model");
        let is_dqn = bytes.starts_with(DQN_STATE_MAGIC);
        match (&mut self.dqn, is_dqn) {
            (None, false) => self.optim.load(model, bytes),
            (None, true) => Err("the saved state belongs to a DQN navigator; this one learns with A2C".into()),
            (Some(_), false) => Err("the saved state belongs to an A2C navigator; this one learns with DQN".into()),
            (Some(dqn), true) => {
                let damaged = |why: &str| format!("the saved DQN state is damaged: {why}");
                let mut at = DQN_STATE_MAGIC.len();
                let part = |at: &mut usize| -> Result<&[u8], String> {
                    let len = bytes.get(*at..*at + 8).ok_or_else(|| damaged("it ends too early"))?;
                    let len = usize::try_from(u64::from_le_bytes(len.try_into().unwrap())).map_err(|_| damaged("bad length"))?;
                    let start = *at + 8;
                    let s =
                        bytes.get(start..start.checked_add(len).ok_or_else(|| damaged("bad length"))?).ok_or_else(|| damaged("it ends too early"))?;
                    *at = start + len;
                    Ok(s)
                };
                let adam = part(&mut at)?;
                let target = part(&mut at)?;
                let cfg = self.cfg.clone();
                let plain = model.device().without_autodiff();
                crate::learn::checkpoint::check_record_size(target, cfg.num_params(), false)
                    .map_err(|e| damaged(&format!("its target network: {e}")))?;
                let target = crate::learn::checkpoint::load_record(|d| NavigatorModel::new(&cfg, d), target, false, &plain)
                    .map_err(|e| damaged(&format!("its target network: {e}")))?;
                let limits = (cfg.max_elements, cfg.max_fields, cfg.max_tokens, cfg.vocab_cap);
                let replay = Replay::from_bytes(&bytes[at..], cfg.dqn_replay_capacity, limits).map_err(|e| damaged(&e))?;
                let mut optim = Adam::new(cfg.adam_epsilon, None);
                if !adam.is_empty() {
                    optim.load(model, adam)?;
                }
                self.optim = optim;
                *dqn = DqnState { target, replay };
                Ok(())
            }
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

    /// DQN: stores the episodes as n-step transitions, then takes TD updates until the updates
    /// made reach (steps stored since the replay held `dqn_min_replay`) × samples per insert /
    /// batch, as ACME's rate. Counting from the counters makes a resumed run owe what the
    /// original did.
    async fn dqn_update(&mut self, episodes: &[Vec<Transition>]) -> Result<UpdateStats, String> {
        let cfg = self.cfg.clone();
        let epsilon = cfg.epsilon(self.counters.env_steps.saturating_sub(episodes.iter().map(|e| e.len() as u64).sum()));
        let dqn = self.dqn.as_mut().expect("the DQN head");
        for ep in episodes {
            dqn.replay.push_episode(ep, cfg.dqn_n_step, cfg.discount, cfg.dqn_reward_clip);
        }
        let steps: Vec<&Transition> = episodes.iter().flatten().collect();
        let owed = if dqn.replay.len() >= cfg.dqn_min_replay {
            let counted = self.counters.env_steps.saturating_sub(cfg.dqn_min_replay as u64) as f64;
            (counted * cfg.dqn_samples_per_insert / cfg.dqn_batch_size as f64).floor() as u64
        } else {
            0
        };
        let mut losses = Vec::new();
        // A run that starts from a checkpoint (counters ahead, replay fresh) catches up on at
        // most one iteration's worth, not on the whole history.
        let per_iteration = ((steps.len() as f64 * cfg.dqn_samples_per_insert / cfg.dqn_batch_size as f64).ceil() as u64).max(1);
        let mut budget = per_iteration;
        while self.counters.updates < owed && budget > 0 {
            let batch = {
                let dqn = self.dqn.as_ref().expect("the DQN head");
                dqn.replay.sample(&mut self.rng, cfg.dqn_batch_size)
            };
            losses.push(self.td_update(&batch).await?);
            budget -= 1;
        }
        let mut returns = Vec::new();
        for ep in episodes {
            let mut g = 0.0;
            for t in ep.iter().rev() {
                g = t.reward + cfg.discount * g;
                returns.push(g);
            }
        }
        Ok(UpdateStats {
            loss: if losses.is_empty() { 0.0 } else { losses.iter().sum::<f32>() / losses.len() as f32 },
            policy_loss: 0.0,
            value_loss: 0.0,
            entropy: 0.0,
            mean_return: (returns.iter().sum::<f64>() / returns.len() as f64) as f32,
            steps: steps.len() as u32,
            updates: losses.len() as u32,
            epsilon: epsilon as f32,
        })
    }

    /// TD targets of replay steps `batch`: y = R + γ^n · Q_target(s', a*) with a* the online
    /// network's best open choice in s' (double DQN) or the target's own (plain DQN); y = R
    /// when the window reached the episode's end.
    async fn td_targets(&self, batch: &[usize]) -> Result<Vec<f32>, String> {
        let dqn = self.dqn.as_ref().expect("the DQN head");
        let nexts: Vec<(usize, &NavState)> = batch.iter().enumerate().filter_map(|(k, &i)| dqn.replay.next_state(i).map(|s| (k, s))).collect();
        let mut y: Vec<f32> = batch.iter().map(|&i| dqn.replay.get(i).ret).collect();
        if nexts.is_empty() {
            return Ok(y);
        }
        let states: Vec<&NavState> = nexts.iter().map(|&(_, s)| s).collect();
        let p = Padded::new(&states);
        let w = p.width();
        let q_target = read(dqn.target.q_values(&p)).await?;
        let q_select = if self.cfg.dqn_double { read(self.model().valid().q_values(&p)).await? } else { q_target.clone() };
        let bootstrap = self.cfg.discount.powi(self.cfg.dqn_n_step as i32) as f32;
        for (row, &(k, s)) in nexts.iter().enumerate() {
            let open: Vec<(NavAction, f32)> = (0..w).map(|i| (p.choice(i), q_select[row * w + i])).filter(|&(a, _)| s.is_open(a)).collect();
            // A state with nothing open ends the episode (the rollout stops there): no bootstrap.
            if let Some(best) = argmax(&open) {
                y[k] += bootstrap * q_target[row * w + p.index(best)];
            }
        }
        Ok(y)
    }

    /// The TD loss (Huber or squared) of replay steps `batch` against the current target
    /// network, without learning: for tests and diagnostics.
    pub async fn td_loss(&self, batch: &[usize]) -> Result<f32, String> {
        let y = self.td_targets(batch).await?;
        let model = self.model().valid();
        let loss = self.td_loss_tensor(&model, batch, y);
        Ok(read(loss).await?[0])
    }

    fn td_loss_tensor(&self, model: &NavigatorModel, batch: &[usize], y: Vec<f32>) -> Tensor<1> {
        let dqn = self.dqn.as_ref().expect("the DQN head");
        let states: Vec<&NavState> = batch.iter().map(|&i| &dqn.replay.get(i).state).collect();
        let p = Padded::new(&states);
        let n = batch.len();
        let plain = model.device().without_autodiff();
        let idx: Vec<i64> = batch.iter().map(|&i| p.index(dqn.replay.get(i).action) as i64).collect();
        let idx = Tensor::<2, Int>::from_data(TensorData::new(idx, [n, 1]), &plain);
        let q_sa = model.q_values(&p).gather(1, idx).reshape([n]);
        let td = Tensor::<1>::from_data(TensorData::new(y, [n]), &plain) - q_sa;
        if self.cfg.dqn_huber {
            // Huber with δ = 1: ½x² inside ±1, |x| − ½ outside.
            let a = td.abs();
            let inside = a.clone().clamp_max(1.0);
            (inside.clone().square().mul_scalar(0.5) + (a - inside)).mean()
        } else {
            td.square().mean()
        }
    }

    /// One TD update on replay steps `batch`; copies the online network into the target every
    /// `dqn_target_update_period` updates. Returns the batch's loss before the step.
    pub async fn td_update(&mut self, batch: &[usize]) -> Result<f32, String> {
        let y = self.td_targets(batch).await?;
        let model = self.model.take().expect("model");
        let loss = self.td_loss_tensor(&model, batch, y);
        let figure = loss.clone().detach();
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        let grads = match self.cfg.max_grad_norm {
            Some(max) => clip_global_norm(&model, grads, max),
            None => grads,
        };
        let model = self.optim.step(self.cfg.dqn_learning_rate, model, grads);
        self.counters.updates += 1;
        if self.counters.updates.is_multiple_of(self.cfg.dqn_target_update_period as u64) {
            self.dqn.as_mut().expect("the DQN head").target = model.valid();
        }
        self.model = Some(model);
        let f = read(figure).await?[0];
        if !f.is_finite() {
            return Err(format!("the update gave a non-finite TD loss ({f}): training stopped"));
        }
        Ok(f)
    }

    /// One A2C update on whole episodes: returns are discounted to each episode's end (episodes
    /// end by success, failure or the step limit, all terminal), advantage = return − value.
    async fn a2c_update(&mut self, episodes: &[Vec<Transition>]) -> Result<UpdateStats, String> {
        let model = self.model.take().expect("model");
        let (loss, figures, returns) = self.a2c_loss(&model, episodes);
        let n = returns.len();
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
            updates: 1,
            epsilon: 0.0,
        })
    }

    /// The A2C loss over every step of `episodes` in one forward pass: the mean over the steps
    /// of −log π(a|s)·(G − V) + value_coef·(G − V)² − entropy_coef·H(π(·|s)), so a batch's loss
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
        let entropy = (probs * out.log_probs).sum_dim(1).mean().neg();
        let loss = policy_loss.clone() + value_loss.clone().mul_scalar(self.cfg.value_coef) - entropy.clone().mul_scalar(self.cfg.entropy_coef);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::navigator::features::tests::observation;
    use crate::util::block_on;
    use std::collections::HashSet;

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
        let (s, mut mem) = partly_acted(&mut nav);
        for i in 0..200 {
            let a = block_on(nav.act(&s, i % 10 == 0)).unwrap().unwrap();
            assert!(s.is_open(a), "{a:?} was closed");
        }
        assert_nothing_left(&mut nav, &s, &mut mem);
    }

    /// The fixture page after three choices, so some are open and some closed.
    fn partly_acted(nav: &mut Navigator) -> (NavState, EpisodeMemory) {
        let mut mem = EpisodeMemory::default();
        let s0 = nav.encode(&observation(), &mut mem, true);
        mem.acted(&s0, NavAction::Set { field: 0, element: 1 });
        mem.acted(&s0, NavAction::Set { field: 1, element: 1 });
        mem.acted(&s0, NavAction::Click { element: 1 });
        (nav.encode(&observation(), &mut mem, true), mem)
    }

    /// With every choice on the fixture page taken, nothing is chosen.
    fn assert_nothing_left(nav: &mut Navigator, s: &NavState, mem: &mut EpisodeMemory) {
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

    /// Every gradient of `loss` w.r.t. the model's parameters, flattened in visiting order.
    fn gradients(model: &NavigatorModel, loss: Tensor<1>) -> Vec<f32> {
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
        let grads = GradientsParams::from_grads(loss.backward(), model);
        let mut flat = Flat(&grads, Vec::new());
        model.visit(&mut flat);
        flat.1
    }

    /// The batched update's loss and gradients are its episodes' own, each weighted by its share
    /// of the steps: one forward over a batch of episodes of different sizes (padded to the
    /// largest) learns what their separate losses would.
    #[test]
    fn a_batchs_loss_and_gradients_are_its_episodes_weighted_by_their_steps() {
        use crate::gminiwob::test_sites::test_site;
        use crate::navigator::rollout::{Job, play};
        use crate::navigator::train::{sim_pool, site_task};
        let mut nav = Navigator::new(NavigatorConfig { vocab_cap: 300, ..small() }, &Device::flex().autodiff(), 4).unwrap();
        let tasks = [site_task("login-2", test_site("login", 2).unwrap()), site_task("shopping-1", test_site("shopping", 1).unwrap())];
        let jobs: Vec<Job> = (0..6).map(|i| Job { task: &tasks[i % 2], seed: i as u32, stream: Rng::new(i as u64) }).collect();
        let episodes: Vec<Vec<Transition>> =
            block_on(play(&mut sim_pool(6), &mut nav, &jobs, false, true)).unwrap().into_iter().map(|p| p.steps).collect();
        let sizes: Vec<usize> = episodes.iter().map(Vec::len).collect();
        assert!(sizes.iter().any(|&n| n != sizes[0]), "episodes of different lengths: {sizes:?}");
        let n: usize = sizes.iter().sum();
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

    fn dqn() -> NavigatorConfig {
        NavigatorConfig { head: Head::Dqn, dqn_batch_size: 4, dqn_replay_capacity: 64, dqn_min_replay: 4, dqn_n_step: 2, ..small() }
    }

    /// Three episodes on the fixture page, stored in the DQN navigator's replay.
    fn fill_replay(nav: &mut Navigator) {
        let mut eps = Vec::new();
        for (first, reward) in
            [(NavAction::Set { field: 1, element: 1 }, 0.5), (NavAction::Click { element: 0 }, -1.0), (NavAction::Set { field: 0, element: 1 }, 0.5)]
        {
            let mut mem = EpisodeMemory::default();
            let s0 = nav.encode(&observation(), &mut mem, true);
            mem.acted(&s0, first);
            let s1 = nav.encode(&observation(), &mut mem, true);
            let second = NavAction::Click { element: 1 };
            eps.push(vec![Transition { state: s0, action: first, reward }, Transition { state: s1, action: second, reward: 1.0 }]);
        }
        let cfg = nav.cfg.clone();
        let dqn = nav.dqn.as_mut().unwrap();
        for ep in &eps {
            dqn.replay.push_episode(ep, 1, cfg.discount, cfg.dqn_reward_clip);
        }
    }

    #[test]
    fn dqn_never_chooses_a_closed_choice_greedy_or_exploring() {
        // ε = 1: every training choice is an exploring one; ε = 0: every one is Q's argmax.
        for eps in [1.0, 0.5, 0.0] {
            let cfg = NavigatorConfig { dqn_epsilon_start: eps, dqn_epsilon_end: eps, ..dqn() };
            let mut nav = Navigator::new(cfg, &Device::flex().autodiff(), 3).unwrap();
            let (s, mut mem) = partly_acted(&mut nav);
            let open = (0..s.choices()).filter(|&i| s.is_open(choice_at(&s, i))).count();
            assert!(open >= 2 && open < s.choices(), "some choices open, some closed");
            let mut seen = HashSet::new();
            for i in 0..300 {
                let a = block_on(nav.act(&s, i % 10 == 0)).unwrap().unwrap();
                assert!(s.is_open(a), "{a:?} was closed (ε = {eps})");
                seen.insert(a);
            }
            if eps == 1.0 {
                assert_eq!(seen.len(), open, "exploring reaches every open choice");
            }
            // Q's argmax is an open choice even when a closed one scores higher.
            let q = block_on(nav.q_values(&s)).unwrap();
            assert_eq!(q.len(), open);
            assert_nothing_left(&mut nav, &s, &mut mem);
        }
    }

    #[test]
    fn a_td_step_lowers_the_batchs_td_loss() {
        for (double, huber) in [(true, true), (false, false)] {
            let cfg = NavigatorConfig { dqn_double: double, dqn_huber: huber, dqn_target_update_period: 1_000, dqn_learning_rate: 1e-2, ..dqn() };
            let mut nav = Navigator::new(cfg, &Device::flex().autodiff(), 7).unwrap();
            fill_replay(&mut nav);
            let batch: Vec<usize> = (0..nav.dqn().unwrap().replay.len()).collect();
            let before = block_on(nav.td_loss(&batch)).unwrap();
            let reported = block_on(nav.td_update(&batch)).unwrap();
            assert!((reported - before).abs() < 1e-5, "the step reports the loss it started from");
            let after = block_on(nav.td_loss(&batch)).unwrap();
            assert!(after < before, "double {double}, huber {huber}: {before} → {after}");
            for _ in 0..30 {
                block_on(nav.td_update(&batch)).unwrap();
            }
            let later = block_on(nav.td_loss(&batch)).unwrap();
            assert!(later < before / 2.0, "{before} → {later}");
            assert_eq!(nav.counters.updates, 31);
        }
    }

    #[test]
    fn the_target_network_follows_the_online_one_every_period() {
        let cfg = NavigatorConfig { dqn_target_update_period: 3, ..dqn() };
        let mut nav = Navigator::new(cfg, &Device::flex().autodiff(), 8).unwrap();
        fill_replay(&mut nav);
        let batch: Vec<usize> = (0..4).collect();
        let mut s = nav.dqn().unwrap().replay.get(0).state.clone();
        s.click_open.iter_mut().for_each(|o| *o = true);
        let p = Padded::new(&[&s]);
        let target_q = |nav: &Navigator| nav.dqn().unwrap().target.q_values(&p).into_data().try_to_vec::<f32>().unwrap();
        let online_q = |nav: &Navigator| nav.model().valid().q_values(&p).into_data().try_to_vec::<f32>().unwrap();
        assert_eq!(target_q(&nav), online_q(&nav), "the target starts as the online network");
        let t0 = target_q(&nav);
        for _ in 0..2 {
            block_on(nav.td_update(&batch)).unwrap();
        }
        assert_eq!(target_q(&nav), t0, "unchanged between copies");
        assert_ne!(online_q(&nav), t0);
        block_on(nav.td_update(&batch)).unwrap();
        assert_eq!(target_q(&nav), online_q(&nav), "copied at update 3");
    }

    #[test]
    fn the_dqn_learner_state_round_trips_and_is_refused_by_the_other_head() {
        let dev = Device::flex().autodiff();
        let mut nav = Navigator::new(dqn(), &dev, 5).unwrap();
        assert_eq!(block_on(nav.optimizer_state()).unwrap(), None, "nothing yet");
        fill_replay(&mut nav);
        let only_replay = block_on(nav.optimizer_state()).unwrap().expect("a replay to keep");
        let batch: Vec<usize> = (0..4).collect();
        block_on(nav.td_update(&batch)).unwrap();
        let bytes = block_on(nav.optimizer_state()).unwrap().unwrap();
        assert!(bytes.len() > only_replay.len(), "Adam's moments join it");

        let mut other = Navigator::new(dqn(), &dev, 5).unwrap();
        other.load_optimizer_state(&bytes).unwrap();
        assert_eq!(other.dqn().unwrap().replay.len(), nav.dqn().unwrap().replay.len());
        // Same weights (same seed, then the saved target and moments): the next steps agree.
        let mut again = Navigator::new(dqn(), &dev, 5).unwrap();
        let ckpt = block_on(nav.save("x", crate::learn::checkpoint::Precision::Full)).unwrap();
        let (mut loaded, _) = Navigator::load(&ckpt, &dev, 0).unwrap();
        loaded.load_optimizer_state(&bytes).unwrap();
        let ours: Vec<f32> = (0..3).map(|_| block_on(nav.td_update(&batch)).unwrap()).collect();
        let theirs: Vec<f32> = (0..3).map(|_| block_on(loaded.td_update(&batch)).unwrap()).collect();
        assert_eq!(ours, theirs);

        let err = Navigator::new(small(), &dev, 5).unwrap().load_optimizer_state(&bytes).unwrap_err();
        assert!(err.contains("DQN"), "{err}");
        let a2c_state = {
            let mut a = Navigator::new(small(), &dev, 5).unwrap();
            let eps = batch_of(&mut a);
            block_on(a.update(&eps)).unwrap();
            block_on(a.optimizer_state()).unwrap().unwrap()
        };
        assert!(again.load_optimizer_state(&a2c_state).unwrap_err().contains("A2C"));
        let mut cut = bytes.clone();
        cut.truncate(bytes.len() - 7);
        let err = again.load_optimizer_state(&cut).unwrap_err();
        assert!(err.contains("damaged"), "{err}");
        assert!(again.dqn().unwrap().replay.is_empty(), "a refused state changes nothing");
    }

    fn batch_of(nav: &mut Navigator) -> Vec<Vec<Transition>> {
        batch(nav)
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

//! The DOM-Q-Net agent: acting with noisy nets, n-step transitions into one prioritized buffer,
//! and the double-DQN update of the factorized Q-function (eq. 8–9 of the paper).
//!
//! One agent serves several tasks at once (Algorithm 1): each task is an *actor* with its own
//! n-step window; all actors share the network and the replay buffer.
//!
//! Every read of a tensor is `async` (`into_data_async`), as the web requires; natively the
//! futures are ready at once (see `crate::util::block_on`).

use std::sync::Arc;

use burn::module::{ModuleVisitor, Param};
use burn::nn::loss::HuberLossConfig;
use burn::optim::GradientsParams;
use burn::prelude::*;
use burn::tensor::IndexingUpdateOp;
use serde::{Deserialize, Serialize};

use super::batch::pack;
use super::config::DqnConfig;
use super::features::{Encoded, StateFeatures, encode};
use super::model::{DomQNetModel, QOut};
use super::replay::{DqnAction, Mode, NStep, PrioritizedReplay, Transition};
use super::vocab::Vocabs;
use crate::env::{Action, NodeRef, Observation};
use crate::learn::adam::Adam;
use crate::learn::init::{read, seeded};
use crate::rng::Rng;

/// What the agent did and why: the action and the Q-values behind it (drawn over the page).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    pub action: DqnAction,
    pub env_action: Action,
    pub q: QView,
}

/// Q-values of one state, in the order of its leaves and goal tokens.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct QView {
    pub leaf_refs: Vec<NodeRef>,
    pub dom: Vec<f32>,
    pub tokens: Vec<String>,
    pub token: Vec<f32>,
    /// [click, type]
    pub mode: [f32; 2],
    pub warning: Option<String>,
}

pub use crate::learn::Counters;

/// How the message of a refused update (or step) begins when a number in it is not finite (NaN
/// or infinite). Such a run cannot go on as it is, and another device would not help: the
/// learner tells this apart from a device failure by this prefix.
pub const NOT_FINITE: &str = "training hit a number that is not finite";

/// The end of a refused update's message.
const KEPT: &str = "the network, Adam's moments and the priorities were left as they were before this update";

/// Σ |gradient| over every parameter of `model`, as a [1] tensor: NaN or infinite exactly when
/// some gradient is (or when they are too large to add up, which is as bad).
fn grad_abs_sum(model: &DomQNetModel, grads: &GradientsParams, device: &Device) -> Tensor<1> {
    struct Sum<'a> {
        grads: &'a GradientsParams,
        total: Tensor<1>,
    }
    impl ModuleVisitor for Sum<'_> {
        fn visit_float<const D: usize>(&mut self, p: &Param<Tensor<D>>) {
            if let Some(g) = self.grads.get::<D>(p.id) {
                self.total = self.total.clone() + g.abs().sum();
            }
        }
    }
    let mut sum = Sum { grads, total: Tensor::zeros([1], device) };
    model.visit(&mut sum);
    sum.total
}

/// What one update did.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct UpdateStats {
    pub loss: f32,
    pub mean_abs_td: f32,
    /// Transitions in the batch with a positive n-step return.
    pub positives_in_batch: u32,
}

/// Milliseconds one update spent in each phase, when timed ([`DomQNetAgent::time_phases`]): the
/// profile behind the update's speed work (issue #16). On the CPU backend every operation runs
/// when it is called, so each span is that phase's own work.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct UpdatePhases {
    /// Sampling the prioritized batch and copying its transitions (host).
    pub sample: f64,
    /// Packing next states and states into the batch's arrays (host).
    pub pack: f64,
    /// The online network's forward on the next states (the double-DQN argmax).
    pub next_online: f64,
    /// The target network's forward on the next states.
    pub next_target: f64,
    /// The targets y, and the online forward on the states with the loss (recorded for autodiff).
    pub forward: f64,
    pub backward: f64,
    /// |gradient| sum and reading TD errors, loss and that sum back.
    pub reads: f64,
    pub adam: f64,
    /// New priorities and the target sync.
    pub priorities: f64,
}

impl UpdatePhases {
    pub const NAMES: [&'static str; 9] = ["sample", "pack", "next_online", "next_target", "forward", "backward", "reads", "adam", "priorities"];
    pub fn values(&self) -> [f64; 9] {
        [self.sample, self.pack, self.next_online, self.next_target, self.forward, self.backward, self.reads, self.adam, self.priorities]
    }
}

struct Actor {
    nstep: NStep,
    /// The last state acted in and the action taken, waiting for its outcome.
    pending: Option<(Arc<StateFeatures>, DqnAction)>,
}

pub struct DomQNetAgent {
    pub cfg: DqnConfig,
    pub vocabs: Vocabs,
    pub counters: Counters,
    model: Option<DomQNetModel>,
    target: Option<DomQNetModel>,
    optim: Adam,
    replay: PrioritizedReplay,
    actors: Vec<Actor>,
    /// The agent's own randomness: noise and OOV vectors.
    rng: Rng,
    /// A clock (ms) to time each update's phases with, and every timed update's phases.
    phase_clock: Option<fn() -> f64>,
    phases: Vec<UpdatePhases>,
}

fn optimizer(cfg: &DqnConfig) -> Adam {
    Adam::new(cfg.adam_epsilon, cfg.grad_clip)
}

impl DomQNetAgent {
    /// Adam's moments and step counts (see [`Adam::save`]); `None` before the first update. Read
    /// back asynchronously, so it works on every backend.
    pub async fn optimizer_state(&self) -> Result<Option<Vec<u8>>, String> {
        if self.optim.is_empty() {
            return Ok(None);
        }
        self.optim.save(self.model()).await.map(Some)
    }

    /// Continues with Adam state saved by [`Self::optimizer_state`] of the run this agent's
    /// checkpoint came from. A damaged record, or one of another network, is refused and the
    /// optimizer stays as it was.
    pub fn load_optimizer_state(&mut self, bytes: &[u8]) -> Result<(), String> {
        let model = self.model.as_ref().expect("model");
        self.optim.load(model, bytes)
    }
}

fn argmax(v: &[f32]) -> usize {
    v.iter().enumerate().fold((0, f32::MIN), |best, (i, &x)| if x > best.1 { (i, x) } else { best }).0
}

impl DomQNetAgent {
    /// A fresh agent training on `device` (an autodiff device, e.g. `Device::flex().autodiff()`).
    pub fn new(cfg: DqnConfig, device: &Device) -> Result<Self, String> {
        cfg.validate()?;
        let model = seeded(device, cfg.seed, |d| DomQNetModel::new(&cfg, d));
        Ok(Self::assemble(cfg.clone(), Vocabs::new(cfg.tag_vocab, cfg.text_vocab, cfg.class_vocab), model))
    }

    /// An agent around an existing network (e.g. loaded from a checkpoint).
    pub(crate) fn assemble(cfg: DqnConfig, vocabs: Vocabs, model: DomQNetModel) -> Self {
        let mut rng = Rng::new(cfg.seed ^ 0x000a_9e17);
        let model = model.resample_noise(&mut rng);
        DomQNetAgent {
            target: Some(model.valid().resample_noise(&mut rng)),
            rng,
            optim: optimizer(&cfg),
            replay: PrioritizedReplay::new(cfg.replay_capacity, cfg.priority_alpha, cfg.priority_epsilon, cfg.seed),
            actors: Vec::new(),
            phase_clock: None,
            phases: Vec::new(),
            counters: Counters::default(),
            model: Some(model),
            vocabs,
            cfg,
        }
    }

    pub fn model(&self) -> &DomQNetModel {
        self.model.as_ref().expect("model present between calls")
    }

    /// Times every later update's phases with `clock` (ms), for benchmarks.
    pub fn time_phases(&mut self, clock: fn() -> f64) {
        self.phase_clock = Some(clock);
    }

    /// The phases of every update since [`Self::time_phases`], in order.
    pub fn timed_phases(&self) -> &[UpdatePhases] {
        &self.phases
    }

    pub fn replay(&self) -> &PrioritizedReplay {
        &self.replay
    }

    pub fn replay_mut(&mut self) -> &mut PrioritizedReplay {
        &mut self.replay
    }

    /// Encodes an observation (growing the vocabularies).
    pub fn encode(&mut self, obs: &Observation) -> Encoded {
        encode(&mut self.vocabs, obs, &self.cfg)
    }

    /// Q-values of one state. `noisy` uses the current noise sample; otherwise the means.
    pub async fn q_values(&mut self, enc: &Encoded, noisy: bool) -> Result<QView, String> {
        let p = pack(&[&enc.features], &self.cfg, &mut self.rng);
        let QOut { dom, token, mode } = self.model().valid().forward(&p, noisy);
        let (dom, token, mode) = (read(dom).await?, read(token).await?, read(mode).await?);
        let n_leaves = enc.features.leaves.len();
        let n_tokens = enc.features.goal.len();
        Ok(QView {
            leaf_refs: enc.leaf_refs.clone(),
            dom: dom[..n_leaves].to_vec(),
            tokens: enc.goal_tokens.clone(),
            token: token[..n_tokens].to_vec(),
            mode: [mode[0], mode[1]],
            warning: enc.warning.clone(),
        })
    }

    /// Chooses an action for `actor` in state `enc`: greedy in each head (eq. 2). With `explore`
    /// the noisy layers draw new noise first (exploration by noisy nets, no ε), and the state and
    /// action are kept until [`Self::observe`] reports their outcome.
    pub async fn act(&mut self, actor: usize, enc: &Encoded, explore: bool) -> Result<Decision, String> {
        if explore {
            let rng = &mut self.rng;
            self.model = self.model.take().map(|m| m.resample_noise(rng));
        }
        let q = self.q_values(enc, explore).await?;
        let leaf = argmax(&q.dom);
        let token = if q.token.is_empty() { 0 } else { argmax(&q.token) };
        // Typing needs a goal token to type.
        let mode = if q.mode[1] > q.mode[0] && !q.tokens.is_empty() { Mode::Type } else { Mode::Click };
        let action = DqnAction { leaf: leaf as u16, token: token as u16, mode };
        let env_action = env_action(enc, action, self.cfg.type_clicks_untypable);
        if explore {
            while self.actors.len() <= actor {
                self.actors.push(Actor { nstep: NStep::new(self.cfg.n_step, self.cfg.gamma), pending: None });
            }
            self.actors[actor].pending = Some((Arc::new(enc.features.clone()), action));
        }
        Ok(Decision { action, env_action, q })
    }

    /// Reports the outcome of `actor`'s last exploring action, with the step's learning reward
    /// ([`crate::env::Step::learning_reward`]). With `clamp_negative_rewards` (the paper's 0/1
    /// rewards) negative rewards count as 0. A reward that is not a finite number (a broken page
    /// can report one) is refused and nothing is stored: in the replay it would poison every
    /// update that samples it.
    pub fn observe(&mut self, actor: usize, reward: f64, next: &Encoded, done: bool) -> Result<(), String> {
        let clamp = self.cfg.clamp_negative_rewards;
        // `max` would turn NaN into 0: check the reward as it came, and as the f32 it is stored as.
        if !reward.is_finite() || !(reward as f32).is_finite() {
            return Err(format!("{NOT_FINITE}: the environment gave the reward {reward}; the step was not stored"));
        }
        let Some(a) = self.actors.get_mut(actor) else { return Ok(()) };
        let Some((state, action)) = a.pending.take() else { return Ok(()) };
        let reward = if clamp { reward.max(0.0) } else { reward } as f32;
        let next = Arc::new(next.features.clone());
        for t in a.nstep.push(state, action, reward, &next, done) {
            self.replay.push(t);
        }
        self.counters.env_steps += 1;
        self.counters.episodes += done as u64;
        Ok(())
    }

    /// Forgets `actor`'s unfinished steps (an episode cut short by an error, say).
    pub fn abandon_episode(&mut self, actor: usize) {
        if let Some(a) = self.actors.get_mut(actor) {
            a.nstep.clear();
            a.pending = None;
        }
    }

    /// DOM-Q-Net's factorized action for a page action someone else took in state `enc`: the
    /// target's leaf, and for a typed text the goal token it equals. `None` when DOM-Q-Net could
    /// not have taken it (the target is no leaf, the text is not exactly one goal token, a select).
    pub fn dqn_action_of(enc: &Encoded, action: &Action) -> Option<DqnAction> {
        let target = action.target()?;
        let leaf = enc.leaf_refs.iter().position(|&r| r == target)? as u16;
        match action {
            Action::Click(_) => Some(DqnAction { leaf, token: 0, mode: Mode::Click }),
            Action::Type(_, text) => {
                let token = enc.goal_tokens.iter().position(|t| t == text)? as u16;
                Some(DqnAction { leaf, token, mode: Mode::Type })
            }
            _ => None,
        }
    }

    /// Stores a step of an episode another policy played (the workflow policy's exploration, say)
    /// in `actor`'s n-step window and the replay, exactly as [`Self::act`] with exploration and
    /// then [`Self::observe`] store the agent's own: DOM-Q-Net learns off-policy from it. Use an
    /// actor of its own for every such source, so its n-step windows never mix with the agent's
    /// episodes. An action DOM-Q-Net could not take (see [`Self::dqn_action_of`]) ends the
    /// actor's episode unstored (an n-step return across it would be wrong) and returns false.
    pub fn observe_external(
        &mut self,
        actor: usize,
        enc: &Encoded,
        action: &Action,
        reward: f64,
        next: &Encoded,
        done: bool,
    ) -> Result<bool, String> {
        let Some(a) = Self::dqn_action_of(enc, action) else {
            self.abandon_episode(actor);
            return Ok(false);
        };
        while self.actors.len() <= actor {
            self.actors.push(Actor { nstep: NStep::new(self.cfg.n_step, self.cfg.gamma), pending: None });
        }
        self.actors[actor].pending = Some((Arc::new(enc.features.clone()), a));
        self.observe(actor, reward, next, done)?;
        Ok(true)
    }

    pub fn ready_to_learn(&self) -> bool {
        self.replay.len() >= self.cfg.batch_size && self.counters.env_steps >= self.cfg.learning_starts as u64
    }

    /// One double-DQN update on a prioritized batch:
    ///   y = R + γ^k Σ_heads Q_target,i(s', argmax Q_online,i(s'))   (R counted once, eq. 9)
    ///   loss = Huber(Σ_heads Q_online,i(s, a_i), y), weighted by importance sampling.
    /// Returns `None` until the buffer holds a batch and the exploration steps are done.
    pub async fn learn(&mut self) -> Result<Option<UpdateStats>, String> {
        if !self.ready_to_learn() {
            return Ok(None);
        }
        let cfg = self.cfg.clone();
        let b = cfg.batch_size;
        let clock = self.phase_clock;
        let mut ph = UpdatePhases::default();
        let mut mark = clock.map_or(0.0, |c| c());
        let mut lap = |slot: &mut f64| {
            if let Some(c) = clock {
                let now = c();
                *slot += now - mark;
                mark = now;
            }
        };
        let batch = self.replay.sample(b, cfg.priority_beta);
        let trans: Vec<Transition> = batch.indices.iter().map(|&i| self.replay.get(i).clone()).collect();
        if let Some(t) = trans.iter().find(|t| !t.reward.is_finite() || !t.discount.is_finite()) {
            return Err(format!("{NOT_FINITE}: a stored transition has the return {} and the discount {}; {KEPT}", t.reward, t.discount));
        }
        lap(&mut ph.sample);
        let device = self.model().device();
        let plain = device.clone().without_autodiff();
        let col_f = |v: Vec<f32>| Tensor::<2>::from_data(TensorData::new(v.clone(), [v.len(), 1]), &plain);

        // Bootstrap values of the non-terminal next states.
        let live: Vec<usize> = (0..b).filter(|&i| trans[i].next.is_some()).collect();
        let mut next_value = Tensor::<2>::zeros([b, 1], &plain);
        if !live.is_empty() {
            let nexts: Vec<&StateFeatures> = live.iter().map(|&i| trans[i].next.as_deref().unwrap()).collect();
            let pn = pack(&nexts, &cfg, &mut self.rng);
            lap(&mut ph.pack);
            let online = self.model().valid().forward(&pn, true);
            lap(&mut ph.next_online);
            let target = self.target.take().expect("target").resample_noise(&mut self.rng);
            let tq = target.forward(&pn, true);
            self.target = Some(target);
            lap(&mut ph.next_target);
            let v = double_q_value(&online, &tq, has_goal_column(&nexts, &plain));
            let rows = Tensor::<1, Int>::from_data(TensorData::new(live.iter().map(|&i| i as i64).collect::<Vec<_>>(), [live.len()]), &plain);
            next_value = next_value.select_assign(0, rows, v.without_autodiff(), IndexingUpdateOp::Add);
        }
        let heads = if cfg.reward_per_head { 3.0 } else { 1.0 };
        let rewards = col_f(trans.iter().map(|t| heads * t.reward).collect());
        let discounts = col_f(trans.iter().map(|t| if t.next.is_some() { t.discount } else { 0.0 }).collect());
        let y = (rewards + discounts * next_value).detach();

        // Online Q of the actions taken, with fresh noise, and the gradient step.
        let model = self.model.take().expect("model").resample_noise(&mut self.rng);
        let states: Vec<&StateFeatures> = trans.iter().map(|t| t.state.as_ref()).collect();
        lap(&mut ph.forward);
        let packed = pack(&states, &cfg, &mut self.rng);
        lap(&mut ph.pack);
        let taken: Vec<DqnAction> = trans.iter().map(|t| t.action).collect();
        let q = model.forward_taken(&packed, &taken, true);
        let q_sa = q.dom + q.token * has_goal_column(&states, &device) + q.mode;
        let td = (y.clone() - q_sa.clone()).detach();
        let per_sample = HuberLossConfig::new(cfg.huber_delta).init().forward_no_reduction(q_sa, y);
        let loss = (per_sample * col_f(batch.weights.clone())).mean();
        let loss_value = loss.clone().detach();
        lap(&mut ph.forward);
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        lap(&mut ph.backward);
        let grad_abs = grad_abs_sum(&model, &grads, &plain);

        // Read before the step: an update with a number that is not finite must not reach the
        // weights, Adam's moments or the priorities (one NaN spreads to all of them).
        let reads = async {
            let td_abs: Vec<f32> = read(td.abs()).await?;
            let loss = read(loss_value.reshape([1, 1])).await?[0];
            let grad_abs = read(grad_abs.reshape([1, 1])).await?[0];
            Ok::<_, String>((td_abs, loss, grad_abs))
        };
        let (td_abs, loss, grad_abs) = match reads.await {
            Ok(values) => values,
            Err(e) => {
                self.model = Some(model);
                return Err(e);
            }
        };
        let bad_td = td_abs.iter().filter(|x| !x.is_finite()).count();
        if !loss.is_finite() || bad_td > 0 || !grad_abs.is_finite() {
            self.model = Some(model);
            return Err(format!(
                "{NOT_FINITE}: the update's loss is {loss}, {bad_td} of its {b} TD errors are not finite, and its \
                 gradients are {} (Q-values overflow when rewards or the learning rate are too large); {KEPT}",
                if grad_abs.is_finite() { "finite" } else { "not" }
            ));
        }
        lap(&mut ph.reads);
        self.model = Some(self.optim.step(cfg.learning_rate, model, grads));
        lap(&mut ph.adam);
        self.replay.update(&batch.indices, &td_abs)?;
        self.counters.updates += 1;
        if self.counters.updates.is_multiple_of(cfg.target_sync as u64) {
            self.sync_target();
        }
        lap(&mut ph.priorities);
        if clock.is_some() {
            self.phases.push(ph);
        }
        Ok(Some(UpdateStats {
            loss,
            mean_abs_td: (td_abs.iter().map(|&x| x as f64).sum::<f64>() / b as f64) as f32,
            positives_in_batch: trans.iter().filter(|t| t.reward > 0.0).count() as u32,
        }))
    }
}

/// The page action for DOM-Q-Net's factorized `action` in state `enc`. Typing into an element
/// that takes no text is a click when `type_clicks_untypable`, as the reference code's type
/// action (click, then keys) is: left as typing, the greedy policy can repeat a no-op forever on
/// a button whose Q-values for the two modes are nearly equal.
pub fn env_action(enc: &Encoded, action: DqnAction, type_clicks_untypable: bool) -> Action {
    let leaf = action.leaf as usize;
    let target = enc.leaf_refs[leaf];
    match action.mode {
        Mode::Type if enc.leaf_typable[leaf] || !type_clicks_untypable => Action::Type(target, enc.goal_tokens[action.token as usize].clone()),
        _ => Action::Click(target),
    }
}

impl DomQNetAgent {
    /// Copies the online network into the target network (every `target_sync` updates, Table 1).
    fn sync_target(&mut self) {
        self.target = Some(self.model().valid().resample_noise(&mut self.rng));
    }

    /// The target network (for tests and inspection).
    pub fn target_model(&self) -> &DomQNetModel {
        self.target.as_ref().expect("target present between calls")
    }
}

/// 1 for states with goal tokens, 0 without, as a [n, 1] column. Without goal tokens every token
/// Q-value is masked (about [`super::batch::NEG`]): such rows must not count the token head.
fn has_goal_column(states: &[&StateFeatures], device: &Device) -> Tensor<2> {
    let v: Vec<f32> = states.iter().map(|s| (!s.goal.is_empty()) as u8 as f32).collect();
    Tensor::from_data(TensorData::new(v.clone(), [v.len(), 1]), device)
}

/// The double-DQN bootstrap value of next states, per head (eq. 9 with van Hasselt's double
/// estimator): Σ_i Q_target,i(s', argmax_a Q_online,i(s', a)), [n, 1]. The token head counts
/// only where `has_goal` is 1: otherwise it would add the mask's −1e9 to the target.
pub(crate) fn double_q_value(online: &QOut, target: &QOut, has_goal: Tensor<2>) -> Tensor<2> {
    target.dom.clone().gather(1, online.dom.clone().argmax(1))
        + target.token.clone().gather(1, online.token.clone().argmax(1)) * has_goal
        + target.mode.clone().gather(1, online.mode.clone().argmax(1))
}

/// One synthetic training step (forward, backward, Adam, an async read) of a network with `cfg`'s
/// shapes on `device`: used to time a backend before choosing it. The page is a form of the size
/// of MiniWoB's tasks (24 nodes, 8 goal tokens), in a batch of `cfg.batch_size`.
pub async fn probe_update(cfg: &DqnConfig, device: &Device) -> Result<(), String> {
    use super::features::{FOCUSED, NO_PARENT};
    let n = 24usize;
    let state = StateFeatures {
        tags: (0..n).map(|i| 2 + (i % 5) as u16).collect(),
        classes: vec![1; n],
        texts: (0..n).map(|i| 2 + (i % 40) as u32).collect(),
        flags: (0..n).map(|i| if i == 3 { FOCUSED } else { 0 }).collect(),
        parents: (0..n).map(|i| if i == 0 { NO_PARENT } else { ((i - 1) / 3) as u16 }).collect(),
        leaves: (8..n as u16).collect(),
        goal: (0..8).map(|i| 2 + i * 3).collect(),
        n_oov: 0,
    };
    let states: Vec<&StateFeatures> = (0..cfg.batch_size).map(|_| &state).collect();
    let mut rng = Rng::new(cfg.seed);
    let model = DomQNetModel::new(cfg, device).resample_noise(&mut rng);
    let q = model.forward(&pack(&states, cfg, &mut rng), true);
    let loss = (q.dom.sum() + q.token.sum() + q.mode.sum()) * 1e-3;
    let grads = GradientsParams::from_grads(loss.clone().backward(), &model);
    let _model = optimizer(cfg).step(cfg.learning_rate, model, grads);
    read(loss.detach().reshape([1, 1])).await.map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom_q_net::batch::NEG;
    use crate::env::Environment;
    use crate::sim::SimEnv;
    use crate::util::block_on;

    fn matrix(rows: &[&[f32]], device: &Device) -> Tensor<2> {
        let flat: Vec<f32> = rows.iter().flat_map(|r| r.iter().copied()).collect();
        Tensor::from_data(TensorData::new(flat, [rows.len(), rows[0].len()]), device)
    }

    fn values(t: Tensor<2>) -> Vec<f32> {
        block_on(read(t)).unwrap()
    }

    #[test]
    fn typing_into_what_takes_no_text_is_a_click() {
        let mut agent = DomQNetAgent::new(small(1), &Device::flex()).unwrap();
        let mut env = SimEnv::new(None);
        let enc = agent.encode(&block_on(env.reset(&SimEnv::spec("sim-type"), 4)).unwrap());
        let field = enc.leaf_typable.iter().position(|&t| t).expect("the text field") as u16;
        let button = enc.leaf_typable.iter().position(|&t| !t).expect("a button or text") as u16;
        let (field_ref, button_ref) = (enc.leaf_refs[field as usize], enc.leaf_refs[button as usize]);
        let word = enc.goal_tokens[1].clone();
        let typing = |leaf| DqnAction { leaf, token: 1, mode: Mode::Type };
        assert_eq!(env_action(&enc, typing(field), true), Action::Type(field_ref, word.clone()));
        assert_eq!(env_action(&enc, typing(button), true), Action::Click(button_ref), "the reference's type clicks first");
        assert_eq!(env_action(&enc, typing(button), false), Action::Type(button_ref, word), "the option: type as asked");
        let click = DqnAction { leaf: field, token: 1, mode: Mode::Click };
        assert_eq!(env_action(&enc, click, true), Action::Click(field_ref));
    }

    #[test]
    fn double_dqn_value_takes_the_online_argmax_and_the_target_value() {
        let dev = Device::flex();
        let online = QOut {
            dom: matrix(&[&[1.0, 5.0, 2.0], &[0.0, 0.0, 9.0]], &dev),
            token: matrix(&[&[3.0, 1.0], &[NEG, NEG]], &dev),
            mode: matrix(&[&[0.0, 1.0], &[2.0, 1.0]], &dev),
        };
        let target = QOut {
            dom: matrix(&[&[10.0, 20.0, 30.0], &[4.0, 5.0, 6.0]], &dev),
            token: matrix(&[&[7.0, 8.0], &[NEG + 64.0, NEG]], &dev),
            mode: matrix(&[&[100.0, 200.0], &[300.0, 400.0]], &dev),
        };
        let has_goal = matrix(&[&[1.0], &[0.0]], &dev);
        // Row 0: online argmaxes (1, 0, 1) read the target's 20 + 7 + 200 — not its own maxima
        // (30, 8, 200). Row 1 has no goal tokens: its token head counts 0, not −1e9.
        assert_eq!(values(double_q_value(&online, &target, has_goal)), [227.0, 6.0 + 300.0]);
    }

    fn small(seed: u64) -> DqnConfig {
        DqnConfig {
            batch_size: 4,
            replay_capacity: 64,
            learning_starts: 0,
            dom_hidden: 16,
            token_hidden: 8,
            mode_hidden: 8,
            seed,
            ..DqnConfig::default()
        }
    }

    /// Encoded first states of a few sim-click episodes.
    fn states(agent: &mut DomQNetAgent, n: u32) -> Vec<Encoded> {
        let mut env = SimEnv::new(None);
        (0..n).map(|s| agent.encode(&block_on(env.reset(&SimEnv::spec("sim-click"), s)).unwrap())).collect()
    }

    fn fill(agent: &mut DomQNetAgent, next_without_goal: bool) {
        let encs = states(agent, 8);
        for (i, e) in encs.iter().enumerate() {
            let mut next = encs[(i + 1) % encs.len()].features.clone();
            if next_without_goal {
                next.goal.clear();
            }
            agent.replay_mut().push(Transition {
                state: Arc::new(e.features.clone()),
                action: DqnAction { leaf: 0, token: 0, mode: Mode::Click },
                reward: (i % 2) as f32,
                next: Some(Arc::new(next)),
                discount: 0.9,
            });
        }
    }

    #[test]
    fn another_policys_episode_enters_the_replay_as_the_agents_own_would() {
        let mut agent = DomQNetAgent::new(small(2), &Device::flex()).unwrap();
        let mut env = SimEnv::new(None);
        let obs = block_on(env.reset(&SimEnv::spec("sim-type"), 4)).unwrap();
        let target = obs.instruction.field("target").unwrap().to_string();
        let input = obs.dom.nodes.iter().find(|n| n.tag == "INPUT_text").unwrap().r#ref;
        let submit = obs.dom.nodes.iter().find(|n| n.text == "Submit").unwrap().r#ref;
        let typed = Action::Type(input, target.clone());
        let s1 = block_on(env.step(&typed)).unwrap();
        let s2 = block_on(env.step(&Action::Click(submit))).unwrap();
        assert_eq!(s2.raw_reward, 1.0);
        let (e0, e1, e2) = (agent.encode(&obs), agent.encode(&s1.observation), agent.encode(&s2.observation));
        let a = DomQNetAgent::dqn_action_of(&e0, &typed).unwrap();
        assert_eq!(env_action(&e0, a, true), typed, "the stored action is the one taken");
        assert!(agent.observe_external(3, &e0, &typed, 0.0, &e1, false).unwrap());
        assert!(agent.observe_external(3, &e1, &Action::Click(submit), 1.0, &e2, true).unwrap());
        // Both steps are stored when the episode ends, the first with the final reward in its
        // n-step return.
        assert_eq!(agent.replay().len(), 2);
        assert_eq!(agent.replay().get(0).action, a);
        assert!((agent.replay().get(0).reward - 0.99).abs() < 1e-6 && agent.replay().get(1).reward == 1.0);
        assert_eq!(agent.counters.env_steps, 2);

        // A text that is no single goal token cannot be DOM-Q-Net's action: the episode is dropped.
        let odd = Action::Type(input, format!("{target} {target}"));
        assert_eq!(DomQNetAgent::dqn_action_of(&e0, &odd), None);
        assert!(agent.observe_external(3, &e0, &Action::Click(submit), 0.0, &e1, false).unwrap());
        assert!(!agent.observe_external(3, &e1, &odd, 0.0, &e2, false).unwrap());
        assert_eq!(agent.replay().len(), 2, "the cut episode's first step is not stored either");
    }

    #[test]
    fn next_states_without_goal_tokens_give_finite_targets() {
        let mut agent = DomQNetAgent::new(small(5), &Device::flex().autodiff()).unwrap();
        fill(&mut agent, true);
        for _ in 0..3 {
            let stats = block_on(agent.learn()).unwrap().expect("a batch is ready");
            // Rewards are 0/1 and Q-values start near 0: without the guard the target holds
            // 0.9 × −1e9 and the loss is about 1e9.
            assert!(stats.loss.is_finite() && stats.loss < 100.0, "loss {}", stats.loss);
            assert!(stats.mean_abs_td < 100.0, "|td| {}", stats.mean_abs_td);
        }
    }

    #[test]
    fn an_update_with_numbers_that_are_not_finite_is_refused_and_changes_nothing() {
        // A reward that is not a number (what a broken page could report), and one so large that
        // the batch's loss overflows: either used to reach the weights, Adam's moments and the
        // replay's priorities, and the next sample panicked on the NaN total.
        for reward in [f32::NAN, f32::MAX] {
            let cfg = small(11);
            let mut agent = DomQNetAgent::new(cfg.clone(), &Device::flex().autodiff()).unwrap();
            fill(&mut agent, false);
            block_on(agent.learn()).unwrap().expect("a good update first, so Adam has moments");
            let probe = states(&mut agent, 2);
            let feats: Vec<&StateFeatures> = probe.iter().map(|e| &e.features).collect();
            let p = pack(&feats, &cfg, &mut Rng::new(0));
            let online_q = |a: &DomQNetAgent| values(a.model().valid().forward(&p, false).dom);
            let (q_before, adam_before) = (online_q(&agent), block_on(agent.optimizer_state()).unwrap());
            let updates = agent.counters.updates;

            // Every slot now holds such a transition (the ring of 64 is overwritten).
            let state = Arc::new(probe[0].features.clone());
            for _ in 0..cfg.replay_capacity {
                let action = DqnAction { leaf: 0, token: 0, mode: Mode::Click };
                agent.replay_mut().push(Transition { state: state.clone(), action, reward, next: None, discount: 0.9 });
            }
            let priorities: Vec<f64> = (0..cfg.replay_capacity).map(|i| agent.replay().priority(i)).collect();
            for _ in 0..3 {
                let err = block_on(agent.learn()).expect_err("the update is refused");
                assert!(err.starts_with(NOT_FINITE), "{reward}: {err}");
                // NaN is caught on the host before any work; f32::MAX only once the loss overflows.
                assert!(err.contains(if reward.is_nan() { "the return NaN" } else { "loss is inf" }), "{err}");
            }
            assert_eq!(online_q(&agent), q_before, "{reward}: the network is the one before");
            assert_eq!(block_on(agent.optimizer_state()).unwrap(), adam_before, "{reward}: and so are Adam's moments");
            assert_eq!(agent.counters.updates, updates);
            let after: Vec<f64> = (0..cfg.replay_capacity).map(|i| agent.replay().priority(i)).collect();
            assert_eq!(after, priorities, "{reward}: no priority changed");
        }
    }

    #[test]
    fn the_target_network_follows_the_online_one_every_target_sync_updates() {
        let cfg = DqnConfig { target_sync: 3, ..small(9) };
        let mut agent = DomQNetAgent::new(cfg.clone(), &Device::flex().autodiff()).unwrap();
        fill(&mut agent, false);
        let probe = states(&mut agent, 2);
        let feats: Vec<&StateFeatures> = probe.iter().map(|e| &e.features).collect();
        let p = pack(&feats, &cfg, &mut Rng::new(0));
        // Greedy (noise-free) DOM Q-values: they differ exactly when the weights do.
        let online_q = |a: &DomQNetAgent| values(a.model().valid().forward(&p, false).dom);
        let target_q = |a: &DomQNetAgent| values(a.target_model().forward(&p, false).dom);

        let mut synced = online_q(&agent);
        assert_eq!(target_q(&agent), synced, "the target starts as a copy");
        for update in 1..=7u64 {
            block_on(agent.learn()).unwrap().expect("a batch is ready");
            assert_eq!(agent.counters.updates, update);
            let now = online_q(&agent);
            assert_ne!(now, synced, "update {update} changed the online network");
            if update % 3 == 0 {
                synced = now;
            }
            assert_eq!(target_q(&agent), synced, "after update {update} the target is the copy of update {}", update / 3 * 3);
        }
    }
}

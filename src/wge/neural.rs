//! Training WGE's neural policy (§5 of Liu et al., 2018; reference-implementations.md §2.6):
//! the workflow policy's episodes enter the grouped replay (successes only), and every
//! `replay_every` exploration episodes DOMNet takes `replay_steps` gradient steps on
//! `replay_batch` replayed episodes each, with loss −Σ_t log π(a_t|s_t)·(G_t − b_t), γ = 1, b_t
//! the critic's V(s_t) (A2C, §5) or a constant (the code's 0.1); its own on-policy episodes get
//! the same update and, with a critic, train it too (Fig. 1); its successes are replayed too.

use burn::module::{Module, ModuleVisitor, Param};
use burn::optim::GradientsParams;
use burn::prelude::*;

use crate::env::{Action, Observation};
use crate::learn::adam::Adam;
use crate::learn::checkpoint::{self, CheckpointError, Kind, Precision};
use crate::learn::init::{read, seeded};
use crate::learn::vocab::Vocab;
use crate::learn::{Agent, Counters};
use crate::rng::Rng;
use crate::task::{Env, TaskSpec};

use super::domnet::{DomNet, DomNetAction, DomNetInput, DomNetOut, DomNetVocabs, featurize, key_vocab, log_prob};
use super::domnet_config::{Baseline, NeuralConfig, WordEmbedding};
use super::replay::{GroupedReplay, ReplayEpisode};
use super::word_vectors::WordVectors;
use std::sync::Arc;

pub const KIND: Kind = Kind { magic: b"WLDOMNET", name: "DOMNet", oldest: 1, newest: 1, max_bytes: checkpoint::MAX_CHECKPOINT_BYTES };

/// One decision of the neural policy, with the distributions it came from (as probabilities).
#[derive(Clone, Debug)]
pub struct NeuralDecision {
    pub action: Action,
    pub indices: DomNetAction,
    /// log π(action | state).
    pub log_prob: f32,
    /// p(element) for each of the state's elements, in [`DomNetInput::refs`] order.
    pub p_elem: Vec<f32>,
}

/// What one gradient step saw.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UpdateStats {
    pub loss: f32,
    /// Steps of the episodes in the update that DOMNet could represent (a typed text that is no
    /// field value, for one, it cannot).
    pub steps: usize,
    pub skipped_steps: usize,
}

pub struct NeuralPolicy {
    pub cfg: NeuralConfig,
    pub vocabs: DomNetVocabs,
    pub counters: Counters,
    model: Option<DomNet>,
    optim: Adam,
    replay: GroupedReplay,
    rng: Rng,
    /// Exploration episodes since the last round of replay updates.
    since_replay: usize,
}

fn argmax(v: &[f32]) -> usize {
    v.iter().enumerate().fold((0, f32::NEG_INFINITY), |best, (i, &x)| if x > best.1 { (i, x) } else { best }).0
}

/// Index drawn from log-probabilities.
fn draw(rng: &mut Rng, logp: &[f32]) -> usize {
    let u = rng.next_f64();
    let mut acc = 0.0;
    for (i, &l) in logp.iter().enumerate() {
        acc += (l as f64).exp();
        if u < acc {
            return i;
        }
    }
    argmax(logp)
}

impl NeuralPolicy {
    /// A fresh policy training on `device` (an autodiff device, e.g. `Device::flex().autodiff()`).
    pub fn new(cfg: NeuralConfig, device: &Device) -> Result<Self, String> {
        Self::with_word_vectors(cfg, None, device)
    }

    /// A fresh policy reading words through `vectors`, which a config with
    /// `WordEmbedding::Glove6b50d` needs (the shipped table, `data/glove-6b-50d-tasks.wlv`).
    pub fn with_word_vectors(cfg: NeuralConfig, vectors: Option<Arc<WordVectors>>, device: &Device) -> Result<Self, String> {
        cfg.validate()?;
        check_vectors(&cfg, vectors.as_deref())?;
        let model = seeded(device, cfg.seed, |d| DomNet::new(&cfg, d));
        let mut vocabs = DomNetVocabs::new(&cfg);
        vocabs.vectors = vectors;
        Ok(Self::assemble(cfg.clone(), vocabs, model))
    }

    fn assemble(cfg: NeuralConfig, vocabs: DomNetVocabs, model: DomNet) -> Self {
        NeuralPolicy {
            optim: Adam::new(cfg.adam_epsilon, None),
            replay: GroupedReplay::new(&cfg),
            rng: Rng::new(cfg.seed ^ 0xd0_11e7),
            since_replay: 0,
            counters: Counters::default(),
            model: Some(model),
            vocabs,
            cfg,
        }
    }

    pub fn model(&self) -> &DomNet {
        self.model.as_ref().expect("model present between calls")
    }

    pub fn replay(&self) -> &GroupedReplay {
        &self.replay
    }

    pub fn featurize(&mut self, obs: &Observation) -> DomNetInput {
        featurize(&mut self.vocabs, obs, &self.cfg)
    }

    /// The policy's action in `obs`: sampled (exploration, on-policy training) or, with `greedy`,
    /// the most likely element, mode and field (evaluation). `None` on a page with nothing to act on.
    pub async fn act(&mut self, obs: &Observation, greedy: bool) -> Result<Option<NeuralDecision>, String> {
        let x = self.featurize(obs);
        if !x.actionable.iter().any(|&a| a) {
            return Ok(None);
        }
        let out = self.model().valid().forward(&x);
        let (elem, mode, field) = (read(out.elem).await?, read(out.mode).await?, read(out.field).await?);
        let f = x.fields.len();
        let e = if greedy { argmax(&elem) } else { draw(&mut self.rng, &elem) };
        let m = &mode[2 * e..2 * e + 2];
        let typed = if greedy { argmax(m) } else { draw(&mut self.rng, m) } == 1;
        let fl = &field[f * e..f * e + f];
        let typed = typed.then(|| if greedy { argmax(fl) } else { draw(&mut self.rng, fl) });
        let indices = DomNetAction { elem: e, typed };
        let log_prob = elem[e] + m[typed.is_some() as usize] + typed.map_or(0.0, |i| fl[i]);
        Ok(Some(NeuralDecision { action: indices.to_action(&x), indices, log_prob, p_elem: elem.iter().map(|l| l.exp()).collect() }))
    }

    /// log π(action | obs), or `None` when DOMNet cannot take that action there.
    pub async fn log_prob(&mut self, obs: &Observation, action: &Action) -> Result<Option<f32>, String> {
        let x = self.featurize(obs);
        let Some(a) = DomNetAction::from_action(action, &x) else { return Ok(None) };
        let out: DomNetOut = self.model().valid().forward(&x);
        Ok(Some(read(log_prob(&out, a)).await?[0]))
    }

    /// One gradient step of −(1/|episodes|) Σ_episodes Σ_t log π(a_t|s_t)·(G_t − b_t), G_t the
    /// discounted return from t (γ = 1: the episode's return), b_t the critic's V(s_t) (not
    /// differentiated through) or the constant baseline; with `train_critic` (DOMNet's own
    /// episodes) plus the critic's weight·(G_t − V(s_t))². Steps DOMNet cannot represent are left
    /// out and counted. A loss or gradient that is not finite is refused and changes nothing.
    pub async fn update(&mut self, episodes: &[&ReplayEpisode]) -> Result<Option<UpdateStats>, String> {
        self.update_with(episodes, false).await
    }

    async fn update_with(&mut self, episodes: &[&ReplayEpisode], train_critic: bool) -> Result<Option<UpdateStats>, String> {
        let cfg = self.cfg.clone();
        let mut terms: Vec<Tensor<1>> = Vec::new();
        let (mut skipped, mut steps) = (0, 0);
        let model = self.model.take().expect("model");
        for ep in episodes {
            let t_end = ep.steps.len();
            for (t, (obs, action)) in ep.steps.iter().enumerate() {
                let x = featurize(&mut self.vocabs, obs, &cfg);
                let Some(a) = DomNetAction::from_action(action, &x) else {
                    skipped += 1;
                    continue;
                };
                // The only reward comes at the end: G_t = γ^(T−1−t)·R.
                let g = cfg.gamma.powi((t_end - 1 - t) as i32) * ep.ret;
                let out = model.forward(&x);
                let per = episodes.len() as f64;
                let lp = log_prob(&out, a);
                match (&out.value, cfg.baseline_kind) {
                    (Some(v), Baseline::Critic) => {
                        if train_critic {
                            let err = v.clone() - g;
                            terms.push(err.clone() * err * (cfg.critic_loss_weight / per));
                        }
                        // −log π·(G − V(s)), V(s) a constant here: only the critic's loss trains it.
                        terms.push(lp * ((v.clone().detach() - g) * (1.0 / per)));
                    }
                    _ => terms.push(lp * (-(g - cfg.baseline) / per)),
                }
                steps += 1;
            }
        }
        if terms.is_empty() {
            self.model = Some(model);
            return Ok(None);
        }
        let loss = Tensor::cat(terms, 0).sum();
        let grads = GradientsParams::from_grads(loss.clone().backward(), &model);
        let value = match read(loss.detach().reshape([1])).await {
            Ok(v) => v[0],
            Err(e) => {
                self.model = Some(model);
                return Err(e);
            }
        };
        if !value.is_finite() {
            self.model = Some(model);
            return Err(format!("the neural policy's loss is {value}; the update was refused and the weights are as they were"));
        }
        self.model = Some(self.optim.step(cfg.learning_rate, model, grads));
        self.counters.updates += 1;
        Ok(Some(UpdateStats { loss: value, steps, skipped_steps: skipped }))
    }

    /// An episode of the workflow policy's exploration: a success goes to the replay, and every
    /// `replay_every` episodes, once a group is ready, `replay_steps` replay updates follow.
    /// Returns their stats.
    pub async fn observe_exploration(&mut self, episode: ReplayEpisode) -> Result<Vec<UpdateStats>, String> {
        self.counters.episodes += 1;
        self.counters.env_steps += episode.steps.len() as u64;
        let _ = self.replay.push(episode);
        self.since_replay += 1;
        if self.since_replay < self.cfg.replay_every {
            return Ok(Vec::new());
        }
        self.since_replay = 0;
        self.replay_updates().await
    }

    /// `replay_steps` updates on `replay_batch` replayed episodes each (none before a group is ready).
    pub async fn replay_updates(&mut self) -> Result<Vec<UpdateStats>, String> {
        let mut stats = Vec::new();
        if !self.replay.ready() {
            return Ok(stats);
        }
        for _ in 0..self.cfg.replay_steps {
            let batch: Vec<ReplayEpisode> = self.replay.sample(self.cfg.replay_batch).into_iter().cloned().collect();
            let refs: Vec<&ReplayEpisode> = batch.iter().collect();
            if let Some(s) = self.update(&refs).await? {
                stats.push(s);
            }
        }
        Ok(stats)
    }

    /// Runs one episode with the neural policy (sampled, or greedy for evaluation), stepping the
    /// page until it ends or `max_episode_steps` pass. Returns the episode with its raw reward as
    /// the return (an episode cut by the cap returns 0).
    pub async fn run_episode<E: Env>(&mut self, env: &mut E, task: &TaskSpec, seed: u32, greedy: bool) -> Result<ReplayEpisode, String> {
        let mut obs = env.reset(task, seed).await.map_err(|e| e.to_string())?;
        let mut steps = Vec::new();
        let mut ret = 0.0;
        for _ in 0..self.cfg.max_episode_steps {
            let Some(d) = self.act(&obs, greedy).await? else { break };
            let step = env.step(&d.action).await.map_err(|e| e.to_string())?;
            steps.push((obs, d.action));
            obs = step.observation;
            if step.done {
                ret = step.raw_reward;
                break;
            }
        }
        Ok(ReplayEpisode::new(steps, ret))
    }

    /// On-policy training: one sampled episode, its REINFORCE update, and the episode to the
    /// replay when it succeeded. Returns the episode's return and the update's stats.
    pub async fn train_on_policy<E: Env>(&mut self, env: &mut E, task: &TaskSpec, seed: u32) -> Result<(f64, Option<UpdateStats>), String> {
        let ep = self.run_episode(env, task, seed, false).await?;
        self.counters.episodes += 1;
        self.counters.env_steps += ep.steps.len() as u64;
        let stats = if ep.steps.is_empty() { None } else { self.update_with(&[&ep], true).await? };
        let ret = ep.ret;
        let _ = self.replay.push(ep);
        Ok((ret, stats))
    }

    /// The greedy policy's success rate (raw reward 1) over `seeds`.
    pub async fn evaluate<E: Env>(&mut self, env: &mut E, task: &TaskSpec, seeds: impl Iterator<Item = u32>) -> Result<f64, String> {
        let (mut wins, mut n) = (0, 0);
        for seed in seeds {
            wins += crate::env::is_success(self.run_episode(env, task, seed, true).await?.ret) as u32;
            n += 1;
        }
        Ok(if n == 0 { 0.0 } else { wins as f64 / n as f64 })
    }

    /// A fingerprint of what it has learned: every weight's bits, its vocabularies and counters,
    /// to compare two runs. (Not of its checkpoint's bytes: burn's records name parameters by ids
    /// drawn afresh for each model, so two equal models write different bytes.)
    pub async fn fingerprint(&self) -> Result<u64, String> {
        struct Params(Vec<Tensor<1>>);
        impl ModuleVisitor for Params {
            fn visit_float<const D: usize>(&mut self, p: &Param<Tensor<D>>) {
                self.0.push(p.val().reshape([-1]));
            }
        }
        let mut params = Params(Vec::new());
        self.model().visit(&mut params);
        let mut h = checkpoint::FNV_START;
        for t in params.0 {
            for v in read(t).await? {
                h = checkpoint::fnv1a_on(h, &v.to_bits().to_le_bytes());
            }
        }
        let v = &self.vocabs;
        let rest = serde_json::to_vec(&(&v.words, &v.tags, &v.classes, &v.keys, &self.counters)).map_err(|e| e.to_string())?;
        Ok(checkpoint::fnv1a_on(h, &rest))
    }

    /// Restores a policy saved by [`Agent::checkpoint`] onto `device`.
    pub fn from_checkpoint(bytes: &[u8], device: &Device) -> Result<Self, CheckpointError> {
        Self::from_checkpoint_with_word_vectors(bytes, None, device)
    }

    /// The same for a policy that reads words through fixed vectors: the table it was trained
    /// with (the checkpoint records its checksum).
    pub fn from_checkpoint_with_word_vectors(bytes: &[u8], vectors: Option<Arc<WordVectors>>, device: &Device) -> Result<Self, CheckpointError> {
        let parts = checkpoint::read(&KIND, bytes)?;
        let header: Header = serde_json::from_slice(parts.header).map_err(|e| CheckpointError::Corrupt(format!("bad header: {e}")))?;
        header.config.validate().map_err(CheckpointError::Mismatch)?;
        check_vectors(&header.config, vectors.as_deref()).map_err(CheckpointError::Mismatch)?;
        if let (Some(saved), Some(v)) = (&header.word_vectors, &vectors)
            && saved.checksum != v.checksum()
        {
            return Err(CheckpointError::Mismatch(format!(
                "it was trained with other word vectors ({}, checksum {:016x}) than the ones given ({}, checksum {:016x})",
                saved.source,
                saved.checksum,
                v.source(),
                v.checksum()
            )));
        }
        let cfg = header.config.clone();
        // Each vocabulary fits its embedding table (a word's id is its position), checked before
        // the network is built; and the record is large enough to hold the network it asks for.
        for (name, vocab, rows) in
            [("word", &header.words, cfg.word_vocab), ("tag", &header.tags, cfg.tag_vocab), ("class", &header.classes, cfg.class_vocab)]
        {
            vocab.check_fits(rows).map_err(|why| CheckpointError::Corrupt(format!("its {name} vocabulary {why}")))?;
        }
        // Keys past the bucket table's room would index outside it. A checkpoint from before the
        // key vocabulary hashed its keys (its config says so) and needs none.
        let keys = header.keys.unwrap_or_else(|| key_vocab(&cfg));
        keys.check_fits(cfg.align_buckets + 1).map_err(|why| CheckpointError::Corrupt(format!("its field-key vocabulary {why}")))?;
        checkpoint::check_record_size(parts.record, cfg.num_params(), false)?;
        let model = checkpoint::load_record(|d| DomNet::new(&cfg, d), parts.record, false, device)?;
        let mut vocabs = DomNetVocabs { words: header.words, tags: header.tags, classes: header.classes, keys, vectors };
        for v in [&mut vocabs.words, &mut vocabs.tags, &mut vocabs.classes, &mut vocabs.keys] {
            v.reindex();
        }
        let mut policy = Self::assemble(header.config, vocabs, model);
        policy.counters = header.counters;
        Ok(policy)
    }
}

/// A config asking for fixed word vectors has a table of its word size; one that does not has none.
fn check_vectors(cfg: &NeuralConfig, vectors: Option<&WordVectors>) -> Result<(), String> {
    match (cfg.word_embedding, vectors) {
        (WordEmbedding::Learned, None) => Ok(()),
        (WordEmbedding::Learned, Some(_)) => Err("word vectors were given to a policy whose config learns its word embeddings".into()),
        (WordEmbedding::Glove6b50d, None) => {
            Err("this policy reads words through GloVe 6B 50d vectors: load the table (data/glove-6b-50d-tasks.wlv) first".into())
        }
        (WordEmbedding::Glove6b50d, Some(v)) if v.dim() != cfg.word_dim => {
            Err(format!("the word vectors have {} values, the config's words {}", v.dim(), cfg.word_dim))
        }
        (WordEmbedding::Glove6b50d, Some(_)) => Ok(()),
    }
}

/// Which fixed word vectors a checkpoint was trained with.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct SavedVectors {
    source: String,
    checksum: u64,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Header {
    config: NeuralConfig,
    words: Vocab,
    tags: Vocab,
    classes: Vocab,
    counters: Counters,
    trained_on: Vec<String>,
    #[serde(default)]
    word_vectors: Option<SavedVectors>,
    /// The fields' keys in the order their buckets were given (absent before 2026-12-05).
    #[serde(default)]
    keys: Option<Vocab>,
}

impl Agent for NeuralPolicy {
    fn kind(&self) -> &'static str {
        "DOMNet"
    }
    fn counters(&self) -> Counters {
        self.counters
    }
    /// Always full precision: the weights are written exactly (Half is not offered for DOMNet).
    async fn checkpoint(&self, trained_on: &[String], _precision: Precision) -> Result<Vec<u8>, String> {
        let cfg = self.cfg.clone();
        let record = checkpoint::record_bytes(self.model(), |d| DomNet::new(&cfg, d), Precision::Full).await?;
        let header = Header {
            config: self.cfg.clone(),
            words: self.vocabs.words.clone(),
            tags: self.vocabs.tags.clone(),
            classes: self.vocabs.classes.clone(),
            keys: Some(self.vocabs.keys.clone()),
            counters: self.counters,
            trained_on: trained_on.to_vec(),
            word_vectors: self.vocabs.vectors.as_ref().map(|v| SavedVectors { source: v.source().to_string(), checksum: v.checksum() }),
        };
        let header = serde_json::to_vec(&header).map_err(|e| e.to_string())?;
        Ok(checkpoint::write(&KIND, &header, &record))
    }
    async fn optimizer_state(&self) -> Result<Option<Vec<u8>>, String> {
        if self.optim.is_empty() {
            return Ok(None);
        }
        self.optim.save(self.model()).await.map(Some)
    }
    fn load_optimizer_state(&mut self, bytes: &[u8]) -> Result<(), String> {
        let model = self.model.as_ref().expect("model");
        self.optim.load(model, bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::Environment;
    use crate::env::{Field, Instruction};
    use crate::policy::Policy;
    use crate::sim::{SIM_TASKS, SimEnv, SimOracle};
    use crate::util::block_on;
    use crate::wge::domnet::utterance_units;
    use crate::wge::domnet_config::AlignKeys;

    fn small() -> NeuralConfig {
        NeuralConfig { word_dim: 16, replay_min_group: 1, ..NeuralConfig::default() }
    }

    fn oracle_episode(env: &mut SimEnv, task: &str, seed: u32) -> ReplayEpisode {
        let mut obs = block_on(env.reset(&SimEnv::spec(task), seed)).unwrap();
        let mut steps = Vec::new();
        loop {
            let a = SimOracle.act(&obs).expect("the oracle always has an action");
            let s = block_on(env.step(&a)).unwrap();
            steps.push((obs, a));
            obs = s.observation;
            if s.done {
                return ReplayEpisode::new(steps, s.raw_reward);
            }
        }
    }

    fn fixed_obs() -> Observation {
        let mut env = SimEnv::new(Some(10));
        block_on(env.reset(&SimEnv::spec("sim-type"), 3)).unwrap()
    }

    #[test]
    fn features_follow_the_page() {
        let cfg = NeuralConfig::default();
        let mut v = DomNetVocabs::new(&cfg);
        let obs = fixed_obs();
        let x = featurize(&mut v, &obs, &cfg);
        let leaves = obs.dom.nodes.iter().filter(|n| n.children.is_empty()).count();
        assert_eq!(x.n(), leaves);
        assert_eq!(x.field_values, vec![obs.instruction.field("target").unwrap().to_string()]);
        let input = x.refs.iter().position(|&r| obs.dom.get(r).unwrap().tag == "INPUT_text").unwrap();
        assert!(x.typable[input]);
        let submit = x.refs.iter().position(|&r| obs.dom.get(r).unwrap().text == "Submit").unwrap();
        assert!(!x.typable[submit] && x.actionable[submit]);
        // The simulator's rows are 14 px apart, 12 px high: the next row is within 30 px.
        let n = x.n();
        assert!(x.spatial[input * n..input * n + n].iter().any(|&w| w > 0.0));
        // Leaves share the area DIV (depth 1) as lowest ancestor: no tree neighbours at k ≥ 3.
        assert!(x.tree.iter().all(|m| m.iter().all(|&w| w == 0.0)));
    }

    #[test]
    fn distributions_have_the_states_shape_and_sum_to_one() {
        let cfg = small();
        let mut p = NeuralPolicy::new(cfg.clone(), &Device::flex()).unwrap();
        let obs = fixed_obs();
        let x = p.featurize(&obs);
        let out = p.model().forward(&x);
        let n = x.n();
        assert_eq!(out.elem.dims(), [n]);
        assert_eq!(out.mode.dims(), [n, 2]);
        assert_eq!(out.field.dims(), [n, 1]);
        let elem = out.elem.into_data().try_to_vec::<f32>().unwrap();
        let total: f32 = elem.iter().map(|l| l.exp()).sum();
        assert!((total - 1.0).abs() < 1e-4, "{total}");
        let mode = out.mode.into_data().try_to_vec::<f32>().unwrap();
        for e in 0..n {
            let s = mode[2 * e].exp() + mode[2 * e + 1].exp();
            assert!((s - 1.0).abs() < 1e-4);
            if !x.typable[e] {
                assert!(mode[2 * e + 1] < -1e6, "no typing into a non-field");
            }
        }
    }

    #[test]
    fn the_log_prob_of_an_action_is_the_sampled_ones() {
        let mut p = NeuralPolicy::new(small(), &Device::flex()).unwrap();
        let obs = fixed_obs();
        let mut typed = false;
        for _ in 0..40 {
            let d = block_on(p.act(&obs, false)).unwrap().unwrap();
            let lp = block_on(p.log_prob(&obs, &d.action)).unwrap().unwrap();
            assert!((lp - d.log_prob).abs() < 1e-4, "{lp} vs {}", d.log_prob);
            typed |= d.indices.typed.is_some();
        }
        assert!(typed, "typing is sampled too");
        // A text that is no field value cannot be typed by DOMNet.
        let input = obs.dom.nodes.iter().find(|n| n.tag == "INPUT_text").unwrap().r#ref;
        assert_eq!(block_on(p.log_prob(&obs, &Action::Type(input, "zzz".into()))).unwrap(), None);
    }

    #[test]
    fn replayed_successes_lower_the_loss_until_the_greedy_policy_reproduces_them() {
        let mut p = NeuralPolicy::new(small(), &Device::flex().autodiff()).unwrap();
        let mut env = SimEnv::new(Some(10));
        let eps: Vec<ReplayEpisode> = (0..4).map(|s| oracle_episode(&mut env, "sim-type", s)).collect();
        let refs: Vec<&ReplayEpisode> = eps.iter().collect();
        let first = block_on(p.update(&refs)).unwrap().unwrap();
        let mut last = first;
        for _ in 0..60 {
            last = block_on(p.update(&refs)).unwrap().unwrap();
        }
        assert_eq!(first.steps, 8);
        assert!(last.loss < first.loss * 0.1, "loss {} -> {}", first.loss, last.loss);
        for ep in &eps {
            for (obs, a) in &ep.steps {
                assert_eq!(&block_on(p.act(obs, true)).unwrap().unwrap().action, a);
            }
        }
    }

    #[test]
    fn a_type_of_a_field_value_round_trips_and_other_actions_are_refused() {
        let cfg = NeuralConfig::default();
        let mut v = DomNetVocabs::new(&cfg);
        let obs = Observation { instruction: Instruction::new("x", vec![Field { key: "target".into(), value: "ok".into() }]), ..fixed_obs() };
        let x = featurize(&mut v, &obs, &cfg);
        let input = obs.dom.nodes.iter().find(|n| n.tag == "INPUT_text").unwrap().r#ref;
        let a = Action::Type(input, "ok".into());
        assert_eq!(DomNetAction::from_action(&a, &x).unwrap().to_action(&x), a);
        assert_eq!(DomNetAction::from_action(&Action::Select(input, "ok".into()), &x), None);
        assert_eq!(DomNetAction::from_action(&Action::Click(999), &x), None);
    }

    #[test]
    fn an_utterance_goal_holds_the_names_and_quoted_messages_the_nl_templates_spell_out() {
        let spans = |u: &str| utterance_units(u).into_iter().map(|(_, v)| v).collect::<Vec<_>>();
        let forward = utterance_units("Could you find Alice's email, then forward it to Bob Lee?");
        assert_eq!(forward[0], ("utterance".into(), "Could you find Alice's email, then forward it to Bob Lee?".into()));
        assert!(forward.contains(&("find".into(), "Alice".into())));
        assert!(forward.contains(&("to".into(), "Bob".into())) && forward.contains(&("to".into(), "Bob Lee".into())));
        let reply = spans(r#"Find Carol's email and reply with "Vitae. Lorem ipsum.""#);
        assert!(reply.contains(&"Vitae. Lorem ipsum.".to_string()) && reply.contains(&"Carol".to_string()));
        assert_eq!(spans("Delete  email from  Dan.").iter().filter(|s| *s == "Dan").count(), 1, "each span once");
        let long = "word ".repeat(200);
        assert!(utterance_units(&long).len() <= 48);
    }

    #[test]
    fn with_an_utterance_goal_the_fields_are_unread_and_a_spelled_out_value_is_typed() {
        let cfg = NeuralConfig { utterance_goal: true, ..NeuralConfig::default() };
        let mut v = DomNetVocabs::new(&cfg);
        let fields = vec![Field { key: "target".into(), value: "ok".into() }];
        let with = Observation { instruction: Instruction::new("Type ok into the box", fields), ..fixed_obs() };
        let without = Observation { instruction: Instruction::new("Type ok into the box", vec![]), ..fixed_obs() };
        let (a, b) = (featurize(&mut v, &with, &cfg), featurize(&mut v, &without, &cfg));
        assert_eq!(a.field_values, b.field_values, "the page's fields change nothing");
        assert_eq!(a.fields, b.fields);
        let input = with.dom.nodes.iter().find(|n| n.tag == "INPUT_text").unwrap().r#ref;
        let typed = Action::Type(input, "ok".into());
        assert_eq!(DomNetAction::from_action(&typed, &a).unwrap().to_action(&a), typed);
        assert_eq!(DomNetAction::from_action(&Action::Type(input, "absent".into()), &a), None);
    }

    /// WGE's neural half natively: 10 scripted-oracle episodes per simulator task stand in for
    /// the workflow policy's successes; DOMNet trains from the replay (and on-policy), and the
    /// greedy policy must then solve unseen seeds.
    #[test]
    fn domnet_trained_from_oracle_successes_solves_the_simulators_tasks() {
        let cfg = NeuralConfig { replay_min_group: 10, seed: 7, ..NeuralConfig::default() };
        let mut p = NeuralPolicy::new(cfg, &Device::flex().autodiff()).unwrap();
        let mut env = SimEnv::new(Some(10));
        for task in SIM_TASKS {
            for seed in 0..10 {
                // 10 episodes per task: two rounds of 30 replay steps each time replay_every is hit.
                let ep = oracle_episode(&mut env, task, seed);
                assert_eq!(ep.ret, 1.0);
                block_on(p.observe_exploration(ep)).unwrap();
            }
        }
        assert!(p.counters.updates >= 60, "{} updates", p.counters.updates);
        for round in 0..20u32 {
            for task in SIM_TASKS {
                block_on(p.train_on_policy(&mut env, &SimEnv::spec(task), 100 + round)).unwrap();
            }
        }
        for task in SIM_TASKS {
            let success = block_on(p.evaluate(&mut env, &SimEnv::spec(task), 1000..1050)).unwrap();
            eprintln!("{task}: greedy success {success} on seeds 1000-1049 after {} updates", p.counters.updates);
            assert!(success >= 0.9, "{task}: greedy success {success} on seeds 1000-1049");
        }
    }

    /// Each field key aligns through a bucket of its own, first seen first, as the code's
    /// `LazyInitVocab`: MiniWoB++'s `target 3` is not `button` (they shared a hashed bucket), and
    /// the keys past the table's room share bucket 0.
    #[test]
    fn field_keys_take_buckets_of_their_own_in_the_order_first_seen() {
        let keys: Vec<String> = std::iter::once("button".to_string()).chain((0..6).map(|i| format!("target {i}"))).collect();
        // Every field's value holds "Submit", so the Submit button aligns with all seven keys.
        let fields: Vec<Field> = keys.iter().map(|k| Field { key: k.clone(), value: "submit".into() }).collect();
        let obs = Observation { instruction: Instruction::new("Select them and click Submit.", fields), ..fixed_obs() };
        let align = |cfg: &NeuralConfig, v: &mut DomNetVocabs| {
            let x = featurize(v, &obs, cfg);
            let e = x.refs.iter().position(|&r| obs.dom.get(r).unwrap().text == "Submit").unwrap();
            x.align[e * cfg.align_rows()..e * cfg.align_rows() + cfg.align_buckets].to_vec()
        };
        let cfg = NeuralConfig::default();
        let mut v = DomNetVocabs::new(&cfg);
        let row = align(&cfg, &mut v);
        assert_eq!(&row[1..8], &[1.0; 7], "seven keys, seven buckets: {row:?}");
        assert_eq!(row.iter().sum::<f32>(), 7.0);
        assert_eq!(v.keys.get("button"), Some(2), "the first key seen takes the first bucket (id 2, bucket 1)");
        assert_eq!(align(&cfg, &mut v), row, "a key keeps its bucket");
        // With `align_any` (the default) the row also holds the shared vector's 1, once.
        let x = featurize(&mut v, &obs, &cfg);
        let e = x.refs.iter().position(|&r| obs.dom.get(r).unwrap().text == "Submit").unwrap();
        assert_eq!(x.align[e * cfg.align_rows() + cfg.align_buckets], 1.0);
        let unaligned = x.refs.iter().position(|&r| obs.dom.get(r).unwrap().tag == "INPUT_text").unwrap();
        assert!(x.align[unaligned * cfg.align_rows()..(unaligned + 1) * cfg.align_rows()].iter().all(|&c| c == 0.0));
        // Four buckets: three keys get one each, the other four share bucket 0.
        let small = NeuralConfig { align_buckets: 4, ..NeuralConfig::default() };
        let row = align(&small, &mut DomNetVocabs::new(&small));
        assert_eq!(row, vec![4.0, 1.0, 1.0, 1.0]);
        // Hashed (a config saved before the setting): target 3 lands in button's bucket.
        let hashed = NeuralConfig { align_keys: AlignKeys::Hashed, ..NeuralConfig::default() };
        let row = align(&hashed, &mut DomNetVocabs::new(&hashed));
        assert_eq!(row.iter().filter(|&&c| c == 2.0).count(), 1, "{row:?}");
        let mut old = serde_json::to_value(&cfg).unwrap();
        old.as_object_mut().unwrap().remove("align_keys");
        old.as_object_mut().unwrap().remove("align_any");
        let old: NeuralConfig = serde_json::from_value(old).unwrap();
        assert_eq!((old.align_keys, old.align_any, old.align_rows()), (AlignKeys::Hashed, false, 20));
    }

    #[test]
    fn a_checkpoint_restores_the_same_policy() {
        let mut p = NeuralPolicy::new(small(), &Device::flex().autodiff()).unwrap();
        let mut env = SimEnv::new(Some(10));
        let ep = oracle_episode(&mut env, "sim-type", 1);
        block_on(p.update(&[&ep])).unwrap();
        let bytes = block_on(p.checkpoint(&["sim-type".into()], Precision::Full)).unwrap();
        let mut q = NeuralPolicy::from_checkpoint(&bytes, &Device::flex()).unwrap();
        assert_eq!(block_on(q.fingerprint()).unwrap(), block_on(p.fingerprint()).unwrap(), "the same weights, vocabularies and counters");
        let keys = |p: &NeuralPolicy| serde_json::to_string(&p.vocabs.keys).unwrap();
        assert_eq!(keys(&q), keys(&p), "the field keys keep their buckets");
        for (o, a) in &ep.steps {
            let (x, y) = (block_on(p.log_prob(o, a)).unwrap().unwrap(), block_on(q.log_prob(o, a)).unwrap().unwrap());
            assert!((x - y).abs() < 1e-5, "{x} vs {y}");
        }
        let before = block_on(p.fingerprint()).unwrap();
        block_on(p.update(&[&ep])).unwrap();
        assert_ne!(block_on(p.fingerprint()).unwrap(), before, "an update changes it");
        let mut bad = bytes.clone();
        let k = bad.len() / 2;
        bad[k] ^= 1;
        assert!(NeuralPolicy::from_checkpoint(&bad, &Device::flex()).is_err());
    }

    fn shipped_glove() -> Arc<WordVectors> {
        Arc::new(WordVectors::parse(include_bytes!("../../data/glove-6b-50d-tasks.wlv")).unwrap())
    }

    /// With fixed word vectors and `align_similar`, a box whose label is a synonym of a goal word
    /// (click-checkboxes-soft) aligns with that word's field by their cosine; without the setting,
    /// or without vectors, it does not align at all.
    #[test]
    fn synonyms_align_by_their_cosine_with_align_similar() {
        let glove = shipped_glove();
        let mut obs = fixed_obs();
        let label = obs.dom.nodes.iter().position(|n| n.text == "Submit").unwrap();
        obs.dom.nodes[label].text = "Large".into();
        let fields = vec![Field { key: "target 0".into(), value: "big".into() }, Field { key: "button".into(), value: "submit".into() }];
        obs.instruction = Instruction::new("Select words similar to big and click Submit.", fields);
        let row_of = |cfg: &NeuralConfig| {
            let mut v = DomNetVocabs::new(cfg);
            v.vectors = Some(glove.clone());
            let x = featurize(&mut v, &obs, cfg);
            let e = x.refs.iter().position(|&r| obs.dom.get(r).unwrap().text == "Large").unwrap();
            (x.align[e * cfg.align_rows()..(e + 1) * cfg.align_rows()].to_vec(), v.keys)
        };
        let exact = NeuralConfig::default().with_glove();
        assert!(row_of(&exact).0.iter().all(|&c| c == 0.0), "exact containment: no field holds \"large\"");
        let similar = NeuralConfig { align_similar: true, ..exact };
        similar.validate().unwrap();
        let (row, keys) = row_of(&similar);
        let unit = |w: &str| {
            let v = glove.get(w).unwrap();
            let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.iter().map(|x| x / n).collect::<Vec<f32>>()
        };
        let cos = |a: &str, b: &str| unit(a).iter().zip(unit(b)).map(|(x, y)| x * y).sum::<f32>();
        let bucket = |k: &str| keys.get(k).unwrap() as usize - 1;
        assert!((row[bucket("target 0")] - cos("big", "large")).abs() < 1e-5, "{row:?}");
        assert!(cos("big", "large") > cos("submit", "large").max(0.0) + 0.3, "synonyms are nearer than other words");
        assert!((row[bucket("button")] - cos("submit", "large").max(0.0)).abs() < 1e-5);
        assert_eq!(row[similar.align_buckets], row[bucket("target 0")], "the shared vector takes the strongest alignment");
        // It needs the vectors: a config asking for it with learned embeddings is refused.
        let learned = NeuralConfig { align_similar: true, ..NeuralConfig::default() };
        assert!(learned.validate().unwrap_err().contains("align_similar"));
    }

    /// With `align_similar_mean` an element of several words aligns by how well each of its words
    /// is matched, not by its best word: "Embed Tweet" no longer aligns with a "Copy link to
    /// Tweet" goal as fully as the item that goal names, and a one-word element is unchanged.
    #[test]
    fn several_words_align_by_their_mean_with_align_similar_mean() {
        let glove = shipped_glove();
        let mut obs = fixed_obs();
        let at = obs.dom.nodes.iter().position(|n| n.text == "Submit").unwrap();
        let r = obs.dom.nodes[at].r#ref;
        let fields = vec![Field { key: "button".into(), value: "Copy link to Tweet".into() }];
        obs.instruction = Instruction::new("For the user @kenda, click on the \"Copy link to Tweet\" button.", fields);
        let strength = |cfg: &NeuralConfig, text: &str| {
            let mut o = obs.clone();
            o.dom.nodes[at].text = text.into();
            let mut v = DomNetVocabs::new(cfg);
            v.vectors = Some(glove.clone());
            let x = featurize(&mut v, &o, cfg);
            let e = x.refs.iter().position(|&q| q == r).unwrap();
            x.align[e * cfg.align_rows() + cfg.align_buckets]
        };
        let any_pair = NeuralConfig { align_similar: true, ..NeuralConfig::default().with_glove() };
        let mean = NeuralConfig { align_similar_mean: true, ..any_pair.clone() };
        mean.validate().unwrap();
        let unit = |w: &str| {
            let v = glove.get(w).unwrap();
            let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.iter().map(|x| x / n).collect::<Vec<f32>>()
        };
        let cos = |a: &str, b: &str| unit(a).iter().zip(unit(b)).map(|(x, y)| x * y).sum::<f32>();
        let embed = ["copy", "link", "to", "tweet"].iter().map(|w| cos("embed", w)).fold(0.0, f32::max);
        assert!(embed < 0.9, "{embed}");
        assert_eq!(strength(&any_pair, "Embed Tweet"), 1.0, "the largest pair: tweet = tweet");
        assert!((strength(&mean, "Embed Tweet") - (embed + 1.0) / 2.0).abs() < 1e-5);
        assert_eq!(strength(&mean, "Copy link to Tweet"), 1.0, "the item the goal names");
        assert_eq!(strength(&mean, "Embed"), strength(&any_pair, "Embed"), "one word: the same under both");
        let alone = NeuralConfig { align_similar: false, ..mean };
        assert!(alone.validate().unwrap_err().contains("align_similar_mean"));
    }

    /// With `align_classes`, an element without text (social-media's Reply icon, an empty span of
    /// class "reply") aligns with the field one of whose words is one of its class names, whole;
    /// a class that only contains the word, and any element with text, do not align by class.
    #[test]
    fn icons_align_by_their_class_names_with_align_classes() {
        let mut obs = fixed_obs();
        let icon = obs.dom.nodes.iter().position(|n| n.text == "Submit").unwrap();
        let r = obs.dom.nodes[icon].r#ref;
        obs.dom.nodes[icon].text.clear();
        obs.dom.nodes[icon].classes = vec!["reply".into()];
        let fields = vec![Field { key: "button".into(), value: "Reply".into() }, Field { key: "user".into(), value: "@kenda".into() }];
        obs.instruction = Instruction::new("For the user @kenda, click on the \"Reply\" button.", fields);
        let row_of = |cfg: &NeuralConfig, obs: &Observation| {
            let mut v = DomNetVocabs::new(cfg);
            let x = featurize(&mut v, obs, cfg);
            let e = x.refs.iter().position(|&q| q == r).unwrap();
            (x.align[e * cfg.align_rows()..(e + 1) * cfg.align_rows()].to_vec(), v.keys)
        };
        let code = NeuralConfig::default();
        assert!(row_of(&code, &obs).0.iter().all(|&c| c == 0.0), "the code aligns text alone");
        let classes = NeuralConfig { align_classes: true, ..code };
        classes.validate().unwrap();
        let (row, keys) = row_of(&classes, &obs);
        let bucket = |k: &str| keys.get(k).unwrap() as usize - 1;
        assert_eq!(row[bucket("button")], 1.0, "{row:?}");
        assert_eq!(row[..classes.align_buckets].iter().sum::<f32>(), 1.0, "the user field does not align: {row:?}");
        assert_eq!(row[classes.align_buckets], 1.0, "the shared vector too");
        // "email-reply" is not the word "reply"; and an element with text aligns by its text alone.
        let mut other = obs.clone();
        other.dom.nodes[icon].classes = vec!["email-reply".into()];
        assert!(row_of(&classes, &other).0.iter().all(|&c| c == 0.0));
        other.dom.nodes[icon].classes = vec!["reply".into()];
        other.dom.nodes[icon].text = "Open".into();
        assert!(row_of(&classes, &other).0.iter().all(|&c| c == 0.0));
    }

    /// With GloVe the table's words read its vectors, their learned rows take no gradient, and a
    /// checkpoint names the table it needs.
    #[test]
    fn glove_words_read_the_tables_fixed_vectors() {
        let glove = shipped_glove();
        let cfg = NeuralConfig { replay_min_group: 1, ..NeuralConfig::default() }.with_glove();
        assert!(NeuralPolicy::new(cfg.clone(), &Device::flex()).err().unwrap().contains("load the table"));
        assert!(NeuralPolicy::with_word_vectors(small(), Some(glove.clone()), &Device::flex()).is_err());
        let mut p = NeuralPolicy::with_word_vectors(cfg.clone(), Some(glove.clone()), &Device::flex().autodiff()).unwrap();
        let mut env = SimEnv::new(Some(10));
        let mut ep = oracle_episode(&mut env, "sim-type", 1);
        // A field GloVe has no words of, so some of the state's words stay learned.
        for (obs, _) in &mut ep.steps {
            obs.instruction.fields.push(Field { key: "qzxv".into(), value: "xqzv".into() });
        }
        let x = p.featurize(&ep.steps[0].0);
        let submit = p.vocabs.words.get("submit").expect("the page's word");
        let k = x.fixed_words.binary_search(&submit).expect("GloVe has it");
        assert_eq!(&x.fixed_vectors[50 * k..50 * k + 50], glove.get("submit").unwrap());
        // Every fixed word is one the table has; the page's other words are learned.
        assert!(x.fixed_words.iter().all(|&w| glove.get(p.vocabs.words.word(w).unwrap()).is_some()));
        let rows = |p: &NeuralPolicy| p.model().learned_word_embeddings().into_data().try_to_vec::<f32>().unwrap();
        let before = rows(&p);
        for _ in 0..3 {
            block_on(p.update(&[&ep])).unwrap().unwrap();
        }
        let after = rows(&p);
        let row = |v: &[f32], w: u32| v[50 * w as usize..50 * w as usize + 50].to_vec();
        for &w in &x.fixed_words {
            assert_eq!(row(&before, w), row(&after, w), "a fixed word's learned row moved: {:?}", p.vocabs.words.word(w));
        }
        let learned: Vec<u32> = x.texts.iter().flatten().copied().filter(|w| x.fixed_words.binary_search(w).is_err()).collect();
        assert!(!learned.is_empty(), "the made-up field's words are learned");
        assert!(learned.iter().any(|&w| row(&before, w) != row(&after, w)), "learned words train");

        // A checkpoint needs its table back, and that very table.
        let bytes = block_on(p.checkpoint(&["sim-type".into()], Precision::Full)).unwrap();
        let e = NeuralPolicy::from_checkpoint(&bytes, &Device::flex()).err().unwrap().to_string();
        assert!(e.contains("GloVe 6B 50d"), "{e}");
        let mut q = NeuralPolicy::from_checkpoint_with_word_vectors(&bytes, Some(glove.clone()), &Device::flex()).unwrap();
        for (o, a) in &ep.steps {
            let (x, y) = (block_on(p.log_prob(o, a)).unwrap().unwrap(), block_on(q.log_prob(o, a)).unwrap().unwrap());
            assert!((x - y).abs() < 1e-5, "{x} vs {y}");
        }
        let other = Arc::new(WordVectors::parse(&crate::wge::word_vectors::tests::table(50, &[("submit", vec![1.0; 50])])).unwrap());
        let e = NeuralPolicy::from_checkpoint_with_word_vectors(&bytes, Some(other), &Device::flex()).err().unwrap().to_string();
        assert!(e.contains("other word vectors"), "{e}");
    }

    #[test]
    fn the_configs_parameter_count_is_the_networks() {
        use burn::module::Module;
        for cfg in [NeuralConfig::default(), small(), NeuralConfig { goal_heads: 3, dom_heads: 1, tree_depths: vec![2], ..small() }] {
            assert_eq!(crate::learn::init::unseeded(|| DomNet::new(&cfg, &Device::flex())).num_params() as u64, cfg.num_params(), "{cfg:?}");
        }
    }

    #[test]
    fn a_header_that_does_not_fit_its_network_is_refused_before_it_is_built() {
        let p = NeuralPolicy::new(small(), &Device::flex().autodiff()).unwrap();
        let bytes = block_on(p.checkpoint(&["sim-type".into()], Precision::Full)).unwrap();
        let rebuild = |edit: &dyn Fn(&mut serde_json::Value)| {
            let parts = checkpoint::read(&KIND, &bytes).unwrap();
            let mut h: serde_json::Value = serde_json::from_slice(parts.header).unwrap();
            edit(&mut h);
            checkpoint::write(&KIND, &serde_json::to_vec(&h).unwrap(), parts.record)
        };
        let msg = |b: &[u8]| NeuralPolicy::from_checkpoint(b, &Device::flex()).err().expect("refused").to_string();
        // A vocabulary larger than the embedding table its ids index.
        let big = rebuild(&|h| h["words"]["cap"] = serde_json::json!(1_000_000));
        assert!(msg(&big).contains("its word vocabulary has a cap of 1000000"), "{}", msg(&big));
        let many = rebuild(&|h| {
            let cap = h["config"]["tag_vocab"].as_u64().unwrap();
            h["tags"]["words"] = serde_json::json!(
                (0..cap + 1)
                    .map(|i| if i == 0 {
                        "<unk>".to_string()
                    } else if i == 1 {
                        "<pad>".into()
                    } else {
                        format!("w{i}")
                    })
                    .collect::<Vec<_>>()
            );
        });
        assert!(msg(&many).contains("its tag vocabulary holds"), "{}", msg(&many));
        // A config without bounds (once 8 TB of embeddings) and one that fits the caps but not the file.
        let huge = rebuild(&|h| h["config"]["word_vocab"] = serde_json::json!(1u64 << 40));
        assert!(msg(&huge).contains("word_vocab must be at most"), "{}", msg(&huge));
        let larger = rebuild(&|h| {
            h["config"]["word_vocab"] = serde_json::json!(100_000);
            h["words"]["cap"] = serde_json::json!(100_000);
        });
        assert!(msg(&larger).contains("weights are cut short"), "{}", msg(&larger));
    }
}

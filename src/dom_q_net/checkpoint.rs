//! Checkpoints: model (a burn record), config, vocabularies and counters in one file with a
//! format version and a checksum, so a wrong or damaged file is refused with a clear message.
//!
//! Layout: `WEBLABQN` · u32 format version · u32 header length · header (JSON) · u64 record
//! length · burn `ModuleRecord` bytes · u64 FNV-1a checksum of everything before it.
//!
//! Version 2 may store the weights in half precision (`half_precision` in the header): the shipped
//! agents are watched, not trained further, and f16 halves their download. Version 1 files (f32)
//! still load.

use burn::prelude::*;
use serde::{Deserialize, Serialize};

use super::agent::{Counters, DomQNetAgent};
use super::config::DqnConfig;
use super::model::DomQNetModel;
use super::vocab::{PAD, UNK, Vocabs};
use crate::learn::checkpoint::{self as container, Kind};

pub use crate::learn::checkpoint::{CheckpointError, Precision};

pub const FORMAT_VERSION: u32 = 2;
/// Oldest format version this lab still reads.
pub const OLDEST_VERSION: u32 = 1;
pub const KIND: Kind =
    Kind { magic: b"WEBLABQN", name: "DOM-Q-Net", oldest: OLDEST_VERSION, newest: FORMAT_VERSION, max_bytes: container::MAX_CHECKPOINT_BYTES };

/// What a checkpoint says about itself, besides the weights.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub format: u32,
    pub config: DqnConfig,
    pub vocabs: Vocabs,
    pub counters: Counters,
    /// Tasks the agent was trained on.
    pub tasks: Vec<String>,
    /// The weights are stored as f16 (version 2 on; widened to f32 when loaded).
    #[serde(default)]
    pub half_precision: bool,
}

impl Header {
    /// The config is within the lab's bounds, and each vocabulary fits its embedding table: its
    /// cap is the config's, it holds no more words than that (a word's id is its position, so
    /// every id is then a row of the table), and it starts with `<unk>` and `<pad>`.
    fn check(&self) -> Result<(), CheckpointError> {
        let corrupt = |why: String| CheckpointError::Corrupt(why);
        self.config.validate().map_err(|e| corrupt(format!("invalid config: {e}")))?;
        let c = &self.config;
        let v = &self.vocabs;
        for (name, field, vocab, cap) in [
            ("tag", "tag_vocab", &v.tag, c.tag_vocab),
            ("text", "text_vocab", &v.text, c.text_vocab),
            ("class", "class_vocab", &v.class, c.class_vocab),
        ] {
            if vocab.cap() != cap {
                return Err(corrupt(format!("its {name} vocabulary's cap is {}, but its config has {field} = {cap}", vocab.cap())));
            }
            if vocab.len() > cap {
                return Err(corrupt(format!("its {name} vocabulary holds {} words, over its cap of {cap} ({field})", vocab.len())));
            }
            if vocab.word(UNK) != Some("<unk>") || vocab.word(PAD) != Some("<pad>") {
                return Err(corrupt(format!("its {name} vocabulary does not start with <unk> and <pad>")));
            }
        }
        Ok(())
    }
}

/// A parsed checkpoint.
pub struct Checkpoint {
    pub header: Header,
    record: Vec<u8>,
}

/// The parameter ids of `model`, in visiting order.
#[cfg(test)]
pub(crate) fn param_ids(model: &DomQNetModel) -> Vec<burn::module::ParamId> {
    use burn::module::{ModuleVisitor, Param, ParamId};
    struct Ids(Vec<ParamId>);
    impl ModuleVisitor for Ids {
        fn visit_float<const D: usize>(&mut self, p: &Param<Tensor<D>>) {
            self.0.push(p.id);
        }
    }
    let mut ids = Ids(Vec::new());
    model.visit(&mut ids);
    ids.0
}

impl DomQNetAgent {
    /// Serialises the agent's network (f32), config, vocabularies and counters.
    pub async fn save(&self, tasks: &[String]) -> Result<Vec<u8>, String> {
        self.save_with(tasks, Precision::Full).await
    }

    /// [`Self::save`] with the weights in `precision`.
    pub async fn save_with(&self, tasks: &[String], precision: Precision) -> Result<Vec<u8>, String> {
        let header = Header {
            format: FORMAT_VERSION,
            config: self.cfg.clone(),
            vocabs: self.vocabs.clone(),
            counters: self.counters,
            tasks: tasks.to_vec(),
            half_precision: precision == Precision::Half,
        };
        let header = serde_json::to_vec(&header).map_err(|e| e.to_string())?;
        let cfg = &self.cfg;
        let record = container::record_bytes(self.model(), |d| DomQNetModel::new(cfg, d), precision).await?;
        Ok(container::write(&KIND, &header, &record))
    }

    /// An agent with the checkpoint's network, config, vocabularies and counters, on `device`.
    /// The replay buffer and optimizer state start empty.
    /// A file with weights that are not finite numbers is refused: such a network gives NaN
    /// Q-values, and training from it poisons the replay's priorities.
    pub fn from_checkpoint(ckpt: Checkpoint, device: &Device) -> Result<Self, CheckpointError> {
        let Checkpoint { header, record } = ckpt;
        // `header` is public: whoever built this checkpoint may have changed it after `from_bytes`.
        header.check()?;
        let cfg = &header.config;
        container::check_record_size(&record, cfg.num_params(), header.half_precision)?;
        let model = container::load_record(|d| DomQNetModel::new(cfg, d), &record, header.half_precision, device)?;
        let mut agent = DomQNetAgent::assemble(header.config, header.vocabs, model);
        agent.counters = header.counters;
        Ok(agent)
    }
}

impl Checkpoint {
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, CheckpointError> {
        let parts = container::read(&KIND, bytes)?;
        let mut header: Header = container::read_header(parts.header)?;
        header.vocabs.reindex();
        let record = parts.record;
        header.check()?;
        Ok(Checkpoint { header, record: record.to_vec() })
    }

    /// Refuses a checkpoint whose network differs in shape or kind from `cfg`'s.
    pub fn check_fits(&self, cfg: &DqnConfig) -> Result<(), CheckpointError> {
        let c = &self.header.config;
        let fields: [(&str, usize, usize); 14] = [
            ("tag_vocab", c.tag_vocab, cfg.tag_vocab),
            ("text_vocab", c.text_vocab, cfg.text_vocab),
            ("class_vocab", c.class_vocab, cfg.class_vocab),
            ("tag_dim", c.tag_dim, cfg.tag_dim),
            ("text_dim", c.text_dim, cfg.text_dim),
            ("class_dim", c.class_dim, cfg.class_dim),
            ("max_goal_tokens", c.max_goal_tokens, cfg.max_goal_tokens),
            ("gnn_steps", c.gnn_steps, cfg.gnn_steps),
            ("dom_hidden", c.dom_hidden, cfg.dom_hidden),
            ("token_hidden", c.token_hidden, cfg.token_hidden),
            ("mode_hidden", c.mode_hidden, cfg.mode_hidden),
            ("local_text_embedding", c.local_text_embedding as usize, cfg.local_text_embedding as usize),
            ("sibling_positions", c.sibling_positions, cfg.sibling_positions),
            (
                "goal_attention + goal_concat",
                c.goal_attention as usize * 2 + c.goal_concat as usize,
                cfg.goal_attention as usize * 2 + cfg.goal_concat as usize,
            ),
        ];
        for (name, have, want) in fields {
            if have != want {
                return Err(CheckpointError::Mismatch(format!("it was built with {name} = {have}, this agent uses {want}")));
            }
        }
        Ok(())
    }
}

impl crate::learn::Agent for DomQNetAgent {
    fn kind(&self) -> &'static str {
        "DOM-Q-Net"
    }
    fn counters(&self) -> Counters {
        self.counters
    }
    async fn checkpoint(&self, trained_on: &[String], precision: Precision) -> Result<Vec<u8>, String> {
        self.save_with(trained_on, precision).await
    }
    async fn optimizer_state(&self) -> Result<Option<Vec<u8>>, String> {
        DomQNetAgent::optimizer_state(self).await
    }
    fn load_optimizer_state(&mut self, bytes: &[u8]) -> Result<(), String> {
        DomQNetAgent::load_optimizer_state(self, bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom_q_net::features::encode;
    use crate::env::Environment;
    use crate::learn::init::unseeded;
    use crate::sim::SimEnv;
    use crate::util::block_on;
    use burn::module::{ModuleMapper, Param};
    use burn::tensor::FloatDType;

    fn small() -> DqnConfig {
        DqnConfig { batch_size: 8, replay_capacity: 64, dom_hidden: 16, token_hidden: 8, mode_hidden: 8, ..DqnConfig::default() }
    }

    /// An agent trained for `steps` steps on sim-click, with at least one update behind it.
    fn trained(cfg: DqnConfig, steps: u32) -> DomQNetAgent {
        let mut agent = DomQNetAgent::new(cfg, &Device::flex().autodiff()).unwrap();
        let mut env = SimEnv::new(Some(6));
        let spec = SimEnv::spec("sim-click");
        let mut obs = block_on(env.reset(&spec, 1)).unwrap();
        for step in 0..steps {
            let enc = agent.encode(&obs);
            let d = block_on(agent.act(0, &enc, true)).unwrap();
            let s = block_on(env.step(&d.env_action)).unwrap();
            let next = agent.encode(&s.observation);
            agent.observe(0, s.raw_reward, &next, s.done).unwrap();
            block_on(agent.learn()).unwrap();
            obs = if s.done { block_on(env.reset(&spec, 2 + step)).unwrap() } else { s.observation };
        }
        assert!(agent.counters.updates > 0, "the network was trained");
        agent
    }

    #[test]
    fn round_trip_keeps_q_values_vocab_and_counters() {
        let dev = Device::flex().autodiff();
        let mut agent = DomQNetAgent::new(small(), &dev).unwrap();
        let obs = block_on(SimEnv::new(None).reset(&SimEnv::spec("sim-click"), 3)).unwrap();
        let enc = agent.encode(&obs);
        agent.counters.env_steps = 42;
        let q = block_on(agent.q_values(&enc, false)).unwrap();
        let bytes = block_on(agent.save(&["sim-click".into()])).unwrap();

        let ckpt = Checkpoint::from_bytes(&bytes).unwrap();
        assert_eq!(ckpt.header.tasks, ["sim-click"]);
        ckpt.check_fits(&small()).unwrap();
        let mut loaded = DomQNetAgent::from_checkpoint(ckpt, &dev).unwrap();
        assert_eq!(loaded.counters.env_steps, 42);
        assert_eq!(loaded.vocabs, agent.vocabs);
        let enc2 = encode(&mut loaded.vocabs, &obs, &loaded.cfg);
        assert_eq!(enc2, enc, "the vocabularies came back: same ids");
        let q2 = block_on(loaded.q_values(&enc2, false)).unwrap();
        assert_eq!(q2, q, "same weights, same greedy Q-values");
    }

    #[test]
    fn bad_files_get_clear_errors() {
        let dev = Device::flex().autodiff();
        let agent = DomQNetAgent::new(small(), &dev).unwrap();
        let bytes = block_on(agent.save(&[])).unwrap();

        assert_eq!(Checkpoint::from_bytes(b"PK\x03\x04 a zip file").err(), Some(CheckpointError::NotACheckpoint("DOM-Q-Net")));
        let mut v9 = bytes.clone();
        v9[8] = 9;
        assert_eq!(
            Checkpoint::from_bytes(&v9).err(),
            Some(CheckpointError::UnsupportedVersion { found: 9, oldest: OLDEST_VERSION, newest: FORMAT_VERSION })
        );
        let mut flipped = bytes.clone();
        let mid = flipped.len() / 2;
        flipped[mid] ^= 0x40;
        let err = Checkpoint::from_bytes(&flipped).err().unwrap();
        assert!(err.to_string().contains("checksum"), "{err}");
        let err = Checkpoint::from_bytes(&bytes[..bytes.len() - 100]).err().unwrap();
        assert!(matches!(err, CheckpointError::Corrupt(_)), "{err}");

        let ckpt = Checkpoint::from_bytes(&bytes).unwrap();
        let other = DqnConfig { gnn_steps: 7, ..small() };
        assert_eq!(
            ckpt.check_fits(&other).unwrap_err().to_string(),
            "the checkpoint does not fit this agent: it was built with gnn_steps = 3, this agent uses 7"
        );
    }

    #[test]
    fn a_trained_checkpoint_loads_for_inference_on_plain_flex() {
        // What the app's watch mode does: load on `Device::flex()` (no autodiff), act greedily.
        let mut agent = trained(DqnConfig { learning_starts: 0, ..small() }, 40);
        let mut env = SimEnv::new(Some(6));
        let spec = SimEnv::spec("sim-click");
        let bytes = block_on(agent.save(&["sim-click".into()])).unwrap();

        let mut watched = DomQNetAgent::from_checkpoint(Checkpoint::from_bytes(&bytes).unwrap(), &Device::flex()).unwrap();
        for seed in 100..105 {
            let obs = block_on(env.reset(&spec, seed)).unwrap();
            let enc = watched.encode(&obs);
            let d = block_on(watched.act(0, &enc, false)).unwrap();
            assert_eq!(d.q.dom.len(), enc.leaf_refs.len());
            assert!(d.q.dom.iter().chain(&d.q.token).chain(&d.q.mode).all(|q| q.is_finite()));
            let enc_trained = agent.encode(&obs);
            let d_trained = block_on(agent.act(0, &enc_trained, false)).unwrap();
            assert_eq!(d.q, d_trained.q, "the same greedy Q-values as the trained agent");
            assert_eq!(d.env_action, d_trained.env_action);
            block_on(env.step(&d.env_action)).unwrap();
        }
    }

    #[test]
    fn half_precision_files_are_half_the_size_and_act_the_same() {
        let cfg = DqnConfig { batch_size: 8, replay_capacity: 64, ..DqnConfig::default() };
        let agent = DomQNetAgent::new(cfg, &Device::flex().autodiff()).unwrap();
        let full = block_on(agent.save(&["sim-click".into()])).unwrap();
        let half = block_on(agent.save_with(&["sim-click".into()], Precision::Half)).unwrap();
        assert!((half.len() as f64) < 0.55 * full.len() as f64, "{} bytes against {}", half.len(), full.len());

        let ckpt = Checkpoint::from_bytes(&half).unwrap();
        assert!(ckpt.header.half_precision);
        let mut a = DomQNetAgent::from_checkpoint(Checkpoint::from_bytes(&full).unwrap(), &Device::flex()).unwrap();
        let mut b = DomQNetAgent::from_checkpoint(ckpt, &Device::flex()).unwrap();
        let mut env = SimEnv::new(None);
        for seed in 0..10 {
            let obs = block_on(env.reset(&SimEnv::spec("sim-click"), seed)).unwrap();
            let (ea, eb) = (a.encode(&obs), b.encode(&obs));
            let (qa, qb) = (block_on(a.q_values(&ea, false)).unwrap(), block_on(b.q_values(&eb, false)).unwrap());
            for (x, y) in qa.dom.iter().zip(&qb.dom).chain(qa.token.iter().zip(&qb.token)) {
                assert!((x - y).abs() < 1e-2 * (1.0 + x.abs()), "f16 weights change Q by little: {x} vs {y}");
            }
        }
        // A half-precision agent keeps training (in f32).
        let mut b = DomQNetAgent::from_checkpoint(Checkpoint::from_bytes(&half).unwrap(), &Device::flex().autodiff()).unwrap();
        let obs = block_on(env.reset(&SimEnv::spec("sim-click"), 1)).unwrap();
        let enc = b.encode(&obs);
        block_on(b.act(0, &enc, true)).unwrap();
    }

    #[test]
    fn version_1_files_still_load() {
        let agent = DomQNetAgent::new(small(), &Device::flex().autodiff()).unwrap();
        let mut bytes = block_on(agent.save(&[])).unwrap();
        // A version 1 file: the same layout, f32 weights, no precision field in the header.
        bytes[8..12].copy_from_slice(&1u32.to_le_bytes());
        let end = bytes.len() - 8;
        let sum = container::fnv1a(&bytes[..end]);
        bytes[end..].copy_from_slice(&sum.to_le_bytes());
        let ckpt = Checkpoint::from_bytes(&bytes).unwrap();
        assert!(!ckpt.header.half_precision);
        DomQNetAgent::from_checkpoint(ckpt, &Device::flex()).unwrap();
    }

    /// `bytes` with its JSON header changed by `edit`, the length and checksum made to fit: what
    /// someone editing a file by hand (or by a script) produces.
    fn with_header(bytes: &[u8], edit: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
        let len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
        let mut header: serde_json::Value = serde_json::from_slice(&bytes[16..16 + len]).unwrap();
        edit(&mut header);
        let header = serde_json::to_vec(&header).unwrap();
        let mut out = bytes[..12].to_vec();
        out.extend_from_slice(&(header.len() as u32).to_le_bytes());
        out.extend_from_slice(&header);
        out.extend_from_slice(&bytes[16 + len..bytes.len() - 8]);
        let sum = container::fnv1a(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        out
    }

    #[test]
    fn a_header_vocabulary_over_its_cap_is_refused() {
        let cfg = DqnConfig { text_vocab: 4, ..small() };
        let agent = DomQNetAgent::new(cfg, &Device::flex()).unwrap();
        let bytes = block_on(agent.save(&["sim-click".into()])).unwrap();
        Checkpoint::from_bytes(&with_header(&bytes, |_| {})).expect("an untouched header still loads");

        // Words beyond the config's 4 text rows: their ids would index past the embedding table.
        let words = |h: &mut serde_json::Value, vocab: &str, n: usize| {
            let list = h["vocabs"][vocab]["words"].as_array_mut().unwrap();
            list.extend((0..n).map(|i| serde_json::Value::from(format!("word{i}"))));
        };
        let over = with_header(&bytes, |h| {
            words(h, "text", 5);
            h["vocabs"]["text"]["cap"] = 7.into();
            h["config"]["text_vocab"] = 4.into();
        });
        let err = Checkpoint::from_bytes(&over).err().expect("refused");
        assert_eq!(err.to_string(), "the checkpoint is damaged: its text vocabulary's cap is 7, but its config has text_vocab = 4");
        let over = with_header(&bytes, |h| words(h, "text", 5));
        let err = Checkpoint::from_bytes(&over).err().expect("refused");
        assert_eq!(err.to_string(), "the checkpoint is damaged: its text vocabulary holds 7 words, over its cap of 4 (text_vocab)");
        let over = with_header(&bytes, |h| words(h, "tag", 200));
        let err = Checkpoint::from_bytes(&over).err().expect("refused").to_string();
        assert!(err.contains("tag vocabulary holds 202 words, over its cap of 100 (tag_vocab)"), "{err}");
        let no_pad = with_header(&bytes, |h| h["vocabs"]["class"]["words"] = serde_json::json!(["a", "b"]));
        let err = Checkpoint::from_bytes(&no_pad).err().expect("refused").to_string();
        assert!(err.contains("class vocabulary does not start with <unk> and <pad>"), "{err}");
        // A config over the lab's bounds in a header is refused with the config's message.
        let huge = with_header(&bytes, |h| h["config"]["replay_capacity"] = 1_000_000_000u64.into());
        let err = Checkpoint::from_bytes(&huge).err().expect("refused").to_string();
        assert!(err.contains("replay_capacity must be between 1 and 1000000"), "{err}");
    }

    /// Sets every weight of one parameter (the `which`-th, in visiting order) to `value`; with
    /// `half`, stores every parameter as f16 (what a half-precision file holds).
    struct Poison {
        which: usize,
        seen: usize,
        value: f32,
        half: bool,
    }
    impl ModuleMapper for Poison {
        fn map_float<const D: usize>(&mut self, p: Param<Tensor<D>>) -> Param<Tensor<D>> {
            let hit = self.seen == self.which;
            self.seen += 1;
            let (value, half) = (self.value, self.half);
            let p = if hit { p.map(move |t| t.zeros_like().add_scalar(value)) } else { p };
            if half { p.map(|t| t.cast(FloatDType::F16)) } else { p }
        }
    }

    #[test]
    fn checkpoints_with_nan_or_infinite_weights_are_neither_saved_nor_loaded() {
        let dev = Device::flex();
        for (value, precision) in [(f32::NAN, Precision::Full), (f32::INFINITY, Precision::Full), (f32::NAN, Precision::Half)] {
            let cfg = small();
            let half = precision == Precision::Half;
            let vocabs = Vocabs::new(cfg.tag_vocab, cfg.text_vocab, cfg.class_vocab);
            let poison = |half| Poison { which: 5, seen: 0, value, half };
            let poisoned = DomQNetAgent::assemble(cfg.clone(), vocabs.clone(), unseeded(|| DomQNetModel::new(&cfg, &dev)).map(&mut poison(false)));
            let err = block_on(poisoned.save_with(&["sim-click".into()], precision)).unwrap_err();
            assert!(err.contains("non-finite weights"), "{value} ({precision:?}): {err}");

            // A file whose record carries them (written around that check) is refused on loading.
            let good = DomQNetAgent::assemble(cfg.clone(), vocabs, unseeded(|| DomQNetModel::new(&cfg, &dev)));
            let bytes = block_on(good.save_with(&["sim-click".into()], precision)).unwrap();
            let parts = container::read(&KIND, &bytes).unwrap();
            let record = unseeded(|| DomQNetModel::new(&cfg, &dev)).map(&mut poison(half)).into_record().into_bytes().unwrap();
            let file = container::write(&KIND, parts.header, &record);
            let ckpt = Checkpoint::from_bytes(&file).unwrap();
            assert_eq!(ckpt.header.half_precision, half);
            let err = DomQNetAgent::from_checkpoint(ckpt, &dev).err().expect("refused").to_string();
            assert!(err.contains("weights are not finite numbers (NaN or infinity)"), "{value} ({precision:?}): {err}");
        }
    }

    /// Greedy Q-values of a fixed state, to compare networks.
    fn q_of(agent: &mut DomQNetAgent) -> Vec<f32> {
        let obs = block_on(SimEnv::new(Some(6)).reset(&SimEnv::spec("sim-click"), 77)).unwrap();
        let enc = agent.encode(&obs);
        let q = block_on(agent.q_values(&enc, false)).unwrap();
        q.dom.into_iter().chain(q.token).chain(q.mode).collect()
    }

    #[test]
    fn adam_state_comes_back_with_the_checkpoint_it_was_saved_beside() {
        let agent = trained(DqnConfig { learning_starts: 0, ..small() }, 30);
        let adam = block_on(agent.optimizer_state()).unwrap().expect("Adam has moments after updates");
        let bytes = block_on(agent.save(&["sim-click".into()])).unwrap();
        let replay = agent.replay().recent(usize::MAX);
        let restore = || {
            let mut a = DomQNetAgent::from_checkpoint(Checkpoint::from_bytes(&bytes).unwrap(), &Device::flex().autodiff()).unwrap();
            a.replay_mut().restore(replay.clone()).unwrap();
            a
        };

        let (mut with_moments, mut again, mut fresh) = (restore(), restore(), restore());
        assert_eq!(param_ids(with_moments.model()), param_ids(agent.model()), "the checkpoint keeps the parameter ids");
        assert_eq!(block_on(fresh.optimizer_state()).unwrap(), None, "a restored agent starts with no moments");
        with_moments.load_optimizer_state(&adam).unwrap();
        again.load_optimizer_state(&adam).unwrap();
        assert!(block_on(with_moments.optimizer_state()).unwrap().is_some(), "the moments are in place");

        // The same update from the same replay: the loaded moments shape it (Adam's first step
        // from zero moments is a different one), and they do so reproducibly.
        for a in [&mut with_moments, &mut again, &mut fresh] {
            block_on(a.learn()).unwrap().expect("an update");
        }
        let (q1, q2, q3) = (q_of(&mut with_moments), q_of(&mut again), q_of(&mut fresh));
        assert_eq!(q1, q2);
        assert_ne!(q1, q3, "the loaded moments took part in the update");

        // Another network's state, and damaged bytes, are refused and change nothing.
        let mut other = DomQNetAgent::new(DqnConfig { dom_hidden: 24, learning_starts: 0, ..small() }, &Device::flex().autodiff()).unwrap();
        let err = other.load_optimizer_state(&adam).unwrap_err();
        assert!(err.contains("another network"), "{err}");
        assert_eq!(block_on(other.optimizer_state()).unwrap(), None);
        let mut restored = restore();
        let err = restored.load_optimizer_state(&adam[..adam.len() / 2]).unwrap_err();
        assert!(err.contains("damaged"), "{err}");
        assert_eq!(block_on(restored.optimizer_state()).unwrap(), None);
        // Moments come back from IndexedDB: a step count of 0, a NaN moment or a negative second
        // moment (NaN updates ever after) are refused too. Layout: magic, count, then per
        // parameter its step count (u64), length (u32), m1 and m2.
        let len = u32::from_le_bytes(adam[20..24].try_into().unwrap()) as usize;
        for (at, bad) in [(12, 0u64.to_le_bytes().to_vec()), (24, f32::NAN.to_le_bytes().to_vec()), (24 + 4 * len, (-1.0f32).to_le_bytes().to_vec())]
        {
            let mut bytes = adam.clone();
            bytes[at..at + bad.len()].copy_from_slice(&bad);
            let err = restored.load_optimizer_state(&bytes).unwrap_err();
            assert!(err.contains("damaged"), "{at}: {err}");
            assert_eq!(block_on(restored.optimizer_state()).unwrap(), None);
        }
    }
}

//! Checkpoints: model (a burn record), config, vocabularies and counters in one file with a
//! format version and a checksum, so a wrong or damaged file is refused with a clear message.
//!
//! Layout: `WEBLABQN` · u32 format version · u32 header length · header (JSON) · u64 record
//! length · burn `ModuleRecord` bytes · u64 FNV-1a checksum of everything before it.

use std::collections::VecDeque;
use std::fmt;

use burn::module::{ModuleMapper, ModuleVisitor, Param};
use burn::prelude::*;
use burn::store::ModuleRecord;
use burn::tensor::Bytes;
use serde::{Deserialize, Serialize};

use super::agent::{Counters, DomQNetAgent};
use super::config::DqnConfig;
use super::model::DomQNetModel;
use super::vocab::Vocabs;

pub const MAGIC: &[u8; 8] = b"WEBLABQN";
pub const FORMAT_VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq)]
pub enum CheckpointError {
    NotACheckpoint,
    UnsupportedVersion { found: u32, supported: u32 },
    Corrupt(String),
    Mismatch(String),
}

impl fmt::Display for CheckpointError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckpointError::NotACheckpoint => write!(f, "this file is not a weblab DOM-Q-Net checkpoint"),
            CheckpointError::UnsupportedVersion { found, supported } => write!(
                f,
                "this checkpoint has format version {found}; this lab reads version {supported}"
            ),
            CheckpointError::Corrupt(why) => write!(f, "the checkpoint is damaged: {why}"),
            CheckpointError::Mismatch(why) => write!(f, "the checkpoint does not fit this agent: {why}"),
        }
    }
}

impl std::error::Error for CheckpointError {}

/// What a checkpoint says about itself, besides the weights.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub format: u32,
    pub config: DqnConfig,
    pub vocabs: Vocabs,
    pub counters: Counters,
    /// Tasks the agent was trained on.
    pub tasks: Vec<String>,
}

/// A parsed checkpoint.
pub struct Checkpoint {
    pub header: Header,
    record: Vec<u8>,
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

struct Collect(Vec<Tensor<1>>);
impl ModuleVisitor for Collect {
    fn visit_float<const D: usize>(&mut self, p: &Param<Tensor<D>>) {
        self.0.push(p.val().without_autodiff().reshape([-1]));
    }
}

struct Fill {
    data: VecDeque<TensorData>,
    device: Device,
}
impl ModuleMapper for Fill {
    fn map_float<const D: usize>(&mut self, p: Param<Tensor<D>>) -> Param<Tensor<D>> {
        let shape = p.lazy_shape();
        let data = self.data.pop_front().expect("one tensor per parameter");
        let device = self.device.clone();
        p.map(move |_| Tensor::<1>::from_data(data, &device).reshape(shape))
    }
}

/// The weights of `model` as a burn record, read with async reads so it works on WebGPU too.
async fn record_bytes(model: &DomQNetModel, cfg: &DqnConfig) -> Result<Vec<u8>, String> {
    let mut params = Collect(Vec::new());
    model.visit(&mut params);
    let mut data = VecDeque::new();
    for t in params.0 {
        data.push_back(t.into_data_async().await.map_err(|e| format!("reading weights failed: {e:?}"))?);
    }
    let cpu = Device::flex();
    let copy = DomQNetModel::new(cfg, &cpu).map(&mut Fill { data, device: cpu });
    let bytes = copy.into_record().into_bytes().map_err(|e| e.to_string())?;
    Ok(bytes.to_vec())
}

impl DomQNetAgent {
    /// Serialises the agent's network, config, vocabularies and counters.
    pub async fn save(&self, tasks: &[String]) -> Result<Vec<u8>, String> {
        let header = Header {
            format: FORMAT_VERSION,
            config: self.cfg.clone(),
            vocabs: self.vocabs.clone(),
            counters: self.counters,
            tasks: tasks.to_vec(),
        };
        let header = serde_json::to_vec(&header).map_err(|e| e.to_string())?;
        let record = record_bytes(self.model(), &self.cfg).await?;
        let mut out = Vec::with_capacity(32 + header.len() + record.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&(header.len() as u32).to_le_bytes());
        out.extend_from_slice(&header);
        out.extend_from_slice(&(record.len() as u64).to_le_bytes());
        out.extend_from_slice(&record);
        let sum = fnv1a(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        Ok(out)
    }

    /// An agent with the checkpoint's network, config, vocabularies and counters, on `device`.
    /// The replay buffer and optimizer state start empty.
    pub fn from_checkpoint(ckpt: Checkpoint, device: &Device) -> Result<Self, CheckpointError> {
        let Checkpoint { header, record } = ckpt;
        let record = ModuleRecord::from_bytes(Bytes::from_bytes_vec(record))
            .map_err(|e| CheckpointError::Corrupt(e.to_string()))?;
        let model = DomQNetModel::new(&header.config, device)
            .try_load_record(record)
            .map_err(|e| CheckpointError::Corrupt(e.to_string()))?;
        let mut agent = DomQNetAgent::assemble(header.config, header.vocabs, model);
        agent.counters = header.counters;
        Ok(agent)
    }
}

impl Checkpoint {
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, CheckpointError> {
        if bytes.len() < 8 || &bytes[..8] != MAGIC {
            return Err(CheckpointError::NotACheckpoint);
        }
        let corrupt = |why: &str| CheckpointError::Corrupt(why.to_string());
        let u32_at = |at: usize| -> Result<u32, CheckpointError> {
            bytes.get(at..at + 4).map(|b| u32::from_le_bytes(b.try_into().unwrap())).ok_or_else(|| corrupt("it ends too early"))
        };
        let version = u32_at(8)?;
        if version != FORMAT_VERSION {
            return Err(CheckpointError::UnsupportedVersion { found: version, supported: FORMAT_VERSION });
        }
        if bytes.len() < 8 + 4 + 4 + 8 + 8 {
            return Err(corrupt("it ends too early"));
        }
        let (body, sum) = bytes.split_at(bytes.len() - 8);
        if fnv1a(body) != u64::from_le_bytes(sum.try_into().unwrap()) {
            return Err(corrupt("its checksum does not match (the file was changed or cut short)"));
        }
        let header_len = u32_at(12)? as usize;
        let header_end = 16 + header_len;
        let header: Header = serde_json::from_slice(body.get(16..header_end).ok_or_else(|| corrupt("bad header length"))?)
            .map_err(|e| CheckpointError::Corrupt(format!("unreadable header: {e}")))?;
        let mut header = header;
        header.vocabs.reindex();
        let record_len = body
            .get(header_end..header_end + 8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap()) as usize)
            .ok_or_else(|| corrupt("it ends too early"))?;
        let record = body.get(header_end + 8..header_end + 8 + record_len).ok_or_else(|| corrupt("the weights are cut short"))?;
        if header_end + 8 + record_len != body.len() {
            return Err(corrupt("unexpected bytes after the weights"));
        }
        header.config.validate().map_err(|e| CheckpointError::Corrupt(format!("invalid config: {e}")))?;
        Ok(Checkpoint { header, record: record.to_vec() })
    }

    /// Refuses a checkpoint whose network differs in shape or kind from `cfg`'s.
    pub fn check_fits(&self, cfg: &DqnConfig) -> Result<(), CheckpointError> {
        let c = &self.header.config;
        let fields: [(&str, usize, usize); 13] = [
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
            ("goal_attention + goal_concat", c.goal_attention as usize * 2 + c.goal_concat as usize, cfg.goal_attention as usize * 2 + cfg.goal_concat as usize),
        ];
        for (name, have, want) in fields {
            if have != want {
                return Err(CheckpointError::Mismatch(format!("it was built with {name} = {have}, this agent uses {want}")));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom_q_net::features::encode;
    use crate::sim::SimEnv;
    use crate::env::Environment;
    use crate::util::block_on;

    fn small() -> DqnConfig {
        DqnConfig { batch_size: 8, replay_capacity: 64, dom_hidden: 16, token_hidden: 8, mode_hidden: 8, ..DqnConfig::default() }
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

        assert_eq!(Checkpoint::from_bytes(b"PK\x03\x04 a zip file").err(), Some(CheckpointError::NotACheckpoint));
        let mut v2 = bytes.clone();
        v2[8] = 2;
        assert_eq!(
            Checkpoint::from_bytes(&v2).err(),
            Some(CheckpointError::UnsupportedVersion { found: 2, supported: FORMAT_VERSION })
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
}

//! Navigator checkpoints (`.wln`): config (its `head` says A2C or DQN, `bidirectional` the
//! encoder), vocabulary, counters and what it trained on, with the online network's weights, in
//! the shared container (`crate::learn::checkpoint`). Files from before the DQN and BiLSTM
//! options lack those keys and load as what they are: A2C with a forward LSTM. A DQN
//! navigator's target network and replay are not in it (a snapshot carries them beside it, see
//! `Navigator::optimizer_state`): loaded, its target starts as a copy and its replay empty.

use burn::prelude::*;
use serde::{Deserialize, Serialize};

use super::agent::{Counters, Navigator};
use super::config::NavigatorConfig;
use super::model::NavigatorModel;
use crate::learn::adam::Adam;
use crate::learn::checkpoint::{self as container, CheckpointError, Kind, Precision};
use crate::learn::vocab::Vocab;
use crate::rng::Rng;

pub const KIND: Kind = Kind { magic: b"WEBLABNV", name: "navigator", oldest: 1, newest: 1, max_bytes: container::MAX_CHECKPOINT_BYTES };

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    pub config: NavigatorConfig,
    pub vocab: Vocab,
    pub counters: Counters,
    /// What it trained on (a generator's name, or a site's).
    pub trained_on: String,
    pub half_precision: bool,
}

impl Navigator {
    /// The navigator as a checkpoint file.
    pub async fn save(&self, trained_on: &str, precision: Precision) -> Result<Vec<u8>, String> {
        let header = Header {
            config: self.cfg.clone(),
            vocab: self.vocab.clone(),
            counters: self.counters,
            trained_on: trained_on.to_string(),
            half_precision: precision == Precision::Half,
        };
        let header = serde_json::to_vec(&header).map_err(|e| e.to_string())?;
        let cfg = self.cfg.clone();
        let record = container::record_bytes(self.model(), |d| NavigatorModel::new(&cfg, d), precision).await?;
        Ok(container::write(&KIND, &header, &record))
    }

    /// A navigator from a checkpoint file, on `device`; its optimizer starts fresh and `seed`
    /// seeds its sampling.
    pub fn load(bytes: &[u8], device: &Device, seed: u64) -> Result<(Navigator, Header), CheckpointError> {
        let parts = container::read(&KIND, bytes)?;
        let mut header: Header = container::read_header(parts.header)?;
        header.config.validate().map_err(|e| CheckpointError::Corrupt(format!("invalid config: {e}")))?;
        header.vocab.reindex();
        header.vocab.check_fits(header.config.vocab_cap).map_err(|why| CheckpointError::Corrupt(format!("its vocabulary {why}")))?;
        let cfg = header.config.clone();
        container::check_record_size(parts.record, cfg.num_params(), header.half_precision)?;
        let model = container::load_record(|d| NavigatorModel::new(&cfg, d), parts.record, header.half_precision, device)?;
        let nav = Navigator::assemble(cfg, header.vocab.clone(), header.counters, model, Adam::new(header.config.adam_epsilon, None), Rng::new(seed));
        Ok((nav, header))
    }
}

impl crate::learn::Agent for Navigator {
    fn kind(&self) -> &'static str {
        "navigator"
    }
    fn counters(&self) -> Counters {
        self.counters
    }
    async fn checkpoint(&self, trained_on: &[String], precision: Precision) -> Result<Vec<u8>, String> {
        self.save(&trained_on.join(", "), precision).await
    }
    async fn optimizer_state(&self) -> Result<Option<Vec<u8>>, String> {
        Navigator::optimizer_state(self).await
    }
    fn load_optimizer_state(&mut self, bytes: &[u8]) -> Result<(), String> {
        Navigator::load_optimizer_state(self, bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::init::unseeded;
    use crate::navigator::features::{EpisodeMemory, tests::observation};
    use crate::util::block_on;

    fn small() -> NavigatorConfig {
        NavigatorConfig { vocab_cap: 64, embedding_dim: 16, latent_dim: 12, ..NavigatorConfig::default() }
    }

    #[test]
    fn round_trip_keeps_the_policy_vocabulary_and_counters() {
        let dev = Device::flex().autodiff();
        let mut nav = Navigator::new(small(), &dev, 4).unwrap();
        let s = nav.encode(&observation(), &mut EpisodeMemory::default(), true);
        nav.counters.env_steps = 77;
        let before = block_on(nav.policy(&s)).unwrap();
        let bytes = block_on(nav.save("DR", Precision::Full)).unwrap();
        let (mut back, header) = Navigator::load(&bytes, &dev, 1).unwrap();
        assert_eq!(header.trained_on, "DR");
        assert_eq!(back.counters.env_steps, 77);
        assert_eq!(back.vocab, nav.vocab);
        let s2 = back.encode(&observation(), &mut EpisodeMemory::default(), false);
        assert_eq!(s2, s, "same vocabulary, same ids");
        assert_eq!(block_on(back.policy(&s2)).unwrap(), before, "same weights, same policy");

        // Half precision: close, and half the size.
        let half = block_on(nav.save("DR", Precision::Half)).unwrap();
        let (hr, fr) = (container::read(&KIND, &half).unwrap().record.len(), container::read(&KIND, &bytes).unwrap().record.len());
        assert!(hr < fr * 7 / 10, "weights {hr} vs {fr} bytes (a small network: the record's own overhead counts)");
        let (h, _) = Navigator::load(&half, &dev, 1).unwrap();
        let (p, v) = block_on(h.policy(&s)).unwrap();
        assert!((v - before.1).abs() < 1e-2);
        for ((a, x), (b, y)) in p.iter().zip(&before.0) {
            assert_eq!(a, b);
            assert!((x - y).abs() < 1e-2);
        }
    }

    #[test]
    fn the_head_and_encoder_are_recorded() {
        use crate::navigator::config::Head;
        let dev = Device::flex().autodiff();
        let cfg = NavigatorConfig { head: Head::Dqn, bidirectional: true, ..small() };
        let nav = Navigator::new(cfg.clone(), &dev, 4).unwrap();
        let s = {
            let mut n = Navigator::new(cfg, &dev, 4).unwrap();
            n.encode(&observation(), &mut EpisodeMemory::default(), true)
        };
        let bytes = block_on(nav.save("x", Precision::Full)).unwrap();
        let (back, header) = Navigator::load(&bytes, &dev, 1).unwrap();
        assert_eq!((header.config.head, header.config.bidirectional), (Head::Dqn, true));
        assert!(back.dqn().is_some(), "loads as a DQN navigator, with a target network");
        assert!(back.dqn().unwrap().replay.is_empty());
        assert_eq!(block_on(back.q_values(&s)).unwrap(), block_on(nav.q_values(&s)).unwrap());
    }

    #[test]
    fn a_file_from_before_the_options_loads_as_a2c_with_a_forward_lstm() {
        use crate::navigator::config::Head;
        // A header as files written before `head`, `bidirectional` and `click_choices` existed.
        let dev = Device::flex().autodiff();
        let bytes = block_on(Navigator::new(small(), &dev, 4).unwrap().save("x", Precision::Full)).unwrap();
        let parts = container::read(&KIND, &bytes).unwrap();
        let mut h: serde_json::Value = serde_json::from_slice(parts.header).unwrap();
        for key in ["head", "bidirectional", "click_choices"] {
            assert!(h["config"].as_object_mut().unwrap().remove(key).is_some(), "{key} is in today's header");
        }
        let old = container::write(&KIND, &serde_json::to_vec(&h).unwrap(), parts.record);
        let (nav, header) = Navigator::load(&old, &Device::flex(), 0).unwrap();
        assert_eq!((header.config.head, header.config.bidirectional, header.config.click_choices), (Head::A2c, false, true));
        assert!(nav.dqn().is_none());
    }

    #[test]
    fn the_shipped_navigator_loads() {
        let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/agents/navigator-code.wln")).unwrap();
        let (_, header) = Navigator::load(&bytes, &Device::flex(), 0).unwrap();
        assert!(header.trained_on.starts_with("CoDE"), "{}", header.trained_on);
        assert!(!header.config.click_choices, "trained on the papers' (element, field) actions");
    }

    #[test]
    fn bad_files_get_clear_errors() {
        let dev = Device::flex().autodiff();
        let nav = Navigator::new(small(), &dev, 4).unwrap();
        let bytes = block_on(nav.save("x", Precision::Full)).unwrap();
        let msg = |b: &[u8]| Navigator::load(b, &dev, 1).err().expect("refused").to_string();

        assert_eq!(msg(b"WEBLABQN a DOM-Q-Net file"), "this file is not a weblab navigator checkpoint");
        let mut v9 = bytes.clone();
        v9[8] = 9;
        assert!(msg(&v9).contains("format version 9"), "{}", msg(&v9));
        let mut flipped = bytes.clone();
        let mid = flipped.len() / 2;
        flipped[mid] ^= 0x40;
        assert!(msg(&flipped).contains("checksum"), "{}", msg(&flipped));
        assert!(msg(&bytes[..bytes.len() - 20]).contains("damaged"));

        // A header whose vocabulary is larger than the embedding table it indexes.
        let rebuild = |edit: &dyn Fn(&mut serde_json::Value)| {
            let parts = container::read(&KIND, &bytes).unwrap();
            let mut h: serde_json::Value = serde_json::from_slice(parts.header).unwrap();
            edit(&mut h);
            container::write(&KIND, &serde_json::to_vec(&h).unwrap(), parts.record)
        };
        let big = rebuild(&|h| h["vocab"]["cap"] = serde_json::json!(1000));
        assert!(msg(&big).contains("vocabulary"), "{}", msg(&big));
        // A network of 19M parameters (within the cap) asked for by a file that holds 200k.
        let larger = rebuild(&|h| {
            h["config"]["vocab_cap"] = serde_json::json!(18_000);
            h["config"]["embedding_dim"] = serde_json::json!(1_024);
            h["vocab"]["cap"] = serde_json::json!(18_000);
        });
        assert!(msg(&larger).contains("weights are cut short"), "{}", msg(&larger));
        let bad_cfg = rebuild(&|h| h["config"]["latent_dim"] = serde_json::json!(1 << 20));
        assert!(msg(&bad_cfg).contains("latent_dim"), "{}", msg(&bad_cfg));
        let other_shape = rebuild(&|h| h["config"]["latent_dim"] = serde_json::json!(13));
        assert!(msg(&other_shape).contains("damaged"), "{}", msg(&other_shape));
        // A setting a later lab added: the file is newer, not damaged, and the message names it.
        let newer = rebuild(&|h| h["config"]["some_later_setting"] = serde_json::json!(0.5));
        assert!(msg(&newer).starts_with("this file was written by a newer version of the lab"), "{}", msg(&newer));
        assert!(msg(&newer).contains("`some_later_setting`") && !msg(&newer).contains("damaged"), "{}", msg(&newer));
        let not_json = rebuild(&|h| *h = serde_json::json!("a string"));
        assert!(msg(&not_json).contains("damaged: unreadable header"), "{}", msg(&not_json));
    }

    #[test]
    fn non_finite_weights_are_neither_saved_nor_loaded() {
        use burn::module::{ModuleMapper, Param};
        struct Poison;
        impl ModuleMapper for Poison {
            fn map_float<const D: usize>(&mut self, p: Param<Tensor<D>>) -> Param<Tensor<D>> {
                p.map(|t| t.mul_scalar(f32::NAN))
            }
        }
        let dev = Device::flex();
        let cfg = small();
        let good = unseeded(|| NavigatorModel::new(&cfg, &dev));
        let poisoned = good.clone().map(&mut Poison);
        let err = block_on(container::record_bytes(&poisoned, |d| NavigatorModel::new(&cfg, d), Precision::Full)).unwrap_err();
        assert!(err.contains("non-finite"), "{err}");
        // A file whose record carries NaN (written around the check) is refused on loading.
        let record = poisoned.into_record().into_bytes().unwrap().to_vec();
        let err = container::load_record(|d| NavigatorModel::new(&cfg, d), &record, false, &dev).unwrap_err();
        assert!(err.to_string().contains("NaN"), "{err}");
    }
}

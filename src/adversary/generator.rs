//! The adversary as an environment generator: it samples a design (valid by construction, in
//! the gMiniWoB design format), hears the navigators' returns on it, and learns by A2C with
//! entropy regularisation plus the objective's budget term (AEG §4.3, CoDE Algorithm 1).
//!
//! The network and its update are async and work on any burn device. The [`Generator`]
//! interface the training loops share is synchronous, so as a `Generator` the adversary runs on
//! a device whose reads complete at once — the CPU (`Device::flex()`), which also suits it: its
//! sampling is N dependent steps of a 100-wide LSTM, far too small for a GPU to help.

use burn::optim::GradientsParams;
use burn::prelude::*;
use serde::{Deserialize, Serialize};

use super::config::Budget;
use super::config::{AdversaryConfig, ObjectiveConfig};
use super::model::{AdversaryModel, CHOICES, Decisions, SKIP, Tracker};
use super::objective::{self, Signal};
use crate::curriculum::{Generator, GeneratorReport, Outcome};
use crate::gminiwob::Design;
use crate::learn::adam::Adam;
use crate::learn::checkpoint::{self as container, CheckpointError, Kind, Precision};
use crate::learn::init::read;
use crate::rng::Rng;
use crate::util::block_on;

pub const KIND: Kind = Kind { magic: b"WEBLABAD", name: "adversary", oldest: 1, newest: 1, max_bytes: container::MAX_CHECKPOINT_BYTES };

/// One sampled design with everything needed to score and learn from it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Proposal {
    /// o ~ N(0, I).
    pub noise: Vec<f32>,
    /// The last page's index (the site has k + 1 pages; empty ones are allowed, as the papers').
    pub k: u32,
    /// Each step's primitive (0 = SKIP) and, when it placed one, its page.
    pub choices: Vec<(usize, Option<u32>)>,
    /// log π of the whole design, as sampled.
    pub log_prob: f64,
    /// log π(SKIP) at each step, as sampled.
    pub skip_log_probs: Vec<f64>,
}

impl Proposal {
    /// The design: SKIPs and repeated (primitive, page) pairs dropped, as the format reads.
    pub fn design(&self) -> Design {
        let entries: Vec<(usize, u32)> = self.choices.iter().map(|&(a, b)| (a, b.unwrap_or(0))).collect();
        Design::from_entries(Some(self.k + 1), &entries).expect("sampled designs stay within the design caps (validated config)")
    }

    /// The expected budget along this design: Σ_i (1 − π(SKIP_i)), the expected non-SKIP count.
    pub fn expected_budget(&self) -> f64 {
        self.skip_log_probs.iter().map(|lp| 1.0 - lp.exp()).sum()
    }
}

/// The file header of an adversary checkpoint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    pub config: AdversaryConfig,
    pub objective: ObjectiveConfig,
    pub updates: u64,
    /// ALP's last mean return.
    pub previous: Option<f64>,
}

pub struct Adversary {
    pub cfg: AdversaryConfig,
    pub objective: ObjectiveConfig,
    model: Option<AdversaryModel>,
    optim: Adam,
    pub updates: u64,
    /// ALP: the navigator's mean return on the previous design.
    previous: Option<f64>,
    /// The designs proposed and not yet learned from, in order.
    pending: Vec<Proposal>,
    /// What the last update made of each of its designs.
    last: Vec<GeneratorReport>,
    /// Why it could not propose or learn.
    failed: Option<String>,
}

fn sample_index(rng: &mut Rng, log_probs: &[f32]) -> usize {
    let x = rng.next_f64();
    let mut acc = 0.0;
    for (i, lp) in log_probs.iter().enumerate() {
        acc += (*lp as f64).exp();
        if x < acc {
            return i;
        }
    }
    // Rounding left a sliver past the last: the most likely choice.
    log_probs.iter().enumerate().fold(0, |b, (i, lp)| if *lp > log_probs[b] { i } else { b })
}

impl Adversary {
    /// A fresh adversary on `device` (an autodiff device to learn).
    pub fn new(cfg: AdversaryConfig, objective: ObjectiveConfig, device: &Device, seed: u64) -> Result<Self, String> {
        cfg.validate()?;
        objective.validate()?;
        let model = AdversaryModel::new(&cfg, device, seed);
        Ok(Adversary {
            optim: Adam::new(cfg.adam_epsilon, None),
            cfg,
            objective,
            model: Some(model),
            updates: 0,
            previous: None,
            pending: Vec::new(),
            last: Vec::new(),
            failed: None,
        })
    }

    pub fn model(&self) -> &AdversaryModel {
        self.model.as_ref().expect("the model is only taken during an update")
    }

    /// Samples a design: o, k, then N open-loop steps, drawing from `rng`.
    pub async fn sample(&self, rng: &mut Rng) -> Result<Proposal, String> {
        let m = self.model().valid();
        let noise: Vec<f32> = (0..self.cfg.noise_dim).map(|_| rng.normal() as f32).collect();
        let (h0, k_logits, _) = m.head(&noise);
        let k_lp = read(burn::tensor::activation::log_softmax(k_logits, 1)).await?;
        let k = sample_index(rng, &k_lp) as u32;
        let mut log_prob = k_lp[k as usize] as f64;
        let (mut h, mut c) = m.zero_state(1);
        let mut x = h0;
        let mut choices = Vec::with_capacity(self.cfg.slots as usize);
        let mut skip_log_probs = Vec::with_capacity(choices.capacity());
        let mut placed = Tracker::new(self.cfg.max_pages as usize, k, self.cfg.mask_repeats);
        for _ in 0..self.cfg.slots {
            (h, c) = m.cell(x, h, c);
            let p_lp = read(m.primitive_log_probs(h.clone(), &[placed.closed()])).await?;
            debug_assert_eq!(p_lp.len(), CHOICES);
            let a = sample_index(rng, &p_lp);
            log_prob += p_lp[a] as f64;
            skip_log_probs.push(p_lp[SKIP] as f64);
            let b = if a == SKIP {
                None
            } else {
                let l_lp = read(m.page_log_probs(h.clone(), &[placed.open_pages(a)])).await?;
                let b = sample_index(rng, &l_lp[..=k as usize]) as u32;
                log_prob += l_lp[b as usize] as f64;
                placed.place(a, b);
                Some(b)
            };
            choices.push((a, b));
            x = m.next_input(k, (a, b));
        }
        if !log_prob.is_finite() {
            return Err(format!("the adversary's design has a non-finite log-probability ({log_prob})"));
        }
        Ok(Proposal { noise, k, choices, log_prob, skip_log_probs })
    }

    /// Re-scores a proposal with the current network: (log π of the design, log π(SKIP) per step).
    pub async fn score(&self, p: &Proposal) -> Result<(f64, Vec<f64>), String> {
        let s = self.model().valid().score(&p.noise, p.k, &p.choices, self.cfg.mask_repeats);
        let lp = read(s.log_prob).await?[0] as f64;
        let skips = read(s.skip_log_probs).await?.into_iter().map(|x| x as f64).collect();
        Ok((lp, skips))
    }

    /// The objective's signal for `returns` on `p` (nothing learned).
    pub fn signal(&self, p: &Proposal, returns: &[Vec<f64>]) -> Result<Signal, String> {
        objective::signal(&self.objective, returns, &p.skip_log_probs, self.previous)
    }

    /// One update from the navigators' returns on each proposal of `batch`. ALP's progress is
    /// measured design after design. An update whose loss is not finite is refused before
    /// anything changes.
    pub async fn learn(&mut self, batch: &[(Proposal, Vec<Vec<f64>>)]) -> Result<Vec<GeneratorReport>, String> {
        let previous = self.previous;
        let mut signals = Vec::with_capacity(batch.len());
        for (p, returns) in batch {
            let sig = self.signal(p, returns)?;
            if self.objective.objective == super::config::Objective::Alp {
                self.previous = Some(sig.best);
            }
            signals.push((p, sig));
        }
        self.previous = previous;
        self.learn_from(&signals).await
    }

    /// One update with given signals (tests drive the budget term with a fixed one): the mean
    /// over the designs of each one's A2C loss with entropy regularisation, plus its budget term
    /// −w·N̂ (N̂ differentiated through the SKIP probabilities, see `Budget`).
    pub async fn learn_from(&mut self, batch: &[(&Proposal, Signal)]) -> Result<Vec<GeneratorReport>, String> {
        if let Some((_, sig)) = batch.iter().find(|(_, s)| !(s.reward.is_finite() && s.budget_weight.is_finite())) {
            return Err(format!("the adversary's reward is not a number ({sig:?}): training stopped"));
        }
        if batch.is_empty() {
            return Ok(Vec::new());
        }
        let model = self.model.take().expect("model");
        let plain = model.device().without_autodiff();
        let d = batch.len();
        let designs: Vec<Decisions> = batch.iter().map(|(p, _)| (&p.noise[..], p.k, &p.choices[..])).collect();
        let s = model.score_batch(&designs, self.cfg.mask_repeats);
        let host = |v: Vec<f32>| Tensor::<1>::from_data(TensorData::new(v, [d]), &plain);
        let reward = host(batch.iter().map(|(_, sig)| sig.reward as f32).collect());
        let advantage = reward.clone() - s.value.clone().detach();
        let policy_loss = (s.log_prob * advantage).neg();
        let value_loss = (reward - s.value.clone()).square();
        let n_hat = match self.objective.budget {
            Budget::FlooredLogSkip => s.skip_log_probs.clamp_min(super::config::SKIP_FLOOR.ln() as f32).sum_dim(1).neg(),
            Budget::Expected => s.skip_log_probs.exp().neg().add_scalar(1.0).sum_dim(1),
            Budget::LogSkip => s.skip_log_probs.sum_dim(1).neg(),
        }
        .reshape([d]);
        let budget_loss = n_hat * host(batch.iter().map(|(_, sig)| -sig.budget_weight as f32).collect());
        let losses = policy_loss.clone() + value_loss.clone().mul_scalar(self.cfg.value_coef) - s.entropy.clone().mul_scalar(self.cfg.entropy_coef)
            + budget_loss.clone();
        let loss = losses.mean();
        // Per design: policy loss, value loss, entropy, budget loss, value.
        let figures = Tensor::stack::<2>(vec![policy_loss, value_loss, s.entropy, budget_loss, s.value], 1).reshape([5 * d]).detach();
        let all = Tensor::cat(vec![loss.clone().detach().reshape([1]), figures], 0);
        let f = match read(all).await {
            Ok(f) if f.iter().all(|x| x.is_finite()) => f,
            Ok(f) => {
                self.model = Some(model);
                return Err(format!("the adversary's update gave a non-finite loss ({:?}): training stopped", &f[..f.len().min(12)]));
            }
            Err(e) => {
                self.model = Some(model);
                return Err(e);
            }
        };
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        self.model = Some(self.optim.step(self.cfg.learning_rate, model, grads));
        self.updates += 1;
        if self.objective.objective == super::config::Objective::Alp {
            self.previous = batch.last().map(|(_, sig)| sig.best);
        }
        let reports = batch
            .iter()
            .enumerate()
            .map(|(i, (p, sig))| {
                let d = &f[1 + 5 * i..1 + 5 * (i + 1)];
                let design = p.design();
                let (active, passive) = design.counts();
                let chosen = p.choices.iter().filter(|c| c.0 != SKIP).count() as u32;
                GeneratorReport {
                    objective: sig.value,
                    reward: sig.reward,
                    regret: sig.regret,
                    best_return: sig.best,
                    budget_weight: sig.budget_weight,
                    n_hat: sig.n_hat,
                    expected_budget: p.expected_budget(),
                    chosen,
                    repeats: chosen - design.placed().len() as u32,
                    min_skip_log_prob: p.skip_log_probs.iter().copied().fold(0.0, f64::min),
                    log_prob: p.log_prob,
                    pages: design.pages(),
                    active: active as u32,
                    passive: passive as u32,
                    loss: f[0] as f64,
                    policy_loss: d[0] as f64,
                    value_loss: d[1] as f64,
                    entropy: d[2] as f64,
                    budget_loss: d[3] as f64,
                    value: d[4] as f64,
                    updates: self.updates,
                }
            })
            .collect::<Vec<_>>();
        debug_assert_eq!(reports.len(), d);
        self.last = reports.clone();
        Ok(reports)
    }

    /// The adversary as a checkpoint file (its optimizer is not in it; see [`Self::state`]).
    pub async fn save(&self) -> Result<Vec<u8>, String> {
        let header = Header { config: self.cfg.clone(), objective: self.objective.clone(), updates: self.updates, previous: self.previous };
        let header = serde_json::to_vec(&header).map_err(|e| e.to_string())?;
        let cfg = self.cfg.clone();
        let record = container::record_bytes(self.model(), |d| AdversaryModel::new(&cfg, d, 0), Precision::Full).await?;
        Ok(container::write(&KIND, &header, &record))
    }

    /// An adversary from a checkpoint file, on `device`, with a fresh optimizer.
    pub fn load(bytes: &[u8], device: &Device) -> Result<Adversary, CheckpointError> {
        let parts = container::read(&KIND, bytes)?;
        let header: Header = container::read_header(parts.header)?;
        header.config.validate().map_err(|e| CheckpointError::Corrupt(format!("invalid config: {e}")))?;
        header.objective.validate().map_err(|e| CheckpointError::Corrupt(format!("invalid objective: {e}")))?;
        if header.previous.is_some_and(|p| !p.is_finite()) {
            return Err(CheckpointError::Corrupt("ALP's previous return is not a number".into()));
        }
        let cfg = header.config.clone();
        let model = container::load_record(|d| AdversaryModel::new(&cfg, d, 0), parts.record, false, device)?;
        Ok(Adversary {
            optim: Adam::new(cfg.adam_epsilon, None),
            cfg,
            objective: header.objective,
            model: Some(model),
            updates: header.updates,
            previous: header.previous,
            pending: Vec::new(),
            last: Vec::new(),
            failed: None,
        })
    }

    /// Everything a run snapshot needs to go on exactly: the checkpoint, Adam's moments and the
    /// proposals not yet learned from. Layout: u64 length · checkpoint · u64 length · Adam
    /// (empty before the first update) · JSON of the pending proposals (a list; files from
    /// before designs were batched hold one proposal or `null`).
    pub async fn state(&self) -> Result<Vec<u8>, String> {
        let ckpt = self.save().await?;
        let adam = if self.optim.is_empty() { Vec::new() } else { self.optim.save(self.model()).await? };
        let pending = serde_json::to_vec(&self.pending).map_err(|e| e.to_string())?;
        let mut out = Vec::with_capacity(16 + ckpt.len() + adam.len() + pending.len());
        for part in [&ckpt, &adam] {
            out.extend_from_slice(&(part.len() as u64).to_le_bytes());
            out.extend_from_slice(part);
        }
        out.extend_from_slice(&pending);
        Ok(out)
    }

    /// Continues from [`Self::state`]; a damaged state is refused and nothing changes.
    pub fn restore(&mut self, bytes: &[u8], device: &Device) -> Result<(), String> {
        let damaged = |why: String| format!("the saved adversary is damaged: {why}");
        let mut at = 0usize;
        let mut part = || -> Result<&[u8], String> {
            let len = bytes.get(at..at + 8).ok_or_else(|| damaged("it ends too early".into()))?;
            let len = usize::try_from(u64::from_le_bytes(len.try_into().unwrap())).map_err(|_| damaged("bad length".into()))?;
            let s = bytes
                .get(at + 8..(at + 8).checked_add(len).ok_or_else(|| damaged("bad length".into()))?)
                .ok_or_else(|| damaged("it ends too early".into()))?;
            at += 8 + len;
            Ok(s)
        };
        let (ckpt, adam) = (part()?, part()?);
        let mut loaded = Adversary::load(ckpt, device).map_err(|e| damaged(e.to_string()))?;
        if loaded.objective.objective != self.objective.objective {
            return Err(format!(
                "the saved adversary is trained for {}, this run for {}",
                loaded.objective.objective.label(),
                self.objective.objective.label()
            ));
        }
        // Same objective: name the constants or sizes that differ, so the user knows which flags to
        // give (a resumed run must ask for the snapshot's).
        let o = |c: &ObjectiveConfig| format!("alpha {}, beta {}, delta {}, budget {}", c.alpha, c.beta, c.delta, c.budget.key());
        if loaded.objective != self.objective {
            return Err(format!(
                "the saved adversary has {} but this run asks for {}: resume with the snapshot's --alpha/--beta/--delta/--budget",
                o(&loaded.objective),
                o(&self.objective)
            ));
        }
        if loaded.cfg != self.cfg {
            return Err(format!("the saved adversary's network differs from this run's ({:?}; this run: {:?})", loaded.cfg, self.cfg));
        }
        if !adam.is_empty() {
            let model = loaded.model.as_ref().expect("model");
            loaded.optim.load(model, adam)?;
        }
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Pending {
            Many(Vec<Proposal>),
            One(Option<Proposal>),
        }
        let pending = match serde_json::from_slice(&bytes[at..]).map_err(|e| damaged(e.to_string()))? {
            Pending::Many(v) => v,
            Pending::One(p) => p.into_iter().collect(),
        };
        for p in &pending {
            let fits = p.noise.len() == self.cfg.noise_dim
                && p.k < self.cfg.max_pages
                && p.choices.len() == self.cfg.slots as usize
                && p.choices.iter().all(|&(a, b)| a < CHOICES && (a == SKIP) == b.is_none() && b.is_none_or(|b| b <= p.k));
            if !fits {
                return Err(damaged("its pending design does not fit the network".into()));
            }
        }
        loaded.pending = pending;
        *self = loaded;
        Ok(())
    }
}

impl Generator for Adversary {
    fn name(&self) -> &'static str {
        self.objective.objective.label()
    }

    fn propose(&mut self, rng: &mut Rng, _index: u64) -> Design {
        if self.pending.is_empty() {
            // Reports describe the designs last learned from; a new batch has none yet.
            self.last.clear();
        }
        match block_on(self.sample(rng)) {
            Ok(p) => {
                let d = p.design();
                self.pending.push(p);
                d
            }
            Err(e) => {
                // Nothing to learn from; the loop reads the failure and stops.
                self.pending.clear();
                self.failed = Some(e);
                Design::from_entries(Some(1), &[]).expect("an empty page is a design")
            }
        }
    }

    fn observe(&mut self, outcomes: &[Outcome]) {
        let pending = std::mem::take(&mut self.pending);
        if pending.len() != outcomes.len() {
            self.failed = Some(format!("{} designs were proposed but {} outcomes came back", pending.len(), outcomes.len()));
            return;
        }
        let batch: Vec<(Proposal, Vec<Vec<f64>>)> = pending.into_iter().zip(outcomes.iter().map(|o| o.returns.clone())).collect();
        if let Err(e) = block_on(self.learn(&batch)) {
            self.failed = Some(e);
        }
    }

    fn reports(&self) -> Vec<GeneratorReport> {
        self.last.clone()
    }

    fn failure(&self) -> Option<String> {
        self.failed.clone()
    }

    fn save_state(&self) -> Result<Option<Vec<u8>>, String> {
        block_on(self.state()).map(Some)
    }

    fn load_state(&mut self, bytes: &[u8]) -> Result<(), String> {
        let device = self.model().device();
        self.restore(bytes, &device)
    }
}

//! The adversary's network: the papers' decoder (AEG §4.2 and App. A.12, CoDE §5 and A.14).
//!
//! o ~ N(0, I) → f0 → h0; fK(h0) is a categorical over k, the last page's index (0..K−1); an
//! LSTM unrolled N steps, open loop, whose first input is h0 and whose later inputs are fI of
//! the previous step's choice; at each step fP gives a distribution over the 40 primitives and
//! SKIP (index 0, the design format's own), and fL one over the pages 0..=k where that primitive
//! goes. Every dense block is two layers with tanh between them ("stacked twice, tanh on the
//! output of all non-final dense layers"), 100 wide, as the LSTM. Beside the policy, a critic of
//! the same shape reads h0 (the A2C baseline; not part of the papers' parameter count).
//!
//! Weights are drawn from our own seeded generator (burn's default ranges, U(±1/√fan_in)), not
//! the backend's process-wide one, so two adversaries built with one seed are equal even when
//! other agents are being built at the same time.

use burn::module::Param;
use burn::nn::Linear;
use burn::prelude::*;
use burn::tensor::activation::{log_softmax, sigmoid, tanh};

use super::config::AdversaryConfig;
use crate::gminiwob::primitive::PRIMITIVE_COUNT;
use crate::rng::Rng;

/// Choices of fP: SKIP (0) and the 40 primitives, in the design format's numbering.
pub const CHOICES: usize = PRIMITIVE_COUNT + 1;
/// The design format's SKIP.
pub const SKIP: usize = 0;
/// Added to the logits of pages past k.
const MASKED: f32 = -1e9;

fn uniform_linear(d_in: usize, d_out: usize, bias: bool, rng: &mut Rng, device: &Device) -> Linear {
    linear_with_bias_offset(d_in, d_out, bias, |_| 0.0, rng, device)
}

/// A dense layer with weights and bias from U(±1/√d_in), `offset(j)` added to bias j.
fn linear_with_bias_offset(d_in: usize, d_out: usize, bias: bool, offset: impl Fn(usize) -> f32, rng: &mut Rng, device: &Device) -> Linear {
    let k = 1.0 / (d_in as f64).sqrt();
    let mut draw = |n: usize| (0..n).map(|_| ((rng.next_f64() * 2.0 - 1.0) * k) as f32).collect::<Vec<f32>>();
    let weight = Param::from_tensor(Tensor::from_data(TensorData::new(draw(d_in * d_out), [d_in, d_out]), device));
    let bias = bias.then(|| {
        let b: Vec<f32> = draw(d_out).into_iter().enumerate().map(|(j, x)| x + offset(j)).collect();
        Param::from_tensor(Tensor::from_data(TensorData::new(b, [d_out]), device))
    });
    Linear { weight, bias }
}

/// Two dense layers, tanh after the first (AEG A.12).
#[derive(Module, Debug)]
pub struct Dense2 {
    first: Linear,
    last: Linear,
}

impl Dense2 {
    fn new(d_in: usize, hidden: usize, d_out: usize, rng: &mut Rng, device: &Device) -> Self {
        Dense2 { first: uniform_linear(d_in, hidden, true, rng, device), last: uniform_linear(hidden, d_out, true, rng, device) }
    }
    pub fn forward(&self, x: Tensor<2>) -> Tensor<2> {
        self.last.forward(tanh(self.first.forward(x)))
    }
}

/// Which choices a design's decisions may take at each step. Pages past k are never open. With
/// `mask_repeats` a (primitive, page) pair already placed cannot be chosen again — the design
/// format would drop it, so choosing it would spend a slot on nothing the site contains — and a
/// primitive already on every page 0..=k is closed altogether; SKIP is always open.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Masks {
    /// Per step: the primitives closed at it (index 0, SKIP, never).
    pub closed: Vec<[bool; CHOICES]>,
    /// Per step that placed a primitive (in order): the pages open to it.
    pub pages: Vec<Vec<bool>>,
}

impl Masks {
    /// The masks every step of `choices` was drawn under, on a site whose last page is `k` of
    /// `pages` (K).
    pub fn along(pages: usize, k: u32, choices: &[(usize, Option<u32>)], mask_repeats: bool) -> Masks {
        let mut tracker = Tracker::new(pages, k, mask_repeats);
        let mut m = Masks::default();
        for &(a, b) in choices {
            m.closed.push(tracker.closed());
            if let Some(b) = b {
                m.pages.push(tracker.open_pages(a));
                tracker.place(a, b);
            }
        }
        m
    }
}

/// The pairs placed so far while a design is drawn or re-scored, and the masks they imply.
pub struct Tracker {
    k: u32,
    pages: usize,
    mask_repeats: bool,
    /// [primitive][page]: placed.
    placed: Vec<Vec<bool>>,
}

impl Tracker {
    pub fn new(pages: usize, k: u32, mask_repeats: bool) -> Self {
        Tracker { k, pages, mask_repeats, placed: vec![vec![false; pages]; CHOICES] }
    }

    /// The primitives closed now.
    pub fn closed(&self) -> [bool; CHOICES] {
        let mut c = [false; CHOICES];
        if self.mask_repeats {
            for (a, slot) in c.iter_mut().enumerate().skip(1) {
                *slot = self.placed[a][..=self.k as usize].iter().all(|&p| p);
            }
        }
        c
    }

    /// The pages primitive `a` may go on now.
    pub fn open_pages(&self, a: usize) -> Vec<bool> {
        (0..self.pages).map(|p| p as u32 <= self.k && !(self.mask_repeats && self.placed[a][p])).collect()
    }

    pub fn place(&mut self, a: usize, b: u32) {
        self.placed[a][b as usize] = true;
    }
}

#[derive(Module, Debug)]
pub struct AdversaryModel {
    f0: Dense2,
    fk: Dense2,
    /// The LSTM cell (gates i, f, g, o): input and recurrent products.
    lstm_x: Linear,
    lstm_h: Linear,
    fp: Dense2,
    fl: Dense2,
    /// Encodes one-hot(primitive) ⊕ one-hot(page; zeros after SKIP) ⊕ one-hot(k) into the
    /// next LSTM input. k is in it so the primitives can depend on the page count the papers'
    /// π(a_i, b_i | a_<i, b_<i, k) conditions on; the papers do not say how, this is our choice.
    fi: Dense2,
    /// The critic V(h0).
    value: Dense2,
    hidden: usize,
    pages: usize,
}

/// A design's decisions scored by the network (differentiable on an autodiff device).
pub struct Scored {
    /// log π of the whole design: log π(k) + Σ_i log π(a_i) + Σ_{a_i ≠ SKIP} log π(b_i), [1].
    pub log_prob: Tensor<1>,
    /// log π(a_i = SKIP | a_<i) at each of the N steps, [N].
    pub skip_log_probs: Tensor<1>,
    /// Summed entropy of every decision taken (fK, each fP, fL where a primitive was placed), [1].
    pub entropy: Tensor<1>,
    /// V(h0), [1].
    pub value: Tensor<1>,
}

impl AdversaryModel {
    pub fn new(cfg: &AdversaryConfig, device: &Device, seed: u64) -> Self {
        let mut rng = Rng::new(seed ^ 0x6164_7665_7273_6172);
        let (h, k) = (cfg.hidden, cfg.max_pages as usize);
        let f0 = Dense2::new(cfg.noise_dim, h, h, &mut rng, device);
        let fk = Dense2::new(h, h, k, &mut rng, device);
        // Forget-gate bias + 1 (Jozefowicz et al. 2015), as the navigator's LSTM.
        let lstm_x = linear_with_bias_offset(h, 4 * h, true, |j| if (h..2 * h).contains(&j) { 1.0 } else { 0.0 }, &mut rng, device);
        let lstm_h = uniform_linear(h, 4 * h, false, &mut rng, device);
        let fp = Dense2::new(h, h, CHOICES, &mut rng, device);
        let fl = Dense2::new(h, h, k, &mut rng, device);
        let fi = Dense2::new(CHOICES + 2 * k, h, h, &mut rng, device);
        let value = Dense2::new(h, h, 1, &mut rng, device);
        AdversaryModel { f0, fk, lstm_x, lstm_h, fp, fl, fi, value, hidden: h, pages: k }
    }

    pub fn device(&self) -> Device {
        self.fp.last.weight.val().device()
    }

    /// Parameters of the policy (f0, fK, the LSTM, fP, fL, fI: what AEG A.12 counts) and of
    /// the critic.
    pub fn parameter_counts(&self) -> (usize, usize) {
        let critic = self.value.num_params();
        (self.num_params() - critic, critic)
    }

    /// h0 = f0(o), fK's logits and V(h0) for one noise vector.
    pub fn head(&self, noise: &[f32]) -> (Tensor<2>, Tensor<2>, Tensor<1>) {
        let plain = self.device().without_autodiff();
        let o = Tensor::<2>::from_data(TensorData::new(noise.to_vec(), [1, noise.len()]), &plain);
        let h0 = self.f0.forward(o.to_device(&self.device()));
        let k_logits = self.fk.forward(h0.clone());
        let value = self.value.forward(h0.clone()).reshape([1]);
        (h0, k_logits, value)
    }

    /// One LSTM step: (x, h, c) → (h, c).
    pub fn cell(&self, x: Tensor<2>, h: Tensor<2>, c: Tensor<2>) -> (Tensor<2>, Tensor<2>) {
        let gates = self.lstm_x.forward(x) + self.lstm_h.forward(h);
        let g = gates.chunk(4, 1);
        let (i, f, cand, o) = (sigmoid(g[0].clone()), sigmoid(g[1].clone()), tanh(g[2].clone()), sigmoid(g[3].clone()));
        let c = f * c + i * cand;
        let h = o * tanh(c.clone());
        (h, c)
    }

    pub fn zero_state(&self, rows: usize) -> (Tensor<2>, Tensor<2>) {
        let dev = self.device();
        (Tensor::zeros([rows, self.hidden], &dev), Tensor::zeros([rows, self.hidden], &dev))
    }

    /// log π over SKIP and the primitives, [rows, 41]; row r's closed primitives (`closed[r][a]`,
    /// see [`Masks`]) get no probability. With nothing closed the logits are used as they are.
    pub fn primitive_log_probs(&self, h: Tensor<2>, closed: &[[bool; CHOICES]]) -> Tensor<2> {
        let logits = self.fp.forward(h);
        if closed.iter().all(|row| !row.contains(&true)) {
            return log_softmax(logits, 1);
        }
        let mask: Vec<f32> = closed.iter().flat_map(|row| row.iter().map(|&c| if c { MASKED } else { 0.0 })).collect();
        log_softmax(logits + self.host(mask, [closed.len(), CHOICES]), 1)
    }

    /// log π over the pages, [rows, K]; row r may choose only the pages `open[r]` marks.
    pub fn page_log_probs(&self, h: Tensor<2>, open: &[Vec<bool>]) -> Tensor<2> {
        let mask: Vec<f32> = open.iter().flat_map(|row| (0..self.pages).map(|p| if row.get(p) == Some(&true) { 0.0 } else { MASKED })).collect();
        log_softmax(self.fl.forward(h) + self.host(mask, [open.len(), self.pages]), 1)
    }

    fn host(&self, values: Vec<f32>, shape: [usize; 2]) -> Tensor<2> {
        let plain = self.device().without_autodiff();
        Tensor::<2>::from_data(TensorData::new(values, shape), &plain).to_device(&self.device())
    }

    /// The one-hot input of fI for each (primitive, page) choice, given k.
    fn choice_inputs(&self, k: u32, choices: &[(usize, Option<u32>)]) -> Tensor<2> {
        let width = CHOICES + 2 * self.pages;
        let mut x = vec![0.0f32; choices.len() * width];
        for (row, &(a, b)) in choices.iter().enumerate() {
            let r = &mut x[row * width..(row + 1) * width];
            r[a] = 1.0;
            if let Some(b) = b {
                r[CHOICES + b as usize] = 1.0;
            }
            r[CHOICES + self.pages + k as usize] = 1.0;
        }
        let plain = self.device().without_autodiff();
        Tensor::<2>::from_data(TensorData::new(x, [choices.len(), width]), &plain).to_device(&self.device())
    }

    /// The next LSTM input after choosing `choice` (fI).
    pub fn next_input(&self, k: u32, choice: (usize, Option<u32>)) -> Tensor<2> {
        self.fi.forward(self.choice_inputs(k, &[choice]))
    }

    /// Scores a whole design's decisions at once (the LSTM's inputs are known, so fI runs over
    /// all of them in one product; the LSTM still steps).
    pub fn score(&self, noise: &[f32], k: u32, choices: &[(usize, Option<u32>)], mask_repeats: bool) -> Scored {
        let n = choices.len();
        let (h0, k_logits, value) = self.head(noise);
        let k_lp = log_softmax(k_logits, 1);
        let plain = self.device().without_autodiff();
        let pick = |lp: Tensor<2>, idx: Vec<i64>| {
            let rows = idx.len();
            let idx = Tensor::<2, Int>::from_data(TensorData::new(idx, [rows, 1]), &plain).to_device(&lp.device());
            lp.gather(1, idx).reshape([rows])
        };
        let entropy_rows = |lp: Tensor<2>| (lp.clone().exp() * lp).sum_dim(1).neg().reshape([-1]);
        let mut log_prob = pick(k_lp.clone(), vec![k as i64]);
        let mut entropy = entropy_rows(k_lp);
        if n == 0 {
            let zero = Tensor::<1>::zeros([0], &self.device());
            return Scored { log_prob, skip_log_probs: zero, entropy, value };
        }
        let later = if n > 1 { Some(self.fi.forward(self.choice_inputs(k, &choices[..n - 1]))) } else { None };
        let (mut h, mut c) = self.zero_state(1);
        let mut outs = Vec::with_capacity(n);
        for i in 0..n {
            let x = if i == 0 { h0.clone() } else { later.clone().unwrap().slice([i - 1..i, 0..self.hidden]) };
            (h, c) = self.cell(x, h, c);
            outs.push(h.clone());
        }
        let hs = Tensor::cat(outs, 0);
        let masks = Masks::along(self.pages, k, choices, mask_repeats);
        let p_lp = self.primitive_log_probs(hs.clone(), &masks.closed);
        let skip_log_probs = p_lp.clone().slice([0..n, SKIP..SKIP + 1]).reshape([n]);
        log_prob = log_prob + pick(p_lp.clone(), choices.iter().map(|&(a, _)| a as i64).collect()).sum().reshape([1]);
        entropy = entropy + entropy_rows(p_lp).sum().reshape([1]);
        let placed: Vec<(usize, u32)> = choices.iter().enumerate().filter_map(|(i, &(_, b))| b.map(|b| (i, b))).collect();
        if !placed.is_empty() {
            let rows: Vec<i64> = placed.iter().map(|&(i, _)| i as i64).collect();
            let rows = Tensor::<1, Int>::from_data(TensorData::new(rows, [placed.len()]), &plain).to_device(&self.device());
            let l_lp = self.page_log_probs(hs.select(0, rows), &masks.pages);
            log_prob = log_prob + pick(l_lp.clone(), placed.iter().map(|&(_, b)| b as i64).collect()).sum().reshape([1]);
            entropy = entropy + entropy_rows(l_lp).sum().reshape([1]);
        }
        Scored { log_prob, skip_log_probs, entropy, value }
    }
}

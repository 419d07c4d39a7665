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
use crate::learn::{fused_ops, lstm_op};
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

/// D designs of N decisions each scored together: [`Scored`] with a row per design.
pub struct ScoredBatch {
    /// [D].
    pub log_prob: Tensor<1>,
    /// [D, N].
    pub skip_log_probs: Tensor<2>,
    /// [D].
    pub entropy: Tensor<1>,
    /// [D].
    pub value: Tensor<1>,
}

/// A design to score: its noise, k and decisions.
pub type Decisions<'a> = (&'a [f32], u32, &'a [(usize, Option<u32>)]);

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

    /// The one-hot input of fI for each (primitive, page) choice, given k, appended to `x`.
    fn choice_rows(&self, k: u32, choices: &[(usize, Option<u32>)], x: &mut Vec<f32>) {
        let width = CHOICES + 2 * self.pages;
        for &(a, b) in choices {
            let at = x.len();
            x.resize(at + width, 0.0);
            let r = &mut x[at..];
            r[a] = 1.0;
            if let Some(b) = b {
                r[CHOICES + b as usize] = 1.0;
            }
            r[CHOICES + self.pages + k as usize] = 1.0;
        }
    }

    /// The next LSTM input after choosing `choice` (fI).
    pub fn next_input(&self, k: u32, choice: (usize, Option<u32>)) -> Tensor<2> {
        let mut x = Vec::new();
        self.choice_rows(k, &[choice], &mut x);
        self.fi.forward(self.host(x, [1, CHOICES + 2 * self.pages]))
    }

    /// Scores a whole design's decisions at once (see [`Self::score_batch`]).
    pub fn score(&self, noise: &[f32], k: u32, choices: &[(usize, Option<u32>)], mask_repeats: bool) -> Scored {
        let s = self.score_batch(&[(noise, k, choices)], mask_repeats);
        Scored { log_prob: s.log_prob, skip_log_probs: s.skip_log_probs.reshape([choices.len()]), entropy: s.entropy, value: s.value }
    }

    /// Scores D designs' decisions together, each as it would be alone: the LSTM's inputs are
    /// known, so fI runs over all of them in one product, and the LSTM steps every design at
    /// once (a row each), so an update over D designs costs N steps, not D·N. Every design has
    /// the same number of decisions (the adversary always takes its N).
    pub fn score_batch(&self, designs: &[Decisions], mask_repeats: bool) -> ScoredBatch {
        self.score_batch_by(designs, mask_repeats, fused_ops(&self.device()))
    }

    /// [`Self::score_batch`], the LSTM as one fused operation or stepped through the tensor API.
    fn score_batch_by(&self, designs: &[Decisions], mask_repeats: bool, fused: bool) -> ScoredBatch {
        let d = designs.len();
        let n = designs.first().map_or(0, |x| x.2.len());
        assert!(designs.iter().all(|x| x.2.len() == n), "designs of one batch take the same number of decisions");
        let dev = self.device();
        let plain = dev.clone().without_autodiff();
        let noise: Vec<f32> = designs.iter().flat_map(|x| x.0.iter().copied()).collect();
        let noise_dim = noise.len() / d.max(1);
        let h0 = self.f0.forward(self.host(noise, [d, noise_dim]));
        let value = self.value.forward(h0.clone()).reshape([d]);
        let k_lp = log_softmax(self.fk.forward(h0.clone()), 1);
        let ints2 = |v: Vec<i64>| {
            let rows = v.len();
            Tensor::<2, Int>::from_data(TensorData::new(v, [rows, 1]), &plain).to_device(&dev)
        };
        let ints1 = |v: Vec<i64>| {
            let rows = v.len();
            Tensor::<1, Int>::from_data(TensorData::new(v, [rows]), &plain).to_device(&dev)
        };
        let entropy_rows = |lp: Tensor<2>| (lp.clone().exp() * lp).sum_dim(1).neg();
        let mut log_prob = k_lp.clone().gather(1, ints2(designs.iter().map(|x| x.1 as i64).collect())).reshape([d]);
        let mut entropy = entropy_rows(k_lp).reshape([d]);
        if n == 0 {
            return ScoredBatch { log_prob, skip_log_probs: Tensor::zeros([d, 0], &dev), entropy, value };
        }
        // fI of every decision but each design's last (design-major rows: design j's i-th at j·(n−1) + i).
        let later = (n > 1).then(|| {
            let mut x = Vec::new();
            for &(_, k, choices) in designs {
                self.choice_rows(k, &choices[..n - 1], &mut x);
            }
            self.fi.forward(self.host(x, [d * (n - 1), CHOICES + 2 * self.pages]))
        });
        let hs = if fused {
            // Step-major rows (step i of design j at i·d + j), as the fused recurrence takes them.
            let x = match &later {
                Some(later) => Tensor::cat(
                    vec![
                        h0.clone(),
                        later.clone().select(0, ints1((1..n).flat_map(|i| (0..d).map(move |j| (j * (n - 1) + i - 1) as i64)).collect())),
                    ],
                    0,
                ),
                None => h0.clone(),
            };
            let hs = lstm_op::recurrence(self.lstm_x.forward(x), self.lstm_h.weight.val(), vec![d; n]);
            hs.select(0, ints1((0..d).flat_map(|j| (0..n).map(move |i| (i * d + j) as i64)).collect()))
        } else {
            let (mut h, mut c) = self.zero_state(d);
            let mut outs = Vec::with_capacity(n);
            for i in 0..n {
                let x = match (&later, i) {
                    (Some(later), i) if i > 0 => later.clone().select(0, ints1((0..d).map(|j| (j * (n - 1) + i - 1) as i64).collect())),
                    _ => h0.clone(),
                };
                (h, c) = self.cell(x, h, c);
                outs.push(h.clone());
            }
            Tensor::stack::<3>(outs, 1).reshape([d * n, self.hidden])
        }; // design j's step i at row j·n + i
        let mut closed = Vec::with_capacity(d * n);
        let mut pages = Vec::new();
        let mut placed = Vec::new(); // (row, design, page)
        for (j, &(_, k, choices)) in designs.iter().enumerate() {
            let masks = Masks::along(self.pages, k, choices, mask_repeats);
            closed.extend(masks.closed);
            pages.extend(masks.pages);
            placed.extend(choices.iter().enumerate().filter_map(|(i, &(_, b))| b.map(|b| (j * n + i, j, b))));
        }
        let p_lp = self.primitive_log_probs(hs.clone(), &closed);
        let skip_log_probs = p_lp.clone().slice([0..d * n, SKIP..SKIP + 1]).reshape([d, n]);
        let chosen = ints2(designs.iter().flat_map(|x| x.2.iter().map(|&(a, _)| a as i64)).collect());
        log_prob = log_prob + p_lp.clone().gather(1, chosen).reshape([d, n]).sum_dim(1).reshape([d]);
        entropy = entropy + entropy_rows(p_lp).reshape([d, n]).sum_dim(1).reshape([d]);
        if !placed.is_empty() {
            let r = placed.len();
            let l_lp = self.page_log_probs(hs.select(0, ints1(placed.iter().map(|p| p.0 as i64).collect())), &pages);
            let picked = l_lp.clone().gather(1, ints2(placed.iter().map(|p| p.2 as i64).collect()));
            // Each placed row's terms summed into its design: [D, r] · [r, 1].
            let mut owner = vec![0.0f32; d * r];
            for (row, p) in placed.iter().enumerate() {
                owner[p.1 * r + row] = 1.0;
            }
            let owner = self.host(owner, [d, r]);
            log_prob = log_prob + owner.clone().matmul(picked).reshape([d]);
            entropy = entropy + owner.matmul(entropy_rows(l_lp)).reshape([d]);
        }
        ScoredBatch { log_prob, skip_log_probs, entropy, value }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::optim::GradientsParams;

    #[test]
    fn the_fused_lstm_scores_as_the_stepped_one_values_and_gradients() {
        // The CPU path runs the decoder's LSTM as one operation with its backward by hand; burn's
        // autodiff through the stepped cell is the reference.
        let cfg = AdversaryConfig { hidden: 16, noise_dim: 8, ..AdversaryConfig::default() };
        let m = AdversaryModel::new(&cfg, &Device::flex().autodiff(), 3);
        let mut r = Rng::new(4);
        let n = 12;
        type Owned = (Vec<f32>, u32, Vec<(usize, Option<u32>)>);
        let designs: Vec<Owned> = (0..3)
            .map(|_| {
                let k = r.below(cfg.max_pages as usize) as u32;
                let noise = (0..cfg.noise_dim).map(|_| r.next_f64() as f32 - 0.5).collect();
                let choices = (0..n)
                    .map(|_| match r.below(CHOICES) {
                        SKIP => (SKIP, None),
                        a => (a, Some(r.below(k as usize + 1) as u32)),
                    })
                    .collect();
                (noise, k, choices)
            })
            .collect();
        let batch: Vec<Decisions> = designs.iter().map(|(o, k, c)| (&o[..], *k, &c[..])).collect();
        let run = |fused: bool| {
            let s = m.score_batch_by(&batch, true, fused);
            let v = |t: Tensor<2>| t.into_data().try_to_vec::<f32>().unwrap();
            let values = [v(s.log_prob.clone().reshape([1, 3])), v(s.entropy.clone().reshape([1, 3])), v(s.skip_log_probs.clone())].concat();
            let loss = s.log_prob.sum() + s.entropy.sum() + s.skip_log_probs.sum().reshape([1]);
            let g = GradientsParams::from_grads(loss.backward(), &m);
            let read = |w: &Param<Tensor<2>>| g.get::<2>(w.id).unwrap().into_data().try_to_vec::<f32>().unwrap();
            (values, [read(&m.lstm_x.weight), read(&m.lstm_h.weight), read(&m.fi.first.weight), read(&m.f0.first.weight)])
        };
        let ((fv, fg), (sv, sg)) = (run(true), run(false));
        for (x, y) in fv.iter().zip(&sv) {
            assert!((x - y).abs() <= 1e-4 * y.abs().max(1.0), "fused {x}, stepped {y}");
        }
        for (a, b) in fg.iter().zip(&sg) {
            assert_eq!(a.len(), b.len());
            assert!(b.iter().any(|&y| y != 0.0), "a gradient reaches the weight");
            for (x, y) in a.iter().zip(b) {
                assert!((x - y).abs() <= 1e-3 * y.abs().max(1.0), "gradient: fused {x}, stepped {y}");
            }
        }
    }
}

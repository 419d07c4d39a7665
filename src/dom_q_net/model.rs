//! The DOM-Q-Net network (§3.3 of the paper): local module, gated graph network, global readout
//! with goal attention, and three factorized Q streams built from noisy layers.

use burn::module::{Initializer, Param};
use burn::nn::{Linear, LinearConfig};
use burn::prelude::*;
use burn::tensor::IndexingUpdateOp;
use burn::tensor::activation::{relu, sigmoid, softmax, tanh};

use super::batch::Packed;
use super::config::DqnConfig;
use super::replay::DqnAction;
use crate::rng::Rng;

/// How a noisy layer's noise scales start: σ0 (Table 1), and whether the bias's is σ0/√outputs
/// (the reference code) rather than σ0/√inputs (Fortunato et al.; see
/// [`DqnConfig::noisy_bias_by_outputs`]).
#[derive(Clone, Copy, Debug)]
pub struct NoiseInit {
    pub sigma0: f64,
    pub bias_by_outputs: bool,
}

impl NoiseInit {
    pub fn of(cfg: &DqnConfig) -> Self {
        NoiseInit { sigma0: cfg.noisy_sigma0, bias_by_outputs: cfg.noisy_bias_by_outputs }
    }
}

/// Factorised Gaussian noisy linear layer (Fortunato et al., 2018). The noise lives in plain
/// tensor fields: moved with the module, never trained or saved.
#[derive(Module, Debug)]
pub struct NoisyLinear {
    w_mu: Param<Tensor<2>>,
    w_sigma: Param<Tensor<2>>,
    b_mu: Param<Tensor<1>>,
    b_sigma: Param<Tensor<1>>,
    eps_in: Tensor<2>,
    eps_out: Tensor<2>,
    d_in: usize,
    d_out: usize,
}

impl NoisyLinear {
    pub fn new(d_in: usize, d_out: usize, noise: NoiseInit, device: &Device) -> Self {
        let r = 1.0 / (d_in as f64).sqrt();
        let mu = Initializer::Uniform { min: -r, max: r };
        let sigma = Initializer::Constant { value: noise.sigma0 * r };
        let b_scale = if noise.bias_by_outputs { 1.0 / (d_out as f64).sqrt() } else { r };
        let b_sigma = Initializer::Constant { value: noise.sigma0 * b_scale };
        let plain = device.clone().without_autodiff();
        NoisyLinear {
            w_mu: mu.init([d_in, d_out], device),
            w_sigma: sigma.init([d_in, d_out], device),
            b_mu: mu.init([d_out], device),
            b_sigma: b_sigma.init([d_out], device),
            eps_in: Tensor::zeros([d_in, 1], &plain),
            eps_out: Tensor::zeros([1, d_out], &plain),
            d_in,
            d_out,
        }
    }

    /// Draws new noise, f(x) = sign(x)·sqrt|x| of standard normals, from the agent's own
    /// generator (so runs reproduce whatever else uses the backend's global one).
    pub fn resample(mut self, rng: &mut Rng) -> Self {
        let dev = self.eps_in.device();
        let mut draw = |n: usize| -> Vec<f32> {
            (0..n)
                .map(|_| {
                    let x = rng.normal();
                    (x.signum() * x.abs().sqrt()) as f32
                })
                .collect()
        };
        self.eps_in = Tensor::from_data(TensorData::new(draw(self.d_in), [self.d_in, 1]), &dev);
        self.eps_out = Tensor::from_data(TensorData::new(draw(self.d_out), [1, self.d_out]), &dev);
        self
    }

    /// Weight [d_in, d_out] and bias of this forward pass: the means only when not `noisy`.
    fn weights(&self, noisy: bool) -> (Tensor<2>, Tensor<1>) {
        if !noisy {
            return (self.w_mu.val(), self.b_mu.val());
        }
        let w = self.w_mu.val() + self.w_sigma.val() * self.eps_in.clone().matmul(self.eps_out.clone());
        let b = self.b_mu.val() + self.b_sigma.val() * self.eps_out.clone().reshape([self.d_out]);
        (w, b)
    }

    /// With `noisy` false only the means are used (greedy evaluation).
    pub fn forward(&self, x: Tensor<2>, noisy: bool) -> Tensor<2> {
        let (w, b) = self.weights(noisy);
        x.matmul(w) + b.unsqueeze::<2>()
    }

    /// The layer on rows `[x_i ; s_group(i)]` without building them: `x` [r, a] holds each row's
    /// own part, `shared` [k, d_in − a] the parts shared by groups of rows (e.g. a state's global
    /// embedding, the same for all of its leaves), `group` [r] each row's group. Same result as
    /// `forward` on the concatenation; the shared part is multiplied once per group, not per row.
    pub fn forward_shared(&self, x: Tensor<2>, shared: Tensor<2>, group: Tensor<1, Int>, noisy: bool) -> Tensor<2> {
        let (w, b) = self.weights(noisy);
        let a = x.dims()[1];
        let own = x.matmul(w.clone().slice([0..a, 0..self.d_out]));
        let common = shared.matmul(w.slice([a..self.d_in, 0..self.d_out])).select(0, group);
        own + common + b.unsqueeze::<2>()
    }
}

fn gnn_linear(d_in: usize, d_out: usize, device: &Device) -> Linear {
    // The reference initialises its graph layers N(0, 0.02) with zero bias.
    let mut lin = LinearConfig::new(d_in, d_out).with_initializer(Initializer::Normal { mean: 0.0, std: 0.02 }).init(device);
    lin.bias = Some(Initializer::Zeros.init([d_out], device));
    lin
}

/// A noisy MLP: one Q stream, in→h→out (the paper's two layers), with `deeper` further h→h
/// layers before the output (the reference code's in→h→h→out has one).
#[derive(Module, Debug)]
pub struct QStream {
    hidden: NoisyLinear,
    out: NoisyLinear,
    /// After `hidden`, in order. Declared last, so a record of a network without them (every
    /// checkpoint written before the option) lists its weights as before.
    deeper: Vec<NoisyLinear>,
}

impl QStream {
    fn new(d_in: usize, hidden: usize, layers: usize, d_out: usize, noise: NoiseInit, device: &Device) -> Self {
        QStream {
            hidden: NoisyLinear::new(d_in, hidden, noise, device),
            out: NoisyLinear::new(hidden, d_out, noise, device),
            deeper: (1..layers).map(|_| NoisyLinear::new(hidden, hidden, noise, device)).collect(),
        }
    }
    fn resample(self, rng: &mut Rng) -> Self {
        let hidden = self.hidden.resample(rng);
        let out = self.out.resample(rng);
        QStream { hidden, out, deeper: self.deeper.into_iter().map(|l| l.resample(rng)).collect() }
    }
    /// From the first hidden layer's output (before its ReLU) to the stream's values.
    fn rest(&self, h: Tensor<2>, noisy: bool) -> Tensor<2> {
        let h = self.deeper.iter().fold(relu(h), |h, layer| relu(layer.forward(h, noisy)));
        self.out.forward(h, noisy)
    }
    fn forward(&self, x: Tensor<2>, noisy: bool) -> Tensor<2> {
        self.rest(self.hidden.forward(x, noisy), noisy)
    }
    /// `forward` on rows `[x_i ; shared_group(i)]` (see [`NoisyLinear::forward_shared`]).
    fn forward_shared(&self, x: Tensor<2>, shared: Tensor<2>, group: Tensor<1, Int>, noisy: bool) -> Tensor<2> {
        self.rest(self.hidden.forward_shared(x, shared, group, noisy), noisy)
    }
}

#[derive(Module, Debug)]
pub struct DomQNetModel {
    tag_emb: Param<Tensor<2>>,
    class_emb: Param<Tensor<2>>,
    text_emb: Param<Tensor<2>>,
    /// GGNN: message weights and GRU gates (reset, update, new).
    w_msg: Linear,
    w_reset: Linear,
    w_update: Linear,
    w_new: Linear,
    /// Position-wise goal encoder over [token; one-hot position].
    goal_proj: Linear,
    dom_stream: QStream,
    token_stream: QStream,
    mode_stream: QStream,
    gnn_steps: usize,
    local_text: bool,
    sibling_positions: usize,
    goal_attention: bool,
    goal_concat: bool,
    text_dim: usize,
    local_dim: usize,
    global_dim: usize,
}

/// Q-values of a batch; masked entries hold about [`super::batch::NEG`].
#[derive(Debug, Clone)]
pub struct QOut {
    /// [b, l]: one per leaf.
    pub dom: Tensor<2>,
    /// [b, g]: one per goal token.
    pub token: Tensor<2>,
    /// [b, 2]: click, type.
    pub mode: Tensor<2>,
}

impl DomQNetModel {
    pub fn new(cfg: &DqnConfig, device: &Device) -> Self {
        let d = cfg.local_dim();
        let gd = cfg.global_dim();
        let emb = Initializer::Normal { mean: 0.0, std: 1.0 };
        let s0 = NoiseInit::of(cfg);
        let layers = cfg.stream_hidden_layers;
        DomQNetModel {
            tag_emb: emb.init([cfg.tag_vocab, cfg.tag_dim], device),
            class_emb: emb.init([cfg.class_vocab, cfg.class_dim], device),
            text_emb: emb.init([cfg.text_vocab, cfg.text_dim], device),
            w_msg: gnn_linear(d, d, device),
            w_reset: gnn_linear(2 * d, d, device),
            w_update: gnn_linear(2 * d, d, device),
            w_new: gnn_linear(2 * d, d, device),
            goal_proj: gnn_linear(cfg.text_dim + cfg.max_goal_tokens, d, device),
            dom_stream: QStream::new(2 * d + gd, cfg.dom_hidden, layers, 1, s0, device),
            token_stream: QStream::new(cfg.text_dim + cfg.max_goal_tokens + gd, cfg.token_hidden, layers, 1, s0, device),
            mode_stream: QStream::new(gd, cfg.mode_hidden, layers, 2, s0, device),
            gnn_steps: cfg.gnn_steps,
            local_text: cfg.local_text_embedding,
            sibling_positions: cfg.sibling_positions,
            goal_attention: cfg.goal_attention,
            goal_concat: cfg.goal_concat,
            text_dim: cfg.text_dim,
            local_dim: d,
            global_dim: gd,
        }
    }

    /// New noise in every noisy layer (each clone of the network draws its own).
    pub fn resample_noise(self, rng: &mut Rng) -> Self {
        DomQNetModel {
            dom_stream: self.dom_stream.resample(rng),
            token_stream: self.token_stream.resample(rng),
            mode_stream: self.mode_stream.resample(rng),
            ..self
        }
    }

    pub fn device(&self) -> Device {
        self.tag_emb.val().device()
    }

    /// Every Q-value of every state in the batch (acting, the next states' bootstrap).
    pub fn forward(&self, p: &Packed, noisy: bool) -> QOut {
        let e = self.encode(p);
        let dev = self.device();
        let plain = dev.clone().without_autodiff();
        let (b, l, g) = (p.b, p.l, p.g);
        // The DOM stream scores the real leaves, [e_local ; e_neighbor ; e_global] each, with the
        // global part shared per state; padding slots read a zero row and are masked.
        let leaf_mask = Tensor::<2>::from_data(TensorData::new(p.leaf_mask.clone(), [b, l]), &plain);
        let dom = if p.leaf_nodes.is_empty() {
            leaf_mask
        } else {
            let q = self.dom_stream_at(&e, &p.leaf_nodes, &p.leaf_state, noisy); // [L, 1]
            Tensor::cat(vec![q, Tensor::zeros([1, 1], &dev)], 0).select(0, ints(&p.leaf_slots, &plain)).reshape([b, l]) + leaf_mask
        };
        // The token stream: [e_token ; e_position ; e_global] per goal token.
        let token = self.token_stream.forward_shared(e.goal_in, e.global.clone(), ints(&p.goal_state, &plain), noisy).reshape([b, g])
            + Tensor::<2>::from_data(TensorData::new(p.goal_mask.clone(), [b, g]), &plain);
        let mode = self.mode_stream.forward(e.global, noisy);
        QOut { dom, token, mode }
    }

    /// The three heads' Q-values of one action per state, each [b, 1]: the same numbers as
    /// `forward`'s tables gathered at `taken` (masks included), but the DOM and token streams run
    /// on the taken leaf and token only. The loss needs no other, and those two streams over every
    /// leaf and token were a fifth of the update's forward and backward.
    pub fn forward_taken(&self, p: &Packed, taken: &[DqnAction], noisy: bool) -> QOut {
        assert_eq!(taken.len(), p.b, "one action per state");
        let e = self.encode(p);
        let plain = self.device().without_autodiff();
        let column = |v: Vec<f32>| Tensor::<2>::from_data(TensorData::new(v.clone(), [v.len(), 1]), &plain);
        let (l, g) = (p.l, p.g);
        let states: Vec<i64> = (0..p.b as i64).collect();
        // A slot that is padding (never stored by the agent) reads its masked value, as `forward`.
        let leaf_nodes: Vec<i64> = taken
            .iter()
            .enumerate()
            .map(|(k, a)| p.leaf_slots[k * l + a.leaf as usize])
            .map(|real| p.leaf_nodes.get(real as usize).copied().unwrap_or(0))
            .collect();
        let dom_mask = column(taken.iter().enumerate().map(|(k, a)| p.leaf_mask[k * l + a.leaf as usize]).collect());
        let dom = if p.leaf_nodes.is_empty() { dom_mask } else { self.dom_stream_at(&e, &leaf_nodes, &states, noisy) + dom_mask };
        let slots: Vec<i64> = taken.iter().enumerate().map(|(k, a)| (k * g + a.token as usize) as i64).collect();
        let token_mask: Vec<f32> = slots.iter().map(|&s| p.goal_mask[s as usize]).collect();
        let token = self.token_stream.forward_shared(e.goal_in.select(0, ints(&slots, &plain)), e.global.clone(), ints(&states, &plain), noisy)
            + column(token_mask);
        let modes: Vec<i64> = taken.iter().map(|a| a.mode as i64).collect();
        let mode = self.mode_stream.forward(e.global, noisy).gather(1, Tensor::<2, Int>::from_data(TensorData::new(modes, [p.b, 1]), &plain));
        QOut { dom, token, mode }
    }

    /// The DOM stream on the compact nodes `nodes`, each with the global embedding of its state in
    /// `state`: [nodes, 1].
    fn dom_stream_at(&self, e: &Encoding, nodes: &[i64], state: &[i64], noisy: bool) -> Tensor<2> {
        let plain = self.device().without_autodiff();
        let rows = ints(nodes, &plain);
        let own = Tensor::cat(vec![e.local_c.clone().select(0, rows.clone()), e.neighbor_c.clone().select(0, rows)], 1);
        self.dom_stream.forward_shared(own, e.global.clone(), ints(state, &plain), noisy)
    }

    /// Local module, gated graph network and global readout (§3.3): everything before the Q
    /// streams.
    fn encode(&self, p: &Packed) -> Encoding {
        let dev = self.device();
        let plain = dev.clone().without_autodiff();
        let ints = |v: &[i64]| ints(v, &plain);
        let floats = |v: &[f32], shape: [usize; 3]| Tensor::<3>::from_data(TensorData::new(v.to_vec(), shape), &plain);
        let (b, v, g) = (p.b, p.v, p.g);
        let n = b * v;
        let (d, gd, dt) = (self.local_dim, self.global_dim, self.text_dim);

        // Text table for this batch: the vocabulary, then one random vector per OOV slot.
        let mut table = self.text_emb.val();
        if p.n_oov > 0 {
            let oov = Tensor::<2>::from_data(TensorData::new(p.oov_vectors.clone(), [p.n_oov, dt]), &plain);
            table = Tensor::cat(vec![table, oov], 0);
        }
        let node_text = table.clone().select(0, ints(&p.texts));
        let goal_text = table.select(0, ints(&p.goal_ids));

        // Goal alignment: max over goal tokens of cos(node text, token).
        let unit = |x: Tensor<2>| {
            let norm = x.clone().square().sum_dim(1).sqrt() + 1e-8;
            x / norm
        };
        let cos = unit(node_text.clone()).reshape([b, v, dt]).matmul(unit(goal_text.clone()).reshape([b, g, dt]).swap_dims(1, 2));
        let cos = cos + floats(&p.goal_mask, [b, 1, g]);
        let align = cos.max_dim(2).reshape([n, 1]).clamp(-1.0, 1.0) * floats(&p.text_valid, [n, 1, 1]).reshape([n, 1]);

        let one_hot = |v: &[f32]| {
            let x = floats(v, [n, 1, 1]).reshape([n, 1]);
            Tensor::cat(vec![x.clone().neg() + 1.0, x], 1)
        };
        let mut parts = vec![self.tag_emb.val().select(0, ints(&p.tags)), self.class_emb.val().select(0, ints(&p.classes))];
        if self.local_text {
            parts.push(node_text);
        }
        parts.extend([align, one_hot(&p.focused), one_hot(&p.tampered)]);
        if self.sibling_positions > 0 {
            parts.push(Tensor::<2>::from_data(TensorData::new(p.sibling.clone(), [n, self.sibling_positions]), &plain));
        }
        let local = Tensor::cat(parts, 1); // [n, d]

        // Gated graph network on the real nodes only (compact rows): m = Σ_neighbours W h; GRU
        // update; T steps.
        let n_real = p.node_rows.len();
        let local_c = if n_real == n { local.clone() } else { local.clone().select(0, ints(&p.node_rows)) };
        let mut h = local_c.clone();
        if !p.edge_src.is_empty() {
            let (src, dst) = (ints(&p.edge_src), ints(&p.edge_dst));
            for _ in 0..self.gnn_steps {
                let msgs = self.w_msg.forward(h.clone()).select(0, src.clone());
                let m = Tensor::<2>::zeros([n_real, d], &dev).select_assign(0, dst.clone(), msgs, IndexingUpdateOp::Add);
                let mh = Tensor::cat(vec![m.clone(), h.clone()], 1);
                let r = sigmoid_keeping_output(self.w_reset.forward(mh.clone()));
                let u = sigmoid_keeping_output(self.w_update.forward(mh));
                let cand = tanh_keeping_output(self.w_new.forward(Tensor::cat(vec![m, r * h.clone()], 1)));
                h = h.clone() + u * (cand - h);
            }
        }
        let neighbor_c = h;
        // Back to the padded layout for the readout; padding rows read a zero row (and are masked).
        let neighbor = if n_real == n {
            neighbor_c.clone()
        } else {
            Tensor::cat(vec![neighbor_c.clone(), Tensor::zeros([1, d], &dev)], 0).select(0, ints(&p.pad_to_node))
        };

        // Global module: max-pooled local and neighbour embeddings, goal attention.
        let node_mask = floats(&p.node_mask, [b, v, 1]);
        let local3 = local.reshape([b, v, d]);
        let neigh3 = neighbor.reshape([b, v, d]);
        let mut globals =
            vec![(local3.clone() + node_mask.clone()).max_dim(1).reshape([b, d]), (neigh3.clone() + node_mask.clone()).max_dim(1).reshape([b, d])];
        let goal_pos = Tensor::<2>::from_data(TensorData::new(p.goal_pos.clone(), [b * g, p.positions]), &plain);
        if self.goal_attention || self.goal_concat {
            let tokens = relu(self.goal_proj.forward(Tensor::cat(vec![goal_text.clone(), goal_pos.clone()], 1)));
            let h_goal = (tokens.reshape([b, g, d]) + floats(&p.goal_mask, [b, g, 1])).max_dim(1).reshape([b, d]).clamp_min(0.0);
            if self.goal_attention {
                let scores = h_goal.clone().reshape([b, 1, d]).matmul(local3.swap_dims(1, 2)) / (d as f64).sqrt();
                let weights = softmax(scores + node_mask.reshape([b, 1, v]), 2);
                globals.push(weights.matmul(neigh3).reshape([b, d]));
            }
            if self.goal_concat {
                globals.push(h_goal);
            }
        }
        let global = Tensor::cat(globals, 1); // [b, gd]
        debug_assert_eq!(global.dims()[1], gd);
        Encoding { local_c, neighbor_c, global, goal_in: Tensor::cat(vec![goal_text, goal_pos], 1) }
    }
}

/// What the Q streams read: per real node its local and neighbour embeddings (compact rows), per
/// state its global embedding, per goal slot its [token embedding ; one-hot position].
struct Encoding {
    local_c: Tensor<2>,
    neighbor_c: Tensor<2>,
    global: Tensor<2>,
    goal_in: Tensor<2>,
}

/// σ(x) whose backward reads the saved output instead of evaluating σ again from x, as burn's
/// own does: value σ(x) + 0, gradient (g·σ)·(1 − σ), burn's expression in burn's order, so the
/// same bits both ways. The GRU's transcendentals were a fifth of the tab's update, half of them
/// in the backward pass.
fn sigmoid_keeping_output(x: Tensor<2>) -> Tensor<2> {
    let fixed = x.clone().detach();
    let s = sigmoid(fixed.clone());
    s.clone() + ((x - fixed) * (s.clone().neg() + 1.0)) * s
}

/// tanh(x) likewise: gradient g·(1 − tanh²), with 1 − tanh² formed as burn's backward forms it.
/// Written t − (x' − x)·slope rather than t + (x − x')·slope so that tanh(−0) stays −0.
fn tanh_keeping_output(x: Tensor<2>) -> Tensor<2> {
    let fixed = x.clone().detach();
    let t = tanh(fixed.clone());
    let slope = t.clone().powi_scalar(2).neg() + 1.0;
    t - (fixed - x) * slope
}

fn ints(v: &[i64], device: &Device) -> Tensor<1, Int> {
    Tensor::<1, Int>::from_data(TensorData::new(v.to_vec(), [v.len()]), device)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom_q_net::batch::pack;
    use crate::dom_q_net::features::{FOCUSED, NO_PARENT, StateFeatures};
    use crate::learn::init::{normal, unseeded};

    fn values(t: Tensor<2>) -> Vec<f32> {
        t.into_data().try_to_vec::<f32>().unwrap()
    }

    fn close(a: &[f32], b: &[f32]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1e-4 * (1.0 + x.abs()))
    }

    const PAPER_NOISE: NoiseInit = NoiseInit { sigma0: 0.5, bias_by_outputs: false };

    #[test]
    fn the_bias_noise_starts_at_sigma0_over_root_inputs_or_outputs() {
        let dev = Device::flex();
        let start = |bias_by_outputs| {
            let layer = unseeded(|| NoisyLinear::new(128, 2, NoiseInit { sigma0: 0.5, bias_by_outputs }, &dev));
            let w: Vec<f32> = layer.w_sigma.val().into_data().try_to_vec().unwrap();
            let b: Vec<f32> = layer.b_sigma.val().into_data().try_to_vec().unwrap();
            (w, b)
        };
        let (w, b) = start(false);
        assert!(w.iter().chain(&b).all(|&s| (s - 0.5 / 128f32.sqrt()).abs() < 1e-6), "Fortunato: σ0/√in everywhere");
        let (w_code, b_code) = start(true);
        assert_eq!(w_code, w, "the weights' noise is the same either way");
        assert!(b_code.iter().all(|&s| (s - 0.5 / 2f32.sqrt()).abs() < 1e-6), "reference code: σ0/√out, got {b_code:?}");
        // The presets: the paper's is Fortunato's, the reference code's preset the code's.
        assert!(!DqnConfig::default().noisy_bias_by_outputs);
        assert!(DqnConfig::reference_code().noisy_bias_by_outputs);
    }

    #[test]
    fn shared_parts_give_the_same_layer_output_as_concatenated_rows() {
        let dev = Device::flex();
        let mut rng = Rng::new(3);
        let layer = unseeded(|| NoisyLinear::new(5, 4, PAPER_NOISE, &dev)).resample(&mut rng);
        let own = normal::<2>([3, 2], &dev);
        let shared = normal::<2>([2, 3], &dev);
        let group = Tensor::<1, Int>::from_data(TensorData::new(vec![1i64, 0, 1], [3]), &dev);
        let rows = Tensor::cat(vec![own.clone(), shared.clone().select(0, group.clone())], 1);
        for noisy in [false, true] {
            let a = values(layer.forward(rows.clone(), noisy));
            let b = values(layer.forward_shared(own.clone(), shared.clone(), group.clone(), noisy));
            assert!(close(&a, &b), "noisy {noisy}: {a:?} vs {b:?}");
        }
    }

    #[test]
    fn a_stream_with_two_hidden_layers_is_in_h_h_out() {
        let dev = Device::flex();
        let mut rng = Rng::new(4);
        let x = normal::<2>([3, 5], &dev);
        let paper = unseeded(|| QStream::new(5, 4, 1, 2, PAPER_NOISE, &dev));
        assert!(paper.deeper.is_empty());
        let code = unseeded(|| QStream::new(5, 4, 2, 2, PAPER_NOISE, &dev)).resample(&mut rng);
        assert_eq!(code.deeper.len(), 1);
        for noisy in [false, true] {
            let h = relu(code.hidden.forward(x.clone(), noisy));
            let h = relu(code.deeper[0].forward(h, noisy));
            let want = values(code.out.forward(h, noisy));
            assert!(close(&values(code.forward(x.clone(), noisy)), &want), "noisy {noisy}");
        }
    }

    #[test]
    fn the_configs_parameter_count_is_the_networks() {
        // `DqnConfig::validate` bounds the network by this count, so it must be the real one.
        let dev = Device::flex();
        let variants = [
            DqnConfig::default(),
            DqnConfig::reference_code(),
            DqnConfig::code_sizes(),
            DqnConfig { goal_attention: false, goal_concat: true, max_goal_tokens: 7, text_vocab: 50, ..DqnConfig::default() },
            DqnConfig { stream_hidden_layers: 3, dom_hidden: 20, ..DqnConfig::default() },
            DqnConfig { sibling_positions: 3, ..DqnConfig::default() },
        ];
        for cfg in variants {
            assert_eq!(unseeded(|| DomQNetModel::new(&cfg, &dev)).num_params() as u64, cfg.num_params(), "{cfg:?}");
        }
    }

    fn page(n: usize, goal: usize) -> StateFeatures {
        StateFeatures {
            tags: (0..n).map(|i| 2 + (i % 5) as u16).collect(),
            classes: vec![1; n],
            texts: (0..n).map(|i| 2 + (i % 7) as u32).collect(),
            flags: (0..n).map(|i| if i == 1 { FOCUSED } else { 0 }).collect(),
            parents: (0..n).map(|i| if i == 0 { NO_PARENT } else { ((i - 1) / 2) as u16 }).collect(),
            leaves: ((n / 2) as u16..n as u16).collect(),
            goal: (0..goal as u32).map(|i| 3 + i).collect(),
            n_oov: 0,
        }
    }

    #[test]
    fn identical_siblings_are_told_apart_only_by_their_places() {
        // focus-text-2: three text boxes under one parent, alike in every feature DOM-Q-Net reads.
        let boxes = StateFeatures {
            tags: vec![2, 3, 3, 3],
            classes: vec![1; 4],
            texts: vec![1; 4],
            flags: vec![0; 4],
            parents: vec![NO_PARENT, 0, 0, 0],
            leaves: vec![1, 2, 3],
            goal: vec![4, 5],
            n_oov: 0,
        };
        let dev = Device::flex();
        for places in [0, 2, 4] {
            let cfg = DqnConfig { dom_hidden: 16, token_hidden: 8, mode_hidden: 8, sibling_positions: places, ..DqnConfig::default() };
            let mut rng = Rng::new(3);
            let model = unseeded(|| DomQNetModel::new(&cfg, &dev)).resample_noise(&mut rng);
            let q = values(model.forward(&pack(&[&boxes], &cfg, &mut rng), false).dom);
            let same = |a: f32, b: f32| (a - b).abs() < 1e-6;
            match places {
                0 => assert!(same(q[0], q[1]) && same(q[1], q[2]), "the paper's features: one value for all three {q:?}"),
                // Two slots: the first box has its own, the second and third share the last.
                2 => assert!(!same(q[0], q[1]) && same(q[1], q[2]), "{q:?}"),
                _ => assert!(!same(q[0], q[1]) && !same(q[1], q[2]) && !same(q[0], q[2]), "{q:?}"),
            }
        }
    }

    #[test]
    fn a_states_q_values_do_not_depend_on_the_rest_of_its_batch() {
        // Padding (to the batch's largest page, most leaves, most goal tokens) must change nothing.
        let dev = Device::flex();
        for (places, noisy) in [(0, false), (0, true), (3, false), (3, true)] {
            let cfg = DqnConfig { dom_hidden: 16, token_hidden: 8, mode_hidden: 8, sibling_positions: places, ..DqnConfig::default() };
            let mut rng = Rng::new(1);
            let model = unseeded(|| DomQNetModel::new(&cfg, &dev)).resample_noise(&mut rng);
            let (small, big, bare) = (page(5, 2), page(13, 4), page(3, 0));
            let alone = model.forward(&pack(&[&small], &cfg, &mut rng), noisy);
            let mixed = model.forward(&pack(&[&big, &small, &bare], &cfg, &mut rng), noisy);
            let row = |t: Tensor<2>, k: usize, len: usize| values(t.slice([k..k + 1, 0..len]));
            assert!(close(&row(alone.dom, 0, 3), &row(mixed.dom.clone(), 1, 3)), "DOM Q");
            assert!(close(&row(alone.token, 0, 2), &row(mixed.token.clone(), 1, 2)), "token Q");
            assert!(close(&row(alone.mode, 0, 2), &row(mixed.mode, 1, 2)), "mode Q");
            let padded = row(mixed.dom, 1, 7);
            assert!(padded[3..].iter().all(|&q| q < -1e8), "padding leaves are masked: {padded:?}");
            assert!(row(mixed.token, 2, 4).iter().all(|&q| q < -1e8), "a state without goal tokens has none to type");
        }
    }

    #[test]
    fn q_values_of_the_taken_actions_and_their_gradients_are_the_full_forwards() {
        // The update's loss reads `forward_taken`; it must be `forward` gathered, down to the
        // gradients that every weight gets, or learning would change.
        use crate::dom_q_net::replay::Mode;
        use burn::optim::GradientsParams;
        let cfg = DqnConfig { dom_hidden: 16, token_hidden: 8, mode_hidden: 8, ..DqnConfig::default() };
        let dev = Device::flex().autodiff();
        let mut rng = Rng::new(2);
        let model = unseeded(|| DomQNetModel::new(&cfg, &dev)).resample_noise(&mut rng);
        let (small, big, bare) = (page(5, 2), page(13, 4), page(3, 0));
        let p = pack(&[&big, &small, &bare], &cfg, &mut rng);
        let taken = [
            DqnAction { leaf: 5, token: 3, mode: Mode::Type },
            DqnAction { leaf: 1, token: 1, mode: Mode::Click },
            DqnAction { leaf: 0, token: 0, mode: Mode::Click },
        ];
        let column = |v: Vec<i64>| Tensor::<2, Int>::from_data(TensorData::new(v.clone(), [v.len(), 1]), &dev);
        let has_goal = Tensor::<2>::from_data(TensorData::new(vec![1.0f32, 1.0, 0.0], [3, 1]), &dev);
        for noisy in [false, true] {
            let full = model.forward(&p, noisy);
            let gathered = [
                full.dom.gather(1, column(taken.iter().map(|a| a.leaf as i64).collect())),
                full.token.gather(1, column(taken.iter().map(|a| a.token as i64).collect())),
                full.mode.gather(1, column(taken.iter().map(|a| a.mode as i64).collect())),
            ];
            let part = model.forward_taken(&p, &taken, noisy);
            let parts = [part.dom, part.token, part.mode];
            for (head, (a, b)) in ["dom", "token", "mode"].iter().zip(gathered.iter().zip(&parts)) {
                assert_eq!(b.dims(), [3, 1], "{head}");
                assert!(close(&values(a.clone()), &values(b.clone())), "{head} noisy {noisy}");
            }
            let loss = |[d, t, m]: [Tensor<2>; 3]| ((d + t * has_goal.clone() + m) * 0.5).sum();
            let g_full = GradientsParams::from_grads(loss(gathered).backward(), &model);
            let g_part = GradientsParams::from_grads(loss(parts).backward(), &model);
            let (a, b) = (gradients(&model, &g_full), gradients(&model, &g_part));
            assert!(a.len() > 10 && a.len() == b.len());
            let mut nonzero = 0;
            for (k, (a, b)) in a.iter().zip(&b).enumerate() {
                assert_eq!(a.is_some(), b.is_some(), "parameter {k} has a gradient in one forward only");
                let (a, b) = (a.clone().unwrap_or_default(), b.clone().unwrap_or_default());
                // Relative to the tensor's largest entry: most entries of a gradient are tiny.
                let scale = a.iter().fold(0f32, |m, x| m.max(x.abs()));
                assert!(
                    a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| (x - y).abs() <= 1e-5 * scale + 1e-9),
                    "gradient of parameter {k} (noisy {noisy}): {a:?} vs {b:?}"
                );
                nonzero += (scale > 0.0) as usize;
            }
            assert!(nonzero > 10, "the loss reaches the weights ({nonzero} parameters)");
        }
    }

    #[test]
    fn gates_that_keep_their_output_give_burns_values_and_gradients_bit_for_bit() {
        // Learning must not change: the same bits as burn's sigmoid and tanh, forward and back.
        let dev = Device::flex().autodiff();
        let xs: Vec<f32> = (0..64).map(|i| (i as f32 - 32.0) * 0.37).chain([0.0, -0.0, 1e-7, 40.0, -40.0]).collect();
        let n = xs.len();
        let x = || Tensor::<2>::from_data(TensorData::new(xs.clone(), [1, n]), &dev).require_grad();
        let upstream = Tensor::<2>::from_data(TensorData::new((0..n).map(|i| 0.3 - i as f32 * 0.011).collect::<Vec<_>>(), [1, n]), &dev);
        let bits = |t: Tensor<2>| t.into_data().try_to_vec::<f32>().unwrap().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        type Gate = fn(Tensor<2>) -> Tensor<2>;
        let pairs: [(&str, Gate, Gate); 2] = [("sigmoid", sigmoid, sigmoid_keeping_output), ("tanh", tanh, tanh_keeping_output)];
        for (name, burns, ours) in pairs {
            let (a, b) = (x(), x());
            let (ya, yb) = (burns(a.clone()), ours(b.clone()));
            assert_eq!(bits(ya.clone().detach()), bits(yb.clone().detach()), "{name} values");
            let ga = a.grad(&(ya * upstream.clone()).sum().backward()).unwrap();
            let gb = b.grad(&(yb * upstream.clone()).sum().backward()).unwrap();
            let ga: Vec<u32> = ga.into_data().try_to_vec::<f32>().unwrap().iter().map(|v| v.to_bits()).collect();
            let gb: Vec<u32> = gb.into_data().try_to_vec::<f32>().unwrap().iter().map(|v| v.to_bits()).collect();
            assert!(ga.iter().any(|&g| f32::from_bits(g) != 0.0), "{name}: the gradient reaches x");
            assert_eq!(ga, gb, "{name} gradients");
        }
    }

    /// Each parameter's gradient, flattened, in the module's order.
    fn gradients(model: &DomQNetModel, grads: &burn::optim::GradientsParams) -> Vec<Option<Vec<f32>>> {
        struct Collect<'a>(&'a burn::optim::GradientsParams, Vec<Option<Vec<f32>>>);
        impl burn::module::ModuleVisitor for Collect<'_> {
            fn visit_float<const D: usize>(&mut self, p: &Param<Tensor<D>>) {
                let g = self.0.get::<D>(p.id).map(|g| g.into_data().try_to_vec::<f32>().unwrap());
                self.1.push(g);
            }
        }
        let mut c = Collect(grads, Vec::new());
        model.visit(&mut c);
        c.1
    }
}

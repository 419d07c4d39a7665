//! The DOM-Q-Net network (§3.3 of the paper): local module, gated graph network, global readout
//! with goal attention, and three factorized Q streams built from noisy layers.

use burn::module::{Initializer, Param};
use burn::nn::{Linear, LinearConfig};
use burn::prelude::*;
use burn::tensor::activation::{relu, sigmoid, softmax, tanh};
use burn::tensor::IndexingUpdateOp;

use super::batch::Packed;
use crate::rng::Rng;
use super::config::DqnConfig;

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
    pub fn new(d_in: usize, d_out: usize, sigma0: f64, device: &Device) -> Self {
        let r = 1.0 / (d_in as f64).sqrt();
        let mu = Initializer::Uniform { min: -r, max: r };
        let sigma = Initializer::Constant { value: sigma0 * r };
        let plain = device.clone().without_autodiff();
        NoisyLinear {
            w_mu: mu.init([d_in, d_out], device),
            w_sigma: sigma.init([d_in, d_out], device),
            b_mu: mu.init([d_out], device),
            b_sigma: sigma.init([d_out], device),
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
            (0..n).map(|_| { let x = rng.normal(); (x.signum() * x.abs().sqrt()) as f32 }).collect()
        };
        self.eps_in = Tensor::from_data(TensorData::new(draw(self.d_in), [self.d_in, 1]), &dev);
        self.eps_out = Tensor::from_data(TensorData::new(draw(self.d_out), [1, self.d_out]), &dev);
        self
    }

    /// With `noisy` false only the means are used (greedy evaluation).
    pub fn forward(&self, x: Tensor<2>, noisy: bool) -> Tensor<2> {
        if !noisy {
            return x.matmul(self.w_mu.val()) + self.b_mu.val().unsqueeze::<2>();
        }
        let w = self.w_mu.val() + self.w_sigma.val() * self.eps_in.clone().matmul(self.eps_out.clone());
        let b = self.b_mu.val() + self.b_sigma.val() * self.eps_out.clone().reshape([self.d_out]);
        x.matmul(w) + b.unsqueeze::<2>()
    }
}

fn gnn_linear(d_in: usize, d_out: usize, device: &Device) -> Linear {
    // The reference initialises its graph layers N(0, 0.02) with zero bias.
    let mut lin = LinearConfig::new(d_in, d_out)
        .with_initializer(Initializer::Normal { mean: 0.0, std: 0.02 })
        .init(device);
    lin.bias = Some(Initializer::Zeros.init([d_out], device));
    lin
}

/// A two-layer noisy MLP: one Q stream.
#[derive(Module, Debug)]
pub struct QStream {
    hidden: NoisyLinear,
    out: NoisyLinear,
}

impl QStream {
    fn new(d_in: usize, hidden: usize, d_out: usize, sigma0: f64, device: &Device) -> Self {
        QStream { hidden: NoisyLinear::new(d_in, hidden, sigma0, device), out: NoisyLinear::new(hidden, d_out, sigma0, device) }
    }
    fn resample(self, rng: &mut Rng) -> Self {
        QStream { hidden: self.hidden.resample(rng), out: self.out.resample(rng) }
    }
    fn forward(&self, x: Tensor<2>, noisy: bool) -> Tensor<2> {
        self.out.forward(relu(self.hidden.forward(x, noisy)), noisy)
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
        let s0 = cfg.noisy_sigma0;
        DomQNetModel {
            tag_emb: emb.init([cfg.tag_vocab, cfg.tag_dim], device),
            class_emb: emb.init([cfg.class_vocab, cfg.class_dim], device),
            text_emb: emb.init([cfg.text_vocab, cfg.text_dim], device),
            w_msg: gnn_linear(d, d, device),
            w_reset: gnn_linear(2 * d, d, device),
            w_update: gnn_linear(2 * d, d, device),
            w_new: gnn_linear(2 * d, d, device),
            goal_proj: gnn_linear(cfg.text_dim + cfg.max_goal_tokens, d, device),
            dom_stream: QStream::new(2 * d + gd, cfg.dom_hidden, 1, s0, device),
            token_stream: QStream::new(cfg.text_dim + cfg.max_goal_tokens + gd, cfg.token_hidden, 1, s0, device),
            mode_stream: QStream::new(gd, cfg.mode_hidden, 2, s0, device),
            gnn_steps: cfg.gnn_steps,
            local_text: cfg.local_text_embedding,
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

    pub fn forward(&self, p: &Packed, noisy: bool) -> QOut {
        let dev = self.device();
        let plain = dev.clone().without_autodiff();
        let ints = |v: &[i64]| Tensor::<1, Int>::from_data(TensorData::new(v.to_vec(), [v.len()]), &plain);
        let floats = |v: &[f32], shape: [usize; 3]| Tensor::<3>::from_data(TensorData::new(v.to_vec(), shape), &plain);
        let (b, v, l, g) = (p.b, p.v, p.l, p.g);
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
        let mut parts = vec![
            self.tag_emb.val().select(0, ints(&p.tags)),
            self.class_emb.val().select(0, ints(&p.classes)),
        ];
        if self.local_text {
            parts.push(node_text);
        }
        parts.extend([align, one_hot(&p.focused), one_hot(&p.tampered)]);
        let local = Tensor::cat(parts, 1); // [n, d]

        // Gated graph network: m = Σ_neighbours W h; GRU update; T steps.
        let mut h = local.clone();
        if !p.edge_src.is_empty() {
            let (src, dst) = (ints(&p.edge_src), ints(&p.edge_dst));
            for _ in 0..self.gnn_steps {
                let msgs = self.w_msg.forward(h.clone()).select(0, src.clone());
                let m = Tensor::<2>::zeros([n, d], &dev).select_assign(0, dst.clone(), msgs, IndexingUpdateOp::Add);
                let mh = Tensor::cat(vec![m.clone(), h.clone()], 1);
                let r = sigmoid(self.w_reset.forward(mh.clone()));
                let u = sigmoid(self.w_update.forward(mh));
                let cand = tanh(self.w_new.forward(Tensor::cat(vec![m, r * h.clone()], 1)));
                h = h.clone() + u * (cand - h);
            }
        }
        let neighbor = h;

        // Global module: max-pooled local and neighbour embeddings, goal attention.
        let node_mask = floats(&p.node_mask, [b, v, 1]);
        let local3 = local.clone().reshape([b, v, d]);
        let neigh3 = neighbor.clone().reshape([b, v, d]);
        let mut globals = vec![
            (local3.clone() + node_mask.clone()).max_dim(1).reshape([b, d]),
            (neigh3.clone() + node_mask.clone()).max_dim(1).reshape([b, d]),
        ];
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

        // Q streams.
        let per = |x: Tensor<2>, k: usize| x.reshape([b, 1, gd]).expand([b, k, gd]).reshape([b * k, gd]);
        let leaf_rows = ints(&p.leaf_rows);
        let dom_in = Tensor::cat(
            vec![local.select(0, leaf_rows.clone()), neighbor.select(0, leaf_rows), per(global.clone(), l)],
            1,
        );
        let dom = self.dom_stream.forward(dom_in, noisy).reshape([b, l])
            + Tensor::<2>::from_data(TensorData::new(p.leaf_mask.clone(), [b, l]), &plain);
        let tok_in = Tensor::cat(vec![goal_text, goal_pos, per(global.clone(), g)], 1);
        let token = self.token_stream.forward(tok_in, noisy).reshape([b, g])
            + Tensor::<2>::from_data(TensorData::new(p.goal_mask.clone(), [b, g]), &plain);
        let mode = self.mode_stream.forward(global, noisy);
        QOut { dom, token, mode }
    }
}

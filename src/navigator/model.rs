//! The navigator network (after Gur et al. 2019 and the reference's `DQNWebLSTM`, §3.6):
//! elements from the mean embeddings of their 5 attributes and 8 features, a forward LSTM over
//! the elements in ref order (optionally a backward one beside it), fields from their mean token
//! embedding; scores over (field, element) pairs from their dot products plus a per-element
//! action type, masked to the open choices. The A2C head reads the scores as a policy's logits
//! and takes the value from the element marginal used as attention over the elements; the DQN
//! head reads the same scores as Q-values.

use burn::module::{Initializer, Param};
use burn::nn::{Linear, LinearConfig};
use burn::prelude::*;
use burn::tensor::IndexingUpdateOp;
use burn::tensor::activation::{log_softmax, relu};

use super::config::NavigatorConfig;
use super::features::{ATTRIBUTES, ELEMENT_FEATURES};
use super::lstm::ElementLstm;
pub use super::padded::Padded;
use crate::learn::embedding_bag::{Bags, bag_means};
use crate::learn::fused_ops;

/// Added to the logits of closed choices: their probability is exp(−1e9) = 0.
pub const CLOSED: f32 = -1e9;

#[derive(Module, Debug)]
pub struct NavigatorModel {
    /// One vocabulary for every attribute and the fields, as the reference.
    embedding: Param<Tensor<2>>,
    /// Concatenated attribute means (5 × embedding) → latent, ReLU.
    element_mlp: Linear,
    /// Field mean embedding → latent, ReLU.
    field_mlp: Linear,
    /// latent units, or latent / 2 when `lstm_backward` is there.
    lstm: ElementLstm,
    /// The BiLSTM option's backward direction (latent / 2 units).
    lstm_backward: Option<ElementLstm>,
    /// Element encoding → [set, click] scores.
    action_type: Linear,
    value_hidden: Linear,
    value_out: Linear,
    embedding_dim: usize,
    latent_dim: usize,
}

/// The network's scores for a batch before any head reads them.
struct Scores {
    /// [b, f·e + e], CLOSED added to closed choices.
    masked: Tensor<2>,
    /// [b, e, latent]: the element encodings.
    dom: Tensor<3>,
}

/// What the network gives for a batch.
#[derive(Debug, Clone)]
pub struct PolicyOut {
    /// [b, f·e + e] log-probabilities (closed choices about −1e9).
    pub log_probs: Tensor<2>,
    /// [b].
    pub value: Tensor<1>,
}

impl NavigatorModel {
    pub fn new(cfg: &NavigatorConfig, device: &Device) -> Self {
        let (d, l) = (cfg.embedding_dim, cfg.latent_dim);
        let emb = Initializer::Normal { mean: 0.0, std: 1.0 / (d as f64).sqrt() };
        let per_direction = if cfg.bidirectional { l / 2 } else { l };
        NavigatorModel {
            embedding: emb.init([cfg.vocab_cap, d], device),
            element_mlp: LinearConfig::new(ATTRIBUTES * d, l).init(device),
            field_mlp: LinearConfig::new(d, l).init(device),
            lstm: ElementLstm::new(l + ELEMENT_FEATURES, per_direction, device),
            lstm_backward: cfg.bidirectional.then(|| ElementLstm::new(l + ELEMENT_FEATURES, l / 2, device)),
            action_type: LinearConfig::new(l, 2).init(device),
            value_hidden: LinearConfig::new(l, l).init(device),
            value_out: LinearConfig::new(l, 1).init(device),
            embedding_dim: d,
            latent_dim: l,
        }
    }

    pub fn device(&self) -> Device {
        self.embedding.val().device()
    }

    /// Mean embedding of each group of tokens: [groups, embedding].
    fn means(&self, tokens: &[i64], groups: &[i64], counts: &[f32], plain: &Device) -> Tensor<2> {
        self.means_by(tokens, groups, counts, plain, fused_ops(&self.device()))
    }

    /// [`Self::means`] as one fused operation (the CPU backend) or through the tensor API.
    fn means_by(&self, tokens: &[i64], groups: &[i64], counts: &[f32], plain: &Device, fused: bool) -> Tensor<2> {
        let dev = self.device();
        let n = counts.len();
        let d = self.embedding_dim;
        if !tokens.is_empty() && fused {
            let idx = |v: &[i64]| v.iter().map(|&x| x as usize).collect();
            return bag_means(self.embedding.val(), Bags { tokens: idx(tokens), groups: idx(groups), counts: counts.to_vec() });
        }
        let sum = if tokens.is_empty() {
            Tensor::<2>::zeros([n, d], &dev)
        } else {
            let ints = |v: &[i64]| Tensor::<1, Int>::from_data(TensorData::new(v.to_vec(), [v.len()]), plain);
            let rows = self.embedding.val().select(0, ints(tokens));
            Tensor::<2>::zeros([n, d], &dev).select_assign(0, ints(groups), rows, IndexingUpdateOp::Add)
        };
        sum / Tensor::<2>::from_data(TensorData::new(counts.to_vec(), [n, 1]), plain)
    }

    /// The element encodings, dense: every state run over all e slots (the reference the packed
    /// pass is tested against).
    #[cfg(test)]
    pub fn encode_elements(&self, x: Tensor<3>, lens: &[usize]) -> Tensor<3> {
        use super::lstm::reverse_within;
        let fwd = self.lstm.forward(x.clone());
        match &self.lstm_backward {
            None => fwd,
            Some(back) => {
                let bwd = reverse_within(back.forward(reverse_within(x, lens)), lens);
                Tensor::cat(vec![fwd, bwd], 2)
            }
        }
    }

    /// The element encodings: [b, e, latent], the forward LSTM's outputs, or with the BiLSTM
    /// option the forward and backward halves side by side; zero past each state's elements.
    fn encode_packed(&self, enc: Tensor<2>, p: &Padded) -> Tensor<3> {
        let fwd = self.lstm.forward_packed(enc.clone(), p, false);
        match &self.lstm_backward {
            None => fwd,
            Some(back) => Tensor::cat(vec![fwd, back.forward_packed(enc, p, true)], 2),
        }
    }

    fn scores(&self, p: &Padded) -> Scores {
        let plain = self.device().without_autodiff();
        let (b, e, f, l) = (p.b, p.e, p.f, self.latent_dim);

        let attrs = self.means(&p.el_tokens, &p.el_groups, &p.el_counts, &plain).reshape([p.distinct, ATTRIBUTES * self.embedding_dim]);
        let dom = self.encode_packed(relu(self.element_mlp.forward(attrs)), p); // [b, e, l]

        let fields = relu(self.field_mlp.forward(self.means(&p.fd_tokens, &p.fd_groups, &p.fd_counts, &plain))).reshape([b, f, l]);
        let pair = fields.matmul(dom.clone().swap_dims(1, 2)); // [b, f, e]
        let kind = self.action_type.forward(dom.clone()); // [b, e, 2]
        let set_kind = kind.clone().slice([0..b, 0..e, 0..1]).reshape([b, 1, e]);
        let click = kind.slice([0..b, 0..e, 1..2]).reshape([b, e]);
        let set = (pair + set_kind).reshape([b, f * e]);
        let mask = Tensor::<2>::from_data(TensorData::new(p.mask.clone(), [b, f * e + e]), &plain);
        Scores { masked: Tensor::cat(vec![set, click], 1) + mask, dom }
    }

    /// The DQN head: Q of every choice, [b, f·e + e] (the reference's Q[f, e] = ⟨dom_e, prof_f⟩
    /// plus the element's action-type term; a click is one choice per element, not one per
    /// field). Closed choices are about CLOSED, so a max or argmax never picks them.
    pub fn q_values(&self, p: &Padded) -> Tensor<2> {
        self.scores(p).masked
    }

    /// The A2C head: the policy (a softmax over the open choices' scores) and the value.
    pub fn forward(&self, p: &Padded) -> PolicyOut {
        let (b, e, f, l) = (p.b, p.e, p.f, self.latent_dim);
        let Scores { masked, dom } = self.scores(p);
        let log_probs = log_softmax(masked, 1);

        // The element marginal (not differentiated: the critic does not steer the policy) as
        // attention over the element encodings.
        let probs = log_probs.clone().detach().exp();
        let on_el = probs.clone().slice([0..b, 0..f * e]).reshape([b, f, e]).sum_dim(1).reshape([b, e]) + probs.slice([0..b, f * e..f * e + e]);
        let context = (on_el.reshape([b, e, 1]) * dom).sum_dim(1).reshape([b, l]);
        let value = self.value_out.forward(relu(self.value_hidden.forward(context))).reshape([b]);
        PolicyOut { log_probs, value }
    }

    /// Number of trained values.
    pub fn parameter_count(&self) -> usize {
        self.num_params()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::init::{normal, unseeded};
    use crate::learn::vocab::Vocab;
    use crate::navigator::features::{EpisodeMemory, NavAction, encode, tests::observation};

    #[test]
    fn the_configs_parameter_count_is_the_networks() {
        use crate::navigator::config::NavigatorConfig;
        for cfg in [
            NavigatorConfig::default(),
            NavigatorConfig { bidirectional: true, vocab_cap: 77, embedding_dim: 9, latent_dim: 14, ..NavigatorConfig::default() },
        ] {
            let m = unseeded(|| NavigatorModel::new(&cfg, &Device::flex()));
            assert_eq!(cfg.num_params(), m.parameter_count() as u64, "{cfg:?}");
        }
    }

    #[test]
    fn closed_choices_get_no_probability_and_open_ones_sum_to_one() {
        let cfg = NavigatorConfig { vocab_cap: 50, ..NavigatorConfig::default() };
        let dev = Device::flex();
        let model = unseeded(|| NavigatorModel::new(&cfg, &dev));
        let mut vocab = Vocab::new(cfg.vocab_cap);
        let mut mem = EpisodeMemory::default();
        let s0 = encode(&observation(), &cfg, &mut vocab, true, &mut mem);
        mem.acted(&s0, NavAction::Set { field: 1, element: 1 });
        mem.acted(&s0, NavAction::Click { element: 0 });
        let s1 = encode(&observation(), &cfg, &mut vocab, true, &mut mem);
        let p = Padded::new(&[&s0, &s1]);
        let out = model.forward(&p);
        let lp: Vec<f32> = out.log_probs.into_data().try_to_vec().unwrap();
        let w = p.width();
        for (si, s) in [&s0, &s1].iter().enumerate() {
            let row = &lp[si * w..(si + 1) * w];
            let mut total = 0.0;
            for (i, &lp) in row.iter().enumerate() {
                let a = p.choice(i);
                if s.is_open(a) {
                    total += lp.exp();
                } else {
                    assert!(lp < -1e8, "closed {a:?} has log-prob {lp}");
                }
            }
            assert!((total - 1.0).abs() < 1e-5, "{total}");
        }
        let v: Vec<f32> = out.value.into_data().try_to_vec().unwrap();
        assert_eq!(v.len(), 2);
        assert!(v.iter().all(|x| x.is_finite()));
    }

    /// A batch of states with these element counts (unsorted, ties, an empty one), random
    /// distinct rows and features.
    fn ragged(lens: &[usize], distinct: usize) -> Padded {
        let mut r = crate::rng::Rng::new(3);
        let (b, e) = (lens.len(), lens.iter().copied().max().unwrap());
        Padded {
            b,
            e,
            f: 1,
            lens: lens.to_vec(),
            distinct,
            el_rows: (0..b * e).map(|_| r.below(distinct) as i64).collect(),
            el_tokens: vec![],
            el_groups: vec![],
            el_counts: vec![],
            fd_tokens: vec![],
            fd_groups: vec![],
            fd_counts: vec![],
            features: (0..b * e * ELEMENT_FEATURES).map(|_| r.next_f64() as f32 - 0.5).collect(),
            mask: vec![],
        }
    }

    #[test]
    fn the_packed_lstm_equals_the_dense_one_on_each_states_own_elements_values_and_gradients() {
        let lens = [3usize, 5, 1, 0, 4, 5];
        let p = ragged(&lens, 7);
        let (b, e) = (p.b, p.e);
        for bidirectional in [false, true] {
            let cfg = NavigatorConfig { vocab_cap: 50, latent_dim: 8, embedding_dim: 6, bidirectional, ..NavigatorConfig::default() };
            let dev = Device::flex().autodiff();
            let plain = Device::flex();
            let model = unseeded(|| NavigatorModel::new(&cfg, &dev));
            let enc = normal::<2>([7, 8], &dev);
            // Weights of each output: random on a state's own elements, zero past them.
            let mut r = crate::rng::Rng::new(9);
            let weights: Vec<f32> = (0..b * e * 8).map(|i| if (i / 8) % e < lens[i / 8 / e] { r.next_f64() as f32 - 0.5 } else { 0.0 }).collect();
            let weights = Tensor::<3>::from_data(TensorData::new(weights, [b, e, 8]), &plain);

            let rows = Tensor::<1, Int>::from_data(TensorData::new(p.el_rows.clone(), [b * e]), &plain);
            let feats = Tensor::<2>::from_data(TensorData::new(p.features.clone(), [b * e, ELEMENT_FEATURES]), &plain);
            let x = Tensor::cat(vec![enc.clone().select(0, rows), feats], 1).reshape([b, e, 8 + ELEMENT_FEATURES]);
            let dense = model.encode_elements(x, &lens);
            let packed = model.encode_packed(enc, &p);
            let vec = |t: Tensor<3>| t.into_data().try_to_vec::<f32>().unwrap();
            let (d, k) = (vec(dense.clone()), vec(packed.clone()));
            for (i, (x, y)) in d.iter().zip(&k).enumerate() {
                let (s, t) = (i / 8 / e, (i / 8) % e);
                if t < lens[s] {
                    assert!((x - y).abs() < 1e-5, "state {s} element {t}: dense {x}, packed {y} (bidirectional {bidirectional})");
                } else {
                    assert_eq!(*y, 0.0, "past a state's elements the packed pass gives 0");
                }
            }
            let grads_of = |out: Tensor<3>| {
                let g = (out * weights.clone()).sum().backward();
                let gp = burn::optim::GradientsParams::from_grads(g, &model);
                let lstm = &model.lstm;
                let read = |w: &Param<Tensor<2>>| gp.get::<2>(w.id).unwrap().into_data().try_to_vec::<f32>().unwrap();
                [read(&lstm.w_x.weight), read(&lstm.w_h.weight)]
            };
            for (a, b) in grads_of(dense).iter().zip(&grads_of(packed)) {
                for (x, y) in a.iter().zip(b) {
                    assert!((x - y).abs() < 1e-4, "gradient: dense {x}, packed {y} (bidirectional {bidirectional})");
                }
            }
        }
    }

    #[test]
    fn the_fused_recurrence_equals_the_stepped_one_values_and_gradients() {
        // The CPU path (one operation, backward by hand) against burn's autodiff through the
        // same LSTM stepped in the tensor API: outputs, and the gradients of the weights and of
        // the element encodings, both directions, ragged states with empty ones.
        for lens in [vec![3usize, 5, 1, 0, 4, 5], vec![0, 2], vec![1]] {
            let p = ragged(&lens, 7);
            let (b, e) = (p.b, p.e);
            for reverse in [false, true] {
                let cfg = NavigatorConfig { vocab_cap: 50, latent_dim: 8, embedding_dim: 6, ..NavigatorConfig::default() };
                let dev = Device::flex().autodiff();
                let model = unseeded(|| NavigatorModel::new(&cfg, &dev));
                let enc = normal::<2>([7, 8], &dev).require_grad();
                let mut r = crate::rng::Rng::new(11);
                let weights: Vec<f32> = (0..b * e * 8).map(|_| r.next_f64() as f32 - 0.5).collect();
                let weights = Tensor::<3>::from_data(TensorData::new(weights, [b, e, 8]), &Device::flex());
                let run = |fused: bool| {
                    let lstm = &model.lstm;
                    let out = if fused { lstm.forward_fused(enc.clone(), &p, reverse) } else { lstm.forward_stepped(enc.clone(), &p, reverse) };
                    let values: Vec<f32> = out.clone().into_data().try_to_vec().unwrap();
                    let g = (out * weights.clone()).sum().backward();
                    let read = |t: Option<Tensor<2>>| t.map(|t| t.into_data().try_to_vec::<f32>().unwrap());
                    let grads = [read(enc.grad(&g)), read(lstm.w_x.weight.val().grad(&g)), read(lstm.w_h.weight.val().grad(&g))];
                    (values, grads)
                };
                let ((fv, fg), (sv, sg)) = (run(true), run(false));
                assert_eq!(fv.len(), sv.len());
                for (x, y) in fv.iter().zip(&sv) {
                    assert!((x - y).abs() < 1e-5, "output: fused {x}, stepped {y} ({lens:?}, reverse {reverse})");
                }
                for (k, (a, b)) in fg.iter().zip(&sg).enumerate() {
                    match (a, b) {
                        (Some(a), Some(b)) => {
                            assert_eq!(a.len(), b.len());
                            for (x, y) in a.iter().zip(b) {
                                assert!((x - y).abs() < 1e-4, "gradient {k}: fused {x}, stepped {y} ({lens:?}, reverse {reverse})");
                            }
                        }
                        _ => panic!("gradient {k} on one path only ({lens:?}, reverse {reverse})"),
                    }
                }
            }
        }
    }

    #[test]
    fn the_fused_bag_means_equal_the_tensor_apis_values_and_gradients() {
        let cfg = NavigatorConfig { vocab_cap: 20, embedding_dim: 6, ..NavigatorConfig::default() };
        let dev = Device::flex().autodiff();
        let plain = Device::flex();
        let model = unseeded(|| NavigatorModel::new(&cfg, &dev));
        // Groups of 3, 1, 0 and 2 tokens (a repeated token; an empty group divides by its count, 1).
        let (tokens, groups, counts) = (vec![4i64, 7, 4, 19, 0, 3], vec![0i64, 0, 0, 1, 3, 3], vec![3.0f32, 1.0, 1.0, 2.0]);
        let weights = normal::<2>([4, 6], &plain);
        let run = |fused: bool| {
            let out = model.means_by(&tokens, &groups, &counts, &plain, fused);
            let values: Vec<f32> = out.clone().into_data().try_to_vec().unwrap();
            let g = (out * weights.clone()).sum().backward();
            (values, model.embedding.val().grad(&g).unwrap().into_data().try_to_vec::<f32>().unwrap())
        };
        let ((fv, fg), (tv, tg)) = (run(true), run(false));
        assert_eq!(fv, tv, "the same sums in the same order");
        assert_eq!(fg.len(), tg.len());
        for (x, y) in fg.iter().zip(&tg) {
            assert!((x - y).abs() <= 1e-6 * y.abs().max(1.0), "gradient: fused {x}, tensor API {y}");
        }
        assert!(fv[2 * 6..3 * 6].iter().all(|&x| x == 0.0), "an empty group's mean is 0");
        assert!(fg[4 * 6..5 * 6].iter().any(|&x| x != 0.0) && fg[5 * 6..6 * 6].iter().all(|&x| x == 0.0), "only read rows get gradients");
    }

    #[test]
    fn the_lstm_reads_elements_in_order_only_forward() {
        // Padding after a state's elements cannot change its earlier outputs: a forward LSTM.
        let cfg = NavigatorConfig { vocab_cap: 50, latent_dim: 8, embedding_dim: 6, ..NavigatorConfig::default() };
        let dev = Device::flex();
        let model = unseeded(|| NavigatorModel::new(&cfg, &dev));
        let x = normal::<3>([1, 5, 8 + ELEMENT_FEATURES], &dev);
        let short = model.lstm.forward(x.clone().slice([0..1, 0..3, 0..16]));
        let long = model.lstm.forward(x).slice([0..1, 0..3, 0..8]);
        let (a, b): (Vec<f32>, Vec<f32>) = (short.into_data().try_to_vec().unwrap(), long.into_data().try_to_vec().unwrap());
        for (x, y) in a.iter().zip(&b) {
            assert!((x - y).abs() < 1e-6);
        }
    }

    #[test]
    fn the_bilstm_reads_elements_both_ways_with_the_same_width() {
        let cfg = NavigatorConfig { vocab_cap: 50, latent_dim: 8, embedding_dim: 6, bidirectional: true, ..NavigatorConfig::default() };
        let dev = Device::flex();
        let model = unseeded(|| NavigatorModel::new(&cfg, &dev));
        let d_in = 8 + ELEMENT_FEATURES;
        let x = normal::<3>([1, 5, d_in], &dev);
        let full = model.encode_elements(x.clone(), &[5]);
        assert_eq!(full.dims(), [1, 5, 8], "forward and backward halves give latent_dim values");
        let vec = |t: Tensor<3>| t.into_data().try_to_vec::<f32>().unwrap();
        let differs = |a: &[f32], b: &[f32]| a.iter().zip(b).any(|(x, y)| (x - y).abs() > 1e-5);
        // Change only the last element: the first element's backward half changes (it has read
        // the last one), its forward half does not.
        let last_changed = Tensor::cat(vec![x.clone().slice([0..1, 0..4, 0..d_in]), x.clone().slice([0..1, 4..5, 0..d_in]).mul_scalar(-2.0)], 1);
        let other = model.encode_elements(last_changed, &[5]);
        let (a, b) = (vec(full.clone().slice([0..1, 0..1, 0..8])), vec(other.slice([0..1, 0..1, 0..8])));
        assert!(!differs(&a[..4], &b[..4]), "forward half of element 0 reads only element 0");
        assert!(differs(&a[4..], &b[4..]), "backward half of element 0 reads the elements after it");
        // Change only the first element: the last element's forward half changes, its backward
        // half does not.
        let first_changed = Tensor::cat(vec![x.clone().slice([0..1, 0..1, 0..d_in]).mul_scalar(-2.0), x.clone().slice([0..1, 1..5, 0..d_in])], 1);
        let other = model.encode_elements(first_changed, &[5]);
        let (a, b) = (vec(full.clone().slice([0..1, 4..5, 0..8])), vec(other.slice([0..1, 4..5, 0..8])));
        assert!(differs(&a[..4], &b[..4]), "forward half of the last element reads the ones before it");
        assert!(!differs(&a[4..], &b[4..]), "backward half of the last element reads only itself");
        // Padding after a state's own elements changes none of its outputs, in either direction.
        let padded = Tensor::cat(vec![x.clone().slice([0..1, 0..3, 0..d_in]), Tensor::zeros([1, 2, d_in], &dev)], 1);
        let short = model.encode_elements(x.slice([0..1, 0..3, 0..d_in]), &[3]);
        let long = model.encode_elements(padded, &[3]).slice([0..1, 0..3, 0..8]);
        assert!(!differs(&vec(short), &vec(long)), "padding is never read");
    }

    #[test]
    fn the_bilstm_network_gives_the_same_shapes_and_a_proper_policy() {
        let cfg = NavigatorConfig { vocab_cap: 50, bidirectional: true, ..NavigatorConfig::default() };
        let dev = Device::flex();
        let model = unseeded(|| NavigatorModel::new(&cfg, &dev));
        let uni = unseeded(|| NavigatorModel::new(&NavigatorConfig { bidirectional: false, ..cfg.clone() }, &dev));
        // Two LSTMs of half the width: fewer recurrent weights, the rest the same.
        assert!(model.parameter_count() < uni.parameter_count());
        let mut vocab = Vocab::new(cfg.vocab_cap);
        let s = encode(&observation(), &cfg, &mut vocab, true, &mut EpisodeMemory::default());
        let p = Padded::new(&[&s]);
        let out = model.forward(&p);
        assert_eq!(out.log_probs.dims(), [1, p.width()]);
        let total: f32 = out.log_probs.exp().sum().into_scalar();
        assert!((total - 1.0).abs() < 1e-5);
        assert_eq!(model.q_values(&p).dims(), [1, p.width()]);
    }

    #[test]
    fn parameter_count_is_of_the_papers_order() {
        // AEG App. A.12: 104,501 parameters. Ours with a 500-token vocabulary (the embedding
        // table is most of it and grows with the cap).
        let cfg = NavigatorConfig { vocab_cap: 500, ..NavigatorConfig::default() };
        let model = unseeded(|| NavigatorModel::new(&cfg, &Device::flex()));
        let n = model.parameter_count();
        assert!((95_000..115_000).contains(&n), "{n}");
    }
}

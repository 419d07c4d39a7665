//! DOMNet, WGE's neural policy π_n (§5 and App. C of Liu et al., 2018; the authors'
//! `wob_policy.py` as reference-implementations.md §2.5 records it), acting in our action
//! vocabulary: click an element, or type one of the instruction's field values into it.
//!
//! The embedder and the baseline follow the authors' code by default and the paper (§5) as
//! options (`NeuralConfig::paper()`): spatial neighbours summed or averaged, tree neighbours through an
//! affine map then max-pooled or through Linear(sum), goal matching by the summed embeddings of
//! the element's goal words or by field buckets, A2C's critic or a constant baseline.
//!
//! Where ours differs from both:
//! - words get learned embeddings (grown online, `NeuralConfig::word_vocab`) by default; with
//!   `WordEmbedding::Glove6b50d` the words of the shipped table read its GloVe 50-d vectors, held
//!   fixed (the code: frozen GloVe-100d, which no registry package ships), the rest learned ones;
//! - the value embedding has a fifth kind, non-empty text, beside true / false / none / "";
//! - an element without text of its own but with a typed value reads the value as its text (what a
//!   person sees in the field), so the policy can tell a filled field from an empty one;
//! - colours come from the observation's computed `fg_color`/`bg_color`; pages that give none (the
//!   native simulator) read transparent black, all zeros;
//! - a task without structured fields gets one goal unit, ("utterance", the utterance); with
//!   `NeuralConfig::utterance_goal` (§5's natural-language goals) the units are the utterance
//!   and its spans, whatever fields the page gives (`utterance_units`).

use burn::module::{Initializer, Param};
use burn::nn::{BiLstm, BiLstmConfig, Linear, LinearConfig};
use burn::prelude::*;
use burn::tensor::activation::{log_softmax, relu, softmax, tanh};

use crate::env::Action;

use super::domnet_config::{Baseline, COLOUR_DIMS, GoalMatch, NeuralConfig, POSITION_DIMS, TreePool, VALUE_KINDS};

/// Masked logits hold about this.
const NEG: f32 = -1e9;

mod features;
pub use features::{DomNetInput, DomNetVocabs, featurize, key_vocab, utterance_units};

/// v·tanh(W_h H + W_s s): additive attention, the code's form for every attention.
#[derive(Module, Debug)]
pub struct Additive {
    w_h: Linear,
    w_s: Linear,
    v: Linear,
}

impl Additive {
    fn new(d_h: usize, d_s: usize, d_a: usize, device: &Device) -> Self {
        Additive {
            w_h: LinearConfig::new(d_h, d_a).with_bias(false).init(device),
            w_s: LinearConfig::new(d_s, d_a).init(device),
            v: LinearConfig::new(d_a, 1).with_bias(false).init(device),
        }
    }
    /// Scores [m, n] of memory `h` [n, d_h] for queries `s` [m, d_s].
    fn scores(&self, h: Tensor<2>, s: Tensor<2>) -> Tensor<2> {
        let [n, _] = h.dims();
        let m = s.dims()[0];
        let hk = self.w_h.forward(h).unsqueeze_dim::<3>(0); // [1, n, a]
        let sk = self.w_s.forward(s).unsqueeze_dim::<3>(1); // [m, 1, a]
        let e = tanh(hk + sk); // [m, n, a]
        let a = e.dims()[2];
        self.v.forward(e.reshape([m * n, a])).reshape([m, n])
    }
}

#[derive(Module, Debug)]
pub struct DomNet {
    word_emb: Param<Tensor<2>>,
    tag_emb: Param<Tensor<2>>,
    class_emb: Param<Tensor<2>>,
    value_emb: Param<Tensor<2>>,
    tampered_emb: Param<Tensor<2>>,
    /// The field buckets' alignment vectors (`GoalMatch::FieldBuckets` only).
    align_emb: Option<Param<Tensor<2>>>,
    encoder: BiLstm,
    /// One map per depth k: of each tree neighbour then max-pooled (`TreePool::AffineMax`), or of
    /// their sum (`TreePool::LinearSum`).
    tree: Vec<Linear>,
    dom_state: Additive,
    /// The learned NULL unit sentinel attention can rest on, and the goal heads.
    sentinel: Param<Tensor<2>>,
    goal_heads: Vec<Additive>,
    dom_heads: Vec<Additive>,
    head_mix: Linear,
    ctx_elem: Linear,
    ctx_state: Linear,
    mode: Linear,
    field: Additive,
    /// V(s) from the state context (`Baseline::Critic`).
    critic: Option<Critic>,
    tree_max: bool,
    text_dim: usize,
    word_dim: usize,
    element_dim: usize,
}

/// A2C's value head: V(s) = Linear(ReLU(Linear(state context))) (Fig. 5: an MLP of the state
/// context; its hidden size is the chosen element's context's, 96).
#[derive(Module, Debug)]
pub struct Critic {
    hidden: Linear,
    out: Linear,
}

/// DOMNet's distributions for one state, as logs.
#[derive(Debug, Clone)]
pub struct DomNetOut {
    /// [n]: log p(element); elements that cannot be acted on hold about −1e9.
    pub elem: Tensor<1>,
    /// [n, 2]: log p(click), log p(type) given the element (type is impossible, about −1e9,
    /// where the element takes no text).
    pub mode: Tensor<2>,
    /// [n, F]: log p(field value) given the element.
    pub field: Tensor<2>,
    /// [1]: the critic's V(s), when DOMNet has one.
    pub value: Option<Tensor<1>>,
}

impl DomNet {
    pub fn new(cfg: &NeuralConfig, device: &Device) -> Self {
        let emb = Initializer::Normal { mean: 0.0, std: 1.0 };
        let (td, fd, ed, ad) = (cfg.text_dim(), cfg.field_dim(), cfg.element_dim(), cfg.attn_dim);
        let goal_ctx = cfg.goal_heads * fd;
        let state = ed + goal_ctx;
        DomNet {
            word_emb: emb.init([cfg.word_vocab, cfg.word_dim], device),
            tag_emb: emb.init([cfg.tag_vocab, cfg.tag_dim], device),
            class_emb: emb.init([cfg.class_vocab, cfg.class_dim], device),
            value_emb: emb.init([VALUE_KINDS, cfg.value_dim], device),
            tampered_emb: emb.init([2, cfg.tampered_dim], device),
            align_emb: (cfg.goal_match == GoalMatch::FieldBuckets)
                .then(|| Initializer::Normal { mean: 0.0, std: 0.1 }.init([cfg.align_rows(), cfg.align_dim], device)),
            encoder: BiLstmConfig::new(cfg.word_dim, cfg.lstm_hidden, true).with_batch_first(true).init(device),
            tree: cfg.tree_depths.iter().map(|_| LinearConfig::new(cfg.aligned_dim(), cfg.tree_dim).init(device)).collect(),
            dom_state: Additive::new(ed, ed, ad, device),
            sentinel: Initializer::Normal { mean: 0.0, std: 0.1 }.init([1, fd], device),
            goal_heads: (0..cfg.goal_heads).map(|_| Additive::new(fd, ed, ad, device)).collect(),
            dom_heads: (0..cfg.dom_heads).map(|_| Additive::new(ed, state, ad, device)).collect(),
            head_mix: LinearConfig::new(goal_ctx, cfg.dom_heads).init(device),
            ctx_elem: LinearConfig::new(ed, cfg.ctx_dim).init(device),
            ctx_state: LinearConfig::new(state, cfg.ctx_dim).with_bias(false).init(device),
            mode: LinearConfig::new(cfg.ctx_dim, 2).init(device),
            field: Additive::new(fd, cfg.ctx_dim, ad, device),
            critic: (cfg.baseline_kind == Baseline::Critic)
                .then(|| Critic { hidden: LinearConfig::new(state, cfg.ctx_dim).init(device), out: LinearConfig::new(cfg.ctx_dim, 1).init(device) }),
            tree_max: cfg.tree_pool == TreePool::AffineMax,
            text_dim: td,
            word_dim: cfg.word_dim,
            element_dim: ed,
        }
    }

    pub fn device(&self) -> Device {
        self.tag_emb.val().device()
    }

    /// Encodes every text: the BiLSTM's final forward and backward states, 64-d; the empty text
    /// is zeros. Texts of one length run together, so no padding enters a state.
    fn encode_texts(&self, x: &DomNetInput, plain: &Device) -> Tensor<2> {
        let texts = &x.texts;
        let dev = self.device();
        let mut by_len: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
        for (i, t) in texts.iter().enumerate() {
            by_len.entry(t.len()).or_default().push(i);
        }
        let mut rows: Vec<Tensor<2>> = Vec::new();
        let mut order: Vec<usize> = Vec::new();
        for (len, group) in by_len {
            if len == 0 {
                rows.push(Tensor::zeros([group.len(), self.text_dim], &dev));
            } else {
                let ids: Vec<u32> = group.iter().flat_map(|&i| texts[i].iter().copied()).collect();
                let words = self.embed_words(&ids, x, plain).reshape([group.len(), len, self.word_dim]);
                let (_, state) = self.encoder.forward(words, None);
                let h = state.hidden; // [2, g, hidden]
                let g = group.len();
                let hd = self.text_dim / 2;
                let fwd = h.clone().slice([0..1, 0..g, 0..hd]).reshape([g, hd]);
                let bwd = h.slice([1..2, 0..g, 0..hd]).reshape([g, hd]);
                rows.push(Tensor::cat(vec![fwd, bwd], 1));
            }
            order.extend(group);
        }
        // Rows are grouped by length: put them back in text order.
        let mut back = vec![0i64; order.len()];
        for (row, &text) in order.iter().enumerate() {
            back[text] = row as i64;
        }
        Tensor::cat(rows, 0).select(0, Tensor::<1, Int>::from_data(TensorData::new(back, [texts.len()]), plain))
    }

    pub fn forward(&self, x: &DomNetInput) -> DomNetOut {
        let dev = self.device();
        let plain = dev.clone().without_autodiff();
        let n = x.n();
        assert!(n > 0, "DOMNet needs at least one element");
        let ints = |v: Vec<i64>| {
            let len = v.len();
            Tensor::<1, Int>::from_data(TensorData::new(v, [len]), &plain)
        };
        let ints32 = |v: &[u32]| ints(v.iter().map(|&i| i as i64).collect());
        let matrix = |v: &[f32], r: usize, c: usize| Tensor::<2>::from_data(TensorData::new(v.to_vec(), [r, c]), &plain);

        let texts = self.encode_texts(x, &plain);
        // Base embedding, 130-d, and the alignment, 128-d.
        let base = Tensor::cat(
            vec![
                texts.clone().select(0, ints(x.text.iter().map(|&i| i as i64).collect())),
                self.tag_emb.val().select(0, ints32(&x.tag)),
                self.value_emb.val().select(0, ints32(&x.value_kind)),
                self.tampered_emb.val().select(0, ints32(&x.tampered)),
                self.class_emb.val().select(0, ints32(&x.class)),
                matrix(&x.numeric, n, POSITION_DIMS + COLOUR_DIMS),
            ],
            1,
        );
        // What the neighbours read: the base, with the field buckets' alignment (code) or alone (§5).
        let aligned = match &self.align_emb {
            Some(align) => {
                let buckets = align.dims()[0];
                Tensor::cat(vec![base, matrix(&x.align, n, buckets).matmul(align.val())], 1) // [n, 258]
            }
            None => base, // [n, 130]
        };
        // [aligned ; spatial neighbours summed or averaged ; tree neighbours per k ; goal matching].
        let mut parts = vec![aligned.clone(), matrix(&x.spatial, n, n).matmul(aligned.clone())];
        for (k, lin) in self.tree.iter().enumerate() {
            let adj = matrix(&x.tree[k], n, n);
            parts.push(if self.tree_max { max_over_neighbours(lin.forward(aligned.clone()), adj) } else { lin.forward(adj.matmul(aligned.clone())) });
        }
        if self.align_emb.is_none() {
            parts.push(self.goal_matching(x, &plain));
        }
        let h = Tensor::cat(parts, 1); // [n, 772] (code) or [n, 616] (§5)
        debug_assert_eq!(h.dims()[1], self.element_dim);

        // 1. DOM state: attention over the elements, queried by their max-pool.
        let pooled = h.clone().max_dim(0); // [1, ed]
        let w = softmax(self.dom_state.scores(h.clone(), pooled), 1); // [1, n]
        let dom_ctx = w.matmul(h.clone()); // [1, ed]

        // 2. Goal contexts: sentinel attention over [fields ; NULL], one per head.
        let (keys, values): (Vec<i64>, Vec<i64>) = x.fields.iter().map(|&(k, v)| (k as i64, v as i64)).unzip();
        let units = Tensor::cat(vec![texts.clone().select(0, ints(keys)), texts.select(0, ints(values))], 1); // [F, 128]
        let memory = Tensor::cat(vec![units.clone(), self.sentinel.val()], 0);
        let goal_ctx = Tensor::cat(
            self.goal_heads.iter().map(|head| softmax(head.scores(memory.clone(), dom_ctx.clone()), 1).matmul(memory.clone())).collect(),
            1,
        ); // [1, heads·128]

        // 3. p(element): the DOM heads' distributions mixed by a softmax of the goal contexts.
        let state = Tensor::cat(vec![dom_ctx, goal_ctx.clone()], 1);
        let mask: Vec<f32> = x.actionable.iter().map(|&a| if a { 0.0 } else { NEG }).collect();
        let mask = matrix(&mask, 1, n);
        let mix = softmax(self.head_mix.forward(goal_ctx), 1); // [1, heads]
        let mut p_elem: Option<Tensor<2>> = None;
        for (i, head) in self.dom_heads.iter().enumerate() {
            let p = softmax(head.scores(h.clone(), state.clone()) + mask.clone(), 1) * mix.clone().slice([0..1, i..i + 1]);
            p_elem = Some(match p_elem {
                None => p,
                Some(acc) => acc + p,
            });
        }
        let elem = (p_elem.expect("at least one DOM head").clamp_min(1e-30).log() + mask).reshape([n]);

        // 4–5. Per element: ctx = ReLU(Linear([e ; state])), then p(click/type) and p(field).
        let ctx = relu(self.ctx_elem.forward(h) + self.ctx_state.forward(state.clone())); // [n, 96]
        let no_type: Vec<f32> = x.typable.iter().flat_map(|&t| [0.0, if t { 0.0 } else { NEG }]).collect();
        let mode = log_softmax(self.mode.forward(ctx.clone()) + matrix(&no_type, n, 2), 1);
        let field = log_softmax(self.field.scores(units, ctx), 1); // [n, F]
        let value = self.critic.as_ref().map(|c| c.out.forward(relu(c.hidden.forward(state))).reshape([1]));
        DomNetOut { elem, mode, field, value }
    }

    /// The learned word embeddings [word_vocab, word_dim] (a word's id is its row).
    pub fn learned_word_embeddings(&self) -> Tensor<2> {
        self.word_emb.val()
    }

    /// The embeddings of `ids` [len, word_dim]: the fixed vector of a word the state's
    /// `fixed_words` cover (no gradient reaches its learned row), the learned row otherwise.
    fn embed_words(&self, ids: &[u32], x: &DomNetInput, plain: &Device) -> Tensor<2> {
        let n = ids.len();
        let select = Tensor::<1, Int>::from_data(TensorData::new(ids.iter().map(|&w| w as i64).collect::<Vec<_>>(), [n]), plain);
        let learned = self.word_emb.val().select(0, select);
        if x.fixed_words.is_empty() {
            return learned;
        }
        let d = self.word_dim;
        let (mut keep, mut fixed) = (vec![1f32; n], vec![0f32; n * d]);
        for (i, w) in ids.iter().enumerate() {
            if let Ok(k) = x.fixed_words.binary_search(w) {
                keep[i] = 0.0;
                fixed[i * d..(i + 1) * d].copy_from_slice(&x.fixed_vectors[k * d..(k + 1) * d]);
            }
        }
        learned * Tensor::<2>::from_data(TensorData::new(keep, [n, 1]), plain) + Tensor::<2>::from_data(TensorData::new(fixed, [n, d]), plain)
    }

    /// §5's goal-matching embedding: per element, the sum of the embeddings of its words that
    /// appear in the goal ([n, word_dim]; zeros where none does).
    fn goal_matching(&self, x: &DomNetInput, plain: &Device) -> Tensor<2> {
        let n = x.n();
        let k = x.match_words.len();
        if k == 0 {
            return Tensor::zeros([n, self.word_dim], &self.device());
        }
        let rows = self.embed_words(&x.match_words, x, plain); // [k, d]
        Tensor::<2>::from_data(TensorData::new(x.match_counts.clone(), [n, k]), plain).matmul(rows)
    }
}

/// Per element, the max over its neighbours (`adj` [n, n], 1 for a neighbour) of their rows of
/// `f` [n, d]; zeros for an element with none.
fn max_over_neighbours(f: Tensor<2>, adj: Tensor<2>) -> Tensor<2> {
    let [n, d] = f.dims();
    let off = (adj.clone() - 1.0) * (-NEG); // 0 for a neighbour, about −1e9 otherwise
    let scores = f.unsqueeze_dim::<3>(0) + off.unsqueeze_dim::<3>(2); // [n, n, d]
    let pooled = scores.max_dim(1).reshape([n, d]);
    let any = adj.max_dim(1); // [n, 1]: 1 where the element has a neighbour
    pooled * any
}

/// DOMNet's action as indices: element, mode (0 click, 1 type) and the typed field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DomNetAction {
    pub elem: usize,
    pub typed: Option<usize>,
}

impl DomNetAction {
    /// Our page action for it.
    pub fn to_action(self, x: &DomNetInput) -> Action {
        match self.typed {
            None => Action::Click(x.refs[self.elem]),
            Some(f) => Action::Type(x.refs[self.elem], x.field_values[f].clone()),
        }
    }

    /// The indices of a page action in state `x`: `None` when DOMNet cannot take it (a target
    /// that is not one of its elements, a typed text that is no field value, a select).
    pub fn from_action(action: &Action, x: &DomNetInput) -> Option<Self> {
        match action {
            Action::Click(r) => {
                let e = x.element_of(*r).filter(|&e| x.actionable[e])?;
                Some(DomNetAction { elem: e, typed: None })
            }
            Action::Type(r, text) => {
                let e = x.element_of(*r).filter(|&e| x.typable[e])?;
                let f = x.field_values.iter().position(|v| v == text)?;
                Some(DomNetAction { elem: e, typed: Some(f) })
            }
            _ => None,
        }
    }
}

/// log π(a|s) = log p(elem) + log p(mode | elem) [+ log p(field | elem)], as a [1] tensor.
pub fn log_prob(out: &DomNetOut, a: DomNetAction) -> Tensor<1> {
    let e = a.elem;
    let mode = if a.typed.is_some() { 1 } else { 0 };
    let mut lp = out.elem.clone().narrow(0, e, 1) + out.mode.clone().slice([e..e + 1, mode..mode + 1]).reshape([1]);
    if let Some(f) = a.typed {
        lp = lp + out.field.clone().slice([e..e + 1, f..f + 1]).reshape([1]);
    }
    lp
}

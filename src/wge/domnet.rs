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

use std::collections::HashMap;
use std::sync::Arc;

use burn::module::{Initializer, Param};
use burn::nn::{BiLstm, BiLstmConfig, Linear, LinearConfig};
use burn::prelude::*;
use burn::tensor::activation::{log_softmax, relu, softmax, tanh};

use crate::env::{Action, DomNode, NodeRef, NodeValue, Observation, TEXT_TAG};
use crate::learn::vocab::{UNK, Vocab};

use super::domnet_config::{Baseline, COLOUR_DIMS, GoalMatch, NeighbourPool, NeuralConfig, POSITION_DIMS, TreePool, VALUE_KINDS};
use super::word_vectors::WordVectors;

/// Masked logits hold about this.
const NEG: f32 = -1e9;

// ------------------------------------------------------------------------------ features

/// The vocabularies DOMNet grows as it reads pages, and the fixed word vectors it reads words
/// through, if any (`WordEmbedding::Glove6b50d`).
#[derive(Clone, Debug)]
pub struct DomNetVocabs {
    pub words: Vocab,
    pub tags: Vocab,
    pub classes: Vocab,
    pub vectors: Option<Arc<WordVectors>>,
}

impl DomNetVocabs {
    pub fn new(cfg: &NeuralConfig) -> Self {
        DomNetVocabs { words: Vocab::new(cfg.word_vocab), tags: Vocab::new(cfg.tag_vocab), classes: Vocab::new(cfg.class_vocab), vectors: None }
    }
}

/// One state as DOMNet reads it: plain numbers, no tensors.
#[derive(Clone, Debug, PartialEq)]
pub struct DomNetInput {
    /// Distinct texts of the state as word ids (empty for no text); index 0 is the empty text.
    pub texts: Vec<Vec<u32>>,
    /// The elements: the page's leaves, `t` text nodes included (they are neighbours), in
    /// document order.
    pub refs: Vec<NodeRef>,
    pub text: Vec<usize>,
    pub tag: Vec<u32>,
    pub class: Vec<u32>,
    pub value_kind: Vec<u32>,
    pub tampered: Vec<u32>,
    /// [n, 2 + 8]: left/160, top/160, fg RGBA, bg RGBA.
    pub numeric: Vec<f32>,
    /// [n, buckets]: how many fields of each bucket hold the element's text.
    pub align: Vec<f32>,
    /// The distinct word ids of the elements' words that appear in the goal, and [n, that many]:
    /// how often each is among the element's words (the goal-matching embedding's weights).
    pub match_words: Vec<u32>,
    pub match_counts: Vec<f32>,
    /// [n, n]: spatial neighbours (within 30 px, with text, not itself), 1 each, or 1/count when
    /// they are averaged.
    pub spatial: Vec<f32>,
    /// One [n, n] 0/1 matrix per tree depth k: neighbours with text whose lowest common ancestor
    /// with the element is at depth ≥ k (BODY is depth 0).
    pub tree: Vec<Vec<f32>>,
    /// Elements that can be acted on (not `t`).
    pub actionable: Vec<bool>,
    /// Elements that take typed text.
    pub typable: Vec<bool>,
    /// The goal units: (key text, value text) indices into `texts`.
    pub fields: Vec<(usize, usize)>,
    /// The goal units' values, in order: what a type action types.
    pub field_values: Vec<String>,
    /// The state's word ids that the fixed word vectors cover (ascending), and their vectors
    /// [that many, word_dim]; empty without fixed vectors.
    pub fixed_words: Vec<u32>,
    pub fixed_vectors: Vec<f32>,
}

impl DomNetInput {
    pub fn n(&self) -> usize {
        self.refs.len()
    }
    pub fn element_of(&self, r: NodeRef) -> Option<usize> {
        self.refs.iter().position(|&x| x == r)
    }
}

/// Lower-case alphanumeric words.
fn words(s: &str) -> impl Iterator<Item = String> + '_ {
    s.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase)
}

/// "rgb(1, 2, 3)" / "rgba(1, 2, 3, 0.5)" as RGBA in [0, 1]; anything else transparent black.
fn rgba(s: &str) -> [f32; 4] {
    let inner = s.trim().trim_start_matches("rgba").trim_start_matches("rgb").trim_start_matches('(').trim_end_matches(')');
    let parts: Vec<f32> = inner.split(',').filter_map(|p| p.trim().parse().ok()).collect();
    match parts.as_slice() {
        [r, g, b] => [r / 255.0, g / 255.0, b / 255.0, 1.0],
        [r, g, b, a] => [r / 255.0, g / 255.0, b / 255.0, *a],
        _ => [0.0; 4],
    }
}

fn typable(n: &DomNode) -> bool {
    n.tag == "TEXTAREA"
        || (n.tag.starts_with("INPUT_")
            && !matches!(n.tag.as_str(), "INPUT_checkbox" | "INPUT_radio" | "INPUT_button" | "INPUT_submit" | "INPUT_reset"))
}

fn shown_text(n: &DomNode) -> &str {
    if !n.text.is_empty() {
        return &n.text;
    }
    n.value.as_text().unwrap_or("")
}

/// Gap between two boxes (0 when they overlap).
fn gap(a: &crate::env::Rect, b: &crate::env::Rect) -> f32 {
    let dx = (a.left.max(b.left) - (a.left + a.width).min(b.left + b.width)).max(0.0);
    let dy = (a.top.max(b.top) - (a.top + a.height).min(b.top + b.height)).max(0.0);
    (dx * dx + dy * dy).sqrt()
}

/// Most spans an utterance goal holds (beside the whole utterance).
const MAX_SPANS: usize = 47;
/// Longest span, in words, outside quotes (names and places are one to three words).
const MAX_SPAN_WORDS: usize = 3;

/// The goal units of an utterance read alone (`NeuralConfig::utterance_goal`): the whole
/// utterance (key "utterance"), then every quoted passage verbatim and every run of up to
/// three words, each word without its surrounding punctuation or a possessive "'s" (key: the
/// word before the span, lower-cased, "^" at the start), each once, first occurrence first.
/// A typing action types one of them, so a value the page spells out (a name, a quoted
/// message) can be typed without the fields.
pub fn utterance_units(utterance: &str) -> Vec<(String, String)> {
    let mut units = vec![("utterance".to_string(), utterance.to_string())];
    let mut seen = std::collections::HashSet::new();
    let mut push = |units: &mut Vec<(String, String)>, key: &str, span: String| {
        if !span.is_empty() && units.len() <= MAX_SPANS && seen.insert(span.clone()) {
            units.push((key.to_string(), span));
        }
    };
    let quoted: Vec<&str> = utterance.split('"').collect();
    for (i, part) in quoted.iter().enumerate() {
        if i % 2 == 1 && i + 1 < quoted.len() {
            let before = quoted[i - 1].split_whitespace().last().map(|w| clean(w).to_lowercase()).unwrap_or_else(|| "^".into());
            push(&mut units, &before, part.trim().to_string());
        }
    }
    let words: Vec<String> = utterance.split_whitespace().map(|w| clean(w).to_string()).collect();
    for len in 1..=MAX_SPAN_WORDS {
        for start in 0..words.len().saturating_sub(len - 1) {
            let run = &words[start..start + len];
            if run.iter().any(|w| w.is_empty()) {
                continue;
            }
            let key = if start == 0 { "^".to_string() } else { words[start - 1].to_lowercase() };
            push(&mut units, &key, run.join(" "));
        }
    }
    units
}

/// A word without its surrounding punctuation and a possessive 's ("Alice's," → "Alice").
fn clean(word: &str) -> &str {
    let w = word.trim_matches(|c: char| !c.is_alphanumeric());
    w.strip_suffix("'s").or_else(|| w.strip_suffix("’s")).unwrap_or(w)
}

fn bucket(key: &str, buckets: usize) -> usize {
    // FNV-1a: a field keeps its bucket on every page and in every build.
    let h = key.bytes().fold(0xcbf29ce484222325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100000001b3));
    (h % buckets as u64) as usize
}

/// Reads an observation into DOMNet's input, growing the vocabularies.
pub fn featurize(vocabs: &mut DomNetVocabs, obs: &Observation, cfg: &NeuralConfig) -> DomNetInput {
    let nodes = &obs.dom.nodes;
    let mut text_ids: HashMap<Vec<u32>, usize> = HashMap::new();
    let mut texts: Vec<Vec<u32>> = vec![vec![]];
    text_ids.insert(vec![], 0);
    let mut text_of = |s: &str, vocabs: &mut DomNetVocabs| -> usize {
        let ids: Vec<u32> = words(s).take(cfg.max_text_words).map(|w| vocabs.words.id_or_add(&w).unwrap_or(UNK)).collect();
        *text_ids.entry(ids.clone()).or_insert_with(|| {
            texts.push(ids);
            texts.len() - 1
        })
    };

    // Depths, for lowest common ancestors.
    let mut depth = vec![0usize; nodes.len()];
    for (i, n) in nodes.iter().enumerate() {
        if let Some(p) = n.parent {
            depth[i] = depth[p] + 1;
        }
    }
    let lca_depth = |mut a: usize, mut b: usize| -> usize {
        while a != b {
            if depth[a] >= depth[b] {
                match nodes[a].parent {
                    Some(p) => a = p,
                    None => return 0,
                }
            } else {
                match nodes[b].parent {
                    Some(p) => b = p,
                    None => return 0,
                }
            }
        }
        depth[a]
    };

    let leaves: Vec<usize> = (0..nodes.len()).filter(|&i| nodes[i].children.is_empty()).collect();
    let n = leaves.len();
    let (fields, field_values): (Vec<(String, String)>, Vec<String>) = if cfg.utterance_goal {
        utterance_units(&obs.instruction.utterance).into_iter().map(|(k, v)| ((k, v.clone()), v)).unzip()
    } else if obs.instruction.fields.is_empty() {
        (vec![("utterance".into(), obs.instruction.utterance.clone())], vec![obs.instruction.utterance.clone()])
    } else {
        obs.instruction.fields.iter().map(|f| ((f.key.clone(), f.value.clone()), f.value.clone())).unzip()
    };
    let field_texts: Vec<(usize, usize)> = fields.iter().map(|(k, v)| (text_of(k, vocabs), text_of(v, vocabs))).collect();

    let mut input = DomNetInput {
        texts: vec![],
        refs: Vec::with_capacity(n),
        text: Vec::with_capacity(n),
        tag: Vec::with_capacity(n),
        class: Vec::with_capacity(n),
        value_kind: Vec::with_capacity(n),
        tampered: Vec::with_capacity(n),
        numeric: Vec::with_capacity(n * (POSITION_DIMS + COLOUR_DIMS)),
        align: vec![0.0; n * cfg.align_buckets],
        match_words: Vec::new(),
        match_counts: Vec::new(),
        spatial: vec![0.0; n * n],
        tree: vec![vec![0.0; n * n]; cfg.tree_depths.len()],
        actionable: Vec::with_capacity(n),
        typable: Vec::with_capacity(n),
        fields: field_texts,
        field_values,
        fixed_words: Vec::new(),
        fixed_vectors: Vec::new(),
    };
    // The goal's words: the utterance's and the fields' values'.
    let goal_words: std::collections::HashSet<String> =
        words(&obs.instruction.utterance).chain(fields.iter().flat_map(|(_, v)| words(v).collect::<Vec<_>>())).collect();
    let mut matched: Vec<Vec<u32>> = Vec::with_capacity(n);
    let mut has_text = Vec::with_capacity(n);
    for (e, &i) in leaves.iter().enumerate() {
        let node = &nodes[i];
        let shown = shown_text(node);
        input.refs.push(node.r#ref);
        input.text.push(text_of(shown, vocabs));
        input.tag.push(vocabs.tags.id_or_add(&node.tag).unwrap_or(UNK));
        input.class.push(vocabs.classes.id_or_add(&node.classes.join(" ")).unwrap_or(UNK));
        input.value_kind.push(match &node.value {
            NodeValue::None => 0,
            NodeValue::Checked(false) => 1,
            NodeValue::Checked(true) => 2,
            NodeValue::Text(t) if t.is_empty() => 3,
            NodeValue::Text(_) => 4,
        });
        input.tampered.push(node.tampered as u32);
        input.numeric.extend([node.rect.left / cfg.position_scale, node.rect.top / cfg.position_scale]);
        input.numeric.extend(rgba(&node.fg_color));
        input.numeric.extend(rgba(&node.bg_color));
        let lower = shown.to_lowercase();
        if !lower.trim().is_empty() {
            for (key, value) in &fields {
                if value.to_lowercase().contains(lower.trim()) {
                    input.align[e * cfg.align_buckets + bucket(key, cfg.align_buckets)] += 1.0;
                }
            }
        }
        if cfg.goal_match == GoalMatch::WordSum {
            matched.push(words(shown).filter(|w| goal_words.contains(w)).map(|w| vocabs.words.id_or_add(&w).unwrap_or(UNK)).collect());
        }
        input.actionable.push(node.tag != TEXT_TAG);
        input.typable.push(typable(node));
        has_text.push(!shown.trim().is_empty());
    }
    for a in 0..n {
        let mut count = 0.0;
        for b in 0..n {
            if a == b || !has_text[b] {
                continue;
            }
            if gap(&nodes[leaves[a]].rect, &nodes[leaves[b]].rect) <= cfg.neighbour_px {
                input.spatial[a * n + b] = 1.0;
                count += 1.0;
            }
            let d = lca_depth(leaves[a], leaves[b]);
            for (t, &k) in cfg.tree_depths.iter().enumerate() {
                if d >= k {
                    input.tree[t][a * n + b] = 1.0;
                }
            }
        }
        if count > 0.0 && cfg.spatial_pool == NeighbourPool::Mean {
            for b in 0..n {
                input.spatial[a * n + b] /= count;
            }
        }
    }
    if cfg.goal_match == GoalMatch::WordSum {
        let mut ids: Vec<u32> = matched.iter().flatten().copied().collect();
        ids.sort_unstable();
        ids.dedup();
        input.match_counts = vec![0.0; n * ids.len()];
        for (e, m) in matched.iter().enumerate() {
            for w in m {
                let k = ids.binary_search(w).expect("listed");
                input.match_counts[e * ids.len() + k] += 1.0;
            }
        }
        input.match_words = ids;
    }
    if let Some(vectors) = &vocabs.vectors {
        let mut ids: Vec<u32> = texts.iter().flatten().chain(&input.match_words).copied().collect();
        ids.sort_unstable();
        ids.dedup();
        for id in ids {
            if let Some(v) = vocabs.words.word(id).and_then(|w| vectors.get(w)) {
                input.fixed_words.push(id);
                input.fixed_vectors.extend_from_slice(v);
            }
        }
    }
    input.texts = texts;
    input
}

// ------------------------------------------------------------------------------ network

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
                .then(|| Initializer::Normal { mean: 0.0, std: 0.1 }.init([cfg.align_buckets, cfg.align_dim], device)),
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

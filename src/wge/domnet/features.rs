//! DOMNet's features: a page read into plain numbers (words, tags, classes, values, colours,
//! positions, neighbours, the goal's units), the vocabularies grown while reading, and the
//! instruction's units. No tensors here; the network (`super`) turns them into tensors.

use std::collections::HashMap;
use std::sync::Arc;

use crate::env::{DomNode, NodeRef, NodeValue, Observation, TEXT_TAG};
use crate::learn::vocab::{UNK, Vocab};

use crate::wge::domnet_config::{AlignKeys, COLOUR_DIMS, GoalMatch, NeighbourPool, NeuralConfig, POSITION_DIMS};
use crate::wge::word_vectors::WordVectors;

/// The vocabularies DOMNet grows as it reads pages, and the fixed word vectors it reads words
/// through, if any (`WordEmbedding::Glove6b50d`).
#[derive(Clone, Debug)]
pub struct DomNetVocabs {
    pub words: Vocab,
    pub tags: Vocab,
    pub classes: Vocab,
    /// The fields' keys in the order first seen, for their alignment buckets
    /// (`AlignKeys::FirstSeen`; see [`key_vocab`]).
    pub keys: Vocab,
    pub vectors: Option<Arc<WordVectors>>,
}

impl DomNetVocabs {
    pub fn new(cfg: &NeuralConfig) -> Self {
        DomNetVocabs {
            words: Vocab::new(cfg.word_vocab),
            tags: Vocab::new(cfg.tag_vocab),
            classes: Vocab::new(cfg.class_vocab),
            keys: key_vocab(cfg),
            vectors: None,
        }
    }
}

/// The key vocabulary for `align_buckets` buckets: bucket 0 holds the keys past its room
/// (`<unk>`), and a key with id k ≥ 2 has bucket k − 1 (`<pad>`'s id 1 names none), so
/// `align_buckets − 1` keys get a bucket of their own (the code: 20 and one for the rest).
pub fn key_vocab(cfg: &NeuralConfig) -> Vocab {
    Vocab::new(cfg.align_buckets + 1)
}

/// The alignment bucket of a field's key.
fn key_bucket(key: &str, keys: &mut Vocab, cfg: &NeuralConfig) -> usize {
    match cfg.align_keys {
        AlignKeys::FirstSeen => keys.id_or_add(key).map_or(0, |id| id as usize - 1),
        AlignKeys::Hashed => hashed_bucket(key, cfg.align_buckets),
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

/// A word's unit vector, when the table holds it (and it is not zero).
fn unit_vector(vectors: &WordVectors, word: &str) -> Option<Vec<f32>> {
    let mut v = vectors.get(word)?.to_vec();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    (norm > 0.0).then(|| {
        v.iter_mut().for_each(|x| *x /= norm);
        v
    })
}

/// The unit vectors of a text's words that the table holds.
fn unit_vectors(vectors: &WordVectors, text: &str) -> Vec<Vec<f32>> {
    words(text).filter_map(|w| unit_vector(vectors, &w)).collect()
}

/// The largest cosine between a word of `a` and a word of `b`, at least 0 (0 when either has none).
fn most_similar(a: &[Vec<f32>], b: &[Vec<f32>]) -> f32 {
    a.iter().flat_map(|x| b.iter().map(move |y| x.iter().zip(y).map(|(p, q)| p * q).sum::<f32>())).fold(0.0, f32::max)
}

/// A field's value as the alignment reads it, taken once a page rather than once an element.
struct FieldWords {
    lower: String,
    words: Vec<String>,
    /// The unit vectors of its words the table holds (with `align_similar` only).
    vectors: Vec<Vec<f32>>,
}

/// The mean over an element's words of each one's best cosine with a word of the field (at least
/// 0): 1 for a word the field holds, 0 for a word the table lacks (`align_similar_mean`).
fn mean_best_similar(mine: &[(String, Option<Vec<f32>>)], field: &FieldWords) -> f32 {
    if mine.is_empty() {
        return 0.0;
    }
    let score = |(w, v): &(String, Option<Vec<f32>>)| {
        if field.words.contains(w) { 1.0 } else { v.as_ref().map_or(0.0, |v| most_similar(std::slice::from_ref(v), &field.vectors)) }
    };
    mine.iter().map(score).sum::<f32>() / mine.len() as f32
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

fn hashed_bucket(key: &str, buckets: usize) -> usize {
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
        align: vec![0.0; n * cfg.align_rows()],
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
    let similar_vectors = vocabs.vectors.clone().filter(|_| cfg.align_similar);
    let field_words: Vec<FieldWords> = fields
        .iter()
        .map(|(_, v)| FieldWords {
            lower: v.to_lowercase(),
            words: words(v).collect(),
            vectors: similar_vectors.as_deref().map_or_else(Vec::new, |vs| unit_vectors(vs, v)),
        })
        .collect();
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
        let text = lower.trim();
        // With `align_classes` (ours), an element without text — an icon — is named by its classes.
        let icon_names: Vec<String> =
            if cfg.align_classes && text.is_empty() { node.classes.iter().map(|c| c.to_lowercase()).collect() } else { Vec::new() };
        if !text.is_empty() || !icon_names.is_empty() {
            let row = e * cfg.align_rows();
            // Its words with their unit vectors (None where the table lacks one), for `align_similar`.
            let mine: Option<Vec<(String, Option<Vec<f32>>)>> = similar_vectors.as_deref().map(|vs| {
                words(shown)
                    .map(|w| {
                        let v = unit_vector(vs, &w);
                        (w, v)
                    })
                    .collect()
            });
            let known: Vec<Vec<f32>> = mine.iter().flatten().filter_map(|(_, v)| v.clone()).collect();
            for ((key, _), field) in fields.iter().zip(&field_words) {
                let strength = if text.is_empty() {
                    if field.words.iter().any(|w| icon_names.contains(w)) { 1.0 } else { 0.0 }
                } else if field.lower.contains(text) {
                    1.0
                } else {
                    match &mine {
                        Some(mine) if cfg.align_similar_mean => mean_best_similar(mine, field),
                        Some(_) => most_similar(&known, &field.vectors),
                        None => 0.0,
                    }
                };
                if strength > 0.0 {
                    input.align[row + key_bucket(key, &mut vocabs.keys, cfg)] += strength;
                    if cfg.align_any {
                        let any = &mut input.align[row + cfg.align_buckets];
                        *any = any.max(strength);
                    }
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

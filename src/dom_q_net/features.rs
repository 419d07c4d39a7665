//! From an observation to what DOM-Q-Net reads: vocabulary ids and flags per node, the tree, the
//! action candidates (leaves) and the goal tokens.
//!
//! Text (a node's whole text, and each goal token) is one token of the text vocabulary, shared by
//! the DOM and the goal so that the goal-alignment feature can compare them. Strings that do not
//! fit in the vocabulary get an out-of-vocabulary slot that is local to the state: the network
//! gives each slot a random vector, the same for the DOM and the goal within the state, so an
//! exact match still aligns (cosine 1).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::config::DqnConfig;
use super::vocab::{PAD, UNK, Vocabs};
use crate::env::{NodeRef, Observation};

pub const NO_PARENT: u16 = u16::MAX;
pub const FOCUSED: u8 = 1;
pub const TAMPERED: u8 = 2;

/// One state, compact enough that replay can hold 100,000 of them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StateFeatures {
    pub tags: Vec<u16>,
    pub classes: Vec<u16>,
    /// Text vocabulary id, or `text_vocab + k` for the state's k-th out-of-vocabulary string.
    pub texts: Vec<u32>,
    /// [`FOCUSED`] | [`TAMPERED`] bits per node.
    pub flags: Vec<u8>,
    /// Parent index per node ([`NO_PARENT`] for the root); parents come first.
    pub parents: Vec<u16>,
    /// Node indices of the leaves, the DOM actions.
    pub leaves: Vec<u16>,
    /// Goal token ids, encoded like `texts`.
    pub goal: Vec<u32>,
    /// Number of distinct out-of-vocabulary strings in the state.
    pub n_oov: u16,
}

impl StateFeatures {
    pub fn num_nodes(&self) -> usize {
        self.tags.len()
    }
}

/// A state encoded for acting: the features plus what maps an action back to the page.
#[derive(Clone, Debug, PartialEq)]
pub struct Encoded {
    pub features: StateFeatures,
    /// Ref of each leaf, in the order of `features.leaves`.
    pub leaf_refs: Vec<NodeRef>,
    /// Whether each leaf takes typed text (a text-like input or a textarea).
    pub leaf_typable: Vec<bool>,
    /// The goal tokens as typed text, in the order of `features.goal`.
    pub goal_tokens: Vec<String>,
    /// Set when the page was larger than the model's caps and was cut.
    pub warning: Option<String>,
}

/// Encodes `obs`, growing the vocabularies with what it has not seen yet.
pub fn encode(vocabs: &mut Vocabs, obs: &Observation, cfg: &DqnConfig) -> Encoded {
    let nodes = &obs.dom.nodes;
    let kept = nodes.len().min(cfg.max_nodes);
    let mut oov: HashMap<String, u32> = HashMap::new();
    let text_vocab = cfg.text_vocab as u32;

    let mut f = StateFeatures::default();
    let mut leaf_refs = Vec::new();
    let mut leaf_typable = Vec::new();
    let mut cut_leaves = 0usize;
    for (i, n) in nodes.iter().take(kept).enumerate() {
        f.tags.push(vocabs.tag.id_or_add(&n.tag).unwrap_or(UNK) as u16);
        let class = n.classes.join(" ");
        f.classes.push(if class.is_empty() { PAD } else { vocabs.class.id_or_add(&class).unwrap_or(UNK) } as u16);
        let text = match (&n.value, n.text.is_empty() && cfg.value_as_text) {
            (crate::env::NodeValue::Text(v), true) => v.as_str(),
            _ => n.text.as_str(),
        };
        let split;
        let text = if cfg.split_dom_text {
            split = crate::env::goal_tokens(text).join(" ");
            split.as_str()
        } else {
            text
        };
        f.texts.push(encode_text(vocabs, &mut oov, text_vocab, text));
        f.flags.push(if n.focused { FOCUSED } else { 0 } | if n.tampered { TAMPERED } else { 0 });
        f.parents.push(n.parent.map(|p| p as u16).unwrap_or(NO_PARENT));
        // A node whose children were all cut is a leaf of the kept graph.
        if n.children.iter().all(|&c| c >= kept) {
            if f.leaves.len() < cfg.max_leaves {
                f.leaves.push(i as u16);
                leaf_refs.push(n.r#ref);
                leaf_typable.push(typable(&n.tag));
            } else {
                cut_leaves += 1;
            }
        }
    }
    let normalized;
    let tokens = if cfg.normalize_goal_tokens {
        normalized = normalize_goal_tokens(&obs.instruction.tokens);
        &normalized
    } else {
        &obs.instruction.tokens
    };
    let goal_tokens: Vec<String> = tokens.iter().take(cfg.max_goal_tokens).cloned().collect();
    for t in &goal_tokens {
        f.goal.push(encode_text(vocabs, &mut oov, text_vocab, t));
    }
    f.n_oov = oov.len() as u16;

    let mut cuts = Vec::new();
    let total_nodes = nodes.len() + obs.dom.truncated as usize;
    if total_nodes > kept {
        cuts.push(format!("{total_nodes} nodes (model cap {})", cfg.max_nodes));
    }
    if cut_leaves > 0 {
        cuts.push(format!("{} leaves (cap {})", f.leaves.len() + cut_leaves, cfg.max_leaves));
    }
    if tokens.len() > cfg.max_goal_tokens {
        cuts.push(format!("{} goal tokens (cap {})", tokens.len(), cfg.max_goal_tokens));
    }
    let warning = (!cuts.is_empty()).then(|| format!("page larger than the model's caps, truncated: {}", cuts.join(", ")));
    Encoded { features: f, leaf_refs, leaf_typable, goal_tokens, warning }
}

const MONTHS: [&str; 12] = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

/// The reference code's goal tokens ([`DqnConfig::normalize_goal_tokens`]): every number written
/// as its value ("07" → "7"), then a second token 1–12 as its month's name. MiniWoB's dates are
/// "MM/DD/YYYY" and most utterances that give one start with a verb ("Select 12/07/2016 …"), so
/// the month lands second and matches a date picker's "December 2016".
pub fn normalize_goal_tokens(tokens: &[String]) -> Vec<String> {
    let mut out: Vec<String> = tokens
        .iter()
        .map(|t| {
            if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit()) {
                let value = t.trim_start_matches('0');
                if value.is_empty() { "0".to_string() } else { value.to_string() }
            } else {
                t.clone()
            }
        })
        .collect();
    if let Some(second) = out.get_mut(1)
        && let Ok(m @ 1..=12) = second.parse::<usize>()
    {
        *second = MONTHS[m - 1].to_string();
    }
    out
}

/// Whether an element with the reader's `tag` takes typed text: a textarea, or an input that is
/// not a box, a button, a file or a slider.
pub fn typable(tag: &str) -> bool {
    const NOT_TEXT: [&str; 9] = ["checkbox", "radio", "button", "submit", "reset", "image", "file", "range", "color"];
    tag == "TEXTAREA" || tag.strip_prefix("INPUT_").is_some_and(|kind| !NOT_TEXT.contains(&kind.to_ascii_lowercase().as_str()))
}

fn encode_text(vocabs: &mut Vocabs, oov: &mut HashMap<String, u32>, text_vocab: u32, s: &str) -> u32 {
    if s.is_empty() {
        return PAD;
    }
    if let Some(id) = vocabs.text.id_or_add(s) {
        return id;
    }
    let next = oov.len() as u32;
    text_vocab + *oov.entry(s.to_string()).or_insert(next)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::{DomGraph, DomNode, Instruction, NodeValue, Rect};

    fn node(r: u32, parent: Option<usize>, children: Vec<usize>, tag: &str, text: &str) -> DomNode {
        DomNode {
            r#ref: r,
            parent,
            children,
            tag: tag.into(),
            text: text.into(),
            value: NodeValue::None,
            id: String::new(),
            classes: vec![],
            rect: Rect::default(),
            focused: false,
            tampered: false,
            options: vec![],
            ..DomNode::default()
        }
    }

    fn page(texts: &[&str], utterance: &str) -> Observation {
        let mut nodes = vec![node(1, None, (1..=texts.len()).collect(), "BODY", "")];
        for (i, t) in texts.iter().enumerate() {
            nodes.push(node(i as u32 + 2, Some(0), vec![], "BUTTON", t));
        }
        Observation { instruction: Instruction::new(utterance, vec![]), dom: DomGraph { nodes, truncated: 0 }, ..Default::default() }
    }

    #[test]
    fn shared_text_vocab_and_leaves() {
        let cfg = DqnConfig::default();
        let mut v = Vocabs::new(cfg.tag_vocab, cfg.text_vocab, cfg.class_vocab);
        let e = encode(&mut v, &page(&["ok", "cancel"], "Click ok"), &cfg);
        assert_eq!(e.features.leaves, [1, 2]);
        assert_eq!(e.leaf_refs, [2, 3]);
        assert_eq!(e.goal_tokens, ["Click", "ok"]);
        assert_eq!(e.features.goal[1], e.features.texts[1], "the goal's ok and the DOM's ok share an id");
        assert_eq!(e.features.texts[0], PAD, "empty text is padding");
        assert_eq!(e.features.parents, [NO_PARENT, 0, 0]);
        assert_eq!(e.features.n_oov, 0);
        assert!(e.warning.is_none());
        assert_eq!(e.leaf_typable, [false, false], "buttons take no text");
    }

    #[test]
    fn text_fields_are_typable_boxes_and_buttons_are_not() {
        for tag in ["INPUT_text", "INPUT_password", "INPUT_email", "INPUT_number", "TEXTAREA"] {
            assert!(typable(tag), "{tag}");
        }
        for tag in ["INPUT_checkbox", "INPUT_radio", "INPUT_submit", "BUTTON", "SPAN", "t", "SELECT"] {
            assert!(!typable(tag), "{tag}");
        }
    }

    #[test]
    fn goal_tokens_are_normalised_as_the_reference_does_when_asked() {
        let toks = |s: &str| crate::env::goal_tokens(s);
        assert_eq!(normalize_goal_tokens(&toks("Select 12/07/2016 as the date")), ["Select", "December", "7", "2016", "as", "the", "date"]);
        assert_eq!(normalize_goal_tokens(&toks("Select 03/09/2016")), ["Select", "March", "9", "2016"]);
        assert_eq!(normalize_goal_tokens(&toks("Click 13 then 007 and 0")), ["Click", "13", "then", "7", "and", "0"], "13 is no month");
        assert_eq!(normalize_goal_tokens(&toks("Enter \"5\" now")), ["Enter", "May", "now"], "the reference's rule looks only at the position");
        assert_eq!(normalize_goal_tokens(&toks("Type x2 or 1st")), ["Type", "x2", "or", "1st"], "only whole numbers");
        assert!(normalize_goal_tokens(&[]).is_empty());

        // Off by default: the goal is the utterance's tokens; on, typing uses the normalised ones.
        let obs = page(&["March"], "Select 03/09/2016");
        let cfg = DqnConfig::default();
        let mut v = Vocabs::new(cfg.tag_vocab, cfg.text_vocab, cfg.class_vocab);
        assert_eq!(encode(&mut v, &obs, &cfg).goal_tokens, ["Select", "03", "09", "2016"]);
        let cfg = DqnConfig { normalize_goal_tokens: true, ..cfg };
        let e = encode(&mut v, &obs, &cfg);
        assert_eq!(e.goal_tokens, ["Select", "March", "9", "2016"]);
        assert_eq!(e.features.goal[1], e.features.texts[1], "the month's name aligns with the page's");
    }

    #[test]
    fn node_text_read_with_the_goals_separators_matches_a_punctuated_link() {
        // The real click-link page: the link is "et." and the instruction asks for "et.", whose
        // goal token is "et".
        let obs = page(&["et.", "Sagittis,", "Nulla ullamcorper."], "Click on the link \"et.\".");
        let cfg = DqnConfig::default();
        let mut v = Vocabs::new(cfg.tag_vocab, cfg.text_vocab, cfg.class_vocab);
        let e = encode(&mut v, &obs, &cfg);
        assert_eq!(e.goal_tokens.last().map(String::as_str), Some("et"));
        assert!(!e.features.goal.contains(&e.features.texts[1]), "the paper's whole string: \"et.\" is not \"et\"");
        let cfg = DqnConfig { split_dom_text: true, ..cfg };
        let e = encode(&mut v, &obs, &cfg);
        assert_eq!(e.features.goal.last(), Some(&e.features.texts[1]), "\"et.\" read as \"et\"");
        assert_eq!(v.text.id_or_add("Nulla ullamcorper"), Some(e.features.texts[3]), "words kept, joined by one space");
    }

    #[test]
    fn out_of_vocabulary_strings_share_a_slot_within_a_state() {
        let cfg = DqnConfig { text_vocab: 3, ..DqnConfig::default() }; // room for one word
        let mut v = Vocabs::new(cfg.tag_vocab, cfg.text_vocab, cfg.class_vocab);
        let e = encode(&mut v, &page(&["first", "zed", "yak"], "pick yak"), &cfg);
        assert_eq!(e.features.texts[1], 2, "first word takes the last free id");
        assert_eq!(e.features.texts[2], 3, "zed: OOV slot 0");
        assert_eq!(e.features.texts[3], 4, "yak: OOV slot 1");
        assert_eq!(e.features.goal, [5, 4], "pick: slot 2; yak matches the DOM's slot");
        assert_eq!(e.features.n_oov, 3);
    }

    #[test]
    fn pages_over_the_caps_are_cut_with_a_warning() {
        let cfg = DqnConfig { max_nodes: 3, max_leaves: 1, max_goal_tokens: 2, ..DqnConfig::default() };
        let mut v = Vocabs::new(cfg.tag_vocab, cfg.text_vocab, cfg.class_vocab);
        let e = encode(&mut v, &page(&["a", "b", "c", "d"], "one two three"), &cfg);
        assert_eq!(e.features.num_nodes(), 3);
        assert_eq!(e.features.leaves.len(), 1);
        assert_eq!(e.features.goal.len(), 2);
        let w = e.warning.unwrap();
        assert!(w.contains("5 nodes") && w.contains("2 leaves") && w.contains("3 goal tokens"), "{w}");
    }
}

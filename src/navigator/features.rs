//! From an observation to the navigator's inputs (reference §3.6): the site's elements in ref
//! order, each with 5 tokenised attributes and 8 features, the profile fields' tokens, and which
//! (action, element, field) choices are open.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use super::config::NavigatorConfig;
use crate::env::{Action, DomNode, NodeRef, NodeValue, Observation};
use crate::learn::vocab::{PAD, UNK, Vocab};

/// The attributes read per element, in this order (reference: tag, value, text, placeholder,
/// classes).
pub const ATTRIBUTES: usize = 5;
/// focused, tampered, is_new, is_div, left/W, top/H, w/W, h/H.
pub const ELEMENT_FEATURES: usize = 8;

/// The element the site hangs from on a generated page; elsewhere the whole page is read.
pub const SITE_ROOT_ID: &str = "gsite";

/// Lowercase, "." as a space, then words (`\w+`) and single other characters, as the
/// reference's tokeniser.
pub fn tokenize(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    for c in s.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            out.push(std::mem::take(&mut word));
        }
        if c != '.' && !c.is_whitespace() {
            out.push(c.to_string());
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// One step's choice: set field `field`'s value into element `element`, or click it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum NavAction {
    Set { field: usize, element: usize },
    Click { element: usize },
}

/// One observation as the network reads it (host arrays, unpadded).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NavState {
    /// Elements read (≤ max_elements) and fields (≤ max_fields).
    pub elements: usize,
    pub fields: usize,
    /// [elements × ATTRIBUTES × max_tokens] token ids, `PAD` after each attribute's tokens.
    pub element_tokens: Vec<u32>,
    /// [elements × ELEMENT_FEATURES].
    pub element_features: Vec<f32>,
    /// [fields × max_tokens].
    pub field_tokens: Vec<u32>,
    /// [fields × elements]: whether setting field f into element e is open.
    pub set_open: Vec<bool>,
    /// [elements]: whether clicking element e is open.
    pub click_open: Vec<bool>,
    /// The page refs of the elements, to turn a choice into an action.
    pub refs: Vec<NodeRef>,
    /// The fields' values, to turn a choice into an action.
    pub values: Vec<String>,
    pub max_tokens: usize,
}

impl NavState {
    /// Number of choices in this state's flat action layout: all (field, element) sets, then
    /// the clicks.
    pub fn choices(&self) -> usize {
        self.fields * self.elements + self.elements
    }

    pub fn is_open(&self, a: NavAction) -> bool {
        match a {
            NavAction::Set { field, element } => field < self.fields && element < self.elements && self.set_open[field * self.elements + element],
            NavAction::Click { element } => element < self.elements && self.click_open[element],
        }
    }

    /// Whether any choice is open (a page with no elements has none).
    pub fn any_open(&self) -> bool {
        self.set_open.iter().chain(&self.click_open).any(|&o| o)
    }

    /// The environment's action for a choice.
    pub fn action(&self, a: NavAction) -> Action {
        match a {
            NavAction::Set { field, element } => Action::SetValue(self.refs[element], self.values[field].clone()),
            NavAction::Click { element } => Action::Click(self.refs[element]),
        }
    }
}

/// What the featuriser remembers within an episode: the refs of the last observation (for
/// `is_new`) and the choices already taken (closed, as the reference's "not yet acted" mask).
#[derive(Clone, Debug, Default)]
pub struct EpisodeMemory {
    last_refs: Option<HashSet<NodeRef>>,
    set_done: HashSet<(NodeRef, String)>,
    clicked: HashSet<NodeRef>,
}

impl EpisodeMemory {
    /// Closes the choice just taken in `state`.
    pub fn acted(&mut self, state: &NavState, a: NavAction) {
        match a {
            NavAction::Set { field, element } => {
                self.set_done.insert((state.refs[element], state.values[field].clone()));
            }
            NavAction::Click { element } => {
                self.clicked.insert(state.refs[element]);
            }
        }
    }
}

/// The elements the navigator reads: the site root's descendants (the whole page where there is
/// no site root), in ref order, with the root's box as the origin.
fn site_elements(obs: &Observation) -> (Vec<&DomNode>, (f32, f32)) {
    let nodes = &obs.dom.nodes;
    let root = nodes.iter().position(|n| n.id == SITE_ROOT_ID);
    let mut inside = vec![root.is_none(); nodes.len()];
    let origin = match root {
        Some(r) => {
            // Document order puts every descendant after its parent.
            for i in r + 1..nodes.len() {
                inside[i] = nodes[i].parent.is_some_and(|p| p == r || inside[p]);
            }
            (nodes[r].rect.left, nodes[r].rect.top)
        }
        None => nodes.first().map(|n| (n.rect.left, n.rect.top)).unwrap_or((0.0, 0.0)),
    };
    let mut els: Vec<&DomNode> = nodes.iter().zip(&inside).filter(|(_, i)| **i).map(|(n, _)| n).collect();
    els.sort_by_key(|n| n.r#ref);
    (els, origin)
}

fn value_text(v: &NodeValue) -> String {
    match v {
        NodeValue::None => String::new(),
        NodeValue::Checked(b) => b.to_string(),
        NodeValue::Text(s) => s.clone(),
    }
}

/// Token ids of `s`, at most `max` of them, padded with `PAD` to `max`. New tokens join the
/// vocabulary while `grow` and it has room; others are `UNK`.
fn ids(vocab: &mut Vocab, s: &str, max: usize, grow: bool, out: &mut Vec<u32>) {
    let start = out.len();
    for t in tokenize(s).into_iter().take(max) {
        let id = if grow { vocab.id_or_add(&t) } else { vocab.get(&t) };
        out.push(id.unwrap_or(UNK));
    }
    out.resize(start + max, PAD);
}

/// Reads `obs` for the network. `memory` gives `is_new` and the closed choices, and is updated
/// with this observation's refs.
pub fn encode(obs: &Observation, cfg: &NavigatorConfig, vocab: &mut Vocab, grow: bool, memory: &mut EpisodeMemory) -> NavState {
    let (mut els, (ox, oy)) = site_elements(obs);
    els.truncate(cfg.max_elements);
    let t = cfg.max_tokens;
    let mut element_tokens = Vec::with_capacity(els.len() * ATTRIBUTES * t);
    let mut element_features = Vec::with_capacity(els.len() * ELEMENT_FEATURES);
    for n in &els {
        ids(vocab, &n.tag, t, grow, &mut element_tokens);
        // Values typed into fields come from unbounded pools (names, e-mails, card numbers): they
        // would crowd the site's own words out of a capped vocabulary, so they only join it when
        // the fields' values are read too.
        ids(vocab, &value_text(&n.value), t, grow && cfg.field_values, &mut element_tokens);
        ids(vocab, &n.text, t, grow, &mut element_tokens);
        ids(vocab, &n.placeholder, t, grow, &mut element_tokens);
        ids(vocab, &n.classes.join(" "), t, grow, &mut element_tokens);
        let is_new = memory.last_refs.as_ref().is_some_and(|last| !last.contains(&n.r#ref));
        let flag = |b: bool| if b { 1.0 } else { 0.0 };
        element_features.extend([
            flag(n.focused),
            flag(n.tampered),
            flag(is_new),
            flag(n.tag == "DIV"),
            (n.rect.left - ox) / cfg.layout_width,
            (n.rect.top - oy) / cfg.layout_height,
            n.rect.width / cfg.layout_width,
            n.rect.height / cfg.layout_height,
        ]);
    }
    let fields: Vec<_> = obs.instruction.fields.iter().take(cfg.max_fields).collect();
    let mut field_tokens = Vec::with_capacity(fields.len() * t);
    for f in &fields {
        let text = if cfg.field_values { format!("{} {}", f.key, f.value) } else { f.key.clone() };
        ids(vocab, &text, t, grow, &mut field_tokens);
    }
    let refs: Vec<NodeRef> = els.iter().map(|n| n.r#ref).collect();
    let set_open = fields.iter().flat_map(|f| refs.iter().map(|&r| !memory.set_done.contains(&(r, f.value.clone())))).collect();
    // Without click choices (the papers' action space) a page with no fields keeps its clicks.
    let clicks = cfg.click_choices || fields.is_empty();
    let click_open = refs.iter().map(|r| clicks && !memory.clicked.contains(r)).collect();
    memory.last_refs = Some(refs.iter().copied().collect());
    NavState {
        elements: els.len(),
        fields: fields.len(),
        element_tokens,
        element_features,
        field_tokens,
        set_open,
        click_open,
        refs,
        values: fields.iter().map(|f| f.value.clone()).collect(),
        max_tokens: t,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::env::{DomGraph, Field, Instruction, Rect};

    fn node(r: NodeRef, parent: Option<usize>, tag: &str, id: &str, rect: (f32, f32, f32, f32)) -> DomNode {
        DomNode {
            r#ref: r,
            parent,
            tag: tag.into(),
            id: id.into(),
            rect: Rect { left: rect.0, top: rect.1, width: rect.2, height: rect.3 },
            ..DomNode::default()
        }
    }

    /// body > (query text, gsite > (input, button)).
    pub(crate) fn observation() -> Observation {
        let mut nodes = vec![
            node(1, None, "BODY", "", (0.0, 0.0, 400.0, 800.0)),
            node(2, Some(0), "DIV", "query", (0.0, 0.0, 400.0, 100.0)),
            node(3, Some(0), "DIV", "gsite", (10.0, 100.0, 400.0, 600.0)),
            node(5, Some(2), "INPUT_text", "actionable_username", (30.0, 140.0, 360.0, 38.0)),
            node(4, Some(2), "BUTTON", "actionable_submit", (30.0, 200.0, 360.0, 38.0)),
        ];
        nodes[3].placeholder = "User name".into();
        nodes[3].classes = vec!["form-control".into()];
        nodes[3].value = NodeValue::Text("bob.smith".into());
        nodes[3].focused = true;
        nodes[4].text = "Sign in".into();
        nodes[0].children = vec![1, 2];
        nodes[2].children = vec![3, 4];
        Observation {
            instruction: Instruction {
                utterance: String::new(),
                tokens: Vec::new(),
                fields: vec![Field { key: "password".into(), value: "x1".into() }, Field { key: "username".into(), value: "bob".into() }],
            },
            dom: DomGraph { nodes, truncated: 0 },
            page: 0,
            ..Default::default()
        }
    }

    #[test]
    fn tokenises_as_the_reference() {
        assert_eq!(tokenize("Form-Control  btn.primary"), ["form", "-", "control", "btn", "primary"]);
        assert_eq!(tokenize("INPUT_text"), ["input_text"]);
        assert_eq!(tokenize("$12.49, now"), ["$", "12", "49", ",", "now"]);
        assert!(tokenize("  ").is_empty());
    }

    #[test]
    fn reads_the_site_subtree_in_ref_order_relative_to_its_root() {
        let cfg = NavigatorConfig::default();
        let mut vocab = Vocab::new(100);
        let mut mem = EpisodeMemory::default();
        let s = encode(&observation(), &cfg, &mut vocab, true, &mut mem);
        assert_eq!(s.elements, 2, "only #gsite's descendants");
        assert_eq!(s.refs, [4, 5], "ref order");
        assert_eq!(s.fields, 2);
        // The input (ref 5) is second: focused, not new at reset, not a div, box from the root.
        let f = &s.element_features[ELEMENT_FEATURES..];
        assert_eq!(f, &[1.0, 0.0, 0.0, 0.0, 20.0 / 400.0, 40.0 / 640.0, 360.0 / 400.0, 38.0 / 640.0]);
        // Its attributes: tag, value, text, placeholder, classes.
        let t = cfg.max_tokens;
        let attr = |a: usize| -> Vec<&str> {
            s.element_tokens[(ATTRIBUTES + a) * t..(ATTRIBUTES + a + 1) * t].iter().filter(|&&i| i != PAD).map(|&i| vocab.word(i).unwrap()).collect()
        };
        assert_eq!(attr(0), ["input_text"]);
        assert_eq!(attr(1), ["<unk>", "<unk>"], "typed values do not grow the vocabulary");
        assert!(attr(2).is_empty());
        assert_eq!(attr(3), ["user", "name"]);
        assert_eq!(attr(4), ["form", "-", "control"]);
        // Keys only by default.
        let key: Vec<&str> = s.field_tokens[t..2 * t].iter().filter(|&&i| i != PAD).map(|&i| vocab.word(i).unwrap()).collect();
        assert_eq!(key, ["username"]);
        assert!(s.any_open());
        assert_eq!(s.choices(), 2 * 2 + 2);
        // Reading the fields' values, the values typed into elements are words too.
        let with_values = NavigatorConfig { field_values: true, ..cfg.clone() };
        let s2 = encode(&observation(), &with_values, &mut vocab, true, &mut EpisodeMemory::default());
        let value: Vec<&str> =
            s2.element_tokens[(ATTRIBUTES + 1) * t..(ATTRIBUTES + 2) * t].iter().filter(|&&i| i != PAD).map(|&i| vocab.word(i).unwrap()).collect();
        assert_eq!(value, ["bob", "smith"]);
    }

    #[test]
    fn taken_choices_close_and_new_elements_are_marked() {
        let cfg = NavigatorConfig::default();
        let mut vocab = Vocab::new(100);
        let mut mem = EpisodeMemory::default();
        let obs = observation();
        let s = encode(&obs, &cfg, &mut vocab, true, &mut mem);
        let set = NavAction::Set { field: 1, element: 1 };
        assert_eq!(s.action(set), Action::SetValue(5, "bob".into()));
        mem.acted(&s, set);
        mem.acted(&s, NavAction::Click { element: 0 });
        let mut next = obs.clone();
        next.dom.nodes[4].r#ref = 9; // the button replaced by a new element
        let s2 = encode(&next, &cfg, &mut vocab, true, &mut mem);
        assert_eq!(s2.refs, [5, 9]);
        assert!(!s2.is_open(NavAction::Set { field: 1, element: 0 }), "username into ref 5 was taken");
        assert!(s2.is_open(NavAction::Set { field: 0, element: 0 }), "another field into it is open");
        assert!(s2.is_open(NavAction::Click { element: 1 }), "the new element is clickable");
        assert_eq!(s2.element_features[ELEMENT_FEATURES + 2], 1.0, "ref 9 is new");
        assert_eq!(s2.element_features[2], 0.0, "ref 5 is not");
        assert!(!s2.is_open(NavAction::Set { field: 5, element: 0 }), "no such field");
    }

    #[test]
    fn without_click_choices_only_fields_act_unless_there_are_none() {
        let cfg = NavigatorConfig { click_choices: false, ..NavigatorConfig::default() };
        let mut vocab = Vocab::new(100);
        let obs = observation();
        let s = encode(&obs, &cfg, &mut vocab, true, &mut EpisodeMemory::default());
        assert!((0..s.elements).all(|e| !s.is_open(NavAction::Click { element: e })), "the papers' (element, field) tuples only");
        assert!(s.is_open(NavAction::Set { field: 0, element: 1 }), "a field into the button (which clicks it)");
        let mut no_fields = obs.clone();
        no_fields.instruction.fields.clear();
        let s2 = encode(&no_fields, &cfg, &mut vocab, true, &mut EpisodeMemory::default());
        assert!(s2.any_open() && s2.is_open(NavAction::Click { element: 1 }), "a page without fields keeps its clicks");
    }

    #[test]
    fn a_full_vocabulary_gives_unk_and_no_growth_reads_only() {
        let cfg = NavigatorConfig::default();
        let mut vocab = Vocab::new(3);
        let mut mem = EpisodeMemory::default();
        let s = encode(&observation(), &cfg, &mut vocab, false, &mut mem);
        assert_eq!(vocab.len(), 2, "nothing added");
        assert!(s.field_tokens.contains(&UNK));
        let _ = encode(&observation(), &cfg, &mut vocab, true, &mut EpisodeMemory::default());
        assert_eq!(vocab.len(), 3, "grown to its cap");
    }
}

//! What an agent sees: the instruction and the page as a graph of visible elements.

use serde::{Deserialize, Serialize};

use super::instruction::Instruction;

/// A node's handle, stable for the whole episode: the same element keeps its ref across steps,
/// and refs start again at 1 when a new episode begins.
pub type NodeRef = u32;

/// The tag given to text that sits between elements (MiniWoB's `t` pseudo-nodes).
pub const TEXT_TAG: &str = "t";

/// One observation of the task page.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Observation {
    pub instruction: Instruction,
    pub dom: DomGraph,
    /// Which page of a multi-page site is showing (0 for single-page tasks).
    #[serde(default)]
    pub page: u32,
    /// How the observation was taken (what a reset waited for, whether it reloaded the page).
    #[serde(default, skip_serializing_if = "ObservationMeta::is_empty")]
    pub meta: ObservationMeta,
}

/// Equality is about what the page shows: `meta` (wall-clock waits, reloads) is left out, so the
/// same seed gives equal observations however long the page took to settle.
impl PartialEq for Observation {
    fn eq(&self, other: &Self) -> bool {
        self.instruction == other.instruction && self.dom == other.dom && self.page == other.page
    }
}

/// What the environment did to take an observation, beside what it shows. Empty after a step.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ObservationMeta {
    /// At reset, when the episode's page was still loading images or fonts: the wait for them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle: Option<Settle>,
    /// At reset, when the page was reloaded first to clear state an earlier episode left (a
    /// widget still open outside the task area): what was found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reloaded: Option<String>,
}

impl ObservationMeta {
    pub fn is_empty(&self) -> bool {
        self.settle.is_none() && self.reloaded.is_none()
    }
}

/// A reset's wait for the images and fonts the new episode's page was loading, so that boxes are
/// final (an icon is 0 px wide until its image arrives).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Settle {
    /// Images that had not finished loading when the episode started.
    pub images: u32,
    /// Whether web fonts were still loading.
    pub fonts: bool,
    /// How long the lab waited (milliseconds).
    pub waited_ms: u32,
    /// The wait reached its bound (`EnvConfig::settle_timeout_ms`) with something still loading.
    pub timed_out: bool,
}

/// The visible DOM, flattened in document (pre-)order: `nodes[0]` is `BODY`, and every node's
/// parent comes before it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DomGraph {
    pub nodes: Vec<DomNode>,
    /// Number of visible nodes the page had beyond what the reader kept (0 when nothing was cut).
    #[serde(default)]
    pub truncated: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DomNode {
    #[serde(rename = "ref")]
    pub r#ref: NodeRef,
    /// Index of the parent in [`DomGraph::nodes`]; `None` for the root.
    pub parent: Option<usize>,
    /// Indices of the children in [`DomGraph::nodes`], in document order.
    pub children: Vec<usize>,
    /// Upper-case tag name; inputs are `INPUT_<type>` (e.g. `INPUT_checkbox`); text pseudo-nodes
    /// are [`TEXT_TAG`].
    pub tag: String,
    /// Whitespace-collapsed text, on leaves only (elements without element children, and `t`
    /// nodes).
    pub text: String,
    pub value: NodeValue,
    pub id: String,
    pub classes: Vec<String>,
    pub rect: Rect,
    pub focused: bool,
    /// The element was the target of a click during this episode.
    pub tampered: bool,
    /// For `SELECT`: the options' texts, in order. Empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
    /// The `placeholder`, `name` and `aria-label` attributes (empty when absent): what labels a
    /// field on generated sites, and what the gMiniWoB navigator reads.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub placeholder: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub aria_label: String,
    /// Computed background and text colours (`rgb(...)`/`rgba(...)`), as MiniWoB's `getDOMInfo`
    /// gives them; empty for text pseudo-nodes.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub bg_color: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub fg_color: String,
}

/// An element's value: text for text-like inputs, checked state for checkboxes and radios.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum NodeValue {
    #[default]
    None,
    Checked(bool),
    Text(String),
}

impl NodeValue {
    pub fn as_text(&self) -> Option<&str> {
        match self {
            NodeValue::Text(s) => Some(s),
            _ => None,
        }
    }
    pub fn is_checked(&self) -> bool {
        matches!(self, NodeValue::Checked(true))
    }
}

/// Bounding box in the task page's viewport coordinates (CSS pixels).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Rect {
    pub left: f32,
    pub top: f32,
    pub width: f32,
    pub height: f32,
}

impl Rect {
    pub fn center(&self) -> (f32, f32) {
        (self.left + self.width / 2.0, self.top + self.height / 2.0)
    }
}

impl DomNode {
    pub fn is_leaf(&self) -> bool {
        self.children.is_empty()
    }
    pub fn is_text(&self) -> bool {
        self.tag == TEXT_TAG
    }
    /// Elements that accept typed text (text-like inputs and textareas).
    pub fn accepts_text(&self) -> bool {
        const TEXT_INPUTS: [&str; 9] =
            ["INPUT_text", "INPUT_password", "INPUT_email", "INPUT_search", "INPUT_tel", "INPUT_url", "INPUT_number", "INPUT_date", "TEXTAREA"];
        TEXT_INPUTS.contains(&self.tag.as_str())
    }
    pub fn has_class(&self, class: &str) -> bool {
        self.classes.iter().any(|c| c == class)
    }
}

impl DomGraph {
    pub fn get(&self, r: NodeRef) -> Option<&DomNode> {
        self.nodes.iter().find(|n| n.r#ref == r)
    }
    pub fn index_of(&self, r: NodeRef) -> Option<usize> {
        self.nodes.iter().position(|n| n.r#ref == r)
    }
    /// Leaves in document order: DOM-Q-Net's candidate actions.
    pub fn leaves(&self) -> impl Iterator<Item = &DomNode> {
        self.nodes.iter().filter(|n| n.is_leaf())
    }
    /// Undirected parent-child edges as index pairs (parent, child).
    pub fn edges(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.nodes.iter().enumerate().filter_map(|(i, n)| n.parent.map(|p| (p, i)))
    }
    /// The text of a node and everything under it, joined by spaces.
    pub fn subtree_text(&self, index: usize) -> String {
        let mut parts = Vec::new();
        let mut stack = vec![index];
        while let Some(i) = stack.pop() {
            let n = &self.nodes[i];
            if !n.text.is_empty() {
                parts.push(n.text.as_str());
            }
            stack.extend(n.children.iter().rev());
        }
        parts.join(" ")
    }
    /// Checks the structural invariants every reader must keep: preorder, consistent
    /// parent/child links, unique refs. Returns a description of the first violation.
    /// Linear in the nodes and links (a parent's children are never searched), so a page of
    /// tens of thousands of siblings validates as fast as a deep one.
    pub fn validate(&self) -> Result<(), String> {
        let mut seen = std::collections::HashSet::with_capacity(self.nodes.len());
        // How often each node is listed among some node's children. A parent comes before its
        // children, so by node i its parent's list has been counted.
        let mut listed = vec![0u32; self.nodes.len()];
        for (i, n) in self.nodes.iter().enumerate() {
            if !seen.insert(n.r#ref) {
                return Err(format!("ref {} appears twice", n.r#ref));
            }
            match n.parent {
                None if i != 0 => return Err(format!("node {i} has no parent but is not the root")),
                Some(p) if p >= i => return Err(format!("node {i} comes before its parent {p}")),
                Some(_) if listed[i] == 0 => return Err(format!("node {i} is missing from its parent's children")),
                _ => {}
            }
            for &c in &n.children {
                if self.nodes.get(c).and_then(|k| k.parent) != Some(i) {
                    return Err(format!("child {c} of node {i} does not point back"));
                }
                listed[c] += 1;
                if listed[c] > 1 {
                    return Err(format!("child {c} of node {i} is listed twice"));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::instruction::Field;

    fn node(r: NodeRef, parent: Option<usize>, tag: &str, text: &str) -> DomNode {
        DomNode {
            r#ref: r,
            parent,
            children: Vec::new(),
            tag: tag.into(),
            text: text.into(),
            value: NodeValue::None,
            id: String::new(),
            classes: Vec::new(),
            rect: Rect { left: 1.0, top: 2.0, width: 30.0, height: 10.0 },
            focused: false,
            tampered: false,
            options: Vec::new(),
            ..DomNode::default()
        }
    }

    /// BODY > DIV(#form) > [t "Name", INPUT_text, BUTTON "Go"], BODY > A "help"; children linked.
    fn sample() -> DomGraph {
        let mut nodes = vec![
            node(1, None, "BODY", ""),
            node(2, Some(0), "DIV", ""),
            node(3, Some(1), TEXT_TAG, "Name"),
            node(4, Some(1), "INPUT_text", ""),
            node(5, Some(1), "BUTTON", "Go"),
            node(6, Some(0), "A", "help"),
        ];
        nodes[1].id = "form".into();
        nodes[1].classes = vec!["box".into(), "wide".into()];
        nodes[3].value = NodeValue::Text("Ann".into());
        nodes[3].focused = true;
        nodes[4].tampered = true;
        for i in 0..nodes.len() {
            if let Some(p) = nodes[i].parent {
                nodes[p].children.push(i);
            }
        }
        DomGraph { nodes, truncated: 0 }
    }

    #[test]
    fn a_well_formed_graph_validates() {
        sample().validate().unwrap();
        DomGraph::default().validate().unwrap();
    }

    #[test]
    fn validate_names_each_broken_invariant() {
        let mut g = sample();
        g.nodes[5].r#ref = 2;
        assert_eq!(g.validate().unwrap_err(), "ref 2 appears twice");

        let mut g = sample();
        g.nodes[5].parent = None;
        g.nodes[0].children.retain(|&c| c != 5);
        assert_eq!(g.validate().unwrap_err(), "node 5 has no parent but is not the root");

        // A node listed before its parent (not preorder).
        let mut g = sample();
        g.nodes[2].parent = Some(4);
        g.nodes[1].children.retain(|&c| c != 2);
        g.nodes[4].children.push(2);
        assert_eq!(g.validate().unwrap_err(), "node 2 comes before its parent 4");

        let mut g = sample();
        g.nodes[1].children.retain(|&c| c != 3);
        assert_eq!(g.validate().unwrap_err(), "node 3 is missing from its parent's children");

        let mut g = sample();
        g.nodes[0].children.push(3);
        assert_eq!(g.validate().unwrap_err(), "child 3 of node 0 does not point back");

        let mut g = sample();
        g.nodes[0].children.push(99);
        assert_eq!(g.validate().unwrap_err(), "child 99 of node 0 does not point back");

        // A child listed twice by its own parent (it would be read twice everywhere).
        let mut g = sample();
        let c = g.nodes[1].children[0];
        g.nodes[1].children.push(c);
        assert_eq!(g.validate().unwrap_err(), format!("child {c} of node 1 is listed twice"));
    }

    #[test]
    fn leaves_edges_lookup_and_text() {
        let g = sample();
        let leaves: Vec<NodeRef> = g.leaves().map(|n| n.r#ref).collect();
        assert_eq!(leaves, [3, 4, 5, 6], "leaves in document order, text nodes included");
        assert!(g.nodes[2].is_text() && !g.nodes[3].is_text());

        let edges: Vec<(usize, usize)> = g.edges().collect();
        assert_eq!(edges, [(0, 1), (1, 2), (1, 3), (1, 4), (0, 5)]);
        assert_eq!(edges.len(), g.nodes.len() - 1, "a tree has one edge per non-root node");

        assert_eq!(g.get(5).map(|n| n.text.as_str()), Some("Go"));
        assert_eq!(g.index_of(6), Some(5));
        assert!(g.get(7).is_none() && g.index_of(7).is_none());
        assert_eq!(g.subtree_text(1), "Name Go");
        assert_eq!(g.subtree_text(0), "Name Go help");
        assert!(g.nodes[1].has_class("wide") && !g.nodes[1].has_class("wid"));
        assert!(g.nodes[3].accepts_text() && !g.nodes[4].accepts_text());
        assert_eq!(g.nodes[3].rect.center(), (16.0, 7.0));
    }

    #[test]
    fn node_values() {
        assert_eq!(NodeValue::Text("x".into()).as_text(), Some("x"));
        assert_eq!(NodeValue::Checked(true).as_text(), None);
        assert!(NodeValue::Checked(true).is_checked());
        assert!(!NodeValue::Checked(false).is_checked() && !NodeValue::None.is_checked());
    }

    #[test]
    fn observations_survive_a_json_round_trip() {
        let mut dom = sample();
        dom.truncated = 3;
        dom.nodes[4].value = NodeValue::Checked(false);
        dom.nodes[5].tag = "SELECT".into();
        dom.nodes[5].options = vec!["Apple".into(), "Banana".into()];
        let obs = Observation {
            instruction: Instruction::new("Enter \"Ann\".", vec![Field { key: "target".into(), value: "Ann".into() }]),
            dom,
            page: 2,
            meta: ObservationMeta::default(),
        };
        let json = serde_json::to_string(&obs).unwrap();
        let back: Observation = serde_json::from_str(&json).unwrap();
        assert_eq!(back, obs);

        // The wire format the app's JavaScript reads.
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let n = &v["dom"]["nodes"];
        assert_eq!(n[0]["ref"], 1);
        assert_eq!(n[0]["parent"], serde_json::Value::Null);
        assert_eq!(n[1]["children"], serde_json::json!([2, 3, 4]));
        assert_eq!(n[0]["value"], serde_json::Value::Null, "no value is null");
        assert_eq!(n[3]["value"], "Ann", "text values are plain strings");
        assert_eq!(n[4]["value"], false, "checked states are plain booleans");
        assert!(n[0].get("options").is_none(), "empty option lists are left out");
        assert_eq!(n[5]["options"], serde_json::json!(["Apple", "Banana"]));
    }

    #[test]
    fn meta_travels_on_the_wire_but_is_not_part_of_equality() {
        let plain = Observation { dom: sample(), ..Observation::default() };
        let json = serde_json::to_string(&plain).unwrap();
        assert!(!json.contains("meta"), "an empty meta is left out: {json}");
        let mut settled = plain.clone();
        settled.meta = ObservationMeta {
            settle: Some(Settle { images: 1, fonts: false, waited_ms: 37, timed_out: false }),
            reloaded: Some("DIV#picker was left open".into()),
        };
        assert_eq!(settled, plain, "the same page, however it was waited for");
        let back: Observation = serde_json::from_str(&serde_json::to_string(&settled).unwrap()).unwrap();
        assert_eq!(back.meta, settled.meta);
        let mut other = plain.clone();
        other.page = 1;
        assert_ne!(other, plain);
    }

    #[test]
    fn older_observations_without_page_or_truncated_still_load() {
        let json = r#"{"instruction":{"utterance":"u","tokens":["u"],"fields":[]},
            "dom":{"nodes":[{"ref":1,"parent":null,"children":[],"tag":"BODY","text":"","value":null,
            "id":"","classes":[],"rect":{"left":0,"top":0,"width":160,"height":210},"focused":true,"tampered":false}]}}"#;
        let obs: Observation = serde_json::from_str(json).unwrap();
        assert_eq!((obs.page, obs.dom.truncated), (0, 0));
        assert!(obs.dom.nodes[0].options.is_empty());
        obs.dom.validate().unwrap();
    }
}

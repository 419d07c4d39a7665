//! What an agent sees: the instruction and the page as a graph of visible elements.

use serde::{Deserialize, Serialize};

use super::instruction::Instruction;

/// A node's handle, stable for the whole episode: the same element keeps its ref across steps,
/// and refs start again at 1 when a new episode begins.
pub type NodeRef = u32;

/// The tag given to text that sits between elements (MiniWoB's `t` pseudo-nodes).
pub const TEXT_TAG: &str = "t";

/// One observation of the task page.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    pub instruction: Instruction,
    pub dom: DomGraph,
    /// Which page of a multi-page site is showing (0 for single-page tasks).
    #[serde(default)]
    pub page: u32,
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

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
}

/// An element's value: text for text-like inputs, checked state for checkboxes and radios.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum NodeValue {
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
        const TEXT_INPUTS: [&str; 9] = [
            "INPUT_text",
            "INPUT_password",
            "INPUT_email",
            "INPUT_search",
            "INPUT_tel",
            "INPUT_url",
            "INPUT_number",
            "INPUT_date",
            "TEXTAREA",
        ];
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
        self.nodes
            .iter()
            .enumerate()
            .filter_map(|(i, n)| n.parent.map(|p| (p, i)))
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
    pub fn validate(&self) -> Result<(), String> {
        let mut seen = std::collections::HashSet::new();
        for (i, n) in self.nodes.iter().enumerate() {
            if !seen.insert(n.r#ref) {
                return Err(format!("ref {} appears twice", n.r#ref));
            }
            match n.parent {
                None if i != 0 => return Err(format!("node {i} has no parent but is not the root")),
                Some(p) if p >= i => return Err(format!("node {i} comes before its parent {p}")),
                Some(p) if !self.nodes[p].children.contains(&i) => {
                    return Err(format!("node {i} is missing from its parent's children"));
                }
                _ => {}
            }
            for &c in &n.children {
                if self.nodes.get(c).and_then(|k| k.parent) != Some(i) {
                    return Err(format!("child {c} of node {i} does not point back"));
                }
            }
        }
        Ok(())
    }
}

//! One `getDOMInfo` snapshot of a published demonstration as our DOM graph: flattened in
//! preorder and cut at the node cap as the lab's reader cuts a live page, every node given a ref
//! of its own.
//!
//! MiniWoB++'s refs are not always unique within a snapshot: the page's wrappers (BODY, `#wrap`,
//! `#area`) keep the refs they got in an earlier episode while the new episode's elements are
//! numbered from 1 again, so an email-inbox snapshot can hold a BODY and a SPAN both with ref 85.
//! The authors' Python reads a snapshot's elements children-first (post-order) and looks an
//! element up by ref as the first one carrying it (`MiniWoBState.dom_elements`,
//! `EpisodeGraph._element_with_ref`): the ref names the task's element, not the wrapper. We read
//! it the same way; the later carriers (and any node without a usable ref) get fresh refs, so
//! each stays a distinct, clickable element.

use std::collections::HashSet;

use serde::Deserialize;

use crate::env::{DomGraph, DomNode, NodeRef, NodeValue, Rect};

/// `getDOMInfo` gives text pseudo-nodes negative refs (-1, -2, …); ours are unsigned, so they are
/// moved above this offset (element refs stay below it).
pub const TEXT_REF_OFFSET: NodeRef = 1 << 31;
/// A ref a snapshot gives twice is taken, for its later carriers, with this bit flipped (the
/// same element then keeps the same fresh ref from snapshot to snapshot).
const RENUMBER_BIT: NodeRef = 1 << 30;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct RawNode {
    pub tag: String,
    #[serde(default)]
    pub left: Option<f32>,
    #[serde(default)]
    pub top: Option<f32>,
    #[serde(default)]
    pub width: Option<f32>,
    #[serde(default)]
    pub height: Option<f32>,
    #[serde(default)]
    id: Option<String>,
    /// A string; SVG elements' `className` is an SVGAnimatedString, which `JSON.stringify` wrote
    /// as an object (`{}`): its classes are lost.
    #[serde(default)]
    pub classes: Option<serde_json::Value>,
    #[serde(rename = "ref", default)]
    pub r#ref: Option<i64>,
    #[serde(default)]
    bg_color: Option<String>,
    #[serde(default)]
    fg_color: Option<String>,
    #[serde(default)]
    pub children: Vec<RawNode>,
    #[serde(default)]
    focused: bool,
    #[serde(default)]
    tampered: bool,
    #[serde(default)]
    pub recording_target: bool,
    #[serde(default)]
    pub value: Option<serde_json::Value>,
    #[serde(default)]
    pub text: Option<String>,
}

/// The ref a file's ref maps to, when it is one we can use: elements keep theirs, text
/// pseudo-nodes' negative refs move above [`TEXT_REF_OFFSET`].
fn mapped(raw: Option<i64>) -> Option<NodeRef> {
    let r = raw?;
    let offset = TEXT_REF_OFFSET as u64;
    if r > 0 && (r as u64) < offset {
        Some(r as NodeRef)
    } else if r < 0 && r.unsigned_abs() < offset {
        Some(TEXT_REF_OFFSET + r.unsigned_abs() as NodeRef)
    } else {
        None
    }
}

/// A snapshot's nodes in preorder (the first `max_nodes`), each with its parent and ref.
pub(super) struct Resolved<'a> {
    pub nodes: Vec<&'a RawNode>,
    parents: Vec<Option<usize>>,
    pub refs: Vec<NodeRef>,
    /// Nodes beyond `max_nodes`, left out as the reader leaves them out.
    pub cut: u32,
    /// Nodes that got a fresh ref (a ref given twice, or none usable).
    pub renumbered: u32,
}

impl<'a> Resolved<'a> {
    pub fn new(root: &'a RawNode, max_nodes: usize) -> Self {
        let mut nodes = Vec::new();
        let mut parents = Vec::new();
        let mut cut = 0u32;
        // Preorder, iteratively (a file may nest deeply); the reader keeps the first max_nodes.
        let mut stack: Vec<(&RawNode, Option<usize>)> = vec![(root, None)];
        while let Some((n, parent)) = stack.pop() {
            if nodes.len() >= max_nodes {
                cut = cut.saturating_add(1);
                continue;
            }
            let i = nodes.len();
            nodes.push(n);
            parents.push(parent);
            stack.extend(n.children.iter().rev().map(|c| (c, Some(i))));
        }
        // Post-order of the kept tree: children before their parent, as the authors list them.
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
        for (i, p) in parents.iter().enumerate() {
            if let Some(p) = p {
                children[*p].push(i);
            }
        }
        let mut post = Vec::with_capacity(nodes.len());
        let mut walk: Vec<(usize, bool)> = if nodes.is_empty() { Vec::new() } else { vec![(0, false)] };
        while let Some((i, expanded)) = walk.pop() {
            if expanded {
                post.push(i);
            } else {
                walk.push((i, true));
                walk.extend(children[i].iter().rev().map(|&c| (c, false)));
            }
        }
        // The first carrier in post-order keeps a ref; the rest, and nodes without a usable
        // one, are renumbered in preorder.
        let mut refs: Vec<Option<NodeRef>> = vec![None; nodes.len()];
        let mut used = HashSet::with_capacity(nodes.len());
        for &i in &post {
            if let Some(r) = mapped(nodes[i].r#ref)
                && used.insert(r)
            {
                refs[i] = Some(r);
            }
        }
        let mut renumbered = 0;
        let refs = refs
            .iter()
            .enumerate()
            .map(|(i, r)| {
                r.unwrap_or_else(|| {
                    renumbered += 1;
                    let mut fresh = mapped(nodes[i].r#ref).map_or(NodeRef::MAX, |r| r ^ RENUMBER_BIT);
                    while fresh == 0 || used.contains(&fresh) {
                        fresh = fresh.checked_sub(1).unwrap_or(NodeRef::MAX);
                    }
                    used.insert(fresh);
                    fresh
                })
            })
            .collect();
        Resolved { nodes, parents, refs, cut, renumbered }
    }

    /// The ref of the node the recorder marked as the event's target, when it was kept.
    pub fn target(&self) -> Option<NodeRef> {
        self.nodes.iter().position(|n| n.recording_target).map(|i| self.refs[i])
    }

    /// The node with (our) ref `r`.
    pub fn node(&self, r: NodeRef) -> Option<&'a RawNode> {
        self.refs.iter().position(|&q| q == r).map(|i| self.nodes[i])
    }

    /// The value of the node with (our) ref `r`.
    pub fn value_of(&self, r: NodeRef) -> Option<&'a serde_json::Value> {
        self.refs.iter().position(|&q| q == r).and_then(|i| self.nodes[i].value.as_ref())
    }

    /// The snapshot as a DOM graph.
    pub fn graph(&self) -> DomGraph {
        let mut g = DomGraph { nodes: Vec::with_capacity(self.nodes.len()), truncated: self.cut };
        for (i, n) in self.nodes.iter().enumerate() {
            let value = match &n.value {
                Some(serde_json::Value::Bool(b)) => NodeValue::Checked(*b),
                Some(serde_json::Value::String(s)) => NodeValue::Text(s.clone()),
                Some(serde_json::Value::Number(x)) => NodeValue::Text(x.to_string()),
                // Absent, null, or a shape no input has: no value, as the authors would compare it.
                _ => NodeValue::None,
            };
            let classes = match &n.classes {
                Some(serde_json::Value::String(c)) => c.split_whitespace().map(str::to_string).collect(),
                // The authors read an SVG object as the one class SVG_CLASS; the lab's reader reads
                // an SVG element's class attribute, which the file lost, so it has none here (a
                // class-filtered step would match nothing on a live page).
                _ => Vec::new(),
            };
            g.nodes.push(DomNode {
                r#ref: self.refs[i],
                parent: self.parents[i],
                children: Vec::new(),
                tag: n.tag.clone(),
                text: n.text.as_deref().map(|t| t.split_whitespace().collect::<Vec<_>>().join(" ")).unwrap_or_default(),
                value,
                id: n.id.clone().unwrap_or_default(),
                classes,
                rect: Rect { left: n.left.unwrap_or(0.0), top: n.top.unwrap_or(0.0), width: n.width.unwrap_or(0.0), height: n.height.unwrap_or(0.0) },
                focused: n.focused,
                tampered: n.tampered,
                bg_color: n.bg_color.clone().unwrap_or_default(),
                fg_color: n.fg_color.clone().unwrap_or_default(),
                ..DomNode::default()
            });
            if let Some(p) = self.parents[i] {
                g.nodes[p].children.push(i);
            }
        }
        g
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(tag: &str, r: Option<i64>, children: Vec<serde_json::Value>) -> serde_json::Value {
        let mut v = serde_json::json!({"tag": tag, "children": children});
        if let Some(r) = r {
            v["ref"] = r.into();
        }
        v
    }

    fn read(v: serde_json::Value) -> RawNode {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn a_ref_given_twice_names_the_first_carrier_children_first_as_the_authors_read_it() {
        // The email-inbox shape: BODY, #wrap and #area kept refs 85–87 from an earlier episode;
        // the new episode numbered a SPAN 85 and its two DIVs 86 and 87.
        let root = read(node(
            "BODY",
            Some(85),
            vec![node(
                "DIV",
                Some(86),
                vec![node(
                    "DIV",
                    Some(87),
                    vec![node("DIV", Some(3), vec![node("SPAN", Some(85), vec![node("DIV", Some(86), vec![]), node("DIV", Some(87), vec![])])])],
                )],
            )],
        ));
        let r = Resolved::new(&root, 1000);
        let tags: Vec<(&str, NodeRef)> = r.nodes.iter().zip(&r.refs).map(|(n, &q)| (n.tag.as_str(), q)).collect();
        assert_eq!(tags[3..], [("DIV", 3), ("SPAN", 85), ("DIV", 86), ("DIV", 87)]);
        // The wrappers get the same ref with bit 30 set: unique, and stable across snapshots.
        assert_eq!(r.refs[..3], [85 | RENUMBER_BIT, 86 | RENUMBER_BIT, 87 | RENUMBER_BIT]);
        assert_eq!(r.renumbered, 3);
        r.graph().validate().unwrap();
    }

    #[test]
    fn refs_out_of_range_or_missing_are_renumbered_and_i64_min_does_not_overflow() {
        let root = read(node(
            "BODY",
            Some(i64::MIN),
            vec![
                node("t", Some(-4), vec![]),
                node("DIV", None, vec![]),
                node("DIV", Some(i64::MAX), vec![]),
                node("DIV", Some(0), vec![]),
                node("t", Some(-(1 << 31)), vec![]),
            ],
        ));
        let r = Resolved::new(&root, 1000);
        assert_eq!(r.refs[1], TEXT_REF_OFFSET + 4);
        assert_eq!(r.renumbered, 5);
        r.graph().validate().unwrap();
    }

    #[test]
    fn a_page_over_the_node_cap_is_cut_in_preorder_as_the_reader_cuts_it() {
        let buttons: Vec<serde_json::Value> = (0..50).map(|i| node("BUTTON", Some(10 + i), vec![])).collect();
        let root = read(node("BODY", Some(1), vec![node("DIV", Some(2), buttons), node("DIV", Some(3), vec![])]));
        let r = Resolved::new(&root, 20);
        let g = r.graph();
        assert_eq!((g.nodes.len(), g.truncated, r.cut), (20, 33, 33));
        assert_eq!(g.nodes[19].r#ref, 27);
        g.validate().unwrap();
    }

    #[test]
    fn svg_classes_given_as_an_object_read_as_none() {
        let mut svg = node("svg", Some(2), vec![]);
        svg["classes"] = serde_json::json!({});
        let mut div = node("DIV", Some(3), vec![]);
        div["classes"] = "a  b".into();
        let root = read(node("BODY", Some(1), vec![svg, div]));
        let g = Resolved::new(&root, 1000).graph();
        assert!(g.nodes[1].classes.is_empty());
        assert_eq!(g.nodes[2].classes, ["a", "b"]);
    }
}

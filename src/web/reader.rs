//! Reads the live DOM of the task page into a [`DomGraph`], with web-sys only (it does not rely on
//! the page's own `getDOMInfo`), so it works on any same-origin page.
//!
//! Rules (MiniWoB's, so agents see the same graph on its pages and ours):
//! - the walk starts at `BODY`; an element with zero width or height is skipped with its subtree
//!   (this drops hidden nodes and a drop-down's `<option>`s; a list box's options have boxes and
//!   are nodes), as are scripts and the contract's chrome (`#query`, `#sync-task-cover`,
//!   `#reward-display`, `#click-canvas`);
//! - text mixed with elements becomes `t` pseudo-nodes, one per line box the text occupies (a run
//!   that wraps over three lines is three nodes, as `getDOMInfo` splits it); an element without
//!   element children carries its own text (a select: its chosen option, our addition);
//! - tags are `tagName` (upper case for HTML, as written for SVG), inputs `INPUT_<type>`;
//! - refs live on the nodes as expandos and stay valid while the node is in `refs` (one episode);
//!   the second and later lines of a text run keep theirs in an array on the text node.

use js_sys::Reflect;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Document, Element, HtmlInputElement, HtmlSelectElement, HtmlTextAreaElement, Node};

use super::frame::TAMPER_KEY;
use super::util::{as_html_tag, call, get, set};
use crate::env::{DomGraph, DomNode, NodeRef, NodeValue, Rect, TEXT_TAG};

const REF_KEY: &str = "__weblabRef";
/// On a text node that wraps: `[episode, ref of line 1, ref of line 2, ...]` (line 0 uses `REF_KEY`).
const LINE_REFS_KEY: &str = "__weblabLineRefs";
/// Episode ids unique over every reader of the tab, so a line ref from another episode is never
/// taken for one of this episode's.
static EPISODES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
const SKIP_IDS: [&str; 4] = ["query", "sync-task-cover", "reward-display", "click-canvas"];
const SKIP_TAGS: [&str; 8] = ["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "HEAD", "META", "LINK", "TITLE"];

#[derive(Default)]
pub struct DomReader {
    /// `refs[r - 1]` is the node with ref `r` in this episode (a text node once per line).
    refs: Vec<Node>,
    episode: u32,
}

impl DomReader {
    /// Forgets all refs: the next read numbers nodes from 1 again.
    pub fn begin_episode(&mut self) {
        self.refs.clear();
        self.episode = EPISODES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// The node behind a ref of this episode, if it is still in the document.
    pub fn node(&self, r: NodeRef) -> Option<&Node> {
        let node = self.refs.get((r as usize).checked_sub(1)?)?;
        node.is_connected().then_some(node)
    }

    pub(crate) fn ref_of(&mut self, node: &Node) -> NodeRef {
        let key = JsValue::from_str(REF_KEY);
        if let Some(r) = Reflect::get(node, &key).ok().and_then(|v| v.as_f64()) {
            let r = r as usize;
            // Valid only if this very node holds it (an expando from an older episode is stale).
            if r >= 1 && self.refs.get(r - 1).is_some_and(|n| n == node) {
                return r as NodeRef;
            }
        }
        self.refs.push(node.clone());
        let r = self.refs.len() as NodeRef;
        let _ = Reflect::set(node, &key, &JsValue::from(r));
        r
    }

    /// The ref of line `line` (from 0) of a text node that wraps.
    fn line_ref(&mut self, node: &Node, line: u32) -> NodeRef {
        if line == 0 {
            return self.ref_of(node);
        }
        let held = get(node, LINE_REFS_KEY);
        let refs: js_sys::Array = match held.dyn_into::<js_sys::Array>() {
            Ok(a) if a.get(0).as_f64() == Some(self.episode as f64) => a,
            _ => {
                let a = js_sys::Array::of1(&JsValue::from(self.episode));
                set(node, LINE_REFS_KEY, &a);
                a
            }
        };
        if let Some(r) = refs.get(line).as_f64() {
            return r as NodeRef;
        }
        self.refs.push(node.clone());
        let r = self.refs.len() as NodeRef;
        refs.set(line, JsValue::from(r));
        r
    }

    /// Reads the visible DOM of `doc`. `epoch` identifies the running episode (for tamper marks).
    pub fn read(&mut self, doc: &Document, epoch: u32, max_nodes: usize) -> DomGraph {
        let mut graph = DomGraph::default();
        let Some(body) = doc.body() else { return graph };
        let active: Option<JsValue> = doc.active_element().map(Into::into);
        let win = doc.default_view();
        let mut walk = Walk { reader: self, graph: &mut graph, doc, win, active, epoch, max_nodes };
        walk.element(body.unchecked_ref(), None, true);
        graph
    }
}

struct Walk<'a> {
    reader: &'a mut DomReader,
    graph: &'a mut DomGraph,
    doc: &'a Document,
    win: Option<web_sys::Window>,
    active: Option<JsValue>,
    epoch: u32,
    max_nodes: usize,
}

impl Walk<'_> {
    fn push(&mut self, node: DomNode) -> Option<usize> {
        if self.graph.nodes.len() >= self.max_nodes {
            self.graph.truncated += 1;
            return None;
        }
        let i = self.graph.nodes.len();
        if let Some(p) = node.parent {
            self.graph.nodes[p].children.push(i);
        }
        self.graph.nodes.push(node);
        Some(i)
    }

    fn element(&mut self, el: &Element, parent: Option<usize>, is_root: bool) {
        // `tagName` as getDOMInfo gives it: upper case for HTML, as written for SVG (`svg`, `circle`).
        let tag_name = el.tag_name();
        if SKIP_TAGS.contains(&tag_name.to_ascii_uppercase().as_str()) {
            return;
        }
        let id = el.id();
        if SKIP_IDS.contains(&id.as_str()) {
            return;
        }
        let r = el.get_bounding_client_rect();
        let rect = Rect { left: r.left() as f32, top: r.top() as f32, width: r.width() as f32, height: r.height() as f32 };
        if !is_root && (rect.width <= 0.0 || rect.height <= 0.0) {
            return;
        }
        let node_ref = self.reader.ref_of(el.unchecked_ref());
        let (tag, value, options) = describe(el, &tag_name);
        let classes = el.get_attribute("class").map(|c| c.split_whitespace().map(str::to_string).collect()).unwrap_or_default();
        let focused = self.active.as_ref().is_some_and(|a| a == AsRef::<JsValue>::as_ref(el));
        let tampered = get(el, TAMPER_KEY).as_f64() == Some(self.epoch as f64);
        let attr = |name: &str| el.get_attribute(name).map(|v| collapse(&v)).unwrap_or_default();
        let (bg_color, fg_color) = self
            .win
            .as_ref()
            .and_then(|w| w.get_computed_style(el).ok().flatten())
            .map(|st| (st.get_property_value("background-color").unwrap_or_default(), st.get_property_value("color").unwrap_or_default()))
            .unwrap_or_default();
        let node = DomNode {
            r#ref: node_ref,
            parent,
            children: Vec::new(),
            tag,
            text: String::new(),
            value,
            id,
            classes,
            rect,
            focused,
            tampered,
            options,
            placeholder: attr("placeholder"),
            name: attr("name"),
            aria_label: attr("aria-label"),
            bg_color,
            fg_color,
        };
        let Some(index) = self.push(node) else { return };

        // Children: elements recurse; text becomes `t` nodes only when mixed with elements.
        let kids = el.child_nodes();
        let has_element_child = el.child_element_count() > 0;
        for k in 0..kids.length() {
            let Some(kid) = kids.item(k) else { continue };
            match kid.node_type() {
                Node::ELEMENT_NODE => self.element(kid.unchecked_ref(), Some(index), false),
                Node::TEXT_NODE if has_element_child => self.text(&kid, index),
                _ => {}
            }
        }
        if self.graph.nodes[index].children.is_empty() {
            let node = &mut self.graph.nodes[index];
            node.text = match (&node.value, node.options.is_empty()) {
                // A select shows its chosen option (getDOMInfo gives it no text: our addition).
                (NodeValue::Text(v), false) => selected_text(el).unwrap_or_else(|| v.clone()),
                // As getDOMInfo: only an element without element children has text of its own,
                // even when none of its children shows (a closed menu's items).
                _ if has_element_child => String::new(),
                _ => collapse(&el.text_content().unwrap_or_default()),
            };
        }
    }

    /// A text run mixed with elements: one `t` node per line box it occupies.
    fn text(&mut self, node: &Node, parent: usize) {
        let data = node.text_content().unwrap_or_default();
        if data.trim().is_empty() {
            return;
        }
        let Ok(range) = self.doc.create_range() else { return };
        if range.select_node_contents(node).is_err() {
            return;
        }
        if rect_count(&range) <= 1 {
            self.line(node, 0, collapse(&data), &range, parent);
            return;
        }
        // It wraps: from each start, the longest piece that still lies in one rect is a line
        // (getDOMInfo's split; found by bisection, since rects only grow with the piece).
        let units: Vec<u16> = data.encode_utf16().collect();
        let (mut start, mut line) = (0usize, 0u32);
        while start < units.len() {
            let (mut lo, mut hi, mut end) = (start + 1, units.len(), start + 1);
            while lo <= hi {
                let mid = (lo + hi) / 2;
                if range.set_start(node, start as u32).is_err() || range.set_end(node, mid as u32).is_err() {
                    return;
                }
                if rect_count(&range) <= 1 {
                    end = mid;
                    lo = mid + 1;
                } else {
                    hi = mid - 1;
                }
            }
            // Never split a surrogate pair.
            if end < units.len() && (0xD800..0xDC00).contains(&units[end - 1]) {
                end += 1;
            }
            if range.set_start(node, start as u32).is_err() || range.set_end(node, end as u32).is_err() {
                return;
            }
            let text = collapse(&String::from_utf16_lossy(&units[start..end]));
            if self.line(node, line, text, &range, parent) {
                line += 1;
            }
            start = end;
        }
    }

    /// Pushes one line of a text run (the whole run when it does not wrap); false when it has no
    /// text or no box.
    fn line(&mut self, node: &Node, line: u32, text: String, range: &web_sys::Range, parent: usize) -> bool {
        let r = range.get_bounding_client_rect();
        if text.is_empty() || r.width() <= 0.0 || r.height() <= 0.0 {
            return false;
        }
        let node_ref = self.reader.line_ref(node, line);
        self.push(DomNode {
            r#ref: node_ref,
            parent: Some(parent),
            children: Vec::new(),
            tag: TEXT_TAG.to_string(),
            text,
            value: NodeValue::None,
            id: String::new(),
            classes: Vec::new(),
            rect: Rect { left: r.left() as f32, top: r.top() as f32, width: r.width() as f32, height: r.height() as f32 },
            ..DomNode::default()
        });
        true
    }
}

/// Tag (`INPUT_<type>` for inputs), value, and options of an element.
fn describe(el: &Element, tag_name: &str) -> (String, NodeValue, Vec<String>) {
    match tag_name {
        "INPUT" => {
            let input: &HtmlInputElement = el.unchecked_ref();
            let kind = input.type_();
            let value = if kind == "checkbox" || kind == "radio" { NodeValue::Checked(input.checked()) } else { NodeValue::Text(input.value()) };
            (format!("INPUT_{kind}"), value, Vec::new())
        }
        "TEXTAREA" => {
            let ta: &HtmlTextAreaElement = el.unchecked_ref();
            (tag_name.to_string(), NodeValue::Text(ta.value()), Vec::new())
        }
        "SELECT" => {
            let sel: &HtmlSelectElement = el.unchecked_ref();
            let opts = sel.options();
            let options = (0..opts.length()).filter_map(|i| opts.item(i)).map(|o| collapse(&o.text_content().unwrap_or_default())).collect();
            (tag_name.to_string(), NodeValue::Text(sel.value()), options)
        }
        // A list box's option: whether it is chosen, as a person sees it highlighted.
        "OPTION" => {
            let opt: &web_sys::HtmlOptionElement = el.unchecked_ref();
            (tag_name.to_string(), NodeValue::Checked(opt.selected()), Vec::new())
        }
        _ => (tag_name.to_string(), NodeValue::None, Vec::new()),
    }
}

/// How many rects `range` covers (`Range.getClientRects()`, read through JS so web-sys needs no
/// more features).
fn rect_count(range: &web_sys::Range) -> u32 {
    call(range, "getClientRects", &[]).map(|l| get(&l, "length").as_f64().unwrap_or(0.0) as u32).unwrap_or(0)
}

fn selected_text(el: &Element) -> Option<String> {
    let sel: &HtmlSelectElement = as_html_tag(el, "SELECT")?;
    let i = sel.selected_index();
    if i < 0 {
        return None;
    }
    sel.options().item(i as u32).map(|o| collapse(&o.text_content().unwrap_or_default()))
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

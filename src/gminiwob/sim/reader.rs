//! The simulator's reader, after `crate::web::reader`: which elements are seen, their refs, and
//! what each reads as.

use super::SiteSim;
use super::page::is_radio;
use crate::env::{DomNode, NodeRef, NodeValue, Rect};
use crate::gminiwob::reward::FieldState;
use crate::gminiwob::site::{Element, Tree};

/// What the reader reads of an element that never changes: its tag as the reader names it, its
/// own text (whitespace collapsed), its options' texts, and its labelling attributes.
#[derive(Clone, Debug, Default)]
pub(super) struct Reading {
    tag: String,
    text: String,
    options: Vec<String>,
    placeholder: String,
    name: String,
    aria_label: String,
}

impl Reading {
    pub(super) fn of(tree: &Tree, i: usize) -> Self {
        let el = &tree.elements[i];
        let attr = |name: &str| el.attr_value(name).map(collapse).unwrap_or_default();
        Reading {
            tag: match el.tag {
                "input" => format!("INPUT_{}", input_type(el)),
                t => t.to_ascii_uppercase(),
            },
            text: collapse(&el.text),
            options: if el.tag == "select" { el.children.iter().map(|&o| collapse(&text_content(tree, o))).collect() } else { Vec::new() },
            placeholder: attr("placeholder"),
            name: attr("name"),
            aria_label: attr("aria-label"),
        }
    }
}

impl SiteSim {
    pub(super) fn walk(&mut self, i: usize, parent: Option<usize>, nodes: &mut Vec<DomNode>) {
        // Options have no box, hidden pages are display:none, and empty boxes are skipped.
        let Some(b) = self.boxes[i] else { return };
        if self.site.tree.elements[i].tag == "option" || !self.rendered(i) || b.width <= 0 || b.height <= 0 {
            return;
        }
        let node_ref = match self.ref_of[i] {
            Some(r) => r,
            None => {
                self.refs.push(i);
                let r = self.refs.len() as NodeRef;
                self.ref_of[i] = Some(r);
                r
            }
        };
        let el = &self.site.tree.elements[i];
        let read = &self.reading[i];
        let st = &self.state[i];
        let value = match el.tag {
            "input" if matches!(input_type(el), "checkbox" | "radio") => NodeValue::Checked(st.checked),
            "input" => NodeValue::Text(st.value.clone()),
            "select" => NodeValue::Text(self.select_value(i).to_string()),
            _ => NodeValue::None,
        };
        let mut classes = el.classes.clone();
        if st.visited && !classes.iter().any(|c| c == "visited") {
            classes.push("visited".to_string());
        }
        let index = nodes.len();
        nodes.push(DomNode {
            r#ref: node_ref,
            parent,
            children: Vec::new(),
            tag: read.tag.clone(),
            text: String::new(),
            value,
            id: el.id.clone(),
            classes,
            rect: Rect { left: b.left as f32, top: b.top as f32, width: b.width as f32, height: b.height as f32 },
            focused: self.focus == Some(i),
            tampered: st.tampered,
            options: read.options.clone(),
            placeholder: read.placeholder.clone(),
            name: read.name.clone(),
            aria_label: read.aria_label.clone(),
            bg_color: String::new(),
            fg_color: String::new(),
        });
        if let Some(p) = parent {
            nodes[p].children.push(index);
        }
        for k in 0..self.site.tree.elements[i].children.len() {
            let c = self.site.tree.elements[i].children[k];
            self.walk(c, Some(index), nodes);
        }
        if nodes[index].children.is_empty() {
            let read = &self.reading[i];
            let el = &self.site.tree.elements[i];
            nodes[index].text = match read.options.get(self.state[i].selected) {
                // A select shows its chosen option.
                Some(chosen) if el.tag == "select" => chosen.clone(),
                // An element whose children all went unseen: all the text under it.
                _ if !el.children.is_empty() => collapse(&text_content(&self.site.tree, i)),
                _ => read.text.clone(),
            };
        }
    }

    pub(super) fn element(&self, r: NodeRef) -> Option<usize> {
        self.refs.get((r as usize).checked_sub(1)?).copied()
    }

    /// Not inside a hidden page (what `display: none` hides cannot take focus or be read).
    pub(super) fn rendered(&self, i: usize) -> bool {
        self.page_of[i].is_none_or(|p| p == self.page)
    }

    pub(super) fn el(&self, i: usize) -> &Element {
        &self.site.tree.elements[i]
    }

    fn select_value(&self, i: usize) -> &str {
        let el = self.el(i);
        el.children.get(self.state[i].selected).and_then(|&o| self.el(o).attr_value("value")).unwrap_or("")
    }

    /// What the element with `id` holds, as `crate::web::gminiwob::read_field` reads it.
    pub(super) fn field_state(&self, id: &str) -> Option<FieldState> {
        let &i = self.by_id.get(id)?;
        let el = self.el(i);
        let st = &self.state[i];
        let value = match el.tag {
            "input" if matches!(input_type(el), "checkbox" | "radio") => st.checked.to_string(),
            "input" => st.value.clone(),
            "select" => self.select_value(i).to_string(),
            _ => descendants(&self.site.tree, i)
                .find(|&d| is_radio(self.el(d)) && self.state[d].checked)
                .map(|d| self.state[d].value.clone())
                .unwrap_or_default(),
        };
        Some(FieldState { visited: st.visited, value })
    }
}

/// The type an input reports (`input.type`: a known type in lower case, else `text`).
pub(super) fn input_type(el: &Element) -> &'static str {
    const TYPES: [&str; 22] = [
        "button",
        "checkbox",
        "color",
        "date",
        "datetime-local",
        "email",
        "file",
        "hidden",
        "image",
        "month",
        "number",
        "password",
        "radio",
        "range",
        "reset",
        "search",
        "submit",
        "tel",
        "text",
        "time",
        "url",
        "week",
    ];
    let t = el.attr_value("type").unwrap_or("text").to_ascii_lowercase();
    TYPES.iter().find(|k| **k == t).copied().unwrap_or("text")
}

/// The descendants of `i` in document order (not `i` itself).
pub(super) fn descendants(tree: &Tree, i: usize) -> impl Iterator<Item = usize> + '_ {
    let mut stack: Vec<usize> = tree.elements[i].children.iter().rev().copied().collect();
    std::iter::from_fn(move || {
        let d = stack.pop()?;
        stack.extend(tree.elements[d].children.iter().rev());
        Some(d)
    })
}

/// `textContent`: the text of the element and everything under it.
pub(super) fn text_content(tree: &Tree, i: usize) -> String {
    let mut out = tree.elements[i].text.clone();
    for d in descendants(tree, i) {
        out.push_str(&tree.elements[d].text);
    }
    out
}

pub(super) fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

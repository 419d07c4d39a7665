//! A rendered site's elements and their HTML: the [`Tree`] the renderer builds and the native
//! simulator runs on, serialised byte for byte as the task page receives it.

use crate::gminiwob::layout::Bounds;

/// One attribute besides `id`, `class` and `style`; `None` is a boolean attribute (`hidden`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attr {
    pub name: &'static str,
    pub value: Option<String>,
}

/// One element of a rendered site.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Element {
    /// Lower-case tag name.
    pub tag: &'static str,
    pub id: String,
    pub classes: Vec<String>,
    pub attrs: Vec<Attr>,
    /// The element's text; only elements without children have any.
    pub text: String,
    pub parent: Option<usize>,
    pub children: Vec<usize>,
    /// Its box relative to its parent; `None` for elements without one of their own
    /// (`<option>`s, drawn by their select).
    pub bounds: Option<Bounds>,
    /// Its text is one line centred in the box (`line-height` = the box's height).
    pub one_line: bool,
}

impl Element {
    pub(super) fn new(tag: &'static str, bounds: Bounds) -> Self {
        Element {
            tag,
            id: String::new(),
            classes: Vec::new(),
            attrs: Vec::new(),
            text: String::new(),
            parent: None,
            children: Vec::new(),
            bounds: Some(bounds),
            one_line: false,
        }
    }
    pub(super) fn option(value: &str, text: &str) -> Self {
        Element { bounds: None, ..Element::new("option", Bounds::default()) }.attr("value", value).text(text)
    }
    pub(super) fn id(mut self, id: impl Into<String>) -> Self {
        self.id = id.into();
        self
    }
    pub(super) fn class(mut self, classes: &str) -> Self {
        self.classes.extend(classes.split_whitespace().map(str::to_string));
        self
    }
    pub(super) fn attr(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.attrs.push(Attr { name, value: Some(value.into()) });
        self
    }
    pub(super) fn flag(mut self, name: &'static str) -> Self {
        self.attrs.push(Attr { name, value: None });
        self
    }
    pub(super) fn text(mut self, text: impl Into<String>) -> Self {
        self.text = text.into();
        self
    }
    /// One line of text, centred vertically.
    pub(super) fn line(mut self, text: impl Into<String>) -> Self {
        self.text = text.into();
        self.one_line = true;
        self
    }

    /// The value of attribute `name` (`id` and `class` included); `Some("")` for a boolean one.
    pub fn attr_value(&self, name: &str) -> Option<&str> {
        match name {
            "id" => (!self.id.is_empty()).then_some(self.id.as_str()),
            _ => self.attrs.iter().find(|a| a.name == name).map(|a| a.value.as_deref().unwrap_or("")),
        }
    }
    pub fn has_attr(&self, name: &str) -> bool {
        self.attr_value(name).is_some()
    }
    pub fn has_class(&self, class: &str) -> bool {
        self.classes.iter().any(|c| c == class)
    }
}

/// A site's elements in document (pre-)order: `elements[0]` is `#gsite`, and every element's
/// parent comes before it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tree {
    pub elements: Vec<Element>,
}

/// Elements the HTML parser closes by itself.
const VOID: [&str; 1] = ["input"];

impl Tree {
    pub(super) fn push(&mut self, parent: Option<usize>, mut el: Element) -> usize {
        let i = self.elements.len();
        el.parent = parent;
        if let Some(p) = parent {
            debug_assert!(self.elements[p].text.is_empty(), "no text beside child elements");
            self.elements[p].children.push(i);
        }
        self.elements.push(el);
        i
    }

    /// Each element's box relative to `#gsite` (the root's own box at 0, 0); `None` for
    /// elements without a box.
    pub fn site_boxes(&self) -> Vec<Option<Bounds>> {
        let mut out: Vec<Option<Bounds>> = Vec::with_capacity(self.elements.len());
        for el in &self.elements {
            let origin = el.parent.and_then(|p| out[p]).map_or((0, 0), |b| (b.left, b.top));
            out.push(el.bounds.map(|b| Bounds::new(origin.0 + b.left, origin.1 + b.top, b.width, b.height)));
        }
        if let Some(Some(root)) = out.first_mut() {
            (root.left, root.top) = (0, 0);
        }
        out
    }

    /// The HTML of the whole tree.
    pub fn to_html(&self) -> String {
        let mut out = String::with_capacity(self.elements.len() * 120);
        if !self.elements.is_empty() {
            self.write(0, &mut out);
        }
        out
    }

    fn write(&self, i: usize, out: &mut String) {
        let el = &self.elements[i];
        out.push('<');
        out.push_str(el.tag);
        if !el.id.is_empty() {
            out.push_str(r#" id=""#);
            escape_into(out, &el.id);
            out.push('"');
        }
        if !el.classes.is_empty() {
            out.push_str(r#" class=""#);
            for (k, c) in el.classes.iter().enumerate() {
                if k > 0 {
                    out.push(' ');
                }
                escape_into(out, c);
            }
            out.push('"');
        }
        for a in &el.attrs {
            out.push(' ');
            out.push_str(a.name);
            if let Some(v) = &a.value {
                out.push_str("=\"");
                escape_into(out, v);
                out.push('"');
            }
        }
        if let Some(b) = el.bounds {
            for (name, v) in [(" style=\"left:", b.left), ("px;top:", b.top), ("px;width:", b.width), ("px;height:", b.height)] {
                out.push_str(name);
                push_int(out, v);
            }
            if el.one_line {
                out.push_str("px;line-height:");
                push_int(out, b.height);
            }
            out.push_str("px\"");
        }
        out.push('>');
        if VOID.contains(&el.tag) {
            return;
        }
        escape_into(out, &el.text);
        for &c in &el.children {
            self.write(c, out);
        }
        out.push_str("</");
        out.push_str(el.tag);
        out.push('>');
    }
}

/// Writes `v` in decimal (sites are rendered per episode: no formatting machinery per number).
fn push_int(out: &mut String, v: i32) {
    if v < 0 {
        out.push('-');
    }
    let mut digits = [0u8; 10];
    let (mut n, mut k) = (v.unsigned_abs(), digits.len());
    loop {
        k -= 1;
        digits[k] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.push_str(std::str::from_utf8(&digits[k..]).expect("ASCII digits"));
}

/// Escapes text and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    escape_into(&mut out, s);
    out
}

fn escape_into(out: &mut String, s: &str) {
    // Runs without special characters are copied whole (they are ASCII, so slicing is safe).
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        let entity = match b {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' => "&quot;",
            b'\'' => "&#39;",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        out.push_str(entity);
        start = i + 1;
    }
    out.push_str(&s[start..]);
}

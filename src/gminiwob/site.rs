//! The seeded renderer: a design and a seed become a site — an element [`Tree`] with every box
//! laid out (`super::layout`), its HTML, the instruction's profile, and where each field lives.
//!
//! The HTML is the contract `tasks/gminiwob.html` and the lab's policies rely on:
//! - `div#gsite.gsite` holds one `div#page{i}.gpage[data-page=i]` per page, all present, every page
//!   but the first `hidden`;
//! - on a page, primitives go in slot order (top, before the form, the form, bottom), design order
//!   within a slot; the form slot sits in `form#mainform_p{i}.mainform`;
//! - wrappers are `group_{name}_p{page}`; the actionable element of an active primitive is
//!   `actionable_{name}` (first occurrence in the design) or `actionable_{name}_{k}` (k-th, k ≥ 2)
//!   and carries `data-field`; passive ones are `actionable_{name}_p{page}`;
//! - pages are chained as the reference's `connectGraph` does: on every page but the last, each
//!   next button opens the following page (`data-next`), and a "Next" button is added where the
//!   page has none; on the last page, next buttons are inert and the submit button
//!   (`data-submit`, added when the design has none there) checks the fields;
//! - primitives that end the episode when clicked carry `data-end` on their wrapper;
//! - every element but `<option>` carries its box inline (`style="left:…px;top:…px;width:…px;
//!   height:…px"`, relative to its parent); no element mixes text with child elements, so the
//!   reader makes no text pseudo-nodes and every box the agent reads is one of these.
//!
//! Nothing loads from the network: images are coloured blocks (`div.img[role=img]`).

use serde::{Deserialize, Serialize};

use super::design::{Design, Placed};
use super::layout::{self, BLOCK_WIDTH, Bounds, Column, FIELD_GAP, FORM_PADDING, FORM_WIDTH, GAP, MARGIN, SITE_WIDTH};
use super::primitive::{InputType, Kind, Primitive, Slot};
use super::profile::{self, Values};
use crate::env::Field;
use crate::rng::Rng;

/// Mixed into the seed so a site's stream differs from other users of the same seed.
const SITE_SALT: u64 = 0x6757_6f42_5369_7465; // "gWoBSite"

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FieldKind {
    Text,
    Select,
    Radio,
    Checkbox,
}

impl FieldKind {
    fn of(kind: Kind) -> Option<FieldKind> {
        match kind {
            Kind::Input(_) => Some(FieldKind::Text),
            Kind::Select => Some(FieldKind::Select),
            Kind::Radio => Some(FieldKind::Radio),
            Kind::Checkbox => Some(FieldKind::Checkbox),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SiteField {
    pub key: String,
    pub value: String,
    pub kind: FieldKind,
    /// ids of the actionable element of each occurrence (a primitive may sit on several pages), in
    /// design order. For radio groups, the group's wrapper.
    pub ids: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Site {
    pub pages: u32,
    pub profile: Vec<Field>,
    pub fields: Vec<SiteField>,
    /// Inner HTML of the task page's `#area`: the serialised [`Site::tree`].
    pub html: String,
    /// The site's elements as rendered, with their boxes (what the native simulator runs on).
    #[serde(skip)]
    pub tree: Tree,
}

impl Site {
    /// The JSON the page runtime reads (`window.GMINIWOB_SITE`):
    /// `{"pages","html","profile":[{key,value}],"fields":[{key,value,kind,ids}]}`. Every `<` is
    /// written `\u003c`, so the text is safe inside a `<script>` element too.
    pub fn page_json(&self) -> String {
        #[derive(Serialize)]
        struct PageJson<'a> {
            pages: u32,
            html: &'a str,
            profile: &'a [Field],
            fields: &'a [SiteField],
        }
        let json = serde_json::to_string(&PageJson { pages: self.pages, html: &self.html, profile: &self.profile, fields: &self.fields })
            .expect("a site serialises");
        json.replace('<', "\\u003c")
    }

    /// Number of elements the site's HTML has (start tags; text is escaped, so every `<` followed
    /// by a letter opens an element).
    pub fn element_count(&self) -> usize {
        let b = self.html.as_bytes();
        b.windows(2).filter(|w| w[0] == b'<' && w[1].is_ascii_alphabetic()).count()
    }
}

// ------------------------------------------------------------------ the element tree

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
    fn new(tag: &'static str, bounds: Bounds) -> Self {
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
    fn option(value: &str, text: &str) -> Self {
        Element { bounds: None, ..Element::new("option", Bounds::default()) }.attr("value", value).text(text)
    }
    fn id(mut self, id: impl Into<String>) -> Self {
        self.id = id.into();
        self
    }
    fn class(mut self, classes: &str) -> Self {
        self.classes.extend(classes.split_whitespace().map(str::to_string));
        self
    }
    fn attr(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.attrs.push(Attr { name, value: Some(value.into()) });
        self
    }
    fn flag(mut self, name: &'static str) -> Self {
        self.attrs.push(Attr { name, value: None });
        self
    }
    fn text(mut self, text: impl Into<String>) -> Self {
        self.text = text.into();
        self
    }
    /// One line of text, centred vertically.
    fn line(mut self, text: impl Into<String>) -> Self {
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
    fn push(&mut self, parent: Option<usize>, mut el: Element) -> usize {
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

/// Renders `design` for `seed`: the profile first, then every cosmetic choice, all from one
/// seeded stream, so the same design, seed and values give the same tree and byte-identical HTML.
pub fn render(design: &Design, seed: u32, values: Values) -> Site {
    let mut rng = Rng::new(seed as u64 ^ SITE_SALT);
    let profile = profile::profile(design, values, &mut rng);
    let placed = design.placed();

    // Occurrence number of each placed primitive (1 for its first appearance in the design).
    let occurrence: Vec<u32> =
        placed.iter().enumerate().map(|(i, p)| 1 + placed[..i].iter().filter(|q| q.primitive == p.primitive).count() as u32).collect();

    let mut fields: Vec<SiteField> = profile
        .iter()
        .map(|f| {
            let prim = super::primitive::by_field(&f.key).expect("profile keys are primitive fields");
            SiteField {
                key: f.key.clone(),
                value: f.value.clone(),
                kind: FieldKind::of(prim.kind).expect("active primitives are fields"),
                ids: Vec::new(),
            }
        })
        .collect();
    for (p, &occ) in placed.iter().zip(&occurrence) {
        let prim = p.primitive();
        if let Some(key) = prim.field {
            let field = fields.iter_mut().find(|f| f.key == key).expect("every key has a field");
            field.ids.push(active_id(prim, occ));
        }
    }

    let mut r = Renderer { rng, tree: Tree::default() };
    let root = r.tree.push(None, Element::new("div", Bounds::new(0, 0, SITE_WIDTH, 0)).id("gsite").class("gsite"));
    let mut site_height = 0;
    for page in 0..design.pages() {
        let last = page + 1 == design.pages();
        let mut el =
            Element::new("div", Bounds::new(0, 0, SITE_WIDTH, 0)).id(format!("page{page}")).class("gpage").attr("data-page", page.to_string());
        if page > 0 {
            el = el.flag("hidden");
        }
        let p = r.tree.push(Some(root), el);
        let mut here: Vec<(&Placed, u32)> = placed.iter().zip(occurrence.iter().copied()).filter(|(p, _)| p.page == page).collect();
        here.sort_by_key(|(p, _)| p.primitive().slot); // stable: design order within a slot
        let in_slot = |slot: Slot| here.iter().filter(move |(p, _)| p.primitive().slot == slot);

        // The page is a column: bars span the site's width, blocks and the form card sit within
        // its margins, a gap apart.
        let mut y = 0;
        for &(q, occ) in in_slot(Slot::Top) {
            y += r.primitive(p, Bounds::new(0, y, SITE_WIDTH, 0), q.primitive(), page, occ, last);
        }
        for &(q, occ) in in_slot(Slot::BeforeForm) {
            y += GAP;
            y += r.primitive(p, Bounds::new(MARGIN, y, BLOCK_WIDTH, 0), q.primitive(), page, occ, last);
        }
        y += GAP;
        let form = r.tree.push(
            Some(p),
            Element::new("form", Bounds::new(MARGIN, y, BLOCK_WIDTH, 0)).id(format!("mainform_p{page}")).class("mainform").flag("novalidate"),
        );
        let mut col = Column::new(FORM_PADDING, FIELD_GAP);
        for &(q, occ) in in_slot(Slot::Form) {
            let top = col.open();
            let h = r.primitive(form, Bounds::new(FORM_PADDING, top, FORM_WIDTH, 0), q.primitive(), page, occ, last);
            col.close(top, h);
        }
        let has = |kind: Kind| here.iter().any(|(p, _)| p.primitive().kind == kind);
        let added = if !last && !has(Kind::NextButton) {
            Some((format!("actionable_next_p{page}"), "Next", "data-next", Some((page + 1).to_string())))
        } else if last && !has(Kind::SubmitButton) {
            Some((format!("actionable_submit_p{page}"), "Submit", "data-submit", None))
        } else {
            None
        };
        if let Some((id, text, link, target)) = added {
            let b = layout::block_button(FORM_WIDTH);
            let top = col.place(b.height);
            let mut el = Element::new("button", Bounds::new(FORM_PADDING, top, b.width, b.height))
                .id(id)
                .class("btn btn-primary btn-block")
                .attr("type", "button")
                .text(text);
            el = match target {
                Some(t) => el.attr(link, t),
                None => el.flag(link),
            };
            r.tree.push(Some(form), el);
        }
        let form_height = col.bottom() + FORM_PADDING;
        set_height(&mut r.tree, form, form_height);
        y += form_height;
        let mut ends_with_bar = false;
        for &(q, occ) in in_slot(Slot::Bottom) {
            y += GAP + 4;
            y += r.primitive(p, Bounds::new(0, y, SITE_WIDTH, 0), q.primitive(), page, occ, last);
            ends_with_bar = true;
        }
        let page_height = if ends_with_bar { y } else { y + GAP };
        set_height(&mut r.tree, p, page_height);
        site_height = site_height.max(page_height);
    }
    set_height(&mut r.tree, root, site_height);

    Site { pages: design.pages(), profile, fields, html: r.tree.to_html(), tree: r.tree }
}

fn set_height(tree: &mut Tree, i: usize, height: i32) {
    if let Some(b) = tree.elements[i].bounds.as_mut() {
        b.height = height;
    }
}

/// Id of the actionable element of an active primitive's `occ`-th occurrence.
fn active_id(prim: &Primitive, occ: u32) -> String {
    if occ <= 1 { format!("actionable_{}", prim.name) } else { format!("actionable_{}_{occ}", prim.name) }
}

// ------------------------------------------------------------------ cosmetic pools

const PRODUCTS: [&str; 20] = [
    "Wireless Headphones",
    "Espresso Maker",
    "Running Shoes",
    "Desk Lamp",
    "Canvas Backpack",
    "Smart Watch",
    "Yoga Mat",
    "Water Bottle",
    "Bluetooth Speaker",
    "Sunglasses",
    "Coffee Mug",
    "Notebook Set",
    "Salt & Pepper Set",
    "Throw Pillow",
    "Phone Case",
    "Scented Candle",
    "Travel Mug",
    "Ceramic Plant Pot",
    "Wall Clock",
    "Cutting Board",
];

const BLURBS: [&str; 8] = [
    "Free shipping on orders over $35.",
    "Top rated by our customers.",
    "Limited stock, order soon.",
    "New arrival this week.",
    "Back in stock.",
    "Only a few left.",
    "Ships in 2 days.",
    "Best seller in its category.",
];

const SLIDES: [(&str, &str); 6] = [
    ("Summer sale", "Up to 40% off outdoor gear"),
    ("New arrivals", "Fresh picks for the season"),
    ("Free shipping", "On every order this weekend"),
    ("Home essentials", "Make your space yours"),
    ("Tech week", "Deals on gadgets & audio"),
    ("Gift ideas", "Something for everyone"),
];

const DEAL_TITLES: [&str; 4] = ["Deal of the day", "Today's deal", "Flash sale", "Limited-time offer"];
const DEAL_LINKS: [&str; 3] = ["Shop now", "See the deal", "View offer"];
const WELCOMES: [&str; 5] = ["Welcome back", "Welcome to GShopping", "Hello again", "Good to see you", "Sign in to continue"];
const FOOTER_LINKS: [&str; 8] = ["About", "Contact", "Privacy", "Terms", "Help", "Returns", "Careers", "Shipping"];
const NAV_LINKS: [&str; 5] = ["Home", "Login", "Account", "Cart", "Checkout"];
const BRAND: &str = "GShopping";
const CENTS: [u32; 4] = [0, 49, 95, 99];
/// Number of image colour classes (`c0`..`c7`) the page's stylesheet defines.
const IMAGE_COLOURS: usize = 8;

struct Renderer {
    rng: Rng,
    tree: Tree,
}

impl Renderer {
    fn push(&mut self, parent: usize, el: Element) -> usize {
        self.tree.push(Some(parent), el)
    }

    /// `k` distinct indices below `n`, in random order.
    fn distinct(&mut self, n: usize, k: usize) -> Vec<usize> {
        let mut idx: Vec<usize> = (0..n).collect();
        for i in 0..k.min(n) {
            let j = i + self.rng.below(n - i);
            idx.swap(i, j);
        }
        idx.truncate(k);
        idx
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.rng.below(items.len())]
    }

    /// A price in cents: 1 to 50 dollars.
    fn price(&mut self) -> u32 {
        let dollars = 1 + self.rng.below(50) as u32;
        let cents = CENTS[self.rng.below(CENTS.len())];
        if dollars == 50 { 5000 } else { dollars * 100 + cents }
    }

    fn image(&mut self, parent: usize, b: Bounds, extra_class: &str, label: &str) {
        let c = self.rng.below(IMAGE_COLOURS);
        self.push(parent, Element::new("div", b).class(&format!("img {extra_class} c{c}")).attr("role", "img").attr("aria-label", label));
    }

    /// Renders one primitive in `slot` (its left, top and width; the height is the primitive's
    /// own) under `parent`, and returns its height.
    fn primitive(&mut self, parent: usize, slot: Bounds, prim: &Primitive, page: u32, occ: u32, last: bool) -> i32 {
        let name = prim.name;
        let group = format!("group_{name}_p{page}");
        let passive = format!("actionable_{name}_p{page}");
        let label = prim.label;
        let at = |h: i32| Bounds::new(slot.left, slot.top, slot.width, h);
        match prim.kind {
            Kind::Input(t) => {
                let id = active_id(prim, occ);
                let key = prim.field.expect("inputs are fields");
                let g = layout::text_field(slot.width);
                let w = self.push(parent, Element::new("div", at(g.height)).id(group).class("form-group"));
                self.push(w, Element::new("label", g.label).attr("for", id.clone()).line(label));
                let mut input = Element::new("input", g.control).class("form-control");
                input = match t {
                    // A number field is a text field that asks for digits: Chrome filters and
                    // localises what is typed into `type=number` in ways a simulator cannot
                    // follow exactly, and agents type anything into any field.
                    InputType::Number => input.attr("type", "text").attr("inputmode", "numeric"),
                    _ => input.attr("type", t.html()),
                };
                self.push(w, input.id(id).attr("data-field", key).attr("placeholder", label).attr("name", name).attr("aria-label", label));
                g.height
            }
            Kind::Select => {
                let id = active_id(prim, occ);
                let key = prim.field.expect("selects are fields");
                let g = layout::text_field(slot.width);
                let w = self.push(parent, Element::new("div", at(g.height)).id(group).class("form-group"));
                self.push(w, Element::new("label", g.label).attr("for", id.clone()).line(label));
                let sel = self.push(
                    w,
                    Element::new("select", g.control)
                        .class("form-control")
                        .id(id)
                        .attr("data-field", key)
                        .attr("name", name)
                        .attr("aria-label", label),
                );
                self.push(sel, Element::option("", "Choose…").flag("disabled").flag("selected"));
                for o in profile::options(key).expect("select fields have options") {
                    self.push(sel, Element::option(o, o));
                }
                g.height
            }
            Kind::Checkbox => {
                let id = active_id(prim, occ);
                let key = prim.field.expect("checkboxes are fields");
                let g = layout::checkbox(slot.width);
                let w = self.push(parent, Element::new("div", at(g.height)).id(group).class("form-check"));
                self.push(
                    w,
                    Element::new("input", g.input)
                        .attr("type", "checkbox")
                        .class("form-check-input")
                        .id(id.clone())
                        .attr("data-field", key)
                        .attr("name", name)
                        .attr("aria-label", label),
                );
                self.push(w, Element::new("label", g.label).class("form-check-label").attr("for", id).line(label));
                g.height
            }
            Kind::Radio => {
                let id = active_id(prim, occ);
                let key = prim.field.expect("radio groups are fields");
                let options = profile::options(key).expect("radio fields have options");
                let g = layout::radio_group(slot.width, options);
                let w = self.push(parent, Element::new("div", at(g.height)).id(group).class("form-group"));
                self.push(w, Element::new("div", g.title).class("group-label").line(label));
                let rg = self.push(
                    w,
                    Element::new("div", g.group)
                        .id(id.clone())
                        .class(&format!("{name}root radio-group"))
                        .attr("data-field", key)
                        .attr("role", "radiogroup")
                        .attr("aria-label", label),
                );
                for (k, (o, (cell, input, lab))) in options.iter().zip(&g.items).enumerate() {
                    let item = self.push(rg, Element::new("div", *cell).class("form-check"));
                    let rid = format!("{id}_i{k}");
                    self.push(
                        item,
                        Element::new("input", *input)
                            .attr("type", "radio")
                            .class("form-check-input")
                            .attr("name", format!("{name}_{occ}"))
                            .id(rid.clone())
                            .attr("value", *o),
                    );
                    self.push(item, Element::new("label", *lab).class("form-check-label").attr("for", rid).line(*o));
                }
                g.height
            }
            Kind::NextButton | Kind::SubmitButton => {
                let b = layout::block_button(slot.width);
                let w = self.push(parent, Element::new("div", at(b.height)).id(group));
                let mut button = Element::new("button", b).attr("type", "button").id(passive).class("btn btn-primary btn-block").text(label);
                // Next buttons open the following page except on the last; submit buttons submit
                // only there.
                button = match (prim.kind, last) {
                    (Kind::NextButton, false) => button.attr("data-next", (page + 1).to_string()),
                    (Kind::SubmitButton, true) => button.flag("data-submit"),
                    _ => button,
                };
                self.push(w, button);
                b.height
            }
            Kind::Decoration => self.decoration(parent, slot, prim, &group, &passive),
        }
    }

    fn decoration(&mut self, parent: usize, slot: Bounds, prim: &Primitive, group: &str, passive: &str) -> i32 {
        let name = prim.name;
        let wrapper = |tag: &'static str, h: i32, class: &str| {
            let el = Element::new(tag, Bounds::new(slot.left, slot.top, slot.width, h)).id(group).class(class);
            if prim.end_on_click { el.attr("data-end", name) } else { el }
        };
        match name {
            "navbar" => {
                let g = layout::navbar(slot.width, BRAND, &NAV_LINKS);
                let w = self.push(parent, wrapper("nav", g.height, "navbar"));
                self.push(w, Element::new("a", g.brand).attr("href", "#").id(passive).class("navbar-brand").line(BRAND));
                let nav = self.push(w, Element::new("div", g.nav).class("navbar-nav"));
                for (i, (l, b)) in NAV_LINKS.iter().zip(&g.links).enumerate() {
                    let class = if i == 0 { "nav-link active" } else { "nav-link" };
                    self.push(nav, Element::new("a", *b).attr("href", "#").id(format!("{passive}_i{i}")).class(class).line(*l));
                }
                g.height
            }
            "carousel" => {
                let slides = self.distinct(SLIDES.len(), 5);
                let shown = self.rng.below(slides.len());
                let (title, sub) = SLIDES[slides[shown]];
                let g = layout::carousel(slot.width, slides.len());
                let w = self.push(parent, wrapper("div", g.height, "carousel"));
                let inner = self.push(w, Element::new("div", g.inner).class("carousel-inner"));
                self.image(inner, g.image, "slide", title);
                let cap = self.push(inner, Element::new("div", g.caption).class("carousel-caption"));
                self.push(cap, Element::new("h6", g.title).line(title));
                self.push(cap, Element::new("p", g.subtitle).line(sub));
                self.push(
                    w,
                    Element::new("a", g.prev).attr("href", "#").id(passive).class("carousel-control prev").attr("aria-label", "Previous").line("‹"),
                );
                self.push(
                    w,
                    Element::new("a", g.next)
                        .attr("href", "#")
                        .id(format!("{passive}_next"))
                        .class("carousel-control next")
                        .attr("aria-label", "Next")
                        .line("›"),
                );
                let dots = self.push(w, Element::new("div", g.indicators).class("carousel-indicators"));
                for (i, b) in g.dots.iter().enumerate() {
                    self.push(dots, Element::new("span", *b).class(if i == shown { "dot active" } else { "dot" }));
                }
                g.height
            }
            "deck" => {
                let items = self.distinct(PRODUCTS.len(), 4);
                let (cards, height) = layout::deck(slot.width, items.len());
                let w = self.push(parent, wrapper("div", height, "deck"));
                for (i, (&item, g)) in items.iter().zip(&cards).enumerate() {
                    let title = PRODUCTS[item];
                    let price = self.price();
                    let blurb = self.pick(&BLURBS);
                    let stars = 3 + self.rng.below(3);
                    let card = self.push(w, Element::new("div", g.card).class("card"));
                    self.image(card, g.image, "card-img", title);
                    let id = if i == 0 { passive.to_string() } else { format!("{passive}_i{i}") };
                    let body = self.push(card, Element::new("div", g.body).class("card-body"));
                    self.push(body, Element::new("a", g.title).attr("href", "#").id(id).class("card-title").line(title));
                    self.push(body, Element::new("div", g.price).class("price").line(dollars(price)));
                    self.push(body, Element::new("p", g.text).class("card-text").text(blurb));
                    self.push(
                        body,
                        Element::new("div", g.stars)
                            .class("stars")
                            .attr("aria-label", format!("{stars} out of 5 stars"))
                            .line("★".repeat(stars) + &"☆".repeat(5 - stars)),
                    );
                }
                height
            }
            "dealmedia" => {
                let item = PRODUCTS[self.rng.below(PRODUCTS.len())];
                let title = self.pick(&DEAL_TITLES);
                let off = 10 + 5 * self.rng.below(9);
                let link = self.pick(&DEAL_LINKS);
                let g = layout::media(slot.width, link);
                let w = self.push(parent, wrapper("div", g.height, "media"));
                self.image(w, g.image, "media-img", item);
                let body = self.push(w, Element::new("div", g.body).class("media-body"));
                self.push(body, Element::new("h6", g.title).class("media-title").line(title));
                self.push(body, Element::new("p", g.text).line(format!("{item}, now {off}% off.")));
                self.push(body, Element::new("a", g.link).attr("href", "#").id(passive).line(link));
                g.height
            }
            "cart" => {
                let n = 2 + self.rng.below(3);
                let items = self.distinct(PRODUCTS.len(), n);
                let prices: Vec<u32> = (0..n).map(|_| self.price()).collect();
                let g = layout::cart(slot.width, n, "Your cart", &n.to_string());
                let w = self.push(parent, wrapper("div", g.height, "cart"));
                let title = self.push(w, Element::new("h6", g.title).class("cart-title"));
                self.push(title, Element::new("span", g.label).class("cart-label").line("Your cart"));
                self.push(title, Element::new("span", g.badge).class("badge").line(n.to_string()));
                let list = self.push(w, Element::new("ul", g.list).class("cart-list"));
                for (i, ((&item, &price), (row, name_b, price_b, remove_b))) in items.iter().zip(&prices).zip(&g.items).enumerate() {
                    let li = self.push(list, Element::new("li", *row).class("cart-item"));
                    self.push(li, Element::new("span", *name_b).class("item-name").line(PRODUCTS[item]));
                    self.push(li, Element::new("span", *price_b).class("item-price").line(dollars(price)));
                    let id = if i == 0 { passive.to_string() } else { format!("{passive}_i{i}") };
                    self.push(li, Element::new("a", *remove_b).attr("href", "#").id(id).class("remove").line("Remove"));
                }
                let promo = self.push(w, Element::new("div", g.promo).class("promo"));
                self.push(
                    promo,
                    Element::new("input", g.promo_input)
                        .attr("type", "text")
                        .class("form-control")
                        .id(format!("{passive}_promo"))
                        .attr("placeholder", "Promo code")
                        .attr("aria-label", "Promo code"),
                );
                self.push(
                    promo,
                    Element::new("button", g.redeem).attr("type", "button").id(format!("{passive}_redeem")).class("btn btn-secondary").text("Redeem"),
                );
                let total = self.push(w, Element::new("div", g.total).class("cart-total"));
                self.push(total, Element::new("span", g.total_label).line("Total"));
                self.push(total, Element::new("b", g.total_value).line(dollars(prices.iter().sum())));
                g.height
            }
            "footer1" => {
                let links: Vec<&str> = self.distinct(FOOTER_LINKS.len(), 4).into_iter().map(|l| FOOTER_LINKS[l]).collect();
                let g = layout::footer(slot.width, &links);
                let w = self.push(parent, wrapper("footer", g.height, "footer"));
                for (i, (l, b)) in links.iter().zip(&g.links).enumerate() {
                    let id = if i == 0 { passive.to_string() } else { format!("{passive}_i{i}") };
                    self.push(w, Element::new("a", *b).attr("href", "#").id(id).line(*l));
                }
                self.push(w, Element::new("div", g.copyright).class("copyright").line("© 2027 GShopping"));
                g.height
            }
            "forgotpassowrd" | "forgotusername" => {
                let (line, link) = layout::link_line(slot.width, prim.label);
                let w = self.push(parent, wrapper("div", line.height, "forgot"));
                self.push(w, Element::new("a", link).attr("href", "#").id(passive).line(prim.label));
                line.height
            }
            "header" | "header_login" | "header_select_items" => {
                let title = match name {
                    "header" => self.pick(&WELCOMES),
                    _ => prim.label,
                };
                let b = layout::header(slot.width);
                let w = self.push(parent, wrapper("div", b.height, "page-header"));
                self.push(w, Element::new("h5", b).id(passive).line(title));
                b.height
            }
            "inpgroup1" => {
                let g = layout::search_bar(slot.width);
                let w = self.push(parent, wrapper("div", g.height, "input-group"));
                self.push(
                    w,
                    Element::new("input", g.input)
                        .attr("type", "text")
                        .class("form-control")
                        .id(passive)
                        .attr("name", "search")
                        .attr("placeholder", "Search")
                        .attr("aria-label", "Search"),
                );
                self.push(
                    w,
                    Element::new("button", g.button).attr("type", "button").id(format!("{passive}_go")).class("btn btn-secondary").text("Go"),
                );
                g.height
            }
            other => unreachable!("no decoration named {other}"),
        }
    }
}

/// Cents as "$12.49".
fn dollars(cents: u32) -> String {
    format!("${}.{:02}", cents / 100, cents % 100)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gminiwob::primitive::{self, PRIMITIVES};
    use std::collections::{HashMap, HashSet};

    /// One element of the rendered HTML: tag, attributes, and the index of its parent.
    #[derive(Debug, Clone)]
    struct El {
        tag: String,
        attrs: HashMap<String, Option<String>>,
        parent: Option<usize>,
        text: String,
    }

    impl El {
        fn attr(&self, k: &str) -> Option<&str> {
            self.attrs.get(k).and_then(|v| v.as_deref())
        }
        fn has(&self, k: &str) -> bool {
            self.attrs.contains_key(k)
        }
        fn id(&self) -> Option<&str> {
            self.attr("id")
        }
        fn classes(&self) -> Vec<&str> {
            self.attr("class").map(|c| c.split(' ').collect()).unwrap_or_default()
        }
    }

    const VOID: [&str; 1] = ["input"];

    fn unescape(s: &str) -> String {
        s.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&#39;", "'").replace("&amp;", "&")
    }

    /// A strict little parser for the HTML we write: balanced tags, quoted attributes, entities
    /// only from our set, no raw special characters in text.
    fn parse(html: &str) -> Vec<El> {
        let mut els: Vec<El> = Vec::new();
        let mut stack: Vec<usize> = Vec::new();
        let b = html.as_bytes();
        let mut i = 0;
        let check_text = |t: &str| {
            assert!(!t.contains(['>', '"', '\'']), "raw special character in text {t:?}");
            let mut rest = t;
            while let Some(p) = rest.find('&') {
                rest = &rest[p..];
                assert!(["&amp;", "&lt;", "&gt;", "&quot;", "&#39;"].iter().any(|e| rest.starts_with(e)), "bad entity at {rest:?}");
                rest = &rest[1..];
            }
        };
        while i < b.len() {
            if b[i] == b'<' {
                let close = html[i..].find('>').expect("unclosed tag") + i;
                let inner = &html[i + 1..close];
                if let Some(name) = inner.strip_prefix('/') {
                    let open = stack.pop().unwrap_or_else(|| panic!("stray </{name}>"));
                    assert_eq!(els[open].tag, name, "mismatched close tag");
                } else {
                    let (tag, mut rest) = inner.split_once(' ').unwrap_or((inner, ""));
                    assert!(tag.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()), "tag {tag:?}");
                    let mut attrs = HashMap::new();
                    loop {
                        rest = rest.trim_start();
                        if rest.is_empty() {
                            break;
                        }
                        let end = rest.find([' ', '=']).unwrap_or(rest.len());
                        let key = &rest[..end];
                        assert!(key.chars().all(|c| c.is_ascii_lowercase() || c == '-'), "attribute {key:?}");
                        rest = &rest[end..];
                        let value = if let Some(r) = rest.strip_prefix("=\"") {
                            let q = r.find('"').expect("unterminated attribute");
                            check_text(&r[..q]);
                            let v = unescape(&r[..q]);
                            rest = &r[q + 1..];
                            Some(v)
                        } else {
                            None
                        };
                        assert!(attrs.insert(key.to_string(), value).is_none(), "repeated attribute {key}");
                    }
                    els.push(El { tag: tag.to_string(), attrs, parent: stack.last().copied(), text: String::new() });
                    if !VOID.contains(&tag) {
                        stack.push(els.len() - 1);
                    }
                }
                i = close + 1;
            } else {
                let next = html[i..].find('<').map(|p| p + i).unwrap_or(b.len());
                let text = &html[i..next];
                check_text(text);
                let &top = stack.last().expect("text outside every element");
                els[top].text.push_str(&unescape(text));
                i = next;
            }
        }
        assert!(stack.is_empty(), "unclosed elements");
        els
    }

    fn design(entries: &[(&str, u32)]) -> Design {
        let e: Vec<(usize, u32)> = entries.iter().map(|(n, p)| (primitive::by_name(n).unwrap().index, *p)).collect();
        Design::from_entries(None, &e).unwrap()
    }

    fn by_id<'a>(els: &'a [El], id: &str) -> Option<(usize, &'a El)> {
        els.iter().enumerate().find(|(_, e)| e.id() == Some(id))
    }

    fn ancestors(els: &[El], mut i: usize) -> Vec<usize> {
        let mut out = Vec::new();
        while let Some(p) = els[i].parent {
            out.push(p);
            i = p;
        }
        out
    }

    fn page_of(els: &[El], i: usize) -> u32 {
        let p = ancestors(els, i).into_iter().find(|&a| els[a].classes().contains(&"gpage")).expect("inside a page");
        els[p].attr("data-page").unwrap().parse().unwrap()
    }

    /// Everything the contract says about a site, checked on its HTML.
    fn check(d: &Design, site: &Site) -> Vec<El> {
        let els = parse(&site.html);
        assert_eq!(els.len(), site.element_count());
        // Ids are unique.
        let mut ids = HashSet::new();
        for e in &els {
            if let Some(id) = e.id() {
                assert!(ids.insert(id.to_string()), "id {id} is used twice");
            }
        }
        // The frame: gsite, then all pages, only the first shown, each with its form.
        assert_eq!(els[0].id(), Some("gsite"));
        assert_eq!(els[0].attr("class"), Some("gsite"));
        let pages: Vec<usize> = (0..els.len()).filter(|&i| els[i].classes().contains(&"gpage")).collect();
        assert_eq!(pages.len() as u32, d.pages());
        for (k, &p) in pages.iter().enumerate() {
            assert_eq!(els[p].parent, Some(0));
            assert_eq!(els[p].id(), Some(format!("page{k}").as_str()));
            assert_eq!(els[p].attr("data-page"), Some(k.to_string().as_str()));
            assert_eq!(els[p].has("hidden"), k > 0);
            let (f, form) = by_id(&els, &format!("mainform_p{k}")).expect("every page has its form");
            assert_eq!(form.tag, "form");
            assert!(form.has("novalidate") && form.classes() == ["mainform"]);
            assert_eq!(els[f].parent, Some(p));
        }
        // Every placed primitive has its wrapper on its page, in slot order, forms in the form.
        for page in 0..d.pages() {
            let mut last_in_slot: HashMap<Slot, usize> = HashMap::new();
            for p in d.on_page(page) {
                let prim = p.primitive();
                let (w, wrap) = by_id(&els, &format!("group_{}_p{}", prim.name, page)).expect("wrapper");
                assert_eq!(page_of(&els, w), page);
                let in_form = ancestors(&els, w).iter().any(|&a| els[a].tag == "form");
                assert_eq!(in_form, prim.slot == Slot::Form, "{}", prim.name);
                assert_eq!(wrap.attr("data-end"), prim.end_on_click.then_some(prim.name), "{}", prim.name);
                if let Some(&before) = last_in_slot.get(&prim.slot) {
                    assert!(w > before, "{} out of design order", prim.name);
                }
                last_in_slot.insert(prim.slot, w);
            }
            let mut order: Vec<(usize, Slot)> =
                d.on_page(page).map(|p| (by_id(&els, &format!("group_{}_p{}", p.primitive().name, page)).unwrap().0, p.primitive().slot)).collect();
            order.sort();
            assert!(order.windows(2).all(|w| w[0].1 <= w[1].1), "slots out of order on page {page}");
        }
        // Fields: one per profile key, with their ids present, data-field set, on the right pages.
        let keys: Vec<&str> = site.fields.iter().map(|f| f.key.as_str()).collect();
        assert_eq!(keys, d.profile_keys());
        assert_eq!(site.profile.len(), site.fields.len());
        for (f, pf) in site.fields.iter().zip(&site.profile) {
            assert_eq!((&f.key, &f.value), (&pf.key, &pf.value));
            let prim = primitive::by_field(&f.key).unwrap();
            let pages_of: Vec<u32> = d.placed().iter().filter(|p| p.primitive == prim.index).map(|p| p.page).collect();
            assert_eq!(f.ids.len(), pages_of.len());
            for (k, (id, &page)) in f.ids.iter().zip(&pages_of).enumerate() {
                let want = if k == 0 { format!("actionable_{}", prim.name) } else { format!("actionable_{}_{}", prim.name, k + 1) };
                assert_eq!(id, &want);
                let (i, el) = by_id(&els, id).unwrap_or_else(|| panic!("{id} is not in the HTML"));
                assert_eq!(el.attr("data-field"), Some(f.key.as_str()));
                assert_eq!(page_of(&els, i), page);
                match f.kind {
                    FieldKind::Text => {
                        assert_eq!(el.tag, "input");
                        assert!(["text", "password", "number"].contains(&el.attr("type").unwrap()));
                        assert_eq!(el.attr("placeholder"), Some(prim.label));
                        assert_eq!(el.attr("aria-label"), Some(prim.label));
                        let lab = els.iter().find(|e| e.tag == "label" && e.attr("for") == Some(id)).expect("a label");
                        assert_eq!(lab.text, prim.label);
                    }
                    FieldKind::Checkbox => {
                        assert_eq!((el.tag.as_str(), el.attr("type")), ("input", Some("checkbox")));
                        assert!(els.iter().any(|e| e.tag == "label" && e.attr("for") == Some(id)));
                        assert!(f.value == "true" || f.value == "false");
                    }
                    FieldKind::Select => {
                        assert_eq!(el.tag, "select");
                        let opts: Vec<&El> = els.iter().filter(|e| e.parent == Some(i)).collect();
                        assert!(opts[0].has("disabled") && opts[0].has("selected") && opts[0].attr("value") == Some(""));
                        let values: Vec<&str> = opts[1..].iter().map(|o| o.attr("value").unwrap()).collect();
                        assert_eq!(values, profile::options(&f.key).unwrap());
                        assert!(opts[1..].iter().all(|o| o.text == o.attr("value").unwrap()));
                        assert!(values.contains(&f.value.as_str()));
                    }
                    FieldKind::Radio => {
                        assert_eq!(el.attr("role"), Some("radiogroup"));
                        assert!(el.classes().contains(&format!("{}root", prim.name).as_str()));
                        let radios: Vec<&El> = els
                            .iter()
                            .enumerate()
                            .filter(|(j, e)| e.attr("type") == Some("radio") && ancestors(&els, *j).contains(&i))
                            .map(|(_, e)| e)
                            .collect();
                        let values: Vec<&str> = radios.iter().map(|r| r.attr("value").unwrap()).collect();
                        assert_eq!(values, profile::options(&f.key).unwrap());
                        assert!(values.contains(&f.value.as_str()));
                        let names: HashSet<&str> = radios.iter().map(|r| r.attr("name").unwrap()).collect();
                        assert_eq!(names.len(), 1);
                        for (k, r) in radios.iter().enumerate() {
                            assert_eq!(r.id(), Some(format!("{id}_i{k}").as_str()));
                        }
                    }
                }
            }
        }
        // No stray data-field, and passive actionables follow the naming.
        let field_ids: HashSet<&str> = site.fields.iter().flat_map(|f| f.ids.iter().map(|s| s.as_str())).collect();
        for e in &els {
            if e.has("data-field") {
                assert!(field_ids.contains(e.id().unwrap()), "{:?} carries data-field", e.id());
            }
        }
        for p in d.placed() {
            let prim = p.primitive();
            if !prim.is_active() {
                let id = format!("actionable_{}_p{}", prim.name, p.page);
                let (i, _) = by_id(&els, &id).unwrap_or_else(|| panic!("{id} is missing"));
                assert_eq!(page_of(&els, i), p.page);
            }
        }
        // Linking: non-final pages reach the next one, the final page has exactly the submit buttons.
        for page in 0..d.pages() {
            let last = page + 1 == d.pages();
            let on: Vec<&El> = (0..els.len()).filter(|&i| page_of_opt(&els, i) == Some(page)).map(|i| &els[i]).collect();
            let nexts: Vec<&&El> = on.iter().filter(|e| e.has("data-next")).collect();
            let submits: Vec<&&El> = on.iter().filter(|e| e.has("data-submit")).collect();
            if last {
                assert!(nexts.is_empty(), "page {page} is last but links on");
                assert!(!submits.is_empty(), "the last page has no submit");
            } else {
                assert!(submits.is_empty(), "page {page} submits but is not last");
                assert!(!nexts.is_empty(), "page {page} leads nowhere");
                assert!(nexts.iter().all(|e| e.attr("data-next") == Some((page + 1).to_string().as_str())));
            }
            for e in nexts.iter().chain(&submits) {
                assert_eq!((e.tag.as_str(), e.attr("type")), ("button", Some("button")));
            }
        }
        els
    }

    fn page_of_opt(els: &[El], i: usize) -> Option<u32> {
        ancestors(els, i)
            .into_iter()
            .chain(std::iter::once(i))
            .find(|&a| els[a].classes().contains(&"gpage"))
            .map(|p| els[p].attr("data-page").unwrap().parse().unwrap())
    }

    #[test]
    fn every_primitive_renders_alone() {
        for prim in PRIMITIVES.iter() {
            for pages in [1, 2] {
                let entries: Vec<(usize, u32)> = (0..pages).map(|p| (prim.index, p)).collect();
                let d = Design::from_entries(None, &entries).unwrap();
                for seed in [0, 1, 77] {
                    for values in [Values::Realistic, Values::Reference] {
                        let site = render(&d, seed, values);
                        check(&d, &site);
                    }
                }
            }
        }
    }

    #[test]
    fn every_primitive_renders_with_the_others() {
        // All 40 on one page, and on two pages in reverse order.
        let all: Vec<(usize, u32)> = PRIMITIVES.iter().map(|p| (p.index, 0)).collect();
        let d = Design::from_entries(None, &all).unwrap();
        let site = render(&d, 5, Values::Realistic);
        check(&d, &site);
        assert_eq!(site.fields.len(), 24);
        let two: Vec<(usize, u32)> = PRIMITIVES.iter().rev().flat_map(|p| [(p.index, 1), (p.index, 0)]).collect();
        let d = Design::from_entries(None, &two).unwrap();
        for seed in 0..20 {
            let site = render(&d, seed, Values::Realistic);
            check(&d, &site);
        }
        // Random mixes.
        let mut rng = Rng::new(42);
        for seed in 0..200 {
            let pages = 1 + rng.below(4) as u32;
            let n = 1 + rng.below(28);
            let entries: Vec<(usize, u32)> = (0..n).map(|_| (rng.below(41), rng.below(pages as usize) as u32)).collect();
            let d = Design::from_entries(Some(pages), &entries).unwrap();
            let site = render(&d, seed, if seed % 2 == 0 { Values::Realistic } else { Values::Reference });
            check(&d, &site);
        }
    }

    #[test]
    fn the_html_is_the_tree_with_every_box_inline() {
        let mut rng = Rng::new(7);
        for seed in 0..100 {
            let d = crate::gminiwob::test_sites::RandomDesign::default().sample(&mut rng);
            let site = render(&d, seed, Values::Realistic);
            let tree = &site.tree;
            assert_eq!(site.html, tree.to_html());
            let els = parse(&site.html);
            assert_eq!(els.len(), tree.elements.len());
            for (k, (e, t)) in els.iter().zip(&tree.elements).enumerate() {
                assert_eq!((e.tag.as_str(), e.parent), (t.tag, t.parent), "element {k}");
                assert_eq!(e.id().unwrap_or(""), t.id);
                // Text only on elements without children: the reader makes no text nodes.
                assert!(t.children.is_empty() || t.text.is_empty(), "{} #{} mixes text and elements", t.tag, t.id);
                match t.bounds {
                    None => assert_eq!(t.tag, "option"),
                    Some(b) => {
                        let style = e.attr("style").expect("a box");
                        assert!(style.starts_with(&format!("left:{}px;top:{}px;width:{}px;height:{}px", b.left, b.top, b.width, b.height)));
                        assert!(b.width > 0 && b.height > 0, "{} #{} has an empty box", t.tag, t.id);
                        // Inside its parent (the root's left/top are ignored: it is centred).
                        if let Some(p) = t.parent.and_then(|p| tree.elements[p].bounds) {
                            assert!(
                                b.left >= 0 && b.top >= 0 && b.right() <= p.width && b.bottom() <= p.height,
                                "{} #{} {b:?} leaves {p:?}",
                                t.tag,
                                t.id
                            );
                        }
                    }
                }
            }
            // Pages and the site are as tall as their content.
            let root = tree.elements[0].bounds.unwrap();
            let pages: Vec<Bounds> = tree.elements[0].children.iter().map(|&p| tree.elements[p].bounds.unwrap()).collect();
            assert_eq!(root.height, pages.iter().map(|p| p.height).max().unwrap());
            for (&p, b) in tree.elements[0].children.iter().zip(&pages) {
                let last = tree.elements[p].children.iter().map(|&c| tree.elements[c].bounds.unwrap().bottom()).max().unwrap();
                assert!(b.height == last || b.height == last + GAP, "page height {} for content ending at {last}", b.height);
            }
        }
    }

    #[test]
    fn later_occurrences_get_numbered_ids() {
        // username first on page 2 in the design: that one is actionable_username.
        let d = design(&[("username", 2), ("username", 0), ("cc", 1), ("cc", 2), ("username", 1)]);
        let site = render(&d, 1, Values::Realistic);
        let els = check(&d, &site);
        let user = &site.fields[0];
        assert_eq!(user.ids, ["actionable_username", "actionable_username_2", "actionable_username_3"]);
        let (i, _) = by_id(&els, "actionable_username").unwrap();
        assert_eq!(page_of(&els, i), 2);
        let cc = &site.fields[1];
        assert_eq!((cc.kind, cc.ids.clone()), (FieldKind::Radio, vec!["actionable_cc".to_string(), "actionable_cc_2".into()]));
        assert!(by_id(&els, "actionable_cc_2_i0").is_some() && by_id(&els, "actionable_cc_i1").is_some());
        let names: HashSet<&str> = els.iter().filter(|e| e.attr("type") == Some("radio")).map(|e| e.attr("name").unwrap()).collect();
        assert_eq!(names, HashSet::from(["cc_1", "cc_2"]));
    }

    #[test]
    fn linking_one_two_and_three_pages() {
        // One page, nothing placed: the form holds only the added submit.
        let d = Design::from_entries(None, &[]).unwrap();
        let site = render(&d, 0, Values::Realistic);
        let els = check(&d, &site);
        let (_, b) = by_id(&els, "actionable_submit_p0").unwrap();
        assert!(b.has("data-submit") && b.text == "Submit");
        assert!(site.fields.is_empty() && site.profile.is_empty());

        // One page with a submit primitive: it submits, nothing is added.
        let d = design(&[("username", 0), ("submit", 0)]);
        let els = check(&d, &render(&d, 0, Values::Realistic));
        let (_, b) = by_id(&els, "actionable_submit_p0").unwrap();
        assert!(b.has("data-submit") && b.text == "Place Order");
        assert_eq!(els.iter().filter(|e| e.has("data-submit")).count(), 1);

        // A next button on the only (last) page is inert; a submit is added.
        let d = design(&[("next_login", 0), ("password", 0)]);
        let els = check(&d, &render(&d, 0, Values::Realistic));
        let (_, b) = by_id(&els, "actionable_next_login_p0").unwrap();
        assert!(!b.has("data-next") && !b.has("data-submit") && b.text == "Login and Checkout");
        assert!(by_id(&els, "actionable_submit_p0").unwrap().1.has("data-submit"));

        // Two pages: page 0 has no next primitive (a Next is added), page 1 has an inert next and
        // a submit primitive on page 0 is inert.
        let d = design(&[("username", 0), ("submit", 0), ("firstname", 1), ("next_checkout", 1)]);
        let els = check(&d, &render(&d, 3, Values::Realistic));
        let (_, added) = by_id(&els, "actionable_next_p0").unwrap();
        assert_eq!((added.attr("data-next"), added.text.as_str()), (Some("1"), "Next"));
        assert!(!by_id(&els, "actionable_submit_p0").unwrap().1.has("data-submit"));
        assert!(!by_id(&els, "actionable_next_checkout_p1").unwrap().1.has("data-next"));
        assert!(by_id(&els, "actionable_submit_p1").unwrap().1.has("data-submit"));
        // The added buttons end their forms.
        let (f0, _) = by_id(&els, "mainform_p0").unwrap();
        let last_child = (0..els.len()).rfind(|&i| els[i].parent == Some(f0)).unwrap();
        assert_eq!(els[last_child].id(), Some("actionable_next_p0"));

        // Three pages (the shopping site): next primitives link 0→1→2, none are added.
        let d = design(&[
            ("navbar", 0),
            ("next_login_page", 0),
            ("navbar", 1),
            ("username", 1),
            ("next_login", 1),
            ("next_checkout", 1),
            ("firstname", 2),
            ("submit", 2),
        ]);
        let els = check(&d, &render(&d, 8, Values::Realistic));
        assert_eq!(by_id(&els, "actionable_next_login_page_p0").unwrap().1.attr("data-next"), Some("1"));
        assert_eq!(by_id(&els, "actionable_next_login_p1").unwrap().1.attr("data-next"), Some("2"));
        assert_eq!(by_id(&els, "actionable_next_checkout_p1").unwrap().1.attr("data-next"), Some("2"));
        assert!(by_id(&els, "actionable_next_p0").is_none() && by_id(&els, "actionable_next_p1").is_none());
        assert!(by_id(&els, "actionable_submit_p2").unwrap().1.has("data-submit"));

        // Three pages, empty middle page: it gets a Next of its own.
        let d = Design::from_entries(Some(3), &[(39, 0), (34, 2)]).unwrap();
        let els = check(&d, &render(&d, 2, Values::Realistic));
        assert_eq!(by_id(&els, "actionable_next_p1").unwrap().1.attr("data-next"), Some("2"));
    }

    #[test]
    fn same_seed_same_site_and_seeds_differ() {
        let d = design(&[("navbar", 0), ("deck", 0), ("cart", 0), ("username", 0), ("password", 0), ("state", 1), ("cabin", 1)]);
        let a = render(&d, 11, Values::Realistic);
        assert_eq!(a, render(&d, 11, Values::Realistic));
        assert_eq!(a.html, render(&d, 11, Values::Realistic).html);
        let b = render(&d, 12, Values::Realistic);
        assert_ne!(a.profile, b.profile);
        assert_ne!(a.html, b.html, "cosmetics change with the seed");
        // Reference values keep the fixed ones.
        let r = render(&d, 11, Values::Reference);
        assert_eq!(r.profile[0].value, "john@email.com");
    }

    #[test]
    fn escaping() {
        assert_eq!(escape(r#"<a href="x">Tom & Jerry's</a>"#), "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;");
        // Cosmetic text with '&' and '$' is escaped in the HTML (the parser refuses raw specials).
        let d = design(&[("deck", 0), ("cart", 0), ("carousel", 0), ("dealmedia", 0)]);
        let mut saw_amp = false;
        for seed in 0..60 {
            let site = render(&d, seed, Values::Realistic);
            let els = parse(&site.html);
            if site.html.contains("Salt &amp; Pepper Set") {
                saw_amp = true;
                assert!(els.iter().any(|e| e.text == "Salt & Pepper Set" || e.attr("aria-label") == Some("Salt & Pepper Set")));
            }
            assert!(!site.html.contains("Salt & Pepper"));
        }
        assert!(saw_amp, "some seed shows the product whose name needs escaping");
    }

    #[test]
    fn page_json_has_the_documented_keys() {
        let d = design(&[("username", 0), ("rememberme", 0), ("cc", 1), ("state", 1)]);
        let site = render(&d, 4, Values::Realistic);
        let json = site.page_json();
        assert!(!json.contains('<'), "the JSON is safe inside a script element");
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let obj = v.as_object().unwrap();
        let mut keys: Vec<&str> = obj.keys().map(|k| k.as_str()).collect();
        keys.sort();
        assert_eq!(keys, ["fields", "html", "pages", "profile"]);
        assert_eq!(v["pages"], 2);
        assert_eq!(v["html"].as_str().unwrap(), site.html);
        assert_eq!(v["profile"][0]["key"], "username");
        assert_eq!(v["profile"][0]["value"], site.profile[0].value.as_str());
        assert_eq!(v["fields"][1]["kind"], "checkbox");
        assert_eq!(v["fields"][2]["kind"], "radio");
        assert_eq!(v["fields"][3]["kind"], "select");
        assert_eq!(v["fields"][0]["kind"], "text");
        assert_eq!(v["fields"][2]["ids"][0], "actionable_cc");
        assert_eq!(v["fields"][0]["value"], site.profile[0].value.as_str());
    }

    #[test]
    fn element_counts_are_of_the_papers_order() {
        // CoDE Table 1: login 35, address 38, payment 49, flight 60, shopping 183 (level 3).
        let login = design(&[
            ("navbar", 0),
            ("username", 0),
            ("password", 0),
            ("rememberme", 0),
            ("stayloggedin", 0),
            ("forgotusername", 0),
            ("captcha", 0),
            ("forgotpassowrd", 0),
            ("submit", 0),
        ]);
        let address = design(&[
            ("navbar", 0),
            ("firstname", 0),
            ("lastname", 0),
            ("addressline1", 0),
            ("addressline2", 0),
            ("city", 0),
            ("zipcode", 0),
            ("state", 0),
            ("submit", 0),
        ]);
        let payment =
            design(&[("navbar", 0), ("cc", 0), ("fullname", 0), ("ccnumber", 0), ("ccexpdate", 0), ("cccvv", 0), ("footer1", 0), ("submit", 0)]);
        let flight = design(&[
            ("navbar", 0),
            ("departureairport", 0),
            ("destinationairport", 0),
            ("departuredate", 0),
            ("destinationdate", 0),
            ("numberofpeople", 0),
            ("cabin", 0),
            ("flighttype", 0),
            ("footer1", 0),
            ("submit", 0),
        ]);
        let shopping = design(&[
            ("navbar", 0),
            ("inpgroup1", 0),
            ("carousel", 0),
            ("dealmedia", 0),
            ("deck", 0),
            ("footer1", 0),
            ("next_login_page", 0),
            ("navbar", 1),
            ("username", 1),
            ("password", 1),
            ("rememberme", 1),
            ("stayloggedin", 1),
            ("forgotusername", 1),
            ("captcha", 1),
            ("forgotpassowrd", 1),
            ("next_login", 1),
            ("navbar", 2),
            ("firstname", 2),
            ("lastname", 2),
            ("addressline1", 2),
            ("addressline2", 2),
            ("city", 2),
            ("zipcode", 2),
            ("state", 2),
            ("submit", 2),
        ]);
        for (name, d, paper) in
            [("login", login, 35), ("address", address, 38), ("payment", payment, 49), ("flight", flight, 60), ("shopping", shopping, 183)]
        {
            let site = render(&d, 0, Values::Realistic);
            check(&d, &site);
            let n = site.element_count();
            println!("{name}: {n} elements (paper {paper})");
            assert!(n * 3 >= paper && n <= paper * 3, "{name}: {n} elements, the paper's site has {paper}");
        }
    }
}

//! The seeded renderer: a design and a seed become a site's HTML (every page of it), the
//! instruction's profile, and where each field lives.
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
//! - primitives that end the episode when clicked carry `data-end` on their wrapper.
//!
//! Nothing loads from the network: images are coloured blocks (`div.img[role=img]`).

use serde::{Deserialize, Serialize};

use super::design::{Design, Placed};
use super::primitive::{Kind, Primitive, Slot};
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
    /// Inner HTML of the task page's `#area`.
    pub html: String,
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
        let json = serde_json::to_string(&PageJson {
            pages: self.pages,
            html: &self.html,
            profile: &self.profile,
            fields: &self.fields,
        })
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

/// Escapes text and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Renders `design` for `seed`: the profile first, then every cosmetic choice, all from one
/// seeded stream, so the same design, seed and values give byte-identical HTML.
pub fn render(design: &Design, seed: u32, values: Values) -> Site {
    let mut rng = Rng::new(seed as u64 ^ SITE_SALT);
    let profile = profile::profile(design, values, &mut rng);
    let placed = design.placed();

    // Occurrence number of each placed primitive (1 for its first appearance in the design).
    let occurrence: Vec<u32> = placed
        .iter()
        .enumerate()
        .map(|(i, p)| 1 + placed[..i].iter().filter(|q| q.primitive == p.primitive).count() as u32)
        .collect();

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

    let mut r = Renderer { rng, out: String::with_capacity(4096) };
    r.out.push_str(r#"<div id="gsite" class="gsite">"#);
    for page in 0..design.pages() {
        let last = page + 1 == design.pages();
        r.out.push_str(&format!(r#"<div id="page{page}" class="gpage" data-page="{page}""#));
        if page > 0 {
            r.out.push_str(" hidden");
        }
        r.out.push('>');
        let mut here: Vec<(&Placed, u32)> =
            placed.iter().zip(occurrence.iter().copied()).filter(|(p, _)| p.page == page).collect();
        here.sort_by_key(|(p, _)| p.primitive().slot); // stable: design order within a slot
        let in_slot = |slot: Slot| here.iter().filter(move |(p, _)| p.primitive().slot == slot);

        for slot in [Slot::Top, Slot::BeforeForm] {
            for &(p, occ) in in_slot(slot) {
                r.primitive(p.primitive(), page, occ, last);
            }
        }
        r.out.push_str(&format!(r#"<form id="mainform_p{page}" class="mainform" novalidate>"#));
        for &(p, occ) in in_slot(Slot::Form) {
            r.primitive(p.primitive(), page, occ, last);
        }
        let has = |kind: Kind| here.iter().any(|(p, _)| p.primitive().kind == kind);
        if !last && !has(Kind::NextButton) {
            r.out.push_str(&format!(
                r#"<button type="button" id="actionable_next_p{page}" class="btn btn-primary btn-block" data-next="{}">Next</button>"#,
                page + 1
            ));
        }
        if last && !has(Kind::SubmitButton) {
            r.out.push_str(&format!(
                r#"<button type="button" id="actionable_submit_p{page}" class="btn btn-primary btn-block" data-submit>Submit</button>"#
            ));
        }
        r.out.push_str("</form>");
        for &(p, occ) in in_slot(Slot::Bottom) {
            r.primitive(p.primitive(), page, occ, last);
        }
        r.out.push_str("</div>");
    }
    r.out.push_str("</div>");

    Site { pages: design.pages(), profile, fields, html: r.out }
}

/// Id of the actionable element of an active primitive's `occ`-th occurrence.
fn active_id(prim: &Primitive, occ: u32) -> String {
    if occ <= 1 { format!("actionable_{}", prim.name) } else { format!("actionable_{}_{occ}", prim.name) }
}

// ------------------------------------------------------------------ cosmetic pools

const PRODUCTS: [&str; 20] = [
    "Wireless Headphones", "Espresso Maker", "Running Shoes", "Desk Lamp", "Canvas Backpack",
    "Smart Watch", "Yoga Mat", "Water Bottle", "Bluetooth Speaker", "Sunglasses", "Coffee Mug",
    "Notebook Set", "Salt & Pepper Set", "Throw Pillow", "Phone Case", "Scented Candle", "Travel Mug",
    "Ceramic Plant Pot", "Wall Clock", "Cutting Board",
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
const CENTS: [u32; 4] = [0, 49, 95, 99];
/// Number of image colour classes (`c0`..`c7`) the page's stylesheet defines.
const IMAGE_COLOURS: usize = 8;

struct Renderer {
    rng: Rng,
    out: String,
}

impl Renderer {
    fn push(&mut self, s: &str) {
        self.out.push_str(s);
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

    fn image(&mut self, extra_class: &str, label: &str) {
        let c = self.rng.below(IMAGE_COLOURS);
        self.push(&format!(r#"<div class="img {} c{c}" role="img" aria-label="{}"></div>"#, escape(extra_class), escape(label)));
    }

    fn primitive(&mut self, prim: &Primitive, page: u32, occ: u32, last: bool) {
        let name = prim.name;
        let group = format!("group_{name}_p{page}");
        let passive = format!("actionable_{name}_p{page}");
        let label = escape(prim.label);
        match prim.kind {
            Kind::Input(t) => {
                let id = active_id(prim, occ);
                let key = prim.field.expect("inputs are fields");
                let min = if t == super::primitive::InputType::Number { r#" min="1""# } else { "" };
                self.push(&format!(
                    r#"<div id="{group}" class="form-group"><label for="{id}">{label}</label><input class="form-control" type="{}" id="{id}" data-field="{}" placeholder="{label}" name="{}" aria-label="{label}"{min}></div>"#,
                    t.html(),
                    escape(key),
                    escape(name)
                ));
            }
            Kind::Select => {
                let id = active_id(prim, occ);
                let key = prim.field.expect("selects are fields");
                self.push(&format!(
                    r#"<div id="{group}" class="form-group"><label for="{id}">{label}</label><select class="form-control" id="{id}" data-field="{}" name="{}" aria-label="{label}"><option value="" disabled selected>Choose…</option>"#,
                    escape(key),
                    escape(name)
                ));
                for o in profile::options(key).expect("select fields have options") {
                    let o = escape(o);
                    self.push(&format!(r#"<option value="{o}">{o}</option>"#));
                }
                self.push("</select></div>");
            }
            Kind::Checkbox => {
                let id = active_id(prim, occ);
                let key = prim.field.expect("checkboxes are fields");
                self.push(&format!(
                    r#"<div id="{group}" class="form-check"><input type="checkbox" class="form-check-input" id="{id}" data-field="{}" name="{}" aria-label="{label}"><label class="form-check-label" for="{id}">{label}</label></div>"#,
                    escape(key),
                    escape(name)
                ));
            }
            Kind::Radio => {
                let id = active_id(prim, occ);
                let key = prim.field.expect("radio groups are fields");
                self.push(&format!(
                    r#"<div id="{group}" class="form-group"><div class="group-label">{label}</div><div id="{id}" class="{}root radio-group" data-field="{}" role="radiogroup" aria-label="{label}">"#,
                    escape(name),
                    escape(key)
                ));
                for (k, o) in profile::options(key).expect("radio fields have options").iter().enumerate() {
                    let o = escape(o);
                    self.push(&format!(
                        r#"<div class="form-check"><input type="radio" class="form-check-input" name="{}_{occ}" id="{id}_i{k}" value="{o}"><label class="form-check-label" for="{id}_i{k}">{o}</label></div>"#,
                        escape(name)
                    ));
                }
                self.push("</div></div>");
            }
            Kind::NextButton => {
                let link = if last { String::new() } else { format!(r#" data-next="{}""#, page + 1) };
                self.push(&format!(
                    r#"<div id="{group}"><button type="button" id="{passive}" class="btn btn-primary btn-block"{link}>{label}</button></div>"#
                ));
            }
            Kind::SubmitButton => {
                let link = if last { " data-submit" } else { "" };
                self.push(&format!(
                    r#"<div id="{group}"><button type="button" id="{passive}" class="btn btn-primary btn-block"{link}>{label}</button></div>"#
                ));
            }
            Kind::Decoration => self.decoration(prim, &group, &passive),
        }
    }

    fn decoration(&mut self, prim: &Primitive, group: &str, passive: &str) {
        let name = prim.name;
        let end = if prim.end_on_click { format!(r#" data-end="{}""#, escape(name)) } else { String::new() };
        match name {
            "navbar" => {
                self.push(&format!(
                    r##"<nav id="{group}" class="navbar"{end}><a href="#" id="{passive}" class="navbar-brand">GShopping</a><div class="navbar-nav">"##
                ));
                for (i, l) in NAV_LINKS.iter().enumerate() {
                    let active = if i == 0 { " active" } else { "" };
                    self.push(&format!(r##"<a href="#" id="{passive}_i{i}" class="nav-link{active}">{}</a>"##, escape(l)));
                }
                self.push("</div></nav>");
            }
            "carousel" => {
                let slides = self.distinct(SLIDES.len(), 5);
                let shown = self.rng.below(slides.len());
                let (title, sub) = SLIDES[slides[shown]];
                self.push(&format!(r#"<div id="{group}" class="carousel"{end}><div class="carousel-inner">"#));
                self.image("slide", title);
                self.push(&format!(
                    r#"<div class="carousel-caption"><h6>{}</h6><p>{}</p></div></div>"#,
                    escape(title),
                    escape(sub)
                ));
                self.push(&format!(
                    r##"<a href="#" id="{passive}" class="carousel-control prev" aria-label="Previous">‹</a><a href="#" id="{passive}_next" class="carousel-control next" aria-label="Next">›</a><div class="carousel-indicators">"##
                ));
                for i in 0..slides.len() {
                    let active = if i == shown { " active" } else { "" };
                    self.push(&format!(r#"<span class="dot{active}"></span>"#));
                }
                self.push("</div></div>");
            }
            "deck" => {
                self.push(&format!(r#"<div id="{group}" class="deck"{end}>"#));
                let items = self.distinct(PRODUCTS.len(), 4);
                for (i, &item) in items.iter().enumerate() {
                    let title = PRODUCTS[item];
                    let price = self.price();
                    let blurb = self.pick(&BLURBS);
                    let stars = 3 + self.rng.below(3);
                    self.push(r#"<div class="card">"#);
                    self.image("card-img", title);
                    let id = if i == 0 { passive.to_string() } else { format!("{passive}_i{i}") };
                    self.push(&format!(
                        r##"<div class="card-body"><a href="#" id="{id}" class="card-title">{}</a><div class="price">{}</div><p class="card-text">{}</p><div class="stars" aria-label="{stars} out of 5 stars">{}</div></div></div>"##,
                        escape(title),
                        dollars(price),
                        escape(blurb),
                        "★".repeat(stars) + &"☆".repeat(5 - stars)
                    ));
                }
                self.push("</div>");
            }
            "dealmedia" => {
                let item = PRODUCTS[self.rng.below(PRODUCTS.len())];
                let title = self.pick(&DEAL_TITLES);
                let off = 10 + 5 * self.rng.below(9);
                let link = self.pick(&DEAL_LINKS);
                self.push(&format!(r#"<div id="{group}" class="media"{end}>"#));
                self.image("media-img", item);
                self.push(&format!(
                    r##"<div class="media-body"><h6 class="media-title">{}</h6><p>{}, now {off}% off.</p><a href="#" id="{passive}">{}</a></div></div>"##,
                    escape(title),
                    escape(item),
                    escape(link)
                ));
            }
            "cart" => {
                let n = 2 + self.rng.below(3);
                let items = self.distinct(PRODUCTS.len(), n);
                self.push(&format!(
                    r#"<div id="{group}" class="cart"{end}><h6 class="cart-title">Your cart <span class="badge">{n}</span></h6><ul class="cart-list">"#
                ));
                let mut total = 0;
                for (i, &item) in items.iter().enumerate() {
                    let price = self.price();
                    total += price;
                    let id = if i == 0 { passive.to_string() } else { format!("{passive}_i{i}") };
                    self.push(&format!(
                        r##"<li class="cart-item"><span class="item-name">{}</span><span class="item-price">{}</span><a href="#" id="{id}" class="remove">Remove</a></li>"##,
                        escape(PRODUCTS[item]),
                        dollars(price)
                    ));
                }
                self.push(&format!(
                    r#"</ul><div class="promo"><input type="text" class="form-control" id="{passive}_promo" placeholder="Promo code" aria-label="Promo code"><button type="button" id="{passive}_redeem" class="btn btn-secondary">Redeem</button></div><div class="cart-total"><span>Total</span><b>{}</b></div></div>"#,
                    dollars(total)
                ));
            }
            "footer1" => {
                let links = self.distinct(FOOTER_LINKS.len(), 4);
                self.push(&format!(r#"<footer id="{group}" class="footer"{end}>"#));
                for (i, &l) in links.iter().enumerate() {
                    let id = if i == 0 { passive.to_string() } else { format!("{passive}_i{i}") };
                    self.push(&format!(r##"<a href="#" id="{id}">{}</a>"##, escape(FOOTER_LINKS[l])));
                }
                self.push(r#"<div class="copyright">© 2027 GShopping</div></footer>"#);
            }
            "forgotpassowrd" | "forgotusername" => {
                self.push(&format!(
                    r##"<div id="{group}" class="forgot"{end}><a href="#" id="{passive}">{}</a></div>"##,
                    escape(prim.label)
                ));
            }
            "header" | "header_login" | "header_select_items" => {
                let title = match name {
                    "header" => self.pick(&WELCOMES),
                    _ => prim.label,
                };
                self.push(&format!(
                    r#"<div id="{group}" class="page-header"{end}><h5 id="{passive}">{}</h5></div>"#,
                    escape(title)
                ));
            }
            "inpgroup1" => {
                self.push(&format!(
                    r#"<div id="{group}" class="input-group"{end}><input type="text" class="form-control" id="{passive}" name="search" placeholder="Search" aria-label="Search"><button type="button" id="{passive}_go" class="btn btn-secondary">Go</button></div>"#
                ));
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
                assert!(
                    ["&amp;", "&lt;", "&gt;", "&quot;", "&#39;"].iter().any(|e| rest.starts_with(e)),
                    "bad entity at {rest:?}"
                );
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
            let mut order: Vec<(usize, Slot)> = d
                .on_page(page)
                .map(|p| (by_id(&els, &format!("group_{}_p{}", p.primitive().name, page)).unwrap().0, p.primitive().slot))
                .collect();
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
        let last_child = (0..els.len()).filter(|&i| els[i].parent == Some(f0)).last().unwrap();
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
            ("navbar", 0), ("username", 0), ("password", 0), ("rememberme", 0), ("stayloggedin", 0),
            ("forgotusername", 0), ("captcha", 0), ("forgotpassowrd", 0), ("submit", 0),
        ]);
        let address = design(&[
            ("navbar", 0), ("firstname", 0), ("lastname", 0), ("addressline1", 0), ("addressline2", 0),
            ("city", 0), ("zipcode", 0), ("state", 0), ("submit", 0),
        ]);
        let payment = design(&[
            ("navbar", 0), ("cc", 0), ("fullname", 0), ("ccnumber", 0), ("ccexpdate", 0), ("cccvv", 0),
            ("footer1", 0), ("submit", 0),
        ]);
        let flight = design(&[
            ("navbar", 0), ("departureairport", 0), ("destinationairport", 0), ("departuredate", 0),
            ("destinationdate", 0), ("numberofpeople", 0), ("cabin", 0), ("flighttype", 0), ("footer1", 0),
            ("submit", 0),
        ]);
        let shopping = design(&[
            ("navbar", 0), ("inpgroup1", 0), ("carousel", 0), ("dealmedia", 0), ("deck", 0), ("footer1", 0),
            ("next_login_page", 0), ("navbar", 1), ("username", 1), ("password", 1), ("rememberme", 1),
            ("stayloggedin", 1), ("forgotusername", 1), ("captcha", 1), ("forgotpassowrd", 1), ("next_login", 1),
            ("navbar", 2), ("firstname", 2), ("lastname", 2), ("addressline1", 2), ("addressline2", 2),
            ("city", 2), ("zipcode", 2), ("state", 2), ("submit", 2),
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

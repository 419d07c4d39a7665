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

//!
//! One room a job: this file holds the site and [`render`], which lays out the pages, the form and
//! the chaining; `primitives` draws each primitive's elements and cosmetic content; `tree` is the
//! element tree and its HTML.

use serde::{Deserialize, Serialize};

use super::design::{Design, Placed};
use super::layout::{self, BLOCK_WIDTH, Bounds, Column, FIELD_GAP, FORM_PADDING, FORM_WIDTH, GAP, MARGIN, SITE_WIDTH};
use super::primitive::{Kind, Primitive, Slot};
use super::profile::{self, Values};
use crate::env::Field;
use crate::rng::Rng;

mod primitives;
#[cfg(test)]
mod tests;
mod tree;

use primitives::Renderer;
pub use tree::{Attr, Element, Tree, escape};

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

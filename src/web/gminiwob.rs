//! The browser side of generated sites: handing the rendered site to `tasks/gminiwob.html`
//! before an episode starts, and reading back what the reward needs (each field's state, the
//! page showing).

use serde::Serialize;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Document, HtmlInputElement, HtmlSelectElement, HtmlTextAreaElement, Window};

use super::util::{as_html_tag, call, get, set};
use crate::gminiwob::reward::{field_correct, potential};
use crate::gminiwob::{FieldState, Site};

/// The global the page's `genProblem` reads the site from.
const SITE_GLOBAL: &str = "GMINIWOB_SITE";

/// Gives `site` to the page (as an object of the page's own realm), or removes it.
pub fn hand_site(win: &Window, site: Option<&Site>) -> Result<(), JsValue> {
    let value = match site {
        Some(s) => call(&get(win, "JSON"), "parse", &[JsValue::from_str(&s.page_json())])?,
        None => JsValue::UNDEFINED,
    };
    set(win, SITE_GLOBAL, &value);
    Ok(())
}

/// The page of the site showing now (0 on pages that are not generated sites).
pub fn current_page(win: &Window) -> u32 {
    let g = get(win, "gminiwob");
    if g.is_object() { call(&g, "page", &[]).ok().and_then(|v| v.as_f64()).map(|p| p as u32).unwrap_or(0) } else { 0 }
}

/// What the element with `id` holds, as the page's submit check reads it: the value of a text
/// field or select, `true`/`false` for a checkbox, the checked radio's value inside a group.
pub fn read_field(doc: &Document, id: &str) -> Option<FieldState> {
    let el = doc.get_element_by_id(id)?;
    let visited = el.class_list().contains("visited");
    let value = if let Some(i) = as_html_tag::<HtmlInputElement>(&el, "INPUT") {
        match i.type_().as_str() {
            "checkbox" | "radio" => i.checked().to_string(),
            _ => i.value(),
        }
    } else if let Some(s) = as_html_tag::<HtmlSelectElement>(&el, "SELECT") {
        s.value()
    } else if let Some(t) = as_html_tag::<HtmlTextAreaElement>(&el, "TEXTAREA") {
        t.value()
    } else {
        el.query_selector("input[type=radio]:checked").ok().flatten().map(|r| r.unchecked_into::<HtmlInputElement>().value()).unwrap_or_default()
    };
    Some(FieldState { visited, value })
}

/// Φ of the site on `doc` now.
pub fn site_potential(site: &Site, doc: &Document) -> f64 {
    potential(site, |id| read_field(doc, id))
}

/// What a person playing a generated site sees beside it: each field and whether it is right.
#[derive(Clone, Debug, Serialize)]
pub struct SiteStatus {
    pub potential: f64,
    pub page: u32,
    pub pages: u32,
    pub fields: Vec<FieldStatus>,
}

#[derive(Clone, Debug, Serialize)]
pub struct FieldStatus {
    pub key: String,
    pub value: String,
    pub correct: bool,
}

pub fn site_status(site: &Site, win: &Window, doc: &Document) -> SiteStatus {
    SiteStatus {
        potential: site_potential(site, doc),
        page: current_page(win),
        pages: site.pages,
        fields: site
            .fields
            .iter()
            .map(|f| FieldStatus { key: f.key.clone(), value: f.value.clone(), correct: field_correct(f, |id| read_field(doc, id)) })
            .collect(),
    }
}

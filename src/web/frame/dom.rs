//! Small readings of a task page's document: its body's elements, whether one shows, how to name
//! one in a message, and the images its style sheets would fetch only once shown.

use wasm_bindgen::JsValue;
use web_sys::{Document, Element};

use super::super::util::{call, get};

/// The contract's chrome, which pages add beside the task (not state of an episode).
pub(super) const CHROME_IDS: [&str; 4] = ["sync-task-cover", "reward-display", "click-canvas", "query"];

/// Starts fetching every image the page's style sheets give as an element's content
/// (`content: url(…)`), and returns them to watch. Browsers fetch such an image only when an
/// element first shows it, so a view an action opens (an email's reply icon) would be read with
/// its icons still 0 px wide; fetched at load, they are cached before any episode starts. Style
/// sheets of another origin cannot be read and are left alone.
pub(super) fn fetch_style_images(doc: &Document) -> Vec<JsValue> {
    let sheets = get(doc, "styleSheets");
    let n = get(&sheets, "length").as_f64().unwrap_or(0.0) as u32;
    let mut urls: Vec<String> = Vec::new();
    for i in 0..n {
        let sheet = js_sys::Reflect::get_u32(&sheets, i).unwrap_or(JsValue::UNDEFINED);
        let base = get(&sheet, "href").as_string().unwrap_or_else(|| doc.base_uri().ok().flatten().unwrap_or_default());
        let Ok(rules) = js_sys::Reflect::get(&sheet, &JsValue::from_str("cssRules")) else { continue };
        let count = get(&rules, "length").as_f64().unwrap_or(0.0) as u32;
        for r in 0..count {
            let rule = js_sys::Reflect::get_u32(&rules, r).unwrap_or(JsValue::UNDEFINED);
            let content =
                call(&get(&rule, "style"), "getPropertyValue", &[JsValue::from_str("content")]).ok().and_then(|v| v.as_string()).unwrap_or_default();
            for url in css_urls(&content) {
                if let Ok(abs) = web_sys::Url::new_with_base(&url, &base)
                    && !urls.contains(&abs.href())
                {
                    urls.push(abs.href());
                }
            }
        }
    }
    urls.iter()
        .filter_map(|u| {
            let img = doc.create_element("img").ok()?;
            img.set_attribute("src", u).ok()?;
            Some(img.into())
        })
        .collect()
}

/// The URLs in a CSS value (`url("a.png") url(b.png)`).
fn css_urls(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = value;
    while let Some(i) = rest.find("url(") {
        rest = &rest[i + 4..];
        let Some(end) = rest.find(')') else { break };
        let url = rest[..end].trim().trim_matches(|c| c == '"' || c == '\'').trim();
        if !url.is_empty() && !url.starts_with("data:") {
            out.push(url.to_string());
        }
        rest = &rest[end + 1..];
    }
    out
}

pub(super) fn body_elements(doc: &Document) -> Vec<Element> {
    let Some(body) = doc.body() else { return Vec::new() };
    let kids = body.children();
    (0..kids.length()).filter_map(|i| kids.item(i)).collect()
}

pub(super) fn showing(el: &Element) -> bool {
    let r = el.get_bounding_client_rect();
    r.width() > 0.0 && r.height() > 0.0
}

/// `TAG#id.class` of an element, for messages.
pub fn describe(el: &Element) -> String {
    let mut s = el.tag_name().to_ascii_uppercase();
    if !el.id().is_empty() {
        s.push('#');
        s.push_str(&el.id());
    }
    if let Some(c) = el.get_attribute("class").and_then(|c| c.split_whitespace().next().map(str::to_string)) {
        s.push('.');
        s.push_str(&c);
    }
    s
}

/// Whether `el` is still in its document and showing.
pub fn is_showing(el: &Element) -> bool {
    el.is_connected() && showing(el)
}

pub(super) fn digest(s: &str) -> u64 {
    // FNV-1a: only distinguishes inline pages from each other.
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

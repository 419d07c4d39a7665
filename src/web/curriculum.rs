//! What the Train view's curriculum panel (`www/curriculum.js`) asks of the lab: the adversaries'
//! objectives with their constants, and a static preview of a generated site for its thumbnails.

use wasm_bindgen::prelude::*;

use super::app::Lab;
use super::remote::to_js;
use crate::adversary::{AdversaryConfig, Objective, ObjectiveConfig};
use crate::curriculum::train::LoopConfig;
use crate::gminiwob::task::generated_page;
use crate::gminiwob::{Design, Values, render};

#[wasm_bindgen]
impl Lab {
    /// The objectives an adversarial run can use, each with its default constants
    /// (`ObjectiveConfig::new`: the papers' values) and population, and the loop's and the
    /// adversary's sizes (M, K, N).
    #[wasm_bindgen(js_name = adversaryObjectives)]
    pub fn adversary_objectives() -> JsValue {
        let objectives: Vec<serde_json::Value> = Objective::ALL
            .iter()
            .map(|&o| {
                let c = ObjectiveConfig::new(o);
                serde_json::json!({
                    "key": o.key(), "label": o.label(), "population": o.population(),
                    "alpha": c.alpha, "beta": c.beta, "delta": c.delta,
                })
            })
            .collect();
        let a = AdversaryConfig::default();
        to_js(&serde_json::json!({
            "objectives": objectives, "episodes": LoopConfig::default().episodes, "max_pages": a.max_pages, "slots": a.slots,
        }))
    }

    /// A generated site as a static page (its first page showing, no script): the site's HTML
    /// from the renderer inside the task page's own style sheets, for a sandboxed `srcdoc`
    /// thumbnail. `design` is checked; a bad one throws what is wrong.
    #[wasm_bindgen(js_name = sitePreview)]
    pub fn site_preview(design: JsValue, seed: u32) -> Result<String, JsValue> {
        let text = js_sys::JSON::stringify(&design).map(String::from).map_err(|_| js_sys::Error::new("invalid design: it is not JSON data"))?;
        let design = Design::from_json(&text).map_err(|e| js_sys::Error::new(&e.to_string()))?;
        let site = render(&design, seed, Values::default());
        Ok(preview_page(&site.html))
    }
}

/// Every `<style>` element of the task page (core's inlined sheet and the site's), around `html`.
fn preview_page(html: &str) -> String {
    let page = generated_page();
    let mut styles = String::new();
    let mut rest = page;
    while let Some(a) = rest.find("<style") {
        let Some(b) = rest[a..].find("</style>") else { break };
        styles.push_str(&rest[a..a + b + "</style>".len()]);
        rest = &rest[a + b + "</style>".len()..];
    }
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\">{styles}<style>html,body{{margin:0;overflow:hidden}}#area{{overflow:hidden}}</style></head>\
         <body><div id=\"wrap\"><div id=\"area\">{html}</div></div></body></html>"
    )
}

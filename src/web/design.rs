//! What the Design view asks of the lab: the primitive palette, the test sites, random designs,
//! and checking a design a person typed or imported. Designs travel as the reference's JSON
//! object (`{number_of_pages, action, action_page}`).

use serde::Serialize;
use wasm_bindgen::prelude::*;

use super::app::Lab;
use super::remote::to_js;
use crate::env::task::MAX_SITE_NAME;
use crate::gminiwob::Design;
use crate::gminiwob::design::{MAX_PAGES, MAX_PLACED};
use crate::gminiwob::primitive::{InputType, Kind, PRIMITIVES, Slot};
use crate::gminiwob::test_sites::{LEVELS, RandomDesign, TEST_SITES, test_site};
use crate::rng::Rng;

#[derive(Serialize)]
struct PrimitiveInfo {
    index: usize,
    name: &'static str,
    field: Option<&'static str>,
    active: bool,
    kind: &'static str,
    slot: &'static str,
    end_on_click: bool,
    label: &'static str,
}

fn design_js(d: &Design) -> JsValue {
    // Through JSON so the object has the wire form (`number_of_pages`, `action`, `action_page`).
    to_js(&serde_json::to_value(d).expect("designs serialise"))
}

#[wasm_bindgen]
impl Lab {
    /// The 40 primitives, in design-index order.
    pub fn primitives() -> JsValue {
        let list: Vec<PrimitiveInfo> = PRIMITIVES
            .iter()
            .map(|p| PrimitiveInfo {
                index: p.index,
                name: p.name,
                field: p.field,
                active: p.is_active(),
                kind: match p.kind {
                    Kind::Input(InputType::Text) => "text",
                    Kind::Input(InputType::Password) => "password",
                    Kind::Input(InputType::Number) => "number",
                    Kind::Select => "select",
                    Kind::Radio => "radio",
                    Kind::Checkbox => "checkbox",
                    Kind::NextButton => "next",
                    Kind::SubmitButton => "submit",
                    Kind::Decoration => "decoration",
                },
                slot: match p.slot {
                    Slot::Top => "top",
                    Slot::BeforeForm => "before_form",
                    Slot::Form => "form",
                    Slot::Bottom => "bottom",
                },
                end_on_click: p.end_on_click,
                label: p.label,
            })
            .collect();
        to_js(&list)
    }

    /// The limits a design and its name keep, for the editor to show: most pages, most placed
    /// primitives, the longest name; and the frame a site shows in ([width, height]).
    #[wasm_bindgen(js_name = designLimits)]
    pub fn design_limits() -> JsValue {
        let frame = crate::gminiwob::layout::FRAME_SIZE;
        to_js(&serde_json::json!({ "max_pages": MAX_PAGES, "max_placed": MAX_PLACED, "name_max": MAX_SITE_NAME, "frame_size": frame }))
    }

    /// What is wrong with `name` as a site's name, in words; `undefined` when it is fine.
    #[wasm_bindgen(js_name = siteNameProblem)]
    pub fn site_name_problem(name: String) -> Option<String> {
        crate::env::task::site_name_problem(&name)
    }

    /// The test sites' names and the number of difficulty levels.
    #[wasm_bindgen(js_name = testSites)]
    pub fn test_sites() -> JsValue {
        to_js(&serde_json::json!({ "sites": TEST_SITES, "levels": LEVELS }))
    }

    /// The design of a test site at a level (0–3).
    #[wasm_bindgen(js_name = testSiteDesign)]
    pub fn test_site_design(name: String, level: u32) -> Result<JsValue, JsValue> {
        test_site(&name, level).map(|d| design_js(&d)).ok_or_else(|| {
            js_sys::Error::new(&format!("no test site \"{name}\" at level {level} (sites: {}; levels 0 to {})", TEST_SITES.join(", "), LEVELS - 1))
                .into()
        })
    }

    /// A design from the papers' Domain Randomization with its default sizes.
    #[wasm_bindgen(js_name = randomDesign)]
    pub fn random_design(seed: u32) -> JsValue {
        design_js(&RandomDesign::default().sample(&mut Rng::new(seed as u64)))
    }

    /// Checks a design (an object or JSON text); returns it normalised, or throws what is wrong.
    #[wasm_bindgen(js_name = checkDesign)]
    pub fn check_design(design: JsValue) -> Result<JsValue, JsValue> {
        let text = match design.as_string() {
            Some(t) => t,
            None => js_sys::JSON::stringify(&design).map(String::from).map_err(|_| js_sys::Error::new("invalid design: it is not JSON data"))?,
        };
        Design::from_json(&text).map(|d| design_js(&d)).map_err(|e| js_sys::Error::new(&e.to_string()).into())
    }
}

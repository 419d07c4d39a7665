//! Helpers shared by the browser tests.
#![allow(dead_code)]

use wasm_bindgen::{JsCast, JsValue};
use web_sys::HtmlIFrameElement;
use weblab::env::task::inline_core;
use weblab::task::TaskSpec;

/// A fresh iframe in the test page, big enough for the largest task.
pub fn new_frame() -> HtmlIFrameElement {
    let doc = web_sys::window().unwrap().document().unwrap();
    let iframe: HtmlIFrameElement = doc.create_element("iframe").unwrap().unchecked_into();
    iframe.set_width("420");
    iframe.set_height("560");
    doc.body().unwrap().append_child(&iframe).unwrap();
    iframe
}

/// A task page on the lab's core whose task script is `script`, rendered through `srcdoc`.
pub fn fixture_page(name: &str, script: &str) -> TaskSpec {
    let html = format!(
        r#"<!DOCTYPE html>
<html><head><meta charset="utf-8">
<link rel="stylesheet" href="core/core.css">
<script src="core/core.js"></script>
<script>{script}</script>
</head><body><div id="wrap" class="wide"><div id="query"></div><div id="area"></div></div></body></html>"#
    );
    TaskSpec::Inline { name: name.to_string(), html: inline_core(&html) }
}

/// Evaluates `code` in the iframe's page.
pub fn js_eval_in(iframe: &HtmlIFrameElement, code: &str) -> JsValue {
    let win = iframe.content_window().expect("iframe window");
    let eval = js_sys::Reflect::get(&win, &JsValue::from_str("eval")).unwrap();
    eval.unchecked_into::<js_sys::Function>().call1(&win, &JsValue::from_str(code)).expect("eval")
}

/// Evaluates `code` (an expression) in the iframe's page and parses its `JSON.stringify`.
pub fn js_json_in(iframe: &HtmlIFrameElement, code: &str) -> serde_json::Value {
    let text = js_eval_in(iframe, &format!("JSON.stringify({code})"));
    serde_json::from_str(&text.as_string().unwrap_or_else(|| "null".into())).expect("JSON from the page")
}

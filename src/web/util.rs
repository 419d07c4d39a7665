//! Small helpers over wasm-bindgen for the browser edge.

use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::{JsCast, JsValue, closure::Closure};
use wasm_bindgen_futures::JsFuture;

/// `obj[key]`, or `undefined` when it cannot be read.
pub fn get(obj: &JsValue, key: &str) -> JsValue {
    Reflect::get(obj, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

pub fn set(obj: &JsValue, key: &str, value: &JsValue) {
    let _ = Reflect::set(obj, &JsValue::from_str(key), value);
}

/// `obj[name](...args)` with `this = obj`; errors when it is not a function or it throws.
pub fn call(obj: &JsValue, name: &str, args: &[JsValue]) -> Result<JsValue, JsValue> {
    let f = get(obj, name);
    let f: Function = f.dyn_into().map_err(|_| JsValue::from_str(&format!("{name} is not a function")))?;
    let arr = args.iter().collect::<js_sys::Array>();
    f.apply(obj, &arr)
}

pub fn is_function(obj: &JsValue, name: &str) -> bool {
    get(obj, name).is_function()
}

/// A readable message from a thrown JS value (Error objects give "Name: message"). Works for
/// values from the task page's realm, where `instanceof Error` would be false.
pub fn js_message(err: &JsValue) -> String {
    if err.is_object() {
        let msg = get(err, "message").as_string();
        let name = get(err, "name").as_string().unwrap_or_default();
        if let Some(msg) = msg {
            return if name.is_empty() { msg } else { format!("{name}: {msg}") };
        }
    }
    err.as_string().or_else(|| js_sys::JSON::stringify(err).ok().map(String::from)).unwrap_or_else(|| format!("{err:?}"))
}

// The task page is another JS realm: its objects fail `instanceof` checks against the lab's own
// classes (what `dyn_ref` does), so page objects are recognised by what they are instead.

const XHTML: &str = "http://www.w3.org/1999/xhtml";

pub fn as_object(v: &JsValue) -> Option<&js_sys::Object> {
    v.is_object().then(|| v.unchecked_ref())
}

pub fn as_element(node: &web_sys::Node) -> Option<&web_sys::Element> {
    (node.node_type() == web_sys::Node::ELEMENT_NODE).then(|| node.unchecked_ref())
}

pub fn as_html(el: &web_sys::Element) -> Option<&web_sys::HtmlElement> {
    (el.namespace_uri().as_deref() == Some(XHTML)).then(|| el.unchecked_ref())
}

/// The element as `T` when it is an HTML element with tag `tag` (upper case).
pub fn as_html_tag<'a, T: JsCast>(el: &'a web_sys::Element, tag: &str) -> Option<&'a T> {
    (as_html(el).is_some() && el.tag_name().eq_ignore_ascii_case(tag)).then(|| el.unchecked_ref())
}

/// The text a text box (INPUT or TEXTAREA) holds; None for any other element.
pub fn field_value(el: &web_sys::Element) -> Option<String> {
    as_html_tag::<web_sys::HtmlInputElement>(el, "INPUT")
        .map(|i| i.value())
        .or_else(|| as_html_tag::<web_sys::HtmlTextAreaElement>(el, "TEXTAREA").map(|t| t.value()))
}

/// Sets the text of a text box (INPUT or TEXTAREA); any other element is left as it is.
pub fn set_field_value(el: &web_sys::Element, v: &str) {
    if let Some(i) = as_html_tag::<web_sys::HtmlInputElement>(el, "INPUT") {
        i.set_value(v);
    } else if let Some(t) = as_html_tag::<web_sys::HtmlTextAreaElement>(el, "TEXTAREA") {
        t.set_value(v);
    }
}

pub fn window() -> web_sys::Window {
    web_sys::window().expect("a browser window")
}

/// Milliseconds from the high-resolution clock of this global (window or worker).
pub fn now_ms() -> f64 {
    let perf = get(&js_sys::global(), "performance");
    call(&perf, "now", &[]).ok().and_then(|v| v.as_f64()).unwrap_or_else(js_sys::Date::now)
}

/// Resolves after `ms` milliseconds (`setTimeout` of this global: window or worker).
pub async fn sleep(ms: u32) {
    let promise = Promise::new(&mut |resolve, _| {
        let _ = call(&js_sys::global(), "setTimeout", &[resolve.into(), JsValue::from(ms)]);
    });
    let _ = JsFuture::from(promise).await;
}

/// Lets the browser run other work (rendering, input, the task page's timers) and resumes as soon
/// as possible. A message-channel hop avoids the 4 ms clamp of nested zero-delay timeouts.
pub async fn yield_now() {
    let promise = Promise::new(&mut |resolve, _| {
        let channel = web_sys::MessageChannel::new().expect("MessageChannel");
        let port = channel.port2();
        let cb = Closure::once_into_js(move || {
            let _ = resolve.call0(&JsValue::NULL);
        });
        port.set_onmessage(Some(cb.unchecked_ref()));
        let _ = channel.port1().post_message(&JsValue::NULL);
    });
    let _ = JsFuture::from(promise).await;
}

/// Waits for `event` on `target`; resolves true when it fired, false after `timeout_ms`.
pub async fn wait_event(target: &web_sys::EventTarget, event: &str, timeout_ms: u32) -> bool {
    let target = target.clone();
    let event = event.to_string();
    let promise = Promise::new(&mut |resolve, _| {
        let on_event = Closure::once_into_js({
            let resolve = resolve.clone();
            move || {
                let _ = resolve.call1(&JsValue::NULL, &JsValue::TRUE);
            }
        });
        let opts = web_sys::AddEventListenerOptions::new();
        opts.set_once(true);
        let _ = target.add_event_listener_with_callback_and_add_event_listener_options(&event, on_event.unchecked_ref(), &opts);
        let _ = call(&js_sys::global(), "setTimeout", &[resolve.into(), JsValue::from(timeout_ms), JsValue::FALSE]);
    });
    JsFuture::from(promise).await.map(|v| v.is_truthy()).unwrap_or(false)
}

//! The checks that turn a page that will not load into a clear message: same origin, fetchable,
//! and, once a page is already unusable, which of its scripts threw, does not parse or cannot be
//! fetched (found without running anything of the page).

use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::Window;

use super::super::util::{call, get, js_message, window};
use crate::env::EnvError;

/// Why a page's scripts did not set it up.
pub(super) enum ScriptFailure {
    /// The page's core recorded an error thrown while the page loaded (the lab's core does).
    Threw(String),
    /// A classic script does not parse: which one, and the parser's message.
    DoesNotParse { script: String, message: String },
    /// A `<script src>` could not be fetched.
    Unloadable { src: String, detail: String },
}

/// Finds the script that kept a page from setting up, without running anything of the page.
/// First the errors the page's core kept while the page loaded (`core.loadErrors`, the lab's
/// core; the lab cannot listen on a page's window before the page creates it). Otherwise the
/// page's source as it was served (or the HTML it was given) is parsed inertly (`DOMParser`
/// runs no script), so only the scripts the browser itself met while loading are looked at,
/// never ones the page inserted later: each external one is fetched (same origin only) and each
/// is compiled, never called, until one cannot be had or does not parse. Only used on a page
/// that is already unusable.
pub(super) async fn diagnose_scripts(win: &Window, url: &str, inline: Option<&str>) -> Option<ScriptFailure> {
    let recorded = call(&get(win, "core"), "loadErrors", &[]).ok().filter(js_sys::Array::is_array);
    if let Some(first) = recorded.map(|v| js_sys::Array::from(&v).get(0)).and_then(|v| v.as_string()) {
        return Some(ScriptFailure::Threw(crate::env::task::shown(&first)));
    }
    let source = match inline {
        Some(html) => html.to_string(),
        None => fetch_text(url).await.ok()?,
    };
    let parsed = web_sys::DomParser::new().ok()?.parse_from_string(&source, web_sys::SupportedType::TextHtml).ok()?;
    let scripts = parsed.get_elements_by_tag_name("script");
    // The lab's own `Function` constructor (never the page's, which the page may have replaced):
    // constructing compiles the code; the function is never called.
    let function_ctor = get(&window(), "Function");
    let ctor: &js_sys::Function = function_ctor.unchecked_ref();
    let own_origin = window().location().origin().ok()?;
    // A page given as HTML resolves its script paths against the lab's page.
    let base = if inline.is_some() { window().location().href().ok()? } else { url.to_string() };
    for i in 0..scripts.length() {
        let Some(script) = scripts.item(i) else { continue };
        let kind = script.get_attribute("type").unwrap_or_default().to_ascii_lowercase();
        if !matches!(kind.as_str(), "" | "text/javascript" | "application/javascript") {
            continue;
        }
        let (label, code) = match script.get_attribute("src") {
            Some(src) => {
                let Ok(resolved) = web_sys::Url::new_with_base(&src, &base) else { continue };
                // Another origin's script is not fetched from here.
                if resolved.origin() != own_origin {
                    continue;
                }
                match fetch_text(&resolved.href()).await {
                    Ok(code) => (format!("its script {src}"), code),
                    Err(detail) => return Some(ScriptFailure::Unloadable { src, detail }),
                }
            }
            None => (format!("its inline script #{}", i + 1), script.text_content().unwrap_or_default()),
        };
        if let Err(e) = js_sys::Reflect::construct(ctor, &js_sys::Array::of1(&JsValue::from_str(&code))) {
            return Some(ScriptFailure::DoesNotParse { script: label, message: js_message(&e) });
        }
    }
    None
}

/// The text at `url` (absolute, on the lab's origin), or why it could not be had.
async fn fetch_text(url: &str) -> Result<String, String> {
    let resp = JsFuture::from(window().fetch_with_str(url)).await.map_err(|e| js_message(&e))?;
    let resp: web_sys::Response = resp.unchecked_into();
    if !resp.ok() {
        return Err(format!("HTTP {} {}", resp.status(), resp.status_text()));
    }
    let text = JsFuture::from(resp.text().map_err(|e| js_message(&e))?).await.map_err(|e| js_message(&e))?;
    Ok(text.as_string().unwrap_or_default())
}

/// Resolves `url` against the lab's page and refuses other origins.
pub fn resolve_same_origin(url: &str) -> Result<String, EnvError> {
    let win = window();
    let base = win.location().href().map_err(|e| EnvError::Browser(js_message(&e)))?;
    let parsed =
        web_sys::Url::new_with_base(url, &base).map_err(|_| EnvError::NotFound { url: url.to_string(), detail: "not a valid URL".into() })?;
    let own = win.location().origin().map_err(|e| EnvError::Browser(js_message(&e)))?;
    if parsed.origin() != own {
        return Err(EnvError::CrossOrigin { url: parsed.href(), origin: parsed.origin() });
    }
    Ok(parsed.href())
}

/// A cheap request before loading, so a missing page gets "HTTP 404" instead of a confusing
/// "not a task page".
pub(super) async fn check_fetchable(url: &str) -> Result<(), EnvError> {
    let not_found = |detail: String| EnvError::NotFound { url: url.to_string(), detail };
    let resp = JsFuture::from(window().fetch_with_str(url)).await.map_err(|e| not_found(js_message(&e)))?;
    let resp: web_sys::Response = resp.unchecked_into();
    if !resp.ok() {
        return Err(not_found(format!("HTTP {} {}", resp.status(), resp.status_text())));
    }
    // Read the answer to its end: a response left half-read holds the URL's cache entry, and the
    // page load that follows can wait on it (first loads timed out now and then on the test
    // server).
    if let Ok(body) = resp.array_buffer() {
        let _ = JsFuture::from(body).await;
    }
    Ok(())
}

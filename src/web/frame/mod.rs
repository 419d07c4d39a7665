//! The task iframe: loading a page (with the checks that give clear errors), and the MiniWoB page
//! contract for episode control and reward.

use wasm_bindgen::{JsCast, JsValue, closure::Closure};
use web_sys::{Document, Element, HtmlIFrameElement, Window};

use super::util::{as_object, call, get, is_function, js_message, now_ms, set, sleep, wait_event};
use crate::env::{EnvConfig, EnvError, Settle};
use crate::task::TaskSpec;

mod checks;
mod dom;
pub use checks::resolve_same_origin;
use checks::{ScriptFailure, check_fetchable, diagnose_scripts};
use dom::{CHROME_IDS, body_elements, digest, fetch_style_images, showing};
pub use dom::{describe, is_showing};

/// Expando set on a clicked node: the episode epoch in which it was clicked.
pub const TAMPER_KEY: &str = "__weblabTampered";

/// The page currently loaded in the iframe.
pub struct LoadedPage {
    /// What was loaded (URL, or a digest of inline HTML), to skip reloading the same page.
    pub key: String,
    pub url: String,
    pub window: Window,
    pub document: Document,
    /// Whether the page offers `core.holdClock` (the lab's own core does).
    pub can_hold_clock: bool,
    /// The page's own `core.EPISODE_MAX_TIME` as it loaded, restored whenever the clock is not
    /// held (pages without `holdClock` get an hour while it is).
    own_max_time: JsValue,
    /// Counter bumped at every episode start; tamper marks carry it.
    pub epoch: u32,
    /// The body's element children when the page had loaded: anything else showing at the body's
    /// level was put there by an episode (a date picker, a dialog) and may outlive it.
    baseline: Vec<Element>,
    /// The images the page's style sheets show as content (`content: url(…)`), fetched when it
    /// loaded: an icon sized by such an image has no box until it arrives, and a view shown by a
    /// later step would otherwise show its icons missing.
    style_images: Vec<JsValue>,
    /// The timers the page starts in reaction to an action (a step waits for them).
    pub reactions: super::reaction::Reactions,
    /// Why loading took a second try, until a reset reports it.
    pub load_note: Option<String>,
    _tamper_listener: Listener,
    /// Where the page began to navigate to (another document), as soon as it began: a link
    /// followed or `location` set. The old document shows until the new one arrives, and an
    /// action meanwhile would start the navigation again, so a page that leaves at every click
    /// could otherwise play a whole episode without being seen to leave.
    leaving: Leaving,
    _leave_watch: LeaveWatch,
}

/// The reward globals of the contract, read after each action.
#[derive(Clone, Debug, PartialEq)]
pub struct PageOutcome {
    pub done: bool,
    pub reward: f64,
    pub raw_reward: f64,
    pub reason: Option<String>,
}

pub struct TaskFrame {
    pub iframe: HtmlIFrameElement,
    pub page: Option<LoadedPage>,
}

impl TaskFrame {
    pub fn new(iframe: HtmlIFrameElement) -> Self {
        TaskFrame { iframe, page: None }
    }

    /// Loads the page of `spec` unless it is already loaded.
    pub async fn ensure_loaded(&mut self, spec: &TaskSpec, cfg: &EnvConfig) -> Result<&LoadedPage, EnvError> {
        let (key, url) = match spec {
            TaskSpec::Inline { name, html } => (format!("inline:{name}:{:016x}", digest(html)), format!("inline:{name}")),
            // Every generated site shows on the same page, so designs change without a reload.
            TaskSpec::Generated { .. } => ("generated".to_string(), "gminiwob (generated site)".to_string()),
            _ => {
                let url = resolve_same_origin(&spec.page_url().unwrap_or_default())?;
                (url.clone(), url)
            }
        };
        let current = self.page.as_ref().is_some_and(|p| p.key == key && self.still_showing(p));
        if !current {
            self.page = None;
            match self.load(spec, key.clone(), url.clone(), cfg).await {
                // A file of the page that never arrives (a request the server left hanging) is
                // asked for again by a second load; a page that stalls twice is reported.
                Err(EnvError::LoadTimeout { .. }) => {
                    self.load(spec, key, url, cfg).await?;
                    let page = self.page.as_mut().expect("page loaded");
                    page.load_note = Some(format!("its first load stalled for {} ms and was stopped", cfg.load_timeout_ms));
                }
                other => other?,
            }
        }
        Ok(self.page.as_ref().expect("page loaded"))
    }

    /// Loads the page of `spec` afresh, even when it is showing (to clear what episodes left).
    pub async fn reload(&mut self, spec: &TaskSpec, cfg: &EnvConfig) -> Result<&LoadedPage, EnvError> {
        self.page = None;
        self.ensure_loaded(spec, cfg).await
    }

    /// False when the iframe no longer shows the document we loaded, or that document began to
    /// navigate to another (it navigated away).
    pub fn still_showing(&self, page: &LoadedPage) -> bool {
        page.leaving.borrow().is_none() && self.iframe.content_document().is_some_and(|d| JsValue::from(d) == JsValue::from(page.document.clone()))
    }

    /// Where the iframe is, or is going: a page that began to leave names its destination.
    pub fn current_url(&self) -> String {
        if let Some(url) = self.page.as_ref().and_then(|p| p.leaving.borrow().clone()).filter(|u| !u.is_empty()) {
            return url;
        }
        self.iframe.content_window().and_then(|w| w.location().href().ok()).unwrap_or_else(|| "(another origin)".into())
    }

    async fn load(&mut self, spec: &TaskSpec, key: String, url: String, cfg: &EnvConfig) -> Result<(), EnvError> {
        let inline = match spec {
            TaskSpec::Inline { html, .. } => Some(html.as_str()),
            TaskSpec::Generated { .. } => Some(crate::gminiwob::task::generated_page()),
            _ => None,
        };
        if let Some(html) = inline {
            self.iframe.set_srcdoc(html);
            self.iframe.remove_attribute("src").ok();
        } else {
            check_fetchable(&url).await?;
            self.iframe.remove_attribute("srcdoc").ok();
            self.iframe.set_src(&url);
        }
        if !wait_event(self.iframe.as_ref(), "load", cfg.load_timeout_ms).await {
            // Stop what is still loading: a request left pending holds its file's cache entry,
            // and every later load of that file would wait on it.
            if let Some(w) = self.iframe.content_window() {
                let _ = w.stop();
            }
            return Err(EnvError::LoadTimeout { url, ms: cfg.load_timeout_ms });
        }
        let (Some(win), Some(doc)) = (self.iframe.content_window(), self.iframe.content_document()) else {
            return Err(EnvError::CrossOrigin { url, origin: "a different origin after loading".into() });
        };
        let core = get(&win, "core");
        let math = get(&win, "Math");
        let global: &JsValue = win.as_ref();
        let missing = [
            (&core, "startEpisodeReal", "core.startEpisodeReal()"),
            (&core, "endEpisode", "core.endEpisode()"),
            (&core, "getUtterance", "core.getUtterance()"),
            (global, "genProblem", "genProblem()"),
            (&math, "seedrandom", "Math.seedrandom()"),
        ]
        .into_iter()
        .find(|(obj, name, _)| !is_function(obj, name))
        .map(|(_, _, label)| label);
        if let Some(missing) = missing {
            // Usually a script of the page failed; say which and how, not just what is missing.
            return Err(match diagnose_scripts(&win, &url, inline).await {
                Some(ScriptFailure::Threw(message)) => {
                    EnvError::PageThrew { task: spec.name().to_string(), message: format!("{message} (while loading {url})") }
                }
                Some(ScriptFailure::DoesNotParse { script, message }) => {
                    EnvError::PageThrew { task: spec.name().to_string(), message: format!("{message} (in {script}, while loading {url})") }
                }
                Some(ScriptFailure::Unloadable { src, detail }) => {
                    EnvError::NotATaskPage { url, missing: format!("{missing}: its script {src} could not be loaded ({detail})") }
                }
                None => EnvError::NotATaskPage {
                    url,
                    missing: format!(
                        "{missing} (its scripts load and parse: one may have stopped with an error as the page loaded; the browser's console for the page shows it)"
                    ),
                },
            });
        }
        // Our own tamper marks, so `tampered` works on any page (clicks of any origin count).
        let listener = Closure::<dyn FnMut(web_sys::Event)>::new({
            let doc = doc.clone();
            move |ev: web_sys::Event| {
                if let Some(t) = ev.target() {
                    set(&t, TAMPER_KEY, &get(&doc, "__weblabEpoch"));
                }
            }
        });
        doc.add_event_listener_with_callback_and_bool("click", listener.as_ref().unchecked_ref(), true)
            .map_err(|e| EnvError::Browser(js_message(&e)))?;
        let (leaving, leave_watch) = watch_leaving(&win)?;
        let can_hold_clock = is_function(&core, "holdClock");
        let baseline = body_elements(&doc);
        let own_max_time = get(&core, "EPISODE_MAX_TIME");
        let style_images = fetch_style_images(&doc);
        let reactions = super::reaction::Reactions::install(&win);
        self.page = Some(LoadedPage {
            key,
            url,
            window: win,
            document: doc,
            can_hold_clock,
            own_max_time,
            epoch: 0,
            baseline,
            style_images,
            reactions,
            load_note: None,
            _tamper_listener: listener,
            leaving,
            _leave_watch: leave_watch,
        });
        Ok(())
    }
}

/// Where a page began to navigate to, once it has (empty where the browser does not say).
/// A page event listener kept alive as long as its page.
type Listener = Closure<dyn FnMut(web_sys::Event)>;

type Leaving = std::rc::Rc<std::cell::RefCell<Option<String>>>;

/// Watches a page's window for the start of a navigation to another document: the Navigation
/// API's `navigate` event where the browser has it (it names the destination; a fragment or
/// history change stays in the document, a download leaves nothing), `beforeunload` otherwise.
fn watch_leaving(win: &Window) -> Result<(Leaving, LeaveWatch), EnvError> {
    let leaving = std::rc::Rc::new(std::cell::RefCell::new(None));
    let navigation = get(win, "navigation");
    let has_api = !navigation.is_undefined() && !navigation.is_null();
    let listener = Closure::<dyn FnMut(web_sys::Event)>::new({
        let leaving = leaving.clone();
        move |ev: web_sys::Event| {
            let url = if has_api {
                let destination = get(&ev, "destination");
                let download = get(&ev, "downloadRequest");
                if get(&destination, "sameDocument").as_bool() != Some(false) || !(download.is_null() || download.is_undefined()) {
                    return;
                }
                get(&destination, "url").as_string().unwrap_or_default()
            } else {
                String::new()
            };
            *leaving.borrow_mut() = Some(url);
        }
    });
    let (target, event): (JsValue, &str) = if has_api { (navigation, "navigate") } else { (win.into(), "beforeunload") };
    let target: web_sys::EventTarget = target.unchecked_into();
    target.add_event_listener_with_callback(event, listener.as_ref().unchecked_ref()).map_err(|e| EnvError::Browser(js_message(&e)))?;
    Ok((leaving, LeaveWatch { target, event, listener }))
}

/// The listener of [`watch_leaving`], removed when its page is dropped: the lab's own next load
/// navigates the old window too, after the listener's closure is gone.
struct LeaveWatch {
    target: web_sys::EventTarget,
    event: &'static str,
    listener: Listener,
}

impl Drop for LeaveWatch {
    fn drop(&mut self) {
        let _ = self.target.remove_event_listener_with_callback(self.event, self.listener.as_ref().unchecked_ref());
    }
}

impl LoadedPage {
    fn core(&self) -> JsValue {
        get(&self.window, "core")
    }

    /// Elements showing at the body's level that the page did not have when it loaded (the
    /// contract's chrome aside): state an episode created outside the task area, which the page's
    /// `genProblem` may not clear (jQuery UI's date picker stays open into the next episode).
    pub fn leftovers(&self) -> Vec<Element> {
        body_elements(&self.document)
            .into_iter()
            .filter(|e| !self.baseline.contains(e) && !CHROME_IDS.contains(&e.id().as_str()) && showing(e))
            .collect()
    }

    /// Starts a new episode with `seed` and waits until the page says it is ready and has loaded
    /// the images and fonts it asked for; returns that last wait, if there was one. `site` is the
    /// generated site to show (on `tasks/gminiwob.html`).
    pub async fn start_episode(
        &mut self,
        task: &str,
        seed: u32,
        cfg: &EnvConfig,
        site: Option<&crate::gminiwob::Site>,
    ) -> Result<Option<Settle>, EnvError> {
        let core = self.core();
        let threw = |e: JsValue| EnvError::PageThrew { task: task.to_string(), message: js_message(&e) };
        // End whatever runs (a no-op when nothing does), so no stale timer fires into the new one.
        call(&core, "endEpisode", &[JsValue::from(0), JsValue::FALSE, JsValue::from_str("reset")]).map_err(threw)?;
        super::gminiwob::hand_site(&self.window, site).map_err(threw)?;
        call(&get(&self.window, "Math"), "seedrandom", &[JsValue::from(seed)]).map_err(threw)?;
        if is_function(&core, "setDataMode") {
            call(&core, "setDataMode", &[JsValue::from_str(&cfg.data_mode)]).map_err(threw)?;
        }
        if !self.can_hold_clock {
            if cfg.hold_clock {
                // A foreign page cannot pause its clock: give it an hour so think time cannot time it out.
                set(&core, "EPISODE_MAX_TIME", &JsValue::from(3_600_000));
            } else if self.own_max_time.as_f64().is_some() {
                // Not held (a person playing): the page's own limit.
                set(&core, "EPISODE_MAX_TIME", &self.own_max_time);
            }
        }
        // Focus outlives an episode on pages that reuse their elements (MiniWoB++'s click-test
        // keeps its button, so it stays focused after a click): every episode starts with
        // nothing focused, so the seed alone decides the first observation.
        // (The page's elements are of its own realm: `dyn_into` would never match them.)
        if let Some(active) = self.document.active_element()
            && is_function(active.as_ref(), "blur")
        {
            call(active.as_ref(), "blur", &[]).map_err(threw)?;
        }
        self.epoch += 1;
        set(&self.document, "__weblabEpoch", &JsValue::from(self.epoch));
        call(&core, "startEpisodeReal", &[]).map_err(threw)?;
        let t0 = super::util::now_ms();
        while !get(&self.window, "WOB_TASK_READY").is_truthy() {
            if super::util::now_ms() - t0 > cfg.ready_timeout_ms as f64 {
                return Err(EnvError::NeverReady { task: task.to_string(), ms: cfg.ready_timeout_ms });
            }
            sleep(10).await;
        }
        let settle = self.settle(cfg).await;
        if cfg.hold_clock {
            self.hold_clock(true);
        }
        Ok(settle)
    }

    /// Waits (up to `cfg.settle_timeout_ms`) for the images and web fonts the page is still
    /// loading (at a reset, or after a step that showed new ones), so boxes are final when it is read: an icon sized by its image is 0 px
    /// wide until it arrives. `None` when nothing was loading.
    pub async fn settle(&self, cfg: &EnvConfig) -> Option<Settle> {
        let (images, fonts) = self.loading();
        if images == 0 && !fonts {
            return None;
        }
        let t0 = now_ms();
        let timed_out = loop {
            sleep(2).await;
            let (i, f) = self.loading();
            if i == 0 && !f {
                break false;
            }
            if now_ms() - t0 >= cfg.settle_timeout_ms as f64 {
                break true;
            }
        };
        Some(Settle { images, fonts, waited_ms: (now_ms() - t0).round() as u32, timed_out })
    }

    /// Images not yet loaded (lazy ones, which load only when scrolled to, aside) and whether web
    /// fonts are loading.
    fn loading(&self) -> (u32, bool) {
        let imgs = self.document.images();
        let images = (0..imgs.length())
            .filter_map(|i| imgs.item(i))
            .filter(|img| !get(img, "complete").is_truthy() && img.get_attribute("loading").as_deref() != Some("lazy"))
            .count() as u32
            + self.style_images.iter().filter(|img| !get(img, "complete").is_truthy()).count() as u32;
        let fonts = get(&get(&self.document, "fonts"), "status").as_string().as_deref() == Some("loading");
        (images, fonts)
    }

    pub fn hold_clock(&self, hold: bool) {
        if self.can_hold_clock {
            let _ = call(&self.core(), "holdClock", &[JsValue::from_bool(hold)]);
        }
    }

    /// Ends the running episode from the lab's side (e.g. at the step limit).
    pub fn end_episode(&self, reward: f64, reason: &str) {
        let _ = call(&self.core(), "endEpisode", &[JsValue::from(reward), JsValue::FALSE, JsValue::from_str(reason)]);
    }

    pub fn outcome(&self) -> PageOutcome {
        let w = &self.window;
        let reason = get(w, "WOB_REWARD_REASON");
        PageOutcome {
            done: get(w, "WOB_DONE_GLOBAL").is_truthy(),
            reward: get(w, "WOB_REWARD_GLOBAL").as_f64().unwrap_or(0.0),
            raw_reward: get(w, "WOB_RAW_REWARD_GLOBAL").as_f64().unwrap_or(0.0),
            reason: if reason.is_null() || reason.is_undefined() { None } else { Some(reason.as_string().unwrap_or_else(|| js_message(&reason))) },
        }
    }

    /// The utterance and, where the page provides them, the structured fields.
    pub fn instruction(&self) -> (String, Vec<(String, String)>) {
        let core = self.core();
        let raw = call(&core, "getUtterance", &[]).unwrap_or(JsValue::UNDEFINED);
        // MiniWoB's natural-language tasks return {utterance, fields} instead of a string.
        let (utterance, mut fields_obj) = if raw.is_object() {
            (get(&raw, "utterance").as_string().unwrap_or_default(), get(&raw, "fields"))
        } else {
            (raw.as_string().unwrap_or_default(), JsValue::UNDEFINED)
        };
        if !fields_obj.is_object() && is_function(&core, "getFields") {
            fields_obj = call(&core, "getFields", &[]).unwrap_or(JsValue::UNDEFINED);
        }
        let mut fields = Vec::new();
        if let Some(obj) = as_object(&fields_obj) {
            for entry in js_sys::Object::entries(obj).iter() {
                let pair: js_sys::Array = entry.unchecked_into();
                let key = pair.get(0).as_string().unwrap_or_default();
                let v = pair.get(1);
                let value = match v.as_string() {
                    Some(s) => s,
                    None if v.as_f64().is_some() => format!("{}", v.as_f64().unwrap()),
                    None if v.as_bool().is_some() => v.as_bool().unwrap().to_string(),
                    None if v.is_null() || v.is_undefined() => continue,
                    None => js_sys::JSON::stringify(&v).map(String::from).unwrap_or_default(),
                };
                fields.push((key, value));
            }
        }
        (utterance, fields)
    }
}

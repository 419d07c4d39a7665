//! Performs actions on the live page with real DOM events.
//!
//! What works on real pages (see miniwob-contract.md §4): only the `click` event matters to task
//! handlers, synthetic key events do not insert text (`execCommand('insertText')` does, and fires
//! `input`), and `<select>` needs its value set plus a `change` event. Clicks still send the full
//! pointer/mouse sequence, at the element's centre after scrolling it into view, so pages that
//! listen to `mousedown` (or check where it landed) behave as under a person's hand. `Type` clicks
//! its target first, as MiniWoB's typing action does (`elementClick`, then keys), so a typed field
//! is tampered. A click on a list box's option chooses it; in a multi-select it toggles it, as a
//! person's ctrl-click does, so two clicks choose two items.

use wasm_bindgen::{JsCast, JsValue};
use web_sys::{
    Document, Element, EventInit, HtmlDocument, HtmlElement, HtmlInputElement, HtmlOptionElement, HtmlSelectElement, HtmlTextAreaElement, MouseEvent,
    MouseEventInit, Node, PointerEvent, PointerEventInit, Window,
};

use super::input::{self, InputState};
use super::reader::DomReader;
use super::util;
use super::util::{as_html, as_html_tag, field_value, js_message, set_field_value};
use crate::env::{Action, CLICKED_INPUT_TYPES, EnvError};

pub async fn perform(
    action: &Action,
    reader: &DomReader,
    input: &mut InputState,
    win: &Window,
    doc: &Document,
    field: impl Fn(u32) -> String,
) -> Result<(), EnvError> {
    let Some(target) = action.target() else {
        return input.perform(action, &input::page(win, doc), field).await;
    };
    let node = reader.node(target).ok_or(EnvError::UnknownRef(target))?;
    match action {
        Action::Click(_) => click(&element_of(node), win, doc),
        Action::Type(_, text) => {
            let el = target_element(node, "type into", action)?;
            click(el, win, doc)?;
            type_text(el, text, doc)
        }
        Action::Select(_, option) => select(target_element(node, "select in", action)?, option, action),
        Action::SetValue(_, value) => set_field(&element_of(node), value, win, doc),
        // MiniWoB++'s elementClick, then the field's keys one by one.
        _ => {
            click(&element_of(node), win, doc)?;
            input.perform(action, &input::page(win, doc), field).await
        }
    }
}

/// `SetValue`: make the element hold `value` the way gMiniWoB's `visitGroup` does (see
/// [`Action::SetValue`]). Every branch ends with real events the page sees (`input`/`change`, or
/// a click), so pages that track what was touched (the `visited` mark) see it.
fn set_field(el: &Element, value: &str, win: &Window, doc: &Document) -> Result<(), EnvError> {
    let tag = el.tag_name().to_ascii_uppercase();
    // A value put into a label goes to the control its `for` names (an input, select or button,
    // as the simulator's `control`): clicking the label would toggle it whatever the value says.
    if tag == "LABEL"
        && let Some(control) = el.get_attribute("for").and_then(|id| doc.get_element_by_id(&id))
        && matches!(control.tag_name().to_ascii_uppercase().as_str(), "INPUT" | "SELECT" | "BUTTON")
    {
        return set_field(&control, value, win, doc);
    }
    if let Some(input) = as_html_tag::<HtmlInputElement>(el, "INPUT") {
        return match input.type_().as_str() {
            "checkbox" => {
                if input.checked() != truthy(value) {
                    click(el, win, doc)
                } else {
                    // Already as wanted: touch it without changing it.
                    let _ = input.focus();
                    fire(el, "change")
                }
            }
            "radio" => choose_radio(&radio_group(input, doc), value, win, doc),
            ty if CLICKED_INPUT_TYPES.contains(&ty) => click(el, win, doc),
            _ => replace_text(el, value, doc),
        };
    }
    match tag.as_str() {
        "TEXTAREA" => replace_text(el, value, doc),
        "SELECT" => {
            let sel: &HtmlSelectElement = el.unchecked_ref();
            match option_index(sel, value) {
                Some(i) => {
                    let _ = sel.focus();
                    sel.set_selected_index(i as i32);
                    fire(el, "input")?;
                    fire(el, "change")
                }
                None => Ok(()),
            }
        }
        _ => {
            // A radio group's container: choose among its radios; anything else is clicked.
            let radios = descendants(el, "input[type=radio]");
            if radios.is_empty() { click(el, win, doc) } else { choose_radio(&radios, value, win, doc) }
        }
    }
}

fn truthy(value: &str) -> bool {
    matches!(value.trim().to_ascii_lowercase().as_str(), "true" | "yes" | "1" | "on" | "checked")
}

fn fire(el: &Element, kind: &str) -> Result<(), EnvError> {
    let init = EventInit::new();
    init.set_bubbles(true);
    let ev = web_sys::Event::new_with_event_init_dict(kind, &init).map_err(browser)?;
    el.dispatch_event(&ev).map(|_| ()).map_err(browser)
}

fn descendants(el: &Element, selector: &str) -> Vec<HtmlInputElement> {
    let Ok(list) = el.query_selector_all(selector) else { return Vec::new() };
    (0..list.length()).filter_map(|i| list.item(i)).map(|n| n.unchecked_into()).collect()
}

/// The radios of `input`'s group: same name, same form (or document when it has no form).
fn radio_group(input: &HtmlInputElement, doc: &Document) -> Vec<HtmlInputElement> {
    let name = input.name();
    if name.is_empty() {
        return vec![input.clone()];
    }
    let scope: Element = match input.form() {
        Some(f) => f.into(),
        None => match doc.document_element() {
            Some(root) => root,
            None => return vec![input.clone()],
        },
    };
    descendants(&scope, "input[type=radio]").into_iter().filter(|r| r.name() == name).collect()
}

/// Clicks the radio whose value or label text is `value`; an unmatched value changes nothing.
fn choose_radio(radios: &[HtmlInputElement], value: &str, win: &Window, doc: &Document) -> Result<(), EnvError> {
    let wanted = collapse_ws(value);
    let label_of = |r: &HtmlInputElement| -> String {
        r.labels().and_then(|ls| ls.item(0)).map(|l| collapse_ws(&l.text_content().unwrap_or_default())).unwrap_or_default()
    };
    match radios.iter().find(|r| r.value() == value || label_of(r) == wanted) {
        Some(r) => click(r.unchecked_ref(), win, doc),
        None => Ok(()),
    }
}

fn collapse_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Replaces a text field's value as a person does (select all, type over it), so `input` fires,
/// then `change` as leaving the field would.
fn replace_text(el: &Element, value: &str, doc: &Document) -> Result<(), EnvError> {
    let h: &HtmlElement = as_html(el)
        .ok_or_else(|| EnvError::BadTarget { action: format!("set the value of {}", el.tag_name()), detail: "it is not an HTML element".into() })?;
    h.focus().map_err(browser)?;
    if let Some(i) = as_html_tag::<HtmlInputElement>(el, "INPUT") {
        i.select();
    } else if let Some(t) = as_html_tag::<HtmlTextAreaElement>(el, "TEXTAREA") {
        t.select();
    }
    // execCommand edits wherever the document's selection is: only when the field took focus
    // (a hidden one cannot) is that the field itself; otherwise the fallback below sets it.
    if has_focus(el, doc) {
        let html_doc: &HtmlDocument = doc.unchecked_ref();
        let command = if value.is_empty() { "delete" } else { "insertText" };
        let _ = html_doc.exec_command_with_show_ui_and_value(command, false, value);
    }
    if field_value(el).as_deref() != Some(value) {
        // Fields execCommand cannot edit: set the value and say so with an input event.
        set_field_value(el, value);
        let init = web_sys::InputEventInit::new();
        init.set_bubbles(true);
        init.set_input_type("insertReplacementText");
        init.set_data(Some(value));
        let ev = web_sys::InputEvent::new_with_event_init_dict("input", &init).map_err(browser)?;
        el.dispatch_event(&ev).map_err(browser)?;
    }
    fire(el, "change")
}

/// The index of the option whose text (whitespace collapsed) or value is `option`.
fn option_index(sel: &HtmlSelectElement, option: &str) -> Option<u32> {
    let opts = sel.options();
    let wanted = collapse_ws(option);
    (0..opts.length()).find(|&i| {
        opts.item(i)
            .is_some_and(|o| collapse_ws(&o.text_content().unwrap_or_default()) == wanted || o.get_attribute("value").as_deref() == Some(option))
    })
}

/// The element a click lands on: text pseudo-nodes are clicked through their parent.
fn element_of(node: &Node) -> Element {
    match util::as_element(node) {
        Some(el) => el.clone(),
        None => node.parent_element().expect("text nodes in the graph have a parent element"),
    }
}

fn target_element<'a>(node: &'a Node, verb: &str, action: &Action) -> Result<&'a Element, EnvError> {
    util::as_element(node).ok_or_else(|| EnvError::BadTarget {
        action: format!("{verb} #{}", action.target().unwrap_or_default()),
        detail: "it is a text node, not an element".into(),
    })
}

fn browser(e: JsValue) -> EnvError {
    EnvError::Browser(js_message(&e))
}

/// Scrolls the scrolling boxes around `el` (a feed, a message list) until it is in view, as a
/// person scrolls before clicking, so the click lands on the element itself. Only boxes that
/// scroll (`overflow` auto or scroll) move; boxes that merely clip, the page and the lab around
/// it stay put. Vertical only: no task scrolls sideways.
fn reveal(el: &Element, win: &Window) {
    let mut cur = el.parent_element();
    while let Some(a) = cur {
        if matches!(a.tag_name().as_str(), "BODY" | "HTML") {
            break;
        }
        let scrolls = a.scroll_height() > a.client_height()
            && win
                .get_computed_style(&a)
                .ok()
                .flatten()
                .is_some_and(|st| matches!(st.get_property_value("overflow-y").unwrap_or_default().as_str(), "auto" | "scroll"));
        if scrolls {
            let (r, box_) = (el.get_bounding_client_rect(), a.get_bounding_client_rect());
            let top = box_.top() + a.client_top() as f64;
            let bottom = top + a.client_height() as f64;
            // Bring the top edge in when the element is above; the bottom edge (without losing the
            // top) when it is below.
            let delta = if r.top() < top {
                (r.top() - top).floor()
            } else if r.bottom() > bottom {
                (r.bottom() - bottom).min(r.top() - top).ceil()
            } else {
                0.0
            };
            if delta != 0.0 {
                a.set_scroll_top(a.scroll_top() + delta as i32);
            }
        }
        cur = a.parent_element();
    }
}

fn click(el: &Element, win: &Window, doc: &Document) -> Result<(), EnvError> {
    reveal(el, win);
    let r = el.get_bounding_client_rect();
    let (x, y) = (r.left() + r.width() / 2.0, r.top() + r.height() / 2.0);
    // What a pointer event and a mouse event share; a pointer event's dictionary extends the
    // mouse event's, so one object serves as both.
    let shared = |buttons: u16| {
        let init = MouseEventInit::new();
        init.set_bubbles(true);
        init.set_cancelable(true);
        init.set_composed(true);
        init.set_client_x(x as i32);
        init.set_client_y(y as i32);
        init.set_buttons(buttons);
        init.set_view(Some(win));
        init
    };
    let pointer = |kind: &str, buttons: u16| -> Result<(), EnvError> {
        let init: PointerEventInit = shared(buttons).unchecked_into();
        init.set_pointer_type("mouse");
        init.set_is_primary(true);
        let ev = PointerEvent::new_with_event_init_dict(kind, &init).map_err(browser)?;
        el.dispatch_event(&ev).map(|_| ()).map_err(browser)
    };
    let mouse = |kind: &str, buttons: u16| -> Result<bool, EnvError> {
        let init = shared(buttons);
        init.set_detail(1);
        let ev = MouseEvent::new_with_mouse_event_init_dict(kind, &init).map_err(browser)?;
        el.dispatch_event(&ev).map_err(browser)
    };
    pointer("pointerdown", 1)?;
    let proceed = mouse("mousedown", 1)?;
    if proceed {
        // As a real press does: focus moves to the element, or away from everything.
        focus_or_blur(el, doc);
    }
    pointer("pointerup", 0)?;
    mouse("mouseup", 0)?;
    if proceed {
        choose_option(el)?;
    }
    match as_html(el) {
        // click() runs activation behaviour too: checkboxes toggle, labels forward, links follow.
        Some(h) if el.is_connected() => h.click(),
        // SVG and other non-HTML elements get a plain click event.
        _ if el.is_connected() => {
            mouse("click", 0)?;
        }
        _ => {}
    }
    Ok(())
}

/// A press on a list box's option chooses it (its `click()` does nothing to the selection): in a
/// multi-select it toggles that option alone, elsewhere it becomes the only one chosen. The
/// select then fires `input` and `change`, as under a person's hand.
pub(super) fn choose_option(el: &Element) -> Result<(), EnvError> {
    let Some(opt) = as_html_tag::<HtmlOptionElement>(el, "OPTION") else { return Ok(()) };
    let Some(sel) = el.closest("select").ok().flatten() else { return Ok(()) };
    let list: &HtmlSelectElement = sel.unchecked_ref();
    if opt.disabled() || list.disabled() {
        return Ok(());
    }
    if list.multiple() {
        opt.set_selected(!opt.selected());
    } else if opt.selected() {
        return Ok(());
    } else {
        opt.set_selected(true);
    }
    fire(&sel, "input")?;
    fire(&sel, "change")
}

pub(super) fn focus_or_blur(el: &Element, doc: &Document) {
    // A press focuses the nearest focusable element at or above the target; with none, focus
    // leaves whatever had it. focus() is a no-op on elements that cannot take focus, so try each.
    let mut cur = Some(el.clone());
    while let Some(e) = cur {
        if e.tag_name() == "BODY" {
            break;
        }
        if let Some(h) = as_html(&e) {
            let _ = h.focus();
            if doc.active_element().is_some_and(|a| a == e) {
                return;
            }
        }
        cur = e.parent_element();
    }
    if let Some(active) = doc.active_element()
        && let Some(h) = as_html(&active)
    {
        let _ = h.blur();
    }
}

fn type_text(el: &Element, text: &str, doc: &Document) -> Result<(), EnvError> {
    let h: &HtmlElement = as_html(el)
        .ok_or_else(|| EnvError::BadTarget { action: format!("type into {}", el.tag_name()), detail: "it is not an HTML element".into() })?;
    h.focus().map_err(browser)?;
    // Put the caret at the end so typed text appends (types such as email/number refuse ranges).
    let before = if let Some(i) = as_html_tag::<HtmlInputElement>(el, "INPUT") {
        let n = i.value().encode_utf16().count() as u32;
        let _ = i.set_selection_range(n, n);
        Some(i.value())
    } else if let Some(t) = as_html_tag::<HtmlTextAreaElement>(el, "TEXTAREA") {
        let n = t.value().encode_utf16().count() as u32;
        let _ = t.set_selection_range(n, n);
        Some(t.value())
    } else {
        None
    };
    // The text goes where the document's selection is, as a keyboard's would: into the text field
    // last focused when the target takes no text. A field that could not take focus (a hidden
    // one) is not typed into through another field: the fallback below sets its value.
    let inserted = if before.is_some() && !has_focus(el, doc) {
        false
    } else {
        let html_doc: &HtmlDocument = doc.unchecked_ref();
        html_doc.exec_command_with_show_ui_and_value("insertText", false, text).unwrap_or(false)
    };
    // Fallback for fields execCommand cannot edit (it returns false, or leaves the value as it was).
    if let Some(before) = before {
        let now = field_value(el).unwrap_or_default();
        if (!inserted || now == before) && !text.is_empty() {
            set_field_value(el, &format!("{before}{text}"));
            let init = web_sys::InputEventInit::new();
            init.set_bubbles(true);
            init.set_input_type("insertText");
            init.set_data(Some(text));
            let ev = web_sys::InputEvent::new_with_event_init_dict("input", &init).map_err(browser)?;
            el.dispatch_event(&ev).map_err(browser)?;
        }
    }
    Ok(())
}

fn has_focus(el: &Element, doc: &Document) -> bool {
    doc.active_element().is_some_and(|a| &a == el)
}

fn select(el: &Element, option: &str, action: &Action) -> Result<(), EnvError> {
    let sel: &HtmlSelectElement = as_html_tag(el, "SELECT").ok_or_else(|| EnvError::BadTarget {
        action: format!("select \"{option}\" in #{}", action.target().unwrap_or_default()),
        detail: format!("it is a {}, not a <select>", el.tag_name()),
    })?;
    let Some(index) = option_index(sel, option) else {
        return Err(EnvError::BadTarget {
            action: format!("select \"{option}\" in #{}", action.target().unwrap_or_default()),
            detail: "the list has no such option".into(),
        });
    };
    let _ = sel.focus();
    if sel.multiple() {
        // A multi-select keeps what is chosen: the option is added to it.
        if let Some(o) = sel.options().item(index) {
            let o: &HtmlOptionElement = o.unchecked_ref();
            o.set_selected(true);
        }
    } else {
        sel.set_selected_index(index as i32);
    }
    fire(el, "input")?;
    fire(el, "change")
}

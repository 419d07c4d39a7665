//! Keys pressed on whatever has focus in the task page, as a person's (MiniWoB++'s WebDriver)
//! keyboard presses them: `keydown`, `keypress` for keys that type, `keyup`, with the modifiers'
//! own key events around them; and, where no handler cancelled the key, the default actions the
//! browser performs only for real key presses, performed by the lab: typing and deleting text,
//! Enter (a line break, submitting a form, activating a button or link), Space (activating a
//! button or checkbox, scrolling), Tab (moving focus), the arrows, Home, End and the page keys
//! (the caret, a slider, a list, a radio group, or scrolling), and Ctrl+A/C/X/V on the lab's own
//! clipboard (the system clipboard is never read or written).

use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Element, HtmlDocument, HtmlElement, HtmlInputElement, HtmlSelectElement, HtmlTextAreaElement};

use super::super::util::{as_html, as_html_tag, call, field_value, get, js_message, set_field_value};
use super::events::{Init, fire};
use super::pointer::{Page, scroll_from, scrolls_y};
use crate::env::{EnvError, KeyPress};

/// The lines an arrow key scrolls (Chrome's 40 px).
const ARROW_SCROLL_PX: i32 = 40;

/// Presses `k` on the focused element (the body when nothing has focus).
pub fn press(page: &Page, k: &KeyPress, clipboard: &mut String) -> Result<(), EnvError> {
    // The held modifiers go down first and come up last; each one's own flag is set while it is
    // down (as the browser reports a Shift keydown with shiftKey, its keyup without).
    let held: Vec<&str> =
        [(k.ctrl, "Control"), (k.alt, "Alt"), (k.meta, "Meta"), (k.shift, "Shift")].into_iter().filter_map(|(on, name)| on.then_some(name)).collect();
    let modifier = |i: usize, down: bool| {
        let on = |name: &str| held.iter().position(|h| *h == name).is_some_and(|j| j < i || (j == i && down));
        KeyPress { ctrl: on("Control"), alt: on("Alt"), meta: on("Meta"), shift: on("Shift"), ..KeyPress::modifier(held[i]) }
    };
    for i in 0..held.len() {
        key_event(page, "keydown", &modifier(i, true))?;
    }
    let went_through = key_event(page, "keydown", k)?;
    if went_through {
        keydown_default(page, k, clipboard)?;
        if !k.is_command() && (k.text.is_some() || k.key == "Enter") {
            let code = k.text.map_or(13, |c| c as u32);
            let target = focused(page);
            let init = Init::input(page.win).key(k).with("charCode", code).with("keyCode", code).with("which", code);
            if fire(&target, page.win, "KeyboardEvent", "keypress", init)? {
                match k.text {
                    Some(c) => insert(page, &focused(page), &c.to_string())?,
                    None => enter(page, &focused(page))?,
                }
            }
        }
    }
    let released = key_event(page, "keyup", k)?;
    if went_through && released && k.key == " " && !k.is_command() {
        // Space activates a button or a checkbox as it comes up.
        let el = focused(page);
        if button_like(&el) {
            activate(&el);
        }
    }
    for i in (0..held.len()).rev() {
        key_event(page, "keyup", &modifier(i, false))?;
    }
    Ok(())
}

/// Types `text` key by key (`TYPE_TEXT`): each character is pressed as its key.
pub fn type_text(page: &Page, text: &str, clipboard: &mut String) -> Result<(), EnvError> {
    for c in text.chars() {
        press(page, &KeyPress::for_char(c), clipboard)?;
    }
    Ok(())
}

fn key_event(page: &Page, kind: &str, k: &KeyPress) -> Result<bool, EnvError> {
    fire(&focused(page), page.win, "KeyboardEvent", kind, Init::input(page.win).key(k).with("charCode", 0))
}

fn focused(page: &Page) -> Element {
    page.doc.active_element().or_else(|| page.doc.body().map(Into::into)).or_else(|| page.doc.document_element()).expect("a document has an element")
}

/// The default action of a key going down that no handler cancelled.
fn keydown_default(page: &Page, k: &KeyPress, clipboard: &mut String) -> Result<(), EnvError> {
    let el = focused(page);
    if k.ctrl || k.meta {
        return match k.key.to_ascii_lowercase().as_str() {
            "a" => {
                select_all(page, &el);
                Ok(())
            }
            "c" => clip(page, &el, "copy", clipboard).map(|_| ()),
            "x" => {
                if clip(page, &el, "cut", clipboard)? && editable(&el) {
                    edit(page, &el, "delete")?;
                }
                Ok(())
            }
            "v" => paste(page, &el, clipboard),
            _ => Ok(()),
        };
    }
    match k.key.as_str() {
        "Backspace" => edit(page, &el, "delete"),
        "Delete" => edit(page, &el, "forwardDelete"),
        "Tab" => {
            tab(page, &el, k.shift);
            Ok(())
        }
        "ArrowLeft" | "ArrowRight" | "ArrowUp" | "ArrowDown" | "Home" | "End" | "PageUp" | "PageDown" => navigate(page, &el, k),
        // Space on the page (not in a field, not on a button) scrolls it a page.
        " " if !editable(&el) && !button_like(&el) => {
            let page_key = KeyPress::parse(if k.shift { "<PageUp>" } else { "<PageDown>" }).expect("a key");
            navigate(page, &el, &page_key)
        }
        _ => Ok(()),
    }
}

/// A text input or a text area that takes typing (not read-only, not disabled).
fn text_field(el: &Element) -> bool {
    if let Some(i) = as_html_tag::<HtmlInputElement>(el, "INPUT") {
        return !i.read_only()
            && !i.disabled()
            && matches!(i.type_().as_str(), "text" | "search" | "email" | "url" | "tel" | "password" | "number" | "");
    }
    as_html_tag::<HtmlTextAreaElement>(el, "TEXTAREA").is_some_and(|t| !t.read_only() && !t.disabled())
}

fn editable(el: &Element) -> bool {
    text_field(el) || get(el, "isContentEditable").as_bool() == Some(true)
}

fn button_like(el: &Element) -> bool {
    match el.tag_name().as_str() {
        "BUTTON" | "SUMMARY" => true,
        "INPUT" => matches!(
            el.get_attribute("type").unwrap_or_default().to_ascii_lowercase().as_str(),
            "button" | "submit" | "reset" | "image" | "checkbox" | "radio"
        ),
        _ => false,
    }
}

fn activate(el: &Element) {
    if let Some(h) = as_html(el) {
        h.click();
    }
}

/// A text field's selection in UTF-16 units (types without one, such as email and number, have
/// the caret at the end).
fn field_selection(el: &Element) -> (usize, usize) {
    let len = field_value(el).unwrap_or_default().encode_utf16().count();
    let at = |key: &str| get(el, key).as_f64().map_or(len, |v| v as usize).min(len);
    (at("selectionStart"), at("selectionEnd"))
}

fn set_field_selection(el: &Element, start: usize, end: usize) {
    let _ = call(el, "setSelectionRange", &[(start as u32).into(), (end as u32).into()]);
}

fn exec(page: &Page, command: &str, arg: &str) -> bool {
    let doc: &HtmlDocument = page.doc.unchecked_ref();
    doc.exec_command_with_show_ui_and_value(command, false, arg).unwrap_or(false)
}

/// Inserts `text` at the caret of the focused editable element (replacing the selection), so
/// that `beforeinput` and `input` fire. A field `execCommand` cannot edit gets the new value set
/// and an `input` event.
fn insert(page: &Page, el: &Element, text: &str) -> Result<(), EnvError> {
    if !editable(el) {
        return Ok(());
    }
    let before = field_value(el);
    let done = exec(page, "insertText", text);
    if let Some(before) = before
        && (!done || field_value(el).as_deref() == Some(before.as_str()))
    {
        let (start, end) = field_selection(el);
        let units: Vec<u16> = before.encode_utf16().collect();
        let now = format!("{}{text}{}", String::from_utf16_lossy(&units[..start]), String::from_utf16_lossy(&units[end..]));
        set_field_value(el, &now);
        let caret = start + text.encode_utf16().count();
        set_field_selection(el, caret, caret);
        input_event(page, el, "insertText", Some(text))?;
    }
    Ok(())
}

/// Backspace (`delete`) or Delete (`forwardDelete`) in the focused editable element.
fn edit(page: &Page, el: &Element, command: &str) -> Result<(), EnvError> {
    if !editable(el) {
        return Ok(());
    }
    let before = field_value(el);
    let done = exec(page, command, "");
    if let Some(before) = before
        && (!done || field_value(el).as_deref() == Some(before.as_str()))
    {
        let (mut start, mut end) = field_selection(el);
        let units: Vec<u16> = before.encode_utf16().collect();
        if start == end {
            match command {
                "delete" if start > 0 => start -= 1,
                "forwardDelete" if end < units.len() => end += 1,
                _ => return Ok(()),
            }
        }
        let now = format!("{}{}", String::from_utf16_lossy(&units[..start]), String::from_utf16_lossy(&units[end..]));
        set_field_value(el, &now);
        set_field_selection(el, start, start);
        let kind = if command == "delete" { "deleteContentBackward" } else { "deleteContentForward" };
        input_event(page, el, kind, None)?;
    }
    Ok(())
}

fn input_event(page: &Page, el: &Element, kind: &str, data: Option<&str>) -> Result<(), EnvError> {
    let init = Init::input(page.win).with("inputType", kind).with("cancelable", false);
    let init = match data {
        Some(d) => init.with("data", d),
        None => init,
    };
    fire(el, page.win, "InputEvent", "input", init).map(|_| ())
}

fn change_event(page: &Page, el: &Element) -> Result<(), EnvError> {
    fire(el, page.win, "Event", "change", Init::input(page.win).with("cancelable", false)).map(|_| ())
}

/// Enter that no handler cancelled: a line break in a text area or an editable box; in a text
/// input, the form's implicit submission (its default button is clicked, or a form with one
/// field is submitted); on a button or a link, activation.
fn enter(page: &Page, el: &Element) -> Result<(), EnvError> {
    if as_html_tag::<HtmlTextAreaElement>(el, "TEXTAREA").is_some() {
        return insert(page, el, "\n");
    }
    if get(el, "isContentEditable").as_bool() == Some(true) {
        exec(page, "insertParagraph", "");
        return Ok(());
    }
    if text_field(el) {
        let form = get(el, "form");
        if !form.is_object() {
            return Ok(());
        }
        let form: Element = form.unchecked_into();
        let default = form.query_selector("button:not([type]), button[type=submit], input[type=submit], input[type=image]").ok().flatten();
        match default {
            Some(b) if get(&b, "disabled").as_bool() != Some(true) => activate(&b),
            Some(_) => {}
            None => {
                let blocking = form
                    .query_selector_all("input:not([type]), input[type=text], input[type=search], input[type=email], input[type=url], input[type=tel], input[type=password], input[type=number]")
                    .map(|l| l.length())
                    .unwrap_or(0);
                if blocking <= 1 {
                    let _ = call(&form, "requestSubmit", &[]);
                }
            }
        }
        return Ok(());
    }
    let link = el.tag_name() == "A" && el.has_attribute("href");
    let button = button_like(el) && !matches!(el.get_attribute("type").as_deref(), Some("checkbox" | "radio"));
    if link || button {
        activate(el);
    }
    Ok(())
}

/// Tab (Shift+Tab backwards): focus moves to the next element in the page's tab order
/// (positive `tabindex` first, then document order), its text selected if it is a text field;
/// past the last, focus leaves the page.
fn tab(page: &Page, from: &Element, back: bool) {
    let selector = "a[href], area[href], button, input, select, textarea, iframe, summary, [tabindex], [contenteditable]";
    let Ok(list) = page.doc.query_selector_all(selector) else { return };
    let mut order: Vec<(i32, HtmlElement)> = (0..list.length())
        .filter_map(|i| list.item(i))
        .filter_map(|n| as_html(n.unchecked_ref()).cloned())
        .filter(|h| {
            h.tab_index() >= 0
                && get(h, "disabled").as_bool() != Some(true)
                && h.get_attribute("type").as_deref() != Some("hidden")
                && get(&call(h, "getClientRects", &[]).unwrap_or(JsValue::NULL), "length").as_f64().unwrap_or(0.0) > 0.0
                && page.win.get_computed_style(h).ok().flatten().is_none_or(|s| s.get_property_value("visibility").unwrap_or_default() != "hidden")
        })
        .map(|h| (h.tab_index(), h))
        .collect();
    order.sort_by_key(|(t, _)| if *t > 0 { *t } else { i32::MAX });
    let at = order.iter().position(|(_, h)| h.unchecked_ref::<Element>() == from);
    let next = match (at, back) {
        (Some(i), false) => Some(i + 1),
        (Some(i), true) => i.checked_sub(1),
        (None, false) => Some(0),
        (None, true) => order.len().checked_sub(1),
    };
    match next.and_then(|i| order.get(i)) {
        Some((_, h)) => {
            let _ = h.focus();
            if text_field(h) {
                let _ = call(h, "select", &[]);
            }
        }
        None => {
            if let Some(h) = as_html(from) {
                let _ = h.blur();
            }
        }
    }
}

/// The arrows, Home, End, PageUp and PageDown: the caret in a text field or an editable box, the
/// value of a slider, the option of a list, the checked radio of a group; elsewhere they scroll.
fn navigate(page: &Page, el: &Element, k: &KeyPress) -> Result<(), EnvError> {
    let key = k.key.as_str();
    let forward = matches!(key, "ArrowRight" | "ArrowDown" | "End" | "PageDown");
    if text_field(el) {
        let text: Vec<u16> = field_value(el).unwrap_or_default().encode_utf16().collect();
        let (start, end) = field_selection(el);
        let newline = '\n' as u16;
        let line_start = |at: usize| text[..at].iter().rposition(|&u| u == newline).map_or(0, |i| i + 1);
        let line_end = |at: usize| text[at..].iter().position(|&u| u == newline).map_or(text.len(), |i| at + i);
        let textarea = el.tag_name() == "TEXTAREA";
        let caret = |from: usize| -> usize {
            match key {
                "ArrowLeft" if start != end && !k.shift => start,
                "ArrowRight" if start != end && !k.shift => end,
                "ArrowLeft" => from.saturating_sub(1),
                "ArrowRight" => (from + 1).min(text.len()),
                "Home" => line_start(from),
                "End" => line_end(from),
                "ArrowUp" | "PageUp" if textarea => {
                    let ls = line_start(from);
                    if ls == 0 { 0 } else { (line_start(ls - 1) + (from - ls)).min(ls - 1) }
                }
                "ArrowDown" | "PageDown" if textarea => {
                    let le = line_end(from);
                    if le == text.len() { le } else { (le + 1 + (from - line_start(from))).min(line_end(le + 1)) }
                }
                _ if forward => text.len(),
                _ => 0,
            }
        };
        if k.shift {
            if forward { set_field_selection(el, start, caret(end)) } else { set_field_selection(el, caret(start), end) }
        } else {
            let at = caret(if forward { end } else { start });
            set_field_selection(el, at, at);
        }
        return Ok(());
    }
    if get(el, "isContentEditable").as_bool() == Some(true) {
        let sel = call(page.win, "getSelection", &[]).unwrap_or(JsValue::NULL);
        let (direction, granularity) = match key {
            "ArrowLeft" => ("backward", "character"),
            "ArrowRight" => ("forward", "character"),
            "ArrowUp" | "PageUp" => ("backward", "line"),
            "ArrowDown" | "PageDown" => ("forward", "line"),
            "Home" => ("backward", "lineboundary"),
            _ => ("forward", "lineboundary"),
        };
        let alter = if k.shift { "extend" } else { "move" };
        let _ = call(&sel, "modify", &[alter.into(), direction.into(), granularity.into()]);
        return Ok(());
    }
    if let Some(input) = as_html_tag::<HtmlInputElement>(el, "INPUT") {
        match input.type_().as_str() {
            "range" => return step_range(page, input, key),
            "radio" if key.starts_with("Arrow") => return next_radio(page, input, forward),
            _ => {}
        }
    }
    if let Some(sel) = as_html_tag::<HtmlSelectElement>(el, "SELECT")
        && !sel.multiple()
    {
        let n = sel.length() as i32;
        let i = sel.selected_index();
        let next = match key {
            "Home" | "PageUp" => 0,
            "End" | "PageDown" => n - 1,
            _ if forward => (i + 1).min(n - 1),
            _ => (i - 1).max(0),
        };
        if n > 0 && next != i {
            sel.set_selected_index(next);
            input_event(page, el, "", None)?;
            change_event(page, el)?;
        }
        return Ok(());
    }
    // Scroll the box that holds the focus, or the page.
    let mut scroller = Some(el.clone());
    while let Some(e) = scroller.clone() {
        if matches!(e.tag_name().as_str(), "BODY" | "HTML") || scrolls_y(page.win, &e) {
            break;
        }
        scroller = e.parent_element();
    }
    let room = scroller
        .as_ref()
        .filter(|e| scrolls_y(page.win, e))
        .map_or_else(|| page.win.inner_height().ok().and_then(|v| v.as_f64()).unwrap_or(0.0) as i32, |e| e.client_height());
    let dy = match key {
        "ArrowUp" => -ARROW_SCROLL_PX,
        "ArrowDown" => ARROW_SCROLL_PX,
        "PageUp" => -(room * 7 / 8),
        "PageDown" => room * 7 / 8,
        "Home" => -1_000_000,
        "End" => 1_000_000,
        _ => 0,
    };
    if dy != 0 {
        scroll_from(page, scroller.as_ref().unwrap_or(el), dy);
    }
    Ok(())
}

fn step_range(page: &Page, input: &HtmlInputElement, key: &str) -> Result<(), EnvError> {
    let num = |s: String, d: f64| s.parse::<f64>().unwrap_or(d);
    let (min, max) = (num(input.min(), 0.0), num(input.max(), 100.0));
    let step = match input.step().as_str() {
        "any" => 1.0,
        s => num(s.to_string(), 1.0),
    };
    let v = num(input.value(), (min + max) / 2.0);
    let next = match key {
        "Home" => min,
        "End" => max,
        "ArrowRight" | "ArrowUp" => v + step,
        "ArrowLeft" | "ArrowDown" => v - step,
        "PageUp" => v + ((max - min) / 10.0).max(step),
        _ => v - ((max - min) / 10.0).max(step),
    }
    .clamp(min, max);
    if next != v {
        input.set_value_as_number(next);
        input_event(page, input, "", None)?;
        change_event(page, input)?;
    }
    Ok(())
}

fn next_radio(page: &Page, input: &HtmlInputElement, forward: bool) -> Result<(), EnvError> {
    let name = input.name();
    if name.is_empty() {
        return Ok(());
    }
    let Ok(list) = page.doc.query_selector_all("input[type=radio]") else { return Ok(()) };
    let group: Vec<HtmlInputElement> = (0..list.length())
        .filter_map(|i| list.item(i))
        .map(|n| n.unchecked_into::<HtmlInputElement>())
        .filter(|r| r.name() == name && JsValue::from(r.form()) == JsValue::from(input.form()) && !r.disabled())
        .collect();
    let Some(i) = group.iter().position(|r| r == input) else { return Ok(()) };
    let n = group.len();
    let next = &group[if forward { (i + 1) % n } else { (i + n - 1) % n }];
    let _ = next.focus();
    next.click();
    Ok(())
}

/// Ctrl+A: all the text of the focused field or editable box, or of the whole page.
fn select_all(page: &Page, el: &Element) {
    if text_field(el) {
        let _ = call(el, "select", &[]);
    } else if get(el, "isContentEditable").as_bool() == Some(true) {
        exec(page, "selectAll", "");
    } else if let Some(body) = page.doc.body() {
        let sel = call(page.win, "getSelection", &[]).unwrap_or(JsValue::NULL);
        let _ = call(&sel, "selectAllChildren", &[body.into()]);
    }
}

/// The selected text: in a focused text field its selection, elsewhere the page's.
fn selected_text(page: &Page, el: &Element) -> String {
    if let Some(v) = field_value(el).filter(|_| text_field(el) || el.tag_name() == "TEXTAREA" || el.tag_name() == "INPUT") {
        let units: Vec<u16> = v.encode_utf16().collect();
        let (start, end) = field_selection(el);
        return String::from_utf16_lossy(&units[start.min(end)..end.max(start)]);
    }
    let sel = call(page.win, "getSelection", &[]).unwrap_or(JsValue::NULL);
    call(&sel, "toString", &[]).ok().and_then(|v| v.as_string()).unwrap_or_default()
}

/// Where a clipboard event goes: the focused element, or with only the page focused, the
/// element where the selection starts.
fn clipboard_target(page: &Page, focused: &Element) -> Element {
    if !matches!(focused.tag_name().as_str(), "BODY" | "HTML") {
        return focused.clone();
    }
    let sel = call(page.win, "getSelection", &[]).unwrap_or(JsValue::NULL);
    let anchor = get(&sel, "anchorNode");
    if anchor.is_object() {
        let node: web_sys::Node = anchor.unchecked_into();
        let el = if node.node_type() == web_sys::Node::ELEMENT_NODE { Some(node.unchecked_into()) } else { node.parent_element() };
        if let Some(el) = el {
            return el;
        }
    }
    focused.clone()
}

fn data_transfer(page: &Page) -> Result<JsValue, EnvError> {
    let ctor: js_sys::Function =
        get(page.win, "DataTransfer").dyn_into().map_err(|_| EnvError::Browser("the task page has no DataTransfer".into()))?;
    js_sys::Reflect::construct(&ctor, &js_sys::Array::new()).map_err(|e| EnvError::Browser(js_message(&e)))
}

/// Ctrl+C (`copy`) or Ctrl+X (`cut`): the event goes to the focused element; a handler that
/// cancels it puts its own data on the clipboard, else the selected text goes there (nothing
/// selected leaves the clipboard as it was). True when the selection was taken (a cut then
/// deletes it).
fn clip(page: &Page, el: &Element, kind: &str, clipboard: &mut String) -> Result<bool, EnvError> {
    let dt = data_transfer(page)?;
    let init = Init::input(page.win).with("clipboardData", dt.clone());
    if !fire(&clipboard_target(page, el), page.win, "ClipboardEvent", kind, init)? {
        if let Some(text) = call(&dt, "getData", &["text/plain".into()]).ok().and_then(|v| v.as_string()) {
            *clipboard = text;
        }
        return Ok(false);
    }
    let text = selected_text(page, el);
    if text.is_empty() {
        return Ok(false);
    }
    *clipboard = text;
    Ok(true)
}

/// Ctrl+V: a `paste` event carrying the clipboard's text; unless a handler cancels it, the text
/// goes in at the caret of the focused editable element.
fn paste(page: &Page, el: &Element, clipboard: &str) -> Result<(), EnvError> {
    let dt = data_transfer(page)?;
    let _ = call(&dt, "setData", &["text/plain".into(), clipboard.into()]);
    let init = Init::input(page.win).with("clipboardData", dt);
    if fire(&clipboard_target(page, el), page.win, "ClipboardEvent", "paste", init)? && !clipboard.is_empty() {
        insert(page, el, clipboard)?;
    }
    Ok(())
}

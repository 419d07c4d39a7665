//! The mouse at points of the task page, as a person's (MiniWoB++'s WebDriver) mouse is: the
//! events a real move, press, release and wheel turn send, in the browser's order, and the
//! default actions the browser performs only for real input (focus moving on a press, text
//! selected by pressing and dragging over it or double-clicking a word, the wheel scrolling the
//! box under it), which the lab must perform itself because its events are untrusted.
//!
//! What it cannot give: CSS `:hover` styles (only real input sets them), native drag and drop
//! (`draggable="true"`; no MiniWoB++ page uses it), and selecting inside a text field by dragging
//! (a press in a field puts the caret at its end).

use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Document, Element, HtmlInputElement, HtmlTextAreaElement, Node, Window};

use super::super::actuator::{choose_option, focus_or_blur};
use super::super::util::{as_html_tag, call, get};
use super::events::{Init, fire};
use crate::env::{EnvError, Point};

/// Where the pointer is and what it holds, for one episode.
#[derive(Default)]
pub struct Pointer {
    at: Option<Point>,
    /// The element under the pointer when it last moved (what got `mouseover`).
    hovered: Option<Element>,
    pressed: Option<Press>,
}

/// The left button, held since a press on `target`.
struct Press {
    target: Element,
    /// The press's pointerdown was cancelled: the browser sends no mouse events until release.
    mouse_suppressed: bool,
    /// The press started a text selection here (node, offset): moves extend it.
    selecting: Option<(Node, u32)>,
}

/// The pieces of the page the pointer acts on.
pub struct Page<'a> {
    pub win: &'a Window,
    pub doc: &'a Document,
}

impl Pointer {
    /// Moves to `p`: `over`/`enter` and `out`/`leave` where the element under the pointer
    /// changes, then `pointermove` and `mousemove` (with the button held during a drag); a drag
    /// that selects text extends the selection.
    pub fn move_to(&mut self, page: &Page, p: Point) -> Result<(), EnvError> {
        let target = hit(page, p)?;
        let moved = self.at != Some(p);
        self.at = Some(p);
        self.hover(page, &target)?;
        if !moved {
            // A mouse that did not move sends no move.
            return Ok(());
        }
        let held = self.pressed.is_some();
        let buttons = held as u16;
        fire(&target, page.win, "PointerEvent", "pointermove", Init::input(page.win).at(p, -1, buttons).mouse_pointer(held))?;
        if !self.pressed.as_ref().is_some_and(|s| s.mouse_suppressed) {
            fire(&target, page.win, "MouseEvent", "mousemove", Init::input(page.win).at(p, 0, buttons))?;
        }
        if let Some((node, offset)) = self.pressed.as_ref().and_then(|s| s.selecting.clone())
            && let Some((focus, at)) = caret_at(page, p)
        {
            let sel = selection(page);
            let _ = call(&sel, "setBaseAndExtent", &[node.into(), offset.into(), focus.into(), at.into()]);
        }
        Ok(())
    }

    /// Presses the left button at `p` (`detail`: the click count, 2 for a double-click's second).
    pub fn press(&mut self, page: &Page, p: Point, detail: i32) -> Result<(), EnvError> {
        self.move_to(page, p)?;
        let target = self.under(page)?;
        let init = |kind: &str| Init::input(page.win).at(p, 0, 1).with("detail", if kind == "mousedown" { detail } else { 0 });
        let mouse_suppressed = !fire(&target, page.win, "PointerEvent", "pointerdown", init("pointerdown").mouse_pointer(true))?;
        // Only a cancelled mousedown stops the press's default actions (a cancelled pointerdown
        // only holds back the mouse events).
        let proceed = mouse_suppressed || fire(&target, page.win, "MouseEvent", "mousedown", init("mousedown"))?;
        let mut selecting = None;
        if proceed {
            focus_or_blur(&target, page.doc);
            selecting = select_on_press(page, &target, p, detail);
            choose_option(&target)?;
        }
        self.pressed = Some(Press { target, mouse_suppressed, selecting });
        Ok(())
    }

    /// Releases the left button at `p`: `pointerup`, `mouseup`, and the `click` the browser sends
    /// to the nearest element that holds both where the press and the release landed (its
    /// activation behaviour runs: a checkbox toggles, a label forwards, a link is followed).
    pub fn release(&mut self, page: &Page, p: Point, detail: i32) -> Result<(), EnvError> {
        self.move_to(page, p)?;
        let target = self.under(page)?;
        let press = self.pressed.take();
        fire(&target, page.win, "PointerEvent", "pointerup", Init::input(page.win).at(p, 0, 0).mouse_pointer(false))?;
        if !press.as_ref().is_some_and(|s| s.mouse_suppressed) {
            fire(&target, page.win, "MouseEvent", "mouseup", Init::input(page.win).at(p, 0, 0).with("detail", detail))?;
        }
        let Some(press) = press else { return Ok(()) };
        if let Some(common) = common_ancestor(&press.target, &target) {
            fire(&common, page.win, "PointerEvent", "click", Init::input(page.win).at(p, 0, 0).with("detail", detail).mouse_pointer(false))?;
        }
        Ok(())
    }

    /// A click, or a double-click (two clicks then `dblclick`), at `p`.
    pub fn click(&mut self, page: &Page, p: Point, double: bool) -> Result<(), EnvError> {
        self.press(page, p, 1)?;
        self.release(page, p, 1)?;
        if double {
            self.press(page, p, 2)?;
            self.release(page, p, 2)?;
            let target = self.hovered.clone().expect("moved");
            fire(&target, page.win, "MouseEvent", "dblclick", Init::input(page.win).at(p, 0, 0).with("detail", 2))?;
        }
        Ok(())
    }

    /// Press at the first point, move through the rest, release at the last.
    pub fn drag(&mut self, page: &Page, path: &[Point]) -> Result<(), EnvError> {
        let (Some(&first), Some(&last)) = (path.first(), path.last()) else { return Ok(()) };
        // A path that leaves the page is refused before anything is pressed.
        for &p in path {
            hit(page, p)?;
        }
        self.press(page, first, 1)?;
        for &p in &path[1..path.len() - 1] {
            self.move_to(page, p)?;
        }
        self.release(page, last, 1)
    }

    /// Turns the wheel over `p` by `dy` pixels: a `wheel` event there (the pointer does not move,
    /// as a WebDriver wheel does not move the mouse) and, unless a handler cancelled it, the
    /// scroll the browser performs: the nearest box around that point that can still scroll that
    /// way moves (a box at its end passes the scroll on, as the browser chains it).
    pub fn wheel(&mut self, page: &Page, p: Point, dy: i32) -> Result<(), EnvError> {
        let target = hit(page, p)?;
        let init = Init::input(page.win).at(p, 0, self.pressed.is_some() as u16).with("deltaY", dy).with("deltaMode", 0);
        if fire(&target, page.win, "WheelEvent", "wheel", init)? {
            scroll_from(page, &target, dy);
        }
        Ok(())
    }

    /// What is under the pointer now: the move's handlers may have moved things (a dragged box
    /// follows the pointer), and the browser hit-tests each event afresh.
    fn under(&mut self, page: &Page) -> Result<Element, EnvError> {
        self.rehover(page)?;
        self.hovered.clone().ok_or_else(|| EnvError::Browser("nothing under the pointer".into()))
    }

    /// The page changed under a still pointer (it scrolled, an animation moved something): the
    /// browser sends `over`/`out` and `enter`/`leave` for the element now under it (no move).
    pub fn rehover(&mut self, page: &Page) -> Result<(), EnvError> {
        let Some(p) = self.at else { return Ok(()) };
        match hit(page, p) {
            Ok(target) => self.hover(page, &target),
            Err(_) => Ok(()),
        }
    }

    fn hover(&mut self, page: &Page, target: &Element) -> Result<(), EnvError> {
        let old = self.hovered.clone().filter(|o| o.is_connected());
        if old.as_ref() == Some(target) {
            return Ok(());
        }
        let p = self.at.unwrap_or_default();
        let buttons = self.pressed.is_some() as u16;
        let suppressed = self.pressed.as_ref().is_some_and(|s| s.mouse_suppressed);
        let entered: Vec<Element> = chain(target).into_iter().take_while(|a| old.as_ref().is_none_or(|o| !a.contains(Some(o)))).collect();
        // The pointer's boundary events, then the mouse's: out on the old element, leave on it
        // and each ancestor the new one is not in; over on the new one, enter on it and each
        // ancestor the old one was not in, outermost first.
        for prefix in ["pointer", "mouse"] {
            if prefix == "mouse" && suppressed {
                break;
            }
            let (class, pointer) = if prefix == "pointer" { ("PointerEvent", true) } else { ("MouseEvent", false) };
            let send = |el: &Element, kind: &str, init: Init| -> Result<bool, EnvError> {
                let init = if pointer { init.mouse_pointer(buttons > 0) } else { init };
                fire(el, page.win, class, &format!("{prefix}{kind}"), init)
            };
            if let Some(old) = &old {
                send(old, "out", Init::input(page.win).at(p, 0, buttons).related(Some(target)))?;
                for el in chain(old).into_iter().take_while(|a| !a.contains(Some(target))) {
                    send(&el, "leave", Init::quiet(page.win).at(p, 0, buttons).related(Some(target)))?;
                }
            }
            send(target, "over", Init::input(page.win).at(p, 0, buttons).related(old.as_ref()))?;
            for el in entered.iter().rev() {
                send(el, "enter", Init::quiet(page.win).at(p, 0, buttons).related(old.as_ref()))?;
            }
        }
        self.hovered = Some(target.clone());
        Ok(())
    }
}

/// The element at `p`, or an error when the point is outside the page's viewport.
fn hit(page: &Page, (x, y): Point) -> Result<Element, EnvError> {
    let (w, h) = viewport(page.win);
    if x < 0 || y < 0 || x as f64 >= w || y as f64 >= h {
        return Err(EnvError::BadTarget { action: format!("act at ({x}, {y})"), detail: format!("the point is outside the task page ({w}×{h})") });
    }
    page.doc
        .element_from_point(x as f32, y as f32)
        .or_else(|| page.doc.document_element())
        .ok_or_else(|| EnvError::Browser("the task page has no document element".into()))
}

fn viewport(win: &Window) -> (f64, f64) {
    let dim = |v: Result<JsValue, JsValue>| v.ok().and_then(|v| v.as_f64()).unwrap_or(0.0);
    (dim(win.inner_width()), dim(win.inner_height()))
}

/// The element and its ancestors, innermost first.
fn chain(el: &Element) -> Vec<Element> {
    let mut out = vec![el.clone()];
    let mut cur = el.parent_element();
    while let Some(e) = cur {
        cur = e.parent_element();
        out.push(e);
    }
    out
}

fn common_ancestor(a: &Element, b: &Element) -> Option<Element> {
    if !a.is_connected() || !b.is_connected() {
        return None;
    }
    chain(a).into_iter().find(|x| x.contains(Some(b)))
}

fn selection(page: &Page) -> JsValue {
    call(page.win, "getSelection", &[]).unwrap_or(JsValue::NULL)
}

/// The caret position at `p` (`document.caretRangeFromPoint`): a node and an offset in it.
fn caret_at(page: &Page, (x, y): Point) -> Option<(Node, u32)> {
    let range = call(page.doc, "caretRangeFromPoint", &[x.into(), y.into()]).ok().filter(|r| r.is_object())?;
    let node: Node = get(&range, "startContainer").dyn_into::<JsValue>().ok()?.unchecked_into();
    let offset = get(&range, "startOffset").as_f64()? as u32;
    Some((node, offset))
}

/// What a press does to the selection, as the browser's default action: in a text field the
/// caret goes to its end; on a control (a button, a list) the selection stays (so a selection
/// survives pressing Submit); on text that may be selected the selection collapses where the
/// press landed and a drag extends it, and a double-click's second press selects the word.
/// Returns where a drag's selection starts.
fn select_on_press(page: &Page, target: &Element, p: Point, detail: i32) -> Option<(Node, u32)> {
    if let Some(i) = as_html_tag::<HtmlInputElement>(target, "INPUT") {
        let n = i.value().encode_utf16().count() as u32;
        let _ = i.set_selection_range(n, n);
        return None;
    }
    if let Some(t) = as_html_tag::<HtmlTextAreaElement>(target, "TEXTAREA") {
        let n = t.value().encode_utf16().count() as u32;
        let _ = t.set_selection_range(n, n);
        return None;
    }
    let control = target.closest("button, select, option, label, input, textarea").ok().flatten().is_some();
    if control || !selectable(page, target) {
        return None;
    }
    let sel = selection(page);
    let Some((node, offset)) = caret_at(page, p) else {
        let _ = call(&sel, "removeAllRanges", &[]);
        return None;
    };
    if detail >= 2 {
        let (start, end) = word_around(&node, offset);
        let _ = call(&sel, "setBaseAndExtent", &[node.clone().into(), start.into(), node.into(), end.into()]);
        return None;
    }
    let _ = call(&sel, "collapse", &[node.clone().into(), offset.into()]);
    Some((node, offset))
}

/// Whether the text at `el` can be selected (`user-select` is not `none`).
fn selectable(page: &Page, el: &Element) -> bool {
    let style = page.win.get_computed_style(el).ok().flatten();
    !style.is_some_and(|s| {
        s.get_property_value("user-select").is_ok_and(|v| v == "none") || s.get_property_value("-webkit-user-select").is_ok_and(|v| v == "none")
    })
}

/// The word around `offset` in a text node (letters, digits, `_` and `'`), in UTF-16 offsets.
fn word_around(node: &Node, offset: u32) -> (u32, u32) {
    if node.node_type() != Node::TEXT_NODE {
        return (offset, offset);
    }
    let text: Vec<u16> = node.text_content().unwrap_or_default().encode_utf16().collect();
    let is_word = |u: u16| char::from_u32(u as u32).is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '\'');
    let at = (offset as usize).min(text.len());
    let mut start = at;
    while start > 0 && is_word(text[start - 1]) {
        start -= 1;
    }
    let mut end = at;
    while end < text.len() && is_word(text[end]) {
        end += 1;
    }
    (start as u32, end as u32)
}

/// The scroll the browser performs for a wheel turn over `el`: the nearest box (the element
/// itself or an ancestor) that scrolls vertically and can still move that way takes it; with
/// none, the page itself.
pub(super) fn scroll_from(page: &Page, el: &Element, dy: i32) {
    let mut cur = Some(el.clone());
    while let Some(e) = cur {
        if matches!(e.tag_name().as_str(), "BODY" | "HTML") {
            break;
        }
        if scrolls_y(page.win, &e) && can_scroll(&e, dy) {
            e.set_scroll_top(e.scroll_top() + dy);
            return;
        }
        cur = e.parent_element();
    }
    if let Some(root) = get(page.doc, "scrollingElement").dyn_into::<JsValue>().ok().filter(|v| v.is_object()) {
        let root: Element = root.unchecked_into();
        if can_scroll(&root, dy) {
            root.set_scroll_top(root.scroll_top() + dy);
        }
    }
}

/// A box that scrolls vertically: `overflow-y` auto, scroll or overlay, with more content than
/// room (text areas and list boxes scroll the same way).
pub(super) fn scrolls_y(win: &Window, el: &Element) -> bool {
    let textarea = el.tag_name() == "TEXTAREA";
    el.scroll_height() > el.client_height()
        && win.get_computed_style(el).ok().flatten().is_some_and(|st| {
            match st.get_property_value("overflow-y").unwrap_or_default().as_str() {
                "auto" | "scroll" | "overlay" => true,
                // A text area scrolls what it holds unless told not to.
                "visible" | "clip" => textarea,
                _ => false,
            }
        })
}

fn can_scroll(el: &Element, dy: i32) -> bool {
    let top = el.scroll_top();
    if dy < 0 { top > 0 } else { top + el.client_height() < el.scroll_height() }
}

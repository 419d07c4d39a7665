//! Published demonstrations of the real MiniWoB++ pages whose input is not click-and-type
//! (`interaction` in `tasks/miniwob.json`: drag, coordinates, hover, scroll, free text, timing):
//! their raw events become MiniWoB++'s own actions where element actions cannot say what the
//! person did.
//!
//! - A press and a release more than a few pixels apart are a `Drag` from one to the other
//!   (`record.js` keeps no moves between them), and the click that follows belongs to it.
//! - On coordinates pages a click is a `ClickAt` where it landed; elsewhere an element `Click`.
//! - A `dblclick` turns the two clicks before it into one `DoubleClickAt`.
//! - A key whose handlers changed the page (its capture and bubble snapshots differ) is a key:
//!   typed characters join a `TypeText`, other keys are a `PressKey`; Ctrl+A, Ctrl+C and Ctrl+X
//!   are keys, and so is Ctrl+V after a copy in the same demonstration (the replay pastes what
//!   it copied); typing the page does not react to stays `Type`, as the WGE parser has it.
//! - A scroll (only its first event of a run is kept) is a `Scroll` over the scrolled box, by
//!   how far the box's content moved up to the next event's snapshot.
//!
//! Click-and-type pages keep the WGE parser ([`super::chunk`]) unchanged.

use crate::env::action::Point;
use crate::env::miniwob::{Interaction, miniwob_task};
use crate::env::{Action, NodeRef};

use super::chunk::{Chunk, Event, KEY_BACKSPACE, KEY_C, KEY_CTRL, KEY_V, RawState, collapse, pair_events, pasted};
use super::snapshot::{RawNode, Resolved};

/// How far apart (px) a press and its release must land to be a drag rather than a click.
const DRAG_SLOP_PX: f64 = 4.0;

/// Whether `task` is a real MiniWoB++ page whose demonstrations need this parser.
pub(super) fn needs_raw_actions(task: &str) -> bool {
    miniwob_task(task).is_some_and(|t| t.interaction != Interaction::ClickType)
}

/// The names MiniWoB++'s `PRESS_KEY` gives the keys a demonstration's key codes stand for.
fn key_name(code: i64) -> Option<&'static str> {
    Some(match code {
        8 => "<Backspace>",
        9 => "<Tab>",
        13 => "<Enter>",
        27 => "<Escape>",
        33 => "<PageUp>",
        34 => "<PageDown>",
        35 => "<End>",
        36 => "<Home>",
        37 => "<ArrowLeft>",
        38 => "<ArrowUp>",
        39 => "<ArrowRight>",
        40 => "<ArrowDown>",
        46 => "<Delete>",
        _ => return None,
    })
}

/// The parser for pages that need MiniWoB++'s other actions; the result is collapsed as the
/// WGE parser's is (a click then a type into one element is the type).
pub(super) fn chunk(task: &str, states: &[RawState], max_nodes: usize) -> Result<(Vec<Chunk>, u32), String> {
    let events = &pair_events(states, max_nodes)?;
    let mut dropped = 0u32;
    let dropped = &mut dropped;
    let coordinates = miniwob_task(task).is_some_and(|t| t.interaction == Interaction::Coordinates);
    let mut chunks: Vec<Chunk> = Vec::new();
    // The press waiting for its release and click: where, on what, the snapshot before it.
    let mut pressed: Option<(Point, Option<NodeRef>, usize)> = None;
    // The click that follows is part of a chunk already made (a drag's, a label's forwarding).
    let mut absorb_click = false;
    let mut ctrl = false;
    let mut copied = false;
    // The key going down changed the page (so its characters are keys too).
    let mut reacted = false;
    let to_ref = |r: Option<NodeRef>| r;
    let point = |e: &Event| -> Option<Point> { Some((e.action.x? as i32, e.action.y? as i32)) };
    let after = |k: usize| events.get(k + 1).map_or(states.len() - 1, |n| n.before);
    for (k, e) in events.iter().enumerate() {
        let a = &e.action;
        match a.kind.as_str() {
            "mousedown" => {
                pressed = point(e).map(|p| (p, e.target, e.before));
                absorb_click = false;
            }
            "mouseup" => {
                let (Some((from, _, before)), Some(to)) = (pressed, point(e)) else { continue };
                let far = (((from.0 - to.0).pow(2) + (from.1 - to.1).pow(2)) as f64).sqrt() > DRAG_SLOP_PX;
                if far {
                    chunks.push(Chunk { action: Action::Drag(vec![from, to]), before });
                    pressed = None;
                    absorb_click = true;
                }
            }
            "click" => {
                if std::mem::take(&mut absorb_click) {
                    continue;
                }
                let (target, before) = match pressed.take() {
                    Some((_, t, b)) => (t.or(e.target), b),
                    None => (e.target, e.before),
                };
                let action = match (coordinates, point(e), to_ref(target)) {
                    (true, Some((x, y)), _) => Action::ClickAt(x, y),
                    (_, _, Some(t)) => Action::Click(t),
                    _ => {
                        *dropped += 1;
                        continue;
                    }
                };
                chunks.push(Chunk { action, before });
                // A label's click forwarded to its control follows with no press of its own.
                absorb_click = !coordinates;
            }
            "dblclick" => {
                let n = chunks.len();
                let clicks = n >= 2 && chunks[n - 2..].iter().all(|c| matches!(c.action, Action::Click(_) | Action::ClickAt(..)));
                match point(e) {
                    Some((x, y)) if clicks => {
                        let first = chunks.drain(n - 2..).next().expect("two chunks");
                        chunks.push(Chunk { action: Action::DoubleClickAt(x, y), before: first.before });
                    }
                    _ => *dropped += 1,
                }
            }
            "keydown" => {
                absorb_click = false;
                let code = a.key_code.unwrap_or(0);
                reacted = changed_during(states, e);
                if code == KEY_CTRL {
                    ctrl = true;
                    continue;
                }
                if ctrl {
                    let letter = u8::try_from(code).ok().filter(u8::is_ascii_uppercase).map(|c| (c as char).to_ascii_lowercase());
                    let name = match (code, letter) {
                        (KEY_C, _) | (88, _) => {
                            copied = true;
                            letter.map(|l| format!("C-{l}"))
                        }
                        (65, _) => Some("C-a".to_string()),
                        (KEY_V, _) if copied => Some("C-v".to_string()),
                        (KEY_V, _) => {
                            // Pasted from outside the demonstration: the pasted text is typed.
                            if let Some(t) = pasted(states, e, after(k), max_nodes) {
                                push_type(&mut chunks, e, t);
                            }
                            None
                        }
                        (_, Some(l)) if reacted => Some(format!("C-{l}")),
                        _ => None,
                    };
                    if let Some(name) = name {
                        chunks.push(Chunk { action: Action::PressKey(name), before: e.before });
                    }
                    continue;
                }
                match key_name(code) {
                    Some(name) if reacted => chunks.push(Chunk { action: Action::PressKey(name.into()), before: e.before }),
                    _ if code == KEY_BACKSPACE => match chunks.last_mut() {
                        Some(Chunk { action: Action::Type(_, text) | Action::TypeText(text), .. }) => {
                            text.pop();
                        }
                        _ => *dropped += 1,
                    },
                    Some(_) => *dropped += 1,
                    None => {}
                }
            }
            "keyup" => {
                if a.key_code == Some(KEY_CTRL) {
                    ctrl = false;
                }
            }
            "keypress" => {
                absorb_click = false;
                let Some(ch) = a.char_code.and_then(|c| u32::try_from(c).ok()).and_then(char::from_u32).filter(|c| !c.is_control()) else {
                    continue; // Enter's keypress: its keydown said it
                };
                if ctrl {
                    continue;
                }
                if reacted {
                    match chunks.last_mut() {
                        Some(Chunk { action: Action::TypeText(text), .. }) => text.push(ch),
                        _ => chunks.push(Chunk { action: Action::TypeText(ch.to_string()), before: e.before }),
                    }
                } else if to_ref(e.target).is_some() {
                    push_type(&mut chunks, e, ch.to_string());
                } else {
                    *dropped += 1;
                }
            }
            "scroll" => match scrolled(states, e, after(k), max_nodes) {
                Some(action) => chunks.push(Chunk { action, before: e.before }),
                None => *dropped += 1,
            },
            _ => *dropped += 1,
        }
    }
    let dropped = *dropped;
    Ok((collapse(chunks), dropped))
}

/// Appends `text` to the typing into the event's target (a new `Type` if the last chunk is not).
fn push_type(chunks: &mut Vec<Chunk>, e: &Event, text: String) {
    let Some(t) = e.target else { return };
    match chunks.last_mut() {
        Some(Chunk { action: Action::Type(r, typed), .. }) if *r == t => typed.push_str(&text),
        _ => chunks.push(Chunk { action: Action::Type(t, text), before: e.before }),
    }
}

/// Whether the page changed while the event's handlers ran: its capture (BEFORE) and bubble
/// (AFTER) snapshots differ. A lone phase cannot tell: no.
fn changed_during(states: &[RawState], e: &Event) -> bool {
    let twin = states
        .get(e.before + 1)
        .and_then(|s| s.action.as_ref())
        .is_some_and(|b| b.timing == Some(3) && e.action.timing == Some(1) && b.kind == e.action.kind && b.key_code == e.action.key_code);
    twin && !same_page(&states[e.before].dom, &states[e.before + 1].dom)
}

/// Two snapshots show the same page: the same nodes with the same texts, values, classes and
/// boxes (what marks the event's target, focus and clicks is left out).
fn same_page(a: &RawNode, b: &RawNode) -> bool {
    a.tag == b.tag
        && a.r#ref == b.r#ref
        && a.text == b.text
        && a.value == b.value
        && a.classes == b.classes
        && (a.left, a.top, a.width, a.height) == (b.left, b.top, b.width, b.height)
        && a.children.len() == b.children.len()
        && a.children.iter().zip(&b.children).all(|(x, y)| same_page(x, y))
}

fn find(n: &RawNode, r: i64) -> Option<&RawNode> {
    if n.r#ref == Some(r) {
        return Some(n);
    }
    n.children.iter().find_map(|c| find(c, r))
}

/// A scroll of the event's target box: by how far its first element inside that is in both
/// snapshots moved up between the scroll and `until` (the next event's snapshot), at the box's
/// centre.
fn scrolled(states: &[RawState], e: &Event, until: usize, max_nodes: usize) -> Option<Action> {
    let r = e.target?;
    let before = Resolved::new(&states[e.before].dom, max_nodes).node(r)?;
    let later = &states[until].dom;
    let dy = before.children.iter().flat_map(preorder).find_map(|c| {
        let id = c.r#ref.filter(|&r| r > 0)?;
        Some(c.top? - find(later, id)?.top?)
    })?;
    let dy = dy.round() as i32;
    let at = |v: Option<f32>| v.unwrap_or(0.0);
    let (x, y) = ((at(before.left) + at(before.width) / 2.0) as i32, (at(before.top) + at(before.height) / 2.0) as i32);
    (dy != 0).then_some(Action::Scroll(x, y, dy))
}

fn preorder(n: &RawNode) -> Vec<&RawNode> {
    let mut out = vec![n];
    for c in &n.children {
        out.extend(preorder(c));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::import_wge_demo;
    use crate::env::Action;
    use serde_json::{Value, json};

    /// A published-format demonstration of `task`: each event is recorded in its BEFORE and
    /// AFTER phases, each phase with the snapshot `dom(i)` gives (i: the event's index; the
    /// AFTER phase of a key the page reacts to shows `after` instead).
    fn demo(task: &str, events: &[(Value, Option<Value>)], dom: impl Fn(usize) -> Value) -> Vec<u8> {
        let mut states = vec![json!({"time": 0, "action": null, "dom": dom(0)})];
        for (i, (e, reacted)) in events.iter().enumerate() {
            for timing in [1, 3] {
                let mut a = e.clone();
                a["timing"] = timing.into();
                let snapshot = match (timing, reacted) {
                    (3, Some(after)) => after.clone(),
                    _ => dom(i),
                };
                states.push(json!({"time": i, "action": a, "dom": snapshot}));
            }
        }
        serde_json::to_vec(&json!({"taskName": task, "utterance": "Do it.", "states": states, "reward": 1, "rawReward": 1})).unwrap()
    }

    fn page(children: Value) -> Value {
        json!({"tag": "BODY", "ref": 1, "left": 0, "top": 0, "width": 160, "height": 210, "children": children})
    }

    fn mouse(kind: &str, x: i32, y: i32) -> (Value, Option<Value>) {
        (json!({"type": kind, "x": x, "y": y}), None)
    }

    fn actions(bytes: &[u8]) -> Vec<Action> {
        import_wge_demo(bytes).unwrap().steps.into_iter().map(|s| s.action).collect()
    }

    #[test]
    fn a_press_and_a_release_apart_are_a_drag() {
        let dom = |_| {
            page(json!([{"tag": "DIV", "ref": 2, "left": 20, "top": 70, "width": 20, "height": 20, "text": "s"},
            {"tag": "BUTTON", "ref": 3, "left": 5, "top": 180, "width": 50, "height": 20, "text": "Submit", "recordingTarget": true}]))
        };
        let events = [
            mouse("mousedown", 30, 80),
            mouse("mouseup", 90, 120),
            mouse("click", 90, 120),
            mouse("mousedown", 30, 190),
            mouse("mouseup", 30, 190),
            mouse("click", 30, 190),
        ];
        assert_eq!(actions(&demo("drag-box", &events, dom)), [Action::Drag(vec![(30, 80), (90, 120)]), Action::Click(3)]);
        // On a coordinates page the same clicks land where they were.
        let clicks = [mouse("mousedown", 70, 100), mouse("mouseup", 70, 100), mouse("click", 70, 100), mouse("dblclick", 70, 100)];
        assert_eq!(actions(&demo("bisect-angle", &clicks[..3], dom)), [Action::ClickAt(70, 100)]);
        let double = [&clicks[..3], &clicks[..3], &clicks[3..]].concat();
        assert_eq!(actions(&demo("bisect-angle", &double, dom)), [Action::DoubleClickAt(70, 100)]);
        // A click-and-type page keeps the WGE parser: the same events are two element clicks.
        assert_eq!(actions(&demo("click-test", &events, dom)), [Action::Click(3), Action::Click(3)]);
    }

    #[test]
    fn keys_the_page_reacts_to_are_keys() {
        // A terminal: its key handlers write each character into the page.
        let line = |text: &str| {
            page(json!([{"tag": "SPAN", "ref": 2, "left": 0, "top": 60, "width": 100, "height": 12, "text": text},
            {"tag": "INPUT_text", "ref": 3, "left": 0, "top": 80, "width": 10, "height": 10, "value": "", "recordingTarget": true}]))
        };
        let key = |kind: &str, code: i64, ch: i64| json!({"type": kind, "keyCode": code, "charCode": ch});
        let events = [
            (key("keydown", 76, 0), Some(line("l"))),
            (key("keypress", 108, 108), None),
            (key("keydown", 83, 0), Some(line("ls"))),
            (key("keypress", 115, 115), None),
            (key("keydown", 13, 0), Some(line(""))),
        ];
        let typed = ["", "", "l", "l", "ls"];
        let d = demo("terminal", &events, |i| line(typed[i]));
        assert_eq!(actions(&d), [Action::TypeText("ls".into()), Action::PressKey("<Enter>".into())]);
        // The same keys into a field the page does not watch stay a Type.
        let quiet = demo("terminal", &events.iter().map(|(e, _)| (e.clone(), None)).collect::<Vec<_>>(), |_| line(""));
        assert_eq!(actions(&quiet), [Action::Type(3, "ls".into())]);
        // Copy then paste: the keys, so the replay copies what it pastes.
        let clip = [
            (key("keydown", 17, 0), None),
            (key("keydown", 65, 0), None),
            (key("keydown", 67, 0), None),
            (key("keydown", 86, 0), None),
            (key("keyup", 17, 0), None),
        ];
        let keys: Vec<Action> = ["C-a", "C-c", "C-v"].into_iter().map(|k| Action::PressKey(k.into())).collect();
        assert_eq!(actions(&demo("copy-paste", &clip, |_| line(""))), keys);
    }

    #[test]
    fn a_scroll_is_measured_by_what_moved() {
        let at = |top: i32| {
            page(json!([{"tag": "TEXTAREA", "ref": 2, "left": 5, "top": 55, "width": 150, "height": 100, "recordingTarget": true,
            "children": [{"tag": "P", "ref": 3, "left": 5, "top": top, "width": 140, "height": 400, "text": "words"}]}]))
        };
        let events = [(json!({"type": "scroll"}), None), mouse("click", 30, 190)];
        let tops = [55, -245];
        let d = import_wge_demo(&demo("scroll-text-2", &events, |i| at(tops[i]))).unwrap();
        assert_eq!(d.steps[0].action, Action::Scroll(80, 105, 300));
        assert_eq!(d.dropped_events, 0);
    }
}

//! Raw mouse and keyboard events chunked into element actions, the way the authors'
//! `chunk-shortcut` parser does (reference-implementations.md §2.3).

use serde::Deserialize;

use crate::env::{Action, NodeRef};
use crate::wge::induction::typing_absorbs_click;

use super::snapshot::{RawNode, Resolved};

// Key codes the parser treats as hotkeys (§2.3).
pub(super) const KEY_BACKSPACE: i64 = 8;
pub(super) const KEY_TAB: i64 = 9;
const KEY_SHIFT: i64 = 16;
pub(super) const KEY_CTRL: i64 = 17;
const KEY_CAPS_LOCK: i64 = 20;
pub(super) const KEY_C: i64 = 67;
pub(super) const KEY_V: i64 = 86;

#[derive(Deserialize)]
pub(super) struct RawState {
    #[serde(default)]
    pub action: Option<RawAction>,
    pub dom: RawNode,
}

#[derive(Deserialize, Clone)]
#[serde(rename_all = "camelCase")]
pub(super) struct RawAction {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub x: Option<f64>,
    #[serde(default)]
    pub y: Option<f64>,
    #[serde(default)]
    pub key_code: Option<i64>,
    #[serde(default)]
    pub char_code: Option<i64>,
    /// The event phase: 1 = BEFORE (capture), 3 = AFTER (bubble).
    #[serde(default)]
    pub timing: Option<u8>,
}

/// One raw event with its BEFORE snapshot (a state index).
pub(super) struct Event {
    pub action: RawAction,
    pub before: usize,
    /// The event's target (`recordingTarget` in the BEFORE snapshot) as our ref, when the
    /// snapshot kept it.
    pub target: Option<NodeRef>,
}

/// Pairs each BEFORE (capture) event with its AFTER (bubble) twin; a lone phase stands alone.
/// Only the first scroll of a run is kept (§2.1). State 0 is the start page: its action, if a
/// file gives one, is not an event (the authors read states from 1 on).
pub(super) fn pair_events(states: &[RawState], max_nodes: usize) -> Result<Vec<Event>, String> {
    let mut events: Vec<Event> = Vec::new();
    let mut i = 1;
    while i < states.len() {
        let a = states[i].action.clone().ok_or_else(|| format!("malformed WGE/MiniWoB++ demonstration: state {i} has no action"))?;
        let twin = states
            .get(i + 1)
            .and_then(|s| s.action.as_ref())
            .filter(|b| a.timing == Some(1) && b.timing == Some(3) && b.kind == a.kind && b.key_code == a.key_code && b.x == a.x && b.y == a.y);
        let after = if twin.is_some() { i + 1 } else { i };
        let scroll_run = a.kind == "scroll" && events.last().is_some_and(|e| e.action.kind == "scroll");
        if !scroll_run {
            events.push(Event { target: Resolved::new(&states[i].dom, max_nodes).target(), action: a, before: i });
        }
        i = after + 1;
    }
    Ok(events)
}

/// An element action made of one or more events.
pub(super) struct Chunk {
    pub action: Action,
    /// Snapshot before the chunk's first event.
    pub before: usize,
}

/// The `chunk-shortcut` parser (§2.3): click = mousedown + mouseup + click; typed characters
/// from keypress; hotkeys (Ctrl+V types the pasted value; Tab, Ctrl+C and CapsLock are ignored;
/// Backspace edits the pending text); a click then a type on the same element collapse into the
/// type; consecutive types into one element merge. Returns the chunks and the events the action
/// vocabulary cannot say (scrolls, double-clicks beyond their clicks, control characters, events
/// on elements the node cap left out), counted.
pub(super) fn chunk(states: &[RawState], max_nodes: usize) -> Result<(Vec<Chunk>, u32), String> {
    let events = pair_events(states, max_nodes)?;
    let mut dropped = 0u32;
    let mut chunks: Vec<Chunk> = Vec::new();
    // mousedown waiting for its click: (target, state before).
    let mut pressed: Option<(Option<NodeRef>, usize)> = None;
    let mut ctrl = false;
    // The last chunk was a completed click: a click that follows with no press of its own is the
    // browser's synthetic click (a label forwarding to its checkbox) and belongs to it.
    let mut click_open = false;
    for (k, e) in events.iter().enumerate() {
        let a = &e.action;
        match a.kind.as_str() {
            "mousedown" => {
                pressed = Some((e.target, e.before));
                click_open = false;
            }
            "mouseup" => {}
            "click" => match pressed.take() {
                Some((target, before)) => match target.or(e.target) {
                    Some(t) => {
                        chunks.push(Chunk { action: Action::Click(t), before });
                        click_open = true;
                    }
                    None => dropped += 1,
                },
                None if click_open => {}
                None => match e.target {
                    Some(t) => {
                        chunks.push(Chunk { action: Action::Click(t), before: e.before });
                        click_open = true;
                    }
                    None => dropped += 1,
                },
            },
            "keydown" => {
                click_open = false;
                match a.key_code.unwrap_or(0) {
                    KEY_CTRL => ctrl = true,
                    KEY_BACKSPACE => {
                        if let Some(Chunk { action: Action::Type(_, text), .. }) = chunks.last_mut() {
                            text.pop();
                        }
                    }
                    KEY_V if ctrl => {
                        // The pasted text lands by the next event's BEFORE snapshot.
                        let landed = events.get(k + 1).map(|n| n.before).unwrap_or(states.len() - 1);
                        let Some((target, pasted)) = e.target.zip(pasted(states, e, landed, max_nodes)) else { continue };
                        match chunks.last_mut() {
                            Some(Chunk { action: Action::Type(r, text), .. }) if *r == target => text.push_str(&pasted),
                            _ => chunks.push(Chunk { action: Action::Type(target, pasted), before: e.before }),
                        }
                    }
                    KEY_C if ctrl => {}
                    KEY_TAB | KEY_CAPS_LOCK | KEY_SHIFT => {}
                    _ => {}
                }
            }
            "keyup" => {
                if a.key_code == Some(KEY_CTRL) {
                    ctrl = false;
                }
            }
            "keypress" => {
                click_open = false;
                let code = a.char_code.unwrap_or(0);
                let Some(ch) = u32::try_from(code).ok().and_then(char::from_u32).filter(|c| !c.is_control()) else {
                    dropped += 1;
                    continue;
                };
                if ctrl {
                    continue;
                }
                let Some(t) = e.target else {
                    dropped += 1;
                    continue;
                };
                match chunks.last_mut() {
                    Some(Chunk { action: Action::Type(r, text), .. }) if *r == t => text.push(ch),
                    _ => chunks.push(Chunk { action: Action::Type(t, ch.to_string()), before: e.before }),
                }
            }
            _ => dropped += 1,
        }
    }
    Ok((collapse(chunks), dropped))
}

/// What a paste put into the target: its value once the paste landed, less what it held.
pub(super) fn pasted(states: &[RawState], e: &Event, landed: usize, max_nodes: usize) -> Option<String> {
    let target = e.target?;
    let text_at = |i: usize| match Resolved::new(&states[i].dom, max_nodes).value_of(target) {
        Some(serde_json::Value::String(s)) => s.clone(),
        _ => String::new(),
    };
    let (old, new) = (text_at(e.before), text_at(landed));
    let p = new.strip_prefix(old.as_str()).unwrap_or(&new).to_string();
    (!p.is_empty()).then_some(p)
}

/// A click then a type into the same element is one type (typing focuses the element first);
/// consecutive types into one element are one type.
pub(super) fn collapse(chunks: Vec<Chunk>) -> Vec<Chunk> {
    let mut out: Vec<Chunk> = Vec::with_capacity(chunks.len());
    for c in chunks {
        match (out.last_mut(), &c.action) {
            (Some(prev), _) if typing_absorbs_click(&prev.action, &c.action) => prev.action = c.action,
            (Some(Chunk { action: Action::Type(r, text), .. }), Action::Type(t, more)) if r == t => text.push_str(more),
            _ => out.push(c),
        }
    }
    out.retain(|c| !matches!(&c.action, Action::Type(_, t) if t.is_empty()));
    out
}

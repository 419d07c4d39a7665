//! Demonstrations in the published WGE/MiniWoB++ format (Liu et al., 2018; `record.js`): raw
//! mouse and keyboard events, each with a `getDOMInfo` snapshot, chunked into element actions the
//! way the authors' `chunk-shortcut` parser does (reference-implementations.md §2.1, §2.3).
//!
//! A file carries DOM snapshots (boxes, tags, texts, values) and a task name, never page HTML or
//! script: nothing in it can run in the lab's origin.

use std::collections::HashMap;

use serde::Deserialize;

use crate::demo::{DemoStep, MAX_DEMO_BYTES};
use crate::env::{Action, DomGraph, DomNode, Field, Instruction, NodeRef, NodeValue, Observation, Rect};
use super::induction::typing_absorbs_click;

mod raw_actions;


/// Largest compressed file read; the decompressed text is capped at [`MAX_DEMO_BYTES`] too.
pub const MAX_WGE_FILE_BYTES: usize = MAX_DEMO_BYTES;

/// `getDOMInfo` gives text pseudo-nodes negative refs (-1, -2, …); ours are unsigned, so they are
/// moved above this offset (real element refs stay below it).
pub const TEXT_REF_OFFSET: NodeRef = 1 << 31;

// Key codes the parser treats as hotkeys (§2.3).
const KEY_BACKSPACE: i64 = 8;
const KEY_TAB: i64 = 9;
const KEY_SHIFT: i64 = 16;
const KEY_CTRL: i64 = 17;
const KEY_CAPS_LOCK: i64 = 20;
const KEY_C: i64 = 67;
const KEY_V: i64 = 86;

/// A demonstration a person recorded on a MiniWoB++ page, as element actions over our
/// observations. Recorded by people (the published Turk demonstrations), never scripted.
#[derive(Clone, Debug, PartialEq)]
pub struct WgeDemonstration {
    /// The MiniWoB++ task name (`login-user`); a plain name, never a page.
    pub task: String,
    /// The chunked actions, each with the observation before it.
    pub steps: Vec<DemoStep>,
    /// The page after the last action (the DOM diff of the last step is taken against it).
    pub final_observation: Observation,
    /// The shaped reward the page gave (time-discounted), and the raw reward (1 for success).
    pub reward: f64,
    pub raw_reward: f64,
    /// Raw events the action vocabulary cannot say and that were left out (scrolls, double-click
    /// events beyond their clicks, Enter and other control characters), counted.
    pub dropped_events: u32,
}

impl WgeDemonstration {
    /// The observation after step `i` (the next step's, or the final one).
    pub fn after(&self, i: usize) -> &Observation {
        self.steps.get(i + 1).map(|s| &s.observation).unwrap_or(&self.final_observation)
    }
}

/// Reads a `.json` or `.json.gz` file in the published format (gzip is recognised by its magic
/// bytes, whatever the name).
pub fn import_wge_demo(bytes: &[u8]) -> Result<WgeDemonstration, String> {
    if bytes.len() > MAX_WGE_FILE_BYTES {
        return Err(format!("the file is {} MB; a demonstration is at most {} MB", bytes.len() / 1_000_000, MAX_WGE_FILE_BYTES / 1_000_000));
    }
    let text = if bytes.starts_with(&[0x1f, 0x8b]) { gunzip(bytes, MAX_DEMO_BYTES)? } else { bytes.to_vec() };
    let text = std::str::from_utf8(&text).map_err(|_| "the demonstration is not UTF-8 text".to_string())?;
    parse_wge_json(text)
}

fn parse_wge_json(text: &str) -> Result<WgeDemonstration, String> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("not a JSON demonstration file: {e}"))?;
    let obj = value.as_object().ok_or("not a WGE/MiniWoB++ demonstration: the file is not a JSON object")?;
    if obj.contains_key("format") && obj.contains_key("steps") {
        return Err("this is one of the lab's own demonstrations, not a WGE/MiniWoB++ one: open it as a lab demonstration".into());
    }
    for key in ["taskName", "utterance", "states"] {
        if !obj.contains_key(key) {
            return Err(format!("not a WGE/MiniWoB++ demonstration: it has no '{key}'"));
        }
    }
    let raw: RawDemo = serde_json::from_value(value).map_err(|e| format!("malformed WGE/MiniWoB++ demonstration: {e}"))?;
    check_task_name(&raw.task_name)?;
    let fields = read_fields(raw.fields.as_ref())?;
    let instruction = Instruction::for_task(&raw.task_name, &raw.utterance, fields);
    let first = raw.states.first().ok_or("the demonstration has no states")?;
    if first.action.is_some() {
        return Err("malformed WGE/MiniWoB++ demonstration: its first state has an action (state 0 is the start page)".into());
    }
    let events = pair_events(&raw.states)?;
    let mut dropped = 0;
    let chunks = if raw_actions::needs_raw_actions(&raw.task_name) {
        raw_actions::chunk(&raw.task_name, &raw.states, &events, &mut dropped)
    } else {
        chunk(&raw.states, &events, &mut dropped)
    };
    let observe = |dom: &RawNode| -> Result<Observation, String> {
        Ok(Observation { instruction: instruction.clone(), dom: to_dom_graph(dom)?, page: 0, meta: Default::default() })
    };
    let mut steps = Vec::with_capacity(chunks.len());
    for c in &chunks {
        steps.push(DemoStep { observation: observe(&raw.states[c.before].dom)?, action: c.action.clone() });
    }
    let last = raw.states.last().expect("non-empty");
    Ok(WgeDemonstration {
        task: raw.task_name,
        steps,
        final_observation: observe(&last.dom)?,
        reward: raw.reward,
        raw_reward: raw.raw_reward,
        dropped_events: dropped,
    })
}

/// Task names go into page paths later, so only plain MiniWoB++ names are accepted.
fn check_task_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if ok { Ok(()) } else { Err(format!("the demonstration's task name {name:?} is not a MiniWoB++ task name")) }
}

/// `fields` appears either as an object or as `[key, value]` pairs.
fn read_fields(v: Option<&serde_json::Value>) -> Result<Vec<Field>, String> {
    let scalar = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::Bool(b) => Some(b.to_string()),
        _ => None,
    };
    let bad = || "malformed WGE/MiniWoB++ demonstration: 'fields' is neither an object nor a list of [key, value] pairs".to_string();
    match v {
        None | Some(serde_json::Value::Null) => Ok(Vec::new()),
        Some(serde_json::Value::Object(m)) => {
            m.iter().map(|(k, v)| Ok(Field { key: k.clone(), value: scalar(v).ok_or_else(bad)? })).collect()
        }
        Some(serde_json::Value::Array(a)) => a
            .iter()
            .map(|p| match p.as_array().map(|p| p.as_slice()) {
                Some([k, v]) => Ok(Field { key: scalar(k).ok_or_else(bad)?, value: scalar(v).ok_or_else(bad)? }),
                _ => Err(bad()),
            })
            .collect(),
        Some(_) => Err(bad()),
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawDemo {
    task_name: String,
    utterance: String,
    #[serde(default)]
    fields: Option<serde_json::Value>,
    states: Vec<RawState>,
    #[serde(default)]
    reward: f64,
    #[serde(default)]
    raw_reward: f64,
}

#[derive(Deserialize)]
struct RawState {
    action: Option<RawAction>,
    dom: RawNode,
}

#[derive(Deserialize, Clone)]
#[serde(rename_all = "camelCase")]
struct RawAction {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    x: Option<f64>,
    #[serde(default)]
    y: Option<f64>,
    #[serde(default)]
    key_code: Option<i64>,
    #[serde(default)]
    char_code: Option<i64>,
    /// The event phase: 1 = BEFORE (capture), 3 = AFTER (bubble).
    #[serde(default)]
    timing: Option<u8>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawNode {
    tag: String,
    #[serde(default)]
    left: f32,
    #[serde(default)]
    top: f32,
    #[serde(default)]
    width: f32,
    #[serde(default)]
    height: f32,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    classes: Option<String>,
    #[serde(rename = "ref", default)]
    r#ref: Option<i64>,
    #[serde(default)]
    bg_color: Option<String>,
    #[serde(default)]
    fg_color: Option<String>,
    #[serde(default)]
    children: Vec<RawNode>,
    #[serde(default)]
    focused: bool,
    #[serde(default)]
    tampered: bool,
    #[serde(default)]
    recording_target: bool,
    #[serde(default)]
    value: Option<serde_json::Value>,
    #[serde(default)]
    text: Option<String>,
}

fn node_ref(raw: Option<i64>) -> Result<NodeRef, String> {
    match raw {
        Some(r) if r > 0 && r < TEXT_REF_OFFSET as i64 => Ok(r as NodeRef),
        Some(r) if r < 0 && -r < TEXT_REF_OFFSET as i64 => Ok(TEXT_REF_OFFSET + (-r) as NodeRef),
        Some(r) => Err(format!("malformed WGE/MiniWoB++ demonstration: element ref {r} is out of range")),
        None => Err("malformed WGE/MiniWoB++ demonstration: an element has no ref".into()),
    }
}

/// Flattens a `getDOMInfo` tree into our preorder graph.
fn to_dom_graph(root: &RawNode) -> Result<DomGraph, String> {
    let mut g = DomGraph::default();
    fn visit(n: &RawNode, parent: Option<usize>, g: &mut DomGraph) -> Result<(), String> {
        let i = g.nodes.len();
        let value = match &n.value {
            None | Some(serde_json::Value::Null) => NodeValue::None,
            Some(serde_json::Value::Bool(b)) => NodeValue::Checked(*b),
            Some(serde_json::Value::String(s)) => NodeValue::Text(s.clone()),
            Some(serde_json::Value::Number(x)) => NodeValue::Text(x.to_string()),
            Some(_) => return Err("malformed WGE/MiniWoB++ demonstration: an element's value is not text or a checked state".into()),
        };
        g.nodes.push(DomNode {
            r#ref: node_ref(n.r#ref)?,
            parent,
            children: Vec::new(),
            tag: n.tag.clone(),
            text: n.text.as_deref().map(|t| t.split_whitespace().collect::<Vec<_>>().join(" ")).unwrap_or_default(),
            value,
            id: n.id.clone().unwrap_or_default(),
            classes: n.classes.as_deref().unwrap_or("").split_whitespace().map(str::to_string).collect(),
            rect: Rect { left: n.left, top: n.top, width: n.width, height: n.height },
            focused: n.focused,
            tampered: n.tampered,
            bg_color: n.bg_color.clone().unwrap_or_default(),
            fg_color: n.fg_color.clone().unwrap_or_default(),
            ..DomNode::default()
        });
        if let Some(p) = parent {
            g.nodes[p].children.push(i);
        }
        for c in &n.children {
            visit(c, Some(i), g)?;
        }
        Ok(())
    }
    visit(root, None, &mut g)?;
    g.validate().map_err(|e| format!("malformed WGE/MiniWoB++ demonstration: {e}"))?;
    Ok(g)
}

fn recording_target(n: &RawNode) -> Option<i64> {
    if n.recording_target {
        return n.r#ref;
    }
    n.children.iter().find_map(recording_target)
}

fn value_of(n: &RawNode, r: i64) -> Option<&serde_json::Value> {
    if n.r#ref == Some(r) {
        return n.value.as_ref();
    }
    n.children.iter().find_map(|c| value_of(c, r))
}

/// One raw event with its BEFORE and AFTER snapshots (state indices).
struct Event {
    action: RawAction,
    before: usize,
    /// The event's target (`recordingTarget` in the BEFORE snapshot), as a raw ref.
    target: Option<i64>,
}

/// Pairs each BEFORE (capture) event with its AFTER (bubble) twin; a lone phase stands alone.
/// Only the first scroll of a run is kept (§2.1).
fn pair_events(states: &[RawState]) -> Result<Vec<Event>, String> {
    let mut events: Vec<Event> = Vec::new();
    let mut i = 1;
    while i < states.len() {
        let a = states[i].action.clone().ok_or_else(|| format!("malformed WGE/MiniWoB++ demonstration: state {i} has no action"))?;
        let twin = states.get(i + 1).and_then(|s| s.action.as_ref()).filter(|b| {
            a.timing == Some(1) && b.timing == Some(3) && b.kind == a.kind && b.key_code == a.key_code && b.x == a.x && b.y == a.y
        });
        let after = if twin.is_some() { i + 1 } else { i };
        let scroll_run = a.kind == "scroll" && events.last().is_some_and(|e| e.action.kind == "scroll");
        if !scroll_run {
            events.push(Event { target: recording_target(&states[i].dom), action: a, before: i });
        }
        i = after + 1;
    }
    Ok(events)
}

/// An element action made of one or more events.
struct Chunk {
    action: Action,
    /// Snapshot before the chunk's first event.
    before: usize,
}

/// The `chunk-shortcut` parser (§2.3): click = mousedown + mouseup + click; typed characters
/// from keypress; hotkeys (Ctrl+V types the pasted value; Tab, Ctrl+C and CapsLock are ignored;
/// Backspace edits the pending text); a click then a type on the same element collapse into the
/// type; consecutive types into one element merge.
fn chunk(states: &[RawState], events: &[Event], dropped: &mut u32) -> Vec<Chunk> {
    let mut chunks: Vec<Chunk> = Vec::new();
    // mousedown waiting for its click: (target, state before).
    let mut pressed: Option<(Option<i64>, usize)> = None;
    let mut ctrl = false;
    // The last chunk was a completed click: a click that follows with no press of its own is the
    // browser's synthetic click (a label forwarding to its checkbox) and belongs to it.
    let mut click_open = false;
    let mut ref_of = HashMap::new();
    let mut to_ref = |r: Option<i64>| -> Option<NodeRef> {
        let r = r?;
        *ref_of.entry(r).or_insert_with(|| node_ref(Some(r)).ok())
    };
    for (k, e) in events.iter().enumerate() {
        let a = &e.action;
        match a.kind.as_str() {
            "mousedown" => {
                pressed = Some((e.target, e.before));
                click_open = false;
            }
            "mouseup" => {}
            "click" => match pressed.take() {
                Some((target, before)) => {
                    if let Some(t) = to_ref(target.or(e.target)) {
                        chunks.push(Chunk { action: Action::Click(t), before });
                        click_open = true;
                    } else {
                        *dropped += 1;
                    }
                }
                None if click_open => {}
                None => match to_ref(e.target) {
                    Some(t) => {
                        chunks.push(Chunk { action: Action::Click(t), before: e.before });
                        click_open = true;
                    }
                    None => *dropped += 1,
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
                        // The pasted text: the target's value once the paste landed (the next
                        // event's BEFORE snapshot), less what it held before.
                        let Some(target) = e.target else { continue };
                        let landed = events.get(k + 1).map(|n| n.before).unwrap_or(states.len() - 1);
                        let text_at = |i: usize| match value_of(&states[i].dom, target) {
                            Some(serde_json::Value::String(s)) => s.clone(),
                            _ => String::new(),
                        };
                        let (old, new) = (text_at(e.before), text_at(landed));
                        let pasted = new.strip_prefix(old.as_str()).unwrap_or(&new).to_string();
                        match (to_ref(Some(target)), chunks.last_mut()) {
                            (Some(t), Some(Chunk { action: Action::Type(r, text), .. })) if *r == t => text.push_str(&pasted),
                            (Some(t), _) if !pasted.is_empty() => chunks.push(Chunk { action: Action::Type(t, pasted), before: e.before }),
                            _ => {}
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
                    *dropped += 1;
                    continue;
                };
                if ctrl {
                    continue;
                }
                let Some(t) = to_ref(e.target) else {
                    *dropped += 1;
                    continue;
                };
                match chunks.last_mut() {
                    Some(Chunk { action: Action::Type(r, text), .. }) if *r == t => text.push(ch),
                    _ => chunks.push(Chunk { action: Action::Type(t, ch.to_string()), before: e.before }),
                }
            }
            _ => *dropped += 1,
        }
    }
    collapse(chunks)
}

/// A click then a type into the same element is one type (typing focuses the element first);
/// consecutive types into one element are one type.
fn collapse(chunks: Vec<Chunk>) -> Vec<Chunk> {
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

/// Unpacks a gzip member (RFC 1952) with the pure-Rust inflater, refusing output beyond `limit`
/// and checking the trailer's length and CRC-32.
fn gunzip(bytes: &[u8], limit: usize) -> Result<Vec<u8>, String> {
    let bad = |why: &str| format!("not a readable .json.gz file: {why}");
    if bytes.len() < 18 || bytes[0..2] != [0x1f, 0x8b] {
        return Err(bad("too short"));
    }
    if bytes[2] != 8 {
        return Err(bad("unknown compression method"));
    }
    let flags = bytes[3];
    let mut at = 10;
    if flags & 0x04 != 0 {
        let n = *bytes.get(at).ok_or_else(|| bad("truncated header"))? as usize
            | (*bytes.get(at + 1).ok_or_else(|| bad("truncated header"))? as usize) << 8;
        at += 2 + n;
    }
    for flag in [0x08, 0x10] {
        if flags & flag != 0 {
            let end = bytes.get(at..).and_then(|b| b.iter().position(|&c| c == 0)).ok_or_else(|| bad("truncated header"))?;
            at += end + 1;
        }
    }
    if flags & 0x02 != 0 {
        at += 2;
    }
    if at + 8 > bytes.len() {
        return Err(bad("truncated"));
    }
    let body = &bytes[at..bytes.len() - 8];
    let out = miniz_oxide::inflate::decompress_to_vec_with_limit(body, limit).map_err(|e| {
        if matches!(e.status, miniz_oxide::inflate::TINFLStatus::HasMoreOutput) {
            format!("the demonstration unpacks to more than {} MB", limit / 1_000_000)
        } else {
            bad("corrupt compressed data")
        }
    })?;
    let trailer = &bytes[bytes.len() - 8..];
    let crc = u32::from_le_bytes(trailer[0..4].try_into().unwrap());
    let size = u32::from_le_bytes(trailer[4..8].try_into().unwrap());
    if size != out.len() as u32 || crc != crc32(&out) {
        return Err(bad("checksum mismatch (the file is damaged)"));
    }
    Ok(out)
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = (crc >> 1) ^ (0xEDB8_8320 & (crc & 1).wrapping_neg());
        }
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOGIN_USER: &[u8] = include_bytes!("../../tests/fixtures/wge/login-user_3B4YI393VAQ8Z71VZBMHZOUOIQXSS7_d2.json.gz");
    const CLICK_CHECKBOXES: &[u8] = include_bytes!("../../tests/fixtures/wge/click-checkboxes_317HQ483I8MMPG6UM3BHWSEVMTONIZ_d4.json.gz");

    fn target(d: &WgeDemonstration, i: usize) -> &DomNode {
        let s = &d.steps[i];
        s.observation.dom.get(s.action.target().expect("an element action")).expect("the target is in the observation before the action")
    }

    #[test]
    fn login_user_sample_chunks_into_two_types_and_a_click() {
        let d = import_wge_demo(LOGIN_USER).unwrap();
        assert_eq!(d.task, "login-user");
        assert_eq!(d.raw_reward, 1.0);
        // Click username + "keli" (CapsLock ignored), click password + "yBN" (Shift ignored),
        // click Login: each click-then-type on one field collapses into the type.
        let actions: Vec<_> = d.steps.iter().map(|s| s.action.clone()).collect();
        assert_eq!(actions, vec![Action::Type(18, "keli".into()), Action::Type(21, "yBN".into()), Action::Click(22)]);
        assert_eq!(target(&d, 0).id, "username");
        assert_eq!(target(&d, 1).tag, "INPUT_password");
        assert_eq!(target(&d, 2).text, "Login");
        assert_eq!(d.steps[0].observation.instruction.field("username"), Some("keli"));
        assert_eq!(d.steps[0].observation.instruction.field("password"), Some("yBN"));
        // The step's observation is the page before it: the password field is still empty.
        assert_eq!(d.steps[1].observation.dom.get(21).unwrap().value, NodeValue::Text(String::new()));
        assert_eq!(d.steps[2].observation.dom.get(21).unwrap().value, NodeValue::Text("yBN".into()));
        assert_eq!(d.dropped_events, 0);
    }

    #[test]
    fn click_checkboxes_sample_keeps_label_clicks_and_absorbs_the_forwarded_click() {
        let d = import_wge_demo(CLICK_CHECKBOXES).unwrap();
        assert_eq!(d.task, "click-checkboxes");
        let actions: Vec<_> = d.steps.iter().map(|s| s.action.clone()).collect();
        // Four labels pressed (KT, Qp, JtG7ma, 8GchwV), then Submit; each label's click the
        // browser forwards to its checkbox is part of the same chunk, not a second action.
        assert_eq!(actions, vec![Action::Click(1), Action::Click(3), Action::Click(5), Action::Click(9), Action::Click(29)]);
        let labels: Vec<String> = (0..4).map(|i| d.steps[i].observation.dom.subtree_text(d.steps[i].observation.dom.index_of(actions[i].target().unwrap()).unwrap())).collect();
        assert_eq!(labels, ["KT", "Qp", "JtG7ma", "8GchwV"]);
        assert_eq!(target(&d, 4).text, "Submit");
        // Text pseudo-nodes (negative refs, renumbered per snapshot) move above the offset.
        let t = d.steps[0].observation.dom.nodes.iter().find(|n| n.is_text()).unwrap();
        assert!(t.r#ref > TEXT_REF_OFFSET);
        assert_eq!(t.text, "KT");
        // After the first chunk, the first checkbox is checked.
        assert!(d.after(0).dom.get(2).unwrap().value.is_checked());
        assert!(!d.steps[0].observation.dom.get(2).unwrap().value.is_checked());
    }

    #[test]
    fn plain_json_reads_like_gzip() {
        let text = gunzip(LOGIN_USER, MAX_DEMO_BYTES).unwrap();
        assert_eq!(import_wge_demo(&text).unwrap(), import_wge_demo(LOGIN_USER).unwrap());
    }

    fn json_demo(events: serde_json::Value) -> Vec<u8> {
        let dom = |value: &str, target: bool| serde_json::json!({"tag": "BODY", "ref": 1, "left": 0, "top": 0, "width": 160, "height": 210, "children": [
            {"tag": "INPUT_text", "ref": 2, "left": 5, "top": 60, "width": 100, "height": 20, "value": value, "text": "", "recordingTarget": target}]});
        let mut states = vec![serde_json::json!({"time": 0, "action": null, "dom": dom("", false)})];
        let mut value = String::new();
        for (i, e) in events.as_array().unwrap().iter().enumerate() {
            if let Some(v) = e.get("set") {
                value = v.as_str().unwrap().into();
                continue;
            }
            for timing in [1, 3] {
                let mut a = e.clone();
                a["timing"] = timing.into();
                states.push(serde_json::json!({"time": i, "action": a, "dom": dom(&value, true)}));
            }
        }
        serde_json::to_vec(&serde_json::json!({"taskName": "enter-text", "utterance": "Enter \"ab\" into the text field and press Submit.", "states": states, "reward": 1, "rawReward": 1})).unwrap()
    }

    fn key(kind: &str, key: i64, ch: i64) -> serde_json::Value {
        serde_json::json!({"type": kind, "keyCode": key, "charCode": ch})
    }

    #[test]
    fn backspace_edits_and_paste_types_the_pasted_value() {
        let d = import_wge_demo(&json_demo(serde_json::json!([
            key("keypress", 97, 97), key("keypress", 120, 120), key("keydown", KEY_BACKSPACE, 0),
            key("keydown", KEY_TAB, 0), key("keypress", 98, 98),
            {"set": "ab"},
            key("keydown", KEY_CTRL, 0), key("keydown", KEY_C, 0), key("keydown", KEY_V, 0),
            {"set": "abcd"},
            key("keyup", KEY_V, 0), key("keyup", KEY_CTRL, 0),
        ])))
        .unwrap();
        let actions: Vec<_> = d.steps.iter().map(|s| s.action.clone()).collect();
        assert_eq!(actions, vec![Action::Type(2, "abcd".into())]);
    }

    #[test]
    fn bad_input_gets_a_clear_message() {
        let err = |b: &[u8]| import_wge_demo(b).unwrap_err();
        assert!(err(b"{ not json").contains("not a JSON demonstration file"), "{}", err(b"{ not json"));
        assert!(err(b"[1,2]").contains("not a JSON object"));
        assert!(err(br#"{"taskName":"x","utterance":"u"}"#).contains("no 'states'"));
        assert!(err(br#"{"format":1,"steps":[],"task":{}}"#).contains("lab's own demonstrations"));
        assert!(err(br#"{"taskName":"../../evil","utterance":"u","states":[{"action":null,"dom":{"tag":"BODY","ref":1}}]}"#).contains("not a MiniWoB++ task name"));
        assert!(err(br#"{"taskName":"a","utterance":"u","states":[]}"#).contains("no states"));
        assert!(err(br#"{"taskName":"a","utterance":"u","states":[{"action":null,"dom":{"tag":"BODY"}}]}"#).contains("has no ref"));
        assert!(err(br#"{"taskName":"a","utterance":"u","states":"many"}"#).contains("malformed"));
        // A damaged gzip: a flipped byte in the compressed body.
        let mut damaged = LOGIN_USER.to_vec();
        let mid = damaged.len() / 2;
        damaged[mid] ^= 0x55;
        assert!(err(&damaged).contains(".json.gz"), "{}", err(&damaged));
        // Oversized, before any parsing.
        let big = vec![b' '; MAX_WGE_FILE_BYTES + 1];
        assert!(err(&big).contains("at most"));
        // A small gzip that unpacks beyond the cap.
        assert!(gunzip(LOGIN_USER, 1000).unwrap_err().contains("more than"));
    }
}

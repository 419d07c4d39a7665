//! Demonstrations in the published WGE/MiniWoB++ format (Liu et al., 2018; `record.js`): raw
//! mouse and keyboard events, each with a `getDOMInfo` snapshot, chunked into element actions the
//! way the authors' `chunk-shortcut` parser does (reference-implementations.md §2.1, §2.3).
//!
//! A file carries DOM snapshots (boxes, tags, texts, values) and a task name, never page HTML or
//! script: nothing in it can run in the lab's origin. It is read within bounds: 20 MB packed or
//! unpacked, each snapshot cut at the lab reader's node cap, at most [`MAX_DEMO_STEPS`] actions.
//! Every file the authors' loader reads imports (docs/wge.md lists what is read how).

mod chunk;
mod gzip;
mod raw_actions;
mod snapshot;

use serde::Deserialize;
use serde::de::IgnoredAny;

use crate::demo::{DemoStep, MAX_DEMO_BYTES};
use crate::env::{EnvConfig, Field, Instruction, Observation};
use crate::task::TaskSpec;

pub use snapshot::TEXT_REF_OFFSET;

/// Largest compressed file read; the decompressed text is capped at [`MAX_DEMO_BYTES`] too.
pub const MAX_WGE_FILE_BYTES: usize = MAX_DEMO_BYTES;
/// Most actions a demonstration may hold, imported or restored (ours; the published
/// demonstrations chunk to at most 18, docs/wge.md): each is one lattice vertex to induce.
pub const MAX_DEMO_STEPS: usize = 100;

/// Most nodes an observation of a demonstration holds: the lab reader's cap on a live page
/// (`EnvConfig::max_nodes`). An imported snapshot is cut there as the reader cuts a page.
pub fn max_demo_nodes() -> usize {
    EnvConfig::default().max_nodes
}

/// Checks a demonstration's size before any work is done on it: at most [`MAX_DEMO_STEPS`]
/// actions and [`max_demo_nodes`] nodes per observation; then each observation's structure.
pub fn check_demo_size<'a>(steps: usize, observations: impl Iterator<Item = &'a Observation>) -> Result<(), String> {
    if steps > MAX_DEMO_STEPS {
        return Err(format!("it has {steps} actions; a demonstration holds at most {MAX_DEMO_STEPS}"));
    }
    let cap = max_demo_nodes();
    let observations: Vec<&Observation> = observations.collect();
    if let Some(o) = observations.iter().find(|o| o.dom.nodes.len() > cap) {
        return Err(format!("a page of it has {} nodes; the lab reads at most {cap}", o.dom.nodes.len()));
    }
    observations.iter().try_for_each(|o| o.dom.validate())
}

/// Where a demonstration's task name came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskFrom {
    /// The file's `taskName`.
    TaskName,
    /// The file's name, `<task>_<id>.json.gz` (the published files' naming).
    FileName,
    /// The folder holding the file (how the authors' loader finds a task's files).
    Folder,
}

/// A demonstration a person recorded on a MiniWoB++ page, as element actions over our
/// observations. Recorded by people (the published Turk demonstrations), never scripted.
#[derive(Clone, Debug, PartialEq)]
pub struct WgeDemonstration {
    /// The MiniWoB++ task name (`login-user`, `flight.Alaska`); a plain name, never a page.
    pub task: String,
    pub task_from: TaskFrom,
    /// The chunked actions, each with the observation before it.
    pub steps: Vec<DemoStep>,
    /// The page after the last action (the DOM diff of the last step is taken against it).
    pub final_observation: Observation,
    /// The shaped reward the page gave (time-discounted), and the raw reward (1 for success).
    pub reward: f64,
    pub raw_reward: f64,
    /// Raw events the action vocabulary cannot say and that were left out (scrolls, double-click
    /// events beyond their clicks, Enter and other control characters, events on nodes beyond
    /// the node cap), counted.
    pub dropped_events: u32,
    /// The most nodes one observation lost to the node cap (0: none was cut).
    pub cut_nodes: u32,
    /// The most nodes of one observation given a fresh ref (a ref the snapshot gives twice).
    pub renumbered_refs: u32,
}

impl WgeDemonstration {
    /// The page it was recorded on: the real MiniWoB++ page of its task where the lab lists
    /// it (`TaskSpec::miniwob`), else the lab's own page of that name. An error names a task the
    /// lab has neither page for (the Alaska flight pages, for one).
    pub fn task_spec(&self) -> Result<TaskSpec, String> {
        TaskSpec::miniwob(&self.task)
            .or_else(|_| TaskSpec::builtin(&self.task))
            .map_err(|_| format!("the lab has no page for its task \"{}\"", self.task))
    }

    /// The observation after step `i` (the next step's, or the final one).
    pub fn after(&self, i: usize) -> &Observation {
        self.steps.get(i + 1).map(|s| &s.observation).unwrap_or(&self.final_observation)
    }
}

/// Whether a demonstration can teach a workflow, as the authors' loader decides: a successful
/// episode (raw reward at least 1, their `min_raw_reward`) with at least one action (an empty
/// episode graph reads as false there and is skipped).
pub fn check_usable(d: &WgeDemonstration) -> Result<(), String> {
    if d.raw_reward < 1.0 {
        return Err(format!("its episode failed (raw reward {}); workflows are induced from successful demonstrations only", d.raw_reward));
    }
    if d.steps.is_empty() {
        return Err("it has no actions the lab can take (clicks and typing)".into());
    }
    Ok(())
}

/// Reads a `.json` or `.json.gz` file in the published format (gzip is recognised by its magic
/// bytes, whatever the name); its task is the file's `taskName`.
pub fn import_wge_demo(bytes: &[u8]) -> Result<WgeDemonstration, String> {
    import_wge_file("", bytes)
}

/// [`import_wge_demo`] for a file with a path (`folder/task_id.json.gz`, as a folder picker or
/// a disk gives it): a file without `taskName` (the earlier 2017-09-29 set) takes its task from
/// its name, the part before the first `_`, or else from its folder's name.
pub fn import_wge_file(path: &str, bytes: &[u8]) -> Result<WgeDemonstration, String> {
    if bytes.len() > MAX_WGE_FILE_BYTES {
        return Err(format!("the file is {} MB; a demonstration is at most {} MB", bytes.len() / 1_000_000, MAX_WGE_FILE_BYTES / 1_000_000));
    }
    let text = if bytes.starts_with(&[0x1f, 0x8b]) { gzip::gunzip(bytes, MAX_DEMO_BYTES)? } else { bytes.to_vec() };
    let text = std::str::from_utf8(&text).map_err(|_| "the demonstration is not UTF-8 text".to_string())?;
    parse_wge_json(path, text)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawDemo {
    #[serde(default)]
    task_name: Option<String>,
    #[serde(default)]
    utterance: Option<String>,
    #[serde(default)]
    fields: Option<serde_json::Value>,
    #[serde(default)]
    states: Option<Vec<chunk::RawState>>,
    #[serde(default)]
    reward: Option<f64>,
    #[serde(default)]
    raw_reward: Option<f64>,
    // The lab's own demonstration format, to name it.
    #[serde(default)]
    format: Option<IgnoredAny>,
    #[serde(default)]
    steps: Option<IgnoredAny>,
}

fn parse_wge_json(path: &str, text: &str) -> Result<WgeDemonstration, String> {
    let raw: RawDemo = serde_json::from_str(text).map_err(|e| {
        if e.is_syntax() || e.is_eof() {
            if e.to_string().contains("recursion limit") {
                return "malformed WGE/MiniWoB++ demonstration: its page nests too deep".to_string();
            }
            format!("not a JSON demonstration file: {e}")
        } else if !text.trim_start().starts_with('{') {
            "not a WGE/MiniWoB++ demonstration: the file is not a JSON object".to_string()
        } else {
            format!("malformed WGE/MiniWoB++ demonstration: {e}")
        }
    })?;
    if raw.format.is_some() && raw.steps.is_some() {
        return Err("this is one of the lab's own demonstrations, not a WGE/MiniWoB++ one: open it as a lab demonstration".into());
    }
    let utterance = raw.utterance.ok_or("not a WGE/MiniWoB++ demonstration: it has no 'utterance'")?;
    let (task, task_from) = task_of(raw.task_name.as_deref(), path)?;
    // No states: nothing was recorded. The authors' loader skips such a file too (an empty
    // episode graph reads as false).
    let states = raw.states.filter(|s| !s.is_empty()).ok_or("it recorded no states (an empty episode: nothing to learn from)")?;
    let mut fields = read_fields(raw.fields.as_ref())?;
    if fields.is_empty() && task.starts_with("flight.") {
        // The flight tasks' utterance is their fields as a JSON object (the authors'
        // `extract_flight_subtasks`).
        fields = json_fields(&utterance);
    }
    let instruction = Instruction::for_task(&task, &utterance, fields);
    let max_nodes = max_demo_nodes();
    // Pages that are not click-and-type (drag, coordinates, keys, scroll) need MiniWoB++'s other actions.
    let (chunks, dropped) =
        if raw_actions::needs_raw_actions(&task) { raw_actions::chunk(&task, &states, max_nodes)? } else { chunk::chunk(&states, max_nodes)? };
    if chunks.len() > MAX_DEMO_STEPS {
        return Err(format!("it has {} actions; a demonstration holds at most {MAX_DEMO_STEPS}", chunks.len()));
    }
    let (mut cut_nodes, mut renumbered_refs) = (0, 0);
    let mut observe = |dom: &snapshot::RawNode| -> Result<Observation, String> {
        let resolved = snapshot::Resolved::new(dom, max_nodes);
        cut_nodes = cut_nodes.max(resolved.cut);
        renumbered_refs = renumbered_refs.max(resolved.renumbered);
        let dom = resolved.graph();
        dom.validate().map_err(|e| format!("malformed WGE/MiniWoB++ demonstration: {e}"))?;
        Ok(Observation { instruction: instruction.clone(), dom, page: 0, meta: Default::default() })
    };
    let mut steps = Vec::with_capacity(chunks.len());
    for c in &chunks {
        steps.push(DemoStep { observation: observe(&states[c.before].dom)?, action: c.action.clone() });
    }
    let final_observation = observe(&states[states.len() - 1].dom)?;
    Ok(WgeDemonstration {
        task,
        task_from,
        steps,
        final_observation,
        reward: raw.reward.unwrap_or(0.0),
        raw_reward: raw.raw_reward.unwrap_or(0.0),
        dropped_events: dropped,
        cut_nodes,
        renumbered_refs,
    })
}

/// The task: the file's `taskName`, else its name's part before the first `_`, else its folder.
fn task_of(task_name: Option<&str>, path: &str) -> Result<(String, TaskFrom), String> {
    if let Some(name) = task_name {
        check_task_name(name)?;
        return Ok((name.to_string(), TaskFrom::TaskName));
    }
    let mut parts = path.rsplit(['/', '\\']).filter(|p| !p.is_empty());
    let file = parts.next().unwrap_or("");
    let from_file = file.split('_').next().filter(|_| file.contains('_')).map(str::to_string);
    let from_folder = parts.next().map(str::to_string);
    for (candidate, from) in [(from_file, TaskFrom::FileName), (from_folder, TaskFrom::Folder)] {
        if let Some(c) = candidate
            && check_task_name(&c).is_ok()
        {
            return Ok((c, from));
        }
    }
    Err("it has no 'taskName', and neither its file name (<task>_<id>.json.gz) nor its folder names a task".into())
}

/// Task names go into page paths later, so only plain MiniWoB++ names are accepted: letters,
/// digits, `-`, `_` and inner dots (`flight.Alaska`), never a path.
fn check_task_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
        && !name.starts_with('.')
        && !name.ends_with('.')
        && !name.contains("..");
    if ok { Ok(()) } else { Err(format!("the demonstration's task name {name:?} is not a MiniWoB++ task name")) }
}

fn scalar(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// `fields` appears either as an object or as `[key, value]` pairs.
fn read_fields(v: Option<&serde_json::Value>) -> Result<Vec<Field>, String> {
    let bad = || "malformed WGE/MiniWoB++ demonstration: 'fields' is neither an object nor a list of [key, value] pairs".to_string();
    match v {
        None | Some(serde_json::Value::Null) => Ok(Vec::new()),
        Some(serde_json::Value::Object(m)) => m.iter().map(|(k, v)| Ok(Field { key: k.clone(), value: scalar(v).ok_or_else(bad)? })).collect(),
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

/// The fields of an utterance that is a JSON object (key order kept); none for other text.
fn json_fields(utterance: &str) -> Vec<Field> {
    let Ok(serde_json::Value::Object(m)) = serde_json::from_str::<serde_json::Value>(utterance) else { return Vec::new() };
    m.iter().filter_map(|(k, v)| Some(Field { key: k.clone(), value: scalar(v)? })).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::{Action, DomNode, NodeValue};
    use chunk::{KEY_BACKSPACE, KEY_C, KEY_CTRL, KEY_TAB, KEY_V};
    use gzip::gunzip;

    const LOGIN_USER: &[u8] = include_bytes!("../../../tests/fixtures/wge/login-user_3B4YI393VAQ8Z71VZBMHZOUOIQXSS7_d2.json.gz");
    const CLICK_CHECKBOXES: &[u8] = include_bytes!("../../../tests/fixtures/wge/click-checkboxes_317HQ483I8MMPG6UM3BHWSEVMTONIZ_d4.json.gz");

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
        let labels: Vec<String> = (0..4)
            .map(|i| d.steps[i].observation.dom.subtree_text(d.steps[i].observation.dom.index_of(actions[i].target().unwrap()).unwrap()))
            .collect();
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
        let dom = |value: &str, target: bool| {
            serde_json::json!({"tag": "BODY", "ref": 1, "left": 0, "top": 0, "width": 160, "height": 210, "children": [
            {"tag": "INPUT_text", "ref": 2, "left": 5, "top": 60, "width": 100, "height": 20, "value": value, "text": "", "recordingTarget": target}]})
        };
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
        assert!(err(br#"{"taskName":"x","utterance":"u"}"#).contains("no states"));
        assert!(err(br#"{"taskName":"x","states":[]}"#).contains("no 'utterance'"));
        assert!(err(br#"{"format":1,"steps":[],"task":{}}"#).contains("lab's own demonstrations"));
        assert!(
            err(br#"{"taskName":"../../evil","utterance":"u","states":[{"action":null,"dom":{"tag":"BODY","ref":1}}]}"#)
                .contains("not a MiniWoB++ task name")
        );
        assert!(err(br#"{"taskName":"a","utterance":"u","states":[]}"#).contains("no states"));
        // A node without a ref gets a fresh one, as the authors read it (they allow None).
        let d = import_wge_demo(br#"{"taskName":"a","utterance":"u","states":[{"action":null,"dom":{"tag":"BODY"}}]}"#).unwrap();
        assert_eq!((d.steps.len(), d.renumbered_refs), (0, 1));
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

    const DUP_REFS: &[u8] = include_bytes!("../../../tests/fixtures/wge/dup-refs_email-inbox.json");
    const SVG_CLASSES: &[u8] = include_bytes!("../../../tests/fixtures/wge/svg-classes_click-shape.json");
    const NO_TASK_NAME: &[u8] = include_bytes!("../../../tests/fixtures/wge/use-autocomplete_no-task-name.json");
    const NO_STATES: &[u8] = include_bytes!("../../../tests/fixtures/wge/no-states_login-user.json");
    const ALASKA: &[u8] = include_bytes!("../../../tests/fixtures/wge/flight.Alaska_small.json");

    #[test]
    fn a_ref_two_nodes_share_names_the_tasks_element_and_the_wrapper_stays_clickable() {
        let d = import_wge_demo(DUP_REFS).unwrap();
        assert_eq!(d.task, "email-inbox");
        assert_eq!(d.renumbered_refs, 3);
        // The first click was on "Forward" (ref 87, which the #area wrapper carries too): the ref
        // names the email's element, as MiniWoB++'s tools read it.
        assert_eq!(d.steps[0].action, Action::Click(87));
        assert_eq!(target(&d, 0).text, "Forward");
        // The second was on the #area wrapper itself: it keeps a distinct, fresh ref.
        assert_eq!(target(&d, 1).id, "area");
        assert_ne!(d.steps[1].action.target(), Some(87));
        for s in &d.steps {
            s.observation.dom.validate().unwrap();
        }
    }

    #[test]
    fn svg_elements_with_object_classes_import() {
        let d = import_wge_demo(SVG_CLASSES).unwrap();
        assert_eq!((d.task.as_str(), d.steps.len()), ("click-shape", 1));
        assert_eq!(target(&d, 0).tag, "circle");
        assert!(target(&d, 0).classes.is_empty());
    }

    #[test]
    fn a_file_without_task_name_takes_its_task_from_its_name_or_folder() {
        let d = import_wge_file("demos/use-autocomplete_no-task-name.json", NO_TASK_NAME).unwrap();
        assert_eq!((d.task.as_str(), d.task_from), ("use-autocomplete", TaskFrom::FileName));
        // Typed "Lib" into the field; the scroll after it has no action in our vocabulary.
        assert_eq!(d.steps.iter().map(|s| s.action.clone()).collect::<Vec<_>>(), [Action::Type(5, "Lib".into())]);
        assert_eq!(d.dropped_events, 1);
        assert_eq!(d.steps[0].observation.instruction.field("start"), Some("Lib"));
        let d = import_wge_file("use-autocomplete/recorded.json", NO_TASK_NAME).unwrap();
        assert_eq!((d.task.as_str(), d.task_from), ("use-autocomplete", TaskFrom::Folder));
        assert!(import_wge_demo(NO_TASK_NAME).unwrap_err().contains("no 'taskName'"));
        assert!(import_wge_file("../..json", NO_TASK_NAME).unwrap_err().contains("no 'taskName'"));
    }

    #[test]
    fn a_file_with_no_states_is_refused_as_the_authors_loader_skips_it() {
        assert!(import_wge_demo(NO_STATES).unwrap_err().contains("recorded no states"));
    }

    #[test]
    fn the_papers_alaska_task_imports_with_its_json_fields() {
        let d = import_wge_demo(ALASKA).unwrap();
        assert_eq!(d.task, "flight.Alaska");
        assert_eq!(target(&d, 0).text, "Search");
        let ins = &d.steps[0].observation.instruction;
        assert_eq!(ins.field("Departure City"), Some("Austin"));
        assert_eq!(ins.field("Departure Day"), Some("3"));
        for bad in ["../flight", "flight..x", ".x", "a/b", "x."] {
            assert!(check_task_name(bad).is_err(), "{bad}");
        }
    }

    /// A published-format file with one click on the first of `n` buttons.
    fn buttons(n: usize, clicks: usize) -> Vec<u8> {
        let page = |target: bool| {
            let b: Vec<serde_json::Value> = (0..n)
                .map(|i| {
                    serde_json::json!({"tag": "BUTTON", "ref": 4 + i, "left": (i % 4) * 40, "top": 50 + (i / 4) * 20,
                    "width": 38, "height": 18, "text": "OK", "recordingTarget": target && i == 0})
                })
                .collect();
            serde_json::json!({"tag": "BODY", "ref": 1, "children": [{"tag": "DIV", "ref": 2, "children": b}]})
        };
        let mut states = vec![serde_json::json!({"action": null, "dom": page(false)})];
        for _ in 0..clicks {
            for kind in ["mousedown", "mouseup", "click"] {
                states.push(serde_json::json!({"action": {"type": kind, "timing": 1}, "dom": page(true)}));
            }
        }
        serde_json::to_vec(
            &serde_json::json!({"taskName": "click-button", "utterance": "Click on the \"OK\" button.", "states": states, "rawReward": 1}),
        )
        .unwrap()
    }

    #[test]
    fn a_page_beyond_the_node_cap_is_cut_as_the_reader_cuts_it() {
        let cap = max_demo_nodes();
        let d = import_wge_demo(&buttons(cap + 500, 1)).unwrap();
        assert_eq!(d.steps.len(), 1);
        assert!(d.after(0).dom.nodes.len() == cap && d.steps[0].observation.dom.nodes.len() == cap);
        assert_eq!((d.cut_nodes, d.steps[0].observation.dom.truncated), (502, 502));
        assert_eq!(d.steps[0].action, Action::Click(4));
    }

    #[test]
    fn a_demonstration_over_the_step_cap_is_refused_before_its_pages_are_read() {
        assert_eq!(import_wge_demo(&buttons(3, MAX_DEMO_STEPS)).unwrap().steps.len(), MAX_DEMO_STEPS);
        let err = import_wge_demo(&buttons(3, MAX_DEMO_STEPS + 1)).unwrap_err();
        assert!(err.contains(&format!("{} actions", MAX_DEMO_STEPS + 1)), "{err}");
        // Restored or recorded demonstrations are held to the same caps.
        let d = import_wge_demo(&buttons(3, 2)).unwrap();
        let obs: Vec<&Observation> = d.steps.iter().map(|s| &s.observation).collect();
        assert!(check_demo_size(2, obs.iter().copied()).is_ok());
        assert!(check_demo_size(MAX_DEMO_STEPS + 1, obs.iter().copied()).unwrap_err().contains("at most"));
        let mut big = d.steps[0].observation.clone();
        let root = big.dom.nodes[0].clone();
        big.dom.nodes = (0..=max_demo_nodes()).map(|i| DomNode { r#ref: i as u32 + 1, parent: None, children: Vec::new(), ..root.clone() }).collect();
        assert!(check_demo_size(1, std::iter::once(&big)).unwrap_err().contains("the lab reads at most"));
    }
}

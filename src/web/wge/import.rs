//! Opening demonstration files in the WGE view: the published WGE/MiniWoB++ format or the lab's
//! own, each checked before any work on it, its lattice induced a vertex at a time with the
//! browser let in between (a large page's induction never holds the tab), and a report of what
//! was read and how (the view lists it per file).

use serde::Serialize;

use super::{DemoSource, Entry, Played};
use crate::demo::DemoStep;
use crate::demo::{Demonstration, MAX_DEMO_BYTES};
use crate::env::Observation;
use crate::task::TaskSpec;
use crate::web::util::yield_now;
use crate::wge::demo_import::{TaskFrom, check_usable, import_wge_file, max_demo_nodes};
use crate::wge::induction::{Induction, InductionConfig, WorkflowLattice, fold_click_then_type};

/// Longest path of a file kept (a folder's relative path names the task of files without one).
const MAX_PATH_CHARS: usize = 400;
/// Induction yields to the browser once it has worked this long without a break.
const SLICE_MS: f64 = 12.0;

/// What importing one file did, for the view's per-file list.
#[derive(Serialize)]
pub(super) struct ImportReport {
    pub index: usize,
    pub label: String,
    pub task: String,
    pub actions: usize,
    /// How it was read, when not plainly: where the task came from, refs renumbered, nodes cut,
    /// events left out, steps whose search was cut short.
    pub notes: Vec<String>,
}

/// The label a file shows under: its name, with the end of a long path kept.
pub(super) fn label_of(path: &str) -> String {
    let name = path.rsplit(['/', '\\']).find(|p| !p.is_empty()).unwrap_or(path);
    let chars: Vec<char> = name.chars().collect();
    let keep = chars.len().saturating_sub(80);
    chars[keep..].iter().collect()
}

/// A WGE/MiniWoB++ file or one of the lab's own demonstration files, with the notes on how it
/// was read.
pub(super) fn read_file(path: &str, bytes: &[u8]) -> Result<(Entry, Vec<String>), String> {
    if bytes.len() > MAX_DEMO_BYTES {
        return Err(format!("the file is {} MB; a demonstration is at most {} MB", bytes.len() / 1_000_000, MAX_DEMO_BYTES / 1_000_000));
    }
    let path: String = path.chars().take(MAX_PATH_CHARS).collect();
    let label = label_of(&path);
    // The lab's own format is a JSON object with "format" and "steps"; the importer names it.
    match import_wge_file(&path, bytes) {
        Ok(d) => {
            check_usable(&d)?;
            let mut notes = Vec::new();
            match d.task_from {
                TaskFrom::TaskName => {}
                TaskFrom::FileName => notes.push(format!("no taskName: the task {} is its file name's", d.task)),
                TaskFrom::Folder => notes.push(format!("no taskName: the task {} is its folder's", d.task)),
            }
            if d.renumbered_refs > 0 {
                notes.push(format!(
                    "{} given a ref of their own (a snapshot gave a ref twice; it names the task's element, as MiniWoB++'s tools read it)",
                    plural(d.renumbered_refs as usize, "node")
                ));
            }
            if d.cut_nodes > 0 {
                notes.push(format!("pages cut to the {} nodes the lab reads ({} left out at most)", max_demo_nodes(), d.cut_nodes));
            }
            if d.dropped_events > 0 {
                notes.push(format!("{} the lab's actions cannot say left out (scrolls, Enter)", plural(d.dropped_events as usize, "event")));
            }
            // Recorded on the real MiniWoB++ page: the session learns that page where the lab has it.
            let task = d.task_spec().map(|spec| spec.label()).unwrap_or_else(|_| d.task.clone());
            let entry = Entry {
                source: DemoSource::Imported,
                label,
                task,
                steps: d.steps,
                final_observation: Some(d.final_observation),
                reward: d.reward,
                raw_reward: d.raw_reward,
                played: None,
            };
            Ok((entry, notes))
        }
        Err(why) if why.contains("lab's own demonstrations") => {
            let text = std::str::from_utf8(bytes).map_err(|_| "the demonstration is not UTF-8 text".to_string())?;
            let demo = Demonstration::from_json(text)?;
            Ok((from_lab_demo(demo, DemoSource::Person, label)?, Vec::new()))
        }
        Err(why) => Err(why),
    }
}

pub(super) fn from_lab_demo(demo: Demonstration, source: DemoSource, label: String) -> Result<Entry, String> {
    if !matches!(demo.task, TaskSpec::Builtin { .. }) && !demo.task.is_miniwob() {
        return Err(
            "workflow-guided exploration learns the lab's own tasks and the real MiniWoB++ pages; this demonstration is of another page".into()
        );
    }
    if !crate::env::is_success(demo.raw_reward) {
        return Err(format!(
            "{label}: its episode did not succeed (raw reward {}); workflows are induced from successful demonstrations only",
            demo.raw_reward
        ));
    }
    Ok(Entry {
        source,
        label,
        task: demo.task.label(),
        steps: fold_click_then_type(demo.steps),
        final_observation: None,
        reward: demo.reward,
        raw_reward: demo.raw_reward,
        played: Some(Played { seed: demo.seed, data_mode: demo.data_mode, exact: demo.exact }),
    })
}

/// Induces a demonstration's lattice a vertex at a time, letting the browser in whenever a slice
/// of work has run ([`SLICE_MS`]): the same lattice `induce` gives, without holding the tab.
pub async fn induce_yielding(steps: &[DemoStep], final_observation: Option<&Observation>, config: &InductionConfig) -> WorkflowLattice {
    let mut induction = Induction::new(steps, final_observation, config);
    let mut since = js_sys::Date::now();
    while induction.next_step() {
        if js_sys::Date::now() - since > SLICE_MS {
            yield_now().await;
            since = js_sys::Date::now();
        }
    }
    induction.finish()
}

pub(super) fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

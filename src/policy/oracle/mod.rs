//! Scripted policies for the lab's own tasks: an oracle that solves each task from its
//! observation (instruction fields and DOM only, never the page's internals), and a "wrong"
//! script that must fail it. The tests run both on every task for many seeds; the environment
//! benchmark uses the oracles as its expert policy.
//!
//! The same scripts solve the real MiniWoB++ pages of the same names (`tests/web_miniwob_real.rs`):
//! most read both pages alike (a link is an `<a>` or MiniWoB++'s `span.alink`, a calendar is the
//! lab's or jQuery UI's). Where the real page is built too differently to read it alike (the
//! email inbox), it has a script of its own in [`REAL_GROUPS`], which [`scripted_for`] picks by the
//! task's source.
//!
//! Every script derives its next action from the current observation, so it needs no memory
//! across steps and recovers if a step had no effect.

mod basic;
mod clicks;
mod composite;
mod forms;
mod inbox_social;

pub use forms::thesaurus_covers;

use crate::env::{Action, DomNode, Observation};
use crate::task::TaskSpec;

use super::Policy;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Script {
    /// Solves the task (raw reward 1).
    Oracle,
    /// Does something plausible but wrong: a mistake the page fails the episode for (raw reward
    /// -1 and the page's reason). On the few tasks whose page fails an episode only when its time
    /// runs out (click-test, focus-text, click-dialog, click-collapsible, as in MiniWoB) it clicks
    /// something that does not help, until the page's time limit or the lab's step limit.
    Wrong,
}

pub(crate) type ScriptFn = fn(&Observation) -> Option<Action>;
/// (task, oracle, wrong script)
pub(crate) type Entry = (&'static str, ScriptFn, ScriptFn);

/// A policy backed by a plain function of the observation.
pub struct Scripted {
    f: ScriptFn,
}

impl Policy for Scripted {
    fn act(&mut self, obs: &Observation) -> Option<Action> {
        (self.f)(obs)
    }
}

/// Every group of tasks keeps its scripts, and its table of them, in its own file.
const GROUPS: &[&[Entry]] = &[basic::SCRIPTS, clicks::SCRIPTS, forms::SCRIPTS, inbox_social::SCRIPTS, composite::SCRIPTS];

/// Scripts written for a real MiniWoB++ page whose layout the lab's script cannot read.
const REAL_GROUPS: &[&[Entry]] = &[inbox_social::REAL_SCRIPTS];

fn entries() -> impl Iterator<Item = &'static Entry> {
    GROUPS.iter().flat_map(|g| g.iter())
}

fn real_entries() -> impl Iterator<Item = &'static Entry> {
    REAL_GROUPS.iter().flat_map(|g| g.iter())
}

fn pick(entry: &Entry, script: Script) -> Scripted {
    Scripted {
        f: match script {
            Script::Oracle => entry.1,
            Script::Wrong => entry.2,
        },
    }
}

/// The script for a task as the environment runs it: a real MiniWoB++ page gets the script
/// written for it where there is one, else the script of the lab's task of its name.
pub fn scripted_for(task: &TaskSpec, script: Script) -> Option<Scripted> {
    let real = task.is_miniwob().then(|| real_entries().find(|e| e.0 == task.name())).flatten();
    match real {
        Some(entry) => Some(pick(entry, script)),
        None => scripted(task.name(), script),
    }
}

/// The script of the lab's task `task` (by page name).
pub fn scripted(task: &str, script: Script) -> Option<Scripted> {
    entries().find(|(name, _, _)| *name == task).map(|e| pick(e, script))
}

/// The tasks (by page name) that have scripts.
pub fn script_tasks() -> Vec<&'static str> {
    entries().map(|e| e.0).collect()
}

pub fn has_script(task: &str) -> bool {
    entries().any(|(name, _, _)| *name == task)
}

// ------------------------------------------------------------------------------- helpers
// Shared by the task files: find nodes by predicate, id or button label, and build actions.

pub(crate) fn find(obs: &Observation, pred: impl Fn(&DomNode) -> bool) -> Option<&DomNode> {
    obs.dom.nodes.iter().find(|n| pred(n))
}

pub(crate) fn by_id<'a>(obs: &'a Observation, id: &str) -> Option<&'a DomNode> {
    find(obs, |n| n.id == id)
}

pub(crate) fn button<'a>(obs: &'a Observation, text: &str) -> Option<&'a DomNode> {
    find(obs, |n| n.tag == "BUTTON" && n.text == text)
}

pub(crate) fn click(n: &DomNode) -> Action {
    Action::Click(n.r#ref)
}

/// Types `want` into `field` unless it already holds it; `None` when it does.
pub(crate) fn fill(field: &DomNode, want: &str) -> Option<Action> {
    (field.value.as_text() != Some(want)).then(|| Action::Type(field.r#ref, want.to_string()))
}

/// Clicks somewhere inert (the task area itself), for tasks whose page fails an episode only when
/// its time runs out.
pub(crate) fn idle_click(obs: &Observation) -> Option<Action> {
    by_id(obs, "area").map(click)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::task::builtin_tasks;

    #[test]
    fn every_builtin_task_has_both_scripts_and_names_are_unique() {
        let mut names: Vec<&str> = entries().map(|e| e.0).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), entries().count(), "a task has scripts in two groups");
        for t in builtin_tasks() {
            assert!(scripted(&t.name, Script::Oracle).is_some(), "{} has no oracle", t.name);
            assert!(scripted(&t.name, Script::Wrong).is_some(), "{} has no wrong script", t.name);
        }
        assert!(scripted("no-such-task", Script::Oracle).is_none());
        // A real page's own script is for a real page: one that shares its name with a lab task,
        // or email-inbox-nl-turk (the lab's email-inbox-nl).
        assert!(real_entries().all(|e| has_script(e.0) || e.0 == "email-inbox-nl-turk"), "a real script for an unknown page");
        assert!(real_entries().all(|e| crate::env::miniwob_task(e.0).is_some()));
    }

    #[test]
    fn a_real_page_gets_its_own_script_where_it_has_one() {
        let f = |spec: &TaskSpec| scripted_for(spec, Script::Oracle).map(|s| s.f as usize);
        let lab = |name: &str| scripted(name, Script::Oracle).map(|s| s.f as usize);
        let real = TaskSpec::miniwob("email-inbox").unwrap();
        assert_ne!(f(&real), lab("email-inbox"));
        assert_eq!(f(&TaskSpec::builtin("email-inbox").unwrap()), lab("email-inbox"));
        assert_eq!(f(&TaskSpec::miniwob("click-link").unwrap()), lab("click-link"), "read alike: the lab's script");
        assert!(f(&TaskSpec::miniwob("drag-box").unwrap()).is_none());
    }
}

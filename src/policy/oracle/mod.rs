//! Scripted policies for the lab's own tasks: an oracle that solves each task from its
//! observation (instruction fields and DOM only, never the page's internals), and a "wrong"
//! script that must fail it. The tests run both on every task for many seeds; the environment
//! benchmark uses the oracles as its expert policy.
//!
//! Every script derives its next action from the current observation, so it needs no memory
//! across steps and recovers if a step had no effect.

mod basic;

use crate::env::{Action, DomNode, Observation};

use super::Policy;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Script {
    /// Solves the task (raw reward 1).
    Oracle,
    /// Does something plausible but wrong (raw reward -1, from the page or the step limit).
    Wrong,
}

type ScriptFn = fn(&Observation) -> Option<Action>;

/// A policy backed by a plain function of the observation.
pub struct Scripted {
    f: ScriptFn,
}

impl Policy for Scripted {
    fn act(&mut self, obs: &Observation) -> Option<Action> {
        (self.f)(obs)
    }
}

/// The tasks that have scripts, with (oracle, wrong). Each group of tasks keeps its scripts in
/// its own file.
const SCRIPTS: &[(&str, ScriptFn, ScriptFn)] = &[
    ("click-test", basic::click_test, idle_click),
    ("click-button", basic::click_button, basic::click_button_wrong),
    ("focus-text", basic::focus_text, idle_click),
    ("enter-text", basic::enter_text, basic::enter_text_wrong),
    ("login-user", basic::login_user, basic::login_user_wrong),
];

pub fn scripted(task: &str, script: Script) -> Option<Scripted> {
    SCRIPTS.iter().find(|(name, _, _)| *name == task).map(|&(_, oracle, wrong)| Scripted {
        f: match script {
            Script::Oracle => oracle,
            Script::Wrong => wrong,
        },
    })
}

pub fn has_script(task: &str) -> bool {
    SCRIPTS.iter().any(|(name, _, _)| *name == task)
}

// ------------------------------------------------------------------------------- helpers
// Shared by the task files: find nodes by predicate, id or button label, and build actions.

pub(crate) fn find<'a>(obs: &'a Observation, pred: impl Fn(&DomNode) -> bool) -> Option<&'a DomNode> {
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

/// Clicks somewhere inert (the task area itself), for tasks whose only failure is running out of
/// steps or time.
pub(crate) fn idle_click(obs: &Observation) -> Option<Action> {
    by_id(obs, "area").map(click)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::task::builtin_tasks;

    #[test]
    fn every_builtin_task_has_both_scripts() {
        for t in builtin_tasks() {
            assert!(scripted(&t.name, Script::Oracle).is_some(), "{} has no oracle", t.name);
            assert!(scripted(&t.name, Script::Wrong).is_some(), "{} has no wrong script", t.name);
        }
        assert!(scripted("no-such-task", Script::Oracle).is_none());
    }
}

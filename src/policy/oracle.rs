//! Scripted policies for the lab's own tasks: an oracle that solves each task from its
//! observation (instruction fields and DOM only, never the page's internals), and a "wrong"
//! script that must fail it. The tests run both on every task for many seeds; the environment
//! benchmark uses the oracles as its expert policy.
//!
//! Every script derives its next action from the current observation, so it needs no memory
//! across steps and recovers if a step had no effect.

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

/// The tasks that have scripts, with (oracle, wrong).
const SCRIPTS: &[(&str, ScriptFn, ScriptFn)] = &[
    ("click-test", click_test, idle_click),
    ("click-button", click_button, click_button_wrong),
    ("focus-text", focus_text, idle_click),
    ("enter-text", enter_text, enter_text_wrong),
    ("login-user", login_user, login_user_wrong),
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

fn find<'a>(obs: &'a Observation, pred: impl Fn(&DomNode) -> bool) -> Option<&'a DomNode> {
    obs.dom.nodes.iter().find(|n| pred(n))
}

fn by_id<'a>(obs: &'a Observation, id: &str) -> Option<&'a DomNode> {
    find(obs, |n| n.id == id)
}

fn button<'a>(obs: &'a Observation, text: &str) -> Option<&'a DomNode> {
    find(obs, |n| n.tag == "BUTTON" && n.text == text)
}

fn click(n: &DomNode) -> Action {
    Action::Click(n.r#ref)
}

/// Types `want` into `field` unless it already holds it; `None` when it does.
fn fill(field: &DomNode, want: &str) -> Option<Action> {
    (field.value.as_text() != Some(want)).then(|| Action::Type(field.r#ref, want.to_string()))
}

/// Clicks somewhere inert (the task area itself), for tasks whose only failure is running out of
/// steps or time.
fn idle_click(obs: &Observation) -> Option<Action> {
    by_id(obs, "area").map(click)
}

// ------------------------------------------------------------------------------- the tasks

fn click_test(obs: &Observation) -> Option<Action> {
    find(obs, |n| n.tag == "BUTTON").map(click)
}

fn click_button(obs: &Observation) -> Option<Action> {
    button(obs, obs.instruction.field("target")?).map(click)
}

fn click_button_wrong(obs: &Observation) -> Option<Action> {
    let target = obs.instruction.field("target")?;
    find(obs, |n| n.tag == "BUTTON" && n.text != target).map(click)
}

fn focus_text(obs: &Observation) -> Option<Action> {
    find(obs, |n| n.tag == "INPUT_text").map(click)
}

fn enter_text(obs: &Observation) -> Option<Action> {
    let input = find(obs, |n| n.tag == "INPUT_text")?;
    fill(input, obs.instruction.field("target")?).or_else(|| button(obs, "Submit").map(click))
}

fn enter_text_wrong(obs: &Observation) -> Option<Action> {
    let input = find(obs, |n| n.tag == "INPUT_text")?;
    let wrong = format!("{}x", obs.instruction.field("target")?);
    fill(input, &wrong).or_else(|| button(obs, "Submit").map(click))
}

fn login_user(obs: &Observation) -> Option<Action> {
    fill(by_id(obs, "username")?, obs.instruction.field("username")?)
        .or_else(|| fill(by_id(obs, "password")?, obs.instruction.field("password")?))
        .or_else(|| button(obs, "Login").map(click))
}

fn login_user_wrong(obs: &Observation) -> Option<Action> {
    let wrong = format!("{}!", obs.instruction.field("password")?);
    fill(by_id(obs, "username")?, obs.instruction.field("username")?)
        .or_else(|| fill(by_id(obs, "password")?, &wrong))
        .or_else(|| button(obs, "Login").map(click))
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

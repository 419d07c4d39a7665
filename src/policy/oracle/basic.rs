//! Scripts for the first tasks: click-test, click-button, focus-text, enter-text, login-user.

use super::{Entry, button, by_id, click, fill, find, idle_click};
use crate::env::{Action, Observation};

pub(super) const SCRIPTS: &[Entry] = &[
    ("click-test", click_test, idle_click),
    ("click-button", click_button, click_button_wrong),
    ("focus-text", focus_text, idle_click),
    ("enter-text", enter_text, enter_text_wrong),
    ("login-user", login_user, login_user_wrong),
];

pub(super) fn click_test(obs: &Observation) -> Option<Action> {
    find(obs, |n| n.tag == "BUTTON").map(click)
}

pub(super) fn click_button(obs: &Observation) -> Option<Action> {
    button(obs, obs.instruction.field("target")?).map(click)
}

pub(super) fn click_button_wrong(obs: &Observation) -> Option<Action> {
    let target = obs.instruction.field("target")?;
    find(obs, |n| n.tag == "BUTTON" && n.text != target).map(click)
}

pub(super) fn focus_text(obs: &Observation) -> Option<Action> {
    find(obs, |n| n.tag == "INPUT_text").map(click)
}

pub(super) fn enter_text(obs: &Observation) -> Option<Action> {
    let input = find(obs, |n| n.tag == "INPUT_text")?;
    fill(input, obs.instruction.field("target")?).or_else(|| button(obs, "Submit").map(click))
}

pub(super) fn enter_text_wrong(obs: &Observation) -> Option<Action> {
    let input = find(obs, |n| n.tag == "INPUT_text")?;
    let wrong = format!("{}x", obs.instruction.field("target")?);
    fill(input, &wrong).or_else(|| button(obs, "Submit").map(click))
}

pub(super) fn login_user(obs: &Observation) -> Option<Action> {
    fill(by_id(obs, "username")?, obs.instruction.field("username")?)
        .or_else(|| fill(by_id(obs, "password")?, obs.instruction.field("password")?))
        .or_else(|| button(obs, "Login").map(click))
}

pub(super) fn login_user_wrong(obs: &Observation) -> Option<Action> {
    let wrong = format!("{}!", obs.instruction.field("password")?);
    fill(by_id(obs, "username")?, obs.instruction.field("username")?)
        .or_else(|| fill(by_id(obs, "password")?, &wrong))
        .or_else(|| button(obs, "Login").map(click))
}

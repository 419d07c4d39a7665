//! Scripts for click-test-2, click-button-sequence, click-link, click-dialog(-2), click-tab(-2), click-widget, click-collapsible, focus-text-2.

use super::{Entry, button, click, find};
use crate::env::{Action, DomNode, Observation};

pub(super) const SCRIPTS: &[Entry] = &[
    ("click-test-2", named_button, other_button),
    ("click-button-sequence", button_sequence, button_sequence_wrong),
    ("click-link", click_link, click_link_wrong),
    ("click-dialog", click_dialog, click_dialog_wrong),
    ("click-dialog-2", named_button, other_button),
    ("click-tab", click_tab, click_tab_wrong),
    ("click-tab-2", click_tab_2, click_tab_2_wrong),
    ("click-widget", click_widget, click_widget_wrong),
    ("click-collapsible", click_collapsible, click_collapsible_wrong),
    ("focus-text-2", focus_text_2, focus_text_2_wrong),
];

/// The button whose label is the `target` field (click-test-2, click-dialog-2).
fn named_button(obs: &Observation) -> Option<Action> {
    button(obs, obs.instruction.field("target")?).map(click)
}

/// Any other button.
fn other_button(obs: &Observation) -> Option<Action> {
    let target = obs.instruction.field("target")?;
    find(obs, |n| n.tag == "BUTTON" && n.text != target).map(click)
}

/// ONE until it has been clicked (its `tampered` mark says so), then TWO.
fn button_sequence(obs: &Observation) -> Option<Action> {
    let one = button(obs, "ONE")?;
    if one.tampered { button(obs, "TWO").map(click) } else { Some(click(one)) }
}

fn button_sequence_wrong(obs: &Observation) -> Option<Action> {
    button(obs, "TWO").map(click)
}

fn link(obs: &Observation, pred: impl Fn(&str) -> bool) -> Option<&DomNode> {
    find(obs, |n| n.tag == "A" && pred(&n.text))
}

fn click_link(obs: &Observation) -> Option<Action> {
    let target = obs.instruction.field("target")?;
    link(obs, |t| t == target).map(click)
}

fn click_link_wrong(obs: &Observation) -> Option<Action> {
    let target = obs.instruction.field("target")?;
    link(obs, |t| t != target).map(click)
}

fn click_dialog(obs: &Observation) -> Option<Action> {
    button(obs, "x").map(click)
}

/// Clicks the dialog's text instead of its close button: nothing happens, and the page fails the
/// episode only when its time runs out.
fn click_dialog_wrong(obs: &Observation) -> Option<Action> {
    find(obs, |n| n.has_class("dialog-body")).map(click)
}

fn tab(obs: &Observation, pred: impl Fn(&str) -> bool) -> Option<&DomNode> {
    link(obs, |t| t.starts_with("Tab #") && pred(t))
}

fn click_tab(obs: &Observation) -> Option<Action> {
    let want = format!("Tab #{}", obs.instruction.field("target")?);
    tab(obs, |t| t == want).map(click)
}

fn click_tab_wrong(obs: &Observation) -> Option<Action> {
    let want = format!("Tab #{}", obs.instruction.field("target")?);
    tab(obs, |t| t != want).map(click)
}

/// The named link if the open panel shows it; otherwise the first tab that is neither open nor
/// already visited (visited tabs carry the `tampered` mark).
fn click_tab_2(obs: &Observation) -> Option<Action> {
    let target = obs.instruction.field("target")?;
    if let Some(a) = find(obs, |n| n.tag == "A" && n.has_class("word") && n.text == target) {
        return Some(click(a));
    }
    let open = |n: &DomNode| n.parent.is_some_and(|p| obs.dom.nodes[p].has_class("active"));
    find(obs, |n| n.tag == "A" && n.has_class("tab-link") && !open(n) && !n.tampered).map(click)
}

fn click_tab_2_wrong(obs: &Observation) -> Option<Action> {
    let target = obs.instruction.field("target")?;
    find(obs, |n| n.tag == "A" && n.has_class("word") && n.text != target).map(click)
}

/// The element tag of each widget kind click-widget names.
fn widget_tag(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "button" => "BUTTON",
        "checkbox" => "INPUT_checkbox",
        "radio" => "INPUT_radio",
        "text" => "INPUT_text",
        "textarea" => "TEXTAREA",
        _ => return None,
    })
}

fn click_widget(obs: &Observation) -> Option<Action> {
    let tag = widget_tag(obs.instruction.field("target")?)?;
    find(obs, |n| n.has_class("widget") && n.tag == tag).map(click)
}

fn click_widget_wrong(obs: &Observation) -> Option<Action> {
    let tag = widget_tag(obs.instruction.field("target")?)?;
    find(obs, |n| n.has_class("widget") && n.tag != tag).map(click)
}

/// Submit once the section is open (the button is only visible then), else the header.
fn click_collapsible(obs: &Observation) -> Option<Action> {
    button(obs, "Submit").or_else(|| find(obs, |n| n.has_class("section-head"))).map(click)
}

/// Keeps toggling the section and never submits: the page fails the episode only when its time
/// runs out.
fn click_collapsible_wrong(obs: &Observation) -> Option<Action> {
    find(obs, |n| n.has_class("section-head")).map(click)
}

/// Index (0-based) of the textbox that the `target` ordinal ("1st", "2nd", ...) names.
fn ordinal(obs: &Observation) -> Option<usize> {
    let digits: String = obs.instruction.field("target")?.chars().take_while(char::is_ascii_digit).collect();
    digits.parse::<usize>().ok()?.checked_sub(1)
}

fn textboxes(obs: &Observation) -> Vec<&DomNode> {
    obs.dom.nodes.iter().filter(|n| n.tag == "INPUT_text").collect()
}

fn focus_text_2(obs: &Observation) -> Option<Action> {
    textboxes(obs).get(ordinal(obs)?).map(|n| click(n))
}

fn focus_text_2_wrong(obs: &Observation) -> Option<Action> {
    let boxes = textboxes(obs);
    boxes.get((ordinal(obs)? + 1) % boxes.len().max(1)).map(|n| click(n))
}

//! Scripts for click-test-2, click-button-sequence, click-link, click-dialog(-2), click-tab(-2), click-widget, click-collapsible, focus-text-2.
//!
//! Each script acts on the lab's page and on the real MiniWoB++ page of the same name: what it
//! looks for is what a person recognises on either (a link is an `<a>` or text styled as one, a
//! dialog's close button is its "x" or jQuery UI's title-bar button, …).

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

/// The button whose label is the `target` field (click-test-2, click-dialog-2); a dialog's "x" is
/// its close button, which jQuery UI draws as an icon.
fn named_button(obs: &Observation) -> Option<Action> {
    let target = obs.instruction.field("target")?;
    button(obs, target).or_else(|| if target == "x" { close_button(obs) } else { None }).map(click)
}

/// Any other button.
fn other_button(obs: &Observation) -> Option<Action> {
    let target = obs.instruction.field("target")?;
    let close = close_button(obs).map(|n| n.r#ref);
    let is_target = |n: &DomNode| n.text == target || (target == "x" && Some(n.r#ref) == close);
    find(obs, |n| n.tag == "BUTTON" && !is_target(n)).map(click)
}

/// A dialog's close button: the lab's "x", or jQuery UI's title-bar button (an icon whose label
/// "Close" is moved out of view).
fn close_button(obs: &Observation) -> Option<&DomNode> {
    button(obs, "x").or_else(|| find(obs, |n| n.tag == "BUTTON" && n.has_class("ui-dialog-titlebar-close")))
}

/// ONE until it has been clicked (its `tampered` mark says so), then TWO.
fn button_sequence(obs: &Observation) -> Option<Action> {
    let one = button(obs, "ONE")?;
    if one.tampered { button(obs, "TWO").map(click) } else { Some(click(one)) }
}

fn button_sequence_wrong(obs: &Observation) -> Option<Action> {
    button(obs, "TWO").map(click)
}

/// A link as a person sees one: an `<a>`, or MiniWoB++'s underlined `span.alink`.
fn is_link(n: &DomNode) -> bool {
    n.tag == "A" || n.has_class("alink")
}

fn link(obs: &Observation, pred: impl Fn(&str) -> bool) -> Option<&DomNode> {
    find(obs, |n| is_link(n) && pred(&n.text))
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
    close_button(obs).map(click)
}

/// Clicks the dialog's text instead of its close button: nothing happens, and the page fails the
/// episode only when its time runs out.
fn click_dialog_wrong(obs: &Observation) -> Option<Action> {
    find(obs, |n| n.has_class("dialog-body") || n.has_class("ui-dialog-content")).map(click)
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

/// A link in a tab's panel (the tab strip's own links aside).
fn is_word_link(n: &DomNode) -> bool {
    is_link(n) && !is_tab_link(n)
}

/// A tab of the strip: the lab's `a.tab-link` or jQuery UI's `a.ui-tabs-anchor`.
fn is_tab_link(n: &DomNode) -> bool {
    n.tag == "A" && (n.has_class("tab-link") || n.has_class("ui-tabs-anchor"))
}

/// The named link if the open panel shows it; otherwise the first tab that is neither open nor
/// already visited (visited tabs carry the `tampered` mark).
fn click_tab_2(obs: &Observation) -> Option<Action> {
    let target = obs.instruction.field("target")?;
    if let Some(a) = find(obs, |n| is_word_link(n) && n.text == target) {
        return Some(click(a));
    }
    let open = |n: &DomNode| n.parent.is_some_and(|p| obs.dom.nodes[p].has_class("active") || obs.dom.nodes[p].has_class("ui-tabs-active"));
    find(obs, |n| is_tab_link(n) && !open(n) && !n.tampered).map(click)
}

fn click_tab_2_wrong(obs: &Observation) -> Option<Action> {
    let target = obs.instruction.field("target")?;
    find(obs, |n| is_word_link(n) && n.text != target).map(click)
}

/// The element tag of each widget kind click-widget names.
const WIDGET_TAGS: [(&str, &str); 5] =
    [("button", "BUTTON"), ("checkbox", "INPUT_checkbox"), ("radio", "INPUT_radio"), ("text", "INPUT_text"), ("textarea", "TEXTAREA")];

fn widget_tag(kind: &str) -> Option<&'static str> {
    WIDGET_TAGS.iter().find(|(k, _)| *k == kind).map(|(_, t)| *t)
}

/// The widgets' controls with their tags: the lab marks the control itself `.widget`, MiniWoB++
/// the box around it.
fn widget_controls(obs: &Observation) -> impl Iterator<Item = &DomNode> {
    let in_widget = |n: &DomNode| {
        let mut at = Some(n);
        while let Some(m) = at {
            if m.has_class("widget") {
                return true;
            }
            at = m.parent.map(|p| &obs.dom.nodes[p]);
        }
        false
    };
    obs.dom.nodes.iter().filter(move |n| WIDGET_TAGS.iter().any(|(_, t)| *t == n.tag) && in_widget(n))
}

fn click_widget(obs: &Observation) -> Option<Action> {
    let tag = widget_tag(obs.instruction.field("target")?)?;
    widget_controls(obs).find(|n| n.tag == tag).map(click)
}

fn click_widget_wrong(obs: &Observation) -> Option<Action> {
    let tag = widget_tag(obs.instruction.field("target")?)?;
    widget_controls(obs).find(|n| n.tag != tag).map(click)
}

/// jQuery UI's accordion header of a closed section (MiniWoB++'s page; its Submit shows all along).
fn closed_accordion_header(obs: &Observation) -> Option<&DomNode> {
    find(obs, |n| n.tag == "H3" && n.has_class("ui-accordion-header-collapsed"))
}

/// The closed section's header if there is one, else Submit once it shows (on the lab's page it
/// shows only with the section open), else the lab's header.
fn click_collapsible(obs: &Observation) -> Option<Action> {
    closed_accordion_header(obs).or_else(|| button(obs, "Submit")).or_else(|| find(obs, |n| n.has_class("section-head"))).map(click)
}

/// Submits with the section closed where Submit shows all along (MiniWoB++'s page fails that);
/// on the lab's page, where it shows only with the section open, keeps toggling the section and
/// never submits, so the page fails the episode only when its time runs out.
fn click_collapsible_wrong(obs: &Observation) -> Option<Action> {
    if closed_accordion_header(obs).is_some() {
        return button(obs, "Submit").map(click);
    }
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

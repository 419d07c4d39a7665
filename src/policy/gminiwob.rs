//! Policies for generated sites: a scripted oracle (fills every field on the page showing, then
//! moves on or submits), a "wrong" script (fills one field wrongly and submits), and the
//! navigator's uniform random policy over (element, field) pairs.
//!
//! They read only the observation (the profile's fields, ids, classes and values of visible
//! elements) plus the number of pages, which the site's design says.

use crate::env::{Action, DomNode, Observation};
use crate::gminiwob::primitive::{self, InputType, Kind};
use crate::rng::Rng;

use super::Policy;

/// Fills the site as a person who knows it would, one action per step.
pub struct SiteOracle {
    pages: u32,
    /// Fill this field (by key) with a wrong value instead (the wrong script).
    sabotage: Option<String>,
}

impl SiteOracle {
    pub fn new(pages: u32) -> Self {
        SiteOracle { pages: pages.max(1), sabotage: None }
    }

    /// Fills `key` wrongly (or the first field, with `None`) and submits: the page must fail it.
    pub fn wrong(pages: u32, key: Option<&str>) -> Self {
        SiteOracle { pages: pages.max(1), sabotage: Some(key.unwrap_or("").to_string()) }
    }
}

/// The visible actionable elements of the active primitive behind `key` (every occurrence).
fn occurrences<'a>(obs: &'a Observation, key: &str) -> Vec<&'a DomNode> {
    let Some(p) = primitive::by_field(key) else { return Vec::new() };
    let base = format!("actionable_{}", p.name);
    obs.dom
        .nodes
        .iter()
        .filter(|n| n.id == base || n.id.strip_prefix(&base).and_then(|rest| rest.strip_prefix('_')).is_some_and(|k| k.parse::<u32>().is_ok()))
        .collect()
}

/// Whether the occurrence already holds `want` (and was visited). Radio groups show no value in
/// the observation: visited is taken as done.
fn holds(n: &DomNode, kind: Kind, want: &str) -> bool {
    if !n.has_class("visited") {
        return false;
    }
    match kind {
        Kind::Checkbox => n.value.is_checked() == (want == "true"),
        Kind::Radio => true,
        _ => n.value.as_text() == Some(want),
    }
}

impl Policy for SiteOracle {
    fn act(&mut self, obs: &Observation) -> Option<Action> {
        let sabotage =
            self.sabotage.as_deref().map(|k| if k.is_empty() { obs.instruction.fields.first().map(|f| f.key.as_str()).unwrap_or("") } else { k });
        for f in &obs.instruction.fields {
            let Some(p) = primitive::by_field(&f.key) else { continue };
            let wrong = sabotage == Some(f.key.as_str());
            let want = if wrong { wrong_value(&f.key, p.kind, &f.value) } else { f.value.clone() };
            if let Some(n) = occurrences(obs, &f.key).into_iter().find(|n| !holds(n, p.kind, &want)) {
                return Some(Action::SetValue(n.r#ref, want));
            }
        }
        // Every field on this page is done: move on, or submit on the last page.
        let last = obs.page + 1 >= self.pages;
        let goes_on = |n: &&DomNode| {
            if last {
                n.id == format!("actionable_submit_p{}", obs.page)
            } else {
                n.tag == "BUTTON" && n.id.starts_with("actionable_next") && n.id.ends_with(&format!("_p{}", obs.page))
            }
        };
        obs.dom.nodes.iter().find(goes_on).map(|n| Action::Click(n.r#ref))
    }
}

/// A value the field must not take: another option of a choice, the opposite boolean, or the
/// text with something added.
fn wrong_value(key: &str, kind: Kind, right: &str) -> String {
    match kind {
        // A number field takes numbers only.
        Kind::Input(InputType::Number) => right.parse::<i64>().map_or_else(|_| "7".to_string(), |n| (n + 1).to_string()),
        Kind::Checkbox => if right == "true" { "false" } else { "true" }.to_string(),
        Kind::Radio | Kind::Select => crate::gminiwob::profile::options(key)
            .and_then(|opts| opts.iter().find(|o| **o != right))
            .map_or_else(|| format!("{right}x"), |o| o.to_string()),
        _ => format!("{right}x"),
    }
}

/// The navigator's action space, uniformly: an element (a leaf, or a radio group) paired with a
/// field of the profile (set to its value) or with the click action.
pub struct SiteRandom {
    rng: Rng,
}

impl SiteRandom {
    pub fn new(seed: u64) -> Self {
        SiteRandom { rng: Rng::new(seed) }
    }
}

impl Policy for SiteRandom {
    fn act(&mut self, obs: &Observation) -> Option<Action> {
        let targets: Vec<&DomNode> = obs.dom.nodes.iter().filter(|n| n.is_leaf() || n.has_class("radio-group")).collect();
        let n = *self.rng.choose(&targets)?;
        let fields = &obs.instruction.fields;
        let choice = self.rng.below(fields.len() + 1);
        Some(match fields.get(choice) {
            Some(f) => Action::SetValue(n.r#ref, f.value.clone()),
            None => Action::Click(n.r#ref),
        })
    }
}

//! The papers' reward on generated sites: potential-based shaping over the profile fields, a small
//! cost per step, a larger one for actions that change nothing, and the page's own ±1 at the end.
//!
//! Per step (reference §3.5, CoDE App. A.1, AEG §4):
//!
//! r_t = raw_t + (Φ_t − Φ_{t−1}) − [not done]·(0.5·[DOM unchanged] + 0.05),   Φ_0 = 0,
//!
//! where Φ is the share of profile fields that were visited and hold the profile's value, and raw
//! is the page's reward: +1 on a submit with every field right (or no fields), −1 on a submit with
//! any wrong, −1 for a click on an `endOnClick` primitive, and [`RewardConfig::step_limit_reward`]
//! when the step limit ends the episode. `is_task_completed` is raw = 1.

use serde::{Deserialize, Serialize};

use super::site::{Site, SiteField};
use crate::env::DomGraph;

/// Every constant of the reward, with the reference's values (`envdesign.gin`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawRewardConfig")]
pub struct RewardConfig {
    /// Add the potential difference Φ_t − Φ_{t−1} (gin `potential=True`; `exact_wob_reward=False`).
    pub potential: bool,
    /// Cost of every step that does not end the episode (gin `timestep` 0.05).
    pub step_penalty: f64,
    /// Extra cost of a step after which the DOM is unchanged (gin `cyclic` 0.5).
    pub unchanged_penalty: f64,
    /// Most actions in an episode (gin `step_limit` 25).
    pub step_limit: u32,
    /// Raw reward when the step limit ends the episode (gin `step_limit_reward` 0).
    pub step_limit_reward: f64,
}

impl Default for RewardConfig {
    fn default() -> Self {
        RewardConfig { potential: true, step_penalty: 0.05, unchanged_penalty: 0.5, step_limit: 25, step_limit_reward: 0.0 }
    }
}

/// Longest step limit accepted: far past any paper's, short enough that an episode ends.
pub const MAX_STEP_LIMIT: u32 = 1_000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRewardConfig {
    #[serde(default = "yes")]
    potential: bool,
    #[serde(default = "step_penalty")]
    step_penalty: f64,
    #[serde(default = "unchanged_penalty")]
    unchanged_penalty: f64,
    #[serde(default = "step_limit")]
    step_limit: u32,
    #[serde(default)]
    step_limit_reward: f64,
}

fn yes() -> bool {
    true
}
fn step_penalty() -> f64 {
    RewardConfig::default().step_penalty
}
fn unchanged_penalty() -> f64 {
    RewardConfig::default().unchanged_penalty
}
fn step_limit() -> u32 {
    RewardConfig::default().step_limit
}

impl TryFrom<RawRewardConfig> for RewardConfig {
    type Error = String;
    fn try_from(r: RawRewardConfig) -> Result<Self, String> {
        let cfg = RewardConfig {
            potential: r.potential,
            step_penalty: r.step_penalty,
            unchanged_penalty: r.unchanged_penalty,
            step_limit: r.step_limit,
            step_limit_reward: r.step_limit_reward,
        };
        cfg.validate()?;
        Ok(cfg)
    }
}

impl RewardConfig {
    pub fn validate(&self) -> Result<(), String> {
        for (name, v) in
            [("step_penalty", self.step_penalty), ("unchanged_penalty", self.unchanged_penalty), ("step_limit_reward", self.step_limit_reward)]
        {
            if !v.is_finite() || v.abs() > 10.0 {
                return Err(format!("reward setting {name} must be a number between -10 and 10, not {v}"));
            }
        }
        if !(1..=MAX_STEP_LIMIT).contains(&self.step_limit) {
            return Err(format!("reward setting step_limit must be 1 to {MAX_STEP_LIMIT}, not {}", self.step_limit));
        }
        Ok(())
    }
}

/// What the page shows of one occurrence of a field right now.
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FieldState {
    /// The agent or person interacted with it (the page's `visited` class).
    pub visited: bool,
    /// Its value as the page's checker reads it: the text of an input or select, `true`/`false`
    /// for a checkbox, the checked radio's value (empty when none).
    pub value: String,
}

/// One field's verdict: right when at least one occurrence was visited and holds the value. The
/// page's submit check (`tasks/gminiwob.html`) applies the same rule.
pub fn field_correct(field: &SiteField, mut read: impl FnMut(&str) -> Option<FieldState>) -> bool {
    field.ids.iter().any(|id| read(id).is_some_and(|s| s.visited && s.value == field.value))
}

/// Φ: the share of the site's fields that are right (0 for a site without fields).
pub fn potential(site: &Site, mut read: impl FnMut(&str) -> Option<FieldState>) -> f64 {
    if site.fields.is_empty() {
        return 0.0;
    }
    let right = site.fields.iter().filter(|f| field_correct(f, &mut read)).count();
    right as f64 / site.fields.len() as f64
}

/// Whether an action changed what the agent sees. Positions, focus and tamper marks are left
/// out: a click that only scrolls, focuses or marks an element changed nothing on the page.
pub fn dom_changed(before: &DomGraph, after: &DomGraph, page_before: u32, page_after: u32) -> bool {
    if page_before != page_after || before.nodes.len() != after.nodes.len() {
        return true;
    }
    before.nodes.iter().zip(&after.nodes).any(|(a, b)| {
        a.tag != b.tag
            || a.text != b.text
            || a.value != b.value
            || a.id != b.id
            || a.classes != b.classes
            || a.options != b.options
            || a.children != b.children
    })
}

/// Turns the page's raw rewards into the shaped ones, step by step.
#[derive(Clone, Debug)]
pub struct Shaper {
    cfg: RewardConfig,
    last_potential: f64,
}

impl Shaper {
    pub fn new(cfg: RewardConfig) -> Self {
        Shaper { cfg, last_potential: 0.0 }
    }

    pub fn config(&self) -> &RewardConfig {
        &self.cfg
    }

    /// A new episode: Φ_0 = 0.
    pub fn begin(&mut self) {
        self.last_potential = 0.0;
    }

    /// The shaped reward of a step whose page reward was `raw`, after which the potential is
    /// `potential` and the episode is `done` or not.
    pub fn step(&mut self, raw: f64, done: bool, potential: f64, dom_changed: bool) -> f64 {
        let mut r = raw;
        if self.cfg.potential {
            r += potential - self.last_potential;
        }
        self.last_potential = potential;
        if !done {
            r -= self.cfg.step_penalty;
            if !dom_changed {
                r -= self.cfg.unchanged_penalty;
            }
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::{DomNode, NodeValue};
    use crate::gminiwob::site::FieldKind;

    fn site(fields: &[(&str, &str, &[&str])]) -> Site {
        Site {
            pages: 1,
            profile: Vec::new(),
            fields: fields
                .iter()
                .map(|(k, v, ids)| SiteField {
                    key: k.to_string(),
                    value: v.to_string(),
                    kind: FieldKind::Text,
                    ids: ids.iter().map(|s| s.to_string()).collect(),
                })
                .collect(),
            html: String::new(),
            tree: Default::default(),
        }
    }

    #[test]
    fn potential_counts_visited_right_fields() {
        let s = site(&[("username", "ann", &["u"]), ("password", "pw", &["p", "p2"])]);
        let state = |vis: bool, v: &str| Some(FieldState { visited: vis, value: v.into() });
        assert_eq!(potential(&s, |_| None), 0.0);
        assert_eq!(potential(&s, |id| if id == "u" { state(true, "ann") } else { None }), 0.5);
        // Right value but never visited does not count; neither does a visited wrong value.
        assert_eq!(potential(&s, |id| if id == "u" { state(false, "ann") } else { state(true, "x") }), 0.0);
        // One right occurrence of a repeated field is enough.
        assert_eq!(
            potential(&s, |id| match id {
                "u" => state(true, "ann"),
                "p" => state(true, "wrong"),
                _ => state(true, "pw"),
            }),
            1.0
        );
        assert_eq!(potential(&site(&[]), |_| None), 0.0);
    }

    #[test]
    fn shaping_follows_the_papers_formula() {
        let mut sh = Shaper::new(RewardConfig::default());
        sh.begin();
        // A correct field out of four: +0.25 − 0.05.
        assert!((sh.step(0.0, false, 0.25, true) - 0.20).abs() < 1e-12);
        // An action that changes nothing: −0.05 − 0.5.
        assert!((sh.step(0.0, false, 0.25, false) + 0.55).abs() < 1e-12);
        // Overwriting a right field with a wrong one gives the potential back.
        assert!((sh.step(0.0, false, 0.0, true) + 0.30).abs() < 1e-12);
        // The final submit: no step costs once done.
        assert!((sh.step(1.0, true, 0.0, true) - 1.0).abs() < 1e-12);
        sh.begin();
        assert!((sh.step(-1.0, true, 0.0, false) + 1.0).abs() < 1e-12, "an endOnClick click: raw −1 only");
        let mut plain = Shaper::new(RewardConfig { potential: false, ..RewardConfig::default() });
        plain.begin();
        assert!((plain.step(0.0, false, 1.0, true) + 0.05).abs() < 1e-12);
    }

    #[test]
    fn configs_are_checked_when_read() {
        let cfg: RewardConfig = serde_json::from_str("{}").unwrap();
        assert_eq!(cfg, RewardConfig::default());
        let cfg: RewardConfig = serde_json::from_str(r#"{"step_limit": 40, "potential": false}"#).unwrap();
        assert_eq!((cfg.step_limit, cfg.potential, cfg.step_penalty), (40, false, 0.05));
        for bad in [r#"{"step_limit": 0}"#, r#"{"step_limit": 5000}"#, r#"{"step_penalty": 1e9}"#, r#"{"x": 1}"#] {
            assert!(serde_json::from_str::<RewardConfig>(bad).is_err(), "{bad} should be refused");
        }
    }

    #[test]
    fn dom_changes_ignore_position_focus_and_tamper() {
        let node = |text: &str| DomNode { text: text.into(), ..DomNode::default() };
        let a = DomGraph { nodes: vec![node("x")], truncated: 0 };
        let mut b = a.clone();
        b.nodes[0].rect.top = 40.0;
        b.nodes[0].focused = true;
        b.nodes[0].tampered = true;
        assert!(!dom_changed(&a, &b, 0, 0));
        assert!(dom_changed(&a, &b, 0, 1), "another page is a change");
        b.nodes[0].classes.push("visited".into());
        assert!(dom_changed(&a, &b, 0, 0));
        let mut c = a.clone();
        c.nodes[0].value = NodeValue::Text("typed".into());
        assert!(dom_changed(&a, &c, 0, 0));
    }
}

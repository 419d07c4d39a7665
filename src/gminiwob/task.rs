//! A generated site as a task: what `env::TaskSpec::Generated` carries for gMiniWoB (a design, where
//! its profile's values come from, the reward's constants) and the page every such site is shown
//! on. The serialised form is the task's own: `{"source": "generated", "name": …, "design": …,
//! "values": …, "reward": …}`, the last two optional.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use super::{Design, RewardConfig, Values};
use crate::env::task::{embedded, inline_core};
use crate::env::{EnvError, TaskSpec};

/// What a generated site is made from. Reading it validates the design ([`Design`]'s serde) and
/// the reward's constants, so a link or file with a bad one does not load.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GeneratedSite {
    pub design: Design,
    /// Where the profile's values come from.
    #[serde(default)]
    pub values: Values,
    /// The reward's constants (the papers' by default).
    #[serde(default)]
    pub reward: RewardConfig,
}

impl From<Design> for GeneratedSite {
    /// A design with the default values and reward.
    fn from(design: Design) -> Self {
        GeneratedSite { design, values: Values::default(), reward: RewardConfig::default() }
    }
}

impl TaskSpec<GeneratedSite> {
    /// A generated site from `design`, with the default values and reward, under a checked label.
    pub fn generated(name: &str, design: Design) -> Result<Self, EnvError> {
        TaskSpec::generated_from(name, GeneratedSite::from(design))
    }

    /// The design of a generated site.
    pub fn design(&self) -> Option<&Design> {
        self.site().map(|s| &s.design)
    }
}

/// The page every generated site is shown on: `tasks/gminiwob.html` with the core inlined, so it
/// needs no server and runs same-origin through `srcdoc`.
pub fn generated_page() -> &'static str {
    static PAGE: OnceLock<String> = OnceLock::new();
    PAGE.get_or_init(|| inline_core(embedded("gminiwob.html").expect("tasks/gminiwob.html")))
}

#[cfg(test)]
mod tests {
    use super::*;
    type TaskSpec = crate::env::TaskSpec<GeneratedSite>;

    #[test]
    fn generated_specs_carry_a_checked_design() {
        let json = r#"{"source":"generated","name":"login-0","design":{"number_of_pages":1,"action":[39,34,38],"action_page":[0,0,0]}}"#;
        let spec: TaskSpec = serde_json::from_str(json).unwrap();
        assert_eq!(spec.name(), "login-0");
        assert_eq!(spec.design().unwrap().placed().len(), 3);
        assert!(spec.page_url().is_none() && spec.info().is_none());
        let TaskSpec::Generated { site, .. } = &spec else { panic!() };
        assert_eq!((site.values, site.reward), (Values::default(), RewardConfig::default()));
        // A design that does not validate, or HTML where a design belongs, does not load.
        assert!(serde_json::from_str::<TaskSpec>(&json.replace("39,", "99,")).is_err());
        assert!(serde_json::from_str::<TaskSpec>(r#"{"source":"generated","name":"x","design":"<script>"}"#).is_err());
        assert!(serde_json::from_str::<TaskSpec>(r#"{"source":"generated","name":"x"}"#).is_err(), "no design");
        assert!(TaskSpec::generated("<img onerror>", Design::from_entries(None, &[]).unwrap()).is_err());
        assert!(TaskSpec::generated(&"x".repeat(61), Design::from_entries(None, &[]).unwrap()).is_err());
        let site = TaskSpec::generated("shopping-3", super::super::test_sites::test_site("shopping", 3).unwrap()).unwrap();
        assert_eq!(site.check_untrusted(), Ok(()));
        assert!(generated_page().contains("Math.seedrandom = function") && generated_page().contains("GMINIWOB_SITE"));
    }

    #[test]
    fn the_serialised_form_is_the_tasks_own() {
        let spec = TaskSpec::generated("login-0", Design::from_entries(Some(1), &[]).unwrap()).unwrap();
        let json = serde_json::to_value(&spec).unwrap();
        assert_eq!(json["source"], "generated");
        assert_eq!(json["name"], "login-0");
        assert!(json.get("design").is_some() && json.get("values").is_some() && json.get("reward").is_some());
        assert_eq!(serde_json::from_value::<TaskSpec>(json).unwrap(), spec);
    }
}

//! Which page an episode runs on: the lab's own tasks, a same-origin folder of MiniWoB-style
//! pages, or a page given as HTML.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use super::error::EnvError;
use crate::gminiwob::{Design, RewardConfig, Values};

/// Difficulty classes as DOM-Q-Net's appendix 6.4 defines them by training budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Difficulty {
    Easy,
    Medium,
    Hard,
}

/// One entry of `tasks/index.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskInfo {
    pub name: String,
    pub difficulty: Difficulty,
    /// True when DOM-Q-Net's appendix does not classify the task and the class is our estimate.
    #[serde(default)]
    pub difficulty_estimated: bool,
    pub time_limit_s: u32,
    /// Keys of the structured fields the task exposes.
    pub fields: Vec<String>,
    pub summary: String,
    /// Data modes the task distinguishes (e.g. `["train", "test"]`); empty when it has one.
    #[serde(default)]
    pub modes: Vec<String>,
    /// Task-area size in CSS pixels when it is not MiniWoB's 160x210.
    #[serde(default)]
    pub size: Option<[u32; 2]>,
}

#[derive(Deserialize)]
struct Index {
    tasks: Vec<TaskInfo>,
}

/// Files under `tasks/`, embedded at build time: (path relative to `tasks/`, contents).
pub fn embedded_files() -> &'static [(&'static str, &'static str)] {
    mod generated {
        include!(concat!(env!("OUT_DIR"), "/task_files.rs"));
    }
    generated::FILES
}

pub(super) fn embedded(path: &str) -> Option<&'static str> {
    embedded_files().iter().find(|(p, _)| *p == path).map(|(_, c)| *c)
}

/// The lab's own tasks, in the order of `tasks/index.json`.
pub fn builtin_tasks() -> &'static [TaskInfo] {
    static TASKS: OnceLock<Vec<TaskInfo>> = OnceLock::new();
    TASKS.get_or_init(|| {
        let index: Index = serde_json::from_str(embedded("index.json").expect("tasks/index.json"))
            .expect("tasks/index.json is valid");
        index.tasks
    })
}

pub fn builtin_task(name: &str) -> Option<&'static TaskInfo> {
    builtin_tasks().iter().find(|t| t.name == name)
}

/// Where the page of a task comes from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "snake_case")]
pub enum TaskSpec {
    /// `tasks/<name>.html`, served beside the app.
    Builtin { name: String },
    /// `<base_url>/<name>.html` on the app's origin, e.g. a MiniWoB++ `html/miniwob/` folder.
    External { base_url: String, name: String },
    /// A page given as HTML, rendered through `srcdoc` (tests, tools). Never accepted from links
    /// or files: it would run its scripts in the lab's origin.
    Inline { name: String, html: String },
    /// A gMiniWoB site generated from a design (data only: the lab renders it on its own
    /// `tasks/gminiwob.html` page). `name` is a label for people (e.g. `shopping-3`).
    Generated {
        name: String,
        design: Design,
        /// Where the profile's values come from.
        #[serde(default)]
        values: Values,
        /// The reward's constants (the papers' by default).
        #[serde(default)]
        reward: RewardConfig,
    },
}

/// Longest label of a generated site.
pub const MAX_SITE_NAME: usize = 60;

/// The page every generated site is shown on: `tasks/gminiwob.html` with the core inlined, so it
/// needs no server and runs same-origin through `srcdoc`.
pub fn generated_page() -> &'static str {
    static PAGE: OnceLock<String> = OnceLock::new();
    PAGE.get_or_init(|| inline_core(embedded("gminiwob.html").expect("tasks/gminiwob.html")))
}

impl TaskSpec {
    /// One of the lab's own tasks; an unknown name is an error.
    pub fn builtin(name: &str) -> Result<Self, EnvError> {
        builtin_task(name)
            .map(|t| TaskSpec::Builtin { name: t.name.clone() })
            .ok_or_else(|| EnvError::UnknownTask(name.to_string()))
    }

    /// A page in a user-given folder. The name must be a plain file stem (no paths).
    pub fn external(base_url: &str, name: &str) -> Result<Self, EnvError> {
        let plain = !name.is_empty()
            && !name.contains("..")
            && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if !plain {
            return Err(EnvError::UnknownTask(name.to_string()));
        }
        Ok(TaskSpec::External { base_url: base_url.trim().to_string(), name: name.to_string() })
    }

    /// One of the lab's own tasks as a self-contained page (core script and styles inlined).
    pub fn builtin_inline(name: &str) -> Result<Self, EnvError> {
        let html = embedded(&format!("{name}.html")).ok_or_else(|| EnvError::UnknownTask(name.to_string()))?;
        Ok(TaskSpec::Inline { name: name.to_string(), html: inline_core(html) })
    }

    /// A generated site from `design`, with the default values and reward.
    pub fn generated(name: &str, design: Design) -> Result<Self, EnvError> {
        let spec = TaskSpec::Generated {
            name: name.to_string(),
            design,
            values: Values::default(),
            reward: RewardConfig::default(),
        };
        spec.check_generated_name()?;
        Ok(spec)
    }

    /// For generated sites: the label must be short plain text (it is shown and logged).
    pub fn check_generated_name(&self) -> Result<(), EnvError> {
        if let TaskSpec::Generated { name, .. } = self {
            let plain = !name.trim().is_empty()
                && name.chars().count() <= MAX_SITE_NAME
                && name.chars().all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | ' ' | '×'));
            if !plain {
                let shown: String = name.chars().take(MAX_SITE_NAME).collect();
                return Err(EnvError::UnknownTask(format!(
                    "{shown} (a generated site's name is 1 to {MAX_SITE_NAME} letters, digits, spaces, '-', '_' or '.')"
                )));
            }
        }
        Ok(())
    }

    pub fn name(&self) -> &str {
        match self {
            TaskSpec::Builtin { name }
            | TaskSpec::External { name, .. }
            | TaskSpec::Inline { name, .. }
            | TaskSpec::Generated { name, .. } => name,
        }
    }

    /// The design of a generated site.
    pub fn design(&self) -> Option<&Design> {
        match self {
            TaskSpec::Generated { design, .. } => Some(design),
            _ => None,
        }
    }

    /// The page URL, relative to the app for builtin tasks; `None` for inline pages.
    pub fn page_url(&self) -> Option<String> {
        match self {
            TaskSpec::Builtin { name } => Some(format!("tasks/{name}.html")),
            TaskSpec::External { base_url, name } => {
                let sep = if base_url.is_empty() || base_url.ends_with('/') { "" } else { "/" };
                Some(format!("{base_url}{sep}{name}.html"))
            }
            TaskSpec::Inline { .. } | TaskSpec::Generated { .. } => None,
        }
    }

    pub fn info(&self) -> Option<&'static TaskInfo> {
        match self {
            TaskSpec::Builtin { name } => builtin_task(name),
            TaskSpec::Inline { name, .. } => builtin_task(name),
            TaskSpec::External { .. } | TaskSpec::Generated { .. } => None,
        }
    }
}

/// Replaces a task page's references to `core/core.js` and `core/core.css` with their contents,
/// so the page runs without a server (e.g. through `srcdoc`).
pub fn inline_core(html: &str) -> String {
    let js = embedded("core/core.js").expect("tasks/core/core.js");
    let css = embedded("core/core.css").expect("tasks/core/core.css");
    html.replace(
        r#"<link rel="stylesheet" href="core/core.css">"#,
        &format!("<style>\n{css}\n</style>"),
    )
    .replace(r#"<script src="core/core.js"></script>"#, &format!("<script>\n{js}\n</script>"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_lists_pages_that_exist() {
        assert!(builtin_tasks().len() >= 5);
        for t in builtin_tasks() {
            let page = embedded(&format!("{}.html", t.name));
            assert!(page.is_some(), "tasks/{}.html is missing", t.name);
            assert!(page.unwrap().contains("function genProblem"), "{} has no generator", t.name);
            assert!(t.time_limit_s > 0);
        }
    }

    #[test]
    fn specs_resolve_urls_and_reject_bad_names() {
        assert_eq!(TaskSpec::builtin("click-button").unwrap().page_url().unwrap(), "tasks/click-button.html");
        assert_eq!(TaskSpec::builtin("nope"), Err(EnvError::UnknownTask("nope".into())));
        let ext = TaskSpec::external("/miniwob/html/miniwob", "click-tab-2").unwrap();
        assert_eq!(ext.page_url().unwrap(), "/miniwob/html/miniwob/click-tab-2.html");
        assert!(TaskSpec::external("/m/", "../secret").is_err());
        assert!(TaskSpec::external("/m/", "a/b").is_err());
        assert_eq!(TaskSpec::external("/m/", "flight.Alaska").unwrap().page_url().unwrap(), "/m/flight.Alaska.html");
    }

    #[test]
    fn generated_specs_carry_a_checked_design() {
        let json = r#"{"source":"generated","name":"login-0","design":{"number_of_pages":1,"action":[39,34,38],"action_page":[0,0,0]}}"#;
        let spec: TaskSpec = serde_json::from_str(json).unwrap();
        assert_eq!(spec.name(), "login-0");
        assert_eq!(spec.design().unwrap().placed().len(), 3);
        assert!(spec.page_url().is_none() && spec.info().is_none());
        let TaskSpec::Generated { values, reward, .. } = &spec else { panic!() };
        assert_eq!((*values, *reward), (Values::default(), RewardConfig::default()));
        // A design that does not validate, or HTML where a design belongs, does not load.
        assert!(serde_json::from_str::<TaskSpec>(&json.replace("39,", "99,")).is_err());
        assert!(serde_json::from_str::<TaskSpec>(r#"{"source":"generated","name":"x","design":"<script>"}"#).is_err());
        assert!(TaskSpec::generated("<img onerror>", Design::from_entries(None, &[]).unwrap()).is_err());
        assert!(TaskSpec::generated(&"x".repeat(61), Design::from_entries(None, &[]).unwrap()).is_err());
        assert!(generated_page().contains("Math.seedrandom = function") && generated_page().contains("GMINIWOB_SITE"));
    }

    #[test]
    fn inlined_pages_carry_the_core() {
        let TaskSpec::Inline { html, .. } = TaskSpec::builtin_inline("click-test").unwrap() else { panic!() };
        assert!(!html.contains("core/core.js"));
        assert!(html.contains("Math.seedrandom = function"));
        assert!(html.contains("#sync-task-cover"));
    }
}

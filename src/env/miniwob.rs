//! The real MiniWoB++ benchmark: its 130 task pages, from the `miniwob` package (1.1.0, MIT) on
//! PyPI. `scripts/setup.sh` fetches the package and unpacks its `html/` folder into the lab's
//! cache; the build serves it at [`MINIWOB_MOUNT`] beside the app, so a real task is the page
//! `miniwob/html/miniwob/<name>.html` on the app's own origin. Nothing of the package is in this
//! repository: `tasks/miniwob.json` lists the tasks (facts: names, time limits, what acting on
//! them takes), and a task is named in data as
//! `{"source":"external","base_url":"miniwob/html/miniwob/","name":"click-tab"}` (or the
//! shorthand `miniwob/click-tab` where the lab takes a task name).

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use super::error::EnvError;
use super::task::{Difficulty, TaskSpec, embedded};

/// The version of the `miniwob` package the lab serves (`scripts/setup.sh` pins it).
pub const MINIWOB_VERSION: &str = "1.1.0";
/// Where the package's `html/` folder is served, relative to the app's page.
pub const MINIWOB_MOUNT: &str = "miniwob/html/";
/// The folder of the 130 task pages, relative to the app's page.
pub const MINIWOB_BASE: &str = "miniwob/html/miniwob/";
/// The prefix of the shorthand task name (`miniwob/click-tab`).
pub const MINIWOB_PREFIX: &str = "miniwob/";

/// What acting on a page takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Interaction {
    /// Clicking elements and typing text from the instruction (the lab's default actions).
    ClickType,
    /// A click at a point of a canvas or an SVG drawing.
    Coordinates,
    /// Moving the pointer over something (menus that open on hover).
    Hover,
    /// Pressing, moving and releasing the pointer (drag, sliders, text selection).
    Drag,
    /// Scrolling a box.
    Scroll,
    /// Typing text that is not in the instruction (arithmetic, copying from the page).
    FreeText,
    /// Acting at the right moment (moving targets, memory).
    Timing,
}

/// One real MiniWoB++ task (an entry of `tasks/miniwob.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MiniwobTask {
    pub name: String,
    pub interaction: Interaction,
    /// The page's own `core.EPISODE_MAX_TIME`, in seconds.
    pub time_limit_s: u32,
    /// The MiniWoB++ documentation's group ("Original Tasks", "No-delay Tasks", …).
    pub group: String,
    /// In WGE's 40-task click-and-type subset.
    #[serde(default)]
    pub wge_40: bool,
    /// DOM-Q-Net appendix 6.4's class, where it (or our estimate for the lab's task of the same
    /// name) gives one.
    #[serde(default)]
    pub difficulty: Option<Difficulty>,
    #[serde(default)]
    pub difficulty_estimated: bool,
    /// The page keeps state from one episode to the next outside what `genProblem` rebuilds (a
    /// global list shuffled in place, a widget left open), so the same seed gives another page
    /// after other episodes: the lab loads it afresh before every episode. Measured by
    /// `scripts/bench-miniwob.sh` (every page, seed 1 fresh and after other episodes).
    #[serde(default)]
    pub leaks: bool,
}

#[derive(Deserialize)]
struct Index {
    version: String,
    tasks: Vec<MiniwobTask>,
}

/// The 130 real MiniWoB++ tasks, in name order.
pub fn miniwob_tasks() -> &'static [MiniwobTask] {
    static TASKS: OnceLock<Vec<MiniwobTask>> = OnceLock::new();
    TASKS.get_or_init(|| {
        let index: Index = serde_json::from_str(embedded("miniwob.json").expect("tasks/miniwob.json")).expect("tasks/miniwob.json is valid");
        assert_eq!(index.version, MINIWOB_VERSION, "tasks/miniwob.json lists another MiniWoB++ version");
        index.tasks
    })
}

pub fn miniwob_task(name: &str) -> Option<&'static MiniwobTask> {
    miniwob_tasks().iter().find(|t| t.name == name)
}

impl<S> TaskSpec<S> {
    /// A real MiniWoB++ task, by its page's name; an unknown name is an error.
    pub fn miniwob(name: &str) -> Result<Self, EnvError> {
        miniwob_task(name)
            .map(|t| TaskSpec::External { base_url: MINIWOB_BASE.to_string(), name: t.name.clone() })
            .ok_or_else(|| EnvError::UnknownTask(format!("{MINIWOB_PREFIX}{name}")))
    }

    /// A task name as the lab's pickers and files give it: one of the lab's tasks
    /// (`click-tab`), or a real MiniWoB++ task (`miniwob/click-tab`).
    pub fn from_name(name: &str) -> Result<Self, EnvError> {
        match name.strip_prefix(MINIWOB_PREFIX) {
            Some(real) => TaskSpec::miniwob(real),
            None => TaskSpec::builtin(name),
        }
    }

    /// The real MiniWoB++ task this spec names, if it names one.
    pub fn miniwob_task(&self) -> Option<&'static MiniwobTask> {
        match self {
            TaskSpec::External { base_url, name } if is_miniwob_base(base_url) => miniwob_task(name),
            _ => None,
        }
    }

    pub fn is_miniwob(&self) -> bool {
        self.miniwob_task().is_some()
    }

    /// A name that tells the task's source apart: `click-tab` (the lab's), `miniwob/click-tab`
    /// (the real page), or the page's name for other sources.
    pub fn label(&self) -> String {
        if self.is_miniwob() { format!("{MINIWOB_PREFIX}{}", self.name()) } else { self.name().to_string() }
    }

    /// The task's own time limit in seconds, where the lab knows it.
    pub fn time_limit_s(&self) -> Option<u32> {
        self.info().map(|t| t.time_limit_s).or_else(|| self.miniwob_task().map(|t| t.time_limit_s))
    }
}

/// Whether `base_url` is the folder of the real MiniWoB++ pages (relative to the app, or the
/// same path from the origin's root).
pub fn is_miniwob_base(base_url: &str) -> bool {
    let trimmed = base_url.trim().trim_start_matches('/');
    trimmed == MINIWOB_BASE || trimmed == MINIWOB_BASE.trim_end_matches('/')
}

#[cfg(test)]
mod tests {
    use super::*;
    type TaskSpec = super::TaskSpec<serde_json::Map<String, serde_json::Value>>;
    use crate::env::builtin_task;

    #[test]
    fn the_registry_lists_the_packages_130_pages() {
        let tasks = miniwob_tasks();
        assert_eq!(tasks.len(), 130);
        assert!(tasks.windows(2).all(|w| w[0].name < w[1].name), "sorted and unique");
        let click_type = tasks.iter().filter(|t| t.interaction == Interaction::ClickType).count();
        assert_eq!(click_type, 79);
        assert_eq!(tasks.iter().filter(|t| t.wge_40).count(), 40);
        // The 35 real pages that share a name with one of the lab's tasks carry its class.
        let shared: Vec<_> = tasks.iter().filter(|t| builtin_task(&t.name).is_some()).collect();
        assert_eq!(shared.len(), 35);
        assert!(shared.iter().all(|t| t.difficulty == Some(builtin_task(&t.name).unwrap().difficulty)));
        assert_eq!(miniwob_task("book-flight").unwrap().time_limit_s, 30);
        assert_eq!(miniwob_task("use-colorwheel").unwrap().interaction, Interaction::Coordinates);
    }

    #[test]
    fn real_tasks_are_external_pages_under_the_mount() {
        let spec = TaskSpec::miniwob("click-tab-2").unwrap();
        assert_eq!(spec.page_url().unwrap(), "miniwob/html/miniwob/click-tab-2.html");
        assert!(spec.is_miniwob());
        assert_eq!(spec.label(), "miniwob/click-tab-2");
        assert_eq!(spec.time_limit_s(), Some(10));
        assert_eq!(TaskSpec::from_name("miniwob/click-tab-2").unwrap(), spec);
        assert_eq!(TaskSpec::from_name("click-tab-2").unwrap(), TaskSpec::builtin("click-tab-2").unwrap());
        assert!(TaskSpec::miniwob("no-such-task").is_err());
        assert!(TaskSpec::from_name("miniwob/../index").is_err());
        // The same folder from the origin's root is the same source; any other folder is not.
        assert!(TaskSpec::External { base_url: "/miniwob/html/miniwob".into(), name: "click-test".into() }.is_miniwob());
        assert!(!TaskSpec::External { base_url: "/other/".into(), name: "click-test".into() }.is_miniwob());
        assert!(!TaskSpec::builtin("click-test").unwrap().is_miniwob());
    }
}

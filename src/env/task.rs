//! Which page an episode runs on: the lab's own tasks, a same-origin folder of MiniWoB-style
//! pages, a page given as HTML, or a site a world generates from data. The last is generic
//! (`S`, the world's description of a site): this module carries it and checks its label, and
//! knows no world; `crate::task` names the lab's (gMiniWoB's generated sites).

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use super::error::EnvError;

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

pub(crate) fn embedded(path: &str) -> Option<&'static str> {
    embedded_files().iter().find(|(p, _)| *p == path).map(|(_, c)| *c)
}

/// The lab's own tasks, in the order of `tasks/index.json`.
pub fn builtin_tasks() -> &'static [TaskInfo] {
    static TASKS: OnceLock<Vec<TaskInfo>> = OnceLock::new();
    TASKS.get_or_init(|| {
        let index: Index = serde_json::from_str(embedded("index.json").expect("tasks/index.json")).expect("tasks/index.json is valid");
        index.tasks
    })
}

pub fn builtin_task(name: &str) -> Option<&'static TaskInfo> {
    builtin_tasks().iter().find(|t| t.name == name)
}

/// Where the page of a task comes from. `S` is what a generated site is made from (for the lab,
/// `gminiwob::GeneratedSite`: a design, its values and reward; see `crate::task::TaskSpec`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "snake_case")]
pub enum TaskSpec<S> {
    /// `tasks/<name>.html`, served beside the app.
    Builtin { name: String },
    /// `<base_url>/<name>.html` on the app's origin, e.g. a MiniWoB++ `html/miniwob/` folder.
    External { base_url: String, name: String },
    /// A page given as HTML, rendered through `srcdoc` (tests, tools). Never accepted from links
    /// or files: it would run its scripts in the lab's origin.
    Inline { name: String, html: String },
    /// A site generated from data (never HTML: the world that reads `site` renders it; its
    /// fields sit beside `name` in the serialised form). `name` is a label for people (e.g.
    /// `shopping-3`).
    Generated {
        name: String,
        #[serde(flatten)]
        site: S,
    },
}

/// Longest label of a generated site.
pub const MAX_SITE_NAME: usize = 60;

/// Folders on the app's origin, relative to the app's page, whose pages a task from a link, a
/// file, a stored run or the learner worker may name: MiniWoB++'s `html/` folder served beside
/// the app (a task page is `miniwob/html/miniwob/<task>.html`).
pub const ALLOWED_FOLDERS: &[&str] = &[super::miniwob::MINIWOB_MOUNT];
/// Longest folder path and page name read.
pub const MAX_FOLDER_CHARS: usize = 200;
pub const MAX_PAGE_NAME: usize = 100;

/// A folder as the lab reads it: a relative path on the app's origin made of plain segments
/// (letters, digits, `-`, `_`, `.`, `~`), no `.` or `..` segment, no empty one (`//`), no scheme,
/// backslash, percent-escape, query or fragment. A leading `/` is read as relative to the app
/// (`/miniwob/html/` is `miniwob/html/`). Returns the normalised spelling (no leading slash, one
/// trailing slash), or what is wrong, as a clause after "its folder ... ".
pub fn plain_folder(base_url: &str) -> Result<String, String> {
    if base_url.is_empty() {
        return Err("is empty".into());
    }
    if base_url.chars().count() > MAX_FOLDER_CHARS {
        return Err(format!("is longer than {MAX_FOLDER_CHARS} characters"));
    }
    if base_url.contains(':') || base_url.starts_with("//") {
        return Err("points to another site (a folder is a path on this one)".into());
    }
    if let Some(c) = base_url.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '~' | '/'))) {
        let what = match c {
            '?' | '#' => "a query or fragment".to_string(),
            '%' => "a percent-escape".to_string(),
            '\\' => "a backslash".to_string(),
            c if c.is_whitespace() || c.is_control() => "a space or control character".to_string(),
            c => format!("the character '{c}'"),
        };
        return Err(format!("has {what} (a folder is a plain path: letters, digits, '-', '_', '.', '~' and '/')"));
    }
    let path = base_url.strip_prefix('/').unwrap_or(base_url);
    let path = path.strip_suffix('/').unwrap_or(path);
    let mut segments = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" => return Err("has an empty segment ('//')".into()),
            "." | ".." => return Err(format!("has a '{seg}' segment")),
            s => segments.push(s),
        }
    }
    Ok(format!("{}/", segments.join("/")))
}

/// A page name is a plain file stem: 1 to [`MAX_PAGE_NAME`] letters, digits, `-`, `_` or `.`,
/// starting with a letter or digit, without `..`.
fn check_page_name(name: &str) -> Result<(), EnvError> {
    let plain = name.len() <= MAX_PAGE_NAME
        && name.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && !name.contains("..")
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if plain {
        return Ok(());
    }
    Err(EnvError::RefusedTask(format!("its page name \"{}\" is not a plain file name (letters, digits, '-', '_' and '.')", shown(name))))
}

/// Untrusted text as a message quotes it: at most 80 characters, control characters as '?'.
pub fn shown(s: &str) -> String {
    let mut out: String = s.chars().take(80).map(|c| if c.is_control() { '?' } else { c }).collect();
    if s.chars().count() > 80 {
        out.push('…');
    }
    out
}

/// What is wrong with `name` as a generated site's name (1 to [`MAX_SITE_NAME`] letters, digits,
/// spaces, `-`, `_`, `.` or `×`), in words for the person who typed it; `None` when it is fine.
pub fn site_name_problem(name: &str) -> Option<String> {
    if name.trim().is_empty() {
        Some("Give the site a name.".into())
    } else if name.chars().count() > MAX_SITE_NAME {
        Some(format!("A site's name is at most {MAX_SITE_NAME} characters."))
    } else if !name.chars().all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | ' ' | '×')) {
        Some("A site's name holds only letters, digits, spaces, '-', '_' and '.'.".into())
    } else {
        None
    }
}

impl<S> TaskSpec<S> {
    /// One of the lab's own tasks; an unknown name is an error.
    pub fn builtin(name: &str) -> Result<Self, EnvError> {
        builtin_task(name).map(|t| TaskSpec::Builtin { name: t.name.clone() }).ok_or_else(|| EnvError::UnknownTask(name.to_string()))
    }

    /// A page in a folder a person gave (e.g. typed into the Watch view): the folder must be a
    /// plain path on the app's origin ([`plain_folder`], kept in its normalised spelling) and the
    /// name a plain file stem. Whether the folder may be opened from a link, a file or a stored
    /// run is [`Self::check_untrusted`]'s question, not this one's.
    pub fn external(base_url: &str, name: &str) -> Result<Self, EnvError> {
        check_page_name(name)?;
        let folder = plain_folder(base_url.trim()).map_err(|why| EnvError::RefusedTask(format!("its folder \"{}\" {why}", shown(base_url))))?;
        Ok(TaskSpec::External { base_url: folder, name: name.to_string() })
    }

    /// One of the lab's own tasks as a self-contained page (core script and styles inlined).
    pub fn builtin_inline(name: &str) -> Result<Self, EnvError> {
        let html = embedded(&format!("{name}.html")).ok_or_else(|| EnvError::UnknownTask(name.to_string()))?;
        Ok(TaskSpec::Inline { name: name.to_string(), html: inline_core(html) })
    }

    /// A generated site made from `site`, under a checked label.
    pub fn generated_from(name: &str, site: S) -> Result<Self, EnvError> {
        let spec = TaskSpec::Generated { name: name.to_string(), site };
        spec.check_generated_name()?;
        Ok(spec)
    }

    /// For generated sites: the label must be short plain text (it is shown and logged).
    pub fn check_generated_name(&self) -> Result<(), EnvError> {
        if let TaskSpec::Generated { name, .. } = self
            && site_name_problem(name).is_some()
        {
            let shown: String = name.chars().take(MAX_SITE_NAME).collect();
            return Err(EnvError::UnknownTask(format!(
                "{shown} (a generated site's name is 1 to {MAX_SITE_NAME} letters, digits, spaces, '-', '_' or '.')"
            )));
        }
        Ok(())
    }

    /// The one check for a task that does not come from the lab's own code: a share link, a
    /// demonstration file, a run or session restored from the browser's store, the training
    /// request, the learner worker's page requests and `Lab`'s JavaScript entry points. A whole
    /// page (`Inline`) is refused: it would run as the lab's own code. A builtin name must be in
    /// the registry; an external page must be a plain file stem in a plain folder under one of
    /// [`ALLOWED_FOLDERS`]; a generated site's label must be plain (its design was checked as
    /// it was read).
    pub fn check_untrusted(&self) -> Result<(), EnvError> {
        self.check_untrusted_with(&[])
    }

    /// [`Self::check_untrusted`], where the folders a person typed into this tab (`typed`, each
    /// a [`plain_folder`]) may be opened too. They are never read from a link, a file or the
    /// store, so nothing but the person's own typing adds to them.
    pub fn check_untrusted_with(&self, typed: &[String]) -> Result<(), EnvError> {
        match self {
            TaskSpec::Builtin { name } => Self::builtin(name).map(|_| ()),
            TaskSpec::External { base_url, name } => {
                check_page_name(name)?;
                let folder = plain_folder(base_url).map_err(|why| EnvError::RefusedTask(format!("its folder \"{}\" {why}", shown(base_url))))?;
                let allowed =
                    ALLOWED_FOLDERS.iter().any(|p| folder.starts_with(p)) || typed.iter().any(|t| plain_folder(t).is_ok_and(|t| t == folder));
                if !allowed {
                    return Err(EnvError::RefusedTask(format!(
                        "its folder \"{folder}\" is not one the lab opens from links, files or saved runs (only folders under {}); \
                         a folder typed into the Watch view opens in that tab",
                        ALLOWED_FOLDERS.iter().map(|p| format!("\"{p}\"")).collect::<Vec<_>>().join(", ")
                    )));
                }
                Ok(())
            }
            TaskSpec::Inline { .. } => Err(EnvError::RefusedTask(
                "it carries a whole page, which would run as the lab's own code: links, files and saved runs name tasks instead".into(),
            )),
            TaskSpec::Generated { .. } => self.check_generated_name(),
        }
    }

    pub fn name(&self) -> &str {
        match self {
            TaskSpec::Builtin { name } | TaskSpec::External { name, .. } | TaskSpec::Inline { name, .. } | TaskSpec::Generated { name, .. } => name,
        }
    }

    /// What a generated site is made from.
    pub fn site(&self) -> Option<&S> {
        match self {
            TaskSpec::Generated { site, .. } => Some(site),
            _ => None,
        }
    }

    /// The page URL, relative to the app for builtin tasks; `None` for inline pages.
    pub fn page_url(&self) -> Option<String> {
        match self {
            TaskSpec::Builtin { name } => Some(format!("tasks/{name}.html")),
            // Relative to the app's page, whichever spelling the folder came in: `/miniwob/html/`
            // on an app served at `/lab/` is `/lab/miniwob/html/`, never another site's folder.
            TaskSpec::External { base_url, name } => {
                let folder = base_url.strip_prefix('/').filter(|f| !f.starts_with('/')).unwrap_or(base_url);
                let sep = if folder.is_empty() || folder.ends_with('/') { "" } else { "/" };
                Some(format!("{folder}{sep}{name}.html"))
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
    html.replace(r#"<link rel="stylesheet" href="core/core.css">"#, &format!("<style>\n{css}\n</style>"))
        .replace(r#"<script src="core/core.js"></script>"#, &format!("<script>\n{js}\n</script>"))
}

#[cfg(test)]
mod tests {
    use super::*;
    // A world's site as data for these tests: any JSON object.
    type TaskSpec = super::TaskSpec<serde_json::Map<String, serde_json::Value>>;

    #[test]
    fn a_site_name_problem_is_named_in_words() {
        assert_eq!(site_name_problem("login × 2, level 3"), Some("A site's name holds only letters, digits, spaces, '-', '_' and '.'.".into()));
        assert_eq!(site_name_problem("login × 2 level 3"), None);
        assert_eq!(site_name_problem("Café 2"), None, "letters of any script");
        assert_eq!(site_name_problem("  "), Some("Give the site a name.".into()));
        assert!(site_name_problem(&"x".repeat(MAX_SITE_NAME + 1)).unwrap().contains("at most 60"));
        assert!(TaskSpec::generated_from("a<b", Default::default()).is_err());
        assert!(TaskSpec::generated_from("<img onerror>", Default::default()).is_err());
        assert!(TaskSpec::generated_from(&"x".repeat(61), Default::default()).is_err());
    }

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
        assert_eq!(ext, TaskSpec::External { base_url: "miniwob/html/miniwob/".into(), name: "click-tab-2".into() });
        assert_eq!(ext.page_url().unwrap(), "miniwob/html/miniwob/click-tab-2.html");
        assert!(TaskSpec::external("/m/", "../secret").is_err());
        assert!(TaskSpec::external("/m/", "a/b").is_err());
        assert_eq!(TaskSpec::external("/m/", "flight.Alaska").unwrap().page_url().unwrap(), "m/flight.Alaska.html");
        // A stored leading-slash spelling resolves relative to the app too.
        let stored = TaskSpec::External { base_url: "/miniwob/html/miniwob/".into(), name: "click-test".into() };
        assert_eq!(stored.page_url().unwrap(), "miniwob/html/miniwob/click-test.html");
    }

    #[test]
    fn folders_are_plain_paths_on_the_apps_origin() {
        for (given, normal) in [
            ("miniwob/html/miniwob/", "miniwob/html/miniwob/"),
            ("/miniwob/html/miniwob", "miniwob/html/miniwob/"),
            ("a", "a/"),
            ("x.y/z~1/", "x.y/z~1/"),
        ] {
            assert_eq!(plain_folder(given).as_deref(), Ok(normal), "{given}");
        }
        for (bad, why) in [
            ("", "empty"),
            ("https://evil.example/miniwob/html/", "another site"),
            ("//evil.example/miniwob/html/", "another site"),
            ("javascript:alert(1)", "another site"),
            ("miniwob/html/../../secret/", "'..' segment"),
            ("miniwob/./html/", "'.' segment"),
            ("miniwob//html/", "empty segment"),
            ("miniwob\\html/", "backslash"),
            ("miniwob/%2e%2e/", "percent-escape"),
            ("miniwob/html/?x=1", "query or fragment"),
            ("miniwob/html/#x", "query or fragment"),
            ("miniwob/ html/", "space"),
            ("miniwob/\u{0}/", "control"),
            ("miniwob/ĥtml/", "the character 'ĥ'"),
        ] {
            let e = plain_folder(bad).unwrap_err();
            assert!(e.contains(why), "{bad:?}: {e}");
        }
        assert!(plain_folder(&"a/".repeat(101)).unwrap_err().contains("longer than 200"));
    }

    #[test]
    fn untrusted_specs_name_only_known_tasks_and_allowed_folders() {
        let ok = |s: &TaskSpec| s.check_untrusted();
        let refused = |s: &TaskSpec| ok(s).unwrap_err().to_string();
        let ext = |base: &str, name: &str| TaskSpec::External { base_url: base.into(), name: name.into() };
        assert_eq!(ok(&TaskSpec::Builtin { name: "click-test".into() }), Ok(()));
        assert_eq!(ok(&TaskSpec::Builtin { name: "../x".into() }), Err(EnvError::UnknownTask("../x".into())));
        assert_eq!(ok(&ext("miniwob/html/miniwob/", "click-test")), Ok(()));
        assert_eq!(ok(&ext("/miniwob/html/miniwob/", "click-test")), Ok(()), "the leading-slash spelling");
        assert_eq!(ok(&ext("miniwob/html/miniwob", "flight.Alaska")), Ok(()));
        // Folders outside the allowed prefix, or that only look like it.
        assert!(refused(&ext("tasks/", "click-test")).contains("not one the lab opens from links"));
        assert!(refused(&ext("", "index")).contains("empty"));
        assert!(refused(&ext("miniwob/htmlx/", "a")).contains("not one the lab opens"));
        assert!(refused(&ext("miniwob/", "a")).contains("not one the lab opens"));
        assert!(refused(&ext("miniwob/html/../../", "index")).contains("'..' segment"));
        assert!(refused(&ext("miniwob/html/%2e%2e/", "index")).contains("percent-escape"));
        assert!(refused(&ext("https://evil.example/miniwob/html/", "a")).contains("another site"));
        assert!(refused(&ext("//evil.example/miniwob/html/", "a")).contains("another site"));
        assert!(refused(&ext("miniwob/html/?", "a")).contains("query"));
        // Names are plain file stems.
        for name in ["../secret", "a/b", "", ".hidden", "a\\b", "a?b", "a#b", "a%2fb", "a b", &"x".repeat(101)] {
            assert!(refused(&ext("miniwob/html/miniwob/", name)).contains("not a plain file name"), "{name:?}");
        }
        // A whole page never, a generated site with a plain label.
        let inline = TaskSpec::Inline { name: "x".into(), html: "<script>alert(1)</script>".into() };
        assert!(refused(&inline).contains("whole page"));
        let site = TaskSpec::generated_from("shopping-3", Default::default()).unwrap();
        assert_eq!(ok(&site), Ok(()));
        // A folder the person typed opens in their tab (either spelling), and only it.
        let typed = vec!["/my-tasks/".to_string()];
        assert_eq!(ext("my-tasks/", "a").check_untrusted_with(&typed), Ok(()));
        assert_eq!(ext("/my-tasks", "a").check_untrusted_with(&typed), Ok(()));
        assert!(ext("my-tasks/sub/", "a").check_untrusted_with(&typed).is_err());
        assert!(ext("my-tasks/", "a").check_untrusted().is_err());
    }

    #[test]
    fn a_generated_site_is_data_beside_its_label() {
        let json = r#"{"source":"generated","name":"login-0","design":{"action":[39]}}"#;
        let spec: TaskSpec = serde_json::from_str(json).unwrap();
        assert_eq!(spec.name(), "login-0");
        assert_eq!(spec.site().unwrap()["design"]["action"][0], 39);
        assert!(spec.page_url().is_none() && spec.info().is_none());
        assert_eq!(serde_json::to_string(&spec).unwrap(), json);
    }

    #[test]
    fn inlined_pages_carry_the_core() {
        let TaskSpec::Inline { html, .. } = TaskSpec::builtin_inline("click-test").unwrap() else { panic!() };
        assert!(!html.contains("core/core.js"));
        assert!(html.contains("Math.seedrandom = function"));
        assert!(html.contains("#sync-task-cover"));
    }
}

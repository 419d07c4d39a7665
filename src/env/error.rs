//! Everything that can go wrong between the lab and a task page, with messages meant for people.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::observation::NodeRef;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EnvError {
    /// The task name is not one of the lab's tasks.
    UnknownTask(String),
    /// A task from a link, a file, a stored run or a message names a page the lab does not open
    /// from such sources (a whole page, a folder outside the allowed ones, a path that is not a
    /// plain one); the text says why.
    RefusedTask(String),
    /// The page lives on another origin, so its DOM cannot be read.
    CrossOrigin { url: String, origin: String },
    /// The server answered the page request with an error status (or not at all).
    NotFound { url: String, detail: String },
    /// The page did not finish loading in time.
    LoadTimeout { url: String, ms: u32 },
    /// The page loaded but lacks part of the MiniWoB contract (e.g. `core.startEpisodeReal`).
    NotATaskPage { url: String, missing: String },
    /// The page's own script threw (in its generator or while loading).
    PageThrew { task: String, message: String },
    /// `WOB_TASK_READY` never became true after an episode started.
    NeverReady { task: String, ms: u32 },
    /// `step` was called before any `reset`.
    NoEpisode,
    /// The episode is over; the action was not sent to the page.
    EpisodeDone,
    /// The action names a ref that is not on the page in this episode.
    UnknownRef(NodeRef),
    /// The action does not fit its target (e.g. `Select` on something that is not a `<select>`).
    BadTarget { action: String, detail: String },
    /// The page navigated away (e.g. a real link was followed), ending the episode.
    NavigatedAway { url: String },
    /// The environment is busy with another call.
    Busy,
    /// Anything else the browser reported.
    Browser(String),
}

impl fmt::Display for EnvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use EnvError::*;
        match self {
            UnknownTask(name) => write!(f, "unknown task \"{name}\": it is not in the lab's task list"),
            RefusedTask(why) => write!(f, "the task cannot be opened: {why}"),
            CrossOrigin { url, origin } => {
                write!(f, "{url} is on another origin ({origin}); the lab can only drive pages served from its own origin")
            }
            NotFound { url, detail } => write!(f, "could not load {url}: {detail}"),
            LoadTimeout { url, ms } => write!(f, "{url} did not finish loading within {ms} ms"),
            NotATaskPage { url, missing } => write!(f, "{url} is not a MiniWoB-style task page: it has no {missing}"),
            PageThrew { task, message } => write!(f, "the task page \"{task}\" threw an error: {message}"),
            NeverReady { task, ms } => write!(f, "the task page \"{task}\" did not become ready within {ms} ms"),
            NoEpisode => write!(f, "no episode is running: reset the environment first"),
            EpisodeDone => write!(f, "the episode is over: the action was not sent"),
            UnknownRef(r) => write!(f, "no element with ref {r} on the page in this episode"),
            BadTarget { action, detail } => write!(f, "cannot {action}: {detail}"),
            NavigatedAway { url } => write!(f, "the task page navigated away to {url}"),
            Busy => write!(f, "the environment is busy with another request"),
            Browser(msg) => write!(f, "browser error: {msg}"),
        }
    }
}

impl std::error::Error for EnvError {}

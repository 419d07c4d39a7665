//! What the page asks the learner worker to do ([`TrainRequest`]), and the saved run a
//! DOM-Q-Net request continues ([`SavedRun`]): both are read from messages and from the
//! browser's store, so both are checked as anything from outside the lab's own code is.

mod generator;

use serde::{Deserialize, Serialize};

use crate::dom_q_net::DqnConfig;
use crate::dom_q_net::replay::StoredTransition;
use crate::dom_q_net::train::TrainerState;
use crate::task::TaskSpec;

pub use generator::GeneratorSpec;

/// What the page asks the learner to do.
#[derive(Clone, Debug, Deserialize)]
#[serde(default)]
pub struct TrainRequest {
    /// Which agent trains: "dom-q-net" (on `tasks`) or "navigator" (on sites from `generator`).
    pub agent: String,
    /// The navigator's environment generator (DR, CL, one site, or an adversary: the population
    /// loop of `web::learner::adversary`).
    pub generator: Option<GeneratorSpec>,
    /// Judge the navigator on the test sites (on the site simulator) about this often, seconds.
    pub judge_every_s: f64,
    /// Greedy episodes per test site and level when judging.
    pub judge_seeds: u32,
    /// Agent settings: a `DqnConfig`, whole or partial. Fields it leaves out follow the paper's
    /// preset for the tasks ([`DqnConfig::for_tasks`]: T = 7 for social-media, the multitask
    /// buffer for several tasks).
    pub config: serde_json::Value,
    pub tasks: Vec<TaskSpec>,
    /// Stop after this many environment steps, all tasks together.
    pub frames: u64,
    pub seed: u32,
    /// "auto", "webgpu" or "cpu".
    pub backend: String,
    /// The WebGPU adapter the page found (e.g. "google swiftshader (fallback)"), or none.
    pub adapter: Option<String>,
    /// Give up on WebGPU (and train on the CPU) when starting it takes longer than this.
    pub webgpu_start_timeout_ms: u32,
    /// ... or when its timing probe (shader compilation included) takes longer than this.
    pub webgpu_probe_timeout_ms: u32,
    /// How often to report progress.
    pub progress_ms: f64,
    /// Keep a checkpoint every this many updates (for recovery, and to hand to the page).
    pub checkpoint_every: u64,
    /// Post a snapshot of the whole run (to survive a reload) this often; 0: never.
    pub snapshot_every_s: f64,
    /// How many of the newest transitions a snapshot keeps.
    pub snapshot_replay: usize,
    /// Start paused (the page may then step or resume).
    pub start_paused: bool,
    /// `checkpoint` messages carry f16 weights (half the size; for agents to ship and watch).
    /// Snapshots always keep f32, so a resumed run continues exactly.
    pub checkpoint_half: bool,
    /// Post a `checkpoint` message with the final model when training ends.
    pub checkpoint_at_end: bool,
    /// After training, evaluate each task greedily (noise off) on this many episodes; 0: don't.
    pub eval_episodes: u32,
    /// Seed of the first evaluation episode; far from the training seeds (which start at `seed`
    /// and count up per episode), so evaluation pages are held out.
    pub eval_seed: u32,
}

/// Upper bounds of [`TrainRequest::check`]: a day between reports or snapshots, and the
/// episodes of an evaluation.
pub const MAX_SECONDS: f64 = 86_400.0;
pub const MAX_EVAL_EPISODES: u64 = 10_000;

pub const DOM_Q_NET: &str = "dom-q-net";
pub const NAVIGATOR: &str = "navigator";

/// The version of a snapshot's format: its `state` text and the record the page keeps around it
/// in IndexedDB (`www/train.js`). A snapshot of another version is refused with a message and
/// left where it is. Records from before versioning carry none (read as 0).
pub const SNAPSHOT_SCHEMA: u32 = 1;

/// Refuses a snapshot of another format than this lab's, saying which.
pub fn check_schema(schema: u32) -> Result<(), String> {
    if schema == SNAPSHOT_SCHEMA {
        return Ok(());
    }
    let whose = if schema < SNAPSHOT_SCHEMA { "an older version" } else { "a newer version" };
    let written = if schema == 0 { "no format version".to_string() } else { format!("format {schema}") };
    Err(format!(
        "the saved training run was written by {whose} of the lab ({written}; this lab reads format {SNAPSHOT_SCHEMA}), so it cannot be resumed"
    ))
}

/// The part of a run beyond the model checkpoint: where each task stands, and recent replay.
#[derive(Serialize, Deserialize)]
pub struct SavedRun {
    #[serde(default)]
    pub schema: u32,
    pub trainer: TrainerState,
    pub replay: Vec<StoredTransition>,
}

impl SavedRun {
    /// A saved run read back from storage, checked against the request it is to continue and
    /// the agent's config: its version, one progress entry and episode count per task, and every
    /// transition's lengths, indices and numbers (see [`StoredTransition::check`]).
    pub fn check(&self, req: &TrainRequest, cfg: &DqnConfig) -> Result<(), String> {
        check_schema(self.schema)?;
        let t = &self.trainer;
        if t.tasks != req.tasks {
            return Err("the saved run trained other tasks than this request names".into());
        }
        let damaged = |why: String| format!("the saved run is damaged: {why}");
        if t.progress.len() != t.tasks.len() || t.episodes.len() != t.tasks.len() {
            return Err(damaged(format!(
                "{} tasks with {} progress entries and {} episode counts",
                t.tasks.len(),
                t.progress.len(),
                t.episodes.len()
            )));
        }
        if !t.elapsed_ms.is_finite() || t.elapsed_ms < 0.0 {
            return Err(damaged(format!("its training time is {} ms", t.elapsed_ms)));
        }
        for (k, s) in self.replay.iter().enumerate() {
            s.check(cfg).map_err(|e| damaged(format!("saved transition {k}: {e}")))?;
        }
        Ok(())
    }
}

impl Default for TrainRequest {
    fn default() -> Self {
        TrainRequest {
            agent: DOM_Q_NET.into(),
            generator: None,
            judge_every_s: 30.0,
            judge_seeds: 10,
            config: serde_json::Value::Null,
            tasks: Vec::new(),
            frames: 50_000,
            seed: 1,
            backend: "auto".into(),
            adapter: None,
            webgpu_start_timeout_ms: 10_000,
            webgpu_probe_timeout_ms: 120_000,
            progress_ms: 250.0,
            checkpoint_every: 2_000,
            snapshot_every_s: 30.0,
            snapshot_replay: 5_000,
            start_paused: false,
            checkpoint_half: false,
            checkpoint_at_end: false,
            eval_episodes: 0,
            // The first held-out seed: never a training episode's.
            eval_seed: crate::dom_q_net::train::HELD_OUT_SEEDS,
        }
    }
}

/// Most tasks one multitask request names (each needs a task page; the paper's set has nine).
pub const MAX_TASKS: usize = 32;

impl TrainRequest {
    /// Reads a request as the worker gets it (JSON text) and checks it ([`Self::check`]).
    pub fn from_json(json: &str, typed_folders: &[String]) -> Result<Self, String> {
        let req: TrainRequest = serde_json::from_str(json).map_err(|e| format!("bad training request: {e}"))?;
        req.check(typed_folders)?;
        Ok(req)
    }

    /// Checks a request from the page or the browser's store before anything is built: a known
    /// agent, its tasks as any task from outside the lab's own code (`TaskSpec::check_untrusted`,
    /// besides the folders a person typed into the tab), its generator, and every number
    /// within bounds. The agent's config is checked where it is built ([`Self::dqn_config`],
    /// the navigator's `validate`).
    pub fn check(&self, typed_folders: &[String]) -> Result<(), String> {
        let bad = |why: String| Err(format!("bad training request: {why}"));
        match self.agent.as_str() {
            DOM_Q_NET => {
                if self.tasks.is_empty() {
                    return bad("no tasks to train on".into());
                }
            }
            NAVIGATOR => match &self.generator {
                None => return bad("a navigator trains on sites from a generator, and none is given".into()),
                Some(g) => g.check().map_err(|e| format!("bad training request: its generator: {e}"))?,
            },
            other => return bad(format!("no agent \"{}\" (\"{DOM_Q_NET}\" or \"{NAVIGATOR}\")", crate::env::task::shown(other))),
        }
        if self.tasks.len() > MAX_TASKS {
            return bad(format!("it names {} tasks (at most {MAX_TASKS})", self.tasks.len()));
        }
        for (k, t) in self.tasks.iter().enumerate() {
            t.check_untrusted_with(typed_folders).map_err(|e| format!("bad training request: task #{}: {e}", k + 1))?;
        }
        if !matches!(self.backend.as_str(), "auto" | "webgpu" | "cpu") {
            return bad("its backend is not auto, webgpu or cpu".into());
        }
        let seconds = |name: &str, v: f64, lo: f64| {
            if v.is_finite() && (lo..=MAX_SECONDS).contains(&v) {
                Ok(())
            } else {
                Err(format!("bad training request: {name} must be {lo} to {MAX_SECONDS}, not {v}"))
            }
        };
        seconds("judge_every_s", self.judge_every_s, 0.0)?;
        seconds("snapshot_every_s", self.snapshot_every_s, 0.0)?;
        seconds("progress_ms", self.progress_ms, 1.0)?;
        let counts = [
            ("judge_seeds", self.judge_seeds as u64, MAX_EVAL_EPISODES),
            ("eval_episodes", self.eval_episodes as u64, MAX_EVAL_EPISODES),
            ("snapshot_replay", self.snapshot_replay as u64, crate::dom_q_net::config::MAX_REPLAY as u64),
        ];
        if let Some((name, v, hi)) = counts.iter().find(|(_, v, hi)| v > hi) {
            return bad(format!("{name} must be at most {hi}, not {v}"));
        }
        if self.checkpoint_every == 0 {
            return bad("checkpoint_every must be at least 1".into());
        }
        if self.adapter.as_ref().is_some_and(|a| a.chars().count() > 200) {
            return bad("its adapter's description is too long".into());
        }
        Ok(())
    }

    /// The agent's config: the request's fields over the paper's preset for its tasks.
    pub fn dqn_config(&self) -> Result<DqnConfig, String> {
        // Labelled by source (`miniwob/click-link` for a real page), which the preset follows.
        let names: Vec<String> = self.tasks.iter().map(|t| t.label()).collect();
        DqnConfig::for_tasks_with(&names, &self.config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(json: serde_json::Value) -> Result<TrainRequest, String> {
        TrainRequest::from_json(&json.to_string(), &[])
    }

    #[test]
    fn the_apps_requests_are_read() {
        let dqn = read(serde_json::json!({
            "config": {"batch_size": 32}, "tasks": [{"source": "builtin", "name": "click-test"}, {"source": "builtin", "name": "enter-text"}],
            "frames": 1000, "seed": 3, "backend": "cpu", "snapshot_every_s": 10, "snapshot_replay": 2000,
        }))
        .unwrap();
        assert_eq!((dqn.tasks.len(), dqn.dqn_config().unwrap().batch_size), (2, 32));
        read(serde_json::json!({"agent": "navigator", "generator": {"kind": "dr"}, "config": {}, "frames": 10, "backend": "auto"})).unwrap();
        read(serde_json::json!({"agent": "navigator", "generator": {"kind": "adversary", "objective": "code"}})).unwrap();
        let miniwob = serde_json::json!({"tasks": [{"source": "external", "base_url": "/miniwob/html/miniwob/", "name": "click-test"}]});
        read(miniwob).unwrap();
    }

    #[test]
    fn a_request_that_names_a_page_the_lab_would_not_open_is_refused() {
        let task = |t: serde_json::Value| read(serde_json::json!({ "tasks": [{"source": "builtin", "name": "click-test"}, t] })).unwrap_err();
        // The foothold a stored run could carry: a whole page, rendered through srcdoc at every start.
        let e = task(serde_json::json!({"source": "inline", "name": "x", "html": "<script>alert(1)</script>"}));
        assert!(e.contains("task #2") && e.contains("whole page"), "{e}");
        assert!(task(serde_json::json!({"source": "builtin", "name": "../x"})).contains("unknown task"));
        assert!(task(serde_json::json!({"source": "external", "base_url": "/", "name": "index"})).contains("empty segment"));
        assert!(task(serde_json::json!({"source": "external", "base_url": "other/", "name": "index"})).contains("not one the lab opens"));
        // A folder the person typed into the tab is theirs (the worker is told, the store never is).
        let typed = serde_json::json!({"tasks": [{"source": "external", "base_url": "other/", "name": "index"}]}).to_string();
        assert!(TrainRequest::from_json(&typed, &["other".into()]).is_ok());
        let site = serde_json::json!({"agent": "navigator", "generator": {"kind": "site", "name": "<img onerror=x>", "design": {"number_of_pages": 1, "action": [39], "action_page": [0]}}});
        assert!(read(site).unwrap_err().contains("generated site's name"));
    }

    #[test]
    fn bad_numbers_and_agents_are_refused() {
        let e = |v: serde_json::Value| read(v).unwrap_err();
        let t = serde_json::json!([{"source": "builtin", "name": "click-test"}]);
        assert!(e(serde_json::json!({"tasks": [] })).contains("no tasks"));
        assert!(e(serde_json::json!({"agent": "rm -rf", "tasks": t})).contains("no agent"));
        assert!(e(serde_json::json!({"agent": "navigator"})).contains("none is given"));
        assert!(e(serde_json::json!({"agent": "navigator", "generator": {"kind": "cl", "p_start": 7.0}})).contains("generator"));
        assert!(
            e(serde_json::json!({"agent": "navigator", "generator": {"kind": "adversary", "objective": "code", "alpha": 99.0}})).contains("alpha")
        );
        assert!(e(serde_json::json!({"tasks": vec![t[0].clone(); MAX_TASKS + 1]})).contains("33 tasks"));
        assert!(e(serde_json::json!({"tasks": t, "backend": "gpu!"})).contains("backend"));
        assert!(e(serde_json::json!({"tasks": t, "progress_ms": 0.0})).contains("progress_ms"));
        assert!(e(serde_json::json!({"tasks": t, "snapshot_every_s": 1e300})).contains("snapshot_every_s"));
        assert!(e(serde_json::json!({"tasks": t, "eval_episodes": 4_000_000_000u64})).contains("eval_episodes"));
        assert!(e(serde_json::json!({"tasks": t, "checkpoint_every": 0})).contains("checkpoint_every"));
        assert!(e(serde_json::json!({"tasks": t, "frames": "many"})).contains("bad training request"));
    }
}

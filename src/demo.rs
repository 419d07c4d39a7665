//! Demonstrations: episodes a person played, recorded in the environment's own vocabulary (the
//! observation before each action, and the action), so they replay exactly on the same seeded
//! page and can later train agents (workflow-guided exploration).

use serde::{Deserialize, Serialize};

use crate::env::{Action, EnvError, Observation};
use crate::task::{Env, TaskSpec};

pub const DEMO_FORMAT: u32 = 1;
/// Largest demonstration file read (a long episode with full observations is well under this).
pub const MAX_DEMO_BYTES: usize = 20_000_000;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DemoStep {
    pub observation: Observation,
    pub action: Action,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Demonstration {
    pub format: u32,
    pub task: TaskSpec,
    pub seed: u32,
    pub data_mode: String,
    pub steps: Vec<DemoStep>,
    pub reward: f64,
    pub raw_reward: f64,
    pub reason: Option<String>,
    /// False when the person did something the action vocabulary cannot say exactly (e.g. edited
    /// the middle of a text), so a replay may differ.
    #[serde(default = "yes")]
    pub exact: bool,
}

fn yes() -> bool {
    true
}

impl Demonstration {
    /// A demonstration file, checked as anything from outside the lab's own code: its size,
    /// format and task ([`TaskSpec::check_untrusted`]: it names a task, never carries a page).
    pub fn from_json(text: &str) -> Result<Self, String> {
        Self::from_json_in(text, &[])
    }

    /// [`Self::from_json`] where the folders a person typed into this tab may be named too.
    pub fn from_json_in(text: &str, typed_folders: &[String]) -> Result<Self, String> {
        if text.len() > MAX_DEMO_BYTES {
            return Err(format!("the file is {} MB; a demonstration is at most {} MB", text.len() / 1_000_000, MAX_DEMO_BYTES / 1_000_000));
        }
        let d: Demonstration = serde_json::from_str(text).map_err(|e| format!("not a demonstration file: {e}"))?;
        if d.format != DEMO_FORMAT {
            return Err(format!("demonstration format {} (this lab reads {DEMO_FORMAT})", d.format));
        }
        if let Some((i, e)) = d.steps.iter().enumerate().find_map(|(i, s)| s.action.check().err().map(|e| (i, e))) {
            return Err(format!("step {} of the demonstration cannot be performed: {e}", i + 1));
        }
        d.task.check_untrusted_with(typed_folders).map_err(|e| match e {
            EnvError::RefusedTask(why) => format!("the demonstration's task cannot be opened: {why}"),
            e => e.to_string(),
        })?;
        Ok(d)
    }

    pub fn actions(&self) -> impl Iterator<Item = &Action> {
        self.steps.iter().map(|s| &s.action)
    }
}

/// How a replay went.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplayResult {
    pub steps: u32,
    pub done: bool,
    pub raw_reward: f64,
    pub reason: Option<String>,
    /// Index of the first step whose observation differed from the recorded one, if any.
    pub diverged_at: Option<usize>,
}

/// Replays `actions` from a reset of `task` with `seed`. With `expected` observations (a
/// demonstration's), reports the first step where the page differs from what was recorded.
pub async fn replay<E: Env>(
    env: &mut E,
    task: &TaskSpec,
    seed: u32,
    actions: &[Action],
    expected: Option<&[Observation]>,
) -> Result<ReplayResult, EnvError> {
    let mut obs = env.reset(task, seed).await?;
    let mut result = ReplayResult { steps: 0, done: false, raw_reward: 0.0, reason: None, diverged_at: None };
    for (i, action) in actions.iter().enumerate() {
        if let Some(want) = expected.and_then(|e| e.get(i))
            && result.diverged_at.is_none()
            && (want.instruction != obs.instruction || want.dom.nodes.len() != obs.dom.nodes.len())
        {
            result.diverged_at = Some(i);
        }
        let step = env.step(action).await?;
        result.steps += 1;
        result.raw_reward = step.raw_reward;
        result.reason = step.reason;
        if step.done {
            result.done = true;
            break;
        }
        obs = step.observation;
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::Environment;
    use crate::sim::SimEnv;
    use crate::util::block_on;

    #[test]
    fn a_recorded_episode_replays_to_the_same_reward() {
        let mut env = SimEnv::new(None);
        // Files name their task (the simulator goes by name alone).
        let spec = TaskSpec::Builtin { name: "sim-type".into() };
        // Record: what a person would do, with the observation before each action.
        let o0 = block_on(env.reset(&spec, 4)).unwrap();
        let target = o0.instruction.field("target").unwrap().to_string();
        let input = o0.dom.nodes.iter().find(|n| n.tag == "INPUT_text").unwrap().r#ref;
        let submit = o0.dom.nodes.iter().find(|n| n.text == "Submit").unwrap().r#ref;
        let s1 = block_on(env.step(&Action::Type(input, target.clone()))).unwrap();
        let s2 = block_on(env.step(&Action::Click(submit))).unwrap();
        let demo = Demonstration {
            format: DEMO_FORMAT,
            task: spec.clone(),
            seed: 4,
            data_mode: "train".into(),
            steps: vec![
                DemoStep { observation: o0, action: Action::Type(input, target) },
                DemoStep { observation: s1.observation, action: Action::Click(submit) },
            ],
            reward: s2.reward,
            raw_reward: s2.raw_reward,
            reason: None,
            exact: true,
        };
        let json = serde_json::to_string(&demo).unwrap();
        // A file names one of the lab's tasks, checked as it is read: the simulator's are not.
        assert!(Demonstration::from_json(&json).unwrap_err().contains("unknown task \"sim-type\""));
        let mut back = Demonstration::from_json(&json.replace("\"sim-type\"", "\"enter-text\"")).unwrap();
        back.task = spec.clone();
        assert_eq!(back, demo);
        let actions: Vec<Action> = back.actions().cloned().collect();
        let expected: Vec<Observation> = back.steps.iter().map(|s| s.observation.clone()).collect();
        let r = block_on(replay(&mut env, &back.task, back.seed, &actions, Some(&expected))).unwrap();
        assert_eq!((r.done, r.raw_reward, r.diverged_at), (true, 1.0, None));
        // Another seed: the page differs, and the replay says where.
        let r = block_on(replay(&mut env, &back.task, 5, &actions, Some(&expected))).unwrap();
        assert_eq!(r.diverged_at, Some(0));
    }

    #[test]
    fn bad_files_are_refused() {
        assert!(Demonstration::from_json("{}").unwrap_err().contains("not a demonstration"));
        let mut v: serde_json::Value = serde_json::json!({
            "format": 7, "task": {"source": "builtin", "name": "click-test"}, "seed": 1, "data_mode": "train",
            "steps": [], "reward": 0.0, "raw_reward": 0.0, "reason": null
        });
        assert!(Demonstration::from_json(&v.to_string()).unwrap_err().contains("format 7"));
        v["format"] = 1.into();
        assert!(Demonstration::from_json(&v.to_string()).is_ok());
        // A page in the file would run as script in the lab's origin.
        v["task"] = serde_json::json!({"source": "inline", "name": "x", "html": "<script>alert(1)</script>"});
        assert!(Demonstration::from_json(&v.to_string()).unwrap_err().contains("whole page"));
        // Names are re-checked, and a folder must be a plain one under the allowed prefixes.
        v["task"] = serde_json::json!({"source": "builtin", "name": "../x"});
        assert!(Demonstration::from_json(&v.to_string()).unwrap_err().contains("unknown task \"../x\""));
        v["task"] = serde_json::json!({"source": "external", "base_url": "miniwob/html/miniwob/", "name": "../../index"});
        assert!(Demonstration::from_json(&v.to_string()).unwrap_err().contains("not a plain file name"));
        v["task"] = serde_json::json!({"source": "external", "base_url": "/", "name": "index"});
        assert!(Demonstration::from_json(&v.to_string()).unwrap_err().contains("empty segment"));
        v["task"] = serde_json::json!({"source": "external", "base_url": "other-app/", "name": "index"});
        assert!(Demonstration::from_json(&v.to_string()).unwrap_err().contains("not one the lab opens"));
        assert!(Demonstration::from_json_in(&v.to_string(), &["other-app".into()]).is_ok(), "a folder typed in this tab");
        v["task"] = serde_json::json!({"source": "external", "base_url": "/miniwob/html/miniwob/", "name": "click-test"});
        assert!(Demonstration::from_json(&v.to_string()).is_ok());
        v["task"] = serde_json::json!({"source": "generated", "name": "x", "design": {"action": [99], "action_page": [0]}});
        assert!(Demonstration::from_json(&v.to_string()).unwrap_err().contains("99 is not a primitive index"));
        // MiniWoB++'s other actions are read; one that cannot be performed is refused.
        let step = |action: serde_json::Value| serde_json::json!({"observation": {"instruction": {"utterance": "", "tokens": [], "fields": []}, "dom": {"nodes": []}}, "action": action});
        v["task"] = serde_json::json!({"source": "external", "base_url": "miniwob/html/miniwob/", "name": "drag-box"});
        v["steps"] = serde_json::json!([step(serde_json::json!({"drag": [[30, 80], [90, 120]]})), step(serde_json::json!({"key": "<Enter>"}))]);
        let d = Demonstration::from_json(&v.to_string()).unwrap();
        assert_eq!(d.actions().cloned().collect::<Vec<_>>(), [Action::Drag(vec![(30, 80), (90, 120)]), Action::PressKey("<Enter>".into())]);
        v["steps"] = serde_json::json!([step(serde_json::json!({"drag": [[30, 80]]}))]);
        assert!(
            Demonstration::from_json(&v.to_string())
                .unwrap_err()
                .contains("step 1 of the demonstration cannot be performed: a drag needs at least two points")
        );
        let huge = format!("{{\"pad\": \"{}\"}}", "x".repeat(MAX_DEMO_BYTES));
        assert!(Demonstration::from_json(&huge).unwrap_err().contains("at most 20 MB"));
    }
}

//! Workflow-policy episodes on any [`Environment`]: the simulator natively, the live task page in
//! the browser. Each episode keeps, per step, the observation, the action, the workflow step it
//! came from and the elements that step matched, so it can feed the neural policy's replay (as
//! (observation, action) pairs with the goal's field keys and the return) and a view can show it.

use serde::{Deserialize, Serialize};

use crate::env::{Action, EnvError, NodeRef, Observation, STEP_LIMIT_REASON};
use crate::task::{Env, TaskSpec};

use super::policy::{Decision, Mode, ProgramChoice, StopReason, WorkflowPolicy};

/// The reward of an episode the page did not end (the policy stopped, or the step cap came
/// first): a failure, as [`crate::env::EnvConfig::max_steps`] scores one.
pub const UNFINISHED_REWARD: f64 = -1.0;
/// Why an episode the workflow policy ended itself is over.
pub const STOPPED_REASON: &str = "the workflow policy stopped";

/// One action of a workflow-policy episode.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkflowStep {
    /// The page the action was chosen on.
    pub observation: Observation,
    pub action: Action,
    /// The lattice vertex, edge and workflow step the action was sampled from.
    pub choice: ProgramChoice,
    /// Skip edges taken just before it.
    pub skipped: Vec<ProgramChoice>,
    /// Every element the workflow step's execution paths act on (the action's target among them).
    pub matched: Vec<NodeRef>,
    /// The element acted on before this step (what `Last` meant here).
    pub last: Option<NodeRef>,
}

/// How an episode ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum EpisodeEnd {
    /// The page (or the environment's own step cap) ended it.
    Done,
    /// The policy stopped (Terminate) before the page ended the episode.
    Stopped(StopReason),
    /// [`WgeConfig::max_steps`](super::config::WgeConfig) actions were taken and the page had
    /// not ended the episode.
    StepCap,
}

/// A workflow-policy episode.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkflowEpisode {
    pub task: TaskSpec,
    pub seed: u32,
    pub mode: Mode,
    /// Which demonstration's lattice was walked (`None`: the policy has none).
    pub demo: Option<usize>,
    /// The goal's field keys (sorted), which group episodes in the replay.
    pub field_keys: Vec<String>,
    pub steps: Vec<WorkflowStep>,
    /// The page after the last action (the reset page when there was none).
    pub final_observation: Observation,
    /// Skip edges taken after the last action, before stopping.
    pub trailing_skips: Vec<ProgramChoice>,
    /// The sampled step that could not be executed on `final_observation`, when that is what
    /// ended the episode (an execution error is a Terminate action).
    pub stopped_at: Option<ProgramChoice>,
    /// The element the last action targeted (what `Last` meant for `stopped_at`).
    pub last: Option<NodeRef>,
    pub end: EpisodeEnd,
    /// The page's time-decayed and raw rewards when it ended the episode; −1 when the policy
    /// stopped or ran into the step cap first: an unfinished task is a failed one, as the lab's
    /// step limit ([`STEP_LIMIT_REASON`]) and the page's own time limit would score it.
    pub reward: f64,
    pub raw_reward: f64,
    pub reason: Option<String>,
}

impl WorkflowEpisode {
    /// The return G the policies learn from: the raw reward (γ = 1, reward only at the end,
    /// MiniWoB's partial rewards aside: reference §2.6).
    pub fn ret(&self) -> f64 {
        self.raw_reward
    }
    /// Success by the lab's one rule (the paper's +1 with partial rewards disabled; a page's
    /// partial credit above 0 counts, as MiniWoB++'s binary reward reads it).
    pub fn succeeded(&self) -> bool {
        crate::env::is_success(self.raw_reward)
    }
    /// The (observation, action) pairs, in order.
    pub fn pairs(&self) -> impl Iterator<Item = (&Observation, &Action)> {
        self.steps.iter().map(|s| (&s.observation, &s.action))
    }
}

/// Runs one episode of `task` with `seed`: reset, then workflow-policy actions until the page
/// ends the episode, the policy stops, or `policy.config.max_steps` actions were taken.
/// Does not learn; see [`train_episode`].
pub async fn run_episode<E: Env>(
    env: &mut E,
    policy: &mut WorkflowPolicy,
    task: &TaskSpec,
    seed: u32,
    mode: Mode,
) -> Result<WorkflowEpisode, EnvError> {
    let mut obs = env.reset(task, seed).await?;
    let field_keys: Vec<String> = obs.instruction.fields.iter().map(|f| f.key.clone()).collect();
    let mut cursor = policy.start(&obs.instruction);
    let mut episode = WorkflowEpisode {
        task: task.clone(),
        seed,
        mode,
        demo: cursor.as_ref().map(|c| c.demo),
        field_keys,
        steps: Vec::new(),
        final_observation: Observation::default(),
        trailing_skips: Vec::new(),
        stopped_at: None,
        last: None,
        end: EpisodeEnd::StepCap,
        reward: 0.0,
        raw_reward: 0.0,
        reason: None,
    };
    let Some(cursor) = cursor.as_mut() else {
        episode.end = EpisodeEnd::Stopped(StopReason::NoDemonstrations);
        (episode.reward, episode.raw_reward) = (UNFINISHED_REWARD, UNFINISHED_REWARD);
        episode.reason = Some(STOPPED_REASON.to_string());
        episode.final_observation = obs;
        return Ok(episode);
    };
    while episode.steps.len() < policy.config.max_steps as usize {
        let last = cursor.last;
        match policy.next(cursor, &obs, mode) {
            Decision::Terminate { skipped, reason, choice } => {
                episode.trailing_skips = skipped;
                episode.stopped_at = choice;
                episode.last = last;
                (episode.reward, episode.raw_reward) = (UNFINISHED_REWARD, UNFINISHED_REWARD);
                episode.reason = Some(STOPPED_REASON.to_string());
                episode.end = EpisodeEnd::Stopped(reason);
                episode.final_observation = obs;
                return Ok(episode);
            }
            Decision::Act { action, choice, skipped, matched } => {
                let step = env.step(&action).await?;
                episode.steps.push(WorkflowStep { observation: obs, action, choice, skipped, matched, last });
                obs = step.observation;
                if step.done {
                    episode.end = EpisodeEnd::Done;
                    episode.reward = step.reward;
                    episode.raw_reward = step.raw_reward;
                    episode.reason = step.reason;
                    episode.final_observation = obs;
                    return Ok(episode);
                }
            }
        }
    }
    episode.reason = Some(STEP_LIMIT_REASON.to_string());
    (episode.reward, episode.raw_reward) = (UNFINISHED_REWARD, UNFINISHED_REWARD);
    episode.final_observation = obs;
    Ok(episode)
}

/// One training episode: explore with the workflow policy, then update it from the episode.
pub async fn train_episode<E: Env>(env: &mut E, policy: &mut WorkflowPolicy, task: &TaskSpec, seed: u32) -> Result<WorkflowEpisode, EnvError> {
    let episode = run_episode(env, policy, task, seed, Mode::Explore).await?;
    policy.update(&episode);
    Ok(episode)
}

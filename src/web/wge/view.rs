//! What the WGE view draws, built from the session's state: each demonstration's lattice with
//! its options' weights and probabilities, an explored episode step by step with the elements
//! its workflow steps matched, and DOMNet's counters.

use serde::Serialize;

use super::{DemoSource, Entry, Tally};
use crate::env::{Action, NodeRef, Rect};
use crate::wge::domnet_config::NeuralConfig;
use crate::wge::explore::{EpisodeEnd, WorkflowEpisode};
use crate::wge::neural::NeuralPolicy;
use crate::wge::policy::{DemoWorkflow, StopReason, WorkflowPolicy};

/// One thing the workflow policy may do at a lattice position, as the view lists it.
#[derive(Serialize)]
pub(super) struct OptionView {
    /// The paper's notation, `Click(Like("Submit"))`; empty for a skip.
    notation: String,
    /// Readable: "click an element like 'Submit'", or "skip to step 3".
    text: String,
    /// Where the option moves the cursor.
    to: usize,
    skip: bool,
    /// The policy's weight ψ and its probability π(z) at this position.
    weight: f64,
    probability: f64,
    /// Execution paths on the demonstration's page.
    paths: usize,
}

#[derive(Serialize)]
pub(super) struct PositionView {
    /// What the demonstration did here, described on its page.
    action: String,
    /// Workflow steps induced on this position's edges (the policy keeps the most specific).
    induced: usize,
    /// The options, most probable first.
    options: Vec<OptionView>,
    /// The value baseline V of this position.
    value: f64,
}

#[derive(Serialize)]
pub(super) struct DemoView {
    index: usize,
    source: DemoSource,
    label: String,
    task: String,
    reward: f64,
    raw_reward: f64,
    program_count: usize,
    positions: Vec<PositionView>,
}

pub(super) fn view_of(index: usize, e: &Entry, d: &DemoWorkflow, policy: &WorkflowPolicy) -> DemoView {
    let ins = Some(&d.instruction);
    let positions = d
        .positions
        .iter()
        .enumerate()
        .map(|(v, position)| {
            let probs = policy.probabilities(index, v);
            let mut options: Vec<OptionView> = position
                .options
                .iter()
                .enumerate()
                .map(|(k, o)| {
                    let to = d.lattice.edges[o.edge].to;
                    let (notation, text, skip) = match d.constraint(o) {
                        Some(c) => (c.to_string(), c.describe(ins), false),
                        None if to >= d.lattice.steps => (String::new(), "skip to the end (the page did not change)".into(), true),
                        None => (String::new(), format!("skip to step {} (the page did not change)", to + 1), true),
                    };
                    OptionView { notation, text, to, skip, weight: position.weights[k], probability: probs[k], paths: o.paths }
                })
                .collect();
            options.sort_by(|a, b| b.probability.total_cmp(&a.probability));
            let induced = d
                .lattice
                .edges_from(v)
                .map(|edge| match &edge.kind {
                    crate::wge::induction::EdgeKind::Act(p) => p.len(),
                    crate::wge::induction::EdgeKind::Skip => 0,
                })
                .sum();
            PositionView {
                action: e.steps.get(v).map(|s| s.action.describe(Some(&s.observation.dom))).unwrap_or_default(),
                induced,
                options,
                value: position.value,
            }
        })
        .collect();
    DemoView {
        index,
        source: e.source,
        label: e.label.clone(),
        task: e.task.clone(),
        reward: e.reward,
        raw_reward: e.raw_reward,
        program_count: d.lattice.program_count(),
        positions,
    }
}

/// One action of an explored episode, as the view draws it.
#[derive(Serialize)]
pub(super) struct ExploredStep {
    /// The lattice position the step was chosen at, and the demonstration's step there.
    vertex: usize,
    /// The workflow step in the paper's notation and as text, with its probability then.
    notation: String,
    text: String,
    /// The action taken (one of the step's execution paths, drawn uniformly), described.
    description: String,
    action: Action,
    /// The elements the workflow step matched on the page (its execution paths' targets).
    matched: Vec<Matched>,
    /// Skip edges taken just before it.
    skipped: usize,
}

#[derive(Serialize)]
pub(super) struct Matched {
    r#ref: NodeRef,
    rect: Rect,
}

#[derive(Serialize)]
pub(super) struct ExploredEpisode {
    task: String,
    seed: u32,
    /// The demonstration whose workflow was followed.
    demo: Option<usize>,
    steps: Vec<ExploredStep>,
    success: bool,
    reward: f64,
    raw_reward: f64,
    /// How it ended, in words.
    ending: String,
    episodes: u32,
    successes: u32,
    /// Success over the latest [`SUCCESS_WINDOW`] episodes.
    recent_success: Option<f64>,
}

pub(super) fn ending(episode: &WorkflowEpisode) -> String {
    match episode.end {
        EpisodeEnd::Done => match &episode.reason {
            Some(r) => format!("the page ended it ({r})"),
            None => "the page ended it".into(),
        },
        EpisodeEnd::StepCap => "the workflow policy's step cap".into(),
        EpisodeEnd::Stopped(StopReason::EndOfLattice) => "the workflow ran out (end of the lattice) before the page ended".into(),
        EpisodeEnd::Stopped(StopReason::NoPrograms) => "no workflow step at this position".into(),
        EpisodeEnd::Stopped(StopReason::NotExecutable) => "the workflow step matched nothing on the page".into(),
        EpisodeEnd::Stopped(StopReason::NoDemonstrations) => "no demonstrations".into(),
    }
}

pub(super) fn explored_view(episode: &WorkflowEpisode, policy: &WorkflowPolicy, tally: &Tally) -> ExploredEpisode {
    let steps = episode
        .steps
        .iter()
        .map(|s| {
            let d = &policy.demos()[s.choice.demo];
            let option = &d.positions[s.choice.vertex].options[s.choice.option];
            let c = d.constraint(option);
            let dom = &s.observation.dom;
            ExploredStep {
                vertex: s.choice.vertex,
                notation: c.map(|c| c.to_string()).unwrap_or_default(),
                text: c.map(|c| c.describe(Some(&s.observation.instruction))).unwrap_or_default(),
                description: s.action.describe(Some(dom)),
                action: s.action.clone(),
                matched: s.matched.iter().filter_map(|r| dom.get(*r).map(|n| Matched { r#ref: *r, rect: n.rect })).collect(),
                skipped: s.skipped.len(),
            }
        })
        .collect();
    ExploredEpisode {
        task: episode.task.label(),
        seed: episode.seed,
        demo: episode.demo,
        steps,
        success: episode.succeeded(),
        reward: episode.reward,
        raw_reward: episode.raw_reward,
        ending: ending(episode),
        episodes: tally.episodes,
        successes: tally.successes,
        recent_success: tally.recent_rate(),
    }
}

#[derive(Serialize)]
pub(super) struct NeuralView {
    on: bool,
    /// Successful exploration episodes in the grouped replay, and the updates taken.
    replay: usize,
    updates: u64,
    episodes: u64,
    /// Episodes a group needs before it is replayed.
    min_group: usize,
    /// Greedy success over the judging seeds, when judged.
    success: Option<f64>,
    seeds: u32,
}

pub(super) fn neural_view(n: Option<&NeuralPolicy>, on: bool, success: Option<f64>, seeds: u32) -> NeuralView {
    NeuralView {
        on,
        replay: n.map_or(0, |n| n.replay().len()),
        updates: n.map_or(0, |n| n.counters.updates),
        episodes: n.map_or(0, |n| n.counters.episodes),
        min_group: n.map_or(NeuralConfig::default().replay_min_group, |n| n.cfg.replay_min_group),
        success,
        seeds,
    }
}

//! The workflow policy (Liu et al., 2018, §4.2; reference-implementations.md §2.4): given a goal,
//! pick a demonstration with the same field keys, walk its workflow lattice with a cursor, and at
//! each position sample a workflow step from π_w(z | d, t) ∝ exp(ψ_{z,t,d}), then an action
//! uniformly among the step's execution paths. Environment-blind: the weights depend on the
//! demonstration and the position only. Trained by REINFORCE with a per-position baseline.

use serde::{Deserialize, Serialize};

use crate::demo::DemoStep;
use crate::env::{Action, Instruction, NodeRef, Observation};
use crate::rng::Rng;

use super::config::{WeightUpdate, WgeConfig};
use super::constraint::{Constraint, ExecutionEnv};
use super::explore::WorkflowEpisode;
use super::induction::{EdgeKind, WorkflowLattice, induce};

/// Where a choice was made and what was chosen: lattice `vertex` of demonstration `demo`, its
/// edge `edge` (an index into `lattice.edges`), and on an Act edge the workflow step `program`
/// (an index into that edge's list); `None` for a skip edge. `option` indexes the position's
/// options (and weights).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProgramChoice {
    pub demo: usize,
    pub vertex: usize,
    pub option: usize,
    pub edge: usize,
    pub program: Option<usize>,
}

/// One thing the policy may do at a lattice position.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PositionOption {
    pub edge: usize,
    /// The workflow step on the edge; `None`: take the skip edge.
    pub program: Option<usize>,
    /// Execution paths on the demonstration's own page at this position (0 for a skip).
    pub paths: usize,
}

/// The options of one lattice position, their weights ψ and the value baseline V.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Position {
    pub options: Vec<PositionOption>,
    pub weights: Vec<f64>,
    pub value: f64,
}

/// A demonstration as the policy keeps it: the goal's field keys, the lattice, and one
/// [`Position`] per vertex that can be left (`0..lattice.steps`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DemoWorkflow {
    pub field_keys: Vec<String>,
    /// The demonstration's instruction, to show its steps readably ("type the username …").
    pub instruction: Instruction,
    pub lattice: WorkflowLattice,
    pub positions: Vec<Position>,
}

impl DemoWorkflow {
    /// The workflow step an option stands for (`None` for a skip).
    pub fn constraint(&self, option: &PositionOption) -> Option<&Constraint> {
        match &self.lattice.edges[option.edge].kind {
            EdgeKind::Act(programs) => option.program.and_then(|p| programs.get(p)),
            EdgeKind::Skip => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Mode {
    /// Sample steps from π_w and actions uniformly (training).
    Explore,
    /// At each position play the highest-weighted step that executes on the page.
    Test,
}

/// An episode's walk through one demonstration's lattice.
#[derive(Clone, Debug, PartialEq)]
pub struct Cursor {
    pub demo: usize,
    pub vertex: usize,
    /// The element the last action targeted (for `Last`).
    pub last: Option<NodeRef>,
}

/// Why the policy stopped acting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum StopReason {
    /// The cursor reached the lattice's last vertex.
    EndOfLattice,
    /// The position offers nothing (or, in test mode, nothing that executes).
    NoPrograms,
    /// The sampled step cannot be executed on this page (an execution error means Terminate).
    NotExecutable,
    /// No demonstration is loaded.
    NoDemonstrations,
}

/// The policy's next move.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    Act {
        action: Action,
        choice: ProgramChoice,
        /// Skip edges taken before this step, in order.
        skipped: Vec<ProgramChoice>,
        /// The elements the step's execution paths act on (what a view highlights).
        matched: Vec<NodeRef>,
    },
    Terminate {
        skipped: Vec<ProgramChoice>,
        reason: StopReason,
        /// The sampled step that could not be executed ([`StopReason::NotExecutable`]): the
        /// episode's last choice, which the update learns from like an action's.
        choice: Option<ProgramChoice>,
    },
}

#[derive(Clone, Debug)]
pub struct WorkflowPolicy {
    pub config: WgeConfig,
    demos: Vec<DemoWorkflow>,
    rng: Rng,
}

impl WorkflowPolicy {
    pub fn new(config: WgeConfig, seed: u64) -> Self {
        WorkflowPolicy { config, demos: Vec::new(), rng: Rng::new(seed) }
    }

    pub fn demos(&self) -> &[DemoWorkflow] {
        &self.demos
    }

    /// Everything the policy has learned (lattices, weights, baselines, its generator's place),
    /// as JSON, so a page can resume it after a reload.
    pub fn to_json(&self) -> String {
        let saved = SavedPolicy { config: self.config.clone(), demos: self.demos.clone(), rng_state: self.rng.state() };
        serde_json::to_string(&saved).expect("a workflow policy serialises")
    }

    /// The policy [`Self::to_json`] wrote; a file that is not one gets a clear message.
    pub fn from_json(text: &str) -> Result<Self, String> {
        let saved: SavedPolicy = serde_json::from_str(text).map_err(|e| format!("not a saved workflow policy: {e}"))?;
        for (k, d) in saved.demos.iter().enumerate() {
            let fits = d.positions.len() == d.lattice.steps
                && d.positions.iter().all(|p| {
                    p.weights.len() == p.options.len()
                        && p.options.iter().all(|o| {
                            d.lattice.edges.get(o.edge).is_some_and(|e| match (&e.kind, o.program) {
                                (EdgeKind::Act(programs), Some(i)) => i < programs.len(),
                                (EdgeKind::Skip, None) => true,
                                _ => false,
                            })
                        })
                });
            if !fits {
                return Err(format!("saved workflow policy: demonstration {k}'s weights do not fit its lattice"));
            }
        }
        Ok(WorkflowPolicy { config: saved.config, demos: saved.demos, rng: Rng::from_state(saved.rng_state) })
    }

    /// Induces the demonstration's lattice and gives its positions their initial weights;
    /// returns its index. `steps` hold the observation before each action; `final_observation`
    /// the page after the last (lets induction see what the last action changed).
    pub fn add_demonstration(&mut self, steps: &[DemoStep], final_observation: Option<&Observation>) -> usize {
        let lattice = induce(steps, final_observation, &self.config.induction);
        self.add_induced(steps, lattice)
    }

    /// [`Self::add_demonstration`] with its lattice already induced (by `induce` with this
    /// policy's `config.induction`, perhaps a vertex at a time between a page's frames).
    pub fn add_induced(&mut self, steps: &[DemoStep], lattice: WorkflowLattice) -> usize {
        assert_eq!(lattice.steps, steps.len(), "a lattice has one vertex per demonstrated step");
        let instruction = steps.first().map(|s| s.observation.instruction.clone()).unwrap_or_default();
        let field_keys = instruction.fields.iter().map(|f| f.key.clone()).collect();
        let positions = (0..lattice.steps).map(|v| self.initial_position(&lattice, v, &steps[v].observation)).collect();
        self.demos.push(DemoWorkflow { field_keys, instruction, lattice, positions });
        self.demos.len() - 1
    }

    /// The options at vertex `v`: every workflow step of its Act edges, the `keep_programs` with
    /// the fewest execution paths on the demonstration's page; weight `init_weight` for those
    /// with the fewest of all, 0 for the rest and for skip edges.
    fn initial_position(&self, lattice: &WorkflowLattice, v: usize, page: &Observation) -> Position {
        let exec = ExecutionEnv::new(page, None);
        let mut acts = Vec::new();
        let mut skips = Vec::new();
        for (e, edge) in lattice.edges.iter().enumerate().filter(|(_, e)| e.from == v) {
            match &edge.kind {
                EdgeKind::Skip => skips.push(PositionOption { edge: e, program: None, paths: 0 }),
                EdgeKind::Act(programs) => {
                    for (p, program) in programs.iter().enumerate() {
                        let paths = exec.candidates(program).map_or(0, |c| c.len());
                        acts.push(PositionOption { edge: e, program: Some(p), paths });
                    }
                }
            }
        }
        // Stable: equally specific steps keep the induction's order.
        acts.sort_by_key(|o| o.paths);
        acts.truncate(self.config.keep_programs);
        let fewest = acts.iter().map(|o| o.paths).min();
        let mut weights: Vec<f64> = acts.iter().map(|o| if Some(o.paths) == fewest { self.config.init_weight } else { 0.0 }).collect();
        weights.extend(skips.iter().map(|_| 0.0));
        acts.extend(skips);
        Position { options: acts, weights, value: 0.0 }
    }

    /// π_w over the options of a position: softmax of the weights, or proportional to them in
    /// the linear variant (uniform if they are all 0).
    pub fn probabilities(&self, demo: usize, vertex: usize) -> Vec<f64> {
        let w = &self.demos[demo].positions[vertex].weights;
        match self.config.update {
            WeightUpdate::Softmax => softmax(w),
            WeightUpdate::Linear { .. } => {
                let total: f64 = w.iter().map(|x| x.max(0.0)).sum();
                if total > 0.0 { w.iter().map(|x| x.max(0.0) / total).collect() } else { vec![1.0 / w.len() as f64; w.len()] }
            }
        }
    }

    /// p(d | g): uniform over the demonstrations whose goal has the same field keys; when none
    /// does, each weighs 1/(|Δkeys| + 1)² (symmetric difference of the key sets).
    pub fn demo_probabilities(&self, field_keys: &[String]) -> Vec<f64> {
        let mut want: Vec<&String> = field_keys.iter().collect();
        want.sort();
        want.dedup();
        let weights: Vec<f64> = if self.demos.iter().any(|d| same_keys(&d.field_keys, &want)) {
            self.demos.iter().map(|d| if same_keys(&d.field_keys, &want) { 1.0 } else { 0.0 }).collect()
        } else {
            self.demos
                .iter()
                .map(|d| {
                    let delta = d.field_keys.iter().filter(|k| !want.contains(k)).count() + want.iter().filter(|k| !d.field_keys.contains(k)).count();
                    1.0 / ((delta + 1) as f64).powi(2)
                })
                .collect()
        };
        let total: f64 = weights.iter().sum();
        weights.iter().map(|w| w / total).collect()
    }

    /// Starts an episode for this goal: chooses a demonstration (`None` when there is none).
    pub fn start(&mut self, instruction: &Instruction) -> Option<Cursor> {
        if self.demos.is_empty() {
            return None;
        }
        let keys: Vec<String> = instruction.fields.iter().map(|f| f.key.clone()).collect();
        let demo = sample_index(&self.demo_probabilities(&keys), &mut self.rng);
        Some(Cursor { demo, vertex: 0, last: None })
    }

    /// The next action on `obs`: skip edges advance the cursor without acting; an Act choice
    /// samples an action among the step's execution paths and moves the cursor along its edge.
    pub fn next(&mut self, cursor: &mut Cursor, obs: &Observation, mode: Mode) -> Decision {
        let mut skipped = Vec::new();
        let stop = |skipped, reason| Decision::Terminate { skipped, reason, choice: None };
        loop {
            let Some(demo) = self.demos.get(cursor.demo) else { return stop(skipped, StopReason::NoDemonstrations) };
            let Some(position) = demo.positions.get(cursor.vertex) else { return stop(skipped, StopReason::EndOfLattice) };
            if position.options.is_empty() {
                return stop(skipped, StopReason::NoPrograms);
            }
            let exec = ExecutionEnv::new(obs, cursor.last);
            let option = match mode {
                Mode::Explore => sample_index(&self.probabilities(cursor.demo, cursor.vertex), &mut self.rng),
                Mode::Test => {
                    // Highest weight first; ties keep the most specific (the options' order).
                    let mut order: Vec<usize> = (0..position.options.len()).collect();
                    order.sort_by(|&a, &b| position.weights[b].total_cmp(&position.weights[a]));
                    let executes = |&k: &usize| demo.constraint(&position.options[k]).is_none_or(|c| exec.candidates(c).is_ok_and(|a| !a.is_empty()));
                    match order.into_iter().find(executes) {
                        Some(k) => k,
                        None => return stop(skipped, StopReason::NoPrograms),
                    }
                }
            };
            let chosen = &position.options[option];
            let edge = &demo.lattice.edges[chosen.edge];
            let choice = ProgramChoice { demo: cursor.demo, vertex: cursor.vertex, option, edge: chosen.edge, program: chosen.program };
            let Some(program) = demo.constraint(chosen) else {
                skipped.push(choice);
                cursor.vertex = edge.to;
                continue;
            };
            let Some(action) = exec.candidates(program).ok().and_then(|paths| self.rng.choose(&paths).cloned()) else {
                return Decision::Terminate { skipped, reason: StopReason::NotExecutable, choice: Some(choice) };
            };
            let paths = exec.candidates(program).unwrap_or_default();
            let mut matched: Vec<NodeRef> = paths.iter().filter_map(Action::target).collect();
            matched.dedup();
            cursor.vertex = edge.to;
            cursor.last = action.target();
            return Decision::Act { action, choice, skipped, matched };
        }
    }

    /// Learns from one explored episode with return G (undiscounted; the reward comes at the
    /// end, so every step's return is the episode's). Softmax: for each step, on its position's
    /// weights, w += lr·g·(G − V) with g = p(a|z)π(z)/π(a) − π(z) (the gradient of
    /// log Σ_z p(a|z)π_w(z), Eq. 5) and p(a|z) = 1/#paths when z allows a; then
    /// V ← decay·V + (1 − decay)·G. Linear: on success, `rate` is added to each chosen step.
    ///
    /// A step that could not be executed ended the episode with Terminate, an action of its own:
    /// p(Terminate | z) is 1 for every step z that cannot execute on that page, 0 for the rest.
    pub fn update(&mut self, episode: &WorkflowEpisode) {
        let acted = episode.steps.iter().map(|s| (s.choice, &s.observation, s.last, Some(&s.action)));
        let stopped = episode.stopped_at.map(|c| (c, &episode.final_observation, episode.last, None));
        for (choice, observation, last, action) in acted.chain(stopped).collect::<Vec<_>>() {
            self.update_position(choice, observation, last, action, episode);
        }
    }

    fn update_position(
        &mut self,
        choice: ProgramChoice,
        observation: &Observation,
        last: Option<NodeRef>,
        action: Option<&Action>,
        episode: &WorkflowEpisode,
    ) {
        let g_return = episode.ret();
        {
            let ProgramChoice { demo, vertex, option, .. } = choice;
            let exec = ExecutionEnv::new(observation, last);
            let probs = self.probabilities(demo, vertex);
            let d = &self.demos[demo];
            let position = &d.positions[vertex];
            // p(a | z) for each option: uniform over its paths if it allows the action taken.
            let p_action: Vec<f64> = position
                .options
                .iter()
                .map(|o| match (d.constraint(o), action) {
                    (Some(c), Some(a)) if exec.consistent(c, a) => exec.candidates(c).map_or(0.0, |paths| 1.0 / paths.len().max(1) as f64),
                    (Some(c), None) if exec.candidates(c).is_err() => 1.0,
                    _ => 0.0,
                })
                .collect();
            let pi_a: f64 = p_action.iter().zip(&probs).map(|(p, q)| p * q).sum();
            let lr = self.config.learning_rate;
            let decay = self.config.baseline_decay;
            let position = &mut self.demos[demo].positions[vertex];
            match self.config.update {
                WeightUpdate::Softmax => {
                    if pi_a > 0.0 {
                        let advantage = g_return - position.value;
                        for k in 0..position.weights.len() {
                            let g = p_action[k] * probs[k] / pi_a - probs[k];
                            position.weights[k] += lr * g * advantage;
                        }
                    }
                }
                WeightUpdate::Linear { rate } => {
                    if episode.succeeded() {
                        position.weights[option] += rate;
                    }
                }
            }
            position.value = decay * position.value + (1.0 - decay) * g_return;
        }
    }
}

#[derive(Serialize, Deserialize)]
struct SavedPolicy {
    config: WgeConfig,
    demos: Vec<DemoWorkflow>,
    rng_state: u64,
}

fn same_keys(keys: &[String], want: &[&String]) -> bool {
    let mut k: Vec<&String> = keys.iter().collect();
    k.sort();
    k.dedup();
    k == want
}

fn softmax(w: &[f64]) -> Vec<f64> {
    let max = w.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = w.iter().map(|x| (x - max).exp()).collect();
    let total: f64 = e.iter().sum();
    e.iter().map(|x| x / total).collect()
}

/// An index drawn with the given probabilities (they sum to 1).
fn sample_index(probs: &[f64], rng: &mut Rng) -> usize {
    let mut u = rng.next_f64();
    for (i, p) in probs.iter().enumerate() {
        if u < *p {
            return i;
        }
        u -= p;
    }
    // Rounding left u just above the total: the last option with any mass.
    probs.iter().rposition(|p| *p > 0.0).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::{Environment, Field};
    use crate::sim::SimEnv;
    use crate::util::block_on;
    use crate::wge::constraint::{ElementSet, StringSelector};
    use crate::wge::explore::{EpisodeEnd, WorkflowStep, run_episode, train_episode};
    use crate::wge::induction::LatticeEdge;

    /// A scripted (not a person's) demonstration of sim-click: click the named button.
    fn sim_click_demo(seed: u32) -> (Vec<DemoStep>, Observation) {
        let mut env = SimEnv::new(None);
        let obs = block_on(env.reset(&SimEnv::spec("sim-click"), seed)).unwrap();
        let target = obs.instruction.field("target").unwrap().to_string();
        let button = obs.dom.nodes.iter().find(|n| n.tag == "BUTTON" && n.text == target).unwrap().r#ref;
        let step = block_on(env.step(&Action::Click(button))).unwrap();
        assert_eq!(step.raw_reward, 1.0);
        (vec![DemoStep { observation: obs, action: Action::Click(button) }], step.observation)
    }

    fn with_keys(mut steps: Vec<DemoStep>, keys: &[&str]) -> Vec<DemoStep> {
        let fields = keys.iter().map(|k| Field { key: k.to_string(), value: format!("v-{k}") }).collect();
        let first = &mut steps[0].observation.instruction;
        *first = Instruction::new(&first.utterance, fields);
        steps
    }

    #[test]
    fn demonstrations_are_chosen_by_their_goal_field_keys() {
        let mut policy = WorkflowPolicy::new(WgeConfig::default(), 1);
        let (d0, f0) = sim_click_demo(1);
        let (d1, f1) = sim_click_demo(2);
        let (d2, f2) = sim_click_demo(3);
        policy.add_demonstration(&d0, Some(&f0));
        policy.add_demonstration(&d1, Some(&f1));
        policy.add_demonstration(&with_keys(d2, &["by", "task"]), Some(&f2));
        let keys = |k: &[&str]| k.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        // Same keys: uniform over those demonstrations only.
        assert_eq!(policy.demo_probabilities(&keys(&["target"])), [0.5, 0.5, 0.0]);
        assert_eq!(policy.demo_probabilities(&keys(&["task", "by"])), [0.0, 0.0, 1.0]);
        // None the same: 1/(|Δ| + 1)². {x} vs {target}: Δ = 2 → 1/9; vs {by, task}: Δ = 3 → 1/16.
        let p = policy.demo_probabilities(&keys(&["x"]));
        let total = 2.0 / 9.0 + 1.0 / 16.0;
        for (got, want) in p.iter().zip([1.0 / 9.0 / total, 1.0 / 9.0 / total, 1.0 / 16.0 / total]) {
            assert!((got - want).abs() < 1e-12, "{p:?}");
        }
        // Sampling follows them: a {target} goal never gets the {by, task} demonstration.
        let ins = Instruction::new("Click on \"ok\".", vec![Field { key: "target".into(), value: "ok".into() }]);
        let mut seen = [0; 3];
        for _ in 0..200 {
            seen[policy.start(&ins).unwrap().demo] += 1;
        }
        assert_eq!(seen[2], 0);
        assert!(seen[0] > 60 && seen[1] > 60, "{seen:?}");
    }

    #[test]
    fn initial_weights_favour_the_steps_with_fewest_paths_and_keep_fifty() {
        let (d, f) = sim_click_demo(4);
        let mut policy = WorkflowPolicy::new(WgeConfig::default(), 1);
        policy.add_demonstration(&d, Some(&f));
        let demo = &policy.demos()[0];
        let position = &demo.positions[0];
        let programs = demo.lattice.programs(0).len();
        assert!(programs > 0);
        assert_eq!(position.options.len(), programs.min(50));
        let fewest = position.options.iter().map(|o| o.paths).min().unwrap();
        assert_eq!(fewest, 1, "clicking the named button is a single path");
        for (o, w) in position.options.iter().zip(&position.weights) {
            assert_eq!(*w, if o.paths == fewest { 1.0 } else { 0.0 }, "{:?}", demo.constraint(o));
        }
        // Sorted by paths, so the kept ones are the most specific.
        assert!(position.options.windows(2).all(|w| w[0].paths <= w[1].paths));
        // With a smaller cap the least specific go first.
        let mut tight = WorkflowPolicy::new(WgeConfig { keep_programs: 3, ..WgeConfig::default() }, 1);
        tight.add_demonstration(&d, Some(&f));
        assert_eq!(tight.demos()[0].positions[0].options.len(), 3.min(programs));
        assert!(tight.demos()[0].positions[0].options.iter().all(|o| o.paths == fewest));
    }

    /// A page with three buttons and a hand-made one-step lattice: Click(Tag BUTTON) (3 paths),
    /// Click(Exact "b") (1 path) and Click(Exact "c") (1 path).
    fn hand_policy(weights: [f64; 3]) -> (WorkflowPolicy, Observation) {
        let (d, _) = sim_click_demo(5);
        let mut obs = d[0].observation.clone();
        let body = obs.dom.nodes[0].clone();
        let mut nodes = vec![body];
        nodes[0].children.clear();
        for (k, label) in ["a", "b", "c"].iter().enumerate() {
            let mut n = obs.dom.nodes.iter().find(|n| n.tag == "BUTTON").unwrap().clone();
            n.r#ref = k as NodeRef + 2;
            n.parent = Some(0);
            n.text = label.to_string();
            n.rect.top = 50.0 + 40.0 * k as f32;
            nodes[0].children.push(k + 1);
            nodes.push(n);
        }
        obs.dom.nodes = nodes;
        obs.dom.validate().unwrap();
        let lit = |s: &str| StringSelector::Literal(s.into());
        let programs = vec![
            Constraint::Click(ElementSet::tag("BUTTON")),
            Constraint::Click(ElementSet::exact(lit("b"))),
            Constraint::Click(ElementSet::exact(lit("c"))),
        ];
        let lattice = WorkflowLattice { steps: 1, edges: vec![LatticeEdge { from: 0, to: 1, kind: EdgeKind::Act(programs) }], cut_short: Vec::new() };
        let options = vec![
            PositionOption { edge: 0, program: Some(0), paths: 3 },
            PositionOption { edge: 0, program: Some(1), paths: 1 },
            PositionOption { edge: 0, program: Some(2), paths: 1 },
        ];
        let position = Position { options, weights: weights.to_vec(), value: 0.0 };
        let mut policy = WorkflowPolicy::new(WgeConfig::default(), 7);
        policy.demos.push(DemoWorkflow {
            field_keys: vec!["target".into()],
            instruction: obs.instruction.clone(),
            lattice,
            positions: vec![position],
        });
        (policy, obs)
    }

    fn one_step_episode(obs: &Observation, action: Action, option: usize, raw_reward: f64) -> WorkflowEpisode {
        WorkflowEpisode {
            task: SimEnv::spec("sim-click"),
            seed: 0,
            mode: Mode::Explore,
            demo: Some(0),
            field_keys: vec!["target".into()],
            steps: vec![WorkflowStep {
                observation: obs.clone(),
                action,
                choice: ProgramChoice { demo: 0, vertex: 0, option, edge: 0, program: Some(option) },
                skipped: vec![],
                matched: vec![],
                last: None,
            }],
            final_observation: obs.clone(),
            trailing_skips: vec![],
            stopped_at: None,
            last: None,
            end: EpisodeEnd::Done,
            reward: raw_reward,
            raw_reward,
            reason: None,
        }
    }

    #[test]
    fn the_softmax_update_matches_hand_computed_values() {
        // Weights 0, 0, 0: π = 1/3 each. Clicking "b" (ref 3): p(a|Tag) = 1/3, p(a|Exact b) = 1,
        // p(a|Exact c) = 0. π(a) = 1/9 + 1/3 = 4/9.
        // g = p(a|z)π(z)/π(a) − π(z): Tag: (1/9)/(4/9) − 1/3 = −1/12; b: (1/3)/(4/9) − 1/3 = 5/12;
        // c: −1/3. With G = 1 and V = 0: w += 0.8·g.
        let (mut policy, obs) = hand_policy([0.0; 3]);
        policy.update(&one_step_episode(&obs, Action::Click(3), 1, 1.0));
        let w = &policy.demos()[0].positions[0].weights;
        for (got, want) in w.iter().zip([-0.8 / 12.0, 0.8 * 5.0 / 12.0, -0.8 / 3.0]) {
            assert!((got - want).abs() < 1e-12, "{w:?}");
        }
        // V ← 0.9·0 + 0.1·1.
        assert!((policy.demos()[0].positions[0].value - 0.1).abs() < 1e-12);
        // A second, failed episode (G = −1) clicking "a": only Tag allows it. Advantage −1 − 0.1.
        let before = policy.demos()[0].positions[0].weights.clone();
        let pi = policy.probabilities(0, 0);
        policy.update(&one_step_episode(&obs, Action::Click(2), 0, -1.0));
        let pi_a = pi[0] / 3.0;
        let after = &policy.demos()[0].positions[0].weights;
        for k in 0..3 {
            let p = if k == 0 { 1.0 / 3.0 } else { 0.0 };
            let g = p * pi[k] / pi_a - pi[k];
            assert!((after[k] - (before[k] + 0.8 * g * (-1.1))).abs() < 1e-12, "{k}: {after:?}");
        }
        assert!((policy.demos()[0].positions[0].value - (0.9 * 0.1 - 0.1)).abs() < 1e-12);
        // The failed click made the broad step less likely.
        assert!(after[0] < before[0]);
    }

    #[test]
    fn a_step_that_cannot_execute_is_a_terminate_the_update_learns_from() {
        // No "c" on the page: sampling Exact "c" ended the episode (G = −1) with V at 0.5.
        // p(Terminate | z) = 1 only for Exact "c"; π = 1/3 each, so π(Terminate) = 1/3 and
        // g = (2/3 for "c", −1/3 for the others); w += 0.8·g·(−1 − 0.5).
        let (mut policy, mut obs) = hand_policy([0.0; 3]);
        obs.dom.nodes[3].text = "z".into();
        policy.demos[0].positions[0].value = 0.5;
        let mut episode = one_step_episode(&obs, Action::Click(2), 2, -1.0);
        episode.steps.clear();
        episode.end = EpisodeEnd::Stopped(StopReason::NotExecutable);
        episode.stopped_at = Some(ProgramChoice { demo: 0, vertex: 0, option: 2, edge: 0, program: Some(2) });
        policy.update(&episode);
        let w = &policy.demos()[0].positions[0].weights;
        for (got, want) in w.iter().zip([0.8 * (-1.0 / 3.0) * -1.5, 0.8 * (-1.0 / 3.0) * -1.5, 0.8 * (2.0 / 3.0) * -1.5]) {
            assert!((got - want).abs() < 1e-12, "{w:?}");
        }
        // The step that could not execute became less likely; V ← 0.9·0.5 + 0.1·(−1).
        assert!(w[2] < w[0]);
        assert!((policy.demos()[0].positions[0].value - 0.35).abs() < 1e-12);
    }

    #[test]
    fn the_linear_variant_adds_its_rate_to_chosen_steps_on_success_only() {
        let (mut policy, obs) = hand_policy([1.0, 1.0, 0.0]);
        policy.config.update = WeightUpdate::Linear { rate: 0.5 };
        assert_eq!(policy.probabilities(0, 0), [0.5, 0.5, 0.0]);
        policy.update(&one_step_episode(&obs, Action::Click(2), 0, -1.0));
        assert_eq!(policy.demos()[0].positions[0].weights, [1.0, 1.0, 0.0]);
        policy.update(&one_step_episode(&obs, Action::Click(3), 1, 1.0));
        assert_eq!(policy.demos()[0].positions[0].weights, [1.0, 1.5, 0.0]);
    }

    #[test]
    fn test_mode_plays_the_best_step_that_executes() {
        // "c" weighs most, then "b", then Tag.
        let (mut policy, mut obs) = hand_policy([0.0, 1.0, 2.0]);
        let mut cursor = Cursor { demo: 0, vertex: 0, last: None };
        match policy.next(&mut cursor, &obs, Mode::Test) {
            Decision::Act { action, choice, matched, .. } => {
                assert_eq!((action, choice.option, matched), (Action::Click(4), 2, vec![4]));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(cursor.vertex, 1);
        // Past the last vertex: Terminate.
        assert!(matches!(policy.next(&mut cursor, &obs, Mode::Test), Decision::Terminate { reason: StopReason::EndOfLattice, .. }));
        // Without a "c" on the page, the best that executes is "b".
        obs.dom.nodes[3].text = "z".into();
        let mut cursor = Cursor { demo: 0, vertex: 0, last: None };
        match policy.next(&mut cursor, &obs, Mode::Test) {
            Decision::Act { action, .. } => assert_eq!(action, Action::Click(3)),
            other => panic!("{other:?}"),
        }
        // In exploration the same non-executing choice is a Terminate.
        let (mut only_c, mut page) = hand_policy([-50.0, -50.0, 50.0]);
        page.dom.nodes[3].text = "z".into();
        let mut cursor = Cursor { demo: 0, vertex: 0, last: None };
        assert!(matches!(only_c.next(&mut cursor, &page, Mode::Explore), Decision::Terminate { reason: StopReason::NotExecutable, .. }));
    }

    #[test]
    fn skip_edges_advance_the_cursor_without_acting() {
        let (mut policy, obs) = hand_policy([0.0, 0.0, 5.0]);
        // Prepend a vertex whose only way on is a skip edge.
        let d = &mut policy.demos[0];
        for e in &mut d.lattice.edges {
            e.from += 1;
            e.to += 1;
        }
        d.lattice.steps = 2;
        d.lattice.edges.push(LatticeEdge { from: 0, to: 1, kind: EdgeKind::Skip });
        d.positions.insert(0, Position { options: vec![PositionOption { edge: 1, program: None, paths: 0 }], weights: vec![0.0], value: 0.0 });
        let mut cursor = Cursor { demo: 0, vertex: 0, last: None };
        match policy.next(&mut cursor, &obs, Mode::Test) {
            Decision::Act { action, choice, skipped, .. } => {
                assert_eq!(action, Action::Click(4));
                assert_eq!(skipped.len(), 1);
                assert_eq!((skipped[0].vertex, skipped[0].program, choice.vertex), (0, None, 1));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(cursor.vertex, 2);
    }

    #[test]
    fn a_saved_policy_resumes_where_it_was() {
        let mut policy = WorkflowPolicy::new(WgeConfig::default(), 9);
        let (d, f) = sim_click_demo(6);
        policy.add_demonstration(&d, Some(&f));
        let mut env = SimEnv::new(None);
        let spec = SimEnv::spec("sim-click");
        for seed in 0..20 {
            block_on(train_episode(&mut env, &mut policy, &spec, seed)).unwrap();
        }
        let mut back = WorkflowPolicy::from_json(&policy.to_json()).unwrap();
        // JSON keeps the weights to within a rounding of their last digit.
        let (a, b) = (&back.demos()[0], &policy.demos()[0]);
        assert_eq!((&a.lattice, &a.field_keys, &a.positions[0].options), (&b.lattice, &b.field_keys, &b.positions[0].options));
        for (x, y) in a.positions[0].weights.iter().zip(&b.positions[0].weights) {
            assert!((x - y).abs() < 1e-12);
        }
        // The same generator state: both go on to play the same episodes.
        for seed in 20..25 {
            let a = block_on(train_episode(&mut env, &mut policy, &spec, seed)).unwrap();
            let b = block_on(train_episode(&mut env, &mut back, &spec, seed)).unwrap();
            assert_eq!(a, b);
        }
        assert!(WorkflowPolicy::from_json("{}").unwrap_err().contains("not a saved workflow policy"));
        let mut broken: serde_json::Value = serde_json::from_str(&policy.to_json()).unwrap();
        broken["demos"][0]["positions"][0]["weights"] = serde_json::json!([]);
        assert!(WorkflowPolicy::from_json(&broken.to_string()).unwrap_err().contains("do not fit"));
    }

    #[test]
    fn a_policy_without_demonstrations_stops_at_once() {
        let mut env = SimEnv::new(None);
        let mut policy = WorkflowPolicy::new(WgeConfig::default(), 1);
        let e = block_on(run_episode(&mut env, &mut policy, &SimEnv::spec("sim-click"), 1, Mode::Explore)).unwrap();
        assert_eq!((e.steps.len(), e.end, e.raw_reward), (0, EpisodeEnd::Stopped(StopReason::NoDemonstrations), -1.0));
    }

    /// Seeded WGE on the simulator: from 3 scripted demonstrations of sim-click, 200 exploration
    /// episodes (policy seed 1, episode seeds 100..300) lift the exploration success rate (0.44
    /// over the first 50, 0.94 over the last 50), and test mode then solves 50 held-out seeds.
    #[test]
    fn workflow_exploration_learns_sim_click() {
        let mut policy = WorkflowPolicy::new(WgeConfig::default(), 1);
        for seed in 1..=3 {
            let (d, f) = sim_click_demo(seed);
            policy.add_demonstration(&d, Some(&f));
        }
        let mut env = SimEnv::new(None);
        let spec = SimEnv::spec("sim-click");
        let mut wins = Vec::new();
        for seed in 100..300 {
            let e = block_on(train_episode(&mut env, &mut policy, &spec, seed)).unwrap();
            assert!(e.steps.len() <= 10);
            for s in &e.steps {
                assert!(s.matched.contains(&s.action.target().unwrap()));
            }
            wins.push(e.succeeded());
        }
        let rate = |w: &[bool]| w.iter().filter(|&&x| x).count() as f64 / w.len() as f64;
        let (early, late) = (rate(&wins[..50]), rate(&wins[150..]));
        println!("sim-click: exploration success {early} over the first 50 episodes, {late} over the last 50");
        assert!(late >= early + 0.3 && late >= 0.7, "success {early} in the first 50 episodes, {late} in the last 50");
        let test: Vec<bool> =
            (1000..1050).map(|seed| block_on(run_episode(&mut env, &mut policy, &spec, seed, Mode::Test)).unwrap().succeeded()).collect();
        assert_eq!(rate(&test), 1.0);
    }
}

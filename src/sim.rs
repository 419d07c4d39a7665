//! A small page-graph environment in pure Rust, for training agents natively (tests, quick
//! experiments) without a browser. Its pages are built directly as [`DomGraph`]s with the same
//! shape the live reader produces, and it obeys the same [`Environment`] contract.
//!
//! Tasks:
//! - `sim-click`: "Click on the "W" button." among 2–5 labelled buttons and some text;
//!   the named button gives +1, another button −1.
//! - `sim-type`: "Enter "W" into the text field and press Submit."; Submit gives +1 when the
//!   field holds exactly W, −1 otherwise.

use crate::env::{
    Action, DomGraph, DomNode, EnvError, Environment, EpisodeGuard, Field, Instruction, NodeRef, NodeValue, Observation, Rect, STEP_LIMIT_REASON,
    Step,
};
use crate::policy::Policy;
use crate::rng::Rng;
use crate::task::{GeneratedSite, TaskSpec};

pub const SIM_TASKS: [&str; 2] = ["sim-click", "sim-type"];

const WORDS: [&str; 24] = [
    "ok", "yes", "no", "next", "back", "save", "open", "send", "stop", "play", "edit", "copy", "help", "undo", "redo", "done", "skip", "load",
    "like", "share", "print", "close", "apply", "reset",
];
const FILLER: [&str; 6] = ["lorem", "ipsum", "dolor", "amet", "sed", "nunc"];

#[derive(Clone, Debug)]
struct SimNode {
    tag: &'static str,
    text: String,
    id: &'static str,
    value: NodeValue,
    children: Vec<usize>,
    parent: Option<usize>,
    tampered: bool,
}

pub struct SimEnv {
    guard: EpisodeGuard,
    task: String,
    target: String,
    nodes: Vec<SimNode>,
    focused: Option<usize>,
    instruction: Instruction,
}

impl SimEnv {
    pub fn new(max_steps: Option<u32>) -> Self {
        SimEnv {
            guard: EpisodeGuard::new(max_steps),
            task: String::new(),
            target: String::new(),
            nodes: Vec::new(),
            focused: None,
            instruction: Instruction::default(),
        }
    }

    pub fn spec(task: &str) -> TaskSpec {
        TaskSpec::Inline { name: task.to_string(), html: String::new() }
    }

    fn add(&mut self, parent: Option<usize>, tag: &'static str, text: &str, id: &'static str, value: NodeValue) -> usize {
        let i = self.nodes.len();
        self.nodes.push(SimNode { tag, text: text.into(), id, value, children: vec![], parent, tampered: false });
        if let Some(p) = parent {
            self.nodes[p].children.push(i);
        }
        i
    }

    fn observe(&self) -> Observation {
        let nodes = self
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| DomNode {
                r#ref: i as NodeRef + 1,
                parent: n.parent,
                children: n.children.clone(),
                tag: n.tag.to_string(),
                text: if n.children.is_empty() { n.text.clone() } else { String::new() },
                value: n.value.clone(),
                id: n.id.to_string(),
                classes: vec![],
                // A simple vertical layout: every node one row below the previous.
                rect: Rect { left: 4.0, top: 50.0 + 14.0 * i as f32, width: 60.0, height: 12.0 },
                focused: self.focused == Some(i) || (self.focused.is_none() && i == 0),
                tampered: n.tampered,
                options: vec![],
                ..DomNode::default()
            })
            .collect();
        Observation { instruction: self.instruction.clone(), dom: DomGraph { nodes, truncated: 0 }, ..Default::default() }
    }

    fn outcome(&mut self, raw: f64, reason: Option<&str>) -> Step {
        let capped = self.guard.record(raw != 0.0);
        let (raw, reason) = if capped { (-1.0, Some(STEP_LIMIT_REASON)) } else { (raw, reason) };
        Step { observation: self.observe(), reward: raw, raw_reward: raw, done: raw != 0.0, reason: reason.map(str::to_string), ..Step::default() }
    }
}

impl Environment<GeneratedSite> for SimEnv {
    async fn reset(&mut self, task: &TaskSpec, seed: u32) -> Result<Observation, EnvError> {
        let name = task.name();
        if !SIM_TASKS.contains(&name) {
            return Err(EnvError::UnknownTask(name.to_string()));
        }
        let mut rng = Rng::new(seed as u64 ^ if name == "sim-type" { 0xabcd } else { 0 });
        self.task = name.to_string();
        self.nodes.clear();
        self.focused = None;
        let body = self.add(None, "BODY", "", "", NodeValue::None);
        let area = self.add(Some(body), "DIV", "", "area", NodeValue::None);
        let mut items: Vec<(&'static str, String, &'static str, NodeValue)> = Vec::new();
        if name == "sim-click" {
            let k = 2 + rng.below(4);
            let mut words: Vec<&str> = WORDS.to_vec();
            for i in 0..k {
                let j = i + rng.below(words.len() - i);
                words.swap(i, j);
            }
            self.target = words[0].to_string();
            for w in &words[..k] {
                items.push(("BUTTON", w.to_string(), "", NodeValue::None));
            }
            self.instruction = Instruction::new(
                &format!("Click on the \"{}\" button.", self.target),
                vec![Field { key: "target".into(), value: self.target.clone() }],
            );
        } else {
            self.target = rng.choose(&WORDS).unwrap().to_string();
            items.push(("INPUT_text", String::new(), "tt", NodeValue::Text(String::new())));
            items.push(("BUTTON", "Submit".into(), "subbtn", NodeValue::None));
            self.instruction = Instruction::new(
                &format!("Enter \"{}\" into the text field and press Submit.", self.target),
                vec![Field { key: "target".into(), value: self.target.clone() }],
            );
        }
        for _ in 0..rng.below(3) {
            items.push(("SPAN", rng.choose(&FILLER).unwrap().to_string(), "", NodeValue::None));
        }
        for i in (1..items.len()).rev() {
            items.swap(i, rng.below(i + 1));
        }
        for (tag, text, id, value) in items {
            self.add(Some(area), tag, &text, id, value);
        }
        self.guard.begin();
        Ok(self.observe())
    }

    async fn step(&mut self, action: &Action) -> Result<Step, EnvError> {
        self.guard.admit()?;
        let r = action.element_target()?;
        let i = (r as usize).checked_sub(1).filter(|&i| i < self.nodes.len()).ok_or(EnvError::UnknownRef(r))?;
        match action {
            Action::Click(_) => {
                self.nodes[i].tampered = true;
                let n = &self.nodes[i];
                self.focused = matches!(n.tag, "BUTTON" | "INPUT_text").then_some(i);
                if n.tag == "BUTTON" {
                    let (ok, reason) = if self.task == "sim-click" {
                        (n.text == self.target, format!("clicked the \"{}\" button", n.text))
                    } else {
                        let v = self.nodes.iter().find_map(|m| m.value.as_text().map(str::to_string)).unwrap_or_default();
                        (v == self.target, format!("entered \"{v}\""))
                    };
                    return Ok(if ok { self.outcome(1.0, None) } else { self.outcome(-1.0, Some(&reason)) });
                }
            }
            Action::Type(_, text) => {
                self.focused = Some(i);
                if let NodeValue::Text(v) = &mut self.nodes[i].value {
                    v.push_str(text);
                }
            }
            Action::Select(..) | Action::SetValue(..) => {
                return Err(EnvError::BadTarget { action: format!("select or set in #{r}"), detail: "no <select> or form field here".into() });
            }
            _ => {
                return Err(EnvError::BadTarget { action: action.describe(None), detail: "the simulator clicks and types only".into() });
            }
        }
        Ok(self.outcome(0.0, None))
    }
}

/// The simulator's scripted oracle, as the live tasks have theirs (`policy::oracle`): it solves
/// both tasks from the observation — type the target into the field until it holds it, then
/// Submit; or click the button named by the target. Tests use it for known-good episodes.
pub struct SimOracle;

impl Policy for SimOracle {
    fn act(&mut self, obs: &Observation) -> Option<Action> {
        let target = obs.instruction.field("target")?;
        if let Some(input) = obs.dom.nodes.iter().find(|n| n.tag == "INPUT_text") {
            if input.value.as_text() != Some(target) {
                return Some(Action::Type(input.r#ref, target.to_string()));
            }
            return obs.dom.nodes.iter().find(|n| n.text == "Submit").map(|n| Action::Click(n.r#ref));
        }
        obs.dom.nodes.iter().find(|n| n.tag == "BUTTON" && n.text == target).map(|n| Action::Click(n.r#ref))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::run_episode;
    use crate::util::block_on;

    #[test]
    fn oracle_solves_and_seeds_reproduce() {
        let mut env = SimEnv::new(Some(10));
        for task in SIM_TASKS {
            for seed in 0..20 {
                let r = block_on(run_episode(&mut env, &mut SimOracle, &SimEnv::spec(task), seed, |_, _| {})).unwrap();
                assert_eq!(r.raw_reward, 1.0, "{task} seed {seed}");
                let a = block_on(env.reset(&SimEnv::spec(task), seed)).unwrap();
                let b = block_on(env.reset(&SimEnv::spec(task), seed)).unwrap();
                assert_eq!(a, b);
                a.dom.validate().unwrap();
            }
        }
    }

    #[test]
    fn wrong_actions_fail_and_done_is_final() {
        let mut env = SimEnv::new(Some(3));
        let obs = block_on(env.reset(&SimEnv::spec("sim-type"), 1)).unwrap();
        let submit = obs.dom.nodes.iter().find(|n| n.text == "Submit").unwrap().r#ref;
        let s = block_on(env.step(&Action::Click(submit))).unwrap();
        assert_eq!((s.raw_reward, s.done), (-1.0, true));
        assert_eq!(block_on(env.step(&Action::Click(submit))).unwrap_err(), EnvError::EpisodeDone);

        let obs = block_on(env.reset(&SimEnv::spec("sim-click"), 1)).unwrap();
        let area = obs.dom.nodes.iter().find(|n| n.id == "area").unwrap().r#ref;
        for _ in 0..2 {
            assert!(!block_on(env.step(&Action::Click(area))).unwrap().done);
        }
        let s = block_on(env.step(&Action::Click(area))).unwrap();
        assert_eq!((s.raw_reward, s.reason.as_deref()), (-1.0, Some(STEP_LIMIT_REASON)));
        assert!(block_on(env.reset(&SimEnv::spec("sim-nope"), 1)).is_err());
    }
}

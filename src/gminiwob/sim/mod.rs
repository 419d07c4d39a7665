//! [`SiteSim`]: a generated site simulated natively, with no browser, for fast navigator
//! training. Its observations and rewards equal what the live stack gives for the same design,
//! seed, values, reward settings and actions; `tests/web_gminiwob_sim.rs` runs both side by side
//! on every test site and level and on random designs and checks every step.
//!
//! What is simulated, each after the live code it mirrors:
//! - the site: the very [`Tree`] the renderer built (`super::site`), with the boxes
//!   `super::layout` gave it, and only the page showing visible;
//! - the reader (`crate::web::reader`): nodes in document order, options and hidden pages skipped,
//!   tags (`INPUT_<type>`, upper case), values, a leaf's text (a select's: its chosen option's),
//!   options, placeholder, name, aria-label, classes (`visited` added by the page), focus, and
//!   `tampered` (the target of a click event this episode, as `crate::web::frame`'s listener marks
//!   it); refs numbered from 1 in the order nodes are first seen;
//! - the actions (`crate::web::actuator`): a click moves focus to the nearest focusable
//!   ancestor (or blurs) and then activates the element (checkboxes toggle, radios check and
//!   uncheck their group, labels focus and click their control, links are prevented); `Type`
//!   clicks its target, then inserts where the document's selection is (the text field last
//!   focused, as Chrome's `insertText` does), with the actuator's fallback for fields it cannot
//!   edit;
//!   `Select` and `SetValue` as the actuator defines them;
//! - the page's runtime (`tasks/gminiwob.html`): `visited` marks from click/input/change events
//!   inside a `[data-field]`, `data-end` ends the episode with raw −1, `data-next` shows the next
//!   page, `data-submit` scores the fields;
//! - the environment (`crate::web::env`): the step limit and its reward, Φ, the shaped reward and
//!   whether the DOM changed.
//!
//! Not simulated, and how the sim's observations differ from the live ones:
//! - only the site subtree is observed: `dom.nodes[0]` is `#gsite`, and a sim ref `r` is the live
//!   ref `r + k`, where `k` is the number of nodes the live reader numbers before `#gsite` (3 on
//!   `tasks/gminiwob.html`: `BODY`, `#wrap`, `#area`); rects are relative to `#gsite`'s box
//!   (the live rect minus `#gsite`'s), in whole pixels;
//! - colours (`bg_color`, `fg_color`) are left empty;
//! - there is no clock: `Step::reward` is the raw reward (the live page decays a success with the
//!   episode's time), and pages never time out;
//! - node caps (`EnvConfig::max_nodes`) are not applied (sites have a few hundred elements).
//!
//! One room a job: this file holds the simulator's state, its episodes and steps; `reader` reads
//! the page as the live reader does; `page` is the page's runtime and the actions.

use std::collections::HashMap;

use super::layout::Bounds;
use super::reward::{Shaper, dom_changed, potential};
use super::site::{Site, Tree, render};
use super::{Design, GeneratedSite, RewardConfig, Values};
use crate::env::{Action, DomGraph, EnvError, Environment, EpisodeGuard, Instruction, NodeRef, Observation, STEP_LIMIT_REASON, Step};

mod page;
mod reader;
#[cfg(test)]
mod tests;

use reader::{Reading, input_type};

/// The lab's task spec, seen from here (gMiniWoB's generated sites are this world's).
type TaskSpec = crate::env::TaskSpec<GeneratedSite>;

/// What changes on an element while the site is used.
#[derive(Clone, Debug, Default)]
struct State {
    /// An input's value (for checkboxes and radios, their `value` attribute).
    value: String,
    checked: bool,
    /// A select's chosen option, as an index among its options.
    selected: usize,
    /// The page's `visited` class.
    visited: bool,
    tampered: bool,
}

/// How the episode ended, as the page's reward globals say.
#[derive(Clone, Debug, Default)]
struct Outcome {
    done: bool,
    raw: f64,
    reason: Option<String>,
}

/// A generated site in pure Rust; see the module documentation.
pub struct SiteSim {
    design: Design,
    values: Values,
    reward: RewardConfig,
    seed: u32,
    site: Site,
    /// Each element's box relative to `#gsite`.
    boxes: Vec<Option<Bounds>>,
    /// The page each element is on (`None` for `#gsite` itself).
    page_of: Vec<Option<u32>>,
    /// The first element with each id.
    by_id: HashMap<String, usize>,
    reading: Vec<Reading>,
    instruction: Instruction,
    state: Vec<State>,
    focus: Option<usize>,
    /// The text field holding the document's selection: where inserted text goes.
    selection: Option<usize>,
    page: u32,
    /// `refs[r - 1]` is the element with ref `r`.
    refs: Vec<usize>,
    ref_of: Vec<Option<NodeRef>>,
    guard: EpisodeGuard,
    shaper: Shaper,
    outcome: Outcome,
    /// The last observation's graph and page, to tell whether an action changed anything.
    last: (DomGraph, u32),
}

impl SiteSim {
    /// The site of `design` for `seed`, with an episode started.
    pub fn new(design: Design, seed: u32, values: Values, reward: RewardConfig) -> Self {
        let mut sim = SiteSim {
            design,
            values,
            reward,
            seed,
            site: Site { pages: 0, profile: Vec::new(), fields: Vec::new(), html: String::new(), tree: Tree::default() },
            boxes: Vec::new(),
            page_of: Vec::new(),
            by_id: HashMap::new(),
            reading: Vec::new(),
            instruction: Instruction::default(),
            state: Vec::new(),
            focus: None,
            selection: None,
            page: 0,
            refs: Vec::new(),
            ref_of: Vec::new(),
            guard: EpisodeGuard::new(Some(reward.step_limit)),
            shaper: Shaper::new(reward),
            outcome: Outcome::default(),
            last: (DomGraph::default(), 0),
        };
        sim.reset_seed(seed);
        sim
    }

    /// The site of a generated task (`TaskSpec::Generated`) for `seed`.
    pub fn from_task(task: &TaskSpec, seed: u32) -> Result<Self, EnvError> {
        match task {
            TaskSpec::Generated { site, .. } => Ok(SiteSim::new(site.design.clone(), seed, site.values, site.reward)),
            other => Err(EnvError::UnknownTask(format!("{} (the site simulator runs generated sites only)", other.name()))),
        }
    }

    pub fn site(&self) -> &Site {
        &self.site
    }
    pub fn seed(&self) -> u32 {
        self.seed
    }
    /// The page showing.
    pub fn page(&self) -> u32 {
        self.page
    }
    pub fn steps(&self) -> u32 {
        self.guard.steps()
    }

    /// Starts the episode again on the same site (same seed).
    pub fn reset(&mut self) -> Observation {
        self.state = self
            .site
            .tree
            .elements
            .iter()
            .map(|el| State {
                // An input's value starts as its attribute; a checkbox's or radio's without one is "on".
                value: match el.tag {
                    "input" if matches!(input_type(el), "checkbox" | "radio") => el.attr_value("value").unwrap_or("on").to_string(),
                    "input" => el.attr_value("value").unwrap_or("").to_string(),
                    _ => String::new(),
                },
                selected: if el.tag == "select" {
                    el.children.iter().position(|&o| self.site.tree.elements[o].has_attr("selected")).unwrap_or(0)
                } else {
                    0
                },
                ..State::default()
            })
            .collect();
        self.focus = None;
        self.selection = None;
        self.page = 0;
        self.refs.clear();
        self.ref_of = vec![None; self.state.len()];
        self.outcome = Outcome::default();
        self.guard.set_max_steps(Some(self.reward.step_limit));
        self.guard.begin();
        self.shaper = Shaper::new(self.reward);
        self.shaper.begin();
        let obs = self.observe();
        self.last = (obs.dom.clone(), obs.page);
        obs
    }

    /// Renders the site for `seed` and starts an episode on it.
    pub fn reset_seed(&mut self, seed: u32) -> Observation {
        self.seed = seed;
        self.site = render(&self.design, seed, self.values);
        let tree = &self.site.tree;
        self.boxes = tree.site_boxes();
        self.page_of = Vec::with_capacity(tree.elements.len());
        for el in &tree.elements {
            let own = el.has_class("gpage").then(|| el.attr_value("data-page").and_then(|p| p.parse().ok())).flatten();
            let inherited = el.parent.and_then(|p| self.page_of[p]);
            self.page_of.push(own.or(inherited));
        }
        self.by_id.clear();
        for (i, el) in tree.elements.iter().enumerate() {
            if !el.id.is_empty() {
                self.by_id.entry(el.id.clone()).or_insert(i);
            }
        }
        self.reading = (0..tree.elements.len()).map(|i| Reading::of(tree, i)).collect();
        self.instruction = instruction(&self.site);
        self.reset()
    }

    /// Performs one action; as the live environment, an action after the end is refused, and an
    /// action that fails counts no step.
    pub fn step(&mut self, action: &Action) -> Result<Step, EnvError> {
        self.guard.admit()?;
        let r = action.element_target()?;
        let target = self.element(r).ok_or(EnvError::UnknownRef(r))?;
        match action {
            Action::Click(_) => self.click(target),
            // As the actuator: a click first, then the keys (MiniWoB's typing action).
            Action::Type(_, text) => {
                self.click(target);
                self.type_text(target, text);
            }
            Action::Select(_, option) => self.select(target, option, action)?,
            Action::SetValue(_, value) => self.set_field(target, value),
            _ => {
                return Err(EnvError::BadTarget { action: action.describe(None), detail: "the simulator acts on elements only".into() });
            }
        }
        if self.guard.record(self.outcome.done) {
            self.end(self.reward.step_limit_reward, Some(STEP_LIMIT_REASON.to_string()));
        }
        let observation = self.observe();
        let phi = self.potential();
        let changed = dom_changed(&self.last.0, &observation.dom, self.last.1, observation.page);
        let shaped = self.shaper.step(self.outcome.raw, self.outcome.done, phi, changed);
        self.last = (observation.dom.clone(), observation.page);
        Ok(Step {
            observation,
            reward: self.outcome.raw,
            raw_reward: self.outcome.raw,
            done: self.outcome.done,
            reason: self.outcome.reason.clone(),
            shaped_reward: Some(shaped),
            potential: Some(phi),
        })
    }

    /// Φ now: the share of the profile's fields visited and holding their value.
    pub fn potential(&self) -> f64 {
        potential(&self.site, |id| self.field_state(id))
    }

    /// The observation now (refs are given to nodes seen for the first time).
    pub fn observe(&mut self) -> Observation {
        let mut nodes = Vec::with_capacity(self.state.len());
        self.walk(0, None, &mut nodes);
        Observation { instruction: self.instruction.clone(), dom: DomGraph { nodes, truncated: 0 }, page: self.page, ..Default::default() }
    }
}

impl Environment<GeneratedSite> for SiteSim {
    /// Renders the generated site of `task` (any other task is refused) and starts an episode.
    async fn reset(&mut self, task: &TaskSpec, seed: u32) -> Result<Observation, EnvError> {
        let TaskSpec::Generated { site: GeneratedSite { design, values, reward }, .. } = task else {
            return Err(EnvError::UnknownTask(format!("{} (the site simulator runs generated sites only)", task.name())));
        };
        self.design = design.clone();
        self.values = *values;
        self.reward = *reward;
        Ok(self.reset_seed(seed))
    }

    async fn step(&mut self, action: &Action) -> Result<Step, EnvError> {
        SiteSim::step(self, action)
    }
}

/// The instruction the live page gives: the profile as a JSON object (keys in profile order, as
/// the page's `JSON.stringify` writes it) and its fields.
fn instruction(site: &Site) -> Instruction {
    let mut utterance = String::from("{");
    for (k, f) in site.profile.iter().enumerate() {
        if k > 0 {
            utterance.push(',');
        }
        utterance.push_str(&serde_json::to_string(&f.key).expect("strings serialise"));
        utterance.push(':');
        utterance.push_str(&serde_json::to_string(&f.value).expect("strings serialise"));
    }
    utterance.push('}');
    Instruction::new(&utterance, site.profile.clone())
}

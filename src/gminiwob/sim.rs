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

use std::collections::HashMap;

use super::layout::Bounds;
use super::reward::{FieldState, Shaper, dom_changed, field_correct, potential};
use super::site::{Element, Site, Tree, render};
use super::{Design, GeneratedSite, RewardConfig, Values};
use crate::env::{
    Action, DomGraph, DomNode, EnvError, Environment, EpisodeGuard, Instruction, NodeRef, NodeValue, Observation, Rect, STEP_LIMIT_REASON, Step,
};

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

/// What the reader reads of an element that never changes: its tag as the reader names it, its
/// own text (whitespace collapsed), its options' texts, and its labelling attributes.
#[derive(Clone, Debug, Default)]
struct Reading {
    tag: String,
    text: String,
    options: Vec<String>,
    placeholder: String,
    name: String,
    aria_label: String,
}

impl Reading {
    fn of(tree: &Tree, i: usize) -> Self {
        let el = &tree.elements[i];
        let attr = |name: &str| el.attr_value(name).map(collapse).unwrap_or_default();
        Reading {
            tag: match el.tag {
                "input" => format!("INPUT_{}", input_type(el)),
                t => t.to_ascii_uppercase(),
            },
            text: collapse(&el.text),
            options: if el.tag == "select" { el.children.iter().map(|&o| collapse(&text_content(tree, o))).collect() } else { Vec::new() },
            placeholder: attr("placeholder"),
            name: attr("name"),
            aria_label: attr("aria-label"),
        }
    }
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

    // ------------------------------------------------------------------ the reader

    fn walk(&mut self, i: usize, parent: Option<usize>, nodes: &mut Vec<DomNode>) {
        // Options have no box, hidden pages are display:none, and empty boxes are skipped.
        let Some(b) = self.boxes[i] else { return };
        if self.site.tree.elements[i].tag == "option" || !self.rendered(i) || b.width <= 0 || b.height <= 0 {
            return;
        }
        let node_ref = match self.ref_of[i] {
            Some(r) => r,
            None => {
                self.refs.push(i);
                let r = self.refs.len() as NodeRef;
                self.ref_of[i] = Some(r);
                r
            }
        };
        let el = &self.site.tree.elements[i];
        let read = &self.reading[i];
        let st = &self.state[i];
        let value = match el.tag {
            "input" if matches!(input_type(el), "checkbox" | "radio") => NodeValue::Checked(st.checked),
            "input" => NodeValue::Text(st.value.clone()),
            "select" => NodeValue::Text(self.select_value(i).to_string()),
            _ => NodeValue::None,
        };
        let mut classes = el.classes.clone();
        if st.visited && !classes.iter().any(|c| c == "visited") {
            classes.push("visited".to_string());
        }
        let index = nodes.len();
        nodes.push(DomNode {
            r#ref: node_ref,
            parent,
            children: Vec::new(),
            tag: read.tag.clone(),
            text: String::new(),
            value,
            id: el.id.clone(),
            classes,
            rect: Rect { left: b.left as f32, top: b.top as f32, width: b.width as f32, height: b.height as f32 },
            focused: self.focus == Some(i),
            tampered: st.tampered,
            options: read.options.clone(),
            placeholder: read.placeholder.clone(),
            name: read.name.clone(),
            aria_label: read.aria_label.clone(),
            bg_color: String::new(),
            fg_color: String::new(),
        });
        if let Some(p) = parent {
            nodes[p].children.push(index);
        }
        for k in 0..self.site.tree.elements[i].children.len() {
            let c = self.site.tree.elements[i].children[k];
            self.walk(c, Some(index), nodes);
        }
        if nodes[index].children.is_empty() {
            let read = &self.reading[i];
            let el = &self.site.tree.elements[i];
            nodes[index].text = match read.options.get(self.state[i].selected) {
                // A select shows its chosen option.
                Some(chosen) if el.tag == "select" => chosen.clone(),
                // An element whose children all went unseen: all the text under it.
                _ if !el.children.is_empty() => collapse(&text_content(&self.site.tree, i)),
                _ => read.text.clone(),
            };
        }
    }

    fn element(&self, r: NodeRef) -> Option<usize> {
        self.refs.get((r as usize).checked_sub(1)?).copied()
    }

    /// Not inside a hidden page (what `display: none` hides cannot take focus or be read).
    fn rendered(&self, i: usize) -> bool {
        self.page_of[i].is_none_or(|p| p == self.page)
    }

    fn el(&self, i: usize) -> &Element {
        &self.site.tree.elements[i]
    }

    fn select_value(&self, i: usize) -> &str {
        let el = self.el(i);
        el.children.get(self.state[i].selected).and_then(|&o| self.el(o).attr_value("value")).unwrap_or("")
    }

    /// What the element with `id` holds, as `crate::web::gminiwob::read_field` reads it.
    fn field_state(&self, id: &str) -> Option<FieldState> {
        let &i = self.by_id.get(id)?;
        let el = self.el(i);
        let st = &self.state[i];
        let value = match el.tag {
            "input" if matches!(input_type(el), "checkbox" | "radio") => st.checked.to_string(),
            "input" => st.value.clone(),
            "select" => self.select_value(i).to_string(),
            _ => descendants(&self.site.tree, i)
                .find(|&d| is_radio(self.el(d)) && self.state[d].checked)
                .map(|d| self.state[d].value.clone())
                .unwrap_or_default(),
        };
        Some(FieldState { visited: st.visited, value })
    }

    // ------------------------------------------------------------------ the page's runtime

    fn running(&self) -> bool {
        !self.outcome.done
    }

    /// `core.endEpisode`: only the first end of an episode counts.
    fn end(&mut self, raw: f64, reason: Option<String>) {
        if self.outcome.done {
            return;
        }
        self.outcome = Outcome { done: true, raw, reason };
        self.guard.finish();
    }

    /// The page's click/input/change listener: the field around the target is visited.
    fn mark_visited(&mut self, i: usize) {
        if !self.running() {
            return;
        }
        if let Some(f) = self.closest(i, "data-field") {
            self.state[f].visited = true;
        }
    }

    fn closest(&self, mut i: usize, attr: &str) -> Option<usize> {
        loop {
            if self.el(i).has_attr(attr) {
                return Some(i);
            }
            i = self.el(i).parent?;
        }
    }

    /// A click event reaching the page: the tamper mark, the visited mark, then the area's
    /// handler (links prevented; end, next page, submit).
    fn dispatch_click(&mut self, i: usize) {
        self.state[i].tampered = true;
        self.mark_visited(i);
        if !self.running() {
            return;
        }
        if let Some(e) = self.closest(i, "data-end") {
            let what = self.el(e).attr_value("data-end").unwrap_or("").to_string();
            self.end(-1.0, Some(format!("clicked the {what}")));
            return;
        }
        if let Some(n) = self.closest(i, "data-next") {
            let target: Option<u32> = self.el(n).attr_value("data-next").and_then(|v| v.trim().parse().ok());
            if let Some(t) = target.filter(|&t| t < self.site.pages) {
                self.page = t;
            }
            return;
        }
        if self.closest(i, "data-submit").is_some() {
            self.submit();
        }
    }

    fn submit(&mut self) {
        let wrong: Vec<&str> = self.site.fields.iter().filter(|f| !field_correct(f, |id| self.field_state(id))).map(|f| f.key.as_str()).collect();
        if wrong.is_empty() {
            self.end(1.0, None);
        } else {
            let reason = format!("wrong or missing: {}", wrong.join(", "));
            self.end(-1.0, Some(reason));
        }
    }

    // ------------------------------------------------------------------ focus and activation

    fn focusable(&self, i: usize) -> bool {
        let el = self.el(i);
        if el.has_attr("disabled") {
            return false;
        }
        match el.tag {
            "input" => input_type(el) != "hidden",
            "select" | "button" => true,
            "a" => el.has_attr("href"),
            _ => el.has_attr("tabindex"),
        }
    }

    /// `focus()`: moves focus when the element can take it (a label passes it to its control);
    /// a text field also takes the document's selection. Returns whether the element itself has
    /// focus now.
    fn try_focus(&mut self, i: usize) -> bool {
        if self.focus == Some(i) {
            return true;
        }
        if !self.focusable(i) {
            if self.el(i).tag == "label"
                && let Some(c) = self.control(i)
            {
                self.try_focus(c);
            }
            return false;
        }
        if !self.rendered(i) {
            return false;
        }
        self.focus = Some(i);
        if is_text_field(self.el(i)) {
            self.selection = Some(i);
        }
        true
    }

    /// A press: each element from the target up is asked to take focus until one has it; with
    /// none, focus leaves whatever had it.
    fn press(&mut self, i: usize) {
        let mut cur = Some(i);
        while let Some(e) = cur {
            if self.try_focus(e) {
                return;
            }
            cur = self.el(e).parent;
        }
        self.focus = None;
    }

    fn click(&mut self, i: usize) {
        self.press(i);
        self.activate(i);
    }

    /// `HTMLElement.click()`: the click event with the element's activation behaviour.
    fn activate(&mut self, i: usize) {
        let el = self.el(i);
        let kind = if el.tag == "input" { input_type(el) } else { "" };
        let changed = match kind {
            "checkbox" => {
                self.state[i].checked = !self.state[i].checked;
                true
            }
            "radio" => {
                let was = self.state[i].checked;
                for r in self.radio_group(i) {
                    self.state[r].checked = false;
                }
                self.state[i].checked = true;
                !was
            }
            _ => false,
        };
        self.dispatch_click(i);
        if changed {
            // input and change.
            self.mark_visited(i);
        }
        if self.el(i).tag == "label"
            && let Some(c) = self.control(i)
        {
            self.try_focus(c);
            self.activate(c);
        }
    }

    /// The control a label labels (its `for` element, if labelable).
    fn control(&self, label: usize) -> Option<usize> {
        let &c = self.by_id.get(self.el(label).attr_value("for")?)?;
        matches!(self.el(c).tag, "input" | "select" | "button").then_some(c)
    }

    /// The radios of `i`'s group: same name within the same form (or the whole site).
    fn radio_group(&self, i: usize) -> Vec<usize> {
        let name = self.el(i).attr_value("name").unwrap_or("");
        if name.is_empty() {
            return vec![i];
        }
        let mut scope = 0;
        let mut cur = self.el(i).parent;
        while let Some(p) = cur {
            if self.el(p).tag == "form" {
                scope = p;
                break;
            }
            cur = self.el(p).parent;
        }
        descendants(&self.site.tree, scope).filter(|&d| is_radio(self.el(d)) && self.el(d).attr_value("name") == Some(name)).collect()
    }

    // ------------------------------------------------------------------ the actions

    /// `execCommand('insertText')`: the text goes into the field holding the document's
    /// selection (at its end, where the caret always is here), which takes focus; a selection in
    /// a field that stopped being shown is gone. Returns whether the command ran.
    fn insert_text(&mut self, text: &str) -> bool {
        let Some(f) = self.selection else { return false };
        if !self.rendered(f) {
            self.selection = None;
            return false;
        }
        // An input's line breaks become spaces as they are inserted.
        let text = text.replace("\r\n", " ").replace(['\r', '\n'], " ");
        if text.is_empty() {
            return true;
        }
        self.try_focus(f);
        self.state[f].value.push_str(&text);
        self.mark_visited(f);
        true
    }

    /// Sets an input's value from script: a text field drops line breaks.
    fn set_value(&mut self, i: usize, value: &str) {
        let v = if is_text_field(self.el(i)) { value.replace(['\r', '\n'], "") } else { value.to_string() };
        self.state[i].value = v;
    }

    fn type_text(&mut self, i: usize, text: &str) {
        self.try_focus(i);
        let el = self.el(i);
        let before = (el.tag == "input").then(|| self.state[i].value.clone());
        // A field that could not take focus is not typed into through another one.
        let inserted = if before.is_some() && self.focus != Some(i) { false } else { self.insert_text(text) };
        if let Some(before) = before
            && (!inserted || self.state[i].value == before)
            && !text.is_empty()
        {
            self.set_value(i, &format!("{before}{text}"));
            self.mark_visited(i);
        }
    }

    fn select(&mut self, i: usize, option: &str, action: &Action) -> Result<(), EnvError> {
        let el = self.el(i);
        let what = || format!("select \"{option}\" in #{}", action.target().unwrap_or_default());
        if el.tag != "select" {
            return Err(EnvError::BadTarget { action: what(), detail: format!("it is a {}, not a <select>", el.tag.to_ascii_uppercase()) });
        }
        let Some(k) = self.option_index(i, option) else {
            return Err(EnvError::BadTarget { action: what(), detail: "the list has no such option".into() });
        };
        self.try_focus(i);
        self.state[i].selected = k;
        self.mark_visited(i);
        Ok(())
    }

    fn option_index(&self, sel: usize, option: &str) -> Option<usize> {
        let wanted = collapse(option);
        self.el(sel)
            .children
            .iter()
            .position(|&o| collapse(&text_content(&self.site.tree, o)) == wanted || self.el(o).attr_value("value") == Some(option))
    }

    fn set_field(&mut self, i: usize, value: &str) {
        // A value put into a label goes to the control it labels (a click on the label would
        // toggle it whatever the value says), as the actuator does on the live page.
        if self.el(i).tag == "label"
            && let Some(c) = self.control(i)
        {
            return self.set_field(c, value);
        }
        let el = self.el(i);
        match el.tag {
            "input" => match input_type(el) {
                "checkbox" => {
                    if self.state[i].checked != truthy(value) {
                        self.click(i);
                    } else {
                        // Already as wanted: touched, not changed.
                        self.try_focus(i);
                        self.mark_visited(i);
                    }
                }
                "radio" => {
                    let group = self.radio_group(i);
                    self.choose_radio(&group, value);
                }
                "button" | "submit" | "reset" | "image" | "file" | "color" | "range" => self.click(i),
                _ => self.replace_text(i, value),
            },
            "select" => {
                if let Some(k) = self.option_index(i, value) {
                    self.try_focus(i);
                    self.state[i].selected = k;
                    self.mark_visited(i);
                }
            }
            _ => {
                let radios: Vec<usize> = descendants(&self.site.tree, i).filter(|&d| is_radio(self.el(d))).collect();
                if radios.is_empty() {
                    self.click(i);
                } else {
                    self.choose_radio(&radios, value);
                }
            }
        }
    }

    /// Clicks the first radio whose value or label is `value`; none matching changes nothing.
    fn choose_radio(&mut self, radios: &[usize], value: &str) {
        let wanted = collapse(value);
        let label_of = |r: usize| -> String {
            let id = &self.el(r).id;
            if id.is_empty() {
                return String::new();
            }
            self.site
                .tree
                .elements
                .iter()
                .enumerate()
                .find(|(_, e)| e.tag == "label" && e.attr_value("for") == Some(id.as_str()))
                .map(|(l, _)| collapse(&text_content(&self.site.tree, l)))
                .unwrap_or_default()
        };
        if let Some(&r) = radios.iter().find(|&&r| self.state[r].value == value || label_of(r) == wanted) {
            self.click(r);
        }
    }

    /// Replaces a text field's value as a person does (select all, type over it).
    fn replace_text(&mut self, i: usize, value: &str) {
        self.try_focus(i);
        if self.focus == Some(i) {
            self.selection = Some(i);
            self.state[i].value = value.replace("\r\n", " ").replace(['\r', '\n'], " ");
        }
        if self.state[i].value != value {
            self.set_value(i, value);
        }
        // input (when anything changed) and change: the field is visited either way.
        self.mark_visited(i);
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

/// The type an input reports (`input.type`: a known type in lower case, else `text`).
fn input_type(el: &Element) -> &'static str {
    const TYPES: [&str; 22] = [
        "button",
        "checkbox",
        "color",
        "date",
        "datetime-local",
        "email",
        "file",
        "hidden",
        "image",
        "month",
        "number",
        "password",
        "radio",
        "range",
        "reset",
        "search",
        "submit",
        "tel",
        "text",
        "time",
        "url",
        "week",
    ];
    let t = el.attr_value("type").unwrap_or("text").to_ascii_lowercase();
    TYPES.iter().find(|k| **k == t).copied().unwrap_or("text")
}

fn is_radio(el: &Element) -> bool {
    el.tag == "input" && input_type(el) == "radio"
}

/// Single-line text inputs: fields with an editor of their own, where the document's selection
/// can be. (The renderer makes no textareas, whose line breaks would need rules of their own.)
fn is_text_field(el: &Element) -> bool {
    el.tag == "input" && matches!(input_type(el), "text" | "password" | "search" | "email" | "tel" | "url")
}

fn truthy(value: &str) -> bool {
    matches!(value.trim().to_ascii_lowercase().as_str(), "true" | "yes" | "1" | "on" | "checked")
}

/// The descendants of `i` in document order (not `i` itself).
fn descendants(tree: &Tree, i: usize) -> impl Iterator<Item = usize> + '_ {
    let mut stack: Vec<usize> = tree.elements[i].children.iter().rev().copied().collect();
    std::iter::from_fn(move || {
        let d = stack.pop()?;
        stack.extend(tree.elements[d].children.iter().rev());
        Some(d)
    })
}

/// `textContent`: the text of the element and everything under it.
fn text_content(tree: &Tree, i: usize) -> String {
    let mut out = tree.elements[i].text.clone();
    for d in descendants(tree, i) {
        out.push_str(&tree.elements[d].text);
    }
    out
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gminiwob::primitive::{PRIMITIVES, by_name};
    use crate::gminiwob::test_sites::{LEVELS, RandomDesign, TEST_SITES, test_site};
    use crate::policy::Policy;
    use crate::policy::gminiwob::{SiteOracle, SiteRandom};
    use crate::rng::Rng;

    fn sim(design: Design, seed: u32) -> SiteSim {
        SiteSim::new(design, seed, Values::default(), RewardConfig::default())
    }

    fn design(entries: &[(&str, u32)]) -> Design {
        let e: Vec<(usize, u32)> = entries.iter().map(|(n, p)| (by_name(n).unwrap().index, *p)).collect();
        Design::from_entries(None, &e).unwrap()
    }

    fn node<'a>(obs: &'a Observation, id: &str) -> &'a DomNode {
        obs.dom.nodes.iter().find(|n| n.id == id).unwrap_or_else(|| panic!("no #{id}"))
    }

    fn step(sim: &mut SiteSim, action: Action) -> Step {
        sim.step(&action).unwrap_or_else(|e| panic!("{action:?}: {e}"))
    }

    /// Runs `policy` to the end; the steps taken.
    fn run(sim: &mut SiteSim, policy: &mut dyn Policy, mut obs: Observation) -> Vec<Step> {
        let mut steps = Vec::new();
        loop {
            let action = policy.act(&obs).expect("an action");
            let s = step(sim, action);
            obs = s.observation.clone();
            let done = s.done;
            steps.push(s);
            if done {
                return steps;
            }
        }
    }

    #[test]
    fn the_oracle_solves_every_test_site_and_level() {
        for name in TEST_SITES {
            for level in 0..LEVELS {
                let d = test_site(name, level).unwrap();
                for seed in 0..20 {
                    let mut sim = sim(d.clone(), seed);
                    let obs = sim.reset();
                    let steps = run(&mut sim, &mut SiteOracle::new(d.pages()), obs);
                    let last = steps.last().unwrap();
                    assert_eq!((last.raw_reward, last.reason.as_deref()), (1.0, None), "{name}-{level}/{seed}");
                    let best = steps.iter().filter_map(|s| s.potential).fold(0.0, f64::max);
                    assert_eq!(best, 1.0, "{name}-{level}/{seed}: Φ reaches 1");
                    // Φ climbs to 1, one step cost per step before the last, +1 at the end.
                    let ret: f64 = steps.iter().map(|s| s.shaped_reward.unwrap()).sum();
                    let expected = 2.0 - 0.05 * (steps.len() - 1) as f64;
                    assert!((ret - expected).abs() < 1e-9, "{name}-{level}/{seed}: return {ret}, expected {expected}");
                }
            }
        }
    }

    #[test]
    fn wrong_values_fail_the_submit_and_name_the_field() {
        for name in TEST_SITES {
            let d = test_site(name, 3).unwrap();
            for key in d.profile_keys() {
                let mut sim = sim(d.clone(), 11);
                let obs = sim.reset();
                let steps = run(&mut sim, &mut SiteOracle::wrong(d.pages(), Some(key)), obs);
                let last = steps.last().unwrap();
                assert_eq!(last.raw_reward, -1.0, "{name}: a wrong {key} must fail");
                assert_eq!(last.reason.as_deref(), Some(format!("wrong or missing: {key}").as_str()));
                assert!(last.potential.unwrap() < 1.0);
            }
        }
    }

    #[test]
    fn end_on_click_primitives_end_with_raw_minus_one() {
        for p in PRIMITIVES.iter().filter(|p| p.end_on_click) {
            let mut sim = sim(design(&[(p.name, 0), ("username", 0)]), 5);
            let obs = sim.reset();
            // The first leaf under the wrapper: what a click on the primitive lands on.
            let mut i = obs.dom.index_of(node(&obs, &format!("group_{}_p0", p.name)).r#ref).unwrap();
            while let Some(&c) = obs.dom.nodes[i].children.first() {
                i = c;
            }
            let s = step(&mut sim, Action::Click(obs.dom.nodes[i].r#ref));
            assert_eq!((s.done, s.raw_reward), (true, -1.0), "{}", p.name);
            assert_eq!(s.reason, Some(format!("clicked the {}", p.name)));
            assert_eq!(s.shaped_reward, Some(-1.0), "{}: no step costs once done", p.name);
            assert!(matches!(sim.step(&Action::Click(1)), Err(EnvError::EpisodeDone)));
        }
    }

    #[test]
    fn the_step_limit_ends_with_its_reward() {
        let d = test_site("login", 0).unwrap();
        let mut sim = sim(d.clone(), 2);
        let obs = sim.reset();
        let user = node(&obs, "actionable_username").r#ref;
        let limit = RewardConfig::default().step_limit;
        for i in 1..=limit {
            let s = step(&mut sim, Action::Click(user));
            assert_eq!(s.done, i == limit, "step {i}");
            if s.done {
                assert_eq!((s.raw_reward, s.reason.as_deref()), (0.0, Some(STEP_LIMIT_REASON)));
            } else if i > 1 {
                // Clicking the focused field again changes nothing: −0.05 − 0.5.
                assert!((s.shaped_reward.unwrap() + 0.55).abs() < 1e-12, "step {i}: {:?}", s.shaped_reward);
            }
        }
        assert!(matches!(sim.step(&Action::Click(user)), Err(EnvError::EpisodeDone)));
        let short = RewardConfig { step_limit: 3, step_limit_reward: -0.5, ..RewardConfig::default() };
        let mut sim = SiteSim::new(d, 2, Values::default(), short);
        sim.reset();
        for _ in 0..2 {
            assert!(!step(&mut sim, Action::Click(user)).done);
        }
        let s = step(&mut sim, Action::Click(user));
        assert_eq!((s.done, s.raw_reward), (true, -0.5));
    }

    #[test]
    fn same_seed_same_observation() {
        let d = test_site("shopping", 3).unwrap();
        let mut a = sim(d.clone(), 42);
        let first = a.reset();
        assert_eq!(first, sim(d.clone(), 42).reset());
        assert_ne!(first.instruction, sim(d.clone(), 43).reset().instruction);
        // A reset starts over: refs from 1, nothing visited, page 0.
        let obs = a.reset_seed(42);
        assert_eq!(obs, first);
        first.dom.validate().unwrap();
        assert_eq!(first.dom.nodes[0].id, "gsite");
        assert_eq!(first.dom.nodes[0].r#ref, 1);
        assert_eq!(first.dom.nodes[0].rect, Rect { left: 0.0, top: 0.0, width: 384.0, height: first.dom.nodes[0].rect.height });
    }

    #[test]
    fn the_profile_is_the_instruction() {
        let d = design(&[("username", 0), ("state", 0), ("rememberme", 0)]);
        let obs = sim(d, 4).reset();
        let u = &obs.instruction.utterance;
        let at = |k: &str| u.find(&format!("\"{k}\":")).unwrap_or_else(|| panic!("{k} in {u}"));
        assert!(u.starts_with('{') && at("username") < at("state") && at("state") < at("rememberme"), "profile order: {u}");
        assert_eq!(obs.instruction.fields.len(), 3);
        assert!(obs.instruction.tokens.iter().all(|t| t != "username"));
    }

    #[test]
    fn actions_behave_as_on_the_live_page() {
        let d = design(&[("username", 0), ("password", 0), ("rememberme", 0), ("cabin", 0), ("state", 0), ("navbar", 0)]);
        let mut sim = sim(d, 8);
        let obs = sim.reset();
        let r = |obs: &Observation, id: &str| node(obs, id).r#ref;
        // Typing clicks the field first (MiniWoB's typing action), then appends: the field is
        // focused, tampered and visited.
        step(&mut sim, Action::Type(r(&obs, "actionable_username"), "ab".into()));
        let s = step(&mut sim, Action::Type(r(&obs, "actionable_username"), "cd".into()));
        let user = node(&s.observation, "actionable_username");
        assert_eq!((user.value.as_text(), user.focused, user.tampered), (Some("abcd"), true, true));
        assert!(user.has_class("visited"));
        // Typing into a checkbox clicks it (it toggles); the text goes to the field that has the
        // selection, and the checkbox's value attribute takes it too (the actuator's fallback).
        let s = step(&mut sim, Action::Type(r(&obs, "actionable_rememberme"), "f".into()));
        assert_eq!(node(&s.observation, "actionable_username").value.as_text(), Some("abcdf"));
        let cb = node(&s.observation, "actionable_rememberme");
        assert!(cb.has_class("visited") && cb.tampered);
        assert_eq!(cb.value, NodeValue::Checked(true));
        // A label click focuses and toggles its checkbox; both are clicked.
        let label = s.observation.dom.nodes.iter().find(|n| n.tag == "LABEL" && n.text == "Remember me").unwrap().r#ref;
        let s = step(&mut sim, Action::Click(label));
        let cb = node(&s.observation, "actionable_rememberme");
        assert_eq!((cb.value.clone(), cb.focused, cb.tampered), (NodeValue::Checked(false), true, true));
        assert!(s.observation.dom.get(label).unwrap().tampered);
        // Select by text; a missing option is an error that counts no step.
        let steps = sim.steps();
        let s = step(&mut sim, Action::Select(r(&obs, "actionable_state"), "TX".into()));
        let st = node(&s.observation, "actionable_state");
        assert_eq!((st.value.as_text(), st.text.as_str()), (Some("TX"), "TX"));
        assert_eq!(st.options[0], "Choose…");
        assert!(matches!(sim.step(&Action::Select(r(&obs, "actionable_state"), "ZZ".into())), Err(EnvError::BadTarget { .. })));
        assert!(matches!(sim.step(&Action::Select(r(&obs, "actionable_username"), "TX".into())), Err(EnvError::BadTarget { .. })));
        assert_eq!(sim.steps(), steps + 1);
        // SetValue on the radio group checks by label; a radio click unchecks the others.
        let s = step(&mut sim, Action::SetValue(r(&obs, "actionable_cabin"), "Business".into()));
        assert_eq!(node(&s.observation, "actionable_cabin_i2").value, NodeValue::Checked(true));
        let s = step(&mut sim, Action::Click(r(&obs, "actionable_cabin_i0")));
        assert_eq!(node(&s.observation, "actionable_cabin_i2").value, NodeValue::Checked(false));
        assert!(node(&s.observation, "actionable_cabin").has_class("visited"));
        // SetValue on a label sets the control it labels as the value says: a radio label sets
        // its group by the value, a checkbox label ticks only for a true value.
        let label = |o: &Observation, text: &str| o.dom.nodes.iter().find(|n| n.tag == "LABEL" && n.text == text).unwrap().r#ref;
        let s = step(&mut sim, Action::SetValue(label(&s.observation, "Economy"), "Business".into()));
        assert_eq!(node(&s.observation, "actionable_cabin_i2").value, NodeValue::Checked(true));
        assert_eq!(node(&s.observation, "actionable_cabin_i0").value, NodeValue::Checked(false));
        let s = step(&mut sim, Action::SetValue(label(&s.observation, "Remember me"), "false".into()));
        assert_eq!(node(&s.observation, "actionable_rememberme").value, NodeValue::Checked(false));
        let s = step(&mut sim, Action::SetValue(label(&s.observation, "Remember me"), "true".into()));
        assert_eq!(node(&s.observation, "actionable_rememberme").value, NodeValue::Checked(true));
        let s = step(&mut sim, Action::SetValue(label(&s.observation, "Remember me"), "true".into()));
        assert_eq!(node(&s.observation, "actionable_rememberme").value, NodeValue::Checked(true), "already as wanted");
        // A click on the page itself blurs.
        let s = step(&mut sim, Action::Click(r(&obs, "page0")));
        assert!(s.observation.dom.nodes.iter().all(|n| !n.focused));
        // SetValue replaces; unknown refs are refused.
        let s = step(&mut sim, Action::SetValue(r(&obs, "actionable_username"), "x\ny".into()));
        assert_eq!(node(&s.observation, "actionable_username").value.as_text(), Some("xy"), "line breaks dropped");
        assert!(matches!(sim.step(&Action::Click(9999)), Err(EnvError::UnknownRef(9999))));
        // Typing into the submit button presses it: the form is judged and the episode ends.
        let s = step(&mut sim, Action::Type(r(&obs, "actionable_submit_p0"), "e".into()));
        assert!(s.done);
    }

    #[test]
    fn pages_show_one_at_a_time_and_refs_grow_in_first_seen_order() {
        let d = test_site("shopping", 1).unwrap();
        let mut sim = sim(d, 3);
        let obs = sim.reset();
        assert!(obs.dom.nodes.iter().all(|n| n.id != "actionable_username"), "page 1 is hidden");
        let n = obs.dom.nodes.len() as NodeRef;
        assert!(obs.dom.nodes.iter().map(|n| n.r#ref).eq(1..=n), "refs in document order");
        let s = step(&mut sim, Action::Click(node(&obs, "actionable_next_login_page_p0").r#ref));
        assert_eq!(s.observation.page, 1);
        assert_eq!(node(&s.observation, "page1").r#ref, n + 1, "page 1 is numbered after all of page 0");
        assert!(node(&s.observation, "actionable_username").r#ref > n + 1);
        assert_eq!(node(&s.observation, "gsite").r#ref, 1);
        assert!(s.shaped_reward.unwrap() < 0.0 && s.shaped_reward.unwrap() > -0.1, "a page change is a change");
    }

    #[test]
    fn boxes_are_inside_the_site_and_text_never_sits_beside_elements() {
        let mut rng = Rng::new(9);
        for i in 0..50 {
            let d = RandomDesign::default().sample(&mut rng);
            let mut sim = sim(d, i);
            let obs = sim.reset();
            let root = obs.dom.nodes[0].rect;
            for (k, n) in obs.dom.nodes.iter().enumerate() {
                let r = n.rect;
                assert!(r.width > 0.0 && r.height > 0.0 && r.left >= 0.0 && r.top >= 0.0, "{} {r:?}", n.tag);
                assert!(r.left + r.width <= root.width && r.top + r.height <= root.height, "{} #{} outside", n.tag, n.id);
                if let Some(p) = n.parent {
                    let q = obs.dom.nodes[p].rect;
                    assert!(r.left >= q.left && r.top >= q.top, "node {k} starts outside its parent");
                    assert!(
                        r.left + r.width <= q.left + q.width && r.top + r.height <= q.top + q.height,
                        "node {k} ends outside its parent {:?} {:?}",
                        n.id,
                        obs.dom.nodes[p].id
                    );
                }
                assert!(n.is_leaf() || n.text.is_empty());
                assert_ne!(n.tag, crate::env::TEXT_TAG);
            }
        }
    }

    #[test]
    fn random_designs_reset_and_step_without_panics() {
        let sampler = RandomDesign::default();
        let mut rng = Rng::new(2026);
        for i in 0..200u32 {
            let d = sampler.sample(&mut rng);
            let mut sim = sim(d.clone(), i);
            let obs = sim.reset();
            obs.dom.validate().unwrap();
            assert_eq!(obs.instruction.fields.len(), d.profile_keys().len());
            let mut policy = SiteRandom::new(i as u64);
            let mut obs = obs;
            for _ in 0..30 {
                let s = step(&mut sim, policy.act(&obs).unwrap());
                s.observation.dom.validate().unwrap();
                assert!(s.potential.unwrap() >= 0.0 && s.potential.unwrap() <= 1.0);
                if s.done {
                    break;
                }
                obs = s.observation;
            }
        }
    }

    #[test]
    fn the_environment_trait_runs_generated_tasks_only() {
        use crate::util::block_on;
        let task = TaskSpec::generated("login-1", test_site("login", 1).unwrap()).unwrap();
        let mut sim = SiteSim::from_task(&task, 1).unwrap();
        let a = block_on(Environment::reset(&mut sim, &task, 7)).unwrap();
        assert_eq!(a, SiteSim::from_task(&task, 7).unwrap().reset());
        let s = block_on(Environment::step(&mut sim, &Action::Click(1))).unwrap();
        assert!(!s.done);
        let other = TaskSpec::builtin("click-button").unwrap();
        assert!(matches!(block_on(Environment::reset(&mut sim, &other, 1)), Err(EnvError::UnknownTask(_))));
        assert!(SiteSim::from_task(&other, 1).is_err());
    }
}

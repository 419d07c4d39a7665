//! Workflow induction (Liu et al., 2018, §4.1; reference-implementations.md §2.3): from one
//! demonstration, a lattice whose vertices are the demonstration's time steps and whose edges
//! carry every workflow step (constraint) consistent with what the person did there, plus skip
//! edges over actions that changed nothing.

use std::collections::{BTreeMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::demo::DemoStep;
use crate::env::{Action, DomGraph, DomNode, NodeRef, NodeValue, Observation};

use super::constraint::{Constraint, ElementSet, ElementSetKind, ExecutionEnv, StringSelector, normalise};
use super::neighbours::Relation;

/// The induction's bounds, as the authors' `chunk-shortcut` parser sets them
/// (reference-implementations.md §2.3).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InductionConfig {
    /// An empty DOM diff from step i to any j ≤ i + this adds a skip edge i → j.
    pub max_skip: usize,
    /// A demonstrated action on a non-leaf element stands for one on each of its leaves, up to
    /// this many (more leaves: the element is too broad to say which was meant, so none).
    pub max_leaves: usize,
    /// Page text gives literal strings of 1 to this many words.
    pub max_ngram: usize,
    /// Most work one step's search may take (nodes, characters and box pairs looked at; ours,
    /// not the paper's): the grammar grows with the page's words, so a hostile page could make
    /// one step take minutes. The published demonstrations' steps take at most 105,082, about a
    /// fiftieth of it (docs/wge.md); a step that runs out keeps the steps found so far and is
    /// listed in [`WorkflowLattice::cut_short`].
    #[serde(default = "default_max_work")]
    pub max_work: u64,
}

fn default_max_work() -> u64 {
    InductionConfig::default().max_work
}

impl Default for InductionConfig {
    fn default() -> Self {
        InductionConfig { max_skip: 5, max_leaves: 8, max_ngram: 3, max_work: 5_000_000 }
    }
}

/// What an edge of the lattice does.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum EdgeKind {
    /// Advance the cursor without acting (the demonstrated actions in between changed nothing).
    Skip,
    /// Act with one of these workflow steps (each consistent with the demonstrated or inferred
    /// action at the edge's start).
    Act(Vec<Constraint>),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LatticeEdge {
    pub from: usize,
    pub to: usize,
    pub kind: EdgeKind,
}

/// The workflow lattice of one demonstration: vertices `0..=steps`, edges forward only.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkflowLattice {
    pub steps: usize,
    pub edges: Vec<LatticeEdge>,
    /// Steps whose search for workflow steps ran out of [`InductionConfig::max_work`] (their
    /// edges hold what was found before).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cut_short: Vec<usize>,
}

impl WorkflowLattice {
    pub fn edges_from(&self, vertex: usize) -> impl Iterator<Item = &LatticeEdge> {
        self.edges.iter().filter(move |e| e.from == vertex)
    }
    /// The workflow steps offered on the edge i → i + 1.
    pub fn programs(&self, from: usize) -> &[Constraint] {
        self.edges
            .iter()
            .find_map(|e| match &e.kind {
                EdgeKind::Act(p) if e.from == from && e.to == from + 1 => Some(p.as_slice()),
                _ => None,
            })
            .unwrap_or(&[])
    }
    /// Total number of workflow steps over all edges.
    pub fn program_count(&self) -> usize {
        self.edges.iter().map(|e| if let EdgeKind::Act(p) = &e.kind { p.len() } else { 0 }).sum()
    }
}

/// A person's recording keeps the click into a field and the typing that follows as two steps;
/// typing clicks its target first, so they are one `Type`, on the page the click saw — as the
/// published demonstrations are chunked (`demo_import`). Without this, each field of a person's
/// demonstration would add a lattice step that only clicks it.
pub fn fold_click_then_type(steps: Vec<DemoStep>) -> Vec<DemoStep> {
    let mut out: Vec<DemoStep> = Vec::with_capacity(steps.len());
    for step in steps {
        match out.last_mut() {
            Some(prev) if typing_absorbs_click(&prev.action, &step.action) => prev.action = step.action,
            _ => out.push(step),
        }
    }
    out
}

/// Whether `next` types into the element `prev` clicked: typing clicks its target first, so the
/// click is part of the type (the rule both demonstration sources fold by).
pub(crate) fn typing_absorbs_click(prev: &Action, next: &Action) -> bool {
    matches!((prev, next), (Action::Click(r), Action::Type(t, _)) if r == t)
}

/// Induces the lattice of a demonstration: `steps` (observation before each action, and the
/// action) and, when known, the observation after the last action.
pub fn induce(steps: &[DemoStep], final_observation: Option<&Observation>, config: &InductionConfig) -> WorkflowLattice {
    let mut induction = Induction::new(steps, final_observation, config);
    while induction.next_step() {}
    induction.finish()
}

/// Induction one lattice vertex at a time, so that a caller on a page's main thread can yield
/// between vertices ([`induce`] runs it through).
pub struct Induction<'a> {
    steps: &'a [DemoStep],
    final_observation: Option<&'a Observation>,
    config: &'a InductionConfig,
    next: usize,
    lattice: WorkflowLattice,
    /// The most work one vertex's search took so far (for the budget's sizing).
    peak_work: u64,
}

impl<'a> Induction<'a> {
    pub fn new(steps: &'a [DemoStep], final_observation: Option<&'a Observation>, config: &'a InductionConfig) -> Self {
        let lattice = WorkflowLattice { steps: steps.len(), edges: Vec::new(), cut_short: Vec::new() };
        Induction { steps, final_observation, config, next: 0, lattice, peak_work: 0 }
    }

    /// Vertices done so far, of [`Self::len`].
    pub fn done(&self) -> usize {
        self.next
    }

    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// The most work one vertex's search has taken ([`InductionConfig::max_work`] bounds it).
    pub fn peak_work(&self) -> u64 {
        self.peak_work
    }

    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    fn state(&self, i: usize) -> Option<&'a Observation> {
        if i < self.steps.len() { Some(&self.steps[i].observation) } else { self.final_observation }
    }

    /// Induces the next vertex's edges; false once every vertex is done.
    pub fn next_step(&mut self) -> bool {
        let (i, config, n) = (self.next, self.config, self.steps.len());
        let Some(step) = self.steps.get(i) else { return false };
        let obs = &step.observation;
        // The demonstrated action, on leaves when it hit a container.
        let mut actions = expand_to_leaves(&obs.dom, &step.action, config.max_leaves);
        // What actually changed, when exactly one element did.
        if let Some(inferred) = self.state(i + 1).and_then(|next| inferred_action(&obs.dom, &next.dom))
            && !actions.contains(&inferred)
        {
            actions.push(inferred);
        }
        // One environment for the step: its element sets are computed once, its work counted
        // against the step's budget.
        let env = ExecutionEnv::new(obs, None);
        let mut programs: Vec<Constraint> = Vec::new();
        let mut seen = HashSet::new();
        let mut cut = false;
        for a in &actions {
            for p in programs_for(&env, a, config, &mut cut) {
                if seen.insert(p.clone()) {
                    programs.push(p);
                }
            }
        }
        if cut {
            self.lattice.cut_short.push(i);
        }
        self.peak_work = self.peak_work.max(env.work());
        let start = self.lattice.edges.len();
        if !programs.is_empty() {
            self.lattice.edges.push(LatticeEdge { from: i, to: i + 1, kind: EdgeKind::Act(programs) });
        }
        for j in i + 1..=(i + config.max_skip).min(n) {
            if self.state(j).is_some_and(|later| dom_diff(&obs.dom, &later.dom).is_empty()) {
                self.lattice.edges.push(LatticeEdge { from: i, to: j, kind: EdgeKind::Skip });
            }
        }
        if self.lattice.edges.len() == start {
            self.lattice.edges.push(LatticeEdge { from: i, to: i + 1, kind: EdgeKind::Skip });
        }
        self.next += 1;
        self.next < n
    }

    pub fn finish(self) -> WorkflowLattice {
        self.lattice
    }
}

/// A click or type on an element with children stands for the same action on each of its
/// leaves (text pseudo-nodes cannot be clicked; only fields take text), when there are few.
pub fn expand_to_leaves(dom: &DomGraph, action: &Action, max_leaves: usize) -> Vec<Action> {
    let Some(i) = action.target().and_then(|r| dom.index_of(r)) else { return vec![action.clone()] };
    if dom.nodes[i].is_leaf() {
        return vec![action.clone()];
    }
    let mut leaves = Vec::new();
    let mut stack = vec![i];
    while let Some(k) = stack.pop() {
        let node = &dom.nodes[k];
        if node.is_leaf() {
            let fits = match action {
                Action::Type(..) => node.accepts_text(),
                _ => !node.is_text(),
            };
            if fits {
                leaves.push(node.r#ref);
            }
        }
        stack.extend(node.children.iter().rev());
    }
    if leaves.is_empty() || leaves.len() > max_leaves {
        return vec![action.clone()];
    }
    leaves
        .into_iter()
        .map(|r| match action {
            Action::Click(_) => Action::Click(r),
            Action::Type(_, t) => Action::Type(r, t.clone()),
            Action::Select(_, t) => Action::Select(r, t.clone()),
            Action::SetValue(_, t) => Action::SetValue(r, t.clone()),
            Action::FocusTypeField(_, f) => Action::FocusTypeField(r, *f),
            other => other.clone(),
        })
        .collect()
}

/// How an element is matched across two snapshots: by ref, except text pseudo-nodes, which
/// `getDOMInfo` renumbers each time and are matched by their parent and position.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum NodeKey {
    Element(NodeRef),
    Text(Option<NodeRef>, usize),
}

fn keyed(dom: &DomGraph) -> BTreeMap<NodeKey, &DomNode> {
    // Each node's place among its parent's children, in one pass.
    let mut place = vec![0; dom.nodes.len()];
    for n in &dom.nodes {
        for (k, &c) in n.children.iter().enumerate() {
            if let Some(p) = place.get_mut(c) {
                *p = k;
            }
        }
    }
    dom.nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let key = if n.is_text() {
                let parent = n.parent.map(|p| &dom.nodes[p]);
                NodeKey::Text(parent.map(|p| p.r#ref), parent.map_or(0, |_| place[i]))
            } else {
                NodeKey::Element(n.r#ref)
            };
            (key, n)
        })
        .collect()
}

/// What the page shows, for diffs: everything but focus (moving focus alone changes no content).
fn same_content(a: &DomNode, b: &DomNode) -> bool {
    a.tag == b.tag && a.text == b.text && a.value == b.value && a.tampered == b.tampered && a.classes == b.classes && a.rect == b.rect
}

/// The refs of elements that appeared, disappeared or changed between two snapshots (text
/// pseudo-nodes are reported through their parent).
pub fn dom_diff(before: &DomGraph, after: &DomGraph) -> Vec<NodeRef> {
    let (a, b) = (keyed(before), keyed(after));
    let mut changed = Vec::new();
    let mut noted = HashSet::new();
    let mut note = |k: &NodeKey, n: &DomNode| {
        let r = match k {
            NodeKey::Element(r) => *r,
            NodeKey::Text(p, _) => p.unwrap_or(n.r#ref),
        };
        if noted.insert(r) {
            changed.push(r);
        }
    };
    for (k, n) in &a {
        match b.get(k) {
            Some(m) if same_content(n, m) => {}
            _ => note(k, n),
        }
    }
    for (k, n) in &b {
        if !a.contains_key(k) {
            note(k, n);
        }
    }
    changed
}

/// The action a single-element change implies: a click when the element became tampered with
/// its value unchanged or when a checkbox or radio changed state; a type of the new value when
/// any other value changed.
fn inferred_action(before: &DomGraph, after: &DomGraph) -> Option<Action> {
    let [r] = dom_diff(before, after)[..] else { return None };
    let (old, new) = (before.get(r)?, after.get(r)?);
    if new.tampered && !old.tampered && old.value == new.value {
        return Some(Action::Click(r));
    }
    match (&old.value, &new.value) {
        (NodeValue::Checked(a), NodeValue::Checked(b)) if a != b => Some(Action::Click(r)),
        (a, NodeValue::Text(t)) if a != &new.value => Some(Action::Type(r, t.clone())),
        _ => None,
    }
}

/// Literal strings the page offers: every 1- to `max_ngram`-word run of each element's text,
/// punctuation dropped; the words read are charged to `env`, and reading stops at `max_work`.
fn page_strings(env: &ExecutionEnv, max_ngram: usize, max_work: u64) -> Vec<String> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for n in &env.observation.dom.nodes {
        if env.work() > max_work {
            break;
        }
        let words: Vec<String> = n
            .text
            .split_whitespace()
            .map(|w| w.chars().filter(|c| !c.is_ascii_punctuation()).collect::<String>())
            .filter(|w| !w.is_empty())
            .collect();
        env.charge((n.text.len() + words.len() * max_ngram) as u64 + 1);
        for len in 1..=max_ngram.min(words.len()) {
            for start in 0..=words.len() - len {
                let s = words[start..start + len].join(" ");
                if seen.insert(s.clone()) {
                    out.push(s);
                }
            }
        }
    }
    out
}

/// The goal strings that read `text`: the fields holding it (sorted by key), or, for a goal given
/// only as an utterance, the shortest token spans that spell it.
fn typed_strings(obs: &Observation, text: &str) -> Vec<StringSelector> {
    let ins = &obs.instruction;
    let same = |a: &str| a.trim().eq_ignore_ascii_case(text.trim());
    if !ins.fields.is_empty() {
        return ins.fields.iter().enumerate().filter(|(_, f)| same(&f.value)).map(|(i, _)| StringSelector::Field(i)).collect();
    }
    // Tokens hold no spaces, so only spans of as many tokens as the text has words can spell it.
    let (n, len) = (ins.tokens.len(), text.split(' ').count());
    if text.is_empty() || len > n {
        return Vec::new();
    }
    (0..=n - len)
        .filter(|&start| ins.tokens[start..start + len].join(" ") == text)
        .map(|start| StringSelector::Utterance { start, end: start + len })
        .take(1)
        .collect()
}

/// Every workflow step of the induction's grammar that allows `action` on `obs`: Click(E),
/// Type(E, field) and RandomType(E) over E = Tag(t), Like(s), Exact(s) for the page's tags and
/// strings (literals and field values), and one level of Near/SameRow/SameCol over those, both
/// unfiltered and filtered by the acted-on element's classes.
pub fn consistent_programs(obs: &Observation, action: &Action, config: &InductionConfig) -> Vec<Constraint> {
    programs_for(&ExecutionEnv::new(obs, None), action, config, &mut false)
}

/// [`consistent_programs`] on `env`'s observation. Only sets holding the acted-on element matter,
/// so a spatial set is tested from the element's side (is one of the base set's elements its
/// neighbour?) rather than computed whole; `cut` is set when the step's work passes
/// `config.max_work` and the rest of the grammar is left unsearched.
fn programs_for(env: &ExecutionEnv, action: &Action, config: &InductionConfig, cut: &mut bool) -> Vec<Constraint> {
    let obs = env.observation;
    let Some(target_index) = action.target().and_then(|r| obs.dom.index_of(r)) else { return Vec::new() };
    let target = &obs.dom.nodes[target_index];
    let fields = &obs.instruction.fields;
    let mut strings: Vec<StringSelector> = page_strings(env, config.max_ngram, config.max_work).into_iter().map(StringSelector::Literal).collect();
    strings.extend((0..fields.len()).map(StringSelector::Field));
    // The utterance's 1- to max_ngram-token spans (the authors' UtteranceSelector): the only goal
    // strings of a task without fields, and the only way to name one item of a field that lists
    // several (the lab's own click-checkboxes pages give `targets` = "KT, foo, bar" whole; the real
    // pages' fields, MiniWoB++'s, give one `target i` per box).
    let tokens = &obs.instruction.tokens;
    for len in 1..=config.max_ngram.min(tokens.len()) {
        strings.extend((0..=tokens.len() - len).map(|start| StringSelector::Utterance { start, end: start + len }));
    }

    let mut tags: Vec<&str> = obs.dom.nodes.iter().map(|n| n.tag.as_str()).collect();
    tags.sort();
    tags.dedup();
    let base = tags.iter().map(|t| ElementSet::tag(t)).chain(strings.iter().flat_map(|s| {
        // Sets from strings with no letters or digits match nothing at all.
        let usable = !normalise(&env.string(s).unwrap_or_default()).is_empty();
        usable.then(|| [ElementSet::like(s.clone()), ElementSet::exact(s.clone())]).into_iter().flatten()
    }));

    let mut sets: Vec<ElementSet> = Vec::new();
    let classes = (!target.classes.is_empty()).then(|| target.classes.clone());
    let boxes = env.boxes();
    for b in base {
        if env.work() > config.max_work {
            *cut = true;
            break;
        }
        let Ok(m) = env.members(&b) else { continue };
        if m.is_empty() {
            continue;
        }
        if m.binary_search(&target_index).is_ok() {
            sets.push(b.clone());
        }
        env.charge(3 * m.len() as u64);
        for (rel, kind) in [
            (Relation::Near, ElementSetKind::Near(Box::new(b.clone()))),
            (Relation::SameRow, ElementSetKind::SameRow(Box::new(b.clone()))),
            (Relation::SameCol, ElementSetKind::SameCol(Box::new(b.clone()))),
        ] {
            // The set holds the target when one of b's elements relates to it; filtered by the
            // target's own classes, it still does.
            if m.iter().any(|&a| boxes.relates(a, target_index, rel)) {
                if let Some(c) = &classes {
                    sets.push(ElementSet::new(kind.clone()));
                    sets.push(ElementSet::with_classes(kind, c.clone()));
                } else {
                    sets.push(ElementSet::new(kind));
                }
            }
        }
    }

    let mut programs = Vec::new();
    for set in sets {
        match action {
            Action::Click(_) => programs.push(Constraint::Click(set)),
            Action::Type(_, text) => {
                for s in typed_strings(obs, text) {
                    programs.push(Constraint::Type(set.clone(), s));
                }
                programs.push(Constraint::RandomType(set));
            }
            // Not in the paper's language (see Constraint::Select): the option by the goal
            // string that names it, or by its own text.
            Action::Select(_, option) => {
                let mut named = typed_strings(obs, option);
                named.push(StringSelector::Literal(option.clone()));
                for s in named {
                    programs.push(Constraint::Select(set.clone(), s));
                }
            }
            // gMiniWoB's set-value action has no workflow step: its tasks have no demonstrations;
            // nor do MiniWoB++'s pointer and key actions (the paper's language is elements').
            _ => {}
        }
    }
    // Every set holds the target, so whether a step allows the action is decided on the target.
    programs.retain(|p| env.allows_on_member(p, action));
    programs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::Environment;
    use crate::sim::SimEnv;
    use crate::task::TaskSpec;
    use crate::util::block_on;
    use crate::wge::demo_import::import_wge_demo;

    const LOGIN_USER: &[u8] = include_bytes!("../../tests/fixtures/wge/login-user_3B4YI393VAQ8Z71VZBMHZOUOIQXSS7_d2.json.gz");
    const CLICK_CHECKBOXES: &[u8] = include_bytes!("../../tests/fixtures/wge/click-checkboxes_317HQ483I8MMPG6UM3BHWSEVMTONIZ_d4.json.gz");

    /// Every Act edge's programs allow the action shown at its start (or the leaf/inferred
    /// version of it), and the lattice holds the demonstrated path 0 → 1 → … → T.
    fn assert_contains_demonstrated_path(lattice: &WorkflowLattice, steps: &[DemoStep]) {
        for (i, step) in steps.iter().enumerate() {
            let env = ExecutionEnv::new(&step.observation, None);
            let programs = lattice.programs(i);
            assert!(!programs.is_empty(), "step {i} ({:?}) has no workflow step", step.action);
            let leaves = expand_to_leaves(&step.observation.dom, &step.action, 8);
            assert!(
                programs.iter().any(|p| leaves.iter().any(|a| env.consistent(p, a))),
                "no program of step {i} allows the demonstrated {:?}",
                step.action
            );
        }
    }

    #[test]
    fn a_click_into_a_field_then_typing_there_is_one_type_on_the_clicked_page() {
        let obs = |page: u32| Observation { page, ..Default::default() };
        let step = |page: u32, action: Action| DemoStep { observation: obs(page), action };
        let steps = vec![
            step(0, Action::Click(4)),
            step(1, Action::Type(4, "Cheree".into())),
            step(2, Action::Click(5)),
            step(3, Action::Type(6, "x".into())),
            step(4, Action::Click(7)),
        ];
        let folded = fold_click_then_type(steps);
        let got: Vec<(u32, Action)> = folded.into_iter().map(|s| (s.observation.page, s.action)).collect();
        // The first pair folds onto the click's page; a type into another element than the one
        // clicked does not fold.
        assert_eq!(got, vec![(0, Action::Type(4, "Cheree".into())), (2, Action::Click(5)), (3, Action::Type(6, "x".into())), (4, Action::Click(7))]);
    }

    fn shown(lattice: &WorkflowLattice, i: usize) -> Vec<String> {
        lattice.programs(i).iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn login_user_sample_induces_the_papers_workflow() {
        let d = import_wge_demo(LOGIN_USER).unwrap();
        let lattice = induce(&d.steps, Some(&d.final_observation), &InductionConfig::default());
        assert_eq!(lattice.steps, 3);
        assert_contains_demonstrated_path(&lattice, &d.steps);
        // The workflow the paper's Appendix B shows for login-user is among the induced steps
        // (fields sorted by key: 0 = password, 1 = username).
        assert!(shown(&lattice, 0).contains(&"Type(Tag(\"INPUT_text\"), Field(1))".to_string()), "{:?}", shown(&lattice, 0));
        assert!(shown(&lattice, 1).contains(&"Type(Tag(\"INPUT_password\"), Field(0))".to_string()));
        assert!(shown(&lattice, 2).contains(&"Click(Like(\"Login\"))".to_string()));
        // The button sits 15 px under the password field, 42 px under its label (beyond Near).
        assert!(shown(&lattice, 2).contains(&"Click(Near(Tag(\"INPUT_password\")))".to_string()));
        assert!(!shown(&lattice, 2).contains(&"Click(Near(Like(\"Password\")))".to_string()));
        // Nothing inconsistent: typing the password's value is never offered for the username.
        assert!(!shown(&lattice, 0).iter().any(|p| p.contains("Field(0)")));
        // Every action changed the page: no skip edges.
        assert!(lattice.edges.iter().all(|e| e.kind != EdgeKind::Skip));
    }

    #[test]
    fn click_checkboxes_sample_expands_labels_to_their_checkbox() {
        let d = import_wge_demo(CLICK_CHECKBOXES).unwrap();
        let lattice = induce(&d.steps, Some(&d.final_observation), &InductionConfig::default());
        assert_eq!(lattice.steps, 5);
        assert_contains_demonstrated_path(&lattice, &d.steps);
        // The label's leaf is the checkbox (its text node cannot be clicked), and the checkbox
        // is also the single element that changed: programs click checkbox #2.
        let env = ExecutionEnv::new(&d.steps[0].observation, None);
        assert!(lattice.programs(0).iter().all(|p| env.consistent(p, &Action::Click(2))));
        // "Select KT, …": the checkbox next to the text KT.
        assert!(shown(&lattice, 0).contains(&"Click(Near(Exact(\"KT\")))".to_string()), "{:?}", shown(&lattice, 0));
        assert!(shown(&lattice, 4).contains(&"Click(Like(\"Submit\"))".to_string()));
    }

    #[test]
    fn an_action_that_changed_nothing_gets_a_skip_edge() {
        let d = import_wge_demo(LOGIN_USER).unwrap();
        // Repeat the first step as if the person had clicked the page's body first to no effect.
        let mut steps = d.steps.clone();
        let mut idle = steps[0].clone();
        idle.action = Action::Click(idle.observation.dom.nodes[0].r#ref);
        steps.insert(0, idle);
        let lattice = induce(&steps, Some(&d.final_observation), &InductionConfig::default());
        assert!(lattice.edges_from(0).any(|e| e.kind == EdgeKind::Skip && e.to == 1));
        assert!(lattice.edges_from(1).all(|e| e.kind != EdgeKind::Skip));
    }

    #[test]
    fn a_scripted_sim_demonstration_induces_a_lattice_holding_its_path() {
        // Scripted (not a person): the sim-type page recorded through the environment, as the
        // recorder does — observation before each action, then the action.
        let mut env = SimEnv::new(None);
        let spec = TaskSpec::Builtin { name: "sim-type".into() };
        let o0 = block_on(env.reset(&spec, 11)).unwrap();
        let target = o0.instruction.field("target").unwrap().to_string();
        let input = o0.dom.nodes.iter().find(|n| n.tag == "INPUT_text").unwrap().r#ref;
        let submit = o0.dom.nodes.iter().find(|n| n.text == "Submit").unwrap().r#ref;
        let a0 = Action::Type(input, target.clone());
        let s1 = block_on(env.step(&a0)).unwrap();
        let a1 = Action::Click(submit);
        let s2 = block_on(env.step(&a1)).unwrap();
        assert_eq!(s2.raw_reward, 1.0);
        let steps = vec![DemoStep { observation: o0, action: a0 }, DemoStep { observation: s1.observation, action: a1 }];
        let lattice = induce(&steps, Some(&s2.observation), &InductionConfig::default());
        assert_contains_demonstrated_path(&lattice, &steps);
        assert!(shown(&lattice, 0).iter().any(|p| p.starts_with("Type(") && p.ends_with("Field(0))")), "{:?}", shown(&lattice, 0));
        assert!(shown(&lattice, 1).contains(&"Click(Exact(\"Submit\"))".to_string()));
    }

    #[test]
    fn dom_diff_sees_value_changes_and_ignores_focus() {
        let d = import_wge_demo(LOGIN_USER).unwrap();
        let (a, b) = (&d.steps[0].observation.dom, &d.steps[1].observation.dom);
        assert_eq!(dom_diff(a, b), [18]);
        assert_eq!(inferred_action(a, b), Some(Action::Type(18, "keli".into())));
        let mut focused = a.clone();
        focused.nodes.iter_mut().for_each(|n| n.focused = !n.focused);
        assert!(dom_diff(a, &focused).is_empty());
    }

    /// A page of `n` buttons in rows of four, each with `words` distinct words, the first clicked.
    fn wordy_page(n: usize, words: usize) -> DemoStep {
        let mut nodes = vec![DomNode { r#ref: 1, parent: None, tag: "BODY".into(), ..DomNode::default() }];
        for i in 0..n {
            let rect = crate::env::Rect { left: (i % 4) as f32 * 40.0, top: 50.0 + (i / 4) as f32 * 20.0, width: 38.0, height: 18.0 };
            let text = (0..words).map(|w| format!("w{i}x{w}")).collect::<Vec<_>>().join(" ");
            nodes.push(DomNode { r#ref: 2 + i as u32, parent: Some(0), tag: "BUTTON".into(), text, rect, ..DomNode::default() });
            nodes[0].children.push(i + 1);
        }
        let observation = Observation { dom: DomGraph { nodes, truncated: 0 }, ..Default::default() };
        DemoStep { observation, action: Action::Click(2) }
    }

    #[test]
    fn a_step_of_a_huge_page_is_searched_within_the_budget_and_says_so() {
        let config = InductionConfig::default();
        // 1,000 buttons of 60 distinct words: 180,000 strings, each a Like and an Exact set over
        // the whole page; unbounded, this one step would take minutes.
        let step = wordy_page(1000, 60);
        let mut induction = Induction::new(std::slice::from_ref(&step), None, &config);
        while induction.next_step() {}
        // Bounded: the budget, plus at most one set's worth of work past it.
        assert!(induction.peak_work() < config.max_work + 2_000_000, "{}", induction.peak_work());
        let lattice = induction.finish();
        assert_eq!(lattice.cut_short, [0]);
        // What was searched first is kept: the tag, and the target's own words.
        let shown = shown(&lattice, 0);
        assert!(shown.contains(&"Click(Tag(\"BUTTON\"))".to_string()));
        assert!(shown.contains(&"Click(Like(\"w0x0\"))".to_string()), "{shown:?}");
        // A page within the budget is searched whole.
        let small = wordy_page(40, 3);
        let lattice = induce(std::slice::from_ref(&small), None, &config);
        assert!(lattice.cut_short.is_empty());
    }
}

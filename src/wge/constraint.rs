//! The constraint language workflow steps are written in (Liu et al., 2018, Appendix A;
//! reference-implementations.md §2.2). A workflow step `z_t` maps an observation to the set of
//! actions similar to the demonstrated one: `Click(Like("Submit"))` is every click on an element
//! whose text contains "Submit".

use std::cell::{Cell, OnceCell, RefCell};
use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;

use serde::{Deserialize, Serialize};

use crate::env::{Action, DomNode, Instruction, NodeRef, Observation, TEXT_TAG};
use crate::rng::Rng;

pub use super::neighbours::NEAR_PX;
use super::neighbours::{Boxes, Relation};

/// A string a constraint types or matches.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum StringSelector {
    /// A literal taken from the demonstration's page text.
    Literal(String),
    /// The value of the `i`-th goal field, fields sorted by key (`FieldsValueSelector`).
    Field(usize),
    /// Goal tokens `start..end` of the utterance, joined by spaces (`UtteranceSelector`).
    Utterance { start: usize, end: usize },
}

/// Which elements of the page a constraint speaks of.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ElementSetKind {
    /// Elements with this tag (compared without case: the authors lower-case tags).
    Tag(String),
    /// Elements whose text contains the string, punctuation and whitespace stripped, any case.
    Like(StringSelector),
    /// Elements whose text is the string, punctuation and whitespace stripped, any case.
    Exact(StringSelector),
    /// Elements within [`NEAR_PX`] of an element of the set, along a shared row or column.
    Near(Box<ElementSet>),
    /// Elements whose vertical extent overlaps an element of the set's (not the element itself).
    SameRow(Box<ElementSet>),
    /// Elements whose horizontal extent overlaps an element of the set's (not the element itself).
    SameCol(Box<ElementSet>),
    /// Every `INPUT_*` and `TEXTAREA`.
    InputElements,
    /// Every button.
    Buttons,
    /// Every text pseudo-node (`t`).
    Text,
    /// The element the previous workflow step acted on.
    Last,
}

/// An element set with an optional class filter: with `classes`, only elements sharing at least
/// one of them are kept (the paper's `And(elementSet, Class(classes))`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ElementSet {
    pub kind: ElementSetKind,
    pub classes: Option<Vec<String>>,
}

impl ElementSet {
    pub fn new(kind: ElementSetKind) -> Self {
        ElementSet { kind, classes: None }
    }
    pub fn with_classes(kind: ElementSetKind, classes: Vec<String>) -> Self {
        ElementSet { kind, classes: Some(classes) }
    }
    pub fn tag(tag: &str) -> Self {
        Self::new(ElementSetKind::Tag(tag.to_string()))
    }
    pub fn like(s: StringSelector) -> Self {
        Self::new(ElementSetKind::Like(s))
    }
    pub fn exact(s: StringSelector) -> Self {
        Self::new(ElementSetKind::Exact(s))
    }
    pub fn near(set: ElementSet) -> Self {
        Self::new(ElementSetKind::Near(Box::new(set)))
    }
    pub fn same_row(set: ElementSet) -> Self {
        Self::new(ElementSetKind::SameRow(Box::new(set)))
    }
    pub fn same_col(set: ElementSet) -> Self {
        Self::new(ElementSetKind::SameCol(Box::new(set)))
    }
}

/// A workflow step: a constraint on the next action.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Constraint {
    /// Click any leaf, non-text element of the set.
    Click(ElementSet),
    /// Type the string into any leaf text field of the set.
    Type(ElementSet, StringSelector),
    /// Type one of the goal fields' values, chosen at random, into any leaf text field of the set.
    RandomType(ElementSet),
    /// Type the string into the focused element.
    TypeToken(StringSelector),
    /// Choose the option reading the string in any leaf `<select>` of the set. Not in the
    /// paper's language (MiniWoB++'s drop-downs were clicked open there); our action vocabulary
    /// chooses options directly, so drop-down tasks (multi-layouts, choose-list) need it.
    Select(ElementSet, StringSelector),
    /// End the episode.
    Terminate,
}

/// Why a constraint could not be executed on a page; the workflow policy treats it as Terminate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExecutionError {
    NoSuchField(usize),
    UtteranceOutOfRange { start: usize, end: usize, tokens: usize },
    NoLastElement,
    NoFocusedElement,
    NoCandidates,
}

impl fmt::Display for ExecutionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExecutionError::NoSuchField(i) => write!(f, "the goal has no field #{i}"),
            ExecutionError::UtteranceOutOfRange { start, end, tokens } => {
                write!(f, "utterance tokens {start}..{end} are out of range (it has {tokens})")
            }
            ExecutionError::NoLastElement => write!(f, "no element has been acted on yet"),
            ExecutionError::NoFocusedElement => write!(f, "no element has focus"),
            ExecutionError::NoCandidates => write!(f, "no element fits"),
        }
    }
}

/// An element set as computed (or why it cannot be), cached per environment.
type SetResult = Result<Rc<Vec<usize>>, ExecutionError>;

/// What constraints are evaluated against: one observation, and the element the previous step
/// acted on (for `Last`). Each element set is computed once per environment (the authors cache
/// per state too), and the work spent is counted for the induction's budget.
pub struct ExecutionEnv<'a> {
    pub observation: &'a Observation,
    pub last: Option<NodeRef>,
    /// Each node's text as `Like`/`Exact` compare it, once asked for.
    texts: OnceCell<Vec<String>>,
    boxes: OnceCell<Boxes>,
    sets: RefCell<HashMap<ElementSet, SetResult>>,
    work: Cell<u64>,
}

impl<'a> ExecutionEnv<'a> {
    pub fn new(observation: &'a Observation, last: Option<NodeRef>) -> Self {
        ExecutionEnv { observation, last, texts: OnceCell::new(), boxes: OnceCell::new(), sets: RefCell::default(), work: Cell::new(0) }
    }

    fn nodes(&self) -> &'a [DomNode] {
        &self.observation.dom.nodes
    }

    /// The nodes' texts, normalised (computed on first use: linear in the page's text).
    pub(crate) fn texts(&self) -> &[String] {
        self.texts.get_or_init(|| {
            self.charge(self.nodes().iter().map(|n| n.text.len() as u64 + 1).sum());
            self.nodes().iter().map(|n| normalise(&n.text)).collect()
        })
    }

    pub(crate) fn boxes(&self) -> &Boxes {
        self.boxes.get_or_init(|| Boxes::new(self.nodes()))
    }

    /// Units of work done so far: nodes, characters and box pairs looked at.
    pub fn work(&self) -> u64 {
        self.work.get()
    }

    pub(crate) fn charge(&self, units: u64) {
        self.work.set(self.work.get().saturating_add(units));
    }

    /// The string a selector stands for on this page's instruction.
    pub fn string(&self, s: &StringSelector) -> Result<String, ExecutionError> {
        let instruction = &self.observation.instruction;
        match s {
            StringSelector::Literal(l) => Ok(l.clone()),
            StringSelector::Field(i) => instruction.fields.get(*i).map(|f| f.value.clone()).ok_or(ExecutionError::NoSuchField(*i)),
            StringSelector::Utterance { start, end } => {
                let tokens = &instruction.tokens;
                if start >= end || *end > tokens.len() {
                    return Err(ExecutionError::UtteranceOutOfRange { start: *start, end: *end, tokens: tokens.len() });
                }
                Ok(tokens[*start..*end].join(" "))
            }
        }
    }

    /// The elements of a set, as indices into the observation's nodes, in document order.
    pub fn elements(&self, set: &ElementSet) -> Result<Vec<usize>, ExecutionError> {
        self.members(set).map(|m| m.to_vec())
    }

    /// [`Self::elements`], shared from the environment's cache.
    pub(crate) fn members(&self, set: &ElementSet) -> Result<Rc<Vec<usize>>, ExecutionError> {
        if let Some(hit) = self.sets.borrow().get(set) {
            return hit.clone();
        }
        let computed = self.compute(set).map(Rc::new);
        self.sets.borrow_mut().insert(set.clone(), computed.clone());
        computed
    }

    fn compute(&self, set: &ElementSet) -> Result<Vec<usize>, ExecutionError> {
        let nodes = self.nodes();
        let all = 0..nodes.len();
        self.charge(nodes.len() as u64);
        let mut out: Vec<usize> = match &set.kind {
            ElementSetKind::Tag(tag) => all.filter(|&i| nodes[i].tag.eq_ignore_ascii_case(tag)).collect(),
            ElementSetKind::Like(s) | ElementSetKind::Exact(s) => {
                let want = normalise(&self.string(s)?);
                let exact = matches!(set.kind, ElementSetKind::Exact(_));
                if want.is_empty() {
                    // An empty string would match every text; it says nothing about the element.
                    Vec::new()
                } else {
                    let texts = self.texts();
                    if !exact {
                        self.charge(texts.iter().map(|t| t.len() as u64).sum());
                    }
                    all.filter(|&i| !texts[i].is_empty() && if exact { texts[i] == want } else { texts[i].contains(&want) }).collect()
                }
            }
            ElementSetKind::Near(inner) | ElementSetKind::SameRow(inner) | ElementSetKind::SameCol(inner) => {
                let anchors = self.members(inner)?;
                let rel = match set.kind {
                    ElementSetKind::SameRow(_) => Relation::SameRow,
                    ElementSetKind::SameCol(_) => Relation::SameCol,
                    _ => Relation::Near,
                };
                let mut work = 0;
                let out = self.boxes().related(&anchors, rel, &mut work);
                self.charge(work);
                out
            }
            ElementSetKind::InputElements => all.filter(|&i| nodes[i].tag.starts_with("INPUT") || nodes[i].tag == "TEXTAREA").collect(),
            ElementSetKind::Buttons => all.filter(|&i| matches!(nodes[i].tag.as_str(), "BUTTON" | "INPUT_button" | "INPUT_submit")).collect(),
            ElementSetKind::Text => all.filter(|&i| nodes[i].tag == TEXT_TAG).collect(),
            ElementSetKind::Last => {
                let last = self.last.ok_or(ExecutionError::NoLastElement)?;
                self.observation.dom.index_of(last).into_iter().collect()
            }
        };
        if let Some(classes) = &set.classes {
            out.retain(|&i| nodes[i].classes.iter().any(|c| classes.contains(c)));
        }
        Ok(out)
    }

    /// The actions the constraint takes on element `i` of its set (none when the element is not
    /// of the kind it acts on): the one place that says what each constraint does to an element.
    /// Terminate and TypeToken act on no set element.
    pub fn actions_on(&self, c: &Constraint, i: usize) -> Result<Vec<Action>, ExecutionError> {
        let n = &self.nodes()[i];
        let field = n.is_leaf() && n.accepts_text();
        Ok(match c {
            Constraint::Terminate | Constraint::TypeToken(_) => Vec::new(),
            Constraint::Click(_) => {
                if n.is_leaf() && !n.is_text() {
                    vec![Action::Click(n.r#ref)]
                } else {
                    Vec::new()
                }
            }
            Constraint::Type(_, s) => {
                let text = self.string(s)?;
                if field { vec![Action::Type(n.r#ref, text)] } else { Vec::new() }
            }
            Constraint::RandomType(_) => {
                if field {
                    self.observation.instruction.fields.iter().map(|f| Action::Type(n.r#ref, f.value.clone())).collect()
                } else {
                    Vec::new()
                }
            }
            Constraint::Select(_, s) => {
                let want = self.string(s)?;
                if n.is_leaf() && n.tag == "SELECT" {
                    n.options
                        .iter()
                        .find(|o| o.trim().eq_ignore_ascii_case(want.trim()))
                        .map(|o| Action::Select(n.r#ref, o.clone()))
                        .into_iter()
                        .collect()
                } else {
                    Vec::new()
                }
            }
        })
    }

    /// Every concrete action the constraint allows here (its execution paths). Terminate allows
    /// none; a constraint that cannot be executed is an error.
    pub fn candidates(&self, c: &Constraint) -> Result<Vec<Action>, ExecutionError> {
        let out: Vec<Action> = match c {
            Constraint::Terminate => return Ok(Vec::new()),
            Constraint::TypeToken(s) => {
                let focused = self.nodes().iter().find(|n| n.focused && n.accepts_text()).ok_or(ExecutionError::NoFocusedElement)?;
                vec![Action::Type(focused.r#ref, self.string(s)?)]
            }
            Constraint::Click(set) | Constraint::Type(set, _) | Constraint::RandomType(set) | Constraint::Select(set, _) => {
                let mut out = Vec::new();
                for &i in self.members(set)?.iter() {
                    out.extend(self.actions_on(c, i)?);
                }
                out
            }
        };
        if out.is_empty() { Err(ExecutionError::NoCandidates) } else { Ok(out) }
    }

    /// Whether the constraint allows `action` here. `RandomType` allows any text typed into one
    /// of its fields, as the authors' consistency check does.
    pub fn consistent(&self, c: &Constraint, action: &Action) -> bool {
        let member = |set: &ElementSet| {
            let target = action.target().and_then(|r| self.observation.dom.index_of(r));
            target.is_some_and(|t| self.members(set).is_ok_and(|m| m.binary_search(&t).is_ok()))
        };
        match c {
            Constraint::Terminate => false,
            Constraint::TypeToken(_) => self.candidates(c).is_ok_and(|all| all.contains(action)),
            Constraint::Click(set) | Constraint::Type(set, _) | Constraint::RandomType(set) | Constraint::Select(set, _) => {
                member(set) && self.allows_on_member(c, action)
            }
        }
    }

    /// Whether the constraint allows `action`, its target being known to belong to the
    /// constraint's element set (induction builds sets around the target, so it need not compute
    /// them whole). `RandomType` takes any text; a chosen option compares as the environment does.
    pub fn allows_on_member(&self, c: &Constraint, action: &Action) -> bool {
        let Some(i) = action.target().and_then(|r| self.observation.dom.index_of(r)) else { return false };
        let Ok(actions) = self.actions_on(c, i) else { return false };
        match (c, action) {
            (Constraint::RandomType(_), Action::Type(..)) => self.nodes()[i].is_leaf() && self.nodes()[i].accepts_text(),
            (Constraint::Select(..), Action::Select(r, option)) => {
                actions.iter().any(|a| matches!(a, Action::Select(q, o) if q == r && o.trim().eq_ignore_ascii_case(option.trim())))
            }
            _ => actions.contains(action),
        }
    }

    /// Samples one allowed action uniformly; `None` means the step terminates the episode
    /// (Terminate itself, or a constraint that cannot be executed here).
    pub fn sample(&self, c: &Constraint, rng: &mut Rng) -> Option<Action> {
        let all = self.candidates(c).ok()?;
        rng.choose(&all).cloned()
    }
}

/// Text as `Like`/`Exact` compare it: punctuation and whitespace removed, lower case.
pub fn normalise(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace() && !c.is_ascii_punctuation()).flat_map(char::to_lowercase).collect()
}

// The paper's notation, e.g. `Click(Near(Like("From"), class "text-input-pad"))`.
impl fmt::Display for StringSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StringSelector::Literal(s) => write!(f, "{s:?}"),
            StringSelector::Field(i) => write!(f, "Field({i})"),
            StringSelector::Utterance { start, end } => write!(f, "Utterance({start}, {end})"),
        }
    }
}

impl fmt::Display for ElementSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ElementSetKind::Tag(t) => write!(f, "Tag({t:?}")?,
            ElementSetKind::Like(s) => write!(f, "Like({s}")?,
            ElementSetKind::Exact(s) => write!(f, "Exact({s}")?,
            ElementSetKind::Near(e) => write!(f, "Near({e}")?,
            ElementSetKind::SameRow(e) => write!(f, "SameRow({e}")?,
            ElementSetKind::SameCol(e) => write!(f, "SameCol({e}")?,
            ElementSetKind::InputElements => write!(f, "InputElements(")?,
            ElementSetKind::Buttons => write!(f, "Buttons(")?,
            ElementSetKind::Text => write!(f, "Text(")?,
            ElementSetKind::Last => write!(f, "Last(")?,
        }
        match &self.classes {
            Some(c) => write!(f, ", class {:?})", c.join(" ")),
            None => write!(f, ")"),
        }
    }
}

impl fmt::Display for Constraint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Constraint::Click(e) => write!(f, "Click({e})"),
            Constraint::Type(e, s) => write!(f, "Type({e}, {s})"),
            Constraint::RandomType(e) => write!(f, "RandomType({e})"),
            Constraint::TypeToken(s) => write!(f, "TypeToken({s})"),
            Constraint::Select(e, s) => write!(f, "Select({e}, {s})"),
            Constraint::Terminate => write!(f, "Terminate"),
        }
    }
}

impl StringSelector {
    /// Readable text: `'Submit'`, `the username`, `the words "Enter the"`.
    pub fn describe(&self, instruction: Option<&Instruction>) -> String {
        match self {
            StringSelector::Literal(s) => format!("'{s}'"),
            StringSelector::Field(i) => match instruction.and_then(|ins| ins.fields.get(*i)) {
                Some(field) => format!("the {}", field.key),
                None => format!("goal field #{i}"),
            },
            StringSelector::Utterance { start, end } => match instruction.filter(|ins| start < end && *end <= ins.tokens.len()) {
                Some(ins) => format!("the words \"{}\" of the instruction", ins.tokens[*start..*end].join(" ")),
                None => format!("instruction words {start}–{end}"),
            },
        }
    }
}

impl ElementSet {
    /// Readable text: `an element like 'Submit'`, `an element near an INPUT_text`.
    pub fn describe(&self, instruction: Option<&Instruction>) -> String {
        let base = match &self.kind {
            ElementSetKind::Tag(t) => format!("a {t} element"),
            ElementSetKind::Like(s) => format!("an element like {}", s.describe(instruction)),
            ElementSetKind::Exact(s) => format!("an element reading exactly {}", s.describe(instruction)),
            ElementSetKind::Near(e) => format!("an element near {}", e.describe(instruction)),
            ElementSetKind::SameRow(e) => format!("an element in the same row as {}", e.describe(instruction)),
            ElementSetKind::SameCol(e) => format!("an element in the same column as {}", e.describe(instruction)),
            ElementSetKind::InputElements => "an input element".to_string(),
            ElementSetKind::Buttons => "a button".to_string(),
            ElementSetKind::Text => "a piece of text".to_string(),
            ElementSetKind::Last => "the element acted on last".to_string(),
        };
        match &self.classes {
            Some(c) => format!("{base} with class '{}'", c.join("' or '")),
            None => base,
        }
    }
}

impl Constraint {
    /// Readable text for people: `click an element like 'Submit'`.
    pub fn describe(&self, instruction: Option<&Instruction>) -> String {
        match self {
            Constraint::Click(e) => format!("click {}", e.describe(instruction)),
            Constraint::Type(e, s) => format!("type {} into {}", s.describe(instruction), e.describe(instruction)),
            Constraint::RandomType(e) => format!("type any goal value into {}", e.describe(instruction)),
            Constraint::TypeToken(s) => format!("type {} into the focused element", s.describe(instruction)),
            Constraint::Select(e, s) => format!("choose {} in {}", s.describe(instruction), e.describe(instruction)),
            Constraint::Terminate => "stop".to_string(),
        }
    }

    /// The element set the step acts on (none for typing into the focused element, or stopping).
    pub fn element_set(&self) -> Option<&ElementSet> {
        match self {
            Constraint::Click(e) | Constraint::Type(e, _) | Constraint::RandomType(e) | Constraint::Select(e, _) => Some(e),
            Constraint::TypeToken(_) | Constraint::Terminate => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::{DomGraph, Field, NodeValue, Rect};

    /// A login form laid out as MiniWoB draws it (boxes in px):
    ///
    /// ```text
    /// BODY #1
    ///   DIV #2 (form, class "form")
    ///     LABEL #3 "Username:"   (2, 60)  48×11     INPUT_text #4 (55, 58) 100×20
    ///     LABEL #5 "Password"    (2, 90)  48×11     INPUT_password #6 (55, 88) 100×20 class "secret"
    ///     BUTTON #7 "Login"      (2, 130) 60×30 class "secondary-action"
    ///     DIV #8                 (70, 130) 80×30
    ///       t #9 "Forgot"        (70, 130) 30×11
    ///       t #10 "password?"    (70, 141) 50×11
    ///   SPAN #11 "Login help"    (2, 185) 60×11 class "help secondary-action"
    /// ```
    fn login_page() -> Observation {
        // (ref, parent's index, tag, text, classes, (left, top, width, height))
        type Spec = (NodeRef, Option<usize>, &'static str, &'static str, &'static str, (f32, f32, f32, f32));
        let specs: [Spec; 11] = [
            (1, None, "BODY", "", "", (0.0, 0.0, 160.0, 210.0)),
            (2, Some(0), "DIV", "", "form", (0.0, 50.0, 160.0, 120.0)),
            (3, Some(1), "LABEL", "Username:", "", (2.0, 60.0, 48.0, 11.0)),
            (4, Some(1), "INPUT_text", "", "", (55.0, 58.0, 100.0, 20.0)),
            (5, Some(1), "LABEL", "Password", "", (2.0, 90.0, 48.0, 11.0)),
            (6, Some(1), "INPUT_password", "", "secret", (55.0, 88.0, 100.0, 20.0)),
            (7, Some(1), "BUTTON", "Login", "secondary-action", (2.0, 130.0, 60.0, 30.0)),
            (8, Some(1), "DIV", "", "", (70.0, 130.0, 80.0, 30.0)),
            (9, Some(7), "t", "Forgot", "", (70.0, 130.0, 30.0, 11.0)),
            (10, Some(7), "t", "password?", "", (70.0, 141.0, 50.0, 11.0)),
            (11, Some(0), "SPAN", "Login help", "help secondary-action", (2.0, 185.0, 60.0, 11.0)),
        ];
        let mut dom = DomGraph::default();
        for (r, parent, tag, text, classes, (left, top, width, height)) in specs {
            let i = dom.nodes.len();
            dom.nodes.push(DomNode {
                r#ref: r,
                parent,
                tag: tag.into(),
                text: text.into(),
                value: if tag.starts_with("INPUT") { NodeValue::Text(String::new()) } else { NodeValue::None },
                classes: classes.split_whitespace().map(str::to_string).collect(),
                rect: Rect { left, top, width, height },
                ..DomNode::default()
            });
            if let Some(p) = parent {
                dom.nodes[p].children.push(i);
            }
        }
        dom.validate().unwrap();
        let instruction = Instruction::new(
            "Enter the username \"keli\" and the password \"yBN\" into the text fields and press login.",
            vec![Field { key: "username".into(), value: "keli".into() }, Field { key: "password".into(), value: "yBN".into() }],
        );
        Observation { instruction, dom, ..Observation::default() }
    }

    fn refs(obs: &Observation, set: &ElementSet, last: Option<NodeRef>) -> Vec<NodeRef> {
        let env = ExecutionEnv::new(obs, last);
        env.elements(set).unwrap().into_iter().map(|i| obs.dom.nodes[i].r#ref).collect()
    }

    fn lit(s: &str) -> StringSelector {
        StringSelector::Literal(s.into())
    }

    #[test]
    fn property_sets_select_by_tag_text_kind_and_last() {
        let obs = login_page();
        assert_eq!(refs(&obs, &ElementSet::tag("input_text"), None), [4]);
        assert_eq!(refs(&obs, &ElementSet::tag("LABEL"), None), [3, 5]);
        // Like: substring, any case, punctuation and spaces ignored ("Username:" ⊇ "username").
        assert_eq!(refs(&obs, &ElementSet::like(lit("username")), None), [3]);
        assert_eq!(refs(&obs, &ElementSet::like(lit("login")), None), [7, 11]);
        assert_eq!(refs(&obs, &ElementSet::like(lit("PASSWORD")), None), [5, 10]);
        // Exact: the whole text.
        assert_eq!(refs(&obs, &ElementSet::exact(lit("login")), None), [7]);
        assert_eq!(refs(&obs, &ElementSet::exact(lit("password")), None), [5, 10]);
        assert!(refs(&obs, &ElementSet::like(lit("...")), None).is_empty(), "an empty string after stripping matches nothing");
        assert_eq!(refs(&obs, &ElementSet::new(ElementSetKind::InputElements), None), [4, 6]);
        assert_eq!(refs(&obs, &ElementSet::new(ElementSetKind::Buttons), None), [7]);
        assert_eq!(refs(&obs, &ElementSet::new(ElementSetKind::Text), None), [9, 10]);
        assert_eq!(refs(&obs, &ElementSet::new(ElementSetKind::Last), Some(6)), [6]);
        let env = ExecutionEnv::new(&obs, None);
        assert_eq!(env.elements(&ElementSet::new(ElementSetKind::Last)), Err(ExecutionError::NoLastElement));
    }

    #[test]
    fn geometry_near_same_row_same_col() {
        let obs = login_page();
        // Username label (2..50 × 60..71) and its field (55..155 × 58..78) share a row, 5 px apart.
        let label = ElementSet::like(lit("username"));
        assert_eq!(refs(&obs, &ElementSet::same_row(label.clone()), None), [1, 2, 4]);
        // Near: the field (same row, gap 5) but not the password label 19 px below in the same
        // column? It is: column overlap and a row gap of 90-71 = 19 ≤ 30.
        assert_eq!(refs(&obs, &ElementSet::near(label.clone()), None), [1, 2, 4, 5]);
        // The Login button (2..62 × 130..160): the "Forgot" text is 8 px to its right in the same
        // row; the help span is 25 px below; the password label 19 px and the password field
        // (whose columns 55..155 overlap the button's) 22 px above.
        assert_eq!(refs(&obs, &ElementSet::near(ElementSet::exact(lit("login"))), None), [1, 2, 5, 6, 8, 9, 10, 11]);
        // SameCol: everything whose horizontal extent overlaps the password field's (55..155).
        assert_eq!(refs(&obs, &ElementSet::same_col(ElementSet::tag("INPUT_password")), None), [1, 2, 4, 7, 8, 9, 10, 11]);
        // Nothing is near itself.
        assert!(!refs(&obs, &ElementSet::near(ElementSet::tag("BUTTON")), None).contains(&7));
        // 30 px is the bound: the help span is 25 px below the button, the username field is
        // 52 px above it.
        assert!(!refs(&obs, &ElementSet::near(ElementSet::tag("BUTTON")), None).contains(&4));
    }

    #[test]
    fn class_filters_keep_elements_sharing_a_class() {
        let obs = login_page();
        let with = |kind, classes: &[&str]| ElementSet::with_classes(kind, classes.iter().map(|c| c.to_string()).collect());
        assert_eq!(refs(&obs, &with(ElementSetKind::Like(lit("login")), &["secondary-action"]), None), [7, 11]);
        assert_eq!(refs(&obs, &with(ElementSetKind::Like(lit("login")), &["help"]), None), [11]);
        assert_eq!(refs(&obs, &with(ElementSetKind::Near(Box::new(ElementSet::like(lit("password")))), &["secret"]), None), [6]);
        assert!(refs(&obs, &with(ElementSetKind::Tag("LABEL".into()), &["nope"]), None).is_empty());
    }

    #[test]
    fn string_selectors_read_fields_sorted_by_key_and_utterance_spans() {
        let obs = login_page();
        let env = ExecutionEnv::new(&obs, None);
        // Fields sorted by key: password < username.
        assert_eq!(env.string(&StringSelector::Field(0)).unwrap(), "yBN");
        assert_eq!(env.string(&StringSelector::Field(1)).unwrap(), "keli");
        assert_eq!(env.string(&StringSelector::Field(2)), Err(ExecutionError::NoSuchField(2)));
        assert_eq!(env.string(&StringSelector::Utterance { start: 0, end: 2 }).unwrap(), "Enter the");
        assert_eq!(env.string(&StringSelector::Utterance { start: 3, end: 4 }).unwrap(), "keli");
        assert!(env.string(&StringSelector::Utterance { start: 3, end: 3 }).is_err());
        assert!(env.string(&StringSelector::Utterance { start: 0, end: 99 }).is_err());
        assert_eq!(env.string(&lit("Login")).unwrap(), "Login");
    }

    #[test]
    fn actions_enumerate_their_execution_paths() {
        let mut obs = login_page();
        let env = ExecutionEnv::new(&obs, None);
        // Click: leaf, non-text elements only (the DIV holding text nodes and the t nodes drop out).
        assert_eq!(env.candidates(&Constraint::Click(ElementSet::like(lit("password")))).unwrap(), [Action::Click(5)]);
        assert_eq!(env.candidates(&Constraint::Click(ElementSet::new(ElementSetKind::Text))), Err(ExecutionError::NoCandidates));
        let typed = Constraint::Type(ElementSet::new(ElementSetKind::InputElements), StringSelector::Field(1));
        assert_eq!(env.candidates(&typed).unwrap(), [Action::Type(4, "keli".into()), Action::Type(6, "keli".into())]);
        let random = Constraint::RandomType(ElementSet::tag("INPUT_text"));
        assert_eq!(env.candidates(&random).unwrap(), [Action::Type(4, "yBN".into()), Action::Type(4, "keli".into())]);
        assert!(env.consistent(&random, &Action::Type(4, "anything".into())));
        assert!(!env.consistent(&random, &Action::Type(6, "keli".into())));
        assert!(env.consistent(&typed, &Action::Type(6, "keli".into())));
        assert!(!env.consistent(&typed, &Action::Type(6, "yBN".into())));
        assert!(!env.consistent(&Constraint::Click(ElementSet::tag("BUTTON")), &Action::Click(11)));
        assert_eq!(env.candidates(&Constraint::Terminate).unwrap(), []);
        assert_eq!(env.candidates(&Constraint::TypeToken(lit("x"))), Err(ExecutionError::NoFocusedElement));
        let mut rng = Rng::new(3);
        assert_eq!(env.sample(&Constraint::Terminate, &mut rng), None);
        assert_eq!(env.sample(&Constraint::Click(ElementSet::tag("BUTTON")), &mut rng), Some(Action::Click(7)));
        // TypeToken types into the focused field.
        obs.dom.nodes[5].focused = true;
        let env = ExecutionEnv::new(&obs, None);
        assert_eq!(env.candidates(&Constraint::TypeToken(StringSelector::Field(0))).unwrap(), [Action::Type(6, "yBN".into())]);
    }

    #[test]
    fn constraints_read_as_text() {
        let obs = login_page();
        let ins = Some(&obs.instruction);
        assert_eq!(Constraint::Click(ElementSet::like(lit("Submit"))).describe(None), "click an element like 'Submit'");
        assert_eq!(
            Constraint::Type(ElementSet::tag("INPUT_password"), StringSelector::Field(0)).describe(ins),
            "type the password into a INPUT_password element"
        );
        assert_eq!(
            Constraint::Click(ElementSet::with_classes(ElementSetKind::Near(Box::new(ElementSet::exact(lit("Login")))), vec!["help".into()]))
                .describe(ins),
            "click an element near an element reading exactly 'Login' with class 'help'"
        );
        assert_eq!(
            Constraint::TypeToken(StringSelector::Utterance { start: 3, end: 4 }).describe(ins),
            "type the words \"keli\" of the instruction into the focused element"
        );
        assert_eq!(
            Constraint::Click(ElementSet::with_classes(ElementSetKind::SameRow(Box::new(ElementSet::tag("LABEL"))), vec!["last".into()])).to_string(),
            "Click(SameRow(Tag(\"LABEL\"), class \"last\"))"
        );
    }
}

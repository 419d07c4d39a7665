//! What an agent can do to the page.
//!
//! The lab's element actions ([`Action::Click`], [`Action::Type`], [`Action::Select`],
//! [`Action::SetValue`]) are what its agents use. Beside them are the rest of MiniWoB++ 1.1's
//! action space (`miniwob/action.py`), for the pages that need a pointer at a point, a drag, the
//! wheel or keys (`interaction` in `tasks/miniwob.json`); `docs/actions.md` lists every form.

use serde::{Deserialize, Serialize};

use super::error::EnvError;
use super::key::KeyPress;
use super::observation::{DomGraph, NodeRef};

/// The most a [`Action::Wait`] waits (milliseconds): longer than any page's time limit.
pub const MAX_WAIT_MS: u32 = 60_000;
/// The most points a [`Action::Drag`] passes through.
pub const MAX_DRAG_POINTS: usize = 512;
/// The pixels one MiniWoB++ scroll action moves (`constants.DEFAULT_SCROLL_AMOUNT`).
pub const SCROLL_STEP: i32 = 50;

/// A point in the task page's viewport (CSS pixels), where observations' boxes are.
pub type Point = (i32, i32);

/// One action on the task page. Targets are refs from the current observation; points are in
/// the task page's viewport, as the observation's boxes are.
///
/// Serialised compactly (`{"click":5}`, `{"type":[7,"Cheree"]}`, `{"click_at":[80,120]}`)
/// because action logs travel in share links and demonstration files. MiniWoB++ 1.1's 14 action
/// types map onto these: `NONE` is `Wait(0)`, `CLICK_ELEMENT` is `Click`,
/// `FOCUS_ELEMENT_AND_TYPE_TEXT` is `Type` (the lab inserts the text as one edit at the end of
/// the field; `Click` then `TypeText` presses its keys one by one), and each other type has a
/// variant of its own.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Press and release on the element, then click it (focus moves to it if focusable). A text
    /// pseudo-node is clicked through its parent element, as a real click on text would be.
    Click(NodeRef),
    /// Focus the element, put the caret at the end, and insert the text so that `input` fires.
    /// Text is appended to what the field holds.
    Type(NodeRef, String),
    /// Choose the option of a `<select>` whose text (or value) matches, then fire `change`.
    Select(NodeRef, String),
    /// Make the element hold a value, as gMiniWoB's `visitGroup` does: a text field's value is
    /// replaced (`input` and `change` fire), a `<select>` chooses the matching option, a radio
    /// group (or one of its radios) checks the radio whose value or label matches, a checkbox is
    /// ticked when the value is `true` and left unticked otherwise, a label passes the value to
    /// the control its `for` names (an input, select or button); anything else is clicked. An
    /// unmatched radio value or option changes nothing (not an error: agents pair fields and
    /// elements freely).
    SetValue(NodeRef, String),
    /// `NONE`: let the page run for this many milliseconds (0: just let its timers run), then
    /// observe. `{"wait":500}`
    Wait(u32),
    /// `MOVE_COORDS`: move the pointer to the point (hover, or drag while pressed). `{"move":[x,y]}`
    #[serde(rename = "move")]
    MoveTo(i32, i32),
    /// `CLICK_COORDS`: move there, press, release and click. `{"click_at":[x,y]}`
    ClickAt(i32, i32),
    /// `DBLCLICK_COORDS`: two clicks and a `dblclick` (a double-click on text selects a word).
    /// `{"dblclick_at":[x,y]}`
    #[serde(rename = "dblclick_at")]
    DoubleClickAt(i32, i32),
    /// `MOUSEDOWN_COORDS`: move there and press the left button (starts a drag or a text
    /// selection). `{"mouse_down":[x,y]}`
    MouseDown(i32, i32),
    /// `MOUSEUP_COORDS`: move there and release (a click where it was pressed, else the end of a
    /// drag). `{"mouse_up":[x,y]}`
    MouseUp(i32, i32),
    /// `SCROLL_UP_COORDS`/`SCROLL_DOWN_COORDS`: turn the wheel over the point by `dy` pixels
    /// (positive scrolls down; MiniWoB++ turns it by ±[`SCROLL_STEP`]). `{"scroll":[x,y,dy]}`
    Scroll(i32, i32, i32),
    /// `PRESS_KEY`: press and release a key, in MiniWoB++'s key syntax (`"<Enter>"`, `"C-c"`,
    /// `"S-<Tab>"`, `"a"`; see [`KeyPress::parse`]), on whatever has focus. `{"key":"C-v"}`
    #[serde(rename = "key")]
    PressKey(String),
    /// `TYPE_TEXT`: press the keys of the text one by one on whatever has focus.
    /// `{"type_text":"rm a.sh"}`
    TypeText(String),
    /// `TYPE_FIELD`: type the value of the observation's `i`-th instruction field (fields are
    /// sorted by key, as [`super::Instruction`] keeps them; nothing past the last field).
    /// `{"type_field":0}`
    TypeField(u32),
    /// `FOCUS_ELEMENT_AND_TYPE_FIELD`: click the element, then type the `i`-th field's value key
    /// by key. `{"focus_type_field":[7,0]}`
    FocusTypeField(NodeRef, u32),
    /// The lab's shorthand for MiniWoB++'s `MOUSEDOWN_COORDS`, `MOVE_COORDS`…, `MOUSEUP_COORDS`:
    /// press at the first point, move through the others and release at the last (a drag, a
    /// slider, a drawn line, a text selection) in one step. `{"drag":[[x0,y0],[x1,y1]]}`
    Drag(Vec<Point>),
}

impl Action {
    /// The element the action is on; `None` for actions at points, keys and waits.
    pub fn target(&self) -> Option<NodeRef> {
        match self {
            Action::Click(r) | Action::Type(r, _) | Action::Select(r, _) | Action::SetValue(r, _) | Action::FocusTypeField(r, _) => Some(*r),
            _ => None,
        }
    }

    /// The target of an element action, for environments that act on elements only (the native
    /// simulators): any other action is refused, saying so.
    pub fn element_target(&self) -> Result<NodeRef, EnvError> {
        self.target().ok_or_else(|| EnvError::BadTarget {
            action: self.describe(None),
            detail: "this environment acts on elements only (no pointer, wheel or keys)".into(),
        })
    }

    /// One of the lab's element actions (what its agents take), not one of MiniWoB++'s others.
    pub fn is_element_action(&self) -> bool {
        matches!(self, Action::Click(_) | Action::Type(..) | Action::Select(..) | Action::SetValue(..))
    }

    /// Where the pointer goes, for actions at a point (a drag's first point).
    pub fn point(&self) -> Option<Point> {
        match self {
            Action::MoveTo(x, y)
            | Action::ClickAt(x, y)
            | Action::DoubleClickAt(x, y)
            | Action::MouseDown(x, y)
            | Action::MouseUp(x, y)
            | Action::Scroll(x, y, _) => Some((*x, *y)),
            Action::Drag(path) => path.first().copied(),
            _ => None,
        }
    }

    /// What makes an action impossible to perform whatever the page: a key MiniWoB++'s syntax
    /// does not name, a drag with fewer than two points or more than [`MAX_DRAG_POINTS`], a wait
    /// past [`MAX_WAIT_MS`].
    pub fn check(&self) -> Result<(), String> {
        match self {
            Action::PressKey(k) => KeyPress::parse(k).map(|_| ()),
            Action::Drag(path) if path.len() < 2 => Err("a drag needs at least two points".into()),
            Action::Drag(path) if path.len() > MAX_DRAG_POINTS => Err(format!("a drag of {} points (at most {MAX_DRAG_POINTS})", path.len())),
            Action::Wait(ms) if *ms > MAX_WAIT_MS => Err(format!("a wait of {ms} ms (at most {MAX_WAIT_MS})")),
            _ => Ok(()),
        }
    }

    /// A one-line description for step lists and logs, e.g. `type "Cheree" into INPUT_text #4`.
    pub fn describe(&self, dom: Option<&DomGraph>) -> String {
        // An element's own text is empty when it sits in child nodes (a label with a checkbox
        // and a text node): name it by the text under it, as a person reads it.
        let what = |r: NodeRef| match dom.and_then(|d| Some((d, d.index_of(r)?))) {
            Some((d, i)) => match d.subtree_text(i) {
                t if t.is_empty() => format!("{} #{r}", d.nodes[i].tag),
                t => format!("{} \"{}\" #{r}", d.nodes[i].tag, clip(&t, 24)),
            },
            None => format!("#{r}"),
        };
        match self {
            Action::Click(r) => format!("click {}", what(*r)),
            Action::Type(r, t) => format!("type \"{}\" into {}", clip(t, 24), what(*r)),
            Action::Select(r, o) => format!("select \"{}\" in {}", clip(o, 24), what(*r)),
            // On an element that holds no value the actuator and the simulator click it: say so.
            Action::SetValue(r, _) if dom.and_then(|d| Some(set_clicks(d, d.index_of(*r)?))) == Some(true) => format!("click {}", what(*r)),
            Action::SetValue(r, v) => format!("set {} to \"{}\"", what(*r), clip(v, 24)),
            Action::Wait(ms) => format!("wait {ms} ms"),
            Action::MoveTo(x, y) => format!("move to ({x}, {y})"),
            Action::ClickAt(x, y) => format!("click at ({x}, {y})"),
            Action::DoubleClickAt(x, y) => format!("double-click at ({x}, {y})"),
            Action::MouseDown(x, y) => format!("press at ({x}, {y})"),
            Action::MouseUp(x, y) => format!("release at ({x}, {y})"),
            Action::Scroll(x, y, dy) => format!("scroll {} {} px at ({x}, {y})", if *dy < 0 { "up" } else { "down" }, dy.abs()),
            Action::PressKey(k) => format!("press {k}"),
            Action::TypeText(t) => format!("type \"{}\"", clip(t, 24)),
            Action::TypeField(i) => format!("type field {i}"),
            Action::FocusTypeField(r, i) => format!("type field {i} into {}", what(*r)),
            Action::Drag(path) => match (path.first(), path.last()) {
                (Some((x0, y0)), Some((x1, y1))) => format!("drag ({x0}, {y0}) → ({x1}, {y1})"),
                _ => "drag (no points)".to_string(),
            },
        }
    }

    /// The text the action carries (typed, chosen, set or a key's name), if any.
    pub fn text(&self) -> Option<&str> {
        match self {
            Action::Type(_, t) | Action::Select(_, t) | Action::SetValue(_, t) | Action::TypeText(t) | Action::PressKey(t) => Some(t),
            _ => None,
        }
    }
}

/// The `<input>` types a `SetValue` clicks rather than fills: they hold no value a user types or
/// ticks. One list for the actuator (live DOM), the simulator and [`Action::describe`].
pub const CLICKED_INPUT_TYPES: [&str; 7] = ["button", "submit", "reset", "image", "file", "color", "range"];

/// Whether a `SetValue` on node `i` is a click, as the actuator (`set_field`) and the simulator
/// perform it: a button-like input, or an element that is no field and holds no radio group.
fn set_clicks(dom: &DomGraph, i: usize) -> bool {
    let tag = dom.nodes[i].tag.as_str();
    match tag {
        t if t.strip_prefix("INPUT_").is_some_and(|ty| CLICKED_INPUT_TYPES.contains(&ty)) => true,
        t if t.starts_with("INPUT_") => false,
        "TEXTAREA" | "SELECT" | "LABEL" => false,
        // A text pseudo-node is acted on through its parent element.
        _ if dom.nodes[i].is_text() => dom.nodes[i].parent.is_some_and(|p| set_clicks(dom, p)),
        _ => {
            let mut stack = dom.nodes[i].children.clone();
            while let Some(c) = stack.pop() {
                if dom.nodes[c].tag == "INPUT_radio" {
                    return false;
                }
                stack.extend(&dom.nodes[c].children);
            }
            true
        }
    }
}

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n { s.to_string() } else { format!("{}…", s.chars().take(n).collect::<String>()) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::observation::DomNode;

    #[test]
    fn compact_json_round_trip() {
        let acts = vec![Action::Click(5), Action::Type(7, "Cheree".into()), Action::Select(9, "Option B".into()), Action::SetValue(4, "CA".into())];
        let json = serde_json::to_string(&acts).unwrap();
        assert_eq!(json, r#"[{"click":5},{"type":[7,"Cheree"]},{"select":[9,"Option B"]},{"set_value":[4,"CA"]}]"#);
        let back: Vec<Action> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, acts);
    }

    /// A node of a hand-built graph: its ref, links, tag and own text.
    fn node(r: NodeRef, parent: Option<usize>, children: Vec<usize>, tag: &str, text: &str) -> DomNode {
        DomNode { r#ref: r, parent, children, tag: tag.into(), text: text.into(), ..Default::default() }
    }

    #[test]
    fn describe_names_an_element_by_the_text_under_it() {
        // LABEL #1 holds a checkbox and a text node: its own text is empty.
        let dom = DomGraph {
            nodes: vec![
                node(0, None, vec![1], "DIV", ""),
                node(1, Some(0), vec![2, 3], "LABEL", ""),
                node(2, Some(1), vec![], "INPUT_checkbox", ""),
                node(3, Some(1), vec![], "t", "Tuesday"),
            ],
            truncated: 0,
        };
        assert_eq!(Action::Click(1).describe(Some(&dom)), "click LABEL \"Tuesday\" #1");
        assert_eq!(Action::Click(2).describe(Some(&dom)), "click INPUT_checkbox #2");
        assert_eq!(Action::Click(9).describe(Some(&dom)), "click #9");
        assert_eq!(Action::Click(1).describe(None), "click #1");
    }

    #[test]
    fn describe_calls_a_set_that_clicks_a_click() {
        let dom = DomGraph {
            nodes: vec![
                node(0, None, vec![1, 2, 3, 5], "DIV", ""),
                node(1, Some(0), vec![], "BUTTON", "Next"),
                node(2, Some(0), vec![], "INPUT_text", ""),
                node(3, Some(0), vec![4], "DIV", ""),
                node(4, Some(3), vec![], "INPUT_radio", ""),
                node(5, Some(0), vec![], "INPUT_submit", ""),
            ],
            truncated: 0,
        };
        let set = |r: NodeRef| Action::SetValue(r, "bob".into()).describe(Some(&dom));
        assert_eq!(set(1), "click BUTTON \"Next\" #1");
        assert_eq!(set(5), "click INPUT_submit #5");
        assert_eq!(set(2), "set INPUT_text #2 to \"bob\"");
        // A radio group's container chooses among its radios: a set, not a click.
        assert_eq!(set(3), "set DIV #3 to \"bob\"");
        // Without the page nothing is known of the element.
        assert_eq!(Action::SetValue(1, "bob".into()).describe(None), "set #1 to \"bob\"");
    }

    #[test]
    fn malformed_action_is_rejected() {
        assert!(serde_json::from_str::<Action>(r#"{"click":"five"}"#).is_err());
        assert!(serde_json::from_str::<Action>(r#"{"drag":[1,2]}"#).is_err());
        assert!(serde_json::from_str::<Action>(r#"{"click_at":[1.5,2]}"#).is_err(), "points are whole pixels");
        assert!(serde_json::from_str::<Action>(r#"{"scroll":[1,2]}"#).is_err());
        assert!(serde_json::from_str::<Action>(r#"{"hover":[1,2]}"#).is_err());
        assert!(serde_json::from_str::<Action>(r#""none""#).is_err(), "MiniWoB's NONE is {{\"wait\":0}}");
    }

    /// Every form of MiniWoB++ 1.1's action space, as files and links carry it; the lab's four
    /// element actions keep the forms they always had.
    #[test]
    fn every_form_round_trips() {
        let acts = vec![
            (Action::Wait(0), r#"{"wait":0}"#),
            (Action::MoveTo(10, 20), r#"{"move":[10,20]}"#),
            (Action::ClickAt(80, 120), r#"{"click_at":[80,120]}"#),
            (Action::DoubleClickAt(3, 4), r#"{"dblclick_at":[3,4]}"#),
            (Action::MouseDown(1, 2), r#"{"mouse_down":[1,2]}"#),
            (Action::MouseUp(5, 6), r#"{"mouse_up":[5,6]}"#),
            (Action::Scroll(40, 90, -50), r#"{"scroll":[40,90,-50]}"#),
            (Action::PressKey("C-c".into()), r#"{"key":"C-c"}"#),
            (Action::TypeText("rm a.sh".into()), r#"{"type_text":"rm a.sh"}"#),
            (Action::TypeField(1), r#"{"type_field":1}"#),
            (Action::FocusTypeField(7, 0), r#"{"focus_type_field":[7,0]}"#),
            (Action::Drag(vec![(10, 60), (30, 70), (90, 100)]), r#"{"drag":[[10,60],[30,70],[90,100]]}"#),
            (Action::Click(5), r#"{"click":5}"#),
        ];
        for (a, json) in acts {
            assert_eq!(serde_json::to_string(&a).unwrap(), json);
            assert_eq!(serde_json::from_str::<Action>(json).unwrap(), a);
            assert!(a.check().is_ok(), "{json}");
        }
    }

    #[test]
    fn impossible_actions_are_named() {
        assert!(Action::PressKey("<Hyper>".into()).check().unwrap_err().contains("<Hyper>"));
        assert!(Action::Drag(vec![(1, 1)]).check().unwrap_err().contains("two points"));
        assert!(Action::Drag(vec![(1, 1); MAX_DRAG_POINTS + 1]).check().is_err());
        assert!(Action::Wait(MAX_WAIT_MS + 1).check().is_err());
        assert_eq!(Action::Drag(vec![(1, 2), (5, 6)]).describe(None), "drag (1, 2) → (5, 6)");
        assert_eq!(Action::Scroll(1, 2, -50).describe(None), "scroll up 50 px at (1, 2)");
        assert_eq!(Action::ClickAt(3, 4).target(), None);
        assert_eq!(Action::FocusTypeField(9, 0).target(), Some(9));
        assert_eq!(Action::Drag(vec![(1, 2), (5, 6)]).point(), Some((1, 2)));
        assert!(Action::Click(1).is_element_action() && !Action::TypeText("x".into()).is_element_action());
    }
}

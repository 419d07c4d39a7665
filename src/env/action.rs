//! What an agent can do to the page.

use serde::{Deserialize, Serialize};

use super::observation::{DomGraph, NodeRef};

/// One action on the task page. Targets are refs from the current observation.
///
/// Serialised compactly (`{"click":5}`, `{"type":[7,"Cheree"]}`) because action logs travel in
/// share links and demonstration files.
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
    /// ticked when the value is `true` and left unticked otherwise; anything else is clicked. An
    /// unmatched radio value or option changes nothing (not an error: agents pair fields and
    /// elements freely).
    SetValue(NodeRef, String),
}

impl Action {
    pub fn target(&self) -> NodeRef {
        match self {
            Action::Click(r) | Action::Type(r, _) | Action::Select(r, _) | Action::SetValue(r, _) => *r,
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
            Action::SetValue(r, v) => format!("set {} to \"{}\"", what(*r), clip(v, 24)),
        }
    }

    /// The text the action carries (typed, chosen or set), if any.
    pub fn text(&self) -> Option<&str> {
        match self {
            Action::Click(_) => None,
            Action::Type(_, t) | Action::Select(_, t) | Action::SetValue(_, t) => Some(t),
        }
    }
}

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::observation::DomNode;

    #[test]
    fn compact_json_round_trip() {
        let acts = vec![
            Action::Click(5),
            Action::Type(7, "Cheree".into()),
            Action::Select(9, "Option B".into()),
            Action::SetValue(4, "CA".into()),
        ];
        let json = serde_json::to_string(&acts).unwrap();
        assert_eq!(json, r#"[{"click":5},{"type":[7,"Cheree"]},{"select":[9,"Option B"]},{"set_value":[4,"CA"]}]"#);
        let back: Vec<Action> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, acts);
    }

    #[test]
    fn describe_names_an_element_by_the_text_under_it() {
        // LABEL #1 holds a checkbox and a text node: its own text is empty.
        let node = |r: NodeRef, parent: Option<usize>, children: Vec<usize>, tag: &str, text: &str| DomNode {
            r#ref: r,
            parent,
            children,
            tag: tag.into(),
            text: text.into(),
            ..Default::default()
        };
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
    fn malformed_action_is_rejected() {
        assert!(serde_json::from_str::<Action>(r#"{"click":"five"}"#).is_err());
        assert!(serde_json::from_str::<Action>(r#"{"drag":[1,2]}"#).is_err());
    }
}

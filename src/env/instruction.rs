//! The task's instruction: utterance, goal tokens, and the structured fields behind it.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Instruction {
    /// The instruction as the page shows it, whitespace collapsed.
    pub utterance: String,
    /// The utterance split into goal tokens (see [`goal_tokens`]); typing actions draw from these.
    pub tokens: Vec<String>,
    /// The structured fields the instruction was generated from, sorted by key (empty when the
    /// page does not provide them).
    pub fields: Vec<Field>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Field {
    pub key: String,
    pub value: String,
}

impl Instruction {
    pub fn new(utterance: &str, mut fields: Vec<Field>) -> Self {
        fields.sort_by(|a, b| a.key.cmp(&b.key));
        let utterance = utterance.split_whitespace().collect::<Vec<_>>().join(" ");
        let tokens = match json_values(&utterance) {
            // A profile given as JSON (gMiniWoB's utterance): the goal tokens are its values',
            // not its braces, quotes and keys.
            Some(values) => values.iter().flat_map(|v| goal_tokens(v)).collect(),
            None => goal_tokens(&utterance),
        };
        Instruction { tokens, utterance, fields }
    }
    /// The instruction of an episode of `task`: as [`Self::new`], but when the page gives no
    /// fields they are read from the utterance, as MiniWoB++'s own field extractors do (see
    /// [`super::fields`]), so the scripted oracles also work on pages that only show an utterance.
    pub fn for_task(task: &str, utterance: &str, fields: Vec<Field>) -> Self {
        let fields = if fields.is_empty() { super::fields::extract_fields(task, utterance).unwrap_or_default() } else { fields };
        Self::new(utterance, fields)
    }
    pub fn field(&self, key: &str) -> Option<&str> {
        self.fields.iter().find(|f| f.key == key).map(|f| f.value.as_str())
    }
}

/// The values of an utterance that is a JSON object (in key order), or `None` for ordinary text.
fn json_values(utterance: &str) -> Option<Vec<String>> {
    if !utterance.starts_with('{') {
        return None;
    }
    let map: serde_json::Map<String, serde_json::Value> = serde_json::from_str(utterance).ok()?;
    Some(
        map.values()
            .filter_map(|v| match v {
                serde_json::Value::String(s) => Some(s.clone()),
                serde_json::Value::Number(n) => Some(n.to_string()),
                serde_json::Value::Bool(b) => Some(b.to_string()),
                _ => None,
            })
            .collect(),
    )
}

/// Splits an utterance into goal tokens the way DOM-Q-Net does: the separators `. , " /` and
/// whitespace break tokens; quotes around a word are dropped. Case is kept, because typed text
/// must match exactly.
pub fn goal_tokens(utterance: &str) -> Vec<String> {
    utterance
        .split(|c: char| c.is_whitespace() || matches!(c, '.' | ',' | '"' | '/'))
        .map(|t| t.trim_matches(|c: char| matches!(c, '\'' | '“' | '”' | ':' | ';' | '!' | '?' | '(' | ')')))
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_drop_separators_and_quotes() {
        let toks = goal_tokens("Enter \"Cheree\" into the text field, and press Submit.");
        assert_eq!(toks, ["Enter", "Cheree", "into", "the", "text", "field", "and", "press", "Submit"]);
    }

    #[test]
    fn tokens_keep_inner_apostrophes_and_case() {
        assert_eq!(goal_tokens("Type 'O'Brien' now!"), ["Type", "O'Brien", "now"]);
        assert_eq!(goal_tokens("10/02/2020"), ["10", "02", "2020"]);
    }

    #[test]
    fn a_json_profile_gives_its_values_as_tokens() {
        let ins = Instruction::new(r#"{"username": "ann.lee", "city": "Palo Alto", "n": 3}"#, vec![]);
        // In key order, as the fields are.
        assert_eq!(ins.tokens, ["Palo", "Alto", "3", "ann", "lee"]);
        assert!(!ins.tokens.iter().any(|t| t.contains('{') || t == "username"));
        // Text that merely starts with a brace is still text.
        assert_eq!(Instruction::new("{not json} now", vec![]).tokens, ["{not", "json}", "now"]);
    }

    #[test]
    fn a_page_without_fields_gets_them_from_its_utterance() {
        let said = "Enter the username \"ann\" and the password \"x1\" into the text fields and press login.";
        let ins = Instruction::for_task("login-user", said, vec![]);
        assert_eq!((ins.field("username"), ins.field("password")), (Some("ann"), Some("x1")));
        assert_eq!(ins, Instruction::new(said, ins.fields.clone()), "otherwise the same instruction");
        // The page's own fields win; a task without a pattern keeps none.
        let given = vec![Field { key: "username".into(), value: "bo".into() }];
        assert_eq!(Instruction::for_task("login-user", said, given.clone()).fields, given);
        assert!(Instruction::for_task("order-form", said, vec![]).fields.is_empty());
    }

    #[test]
    fn fields_sorted_and_utterance_collapsed() {
        let ins = Instruction::new(
            "  Log   in\n as x ",
            vec![Field { key: "username".into(), value: "x".into() }, Field { key: "password".into(), value: "y".into() }],
        );
        assert_eq!(ins.utterance, "Log in as x");
        assert_eq!(ins.fields[0].key, "password");
        assert_eq!(ins.field("username"), Some("x"));
        assert_eq!(ins.field("nope"), None);
    }
}

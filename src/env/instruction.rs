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
        Instruction { tokens: goal_tokens(&utterance), utterance, fields }
    }
    pub fn field(&self, key: &str) -> Option<&str> {
        self.fields.iter().find(|f| f.key == key).map(|f| f.value.as_str())
    }
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
    fn fields_sorted_and_utterance_collapsed() {
        let ins = Instruction::new(
            "  Log   in\n as x ",
            vec![
                Field { key: "username".into(), value: "x".into() },
                Field { key: "password".into(), value: "y".into() },
            ],
        );
        assert_eq!(ins.utterance, "Log in as x");
        assert_eq!(ins.fields[0].key, "password");
        assert_eq!(ins.field("username"), Some("x"));
        assert_eq!(ins.field("nope"), None);
    }
}

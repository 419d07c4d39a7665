//! Vocabularies grown online, with a cap (shared by the agents): new strings get the next id until the vocabulary is
//! full, after which they are out of vocabulary.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

pub const UNK: u32 = 0;
pub const PAD: u32 = 1;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Vocab {
    words: Vec<String>,
    cap: usize,
    #[serde(skip)]
    index: HashMap<String, u32>,
}

impl Vocab {
    pub fn new(cap: usize) -> Self {
        let mut v = Vocab { words: vec!["<unk>".into(), "<pad>".into()], cap, index: HashMap::new() };
        v.reindex();
        v
    }

    /// Rebuilds the lookup table (after deserialising).
    pub fn reindex(&mut self) {
        self.index = self.words.iter().enumerate().map(|(i, w)| (w.clone(), i as u32)).collect();
    }

    /// The id of `word`, adding it while there is room; `None` when it is out of vocabulary.
    pub fn id_or_add(&mut self, word: &str) -> Option<u32> {
        if let Some(&id) = self.index.get(word) {
            return Some(id);
        }
        if self.words.len() >= self.cap {
            return None;
        }
        let id = self.words.len() as u32;
        self.words.push(word.to_string());
        self.index.insert(word.to_string(), id);
        Some(id)
    }

    pub fn get(&self, word: &str) -> Option<u32> {
        self.index.get(word).copied()
    }

    pub fn len(&self) -> usize {
        self.words.len()
    }

    pub fn is_empty(&self) -> bool {
        self.words.len() <= 2
    }

    pub fn cap(&self) -> usize {
        self.cap
    }

    pub fn word(&self, id: u32) -> Option<&str> {
        self.words.get(id as usize).map(String::as_str)
    }

    /// Whether a vocabulary read from a file fits an embedding table of `rows` rows: its cap is
    /// the table's, it holds no more words than that (every id is then a row), and it starts
    /// with `<unk>` and `<pad>`. The text says what does not fit.
    pub fn check_fits(&self, rows: usize) -> Result<(), String> {
        if self.cap != rows {
            return Err(format!("has a cap of {}, but its table has {rows} rows", self.cap));
        }
        if self.words.len() > rows {
            return Err(format!("holds {} words, over its table's {rows} rows", self.words.len()));
        }
        if self.word(UNK) != Some("<unk>") || self.word(PAD) != Some("<pad>") {
            return Err("does not start with <unk> and <pad>".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_until_the_cap() {
        let mut v = Vocab::new(4);
        assert_eq!(v.id_or_add("a"), Some(2));
        assert_eq!(v.id_or_add("b"), Some(3));
        assert_eq!(v.id_or_add("a"), Some(2));
        assert_eq!(v.id_or_add("c"), None, "full");
        assert_eq!(v.len(), 4);
        assert_eq!(v.word(3), Some("b"));
    }

    #[test]
    fn survives_serialisation() {
        let mut v = Vocab::new(10);
        v.id_or_add("x");
        let mut back: Vocab = serde_json::from_str(&serde_json::to_string(&v).unwrap()).unwrap();
        back.reindex();
        assert_eq!(back.get("x"), Some(2));
        assert_eq!(back, v);
    }
}

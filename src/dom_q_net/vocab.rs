//! DOM-Q-Net's three vocabularies (tags, text tokens, classes), each grown online with its cap.

use serde::{Deserialize, Serialize};

pub use crate::learn::vocab::{PAD, UNK, Vocab};

/// The three vocabularies of DOM-Q-Net.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Vocabs {
    pub tag: Vocab,
    pub text: Vocab,
    pub class: Vocab,
}

impl Vocabs {
    pub fn new(tag: usize, text: usize, class: usize) -> Self {
        Vocabs { tag: Vocab::new(tag), text: Vocab::new(text), class: Vocab::new(class) }
    }
    pub fn reindex(&mut self) {
        self.tag.reindex();
        self.text.reindex();
        self.class.reindex();
    }
}

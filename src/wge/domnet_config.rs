//! Every hyperparameter of WGE's neural policy in one place: DOMNet's sizes, the grouped replay's
//! rules and the training constants, each with its source.
//!
//! "Code" is the authors' `stanfordnlp/wge` (`wob_policy.py`, `default-base.txt`), as
//! `../shared/reference/reference-implementations.md` §2.5–2.6 records it; "§n"/"App. C" are
//! sections of Liu et al., "Reinforcement Learning on Web Interfaces using Workflow-Guided
//! Exploration" (ICLR 2018).

use serde::{Deserialize, Serialize};

/// How the spatial neighbours' embeddings combine into an element's spatial embedding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NeighbourPool {
    /// Summed (§5: "sum up their base embeddings").
    Sum,
    /// Averaged (the code).
    Mean,
}

/// How an element's depth-k tree neighbours combine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TreePool {
    /// A learned affine map of each neighbour's embedding, then max-pooled (§5); an element
    /// without neighbours at depth k gets zeros.
    AffineMax,
    /// A Linear map of the neighbours' summed embeddings (the code).
    LinearSum,
}

/// How an element is related to the goal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GoalMatch {
    /// The goal-matching embedding: the sum of the word embeddings of the element's words that
    /// also appear in the goal (its utterance or a field's value), concatenated last (§5).
    WordSum,
    /// A learned vector per field bucket whose value contains the element's text, added to the
    /// base embedding before the neighbours read it (the code's alignment).
    FieldBuckets,
}

/// Which alignment bucket a field's key takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AlignKeys {
    /// A bucket of its own per key, in the order keys are first seen, the keys past the table's
    /// room sharing one (the code: `LazyInitVocab` over the keys). Two keys never share a vector
    /// while there is room: `target 3` is not `button`.
    FirstSeen,
    /// A hash of the key modulo the buckets (before 2026-12-05, ours): keys can collide, and with
    /// 20 buckets MiniWoB++'s `target 3` fell into `button`'s.
    Hashed,
}

/// The baseline the policy gradient subtracts from the return.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Baseline {
    /// A2C's critic (§5, Fig. 1 and 5): V(s) = MLP(state context), trained on DOMNet's own
    /// on-policy episodes only (Fig. 1 updates "π_n and critic V" there, π_n alone on replayed
    /// ones); both updates use G − V(s).
    Critic,
    /// The constant `NeuralConfig::baseline` (the code: 0.1).
    Constant,
}

/// What a word is embedded with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WordEmbedding {
    /// A learned vector per word, grown online up to `word_vocab` (ours, the default: what the
    /// lab's WGE figures were measured with).
    Learned,
    /// GloVe 6B 50-d, held fixed, for the words the shipped table has (`data/glove-6b-50d-tasks.wlv`,
    /// `wge::word_vectors`); other words learned as with `Learned`. The code: frozen GloVe-100d,
    /// which no registry package ships; `word_dim` must then be 50.
    Glove6b50d,
}

pub use crate::share::Words;

// What a saved config that predates a setting was trained with: the code's architecture.
fn code_spatial() -> NeighbourPool {
    NeighbourPool::Mean
}
fn code_tree() -> TreePool {
    TreePool::LinearSum
}
fn code_match() -> GoalMatch {
    GoalMatch::FieldBuckets
}
fn hashed_keys() -> AlignKeys {
    AlignKeys::Hashed
}
fn code_baseline() -> Baseline {
    Baseline::Constant
}
fn learned_words() -> WordEmbedding {
    WordEmbedding::Learned
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct NeuralConfig {
    // ---------------------------------------------------------------- DOMNet (code, §5, App. C)
    /// Word vocabulary cap, `<unk>` and `<pad>` included: words get ids (and learned embeddings)
    /// grown online up to this cap; with `word_embedding` GloVe the table's words read its fixed
    /// vectors instead (the code: frozen GloVe-100d for every word).
    pub word_vocab: usize,
    /// Word embedding size (the code's GloVe-100d; 50 with `WordEmbedding::Glove6b50d`).
    pub word_dim: usize,
    /// Learned word embeddings (the default) or fixed GloVe vectors for the words they cover.
    #[serde(default = "learned_words")]
    pub word_embedding: WordEmbedding,
    /// Most words of one text read by the encoder (longer texts keep their first words; the
    /// code reads whole strings, but MiniWoB element texts are short).
    pub max_text_words: usize,
    /// BiLSTM units per direction of the text encoder (code: 32, so a text is 64-d and a field
    /// [key ; value] 128-d).
    pub lstm_hidden: usize,
    /// Tag vocabulary cap and embedding size (code: tag 16).
    pub tag_vocab: usize,
    pub tag_dim: usize,
    /// Class-string vocabulary cap and embedding size (code: the whole class string as one token,
    /// 16-d).
    pub class_vocab: usize,
    pub class_dim: usize,
    /// Value embedding (code: 16-d over {true, false, none, ""}; ours adds "non-empty text").
    pub value_dim: usize,
    /// Tampered embedding (code: 8-d).
    pub tampered_dim: usize,
    /// left/top are divided by this (code: 160, the task area's width).
    pub position_scale: f32,
    /// Field buckets of the alignment embedding and its size (code: a learned 128-d vector for
    /// each of 20 field buckets whose value contains the element's text).
    pub align_buckets: usize,
    pub align_dim: usize,
    /// Which bucket a key takes: its own, first seen first (code, the default), or a hash (the
    /// lab's before; what a saved config without this setting was trained with).
    #[serde(default = "hashed_keys")]
    pub align_keys: AlignKeys,
    /// An element whose text some field's value holds also gets one learned vector shared by
    /// every key (ours; not in the code, absent from configs saved before it): with a bucket per
    /// key alone, a key no replayed goal had (the fourth box of click-checkboxes-transfer, which
    /// trains on 0–3 and tests on 4–6) has an untrained vector, and DOMNet clicks the boxes of the
    /// keys it knows, then Submit.
    #[serde(default)]
    pub align_any: bool,
    /// With fixed word vectors (`word_embedding: glove_6b50d`), an element whose text no field's
    /// value holds is aligned with each field by the largest cosine between one of its words and
    /// one of the value's (at least 0) instead of not at all (ours; not in the code, whose
    /// alignment is exact containment): click-checkboxes-soft's boxes carry synonyms of the
    /// goal's words, which exact containment never aligns. Off by default and in saved configs.
    #[serde(default)]
    pub align_similar: bool,
    /// With `align_similar`, the strength is the mean over the element's words of each word's
    /// best cosine with the value's words (a word the value holds counts 1, a word the table
    /// lacks 0), instead of the largest cosine of any pair (ours): under the largest pair,
    /// social-media's "Embed Tweet" aligns with a "Copy link to Tweet" goal as fully as the menu
    /// item that goal names, through "tweet" alone. One-word elements (click-checkboxes-soft's
    /// boxes) align the same under both. Off by default and in saved configs.
    #[serde(default)]
    pub align_similar_mean: bool,
    /// An element without text (an icon) is aligned with each field one of whose value's words is
    /// one of its class names, whole (ours; not in the code, which aligns text alone):
    /// social-media's Reply, Retweet and Like buttons are empty spans named only by their class,
    /// so a goal no demonstration shows (Reply) has nothing to align with. Off by default and in
    /// saved configs.
    #[serde(default)]
    pub align_classes: bool,
    /// Spatial neighbours lie within this many pixels (code and §5: 30).
    pub neighbour_px: f32,
    /// Spatial neighbours averaged (code, the default) or summed (§5).
    #[serde(default = "code_spatial")]
    pub spatial_pool: NeighbourPool,
    /// Tree neighbours: Linear of the sum (code, the default) or affine then max-pool (§5).
    #[serde(default = "code_tree")]
    pub tree_pool: TreePool,
    /// Goal matching: field buckets (code, the default) or the sum of the element's goal-word
    /// embeddings (§5). With `WordSum` there is no alignment embedding (`align_*` unused).
    #[serde(default = "code_match")]
    pub goal_match: GoalMatch,
    /// Tree-neighbour depths k: elements whose lowest common ancestor is at depth ≥ k (code and
    /// §5: 3, 4, 5, 6), one 64-d projection each (code: 64).
    pub tree_depths: Vec<usize>,
    pub tree_dim: usize,
    /// Attention size of every v·tanh(W_h H + W_s s) attention (code: 64).
    pub attn_dim: usize,
    /// Sentinel-attention heads over the fields and DOM-attention heads over the elements (App.
    /// C: 2 and 2).
    pub goal_heads: usize,
    pub dom_heads: usize,
    /// The chosen element's context, ReLU(Linear → 96) (code: 96).
    pub ctx_dim: usize,
    /// The goal is the utterance alone, even where the page gives fields (§5, email-inbox-nl:
    /// "the neural policy π_n receives only the utterance"; the workflow policy keeps the
    /// fields): the goal units are the whole utterance and its candidate spans (`domnet`),
    /// and a typing action types a span. Off by default; `wge::config::utterance_goal_for`
    /// turns it on for the natural-language tasks.
    pub utterance_goal: bool,

    // ---------------------------------------------------------------- grouped replay (code §2.6)
    /// Episodes kept per group of field keys; the oldest goes first (code: 1000).
    pub replay_group_capacity: usize,
    /// A group is sampled only once it holds this many (code: 100).
    pub replay_min_group: usize,
    /// Episodes per replay gradient step, groups drawn uniformly (code: 5).
    pub replay_batch: usize,
    /// Only episodes with this return enter the buffer (code: return == 1).
    pub replay_return: f64,

    // ---------------------------------------------------------------- training (code §2.6)
    /// Every this many exploration episodes ... (code: every 5 steps)
    pub replay_every: usize,
    /// ... this many replay gradient steps (code: 30).
    pub replay_steps: usize,
    /// Loss −Σ_t log π(a_t|s_t)·(G − b), with γ = 1: b is the constant `baseline` (code:
    /// 0.1, the default) or the critic's V(s_t) (§5).
    #[serde(default = "code_baseline")]
    pub baseline_kind: Baseline,
    pub baseline: f64,
    /// The critic's loss, weight·(G − V(s))², on on-policy episodes (ours: 0.5, A2C's usual
    /// value-loss weight; the paper gives none).
    pub critic_loss_weight: f64,
    /// Discount of the return G (code: 1).
    pub gamma: f64,
    /// Adam learning rate (code: 1e-3) and epsilon (PyTorch's default, the code's).
    pub learning_rate: f64,
    pub adam_epsilon: f32,
    /// Episodes are cut after this many steps (code: 10 steps per episode).
    pub max_episode_steps: u32,
    /// Seed of parameter init and of the policy's and replay's sampling.
    pub seed: u64,
}

impl Default for NeuralConfig {
    fn default() -> Self {
        NeuralConfig {
            word_vocab: 2000,
            word_dim: 100,
            word_embedding: WordEmbedding::Learned,
            max_text_words: 8,
            lstm_hidden: 32,
            tag_vocab: 100,
            tag_dim: 16,
            class_vocab: 100,
            class_dim: 16,
            value_dim: 16,
            tampered_dim: 8,
            position_scale: 160.0,
            align_buckets: 20,
            align_dim: 128,
            align_keys: AlignKeys::FirstSeen,
            align_any: true,
            align_similar: false,
            align_similar_mean: false,
            align_classes: false,
            neighbour_px: 30.0,
            spatial_pool: NeighbourPool::Mean,
            tree_pool: TreePool::LinearSum,
            goal_match: GoalMatch::FieldBuckets,
            tree_depths: vec![3, 4, 5, 6],
            tree_dim: 64,
            attn_dim: 64,
            goal_heads: 2,
            dom_heads: 2,
            ctx_dim: 96,
            utterance_goal: false,
            replay_group_capacity: 1000,
            replay_min_group: 100,
            replay_batch: 5,
            replay_return: 1.0,
            replay_every: 5,
            replay_steps: 30,
            baseline_kind: Baseline::Constant,
            baseline: 0.1,
            critic_loss_weight: 0.5,
            gamma: 1.0,
            learning_rate: 1e-3,
            adam_epsilon: 1e-8,
            max_episode_steps: 10,
            seed: 1,
        }
    }
}

/// Colours are RGBA in [0, 1]: 4 numbers each for the foreground and the background (code).
pub const COLOUR_DIMS: usize = 8;
/// left/160 and top/160 (code).
pub const POSITION_DIMS: usize = 2;
/// Value categories: none, unchecked, checked, empty text, non-empty text.
pub const VALUE_KINDS: usize = 5;

impl NeuralConfig {
    /// The paper's DOMNet (§5): spatial neighbours summed, tree neighbours through an affine map
    /// then max-pooled, goal matching by the summed embeddings of the element's goal words, A2C's
    /// critic. The default stays the authors' code's (`wob_policy.py`), which the lab's WGE
    /// figures were measured with; on the simulators' test (`neural.rs`) the paper's reaches 0.68
    /// greedy success on sim-click where the code's reaches ≥ 0.9, so it is an option until a
    /// benchmark on the real pages says otherwise.
    pub fn paper() -> Self {
        NeuralConfig {
            spatial_pool: NeighbourPool::Sum,
            tree_pool: TreePool::AffineMax,
            goal_match: GoalMatch::WordSum,
            baseline_kind: Baseline::Critic,
            ..NeuralConfig::default()
        }
    }

    /// The same, with words read through the shipped GloVe 50-d vectors held fixed (the code's
    /// frozen GloVe, at the dimension a registry package ships).
    pub fn with_glove(self) -> Self {
        NeuralConfig { word_embedding: WordEmbedding::Glove6b50d, word_dim: GLOVE_DIM, ..self }
    }

    /// The same, reading words as the WGE view's setting says (`Words`).
    pub fn reading_words(self, words: Words) -> Self {
        match words {
            Words::Learned => self,
            Words::Glove => self.with_glove(),
            Words::GloveCosine => NeuralConfig { align_similar: true, ..self.with_glove() },
        }
    }

    /// A text's encoding: the BiLSTM's two final states (code: 64).
    pub fn text_dim(&self) -> usize {
        2 * self.lstm_hidden
    }
    /// A goal unit, [key ; value] (code: 128).
    pub fn field_dim(&self) -> usize {
        2 * self.text_dim()
    }
    /// The base embedding (code: 130 = text 64 + tag 16 + value 16 + tampered 8 + classes 16 +
    /// left, top + fg and bg RGBA).
    pub fn base_dim(&self) -> usize {
        self.text_dim() + self.tag_dim + self.value_dim + self.tampered_dim + self.class_dim + POSITION_DIMS + COLOUR_DIMS
    }
    /// What the neighbours read of an element: the base embedding, plus the alignment with
    /// field buckets (code: 130 + 128 = 258; §5: the base, 130).
    pub fn aligned_dim(&self) -> usize {
        match self.goal_match {
            GoalMatch::FieldBuckets => self.base_dim() + self.align_dim,
            GoalMatch::WordSum => self.base_dim(),
        }
    }
    /// Rows of the alignment table: a bucket per key, and the shared one with `align_any` (last).
    pub fn align_rows(&self) -> usize {
        self.align_buckets + self.align_any as usize
    }
    /// The goal-matching embedding's size (§5: a word embedding; none in the code).
    pub fn match_dim(&self) -> usize {
        match self.goal_match {
            GoalMatch::FieldBuckets => 0,
            GoalMatch::WordSum => self.word_dim,
        }
    }
    /// The final element embedding (code: 772 = 258 + 258 spatial + 4 × 64 tree; §5: 130 base
    /// + 130 spatial + 4 × 64 tree + 100 goal matching = 616).
    pub fn element_dim(&self) -> usize {
        2 * self.aligned_dim() + self.tree_depths.len() * self.tree_dim + self.match_dim()
    }

    pub fn validate(&self) -> Result<(), String> {
        let positive = [
            ("word_vocab", self.word_vocab),
            ("word_dim", self.word_dim),
            ("max_text_words", self.max_text_words),
            ("lstm_hidden", self.lstm_hidden),
            ("tag_vocab", self.tag_vocab),
            ("class_vocab", self.class_vocab),
            ("align_buckets", self.align_buckets),
            ("attn_dim", self.attn_dim),
            ("goal_heads", self.goal_heads),
            ("dom_heads", self.dom_heads),
            ("ctx_dim", self.ctx_dim),
            ("replay_group_capacity", self.replay_group_capacity),
            ("replay_batch", self.replay_batch),
            ("replay_every", self.replay_every),
        ];
        if let Some((name, _)) = positive.iter().find(|(_, v)| *v == 0) {
            return Err(format!("neural policy config: {name} must be at least 1"));
        }
        if self.word_vocab < 3 || self.tag_vocab < 3 || self.class_vocab < 3 {
            return Err("neural policy config: vocabularies need room beyond <unk> and <pad>".into());
        }
        // Upper bounds, so a config from a file cannot allocate or loop until the tab dies.
        let at_most = [
            ("word_vocab", self.word_vocab, MAX_WORD_VOCAB),
            ("tag_vocab", self.tag_vocab, MAX_SMALL_VOCAB),
            ("class_vocab", self.class_vocab, MAX_SMALL_VOCAB),
            ("word_dim", self.word_dim, MAX_WIDTH),
            ("lstm_hidden", self.lstm_hidden, MAX_WIDTH),
            ("tag_dim", self.tag_dim, MAX_WIDTH),
            ("class_dim", self.class_dim, MAX_WIDTH),
            ("value_dim", self.value_dim, MAX_WIDTH),
            ("tampered_dim", self.tampered_dim, MAX_WIDTH),
            ("align_dim", self.align_dim, MAX_WIDTH),
            ("tree_dim", self.tree_dim, MAX_WIDTH),
            ("attn_dim", self.attn_dim, MAX_WIDTH),
            ("ctx_dim", self.ctx_dim, MAX_WIDTH),
            ("max_text_words", self.max_text_words, MAX_TEXT_WORDS),
            ("align_buckets", self.align_buckets, MAX_BUCKETS),
            ("tree_depths", self.tree_depths.len(), MAX_HEADS),
            ("goal_heads", self.goal_heads, MAX_HEADS),
            ("dom_heads", self.dom_heads, MAX_HEADS),
            ("replay_group_capacity", self.replay_group_capacity, MAX_GROUP_CAPACITY),
            ("replay_batch", self.replay_batch, MAX_REPLAY_BATCH),
            ("replay_every", self.replay_every, MAX_REPLAY_EVERY),
            ("replay_steps", self.replay_steps, MAX_REPLAY_STEPS),
            ("max_episode_steps", self.max_episode_steps as usize, MAX_EPISODE_STEPS),
        ];
        if let Some((name, v, hi)) = at_most.iter().find(|(_, v, hi)| v > hi) {
            return Err(format!("neural policy config: {name} must be at most {hi}, not {v}"));
        }
        if let Some(k) = self.tree_depths.iter().find(|&&k| k > MAX_TREE_DEPTH) {
            return Err(format!("neural policy config: a tree depth must be at most {MAX_TREE_DEPTH}, not {k}"));
        }
        if self.replay_min_group > self.replay_group_capacity {
            return Err(format!(
                "neural policy config: a group must be sampleable: replay_min_group {} exceeds replay_group_capacity {}",
                self.replay_min_group, self.replay_group_capacity
            ));
        }
        if !(self.learning_rate > 0.0 && self.learning_rate.is_finite()) {
            return Err(format!("neural policy config: learning_rate must be a positive number, not {}", self.learning_rate));
        }
        if !(self.critic_loss_weight >= 0.0 && self.critic_loss_weight.is_finite()) {
            return Err(format!("neural policy config: critic_loss_weight must be a non-negative number, not {}", self.critic_loss_weight));
        }
        if !(0.0..=1.0).contains(&self.gamma) {
            return Err(format!("neural policy config: gamma must lie in [0, 1], not {}", self.gamma));
        }
        let finite = [
            ("baseline", self.baseline),
            ("replay_return", self.replay_return),
            ("position_scale", self.position_scale as f64),
            ("neighbour_px", self.neighbour_px as f64),
            ("adam_epsilon", self.adam_epsilon as f64),
        ];
        if let Some((name, v)) = finite.iter().find(|(_, v)| !v.is_finite()) {
            return Err(format!("neural policy config: {name} must be a number, not {v}"));
        }
        if self.align_similar_mean && !self.align_similar {
            return Err("neural policy config: align_similar_mean is a rule of align_similar: set align_similar too".into());
        }
        if self.align_similar && self.word_embedding == WordEmbedding::Learned {
            return Err("neural policy config: align_similar compares words through fixed word vectors: set word_embedding too".into());
        }
        if !(self.position_scale > 0.0 && self.adam_epsilon > 0.0) {
            return Err("neural policy config: position_scale and adam_epsilon must be above 0".into());
        }
        if self.word_embedding == WordEmbedding::Glove6b50d && self.word_dim != GLOVE_DIM {
            return Err(format!("neural policy config: GloVe 6B 50d vectors need word_dim {GLOVE_DIM}, not {}", self.word_dim));
        }
        let params = self.num_params();
        if params > MAX_PARAMS {
            return Err(format!(
                "neural policy config: the network would have {params} parameters, over the limit of {MAX_PARAMS}: lower the vocabularies or the sizes"
            ));
        }
        Ok(())
    }

    /// DOMNet's parameter count from the sizes alone (`DomNet::new`'s layers), so a config can be
    /// refused before anything is built.
    pub fn num_params(&self) -> u64 {
        let u = |x: usize| x as u64;
        let linear = |i: u64, o: u64| i * o + o;
        // v·tanh(W_h h + W_s s): W_h without bias, W_s with, v without.
        let additive = |h: u64, s: u64, a: u64| h * a + s * a + a + a;
        let (wd, h) = (u(self.word_dim), u(self.lstm_hidden));
        // burn's LSTM: four gates, each an input and a hidden transform with biases; two directions.
        let bilstm = 2 * 4 * (linear(wd, h) + linear(h, h));
        let (fd, ed, ad, ctx) = (u(self.field_dim()), u(self.element_dim()), u(self.attn_dim), u(self.ctx_dim));
        let (g, hd) = (u(self.goal_heads), u(self.dom_heads));
        let state = ed + g * fd;
        u(self.word_vocab) * wd
            + u(self.tag_vocab) * u(self.tag_dim)
            + u(self.class_vocab) * u(self.class_dim)
            + u(VALUE_KINDS) * u(self.value_dim)
            + 2 * u(self.tampered_dim)
            + u(self.align_rows()) * u(self.align_dim)
            + bilstm
            + u(self.tree_depths.len()) * linear(u(self.aligned_dim()), u(self.tree_dim))
            + additive(ed, ed, ad)
            + fd
            + g * additive(fd, ed, ad)
            + hd * additive(ed, state, ad)
            + linear(g * fd, hd)
            + linear(ed, ctx)
            + state * ctx
            + linear(ctx, 2)
            + additive(fd, ctx, ad)
    }
}

/// The shipped word vectors' size (`WordEmbedding::Glove6b50d`).
pub const GLOVE_DIM: usize = 50;

/// Upper bounds of [`NeuralConfig::validate`] (the code's values are far below each).
pub const MAX_WORD_VOCAB: usize = 100_000;
pub const MAX_SMALL_VOCAB: usize = 1 << 16;
pub const MAX_WIDTH: usize = 1_024;
pub const MAX_TEXT_WORDS: usize = 256;
pub const MAX_BUCKETS: usize = 1_024;
pub const MAX_HEADS: usize = 16;
pub const MAX_TREE_DEPTH: usize = 64;
pub const MAX_GROUP_CAPACITY: usize = 100_000;
pub const MAX_REPLAY_BATCH: usize = 1_024;
pub const MAX_REPLAY_EVERY: usize = 1_000_000;
pub const MAX_REPLAY_STEPS: usize = 10_000;
pub const MAX_EPISODE_STEPS: usize = 1_000;
/// 20M parameters (80 MB in f32), as DOM-Q-Net's and the navigator's caps; the code's DOMNet
/// has about 1.1M.
pub const MAX_PARAMS: u64 = 20_000_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sizes_are_the_papers_and_the_codes() {
        let c = NeuralConfig::default();
        assert_eq!((c.text_dim(), c.field_dim(), c.base_dim(), c.aligned_dim(), c.element_dim()), (64, 128, 130, 258, 772));
        c.validate().unwrap();
        let p = NeuralConfig::paper();
        assert_eq!((p.base_dim(), p.aligned_dim(), p.match_dim(), p.element_dim()), (130, 130, 100, 616));
        p.validate().unwrap();
        // A saved config from before these settings was trained with the code's architecture.
        let mut old = serde_json::to_value(&c).unwrap();
        for k in [
            "spatial_pool",
            "tree_pool",
            "goal_match",
            "baseline_kind",
            "word_embedding",
            "align_keys",
            "align_any",
            "align_similar",
            "align_similar_mean",
            "align_classes",
        ] {
            old.as_object_mut().unwrap().remove(k);
        }
        // Its field keys were hashed into buckets, with no shared vector (the lab's before
        // `AlignKeys::FirstSeen` and `align_any`).
        assert_eq!(
            serde_json::from_value::<NeuralConfig>(old).unwrap(),
            NeuralConfig { align_keys: AlignKeys::Hashed, align_any: false, ..c.clone() }
        );
        assert!(NeuralConfig { replay_min_group: 2000, ..c.clone() }.validate().is_err());
        assert!(NeuralConfig { ctx_dim: 0, ..c.clone() }.validate().is_err());
        let g = c.clone().with_glove();
        g.validate().unwrap();
        assert_eq!((g.word_dim, g.element_dim()), (50, 772));
        assert!(NeuralConfig { word_dim: 100, ..g }.validate().unwrap_err().contains("word_dim 50"));
    }

    #[test]
    fn the_views_word_settings_are_the_benchmarks() {
        let c = NeuralConfig::default();
        assert_eq!(c.clone().reading_words(Words::Learned), c);
        assert_eq!(c.clone().reading_words(Words::Glove), c.clone().with_glove());
        let cos = c.clone().reading_words(Words::GloveCosine);
        assert!(cos.align_similar && cos.word_embedding == WordEmbedding::Glove6b50d);
        cos.validate().unwrap();
        for w in [Words::Learned, Words::Glove, Words::GloveCosine] {
            let name = serde_json::to_value(w).unwrap();
            assert_eq!(Words::from_name(name.as_str().unwrap()).unwrap(), w);
        }
        assert!(Words::from_name("bert").unwrap_err().contains("not \"bert\""));
        assert!(!Words::Learned.needs_vectors() && Words::GloveCosine.needs_vectors());
    }

    #[test]
    fn sizes_have_upper_bounds_and_the_network_a_parameter_cap() {
        let c = NeuralConfig::default();
        let e = |c: NeuralConfig| c.validate().unwrap_err();
        assert!(e(NeuralConfig { word_vocab: 1 << 40, ..c.clone() }).contains("word_vocab must be at most 100000"));
        assert!(e(NeuralConfig { lstm_hidden: 1 << 20, ..c.clone() }).contains("lstm_hidden must be at most 1024"));
        assert!(e(NeuralConfig { tree_depths: vec![3; 1000], ..c.clone() }).contains("tree_depths must be at most 16"));
        assert!(e(NeuralConfig { tree_depths: vec![usize::MAX], ..c.clone() }).contains("tree depth"));
        assert!(e(NeuralConfig { max_episode_steps: u32::MAX, ..c.clone() }).contains("max_episode_steps"));
        assert!(e(NeuralConfig { baseline: f64::NAN, ..c.clone() }).contains("baseline"));
        assert!(e(NeuralConfig { position_scale: 0.0, ..c.clone() }).contains("position_scale"));
        // Each size within its bound, together far over the cap.
        assert!(e(NeuralConfig { word_vocab: 100_000, word_dim: 1_024, ..c.clone() }).contains("parameters, over the limit of 20000000"));
    }
}

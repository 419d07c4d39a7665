//! Every hyperparameter of DOM-Q-Net in one place, with the paper's value and its source.
//!
//! "Table n" refers to the appendix of Jia, Kiros & Ba, "DOM-Q-NET: Grounded RL on Structured
//! Language" (ICLR 2019). Where the authors' code does something else, the paper's choice is the
//! default and the code's is an option (see `../shared/reference/reference-implementations.md` §1).

use serde::{Deserialize, Serialize};

use crate::env::miniwob::MINIWOB_PREFIX;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DqnConfig {
    // ---------------------------------------------------------------- features (Table 2)
    /// Tag vocabulary cap, `<unk>` and `<pad>` included (the reference code's cap, 100; Table 2
    /// lists 80). The larger cap only adds embedding rows, and the lab's pages have more tags.
    pub tag_vocab: usize,
    /// Text vocabulary cap, shared by DOM text and goal tokens (reference code: 600; Table 2: 400).
    pub text_vocab: usize,
    /// Class vocabulary cap (reference code: 100; Table 2: 80).
    pub class_vocab: usize,
    /// Embedding sizes (Table 2: tag 16, text 32, class 16; the reference code uses text 48).
    pub tag_dim: usize,
    pub text_dim: usize,
    pub class_dim: usize,
    /// Put the node's text embedding itself into the local module beside its goal alignment, as
    /// eq. 3 of the paper does (e_local = [e_attr ; max_j cos(e_attr, e_goal)], text among the
    /// attributes). The reference code leaves it out (text enters only through the alignment):
    /// `false` is its choice, a 37-d local module instead of 69-d.
    pub local_text_embedding: bool,
    /// Use a text field's current value as its text (what a person sees in it), so the goal
    /// alignment shows whether the right word was typed. The paper's features carry no value.
    pub value_as_text: bool,
    /// Most DOM nodes per state (the reference code's V = 200); larger pages are cut, with a
    /// warning.
    pub max_nodes: usize,
    /// Most leaves (DOM actions) per state (Table 2: "max number of DOMs" 160).
    pub max_leaves: usize,
    /// Most goal tokens (Table 2: 18).
    pub max_goal_tokens: usize,
    /// Normalise goal tokens as the reference code does: a number loses its leading zeros
    /// ("07" → "7") and a second token 1–12 becomes its month's name ("Select 12/07/2016 …" →
    /// "December"), so a date in the goal matches a date picker's words. The paper names no such
    /// step; off, the goal tokens are the utterance's.
    pub normalize_goal_tokens: bool,
    /// Read a node's text with the goal's separators (`. , " /` and runs of spaces become one
    /// space, as [`crate::env::goal_tokens`] splits the utterance) before it becomes one
    /// whole-string token, so a link "et." matches the goal token "et". The real MiniWoB++ pages
    /// put punctuation inside their targets (click-link's `<span class="alink">et.</span>`, asked
    /// for as "et."), where the paper's whole string never matches a goal token; neither the
    /// paper nor the authors' code does this. On for the real pages ([`Self::following`]); a
    /// checkpoint saved without it reads it as off.
    #[serde(default)]
    pub split_dom_text: bool,
    /// Give each node its place among its siblings, one-hot over this many slots (the last slot
    /// takes every later sibling), in the local module. 0, the paper's and the authors' code's
    /// features: none, so siblings with the same tag, class, text and flags get the same Q-value
    /// — focus-text-2's three text boxes differ only by id and margin, and "the 2nd input" cannot
    /// be told from the others. WGE's DOMNet reads where elements are; here it is a stated
    /// deviation from DOM-Q-Net's features, off in every preset. A checkpoint saved without it
    /// reads it as 0.
    #[serde(default)]
    pub sibling_positions: usize,

    // ---------------------------------------------------------------- network (Table 2, §3.3)
    /// Message-passing steps T (Table 2: 3; 7 for social-media, see [`DqnConfig::for_tasks`]).
    pub gnn_steps: usize,
    /// Hidden sizes of the three Q streams, 2 layers each (Table 2: FC layers 128 for all three;
    /// the reference code uses 128 for the DOM stream, 64 for tokens and 32 for the mode).
    pub dom_hidden: usize,
    pub token_hidden: usize,
    pub mode_hidden: usize,
    /// Hidden layers per Q stream: 1 is in→h→out, the paper's "2 layers" (Table 2); the
    /// reference code's streams are in→h→h→out, i.e. 2.
    pub stream_hidden_layers: usize,
    /// Global readout with goal attention (§3.3 eq. 7); false: max-pool only (eq. 6).
    pub goal_attention: bool,
    /// Also concatenate the goal vector to the global module (the reference code's
    /// `goal_attn_cat`; App. 6.3 calls it goal concatenation).
    pub goal_concat: bool,
    /// Initial noise scale of the noisy layers (Table 1: σ0 = 0.5).
    pub noisy_sigma0: f64,
    /// Initial bias-noise scale σ0/√outputs, as the reference code's `NoisyLinear` sets it;
    /// false: σ0/√inputs, as the weights' (Fortunato et al. 2018, §3.2, the paper's citation).
    /// Only the start differs (the scales are learned), but at the start the bias noise is most
    /// of a head's noise: for the mode stream's last layer (128 inputs, 2 outputs) 0.35 against
    /// 0.044, a near coin toss between click and type instead of the first network's lean. A
    /// checkpoint saved without it reads it as false.
    #[serde(default)]
    pub noisy_bias_by_outputs: bool,

    // ---------------------------------------------------------------- learning (Table 1)
    /// Adam learning rate (Table 1: 0.00015; the reference code uses 1e-4).
    pub learning_rate: f64,
    /// Adam epsilon (PyTorch's default, which the reference code ran with; the paper names none).
    pub adam_epsilon: f32,
    /// Minibatch size (Table 1: 128).
    pub batch_size: usize,
    /// Discount γ (Table 1: 0.99).
    pub gamma: f64,
    /// Multi-step bootstrap n (Table 1: 8).
    pub n_step: usize,
    /// Target network sync period in online updates (Table 1: 200).
    pub target_sync: usize,
    /// Online updates per environment step (Table 1: 1).
    pub updates_per_step: usize,
    /// Steps before learning starts (Table 1: 50 exploration steps); also waits for one batch.
    pub learning_starts: usize,
    /// Huber loss threshold (the reference code's `smooth_l1_loss`, i.e. 1; eq. 8 writes a squared
    /// error).
    pub huber_delta: f32,
    /// Elementwise gradient clamp (the reference code clamps every gradient to ±2.5; the paper
    /// names none).
    pub grad_clip: Option<f32>,
    /// The reference code adds the reward once per head (`Σ_i (R + γ^n Q_i)`); the paper's eq. 9
    /// adds it once (the default).
    pub reward_per_head: bool,
    /// Learn from the page's raw reward with failure (−1) mapped to 0, as the paper trains with
    /// 0/1 rewards. False: learn from the environment's reward as it comes (the shaped reward on
    /// tasks that have one, e.g. generated sites), negative values included.
    pub clamp_negative_rewards: bool,
    /// Typing into an element that takes no text (a button, a link, a checkbox) clicks it: the
    /// reference code's type action is `elementClick` then keystrokes, so that is what such an
    /// action does there. false: the page only gets focus and the step is wasted.
    pub type_clicks_untypable: bool,
    /// Episodes are cut after this many steps (the reference code's `max_step_per_epi` = 22; the
    /// paper names no cap).
    pub max_episode_steps: u32,
    /// Multitask only: turns a task that has reached [`crate::dom_q_net::train::SOLVE_RATE`] sits
    /// out between its episodes, so the environment steps go to the tasks still unsolved. 0 is
    /// Algorithm 1's round-robin (every task steps once per round); the paper names no other.
    /// A solved task still finishes every episode it started at the round-robin's pace.
    pub solved_task_rest: u32,

    // ---------------------------------------------------------------- replay (Table 3)
    /// Buffer size (Table 3: 15,000 single-task, 100,000 multitask).
    pub replay_capacity: usize,
    /// Prioritisation exponent α (Table 3: 0.5; the reference code hard-codes 0.8).
    pub priority_alpha: f64,
    /// Importance-sampling exponent β (Table 3: 0, i.e. no correction; the reference code uses 0.8).
    pub priority_beta: f64,
    /// Added to |TD| before prioritising so no transition gets probability 0 (the reference code:
    /// 1e-10; Schaul et al. leave it small and unnamed).
    pub priority_epsilon: f64,

    /// Seed of parameter init, noise, replay sampling and OOV vectors.
    pub seed: u64,
}

impl Default for DqnConfig {
    fn default() -> Self {
        DqnConfig {
            tag_vocab: 100,
            text_vocab: 600,
            class_vocab: 100,
            tag_dim: 16,
            text_dim: 32,
            class_dim: 16,
            local_text_embedding: true,
            value_as_text: true,
            max_nodes: 200,
            max_leaves: 160,
            max_goal_tokens: 18,
            normalize_goal_tokens: false,
            split_dom_text: false,
            sibling_positions: 0,
            gnn_steps: 3,
            dom_hidden: 128,
            token_hidden: 128,
            mode_hidden: 128,
            stream_hidden_layers: 1,
            goal_attention: true,
            goal_concat: false,
            noisy_sigma0: 0.5,
            noisy_bias_by_outputs: false,
            learning_rate: 0.00015,
            adam_epsilon: 1e-8,
            batch_size: 128,
            gamma: 0.99,
            n_step: 8,
            target_sync: 200,
            updates_per_step: 1,
            learning_starts: 50,
            huber_delta: 1.0,
            grad_clip: Some(2.5),
            reward_per_head: false,
            clamp_negative_rewards: true,
            type_clicks_untypable: true,
            max_episode_steps: 22,
            solved_task_rest: 0,
            replay_capacity: 15_000,
            priority_alpha: 0.5,
            priority_beta: 0.0,
            priority_epsilon: 1e-6,
            seed: 1,
        }
    }
}

impl DqnConfig {
    /// The paper's multitask setting: one shared buffer of 100,000 (Table 3).
    pub fn multitask() -> Self {
        DqnConfig { replay_capacity: 100_000, ..Self::default() }
    }

    /// The authors' code (`Sheng-J/DOM-Q-NET`, see `reference-implementations.md` §1) where it
    /// differs from the paper: features of 37 dims (no text embedding in the local module, no
    /// field values as text; alignment from a 48-d text embedding), T = 7, goal-attention
    /// concatenation, Q streams in→h→h→out of 128/64/32, goal tokens normalised, Adam 1e-4, the
    /// reward counted once per head, a 100,000 buffer with α = β = 0.8 and ε = 1e-10, the noisy
    /// layers' bias noise scaled by their outputs. The rest
    /// is already the code's (vocabulary caps 100/600/100, 18 goal tokens, batch 128, γ, n = 8,
    /// sync 200, Huber, gradient clamp 2.5, −1 as 0, typing clicks first, 22 steps).
    ///
    /// Still not the code's: it forces BODY and a "Submit" BUTTON to unfocused, writes missing
    /// text as "NA" (ours: padding) and max-pools over padding rows too (ours: real nodes only);
    /// these are details of its implementation, not choices a user would set.
    pub fn reference_code() -> Self {
        DqnConfig {
            text_dim: 48,
            local_text_embedding: false,
            value_as_text: false,
            normalize_goal_tokens: true,
            gnn_steps: 7,
            token_hidden: 64,
            mode_hidden: 32,
            stream_hidden_layers: 2,
            goal_concat: true,
            learning_rate: 1e-4,
            reward_per_head: true,
            replay_capacity: 100_000,
            priority_alpha: 0.8,
            priority_beta: 0.8,
            priority_epsilon: 1e-10,
            noisy_bias_by_outputs: true,
            ..Self::default()
        }
    }

    /// The paper's settings with the reference code's smaller network: a 37-d local module (no
    /// text embedding in it) and Q streams of 128/64/32. Before [`Self::reference_code`] took all
    /// of the code's choices this preset carried its name ("reference-code" in the benchmark);
    /// the README's multitask figure was measured with it.
    pub fn code_sizes() -> Self {
        DqnConfig { local_text_embedding: false, token_hidden: 64, mode_hidden: 32, ..Self::default() }
    }

    /// The 9-task multitask set (§4.2) in a browser tab on a small CPU (issue #16): the
    /// [`Self::code_sizes`] network; the buffer follows the tasks as in [`Self::for_tasks`].
    /// Three values changed, each measured here on the live pages (`bench-dqn --multitask`,
    /// README "Benchmarks"):
    /// - minibatch 32 (Table 1: 128): the update is most of a step's time in the tab and grows
    ///   with the nodes a batch packs. With 32 the first seven tasks took 1.5× the frames of 128
    ///   (17,011 against 11,386) at about twice the steps per second, though another run shared
    ///   the 2 cores (and 64 gave 1.5× fewer steps per second than 32);
    /// - Adam 3e-4 (Table 1: 1.5e-4): with the smaller batch, twice the step size brought those
    ///   seven tasks to 90% by 9,046 frames instead of 17,011;
    /// - a solved task rests 24 turns between its episodes ([`Self::solved_task_rest`]; the
    ///   paper's round-robin has none): seven tasks are solved within about 8,000 frames, and
    ///   after that round-robin gave enter-password and login-user 2 steps in 9 while they still
    ///   needed thousands of their own (login-user's first successes are exploration luck).
    ///
    /// The rest is the paper's: one update per step, n = 8, sync 200, α = 0.5, noisy nets.
    pub fn fast_tab() -> Self {
        DqnConfig { batch_size: 32, learning_rate: 3e-4, solved_task_rest: 24, ..Self::code_sizes() }
    }

    /// The paper's settings for training on `tasks` together: the multitask buffer (Table 3) for
    /// more than one task, and T = 7 message-passing steps when a social-media task is among them
    /// (Table 2).
    pub fn for_tasks<S: AsRef<str>>(tasks: &[S]) -> Self {
        Self::default().following(tasks)
    }

    /// These settings with the values the paper ties to the task choice set for `tasks`: Table
    /// 3's buffer (15k for one task, 100k for several) and Table 2's T (7 with a social-media
    /// task, 3 otherwise); and, with a real MiniWoB++ page among them, node text read with the
    /// goal's separators ([`Self::split_dom_text`]). Every other field is kept.
    pub fn following<S: AsRef<str>>(self, tasks: &[S]) -> Self {
        let paper = Self::default();
        // A task is named bare (the request's specs) or as the lab keys it (miniwob/social-media).
        let social = tasks.iter().any(|t| t.as_ref().strip_prefix(MINIWOB_PREFIX).unwrap_or(t.as_ref()).starts_with("social-media"));
        let real_pages = tasks.iter().any(|t| t.as_ref().starts_with(MINIWOB_PREFIX));
        DqnConfig {
            replay_capacity: if tasks.len() > 1 { Self::multitask().replay_capacity } else { paper.replay_capacity },
            gnn_steps: if social { 7 } else { paper.gnn_steps },
            split_dom_text: self.split_dom_text || real_pages,
            ..self
        }
    }

    /// A preset by name (paper, reference-code, code-sizes or fast-tab).
    pub fn named(name: &str) -> Result<Self, String> {
        match name {
            "paper" => Ok(Self::default()),
            "reference-code" => Ok(Self::reference_code()),
            "code-sizes" => Ok(Self::code_sizes()),
            "fast-tab" => Ok(Self::fast_tab()),
            other => Err(format!("unknown preset {other} (paper, reference-code, code-sizes or fast-tab)")),
        }
    }

    /// The preset `name` for training on `tasks`: the paper's presets follow the task choice
    /// ([`Self::following`]); the reference code's keeps its 100k buffer and T = 7, which its
    /// code uses for any tasks. What the Train view's preset buttons and task boxes fill in.
    pub fn named_for_tasks<S: AsRef<str>>(name: &str, tasks: &[S]) -> Result<Self, String> {
        let cfg = Self::named(name)?;
        Ok(if name == "reference-code" { cfg } else { cfg.following(tasks) })
    }

    /// [`Self::for_tasks`] with the fields given in `overrides` (a JSON object, possibly
    /// partial) replacing the preset's: what a training request names wins, the rest follows the
    /// paper for these tasks.
    pub fn for_tasks_with<S: AsRef<str>>(tasks: &[S], overrides: &serde_json::Value) -> Result<Self, String> {
        let mut merged = serde_json::to_value(Self::for_tasks(tasks)).map_err(|e| e.to_string())?;
        match overrides {
            serde_json::Value::Null => {}
            serde_json::Value::Object(fields) => {
                for (k, v) in fields {
                    if merged.get(k).is_none() {
                        return Err(format!("unknown agent setting \"{k}\""));
                    }
                    merged[k] = v.clone();
                }
            }
            _ => return Err("the agent config must be an object".into()),
        }
        let cfg: Self = serde_json::from_value(merged).map_err(|e| format!("bad agent config: {e}"))?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// Size of a node's local embedding: tag, class, [text], goal alignment, focused (one-hot 2),
    /// tampered (one-hot 2), [place among its siblings].
    pub fn local_dim(&self) -> usize {
        self.tag_dim + self.class_dim + if self.local_text_embedding { self.text_dim } else { 0 } + 1 + 2 + 2 + self.sibling_positions
    }

    /// Size of the global module.
    pub fn global_dim(&self) -> usize {
        let d = self.local_dim();
        2 * d + if self.goal_attention { d } else { 0 } + if self.goal_concat { d } else { 0 }
    }

    /// Parameters of the network this config builds (embeddings, graph network, goal encoder,
    /// the three noisy Q streams): what [`Self::validate`] bounds so a network fits in a tab.
    pub fn num_params(&self) -> u64 {
        let u = |x: usize| x as u64;
        let (d, gd) = (u(self.local_dim()), u(self.global_dim()));
        let linear = |i: u64, o: u64| i * o + o;
        // A noisy layer keeps a mean and a scale for every weight and bias.
        let noisy = |i: u64, o: u64| 2 * (i * o + o);
        let deeper = u(self.stream_hidden_layers.saturating_sub(1));
        let stream = |i: u64, h: u64, o: u64| noisy(i, h) + deeper * noisy(h, h) + noisy(h, o);
        let goal_in = u(self.text_dim) + u(self.max_goal_tokens);
        u(self.tag_vocab) * u(self.tag_dim)
            + u(self.class_vocab) * u(self.class_dim)
            + u(self.text_vocab) * u(self.text_dim)
            + linear(d, d)
            + 3 * linear(2 * d, d)
            + linear(goal_in, d)
            + stream(2 * d + gd, u(self.dom_hidden), 1)
            + stream(goal_in + gd, u(self.token_hidden), 1)
            + stream(gd, u(self.mode_hidden), 2)
    }

    /// Checks the settings make sense and fit in a browser tab; the message names the setting
    /// and its bounds. Every size has an upper bound, far above the paper's and the reference
    /// code's values, because a config comes from editors, share links and files: one huge
    /// field would otherwise allocate or loop until the tab dies.
    pub fn validate(&self) -> Result<(), String> {
        let sizes: [(&str, usize, usize, usize); 22] = [
            ("tag_vocab", self.tag_vocab, 3, MAX_SMALL_VOCAB),
            ("text_vocab", self.text_vocab, 3, MAX_TEXT_VOCAB),
            ("class_vocab", self.class_vocab, 3, MAX_SMALL_VOCAB),
            ("tag_dim", self.tag_dim, 1, MAX_WIDTH),
            ("text_dim", self.text_dim, 1, MAX_WIDTH),
            ("class_dim", self.class_dim, 1, MAX_WIDTH),
            ("max_nodes", self.max_nodes, 1, MAX_NODES),
            ("max_leaves", self.max_leaves, 1, MAX_NODES),
            ("max_goal_tokens", self.max_goal_tokens, 1, MAX_GOAL_TOKENS),
            ("sibling_positions", self.sibling_positions, 0, MAX_SIBLING_POSITIONS),
            ("gnn_steps", self.gnn_steps, 0, MAX_GNN_STEPS),
            ("dom_hidden", self.dom_hidden, 1, MAX_WIDTH),
            ("token_hidden", self.token_hidden, 1, MAX_WIDTH),
            ("mode_hidden", self.mode_hidden, 1, MAX_WIDTH),
            ("stream_hidden_layers", self.stream_hidden_layers, 1, MAX_STREAM_HIDDEN_LAYERS),
            ("batch_size", self.batch_size, 1, MAX_BATCH),
            ("n_step", self.n_step, 1, MAX_N_STEP),
            ("target_sync", self.target_sync, 1, MAX_TARGET_SYNC),
            ("updates_per_step", self.updates_per_step, 0, MAX_UPDATES_PER_STEP),
            ("max_episode_steps", self.max_episode_steps as usize, 1, MAX_EPISODE_STEPS as usize),
            ("solved_task_rest", self.solved_task_rest as usize, 0, MAX_SOLVED_TASK_REST as usize),
            ("replay_capacity", self.replay_capacity, 1, MAX_REPLAY),
        ];
        for (name, v, lo, hi) in sizes {
            if !(lo..=hi).contains(&v) {
                return Err(format!("{name} must be between {lo} and {hi} (it is {v})"));
            }
        }
        // `contains` is false for NaN, so each range check also refuses non-numbers.
        let closed = [
            ("noisy_sigma0", self.noisy_sigma0, 10.0),
            ("gamma", self.gamma, 1.0),
            ("priority_alpha", self.priority_alpha, 1.0),
            ("priority_beta", self.priority_beta, 1.0),
            ("priority_epsilon", self.priority_epsilon, 1.0),
        ];
        for (name, v, hi) in closed {
            if !(0.0..=hi).contains(&v) {
                return Err(format!("{name} must be a number between 0 and {hi} (it is {v})"));
            }
        }
        if !(self.learning_rate > 0.0 && self.learning_rate < 1.0) {
            return Err(format!("learning_rate must be a number above 0 and below 1 (it is {})", self.learning_rate));
        }
        let mut above_zero = vec![("adam_epsilon", self.adam_epsilon, 1.0), ("huber_delta", self.huber_delta, 1000.0)];
        if let Some(clip) = self.grad_clip {
            above_zero.push(("grad_clip", clip, 1000.0));
        }
        for (name, v, hi) in above_zero {
            if !(v > 0.0 && v <= hi) {
                return Err(format!("{name} must be a number above 0 and at most {hi} (it is {v})"));
            }
        }
        if self.replay_capacity < self.batch_size {
            return Err(format!("replay_capacity ({}) must hold at least one batch (batch_size {})", self.replay_capacity, self.batch_size));
        }
        // Fields each within bounds can still multiply into too much: the network's size ...
        let params = self.num_params();
        if params > MAX_PARAMS {
            return Err(format!(
                "the network would have {params} parameters, over the limit of {MAX_PARAMS}: lower the vocabularies \
                 (tag_vocab, text_vocab, class_vocab), the embedding sizes (tag_dim, text_dim, class_dim) or the \
                 hidden sizes (dom_hidden, token_hidden, mode_hidden)"
            ));
        }
        // ... and one batch's node embeddings when every page fills the node cap.
        let batch_values = (self.batch_size * self.max_nodes) as u64 * self.local_dim() as u64;
        if batch_values > MAX_BATCH_VALUES {
            return Err(format!(
                "a batch of full pages would hold batch_size × max_nodes × {} (the node embedding) = {batch_values} \
                 values per layer, over the limit of {MAX_BATCH_VALUES}: lower batch_size or max_nodes",
                self.local_dim()
            ));
        }
        Ok(())
    }
}

/// Upper bounds of [`DqnConfig::validate`]. Tag and class ids are stored in 16 bits.
pub const MAX_SMALL_VOCAB: usize = 1 << 16;
pub const MAX_TEXT_VOCAB: usize = 100_000;
/// Embedding and hidden sizes.
pub const MAX_WIDTH: usize = 1024;
/// Nodes and leaves per state (node indices are 16-bit; MiniWoB pages have under 200 nodes).
pub const MAX_NODES: usize = 10_000;
pub const MAX_GOAL_TOKENS: usize = 1_000;
pub const MAX_SIBLING_POSITIONS: usize = 64;
pub const MAX_GNN_STEPS: usize = 32;
pub const MAX_STREAM_HIDDEN_LAYERS: usize = 8;
pub const MAX_BATCH: usize = 4_096;
pub const MAX_N_STEP: usize = 100;
pub const MAX_TARGET_SYNC: usize = 1_000_000;
pub const MAX_UPDATES_PER_STEP: usize = 64;
pub const MAX_EPISODE_STEPS: u32 = 10_000;
pub const MAX_SOLVED_TASK_REST: u32 = 10_000;
pub const MAX_REPLAY: usize = 1_000_000;
/// 20M parameters: 80 MB in f32, about five times that while training (target network,
/// gradients, Adam's two moments). The paper's network has about 270k.
pub const MAX_PARAMS: u64 = 20_000_000;
/// 2^26 values (256 MB in f32) per layer of a batch; the paper's setting needs 1.8M.
pub const MAX_BATCH_VALUES: u64 = 1 << 26;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_text_is_split_for_the_real_pages_only_and_old_checkpoints_keep_the_whole_string() {
        assert!(!DqnConfig::default().split_dom_text, "the paper's whole-string text");
        assert!(!DqnConfig::for_tasks(&["click-link"]).split_dom_text);
        assert!(DqnConfig::for_tasks(&["click-link", "miniwob/click-link"]).split_dom_text);
        assert!(DqnConfig::named_for_tasks("fast-tab", &["miniwob/click-link"]).unwrap().split_dom_text);
        // A config saved before the field existed reads it as off, whatever the default becomes.
        let mut saved = serde_json::to_value(DqnConfig { split_dom_text: true, ..DqnConfig::default() }).unwrap();
        saved.as_object_mut().unwrap().remove("split_dom_text");
        assert!(!serde_json::from_value::<DqnConfig>(saved).unwrap().split_dom_text);
    }

    #[test]
    fn defaults_follow_the_paper_and_the_reference_code_is_an_option() {
        let c = DqnConfig::default();
        c.validate().unwrap();
        assert_eq!((c.dom_hidden, c.token_hidden, c.mode_hidden), (128, 128, 128), "Table 2: FC 128");
        assert_eq!(c.local_dim(), 16 + 16 + 32 + 1 + 2 + 2, "eq. 3: text embedding in the local module");
        assert_eq!(c.global_dim(), 3 * c.local_dim());
        assert_eq!(c.stream_hidden_layers, 1, "in→h→out");
        assert!(!c.normalize_goal_tokens && !c.goal_concat && !c.reward_per_head);
        let s = DqnConfig::code_sizes();
        s.validate().unwrap();
        assert_eq!(s.local_dim(), 37, "the reference code's 37-d local module");
        assert_eq!((s.token_hidden, s.mode_hidden, s.stream_hidden_layers), (64, 32, 1));
        assert_eq!(DqnConfig { local_text_embedding: true, token_hidden: 128, mode_hidden: 128, ..s }, c, "only the sizes differ");
        assert_eq!(DqnConfig::multitask().replay_capacity, 100_000);
    }

    #[test]
    fn the_fast_tab_preset_is_the_code_sizes_with_a_smaller_batch_a_larger_step_and_resting_solved_tasks() {
        let f = DqnConfig::fast_tab();
        f.validate().unwrap();
        assert_eq!((f.batch_size, f.learning_rate, f.solved_task_rest), (32, 3e-4, 24));
        assert_eq!(
            DqnConfig { batch_size: 128, learning_rate: 0.00015, solved_task_rest: 0, ..f.clone() },
            DqnConfig::code_sizes(),
            "only the batch, the learning rate and the rest differ"
        );
        assert_eq!(DqnConfig::default().solved_task_rest, 0, "Algorithm 1's round-robin");
        // As the benchmark and the learner receive it: the fields that differ from the paper's,
        // merged over the multitask preset of the 9 tasks.
        let paper = serde_json::to_value(DqnConfig::default()).unwrap();
        let mut differs = serde_json::to_value(&f).unwrap();
        differs.as_object_mut().unwrap().retain(|k, v| paper[k] != *v);
        let nine = [
            "click-checkboxes",
            "click-option",
            "click-tab-2",
            "email-inbox-delete",
            "enter-password",
            "enter-text",
            "enter-text-dynamic",
            "login-user",
            "navigate-tree",
        ];
        let merged = DqnConfig::for_tasks_with(&nine, &differs).unwrap();
        assert_eq!(merged, DqnConfig { replay_capacity: 100_000, ..f }, "Table 3's multitask buffer");
    }

    #[test]
    fn the_reference_code_preset_is_the_authors_codes_choices() {
        // Each value as reference-implementations.md §1 reads it from Sheng-J/DOM-Q-NET.
        let r = DqnConfig::reference_code();
        r.validate().unwrap();
        assert_eq!(r.local_dim(), 16 + 16 + 1 + 2 + 2, "[tag 16 ; class 16 ; align 1 ; focused 2 ; tampered 2]");
        assert_eq!((r.tag_dim, r.text_dim, r.class_dim), (16, 48, 16), "dims 16/48/16");
        assert_eq!((r.tag_vocab, r.text_vocab, r.class_vocab), (100, 600, 100), "caps 100/600/100");
        assert!(!r.value_as_text, "node text is the text, never a field's value");
        assert_eq!((r.max_nodes, r.max_leaves, r.max_goal_tokens), (200, 160, 18));
        assert!(r.normalize_goal_tokens, "digits through str(int), token 1 as a month name");
        assert_eq!(r.gnn_steps, 7, "T = 7");
        assert!(r.goal_attention && r.goal_concat, "goal_attn_cat");
        assert_eq!(r.global_dim(), 148, "e_global = [max local ; max neighbour ; attn ; h_goal] = 148-d");
        assert_eq!((r.dom_hidden, r.token_hidden, r.mode_hidden, r.stream_hidden_layers), (128, 64, 32, 2), "in→h→h→out");
        assert_eq!(r.noisy_sigma0, 0.5);
        assert_eq!((r.learning_rate, r.batch_size, r.gamma, r.n_step), (1e-4, 128, 0.99, 8));
        assert_eq!((r.target_sync, r.updates_per_step, r.learning_starts), (200, 1, 50));
        assert_eq!((r.huber_delta, r.grad_clip), (1.0, Some(2.5)), "smooth L1, clamp ±2.5");
        assert!(r.reward_per_head, "Σ_i (R + γ^n Q_i): R counted per head");
        assert!(r.clamp_negative_rewards, "−1 mapped to 0");
        assert!(r.type_clicks_untypable, "type = elementClick, then keys");
        assert_eq!(r.max_episode_steps, 22, "max_step_per_epi");
        assert_eq!(r.replay_capacity, 100_000);
        assert_eq!((r.priority_alpha, r.priority_beta, r.priority_epsilon), (0.8, 0.8, 1e-10), "(|TD| + 1e-10)^0.8, p^−0.8");
    }

    #[test]
    fn named_presets_follow_the_task_choice_but_the_reference_codes() {
        let two = ["click-test", "miniwob/social-media"];
        let fast = DqnConfig::named_for_tasks("fast-tab", &two).unwrap();
        let changed = DqnConfig { replay_capacity: 100_000, gnn_steps: 7, split_dom_text: true, ..DqnConfig::fast_tab() };
        assert_eq!(fast, changed, "only the buffer, T and (a real page among them) the node text's reading change");
        assert_eq!(DqnConfig::named_for_tasks("fast-tab", &["click-test"]).unwrap(), DqnConfig::fast_tab());
        assert_eq!(DqnConfig::named_for_tasks("paper", &two).unwrap(), DqnConfig::for_tasks(&two));
        assert_eq!(DqnConfig::named_for_tasks("code-sizes", &["x"]).unwrap(), DqnConfig::code_sizes());
        // The authors' code uses its 100k buffer and T = 7 whatever the tasks.
        assert_eq!(DqnConfig::named_for_tasks("reference-code", &["click-test"]).unwrap(), DqnConfig::reference_code());
        let err = DqnConfig::named_for_tasks("papr", &["click-test"]).unwrap_err();
        assert!(err.contains("unknown preset papr"), "{err}");
    }

    #[test]
    fn task_presets_follow_tables_2_and_3() {
        let one = DqnConfig::for_tasks(&["click-test"]);
        assert_eq!((one.gnn_steps, one.replay_capacity), (3, 15_000));
        let social = DqnConfig::for_tasks(&["social-media-some"]);
        assert_eq!(social.gnn_steps, 7, "T = 7 for social-media");
        let multi = DqnConfig::for_tasks(&["login-user", "social-media"]);
        assert_eq!((multi.gnn_steps, multi.replay_capacity), (7, 100_000));

        let json = serde_json::json!({ "batch_size": 64 });
        let c = DqnConfig::for_tasks_with(&["social-media"], &json).unwrap();
        assert_eq!((c.gnn_steps, c.batch_size), (7, 64), "the preset stays where the request is silent");
        let json = serde_json::json!({ "gnn_steps": 3 });
        assert_eq!(DqnConfig::for_tasks_with(&["social-media"], &json).unwrap().gnn_steps, 3, "the request wins");
        assert_eq!(DqnConfig::for_tasks_with(&["click-test"], &serde_json::Value::Null).unwrap(), DqnConfig::default());
        let err = DqnConfig::for_tasks_with(&["click-test"], &serde_json::json!({ "gnn_stepz": 2 })).unwrap_err();
        assert!(err.contains("gnn_stepz"), "{err}");
        let err = DqnConfig::for_tasks_with(&["click-test"], &serde_json::json!({ "batch_size": 0 })).unwrap_err();
        assert!(err.contains("batch_size"), "{err}");
    }

    #[test]
    fn bad_settings_are_named() {
        let c = DqnConfig { batch_size: 0, ..Default::default() };
        assert_eq!(c.validate().unwrap_err(), "batch_size must be between 1 and 4096 (it is 0)");
        let c = DqnConfig { gamma: 1.5, ..Default::default() };
        assert!(c.validate().unwrap_err().contains("gamma"));
    }

    #[test]
    fn every_size_has_an_upper_bound_named_in_its_message() {
        // What an editor, a share link or a checkpoint could carry: each alone would allocate or
        // loop until the tab dies.
        let d = DqnConfig::default;
        let cases = [
            (DqnConfig { replay_capacity: 1_000_000_000, ..d() }, "replay_capacity must be between 1 and 1000000 (it is 1000000000)"),
            (DqnConfig { text_vocab: 10_000_000, ..d() }, "text_vocab must be between 3 and 100000"),
            (DqnConfig { tag_vocab: 70_000, ..d() }, "tag_vocab must be between 3 and 65536"),
            (DqnConfig { class_vocab: 70_000, ..d() }, "class_vocab must be between 3 and 65536"),
            (DqnConfig { tag_dim: 5000, ..d() }, "tag_dim must be between 1 and 1024"),
            (DqnConfig { text_dim: 5000, ..d() }, "text_dim must be between 1 and 1024"),
            (DqnConfig { class_dim: 5000, ..d() }, "class_dim must be between 1 and 1024"),
            (DqnConfig { dom_hidden: 5000, ..d() }, "dom_hidden must be between 1 and 1024"),
            (DqnConfig { token_hidden: 5000, ..d() }, "token_hidden must be between 1 and 1024"),
            (DqnConfig { mode_hidden: 5000, ..d() }, "mode_hidden must be between 1 and 1024"),
            (DqnConfig { gnn_steps: 1_000_000, ..d() }, "gnn_steps must be between 0 and 32"),
            (DqnConfig { stream_hidden_layers: 0, ..d() }, "stream_hidden_layers must be between 1 and 8 (it is 0)"),
            (DqnConfig { stream_hidden_layers: 1000, ..d() }, "stream_hidden_layers must be between 1 and 8"),
            (DqnConfig { batch_size: 100_000, replay_capacity: 1_000_000, ..d() }, "batch_size must be between 1 and 4096"),
            (DqnConfig { n_step: 1000, ..d() }, "n_step must be between 1 and 100"),
            (DqnConfig { max_nodes: 100_000, ..d() }, "max_nodes must be between 1 and 10000"),
            (DqnConfig { max_leaves: 100_000, ..d() }, "max_leaves must be between 1 and 10000"),
            (DqnConfig { max_goal_tokens: 100_000, ..d() }, "max_goal_tokens must be between 1 and 1000"),
            (DqnConfig { updates_per_step: 1_000_000, ..d() }, "updates_per_step must be between 0 and 64"),
            (DqnConfig { target_sync: 1 << 40, ..d() }, "target_sync must be between 1 and 1000000"),
            (DqnConfig { max_episode_steps: 4_000_000_000, ..d() }, "max_episode_steps must be between 1 and 10000"),
            (DqnConfig { noisy_sigma0: f64::NAN, ..d() }, "noisy_sigma0 must be a number between 0 and 10"),
            (DqnConfig { learning_rate: f64::INFINITY, ..d() }, "learning_rate must be a number above 0 and below 1"),
            (DqnConfig { adam_epsilon: f32::NAN, ..d() }, "adam_epsilon must be a number above 0 and at most 1"),
            (DqnConfig { gamma: f64::NAN, ..d() }, "gamma must be a number between 0 and 1"),
            (DqnConfig { huber_delta: f32::INFINITY, ..d() }, "huber_delta must be a number above 0 and at most 1000"),
            (DqnConfig { grad_clip: Some(f32::NAN), ..d() }, "grad_clip must be a number above 0 and at most 1000"),
            (DqnConfig { priority_alpha: 7.0, ..d() }, "priority_alpha must be a number between 0 and 1"),
            (DqnConfig { priority_beta: -1.0, ..d() }, "priority_beta must be a number between 0 and 1"),
            (DqnConfig { priority_epsilon: f64::INFINITY, ..d() }, "priority_epsilon must be a number between 0 and 1"),
        ];
        for (cfg, want) in cases {
            let err = cfg.validate().expect_err(want);
            assert!(err.starts_with(want), "want \"{want}\", got \"{err}\"");
        }
        // Sizes each within bounds can still multiply into a network or a batch no tab holds.
        let big = DqnConfig { text_vocab: 100_000, text_dim: 1024, ..d() };
        let err = big.validate().unwrap_err();
        assert!(err.contains("parameters") && err.contains("text_vocab"), "{err}");
        let wide = DqnConfig { batch_size: 4096, replay_capacity: 100_000, max_nodes: 10_000, ..d() };
        let err = wide.validate().unwrap_err();
        assert!(err.contains("batch_size") && err.contains("max_nodes"), "{err}");
        // The bounds themselves pass, and the paper's and the reference code's presets are far inside.
        let edge = DqnConfig {
            replay_capacity: 1_000_000,
            batch_size: 4096,
            n_step: 100,
            gnn_steps: 32,
            max_episode_steps: 10_000,
            updates_per_step: 64,
            target_sync: 1_000_000,
            max_goal_tokens: 1000,
            max_leaves: 10_000,
            ..d()
        };
        edge.validate().unwrap();
        for preset in [
            d(),
            DqnConfig::multitask(),
            DqnConfig::reference_code(),
            DqnConfig::code_sizes(),
            DqnConfig::fast_tab(),
            DqnConfig::for_tasks(&["social-media", "login-user"]),
        ] {
            preset.validate().unwrap();
        }
    }

    #[test]
    fn partial_json_keeps_defaults() {
        let c: DqnConfig = serde_json::from_str(r#"{"gnn_steps": 7}"#).unwrap();
        assert_eq!(c.gnn_steps, 7);
        assert_eq!(c.batch_size, 128);
    }
}

//! Every hyperparameter of DOM-Q-Net in one place, with the paper's value and its source.
//!
//! "Table n" refers to the appendix of Jia, Kiros & Ba, "DOM-Q-NET: Grounded RL on Structured
//! Language" (ICLR 2019). Where the authors' code does something else, the paper's choice is the
//! default and the code's is an option (see `../shared/reference/reference-implementations.md` §1).

use serde::{Deserialize, Serialize};

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

    // ---------------------------------------------------------------- network (Table 2, §3.3)
    /// Message-passing steps T (Table 2: 3; 7 for social-media, see [`DqnConfig::for_tasks`]).
    pub gnn_steps: usize,
    /// Hidden sizes of the three Q streams, 2 layers each (Table 2: FC layers 128 for all three;
    /// the reference code uses 128 for the DOM stream, 64 for tokens and 32 for the mode).
    pub dom_hidden: usize,
    pub token_hidden: usize,
    pub mode_hidden: usize,
    /// Global readout with goal attention (§3.3 eq. 7); false: max-pool only (eq. 6).
    pub goal_attention: bool,
    /// Also concatenate the goal vector to the global module (the reference code's
    /// `goal_attn_cat`; App. 6.3 calls it goal concatenation).
    pub goal_concat: bool,
    /// Initial noise scale of the noisy layers (Table 1: σ0 = 0.5).
    pub noisy_sigma0: f64,

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
            gnn_steps: 3,
            dom_hidden: 128,
            token_hidden: 128,
            mode_hidden: 128,
            goal_attention: true,
            goal_concat: false,
            noisy_sigma0: 0.5,
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

    /// The reference code's architecture choices where they differ from the paper's: no text
    /// embedding in the local module, Q streams of 128/64/32. For comparisons.
    pub fn reference_code() -> Self {
        DqnConfig { local_text_embedding: false, token_hidden: 64, mode_hidden: 32, ..Self::default() }
    }

    /// The paper's settings for training on `tasks` together: the multitask buffer (Table 3) for
    /// more than one task, and T = 7 message-passing steps when a social-media task is among them
    /// (Table 2).
    pub fn for_tasks<S: AsRef<str>>(tasks: &[S]) -> Self {
        let mut cfg = if tasks.len() > 1 { Self::multitask() } else { Self::default() };
        if tasks.iter().any(|t| t.as_ref().starts_with("social-media")) {
            cfg.gnn_steps = 7;
        }
        cfg
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
    /// tampered (one-hot 2).
    pub fn local_dim(&self) -> usize {
        self.tag_dim + self.class_dim + if self.local_text_embedding { self.text_dim } else { 0 } + 1 + 2 + 2
    }

    /// Size of the global module.
    pub fn global_dim(&self) -> usize {
        let d = self.local_dim();
        2 * d + if self.goal_attention { d } else { 0 } + if self.goal_concat { d } else { 0 }
    }

    /// Checks the settings make sense; the message says which one does not.
    pub fn validate(&self) -> Result<(), String> {
        let positive = [
            ("tag_vocab", self.tag_vocab), ("text_vocab", self.text_vocab), ("class_vocab", self.class_vocab),
            ("tag_dim", self.tag_dim), ("text_dim", self.text_dim), ("class_dim", self.class_dim),
            ("max_nodes", self.max_nodes), ("max_leaves", self.max_leaves), ("max_goal_tokens", self.max_goal_tokens),
            ("dom_hidden", self.dom_hidden), ("token_hidden", self.token_hidden), ("mode_hidden", self.mode_hidden),
            ("batch_size", self.batch_size), ("n_step", self.n_step), ("target_sync", self.target_sync),
            ("replay_capacity", self.replay_capacity),
        ];
        for (name, v) in positive {
            if v == 0 {
                return Err(format!("{name} must be positive"));
            }
        }
        if self.tag_vocab < 3 || self.text_vocab < 3 || self.class_vocab < 3 {
            return Err("vocabularies need room beyond <unk> and <pad>".into());
        }
        if !(0.0..=1.0).contains(&self.gamma) {
            return Err("gamma must be in [0, 1]".into());
        }
        if !(self.learning_rate > 0.0 && self.learning_rate < 1.0) {
            return Err("learning_rate must be in (0, 1)".into());
        }
        if self.replay_capacity < self.batch_size {
            return Err("replay_capacity must hold at least one batch".into());
        }
        if self.max_episode_steps == 0 {
            return Err("max_episode_steps must be positive".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_the_paper_and_the_reference_code_is_an_option() {
        let c = DqnConfig::default();
        c.validate().unwrap();
        assert_eq!((c.dom_hidden, c.token_hidden, c.mode_hidden), (128, 128, 128), "Table 2: FC 128");
        assert_eq!(c.local_dim(), 16 + 16 + 32 + 1 + 2 + 2, "eq. 3: text embedding in the local module");
        assert_eq!(c.global_dim(), 3 * c.local_dim());
        let r = DqnConfig::reference_code();
        r.validate().unwrap();
        assert_eq!(r.local_dim(), 37, "the reference code's 37-d local module");
        assert_eq!((r.token_hidden, r.mode_hidden), (64, 32));
        assert_eq!(DqnConfig::multitask().replay_capacity, 100_000);
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
        assert_eq!(c.validate().unwrap_err(), "batch_size must be positive");
        let c = DqnConfig { gamma: 1.5, ..Default::default() };
        assert!(c.validate().unwrap_err().contains("gamma"));
    }

    #[test]
    fn partial_json_keeps_defaults() {
        let c: DqnConfig = serde_json::from_str(r#"{"gnn_steps": 7}"#).unwrap();
        assert_eq!(c.gnn_steps, 7);
        assert_eq!(c.batch_size, 128);
    }
}

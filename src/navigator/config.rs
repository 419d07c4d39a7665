//! Every hyperparameter of the navigator, with its value and where it comes from.
//!
//! Sources: the reference code's `DQNWebLSTM` and its gin file (reference-implementations.md
//! §3.6: embedding 100, latent 50, 250 elements × 5 attributes × 10 tokens, 25 fields × 10
//! tokens, 8 element features, keys only, forward LSTM with BiLSTM optional); the AEG/CoDE
//! papers (A2C with entropy regularisation, a navigator of about 104.5k parameters). The papers
//! give no A2C constants: those marked "our choice" follow Mnih et al. (2016) and common A2C
//! practice. The reference's DQN head has no constants in its gin file either; CoDE is built on
//! ACME, so the `dqn_*` values are ACME's TF DQN agent's defaults unless marked otherwise.

use serde::{Deserialize, Serialize};

/// How the navigator learns: the papers' A2C, or the reference code's DQN head.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Head {
    /// Actor-critic: a softmax policy over the open choices and a value (the papers).
    #[default]
    A2c,
    /// Q-values over the open choices, ε-greedy acting, replay and a target network (the
    /// reference code's `DQNWebLSTM`).
    Dqn,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NavigatorConfig {
    /// The learner: "a2c" (the papers, default) or "dqn" (the reference code's head).
    pub head: Head,

    // ---------------------------------------------------------------- observation
    /// Most DOM elements read, in ref order (reference: 250).
    pub max_elements: usize,
    /// Most profile fields (reference: 25).
    pub max_fields: usize,
    /// Tokens kept per attribute and per field (reference: 10).
    pub max_tokens: usize,
    /// Read each field's value tokens beside its key (reference gin: `profile_value_dropout`
    /// 1.0, i.e. keys only).
    pub field_values: bool,
    /// Width and height the element boxes are divided by (left/W, top/H, w/W, h/H; reference:
    /// the page's size). Our sites are 400 px wide; 640 px is the task frame's height.
    pub layout_width: f32,
    pub layout_height: f32,
    /// Vocabulary cap, `<unk>` and `<pad>` included (the reference grows its vocabulary
    /// without a stated cap; our choice, several times what the 40 primitives' words need, and
    /// with it the network has about the paper's 104.5k parameters plus a 100k-value table).
    /// Tokens of values typed into fields join it only with `field_values` (they are endless).
    pub vocab_cap: usize,

    // ---------------------------------------------------------------- actions
    /// A "click element e" choice beside every "set field f into element e" (ours, the default:
    /// what every navigator so far was trained and judged with; the reference code's (2, F, E)
    /// head has an action type). The papers' gMiniWoB action is the (element, field) tuple alone
    /// (CoDE §6: "Its actions are a tuple (element, field) that denotes inputting the field into
    /// the element"; the reference's gMiniWoB env takes f·250 + e), and setting a field into a
    /// button, link or label clicks it, so nothing needs the click choice; without it a checkbox
    /// or a radio is reached only through a field, which sets it as the profile says (a click
    /// toggles it whatever the profile says). `false` gives the papers' action space; a page
    /// with no fields keeps its clicks then (the reference's profile always holds `_dummy`).
    pub click_choices: bool,

    // ---------------------------------------------------------------- network
    /// Token embedding size (reference gin: 100).
    pub embedding_dim: usize,
    /// Element, field and LSTM size (reference gin: latent 50).
    pub latent_dim: usize,
    /// A backward LSTM beside the forward one (reference: optional, off). Each direction then has
    /// latent_dim / 2 units and their outputs are concatenated, so an element's encoding keeps
    /// latent_dim values and the rest of the network is unchanged.
    pub bidirectional: bool,

    // ---------------------------------------------------------------- A2C
    /// Adam learning rate (our choice; the papers do not state it). 3e-4: at 1e-3 the policy
    /// often collapsed on login level 0 to setting one field and submitting.
    pub learning_rate: f64,
    /// Discount γ (our choice; the papers do not state it).
    pub discount: f64,
    /// Entropy bonus β (the papers do not state theirs). Our choice: 0.05. With Mnih et al.'s
    /// 0.01 the policy collapsed on login level 0 (seeds 2 and 3) to setting one field and
    /// submitting (return −0.55, 0% success after 4,000–5,500 updates); with 0.05 both solved it
    /// within 3,200 updates (`examples/train_navigator.rs login-0`).
    pub entropy_coef: f64,
    /// Weight of a cross-entropy from the uniform distribution over the open choices,
    /// −mean log π(a|s) (not in the papers: 0, their entropy bonus alone, is the default). The
    /// entropy's gradient on a choice vanishes as its probability does (∂H/∂z = −p(log p + H)),
    /// so a choice A2C has driven to p ≈ 0 is never sampled again and never relearnt: CoDE seed 1
    /// left the `state` select at p < 1e-4 even on a page holding only it (docs/benchmarks-code.md
    /// §5, "Why the `state` select stays unset").
    /// This term pulls every open choice's logit up by coef/N (N open choices) whatever its p.
    pub uniform_coef: f64,
    /// Weight of the value loss (our choice, common A2C practice).
    pub value_coef: f64,
    /// Clip the global gradient norm to this (`None`: no clipping, our default; a bound of 1.0
    /// slowed learning on login level 0 without steadying it).
    pub max_grad_norm: Option<f64>,
    /// Adam ε.
    pub adam_epsilon: f32,
    /// Episodes collected on a design before each update (the papers' M; unstated, our choice).
    /// Under DQN: episodes collected per iteration before its TD updates.
    pub episodes_per_update: usize,

    // ---------------------------------------------------------------- DQN head (head = "dqn")
    // `discount`, `adam_epsilon` and `max_grad_norm` above apply to it too (ACME: γ 0.99, no
    // clipping).
    /// Adam learning rate (ACME: 1e-3).
    pub dqn_learning_rate: f64,
    /// Transitions per TD update (ACME: 256).
    pub dqn_batch_size: usize,
    /// Replay capacity in transitions, oldest out first (ACME: 1,000,000; our choice 10,000: the
    /// whole replay goes into a run's snapshot so it resumes exactly, and at 1M that would be
    /// gigabytes).
    pub dqn_replay_capacity: usize,
    /// Transitions stored before the first update (ACME: 1,000).
    pub dqn_min_replay: usize,
    /// Transitions sampled per transition stored; updates per env step = this / batch (ACME: 32,
    /// i.e. one update of 256 per 8 steps).
    pub dqn_samples_per_insert: f64,
    /// Updates between copies of the online network into the target network (ACME: 100).
    pub dqn_target_update_period: usize,
    /// Steps summed before bootstrapping (ACME: 5).
    pub dqn_n_step: usize,
    /// Double DQN: the online network picks the next choice, the target network values it
    /// (ACME's `trfl.double_qlearning`; DOM-Q-Net too).
    pub dqn_double: bool,
    /// Huber loss with δ = 1 (ACME, DOM-Q-Net); otherwise squared error.
    pub dqn_huber: bool,
    /// Clip each n-step return to ±this before the TD target (ACME clips to ±1; `None`: none).
    pub dqn_reward_clip: Option<f64>,
    /// ε-greedy exploration, linear from start to end over `dqn_epsilon_decay_steps` env steps,
    /// then end (ACME: a constant 0.05).
    pub dqn_epsilon_start: f64,
    pub dqn_epsilon_end: f64,
    pub dqn_epsilon_decay_steps: u64,
}

impl Default for NavigatorConfig {
    fn default() -> Self {
        NavigatorConfig {
            max_elements: 250,
            max_fields: 25,
            max_tokens: 10,
            field_values: false,
            layout_width: crate::gminiwob::layout::FRAME_SIZE[0] as f32,
            layout_height: crate::gminiwob::layout::FRAME_SIZE[1] as f32,
            vocab_cap: 1_000,
            click_choices: true,
            head: Head::A2c,
            embedding_dim: 100,
            latent_dim: 50,
            bidirectional: false,
            learning_rate: 3e-4,
            discount: 0.99,
            entropy_coef: 0.05,
            uniform_coef: 0.0,
            value_coef: 0.5,
            max_grad_norm: None,
            adam_epsilon: 1e-8,
            episodes_per_update: 8,
            dqn_learning_rate: 1e-3,
            dqn_batch_size: 256,
            dqn_replay_capacity: 10_000,
            dqn_min_replay: 1_000,
            dqn_samples_per_insert: 32.0,
            dqn_target_update_period: 100,
            dqn_n_step: 5,
            dqn_double: true,
            dqn_huber: true,
            dqn_reward_clip: Some(1.0),
            dqn_epsilon_start: 0.05,
            dqn_epsilon_end: 0.05,
            dqn_epsilon_decay_steps: 0,
        }
    }
}

/// Upper bounds on every size, so a config from a link, a file or the editor cannot allocate or
/// loop until the tab dies.
const MAX_ELEMENTS: usize = 1_000;
const MAX_FIELDS: usize = 64;
const MAX_TOKENS: usize = 32;
const MAX_VOCAB: usize = 100_000;
const MAX_DIM: usize = 1_024;
const MAX_EPISODES_PER_UPDATE: usize = 1_024;
const MAX_BATCH: usize = 4_096;
/// Replay states are kept whole (about 2–40 kB each, by page size) and all go into snapshots.
const MAX_REPLAY: usize = 100_000;
const MAX_N_STEP: usize = 64;
const MAX_TARGET_PERIOD: usize = 10_000_000;
/// Sizes each within bounds can still multiply into a network too large for a tab (the
/// vocabulary table alone could be 100,000 × 1,024): 20M parameters, 80 MB in f32, as
/// DOM-Q-Net's cap (`dom_q_net::config::MAX_PARAMS`). The default navigator has about 205k.
pub const MAX_PARAMS: u64 = 20_000_000;

impl NavigatorConfig {
    /// Checks every value; the message names the first bad one.
    pub fn validate(&self) -> Result<(), String> {
        let size = |name: &str, v: usize, lo: usize, hi: usize| {
            if (lo..=hi).contains(&v) { Ok(()) } else { Err(format!("{name} must be {lo} to {hi}, not {v}")) }
        };
        size("max_elements", self.max_elements, 1, MAX_ELEMENTS)?;
        size("max_fields", self.max_fields, 1, MAX_FIELDS)?;
        size("max_tokens", self.max_tokens, 1, MAX_TOKENS)?;
        size("vocab_cap", self.vocab_cap, 3, MAX_VOCAB)?;
        size("embedding_dim", self.embedding_dim, 1, MAX_DIM)?;
        size("latent_dim", self.latent_dim, 1, MAX_DIM)?;
        size("episodes_per_update", self.episodes_per_update, 1, MAX_EPISODES_PER_UPDATE)?;
        if self.bidirectional && !self.latent_dim.is_multiple_of(2) {
            return Err(format!("latent_dim must be even with bidirectional (each direction gives half), not {}", self.latent_dim));
        }
        size("dqn_batch_size", self.dqn_batch_size, 1, MAX_BATCH)?;
        size("dqn_replay_capacity", self.dqn_replay_capacity, 1, MAX_REPLAY)?;
        size("dqn_min_replay", self.dqn_min_replay, 1, self.dqn_replay_capacity)?;
        size("dqn_target_update_period", self.dqn_target_update_period, 1, MAX_TARGET_PERIOD)?;
        size("dqn_n_step", self.dqn_n_step, 1, MAX_N_STEP)?;
        if self.dqn_epsilon_decay_steps > 1_000_000_000_000 {
            return Err(format!("dqn_epsilon_decay_steps must be 0 to 1000000000000, not {}", self.dqn_epsilon_decay_steps));
        }
        let finite = |name: &str, v: f64, lo: f64, hi: f64| {
            if v.is_finite() && v >= lo && v <= hi { Ok(()) } else { Err(format!("{name} must be {lo} to {hi}, not {v}")) }
        };
        finite("layout_width", self.layout_width as f64, 1.0, 10_000.0)?;
        finite("layout_height", self.layout_height as f64, 1.0, 10_000.0)?;
        finite("learning_rate", self.learning_rate, 1e-8, 1.0)?;
        finite("discount", self.discount, 0.0, 1.0)?;
        finite("entropy_coef", self.entropy_coef, 0.0, 10.0)?;
        finite("uniform_coef", self.uniform_coef, 0.0, 10.0)?;
        finite("value_coef", self.value_coef, 0.0, 100.0)?;
        finite("adam_epsilon", self.adam_epsilon as f64, 1e-12, 1.0)?;
        if let Some(n) = self.max_grad_norm {
            finite("max_grad_norm", n, 1e-6, 1e6)?;
        }
        finite("dqn_learning_rate", self.dqn_learning_rate, 1e-8, 1.0)?;
        finite("dqn_samples_per_insert", self.dqn_samples_per_insert, 1e-3, 1_024.0)?;
        if let Some(c) = self.dqn_reward_clip {
            finite("dqn_reward_clip", c, 1e-6, 1e6)?;
        }
        finite("dqn_epsilon_start", self.dqn_epsilon_start, 0.0, 1.0)?;
        finite("dqn_epsilon_end", self.dqn_epsilon_end, 0.0, 1.0)?;
        // Checked before anything is built: a header or a link asking for a huge network is
        // refused here, not after the tab has allocated it.
        let params = self.num_params();
        if params > MAX_PARAMS {
            return Err(format!(
                "the network would have {params} parameters, over the limit of {MAX_PARAMS}: lower vocab_cap, embedding_dim or latent_dim"
            ));
        }
        Ok(())
    }

    /// The network's parameter count, from the sizes alone (`NavigatorModel::new`'s layers): the
    /// vocabulary table, the element and field MLPs, the LSTM(s), the action-type and value heads.
    pub fn num_params(&self) -> u64 {
        use super::features::{ATTRIBUTES, ELEMENT_FEATURES};
        let (v, d, l) = (self.vocab_cap as u64, self.embedding_dim as u64, self.latent_dim as u64);
        let linear = |i: u64, o: u64| i * o + o;
        let lstm = |p: u64| linear(l + ELEMENT_FEATURES as u64, 4 * p) + p * 4 * p;
        let lstms = if self.bidirectional { 2 * lstm(l / 2) } else { lstm(l) };
        v * d + linear(ATTRIBUTES as u64 * d, l) + linear(d, l) + lstms + linear(l, 2) + linear(l, l) + linear(l, 1)
    }

    /// ε of the DQN head's exploration after `env_steps` steps of training.
    pub fn epsilon(&self, env_steps: u64) -> f64 {
        let (a, b) = (self.dqn_epsilon_start, self.dqn_epsilon_end);
        if env_steps >= self.dqn_epsilon_decay_steps {
            return b;
        }
        a + (b - a) * env_steps as f64 / self.dqn_epsilon_decay_steps as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_bad_values_are_named() {
        NavigatorConfig::default().validate().unwrap();
        let bad = |f: fn(&mut NavigatorConfig), word: &str| {
            let mut c = NavigatorConfig::default();
            f(&mut c);
            let e = c.validate().unwrap_err();
            assert!(e.contains(word), "{e}");
        };
        bad(|c| c.max_elements = 1_000_000_000, "max_elements");
        bad(|c| c.vocab_cap = 0, "vocab_cap");
        bad(|c| c.latent_dim = 1 << 20, "latent_dim");
        bad(|c| c.learning_rate = f64::NAN, "learning_rate");
        bad(|c| c.discount = 1.5, "discount");
        bad(|c| c.uniform_coef = -0.1, "uniform_coef");
        bad(|c| c.max_grad_norm = Some(f64::INFINITY), "max_grad_norm");
        bad(|c| c.dqn_replay_capacity = 10_000_000, "dqn_replay_capacity");
        bad(|c| c.dqn_batch_size = 0, "dqn_batch_size");
        bad(|c| c.dqn_min_replay = c.dqn_replay_capacity + 1, "dqn_min_replay");
        bad(|c| c.dqn_n_step = 1_000, "dqn_n_step");
        bad(|c| c.dqn_target_update_period = 0, "dqn_target_update_period");
        bad(|c| c.dqn_samples_per_insert = f64::INFINITY, "dqn_samples_per_insert");
        bad(|c| c.dqn_epsilon_start = 1.5, "dqn_epsilon_start");
        bad(|c| c.dqn_epsilon_decay_steps = u64::MAX, "dqn_epsilon_decay_steps");
        bad(|c| c.dqn_reward_clip = Some(-1.0), "dqn_reward_clip");
        // Each size within its bound, together a network of 102M parameters.
        bad(
            |c| {
                c.vocab_cap = 100_000;
                c.embedding_dim = 1_024
            },
            "over the limit of 20000000",
        );
        bad(
            |c| {
                c.bidirectional = true;
                c.latent_dim = 51
            },
            "latent_dim must be even",
        );
    }

    #[test]
    fn epsilon_falls_linearly_then_stays() {
        let c = NavigatorConfig { dqn_epsilon_start: 1.0, dqn_epsilon_end: 0.1, dqn_epsilon_decay_steps: 100, ..NavigatorConfig::default() };
        assert_eq!(c.epsilon(0), 1.0);
        assert!((c.epsilon(50) - 0.55).abs() < 1e-12);
        assert_eq!(c.epsilon(100), 0.1);
        assert_eq!(c.epsilon(1_000_000), 0.1);
        assert_eq!(NavigatorConfig::default().epsilon(0), 0.05, "ACME's constant ε");
    }

    #[test]
    fn unknown_keys_are_refused() {
        assert!(serde_json::from_str::<NavigatorConfig>(r#"{"latent":50}"#).is_err());
        let c: NavigatorConfig = serde_json::from_str(r#"{"latent_dim":32}"#).unwrap();
        assert_eq!(c.latent_dim, 32);
        assert_eq!(c.embedding_dim, 100);
        let d: NavigatorConfig = serde_json::from_str(r#"{"head":"dqn","bidirectional":true}"#).unwrap();
        assert_eq!((d.head, d.bidirectional), (Head::Dqn, true));
        assert!(serde_json::from_str::<NavigatorConfig>(r#"{"head":"ppo"}"#).is_err());
    }
}

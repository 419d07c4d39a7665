//! Every hyperparameter of the navigator, with its value and where it comes from.
//!
//! Sources: the reference code's `DQNWebLSTM` and its gin file (reference-implementations.md
//! §3.6: embedding 100, latent 50, 250 elements × 5 attributes × 10 tokens, 25 fields × 10
//! tokens, 8 element features, keys only); the AEG/CoDE papers (A2C with entropy
//! regularisation, a navigator of about 104.5k parameters). The papers give no A2C constants:
//! those marked "our choice" follow Mnih et al. (2016) and common A2C practice.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NavigatorConfig {
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

    // ---------------------------------------------------------------- network
    /// Token embedding size (reference gin: 100).
    pub embedding_dim: usize,
    /// Element, field and LSTM size (reference gin: latent 50).
    pub latent_dim: usize,

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
    /// Weight of the value loss (our choice, common A2C practice).
    pub value_coef: f64,
    /// Clip the global gradient norm to this (`None`: no clipping, our default; a bound of 1.0
    /// slowed learning on login level 0 without steadying it).
    pub max_grad_norm: Option<f64>,
    /// Adam ε.
    pub adam_epsilon: f32,
    /// Episodes collected on a design before each update (the papers' M; unstated, our choice).
    pub episodes_per_update: usize,
}

impl Default for NavigatorConfig {
    fn default() -> Self {
        NavigatorConfig {
            max_elements: 250,
            max_fields: 25,
            max_tokens: 10,
            field_values: false,
            layout_width: 400.0,
            layout_height: 640.0,
            vocab_cap: 1_000,
            embedding_dim: 100,
            latent_dim: 50,
            learning_rate: 3e-4,
            discount: 0.99,
            entropy_coef: 0.05,
            value_coef: 0.5,
            max_grad_norm: None,
            adam_epsilon: 1e-8,
            episodes_per_update: 8,
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
        let finite = |name: &str, v: f64, lo: f64, hi: f64| {
            if v.is_finite() && v >= lo && v <= hi { Ok(()) } else { Err(format!("{name} must be {lo} to {hi}, not {v}")) }
        };
        finite("layout_width", self.layout_width as f64, 1.0, 10_000.0)?;
        finite("layout_height", self.layout_height as f64, 1.0, 10_000.0)?;
        finite("learning_rate", self.learning_rate, 1e-8, 1.0)?;
        finite("discount", self.discount, 0.0, 1.0)?;
        finite("entropy_coef", self.entropy_coef, 0.0, 10.0)?;
        finite("value_coef", self.value_coef, 0.0, 100.0)?;
        finite("adam_epsilon", self.adam_epsilon as f64, 1e-12, 1.0)?;
        if let Some(n) = self.max_grad_norm {
            finite("max_grad_norm", n, 1e-6, 1e6)?;
        }
        Ok(())
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
        bad(|c| c.max_grad_norm = Some(f64::INFINITY), "max_grad_norm");
    }

    #[test]
    fn unknown_keys_are_refused() {
        assert!(serde_json::from_str::<NavigatorConfig>(r#"{"latent":50}"#).is_err());
        let c: NavigatorConfig = serde_json::from_str(r#"{"latent_dim":32}"#).unwrap();
        assert_eq!(c.latent_dim, 32);
        assert_eq!(c.embedding_dim, 100);
    }
}

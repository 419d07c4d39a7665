//! Share links: what the sender saw, in the URL, so that opening the link reproduces it.
//!
//! A link carries the task, the seed, the agent's config, and either an episode's action log
//! (replayed action for action on the same seeded page) or a shipped checkpoint plus the seeds to
//! evaluate it on. The state is JSON, base64url-encoded into the URL fragment (`#s=...`), so it
//! never reaches a server. Decoding is strict: size limits, a format version, known tasks and
//! agents only, bounded lists. A link is data; nothing in it is ever run as code.

use serde::{Deserialize, Serialize};

use crate::dom_q_net::DqnConfig;
use crate::env::{Action, TaskSpec};

pub const SHARE_VERSION: u32 = 1;
/// Longest encoded link state accepted (browsers handle URLs of this size comfortably).
pub const MAX_ENCODED: usize = 60_000;
pub const MAX_ACTIONS: usize = 500;
pub const MAX_TEXT: usize = 500;
pub const MAX_SEEDS: usize = 1_000;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShareState {
    pub v: u32,
    /// Which view the link opens (`watch`, `train`, `play`, `design`).
    #[serde(default = "default_view")]
    pub view: String,
    pub task: TaskSpec,
    pub seed: u32,
    /// The agent's hyperparameters, when they matter for what is shared.
    #[serde(default)]
    pub config: Option<DqnConfig>,
    #[serde(default)]
    pub replay: Option<Replay>,
}

fn default_view() -> String {
    "watch".into()
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Replay {
    /// An episode's actions, replayed on the page of `task` with `seed`.
    Episode { actions: Vec<Action>, raw_reward: Option<f64> },
    /// A checkpoint shipped with the app (by name), evaluated greedily on these seeds.
    Checkpoint { agent: String, seeds: Vec<u32> },
}

#[derive(Clone, Debug, PartialEq)]
pub struct ShareError(pub String);

impl std::fmt::Display for ShareError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "this share link cannot be opened: {}", self.0)
    }
}

impl std::error::Error for ShareError {}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn b64_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |acc, (i, &b)| acc | (b as u32) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(B64[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

fn b64_decode(s: &str) -> Result<Vec<u8>, ShareError> {
    let mut vals = Vec::with_capacity(s.len());
    for c in s.bytes() {
        let v = B64.iter().position(|&b| b == c).ok_or_else(|| ShareError("it contains characters a link never has".into()))?;
        vals.push(v as u32);
    }
    if vals.len() % 4 == 1 {
        return Err(ShareError("it was cut short".into()));
    }
    let mut out = Vec::with_capacity(vals.len() * 3 / 4);
    for chunk in vals.chunks(4) {
        let n = chunk.iter().enumerate().fold(0u32, |acc, (i, &v)| acc | v << (18 - 6 * i));
        for i in 0..chunk.len() - 1 {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    Ok(out)
}

impl ShareState {
    /// The URL fragment for this state (`s=...`, without the `#`).
    pub fn encode(&self) -> String {
        format!("s={}", b64_encode(serde_json::to_string(self).expect("serialisable").as_bytes()))
    }

    /// Parses a URL fragment (with or without `#`). `known_agents` lists the shipped checkpoints.
    pub fn decode(fragment: &str, known_agents: &[String]) -> Result<Self, ShareError> {
        let fragment = fragment.trim_start_matches('#');
        let encoded = fragment
            .split('&')
            .find_map(|kv| kv.strip_prefix("s="))
            .ok_or_else(|| ShareError("it has no lab state in it".into()))?;
        if encoded.len() > MAX_ENCODED {
            return Err(ShareError(format!("it is too long ({} characters; at most {MAX_ENCODED})", encoded.len())));
        }
        let json = b64_decode(encoded)?;
        let state: ShareState = serde_json::from_slice(&json).map_err(|e| ShareError(format!("its content is malformed ({e})")))?;
        state.validate(known_agents)?;
        Ok(state)
    }

    pub fn validate(&self, known_agents: &[String]) -> Result<(), ShareError> {
        if self.v != SHARE_VERSION {
            return Err(ShareError(format!("it was made by a lab with link format {}, this lab reads {SHARE_VERSION}", self.v)));
        }
        if !matches!(self.view.as_str(), "watch" | "train" | "play" | "design") {
            return Err(ShareError(format!("it asks for an unknown view \"{}\"", self.view)));
        }
        match &self.task {
            TaskSpec::Builtin { name } => {
                TaskSpec::builtin(name).map_err(|e| ShareError(e.to_string()))?;
            }
            TaskSpec::External { base_url, name } => {
                TaskSpec::external(base_url, name).map_err(|e| ShareError(e.to_string()))?;
            }
            TaskSpec::Inline { .. } => return Err(ShareError("it carries a whole page, which links may not".into())),
            // The design was validated as the link was read (it is data, never HTML).
            TaskSpec::Generated { .. } => self.task.check_generated_name().map_err(|e| ShareError(e.to_string()))?,
        }
        if let Some(cfg) = &self.config {
            cfg.validate().map_err(|e| ShareError(format!("its agent settings are invalid: {e}")))?;
        }
        match &self.replay {
            Some(Replay::Episode { actions, .. }) => {
                if actions.len() > MAX_ACTIONS {
                    return Err(ShareError(format!("its episode has {} actions (at most {MAX_ACTIONS})", actions.len())));
                }
                for a in actions {
                    if let Some(t) = a.text() {
                        if t.chars().count() > MAX_TEXT {
                            return Err(ShareError("it types an overly long text".into()));
                        }
                    }
                }
            }
            Some(Replay::Checkpoint { agent, seeds }) => {
                if !known_agents.iter().any(|a| a == agent) {
                    return Err(ShareError(format!("it names an agent this lab does not ship (\"{agent}\")")));
                }
                if seeds.is_empty() || seeds.len() > MAX_SEEDS {
                    return Err(ShareError(format!("it lists {} evaluation seeds (1 to {MAX_SEEDS})", seeds.len())));
                }
            }
            None => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn episode() -> ShareState {
        ShareState {
            v: SHARE_VERSION,
            view: "watch".into(),
            task: TaskSpec::builtin("enter-text").unwrap(),
            seed: 42,
            config: Some(DqnConfig { gnn_steps: 7, ..DqnConfig::default() }),
            replay: Some(Replay::Episode {
                actions: vec![Action::Type(5, "Cheree ü".into()), Action::Click(6)],
                raw_reward: Some(1.0),
            }),
        }
    }

    #[test]
    fn round_trips_through_a_fragment() {
        let s = episode();
        let frag = s.encode();
        assert!(frag.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_=s".contains(&b)), "URL-safe: {frag}");
        assert_eq!(ShareState::decode(&format!("#{frag}"), &[]).unwrap(), s);
        let ckpt = ShareState {
            replay: Some(Replay::Checkpoint { agent: "click-test".into(), seeds: (1..=10).collect() }),
            ..episode()
        };
        assert_eq!(ShareState::decode(&ckpt.encode(), &["click-test".into()]).unwrap(), ckpt);
    }

    #[test]
    fn generated_sites_travel_as_designs() {
        let design = crate::gminiwob::test_sites::test_site("shopping", 3).unwrap();
        let s = ShareState {
            view: "design".into(),
            task: TaskSpec::generated("shopping-3", design).unwrap(),
            config: None,
            replay: None,
            ..episode()
        };
        assert_eq!(ShareState::decode(&s.encode(), &[]).unwrap(), s);
        // A tampered design is refused with the design's own message.
        let json = serde_json::to_string(&s).unwrap().replace("\"action\":[29,", "\"action\":[99,");
        let err = ShareState::decode(&format!("s={}", b64_encode(json.as_bytes())), &[]).unwrap_err().to_string();
        assert!(err.contains("99 is not a primitive index"), "{err}");
        let named = serde_json::to_string(&s).unwrap().replace("shopping-3", "<b>x</b>");
        let err = ShareState::decode(&format!("s={}", b64_encode(named.as_bytes())), &[]).unwrap_err().to_string();
        assert!(err.contains("generated site's name"), "{err}");
    }

    #[test]
    fn base64_matches_known_vectors() {
        for (raw, enc) in [("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("\u{ff}\u{fe}", "w7_Dvg")] {
            assert_eq!(b64_encode(raw.as_bytes()), enc);
            assert_eq!(b64_decode(enc).unwrap(), raw.as_bytes());
        }
    }

    #[test]
    fn malformed_or_tampered_links_get_clear_errors() {
        let err = |frag: &str| ShareState::decode(frag, &["click-test".into()]).unwrap_err().to_string();
        assert!(err("#nothing=here").contains("no lab state"));
        assert!(err("#s=abc$").contains("characters"));
        assert!(err("#s=abcde").contains("cut short"));
        assert!(err(&format!("s={}", b64_encode(b"{not json"))).contains("malformed"));
        let frag = |s: &ShareState| s.encode();
        assert!(err(&frag(&ShareState { v: 9, ..episode() })).contains("link format 9"));
        let unknown = ShareState { task: TaskSpec::Builtin { name: "rm-rf".into() }, ..episode() };
        assert!(err(&frag(&unknown)).contains("unknown task"));
        let inline = ShareState { task: TaskSpec::Inline { name: "x".into(), html: "<script>alert(1)</script>".into() }, ..episode() };
        assert!(err(&frag(&inline)).contains("whole page"));
        let long = ShareState { replay: Some(Replay::Episode { actions: vec![Action::Click(1); 501], raw_reward: None }), ..episode() };
        assert!(err(&frag(&long)).contains("501 actions"));
        let agent = ShareState { replay: Some(Replay::Checkpoint { agent: "../../etc".into(), seeds: vec![1] }), ..episode() };
        assert!(err(&frag(&agent)).contains("does not ship"));
        let bad_cfg = ShareState { config: Some(DqnConfig { batch_size: 0, ..DqnConfig::default() }), ..episode() };
        assert!(err(&frag(&bad_cfg)).contains("batch_size must be between 1 and 4096"));
        // A link whose settings would allocate until the tab dies is refused before anything is built.
        let huge = ShareState { config: Some(DqnConfig { replay_capacity: 1_000_000_000, ..DqnConfig::default() }), ..episode() };
        assert!(err(&frag(&huge)).contains("replay_capacity must be between 1 and 1000000"));
        let extra = format!("s={}", b64_encode(br#"{"v":1,"task":{"source":"builtin","name":"click-test"},"seed":1,"exec":"x"}"#));
        assert!(err(&extra).contains("malformed"), "unknown fields are refused");
        assert!(err(&format!("s={}", "A".repeat(MAX_ENCODED + 4))).contains("too long"));
    }
}

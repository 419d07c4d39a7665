//! Share links: what the sender saw, in the URL, so that opening the link reproduces it.
//!
//! A link carries the task, the seed, the agent's config, and either an episode's action log
//! (replayed action for action on the same seeded page), a shipped checkpoint plus the seeds to
//! evaluate it on, or the recipe of a WGE view's training run ([`WgeRecipe`]: demonstrations as
//! seed and actions, exploration seeds, what happened when), which the view re-runs
//! deterministically before evaluating on the link's seeds. The state is JSON, base64url-encoded into the URL fragment (`#s=...`), so it
//! never reaches a server. Decoding is strict: size limits, a format version, known tasks and
//! agents only, bounded lists. A link is data; nothing in it is ever run as code.

use serde::{Deserialize, Serialize};

use crate::dom_q_net::DqnConfig;
use crate::env::{Action, EnvError};
use crate::task::TaskSpec;

pub const SHARE_VERSION: u32 = 1;
/// Longest encoded link state accepted (browsers handle URLs of this size comfortably).
pub const MAX_ENCODED: usize = 60_000;
pub const MAX_ACTIONS: usize = 500;
pub const MAX_TEXT: usize = 500;
pub const MAX_SEEDS: usize = 1_000;
/// Demonstrations a WGE link carries (the paper learns from ten per task).
pub const MAX_WGE_DEMOS: usize = 20;
/// Exploration episodes a WGE link asks the receiver to re-run: about six minutes in the tab with
/// DOMNet learning on login-user (README: 400 episodes in 143 s).
pub const MAX_WGE_EPISODES: u32 = 1_000;
/// Events (demonstrations added, DOMNet switched, judged, a reload) in a WGE link's run.
pub const MAX_WGE_EVENTS: usize = 400;
/// Evaluation seeds of a WGE link, and held-out seeds per DOMNet judging.
pub const MAX_WGE_EVAL_SEEDS: usize = 50;
/// Actions per episode a WGE link may ask for (the authors' caps go to 18).
pub const MAX_WGE_STEPS: u32 = 50;

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
    /// A WGE view's training run, re-run from its recipe and evaluated greedily (view `wge`).
    Workflows(WgeRecipe),
}

/// Who made a shared demonstration: both kinds replay on their seeded page.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DemoMaker {
    Person,
    Scripted,
}

/// A demonstration as a link carries it: the actions, replayed on the task's page with `seed`
/// give back the observations the workflow was induced from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SharedDemo {
    pub by: DemoMaker,
    pub seed: u32,
    /// `train` or `test` (the page's `core.setDataMode`).
    pub data_mode: String,
    pub actions: Vec<Action>,
}

/// What happened in a WGE run before exploration episode `at` (0: before the first), in order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum WgeEvent {
    /// The next of the recipe's demonstrations was added.
    Demo,
    /// DOMNet starts (built afresh when there is none) or stops learning from exploration.
    NeuralOn,
    NeuralOff,
    /// DOMNet was judged greedily on this many held-out seeds (its vocabularies grow by what
    /// those pages show, so the judging is part of the run).
    Judge(u32),
    /// The page was reloaded: both policies went through their saved form (the workflow
    /// policy's JSON, DOMNet's checkpoint and Adam moments; DOMNet's replay starts empty).
    Reload,
    /// DOMNet's saved checkpoint could not be resumed after a reload: it was dropped.
    NeuralDropped,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WgeTimed {
    pub at: u32,
    pub event: WgeEvent,
}

/// The sender's greedy successes on the evaluation seeds, which the receiver's re-run is held to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WgeResult {
    pub workflow: u32,
    /// DOMNet's, when the run trained one.
    pub neural: Option<u32>,
}

/// Everything that decides a WGE view's trained policies, so opening the link trains them again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WgeRecipe {
    pub demos: Vec<SharedDemo>,
    /// The workflow policy's random seed.
    pub policy_seed: u64,
    /// Exploration episode k has seed `first_seed + k`.
    pub first_seed: u32,
    pub episodes: u32,
    pub events: Vec<WgeTimed>,
    pub eval_seeds: Vec<u32>,
    pub sender: WgeResult,
    /// Actions per episode of both policies (`wge::session::max_steps_of` of the task when the
    /// run began); absent in links made before the view followed the task's cap, which ran
    /// `wge::session::LEGACY_MAX_STEPS`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<u32>,
    /// How DOMNet read words (absent: learned, as every link made before the view offered GloVe).
    #[serde(default, skip_serializing_if = "Words::is_learned")]
    pub words: Words,
}

/// How DOMNet reads words in a WGE run, as the view offers it (the benchmark's `WGE_WORDS=glove`
/// and `WGE_ALIGN=similar`; `NeuralConfig::reading_words` turns it into settings): one setting a
/// session, a saved view and a share link carry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Words {
    /// Learned word embeddings (`WordEmbedding::Learned`, the default).
    #[default]
    Learned,
    /// The shipped GloVe 6B 50-d vectors held fixed (`WordEmbedding::Glove6b50d`).
    Glove,
    /// GloVe as above, and an element aligned with a field by its words' cosine too
    /// (`align_similar`, ours): click-checkboxes-soft's synonyms.
    GloveCosine,
}

impl Words {
    /// Whether it needs the shipped word-vector table.
    pub fn needs_vectors(self) -> bool {
        self != Words::Learned
    }

    pub fn is_learned(&self) -> bool {
        *self == Words::Learned
    }

    /// From its name (`learned`, `glove`, `glove_cosine`), or why not.
    pub fn from_name(name: &str) -> Result<Self, String> {
        serde_json::from_value(serde_json::Value::String(name.into()))
            .map_err(|_| format!("DOMNet reads words as \"learned\", \"glove\" or \"glove_cosine\", not \"{name}\""))
    }
}

impl WgeRecipe {
    fn validate(&self) -> Result<(), ShareError> {
        let bad = |m: String| Err(ShareError(m));
        if self.demos.is_empty() || self.demos.len() > MAX_WGE_DEMOS {
            return bad(format!("it carries {} demonstrations (1 to {MAX_WGE_DEMOS})", self.demos.len()));
        }
        for (i, d) in self.demos.iter().enumerate() {
            if d.actions.is_empty() || d.actions.len() > MAX_ACTIONS {
                return bad(format!("its demonstration #{} has {} actions (1 to {MAX_ACTIONS})", i + 1, d.actions.len()));
            }
            if d.actions.iter().filter_map(Action::text).any(|t| t.chars().count() > MAX_TEXT) {
                return bad("it types an overly long text".into());
            }
            if let Some(e) = d.actions.iter().find_map(|a| a.check().err()) {
                return bad(format!("its demonstration #{} has an impossible action ({e})", i + 1));
            }
            if !matches!(d.data_mode.as_str(), "train" | "test") {
                return bad(format!("its demonstration #{} names an unknown data mode", i + 1));
            }
        }
        if self.episodes > MAX_WGE_EPISODES {
            return bad(format!("it asks for {} exploration episodes (at most {MAX_WGE_EPISODES})", self.episodes));
        }
        if let Some(m) = self.max_steps
            && !(1..=MAX_WGE_STEPS).contains(&m)
        {
            return bad(format!("it caps episodes at {m} actions (1 to {MAX_WGE_STEPS})"));
        }
        if self.events.len() > MAX_WGE_EVENTS {
            return bad(format!("its run lists {} events (at most {MAX_WGE_EVENTS})", self.events.len()));
        }
        if self.events.windows(2).any(|w| w[1].at < w[0].at) || self.events.iter().any(|e| e.at > self.episodes) {
            return bad("its run's events are out of order".into());
        }
        let demo_events = self.events.iter().filter(|e| e.event == WgeEvent::Demo).count();
        if demo_events != self.demos.len() {
            return bad(format!("its run adds {demo_events} demonstrations but it carries {}", self.demos.len()));
        }
        if self.episodes > 0 && self.events.first().is_none_or(|e| e.at > 0 || e.event != WgeEvent::Demo) {
            return bad("its run explores before any demonstration".into());
        }
        if let Some(WgeTimed { event: WgeEvent::Judge(n), .. }) =
            self.events.iter().find(|e| matches!(e.event, WgeEvent::Judge(n) if n == 0 || n as usize > MAX_WGE_EVAL_SEEDS))
        {
            return bad(format!("it judges DOMNet on {n} seeds (1 to {MAX_WGE_EVAL_SEEDS})"));
        }
        if self.eval_seeds.is_empty() || self.eval_seeds.len() > MAX_WGE_EVAL_SEEDS {
            return bad(format!("it lists {} evaluation seeds (1 to {MAX_WGE_EVAL_SEEDS})", self.eval_seeds.len()));
        }
        let n = self.eval_seeds.len() as u32;
        let trains_neural = self.events.iter().any(|e| e.event == WgeEvent::NeuralOn);
        // A run that trained DOMNet may have lost it (a damaged checkpoint after a reload).
        if self.sender.workflow > n || self.sender.neural.is_some_and(|k| k > n) || (self.sender.neural.is_some() && !trains_neural) {
            return bad("its recorded result does not fit its run".into());
        }
        Ok(())
    }
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
        let encoded = fragment.split('&').find_map(|kv| kv.strip_prefix("s=")).ok_or_else(|| ShareError("it has no lab state in it".into()))?;
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
        if !matches!(self.view.as_str(), "watch" | "train" | "play" | "design" | "wge") {
            return Err(ShareError(format!("it asks for an unknown view \"{}\"", self.view)));
        }
        // A WGE run is the WGE view's, on one of the lab's own tasks or a real MiniWoB++ page (its
        // demonstrations replay there).
        if (self.view == "wge") != matches!(self.replay, Some(Replay::Workflows(_))) {
            return Err(ShareError("a WGE view's link carries a WGE run, and only it does".into()));
        }
        if self.view == "wge" && !matches!(self.task, TaskSpec::Builtin { .. }) && !self.task.is_miniwob() {
            return Err(ShareError("a WGE run is on one of the lab's own tasks or a real MiniWoB++ page".into()));
        }
        // The one check every task from outside the lab's own code gets (`TaskSpec::check_untrusted`).
        self.task.check_untrusted().map_err(|e| {
            ShareError(match e {
                EnvError::RefusedTask(why) => why,
                e => e.to_string(),
            })
        })?;
        if let Some(cfg) = &self.config {
            cfg.validate().map_err(|e| ShareError(format!("its agent settings are invalid: {e}")))?;
        }
        match &self.replay {
            Some(Replay::Episode { actions, .. }) => {
                if actions.len() > MAX_ACTIONS {
                    return Err(ShareError(format!("its episode has {} actions (at most {MAX_ACTIONS})", actions.len())));
                }
                for a in actions {
                    if let Some(t) = a.text()
                        && t.chars().count() > MAX_TEXT
                    {
                        return Err(ShareError("it types an overly long text".into()));
                    }
                    a.check().map_err(|e| ShareError(format!("its episode has an impossible action ({e})")))?;
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
            Some(Replay::Workflows(recipe)) => recipe.validate()?,
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
            replay: Some(Replay::Episode { actions: vec![Action::Type(5, "Cheree ü".into()), Action::Click(6)], raw_reward: Some(1.0) }),
        }
    }

    #[test]
    fn round_trips_through_a_fragment() {
        let s = episode();
        let frag = s.encode();
        assert!(frag.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_=s".contains(&b)), "URL-safe: {frag}");
        assert_eq!(ShareState::decode(&format!("#{frag}"), &[]).unwrap(), s);
        let ckpt = ShareState { replay: Some(Replay::Checkpoint { agent: "click-test".into(), seeds: (1..=10).collect() }), ..episode() };
        assert_eq!(ShareState::decode(&ckpt.encode(), &["click-test".into()]).unwrap(), ckpt);
    }

    #[test]
    fn generated_sites_travel_as_designs() {
        let design = crate::gminiwob::test_sites::test_site("shopping", 3).unwrap();
        let s =
            ShareState { view: "design".into(), task: TaskSpec::generated("shopping-3", design).unwrap(), config: None, replay: None, ..episode() };
        assert_eq!(ShareState::decode(&s.encode(), &[]).unwrap(), s);
        // A tampered design is refused with the design's own message.
        let json = serde_json::to_string(&s).unwrap().replace("\"action\":[29,", "\"action\":[99,");
        let err = ShareState::decode(&format!("s={}", b64_encode(json.as_bytes())), &[]).unwrap_err().to_string();
        assert!(err.contains("99 is not a primitive index"), "{err}");
        let named = serde_json::to_string(&s).unwrap().replace("shopping-3", "<b>x</b>");
        let err = ShareState::decode(&format!("s={}", b64_encode(named.as_bytes())), &[]).unwrap_err().to_string();
        assert!(err.contains("generated site's name"), "{err}");
    }

    fn wge() -> ShareState {
        let demo = |seed| SharedDemo {
            by: DemoMaker::Scripted,
            seed,
            data_mode: "train".into(),
            actions: vec![Action::Type(3, "kanesha".into()), Action::Click(6)],
        };
        let at = |at, event| WgeTimed { at, event };
        ShareState {
            v: SHARE_VERSION,
            view: "wge".into(),
            task: TaskSpec::builtin("login-user").unwrap(),
            seed: 1,
            config: None,
            replay: Some(Replay::Workflows(WgeRecipe {
                demos: vec![demo(1), demo(2)],
                policy_seed: 1,
                first_seed: 100,
                episodes: 30,
                events: vec![
                    at(0, WgeEvent::Demo),
                    at(0, WgeEvent::Demo),
                    at(0, WgeEvent::NeuralOn),
                    at(10, WgeEvent::Judge(5)),
                    at(20, WgeEvent::Reload),
                ],
                eval_seeds: (0..10).map(|k| (1 << 30) + k).collect(),
                sender: WgeResult { workflow: 7, neural: Some(2) },
                max_steps: Some(10),
                words: Words::Learned,
            })),
        }
    }

    #[test]
    fn wge_runs_round_trip_and_old_links_still_open() {
        let s = wge();
        assert_eq!(ShareState::decode(&s.encode(), &[]).unwrap(), s);
        // A link made before WGE runs existed (format 1, no view) decodes as it did.
        let old = format!("s={}", b64_encode(br#"{"v":1,"task":{"source":"builtin","name":"click-test"},"seed":3,"replay":{"episode":{"actions":[{"click":4}],"raw_reward":1.0}}}"#));
        let st = ShareState::decode(&old, &[]).unwrap();
        assert_eq!((st.view.as_str(), st.seed), ("watch", 3));
        assert_eq!(st.replay, Some(Replay::Episode { actions: vec![Action::Click(4)], raw_reward: Some(1.0) }));
        // A WGE link made before runs carried their cap opens without one (the re-run takes 10).
        let mut legacy = serde_json::to_value(&s).unwrap();
        legacy["replay"]["workflows"].as_object_mut().unwrap().remove("max_steps").expect("the link names its cap");
        let st = ShareState::decode(&format!("s={}", b64_encode(legacy.to_string().as_bytes())), &[]).unwrap();
        let Some(Replay::Workflows(r)) = st.replay else { panic!("a WGE run") };
        assert_eq!(r.max_steps, None);
        // A run whose DOMNet read words through GloVe says so; one that learned them, as before.
        assert!(!s.encode().is_empty() && !serde_json::to_string(&s).unwrap().contains("words"));
        let mut glove = wge();
        let Some(Replay::Workflows(r)) = &mut glove.replay else { unreachable!() };
        r.words = Words::GloveCosine;
        assert_eq!(ShareState::decode(&glove.encode(), &[]).unwrap(), glove);
        let mut bad = serde_json::to_value(&glove).unwrap();
        bad["replay"]["workflows"]["words"] = "bert".into();
        assert!(ShareState::decode(&format!("s={}", b64_encode(bad.to_string().as_bytes())), &[]).is_err());
    }

    #[test]
    fn bad_wge_runs_are_refused_with_what_is_wrong() {
        let err = |s: &ShareState| ShareState::decode(&s.encode(), &[]).unwrap_err().to_string();
        let with = |f: &dyn Fn(&mut WgeRecipe)| {
            let mut s = wge();
            let Some(Replay::Workflows(r)) = &mut s.replay else { unreachable!() };
            f(r);
            s
        };
        assert!(err(&with(&|r| r.demos.clear())).contains("0 demonstrations (1 to 20)"));
        assert!(
            err(&with(&|r| {
                r.demos = vec![r.demos[0].clone(); 21];
                r.events = vec![WgeTimed { at: 0, event: WgeEvent::Demo }; 21];
            }))
            .contains("21 demonstrations")
        );
        assert!(err(&with(&|r| r.demos[1].actions = vec![Action::Click(1); MAX_ACTIONS + 1])).contains("#2 has 501 actions"));
        assert!(err(&with(&|r| r.demos[0].actions.clear())).contains("#1 has 0 actions"));
        assert!(err(&with(&|r| r.demos[0].actions = vec![Action::Type(1, "x".repeat(MAX_TEXT + 1))])).contains("overly long text"));
        assert!(err(&with(&|r| r.demos[0].data_mode = "<script>".into())).contains("unknown data mode"));
        assert!(err(&with(&|r| r.episodes = MAX_WGE_EPISODES + 1)).contains("1001 exploration episodes (at most 1000)"));
        assert!(err(&with(&|r| r.max_steps = Some(0))).contains("caps episodes at 0 actions (1 to 50)"));
        assert!(err(&with(&|r| r.max_steps = Some(u32::MAX))).contains("caps episodes at 4294967295 actions"));
        assert!(err(&with(&|r| r.events.push(WgeTimed { at: 5, event: WgeEvent::NeuralOff }))).contains("out of order"));
        assert!(err(&with(&|r| r.events.push(WgeTimed { at: 31, event: WgeEvent::NeuralOff }))).contains("out of order"));
        assert!(
            err(&with(&|r| r.events.extend(vec![WgeTimed { at: 30, event: WgeEvent::NeuralOff }; MAX_WGE_EVENTS]))).contains("events (at most 400)")
        );
        assert!(
            err(&with(&|r| {
                r.events.remove(0);
            }))
            .contains("adds 1 demonstrations but it carries 2")
        );
        assert!(err(&with(&|r| r.events[3].event = WgeEvent::Judge(0))).contains("on 0 seeds"));
        assert!(err(&with(&|r| r.eval_seeds.clear())).contains("0 evaluation seeds"));
        assert!(err(&with(&|r| r.eval_seeds = (0..51).collect())).contains("51 evaluation seeds"));
        assert!(err(&with(&|r| r.sender.workflow = 11)).contains("recorded result"));
        assert!(
            err(&with(&|r| {
                r.events.retain(|e| e.event != WgeEvent::NeuralOn);
            }))
            .contains("recorded result"),
            "a DOMNet result needs a run that trained DOMNet"
        );
        // Demonstrations must come before exploration.
        assert!(
            err(&with(&|r| {
                r.events.retain(|e| e.event != WgeEvent::Demo);
                r.events.push(WgeTimed { at: 30, event: WgeEvent::Demo });
                r.events.push(WgeTimed { at: 30, event: WgeEvent::Demo });
            }))
            .contains("explores before any demonstration")
        );
        // Unknown tasks, other pages, and a WGE run in another view are refused.
        assert!(err(&ShareState { task: TaskSpec::Builtin { name: "nope".into() }, ..wge() }).contains("unknown task"));
        let inline = ShareState { task: TaskSpec::Inline { name: "x".into(), html: "<script>alert(1)</script>".into() }, ..wge() };
        assert!(err(&inline).contains("own tasks"));
        // A real MiniWoB++ page is one; any other folder's page is not.
        ShareState { task: TaskSpec::miniwob("login-user").unwrap(), ..wge() }.validate(&[]).unwrap();
        let other = ShareState { task: TaskSpec::External { base_url: "pages/".into(), name: "login-user".into() }, ..wge() };
        assert!(err(&other).contains("real MiniWoB++ page"));
        assert!(err(&ShareState { view: "watch".into(), ..wge() }).contains("only it does"));
        assert!(err(&ShareState { replay: None, ..wge() }).contains("carries a WGE run"));
        // Unknown fields anywhere in the recipe are refused, as elsewhere.
        let json = serde_json::to_string(&wge()).unwrap().replace("\"policy_seed\"", "\"html\":\"<b>\",\"policy_seed\"");
        assert!(ShareState::decode(&format!("s={}", b64_encode(json.as_bytes())), &[]).unwrap_err().to_string().contains("malformed"));
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
        // An external page only in a plain folder under the allowed prefixes, with a plain name.
        let ext = |base: &str, name: &str| ShareState { task: TaskSpec::External { base_url: base.into(), name: name.into() }, ..episode() };
        assert!(err(&frag(&ext("tasks/", "click-test"))).contains("not one the lab opens from links"));
        assert!(err(&frag(&ext("//evil.example/miniwob/html/", "x"))).contains("another site"));
        assert!(err(&frag(&ext("miniwob/html/../../", "index"))).contains("'..' segment"));
        assert!(err(&frag(&ext("miniwob/html/miniwob/", "../../index"))).contains("not a plain file name"));
        let miniwob = ext("/miniwob/html/miniwob/", "click-test");
        assert_eq!(ShareState::decode(&frag(&miniwob), &[]).unwrap(), miniwob);
        let long = ShareState { replay: Some(Replay::Episode { actions: vec![Action::Click(1); 501], raw_reward: None }), ..episode() };
        assert!(err(&frag(&long)).contains("501 actions"));
        // MiniWoB++'s pointer and key actions travel too; one that cannot be performed is refused.
        let pointer = ShareState {
            replay: Some(Replay::Episode {
                actions: vec![Action::Drag(vec![(10, 60), (90, 120)]), Action::PressKey("C-c".into()), Action::Wait(300)],
                raw_reward: Some(1.0),
            }),
            ..episode()
        };
        assert_eq!(ShareState::decode(&frag(&pointer), &[]).unwrap(), pointer);
        let bad_key =
            ShareState { replay: Some(Replay::Episode { actions: vec![Action::PressKey("<Hyper>".into())], raw_reward: None }), ..episode() };
        assert!(err(&frag(&bad_key)).contains("impossible action (unknown key <Hyper>"), "{}", err(&frag(&bad_key)));
        let forever = ShareState { replay: Some(Replay::Episode { actions: vec![Action::Wait(3_600_000)], raw_reward: None }), ..episode() };
        assert!(err(&frag(&forever)).contains("a wait of 3600000 ms"));
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

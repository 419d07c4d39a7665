//! The WGE view's session as it is kept: the demonstrations of one task (each with the
//! observations it was induced from) and their lattices, the workflow policy over them, the
//! exploration tally and the run's log, written to the browser's store as JSON and read back as
//! any file is, checked (`State::restore_with`). The view's edge (`web::wge`) drives it; this
//! room only keeps it, so it is tested and fuzzed natively.

use serde::{Deserialize, Serialize};

use crate::demo::{DemoStep, MAX_DEMO_BYTES};
use crate::env::Observation;
use crate::share::{WgeEvent, WgeTimed};
use crate::task::TaskSpec;
use crate::wge::config::{WgeConfig, max_steps_for, utterance_goal_for};
use crate::wge::demo_import::check_demo_size;
use crate::wge::domnet_config::{MAX_EPISODE_STEPS, NeuralConfig, Words};
use crate::wge::induction::{InductionConfig, WorkflowLattice, induce};
use crate::wge::policy::WorkflowPolicy;

/// Version of the view's saved state; a record of another version is refused and kept.
pub const WGE_VIEW_FORMAT: u32 = 1;
/// Most demonstrations one session holds (the paper learns from ten per task).
pub const MAX_DEMOS: usize = 50;
/// The workflow policy's random seed (its demonstration and step choices); fixed, so a session's
/// exploration is reproducible from its demonstrations and episode seeds.
pub const POLICY_SEED: u64 = 1;
/// The success rate the view charts is over this many latest exploration episodes.
pub const SUCCESS_WINDOW: usize = 20;
/// The spec of a session's task, named as `TaskSpec::label` names it: `click-tab` (the lab's
/// page) or `miniwob/click-tab` (the real MiniWoB++ page).
pub fn spec_of(task: &str) -> Result<TaskSpec, String> {
    TaskSpec::from_name(task).map_err(|_| format!("the lab has no task \"{task}\""))
}

/// The actions per episode of a new run on `task`: the authors' cap for its page
/// (`wge::config::max_steps_for`, the benchmark's), so the view's goals fit in an episode as the
/// paper's do (click-checkboxes-large needs up to 13 actions).
pub fn max_steps_of(task: &str) -> u32 {
    spec_of(task).map_or(WgeConfig::default().max_steps, |s| max_steps_for(s.name()))
}

/// The view's cap for every task before it followed the task's; a share link that names no cap
/// was made then, and re-runs with it.
pub const LEGACY_MAX_STEPS: u32 = 10;

/// Where a demonstration came from: a person in the app (Play & record's recorder), the lab's
/// scripted oracle (not a person: labelled so everywhere), or a file in the published format
/// (people on Mechanical Turk, Liu et al. 2018).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DemoSource {
    Person,
    Scripted,
    Imported,
}

/// One demonstration as the view keeps it: the observation before each action and the action,
/// the page after the last one when known, and the outcome. Names a task; never carries a page.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Entry {
    pub source: DemoSource,
    /// A file name, or "seed N" for one made in the app.
    pub label: String,
    pub task: String,
    pub steps: Vec<DemoStep>,
    pub final_observation: Option<Observation>,
    pub reward: f64,
    pub raw_reward: f64,
    /// Where a demonstration made in the app was played (its actions replay there, so a share
    /// link can carry it); `None` for imported files and sessions saved before it was kept.
    #[serde(default)]
    pub played: Option<Played>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Played {
    pub seed: u32,
    pub data_mode: String,
    /// False when the recorder could not say exactly what the person did (a replay may differ).
    pub exact: bool,
}

impl Entry {
    /// Whether the session can take it: sizes first (before anything reads its pages), then its
    /// pages' structure, a task of the lab's, and at least one action.
    pub fn check(&self) -> Result<(), String> {
        check_demo_size(self.steps.len(), self.steps.iter().map(|s| &s.observation).chain(self.final_observation.as_ref()))?;
        spec_of(&self.task)?;
        if self.steps.is_empty() {
            return Err("it has no actions".into());
        }
        Ok(())
    }
}

/// How exploration has gone: episodes run, successes, and the latest outcomes.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Tally {
    pub episodes: u32,
    pub successes: u32,
    /// Success of the latest episodes (at most [`SUCCESS_WINDOW`]).
    pub recent: Vec<bool>,
    /// The seed the next exploration episode takes.
    pub next_seed: u32,
}

impl Tally {
    pub fn record(&mut self, success: bool) {
        self.episodes += 1;
        self.successes += success as u32;
        self.recent.push(success);
        if self.recent.len() > SUCCESS_WINDOW {
            self.recent.remove(0);
        }
    }
    pub fn recent_rate(&self) -> Option<f64> {
        (!self.recent.is_empty()).then(|| self.recent.iter().filter(|s| **s).count() as f64 / self.recent.len() as f64)
    }
}

#[derive(Serialize, Deserialize)]
pub struct Saved {
    pub format: u32,
    pub task: Option<String>,
    pub demos: Vec<Entry>,
    pub tally: Tally,
    /// The workflow policy's weights and baselines (`WorkflowPolicy::to_json`); absent in
    /// sessions saved before they were kept.
    #[serde(default)]
    pub policy: Option<String>,
    /// What decided the policies since they were last started afresh (absent in older saves:
    /// such a run cannot be shared).
    #[serde(default)]
    pub run: Option<RunLog>,
    /// DOMNet's state; its checkpoint and Adam moments are stored beside this JSON, as bytes.
    #[serde(default)]
    pub neural: Option<SavedNeural>,
    /// How DOMNet reads words (absent in sessions saved before the view offered GloVe: learned).
    #[serde(default, skip_serializing_if = "Words::is_learned")]
    pub words: Words,
}

#[derive(Clone, Serialize, Deserialize)]
pub struct SavedNeural {
    /// Whether it was learning from exploration, and the task it learned.
    pub on: bool,
    pub task: Option<String>,
}

/// The run's history as a share link carries it ([`WgeRecipe`]): the first exploration seed
/// (episode k has `first_seed + k`) and, in order, what happened before which episode.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RunLog {
    pub first_seed: Option<u32>,
    pub events: Vec<WgeTimed>,
}

pub struct State {
    pub task: Option<String>,
    pub demos: Vec<Entry>,
    /// Each demonstration's induced lattice (induced once: the policy starts afresh from them).
    pub lattices: Vec<WorkflowLattice>,
    /// The workflow policy over the demonstrations, in their order (it induces their lattices).
    pub policy: WorkflowPolicy,
    pub policy_seed: u64,
    pub tally: Tally,
    /// `None` once something happened that a link cannot say (the seeds changed mid-run, the
    /// saved weights did not fit); starting the policy afresh starts a new log.
    pub run: Option<RunLog>,
    /// How DOMNet reads words in this session (`Words`; a share link carries it).
    pub words: Words,
}

impl Default for State {
    fn default() -> Self {
        State::with_seed(POLICY_SEED)
    }
}

impl State {
    pub fn with_seed(policy_seed: u64) -> Self {
        State {
            task: None,
            demos: Vec::new(),
            lattices: Vec::new(),
            policy: WorkflowPolicy::new(WgeConfig::default(), policy_seed),
            policy_seed,
            tally: Tally::default(),
            run: Some(RunLog::default()),
            words: Words::Learned,
        }
    }

    /// The actions per episode of this run (the workflow policy's, and DOMNet's in the view).
    pub fn max_steps(&self) -> u32 {
        self.policy.config.max_steps
    }

    /// DOMNet's settings in the view for this run: the defaults, reading the utterance alone on
    /// the natural-language tasks (`wge::config::utterance_goal_for`, as the benchmark does; judged
    /// by the page's name, so `miniwob/<name>` too), its episodes capped as the workflow policy's,
    /// its words read as the session says (`words`).
    pub fn domnet_config(&self) -> NeuralConfig {
        let page = self.task.as_deref().and_then(|t| spec_of(t).ok());
        (NeuralConfig {
            utterance_goal: page.is_some_and(|p| utterance_goal_for(p.name())),
            max_episode_steps: self.max_steps(),
            ..NeuralConfig::default()
        })
        .reading_words(self.words)
    }

    pub fn log(&mut self, event: WgeEvent) {
        let at = self.tally.episodes;
        if let Some(run) = &mut self.run {
            run.events.push(WgeTimed { at, event });
        }
    }
}

impl State {
    /// Whether the session can take `e` ("label: why" when not): it is sound and of the
    /// session's task, and there is room.
    pub fn can_take(&self, e: &Entry) -> Result<(), String> {
        self.why_not(e).map_err(|why| format!("{}: {why}", e.label))
    }

    pub fn why_not(&self, e: &Entry) -> Result<(), String> {
        e.check()?;
        if let Some(t) = &self.task
            && !self.demos.is_empty()
            && *t != e.task
        {
            return Err(format!(
                "it is a demonstration of {}, but this session learns {t}: clear the demonstrations or pick {} first",
                e.task, e.task
            ));
        }
        if self.demos.len() >= MAX_DEMOS {
            return Err(format!("a session holds at most {MAX_DEMOS} demonstrations"));
        }
        Ok(())
    }

    /// Adds a demonstration of the session's task (the first one sets it), inducing its lattice
    /// here (the app's own recordings: bounded by the reader's pages).
    pub fn add(&mut self, e: Entry) -> Result<usize, String> {
        self.can_take(&e)?;
        let lattice = induce(&e.steps, e.final_observation.as_ref(), &self.policy.config.induction);
        self.add_induced(e, lattice)
    }

    /// Adds a demonstration whose lattice was induced already (with the policy's settings).
    pub fn add_induced(&mut self, e: Entry, lattice: WorkflowLattice) -> Result<usize, String> {
        self.can_take(&e)?;
        // A new session's first demonstration names the task, and so the run's cap (a re-run of a
        // link sets the task, and the link's cap, before its demonstrations come).
        if self.task.is_none() && self.tally.episodes == 0 {
            self.policy.config.max_steps = max_steps_of(&e.task);
        }
        self.task = Some(e.task.clone());
        self.policy.add_induced(&e.steps, lattice.clone());
        self.demos.push(e);
        self.lattices.push(lattice);
        self.log(WgeEvent::Demo);
        Ok(self.demos.len() - 1)
    }

    pub fn remove(&mut self, index: usize) {
        if index < self.demos.len() {
            self.demos.remove(index);
            self.lattices.remove(index);
        }
    }

    pub fn clear(&mut self) {
        self.demos.clear();
        self.lattices.clear();
        self.task = None;
    }

    /// A fresh policy over the current demonstrations, and exploration counted from zero.
    pub fn reset_policy(&mut self) {
        let max_steps = self.task.as_deref().map_or(WgeConfig::default().max_steps, max_steps_of);
        self.policy = WorkflowPolicy::new(WgeConfig { max_steps, ..WgeConfig::default() }, self.policy_seed);
        for (e, lattice) in self.demos.iter().zip(&self.lattices) {
            self.policy.add_induced(&e.steps, lattice.clone());
        }
        self.tally = Tally { next_seed: self.tally.next_seed, ..Tally::default() };
        let at = WgeTimed { at: 0, event: WgeEvent::Demo };
        self.run = Some(RunLog { first_seed: None, events: vec![at; self.demos.len()] });
    }
}

/// Largest saved session read, and so the largest one written (`State::save` refuses to write
/// one that `State::restore_with` would refuse to read).
pub const MAX_SESSION_BYTES: usize = 2 * MAX_DEMO_BYTES;

impl State {
    /// The session as JSON text for the store, with what is known of DOMNet (its checkpoint is
    /// stored beside it, as bytes). A session larger than [`MAX_SESSION_BYTES`] is refused with
    /// what to do: written, it could not be read back.
    pub fn save(&self, neural: Option<SavedNeural>) -> Result<String, String> {
        let saved = Saved {
            format: WGE_VIEW_FORMAT,
            task: self.task.clone(),
            demos: self.demos.clone(),
            tally: self.tally.clone(),
            policy: Some(self.policy.to_json()),
            run: self.run.clone(),
            neural,
            words: self.words,
        };
        let json = serde_json::to_string(&saved).map_err(|e| e.to_string())?;
        if json.len() > MAX_SESSION_BYTES {
            return Err(format!(
                "the session is {} MB, over the {} MB this lab reads back, so it was not saved (the last save stays): remove a demonstration to save it again",
                json.len() / 1_000_000,
                MAX_SESSION_BYTES / 1_000_000
            ));
        }
        Ok(json)
    }

    /// A saved session read back, checked as any file is: a record of another version or a
    /// damaged one is refused with a message. Each saved demonstration is checked as a file is
    /// (sizes first), its lattice induced again by `induce_with` (the page's induces in slices
    /// that let the browser in), and the saved weights kept only when they fit (the `bool`).
    /// DOMNet's saved state is given back for the caller to restore from its checkpoint.
    pub async fn restore_with(
        json: String,
        mut induce_with: impl AsyncFnMut(&[DemoStep], Option<&Observation>, &InductionConfig) -> WorkflowLattice,
    ) -> Result<(State, bool, Option<SavedNeural>), String> {
        if json.len() > MAX_SESSION_BYTES {
            return Err("the saved WGE session is too large to be one of this lab's".into());
        }
        let saved: Saved = serde_json::from_str(&json).map_err(|e| format!("the saved WGE session is damaged: {e}"))?;
        drop(json);
        if saved.format != WGE_VIEW_FORMAT {
            return Err(format!("the saved WGE session has format {} (this lab reads {WGE_VIEW_FORMAT})", saved.format));
        }
        let mut fresh = State::default();
        let damaged = |why: String| format!("the saved WGE session is damaged: {why}");
        for e in saved.demos {
            fresh.can_take(&e).map_err(damaged)?;
            let lattice = induce_with(&e.steps, e.final_observation.as_ref(), &fresh.policy.config.induction).await;
            fresh.add_induced(e, lattice).map_err(damaged)?;
        }
        fresh.tally = saved.tally;
        fresh.words = saved.words;
        if fresh.tally.recent.len() > SUCCESS_WINDOW || fresh.tally.successes > fresh.tally.episodes {
            return Err("the saved WGE session is damaged: its exploration counts disagree".into());
        }
        fresh.task = fresh.task.or(saved.task.filter(|t| spec_of(t).is_ok()));
        // The saved policy keeps its own cap (10 in sessions saved before the view followed the
        // task's): its run goes on as it began. A cap no lab writes is not resumed.
        let learned = saved.policy.and_then(|text| WorkflowPolicy::from_json(&text).ok()).filter(|p| {
            (1..=MAX_EPISODE_STEPS as u32).contains(&p.config.max_steps)
                && p.demos().len() == fresh.policy.demos().len()
                && p.demos().iter().zip(fresh.policy.demos()).all(|(a, b)| a.lattice == b.lattice && a.field_keys == b.field_keys)
        });
        let resumed = learned.is_some();
        if let Some(p) = learned {
            fresh.policy = p;
        }
        // The run goes on from its saved log, through this reload; initial weights in place of
        // learned ones are a history no link can say.
        fresh.run = saved.run.filter(|_| resumed || fresh.tally.episodes == 0);
        fresh.log(WgeEvent::Reload);
        Ok((fresh, resumed, saved.neural))
    }

    /// [`Self::restore_with`] inducing each lattice at once (native callers, tests, fuzzing).
    pub fn restore(json: &str) -> Result<(State, bool, Option<SavedNeural>), String> {
        crate::util::block_on(Self::restore_with(json.to_string(), async |steps, last, cfg| induce(steps, last, cfg)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::{Action, Environment};
    use crate::sim::SimEnv;
    use crate::util::block_on;

    #[test]
    fn the_natural_language_rule_reads_the_page_name_of_either_label() {
        // The WGE view decides DOMNet's utterance goal from the session's task label.
        for label in ["email-inbox-nl", "miniwob/email-inbox-nl-turk"] {
            assert!(crate::wge::config::utterance_goal_for(spec_of(label).unwrap().name()), "{label}");
        }
        assert!(!crate::wge::config::utterance_goal_for(spec_of("miniwob/email-inbox").unwrap().name()));
    }

    /// A one-click demonstration of click-test (observed on the simulator's page), its label
    /// padded to `pad` characters (the cheapest way to a large session).
    fn entry(pad: usize) -> Entry {
        let mut env = SimEnv::new(None);
        let obs = block_on(env.reset(&SimEnv::spec("sim-click"), 1)).unwrap();
        let button = obs.dom.nodes.iter().find(|n| n.tag == "BUTTON").expect("a button").r#ref;
        Entry {
            source: DemoSource::Scripted,
            label: format!("seed 1{}", " ".repeat(pad)),
            task: "click-test".into(),
            steps: vec![DemoStep { observation: obs, action: Action::Click(button) }],
            final_observation: None,
            reward: 1.0,
            raw_reward: 1.0,
            played: Some(Played { seed: 1, data_mode: "train".into(), exact: true }),
        }
    }

    #[test]
    fn a_session_round_trips_and_is_never_saved_larger_than_it_is_read() {
        let mut s = State::default();
        s.add(entry(0)).unwrap();
        let json = s.save(None).unwrap();
        let (back, resumed, neural) = State::restore(&json).unwrap();
        assert!(resumed && neural.is_none());
        assert_eq!((back.demos.len(), back.task.as_deref()), (1, Some("click-test")));
        assert_eq!(back.words, Words::Learned);
        assert!(!json.contains("\"words\""), "a session with learned words is saved as before");
        // How DOMNet reads words comes back, and decides its config.
        s.words = Words::GloveCosine;
        let (back, ..) = State::restore(&s.save(None).unwrap()).unwrap();
        assert_eq!(back.words, Words::GloveCosine);
        assert_eq!(back.domnet_config(), State { words: Words::Learned, ..back }.domnet_config().reading_words(Words::GloveCosine));
        // A session too large to read back is not written (the store keeps its last save).
        let mut big = State::default();
        big.add(entry(MAX_SESSION_BYTES)).unwrap();
        let e = big.save(None).unwrap_err();
        assert!(e.contains("over the 40 MB this lab reads back") && e.contains("remove a demonstration"), "{e}");
        assert!(State::restore(&" ".repeat(MAX_SESSION_BYTES + 1)).err().unwrap().contains("too large"));
    }

    #[test]
    fn a_run_caps_its_episodes_as_the_authors_did_for_its_task_and_a_saved_run_keeps_its_cap() {
        let of = |task: &str| {
            let mut s = State::default();
            s.add(Entry { task: task.into(), ..entry(0) }).unwrap();
            s
        };
        // The benchmark's caps (`max_steps_for`), on the lab's page and the real one alike.
        assert_eq!(of("click-test").max_steps(), 10);
        assert_eq!(of("click-checkboxes-large").max_steps(), 18);
        assert_eq!(of("miniwob/click-checkboxes-large").max_steps(), 18);
        assert_eq!(of("miniwob/social-media").max_steps(), 3);
        let mut s = of("miniwob/social-media-some");
        assert_eq!((s.max_steps(), s.domnet_config().max_episode_steps), (12, 12));
        s.reset_policy();
        assert_eq!(s.max_steps(), 12);
        let (back, resumed, _) = State::restore(&s.save(None).unwrap()).unwrap();
        assert!(resumed);
        assert_eq!(back.max_steps(), 12);

        // A session saved when every run took 10 goes on with 10, its run and weights kept; a
        // fresh start takes the task's cap.
        let mut v: serde_json::Value = serde_json::from_str(&s.save(None).unwrap()).unwrap();
        let mut policy: serde_json::Value = serde_json::from_str(v["policy"].as_str().unwrap()).unwrap();
        policy["config"]["max_steps"] = LEGACY_MAX_STEPS.into();
        v["policy"] = policy.to_string().into();
        let (mut old, resumed, _) = State::restore(&v.to_string()).unwrap();
        assert!(resumed && old.run.is_some());
        assert_eq!(old.max_steps(), 10);
        old.reset_policy();
        assert_eq!(old.max_steps(), 12);

        // A cap no lab writes is not resumed: the weights start afresh under the task's cap.
        policy["config"]["max_steps"] = u32::MAX.into();
        v["policy"] = policy.to_string().into();
        let (odd, resumed, _) = State::restore(&v.to_string()).unwrap();
        assert!(!resumed);
        assert_eq!(odd.max_steps(), 12);
    }

    #[test]
    fn a_damaged_or_foreign_session_is_refused_with_why() {
        let mut s = State::default();
        s.add(entry(0)).unwrap();
        let json = s.save(None).unwrap();
        let edit = |f: &dyn Fn(&mut serde_json::Value)| {
            let mut v: serde_json::Value = serde_json::from_str(&json).unwrap();
            f(&mut v);
            State::restore(&v.to_string()).err().expect("refused")
        };
        assert!(edit(&|v| v["format"] = 9.into()).contains("format 9"));
        assert!(edit(&|v| v["demos"][0]["task"] = "../x".into()).contains("no task \"../x\""));
        assert!(edit(&|v| v["demos"][0]["steps"] = serde_json::json!([])).contains("no actions"));
        assert!(edit(&|v| v["tally"]["successes"] = 5.into()).contains("counts disagree"));
        let many = edit(&|v| {
            let d = v["demos"][0].clone();
            v["demos"] = serde_json::Value::Array(vec![d; MAX_DEMOS + 1]);
        });
        assert!(many.contains("at most 50 demonstrations"), "{many}");
        assert!(State::restore("{").err().unwrap().contains("damaged"));
    }
}

//! What the page asks of a gMiniWoB navigator: load one from a checkpoint, judge it greedily on
//! the live DOM (the environment all reported success rates are measured on), and let a person
//! watch it act, step by step or many episodes fast, on page #0.
//!
//! Watching follows `navigator::train::rollout` with `greedy` and without growing the
//! vocabulary, as judging does, so what a person sees is what the judged figures count.

use std::collections::HashMap;

use burn::prelude::Device;
use js_sys::Promise;
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use super::app::{AgentRun, Lab, js_err, parse_task};
use super::remote::to_js;
use crate::env::{Action, EnvError, Environment, Observation, Rect, Step};
use crate::navigator::train::{Episode, JUDGE_SEEDS_FROM, NOTHING_OPEN, REPORT_SEEDS_FROM, judge, rollout};
use crate::navigator::{EpisodeMemory, NavAction, Navigator, NavigatorConfig};
use crate::runner::EpisodeResult;
use crate::task::TaskSpec;

/// The sites a person watches a navigator on use seeds from here (`WATCH_SEEDS_FROM + n` for the
/// seed box's n): training episodes count up from 0, judging starts at `JUDGE_SEEDS_FROM` (2^30)
/// and reported figures at `REPORT_SEEDS_FROM` (1.5 · 2^30, at most 2^29 of them), so a watched
/// episode is one the navigator was neither trained nor judged on.
pub const WATCH_SEEDS_FROM: u32 = 1 << 31;
const _: () = assert!(WATCH_SEEDS_FROM >= REPORT_SEEDS_FROM + (1 << 29) && REPORT_SEEDS_FROM > JUDGE_SEEDS_FROM);

/// The navigator's episode being watched, and the episodes watched so far on its task.
#[derive(Default)]
pub(crate) struct NavWatch {
    obs: Option<Observation>,
    memory: EpisodeMemory,
    episode: Option<Episode>,
    done: bool,
    /// Episodes watched to their end and how many succeeded, on `tally_task` with the navigator
    /// loaded then; a new task or navigator starts the count again.
    tally: Tally,
    tally_task: Option<String>,
}

#[derive(Clone, Copy, Default, Serialize)]
struct Tally {
    episodes: u32,
    successes: u32,
}

/// One element the navigator could act on, with the policy's probability of acting on it (summed
/// over its set-field choices and its click).
#[derive(Serialize)]
struct ElementChoice {
    r#ref: u32,
    rect: Rect,
    probability: f32,
}

/// The choice the navigator made: which element, what it does there, and how sure it was.
#[derive(Serialize)]
struct Chosen {
    /// "set" (a profile field's value into the element) or "click".
    kind: &'static str,
    r#ref: u32,
    rect: Rect,
    /// The profile field set (its key and value), for "set".
    field: Option<String>,
    value: Option<String>,
    probability: f32,
}

#[derive(Serialize)]
struct NavWatchStep {
    /// None when the navigator had no open choice (the episode ends, as in judging).
    action: Option<Action>,
    description: String,
    chosen: Option<Chosen>,
    /// Every element's probability, for the overlay's heat map.
    elements: Vec<ElementChoice>,
    /// The critic's value of the state acted in.
    value: f32,
    step: Option<Step>,
    /// The episode so far: steps, return (sum of learning rewards), and once it ended, its raw
    /// reward, reason and success (the papers' `is_task_completed`: raw reward 1).
    episode: Episode,
    done: bool,
    success: bool,
    tally: Tally,
}

/// The label a tally counts under: the task and the navigator's counters (a different checkpoint
/// has different counters).
fn tally_key(task: &TaskSpec, nav: &Navigator) -> String {
    format!("{}|{}|{}", serde_json::to_string(task).unwrap_or_default(), nav.counters.updates, nav.counters.env_steps)
}

#[wasm_bindgen]
impl Lab {
    /// The navigator's default config (`NavigatorConfig::default()`): what the Train view's
    /// fields start from, and what a training request's partial config falls back to.
    #[wasm_bindgen(js_name = defaultNavigatorConfig)]
    pub fn default_navigator_config() -> JsValue {
        to_js(&NavigatorConfig::default())
    }

    /// Checks an edited navigator config (whole or partial: fields left out take the defaults, as
    /// in a training request); returns the complete config or throws what is wrong, naming the
    /// field.
    #[wasm_bindgen(js_name = checkNavigatorConfig)]
    pub fn check_navigator_config(cfg: JsValue) -> Result<JsValue, JsValue> {
        let text: String = js_sys::JSON::stringify(&cfg).map_err(|_| js_err("bad settings: not JSON data"))?.into();
        let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| js_err(format!("bad settings: {e}")))?;
        navigator_config(value).map(|c| to_js(&c)).map_err(js_err)
    }

    /// Loads a navigator checkpoint (`.wln`) for judging and watching (CPU, inference only). A
    /// file that is not a valid navigator checkpoint is refused with a message and the current
    /// navigator stays. Returns the checkpoint's header.
    #[wasm_bindgen(js_name = loadNavigator)]
    pub fn load_navigator(&self, bytes: Vec<u8>) -> Result<JsValue, JsValue> {
        let (nav, header) = Navigator::load(&bytes, &Device::flex(), 0).map_err(js_err)?;
        let info = serde_json::json!({
            "config": header.config,
            "counters": header.counters,
            "trained_on": header.trained_on,
            "vocabulary": header.vocab.len(),
            "parameters": nav.model().parameter_count(),
        });
        *self.navigator.borrow_mut() = Some(nav);
        *self.nav_watch.borrow_mut() = NavWatch::default();
        *self.navigator_loaded.borrow_mut() = info.clone();
        Ok(to_js(&info))
    }

    /// The loaded navigator's header as `loadNavigator` returned it (null before one is loaded),
    /// so a view can tell whether another view loaded a different one since.
    #[wasm_bindgen(js_name = navigatorInfo)]
    pub fn navigator_info(&self) -> JsValue {
        to_js(&*self.navigator_loaded.borrow())
    }

    /// The site seed a watched episode uses for the seed box's `n`: apart from every seed the
    /// navigator trained or was judged on (see `WATCH_SEEDS_FROM`).
    #[wasm_bindgen(js_name = navigatorWatchSeed)]
    pub fn navigator_watch_seed(n: u32) -> u32 {
        WATCH_SEEDS_FROM.wrapping_add(n % WATCH_SEEDS_FROM)
    }

    /// The first seed of a reported judging (`judge-navigator.mjs`): apart from the seeds a run
    /// judged on to pick its best navigator (see `REPORT_SEEDS_FROM`).
    #[wasm_bindgen(js_name = navigatorReportSeed)]
    pub fn navigator_report_seed() -> u32 {
        REPORT_SEEDS_FROM
    }

    /// Starts an episode of `task` with `seed` on page #0 for watching the loaded navigator act
    /// greedily (generated sites end at their own step limit); resolves to the first observation.
    #[wasm_bindgen(js_name = navigatorReset)]
    pub fn navigator_reset(&self, task: JsValue, seed: u32) -> Promise {
        let (slots, holder, watch) = (self.envs.clone(), self.navigator.clone(), self.nav_watch.clone());
        future_to_promise(async move {
            let spec = parse_task(task).map_err(js_err)?;
            let key = match holder.borrow().as_ref() {
                Some(nav) => tally_key(&spec, nav),
                None => return Err(js_err("no navigator is loaded: pick the shipped one or load a .wln file")),
            };
            let mut env = slots.take(0).map_err(js_err)?;
            let result = env.reset(&spec, seed).await;
            slots.put(0, env);
            let obs = result.map_err(js_err)?;
            let mut w = watch.borrow_mut();
            if w.tally_task.as_deref() != Some(key.as_str()) {
                w.tally = Tally::default();
                w.tally_task = Some(key);
            }
            w.obs = Some(obs.clone());
            w.memory = EpisodeMemory::default();
            w.episode = Some(Episode { seed, steps: 0, ret: 0.0, discounted: 0.0, raw_reward: 0.0, reason: None });
            w.done = false;
            Ok(to_js(&obs))
        })
    }

    /// The navigator's next action in the watched episode (its most likely open choice),
    /// performed on the page; with what it chose, every element's probability, and the episode
    /// and the tally so far.
    #[wasm_bindgen(js_name = navigatorStep)]
    pub fn navigator_step(&self) -> Promise {
        let (slots, holder, watch) = (self.envs.clone(), self.navigator.clone(), self.nav_watch.clone());
        future_to_promise(async move {
            let (obs, mut memory, mut episode) = {
                let mut w = watch.borrow_mut();
                if w.done {
                    return Err(js_err(EnvError::EpisodeDone));
                }
                let obs = w.obs.clone().ok_or_else(|| js_err(EnvError::NoEpisode))?;
                (obs, std::mem::take(&mut w.memory), w.episode.clone().ok_or_else(|| js_err(EnvError::NoEpisode))?)
            };
            let mut nav = holder.borrow_mut().take().ok_or_else(|| js_err("no navigator is loaded (or it is busy)"))?;
            let state = nav.encode(&obs, &mut memory, false);
            let decided = async {
                let (probs, value) = nav.policy(&state).await?;
                let choice = nav.act(&state, true).await?;
                Ok::<_, String>((probs, value, choice))
            }
            .await;
            *holder.borrow_mut() = Some(nav);
            let (probs, value, choice) = decided.map_err(js_err)?;
            let rect_of = |r: u32| obs.dom.get(r).map(|n| n.rect).unwrap_or_default();
            let mut by_element: HashMap<usize, f32> = HashMap::new();
            for &(a, p) in &probs {
                let e = match a {
                    NavAction::Set { element, .. } | NavAction::Click { element } => element,
                };
                *by_element.entry(e).or_default() += p;
            }
            let elements = (0..state.elements)
                .map(|e| ElementChoice {
                    r#ref: state.refs[e],
                    rect: rect_of(state.refs[e]),
                    probability: by_element.get(&e).copied().unwrap_or(0.0),
                })
                .collect();
            let probability_of = |c: NavAction| probs.iter().find(|&&(a, _)| a == c).map_or(0.0, |&(_, p)| p);
            let Some(choice) = choice else {
                episode.nothing_open();
                let tally = finish(&watch, &episode, memory);
                return Ok(to_js(&NavWatchStep {
                    action: None,
                    description: NOTHING_OPEN.into(),
                    chosen: None,
                    elements,
                    value,
                    step: None,
                    success: episode.success(),
                    episode,
                    done: true,
                    tally,
                }));
            };
            let action = state.action(choice);
            let chosen = match choice {
                NavAction::Set { field, element } => Chosen {
                    kind: "set",
                    r#ref: state.refs[element],
                    rect: rect_of(state.refs[element]),
                    field: obs.instruction.fields.get(field).map(|f| f.key.clone()),
                    value: Some(state.values[field].clone()),
                    probability: probability_of(choice),
                },
                NavAction::Click { element } => Chosen {
                    kind: "click",
                    r#ref: state.refs[element],
                    rect: rect_of(state.refs[element]),
                    field: None,
                    value: None,
                    probability: probability_of(choice),
                },
            };
            let mut env = match slots.take(0) {
                Ok(env) => env,
                Err(e) => {
                    watch.borrow_mut().memory = memory;
                    return Err(js_err(e));
                }
            };
            let result = env.step(&action).await;
            slots.put(0, env);
            let step = match result {
                Ok(step) => step,
                Err(e) => {
                    watch.borrow_mut().memory = memory;
                    return Err(js_err(e));
                }
            };
            episode.stepped(&mut memory, &state, choice, &step);
            let done = step.done;
            let tally = if done {
                finish(&watch, &episode, memory)
            } else {
                let mut w = watch.borrow_mut();
                w.memory = memory;
                w.obs = Some(step.observation.clone());
                w.episode = Some(episode.clone());
                w.tally
            };
            let description = match &chosen.field {
                Some(key) => format!("{} ({key})", action.describe(Some(&obs.dom))),
                None => action.describe(Some(&obs.dom)),
            };
            Ok(to_js(&NavWatchStep {
                description,
                action: Some(action),
                chosen: Some(chosen),
                elements,
                value,
                step: Some(step),
                success: done && episode.success(),
                episode,
                done,
                tally,
            }))
        })
    }

    /// The watched episodes' count and successes on the current task (zero before any).
    #[wasm_bindgen(js_name = navigatorTally)]
    pub fn navigator_tally(&self) -> JsValue {
        to_js(&self.nav_watch.borrow().tally)
    }

    /// Runs the loaded navigator greedily on `task` for `episodes` episodes (0: until `stop()`)
    /// with seeds `first_seed, first_seed+1, ...` on page #0, as judging does; progress shows in
    /// `agentStats()` as a fast run of the other policies does. Resolves to the final statistics.
    #[wasm_bindgen(js_name = runNavigator)]
    pub fn run_navigator(&self, task: JsValue, first_seed: u32, episodes: u32) -> Promise {
        let (slots, holder, run) = (self.envs.clone(), self.navigator.clone(), self.run.clone());
        future_to_promise(async move {
            let spec = parse_task(task).map_err(js_err)?;
            let mut env = slots.take(0).map_err(js_err)?;
            let Some(mut nav) = holder.borrow_mut().take() else {
                slots.put(0, env);
                return Err(js_err("no navigator is loaded (or it is busy)"));
            };
            *run.borrow_mut() = AgentRun { running: true, task: spec.name().to_string(), policy: "navigator".into(), ..Default::default() };
            let failure = AgentRun::drive(&run, episodes, async |ep| {
                let seed = first_seed.wrapping_add(ep);
                let (_, e) = rollout(&mut env, &mut nav, &spec, seed, true, false).await?;
                Ok(EpisodeResult { seed, steps: e.steps, reward: e.ret, raw_reward: e.raw_reward, reason: e.reason })
            })
            .await;
            slots.put(0, env);
            *holder.borrow_mut() = Some(nav);
            let r = run.borrow();
            match failure {
                Some(e) => Err(js_err(e)),
                None => Ok(to_js(&*r)),
            }
        })
    }

    /// Judges the loaded navigator greedily on `task` (page #0) for `episodes` seeds from
    /// `first_seed`, without learning; resolves with `{episodes, successes, mean_return,
    /// mean_steps}`.
    #[wasm_bindgen(js_name = judgeNavigator)]
    pub fn judge_navigator(&self, task: JsValue, first_seed: u32, episodes: u32) -> Promise {
        let slots = self.envs.clone();
        let holder = self.navigator.clone();
        future_to_promise(async move {
            let spec = parse_task(task).map_err(js_err)?;
            let mut nav = holder.borrow_mut().take().ok_or_else(|| js_err("no navigator is loaded (or it is busy)"))?;
            let mut env = match slots.take(0) {
                Ok(env) => env,
                Err(e) => {
                    *holder.borrow_mut() = Some(nav);
                    return Err(js_err(e));
                }
            };
            let seeds = (0..episodes).map(|i| first_seed.wrapping_add(i));
            let result = judge(std::slice::from_mut(&mut env), &mut nav, &spec, seeds).await;
            slots.put(0, env);
            *holder.borrow_mut() = Some(nav);
            result.map(|j| to_js(&j)).map_err(js_err)
        })
    }
}

/// Ends the watched episode: counts it, and closes the episode for further steps.
fn finish(watch: &std::rc::Rc<std::cell::RefCell<NavWatch>>, episode: &Episode, memory: EpisodeMemory) -> Tally {
    let mut w = watch.borrow_mut();
    w.memory = memory;
    w.done = true;
    w.episode = Some(episode.clone());
    w.tally.episodes += 1;
    w.tally.successes += episode.success() as u32;
    w.tally
}

/// `over` (an object of config fields) over the defaults, validated. Each field is read on its
/// own first, so a value of the wrong type is named (serde's message alone does not say which).
fn navigator_config(over: serde_json::Value) -> Result<NavigatorConfig, String> {
    let serde_json::Value::Object(over) = over else {
        return Err("the navigator's config must be an object".into());
    };
    let mut base = serde_json::to_value(NavigatorConfig::default()).map_err(|e| e.to_string())?;
    for (key, value) in over {
        let mut one = base.clone();
        one[&key] = value.clone();
        serde_json::from_value::<NavigatorConfig>(one).map_err(|e| format!("{key}: {e}"))?;
        base[&key] = value;
    }
    let cfg: NavigatorConfig = serde_json::from_value(base).map_err(|e| e.to_string())?;
    cfg.validate()?;
    Ok(cfg)
}

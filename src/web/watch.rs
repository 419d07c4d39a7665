//! Watching an agent act on page #0 step by step: a DOM-Q-Net checkpoint under its evaluation
//! rules, or a scripted or random policy; each step returns the action, its description and (for
//! DOM-Q-Net) the Q-values the view draws over the page.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::Promise;
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use super::app::{Lab, Slots, js_err, make_policy, parse_task};
use super::remote::to_js;
use crate::dom_q_net::checkpoint::Checkpoint;
use crate::dom_q_net::train::{GreedyEpisode, held_out_seed};
use crate::dom_q_net::{DomQNetAgent, QView};
use crate::env::{Action, EnvConfig, EnvError, Environment, Observation};
use crate::policy::Policy;

/// An agent acting step by step on page #0 while a person watches.
#[derive(Default)]
pub(super) struct Watch {
    /// The loaded DOM-Q-Net agent (CPU, inference only) and its name.
    agent: Option<(String, DomQNetAgent)>,
    policy: String,
    scripted: Option<Box<dyn Policy>>,
    obs: Option<Observation>,
    done: bool,
    /// The agent's episode under its evaluation rules (`GreedyEpisode`), while it runs.
    episode: Option<GreedyEpisode>,
    /// The page's seed.
    seed: u32,
}

#[derive(Serialize)]
struct WatchStep {
    action: Action,
    description: String,
    q: Option<QView>,
    step: crate::env::Step,
}

/// One step of the watched DOM-Q-Net agent under its evaluation rules ([`GreedyEpisode`], the
/// trainer's `evaluate` rules): greedy, a misfit action is a step that changes nothing, the
/// agent's step cap ends the episode, and its vocabularies are put back when the episode ends.
async fn agent_step(slots: &Slots, watch: &Rc<RefCell<Watch>>, obs: Observation) -> Result<JsValue, JsValue> {
    let (agent, episode) = {
        let mut w = watch.borrow_mut();
        (w.agent.take(), w.episode.take())
    };
    let (Some((name, mut agent)), Some(mut episode)) = (agent, episode) else {
        return Err(js_err("no DOM-Q-Net agent is loaded"));
    };
    let decided = episode.decide(&mut agent, &obs).await;
    let env = slots.take(0);
    let (d, mut env) = match (decided, env) {
        (Ok(d), Ok(env)) => (d, env),
        (decided, env) => {
            // Nothing was sent: the episode ends here, and the agent gets its vocabularies back.
            let error = match (&decided, &env) {
                (Err(e), _) => js_err(e),
                (_, Err(e)) => js_err(e),
                _ => js_err("unreachable"),
            };
            if let Ok(env) = env {
                slots.put(0, env);
            }
            episode.abandon(&mut agent, ());
            let mut w = watch.borrow_mut();
            w.agent = Some((name, agent));
            w.done = true;
            return Err(error);
        }
    };
    let outcome = env.step(&d.env_action).await;
    slots.put(0, env);
    let misfit = matches!(outcome, Err(EnvError::BadTarget { .. }));
    let recorded = episode.record(&mut agent, &obs, outcome);
    let mut w = watch.borrow_mut();
    w.agent = Some((name, agent));
    let (step, end) = match recorded {
        Ok(r) => r,
        Err(e) => {
            w.done = true;
            return Err(js_err(e));
        }
    };
    if end.is_none() {
        w.episode = Some(episode);
    }
    w.obs = Some(step.observation.clone());
    w.done = step.done;
    let mut description = d.env_action.describe(Some(&obs.dom));
    if misfit {
        description.push_str(" (it does not fit its target: nothing happened)");
    }
    Ok(to_js(&WatchStep { description, action: d.env_action, q: Some(d.q), step }))
}

#[wasm_bindgen]
impl Lab {
    /// Loads a DOM-Q-Net checkpoint as the agent to watch (CPU, inference only). A file that is
    /// not a valid checkpoint is refused with a message and the current agent stays.
    #[wasm_bindgen(js_name = loadAgent)]
    pub fn load_agent(&self, bytes: Vec<u8>, name: String) -> Result<JsValue, JsValue> {
        let ckpt = Checkpoint::from_bytes(&bytes).map_err(js_err)?;
        let header = to_js(&ckpt.header);
        let agent = DomQNetAgent::from_checkpoint(ckpt, &burn::prelude::Device::flex()).map_err(js_err)?;
        let mut w = self.watch.borrow_mut();
        w.agent = Some((name, agent));
        w.episode = None;
        Ok(header)
    }

    /// The loaded agent's name, tasks and counters, or null.
    #[wasm_bindgen(js_name = agentInfo)]
    pub fn agent_info(&self) -> JsValue {
        match &self.watch.borrow().agent {
            Some((name, a)) => to_js(&serde_json::json!({ "name": name, "counters": a.counters, "config": a.cfg })),
            None => JsValue::NULL,
        }
    }

    /// Starts an episode for watching `policy` ("dqn", "random" or "oracle") act step by step.
    #[wasm_bindgen(js_name = watchReset)]
    pub fn watch_reset(&self, task: JsValue, seed: u32, policy: String) -> Promise {
        let (slots, watch) = (self.envs.clone(), self.watch.clone());
        future_to_promise(async move {
            let spec = parse_task(task).map_err(js_err)?;
            let scripted = match policy.as_str() {
                "dqn" if watch.borrow().agent.is_none() => return Err(js_err("no DOM-Q-Net agent is loaded")),
                "dqn" => None,
                other => Some(make_policy(other, &spec, seed).map_err(js_err)?),
            };
            // An agent is watched under its evaluation rules (`GreedyEpisode`): on a seed it
            // never trained on, cut by its own step cap (not the page's).
            let agent = scripted.is_none();
            let seed = if agent { held_out_seed(seed) } else { seed };
            {
                // An unfinished episode gives the agent its vocabularies back first.
                let w = &mut *watch.borrow_mut();
                if let (Some(ep), Some((_, a))) = (w.episode.take(), w.agent.as_mut()) {
                    ep.abandon(a, ());
                }
            }
            let mut env = slots.take(0).map_err(js_err)?;
            if agent {
                env.set_config(EnvConfig { max_steps: None, ..env.config().clone() });
            }
            let result = env.reset(&spec, seed).await;
            slots.put(0, env);
            let obs = result.map_err(js_err)?;
            let mut w = watch.borrow_mut();
            w.episode = if agent { w.agent.as_ref().map(|(_, a)| GreedyEpisode::begin(a, seed)) } else { None };
            w.seed = seed;
            w.policy = policy;
            w.scripted = scripted;
            w.obs = Some(obs.clone());
            w.done = false;
            Ok(to_js(&obs))
        })
    }

    /// The watched policy's next action, performed; with DOM-Q-Net's Q-values when it acts.
    #[wasm_bindgen(js_name = watchStep)]
    pub fn watch_step(&self) -> Promise {
        let (slots, watch) = (self.envs.clone(), self.watch.clone());
        future_to_promise(async move {
            let (obs, policy) = {
                let w = watch.borrow();
                if w.done {
                    return Err(js_err(EnvError::EpisodeDone));
                }
                (w.obs.clone().ok_or_else(|| js_err(EnvError::NoEpisode))?, w.policy.clone())
            };
            if policy == "dqn" {
                return agent_step(&slots, &watch, obs).await;
            }
            let a = watch.borrow_mut().scripted.as_mut().and_then(|p| p.act(&obs));
            let action = a.ok_or_else(|| js_err("the policy has no action here"))?;
            let mut env = slots.take(0).map_err(js_err)?;
            let result = env.step(&action).await;
            slots.put(0, env);
            let step = result.map_err(js_err)?;
            let mut w = watch.borrow_mut();
            w.obs = Some(step.observation.clone());
            w.done = step.done;
            Ok(to_js(&WatchStep { description: action.describe(Some(&obs.dom)), action, q: None, step }))
        })
    }

    /// The page seed of the watched episode: the seed `watchReset` was given, or for an agent the
    /// held-out seed that stands for it (`train::held_out_seed`).
    #[wasm_bindgen(js_name = watchSeed)]
    pub fn watch_seed(&self) -> u32 {
        self.watch.borrow().seed
    }
}

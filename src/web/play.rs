//! The Play & record view's calls: a person plays an episode on page #0 while it is recorded as
//! a demonstration, and a demonstration file is read and replayed.

use js_sys::Promise;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use super::app::{Lab, js_err, parse_task, typed_folders};
use super::recorder::Recorder;
use super::remote::to_js;
use crate::demo::{Demonstration, replay};
use crate::env::{Action, EnvConfig, Environment, Observation};

#[wasm_bindgen]
impl Lab {
    /// Starts an episode of `task` with `seed` for a person to play on page #0, recording it.
    /// The page keeps its own time limit (people are not held).
    #[wasm_bindgen(js_name = startRecording)]
    pub fn start_recording(&self, task: JsValue, seed: u32) -> Promise {
        if let Some(old) = self.recorder.borrow_mut().take() {
            old.finish(&self.envs.0);
        }
        let (slots, recorder) = (self.envs.clone(), self.recorder.clone());
        let cfg = EnvConfig { max_steps: None, hold_clock: false, ..self.cfg.borrow().clone() };
        future_to_promise(async move {
            let spec = parse_task(task).map_err(js_err)?;
            let mut env = slots.take(0).map_err(js_err)?;
            let previous = env.config().clone();
            env.set_config(cfg);
            let result = env.reset(&spec, seed).await;
            env.set_config(previous);
            slots.put(0, env);
            let obs = result.map_err(js_err)?;
            *recorder.borrow_mut() = Some(Recorder::start(&slots.0, spec, seed).map_err(js_err)?);
            Ok(to_js(&obs))
        })
    }

    /// What has been recorded so far: step descriptions, and the outcome once the episode ended.
    #[wasm_bindgen(js_name = recordingState)]
    pub fn recording_state(&self) -> JsValue {
        let rec = self.recorder.borrow();
        let Some(rec) = rec.as_ref() else { return JsValue::NULL };
        let s = rec.state.borrow();
        let steps: Vec<String> = s.steps.iter().map(|st| st.action.describe(Some(&st.observation.dom))).collect();
        let actions: Vec<&Action> = s.steps.iter().map(|st| &st.action).collect();
        to_js(&serde_json::json!({
            "steps": steps,
            "actions": actions,
            "done": s.outcome.is_some(),
            "reward": s.outcome.as_ref().map(|o| o.0),
            "raw_reward": s.outcome.as_ref().map(|o| o.1),
            "reason": s.outcome.as_ref().and_then(|o| o.2.clone()),
            "exact": s.exact,
        }))
    }

    /// Stops recording; returns the demonstration as JSON text.
    #[wasm_bindgen(js_name = stopRecording)]
    pub fn stop_recording(&self) -> Result<String, JsValue> {
        let rec = self.recorder.borrow_mut().take().ok_or_else(|| js_err("nothing is being recorded"))?;
        serde_json::to_string(&rec.finish(&self.envs.0)).map_err(js_err)
    }

    /// Reads a demonstration file's text as `replayDemonstration` would (size, format, task), so
    /// the page shows its task and seed only once it is known to be one; throws what is wrong.
    /// Returns `{task, seed, steps, raw_reward}`.
    #[wasm_bindgen(js_name = readDemonstration)]
    pub fn read_demonstration(&self, json: String) -> Result<JsValue, JsValue> {
        let demo = Demonstration::from_json_in(&json, &typed_folders()).map_err(js_err)?;
        Ok(to_js(&serde_json::json!({ "task": demo.task, "seed": demo.seed, "steps": demo.steps.len(), "raw_reward": demo.raw_reward })))
    }

    /// Replays a demonstration file on page #0; resolves with how it went.
    #[wasm_bindgen(js_name = replayDemonstration)]
    pub fn replay_demonstration(&self, json: String) -> Promise {
        let slots = self.envs.clone();
        future_to_promise(async move {
            let demo = Demonstration::from_json_in(&json, &typed_folders()).map_err(js_err)?;
            let actions: Vec<Action> = demo.actions().cloned().collect();
            let expected: Vec<Observation> = demo.steps.iter().map(|s| s.observation.clone()).collect();
            let mut env = slots.take(0).map_err(js_err)?;
            let previous = env.config().clone();
            // A person's pace is not replayed: hold the clock, and allow exactly the recorded steps.
            let steps = Some(actions.len().max(1) as u32);
            env.set_config(EnvConfig { data_mode: demo.data_mode.clone(), max_steps: steps, hold_clock: true, ..previous.clone() });
            let result = replay(&mut env, &demo.task, demo.seed, &actions, Some(&expected)).await;
            env.set_config(previous);
            slots.put(0, env);
            result.map(|r| to_js(&r)).map_err(js_err)
        })
    }
}

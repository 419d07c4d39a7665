//! What the page asks of a gMiniWoB navigator: load one from a checkpoint, and judge it greedily
//! on the live DOM (the environment all reported success rates are measured on).

use burn::prelude::Device;
use js_sys::Promise;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use super::app::{Lab, js_err, parse_task};
use super::remote::to_js;
use crate::navigator::Navigator;
use crate::navigator::train::judge;

#[wasm_bindgen]
impl Lab {
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
        Ok(to_js(&info))
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
            let result = judge(&mut env, &mut nav, &spec, seeds).await;
            slots.put(0, env);
            *holder.borrow_mut() = Some(nav);
            result.map(|j| to_js(&j)).map_err(js_err)
        })
    }
}

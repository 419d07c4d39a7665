//! What the page asks of a gMiniWoB navigator: load one from a checkpoint, and judge it greedily
//! on the live DOM (the environment all reported success rates are measured on).

use burn::prelude::Device;
use js_sys::Promise;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use super::app::{Lab, js_err, parse_task};
use super::remote::to_js;
use crate::navigator::train::judge;
use crate::navigator::{Navigator, NavigatorConfig};

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

//! What the page checks or shows before anything runs: share links, DOM-Q-Net's presets and
//! edited settings, a checkpoint file's header, and an in-tab timing of DOM-Q-Net's update.

use js_sys::Promise;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use super::app::{Lab, js_err};
use super::remote::to_js;
use super::util::now_ms;
use crate::dom_q_net::DqnConfig;
use crate::dom_q_net::checkpoint::Checkpoint;
use crate::share::ShareState;

#[wasm_bindgen]
impl Lab {
    /// Parses a share-link fragment; throws a message when it is malformed or tampered with.
    #[wasm_bindgen(js_name = parseShare)]
    pub fn parse_share(fragment: String, known_agents: JsValue) -> Result<JsValue, JsValue> {
        let agents: Vec<String> = serde_wasm_bindgen::from_value(known_agents).unwrap_or_default();
        ShareState::decode(&fragment, &agents).map(|s| to_js(&s)).map_err(js_err)
    }

    /// The fragment (`s=...`) for a share state.
    #[wasm_bindgen(js_name = encodeShare)]
    pub fn encode_share(state: JsValue, known_agents: JsValue) -> Result<String, JsValue> {
        let state: ShareState = serde_wasm_bindgen::from_value(state).map_err(|e| js_err(format!("bad share state: {e}")))?;
        let agents: Vec<String> = serde_wasm_bindgen::from_value(known_agents).unwrap_or_default();
        state.validate(&agents).map_err(js_err)?;
        Ok(state.encode())
    }

    /// When a DOM-Q-Net task counts as solved: `rate` success over the last `window` episodes
    /// (`dom_q_net::train::SOLVE_RATE`), for the Train view's words.
    #[wasm_bindgen(js_name = dqnSolveRule)]
    pub fn dqn_solve_rule() -> JsValue {
        to_js(&serde_json::json!({ "rate": crate::dom_q_net::train::SOLVE_RATE, "window": crate::runner::RunStats::WINDOW }))
    }

    /// DOM-Q-Net's hyperparameters with the paper's values.
    #[wasm_bindgen(js_name = defaultDqnConfig)]
    pub fn default_dqn_config() -> JsValue {
        to_js(&DqnConfig::default())
    }

    /// The reference code's choices where it differs from the paper ([`DqnConfig::reference_code`]):
    /// every choice of the authors' code (37-d local module, T = 7, deeper streams, α = β = 0.8, …).
    #[wasm_bindgen(js_name = referenceCodeDqnConfig)]
    pub fn reference_code_dqn_config() -> JsValue {
        to_js(&DqnConfig::reference_code())
    }

    /// The paper's settings with the reference code's smaller network ([`DqnConfig::code_sizes`]),
    /// the preset the README's multitask figure was measured with.
    #[wasm_bindgen(js_name = codeSizesDqnConfig)]
    pub fn code_sizes_dqn_config() -> JsValue {
        to_js(&DqnConfig::code_sizes())
    }

    /// The preset for the 9-task set in a tab ([`DqnConfig::fast_tab`]): the code's sizes with
    /// a minibatch of 32 and Adam 3e-4.
    #[wasm_bindgen(js_name = fastTabDqnConfig)]
    pub fn fast_tab_dqn_config() -> JsValue {
        to_js(&DqnConfig::fast_tab())
    }

    /// The preset `name` (paper, reference-code, code-sizes or fast-tab) for training on `tasks`
    /// (names): the paper's buffer and T follow the tasks ([`DqnConfig::named_for_tasks`]).
    #[wasm_bindgen(js_name = dqnPreset)]
    pub fn dqn_preset(name: String, tasks: Vec<String>) -> Result<JsValue, JsValue> {
        DqnConfig::named_for_tasks(&name, &tasks).map(|c| to_js(&c)).map_err(js_err)
    }

    /// Times DOM-Q-Net's update on the CPU backend in this tab, phase by phase, with the
    /// simulator's pages (`dom_q_net::bench`; `bench-dqn --update-profile`). A benchmark: it
    /// runs on the calling thread. `preset`: paper, reference-code, code-sizes or fast-tab.
    #[wasm_bindgen(js_name = benchDqnUpdate)]
    pub fn bench_dqn_update(preset: String, updates: usize, batch: usize) -> Promise {
        use crate::dom_q_net::bench;
        future_to_promise(async move {
            let cfg = bench::preset(&preset).map_err(|e| JsValue::from_str(&e))?;
            let cfg = DqnConfig { batch_size: batch, seed: 7, ..cfg };
            let device = burn::prelude::Device::flex().autodiff();
            let result = bench::bench_updates(cfg, &device, updates, now_ms).await.map_err(|e| JsValue::from_str(&e))?;
            Ok(to_js(&result))
        })
    }

    /// Checks edited hyperparameters; returns the complete config or throws what is wrong.
    #[wasm_bindgen(js_name = checkDqnConfig)]
    pub fn check_dqn_config(cfg: JsValue) -> Result<JsValue, JsValue> {
        let cfg: DqnConfig = serde_wasm_bindgen::from_value(cfg).map_err(|e| js_err(format!("bad settings: {e}")))?;
        cfg.validate().map_err(js_err)?;
        Ok(to_js(&cfg))
    }

    /// Reads a checkpoint file's header; throws a clear message for anything that is not one.
    #[wasm_bindgen(js_name = inspectCheckpoint)]
    pub fn inspect_checkpoint(bytes: Vec<u8>) -> Result<JsValue, JsValue> {
        Checkpoint::from_bytes(&bytes).map(|c| to_js(&c.header)).map_err(js_err)
    }
}

//! Fields read from the utterance (`env::fields`) on live pages: the lab's own pages say what
//! their patterns read, and the scripted oracles solve MiniWoB-style pages that give no fields.
#![cfg(target_arch = "wasm32")]

mod common;

use common::new_frame;
use wasm_bindgen_test::*;
use weblab::env::fields::{extract_fields, has_extractor, miniwob_layout};
use weblab::env::{EnvConfig, Environment, builtin_tasks};
use weblab::policy::oracle::{Script, scripted};
use weblab::runner::run_episode;
use weblab::task::TaskSpec;
use weblab::web::IframeEnv;

wasm_bindgen_test_configure!(run_in_browser);

const CORE: &str = include_str!("fixtures/miniwob-style/core/core.js");

/// A fixture page, inlined with the MiniWoB-style core, under a MiniWoB task's name (the name
/// picks the pattern).
fn page(task: &str, html: &str) -> TaskSpec {
    TaskSpec::Inline { name: task.into(), html: html.replace(r#"<script src="core/core.js"></script>"#, &format!("<script>\n{CORE}\n</script>")) }
}

#[wasm_bindgen_test]
async fn each_pattern_reads_what_the_labs_own_page_gives() {
    // The lab's pages word their instructions as MiniWoB++ does and also hand their fields over:
    // what the patterns read from the shown utterance must be exactly those fields, in MiniWoB++'s
    // layout (the click-checkboxes family's one `targets` list is MiniWoB++'s `target i` + `button`).
    let mut env = IframeEnv::new(new_frame(), EnvConfig::default());
    let mut checked = 0;
    for t in builtin_tasks().iter().filter(|t| has_extractor(&t.name)) {
        let spec = TaskSpec::builtin(&t.name).unwrap();
        for seed in 1..=4 {
            let obs = env.reset(&spec, seed).await.unwrap();
            let ins = &obs.instruction;
            let read = extract_fields(&t.name, &ins.utterance);
            assert_eq!(read, Some(miniwob_layout(&t.name, &ins.fields)), "{} seed {seed}: {:?}", t.name, ins.utterance);
            checked += 1;
        }
    }
    assert!(checked >= 4 * 34, "only {checked} episodes checked");
}

#[wasm_bindgen_test]
async fn oracles_solve_miniwob_style_pages_that_give_no_fields() {
    let mut env = IframeEnv::new(new_frame(), EnvConfig { hold_clock: true, max_steps: Some(20), ..EnvConfig::default() });
    let pages = [
        page("login-user", include_str!("fixtures/miniwob-style/fields-login-user.html")),
        page("click-checkboxes", include_str!("fixtures/miniwob-style/fields-click-checkboxes.html")),
    ];
    for spec in &pages {
        let task = spec.name();
        for seed in 0..8 {
            let obs = env.reset(spec, seed).await.unwrap();
            assert!(!obs.instruction.fields.is_empty(), "{task} seed {seed}: fields from {:?}", obs.instruction.utterance);
            let mut oracle = scripted(task, Script::Oracle).unwrap();
            let r = run_episode(&mut env, &mut oracle, spec, seed, |_, _| {}).await.unwrap();
            assert_eq!(r.raw_reward, 1.0, "{task} seed {seed}: {:?}", r.reason);
            let mut wrong = scripted(task, Script::Wrong).unwrap();
            let r = run_episode(&mut env, &mut wrong, spec, seed, |_, _| {}).await.unwrap();
            assert_eq!(r.raw_reward, -1.0, "{task} seed {seed}: the wrong script fails");
        }
    }
    // Under another name the same page gets no fields, and the oracle has nothing to go on.
    let other = page("order-form", include_str!("fixtures/miniwob-style/fields-login-user.html"));
    assert!(env.reset(&other, 1).await.unwrap().instruction.fields.is_empty());
}

//! The environment drives pages that follow MiniWoB++'s own core conventions (our fixture core in
//! `tests/fixtures/miniwob-style/`, written for these tests): pages that start themselves on
//! load, have no `core.getFields`/`core.holdClock`, return `{utterance, fields}` from
//! `getUtterance`, lower `WOB_TASK_READY` for a while, and mark their DOM with `data-wob_ref`.
#![cfg(target_arch = "wasm32")]

mod common;

use common::{js_eval_in, new_frame};
use wasm_bindgen_test::*;
use weblab::env::{Action, EnvConfig, EnvError, Environment, NodeValue, Observation, TaskSpec};
use weblab::web::IframeEnv;

wasm_bindgen_test_configure!(run_in_browser);

const CORE: &str = include_str!("fixtures/miniwob-style/core/core.js");

fn page(name: &str, html: &str) -> TaskSpec {
    TaskSpec::Inline {
        name: name.into(),
        html: html.replace(r#"<script src="core/core.js"></script>"#, &format!("<script>\n{CORE}\n</script>")),
    }
}

/// order-form.html's own time limit (the fixture core's default).
const ORDER_FORM_LIMIT_MS: f64 = 10_000.0;

fn order_form() -> TaskSpec {
    page("order-form", include_str!("fixtures/miniwob-style/order-form.html"))
}

fn node<'a>(obs: &'a Observation, pred: impl Fn(&weblab::env::DomNode) -> bool) -> &'a weblab::env::DomNode {
    obs.dom.nodes.iter().find(|n| pred(n)).expect("node")
}

/// Reads the order from the utterance alone (MiniWoB's pages give no fields in JS).
fn order_of(obs: &Observation) -> (String, String, String) {
    let t = &obs.instruction.tokens;
    let at = t.iter().position(|w| w == "a").unwrap();
    let name = t.iter().find(|w| w.starts_with("Guest")).unwrap();
    (t[at + 1].clone(), t[at + 2].clone(), name.clone())
}

#[wasm_bindgen_test]
async fn drives_a_miniwob_style_form_with_every_action_kind() {
    let mut env = IframeEnv::new(new_frame(), EnvConfig { hold_clock: true, ..EnvConfig::default() });
    let obs = env.reset(&order_form(), 12).await.unwrap();
    assert!(obs.instruction.utterance.starts_with("Order a "), "{}", obs.instruction.utterance);
    assert!(obs.instruction.fields.is_empty(), "this core exposes no fields");
    obs.dom.validate().unwrap();
    for skipped in ["query", "sync-task-cover", "reward-display", "click-canvas"] {
        assert!(obs.dom.nodes.iter().all(|n| n.id != skipped), "#{skipped} must be skipped");
    }
    assert_eq!(obs.dom.nodes[0].r#ref, 1, "the lab's own refs, whatever data-wob_ref says");
    // Without core.holdClock, the lab gives the page an hour instead.
    assert_eq!(js_eval_in(env.iframe(), "core.EPISODE_MAX_TIME").as_f64(), Some(3_600_000.0));
    assert_eq!(env.reset(&order_form(), 12).await.unwrap(), obs, "same seed, same page");
    // ... but only while the clock would be held: a person playing next gets the page's own limit.
    let own = EnvConfig { hold_clock: false, ..EnvConfig::default() };
    env.set_config(own.clone());
    env.reset(&order_form(), 12).await.unwrap();
    assert_eq!(js_eval_in(env.iframe(), "core.EPISODE_MAX_TIME").as_f64(), Some(ORDER_FORM_LIMIT_MS));
    env.set_config(EnvConfig { hold_clock: true, ..own });
    env.reset(&order_form(), 12).await.unwrap();
    assert_eq!(js_eval_in(env.iframe(), "core.EPISODE_MAX_TIME").as_f64(), Some(3_600_000.0));

    let (size, drink, name) = order_of(&obs);
    let select = node(&obs, |n| n.id == "drink").r#ref;
    let radio = node(&obs, |n| n.tag == "INPUT_radio" && obs.dom.nodes[n.parent.unwrap()].text.is_empty()
        && obs.dom.nodes[n.parent.unwrap()].children.iter().any(|&c| obs.dom.nodes[c].text == size)).r#ref;
    let who = node(&obs, |n| n.id == "who").r#ref;
    let gift = node(&obs, |n| n.id == "gift").r#ref;
    let help = node(&obs, |n| n.id == "help").r#ref;
    let order = node(&obs, |n| n.tag == "BUTTON").r#ref;

    let s = env.step(&Action::Select(select, drink.clone())).await.unwrap();
    assert_eq!(node(&s.observation, |n| n.id == "drink").text, drink);
    let s = env.step(&Action::Click(radio)).await.unwrap();
    assert_eq!(s.observation.dom.get(radio).unwrap().value, NodeValue::Checked(true));
    assert!(s.observation.dom.get(radio).unwrap().tampered);
    env.step(&Action::Click(help)).await.unwrap();
    env.step(&Action::Type(who, name.clone())).await.unwrap();
    let s = env.step(&Action::Click(gift)).await.unwrap();
    assert_eq!(s.observation.dom.get(gift).unwrap().value, NodeValue::Checked(true));
    assert_eq!(s.observation.dom.get(who).unwrap().value, NodeValue::Text(name));
    let s = env.step(&Action::Click(order)).await.unwrap();
    assert!(s.done);
    assert_eq!(s.raw_reward, 1.0);
    assert!(s.reward > 0.99, "the clock was held, so almost no decay: {}", s.reward);
    assert_eq!(env.step(&Action::Click(order)).await.unwrap_err(), EnvError::EpisodeDone);

    // A wrong order gets the page's failure reward and reason.
    let obs = env.reset(&order_form(), 13).await.unwrap();
    let s = env.step(&Action::Click(node(&obs, |n| n.tag == "BUTTON").r#ref)).await.unwrap();
    assert_eq!((s.raw_reward, s.reason.as_deref()), (-1.0, Some("wrong order")));
}

#[wasm_bindgen_test]
async fn natural_language_fields_and_late_readiness() {
    let mut env = IframeEnv::new(new_frame(), EnvConfig { ready_timeout_ms: 2000, ..EnvConfig::default() });
    let spec = page("nl-star", include_str!("fixtures/miniwob-style/nl-star.html"));
    let obs = env.reset(&spec, 5).await.unwrap();
    assert_eq!(js_eval_in(env.iframe(), "WOB_TASK_READY").as_bool(), Some(true), "reset waited for readiness");
    let by = obs.instruction.field("by").expect("fields from getUtterance's object").to_string();
    assert_eq!(obs.instruction.field("task"), Some("star"));
    assert!(obs.instruction.utterance.contains(&by));
    let who = obs.dom.nodes.iter().position(|n| n.text == by).unwrap();
    let row = obs.dom.nodes[who].parent.unwrap();
    let star = obs.dom.nodes[row].children.iter().map(|&c| &obs.dom.nodes[c]).find(|n| n.has_class("star")).unwrap();
    let s = env.step(&Action::Click(star.r#ref)).await.unwrap();
    assert_eq!((s.done, s.raw_reward), (true, 1.0));
}

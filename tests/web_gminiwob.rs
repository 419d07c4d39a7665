//! Generated sites on the live DOM (gMiniWoB): every primitive renders and works, the scripted
//! oracle solves every test site at every level, and each documented reward comes out as
//! documented. Run by `scripts/test.sh` (wasm-bindgen-test in headless Chromium).
#![cfg(target_arch = "wasm32")]

mod common;

use common::{js_json_in, new_frame};
use wasm_bindgen_test::*;
use weblab::env::{Action, DomNode, EnvConfig, Environment, NodeValue, Observation, STEP_LIMIT_REASON, Step};
use weblab::gminiwob::primitive::{Kind, PRIMITIVES, by_name};
use weblab::gminiwob::test_sites::{LEVELS, RandomDesign, TEST_SITES, test_site};
use weblab::gminiwob::{Design, GeneratedSite, RewardConfig};
use weblab::policy::Policy;
use weblab::policy::gminiwob::{SiteOracle, SiteRandom};
use weblab::rng::Rng;
use weblab::task::TaskSpec;
use weblab::web::IframeEnv;

wasm_bindgen_test_configure!(run_in_browser);

fn env() -> IframeEnv {
    IframeEnv::new(new_frame(), EnvConfig { hold_clock: true, ..EnvConfig::default() })
}

fn site(entries: &[(&str, u32)]) -> TaskSpec {
    let entries: Vec<(usize, u32)> = entries.iter().map(|(n, p)| (by_name(n).expect(n).index, *p)).collect();
    TaskSpec::generated("test-site", Design::from_entries(None, &entries).unwrap()).unwrap()
}

fn node<'a>(obs: &'a Observation, id: &str) -> &'a DomNode {
    obs.dom.nodes.iter().find(|n| n.id == id).unwrap_or_else(|| {
        let ids: Vec<&str> = obs.dom.nodes.iter().map(|n| n.id.as_str()).filter(|i| !i.is_empty()).collect();
        panic!("no #{id} on the page; ids: {ids:?}")
    })
}

/// The first leaf under the node with `id` (what a click on the primitive lands on).
fn leaf_under(obs: &Observation, id: &str) -> u32 {
    let start = obs.dom.index_of(node(obs, id).r#ref).unwrap();
    let mut i = start;
    while let Some(&c) = obs.dom.nodes[i].children.first() {
        i = c;
    }
    obs.dom.nodes[i].r#ref
}

async fn step(env: &mut IframeEnv, action: Action) -> Step {
    env.step(&action).await.unwrap_or_else(|e| panic!("{action:?}: {e}"))
}

#[wasm_bindgen_test]
async fn every_active_primitive_takes_its_value() {
    let mut env = env();
    for p in PRIMITIVES.iter().filter(|p| p.is_active()) {
        let spec = site(&[(p.name, 0)]);
        let obs = env.reset(&spec, 3).await.unwrap_or_else(|e| panic!("{}: {e}", p.name));
        obs.dom.validate().unwrap();
        let key = p.field.unwrap();
        let value = obs.instruction.field(key).unwrap_or_else(|| panic!("{}: no field {key}", p.name)).to_string();
        let target = node(&obs, &format!("actionable_{}", p.name));
        let s = step(&mut env, Action::SetValue(target.r#ref, value.clone())).await;
        assert_eq!(s.potential, Some(1.0), "{}: setting {value:?} should make the only field right", p.name);
        let after = node(&s.observation, &format!("actionable_{}", p.name));
        assert!(after.has_class("visited"), "{} is marked visited", p.name);
        match p.kind {
            Kind::Checkbox => assert_eq!(after.value, NodeValue::Checked(value == "true"), "{}", p.name),
            Kind::Radio => {}
            _ => assert_eq!(after.value.as_text(), Some(value.as_str()), "{}", p.name),
        }
        // Shaping: +1 potential for the one field, −0.05 for the step.
        assert!((s.shaped_reward.unwrap() - 0.95).abs() < 1e-9, "{}: {:?}", p.name, s.shaped_reward);
        // Setting it again changes nothing on the page: −0.05 − 0.5.
        let again = step(&mut env, Action::SetValue(target.r#ref, value.clone())).await;
        assert!((again.shaped_reward.unwrap() + 0.55).abs() < 1e-9, "{}: {:?}", p.name, again.shaped_reward);
        // And the submit button finishes the site.
        let submit = node(&again.observation, "actionable_submit_p0").r#ref;
        let end = step(&mut env, Action::Click(submit)).await;
        assert_eq!((end.done, end.raw_reward), (true, 1.0), "{}: {:?}", p.name, end.reason);
    }
}

#[wasm_bindgen_test]
async fn text_fields_take_typing_and_choices_take_selects() {
    let mut env = env();
    let obs = env.reset(&site(&[("username", 0), ("state", 0), ("cabin", 0)]), 8).await.unwrap();
    let user = obs.instruction.field("username").unwrap().to_string();
    // Typing appends, as a person's typing does.
    let u = node(&obs, "actionable_username").r#ref;
    step(&mut env, Action::Type(u, "ab".into())).await;
    let s = step(&mut env, Action::Type(u, "cd".into())).await;
    assert_eq!(node(&s.observation, "actionable_username").value.as_text(), Some("abcd"));
    // SetValue replaces.
    let s = step(&mut env, Action::SetValue(u, user.clone())).await;
    assert_eq!(node(&s.observation, "actionable_username").value.as_text(), Some(user.as_str()));
    let state = obs.instruction.field("state").unwrap().to_string();
    let sel = node(&obs, "actionable_state").r#ref;
    let s = step(&mut env, Action::Select(sel, state.clone())).await;
    assert_eq!(node(&s.observation, "actionable_state").value.as_text(), Some(state.as_str()));
    // A radio clicked directly counts for its group.
    let cabin = obs.instruction.field("cabin").unwrap().to_string();
    let group = obs.dom.index_of(node(&obs, "actionable_cabin").r#ref).unwrap();
    let radio = obs
        .dom
        .nodes
        .iter()
        .enumerate()
        .find(|(i, n)| n.tag == "INPUT_radio" && *i > group && obs.dom.subtree_text(obs.dom.nodes[*i].parent.unwrap()).contains(&cabin));
    let radio = radio.expect("the profile's cabin is one of the radios").1.r#ref;
    let s = step(&mut env, Action::Click(radio)).await;
    assert!(node(&s.observation, "actionable_cabin").has_class("visited"));
    assert_eq!(s.potential, Some(1.0), "all three right after {:?}", env.site_status());
}

#[wasm_bindgen_test]
async fn passive_primitives_distract_or_end_the_episode() {
    let mut env = env();
    for p in PRIMITIVES.iter().filter(|p| matches!(p.kind, Kind::Decoration)) {
        let spec = site(&[(p.name, 0), ("username", 0)]);
        let obs = env.reset(&spec, 5).await.unwrap_or_else(|e| panic!("{}: {e}", p.name));
        let wrapper = format!("group_{}_p0", p.name);
        let s = step(&mut env, Action::Click(leaf_under(&obs, &wrapper))).await;
        if p.end_on_click {
            assert_eq!((s.done, s.raw_reward), (true, -1.0), "{}: {:?}", p.name, s.reason);
            assert_eq!(s.shaped_reward, Some(-1.0), "{}: no step costs once done", p.name);
        } else {
            assert!(!s.done, "{} must not end the episode", p.name);
        }
    }
}

#[wasm_bindgen_test]
async fn buttons_link_pages_and_submit_only_on_the_last() {
    let mut env = env();
    // Page 0 has a next_* primitive, page 1 gets a created Next button, page 2 a created Submit;
    // the submit primitive on page 0 and the next_* on the last page are inert.
    let spec = site(&[("username", 0), ("next_login_page", 0), ("submit", 0), ("password", 1), ("next_checkout", 2)]);
    let obs = env.reset(&spec, 1).await.unwrap();
    assert_eq!(obs.page, 0);
    assert!(obs.dom.nodes.iter().all(|n| n.id != "actionable_password"), "page 1 is hidden");
    let inert = step(&mut env, Action::Click(node(&obs, "actionable_submit_p0").r#ref)).await;
    assert!(!inert.done, "submit before the last page does nothing");
    let s = step(&mut env, Action::Click(node(&obs, "actionable_next_login_page_p0").r#ref)).await;
    assert_eq!(s.observation.page, 1);
    node(&s.observation, "actionable_password");
    let s = step(&mut env, Action::Click(node(&s.observation, "actionable_next_p1").r#ref)).await;
    assert_eq!(s.observation.page, 2);
    let inert = step(&mut env, Action::Click(node(&s.observation, "actionable_next_checkout_p2").r#ref)).await;
    assert!(!inert.done && inert.observation.page == 2, "next on the last page is inert");
    let s = step(&mut env, Action::Click(node(&inert.observation, "actionable_submit_p2").r#ref)).await;
    assert_eq!((s.done, s.raw_reward), (true, -1.0), "fields left empty fail the submit: {:?}", s.reason);
    assert!(s.reason.unwrap_or_default().contains("username"));
}

#[wasm_bindgen_test]
async fn the_oracle_solves_every_test_site_and_level() {
    let mut env = env();
    for name in TEST_SITES {
        for level in 0..LEVELS {
            let spec = TaskSpec::generated(&format!("{name}-{level}"), test_site(name, level).unwrap()).unwrap();
            let pages = spec.design().unwrap().pages();
            for seed in 0..20 {
                let mut oracle = SiteOracle::new(pages);
                let mut obs = env.reset(&spec, seed).await.unwrap();
                let (mut best_potential, mut ret, mut trace) = (0.0f64, 0.0, Vec::new());
                let last = loop {
                    let action = oracle.act(&obs).unwrap_or_else(|| panic!("{name}-{level}/{seed}: no action after {trace:?}"));
                    trace.push(action.describe(Some(&obs.dom)));
                    let s = step(&mut env, action).await;
                    best_potential = best_potential.max(s.potential.unwrap());
                    ret += s.shaped_reward.unwrap();
                    if s.done {
                        break s;
                    }
                    obs = s.observation;
                };
                assert_eq!(last.raw_reward, 1.0, "{name}-{level}/{seed}: {:?} after {trace:?}", last.reason);
                assert_eq!(best_potential, 1.0, "{name}-{level}/{seed}: the potential reaches 1");
                // Return: Φ climbs to 1, one step cost per non-final step, +1 at the end.
                let expected = 1.0 + 1.0 - 0.05 * (trace.len() - 1) as f64;
                assert!((ret - expected).abs() < 1e-9, "{name}-{level}/{seed}: return {ret}, expected {expected}");
            }
        }
    }
}

#[wasm_bindgen_test]
async fn wrong_values_fail_the_submit() {
    let mut env = env();
    for name in TEST_SITES {
        let spec = TaskSpec::generated(name, test_site(name, 3).unwrap()).unwrap();
        let design = spec.design().unwrap().clone();
        for key in design.profile_keys() {
            let mut wrong = SiteOracle::wrong(design.pages(), Some(key));
            let mut obs = env.reset(&spec, 11).await.unwrap();
            let last = loop {
                let s = step(&mut env, wrong.act(&obs).expect("an action")).await;
                if s.done {
                    break s;
                }
                obs = s.observation;
            };
            assert_eq!(last.raw_reward, -1.0, "{name}: a wrong {key} must fail, got {:?}", last.reason);
            assert!(last.reason.as_deref().unwrap_or_default().contains(key), "{name}: {:?} names {key}", last.reason);
        }
    }
}

#[wasm_bindgen_test]
async fn the_step_limit_ends_with_its_documented_reward() {
    let mut env = env();
    let spec = TaskSpec::generated("login-0", test_site("login", 0).unwrap()).unwrap();
    let obs = env.reset(&spec, 2).await.unwrap();
    let user = node(&obs, "actionable_username").r#ref;
    let limit = RewardConfig::default().step_limit;
    let mut last = None;
    for i in 1..=limit {
        let s = step(&mut env, Action::Click(user)).await;
        assert_eq!(s.done, i == limit, "step {i}");
        last = Some(s);
    }
    let last = last.unwrap();
    assert_eq!(last.raw_reward, RewardConfig::default().step_limit_reward);
    assert_eq!(last.reason.as_deref(), Some(STEP_LIMIT_REASON));
    assert!(env.step(&Action::Click(user)).await.is_err(), "the episode is over");
    // Another limit and step-limit reward, from the spec.
    let TaskSpec::Generated { name, site } = spec else { unreachable!() };
    let reward = RewardConfig { step_limit: 3, step_limit_reward: -0.5, ..RewardConfig::default() };
    let short = TaskSpec::Generated { name, site: GeneratedSite { reward, ..site } };
    env.reset(&short, 2).await.unwrap();
    for _ in 0..2 {
        assert!(!step(&mut env, Action::Click(user)).await.done);
    }
    let s = step(&mut env, Action::Click(user)).await;
    assert_eq!((s.done, s.raw_reward), (true, -0.5));
}

#[wasm_bindgen_test]
async fn same_design_and_seed_give_the_same_site() {
    let mut env = env();
    let spec = TaskSpec::generated("shopping-3", test_site("shopping", 3).unwrap()).unwrap();
    let a = env.reset(&spec, 42).await.unwrap();
    let html_a = js_json_in(env.iframe(), "document.getElementById('area').innerHTML");
    let _ = env.reset(&spec, 43).await.unwrap();
    let b = env.reset(&spec, 42).await.unwrap();
    let html_b = js_json_in(env.iframe(), "document.getElementById('area').innerHTML");
    assert_eq!(a, b, "same observation");
    assert_eq!(html_a, html_b, "same DOM");
    let c = env.reset(&spec, 43).await.unwrap();
    assert_ne!(a.instruction.fields, c.instruction.fields, "another seed, another profile");
    // The instruction is the profile: JSON utterance, fields by key, tokens from the values only.
    assert!(a.instruction.utterance.starts_with('{'));
    assert_eq!(a.instruction.fields.len(), spec.design().unwrap().profile_keys().len());
    assert!(a.instruction.tokens.iter().all(|t| !t.contains('{') && !t.contains('"') && t != "username"));
}

#[wasm_bindgen_test]
async fn random_designs_render_reset_and_take_random_actions() {
    let mut env = env();
    let sampler = RandomDesign::default();
    let mut rng = Rng::new(2026);
    for i in 0..200u32 {
        let design = sampler.sample(&mut rng);
        let spec = TaskSpec::generated(&format!("random-{i}"), design.clone()).unwrap();
        let obs = env.reset(&spec, i).await.unwrap_or_else(|e| panic!("design {}: {e}", design.to_json()));
        obs.dom.validate().unwrap();
        assert_eq!(obs.instruction.fields.len(), design.profile_keys().len(), "design {}", design.to_json());
        if i % 20 == 0 {
            // A few random steps each tenth design: the page keeps working.
            let mut policy = SiteRandom::new(i as u64);
            let mut obs = obs;
            for _ in 0..5 {
                let s = step(&mut env, policy.act(&obs).unwrap()).await;
                s.observation.dom.validate().unwrap();
                if s.done {
                    break;
                }
                obs = s.observation;
            }
        }
    }
}

#[wasm_bindgen_test]
async fn observations_carry_labels_and_colours() {
    let mut env = env();
    let obs = env.reset(&site(&[("navbar", 0), ("username", 0)]), 1).await.unwrap();
    let user = node(&obs, "actionable_username");
    assert_eq!(user.placeholder, "Username");
    assert_eq!(user.name, "username");
    assert_eq!(user.aria_label, "Username");
    assert!(user.bg_color.starts_with("rgb"), "{:?}", user.bg_color);
    assert!(user.fg_color.starts_with("rgb"), "{:?}", user.fg_color);
    let bar = node(&obs, "group_navbar_p0");
    assert_ne!(bar.bg_color, user.bg_color, "a dark bar and a white field differ");
}

use super::*;
use crate::env::{DomNode, NodeValue, Rect};
use crate::gminiwob::primitive::{PRIMITIVES, by_name};
use crate::gminiwob::test_sites::{LEVELS, RandomDesign, TEST_SITES, test_site};
use crate::policy::Policy;
use crate::policy::gminiwob::{SiteOracle, SiteRandom};
use crate::rng::Rng;

fn sim(design: Design, seed: u32) -> SiteSim {
    SiteSim::new(design, seed, Values::default(), RewardConfig::default())
}

fn design(entries: &[(&str, u32)]) -> Design {
    let e: Vec<(usize, u32)> = entries.iter().map(|(n, p)| (by_name(n).unwrap().index, *p)).collect();
    Design::from_entries(None, &e).unwrap()
}

fn node<'a>(obs: &'a Observation, id: &str) -> &'a DomNode {
    obs.dom.nodes.iter().find(|n| n.id == id).unwrap_or_else(|| panic!("no #{id}"))
}

fn step(sim: &mut SiteSim, action: Action) -> Step {
    sim.step(&action).unwrap_or_else(|e| panic!("{action:?}: {e}"))
}

/// Runs `policy` to the end; the steps taken.
fn run(sim: &mut SiteSim, policy: &mut dyn Policy, mut obs: Observation) -> Vec<Step> {
    let mut steps = Vec::new();
    loop {
        let action = policy.act(&obs).expect("an action");
        let s = step(sim, action);
        obs = s.observation.clone();
        let done = s.done;
        steps.push(s);
        if done {
            return steps;
        }
    }
}

#[test]
fn the_oracle_solves_every_test_site_and_level() {
    for name in TEST_SITES {
        for level in 0..LEVELS {
            let d = test_site(name, level).unwrap();
            for seed in 0..20 {
                let mut sim = sim(d.clone(), seed);
                let obs = sim.reset();
                let steps = run(&mut sim, &mut SiteOracle::new(d.pages()), obs);
                let last = steps.last().unwrap();
                assert_eq!((last.raw_reward, last.reason.as_deref()), (1.0, None), "{name}-{level}/{seed}");
                let best = steps.iter().filter_map(|s| s.potential).fold(0.0, f64::max);
                assert_eq!(best, 1.0, "{name}-{level}/{seed}: Φ reaches 1");
                // Φ climbs to 1, one step cost per step before the last, +1 at the end.
                let ret: f64 = steps.iter().map(|s| s.shaped_reward.unwrap()).sum();
                let expected = 2.0 - 0.05 * (steps.len() - 1) as f64;
                assert!((ret - expected).abs() < 1e-9, "{name}-{level}/{seed}: return {ret}, expected {expected}");
            }
        }
    }
}

#[test]
fn wrong_values_fail_the_submit_and_name_the_field() {
    for name in TEST_SITES {
        let d = test_site(name, 3).unwrap();
        for key in d.profile_keys() {
            let mut sim = sim(d.clone(), 11);
            let obs = sim.reset();
            let steps = run(&mut sim, &mut SiteOracle::wrong(d.pages(), Some(key)), obs);
            let last = steps.last().unwrap();
            assert_eq!(last.raw_reward, -1.0, "{name}: a wrong {key} must fail");
            assert_eq!(last.reason.as_deref(), Some(format!("wrong or missing: {key}").as_str()));
            assert!(last.potential.unwrap() < 1.0);
        }
    }
}

#[test]
fn end_on_click_primitives_end_with_raw_minus_one() {
    for p in PRIMITIVES.iter().filter(|p| p.end_on_click) {
        let mut sim = sim(design(&[(p.name, 0), ("username", 0)]), 5);
        let obs = sim.reset();
        // The first leaf under the wrapper: what a click on the primitive lands on.
        let mut i = obs.dom.index_of(node(&obs, &format!("group_{}_p0", p.name)).r#ref).unwrap();
        while let Some(&c) = obs.dom.nodes[i].children.first() {
            i = c;
        }
        let s = step(&mut sim, Action::Click(obs.dom.nodes[i].r#ref));
        assert_eq!((s.done, s.raw_reward), (true, -1.0), "{}", p.name);
        assert_eq!(s.reason, Some(format!("clicked the {}", p.name)));
        assert_eq!(s.shaped_reward, Some(-1.0), "{}: no step costs once done", p.name);
        assert!(matches!(sim.step(&Action::Click(1)), Err(EnvError::EpisodeDone)));
    }
}

#[test]
fn the_step_limit_ends_with_its_reward() {
    let d = test_site("login", 0).unwrap();
    let mut sim = sim(d.clone(), 2);
    let obs = sim.reset();
    let user = node(&obs, "actionable_username").r#ref;
    let limit = RewardConfig::default().step_limit;
    for i in 1..=limit {
        let s = step(&mut sim, Action::Click(user));
        assert_eq!(s.done, i == limit, "step {i}");
        if s.done {
            assert_eq!((s.raw_reward, s.reason.as_deref()), (0.0, Some(STEP_LIMIT_REASON)));
        } else if i > 1 {
            // Clicking the focused field again changes nothing: −0.05 − 0.5.
            assert!((s.shaped_reward.unwrap() + 0.55).abs() < 1e-12, "step {i}: {:?}", s.shaped_reward);
        }
    }
    assert!(matches!(sim.step(&Action::Click(user)), Err(EnvError::EpisodeDone)));
    let short = RewardConfig { step_limit: 3, step_limit_reward: -0.5, ..RewardConfig::default() };
    let mut sim = SiteSim::new(d, 2, Values::default(), short);
    sim.reset();
    for _ in 0..2 {
        assert!(!step(&mut sim, Action::Click(user)).done);
    }
    let s = step(&mut sim, Action::Click(user));
    assert_eq!((s.done, s.raw_reward), (true, -0.5));
}

#[test]
fn same_seed_same_observation() {
    let d = test_site("shopping", 3).unwrap();
    let mut a = sim(d.clone(), 42);
    let first = a.reset();
    assert_eq!(first, sim(d.clone(), 42).reset());
    assert_ne!(first.instruction, sim(d.clone(), 43).reset().instruction);
    // A reset starts over: refs from 1, nothing visited, page 0.
    let obs = a.reset_seed(42);
    assert_eq!(obs, first);
    first.dom.validate().unwrap();
    assert_eq!(first.dom.nodes[0].id, "gsite");
    assert_eq!(first.dom.nodes[0].r#ref, 1);
    assert_eq!(first.dom.nodes[0].rect, Rect { left: 0.0, top: 0.0, width: 384.0, height: first.dom.nodes[0].rect.height });
}

#[test]
fn the_profile_is_the_instruction() {
    let d = design(&[("username", 0), ("state", 0), ("rememberme", 0)]);
    let obs = sim(d, 4).reset();
    let u = &obs.instruction.utterance;
    let at = |k: &str| u.find(&format!("\"{k}\":")).unwrap_or_else(|| panic!("{k} in {u}"));
    assert!(u.starts_with('{') && at("username") < at("state") && at("state") < at("rememberme"), "profile order: {u}");
    assert_eq!(obs.instruction.fields.len(), 3);
    assert!(obs.instruction.tokens.iter().all(|t| t != "username"));
}

#[test]
fn actions_behave_as_on_the_live_page() {
    let d = design(&[("username", 0), ("password", 0), ("rememberme", 0), ("cabin", 0), ("state", 0), ("navbar", 0)]);
    let mut sim = sim(d, 8);
    let obs = sim.reset();
    let r = |obs: &Observation, id: &str| node(obs, id).r#ref;
    // Typing clicks the field first (MiniWoB's typing action), then appends: the field is
    // focused, tampered and visited.
    step(&mut sim, Action::Type(r(&obs, "actionable_username"), "ab".into()));
    let s = step(&mut sim, Action::Type(r(&obs, "actionable_username"), "cd".into()));
    let user = node(&s.observation, "actionable_username");
    assert_eq!((user.value.as_text(), user.focused, user.tampered), (Some("abcd"), true, true));
    assert!(user.has_class("visited"));
    // Typing into a checkbox clicks it (it toggles); the text goes to the field that has the
    // selection, and the checkbox's value attribute takes it too (the actuator's fallback).
    let s = step(&mut sim, Action::Type(r(&obs, "actionable_rememberme"), "f".into()));
    assert_eq!(node(&s.observation, "actionable_username").value.as_text(), Some("abcdf"));
    let cb = node(&s.observation, "actionable_rememberme");
    assert!(cb.has_class("visited") && cb.tampered);
    assert_eq!(cb.value, NodeValue::Checked(true));
    // A label click focuses and toggles its checkbox; both are clicked.
    let label = s.observation.dom.nodes.iter().find(|n| n.tag == "LABEL" && n.text == "Remember me").unwrap().r#ref;
    let s = step(&mut sim, Action::Click(label));
    let cb = node(&s.observation, "actionable_rememberme");
    assert_eq!((cb.value.clone(), cb.focused, cb.tampered), (NodeValue::Checked(false), true, true));
    assert!(s.observation.dom.get(label).unwrap().tampered);
    // Select by text; a missing option is an error that counts no step.
    let steps = sim.steps();
    let s = step(&mut sim, Action::Select(r(&obs, "actionable_state"), "TX".into()));
    let st = node(&s.observation, "actionable_state");
    assert_eq!((st.value.as_text(), st.text.as_str()), (Some("TX"), "TX"));
    assert_eq!(st.options[0], "Choose…");
    assert!(matches!(sim.step(&Action::Select(r(&obs, "actionable_state"), "ZZ".into())), Err(EnvError::BadTarget { .. })));
    assert!(matches!(sim.step(&Action::Select(r(&obs, "actionable_username"), "TX".into())), Err(EnvError::BadTarget { .. })));
    assert_eq!(sim.steps(), steps + 1);
    // SetValue on the radio group checks by label; a radio click unchecks the others.
    let s = step(&mut sim, Action::SetValue(r(&obs, "actionable_cabin"), "Business".into()));
    assert_eq!(node(&s.observation, "actionable_cabin_i2").value, NodeValue::Checked(true));
    let s = step(&mut sim, Action::Click(r(&obs, "actionable_cabin_i0")));
    assert_eq!(node(&s.observation, "actionable_cabin_i2").value, NodeValue::Checked(false));
    assert!(node(&s.observation, "actionable_cabin").has_class("visited"));
    // SetValue on a label sets the control it labels as the value says: a radio label sets
    // its group by the value, a checkbox label ticks only for a true value.
    let label = |o: &Observation, text: &str| o.dom.nodes.iter().find(|n| n.tag == "LABEL" && n.text == text).unwrap().r#ref;
    let s = step(&mut sim, Action::SetValue(label(&s.observation, "Economy"), "Business".into()));
    assert_eq!(node(&s.observation, "actionable_cabin_i2").value, NodeValue::Checked(true));
    assert_eq!(node(&s.observation, "actionable_cabin_i0").value, NodeValue::Checked(false));
    let s = step(&mut sim, Action::SetValue(label(&s.observation, "Remember me"), "false".into()));
    assert_eq!(node(&s.observation, "actionable_rememberme").value, NodeValue::Checked(false));
    let s = step(&mut sim, Action::SetValue(label(&s.observation, "Remember me"), "true".into()));
    assert_eq!(node(&s.observation, "actionable_rememberme").value, NodeValue::Checked(true));
    let s = step(&mut sim, Action::SetValue(label(&s.observation, "Remember me"), "true".into()));
    assert_eq!(node(&s.observation, "actionable_rememberme").value, NodeValue::Checked(true), "already as wanted");
    // A click on the page itself blurs.
    let s = step(&mut sim, Action::Click(r(&obs, "page0")));
    assert!(s.observation.dom.nodes.iter().all(|n| !n.focused));
    // SetValue replaces; unknown refs are refused.
    let s = step(&mut sim, Action::SetValue(r(&obs, "actionable_username"), "x\ny".into()));
    assert_eq!(node(&s.observation, "actionable_username").value.as_text(), Some("xy"), "line breaks dropped");
    assert!(matches!(sim.step(&Action::Click(9999)), Err(EnvError::UnknownRef(9999))));
    // Typing into the submit button presses it: the form is judged and the episode ends.
    let s = step(&mut sim, Action::Type(r(&obs, "actionable_submit_p0"), "e".into()));
    assert!(s.done);
}

#[test]
fn pages_show_one_at_a_time_and_refs_grow_in_first_seen_order() {
    let d = test_site("shopping", 1).unwrap();
    let mut sim = sim(d, 3);
    let obs = sim.reset();
    assert!(obs.dom.nodes.iter().all(|n| n.id != "actionable_username"), "page 1 is hidden");
    let n = obs.dom.nodes.len() as NodeRef;
    assert!(obs.dom.nodes.iter().map(|n| n.r#ref).eq(1..=n), "refs in document order");
    let s = step(&mut sim, Action::Click(node(&obs, "actionable_next_login_page_p0").r#ref));
    assert_eq!(s.observation.page, 1);
    assert_eq!(node(&s.observation, "page1").r#ref, n + 1, "page 1 is numbered after all of page 0");
    assert!(node(&s.observation, "actionable_username").r#ref > n + 1);
    assert_eq!(node(&s.observation, "gsite").r#ref, 1);
    assert!(s.shaped_reward.unwrap() < 0.0 && s.shaped_reward.unwrap() > -0.1, "a page change is a change");
}

#[test]
fn boxes_are_inside_the_site_and_text_never_sits_beside_elements() {
    let mut rng = Rng::new(9);
    for i in 0..50 {
        let d = RandomDesign::default().sample(&mut rng);
        let mut sim = sim(d, i);
        let obs = sim.reset();
        let root = obs.dom.nodes[0].rect;
        for (k, n) in obs.dom.nodes.iter().enumerate() {
            let r = n.rect;
            assert!(r.width > 0.0 && r.height > 0.0 && r.left >= 0.0 && r.top >= 0.0, "{} {r:?}", n.tag);
            assert!(r.left + r.width <= root.width && r.top + r.height <= root.height, "{} #{} outside", n.tag, n.id);
            if let Some(p) = n.parent {
                let q = obs.dom.nodes[p].rect;
                assert!(r.left >= q.left && r.top >= q.top, "node {k} starts outside its parent");
                assert!(
                    r.left + r.width <= q.left + q.width && r.top + r.height <= q.top + q.height,
                    "node {k} ends outside its parent {:?} {:?}",
                    n.id,
                    obs.dom.nodes[p].id
                );
            }
            assert!(n.is_leaf() || n.text.is_empty());
            assert_ne!(n.tag, crate::env::TEXT_TAG);
        }
    }
}

#[test]
fn random_designs_reset_and_step_without_panics() {
    let sampler = RandomDesign::default();
    let mut rng = Rng::new(2026);
    for i in 0..200u32 {
        let d = sampler.sample(&mut rng);
        let mut sim = sim(d.clone(), i);
        let obs = sim.reset();
        obs.dom.validate().unwrap();
        assert_eq!(obs.instruction.fields.len(), d.profile_keys().len());
        let mut policy = SiteRandom::new(i as u64);
        let mut obs = obs;
        for _ in 0..30 {
            let s = step(&mut sim, policy.act(&obs).unwrap());
            s.observation.dom.validate().unwrap();
            assert!(s.potential.unwrap() >= 0.0 && s.potential.unwrap() <= 1.0);
            if s.done {
                break;
            }
            obs = s.observation;
        }
    }
}

#[test]
fn the_environment_trait_runs_generated_tasks_only() {
    use crate::util::block_on;
    let task = TaskSpec::generated("login-1", test_site("login", 1).unwrap()).unwrap();
    let mut sim = SiteSim::from_task(&task, 1).unwrap();
    let a = block_on(Environment::reset(&mut sim, &task, 7)).unwrap();
    assert_eq!(a, SiteSim::from_task(&task, 7).unwrap().reset());
    let s = block_on(Environment::step(&mut sim, &Action::Click(1))).unwrap();
    assert!(!s.done);
    let other = TaskSpec::builtin("click-button").unwrap();
    assert!(matches!(block_on(Environment::reset(&mut sim, &other, 1)), Err(EnvError::UnknownTask(_))));
    assert!(SiteSim::from_task(&other, 1).is_err());
}

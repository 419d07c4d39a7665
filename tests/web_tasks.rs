//! Every task of the lab, in a real browser:
//! - for each task (in each data mode) and 20 seeds, the scripted oracle gets raw reward 1 and the
//!   wrong script gets the failure reward from the page's own judgement of its mistake (the four
//!   tasks whose page can only time out are checked against their clock instead);
//! - the same seed gives the same utterance and the same DOM;
//! - `tasks/index.json` agrees with the pages (time limits, structured field keys);
//! - the train/test splits differ the way the pages define them;
//! - every task fits its task area (MiniWoB's 160x210, or its own size) and everything the oracle
//!   clicks is really under the pointer when it is clicked.
#![cfg(target_arch = "wasm32")]

mod common;

use std::collections::{BTreeSet, HashMap};

use common::{js_eval_in, js_json_in, new_frame};
use wasm_bindgen_test::*;
use weblab::env::{Action, EnvConfig, Environment, NodeRef, Observation, STEP_LIMIT_REASON, TaskInfo, builtin_tasks};
use weblab::policy::Policy;
use weblab::policy::oracle::{Script, scripted};
use weblab::runner::{NO_ACTION_REASON, run_episode};
use weblab::task::TaskSpec;
use weblab::web::IframeEnv;

wasm_bindgen_test_configure!(run_in_browser);

const SEEDS: u32 = 20;
/// Enough for the longest oracle; only the wrong scripts of `TIMEOUT_ONLY` tasks get here.
const MAX_STEPS: u32 = 60;
/// Tasks whose page, as in MiniWoB, fails an episode only when its time runs out: nothing a wrong
/// click does ends them. Their wrong scripts run into the step limit in the main test, and
/// `timeout_only_tasks_fail_by_their_own_clock` checks that the page's time limit fails them.
const TIMEOUT_ONLY: [&str; 4] = ["click-test", "focus-text", "click-dialog", "click-collapsible"];
/// The core's reason for an episode whose time ran out.
const TIMED_OUT: &str = "timed out";

/// The tasks under test: all of them, or those named (comma-separated) in `WEBLAB_TASKS` at
/// build time (`WEBLAB_TASKS=click-tab,click-tab-2 cargo test ...` while developing a task).
fn tasks() -> Vec<&'static TaskInfo> {
    builtin_tasks().iter().filter(|t| selected(&t.name)).collect()
}

fn selected(name: &str) -> bool {
    option_env!("WEBLAB_TASKS").is_none_or(|only| only.split(',').map(str::trim).any(|o| o == name))
}

fn modes(task: &TaskInfo) -> Vec<String> {
    if task.modes.is_empty() { vec!["train".into()] } else { task.modes.clone() }
}

fn held(mode: &str) -> EnvConfig {
    EnvConfig { max_steps: Some(MAX_STEPS), hold_clock: true, data_mode: mode.into(), ..EnvConfig::default() }
}

#[wasm_bindgen_test]
async fn oracle_solves_and_wrong_script_fails_every_task() {
    let mut env = IframeEnv::new(new_frame(), held("train"));
    let mut failures = Vec::new();
    let (mut oracle_episodes, mut wrong_episodes) = (0, 0);
    for task in tasks() {
        let spec = TaskSpec::builtin_inline(&task.name).unwrap();
        let timeout_only = TIMEOUT_ONLY.contains(&task.name.as_str());
        for mode in modes(task) {
            env.set_config(held(&mode));
            for seed in 0..SEEDS {
                for script in [Script::Oracle, Script::Wrong] {
                    let mut policy = scripted(&task.name, script).expect("script");
                    let mut trace = Vec::new();
                    let result = run_episode(&mut env, &mut policy, &spec, seed, |a, s| {
                        trace.push(format!("{a:?} -> raw {} done {}", s.raw_reward, s.done));
                    })
                    .await;
                    // The last few steps say enough (a dawdling script makes sixty alike).
                    let trace = format!("{} steps, ending {:?}", trace.len(), &trace[trace.len().saturating_sub(3)..]);
                    match script {
                        Script::Oracle => oracle_episodes += 1,
                        Script::Wrong => wrong_episodes += 1,
                    }
                    let label = format!("{} [{mode}] seed {seed} {script:?}", task.name);
                    let r = match result {
                        Ok(r) => r,
                        Err(e) => {
                            failures.push(format!("{label}: {e}"));
                            continue;
                        }
                    };
                    let reason = r.reason.as_deref();
                    let problem = match script {
                        Script::Oracle if r.raw_reward != 1.0 => Some(format!("raw reward {}", r.raw_reward)),
                        Script::Oracle => None,
                        Script::Wrong if r.raw_reward != -1.0 => Some(format!("raw reward {}", r.raw_reward)),
                        // Nothing but the clock can fail these; the clock is held here.
                        Script::Wrong if timeout_only => {
                            (reason != Some(STEP_LIMIT_REASON)).then(|| "the page ended it before its time ran out".into())
                        }
                        // Elsewhere the page itself must judge the mistake: not the lab's step
                        // limit, not an idle policy, not the page's clock.
                        Script::Wrong => matches!(reason, None | Some(STEP_LIMIT_REASON | NO_ACTION_REASON | TIMED_OUT))
                            .then(|| "the page did not judge it a mistake".into()),
                    };
                    if let Some(p) = problem {
                        failures.push(format!("{label}: {p} (reason {reason:?}) after {trace}"));
                    }
                }
            }
        }
    }
    web_sys::console::log_1(&format!("oracle episodes: {oracle_episodes}, wrong-script episodes: {wrong_episodes}").into());
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

#[wasm_bindgen_test]
async fn timeout_only_tasks_fail_by_their_own_clock() {
    // The page's clock runs between actions here, and each step waits a little so its timer can
    // fire; the step cap is only a backstop.
    let cfg = EnvConfig { hold_clock: false, settle_ms: 20, max_steps: Some(1000), ..EnvConfig::default() };
    let mut env = IframeEnv::new(new_frame(), cfg);
    for name in TIMEOUT_ONLY.into_iter().filter(|n| selected(n)) {
        let spec = TaskSpec::builtin_inline(name).unwrap();
        env.reset(&spec, 0).await.unwrap(); // loads the page
        // A short limit instead of the page's ten seconds, set where a page sets its own.
        js_eval_in(env.iframe(), "core.EPISODE_MAX_TIME = 300");
        let mut policy = scripted(name, Script::Wrong).unwrap();
        let r = run_episode(&mut env, &mut policy, &spec, 7, |_, _| {}).await.unwrap();
        assert_eq!((r.raw_reward, r.reason.as_deref()), (-1.0, Some(TIMED_OUT)), "{name}: {r:?}");
    }
}

#[wasm_bindgen_test]
async fn same_seed_gives_same_utterance_and_dom() {
    let mut env = IframeEnv::new(new_frame(), EnvConfig::default());
    for task in tasks() {
        let spec = TaskSpec::builtin_inline(&task.name).unwrap();
        for mode in modes(task) {
            env.set_config(EnvConfig { data_mode: mode.clone(), ..EnvConfig::default() });
            let mut distinct = std::collections::HashSet::new();
            for seed in [3, 17, 29] {
                let a = env.reset(&spec, seed).await.unwrap();
                let b = env.reset(&spec, seed).await.unwrap();
                assert_eq!(a, b, "{} [{mode}] seed {seed} is not reproducible", task.name);
                distinct.insert(format!("{:?}", (&a.instruction, &a.dom)));
            }
            assert!(distinct.len() > 1, "{} [{mode}]: three seeds gave the same episode", task.name);
        }
    }
}

#[wasm_bindgen_test]
async fn index_agrees_with_the_pages() {
    let mut env = IframeEnv::new(new_frame(), held("train"));
    let mut problems = Vec::new();
    for task in tasks() {
        let spec = TaskSpec::builtin_inline(&task.name).unwrap();
        let declared: BTreeSet<&str> = task.fields.iter().map(String::as_str).collect();
        let mut seen: BTreeSet<String> = BTreeSet::new();
        for mode in modes(task) {
            env.set_config(held(&mode));
            for seed in 0..SEEDS {
                let obs = env.reset(&spec, seed).await.unwrap();
                for f in &obs.instruction.fields {
                    if !declared.contains(f.key.as_str()) {
                        problems.push(format!("{} [{mode}] seed {seed}: field \"{}\" is not in index.json", task.name, f.key));
                    }
                    seen.insert(f.key.clone());
                }
            }
        }
        let unseen: Vec<&str> = declared.iter().copied().filter(|k| !seen.contains(*k)).collect();
        if !unseen.is_empty() {
            problems.push(format!("{}: declared fields {unseen:?} never appeared in {SEEDS} seeds", task.name));
        }
        // The page's own limit, as it set it (the lab's core can hold its clock, so the lab left
        // it alone).
        let limit = js_eval_in(env.iframe(), "core.EPISODE_MAX_TIME").as_f64();
        if limit != Some(task.time_limit_s as f64 * 1000.0) {
            problems.push(format!("{}: index.json says {} s, the page {limit:?} ms", task.name, task.time_limit_s));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

async fn episode_in(env: &mut IframeEnv, spec: &TaskSpec, mode: &str, seed: u32) -> Observation {
    env.set_config(held(mode));
    env.reset(spec, seed).await.unwrap()
}

/// The utterance with the field values put back as `{slot}`s: the phrasing template it came from.
fn template_of(obs: &Observation) -> String {
    let ins = &obs.instruction;
    let mut t = ins.utterance.clone();
    // Reply texts are ordinary words, so only their quoted occurrence is the slot.
    if let Some(m) = ins.field("message") {
        t = t.replace(&format!("\"{m}\""), "\"{message}\"");
    }
    for key in ["to", "by"] {
        if let Some(v) = ins.field(key) {
            t = t.replace(v, &format!("{{{key}}}"));
        }
    }
    t
}

#[wasm_bindgen_test]
async fn train_and_test_modes_differ_as_the_pages_define_them() {
    let mut env = IframeEnv::new(new_frame(), held("train"));

    // click-checkboxes-transfer: zero to three targets in training, four to six in test.
    if selected("click-checkboxes-transfer") {
        let spec = TaskSpec::builtin_inline("click-checkboxes-transfer").unwrap();
        let mut counts: HashMap<&str, BTreeSet<usize>> = HashMap::new();
        for seed in 0..SEEDS {
            for (mode, allowed) in [("train", 0..=3), ("test", 4..=6)] {
                let obs = episode_in(&mut env, &spec, mode, seed).await;
                let targets = obs.instruction.field("targets").expect("targets field");
                let n = targets.split(',').map(str::trim).filter(|s| !s.is_empty()).count();
                assert!(allowed.contains(&n), "[{mode}] seed {seed}: {n} targets ({targets:?}), want {allowed:?}");
                counts.entry(mode).or_default().insert(n);
            }
        }
        for mode in ["train", "test"] {
            assert!(counts[mode].len() > 1, "[{mode}]: every seed asked for {:?} boxes", counts[mode]);
        }
    }

    // email-inbox-nl: training and test phrasings come from disjoint sets of templates.
    if selected("email-inbox-nl") {
        let spec = TaskSpec::builtin_inline("email-inbox-nl").unwrap();
        let mut templates: HashMap<&str, BTreeSet<String>> = HashMap::new();
        for seed in 0..SEEDS {
            for mode in ["train", "test"] {
                let obs = episode_in(&mut env, &spec, mode, seed).await;
                for key in ["task", "by"] {
                    assert!(obs.instruction.field(key).is_some(), "[{mode}] seed {seed}: no {key} field");
                }
                let t = template_of(&obs);
                assert!(t.contains("{by}"), "[{mode}] seed {seed}: the sender is not in {:?}", obs.instruction.utterance);
                templates.entry(mode).or_default().insert(t);
            }
        }
        let (train, test) = (&templates["train"], &templates["test"]);
        assert!(train.len() > 2 && test.len() > 2, "too few phrasings: {train:#?} {test:#?}");
        let shared: Vec<&String> = train.intersection(test).collect();
        assert!(shared.is_empty(), "phrasings in both modes: {shared:#?}");
    }
}

// ------------------------------------------------------------------------------- layout

/// Half a pixel of slack for subpixel layout.
const SLACK: f32 = 0.5;

/// Records, for every `mousedown` the page gets, whether the element under the pointer is the
/// event's target (or inside it) at that moment.
const HIT_LOG: &str = r#"(function () {
  if (window.__hitLog) return;
  window.__hitLog = [];
  function desc(e) {
    if (!e) return 'nothing';
    var s = e.tagName.toLowerCase() + (e.id ? '#' + e.id : '');
    if (typeof e.className === 'string' && e.className.trim()) s += '.' + e.className.trim().split(/\s+/).join('.');
    var t = (e.textContent || '').replace(/\s+/g, ' ').trim();
    return t ? s + ' "' + t.slice(0, 40) + '"' : s;
  }
  document.addEventListener('mousedown', function (e) {
    var hit = document.elementFromPoint(e.clientX, e.clientY);
    window.__hitLog.push({ ok: !!hit && e.target.contains(hit), target: desc(e.target), hit: desc(hit), x: e.clientX, y: e.clientY });
  }, true);
})()"#;

/// (left, top, right, bottom)
type Edges = (f32, f32, f32, f32);

/// The inner (scrolling) boxes of the page's scroll containers, by ref: leaves inside them are
/// seen only through them.
fn scroll_boxes(env: &mut IframeEnv) -> HashMap<NodeRef, Edges> {
    let mut out = HashMap::new();
    let Some(doc) = env.page_document() else { return out };
    let (Some(win), Some(body)) = (doc.default_view(), doc.body()) else { return out };
    let all = body.get_elements_by_tag_name("*");
    for i in 0..all.length() {
        let Some(el) = all.item(i) else { continue };
        let Ok(Some(style)) = win.get_computed_style(&el) else { continue };
        let scrolls = |p: &str| matches!(style.get_property_value(p).unwrap_or_default().as_str(), "auto" | "scroll");
        if scrolls("overflow-y") || scrolls("overflow-x") {
            let r = el.get_bounding_client_rect();
            let (l, t) = (r.left() as f32 + el.client_left() as f32, r.top() as f32 + el.client_top() as f32);
            out.insert(env.ref_of(&el), (l, t, l + el.client_width() as f32, t + el.client_height() as f32));
        }
    }
    out
}

/// Every visible leaf (the part its scrolling ancestors show) inside the task area, which has the
/// task's size.
fn check_layout(env: &mut IframeEnv, obs: &Observation, size: [u32; 2], label: &str, problems: &mut Vec<String>) {
    let dom = &obs.dom;
    let Some(wrap) = dom.nodes.iter().find(|n| n.id == "wrap") else {
        problems.push(format!("{label}: no #wrap"));
        return;
    };
    let w = wrap.rect;
    if (w.width - size[0] as f32).abs() > SLACK || (w.height - size[1] as f32).abs() > SLACK {
        problems.push(format!("{label}: task area is {}x{}, want {}x{}", w.width, w.height, size[0], size[1]));
    }
    let scrollers = scroll_boxes(env);
    for (i, n) in dom.nodes.iter().enumerate().filter(|(_, n)| n.is_leaf()) {
        let r = n.rect;
        let mut b = (r.left, r.top, r.left + r.width, r.top + r.height);
        let mut up = n.parent;
        while let Some(p) = up {
            if let Some(c) = scrollers.get(&dom.nodes[p].r#ref) {
                b = (b.0.max(c.0), b.1.max(c.1), b.2.min(c.2), b.3.min(c.3));
            }
            up = dom.nodes[p].parent;
        }
        if b.2 <= b.0 || b.3 <= b.1 {
            continue; // scrolled out of view
        }
        let inside = b.0 >= w.left - SLACK && b.1 >= w.top - SLACK && b.2 <= w.left + w.width + SLACK && b.3 <= w.top + w.height + SLACK;
        if !inside {
            problems.push(format!(
                "{label}: leaf #{i} {} id={:?} classes={:?} text={:?} spans ({:.1},{:.1})-({:.1},{:.1}), outside the task area ({:.1},{:.1})-({:.1},{:.1})",
                n.tag, n.id, n.classes, n.text, b.0, b.1, b.2, b.3, w.left, w.top, w.left + w.width, w.top + w.height
            ));
        }
    }
}

#[wasm_bindgen_test]
async fn every_task_fits_its_area_and_oracle_clicks_hit_their_target() {
    let mut env = IframeEnv::new(new_frame(), held("train"));
    let mut problems = Vec::new();
    let mut episodes = 0;
    for task in tasks() {
        let spec = TaskSpec::builtin_inline(&task.name).unwrap();
        let size = task.size.unwrap_or([160, 210]);
        for mode in modes(task) {
            // Every seed: some layouts overflow on only a few in ten.
            for seed in 0..SEEDS {
                let mut obs = episode_in(&mut env, &spec, &mode, seed).await;
                js_eval_in(env.iframe(), HIT_LOG);
                js_eval_in(env.iframe(), "window.__hitLog.length = 0");
                let mut policy = scripted(&task.name, Script::Oracle).unwrap();
                policy.reset();
                episodes += 1;
                for step in 0.. {
                    let label = format!("{} [{mode}] seed {seed} step {step}", task.name);
                    check_layout(&mut env, &obs, size, &label, &mut problems);
                    let Some(action) = policy.act(&obs) else {
                        problems.push(format!("{label}: the oracle had no action"));
                        break;
                    };
                    let s = match env.step(&action).await {
                        Ok(s) => s,
                        Err(e) => {
                            problems.push(format!("{label}: {action:?}: {e}"));
                            break;
                        }
                    };
                    let hits = js_json_in(env.iframe(), "window.__hitLog.splice(0)");
                    let hits = hits.as_array().cloned().unwrap_or_default();
                    if matches!(action, Action::Click(_)) && hits.len() != 1 {
                        problems.push(format!("{label}: {action:?} made {} mousedowns", hits.len()));
                    }
                    for h in hits.iter().filter(|h| h["ok"] != true) {
                        problems.push(format!("{label}: {action:?} pressed {} at ({}, {}), but {} is there", h["target"], h["x"], h["y"], h["hit"]));
                    }
                    if s.done {
                        if s.raw_reward != 1.0 {
                            problems.push(format!("{label}: the oracle ended with {} ({:?})", s.raw_reward, s.reason));
                        }
                        break;
                    }
                    obs = s.observation;
                }
            }
        }
    }
    web_sys::console::log_1(&format!("layout: {episodes} oracle episodes followed step by step").into());
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}

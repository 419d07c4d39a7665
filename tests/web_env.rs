//! The live-DOM environment in a real browser: reading, every action kind, episode control and
//! the errors a user can run into. Run by `scripts/test.sh` (wasm-bindgen-test in headless
//! Chromium).
#![cfg(target_arch = "wasm32")]

mod common;

use common::{fixture_page, js_eval_in, new_frame};
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;
use weblab::env::{Action, DomNode, EnvConfig, EnvError, Environment, NodeValue, Observation};
use weblab::task::TaskSpec;
use weblab::web::IframeEnv;

wasm_bindgen_test_configure!(run_in_browser);

/// A page with one of everything, logging the events the page's own handlers see.
const KITCHEN_SINK: &str = r##"
core.EPISODE_MAX_TIME = 10000;
window.LOG = [];
function log(x) { window.LOG.push(x); }
function genProblem() {
  window.LOG = [];
  var words = ['alpha', 'bravo', 'charlie', 'delta', 'echo'];
  var w = core.sample(words);
  core.setInstruction('Pick "' + w + '" and press Go.', { target: w, rank: 3 });
  var area = document.getElementById('area');
  area.innerHTML =
    '<p id="mixed">Hello <b>world</b> again</p>' +
    '<label><input type="checkbox" id="cb" class="box tick">cb</label>' +
    '<label><input type="radio" name="r" id="r1">one</label><label><input type="radio" name="r" id="r2">two</label>' +
    '<select id="sel"><option value="a">Apple pie</option><option value="b">Banana</option></select>' +
    '<input type="text" id="txt"><input type="password" id="pw">' +
    '<a href="#" id="lnk">a link</a>' +
    '<button id="go"><span>Go</span> now</button>' +
    '<div id="hidden" style="display:none"><button>ghost</button></div>' +
    '<button id="end">End</button>';
  document.getElementById('cb').addEventListener('change', function (e) { log('change:cb:' + e.target.checked); });
  document.getElementById('r2').addEventListener('change', function () { log('change:r2'); });
  document.getElementById('sel').addEventListener('change', function (e) { log('change:sel:' + e.target.value); });
  document.getElementById('txt').addEventListener('input', function (e) { log('input:txt:' + e.target.value); });
  document.getElementById('txt').addEventListener('click', function () { log('click:txt'); });
  document.getElementById('pw').addEventListener('input', function (e) { log('input:pw:' + e.target.value); });
  document.getElementById('lnk').addEventListener('click', function (e) { e.preventDefault(); log('click:lnk'); });
  document.getElementById('go').addEventListener('click', function () { log('click:go'); });
  document.getElementById('go').addEventListener('mousedown', function () { log('mousedown:go'); });
  document.getElementById('end').addEventListener('click', function () { log('click:end'); core.endEpisode(1, true); });
}
"##;

fn by_id<'a>(obs: &'a Observation, id: &str) -> &'a DomNode {
    obs.dom.nodes.iter().find(|n| n.id == id).unwrap_or_else(|| panic!("no #{id} in {:#?}", obs.dom.nodes))
}

async fn sink_env(cfg: EnvConfig) -> (IframeEnv, TaskSpec, Observation) {
    let mut env = IframeEnv::new(new_frame(), cfg);
    let spec = fixture_page("kitchen-sink", KITCHEN_SINK);
    let obs = env.reset(&spec, 7).await.expect("reset");
    (env, spec, obs)
}

fn log_of(env: &IframeEnv) -> Vec<String> {
    let v = js_eval_in(env.iframe(), "JSON.stringify(window.LOG)");
    serde_json::from_str(&v.as_string().unwrap()).unwrap()
}

#[wasm_bindgen_test]
async fn reads_instruction_fields_and_graph() {
    let (_env, _spec, obs) = sink_env(EnvConfig::default()).await;
    let ins = &obs.instruction;
    assert!(ins.utterance.starts_with("Pick \""), "{}", ins.utterance);
    let target = ins.field("target").expect("target field");
    assert!(ins.tokens.iter().any(|t| t == target), "goal tokens {:?} lack {target}", ins.tokens);
    assert_eq!(ins.field("rank"), Some("3"), "numeric fields arrive as text");
    obs.dom.validate().unwrap();
    assert_eq!(obs.dom.nodes[0].tag, "BODY");
    // The contract's chrome and hidden things are not part of the graph.
    for skipped in ["query", "sync-task-cover", "reward-display", "hidden"] {
        assert!(obs.dom.nodes.iter().all(|n| n.id != skipped), "#{skipped} should be skipped");
    }
    assert!(obs.dom.nodes.iter().all(|n| n.text != "ghost"));
    assert!(obs.dom.nodes.iter().all(|n| n.tag != "OPTION" && n.tag != "SCRIPT"));

    assert_eq!(by_id(&obs, "cb").tag, "INPUT_checkbox");
    assert_eq!(by_id(&obs, "cb").value, NodeValue::Checked(false));
    assert_eq!(by_id(&obs, "cb").classes, ["box", "tick"]);
    assert_eq!(by_id(&obs, "r1").tag, "INPUT_radio");
    assert_eq!(by_id(&obs, "txt").tag, "INPUT_text");
    assert_eq!(by_id(&obs, "txt").value, NodeValue::Text(String::new()));
    assert_eq!(by_id(&obs, "pw").tag, "INPUT_password");
    let sel = by_id(&obs, "sel");
    assert_eq!((sel.tag.as_str(), sel.options.clone()), ("SELECT", vec!["Apple pie".to_string(), "Banana".into()]));
    assert_eq!(sel.text, "Apple pie");
    assert_eq!(by_id(&obs, "lnk").text, "a link");

    // Mixed content: P has t("Hello"), B("world"), t("again"); B is a leaf with its text.
    let p_index = obs.dom.nodes.iter().position(|n| n.id == "mixed").unwrap();
    let p = &obs.dom.nodes[p_index];
    let kids: Vec<(&str, &str)> = p.children.iter().map(|&c| (obs.dom.nodes[c].tag.as_str(), obs.dom.nodes[c].text.as_str())).collect();
    assert_eq!(kids, [("t", "Hello"), ("B", "world"), ("t", "again")]);
    assert!(p.text.is_empty(), "non-leaves carry no text");

    // Boxes are real layout: inside the page, non-empty, in order down the page.
    for n in &obs.dom.nodes {
        assert!(n.rect.width > 0.0 && n.rect.height > 0.0, "{} has an empty box", n.tag);
    }
    assert!(by_id(&obs, "end").rect.top >= by_id(&obs, "mixed").rect.top);
    let (_, go_y) = by_id(&obs, "go").rect.center();
    assert!(go_y > 0.0 && go_y < 400.0);
    assert!(obs.dom.nodes[0].focused, "BODY is focused when nothing else is");
}

#[wasm_bindgen_test]
async fn every_action_kind_reaches_the_page() {
    let (mut env, _spec, obs) = sink_env(EnvConfig::default()).await;
    let r = |id: &str| by_id(&obs, id).r#ref;

    let s = env.step(&Action::Click(r("cb"))).await.unwrap();
    assert_eq!(by_id(&s.observation, "cb").value, NodeValue::Checked(true));
    assert!(by_id(&s.observation, "cb").tampered, "a clicked element is tampered");
    assert!(by_id(&s.observation, "cb").focused, "a clicked checkbox takes focus");
    assert!(!by_id(&s.observation, "r2").tampered);

    let s = env.step(&Action::Click(r("r2"))).await.unwrap();
    assert_eq!(by_id(&s.observation, "r2").value, NodeValue::Checked(true));
    assert_eq!(by_id(&s.observation, "r1").value, NodeValue::Checked(false));

    let s = env.step(&Action::Select(r("sel"), "Banana".into())).await.unwrap();
    assert_eq!(by_id(&s.observation, "sel").value, NodeValue::Text("b".into()));
    assert_eq!(by_id(&s.observation, "sel").text, "Banana");
    env.step(&Action::Select(r("sel"), "a".into())).await.unwrap(); // by value works too

    env.step(&Action::Type(r("txt"), "Hello".into())).await.unwrap();
    let s = env.step(&Action::Type(r("txt"), " world".into())).await.unwrap();
    assert_eq!(by_id(&s.observation, "txt").value, NodeValue::Text("Hello world".into()), "typing appends");
    assert!(by_id(&s.observation, "txt").focused);
    assert!(by_id(&s.observation, "txt").tampered, "typing clicks the field first, as MiniWoB's typing action does");

    let s = env.step(&Action::Type(r("pw"), "s3cret".into())).await.unwrap();
    assert_eq!(by_id(&s.observation, "pw").value, NodeValue::Text("s3cret".into()));

    let s = env.step(&Action::Click(r("lnk"))).await.unwrap();
    assert!(!s.done);

    // Nested text: clicking the text "now" inside the button clicks the button.
    let go = obs.dom.nodes.iter().position(|n| n.id == "go").unwrap();
    let now = obs.dom.nodes[go].children.iter().map(|&c| &obs.dom.nodes[c]).find(|n| n.text == "now").unwrap();
    assert_eq!(now.tag, "t");
    env.step(&Action::Click(now.r#ref)).await.unwrap();
    let span = obs.dom.nodes[go].children.iter().map(|&c| &obs.dom.nodes[c]).find(|n| n.tag == "SPAN").unwrap();
    let s = env.step(&Action::Click(span.r#ref)).await.unwrap();
    assert!(by_id(&s.observation, "go").focused, "a click on text inside a button focuses the button");

    assert_eq!(
        log_of(&env),
        [
            "change:cb:true",
            "change:r2",
            "change:sel:b",
            "change:sel:a",
            "click:txt",
            "input:txt:Hello",
            "click:txt",
            "input:txt:Hello world",
            "input:pw:s3cret",
            "click:lnk",
            "mousedown:go",
            "click:go",
            "mousedown:go",
            "click:go",
        ]
    );

    // Refs are stable within the episode.
    let again = env.observe().unwrap();
    for id in ["cb", "sel", "txt", "go", "end"] {
        assert_eq!(by_id(&again, id).r#ref, r(id), "#{id} changed ref");
    }

    // Bad targets are refused with a reason and do not count as steps.
    let steps = env.steps();
    let err = env.step(&Action::Select(r("txt"), "x".into())).await.unwrap_err();
    assert!(matches!(err, EnvError::BadTarget { .. }), "{err}");
    let err = env.step(&Action::Select(r("sel"), "Cherry".into())).await.unwrap_err();
    assert!(err.to_string().contains("no such option"), "{err}");
    assert_eq!(env.step(&Action::Click(9999)).await.unwrap_err(), EnvError::UnknownRef(9999));
    assert_eq!(env.steps(), steps);
}

/// A click is a real mouse press as the page's handlers see it: pointer then mouse events, down
/// then up, at the element's centre, bubbling out of shadow roots, with the fields a page checks
/// (a pointer's type and primacy; a mouse event's click count). `click()` gives the click itself.
#[wasm_bindgen_test]
async fn a_click_is_a_mouse_press_with_the_fields_a_page_checks() {
    let (mut env, _spec, obs) = sink_env(EnvConfig::default()).await;
    js_eval_in(
        env.iframe(),
        r#"window.PRESS = [];
        ['pointerdown', 'mousedown', 'pointerup', 'mouseup', 'click'].forEach(function (kind) {
          document.getElementById('end').addEventListener(kind, function (e) {
            var r = e.target.getBoundingClientRect();
            window.PRESS.push([e.type, e.constructor.name, e.pointerType || '', !!e.isPrimary, e.buttons, e.detail,
              e.bubbles, e.cancelable, e.composed, e.view === window, e.isTrusted,
              Math.abs(e.clientX - (r.left + r.width / 2)) <= 1 && Math.abs(e.clientY - (r.top + r.height / 2)) <= 1].join(' '));
          });
        }); 0"#,
    );
    env.step(&Action::Click(by_id(&obs, "end").r#ref)).await.unwrap();
    let v = js_eval_in(env.iframe(), "JSON.stringify(window.PRESS)");
    let press: Vec<String> = serde_json::from_str(&v.as_string().unwrap()).unwrap();
    assert_eq!(
        press,
        [
            "pointerdown PointerEvent mouse true 1 0 true true true true false true",
            "mousedown MouseEvent  false 1 1 true true true true false true",
            "pointerup PointerEvent mouse true 0 0 true true true true false true",
            "mouseup MouseEvent  false 0 1 true true true true false true",
            // HTMLElement.click(): the browser fills this one (no coordinates, detail 0).
            "click PointerEvent  false 0 0 true true true true false false",
        ]
    );
}

#[wasm_bindgen_test]
async fn done_episode_refuses_actions_and_reset_renumbers() {
    let (mut env, spec, obs) = sink_env(EnvConfig::default()).await;
    let s = env.step(&Action::Click(by_id(&obs, "end").r#ref)).await.unwrap();
    assert!(s.done);
    assert_eq!(s.raw_reward, 1.0);
    assert!(s.reward > 0.0 && s.reward <= 1.0);
    assert_eq!(s.reason, None);
    assert_eq!(env.step(&Action::Click(by_id(&obs, "go").r#ref)).await.unwrap_err(), EnvError::EpisodeDone);
    assert_eq!(log_of(&env), ["click:end"], "the refused click never reached the page");

    let obs2 = env.reset(&spec, 7).await.unwrap();
    assert_eq!(obs2.dom.nodes[0].r#ref, 1, "refs start at 1 each episode");
    assert!(obs2.dom.nodes.iter().all(|n| !n.tampered), "tamper marks belong to one episode");
    assert!(log_of(&env).is_empty());
}

#[wasm_bindgen_test]
async fn step_limit_ends_with_the_failure_reward() {
    let (mut env, _spec, obs) = sink_env(EnvConfig { max_steps: Some(2), ..EnvConfig::default() }).await;
    let area = by_id(&obs, "area").r#ref;
    let s = env.step(&Action::Click(area)).await.unwrap();
    assert!(!s.done);
    let s = env.step(&Action::Click(area)).await.unwrap();
    assert!(s.done);
    assert_eq!(s.raw_reward, -1.0);
    assert_eq!(s.reason.as_deref(), Some("step limit"));
    assert_eq!(env.step(&Action::Click(area)).await.unwrap_err(), EnvError::EpisodeDone);
}

#[wasm_bindgen_test]
async fn page_time_limit_counts_only_when_the_clock_runs() {
    let script = KITCHEN_SINK.replace("core.EPISODE_MAX_TIME = 10000;", "core.EPISODE_MAX_TIME = 300;");
    let spec = fixture_page("short-clock", &script);

    let mut env = IframeEnv::new(new_frame(), EnvConfig { hold_clock: false, ..EnvConfig::default() });
    let obs = env.reset(&spec, 1).await.unwrap();
    weblab::web::util::sleep(500).await;
    let s = env.step(&Action::Click(by_id(&obs, "go").r#ref)).await.unwrap();
    assert!(s.done);
    assert_eq!((s.raw_reward, s.reason.as_deref()), (-1.0, Some("timed out")));
    assert!(log_of(&env).is_empty(), "after the time-out the click was not sent");

    // Held between steps (the lab's default for agents), thinking time does not count.
    let mut env = IframeEnv::new(new_frame(), EnvConfig { hold_clock: true, ..EnvConfig::default() });
    let obs = env.reset(&spec, 1).await.unwrap();
    weblab::web::util::sleep(500).await;
    let s = env.step(&Action::Click(by_id(&obs, "end").r#ref)).await.unwrap();
    assert_eq!(s.raw_reward, 1.0);
    assert!(s.reward > 0.5, "little episode time elapsed: decayed reward {}", s.reward);
}

#[wasm_bindgen_test]
async fn same_seed_same_page_other_seed_other_page() {
    let (mut env, spec, a) = sink_env(EnvConfig::default()).await;
    let b = env.reset(&spec, 7).await.unwrap();
    assert_eq!(a, b);
    let mut differs = false;
    for seed in 100..110 {
        differs |= env.reset(&spec, seed).await.unwrap().instruction != a.instruction;
    }
    assert!(differs, "ten other seeds all gave the same instruction");
}

#[wasm_bindgen_test]
async fn bad_task_sources_get_clear_errors_and_the_env_keeps_working() {
    let mut env = IframeEnv::new(new_frame(), EnvConfig { load_timeout_ms: 3000, ready_timeout_ms: 500, ..EnvConfig::default() });

    // A folder on another site is refused as the task is made, and the frame refuses it too.
    assert!(TaskSpec::external("https://example.com/miniwob/", "click-test").unwrap_err().to_string().contains("another site"));
    let cross = TaskSpec::External { base_url: "https://example.com/miniwob/".into(), name: "click-test".into() };
    let e = env.reset(&cross, 1).await.unwrap_err();
    assert!(matches!(e, EnvError::CrossOrigin { .. }), "{e}");
    assert!(e.to_string().contains("another origin"), "{e}");

    let e = TaskSpec::builtin("click-nothing").unwrap_err();
    assert_eq!(e.to_string(), "unknown task \"click-nothing\": it is not in the lab's task list");

    let e = env.reset(&TaskSpec::external("/no-such-folder/", "click-test").unwrap(), 1).await.unwrap_err();
    assert!(matches!(e, EnvError::NotFound { .. }) && e.to_string().contains("404"), "{e}");

    let plain = TaskSpec::Inline { name: "plain".into(), html: "<p>just a page</p>".into() };
    let e = env.reset(&plain, 1).await.unwrap_err();
    assert!(matches!(e, EnvError::NotATaskPage { .. }), "{e}");

    let thrower = fixture_page("thrower", "function genProblem() { throw new Error('generator exploded'); }");
    let e = env.reset(&thrower, 1).await.unwrap_err();
    assert!(matches!(e, EnvError::PageThrew { .. }) && e.to_string().contains("generator exploded"), "{e}");

    let sleeper = fixture_page("sleeper", "function genProblem() { core.setInstruction('wait', {}); window.WOB_TASK_READY = false; }");
    let e = env.reset(&sleeper, 1).await.unwrap_err();
    assert_eq!(e, EnvError::NeverReady { task: "sleeper".into(), ms: 500 });

    // After all that, a good page still works in the same environment.
    let obs = env.reset(&fixture_page("kitchen-sink", KITCHEN_SINK), 3).await.unwrap();
    assert!(!obs.dom.nodes.is_empty());
}

#[wasm_bindgen_test]
async fn a_page_that_throws_while_loading_is_reported_with_its_exception() {
    let mut env = IframeEnv::new(new_frame(), EnvConfig::default());
    // genProblem is assigned after the line that throws, so the page never gets one.
    let page = fixture_page("load-thrower", "var WORDS = loadWords();\nwindow.genProblem = function () {};");
    let e = env.reset(&page, 1).await.unwrap_err();
    assert!(matches!(e, EnvError::PageThrew { .. }), "{e}");
    let text = e.to_string();
    assert!(text.contains("loadWords is not defined") && text.contains("while loading"), "{text}");

    let page = fixture_page("syntax-error", "function genProblem( {");
    let e = env.reset(&page, 1).await.unwrap_err();
    assert!(matches!(e, EnvError::PageThrew { .. }) && e.to_string().contains("SyntaxError"), "{e}");

    // Nothing threw on this one: it just is not a task page, and says what it lacks.
    let page = fixture_page("no-generator", "var nothing = 1;");
    let e = env.reset(&page, 1).await.unwrap_err();
    assert!(matches!(e, EnvError::NotATaskPage { .. }) && e.to_string().contains("genProblem()"), "{e}");

    let obs = env.reset(&fixture_page("kitchen-sink", KITCHEN_SINK), 3).await.unwrap();
    assert!(!obs.dom.nodes.is_empty(), "the environment still works");
}

#[wasm_bindgen_test]
async fn a_broken_page_is_diagnosed_without_running_anything_of_it() {
    let mut env = IframeEnv::new(new_frame(), EnvConfig::default());
    let lab = web_sys::window().unwrap();
    let ran = || js_sys::Reflect::get(&lab, &JsValue::from_str("__weblabRan")).unwrap();
    // Markup the page inserts as text: the browser never runs a script inserted that way, and
    // finding out why the page is broken must not run it either.
    let page = fixture_page(
        "inert-markup",
        "document.addEventListener('DOMContentLoaded', function () { document.body.insertAdjacentHTML('beforeend', '<script>parent.__weblabRan = (parent.__weblabRan || 0) + 1;<\\/script>'); });",
    );
    let e = env.reset(&page, 1).await.unwrap_err();
    assert!(matches!(e, EnvError::NotATaskPage { .. }) && e.to_string().contains("genProblem()"), "{e}");
    assert!(ran().is_undefined(), "an inserted script ran: {:?}", ran());

    // Nor are the page's own scripts run again: one that counts its runs ran once, at load.
    let page = fixture_page("counts-runs", "parent.__weblabRuns = (parent.__weblabRuns || 0) + 1; var nothing = 1;");
    env.reset(&page, 1).await.unwrap_err();
    let runs = js_sys::Reflect::get(&lab, &JsValue::from_str("__weblabRuns")).unwrap();
    assert_eq!(runs.as_f64(), Some(1.0), "the page's script ran again while it was diagnosed");

    // A page without the lab's core keeps no load errors: its scripts are compiled, never run,
    // and the one that does not parse is named.
    let foreign = TaskSpec::Inline { name: "foreign".into(), html: "<script>var a = 1;</script><script>function genProblem( {</script>".into() };
    let e = env.reset(&foreign, 1).await.unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, EnvError::PageThrew { .. }) && text.contains("SyntaxError") && text.contains("in its inline script #2"), "{text}");
    let obs = env.reset(&fixture_page("kitchen-sink", KITCHEN_SINK), 3).await.unwrap();
    assert!(!obs.dom.nodes.is_empty(), "the environment still works");
}

#[wasm_bindgen_test]
async fn navigating_away_ends_the_episode_with_a_message() {
    let script = r##"
function genProblem() {
  core.setInstruction('Follow the link.', {});
  document.getElementById('area').innerHTML = '<a id="away" href="about:blank">away</a>';
}"##;
    let mut env = IframeEnv::new(new_frame(), EnvConfig { settle_ms: 50, ..EnvConfig::default() });
    let obs = env.reset(&fixture_page("leaver", script), 1).await.unwrap();
    let e = env.step(&Action::Click(by_id(&obs, "away").r#ref)).await.unwrap_err();
    assert!(matches!(e, EnvError::NavigatedAway { .. }), "{e}");
    assert_eq!(env.step(&Action::Click(1)).await.unwrap_err(), EnvError::EpisodeDone);
}

#[wasm_bindgen_test]
async fn a_page_that_begins_to_leave_ends_the_episode_at_that_step() {
    // The destination takes a network round trip, so the old document still shows when the step
    // ends: the step must see that the page began to leave, and name where it goes.
    let script = r##"
function genProblem() {
  core.setInstruction('Follow the link.', {});
  document.getElementById('area').innerHTML = '<a id="away" href="/no-such-page-elsewhere.html">away</a>';
}"##;
    let mut env = IframeEnv::new(new_frame(), EnvConfig { settle_ms: 0, ..EnvConfig::default() });
    let obs = env.reset(&fixture_page("slow-leaver", script), 1).await.unwrap();
    let e = env.step(&Action::Click(by_id(&obs, "away").r#ref)).await.unwrap_err();
    match &e {
        EnvError::NavigatedAway { url } => assert!(url.ends_with("/no-such-page-elsewhere.html"), "{url}"),
        other => panic!("expected NavigatedAway, got {other}"),
    }
    assert_eq!(env.step(&Action::Click(1)).await.unwrap_err(), EnvError::EpisodeDone);
    let obs = env.reset(&fixture_page("slow-leaver", script), 2).await.unwrap();
    assert!(obs.dom.nodes.iter().any(|n| n.id == "away"), "a reset loads the page again");
}

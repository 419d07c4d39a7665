//! MiniWoB++ 1.1's pointer, wheel and key actions on live pages: the events a page sees and the
//! default actions the lab performs for them, on small fixture pages written for these tests,
//! each ending with the page's own reward; and real MiniWoB++ pages that need them
//! (`actions/real.rs`).
#![cfg(target_arch = "wasm32")]

mod common;
#[path = "actions/real.rs"]
mod real;

use common::{fixture_page, js_eval_in, js_json_in, new_frame};
use wasm_bindgen_test::*;
use weblab::env::{Action, DomNode, EnvConfig, Environment, Observation, Step};
use weblab::task::TaskSpec;
use weblab::web::IframeEnv;

wasm_bindgen_test_configure!(run_in_browser);

/// Logs the mouse, pointer, wheel and key events the page sees (type and target id), and ends
/// the episode from its Submit button with a reward the page's `judge()` decides.
const LOGGER: &str = r##"
window.LOG = [];
var KINDS = ['pointerover','pointerenter','pointerout','pointerleave','pointermove','pointerdown','pointerup',
  'mouseover','mouseenter','mouseout','mouseleave','mousemove','mousedown','mouseup','click','dblclick',
  'wheel','keydown','keypress','keyup','input','copy','paste','focus'];
KINDS.forEach(function (k) {
  document.addEventListener(k, function (e) {
    if (!e.target || !e.target.id || e.target.id === 'submit') return;
    var x = k + ':' + e.target.id;
    if (e.type.indexOf('key') === 0) x += ':' + e.key + ':' + e.keyCode + (e.shiftKey ? ':S' : '') + (e.ctrlKey ? ':C' : '');
    window.LOG.push(x);
  }, true);
});
function submitButton() {
  var b = document.createElement('button');
  b.id = 'submit';
  b.textContent = 'Submit';
  b.style.cssText = 'position:absolute; left:300px; top:400px';
  b.addEventListener('click', function () { var r = judge(); core.endEpisode(r ? 1 : -1, true, r ? null : 'judged wrong'); });
  document.getElementById('area').appendChild(b);
}
"##;

fn page(name: &str, script: &str) -> TaskSpec {
    fixture_page(name, &format!("{LOGGER}\n{script}"))
}

fn by_id<'a>(obs: &'a Observation, id: &str) -> &'a DomNode {
    obs.dom.nodes.iter().find(|n| n.id == id).unwrap_or_else(|| panic!("no #{id} in the observation"))
}

fn center(obs: &Observation, id: &str) -> (i32, i32) {
    let r = by_id(obs, id).rect;
    ((r.left + r.width / 2.0) as i32, (r.top + r.height / 2.0) as i32)
}

/// The page's event log since the last call (it is cleared).
fn log(env: &IframeEnv) -> Vec<String> {
    let v = js_json_in(env.iframe(), "window.LOG.splice(0)");
    serde_json::from_value(v).unwrap()
}

async fn env_on(spec: &TaskSpec, seed: u32) -> (IframeEnv, Observation) {
    let mut env = IframeEnv::new(new_frame(), EnvConfig { hold_clock: true, ..EnvConfig::default() });
    let obs = env.reset(spec, seed).await.expect("reset");
    (env, obs)
}

async fn step(env: &mut IframeEnv, a: Action) -> Step {
    env.step(&a).await.unwrap_or_else(|e| panic!("{a:?}: {e}"))
}

async fn submit(env: &mut IframeEnv, obs: &Observation) -> Step {
    let s = step(env, Action::Click(by_id(obs, "submit").r#ref)).await;
    assert!(s.done, "the page ended the episode");
    s
}

const HOVER: &str = r##"
function genProblem() {
  core.setInstruction('Hover, then click Go at its centre', {});
  document.getElementById('area').innerHTML =
    '<div id="outer" style="position:absolute;left:10px;top:60px;width:200px;height:60px;background:#eee">' +
    '<div id="inner" style="margin:15px;width:80px;height:30px;background:#ccc">in</div></div>' +
    '<button id="go" style="position:absolute;left:10px;top:150px;width:60px;height:30px">Go</button>';
  window.CLICK = null;
  document.getElementById('go').addEventListener('click', function (e) {
    window.CLICK = [e.clientX, e.clientY, e.detail, document.activeElement.id];
  });
  window.judge = function () { return window.CLICK !== null; };
  submitButton();
}
"##;

#[wasm_bindgen_test]
async fn moving_and_clicking_send_a_mouses_events_in_the_browsers_order() {
    let spec = page("hover", HOVER);
    let (mut env, obs) = env_on(&spec, 1).await;
    log(&env);
    let (ix, iy) = center(&obs, "inner");
    step(&mut env, Action::MoveTo(ix, iy)).await;
    assert_eq!(
        log(&env),
        [
            "pointerover:inner",
            "pointerenter:wrap",
            "pointerenter:area",
            "pointerenter:outer",
            "pointerenter:inner",
            "mouseover:inner",
            "mouseenter:wrap",
            "mouseenter:area",
            "mouseenter:outer",
            "mouseenter:inner",
            "pointermove:inner",
            "mousemove:inner",
        ],
        "entering the page: over on the element, enter on it and every ancestor, outermost first, then the move"
    );
    let (gx, gy) = center(&obs, "go");
    let s = step(&mut env, Action::ClickAt(gx, gy)).await;
    // Focus events depend on the test browser's window having focus: left out.
    let events: Vec<String> = log(&env).into_iter().filter(|e| !e.starts_with("focus")).collect();
    assert_eq!(
        events,
        [
            "pointerout:inner",
            "pointerleave:inner",
            "pointerleave:outer",
            "pointerover:go",
            "pointerenter:go",
            "mouseout:inner",
            "mouseleave:inner",
            "mouseleave:outer",
            "mouseover:go",
            "mouseenter:go",
            "pointermove:go",
            "mousemove:go",
            "pointerdown:go",
            "mousedown:go",
            "pointerup:go",
            "mouseup:go",
            "click:go",
        ]
    );
    assert_eq!(js_json_in(env.iframe(), "window.CLICK"), serde_json::json!([gx, gy, 1, "go"]), "where, how often, and focus");
    // Pressed on one element, released on another: the click goes to what holds both.
    step(&mut env, Action::MouseDown(ix, iy)).await;
    step(&mut env, Action::MouseUp(gx, gy)).await;
    let events = log(&env);
    assert!(events.contains(&"click:area".to_string()) && !events.contains(&"click:go".to_string()), "{events:?}");
    let s = submit(&mut env, &s.observation).await;
    assert_eq!(s.raw_reward, 1.0);
    // A point outside the page is refused, and nothing is sent.
    let (mut env, _) = env_on(&spec, 2).await;
    log(&env);
    let e = env.step(&Action::ClickAt(5000, 10)).await.unwrap_err();
    assert!(e.to_string().contains("outside the task page"), "{e}");
    assert!(log(&env).is_empty());
}

/// A knob the page drags itself (mousedown on it, mousemove and mouseup on the document), as
/// drag libraries do, and a slot to drop it in.
const DRAG: &str = r##"
function genProblem() {
  core.setInstruction('Drag the knob into the slot', {});
  var area = document.getElementById('area');
  area.innerHTML =
    '<div id="field" style="position:relative;width:300px;height:200px;background:#f4f4f4">' +
    '<div id="slot" style="position:absolute;left:220px;top:120px;width:50px;height:50px;background:#dfd"></div>' +
    '<div id="knob" style="position:absolute;left:' + core.randi(10, 60) + 'px;top:' + core.randi(10, 60) + 'px;width:20px;height:20px;background:#88f"></div></div>';
  var knob = document.getElementById('knob'), grab = null;
  window.MOVES = 0;
  window.CLICKED_ON = null;
  knob.addEventListener('mousedown', function (e) { e.preventDefault(); grab = [e.clientX - knob.offsetLeft, e.clientY - knob.offsetTop]; });
  document.addEventListener('mousemove', function (e) {
    if (!grab || e.buttons !== 1) return;
    window.MOVES++;
    knob.style.left = (e.clientX - grab[0]) + 'px';
    knob.style.top = (e.clientY - grab[1]) + 'px';
  });
  document.addEventListener('mouseup', function () { grab = null; });
  document.getElementById('field').addEventListener('click', function (e) { window.CLICKED_ON = e.target.id; });
  window.judge = function () {
    var k = knob.getBoundingClientRect(), s = document.getElementById('slot').getBoundingClientRect();
    return k.left >= s.left && k.right <= s.right && k.top >= s.top && k.bottom <= s.bottom;
  };
  submitButton();
}
"##;

#[wasm_bindgen_test]
async fn a_drag_carries_what_the_page_drags() {
    let spec = page("drag", DRAG);
    let (mut env, obs) = env_on(&spec, 3).await;
    let from = center(&obs, "knob");
    let to = center(&obs, "slot");
    let mid = ((from.0 + to.0) / 2, (from.1 + to.1) / 2);
    let s = step(&mut env, Action::Drag(vec![from, mid, to])).await;
    assert_eq!(js_json_in(env.iframe(), "window.MOVES"), 2, "one move per point after the press");
    // The knob followed the pointer: pressed and released on it, so the knob is clicked.
    assert_eq!(js_json_in(env.iframe(), "window.CLICKED_ON"), "knob");
    assert_eq!(submit(&mut env, &s.observation).await.raw_reward, 1.0);

    // The same drag as MiniWoB++'s three primitive actions, one step each.
    let (mut env, obs) = env_on(&spec, 4).await;
    let (from, to) = (center(&obs, "knob"), center(&obs, "slot"));
    step(&mut env, Action::MouseDown(from.0, from.1)).await;
    step(&mut env, Action::MoveTo(to.0 - 5, to.1 - 5)).await;
    let s = step(&mut env, Action::MouseUp(to.0, to.1)).await;
    assert_eq!(submit(&mut env, &s.observation).await.raw_reward, 1.0);

    // Released short of the slot: the page judges it wrong.
    let (mut env, obs) = env_on(&spec, 5).await;
    let from = center(&obs, "knob");
    let s = step(&mut env, Action::Drag(vec![from, (from.0 + 30, from.1)])).await;
    assert_eq!(submit(&mut env, &s.observation).await.raw_reward, -1.0);
}

const TEXT: &str = r##"
function genProblem() {
  var words = ['alpha', 'bravo', 'gamma', 'delta'];
  var want = core.sample(words);
  core.setInstruction('Select ' + want, { word: want });
  document.getElementById('area').innerHTML =
    '<p id="para" style="position:absolute;left:10px;top:70px;margin:0;font:16px monospace;white-space:nowrap">' + words.join(' ') + '</p>' +
    '<p id="fixed" style="position:absolute;left:10px;top:110px;margin:0;user-select:none">not this</p>';
  window.judge = function () { return window.getSelection().toString() === want; };
  submitButton();
}
"##;

/// The box of characters `from..to` of the paragraph's text.
fn chars_box(env: &IframeEnv, from: usize, to: usize) -> (f64, f64, f64, f64) {
    let b = js_json_in(
        env.iframe(),
        &format!(
            "(function () {{ var r = document.createRange(), t = document.getElementById('para').firstChild; r.setStart(t, {from}); r.setEnd(t, {to}); var b = r.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; }})()"
        ),
    );
    let v: Vec<f64> = serde_json::from_value(b).unwrap();
    (v[0], v[1], v[2], v[3])
}

#[wasm_bindgen_test]
async fn dragging_over_text_selects_it_and_a_double_click_selects_a_word() {
    let spec = page("select-text", TEXT);
    for seed in 1..=4 {
        let (mut env, obs) = env_on(&spec, seed).await;
        let want = obs.instruction.field("word").unwrap().to_string();
        let at = "alpha bravo gamma delta".find(&want).unwrap();
        let (l, t, r, b) = chars_box(&env, at, at + want.len());
        let y = ((t + b) / 2.0) as i32;
        // Press just inside the first character's left half, release just inside the last's
        // right half: the caret positions are the word's bounds.
        let s = if seed % 2 == 1 {
            step(&mut env, Action::Drag(vec![(l as i32 + 2, y), (r as i32 - 2, y)])).await
        } else {
            let s = step(&mut env, Action::DoubleClickAt(((l + r) / 2.0) as i32, y)).await;
            let events = log(&env);
            assert!(events.contains(&"dblclick:para".to_string()), "{events:?}");
            s
        };
        assert_eq!(js_eval_in(env.iframe(), "window.getSelection().toString()").as_string().unwrap(), want, "seed {seed}");
        // Pressing Submit (a button) leaves the selection as it was, as a real press does.
        assert_eq!(submit(&mut env, &s.observation).await.raw_reward, 1.0, "seed {seed}");
    }
    // Text that may not be selected stays unselected.
    let (mut env, obs) = env_on(&spec, 1).await;
    let r = by_id(&obs, "fixed").rect;
    let y = (r.top + r.height / 2.0) as i32;
    step(&mut env, Action::Drag(vec![(r.left as i32 + 1, y), ((r.left + r.width) as i32 - 1, y)])).await;
    assert_eq!(js_eval_in(env.iframe(), "window.getSelection().toString()").as_string().unwrap(), "");
}

const WHEEL: &str = r##"
function genProblem() {
  core.setInstruction('Scroll the inner list to its end, and the outer box a little', {});
  document.getElementById('area').innerHTML =
    '<div id="outer" style="position:absolute;left:10px;top:60px;width:200px;height:150px;overflow-y:auto">' +
    '<div id="inner" style="height:100px;overflow-y:scroll"><div id="list" style="height:180px;background:linear-gradient(#fff,#999)">list</div></div>' +
    '<div id="rest" style="height:300px">rest</div></div>' +
    '<div id="locked" style="position:absolute;left:220px;top:60px;width:100px;height:100px;overflow-y:auto"><div style="height:400px">locked</div></div>';
  window.SCROLLS = 0;
  document.getElementById('inner').addEventListener('scroll', function () { window.SCROLLS++; });
  document.getElementById('locked').addEventListener('wheel', function (e) { e.preventDefault(); });
  window.judge = function () {
    var inner = document.getElementById('inner'), outer = document.getElementById('outer');
    return inner.scrollTop + inner.clientHeight === inner.scrollHeight && outer.scrollTop === 50;
  };
  submitButton();
}
"##;

#[wasm_bindgen_test]
async fn the_wheel_scrolls_the_box_under_it_and_chains_at_its_end() {
    let spec = page("wheel", WHEEL);
    let (mut env, obs) = env_on(&spec, 1).await;
    let (x, y) = center(&obs, "inner");
    let top = |env: &IframeEnv, id: &str| js_eval_in(env.iframe(), &format!("document.getElementById('{id}').scrollTop")).as_f64().unwrap();
    step(&mut env, Action::Scroll(x, y, 50)).await;
    assert_eq!((top(&env, "inner"), top(&env, "outer")), (50.0, 0.0));
    assert!(js_json_in(env.iframe(), "window.SCROLLS").as_u64().unwrap() >= 1, "the scroll event came with the frame");
    assert!(log(&env).contains(&"wheel:list".to_string()), "the wheel event goes to what is under the point");
    step(&mut env, Action::Scroll(x, y, 50)).await;
    assert_eq!(top(&env, "inner"), 80.0, "the inner list stops at its end (180 - 100)");
    // At its end the inner list passes the next turn on to the box around it.
    step(&mut env, Action::Scroll(x, y, 50)).await;
    assert_eq!((top(&env, "inner"), top(&env, "outer")), (80.0, 50.0));
    // A page that cancels the wheel keeps its box still.
    let (lx, ly) = center(&obs, "locked");
    let s = step(&mut env, Action::Scroll(lx, ly, 50)).await;
    assert_eq!(top(&env, "locked"), 0.0);
    assert_eq!(submit(&mut env, &s.observation).await.raw_reward, 1.0);
}

const KEYS: &str = r##"
function genProblem() {
  core.setInstruction('Fill the form with the keyboard', { name: 'Cheree', city: 'Oslo' });
  document.getElementById('area').innerHTML =
    '<input id="a" type="text"><textarea id="t"></textarea><input id="b" type="text">' +
    '<label><input id="cb" type="checkbox">tick</label><input id="rg" type="range" min="0" max="10" value="5">' +
    '<select id="sel"><option>one</option><option>two</option><option>three</option></select>' +
    '<form id="form"><input id="c" type="text"><button id="send" type="submit">Send</button></form>';
  window.SENT = 0;
  document.getElementById('form').addEventListener('submit', function (e) { e.preventDefault(); });
  document.getElementById('send').addEventListener('click', function () { window.SENT++; });
  window.judge = function () {
    var v = function (id) { return document.getElementById(id).value; };
    return v('a') === 'Hi thXer' && v('t') === 'line\nnext' && v('b') === 'Cheree' && document.getElementById('cb').checked
      && v('rg') === '6' && v('sel') === 'two' && v('c') === 'Oslo' && window.SENT === 1;
  };
  submitButton();
}
"##;

#[wasm_bindgen_test]
async fn keys_type_edit_move_focus_and_activate() {
    let spec = page("keys", KEYS);
    let (mut env, obs) = env_on(&spec, 1).await;
    let value = |env: &IframeEnv, id: &str| js_eval_in(env.iframe(), &format!("document.getElementById('{id}').value")).as_string().unwrap();
    let active = |env: &IframeEnv| js_eval_in(env.iframe(), "document.activeElement.id").as_string().unwrap();
    step(&mut env, Action::Click(by_id(&obs, "a").r#ref)).await;
    log(&env);
    step(&mut env, Action::TypeText("Hi there".into())).await;
    let events = log(&env);
    assert_eq!(&events[..4], ["keydown:a:Shift:16:S", "keydown:a:H:72:S", "keypress:a:H:72:S", "input:a"], "{events:?}");
    assert_eq!(&events[4..6], ["keyup:a:H:72:S", "keyup:a:Shift:16"], "Shift's own keyup has it released");
    assert_eq!(value(&env, "a"), "Hi there");
    step(&mut env, Action::PressKey("<Backspace>".into())).await;
    step(&mut env, Action::PressKey("<ArrowLeft>".into())).await;
    step(&mut env, Action::PressKey("<ArrowLeft>".into())).await;
    step(&mut env, Action::TypeText("X".into())).await;
    assert_eq!(value(&env, "a"), "Hi thXer", "Backspace deletes, the arrows move the caret, typing goes in there");
    // Tab moves on; Enter in a text area is a line break.
    step(&mut env, Action::PressKey("<Tab>".into())).await;
    assert_eq!(active(&env), "t");
    step(&mut env, Action::TypeText("line\nnext".into())).await;
    assert_eq!(value(&env, "t"), "line\nnext");
    step(&mut env, Action::PressKey("<Tab>".into())).await;
    step(&mut env, Action::TypeField(1)).await;
    assert_eq!(value(&env, "b"), "Cheree", "the instruction's second field by key (city, name), typed");
    step(&mut env, Action::TypeField(9)).await;
    assert_eq!(value(&env, "b"), "Cheree", "past the last field nothing is typed");
    // Space ticks a focused checkbox; the arrows move a slider and a list.
    step(&mut env, Action::PressKey("<Tab>".into())).await;
    assert_eq!(active(&env), "cb");
    step(&mut env, Action::PressKey("<Space>".into())).await;
    step(&mut env, Action::PressKey("<Tab>".into())).await;
    step(&mut env, Action::PressKey("<ArrowRight>".into())).await;
    step(&mut env, Action::PressKey("S-<Tab>".into())).await;
    assert_eq!(active(&env), "cb", "Shift+Tab goes back");
    step(&mut env, Action::PressKey("<Tab>".into())).await;
    step(&mut env, Action::PressKey("<Tab>".into())).await;
    step(&mut env, Action::PressKey("<ArrowDown>".into())).await;
    // Into the form's field, then Enter submits it through its default button.
    step(&mut env, Action::FocusTypeField(by_id(&obs, "c").r#ref, 0)).await;
    let e = env.step(&Action::PressKey("<Hyper>".into())).await.unwrap_err();
    assert!(e.to_string().contains("unknown key <Hyper>"), "{e}");
    let s = step(&mut env, Action::PressKey("<Enter>".into())).await;
    assert_eq!(js_json_in(env.iframe(), "window.SENT"), 1);
    assert_eq!(submit(&mut env, &s.observation).await.raw_reward, 1.0);
}

const CLIPBOARD: &str = r##"
function genProblem() {
  var text = core.sample(['Lorem ipsum dolor', 'Sit amet, consectetur', 'Adipiscing elit sed']);
  core.setInstruction('Copy the text into the field', {});
  document.getElementById('area').innerHTML =
    '<textarea id="src"></textarea><input id="dst" type="text"><div id="quote">quoted words</div><input id="dst2" type="text">';
  document.getElementById('src').value = text;
  document.getElementById('quote').addEventListener('copy', function (e) {
    e.clipboardData.setData('text/plain', '[' + window.getSelection().toString() + ']');
    e.preventDefault();
  });
  window.judge = function () {
    return document.getElementById('dst').value === text && document.getElementById('dst2').value === '[quoted words]';
  };
  submitButton();
}
"##;

#[wasm_bindgen_test]
async fn copy_and_paste_go_through_the_labs_clipboard() {
    let spec = page("clipboard", CLIPBOARD);
    let (mut env, obs) = env_on(&spec, 2).await;
    step(&mut env, Action::Click(by_id(&obs, "src").r#ref)).await;
    step(&mut env, Action::PressKey("C-a".into())).await;
    step(&mut env, Action::PressKey("C-c".into())).await;
    step(&mut env, Action::Click(by_id(&obs, "dst").r#ref)).await;
    log(&env);
    step(&mut env, Action::PressKey("C-v".into())).await;
    let events = log(&env);
    assert_eq!(&events[..2], ["keydown:dst:Control:17:C", "keydown:dst:v:86:C"], "{events:?}");
    assert!(events.contains(&"paste:dst".to_string()) && events.contains(&"input:dst".to_string()));
    // A page's own copy handler decides what is copied.
    let q = by_id(&obs, "quote").rect;
    let y = (q.top + q.height / 2.0) as i32;
    step(&mut env, Action::Drag(vec![(q.left as i32, y), ((q.left + q.width) as i32 - 1, y)])).await;
    step(&mut env, Action::PressKey("C-c".into())).await;
    step(&mut env, Action::Click(by_id(&obs, "dst2").r#ref)).await;
    let s = step(&mut env, Action::PressKey("C-v".into())).await;
    assert_eq!(submit(&mut env, &s.observation).await.raw_reward, 1.0);
}

const LATER: &str = r##"
function genProblem() {
  core.setInstruction('Wait for the button', {});
  document.getElementById('area').innerHTML = '';
  setTimeout(function () {
    var b = document.createElement('button');
    b.id = 'late';
    b.textContent = 'Late';
    b.addEventListener('click', function () { core.endEpisode(1, true); });
    document.getElementById('area').appendChild(b);
  }, 300);
}
"##;

#[wasm_bindgen_test]
async fn a_wait_lets_the_page_run() {
    let (mut env, obs) = env_on(&fixture_page("later", LATER), 1).await;
    assert!(obs.dom.nodes.iter().all(|n| n.id != "late"));
    let s = step(&mut env, Action::Wait(0)).await;
    assert!(s.observation.dom.nodes.iter().all(|n| n.id != "late"), "nothing is due yet");
    let s = step(&mut env, Action::Wait(400)).await;
    let s = step(&mut env, Action::Click(by_id(&s.observation, "late").r#ref)).await;
    assert_eq!((s.done, s.raw_reward), (true, 1.0));
}

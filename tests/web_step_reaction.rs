//! A step ends when the page has finished reacting to its action, as a person waits before
//! looking again (`web::reaction`): the short timers the action started (a widget's delay, an
//! animation's ticks, and what they start in turn) have fired, and the images it began to show
//! have their boxes. Timers the action did not start, or long ones, are not waited for.
#![cfg(target_arch = "wasm32")]

mod common;

use common::{fixture_page, new_frame};
use wasm_bindgen_test::*;
use weblab::env::{Action, DomNode, EnvConfig, Environment, Observation};
use weblab::web::IframeEnv;

wasm_bindgen_test_configure!(run_in_browser);

const REACTING: &str = r##"
core.EPISODE_MAX_TIME = 10000;
function genProblem() {
  core.setInstruction('Press the buttons.', {});
  var area = document.getElementById('area');
  area.innerHTML = '<button id="go">Go</button><button id="slow">Slow</button><button id="spin">Spin</button>' +
    '<button id="win">Win</button><div id="out">-</div><div id="ticks">0</div>';
  var out = document.getElementById('out');
  // A delayed answer whose timer starts a second one (an autocomplete's search, then its menu),
  // and an animation: an interval that stops itself after a few ticks.
  document.getElementById('go').addEventListener('click', function () {
    setTimeout(function () {
      out.textContent = 'one';
      setTimeout(function () { out.textContent += ' two'; }, 50);
    }, 200);
    var n = 0;
    var id = setInterval(function () { n += 1; if (n === 5) { clearInterval(id); out.className = 'still'; } }, 13);
  });
  // Not a reaction: a timer longer than any a person waits for.
  document.getElementById('slow').addEventListener('click', function () {
    setTimeout(function () { out.textContent = 'late'; }, 5000);
  });
  // An animation without end: the step waits only up to its bound.
  document.getElementById('spin').addEventListener('click', function () {
    setInterval(function () { var t = document.getElementById('ticks'); t.textContent = String(+t.textContent + 1); }, 10);
  });
  // An episode the page ends a moment after the click.
  document.getElementById('win').addEventListener('click', function () {
    setTimeout(function () { core.endEpisode(1, true); }, 100);
  });
  // A timer the page runs all along (started by the reset, not by an action).
  setInterval(function () {}, 20);
}
"##;

fn by_id<'a>(obs: &'a Observation, id: &str) -> &'a DomNode {
    obs.dom.nodes.iter().find(|n| n.id == id).unwrap_or_else(|| panic!("no #{id}"))
}

#[wasm_bindgen_test]
async fn a_step_ends_once_the_page_has_reacted() {
    let cfg = EnvConfig { hold_clock: true, settle_timeout_ms: 400, ..EnvConfig::default() };
    let mut env = IframeEnv::new(new_frame(), cfg);
    let spec = fixture_page("reacting", REACTING);
    let obs = env.reset(&spec, 1).await.unwrap();
    let r = |id: &str| by_id(&obs, id).r#ref;

    let s = env.step(&Action::Click(r("go"))).await.unwrap();
    let out = by_id(&s.observation, "out");
    assert_eq!(out.text, "one two", "the delayed answer and the timer it started");
    assert!(out.has_class("still"), "the animation ran to its end");

    let s = env.step(&Action::Click(r("slow"))).await.unwrap();
    assert_eq!(by_id(&s.observation, "out").text, "one two", "a five-second timer is not waited for");

    // The endless animation holds the step only up to `settle_timeout_ms`; the next step works.
    let s = env.step(&Action::Click(r("spin"))).await.unwrap();
    let ticks: u32 = by_id(&s.observation, "ticks").text.parse().unwrap();
    assert!(ticks > 0, "the step waited for the animation");
    let s = env.step(&Action::Click(r("win"))).await.unwrap();
    assert!(s.done, "an episode the page ends in reaction to the action ends with the step");
    assert_eq!(s.raw_reward, 1.0);
}

/// Icons drawn by a style sheet's image (`content: url(…)`) have no box until the image arrives;
/// the lab fetches them when the page loads, so a view a step opens shows them at once.
const STYLE_ICONS: &str = r##"
var SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="12" height="12"><rect width="12" height="12"/></svg>';
var style = document.createElement('style');
style.textContent = '.icon { content: url(' + URL.createObjectURL(new Blob([SVG], { type: 'image/svg+xml' })) + '); }';
document.head.appendChild(style);
function genProblem() {
  core.setInstruction('Open the view.', {});
  var area = document.getElementById('area');
  area.innerHTML = '<button id="open">Open</button><div id="view"></div>';
  document.getElementById('open').addEventListener('click', function () {
    document.getElementById('view').innerHTML = '<span class="icon" id="icon"></span>';
  });
}
"##;

#[wasm_bindgen_test]
async fn a_view_a_step_opens_shows_its_style_sheet_icons() {
    let mut env = IframeEnv::new(new_frame(), EnvConfig { hold_clock: true, ..EnvConfig::default() });
    let spec = fixture_page("style-icons", STYLE_ICONS);
    let obs = env.reset(&spec, 1).await.unwrap();
    let s = env.step(&Action::Click(by_id(&obs, "open").r#ref)).await.unwrap();
    let icon = by_id(&s.observation, "icon");
    assert_eq!((icon.rect.width, icon.rect.height), (12.0, 12.0));
}

//! Real MiniWoB++ pages (the `miniwob` 1.1.0 package that `scripts/setup.sh` fetches, served at
//! `miniwob/html/`) that need MiniWoB++'s pointer, wheel and key actions, each solved by a short
//! scripted episode that reads only the observation, and judged by the page's own reward (part of
//! the `web_actions` browser tests).

use crate::common::new_frame;
use wasm_bindgen_test::*;
use weblab::env::action::SCROLL_STEP;
use weblab::env::{Action, DomNode, EnvConfig, Environment, Observation, Step};
use weblab::task::TaskSpec;
use weblab::web::IframeEnv;

async fn real(name: &str, seed: u32) -> (IframeEnv, Observation) {
    // The pages load jQuery UI or d3: on a loaded machine that takes longer than the default.
    let mut env = IframeEnv::new(new_frame(), EnvConfig { hold_clock: true, load_timeout_ms: 60_000, ..EnvConfig::default() });
    let spec = TaskSpec::miniwob(name).unwrap();
    let obs = env.reset(&spec, seed).await.unwrap_or_else(|e| panic!("{name}: {e} (run scripts/setup.sh for the MiniWoB++ pages)"));
    (env, obs)
}

fn by_id<'a>(obs: &'a Observation, id: &str) -> &'a DomNode {
    obs.dom.nodes.iter().find(|n| n.id == id).unwrap_or_else(|| panic!("no #{id} in the observation"))
}

fn with_class<'a>(obs: &'a Observation, class: &str) -> Option<&'a DomNode> {
    obs.dom.nodes.iter().find(|n| n.classes.iter().any(|c| c == class))
}

fn center(n: &DomNode) -> (i32, i32) {
    ((n.rect.left + n.rect.width / 2.0) as i32, (n.rect.top + n.rect.height / 2.0) as i32)
}

async fn step(env: &mut IframeEnv, a: Action) -> Step {
    env.step(&a).await.unwrap_or_else(|e| panic!("{a:?}: {e}"))
}

/// Clicks Submit (`#subbtn`) and returns the page's raw reward.
async fn submit(env: &mut IframeEnv, obs: &Observation) -> f64 {
    let s = step(env, Action::Click(by_id(obs, "subbtn").r#ref)).await;
    assert!(s.done, "the page ended the episode");
    s.raw_reward
}

#[wasm_bindgen_test]
async fn drag_box_by_a_drag() {
    let mut solved = 0;
    for seed in 1..=6 {
        let (mut env, obs) = real("drag-box", seed).await;
        let (small, large) = (by_id(&obs, "draggableSmall"), by_id(&obs, "draggableLarge"));
        // Grab the small box where the large one (drawn over it) does not cover it.
        let (s, l) = (small.rect, large.rect);
        let covered = |x: f32, y: f32| x >= l.left && x <= l.left + l.width && y >= l.top && y <= l.top + l.height;
        let grab = [(0.5, 0.5), (0.2, 0.2), (0.8, 0.2), (0.2, 0.8), (0.8, 0.8)]
            .into_iter()
            .map(|(fx, fy)| (s.left + fx * s.width, s.top + fy * s.height))
            .find(|&(x, y)| !covered(x, y));
        let Some((gx, gy)) = grab else { continue };
        // Move the grabbed point by the offset between the boxes' centres.
        let (dx, dy) = (l.left + l.width / 2.0 - (s.left + s.width / 2.0), l.top + l.height / 2.0 - (s.top + s.height / 2.0));
        let to = ((gx + dx) as i32, (gy + dy) as i32);
        let mid = ((gx + dx / 2.0) as i32, (gy + dy / 2.0) as i32);
        let s = step(&mut env, Action::Drag(vec![(gx as i32, gy as i32), mid, to])).await;
        assert_eq!(submit(&mut env, &s.observation).await, 1.0, "seed {seed}");
        solved += 1;
    }
    assert!(solved >= 4, "{solved} seeds had a small box to grab");
}

#[wasm_bindgen_test]
async fn scroll_text_2_by_the_wheel() {
    for seed in 1..=4 {
        let (mut env, obs) = real("scroll-text-2", seed).await;
        let down = obs.instruction.utterance.contains("bottom");
        let (x, y) = center(by_id(&obs, "text-area"));
        // MiniWoB++'s scroll actions: the wheel by 50 px a turn, over the text.
        let mut last = obs;
        for _ in 0..40 {
            last = step(&mut env, Action::Scroll(x, y, if down { SCROLL_STEP } else { -SCROLL_STEP })).await.observation;
        }
        assert_eq!(submit(&mut env, &last).await, 1.0, "seed {seed}: {}", last.instruction.utterance);
    }
    // Without scrolling, the page judges it wrong.
    let (mut env, obs) = real("scroll-text-2", 1).await;
    assert_eq!(submit(&mut env, &obs).await, -1.0);
}

/// The value the page shows beside its slider.
fn shown(obs: &Observation) -> i64 {
    by_id(obs, "val").text.trim().parse().expect("a number")
}

#[wasm_bindgen_test]
async fn use_slider_by_drags_and_arrow_keys() {
    for seed in 1..=4 {
        let (mut env, obs) = real("use-slider", seed).await;
        let want: i64 = obs.instruction.tokens.iter().find_map(|t| t.parse().ok()).expect("the value to select");
        let slider = by_id(&obs, "slider").rect;
        let horizontal = slider.width > slider.height;
        let handle = |o: &Observation| center(with_class(o, "ui-slider-handle").expect("the slider's handle"));
        // The slider's ends: drag the handle to each and read the value.
        let (low, high) = if horizontal {
            ((slider.left as i32 - 5, handle(&obs).1), ((slider.left + slider.width) as i32 + 5, handle(&obs).1))
        } else {
            ((handle(&obs).0, (slider.top + slider.height) as i32 + 5), (handle(&obs).0, slider.top as i32 - 5))
        };
        let o = step(&mut env, Action::Drag(vec![handle(&obs), low])).await.observation;
        let min = shown(&o);
        let o = step(&mut env, Action::Drag(vec![handle(&o), high])).await.observation;
        let max = shown(&o);
        assert!(max > min, "seed {seed}: {min}..{max}");
        // Drag to where the value should be, then the arrow keys for the last steps.
        let f = (want - min) as f32 / (max - min) as f32;
        let to = if horizontal {
            ((slider.left + f * slider.width) as i32, handle(&o).1)
        } else {
            (handle(&o).0, (slider.top + (1.0 - f) * slider.height) as i32)
        };
        let mut o = step(&mut env, Action::Drag(vec![handle(&o), to])).await.observation;
        for _ in 0..10 {
            let now = shown(&o);
            if now == want {
                break;
            }
            let key = if now < want { "<ArrowRight>" } else { "<ArrowLeft>" };
            o = step(&mut env, Action::PressKey(key.into())).await.observation;
        }
        assert_eq!(shown(&o), want, "seed {seed}");
        assert_eq!(submit(&mut env, &o).await, 1.0, "seed {seed}");
    }
}

#[wasm_bindgen_test]
async fn highlight_text_by_a_drag_selection() {
    for seed in 1..=4 {
        let (mut env, obs) = real("highlight-text", seed).await;
        let r = by_id(&obs, "randomText").rect;
        // From the paragraph's first character to past its last: the whole text.
        let from = (r.left as i32 + 1, r.top as i32 + 1);
        let to = ((r.left + r.width) as i32 - 1, (r.top + r.height) as i32 - 1);
        let s = step(&mut env, Action::Drag(vec![from, to])).await;
        assert_eq!(submit(&mut env, &s.observation).await, 1.0, "seed {seed}");
    }
    // Clicking into the text selects nothing.
    let (mut env, obs) = real("highlight-text", 1).await;
    let (x, y) = center(by_id(&obs, "randomText"));
    let s = step(&mut env, Action::ClickAt(x, y)).await;
    assert_eq!(submit(&mut env, &s.observation).await, -1.0);
}

#[wasm_bindgen_test]
async fn copy_paste_by_keys() {
    for seed in 1..=3 {
        let (mut env, obs) = real("copy-paste", seed).await;
        let (tx, ty) = center(by_id(&obs, "to-copy"));
        let (ix, iy) = center(by_id(&obs, "answer-input"));
        step(&mut env, Action::ClickAt(tx, ty)).await;
        step(&mut env, Action::PressKey("C-a".into())).await;
        step(&mut env, Action::PressKey("C-c".into())).await;
        step(&mut env, Action::ClickAt(ix, iy)).await;
        let s = step(&mut env, Action::PressKey("C-v".into())).await;
        assert_eq!(submit(&mut env, &s.observation).await, 1.0, "seed {seed}");
    }
}

#[wasm_bindgen_test]
async fn click_menu_by_hovering() {
    for seed in 1..=4 {
        let (mut env, obs) = real("click-menu", seed).await;
        let path = obs.instruction.utterance.trim_start_matches("Select ").to_string();
        let names: Vec<&str> = path.split('>').collect();
        let mut o = obs.clone();
        let mut last = None;
        for (i, name) in names.iter().enumerate() {
            // An item with a submenu holds the menu's caret icon beside its text.
            let item = (0..o.dom.nodes.len())
                .find(|&i| o.dom.nodes[i].tag == "DIV" && o.dom.subtree_text(i) == *name)
                .map(|i| &o.dom.nodes[i])
                .unwrap_or_else(|| panic!("seed {seed}: {name} is not showing"));
            let (x, y) = center(item);
            if i + 1 == names.len() {
                last = Some(step(&mut env, Action::ClickAt(x, y)).await);
            } else {
                // Hover the item, then let the menu's own delay (300 ms) open its submenu.
                step(&mut env, Action::MoveTo(x, y)).await;
                o = step(&mut env, Action::Wait(400)).await.observation;
            }
        }
        let s = last.unwrap();
        assert!(s.done, "seed {seed}: choosing an item ends the episode");
        assert_eq!(s.raw_reward, 1.0, "seed {seed}: {path}");
    }
}

#[wasm_bindgen_test]
async fn terminal_by_typing_keys() {
    for seed in 1..=3 {
        let (mut env, obs) = real("terminal", seed).await;
        let ext = obs.instruction.utterance.rsplit_once(" .").map(|(_, e)| e.trim().to_string());
        step(&mut env, Action::Click(by_id(&obs, "terminal").r#ref)).await;
        step(&mut env, Action::TypeText("ls".into())).await;
        let o = step(&mut env, Action::PressKey("<Enter>".into())).await.observation;
        let listing = o.dom.nodes.iter().filter(|n| n.classes.iter().any(|c| c == "output")).map(|n| n.text.clone()).last().unwrap();
        let file = listing
            .split_whitespace()
            .find(|f| match &ext {
                Some(e) => f.ends_with(&format!(".{e}")),
                None => !f.contains('.'),
            })
            .unwrap_or_else(|| panic!("seed {seed}: no file to delete in {listing}"))
            .to_string();
        step(&mut env, Action::TypeText(format!("rm {file}"))).await;
        let s = step(&mut env, Action::PressKey("<Enter>".into())).await;
        assert!(s.done, "seed {seed}");
        assert_eq!(s.raw_reward, 1.0, "seed {seed}: rm {file}");
    }
}

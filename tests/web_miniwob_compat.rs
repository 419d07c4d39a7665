//! The environment drives pages that follow MiniWoB++'s own core conventions (our fixture core in
//! `tests/fixtures/miniwob-style/`, written for these tests): pages that start themselves on
//! load, have no `core.getFields`/`core.holdClock`, return `{utterance, fields}` from
//! `getUtterance`, lower `WOB_TASK_READY` for a while, and mark their DOM with `data-wob_ref`.
#![cfg(target_arch = "wasm32")]

mod common;

use common::{js_eval_in, js_json_in, new_frame};
use wasm_bindgen_test::*;
use weblab::env::{Action, DomNode, EnvConfig, EnvError, Environment, NodeValue, Observation};
use weblab::task::TaskSpec;
use weblab::web::IframeEnv;

wasm_bindgen_test_configure!(run_in_browser);

const CORE: &str = include_str!("fixtures/miniwob-style/core/core.js");

fn page(name: &str, html: &str) -> TaskSpec {
    TaskSpec::Inline { name: name.into(), html: html.replace(r#"<script src="core/core.js"></script>"#, &format!("<script>\n{CORE}\n</script>")) }
}

/// order-form.html's own time limit (the fixture core's default).
const ORDER_FORM_LIMIT_MS: f64 = 10_000.0;

fn order_form() -> TaskSpec {
    page("order-form", include_str!("fixtures/miniwob-style/order-form.html"))
}

fn node(obs: &Observation, pred: impl Fn(&DomNode) -> bool) -> &DomNode {
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
    assert!(obs.dom.nodes.iter().all(|n| n.tag != "OPTION"), "a drop-down's options have no boxes, so no nodes");
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
    let radio = node(&obs, |n| {
        n.tag == "INPUT_radio"
            && obs.dom.nodes[n.parent.unwrap()].text.is_empty()
            && obs.dom.nodes[n.parent.unwrap()].children.iter().any(|&c| obs.dom.nodes[c].text == size)
    })
    .r#ref;
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

fn fixture(name: &str) -> TaskSpec {
    let html = match name {
        "choose-list-multi" => include_str!("fixtures/miniwob-style/choose-list-multi.html"),
        "click-link-wrapped" => include_str!("fixtures/miniwob-style/click-link-wrapped.html"),
        "email-star-late" => include_str!("fixtures/miniwob-style/email-star-late.html"),
        "choose-date-stale" => include_str!("fixtures/miniwob-style/choose-date-stale.html"),
        other => panic!("no fixture {other}"),
    };
    page(name, html)
}

fn held() -> EnvConfig {
    EnvConfig { hold_clock: true, ..EnvConfig::default() }
}

fn option_node<'a>(obs: &'a Observation, text: &str) -> &'a DomNode {
    node(obs, |n| n.tag == "OPTION" && n.text == text)
}

#[wasm_bindgen_test]
async fn a_list_box_shows_its_options_and_takes_two_items() {
    let mut env = IframeEnv::new(new_frame(), held());
    let spec = fixture("choose-list-multi");
    for seed in 0..6u32 {
        let obs = env.reset(&spec, seed).await.unwrap();
        obs.dom.validate().unwrap();
        // "Select A and B from the list and click Submit."
        let (a, b) = (obs.instruction.tokens[1].clone(), obs.instruction.tokens[3].clone());
        let list = node(&obs, |n| n.id == "fruit");
        assert_eq!(list.options.len(), 6);
        let options: Vec<&DomNode> = obs.dom.nodes.iter().filter(|n| n.tag == "OPTION").collect();
        assert_eq!(options.len(), 6, "a list box's options have boxes, so they are nodes");
        for o in &options {
            assert!(o.rect.width > 0.0 && o.rect.height > 0.0 && o.is_leaf() && !o.text.is_empty());
            assert_eq!(obs.dom.nodes[o.parent.unwrap()].id, "fruit");
            assert_eq!(o.value, NodeValue::Checked(false));
        }
        // Even seeds choose by Select on the list, odd ones by clicking the options.
        let (first, second) = if seed % 2 == 0 {
            (Action::Select(list.r#ref, a.clone()), Action::Select(list.r#ref, b.clone()))
        } else {
            (Action::Click(option_node(&obs, &a).r#ref), Action::Click(option_node(&obs, &b).r#ref))
        };
        env.step(&first).await.unwrap();
        let s = env.step(&second).await.unwrap();
        for (text, chosen) in [(&a, true), (&b, true)] {
            assert_eq!(option_node(&s.observation, text).value, NodeValue::Checked(chosen), "seed {seed}: {text}");
        }
        let chosen = s.observation.dom.nodes.iter().filter(|n| n.tag == "OPTION" && n.value.is_checked()).count();
        assert_eq!(chosen, 2, "seed {seed}: the second choice adds to the first");
        let submit = node(&s.observation, |n| n.id == "submit").r#ref;
        let s = env.step(&Action::Click(submit)).await.unwrap();
        assert_eq!((s.done, s.raw_reward), (true, 1.0), "seed {seed}: {:?}", s.reason);
    }
    // A click on a chosen option unchooses it, as a person's ctrl-click does; the rest stay.
    let obs = env.reset(&spec, 0).await.unwrap();
    let (a, b) = (obs.instruction.tokens[1].clone(), obs.instruction.tokens[3].clone());
    for text in [&a, &b, &a] {
        env.step(&Action::Click(option_node(&obs, text).r#ref)).await.unwrap();
    }
    let s = env.step(&Action::Click(node(&obs, |n| n.id == "submit").r#ref)).await.unwrap();
    assert_eq!((s.raw_reward, s.reason), (-1.0, Some(format!("chose {b}"))));
}

#[wasm_bindgen_test]
async fn wrapped_text_is_one_t_node_per_line_and_colours_are_read() {
    let mut env = IframeEnv::new(new_frame(), held());
    let spec = fixture("click-link-wrapped");
    let mut wrapped_runs = 0;
    for seed in 0..5u32 {
        let obs = env.reset(&spec, seed).await.unwrap();
        obs.dom.validate().unwrap();
        let p = obs.dom.nodes.iter().position(|n| n.tag == "P").unwrap();
        let lines: Vec<&DomNode> = obs.dom.nodes[p].children.iter().map(|&c| &obs.dom.nodes[c]).filter(|n| n.is_text()).collect();
        // The page's own line boxes: each text run's client rects, as getDOMInfo splits them.
        let boxes = js_json_in(
            env.iframe(),
            "Array.from(document.querySelector('#area p').childNodes).filter(n => n.nodeType === 3).map(n => {
               const r = document.createRange(); r.selectNodeContents(n);
               return Array.from(r.getClientRects()).filter(c => c.width > 0 && c.height > 0).map(c => [c.left, c.top, c.width, c.height]);
             })",
        );
        let runs = boxes.as_array().unwrap();
        wrapped_runs += runs.iter().filter(|r| r.as_array().unwrap().len() > 1).count();
        let want: Vec<Vec<f64>> = runs
            .iter()
            .flat_map(|r| r.as_array().unwrap().iter())
            .map(|c| c.as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect())
            .collect();
        assert_eq!(lines.len(), want.len(), "seed {seed}: one t node per line box");
        for (t, w) in lines.iter().zip(&want) {
            assert!((t.rect.left as f64 - w[0]).abs() < 1.0 && (t.rect.top as f64 - w[1]).abs() < 1.0, "seed {seed}: {t:?} vs {w:?}");
            assert!(t.rect.height < 20.0, "seed {seed}: one line high: {:?}", t.rect);
            assert!(!t.text.is_empty() && t.text == t.text.trim());
            assert!(t.bg_color.is_empty() && t.fg_color.is_empty(), "text nodes carry no colours, as on MiniWoB");
        }
        // The lines read back as the paragraph's text.
        let joined = obs.dom.subtree_text(p);
        let page_text = js_eval_in(env.iframe(), "document.querySelector('#area p').textContent").as_string().unwrap();
        assert_eq!(joined.split_whitespace().collect::<Vec<_>>(), page_text.split_whitespace().collect::<Vec<_>>());
        // Refs of lines stay the same within the episode.
        let again = env.observe().unwrap();
        assert_eq!(again.dom, obs.dom);
        // Colours as getDOMInfo gives them: computed, on elements.
        let link = node(&obs, |n| n.tag == "A");
        assert_eq!((link.fg_color.as_str(), link.bg_color.as_str()), ("rgb(6, 69, 173)", "rgba(0, 0, 0, 0)"));
        assert_eq!(obs.dom.nodes[0].fg_color, "rgb(0, 0, 0)");
        // The target link is still the one to click.
        let target = obs.instruction.tokens.last().unwrap().clone();
        let s = env.step(&Action::Click(node(&obs, |n| n.tag == "A" && n.text == target).r#ref)).await.unwrap();
        assert_eq!((s.done, s.raw_reward), (true, 1.0));
    }
    assert!(wrapped_runs >= 5, "the fixture wraps its text ({wrapped_runs} runs over several lines)");
}

#[wasm_bindgen_test]
async fn reset_waits_for_the_images_of_the_episode() {
    let mut env = IframeEnv::new(new_frame(), held());
    let spec = fixture("email-star-late");
    let mut first: Option<Observation> = None;
    for seed in [3u32, 3, 4, 3] {
        let obs = env.reset(&spec, seed).await.unwrap();
        let stars: Vec<&DomNode> = obs.dom.nodes.iter().filter(|n| n.has_class("star")).collect();
        assert_eq!(stars.len(), 5, "seed {seed}: every star has its box at reset");
        for s in &stars {
            assert_eq!((s.rect.width, s.rect.height), (12.0, 12.0), "seed {seed}");
        }
        let settle = obs.meta.settle.clone().expect("the wait is reported");
        assert_eq!((settle.images, settle.timed_out), (5, false), "{settle:?}");
        if seed == 3 {
            match &first {
                None => first = Some(obs.clone()),
                Some(f) => assert_eq!(&obs, f, "the same seed gives the same observation"),
            }
        }
    }
    // A page with nothing loading reports no wait.
    let obs = env.reset(&order_form(), 1).await.unwrap();
    assert_eq!(obs.meta.settle, None);
}

#[wasm_bindgen_test]
async fn a_reset_clears_what_an_earlier_episode_left_open() {
    let mut env = IframeEnv::new(new_frame(), held());
    let spec = fixture("choose-date-stale");
    let fresh = env.reset(&spec, 7).await.unwrap();
    assert_eq!(fresh.meta.reloaded, None);
    let input = node(&fresh, |n| n.id == "datepicker").r#ref;
    let s = env.step(&Action::Click(input)).await.unwrap();
    assert!(s.observation.dom.nodes.iter().any(|n| n.id == "picker"), "the picker opened");
    // Submitting with the picker open ends the episode and leaves the picker showing.
    let s = env.step(&Action::Click(node(&fresh, |n| n.id == "submit").r#ref)).await.unwrap();
    assert_eq!((s.done, s.raw_reward), (true, -1.0));
    let again = env.reset(&spec, 7).await.unwrap();
    assert!(again.dom.nodes.iter().all(|n| n.id != "picker"), "no picker from the last episode");
    assert_eq!(again, fresh, "the same seed starts from the same page");
    let why = again.meta.reloaded.clone().expect("the reload is reported");
    assert!(why.contains("#picker"), "{why}");
    // An episode that closes its picker leaves nothing behind: the next reset does not reload.
    let input = node(&again, |n| n.id == "datepicker").r#ref;
    let s = env.step(&Action::Click(input)).await.unwrap();
    let day = again.instruction.tokens[2].clone();
    let a = node(&s.observation, |n| n.tag == "A" && n.text == day).r#ref;
    env.step(&Action::Click(a)).await.unwrap();
    let s = env.step(&Action::Click(node(&again, |n| n.id == "submit").r#ref)).await.unwrap();
    assert_eq!((s.done, s.raw_reward), (true, 1.0), "{:?}", s.reason);
    let next = env.reset(&spec, 8).await.unwrap();
    assert_eq!(next.meta.reloaded, None);
}

#[wasm_bindgen_test]
async fn typing_clicks_the_field_first_so_it_is_tampered() {
    let mut env = IframeEnv::new(new_frame(), held());
    let obs = env.reset(&order_form(), 12).await.unwrap();
    let who = node(&obs, |n| n.id == "who").r#ref;
    assert!(!obs.dom.get(who).unwrap().tampered);
    let s = env.step(&Action::Type(who, "Ann".into())).await.unwrap();
    let field = s.observation.dom.get(who).unwrap();
    assert_eq!((field.value.clone(), field.tampered, field.focused), (NodeValue::Text("Ann".into()), true, true));
    // The page's own click listener saw the click too (MiniWoB's tampered mark).
    let mark = js_eval_in(env.iframe(), "document.getElementById('who').dataset.tampered === 'e' + WOB_EPISODE_ID");
    assert_eq!(mark.as_bool(), Some(true));
    // Typing again appends.
    let s = env.step(&Action::Type(who, "a".into())).await.unwrap();
    assert_eq!(s.observation.dom.get(who).unwrap().value, NodeValue::Text("Anna".into()));
}

/// The shipped DOM-Q-Net agents, greedy on 50 seeds of their own task (from the seed they were
/// judged on when shipped) and, for click-link's, of the wrapped-link fixture: they were trained
/// on observations from before text was split into lines, and must still solve their tasks.
#[wasm_bindgen_test]
async fn shipped_agents_still_solve_their_tasks() {
    use weblab::dom_q_net::checkpoint::Checkpoint;
    use weblab::dom_q_net::{DomQNetAgent, train::evaluate};
    const AGENTS: [(&str, &[u8]); 8] = [
        ("click-test", include_bytes!("../agents/click-test.wlq")),
        ("focus-text", include_bytes!("../agents/focus-text.wlq")),
        ("click-link", include_bytes!("../agents/click-link.wlq")),
        ("click-tab", include_bytes!("../agents/click-tab.wlq")),
        ("click-dialog", include_bytes!("../agents/click-dialog.wlq")),
        ("enter-text", include_bytes!("../agents/enter-text.wlq")),
        ("click-button", include_bytes!("../agents/click-button.wlq")),
        // Built with `sibling_positions` and goal concatenation: a network of another shape.
        ("focus-text-2", include_bytes!("../agents/focus-text-2.wlq")),
    ];
    const EPISODES: u32 = 50;
    const FIRST_SEED: u32 = 1_000_000_000;
    let mut env = IframeEnv::new(new_frame(), held());
    let mut report = Vec::new();
    for (task, bytes) in AGENTS {
        let ckpt = Checkpoint::from_bytes(bytes).unwrap();
        let mut agent = DomQNetAgent::from_checkpoint(ckpt, &burn::prelude::Device::flex()).unwrap();
        let mut specs = vec![(task.to_string(), TaskSpec::builtin_inline(task).unwrap())];
        if task == "click-link" {
            specs.push(("click-link-wrapped".into(), fixture("click-link-wrapped")));
        }
        for (name, spec) in specs {
            let stats = evaluate(&mut agent, &mut env, &spec, EPISODES, FIRST_SEED).await.unwrap();
            console_log!("{task} agent on {name}: {}/{EPISODES}", stats.successes);
            report.push((name, stats.successes));
        }
    }
    for (name, successes) in &report {
        assert!(*successes as f64 >= 0.9 * EPISODES as f64, "{report:?}: {name}");
    }
}

//! The native site simulator (`gminiwob::sim::SiteSim`) against the live page: the same design,
//! seed and actions, run side by side, must give the same site subtree (structure, tags, text,
//! values, options, ids, classes, placeholder/name/aria-label, focus, tamper marks, boxes relative
//! to `#gsite` in whole pixels, refs shifted by the nodes above `#gsite`) and the same raw reward,
//! shaped reward, potential, end and page after every step — on every test site and level and on
//! 200 random designs, under the oracle, the wrong oracle, random actions and a mix. Run by
//! `scripts/test.sh` (wasm-bindgen-test in headless Chromium).
#![cfg(target_arch = "wasm32")]

mod common;

use std::mem::discriminant;

use common::new_frame;
use wasm_bindgen_test::*;
use weblab::env::{Action, DomGraph, DomNode, EnvConfig, EnvError, Environment, NodeRef, Observation, Rect, Step};
use weblab::gminiwob::primitive::by_name;
use weblab::gminiwob::test_sites::{LEVELS, RandomDesign, TEST_SITES, test_site};
use weblab::gminiwob::{Design, SiteSim, profile};
use weblab::policy::Policy;
use weblab::policy::gminiwob::SiteOracle;
use weblab::rng::Rng;
use weblab::task::TaskSpec;
use weblab::web::IframeEnv;

wasm_bindgen_test_configure!(run_in_browser);

fn env() -> IframeEnv {
    IframeEnv::new(new_frame(), EnvConfig { hold_clock: true, ..EnvConfig::default() })
}

/// The live observation as the sim reports it: only `#gsite` and what is under it, refs less
/// the nodes numbered before `#gsite`, boxes relative to `#gsite`'s, no colours. Also returns
/// that ref offset.
fn site_view(live: &Observation) -> (Observation, NodeRef) {
    let nodes = &live.dom.nodes;
    let root = nodes.iter().position(|n| n.id == "gsite").expect("the live page shows #gsite");
    let offset = nodes[root].r#ref - 1;
    let origin = nodes[root].rect;
    // Preorder: the subtree is the run of nodes after the root whose parent is in it.
    let mut index = vec![None; nodes.len()];
    let mut out: Vec<DomNode> = Vec::new();
    for (i, n) in nodes.iter().enumerate().skip(root) {
        let parent = if i == root {
            None
        } else {
            match n.parent.and_then(|p| index[p]) {
                Some(p) => Some(p),
                None => break,
            }
        };
        index[i] = Some(out.len());
        out.push(DomNode {
            r#ref: n.r#ref - offset,
            parent,
            children: Vec::new(),
            rect: Rect { left: n.rect.left - origin.left, top: n.rect.top - origin.top, width: n.rect.width, height: n.rect.height },
            bg_color: String::new(),
            fg_color: String::new(),
            ..n.clone()
        });
        if let Some(p) = parent {
            let child = out.len() - 1;
            out[p].children.push(child);
        }
    }
    let obs = Observation {
        instruction: live.instruction.clone(),
        dom: DomGraph { nodes: out, truncated: live.dom.truncated },
        page: live.page,
        ..Default::default()
    };
    (obs, offset)
}

/// Where the two observations first differ, with both versions.
fn difference(live: &Observation, sim: &Observation) -> Option<String> {
    if live.instruction != sim.instruction {
        return Some(format!("instruction:\n live {:?}\n sim  {:?}", live.instruction, sim.instruction));
    }
    if live.page != sim.page {
        return Some(format!("page: live {}, sim {}", live.page, sim.page));
    }
    let (a, b) = (&live.dom.nodes, &sim.dom.nodes);
    for i in 0..a.len().max(b.len()) {
        match (a.get(i), b.get(i)) {
            (Some(x), Some(y)) if x == y => {}
            (x, y) => {
                let path = |n: Option<&DomNode>, nodes: &[DomNode]| {
                    let mut p = Vec::new();
                    let mut cur = n.and_then(|n| n.parent);
                    while let Some(c) = cur {
                        p.push(format!("{}#{}", nodes[c].tag, nodes[c].id));
                        cur = nodes[c].parent;
                    }
                    p.reverse();
                    p.join(" > ")
                };
                return Some(format!(
                    "node {i} (of {} live, {} sim) under {}:\n live {x:?}\n sim  {y:?}",
                    a.len(),
                    b.len(),
                    path(x.or(y), if x.is_some() { a } else { b })
                ));
            }
        }
    }
    (live.dom.truncated != sim.dom.truncated).then(|| "truncated differs".to_string())
}

/// How an episode's actions are chosen.
#[derive(Clone, Copy, Debug)]
enum Mix {
    Oracle,
    Wrong,
    Random,
    /// The oracle's action most of the time, a random one otherwise.
    Noisy,
    /// Random actions away from what ends the episode (`endOnClick` parts, submit buttons): long
    /// episodes, to the step limit; now and then on an element of a page no longer showing (refs
    /// stay valid for the episode), which cannot take focus.
    Explore,
}

const MIXES: [Mix; 5] = [Mix::Oracle, Mix::Wrong, Mix::Random, Mix::Noisy, Mix::Explore];

/// Whether acting on node `i` may end the episode: it is inside an `endOnClick` primitive's
/// wrapper, or a submit button.
fn ends(obs: &Observation, i: usize) -> bool {
    let mut cur = Some(i);
    while let Some(c) = cur {
        let id = &obs.dom.nodes[c].id;
        let end_group =
            id.strip_prefix("group_").and_then(|rest| rest.rsplit_once("_p")).and_then(|(name, _)| by_name(name)).is_some_and(|p| p.end_on_click);
        if end_group || id.starts_with("actionable_submit") {
            return true;
        }
        cur = obs.dom.nodes[c].parent;
    }
    false
}

/// Random actions over the whole site: clicks on any node (links, `endOnClick` parts, next and
/// submit buttons), `SetValue` with right and wrong values, typing, selecting (also where it
/// fails).
struct Chaos {
    rng: Rng,
    /// Keep away from what ends the episode.
    careful: bool,
    /// Nodes seen on pages no longer showing (ref, tag, options), safe to act on.
    gone: Vec<(NodeRef, String, Vec<String>)>,
}

impl Chaos {
    fn value(&mut self, obs: &Observation) -> String {
        let fields = &obs.instruction.fields;
        let extra = ["", "true", "false", "x", "Economy", "CA", "7", "line\nbreak", "  spaced  out "];
        let k = self.rng.below(fields.len() * 2 + extra.len());
        if k < fields.len() {
            fields[k].value.clone()
        } else if k < 2 * fields.len() {
            let f = &fields[k - fields.len()];
            match profile::options(&f.key) {
                Some(opts) => opts[self.rng.below(opts.len())].to_string(),
                None => format!("{}x", f.value),
            }
        } else {
            extra[k - 2 * fields.len()].to_string()
        }
    }

    fn act(&mut self, obs: &Observation) -> Action {
        let nodes: Vec<&DomNode> = obs.dom.nodes.iter().enumerate().filter(|(i, _)| !self.careful || !ends(obs, *i)).map(|(_, n)| n).collect();
        let leaves: Vec<&DomNode> = nodes.iter().copied().filter(|n| n.is_leaf()).collect();
        let stale;
        let target = if self.careful && !self.gone.is_empty() && self.rng.below(6) == 0 {
            let (r, tag, options) = self.gone[self.rng.below(self.gone.len())].clone();
            stale = DomNode { r#ref: r, tag, options, ..DomNode::default() };
            &stale
        } else if self.rng.below(10) < 7 && !leaves.is_empty() {
            leaves[self.rng.below(leaves.len())]
        } else {
            nodes[self.rng.below(nodes.len())]
        };
        match self.rng.below(20) {
            0..=7 => Action::Click(target.r#ref),
            8..=12 => Action::SetValue(target.r#ref, self.value(obs)),
            13..=16 => {
                let tokens = &obs.instruction.tokens;
                let text = match self.rng.below(4) {
                    0 if !tokens.is_empty() => tokens[self.rng.below(tokens.len())].clone(),
                    1 => String::new(),
                    2 => "a\r\nb".to_string(),
                    _ => self.value(obs),
                };
                Action::Type(target.r#ref, text)
            }
            _ => {
                let selects: Vec<&DomNode> = nodes.iter().copied().filter(|n| n.tag == "SELECT").collect();
                let sel = if !selects.is_empty() && self.rng.below(3) > 0 { selects[self.rng.below(selects.len())] } else { target };
                let option = match sel.options.len() {
                    0 => "nope".to_string(),
                    n if self.rng.below(4) > 0 => sel.options[self.rng.below(n)].clone(),
                    _ => "nope".to_string(),
                };
                Action::Select(sel.r#ref, option)
            }
        }
    }
}

/// What the compared episodes did, to show the comparison covered each kind of action and end.
#[derive(Debug, Default)]
struct Tally {
    steps: usize,
    clicks: usize,
    types: usize,
    selects: usize,
    set_values: usize,
    /// Actions on elements of pages no longer showing.
    hidden_targets: usize,
    refused: usize,
    pages_changed: usize,
    solved: usize,
    failed_submits: usize,
    end_clicks: usize,
    step_limits: usize,
}

/// Runs one episode of `spec` for `seed` in the live env and the sim side by side, checking
/// every step.
async fn compare(env: &mut IframeEnv, spec: &TaskSpec, seed: u32, mix: Mix, what: &str, tally: &mut Tally) {
    let design: &Design = spec.design().unwrap();
    let mut sim = SiteSim::from_task(spec, seed).unwrap();
    let sim_obs = sim.reset();
    let live = env.reset(spec, seed).await.unwrap_or_else(|e| panic!("{what}: {e}"));
    let (live_obs, offset) = site_view(&live);
    if let Some(d) = difference(&live_obs, &sim_obs) {
        panic!("{what} ({mix:?}): after reset, {d}\ndesign {}", design.to_json());
    }
    let mut oracle = match mix {
        Mix::Wrong => SiteOracle::wrong(design.pages(), None),
        _ => SiteOracle::new(design.pages()),
    };
    let mut chaos = Chaos { rng: Rng::new(seed as u64 * 7919 + mix as u64), careful: matches!(mix, Mix::Explore), gone: Vec::new() };
    let mut obs = sim_obs;
    let mut trace: Vec<String> = Vec::new();
    for n in 1..=200 {
        let random = match mix {
            Mix::Oracle | Mix::Wrong => false,
            Mix::Random | Mix::Explore => true,
            Mix::Noisy => chaos.rng.below(10) < 3,
        };
        let action = match (random, oracle.act(&obs)) {
            (false, Some(a)) => a,
            _ => chaos.act(&obs),
        };
        trace.push(action.describe(Some(&obs.dom)));
        tally.hidden_targets += action.target().is_none_or(|r| obs.dom.get(r).is_none()) as usize;
        match action {
            Action::Click(_) => tally.clicks += 1,
            Action::Type(..) => tally.types += 1,
            Action::Select(..) => tally.selects += 1,
            Action::SetValue(..) => tally.set_values += 1,
            ref other => panic!("the site's policies act on elements, not {other:?}"),
        }
        let live_action = match &action {
            Action::Click(r) => Action::Click(r + offset),
            Action::Type(r, t) => Action::Type(r + offset, t.clone()),
            Action::Select(r, o) => Action::Select(r + offset, o.clone()),
            Action::SetValue(r, v) => Action::SetValue(r + offset, v.clone()),
            other => other.clone(),
        };
        let fail = |msg: String| -> ! { panic!("{what} ({mix:?}), step {n}: {msg}\nactions: {trace:#?}\ndesign {}", design.to_json()) };
        let (a, b): (Result<Step, EnvError>, Result<Step, EnvError>) = (env.step(&live_action).await, sim.step(&action));
        let (live_step, sim_step) = match (a, b) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(a), Err(b)) => {
                let same = discriminant(&a) == discriminant(&b)
                    && match (&a, &b) {
                        (EnvError::BadTarget { detail: x, .. }, EnvError::BadTarget { detail: y, .. }) => x == y,
                        _ => true,
                    };
                if !same {
                    fail(format!("live error {a}, sim error {b}"));
                }
                tally.refused += 1;
                continue;
            }
            (a, b) => fail(format!("live {:?}, sim {:?}", a.err(), b.err())),
        };
        let (live_obs, live_offset) = site_view(&live_step.observation);
        if live_offset != offset {
            fail(format!("the nodes above #gsite changed: ref offset {live_offset}, was {offset}"));
        }
        if let Some(d) = difference(&live_obs, &sim_step.observation) {
            fail(d);
        }
        let outcome = |s: &Step| (s.raw_reward, s.shaped_reward, s.potential, s.done, s.reason.clone());
        if outcome(&live_step) != outcome(&sim_step) {
            fail(format!("(raw, shaped, potential, done, reason): live {:?}, sim {:?}", outcome(&live_step), outcome(&sim_step)));
        }
        tally.steps += 1;
        if sim_step.observation.page != obs.page {
            tally.pages_changed += 1;
            // The page left behind: its nodes (not #gsite's) now hide, refs still valid.
            let showing: Vec<NodeRef> = sim_step.observation.dom.nodes.iter().map(|n| n.r#ref).collect();
            chaos.gone.extend(obs.dom.nodes.iter().filter(|n| !showing.contains(&n.r#ref)).map(|n| (n.r#ref, n.tag.clone(), n.options.clone())));
        }
        if sim_step.done {
            match (sim_step.raw_reward, sim_step.reason.as_deref().unwrap_or("")) {
                (1.0, _) => tally.solved += 1,
                (_, r) if r.starts_with("wrong") => tally.failed_submits += 1,
                (_, r) if r.starts_with("clicked") => tally.end_clicks += 1,
                _ => tally.step_limits += 1,
            }
            return;
        }
        obs = sim_step.observation;
    }
    panic!("{what}: the episode outlived the step limit");
}

#[wasm_bindgen_test]
async fn the_sim_equals_the_live_page_on_every_test_site_and_level() {
    let t0 = js_sys::Date::now();
    let mut env = env();
    let mut tally = Tally::default();
    for name in TEST_SITES {
        for level in 0..LEVELS {
            let spec = TaskSpec::generated(&format!("{name}-{level}"), test_site(name, level).unwrap()).unwrap();
            for seed in 0..3u32 {
                for mix in MIXES {
                    let what = format!("{name}-{level}/{seed}");
                    compare(&mut env, &spec, seed * 31 + level, mix, &what, &mut tally).await;
                }
            }
        }
    }
    console_log!("test sites: {tally:?} in {:.1} s", (js_sys::Date::now() - t0) / 1000.0);
}

#[wasm_bindgen_test]
async fn the_sim_equals_the_live_page_on_200_random_designs() {
    let t0 = js_sys::Date::now();
    let mut env = env();
    let sampler = RandomDesign::default();
    let mut rng = Rng::new(2027);
    let mut tally = Tally::default();
    for i in 0..200u32 {
        let design = sampler.sample(&mut rng);
        let spec = TaskSpec::generated(&format!("random-{i}"), design).unwrap();
        let mix = MIXES[i as usize % MIXES.len()];
        compare(&mut env, &spec, i, mix, &format!("random design {i}"), &mut tally).await;
    }
    console_log!("random designs: {tally:?} in {:.1} s", (js_sys::Date::now() - t0) / 1000.0);
}

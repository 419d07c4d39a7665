//! What a navigator does on a test site: greedy episodes on the site simulator, step by step
//! (the field it used, the element it acted on, the shaped reward), and how each ended. For
//! finding out why a cell of the success grid stays low.
//!
//! cargo run --release --example inspect_navigator -- CHECKPOINT.wln SITE-LEVEL [episodes (5)]
//!
//! SITE-LEVEL may also be a design of one's own, pages apart by `/` and primitives by `,` (e.g.
//! `navbar,state,submit` or `navbar,username,next_login/state,submit`): one primitive held apart
//! from the rest of a test site shows whether the navigator can act on it at all.

use burn::prelude::Device;
use weblab::env::{Action, Environment, Observation, is_success};
use weblab::gminiwob::design::Design;
use weblab::gminiwob::primitive::by_name;
use weblab::gminiwob::test_sites::test_site;
use weblab::navigator::Navigator;
use weblab::navigator::features::EpisodeMemory;
use weblab::navigator::train::{JUDGE_SEEDS_FROM, sim_pool, site_task};
use weblab::util::block_on;

fn describe(obs: &Observation, action: &Action) -> String {
    let (verb, r, value) = match action {
        Action::SetValue(r, v) => ("set", *r, Some(v.as_str())),
        Action::Click(r) => ("click", *r, None),
        other => return format!("{other:?}"),
    };
    let el = obs.dom.nodes.iter().find(|n| n.r#ref == r);
    let what = el.map_or("?".to_string(), |n| {
        let text: String = n.text.chars().take(24).collect();
        format!(
            "<{}{}{}>{}",
            n.tag,
            if n.id.is_empty() { String::new() } else { format!(" #{}", n.id) },
            n.classes.first().map_or(String::new(), |c| format!(" .{c}")),
            text
        )
    });
    match value {
        Some(v) => format!("{verb} {what} := {v:?}"),
        None => format!("{verb} {what}"),
    }
}

fn named_site(cell: &str) -> Result<Design, String> {
    let (site, level) = cell.rsplit_once('-').ok_or("SITE-LEVEL, e.g. payment-0")?;
    let level: u32 = level.parse().map_err(|_| format!("bad level in {cell}"))?;
    test_site(site, level).ok_or_else(|| format!("no test site {cell}"))
}

fn own_design(spec: &str) -> Result<Design, String> {
    let pages: Vec<&str> = spec.split('/').collect();
    let mut entries = Vec::new();
    for (page, names) in pages.iter().enumerate() {
        for name in names.split(',').filter(|n| !n.is_empty()) {
            let p = by_name(name).ok_or_else(|| format!("no primitive {name:?}"))?;
            entries.push((p.index, page as u32));
        }
    }
    Design::from_entries(Some(pages.len() as u32), &entries).map_err(|e| format!("{spec}: {e}"))
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [file, cell, rest @ ..] = args.as_slice() else {
        return Err("usage: inspect_navigator CHECKPOINT.wln SITE-LEVEL [episodes]".into());
    };
    let episodes: u32 = rest.first().map_or(Ok(5), |s| s.parse().map_err(|_| format!("bad episode count {s}")))?;
    let design = if cell.contains([',', '/']) || by_name(cell).is_some() { own_design(cell)? } else { named_site(cell)? };
    let bytes = std::fs::read(file).map_err(|e| format!("{file}: {e}"))?;
    let (mut nav, _) = Navigator::load(&bytes, &Device::flex().autodiff(), 1).map_err(|e| e.to_string())?;
    let task = site_task(cell, design);
    let mut env = sim_pool(1).pop().expect("a simulator");
    // INSPECT_SAMPLE: draw from the policy (as training does) instead of its greedy choice;
    // INSPECT_QUIET: only the summary line. The summary: successes, steps and return per episode.
    let sample = std::env::var_os("INSPECT_SAMPLE").is_some();
    let quiet = std::env::var_os("INSPECT_QUIET").is_some();
    // INSPECT_ALTERNATIVES=N: the N next likeliest choices under each step (4 when not a number).
    let alternatives = std::env::var("INSPECT_ALTERNATIVES").ok().map_or(0, |n| n.parse().unwrap_or(4));
    let (mut wins, mut steps, mut total) = (0u32, 0u64, 0.0f64);
    block_on(async {
        for seed in JUDGE_SEEDS_FROM..JUDGE_SEEDS_FROM + episodes {
            let mut obs = Environment::reset(&mut env, &task, seed).await.map_err(|e| e.to_string())?;
            if !quiet {
                println!("seed {seed}: instruction {:?}", obs.instruction);
            }
            let mut memory = EpisodeMemory::default();
            loop {
                let state = nav.encode(&obs, &mut memory, false);
                let Some(choice) = nav.act(&state, !sample).await? else {
                    if !quiet {
                        println!("  no open choice");
                    }
                    break;
                };
                let action = state.action(choice);
                // How sure the policy is (a second forward, only when shown): a saturated one (p
                // near 1, entropy near 0) gets no gradient from the actions it never samples.
                let shown = if quiet { None } else { Some(nav.policy(&state).await?) };
                let step = Environment::step(&mut env, &action).await.map_err(|e| e.to_string())?;
                memory.acted(&state, choice);
                steps += 1;
                total += step.learning_reward();
                if let Some((probs, value)) = shown {
                    let p_choice = probs.iter().find(|(a, _)| *a == choice).map_or(0.0, |&(_, p)| p);
                    let entropy: f32 = probs.iter().map(|&(_, p)| if p > 0.0 { -p * p.ln() } else { 0.0 }).sum();
                    println!(
                        "  {}  r {:+.2}  p {p_choice:.3} of {} open, entropy {entropy:.2} nats, value {value:+.2}",
                        describe(&obs, &action),
                        step.learning_reward(),
                        probs.len()
                    );
                    if alternatives > 0 {
                        let mut ranked = probs;
                        ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
                        for &(a, p) in ranked.iter().skip(1).take(alternatives) {
                            println!("      or {}  p {p:.3}", describe(&obs, &state.action(a)));
                        }
                    }
                }
                if step.done {
                    wins += u32::from(is_success(step.raw_reward));
                    if !quiet {
                        println!("  ended: raw {} {}", step.raw_reward, step.reason.unwrap_or_default());
                    }
                    break;
                }
                obs = step.observation;
            }
        }
        println!(
            "{cell}, {} episodes ({}): {wins} successes, {:.1} steps and {:+.2} return an episode",
            episodes,
            if sample { "sampled" } else { "greedy" },
            steps as f64 / episodes.max(1) as f64,
            total / episodes.max(1) as f64
        );
        Ok::<(), String>(())
    })
}

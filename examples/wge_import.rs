//! Imports demonstration files in the published WGE/MiniWoB++ format, as the WGE view does, and
//! prints per file what was imported or refused and why, then the totals by reason; with
//! `--induce`, also the time each file's workflow induction took (the view's
//! `WorkflowPolicy::add_demonstration`). `--hostile N` instead builds a published-format file in
//! memory with one click on a page of N buttons and times its import and induction (issue #30);
//! `--induce-only N` times validation and induction of such a page without the importer (no
//! node cap).
//! Usage: cargo run --release --example wge_import -- [--induce] PATH...   (folders recurse)
//!        cargo run --release --example wge_import -- --hostile N | --induce-only N
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use weblab::demo::DemoStep;
use weblab::env::{Action, DomGraph, DomNode, Instruction, Observation, Rect};
use weblab::task::TaskSpec;
use weblab::wge::config::WgeConfig;
use weblab::wge::demo_import::{check_usable, import_wge_demo, import_wge_file};
use weblab::wge::induction::Induction;
use weblab::wge::policy::WorkflowPolicy;

fn files_under(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path).map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect()).unwrap_or_default();
        entries.sort();
        for e in entries {
            files_under(&e, out);
        }
    } else if path.to_string_lossy().ends_with(".json") || path.to_string_lossy().ends_with(".json.gz") {
        out.push(path.to_path_buf());
    }
}

/// A published-format demonstration: one click on the first of `n` buttons (compact: the start
/// page, then mousedown, mouseup and click, each with its snapshot).
fn hostile(n: usize) -> Vec<u8> {
    let page = |target: bool| {
        let buttons: String = (0..n)
            .map(|i| {
                let mark = if target && i == 0 { r#","recordingTarget":true"# } else { "" };
                format!(
                    r#"{{"tag":"BUTTON","ref":{},"left":{},"top":{},"width":38,"height":18,"text":"OK"{mark}}}"#,
                    4 + i,
                    (i % 4) * 40,
                    50 + (i / 4) * 20
                )
            })
            .collect::<Vec<_>>()
            .join(",");
        format!(
            r#"{{"tag":"BODY","ref":1,"width":160,"height":210,"children":[{{"tag":"DIV","ref":2,"id":"wrap","width":160,"height":210,"children":[{{"tag":"DIV","ref":3,"id":"area","top":50,"width":160,"height":160,"children":[{buttons}]}}]}}]}}"#
        )
    };
    let mut states = vec![format!(r#"{{"time":0,"action":null,"dom":{}}}"#, page(false))];
    for kind in ["mousedown", "mouseup", "click"] {
        states.push(format!(r#"{{"time":1,"action":{{"type":"{kind}","x":5,"y":55,"timing":1}},"dom":{}}}"#, page(true)));
    }
    format!(r#"{{"taskName":"click-button","utterance":"Click on the \"OK\" button.","states":[{}],"reward":1,"rawReward":1}}"#, states.join(","))
        .into_bytes()
}

/// The same page as an observation, bypassing the importer: induction alone on `n` buttons.
fn buttons_step(n: usize) -> DemoStep {
    let mut nodes = vec![DomNode {
        r#ref: 1,
        parent: None,
        tag: "BODY".into(),
        rect: Rect { left: 0.0, top: 0.0, width: 160.0, height: 210.0 },
        ..DomNode::default()
    }];
    for i in 0..n {
        let rect = Rect { left: (i % 4) as f32 * 40.0, top: 50.0 + (i / 4) as f32 * 20.0, width: 38.0, height: 18.0 };
        nodes.push(DomNode { r#ref: 4 + i as u32, parent: Some(0), tag: "BUTTON".into(), text: "OK".into(), rect, ..DomNode::default() });
        nodes[0].children.push(i + 1);
    }
    let instruction = Instruction::new("Click on the \"OK\" button.", Vec::new());
    DemoStep { observation: Observation { instruction, dom: DomGraph { nodes, truncated: 0 }, ..Observation::default() }, action: Action::Click(4) }
}

/// A message as a reason: its numbers as N, so that files refused alike count together.
fn reason(why: &str) -> String {
    let mut out = String::new();
    for c in why.chars() {
        if c.is_ascii_digit() {
            if !out.ends_with('N') {
                out.push('N');
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(i) = args.iter().position(|a| a == "--induce-only") {
        let n: usize = args.get(i + 1).and_then(|a| a.parse().ok()).expect("--induce-only N");
        let step = buttons_step(n);
        let t = Instant::now();
        step.observation.dom.validate().unwrap();
        let validate_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let mut policy = WorkflowPolicy::new(WgeConfig::default(), 1);
        policy.add_demonstration(std::slice::from_ref(&step), Some(&step.observation));
        println!("{n} buttons, no importer: validate {validate_s:.4} s, 1 step induced in {:.3} s", t.elapsed().as_secs_f64());
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--hostile") {
        let n: usize = args.get(i + 1).and_then(|a| a.parse().ok()).expect("--hostile N");
        let bytes = hostile(n);
        let t = Instant::now();
        let imported = import_wge_demo(&bytes);
        let import_s = t.elapsed().as_secs_f64();
        println!("{n} buttons: {:.1} MB of JSON, import {import_s:.3} s", bytes.len() as f64 / 1e6);
        match imported {
            Err(why) => println!("refused: {why}"),
            Ok(d) => {
                let t = Instant::now();
                let mut policy = WorkflowPolicy::new(WgeConfig::default(), 1);
                policy.add_demonstration(&d.steps, Some(&d.final_observation));
                println!("{} step(s) induced in {:.3} s", d.steps.len(), t.elapsed().as_secs_f64());
            }
        }
        return;
    }
    let induce = args.iter().any(|a| a == "--induce");
    // --dump DIR: each imported file's lattice as JSON (to compare two builds' induction).
    let dump = args.iter().position(|a| a == "--dump").and_then(|i| args.get(i + 1)).cloned();
    let mut files = Vec::new();
    for a in args.iter().filter(|a| !a.starts_with("--") && Some(*a) != dump.as_ref()) {
        files_under(Path::new(a), &mut files);
    }
    let mut refused: BTreeMap<String, usize> = BTreeMap::new();
    let mut unusable: BTreeMap<String, usize> = BTreeMap::new();
    let mut imported = 0;
    let mut peak = 0;
    for f in &files {
        let bytes = std::fs::read(f).expect("readable file");
        let name = f.display().to_string();
        match import_wge_file(&name, &bytes) {
            Ok(d) => {
                imported += 1;
                let usable = match check_usable(&d) {
                    Ok(()) => "usable".to_string(),
                    Err(why) => {
                        *unusable.entry(reason(&why)).or_default() += 1;
                        format!("not usable: {why}")
                    }
                };
                let lab = if TaskSpec::builtin(&d.task).is_ok() { "a lab task" } else { "no lab page" };
                let mut line = format!("imported {name}: {} ({lab}; {} steps, raw reward {}; {usable})", d.task, d.steps.len(), d.raw_reward);
                if induce {
                    let t = Instant::now();
                    let mut policy = WorkflowPolicy::new(WgeConfig::default(), 1);
                    policy.add_demonstration(&d.steps, Some(&d.final_observation));
                    line += &format!(", induced in {:.3} s", t.elapsed().as_secs_f64());
                    let mut induction = Induction::new(&d.steps, Some(&d.final_observation), &policy.config.induction);
                    while induction.next_step() {}
                    peak = peak.max(induction.peak_work());
                    line += &format!(" (peak work of a step {})", induction.peak_work());
                    if let Some(dir) = &dump {
                        let out = Path::new(dir).join(f.file_name().unwrap()).with_extension("lattice.json");
                        std::fs::write(out, serde_json::to_string(&policy.demos()[0].lattice).unwrap()).unwrap();
                    }
                }
                println!("{line}");
            }
            Err(why) => {
                println!("refused {name}: {why}");
                *refused.entry(reason(&why)).or_default() += 1;
            }
        }
    }
    println!("\n{} files: {imported} imported, {} refused", files.len(), files.len() - imported);
    if induce {
        println!("the most work one step's induction took: {peak} (budget {})", WgeConfig::default().induction.max_work);
    }
    for (why, n) in &refused {
        println!("  {n:5}  refused: {why}");
    }
    for (why, n) in &unusable {
        println!("  {n:5}  imported, but no workflow to learn (the authors' loader skips these too): {why}");
    }
}

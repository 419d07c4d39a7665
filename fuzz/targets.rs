//! The fuzzed decoders: everything the lab reads that other people (or a damaged store) make.
//! Seeds are real: the shipped agents, the published WGE sample demonstrations, share links,
//! designs, demonstrations, checkpoints, snapshots and sessions made by the lab's own code, and
//! the committed corpus (`fuzz/corpus/<target>/`).
#![allow(dead_code)]

use std::cell::RefCell;

use burn::prelude::Device;
use weblab::adversary::config::{AdversaryConfig, Objective, ObjectiveConfig};
use weblab::adversary::generator::Adversary;
use weblab::demo::{DEMO_FORMAT, DemoStep, Demonstration};
use weblab::dom_q_net::checkpoint::Checkpoint;
use weblab::dom_q_net::train::{Control, Trainer};
use weblab::dom_q_net::{DomQNetAgent, DqnConfig};
use weblab::env::messages::EnvReply;
use weblab::env::{Action, Environment, Step};
use weblab::gminiwob::Design;
use weblab::gminiwob::sim::SiteSim;
use weblab::gminiwob::test_sites::test_site;
use weblab::learn::Agent;
use weblab::learn::checkpoint::{self as container, Precision};
use weblab::navigator::Navigator;
use weblab::navigator::config::{Head, NavigatorConfig};
use weblab::navigator::train::{rollout, site_task};
use weblab::request::{SNAPSHOT_SCHEMA, SavedRun, TrainRequest};
use weblab::rng::Rng;
use weblab::share::{DemoMaker, Replay, SHARE_VERSION, ShareState, SharedDemo, WgeEvent, WgeRecipe, WgeResult, WgeTimed, Words};
use weblab::sim::SimEnv;
use weblab::task::{EnvRequest, TaskSpec};
use weblab::util::block_on;
use weblab::wge::domnet_config::NeuralConfig;
use weblab::wge::neural::NeuralPolicy;
use weblab::wge::session::{DemoSource, Entry, Played, State};

use crate::harness::{Target, class_of, corpus, file, mutate_bytes, mutate_container, mutate_gzip_json, mutate_json_text};

pub const TARGETS: &[Target] = &[
    Target { name: "share", what: "ShareState::decode (every kind of link)", seeds: share_seeds, mutate: mutate_share, run: run_share },
    Target { name: "design", what: "Design::from_json", seeds: design_seeds, mutate: mutate_json_text, run: run_design },
    Target { name: "wge_demo", what: "import_wge_demo (.json and .json.gz)", seeds: wge_demo_seeds, mutate: mutate_gzip_json, run: run_wge_demo },
    Target { name: "lab_demo", what: "Demonstration::from_json", seeds: lab_demo_seeds, mutate: mutate_json_text, run: run_lab_demo },
    Target {
        name: "container",
        what: "the checkpoint container (checkpoint::read, every kind)",
        seeds: container_seeds,
        mutate: mutate_container,
        run: run_container,
    },
    Target {
        name: "dqn_checkpoint",
        what: "DOM-Q-Net .wlq: Checkpoint::from_bytes + from_checkpoint",
        seeds: dqn_seeds,
        mutate: mutate_container,
        run: run_dqn,
    },
    Target {
        name: "navigator_checkpoint",
        what: "navigator .wln: Navigator::load",
        seeds: navigator_seeds,
        mutate: mutate_container,
        run: run_navigator,
    },
    Target {
        name: "domnet_checkpoint",
        what: "DOMNet: NeuralPolicy::from_checkpoint",
        seeds: domnet_seeds,
        mutate: mutate_container,
        run: run_domnet,
    },
    Target { name: "adversary_checkpoint", what: "adversary: Adversary::load", seeds: adversary_seeds, mutate: mutate_container, run: run_adversary },
    Target {
        name: "dqn_snapshot",
        what: "DOM-Q-Net snapshot state: SavedRun JSON, its check and replay restore",
        seeds: dqn_snapshot_seeds,
        mutate: mutate_json_text,
        run: run_dqn_snapshot,
    },
    Target {
        name: "dqn_optimizer",
        what: "DOM-Q-Net Adam moments: load_optimizer_state",
        seeds: dqn_optimizer_seeds,
        mutate: mutate_bytes,
        run: run_dqn_optimizer,
    },
    Target {
        name: "navigator_state",
        what: "navigator learner state (Adam; DQN: target network and replay bytes)",
        seeds: navigator_state_seeds,
        mutate: mutate_nav_state,
        run: run_navigator_state,
    },
    Target {
        name: "wge_session",
        what: "WgeSession::restore (State::restore)",
        seeds: wge_session_seeds,
        mutate: mutate_json_text,
        run: run_wge_session,
    },
    Target {
        name: "train_request",
        what: "the worker's TrainRequest (from_json, config)",
        seeds: train_request_seeds,
        mutate: mutate_json_text,
        run: run_train_request,
    },
    Target {
        name: "env_messages",
        what: "page messages: EnvRequest (and its check), EnvReply",
        seeds: env_message_seeds,
        mutate: mutate_json_text,
        run: run_env_messages,
    },
];

pub fn target(name: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| t.name == name)
}

fn with_corpus(name: &str, mut seeds: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    seeds.extend(corpus(name));
    seeds
}

fn text(data: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(data)
}

// ------------------------------------------------------------------------------ share links

const AGENTS: [&str; 3] = ["click-test", "enter-text", "click-button"];

fn share_states() -> Vec<ShareState> {
    let episode = ShareState {
        v: SHARE_VERSION,
        view: "watch".into(),
        task: TaskSpec::builtin("enter-text").unwrap(),
        seed: 42,
        config: Some(DqnConfig::default()),
        replay: Some(Replay::Episode { actions: vec![Action::Type(5, "Cheree ü".into()), Action::Click(6)], raw_reward: Some(1.0) }),
    };
    let checkpoint = ShareState { replay: Some(Replay::Checkpoint { agent: "click-test".into(), seeds: (1..=10).collect() }), ..episode.clone() };
    let design = ShareState {
        view: "design".into(),
        task: TaskSpec::generated("shopping-3", test_site("shopping", 3).unwrap()).unwrap(),
        config: None,
        replay: None,
        ..episode.clone()
    };
    let miniwob = ShareState {
        view: "play".into(),
        task: TaskSpec::External { base_url: "miniwob/html/miniwob/".into(), name: "click-test".into() },
        config: None,
        replay: None,
        ..episode.clone()
    };
    let demo = |seed| SharedDemo {
        by: DemoMaker::Person,
        seed,
        data_mode: "train".into(),
        actions: vec![Action::Type(3, "kanesha".into()), Action::Click(6)],
    };
    let at = |at, event| WgeTimed { at, event };
    let wge = ShareState {
        view: "wge".into(),
        task: TaskSpec::builtin("login-user").unwrap(),
        config: None,
        replay: Some(Replay::Workflows(WgeRecipe {
            demos: vec![demo(1), demo(2)],
            policy_seed: 1,
            first_seed: 100,
            episodes: 30,
            events: vec![
                at(0, WgeEvent::Demo),
                at(0, WgeEvent::Demo),
                at(0, WgeEvent::NeuralOn),
                at(10, WgeEvent::Judge(5)),
                at(20, WgeEvent::Reload),
            ],
            eval_seeds: (0..10).map(|k| (1 << 30) + k).collect(),
            sender: WgeResult { workflow: 7, neural: Some(2) },
            max_steps: Some(10),
            words: Words::GloveCosine,
        })),
        ..episode.clone()
    };
    vec![episode, checkpoint, design, miniwob, wge]
}

fn share_seeds() -> Vec<Vec<u8>> {
    with_corpus("share", share_states().iter().map(|s| s.encode().into_bytes()).collect())
}

fn b64(bytes: &[u8]) -> String {
    const B: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |acc, (i, &b)| acc | (b as u32) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(B[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

fn unb64(s: &str) -> Option<Vec<u8>> {
    const B: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let vals: Option<Vec<u32>> = s.bytes().map(|c| B.iter().position(|&b| b == c).map(|v| v as u32)).collect();
    let vals = vals?;
    let mut out = Vec::new();
    for chunk in vals.chunks(4) {
        if chunk.len() < 2 {
            return None;
        }
        let n = chunk.iter().enumerate().fold(0u32, |acc, (i, &v)| acc | v << (18 - 6 * i));
        for i in 0..chunk.len() - 1 {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    Some(out)
}

/// A link mutated as the JSON it carries (re-encoded), or as the fragment's text.
fn mutate_share(rng: &mut Rng, data: &[u8], others: &[Vec<u8>]) -> Vec<u8> {
    let frag = text(data).into_owned();
    if rng.below(10) < 8
        && let Some(json) = frag.strip_prefix("s=").and_then(unb64)
    {
        let docs: Vec<Vec<u8>> = others.iter().take(3).filter_map(|o| text(o).strip_prefix("s=").and_then(unb64)).collect();
        let m = mutate_json_text(rng, &json, &docs);
        let prefix = *rng.choose(&["s=", "s=", "s=", "#s=", "x=1&s=", "s=A&s="]).unwrap();
        return format!("{prefix}{}", b64(&m)).into_bytes();
    }
    mutate_bytes(rng, data, others)
}

fn run_share(data: &[u8]) -> String {
    let agents: Vec<String> = AGENTS.iter().map(|s| s.to_string()).collect();
    class_of(ShareState::decode(&text(data), &agents))
}

// ------------------------------------------------------------------------------ designs

fn design_seeds() -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    for site in weblab::gminiwob::test_sites::TEST_SITES {
        for level in [0, 2, 4] {
            if let Some(d) = test_site(site, level) {
                seeds.push(d.to_json().into_bytes());
            }
        }
    }
    with_corpus("design", seeds)
}

fn run_design(data: &[u8]) -> String {
    class_of(Design::from_json(&text(data)).map_err(|e| e.to_string()))
}

// ------------------------------------------------------------------------------ demonstrations

fn wge_demo_seeds() -> Vec<Vec<u8>> {
    let mut seeds: Vec<Vec<u8>> = [
        "tests/fixtures/wge/click-checkboxes_317HQ483I8MMPG6UM3BHWSEVMTONIZ_d4.json.gz",
        "tests/fixtures/wge/login-user_3B4YI393VAQ8Z71VZBMHZOUOIQXSS7_d2.json.gz",
    ]
    .iter()
    .filter_map(|p| file(p))
    .collect();
    // A few more of the published demonstrations, when the shared reference folder is here.
    if let Ok(dirs) = std::fs::read_dir("/work/shared/reference/wge-demos") {
        let mut dirs: Vec<_> = dirs.filter_map(|d| d.ok().map(|d| d.path())).filter(|p| p.is_dir()).collect();
        dirs.sort();
        for d in dirs.iter().take(12) {
            let mut files: Vec<_> = std::fs::read_dir(d).map(|f| f.filter_map(|e| e.ok().map(|e| e.path())).collect()).unwrap_or_default();
            files.sort();
            if let Some(f) = files.iter().find(|f| f.to_string_lossy().ends_with(".json.gz")) {
                seeds.extend(std::fs::read(f).ok().filter(|b| b.len() < 300_000));
            }
        }
    }
    with_corpus("wge_demo", seeds)
}

fn run_wge_demo(data: &[u8]) -> String {
    class_of(weblab::wge::demo_import::import_wge_demo(data))
}

/// A one-click demonstration of click-test, observed on the simulator's page.
fn sim_entry() -> (weblab::env::Observation, Action, Step) {
    let mut env = SimEnv::new(None);
    let obs = block_on(env.reset(&SimEnv::spec("sim-click"), 1)).unwrap();
    let button = obs.dom.nodes.iter().find(|n| n.tag == "BUTTON").expect("a button").r#ref;
    let step = block_on(env.step(&Action::Click(button))).unwrap();
    (obs, Action::Click(button), step)
}

fn lab_demo_seeds() -> Vec<Vec<u8>> {
    let (obs, action, step) = sim_entry();
    let demo = |task: TaskSpec| Demonstration {
        format: DEMO_FORMAT,
        task,
        seed: 1,
        data_mode: "train".into(),
        steps: vec![DemoStep { observation: obs.clone(), action: action.clone() }],
        reward: step.reward,
        raw_reward: step.raw_reward,
        reason: None,
        exact: true,
    };
    let seeds = vec![
        serde_json::to_vec(&demo(TaskSpec::builtin("click-test").unwrap())).unwrap(),
        serde_json::to_vec(&demo(TaskSpec::External { base_url: "miniwob/html/miniwob/".into(), name: "click-test".into() })).unwrap(),
        serde_json::to_vec(&demo(TaskSpec::generated("login-0", test_site("login", 0).unwrap()).unwrap())).unwrap(),
    ];
    with_corpus("lab_demo", seeds)
}

fn run_lab_demo(data: &[u8]) -> String {
    class_of(Demonstration::from_json(&text(data)))
}

// ------------------------------------------------------------------------------ checkpoints

fn small_dqn() -> DqnConfig {
    DqnConfig {
        batch_size: 8,
        replay_capacity: 64,
        dom_hidden: 16,
        token_hidden: 8,
        mode_hidden: 8,
        tag_vocab: 40,
        text_vocab: 200,
        class_vocab: 40,
        ..DqnConfig::default()
    }
}

fn small_nav(head: Head) -> NavigatorConfig {
    NavigatorConfig {
        head,
        vocab_cap: 64,
        embedding_dim: 16,
        latent_dim: 12,
        dqn_batch_size: 4,
        dqn_replay_capacity: 64,
        dqn_min_replay: 4,
        dqn_n_step: 2,
        ..NavigatorConfig::default()
    }
}

fn small_domnet() -> NeuralConfig {
    NeuralConfig {
        word_vocab: 100,
        word_dim: 8,
        lstm_hidden: 8,
        tag_vocab: 20,
        class_vocab: 20,
        align_dim: 8,
        tree_dim: 8,
        attn_dim: 8,
        ctx_dim: 8,
        ..NeuralConfig::default()
    }
}

fn small_adversary() -> AdversaryConfig {
    AdversaryConfig { noise_dim: 4, hidden: 8, ..AdversaryConfig::default() }
}

/// A small DOM-Q-Net agent that has acted and learned on the simulator (its vocabularies hold
/// words, its replay transitions, Adam moments), with its task.
fn trained_dqn() -> (DomQNetAgent, SavedRun) {
    let mut agent = DomQNetAgent::new(small_dqn(), &Device::flex().autodiff()).unwrap();
    let tasks = vec![SimEnv::spec("sim-click")];
    let mut envs = vec![SimEnv::new(Some(6))];
    let mut trainer = Trainer::new(tasks, 3);
    block_on(trainer.run(&mut agent, &mut envs, 60, |_| Control::Continue)).unwrap();
    let saved = SavedRun { schema: SNAPSHOT_SCHEMA, trainer: trainer.state(), replay: agent.replay().recent(20) };
    (agent, saved)
}

fn dqn_seeds() -> Vec<Vec<u8>> {
    let (agent, _) = trained_dqn();
    let mut seeds = vec![
        block_on(agent.save_with(&["sim-click".into()], Precision::Full)).unwrap(),
        block_on(agent.save_with(&["sim-click".into()], Precision::Half)).unwrap(),
    ];
    seeds.extend(file("agents/click-test.wlq"));
    with_corpus("dqn_checkpoint", seeds)
}

fn run_dqn(data: &[u8]) -> String {
    class_of(Checkpoint::from_bytes(data).and_then(|c| DomQNetAgent::from_checkpoint(c, &Device::flex())))
}

/// A small navigator of each head that has learned from a few episodes on a generated site.
fn trained_navigator(head: Head) -> Navigator {
    let mut nav = Navigator::new(small_nav(head), &Device::flex().autodiff(), 2).unwrap();
    let task = site_task("login-0", test_site("login", 0).unwrap());
    let mut env = SiteSim::new(test_site("login", 0).unwrap(), 1, Default::default(), Default::default());
    let mut episodes = Vec::new();
    for seed in 0..4 {
        episodes.push(block_on(rollout(&mut env, &mut nav, &task, seed, false, true)).unwrap().0);
    }
    nav.counters.env_steps += episodes.iter().map(|e| e.len() as u64).sum::<u64>();
    block_on(nav.update(&episodes)).unwrap();
    nav
}

fn navigator_seeds() -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    for head in [Head::A2c, Head::Dqn] {
        let nav = trained_navigator(head);
        seeds.push(block_on(nav.save("DR", Precision::Full)).unwrap());
    }
    seeds.push(block_on(trained_navigator(Head::A2c).save("CL", Precision::Half)).unwrap());
    seeds.extend(file("agents/navigator-code.wln"));
    with_corpus("navigator_checkpoint", seeds)
}

fn run_navigator(data: &[u8]) -> String {
    class_of(Navigator::load(data, &Device::flex(), 0))
}

fn domnet_seeds() -> Vec<Vec<u8>> {
    let p = NeuralPolicy::new(small_domnet(), &Device::flex().autodiff()).unwrap();
    let (obs, action, _) = sim_entry();
    let mut p = p;
    let ep = weblab::wge::replay::ReplayEpisode::new(vec![(obs, action)], 1.0);
    block_on(p.update(&[&ep])).unwrap();
    with_corpus("domnet_checkpoint", vec![block_on(p.checkpoint(&["click-test".into()], Precision::Full)).unwrap()])
}

fn run_domnet(data: &[u8]) -> String {
    class_of(NeuralPolicy::from_checkpoint(data, &Device::flex()))
}

fn adversary_seeds() -> Vec<Vec<u8>> {
    let seeds = [Objective::Code, Objective::FlexibleBPaired]
        .iter()
        .map(|o| {
            let a = Adversary::new(small_adversary(), ObjectiveConfig::new(*o), &Device::flex().autodiff(), 1).unwrap();
            block_on(a.save()).unwrap()
        })
        .collect();
    with_corpus("adversary_checkpoint", seeds)
}

fn run_adversary(data: &[u8]) -> String {
    class_of(Adversary::load(data, &Device::flex()))
}

fn container_seeds() -> Vec<Vec<u8>> {
    let mut seeds: Vec<Vec<u8>> = Vec::new();
    for t in ["dqn_checkpoint", "navigator_checkpoint", "domnet_checkpoint", "adversary_checkpoint"] {
        // The small generated ones (the shipped agents are the other targets' seeds).
        seeds.extend((harness_target(t).seeds)().into_iter().filter(|s| s.len() < 200_000).take(2));
    }
    with_corpus("container", seeds)
}

fn harness_target(name: &str) -> &'static Target {
    target(name).expect("a target")
}

fn run_container(data: &[u8]) -> String {
    use weblab::{adversary, dom_q_net, navigator, wge};
    let kinds = [
        &dom_q_net::checkpoint::KIND,
        &navigator::checkpoint::KIND,
        &wge::neural::KIND,
        &adversary::generator::KIND,
        &weblab::curriculum::train::RUN_KIND,
    ];
    let kind = kinds.iter().find(|k| data.starts_with(k.magic)).unwrap_or(&kinds[0]);
    class_of(container::read(kind, data).map(|p| (p.version, p.header.len(), p.record.len())))
}

// ------------------------------------------------------------------------------ snapshots

thread_local! {
    /// The agents whose saved state the snapshot targets load (the same shapes as the seeds').
    static DQN: RefCell<Option<DomQNetAgent>> = const { RefCell::new(None) };
    static NAVS: RefCell<Option<(Navigator, Navigator)>> = const { RefCell::new(None) };
}

fn dqn_snapshot_seeds() -> Vec<Vec<u8>> {
    let (_, saved) = trained_dqn();
    with_corpus("dqn_snapshot", vec![serde_json::to_vec(&saved).unwrap()])
}

fn run_dqn_snapshot(data: &[u8]) -> String {
    DQN.with(|cell| {
        let mut cell = cell.borrow_mut();
        let agent = cell.get_or_insert_with(|| DomQNetAgent::new(small_dqn(), &Device::flex()).unwrap());
        let req = TrainRequest { tasks: vec![SimEnv::spec("sim-click")], ..TrainRequest::default() };
        let r = serde_json::from_slice::<SavedRun>(data).map_err(|e| e.to_string()).and_then(|saved| {
            saved.check(&req, &agent.cfg)?;
            agent.replay_mut().restore(saved.replay)?;
            Trainer::from_state(saved.trainer);
            Ok(())
        });
        class_of(r)
    })
}

fn dqn_optimizer_seeds() -> Vec<Vec<u8>> {
    let (agent, _) = trained_dqn();
    let moments = block_on(agent.optimizer_state()).unwrap().expect("it learned");
    with_corpus("dqn_optimizer", vec![moments])
}

fn run_dqn_optimizer(data: &[u8]) -> String {
    DQN.with(|cell| {
        let mut cell = cell.borrow_mut();
        let agent = cell.get_or_insert_with(|| DomQNetAgent::new(small_dqn(), &Device::flex()).unwrap());
        class_of(agent.load_optimizer_state(data))
    })
}

fn navigator_state_seeds() -> Vec<Vec<u8>> {
    let seeds = [Head::A2c, Head::Dqn].iter().filter_map(|h| block_on(trained_navigator(*h).optimizer_state()).unwrap()).collect();
    with_corpus("navigator_state", seeds)
}

/// The DQN state's parts (Adam, the target network, the replay) mutated one at a time, the
/// length fields kept right most of the time.
fn mutate_nav_state(rng: &mut Rng, data: &[u8], others: &[Vec<u8>]) -> Vec<u8> {
    const MAGIC: &[u8] = b"WLNVDQN1";
    if !data.starts_with(MAGIC) || rng.below(4) == 0 {
        return mutate_bytes(rng, data, others);
    }
    let mut at = MAGIC.len();
    let mut parts = Vec::new();
    for _ in 0..2 {
        let Some(len) = data.get(at..at + 8).map(|b| u64::from_le_bytes(b.try_into().unwrap()) as usize) else {
            return mutate_bytes(rng, data, others);
        };
        let Some(p) = data.get(at + 8..at + 8 + len) else { return mutate_bytes(rng, data, others) };
        parts.push(p.to_vec());
        at += 8 + len;
    }
    let mut replay = data[at..].to_vec();
    match rng.below(3) {
        0 => parts[0] = mutate_bytes(rng, &parts[0], &[]),
        1 => parts[1] = mutate_bytes(rng, &parts[1], &[]),
        _ => replay = mutate_bytes(rng, &replay, &[]),
    }
    let mut out = MAGIC.to_vec();
    for p in &parts {
        out.extend_from_slice(&(p.len() as u64).to_le_bytes());
        out.extend_from_slice(p);
    }
    out.extend(replay);
    out
}

fn run_navigator_state(data: &[u8]) -> String {
    NAVS.with(|cell| {
        let mut cell = cell.borrow_mut();
        let (a2c, dqn) = cell.get_or_insert_with(|| {
            let dev = Device::flex().autodiff();
            (Navigator::new(small_nav(Head::A2c), &dev, 2).unwrap(), Navigator::new(small_nav(Head::Dqn), &dev, 2).unwrap())
        });
        let nav = if data.starts_with(b"WLNVDQN1") { dqn } else { a2c };
        class_of(nav.load_optimizer_state(data))
    })
}

// ------------------------------------------------------------------------------ the WGE session

fn wge_session_seeds() -> Vec<Vec<u8>> {
    let (obs, action, step) = sim_entry();
    let entry = Entry {
        source: DemoSource::Person,
        label: "seed 1".into(),
        task: "click-test".into(),
        steps: vec![DemoStep { observation: obs, action }],
        final_observation: Some(step.observation),
        reward: step.reward,
        raw_reward: 1.0,
        played: Some(Played { seed: 1, data_mode: "train".into(), exact: true }),
    };
    let mut s = State::default();
    s.add(entry.clone()).unwrap();
    let one = s.save(None).unwrap().into_bytes();
    s.add(Entry { source: DemoSource::Imported, played: None, ..entry }).unwrap();
    let two = s.save(Some(weblab::wge::session::SavedNeural { on: true, task: Some("click-test".into()) })).unwrap().into_bytes();
    with_corpus("wge_session", vec![one, two])
}

fn run_wge_session(data: &[u8]) -> String {
    class_of(State::restore(&text(data)).map(|_| ()))
}

// ------------------------------------------------------------------------------ worker messages

fn train_request_seeds() -> Vec<Vec<u8>> {
    let seeds = [
        serde_json::json!({"config": {"batch_size": 32}, "tasks": [{"source": "builtin", "name": "click-test"}, {"source": "builtin", "name": "enter-text"}], "frames": 1000, "seed": 3, "backend": "cpu", "snapshot_every_s": 10, "snapshot_replay": 2000}),
        serde_json::json!({"tasks": [{"source": "external", "base_url": "miniwob/html/miniwob/", "name": "click-test"}], "config": {}, "frames": 10}),
        serde_json::json!({"agent": "navigator", "generator": {"kind": "dr", "max_pages": 2}, "config": {"latent_dim": 32}, "frames": 10, "backend": "auto", "judge_every_s": 30, "judge_seeds": 5}),
        serde_json::json!({"agent": "navigator", "generator": {"kind": "cl", "p_start": 0.1}, "frames": 10}),
        serde_json::json!({"agent": "navigator", "generator": {"kind": "site", "name": "login-0", "design": serde_json::from_str::<serde_json::Value>(&test_site("login", 0).unwrap().to_json()).unwrap()}}),
        serde_json::json!({"agent": "navigator", "generator": {"kind": "adversary", "objective": "code", "alpha": 0.3, "config": {"hidden": 16}}}),
    ];
    with_corpus("train_request", seeds.iter().map(|v| serde_json::to_vec(v).unwrap()).collect())
}

fn run_train_request(data: &[u8]) -> String {
    class_of(TrainRequest::from_json(&text(data), &[]).and_then(|req| match req.agent.as_str() {
        "navigator" => {
            let mut base = serde_json::to_value(NavigatorConfig::default()).unwrap();
            if let serde_json::Value::Object(over) = &req.config {
                for (k, v) in over {
                    base[k] = v.clone();
                }
            }
            serde_json::from_value::<NavigatorConfig>(base).map_err(|e| e.to_string()).and_then(|c| c.validate())
        }
        _ => req.dqn_config().map(|_| ()),
    }))
}

fn env_message_seeds() -> Vec<Vec<u8>> {
    let (obs, _, step) = sim_entry();
    let msgs = [
        serde_json::to_value(EnvRequest::Reset { task: 1, spec: TaskSpec::builtin("click-test").unwrap(), seed: 4 }).unwrap(),
        serde_json::to_value(EnvRequest::Reset { task: 0, spec: TaskSpec::generated("login-0", test_site("login", 0).unwrap()).unwrap(), seed: 4 })
            .unwrap(),
        serde_json::to_value(EnvRequest::Step { task: 0, action: Action::Type(3, "hello".into()) }).unwrap(),
        serde_json::to_value(EnvReply::Observation(obs)).unwrap(),
        serde_json::to_value(EnvReply::Step(step)).unwrap(),
        serde_json::to_value(EnvReply::Error(weblab::env::EnvError::NavigatedAway { url: "http://x/".into() })).unwrap(),
    ];
    with_corpus("env_messages", msgs.iter().map(|v| serde_json::to_vec(v).unwrap()).collect())
}

fn run_env_messages(data: &[u8]) -> String {
    let t = text(data);
    match serde_json::from_str::<EnvRequest>(&t) {
        Ok(req) => class_of(req.check(&[])),
        Err(_) => class_of(serde_json::from_str::<EnvReply>(&t).map(|r| {
            if let EnvReply::Observation(o) | EnvReply::Step(Step { observation: o, .. }) = r {
                let _ = o.dom.validate();
            }
        })),
    }
}

//! Benchmark (not a test; ignored unless asked for): the workflow policy alone, or DOMNet+WGE,
//! on the paper's Table 1 tasks we have, plus login-user, use-autocomplete, search-engine and
//! book-flight, on the live task pages in headless Chromium. Per task: ten scripted-oracle
//! demonstrations (labelled scripted: not a person's; seeds 1–10) recorded as the recorder keeps
//! them, then `WGE_EPISODES` exploration episodes that train the workflow policy (seeds from
//! 10,000), then test-mode success on `WGE_TEST` held-out seeds (from 90,000; `test` data mode
//! where the task has one). Prints success over training in quarters, test success and
//! wall-clock.
//!
//! With `WGE_NEURAL=1` it is the paper's DOMNet+WGE (§5, Figure 1): each exploration episode
//! also goes to DOMNet's grouped replay (successes only), every `WGE_REPLAY_EVERY` episodes
//! DOMNet takes `WGE_REPLAY_STEPS` gradient steps on replayed episodes once a group holds
//! `WGE_MIN_GROUP`, each such round followed by `WGE_ON_POLICY` on-policy episodes of its own
//! (seeds from 20,000); then DOMNet is judged greedily on the same held-out seeds as the workflow
//! policy, so both columns come from one run. The paper's values are `NeuralConfig`'s defaults.
//!
//! Run with `scripts/bench-wge.sh` or `scripts/bench-wge-domnet.sh` (settings passed at compile
//! time; with `WGE_DEBUG=1` set it also prints the likeliest steps of the first two
//! demonstrations' lattices after training, and five exploration episodes (for one the workflow
//! stopped, the final page's elements of the stopped step's class filter); with
//! `WGE_SHOW_FAILURES=N`, DOMNet's first N failed test episodes, action by action).
//!
//! Two more settings pick the pages and the demonstrations:
//! - `WGE_PAGES=miniwob`: the real MiniWoB++ pages (`TaskSpec::miniwob`, served from
//!   `miniwob/html/` as `scripts/setup.sh` stages them) instead of the lab's own; the row
//!   email-inbox-nl is the real page email-inbox-nl-turk (the people-phrased one the paper used),
//!   and the pages with a test distribution (click-checkboxes-transfer, email-inbox-nl-turk read
//!   `WOB_DATA_MODE`) are tested in it.
//! - `WGE_DEMOS=<served folder>`: people's demonstrations in the published format instead of
//!   scripted ones: per task the first ten files in name order of `<folder>/<page name>/`,
//!   imported with `import_wge_file` as the WGE view imports them (an unusable file is counted
//!   and left out, not replaced). The browser cannot list a folder: the folder's `index.json`
//!   (`{"<page name>": ["<file>", …]}`) lists its files; the scripts stage a folder of the
//!   published files under `target/wge-demos/` with its index (`WGE_DEMO_DIR`).
#![cfg(target_arch = "wasm32")]

mod common;

use common::new_frame;
use wasm_bindgen_test::*;
use weblab::demo::DemoStep;
use weblab::env::{EnvConfig, Environment, builtin_task};
use weblab::policy::Policy;
use weblab::policy::oracle::{Script, scripted_for};
use weblab::task::TaskSpec;
use weblab::web::IframeEnv;
use weblab::web::util::yield_now;
use weblab::wge::config::{WgeConfig, max_steps_for, utterance_goal_for};
use weblab::wge::demo_import::{check_usable, import_wge_file};
use weblab::wge::domnet_config::{NeuralConfig, WordEmbedding};
use weblab::wge::explore::{EpisodeEnd, run_episode, train_episode};
use weblab::wge::neural::NeuralPolicy;
use weblab::wge::policy::{Mode, WorkflowPolicy};
use weblab::wge::replay::ReplayEpisode;
use weblab::wge::word_vectors::WordVectors;

wasm_bindgen_test_configure!(run_in_browser);

const TASKS: [&str; 15] = [
    "click-checkboxes",
    "click-checkboxes-large",
    "click-checkboxes-soft",
    "click-checkboxes-transfer",
    "multi-orderings",
    "multi-layouts",
    "social-media",
    "social-media-all",
    "social-media-some",
    "email-inbox",
    "email-inbox-nl",
    "login-user",
    "use-autocomplete",
    "search-engine",
    "book-flight",
];

/// DOMNet+WGE success (%) in the paper's Table 1, where it reports the task.
fn paper(task: &str) -> Option<u32> {
    Some(match task {
        "click-checkboxes" => 100,
        "click-checkboxes-large" => 84,
        "click-checkboxes-soft" => 94,
        "click-checkboxes-transfer" => 64,
        "multi-orderings" => 100,
        "multi-layouts" => 100,
        "social-media" => 100,
        "social-media-all" => 0,
        "social-media-some" => 42,
        "email-inbox" => 99,
        "email-inbox-nl" => 93,
        _ => return None,
    })
}

const DEMOS: u32 = 10;

/// The real MiniWoB++ page of a row: email-inbox-nl is the people-phrased email-inbox-nl-turk
/// (the paper's "email-inbox-nl"; its published demonstrations are of that page), and book-flight
/// runs on book-flight-nodelay, the same page without its loading delay, where the published
/// book-flight demonstrations were recorded.
fn real_page(task: &str) -> &str {
    match task {
        "email-inbox-nl" => "email-inbox-nl-turk",
        "book-flight" => "book-flight-nodelay",
        t => t,
    }
}

/// The real pages with a test distribution of their own (their scripts read `WOB_DATA_MODE`).
const REAL_TEST_MODE: [&str; 2] = ["click-checkboxes-transfer", "email-inbox-nl-turk"];

/// The bytes at `url` (relative to the test page), or why not.
async fn fetch_bytes(url: &str) -> Result<Vec<u8>, String> {
    use wasm_bindgen::JsCast;
    use wasm_bindgen_futures::JsFuture;
    let why = |e: wasm_bindgen::JsValue| format!("{url}: {e:?}");
    let resp = JsFuture::from(web_sys::window().unwrap().fetch_with_str(url)).await.map_err(why)?;
    let resp: web_sys::Response = resp.unchecked_into();
    if !resp.ok() {
        return Err(format!("{url}: HTTP {}", resp.status()));
    }
    let buf = JsFuture::from(resp.array_buffer().map_err(why)?).await.map_err(why)?;
    Ok(js_sys::Uint8Array::new(&buf).to_vec())
}

/// Ten people's demonstrations of `page` from the served folder `dir` (the first ten of its
/// index's files in name order), each as steps and the page after the last; and a note per file
/// left out (not importable, or not a success with an action).
async fn people_demos(dir: &str, page: &str) -> Result<(Vec<(Vec<DemoStep>, weblab::env::Observation)>, Vec<String>), String> {
    let index = fetch_bytes(&format!("{dir}/index.json")).await?;
    let index: std::collections::BTreeMap<String, Vec<String>> = serde_json::from_slice(&index).map_err(|e| format!("{dir}/index.json: {e}"))?;
    let mut files = index.get(page).cloned().unwrap_or_default();
    files.sort();
    files.truncate(DEMOS as usize);
    if files.is_empty() {
        return Err(format!("{dir} has no demonstrations of {page}"));
    }
    let (mut demos, mut left_out) = (Vec::new(), Vec::new());
    for f in files {
        let path = format!("{page}/{f}");
        let bytes = fetch_bytes(&format!("{dir}/{path}")).await?;
        match import_wge_file(&path, &bytes).and_then(|d| check_usable(&d).map(|_| d)) {
            Ok(d) => demos.push((d.steps, d.final_observation)),
            Err(why) => left_out.push(format!("{f}: {why}")),
        }
    }
    Ok((demos, left_out))
}
const TRAIN_SEEDS: u32 = 10_000;
const TEST_SEEDS: u32 = 90_000;
const ON_POLICY_SEEDS: u32 = 20_000;

fn setting(value: Option<&str>, default: u32) -> u32 {
    value.and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn now_s() -> f64 {
    js_sys::Date::now() / 1000.0
}

fn pct(wins: u32, n: u32) -> f64 {
    if n == 0 { 0.0 } else { 100.0 * wins as f64 / n as f64 }
}

/// The neural half's schedule: the paper's (`NeuralConfig::default()`, reference §2.6) unless the
/// run overrides it; `on_policy` is the number of DOMNet's own episodes after each round of
/// replay updates (§5, Figure 1: "periodically" the replay updates, then π_n rolls out an
/// episode and learns from it; 1).
struct Schedule {
    cfg: NeuralConfig,
    on_policy: u32,
    /// The word vectors `cfg` reads words through (parsed once, shared by every task's policy).
    vectors: Option<std::sync::Arc<WordVectors>>,
}

fn schedule(seed: u64) -> Schedule {
    // WGE_DOMNET=paper: the paper's §5 architecture and critic (`NeuralConfig::paper()`); else the code's.
    let paper = if option_env!("WGE_DOMNET") == Some("paper") { NeuralConfig::paper() } else { NeuralConfig::default() };
    let cfg = NeuralConfig {
        replay_every: setting(option_env!("WGE_REPLAY_EVERY"), paper.replay_every as u32) as usize,
        replay_steps: setting(option_env!("WGE_REPLAY_STEPS"), paper.replay_steps as u32) as usize,
        replay_min_group: setting(option_env!("WGE_MIN_GROUP"), paper.replay_min_group as u32) as usize,
        seed,
        ..paper
    };
    // WGE_WORDS=glove: words through the shipped GloVe 6B 50-d vectors, held fixed (the code's
    // frozen GloVe); else learned embeddings.
    let cfg = if option_env!("WGE_WORDS") == Some("glove") { cfg.with_glove() } else { cfg };
    // WGE_ALIGN, a comma-separated list (ours): `similar` (with WGE_WORDS=glove) aligns words by
    // their vectors' cosine too, the largest of any pair; `similar-mean` the same by the mean of
    // each element word's best cosine; `classes` aligns an element without text by its classes.
    let align: Vec<&str> = option_env!("WGE_ALIGN").unwrap_or("").split(',').map(str::trim).collect();
    let mean = align.contains(&"similar-mean");
    let cfg = NeuralConfig {
        align_similar: mean || align.contains(&"similar"),
        align_similar_mean: mean,
        align_classes: align.contains(&"classes"),
        ..cfg
    };
    Schedule { vectors: word_vectors(&cfg), cfg, on_policy: setting(option_env!("WGE_ON_POLICY"), 1) }
}

/// The shipped GloVe table when the schedule reads words through it (compiled into this
/// benchmark only; the app's page does not carry it).
fn word_vectors(cfg: &NeuralConfig) -> Option<std::sync::Arc<WordVectors>> {
    (cfg.word_embedding == WordEmbedding::Glove6b50d)
        .then(|| std::sync::Arc::new(WordVectors::parse(include_bytes!("../data/glove-6b-50d-tasks.wlv")).expect("the shipped table")))
}

/// DOMNet's side of one task's run.
struct Neural {
    policy: NeuralPolicy,
    on_policy: u32,
    on_policy_wins: u32,
    /// Episodes or updates that failed (the page threw, a loss was not finite), with the first
    /// message: counted as failures, the run goes on.
    errors: u32,
    first_error: Option<String>,
    /// Seconds in replay updates and on-policy episodes.
    train_s: f64,
    /// Seconds in replay gradient steps alone, and their number (for the per-step cost).
    replay_s: f64,
    replay_steps: u32,
    on_policy_s: f64,
    /// Greedy test episodes and wins per replay group (the instruction's field keys).
    test_by_group: std::collections::BTreeMap<Vec<String>, (u32, u32)>,
}

impl Neural {
    fn error(&mut self, e: String) {
        self.errors += 1;
        self.first_error.get_or_insert(e);
    }

    /// One exploration episode into the replay; after each round of replay updates DOMNet's own
    /// on-policy episodes follow.
    async fn observe(&mut self, env: &mut IframeEnv, spec: &TaskSpec, sched_on_policy: u32, episode: ReplayEpisode) {
        let t = now_s();
        match self.policy.observe_exploration(episode).await {
            Ok(stats) if !stats.is_empty() => {
                self.replay_steps += stats.len() as u32;
                self.replay_s += now_s() - t;
                for _ in 0..sched_on_policy {
                    let t1 = now_s();
                    let seed = ON_POLICY_SEEDS + self.on_policy;
                    self.on_policy += 1;
                    match self.policy.train_on_policy(env, spec, seed).await {
                        Ok((ret, _)) => self.on_policy_wins += (ret >= 1.0) as u32,
                        Err(e) => self.error(format!("on-policy episode {seed}: {e}")),
                    }
                    self.on_policy_s += now_s() - t1;
                }
            }
            Ok(_) => {}
            Err(e) => self.error(format!("replay update: {e}")),
        }
        self.train_s += now_s() - t;
    }

    /// Greedy success on `seeds` (an episode the page could not run counts as a failure). The
    /// first `WGE_SHOW_FAILURES` failed episodes are printed: the instruction and each action.
    async fn test(&mut self, env: &mut IframeEnv, spec: &TaskSpec, seeds: std::ops::Range<u32>) -> u32 {
        let mut wins = 0;
        let mut show = setting(option_env!("WGE_SHOW_FAILURES"), 0);
        for seed in seeds {
            match self.policy.run_episode(env, spec, seed, true).await {
                Ok(ep) => {
                    let won = ep.ret >= 1.0;
                    wins += won as u32;
                    let group = self.test_by_group.entry(ep.field_keys.clone()).or_default();
                    group.0 += won as u32;
                    group.1 += 1;
                    if !won && show > 0 {
                        show -= 1;
                        let said = ep.steps.first().map_or("", |(o, _)| o.instruction.utterance.as_str());
                        console_log!("  DOMNet failed seed {seed} (raw reward {}): {said}", ep.ret);
                        for (o, a) in &ep.steps {
                            console_log!("    {}", a.describe(Some(&o.dom)));
                        }
                    }
                }
                Err(e) => self.error(format!("test episode {seed}: {e}")),
            }
            yield_now().await;
        }
        wins
    }
}

#[wasm_bindgen_test]
#[ignore]
async fn bench_workflow_policy_on_table_1_tasks() {
    let episodes = setting(option_env!("WGE_EPISODES"), 3000);
    let test = setting(option_env!("WGE_TEST"), 100);
    let seed = setting(option_env!("WGE_SEED"), 1) as u64;
    let neural_on = option_env!("WGE_NEURAL").is_some_and(|v| v == "1");
    let sched = schedule(seed);
    let only: Vec<&str> = option_env!("WGE_TASKS").unwrap_or("").split([',', ' ']).filter(|t| !t.is_empty()).collect();
    let real = option_env!("WGE_PAGES").is_some_and(|v| v == "miniwob");
    let people = option_env!("WGE_DEMOS").filter(|d| !d.is_empty());
    let train_cfg = EnvConfig { max_steps: Some(30), hold_clock: true, ..EnvConfig::default() };
    let mut env = IframeEnv::new(new_frame(), train_cfg.clone());
    let demos_said = match people {
        Some(dir) => format!("{DEMOS} people's demonstrations per task (the first {DEMOS} files in name order of {dir}/<page>/)"),
        None => format!("{DEMOS} scripted-oracle demonstrations per task (seeds 1-{DEMOS})"),
    };
    let pages_said = if real { "the real MiniWoB++ pages (miniwob 1.1.0)" } else { "the lab's own pages" };
    console_log!(
        "Workflow policy (softmax, policy seed {seed}) on {pages_said}; {demos_said}; {episodes} training episodes (seeds {TRAIN_SEEDS}+); test mode on {test} held-out seeds ({TEST_SEEDS}+)"
    );
    if neural_on {
        let (c, p) = (&sched.cfg, NeuralConfig::default());
        console_log!(
            "DOMNet+WGE (CPU backend, seed {seed}): every {} exploration episodes {} replay gradient steps of {} episodes once a group holds {} (paper: every {}, {} steps, {} episodes, {}), then {} on-policy episodes (seeds {ON_POLICY_SEEDS}+); greedy on the same held-out seeds",
            c.replay_every,
            c.replay_steps,
            c.replay_batch,
            c.replay_min_group,
            p.replay_every,
            p.replay_steps,
            p.replay_batch,
            p.replay_min_group,
            sched.on_policy
        );
        let words = match &sched.cfg.word_embedding {
            WordEmbedding::Learned => format!("learned {}-d word embeddings (WGE_WORDS=glove: GloVe 6B 50d, fixed)", sched.cfg.word_dim),
            WordEmbedding::Glove6b50d => format!("GloVe 6B 50d word vectors, fixed ({}; others learned)", "data/glove-6b-50d-tasks.wlv"),
        };
        let words = if sched.cfg.align_similar_mean {
            format!("{words}; alignment by exact containment or the mean of each element word's best cosine (WGE_ALIGN=similar-mean)")
        } else if sched.cfg.align_similar {
            format!("{words}; alignment by exact containment or the words' cosine (WGE_ALIGN=similar)")
        } else {
            words
        };
        let words =
            if sched.cfg.align_classes { format!("{words}; an element without text aligned by its class names (WGE_ALIGN=classes)") } else { words };
        console_log!(
            "DOMNet's words: {words}; architecture: {}",
            if option_env!("WGE_DOMNET") == Some("paper") { "the paper's §5" } else { "the code's" }
        );
        console_log!(
            "| task | paper DOMNet+WGE | DOMNet+WGE test (%) | workflow test (%) | workflow training success by quarter (%) | replay stored (groups ready / groups) | gradient steps (replay + on-policy) | on-policy successes | wall-clock explore / neural / test / all (s) |"
        );
        console_log!("|---|---|---|---|---|---|---|---|---|");
    } else {
        console_log!("| task | paper DOMNet+WGE | demo steps | step cap | training success by quarter (%) | test success (%) | wall-clock (s) |");
        console_log!("|---|---|---|---|---|---|---|");
    }
    for task in TASKS.iter().filter(|t| only.is_empty() || only.contains(t)) {
        let t0 = now_s();
        let page = if real { real_page(task) } else { task };
        let spec = if real { TaskSpec::miniwob(page).unwrap() } else { TaskSpec::Builtin { name: task.to_string() } };
        if people.is_none() && scripted_for(&spec, Script::Oracle).is_none() {
            console_log!("| {task} | no scripted oracle |");
            continue;
        }
        env.set_config(train_cfg.clone());
        let mut policy = WorkflowPolicy::new(WgeConfig::default(), seed);
        let mut longest = 0;
        let mut failed_demos = 0;
        if let Some(dir) = people {
            // The published files are named by the real page (email-inbox-nl-turk).
            match people_demos(dir, real_page(task)).await {
                Ok((demos, left_out)) => {
                    failed_demos += left_out.len();
                    for why in left_out {
                        console_log!("    {task}: left out {why}");
                    }
                    for (steps, last) in demos {
                        longest = longest.max(steps.len());
                        policy.add_demonstration(&steps, Some(&last));
                    }
                }
                Err(why) => {
                    console_log!("| {task} | no demonstrations: {why} |");
                    continue;
                }
            }
        }
        for s in (1..=DEMOS).filter(|_| people.is_none()) {
            // The page's own oracle: a real page's script where its structure differs from the lab's.
            let mut oracle = scripted_for(&spec, Script::Oracle).unwrap();
            let mut obs = env.reset(&spec, s).await.unwrap();
            let mut steps = Vec::new();
            let last = loop {
                let Some(action) = oracle.act(&obs) else { break None };
                let step = env.step(&action).await.unwrap();
                steps.push(DemoStep { observation: obs, action });
                if step.done {
                    break (step.raw_reward >= 1.0).then_some(step.observation);
                }
                obs = step.observation;
            };
            // Only successful demonstrations are used (reference §2.1: rawReward ≥ 1).
            match last {
                Some(last) => {
                    longest = longest.max(steps.len());
                    policy.add_demonstration(&steps, Some(&last));
                }
                None => failed_demos += 1,
            }
        }
        // The task's episode length (the authors' per-task setting, never below the paper's
        // Table 1 steps: `wge::config::max_steps_for`).
        policy.config.max_steps = max_steps_for(task);
        let mut neural = neural_on.then(|| {
            // The natural-language tasks: DOMNet reads the utterance alone (§5; `utterance_goal_for`).
            let cfg = NeuralConfig { max_episode_steps: policy.config.max_steps, utterance_goal: utterance_goal_for(task), ..sched.cfg.clone() };
            Neural {
                policy: NeuralPolicy::with_word_vectors(cfg, sched.vectors.clone(), &burn::prelude::Device::flex().autodiff()).unwrap(),
                on_policy: 0,
                on_policy_wins: 0,
                errors: 0,
                first_error: None,
                train_s: 0.0,
                replay_s: 0.0,
                replay_steps: 0,
                on_policy_s: 0.0,
                test_by_group: Default::default(),
            }
        });
        let empty_positions: usize = policy.demos().iter().map(|d| d.positions.iter().filter(|p| p.options.is_empty()).count()).sum();
        let quarter = episodes.div_ceil(4).max(1);
        let mut quarters = Vec::new();
        let (mut wins, mut n) = (0, 0);
        // How training episodes ended: page success, page failure, the policy stopped, step cap.
        let mut ends = [0u32; 4];
        let mut actions = 0;
        let mut page_errors = 0u32;
        let t_train = now_s();
        for e in 0..episodes {
            let ep = match train_episode(&mut env, &mut policy, &spec, TRAIN_SEEDS + e).await {
                Ok(ep) => ep,
                Err(why) => {
                    // The page could not run it (counted as a failure; the run goes on).
                    page_errors += 1;
                    if page_errors <= 3 {
                        console_log!("    {task}: training episode {} (seed {}): {why}", e, TRAIN_SEEDS + e);
                    }
                    n += 1;
                    continue;
                }
            };
            wins += ep.succeeded() as u32;
            actions += ep.steps.len();
            ends[match ep.end {
                EpisodeEnd::Done if ep.succeeded() => 0,
                EpisodeEnd::Done => 1,
                EpisodeEnd::Stopped(_) => 2,
                EpisodeEnd::StepCap => 3,
            }] += 1;
            n += 1;
            if n == quarter || e + 1 == episodes {
                quarters.push(format!("{:.0}", pct(wins, n)));
                (wins, n) = (0, 0);
            }
            if let Some(nn) = neural.as_mut() {
                nn.observe(&mut env, &spec, sched.on_policy, ReplayEpisode::from(&ep)).await;
            }
            // Same-page resets and steps need not yield to the browser: without this, the
            // driver's polls of the test page wait out a whole task and time out after 300 s.
            yield_now().await;
        }
        let train_s = now_s() - t_train;
        let explore_s = train_s - neural.as_ref().map_or(0.0, |n| n.train_s);
        if option_env!("WGE_DEBUG").is_some() {
            for (k, d) in policy.demos().iter().enumerate().take(2) {
                for (v, p) in d.positions.iter().enumerate() {
                    let probs = policy.probabilities(k, v);
                    let mut order: Vec<usize> = (0..p.options.len()).collect();
                    order.sort_by(|&a, &b| probs[b].total_cmp(&probs[a]));
                    for &o in order.iter().take(6) {
                        console_log!(
                            "demo {k} v{v} V={:.2} p={:.3} w={:.2} paths={} {}",
                            p.value,
                            probs[o],
                            p.weights[o],
                            p.options[o].paths,
                            d.constraint(&p.options[o]).map_or("skip".into(), |c| c.to_string())
                        );
                    }
                }
            }
            for s in 0..5 {
                let ep = run_episode(&mut env, &mut policy, &spec, 50_000 + s, Mode::Explore).await.unwrap();
                let stopped = ep.stopped_at.map(|c| {
                    let d = &policy.demos()[c.demo];
                    d.constraint(&d.positions[c.vertex].options[c.option])
                });
                console_log!(
                    "explore {s}: end {:?} reward {} actions {:?} stopped {:?}",
                    ep.end,
                    ep.raw_reward,
                    ep.steps.iter().map(|s| s.action.describe(Some(&s.observation.dom))).collect::<Vec<_>>(),
                    stopped.as_ref().map(|c| c.as_ref().map(|x| x.to_string()))
                );
                // Why a step found nothing: the final page's elements of its class filter, if any.
                let classes = stopped.flatten().and_then(|c| c.element_set().and_then(|set| set.classes.clone()));
                if let Some(classes) = classes {
                    let nodes = &ep.final_observation.dom.nodes;
                    let of: Vec<String> = nodes
                        .iter()
                        .filter(|n| n.classes.iter().any(|c| classes.contains(c)))
                        .map(|n| {
                            format!(
                                "#{} {} {:?} at ({:.0},{:.0}) {:.0}x{:.0}",
                                n.r#ref, n.tag, n.text, n.rect.left, n.rect.top, n.rect.width, n.rect.height
                            )
                        })
                        .collect();
                    console_log!("    the final page ({} nodes) has {} element(s) of class {classes:?}: {of:?}", nodes.len(), of.len());
                }
            }
        }
        let modes = builtin_task(task).map(|t| t.modes.clone()).unwrap_or_default();
        let test_mode = if real { REAL_TEST_MODE.contains(&page) } else { modes.iter().any(|m| m == "test") };
        if test_mode {
            env.set_config(EnvConfig { data_mode: "test".into(), ..train_cfg.clone() });
        }
        let t_test = now_s();
        let mut test_wins = 0;
        // Wins per instruction's field keys (DOMNet's replay groups), to set beside DOMNet's.
        let mut workflow_by_group = std::collections::BTreeMap::<Vec<String>, u32>::new();
        for s in 0..test {
            let ep = match run_episode(&mut env, &mut policy, &spec, TEST_SEEDS + s, Mode::Test).await {
                Ok(ep) => ep,
                Err(why) => {
                    page_errors += 1;
                    console_log!("    {task}: workflow test episode (seed {}): {why}", TEST_SEEDS + s);
                    continue;
                }
            };
            test_wins += ep.succeeded() as u32;
            *workflow_by_group.entry(ep.field_keys.clone()).or_default() += ep.succeeded() as u32;
            yield_now().await;
        }
        let workflow_test_s = now_s() - t_test;
        let note = match (failed_demos, empty_positions) {
            (0, 0) => String::new(),
            (f, p) => format!(" ({f} demonstrations failed or left out; {p} lattice positions without a workflow step)"),
        };
        let paper_col = paper(task).map_or("—".to_string(), |p| p.to_string());
        if let Some(mut nn) = neural {
            let t_neural_test = now_s();
            let neural_wins = nn.test(&mut env, &spec, TEST_SEEDS..TEST_SEEDS + test).await;
            let test_s = workflow_test_s + (now_s() - t_neural_test);
            let replay = nn.policy.replay();
            let min = nn.policy.cfg.replay_min_group;
            let groups: Vec<String> = replay.groups().map(|(k, len)| format!("[{}] {len}", k.join(","))).collect();
            let ready = replay.groups().filter(|(_, len)| *len >= min).count();
            console_log!(
                "| {task} | {paper_col} | {:.0} | {:.0} | {} | {} ({ready} / {}) | {} ({} + {}) | {} / {} | {:.0} / {:.0} / {:.0} / {:.0} |{note}",
                pct(neural_wins, test),
                pct(test_wins, test),
                quarters.join(" / "),
                replay.len(),
                groups.len(),
                nn.policy.counters.updates,
                nn.replay_steps,
                nn.policy.counters.updates.saturating_sub(nn.replay_steps as u64),
                nn.on_policy_wins,
                nn.on_policy,
                explore_s,
                nn.train_s,
                test_s,
                now_s() - t0
            );
            console_log!(
                "    {task}: replay groups {}; test wins by group (DOMNet / workflow policy) {}; {:.0} ms per replay gradient step ({} in {:.0} s), {:.0} ms per on-policy episode with its update ({} in {:.0} s); {} errors{}",
                if groups.is_empty() { "none".to_string() } else { groups.join(", ") },
                nn.test_by_group
                    .iter()
                    .map(|(k, (w, n))| format!("[{}] {w} / {} of {n}", k.join(","), workflow_by_group.get(k).copied().unwrap_or(0)))
                    .collect::<Vec<_>>()
                    .join(", "),
                1000.0 * nn.replay_s / nn.replay_steps.max(1) as f64,
                nn.replay_steps,
                nn.replay_s,
                1000.0 * nn.on_policy_s / nn.on_policy.max(1) as f64,
                nn.on_policy,
                nn.on_policy_s,
                nn.errors,
                nn.first_error.map_or(String::new(), |e| format!(" (first: {e})"))
            );
        } else {
            console_log!(
                "| {task} | {paper_col} | {longest} | {} | {} | {:.0} | {:.0} |{note}",
                policy.config.max_steps,
                quarters.join(" / "),
                pct(test_wins, test),
                now_s() - t0
            );
        }
        console_log!(
            "    {task}: training episodes ended {} success / {} failure / {} stopped / {} step cap / {} page errors; {:.1} actions each; {:.0} episodes/s",
            ends[0],
            ends[1],
            ends[2],
            ends[3],
            page_errors,
            actions as f64 / episodes.max(1) as f64,
            episodes as f64 / explore_s.max(1e-3)
        );
    }
}

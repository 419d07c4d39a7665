//! Share links of a WGE run: the run as a recipe (`share::WgeRecipe`) after checking that every
//! demonstration replays on its seeded page to the workflows it induced, both policies judged
//! greedily on the link's seeds, and the re-run of a recipe in another tab, step by step, to the
//! same weights and the same evaluation.

use super::*;

/// A shared run being re-run: its recipe, its demonstrations rebuilt on their pages, and where
/// the re-run is (the next demonstration to add and the next event).
pub(super) struct Plan {
    recipe: WgeRecipe,
    entries: Vec<Entry>,
    next_demo: usize,
    next_event: usize,
}

/// One evaluation episode's outcome.
#[derive(Clone, Debug, PartialEq, Serialize)]
struct Outcome {
    success: bool,
    raw_reward: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
struct SeedResult {
    seed: u32,
    /// The workflow policy in test mode (its most weighted step that executes, §2.4).
    workflow: Outcome,
    /// DOMNet, greedy, when the run trained one.
    neural: Option<Outcome>,
}

#[derive(Clone, Debug, Serialize)]
struct Evaluation {
    seeds: Vec<SeedResult>,
    workflow: u32,
    neural: Option<u32>,
}

/// Replays a shared or saved demonstration's actions on its seeded page, observing as the
/// scripted oracle's demonstrations are observed (the page's clock held between actions), and
/// gives it back as the view keeps it. Refused unless the page ends the episode with a success
/// at its last action.
async fn replay_demo(env: &mut IframeEnv, task: &str, d: &SharedDemo) -> Result<Entry, String> {
    let spec = spec_of(task)?;
    let previous = env.config().clone();
    env.set_config(EnvConfig { max_steps: None, hold_clock: true, data_mode: d.data_mode.clone(), ..previous.clone() });
    let result = async {
        let mut obs = env.reset(&spec, d.seed).await.map_err(|e| e.to_string())?;
        let mut steps = Vec::new();
        for (i, action) in d.actions.iter().enumerate() {
            let step = env.step(action).await.map_err(|e| e.to_string())?;
            steps.push(DemoStep { observation: obs, action: action.clone() });
            if step.done {
                if i + 1 < d.actions.len() || !crate::env::is_success(step.raw_reward) {
                    return Err(format!("the page ended it after {} of its {} actions with raw reward {}", i + 1, d.actions.len(), step.raw_reward));
                }
                return Ok((steps, step));
            }
            obs = step.observation;
        }
        Err(format!("the page did not end it after its {} actions", d.actions.len()))
    }
    .await;
    env.set_config(previous);
    let (steps, last) = result?;
    let source = match d.by {
        DemoMaker::Person => DemoSource::Person,
        DemoMaker::Scripted => DemoSource::Scripted,
    };
    Ok(Entry {
        source,
        label: format!("seed {}", d.seed),
        task: task.to_string(),
        steps,
        // The recorder keeps no page after a person's last action; the oracle's demonstrations do.
        final_observation: (source == DemoSource::Scripted).then_some(last.observation),
        reward: last.reward,
        raw_reward: last.raw_reward,
        played: Some(Played { seed: d.seed, data_mode: d.data_mode.clone(), exact: true }),
    })
}

impl Core {
    /// Both policies, greedy, on `seeds`; neither is changed (DOMNet is judged on a copy made
    /// through its checkpoint, the workflow policy on a clone).
    async fn evaluate(&self, seeds: &[u32]) -> Result<Evaluation, String> {
        let (task, mut policy, cfg) = {
            let s = self.state.borrow();
            (s.task.clone().ok_or("add a demonstration first")?, s.policy.clone(), s.domnet_config())
        };
        let spec = spec_of(&task)?;
        let mut copy = match self.neural_bytes().await? {
            Some((c, o)) => Some(neural_from_bytes(&c, o.as_deref(), &cfg)?),
            None => None,
        };
        let mut env = self.with_env()?;
        let previous = env.config().clone();
        env.set_config(EnvConfig { max_steps: None, hold_clock: true, data_mode: "train".into(), ..previous.clone() });
        let result = async {
            let mut out = Vec::new();
            for &seed in seeds {
                let ep = run_episode(&mut env, &mut policy, &spec, seed, Mode::Test).await.map_err(|e| e.to_string())?;
                let workflow = Outcome { success: ep.succeeded(), raw_reward: ep.raw_reward };
                let neural = match &mut copy {
                    Some(n) => {
                        let ep = n.run_episode(&mut env, &spec, seed, true).await?;
                        Some(Outcome { success: crate::env::is_success(ep.ret), raw_reward: ep.ret })
                    }
                    None => None,
                };
                out.push(SeedResult { seed, workflow, neural });
            }
            Ok::<_, String>(out)
        }
        .await;
        env.set_config(previous);
        self.envs.put(0, env);
        let seeds = result?;
        let workflow = seeds.iter().filter(|r| r.workflow.success).count() as u32;
        let neural = copy.is_some().then(|| seeds.iter().filter(|r| r.neural.as_ref().is_some_and(|o| o.success)).count() as u32);
        Ok(Evaluation { seeds, workflow, neural })
    }

    /// The run as a share link carries it, or why it cannot be carried.
    fn recipe(&self) -> Result<(String, WgeRecipe), String> {
        let s = self.state.borrow();
        let task = s.task.clone().filter(|_| !s.demos.is_empty()).ok_or("add demonstrations first")?;
        if s.demos.len() > MAX_WGE_DEMOS {
            return Err(format!("a link carries at most {MAX_WGE_DEMOS} demonstrations and this session has {}", s.demos.len()));
        }
        let mut demos = Vec::new();
        for (i, e) in s.demos.iter().enumerate() {
            let which = format!("demonstration #{} ({})", i + 1, e.label);
            let Some(played) = &e.played else {
                return Err(if e.source == DemoSource::Imported {
                    format!(
                        "{which} is an imported file: it has no seeded page of ours to replay on, so a link cannot carry it (remove it to share a run of the lab's own demonstrations)"
                    )
                } else {
                    format!("{which} was saved before demonstrations kept their seed: a link cannot carry it")
                });
            };
            if !played.exact {
                return Err(format!("{which} has an action the recorder could not say exactly, so it would not replay the same"));
            }
            let by = if e.source == DemoSource::Scripted { DemoMaker::Scripted } else { DemoMaker::Person };
            let actions = e.steps.iter().map(|st| st.action.clone()).collect();
            demos.push(SharedDemo { by, seed: played.seed, data_mode: played.data_mode.clone(), actions });
        }
        let run = s.run.as_ref().ok_or(
            "what trained these policies is not known in full (their exploration seeds or DOMNet's words changed mid-run, or the session was saved by an older lab): press Reset the policy to start a run a link can carry",
        )?;
        if s.tally.episodes > MAX_WGE_EPISODES {
            return Err(format!("a link re-runs at most {MAX_WGE_EPISODES} exploration episodes and this run has {}", s.tally.episodes));
        }
        if run.events.len() > MAX_WGE_EVENTS {
            return Err(format!(
                "this run has {} events (demonstrations added, DOMNet switched or judged, reloads); a link carries at most {MAX_WGE_EVENTS}",
                run.events.len()
            ));
        }
        Ok((
            task,
            WgeRecipe {
                demos,
                policy_seed: s.policy_seed,
                first_seed: run.first_seed.unwrap_or(s.tally.next_seed),
                episodes: s.tally.episodes,
                events: run.events.clone(),
                eval_seeds: (0..SHARE_EVAL_SEEDS).map(|k| EVAL_SEEDS_FROM + k).collect(),
                sender: WgeResult { workflow: 0, neural: None },
                max_steps: Some(s.max_steps()),
                words: s.words,
            },
        ))
    }

    /// Every demonstration replayed on its seeded page, in order, on the lab's page #0; the first
    /// that does not replay stops it, with the message `refused` makes of its index and why.
    async fn replay_demos(&self, task: &str, demos: &[SharedDemo], refused: impl Fn(usize, String) -> String) -> Result<Vec<Entry>, String> {
        let mut env = self.with_env()?;
        let mut entries = Vec::new();
        let mut failure = None;
        for (i, d) in demos.iter().enumerate() {
            match replay_demo(&mut env, task, d).await {
                Ok(e) => entries.push(e),
                Err(why) => {
                    failure = Some(refused(i, why));
                    break;
                }
            }
        }
        self.envs.put(0, env);
        failure.map_or(Ok(entries), Err)
    }

    /// Each demonstration replays on its seeded page to the lattice it induced here (a person's
    /// recording may not: it was observed by the recorder, not by stepping the page).
    async fn check_replays(&self, task: &str, demos: &[SharedDemo]) -> Result<(), String> {
        let replayed = self.replay_demos(task, demos, |i, why| format!("demonstration #{} does not replay on its page ({why})", i + 1)).await?;
        let s = self.state.borrow();
        for (i, e) in replayed.iter().enumerate() {
            let mut p = WorkflowPolicy::new(WgeConfig::default(), s.policy_seed);
            p.add_demonstration(&e.steps, e.final_observation.as_ref());
            let (a, b) = (&p.demos()[0], &s.policy.demos()[i]);
            if a.lattice != b.lattice || a.field_keys != b.field_keys {
                return Err(format!(
                    "demonstration #{} replays to other pages than it was recorded on, so a link would not train the same workflows",
                    i + 1
                ));
            }
        }
        Ok(())
    }
}

#[wasm_bindgen]
impl WgeSession {
    /// A share link's state for this run (`view: "wge"`): its recipe, after checking that every
    /// demonstration replays to the workflows it induced here, and both policies' greedy results
    /// on the link's evaluation seeds. Resolves `{state, evaluation}`; throws why a link cannot
    /// carry the run (an imported demonstration, too long a run, …). Changes nothing.
    #[wasm_bindgen(js_name = shareRun)]
    pub fn share_run(&self) -> Promise {
        let core = self.core.clone();
        future_to_promise(async move {
            let (task, mut recipe) = core.recipe().map_err(js_err)?;
            core.check_replays(&task, &recipe.demos).await.map_err(js_err)?;
            let evaluation = core.evaluate(&recipe.eval_seeds).await.map_err(js_err)?;
            recipe.sender = WgeResult { workflow: evaluation.workflow, neural: evaluation.neural };
            let state = ShareState {
                v: SHARE_VERSION,
                view: "wge".into(),
                task: spec_of(&task).map_err(js_err)?,
                seed: recipe.first_seed,
                config: None,
                replay: Some(Replay::Workflows(recipe)),
            };
            state.validate(&[]).map_err(js_err)?;
            Ok(to_js(&serde_json::json!({ "state": state, "evaluation": evaluation })))
        })
    }

    /// Starts re-running a shared run (a `ShareState` from `Lab.parseShare`): its demonstrations
    /// are replayed on their seeded pages and the session starts afresh with them pending.
    /// Resolves `{demos, episodes}`; then `reproduceStep` until it says done, then `evaluateRun`.
    #[wasm_bindgen(js_name = openRun)]
    pub fn open_run(&self, state: JsValue) -> Promise {
        let (core, plan) = (self.core.clone(), self.plan.clone());
        future_to_promise(async move {
            let state: ShareState = serde_wasm_bindgen::from_value(state).map_err(|e| js_err(format!("bad share state: {e}")))?;
            state.validate(&[]).map_err(js_err)?;
            // `validate` let through only the lab's own tasks and the real MiniWoB++ pages.
            let task = state.task.label();
            let Some(Replay::Workflows(recipe)) = state.replay else {
                return Err(js_err("this link carries no WGE run"));
            };
            let entries = core
                .replay_demos(&task, &recipe.demos, |i, why| format!("the shared demonstration #{} does not replay here ({why})", i + 1))
                .await
                .map_err(js_err)?;
            let mut fresh = State::with_seed(recipe.policy_seed);
            // The task first, so the demonstrations keep the link's cap (a link made before runs
            // carried one ran the view's old 10).
            fresh.task = Some(task);
            fresh.policy.config.max_steps = recipe.max_steps.unwrap_or(LEGACY_MAX_STEPS);
            fresh.tally.next_seed = recipe.first_seed;
            words::load(recipe.words).await.map_err(js_err)?;
            fresh.words = recipe.words;
            *core.state.borrow_mut() = fresh;
            *core.neural.borrow_mut() = None;
            *core.neural_on.borrow_mut() = false;
            let view = serde_json::json!({ "demos": entries.len(), "episodes": recipe.episodes });
            *plan.borrow_mut() = Some(Plan { recipe, entries, next_demo: 0, next_event: 0 });
            Ok(to_js(&view))
        })
    }

    /// The shared run's next step: what happened before the next episode (demonstrations
    /// added, DOMNet switched, a reload), then a DOMNet judging (`{kind: "judge", neural}`) or an
    /// exploration episode (`{kind: "episode", episode}`), or `{kind: "done"}`.
    #[wasm_bindgen(js_name = reproduceStep)]
    pub fn reproduce_step(&self) -> Promise {
        let (core, plan) = (self.core.clone(), self.plan.clone());
        future_to_promise(async move {
            loop {
                let episodes = core.state.borrow().tally.episodes;
                let (event, total) = {
                    let mut p = plan.borrow_mut();
                    let p = p.as_mut().ok_or_else(|| js_err("no shared run is open"))?;
                    let event = p.recipe.events.get(p.next_event).filter(|e| e.at == episodes).map(|e| e.event.clone());
                    if event.is_some() {
                        p.next_event += 1;
                    }
                    (event, p.recipe.episodes)
                };
                let Some(event) = event else {
                    if episodes >= total {
                        return Ok(to_js(&serde_json::json!({ "kind": "done", "of": total })));
                    }
                    let episode = core.explore().await.map_err(js_err)?;
                    return Ok(to_js(&serde_json::json!({ "kind": "episode", "episode": episode, "of": total })));
                };
                match event {
                    WgeEvent::Demo => {
                        let entry = {
                            let mut p = plan.borrow_mut();
                            let p = p.as_mut().expect("checked above");
                            p.next_demo += 1;
                            p.entries[p.next_demo - 1].clone()
                        };
                        core.state.borrow_mut().add(entry).map_err(js_err)?;
                    }
                    WgeEvent::NeuralOn => core.set_neural(true).map_err(js_err)?,
                    WgeEvent::NeuralOff => core.set_neural(false).map_err(js_err)?,
                    WgeEvent::NeuralDropped => core.drop_neural(),
                    WgeEvent::Reload => core.reload().await.map_err(js_err)?,
                    WgeEvent::Judge(n) => {
                        let view = core.judge(n).await.map_err(js_err)?;
                        return Ok(to_js(&serde_json::json!({ "kind": "judge", "neural": view, "episodes": episodes, "of": total })));
                    }
                }
            }
        })
    }

    /// Evaluates the re-run policies on the link's seeds: resolves to `{evaluation, sender,
    /// same}`, `same` whether both policies' successes are the sender's.
    #[wasm_bindgen(js_name = evaluateRun)]
    pub fn evaluate_run(&self) -> Promise {
        let (core, plan) = (self.core.clone(), self.plan.clone());
        future_to_promise(async move {
            let (seeds, sender) = {
                let p = plan.borrow();
                let p = p.as_ref().ok_or_else(|| js_err("no shared run is open"))?;
                (p.recipe.eval_seeds.clone(), p.recipe.sender.clone())
            };
            let evaluation = core.evaluate(&seeds).await.map_err(js_err)?;
            let same = evaluation.workflow == sender.workflow && evaluation.neural == sender.neural;
            Ok(to_js(&serde_json::json!({ "evaluation": evaluation, "sender": sender, "same": same })))
        })
    }

    /// A fingerprint (hex) of everything trained: the workflow policy's saved form (weights,
    /// baselines, its generator's place) and what DOMNet learned ([`NeuralPolicy::fingerprint`]). Two
    /// runs of one recipe give the same fingerprint.
    pub fn fingerprint(&self) -> Promise {
        let core = self.core.clone();
        future_to_promise(async move {
            let mut h = fnv1a_on(FNV_START, core.state.borrow().policy.to_json().as_bytes());
            let taken = core.neural.borrow_mut().take();
            if let Some(n) = taken {
                let f = n.fingerprint().await;
                *core.neural.borrow_mut() = Some(n);
                h = fnv1a_on(h, &f.map_err(js_err)?.to_le_bytes());
            }
            Ok(JsValue::from(format!("{h:016x}")))
        })
    }
}

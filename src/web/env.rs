//! [`IframeEnv`]: the [`Environment`] on a live task page in a same-origin iframe.

use wasm_bindgen::JsCast;
use web_sys::HtmlIFrameElement;

use super::actuator;
use super::frame::{self, TaskFrame};
use super::gminiwob;
use super::input::InputState;
use super::reader::DomReader;
use super::util::sleep;
use crate::env::{
    Action, EnvConfig, EnvError, Environment, EpisodeGuard, Field, FreshPage, Instruction, Observation, ObservationMeta, STEP_LIMIT_REASON, Step,
};
use crate::gminiwob::reward::dom_changed;
use crate::gminiwob::{Shaper, Site};
use crate::task::{GeneratedSite, TaskSpec};

/// The running episode's generated site, with what its reward needs between steps.
struct Generated {
    site: Site,
    shaper: Shaper,
    /// The last observation's graph and page, to tell whether an action changed anything.
    last: Observation,
}

pub struct IframeEnv {
    frame: TaskFrame,
    reader: DomReader,
    guard: EpisodeGuard,
    cfg: EnvConfig,
    task: Option<TaskSpec>,
    /// The instruction is fixed within an episode; read it once at reset.
    instruction: Instruction,
    generated: Option<Generated>,
    /// The mouse and the clipboard of MiniWoB++'s pointer and key actions.
    input: InputState,
}

impl IframeEnv {
    pub fn new(iframe: HtmlIFrameElement, cfg: EnvConfig) -> Self {
        IframeEnv {
            frame: TaskFrame::new(iframe),
            reader: DomReader::default(),
            guard: EpisodeGuard::new(cfg.max_steps),
            cfg,
            task: None,
            instruction: Instruction::default(),
            generated: None,
            input: InputState::default(),
        }
    }

    pub fn config(&self) -> &EnvConfig {
        &self.cfg
    }

    pub fn set_config(&mut self, cfg: EnvConfig) {
        self.guard.set_max_steps(cfg.max_steps);
        self.cfg = cfg;
    }

    pub fn task(&self) -> Option<&TaskSpec> {
        self.task.as_ref()
    }

    pub fn iframe(&self) -> &HtmlIFrameElement {
        &self.frame.iframe
    }

    pub fn steps(&self) -> u32 {
        self.guard.steps()
    }

    /// A fresh observation of the running episode (e.g. after a person acted on the page).
    pub fn observe(&mut self) -> Result<Observation, EnvError> {
        let page = self.frame.page.as_ref().ok_or(EnvError::NoEpisode)?;
        let dom = self.reader.read(&page.document, page.epoch, self.cfg.max_nodes);
        Ok(Observation { instruction: self.instruction.clone(), dom, page: gminiwob::current_page(&page.window), ..Default::default() })
    }

    /// The generated site of the running episode, if the task is one.
    pub fn site(&self) -> Option<&Site> {
        self.generated.as_ref().map(|g| &g.site)
    }

    /// Each field of the generated site and whether it is right, and Φ, as the page is now (e.g.
    /// while a person plays it).
    pub fn site_status(&self) -> Option<gminiwob::SiteStatus> {
        let (g, page) = (self.generated.as_ref()?, self.frame.page.as_ref()?);
        Some(gminiwob::site_status(&g.site, &page.window, &page.document))
    }

    /// The ref of `element` in this episode (assigned now if the reader has not seen it yet).
    pub fn ref_of(&mut self, element: &web_sys::Element) -> crate::env::NodeRef {
        self.reader.ref_of(element.unchecked_ref())
    }

    pub fn page_document(&self) -> Option<web_sys::Document> {
        self.frame.page.as_ref().map(|p| p.document.clone())
    }

    /// The page's reward globals right now.
    pub fn page_outcome(&self) -> Option<super::frame::PageOutcome> {
        self.frame.page.as_ref().map(|p| p.outcome())
    }

    fn page_gone(&mut self) -> Option<EnvError> {
        let page = self.frame.page.as_ref()?;
        if self.frame.still_showing(page) {
            return None;
        }
        let url = self.frame.current_url();
        self.frame.page = None;
        self.guard.finish();
        Some(EnvError::NavigatedAway { url })
    }
}

impl Environment<GeneratedSite> for IframeEnv {
    async fn reset(&mut self, task: &TaskSpec, seed: u32) -> Result<Observation, EnvError> {
        self.guard.finish();
        self.generated = None;
        // A generated site is rendered here, from its design and the seed, and handed to the page.
        let generated = match task {
            TaskSpec::Generated { site, .. } => Some((crate::gminiwob::render(&site.design, seed, site.values), Shaper::new(site.reward))),
            _ => None,
        };
        self.frame.ensure_loaded(task, &self.cfg).await?;
        let site = generated.as_ref().map(|(site, _)| site);
        // A page whose state outlives an episode gives the same seed another page once it has
        // run one: only a fresh load makes the reset depend on the seed alone.
        let leaks = task.miniwob_task().is_some_and(|t| t.leaks);
        let fresh = match self.cfg.fresh_page {
            FreshPage::WhenItLeaks => leaks,
            FreshPage::Always => true,
            FreshPage::Never => false,
        };
        let mut reloaded = None;
        if fresh && self.frame.page.as_ref().is_some_and(|p| p.epoch > 0) {
            self.frame.reload(task, &self.cfg).await?;
            reloaded = Some(if leaks {
                format!("reloaded the page: the MiniWoB++ page {} keeps state from one episode to the next", task.name())
            } else {
                "reloaded the page: a fresh page for every episode (fresh_page: always)".to_string()
            });
        }
        let page = self.frame.page.as_mut().expect("loaded");
        // What an earlier episode left showing outside the task area: if the new episode's
        // genProblem does not clear it either, only a fresh page gives a clean start.
        let left = page.leftovers();
        let mut settle = page.start_episode(task.name(), seed, &self.cfg, site).await?;
        let stale: Vec<String> = left.iter().filter(|e| frame::is_showing(e)).map(frame::describe).collect();
        if !stale.is_empty() {
            self.frame.reload(task, &self.cfg).await?;
            let page = self.frame.page.as_mut().expect("reloaded");
            settle = page.start_episode(task.name(), seed, &self.cfg, site).await?;
            reloaded = Some(format!("reloaded the page: {} left showing by an earlier episode", stale.join(", ")));
        }
        if let Some(note) = self.frame.page.as_mut().and_then(|p| p.load_note.take()) {
            reloaded = Some(match reloaded {
                Some(why) => format!("{why}; {note}"),
                None => format!("reloaded the page: {note}"),
            });
        }
        let page = self.frame.page.as_ref().expect("loaded");
        let (utterance, fields) = page.instruction();
        // A page that gives no fields (most of MiniWoB++'s) gets them from its utterance.
        let fields = fields.into_iter().map(|(key, value)| Field { key, value }).collect();
        self.instruction = Instruction::for_task(task.name(), &utterance, fields);
        self.task = Some(task.clone());
        self.reader.begin_episode();
        self.input.begin_episode();
        // Generated sites carry their own step limit (the papers' 25 by default).
        self.guard.set_max_steps(match &generated {
            Some((_, shaper)) => Some(shaper.config().step_limit),
            None => self.cfg.max_steps,
        });
        self.guard.begin();
        let mut obs = self.observe()?;
        obs.meta = ObservationMeta { settle, reloaded };
        self.generated = generated.map(|(site, mut shaper)| {
            shaper.begin();
            Generated { site, shaper, last: obs.clone() }
        });
        Ok(obs)
    }

    async fn step(&mut self, action: &Action) -> Result<Step, EnvError> {
        self.guard.admit()?;
        if let Some(err) = self.page_gone() {
            return Err(err);
        }
        let page = self.frame.page.as_ref().ok_or(EnvError::NoEpisode)?;
        let before = page.outcome();
        if before.done {
            // The page ended the episode between steps (its time limit): report that end
            // without sending the action.
            self.guard.finish();
            let observation = self.observe()?;
            let shaped_reward = self.generated.as_ref().map(|_| before.raw_reward);
            return Ok(Step {
                observation,
                reward: before.reward,
                raw_reward: before.raw_reward,
                done: true,
                reason: before.reason,
                shaped_reward,
                potential: None,
            });
        }
        page.hold_clock(false);
        let fields = &self.instruction.fields;
        let field = |i: u32| fields.get(i as usize).map(|f| f.value.clone()).unwrap_or_default();
        let acted = page.reactions.during_async(actuator::perform(action, &self.reader, &mut self.input, &page.window, &page.document, field)).await;
        if self.cfg.settle_ms > 0 {
            sleep(self.cfg.settle_ms).await;
        }
        // The page's reaction: the short timers the action started (a widget's delay, an
        // animation) and the images it began to show, so the observation is what a person sees
        // once the page is still.
        if acted.is_ok() && self.frame.still_showing(page) {
            page.reactions.settle(self.cfg.settle_timeout_ms, || page.outcome().done).await;
            if !page.outcome().done {
                page.settle(&self.cfg).await;
            }
        }
        if let Some(err) = self.page_gone() {
            return Err(err);
        }
        let page = self.frame.page.as_ref().ok_or(EnvError::NoEpisode)?;
        if let Err(e) = acted {
            if self.cfg.hold_clock {
                page.hold_clock(true);
            }
            return Err(e);
        }
        let mut outcome = page.outcome();
        if self.guard.record(outcome.done) {
            let capped = self.generated.as_ref().map_or(-1.0, |g| g.shaper.config().step_limit_reward);
            page.end_episode(capped, STEP_LIMIT_REASON);
            outcome = page.outcome();
        } else if !outcome.done && self.cfg.hold_clock {
            page.hold_clock(true);
        }
        let observation = self.observe()?;
        let (mut shaped_reward, mut potential) = (None, None);
        if let (Some(g), Some(page)) = (self.generated.as_mut(), self.frame.page.as_ref()) {
            let phi = gminiwob::site_potential(&g.site, &page.document);
            let changed = dom_changed(&g.last.dom, &observation.dom, g.last.page, observation.page);
            shaped_reward = Some(g.shaper.step(outcome.raw_reward, outcome.done, phi, changed));
            potential = Some(phi);
            g.last = observation.clone();
        }
        Ok(Step {
            observation,
            reward: outcome.reward,
            raw_reward: outcome.raw_reward,
            done: outcome.done,
            reason: outcome.reason,
            shaped_reward,
            potential,
        })
    }
}

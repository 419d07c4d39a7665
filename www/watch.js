// Watch: an agent acting on the task page step by step, with its Q-values drawn over the page;
// fast runs of many episodes; and share links replayed action for action. The gMiniWoB navigator
// acts on a generated test site (site and level picked here) with its policy drawn over it; its
// episode loop, greedy choice, step limit, seeds and success count are the lab's (Rust).
import { drawOverlay, drawNavigator, clearOverlay, drawEnded, holdCover as holdFrameCover } from './overlay.js';
import { errorText, scrollListTo } from './app.js';
import { agentLoader } from './watch/agent.js';

const $ = (id) => document.getElementById(id);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// While this view is open the task core's START cover is held back from sight (overlay.js).
const holdCover = (on) => holdFrameCover($('task-frame'), on);

export function initWatch(ctx) {
  const lab = ctx.lab;
  let obs = null; // what the agent sees now
  let done = true;
  let busy = false;
  let playing = false;
  let fastRunning = false;
  let episode = { task: null, seed: 0, actions: [], raw: null };
  const agents = agentLoader(ctx); // the DOM-Q-Net agent acting (watch/agent.js)
  // A generated site's page (the reward panel is added beside it by fitFrame).
  const SITE_SIZE = ctx.Lab.designLimits().frame_size;
  let token = 0; // bumps to cancel a running play loop

  const speed = () => Number($('speed').value);
  const navigating = () => $('policy').value === 'navigator';
  const sites = ctx.Lab.testSites();
  for (const site of sites.sites) $('watch-site').append(new Option(site, site));
  for (let l = 0; l < sites.levels; l++) $('watch-level').append(new Option(String(l), String(l)));
  // The test site the navigator acts on.
  function siteTask() {
    const site = $('watch-site').value, level = Number($('watch-level').value);
    return { source: 'generated', name: `${site}-${level}`, design: ctx.Lab.testSiteDesign(site, level) };
  }

  // The Watch view shows the navigator's controls instead of the task picker (style.css).
  function applyMode() {
    const ws = $('workspace');
    const nav = ctx.view === 'watch' && navigating();
    if (nav) ws.dataset.watchAgent = 'navigator';
    else delete ws.dataset.watchAgent;
    if (ctx.view === 'watch') ctx.frameSize = nav ? SITE_SIZE : null;
  }
  const maxSteps = () => Math.max(1, parseInt($('max-steps').value, 10) || 20);

  function setButtons() {
    $('new-episode').disabled = busy || fastRunning;
    $('step').disabled = busy || fastRunning || done;
    $('play').disabled = fastRunning;
    $('play').textContent = playing ? 'Pause' : 'Play';
    $('run').disabled = fastRunning || playing || $('policy').value === 'dqn';
    $('watch-nav-file').disabled = busy || fastRunning;
    $('stop').disabled = !fastRunning;
  }

  function stepLine(text, cls) {
    const li = document.createElement('li');
    li.textContent = text;
    if (cls) li.className = cls;
    $('steps').appendChild(li);
    scrollListTo($('steps'), li);
  }

  function showOutcome(reward, raw, reason) {
    const el = $('episode-outcome');
    if (raw === null || raw === undefined) { el.textContent = ''; el.className = 'outcome'; return; }
    el.textContent = `Reward ${reward.toFixed(2)} (raw ${raw})${reason ? ` · ${reason}` : ''}`;
    el.className = `outcome ${ctx.Lab.isSuccess(raw) ? 'good' : 'bad'}`;
  }

  // Reading a person's navigator file (checked by loading it) with the busy line up.
  async function loadingNavigator(work, text) {
    const end = ctx.busy(text);
    try {
      await ctx.painted();
      return await work();
    } finally {
      end();
    }
  }

  // A step in flight finishes before a new episode starts (the page serves one call at a time).
  async function idle() {
    while (busy) await sleep(20);
  }

  // Runs `work` holding the page, with the buttons showing it; an error is shown and ends the
  // episode. Only the newest episode request counts: one the play loop made just before a person
  // changed the task and pressed New episode is dropped (newEpisode), and an error of work begun
  // before a newer request is not shown, so a message belongs to the task the picker shows.
  let requested = 0;
  async function holding(work) {
    const asked = requested;
    busy = true;
    setButtons();
    try {
      await work();
    } catch (e) {
      if (asked === requested) ctx.message(errorText(e));
      done = true;
    } finally {
      busy = false;
      setButtons();
    }
  }

  async function newEpisode(seed = ctx.seed()) {
    const mine = ++requested;
    // The task as picked when the request is made: the picker may read otherwise by the time the
    // page is free (a folder's boxes half filled), and what it reads then is a later request's.
    const picked = ctx.task(), spec = ctx.taskSpec();
    await idle();
    if (mine !== requested) return;
    await holding(async () => {
      ctx.message('');
      $('steps').innerHTML = '';
      showOutcome(null);
      clearOverlay($('overlay'));
      applyMode();
      ctx.fitFrame();
      let policy = $('policy').value;
      // Shown again below while a multitask DOM-Q-Net agent plays (the navigator has no tasks).
      $('watch-switch-row').hidden = true;
      if (policy === 'navigator') {
        done = true;
        if (!(await ctx.navigator.ensure())) return;
        $('agent-note').textContent = ctx.navigator.describe();
        const task = siteTask(), siteSeed = ctx.Lab.navigatorWatchSeed(seed);
        obs = await lab.navigatorReset(task, siteSeed);
        holdCover(true);
        episode = { task, seed, siteSeed, actions: [], raw: null, policy };
        done = false;
        $('utterance').textContent = profileText(task, obs);
        $('steps-title').textContent = `Steps · seed ${seed} (site seed ${siteSeed})`;
        showTally(lab.navigatorTally());
        return;
      }
      if (policy === 'dqn' && !(await agents.ensure(picked, spec))) policy = 'oracle';
      $('watch-switch-row').hidden = !(policy === 'dqn' && agents.multitask());
      if (policy !== 'dqn') $('agent-note').textContent = policy === 'oracle' ? 'A scripted solution that reads the page.' : 'Uniform over elements; types goal words.';
      lab.setConfig({ max_steps: maxSteps(), hold_clock: true }, [0]);
      obs = await lab.watchReset(picked, seed, policy);
      holdCover(true);
      // The page's seed: an agent acts on a seed it never trained on (the lab's rule, in Rust).
      // `from` is the seed box's value, which the next episode counts on from.
      const from = seed;
      seed = lab.watchSeed();
      episode = { task: spec, seed, from, actions: [], raw: null, policy };
      done = false;
      $('utterance').textContent = obs.instruction.utterance;
      $('steps-title').textContent = `Steps · seed ${seed}`;
    });
  }

  async function step() {
    if (done || busy) return;
    if (episode.policy === 'navigator') return navigatorStep();
    const before = obs;
    await holding(async () => {
      const r = await lab.watchStep();
      episode.actions.push(r.action);
      drawOverlay($('overlay'), before, r.q, r.action);
      stepLine(r.description);
      obs = r.step.observation;
      if (r.step.done) {
        done = true;
        episode.raw = r.step.raw_reward;
        showOutcome(r.step.reward, r.step.raw_reward, r.step.reason);
        drawEnded($('overlay'), endedText(r.step.raw_reward, r.step.reason), ctx.Lab.isSuccess(r.step.raw_reward));
      }
      if (r.q && r.q.warning) ctx.message(r.q.warning, 'info');
    });
  }

  async function navigatorStep() {
    await holding(async () => {
      const r = await lab.navigatorStep();
      drawNavigator($('overlay'), r);
      if (r.action) episode.actions.push(r.action);
      stepLine(r.chosen ? `${r.description} · p ${r.chosen.probability.toFixed(2)}` : r.description);
      if (r.step) obs = r.step.observation;
      showTally(r.tally);
      if (r.done) {
        done = true;
        const e = r.episode;
        episode.raw = e.raw_reward;
        const out = $('episode-outcome');
        out.textContent = `${r.success ? 'Solved' : 'Not solved'}: return ${e.ret.toFixed(2)} in ${e.steps} step${e.steps === 1 ? '' : 's'} (raw ${e.raw_reward})${e.reason ? ` · ${e.reason}` : ''}`;
        out.className = `outcome ${r.success ? 'good' : 'bad'}`;
        drawEnded($('overlay'), endedText(e.raw_reward, r.success ? 'solved' : (e.reason || 'not solved')), r.success);
      }
    });
  }

  // The tag on the held last page: the episode is over, and how it ended.
  function endedText(raw, reason) {
    return `Episode over · raw reward ${raw}${reason ? ` · ${reason}` : ''}`;
  }

  function showTally(t) {
    $('watch-tally').textContent = t && t.episodes
      ? `Watched on this site: ${t.episodes} episode${t.episodes === 1 ? '' : 's'}, ${t.successes} solved (${Math.round(100 * t.successes / t.episodes)}%).`
      : 'No episode finished on this site yet.';
  }

  // Under the page: the site and what the profile asks for (the instruction is the profile's JSON).
  function profileText(task, o) {
    const fields = (o.instruction && o.instruction.fields) || [];
    const list = fields.map((f) => `${f.key}: ${f.value}`).join(' · ');
    return `${task.name}: fill in ${list || 'nothing'}, then submit.`;
  }

  // Plays episode after episode (seed, seed+1, ...) at the chosen speed until paused.
  async function play() {
    const mine = ++token;
    playing = true;
    setButtons();
    while (playing && mine === token) {
      if (done) {
        await sleep(900);
        if (!playing || mine !== token) break;
        if (ctx.taskPending()) { pause(); break; }
        if (episode.task) ctx.setSeed((episode.from ?? episode.seed) + 1);
        switchTask();
        await newEpisode();
        if (done) break;
      }
      await sleep(1000 / speed());
      if (!playing || mine !== token) break;
      await step();
    }
    if (mine === token) playing = false;
    setButtons();
  }

  // A multitask agent playing, with "next task" ticked: the next of its tasks, in the
  // manifest's order (each page it was trained on, the lab's and the real one).
  function switchTask() {
    const entry = agents.multitask();
    if (!entry || episode.policy !== 'dqn' || !$('watch-switch').checked || $('watch-switch-row').hidden) return;
    const at = entry.tasks.indexOf(ctx.taskKey(ctx.taskSpec()));
    ctx.setTask(entry.tasks[(at + 1) % entry.tasks.length]);
  }

  function pause() {
    playing = false;
    token++;
    setButtons();
  }

  // Fast run: many episodes back to back, statistics only.
  // It holds the page (busy) for its whole length: an episode the task or policy pickers started
  // just before finishes first, and one they start meanwhile waits for the run to end.
  async function fastRun() {
    pause();
    ctx.message('');
    fastRunning = true;
    setButtons();
    await idle();
    busy = true;
    lab.setConfig({ max_steps: maxSteps(), hold_clock: true }, [0]);
    requestAnimationFrame(drawStats);
    try {
      if (navigating()) {
        if (await ctx.navigator.ensure()) {
          $('agent-note').textContent = ctx.navigator.describe();
          clearOverlay($('overlay'));
          await lab.runNavigator(siteTask(), ctx.Lab.navigatorWatchSeed(ctx.seed()), 0);
        }
      } else {
        await lab.runAgent(ctx.task(), $('policy').value, ctx.seed(), 0);
      }
    } catch (e) {
      ctx.message(errorText(e));
    }
    busy = false;
    fastRunning = false;
    done = true;
    setButtons();
    drawStats();
    holdCover(true);
    const last = lab.agentStats().stats.last;
    if (last) drawEnded($('overlay'), `Last episode of the run · raw reward ${last.raw_reward}${last.reason ? ` · ${last.reason}` : ''}`, ctx.Lab.isSuccess(last.raw_reward));
  }

  function drawStats() {
    const s = lab.agentStats();
    const st = s.stats;
    const fmt = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '–');
    $('st-status').textContent = s.running ? `running ${s.policy} on ${s.task}` : (s.error ? 'stopped (error)' : 'idle');
    $('st-episodes').textContent = String(st.episodes);
    $('st-eps').textContent = fmt(st.episodes_per_s);
    $('st-sps').textContent = fmt(st.steps_per_s);
    $('st-last').textContent = st.last ? fmt(st.last.raw_reward, 2) : '–';
    $('st-success').textContent = st.episodes ? `${fmt(100 * st.success_rate_100, 0)}%` : '–';
    $('st-reason').textContent = st.last ? (st.last.reason || (ctx.Lab.isSuccess(st.last.raw_reward) ? 'success' : '–')) : '–';
    if (fastRunning) requestAnimationFrame(drawStats);
  }

  // Replays a shared episode action for action, and says whether the reward matches.
  async function replayEpisode(state) {
    await idle();
    busy = true;
    try {
      await replayActions(state);
    } finally {
      busy = false;
      setButtons();
    }
  }

  async function replayActions(state) {
    const { actions, raw_reward: expected } = state.replay.episode;
    $('policy').value = 'oracle';
    $('steps').innerHTML = '';
    showOutcome(null);
    ctx.fitFrame(state.task && state.task.source === 'generated' ? SITE_SIZE : undefined);
    lab.setConfig({ max_steps: Math.max(actions.length, 1), hold_clock: true }, [0]);
    let current = await lab.reset(state.task, state.seed);
    holdCover(true);
    episode = { task: state.task, seed: state.seed, actions: [], raw: null, policy: 'replay' };
    $('utterance').textContent = current.instruction.utterance;
    $('steps-title').textContent = `Shared episode · seed ${state.seed}`;
    let last = null;
    for (const action of actions) {
      await sleep(Math.max(120, 600 / speed()));
      drawOverlay($('overlay'), current, null, action);
      last = await lab.step(action);
      episode.actions.push(action);
      stepLine(describe(current, action));
      current = last.observation;
      if (last.done) break;
    }
    done = true;
    obs = current;
    if (last) {
      episode.raw = last.raw_reward;
      showOutcome(last.reward, last.raw_reward, last.reason);
      if (last.done) drawEnded($('overlay'), endedText(last.raw_reward, last.reason), ctx.Lab.isSuccess(last.raw_reward));
      if (expected !== null && expected !== undefined) {
        ctx.message(last.raw_reward === expected
          ? `Replayed the shared episode: same ${actions.length} actions, same reward (${expected}).`
          : `The replay ended with raw reward ${last.raw_reward}, the sender saw ${expected}.`,
        last.raw_reward === expected ? 'info' : 'error');
      }
    }
    setButtons();
  }

  // Evaluates a shipped checkpoint on the shared seeds, visibly.
  async function evaluateCheckpoint(state) {
    const { agent, seeds } = state.replay.checkpoint;
    $('policy').value = 'dqn';
    await agents.loadShipped(agent);
    let solved = 0;
    for (const seed of seeds) {
      ctx.setSeed(seed);
      await newEpisode(seed);
      while (!done) {
        await sleep(1000 / Math.max(speed(), 8));
        await step();
      }
      solved += ctx.Lab.isSuccess(episode.raw) ? 1 : 0;
      ctx.message(`Agent "${agent}" on ${state.task.name}: ${solved} of ${seeds.indexOf(seed) + 1} evaluation episodes solved.`, 'info');
    }
  }

  // The lab's description (Rust's Action::describe), for every action form.
  function describe(o, action) {
    return ctx.Lab.describeAction(o, action);
  }

  // A task page loaded afresh (another task, a reload) comes without the style that holds its cover.
  $('task-frame').addEventListener('load', () => holdCover(ctx.view === 'watch'));
  $('new-episode').addEventListener('click', () => { pause(); newEpisode(); });
  $('step').addEventListener('click', () => { pause(); step(); });
  $('play').addEventListener('click', () => (playing ? pause() : play()));
  $('run').addEventListener('click', fastRun);
  $('stop').addEventListener('click', () => lab.stop());
  $('speed').addEventListener('input', () => { $('speed-label').textContent = `${speed()} steps/s`; });
  $('policy').addEventListener('change', () => { pause(); applyMode(); newEpisode(); });
  for (const id of ['watch-site', 'watch-level', 'watch-navigator']) {
    $(id).addEventListener('change', () => { pause(); newEpisode(); });
  }
  $('watch-nav-file').addEventListener('change', async (event) => {
    const file = event.target.files[0];
    event.target.value = '';
    if (!file) return;
    pause();
    await idle();
    if (await loadingNavigator(() => ctx.navigator.loadFile(file), `Reading ${file.name}…`)) {
      await newEpisode();
      ctx.message(`Loaded the navigator ${file.name}; it acts from the next episode on.`, 'info');
    }
  });
  ctx.onTaskChange(() => { if (ctx.view === 'watch') { pause(); newEpisode(); } });
  setButtons();

  return {
    enter() { applyMode(); setButtons(); holdCover(true); },
    leave() {
      pause();
      holdCover(false);
      delete $('workspace').dataset.watchAgent;
      ctx.frameSize = null;
    },
    // Opening the page: a competent agent acting within seconds, when one is shipped.
    async start(opts = {}) {
      if (opts.task) {
        $('policy').value = agents.agentFor(opts.task) ? 'dqn' : 'oracle';
      } else {
        const preferred = ctx.agents.find((a) => a.tasks.includes('click-button')) || ctx.agents[0];
        if (preferred) {
          ctx.setTask(preferred.tasks.includes('click-button') ? 'click-button' : preferred.tasks[0]);
          $('policy').value = 'dqn';
        } else {
          $('policy').value = 'oracle';
        }
      }
      await newEpisode();
      play();
    },
    shareState() {
      const agent = agents.loaded ? lab.agentInfo() : null;
      const config = agent && (episode.policy === 'dqn' || (!episode.actions.length && $('policy').value === 'dqn')) ? agent.config : null;
      // A navigator's episode is shared by its site seed: the link replays its actions on that site.
      const seed = episode.policy === 'navigator' ? episode.siteSeed : episode.seed ?? ctx.seed();
      const state = { v: 1, view: 'watch', task: episode.task || ctx.taskSpec(), seed, config, replay: null };
      if (episode.actions.length) {
        state.replay = { episode: { actions: episode.actions, raw_reward: episode.raw } };
      } else if ($('policy').value === 'dqn' && agents.loaded && ctx.agentNames().includes(agents.loaded)) {
        state.replay = { checkpoint: { agent: agents.loaded, seeds: Array.from({ length: 10 }, (_, i) => state.seed + i) } };
      }
      return state;
    },
    async openShare(state) {
      if (state.replay && state.replay.episode) return replayEpisode(state);
      if (state.replay && state.replay.checkpoint) return evaluateCheckpoint(state);
      return newEpisode(state.seed);
    },
    reloadAgent() { agents.forget(); },
  };
}

// The WGE view (workflow-guided exploration, Liu et al. 2018): gather demonstrations of one task
// (a person plays them with Play & record's recorder, the scripted oracle plays them, or files in
// the published format are opened), read each one's induced workflow lattice as constraints with
// the workflow policy's weights, and watch the policy explore on the live page with the elements
// its chosen constraint matches highlighted. Induction, the policy and its rules run in Rust
// (`Lab.wgeSession`, src/web/wge/); this module draws and forwards. The session is saved in
// IndexedDB after every change (DOMNet's checkpoint as bytes beside it), so a reload resumes it.
// A share link carries the run's recipe; opening one re-runs it here and evaluates the result.
// This file runs exploration and share links; its parts, by job: the demonstrations list
// (wge/demos.js), where demonstrations come from (wge/sources.js: recording, the oracle, files),
// the session in IndexedDB (wge/persist.js) and an explored episode's drawing (wge/episode.js).
import { errorText } from './app.js';
import { LineChart } from './charts.js';
import { clearOverlay, drawEnded, holdCover as holdFrameCover } from './overlay.js';
import { drawStep, listSteps, showOutcome } from './wge/episode.js';
import { demoList, el, plural } from './wge/demos.js';
import { sessionStore } from './wge/persist.js';
import { demoSources } from './wge/sources.js';

const $ = (id) => document.getElementById(id);
// The neural policy is judged greedily on this many held-out seeds every JUDGE_EVERY episodes.
const JUDGE_SEEDS = 5;
const JUDGE_EVERY = 10;

export function initWge(ctx) {
  const lab = ctx.lab;
  const session = lab.wgeSession();
  const chart = new LineChart($('wge-chart'), { title: 'Success rate', yMin: 0, yMax: 1, format: (v) => v.toFixed(2) });
  // What the view is doing, shared with its parts (wge/sources.js reads and sets these).
  const view = {
    recording: false, // a person is recording in the page
    exploring: false, // the page is in use by the view (exploring, or the oracle playing)
    importing: false, // files are being read and their lattices induced
    showing: null, // the page being shown, which recording and exploring wait for
    setButtons, render, showPage, pickedTask,
    holdCover: (on) => holdFrameCover($('task-frame'), on),
    persist: () => kept.persist(),
  };
  let exploreRunning = false;
  let stopAsked = false;
  const demos = demoList(ctx, session, {
    busy: () => view.exploring || view.recording || view.importing,
    onRemoved() {
      chart.clear();
      chart.draw();
      render();
      kept.persist();
    },
  });
  const kept = sessionStore(ctx, session, chart, { tally: showTally, neural: showNeural });
  const sources = demoSources(ctx, session, view);

  function render() {
    demos.draw();
    showTally(session.tally());
    setButtons();
  }

  function setButtons() {
    const busy = view.recording || view.exploring || view.importing;
    $('wge-record').disabled = view.exploring || view.importing;
    $('wge-record').textContent = view.recording ? 'Restart' : 'Record';
    $('wge-record-stop').disabled = !view.recording;
    $('wge-scripted').disabled = busy;
    $('wge-import').disabled = busy;
    $('wge-import-folder').disabled = busy;
    $('wge-clear').disabled = busy;
    $('wge-explore').disabled = busy || !session.task();
    $('wge-stop').disabled = !view.exploring || !exploreRunning;
    $('wge-reset-policy').disabled = busy;
    $('wge-neural').disabled = busy;
    $('wge-words').disabled = busy;
  }

  // A task the session can take: one of the lab's own or a real MiniWoB++ page, by its key
  // (`login-user`, `miniwob/login-user`: workflows name its pages).
  function pickedTask() {
    const t = ctx.task();
    if (typeof t !== 'string') throw new Error('Workflow-guided exploration learns the lab\'s own tasks and the real MiniWoB++ pages: pick one in the Task list');
    return t;
  }

  // The task's page at the seed in the box, so the view never opens on an empty frame.
  function showPage() {
    if (view.exploring || view.recording || view.showing || ctx.view !== 'wge') return view.showing || Promise.resolve();
    view.showing = loadPage().finally(() => { view.showing = null; });
    return view.showing;
  }
  async function loadPage() {
    try {
      const task = pickedTask();
      view.holdCover(true);
      clearOverlay($('overlay'));
      ctx.fitFrame();
      const obs = await lab.reset(task, ctx.seed());
      $('utterance').textContent = obs.instruction.utterance;
    } catch (e) {
      ctx.message(errorText(e));
    }
  }

  // ------------------------------------------------------------------ exploring

  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const stepDelay = () => 1000 / Math.max(1, parseInt($('wge-speed').value, 10) || 8);

  function showTally(t) {
    $('wge-tally').textContent = t.episodes
      ? `${plural(t.episodes, 'episode')} · ${t.successes} succeeded${t.recent_success === null ? '' : ` · last ${Math.min(t.window, t.episodes)}: ${(100 * t.recent_success).toFixed(0)}%`}`
      : '';
    $('wge-policy-note').textContent = session.task()
      ? `The workflow policy follows the demonstrations' workflows on ${session.task()}, seeds from ${t.next_seed} on, and learns which steps lead to success.`
      : 'Add demonstrations first: exploration follows their workflows.';
  }

  // Shows an explored episode on the page: its seed's page again, each step's matched elements
  // drawn before the step's action is sent (the same actions on the same seeded page).
  async function showEpisode(ep) {
    clearOverlay($('overlay'));
    listSteps(ep);
    const obs = await lab.reset(ep.task, ep.seed);
    $('utterance').textContent = obs.instruction.utterance;
    for (let i = 0; i < ep.steps.length; i++) {
      if (stopAsked) return;
      const s = ep.steps[i];
      listSteps(ep, i);
      drawStep(s);
      await sleep(stepDelay());
      try { await lab.step(s.action); } catch { break; }
    }
    await sleep(Math.min(400, stepDelay()));
  }

  const WORDS = { learned: '', glove: ', words through GloVe 6B 50-d (fixed)', glove_cosine: ", words through GloVe 6B 50-d (fixed) and aligned by their cosine" };

  function showNeural(n) {
    $('wge-neural-note').textContent = n.on
      ? `DOMNet${WORDS[session.words()] || ''}: ${plural(n.replay, 'successful episode')} in its replay (replayed once a goal shape has ${n.min_group}), ${plural(n.updates, 'update')}${n.success === null || n.success === undefined ? '' : ` · greedy success ${(100 * n.success).toFixed(0)}% on ${n.seeds} held-out seeds`}. Saved with the session (its replay is not).`
      : '';
  }

  // Both policies' greedy results on a link's seeds, seed by seed; against the sender's when
  // this is a re-run of a shared link.
  function showEvaluation(ev, sender = null, same = null) {
    const n = ev.seeds.length;
    const of = (k) => `${k}/${n}`;
    const ours = `workflow policy ${of(ev.workflow)}${ev.neural === null ? '' : ` · DOMNet ${of(ev.neural)}`}`;
    let note = `Greedy on ${plural(n, 'held-out seed')}: ${ours}.`;
    if (sender) {
      const theirs = `workflow policy ${of(sender.workflow)}${sender.neural === null ? '' : ` · DOMNet ${of(sender.neural)}`}`;
      note += same ? ' The same as the sender\'s link records: the run reproduced.' : ` The sender's link records ${theirs}: this re-run differs.`;
    }
    $('wge-eval-note').textContent = note;
    $('wge-eval-note').className = `note${same === false ? ' bad' : ''}`;
    const mark = (o) => `${o.success ? '✓' : '✗'} (raw ${o.raw_reward})`;
    $('wge-eval-list').replaceChildren(...ev.seeds.map((r) => el('li', {
      textContent: `seed ${r.seed}: workflow ${mark(r.workflow)}${r.neural ? ` · DOMNet ${mark(r.neural)}` : ''}`,
    })));
    $('wge-eval').hidden = false;
  }

  // Re-runs a shared run from its recipe (demonstrations replayed on their seeded pages, the
  // same exploration seeds, DOMNet switched, judged and reloaded where the sender's was), then
  // evaluates both policies on the link's seeds and compares with the sender's successes.
  async function reproduce(state) {
    kept.shared = true;
    await entered;
    await kept.saving;
    ctx.message('');
    view.exploring = true;
    exploreRunning = true;
    stopAsked = false;
    setButtons();
    view.holdCover(true);
    ctx.fitFrame();
    chart.clear();
    chart.draw();
    $('wge-eval').hidden = true;
    const end = ctx.busy('Opening the shared WGE run: replaying its demonstrations on their pages…');
    $('wge-rec-status').textContent = 'Opened from a share link: this re-run is not saved; your own saved WGE session is kept and comes back when the view is opened without the link.';
    try {
      const plan = await session.openRun(state);
      $('wge-neural').checked = false;
      $('wge-words').value = session.words();
      render();
      for (;;) {
        if (stopAsked) {
          ctx.message('The shared run was stopped before its end: nothing was compared.', 'info');
          return;
        }
        const r = await session.reproduceStep();
        if (r.kind === 'done') break;
        if (r.kind === 'judge') {
          chart.add(`DOMNet (greedy, ${r.neural.seeds} held-out seeds)`, r.episodes, r.neural.success);
          showNeural(r.neural);
        } else {
          const ep = r.episode;
          end.say(`Re-running the shared WGE run: episode ${ep.episodes} of ${plan.episodes}…`);
          if (ep.recent_success !== null) chart.add(`workflow policy (last ${session.tally().window})`, ep.episodes, ep.recent_success);
          showTally(session.tally());
          showOutcome(ep);
          listSteps(ep);
          if (ep.episodes % 10 === 0) render();
          await sleep(0); // let the page paint
        }
        chart.draw();
      }
      $('wge-neural').checked = session.neuralStatus().on;
      $('wge-words').value = session.words();
      if (session.neuralStatus().on) showNeural(session.neuralStatus());
      render();
      end.say('Evaluating the re-run policies on the link\'s seeds…');
      const r = await session.evaluateRun();
      showEvaluation(r.evaluation, r.sender, r.same);
      if (!r.same) ctx.message($('wge-eval-note').textContent);
    } catch (e) {
      ctx.message(`The shared WGE run could not be re-run: ${errorText(e)}`);
    } finally {
      end();
      view.exploring = false;
      exploreRunning = false;
      render();
    }
    await showPage(); // evaluation left its last seed's page: show the chosen seed's, with its instruction
  }

  async function judgeNeural(episodes) {
    const end = ctx.busy(`Judging the neural policy on ${JUDGE_SEEDS} held-out seeds…`);
    try {
      const n = await session.judgeNeural(JUDGE_SEEDS);
      chart.add(`DOMNet (greedy, ${JUDGE_SEEDS} held-out seeds)`, episodes, n.success);
      chart.draw();
      showNeural(n);
    } finally {
      end();
    }
  }

  async function explore() {
    if (view.exploring) return;
    ctx.message('');
    await kept.saving; // DOMNet is out of the session while it is being saved
    const n = Math.max(1, Math.min(10000, parseInt($('wge-episodes').value, 10) || 20));
    await view.showing;
    const t0 = session.tally();
    if (t0.episodes === 0) session.setNextSeed(ctx.seed());
    view.exploring = true;
    exploreRunning = true;
    stopAsked = false;
    setButtons();
    view.holdCover(true);
    ctx.fitFrame();
    let last = null;
    let shown = false; // whether the page shows the end of `last`
    try {
      for (let k = 0; k < n && !stopAsked; k++) {
        shown = false;
        $('wge-rec-status').textContent = '';
        const ep = await session.explore();
        last = ep;
        if ($('wge-neural').checked) {
          showNeural(session.neuralStatus());
          if (k % JUDGE_EVERY === JUDGE_EVERY - 1 || k === n - 1) await judgeNeural(ep.episodes);
        }
        if (ep.recent_success !== null) chart.add(`workflow policy (last ${session.tally().window})`, ep.episodes, ep.recent_success);
        chart.draw();
        showTally(session.tally());
        showOutcome(ep);
        if ($('wge-show').checked) {
          await showEpisode(ep);
          shown = !stopAsked;
        } else {
          listSteps(ep);
        }
        if ($('wge-show').checked || k % 10 === 9 || k === n - 1) render();
        if (k % 10 === 9) await kept.persist();
        if (!$('wge-show').checked) await sleep(0); // let the page paint
      }
      // A fast run (or the neural policy's judging) left another page on screen: the last
      // episode is shown, so what the overlay draws is on the page it happened on.
      if (last && !shown && !stopAsked) {
        await showEpisode(last);
        shown = !stopAsked;
      }
    } catch (e) {
      ctx.message(`Exploration stopped: ${errorText(e)}`);
    } finally {
      view.exploring = false;
      exploreRunning = false;
      render();
      await kept.persist();
    }
    if (last && shown) {
      listSteps(last, last.steps.length - 1);
      if (last.steps.length) drawStep(last.steps[last.steps.length - 1]); else clearOverlay($('overlay'));
      drawEnded($('overlay'), `Episode over · ${last.success ? 'success' : 'no success'} · raw reward ${last.raw_reward}`, last.success);
    }
  }

  // ------------------------------------------------------------------ wiring

  $('wge-record').addEventListener('click', () => sources.record());
  $('wge-record-stop').addEventListener('click', sources.stopRecording);
  $('wge-scripted').addEventListener('click', sources.addScripted);
  for (const id of ['wge-import', 'wge-import-folder']) {
    $(id).addEventListener('change', (event) => {
      const files = [...event.target.files];
      event.target.value = '';
      if (files.length) sources.importFiles(files);
    });
  }
  // After the demonstrations or the policies start afresh: the view forgets what it showed.
  function resetView() {
    demos.reset();
    chart.clear();
    chart.draw();
    $('wge-steps').replaceChildren();
    $('wge-outcome').textContent = '';
    $('wge-eval').hidden = true;
    showTally(session.tally());
    render();
    kept.persist();
  }
  $('wge-clear').addEventListener('click', () => {
    try { session.clear(); } catch (e) { ctx.message(errorText(e)); }
    resetView();
  });
  $('wge-explore').addEventListener('click', explore);
  $('wge-stop').addEventListener('click', () => { stopAsked = true; });
  $('wge-neural').addEventListener('change', async () => {
    const on = $('wge-neural').checked;
    const end = ctx.busy(on ? 'Building the neural policy (DOMNet)…' : 'Stopping the neural policy…');
    await ctx.painted();
    try {
      showNeural(session.setNeural(on));
    } catch (e) {
      $('wge-neural').checked = false;
      ctx.message(`The neural policy could not start: ${errorText(e)}`);
    } finally {
      end();
    }
  });
  $('wge-words').addEventListener('change', async () => {
    const words = $('wge-words').value;
    const end = ctx.busy(words === 'learned' ? 'DOMNet learns its word embeddings…' : 'Loading the GloVe word vectors for DOMNet…');
    await ctx.painted();
    try {
      showNeural(await session.setWords(words));
      kept.persist();
    } catch (e) {
      $('wge-words').value = session.words();
      ctx.message(`DOMNet's words were not changed: ${errorText(e)}`);
    } finally {
      end();
    }
  });
  $('wge-reset-policy').addEventListener('click', () => {
    try { session.resetPolicy(); } catch (e) { ctx.message(errorText(e)); }
    resetView();
  });
  ctx.onTaskChange(() => { if (ctx.view === 'wge') showPage(); });
  $('wge-speed').addEventListener('input', () => { $('wge-speed-label').textContent = `${$('wge-speed').value} steps/s`; });

  let entered = null;
  async function enter() {
    await kept.restore();
    render();
    showTally(session.tally());
    chart.draw();
    await showPage();
  }
  const api = {
    enter() { entered = enter(); return entered; },
    leave() {
      sources.stopRecording();
      stopAsked = true;
      view.holdCover(false);
    },
    // The run's recipe (a URL cannot hold the trained policies, but their training can be
    // re-run): Rust checks the demonstrations replay and evaluates both policies on the link's
    // seeds first, so the link carries the sender's result. Throws why a run cannot be shared.
    async shareState() {
      if (view.exploring || view.recording || view.importing) throw new Error('the WGE view is busy (exploring, recording or opening files): stop it first');
      await kept.saving;
      view.exploring = true;
      setButtons();
      const end = ctx.busy('Making the link: replaying the demonstrations and evaluating both policies on its seeds…');
      try {
        const r = await session.shareRun();
        showEvaluation(r.evaluation);
        return r.state;
      } finally {
        end();
        view.exploring = false;
        setButtons();
        await showPage(); // evaluation left its last seed's page: show the chosen seed's, with its instruction
      }
    },
    openShare(state) { return reproduce(state); },
    // For tests: a fingerprint of everything trained (two runs of one recipe give the same).
    fingerprint() { return session.fingerprint(); },
    // The app opens on this view: entering already started it.
    start() { return entered || this.enter(); },
    // For tests: the session's demonstrations as the view shows them, and its tally.
    demonstrations() { return session.demonstrations(); },
    tally() { return session.tally(); },
    neural() { return session.neuralStatus(); },
    curve() { return chart.toJSON(); },
  };
  window.wgeView = api; // for tests and the curious, as window.lab
  return api;
}

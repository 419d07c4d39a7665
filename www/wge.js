// The WGE view (workflow-guided exploration, Liu et al. 2018): gather demonstrations of one task
// (a person plays them with Play & record's recorder, the scripted oracle plays them, or files in
// the published format are opened), read each one's induced workflow lattice as constraints with
// the workflow policy's weights, and watch the policy explore on the live page with the elements
// its chosen constraint matches highlighted. Induction, the policy and its rules run in Rust
// (`Lab.wgeSession`, src/web/wge/); this module draws and forwards. The session is saved in
// IndexedDB after every change (DOMNet's checkpoint as bytes beside it), so a reload resumes it.
// A share link carries the run's recipe; opening one re-runs it here and evaluates the result.
import { errorText } from './app.js';
import { LineChart } from './charts.js';
import { clearOverlay, drawEnded, holdCover as holdFrameCover } from './overlay.js';
import * as store from './store.js';
import { WGE_LOCK, claim } from './locks.js';
import { drawStep, listSteps, showOutcome } from './wge/episode.js';

const $ = (id) => document.getElementById(id);
const STORE_KEY = 'wge-session';
// Constraints listed per lattice edge before "show all" (an edge often has dozens).
const SHOWN_PROGRAMS = 6;
// The neural policy is judged greedily on this many held-out seeds every JUDGE_EVERY episodes.
const JUDGE_SEEDS = 5;
const JUDGE_EVERY = 10;
const SOURCE_LABEL = { person: 'recorded by a person', scripted: 'scripted (oracle)', imported: 'imported file' };

const el = (tag, props = {}, ...children) => {
  const e = Object.assign(document.createElement(tag), props);
  e.append(...children.filter((c) => c !== null && c !== undefined));
  return e;
};
const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

export function initWge(ctx) {
  const lab = ctx.lab;
  const session = lab.wgeSession();
  const holdCover = (on) => holdFrameCover($('task-frame'), on);
  const chart = new LineChart($('wge-chart'), { title: 'Success rate', yMin: 0, yMax: 1, format: (v) => v.toFixed(2) });
  let recording = false;
  let recordPoll = null;
  let recordSeed = 0;
  let exploring = false; // the page is in use by the view (exploring, or the oracle playing)
  let importing = false; // files are being read and their lattices induced
  let exploreRunning = false;
  let stopAsked = false;
  let restored = false;
  // Opened from a share link: the re-run is not saved, so the person's own session is kept.
  let shared = false;
  // Which demonstrations' "show all" lists are open, kept across re-renders.
  const expanded = new Set();
  const open = new Set([0]);

  // ------------------------------------------------------------------ saving

  // This tab keeps the saved session only while it holds WGE_LOCK: a second tab's view works on
  // a session of its own that is not saved, so the two never overwrite each other.
  let writer = null; // null until restore() asks; then true or false
  let saving = Promise.resolve();
  function persist() {
    if (shared || !writer) return saving;
    saving = saving.then(async () => {
      try {
        // DOMNet's checkpoint and Adam's moments (several MB) go in as bytes, not JSON numbers.
        // One record, one transaction: written whole, or (storage full) not at all, and the
        // last good save stays as it was rather than being replaced by a lesser one.
        const record = { session: session.save(), chart: chart.toJSON(), neural: await session.saveNeural() };
        await store.save(STORE_KEY, record);
      } catch (e) {
        ctx.message(`The WGE session could not be saved (${errorText(e)}); it goes on in this tab, and the last save stays in this browser for a reload.`);
      }
    });
    return saving;
  }

  async function restore() {
    if (restored) return;
    restored = true;
    if (ctx.safeStart) {
      writer = false;
      ctx.message('The lab stopped on an internal error while it last started, so the saved WGE session was not loaded (it is kept, and this tab does not save over it): reload to load it.', 'info');
      return;
    }
    writer = (await claim(WGE_LOCK)) !== null;
    if (!writer) {
      ctx.message('The WGE session is open in another tab of the lab: this tab starts a session of its own, which is not saved (close the other tab and reload to keep it here).', 'info');
      return;
    }
    let saved = null;
    try { saved = await store.load(STORE_KEY); } catch (e) {
      ctx.message(`The saved WGE session could not be read from this browser's storage (${errorText(e)}); it was not loaded, and is kept.`);
      return;
    }
    if (!saved || shared) return;
    try {
      const weightsBack = await session.restore(typeof saved.session === 'string' ? saved.session : '');
      const bytes = (v) => (v instanceof Uint8Array ? v : undefined);
      const nb = saved.neural && typeof saved.neural === 'object' ? saved.neural : {};
      const neural = session.restoreNeural(bytes(nb.checkpoint), bytes(nb.optimizer));
      $('wge-neural').checked = neural.on;
      chart.load(Array.isArray(saved.chart) ? saved.chart : []);
      showTally(session.tally());
      if (session.task()) ctx.setTask(session.task());
      const n = session.demonstrations().length;
      const t = session.tally();
      const ns = session.neuralStatus();
      const neuralNote = neural.resumed
        ? ` DOMNet resumed (${plural(ns.episodes, 'episode')} seen, ${plural(ns.updates, 'update')}; its replay starts empty)${neural.on ? ' and goes on learning' : ''}.`
        : neural.why ? ` DOMNet did not resume: ${neural.why}; it starts afresh when turned on.` : '';
      if (neural.resumed) showNeural({ ...ns, on: true, success: null });
      if (n) $('wge-rec-status').textContent = `Resumed the saved session: ${plural(n, 'demonstration')} of ${session.task()}${t.episodes ? `, ${plural(t.episodes, 'episode')} explored; ${weightsBack ? "the workflow policy's weights resumed with it" : "the workflow policy's weights start again from their initial values (the saved ones do not fit these demonstrations' lattices)"}` : ''}.${neuralNote}`;
      if (!n && neural.why) ctx.message(neuralNote.trim(), 'info');
    } catch (e) {
      // The record stays in the store: nothing is lost by refusing it.
      ctx.message(`${errorText(e)}. The saved WGE session was not loaded and is kept; adding a demonstration replaces it.`);
    }
  }

  // ------------------------------------------------------------------ the demonstrations list

  function optionItem(o) {
    const li = el('li', { className: `wge-program${o.skip ? ' wge-skip' : ''}`, title: o.skip ? '' : `${o.notation} · ψ = ${o.weight.toFixed(3)} · ${plural(o.paths, 'execution path')} on the demonstration's page` });
    const bar = el('span', { className: 'wge-weight' });
    bar.style.setProperty('--w', Math.max(0, Math.min(1, o.probability)).toFixed(3));
    li.append(bar, el('span', { className: 'wge-weight-num', textContent: o.probability.toFixed(2) }), el('span', { className: 'wge-program-text', textContent: o.text }));
    if (o.notation) li.append(el('code', { textContent: o.notation }));
    return li;
  }

  function demoCard(d) {
    const card = el('details', { className: 'wge-demo' });
    card.open = open.has(d.index);
    card.addEventListener('toggle', () => { if (card.open) open.add(d.index); else open.delete(d.index); });
    const summary = el('summary', {},
      el('span', { className: `wge-source wge-source-${d.source}`, textContent: SOURCE_LABEL[d.source] || d.source }),
      el('span', { className: 'wge-demo-name', textContent: `#${d.index + 1} ${d.label}` }),
      el('span', { className: 'quiet', textContent: `${plural(d.positions.length, 'action')} · raw reward ${d.raw_reward} · ${plural(d.program_count, 'workflow step')} induced` }));
    const remove = el('button', { type: 'button', className: 'secondary small', textContent: 'Remove', title: 'Remove this demonstration (the workflow policy, and DOMNet when it learns, start again over the others)' });
    remove.addEventListener('click', (e) => {
      e.preventDefault();
      if (exploring || recording || importing) return;
      try { session.remove(d.index); } catch (err) { ctx.message(errorText(err)); }
      open.clear();
      expanded.clear();
      chart.clear();
      chart.draw();
      render();
      persist();
    });
    summary.append(remove);
    card.append(summary);
    const steps = el('ol', { className: 'wge-lattice' });
    d.positions.forEach((p, i) => {
      const key = `${d.index}:${i}`;
      const all = expanded.has(key);
      const shown = all ? p.options : p.options.slice(0, SHOWN_PROGRAMS);
      const li = el('li', {},
        el('div', { className: 'wge-action', textContent: `Did: ${p.action}` }),
        el('div', { className: 'quiet', textContent: `${plural(p.options.length, 'option')} kept of ${p.induced} induced · baseline V ${p.value.toFixed(2)}` }),
        el('ul', { className: 'wge-programs' }, ...shown.map(optionItem)));
      if (p.options.length > SHOWN_PROGRAMS) {
        const more = el('button', { type: 'button', className: 'link', textContent: all ? 'show fewer' : `show all ${p.options.length}` });
        more.addEventListener('click', () => {
          if (all) expanded.delete(key); else expanded.add(key);
          render();
        });
        li.append(more);
      }
      steps.append(li);
    });
    card.append(steps);
    return card;
  }

  function render() {
    const demos = session.demonstrations();
    $('wge-demos').replaceChildren(...demos.map(demoCard));
    $('wge-demos-empty').hidden = demos.length > 0;
    const task = session.task();
    $('wge-demo-count').textContent = demos.length ? `${demos.length} of ${task}` : '';
    showTally(session.tally());
    setButtons();
  }

  function setButtons() {
    const busy = recording || exploring || importing;
    $('wge-record').disabled = exploring || importing;
    $('wge-record').textContent = recording ? 'Restart' : 'Record';
    $('wge-record-stop').disabled = !recording;
    $('wge-scripted').disabled = busy;
    $('wge-import').disabled = busy;
    $('wge-import-folder').disabled = busy;
    $('wge-clear').disabled = busy;
    $('wge-explore').disabled = busy || !session.task();
    $('wge-stop').disabled = !exploring || !exploreRunning;
    $('wge-reset-policy').disabled = busy;
    $('wge-neural').disabled = busy;
  }

  // A task the session can take: one of the lab's own or a real MiniWoB++ page, by its key
  // (`login-user`, `miniwob/login-user`: workflows name its pages).
  function pickedTask() {
    const t = ctx.task();
    if (typeof t !== 'string') throw new Error('Workflow-guided exploration learns the lab\'s own tasks and the real MiniWoB++ pages: pick one in the Task list');
    return t;
  }

  // ------------------------------------------------------------------ recording a person

  async function record(seed = ctx.seed()) {
    stopRecordPoll();
    ctx.message('');
    await showing;
    try {
      const task = pickedTask();
      holdCover(false);
      clearOverlay($('overlay'));
      ctx.fitFrame();
      const obs = await lab.startRecording(task, seed);
      recording = true;
      recordSeed = seed;
      $('utterance').textContent = obs.instruction.utterance;
      $('wge-rec-status').textContent = `Recording seed ${seed}: play the task in the page. A successful episode is kept and the next one starts.`;
      recordPoll = setInterval(checkRecording, 150);
    } catch (e) {
      recording = false;
      ctx.message(errorText(e));
    }
    setButtons();
  }

  function stopRecordPoll() {
    if (recordPoll) clearInterval(recordPoll);
    recordPoll = null;
  }

  async function checkRecording() {
    const s = lab.recordingState();
    if (!s || !s.done) {
      if (s) $('wge-rec-status').textContent = `Recording seed ${recordSeed} · ${plural(s.steps.length, 'action')} so far.`;
      return;
    }
    stopRecordPoll();
    let json = null;
    try { json = lab.stopRecording(); } catch (e) { ctx.message(errorText(e)); }
    recording = false;
    if (json && ctx.Lab.isSuccess(s.raw_reward)) {
      try {
        session.addRecorded(json);
        $('wge-rec-status').textContent = `Kept seed ${recordSeed} (${plural(s.steps.length, 'action')}, reward ${s.reward.toFixed(2)}).`;
        render();
        await persist();
      } catch (e) {
        ctx.message(errorText(e));
        setButtons();
        return;
      }
    } else {
      $('wge-rec-status').textContent = `Seed ${recordSeed} was not kept: the episode did not succeed${s.reason ? ` (${s.reason})` : ''}.`;
    }
    ctx.setSeed((recordSeed + 1) >>> 0);
    // The next episode, after a moment to see how this one ended.
    setTimeout(() => { if (ctx.view === 'wge' && !exploring && !recording) record(); }, 800);
    setButtons();
  }

  function stopRecording() {
    stopRecordPoll();
    if (!recording) return;
    try { lab.stopRecording(); } catch { /* nothing was being recorded */ }
    recording = false;
    $('wge-rec-status').textContent = 'Recording stopped; the unfinished episode was not kept.';
    setButtons();
  }

  // ------------------------------------------------------------------ scripted and imported

  async function addScripted() {
    ctx.message('');
    let task;
    try { task = pickedTask(); } catch (e) { ctx.message(errorText(e)); return; }
    const count = Math.max(1, Math.min(50, parseInt($('wge-scripted-count').value, 10) || 10));
    await showing;
    const first = ctx.seed();
    exploring = true; // the page is in use: no other action starts meanwhile
    setButtons();
    holdCover(true);
    const end = ctx.busy(`The scripted oracle plays ${task}…`);
    let added = 0;
    const failed = [];
    try {
      for (let k = 0; k < count; k++) {
        end.say(`The scripted oracle plays ${task}: seed ${first + k} (${k + 1} of ${count})…`);
        try {
          await session.addScripted(task, (first + k) >>> 0);
          added++;
        } catch (e) {
          failed.push(errorText(e));
          // A wrong task for the session is not worth trying nine more times.
          if (/this session learns|at most/.test(errorText(e))) break;
        }
      }
    } finally {
      end();
      exploring = false;
    }
    ctx.setSeed((first + count) >>> 0);
    render();
    await persist();
    $('wge-rec-status').textContent = `Added ${plural(added, 'scripted demonstration')} (seeds ${first}–${first + count - 1}).`;
    if (failed.length) ctx.message(failed[0] + (failed.length > 1 ? ` (and ${failed.length - 1} more)` : ''));
  }

  // Opens files one after another (each one's lattice is induced in slices, so the page stays
  // live), then lists per file what was imported or refused and why.
  async function importFiles(files) {
    ctx.message('');
    const wanted = files.filter((f) => /\.json(\.gz)?$/i.test(f.name));
    const skipped = files.length - wanted.length;
    wanted.sort((a, b) => pathOf(a).localeCompare(pathOf(b)));
    if (!wanted.length) {
      ctx.message(`No .json or .json.gz files among the ${plural(files.length, 'file')} chosen.`);
      return;
    }
    importing = true;
    setButtons();
    const end = ctx.busy(`Reading ${plural(wanted.length, 'demonstration file')}…`);
    await ctx.painted();
    const rows = [];
    let added = 0;
    let task = null;
    try {
      for (const [k, f] of wanted.entries()) {
        end.say(`Reading ${f.name} (${k + 1} of ${wanted.length})…`);
        try {
          session.checkFileSize(f.name, f.size);
          const bytes = new Uint8Array(await f.arrayBuffer());
          const r = await session.importFile(pathOf(f), bytes);
          rows.push({ ok: true, name: pathOf(f), text: `imported: ${plural(r.actions, 'action')} of ${r.task}`, notes: r.notes });
          added++;
          task = session.task();
        } catch (e) {
          // The message starts with the file's name, which the row shows already.
          const msg = errorText(e);
          const why = msg.startsWith(`${f.name}: `) ? msg.slice(f.name.length + 2) : msg;
          rows.push({ ok: false, name: pathOf(f), text: `refused: ${why}`, error: msg, notes: [] });
        }
      }
    } finally {
      end();
      importing = false;
    }
    showImportReport(rows, skipped);
    render();
    // The picker follows the demonstrations' task, and the page with it.
    if (task && task !== ctx.task()) {
      ctx.setTask(task);
      await showPage();
    }
    if (added) await persist();
    if (added) $('wge-rec-status').textContent = `Opened ${plural(added, 'demonstration')} of ${task}.`;
    const errors = rows.filter((r) => !r.ok).map((r) => r.error);
    if (errors.length) ctx.message(errors.slice(0, 3).join(' · ') + (errors.length > 3 ? ` (and ${errors.length - 3} more: see the list under the buttons)` : ''));
  }

  // A file's path within the folder it came from (which names the task of files without one).
  function pathOf(f) {
    return f.webkitRelativePath || f.name;
  }

  function showImportReport(rows, skipped) {
    const box = $('wge-import-report');
    const refused = rows.filter((r) => !r.ok).length;
    box.querySelector('summary').textContent = `${plural(rows.length, 'file')}: ${rows.length - refused} imported, ${refused} refused${skipped ? ` (${plural(skipped, 'other file')} skipped)` : ''}`;
    box.querySelector('ul').replaceChildren(...rows.map((r) => el('li', { className: r.ok ? 'imported' : 'refused' },
      el('strong', { textContent: r.name }), ` — ${r.text}`,
      r.notes.length ? el('span', { className: 'quiet', textContent: ` (${r.notes.join('; ')})` }) : null)));
    box.hidden = false;
    box.open = refused > 0 || rows.some((r) => r.notes.length);
  }

  // The task's page at the seed in the box, so the view never opens on an empty frame.
  let showing = null; // the page being shown, which recording and exploring wait for
  function showPage() {
    if (exploring || recording || showing || ctx.view !== 'wge') return showing || Promise.resolve();
    showing = loadPage().finally(() => { showing = null; });
    return showing;
  }
  async function loadPage() {
    try {
      const task = pickedTask();
      holdCover(true);
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

  function showNeural(n) {
    $('wge-neural-note').textContent = n.on
      ? `DOMNet: ${plural(n.replay, 'successful episode')} in its replay (replayed once a goal shape has ${n.min_group}), ${plural(n.updates, 'update')}${n.success === null || n.success === undefined ? '' : ` · greedy success ${(100 * n.success).toFixed(0)}% on ${n.seeds} held-out seeds`}. Saved with the session (its replay is not).`
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
    shared = true;
    await entered;
    await saving;
    ctx.message('');
    exploring = true;
    exploreRunning = true;
    stopAsked = false;
    setButtons();
    holdCover(true);
    ctx.fitFrame();
    chart.clear();
    chart.draw();
    $('wge-eval').hidden = true;
    const end = ctx.busy('Opening the shared WGE run: replaying its demonstrations on their pages…');
    $('wge-rec-status').textContent = 'Opened from a share link: this re-run is not saved; your own saved WGE session is kept and comes back when the view is opened without the link.';
    try {
      const plan = await session.openRun(state);
      $('wge-neural').checked = false;
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
      exploring = false;
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
    if (exploring) return;
    ctx.message('');
    await saving; // DOMNet is out of the session while it is being saved
    const n = Math.max(1, Math.min(10000, parseInt($('wge-episodes').value, 10) || 20));
    await showing;
    const t0 = session.tally();
    if (t0.episodes === 0) session.setNextSeed(ctx.seed());
    exploring = true;
    exploreRunning = true;
    stopAsked = false;
    setButtons();
    holdCover(true);
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
        if (k % 10 === 9) await persist();
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
      exploring = false;
      exploreRunning = false;
      render();
      await persist();
    }
    if (last && shown) {
      listSteps(last, last.steps.length - 1);
      if (last.steps.length) drawStep(last.steps[last.steps.length - 1]); else clearOverlay($('overlay'));
      drawEnded($('overlay'), `Episode over · ${last.success ? 'success' : 'no success'} · raw reward ${last.raw_reward}`, last.success);
    }
  }

  // ------------------------------------------------------------------ wiring

  $('wge-record').addEventListener('click', () => record());
  $('wge-record-stop').addEventListener('click', stopRecording);
  $('wge-scripted').addEventListener('click', addScripted);
  for (const id of ['wge-import', 'wge-import-folder']) {
    $(id).addEventListener('change', (event) => {
      const files = [...event.target.files];
      event.target.value = '';
      if (files.length) importFiles(files);
    });
  }
  // After the demonstrations or the policies start afresh: the view forgets what it showed.
  function resetView() {
    open.clear();
    open.add(0);
    expanded.clear();
    chart.clear();
    chart.draw();
    $('wge-steps').replaceChildren();
    $('wge-outcome').textContent = '';
    $('wge-eval').hidden = true;
    showTally(session.tally());
    render();
    persist();
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
  $('wge-reset-policy').addEventListener('click', () => {
    try { session.resetPolicy(); } catch (e) { ctx.message(errorText(e)); }
    resetView();
  });
  ctx.onTaskChange(() => { if (ctx.view === 'wge') showPage(); });
  $('wge-speed').addEventListener('input', () => { $('wge-speed-label').textContent = `${$('wge-speed').value} steps/s`; });

  let entered = null;
  async function enter() {
    await restore();
    render();
    showTally(session.tally());
    chart.draw();
    await showPage();
  }
  const api = {
    enter() { entered = enter(); return entered; },
    leave() {
      stopRecording();
      stopAsked = true;
      holdCover(false);
    },
    // The run's recipe (a URL cannot hold the trained policies, but their training can be
    // re-run): Rust checks the demonstrations replay and evaluates both policies on the link's
    // seeds first, so the link carries the sender's result. Throws why a run cannot be shared.
    async shareState() {
      if (exploring || recording || importing) throw new Error('the WGE view is busy (exploring, recording or opening files): stop it first');
      await saving;
      exploring = true;
      setButtons();
      const end = ctx.busy('Making the link: replaying the demonstrations and evaluating both policies on its seeds…');
      try {
        const r = await session.shareRun();
        showEvaluation(r.evaluation);
        return r.state;
      } finally {
        end();
        exploring = false;
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

// Train: DOM-Q-Net (on MiniWoB tasks) or the gMiniWoB navigator (on generated sites) learning
// live in the tab. The learner runs in a worker (training.js); the task pages it acts on are the
// lab's pages #1.. (the watch page #0 stays free), shown here while training. This file owns the
// run: the agent choice, start, pause, stop and resume. Its parts, by job: the two agents' forms
// (train/dqn-form.js, train/nav-form.js), the run's progress on screen (train/progress.js), its
// snapshots in IndexedDB and their restoring (train/persist.js), checkpoint files
// (train/checkpoints.js) and its hold on the browser (train/hold.js). An adversarial generator
// (CoDE, Flexible b-PAIRED, ...) trains a population of navigators in the worker's population
// loop; curriculum.js draws its designs, histogram and curves.
import { TrainingSession } from './training.js';
import { errorText } from './app.js';
import { holdCover } from './overlay.js';
import { initCurriculum } from './curriculum.js';
import { dqnForm } from './train/dqn-form.js';
import { navForm } from './train/nav-form.js';
import { runHold } from './train/hold.js';
import { progressView, fmtInt } from './train/progress.js';
import { runStore } from './train/persist.js';
import { checkpointFiles } from './train/checkpoints.js';

const $ = (id) => document.getElementById(id);
const FRAME_OFFSET = 1;
const DQN = 'dom-q-net';
const NAVIGATOR = 'navigator';
// What a tab is told when another tab of the lab trains the run (it holds RUN_LOCK).
const ELSEWHERE = 'A training run is live in another tab of the lab: it trains there, and two tabs would overwrite each other\'s run. Stop it or close that tab to train here.';

// The adversaries' names by objective key (Lab.adversaryObjectives), for generatorLabel.
const adversaryLabels = {};

// What a navigator run trains on, as the learner labels it (GeneratorSpec::label).
function generatorLabel(spec) {
  if (!spec) return '?';
  if (spec.kind === 'adversary') return adversaryLabels[spec.objective] || spec.objective;
  return spec.kind === 'site' ? `site ${spec.name}` : spec.kind.toUpperCase();
}

export function initTrain(ctx) {
  const { lab, Lab } = ctx;
  // The run's state, shared with the parts in train/ (they read and set these fields).
  const state = {
    session: null,
    run: null, // {request, status: 'running'|'paused'|'done'|'stopped', env_steps, updates, backend, reason}
    held: null, // a saved run left for the Resume button (see train/hold.js): {saved, paused}
    mode: DQN, // the agent the controls set up: DQN or NAVIGATOR
    navModel: null, // {name, bytes}: the navigator's last checkpoint
    lastGrid: null, // the navigator run's last success grid message
  };

  // An adversarial run's curriculum view; its charts are saved, cleared and drawn with the rest.
  const curriculum = initCurriculum(ctx);
  const progress = progressView(ctx, state, curriculum);
  for (const o of Lab.adversaryObjectives().objectives) adversaryLabels[o.key] = o.label;

  // The two agents' forms (train/dqn-form.js, train/nav-form.js).
  const { taskOptions, taskBoxes, chosenTasks, chooseTasks, difficultyOf, usePreset, useConfig, checkHyper } = dqnForm(ctx, { onTasks: () => showChosen() });
  const { navDefaults, siteOptions, syncGenerator, generatorSpec, showGenerator, buildNav, checkNav } =
    navForm(ctx, curriculum, { onGenerator: () => { applyMode(); showChosen(); } });

  // The centre column before a run (index.html's #train-intro): what the run will train on.
  function showChosen() {
    const list = $('train-chosen');
    if (state.mode === NAVIGATOR) {
      const kind = $('train-generator').value;
      const what = $('train-generator').selectedOptions[0]?.textContent || kind;
      list.replaceChildren(Object.assign(document.createElement('li'), {
        textContent: kind === 'site' ? `${what}: ${$('train-site').value}, level ${$('train-level').value}` : what,
      }));
      return;
    }
    const names = chosenTasks();
    if (!names.length) {
      list.replaceChildren(Object.assign(document.createElement('li'), { className: 'none', textContent: 'No task chosen yet: tick one or more on the left.' }));
      return;
    }
    list.replaceChildren(...names.map((name) => {
      const li = document.createElement('li');
      const difficulty = difficultyOf(name);
      li.append(name, ' ');
      if (difficulty) li.append(Object.assign(document.createElement('span'), { className: `badge ${difficulty}`, textContent: difficulty }));
      return li;
    }));
  }

  // ---------------------------------------------------------------- agent choice
  // The controls of one agent show (style.css: .dqn-only, .nav-only) while the Train view is open;
  // the other views keep the task picker.
  function applyMode() {
    const ws = $('workspace');
    if (ctx.view === 'train') ws.dataset.trainAgent = state.mode;
    else delete ws.dataset.trainAgent;
    if (ctx.view === 'train' && state.mode === NAVIGATOR && curriculum.isAdversary($('train-generator').value)) ws.dataset.trainAdversarial = 'true';
    else delete ws.dataset.trainAdversarial;
  }
  function setMode(m) {
    const next = m === NAVIGATOR ? NAVIGATOR : DQN;
    // A finished run of the other agent leaves the screen (its record stays in IndexedDB).
    if (next !== state.mode && state.run && (state.run.request.agent || DQN) !== next && !state.session?.running) clearRun(next);
    state.mode = next;
    $('train-agent').value = state.mode;
    $('import-ckpt').accept = state.mode === NAVIGATOR ? '.wln,application/octet-stream' : '.wlq,application/octet-stream';
    $('train-step').title = state.mode === NAVIGATOR ? 'One iteration (its episodes and one update), then stay paused' : 'One environment step and its update, then stay paused';
    applyMode();
    setButtons();
    progress.draw();
    showChosen();
  }

  function clearRun(next) {
    state.run = null;
    state.lastGrid = null;
    progress.clear();
    ensureFrames([]);
    const model = next === NAVIGATOR ? state.navModel : ctx.userModel;
    $('model-note').textContent = model ? `Current ${next === NAVIGATOR ? 'navigator' : 'model'}: ${model.name}.` : '';
  }

  // ---------------------------------------------------------------- task pages of the run
  // pages: [{name, size: [w, h]}], one per task page the run acts on.
  function ensureFrames(pages) {
    const box = $('extra-frames');
    while (lab.frameCount() < FRAME_OFFSET + pages.length) {
      const frame = document.createElement('iframe');
      frame.title = `Training page ${lab.frameCount()}`;
      // Its last page stays in sight between episodes, not the START cover (overlay.js).
      frame.addEventListener('load', () => holdCover(frame, true));
      box.appendChild(frame);
      lab.addFrame(frame);
    }
    const frames = [...box.querySelectorAll('iframe')];
    frames.forEach((frame, i) => {
      const [w, h] = pages[i]?.size || [160, 210];
      frame.style.width = `${w + 172}px`;
      frame.style.height = `${Math.max(h, 210) + 6}px`;
      frame.dataset.task = pages[i]?.name || '';
      frame.hidden = i >= pages.length;
    });
  }
  function pagesFor(request) {
    if (request.agent === NAVIGATOR) return [{ name: 'generated site', size: Lab.designLimits().frame_size }];
    return request.tasks.map((t) => ({ name: ctx.taskKey(t), size: t.source === 'builtin' ? ctx.tasks.find((x) => x.name === t.name)?.size : undefined }));
  }

  // ---------------------------------------------------------------- progress on screen
  function setButtons() {
    const active = state.run && (state.run.status === 'running' || state.run.status === 'paused') && state.session?.running;
    $('train-start').disabled = Boolean(active);
    $('train-pause').disabled = !active;
    $('train-pause').textContent = state.run?.status === 'paused' ? 'Resume' : 'Pause';
    $('train-step').disabled = !(active && state.run.status === 'paused');
    $('train-stop').disabled = !active;
    $('export-ckpt').disabled = !(active || (state.mode === NAVIGATOR ? state.navModel : ctx.userModel));
    for (const input of $('hyper-fields').querySelectorAll('input')) input.disabled = Boolean(active);
    for (const b of taskBoxes()) b.disabled = Boolean(active);
    for (const input of $('nav-fields').querySelectorAll('input')) input.disabled = Boolean(active);
    for (const input of $('train-adversary').querySelectorAll('input')) input.disabled = Boolean(active);
    for (const id of ['train-agent', 'train-generator', 'train-site', 'train-level', 'train-nav-frames', 'train-judge-every', 'train-judge-seeds']) {
      $(id).disabled = Boolean(active);
    }
  }

  const chosenLabel = (tasks) => (tasks.length === 1 ? ctx.taskKey(tasks[0]) : `${tasks.length} tasks`);

  function setUserModel(model, announce = true) {
    ctx.userModel = model;
    ctx.views.watch?.reloadAgent?.();
    if (announce) $('model-note').textContent = `Current model: ${model.name}.`;
    setButtons();
  }

  // ---------------------------------------------------------------- running
  // resumedFrom: the env steps of the saved run this start resumes (its errors before the first
  // progress are the snapshot's, and say so).
  function begin(request, checkpoint, saved, { paused = false, optimizer = undefined, resumedFrom = null } = {}) {
    ensureFrames(pagesFor(request));
    state.session = new TrainingSession(lab, { frameOffset: FRAME_OFFSET });
    // Probing the backend and building the model take a while: the busy line says so until the
    // learner's first report.
    let starting = ctx.busy(resumedFrom === null ? 'Starting the learner: probing the backend, building the model…' : `Resuming the run from step ${fmtInt(resumedFrom)}…`);
    const started = () => { starting?.(); starting = null; };
    for (const kind of ['progress', 'done', 'error']) state.session.addEventListener(kind, started);
    state.run = { request, status: 'running', env_steps: state.run?.env_steps || 0, updates: state.run?.updates || 0, resumedFrom };
    state.held = null;
    $('train-resume').hidden = true;
    hold.live();
    state.session.addEventListener('backend', (e) => {
      state.run.backend = e.detail.name;
      state.run.reason = e.detail.reason;
      ctx.setBackend(e.detail.name, e.detail.reason);
      progress.showCounters();
    });
    state.session.addEventListener('status', (e) => {
      $('train-status').textContent = e.detail.text;
      starting?.say(`Starting the learner: ${e.detail.text}`);
      // What a resume could not take from the snapshot stays on screen.
      if (/^Resumed with fresh Adam moments/.test(e.detail.text)) ctx.message(e.detail.text, 'info');
    });
    state.session.addEventListener('progress', (e) => { state.run.resumedFrom = null; progress.onProgress(e.detail); });
    state.session.addEventListener('snapshot', (e) => kept.onSnapshot(e.detail));
    state.session.addEventListener('grid', (e) => { state.lastGrid = e.detail; progress.showGrid(state.lastGrid); });
    state.session.addEventListener('adversary', (e) => curriculum.onAdversary(e.detail));
    state.session.addEventListener('checkpoint', (e) => files.onCheckpoint(e.detail, request));
    state.session.addEventListener('done', (e) => {
      state.run.status = 'done';
      hold.end();
      progress.showDone(e.detail, request, state.lastGrid);
      kept.persistStatus('done').finally(hold.release);
      setButtons();
    });
    state.session.addEventListener('error', (e) => {
      state.run.status = 'stopped';
      hold.end();
      if (state.run.resumedFrom !== null) {
        ctx.message(`The training run saved at step ${fmtInt(state.run.resumedFrom)} could not be resumed: ${e.detail.message}. It stays in this browser; Start begins a new run.`);
      } else {
        ctx.message(`Training stopped: ${e.detail.message}`);
      }
      $('train-status').textContent = 'Stopped by an error.';
      kept.persistStatus('stopped').finally(hold.release);
      setButtons();
    });
    // A run resumed paused starts paused in the worker, so its first report (the restored
    // counters) already says so.
    state.session.start(paused ? { ...request, start_paused: true } : request, checkpoint, saved, optimizer);
    if (paused) {
      state.run.status = 'paused';
      state.session.pause(true);
    }
    setButtons();
  }

  // One tab trains the run; a tab that died training is counted (train/hold.js).
  const hold = runHold();
  const train = { setUserModel, setMode, setButtons, begin, generatorLabel, chosenLabel, restoreForm };
  const kept = runStore(ctx, { state, progress, curriculum, hold, train });
  const files = checkpointFiles(ctx, { state, train });

  function startNavigator() {
    const config = checkNav();
    if (!config) { ctx.message('Fix the highlighted navigator setting first.'); return null; }
    let checkpoint;
    let cfg = config;
    if ($('train-continue').checked && state.navModel) {
      try {
        cfg = lab.loadNavigator(state.navModel.bytes).config; // a model keeps its own shapes
      } catch (e) { ctx.message(errorText(e)); return null; }
      checkpoint = state.navModel.bytes;
    }
    let generator;
    try { generator = generatorSpec(); } catch (e) { ctx.message(errorText(e)); return null; }
    if (generator.kind === 'adversary' && checkpoint) {
      ctx.message('An adversarial run trains a fresh population of navigators: untick "Continue from the current model" (it applies to DR, CL and one site).');
      return null;
    }
    const int = (id, lo, fallback) => Math.max(lo, parseInt($(id).value, 10) || fallback);
    return {
      request: {
        agent: NAVIGATOR, generator, config: cfg, frames: int('train-nav-frames', 1, 1), seed: ctx.seed(),
        backend: $('train-backend').value, snapshot_every_s: 10,
        judge_every_s: int('train-judge-every', 1, 30), judge_seeds: int('train-judge-seeds', 1, 10),
      },
      checkpoint,
    };
  }

  async function start() {
    ctx.message('');
    if (state.session?.running) return;
    if (!(await hold.claim())) { ctx.message(ELSEWHERE); return; }
    if (state.mode === NAVIGATOR) {
      const job = startNavigator();
      if (!job) { hold.release(); return; }
      launch(job.request, job.checkpoint);
      return;
    }
    const names = chosenTasks();
    if (!names.length) { hold.release(); ctx.message('Choose at least one task to train on.'); return; }
    let config = checkHyper();
    if (!config) { hold.release(); ctx.message('Fix the highlighted hyperparameter first.'); return; }
    const frames = Math.max(1, parseInt($('train-frames').value, 10) || 0);
    let checkpoint;
    if ($('train-continue').checked && ctx.userModel) {
      try {
        config = Lab.inspectCheckpoint(ctx.userModel.bytes).config; // a model keeps its own shapes
      } catch (e) { hold.release(); ctx.message(errorText(e)); return; }
      checkpoint = ctx.userModel.bytes;
    }
    const request = {
      config, tasks: names.map(ctx.specOf), frames, seed: ctx.seed(),
      backend: $('train-backend').value, snapshot_every_s: 10, snapshot_replay: 2000,
    };
    launch(request, checkpoint);
  }

  function launch(request, checkpoint) {
    hold.fresh();
    kept.fresh();
    state.run = null;
    state.lastGrid = null;
    progress.clear({ counters: false });
    try {
      begin(request, checkpoint, undefined);
    } catch (e) {
      hold.release();
      ctx.message(errorText(e));
      return;
    }
    $('train-status').textContent = 'Starting the learner…';
    progress.showCounters();
    progress.draw();
  }

  function togglePause() {
    if (!state.session?.running) return;
    const pause = state.run.status !== 'paused';
    state.run.status = pause ? 'paused' : 'running';
    state.session.pause(pause);
    kept.persistStatus(state.run.status);
    setButtons();
  }

  $('train-start').addEventListener('click', start);
  $('train-pause').addEventListener('click', togglePause);
  $('train-step').addEventListener('click', () => state.session?.step());
  $('train-stop').addEventListener('click', () => { state.run.status = 'stopped'; state.session?.stop(); kept.persistStatus('stopped'); });
  $('train-resume').addEventListener('click', async () => {
    if (!state.held || state.session?.running) return;
    if (!(await hold.claim())) { ctx.message(ELSEWHERE); return; }
    const { saved, paused } = state.held;
    ctx.message('');
    begin(saved.request, saved.bytes, saved.state, { paused, optimizer: saved.optimizer || undefined, resumedFrom: saved.env_steps });
    $('train-status').textContent = `Resuming from step ${fmtInt(saved.env_steps)}…`;
    setButtons();
  });

  $('train-agent').addEventListener('change', () => setMode($('train-agent').value));
  for (const id of ['train-site', 'train-level']) $(id).addEventListener('change', showChosen);

  taskOptions();
  usePreset('paper');
  siteOptions();
  showGenerator({ kind: 'dr' });
  buildNav(navDefaults);
  showChosen();

  // The form as a saved run set it up (train/persist.js restores the run itself).
  function restoreForm(saved) {
    const { request } = saved;
    if (['auto', 'webgpu', 'cpu'].includes(request.backend)) $('train-backend').value = request.backend;
    if (request.agent === NAVIGATOR) {
      setMode(NAVIGATOR);
      showGenerator(request.generator);
      buildNav({ ...navDefaults, ...request.config });
      $('train-nav-frames').value = String(request.frames);
      if (request.judge_every_s) $('train-judge-every').value = String(request.judge_every_s);
      if (request.judge_seeds) $('train-judge-seeds').value = String(request.judge_seeds);
    } else {
      useConfig(request.config);
      chooseTasks(request.tasks.map(ctx.taskKey));
      $('train-frames').value = String(request.frames);
    }
  }

  // A model and a run saved by an earlier visit: the model comes back; an unfinished run resumes.
  const restored = kept.restore().then(() => {
    setButtons();
    progress.draw();
  });

  return {
    enter() {
      if (!chosenTasks().length) chooseTasks([ctx.taskKey(ctx.taskSpec())].filter((k) => taskBoxes().some((b) => b.value === k)));
      applyMode();
      setButtons();
      progress.draw();
    },
    leave() { applyMode(); },
    restored,
    shareState() {
      if (state.mode === NAVIGATOR) throw new Error('share links carry DOM-Q-Net training settings only, not the navigator\'s');
      const config = checkHyper();
      return { v: 1, view: 'train', task: chosenTasks()[0] ? ctx.specOf(chosenTasks()[0]) : ctx.taskSpec(), seed: ctx.seed(), config, replay: null };
    },
    async openShare(state) {
      await restored;
      if (state.session?.running) return;
      setMode(DQN);
      if (state.config) useConfig(state.config);
      chooseTasks([ctx.taskKey(state.task)]);
      ctx.message('The link set up a training run: press Start to train with these settings.', 'info');
    },
    status() { return state.run && { agent: state.run.request.agent || DQN, status: state.run.status, env_steps: state.run.env_steps, updates: state.run.updates, backend: state.run.backend, live: Boolean(state.session?.running), held: Boolean(state.held) }; },
  };
}

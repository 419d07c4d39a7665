// Train: DOM-Q-Net (on MiniWoB tasks) or the gMiniWoB navigator (on generated sites) learning
// live in the tab. The learner runs in a worker (training.js); the task pages it acts on are the
// lab's pages #1.. (the watch page #0 stays free), shown here while training. Every knob of the
// agent's config is editable before a run (checked in Rust); charts follow the run; snapshots go
// to IndexedDB so a reload resumes the run; checkpoints export and import as files (.wlq for
// DOM-Q-Net, .wln for the navigator). An adversarial generator (CoDE, Flexible b-PAIRED, ...)
// trains a population of navigators in the worker's population loop; curriculum.js draws its
// designs, histogram and curves.
import { TrainingSession } from './training.js';
import { LineChart } from './charts.js';
import * as store from './store.js';
import { errorText } from './app.js';
import { download } from './download.js';
import { holdCover } from './overlay.js';
import { initCurriculum } from './curriculum.js';
import { dqnForm } from './train/dqn-form.js';
import { navForm } from './train/nav-form.js';
import { AUTO_RESUMES_AFTER_CRASHES, runHold } from './train/hold.js';

const $ = (id) => document.getElementById(id);
const FRAME_OFFSET = 1;
const RUN_KEY = 'run';
const MODEL_KEY = 'model';
// The navigator's last checkpoint (a run's snapshot or an imported file); the Watch view's
// DOM-Q-Net model (MODEL_KEY) is left alone by navigator runs.
const NAV_MODEL_KEY = 'navigator-model';
const DQN = 'dom-q-net';
const NAVIGATOR = 'navigator';
// What a tab is told when another tab of the lab trains the run (it holds RUN_LOCK).
const ELSEWHERE = 'A training run is live in another tab of the lab: it trains there, and two tabs would overwrite each other\'s run. Stop it or close that tab to train here.';

// Checkpoints download as bytes.
const downloadBytes = (name, bytes) => download(name, bytes, 'application/octet-stream');

const fmtInt = (n) => Math.round(n).toLocaleString('en-US');
const fileName = (s) => s.replace(/[^\w.+-]+/g, '_').slice(0, 80);

// The adversaries' names by objective key (Lab.adversaryObjectives), for generatorLabel.
const adversaryLabels = {};

// What a navigator run trains on, as the learner labels it (GeneratorSpec::label).
function generatorLabel(spec) {
  if (!spec) return '?';
  if (spec.kind === 'adversary') return adversaryLabels[spec.objective] || spec.objective;
  return spec.kind === 'site' ? `site ${spec.name}` : spec.kind.toUpperCase();
}

// A success rate's cell colour: pale red at 0 through pale yellow to green at 1.
function successColor(v) {
  const x = Math.max(0, Math.min(1, v));
  return `hsl(${Math.round(130 * x)}, 62%, ${Math.round(91 - 26 * x)}%)`;
}

export function initTrain(ctx) {
  const { lab, Lab } = ctx;
  // When a task counts as solved (Rust's rule), in words.
  const solveRule = (({ rate, window }) => `${Math.round(100 * rate)}% of ${window}`)(Lab.dqnSolveRule());
  let session = null;
  let run = null; // {request, status: 'running'|'paused'|'done'|'stopped', env_steps, updates, backend, reason}
  let lastSnapshot = null; // {bytes, state}
  let savedAtStep = null; // env steps of the run's snapshot now in IndexedDB
  let held = null; // a saved run left for the Resume button (see train/hold.js): {saved, paused}
  let exportWanted = false;
  let drawQueued = false;
  let mode = DQN; // the agent the controls set up: DQN or NAVIGATOR
  let navModel = null; // {name, bytes}: the navigator's last checkpoint
  let lastGrid = null; // the navigator run's last success grid message

  const charts = {
    success: new LineChart($('chart-success'), { title: 'Success rate, last 100 episodes (%)', yMin: 0, yMax: 100, xLabel: 'env steps' }),
    reward: new LineChart($('chart-reward'), { title: 'Episode raw reward (mean per report)', yMin: -1, yMax: 1, xLabel: 'env steps' }),
    loss: new LineChart($('chart-loss'), { title: 'TD loss (Huber)', yMin: 0, xLabel: 'env steps' }),
    replay: new LineChart($('chart-replay'), { title: 'Replay: fill and positive transitions (%)', yMin: 0, yMax: 100, xLabel: 'env steps' }),
    speed: new LineChart($('chart-speed'), { title: 'Env steps/s and updates/s', yMin: 0, xLabel: 'env steps' }),
    navReturn: new LineChart($('chart-nav-return'), { title: 'Mean return per iteration (shaped reward)', xLabel: 'iteration' }),
    navSuccess: new LineChart($('chart-nav-success'), { title: 'Training episodes that succeeded (%)', yMin: 0, yMax: 100, xLabel: 'iteration' }),
    navSteps: new LineChart($('chart-nav-steps'), { title: 'Mean episode length (steps)', yMin: 0, xLabel: 'iteration' }),
    navSize: new LineChart($('chart-nav-size'), { title: 'Design size: primitives and fields', yMin: 0, xLabel: 'iteration' }),
  };
  // An adversarial run's curriculum view; its charts are saved, cleared and drawn with the rest.
  const curriculum = initCurriculum(ctx);
  Object.assign(charts, curriculum.charts);
  for (const o of Lab.adversaryObjectives().objectives) adversaryLabels[o.key] = o.label;
  const chartState = () => Object.fromEntries(Object.entries(charts).map(([k, c]) => [k, c.toJSON()]));
  function drawCharts() {
    if (drawQueued) return;
    drawQueued = true;
    requestAnimationFrame(() => {
      drawQueued = false;
      if (ctx.view === 'train') for (const c of Object.values(charts)) c.draw();
      curriculum.draw();
    });
  }

  // The two agents' forms (train/dqn-form.js, train/nav-form.js).
  const { taskOptions, taskBoxes, chosenTasks, chooseTasks, difficultyOf, usePreset, useConfig, checkHyper } = dqnForm(ctx, { onTasks: () => showChosen() });
  const { navDefaults, siteOptions, syncGenerator, generatorSpec, showGenerator, buildNav, checkNav } =
    navForm(ctx, curriculum, { onGenerator: () => { applyMode(); showChosen(); } });

  // The centre column before a run (index.html's #train-intro): what the run will train on.
  function showChosen() {
    const list = $('train-chosen');
    if (mode === NAVIGATOR) {
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
    if (ctx.view === 'train') ws.dataset.trainAgent = mode;
    else delete ws.dataset.trainAgent;
    if (ctx.view === 'train' && mode === NAVIGATOR && curriculum.isAdversary($('train-generator').value)) ws.dataset.trainAdversarial = 'true';
    else delete ws.dataset.trainAdversarial;
  }
  function setMode(m) {
    const next = m === NAVIGATOR ? NAVIGATOR : DQN;
    // A finished run of the other agent leaves the screen (its record stays in IndexedDB).
    if (next !== mode && run && (run.request.agent || DQN) !== next && !session?.running) clearRun(next);
    mode = next;
    $('train-agent').value = mode;
    $('import-ckpt').accept = mode === NAVIGATOR ? '.wln,application/octet-stream' : '.wlq,application/octet-stream';
    $('train-step').title = mode === NAVIGATOR ? 'One iteration (its episodes and one update), then stay paused' : 'One environment step and its update, then stay paused';
    applyMode();
    setButtons();
    drawCharts();
    showChosen();
  }

  function clearRun(next) {
    run = null;
    lastSnapshot = null;
    lastGrid = null;
    showGrid(null);
    for (const c of Object.values(charts)) c.clear();
    curriculum.clear();
    ensureFrames([]);
    $('train-status').textContent = 'Not training.';
    $('train-progress').style.width = '0%';
    $('train-budget').textContent = '';
    for (const id of ['tr-steps', 'tr-updates', 'tr-iterations', 'tr-episodes']) $(id).textContent = '0';
    for (const id of ['tr-backend', 'tr-act', 'tr-update', 'tr-vocab', 'tr-design']) $(id).textContent = '–';
    $('tr-backend-reason').textContent = '';
    const model = next === NAVIGATOR ? navModel : ctx.userModel;
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
    const active = run && (run.status === 'running' || run.status === 'paused') && session?.running;
    $('train-start').disabled = Boolean(active);
    $('train-pause').disabled = !active;
    $('train-pause').textContent = run?.status === 'paused' ? 'Resume' : 'Pause';
    $('train-step').disabled = !(active && run.status === 'paused');
    $('train-stop').disabled = !active;
    $('export-ckpt').disabled = !(active || (mode === NAVIGATOR ? navModel : ctx.userModel));
    for (const input of $('hyper-fields').querySelectorAll('input')) input.disabled = Boolean(active);
    for (const b of taskBoxes()) b.disabled = Boolean(active);
    for (const input of $('nav-fields').querySelectorAll('input')) input.disabled = Boolean(active);
    for (const input of $('train-adversary').querySelectorAll('input')) input.disabled = Boolean(active);
    for (const id of ['train-agent', 'train-generator', 'train-site', 'train-level', 'train-nav-frames', 'train-judge-every', 'train-judge-seeds']) {
      $(id).disabled = Boolean(active);
    }
  }

  function showCounters() {
    if (!run) return;
    $('tr-steps').textContent = fmtInt(run.env_steps || 0);
    $('tr-updates').textContent = fmtInt(run.updates || 0);
    const frames = run.request.frames;
    $('train-progress').style.width = `${Math.min(100, (100 * (run.env_steps || 0)) / frames).toFixed(1)}%`;
    $('train-budget').textContent = `${fmtInt(run.env_steps || 0)} / ${fmtInt(frames)} steps`;
    if (run.backend) {
      $('tr-backend').textContent = run.backend === 'webgpu' ? 'WebGPU' : 'CPU';
      $('tr-backend-reason').textContent = run.reason || '';
    }
  }

  function onProgress(p) {
    if (p.agent === NAVIGATOR) { onNavProgress(p); return; }
    run.env_steps = p.env_steps;
    run.updates = p.updates;
    run.tasksProgress = p.tasks;
    const x = p.env_steps;
    for (const t of p.tasks) if (t.stats.episodes > 0) charts.success.add(t.task, x, 100 * t.stats.success_rate_100);
    if (p.new_episodes.length) {
      charts.reward.add('reward', x, p.new_episodes.reduce((s, e) => s + e.raw_reward, 0) / p.new_episodes.length);
    }
    if (p.loss !== null && p.loss !== undefined) charts.loss.add('loss', x, p.loss);
    charts.replay.add('fill', x, (100 * p.replay_len) / p.replay_capacity);
    charts.replay.add('positive', x, 100 * p.positive_fraction);
    charts.speed.add('env steps/s', x, p.steps_per_s);
    charts.speed.add('updates/s', x, p.updates_per_s);
    $('tr-act').textContent = p.act_ms != null ? `${p.act_ms.toFixed(1)} ms/step` : '–';
    $('tr-update').textContent = p.update_ms != null ? `${p.update_ms.toFixed(1)} ms` : '–';
    const solved = p.tasks.filter((t) => t.solved_at_frames != null).map((t) => `${t.task} at ${fmtInt(t.solved_at_frames)}`);
    const rates = p.tasks.map((t) => `${t.task} ${t.stats.episodes ? Math.round(100 * t.stats.success_rate_100) + '%' : '–'}`);
    $('train-status').textContent = `${p.paused ? 'Paused' : 'Training'} · ${fmtInt(p.episodes)} episodes · ${rates.join(', ')}` +
      (solved.length ? ` · solved (${solveRule}): ${solved.join(', ')}` : '') + envFailures(p, (k) => p.tasks[k]?.task);
    if (p.warnings && p.warnings.length) ctx.message(`Training: ${p.warnings[0]}`, 'info');
    showCounters();
    drawCharts();
  }

  // Episodes a failing page ended (the learner went on; it stops the run itself when one task's
  // episodes keep failing): how many, and the last one's reason.
  function envFailures(p, taskName) {
    const last = p.env_failures?.at(-1);
    if (last) run.lastEnvFailure = `${taskName(last.task)}: ${last.reason}`;
    if (!p.env_failures_total) return '';
    return ` · ${fmtInt(p.env_failures_total)} ${p.env_failures_total === 1 ? 'episode' : 'episodes'} ended by a failing page (last: ${run.lastEnvFailure})`;
  }

  function onNavProgress(p) {
    run.env_steps = p.env_steps;
    run.updates = p.updates;
    if (p.adversarial) curriculum.onProgress(p);
    for (const it of p.new_iterations) {
      charts.navReturn.add('mean return', it.iteration, it.mean_return);
      charts.navSuccess.add('success', it.iteration, 100 * it.success_rate);
      charts.navSteps.add('mean steps', it.iteration, it.mean_steps);
      charts.navSize.add('primitives', it.iteration, it.primitives);
      charts.navSize.add('fields', it.iteration, it.fields);
    }
    charts.speed.add('env steps/s', p.env_steps, p.steps_per_s);
    charts.speed.add('updates/s', p.env_steps, p.updates_per_s);
    $('tr-iterations').textContent = fmtInt(p.iterations);
    $('tr-episodes').textContent = fmtInt(p.episodes);
    // An adversarial run reports each navigator's vocabulary.
    $('tr-vocab').textContent = Array.isArray(p.vocabulary) ? p.vocabulary.map(fmtInt).join(' / ') : fmtInt(p.vocabulary);
    const last = p.new_iterations.at(-1);
    if (last) {
      $('tr-design').textContent = `${last.pages} ${last.pages === 1 ? 'page' : 'pages'}, ${last.primitives} primitives, ${last.fields} fields`;
    }
    $('train-status').textContent = `${p.paused ? 'Paused' : 'Training'} on ${p.generator} · ${fmtInt(p.iterations)} iterations, ${fmtInt(p.episodes)} episodes` +
      (last ? ` · last iteration: ${Math.round(100 * last.success_rate)}% success, return ${last.mean_return.toFixed(2)}` : '') +
      // A resumed run's first report (its restored counters) has no rates yet.
      (p.steps_per_s != null ? ` · ${p.steps_per_s.toFixed(0)} env steps/s, ${p.updates_per_s.toFixed(1)} updates/s` : '') + envFailures(p, () => p.generator);
    showCounters();
    drawCharts();
  }

  // The success grid: test sites x levels, each cell the greedy success rate on unseen seeds.
  function showGrid(g) {
    const table = $('nav-grid');
    table.replaceChildren();
    if (!g) {
      $('nav-grid-note').textContent = 'Not judged yet.';
      return;
    }
    const head = table.createTHead().insertRow();
    head.append(Object.assign(document.createElement('th'), { textContent: 'level' }));
    for (let l = 0; l < g.levels; l++) head.append(Object.assign(document.createElement('th'), { textContent: String(l), scope: 'col' }));
    const body = table.createTBody();
    g.sites.forEach((site, i) => {
      const row = body.insertRow();
      row.append(Object.assign(document.createElement('th'), { textContent: site, scope: 'row' }));
      g.success[i].forEach((v, l) => {
        const cell = row.insertCell();
        cell.textContent = `${Math.round(100 * v)}%`;
        cell.style.background = successColor(v);
        cell.title = `${site}, level ${l}: ${Math.round(v * g.seeds)} of ${g.seeds} episodes succeeded`;
        cell.dataset.value = String(v);
      });
    });
    $('nav-grid-note').textContent = `At ${fmtInt(g.env_steps)} env steps (${fmtInt(g.updates)} updates): judged greedily on ${g.seeds} unseen seeds per cell, on the site simulator.` +
      (g.means ? ` The population's best, navigator ${g.navigator}; mean per navigator: ${g.means.map((m) => `${Math.round(100 * m)}%`).join(' / ')}.` : '');
  }

  // Keeps a snapshot in IndexedDB. When the browser refuses it (its storage is full: the write
  // aborts with QuotaExceededError) training goes on, the person is told, and the previous
  // snapshot stays (IndexedDB rolls the failed write back).
  async function saveRun(m, extra, model, modelKey, what) {
    try {
      // The run and its model in one transaction: both are written, or (storage full) neither,
      // so the stored pair never stands at two different steps.
      await store.saveAll([[RUN_KEY, {
        schema: m.schema, request: run.request, status: run.status, backend: run.backend, reason: run.reason,
        env_steps: m.env_steps, updates: m.updates, bytes: m.bytes, state: m.state, optimizer: m.optimizer || null,
        charts: chartState(), saved_at: Date.now(), ...extra,
      }], [modelKey, model]]);
      savedAtStep = m.env_steps;
      $('model-note').textContent = `Run saved in this browser at step ${fmtInt(m.env_steps)} (${what}); a reload continues from there.`;
    } catch (e) {
      const text = `Training goes on, but its snapshot at step ${fmtInt(m.env_steps)} was not saved in this browser: ${errorText(e)}. ` +
        (savedAtStep !== null ? `The previous snapshot, at step ${fmtInt(savedAtStep)}, stays; a reload continues from there.` : 'A reload would start over.');
      $('model-note').textContent = text;
      ctx.message(text);
    }
  }

  async function onNavSnapshot(m) {
    lastSnapshot = { bytes: m.bytes, state: m.state };
    if (m.adversarial) {
      // The snapshot is the whole population run; the current navigator is its best one.
      navModel = { name: `navigator ${m.navigator_index} of the ${generatorLabel(run.request.generator)} run (step ${fmtInt(m.env_steps)})`, bytes: m.navigator };
      setButtons();
      await saveRun(m, { grid: lastGrid, curriculum: curriculum.toJSON() }, navModel, NAV_MODEL_KEY,
        'every navigator and the adversary with Adam\'s moments, the loop\'s state');
      return;
    }
    navModel = { name: `navigator (${generatorLabel(run.request.generator)}, step ${fmtInt(m.env_steps)})`, bytes: m.bytes };
    setButtons();
    await saveRun(m, { grid: lastGrid }, navModel, NAV_MODEL_KEY,
      m.optimizer ? 'network, vocabulary, Adam\'s moments, the loop\'s state' : 'network, vocabulary, the loop\'s state');
  }

  async function onSnapshot(m) {
    if (m.agent === NAVIGATOR) { await onNavSnapshot(m); return; }
    lastSnapshot = { bytes: m.bytes, state: m.state };
    const model = { name: `your run (${chosenLabel(run.request.tasks)}, step ${fmtInt(m.env_steps)})`, bytes: m.bytes, tasks: run.request.tasks.map(ctx.taskKey) };
    setUserModel(model, false);
    await saveRun(m, {}, model, MODEL_KEY, m.optimizer ? 'network, Adam\'s moments, recent replay' : 'network, recent replay');
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
    session = new TrainingSession(lab, { frameOffset: FRAME_OFFSET });
    // Probing the backend and building the model take a while: the busy line says so until the
    // learner's first report.
    let starting = ctx.busy(resumedFrom === null ? 'Starting the learner: probing the backend, building the model…' : `Resuming the run from step ${fmtInt(resumedFrom)}…`);
    const started = () => { starting?.(); starting = null; };
    for (const kind of ['progress', 'done', 'error']) session.addEventListener(kind, started);
    run = { request, status: 'running', env_steps: run?.env_steps || 0, updates: run?.updates || 0, resumedFrom };
    held = null;
    $('train-resume').hidden = true;
    hold.live();
    session.addEventListener('backend', (e) => {
      run.backend = e.detail.name;
      run.reason = e.detail.reason;
      ctx.setBackend(e.detail.name, e.detail.reason);
      showCounters();
    });
    session.addEventListener('status', (e) => {
      $('train-status').textContent = e.detail.text;
      starting?.say(`Starting the learner: ${e.detail.text}`);
      // What a resume could not take from the snapshot stays on screen.
      if (/^Resumed with fresh Adam moments/.test(e.detail.text)) ctx.message(e.detail.text, 'info');
    });
    session.addEventListener('progress', (e) => { run.resumedFrom = null; onProgress(e.detail); });
    session.addEventListener('snapshot', (e) => onSnapshot(e.detail));
    session.addEventListener('grid', (e) => { lastGrid = e.detail; showGrid(lastGrid); });
    session.addEventListener('adversary', (e) => curriculum.onAdversary(e.detail));
    session.addEventListener('checkpoint', (e) => {
      if (!exportWanted) return;
      exportWanted = false;
      if (request.agent === NAVIGATOR) {
        downloadBytes(`weblab-navigator-${fileName(generatorLabel(request.generator))}-${e.detail.updates}.wln`, e.detail.bytes);
      } else {
        downloadBytes(`weblab-${request.tasks.map((t) => ctx.taskKey(t).replace('/', '-')).join('+').slice(0, 60)}-${e.detail.updates}.wlq`, e.detail.bytes);
      }
    });
    session.addEventListener('done', (e) => {
      run.status = 'done';
      hold.end();
      if (request.agent === NAVIGATOR) {
        const d = e.detail;
        $('train-status').textContent = `Finished: ${fmtInt(d.env_steps)} env steps, ${fmtInt(d.updates)} updates, ${fmtInt(d.episodes)} episodes in ${d.elapsed_s.toFixed(0)} s` +
          (lastGrid ? `; mean success on the test sites ${Math.round(100 * lastGrid.mean)}%` : '');
        persistStatus('done').finally(hold.release);
        setButtons();
        return;
      }
      const solved = e.detail.tasks.filter((t) => t.solved_at_frames != null);
      $('train-status').textContent = `Finished: ${fmtInt(e.detail.env_steps)} steps, ${fmtInt(e.detail.updates)} updates in ${e.detail.elapsed_s.toFixed(0)} s` +
        (solved.length ? `; solved ${solved.map((t) => `${t.task} at ${fmtInt(t.solved_at_frames)}`).join(', ')}` : `; no task reached ${solveRule}`);
      persistStatus('done').finally(hold.release);
      setButtons();
    });
    session.addEventListener('error', (e) => {
      run.status = 'stopped';
      hold.end();
      if (run.resumedFrom !== null) {
        ctx.message(`The training run saved at step ${fmtInt(run.resumedFrom)} could not be resumed: ${e.detail.message}. It stays in this browser; Start begins a new run.`);
      } else {
        ctx.message(`Training stopped: ${e.detail.message}`);
      }
      $('train-status').textContent = 'Stopped by an error.';
      persistStatus('stopped').finally(hold.release);
      setButtons();
    });
    // A run resumed paused starts paused in the worker, so its first report (the restored
    // counters) already says so.
    session.start(paused ? { ...request, start_paused: true } : request, checkpoint, saved, optimizer);
    if (paused) {
      run.status = 'paused';
      session.pause(true);
    }
    setButtons();
  }

  // One tab trains the run; a tab that died training is counted (train/hold.js).
  const hold = runHold();

  async function persistStatus(status) {
    try {
      await store.update(RUN_KEY, (saved) => ({ ...saved, status }));
    } catch { /* the run itself is not affected */ }
  }

  function startNavigator() {
    const config = checkNav();
    if (!config) { ctx.message('Fix the highlighted navigator setting first.'); return null; }
    let checkpoint;
    let cfg = config;
    if ($('train-continue').checked && navModel) {
      try {
        cfg = lab.loadNavigator(navModel.bytes).config; // a model keeps its own shapes
      } catch (e) { ctx.message(errorText(e)); return null; }
      checkpoint = navModel.bytes;
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
    if (session?.running) return;
    if (!(await hold.claim())) { ctx.message(ELSEWHERE); return; }
    if (mode === NAVIGATOR) {
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
    savedAtStep = null;
    for (const c of Object.values(charts)) c.clear();
    run = null;
    lastSnapshot = null;
    lastGrid = null;
    showGrid(null);
    curriculum.clear();
    try {
      begin(request, checkpoint, undefined);
    } catch (e) {
      hold.release();
      ctx.message(errorText(e));
      return;
    }
    $('train-status').textContent = 'Starting the learner…';
    showCounters();
    drawCharts();
  }

  function togglePause() {
    if (!session?.running) return;
    const pause = run.status !== 'paused';
    run.status = pause ? 'paused' : 'running';
    session.pause(pause);
    persistStatus(run.status);
    setButtons();
  }

  $('train-start').addEventListener('click', start);
  $('train-pause').addEventListener('click', togglePause);
  $('train-step').addEventListener('click', () => session?.step());
  $('train-stop').addEventListener('click', () => { run.status = 'stopped'; session?.stop(); persistStatus('stopped'); });
  $('train-resume').addEventListener('click', async () => {
    if (!held || session?.running) return;
    if (!(await hold.claim())) { ctx.message(ELSEWHERE); return; }
    const { saved, paused } = held;
    ctx.message('');
    begin(saved.request, saved.bytes, saved.state, { paused, optimizer: saved.optimizer || undefined, resumedFrom: saved.env_steps });
    $('train-status').textContent = `Resuming from step ${fmtInt(saved.env_steps)}…`;
    setButtons();
  });

  $('train-agent').addEventListener('change', () => setMode($('train-agent').value));
  for (const id of ['train-site', 'train-level']) $(id).addEventListener('change', showChosen);

  $('export-ckpt').addEventListener('click', () => {
    if (session?.running) {
      exportWanted = true;
      session.requestCheckpoint();
    } else if (mode === NAVIGATOR && navModel) {
      downloadBytes(`${fileName(navModel.name)}.wln`, navModel.bytes);
    } else if (mode === DQN && ctx.userModel) {
      downloadBytes(`${fileName(ctx.userModel.name)}.wlq`, ctx.userModel.bytes);
    }
  });
  // A navigator checkpoint (.wln): checked by loading it (the lab's navigator, for judging); the
  // current one stays when it is refused.
  async function importNavigator(file, bytes) {
    let header;
    try {
      header = lab.loadNavigator(bytes);
    } catch (e) {
      ctx.message(`${file.name} was not loaded: ${errorText(e)}. The current navigator is unchanged.`);
      return;
    }
    const trained = header.trained_on || 'nothing yet';
    navModel = { name: `${file.name} (${trained}, ${fmtInt(header.counters.env_steps)} steps)`, bytes };
    setButtons();
    $('model-note').textContent = `Current navigator: ${navModel.name}.`;
    try { await store.save(NAV_MODEL_KEY, navModel); } catch (e) { ctx.message(`The navigator is loaded in this tab but was not saved in this browser: ${errorText(e)}.`); return; }
    ctx.message(`Loaded ${file.name}: a navigator trained on ${trained} for ${fmtInt(header.counters.env_steps)} env steps. Continue training it with "Continue from the current model".`, 'info');
  }
  $('import-ckpt').addEventListener('change', async (event) => {
    const file = event.target.files[0];
    event.target.value = '';
    if (!file) return;
    ctx.message('');
    const end = ctx.busy(`Reading ${file.name}…`);
    try {
      await importFile(file);
    } finally {
      end();
    }
  });
  async function importFile(file) {
    const large = ctx.fileTooLarge(file, 'checkpoint');
    if (large) { ctx.message(`${large}. The current ${mode === NAVIGATOR ? 'navigator' : 'model'} is unchanged.`); return; }
    const bytes = new Uint8Array(await file.arrayBuffer());
    await ctx.painted();
    if (mode === NAVIGATOR) { await importNavigator(file, bytes); return; }
    let header;
    try {
      header = Lab.inspectCheckpoint(bytes);
    } catch (e) {
      // The current model stays as it was.
      ctx.message(`${file.name} was not loaded: ${errorText(e)}. The current model is unchanged.`);
      return;
    }
    const model = { name: `${file.name} (${header.tasks.join(', ') || 'no tasks'}, ${fmtInt(header.counters.env_steps)} steps)`, bytes, tasks: header.tasks };
    setUserModel(model);
    try { await store.save(MODEL_KEY, model); } catch (e) { ctx.message(`The model is loaded in this tab but was not saved in this browser: ${errorText(e)}.`); return; }
    ctx.message(`Loaded ${file.name}: trained on ${header.tasks.join(', ') || 'no tasks'} for ${fmtInt(header.counters.env_steps)} steps. Watch it in the Watch view, or continue training it.`, 'info');
  }

  taskOptions();
  usePreset('paper');
  siteOptions();
  showGenerator({ kind: 'dr' });
  buildNav(navDefaults);
  showChosen();

  // A model and a run saved by an earlier visit: the model comes back; an unfinished run resumes.
  const restored = (async () => {
    try {
      // A model the store cannot give back, or a damaged one, is reported and left where it is.
      const kept = async (key, what, use) => {
        let m;
        try { m = await store.load(key); } catch (e) {
          ctx.message(`${what} kept in this browser could not be read: ${errorText(e)}.`);
          return;
        }
        if (!m) return;
        try {
          if (!(m.bytes instanceof Uint8Array)) throw new Error('the stored record holds no checkpoint');
          use(m);
        } catch (e) {
          ctx.message(`${what} kept in this browser was not loaded: ${errorText(e)}. It stays stored; training or importing one replaces it.`);
        }
      };
      await kept(MODEL_KEY, 'The DOM-Q-Net model', (m) => { Lab.inspectCheckpoint(m.bytes); setUserModel(m, true); });
      await kept(NAV_MODEL_KEY, 'The navigator', (m) => { lab.loadNavigator(m.bytes); navModel = m; });
      const saved = await store.load(RUN_KEY);
      if (!saved) return;
      if (typeof saved !== 'object' || typeof saved.request !== 'object' || saved.request === null) {
        throw new Error('the stored record is not a training run');
      }
      // A record of another format, or whose request the lab would refuse from anyone (a task
      // that is a whole page, a folder outside MiniWoB++'s, a bad number), is refused before
      // anything reads it; it stays stored.
      try {
        window.wasmBindings.checkSnapshotSchema(saved.schema);
        window.wasmBindings.checkTrainRequest(saved.request);
      } catch (e) {
        ctx.message(`${errorText(e)}. It stays saved in this browser; Start begins a new run, which replaces it.`);
        $('train-status').textContent = 'The saved run was not resumed.';
        return;
      }
      for (const [k, c] of Object.entries(charts)) c.load(saved.charts?.[k]);
      if (['auto', 'webgpu', 'cpu'].includes(saved.request.backend)) $('train-backend').value = saved.request.backend;
      if (saved.request.agent === NAVIGATOR) {
        setMode(NAVIGATOR);
        showGenerator(saved.request.generator);
        buildNav({ ...navDefaults, ...saved.request.config });
        $('train-nav-frames').value = String(saved.request.frames);
        if (saved.request.judge_every_s) $('train-judge-every').value = String(saved.request.judge_every_s);
        if (saved.request.judge_seeds) $('train-judge-seeds').value = String(saved.request.judge_seeds);
        lastGrid = saved.grid || null;
        showGrid(lastGrid);
        curriculum.load(saved.curriculum);
      } else {
        useConfig(saved.request.config);
        chooseTasks(saved.request.tasks.map(ctx.taskKey));
        $('train-frames').value = String(saved.request.frames);
      }
      run = { request: saved.request, status: saved.status, env_steps: saved.env_steps, updates: saved.updates, backend: saved.backend, reason: saved.reason };
      savedAtStep = saved.env_steps;
      showCounters();
      if ((saved.status === 'running' || saved.status === 'paused') && !(await hold.claim())) {
        // Another tab trains it: not resumed here, and no crash is counted.
        ctx.message(`The training run saved at step ${fmtInt(saved.env_steps)} is live in another tab of the lab, so it is not resumed here (two tabs would overwrite each other's run).`, 'info');
        $('train-status').textContent = 'Training in another tab.';
        hold.whenFree().then(() => {
          if (!session?.running) $('train-status').textContent = 'The other tab let the run go: reload this tab to continue it here.';
        });
      } else if (saved.status === 'running' || saved.status === 'paused') {
        const paused = saved.status === 'paused';
        // The tab that held this run went away without a clean exit: count it.
        const crashes = hold.countCrash();
        if (crashes > AUTO_RESUMES_AFTER_CRASHES || ctx.safeStart) {
          held = { saved, paused };
          $('train-resume').hidden = false;
          const why = ctx.safeStart
            ? 'The lab stopped on an internal error while it last started, so this run was not restarted.'
            : `The tab closed unexpectedly ${crashes} times in a row while this run was training, so it was not restarted.`;
          ctx.message(`${why} Its snapshot at step ${fmtInt(saved.env_steps)} is kept: press "Resume the saved run" to continue it, or Start for a new run.`);
          $('train-status').textContent = `Saved run at step ${fmtInt(saved.env_steps)}, waiting to be resumed.`;
          hold.release();
        } else {
          begin(saved.request, saved.bytes, saved.state, { paused, optimizer: saved.optimizer || undefined, resumedFrom: saved.env_steps });
          ctx.message(`Resumed the training run saved at step ${fmtInt(saved.env_steps)}` +
            (crashes ? ', after the tab closed unexpectedly.' : '.'), 'info');
          $('train-status').textContent = `Resuming from step ${fmtInt(saved.env_steps)}…`;
        }
      } else {
        $('train-status').textContent = `Last run: ${saved.status} at step ${fmtInt(saved.env_steps)}.`;
      }
    } catch (e) {
      ctx.message(`The saved training run could not be restored: ${errorText(e)}`);
    }
    setButtons();
    drawCharts();
  })();

  return {
    enter() {
      if (!chosenTasks().length) chooseTasks([ctx.taskKey(ctx.taskSpec())].filter((k) => taskBoxes().some((b) => b.value === k)));
      applyMode();
      setButtons();
      drawCharts();
    },
    leave() { applyMode(); },
    restored,
    shareState() {
      if (mode === NAVIGATOR) throw new Error('share links carry DOM-Q-Net training settings only, not the navigator\'s');
      const config = checkHyper();
      return { v: 1, view: 'train', task: chosenTasks()[0] ? ctx.specOf(chosenTasks()[0]) : ctx.taskSpec(), seed: ctx.seed(), config, replay: null };
    },
    async openShare(state) {
      await restored;
      if (session?.running) return;
      setMode(DQN);
      if (state.config) useConfig(state.config);
      chooseTasks([ctx.taskKey(state.task)]);
      ctx.message('The link set up a training run: press Start to train with these settings.', 'info');
    },
    status() { return run && { agent: run.request.agent || DQN, status: run.status, env_steps: run.env_steps, updates: run.updates, backend: run.backend, live: Boolean(session?.running), held: Boolean(held) }; },
  };
}

// Train: DOM-Q-Net learning live in the tab. The learner runs in a worker (training.js); the task
// pages it acts on are the lab's pages #1.. (the watch page #0 stays free), shown here while
// training. Every knob of the agent's config is editable before a run; charts follow the run;
// snapshots go to IndexedDB so a reload resumes the run; checkpoints export and import as files.
import { TrainingSession } from './training.js';
import { LineChart } from './charts.js';
import * as store from './store.js';
import { errorText } from './app.js';

const $ = (id) => document.getElementById(id);
// The paper's multitask set (DOM-Q-Net §4.2, Figure 5).
const PAPER_MULTITASK = ['click-checkboxes', 'click-option', 'click-tab-2', 'email-inbox-delete', 'enter-password',
  'enter-text', 'enter-text-dynamic', 'login-user', 'navigate-tree'];
const FRAME_OFFSET = 1;
const RUN_KEY = 'run';
const MODEL_KEY = 'model';

function download(name, bytes) {
  const url = URL.createObjectURL(new Blob([bytes], { type: 'application/octet-stream' }));
  const a = Object.assign(document.createElement('a'), { href: url, download: name });
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

const fmtInt = (n) => Math.round(n).toLocaleString('en-US');

export function initTrain(ctx) {
  const { lab, Lab } = ctx;
  const defaults = Lab.defaultDqnConfig();
  let session = null;
  let run = null; // {request, status: 'running'|'paused'|'done'|'stopped', env_steps, updates, backend, reason}
  let lastSnapshot = null; // {bytes, state}
  let exportWanted = false;
  let drawQueued = false;

  const charts = {
    success: new LineChart($('chart-success'), { title: 'Success rate, last 100 episodes (%)', yMin: 0, yMax: 100, xLabel: 'env steps' }),
    reward: new LineChart($('chart-reward'), { title: 'Episode raw reward (mean per report)', yMin: -1, yMax: 1, xLabel: 'env steps' }),
    loss: new LineChart($('chart-loss'), { title: 'TD loss (Huber)', yMin: 0, xLabel: 'env steps' }),
    replay: new LineChart($('chart-replay'), { title: 'Replay: fill and positive transitions (%)', yMin: 0, yMax: 100, xLabel: 'env steps' }),
    speed: new LineChart($('chart-speed'), { title: 'Env steps/s and updates/s', yMin: 0, xLabel: 'env steps' }),
  };
  const chartState = () => Object.fromEntries(Object.entries(charts).map(([k, c]) => [k, c.toJSON()]));
  function drawCharts() {
    if (drawQueued) return;
    drawQueued = true;
    requestAnimationFrame(() => {
      drawQueued = false;
      if (ctx.view === 'train') for (const c of Object.values(charts)) c.draw();
    });
  }

  // ---------------------------------------------------------------- task choice
  function taskOptions() {
    const box = $('train-tasks');
    box.querySelectorAll('label').forEach((l) => l.remove());
    for (const t of ctx.tasks) {
      const cb = Object.assign(document.createElement('input'), { type: 'checkbox', value: t.name });
      cb.addEventListener('change', presetForTasks);
      const label = document.createElement('label');
      label.append(cb, `${t.name} `);
      const badge = Object.assign(document.createElement('span'), { className: `badge ${t.difficulty}`, textContent: t.difficulty });
      label.append(badge);
      box.appendChild(label);
    }
  }
  const taskBoxes = () => [...$('train-tasks').querySelectorAll('input[type=checkbox]')];
  const chosenTasks = () => taskBoxes().filter((b) => b.checked).map((b) => b.value);
  function chooseTasks(names) {
    for (const b of taskBoxes()) b.checked = names.includes(b.value);
    presetForTasks();
  }

  // Table 3's buffer sizes and Table 2's T = 7 for social-media follow the task choice, unless edited.
  function presetForTasks() {
    const names = chosenTasks();
    const cap = field('replay_capacity');
    if (cap && (cap.value === '15000' || cap.value === '100000')) cap.value = names.length > 1 ? '100000' : '15000';
    const t = field('gnn_steps');
    if (t && (t.value === '3' || t.value === '7')) t.value = names.some((n) => n.startsWith('social-media')) ? '7' : '3';
    $('train-task-count').textContent = names.length > 1 ? `${names.length} tasks, one network, one replay buffer` : '';
  }

  // ---------------------------------------------------------------- hyperparameters
  const field = (key) => $('hyper-fields').querySelector(`[data-key="${key}"]`);
  function buildHyper(cfg) {
    const box = $('hyper-fields');
    box.replaceChildren();
    for (const [key, value] of Object.entries(defaults)) {
      const name = Object.assign(document.createElement('span'), { textContent: key, title: key });
      let input;
      if (typeof value === 'boolean') {
        input = Object.assign(document.createElement('input'), { type: 'checkbox', checked: cfg[key] });
      } else {
        input = Object.assign(document.createElement('input'), { type: 'text', inputMode: 'decimal', value: cfg[key] === null ? '' : String(cfg[key]) });
        if (value === null || key === 'grad_clip') input.placeholder = 'none';
      }
      input.dataset.key = key;
      input.setAttribute('aria-label', key);
      input.addEventListener('change', checkHyper);
      box.append(name, input);
    }
    checkHyper();
  }
  function readHyper() {
    const cfg = {};
    for (const input of $('hyper-fields').querySelectorAll('input')) {
      const key = input.dataset.key;
      if (input.type === 'checkbox') cfg[key] = input.checked;
      else if (input.value.trim() === '' && (defaults[key] === null || key === 'grad_clip')) cfg[key] = null;
      else if (typeof defaults[key] === 'string') cfg[key] = input.value;
      else cfg[key] = Number(input.value);
    }
    return cfg;
  }
  // Returns the checked config, or null with the problem shown next to the fields.
  function checkHyper() {
    for (const input of $('hyper-fields').querySelectorAll('input')) input.classList.remove('invalid');
    const cfg = readHyper();
    const bad = Object.entries(cfg).find(([, v]) => typeof v === 'number' && !Number.isFinite(v));
    try {
      if (bad) throw new Error(`${bad[0]} must be a number`);
      const ok = Lab.checkDqnConfig(cfg);
      $('hyper-error').hidden = true;
      return ok;
    } catch (e) {
      const text = errorText(e);
      $('hyper-error').textContent = text;
      $('hyper-error').hidden = false;
      const key = Object.keys(cfg).find((k) => text.startsWith(k) || text.includes(` ${k} `) || text.includes(`\`${k}\``));
      if (key) field(key).classList.add('invalid');
      return null;
    }
  }

  // ---------------------------------------------------------------- task pages of the run
  function ensureFrames(tasks) {
    const box = $('extra-frames');
    while (lab.frameCount() < FRAME_OFFSET + tasks.length) {
      const frame = document.createElement('iframe');
      frame.title = `Training page ${lab.frameCount()}`;
      box.appendChild(frame);
      lab.addFrame(frame);
    }
    const frames = [...box.querySelectorAll('iframe')];
    frames.forEach((frame, i) => {
      const name = tasks[i];
      const info = ctx.tasks.find((t) => t.name === name);
      const [w, h] = info?.size || [160, 210];
      frame.style.width = `${w + 172}px`;
      frame.style.height = `${Math.max(h, 210) + 6}px`;
      frame.dataset.task = name || '';
      frame.hidden = i >= tasks.length;
    });
  }

  // ---------------------------------------------------------------- progress on screen
  function setButtons() {
    const active = run && (run.status === 'running' || run.status === 'paused') && session?.running;
    $('train-start').disabled = Boolean(active);
    $('train-pause').disabled = !active;
    $('train-pause').textContent = run?.status === 'paused' ? 'Resume' : 'Pause';
    $('train-step').disabled = !(active && run.status === 'paused');
    $('train-stop').disabled = !active;
    $('export-ckpt').disabled = !(active || ctx.userModel);
    for (const input of $('hyper-fields').querySelectorAll('input')) input.disabled = Boolean(active);
    for (const b of taskBoxes()) b.disabled = Boolean(active);
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
      (solved.length ? ` · solved (90% of 100): ${solved.join(', ')}` : '');
    if (p.warnings && p.warnings.length) ctx.message(`Training: ${p.warnings[0]}`, 'info');
    showCounters();
    drawCharts();
  }

  async function onSnapshot(m) {
    lastSnapshot = { bytes: m.bytes, state: m.state };
    const model = { name: `your run (${chosenLabel(run.request.tasks)}, step ${fmtInt(m.env_steps)})`, bytes: m.bytes, tasks: run.request.tasks.map((t) => t.name) };
    setUserModel(model, false);
    try {
      await store.save(RUN_KEY, {
        request: run.request, status: run.status, backend: run.backend, reason: run.reason,
        env_steps: m.env_steps, updates: m.updates, bytes: m.bytes, state: m.state, optimizer: m.optimizer || null,
        charts: chartState(), saved_at: Date.now(),
      });
      await store.save(MODEL_KEY, model);
      $('model-note').textContent = `Run saved in this browser at step ${fmtInt(m.env_steps)}` +
        `${m.optimizer ? ' (network, Adam\'s moments, recent replay)' : ' (network, recent replay)'}; a reload continues from there.`;
    } catch (e) {
      $('model-note').textContent = `Could not save the run in this browser: ${errorText(e)}`;
    }
  }

  const chosenLabel = (tasks) => (tasks.length === 1 ? tasks[0].name : `${tasks.length} tasks`);

  function setUserModel(model, announce = true) {
    ctx.userModel = model;
    ctx.views.watch?.reloadAgent?.();
    if (announce) $('model-note').textContent = `Current model: ${model.name}.`;
    setButtons();
  }

  // ---------------------------------------------------------------- running
  function begin(request, checkpoint, saved, { paused = false, optimizer = undefined } = {}) {
    ensureFrames(request.tasks.map((t) => t.name));
    session = new TrainingSession(lab, { frameOffset: FRAME_OFFSET });
    run = { request, status: 'running', env_steps: run?.env_steps || 0, updates: run?.updates || 0 };
    session.addEventListener('backend', (e) => {
      run.backend = e.detail.name;
      run.reason = e.detail.reason;
      ctx.setBackend(e.detail.name, e.detail.reason);
      showCounters();
    });
    session.addEventListener('status', (e) => { $('train-status').textContent = e.detail.text; });
    session.addEventListener('progress', (e) => onProgress(e.detail));
    session.addEventListener('snapshot', (e) => onSnapshot(e.detail));
    session.addEventListener('checkpoint', (e) => {
      if (!exportWanted) return;
      exportWanted = false;
      download(`weblab-${request.tasks.map((t) => t.name).join('+').slice(0, 60)}-${e.detail.updates}.wlq`, e.detail.bytes);
    });
    session.addEventListener('done', (e) => {
      run.status = 'done';
      const solved = e.detail.tasks.filter((t) => t.solved_at_frames != null);
      $('train-status').textContent = `Finished: ${fmtInt(e.detail.env_steps)} steps, ${fmtInt(e.detail.updates)} updates in ${e.detail.elapsed_s.toFixed(0)} s` +
        (solved.length ? `; solved ${solved.map((t) => `${t.task} at ${fmtInt(t.solved_at_frames)}`).join(', ')}` : '; no task reached 90%');
      persistStatus('done');
      setButtons();
    });
    session.addEventListener('error', (e) => {
      run.status = 'stopped';
      ctx.message(`Training stopped: ${e.detail.message}`);
      $('train-status').textContent = 'Stopped by an error.';
      persistStatus('stopped');
      setButtons();
    });
    session.start(request, checkpoint, saved, optimizer);
    if (paused) {
      run.status = 'paused';
      session.pause(true);
    }
    setButtons();
  }

  async function persistStatus(status) {
    try {
      const saved = await store.load(RUN_KEY);
      if (saved) await store.save(RUN_KEY, { ...saved, status });
    } catch { /* the run itself is not affected */ }
  }

  function start() {
    ctx.message('');
    const names = chosenTasks();
    if (!names.length) { ctx.message('Choose at least one task to train on.'); return; }
    let config = checkHyper();
    if (!config) { ctx.message('Fix the highlighted hyperparameter first.'); return; }
    const frames = Math.max(1, parseInt($('train-frames').value, 10) || 0);
    let checkpoint;
    if ($('train-continue').checked && ctx.userModel) {
      try {
        config = Lab.inspectCheckpoint(ctx.userModel.bytes).config; // a model keeps its own shapes
      } catch (e) { ctx.message(errorText(e)); return; }
      checkpoint = ctx.userModel.bytes;
    }
    const request = {
      config, tasks: names.map((name) => ({ source: 'builtin', name })), frames, seed: ctx.seed(),
      backend: $('train-backend').value, snapshot_every_s: 10, snapshot_replay: 2000,
    };
    for (const c of Object.values(charts)) c.clear();
    run = null;
    lastSnapshot = null;
    try {
      begin(request, checkpoint, undefined);
    } catch (e) {
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
  $('train-paper-set').addEventListener('click', () => chooseTasks(PAPER_MULTITASK));
  $('hyper-reset').addEventListener('click', () => { buildHyper(defaults); presetForTasks(); });
  $('hyper-reference').addEventListener('click', () => { buildHyper(Lab.referenceCodeDqnConfig()); presetForTasks(); });

  $('export-ckpt').addEventListener('click', () => {
    if (session?.running) {
      exportWanted = true;
      session.requestCheckpoint();
    } else if (ctx.userModel) {
      download(`${ctx.userModel.name.replace(/[^\w.+-]+/g, '_').slice(0, 80)}.wlq`, ctx.userModel.bytes);
    }
  });
  $('import-ckpt').addEventListener('change', async (event) => {
    const file = event.target.files[0];
    event.target.value = '';
    if (!file) return;
    ctx.message('');
    const bytes = new Uint8Array(await file.arrayBuffer());
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
    try { await store.save(MODEL_KEY, model); } catch { /* kept for this session */ }
    ctx.message(`Loaded ${file.name}: trained on ${header.tasks.join(', ') || 'no tasks'} for ${fmtInt(header.counters.env_steps)} steps. Watch it in the Watch view, or continue training it.`, 'info');
  });

  taskOptions();
  buildHyper(defaults);

  // A model and a run saved by an earlier visit: the model comes back; an unfinished run resumes.
  const restored = (async () => {
    try {
      const model = await store.load(MODEL_KEY);
      if (model && model.bytes) {
        try { Lab.inspectCheckpoint(model.bytes); setUserModel(model, true); } catch { /* a damaged entry is ignored */ }
      }
      const saved = await store.load(RUN_KEY);
      if (!saved) return;
      for (const [k, c] of Object.entries(charts)) c.load(saved.charts?.[k]);
      chooseTasks(saved.request.tasks.map((t) => t.name));
      buildHyper(saved.request.config);
      $('train-frames').value = String(saved.request.frames);
      run = { request: saved.request, status: saved.status, env_steps: saved.env_steps, updates: saved.updates, backend: saved.backend, reason: saved.reason };
      showCounters();
      if (saved.status === 'running' || saved.status === 'paused') {
        begin(saved.request, saved.bytes, saved.state, { paused: saved.status === 'paused', optimizer: saved.optimizer || undefined });
        ctx.message(`Resumed the training run saved at step ${fmtInt(saved.env_steps)}.`, 'info');
        $('train-status').textContent = `Resuming from step ${fmtInt(saved.env_steps)}…`;
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
      if (!chosenTasks().length) chooseTasks([ctx.taskSpec().name].filter((n) => ctx.tasks.some((t) => t.name === n)));
      setButtons();
      drawCharts();
    },
    restored,
    shareState() {
      const config = checkHyper();
      return { v: 1, view: 'train', task: { source: 'builtin', name: chosenTasks()[0] || ctx.taskSpec().name }, seed: ctx.seed(), config, replay: null };
    },
    async openShare(state) {
      await restored;
      if (session?.running) return;
      if (state.config) buildHyper(state.config);
      chooseTasks([state.task.name]);
      ctx.message('The link set up a training run: press Start to train with these settings.', 'info');
    },
    status() { return run && { status: run.status, env_steps: run.env_steps, updates: run.updates, backend: run.backend }; },
  };
}

// A training run kept in this browser: each snapshot the learner sends is written to IndexedDB
// with its model, so a reload (or a crashed tab) resumes the run; and on load, the model, the
// navigator and an unfinished run an earlier visit left come back. Nothing stored is trusted: a
// record of another format or with a request the lab would refuse is reported and left stored.
import * as store from '../store.js';
import { errorText } from '../app.js';
import { fmtInt } from './progress.js';
import { AUTO_RESUMES_AFTER_CRASHES } from './hold.js';

const $ = (id) => document.getElementById(id);
export const RUN_KEY = 'run';
export const MODEL_KEY = 'model';
// The navigator's last checkpoint (a run's snapshot or an imported file); the Watch view's
// DOM-Q-Net model (MODEL_KEY) is left alone by navigator runs.
export const NAV_MODEL_KEY = 'navigator-model';
const NAVIGATOR = 'navigator';

// state: train.js's shared run state; progress: train/progress.js's view; curriculum:
// curriculum.js's view; hold: train/hold.js's; train: the Train view's own operations
// (setUserModel, setMode, setButtons, begin, generatorLabel, chosenLabel, restoreForm).
export function runStore(ctx, { state, progress, curriculum, hold, train }) {
  let savedAtStep = null; // env steps of the run's snapshot now in IndexedDB

  // Keeps a snapshot in IndexedDB. When the browser refuses it (its storage is full: the write
  // aborts with QuotaExceededError) training goes on, the person is told, and the previous
  // snapshot stays (IndexedDB rolls the failed write back).
  async function saveRun(m, extra, model, modelKey, what) {
    const { run } = state;
    try {
      // The run and its model in one transaction: both are written, or (storage full) neither,
      // so the stored pair never stands at two different steps.
      await store.saveAll([[RUN_KEY, {
        schema: m.schema, request: run.request, status: run.status, backend: run.backend, reason: run.reason,
        env_steps: m.env_steps, updates: m.updates, bytes: m.bytes, state: m.state, optimizer: m.optimizer || null,
        charts: progress.toJSON(), saved_at: Date.now(), ...extra,
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
    const { run } = state;
    if (m.adversarial) {
      // The snapshot is the whole population run; the current navigator is its best one.
      state.navModel = { name: `navigator ${m.navigator_index} of the ${train.generatorLabel(run.request.generator)} run (step ${fmtInt(m.env_steps)})`, bytes: m.navigator };
      train.setButtons();
      await saveRun(m, { grid: state.lastGrid, curriculum: curriculum.toJSON() }, state.navModel, NAV_MODEL_KEY,
        'every navigator and the adversary with Adam\'s moments, the loop\'s state');
      return;
    }
    state.navModel = { name: `navigator (${train.generatorLabel(run.request.generator)}, step ${fmtInt(m.env_steps)})`, bytes: m.bytes };
    train.setButtons();
    await saveRun(m, { grid: state.lastGrid }, state.navModel, NAV_MODEL_KEY,
      m.optimizer ? 'network, vocabulary, Adam\'s moments, the loop\'s state' : 'network, vocabulary, the loop\'s state');
  }

  async function onSnapshot(m) {
    if (m.agent === NAVIGATOR) { await onNavSnapshot(m); return; }
    const { run } = state;
    const model = { name: `your run (${train.chosenLabel(run.request.tasks)}, step ${fmtInt(m.env_steps)})`, bytes: m.bytes, tasks: run.request.tasks.map(ctx.taskKey) };
    train.setUserModel(model, false);
    await saveRun(m, {}, model, MODEL_KEY, m.optimizer ? 'network, Adam\'s moments, recent replay' : 'network, recent replay');
  }

  async function persistStatus(status) {
    try {
      await store.update(RUN_KEY, (saved) => ({ ...saved, status }));
    } catch { /* the run itself is not affected */ }
  }

  // A model the store cannot give back, or a damaged one, is reported and left where it is.
  async function kept(key, what, use) {
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
  }

  // A model and a run saved by an earlier visit: the model comes back; an unfinished run resumes.
  async function restore() {
    const { Lab, lab } = ctx;
    await kept(MODEL_KEY, 'The DOM-Q-Net model', (m) => { Lab.inspectCheckpoint(m.bytes); train.setUserModel(m, true); });
    await kept(NAV_MODEL_KEY, 'The navigator', (m) => { lab.loadNavigator(m.bytes); state.navModel = m; });
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
    progress.load(saved.charts);
    train.restoreForm(saved);
    if (saved.request.agent === NAVIGATOR) {
      state.lastGrid = saved.grid || null;
      progress.showGrid(state.lastGrid);
      curriculum.load(saved.curriculum);
    }
    state.run = { request: saved.request, status: saved.status, env_steps: saved.env_steps, updates: saved.updates, backend: saved.backend, reason: saved.reason };
    savedAtStep = saved.env_steps;
    progress.showCounters();
    const live = saved.status === 'running' || saved.status === 'paused';
    if (live && !(await hold.claim())) {
      // Another tab trains it: not resumed here, and no crash is counted.
      ctx.message(`The training run saved at step ${fmtInt(saved.env_steps)} is live in another tab of the lab, so it is not resumed here (two tabs would overwrite each other's run).`, 'info');
      $('train-status').textContent = 'Training in another tab.';
      hold.whenFree().then(() => {
        if (!state.session?.running) $('train-status').textContent = 'The other tab let the run go: reload this tab to continue it here.';
      });
    } else if (live) {
      const paused = saved.status === 'paused';
      // The tab that held this run went away without a clean exit: count it.
      const crashes = hold.countCrash();
      if (crashes > AUTO_RESUMES_AFTER_CRASHES || ctx.safeStart) {
        state.held = { saved, paused };
        $('train-resume').hidden = false;
        const why = ctx.safeStart
          ? 'The lab stopped on an internal error while it last started, so this run was not restarted.'
          : `The tab closed unexpectedly ${crashes} times in a row while this run was training, so it was not restarted.`;
        ctx.message(`${why} Its snapshot at step ${fmtInt(saved.env_steps)} is kept: press "Resume the saved run" to continue it, or Start for a new run.`);
        $('train-status').textContent = `Saved run at step ${fmtInt(saved.env_steps)}, waiting to be resumed.`;
        hold.release();
      } else {
        train.begin(saved.request, saved.bytes, saved.state, { paused, optimizer: saved.optimizer || undefined, resumedFrom: saved.env_steps });
        ctx.message(`Resumed the training run saved at step ${fmtInt(saved.env_steps)}` +
          (crashes ? ', after the tab closed unexpectedly.' : '.'), 'info');
        $('train-status').textContent = `Resuming from step ${fmtInt(saved.env_steps)}…`;
      }
    } else {
      $('train-status').textContent = `Last run: ${saved.status} at step ${fmtInt(saved.env_steps)}.`;
    }
  }

  return {
    onSnapshot,
    persistStatus,
    // A new run: no snapshot of it is stored yet.
    fresh() { savedAtStep = null; },
    async restore() {
      try {
        await restore();
      } catch (e) {
        ctx.message(`The saved training run could not be restored: ${errorText(e)}`);
      }
    },
  };
}

// Checkpoints as files: the Export button (the live run's checkpoint, asked of the learner, or the
// current model) and the Import input (.wlq for DOM-Q-Net, .wln for the navigator). A file is
// checked by Rust before it replaces anything; a refused one leaves the current model as it was.
import * as store from '../store.js';
import { errorText } from '../app.js';
import { download } from '../download.js';
import { fmtInt } from './progress.js';
import { MODEL_KEY, NAV_MODEL_KEY } from './persist.js';

const $ = (id) => document.getElementById(id);
const NAVIGATOR = 'navigator';
const DQN = 'dom-q-net';
const downloadBytes = (name, bytes) => download(name, bytes, 'application/octet-stream');
const fileName = (s) => s.replace(/[^\w.+-]+/g, '_').slice(0, 80);

// state: train.js's shared run state; train: the Train view's operations (setUserModel,
// setButtons, generatorLabel).
export function checkpointFiles(ctx, { state, train }) {
  const { Lab, lab } = ctx;
  let exportWanted = false;

  $('export-ckpt').addEventListener('click', () => {
    if (state.session?.running) {
      exportWanted = true;
      state.session.requestCheckpoint();
    } else if (state.mode === NAVIGATOR && state.navModel) {
      downloadBytes(`${fileName(state.navModel.name)}.wln`, state.navModel.bytes);
    } else if (state.mode === DQN && ctx.userModel) {
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
    state.navModel = { name: `${file.name} (${trained}, ${fmtInt(header.counters.env_steps)} steps)`, bytes };
    train.setButtons();
    $('model-note').textContent = `Current navigator: ${state.navModel.name}.`;
    try { await store.save(NAV_MODEL_KEY, state.navModel); } catch (e) { ctx.message(`The navigator is loaded in this tab but was not saved in this browser: ${errorText(e)}.`); return; }
    ctx.message(`Loaded ${file.name}: a navigator trained on ${trained} for ${fmtInt(header.counters.env_steps)} env steps. Continue training it with "Continue from the current model".`, 'info');
  }

  async function importFile(file) {
    const large = ctx.fileTooLarge(file, 'checkpoint');
    if (large) { ctx.message(`${large}. The current ${state.mode === NAVIGATOR ? 'navigator' : 'model'} is unchanged.`); return; }
    const bytes = new Uint8Array(await file.arrayBuffer());
    await ctx.painted();
    if (state.mode === NAVIGATOR) { await importNavigator(file, bytes); return; }
    let header;
    try {
      header = Lab.inspectCheckpoint(bytes);
    } catch (e) {
      // The current model stays as it was.
      ctx.message(`${file.name} was not loaded: ${errorText(e)}. The current model is unchanged.`);
      return;
    }
    const model = { name: `${file.name} (${header.tasks.join(', ') || 'no tasks'}, ${fmtInt(header.counters.env_steps)} steps)`, bytes, tasks: header.tasks };
    train.setUserModel(model);
    try { await store.save(MODEL_KEY, model); } catch (e) { ctx.message(`The model is loaded in this tab but was not saved in this browser: ${errorText(e)}.`); return; }
    ctx.message(`Loaded ${file.name}: trained on ${header.tasks.join(', ') || 'no tasks'} for ${fmtInt(header.counters.env_steps)} steps. Watch it in the Watch view, or continue training it.`, 'info');
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

  return {
    // The learner's checkpoint message: downloaded when the Export button asked for it.
    onCheckpoint(detail, request) {
      if (!exportWanted) return;
      exportWanted = false;
      if (request.agent === NAVIGATOR) {
        downloadBytes(`weblab-navigator-${fileName(train.generatorLabel(request.generator))}-${detail.updates}.wln`, detail.bytes);
      } else {
        downloadBytes(`weblab-${request.tasks.map((t) => ctx.taskKey(t).replace('/', '-')).join('+').slice(0, 60)}-${detail.updates}.wlq`, detail.bytes);
      }
    },
  };
}

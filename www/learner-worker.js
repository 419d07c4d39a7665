// The learner worker: training (DOM-Q-Net or the gMiniWoB navigator) runs here, in the learner's
// build of the crate (learner/: training and WebGPU, which the page's build leaves out), so the
// page and its task iframes stay responsive. Environment calls go back to the page, which owns
// the iframes (see training.js).
import init, { Learner } from '../learner/weblab.js';

// A panic in the learner's wasm: what it said, for the run's error (the instance is gone after
// it; the page ends the session and keeps the run's last snapshot).
let panicked = null;
globalThis.weblabPanicked = (message) => { panicked = message; };

let nextId = 1;
const pending = new Map();

globalThis.weblabPost = (message) => postMessage(message);
globalThis.weblabEnvCall = (request) => new Promise((resolve) => {
  const id = nextId++;
  pending.set(id, resolve);
  postMessage({ kind: 'env', id, request });
});

const ready = init({ module_or_path: new URL('../learner/weblab_bg.wasm', import.meta.url) }).then(() => new Learner());

// A short description of the WebGPU adapter this browser offers, or null. Some browser setups
// never answer requestAdapter(); after a few seconds that counts as no adapter.
async function describeAdapter(timeoutMs = 5000) {
  if (!navigator.gpu) return null;
  const timeout = new Promise((resolve) => setTimeout(() => resolve(null), timeoutMs));
  try {
    const adapter = await Promise.race([navigator.gpu.requestAdapter(), timeout]);
    if (!adapter) return null;
    const info = adapter.info || {};
    const name = [info.vendor, info.architecture || info.device || info.description].filter(Boolean).join(' ') || 'unknown adapter';
    const fallback = info.isFallbackAdapter ?? adapter.isFallbackAdapter;
    return fallback ? `${name}, a software fallback` : name;
  } catch {
    return null;
  }
}

onmessage = async (event) => {
  const m = event.data;
  if (m.kind === 'env-reply') {
    const resolve = pending.get(m.id);
    pending.delete(m.id);
    if (resolve) resolve(m.reply);
    return;
  }
  const learner = await ready;
  switch (m.kind) {
    case 'train': {
      const adapter = m.request.backend === 'cpu' ? null : await describeAdapter();
      try {
        const done = await learner.train({ ...m.request, adapter }, m.checkpoint || undefined, m.saved || undefined, m.optimizer || undefined, m.folders || []);
        postMessage(done);
      } catch (err) {
        const message = panicked ? `the learner stopped on an internal error (${panicked})` : String(err && err.message ? err.message : err);
        postMessage({ kind: 'error', message });
      }
      break;
    }
    case 'pause': learner.pause(Boolean(m.paused)); break;
    case 'step': learner.step(); break;
    case 'stop': learner.stop(); break;
    case 'checkpoint': learner.requestCheckpoint(); break;
  }
};

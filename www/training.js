// Training from the page: starts the learner worker, answers its environment requests with the
// lab's task iframes, and re-dispatches its messages as events ('backend', 'status', 'progress',
// 'checkpoint', 'snapshot', 'done', 'error').

export class TrainingSession extends EventTarget {
  // frameOffset: the lab page that serves task 0 (the app trains on its own pages, #1 on, so the
  // watch page #0 stays free).
  constructor(lab, { frameOffset = 0 } = {}) {
    super();
    this.lab = lab;
    this.frameOffset = frameOffset;
    this.worker = null;
  }

  // request: {config, tasks: [TaskSpec...], frames, seed, backend: 'auto'|'webgpu'|'cpu', ...}
  // (see TrainRequest in src/request/mod.rs); config may be partial: what it leaves out follows
  // the paper's preset for the tasks (the navigator's defaults for a navigator request).
  // checkpoint: optional Uint8Array to continue from; saved: a snapshot's state string, to
  // continue a whole run (progress, episode counters, recent replay).
  // optimizer: the snapshot's Adam state (Uint8Array), when it has one.
  // A navigator request (agent: 'navigator', generator: {kind: 'dr'|'cl'|'site', ...}) acts on
  // one page, task 0, where the generated site it trains on renders.
  start(request, checkpoint, saved, optimizer) {
    if (this.worker) throw new Error('training is already running');
    const navigator = request.agent === 'navigator';
    const pages = navigator ? 1 : request.tasks.length;
    if (this.lab.frameCount() < this.frameOffset + pages) {
      throw new Error(navigator ? 'navigator training needs a task page' : `multitask training on ${pages} tasks needs as many task pages`);
    }
    const frames = Array.from({ length: pages }, (_, k) => k + this.frameOffset);
    // The pages' settings for this request, as Rust decides them (DOM-Q-Net's step cap; generated
    // sites end at their own step limit). A request Rust refuses is reported as the worker would
    // report it, once start has returned.
    let pageConfig;
    try {
      pageConfig = window.wasmBindings.trainingPageConfig(request);
    } catch (e) {
      const message = String(e?.message ?? e);
      setTimeout(() => this.dispatchEvent(new CustomEvent('error', { detail: { message } })), 0);
      return;
    }
    this.lab.setConfig(pageConfig, frames);
    this.worker = new Worker(new URL('./learner-worker.js', import.meta.url), { type: 'module' });
    this.worker.onmessage = async (event) => {
      const m = event.data;
      if (m.kind === 'env') {
        const reply = await this.lab.serveEnv({ ...m.request, task: m.request.task + this.frameOffset });
        this.worker?.postMessage({ kind: 'env-reply', id: m.id, reply });
        return;
      }
      if (m.kind === 'done' || m.kind === 'error') this.finish();
      this.dispatchEvent(new CustomEvent(m.kind, { detail: m }));
    };
    this.worker.onerror = (event) => {
      this.finish();
      this.dispatchEvent(new CustomEvent('error', { detail: { message: event.message || 'the learner worker failed' } }));
    };
    // The folders a person typed into this tab (the worker's check allows them besides
    // MiniWoB++'s); never part of the request, which the store keeps.
    this.worker.postMessage({ kind: 'train', request, checkpoint, saved, optimizer, folders: this.lab.typedFolders() });
  }

  get running() { return this.worker !== null; }
  pause(paused) { this.worker?.postMessage({ kind: 'pause', paused }); }
  // One environment step and its update, then paused (pauses a running session first).
  step() { this.worker?.postMessage({ kind: 'step' }); }
  stop() { this.worker?.postMessage({ kind: 'stop' }); }
  requestCheckpoint() { this.worker?.postMessage({ kind: 'checkpoint' }); }

  finish() {
    const w = this.worker;
    this.worker = null;
    // Let the last message drain before the worker goes.
    if (w) setTimeout(() => w.terminate(), 0);
  }
}

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
  // (see TrainRequest in src/web/learner.rs); config may be partial: what it leaves out follows
  // the paper's preset for the tasks.
  // checkpoint: optional Uint8Array to continue from; saved: a snapshot's state string, to
  // continue a whole run (progress, episode counters, recent replay).
  // optimizer: the snapshot's Adam state (Uint8Array), when it has one.
  start(request, checkpoint, saved, optimizer) {
    if (this.worker) throw new Error('training is already running');
    if (this.lab.frameCount() < this.frameOffset + request.tasks.length) {
      throw new Error(`multitask training on ${request.tasks.length} tasks needs as many task pages`);
    }
    const frames = request.tasks.map((_, k) => k + this.frameOffset);
    this.lab.setConfig({ max_steps: request.config?.max_episode_steps ?? 22, hold_clock: true }, frames);
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
    this.worker.postMessage({ kind: 'train', request, checkpoint, saved, optimizer });
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

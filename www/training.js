// Training from the page: starts the learner worker, answers its environment requests with the
// lab's task iframes, and re-dispatches its messages as events ('backend', 'status', 'progress',
// 'checkpoint', 'done', 'error').

export class TrainingSession extends EventTarget {
  constructor(lab) {
    super();
    this.lab = lab;
    this.worker = null;
  }

  // request: {config, tasks: [TaskSpec...], frames, seed, backend: 'auto'|'webgpu'|'cpu', ...}
  // checkpoint: optional Uint8Array to continue from.
  start(request, checkpoint) {
    if (this.worker) throw new Error('training is already running');
    if (this.lab.frameCount() < request.tasks.length) {
      throw new Error(`multitask training on ${request.tasks.length} tasks needs as many task pages`);
    }
    this.lab.setConfig({ max_steps: request.config?.max_episode_steps ?? 22, hold_clock: true });
    this.worker = new Worker(new URL('./learner-worker.js', import.meta.url), { type: 'module' });
    this.worker.onmessage = async (event) => {
      const m = event.data;
      if (m.kind === 'env') {
        const reply = await this.lab.serveEnv(m.request);
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
    this.worker.postMessage({ kind: 'train', request, checkpoint });
  }

  get running() { return this.worker !== null; }
  pause(paused) { this.worker?.postMessage({ kind: 'pause', paused }); }
  stop() { this.worker?.postMessage({ kind: 'stop' }); }
  requestCheckpoint() { this.worker?.postMessage({ kind: 'checkpoint' }); }

  finish() {
    const w = this.worker;
    this.worker = null;
    // Let the last message drain before the worker goes.
    if (w) setTimeout(() => w.terminate(), 0);
  }
}

// DOM-Q-Net training runs in the built app, for the benchmark (bench-dqn.mjs), the agents'
// training command (train-agents.mjs) and the end-to-end test (training.test.mjs). A run drives
// the learner worker through www/training.js (TrainingSession) on task pages of its own, added to
// the page's Lab; it needs nothing of the app's UI but `window.lab`.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';

// Opens the app on a quiet view (no agent acting on page #0) and returns the page once a Lab
// exists. When the app's UI fails to start, a Lab is made from the wasm bindings directly.
export async function openLab(context, url) {
  const page = context.pages()[0] || await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto(`${url}#/train`);
  await page.waitForFunction(() => window.lab || window.wasmBindings, null, { timeout: 180_000 });
  await page.evaluate(async () => {
    // Give the app a moment to set window.lab itself; otherwise make one.
    for (let i = 0; i < 100 && !window.lab; i++) await new Promise((r) => setTimeout(r, 100));
    if (!window.lab) {
      const frame = document.createElement('iframe');
      document.body.appendChild(frame);
      window.lab = new window.wasmBindings.Lab(frame);
    }
  });
  return { page, errors };
}

// What this browser offers for WebGPU: {offered, adapter} (adapter: vendor/architecture).
export async function webgpuInfo(page) {
  return page.evaluate(async () => {
    if (!navigator.gpu) return { offered: false, adapter: null, why: 'no navigator.gpu' };
    const adapter = await Promise.race([navigator.gpu.requestAdapter(), new Promise((r) => setTimeout(() => r(null), 5000))]);
    if (!adapter) return { offered: false, adapter: null, why: 'requestAdapter() gave no adapter' };
    const i = adapter.info || {};
    return { offered: true, adapter: `${i.vendor || '?'} ${i.architecture || i.device || ''}${i.isFallbackAdapter ? ' (fallback)' : ''}`.trim() };
  });
}

// The named presets besides the paper's (DqnConfig::reference_code, ::code_sizes, ::fast_tab), by
// the Lab binding that gives each.
export const PRESETS = { 'reference-code': 'referenceCodeDqnConfig', 'code-sizes': 'codeSizesDqnConfig', 'fast-tab': 'fastTabDqnConfig' };

// The fields in which preset `name` differs from the paper's (none for 'paper'): a request's
// partial config, which Rust completes with the paper's preset for the tasks.
export async function presetConfig(page, name) {
  if (name === 'paper') return {};
  if (!PRESETS[name]) throw new Error(`unknown preset ${name} (paper, ${Object.keys(PRESETS).join(', ')})`);
  const [paper, preset] = await page.evaluate((fn) => [window.lab.constructor.defaultDqnConfig(), window.lab.constructor[fn]()], PRESETS[name]);
  return Object.fromEntries(Object.entries(preset).filter(([k, v]) => v !== paper[k]));
}

// A run longer than a sitting, kept in `file`: every snapshot (network, Adam's moments, counters,
// the recent replay) is written there, and a run started with the file present continues from it,
// as the app's reload does. A file of another run (tasks, budget, backend, config, seed) is
// refused, not continued. Returns trainInPage's summary with `parts` (sittings, this one
// included) and `total_active_s` (training seconds of all of them).
const runKey = (o) => JSON.stringify({ tasks: o.tasks, frames: o.frames, backend: o.backend, config: o.config, seed: o.seed });
export async function trainWithSnapshots(page, opts, { file, everyS, replay }) {
  const saved = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : null;
  if (saved) {
    if (saved.run !== runKey(opts)) throw new Error(`${file} is a snapshot of another run (${saved.run}); this one is ${runKey(opts)}`);
    console.log(`  ${file}: continuing the run saved at step ${saved.snapshot.env_steps} (${saved.parts} part(s), ${(saved.active_s / 60).toFixed(1)} min of training before)`);
  }
  // Training time of the earlier parts: a resumed run's wall-clock is the sum of its parts.
  const before = saved?.active_s ?? 0, parts = (saved?.parts ?? 0) + 1;
  const r = await trainInPage(page, { ...opts, resume: saved?.snapshot, snapshotEveryS: everyS, snapshotReplay: replay }, undefined, (snap) => {
    // Written beside, then renamed: a run killed mid-write keeps its previous snapshot.
    const record = { run: runKey(opts), active_s: before + snap.active_s, parts, saved_at: new Date().toISOString(), snapshot: snap };
    writeFileSync(`${file}.tmp`, JSON.stringify(record));
    renameSync(`${file}.tmp`, file);
    console.log(`  snapshot at step ${snap.env_steps} written to ${file} (${(record.active_s / 60).toFixed(1)} min of training in ${parts} part(s))`);
  });
  return { ...r, parts, total_active_s: before + (r.active_s ?? 0) };
}

const logExposed = new WeakSet();
const snapshotSinks = new WeakMap();

// Trains in the page and returns a summary. Options:
//   tasks: [name...] (the lab's, or miniwob/<name> for the real MiniWoB++ page); frames: step budget (all tasks together); backend: 'cpu'|'webgpu'|'auto';
//   config: partial DqnConfig (the rest follows the paper's preset for the tasks); seed;
//   stopWhenSolved: stop once every task reached 90% over its last 100 episodes, after
//   `afterSolved` more steps; evalEpisodes: greedy held-out evaluation at the end;
//   checkpoint: return the final model's bytes (base64), f16 weights with checkpointHalf; logEveryS: progress lines via `log`;
//   snapshotEveryS / snapshotReplay: the snapshot messages a page would get (the app: 10 s, 2000);
//   resume: a snapshot as `onSnapshot` was given one, to continue that run the way the app's
//   reload does (network, Adam's moments, counters, the recent replay it kept).
// onSnapshot(s): each snapshot, {schema, env_steps, updates, state, bytes, optimizer, active_s (this
// start's training seconds so far)} with the two byte arrays base64 (what a run spanning several sittings keeps on disk).
export async function trainInPage(page, opts, log = (line) => console.log(line), onSnapshot = null) {
  if (!logExposed.has(page)) {
    await page.exposeFunction('weblabDqnLog', (line) => log(line));
    await page.exposeFunction('weblabDqnSnapshot', (s) => snapshotSinks.get(page)?.(s));
    logExposed.add(page);
  }
  snapshotSinks.set(page, onSnapshot);
  return page.evaluate(async (o) => {
    const toB64 = (bytes) => {
      let s = '';
      for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
      return btoa(s);
    };
    const fromB64 = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const { TrainingSession } = await import('/www/training.js');
    const lab = window.lab;
    const infos = lab.constructor.tasks();
    // The run's own task pages, visible (the reader needs layout), after the app's.
    const frameOffset = lab.frameCount();
    const box = document.createElement('div');
    box.style.cssText = 'position:absolute;left:0;top:0;display:flex;flex-wrap:wrap;gap:4px;background:#fff;z-index:10';
    document.body.appendChild(box);
    for (const name of o.tasks) {
      const [w, h] = infos.find((t) => t.name === name)?.size || [160, 210];
      const frame = document.createElement('iframe');
      frame.style.cssText = `width:${w + 172}px;height:${Math.max(h, 210) + 6}px;border:1px solid #ccc`;
      box.appendChild(frame);
      lab.addFrame(frame);
    }

    // Main-thread long tasks (> 50 ms) while training: the page must stay responsive.
    const longTasks = [];
    let watching = false;
    const observer = new PerformanceObserver((list) => {
      if (!watching) return;
      for (const e of list.getEntries()) longTasks.push({ ms: e.duration, at: e.startTime, what: (e.attribution || []).map((a) => `${a.containerType || ''}:${a.containerSrc || a.containerName || a.name}`).join(' ') });
    });
    observer.observe({ type: 'longtask' });
    // Long animation frames say which scripts ran in them (and how long layout took): the why.
    const frames = [];
    const loaf = new PerformanceObserver((list) => {
      if (!watching) return;
      for (const e of list.getEntries()) {
        if (e.duration < 50) continue;
        const scripts = (e.scripts || []).filter((x) => x.duration >= 5).sort((a, b) => b.duration - a.duration).slice(0, 3)
          .map((x) => `${x.invoker || x.invokerType} ${x.sourceFunctionName || ''}@${(x.sourceURL || '').split('/').pop()} ${x.duration.toFixed(0)}ms (layout ${x.forcedStyleAndLayoutDuration.toFixed(0)})`);
        frames.push({ ms: e.duration, blocking: e.blockingDuration, render: e.renderStart ? e.startTime + e.duration - e.renderStart : 0, scripts: scripts.join('; ') });
      }
    });
    try { loaf.observe({ type: 'long-animation-frame' }); } catch { /* older browsers */ }

    // The page's side of each environment call, and when the first page load (a reset that
    // loads the task into its iframe) ended: a long task then is the page's own start-up.
    const serveEnv = lab.serveEnv;
    const envCalls = { reset: [], step: [] };
    let firstLoadEnd = null;
    // The held-out episodes one by one (seed, goal, success), read off the same calls: the
    // learner reports counts, and a task with goals of several kinds (email-inbox: reply, forward,
    // delete, star) needs the count per kind. Held-out seeds are those from HELD_OUT_SEEDS
    // (src/dom_q_net/train.rs) on, which training never draws; an episode ends at its page's
    // `done` or, cut by the lab's step limit, at the next reset; success is a raw reward > 0
    // (env::is_success), and the report checks its sum against the learner's count.
    const HELD_OUT_SEEDS = 1e9;
    const heldOut = [], open = new Map();
    const close = (frame) => { const ep = open.get(frame); if (ep) heldOut.push(ep); open.delete(frame); };
    lab.serveEnv = function (req) {
      const t = performance.now();
      const p = serveEnv.call(this, req);
      p.then((reply) => {
        const ms = performance.now() - t;
        envCalls[req.op]?.push(ms);
        if (firstLoadEnd === null && req.op === 'reset') firstLoadEnd = performance.now();
        if (req.op === 'reset') {
          close(req.task);
          if (req.seed >= HELD_OUT_SEEDS && reply?.observation) {
            open.set(req.task, { task: o.tasks[req.task - frameOffset], seed: req.seed, goal: reply.observation.instruction.utterance, success: false });
          }
        } else if (reply?.step?.done && open.has(req.task)) {
          open.get(req.task).success = reply.step.raw_reward > 0;
          close(req.task);
        }
      });
      return p;
    };
    const session = new TrainingSession(lab, { frameOffset });
    const request = {
      // `miniwob/<name>` is the real MiniWoB++ page (src/env/miniwob.rs), any other name the lab's.
      tasks: o.tasks.map((name) => (name.startsWith('miniwob/')
        ? { source: 'external', base_url: 'miniwob/html/miniwob/', name: name.slice('miniwob/'.length) }
        : { source: 'builtin', name })),
      frames: o.frames, seed: o.seed ?? 1, backend: o.backend || 'cpu', config: o.config || {},
      snapshot_every_s: o.snapshotEveryS ?? 10, snapshot_replay: o.snapshotReplay ?? 2000,
      eval_episodes: o.evalEpisodes || 0, checkpoint_half: Boolean(o.checkpointHalf), checkpoint_at_end: Boolean(o.checkpoint),
    };
    const t0 = performance.now();
    let backend = null, reason = null, last = null, stopAt = null, stopping = false, lastLog = 0;
    let checkpoint = null, snapshot = null, evaluation = [];
    // Step-weighted sums over the run, for mean latencies.
    const sums = { steps: 0, act: 0, env: 0, updates: 0, upd: 0 };
    let prevSteps = 0, prevUpdates = 0;
    const solvedSeen = {};

    const done = await new Promise((resolve) => {
      session.addEventListener('backend', (e) => { backend = e.detail.name; reason = e.detail.reason; watching = true; window.weblabDqnLog(`  backend: ${backend} (${reason})`); });
      session.addEventListener('status', (e) => window.weblabDqnLog(`  ${e.detail.text}`));
      session.addEventListener('checkpoint', (e) => { checkpoint = e.detail.bytes; });
      session.addEventListener('snapshot', (e) => {
        const m = e.detail;
        snapshot = m.bytes;
        if (o.keepSnapshots) {
          window.weblabDqnSnapshot({
            schema: m.schema, env_steps: m.env_steps, updates: m.updates, state: m.state, active_s: last?.active_s ?? 0,
            bytes: toB64(m.bytes), optimizer: m.optimizer ? toB64(m.optimizer) : null,
          });
        }
      });
      session.addEventListener('evaluation', (e) => {
        const d = e.detail;
        evaluation.push(d);
        const why = (d.failures || []).map((f) => `seed ${f.seed}: ${f.steps} steps, ${f.reason || `reward ${f.raw_reward}`}`).join('; ');
        window.weblabDqnLog(`  greedy ${d.task}: ${d.successes}/${d.episodes}, ${Number(d.mean_steps).toFixed(1)} steps per episode${why ? ` (failures: ${why})` : ''}`);
      });
      session.addEventListener('progress', (e) => {
        const p = e.detail;
        last = p;
        const ds = p.env_steps - prevSteps, du = p.updates - prevUpdates;
        if (ds > 0 && p.act_ms != null) { sums.steps += ds; sums.act += ds * p.act_ms; sums.env += ds * (p.env_ms || 0); }
        if (du > 0 && p.update_ms != null) { sums.updates += du; sums.upd += du * p.update_ms; }
        prevSteps = p.env_steps; prevUpdates = p.updates;
        for (const t of p.tasks) {
          if (t.solved_at_frames != null && !solvedSeen[t.task]) {
            solvedSeen[t.task] = true;
            window.weblabDqnLog(`  ${t.task} solved: 90% of the last 100 episodes at ${t.solved_at_frames} of its steps (${t.solved_at_total} in all), ${(t.solved_at_ms / 1000).toFixed(1)} s`);
          }
        }
        const now = performance.now();
        if (o.logEveryS && now - lastLog > o.logEveryS * 1000) {
          lastLog = now;
          const rates = p.tasks.map((t) => `${t.task} ${t.stats.episodes ? (100 * t.stats.success_rate_100).toFixed(0) + '%' : '-'}`).join(' ');
          window.weblabDqnLog(`  ${p.env_steps} steps, ${p.updates} updates, ${p.steps_per_s?.toFixed(1) ?? "-"} steps/s, loss ${p.loss?.toFixed(4) ?? '-'}, replay ${p.replay_len} (+${(100 * p.positive_fraction).toFixed(0)}%) | ${rates}`);
        }
        // A wall-clock cap on training (pauses excluded): what is unsolved by then stays unsolved.
        if (o.stopAfterS && !stopping && (p.active_s ?? 0) >= o.stopAfterS) {
          stopping = true;
          window.weblabDqnLog(`  stopped at the cap: ${o.stopAfterS / 60} min of training, ${p.env_steps} steps`);
          session.stop();
        }
        if (o.stopWhenSolved && !stopping) {
          if (stopAt === null && p.tasks.every((t) => t.solved_at_frames != null)) stopAt = p.env_steps + (o.afterSolved || 0);
          if (stopAt !== null && p.env_steps >= stopAt) {
            stopping = true;
            session.stop();
          }
        }
      });
      session.addEventListener('done', (e) => resolve(e.detail));
      session.addEventListener('error', (e) => resolve({ error: e.detail.message }));
      if (o.resume) {
        const r = o.resume;
        window.weblabDqnLog(`  resuming from the snapshot at step ${r.env_steps} (${r.updates} updates)`);
        session.start(request, fromB64(r.bytes), r.state, r.optimizer ? fromB64(r.optimizer) : undefined);
      } else {
        session.start(request);
      }
    });
    watching = false;
    observer.disconnect();
    loaf.disconnect();
    lab.serveEnv = serveEnv;
    for (const frame of [...open.keys()]) close(frame);
    const pct = (v, q) => (v.length ? v.slice().sort((a, b) => a - b)[Math.min(v.length - 1, Math.floor(q * v.length))] : null);
    box.remove();
    const bytes = checkpoint || snapshot;
    const b64 = o.checkpoint && bytes ? toB64(bytes) : null;
    return {
      error: done.error || null,
      backend, reason,
      wall_s: (performance.now() - t0) / 1000,
      env_steps: done.env_steps ?? last?.env_steps ?? 0,
      updates: done.updates ?? last?.updates ?? 0,
      active_s: done.active_s ?? last?.active_s ?? 0,
      tasks: done.tasks || last?.tasks || [],
      evaluation: done.evaluation || evaluation,
      held_out: heldOut,
      act_ms: sums.steps ? sums.act / sums.steps : null,
      env_ms: sums.steps ? sums.env / sums.steps : null,
      update_ms: sums.updates ? sums.upd / sums.updates : null,
      steps_per_s: last?.steps_per_s ?? null,
      updates_per_s: last?.updates_per_s ?? null,
      long_tasks: {
        count: longTasks.length,
        worst_ms: longTasks.reduce((m, t) => Math.max(m, t.ms), 0),
        // Those after the task page's first load.
        after_load: longTasks.filter((t) => firstLoadEnd !== null && t.at > firstLoadEnd).length,
        worst_after_load_ms: longTasks.filter((t) => firstLoadEnd !== null && t.at > firstLoadEnd).reduce((m, t) => Math.max(m, t.ms), 0),
        worst: longTasks.sort((a, b) => b.ms - a.ms).slice(0, 5).map((t) => ({ ...t, first_load: firstLoadEnd === null || t.at <= firstLoadEnd })),
      },
      env_call_ms: { step_p50: pct(envCalls.step, 0.5), step_p99: pct(envCalls.step, 0.99), step_max: pct(envCalls.step, 1), reset_p50: pct(envCalls.reset, 0.5), reset_max: pct(envCalls.reset, 1) },
      long_frames: frames.sort((a, b) => b.ms - a.ms).slice(0, 8),
      checkpoint_b64: b64,
    };
  }, { ...opts, keepSnapshots: Boolean(onSnapshot) });
}

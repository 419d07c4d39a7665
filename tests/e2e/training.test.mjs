// End-to-end: DOM-Q-Net training in the built app (dist/) through www/training.js, on the CPU, on
// click-test: the backend is announced with a reason, progress arrives with growing step counts
// and updates, and pause, single step, checkpoint, resume and stop do what they say.
// Run by scripts/test.sh after `trunk build`: node --test tests/e2e/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openLab } from './dqn.mjs';
import { servedApp } from './fixture.mjs';

const WAIT = { timeout: 300_000, polling: 100 };

const app = servedApp();

test('a CPU training run on click-test reports progress and obeys pause, step, checkpoint and stop', { timeout: 900_000 }, async () => {
  const { page, errors } = await openLab(app.context, app.server.url);
  await page.evaluate(async () => {
    const { TrainingSession } = await import('/www/training.js');
    const frame = document.createElement('iframe');
    frame.style.cssText = 'width:332px;height:216px';
    document.body.appendChild(frame);
    const frameOffset = window.lab.addFrame(frame);
    const session = new TrainingSession(window.lab, { frameOffset });
    const t = { session, events: [] };
    for (const kind of ['backend', 'status', 'progress', 'checkpoint', 'snapshot', 'done', 'error']) {
      session.addEventListener(kind, (e) => {
        const d = e.detail;
        t.events.push(kind === 'checkpoint' ? { kind, updates: d.updates, env_steps: d.env_steps, length: d.bytes.length, magic: String.fromCharCode(...d.bytes.subarray(0, 8)) } : { ...d, kind, bytes: undefined });
      });
    }
    window.__training = t;
    // A small batch so that updates begin after a few dozen steps; the budget is never reached.
    session.start({ tasks: [{ source: 'builtin', name: 'click-test' }], frames: 1_000_000, seed: 3, backend: 'cpu', config: { batch_size: 16 }, progress_ms: 100 });
  });
  const events = (kind) => page.evaluate((k) => window.__training.events.filter((e) => e.kind === k), kind);
  const lastProgress = async () => (await events('progress')).at(-1);

  // The backend, with its reason.
  await page.waitForFunction(() => window.__training.events.some((e) => e.kind === 'backend' || e.kind === 'error'), null, WAIT);
  assert.deepEqual(await events('error'), []);
  const [backend] = await events('backend');
  assert.equal(backend.name, 'cpu');
  assert.ok(backend.reason.length > 0, 'the backend comes with a reason');

  // Progress: env steps grow, updates begin; the charts' fields are there.
  await page.waitForFunction(() => window.__training.events.some((e) => e.kind === 'progress' && e.updates > 0), null, WAIT);
  const progress = await events('progress');
  const steps = progress.map((p) => p.env_steps);
  assert.ok(progress.length >= 2, 'several progress messages');
  for (let i = 1; i < steps.length; i++) assert.ok(steps[i] >= steps[i - 1], `env steps never go back: ${steps}`);
  assert.ok(steps.at(-1) > steps[0], `env steps grow: ${steps}`);
  const p = progress.at(-1);
  assert.equal(p.backend, 'cpu');
  assert.equal(p.frames, 1_000_000);
  assert.equal(p.tasks.length, 1);
  assert.equal(p.tasks[0].task, 'click-test');
  assert.ok(p.tasks[0].stats.episodes > 0 && typeof p.tasks[0].stats.success_rate_100 === 'number');
  assert.ok(p.replay_len > 0 && p.replay_capacity === 15_000, 'replay fill (Table 3 single-task buffer)');
  assert.equal(typeof p.positive_fraction, 'number');
  assert.ok(progress.some((q) => typeof q.loss === 'number' && Number.isFinite(q.loss)), 'TD loss reported');
  assert.ok(progress.some((q) => q.new_episodes.length > 0 && typeof q.new_episodes[0].raw_reward === 'number'), 'episode rewards reported');
  assert.ok(p.steps_per_s > 0 && p.updates_per_s > 0, 'rates reported');
  assert.equal(p.paused, false);

  // Pause: a progress message says so, and the step count then stays put.
  await page.evaluate(() => window.__training.session.pause(true));
  await page.waitForFunction(() => window.__training.events.some((e) => e.kind === 'progress' && e.paused), null, WAIT);
  const pausedAt = (await lastProgress()).env_steps;
  await page.waitForTimeout(1500);
  assert.equal((await lastProgress()).env_steps, pausedAt, 'no steps while paused');

  // Single steps: exactly one environment step (and its update) each, still paused.
  for (let k = 1; k <= 3; k++) {
    const updatesBefore = (await lastProgress()).updates;
    await page.evaluate(() => window.__training.session.step());
    await page.waitForFunction((n) => window.__training.events.some((e) => e.kind === 'progress' && e.env_steps === n), pausedAt + k, WAIT);
    const q = await lastProgress();
    assert.equal(q.env_steps, pausedAt + k, 'one step');
    assert.equal(q.updates, updatesBefore + 1, 'and its update');
    assert.equal(q.paused, true, 'still paused');
  }
  await page.waitForTimeout(500);
  assert.equal((await lastProgress()).env_steps, pausedAt + 3, 'nothing after the single steps');

  // A checkpoint while paused: the model file, non-empty, at the paused step.
  await page.evaluate(() => window.__training.session.requestCheckpoint());
  await page.waitForFunction(() => window.__training.events.some((e) => e.kind === 'checkpoint'), null, WAIT);
  const [ckpt] = await events('checkpoint');
  assert.ok(ckpt.length > 1000, `checkpoint of ${ckpt.length} bytes`);
  assert.equal(ckpt.magic, 'WEBLABQN');
  assert.equal(ckpt.env_steps, pausedAt + 3);

  // Resume, then stop: training goes on, then ends with 'done'.
  await page.evaluate(() => window.__training.session.pause(false));
  await page.waitForFunction((n) => window.__training.events.some((e) => e.kind === 'progress' && e.env_steps > n && !e.paused), pausedAt + 3, WAIT);
  await page.evaluate(() => window.__training.session.stop());
  await page.waitForFunction(() => window.__training.events.some((e) => e.kind === 'done' || e.kind === 'error'), null, WAIT);
  assert.deepEqual(await events('error'), []);
  const [done] = await events('done');
  assert.ok(done.env_steps > pausedAt + 3 && done.updates > 0);
  assert.equal(await page.evaluate(() => window.__training.session.running), false);
  const learnerErrors = errors.filter((e) => /learner|worker|wasm|panicked/i.test(e));
  assert.deepEqual(learnerErrors, [], 'no errors from the learner');
});

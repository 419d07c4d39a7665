// End-to-end: environment failures in training runs (www/training.js against the built app, on
// the CPU). A foreign MiniWoB-style page that sometimes navigates away ends those episodes with
// the reason and DOM-Q-Net's run goes on; a page that always leaves stops the run after five
// failing episodes in a row, with the reason. The navigator's run likewise goes on past a busy
// page and stops when the page is busy on every step.
// Run by scripts/test.sh after `trunk build`: node --test tests/e2e/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openLab } from './dqn.mjs';
import { servedApp } from './fixture.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const BASE = '/miniwob-style/';
const WAIT = { timeout: 300_000, polling: 100 };
const app = servedApp({ serveOptions: { mounts: { [BASE]: join(here, '..', 'fixtures', 'miniwob-style') } } });

// Starts a session on a task page of its own; every environment reply passes through
// `window.__inject(request, reply)` first, so a test can make the page fail on cue.
async function startSession(page, request) {
  await page.evaluate(async (req) => {
    const { TrainingSession } = await import('/www/training.js');
    const lab = window.lab;
    // The fixtures' folder, as a person would type it (links, files and stored runs name
    // only MiniWoB++'s folders).
    lab.allowFolder('/miniwob-style/');
    const frame = document.createElement('iframe');
    frame.style.cssText = 'width:660px;height:660px';
    document.body.appendChild(frame);
    const frameOffset = lab.addFrame(frame);
    const real = lab.serveEnv.bind(lab);
    window.__inject = (r, reply) => reply;
    lab.serveEnv = async (r) => window.__inject(r, await real(r));
    const session = new TrainingSession(lab, { frameOffset });
    const t = { session, events: [] };
    for (const kind of ['backend', 'status', 'progress', 'snapshot', 'done', 'error']) {
      session.addEventListener(kind, (e) => t.events.push({ ...e.detail, kind, bytes: undefined, state: undefined }));
    }
    window.__training = t;
    session.start(req);
  }, request);
}

const events = (page, kind) => page.evaluate((k) => window.__training.events.filter((e) => e.kind === k), kind);
const ended = (page) => page.waitForFunction(() => window.__training.events.some((e) => e.kind === 'done' || e.kind === 'error'), null, WAIT);
const panics = (errors) => errors.filter((e) => /panicked|unreachable|RuntimeError/i.test(e));

test('DOM-Q-Net: a foreign page that navigates away ends those episodes; the run goes on', { timeout: 600_000 }, async () => {
  const { page, errors } = await openLab(app.context, app.server.url);
  await startSession(page, {
    tasks: [{ source: 'external', base_url: BASE, name: 'leaves-page' }], frames: 1_000_000, seed: 5, backend: 'cpu',
    config: { batch_size: 16 }, progress_ms: 100, snapshot_every_s: 0,
  });
  // Every third episode the page leaves: several failures, never five in a row.
  await page.waitForFunction(() => (window.__training.events.filter((e) => e.kind === 'progress').at(-1)?.env_failures_total ?? 0) >= 3 ||
    window.__training.events.some((e) => e.kind === 'error'), null, WAIT);
  assert.deepEqual(await events(page, 'error'), []);
  const progress = await events(page, 'progress');
  const notes = progress.flatMap((p) => p.env_failures);
  assert.ok(notes.length >= 3, JSON.stringify(notes));
  for (const n of notes) {
    assert.equal(n.task, 0);
    assert.match(n.reason, /^the task page navigated away to http:\/\/127\.0\.0\.1:\d+\/miniwob-style\/elsewhere\.html$/);
    assert.equal(n.in_a_row, 1, 'an episode the page ended came between');
  }
  // Episodes the page ended are counted as usual beside them, and the run goes on.
  const last = progress.at(-1);
  assert.ok(last.tasks[0].stats.episodes >= 4, `episodes: ${last.tasks[0].stats.episodes}`);
  await page.waitForFunction((n) => window.__training.events.some((e) => e.kind === 'progress' && e.env_steps > n), last.env_steps + 5, WAIT);
  await page.evaluate(() => window.__training.session.stop());
  await ended(page);
  assert.deepEqual(await events(page, 'error'), []);
  assert.equal((await events(page, 'done')).length, 1);
  assert.deepEqual(panics(errors), []);
});

test('DOM-Q-Net: a page that always leaves stops the run after five failing episodes, with the reason', { timeout: 600_000 }, async () => {
  const { page, errors } = await openLab(app.context, app.server.url);
  await startSession(page, {
    tasks: [{ source: 'external', base_url: BASE, name: 'always-leaves' }], frames: 1_000_000, seed: 5, backend: 'cpu',
    config: { batch_size: 16 }, progress_ms: 100, snapshot_every_s: 0,
  });
  await ended(page);
  const [error] = await events(page, 'error');
  assert.ok(error, 'the run stopped');
  assert.match(error.message, /^5 episodes of always-leaves in a row were ended by the page failing, the last by: the task page navigated away to http:\/\/127\.0\.0\.1:\d+\/miniwob-style\/elsewhere\.html\. Training stopped at update \d+; the run's last snapshot is kept$/);
  const notes = (await events(page, 'progress')).flatMap((p) => p.env_failures);
  assert.deepEqual(notes.map((n) => n.in_a_row), [1, 2, 3, 4], 'the first four were reported as the run went on');
  assert.deepEqual(panics(errors), []);
});

test('the navigator: a busy page ends that episode and the run goes on; a page busy on every step stops it', { timeout: 600_000 }, async () => {
  const { page, errors } = await openLab(app.context, app.server.url);
  const design = await page.evaluate(() => window.lab.constructor.testSiteDesign('login', 0));
  // The 5th step request is answered "busy", as when another call holds the page.
  await page.evaluate(() => { window.__steps = 0; });
  await startSession(page, {
    agent: 'navigator', generator: { kind: 'site', name: 'login-0', design }, frames: 1_000_000, seed: 2, backend: 'cpu',
    progress_ms: 100, snapshot_every_s: 0, judge_seeds: 0,
  });
  await page.evaluate(() => {
    window.__inject = (r, reply) => (r.op === 'step' && ++window.__steps === 5 ? { error: 'busy' } : reply);
  });
  await page.waitForFunction(() => window.__training.events.some((e) => e.kind === 'error' ||
    (e.kind === 'progress' && e.env_failures_total === 1 && e.iterations >= 3)), null, WAIT);
  assert.deepEqual(await events(page, 'error'), []);
  const notes = (await events(page, 'progress')).flatMap((p) => p.env_failures);
  assert.deepEqual(notes, [{ task: 0, reason: 'the environment is busy with another request', in_a_row: 1 }]);

  // Busy on every step from now on: five failing episodes in a row stop the run.
  await page.evaluate(() => { window.__inject = (r, reply) => (r.op === 'step' ? { error: 'busy' } : reply); });
  await ended(page);
  const [error] = await events(page, 'error');
  assert.ok(error, 'the run stopped');
  assert.match(error.message, /^5 episodes of site login-0 in a row were ended by the page failing, the last by: the environment is busy with another request\. Training stopped at iteration \d+/);
  assert.deepEqual(panics(errors), []);
});

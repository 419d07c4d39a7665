// End-to-end: the Train view's saved run in IndexedDB, read back as data it did not write. A
// record of another format version is refused with a message and left where it is; a damaged
// snapshot (truncated checkpoint, wrong lengths, ids out of range, NaN moments) gives a message,
// never a panic, and the app stays usable; a run reloaded while paused shows its restored counters
// before it takes a step; a write over the storage quota leaves the run going
// and the previous snapshot in place; a run whose tab crashed twice in a row waits for the
// Resume button instead of restarting; a second tab neither resumes a run live in the first
// nor starts one over it (one writer per run).
// Run by scripts/test.sh after `trunk build`: node --test tests/e2e/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { messageMatching, openApp, text, withBrowser } from './browser.mjs';
import { servedApp } from './fixture.mjs';

const shots = join(dirname(fileURLToPath(import.meta.url)), 'artifacts');
mkdirSync(shots, { recursive: true });

const WAIT = { timeout: 120_000, polling: 100 };
const app = servedApp({ browser: false });

const steps = (page) => page.evaluate(() => Number(document.getElementById('tr-steps').textContent.replace(/,/g, '')));

// The stored record, through the app's own store.
const loadRun = (page) => page.evaluate(async () => (await import('/www/store.js')).load('run'));
const saveRun = (page, record) => page.evaluate(async (r) => (await import('/www/store.js')).save('run', r), record);

// Starts a CPU run on click-test in the Train view and waits for its first save with Adam's
// moments (learning has begun); returns the saved step.
async function startAndSave(page) {
  await page.$$eval('#train-tasks input', (boxes) => boxes.forEach((b) => { b.checked = b.value === 'click-test'; }));
  await page.fill('#train-frames', '1000000');
  await page.selectOption('#train-backend', 'cpu');
  await page.click('#train-start');
  await page.waitForFunction(() => /at step [\d,]+ \(network, Adam's moments/.test(document.getElementById('model-note').textContent), null, WAIT);
  return Number((await text(page, '#model-note')).match(/at step ([\d,]+)/)[1].replace(/,/g, ''));
}

const panics = (errors) => errors.filter((e) => /panicked|unreachable|RuntimeError/i.test(e));

test('a saved run of another format version is refused with a message and kept', async () => {
  await withBrowser(async (context) => {
    const { page, errors } = await openApp(context, `${app.server.url}#/train`);
    const record = {
      request: { tasks: [{ source: 'builtin', name: 'click-test' }], config: {}, frames: 1000, seed: 1, backend: 'cpu' },
      status: 'running', env_steps: 120, updates: 40, bytes: new Uint8Array([1, 2, 3]), state: '{}', charts: {},
    };
    for (const [schema, why] of [[undefined, /written by an older version of the lab \(no format version; this lab reads format 1\)/],
      [99, /written by a newer version of the lab \(format 99; this lab reads format 1\)/]]) {
      await saveRun(page, { ...record, schema });
      await page.reload();
      await page.waitForFunction(() => document.body.dataset.ready === 'true', null, WAIT);
      await messageMatching(page, why, WAIT.timeout);
      assert.match(await text(page, '#message-text'), /It stays saved in this browser; Start begins a new run, which replaces it\.$/);
      assert.equal(await text(page, '#train-status'), 'The saved run was not resumed.');
      assert.equal(await page.isDisabled('#train-start'), false, 'the app stays usable');
      assert.equal(await page.isDisabled('#train-stop'), true, 'nothing was started');
      const kept = await loadRun(page);
      assert.equal(kept.schema, schema, 'the record is left as it was');
      assert.equal(kept.status, 'running');
      assert.equal(kept.env_steps, 120);
    }
    assert.deepEqual(panics(errors), []);
  });
});

test('a damaged snapshot gives a message, never a panic, and the app stays usable', { timeout: 600_000 }, async () => {
  await withBrowser(async (context) => {
    const { page, errors } = await openApp(context, `${app.server.url}#/train`);
    await startAndSave(page);
    await page.click('#train-stop');
    await page.waitForFunction(() => !document.getElementById('train-start').disabled, null, WAIT);
    const good = await loadRun(page);
    assert.equal(good.schema, 1);
    const state = JSON.parse(good.state);
    assert.ok(state.replay.length > 0 && good.optimizer, 'the snapshot holds replay and Adam\'s moments');

    const edit = (fn) => { const s = JSON.parse(good.state); fn(s); return JSON.stringify(s); };
    const nanMoments = new Uint8Array(good.optimizer);
    new DataView(nanMoments.buffer).setFloat32(24, NaN, true); // the first parameter's first moment
    const cases = [
      ['truncated checkpoint', { bytes: good.bytes.slice(0, Math.floor(good.bytes.length / 2)) }, /could not be resumed: .*(ends too early|truncated|damaged)/],
      ['truncated state', { state: good.state.slice(0, good.state.length - 20) }, /could not be resumed: the saved run is damaged: /],
      ['wrong lengths', { state: edit((s) => { s.trainer.progress = []; }) }, /could not be resumed: the saved run is damaged: 1 tasks with 0 progress entries and 1 episode counts/],
      ['a tag id past its table', { state: edit((s) => { s.replay[0].state.tags[0] = 60000; }) },
        /could not be resumed: the saved run is damaged: saved transition 0: its state has tag 0 = 60000, outside its table of 100/],
      ['a leaf past its state', { state: edit((s) => { s.replay.at(-1).state.leaves[0] = 999; }) },
        new RegExp(`saved transition ${state.replay.length - 1}: its state has leaf 0 = node 999, not one of its \\d+ nodes`)],
      ['an action past its leaves', { state: edit((s) => { s.replay[1].action.leaf = 500; }) }, /saved transition 1: its action names leaf 500 of a state with \d+/],
    ];
    for (const [name, change, want] of cases) {
      await saveRun(page, { ...good, ...change, status: 'running' });
      await page.reload();
      await page.waitForFunction(() => document.body.dataset.ready === 'true', null, WAIT);
      await messageMatching(page, want, WAIT.timeout);
      assert.match(await text(page, '#message-text'), /It stays in this browser; Start begins a new run\.$/, name);
      await page.waitForFunction(() => !document.getElementById('train-start').disabled, null, WAIT);
      assert.equal(await page.isDisabled('#train-stop'), true, `${name}: nothing runs`);
      assert.ok(await loadRun(page), `${name}: the record is still there`);
    }

    // NaN in Adam's moments: the run resumes with fresh moments, and says so.
    await saveRun(page, { ...good, optimizer: nanMoments, status: 'running' });
    await page.reload();
    await page.waitForFunction(() => document.body.dataset.ready === 'true', null, WAIT);
    await messageMatching(page, /^Resumed with fresh Adam moments: the saved optimizer state is damaged: a moment is not a finite number/, WAIT.timeout);
    await page.waitForFunction((n) => Number(document.getElementById('tr-steps').textContent.replace(/,/g, '')) > n, good.env_steps, WAIT);

    // Paused, then reloaded: the run resumes paused and shows its restored episodes and success
    // rate at once, before it takes a step (not "Resuming…" until the person resumes it).
    await page.click('#train-pause');
    await page.waitForFunction(async () => (await (await import('/www/store.js')).load('run'))?.status === 'paused', null, WAIT);
    await page.reload();
    await page.waitForFunction(() => document.body.dataset.ready === 'true', null, WAIT);
    await page.waitForFunction(() => /^Paused · [\d,]+ episodes · click-test (\d+%|–)/.test(document.getElementById('train-status').textContent), null, WAIT);
    const resumedPaused = await loadRun(page);
    assert.equal(await steps(page), resumedPaused.env_steps, 'paused: not a step taken since the snapshot');
    assert.ok(Number((await text(page, '#train-status')).match(/^Paused · ([\d,]+) episodes/)[1].replace(/,/g, '')) > 0, 'the restored episodes show');
    assert.equal(await text(page, '#train-pause'), 'Resume');
    await page.click('#train-pause');
    await page.waitForFunction((n) => Number(document.getElementById('tr-steps').textContent.replace(/,/g, '')) > n, resumedPaused.env_steps, WAIT);
    await page.click('#train-stop');
    await page.waitForFunction(() => !document.getElementById('train-start').disabled, null, WAIT);

    // And a new run starts as usual after all that.
    const saved = await startAndSave(page);
    assert.ok(saved > 0);
    assert.deepEqual(panics(errors), []);
  });
});

test('a snapshot over the storage quota is not saved; training goes on and the previous snapshot stays', { timeout: 600_000 }, async () => {
  await withBrowser(async (context) => {
    const { page, errors } = await openApp(context, `${app.server.url}#/train`);
    const first = await startAndSave(page);
    // The browser's quota for this origin, far below a snapshot's size.
    const cdp = await context.newCDPSession(page);
    await cdp.send('Storage.overrideQuotaForOrigin', { origin: new URL(app.server.url).origin, quotaSize: 1024 });
    await messageMatching(page, /^Training goes on, but its snapshot at step [\d,]+ was not saved in this browser: the browser's storage for this site is full \(QuotaExceededError\)\. The previous snapshot, at step [\d,]+, stays/, WAIT.timeout);
    const message = await text(page, '#message-text');
    const previous = Number(message.match(/previous snapshot, at step ([\d,]+)/)[1].replace(/,/g, ''));
    assert.ok(previous >= first);
    // The run goes on ...
    const now = await steps(page);
    await page.waitForFunction((n) => Number(document.getElementById('tr-steps').textContent.replace(/,/g, '')) > n, now, WAIT);
    assert.equal(await page.isDisabled('#train-stop'), false, 'still training');
    // ... and the stored snapshot is the previous one, whole.
    const kept = await loadRun(page);
    assert.equal(kept.env_steps, previous);
    assert.ok(kept.bytes.length > 1000 && JSON.parse(kept.state).trainer.tasks.length === 1);
    await cdp.send('Storage.overrideQuotaForOrigin', { origin: new URL(app.server.url).origin });
    await page.click('#train-stop');
    await page.waitForFunction(() => !document.getElementById('train-start').disabled, null, WAIT);
    assert.deepEqual(panics(errors), []);
  });
});

test('a run whose tab crashed twice in a row waits for the Resume button', { timeout: 600_000 }, async () => {
  await withBrowser(async (context) => {
    let { page } = await openApp(context, `${app.server.url}#/train`);
    const saved = await startAndSave(page);
    const crash = async (p) => {
      const cdp = await context.newCDPSession(p);
      const crashed = new Promise((resolve) => p.once('crash', resolve));
      cdp.send('Page.crash').catch(() => {}); // never answered: the renderer is gone
      await crashed;
      await p.close().catch(() => {});
    };

    // The first crash: the next start resumes the run, as a reload does.
    await crash(page);
    ({ page } = await openApp(context, `${app.server.url}#/train`, await context.newPage()));
    await messageMatching(page, /^Resumed the training run saved at step [\d,]+, after the tab closed unexpectedly\./, WAIT.timeout);
    await page.waitForFunction((n) => Number(document.getElementById('tr-steps').textContent.replace(/,/g, '')) > n, saved, WAIT);

    // The second in a row: the run is not restarted; a button offers it.
    await crash(page);
    ({ page } = await openApp(context, `${app.server.url}#/train`, await context.newPage()));
    await messageMatching(page, /^The tab closed unexpectedly 2 times in a row while this run was training, so it was not restarted\. Its snapshot at step [\d,]+ is kept: press "Resume the saved run"/, WAIT.timeout);
    assert.equal(await page.isVisible('#train-resume'), true);
    await page.screenshot({ path: join(shots, 'train-crash-held.png') });
    assert.equal(await page.isDisabled('#train-stop'), true, 'nothing runs');
    const held = await steps(page);
    await page.waitForTimeout(2000);
    assert.equal(await steps(page), held, 'no steps without the button');

    // A reload in this state does not restart it either.
    await page.reload();
    await page.waitForFunction(() => document.body.dataset.ready === 'true', null, WAIT);
    await messageMatching(page, /closed unexpectedly 3 times in a row/, WAIT.timeout);
    assert.equal(await page.isDisabled('#train-stop'), true);

    // The button resumes it.
    await page.click('#train-resume');
    await page.waitForFunction((n) => Number(document.getElementById('tr-steps').textContent.replace(/,/g, '')) > n, held, WAIT);
    assert.equal(await page.isVisible('#train-resume'), false);

    // A clean exit (a reload) then resets the count: the next start resumes at once.
    await page.reload();
    await page.waitForFunction(() => document.body.dataset.ready === 'true', null, WAIT);
    await messageMatching(page, /^Resumed the training run saved at step [\d,]+\.$/, WAIT.timeout);
    await page.click('#train-stop');
    await page.waitForFunction(() => !document.getElementById('train-start').disabled, null, WAIT);
  });
});

test('a second tab leaves a run live in the first alone: it neither resumes it nor starts another over it', { timeout: 600_000 }, async () => {
  await withBrowser(async (context) => {
    const { page: first, errors } = await openApp(context, `${app.server.url}#/train`);
    await startAndSave(first);
    const { page: second, errors: errors2 } = await openApp(context, `${app.server.url}#/train`, await context.newPage());
    await messageMatching(second, /^The training run saved at step [\d,]+ is live in another tab of the lab, so it is not resumed here/, WAIT.timeout);
    assert.equal(await text(second, '#train-status'), 'Training in another tab.');
    assert.equal(await second.isDisabled('#train-stop'), true, 'nothing runs in the second tab');
    // Its Start is refused too: two learners would overwrite each other's run.
    await second.$$eval('#train-tasks input', (boxes) => boxes.forEach((b) => { b.checked = b.value === 'click-test'; }));
    await second.click('#train-start');
    await messageMatching(second, /^A training run is live in another tab of the lab/, WAIT.timeout);
    assert.equal(await second.isDisabled('#train-stop'), true);
    // The first tab goes on, and the stored run is its own.
    const now = await steps(first);
    await first.waitForFunction((n) => Number(document.getElementById('tr-steps').textContent.replace(/,/g, '')) > n, now, WAIT);
    await first.waitForFunction(async () => {
      const r = await (await import('/www/store.js')).load('run');
      return r && r.env_steps > 0;
    }, null, WAIT);
    // Once the first tab goes, the second says the run can be continued there.
    await first.close();
    await second.waitForFunction(() => /reload this tab to continue it here/.test(document.getElementById('train-status').textContent), null, WAIT);
    await second.reload();
    await second.waitForFunction(() => document.body.dataset.ready === 'true', null, WAIT);
    await messageMatching(second, /^Resumed the training run saved at step [\d,]+/, WAIT.timeout);
    await second.click('#train-stop');
    await second.waitForFunction(() => !document.getElementById('train-start').disabled, null, WAIT);
    assert.deepEqual(panics([...errors, ...errors2]), []);
  });
});

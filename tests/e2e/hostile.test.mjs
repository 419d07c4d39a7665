// End-to-end: what other people make (share links, files, the lab's own stored records) cannot
// point the task frame at another page of the origin, files too large to read are refused before
// a byte is read, and a panic in the lab's wasm is reported with a way back (issue #30).
// Run by scripts/test.sh after `trunk build`: node --test tests/e2e/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { messageMatching, openApp, text, withBrowser } from './browser.mjs';
import { servedApp } from './fixture.mjs';

const WAIT = 60_000;
const app = servedApp({ browser: false });
const link = (state) => `#s=${Buffer.from(JSON.stringify(state)).toString('base64url')}`;
// Frames showing something besides the lab's own task pages and generated sites.
const strayFrames = (page) => page.frames().map((f) => f.url()).filter((u) => !/^(about:|.*\/tasks\/[\w-]+\.html$|.*\/index\.html|.*\/#)/.test(u) && u !== app.server.url);

test('a link, a file or a stored run cannot point the task frame at another page of the origin', async () => {
  await withBrowser(async (context) => {
    // A link naming a folder outside MiniWoB++'s (here: the app itself) is refused.
    for (const [task, why] of [
      [{ source: 'external', base_url: '', name: 'index' }, /its folder "" is empty/],
      [{ source: 'external', base_url: 'miniwob/html/../../', name: 'index' }, /'\.\.' segment/],
      [{ source: 'external', base_url: 'tasks/', name: 'click-test' }, /its folder "tasks\/" is not one the lab opens from links, files or saved runs/],
      [{ source: 'external', base_url: 'miniwob/html/miniwob/', name: '../../index' }, /not a plain file name/],
    ]) {
      const { page } = await openApp(context, app.server.url + link({ v: 1, task, seed: 1 }), await context.newPage());
      await messageMatching(page, /this share link cannot be opened/, WAIT);
      assert.match(await text(page, '#message-text'), why);
      assert.deepEqual(strayFrames(page), []);
      await page.close();
    }

    // A stored run whose request carries a whole page is not resumed, and the page never renders.
    const { page, errors } = await openApp(context, `${app.server.url}#/train`, await context.newPage());
    await page.evaluate(async () => (await import('/www/store.js')).save('run', {
      schema: 1, status: 'running', env_steps: 100, updates: 10, bytes: new Uint8Array([1]), state: '{}', charts: {},
      request: { tasks: [{ source: 'inline', name: 'x', html: '<script>parent.__pwned = 1</script>' }], config: {}, frames: 1000, backend: 'cpu' },
    }));
    await page.reload();
    await messageMatching(page, /bad training request: task #1: the task cannot be opened: it carries a whole page/, WAIT);
    assert.match(await text(page, '#message-text'), /It stays saved in this browser; Start begins a new run, which replaces it\.$/);
    assert.equal(await text(page, '#train-status'), 'The saved run was not resumed.');
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
    assert.equal(await page.evaluate(() => [...document.querySelectorAll('iframe')].some((f) => f.hasAttribute('srcdoc') && /__pwned/.test(f.srcdoc))), false);

    // A demonstration file naming such a page is refused before the picker shows its task.
    await page.click('nav a[data-view="play"]');
    const dir = mkdtempSync(join(tmpdir(), 'weblab-hostile-'));
    const demo = join(dir, 'demo.json');
    writeFileSync(demo, JSON.stringify({ format: 1, task: { source: 'external', base_url: '/', name: 'index' }, seed: 1, data_mode: 'train', steps: [], reward: 0, raw_reward: 0, reason: null }));
    await page.setInputFiles('#rec-replay', demo);
    await messageMatching(page, /demo\.json was not replayed: the demonstration's task cannot be opened: its folder "\/" has an empty segment/, WAIT);
    assert.equal(await page.inputValue('#source'), 'builtin', 'the picker kept its task');
    assert.deepEqual(strayFrames(page), []);
    assert.deepEqual(errors.filter((e) => /panicked|RuntimeError/.test(e)), []);
  });
});

test('files larger than the lab reads are refused before a byte is read', async () => {
  await withBrowser(async (context) => {
    const { page } = await openApp(context, `${app.server.url}#/train`);
    const limits = await page.evaluate(() => window.wasmBindings.Lab.fileLimits());
    const dir = mkdtempSync(join(tmpdir(), 'weblab-large-'));
    // Sparse files half as large again as each limit (nothing is written to disk).
    const over = (name, limit) => {
      const p = join(dir, name);
      writeFileSync(p, '');
      truncateSync(p, Math.round(limit * 1.5));
      return p;
    };
    assert.deepEqual(limits, { checkpoint: 128e6, demo: 20e6, design: 20e3 });
    await page.setInputFiles('#import-ckpt', over('big.wlq', limits.checkpoint));
    await messageMatching(page, /^big\.wlq is 192 MB; a checkpoint is at most 128 MB\. The current model is unchanged\.$/, WAIT);

    await page.click('nav a[data-view="play"]');
    await page.setInputFiles('#rec-replay', over('big.json', limits.demo));
    await messageMatching(page, /^big\.json is 30 MB; a demonstration file is at most 20 MB: it was not read$/, WAIT);

    // (The WGE view's files: session.checkFileSize, tests/e2e/wge.test.mjs.)
    await page.click('nav a[data-view="design"]');
    await page.setInputFiles('#design-file', over('big.design.json', limits.design));
    await messageMatching(page, /^big\.design\.json is 30 kB; a design is at most 20 kB: it was not loaded\. The current design is unchanged\.$/, WAIT);

    // The navigator picker in the Watch view too.
    await page.click('nav a[data-view="watch"]');
    await page.selectOption('#policy', 'navigator').catch(() => {});
    await page.setInputFiles('#watch-nav-file', over('big.wln', limits.checkpoint));
    await messageMatching(page, /^big\.wln is 192 MB; a checkpoint is at most 128 MB: it was not loaded\. The current navigator stays\.$/, WAIT);
  });
});

test('a panic in the lab is reported and stays on screen, and a start after one holds stored runs back', async () => {
  await withBrowser(async (context) => {
    const { page } = await openApp(context, `${app.server.url}#/train`);
    // The hook the wasm's panic handler calls (report_panic in src/web/mod.rs).
    await page.evaluate(() => window.weblabPanicked('panicked at src/x.rs:1:2:\nindex out of bounds'));
    await messageMatching(page, /^The lab stopped on an internal error and must be reloaded \(what was saved in this browser comes back\): panicked at src\/x\.rs:1:2:/, WAIT);
    assert.equal(await page.isVisible('#message-reload'), true);
    await page.click('#message-close');
    assert.equal(await page.isVisible('#message'), true, 'it cannot be dismissed: the lab cannot go on');

    // A panic while the lab starts: the next start holds a stored run back for the Resume button.
    await page.evaluate(async () => (await import('/www/store.js')).save('run', {
      schema: 1, status: 'running', env_steps: 100, updates: 10, bytes: new Uint8Array([1]), state: '{}', charts: {},
      request: { tasks: [{ source: 'builtin', name: 'click-test' }], config: {}, frames: 1000, backend: 'cpu' },
    }));
    await page.evaluate(() => sessionStorage.setItem('weblab-panicked-while-starting', '1'));
    await page.click('#message-reload');
    await page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: WAIT });
    await messageMatching(page, /^The lab stopped on an internal error while it last started, so this run was not restarted\. Its snapshot at step 100 is kept: press "Resume the saved run"/, WAIT);
    assert.equal(await page.isVisible('#train-resume'), true);
    assert.equal(await page.isDisabled('#train-stop'), true, 'nothing runs');
    assert.equal(await page.isVisible('#message-reload'), false);
  });
});

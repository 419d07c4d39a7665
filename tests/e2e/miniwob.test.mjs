// End-to-end: the real MiniWoB++ benchmark in the app — the pages of the `miniwob` package that
// scripts/setup.sh fetched and the build serves at miniwob/html/ beside the app. The Tasks view
// lists them with their source; Watch runs the scripted oracle on a real page; Play & record
// records a person's episode on one; a share link names one; and without the package the app
// says how to get it and keeps working on its own tasks.
// Run by scripts/test.sh after `trunk build`: node --test tests/e2e/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DIST, serve } from './serve.mjs';
import { openApp, withBrowser } from './browser.mjs';
import { servedApp } from './fixture.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const shots = join(here, 'artifacts');
mkdirSync(shots, { recursive: true });

test('the build serves the MiniWoB++ pages (scripts/setup.sh fetched the miniwob package)', () => {
  assert.ok(existsSync(join(DIST, 'miniwob', 'html', 'miniwob', 'click-button.html')),
    'dist/miniwob/html/ is missing: run scripts/setup.sh (it fetches the miniwob package from PyPI), then trunk build');
});

const app = servedApp();

test('the Tasks view lists the 130 real MiniWoB++ tasks beside the lab\'s own, marked with their source', async () => {
  const { page, errors } = await openApp(app.context, app.server.url);
  if ((await page.textContent('#play')) === 'Pause') await page.click('#play');
  await page.click('nav a[data-view="tasks"]');
  await page.waitForSelector('#gallery-grid article');
  const cards = await page.$$eval('#gallery-grid article', (as) => as.map((a) => a.dataset.task));
  assert.equal(cards.filter((t) => t.startsWith('miniwob/')).length, 130);
  assert.equal(cards.filter((t) => !t.startsWith('miniwob/')).length, 36);
  assert.match(await page.textContent('#gallery-count'), /130 real MiniWoB\+\+ tasks: 79 click-type/);
  assert.equal(await page.isHidden('#gallery-miniwob-missing'), true);
  const card = page.locator('article[data-task="miniwob/drag-box"]');
  assert.match(await card.textContent(), /MiniWoB\+\+ 1\.1\.0/);
  assert.match(await card.textContent(), /Press, move and release the pointer/);
  await page.click('#gallery-filters button[data-filter="miniwob"]');
  assert.equal(await page.locator('#gallery-grid article').count(), 130);
  await page.screenshot({ path: join(shots, 'tasks-miniwob.png') });
  assert.deepEqual(errors, []);
});

test('Watch runs the scripted oracle on a real page, and its share link names the real task', async () => {
  const { page, errors } = await openApp(app.context, app.server.url);
  if ((await page.textContent('#play')) === 'Pause') await page.click('#play');
  await page.selectOption('#source', 'miniwob');
  await page.selectOption('#miniwob-task', 'click-button');
  await page.selectOption('#policy', 'oracle');
  // The lab's own click-button words its utterance the same way: wait for the real page's frame
  // first, or a busy machine sees the old page's utterance before the new one loads.
  await page.waitForFunction(() => /\/miniwob\/html\/miniwob\/click-button\.html$/.test(document.getElementById('task-frame').contentWindow.location.href));
  await page.waitForFunction(() => /Click on the/.test(document.getElementById('utterance').textContent));
  assert.ok(page.frames().some((f) => /\/miniwob\/html\/miniwob\/click-button\.html$/.test(f.url())));
  await page.click('#run');
  await page.waitForFunction(() => Number(document.getElementById('st-episodes').textContent) >= 10, null, { timeout: 60_000 });
  await page.click('#stop');
  await page.waitForFunction(() => document.getElementById('st-status').textContent === 'idle');
  assert.equal(await page.textContent('#st-success'), '100%');
  await page.screenshot({ path: join(shots, 'watch-miniwob.png') });
  // The link names the real page; opening it in a fresh page picks it again.
  await page.click('#share');
  const url = await page.inputValue('#share-url');
  const fresh = await app.context.newPage();
  await fresh.goto(url);
  await fresh.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 120_000 });
  assert.equal(await fresh.inputValue('#source'), 'miniwob');
  assert.equal(await fresh.inputValue('#miniwob-task'), 'click-button');
  await fresh.close();
  assert.deepEqual(errors, []);
});

test('Play & record records a person\'s episode on a real page', async () => {
  const { page, errors } = await openApp(app.context, app.server.url);
  if ((await page.textContent('#play')) === 'Pause') await page.click('#play');
  await page.click('nav a[data-view="tasks"]');
  await page.click('article[data-task="miniwob/click-test"] button:has-text("Play")');
  await page.waitForFunction(() => /Recording/.test(document.getElementById('rec-status').textContent));
  const frame = page.frame({ url: /\/miniwob\/html\/miniwob\/click-test\.html$/ });
  assert.ok(frame, 'the real click-test page is in the task frame');
  await frame.click('#subbtn');
  await page.waitForFunction(() => /reward/i.test(document.getElementById('episode-outcome').textContent));
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#rec-save')]);
  const demo = JSON.parse(readFileSync(await download.path(), 'utf8'));
  assert.deepEqual(demo.task, { source: 'external', base_url: 'miniwob/html/miniwob/', name: 'click-test' });
  assert.equal(demo.raw_reward, 1);
  assert.equal(demo.steps.length, 1);
  assert.deepEqual(errors, []);
});

test('without the MiniWoB++ pages the app says how to get them and works on its own tasks', async () => {
  const empty = mkdtempSync(join(tmpdir(), 'weblab-no-miniwob-'));
  const server = await serve(DIST, 0, { mounts: { '/miniwob/': empty } });
  try {
    await withBrowser(async (context) => {
      const { page, errors } = await openApp(context, server.url);
      assert.equal(await page.isHidden('#message'), true);
      await page.selectOption('#source', 'miniwob');
      assert.match(await page.textContent('#miniwob-missing'), /scripts\/setup\.sh/);
      assert.equal(await page.isVisible('#miniwob-missing'), true);
      await page.click('nav a[data-view="tasks"]');
      assert.equal(await page.isVisible('#gallery-miniwob-missing'), true);
      assert.equal(await page.locator('article[data-task="miniwob/click-test"] button:has-text("Play")').isDisabled(), true);
      // The lab's own tasks still play.
      await page.click('article[data-task="click-test"] button:has-text("Watch an agent")');
      await page.waitForFunction(() => /Click the button/.test(document.getElementById('utterance').textContent));
      assert.deepEqual(errors.filter((e) => !/404/.test(e)), []);
    });
  } finally {
    await server.close();
  }
});

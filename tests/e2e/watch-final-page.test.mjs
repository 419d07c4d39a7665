// End-to-end: when an episode ends in the Watch view, the task area goes on showing the page the
// agent acted on (with the overlay), not the task core's black START cover, until the next
// episode starts: for a pretrained DOM-Q-Net agent, for the gMiniWoB navigator, after a fast run
// and after a share link's replay. The page itself still shows its cover as before (the lab only
// holds it back from sight while watching): the Play view, opened on the same ended episode, shows
// it. What is on screen is measured as a person sees it: which element is at the task area's
// points, and how much of a screenshot of the task area is the cover's near-black.
// Run by scripts/test.sh after `trunk build`: node --test tests/e2e/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openApp } from './browser.mjs';
import { servedApp } from './fixture.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const shots = join(here, 'artifacts');
mkdirSync(shots, { recursive: true });

const WAIT = { timeout: 120_000, polling: 50 };
const app = servedApp();
const text = (page, sel) => page.evaluate((s) => document.querySelector(s).textContent, sel);

async function pauseWatch(page) {
  if ((await text(page, '#play')) === 'Pause') await page.click('#play');
  await page.waitForFunction(() => document.getElementById('play').textContent === 'Play', null, WAIT);
}

// Steps the paused Watch view until its episode ends.
async function stepToEnd(page) {
  for (let i = 0; i < 40 && !(await text(page, '#episode-outcome')); i++) {
    await page.waitForFunction(() => !document.getElementById('step').disabled || document.getElementById('episode-outcome').textContent, null, WAIT);
    if (await text(page, '#episode-outcome')) break;
    await page.click('#step');
  }
  await page.waitForFunction(() => document.getElementById('episode-outcome').textContent, null, WAIT);
}

// What the task page shows in its task area (#wrap): whether the page has ended its episode and
// put up its cover, and whether the cover is what a person sees at the area's points.
const taskArea = (page) => page.evaluate(() => {
  const doc = document.getElementById('task-frame').contentDocument;
  const wrap = doc.getElementById('wrap');
  const r = wrap.getBoundingClientRect();
  const cover = doc.getElementById('sync-task-cover');
  const seen = [[0.5, 0.5], [0.2, 0.2], [0.8, 0.3], [0.3, 0.8]]
    .map(([fx, fy]) => doc.elementFromPoint(r.left + fx * r.width, r.top + fy * r.height));
  return {
    over: doc.defaultView.WOB_DONE_GLOBAL === true,
    coverUp: Boolean(cover) && doc.defaultView.getComputedStyle(cover).display !== 'none',
    seen: seen.map((el) => (el ? `${el.tagName}${el.id ? `#${el.id}` : ''}` : null)),
    coverSeen: seen.some((el) => el && el.closest('#sync-task-cover')),
  };
});

// The share of a screenshot of the task area (as zoomed on screen) that is near-black.
async function darkShare(page) {
  const clip = await page.evaluate(() => {
    const frame = document.getElementById('task-frame');
    const box = frame.getBoundingClientRect();
    const zoom = box.width / frame.offsetWidth;
    const r = frame.contentDocument.getElementById('wrap').getBoundingClientRect();
    return { x: box.left + (1 + r.left) * zoom + 2, y: box.top + window.scrollY + (1 + r.top) * zoom + 2, width: r.width * zoom - 4, height: r.height * zoom - 4 };
  });
  const png = await page.screenshot({ clip, fullPage: true });
  return page.evaluate(async (b64) => {
    const img = new Image();
    img.src = `data:image/png;base64,${b64}`;
    await img.decode();
    const c = Object.assign(document.createElement('canvas'), { width: img.width, height: img.height });
    const g = c.getContext('2d');
    g.drawImage(img, 0, 0);
    const d = g.getImageData(0, 0, c.width, c.height).data;
    let dark = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i] < 48 && d[i + 1] < 48 && d[i + 2] < 48) dark++;
    return dark / (d.length / 4);
  }, png.toString('base64'));
}

const overlayDrawn = (page) => page.evaluate(() => {
  const c = document.getElementById('overlay');
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  for (let i = 3; i < d.length; i += 4) if (d[i] > 0) return true;
  return false;
});

// The episode is over and the page has put its cover up, but the task area shows the page.
async function assertShowsPage(page, what) {
  const area = await taskArea(page);
  assert.equal(area.over, true, `${what}: the page's episode is over`);
  assert.equal(area.coverSeen, false, `${what}: the task area shows the page, not the cover (${area.seen})`);
  const dark = await darkShare(page);
  assert.ok(dark < 0.5, `${what}: ${(100 * dark).toFixed(0)}% of the task area is the cover's black`);
  return area;
}

test('a pretrained DOM-Q-Net agent: the last page stays in sight, the Play view still shows the cover', { timeout: 300_000 }, async () => {
  const { page, errors } = await openApp(app.context, `${app.server.url}#/watch`);
  await pauseWatch(page);
  await page.selectOption('#task', 'click-button');
  await page.selectOption('#policy', 'dqn');
  await page.fill('#seed', '3');
  await page.click('#new-episode');
  await page.waitForFunction(() => /^Steps · seed \d+$/.test(document.getElementById('steps-title').textContent), null, WAIT);
  assert.match(await text(page, '#agent-note'), /^Pretrained agent/);
  await stepToEnd(page);

  const area = await assertShowsPage(page, 'DOM-Q-Net on click-button');
  assert.equal(area.coverUp, true, 'the page put its cover up as it always does');
  // The agent's last page: the buttons it chose among, and its choice drawn over them.
  const buttons = await page.evaluate(() => document.getElementById('task-frame').contentDocument.querySelectorAll('#area button').length);
  assert.ok(buttons > 0, 'the buttons of the last episode are on the page');
  assert.equal(await overlayDrawn(page), true, 'the overlay stays over the last page');
  await page.screenshot({ path: join(shots, 'watch-final-page-dqn.png') });

  // A share link of the episode replays it, and its end too shows the page.
  await page.click('#share');
  const link = await page.inputValue('#share-url');
  const replay = await app.context.newPage();
  const seen = await openApp(app.context, link, replay);
  await replay.waitForFunction(() => /^Replayed the shared episode/.test(document.getElementById('message-text').textContent), null, WAIT);
  await assertShowsPage(replay, 'the shared episode replayed');
  await replay.screenshot({ path: join(shots, 'watch-final-page-replay.png') });
  await replay.close();

  // The Play view on the same ended episode: the page's own cover, for a person to press.
  await page.click('nav a[data-view=play]');
  const played = await taskArea(page);
  assert.equal(played.coverSeen, true, `the Play view shows the page's cover (${played.seen})`);
  assert.ok(await darkShare(page) > 0.5, 'the cover is black on screen in the Play view');
  // And back in the Watch view the last page is in sight again.
  await page.click('nav a[data-view=watch]');
  await assertShowsPage(page, 'back in the Watch view');
  assert.deepEqual([...errors, ...seen.errors], []);
  await page.close();
});

test('the gMiniWoB navigator: the filled-in site stays in sight when its episode ends', { timeout: 300_000 }, async () => {
  const { page, errors } = await openApp(app.context, `${app.server.url}#/watch`);
  await pauseWatch(page);
  await page.selectOption('#policy', 'navigator');
  await page.selectOption('#watch-site', 'login');
  await page.selectOption('#watch-level', '0');
  await page.fill('#seed', '1');
  await page.click('#new-episode');
  await page.waitForFunction(() => /site seed/.test(document.getElementById('steps-title').textContent), null, WAIT);
  await stepToEnd(page);
  const area = await assertShowsPage(page, 'the navigator on login level 0');
  assert.equal(area.coverUp, true, 'the site put its cover up as it always does');
  assert.equal(await overlayDrawn(page), true, 'the overlay stays over the last page');
  await page.screenshot({ path: join(shots, 'watch-final-page-navigator.png') });
  assert.deepEqual(errors, []);
  await page.close();
});

test('a fast run: the page of its last episode is in sight when it stops', { timeout: 300_000 }, async () => {
  const { page, errors } = await openApp(app.context, `${app.server.url}#/watch`);
  await pauseWatch(page);
  await page.selectOption('#task', 'click-button');
  await page.selectOption('#policy', 'random');
  await page.waitForFunction(() => !document.getElementById('run').disabled, null, WAIT);
  await page.click('#run');
  await page.waitForFunction(() => Number(document.getElementById('st-episodes').textContent) >= 5, null, WAIT);
  await page.click('#stop');
  await page.waitForFunction(() => !document.getElementById('run').disabled, null, WAIT);
  const area = await taskArea(page);
  assert.equal(area.coverSeen, false, `the task area shows the page after the run (${area.seen})`);
  assert.ok(await darkShare(page) < 0.5, 'no black cover on screen after the run');
  await page.screenshot({ path: join(shots, 'watch-final-page-fast-run.png') });
  assert.deepEqual(errors, []);
  await page.close();
});

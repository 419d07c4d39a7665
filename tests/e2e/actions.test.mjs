// End-to-end: a person plays a real MiniWoB++ page that needs a drag (drag-box, from the miniwob
// package scripts/setup.sh fetches) in Play & record; the drag is recorded as one drag action, the
// demonstration saves, replays to the same reward, and its share link replays it in Watch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { messageMatching, openApp } from './browser.mjs';
import { servedApp } from './fixture.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const shots = join(here, 'artifacts');
mkdirSync(shots, { recursive: true });

const app = servedApp();
const WAIT = { timeout: 60_000 };
const stepTexts = (page) => page.$$eval('#steps li', (lis) => lis.map((li) => li.textContent));

// Starts recording on the real drag-box page with `seed` and returns its frame.
async function playDragBox(page, seed) {
  await page.fill('#seed', String(seed));
  if ((await page.inputValue('#source')) !== 'miniwob') {
    await page.selectOption('#source', 'miniwob');
    await page.selectOption('#miniwob-task', 'drag-box');
  } else {
    await page.click('#rec-start');
  }
  await page.waitForFunction((s) => new RegExp(`seed ${s}$`).test(document.getElementById('steps-title').textContent)
    && /Drag the smaller box/.test(document.getElementById('utterance').textContent), seed, WAIT);
  return page.frame({ url: /drag-box\.html/ });
}

test('a person drags on the real drag-box page: recorded as a drag, saved, replayed and shared to the same reward', async () => {
  const { page, errors } = await openApp(app.context, app.server.url + '#/play');
  // A seed whose small box shows a corner the large box does not cover, to take hold of.
  let frame, grab, large;
  for (let seed = 1; seed <= 12 && !grab; seed++) {
    frame = await playDragBox(page, seed);
    const s = await frame.locator('#draggableSmall').boundingBox();
    large = await frame.locator('#draggableLarge').boundingBox();
    const covered = (x, y) => x >= large.x && x <= large.x + large.width && y >= large.y && y <= large.y + large.height;
    grab = [[0.5, 0.5], [0.2, 0.2], [0.8, 0.2], [0.2, 0.8], [0.8, 0.8]]
      .map(([fx, fy]) => [s.x + fx * s.width, s.y + fy * s.height])
      .find(([x, y]) => !covered(x, y));
    if (grab) grab.push(s);
  }
  assert.ok(grab, 'a seed with a small box to take hold of');
  const [gx, gy, small] = grab;
  // The pointer moves by the offset between the boxes' centres, in small steps as a hand does.
  const dx = large.x + large.width / 2 - (small.x + small.width / 2);
  const dy = large.y + large.height / 2 - (small.y + small.height / 2);
  await page.mouse.move(gx, gy);
  await page.mouse.down();
  await page.mouse.move(gx + dx / 2, gy + dy / 2, { steps: 6 });
  await page.mouse.move(gx + dx, gy + dy, { steps: 6 });
  await page.mouse.up();
  await frame.click('#subbtn');
  await page.waitForFunction(() => /raw 1\b/.test(document.getElementById('episode-outcome').textContent), null, WAIT);
  const recorded = await stepTexts(page);
  assert.equal(recorded.length, 2, `a drag and Submit: ${recorded}`);
  assert.match(recorded[0], /^drag \(\d+, \d+\) → \(\d+, \d+\)$/);
  assert.match(recorded[1], /^click BUTTON "Submit"/);
  await page.screenshot({ path: join(shots, 'play-drag-recorded.png') });

  // The share link of the finished recording replays it in Watch.
  await page.click('#share');
  const link = await page.inputValue('#share-url');
  const other = await app.context.newPage();
  await openApp(app.context, link, other);
  await messageMatching(other, /Replayed the shared episode: same 2 actions, same reward \(1\)\./);
  await other.screenshot({ path: join(shots, 'watch-drag-replayed.png') });
  await other.close();

  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#rec-save')]);
  const demoPath = join(shots, download.suggestedFilename());
  await download.saveAs(demoPath);
  const demo = JSON.parse(readFileSync(demoPath, 'utf8'));
  assert.equal(demo.raw_reward, 1);
  assert.deepEqual(demo.task, { source: 'external', base_url: 'miniwob/html/miniwob/', name: 'drag-box' });
  assert.deepEqual(demo.steps.map((s) => Object.keys(s.action)[0]), ['drag', 'click']);
  const path = demo.steps[0].action.drag;
  assert.ok(path.length >= 3, `the drag keeps the path it went (${path.length} points)`);

  await page.setInputFiles('#rec-replay', demoPath);
  await messageMatching(page, new RegExp(`Replayed ${download.suggestedFilename().replace(/\./g, '\\.')}: 2 actions, raw reward 1, as recorded\\.`));
  assert.deepEqual(errors, []);
});

// The terminal page reads keys in its own keydown handler on a hidden field. A trusted event runs
// the page's microtasks (and so delivers mutation records) after each listener, so the recorder
// must see the page's reaction through its observer's callback, not only through takeRecords:
// before it did, this recording kept the click and none of the keys.
test('a person types into the real terminal page: its keys are recorded as keys and replay to the same reward', async () => {
  const { page, errors } = await openApp(app.context, app.server.url + '#/play');
  await page.fill('#seed', '2');
  await page.selectOption('#source', 'miniwob');
  await page.selectOption('#miniwob-task', 'terminal');
  await page.waitForFunction(() => /seed 2$/.test(document.getElementById('steps-title').textContent)
    && /terminal below to delete/.test(document.getElementById('utterance').textContent), null, WAIT);
  const utterance = await page.textContent('#utterance');
  const frame = page.frame({ url: /terminal\.html/ });
  // A person: click the terminal, list the files, delete the one the instruction asks for.
  await frame.click('#terminal');
  await page.keyboard.type('ls', { delay: 20 });
  await page.keyboard.press('Enter');
  const listing = await frame.locator('.terminal-output .output').last().textContent();
  const ext = / \.(\S+)$/.exec(utterance.trim());
  const file = listing.split(/\s+/).find((f) => (ext ? f.endsWith(`.${ext[1]}`) : f && !f.includes('.')));
  assert.ok(file, `a file to delete in "${listing}" for "${utterance}"`);
  await page.keyboard.type(`rm ${file}`, { delay: 20 });
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => /raw 1\b/.test(document.getElementById('episode-outcome').textContent), null, WAIT);
  // The page reads the keys themselves (its keydown handler writes them into the terminal), so
  // they are recorded as keys, not as typing into its hidden field. (Its caret blinks by itself,
  // so the pauses between the person's actions are recorded as waits too.)
  const recorded = (await stepTexts(page)).filter((t) => !t.startsWith('wait'));
  assert.equal(recorded.length, 5, `${recorded}`);
  assert.match(recorded[0], /^click DIV/);
  assert.deepEqual(recorded.slice(1, 3), ['type "ls"', 'press <Enter>']);
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#rec-save')]);
  const demoPath = join(shots, download.suggestedFilename());
  await download.saveAs(demoPath);
  const demo = JSON.parse(readFileSync(demoPath, 'utf8'));
  const acts = demo.steps.map((s) => s.action).filter((a) => !('wait' in a));
  assert.deepEqual(acts.slice(1), [{ type_text: 'ls' }, { key: '<Enter>' }, { type_text: `rm ${file}` }, { key: '<Enter>' }]);
  await page.setInputFiles('#rec-replay', demoPath);
  const name = download.suggestedFilename().replace(/\./g, '\\.');
  await messageMatching(page, new RegExp(`Replayed ${name}: ${demo.steps.length} actions, raw reward 1, as recorded\\.`));
  assert.deepEqual(errors, []);
});

// End-to-end: the WGE view (workflow-guided exploration). A malformed demonstration file gets its
// message and adds nothing; the real login-user demonstration in the published format
// (tests/fixtures/wge/) is imported, labelled as imported, and its induced lattice shows as
// readable constraints with the workflow policy's weights; exploration runs a few episodes on
// the live page with the workflow steps' matched elements drawn over it; and after a reload the
// session (demonstration, episodes counted) is back.
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
const LOGIN_USER = join(here, '..', 'fixtures', 'wge', 'login-user_3B4YI393VAQ8Z71VZBMHZOUOIQXSS7_d2.json.gz');
const WAIT = { timeout: 60_000, polling: 50 };
const EPISODES = 3;

const app = servedApp();
const text = (page, sel) => page.evaluate((s) => document.querySelector(s).textContent, sel);

test('the WGE view imports a demonstration, shows its lattice and explores with highlights', { timeout: 180_000 }, async () => {
  const { page, errors } = await openApp(app.context, `${app.server.url}#/wge`);
  assert.equal(await page.evaluate(() => document.body.dataset.ready), 'true', await text(page, '#message-text'));
  await page.evaluate(() => localStorage.setItem('weblab-hint-dismissed-wge', '1'));

  // A malformed file: its message names it and says what is wrong; nothing is added.
  await page.setInputFiles('#wge-import', { name: 'broken.json', mimeType: 'application/json', buffer: Buffer.from('{ "taskName": "login-user", "utterance": ') });
  await page.waitForFunction(() => !document.getElementById('message').hidden, null, WAIT);
  const refused = await text(page, '#message-text');
  assert.match(refused, /broken\.json: not a JSON demonstration file/);
  assert.equal(await page.evaluate(() => document.querySelectorAll('#wge-demos .wge-demo').length), 0);
  // A foreign JSON file (a design, not a demonstration) too.
  await page.setInputFiles('#wge-import', { name: 'design.json', mimeType: 'application/json', buffer: Buffer.from('{"number_of_pages": 1, "action": [1], "action_page": [0]}') });
  await page.waitForFunction(() => /design\.json: not a WGE/.test(document.getElementById('message-text').textContent), null, WAIT);
  assert.equal(await page.evaluate(() => document.querySelectorAll('#wge-demos .wge-demo').length), 0);

  // The real login-user sample: imported, its source labelled, its lattice shown.
  await page.setInputFiles('#wge-import', LOGIN_USER);
  await page.waitForFunction(() => document.querySelectorAll('#wge-demos .wge-demo').length === 1, null, WAIT);
  assert.equal(await page.evaluate(() => document.getElementById('task').value), 'login-user');
  const card = await page.evaluate(() => {
    const c = document.querySelector('#wge-demos .wge-demo');
    return {
      source: c.querySelector('.wge-source').textContent,
      did: [...c.querySelectorAll('.wge-action')].map((e) => e.textContent),
      steps: [...c.querySelectorAll('.wge-lattice > li')].map((li) => [...li.querySelectorAll('.wge-program-text')].map((e) => e.textContent)),
      weights: [...c.querySelectorAll('.wge-weight-num')].map((e) => Number(e.textContent)),
    };
  });
  assert.equal(card.source, 'imported file');
  assert.equal(card.did.length, 3, JSON.stringify(card.did));
  assert.match(card.did[0], /^Did: type "keli"/);
  // The paper's Appendix B workflow, readably: type the username, the password, click Login.
  const demos = await page.evaluate(() => window.wgeView.demonstrations());
  const notations = demos[0].positions.map((p) => p.options.map((o) => o.notation));
  assert.ok(notations[0].includes('Type(Tag("INPUT_text"), Field(1))'), JSON.stringify(notations[0]));
  assert.ok(notations[2].includes('Click(Like("Login"))'), JSON.stringify(notations[2]));
  assert.ok(card.steps[0].some((t) => /^type the username into /.test(t)), JSON.stringify(card.steps[0]));
  assert.ok(card.weights.length > 0 && card.weights.every((w) => w >= 0 && w <= 1));
  await page.screenshot({ path: join(shots, 'wge-imported.png') });

  // Exploration: a few episodes, each shown on its page with the matched elements drawn.
  await page.fill('#wge-episodes', String(EPISODES));
  await page.fill('#seed', '5');
  await page.evaluate(() => { document.getElementById('wge-speed').value = '30'; });
  await page.click('#wge-explore');
  let shaded = 0;
  const blue = () => page.evaluate(() => {
    const c = document.getElementById('overlay');
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 0 && d[i + 2] > 150 && d[i] < 120) n++;
    return n;
  });
  for (let i = 0; i < 1200; i++) {
    shaded = Math.max(shaded, await blue());
    if ((await page.evaluate(() => window.wgeView.tally().episodes)) >= EPISODES && !(await page.evaluate(() => document.getElementById('wge-explore').disabled))) break;
    await page.waitForTimeout(50);
  }
  const tally = await page.evaluate(() => window.wgeView.tally());
  assert.equal(tally.episodes, EPISODES);
  assert.ok(shaded > 0, 'the workflow step\'s matched elements were never drawn over the page');
  const stepsShown = await page.evaluate(() => [...document.querySelectorAll('#wge-steps li')].map((li) => li.textContent));
  assert.ok(stepsShown.length > 0 && stepsShown.every((t) => /matched/.test(t)), JSON.stringify(stepsShown));
  assert.match(await text(page, '#wge-outcome'), /^Seed \d+ · workflow of demonstration #1: (success|no success), raw reward/);
  assert.match(await text(page, '#wge-tally'), new RegExp(`^${EPISODES} episodes · ${tally.successes} succeeded`));
  await page.screenshot({ path: join(shots, 'wge-explored.png') });

  // A reload resumes the session from IndexedDB, the workflow policy's weights with it.
  const probabilities = () => page.evaluate(() => window.wgeView.demonstrations().map((d) => d.positions.map((p) => p.options.map((o) => [o.notation, o.probability]))));
  const learned = await probabilities();
  await page.reload();
  await page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 120_000 });
  await page.waitForFunction(() => document.querySelectorAll('#wge-demos .wge-demo').length === 1, null, WAIT);
  const after = await page.evaluate(() => window.wgeView.tally());
  assert.equal(after.episodes, EPISODES);
  assert.equal(after.successes, tally.successes);
  // The same options in the same order with the same probabilities (JSON keeps the weights to
  // about the last bit, so compare to 1e-12).
  const back = await probabilities();
  assert.deepEqual(back.map((d) => d.map((p) => p.map((o) => o[0]))), learned.map((d) => d.map((p) => p.map((o) => o[0]))));
  const gap = Math.max(0, ...back.flat(2).map((o, i) => Math.abs(o[1] - learned.flat(2)[i][1])));
  assert.ok(gap < 1e-12, `the resumed probabilities differ by ${gap}`);
  assert.match(await text(page, '#wge-rec-status'), /weights resumed/);
  assert.equal(await page.evaluate(() => document.querySelector('#wge-demos .wge-source').textContent), 'imported file');
  assert.deepEqual(errors, []);
});

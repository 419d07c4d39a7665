// End-to-end: the WGE view (workflow-guided exploration). A malformed demonstration file gets its
// message and adds nothing; the real login-user demonstration in the published format
// (tests/fixtures/wge/) is imported, labelled as imported, and its induced lattice shows as
// readable constraints with the workflow policy's weights; exploration runs a few episodes on
// the live page with the workflow steps' matched elements drawn over it; and after a reload the
// session (demonstration, episodes counted) is back. A run of imported demonstrations cannot be
// shared, and the Share button says why. A run of scripted demonstrations with DOMNet learning
// (300 episodes: its replay fills, hundreds of replay updates, and it comes to solve the judging
// seeds) resumes after a reload (DOMNet's counters and curve with it, a damaged checkpoint
// refused with a message and the rest kept), and its share link, opened in a fresh page, re-runs
// it to the same trained state and the same evaluation — twice in that tab.
// DOMNet reading words through GloVe: the table fetched when asked (a 404 leaves the setting as it
// was, with why), the setting resumed after a reload and carried by a link whose re-run trains the
// same weights.
// Run by scripts/test.sh after `trunk build`: node --test tests/e2e/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
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
// DOMNet's run: enough login-user episodes (3 scripted demonstrations) for the replay's group to
// hold the 100 successes it needs (NeuralConfig's paper default) and for rounds of replay
// updates to follow, so the reload, the link and the re-run carry a network that has learned.
const DOMNET_EPISODES = 300;

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
  // A published file is learned on the real MiniWoB++ page of its task.
  assert.deepEqual(await page.evaluate(() => [document.getElementById('source').value, document.getElementById('miniwob-task').value]), ['miniwob', 'login-user']);
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

  // Several files at once: each is listed with what was imported or refused and why, and only
  // what fits the session is added (an empty recording; another task's; a file that is no demo).
  const fixture = (name) => ({ name, mimeType: 'application/json', buffer: readFileSync(join(here, '..', 'fixtures', 'wge', name)) });
  await page.setInputFiles('#wge-import', [
    fixture('no-states_login-user.json'),
    fixture('use-autocomplete_no-task-name.json'),
    { name: 'notes.json', mimeType: 'application/json', buffer: Buffer.from('[1, 2]') },
  ]);
  await page.waitForFunction(() => !document.getElementById('wge-import-report').hidden && document.querySelectorAll('#wge-import-report li').length === 3, null, WAIT);
  const report = await page.evaluate(() => ({
    summary: document.querySelector('#wge-import-report summary').textContent,
    rows: [...document.querySelectorAll('#wge-import-report li')].map((li) => [li.className, li.textContent]),
  }));
  assert.equal(report.summary, '3 files: 0 imported, 3 refused', JSON.stringify(report));
  assert.deepEqual(report.rows.map((r) => r[0]), ['refused', 'refused', 'refused']);
  assert.match(report.rows[0][1], /^no-states_login-user\.json — refused: it recorded no states/);
  assert.match(report.rows[1][1], /^notes\.json — refused: not a WGE\/MiniWoB\+\+ demonstration: the file is not a JSON object/);
  assert.match(report.rows[2][1], /^use-autocomplete_no-task-name\.json — refused: it is a demonstration of miniwob\/use-autocomplete, but this session learns miniwob\/login-user/);
  assert.equal(await page.evaluate(() => document.querySelectorAll('#wge-demos .wge-demo').length), 1);
  await page.screenshot({ path: join(shots, 'wge-import-report.png') });

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

  // An imported demonstration has no seeded page of ours: the link cannot carry it, and says so.
  await page.click('#share');
  await page.waitForFunction(() => /Could not make a share link/.test(document.getElementById('message-text').textContent), null, WAIT);
  assert.match(await text(page, '#message-text'), /demonstration #1 \(.*\) is an imported file: it has no seeded page/);
  assert.deepEqual(errors, []);
});

const idle = (page) => page.waitForFunction(() => !document.getElementById('wge-scripted').disabled && document.getElementById('busy').hidden, null, { timeout: 120_000, polling: 100 });
// A fresh session of three scripted login-user demonstrations (seeds 1-3), the view idle after.
const threeScriptedLoginUsers = async (page) => {
  await page.evaluate(() => localStorage.setItem('weblab-hint-dismissed-wge', '1'));
  await idle(page);
  await page.click('#wge-clear');
  await page.selectOption('#source', 'builtin');
  await page.selectOption('#task', 'login-user');
  await page.fill('#seed', '1');
  await page.fill('#wge-scripted-count', '3');
  await page.click('#wge-scripted');
  await page.waitForFunction(() => document.querySelectorAll('#wge-demos .wge-demo').length === 3, null, WAIT);
  await idle(page);
};
const reloaded = async (page) => {
  await page.reload();
  await page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 120_000 });
};

test('DOMNet resumes after a reload, and a shared run re-runs to the same result in a fresh page', { timeout: 600_000 }, async () => {
  const { page, errors } = await openApp(app.context, `${app.server.url}#/wge`);
  assert.equal(await page.evaluate(() => document.body.dataset.ready), 'true', await text(page, '#message-text'));
  await threeScriptedLoginUsers(page);
  await page.check('#wge-neural');
  await page.waitForFunction(() => /^DOMNet: /.test(document.getElementById('wge-neural-note').textContent), null, WAIT);
  await page.uncheck('#wge-show');
  await page.fill('#wge-episodes', String(DOMNET_EPISODES));
  const t0 = Date.now();
  await page.click('#wge-explore');
  await page.waitForFunction((n) => window.wgeView.tally().episodes === n, DOMNET_EPISODES, { timeout: 240_000, polling: 200 });
  await idle(page);
  const neural = await page.evaluate(() => window.wgeView.neural());
  console.log(`DOMNet after ${DOMNET_EPISODES} episodes (${((Date.now() - t0) / 1000).toFixed(1)} s): ${JSON.stringify(neural)}`);
  assert.equal(neural.on, true);
  assert.equal(neural.episodes, DOMNET_EPISODES);
  assert.ok(neural.replay >= neural.min_group && neural.updates > 0, `the replay filled a group and DOMNet was updated: ${JSON.stringify(neural)}`);
  const curve = await page.evaluate(() => window.wgeView.curve().find((c) => c.name.startsWith('DOMNet')));
  // Judged greedily every 10 episodes as it learns; by the end it solves the held-out seeds.
  assert.ok(curve && curve.points.length === DOMNET_EPISODES / 10, JSON.stringify(curve));
  assert.deepEqual(curve.points.at(-1), [DOMNET_EPISODES, 1], `DOMNet learned login-user from the workflow policy's successes: ${JSON.stringify(curve)}`);
  const stored = await page.evaluate(() => new Promise((resolve) => {
    indexedDB.open('weblab').onsuccess = (e) => {
      e.target.result.transaction('state').objectStore('state').get('wge-session').onsuccess = (r) => {
        const n = r.target.result.neural;
        resolve({ binary: n.checkpoint instanceof Uint8Array, bytes: n.checkpoint.length });
      };
    };
  }));
  assert.ok(stored.binary, 'the checkpoint is stored as bytes');
  console.log(`DOMNet's checkpoint in IndexedDB: ${(stored.bytes / 1e6).toFixed(2)} MB`);

  // A reload: DOMNet's counters, its switch and its curve come back with the session.
  await reloaded(page);
  await page.waitForFunction(() => document.querySelectorAll('#wge-demos .wge-demo').length === 3, null, WAIT);
  assert.ok((await text(page, '#wge-rec-status')).includes(`DOMNet resumed (${DOMNET_EPISODES} episodes seen, ${neural.updates} updates; its replay starts empty) and goes on learning`), await text(page, '#wge-rec-status'));
  assert.deepEqual(await page.evaluate(() => window.wgeView.neural()), { ...neural, replay: 0 });
  assert.equal(await page.evaluate(() => document.getElementById('wge-neural').checked), true);
  assert.deepEqual(await page.evaluate(() => window.wgeView.curve().find((c) => c.name.startsWith('DOMNet'))), curve);

  // Two more episodes after the reload, then the link: the run as a recipe and its evaluation.
  await page.fill('#wge-episodes', '2');
  await page.click('#wge-explore');
  await page.waitForFunction((n) => window.wgeView.tally().episodes === n, DOMNET_EPISODES + 2, { timeout: 120_000, polling: 100 });
  await idle(page);
  const trained = await page.evaluate(() => window.wgeView.fingerprint());
  await page.click('#share');
  await page.waitForFunction(() => !document.getElementById('share-box').hidden && document.getElementById('share-url').value.includes('#s='), null, { timeout: 120_000 });
  const url = await page.evaluate(() => document.getElementById('share-url').value);
  const sent = await text(page, '#wge-eval-note');
  assert.match(sent, /^Greedy on 10 held-out seeds: workflow policy \d+\/10 · DOMNet \d+\/10\.$/);
  assert.equal(await page.evaluate(() => document.querySelectorAll('#wge-eval-list li').length), 10);
  assert.equal(await page.evaluate(() => window.wgeView.fingerprint()), trained, 'making the link changed nothing');
  await page.screenshot({ path: join(shots, 'wge-shared.png') });

  // A fresh page opens the link: the demonstrations replay, the run re-runs, the same result.
  const { page: other, errors: otherErrors } = await openApp(app.context, url, await app.context.newPage());
  await other.waitForFunction(() => !document.getElementById('wge-eval').hidden && document.getElementById('busy').hidden, null, { timeout: 180_000, polling: 200 });
  assert.match(await text(other, '#wge-eval-note'), /the run reproduced\.$/, await text(other, '#message-text'));
  assert.equal(await text(other, '#wge-eval-note'), `${sent} The same as the sender's link records: the run reproduced.`);
  assert.equal(await other.evaluate(() => window.wgeView.tally().episodes), DOMNET_EPISODES + 2);
  assert.equal(await other.evaluate(() => document.querySelectorAll('#wge-demos .wge-source-scripted').length), 3);
  assert.equal(await other.evaluate(() => window.wgeView.fingerprint()), trained, 'the re-run trained the same weights');
  await other.screenshot({ path: join(shots, 'wge-reproduced.png') });
  // The same recipe again in this tab: the same weights again.
  await other.evaluate(() => window.wgeView.openShare(window.wasmBindings.Lab.parseShare(location.hash, [])));
  assert.equal(await other.evaluate(() => window.wgeView.fingerprint()), trained, 'a second re-run in one tab trained the same weights');
  assert.match(await text(other, '#wge-eval-note'), /the run reproduced\.$/);
  assert.deepEqual(otherErrors, []);
  await other.close();

  // A damaged checkpoint: DOMNet does not resume, says why, and the rest of the session does.
  await page.evaluate(() => new Promise((resolve) => {
    indexedDB.open('weblab').onsuccess = (e) => {
      const tx = e.target.result.transaction('state', 'readwrite');
      const store = tx.objectStore('state');
      store.get('wge-session').onsuccess = (r) => {
        const rec = r.target.result;
        rec.neural.checkpoint = new Uint8Array([87, 76, 68, 79, 77, 78, 69, 84, 1, 2, 3]);
        store.put(rec, 'wge-session');
      };
      // Committed, not only put: a reload before the commit would drop the write.
      tx.oncomplete = resolve;
    };
  }));
  await reloaded(page);
  await page.waitForFunction(() => document.querySelectorAll('#wge-demos .wge-demo').length === 3, null, WAIT);
  assert.ok(
    (await text(page, '#wge-rec-status')).includes(`${DOMNET_EPISODES + 2} episodes explored; the workflow policy's weights resumed with it. DOMNet did not resume: its saved checkpoint could not be used (the checkpoint is damaged: it ends too early); it starts afresh when turned on.`),
    await text(page, '#wge-rec-status'),
  );
  assert.equal(await page.evaluate(() => window.wgeView.neural().on), false);
  assert.equal(await page.evaluate(() => document.getElementById('wge-neural').checked), false);
  assert.deepEqual(errors, []);
});

test('DOMNet reads words through GloVe when asked: the table is fetched, the setting resumes and travels in a link, and a missing table changes nothing', { timeout: 300_000 }, async () => {
  // A tab whose table cannot be fetched: the setting stays as it was, with why.
  const { page: broken, errors: brokenErrors } = await openApp(app.context, `${app.server.url}#/wge`, await app.context.newPage());
  await broken.route('**/data/glove-6b-50d-tasks.wlv', (r) => r.fulfill({ status: 404, body: 'gone' }));
  await broken.selectOption('#wge-words', 'glove');
  await broken.waitForFunction(() => /^DOMNet's words were not changed: the word vectors \(data\/glove-6b-50d-tasks\.wlv\) could not be loaded: HTTP 404/.test(document.getElementById('message-text').textContent), null, WAIT);
  assert.equal(await broken.evaluate(() => document.getElementById('wge-words').value), 'learned');
  // The browser logs the refused fetch itself; nothing else went wrong.
  assert.deepEqual(brokenErrors.filter((e) => !/status of 404/.test(e)), []);
  await broken.close();

  const { page, errors } = await openApp(app.context, `${app.server.url}#/wge`);
  await threeScriptedLoginUsers(page);
  await page.selectOption('#wge-words', 'glove_cosine');
  await idle(page);
  await page.check('#wge-neural');
  await page.waitForFunction(() => /^DOMNet, words through GloVe 6B 50-d \(fixed\) and aligned by their cosine: /.test(document.getElementById('wge-neural-note').textContent), null, WAIT);
  await page.uncheck('#wge-show');
  await page.fill('#wge-episodes', '20');
  await page.click('#wge-explore');
  await page.waitForFunction(() => window.wgeView.tally().episodes === 20, null, { timeout: 120_000, polling: 100 });
  await idle(page);
  const neural = await page.evaluate(() => window.wgeView.neural());
  assert.equal(neural.episodes, 20, JSON.stringify(neural));

  // A reload: the setting and DOMNet, which cannot come back without the table, both resume.
  await reloaded(page);
  await page.waitForFunction(() => document.querySelectorAll('#wge-demos .wge-demo').length === 3, null, WAIT);
  assert.equal(await page.evaluate(() => document.getElementById('wge-words').value), 'glove_cosine');
  assert.ok((await text(page, '#wge-rec-status')).includes('DOMNet resumed (20 episodes seen'), await text(page, '#wge-rec-status'));
  const trained = await page.evaluate(() => window.wgeView.fingerprint());

  // The link carries the setting; a fresh page re-runs with it to the same weights.
  await page.click('#share');
  await page.waitForFunction(() => !document.getElementById('share-box').hidden && document.getElementById('share-url').value.includes('#s='), null, { timeout: 120_000 });
  const url = await page.evaluate(() => document.getElementById('share-url').value);
  const shared = await page.evaluate((u) => window.wasmBindings.Lab.parseShare(new URL(u).hash, []), url);
  assert.equal(shared.replay.workflows.words, 'glove_cosine');
  const { page: other, errors: otherErrors } = await openApp(app.context, url, await app.context.newPage());
  await other.waitForFunction(() => !document.getElementById('wge-eval').hidden && document.getElementById('busy').hidden, null, { timeout: 180_000, polling: 200 });
  assert.match(await text(other, '#wge-eval-note'), /the run reproduced\.$/, await text(other, '#message-text'));
  assert.equal(await other.evaluate(() => document.getElementById('wge-words').value), 'glove_cosine');
  assert.equal(await other.evaluate(() => window.wgeView.fingerprint()), trained, 'the re-run trained the same weights');
  assert.deepEqual(otherErrors, []);
  await other.close();

  // Learned words again: DOMNet starts afresh, and this run (DOMNet read words both ways) is
  // one no link can carry, until the policy is reset.
  await page.selectOption('#wge-words', 'learned');
  await page.waitForFunction(() => /^DOMNet: .*0 updates/.test(document.getElementById('wge-neural-note').textContent), null, WAIT);
  assert.equal((await page.evaluate(() => window.wgeView.neural())).episodes, 0);
  await page.click('#share');
  await page.waitForFunction(() => /Could not make a share link.*not known in full \(their exploration seeds or DOMNet's words changed mid-run/.test(document.getElementById('message-text').textContent), null, WAIT);
  // The link made before is not left in the box to be copied for a run it no longer matches.
  assert.deepEqual(await page.evaluate(() => [document.getElementById('share-box').hidden, document.getElementById('share-url').value]), [true, '']);
  await page.screenshot({ path: join(shots, 'wge-words.png') });
  assert.deepEqual(errors, []);
});

// End-to-end: the lab drives pages from an external folder served beside the app on the same
// origin (the MiniWoB-style fixtures in tests/fixtures/miniwob-style/, as a user would serve
// MiniWoB++'s html/ folder), and reports broken pages clearly.
//
// These tests use only the built wasm module (dist/weblab.js) and its Lab object, on a bare page
// of the app's origin: no part of the app's UI (www/), so they hold while the UI changes.
// Run by scripts/test.sh after `trunk build`: node --test tests/e2e/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { servedApp } from './fixture.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const fixtures = join(here, '..', 'fixtures', 'miniwob-style');
const BASE = '/miniwob-style/';
const external = (name) => ({ source: 'external', base_url: BASE, name });

let page;
const errors = [];

const app = servedApp({ serveOptions: { mounts: { [BASE]: fixtures }, stall: '/__stall/' }, setup: openBareLab });
async function openBareLab(app) {
  page = app.context.pages()[0] || await app.context.newPage();
  page.on('pageerror', (e) => errors.push(String(e)));
  // A bare page on the app's origin with one task iframe; the lab is the wasm module's Lab.
  const bare = app.server.url + '__e2e-lab.html';
  await page.route(bare, (route) => route.fulfill({
    contentType: 'text/html',
    body: '<!DOCTYPE html><html><body><iframe id="task" width="420" height="560"></iframe></body></html>',
  }));
  await page.goto(bare);
  await page.evaluate(async () => {
    const wasm = await import('/weblab.js');
    await wasm.default();
    window.lab = new wasm.Lab(document.getElementById('task'));
  });
}

// The fixtures' folder as a person types it into the task picker (Lab.allowFolder): a link, a
// file or a stored run may name only MiniWoB++'s folders.
function allowFixtures() {
  return page.evaluate((base) => window.lab.allowFolder(base), BASE);
}

// Runs `lab.reset(task, seed)` in the page; resolves to {obs} or {error: message}.
function reset(task, seed = 1) {
  return page.evaluate(async ({ task, seed }) => {
    try {
      return { obs: await window.lab.reset(task, seed) };
    } catch (e) {
      return { error: e && e.message ? e.message : String(e) };
    }
  }, { task, seed });
}

test('a folder opens only once a person typed it; nothing else points the frame elsewhere', async () => {
  // Not typed in this tab: refused with why, as a link, a file or a stored run naming it is.
  let r = await reset(external('nl-star'));
  assert.match(r.error, /^the task cannot be opened: its folder "miniwob-style\/" is not one the lab opens from links, files or saved runs \(only folders under "miniwob\/html\/"\)/);
  // Paths that leave the folder, or the site, are refused whoever gives them.
  r = await page.evaluate(() => { try { return window.lab.allowFolder('https://example.com/x/'); } catch (e) { return e.message; } });
  assert.match(r, /points to another site/);
  r = await reset({ source: 'external', base_url: 'miniwob/html/../../miniwob-style/', name: 'nl-star' });
  assert.match(r.error, /'\.\.' segment/);
  r = await reset({ source: 'inline', name: 'x', html: '<script>parent.__pwned = 1</script>' });
  assert.match(r.error, /whole page/);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.equal(await allowFixtures(), 'miniwob-style/');
});

test('a MiniWoB-style page from an external folder is driven to success through window.lab', async () => {
  await page.evaluate(() => window.lab.setConfig({ max_steps: 10, hold_clock: true }));
  for (const seed of [1, 2, 3]) {
    const { obs, error } = await reset(external('nl-star'), seed);
    assert.equal(error, undefined);
    const field = (k) => obs.instruction.fields.find((f) => f.key === k)?.value;
    const by = field('by');
    assert.equal(field('task'), 'star');
    assert.ok(obs.instruction.utterance.includes(by), obs.instruction.utterance);
    // The star of the row whose name is the sender.
    const nodes = obs.dom.nodes;
    const who = nodes.find((n) => n.text === by);
    const star = nodes[who.parent].children.map((c) => nodes[c]).find((n) => n.classes.includes('star'));
    const step = await page.evaluate((r) => window.lab.step({ click: r }), star.ref);
    assert.deepEqual([step.done, step.raw_reward], [true, 1]);
    // The page's own frame is the folder's page, on the app's origin.
    const frame = page.frames().find((f) => f.url().endsWith(`${BASE}nl-star.html`));
    assert.ok(frame, page.frames().map((f) => f.url()).join(', '));
  }

  // A wrong click gets the page's failure reward and reason, and a later action is refused.
  const { obs } = await reset(external('order-form'), 4);
  assert.match(obs.instruction.utterance, /^Order a /);
  const order = obs.dom.nodes.find((n) => n.tag === 'BUTTON');
  const step = await page.evaluate((r) => window.lab.step({ click: r }), order.ref);
  assert.deepEqual([step.done, step.raw_reward, step.reason], [true, -1, 'wrong order']);
  const refused = await page.evaluate((r) => window.lab.step({ click: r }).then(() => 'sent', (e) => e.message), order.ref);
  assert.match(refused, /episode is over/);
  assert.deepEqual(errors, []);
});

test('broken external pages get clear messages and the lab keeps working', async () => {
  await page.evaluate(() => window.lab.setConfig({ max_steps: 10, hold_clock: true, load_timeout_ms: 2000, ready_timeout_ms: 500 }));

  // The page's MiniWoB-style core keeps no load errors, and the lab runs nothing of a page to
  // find out why it is broken: its scripts load and parse, so it says what is missing and where
  // the error shows.
  let r = await reset(external('throws-on-load'));
  assert.match(r.error, /throws-on-load\.html is not a MiniWoB-style task page: it has no genProblem\(\) \(its scripts load and parse: one may have stopped with an error as the page loaded; the browser's console for the page shows it\)/);
  // A script that does not parse is named (compiled, never run).
  r = await reset(external('syntax-error'));
  assert.match(r.error, /threw an error: SyntaxError: .+ \(in its inline script #2, while loading http:\/\/127\.0\.0\.1:\d+\/miniwob-style\/syntax-error\.html\)/);

  r = await reset(external('wrong-core-path'));
  assert.match(r.error, /not a MiniWoB-style task page: it has no core\.startEpisodeReal\(\): its script \.\.\/no-such-core\/core\.js could not be loaded \(HTTP 404/);

  r = await reset(external('never-ready'));
  assert.equal(r.error, 'the task page "never-ready" did not become ready within 500 ms');

  r = await reset(external('never-loads'));
  assert.match(r.error, /miniwob-style\/never-loads\.html did not finish loading within 2000 ms/);

  r = await reset(external('no-such-page'));
  assert.match(r.error, /no-such-page\.html: HTTP 404/);

  // After all that, the folder's good pages and the lab's own tasks still run.
  r = await reset(external('nl-star'), 5);
  assert.equal(r.error, undefined);
  r = await reset('click-button', 5);
  assert.equal(r.error, undefined);
  assert.match(r.obs.instruction.utterance, /^Click on the ".+" button\.$/);
});

// End-to-end: an adversarial run (CoDE, the population loop of src/web/learner/adversary.rs) in
// the Train view of the built app, on the CPU: the adversary's designs show as thumbnails and on
// the training page, the success grid is judged per navigator, the curriculum's charts fill; a
// generated design's share link opens in the Design view of a fresh browser and renders the very
// site of its thumbnail (same elements, ids, classes, text and boxes); a reload resumes the paused
// run from its snapshot with its curriculum and restored counters; a damaged snapshot of it is
// refused with a message.
// Run by scripts/test.sh after `trunk build`: node --test tests/e2e/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch, openApp } from './browser.mjs';
import { servedApp } from './fixture.mjs';

const shots = join(dirname(fileURLToPath(import.meta.url)), 'artifacts');
mkdirSync(shots, { recursive: true });

const WAIT = { timeout: 120_000, polling: 100 };
const app = servedApp();

const count = (page, id) => page.evaluate((i) => Number(document.getElementById(i).textContent.replace(/,/g, '')), id);

// A site's structure as rendered: every element under #gsite with its tag, id, classes (less the
// page's `visited` marks), a leaf's text and its inline box (as written, or as the browser wrote
// it back: the same box).
function siteSignature(doc) {
  const root = doc.getElementById('gsite');
  if (!root) return null;
  return [...root.querySelectorAll('*')].map((e) => [
    e.tagName, e.id, (e.getAttribute('class') || '').split(/\s+/).filter((c) => c && c !== 'visited').join(' '),
    e.children.length ? '' : e.textContent.trim(), (e.getAttribute('style') || '').replace(/\s+/g, '').replace(/;$/, ''),
  ].join('|'));
}

test('CoDE designs sites live in the Train view: thumbnails, the grid, share links that reproduce the site, and a resume after reload', { timeout: 240_000 }, async () => {
  const { page, errors } = await openApp(app.context, `${app.server.url}#/train`);
  await page.selectOption('#train-agent', 'navigator');
  assert.equal(await page.isVisible('#curriculum'), false, 'the curriculum view is for adversarial runs');
  const kinds = await page.$$eval('#train-generator option', (os) => os.map((o) => o.value));
  assert.deepEqual(kinds.filter((k) => k.startsWith('adversary:')),
    ['adversary:paired', 'adversary:flexible_paired', 'adversary:flexible_b_paired', 'adversary:code', 'adversary:alp']);
  await page.selectOption('#train-generator', 'adversary:flexible_b_paired');
  assert.equal(await page.inputValue('#train-adv-alpha'), '1.25', 'AEG A.8');
  await page.selectOption('#train-generator', 'adversary:code');
  assert.deepEqual([await page.inputValue('#train-adv-alpha'), await page.inputValue('#train-adv-beta'), await page.inputValue('#train-adv-delta')],
    ['0.9', '0', '0'], 'the config\'s defaults are shown');
  assert.match(await page.textContent('#train-generator-note'), /population of 2 navigators/);
  assert.equal(await page.isVisible('#curriculum'), true);

  // A constant out of range is named by the learner, and nothing runs.
  await page.fill('#train-adv-alpha', '1.5');
  await page.fill('#train-nav-frames', '200000'); // never reached: the test stops the run
  await page.fill('#train-judge-every', '5');
  await page.fill('#train-judge-seeds', '2');
  await page.selectOption('#train-backend', 'cpu');
  await page.click('#train-start');
  await page.waitForFunction(() => /Training stopped: bad training request: its generator: CoDE's alpha/.test(document.getElementById('message').textContent), null, WAIT);
  await page.fill('#train-adv-alpha', '0.9');

  await page.click('#train-start');
  // The run starts once the tab holds the run's lock (docs/security.md: one writer per run).
  await page.waitForFunction(() => document.getElementById('train-generator').disabled, null, WAIT);
  assert.equal(await page.isDisabled('#train-generator'), true, 'the generator is fixed while a run goes on');
  assert.equal(await page.isDisabled('#train-adv-alpha'), true);

  // The generated sites: on the training page, and the newest as thumbnails.
  const handle = await page.waitForSelector('#extra-frames iframe:not([hidden])', { state: 'attached' });
  const frame = await handle.contentFrame();
  await frame.waitForSelector('#gsite', { state: 'attached', timeout: 120_000 });
  await page.waitForFunction(() => document.querySelectorAll('#cur-designs .cur-design').length >= 2, null, WAIT);
  assert.match(await page.textContent('#cur-note'), /^CoDE: 2 navigators, M = 2 episodes each per design, α = 0\.9, β = 0, δ = 0; K = 4 pages, N = 24 slots/);
  const thumbs = await page.$$eval('#cur-designs .cur-design', (cards) => cards.map((c) => ({
    iteration: Number(c.dataset.iteration),
    sandbox: c.querySelector('iframe').getAttribute('sandbox'),
    site: Boolean(c.querySelector('iframe').contentDocument?.getElementById('gsite')),
    caption: c.querySelector('figcaption').textContent,
  })));
  for (const t of thumbs) {
    assert.equal(t.sandbox, 'allow-same-origin', 'no script runs in a thumbnail');
    assert.ok(t.site, `thumbnail ${t.iteration} renders its site`);
    assert.match(t.caption, /^#\d+ \d pages?, \d+ primitives \(\d+ active\), seed \d+/);
  }
  assert.ok(thumbs[0].iteration > thumbs.at(-1).iteration, 'newest first');

  // The success grid of the population's best navigator, and each navigator's mean.
  await page.waitForFunction(() => document.querySelectorAll('#nav-grid tbody td').length === 20, null, WAIT);
  assert.match(await page.textContent('#nav-grid-note'), /judged greedily on 2 unseen seeds per cell, on the site simulator\. The population's best, navigator [01]; mean per navigator: \d+% \/ \d+%\./);
  assert.ok((await count(page, 'tr-iterations')) >= 2);
  const charted = await page.evaluate(() => document.getElementById('chart-adv-budget').width > 0);
  assert.ok(charted, 'the budget chart is drawn');
  await page.screenshot({ path: join(shots, 'adversary-training.png'), fullPage: true });

  // A thumbnail's share link opens the same site in the Design view (a fresh browser, so the
  // saved run does not resume there).
  // (Read in one go, once its preview has loaded: newer designs replace the cards as the run
  // goes on.)
  const { href, expected } = await (await page.waitForFunction((sig) => {
    const c = document.querySelector('#cur-designs .cur-design');
    const doc = c?.querySelector('iframe').contentDocument;
    if (!doc?.getElementById('gsite')) return null;
    return { href: c.querySelector('a.cur-share').href, expected: new Function('doc', `return (${sig})(doc)`)(doc) };
  }, siteSignature.toString(), WAIT)).jsonValue();
  assert.match(href, /#s=/);
  assert.ok(expected.length > 3, `the thumbnail has a site: ${expected.length} elements`);
  const other = await launch();
  try {
    const shared = await openApp(other, href);
    await shared.page.waitForFunction(() => /Opened the shared site/.test(document.getElementById('message').textContent), null, WAIT);
    const live = shared.page.frameLocator('#task-frame');
    await live.locator('#gsite').waitFor({ state: 'attached', timeout: 60_000 });
    const got = await shared.page.locator('#task-frame').evaluate(
      (f, sig) => new Function('doc', `return (${sig})(doc)`)(f.contentDocument), siteSignature.toString());
    assert.deepEqual(got, expected, 'the share link reproduces the site');
    await shared.page.screenshot({ path: join(shots, 'adversary-shared-design.png') });
  } finally {
    await other.close();
  }

  // A snapshot reaches IndexedDB; the run is paused; a reload resumes it paused, with its
  // generator and its curriculum, and shows its restored counters before it takes a step.
  await page.waitForFunction(() => /Run saved in this browser at step [\d,]+ \(every navigator and the adversary/.test(document.getElementById('model-note').textContent), null, WAIT);
  await page.click('#train-pause');
  await page.waitForFunction(async () => (await (await import('/www/store.js')).load('run'))?.status === 'paused', null, WAIT);
  await page.reload();
  await page.waitForFunction(() => document.body.dataset.ready === 'true', null, WAIT);
  await page.waitForFunction(() => /Resumed the training run saved at step/.test(document.getElementById('message').textContent), null, WAIT);
  const saved = Number((await page.textContent('#message')).match(/step ([\d,]+)/)[1].replace(/,/g, ''));
  assert.equal(await page.inputValue('#train-generator'), 'adversary:code');
  assert.equal(await page.inputValue('#train-adv-alpha'), '0.9');
  assert.ok(await page.$$eval('#cur-designs .cur-design', (c) => c.length) >= 1, 'the saved designs show again');
  await page.waitForFunction(() => /^Paused on /.test(document.getElementById('train-status').textContent), null, WAIT);
  assert.ok((await count(page, 'tr-iterations')) > 0 && (await count(page, 'tr-episodes')) > 0, 'the restored iterations and episodes show while paused');
  assert.equal(await count(page, 'tr-steps'), saved, 'paused: not a step taken since the snapshot');
  assert.equal(await page.textContent('#train-pause'), 'Resume');
  await page.click('#train-pause');
  await page.waitForFunction((n) => Number(document.getElementById('tr-steps').textContent.replace(/,/g, '')) > n, saved, WAIT);
  const resumedAt = await count(page, 'tr-steps');
  assert.ok(resumedAt >= saved, `resumed at ${resumedAt} env steps, saved at ${saved}`);
  const firstIteration = await page.$eval('#cur-designs .cur-design', (c) => Number(c.dataset.iteration));
  await page.waitForFunction((n) => Number(document.querySelector('#cur-designs .cur-design')?.dataset.iteration) > n, firstIteration, WAIT);

  // Stop; then a damaged snapshot of the run is refused with a message, and nothing runs.
  await page.click('#train-stop');
  await page.waitForFunction(() => /^Finished: /.test(document.getElementById('train-status').textContent), null, WAIT);
  const finished = Number((await page.textContent('#train-status')).match(/^Finished: ([\d,]+) env steps/)[1].replace(/,/g, ''));
  // The run's last snapshot and its status are written (so nothing overwrites what follows).
  await page.waitForFunction(async (n) => {
    const r = await (await import('/www/store.js')).load('run');
    return r && r.status === 'done' && r.env_steps === n;
  }, finished, WAIT);
  await page.evaluate(async () => {
    const store = await import('/www/store.js');
    const r = await store.load('run');
    await store.save('run', { ...r, status: 'running', bytes: r.bytes.slice(0, 200) });
  });
  await page.reload();
  await page.waitForFunction(() => /could not be resumed: .*(damaged|ends too early)/.test(document.getElementById('message').textContent), null, WAIT);
  assert.equal(await page.isDisabled('#train-start'), false, 'the app stays usable');
  await page.screenshot({ path: join(shots, 'adversary-damaged.png') });
  assert.deepEqual(errors.filter((e) => /panicked|unreachable|RuntimeError/i.test(e)), []);
});

// End-to-end: the shipped gMiniWoB navigators (agents/navigator-code.wln, the best, then
// navigator-cl.wln and navigator-b-paired.wln) in the Watch view of the built app (dist/): all
// offered, best first;
// picked with a test site and level, it acts greedily on login level 0 with its
// choice drawn over the page, fills the site's fields with the profile's values, and the episodes
// and successes are counted; the watched episodes agree with judging on the same seeds; a share
// link replays a solved episode; a fast run counts episodes; a damaged .wln is refused and the
// navigator stays; the Design view's "watch a policy" runs it on the design being edited.
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
const manifest = JSON.parse(readFileSync(join(here, '..', '..', 'agents', 'manifest.json'), 'utf8'));

const WAIT = { timeout: 120_000, polling: 50 };
const app = servedApp();
// The shipped navigators, as the manifest lists them, best judged first (their cells are checked
// below); NAV, the first, is the one the views pick.
const NAVS = manifest.agents.filter((a) => a.kind === 'navigator');
const NAV = NAVS[0];
const OFFERED = NAVS.map((n) => `${n.name} (pretrained)`);
const pct = (x) => Math.round(100 * x);

const text = (page, sel) => page.evaluate((s) => document.querySelector(s).textContent, sel);

// The canvas over the page has something drawn on it.
const overlayDrawn = (page) => page.evaluate(() => {
  const c = document.getElementById('overlay');
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  for (let i = 3; i < d.length; i += 4) if (d[i] > 0) return true;
  return false;
});

test("the manifest ships CoDE's, CL's and Flexible b-PAIRED's navigators beside the DOM-Q-Net agents, best judged first", () => {
  assert.deepEqual(NAVS.map((n) => n.file), ['navigator-code.wln', 'navigator-cl.wln', 'navigator-b-paired.wln']);
  assert.match(NAVS[0].trained_on, /^CoDE, seed \d+$/);
  assert.match(NAVS[1].trained_on, /^CL, seed \d+$/);
  assert.match(NAVS[2].trained_on, /^Flexible b-PAIRED, seed \d+$/);
  for (const nav of NAVS) {
    assert.deepEqual(Object.keys(nav.judged.test_sites), ['login', 'address', 'payment', 'flight', 'shopping']);
    for (const levels of Object.values(nav.judged.test_sites)) assert.equal(levels.length, 4);
    const cells = Object.values(nav.judged.test_sites).flat();
    assert.equal(nav.judged.grid_mean, Number((cells.reduce((a, x) => a + x, 0) / cells.length).toFixed(4)));
  }
  for (let i = 1; i < NAVS.length; i++) assert.ok(NAVS[i - 1].judged.grid_mean >= NAVS[i].judged.grid_mean);
  assert.ok(manifest.agents.filter((a) => !a.kind).every((a) => Array.isArray(a.tasks) && a.file.endsWith('.wlq')));
});

test('the Watch view runs the shipped navigator on login level 0: fields filled, episodes and successes counted', { timeout: 300_000 }, async () => {
  const { page, errors } = await openApp(app.context, `${app.server.url}#/watch`);
  assert.equal(await page.isHidden('#message'), true, await text(page, '#message'));
  if ((await text(page, '#play')) === 'Pause') await page.click('#play');

  // The navigator's controls replace the task picker and the step cap.
  assert.equal(await page.isVisible('#watch-site'), false);
  await page.selectOption('#policy', 'navigator');
  assert.equal(await page.isVisible('#watch-site'), true);
  assert.equal(await page.isVisible('#task'), false, 'no MiniWoB task picker for the navigator');
  assert.equal(await page.isVisible('#max-steps'), false, 'a generated site ends at its own step limit');
  assert.deepEqual(await page.$$eval('#watch-navigator option', (os) => os.map((o) => o.textContent)), OFFERED);
  assert.deepEqual(await page.$$eval('#watch-site option', (os) => os.map((o) => o.value)), ['login', 'address', 'payment', 'flight', 'shopping']);
  await page.selectOption('#watch-site', 'login');
  await page.selectOption('#watch-level', '0');
  await page.fill('#seed', '1');
  await page.click('#new-episode');
  await page.waitForFunction(() => /site seed/.test(document.getElementById('steps-title').textContent), null, WAIT);
  const login = NAV.judged.test_sites.login.map(pct).join('/');
  assert.equal(await text(page, '#agent-note'), `Pretrained navigator "navigator-code": trained on ${NAV.trained_on}, `
    + `${NAV.updates.toLocaleString('en-US')} updates, ${NAV.env_steps.toLocaleString('en-US')} env steps. Judged greedily on the live DOM `
    + `(50 unseen seeds per cell, levels 0–3): login ${login}%, address ${NAV.judged.test_sites.address.map(pct).join('/')}%, `
    + `payment ${NAV.judged.test_sites.payment.map(pct).join('/')}%, flight ${NAV.judged.test_sites.flight.map(pct).join('/')}%, `
    + `shopping ${NAV.judged.test_sites.shopping.map(pct).join('/')}%.`);
  // Seeds apart from training's (from 0) and judging's (from 2^30).
  assert.equal(await text(page, '#steps-title'), `Steps · seed 1 (site seed ${2 ** 31 + 1})`);
  assert.match(await text(page, '#utterance'), /^login-0: fill in (password: .+ · username: .+|username: .+ · password: .+), then submit\.$/);
  assert.equal(await page.isHidden('#message'), true, await text(page, '#message'));

  // Step through episodes (seed 1, 2, ...) until one is solved; each step draws the choice and
  // names what was set (a value set on a button clicks it, and is named a click). At the end of
  // a solved one the page's fields hold the profile's values.
  const frame = await (await page.$('#task-frame')).contentFrame();
  let solved = null;
  let episodes = 0;
  let shot = false;
  while (episodes < 8 && !solved) {
    if (episodes > 0) {
      await page.fill('#seed', String(1 + episodes));
      await page.click('#new-episode');
      await page.waitForFunction((s) => document.getElementById('steps-title').textContent.startsWith(`Steps · seed ${s} `), 1 + episodes, WAIT);
    }
    const profile = Object.fromEntries((await text(page, '#utterance')).replace(/^login-0: fill in /, '').replace(/, then submit\.$/, '').split(' · ').map((kv) => kv.split(': ')));
    for (let n = 1; n <= 30; n++) {
      await page.click('#step');
      await page.waitForFunction((k) => document.querySelectorAll('#steps li').length >= k && !document.getElementById('new-episode').disabled, n, WAIT);
      const last = await page.$eval('#steps li:last-child', (li) => li.textContent);
      assert.match(last, /^(set \S+( ".*")? #\d+ to ".*" \((username|password)\)|click \S+( ".*")? #\d+( \((username|password)\))?) · p (0|1)\.\d\d$|^the navigator had no open choice$/, last);
      if (!last.startsWith('the navigator')) assert.equal(await overlayDrawn(page), true, 'the choice is drawn over the page');
      if (!shot && /^set /.test(last)) {
        await page.screenshot({ path: join(shots, 'watch-navigator.png') });
        shot = true;
      }
      if (await text(page, '#episode-outcome')) break;
    }
    const outcome = await text(page, '#episode-outcome');
    assert.match(outcome, /^(Solved|Not solved): return -?\d+\.\d\d in \d+ steps? \(raw -?\d+\)/);
    episodes++;
    assert.match(await text(page, '#watch-tally'), new RegExp(`^Watched on this site: ${episodes} episodes?, \\d+ solved`));
    if (outcome.startsWith('Solved')) {
      assert.equal(await page.getAttribute('#episode-outcome', 'class'), 'outcome good');
      solved = {
        username: await frame.$eval('#actionable_username', (e) => e.value),
        password: await frame.$eval('#actionable_password', (e) => e.value),
        profile,
      };
    }
  }
  assert.ok(solved, `the shipped navigator (${pct(NAV.judged.test_sites.login[0])}% on login level 0) solved none of ${episodes} episodes`);
  assert.equal(solved.username, solved.profile.username);
  assert.equal(solved.password, solved.profile.password);
  const tally = await page.evaluate(() => window.lab.navigatorTally());
  assert.equal(tally.episodes, episodes);
  assert.ok(tally.successes >= 1);
  await page.screenshot({ path: join(shots, 'watch-navigator-solved.png') });

  // A share link of the solved episode replays its actions (set_value included) on the same site.
  await page.click('#share');
  const link = await page.inputValue('#share-url');
  const replay = await app.context.newPage();
  await openApp(app.context, link, replay);
  await replay.waitForFunction(() => /^Replayed the shared episode/.test(document.getElementById('message-text').textContent), null, WAIT);
  assert.match(await text(replay, '#message-text'), /^Replayed the shared episode: same \d+ actions, same reward \(1\)\.$/);
  await replay.close();

  // The same seeds judged by lab.judgeNavigator: the same successes (one greedy rule, in Rust).
  const judged = await page.evaluate(async (n) => {
    const Lab = window.lab.constructor;
    const spec = { source: 'generated', name: 'login-0', design: Lab.testSiteDesign('login', 0) };
    return window.lab.judgeNavigator(spec, Lab.navigatorWatchSeed(1), n);
  }, episodes);
  assert.equal(judged.episodes, episodes);
  assert.equal(judged.successes, tally.successes, 'watching and judging count the same episodes as solved');

  // Play goes on by itself, episode after episode.
  await page.fill('#speed', '20');
  await page.click('#play');
  await page.waitForFunction((n) => window.lab.navigatorTally().episodes >= n + 2, episodes, WAIT);
  await page.click('#play');
  await page.waitForFunction(() => document.getElementById('play').textContent === 'Play' && !document.getElementById('new-episode').disabled, null, WAIT);

  // A fast run of many episodes: counted in the stats beside the page.
  await page.click('#run');
  await page.waitForFunction(() => Number(document.getElementById('st-episodes').textContent) >= 20, null, WAIT);
  assert.match(await text(page, '#st-status'), /^running navigator on login-0$/);
  await page.click('#stop');
  await page.waitForFunction(() => document.getElementById('st-status').textContent === 'idle', null, WAIT);
  const stats = await page.evaluate(() => window.lab.agentStats());
  assert.ok(stats.stats.episodes >= 20 && stats.stats.successes >= 1, JSON.stringify(stats.stats));

  // A damaged file is refused with a message; the shipped navigator stays and still acts.
  await page.setInputFiles('#watch-nav-file', { name: 'broken.wln', mimeType: 'application/octet-stream', buffer: Buffer.from('WLNAV not really a checkpoint') });
  await page.waitForFunction(() => !document.getElementById('message').hidden, null, WAIT);
  assert.match(await text(page, '#message-text'), /^broken\.wln was not loaded: .+\. The current navigator stays\.$/);
  assert.deepEqual(await page.$$eval('#watch-navigator option', (os) => os.map((o) => o.textContent)), OFFERED);
  await page.click('#new-episode');
  await page.waitForFunction(() => !document.getElementById('new-episode').disabled && !document.getElementById('step').disabled, null, WAIT);
  await page.click('#step');
  await page.waitForFunction(() => document.querySelectorAll('#steps li').length === 1, null, WAIT);

  // Its own file (here the shipped checkpoint's bytes under another name) becomes the navigator.
  const bytes = readFileSync(join(here, '..', '..', 'agents', 'navigator-code.wln'));
  await page.setInputFiles('#watch-nav-file', { name: 'mine.wln', mimeType: 'application/octet-stream', buffer: bytes });
  await page.waitForFunction(() => /Loaded the navigator mine\.wln/.test(document.getElementById('message-text').textContent), null, WAIT);
  assert.equal(await page.inputValue('#watch-navigator'), 'own');
  await page.waitForFunction(() => /^Your navigator "mine\.wln"/.test(document.getElementById('agent-note').textContent), null, WAIT);

  // The second shipped navigator, picked, is the one that acts next.
  await page.selectOption('#watch-navigator', `shipped:${NAVS[1].name}`);
  await page.click('#new-episode');
  await page.waitForFunction(([n, on]) => document.getElementById('agent-note').textContent.startsWith(`Pretrained navigator "${n}": trained on ${on}`), [NAVS[1].name, NAVS[1].trained_on], WAIT);

  // Back to DOM-Q-Net: the task picker returns.
  await page.selectOption('#policy', 'oracle');
  assert.equal(await page.isVisible('#task'), true);
  assert.equal(await page.isVisible('#watch-site'), false);
  assert.deepEqual(errors.filter((e) => /panicked|wasm|TypeError|ReferenceError/i.test(e)), [], 'no errors');
});

test('the Design view watches the navigator on the design being edited', { timeout: 180_000 }, async () => {
  const page = await app.context.newPage();
  const { errors } = await openApp(app.context, `${app.server.url}#/design`, page);
  await page.selectOption('#design-site', 'login');
  await page.selectOption('#design-level', '0');
  await page.click('#design-open');
  await page.waitForFunction(() => document.getElementById('design-status').dataset.busy === 'false', null, WAIT);
  const options = await page.$$eval('#design-policy option', (os) => os.map((o) => o.value));
  assert.ok(options.includes('navigator'), options.join());
  await page.selectOption('#design-policy', 'navigator');
  await page.click('#design-watch');
  await page.waitForFunction(() => /Episode over/.test(document.getElementById('design-outcome').textContent), null, WAIT);
  assert.match(await text(page, '#design-status-title'), /^Watching the navigator · seed \d+$/);
  assert.match(await text(page, '#design-play-note'), /^Pretrained navigator "navigator-code"/);
  const steps = await page.$$eval('#design-steps li', (lis) => lis.map((li) => li.textContent));
  assert.ok(steps.length >= 1);
  for (const s of steps) assert.match(s, / · p (0|1)\.\d\dr [+−±]\d\.\d\d · Φ \d\.\d\d$/, s);
  assert.equal(await overlayDrawn(page), true, 'the last choice is drawn over the page');
  await page.screenshot({ path: join(shots, 'design-navigator.png') });
  assert.deepEqual(errors.filter((e) => /panicked|wasm|TypeError|ReferenceError/i.test(e)), [], 'no errors');
  await page.close();
});

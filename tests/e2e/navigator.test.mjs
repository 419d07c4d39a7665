// End-to-end: the gMiniWoB navigator trained in the Train view of the built app (dist/), on the
// CPU, on the fixed test site login-0: a bad setting is named, the site renders in the training
// frame, progress and the success grid appear, a reload resumes the run from its snapshot (not
// from step 0), the exported .wln checkpoint loads with lab.loadNavigator, and Stop ends the run.
// DOM-Q-Net's controls come back when its agent is chosen again.
// Run by scripts/test.sh after `trunk build`: node --test tests/e2e/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openApp } from './browser.mjs';
import { servedApp } from './fixture.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const shots = join(here, 'artifacts');
mkdirSync(shots, { recursive: true });

const WAIT = { timeout: 120_000, polling: 100 };
const app = servedApp();

const count = (page, id) => page.evaluate((i) => Number(document.getElementById(i).textContent.replace(/,/g, '')), id);

// The training frame: the one task page of a navigator run, shown in the Train view.
async function trainingFrame(page) {
  const handle = await page.waitForSelector('#extra-frames iframe:not([hidden])', { state: 'attached' });
  return { handle, frame: await handle.contentFrame() };
}

// A screenshot with the site showing: between episodes (and while the learner updates) the page
// shows its START cover, so shoot until one is taken within a single live episode.
async function shoot(page, frame, name) {
  const live = () => frame.evaluate(() => (getComputedStyle(document.getElementById('sync-task-cover')).display === 'none' ? window.WOB_EPISODE_ID : null)).catch(() => null);
  for (let i = 0; i < 40; i++) {
    const before = await live();
    if (before === null) { await page.waitForTimeout(25); continue; }
    const shot = await page.screenshot({ fullPage: true });
    if ((await live()) === before) { writeFileSync(join(shots, name), shot); return; }
  }
  await page.screenshot({ path: join(shots, name), fullPage: true });
}

test('the navigator trains on login-0 in the Train view, resumes after a reload, exports a checkpoint that loads, and stops', { timeout: 300_000 }, async () => {
  const { page, errors } = await openApp(app.context, `${app.server.url}#/train`);
  assert.equal(await page.isHidden('#message'), true, await page.textContent('#message'));

  // DOM-Q-Net is the default; choosing the navigator swaps the controls.
  assert.equal(await page.inputValue('#train-agent'), 'dom-q-net');
  assert.equal(await page.isVisible('#train-tasks'), true);
  await page.selectOption('#train-agent', 'navigator');
  assert.equal(await page.isVisible('#train-tasks'), false, 'no MiniWoB task list for the navigator');
  assert.equal(await page.isVisible('#task'), false, 'no MiniWoB task picker for the navigator');
  assert.equal(await page.isVisible('#train-generator'), true);
  assert.equal(await page.isVisible('#train-site'), false, 'the site picker is for "one test site" only');
  await page.selectOption('#train-generator', 'site');
  const sites = await page.$$eval('#train-site option', (os) => os.map((o) => o.value));
  assert.deepEqual(sites, ['login', 'address', 'payment', 'flight', 'shopping']);
  await page.selectOption('#train-site', 'login');
  await page.selectOption('#train-level', '0');
  await page.fill('#train-nav-frames', '200000'); // never reached: the test stops the run
  await page.fill('#train-judge-every', '5');
  await page.fill('#train-judge-seeds', '2');
  await page.selectOption('#train-backend', 'cpu');

  // A bad setting is named (by NavigatorConfig::validate) and Start refuses it.
  await page.click('#nav-hyper summary');
  assert.equal(await page.inputValue('#nav-fields [data-key=entropy_coef]'), '0.05', 'the defaults come from Lab.defaultNavigatorConfig()');
  assert.equal(await page.inputValue('#nav-fields [data-key=adam_epsilon]'), '1e-8', 'an f32 shows as written');
  // The centre column names the learner the config's head picks.
  assert.equal(await page.textContent('#train-nav-learner'), 'A2C, the papers\' learner');
  await page.fill('#nav-fields [data-key=head]', 'dqn');
  await page.dispatchEvent('#nav-fields [data-key=head]', 'change');
  assert.equal(await page.textContent('#train-nav-learner'), 'DQN, the reference code\'s head');
  await page.fill('#nav-fields [data-key=head]', 'a2c');
  await page.dispatchEvent('#nav-fields [data-key=head]', 'change');
  assert.equal(await page.textContent('#train-nav-learner'), 'A2C, the papers\' learner');
  await page.fill('#nav-fields [data-key=latent_dim]', '0');
  await page.dispatchEvent('#nav-fields [data-key=latent_dim]', 'change');
  assert.match(await page.textContent('#nav-error'), /latent_dim must be 1 to 1024, not 0/);
  assert.equal(await page.getAttribute('#nav-fields [data-key=latent_dim]', 'class'), 'invalid');
  await page.fill('#nav-fields [data-key=max_tokens]', '2.5');
  await page.dispatchEvent('#nav-fields [data-key=max_tokens]', 'change');
  assert.match(await page.textContent('#nav-error'), /^max_tokens: /, 'a value of the wrong type is named too');
  await page.click('#train-start');
  // Start first waits for the run's lock (async), then checks the settings.
  await page.waitForFunction(() => document.getElementById('message-text').textContent !== '', null, WAIT);
  assert.match(await page.textContent('#message-text'), /Fix the highlighted navigator setting/);
  assert.equal(await page.isDisabled('#train-stop'), true, 'nothing started');
  await page.click('#nav-reset');
  assert.equal(await page.isHidden('#nav-error'), true);

  await page.click('#train-start');
  // The run starts once the tab holds the run's lock (docs/security.md: one writer per run).
  await page.waitForFunction(() => document.getElementById('train-agent').disabled, null, { timeout: 60_000 });
  assert.equal(await page.isDisabled('#train-agent'), true, 'the agent is fixed while a run goes on');

  // The generated login site renders in the training frame, visible in this view.
  const { handle, frame } = await trainingFrame(page);
  await frame.waitForSelector('#actionable_username', { state: 'attached', timeout: 120_000 });
  await frame.waitForSelector('#actionable_password', { state: 'attached' });
  const box = await handle.boundingBox();
  // (Other views park their pages far to the left; y depends on how far the page scrolled.)
  assert.ok(box && box.x >= 0 && box.width >= 500, `the training frame is on screen: ${JSON.stringify(box)}`);

  // Progress: iterations and env steps grow; the backend is the CPU.
  await page.waitForFunction(() => Number(document.getElementById('tr-iterations').textContent.replace(/,/g, '')) >= 2, null, WAIT);
  const steps1 = await count(page, 'tr-steps');
  const its1 = await count(page, 'tr-iterations');
  assert.ok(steps1 > 0, `env steps: ${steps1}`);
  await page.waitForFunction((n) => Number(document.getElementById('tr-iterations').textContent.replace(/,/g, '')) > n, its1, WAIT);
  assert.ok((await count(page, 'tr-steps')) > steps1, 'env steps grow');
  assert.equal(await page.textContent('#tr-backend'), 'CPU');
  assert.match(await page.textContent('#train-status'), /site login-0|judging/);
  assert.match(await page.textContent('#tr-design'), /^1 page, 3 primitives, 2 fields$/, 'login level 0: username, password, submit');
  assert.ok((await count(page, 'tr-vocab')) > 0);

  // The success grid: 5 test sites x 4 levels, each a percentage, with what it was judged on.
  await page.waitForFunction(() => document.querySelectorAll('#nav-grid tbody td').length === 20, null, WAIT);
  const cells = await page.$$eval('#nav-grid tbody td', (tds) => tds.map((td) => ({ text: td.textContent, value: Number(td.dataset.value), bg: td.style.background })));
  for (const c of cells) {
    assert.ok(c.value >= 0 && c.value <= 1 && c.text === `${Math.round(100 * c.value)}%` && c.bg, JSON.stringify(c));
  }
  assert.deepEqual(await page.$$eval('#nav-grid tbody th', (ths) => ths.map((th) => th.textContent)), sites);
  assert.match(await page.textContent('#nav-grid-note'), /judged greedily on 2 unseen seeds per cell, on the site simulator/);

  // A snapshot reaches IndexedDB (every 10 s), then a reload resumes the run from it.
  await page.waitForFunction(() => /Run saved in this browser at step/.test(document.getElementById('model-note').textContent), null, WAIT);
  await shoot(page, frame, 'navigator-training.png');
  await page.reload();
  await page.waitForFunction(() => document.body.dataset.ready === 'true', null, WAIT);
  await page.waitForFunction(() => /Resumed the training run saved at step/.test(document.getElementById('message').textContent), null, WAIT);
  const saved = Number((await page.textContent('#message')).match(/step ([\d,]+)/)[1].replace(/,/g, ''));
  assert.ok(saved > 0, `saved at ${saved}`);
  assert.equal(await page.inputValue('#train-agent'), 'navigator', 'the resumed run is the navigator\'s');
  assert.equal(await page.inputValue('#train-generator'), 'site');
  assert.equal(await page.inputValue('#train-site'), 'login');
  assert.equal(await page.inputValue('#train-level'), '0');
  assert.equal(await page.inputValue('#train-judge-seeds'), '2');
  assert.equal(await page.inputValue('#train-backend'), 'cpu');
  // The first progress after the reload: env steps from the saved count on, not from 0.
  await page.waitForFunction(() => Number(document.getElementById('tr-iterations').textContent.replace(/,/g, '')) > 0, null, WAIT);
  const resumedAt = await count(page, 'tr-steps');
  assert.ok(resumedAt >= saved, `resumed at ${resumedAt} env steps, saved at ${saved}`);
  await page.waitForFunction((n) => Number(document.getElementById('tr-steps').textContent.replace(/,/g, '')) > n, resumedAt, WAIT);
  await page.waitForFunction(() => document.querySelectorAll('#nav-grid tbody td').length === 20, null, WAIT);
  const again = await trainingFrame(page);
  await again.frame.waitForSelector('#actionable_username', { state: 'attached', timeout: 120_000 });
  await shoot(page, again.frame, 'navigator-resumed.png');

  // Export the checkpoint (.wln) while training; it loads with lab.loadNavigator.
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: 120_000 }), page.click('#export-ckpt')]);
  assert.match(download.suggestedFilename(), /^weblab-navigator-site_login-0-\d+\.wln$/);
  const bytes = readFileSync(await download.path());
  const header = await page.evaluate((b) => window.lab.loadNavigator(new Uint8Array(b)), [...bytes]);
  assert.equal(header.trained_on, 'site login-0');
  assert.ok(header.counters.env_steps >= saved, `checkpoint at ${header.counters.env_steps} env steps`);
  assert.ok(header.parameters > 0 && header.vocabulary > 0);

  // Stop: the run ends and the controls are free again.
  await page.click('#train-stop');
  await page.waitForFunction(() => /^Finished: /.test(document.getElementById('train-status').textContent), null, WAIT);
  assert.equal(await page.isDisabled('#train-start'), false);
  assert.equal(await page.isDisabled('#train-stop'), true);
  assert.equal(await page.isDisabled('#train-agent'), false);
  assert.equal(await page.isDisabled('#export-ckpt'), false, 'the last snapshot stays exportable');

  // The other views keep their task picker; the Train view comes back in the navigator's mode.
  await page.click('nav a[data-view=watch]');
  assert.equal(await page.isVisible('#task'), true);
  await page.click('nav a[data-view=train]');
  assert.equal(await page.isVisible('#task'), false);
  assert.equal(await page.isVisible('#nav-grid'), true);

  // DOM-Q-Net's controls come back.
  await page.selectOption('#train-agent', 'dom-q-net');
  assert.equal(await page.isVisible('#train-tasks'), true);
  assert.equal(await page.isVisible('#task'), true);
  assert.equal(await page.isVisible('#train-generator'), false);
  assert.equal(await page.isVisible('#nav-grid-box'), false);
  assert.equal(await page.isVisible('#chart-success'), true);
  assert.equal(await page.textContent('#train-status'), 'Not training.', 'the navigator\'s finished run leaves the screen');
  assert.equal(await page.isVisible('#extra-frames iframe'), false);
  assert.equal(await page.isDisabled('#export-ckpt'), true, 'no DOM-Q-Net model to export');
  await page.screenshot({ path: join(shots, 'navigator-then-dqn.png'), fullPage: true });
  const learnerErrors = errors.filter((e) => /learner|worker|wasm|panicked|error/i.test(e));
  assert.deepEqual(learnerErrors, [], 'no errors');
});

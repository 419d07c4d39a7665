// Screenshots of every view in each state, as a person sees them, for looking at after a UI
// change: 1280x800 and a 390 px wide phone window. Not a test (it asserts nothing); the files go
// to tests/e2e/artifacts/screens/. Usage, after `trunk build`:
//   [WEBLAB_DIST=dist] node tests/e2e/screenshots.mjs
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch, openApp } from './browser.mjs';
import { DIST, serve } from './serve.mjs';

const out = join(dirname(fileURLToPath(import.meta.url)), 'artifacts', 'screens');
mkdirSync(out, { recursive: true });
const WAIT = { timeout: 120_000, polling: 100 };
const server = await serve(DIST);

for (const [size, viewport] of [['1280', { width: 1280, height: 800 }], ['390', { width: 390, height: 844 }]]) {
  const context = await launch(viewport);
  const shot = (page, name) => page.screenshot({ path: join(out, `${size}-${name}.png`), fullPage: size === '390' });
  const { page } = await openApp(context, `${server.url}#/watch`);
  // Watch: on opening (the pretrained agent plays), mid-episode, and at an episode's end.
  await shot(page, 'watch-opening');
  if ((await page.textContent('#play')) === 'Pause') await page.click('#play');
  await page.waitForFunction(() => document.getElementById('play').textContent === 'Play', null, WAIT);
  await page.selectOption('#task', 'login-user');
  await page.selectOption('#policy', 'oracle');
  await page.waitForFunction(() => /^Steps · seed/.test(document.getElementById('steps-title').textContent) && !document.getElementById('step').disabled, null, WAIT);
  await page.click('#step');
  await page.waitForFunction(() => document.getElementById('steps').children.length >= 1 && !document.getElementById('step').disabled, null, WAIT);
  await shot(page, 'watch-during');
  for (let i = 0; i < 10 && !(await page.textContent('#episode-outcome')); i++) {
    await page.waitForFunction(() => !document.getElementById('step').disabled || document.getElementById('episode-outcome').textContent, null, WAIT);
    if (await page.textContent('#episode-outcome')) break;
    await page.click('#step');
  }
  await shot(page, 'watch-ended');
  await page.selectOption('#policy', 'navigator');
  await page.waitForFunction(() => /site seed/.test(document.getElementById('steps-title').textContent), null, WAIT);
  for (let i = 0; i < 20 && !(await page.textContent('#episode-outcome')); i++) {
    await page.waitForFunction(() => !document.getElementById('step').disabled || document.getElementById('episode-outcome').textContent, null, WAIT);
    if (await page.textContent('#episode-outcome')) break;
    await page.click('#step');
  }
  await shot(page, 'watch-navigator-ended');
  await page.selectOption('#policy', 'random');
  await page.selectOption('#task', 'click-button');
  await page.waitForFunction(() => !document.getElementById('run').disabled, null, WAIT);
  await page.click('#run');
  await page.waitForFunction(() => Number(document.getElementById('st-episodes').textContent) >= 20, null, WAIT);
  await page.click('#stop');
  await page.waitForFunction(() => !document.getElementById('run').disabled, null, WAIT);
  await shot(page, 'watch-fast-run-ended');

  // Train: before a run, starting, during and after a short one.
  await page.click('nav a[data-view=train]');
  await shot(page, 'train-before');
  await page.click('#train-paper-set');
  await shot(page, 'train-before-9-tasks');
  for (const b of await page.$$('#train-tasks input:checked')) await b.uncheck();
  await page.check('#train-tasks input[value=click-button]');
  await page.fill('#train-frames', '400');
  await page.click('#train-start');
  await shot(page, 'train-starting');
  await page.waitForFunction(() => Number(document.getElementById('tr-steps').textContent.replace(/,/g, '')) >= 20, null, { timeout: 300_000, polling: 200 });
  await shot(page, 'train-during');
  await page.waitForFunction(() => /^Finished|Stopped/.test(document.getElementById('train-status').textContent), null, { timeout: 300_000, polling: 500 });
  await shot(page, 'train-after');

  // Play, before and during a recording; the Tasks gallery; the Design view.
  await page.click('nav a[data-view=play]');
  await shot(page, 'play-before');
  await page.click('#rec-start');
  await page.waitForFunction(() => !document.getElementById('rec-next').disabled, null, WAIT);
  await shot(page, 'play-recording');
  await page.click('nav a[data-view=tasks]');
  await shot(page, 'tasks');
  await page.click('nav a[data-view=design]');
  await page.waitForTimeout(1500);
  await shot(page, 'design');
  await context.close();
}
await server.close();
console.log(`screenshots in ${out}`);

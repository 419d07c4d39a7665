// Benchmark (not a test): an adversarial run in the built app's Train view, in headless Chromium
// on the CPU backend, for a while; prints every 30 s the iterations (designs), env steps and
// navigator updates with their rates as the view shows them, and the success grid's note.
// Usage: node tests/e2e/bench-adversary-tab.mjs [OBJECTIVE (code)] [SECONDS (120)] [JUDGE_SEEDS (10)]
// after `trunk build` (or WEBLAB_DIST=DIR); the seed is the seed box's default (1).
import { launch, openApp } from './browser.mjs';
import { DIST, serve } from './serve.mjs';

const [objective = 'code', seconds = '120', judgeSeeds = '10'] = process.argv.slice(2);
const server = await serve(DIST);
const context = await launch();
try {
  const { page } = await openApp(context, `${server.url}#/train`);
  await page.selectOption('#train-agent', 'navigator');
  await page.selectOption('#train-generator', `adversary:${objective}`);
  await page.fill('#train-nav-frames', '100000000');
  await page.fill('#train-judge-every', '30');
  await page.fill('#train-judge-seeds', judgeSeeds);
  await page.selectOption('#train-backend', 'cpu');
  const t0 = Date.now();
  await page.click('#train-start');
  const read = () => page.evaluate(() => ({
    iterations: document.getElementById('tr-iterations').textContent,
    steps: document.getElementById('tr-steps').textContent,
    updates: document.getElementById('tr-updates').textContent,
    status: document.getElementById('train-status').textContent,
    grid: document.getElementById('nav-grid-note').textContent,
  }));
  for (let t = 30; t <= Number(seconds); t += 30) {
    await page.waitForTimeout(Math.max(0, t * 1000 - (Date.now() - t0)));
    const r = await read();
    console.log(`[${t} s] ${r.iterations} designs, ${r.steps} env steps, ${r.updates} navigator updates | ${r.status} | grid: ${r.grid}`);
  }
} finally {
  await context.close();
  await server.close();
}

// Benchmark (not a test): the Workflows (WGE) view as a person would use it, in headless Chromium.
// The scripted oracle plays DEMOS seeds of TASK (from seed 1), then the workflow policy explores
// N episodes without showing them (seeds from DEMOS + 1), with the neural policy (DOMNet) learning
// from its successes and judged greedily on 5 held-out seeds every 10 episodes. Prints the wall
// clock and what the view reports.
//   node tests/e2e/bench-wge-view.mjs   (env: TASK=login-user DEMOS=3 N=400 NEURAL=1 WEBLAB_DIST=dist)
import { openApp, launch } from './browser.mjs';
import { DIST, serve } from './serve.mjs';

const TASK = process.env.TASK || 'login-user';
const DEMOS = Number(process.env.DEMOS || 3);
const N = Number(process.env.N || 400);
const NEURAL = process.env.NEURAL !== '0';

const server = await serve(DIST, 0);
const ctx = await launch();
try {
  const { page, errors } = await openApp(ctx, `${server.url}#/wge`);
  await page.selectOption('#task', TASK);
  await page.fill('#seed', '1');
  await page.fill('#wge-scripted-count', String(DEMOS));
  await page.click('#wge-scripted');
  await page.waitForFunction((n) => document.querySelectorAll('#wge-demos .wge-demo').length === n || document.getElementById('message-text').textContent, DEMOS, { timeout: 120_000 });
  const demos = await page.evaluate(() => document.querySelectorAll('#wge-demos .wge-demo').length);
  if (demos !== DEMOS) throw new Error(`the oracle's demonstrations: ${await page.evaluate(() => document.getElementById('message-text').textContent)}`);
  if (NEURAL) await page.check('#wge-neural');
  await page.uncheck('#wge-show');
  await page.fill('#wge-episodes', String(N));
  const t0 = Date.now();
  await page.click('#wge-explore');
  await page.waitForFunction(() => !document.getElementById('wge-explore').disabled, null, { timeout: 3_600_000, polling: 250 });
  const secs = (Date.now() - t0) / 1000;
  const r = await page.evaluate(() => ({
    tally: window.wgeView.tally(),
    neural: document.getElementById('wge-neural-note').textContent,
    message: document.getElementById('message-text').textContent,
  }));
  console.log(`${TASK}: ${DEMOS} scripted demonstrations (seeds 1-${DEMOS}), ${N} exploration episodes (seeds ${DEMOS + 1}-${DEMOS + N}) in ${secs.toFixed(1)} s (${(N / secs).toFixed(1)} episodes/s)`);
  console.log(`workflow policy: ${r.tally.successes}/${r.tally.episodes} successes, last ${r.tally.window}: ${(100 * r.tally.recent_success).toFixed(0)}%`);
  if (NEURAL) console.log(r.neural);
  if (r.message) console.log(`message: ${r.message}`);
  if (errors.length) console.log('page errors:', errors);
} finally {
  await ctx.close();
  await server.close();
}

// Environment benchmark (a command, not a test): episodes/s and steps/s of the random and oracle
// policies on chosen tasks, through the real iframe environment in headless Chromium.
// Usage: node tests/e2e/bench-env.mjs [episodes] [task ...]   (after `trunk build`; see scripts/bench-env.sh)
import { DIST, serve } from './serve.mjs';
import { launch, openApp } from './browser.mjs';

const episodes = Number(process.argv[2] || 500);
const tasks = process.argv.slice(3).length ? process.argv.slice(3) : ['click-button', 'enter-text'];

const server = await serve(DIST);
const context = await launch();
try {
  const { page } = await openApp(context, server.url);
  // The watch view starts a pretrained agent on opening: pause it so the benchmark runs alone.
  if ((await page.textContent('#play')) === 'Pause') await page.click('#play');
  const rows = [];
  for (const task of tasks) {
    for (const policy of ['random', 'oracle']) {
      // Warm up (page load, JIT), then measure.
      const stats = await page.evaluate(async ({ task, policy, episodes }) => {
        window.lab.setConfig({ max_steps: 20, hold_clock: true });
        await window.lab.runAgent(task, policy, 1000, 30);
        return (await window.lab.runAgent(task, policy, 1, episodes)).stats;
      }, { task, policy, episodes });
      rows.push({ task, policy, episodes: stats.episodes, steps: stats.steps,
        'episodes/s': stats.episodes_per_s.toFixed(1), 'steps/s': stats.steps_per_s.toFixed(1),
        'success %': (100 * stats.successes / stats.episodes).toFixed(1) });
    }
  }
  const ua = await page.evaluate(() => navigator.userAgent);
  console.log(`weblab environment benchmark — ${ua.match(/Chrome\/[\d.]+/)?.[0] ?? ua}, ${episodes} episodes per row, max 20 steps`);
  console.table(rows);
} finally {
  await context.close();
  await server.close();
}

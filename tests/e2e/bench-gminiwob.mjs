// gMiniWoB benchmark (a command, not a test): env steps/s and episodes/s of the random and the
// scripted-oracle policy on each test site at level 3 and on random designs (the papers' Domain
// Randomization), through the live iframe environment in headless Chromium; and each test
// site's DOM and instruction size beside the CoDE paper's Table 1.
// Usage: node tests/e2e/bench-gminiwob.mjs [episodes] [level]   (after `trunk build`; see
// scripts/bench-gminiwob.sh)
import { DIST, serve } from './serve.mjs';
import { launch, openApp } from './browser.mjs';

const episodes = Number(process.argv[2] || 200);
const level = Number(process.argv[3] ?? 3);
// CoDE (Gur et al.), Table 1: DOM elements / instruction fields of the test sites.
const PAPER = { login: [35, 5], address: [38, 7], payment: [49, 5], flight: [60, 7], shopping: [183, 12] };

const server = await serve(DIST);
const context = await launch();
try {
  const { page } = await openApp(context, server.url);
  // The watch view starts a pretrained agent on opening: pause it so the benchmark runs alone.
  if ((await page.textContent('#play')) === 'Pause') await page.click('#play');
  const { rows, sizes } = await page.evaluate(async ({ episodes, level, PAPER }) => {
    const Lab = window.lab.constructor;
    const lab = window.lab;
    lab.setConfig({ hold_clock: true });
    const rows = [];
    const sizes = [];
    const record = (site, policy, stats) => rows.push({
      site, policy, episodes: stats.episodes, steps: stats.steps,
      'episodes/s': stats.episodes_per_s.toFixed(1), 'steps/s': stats.steps_per_s.toFixed(1),
      'success %': (100 * stats.successes / stats.episodes).toFixed(1),
    });
    for (const name of Lab.testSites().sites) {
      const spec = { source: 'generated', name: `${name}-${level}`, design: Lab.testSiteDesign(name, level) };
      const obs = await lab.reset(spec, 1);
      const doc = document.getElementById('task-frame').contentDocument;
      sizes.push({
        site: name, level,
        'elements (all pages)': doc.querySelectorAll('#area *').length,
        'observed nodes (first page)': obs.dom.nodes.length,
        fields: obs.instruction.fields.length,
        'paper: DOM / fields': PAPER[name].join(' / '),
      });
      for (const policy of ['random', 'oracle']) {
        await lab.runAgent(spec, policy, 1000, 10); // warm up
        record(`${name}-${level}`, policy, (await lab.runAgent(spec, policy, 1, episodes)).stats);
      }
    }
    // Random designs: a new design every episode.
    for (const policy of ['random', 'oracle']) {
      let eps = 0, steps = 0, ok = 0;
      const t0 = performance.now();
      for (let i = 0; i < episodes; i++) {
        const spec = { source: 'generated', name: 'random', design: Lab.randomDesign(i) };
        const s = (await lab.runAgent(spec, policy, i, 1)).stats;
        eps += s.episodes; steps += s.steps; ok += s.successes;
      }
      const dt = (performance.now() - t0) / 1000;
      record('random designs', policy, { episodes: eps, steps, successes: ok, episodes_per_s: eps / dt, steps_per_s: steps / dt });
    }
    return { rows, sizes };
  }, { episodes, level, PAPER });
  const ua = await page.evaluate(() => navigator.userAgent);
  console.log(`weblab gMiniWoB benchmark — ${ua.match(/Chrome\/[\d.]+/)?.[0] ?? ua}, ${episodes} episodes per row, step limit 25`);
  console.table(sizes);
  console.table(rows);
} finally {
  await context.close();
  await server.close();
}

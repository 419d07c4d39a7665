// Judges a navigator checkpoint (.wln) zero-shot on the live DOM in headless Chromium (a command,
// not a test): greedy, on the 5 test sites × 4 levels and on the lab's own form tasks, as the
// CoDE paper's Table 1 does, with the paper's figures beside them.
// Usage: node tests/e2e/judge-navigator.mjs CHECKPOINT.wln [seeds per row (50)] [first seed]
//        (after `trunk build`; see scripts/judge-navigator.sh)
import { readFileSync } from 'node:fs';
import { DIST, serve } from './serve.mjs';
import { launch, openApp } from './browser.mjs';

const [file, seedsArg, firstArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: judge-navigator.mjs CHECKPOINT.wln [seeds per row] [first seed]');
  process.exit(2);
}
const seeds = Number(seedsArg || 50);
// Far from the seeds training episodes use (they count up from 0; see navigator::train).
const first = Number(firstArg ?? 2 ** 30);
const bytes = [...readFileSync(file)];
// CoDE (Gur et al.), Table 1, read column by column: CL, ALP, PAIRED, CoDE success. The table
// does not say at which difficulty level; we print it beside level 3 (the hardest).
const PAPER = {
  login: ['3%', '23%', '20%', '92%'], address: ['0%', '15%', '8%', '98%'], payment: ['0%', '7%', '16%', '93%'],
  flight: ['0%', '2%', '20%', '95%'], shopping: ['0%', '6%', '6%', '95%'],
  'enter-password': ['-', '100%', '100%', '100%'], 'enter-text': ['-', 'N/A', 'N/A', '100%'], 'enter-text-dynamic': ['-', '100%', '100%', '100%'],
};
const FORM_TASKS = ['enter-text', 'enter-password', 'enter-text-dynamic', 'login-user'];

const server = await serve(DIST);
const context = await launch();
try {
  const { page } = await openApp(context, server.url);
  if ((await page.textContent('#play')) === 'Pause') await page.click('#play');
  const out = await page.evaluate(async ({ bytes, seeds, first, FORM_TASKS }) => {
    const Lab = window.lab.constructor;
    const lab = window.lab;
    lab.setConfig({ hold_clock: true });
    const info = lab.loadNavigator(new Uint8Array(bytes));
    const rows = [];
    const t0 = performance.now();
    for (const site of Lab.testSites().sites) {
      const row = { task: site };
      for (let level = 0; level < Lab.testSites().levels; level++) {
        const spec = { source: 'generated', name: `${site}-${level}`, design: Lab.testSiteDesign(site, level) };
        const j = await lab.judgeNavigator(spec, first, seeds);
        row[`level ${level}`] = `${(100 * j.successes / j.episodes).toFixed(0)}%`;
      }
      rows.push(row);
    }
    for (const task of FORM_TASKS) {
      const j = await lab.judgeNavigator(task, first, seeds);
      rows.push({ task, 'level 0': `${(100 * j.successes / j.episodes).toFixed(0)}%` });
    }
    return { info, rows, seconds: (performance.now() - t0) / 1000 };
  }, { bytes, seeds, first, FORM_TASKS });
  for (const r of out.rows) {
    const p = PAPER[r.task];
    if (p) Object.assign(r, { 'paper CL': p[0], 'paper ALP': p[1], 'paper PAIRED': p[2], 'paper CoDE': p[3] });
  }
  const ua = await page.evaluate(() => navigator.userAgent);
  console.log(`weblab navigator, judged zero-shot on the live DOM — ${file}: trained on ${out.info.trained_on}, `
    + `${out.info.counters.env_steps} env steps, ${out.info.counters.updates} updates, ${out.info.parameters} parameters; `
    + `${seeds} greedy episodes per cell from seed ${first}; ${ua.match(/Chrome\/[\d.]+/)?.[0] ?? ua}; ${out.seconds.toFixed(0)} s`);
  console.table(out.rows);
} finally {
  await context.close();
  await server.close();
}

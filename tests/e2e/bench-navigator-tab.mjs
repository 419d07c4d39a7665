// The navigator trained in the tab (a command, not a test): drives the built app's Train view in
// headless Chromium — the gMiniWoB navigator on one fixed test site (login level 0 by default),
// in the learner worker, on the live DOM — and prints over time the site's success-grid cell
// (greedy, unseen seeds, judged on the site simulator in the worker), env steps/s and updates/s.
// When the cell first reaches the target (or the time or budget runs out) it exports the
// checkpoint from the running learner, stops, and judges the checkpoint zero-shot on the live DOM
// (tests/e2e/judge-navigator.mjs). After `trunk build`; see scripts/bench-navigator-tab.sh.
//
//   node tests/e2e/bench-navigator-tab.mjs [--site login] [--level 0] [--target 0.9]
//        [--minutes 30] [--budget 2000000] [--judge-every 15] [--judge-seeds 20]
//        [--live-seeds 50] [--backend cpu] [--out FILE.wln]
import { parseArgs } from 'node:util';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DIST, serve } from './serve.mjs';
import { launch, openApp } from './browser.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const { values: args } = parseArgs({
  options: {
    site: { type: 'string', default: 'login' },
    level: { type: 'string', default: '0' },
    target: { type: 'string', default: '0.9' },
    minutes: { type: 'string', default: '30' },
    budget: { type: 'string', default: '2000000' },
    'judge-every': { type: 'string', default: '15' },
    'judge-seeds': { type: 'string', default: '20' },
    'live-seeds': { type: 'string', default: '50' },
    backend: { type: 'string', default: 'cpu' },
    out: { type: 'string', default: join(here, 'artifacts', 'navigator-tab.wln') },
  },
});
const target = Number(args.target);
mkdirSync(dirname(args.out), { recursive: true });

const server = await serve(DIST);
const context = await launch();
const rows = [];
let result = null;
try {
  const { page } = await openApp(context, `${server.url}#/train`);
  const ua = await page.evaluate(() => navigator.userAgent);
  await page.selectOption('#train-agent', 'navigator');
  await page.selectOption('#train-generator', 'site');
  await page.selectOption('#train-site', args.site);
  await page.selectOption('#train-level', args.level);
  await page.fill('#train-nav-frames', args.budget);
  await page.fill('#train-judge-every', args['judge-every']);
  await page.fill('#train-judge-seeds', args['judge-seeds']);
  await page.selectOption('#train-backend', args.backend);
  console.log(`weblab navigator trained in the tab — ${ua.match(/Chrome\/[\d.]+/)?.[0] ?? ua}, headless; `
    + `the Train view, one test site ${args.site}-${args.level}, backend ${args.backend}, default NavigatorConfig; `
    + `the grid judged every ${args['judge-every']} s on ${args['judge-seeds']} unseen seeds per cell (site simulator); `
    + `target ${Math.round(100 * target)}% on ${args.site}-${args.level}`);

  const row = args.site;
  const col = Number(args.level);
  const read = () => page.evaluate(({ row, col }) => {
    const num = (id) => Number(document.getElementById(id).textContent.replace(/,/g, ''));
    const status = document.getElementById('train-status').textContent;
    const speed = status.match(/([\d.]+) env steps\/s, ([\d.]+) updates\/s/);
    const tr = [...document.querySelectorAll('#nav-grid tbody tr')].find((r) => r.querySelector('th').textContent === row);
    const cell = tr ? tr.querySelectorAll('td')[col] : null;
    const note = document.getElementById('nav-grid-note').textContent.match(/At ([\d,]+) env steps \(([\d,]+) updates\)/);
    return {
      env_steps: num('tr-steps'), updates: num('tr-updates'), backend: document.getElementById('tr-backend').textContent,
      steps_per_s: speed ? Number(speed[1]) : null, updates_per_s: speed ? Number(speed[2]) : null,
      cell: cell ? Number(cell.dataset.value) : null,
      judged_at: note ? { env_steps: Number(note[1].replace(/,/g, '')), updates: Number(note[2].replace(/,/g, '')) } : null,
      finished: /^Finished|^Stopped/.test(status),
    };
  }, { row, col });

  await page.click('#train-start');
  const t0 = Date.now();
  let lastJudged = null;
  let reached = null;
  while (true) {
    await page.waitForTimeout(1000);
    const s = await read();
    const elapsed = (Date.now() - t0) / 1000;
    if (s.judged_at && s.judged_at.env_steps !== lastJudged) {
      lastJudged = s.judged_at.env_steps;
      const r = {
        's': elapsed.toFixed(0), 'env steps': s.env_steps, updates: s.updates,
        'env steps/s': s.steps_per_s, 'updates/s': s.updates_per_s,
        [`${args.site}-${args.level} greedy`]: `${Math.round(100 * s.cell)}%`, 'judged at updates': s.judged_at.updates, backend: s.backend,
      };
      rows.push(r);
      console.log(JSON.stringify(r));
      if (s.cell >= target) { reached = { elapsed, ...s }; break; }
    }
    if (s.finished || elapsed > 60 * Number(args.minutes)) break;
  }
  const end = await read();
  const elapsed = (Date.now() - t0) / 1000;

  // The checkpoint from the running learner (the model now, a moment after the judged one).
  let exported = null;
  if (!end.finished) {
    const [download] = await Promise.all([page.waitForEvent('download', { timeout: 120_000 }), page.click('#export-ckpt')]);
    exported = readFileSync(await download.path());
    writeFileSync(args.out, exported);
    await page.click('#train-stop');
    await page.waitForFunction(() => /^Finished: /.test(document.getElementById('train-status').textContent), null, { timeout: 120_000 });
  }
  result = { reached, end, elapsed, exported: exported ? args.out : null };
} finally {
  await context.close();
  await server.close();
}

console.table(rows);
if (result.reached) {
  const r = result.reached;
  console.log(`${args.site}-${args.level} reached ${Math.round(100 * r.cell)}% (judged on the simulator at ${r.judged_at.updates} updates, `
    + `${r.judged_at.env_steps} env steps) after ${r.elapsed.toFixed(0)} s of training in the tab (backend ${r.backend}).`);
} else {
  console.log(`${args.site}-${args.level} did not reach ${Math.round(100 * target)}% within ${result.elapsed.toFixed(0)} s `
    + `(${result.end.updates} updates, ${result.end.env_steps} env steps).`);
}
if (result.exported) {
  console.log(`checkpoint: ${result.exported}; judged zero-shot on the live DOM (${args['live-seeds']} seeds per cell):\n`);
  const judged = spawnSync(process.execPath, [join(here, 'judge-navigator.mjs'), result.exported, args['live-seeds']], { stdio: 'inherit' });
  process.exitCode = judged.status ?? 1;
}

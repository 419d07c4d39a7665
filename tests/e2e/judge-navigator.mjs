// Judges a navigator checkpoint (.wln) zero-shot on the live DOM in headless Chromium (a command,
// not a test): greedy, on the 5 test sites × 4 levels and on CoDE Table 1's MiniWoB form tasks (the
// lab's own pages and the real MiniWoB++ ones, `miniwob/…`), as the CoDE paper's Table 1 does,
// with the paper's figures beside them. With --ship NAME it also ships the checkpoint:
// agents/NAME.wln and its entry in agents/manifest.json, the judged cells written from this run's
// own figures and the training figures from the run's folder (--run-dir, where
// train_adversary or train_navigator --run-dir wrote progress.json), so no figure is typed in.
// With --rejudge NAME (CHECKPOINT being agents/NAME.wln) it replaces only the judged figures of
// that shipped navigator's entry, its training figures kept (for when the run's folder is gone).
// Usage: node tests/e2e/judge-navigator.mjs CHECKPOINT.wln [seeds per row (50)] [first seed]
//          [--ship NAME --run-dir DIR --command "the training command" | --rejudge NAME]
//        (after `trunk build`; see scripts/judge-navigator.sh)
import { copyFileSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DIST, serve } from './serve.mjs';
import { launch, openApp } from './browser.mjs';

const flags = {};
const positional = [];
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a.startsWith('--')) flags[a.slice(2)] = process.argv[++i];
  else positional.push(a);
}
const [file, seedsArg, firstArg] = positional;
const usage = 'usage: judge-navigator.mjs CHECKPOINT.wln [seeds per row] [first seed] [--ship NAME --run-dir DIR --command CMD | --rejudge NAME]';
if (!file || Object.keys(flags).some((f) => !['ship', 'run-dir', 'command', 'rejudge'].includes(f)) || (flags.ship && flags.rejudge)) {
  console.error(usage);
  process.exit(2);
}
if (flags.ship !== undefined && !(/^[a-z0-9-]+$/.test(flags.ship) && flags['run-dir'] && flags.command)) {
  console.error(`--ship needs a name of lower-case letters, digits and dashes, --run-dir and --command\n${usage}`);
  process.exit(2);
}
if (flags.rejudge !== undefined && !(/^[a-z0-9-]+$/.test(flags.rejudge) && navigatorEntry(readManifest(), flags.rejudge) && sameFile(file, agentPath(`${flags.rejudge}.wln`)))) {
  console.error(`--rejudge needs the name of a shipped navigator in agents/manifest.json, and its agents/NAME.wln as the checkpoint\n${usage}`);
  process.exit(2);
}
const seeds = Number(seedsArg || 50);
// By default from the lab's report seed (Lab.navigatorReportSeed: apart from the seeds training
// used and from those a run judged on to pick its best navigator; see navigator::train).
const firstGiven = firstArg === undefined ? undefined : Number(firstArg);
const bytes = [...readFileSync(file)];
// CoDE (Gur et al.), Table 1, read column by column: CL, ALP, PAIRED, CoDE success. The table
// does not say at which difficulty level; we print it beside level 3 (the hardest).
const PAPER = {
  login: ['3%', '23%', '20%', '92%'], address: ['0%', '15%', '8%', '98%'], payment: ['0%', '7%', '16%', '93%'],
  flight: ['0%', '2%', '20%', '95%'], shopping: ['0%', '6%', '6%', '95%'],
  'enter-password': ['-', '100%', '100%', '100%'], 'enter-text': ['-', 'N/A', 'N/A', '100%'], 'enter-text-dynamic': ['-', '100%', '100%', '100%'],
};
const LAB_FORMS = ['enter-text', 'enter-password', 'enter-text-dynamic', 'login-user'];
// The paper judged on MiniWoB's own pages; the lab's clones beside them.
const FORM_TASKS = [...LAB_FORMS, ...LAB_FORMS.map((t) => `miniwob/${t}`)];

const server = await serve(DIST);
const context = await launch();
try {
  const { page } = await openApp(context, server.url);
  if ((await page.textContent('#play')) === 'Pause') await page.click('#play');
  const out = await page.evaluate(async ({ bytes, seeds, firstGiven, FORM_TASKS }) => {
    const Lab = window.lab.constructor;
    const lab = window.lab;
    const first = firstGiven ?? Lab.navigatorReportSeed();
    lab.setConfig({ hold_clock: true });
    const info = lab.loadNavigator(new Uint8Array(bytes));
    const rows = [];
    const t0 = performance.now();
    for (const site of Lab.testSites().sites) {
      const row = { task: site, rates: [] };
      for (let level = 0; level < Lab.testSites().levels; level++) {
        const spec = { source: 'generated', name: `${site}-${level}`, design: Lab.testSiteDesign(site, level) };
        const j = await lab.judgeNavigator(spec, first, seeds);
        row.rates.push(j.successes / j.episodes);
      }
      rows.push(row);
    }
    for (const task of FORM_TASKS) {
      const j = await lab.judgeNavigator(task, first, seeds);
      rows.push({ task, rates: [j.successes / j.episodes] });
    }
    return { info, rows, first, seconds: (performance.now() - t0) / 1000 };
  }, { bytes, seeds, firstGiven, FORM_TASKS });
  const { first } = out;
  const pct = (x) => `${(100 * x).toFixed(0)}%`;
  const table = out.rows.map((r) => {
    const row = { task: r.task };
    r.rates.forEach((x, level) => { row[`level ${level}`] = pct(x); });
    const p = PAPER[r.task.replace(/^miniwob\//, '')];
    if (p) Object.assign(row, { 'paper CL': p[0], 'paper ALP': p[1], 'paper PAIRED': p[2], 'paper CoDE': p[3] });
    return row;
  });
  const ua = await page.evaluate(() => navigator.userAgent);
  const chrome = ua.match(/Chrome\/[\d.]+/)?.[0] ?? ua;
  console.log(`weblab navigator, judged zero-shot on the live DOM — ${file}: trained on ${out.info.trained_on}, `
    + `${out.info.counters.env_steps} env steps, ${out.info.counters.updates} updates, ${out.info.parameters} parameters; `
    + `${seeds} greedy episodes per cell from seed ${first}; ${chrome}; ${out.seconds.toFixed(0)} s`);
  console.table(table);
  const sites = out.rows.filter((r) => r.rates.length > 1);
  const mean = sites.reduce((a, r) => a + r.rates.reduce((b, x) => b + x, 0), 0) / sites.reduce((a, r) => a + r.rates.length, 0);
  console.log(`test-site grid mean ${pct(mean)}; per site over its levels: ${sites.map((r) => `${r.task} ${pct(r.rates.reduce((a, x) => a + x, 0) / r.rates.length)}`).join(', ')}`);
  const run = { seeds, first, chrome, file, sites, mean };
  if (flags.ship) ship(flags, out, run);
  if (flags.rejudge) rejudge(flags.rejudge, out, run);
} finally {
  await context.close();
  await server.close();
}

// agents/NAME.wln and its manifest entry, replacing one of the same name; the manifest lists
// navigators best first (the Design view watches with the first).
function ship({ ship: name, 'run-dir': runDir, command }, out, { seeds, first, chrome, file, sites, mean }) {
  const progress = JSON.parse(readFileSync(join(runDir, 'progress.json'), 'utf8'));
  const manifest = readManifest();
  const seed = out.info.trained_on.match(/seed (\d+)/);
  const entry = {
    name,
    kind: 'navigator',
    file: `${name}.wln`,
    trained_on: out.info.trained_on,
    command,
    seed: seed ? Number(seed[1]) : null,
    // The checkpoint is the run's best judged navigator: the training minute of that judging,
    // and the run's whole length (wall-clock includes the simulator judgings) when shipped.
    best_at_training_s: bestAt(progress),
    run_wall_clock_s: Math.round(progress.wall_s),
    run_training_s: Math.round(progress.train_s),
    sittings: progress.sittings,
    env_steps: out.info.counters.env_steps,
    updates: out.info.counters.updates,
    parameters: out.info.parameters,
    backend: 'native cpu (burn flex), on the site simulator',
    judged: judged(name, out, { seeds, first, chrome, sites, mean }),
  };
  copyFileSync(file, agentPath(entry.file));
  writeManifest(manifest, entry);
  console.log(`shipped agents/${entry.file} with its entry in agents/manifest.json`);
}

// The judged figures of a shipped navigator replaced by this judging's; its training figures kept.
function rejudge(name, out, run) {
  const manifest = readManifest();
  const entry = navigatorEntry(manifest, name);
  entry.judged = judged(name, out, run);
  writeManifest(manifest, entry);
  console.log(`replaced the judged figures of ${name} in agents/manifest.json`);
}

// What a judging says of agents/NAME.wln, as its manifest entry holds it.
function judged(name, out, { seeds, first, chrome, sites, mean }) {
  const cells = (rows) => Object.fromEntries(rows.map((r) => [r.task, r.rates.length > 1 ? r.rates : r.rates[0]]));
  return {
    command: `scripts/judge-navigator.sh agents/${name}.wln ${seeds} ${first}`,
    environment: `live DOM, headless Chromium (${chrome})`,
    greedy: true,
    episodes_per_cell: seeds,
    first_seed: first,
    grid_mean: Number(mean.toFixed(4)),
    test_sites: cells(sites),
    form_tasks: cells(out.rows.filter((r) => r.rates.length === 1)),
  };
}

function agentPath(name) {
  return join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'agents', name);
}

function readManifest() {
  return JSON.parse(readFileSync(agentPath('manifest.json'), 'utf8'));
}

function navigatorEntry(manifest, name) {
  return manifest.agents.find((a) => a.name === name && a.kind === 'navigator');
}

function sameFile(a, b) {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}

// The manifest with `entry` in place of its namesake (a new name goes last); navigators listed
// best first, equals keeping their places.
function writeManifest(manifest, entry) {
  const replaced = manifest.agents.some((a) => a.name === entry.name);
  const agents = replaced ? manifest.agents.map((a) => (a.name === entry.name ? entry : a)) : [...manifest.agents, entry];
  const navigators = agents.filter((a) => a.kind === 'navigator').sort((a, b) => (b.judged?.grid_mean ?? 0) - (a.judged?.grid_mean ?? 0));
  manifest.agents = [...agents.filter((a) => a.kind !== 'navigator'), ...navigators];
  writeFileSync(agentPath('manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
}

// The training second of the run's first judging that reached its best grid mean (null for a
// folder without judgings).
function bestAt(progress) {
  const mean = (g) => g.flat().reduce((a, x) => a + x, 0) / g.flat().length;
  const hit = (progress.grids || []).find(([, grid]) => Math.abs(mean(grid) - progress.best_mean) < 1e-9);
  return hit ? Math.round(hit[0] * 60) : null;
}

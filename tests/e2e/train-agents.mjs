// Trains the lab's pretrained DOM-Q-Net agents (a command, not a test): for each task, one
// single-task run in headless Chromium until 90% success over the last 100 episodes (plus a few
// more steps) or the paper's budget, a greedy evaluation on held-out seeds, and the checkpoint in
// agents/<task>.wlq, listed in agents/manifest.json. After `trunk build`; see
// scripts/train-agents.sh.
//
//   node tests/e2e/train-agents.mjs [task ...] [--easy-budget 5000] [--medium-budget 50000]
//        [--after-solved 1000] [--eval 50] [--min-success 0.9] [--seed 1] [--backend cpu]
//        [--pages lab|both]
// --pages both trains each agent on the lab's page and the real MiniWoB++ page of its name
// together (tasks [t, miniwob/t]); it ships only if its greedy success reaches --min-success on
// each, and the manifest lists both.
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DIST, serve } from './serve.mjs';
import { launch } from './browser.mjs';
import { openLab, trainInPage } from './dqn.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    'easy-budget': { type: 'string', default: '5000' },    // Table 1
    'medium-budget': { type: 'string', default: '50000' }, // Table 1
    // Once solved (noisy policy at 90%), train a little longer so the greedy policy settles.
    'after-solved': { type: 'string', default: '1000' },
    eval: { type: 'string', default: '50' },
    // Only agents this good (greedy, held-out seeds) ship.
    'min-success': { type: 'string', default: '0.9' },
    seed: { type: 'string', default: '1' },
    backend: { type: 'string', default: 'cpu' },
    out: { type: 'string', default: join(root, 'agents') },
    config: { type: 'string', default: '{}' },
    pages: { type: 'string', default: 'lab' },
  },
});
const DEFAULT_TASKS = ['click-test', 'click-button', 'focus-text', 'click-link', 'click-tab', 'click-dialog', 'enter-text', 'login-user'];
const tasks = positionals.length ? positionals : DEFAULT_TASKS;
if (!['lab', 'both'].includes(args.pages)) throw new Error(`--pages lab or both, not ${args.pages}`);
// An argument as a shell reads it back (the manifest's command is meant to be pasted).
const shellWord = (a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`);
const pagesOf = (task) => (args.pages === 'both' ? [task, `miniwob/${task}`] : [task]);
const out = args.out;
mkdirSync(out, { recursive: true });
const manifestPath = join(out, 'manifest.json');
const manifest = (() => {
  try { return JSON.parse(readFileSync(manifestPath, 'utf8')); } catch { return { agents: [] }; }
})();
manifest.agents ||= [];

const server = await serve(DIST);
const context = await launch();
const summary = [];
try {
  const { page } = await openLab(context, server.url);
  const infos = await page.evaluate(() => window.lab.constructor.tasks());
  for (const task of tasks) {
    const info = infos.find((t) => t.name === task);
    if (!info) { console.log(`${task}: not one of the lab's tasks, skipped`); continue; }
    const frames = Number(info.difficulty === 'easy' ? args['easy-budget'] : args['medium-budget']);
    console.log(`\n${task} (${info.difficulty}): training, budget ${frames} steps`);
    const r = await trainInPage(page, {
      tasks: pagesOf(task), frames, backend: args.backend, config: JSON.parse(args.config), seed: Number(args.seed),
      stopWhenSolved: true, afterSolved: Number(args['after-solved']), evalEpisodes: Number(args.eval),
      checkpoint: true, checkpointHalf: true, logEveryS: 60, snapshotEveryS: 86400, snapshotReplay: 0, // no snapshot within a run (a day is the most a request may ask)
    });
    if (r.error) { console.log(`  failed: ${r.error}`); summary.push({ task, error: r.error }); continue; }
    // The weakest page decides (one page with --pages lab).
    const ev = r.evaluation.reduce((a, b) => (b.success_rate < a.success_rate ? b : a));
    const solved = r.tasks.map((t) => t.solved_at_frames);
    const t = { solved_at_frames: solved.every((f) => f != null) ? Math.max(...solved) : null };
    const row = {
      task, 'solved at': t.solved_at_frames ?? '-', steps: r.env_steps, 'minutes': (r.active_s / 60).toFixed(1),
      'greedy success': r.evaluation.map((e) => `${e.successes}/${e.episodes}`).join(' · '), shipped: false, 'file KiB': '-',
    };
    if (ev.success_rate >= Number(args['min-success']) && r.checkpoint_b64) {
      const file = `${task}.wlq`;
      writeFileSync(join(out, file), Buffer.from(r.checkpoint_b64, 'base64'));
      const entry = {
        name: task, file, tasks: pagesOf(task), env_steps: r.env_steps, eval_success: ev.success_rate, eval_episodes: ev.episodes,
        eval_seed: ev.first_seed, solved_at: t.solved_at_frames ?? null, backend: r.backend,
        // What made it: the training seed and the command (this script's arguments, this task alone).
        seed: Number(args.seed),
        command: `scripts/train-agents.sh ${task} ${process.argv.slice(2).filter((a) => !tasks.includes(a)).map(shellWord).join(' ')}`.trim(),
      };
      // An agent trained again keeps its place; a new DOM-Q-Net agent goes after the others
      // (before the navigator), so the Gallery's order does not change with each run.
      const at = manifest.agents.findIndex((a) => a.name === task);
      const firstOther = manifest.agents.findIndex((a) => a.kind && a.kind !== 'dom-q-net');
      if (at >= 0) manifest.agents[at] = entry;
      else manifest.agents.splice(firstOther < 0 ? manifest.agents.length : firstOther, 0, entry);
      writeFileSync(manifestPath, JSON.stringify(manifest, null, 2) + '\n');
      row.shipped = true;
      row['file KiB'] = (statSync(join(out, file)).size / 1024).toFixed(0);
    }
    summary.push(row);
    console.log(`  ${row.shipped ? 'shipped' : 'not shipped'}: greedy ${row['greedy success']} on held-out seeds from ${ev.first_seed}`);
  }
} finally {
  await context.close();
  await server.close();
}
console.table(summary);
console.log(`manifest: ${manifestPath} (${manifest.agents.length} agents)`);

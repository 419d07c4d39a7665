// Trains the lab's pretrained DOM-Q-Net agents (a command, not a test): for each task, one
// single-task run in headless Chromium until 90% success over the last 100 episodes (plus a few
// more steps) or the paper's budget, a greedy evaluation on held-out seeds, and the checkpoint in
// agents/<task>.wlq, listed in agents/manifest.json. After `trunk build`; see
// scripts/train-agents.sh.
//
//   node tests/e2e/train-agents.mjs [task ...] [--easy-budget 5000] [--medium-budget 50000]
//        [--after-solved 1000] [--eval 50] [--min-success 0.9] [--seed 1] [--backend cpu]
//        [--pages lab|both|miniwob] [--preset paper|fast-tab|…] [--config JSON]
//        [--multitask NAME [--budget 100000]] [--snapshot FILE [--snapshot-every 600]
//        [--snapshot-replay 100000]] [--minutes M]
// --pages both trains each agent on the lab's page and the real MiniWoB++ page of its name
// together (tasks [t, miniwob/t]); miniwob, on the real page alone. An agent ships only if its
// greedy success reaches --min-success on each of its pages, and the manifest lists them.
// --multitask NAME trains one agent on all the tasks named at once (the paper's §4.2, one shared
// replay), agents/NAME.wlq, shipped for the pages that pass (its manifest entry lists those as its
// tasks; per_task gives every page's steps to 90 % and greedy score, passing or not).
// --snapshot FILE keeps one run (one task or one --multitask set) in FILE as it goes, and the same
// command run again continues it from there (a run longer than a sitting); --minutes M stops a
// sitting after M minutes of training. A sitting that ends before the run does is evaluated and
// ships by the same rule (the pages that pass), and the next sitting's agent replaces it.
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DIST, serve } from './serve.mjs';
import { launch } from './browser.mjs';
import { openLab, presetConfig, trainInPage, trainWithSnapshots } from './dqn.mjs';

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
    preset: { type: 'string', default: 'paper' },
    multitask: { type: 'string', default: '' },
    budget: { type: 'string', default: '100000' }, // a multitask run's steps, all tasks together
    snapshot: { type: 'string', default: '' },
    'snapshot-every': { type: 'string', default: '600' },
    // Transitions a snapshot keeps: the multitask replay's 100,000 (Table 3), so a continued run
    // goes on with its whole replay.
    'snapshot-replay': { type: 'string', default: '100000' },
    minutes: { type: 'string', default: '0' }, // 0: no cap on a sitting's training time
  },
});
const DEFAULT_TASKS = ['click-test', 'click-button', 'focus-text', 'click-link', 'click-tab', 'click-dialog', 'enter-text', 'login-user'];
if (args.multitask && !positionals.length) throw new Error('--multitask NAME trains one agent on the tasks named: name them');
const tasks = positionals.length ? positionals : DEFAULT_TASKS;
if (!['lab', 'both', 'miniwob'].includes(args.pages)) throw new Error(`--pages lab, both or miniwob, not ${args.pages}`);
if (args.multitask && !/^[\w-]+$/.test(args.multitask)) throw new Error(`--multitask names the agent's file: letters, digits, - and _ only, not ${args.multitask}`);
// An argument as a shell reads it back (the manifest's command is meant to be pasted).
const shellWord = (a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`);
const pagesOf = (task) => ({ both: [task, `miniwob/${task}`], miniwob: [`miniwob/${task}`], lab: [task] })[args.pages];
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
  // The lab's tasks; with --pages miniwob, also the real pages the lab has no page of its own for
  // (choose-date-easy, say), by the benchmark's own list.
  const infos = await page.evaluate((real) => [
    ...window.lab.constructor.tasks(),
    ...(real ? window.wasmBindings.Lab.miniwob().tasks : []),
  ], args.pages === 'miniwob');
  const config = { ...await presetConfig(page, args.preset), ...JSON.parse(args.config) };
  const unknown = tasks.filter((t) => !infos.some((i) => i.name === t));
  for (const t of unknown) console.log(`${t}: ${args.pages === 'miniwob' ? 'neither one of the lab\'s tasks nor a real MiniWoB++ page' : 'not one of the lab\'s tasks'}, skipped`);
  const known = tasks.filter((t) => !unknown.includes(t));
  // One agent per task, or one for them all.
  const runs = args.multitask
    ? [{ name: args.multitask, pages: known.flatMap(pagesOf), frames: Number(args.budget) }]
    : known.map((task) => {
      const info = infos.find((t) => t.name === task);
      return { name: task, pages: pagesOf(task), frames: Number(info.difficulty === 'easy' ? args['easy-budget'] : args['medium-budget']) };
    });
  if (args.snapshot && runs.length !== 1) throw new Error('--snapshot keeps one run: name one task, or use --multitask');
  for (const run of runs) {
    console.log(`\n${run.name} (${run.pages.join(', ')}): training, budget ${run.frames} steps`);
    const opts = {
      tasks: run.pages, frames: run.frames, backend: args.backend, config, seed: Number(args.seed),
      stopWhenSolved: true, afterSolved: Number(args['after-solved']), evalEpisodes: Number(args.eval),
      checkpoint: true, checkpointHalf: true, logEveryS: 60, stopAfterS: 60 * Number(args.minutes),
    };
    const r = args.snapshot
      ? await trainWithSnapshots(page, opts, { file: args.snapshot, everyS: Number(args['snapshot-every']), replay: Number(args['snapshot-replay']) })
      // No snapshot within a run (a day is the most a request may ask).
      : await trainInPage(page, { ...opts, snapshotEveryS: 86400, snapshotReplay: 0 });
    if (r.error) { console.log(`  failed: ${r.error}`); summary.push({ task: run.name, error: r.error }); continue; }
    // Stopped by --minutes with the budget left and a page below 90 %: the run goes on next
    // sitting from its snapshot; what it has learnt so far ships by the same rule as at the end.
    const unfinished = r.env_steps < run.frames && !r.tasks.every((t) => t.solved_at_frames != null);
    if (unfinished) console.log(`  stopped at the sitting's cap at step ${r.env_steps}${args.snapshot ? `; the same command continues it from ${args.snapshot}` : ''}`);
    // The weakest page decides; a multitask agent ships for the pages that pass (the manifest
    // lists those as its tasks, and every page's score in per_task), when at least one does.
    const minSuccess = Number(args['min-success']);
    const passing = r.evaluation.filter((e) => e.success_rate >= minSuccess);
    const judged = args.multitask && passing.length ? passing : r.evaluation;
    const ev = judged.reduce((a, b) => (b.success_rate < a.success_rate ? b : a));
    // When the last page reached 90 %: its own steps (one task on its pages), or the frames of
    // all tasks together for a multitask agent (the paper's Figure 4 counts those).
    const solved = r.tasks.map((t) => (args.multitask ? t.solved_at_total : t.solved_at_frames));
    const solvedAt = solved.every((f) => f != null) ? Math.max(...solved) : null;
    const row = {
      task: run.name, 'solved at': solvedAt ?? '-', steps: r.env_steps, 'minutes': (r.active_s / 60).toFixed(1),
      'greedy success': r.evaluation.map((e) => `${e.successes}/${e.episodes}`).join(' · '), shipped: false, 'file KiB': '-',
    };
    if (ev.success_rate >= minSuccess && r.checkpoint_b64) {
      const file = `${run.name}.wlq`;
      writeFileSync(join(out, file), Buffer.from(r.checkpoint_b64, 'base64'));
      const entry = {
        name: run.name, file, tasks: args.multitask ? passing.map((e) => e.task) : run.pages, env_steps: r.env_steps, eval_success: ev.success_rate, eval_episodes: ev.episodes,
        eval_seed: ev.first_seed, solved_at: solvedAt, backend: r.backend,
        // A multitask agent's every task: its steps to 90 % (its own steps) and greedy wins.
        ...(args.multitask ? {
          per_task: r.tasks.map((t) => {
            const e = r.evaluation.find((x) => x.task === t.task);
            return { task: t.task, solved_at: t.solved_at_frames ?? null, solved_at_total: t.solved_at_total ?? null, eval_success: e?.success_rate ?? null, shipped: passing.includes(e) };
          }),
        } : {}),
        // What made it: the training seed and the command (this script's arguments; one task
        // alone unless it is a multitask agent).
        seed: Number(args.seed),
        // A run that spanned sittings (--snapshot): how many, and its training minutes in all.
        // run_finished false: a sitting's cap stopped it, and its snapshot goes on.
        ...(r.parts ? { sittings: r.parts, training_minutes: Number((r.total_active_s / 60).toFixed(1)), run_finished: !unfinished } : {}),
        command: args.multitask
          ? `scripts/train-agents.sh ${process.argv.slice(2).map(shellWord).join(' ')}`
          : `scripts/train-agents.sh ${run.name} ${process.argv.slice(2).filter((a) => !tasks.includes(a)).map(shellWord).join(' ')}`.trim(),
      };
      // An agent trained again keeps its place; a new single-task agent goes after the others of
      // its kind and before the multitask ones, a new multitask agent before the navigator: the
      // first agent listed for a page is the one the Watch view plays there (watch/agent.js), so
      // a task's own agent comes before one that learnt it among others.
      const at = manifest.agents.findIndex((a) => a.name === run.name);
      const firstOther = manifest.agents.findIndex((a) => (a.kind && a.kind !== 'dom-q-net') || (!args.multitask && a.per_task));
      if (at >= 0) manifest.agents[at] = entry;
      else manifest.agents.splice(firstOther < 0 ? manifest.agents.length : firstOther, 0, entry);
      writeFileSync(manifestPath, JSON.stringify(manifest, null, 2) + '\n');
      row.shipped = true;
      row['file KiB'] = (statSync(join(out, file)).size / 1024).toFixed(0);
    }
    summary.push(row);
    console.log(`  ${row.shipped ? 'shipped' : 'not shipped'}: greedy ${row['greedy success']} on held-out seeds from ${ev.first_seed}`);
    if (args.multitask && row.shipped && passing.length < r.evaluation.length) {
      console.log(`  for ${passing.length} of its ${r.evaluation.length} pages; below ${minSuccess}: ${r.evaluation.filter((e) => !passing.includes(e)).map((e) => `${e.task} ${e.successes}/${e.episodes}`).join(', ')}`);
    }
  }
} finally {
  await context.close();
  await server.close();
}
console.table(summary);
console.log(`manifest: ${manifestPath} (${manifest.agents.length} agents)`);

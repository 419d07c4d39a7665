// The shipped DOM-Q-Net agents (agents/manifest.json), greedy, on the held-out seeds the Watch
// view plays (the trainer's evaluation rules, in Rust: `watchReset(task, seed, 'dqn')`), on the
// lab's page of their task and on the real MiniWoB++ page of the same name (a command, not a
// test). Prints one row per agent: successes of N on each page set.
// Usage: scripts/eval-agents.sh [agent ...] [--episodes 50]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DIST, serve } from './serve.mjs';
import { launch, openApp } from './browser.mjs';

const { values: args, positionals } = parseArgs({ options: { episodes: { type: 'string', default: '50' } }, allowPositionals: true });
const EPISODES = Number(args.episodes);
const root = new URL('../..', import.meta.url).pathname;
const manifest = JSON.parse(readFileSync(join(root, 'agents/manifest.json'), 'utf8'));
const agents = manifest.agents.filter((a) => (a.kind ?? 'dom-q-net') === 'dom-q-net' && (!positionals.length || positionals.includes(a.name)));

const server = await serve(DIST);
const context = await launch();
const rows = [];
try {
  const { page } = await openApp(context, server.url);
  if ((await page.textContent('#play')) === 'Pause') await page.click('#play');
  for (const a of agents) {
    const bytes = [...readFileSync(join(root, 'agents', a.file))];
    const row = { agent: a.name };
    // An agent trained on both pages of a task lists both names: each task is played once a set.
    for (const task of new Set(a.tasks.map((t) => t.replace(/^miniwob\//, '')))) {
      for (const [set, key] of [['lab', task], ['miniwob', `miniwob/${task}`]]) {
        const r = await page.evaluate(async ({ bytes, name, key, EPISODES }) => {
          const lab = window.lab;
          lab.loadAgent(new Uint8Array(bytes), name);
          let won = 0, steps = 0;
          for (let s = 1; s <= EPISODES; s++) {
            await lab.watchReset(key, s, 'dqn');
            for (;;) {
              const r = await lab.watchStep();
              steps++;
              if (r.step.done) { if (r.step.raw_reward > 0) won++; break; }
            }
          }
          return { won, steps };
        }, { bytes, name: a.name, key, EPISODES });
        row[`${set} ${task}`] = `${r.won}/${EPISODES}`;
        console.log(`${a.name} on ${key}: ${r.won}/${EPISODES} won (${r.steps} steps)`);
      }
    }
    rows.push(row);
  }
} finally {
  await context.close();
  await server.close();
}
console.table(rows);

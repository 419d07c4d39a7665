// The goals a real MiniWoB++ page draws for a range of seeds, seeded as the lab seeds it
// (`Math.seedrandom(seed)` with the number, then `core.startEpisodeReal()`): which goals a
// benchmark's test seeds hold, without training anything.
//   node scripts/miniwob-goals.mjs TASK [FIRST_SEED=90000] [COUNT=100] [MODE]
// prints "seed<TAB>utterance" per line. Pages come from miniwob/html/ (scripts/stage-miniwob.sh).
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { withBrowser } from '../tests/e2e/browser.mjs';

const [task, first = '90000', count = '100', mode] = process.argv.slice(2);
if (!task || !/^[a-z0-9-]+$/.test(task) || !/^\d+$/.test(first) || !/^\d+$/.test(count)) {
  console.error('usage: node scripts/miniwob-goals.mjs TASK [FIRST_SEED] [COUNT] [MODE]');
  process.exit(2);
}
const file = resolve('miniwob/html/miniwob', `${task}.html`);
if (!existsSync(file)) {
  console.error(`${file} does not exist: run scripts/stage-miniwob.sh, and check the task's name`);
  process.exit(2);
}
const goals = await withBrowser(async (context) => {
  const page = await context.newPage();
  await page.goto(pathToFileURL(file).href);
  await page.waitForFunction(() => window.core && typeof core.startEpisodeReal === 'function');
  return page.evaluate(({ first, count, mode }) => {
    const out = [];
    for (let s = first; s < first + count; s++) {
      Math.seedrandom(s);
      if (mode && typeof core.setDataMode === 'function') core.setDataMode(mode);
      core.startEpisodeReal();
      out.push([s, core.getUtterance()]);
    }
    return out;
  }, { first: Number(first), count: Number(count), mode });
});
for (const [s, u] of goals) console.log(`${s}\t${typeof u === 'string' ? u : JSON.stringify(u)}`);

// The real MiniWoB++ benchmark, page by page (a command, not a test): every one of the 130 pages
// of the `miniwob` package served beside the app, through the lab's environment in headless
// Chromium. Per page:
//   - reset: seed 1 on a freshly loaded page, and whether the lab's observation is the page's own
//     `core.getDOMInfo()` (same elements in order, tags, texts, boxes);
//   - determinism: seed 1 again after two random episodes (seeds 2 and 3) on the same page, with
//     the page never reloaded (does the page keep state between episodes?), on a fresh load, and
//     with the lab's default (pages marked `leaks` in tasks/miniwob.json are reloaded);
//   - a random episode per seed (RANDOM seeds, 20 steps at most) and, where the lab has a scripted
//     oracle of the page's name, ORACLE seeds: how many end by the page's own judgement and how
//     many succeed (raw reward > 0).
// Usage: scripts/bench-miniwob.sh [task ...]   (RANDOM_SEEDS=10 ORACLE_SEEDS=20 by default;
// RANDOM_POLICY=random-elements for element actions only; OUT=file.json writes every row)
import { writeFileSync } from 'node:fs';
import { DIST, serve } from './serve.mjs';
import { launch, openApp } from './browser.mjs';

const RANDOM = Number(process.env.RANDOM_SEEDS || 10);
// The random policy: "random" (the action set each page needs) or "random-elements" (element
// actions only, for comparison).
const RANDOM_POLICY = process.env.RANDOM_POLICY || 'random';
const ORACLE = Number(process.env.ORACLE_SEEDS || 20);
const MAX_STEPS = 20;

const server = await serve(DIST);
const context = await launch();
try {
  const { page } = await openApp(context, server.url);
  if ((await page.textContent('#play')) === 'Pause') await page.click('#play');
  const { tasks, interactions, served, oracles } = await page.evaluate(async () => ({
    tasks: window.wasmBindings.Lab.miniwob().tasks.map((t) => t.name),
    interactions: Object.fromEntries(window.wasmBindings.Lab.miniwob().tasks.map((t) => [t.name, t.interaction])),
    served: await fetch(`${window.wasmBindings.Lab.miniwob().mount}core/core.js`, { method: 'HEAD' }).then((r) => r.ok),
    oracles: window.wasmBindings.Lab.oracleTasks(),
  }));
  if (!served) throw new Error('the MiniWoB++ pages are not served: run scripts/setup.sh, then trunk build');
  const only = process.argv.slice(2);
  const rows = [];
  for (const name of tasks.filter((t) => !only.length || only.includes(t))) {
    const row = await page.evaluate(async ({ name, RANDOM, RANDOM_POLICY, ORACLE, MAX_STEPS, hasOracle }) => {
      const lab = window.lab;
      const task = `miniwob/${name}`;
      const frame = document.getElementById('task-frame');
      const strip = (o) => JSON.stringify({ instruction: o.instruction, dom: o.dom });
      const fresh = async () => { await lab.reset('click-test', 1); }; // another page: the next reset loads afresh
      const out = { task: name };
      const t0 = performance.now();
      try {
        lab.setConfig({ max_steps: MAX_STEPS, hold_clock: true, fresh_page: 'never' });
        await fresh();
        const tl = performance.now();
        const a = await lab.reset(task, 1);
        out.first_reset_ms = Math.round(performance.now() - tl);
        out.nodes = a.dom.nodes.length;
        out.dom_info = compareDomInfo(a, frame.contentWindow);
        for (const s of [2, 3]) await lab.runAgent(task, 'random', s, 1);
        const b = await lab.reset(task, 1);
        out.same_after_episodes_without_reload = strip(a) === strip(b);
        if (!out.same_after_episodes_without_reload) out.nodes_after = b.dom.nodes.length;
        await fresh();
        out.same_on_fresh_load = strip(a) === strip(await lab.reset(task, 1));
        // The lab's default: reloads the pages marked `leaks`.
        lab.setConfig({ max_steps: MAX_STEPS, hold_clock: true });
        for (const s of [2, 3]) await lab.runAgent(task, 'random', s, 1);
        const tr = performance.now();
        const d = await lab.reset(task, 1);
        out.reset_ms = Math.round(performance.now() - tr);
        out.reloaded = Boolean(d.meta && d.meta.reloaded);
        out.same_with_lab_default = strip(a) === strip(d);
        const r = (await lab.runAgent(task, RANDOM_POLICY, 1000, RANDOM)).stats;
        out.random = { episodes: r.episodes, ended_by_page: r.ended_by_page, successes: r.successes };
        if (hasOracle) {
          const o = (await lab.runAgent(task, 'oracle', 1, ORACLE)).stats;
          out.oracle = { episodes: o.episodes, successes: o.successes };
        }
      } catch (e) {
        out.error = String(e && e.message ? e.message : e);
      }
      out.seconds = Math.round((performance.now() - t0) / 100) / 10;
      return out;

      // The page's own getDOMInfo() against the lab's observation: elements (and text lines) in
      // document order, with their tags, texts and boxes.
      function compareDomInfo(obs, win) {
        const info = win.core && win.core.getDOMInfo ? win.core.getDOMInfo() : null;
        if (!info) return 'no getDOMInfo';
        const theirs = [];
        (function walk(n) {
          theirs.push(n);
          for (const c of n.children || []) walk(c);
        })(info);
        const ours = obs.dom.nodes;
        if (ours.length !== theirs.length) return `${ours.length} nodes, getDOMInfo ${theirs.length}`;
        for (let i = 0; i < ours.length; i++) {
          const o = ours[i], t = theirs[i];
          const tag = t.tag === 't' ? 't' : t.tag;
          if (o.tag !== tag) return `node ${i}: ${o.tag} vs ${tag}`;
          // A select's text is its chosen option in the lab (getDOMInfo gives it none).
          const theirText = (t.text || '').replace(/\s+/g, ' ').trim();
          if ((o.text || '') !== theirText && t.tag !== 'BODY' && t.tag !== 'SELECT') return `node ${i} (${tag}): text "${o.text}" vs "${t.text}"`;
          const r = o.rect;
          if ([r.left - t.left, r.top - t.top, r.width - t.width, r.height - t.height].some((d) => Math.abs(d) > 0.5)) return `node ${i} (${tag}): box differs`;
        }
        return 'equal';
      }
    }, { name, RANDOM, RANDOM_POLICY, ORACLE, MAX_STEPS, hasOracle: oracles.includes(name) });
    rows.push(row);
    const det = row.error ? `ERROR ${row.error}` : [
      row.dom_info === 'equal' ? 'getDOMInfo=' : `getDOMInfo≠ (${row.dom_info})`,
      row.same_after_episodes_without_reload ? 'keeps no state' : `KEEPS STATE (${row.nodes} → ${row.nodes_after} nodes)`,
      row.same_on_fresh_load ? '' : 'NOT SEEDED (fresh loads differ)',
      row.same_with_lab_default ? 'deterministic in the lab' : 'NOT deterministic in the lab',
      `random ${row.random.successes}/${row.random.episodes} won, ${row.random.ended_by_page} ended by the page`,
      row.oracle ? `oracle ${row.oracle.successes}/${row.oracle.episodes}` : '',
      `reset ${row.reset_ms} ms${row.reloaded ? ' (reloaded)' : ''}`,
    ].filter(Boolean).join(' · ');
    console.log(`${name.padEnd(28)} ${det}`);
  }
  const ok = rows.filter((r) => !r.error);
  const count = (f) => ok.filter(f).length;
  console.log(`\n${rows.length} pages: ${rows.length - ok.length} errors; getDOMInfo equal on ${count((r) => r.dom_info === 'equal')};`
    + ` keep state between episodes: ${count((r) => !r.same_after_episodes_without_reload)} (${ok.filter((r) => !r.same_after_episodes_without_reload).map((r) => r.task).join(', ')});`
    + ` differ between fresh loads: ${count((r) => !r.same_on_fresh_load)} (${ok.filter((r) => !r.same_on_fresh_load).map((r) => r.task).join(', ')});`
    + ` deterministic with the lab's default: ${count((r) => r.same_with_lab_default)};`
    + ` a random episode ended by the page on ${count((r) => r.random.ended_by_page > 0)}, won on ${count((r) => r.random.successes > 0)};`
    + ` oracle ≥ 19/20 on ${count((r) => r.oracle && r.oracle.successes >= 19)} of ${count((r) => r.oracle)} pages with an oracle;`
    + ` won by a random or scripted episode: ${count((r) => r.random.successes > 0 || (r.oracle && r.oracle.successes > 0))}.`);
  // By what acting on the page takes (tasks/miniwob.json): pages a random or scripted episode
  // finished (ended by the page's own judgement, not the step cap) and won.
  const finished = (r) => r.random.ended_by_page > 0 || (r.oracle && r.oracle.successes > 0);
  const won = (r) => r.random.successes > 0 || (r.oracle && r.oracle.successes > 0);
  const kinds = [...new Set(rows.map((r) => interactions[r.task]))];
  for (const kind of kinds) {
    const of = ok.filter((r) => interactions[r.task] === kind);
    const f = of.filter(finished), w = of.filter(won);
    console.log(`  ${kind.padEnd(12)} ${of.length} pages: finished ${f.length}, won ${w.length}`
      + (kind === 'click-type' ? '' : ` (not finished: ${of.filter((r) => !finished(r)).map((r) => r.task).join(', ') || 'none'})`));
  }
  console.log(`  all          ${ok.length} pages: finished ${ok.filter(finished).length}, won ${ok.filter(won).length}`);
  if (process.env.OUT) writeFileSync(process.env.OUT, JSON.stringify(rows, null, 1));
} finally {
  await context.close();
  await server.close();
}

import { serve } from './serve.mjs';
import { launch, openApp } from './browser.mjs';
const server = await serve('/work/main/dist');
const ctx = await launch();
const { page, errors } = await openApp(ctx, server.url);
page.on('console', (m) => console.log('[page]', m.text()));
const r = await page.evaluate(async ({ backend, frames, task }) => {
  const { TrainingSession } = await import('/www/training.js');
  const s = new TrainingSession(window.lab);
  const log = [];
  return await new Promise((resolve) => {
    s.addEventListener('backend', (e) => log.push('backend ' + JSON.stringify(e.detail)));
    s.addEventListener('status', (e) => log.push('status ' + e.detail.text));
    let last = 0;
    s.addEventListener('progress', (e) => { const p = e.detail; if (p.env_steps - last >= 100) { last = p.env_steps; log.push(`${p.env_steps} steps ${p.updates} upd loss ${p.loss?.toFixed(4)} act ${p.act_ms?.toFixed(1)}ms upd ${p.update_ms?.toFixed(1)}ms sps ${p.steps_per_s.toFixed(1)} succ ${p.tasks[0].stats.success_rate_100.toFixed(2)} eps ${p.tasks[0].stats.episodes}`); } });
    s.addEventListener('done', (e) => resolve({ log, done: e.detail }));
    s.addEventListener('error', (e) => resolve({ log, error: e.detail }));
    s.start({ config: {}, tasks: [{ source: 'builtin', name: task }], frames, seed: 1, backend });
  });
}, { backend: process.argv[2] || 'cpu', frames: Number(process.argv[3] || 400), task: process.argv[4] || 'click-test' });
console.log(r.log.join('\n'));
console.log(JSON.stringify(r.error || { steps: r.done.env_steps, solved: r.done.tasks[0].solved_at_frames, elapsed: r.done.elapsed_s }));
console.log('errors', errors);
await ctx.close(); await server.close();

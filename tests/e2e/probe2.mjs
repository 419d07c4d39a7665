import { serve } from './serve.mjs';
import { launch, openApp } from './browser.mjs';
const server = await serve('/work/main/dist');
const ctx = await launch();
const { page } = await openApp(ctx, server.url);
await page.evaluate(async () => { window.lab.setConfig({max_steps: 20, hold_clock: true}); await window.lab.runAgent('click-button', 'oracle', 1, 50); });
const cdp = await ctx.newCDPSession(page);
await cdp.send('Profiler.enable');
await cdp.send('Profiler.setSamplingInterval', { interval: 100 });
await cdp.send('Profiler.start');
const st = await page.evaluate(async () => (await window.lab.runAgent('click-button', 'oracle', 1, 500)).stats);
const { profile } = await cdp.send('Profiler.stop');
console.log('eps/s', st.episodes_per_s.toFixed(1));
const byId = new Map(profile.nodes.map(n => [n.id, n]));
const parent = new Map(); profile.nodes.forEach(n => (n.children || []).forEach(c => parent.set(c, n.id)));
const self = new Map(), incl = new Map(); let total = 0;
profile.samples.forEach((id, i) => {
  const d = profile.timeDeltas[i] || 0; total += d;
  const k = byId.get(id).callFrame.functionName || '(anon ' + byId.get(id).callFrame.url.split('/').pop() + ')';
  self.set(k, (self.get(k) || 0) + d);
  const seen = new Set(); let cur = id;
  while (cur !== undefined) { const f = byId.get(cur).callFrame.functionName; if (!seen.has(f)) { seen.add(f); incl.set(f, (incl.get(f) || 0) + d); } cur = parent.get(cur); }
});
const top = (m, n) => [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => `${(100 * v / total).toFixed(1)}% ${k.replace(/::h[0-9a-f]{16}/g, '').slice(0, 150)}`).join('\n');
console.log('SELF\n' + top(self, 30));
console.log('INCL\n' + top(incl, 45));
await ctx.close(); await server.close();

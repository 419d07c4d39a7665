// A live-DOM judge that stays up: one headless Chromium with the built app, reading requests as
// JSON lines on stdin and answering each with one JSON line on stdout. The Python package's
// browser actors (py/python/weblab/browser.py) drive it, with their own timeouts; a hung one is
// killed from outside, with its browser. Request: {"id", "checkpoint": base64 .wln, "site",
// "level", "first", "seeds"} (a test site) or {"id", "checkpoint", "task", "first", "seeds"} (a
// MiniWoB form task). Answer: {"id", "successes", "episodes", "seconds"} or {"id", "error"}.
// The first line out is {"ready": true} once the app has started.
import { createInterface } from 'node:readline';
import { DIST, serve } from './serve.mjs';
import { launch, openApp } from './browser.mjs';

const server = await serve(DIST);
const context = await launch();
const { page } = await openApp(context, server.url);
if ((await page.textContent('#play')) === 'Pause') await page.click('#play');
await page.evaluate(() => window.lab.setConfig({ hold_clock: true }));
const say = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
say({ ready: true });

let loaded = null;
for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  let req;
  try {
    req = JSON.parse(line);
  } catch (e) {
    say({ error: `not JSON: ${e.message}` });
    continue;
  }
  try {
    const t0 = Date.now();
    const out = await page.evaluate(async ({ req, reload }) => {
      const Lab = window.lab.constructor;
      if (reload) window.lab.loadNavigator(Uint8Array.from(atob(req.checkpoint), (c) => c.charCodeAt(0)));
      const spec = req.task ?? { source: 'generated', name: `${req.site}-${req.level}`, design: Lab.testSiteDesign(req.site, req.level) };
      const j = await window.lab.judgeNavigator(spec, req.first, req.seeds);
      return { successes: j.successes, episodes: j.episodes };
    }, { req, reload: req.checkpoint !== loaded });
    loaded = req.checkpoint;
    say({ id: req.id, ...out, seconds: (Date.now() - t0) / 1000 });
  } catch (e) {
    loaded = null;
    say({ id: req.id, error: String(e.message ?? e).split('\n')[0] });
  }
}
await context.close();
await server.close();

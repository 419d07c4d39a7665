// First-paint benchmark (a command, not a test): the size of each wasm the app loads, raw and
// gzipped, and how long the Watch view takes, from opening the page on a warm local server, to
// first paint, to the lab started, and to the first agent step on screen.
// Usage: node tests/e2e/bench-first-paint.mjs [runs]   (after `trunk build`; see scripts/bench-first-paint.sh)
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { DIST, serve } from './serve.mjs';
import { launch } from './browser.mjs';

const runs = Number(process.argv[2] || 5);
const mb = (n) => (n / 1e6).toFixed(2);

// The page's wasm is dist/weblab_bg.wasm; the learner worker's is dist/learner/weblab_bg.wasm
// (absent in a build from before the split, when the worker loaded the page's module).
const sizes = [];
for (const [who, file] of [['page (before first paint)', 'weblab_bg.wasm'], ['learner worker', 'learner/weblab_bg.wasm']]) {
  const path = join(DIST, file);
  if (!(await stat(path).catch(() => null))) continue;
  const bytes = await readFile(path);
  sizes.push({ wasm: who, file, 'raw MB': mb(bytes.length), 'gzip -9 MB': mb(gzipSync(bytes, { level: 9 }).length) });
}

const server = await serve(DIST);
const context = await launch();
const rows = [];
try {
  // One visit first, so the server, the browser and the OS file cache are warm; the server says
  // no-store, so every visit fetches and compiles the wasm again.
  for (let i = 0; i <= runs; i++) {
    const page = await context.newPage();
    const t0 = Date.now();
    await page.goto(`${server.url}#/watch`);
    // The first step line of the pretrained agent the Watch view starts on opening.
    await page.waitForFunction(() => document.querySelectorAll('#steps li').length > 0, null, { timeout: 120_000, polling: 10 });
    const firstStep = Date.now() - t0;
    const t = await page.evaluate(() => {
      const paint = performance.getEntriesByName('first-contentful-paint')[0];
      const wasm = performance.getEntriesByType('resource').filter((r) => r.name.endsWith('.wasm'))
        .map((r) => `${new URL(r.name).pathname} ${r.responseEnd.toFixed(0)}`);
      return { paint: paint ? paint.startTime : NaN, wasm };
    });
    if (i > 0) rows.push({ run: i, 'first paint ms': t.paint.toFixed(0), 'wasm fetched (path ms)': t.wasm.join(', '), 'first agent step ms': firstStep });
    await page.close();
  }
  const ua = await context.pages()[0]?.evaluate(() => navigator.userAgent).catch(() => '') || '';
  console.log(`weblab first-paint benchmark — ${DIST}, ${ua.match(/Chrome\/[\d.]+/)?.[0] ?? 'Chromium'}, ${runs} runs after one warm-up`);
  console.table(sizes);
  console.table(rows);
  const firsts = rows.map((r) => r['first agent step ms']).sort((a, b) => a - b);
  console.log(`first agent step: median ${firsts[Math.floor(firsts.length / 2)]} ms, min ${firsts[0]} ms, max ${firsts[firsts.length - 1]} ms`);
} finally {
  await context.close();
  await server.close();
}

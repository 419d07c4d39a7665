// One server (and, unless `browser: false`, one headless Chromium) for a whole test file, set up
// before its first test and closed after its last: `const app = servedApp();` then
// `app.server.url` and `app.context` inside the tests. `setup(app)`, if given, runs in the same
// hook once both are up (Node 20 does not order a file's separate top-level hooks after it).
import { before, after } from 'node:test';
import { DIST, serve } from './serve.mjs';
import { launch } from './browser.mjs';

export function servedApp({ browser = true, serveOptions = {}, setup = null } = {}) {
  const app = { server: null, context: null };
  before(async () => {
    app.server = await serve(DIST, 0, serveOptions);
    if (browser) app.context = await launch();
    if (setup) await setup(app);
  });
  after(async () => {
    await app.context?.close();
    await app.server?.close();
  });
  return app;
}

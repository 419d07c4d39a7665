// A minimal static file server for the built app (dist/), used by the end-to-end tests and the
// benchmarks. Serves one directory on 127.0.0.1 with the MIME types browsers insist on.
//
// Options (all optional, for tests): `mounts` serves more directories under URL prefixes on the
// same origin, e.g. { '/miniwob/': 'path/to/html' }, as a user serves MiniWoB++ beside the app;
// `stall` is a URL prefix whose requests are never answered, for pages that never finish loading.
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { dirname, extname, join, normalize, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// The built app: dist/ at the repository root, or $WEBLAB_DIST (a copy, so a long benchmark
// survives a rebuild).
export const DIST = process.env.WEBLAB_DIST || join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist');

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.json': 'application/json', '.wasm': 'application/wasm',
  '.png': 'image/png', '.svg': 'image/svg+xml', '.ico': 'image/x-icon', '.txt': 'text/plain; charset=utf-8',
};

export async function serve(root, port = 0, { mounts = {}, stall = null } = {}) {
  // Longest prefix first, so a mount inside another one wins; the root serves everything else.
  const dirs = Object.entries(mounts).map(([prefix, dir]) => [prefix, resolve(dir)])
    .sort((a, b) => b[0].length - a[0].length)
    .concat([['/', resolve(root)]]);
  const server = createServer(async (req, res) => {
    try {
      const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
      if (stall && path.startsWith(stall)) return; // left open until the server closes
      const [prefix, base] = dirs.find(([p]) => path.startsWith(p));
      let file = normalize(join(base, path.slice(prefix.length - 1)));
      if (!file.startsWith(base)) { res.writeHead(403).end(); return; }
      if ((await stat(file).catch(() => null))?.isDirectory()) file = join(file, 'index.html');
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': TYPES[extname(file)] || 'application/octet-stream', 'cache-control': 'no-store' });
      res.end(body);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    }
  });
  await new Promise((ok) => server.listen(port, '127.0.0.1', ok));
  const url = `http://127.0.0.1:${server.address().port}/`;
  return {
    url,
    close: () => new Promise((ok) => {
      server.close(ok);
      server.closeAllConnections(); // stalled requests and keep-alive sockets
    }),
  };
}

// `node serve.mjs <dir> [port]` serves a directory until interrupted.
if (import.meta.url === `file://${process.argv[1]}`) {
  const { url } = await serve(process.argv[2] || 'dist', Number(process.argv[3] || 8080));
  console.log(`serving ${process.argv[2] || 'dist'} at ${url}`);
}

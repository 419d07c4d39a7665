// Launches Debian's Chromium headless through playwright-core (no browser download).
import { chromium } from 'playwright-core';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
export const FLAGS = [
  '--headless=new', '--no-sandbox', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--enable-unsafe-webgpu',
];

export async function launch(viewport = { width: 1280, height: 800 }) {
  const userDataDir = mkdtempSync(join(tmpdir(), 'weblab-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    ignoreDefaultArgs: ['--headless'],
    viewport,
  });
  return context;
}

// Runs `fn` with a fresh browser profile (its own IndexedDB and storage), closed after.
export async function withBrowser(fn, viewport) {
  const context = await launch(viewport);
  try {
    return await fn(context);
  } finally {
    await context.close();
  }
}

// An element's text, trimmed.
export const text = (page, sel) => page.textContent(sel).then((t) => t.trim());

// Waits until the app's message line matches `re`.
export const messageMatching = (page, re, timeout = 60_000) =>
  page.waitForFunction((src) => new RegExp(src).test(document.getElementById('message-text').textContent), re.source, { timeout });

// Opens the app and waits until it has started (or failed visibly).
export async function openApp(context, url, page = null) {
  page = page || context.pages()[0] || await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto(url);
  await page.waitForFunction(() => document.body.dataset.ready === 'true' || !document.getElementById('message').hidden, null, { timeout: 120_000 });
  return { page, errors };
}

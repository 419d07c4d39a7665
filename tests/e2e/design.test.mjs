// End-to-end: the Design view (gMiniWoB). A person composes a two-page site from the palette,
// sees it rendered live, fills it in to success and shares it; a tampered design link opens
// nothing; the scripted oracle solves the hardest shopping test site; the view fits a narrow
// window. Each test gets a fresh browser profile.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { messageMatching, openApp, text, withBrowser } from './browser.mjs';
import { servedApp } from './fixture.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const shots = join(here, 'artifacts');
mkdirSync(shots, { recursive: true });

const app = servedApp({ browser: false });


// The view has rendered what it was asked to (no render queued or running).
const settled = (page) => page.waitForFunction(() => document.getElementById('design-status').dataset.busy === 'false', null, { timeout: 60_000 });

// The composition as the view shows it: primitive names, page by page.
const shownComposition = (page) => page.$$eval('#design-pages .page-card', (cards) =>
  cards.map((c) => [...c.querySelectorAll('li[data-name]')].map((li) => li.dataset.name)));

const fieldValue = (page, key) => page.textContent(`#design-fields li[data-key="${key}"] .value`);
const fieldRight = (page, key) => page.waitForSelector(`#design-fields li[data-key="${key}"].ok`, { timeout: 10_000 });

test('a site composed from the palette renders live, is played to success, and its share link opens the same site', async () => {
  await withBrowser(async (context) => {
    const { page, errors } = await openApp(context, app.server.url + '#/design');
    await settled(page);
    assert.equal(await page.isVisible('#design-hint'), true, 'a first-time hint');
    assert.match(await text(page, '#design-hint'), /Compose a site from primitives/);
    assert.equal(await page.$$eval('#design-palette .fields .chip', (b) => b.length), 24);
    assert.equal(await page.$$eval('#design-palette .parts .chip', (b) => b.length), 16);
    assert.match(await page.getAttribute('#design-palette .chip[data-primitive="navbar"]', 'title'), /ends the episode/);
    await page.screenshot({ path: join(shots, 'design-empty.png') });

    await page.fill('#seed', '7');
    await page.dispatchEvent('#seed', 'change');
    await page.click('#design-palette .chip[data-primitive="username"]');
    await page.click('#design-palette .chip[data-primitive="password"]');
    // A repeat on the same page is refused, with a note.
    await page.click('#design-palette .chip[data-primitive="username"]');
    assert.match(await text(page, '#design-note'), /already on Page 1/);
    await page.click('#design-add-page');
    await page.click('#design-palette .chip[data-primitive="firstname"]');
    await settled(page);
    assert.deepEqual(await shownComposition(page), [['username', 'password'], ['firstname']]);
    assert.equal(await page.isVisible('#design-hint'), false, 'the hint goes once the person has started');

    // The site on the page: page 1 of 2 with the two login fields.
    const frame = page.frameLocator('#task-frame');
    await frame.locator('#actionable_username').waitFor({ state: 'visible', timeout: 30_000 });
    await frame.locator('#actionable_password').waitFor({ state: 'visible' });
    assert.equal(await frame.locator('#actionable_firstname').isVisible(), false, 'page 2 is not showing yet');
    await page.waitForFunction(() => document.querySelectorAll('#design-fields li').length === 3);
    assert.match(await text(page, '#design-page'), /page 1 of 2/);
    assert.match(await text(page, '#design-status-title'), /seed 7/);

    // A person fills it in with the values the view shows.
    const username = await fieldValue(page, 'username');
    const password = await fieldValue(page, 'password');
    const first = await fieldValue(page, 'name_first');
    assert.ok(username && password && first, `values shown: ${username} ${password} ${first}`);
    await frame.locator('#actionable_username').click();
    await frame.locator('#actionable_username').fill(username);
    await frame.locator('#actionable_password').click();
    await frame.locator('#actionable_password').fill(password);
    await fieldRight(page, 'username');
    await fieldRight(page, 'password');
    await frame.locator('[data-next]:visible').click();
    await frame.locator('#actionable_firstname').waitFor({ state: 'visible' });
    await page.waitForFunction(() => /page 2 of 2/.test(document.getElementById('design-page').textContent));
    await frame.locator('#actionable_firstname').click();
    await frame.locator('#actionable_firstname').fill(first);
    await fieldRight(page, 'name_first');
    assert.equal(await text(page, '#design-phi'), '1.00', 'Φ reached 1 with every field right');
    await frame.locator('[data-submit]:visible').click();
    await page.waitForFunction(() => /Episode over/.test(document.getElementById('design-outcome').textContent), null, { timeout: 10_000 });
    const outcome = await text(page, '#design-outcome');
    assert.match(outcome, /raw reward 1\b/);
    assert.equal(await page.getAttribute('#design-outcome', 'class'), 'outcome good');
    assert.equal(await text(page, '#design-phi'), '1.00');
    await page.screenshot({ path: join(shots, 'design-played.png') });

    // Share it; the link opens the same design with the same seed, rendered.
    await page.click('#share');
    const url = await page.inputValue('#share-url');
    assert.match(url, /#s=[A-Za-z0-9_-]+$/);
    const other = await context.newPage();
    const seen = await openApp(context, url, other);
    await messageMatching(other, /Opened the shared site "my-site" \(seed 7\)/);
    assert.equal(await other.getAttribute('nav a.active', 'data-view'), 'design');
    assert.deepEqual(await shownComposition(other), [['username', 'password'], ['firstname']]);
    assert.equal(await other.inputValue('#seed'), '7');
    assert.equal(await other.inputValue('#design-name'), 'my-site');
    await other.frameLocator('#task-frame').locator('#actionable_username').waitFor({ state: 'visible', timeout: 30_000 });
    await other.waitForFunction(() => document.querySelectorAll('#design-fields li').length === 3);
    assert.equal(await fieldValue(other, 'username'), username, 'the same seed gives the same profile');
    assert.deepEqual([...errors, ...seen.errors], []);
  });
});

test('a tampered design link shows what is wrong and renders nothing', async () => {
  await withBrowser(async (context) => {
    const link = (task) => `#s=${Buffer.from(JSON.stringify({ v: 1, view: 'design', task, seed: 3 })).toString('base64url')}`;
    for (const [fragment, why] of [
      [link({ source: 'generated', name: 'bad', design: { number_of_pages: 1, action: [99], action_page: [0] } }), /99/],
      [link({ source: 'generated', name: 'x', design: '<script>alert(1)</script>' }), /malformed|design/],
      [link({ source: 'generated', name: '<img src=x onerror=alert(1)>', design: { number_of_pages: 1, action: [39], action_page: [0] } }), /name/],
    ]) {
      const { page } = await openApp(context, app.server.url + fragment, await context.newPage());
      await messageMatching(page, /this share link cannot be opened/);
      const msg = await text(page, '#message-text');
      assert.match(msg, why);
      assert.match(msg, /Showing the default view instead/);
      assert.match(await page.evaluate(() => location.hash), /^#\/watch$/);
      // Nothing of the link's site was rendered or loaded into the composition.
      assert.equal(await page.frameLocator('#task-frame').locator('[id^="actionable_"]').count(), 0);
      assert.deepEqual(await shownComposition(page), [[]]);
      await page.close();
    }
  });
});

test('the scripted oracle, watched on the shopping test site at level 3, ends with raw reward 1', async () => {
  await withBrowser(async (context) => {
    const { page, errors } = await openApp(context, app.server.url + '#/design');
    await settled(page);
    await page.selectOption('#design-site', 'shopping');
    await page.selectOption('#design-level', '3');
    await page.click('#design-open');
    await settled(page);
    assert.equal(await page.inputValue('#design-name'), 'shopping-3');
    const pages = await shownComposition(page);
    assert.equal(pages.length, 3, `three pages: ${JSON.stringify(pages)}`);
    assert.ok(pages[1].includes('username') && pages[2].includes('zipcode'), JSON.stringify(pages));
    await page.frameLocator('#task-frame').locator('[data-next]:visible').waitFor({ timeout: 30_000 });
    await page.selectOption('#design-policy', 'oracle');
    await page.click('#design-watch');
    await page.waitForFunction(() => document.querySelectorAll('#design-steps li').length >= 3, null, { timeout: 30_000 });
    await page.screenshot({ path: join(shots, 'design-shopping.png') });
    await page.waitForFunction(() => /Episode over/.test(document.getElementById('design-outcome').textContent), null, { timeout: 90_000 });
    assert.match(await text(page, '#design-outcome'), /raw reward 1\b/);
    assert.match(await text(page, '#design-return'), /^Return [+−±]\d+\.\d\d after \d+ steps/);
    assert.equal(await text(page, '#design-phi'), '1.00');
    assert.equal(await page.isDisabled('#design-stop'), true);
    await page.screenshot({ path: join(shots, 'design-watched.png') });
    assert.deepEqual(errors, []);
  });
});

test('the composition is edited in place, design JSON is checked on import, and the other views still work after', async () => {
  await withBrowser(async (context) => {
    const { page, errors } = await openApp(context, app.server.url + '#/design');
    await settled(page);
    for (const name of ['username', 'password', 'rememberme']) await page.click(`#design-palette .chip[data-primitive="${name}"]`);
    await page.click('#design-add-page');
    await page.click('#design-palette .chip[data-primitive="city"]');
    await settled(page);
    const item = (name) => `#design-pages li[data-name="${name}"]`;
    await page.click(`${item('password')} button[aria-label="Move password up"]`);
    assert.deepEqual(await shownComposition(page), [['password', 'username', 'rememberme'], ['city']]);
    await page.selectOption(`${item('rememberme')} select`, '1');
    assert.deepEqual(await shownComposition(page), [['password', 'username'], ['city', 'rememberme']]);
    await page.click(`${item('city')} button[aria-label="Remove city"]`);
    assert.deepEqual(await shownComposition(page), [['password', 'username'], ['rememberme']]);
    // Moving a primitive onto a page that has it already is refused.
    await page.click('#design-pages .page-card[data-page="1"] .page-head');
    await page.click('#design-palette .chip[data-primitive="username"]');
    await page.selectOption('#design-pages .page-card[data-page="0"] li[data-name="username"] select', '1');
    assert.match(await text(page, '#design-note'), /already on Page 2/);
    assert.deepEqual(await shownComposition(page), [['password', 'username'], ['rememberme', 'username']]);
    await settled(page);
    await page.frameLocator('#task-frame').locator('#actionable_password').waitFor({ state: 'visible', timeout: 30_000 });

    // Export, then a design that does not check: refused with what is wrong, the design stays.
    await page.click('#design-json-box summary');
    await page.click('#design-export');
    const exported = JSON.parse(await page.inputValue('#design-json'));
    assert.equal(exported.number_of_pages, 2);
    assert.equal(exported.action.length, 4);
    await page.fill('#design-json', '{"number_of_pages": 1, "action": [39, 99], "action_page": [0, 0]}');
    await page.click('#design-import');
    await messageMatching(page, /The design in the box was not loaded: .*99.*The current design is unchanged/);
    assert.deepEqual(await shownComposition(page), [['password', 'username'], ['rememberme', 'username']]);
    // A good one (by names, with a SKIP and a repeat, which the format drops) replaces it.
    await page.fill('#design-json', '{"action": ["username", 0, "username", "zipcode", "submit"], "action_page": [0, 0, 0, 1, 1]}');
    await page.click('#design-import');
    await messageMatching(page, /Loaded the design in the box; 2 SKIP or repeated entries were dropped/);
    assert.deepEqual(await shownComposition(page), [['username'], ['zipcode', 'submit']]);
    await settled(page);
    await page.frameLocator('#task-frame').locator('#actionable_username').waitFor({ state: 'visible', timeout: 30_000 });

    // The Watch view takes the page back and runs its own task.
    await page.click('nav a[data-view="watch"]');
    await page.selectOption('#policy', 'oracle');
    await page.selectOption('#task', 'click-button');
    await page.waitForFunction(() => /button/i.test(document.getElementById('utterance').textContent), null, { timeout: 30_000 });
    assert.equal(await page.isHidden('#message'), true, await page.textContent('#message'));
    assert.deepEqual(errors, []);
  });
});

test('the Design view fits a narrow window without sideways scrolling', async () => {
  await withBrowser(async (context) => {
    const { page } = await openApp(context, app.server.url + '#/design');
    await settled(page);
    await page.selectOption('#design-site', 'payment');
    await page.selectOption('#design-level', '2');
    await page.click('#design-open');
    await settled(page);
    const { scroll, inner, offenders } = await page.evaluate(() => {
      const inner = document.documentElement.clientWidth;
      const offenders = [...document.querySelectorAll('body *')]
        .filter((e) => !e.closest('.parked') && e.getClientRects().length && e.getBoundingClientRect().right > inner + 1)
        .slice(0, 5).map((e) => `${e.tagName.toLowerCase()}#${e.id}.${e.className}`);
      return { scroll: document.documentElement.scrollWidth, inner, offenders };
    });
    assert.ok(scroll <= inner + 1, `page is ${scroll}px wide in a ${inner}px window (${offenders.join(', ')})`);
    await page.screenshot({ path: join(shots, 'design-narrow.png'), fullPage: true });
  }, { width: 390, height: 844 });
});

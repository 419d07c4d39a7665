// Design: compose a gMiniWoB site from the 40 design primitives (or open a test site, a random
// design, a design file), see it rendered live on the task page, then fill it in yourself (each
// field, Φ and the page beside it) or watch a policy act on it step by step.
//
// The composition is pages of primitive indices; it becomes the reference's design format
// ({number_of_pages, action, action_page}) and the task {source: 'generated', name, design}.
// Every call on the page goes through one queue: the environment serves one call at a time.
import { errorText } from './app.js';
import { download } from './download.js';
import { clearOverlay, drawNavigator } from './overlay.js';

const $ = (id) => document.getElementById(id);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const POLICIES = { oracle: 'the scripted oracle', random: 'the random policy', navigator: 'the navigator' };

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k.startsWith('data-') || k.startsWith('aria-')) e.setAttribute(k, v);
    else e[k] = v;
  }
  for (const c of children) e.append(c);
  return e;
}

const signed = (x) => (x > 0 ? '+' : x < 0 ? '−' : '±') + Math.abs(x).toFixed(2);

export function initDesign(ctx) {
  const { lab, Lab } = ctx;
  const primitives = Lab.primitives();
  const byIndex = new Map(primitives.map((p) => [p.index, p]));
  const byName = new Map(primitives.map((p) => [p.name, p]));
  const sites = Lab.testSites();
  // What a design and its name may hold, and the name check, as Rust decides them.
  // SITE_SIZE: the frame a generated site shows in (the reward panel is added beside it by fitFrame).
  const { max_pages: MAX_PAGES, max_placed: MAX_PLACED, name_max: NAME_MAX, frame_size: SITE_SIZE } = Lab.designLimits();
  const nameProblem = (name) => Lab.siteNameProblem(name) ?? null;

  // The composition.
  let pages = [[]]; // primitive indices per page, in order
  let selected = 0; // the page the palette adds to
  let extras = {}; // a shared site's values/reward settings, kept while it is edited
  let derived = false; // the name is a test site's or a random design's: an edit marks it

  // The page.
  let rendered = null; // {spec, seed} of the episode on the page
  let mode = 'play'; // 'play': a person fills the site; 'watch': a policy acts on it
  let watching = false;
  let watchToken = 0;
  let inFlight = 0; // lab calls queued or running
  let rendering = false;
  let renderLoop = null; // the running render loop (a promise)
  let renderAgain = false;
  let enterTimer = null;
  let poll = null;
  let shownStatus = '';
  let hinted = false;
  let failed = false; // the message shows a render failure (cleared by the next success)

  // ------------------------------------------------------------------ the one queue for the page

  let tail = Promise.resolve();
  function exclusive(fn) {
    inFlight++;
    const run = tail.then(fn);
    tail = run.catch(() => {});
    return run.finally(() => { inFlight--; });
  }

  // Another view's last call may still be finishing on the page: wait for it rather than fail.
  async function patiently(fn) {
    for (let tries = 0; ; tries++) {
      try {
        return await fn();
      } catch (e) {
        if (tries < 100 && /busy/i.test(errorText(e))) { await sleep(50); continue; }
        throw e;
      }
    }
  }

  // ------------------------------------------------------------------ the design

  // The design as it was opened, kept while the composition is unchanged: a site's ids (the k-th
  // occurrence of a primitive) and its profile follow the order of the entries across pages,
  // which the per-page lists lose, so an opened design (a share link, a generated one) renders
  // as given. Any edit makes it a new design, in page order.
  let opened = null; // {key: the composition it gave, design}
  const compositionKey = () => JSON.stringify(pages);

  function designObject() {
    if (opened && opened.key === compositionKey()) {
      const d = opened.design;
      return { number_of_pages: d.number_of_pages, action: [...d.action], action_page: [...d.action_page] };
    }
    const action = [], action_page = [];
    pages.forEach((list, p) => list.forEach((i) => { action.push(i); action_page.push(p); }));
    return { number_of_pages: pages.length, action, action_page };
  }

  function spec() {
    return { source: 'generated', name: $('design-name').value.trim(), design: designObject(), ...extras };
  }

  // Loads a checked design (indices or names) into the composition.
  function loadDesign(d) {
    const action = d.action || [];
    const where = d.action_page || [];
    const count = Math.max(1, d.number_of_pages || 0, ...where.map((p) => p + 1));
    pages = Array.from({ length: count }, () => []);
    const kept = { number_of_pages: count, action: [], action_page: [] };
    action.forEach((a, k) => {
      const p = typeof a === 'number' ? byIndex.get(a) : byName.get(a);
      if (p && !pages[where[k]].includes(p.index)) {
        pages[where[k]].push(p.index);
        kept.action.push(p.index);
        kept.action_page.push(where[k]);
      }
    });
    opened = { key: compositionKey(), design: kept };
    selected = 0;
  }

  function placedCount() {
    return pages.reduce((n, list) => n + list.length, 0);
  }

  function note(text, kind = '') {
    const n = $('design-note');
    n.textContent = text;
    n.className = `note ${kind}`;
  }

  // A change to the composition by the person: re-render, and say the site is no longer the
  // test site or random design it was opened as.
  function edited() {
    if (derived) {
      derived = false;
      const name = $('design-name').value.trim();
      if (!/ edited$/.test(name) && name.length + 7 <= NAME_MAX) $('design-name').value = `${name} edited`;
    }
    hideHint();
    drawComposition();
    render();
  }

  function add(index) {
    const p = byIndex.get(index);
    if (pages[selected].includes(index)) {
      note(`${p.name} is already on Page ${selected + 1}: a page holds each primitive once (the design format drops repeats).`, 'warn');
      return;
    }
    if (placedCount() >= MAX_PLACED) {
      note(`A site holds at most ${MAX_PLACED} primitives.`, 'warn');
      return;
    }
    pages[selected].push(index);
    note(`Added ${p.name} to Page ${selected + 1}.`);
    edited();
  }

  function move(page, k, delta) {
    const list = pages[page];
    const j = k + delta;
    if (j < 0 || j >= list.length) return;
    [list[k], list[j]] = [list[j], list[k]];
    note('');
    edited();
  }

  function moveToPage(page, k, target) {
    const index = pages[page][k];
    const p = byIndex.get(index);
    if (pages[target].includes(index)) {
      note(`${p.name} is already on Page ${target + 1}: a page holds each primitive once.`, 'warn');
      drawComposition();
      return;
    }
    pages[page].splice(k, 1);
    pages[target].push(index);
    note(`Moved ${p.name} to Page ${target + 1}.`);
    edited();
  }

  function remove(page, k) {
    const [index] = pages[page].splice(k, 1);
    note(`Removed ${byIndex.get(index).name} from Page ${page + 1}.`);
    edited();
  }

  function addPage() {
    if (pages.length >= MAX_PAGES) return;
    pages.push([]);
    selected = pages.length - 1;
    note(`Added Page ${pages.length}: the palette now adds to it.`);
    edited();
  }

  function removePage() {
    if (pages.length <= 1) return;
    const [gone] = pages.splice(selected, 1);
    note(`Removed Page ${selected + 1}${gone.length ? ` and its ${gone.length} primitive${gone.length === 1 ? '' : 's'}` : ''}.`);
    selected = Math.min(selected, pages.length - 1);
    edited();
  }

  function select(page) {
    selected = page;
    drawComposition();
  }

  // ------------------------------------------------------------------ drawing the controls

  function chip(p) {
    const title = [`${p.kind}`, `“${p.label}”`];
    if (p.field) title.push(`profile field ${p.field}`);
    if (p.end_on_click) title.push('ends the episode (raw reward −1) when clicked');
    const b = el('button', { type: 'button', class: `chip${p.end_on_click ? ' ends' : ''}`, title: title.join(' · '), 'data-primitive': p.name },
      p.name);
    b.addEventListener('click', () => add(p.index));
    return b;
  }

  function drawPalette() {
    const fields = primitives.filter((p) => p.active);
    const parts = primitives.filter((p) => !p.active);
    $('design-palette').replaceChildren(
      el('h4', {}, `Fields (${fields.length}) `, el('span', { class: 'quiet' }, 'in the profile, count for Φ')),
      el('div', { class: 'chips fields' }, ...fields.map(chip)),
      el('h4', {}, `Page parts (${parts.length}) `, el('span', { class: 'quiet' }, 'buttons, links, decoration')),
      el('div', { class: 'chips parts' }, ...parts.map(chip)),
      el('p', { class: 'legend' }, el('span', { class: 'ends-mark', 'aria-hidden': 'true' }), 'ends the episode (raw −1) when clicked'),
    );
  }

  // Marks the palette's primitives already on the selected page.
  function markPalette() {
    const here = new Set(pages[selected].map((i) => byIndex.get(i).name));
    for (const b of document.querySelectorAll('#design-palette .chip')) {
      const used = here.has(b.dataset.primitive);
      b.classList.toggle('used', used);
      b.setAttribute('aria-pressed', used ? 'true' : 'false');
    }
    $('design-target').textContent = `adding to Page ${selected + 1}`;
  }

  function iconButton(text, label, onClick, disabled = false) {
    const b = el('button', { type: 'button', class: 'icon', title: label, 'aria-label': label, disabled }, text);
    b.addEventListener('click', onClick);
    return b;
  }

  function item(page, k) {
    const p = byIndex.get(pages[page][k]);
    const where = el('select', { class: 'to-page', title: 'Move to another page', 'aria-label': `Page of ${p.name}` },
      ...pages.map((_, i) => el('option', { value: String(i), selected: i === page }, `P${i + 1}`)));
    where.addEventListener('change', () => moveToPage(page, k, Number(where.value)));
    const kind = p.active ? p.kind : p.kind === 'decoration' ? 'part' : p.kind;
    return el('li', { class: `item${p.active ? ' active' : ''}${p.end_on_click ? ' ends' : ''}`, 'data-name': p.name, title: `“${p.label}”${p.field ? ` · field ${p.field}` : ''}` },
      el('span', { class: 'name' }, p.name),
      el('span', { class: 'kind' }, kind),
      iconButton('↑', `Move ${p.name} up`, () => move(page, k, -1), k === 0),
      iconButton('↓', `Move ${p.name} down`, () => move(page, k, 1), k === pages[page].length - 1),
      where,
      iconButton('×', `Remove ${p.name}`, () => remove(page, k)));
  }

  function drawComposition() {
    const box = $('design-pages');
    box.replaceChildren(...pages.map((list, page) => {
      const active = list.filter((i) => byIndex.get(i).active).length;
      const head = el('button', { type: 'button', class: 'page-head', 'aria-pressed': page === selected ? 'true' : 'false', title: 'Add the palette\'s primitives to this page' },
        el('strong', {}, `Page ${page + 1}`),
        el('span', { class: 'quiet' }, list.length ? `${list.length} primitive${list.length === 1 ? '' : 's'}, ${active} field${active === 1 ? '' : 's'}` : 'empty'),
        page === selected ? el('span', { class: 'target' }, 'adding here') : '');
      head.addEventListener('click', () => select(page));
      const body = list.length
        ? el('ol', { class: 'items' }, ...list.map((_, k) => item(page, k)))
        : el('p', { class: 'empty' }, page === selected ? 'Empty: click primitives in the palette to add them here.' : 'Empty.');
      return el('div', { class: `page-card${page === selected ? ' selected' : ''}`, 'data-page': String(page) }, head, body);
    }));
    const placed = placedCount();
    const fields = new Set(pages.flat().filter((i) => byIndex.get(i).active)).size; // a field on two pages is one field
    $('design-counts').textContent = `${pages.length} page${pages.length === 1 ? '' : 's'} · ${placed} primitive${placed === 1 ? '' : 's'} · ${fields} field${fields === 1 ? '' : 's'}`;
    $('design-add-page').disabled = pages.length >= MAX_PAGES;
    $('design-add-page').title = pages.length >= MAX_PAGES ? `A site has at most ${MAX_PAGES} pages` : '';
    $('design-remove-page').disabled = pages.length <= 1;
    $('design-remove-page').textContent = pages.length > 1 ? `Remove Page ${selected + 1}` : 'Remove page';
    markPalette();
  }

  function setButtons() {
    const held = rendering;
    for (const id of ['design-open', 'design-random', 'design-new', 'design-import', 'design-clear']) $(id).disabled = held;
    $('design-file').disabled = held;
    $('design-watch').disabled = held || watching;
    $('design-stop').disabled = !watching;
    $('design-progress').hidden = !rendering;
    $('design-status').dataset.busy = rendering ? 'true' : 'false';
  }

  function hideHint() {
    hinted = true;
    $('design-hint').hidden = true;
  }

  // ------------------------------------------------------------------ the status beside the page

  function fieldRows(fields) {
    return fields.map((f) => el('li', { class: f.correct ? 'ok' : '', 'data-key': f.key },
      el('span', { class: 'key' }, f.key),
      el('span', { class: 'value' }, f.value),
      el('span', { class: 'mark', title: f.correct ? 'filled in right' : 'not yet right' }, f.correct ? '✓' : '·')));
  }

  function showPotential(phi) {
    const v = Number.isFinite(phi) ? phi : 0;
    $('design-phi').textContent = v.toFixed(2);
    $('design-phi-bar').style.width = `${Math.max(0, Math.min(1, v)) * 100}%`;
    $('design-phi-box').setAttribute('aria-valuenow', v.toFixed(2));
  }

  function showOutcome(text, good) {
    const out = $('design-outcome');
    out.textContent = text || '';
    out.className = `outcome${text ? (good ? ' good' : ' bad') : ''}`;
  }

  // What siteStatus() says: the fields, Φ, the page and, at the end, the reward.
  function showStatus(s) {
    const key = JSON.stringify(s);
    if (key === shownStatus) return;
    shownStatus = key;
    if (!s) {
      $('design-fields').replaceChildren();
      $('design-page').textContent = '';
      showPotential(0);
      return;
    }
    showPotential(s.potential);
    const right = s.fields.filter((f) => f.correct).length;
    $('design-page').textContent = `page ${s.page + 1} of ${s.pages} · ${right} of ${s.fields.length} field${s.fields.length === 1 ? '' : 's'} right`;
    $('design-fields').replaceChildren(...fieldRows(s.fields));
    if (mode === 'play') {
      if (s.done) {
        showOutcome(`Episode over: raw reward ${s.raw_reward} · reward ${Number(s.reward).toFixed(2)}${s.reason ? ` · ${s.reason}` : ''}`, Lab.isSuccess(s.raw_reward));
        $('design-play-note').textContent = 'Press "New episode" to play the site again with the next seed.';
      } else {
        showOutcome('');
      }
    }
  }

  async function readStatus() {
    try {
      return (await lab.siteStatus()) ?? null;
    } catch {
      return undefined; // busy or no episode: keep what is shown
    }
  }

  function startPolling() {
    stopPolling();
    poll = setInterval(async () => {
      if (ctx.view !== 'design' || mode !== 'play' || inFlight > 0 || !rendered) return;
      const s = await readStatus();
      if (s !== undefined && mode === 'play' && inFlight === 0) showStatus(s);
    }, 250);
  }

  function stopPolling() {
    if (poll) clearInterval(poll);
    poll = null;
  }

  function clearEpisodeView() {
    shownStatus = '';
    $('design-steps').replaceChildren();
    $('design-return').textContent = '';
    showOutcome('');
    showStatus(null);
  }

  // ------------------------------------------------------------------ rendering on the page

  // Under the page: the instruction when it reads as one, else what the episode asks for (a
  // gMiniWoB instruction is the profile as JSON, shown field by field beside the page).
  function caption(obs, s, seed) {
    const u = (obs && obs.instruction && obs.instruction.utterance) || '';
    if (u && !u.trim().startsWith('{')) { $('utterance').textContent = u; return; }
    const n = (obs && obs.instruction && obs.instruction.fields || []).length;
    const k = s.design.number_of_pages;
    $('utterance').textContent = `“${s.name}”, seed ${seed}: ${k} page${k === 1 ? '' : 's'}, ${n ? `${n} field${n === 1 ? '' : 's'} to fill in, then submit` : 'nothing to fill in: submit'}.`;
  }

  function fail(text) {
    failed = true;
    ctx.message(text);
  }

  function clearFailure() {
    if (failed) ctx.message('');
    failed = false;
  }

  // Renders the composition on the page (coalesced: changes made while a render runs are
  // rendered once it ends). Resolves when the page shows the latest design; with `strict`, a
  // failure rejects instead of being shown.
  function render({ strict = false } = {}) {
    clearTimeout(enterTimer);
    enterTimer = null;
    stopWatching();
    if (renderLoop) {
      renderAgain = true;
      return renderLoop;
    }
    rendering = true;
    setButtons();
    renderLoop = (async () => {
      try {
        do {
          renderAgain = false;
          await exclusive(() => renderOnce(strict));
        } while (renderAgain);
      } finally {
        rendering = false;
        renderLoop = null;
        setButtons();
      }
    })();
    return renderLoop;
  }

  async function renderOnce(strict) {
    const problem = nameProblem($('design-name').value);
    $('design-name-error').textContent = problem || '';
    $('design-name-error').hidden = !problem;
    if (problem) {
      if (strict) throw new Error(problem);
      return;
    }
    const s = spec(), seed = ctx.seed();
    mode = 'play';
    clearEpisodeView();
    clearOverlay($('overlay'));
    ctx.fitFrame();
    $('design-status-title').textContent = `Playing · seed ${seed}`;
    $('design-play-note').textContent = 'Fill the site in yourself in the page: each field turns ✓ when it is right.';
    try {
      const obs = await patiently(() => lab.reset(s, seed));
      rendered = { spec: s, seed };
      clearFailure();
      caption(obs, s, seed);
      const status = await readStatus();
      if (status !== undefined) showStatus(status);
    } catch (e) {
      if (strict) throw e;
      fail(`The site could not be rendered: ${errorText(e)}`);
    }
  }

  // ------------------------------------------------------------------ watching a policy

  function stopWatching() {
    if (watching) {
      watching = false;
      watchToken++;
      setButtons();
    }
  }

  async function watch() {
    if (nameProblem($('design-name').value)) { render(); return; }
    if (enterTimer) render();
    if (renderLoop) await renderLoop;
    const mine = ++watchToken;
    watching = true;
    mode = 'watch';
    setButtons();
    clearEpisodeView();
    clearOverlay($('overlay'));
    const policy = $('design-policy').value;
    const s = spec(), seed = ctx.seed();
    $('design-status-title').textContent = `Watching ${POLICIES[policy]} · seed ${seed}`;
    $('design-play-note').textContent = '';
    let total = 0, steps = 0;
    const live = () => watching && mine === watchToken;
    // The navigator (the one picked in the Watch view; the pretrained one at first) acts greedily
    // on the design as it is, never trained on it.
    const navigating = policy === 'navigator';
    try {
      if (navigating) {
        if (!(await ctx.navigator.ensure())) return;
        $('design-play-note').textContent = `${ctx.navigator.describe()} It acts greedily; pick another navigator in the Watch view.`;
      }
      const obs = await exclusive(() => patiently(() => (navigating ? lab.navigatorReset(s, seed) : lab.watchReset(s, seed, policy))));
      rendered = { spec: s, seed };
      clearFailure();
      caption(obs, s, seed);
      const first = await exclusive(readStatus);
      if (first !== undefined) showStatus(first);
      while (live()) {
        await sleep(250);
        if (!live()) break;
        const r = await exclusive(() => (navigating ? lab.navigatorStep() : lab.watchStep()));
        if (navigating) drawNavigator($('overlay'), r);
        if (!r.step) {
          // The navigator had no open choice left: the episode ends as a failure, as in judging.
          showOutcome(`Episode over: ${r.description} · return ${signed(total)}`, false);
          break;
        }
        const st = r.step;
        const shaped = st.shaped_reward ?? st.reward;
        total += shaped;
        steps++;
        const what = navigating && r.chosen ? `${r.description} · p ${r.chosen.probability.toFixed(2)}` : r.description;
        const li = el('li', {},
          el('span', { class: 'what' }, what),
          el('span', { class: 'nums' }, `r ${signed(shaped)} · Φ ${(st.potential ?? 0).toFixed(2)}`));
        const list = $('design-steps');
        list.appendChild(li);
        list.scrollTop = list.scrollHeight;
        const status = await exclusive(readStatus);
        if (status !== undefined && mine === watchToken) showStatus(status);
        if (Number.isFinite(st.potential)) showPotential(st.potential);
        $('design-return').textContent = `Return ${signed(total)} after ${steps} step${steps === 1 ? '' : 's'} (sum of shaped rewards)`;
        if (st.done) {
          showOutcome(`Episode over: raw reward ${st.raw_reward} · return ${signed(total)}${st.reason ? ` · ${st.reason}` : ''}`, Lab.isSuccess(st.raw_reward));
          break;
        }
      }
    } catch (e) {
      fail(errorText(e));
    } finally {
      if (mine === watchToken) {
        watching = false;
        setButtons();
      }
    }
  }

  // ------------------------------------------------------------------ opening designs

  function openDesign(design, name, { derivedName = false, keepExtras = {} } = {}) {
    loadDesign(design);
    extras = keepExtras;
    derived = derivedName;
    $('design-name').value = name;
    hideHint();
    drawComposition();
    return render();
  }

  function openTestSite() {
    const name = $('design-site').value, level = Number($('design-level').value);
    try {
      const d = Lab.testSiteDesign(name, level);
      note(`Opened the ${name} test site at level ${level}.`);
      openDesign(d, `${name}-${level}`, { derivedName: true });
    } catch (e) {
      ctx.message(errorText(e));
    }
  }

  function randomDesign() {
    const seed = Math.floor(Math.random() * 1_000_000);
    try {
      const d = Lab.randomDesign(seed);
      note(`A random design (design seed ${seed}).`);
      openDesign(d, `random-${seed}`, { derivedName: true });
    } catch (e) {
      ctx.message(errorText(e));
    }
  }

  // Imports design JSON; a design that does not check is refused and the current one stays.
  function importText(text, from, name) {
    let d;
    try {
      d = Lab.checkDesign(text);
    } catch (e) {
      ctx.message(`${from.charAt(0).toUpperCase()}${from.slice(1)} was not loaded: ${errorText(e)}. The current design is unchanged.`);
      return;
    }
    let dropped = 0;
    try {
      const raw = JSON.parse(text);
      const entries = raw.action || raw.primitive_assignments || [];
      dropped = Math.max(0, entries.length - d.action.length);
    } catch { /* checkDesign accepted it */ }
    ctx.message(`Loaded ${from}${dropped ? `; ${dropped} SKIP or repeated entr${dropped === 1 ? 'y was' : 'ies were'} dropped` : ''}.`, 'info');
    note('');
    openDesign(d, name);
  }

  function siteNameFrom(file) {
    const base = file.replace(/\.[^.]*$/, '').replace(/\.design$/, '').replace(/[^\p{L}\p{N} ._-]+/gu, '-').slice(0, NAME_MAX).trim();
    return base && !nameProblem(base) ? base : 'imported';
  }

  function exportText() {
    return JSON.stringify(designObject());
  }

  // ------------------------------------------------------------------ wiring

  for (const name of sites.sites) $('design-site').append(el('option', { value: name }, name));
  for (let l = 0; l < sites.levels; l++) $('design-level').append(el('option', { value: String(l) }, `${l}`));
  drawPalette();
  drawComposition();

  $('design-open').addEventListener('click', openTestSite);
  $('design-random').addEventListener('click', randomDesign);
  $('design-clear').addEventListener('click', () => {
    note('Cleared: one empty page.');
    openDesign({ number_of_pages: 1, action: [], action_page: [] }, 'my-site');
  });
  $('design-add-page').addEventListener('click', addPage);
  $('design-remove-page').addEventListener('click', removePage);
  $('design-new').addEventListener('click', () => {
    ctx.setSeed((rendered ? rendered.seed : ctx.seed()) + 1);
    render();
  });
  $('design-watch').addEventListener('click', watch);
  $('design-stop').addEventListener('click', () => {
    stopWatching();
    $('design-return').textContent += $('design-return').textContent ? ' · stopped' : '';
  });
  $('design-name').addEventListener('change', () => { derived = false; render(); });
  $('seed').addEventListener('change', () => { if (ctx.view === 'design') render(); });
  $('design-import').addEventListener('click', () => {
    const text = $('design-json').value.trim();
    if (!text) { ctx.message('Paste a design (JSON) into the box first, or open a file.'); return; }
    importText(text, 'the design in the box', 'imported');
  });
  $('design-export').addEventListener('click', () => {
    $('design-json').value = exportText();
    $('design-json').select();
    note('The design is in the box: copy it, or save it as a file.');
  });
  $('design-save').addEventListener('click', () => {
    const name = `${$('design-name').value.trim().replace(/\s+/g, '-') || 'site'}.design.json`;
    download(name, exportText());
    note(`Saved ${name}.`);
  });
  $('design-file').addEventListener('change', async (event) => {
    const file = event.target.files[0];
    event.target.value = '';
    if (!file) return;
    const large = ctx.fileTooLarge(file, 'design');
    if (large) { ctx.message(`${large}: it was not loaded. The current design is unchanged.`); return; }
    importText(await file.text(), file.name, siteNameFrom(file.name));
  });
  setButtons();

  return {
    enter() {
      ctx.frameSize = SITE_SIZE;
      $('design-hint').hidden = hinted;
      setButtons();
      startPolling();
      // The page shows another view's task: render the design once this turn is over (a share
      // link or start() may render it first).
      clearTimeout(enterTimer);
      enterTimer = setTimeout(() => render(), 0);
    },
    leave() {
      clearTimeout(enterTimer);
      enterTimer = null;
      stopWatching();
      stopPolling();
      ctx.frameSize = null;
      ctx.fitFrame();
    },
    start() { return render(); },
    shareState() {
      const r = rendered || { spec: spec(), seed: ctx.seed() };
      return { v: 1, view: 'design', task: r.spec, seed: r.seed, config: null, replay: null };
    },
    // Opens a shared design: checked before anything changes, so a bad one opens nothing.
    async openShare(state) {
      clearTimeout(enterTimer);
      enterTimer = null;
      const t = state.task || {};
      if (t.source !== 'generated' || !t.design) throw new Error('this share link cannot be opened: the Design view opens generated sites only');
      let d;
      try {
        d = Lab.checkDesign(t.design);
      } catch (e) {
        throw new Error(`this share link cannot be opened: its site's design is invalid (${errorText(e).replace(/^invalid design: /, '')})`);
      }
      const problem = nameProblem(String(t.name || ''));
      if (problem) throw new Error(`this share link cannot be opened: ${problem.toLowerCase()}`);
      const before = { pages, selected, name: $('design-name').value, extras, opened };
      const keep = {};
      if (t.values !== undefined) keep.values = t.values;
      if (t.reward !== undefined) keep.reward = t.reward;
      loadDesign(d);
      extras = keep;
      derived = false;
      $('design-name').value = t.name;
      ctx.setSeed(state.seed);
      hideHint();
      drawComposition();
      try {
        await render({ strict: true });
      } catch (e) {
        ({ pages, selected, extras, opened } = before);
        $('design-name').value = before.name;
        drawComposition();
        throw new Error(`this share link cannot be opened: ${errorText(e)}`);
      }
      ctx.message(`Opened the shared site "${t.name}" (seed ${state.seed}).`, 'info');
    },
    // For tests: the composition, as names per page.
    composition() { return pages.map((list) => list.map((i) => byIndex.get(i).name)); },
  };
}

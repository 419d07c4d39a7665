// Design: compose a gMiniWoB site from the 40 design primitives (or open a test site, a random
// design, a design file), see it rendered live on the task page, then fill it in yourself (each
// field, Φ and the page beside it) or watch a policy act on it step by step.
//
// The composition (pages of primitives, the palette and the list: design/composition.js) becomes
// the task {source: 'generated', name, design} here; the fields, Φ and the outcome beside the page
// are design/status.js's.
// Every call on the page goes through one queue: the environment serves one call at a time.
import { errorText } from './app.js';
import { download } from './download.js';
import { clearOverlay, drawNavigator } from './overlay.js';
import { composition, el } from './design/composition.js';
import { siteStatusPanel } from './design/status.js';

const $ = (id) => document.getElementById(id);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const POLICIES = { oracle: 'the scripted oracle', random: 'the random policy', navigator: 'the navigator' };

const signed = (x) => (x > 0 ? '+' : x < 0 ? '−' : '±') + Math.abs(x).toFixed(2);

export function initDesign(ctx) {
  const { lab, Lab } = ctx;
  const sites = Lab.testSites();
  // What a design and its name may hold, and the name check, as Rust decides them.
  // SITE_SIZE: the frame a generated site shows in (the reward panel is added beside it by fitFrame).
  const { max_pages: MAX_PAGES, max_placed: MAX_PLACED, name_max: NAME_MAX, frame_size: SITE_SIZE } = Lab.designLimits();
  const nameProblem = (name) => Lab.siteNameProblem(name) ?? null;

  // The composition (design/composition.js), and what the site carries beside it.
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

  function spec() {
    return { source: 'generated', name: $('design-name').value.trim(), design: comp.designObject(), ...extras };
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
    comp.draw();
    render();
  }
  const comp = composition(Lab.primitives(), { MAX_PAGES, MAX_PLACED }, { note, onEdit: edited });

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

  const status = siteStatusPanel(ctx, {
    play: () => mode === 'play',
    idle: () => ctx.view === 'design' && mode === 'play' && inFlight === 0 && Boolean(rendered),
  });
  const { showStatus, showPotential, showOutcome, readStatus, startPolling, stopPolling, clearEpisodeView } = status;

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
    comp.load(design);
    extras = keepExtras;
    derived = derivedName;
    $('design-name').value = name;
    hideHint();
    comp.draw();
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
    return JSON.stringify(comp.designObject());
  }

  // ------------------------------------------------------------------ wiring

  for (const name of sites.sites) $('design-site').append(el('option', { value: name }, name));
  for (let l = 0; l < sites.levels; l++) $('design-level').append(el('option', { value: String(l) }, `${l}`));
  $('design-open').addEventListener('click', openTestSite);
  $('design-random').addEventListener('click', randomDesign);
  $('design-clear').addEventListener('click', () => {
    note('Cleared: one empty page.');
    openDesign({ number_of_pages: 1, action: [], action_page: [] }, 'my-site');
  });
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
      const before = { composition: comp.save(), name: $('design-name').value, extras };
      const keep = {};
      if (t.values !== undefined) keep.values = t.values;
      if (t.reward !== undefined) keep.reward = t.reward;
      comp.load(d);
      extras = keep;
      derived = false;
      $('design-name').value = t.name;
      ctx.setSeed(state.seed);
      hideHint();
      comp.draw();
      try {
        await render({ strict: true });
      } catch (e) {
        comp.restore(before.composition);
        extras = before.extras;
        $('design-name').value = before.name;
        comp.draw();
        throw new Error(`this share link cannot be opened: ${errorText(e)}`);
      }
      ctx.message(`Opened the shared site "${t.name}" (seed ${state.seed}).`, 'info');
    },
    // For tests: the composition, as names per page.
    composition: () => comp.names(),
  };
}

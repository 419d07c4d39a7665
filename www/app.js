// The lab's JS shell: views, the shared task picker, the task iframe's zoom, messages and share
// links. Environment, agents and training live in Rust (the wasm `Lab` and the learner worker);
// the view modules wire them to the page.
import { initWatch } from './watch.js';
import { initTrain } from './train.js';
import { initPlay } from './play.js';
import { initGallery } from './gallery.js';
import { initDesign } from './design.js';
import { initNavigators } from './navigators.js';
import { initWge } from './wge.js';

const $ = (id) => document.getElementById(id);
const VIEWS = ['watch', 'train', 'play', 'tasks', 'design', 'wge'];


function bindings() {
  if (window.wasmBindings) return Promise.resolve(window.wasmBindings);
  return new Promise((resolve) => {
    window.addEventListener('TrunkApplicationStarted', () => resolve(window.wasmBindings), { once: true });
  });
}

export function errorText(e) {
  return e && e.message ? e.message : String(e);
}

// A message stays until the next one; clearing it (an empty text) spares a sticky one, which only
// the person dismisses (× or another view), so that e.g. why a link did not open is not lost
// when the default view starts.
let sticky = false;
function showMessage(text, kind = 'error', { sticky: keep = false, force = false } = {}) {
  const box = $('message');
  if (panicked) return; // what stopped the lab stays on screen
  if (!text) {
    if (sticky && !force) return;
    sticky = false;
    box.hidden = true;
    $('message-text').textContent = '';
    return;
  }
  sticky = keep;
  $('message-text').textContent = text;
  box.className = kind;
  box.hidden = false;
}

// Long operations (loading an agent, starting the learner, reading a file) say what they do in
// the header while they run, so no button looks frozen: `const end = busy('Loading…')`, then
// `end()`; `end.say(text)` changes the line. The spinner turns on the compositor, so it moves
// even while the wasm holds the main thread.
const working = [];
export function busy(text) {
  const item = { text };
  working.push(item);
  showBusy();
  const end = () => {
    const i = working.indexOf(item);
    if (i >= 0) working.splice(i, 1);
    showBusy();
  };
  end.say = (t) => { item.text = t; showBusy(); };
  return end;
}
function showBusy() {
  const top = working[working.length - 1];
  $('busy').hidden = !top;
  $('busy-text').textContent = top ? top.text : '';
}
// Scrolls a list (a scrolling box) so that one of its items shows, without scrolling the page:
// scrollIntoView would scroll every scrolling ancestor, the document included.
export function scrollListTo(list, li, { center = false } = {}) {
  if (!li) return;
  const box = list.getBoundingClientRect(), item = li.getBoundingClientRect();
  if (center) list.scrollTop += item.top - box.top - (box.height - item.height) / 2;
  else if (item.top < box.top) list.scrollTop -= box.top - item.top;
  else if (item.bottom > box.bottom) list.scrollTop += item.bottom - box.bottom;
}
// Lets the page paint (the busy line) before synchronous wasm work holds the main thread.
export const painted = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));

// Each view's one-line hint (what it is for, what to press) shows until the person dismisses it.
const HINT_KEY = 'weblab-hint-dismissed-';
function hintDismissed(view) {
  try { return localStorage.getItem(HINT_KEY + view) === '1'; } catch { return false; }
}
function showHints(view) {
  for (const el of document.querySelectorAll('.view-hint')) el.hidden = el.dataset.hint !== view || hintDismissed(view);
}
for (const el of document.querySelectorAll('.view-hint')) {
  el.querySelector('.close').addEventListener('click', () => {
    try { localStorage.setItem(HINT_KEY + el.dataset.hint, '1'); } catch { /* shown again next visit */ }
    el.hidden = true;
  });
}

// A panic in the lab's wasm (`report_panic` in src/web/mod.rs) leaves its instance unusable (a
// task page may still be taken out of its slot), so the page says what happened and offers a
// reload, which brings runs and sessions back from the browser's store. A panic while the lab
// starts makes the next start hold those back (a Resume button, a session not loaded), so a
// stored record that breaks the lab cannot break every start.
const PANIC_KEY = 'weblab-panicked-while-starting';
let panicked = false;
window.weblabPanicked = (text) => {
  if (panicked) return;
  if (document.body.dataset.ready !== 'true') {
    try { sessionStorage.setItem(PANIC_KEY, '1'); } catch { /* the next start restores as usual */ }
  }
  working.length = 0;
  showBusy();
  showMessage(`The lab stopped on an internal error and must be reloaded (what was saved in this browser comes back): ${text}`, 'error', { sticky: true });
  panicked = true;
  $('message-reload').hidden = false;
  document.body.dataset.panicked = 'true';
};
$('message-reload').addEventListener('click', () => location.reload());
function takeSafeStart() {
  try {
    const safe = sessionStorage.getItem(PANIC_KEY) === '1';
    sessionStorage.removeItem(PANIC_KEY);
    return safe;
  } catch { return false; }
}

async function main() {
  const endStart = busy('Starting the lab…');
  const safeStart = takeSafeStart();
  const { Lab } = await bindings();
  const lab = new Lab($('task-frame'));
  window.lab = lab; // for tests, benchmarks and the curious
  const tasks = Lab.tasks();
  // The real MiniWoB++ benchmark (src/env/miniwob.rs): where it is served, and its tasks. A real
  // task is named `<prefix><name>` (miniwob/click-tab) where the lab takes a task name.
  const miniwob = Lab.miniwob();
  const miniwobTasks = miniwob.tasks;
  const isMiniwobBase = (b) => typeof b === 'string' && b.trim().replace(/^\/+/, '').replace(/\/?$/, '/') === miniwob.base;
  const manifest = await fetch('agents/manifest.json').then((r) => (r.ok ? r.json() : { agents: [] })).catch(() => ({ agents: [] }));
  const shipped = Array.isArray(manifest.agents) ? manifest.agents : [];
  // The real MiniWoB++ pages are served beside the app when scripts/setup.sh could fetch them;
  // without them the lab says how to get them and works on its own tasks.
  const miniwobServed = await fetch(`${miniwob.mount}core/core.js`, { method: 'HEAD' }).then((r) => r.ok).catch(() => false);

  for (const t of tasks) {
    const opt = document.createElement('option');
    opt.value = t.name;
    opt.textContent = `${t.name} (${t.difficulty}${t.difficulty_estimated ? ', est.' : ''})`;
    $('task').appendChild(opt);
  }
  for (const t of miniwobTasks) {
    const opt = document.createElement('option');
    opt.value = t.name;
    opt.textContent = t.interaction === 'click-type' ? t.name : `${t.name} (${t.interaction})`;
    $('miniwob-task').appendChild(opt);
  }
  $('miniwob-task').value = 'click-button';

  const limits = Lab.fileLimits();
  const KINDS = { demo: 'demonstration file', design: 'design', checkpoint: 'checkpoint' };
  const mb = (n) => (n >= 1e6 ? `${(n / 1e6).toFixed(n >= 1e7 ? 0 : 1)} MB` : `${Math.ceil(n / 1e3)} kB`);
  const taskListeners = [];
  const ctx = {
    lab,
    // `fn()` runs whenever the person picks another task.
    onTaskChange(fn) { taskListeners.push(fn); },
    Lab,
    tasks,
    // Why `file` is too large to read as a `kind` (demo, design, checkpoint), or null: checked
    // before a byte is read (a file read whole that is too large aborts the lab).
    fileTooLarge(file, kind) {
      return file.size > limits[kind] ? `${file.name} is ${mb(file.size)}; a ${KINDS[kind]} is at most ${mb(limits[kind])}` : null;
    },
    miniwob,
    miniwobTasks,
    miniwobServed,
    // The manifest lists DOM-Q-Net agents (no kind, or "dom-q-net") and navigators (kind
    // "navigator"); each view gets its own kind, so a navigator is never loaded as DOM-Q-Net.
    agents: shipped.filter((a) => !a.kind || a.kind === 'dom-q-net'),
    navigators: shipped.filter((a) => a.kind === 'navigator'),
    agentNames: () => ctx.agents.map((a) => a.name),
    message: showMessage,
    // The last start stopped on an internal error: saved runs and sessions wait to be asked for.
    safeStart,
    busy,
    painted,
    view: 'watch',
    views: {},

    // The task as the picker says: a name of ours, `miniwob/<name>` for a real MiniWoB++ page,
    // or {source: 'external', base_url, name} for a folder the person typed. A folder the person
    // typed is theirs to open in this tab (Lab.allowFolder); one that a link, a file or the store
    // put in the box is checked as such (only MiniWoB++'s folders), so nothing but typing lets
    // the task frame open other paths.
    task() {
      if ($('source').value === 'external') {
        const base = $('base-url').value.trim();
        if (folderTyped) {
          try { lab.allowFolder(base); } catch { /* the lab's check says what is wrong when the task is used */ }
        }
        return { source: 'external', base_url: base, name: $('task-name').value.trim() };
      }
      if ($('source').value === 'miniwob') return miniwob.prefix + $('miniwob-task').value;
      return $('task').value;
    },
    // Whether the person is still filling in a folder's task (its folder or page name is empty):
    // the Watch view's play loop waits instead of opening a page named "".
    taskPending() {
      return $('source').value === 'external' && (!$('base-url').value.trim() || !$('task-name').value.trim());
    },
    taskSpec() {
      const t = ctx.task();
      return typeof t === 'string' ? ctx.specOf(t) : t;
    },
    // A task's key (`click-tab`, `miniwob/click-tab`: what pickers, charts and checkpoints name
    // it by) and back; Rust's TaskSpec::label and TaskSpec::from_name.
    specOf(key) {
      if (key.startsWith(miniwob.prefix)) return { source: 'external', base_url: miniwob.base, name: key.slice(miniwob.prefix.length) };
      return { source: 'builtin', name: key };
    },
    taskKey(spec) {
      if (typeof spec === 'string') return spec;
      if (spec.source === 'external' && isMiniwobBase(spec.base_url)) return miniwob.prefix + spec.name;
      return spec.name;
    },
    setTask(spec) {
      if (typeof spec === 'string') spec = ctx.specOf(spec);
      // A generated site is not in the picker: the Design view holds it.
      if (spec.source === 'generated') return;
      if (spec.source === 'external' && isMiniwobBase(spec.base_url) && miniwobTasks.some((t) => t.name === spec.name)) {
        $('source').value = 'miniwob';
        $('miniwob-task').value = spec.name;
      } else if (spec.source === 'external') {
        $('source').value = 'external';
        $('base-url').value = spec.base_url;
        folderTyped = false;
        $('task-name').value = spec.name;
      } else {
        $('source').value = 'builtin';
        $('task').value = spec.name;
      }
      syncSource();
      ctx.fitFrame();
    },
    taskInfo() {
      const t = ctx.task();
      return typeof t === 'string' ? tasks.find((x) => x.name === t) : null;
    },
    seed() { return (parseInt($('seed').value, 10) >>> 0); },
    setSeed(s) { $('seed').value = String(s >>> 0); },

    // The page size a view asks for (the Design view's generated sites), instead of the task's.
    frameSize: null,

    // Sizes the task iframe for the task (its area plus the reward panel beside it) and zooms
    // it to a readable size that fits the stage. `size` ([w, h]) overrides the task's size; a
    // page that large is never zoomed in.
    fitFrame(size = ctx.frameSize) {
      const info = size ? null : ctx.taskInfo();
      const [w, h] = size || (info && info.size ? info.size : [160, 210]);
      const fw = w + 172, fh = Math.max(h, 210) + 6;
      const frame = $('task-frame');
      frame.style.width = fw + 'px';
      frame.style.height = fh + 'px';
      const overlay = $('overlay');
      overlay.style.width = fw + 'px';
      overlay.style.height = fh + 'px';
      const avail = $('stage').clientWidth || fw;
      const zoom = Math.max(0.5, Math.min(size ? 1 : 2, avail / (fw + 2)));
      $('frame-wrap').style.transform = `scale(${zoom})`;
      $('frame-box').style.width = (fw + 2) * zoom + 'px';
      $('frame-box').style.height = (fh + 2) * zoom + 'px';
    },

    go(view) {
      if (!VIEWS.includes(view)) view = 'watch';
      const from = ctx.view;
      ctx.view = view;
      for (const a of document.querySelectorAll('nav a')) a.classList.toggle('active', a.dataset.view === view);
      $('workspace').hidden = view === 'tasks';
      $('workspace').dataset.view = view;
      showHints(view);
      $('gallery').hidden = view !== 'tasks';
      for (const el of document.querySelectorAll('#workspace [data-view]')) {
        el.hidden = !el.dataset.view.split(' ').includes(view);
      }
      // Pages are parked off-screen, not hidden: a page without layout has no boxes to read, and
      // training goes on while another view is open.
      $('frame-box').classList.toggle('parked', view === 'train');
      $('utterance').classList.toggle('parked', view === 'train');
      $('extra-frames').classList.toggle('parked', view !== 'train');
      if (from !== view) ctx.views[from]?.leave?.();
      ctx.views[view]?.enter?.();
      ctx.fitFrame();
      if (!location.hash.startsWith('#s=') && location.hash !== `#/${view}`) history.replaceState(null, '', `#/${view}`);
    },

    setBackend(name, reason) {
      const badge = $('backend-badge');
      badge.textContent = name === 'webgpu' ? 'WebGPU' : 'CPU';
      badge.className = name === 'webgpu' ? 'webgpu' : '';
      badge.title = reason || '';
    },
  };

  // Whether the folder box holds what the person typed (input events come from people only).
  let folderTyped = false;
  $('base-url').addEventListener('input', () => { folderTyped = true; });

  function syncSource() {
    const source = $('source').value;
    $('base-url-row').hidden = source !== 'external';
    $('task').hidden = source !== 'builtin';
    $('miniwob-task').hidden = source !== 'miniwob';
    $('task-name').hidden = source !== 'external';
    $('miniwob-missing').hidden = source !== 'miniwob' || miniwobServed;
  }
  $('source').addEventListener('change', syncSource);
  // Views follow the picker: a task chosen from any source (the lab's, MiniWoB++'s, a folder).
  for (const id of ['task', 'miniwob-task', 'source']) {
    $(id).addEventListener('change', () => {
      if (id === 'source' && $('source').value === 'external') return; // waits for the folder and name
      for (const fn of taskListeners) fn();
    });
  }

  ctx.navigator = initNavigators(ctx);
  ctx.views.watch = initWatch(ctx);
  ctx.views.train = initTrain(ctx);
  ctx.views.play = initPlay(ctx);
  ctx.views.tasks = initGallery(ctx);
  ctx.views.design = initDesign(ctx);
  ctx.views.wge = initWge(ctx);

  for (const a of document.querySelectorAll('nav a')) {
    a.addEventListener('click', (e) => { e.preventDefault(); showMessage('', 'info', { force: true }); ctx.go(a.dataset.view); });
  }
  $('message-close').addEventListener('click', () => showMessage('', 'info', { force: true }));
  window.addEventListener('resize', () => ctx.fitFrame());

  // Share links: what the current view shows, as data in the URL fragment.
  // A view's shareState may be async (the WGE view evaluates its run first).
  $('share').addEventListener('click', async () => {
    try {
      const state = await (ctx.views[ctx.view]?.shareState?.() || ctx.views.watch.shareState());
      const fragment = Lab.encodeShare(state, ctx.agentNames());
      const url = `${location.origin}${location.pathname}#${fragment}`;
      $('share-url').value = url;
      $('share-box').hidden = false;
      $('share-url').select();
      navigator.clipboard?.writeText(url).then(
        () => showMessage('Share link copied to the clipboard.', 'info'),
        () => showMessage('Copy the share link from the box above.', 'info'),
      );
    } catch (e) {
      // A link made before stands for a state no longer shown: do not leave it to be copied.
      $('share-url').value = '';
      $('share-box').hidden = true;
      showMessage(`Could not make a share link: ${errorText(e)}`);
    }
  });
  $('share-copy').addEventListener('click', () => {
    $('share-url').select();
    navigator.clipboard?.writeText($('share-url').value).catch(() => document.execCommand('copy'));
  });

  // Opening: a share link, a view, or the default (a competent agent acting right away).
  const hash = location.hash;
  let opened = false;
  if (hash.startsWith('#s=')) {
    try {
      const state = Lab.parseShare(hash, ctx.agentNames());
      ctx.setTask(state.task);
      ctx.setSeed(state.seed);
      ctx.go(state.view);
      await ctx.views[state.view].openShare(state);
      opened = true;
    } catch (e) {
      history.replaceState(null, '', '#/watch');
      showMessage(`${errorText(e).replace(/\.?$/, '.')} Showing the default view instead.`, 'error', { sticky: true });
    }
  }
  if (!opened) {
    const view = hash.startsWith('#/') ? hash.slice(2) : 'watch';
    // Each visit watches a fresh episode (the seed is in the box and in share links), not always
    // the same one.
    if (view === 'watch') ctx.setSeed(1 + Math.floor(Math.random() * 10000));
    ctx.go(view);
    await ctx.views[ctx.view].start?.();
  }
  endStart();
  document.body.dataset.ready = 'true';
}

main().catch((e) => {
  working.length = 0;
  showBusy();
  showMessage(`The lab failed to start: ${errorText(e)}`);
});

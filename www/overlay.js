// The agent overlay drawn over the task page: a heat map of the DOM stream's Q-values over the
// candidate elements (the navigator's: its policy's probabilities), the element the agent chose,
// and what it does there (mode, typed token; the navigator's profile field and value).
// The canvas sits over the iframe in the same (zoomed) box, so page coordinates map 1:1.

function heat(v) {
  // 0 -> pale blue, 1 -> saturated orange-red.
  const a = 0.12 + 0.5 * v;
  const r = Math.round(47 + (232 - 47) * v), g = Math.round(111 + (89 - 111) * v), b = Math.round(222 + (12 - 222) * v);
  return `rgba(${r},${g},${b},${a.toFixed(3)})`;
}

export function clearOverlay(canvas) {
  const g = canvas.getContext('2d');
  g.clearRect(0, 0, canvas.width, canvas.height);
}

// The canvas sized to its box at the device's pixel ratio and cleared; drawing is in CSS pixels.
export function blankCanvas(canvas) {
  const dpr = window.devicePixelRatio || 1;
  const w = canvas.clientWidth, h = canvas.clientHeight;
  if (canvas.width !== Math.round(w * dpr)) { canvas.width = Math.round(w * dpr); canvas.height = Math.round(h * dpr); }
  const g = canvas.getContext('2d');
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, w, h);
  return { g, w, h };
}

// obs: the observation the agent acted on; q: QView or null; action: an element action
// ({click: ref} | {type: [ref, text]} | {select: [ref, option]} | {set_value: [ref, value]} |
// {focus_type_field: [ref, i]}) or one of MiniWoB++'s others (at points: {click_at: [x, y]},
// {dblclick_at}, {move}, {mouse_down}, {mouse_up}, {scroll: [x, y, dy]}, {drag: [[x, y], …]};
// keys and waits: {key}, {type_text}, {type_field}, {wait}).
export function drawOverlay(canvas, obs, q, action) {
  const { g, w, h } = blankCanvas(canvas);
  if (!obs) return;
  const byRef = new Map(obs.dom.nodes.map((n) => [n.ref, n]));
  if (q && q.dom.length) {
    const lo = Math.min(...q.dom), hi = Math.max(...q.dom);
    q.leaf_refs.forEach((ref, i) => {
      const n = byRef.get(ref);
      if (!n) return;
      const v = hi > lo ? (q.dom[i] - lo) / (hi - lo) : 1;
      g.fillStyle = heat(v);
      g.fillRect(n.rect.left, n.rect.top, n.rect.width, n.rect.height);
    });
  }
  if (!action) return;
  const kind = Object.keys(action)[0];
  if (drawPointer(g, kind, action[kind], w, h)) return;
  const target = kind === 'click' ? action.click : action[kind][0];
  const n = byRef.get(target);
  if (!n) return;
  g.strokeStyle = '#e8590c';
  g.lineWidth = 2;
  g.strokeRect(n.rect.left - 1, n.rect.top - 1, n.rect.width + 2, n.rect.height + 2);
  // type, select and set_value (a replayed navigator episode) carry [ref, text].
  let text = kind === 'click' ? 'click' : kind === 'focus_type_field' ? `type field ${action[kind][1]}` : `${kind.replace('_', ' ')} "${action[kind][1]}"`;
  if (q) text += `  Q(click) ${q.mode[0].toFixed(2)} · Q(type) ${q.mode[1].toFixed(2)}`;
  label(g, n.rect, text, w, h);
}

// MiniWoB++'s actions that are not on an element: a ring where the pointer acts, a drag's path
// with its release marked, or a tag for keys and waits. False for element actions.
function drawPointer(g, kind, arg, w, h) {
  const ring = (x, y, r) => { g.beginPath(); g.arc(x, y, r, 0, 2 * Math.PI); g.stroke(); };
  g.strokeStyle = '#e8590c';
  g.lineWidth = 2;
  const at = (x, y, text) => label(g, { left: x - 6, top: y - 6, width: 12, height: 12 }, text, w, h);
  switch (kind) {
    case 'click_at': case 'dblclick_at': case 'move': case 'mouse_down': case 'mouse_up': {
      const [x, y] = arg;
      ring(x, y, 6);
      if (kind === 'dblclick_at') ring(x, y, 10);
      at(x, y, { click_at: 'click', dblclick_at: 'double-click', move: 'move', mouse_down: 'press', mouse_up: 'release' }[kind]);
      return true;
    }
    case 'scroll': {
      const [x, y, dy] = arg;
      ring(x, y, 6);
      g.beginPath(); g.moveTo(x, y); g.lineTo(x, y + Math.sign(dy) * 18); g.stroke();
      at(x, y, `scroll ${dy < 0 ? 'up' : 'down'} ${Math.abs(dy)}`);
      return true;
    }
    case 'drag': {
      g.beginPath();
      arg.forEach(([x, y], i) => (i ? g.lineTo(x, y) : g.moveTo(x, y)));
      g.stroke();
      const [x, y] = arg[arg.length - 1];
      ring(x, y, 5);
      at(x, y, 'drag');
      return true;
    }
    case 'key': case 'type_text': case 'type_field': case 'wait': {
      const text = kind === 'key' ? `key ${arg}` : kind === 'type_text' ? `type "${arg}"` : kind === 'wait' ? `wait ${arg} ms` : `type field ${arg}`;
      label(g, { left: 2, top: 2, width: 0, height: 0 }, text, w, h);
      return true;
    }
    default:
      return false;
  }
}

// The navigator's step (lab.navigatorStep's reply): the policy's probability of acting on each
// element as a heat map, the element it chose, and what it did there (the profile field it set
// and the value, or a click) with the probability of that choice.
export function drawNavigator(canvas, r) {
  const { g, w, h } = blankCanvas(canvas);
  if (!r) return;
  const hi = Math.max(0, ...r.elements.map((e) => e.probability));
  // Small elements first, so a container's colour does not hide the fields inside it.
  const byArea = [...r.elements].sort((a, b) => b.rect.width * b.rect.height - a.rect.width * a.rect.height);
  for (const e of byArea) {
    if (hi <= 0 || e.probability <= 0.01 * hi) continue;
    g.fillStyle = heat(e.probability / hi);
    g.fillRect(e.rect.left, e.rect.top, e.rect.width, e.rect.height);
  }
  const c = r.chosen;
  if (!c) return;
  g.strokeStyle = '#e8590c';
  g.lineWidth = 2;
  g.strokeRect(c.rect.left - 1, c.rect.top - 1, c.rect.width + 2, c.rect.height + 2);
  const what = c.kind === 'set' ? `set ${c.field} = "${c.value}"` : 'click';
  label(g, c.rect, `${what}  p ${c.probability.toFixed(2)}`, w, h);
}

// A tag in the bottom right corner (beside the task area, under the page's reward panel) saying
// the episode is over and how it ended; drawn over the last step's overlay, which stays.
export function drawEnded(canvas, text, good) {
  const dpr = window.devicePixelRatio || 1;
  const w = canvas.clientWidth, h = canvas.clientHeight;
  if (canvas.width !== Math.round(w * dpr)) { canvas.width = Math.round(w * dpr); canvas.height = Math.round(h * dpr); }
  const g = canvas.getContext('2d');
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.font = '600 10px system-ui, sans-serif';
  const max = Math.min(w - 4, 164);
  const lines = wrap(g, text, max - 8);
  const bw = Math.max(...lines.map((l) => g.measureText(l).width)) + 8, bh = 13 * lines.length + 4;
  const x = w - bw - 2, y = h - bh - 2;
  g.fillStyle = good ? 'rgba(23,128,61,0.92)' : 'rgba(179,38,30,0.92)';
  g.fillRect(x, y, bw, bh);
  g.fillStyle = '#fff';
  lines.forEach((l, i) => g.fillText(l, x + 4, y + 12 + 13 * i));
}

// Greedy word wrap to `max` pixels.
function wrap(g, text, max) {
  const lines = [];
  let line = '';
  for (const word of text.split(' ')) {
    const next = line ? `${line} ${word}` : word;
    if (line && g.measureText(next).width > max) { lines.push(line); line = word; } else line = next;
  }
  if (line) lines.push(line);
  return lines;
}

function label(g, rect, text, w, h) {
  g.font = '10px system-ui, sans-serif';
  const tw = g.measureText(text).width + 8;
  const lx = Math.min(Math.max(0, rect.left), Math.max(0, w - tw));
  let ly = rect.top + rect.height + 2;
  if (ly + 14 > h) ly = Math.max(0, rect.top - 16);
  g.fillStyle = 'rgba(29,35,48,0.88)';
  g.fillRect(lx, ly, tw, 14);
  g.fillStyle = '#fff';
  g.fillText(text, lx + 4, ly + 10);
}

// The task core covers the page with its black START cover the moment an episode ends (a
// person's cue to start the next one). While the lab shows an agent at work (the Watch view, the
// Train view's pages) it holds the cover back from sight, so the episode's last page stays in
// view, with the overlay, until the next episode starts. Only how the page looks changes: the page
// still shows and hides its cover as before (the Play view keeps it), the reader skips it either
// way, and nothing of the episode is touched. A page loaded afresh needs it again.
const HOLD_ID = 'weblab-holds-cover';
const HOLD_CSS = '#sync-task-cover { visibility: hidden !important; }';

export function holdCover(frame, on) {
  let doc = null;
  try { doc = frame.contentDocument; } catch { return; }
  if (!doc || !doc.head) return;
  const el = doc.getElementById(HOLD_ID);
  if (on && !el) {
    const style = doc.createElement('style');
    style.id = HOLD_ID;
    style.textContent = HOLD_CSS;
    doc.head.appendChild(style);
  } else if (!on && el) {
    el.remove();
  }
}

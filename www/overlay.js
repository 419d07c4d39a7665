// The agent overlay drawn over the task page: a heat map of the DOM stream's Q-values over the
// candidate elements, the element the agent chose, and what it does there (mode, typed token).
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

// obs: the observation the agent acted on; q: QView or null; action: {click: ref} | {type: [ref, text]} | {select: [ref, option]}
export function drawOverlay(canvas, obs, q, action) {
  const dpr = window.devicePixelRatio || 1;
  const w = canvas.clientWidth, h = canvas.clientHeight;
  if (canvas.width !== Math.round(w * dpr)) { canvas.width = Math.round(w * dpr); canvas.height = Math.round(h * dpr); }
  const g = canvas.getContext('2d');
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, w, h);
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
  const target = kind === 'click' ? action.click : action[kind][0];
  const n = byRef.get(target);
  if (!n) return;
  g.strokeStyle = '#e8590c';
  g.lineWidth = 2;
  g.strokeRect(n.rect.left - 1, n.rect.top - 1, n.rect.width + 2, n.rect.height + 2);
  let label = kind === 'click' ? 'click' : kind === 'type' ? `type "${action.type[1]}"` : `select "${action.select[1]}"`;
  if (q) label += `  Q(click) ${q.mode[0].toFixed(2)} · Q(type) ${q.mode[1].toFixed(2)}`;
  g.font = '10px system-ui, sans-serif';
  const tw = g.measureText(label).width + 8;
  let lx = Math.min(Math.max(0, n.rect.left), Math.max(0, w - tw));
  let ly = n.rect.top + n.rect.height + 2;
  if (ly + 14 > h) ly = Math.max(0, n.rect.top - 16);
  g.fillStyle = 'rgba(29,35,48,0.88)';
  g.fillRect(lx, ly, tw, 14);
  g.fillStyle = '#fff';
  g.fillText(label, lx + 4, ly + 10);
}

// Small live line charts on <canvas>: a few series, auto-scaled axes, a legend. No libraries.

const PALETTE = ['#2f6fde', '#d9480f', '#2b8a3e', '#862e9c', '#c92a2a', '#0b7285', '#e67700', '#5c7cfa', '#a61e4d'];

export class LineChart {
  // opts: {title, yMin, yMax, yLabel, format}
  constructor(canvas, opts = {}) {
    this.canvas = canvas;
    this.opts = opts;
    this.series = new Map(); // name -> {points: [[x, y]], color}
  }

  add(name, x, y) {
    if (!Number.isFinite(y)) return;
    let s = this.series.get(name);
    if (!s) {
      s = { points: [], color: PALETTE[this.series.size % PALETTE.length] };
      this.series.set(name, s);
    }
    s.points.push([x, y]);
    // Keep charts cheap: thin old points once a series gets long.
    if (s.points.length > 4000) s.points = s.points.filter((_, i) => i % 2 === 0 || i > s.points.length - 1000);
  }

  clear() { this.series.clear(); }

  toJSON() {
    return [...this.series.entries()].map(([name, s]) => ({ name, points: s.points }));
  }

  load(saved) {
    this.series.clear();
    for (const { name, points } of saved || []) for (const [x, y] of points) this.add(name, x, y);
  }

  draw() {
    const fit = blankChart(this.canvas);
    if (!fit) return;
    const { g, w, h } = fit;
    const pad = { l: 44, r: 8, t: 20, b: 20 };
    const all = [...this.series.values()].flatMap((s) => s.points);
    g.fillStyle = '#1d2330';
    g.font = '12px system-ui, sans-serif';
    g.fillText(this.opts.title || '', pad.l, 13);
    // With more than one series, a legend in rows between the title and the plot (never over a
    // line: a series at the top of its range would run under it).
    const legend = this.series.size > 1 ? legendRows(g, [...this.series].map(([name, s]) => [name, s.color]), w - pad.l - pad.r) : [];
    legend.forEach((row, i) => drawLegend(g, row, { x: pad.l, y: pad.t + 9 + 12 * i, across: true }));
    if (legend.length) pad.t += 12 * legend.length + 4;
    if (!all.length) {
      g.fillStyle = '#8a93a6';
      g.fillText('no data yet', pad.l, h / 2);
      return;
    }
    let x0 = Math.min(...all.map((p) => p[0])), x1 = Math.max(...all.map((p) => p[0]));
    let y0 = this.opts.yMin ?? Math.min(...all.map((p) => p[1]));
    let y1 = this.opts.yMax ?? Math.max(...all.map((p) => p[1]));
    if (x1 === x0) x1 = x0 + 1;
    if (y1 === y0) { y1 = y0 + 1; y0 -= this.opts.yMin === undefined ? 1 : 0; }
    const X = (x) => pad.l + (x - x0) / (x1 - x0) * (w - pad.l - pad.r);
    const Y = (y) => h - pad.b - (y - y0) / (y1 - y0) * (h - pad.t - pad.b);
    // Axes and ticks.
    g.strokeStyle = '#dde2ea';
    g.lineWidth = 1;
    g.fillStyle = '#5d6678';
    g.font = '10px system-ui, sans-serif';
    const fmt = this.opts.format || ((v) => (Math.abs(v) >= 1000 ? (v / 1000).toFixed(1) + 'k' : +v.toPrecision(3)));
    for (let i = 0; i <= 4; i++) {
      const y = y0 + (y1 - y0) * i / 4;
      g.beginPath(); g.moveTo(pad.l, Y(y)); g.lineTo(w - pad.r, Y(y)); g.stroke();
      g.fillText(fmt(y), 2, Y(y) + 3);
    }
    g.fillText(fmt(x0), pad.l, h - 5);
    const xr = fmt(x1);
    g.fillText(xr, w - pad.r - g.measureText(xr).width, h - 5);
    if (this.opts.xLabel) {
      const t = this.opts.xLabel;
      g.fillText(t, pad.l + (w - pad.l - pad.r - g.measureText(t).width) / 2, h - 5);
    }
    // Series.
    for (const s of this.series.values()) {
      g.strokeStyle = s.color;
      g.lineWidth = 1.5;
      g.beginPath();
      s.points.forEach(([x, y], i) => (i ? g.lineTo(X(x), Y(y)) : g.moveTo(X(x), Y(y))));
      g.stroke();
    }
  }
}

// Legend entries ([label, colour]) laid out in rows that fit `width`, as drawLegend draws them
// across.
function legendRows(g, entries, width) {
  g.font = '10px system-ui, sans-serif';
  const rows = [];
  let used = 0;
  for (const e of entries) {
    const wide = g.measureText(e[0]).width + 24;
    if (!rows.length || (used + wide > width && rows.at(-1).length)) { rows.push([]); used = 0; }
    rows.at(-1).push(e);
    used += wide;
  }
  return rows;
}

// A chart's canvas sized to its box at the device's pixel ratio and cleared, for drawing in CSS
// pixels: {g, w, h}; null while it has no box (a hidden view's).
export function blankChart(canvas) {
  const dpr = window.devicePixelRatio || 1;
  const w = canvas.clientWidth, h = canvas.clientHeight;
  if (!w || !h) return null;
  if (canvas.width !== Math.round(w * dpr)) { canvas.width = Math.round(w * dpr); canvas.height = Math.round(h * dpr); }
  const g = canvas.getContext('2d');
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, w, h);
  return { g, w, h };
}

// A chart's legend: a colour swatch and a label per entry ([label, colour]) on a light backing,
// in a column that ends at the right edge `x` from the baseline `y` down (the line charts'), or
// with `across`, in one row from `x` rightwards.
export function drawLegend(g, entries, { x, y, across = false }) {
  g.font = '10px system-ui, sans-serif';
  for (const [label, color] of entries) {
    const tw = g.measureText(label).width;
    const lx = across ? x : x - tw - 14;
    g.fillStyle = 'rgba(255,255,255,0.85)';
    g.fillRect(lx - 3, y - 9, tw + 17, 12);
    g.fillStyle = color;
    g.fillRect(lx, y - 7, 8, 8);
    g.fillStyle = '#1d2330';
    g.fillText(label, lx + 11, y);
    if (across) x += tw + 24;
    else y += 12;
  }
}

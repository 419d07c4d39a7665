// The curriculum view: what an adversarial run (the population loop, src/web/learner/adversary.rs)
// shows beside the Train view's usual navigator panels — the adversary's latest designs as
// thumbnails (each opens in the Design view and has a share link), the histogram of primitives
// over training (early / middle / late thirds, as AEG's Figure 7), and the curves of active and
// passive primitives, the expected budget, the regret and each navigator's returns. It only draws
// what the learner reports; the rules (objectives, judging, the thirds) are the worker's.
import { LineChart, blankChart, drawLegend } from './charts.js';
import { errorText } from './app.js';

const $ = (id) => document.getElementById(id);
// The thumbnails' scale (of the frame a generated site renders in, Lab.designLimits().frame_size).
const THUMB_SCALE = 0.3;
const THIRDS = [['early', '#9ec5fe'], ['middle', '#3d7bd9'], ['late', '#0b3d91']];

export function initCurriculum(ctx) {
  const { Lab } = ctx;
  const info = Lab.adversaryObjectives(); // {objectives: [{key, label, population, alpha, beta, delta}], episodes, max_pages, slots}
  const primitives = Lab.primitives();
  const SITE_SIZE = Lab.designLimits().frame_size;
  const byIndex = new Map(primitives.map((p) => [p.index, p]));
  let designs = []; // the latest designs: [{iteration, name, seed, design}]
  let histogram = null; // the worker's thirds: [{from, to, designs, counts}]
  let shownKey = ''; // the thumbnails on screen, to redraw only when they change

  const charts = {
    advKinds: new LineChart($('chart-adv-kinds'), { title: 'Primitives per design: active and passive', yMin: 0, xLabel: 'iteration' }),
    advBudget: new LineChart($('chart-adv-budget'), { title: `Expected budget (non-SKIP count of ${info.slots})`, yMin: 0, xLabel: 'iteration' }),
    advRegret: new LineChart($('chart-adv-regret'), { title: 'Regret (ALP: learning progress)', xLabel: 'iteration' }),
    advReturns: new LineChart($('chart-adv-returns'), { title: 'Mean return per navigator (discounted)', xLabel: 'iteration' }),
  };

  // ------------------------------------------------------------ choosing an adversary
  const objective = (key) => info.objectives.find((o) => o.key === key);
  const isAdversary = (kind) => typeof kind === 'string' && kind.startsWith('adversary:');

  function addOptions(select) {
    const group = Object.assign(document.createElement('optgroup'), { label: 'Adversaries (a population of navigators)' });
    for (const o of info.objectives) group.append(new Option(o.label, `adversary:${o.key}`));
    select.append(group);
  }

  function note(kind) {
    const o = objective(kind.slice('adversary:'.length));
    const who = o.population === 1 ? 'one navigator' : `a population of ${o.population} navigators`;
    return `The ${o.label} adversary (an LSTM) designs every site; ${who} play${o.population === 1 ? 's' : ''} each one ` +
      `${info.episodes} times (M) and learn${o.population === 1 ? 's' : ''} from it, and the adversary learns from their returns. ` +
      `Up to ${info.max_pages} pages (K) and ${info.slots} primitives (N) per design.`;
  }

  // The objective's constants, with the papers' values as defaults (ObjectiveConfig::new).
  function showConstants(kind, given = {}) {
    const box = $('train-adversary');
    box.replaceChildren();
    box.hidden = !isAdversary(kind);
    if (box.hidden) return;
    const o = objective(kind.slice('adversary:'.length));
    const fields = o.key === 'code' ? ['alpha', 'beta', 'delta'] : o.alpha ? ['alpha'] : [];
    const row = Object.assign(document.createElement('div'), { className: 'row' });
    for (const f of fields) {
      const label = document.createElement('label');
      const input = Object.assign(document.createElement('input'), { type: 'number', step: 'any', id: `train-adv-${f}`, value: String(given[f] ?? o[f]) });
      label.append(`${{ alpha: 'α', beta: 'β', delta: 'δ' }[f]} `, input);
      row.append(label);
    }
    const defaults = fields.map((f) => `${{ alpha: 'α', beta: 'β', delta: 'δ' }[f]} = ${o[f]}`).join(', ');
    const p = Object.assign(document.createElement('p'), {
      className: 'note',
      textContent: fields.length ? `The papers' values: ${defaults} (src/adversary/config.rs says where each comes from).` : `${o.label} has no constants to set.`,
    });
    box.append(row, p);
  }

  // The generator as a training request names it (GeneratorSpec::Adversary); a constant that is
  // not a number is named here, a number out of range by the learner.
  function spec(kind) {
    const o = objective(kind.slice('adversary:'.length));
    const out = { kind: 'adversary', objective: o.key };
    for (const f of ['alpha', 'beta', 'delta']) {
      const input = $(`train-adv-${f}`);
      if (!input) continue;
      const v = Number(input.value);
      if (input.value.trim() === '' || !Number.isFinite(v)) throw new Error(`${f} must be a number, not "${input.value}"`);
      out[f] = v;
    }
    return out;
  }

  const label = (s) => objective(s.objective)?.label || s.objective;

  // ------------------------------------------------------------ the designs
  function shareState(d) {
    return { v: 1, view: 'design', task: { source: 'generated', name: d.name, design: d.design }, seed: d.seed, config: null, replay: null };
  }

  function thumbnail(d) {
    const card = Object.assign(document.createElement('figure'), { className: 'cur-design' });
    card.dataset.iteration = String(d.iteration);
    const frameBox = Object.assign(document.createElement('div'), { className: 'cur-thumb' });
    frameBox.style.width = `${SITE_SIZE[0] * THUMB_SCALE}px`;
    frameBox.style.height = `${SITE_SIZE[1] * THUMB_SCALE}px`;
    const frame = document.createElement('iframe');
    // No scripts run in it (no allow-scripts); same-origin so the page (and tests) can read it.
    frame.setAttribute('sandbox', 'allow-same-origin');
    frame.title = `Design ${d.iteration}`;
    frame.tabIndex = -1;
    frame.style.width = `${SITE_SIZE[0]}px`;
    frame.style.height = `${SITE_SIZE[1]}px`;
    frame.style.transform = `scale(${THUMB_SCALE})`;
    try {
      frame.srcdoc = Lab.sitePreview(d.design, d.seed);
    } catch (e) {
      frame.srcdoc = '';
      frameBox.title = errorText(e);
    }
    frameBox.append(frame);
    const pages = d.design.number_of_pages;
    const placed = d.design.action.length;
    const active = d.design.action.filter((i) => byIndex.get(i)?.active).length;
    const caption = document.createElement('figcaption');
    caption.append(
      Object.assign(document.createElement('b'), { textContent: `#${d.iteration}` }),
      ` ${pages} ${pages === 1 ? 'page' : 'pages'}, ${placed} primitives (${active} active), seed ${d.seed}`,
    );
    const open = Object.assign(document.createElement('button'), { type: 'button', className: 'secondary', textContent: 'Open in Design' });
    open.addEventListener('click', async () => {
      ctx.go('design');
      try { await ctx.views.design.openShare(shareState(d)); } catch (e) { ctx.message(errorText(e)); }
    });
    const link = Object.assign(document.createElement('a'), { className: 'cur-share', textContent: 'Share link', target: '_blank', rel: 'noopener' });
    try {
      link.href = `${location.origin}${location.pathname}#${Lab.encodeShare(shareState(d), ctx.agentNames())}`;
    } catch (e) {
      link.removeAttribute('href');
      link.title = errorText(e);
    }
    const actions = Object.assign(document.createElement('div'), { className: 'cur-actions' });
    actions.append(open, link);
    caption.append(actions);
    card.append(frameBox, caption);
    return card;
  }

  // Newest first. A card already on screen stays where it is (moving an iframe in the document
  // would load it again): new ones go in front, old ones leave from the end.
  function drawDesigns() {
    const key = designs.map((d) => d.iteration).join(',');
    if (key === shownKey) return;
    shownKey = key;
    const box = $('cur-designs');
    if (!designs.length) {
      box.replaceChildren(Object.assign(document.createElement('p'), { className: 'note', textContent: 'No design yet.' }));
      return;
    }
    const keep = new Set(designs.map((d) => String(d.iteration)));
    for (const el of [...box.children]) if (!keep.has(el.dataset?.iteration)) el.remove();
    const have = new Set([...box.children].map((el) => el.dataset.iteration));
    for (const d of designs) if (!have.has(String(d.iteration))) box.prepend(thumbnail(d));
  }

  // ------------------------------------------------------------ the histogram (AEG Figure 7)
  function drawHistogram() {
    const fit = blankChart($('cur-histogram'));
    if (!fit) return;
    const { g, w, h } = fit;
    g.fillStyle = '#1d2330';
    g.font = '12px system-ui, sans-serif';
    g.fillText('Primitives over training: share of the designs of each third that hold each one', 44, 13);
    const thirds = histogram || [];
    const seen = thirds.reduce((n, t) => n + t.designs, 0);
    if (!seen) {
      g.fillStyle = '#8a93a6';
      g.fillText('no designs yet', 44, h / 2);
      return;
    }
    const pad = { l: 44, r: 8, t: 34, b: 92 };
    const n = primitives.length;
    const gw = (w - pad.l - pad.r) / n;
    const bw = Math.max(1, (gw - 2) / 3);
    const Y = (v) => h - pad.b - v * (h - pad.t - pad.b);
    g.strokeStyle = '#dde2ea';
    g.fillStyle = '#5d6678';
    g.font = '10px system-ui, sans-serif';
    for (let i = 0; i <= 4; i++) {
      const v = i / 4;
      g.beginPath(); g.moveTo(pad.l, Y(v)); g.lineTo(w - pad.r, Y(v)); g.stroke();
      g.fillText(`${100 * v}%`, 8, Y(v) + 3);
    }
    thirds.forEach((t, k) => {
      if (!t.designs) return;
      g.fillStyle = THIRDS[k][1];
      t.counts.forEach((count, i) => {
        const v = Math.min(1, count / t.designs);
        g.fillRect(pad.l + i * gw + 1 + k * bw, Y(v), bw, Y(0) - Y(v));
      });
    });
    // Names under the bars: fields (active) dark, page parts (passive) grey.
    g.save();
    g.font = '9px system-ui, sans-serif';
    primitives.forEach((p, i) => {
      g.save();
      g.translate(pad.l + i * gw + gw / 2 + 3, h - pad.b + 4);
      g.rotate(-Math.PI / 2.6);
      g.fillStyle = p.active ? '#1d2330' : '#8a93a6';
      g.textAlign = 'right';
      g.fillText(p.name, 0, 0);
      g.restore();
    });
    g.restore();
    // The legend: which iterations each third holds.
    drawLegend(g, thirds.map((t, k) => [`${THIRDS[k][0]}: iterations ${t.from}–${Math.max(t.from, t.to - 1)}`, THIRDS[k][1]]),
      { x: pad.l, y: 28, across: true });
  }

  // ------------------------------------------------------------ the run's messages
  function onAdversary(m) {
    $('cur-note').textContent = `${m.generator}: ${m.population} ${m.population === 1 ? 'navigator' : 'navigators'}, M = ${m.episodes} episodes each per design` +
      (m.objective.alpha ? `, α = ${+m.objective.alpha.toPrecision(4)}` : '') +
      (m.objective.objective === 'code' ? `, β = ${m.objective.beta}, δ = ${m.objective.delta}` : '') +
      `; K = ${m.config.max_pages} pages, N = ${m.config.slots} slots. Newest design first; the current one is on the training page.`;
  }

  function onProgress(p) {
    for (const it of p.new_iterations) {
      charts.advKinds.add('active', it.iteration, it.active);
      charts.advKinds.add('passive', it.iteration, it.passive);
      if (it.expected_budget != null) charts.advBudget.add('expected budget', it.iteration, it.expected_budget);
      charts.advBudget.add('primitives placed', it.iteration, it.primitives);
      if (it.regret != null) charts.advRegret.add('regret', it.iteration, it.regret);
      it.returns.forEach((r, i) => charts.advReturns.add(`navigator ${i}`, it.iteration, r));
    }
    if (p.designs.length) designs = designs.concat(p.designs).slice(-4);
    histogram = p.histogram;
    draw();
  }

  function draw() {
    if (ctx.view !== 'train') return;
    drawDesigns();
    drawHistogram();
  }

  function clear() {
    designs = [];
    histogram = null;
    shownKey = '';
    $('cur-note').textContent = '';
    for (const c of Object.values(charts)) c.clear();
    draw();
  }

  return {
    charts,
    isAdversary,
    addOptions,
    note,
    showConstants,
    spec,
    label,
    onAdversary,
    onProgress,
    draw,
    clear,
    // What a snapshot keeps beside the charts, so a reload shows the run as it was.
    toJSON: () => ({ designs, histogram, note: $('cur-note').textContent }),
    load(saved) {
      designs = Array.isArray(saved?.designs) ? saved.designs.slice(-4) : [];
      histogram = Array.isArray(saved?.histogram) ? saved.histogram : null;
      $('cur-note').textContent = typeof saved?.note === 'string' ? saved.note : '';
      shownKey = '';
      draw();
    },
  };
}

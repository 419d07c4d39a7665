// The WGE view's drawing of an explored episode: its steps listed, the elements a workflow step
// matched shaded over the page with the one acted on outlined, and how the episode ended.
// wge.js plays the episodes; this draws them.
import { scrollListTo } from '../app.js';
import { blankCanvas } from '../overlay.js';

const $ = (id) => document.getElementById(id);
const el = (tag, props = {}, ...children) => {
  const e = Object.assign(document.createElement(tag), props);
  e.append(...children.filter((c) => c !== null && c !== undefined));
  return e;
};
const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

// The elements the workflow step matched (shaded), the one acted on (outlined) and the step.
export function drawStep(step) {
  const { g, w, h } = blankCanvas($('overlay'));
  g.fillStyle = 'rgba(47,111,222,0.22)';
  g.strokeStyle = 'rgba(47,111,222,0.9)';
  g.lineWidth = 1;
  for (const m of step.matched) {
    g.fillRect(m.rect.left, m.rect.top, m.rect.width, m.rect.height);
    g.strokeRect(m.rect.left + 0.5, m.rect.top + 0.5, m.rect.width - 1, m.rect.height - 1);
  }
  const kind = Object.keys(step.action)[0];
  const target = kind === 'click' ? step.action.click : step.action[kind][0];
  const t = step.matched.find((m) => m.ref === target);
  if (!t) return;
  g.strokeStyle = '#e8590c';
  g.lineWidth = 2;
  g.strokeRect(t.rect.left - 1, t.rect.top - 1, t.rect.width + 2, t.rect.height + 2);
  g.font = '10px system-ui, sans-serif';
  const text = step.notation;
  const tw = Math.min(w - 2, g.measureText(text).width + 8);
  const lx = Math.min(Math.max(0, t.rect.left), Math.max(0, w - tw));
  let ly = t.rect.top + t.rect.height + 3;
  if (ly + 14 > h) ly = Math.max(0, t.rect.top - 17);
  g.fillStyle = 'rgba(29,35,48,0.88)';
  g.fillRect(lx, ly, tw, 14);
  g.fillStyle = '#fff';
  g.fillText(text, lx + 4, ly + 10, tw - 8);
}

export function listSteps(ep, current = -1) {
  if (!ep.steps.length) {
    $('wge-steps').replaceChildren(el('li', { className: 'quiet', textContent: 'No action: the workflow stopped on the first page.' }));
    return;
  }
  $('wge-steps').replaceChildren(...ep.steps.map((s, i) => el('li', { className: i === current ? 'current' : '' },
    s.skipped ? el('span', { className: 'quiet', textContent: `(skipped ${s.skipped}) ` }) : null,
    el('span', { textContent: s.description }),
    el('span', { className: 'wge-step-program', textContent: `${s.text} — ${plural(s.matched.length, 'element')} matched` }))));
  scrollListTo($('wge-steps'), $('wge-steps').children[current], { center: true });
}

export function showOutcome(ep) {
  const out = $('wge-outcome');
  out.textContent = `Seed ${ep.seed}${ep.demo === null ? '' : ` · workflow of demonstration #${ep.demo + 1}`}: ${ep.success ? 'success' : 'no success'}, raw reward ${ep.raw_reward} · ${ep.ending}`;
  out.className = `outcome ${ep.success ? 'good' : 'bad'}`;
}

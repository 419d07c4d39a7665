// The WGE view's list of demonstrations: one card per demonstration, its induced workflow lattice
// step by step, each step's constraints with the workflow policy's probability of choosing them.
// Which cards and "show all" lists are open is kept across re-renders.
import { errorText } from '../app.js';

// Constraints listed per lattice edge before "show all" (an edge often has dozens).
const SHOWN_PROGRAMS = 6;
const SOURCE_LABEL = { person: 'recorded by a person', scripted: 'scripted (oracle)', imported: 'imported file' };

export const el = (tag, props = {}, ...children) => {
  const e = Object.assign(document.createElement(tag), props);
  e.append(...children.filter((c) => c !== null && c !== undefined));
  return e;
};
export const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

function optionItem(o) {
  const li = el('li', { className: `wge-program${o.skip ? ' wge-skip' : ''}`, title: o.skip ? '' : `${o.notation} · ψ = ${o.weight.toFixed(3)} · ${plural(o.paths, 'execution path')} on the demonstration's page` });
  const bar = el('span', { className: 'wge-weight' });
  bar.style.setProperty('--w', Math.max(0, Math.min(1, o.probability)).toFixed(3));
  li.append(bar, el('span', { className: 'wge-weight-num', textContent: o.probability.toFixed(2) }), el('span', { className: 'wge-program-text', textContent: o.text }));
  if (o.notation) li.append(el('code', { textContent: o.notation }));
  return li;
}

// busy(): whether the view is using the page or the session (then Remove does nothing);
// onRemoved(): after a demonstration was removed (the list is drawn again by then).
export function demoList(ctx, session, { busy, onRemoved }) {
  // Which demonstrations' cards and "show all" lists are open.
  const expanded = new Set();
  const open = new Set([0]);

  function demoCard(d) {
    const card = el('details', { className: 'wge-demo' });
    card.open = open.has(d.index);
    card.addEventListener('toggle', () => { if (card.open) open.add(d.index); else open.delete(d.index); });
    const summary = el('summary', {},
      el('span', { className: `wge-source wge-source-${d.source}`, textContent: SOURCE_LABEL[d.source] || d.source }),
      el('span', { className: 'wge-demo-name', textContent: `#${d.index + 1} ${d.label}` }),
      el('span', { className: 'quiet', textContent: `${plural(d.positions.length, 'action')} · raw reward ${d.raw_reward} · ${plural(d.program_count, 'workflow step')} induced` }));
    const remove = el('button', { type: 'button', className: 'secondary small', textContent: 'Remove', title: 'Remove this demonstration (the workflow policy, and DOMNet when it learns, start again over the others)' });
    remove.addEventListener('click', (e) => {
      e.preventDefault();
      if (busy()) return;
      try { session.remove(d.index); } catch (err) { ctx.message(errorText(err)); }
      open.clear();
      expanded.clear();
      onRemoved();
    });
    summary.append(remove);
    card.append(summary);
    const steps = el('ol', { className: 'wge-lattice' });
    d.positions.forEach((p, i) => {
      const key = `${d.index}:${i}`;
      const all = expanded.has(key);
      const shown = all ? p.options : p.options.slice(0, SHOWN_PROGRAMS);
      const li = el('li', {},
        el('div', { className: 'wge-action', textContent: `Did: ${p.action}` }),
        el('div', { className: 'quiet', textContent: `${plural(p.options.length, 'option')} kept of ${p.induced} induced · baseline V ${p.value.toFixed(2)}` }),
        el('ul', { className: 'wge-programs' }, ...shown.map(optionItem)));
      if (p.options.length > SHOWN_PROGRAMS) {
        const more = el('button', { type: 'button', className: 'link', textContent: all ? 'show fewer' : `show all ${p.options.length}` });
        more.addEventListener('click', () => {
          if (all) expanded.delete(key); else expanded.add(key);
          draw();
        });
        li.append(more);
      }
      steps.append(li);
    });
    card.append(steps);
    return card;
  }

  function draw() {
    const demos = session.demonstrations();
    document.getElementById('wge-demos').replaceChildren(...demos.map(demoCard));
    document.getElementById('wge-demos-empty').hidden = demos.length > 0;
    const task = session.task();
    document.getElementById('wge-demo-count').textContent = demos.length ? `${demos.length} of ${task}` : '';
  }

  return {
    draw,
    // The demonstrations start afresh: only the first card open.
    reset() {
      open.clear();
      open.add(0);
      expanded.clear();
    },
  };
}

// Tasks: every task of the lab as a card (difficulty class, time limit, what it asks), with ways
// to open it: play it yourself (recorded), watch an agent on it, or its bare page in a new tab.

const $ = (id) => document.getElementById(id);

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v;
    else if (k.startsWith('data-')) e.setAttribute(k, v);
    else e[k] = v;
  }
  for (const c of children) e.append(c);
  return e;
}

export function initGallery(ctx) {
  let filter = 'all';

  function card(t) {
    const badge = el('span', { class: `badge ${t.difficulty}`, title: t.difficulty_estimated ? 'our estimate: DOM-Q-Net\'s appendix does not classify this task' : 'DOM-Q-Net appendix 6.4' },
      t.difficulty + (t.difficulty_estimated ? ' (est.)' : ''));
    const meta = [`${t.time_limit_s} s limit`];
    if (t.fields.length) meta.push(`fields: ${t.fields.join(', ')}`);
    if (t.modes && t.modes.length) meta.push(`modes: ${t.modes.join(' / ')}`);
    if (t.size) meta.push(`${t.size[0]}×${t.size[1]} px`);
    const shipped = ctx.agents.find((a) => a.tasks.includes(t.name));
    if (shipped) meta.push(`pretrained agent: ${Math.round(100 * (shipped.eval_success ?? 0))}% greedy`);
    const play = el('button', { type: 'button' }, 'Play');
    play.addEventListener('click', () => open(t.name, 'play'));
    const watch = el('button', { type: 'button', class: 'secondary' }, 'Watch an agent');
    watch.addEventListener('click', () => open(t.name, 'watch'));
    const page = el('a', { class: 'page-link', href: `tasks/${t.name}.html`, target: '_blank', rel: 'noopener' }, 'Bare page ↗');
    return el('article', { class: 'card', 'data-task': t.name, 'data-difficulty': t.difficulty },
      el('h3', {}, t.name), badge, el('p', {}, t.summary), el('div', { class: 'meta' }, meta.join(' · ')),
      el('div', { class: 'buttons' }, play, watch, page));
  }

  async function open(name, view) {
    ctx.setTask(name);
    ctx.go(view);
    await ctx.views[view].start?.({ task: name });
  }

  function render() {
    const grid = $('gallery-grid');
    grid.replaceChildren(...ctx.tasks.filter((t) => filter === 'all' || t.difficulty === filter).map(card));
    for (const b of document.querySelectorAll('#gallery-filters button')) b.classList.toggle('active', b.dataset.filter === filter);
    const counts = ['easy', 'medium', 'hard'].map((d) => `${ctx.tasks.filter((t) => t.difficulty === d).length} ${d}`);
    $('gallery-count').textContent = `${ctx.tasks.length} tasks: ${counts.join(', ')}.`;
  }

  for (const b of document.querySelectorAll('#gallery-filters button')) {
    b.addEventListener('click', () => { filter = b.dataset.filter; render(); });
  }
  render();

  return {
    enter() { render(); },
  };
}

// Tasks: every task as a card — the lab's own and the real MiniWoB++ pages, each marked with its
// source — (difficulty class, time limit, what it asks or what acting on it takes), with ways to
// open it: play it yourself (recorded), watch an agent on it, or its bare page in a new tab.

import { shippedAgentFor } from './watch/agent.js';

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
    const source = el('span', { class: 'badge source', title: 'written for this lab after MiniWoB' }, 'the lab\'s');
    const meta = [`${t.time_limit_s} s limit`];
    if (t.fields.length) meta.push(`fields: ${t.fields.join(', ')}`);
    if (t.modes && t.modes.length) meta.push(`modes: ${t.modes.join(' / ')}`);
    if (t.size) meta.push(`${t.size[0]}×${t.size[1]} px`);
    agentMeta(t.name, meta);
    return article(t.name, t.name, [source, badge], t.summary, meta, `tasks/${t.name}.html`, true, t.difficulty);
  }

  // A real MiniWoB++ page: its source, what acting on it takes, its group in MiniWoB++'s docs.
  function realCard(t) {
    const key = ctx.miniwob.prefix + t.name;
    const source = el('span', { class: 'badge source miniwob', title: `the miniwob package ${ctx.miniwob.version} from PyPI (MIT), served at ${ctx.miniwob.mount}` },
      `MiniWoB++ ${ctx.miniwob.version}`);
    const badges = [source];
    if (t.difficulty) {
      badges.push(el('span', { class: `badge ${t.difficulty}`, title: t.difficulty_estimated ? 'our estimate (as for the lab\'s task of this name)' : 'DOM-Q-Net appendix 6.4' },
        t.difficulty + (t.difficulty_estimated ? ' (est.)' : '')));
    }
    const meta = [`${t.time_limit_s} s limit`, t.group];
    if (t.wge_40) meta.push('WGE\'s 40 tasks');
    agentMeta(key, meta);
    const what = INTERACTION[t.interaction] || t.interaction;
    const lab = ctx.tasks.some((x) => x.name === t.name) ? ' The lab has its own task of this name.' : '';
    return article(key, t.name, badges, `${what}.${lab}`, meta, `${ctx.miniwob.base}${t.name}.html`, ctx.miniwobServed, t.difficulty || 'none');
  }

  // The shipped agent the Watch view loads for `key` and its greedy success there (a multitask
  // agent's on this page); one trained on the lab's page of a real page's name is named as such:
  // it was neither trained nor judged on this page.
  function agentMeta(key, meta) {
    const found = shippedAgentFor(ctx, key);
    if (!found) return;
    const shipped = found.entry;
    if (found.elsewhere) {
      meta.push(`pretrained agent "${shipped.name}" of the lab's page (not trained or judged here)`);
      return;
    }
    const own = (shipped.per_task || []).find((p) => p.task === key);
    const rate = Math.round(100 * ((own ? own.eval_success : shipped.eval_success) ?? 0));
    meta.push(shipped.per_task ? `pretrained multitask agent "${shipped.name}" (${shipped.tasks.length} pages): ${rate}% greedy` : `pretrained agent: ${rate}% greedy`);
  }

  function article(key, title, badges, summary, meta, href, available, difficulty) {
    const play = el('button', { type: 'button', disabled: !available }, 'Play');
    play.addEventListener('click', () => open(key, 'play'));
    const watch = el('button', { type: 'button', class: 'secondary', disabled: !available }, 'Watch an agent');
    watch.addEventListener('click', () => open(key, 'watch'));
    const page = el('a', { class: 'page-link', href, target: '_blank', rel: 'noopener' }, 'Bare page ↗');
    return el('article', { class: 'card', 'data-task': key, 'data-difficulty': difficulty },
      el('h3', {}, title), ...badges, el('p', {}, summary), el('div', { class: 'meta' }, meta.join(' · ')),
      el('div', { class: 'buttons' }, play, watch, ...(available ? [page] : [])));
  }

  async function open(name, view) {
    ctx.setTask(name);
    ctx.go(view);
    await ctx.views[view].start?.({ task: name });
  }

  function render() {
    const grid = $('gallery-grid');
    const byClass = (t) => ['all', 'lab', 'miniwob'].includes(filter) || t.difficulty === filter;
    const lab = filter === 'miniwob' ? [] : ctx.tasks.filter(byClass).map(card);
    const real = filter === 'lab' ? [] : ctx.miniwobTasks.filter(byClass).map(realCard);
    grid.replaceChildren(...lab, ...real);
    for (const b of document.querySelectorAll('#gallery-filters button')) b.classList.toggle('active', b.dataset.filter === filter);
    const counts = ['easy', 'medium', 'hard'].map((d) => `${ctx.tasks.filter((t) => t.difficulty === d).length} ${d}`);
    const kinds = {};
    for (const t of ctx.miniwobTasks) kinds[t.interaction] = (kinds[t.interaction] || 0) + 1;
    $('gallery-count').textContent = `${ctx.tasks.length} tasks of the lab's own: ${counts.join(', ')}. `
      + `${ctx.miniwobTasks.length} real MiniWoB++ tasks: ${Object.entries(kinds).map(([k, n]) => `${n} ${k}`).join(', ')}.`;
    $('gallery-miniwob-missing').hidden = ctx.miniwobServed;
  }

  for (const b of document.querySelectorAll('#gallery-filters button')) {
    b.addEventListener('click', () => { filter = b.dataset.filter; render(); });
  }
  render();

  return {
    enter() { render(); },
  };
}

// What acting on a real page takes (src/env/miniwob.rs, Interaction).
const INTERACTION = {
  'click-type': 'Click elements and type text from the instruction',
  coordinates: 'Click at a point of a drawing',
  hover: 'Move the pointer over elements',
  drag: 'Press, move and release the pointer (drag, sliders, selecting text)',
  scroll: 'Scroll a box',
  'free-text': 'Type text that is not in the instruction',
  timing: 'Act at the right moment',
};

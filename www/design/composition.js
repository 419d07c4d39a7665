// The Design view's composition: a site's pages of primitives, the palette that adds to them and
// the list that orders, moves and removes them. design.js owns the rest (the page, rendering,
// watching, files and links) and is told of every edit through `onEdit`.
//
// The composition is pages of primitive indices; `designObject` gives the reference's design
// format ({number_of_pages, action, action_page}).

const $ = (id) => document.getElementById(id);

export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k.startsWith('data-') || k.startsWith('aria-')) e.setAttribute(k, v);
    else e[k] = v;
  }
  for (const c of children) e.append(c);
  return e;
}

// primitives: Lab.primitives(); limits: {MAX_PAGES, MAX_PLACED}; note(text, kind): the line under
// the controls; onEdit(): the person changed the composition (design.js re-renders).
export function composition(primitives, { MAX_PAGES, MAX_PLACED }, { note, onEdit }) {
  const byIndex = new Map(primitives.map((p) => [p.index, p]));
  const byName = new Map(primitives.map((p) => [p.name, p]));
  let pages = [[]]; // primitive indices per page, in order
  let selected = 0; // the page the palette adds to

  // The design as it was opened, kept while the composition is unchanged: a site's ids (the k-th
  // occurrence of a primitive) and its profile follow the order of the entries across pages,
  // which the per-page lists lose, so an opened design (a share link, a generated one) renders
  // as given. Any edit makes it a new design, in page order.
  let opened = null; // {key: the composition it gave, design}
  const compositionKey = () => JSON.stringify(pages);

  function designObject() {
    if (opened && opened.key === compositionKey()) {
      const d = opened.design;
      return { number_of_pages: d.number_of_pages, action: [...d.action], action_page: [...d.action_page] };
    }
    const action = [], action_page = [];
    pages.forEach((list, p) => list.forEach((i) => { action.push(i); action_page.push(p); }));
    return { number_of_pages: pages.length, action, action_page };
  }

  // Loads a checked design (indices or names).
  function load(d) {
    const action = d.action || [];
    const where = d.action_page || [];
    const count = Math.max(1, d.number_of_pages || 0, ...where.map((p) => p + 1));
    pages = Array.from({ length: count }, () => []);
    const kept = { number_of_pages: count, action: [], action_page: [] };
    action.forEach((a, k) => {
      const p = typeof a === 'number' ? byIndex.get(a) : byName.get(a);
      if (p && !pages[where[k]].includes(p.index)) {
        pages[where[k]].push(p.index);
        kept.action.push(p.index);
        kept.action_page.push(where[k]);
      }
    });
    opened = { key: compositionKey(), design: kept };
    selected = 0;
  }

  const placedCount = () => pages.reduce((n, list) => n + list.length, 0);

  // ------------------------------------------------------------------ edits by the person

  function add(index) {
    const p = byIndex.get(index);
    if (pages[selected].includes(index)) {
      note(`${p.name} is already on Page ${selected + 1}: a page holds each primitive once (the design format drops repeats).`, 'warn');
      return;
    }
    if (placedCount() >= MAX_PLACED) {
      note(`A site holds at most ${MAX_PLACED} primitives.`, 'warn');
      return;
    }
    pages[selected].push(index);
    note(`Added ${p.name} to Page ${selected + 1}.`);
    onEdit();
  }

  function move(page, k, delta) {
    const list = pages[page];
    const j = k + delta;
    if (j < 0 || j >= list.length) return;
    [list[k], list[j]] = [list[j], list[k]];
    note('');
    onEdit();
  }

  function moveToPage(page, k, target) {
    const index = pages[page][k];
    const p = byIndex.get(index);
    if (pages[target].includes(index)) {
      note(`${p.name} is already on Page ${target + 1}: a page holds each primitive once.`, 'warn');
      draw();
      return;
    }
    pages[page].splice(k, 1);
    pages[target].push(index);
    note(`Moved ${p.name} to Page ${target + 1}.`);
    onEdit();
  }

  function remove(page, k) {
    const [index] = pages[page].splice(k, 1);
    note(`Removed ${byIndex.get(index).name} from Page ${page + 1}.`);
    onEdit();
  }

  function addPage() {
    if (pages.length >= MAX_PAGES) return;
    pages.push([]);
    selected = pages.length - 1;
    note(`Added Page ${pages.length}: the palette now adds to it.`);
    onEdit();
  }

  function removePage() {
    if (pages.length <= 1) return;
    const [gone] = pages.splice(selected, 1);
    note(`Removed Page ${selected + 1}${gone.length ? ` and its ${gone.length} primitive${gone.length === 1 ? '' : 's'}` : ''}.`);
    selected = Math.min(selected, pages.length - 1);
    onEdit();
  }

  function select(page) {
    selected = page;
    draw();
  }

  // ------------------------------------------------------------------ drawing the controls

  function chip(p) {
    const title = [`${p.kind}`, `“${p.label}”`];
    if (p.field) title.push(`profile field ${p.field}`);
    if (p.end_on_click) title.push('ends the episode (raw reward −1) when clicked');
    const b = el('button', { type: 'button', class: `chip${p.end_on_click ? ' ends' : ''}`, title: title.join(' · '), 'data-primitive': p.name },
      p.name);
    b.addEventListener('click', () => add(p.index));
    return b;
  }

  function drawPalette() {
    const fields = primitives.filter((p) => p.active);
    const parts = primitives.filter((p) => !p.active);
    $('design-palette').replaceChildren(
      el('h4', {}, `Fields (${fields.length}) `, el('span', { class: 'quiet' }, 'in the profile, count for Φ')),
      el('div', { class: 'chips fields' }, ...fields.map(chip)),
      el('h4', {}, `Page parts (${parts.length}) `, el('span', { class: 'quiet' }, 'buttons, links, decoration')),
      el('div', { class: 'chips parts' }, ...parts.map(chip)),
      el('p', { class: 'legend' }, el('span', { class: 'ends-mark', 'aria-hidden': 'true' }), 'ends the episode (raw −1) when clicked'),
    );
  }

  // Marks the palette's primitives already on the selected page.
  function markPalette() {
    const here = new Set(pages[selected].map((i) => byIndex.get(i).name));
    for (const b of document.querySelectorAll('#design-palette .chip')) {
      const used = here.has(b.dataset.primitive);
      b.classList.toggle('used', used);
      b.setAttribute('aria-pressed', used ? 'true' : 'false');
    }
    $('design-target').textContent = `adding to Page ${selected + 1}`;
  }

  function iconButton(text, label, onClick, disabled = false) {
    const b = el('button', { type: 'button', class: 'icon', title: label, 'aria-label': label, disabled }, text);
    b.addEventListener('click', onClick);
    return b;
  }

  function item(page, k) {
    const p = byIndex.get(pages[page][k]);
    const where = el('select', { class: 'to-page', title: 'Move to another page', 'aria-label': `Page of ${p.name}` },
      ...pages.map((_, i) => el('option', { value: String(i), selected: i === page }, `P${i + 1}`)));
    where.addEventListener('change', () => moveToPage(page, k, Number(where.value)));
    const kind = p.active ? p.kind : p.kind === 'decoration' ? 'part' : p.kind;
    return el('li', { class: `item${p.active ? ' active' : ''}${p.end_on_click ? ' ends' : ''}`, 'data-name': p.name, title: `“${p.label}”${p.field ? ` · field ${p.field}` : ''}` },
      el('span', { class: 'name' }, p.name),
      el('span', { class: 'kind' }, kind),
      iconButton('↑', `Move ${p.name} up`, () => move(page, k, -1), k === 0),
      iconButton('↓', `Move ${p.name} down`, () => move(page, k, 1), k === pages[page].length - 1),
      where,
      iconButton('×', `Remove ${p.name}`, () => remove(page, k)));
  }

  // The pages and their primitives, the counts and the page buttons.
  function draw() {
    const box = $('design-pages');
    box.replaceChildren(...pages.map((list, page) => {
      const active = list.filter((i) => byIndex.get(i).active).length;
      const head = el('button', { type: 'button', class: 'page-head', 'aria-pressed': page === selected ? 'true' : 'false', title: 'Add the palette\'s primitives to this page' },
        el('strong', {}, `Page ${page + 1}`),
        el('span', { class: 'quiet' }, list.length ? `${list.length} primitive${list.length === 1 ? '' : 's'}, ${active} field${active === 1 ? '' : 's'}` : 'empty'),
        page === selected ? el('span', { class: 'target' }, 'adding here') : '');
      head.addEventListener('click', () => select(page));
      const body = list.length
        ? el('ol', { class: 'items' }, ...list.map((_, k) => item(page, k)))
        : el('p', { class: 'empty' }, page === selected ? 'Empty: click primitives in the palette to add them here.' : 'Empty.');
      return el('div', { class: `page-card${page === selected ? ' selected' : ''}`, 'data-page': String(page) }, head, body);
    }));
    const placed = placedCount();
    const fields = new Set(pages.flat().filter((i) => byIndex.get(i).active)).size; // a field on two pages is one field
    $('design-counts').textContent = `${pages.length} page${pages.length === 1 ? '' : 's'} · ${placed} primitive${placed === 1 ? '' : 's'} · ${fields} field${fields === 1 ? '' : 's'}`;
    $('design-add-page').disabled = pages.length >= MAX_PAGES;
    $('design-add-page').title = pages.length >= MAX_PAGES ? `A site has at most ${MAX_PAGES} pages` : '';
    $('design-remove-page').disabled = pages.length <= 1;
    $('design-remove-page').textContent = pages.length > 1 ? `Remove Page ${selected + 1}` : 'Remove page';
    markPalette();
  }

  drawPalette();
  draw();
  $('design-add-page').addEventListener('click', addPage);
  $('design-remove-page').addEventListener('click', removePage);

  return {
    designObject,
    load,
    draw,
    // What `restore` puts back (a share link that fails to open leaves the composition as it was).
    save: () => ({ pages, selected, opened }),
    restore(s) { ({ pages, selected, opened } = s); },
    // As names per page (for tests).
    names: () => pages.map((list) => list.map((i) => byIndex.get(i).name)),
  };
}

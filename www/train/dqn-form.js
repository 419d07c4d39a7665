// The Train view's DOM-Q-Net form: which tasks a run trains on (the lab's pages and, when they
// are served, the real MiniWoB++ pages) and every hyperparameter, filled in from Rust's presets
// (Lab.dqnPreset) and checked by Rust (Lab.checkDqnConfig). train.js owns the run; this owns
// the fields.
import { errorText } from '../app.js';

const $ = (id) => document.getElementById(id);
// The paper's multitask set (DOM-Q-Net §4.2, Figure 4).
const PAPER_MULTITASK = ['click-checkboxes', 'click-option', 'click-tab-2', 'email-inbox-delete', 'enter-password',
  'enter-text', 'enter-text-dynamic', 'login-user', 'navigate-tree'];

// onTasks: called when the chosen tasks change (the preset has followed them by then).
export function dqnForm(ctx, { onTasks }) {
  const { Lab } = ctx;
  const defaults = Lab.defaultDqnConfig();

  // ---------------------------------------------------------------- task choice
  function taskOptions() {
    const box = $('train-tasks');
    box.querySelectorAll('label').forEach((l) => l.remove());
    const add = (key, difficulty) => {
      const cb = Object.assign(document.createElement('input'), { type: 'checkbox', value: key });
      cb.addEventListener('change', presetForTasks);
      const label = document.createElement('label');
      label.append(cb, `${key} `);
      if (difficulty) label.append(Object.assign(document.createElement('span'), { className: `badge ${difficulty}`, textContent: difficulty }));
      box.appendChild(label);
    };
    for (const t of ctx.tasks) add(t.name, t.difficulty);
    // The real MiniWoB++ pages DOM-Q-Net can act on (clicks and typing), when they are served.
    if (ctx.miniwobServed) {
      for (const t of ctx.miniwobTasks.filter((x) => x.interaction === 'click-type')) add(ctx.miniwob.prefix + t.name, t.difficulty);
    }
  }
  const difficultyOf = (key) => (ctx.tasks.find((t) => t.name === key) || ctx.miniwobTasks.find((t) => ctx.miniwob.prefix + t.name === key))?.difficulty;
  const taskBoxes = () => [...$('train-tasks').querySelectorAll('input[type=checkbox]')];
  const chosenTasks = () => taskBoxes().filter((b) => b.checked).map((b) => b.value);
  function chooseTasks(names) {
    for (const b of taskBoxes()) b.checked = names.includes(b.value);
    presetForTasks();
  }

  // The fields show a preset for the chosen tasks, as Rust fills it in (Lab.dqnPreset: the
  // paper's buffer and T follow the tasks, the reference code's do not); a field a person edited
  // keeps its value. A saved run's or a link's settings (preset null) are kept as they are.
  let preset = 'paper';
  const edited = new Set();
  function usePreset(name) {
    preset = name;
    edited.clear();
    buildHyper(Lab.dqnPreset(name, chosenTasks()));
  }
  function useConfig(cfg) {
    preset = null;
    edited.clear();
    buildHyper(cfg);
  }
  function presetForTasks() {
    const names = chosenTasks();
    if (preset) {
      const shown = (input) => (input.type === 'checkbox' ? input.checked : input.value);
      const kept = [...edited].map((key) => [key, shown(field(key))]);
      buildHyper(Lab.dqnPreset(preset, names));
      for (const [key, v] of kept) field(key)[field(key).type === 'checkbox' ? 'checked' : 'value'] = v;
      if (kept.length) checkHyper();
    }
    $('train-task-count').textContent = names.length > 1 ? `${names.length} tasks, one network, one replay buffer` : '';
    onTasks();
  }

  // ---------------------------------------------------------------- hyperparameters
  const field = (key) => $('hyper-fields').querySelector(`[data-key="${key}"]`);
  // An f32 setting (adam_epsilon) arrives as the f64 nearest to it: 1e-8 would show as
  // 9.99999993922529e-9. Show the shortest decimal that is the same f32; other numbers as they are.
  function shownNumber(v) {
    if (Number.isInteger(v) || Math.fround(v) !== v) return String(v);
    for (let digits = 1; digits <= 9; digits++) {
      const s = String(Number(v.toPrecision(digits)));
      if (Math.fround(Number(s)) === v) return s;
    }
    return String(v);
  }
  function buildHyper(cfg) {
    const box = $('hyper-fields');
    box.replaceChildren();
    for (const [key, value] of Object.entries(defaults)) {
      const name = Object.assign(document.createElement('span'), { textContent: key, title: key });
      let input;
      if (typeof value === 'boolean') {
        input = Object.assign(document.createElement('input'), { type: 'checkbox', checked: cfg[key] });
      } else {
        input = Object.assign(document.createElement('input'), { type: 'text', inputMode: 'decimal', value: cfg[key] === null ? '' : typeof cfg[key] === 'number' ? shownNumber(cfg[key]) : String(cfg[key]) });
        if (value === null || key === 'grad_clip') input.placeholder = 'none';
      }
      input.dataset.key = key;
      input.setAttribute('aria-label', key);
      input.addEventListener('change', () => { edited.add(key); checkHyper(); });
      box.append(name, input);
    }
    checkHyper();
  }
  function readHyper() {
    const cfg = {};
    for (const input of $('hyper-fields').querySelectorAll('input')) {
      const key = input.dataset.key;
      if (input.type === 'checkbox') cfg[key] = input.checked;
      else if (input.value.trim() === '' && (defaults[key] === null || key === 'grad_clip')) cfg[key] = null;
      else if (typeof defaults[key] === 'string') cfg[key] = input.value;
      else cfg[key] = Number(input.value);
    }
    return cfg;
  }
  // Returns the checked config, or null with the problem shown next to the fields.
  function checkHyper() {
    for (const input of $('hyper-fields').querySelectorAll('input')) input.classList.remove('invalid');
    const cfg = readHyper();
    const bad = Object.entries(cfg).find(([, v]) => typeof v === 'number' && !Number.isFinite(v));
    try {
      if (bad) throw new Error(`${bad[0]} must be a number`);
      const ok = Lab.checkDqnConfig(cfg);
      $('hyper-error').hidden = true;
      return ok;
    } catch (e) {
      const text = errorText(e);
      $('hyper-error').textContent = text;
      $('hyper-error').hidden = false;
      const key = Object.keys(cfg).find((k) => text.startsWith(k) || text.includes(` ${k} `) || text.includes(`\`${k}\``));
      if (key) field(key).classList.add('invalid');
      return null;
    }
  }

  $('train-paper-set').addEventListener('click', () => chooseTasks(PAPER_MULTITASK));
  $('hyper-reset').addEventListener('click', () => usePreset('paper'));
  $('hyper-reference').addEventListener('click', () => usePreset('reference-code'));
  $('hyper-fast-tab').addEventListener('click', () => usePreset('fast-tab'));

  return { taskOptions, taskBoxes, chosenTasks, chooseTasks, difficultyOf, usePreset, useConfig, checkHyper };
}

// Where the WGE view's demonstrations come from: a person playing the task in the page (Play &
// record's recorder; a successful episode is kept and the next seed starts), the scripted oracle
// playing seeds in turn, or files in the published format (one or a folder; each one's lattice is
// induced in slices so the page stays live, and a list says per file what was imported or refused
// and why). Rust decides what is kept (`Lab.isSuccess`, the session's checks).
import { errorText } from '../app.js';
import { clearOverlay } from '../overlay.js';
import { el, plural } from './demos.js';

const $ = (id) => document.getElementById(id);

// view: the WGE view's shared state (recording, exploring, importing, showing) and operations
// (setButtons, render, persist, showPage, holdCover, pickedTask).
export function demoSources(ctx, session, view) {
  const { lab } = ctx;
  let recordPoll = null;
  let recordSeed = 0;

  // ------------------------------------------------------------------ recording a person

  async function record(seed = ctx.seed()) {
    stopRecordPoll();
    ctx.message('');
    await view.showing;
    try {
      const task = view.pickedTask();
      view.holdCover(false);
      clearOverlay($('overlay'));
      ctx.fitFrame();
      const obs = await lab.startRecording(task, seed);
      view.recording = true;
      recordSeed = seed;
      $('utterance').textContent = obs.instruction.utterance;
      $('wge-rec-status').textContent = `Recording seed ${seed}: play the task in the page. A successful episode is kept and the next one starts.`;
      recordPoll = setInterval(checkRecording, 150);
    } catch (e) {
      view.recording = false;
      ctx.message(errorText(e));
    }
    view.setButtons();
  }

  function stopRecordPoll() {
    if (recordPoll) clearInterval(recordPoll);
    recordPoll = null;
  }

  async function checkRecording() {
    const s = lab.recordingState();
    if (!s || !s.done) {
      if (s) $('wge-rec-status').textContent = `Recording seed ${recordSeed} · ${plural(s.steps.length, 'action')} so far.`;
      return;
    }
    stopRecordPoll();
    let json = null;
    try { json = lab.stopRecording(); } catch (e) { ctx.message(errorText(e)); }
    view.recording = false;
    if (json && ctx.Lab.isSuccess(s.raw_reward)) {
      try {
        session.addRecorded(json);
        $('wge-rec-status').textContent = `Kept seed ${recordSeed} (${plural(s.steps.length, 'action')}, reward ${s.reward.toFixed(2)}).`;
        view.render();
        await view.persist();
      } catch (e) {
        ctx.message(errorText(e));
        view.setButtons();
        return;
      }
    } else {
      $('wge-rec-status').textContent = `Seed ${recordSeed} was not kept: the episode did not succeed${s.reason ? ` (${s.reason})` : ''}.`;
    }
    ctx.setSeed((recordSeed + 1) >>> 0);
    // The next episode, after a moment to see how this one ended.
    setTimeout(() => { if (ctx.view === 'wge' && !view.exploring && !view.recording) record(); }, 800);
    view.setButtons();
  }

  function stopRecording() {
    stopRecordPoll();
    if (!view.recording) return;
    try { lab.stopRecording(); } catch { /* nothing was being recorded */ }
    view.recording = false;
    $('wge-rec-status').textContent = 'Recording stopped; the unfinished episode was not kept.';
    view.setButtons();
  }

  // ------------------------------------------------------------------ scripted and imported

  async function addScripted() {
    ctx.message('');
    let task;
    try { task = view.pickedTask(); } catch (e) { ctx.message(errorText(e)); return; }
    const count = Math.max(1, Math.min(50, parseInt($('wge-scripted-count').value, 10) || 10));
    await view.showing;
    const first = ctx.seed();
    view.exploring = true; // the page is in use: no other action starts meanwhile
    view.setButtons();
    view.holdCover(true);
    const end = ctx.busy(`The scripted oracle plays ${task}…`);
    let added = 0;
    const failed = [];
    try {
      for (let k = 0; k < count; k++) {
        end.say(`The scripted oracle plays ${task}: seed ${first + k} (${k + 1} of ${count})…`);
        try {
          await session.addScripted(task, (first + k) >>> 0);
          added++;
        } catch (e) {
          failed.push(errorText(e));
          // A wrong task for the session is not worth trying nine more times.
          if (/this session learns|at most/.test(errorText(e))) break;
        }
      }
    } finally {
      end();
      view.exploring = false;
    }
    ctx.setSeed((first + count) >>> 0);
    view.render();
    await view.persist();
    $('wge-rec-status').textContent = `Added ${plural(added, 'scripted demonstration')} (seeds ${first}–${first + count - 1}).`;
    if (failed.length) ctx.message(failed[0] + (failed.length > 1 ? ` (and ${failed.length - 1} more)` : ''));
  }

  // Opens files one after another (each one's lattice is induced in slices, so the page stays
  // live), then lists per file what was imported or refused and why.
  async function importFiles(files) {
    ctx.message('');
    const wanted = files.filter((f) => /\.json(\.gz)?$/i.test(f.name));
    const skipped = files.length - wanted.length;
    wanted.sort((a, b) => pathOf(a).localeCompare(pathOf(b)));
    if (!wanted.length) {
      ctx.message(`No .json or .json.gz files among the ${plural(files.length, 'file')} chosen.`);
      return;
    }
    view.importing = true;
    view.setButtons();
    const end = ctx.busy(`Reading ${plural(wanted.length, 'demonstration file')}…`);
    await ctx.painted();
    const rows = [];
    let added = 0;
    let task = null;
    try {
      for (const [k, f] of wanted.entries()) {
        end.say(`Reading ${f.name} (${k + 1} of ${wanted.length})…`);
        try {
          session.checkFileSize(f.name, f.size);
          const bytes = new Uint8Array(await f.arrayBuffer());
          const r = await session.importFile(pathOf(f), bytes);
          rows.push({ ok: true, name: pathOf(f), text: `imported: ${plural(r.actions, 'action')} of ${r.task}`, notes: r.notes });
          added++;
          task = session.task();
        } catch (e) {
          // The message starts with the file's name, which the row shows already.
          const msg = errorText(e);
          const why = msg.startsWith(`${f.name}: `) ? msg.slice(f.name.length + 2) : msg;
          rows.push({ ok: false, name: pathOf(f), text: `refused: ${why}`, error: msg, notes: [] });
        }
      }
    } finally {
      end();
      view.importing = false;
    }
    showImportReport(rows, skipped);
    view.render();
    // The picker follows the demonstrations' task, and the page with it.
    if (task && task !== ctx.task()) {
      ctx.setTask(task);
      await view.showPage();
    }
    if (added) await view.persist();
    if (added) $('wge-rec-status').textContent = `Opened ${plural(added, 'demonstration')} of ${task}.`;
    const errors = rows.filter((r) => !r.ok).map((r) => r.error);
    if (errors.length) ctx.message(errors.slice(0, 3).join(' · ') + (errors.length > 3 ? ` (and ${errors.length - 3} more: see the list under the buttons)` : ''));
  }

  // A file's path within the folder it came from (which names the task of files without one).
  function pathOf(f) {
    return f.webkitRelativePath || f.name;
  }

  function showImportReport(rows, skipped) {
    const box = $('wge-import-report');
    const refused = rows.filter((r) => !r.ok).length;
    box.querySelector('summary').textContent = `${plural(rows.length, 'file')}: ${rows.length - refused} imported, ${refused} refused${skipped ? ` (${plural(skipped, 'other file')} skipped)` : ''}`;
    box.querySelector('ul').replaceChildren(...rows.map((r) => el('li', { className: r.ok ? 'imported' : 'refused' },
      el('strong', { textContent: r.name }), ` — ${r.text}`,
      r.notes.length ? el('span', { className: 'quiet', textContent: ` (${r.notes.join('; ')})` }) : null)));
    box.hidden = false;
    box.open = refused > 0 || rows.some((r) => r.notes.length);
  }

  return { record, stopRecording, addScripted, importFiles };
}

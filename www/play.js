// Play & record: a person plays the task in the page while the lab records the episode in the
// environment's own action vocabulary (Click/Type/Select on element refs, with the observation
// before each action). A finished recording is saved as a demonstration file, and a file can be
// replayed on the same seeded page to check it reaches the same reward.
import { errorText, scrollListTo } from './app.js';
import { download } from './download.js';

const $ = (id) => document.getElementById(id);

export function initPlay(ctx) {
  const lab = ctx.lab;
  let recording = false;
  let poll = null;
  let current = null; // {task, seed}
  let shown = -1;
  let lastDemo = null; // JSON text of the last stopped recording

  function setButtons() {
    $('rec-start').textContent = recording ? 'Restart' : 'Start recording';
    $('rec-next').disabled = !current;
    $('rec-save').disabled = !recording && !lastDemo;
  }

  function render() {
    const s = lab.recordingState();
    if (!s) return;
    if (s.steps.length !== shown) {
      const list = $('steps');
      list.replaceChildren(...s.steps.map((text) => Object.assign(document.createElement('li'), { textContent: text })));
      scrollListTo(list, list.lastElementChild);
      shown = s.steps.length;
    }
    const out = $('episode-outcome');
    if (s.done) {
      out.textContent = `Reward ${s.reward.toFixed(2)} (raw ${s.raw_reward})${s.reason ? ` · ${s.reason}` : ''}${s.exact ? '' : ' · some edits could not be recorded exactly'}`;
      out.className = `outcome ${ctx.Lab.isSuccess(s.raw_reward) ? 'good' : 'bad'}`;
      $('rec-status').textContent = `Episode over after ${s.steps.length} action${s.steps.length === 1 ? '' : 's'}: save it, or play the next one.`;
    } else {
      out.textContent = '';
      out.className = 'outcome';
      $('rec-status').textContent = `Recording · ${s.steps.length} action${s.steps.length === 1 ? '' : 's'} so far.`;
    }
  }

  function stopPolling() {
    if (poll) clearInterval(poll);
    poll = null;
  }

  // One start at a time: a task chosen while a page is still loading (the source, then the task)
  // starts after it, so the last choice is the one recorded.
  let starting = null;
  let queued = null;
  async function start(seed = ctx.seed()) {
    if (starting) {
      queued = seed;
      return;
    }
    starting = startNow(seed);
    try {
      await starting;
    } finally {
      starting = null;
    }
    if (queued !== null) {
      const next = queued;
      queued = null;
      await start(next);
    }
  }

  async function startNow(seed) {
    stopPolling();
    ctx.message('');
    lastDemo = null;
    ctx.fitFrame();
    $('steps').replaceChildren();
    $('episode-outcome').textContent = '';
    shown = -1;
    try {
      const obs = await lab.startRecording(ctx.task(), seed);
      current = { task: ctx.taskSpec(), seed };
      recording = true;
      $('utterance').textContent = obs.instruction.utterance;
      $('steps-title').textContent = `Your actions · seed ${seed}`;
      $('rec-status').textContent = 'Recording: play the task in the page.';
      poll = setInterval(render, 150);
    } catch (e) {
      recording = false;
      ctx.message(errorText(e));
    }
    setButtons();
  }

  // Stops recording and keeps the demonstration (JSON text).
  function stop() {
    stopPolling();
    if (!recording) return lastDemo;
    render();
    try {
      lastDemo = lab.stopRecording();
    } catch (e) {
      ctx.message(errorText(e));
    }
    recording = false;
    setButtons();
    return lastDemo;
  }

  $('rec-start').addEventListener('click', () => start());
  $('rec-next').addEventListener('click', () => {
    stop();
    ctx.setSeed(((current?.seed ?? ctx.seed()) + 1) >>> 0);
    start();
  });
  $('rec-save').addEventListener('click', () => {
    const json = stop();
    if (!json) return;
    const demo = JSON.parse(json);
    const name = `demo-${demo.task.name}-seed${demo.seed}.json`;
    download(name, json);
    ctx.message(`Saved ${name}: ${demo.steps.length} actions, raw reward ${demo.raw_reward}.`, 'info');
  });
  $('rec-replay').addEventListener('change', async (event) => {
    const file = event.target.files[0];
    event.target.value = '';
    if (!file) return;
    stop();
    ctx.message('');
    const end = ctx.busy(`Replaying ${file.name}…`);
    try {
      const large = ctx.fileTooLarge(file, 'demo');
      if (large) throw new Error(`${large}: it was not read`);
      const text = await file.text();
      // Checked by the lab (size, format, its task: a page the lab opens from files) before
      // the picker shows its task and seed.
      let demo;
      try { demo = lab.readDemonstration(text); } catch (e) { throw new Error(`${file.name} was not replayed: ${errorText(e)}`); }
      ctx.setTask(demo.task);
      ctx.setSeed(demo.seed);
      ctx.fitFrame();
      const r = await lab.replayDemonstration(text);
      const same = r.raw_reward === demo.raw_reward;
      const where = r.diverged_at === null || r.diverged_at === undefined ? '' : ` The page differed from the recording from step ${r.diverged_at + 1}.`;
      ctx.message(`Replayed ${file.name}: ${r.steps} actions, raw reward ${r.raw_reward}${same ? ', as recorded.' : ` (recorded: ${demo.raw_reward}).`}${where}`, same ? 'info' : 'error');
      $('rec-status').textContent = `Replayed ${file.name}.`;
    } catch (e) {
      ctx.message(errorText(e));
    } finally {
      end();
    }
  });
  // Another task (one of the lab's, or a real MiniWoB++ page) starts a new recording on it.
  ctx.onTaskChange(() => { if (ctx.view === 'play') start(); });
  setButtons();

  return {
    enter() { setButtons(); },
    leave() { stop(); },
    start() { return start(); },
    // A finished recording is shared as an episode the link replays in Watch, action for action;
    // before one, the link opens Play on the same task and seed.
    shareState() {
      const s = recording ? lab.recordingState() : (lastDemo ? JSON.parse(lastDemo) : null);
      const actions = s ? (s.actions || s.steps.map((st) => st.action)) : [];
      const task = current?.task || ctx.taskSpec(), seed = current?.seed ?? ctx.seed();
      if (s && (s.done ?? true) && actions.length) {
        return { v: 1, view: 'watch', task, seed, config: null, replay: { episode: { actions, raw_reward: s.raw_reward } } };
      }
      return { v: 1, view: 'play', task, seed, config: null, replay: null };
    },
    openShare(state) { return start(state.seed); },
    // For tests: the demonstration of the last recording.
    lastDemonstration() { return lastDemo; },
  };
}

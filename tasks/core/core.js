// The lab's task core: the MiniWoB page contract, written from scratch.
//
// A task page loads this script, defines a global `genProblem()` that rebuilds `#area`, writes the
// instruction with `core.setInstruction(html, fields)`, and ends episodes with
// `core.endEpisode(reward, timeProportional, reason)`. Everything a driver needs is the public
// MiniWoB surface: `core.startEpisodeReal`, `core.endEpisode`, `core.getUtterance`,
// `core.setDataMode`, `Math.seedrandom`, and the `WOB_*` globals. Two additions are ours:
// `core.getFields()` (the structured fields the instruction was built from) and `core.holdClock()`
// (lets a driver stop the time limit from counting while its agent thinks).
//
// Tasks on this core are synchronous, like MiniWoB's -nodelay variants: a click's effect (a panel
// opening, a menu, results) is in the DOM when the click returns, so drivers need no settle time.
(function () {
  'use strict';

  // ---------------------------------------------------------------- seeded randomness
  // xoshiro128** seeded through a string hash, so `Math.seedrandom(seed)` makes every later
  // `Math.random()` in the page (and so every core helper) reproducible.
  function hashSeed(text) {
    // Four independent FNV-1a style lanes, then a splitmix-style finaliser per lane.
    const lanes = [0x811c9dc5, 0x01000193 ^ 0x9e3779b9, 0x85ebca6b, 0xc2b2ae35];
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      for (let k = 0; k < 4; k++) {
        lanes[k] = Math.imul(lanes[k] ^ (c + k * 0x3b), 0x01000193) >>> 0;
      }
    }
    return lanes.map(function (h, k) {
      h = (h + Math.imul(k + 1, 0x9e3779b9)) >>> 0;
      h = Math.imul(h ^ (h >>> 16), 0x21f0aaad) >>> 0;
      h = Math.imul(h ^ (h >>> 15), 0x735a2d97) >>> 0;
      h = (h ^ (h >>> 15)) >>> 0;
      return h === 0 ? 0x6d2b79f5 : h;
    });
  }

  function xoshiro128ss(s) {
    return function () {
      const r = Math.imul(rotl(Math.imul(s[1], 5) >>> 0, 7), 9) >>> 0;
      const t = (s[1] << 9) >>> 0;
      s[2] = (s[2] ^ s[0]) >>> 0;
      s[3] = (s[3] ^ s[1]) >>> 0;
      s[1] = (s[1] ^ s[2]) >>> 0;
      s[0] = (s[0] ^ s[3]) >>> 0;
      s[2] = (s[2] ^ t) >>> 0;
      s[3] = rotl(s[3], 11);
      return r / 4294967296;
    };
  }
  function rotl(x, k) { return ((x << k) | (x >>> (32 - k))) >>> 0; }

  const nativeRandom = Math.random;
  // seedrandom(seed): numbers and strings are both accepted; no argument re-seeds from the clock.
  Math.seedrandom = function (seed) {
    const key = seed === undefined || seed === null
      ? 'auto:' + Date.now() + ':' + nativeRandom()
      : String(seed);
    const gen = xoshiro128ss(hashSeed(key));
    for (let i = 0; i < 8; i++) gen(); // discard the first outputs: they still echo the hash
    Math.random = gen;
    return key;
  };

  // ---------------------------------------------------------------- globals of the contract
  window.WOB_REWARD_GLOBAL = 0;
  window.WOB_RAW_REWARD_GLOBAL = 0;
  window.WOB_REWARD_REASON = null;
  window.WOB_DONE_GLOBAL = false;
  window.WOB_EPISODE_ID = 0;
  window.WOB_TASK_READY = true;

  const core = window.core = window.core || {};
  // Errors thrown while the page loads (a task script that breaks before it defines
  // genProblem): a driver cannot listen on a page's window before the page creates it, so the
  // core, the page's first script, keeps their text for the driver's message.
  const loadErrors = [];
  window.addEventListener('error', function (e) {
    if (document.readyState === 'complete' || loadErrors.length >= 5) return;
    const err = e.error;
    const text = err && err.name && typeof err.message === 'string' ? err.name + ': ' + err.message : String(e.message);
    const file = String(e.filename || '').split('/').pop();
    loadErrors.push(file ? text + ' (' + file + ':' + e.lineno + ')' : text);
  });
  core.loadErrors = function () { return loadErrors.slice(); };
  core.EPISODE_MAX_TIME = core.EPISODE_MAX_TIME || 10000; // ms; pages override before load
  core.dataMode = new URLSearchParams(window.location.search).get('mode') || 'train';
  core.fields = {};
  core.EP_TIMER = null;
  core.ept0 = 0;
  core.heldSince = null; // wall time at which the clock was held, or null when it runs
  core.heldTotal = 0; // ms the clock was held during this episode
  core.history = []; // rewards of finished episodes, shown to a person playing

  core.setDataMode = function (mode) { core.dataMode = mode; };

  // ---------------------------------------------------------------- helpers for generators
  core.randi = function (min, max) { return Math.floor(Math.random() * (max - min)) + min; };
  core.randf = function (min, max) { return Math.random() * (max - min) + min; };
  core.sample = function (list) { return list[core.randi(0, list.length)]; };
  core.shuffle = function (list) {
    for (let i = list.length - 1; i > 0; i--) {
      const j = core.randi(0, i + 1);
      const tmp = list[i]; list[i] = list[j]; list[j] = tmp;
    }
    return list;
  };
  // k distinct items of `list`, in random order.
  core.sampleDistinct = function (list, k) { return core.shuffle(list.slice()).slice(0, k); };

  // ---------------------------------------------------------------- instruction
  core.setInstruction = function (html, fields) {
    document.getElementById('query').innerHTML = html;
    core.fields = fields || {};
  };
  core.getUtterance = function () {
    const q = document.getElementById('query');
    return q ? q.textContent.replace(/\s+/g, ' ').trim() : '';
  };
  core.getFields = function () { return core.fields; };

  // ---------------------------------------------------------------- the clock
  function elapsed() {
    const heldNow = core.heldSince === null ? 0 : Date.now() - core.heldSince;
    return Date.now() - core.ept0 - core.heldTotal - heldNow;
  }
  function armTimer() {
    clearTimeout(core.EP_TIMER);
    const left = Math.max(0, core.EPISODE_MAX_TIME - elapsed());
    core.EP_TIMER = setTimeout(function () { core.endEpisode(-1, false, 'timed out'); }, left);
  }
  // holdClock(true) stops the time limit from counting; holdClock(false) lets it run again.
  core.holdClock = function (hold) {
    if (core.EP_TIMER === null) return;
    if (hold && core.heldSince === null) {
      core.heldSince = Date.now();
      clearTimeout(core.EP_TIMER);
    } else if (!hold && core.heldSince !== null) {
      core.heldTotal += Date.now() - core.heldSince;
      core.heldSince = null;
      armTimer();
    }
  };
  core.timeLeft = function () {
    return core.EP_TIMER === null ? 0 : Math.max(0, core.EPISODE_MAX_TIME - elapsed());
  };

  // ---------------------------------------------------------------- episode lifecycle
  core.startEpisode = function () {
    ensureChrome();
    document.getElementById('sync-task-cover').style.display = 'block';
    scheduleDisplay();
  };

  core.startEpisodeReal = function () {
    ensureChrome();
    clearTimeout(core.EP_TIMER);
    core.EP_TIMER = null;
    core.fields = {};
    window.genProblem();
    window.WOB_DONE_GLOBAL = false;
    window.WOB_REWARD_GLOBAL = 0;
    window.WOB_RAW_REWARD_GLOBAL = 0;
    window.WOB_REWARD_REASON = null;
    const sel = window.getSelection && window.getSelection();
    if (sel) sel.removeAllRanges();
    window.scrollTo(0, 0);
    document.getElementById('sync-task-cover').style.display = 'none';
    core.ept0 = Date.now();
    core.heldSince = null;
    core.heldTotal = 0;
    armTimer();
    if (!tickQueued) { tickQueued = true; setTimeout(tick, 250); }
  };

  // Only the first terminal event of an episode counts.
  core.endEpisode = function (reward, timeProportional, reason) {
    if (core.EP_TIMER === null) return;
    const dt = elapsed();
    clearTimeout(core.EP_TIMER);
    core.EP_TIMER = null;
    core.heldSince = null;
    window.WOB_RAW_REWARD_GLOBAL = reward;
    window.WOB_REWARD_REASON = reason === undefined ? null : reason;
    if (timeProportional && reward > 0) {
      reward = reward * Math.max(0, 1 - dt / core.EPISODE_MAX_TIME);
    }
    window.WOB_REWARD_GLOBAL = reward;
    window.WOB_DONE_GLOBAL = true;
    window.WOB_EPISODE_ID += 1;
    core.history.push(reward);
    core.startEpisode();
  };

  // ---------------------------------------------------------------- what a person sees
  // The START cover over the task and a reward panel to its right (x >= 165, outside the task).
  function ensureChrome() {
    if (document.getElementById('sync-task-cover')) return;
    const wrap = document.getElementById('wrap');
    const cover = document.createElement('div');
    cover.id = 'sync-task-cover';
    cover.innerHTML = '<span>START</span>';
    cover.addEventListener('click', function () { core.startEpisodeReal(); });
    wrap.appendChild(cover);

    const panel = document.createElement('div');
    panel.id = 'reward-display';
    panel.innerHTML =
      '<div class="rd-row"><span>Last reward</span><b id="rd-last">-</b></div>' +
      '<div class="rd-row"><span>Last 10 avg</span><b id="rd-avg">-</b></div>' +
      '<div class="rd-row"><span>Episodes</span><b id="rd-count">0</b></div>' +
      '<div class="rd-row"><span>Reason</span><b id="rd-reason">-</b></div>' +
      '<div id="rd-timebar"><div id="rd-time"></div></div>';
    document.body.appendChild(panel);
  }

  // The panel is for people: redraw it at most once per frame, however many episodes an agent
  // finishes in between (each redraw would cost the agent a layout).
  let displayQueued = false;
  function scheduleDisplay() {
    if (displayQueued) return;
    displayQueued = true;
    requestAnimationFrame(function () { displayQueued = false; renderDisplay(); });
  }

  function renderDisplay() {
    const h = core.history;
    if (!document.getElementById('rd-last')) return;
    const last = h.length ? h[h.length - 1] : null;
    const recent = h.slice(-10);
    const avg = recent.length ? recent.reduce(function (a, b) { return a + b; }, 0) / recent.length : null;
    const lastEl = document.getElementById('rd-last');
    lastEl.textContent = last === null ? '-' : last.toFixed(2);
    lastEl.className = last === null ? '' : (last > 0 ? 'good' : 'bad');
    document.getElementById('rd-avg').textContent = avg === null ? '-' : avg.toFixed(2);
    document.getElementById('rd-count').textContent = String(h.length);
    document.getElementById('rd-reason').textContent =
      h.length ? (window.WOB_REWARD_REASON || (last > 0 ? 'success' : '-')) : '-';
    document.getElementById('rd-time').style.width = '0%';
  }

  // The time bar is cosmetic; it is redrawn a few times a second while an episode runs.
  let tickQueued = false;
  function tick() {
    tickQueued = false;
    const bar = document.getElementById('rd-time');
    if (!bar || core.EP_TIMER === null) return;
    bar.style.width = (100 * core.timeLeft() / core.EPISODE_MAX_TIME).toFixed(1) + '%';
    tickQueued = true;
    setTimeout(tick, 250);
  }

  // Pages that follow the MiniWoB convention call core.startEpisode() from window.onload
  // themselves; ours leave it to the core.
  window.addEventListener('load', function () {
    if (!core.manualStart) core.startEpisode();
  });
})();

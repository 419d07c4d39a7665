// The Design view's status beside the page: the profile's fields (filled in right or not), the
// potential Φ, the page and, at the end of an episode, its reward; read from Rust's
// `siteStatus()`, polled while a person plays. design.js renders and watches.
import { el } from './composition.js';

const $ = (id) => document.getElementById(id);

// play(): whether a person plays the site (not a policy); idle(): whether a poll may read the
// status now (the Design view open, a person playing, an episode shown, no lab call in flight).
export function siteStatusPanel({ lab, Lab }, { play, idle }) {
  let shownStatus = '';
  let poll = null;

  function fieldRows(fields) {
    return fields.map((f) => el('li', { class: f.correct ? 'ok' : '', 'data-key': f.key },
      el('span', { class: 'key' }, f.key),
      el('span', { class: 'value' }, f.value),
      el('span', { class: 'mark', title: f.correct ? 'filled in right' : 'not yet right' }, f.correct ? '✓' : '·')));
  }

  function showPotential(phi) {
    const v = Number.isFinite(phi) ? phi : 0;
    $('design-phi').textContent = v.toFixed(2);
    $('design-phi-bar').style.width = `${Math.max(0, Math.min(1, v)) * 100}%`;
    $('design-phi-box').setAttribute('aria-valuenow', v.toFixed(2));
  }

  function showOutcome(text, good) {
    const out = $('design-outcome');
    out.textContent = text || '';
    out.className = `outcome${text ? (good ? ' good' : ' bad') : ''}`;
  }

  // What siteStatus() says: the fields, Φ, the page and, at the end, the reward.
  function showStatus(s) {
    const key = JSON.stringify(s);
    if (key === shownStatus) return;
    shownStatus = key;
    if (!s) {
      $('design-fields').replaceChildren();
      $('design-page').textContent = '';
      showPotential(0);
      return;
    }
    showPotential(s.potential);
    const right = s.fields.filter((f) => f.correct).length;
    $('design-page').textContent = `page ${s.page + 1} of ${s.pages} · ${right} of ${s.fields.length} field${s.fields.length === 1 ? '' : 's'} right`;
    $('design-fields').replaceChildren(...fieldRows(s.fields));
    if (play()) {
      if (s.done) {
        showOutcome(`Episode over: raw reward ${s.raw_reward} · reward ${Number(s.reward).toFixed(2)}${s.reason ? ` · ${s.reason}` : ''}`, Lab.isSuccess(s.raw_reward));
        $('design-play-note').textContent = 'Press "New episode" to play the site again with the next seed.';
      } else {
        showOutcome('');
      }
    }
  }

  async function readStatus() {
    try {
      return (await lab.siteStatus()) ?? null;
    } catch {
      return undefined; // busy or no episode: keep what is shown
    }
  }

  function startPolling() {
    stopPolling();
    poll = setInterval(async () => {
      if (!idle()) return;
      const s = await readStatus();
      if (s !== undefined && idle()) showStatus(s);
    }, 250);
  }

  function stopPolling() {
    if (poll) clearInterval(poll);
    poll = null;
  }

  function clearEpisodeView() {
    shownStatus = '';
    $('design-steps').replaceChildren();
    $('design-return').textContent = '';
    showOutcome('');
    showStatus(null);
  }

  return { showStatus, showPotential, showOutcome, readStatus, startPolling, stopPolling, clearEpisodeView };
}

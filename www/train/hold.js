// A training run's hold on this browser: one tab trains it at a time (RUN_LOCK, locks.js), and a
// tab that dies while training is counted, so a run whose resuming crashes the tab waits for the
// Resume button instead of crashing it on every start. train.js owns the run itself.
import { RUN_LOCK, claim, whenFree } from '../locks.js';

// LIVE_KEY is set while this tab holds a running run and cleared on a clean exit (pagehide) or
// when the run ends; CRASHES_KEY counts the unclean starts in a row. localStorage, because a page
// going away has no time for IndexedDB's asynchronous writes.
const LIVE_KEY = 'weblab-run-live';
const CRASHES_KEY = 'weblab-run-crashes';
// A run that was training when its tab died without a clean exit is resumed once as after a
// reload; when the tab dies again before a clean exit, the run waits for the Resume button.
export const AUTO_RESUMES_AFTER_CRASHES = 1;

// localStorage can be unavailable (a private window's policy): then crashes are not counted and
// every start resumes.
const local = {
  get(k) { try { return localStorage.getItem(k); } catch { return null; } },
  set(k, v) { try { localStorage.setItem(k, v); } catch { /* not counted */ } },
  remove(k) { try { localStorage.removeItem(k); } catch { /* not counted */ } },
};

export function runHold() {
  let liveHere = false; // this tab started the live run (a held run is not this tab's)
  let runLock = null; // this tab's hold on RUN_LOCK while it trains (null: not held)
  function end() {
    liveHere = false;
    local.remove(LIVE_KEY);
    local.remove(CRASHES_KEY);
  }
  // A reload or a closed tab is a clean exit: the next start resumes the run and the crash count
  // starts over.
  window.addEventListener('pagehide', () => { if (liveHere) end(); });
  return {
    // Takes RUN_LOCK for this tab; false when another tab of the lab trains.
    async claim() {
      runLock = runLock || await claim(RUN_LOCK);
      return runLock !== null;
    },
    release() {
      runLock?.();
      runLock = null;
    },
    whenFree: () => whenFree(RUN_LOCK),
    // A new run (not a resumed one) starts the crash count over.
    fresh() { local.remove(CRASHES_KEY); },
    // This tab trains the run now.
    live() {
      liveHere = true;
      local.set(LIVE_KEY, '1');
    },
    // The run ended (done, stopped by an error).
    end,
    // At a start that finds a run saved as training: how many times in a row its tab went away
    // without a clean exit (counting the last one).
    countCrash() {
      const crashes = local.get(LIVE_KEY) === '1' ? (parseInt(local.get(CRASHES_KEY), 10) || 0) + 1 : 0;
      local.set(CRASHES_KEY, String(crashes));
      return crashes;
    },
  };
}

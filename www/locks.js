// One writer per stored record across the lab's tabs (Web Locks): the tab that trains a run, or
// keeps the WGE session, holds that record's lock, so a second tab neither resumes the same run
// (two learners overwriting each other's snapshots) nor overwrites the session. Without Web
// Locks (an older browser) every tab writes, as before.

// Takes lock `name` unless another tab holds it: resolves with a function that lets it go, or
// null when another tab holds it. The lock also goes when the tab does. It waits up to `waitMs`
// for the lock, since a tab that was just reloaded or closed lets its lock go a moment later.
export async function claim(name, waitMs = 2000) {
  if (!navigator.locks) return () => {};
  let release;
  const kept = new Promise((r) => { release = r; });
  const got = await new Promise((resolve) => {
    navigator.locks.request(name, { signal: AbortSignal.timeout(waitMs) }, () => {
      resolve(true);
      return kept;
    }).catch((e) => resolve(e && (e.name === 'TimeoutError' || e.name === 'AbortError') ? false : true));
  });
  return got ? release : null;
}

// Resolves once no tab holds lock `name` (without taking it).
export function whenFree(name) {
  if (!navigator.locks) return Promise.resolve();
  return navigator.locks.request(name, () => {}).catch(() => {});
}

export const RUN_LOCK = 'weblab-training-run';
export const WGE_LOCK = 'weblab-wge-session';

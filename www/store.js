// The lab's persistent state in IndexedDB: the training run in progress (so a reload resumes it)
// and the model last trained or imported.

const DB = 'weblab';
const STORE = 'state';

function open() {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(DB, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
    req.onblocked = () => reject(new Error('the lab\'s storage is held by another tab of an older version'));
  });
}

// A transaction that fails takes nothing with it: IndexedDB rolls it back, so what was stored
// before (e.g. the previous snapshot of a run) stays. A write over the browser's storage quota
// aborts the transaction (`onabort`, QuotaExceededError) rather than failing a request; both
// reject here, with the reason, instead of leaving the caller waiting forever.
//
// Transactions run one after another, in the order they were asked for: each opens its own
// connection, and Chromium was seen committing a large snapshot's write after a later status
// change (a run paused just before a reload resumed running).
let queue = Promise.resolve();
function tx(mode, fn) {
  const next = queue.then(() => run(mode, fn));
  queue = next.catch(() => {});
  return next;
}

async function run(mode, fn) {
  const db = await open();
  return new Promise((resolve, reject) => {
    let t;
    let result;
    const fail = (error) => {
      db.close();
      const e = error || t?.error || new DOMException('the storage transaction was aborted', 'AbortError');
      reject(e.name === 'QuotaExceededError' ? Object.assign(new Error(`the browser's storage for this site is full (${e.name})`), { name: e.name }) : e);
    };
    try {
      t = db.transaction(STORE, mode);
      result = fn(t.objectStore(STORE));
    } catch (e) {
      fail(e);
      return;
    }
    t.oncomplete = () => { db.close(); resolve(result.result); };
    // A failed request aborts its transaction: onabort reports it.
    t.onabort = () => fail(t.error);
  });
}

export const save = (key, value) => tx('readwrite', (s) => s.put(value, key));
// Several records in one transaction: all are written, or (the storage is full) none, and what
// was stored before stays.
export const saveAll = (entries) => tx('readwrite', (s) => entries.map(([key, value]) => s.put(value, key)).at(-1));
export const load = (key) => tx('readonly', (s) => s.get(key));
export const remove = (key) => tx('readwrite', (s) => s.delete(key));
// Changes a stored record in one transaction (read and write together, so no other write lands
// between them); nothing when there is none. Resolves with the record as it was.
export const update = (key, change) => tx('readwrite', (s) => {
  const req = s.get(key);
  req.onsuccess = () => { if (req.result !== undefined) s.put(change(req.result), key); };
  return req;
});

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
  });
}

async function tx(mode, fn) {
  const db = await open();
  return new Promise((resolve, reject) => {
    const t = db.transaction(STORE, mode);
    const result = fn(t.objectStore(STORE));
    t.oncomplete = () => { db.close(); resolve(result.result); };
    t.onerror = () => { db.close(); reject(t.error); };
  });
}

export const save = (key, value) => tx('readwrite', (s) => s.put(value, key));
export const load = (key) => tx('readonly', (s) => s.get(key));
export const remove = (key) => tx('readwrite', (s) => s.delete(key));

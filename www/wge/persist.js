// The WGE session kept in this browser: saved to IndexedDB after every change (the session as
// Rust writes it, the chart, DOMNet's checkpoint and Adam's moments as bytes), restored once when
// the view is first opened. This tab keeps the saved session only while it holds WGE_LOCK: a
// second tab's view works on a session of its own that is not saved, so the two never overwrite
// each other. A share link's re-run is not saved either, so the person's own session is kept.
import { errorText } from '../app.js';
import * as store from '../store.js';
import { WGE_LOCK, claim } from '../locks.js';
import { plural } from './demos.js';

const $ = (id) => document.getElementById(id);
const STORE_KEY = 'wge-session';

// show: the view's drawing of what came back ({ tally, neural }).
export function sessionStore(ctx, session, chart, show) {
  let writer = null; // null until restore() asks; then true or false
  let restored = false;
  let saving = Promise.resolve();
  const self = {
    // Opened from a share link: nothing is saved from then on.
    shared: false,
    // The save in progress (DOMNet is out of the session while it is written).
    get saving() { return saving; },
    persist() {
      if (self.shared || !writer) return saving;
      saving = saving.then(async () => {
        try {
          // DOMNet's checkpoint and Adam's moments (several MB) go in as bytes, not JSON numbers.
          // One record, one transaction: written whole, or (storage full) not at all, and the
          // last good save stays as it was rather than being replaced by a lesser one.
          const record = { session: session.save(), chart: chart.toJSON(), neural: await session.saveNeural() };
          await store.save(STORE_KEY, record);
        } catch (e) {
          ctx.message(`The WGE session could not be saved (${errorText(e)}); it goes on in this tab, and the last save stays in this browser for a reload.`);
        }
      });
      return saving;
    },
    async restore() {
      if (restored) return;
      restored = true;
      if (ctx.safeStart) {
        writer = false;
        ctx.message('The lab stopped on an internal error while it last started, so the saved WGE session was not loaded (it is kept, and this tab does not save over it): reload to load it.', 'info');
        return;
      }
      writer = (await claim(WGE_LOCK)) !== null;
      if (!writer) {
        ctx.message('The WGE session is open in another tab of the lab: this tab starts a session of its own, which is not saved (close the other tab and reload to keep it here).', 'info');
        return;
      }
      let saved = null;
      try { saved = await store.load(STORE_KEY); } catch (e) {
        ctx.message(`The saved WGE session could not be read from this browser's storage (${errorText(e)}); it was not loaded, and is kept.`);
        return;
      }
      if (!saved || self.shared) return;
      try {
        const weightsBack = await session.restore(typeof saved.session === 'string' ? saved.session : '');
        const bytes = (v) => (v instanceof Uint8Array ? v : undefined);
        const nb = saved.neural && typeof saved.neural === 'object' ? saved.neural : {};
        const neural = session.restoreNeural(bytes(nb.checkpoint), bytes(nb.optimizer));
        $('wge-neural').checked = neural.on;
        $('wge-words').value = session.words();
        chart.load(Array.isArray(saved.chart) ? saved.chart : []);
        show.tally(session.tally());
        if (session.task()) ctx.setTask(session.task());
        const n = session.demonstrations().length;
        const t = session.tally();
        const ns = session.neuralStatus();
        const neuralNote = neural.resumed
          ? ` DOMNet resumed (${plural(ns.episodes, 'episode')} seen, ${plural(ns.updates, 'update')}; its replay starts empty)${neural.on ? ' and goes on learning' : ''}.`
          : neural.why ? ` DOMNet did not resume: ${neural.why}; it starts afresh when turned on.` : '';
        if (neural.resumed) show.neural({ ...ns, on: true, success: null });
        if (n) $('wge-rec-status').textContent = `Resumed the saved session: ${plural(n, 'demonstration')} of ${session.task()}${t.episodes ? `, ${plural(t.episodes, 'episode')} explored; ${weightsBack ? "the workflow policy's weights resumed with it" : "the workflow policy's weights start again from their initial values (the saved ones do not fit these demonstrations' lattices)"}` : ''}.${neuralNote}`;
        if (!n && neural.why) ctx.message(neuralNote.trim(), 'info');
      } catch (e) {
        // The record stays in the store: nothing is lost by refusing it.
        ctx.message(`${errorText(e)}. The saved WGE session was not loaded and is kept; adding a demonstration replaces it.`);
      }
    },
  };
  return self;
}

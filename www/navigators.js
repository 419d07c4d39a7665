// The gMiniWoB navigator the Watch and Design views act with: a shipped one (agents/manifest.json,
// kind "navigator") or a person's own .wln file, loaded into the lab (Rust checks the file; a bad
// one is refused with a message and the loaded navigator stays).
import { errorText } from './app.js';

const $ = (id) => document.getElementById(id);
const OWN = 'own';

export function initNavigators(ctx) {
  const { lab } = ctx;
  let own = null; // {name, bytes} of a file the person loaded
  let loaded = null; // the choice loaded into the lab now
  let header = null; // its header, as loadNavigator returned it
  let info = null; // the header and the name shown

  function fill() {
    const select = $('watch-navigator');
    const current = select.value;
    const options = ctx.navigators.map((n) => {
      const o = document.createElement('option');
      o.value = `shipped:${n.name}`;
      o.textContent = `${n.name} (pretrained)`;
      return o;
    });
    if (own) {
      const o = document.createElement('option');
      o.value = OWN;
      o.textContent = `${own.name} (your file)`;
      options.push(o);
    }
    select.replaceChildren(...options);
    if ([...select.options].some((o) => o.value === current)) select.value = current;
    select.disabled = !options.length;
  }

  // Loads the picked navigator unless it is loaded already; false (with a note) when there is none.
  async function ensure() {
    const choice = $('watch-navigator').value;
    if (!choice) {
      ctx.message('No navigator to act with: load a .wln checkpoint (exported from the Train view, or trained with the train_navigator example).');
      return false;
    }
    // Another view (the Train view's import, a test) may have loaded a different navigator since.
    if (loaded === choice && JSON.stringify(lab.navigatorInfo()) === JSON.stringify(header)) return true;
    const end = ctx.busy('Loading the navigator…');
    try {
      let bytes, name;
      if (choice === OWN) {
        ({ bytes, name } = own);
      } else {
        const entry = ctx.navigators.find((n) => `shipped:${n.name}` === choice);
        const res = await fetch(`agents/${entry.file}`);
        if (!res.ok) throw new Error(`the pretrained navigator ${entry.file} could not be fetched (HTTP ${res.status})`);
        bytes = new Uint8Array(await res.arrayBuffer());
        name = entry.name;
      }
      await ctx.painted();
      header = lab.loadNavigator(bytes);
      info = { ...header, name };
      loaded = choice;
      return true;
    } finally {
      end();
    }
  }

  // A person's file: checked by loading it; on success it becomes the picked navigator.
  async function loadFile(file) {
    const large = ctx.fileTooLarge(file, 'checkpoint');
    if (large) {
      ctx.message(`${large}: it was not loaded. The current navigator stays.`);
      return false;
    }
    const bytes = new Uint8Array(await file.arrayBuffer());
    try {
      header = lab.loadNavigator(bytes);
      info = { ...header, name: file.name };
    } catch (e) {
      ctx.message(`${file.name} was not loaded: ${errorText(e)}. The current navigator stays.`);
      return false;
    }
    own = { name: file.name, bytes };
    loaded = OWN;
    fill();
    $('watch-navigator').value = OWN;
    return true;
  }

  // What a note says about the loaded navigator.
  function describe() {
    if (!info) return '';
    const entry = loaded && loaded !== OWN ? ctx.navigators.find((n) => `shipped:${n.name}` === loaded) : null;
    const c = info.counters || {};
    const made = `trained on ${info.trained_on}, ${Number(c.updates || 0).toLocaleString()} updates, ${Number(c.env_steps || 0).toLocaleString()} env steps`;
    const judged = entry && entry.judged ? judgedText(entry.judged) : '';
    return `${entry ? 'Pretrained' : 'Your'} navigator "${info.name}": ${made}.${judged ? ` ${judged}` : ''}`;
  }

  // Every cell, site by site (levels 0, 1, ... as the manifest lists them).
  function judgedText(j) {
    const sites = Object.entries(j.test_sites || {});
    if (!sites.length) return '';
    const cells = sites.map(([site, levels]) => `${site} ${levels.map((r) => Math.round(100 * r)).join('/')}%`);
    const levels = sites[0][1].length;
    return `Judged greedily on the live DOM (${j.episodes_per_cell} unseen seeds per cell, levels 0–${levels - 1}): ${cells.join(', ')}.`;
  }

  fill();
  return {
    ensure,
    loadFile,
    describe,
    name: () => info && info.name,
  };
}

// The Train view's navigator form: the generator a run trains on (DR, CL, a test site, or an
// adversary, whose constants curriculum.js shows) and every knob of the navigator's config,
// checked by Rust (Lab.checkNavigatorConfig). train.js owns the run; this owns the fields.
import { errorText } from '../app.js';

const $ = (id) => document.getElementById(id);

// curriculum: the curriculum view (initCurriculum) that knows the adversaries;
// onGenerator: called when the generator's choice changes.
export function navForm(ctx, curriculum, { onGenerator }) {
  const { Lab } = ctx;
  const navDefaults = Lab.defaultNavigatorConfig();
  const testSites = Lab.testSites(); // {sites, levels}

  function siteOptions() {
    for (const name of testSites.sites) $('train-site').append(new Option(name, name));
    for (let l = 0; l < testSites.levels; l++) $('train-level').append(new Option(String(l), String(l)));
    curriculum.addOptions($('train-generator'));
  }
  const GENERATOR_NOTES = {
    dr: 'Every iteration a new random design: 1 to 4 pages of random primitives (the papers\' Domain Randomization).',
    cl: 'Every iteration a new design in which each primitive appears with a probability that rises to 1 as training goes on (the papers\' scheduled curriculum).',
    site: 'Every iteration the same test site, with new profile values per episode. The grid judges the navigator on all of them.',
  };
  function syncGenerator() {
    const kind = $('train-generator').value;
    $('train-site-row').hidden = kind !== 'site';
    $('train-generator-note').textContent = GENERATOR_NOTES[kind] ?? curriculum.note(kind);
    curriculum.showConstants(kind);
    onGenerator();
  }
  // The generator as a training request names it (GeneratorSpec in src/request/generator.rs).
  function generatorSpec() {
    const kind = $('train-generator').value;
    if (curriculum.isAdversary(kind)) return curriculum.spec(kind);
    if (kind !== 'site') return { kind };
    const site = $('train-site').value, level = Number($('train-level').value);
    return { kind: 'site', name: `${site}-${level}`, design: Lab.testSiteDesign(site, level) };
  }
  function showGenerator(spec) {
    if (spec?.kind === 'adversary') {
      $('train-generator').value = `adversary:${spec.objective}`;
      syncGenerator();
      curriculum.showConstants($('train-generator').value, spec);
      return;
    }
    $('train-generator').value = spec?.kind || 'dr';
    const m = spec?.kind === 'site' && /^(.+)-(\d+)$/.exec(spec.name);
    if (m && testSites.sites.includes(m[1])) {
      $('train-site').value = m[1];
      $('train-level').value = m[2];
    }
    syncGenerator();
  }

  // ---------------------------------------------------------------- the navigator's config
  const navField = (key) => $('nav-fields').querySelector(`[data-key="${key}"]`);
  function buildNav(cfg) {
    const box = $('nav-fields');
    box.replaceChildren();
    for (const [key, value] of Object.entries(navDefaults)) {
      const name = Object.assign(document.createElement('span'), { textContent: key, title: key });
      let input;
      if (typeof value === 'boolean') {
        input = Object.assign(document.createElement('input'), { type: 'checkbox', checked: Boolean(cfg[key]) });
      } else {
        const v = cfg[key] ?? null;
        // f32 fields arrive widened (1e-8 as 9.99999993922529e-9): show them as written.
        const text = v === null ? '' : typeof v === 'number' ? String(Number(v.toPrecision(7))) : String(v);
        input = Object.assign(document.createElement('input'), { type: 'text', inputMode: 'decimal', value: text });
        if (value === null) input.placeholder = 'none';
      }
      input.dataset.key = key;
      input.setAttribute('aria-label', key);
      input.addEventListener('change', checkNav);
      box.append(name, input);
    }
    checkNav();
  }
  // Numbers as numbers; anything else goes to Rust as typed, so its message names the field.
  function readNav() {
    const cfg = {};
    for (const input of $('nav-fields').querySelectorAll('input')) {
      const key = input.dataset.key;
      const text = input.value.trim();
      if (input.type === 'checkbox') cfg[key] = input.checked;
      else if (text === '' && navDefaults[key] === null) cfg[key] = null;
      else cfg[key] = text !== '' && Number.isFinite(Number(text)) ? Number(text) : text;
    }
    return cfg;
  }
  // Returns the checked config (Lab.checkNavigatorConfig: NavigatorConfig::validate), or null
  // with the problem shown next to the fields.
  function checkNav() {
    for (const input of $('nav-fields').querySelectorAll('input')) input.classList.remove('invalid');
    try {
      const ok = Lab.checkNavigatorConfig(readNav());
      $('nav-error').hidden = true;
      // The learner the run will use (NavigatorConfig::head), in the centre column's note.
      $('train-nav-learner').textContent = ok.head === 'dqn' ? 'DQN, the reference code\'s head' : 'A2C, the papers\' learner';
      return ok;
    } catch (e) {
      const text = errorText(e);
      $('nav-error').textContent = text;
      $('nav-error').hidden = false;
      const key = Object.keys(navDefaults).filter((k) => text.startsWith(k)).sort((a, b) => b.length - a.length)[0];
      if (key) navField(key).classList.add('invalid');
      return null;
    }
  }

  $('train-generator').addEventListener('change', syncGenerator);
  $('nav-reset').addEventListener('click', () => buildNav(navDefaults));

  return { navDefaults, siteOptions, syncGenerator, generatorSpec, showGenerator, buildNav, checkNav };
}

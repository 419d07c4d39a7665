// The lab's JS shell: wires the page's controls to the wasm `Lab` and draws its statistics.
// All environment and agent logic lives in Rust; this file only handles the page.

const $ = (id) => document.getElementById(id);

function bindings() {
  if (window.wasmBindings) return Promise.resolve(window.wasmBindings);
  return new Promise((resolve) => {
    window.addEventListener('TrunkApplicationStarted', () => resolve(window.wasmBindings), { once: true });
  });
}

function showMessage(text, kind = 'error') {
  const box = $('message');
  if (!text) { box.hidden = true; return; }
  box.textContent = text;
  box.className = kind;
  box.hidden = false;
}

function errorText(e) {
  return e && e.message ? e.message : String(e);
}

function fmt(x, digits = 1) {
  return Number.isFinite(x) ? x.toFixed(digits) : '–';
}

async function main() {
  const { Lab } = await bindings();
  const lab = new Lab($('task-frame'));
  window.lab = lab; // for tests, benchmarks and the curious

  const tasks = Lab.tasks();
  for (const t of tasks) {
    const opt = document.createElement('option');
    opt.value = t.name;
    opt.textContent = `${t.name} (${t.difficulty})`;
    $('task').appendChild(opt);
  }
  const params = new URLSearchParams(location.search);
  if (params.get('task')) $('task').value = params.get('task');

  function currentTask() {
    if ($('source').value === 'external') {
      return { source: 'external', base_url: $('base-url').value.trim(), name: $('task-name').value.trim() };
    }
    return $('task').value;
  }

  function applyConfig() {
    const maxSteps = Math.max(1, parseInt($('max-steps').value, 10) || 20);
    lab.setConfig({ max_steps: maxSteps, hold_clock: true });
  }

  async function newEpisode() {
    showMessage('');
    try {
      applyConfig();
      const obs = await lab.reset(currentTask(), parseInt($('seed').value, 10) >>> 0);
      $('utterance').textContent = obs.instruction.utterance;
    } catch (e) {
      showMessage(errorText(e));
    }
  }

  let running = false;
  async function run() {
    showMessage('');
    running = true;
    setButtons();
    applyConfig();
    requestAnimationFrame(drawStats);
    try {
      await lab.runAgent(currentTask(), $('policy').value, parseInt($('seed').value, 10) >>> 0, 0);
    } catch (e) {
      showMessage(errorText(e));
    }
    running = false;
    setButtons();
    drawStats();
  }

  function drawStats() {
    const s = lab.agentStats();
    const st = s.stats;
    $('st-status').textContent = s.running ? `running ${s.policy} on ${s.task}` : (s.error ? 'stopped (error)' : 'idle');
    $('st-episodes').textContent = String(st.episodes);
    $('st-eps').textContent = fmt(st.episodes_per_s);
    $('st-sps').textContent = fmt(st.steps_per_s);
    $('st-last').textContent = st.last ? fmt(st.last.raw_reward, 2) : '–';
    $('st-success').textContent = st.episodes ? `${fmt(100 * st.success_rate_100, 0)}%` : '–';
    $('st-reason').textContent = st.last ? (st.last.reason || (st.last.raw_reward > 0 ? 'success' : '–')) : '–';
    if (running) requestAnimationFrame(drawStats);
  }

  function setButtons() {
    $('run').disabled = running;
    $('stop').disabled = !running;
    $('new-episode').disabled = running;
  }

  $('source').addEventListener('change', () => {
    const ext = $('source').value === 'external';
    $('base-url-row').hidden = !ext;
    $('task').hidden = ext;
    $('task-name').hidden = !ext;
  });
  $('run').addEventListener('click', run);
  $('stop').addEventListener('click', () => lab.stop());
  $('new-episode').addEventListener('click', newEpisode);
  $('task').addEventListener('change', newEpisode);

  setButtons();
  await newEpisode();
  document.body.dataset.ready = 'true';
}

main().catch((e) => showMessage(`The lab failed to start: ${errorText(e)}`));

// A training run's progress on screen: the charts, the counters, the status line and the
// navigator's success grid. The learner's progress, grid and done messages come in here; what they
// mean (solved, the grid's cells) was decided in Rust. train.js owns the run (`state.run`).
import { LineChart } from '../charts.js';

const $ = (id) => document.getElementById(id);
export const fmtInt = (n) => Math.round(n).toLocaleString('en-US');
const NAVIGATOR = 'navigator';

// A success rate's cell colour: pale red at 0 through pale yellow to green at 1.
function successColor(v) {
  const x = Math.max(0, Math.min(1, v));
  return `hsl(${Math.round(130 * x)}, 62%, ${Math.round(91 - 26 * x)}%)`;
}

// state: train.js's shared run state (reads state.run); curriculum: curriculum.js's view, whose
// charts join these.
export function progressView(ctx, state, curriculum) {
  const { Lab } = ctx;
  // When a task counts as solved (Rust's rule), in words.
  const solveRule = (({ rate, window }) => `${Math.round(100 * rate)}% of ${window}`)(Lab.dqnSolveRule());
  let drawQueued = false;

  const charts = {
    success: new LineChart($('chart-success'), { title: 'Success rate, last 100 episodes (%)', yMin: 0, yMax: 100, xLabel: 'env steps' }),
    reward: new LineChart($('chart-reward'), { title: 'Episode raw reward (mean per report)', yMin: -1, yMax: 1, xLabel: 'env steps' }),
    loss: new LineChart($('chart-loss'), { title: 'TD loss (Huber)', yMin: 0, xLabel: 'env steps' }),
    replay: new LineChart($('chart-replay'), { title: 'Replay: fill and positive transitions (%)', yMin: 0, yMax: 100, xLabel: 'env steps' }),
    speed: new LineChart($('chart-speed'), { title: 'Env steps/s and updates/s', yMin: 0, xLabel: 'env steps' }),
    navReturn: new LineChart($('chart-nav-return'), { title: 'Mean return per iteration (shaped reward)', xLabel: 'iteration' }),
    navSuccess: new LineChart($('chart-nav-success'), { title: 'Training episodes that succeeded (%)', yMin: 0, yMax: 100, xLabel: 'iteration' }),
    navSteps: new LineChart($('chart-nav-steps'), { title: 'Mean episode length (steps)', yMin: 0, xLabel: 'iteration' }),
    navSize: new LineChart($('chart-nav-size'), { title: 'Design size: primitives and fields', yMin: 0, xLabel: 'iteration' }),
  };
  // An adversarial run's curriculum charts are saved, cleared and drawn with the rest.
  Object.assign(charts, curriculum.charts);

  function draw() {
    if (drawQueued) return;
    drawQueued = true;
    requestAnimationFrame(() => {
      drawQueued = false;
      if (ctx.view === 'train') for (const c of Object.values(charts)) c.draw();
      curriculum.draw();
    });
  }

  function showCounters() {
    const { run } = state;
    if (!run) return;
    $('tr-steps').textContent = fmtInt(run.env_steps || 0);
    $('tr-updates').textContent = fmtInt(run.updates || 0);
    const frames = run.request.frames;
    $('train-progress').style.width = `${Math.min(100, (100 * (run.env_steps || 0)) / frames).toFixed(1)}%`;
    $('train-budget').textContent = `${fmtInt(run.env_steps || 0)} / ${fmtInt(frames)} steps`;
    if (run.backend) {
      $('tr-backend').textContent = run.backend === 'webgpu' ? 'WebGPU' : 'CPU';
      $('tr-backend-reason').textContent = run.reason || '';
    }
  }

  // Episodes a failing page ended (the learner went on; it stops the run itself when one task's
  // episodes keep failing): how many, and the last one's reason.
  function envFailures(p, taskName) {
    const last = p.env_failures?.at(-1);
    if (last) state.run.lastEnvFailure = `${taskName(last.task)}: ${last.reason}`;
    if (!p.env_failures_total) return '';
    return ` · ${fmtInt(p.env_failures_total)} ${p.env_failures_total === 1 ? 'episode' : 'episodes'} ended by a failing page (last: ${state.run.lastEnvFailure})`;
  }

  function onDqnProgress(p) {
    const { run } = state;
    run.env_steps = p.env_steps;
    run.updates = p.updates;
    run.tasksProgress = p.tasks;
    const x = p.env_steps;
    for (const t of p.tasks) if (t.stats.episodes > 0) charts.success.add(t.task, x, 100 * t.stats.success_rate_100);
    if (p.new_episodes.length) {
      charts.reward.add('reward', x, p.new_episodes.reduce((s, e) => s + e.raw_reward, 0) / p.new_episodes.length);
    }
    if (p.loss !== null && p.loss !== undefined) charts.loss.add('loss', x, p.loss);
    charts.replay.add('fill', x, (100 * p.replay_len) / p.replay_capacity);
    charts.replay.add('positive', x, 100 * p.positive_fraction);
    charts.speed.add('env steps/s', x, p.steps_per_s);
    charts.speed.add('updates/s', x, p.updates_per_s);
    $('tr-act').textContent = p.act_ms != null ? `${p.act_ms.toFixed(1)} ms/step` : '–';
    $('tr-update').textContent = p.update_ms != null ? `${p.update_ms.toFixed(1)} ms` : '–';
    const solved = p.tasks.filter((t) => t.solved_at_frames != null).map((t) => `${t.task} at ${fmtInt(t.solved_at_frames)}`);
    const rates = p.tasks.map((t) => `${t.task} ${t.stats.episodes ? Math.round(100 * t.stats.success_rate_100) + '%' : '–'}`);
    $('train-status').textContent = `${p.paused ? 'Paused' : 'Training'} · ${fmtInt(p.episodes)} episodes · ${rates.join(', ')}` +
      (solved.length ? ` · solved (${solveRule}): ${solved.join(', ')}` : '') + envFailures(p, (k) => p.tasks[k]?.task);
    if (p.warnings && p.warnings.length) ctx.message(`Training: ${p.warnings[0]}`, 'info');
  }

  function onNavProgress(p) {
    const { run } = state;
    run.env_steps = p.env_steps;
    run.updates = p.updates;
    if (p.adversarial) curriculum.onProgress(p);
    for (const it of p.new_iterations) {
      charts.navReturn.add('mean return', it.iteration, it.mean_return);
      charts.navSuccess.add('success', it.iteration, 100 * it.success_rate);
      charts.navSteps.add('mean steps', it.iteration, it.mean_steps);
      charts.navSize.add('primitives', it.iteration, it.primitives);
      charts.navSize.add('fields', it.iteration, it.fields);
    }
    charts.speed.add('env steps/s', p.env_steps, p.steps_per_s);
    charts.speed.add('updates/s', p.env_steps, p.updates_per_s);
    $('tr-iterations').textContent = fmtInt(p.iterations);
    $('tr-episodes').textContent = fmtInt(p.episodes);
    // An adversarial run reports each navigator's vocabulary.
    $('tr-vocab').textContent = Array.isArray(p.vocabulary) ? p.vocabulary.map(fmtInt).join(' / ') : fmtInt(p.vocabulary);
    const last = p.new_iterations.at(-1);
    if (last) {
      $('tr-design').textContent = `${last.pages} ${last.pages === 1 ? 'page' : 'pages'}, ${last.primitives} primitives, ${last.fields} fields`;
    }
    $('train-status').textContent = `${p.paused ? 'Paused' : 'Training'} on ${p.generator} · ${fmtInt(p.iterations)} iterations, ${fmtInt(p.episodes)} episodes` +
      (last ? ` · last iteration: ${Math.round(100 * last.success_rate)}% success, return ${last.mean_return.toFixed(2)}` : '') +
      // A resumed run's first report (its restored counters) has no rates yet.
      (p.steps_per_s != null ? ` · ${p.steps_per_s.toFixed(0)} env steps/s, ${p.updates_per_s.toFixed(1)} updates/s` : '') + envFailures(p, () => p.generator);
  }

  // The success grid: test sites x levels, each cell the greedy success rate on unseen seeds.
  function showGrid(g) {
    const table = $('nav-grid');
    table.replaceChildren();
    if (!g) {
      $('nav-grid-note').textContent = 'Not judged yet.';
      return;
    }
    const head = table.createTHead().insertRow();
    head.append(Object.assign(document.createElement('th'), { textContent: 'level' }));
    for (let l = 0; l < g.levels; l++) head.append(Object.assign(document.createElement('th'), { textContent: String(l), scope: 'col' }));
    const body = table.createTBody();
    g.sites.forEach((site, i) => {
      const row = body.insertRow();
      row.append(Object.assign(document.createElement('th'), { textContent: site, scope: 'row' }));
      g.success[i].forEach((v, l) => {
        const cell = row.insertCell();
        cell.textContent = `${Math.round(100 * v)}%`;
        cell.style.background = successColor(v);
        cell.title = `${site}, level ${l}: ${Math.round(v * g.seeds)} of ${g.seeds} episodes succeeded`;
        cell.dataset.value = String(v);
      });
    });
    $('nav-grid-note').textContent = `At ${fmtInt(g.env_steps)} env steps (${fmtInt(g.updates)} updates): judged greedily on ${g.seeds} unseen seeds per cell, on the site simulator.` +
      (g.means ? ` The population's best, navigator ${g.navigator}; mean per navigator: ${g.means.map((m) => `${Math.round(100 * m)}%`).join(' / ')}.` : '');
  }

  // The run's end: what it reached, in one line.
  function showDone(d, request, lastGrid) {
    if (request.agent === NAVIGATOR) {
      $('train-status').textContent = `Finished: ${fmtInt(d.env_steps)} env steps, ${fmtInt(d.updates)} updates, ${fmtInt(d.episodes)} episodes in ${d.elapsed_s.toFixed(0)} s` +
        (lastGrid ? `; mean success on the test sites ${Math.round(100 * lastGrid.mean)}%` : '');
      return;
    }
    const solved = d.tasks.filter((t) => t.solved_at_frames != null);
    $('train-status').textContent = `Finished: ${fmtInt(d.env_steps)} steps, ${fmtInt(d.updates)} updates in ${d.elapsed_s.toFixed(0)} s` +
      (solved.length ? `; solved ${solved.map((t) => `${t.task} at ${fmtInt(t.solved_at_frames)}`).join(', ')}` : `; no task reached ${solveRule}`);
  }

  // The charts and grid cleared (a new run) and, with counters, the status line and counters back
  // at zero (the other agent's controls).
  function clear({ counters = true } = {}) {
    showGrid(null);
    for (const c of Object.values(charts)) c.clear();
    curriculum.clear();
    if (!counters) return;
    $('train-status').textContent = 'Not training.';
    $('train-progress').style.width = '0%';
    $('train-budget').textContent = '';
    for (const id of ['tr-steps', 'tr-updates', 'tr-iterations', 'tr-episodes']) $(id).textContent = '0';
    for (const id of ['tr-backend', 'tr-act', 'tr-update', 'tr-vocab', 'tr-design']) $(id).textContent = '–';
    $('tr-backend-reason').textContent = '';
  }

  return {
    charts,
    draw,
    showCounters,
    showGrid,
    showDone,
    clear,
    onProgress(p) {
      if (p.agent === NAVIGATOR) onNavProgress(p);
      else onDqnProgress(p);
      showCounters();
      draw();
    },
    toJSON: () => Object.fromEntries(Object.entries(charts).map(([k, c]) => [k, c.toJSON()])),
    load(saved) { for (const [k, c] of Object.entries(charts)) c.load(saved?.[k]); },
  };
}

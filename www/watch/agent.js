// The Watch view's DOM-Q-Net agent: which checkpoint acts on a task (your model when it was
// trained on the task, else a shipped one that was, else your model anyway) and loading it into
// the lab once (the lab keeps the last one loaded).
const $ = (id) => document.getElementById(id);

// A task's page name: `miniwob/click-tab` → `click-tab`, the lab's names as they are.
const bareName = (ctx, taskName) => (taskName.startsWith(ctx.miniwob.prefix) ? taskName.slice(ctx.miniwob.prefix.length) : taskName);

// The shipped agent that acts on a task (the Watch view's choice, which the gallery names): the
// one `loaded` when it was trained on the task (a multitask agent switching tasks), else the
// first the manifest lists for the task, else, on a real MiniWoB++ page, one trained on the lab's
// page of that name (it may transfer; `elsewhere` says so). Null when there is none.
export function shippedAgentFor(ctx, taskName, loaded = null) {
  const page = bareName(ctx, taskName);
  const entry = ctx.agents.find((a) => a.name === loaded && a.tasks.includes(taskName))
    || ctx.agents.find((a) => a.tasks.includes(taskName)) || ctx.agents.find((a) => a.tasks.includes(page));
  return entry ? { entry, elsewhere: !entry.tasks.includes(taskName) } : null;
}

export function agentLoader(ctx) {
  const { lab } = ctx;
  let loaded = null; // name of the checkpoint loaded into the lab
  const bare = (taskName) => bareName(ctx, taskName);

  // The agent for a task: your own model when it was trained on the task, else a shipped one that
  // was, else your model anyway (it may transfer), else none.
  function agentFor(taskName) {
    const mine = ctx.userModel && { name: ctx.userModel.name, bytes: ctx.userModel.bytes, shipped: false };
    if (mine && (ctx.userModel.tasks || []).includes(taskName)) return mine;
    const shipped = shippedAgentFor(ctx, taskName, loaded);
    if (shipped) return { name: shipped.entry.name, url: `agents/${shipped.entry.file}`, shipped: true, elsewhere: shipped.elsewhere };
    return mine || null;
  }

  // Loads `found` ({name, bytes} or {name, url}) unless it is the one loaded, with the busy line up.
  async function load(found) {
    if (loaded === found.name) return;
    const end = ctx.busy(`Loading the agent "${found.name}"…`);
    try {
      const bytes = found.bytes || new Uint8Array(await (await fetch(found.url)).arrayBuffer());
      await ctx.painted();
      lab.loadAgent(bytes, found.name);
      loaded = found.name;
    } finally {
      end();
    }
  }

  return {
    agentFor,
    get loaded() { return loaded; },
    // The shipped agent loaded, when it was trained on several tasks (a multitask agent), else null.
    multitask() {
      const entry = ctx.agents.find((a) => a.name === loaded);
      return entry && new Set(entry.tasks.map(bare)).size > 1 ? entry : null;
    },
    // A shipped agent by name (a share link's checkpoint).
    loadShipped(name) {
      const entry = ctx.agents.find((a) => a.name === name);
      return load({ name, url: `agents/${entry.file}` });
    },
    // The agent for the task (the picker's, or the one an episode request was made for), loaded;
    // false (and a note saying so) when there is none.
    async ensure(t = ctx.task(), spec = ctx.taskSpec()) {
      const key = typeof t === 'string' ? t : spec.name;
      const found = agentFor(key);
      if (!found) {
        $('agent-note').textContent = `No DOM-Q-Net agent for ${spec.name} yet: train one in the Train view, or import a checkpoint.`;
        return false;
      }
      await load(found);
      const info = lab.agentInfo();
      const where = found.elsewhere ? ' on the lab\'s page of this name' : '';
      $('agent-note').textContent = `${found.shipped ? 'Pretrained' : 'Your'} agent "${found.name}", trained for ${info.counters.env_steps.toLocaleString()} steps${where}.`;
      return true;
    },
    // The user's model changed: load afresh next time.
    forget() { loaded = null; },
  };
}

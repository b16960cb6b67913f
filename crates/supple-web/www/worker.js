// The engine in a Web Worker: the wasm module, the scene and every step live here, off the
// page's main thread, which only draws and handles input (main.js, through client.js).
//
// Messages in: { id, cmd, args }; out: { id, result } or { id, error, code }. Results that
// carry positions transfer their buffers (a copy of wasm memory made here, so the view into
// wasm memory is never handed out). Commands run one after another in the order sent.

import { Engine } from './engine.js';

const SCENES = {
  'bar.toml': [],
  'tube_drop.toml': ['meshes/tube_solid_1k.node', 'meshes/tube_solid_1k.ele'],
  'tube_obstacles.toml': ['meshes/tube_solid_1k.node', 'meshes/tube_solid_1k.ele'],
  'head_on.toml': ['meshes/tube_solid_1k.node', 'meshes/tube_solid_1k.ele'],
  // A closed OBJ surface stuffed with about 5k tets in the worker as the scene loads.
  'bunny_drop.toml': ['meshes/bunny.obj'],
};

// Real-time pacing: each frame steps the simulated time the wall clock advanced since the
// last frame (the remainder carried over), at most as many steps as fit in the frame's
// budget at the measured cost per step (half the time since the last frame, between
// FRAME_BUDGET_MS and MAX_BUDGET_MS: the worker steps while the page draws, and a slow
// drawing leaves it more time) and never more than the page's cap. What does not fit is
// dropped, not made up later: the world then runs slower than real time, and the page says
// by how much (from the frames it draws, pacing.js).
const FRAME_BUDGET_MS = 25;
const MAX_BUDGET_MS = 100;
// A longer gap (a hidden tab, a load) counts as this much wall time.
const MAX_GAP_MS = 250;

let engine = null;
let grab = -1; // the mouse's grab id in the engine (-1: none)
let msPerStep = 0; // moving average of wall ms per step over `frame` calls
let hasObstacles = false;
let current = null; // { text, name, files } of the loaded scene (the text panel re-runs it)
let lastWall = 0; // performance.now() of the last frame (0: none since the load)
let owed = 0; // simulated seconds owed to the wall clock, less than one step
let colorBy = 0; // the field of the snapshots (field.rs): 0 displacement, 1 von Mises, 2 volume ratio

async function fetchBytes(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return new Uint8Array(await r.arrayBuffer());
}

// Positions, a copy out of wasm memory (its buffer is transferred to the page).
function positions() {
  return engine.positions().slice();
}

// What the page needs each frame: positions, the colour field, statistics, moving
// obstacles' poses.
function snapshot() {
  const field = engine.field(colorBy);
  return {
    positions: positions(),
    field: field ? field.slice() : null,
    colorBy,
    stats: engine.stats(),
    obstacles: hasObstacles ? engine.obstacles() : [],
    msPerStep,
  };
}

// Loads scene text with its files, paused or not: the geometry and the first snapshot.
// `start`: a world state's JSON to start from instead of the scene's start (or null).
function loadText(text, name, files, paused, start = null) {
  engine.loadScene(text, name, files);
  if (start) engine.setStart(start);
  engine.setPaused(Boolean(paused));
  current = { text, name, files };
  grab = -1;
  msPerStep = 0;
  lastWall = 0;
  owed = 0;
  hasObstacles = engine.obstacles().length > 0;
  const nb = engine.bodyCount();
  const triOffsets = [];
  for (let b = 0; b <= nb; b++) triOffsets.push(engine.x.supple_body_triangle_offset(b));
  return { name, text, triangles: engine.triangles(), triOffsets, ...snapshot() };
}

const commands = {
  async init(url) {
    engine = await Engine.load(url);
    return Object.keys(SCENES);
  },

  // Loads a bundled scene, paused or not (before any frame can step it).
  async load(name, paused) {
    if (!(name in SCENES)) throw new Error(`no bundled scene ${name}`);
    const base = new URL('pkg/scenes/', self.location.href);
    const text = new TextDecoder().decode(await fetchBytes(new URL(name, base)));
    const files = [];
    for (const path of SCENES[name]) files.push([path, await fetchBytes(new URL(path, base))]);
    return loadText(text, name, files, paused);
  },

  // Loads scene text with files ([path, Uint8Array] pairs; null: the loaded scene's own),
  // started from the world state `start` (JSON) when one is given.
  loadText(text, name, files, paused, start = null) {
    return loadText(text, name, files || (current ? current.files : []), paused, start);
  },

  // The default scene of a bare mesh file (default_scene.rs): its TOML text.
  defaultScene(meshName, files) { return engine.defaultScene(meshName, files); },

  // The scene's files as fetched by `supple view` (its manifest: view.rs of supple-cli).
  async fetchFiles(list) {
    const files = [];
    for (const f of list) files.push([f.path, await fetchBytes(new URL(f.url, self.location.href))]);
    return files;
  },

  // One animation frame, paced to the wall clock (see FRAME_BUDGET_MS), then the snapshot;
  // a failed step is reported in the snapshot (`failure`), not thrown: the page keeps asking
  // for frames, and the next setting or reset starts the world again.
  frame(maxSteps) {
    const now = performance.now();
    const gap = lastWall ? Math.min(now - lastWall, MAX_GAP_MS) : 0;
    lastWall = now;
    const st = engine.stats();
    let n = 0;
    if (!st.paused && !st.failure) {
      owed += gap / 1000;
      n = Math.floor(owed / st.dt);
      const budget = Math.min(Math.max(FRAME_BUDGET_MS, 0.5 * gap), MAX_BUDGET_MS);
      const fit = msPerStep > 0 ? Math.max(1, Math.floor(budget / msPerStep)) : 1;
      const cap = Math.min(maxSteps, fit);
      if (n > cap) {
        n = cap;
        owed = 0; // behind the clock: not made up later
      } else {
        owed -= n * st.dt;
      }
    } else {
      owed = 0;
    }
    let failure = null;
    let taken = 0;
    if (n > 0) {
      const t0 = performance.now();
      try {
        taken = engine.frame(n);
      } catch (e) {
        failure = e.message;
      }
      if (taken > 0) {
        const ms = (performance.now() - t0) / taken;
        msPerStep = msPerStep === 0 ? ms : 0.8 * msPerStep + 0.2 * ms;
      }
    }
    return { taken, failure, ...snapshot() };
  },

  setColorBy(kind) {
    colorBy = kind;
    return snapshot();
  },

  step(n) { return engine.step(n); },
  setPaused(p) { return engine.setPaused(p); },
  reset() {
    grab = -1;
    owed = 0;
    return engine.reset();
  },
  setYoungs(e) { return engine.setYoungs(e); },
  setPoisson(nu) { return engine.setPoisson(nu); },
  setDamping(a, b) { return engine.setDamping(a, b); },
  setDt(dt) { return engine.setDt(dt); },
  setModel(name) { return engine.setModel(name); },
  setIntegrator(name) { return engine.setIntegrator(name); },
  stats() { return engine.stats(); },
  obstacles() { return engine.obstacles(); },
  positions() { return positions(); },
  positions64() { return engine.positions64(); },
  pick(o, d) { return engine.pick(o, d); },

  // Explicit grabs (tests): the engine's ids.
  grabStart(hit, stiffness, damping) { return engine.grabStart(hit, stiffness, damping); },
  grabMove(id, p) { return engine.check(engine.grabMove(id, p), 'grab'); },
  grabRelease(id) { return engine.check(engine.grabRelease(id), 'grab'); },

  // The mouse's grab: pick along the ray and grab the hit with a spring of at least
  // `stiffness` (N/m), stiff enough that a pull of a tenth of the body's size lifts three
  // times its weight (a user's own mesh may weigh 100 kg), damping in proportion;
  // { hit, code, message, stiffness }.
  mouseGrab(o, d, stiffness, damping) {
    if (grab >= 0) engine.grabRelease(grab);
    grab = -1;
    const hit = engine.pick(o, d);
    if (!hit) return { hit: null, code: -1, message: 'no body under the mouse' };
    const b = engine.stats().bodies[hit.body];
    const size = Math.hypot(b.max[0] - b.min[0], b.max[1] - b.min[1], b.max[2] - b.min[2]);
    const k = Math.max(stiffness, (30 * b.mass * 9.81) / Math.max(size, 1e-9));
    const code = engine.grabStart(hit, k, (damping * k) / stiffness);
    if (code >= 0) grab = code;
    return { hit, code, message: code < 0 ? engine.message() : '', stiffness: k };
  },
  mouseMove(p) {
    return grab < 0 ? 0 : engine.check(engine.grabMove(grab, p), 'grab');
  },
  mouseRelease() {
    if (grab < 0) return 0;
    const id = grab;
    grab = -1;
    return engine.check(engine.grabRelease(id), 'grab');
  },

  // Times n steps back to back in the worker (no drawing in between).
  measure(n) {
    const t0 = performance.now();
    engine.step(n);
    const ms = performance.now() - t0;
    return { steps: n, ms, stepsPerSecond: (1000 * n) / ms };
  },
};

function transferables(result) {
  const out = [];
  if (result && typeof result === 'object') {
    for (const v of Object.values(result)) if (ArrayBuffer.isView(v)) out.push(v.buffer);
    if (ArrayBuffer.isView(result)) out.push(result.buffer);
  }
  return out;
}

// One command at a time, in order (a load awaits its fetches before the next command runs).
let queue = Promise.resolve();
self.onmessage = (e) => {
  const { id, cmd, args } = e.data;
  queue = queue.then(async () => {
    try {
      const f = commands[cmd];
      if (!f) throw new Error(`unknown command ${cmd}`);
      if (!engine && cmd !== 'init') throw new Error('the engine is not loaded yet');
      const result = await f(...(args || []));
      self.postMessage({ id, result }, transferables(result));
    } catch (err) {
      self.postMessage({ id, error: err.message || String(err), code: err.code });
    }
  });
};

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
};

let engine = null;
let grab = -1; // the mouse's grab id in the engine (-1: none)
let msPerStep = 0; // moving average of wall ms per step over `frame` calls
let hasObstacles = false;

async function fetchBytes(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return new Uint8Array(await r.arrayBuffer());
}

// Positions, a copy out of wasm memory (its buffer is transferred to the page).
function positions() {
  return engine.positions().slice();
}

// What the page needs each frame: positions, statistics, moving obstacles' poses.
function snapshot() {
  return {
    positions: positions(),
    stats: engine.stats(),
    obstacles: hasObstacles ? engine.obstacles() : [],
    msPerStep,
  };
}

const commands = {
  async init(url) {
    engine = await Engine.load(url);
    return Object.keys(SCENES);
  },

  // Loads a bundled scene, paused or not (before any frame can step it): its geometry for
  // the page and the first snapshot.
  async load(name, paused) {
    if (!(name in SCENES)) throw new Error(`no bundled scene ${name}`);
    const base = new URL('pkg/scenes/', self.location.href);
    const text = new TextDecoder().decode(await fetchBytes(new URL(name, base)));
    const files = [];
    for (const path of SCENES[name]) files.push([path, await fetchBytes(new URL(path, base))]);
    engine.loadScene(text, name, files);
    engine.setPaused(Boolean(paused));
    grab = -1;
    msPerStep = 0;
    hasObstacles = engine.obstacles().length > 0;
    const nb = engine.bodyCount();
    const triOffsets = [];
    for (let b = 0; b <= nb; b++) triOffsets.push(engine.x.supple_body_triangle_offset(b));
    return { name, text, triangles: engine.triangles(), triOffsets, ...snapshot() };
  },

  // One animation frame: n steps unless paused, then the snapshot.
  frame(n) {
    const t0 = performance.now();
    const taken = engine.frame(n);
    if (taken > 0) {
      const ms = (performance.now() - t0) / taken;
      msPerStep = msPerStep === 0 ? ms : 0.9 * msPerStep + 0.1 * ms;
    }
    return { taken, ...snapshot() };
  },

  step(n) { return engine.step(n); },
  setPaused(p) { return engine.setPaused(p); },
  reset() {
    grab = -1;
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

  // The mouse's grab: pick along the ray and grab the hit; { hit, code, message }.
  mouseGrab(o, d, stiffness, damping) {
    if (grab >= 0) engine.grabRelease(grab);
    grab = -1;
    const hit = engine.pick(o, d);
    if (!hit) return { hit: null, code: -1, message: 'no body under the mouse' };
    const code = engine.grabStart(hit, stiffness, damping);
    if (code >= 0) grab = code;
    return { hit, code, message: code < 0 ? engine.message() : '' };
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

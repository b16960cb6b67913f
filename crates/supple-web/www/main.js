// The page: loads the wasm engine and a bundled scene, steps it every animation frame, draws
// it, and wires the controls and the mouse (orbit, pick, grab). `window.supple` exposes the
// state for tests.

import { Engine, ERR_NOT_AVAILABLE } from './engine.js';
import { Camera, Renderer, sub, add, scale, dot } from './render.js';

const SCENES = {
  'bar.toml': [],
  'tube_drop.toml': ['meshes/tube_solid_1k.node', 'meshes/tube_solid_1k.ele'],
};
// Grab spring (N/m, N·s/m), handed to the engine's grab (see grab.rs).
const GRAB_STIFFNESS = 2000;
const GRAB_DAMPING = 20;

const $ = (id) => document.getElementById(id);
const canvas = $('view');
const camera = new Camera();
let engine = null;
let renderer = null;
let triangles = null;
let triOffsets = [];
let paused = false;
let stepsPerFrame = 1;
let msPerStep = 0; // moving average of wall ms per step, measured around supple_frame
let messageTimer = 0;
let drag = null; // { kind: 'orbit', x, y } or { kind: 'grab', id, hit, point, normal, target }
let lastPick = null;
let lastGrab = null; // { code, message } of the last grab_start

function showMessage(text, seconds = 6) {
  const m = $('message');
  m.textContent = text;
  m.style.display = 'block';
  clearTimeout(messageTimer);
  messageTimer = setTimeout(() => (m.style.display = 'none'), seconds * 1000);
}

function guard(f) {
  try {
    return f();
  } catch (e) {
    showMessage(e.message);
    return undefined;
  }
}

async function loadScene(name) {
  const base = 'pkg/scenes/';
  const text = await (await fetch(base + name)).text();
  const files = [];
  for (const path of SCENES[name]) {
    files.push([path, new Uint8Array(await (await fetch(base + path)).arrayBuffer())]);
  }
  engine.loadScene(text, name, files);
  $('scene').value = name;
  engine.setPaused(paused);
  triangles = engine.triangles();
  const nb = engine.bodyCount();
  triOffsets = [];
  for (let b = 0; b <= nb; b++) triOffsets.push(engine.x.supple_body_triangle_offset(b));
  const rest = engine.positions().slice();
  const lo = [Infinity, Infinity, Infinity];
  const hi = [-Infinity, -Infinity, -Infinity];
  for (let i = 0; i < rest.length; i += 3)
    for (let c = 0; c < 3; c++) {
      lo[c] = Math.min(lo[c], rest[i + c]);
      hi[c] = Math.max(hi[c], rest[i + c]);
    }
  // Frame the body and the ground under it (a dropped body falls into view).
  camera.frame([lo[0], Math.min(lo[1], 0), lo[2]], hi);
  const size = Math.hypot(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]);
  renderer.setMesh(rest, triangles, Math.min(0, lo[1]), Math.max(size, 1));
  renderer.dispScale = 0.25 * size;
  msPerStep = 0;
  syncControls(text);
}

// The controls show the scene's values (read back from the engine's statistics).
function syncControls(text) {
  const s = engine.stats();
  $('E').value = Math.log10(s.youngs);
  $('nu').value = s.poisson;
  $('alpha').value = s.damping[0];
  $('beta').value = s.damping[1];
  $('dt').value = s.dt * 1000;
  if (s.model) $('model').value = s.model;
  const kind = /\[integrator\][^[]*?kind\s*=\s*"(\w+)"/.exec(text);
  $('integrator').value = kind ? kind[1] : 'backward_euler_linearized';
  labels();
}

function labels() {
  $('E-value').textContent = `${Number(10 ** $('E').value).toExponential(2)} Pa`;
  $('nu-value').textContent = Number($('nu').value).toFixed(2);
  $('alpha-value').textContent = Number($('alpha').value).toFixed(1);
  $('beta-value').textContent = Number($('beta').value).toFixed(3);
  $('dt-value').textContent = $('dt').value;
  $('spf-value').textContent = $('spf').value;
}

function setPaused(p) {
  paused = p;
  engine.setPaused(p);
  $('play').textContent = p ? 'Play' : 'Pause';
}

function wireControls() {
  for (const id of ['E', 'nu', 'alpha', 'beta', 'dt', 'spf']) $(id).addEventListener('input', labels);
  $('E').addEventListener('change', () => guard(() => engine.setYoungs(10 ** $('E').value)));
  $('nu').addEventListener('change', () => guard(() => engine.setPoisson(Number($('nu').value))));
  const damping = () => guard(() => engine.setDamping(Number($('alpha').value), Number($('beta').value)));
  $('alpha').addEventListener('change', damping);
  $('beta').addEventListener('change', damping);
  $('dt').addEventListener('change', () => guard(() => engine.setDt($('dt').value / 1000)));
  $('spf').addEventListener('change', () => (stepsPerFrame = Number($('spf').value)));
  $('model').addEventListener('change', () => guard(() => engine.setModel($('model').value)));
  $('integrator').addEventListener('change', () => guard(() => engine.setIntegrator($('integrator').value)));
  $('play').addEventListener('click', () => setPaused(!paused));
  $('step').addEventListener('click', () => {
    setPaused(true);
    guard(() => engine.step(1));
  });
  $('reset').addEventListener('click', () => guard(() => engine.reset()));
  $('scene').addEventListener('change', () => loadScene($('scene').value).catch((e) => showMessage(e.message)));
}

// ---- mouse: orbit, pick, grab ----

function mouseRay(e) {
  const r = canvas.getBoundingClientRect();
  return camera.ray(e.clientX - r.left, e.clientY - r.top, r.width, r.height);
}

// The current position of a picked point (it moves with the body).
function pickedPoint(hit) {
  const p = engine.positions();
  const t = 3 * (triOffsets[hit.body] + hit.triangle);
  const out = [0, 0, 0];
  for (let k = 0; k < 3; k++) {
    const v = triangles[t + k];
    for (let c = 0; c < 3; c++) out[c] += hit.bary[k] * p[3 * v + c];
  }
  return out;
}

function wireMouse() {
  canvas.addEventListener('contextmenu', (e) => e.preventDefault());
  canvas.addEventListener('mousedown', (e) => {
    const ray = mouseRay(e);
    const hit = e.button === 0 ? engine.pick(ray.origin, ray.dir) : null;
    if (!hit) {
      drag = { kind: 'orbit', x: e.clientX, y: e.clientY };
      return;
    }
    lastPick = hit;
    const code = engine.grabStart(hit, GRAB_STIFFNESS, GRAB_DAMPING);
    lastGrab = { code, message: code < 0 ? engine.message() : '' };
    if (code < 0) {
      const where = `body ${hit.body}, triangle ${hit.triangle}, at (${hit.point.map((v) => v.toFixed(3)).join(', ')})`;
      showMessage(code === ERR_NOT_AVAILABLE ? `Picked ${where}. ${lastGrab.message}` : `Grab: ${lastGrab.message}`);
      drag = null;
      return;
    }
    // The target moves on the plane through the picked point that faces the camera.
    drag = { kind: 'grab', id: code, hit, point: hit.point, normal: camera.basis().forward, target: hit.point };
  });
  window.addEventListener('mousemove', (e) => {
    if (!drag) return;
    if (drag.kind === 'orbit') {
      camera.yaw -= (e.clientX - drag.x) * 0.01;
      camera.pitch = Math.max(-1.5, Math.min(1.5, camera.pitch + (e.clientY - drag.y) * 0.01));
      drag.x = e.clientX;
      drag.y = e.clientY;
      return;
    }
    const ray = mouseRay(e);
    const denom = dot(ray.dir, drag.normal);
    if (Math.abs(denom) < 1e-9) return;
    const t = dot(sub(drag.point, ray.origin), drag.normal) / denom;
    drag.target = add(ray.origin, scale(ray.dir, t));
    const code = engine.grabMove(drag.id, drag.target);
    if (code < 0) showMessage(`Grab: ${engine.message()}`);
  });
  window.addEventListener('mouseup', () => {
    if (drag && drag.kind === 'grab') {
      const code = engine.grabRelease(drag.id);
      if (code < 0) showMessage(`Grab: ${engine.message()}`);
    }
    drag = null;
  });
  canvas.addEventListener('wheel', (e) => {
    e.preventDefault();
    camera.distance *= Math.exp(e.deltaY * 0.001);
  }, { passive: false });
}

// ---- the loop ----

function statsText(s) {
  const fmt = (v, d = 3) => (v === null || v === undefined ? '–' : Number(v).toPrecision(d));
  const rtf = msPerStep > 0 ? (s.dt * 1000) / msPerStep : 0;
  const lines = [
    `${s.scene}  t = ${s.time.toFixed(3)} s  steps ${s.steps}${paused ? '  (paused)' : ''}`,
    `${s.integrator}, ${s.model}, dt = ${(s.dt * 1000).toFixed(1)} ms`,
    `E = ${fmt(s.youngs)} Pa  ν = ${fmt(s.poisson, 2)}  α = ${fmt(s.damping[0], 2)}  β = ${fmt(s.damping[1], 2)}`,
    `${msPerStep.toFixed(2)} ms/step  (${msPerStep > 0 ? (1000 / msPerStep).toFixed(0) : '–'} steps/s, real-time × ${rtf.toFixed(2)})`,
  ];
  for (const b of s.bodies)
    lines.push(`${b.name}: ${b.tets} tets  KE ${fmt(b.kinetic_energy)} J  CG ${b.solver_iterations}  Newton ${b.newton_iterations}`);
  if (s.failure) lines.push(`stopped: ${s.failure}`);
  return lines.join('\n');
}

function frame() {
  if (engine && triangles) {
    const t0 = performance.now();
    let n = 0;
    try {
      n = engine.frame(stepsPerFrame);
    } catch (e) {
      setPaused(true);
      showMessage(e.message, 15);
    }
    if (n > 0) {
      const ms = (performance.now() - t0) / n;
      msPerStep = msPerStep === 0 ? ms : 0.9 * msPerStep + 0.1 * ms;
    }
    const line = drag && drag.kind === 'grab' ? [...pickedPoint(drag.hit), ...drag.target] : null;
    renderer.draw(camera, engine.positions(), line);
    $('stats').textContent = statsText(engine.stats());
  }
  requestAnimationFrame(frame);
}

// ---- for tests: window.supple ----

function testHook() {
  return {
    ready: false,
    get engine() { return engine; },
    stats: () => engine.stats(),
    positions: () => Array.from(engine.positions()),
    setPaused,
    step: (n) => engine.step(n),
    loadScene,
    get lastPick() { return lastPick; },
    get lastGrab() { return lastGrab; },
    get message() { return $('message').textContent; },
    // Times n steps taken back to back (no drawing in between): wall ms and steps per second.
    measure(n) {
      const t0 = performance.now();
      engine.step(n);
      const ms = performance.now() - t0;
      return { steps: n, ms, stepsPerSecond: (1000 * n) / ms };
    },
    // The CSS pixel (relative to the page) where the world point p is drawn.
    screenOf(p) {
      const r = canvas.getBoundingClientRect();
      const { forward, right, up } = camera.basis();
      const d = sub(p, camera.eye());
      const z = dot(d, forward);
      const t = Math.tan(camera.fov / 2);
      const x = dot(d, right) / (z * t * (r.width / r.height));
      const y = dot(d, up) / (z * t);
      return [r.left + ((x + 1) / 2) * r.width, r.top + ((1 - y) / 2) * r.height];
    },
  };
}

async function main() {
  window.supple = testHook();
  renderer = new Renderer(canvas);
  engine = await Engine.load('pkg/supple_web.wasm');
  for (const name of Object.keys(SCENES)) $('scene').add(new Option(name.replace('.toml', ''), name));
  const wanted = new URLSearchParams(location.search).get('scene');
  const name = SCENES[wanted] ? wanted : 'bar.toml';
  $('scene').value = name;
  wireControls();
  wireMouse();
  await loadScene(name);
  window.supple.ready = true;
  requestAnimationFrame(frame);
}

main().catch((e) => {
  $('stats').textContent = `failed: ${e.message}`;
  throw e;
});

// The page's main thread: draws (three.js, view3d.js) and handles input. The engine runs in a
// Web Worker (worker.js, through client.js): every animation frame asks it for one frame of
// steps paced to the wall clock and draws the positions it sends back (a transferred copy).
// Files come in through the Open button, drag-and-drop (files.js) or `supple view` (the
// `?view` manifest). `window.supple` exposes the state for tests.

import { EngineClient } from './client.js';
import { View } from './view3d.js';
import { droppedEntries, readDropped, readEntries, sceneFromFiles } from './files.js';
import { RealTime, ColorRange, factorText } from './pacing.js';

// Grab spring (N/m, N·s/m), the least handed to the engine's grab (see grab.rs; the worker
// stiffens it for heavy bodies).
const GRAB_STIFFNESS = 2000;
const GRAB_DAMPING = 20;

const $ = (id) => document.getElementById(id);
const canvas = $('view');
const client = new EngineClient();
let view = null;
let scene = null; // { name, triangles, triOffsets } of the loaded scene
let latest = null; // the last snapshot from the worker: { positions, stats, obstacles, msPerStep }
let fresh = false; // latest not drawn yet
let paused = false;
let stepsPerFrame = 50; // the cap of the worker's paced steps per frame
const realTime = new RealTime();
const colorRange = new ColorRange();
let shownTime = 0; // simulated time of the frame drawn last
let colorBy = 0;
let frameInFlight = false;
let framesDrawn = 0; // frames drawn with new positions (for the frame rate)
let animationFrames = 0; // requestAnimationFrame callbacks
let drawMs = 0; // wall ms spent updating and rendering the view, summed
let drawing = true; // off while the worker is timed (SwiftShader draws on the same CPU)
let messageTimer = 0;
let drag = null; // { point, normal, target, hit } while the mouse holds a grab
let lastPick = null;
let lastGrab = null; // { code, message } of the last grab

function showMessage(text, seconds = 6) {
  const m = $('message');
  m.textContent = text;
  m.style.display = 'block';
  clearTimeout(messageTimer);
  messageTimer = setTimeout(() => (m.style.display = 'none'), seconds * 1000);
}

// Sends a command; a refusal is shown on the page (and resolves to undefined).
function send(cmd, ...args) {
  return client.call(cmd, ...args).catch((e) => showMessage(e.message));
}

// A loaded scene (the worker's answer to load / loadText): geometry, controls, text panel.
function loaded(r) {
  scene = { name: r.name, triangles: r.triangles, triOffsets: r.triOffsets };
  latest = r;
  fresh = false;
  drag = null;
  realTime.clear();
  colorRange.clear();
  view.setScene(r.positions, r.triangles, r.obstacles);
  $('scene-text').value = r.text;
  $('scene-name').textContent = r.name;
  syncControls(r.stats, r.text);
  showFailure(r.stats);
}

async function loadScene(name) {
  const r = await client.call('load', name, paused);
  $('scene').value = name;
  // A shareable address for the bundled scene.
  const url = new URL(location.href);
  url.searchParams.delete('view');
  url.searchParams.set('scene', name);
  history.replaceState(null, '', url);
  loaded(r);
}

// Scene text with files ([path, Uint8Array]; null: the current scene's).
async function loadText(text, name, files = null, start = null) {
  loaded(await client.call('loadText', text, name, files, paused, start));
  if (![...$('scene').options].some((o) => o.value === name)) $('scene').add(new Option(name.replace(/\.toml$/, ''), name));
  $('scene').value = name;
}

// Files from the Open button or a drop: a scene and its meshes, or a bare mesh file (its
// default scene: dropped on the ground, made by the engine).
async function openFiles(files) {
  const found = sceneFromFiles(files);
  if (found.error) throw new Error(found.error);
  const text = found.text ?? await client.call('defaultScene', found.mesh, found.files);
  await loadText(text, found.name, found.files);
}

// `supple view`: the scene (or mesh) and its files from the server's manifest.
async function loadPreload() {
  const r = await fetch('view/manifest.json');
  if (!r.ok) throw new Error(`view/manifest.json: HTTP ${r.status}`);
  const m = await r.json();
  const files = await client.call('fetchFiles', m.files);
  const text = m.text ?? await client.call('defaultScene', m.mesh, files);
  const name = m.scene ?? m.mesh.replace(/\.[^.]*$/, '.toml');
  // A script's world (`supple view --state`, `supple.view(world)`): its state, not the start.
  let start = null;
  if (m.state) {
    const s = await fetch(m.state);
    if (!s.ok) throw new Error(`${m.state}: HTTP ${s.status}`);
    start = await s.text();
  }
  await loadText(text, name, files, start);
}

// A failed or invalid world says why, until a setting or a reset starts it again.
function showFailure(s) {
  const box = $('failure');
  const why = s.failure ? `Stopped: ${s.failure}` : s.invalid ? `Invalid state: ${s.invalid}` : '';
  box.style.display = why ? 'block' : 'none';
  if (why) box.textContent = `${why}. Change any setting or press Reset to start again.`;
}

// The controls show the scene's values (read back from the engine's statistics).
function syncControls(s, text) {
  $('E').value = Math.log10(s.youngs);
  $('nu').value = s.poisson;
  $('alpha').value = s.damping[0];
  $('beta').value = s.damping[1];
  $('dt').value = s.dt * 1000;
  if (s.model) $('model').value = s.model;
  $('spf').value = stepsPerFrame;
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
  $('play').textContent = p ? 'Play' : 'Pause';
  return client.call('setPaused', p);
}

function wireControls() {
  for (const id of ['E', 'nu', 'alpha', 'beta', 'dt', 'spf']) $(id).addEventListener('input', labels);
  $('E').addEventListener('change', () => send('setYoungs', 10 ** $('E').value));
  $('nu').addEventListener('change', () => send('setPoisson', Number($('nu').value)));
  const damping = () => send('setDamping', Number($('alpha').value), Number($('beta').value));
  $('alpha').addEventListener('change', damping);
  $('beta').addEventListener('change', damping);
  $('dt').addEventListener('change', () => send('setDt', $('dt').value / 1000));
  $('spf').addEventListener('change', () => (stepsPerFrame = Number($('spf').value)));
  $('model').addEventListener('change', () => send('setModel', $('model').value));
  $('integrator').addEventListener('change', () => send('setIntegrator', $('integrator').value));
  $('play').addEventListener('click', () => setPaused(!paused));
  $('step').addEventListener('click', () => {
    setPaused(true);
    send('step', 1);
  });
  $('reset').addEventListener('click', () => {
    colorRange.clear();
    send('reset');
  });
  $('scene').addEventListener('change', () => {
    const name = $('scene').value;
    const p = bundled.includes(name) ? loadScene(name) : loadText($('scene-text').value, name);
    p.catch((e) => showMessage(e.message));
  });
  $('color').addEventListener('change', async () => {
    colorBy = Number($('color').value);
    colorRange.clear();
    const r = await client.call('setColorBy', colorBy);
    latest = { ...latest, ...r };
    fresh = true;
  });
  $('run-text').addEventListener('click', () =>
    loadText($('scene-text').value, $('scene-name').textContent).catch((e) => showMessage(e.message, 15)));
  $('open').addEventListener('click', () => $('files').click());
  $('files').addEventListener('change', async () => {
    const files = await readDropped($('files').files);
    $('files').value = '';
    openFiles(files).catch((e) => showMessage(e.message, 15));
  });
  $('toggle').addEventListener('click', () => document.body.classList.toggle('collapsed'));
  window.addEventListener('dragover', (e) => e.preventDefault());
  window.addEventListener('drop', async (e) => {
    e.preventDefault();
    // A dropped folder (a scene with its meshes/ beside it) is read with its paths.
    const entries = droppedEntries(e.dataTransfer.items);
    const files = entries ? await readEntries(entries) : await readDropped(e.dataTransfer.files);
    openFiles(files).catch((err) => showMessage(err.message, 15));
  });
}

let bundled = [];

// ---- mouse: a press on a body grabs it (OrbitControls orbits otherwise) ----

// The current position of a picked point (it moves with the body).
function pickedPoint(hit) {
  const p = latest.positions;
  const t = 3 * (scene.triOffsets[hit.body] + hit.triangle);
  const out = [0, 0, 0];
  for (let k = 0; k < 3; k++) {
    const v = scene.triangles[t + k];
    for (let c = 0; c < 3; c++) out[c] += hit.bary[k] * p[3 * v + c];
  }
  return out;
}

const dot = (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];

function wireMouse() {
  // Capture on the window: this runs before OrbitControls' own listener on the canvas, and
  // turns it off for a press that lands on a body.
  window.addEventListener('pointerdown', (e) => {
    if (e.target !== canvas || e.button !== 0 || !scene) return;
    const point = view.hitBody(e.clientX, e.clientY);
    if (!point) return;
    view.controls.enabled = false;
    const ray = view.ray(e.clientX, e.clientY);
    // The target moves on the plane through the picked point that faces the camera.
    const d = { point, normal: view.forward(), target: point, hit: null };
    drag = d;
    client.call('mouseGrab', ray.origin, ray.dir, GRAB_STIFFNESS, GRAB_DAMPING).then((r) => {
      lastPick = r.hit;
      lastGrab = { code: r.code, message: r.message };
      if (r.code < 0) showMessage(`Grab: ${r.message}`);
      else d.hit = r.hit;
    }, (err) => showMessage(err.message));
  }, true);
  window.addEventListener('pointermove', (e) => {
    if (!drag) return;
    const ray = view.ray(e.clientX, e.clientY);
    const denom = dot(ray.dir, drag.normal);
    if (Math.abs(denom) < 1e-9) return;
    const o = ray.origin;
    const t = dot([drag.point[0] - o[0], drag.point[1] - o[1], drag.point[2] - o[2]], drag.normal) / denom;
    drag.target = [o[0] + t * ray.dir[0], o[1] + t * ray.dir[1], o[2] + t * ray.dir[2]];
    send('mouseMove', drag.target);
  });
  window.addEventListener('pointerup', () => {
    if (!drag) return;
    drag = null;
    view.controls.enabled = true;
    send('mouseRelease');
  });
}

// ---- the loop ----

const FIELD_UNITS = ['m', 'Pa', ''];

function statsText(s, msPerStep, taken) {
  const fmt = (v, d = 3) => (v === null || v === undefined ? '–' : Number(v).toPrecision(d));
  // What the drawn frames show: simulated over wall time (pacing.js), never the worker's
  // capacity.
  const f = realTime.factor();
  const pace = paused || s.paused ? 'paused'
    : s.failure ? 'stopped'
      : f === null ? 'measuring…'
        : f >= 0.95 ? `real time: × ${factorText(f)}` : `slower than real time: × ${factorText(f)}`;
  const lines = [
    `${s.scene}  t = ${s.time.toFixed(3)} s  steps ${s.steps}  ${pace}`,
    `${s.integrator}, ${s.model}, dt = ${(s.dt * 1000).toFixed(1)} ms`,
    `E = ${fmt(s.youngs)} Pa  ν = ${fmt(s.poisson, 2)}  α = ${fmt(s.damping[0], 2)}  β = ${fmt(s.damping[1], 2)}`,
    `${msPerStep.toFixed(2)} ms/step in the worker, ${taken} step(s) this frame`,
  ];
  for (const b of s.bodies)
    lines.push(`${b.name}: ${b.tets} tets  KE ${fmt(b.kinetic_energy)} J  CG ${b.solver_iterations}  Newton ${b.newton_iterations}`);
  for (const g of s.grabs || [])
    lines.push(`grab on ${s.bodies[g.body].name}: |F| = ${Math.hypot(...g.force).toFixed(1)} N`);
  return lines.join('\n');
}

// The colour bar: the range in force (only grows while a scene runs: a stable bar).
function colorBar(r) {
  const [lo, hi] = colorRange.range;
  const unit = FIELD_UNITS[colorBy];
  const num = (v) => (Math.abs(v) >= 1e4 || (Math.abs(v) < 1e-2 && v !== 0) ? v.toExponential(1) : Number(v.toPrecision(3)));
  $('bar-lo').textContent = `${num(lo)} ${unit}`;
  $('bar-hi').textContent = r.field ? `${num(hi)} ${unit}` : 'no stress for this model';
}

function requestFrame() {
  frameInFlight = true;
  client.call('frame', stepsPerFrame).then((r) => {
    if (scene && r.positions.length === latest.positions.length) {
      latest = r;
      fresh = true;
    }
  }, (e) => showMessage(e.message, 15)).finally(() => (frameInFlight = false));
}

function frame() {
  animationFrames++;
  if (scene && drawing) {
    const t0 = performance.now();
    // One frame of steps at a time: the next is asked for when the last has come back.
    if (!frameInFlight) requestFrame();
    if (fresh) {
      const s = latest.stats;
      realTime.add(t0, s.time, !(paused || s.paused || s.failure));
      shownTime = s.time;
      if (latest.field && latest.colorBy === colorBy) colorRange.add(latest.field, colorBy);
      view.update(latest.positions, latest.field, colorRange.range);
      view.setObstacles(latest.obstacles);
      $('stats').textContent = statsText(s, latest.msPerStep, latest.taken ?? 0);
      colorBar(latest);
      showFailure(s);
      fresh = false;
      framesDrawn++;
    }
    view.setSpring(drag ? (drag.hit ? pickedPoint(drag.hit) : drag.point) : null, drag ? drag.target : null);
    view.render();
    drawMs += performance.now() - t0;
  }
  requestAnimationFrame(frame);
}

// ---- for tests: window.supple ----

function testHook() {
  return {
    ready: false,
    call: (cmd, ...args) => client.call(cmd, ...args),
    stats: () => client.call('stats'),
    positions: async () => Array.from(await client.call('positions')),
    positions64: async () => Array.from(await client.call('positions64')),
    setPaused,
    step: (n) => client.call('step', n),
    loadScene,
    loadText,
    openFiles,
    // The real-time factor the overlay shows (null while measuring).
    get realTime() { return realTime.factor(); },
    get overlay() { return $('stats').textContent; },
    // The simulated time of the frame drawn last.
    get shownTime() { return shownTime; },
    get failureText() { return $('failure').style.display === 'none' ? '' : $('failure').textContent; },
    get colorRange() { return colorRange.range; },
    // Times n steps in the worker with the page's drawing stopped meanwhile.
    async measure(n) {
      drawing = false;
      try {
        return await client.call('measure', n);
      } finally {
        drawing = true;
      }
    },
    get lastPick() { return lastPick; },
    get lastGrab() { return lastGrab; },
    get message() { return $('message').textContent; },
    // The grab spring drawn now: [from, to] or null.
    get spring() { return drag && view.spring.visible ? [drag.hit ? pickedPoint(drag.hit) : drag.point, drag.target] : null; },
    get framesDrawn() { return framesDrawn; },
    // Frames drawn with new positions per second over `ms` of running, and steps taken.
    async fps(ms) {
      const s0 = (await client.call('stats')).steps;
      const [f0, a0, d0] = [framesDrawn, animationFrames, drawMs];
      const t0 = performance.now();
      await new Promise((r) => setTimeout(r, ms));
      const frames = framesDrawn - f0;
      const callbacks = animationFrames - a0;
      const seconds = (performance.now() - t0) / 1000;
      const steps = (await client.call('stats')).steps - s0;
      return {
        frames, steps, seconds, fps: frames / seconds, stepsPerFrame,
        animationFramesPerSecond: callbacks / seconds, drawMsPerFrame: (drawMs - d0) / callbacks,
      };
    },
    // The client pixel where the world point p is drawn.
    screenOf: (p) => view.screenOf(p),
  };
}

async function main() {
  window.supple = testHook();
  view = new View(canvas);
  bundled = await client.call('init', new URL('pkg/supple_web.wasm', location.href).href);
  for (const name of bundled) $('scene').add(new Option(name.replace('.toml', ''), name));
  const params = new URLSearchParams(location.search);
  wireControls();
  wireMouse();
  if (params.has('view')) {
    await loadPreload();
  } else {
    const wanted = params.get('scene');
    await loadScene(bundled.includes(wanted) ? wanted : 'bar.toml');
  }
  window.supple.ready = true;
  requestAnimationFrame(frame);
}

main().catch((e) => {
  $('stats').textContent = `failed: ${e.message}`;
  throw e;
});

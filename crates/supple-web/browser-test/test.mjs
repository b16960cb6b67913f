// The page in a real browser (Debian's chromium, headless, WebGL2 through SwiftShader), driven
// by playwright-core: `node test.mjs URL OUT_DIR` (web.sh test starts the server, makes the
// native reference runs in OUT_DIR and passes both). Checks: the wasm loads in the worker with
// no console error; the canvas is drawn; the bar steps on its own and sags; a mouse drag on
// the bar's tip grabs it, the grab spring is drawn and pulls (non-zero force) the tip toward
// the drag; after the release the tip swings back; a stiffer E changes the motion; switching
// the scene takes effect and obstacles are drawn; the page's positions after N steps equal a
// native `supple run` of the same scene; then the viewer's checks of viewer.mjs (`supple
// view`, drag-and-drop, real-time factor, recovery, phone width). Writes a screenshot per step, results.json (speed,
// not asserted) and the page's positions to OUT_DIR.

import { chromium } from 'playwright-core';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { viewerChecks } from './viewer.mjs';

const [url, out] = process.argv.slice(2);
if (!url || !out) {
  console.error('usage: node test.mjs URL OUT_DIR');
  process.exit(2);
}
const watchdog = setTimeout(() => {
  console.error('browser test: timed out after 360 s');
  process.exit(3);
}, 360_000);

// Thresholds (metres) of the grab checks: the mouse pulls the tip's target 0.3 m up.
const PULL = 0.3;
const MIN_LIFT = 0.05; // the tip rises at least this much toward the drag
const MIN_SWING_BACK = 0.03; // after the release it comes back toward where it was by this much
// The same-positions check: largest allowed |page − native| (m).
const SAME_TOLERANCE = 1e-9;

const results = {};
let failures = 0;
function check(name, ok, detail = '') {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${detail ? `: ${detail}` : ''}`);
  if (!ok) failures++;
}
let shot = 0;
const screenshot = (page, name) => page.screenshot({ path: join(out, `${String(++shot).padStart(2, '0')}-${name}.png`) });

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: [
    '--no-sandbox', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync',
    '--enable-unsafe-swiftshader', '--use-angle=swiftshader',
  ],
});
try {
  const page = await browser.newPage({ viewport: { width: 1100, height: 700 } });
  page.setDefaultTimeout(60_000);
  const errors = [];
  const watchErrors = (p) => {
    p.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    p.on('pageerror', (e) => errors.push(String(e)));
    p.on('worker', (w) => w.on('console', (m) => { if (m.type() === 'error') errors.push(`worker: ${m.text()}`); }));
  };
  watchErrors(page);

  // Runs until the engine has taken n more steps (the page steps once per animation frame).
  const runSteps = (n) => page.evaluate(async (n) => {
    const s = window.supple;
    const s0 = (await s.stats()).steps;
    await s.setPaused(false);
    while ((await s.stats()).steps < s0 + n) await new Promise((r) => setTimeout(r, 20));
  }, n);
  // The bar's tip: the mean of the vertices at its free end (largest x), from the worker.
  const tip = () => page.evaluate(async () => {
    const p = await window.supple.positions();
    let xmax = -Infinity;
    for (let i = 0; i < p.length; i += 3) xmax = Math.max(xmax, p[i]);
    const m = [0, 0, 0];
    let n = 0;
    for (let i = 0; i < p.length; i += 3)
      if (p[i] > xmax - 0.05) { for (let c = 0; c < 3; c++) m[c] += p[i + c]; n++; }
    return m.map((v) => v / n);
  });
  const dist = (a, b) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
  const fmt = (p) => `(${p.map((v) => v.toFixed(3)).join(', ')})`;

  // 1. The wasm loads (in the worker) and the bar is there.
  await page.goto(`${url}index.html?scene=bar.toml`);
  await page.waitForFunction(() => window.supple && window.supple.ready);
  const first = await page.evaluate(() => window.supple.stats());
  check('the wasm loads the bar in the worker', first.bodies.length === 1 && first.bodies[0].tets === 450,
    `${first.bodies[0]?.tets} tets, ${first.integrator}`);

  // 2. It steps on its own (animation frames) and the bar sags: the tip goes down.
  const tip0 = await tip();
  await page.evaluate(() => new Promise((r) => {
    const poll = async () => ((await window.supple.stats()).steps >= 20 ? r() : setTimeout(poll, 20));
    poll();
  }));
  const tip1 = await tip();
  const s1 = await page.evaluate(() => window.supple.stats());
  check('the scene steps and the bar sags', tip1[1] < tip0[1] - 1e-3 && s1.time > 0,
    `tip y ${tip0[1].toFixed(4)} → ${tip1[1].toFixed(4)} m after ${s1.steps} steps, t = ${s1.time.toFixed(3)} s`);

  // 3. The canvas shows something: pixels that are not the background (#1f2126).
  const drawnFraction = () => page.evaluate(() => {
    const c = document.getElementById('view');
    const small = document.createElement('canvas');
    small.width = 200;
    small.height = 150;
    const g = small.getContext('2d');
    g.drawImage(c, 0, 0, 200, 150);
    const d = g.getImageData(0, 0, 200, 150).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4)
      if (Math.abs(d[i] - 31) + Math.abs(d[i + 1] - 33) + Math.abs(d[i + 2] - 38) > 30) n++;
    return n / (200 * 150);
  });
  const drawn = await drawnFraction();
  check('the canvas is drawn', drawn > 0.01, `${(100 * drawn).toFixed(1)} % of pixels not background`);
  await screenshot(page, 'bar');

  // 4. A mouse drag on the tip grabs it, the spring is drawn and pulls the tip up; after the
  // release the tip swings back. The bar (undamped in its scene: it would still swing from
  // its fall) first settles with mass-proportional damping α = 4/s set with the slider.
  await page.evaluate(async () => {
    await window.supple.setPaused(true);
    await window.supple.loadScene('bar.toml');
    const alpha = document.getElementById('alpha');
    alpha.value = 4;
    alpha.dispatchEvent(new Event('input'));
    alpha.dispatchEvent(new Event('change'));
    await window.supple.step(250);
  });
  const before = await tip();
  // A point on the top face near the free end, and where the mouse takes it (PULL up).
  const grabAt = [before[0] - 0.03, before[1] + 0.15, before[2]];
  const [from, to] = await page.evaluate(([p, pull]) =>
    [window.supple.screenOf(p), window.supple.screenOf([p[0], p[1] + pull, p[2]])], [grabAt, PULL]);
  await page.waitForTimeout(100); // a frame with the settled positions drawn
  await page.mouse.move(from[0], from[1]);
  await page.mouse.down();
  await page.mouse.move(to[0], to[1], { steps: 8 });
  await runSteps(60);
  const held = await page.evaluate(async () => ({
    pick: window.supple.lastPick, grab: window.supple.lastGrab, spring: window.supple.spring,
    grabs: (await window.supple.stats()).grabs,
  }));
  const heldTip = await tip();
  await screenshot(page, 'drag');
  const bary = held.pick ? held.pick.bary.reduce((a, b) => a + b, 0) : NaN;
  check('a mouse press on the tip picks the bar', held.pick !== null && held.pick.body === 0 && Math.abs(bary - 1) < 1e-9,
    held.pick ? `triangle ${held.pick.triangle}, point ${fmt(held.pick.point)}` : 'no hit');
  check('the mouse press grabs it', held.grab !== null && held.grab.code >= 0, JSON.stringify(held.grab));
  const force = held.grabs.length === 1 ? Math.hypot(...held.grabs[0].force) : 0;
  check('the grab spring is drawn and pulls', held.spring !== null && force > 1,
    `line ${held.spring ? `${fmt(held.spring[0])} → ${fmt(held.spring[1])}` : 'not drawn'}, |F| = ${force.toFixed(1)} N`);
  check('the tip moves toward the drag', heldTip[1] > before[1] + MIN_LIFT,
    `tip ${fmt(before)} → ${fmt(heldTip)} (rose ${(heldTip[1] - before[1]).toFixed(3)} m, needs > ${MIN_LIFT})`);
  await page.mouse.up();
  await runSteps(60);
  const after = await tip();
  const released = await page.evaluate(async () => ({ grabs: (await window.supple.stats()).grabs, spring: window.supple.spring }));
  await screenshot(page, 'release');
  const back = dist(heldTip, before) - dist(after, before);
  check('after the release the tip swings back', released.grabs.length === 0 && released.spring === null && back > MIN_SWING_BACK,
    `distance from the pre-grab tip ${dist(heldTip, before).toFixed(3)} → ${dist(after, before).toFixed(3)} m (came back ${back.toFixed(3)}, needs > ${MIN_SWING_BACK})`);

  // 5. A stiffer bar sags less (E set through the slider, as a user does).
  const sag = async (log10E) => page.evaluate(async (log10E) => {
    const s = window.supple;
    await s.setPaused(true);
    await s.loadScene('bar.toml');
    if (log10E !== null) {
      const e = document.getElementById('E');
      e.value = log10E;
      e.dispatchEvent(new Event('input'));
      e.dispatchEvent(new Event('change'));
    }
    await s.step(30);
    const st = await s.stats();
    return { minY: st.bodies[0].min[1], youngs: st.youngs };
  }, log10E);
  const soft = await sag(null);
  const stiff = await sag(7);
  await page.waitForTimeout(200); // a frame with the stiff bar's positions
  await screenshot(page, 'stiff');
  check('changing E changes the motion', Math.abs(stiff.youngs - 1e7) < 1 && stiff.minY > soft.minY + 1e-3,
    `lowest point after 30 steps: E = ${soft.youngs} Pa → ${soft.minY.toFixed(4)} m, E = ${stiff.youngs} Pa → ${stiff.minY.toFixed(4)} m`);

  // 6. The same positions as a native run: the scene stepped N times in the page (wasm, in
  // the worker) and by `supple run` (web.sh test wrote its last frame as JSON).
  for (const [scene, steps] of [['bar', 40], ['tube_drop', 30]]) {
    const native = JSON.parse(readFileSync(join(out, `native-${scene}.json`), 'utf8'));
    const mine = await page.evaluate(async ([scene, steps]) => {
      await window.supple.setPaused(true);
      await window.supple.loadScene(`${scene}.toml`);
      await window.supple.step(steps);
      return { positions: await window.supple.positions64(), stats: await window.supple.stats() };
    }, [scene, steps]);
    await page.waitForTimeout(200);
    await screenshot(page, `${scene}-${steps}-steps`);
    writeFileSync(join(out, `page-${scene}.json`), JSON.stringify({ steps, time: mine.stats.time, positions: mine.positions }));
    const n = mine.positions.length;
    let maxDiff = n === native.positions.length ? 0 : Infinity;
    let equal = 0;
    for (let i = 0; i < Math.min(n, native.positions.length); i++) {
      const d = Math.abs(mine.positions[i] - native.positions[i]);
      maxDiff = Math.max(maxDiff, d);
      if (Object.is(mine.positions[i], native.positions[i])) equal++;
    }
    results[`same_${scene}`] = { steps, values: n, bitwiseEqual: equal, maxDiff };
    check(`${scene}: the page's positions after ${steps} steps equal supple run's`, maxDiff <= SAME_TOLERANCE && mine.stats.steps === steps,
      `${n / 3} vertices, max |page − native| = ${maxDiff.toExponential(2)} m, ${equal}/${n} values bitwise equal (page t = ${mine.stats.time}, native t = ${native.time})`);
  }

  // 7. Another scene: the tube on a sphere and a box (obstacles drawn); switching works.
  await page.evaluate(async () => {
    await window.supple.loadScene('tube_obstacles.toml');
    await window.supple.setPaused(false);
  });
  await runSteps(60);
  const obs = await page.evaluate(async () => ({
    obstacles: await window.supple.call('obstacles'),
    stats: await window.supple.stats(),
  }));
  const kinds = obs.obstacles.map((o) => o.shape.kind).sort().join(',');
  check('switching to the obstacle scene takes effect', obs.stats.bodies[0].tets === 1034 && kinds === 'box,plane,sphere',
    `${obs.stats.bodies[0].tets} tets, obstacles: ${kinds}`);
  await screenshot(page, 'tube_obstacles');

  // 8. Speed (reported, not asserted): wasm ms/step in the worker for the bar and the tube,
  // and frames per second of the bar with one step per frame (drawn with new positions).
  for (const [scene, n] of [['bar.toml', 300], ['tube_drop.toml', 150], ['bunny_drop.toml', 40]]) {
    results[scene] = await page.evaluate(async ([scene, n]) => {
      await window.supple.setPaused(true);
      await window.supple.loadScene(scene);
      await window.supple.measure(5); // warm-up
      const m = await window.supple.measure(n);
      const st = await window.supple.stats();
      return { ...m, msPerStep: m.ms / n, tets: st.bodies[0].tets, integrator: st.integrator, model: st.model, dt: st.dt };
    }, [scene, n]);
    const r = results[scene];
    console.log(`     ${scene}: ${r.msPerStep.toFixed(2)} ms/step in wasm (${r.stepsPerSecond.toFixed(1)} steps/s, ${n} steps)`);
  }
  check('switching between the bar and the tube takes effect', results['tube_drop.toml'].tets === 1034 && results['bar.toml'].tets === 450,
    `bar ${results['bar.toml'].tets} tets, tube ${results['tube_drop.toml'].tets} tets`);
  results.fps = await page.evaluate(async () => {
    await window.supple.loadScene('bar.toml');
    await window.supple.setPaused(false);
    await new Promise((r) => setTimeout(r, 500));
    return window.supple.fps(3000);
  });
  const f = results.fps;
  console.log(`     bar, paced to the clock: ${f.fps.toFixed(1)} frames/s drawn with new positions (${f.frames} frames, ${f.steps} steps in ${f.seconds.toFixed(2)} s; ${f.animationFramesPerSecond.toFixed(1)} animation frames/s, ${f.drawMsPerFrame.toFixed(1)} ms drawing each)`);
  // The same at a quarter of the pixels: SwiftShader draws on the CPU, so the frame rate
  // follows the canvas size (EXPERIMENTS.md).
  await page.setViewportSize({ width: 600, height: 350 });
  await page.waitForTimeout(500);
  results.fpsSmall = await page.evaluate(() => window.supple.fps(3000));
  const g = results.fpsSmall;
  console.log(`     the same in a 600×350 viewport: ${g.fps.toFixed(1)} frames/s (${g.drawMsPerFrame.toFixed(1)} ms drawing each)`);
  await page.setViewportSize({ width: 1100, height: 700 });
  for (const scene of ['bar', 'tube_drop', 'bunny_drop']) {
    try {
      const b = JSON.parse(readFileSync(join(out, `native-bench-${scene}.json`), 'utf8'));
      results[`native_${scene}`] = b;
      const w = b.wall_ms_per_step;
      console.log(`     native ${scene} (supple bench, ${b.threads} thread, ${b.steps} steps): ${w.median.toFixed(2)} ms/step median, ${w.mean.toFixed(2)} mean`);
    } catch (e) {
      console.log(`     (no native bench for ${scene}: ${e.message})`);
    }
  }
  await screenshot(page, 'bar-running');

  await viewerChecks({ browser, page, check, screenshot, watchErrors, results });

  check('no console errors', errors.length === 0, errors.join(' | '));
  writeFileSync(join(out, 'results.json'), JSON.stringify({ results, browser: await browser.version() }, null, 2));
} finally {
  await browser.close();
  clearTimeout(watchdog);
}
if (failures > 0) {
  console.error(`browser test: ${failures} check(s) failed`);
  process.exit(1);
}
console.log('browser test: all checks passed');

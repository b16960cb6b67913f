// The page in a real browser (Debian's chromium, headless, WebGL2 through SwiftShader), driven
// by playwright-core: `node test.mjs URL OUT_DIR` (web.sh test starts the server and passes
// them). Checks: the wasm loads with no console error; the canvas is drawn; the scene steps
// (positions change, statistics advance); a mouse press on the bar picks and grabs it, and a
// grab whose target is raised lifts it; a stiffer E changes the motion.
// Writes screenshots and results.json (steps per second, not asserted) to OUT_DIR.

import { chromium } from 'playwright-core';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [url, out] = process.argv.slice(2);
if (!url || !out) {
  console.error('usage: node test.mjs URL OUT_DIR');
  process.exit(2);
}
const watchdog = setTimeout(() => {
  console.error('browser test: timed out after 240 s');
  process.exit(3);
}, 240_000);

const results = {};
let failures = 0;
function check(name, ok, detail = '') {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${detail ? `: ${detail}` : ''}`);
  if (!ok) failures++;
}

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
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));

  // 1. The wasm loads and the bar is there.
  await page.goto(`${url}index.html?scene=bar.toml`);
  await page.waitForFunction(() => window.supple && window.supple.ready);
  const first = await page.evaluate(() => window.supple.stats());
  check('the wasm loads the bar', first.bodies.length === 1 && first.bodies[0].tets === 450,
    `${first.bodies[0]?.tets} tets, ${first.integrator}`);

  // 2. It steps on its own (animation frames): positions change and statistics advance.
  const p0 = await page.evaluate(() => window.supple.positions());
  await page.waitForFunction(() => window.supple.stats().steps >= 20);
  const moved = await page.evaluate((p0) => {
    const p = window.supple.positions();
    return Math.max(...p.map((v, i) => Math.abs(v - p0[i])));
  }, p0);
  const s1 = await page.evaluate(() => window.supple.stats());
  check('the scene steps', moved > 1e-4 && s1.time > 0, `max displacement ${moved.toExponential(2)} m after ${s1.steps} steps, t = ${s1.time.toFixed(3)} s`);

  // 3. The canvas shows something: pixels that are not the background.
  const drawn = await page.evaluate(() => {
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
  check('the canvas is drawn', drawn > 0.01, `${(100 * drawn).toFixed(1)} % of pixels not background`);
  await page.screenshot({ path: join(out, 'bar.png') });

  // 4. A mouse press on the middle of the bar picks it.
  await page.evaluate(() => window.supple.setPaused(true));
  const target = await page.evaluate(() => {
    const b = window.supple.stats().bodies[0];
    const mid = [0, 1, 2].map((c) => 0.5 * (b.min[c] + b.max[c]));
    return window.supple.screenOf(mid);
  });
  await page.mouse.move(target[0], target[1]);
  await page.mouse.down();
  await page.mouse.move(target[0] + 40, target[1] - 30, { steps: 5 });
  await page.mouse.up();
  const pick = await page.evaluate(() => ({ pick: window.supple.lastPick, grab: window.supple.lastGrab, message: window.supple.message }));
  const bary = pick.pick ? pick.pick.bary.reduce((a, b) => a + b, 0) : NaN;
  check('a mouse press on the bar picks it', pick.pick !== null && pick.pick.body === 0 && Math.abs(bary - 1) < 1e-9,
    pick.pick ? `triangle ${pick.pick.triangle}, point ${pick.pick.point.map((v) => v.toFixed(3))}` : 'no hit');
  check('the mouse press grabs the bar', pick.grab && pick.grab.code >= 0, JSON.stringify(pick.grab));
  // The grab spring pulls: a point of the bar grabbed and its target raised 0.3 m rises.
  const lift = await page.evaluate(() => {
    const s = window.supple;
    const e = s.engine;
    const b = s.stats().bodies[0];
    const mid = [0, 1, 2].map((c) => 0.5 * (b.min[c] + b.max[c]));
    const hit = e.pick([mid[0], b.max[1] + 1, mid[2]], [0, -1, 0]);
    if (!hit) return { error: 'no hit from above' };
    const id = e.grabStart(hit, 5000, 50);
    if (id < 0) return { error: e.message() };
    const y0 = hit.point[1];
    e.grabMove(id, [hit.point[0], y0 + 0.3, hit.point[2]]);
    s.step(60);
    // The bar's top surface where it was grabbed, seen from above again.
    const again = e.pick([hit.point[0], y0 + 10, hit.point[2]], [0, -1, 0]);
    const released = e.grabRelease(id);
    return { y0, y1: again ? again.point[1] : null, released };
  });
  check('a grab raised 0.3 m lifts the bar where it holds it', !lift.error && lift.released === 0 &&
    lift.y1 !== null && lift.y1 > lift.y0 + 0.1, JSON.stringify(lift));
  await page.screenshot({ path: join(out, 'pick.png') });

  // 5. A stiffer bar sags less (E set through the slider, as a user does).
  const sag = async (log10E) => page.evaluate(async (log10E) => {
    const s = window.supple;
    await s.loadScene('bar.toml');
    s.setPaused(true);
    if (log10E !== null) {
      const e = document.getElementById('E');
      e.value = log10E;
      e.dispatchEvent(new Event('change'));
    }
    s.step(30);
    const st = s.stats();
    return { minY: st.bodies[0].min[1], youngs: st.youngs };
  }, log10E);
  const soft = await sag(null);
  const stiff = await sag(7);
  check('changing E changes the motion', Math.abs(stiff.youngs - 1e7) < 1 && stiff.minY > soft.minY + 1e-3,
    `lowest point after 30 steps: E = ${soft.youngs} Pa → ${soft.minY.toFixed(4)} m, E = ${stiff.youngs} Pa → ${stiff.minY.toFixed(4)} m`);

  // 6. Steps per second, measured in the page (reported, not asserted).
  for (const [scene, n] of [['bar.toml', 300], ['tube_drop.toml', 150]]) {
    results[scene] = await page.evaluate(async ([scene, n]) => {
      await window.supple.loadScene(scene);
      window.supple.setPaused(true);
      window.supple.measure(5); // warm-up
      const m = window.supple.measure(n);
      const st = window.supple.stats();
      return { ...m, tets: st.bodies[0].tets, integrator: st.integrator, model: st.model, dt: st.dt };
    }, [scene, n]);
    console.log(`     ${scene}: ${results[scene].stepsPerSecond.toFixed(1)} steps/s (${(results[scene].ms / n).toFixed(2)} ms/step, ${n} steps)`);
  }
  check('switching the scene takes effect', results['tube_drop.toml'].tets === 1034 && results['bar.toml'].tets === 450,
    `bar ${results['bar.toml'].tets} tets, tube ${results['tube_drop.toml'].tets} tets`);
  await page.evaluate(() => window.supple.setPaused(false));
  await page.waitForTimeout(500);
  await page.screenshot({ path: join(out, 'tube_drop.png') });

  check('no console errors', errors.length === 0, errors.join(' | '));
  writeFileSync(join(out, 'results.json'), JSON.stringify({ results, userAgent: await browser.version() }, null, 2));
} finally {
  await browser.close();
  clearTimeout(watchdog);
}
if (failures > 0) {
  console.error(`browser test: ${failures} check(s) failed`);
  process.exit(1);
}
console.log('browser test: all checks passed');

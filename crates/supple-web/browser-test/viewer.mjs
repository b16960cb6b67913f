// The viewer's checks (issue 42), run by test.mjs on the same browser: `supple view` on a Gmsh
// mesh serves a page that loads it, steps, and a mouse grab pulls the grabbed point toward the
// cursor; `supple view --state` starts from a handed-over state; a scene with its mesh files
// (or its folder) dropped on the page loads and runs; the overlay's
// real-time factor equals the simulated over the wall time the test measures (within 10 %),
// for a scene that keeps up with the clock and one that cannot (it then says "slower than
// real time"); colour by von Mises stress has a colour bar in pascals; after a forced divergence
// (loaded through the scene text panel) a slider gives a running world again; a 390 px wide
// viewport shows the body.

import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const RTF_TOLERANCE = 0.1; // relative
const GRAB_PULL = 0.3; // m, the cursor's lift above the grabbed point
const GRAB_APPROACH = 0.05; // m: the grabbed point ends at least this much nearer the cursor

// Starts `supple view ARGS --no-open`; resolves to { child, url } once it prints its address.
function startView(bin, args, cwd) {
  const child = spawn(bin, ['view', ...args, '--no-open'], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      const m = /^supple view: .* at (http\S+)/.exec(line);
      if (m) resolve({ child, url: m[1], stderr: () => stderr });
    });
    child.on('exit', (code) => reject(new Error(`supple view exited with ${code}: ${stderr}`)));
  });
}

// Waits until the page's engine has taken n more steps.
const stepsPassed = (page, n) => page.evaluate(async (n) => {
  const s0 = (await window.supple.stats()).steps;
  while ((await window.supple.stats()).steps < s0 + n) await new Promise((r) => setTimeout(r, 20));
}, n);

const dist = (a, b) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);

export async function viewerChecks({ browser, page, check, screenshot, watchErrors, results }) {
  const bin = process.env.SUPPLE_BIN;
  const root = process.env.SUPPLE_ROOT;
  if (!bin || !root) {
    check('SUPPLE_BIN and SUPPLE_ROOT are set (web.sh test sets them)', false);
    return;
  }

  // 1. `supple view` on a Gmsh mesh: loads, falls onto the ground, and a mouse grab pulls.
  const server = await startView(bin, ['scenes/meshes/cube.msh'], root);
  const vpage = await browser.newPage({ viewport: { width: 1100, height: 700 } });
  watchErrors(vpage);
  try {
    await vpage.goto(server.url);
    await vpage.waitForFunction(() => window.supple && window.supple.ready);
    const s0 = await vpage.evaluate(() => window.supple.stats());
    await stepsPassed(vpage, 80);
    const s1 = await vpage.evaluate(() => window.supple.stats());
    check('supple view serves a Gmsh mesh that loads and steps', s0.scene === 'cube' && s0.bodies[0].tets > 0 && s1.bodies[0].min[1] < s0.bodies[0].min[1] - 0.01,
      `${s0.bodies[0].tets} tets, lowest point ${s0.bodies[0].min[1].toFixed(3)} → ${s1.bodies[0].min[1].toFixed(3)} m after ${s1.steps} steps`);
    // Press on the middle of the top face and lift the cursor GRAB_PULL above it.
    const top = [0.5 * (s1.bodies[0].min[0] + s1.bodies[0].max[0]), s1.bodies[0].max[1], 0.5 * (s1.bodies[0].min[2] + s1.bodies[0].max[2])];
    const [from, to] = await vpage.evaluate(([p, pull]) =>
      [window.supple.screenOf(p), window.supple.screenOf([p[0], p[1] + pull, p[2]])], [top, GRAB_PULL]);
    await vpage.mouse.move(from[0], from[1]);
    await vpage.mouse.down();
    await vpage.mouse.move(to[0], to[1], { steps: 5 });
    await vpage.waitForFunction(() => window.supple.spring !== null && window.supple.lastGrab !== null);
    await stepsPassed(vpage, 50);
    const held = await vpage.evaluate(async () => ({
      pick: window.supple.lastPick, spring: window.supple.spring, grab: window.supple.lastGrab,
      grabs: (await window.supple.stats()).grabs,
    }));
    await screenshot(vpage, 'view-cube-grab');
    await vpage.mouse.up();
    // From where the point was picked (at the press) to the cursor's target, against where
    // the grabbed point is now.
    const d0 = dist(held.pick.point, held.spring[1]);
    const d1 = held.spring ? dist(held.spring[0], held.spring[1]) : Infinity;
    const force = held.grabs.length === 1 ? Math.hypot(...held.grabs[0].force) : 0;
    check('supple view: a mouse grab pulls the grabbed point toward the cursor', held.grab.code >= 0 && d1 < d0 - GRAB_APPROACH && force > 0,
      `grabbed point to cursor ${d0.toFixed(3)} → ${d1.toFixed(3)} m, |F| = ${force.toFixed(1)} N`);
  } finally {
    await vpage.close();
    server.child.kill('SIGINT');
  }
  const code = await new Promise((r) => (server.child.exitCode !== null ? r(server.child.exitCode) : server.child.on('exit', r)));
  check('supple view stops on Ctrl-C with status 0', code === 0, `status ${code}; ${server.stderr().trim()}`);

  // 1b. `supple view SCENE --state FILE` (what `supple.view(world)` runs for a script's world):
  // the page starts from the state, not the scene's start, and Reset returns to it bit for bit.
  // The state: the bar stepped 25 times in the main page, held still (zero velocities).
  await page.evaluate(() => window.supple.loadScene('bar.toml'));
  await page.evaluate(() => window.supple.setPaused(true));
  await page.evaluate(() => window.supple.step(25));
  const st = await page.evaluate(() => window.supple.stats());
  const x64 = await page.evaluate(() => window.supple.positions64());
  const rows = [];
  for (let i = 0; i < x64.length; i += 3) rows.push([x64[i], x64[i + 1], x64[i + 2]]);
  const stateFile = join(tmpdir(), `supple-view-state-${process.pid}.json`);
  writeFileSync(stateFile, JSON.stringify({
    time: st.time, steps: st.steps,
    bodies: [{ name: st.bodies[0].name, time: st.time, x: rows, v: rows.map(() => [0, 0, 0]) }],
  }));
  const sserver = await startView(bin, ['scenes/bar.toml', '--state', stateFile], root);
  const spage = await browser.newPage({ viewport: { width: 1100, height: 700 } });
  watchErrors(spage);
  try {
    await spage.goto(sserver.url);
    await spage.waitForFunction(() => window.supple && window.supple.ready);
    const first = await spage.evaluate(() => window.supple.stats());
    await spage.evaluate(() => window.supple.setPaused(true));
    await spage.evaluate(() => window.supple.call('reset'));
    const back = await spage.evaluate(() => window.supple.stats());
    const xb = await spage.evaluate(() => window.supple.positions64());
    const same = xb.length === x64.length && xb.every((c, i) => c === x64[i]);
    check('supple view --state starts from the handed-over state and Reset returns to it bitwise',
      first.steps >= st.steps && back.steps === st.steps && back.time === st.time && same,
      `state at step ${st.steps}; the page at step ${first.steps} when ready, ${back.steps} after Reset; positions ${same ? 'equal' : 'differ'}`);
  } finally {
    await spage.close();
    sserver.child.kill('SIGINT');
    rmSync(stateFile, { force: true });
  }

  // 2. A scene and its mesh files dropped on the page (names only, as a file manager drops them).
  const read = (p) => readFileSync(join(root, 'scenes', p)).toString('base64');
  const dropped = [['tube_drop.toml', read('tube_drop.toml')], ['tube_solid_1k.node', read('meshes/tube_solid_1k.node')],
    ['tube_solid_1k.ele', read('meshes/tube_solid_1k.ele')]];
  const transfer = await page.evaluateHandle((files) => {
    const dt = new DataTransfer();
    for (const [name, b64] of files) dt.items.add(new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], name));
    return dt;
  }, dropped);
  await page.evaluate(() => window.supple.loadScene('bar.toml'));
  await page.dispatchEvent('#view', 'drop', { dataTransfer: transfer });
  await page.waitForFunction(async () => (await window.supple.stats()).scene === 'tube_drop');
  await page.evaluate(() => window.supple.setPaused(false));
  await stepsPassed(page, 20);
  const drop = await page.evaluate(() => window.supple.stats());
  check('a dropped scene with its mesh files loads and runs', drop.bodies[0].tets === 1034 && drop.steps >= 20,
    `${drop.scene}: ${drop.bodies[0].tets} tets, ${drop.steps} steps`);
  await screenshot(page, 'dropped-tube');

  // 2b. A dropped folder: its files are read through the FileSystemEntry interface with their
  // paths inside it, and the scene (here one folder down) finds its meshes by those paths.
  // Mock entries: a synthetic drop event cannot carry a folder.
  await page.evaluate(() => window.supple.loadScene('bar.toml'));
  const folderPaths = await page.evaluate(async (files) => {
    const { droppedEntries, readEntries } = await import('./files.js');
    const file = (name, b64) => ({
      isFile: true, isDirectory: false, name,
      file: (ok) => ok(new Blob([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))])),
    });
    // A folder that hands out its entries one per batch, then an empty batch.
    const dir = (name, kids) => ({
      isFile: false, isDirectory: true, name,
      createReader: () => { let k = 0; return { readEntries: (ok) => ok(k < kids.length ? [kids[k++]] : []) }; },
    });
    const [[, toml], [, node], [, ele]] = files;
    const root = dir('project', [dir('scenes', [file('tube_drop.toml', toml),
      dir('meshes', [file('tube_solid_1k.node', node), file('tube_solid_1k.ele', ele)])])]);
    const read = await readEntries(droppedEntries([{ webkitGetAsEntry: () => root }]));
    await window.supple.openFiles(read);
    return read.map(([p]) => p);
  }, dropped);
  await page.waitForFunction(async () => (await window.supple.stats()).scene === 'tube_drop');
  const fdrop = await page.evaluate(() => window.supple.stats());
  check('a dropped folder is read with its paths and its scene finds its meshes',
    fdrop.bodies[0].tets === 1034 && folderPaths.join() === 'scenes/tube_drop.toml,scenes/meshes/tube_solid_1k.node,scenes/meshes/tube_solid_1k.ele',
    `${folderPaths.join(', ')} → ${fdrop.scene}: ${fdrop.bodies[0].tets} tets`);

  // A bare closed OBJ surface dropped alone: its default scene, stuffed with tets in the
  // worker, dropped on the ground.
  const cube = 'v 0 0 0\nv 0.3 0 0\nv 0.3 0.3 0\nv 0 0.3 0\nv 0 0 0.3\nv 0.3 0 0.3\nv 0.3 0.3 0.3\nv 0 0.3 0.3\n'
    + 'f 1 4 3 2\nf 5 6 7 8\nf 1 2 6 5\nf 2 3 7 6\nf 3 4 8 7\nf 4 1 5 8\n';
  const objTransfer = await page.evaluateHandle((text) => {
    const dt = new DataTransfer();
    dt.items.add(new File([text], 'crate.obj'));
    return dt;
  }, cube);
  await page.dispatchEvent('#view', 'drop', { dataTransfer: objTransfer });
  // The scene's name can change before the stats hold the new world's bodies (a run read
  // the tube's 1034 tets here once): wait for the body too.
  await page.waitForFunction(async () => {
    const s = await window.supple.stats();
    return s.scene === 'crate' && s.bodies.length > 0 && s.bodies[0].name === 'crate';
  });
  const o0 = await page.evaluate(() => window.supple.stats());
  await stepsPassed(page, 20);
  const o1 = await page.evaluate(() => window.supple.stats());
  check('a dropped OBJ surface is stuffed with tets and falls', o0.bodies[0].tets > 100 && o1.bodies[0].min[1] < o0.bodies[0].min[1] && o0.bodies[0].min[1] > 0,
    `${o0.bodies[0].tets} tets, lowest point ${o0.bodies[0].min[1].toFixed(3)} → ${o1.bodies[0].min[1].toFixed(3)} m`);
  // A bundled scene's address can be shared: it names the scene.
  await page.evaluate(() => window.supple.loadScene('bar.toml'));
  const shared = await page.evaluate(() => new URL(location.href).searchParams.get('scene'));
  check('a bundled scene has a shareable address', shared === 'bar.toml', `?scene=${shared}`);

  // Colour by von Mises stress on the sagging bar: the colour bar's range is in pascals and
  // reaches the bar's stresses (kPa).
  await page.evaluate(() => {
    const c = document.getElementById('color');
    c.value = '1';
    c.dispatchEvent(new Event('change'));
  });
  await stepsPassed(page, 10);
  await page.waitForTimeout(200);
  const vm = await page.evaluate(() => ({ range: window.supple.colorRange, label: document.getElementById('bar-hi').textContent }));
  check('colour by von Mises stress: the colour bar is in pascals', vm.range[0] === 0 && vm.range[1] >= 100 && vm.label.endsWith('Pa'),
    `bar 0 … ${vm.label} (range ${vm.range.join(' … ')})`);
  await screenshot(page, 'von-mises');
  await page.evaluate(() => {
    const c = document.getElementById('color');
    c.value = '0';
    c.dispatchEvent(new Event('change'));
  });

  // 3. The real-time factor of the overlay against simulated / wall time measured here: the
  // bar keeps up with the clock; the head-on tubes (dt = 1 ms, 2k tets) cannot.
  for (const [scene, slow] of [['bar.toml', false], ['head_on.toml', true]]) {
    const r = await page.evaluate(async (scene) => {
      const s = window.supple;
      await s.loadScene(scene);
      await s.setPaused(false);
      await new Promise((r) => setTimeout(r, 2500)); // the page's 2 s window fills
      // The simulated time of the frame on screen, against the wall clock, over the page's
      // window (WINDOW_MS of pacing.js).
      const a = { wall: performance.now(), sim: s.shownTime };
      await new Promise((r) => setTimeout(r, 2000));
      const b = { wall: performance.now(), sim: s.shownTime };
      return { measured: (b.sim - a.sim) / ((b.wall - a.wall) / 1000), shown: s.realTime, overlay: s.overlay };
    }, scene);
    results[`real_time_${scene}`] = r;
    const said = /(slower than real time|real time): × ([0-9.]+)/.exec(r.overlay);
    const shown = said ? Number(said[2]) : NaN;
    // The overlay prints two significant digits: its figure is the page's factor rounded,
    // and the page's factor is the measured one within the tolerance.
    const ok = said !== null && Math.abs(r.shown - r.measured) <= RTF_TOLERANCE * r.measured
      && Math.abs(shown - r.shown) <= 0.0051 && (said[1] === 'slower than real time') === slow;
    check(`${scene}: the overlay's real-time factor is simulated / wall time`, ok,
      `overlay "${said ? said[0] : r.overlay.split('\n')[0]}" (× ${r.shown?.toFixed(4)}), measured × ${r.measured.toFixed(4)}`);
  }

  // 4. A forced divergence (an explicit step far past its limit) stops the world and says why;
  // a slider change then gives a running world.
  const explode = `name = "explode"\ndt = 0.01\nduration = 1.0\n[integrator]\nkind = "symplectic_euler"\nsubsteps = 1\n[[body]]\n` +
    `mesh = { kind = "box", cells = [4, 1, 1], cell_size = 0.1 }\nmaterial = { model = "corotational", youngs = 1e8, poisson = 0.3, density = 1000.0 }\n` +
    `fixed = [{ plane = { point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] } }]\n`;
  // Through the scene text panel, as a user edits and re-runs a scene.
  await page.evaluate(async (text) => {
    await window.supple.loadScene('bar.toml');
    await window.supple.setPaused(false);
    document.getElementById('scene-text').value = text;
    document.getElementById('run-text').click();
  }, explode);
  await page.waitForFunction(async () => (await window.supple.stats()).scene === 'explode');
  await page.waitForFunction(() => window.supple.failureText.startsWith('Stopped'), null, { timeout: 20_000 });
  const failed = await page.evaluate(() => window.supple.failureText);
  await screenshot(page, 'diverged');
  await page.evaluate(() => {
    const e = document.getElementById('E');
    e.value = 4;
    e.dispatchEvent(new Event('input'));
    e.dispatchEvent(new Event('change'));
  });
  await stepsPassed(page, 30);
  // Running: no failure, steps taken, finite positions (the soft bar may show an "Invalid
  // state" of a few inverted tets while it sags under an explicit step: that is no stop).
  const after = await page.evaluate(async () => ({
    stats: await window.supple.stats(), failure: window.supple.failureText,
    finite: (await window.supple.positions()).every(Number.isFinite),
  }));
  check('after a divergence, a slider change gives a running world', failed.startsWith('Stopped') && after.stats.failure === null
    && !after.failure.startsWith('Stopped') && after.finite && after.stats.youngs === 1e4,
    `"${failed.slice(0, 90)}…" → E = ${after.stats.youngs} Pa, ${after.stats.steps} steps, failure ${after.stats.failure}, banner "${after.failure}"`);

  // 5. Phone width: the canvas fills the width above the panel and shows the body.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.evaluate(() => window.supple.loadScene('tube_drop.toml'));
  await page.waitForTimeout(500);
  const layout = await page.evaluate(() => {
    const c = document.getElementById('view').getBoundingClientRect();
    const p = document.getElementById('panel').getBoundingClientRect();
    const small = document.createElement('canvas');
    small.width = 100;
    small.height = 100;
    const g = small.getContext('2d');
    g.drawImage(document.getElementById('view'), 0, 0, 100, 100);
    const d = g.getImageData(0, 0, 100, 100).data;
    let body = 0;
    // The body's colours are saturated blue to red; the background, grid and ground are greys.
    for (let i = 0; i < d.length; i += 4) if (Math.max(d[i], d[i + 1], d[i + 2]) - Math.min(d[i], d[i + 1], d[i + 2]) > 60) body++;
    return { canvas: [c.width, c.height], canvasBottom: c.bottom, panelTop: p.top, bodyFraction: body / 10000 };
  });
  await screenshot(page, 'phone-390');
  // The panel collapses to its button, and the view takes the room.
  await page.click('#toggle');
  await page.waitForTimeout(200);
  const collapsed = await page.evaluate(() => document.getElementById('view').getBoundingClientRect().height);
  await page.click('#toggle');
  check('a 390 px viewport shows the body above the panel, which collapses', layout.canvas[0] === 390 && layout.canvasBottom <= layout.panelTop + 1
    && layout.bodyFraction > 0.01 && collapsed > layout.canvas[1] + 200,
    `canvas ${layout.canvas.map(Math.round).join('×')} (${Math.round(collapsed)} px high with the panel collapsed), panel from y = ${Math.round(layout.panelTop)}, body ${(100 * layout.bodyFraction).toFixed(1)} % of the canvas`);
  await page.setViewportSize({ width: 1100, height: 700 });
}

#!/usr/bin/env python3
"""Hauth & Straßer 2004 §7.2, Example 2 / Table 1 (issue 47 item 5): the corotational frames
refreshed every 1, 2, 4, 8, 10, 16 steps against every step, on `scenes/hauth_update_rate.toml`,
with the St.Venant–Kirchhoff ("Green") run as the reference, warped stiffness and the hybrid
tensor beside them; then the rotating variant (dt 60 ms, the clamped base turning about the
bar's long axis at 33.3°/s, 10° per 300 ms as in the paper). Prints two Markdown tables.

    cargo build --release -p supple-cli
    python3 scripts/hauth_update_rate.py [--repeats 3]

Per run: wall ms per step (median over the run, the median of `--repeats` runs), linear-solver
(CG) iterations and Newton iterations per step, and the error of the upper right front
corner's z-component against Green's at the same times (the paper's measure; z is the long
axis, so the rotation leaves it alone): the largest `|z − z_G|` over the run and the one at
the end, each over the largest `|z_G − Z|` of the run (Z the corner's rest height).
"""
import argparse
import base64
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENE = os.path.join(ROOT, "scenes", "hauth_update_rate.toml")


def vtu_points(path):
    """The points of a VTU file written by `supple` (zlib-compressed or raw base64 arrays)."""
    text = open(path).read()
    m = re.search(r'<Points>\s*<DataArray([^>]*)>(.*?)</DataArray>', text, re.S)
    attrs, s = m.group(1), m.group(2).strip()
    if 'compressor' in open(path).read(2000):
        nb = struct.unpack('<Q', base64.b64decode(s[:12])[:8])[0]
        k = ((24 + 8 * nb) + 2) // 3 * 4
        hdr = base64.b64decode(s[:k])
        sizes = struct.unpack('<%dQ' % nb, hdr[24:24 + 8 * nb])
        data = base64.b64decode(s[k:])
        raw, o = b'', 0
        for z in sizes:
            raw += zlib.decompress(data[o:o + z])
            o += z
    else:
        raw = base64.b64decode(s)[8:]
    v = struct.unpack('<%dd' % (len(raw) // 8), raw)
    return [v[j:j + 3] for j in range(0, len(v), 3)]


def run(supple, text, sets, out):
    with tempfile.NamedTemporaryFile('w', suffix='.toml', dir=os.path.dirname(SCENE), delete=False) as f:
        f.write(text)
        path = f.name
    try:
        cmd = [supple, '--threads', '1', 'run', path, '--out', out, '--quiet']
        for s in sets:
            cmd += ['--set', s]
        p = subprocess.run(cmd, capture_output=True, text=True)
    finally:
        os.unlink(path)
    summary = json.load(open(os.path.join(out, 'summary.json')))
    probe = summary['probes'][0]
    frames = sorted(f for f in os.listdir(os.path.join(out, 'frames')) if f.endswith('.vtu'))
    z = [vtu_points(os.path.join(out, 'frames', f))[probe['vertex']][2] for f in frames]
    body = summary['bodies'][0]
    return {
        'exit': p.returncode,
        'ms': summary['wall_ms_per_step_median'],
        'cg': body['solver_iterations_mean'],
        'newton': body['newton_iterations_mean'],
        'z': z,
        'rest': probe['rest'][2],
        'reason': summary.get('diverged_reason') or summary.get('invalid_reason') or '',
    }


def rotating(text):
    """The scene with the base turning instead of fixed, and dt 60 ms (667 steps)."""
    text = text.replace('fixed = [{ plane = { point = [0, 0, 0], normal = [0, 0, -1] } }]\n', '')
    text = text.replace('dt = 0.02', 'dt = 0.06')
    return text + '''
[[constraint]]
name = "base"
region = { plane = { point = [0, 0, 0], normal = [0, 0, -1] } }
rotation = { axis = [0, 0, 1], center = [0.05, 0.05, 0.0], degrees = 1333.3333333333333 }
ramp = [0.0, 40.0]
'''


def table(title, supple, text, variants, repeats):
    print(f'\n{title}\n')
    print('| model | update every | exit | ms/step | CG its/step | Newton its/step | corner z error, max | at the end |')
    print('|---|---|---|---|---|---|---|---|')
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, every, sets in variants:
            runs = [run(supple, text, sets, os.path.join(tmp, f'r{len(results)}_{k}')) for k in range(repeats)]
            r = runs[0]
            r['ms'] = sorted(x['ms'] for x in runs)[len(runs) // 2]
            results.append((name, every, r))
    ref = results[0][2]
    scale = max(abs(z - ref['rest']) for z in ref['z'])
    for name, every, r in results:
        if len(r['z']) == len(ref['z']) and r['exit'] == 0:
            d = [abs(a - b) for a, b in zip(r['z'], ref['z'])]
            err, end = f"{max(d) / scale:.2e}", f"{d[-1] / scale:.2e}"
        else:
            err, end = '-', '-'
        newton = f"{r['newton']:.2f}" if r['newton'] else '- (linear)'
        note = f" ({r['reason'][:60]})" if r['reason'] else ''
        print(f"| {name} | {every} | {r['exit']}{note} | {r['ms']:.3f} | {r['cg']:.1f} | {newton} | {err} | {end} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--supple', default=f'{ROOT}/target/release/supple')
    ap.add_argument('--repeats', type=int, default=3)
    a = ap.parse_args()
    text = open(SCENE).read()
    green = ('Green (StVK, Newton)', '-', ['body[0].material.model=stvk', 'integrator.kind=backward_euler'])
    warped = ('Warped', 'every step', ['body[0].material.model=warped'])
    hybrid = ('Hybrid (Newton)', 'every step', ['body[0].material.model=hybrid', 'integrator.kind=backward_euler'])
    polar = lambda n: ('Polar (corotational)', f'{n} steps', [f'body[0].material.update_every={n}'])
    table('dt 20 ms, 2000 steps, shear rising to 200 N/m²:', a.supple, text,
          [green, warped, hybrid] + [polar(n) for n in (1, 2, 4, 8, 10, 16)], a.repeats)
    table('dt 60 ms, 667 steps, the base turning at 33.3°/s:', a.supple, rotating(text),
          [green, warped, hybrid] + [polar(n) for n in (1, 5, 9, 16)], a.repeats)


if __name__ == '__main__':
    sys.exit(main())

#!/usr/bin/env python3
"""Debunne et al. 2000, Fig. 7 (issue 47 item 5): "the cube's down face is fixed. With
μ = 10⁶, the volume preservation creates an intuitive deformation when the sphere is pulled
inside the cube." `scenes/adaptive_poke.toml` (the 1 m cube on three non-nested levels)
with its sphere (r = 0.15 m) pressed 0.3 m into the top face over 0.5 s, held 0.5 s and
withdrawn, for the scene's moduli and with μ or λ raised to 10⁶ Pa. Prints a Markdown table.

    cargo build --release -p supple-cli
    python3 scripts/debunne_volume.py

Per run, from summary.json and metrics.csv: exit status, the body's deformed volume (the
finest level's tets at the displacements the simulation represents) relative to rest at the
end of the hold (t = 1 s) and its largest change over the run, the largest push of the body
on the tool, splits, and wall ms per frame (median).
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENE = os.path.join(ROOT, 'scenes', 'adaptive_poke.toml')
PATH = '[[0.0, 0.5, 1.15, 0.5], [0.5, 0.5, 0.85, 0.5], [1.0, 0.5, 0.85, 0.5], [1.5, 0.5, 1.15, 0.5], [1.5, 0.5, 1.25, 0.5]]'


def run(supple, sets, out):
    cmd = [supple, '--threads', '1', 'run', SCENE, '--out', out, '--quiet',
           '--set', f'adaptive.tool.path={PATH}', '--set', 'output.gif=false', '--set', 'output.vtu=false']
    for s in sets:
        cmd += ['--set', s]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0 and not os.path.exists(os.path.join(out, 'summary.json')):
        sys.exit(f"{' '.join(cmd)}: {p.stderr}")
    s = json.load(open(os.path.join(out, 'summary.json')))
    rows = list(csv.DictReader(open(os.path.join(out, 'metrics.csv'))))
    held = min(rows, key=lambda r: abs(float(r['time']) - 1.0))
    push = max(abs(float(r['tool_fy'])) for r in rows)
    return p.returncode, s, float(held['volume']) / s['volume_rest'] - 1.0, push


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--supple', default=f'{ROOT}/target/release/supple')
    a = ap.parse_args()
    variants = [
        ('λ = 4·10⁴, μ = 10⁵ (the scene)', []),
        ('λ = 4·10⁴, μ = 10⁶', ['body[0].material.mu=1e6']),
        ('λ = 10⁶, μ = 10⁵', ['body[0].material.lambda=1e6']),
        ('λ = 10⁶, μ = 10⁶', ['body[0].material.lambda=1e6', 'body[0].material.mu=1e6']),
    ]
    print('| moduli (Pa) | exit | volume change, held (t = 1 s) | largest volume change | largest push on the tool (N) | splits | ms/frame |')
    print('|---|---|---|---|---|---|---|')
    with tempfile.TemporaryDirectory() as tmp:
        for k, (name, sets) in enumerate(variants):
            rc, s, held, push = run(a.supple, sets, os.path.join(tmp, str(k)))
            print(f"| {name} | {rc} | {100 * held:+.2f} % | {100 * s['volume_max_rel_change']:.2f} % "
                  f"| {push:.4g} | {s['splits']} | {s['wall_ms_per_frame_median']:.2f} |")


if __name__ == '__main__':
    sys.exit(main())

#!/usr/bin/env python3
"""Müller et al. 2002 Fig. 6 with spring networks: volumes and tip paths of the four bars of
scenes/mueller_bars_springs.toml (linear springs, warped springs, Hookean springs, warped FEM).

usage: scripts/mueller_springs.py OUTDIR [OUTDIR ...]   (the folders of `supple run` runs of
the scene, e.g. at E = 1e6 Pa and with `--set body[*].material.youngs=1e5`)

Prints per run and bar: the largest |V/V₀ − 1|, V/V₀ at the end, the tip's (the far top
corner's) lowest y and largest x, and the tip's (x, y) at t = 0.5, 1, 2 and 3 s, from
summary.json and metrics.csv (metrics rows every `frame_every` steps).
"""
import csv
import json
import sys

for out in sys.argv[1:]:
    summary = json.load(open(out + "/summary.json"))
    rows = list(csv.DictReader(open(out + "/metrics.csv")))
    print(f"## {out}")
    print("| bar | max \\|V/V₀ − 1\\| | V/V₀ at end | tip lowest y (m) | tip largest x (m) "
          "| tip (x, y) at 0.5 / 1 / 2 / 3 s |")
    print("|---|---|---|---|---|---|")
    for b, p in zip(summary["bodies"], summary["probes"]):
        name = b["name"]
        path = []
        for t in (0.5, 1.0, 2.0, 3.0):
            row = min(rows, key=lambda r: abs(float(r["time"]) - t))
            path.append(f"({float(row[p['name'] + '.x']):.3f}, {float(row[p['name'] + '.y']):.3f})")
        print(f"| {name} | {b['volume_max_rel_change']:.5f} "
              f"| {b['volume_final'] / b['volume_rest']:.4f} | {p['min'][1]:.3f} "
              f"| {p['max'][0]:.3f} | {' '.join(path)} |")

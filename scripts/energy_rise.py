#!/usr/bin/env python3
"""Rises of the total energy after a time, from a run's metrics.csv.

usage: scripts/energy_rise.py OUTDIR [FROM_TIME]   (FROM_TIME default 5.0: the snapping torus'
release)

The total is the sum over the bodies of kinetic + elastic + gravitational energy (the columns
`BODY.kinetic_energy`, `BODY.elastic_energy`, `BODY.potential_energy`, written with 10
significant digits: rises below ~1e-8 J of a ~40 J total are the file's rounding). Prints the
total at FROM_TIME, the rows after it, how many rows rose above the row before, the largest
one-row rise, the sum of the rises, and the largest rise above an earlier minimum (all
relative to the total at FROM_TIME too). With `frame_every = 1` a row is a step.
"""
import csv
import sys

out = sys.argv[1]
start = float(sys.argv[2]) if len(sys.argv) > 2 else 5.0
rows = list(csv.DictReader(open(out + "/metrics.csv")))
bodies = sorted({k.split(".")[0] for k in rows[0] if k.endswith(".kinetic_energy")})


def total(row):
    return sum(
        float(row[b + ".kinetic_energy"])
        + float(row[b + ".elastic_energy"])
        + float(row[b + ".potential_energy"])
        for b in bodies
    )


t = [float(r["time"]) for r in rows]
e = [total(r) for r in rows]
after = [i for i in range(len(t)) if t[i] >= start - 1e-9]
e0 = e[after[0]]
rises = [e[i] - e[i - 1] for i in after[1:]]
lowest, worst, worst_t = e0, 0.0, None
for i in after[1:]:
    if e[i] - lowest > worst:
        worst, worst_t = e[i] - lowest, t[i]
    lowest = min(lowest, e[i])
up = [r for r in rises if r > 0]
print(f"total at t = {t[after[0]]:.4f} s: {e0:.6f} J; {len(rises)} rows after it, {len(up)} rising")
print(f"largest one-row rise {max(rises):.3e} J ({max(rises) / e0:.2e} of it), rises sum {sum(up):.3e} J")
at = f" at t = {worst_t:.4f} s" if worst_t is not None else ""
print(f"largest rise above an earlier minimum {worst:.3e} J ({worst / e0:.2e} of it){at}")
print(f"total at the end (t = {t[-1]:.4f} s): {e[-1]:.6f} J")

"""Müller et al. 2002 §4.2, the dropped tube's stability table, as a sweep: the runs of
`supple-lab tube-drop` (crates/supple-lab/src/tube_drop.rs) made by `supple.sweep` on Dask,
one `supple run` per (Young's modulus, model, step), and judged from what a run writes.

A run is **stable** when (1) no step diverged and (2) kinetic + gravitational energy never
exceeds its initial value by more than 5 % of the energy the fall releases (`m g Δh`, the
lowest vertex down to the ground); the table's cells are "largest stable step / largest
stable step that leaves no tet inverted", as tube_drop.rs prints them. The energies are the
`tube.kinetic_energy` and `tube.potential_energy` columns of each run's metrics.csv (one row
per step: `output.frame_every = 1`, written in shortest round-trip form), so the gain is
computed from the same numbers in the same order as tube_drop.rs computes it after each step,
and stops at the same step: the table and the `stable` / `energy_gain_max` columns are those
of `supple-lab tube-drop`. A run that failed goes on to its end here, so for those rows the
end state (`min_volume_ratio_final`, `inverted_at_end`) is a later one than tube_drop.rs
reports.

    python3 python/studies/tube_drop.py --youngs 1e6,2e5 --dt-ms 50,20,10,5 --workers 2
"""

import argparse
import math
import pathlib
import re
import sys
import time

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None

import supple

MODELS = ("warped", "corotational", "stvk")
REPO = pathlib.Path(__file__).resolve().parents[2]


def released_energy(scene, mass):
    """`m g Δh` of tube_drop.rs: the total mass times |g| times the lowest vertex's height
    along −g, computed in the same order."""
    with open(scene, "rb") as f:
        g = tomllib.load(f).get("gravity", [0.0, -9.81, 0.0])
    norm = math.sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2])
    n = [c / norm for c in g]
    x = supple.load_scene(scene, threads=1).positions()
    lowest = min(-(p[0] * n[0] + p[1] * n[1] + p[2] * n[2]) for p in x.tolist())
    return mass * norm * max(lowest, 1e-9)


def judge(row, metrics, released, body):
    """Stable or not, and why, from a run's summary (the row) and its metrics rows."""
    energy = (metrics[f"{body}.kinetic_energy"] + metrics[f"{body}.potential_energy"]).tolist()
    times = metrics["time"].tolist()
    e0, gain = energy[0], 0.0
    for e, t in zip(energy[1:], times[1:]):
        gain = max(gain, (e - e0) / released)
        if gain > 0.05:
            return False, gain, f"energy grew by {100 * gain:.0f} % of m g Δh at t = {t:.3f} s"
    # A step that diverged wrote no metrics row; a run diverged only by the end-of-run
    # verdict (too many unconverged solves) took every step, which tube_drop.rs ignores.
    stepped = row.get("diverged_step")
    if row["diverged"] and not (stepped == stepped and stepped in set(metrics["step"])):
        # tube_drop.rs's words: the time is the one `supple run`'s message gives.
        t = re.search(r"\(t = ([^ ]+) s\)", row["reason"] or "")
        at = f" at t = {float(t.group(1)):.3f} s" if t else ""
        return False, gain, f"diverged{at}: {row['diverged_reason']}"
    return True, gain, ""


def table_md(largest, youngs):
    show = lambda d: "none" if d is None else f"{d:g} ms"  # noqa: E731
    lines = ["| model |" + "".join(f" E = {e / 1e6:.1f}e6 |" for e in youngs),
             "|---|" + "---|" * len(youngs)]
    for m in MODELS:
        cells = "".join(f" {show(largest[m, e][0])} / {show(largest[m, e][1])} |" for e in youngs)
        lines.append(f"| {m} |{cells}")
    return "\n".join(lines) + "\n"


def rust_f64(v):
    """A float as Rust's `{}` writes it (shortest round trip, no `.0`, no exponent here)."""
    text = repr(float(v))
    return text[:-2] if text.endswith(".0") else text


def runs_csv(runs):
    """runs.csv in tube_drop.rs's columns and number formats, so the two files compare."""
    lines = ["youngs,model,dt_ms,stable,energy_gain_max,min_volume_ratio_final,inverted_at_end,"
             "wall_ms_per_step,reason"]
    for r in runs:
        lines.append(",".join([
            rust_f64(r["youngs"]), r["model"], rust_f64(r["dt_ms"]), str(r["stable"]).lower(),
            f"{r['energy_gain_max']:.4f}", f"{r['min_volume_ratio_final']:.4f}",
            str(r["inverted_at_end"]).lower(), f"{r['wall_ms_per_step']:.3f}",
            '"' + r["reason"].replace('"', "'") + '"']))
    return "\n".join(lines) + "\n"


def compare(ours, theirs):
    """Rows of our runs.csv that differ from tube_drop.rs's `theirs`: every run's key,
    `stable` and `energy_gain_max`, and a stable run's end state (an unstable one ends
    later here). Returns the differences as lines."""
    import csv

    read = lambda path: {(r["youngs"], r["model"], r["dt_ms"]): r for r in csv.DictReader(open(path))}  # noqa: E731
    a, b = read(ours), read(theirs)
    if a.keys() != b.keys():
        return [f"different runs: {sorted(a.keys() ^ b.keys())}"]
    diffs = []
    for k in a:
        cols = ["stable", "energy_gain_max"]
        if a[k]["stable"] == "true":
            cols += ["min_volume_ratio_final", "inverted_at_end"]
        diffs += [f"{k} {c}: {a[k][c]} here, {b[k][c]} there" for c in cols if a[k][c] != b[k][c]]
    return diffs


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scene", default=str(REPO / "scenes" / "tube_drop.toml"))
    p.add_argument("--out", default="out/tube_drop_sweep")
    p.add_argument("--youngs", default="2e6,1e6,5e5,2e5,1e5")
    p.add_argument("--dt-ms", default="50,30,20,10,5,2,1")
    p.add_argument("--duration", type=float, default=1.5)
    p.add_argument("--workers", type=int)
    p.add_argument("--scheduler")
    p.add_argument("--compare", metavar="RUNS_CSV",
                   help="the runs.csv of `supple-lab tube-drop` with the same grid: exit 1 on a difference")
    args = p.parse_args(argv)
    youngs = [float(v) for v in args.youngs.split(",")]
    dts = sorted((float(v) for v in args.dt_ms.split(",")), reverse=True)
    grid = {"body[0].material.youngs": youngs, "body[0].material.model": list(MODELS),
            "dt": [d * 1e-3 for d in dts]}
    # Metrics every step; no frames, GIF or plots (they change no number).
    constant = {"duration": args.duration, "output.frame_every": 1, "output.vtu": False,
                "output.gif": False, "output.plots": False}
    t = time.perf_counter()
    table = supple.sweep(args.scene, grid, out=args.out, set=constant, keep=("summary", "metrics"),
                         workers=args.workers, client=args.scheduler)
    wall = time.perf_counter() - t
    study = supple.load_sweep(args.out)
    body = table["bodies[0].name"].iloc[0]
    released = released_energy(args.scene, table["bodies[0].mass"].iloc[0])
    runs, largest = [], {}
    for _, r in table.iterrows():
        m = study.metrics([r["id"]])
        stable, gain, reason = judge(r, m, released, body)
        ratio = r["bodies[0].min_tet_volume_ratio_final"]
        runs.append({"youngs": r["body[0].material.youngs"], "model": r["body[0].material.model"],
                     "dt_ms": round(r["dt"] * 1e3, 9), "stable": stable, "energy_gain_max": gain,
                     "min_volume_ratio_final": ratio, "inverted_at_end": not ratio > 0.0,
                     "wall_ms_per_step": r["wall_ms_per_step_median"], "reason": reason})
    for e in youngs:
        for model in MODELS:
            rows = [x for x in runs if x["youngs"] == e and x["model"] == model]
            best = next((x["dt_ms"] for x in rows if x["stable"]), None)
            clean = next((x["dt_ms"] for x in rows if x["stable"] and not x["inverted_at_end"]), None)
            largest[model, e] = (best, clean)
    out = pathlib.Path(args.out)
    md = table_md(largest, youngs)
    (out / "table.md").write_text(md)
    (out / "runs.csv").write_text(runs_csv(runs))
    print(md)
    print(f"{len(table)} runs ({int(table['reused'].sum())} done before) in {wall:.1f} s; "
          f"wrote {out}/table.md and runs.csv", file=sys.stderr)
    if args.compare:
        diffs = compare(out / "runs.csv", args.compare)
        for d in diffs:
            print(f"differs: {d}", file=sys.stderr)
        print(f"{len(runs) - len(diffs)} of {len(runs)} runs as in {args.compare}" if diffs else
              f"every run as in {args.compare}", file=sys.stderr)
        return 1 if diffs else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())

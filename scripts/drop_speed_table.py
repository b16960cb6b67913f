#!/usr/bin/env python3
"""The tube drop (`scenes/tube_drop.toml`) thrown at the ground at several speeds and steps,
per force model and contact response: whether each run survives, and if not, why.

Issue 45, item 8: the warped model (the bundled drop's own until then) was the first to
diverge. This script is the table in EXPERIMENTS.md ("Which model survives a fast drop"), so
the table can be rerun after a change to a model, the integrator or contact.

Run from the repository root after `cargo build --release -p supple-cli`:

    python3 scripts/drop_speed_table.py [--out /tmp/drop_speed] [--duration 0.5]

It prints one Markdown row per (response, model) with one cell per (speed, dt): `ok` and
the largest relative volume change when the run exits 0, else the exit status and the
verdict's first word, then the full reason of every failed run.
Python standard library only.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

SPEEDS = [2.0, 10.0, 30.0, 60.0]
STEPS = [0.005, 0.02, 0.05]
MODELS = ["warped", "corotational", "fixed_corotated", "liesenfeld_stolfi"]
RESPONSES = ["ipc", "projection"]


def run_one(binary, scene, out, model, speed, dt, response, duration, timeout):
    """Runs one drop; returns (exit status, reason, wall seconds, summary or None)."""
    if os.path.exists(out):
        shutil.rmtree(out)
    cmd = [
        binary, "--threads", "1", "run", scene, "--out", out, "-q",
        "--duration", str(duration),
        "--set", f"dt={dt}",
        "--set", f"body[0].material.model=\"{model}\"",
        "--set", f"body[0].velocity=[0,{-speed},0]",
        "--set", f"contact.response=\"{response}\"",
    ]
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        code, err = proc.returncode, proc.stderr
    except subprocess.TimeoutExpired:
        code, err = "timeout", ""
    wall = time.monotonic() - start
    summary = None
    path = os.path.join(out, "summary.json")
    if os.path.exists(path):
        with open(path) as f:
            summary = json.load(f)
    lines = [l.strip() for l in err.splitlines() if l.strip()]
    # The verdict's own line (`invalid: ...`, `diverged: ...`) says why; else the last one.
    why = [l for l in lines if l.startswith(("invalid:", "diverged:", "error:"))]
    reason = why[0] if why else (lines[-1] if lines else "")
    return code, reason, wall, summary


def cell(code, reason, summary):
    """A table cell: `ok` with the largest relative volume change, or the exit status and
    the verdict's first word (the full reasons are listed under the table)."""
    if code == 0:
        vol = ""
        if summary and summary.get("bodies"):
            vol = f" {summary['bodies'][0]['volume_max_rel_change']:.2f}"
        return "ok" + vol
    word = reason.split(":")[0] if reason else "?"
    return f"**{code} {word}**"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", default="target/release/supple")
    ap.add_argument("--scene", default="scenes/tube_drop.toml")
    ap.add_argument("--out", default="/tmp/drop_speed")
    ap.add_argument("--duration", type=float, default=0.5)
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--responses", default=",".join(RESPONSES))
    ap.add_argument("--json", help="also write every run's record to this file")
    args = ap.parse_args()

    records = []
    cols = [(s, dt) for s in SPEEDS for dt in STEPS]
    header = "| response | model | " + " | ".join(
        f"{s:g} m/s, {dt * 1000:g} ms" for s, dt in cols) + " |"
    rows = []
    for response in args.responses.split(","):
        for model in args.models.split(","):
            cells = []
            for speed, dt in cols:
                out = os.path.join(args.out, f"{response}-{model}-{speed:g}-{dt:g}")
                code, reason, wall, summary = run_one(
                    args.binary, args.scene, out, model, speed, dt, response,
                    args.duration, args.timeout)
                records.append(dict(response=response, model=model, speed=speed, dt=dt,
                                    code=code, reason=reason, wall_s=round(wall, 2)))
                print(f"{response} {model} {speed:g} m/s dt {dt:g}: {code} "
                      f"{wall:.1f} s {reason}", file=sys.stderr, flush=True)
                cells.append(cell(code, reason, summary))
                shutil.rmtree(out, ignore_errors=True)
            rows.append(f"| {response} | {model} | " + " | ".join(cells) + " |")
    print(header)
    print("|" + "---|" * (len(cols) + 2))
    for r in rows:
        print(r)
    print()
    for r in records:
        if r["code"] != 0:
            reason = re.sub(r"; frames.*$|, frames.*$", "", r["reason"]).replace("|", "/")
            print(f"- {r['response']}, {r['model']}, {r['speed']:g} m/s, dt {r['dt'] * 1000:g} ms "
                  f"(exit {r['code']}): {reason}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(records, f, indent=1)


if __name__ == "__main__":
    main()

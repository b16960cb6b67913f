#!/usr/bin/env python3
"""What the default contact response costs and gives on the bundled contact scenes
(EXPERIMENTS.md, *The default response on the bundled scenes*): every scene of `scenes/`
(and `scenes/guide/`) with contact, run as it is (the default response: IPC, since all of
them step with backward Euler) and with `--set contact.response=projection`, one thread,
release build. Prints a Markdown table.

    cargo build --release -p supple-cli
    python3 scripts/default_response.py [--supple target/release/supple] [--scenes a b ...]

Columns: exit status (0 valid, 2 diverged or unconverged, 3 invalid end state), the median
wall ms per step, the mean Newton iterations per step of the first body (0 for the
linearized step with projection), the largest energy rise over a counted step relative to
the run's energy scale (`-` when no step is counted), and the verdict's reason.
"""
import argparse
import csv
import glob
import json
import os
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def contact_scenes():
    out = []
    for path in sorted(glob.glob(f"{ROOT}/scenes/*.toml") + glob.glob(f"{ROOT}/scenes/guide/*.toml")):
        text = open(path).read()
        if "\n[contact]" in text or "\n[[obstacle]]" in text:
            out.append(path)
    return out


def run(supple, path, response, out):
    cmd = [supple, "--threads", "1", "run", path, "--quiet", "--out", out]
    if response:
        cmd += ["--set", f"contact.response={response}"]
    rc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE).returncode
    s = json.load(open(f"{out}/summary.json"))
    rows = list(csv.DictReader(open(f"{out}/metrics.csv")))
    newton = [k for k in rows[0] if k.endswith(".newton_iterations")][:1] if rows else []
    steps = [r for r in rows[1:]]
    nw = sum(float(r[newton[0]] or 0) for r in steps) / max(1, len(steps)) if newton else 0.0
    rise = s.get("energy_rise_max")
    reason = s.get("invalid_reason") or s.get("diverged_reason") or ""
    return rc, s.get("wall_ms_per_step_median", 0.0), nw, rise, reason


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--supple", default=f"{ROOT}/target/release/supple")
    ap.add_argument("--scenes", nargs="*", help="scene files (default: every contact scene)")
    a = ap.parse_args()
    print("| scene | response | exit | ms/step | Newton/step | largest energy rise | reason |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for path in a.scenes or contact_scenes():
            name = os.path.splitext(os.path.basename(path))[0]
            for response in [None, "projection"]:
                out = f"{tmp}/{name}_{response or 'default'}"
                rc, ms, nw, rise, reason = run(a.supple, path, response, out)
                label = "default (ipc)" if response is None else response
                rise_s = "-" if rise is None else f"{rise:.3g}"
                print(f"| {name} | {label} | {rc} | {ms:.3g} | {nw:.2f} | {rise_s} | {reason[:70]} |", flush=True)


if __name__ == "__main__":
    main()

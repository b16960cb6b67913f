#!/usr/bin/env python3
"""The contact table of EXPERIMENTS.md (issue 46): head-on tubes, cube stacks, a pile of cubes
in a box and the thrown self_fold bar, each run with the projection response and with IPC,
one thread, release build. Prints a Markdown table.

    cargo build --release -p supple-cli
    python3 scripts/contact_table.py [--quick] [--response both|ipc|projection] [--timeout S] [--only REGEX]

Each row is one `supple run` of a scene written from the bundled ones; the numbers are read
from its summary.json and metrics.csv: exit status, vertices inside another body (worst
recorded frame, end), inverted tets (worst, end), the largest energy rise over a step
(relative to the run's energy scale), wall ms per step (median) and Newton iterations per
step (mean over the bodies' solves).
"""
import argparse
import csv
import json
import os
import re
import signal
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def head_on(speed, dt, response):
    return f"""
name = "head_on"
dt = {dt}
duration = 0.4
gravity = [0.0, 0.0, 0.0]
[integrator]
kind = "backward_euler_linearized"
[output]
frame_every = {max(1, round(0.01 / dt))}
[[body]]
name = "left"
mesh = {{ kind = "tetgen", path = "{ROOT}/scenes/meshes/tube_solid_1k" }}
transform = {{ translate = [-0.55, 0.0, 0.0] }}
material = {{ model = "corotational", youngs = 1e5, poisson = 0.33, density = 1000.0 }}
velocity = [{speed}, 0.0, 0.0]
[[body]]
name = "right"
mesh = {{ kind = "tetgen", path = "{ROOT}/scenes/meshes/tube_solid_1k" }}
transform = {{ translate = [0.05, 0.01, 0.0] }}
material = {{ model = "corotational", youngs = 1e5, poisson = 0.33, density = 1000.0 }}
velocity = [{-speed}, 0.0, 0.0]
[contact]
body_collision = true
response = "{response}"
"""


def cubes(n, dt, response, pile=False):
    """A stack of n 15 cm corotational cubes (the top one dropped 1 cm), or with `pile` n
    cubes of 10 cm dropped in a 2×2 grid of columns into a box."""
    bodies = []
    for k in range(n):
        if pile:
            col, row = k % 4, k // 4
            x, z = (col % 2) * 0.12 - 0.11, (col // 2) * 0.12 - 0.11
            y = 0.05 + row * 0.13
            size, cells = 0.1, 2
        else:
            x, z = -0.075, -0.075
            y = 0.0005 + k * 0.1505 + (0.01 if k == n - 1 and k > 0 else 0.0)
            size, cells = 0.15, 3
        bodies.append(
            f"""
[[body]]
name = "cube{k}"
mesh = {{ kind = "box", cells = [{cells}, {cells}, {cells}], cell_size = {size / cells}, origin = [{x}, {y}, {z}] }}
material = {{ model = "corotational", youngs = 1e5, poisson = 0.3, density = 1000.0 }}
"""
        )
    walls = ""
    if pile:
        for name, point, normal in [
            ("wall_x0", [-0.14, 0, 0], [1, 0, 0]),
            ("wall_x1", [0.14, 0, 0], [-1, 0, 0]),
            ("wall_z0", [0, 0, -0.14], [0, 0, 1]),
            ("wall_z1", [0, 0, 0.14], [0, 0, -1]),
        ]:
            walls += f"""
[[obstacle]]
name = "{name}"
shape = "plane"
point = {point}
normal = {normal}
friction = 0.5
"""
    return f"""
name = "{'pile' if pile else 'stack'}"
dt = {dt}
duration = 2.0
gravity = [0.0, -9.81, 0.0]
[integrator]
kind = "backward_euler_linearized"
[output]
frame_every = {max(1, round(0.02 / dt))}
{''.join(bodies)}
[contact]
body_collision = true
friction = 0.5
response = "{response}"
[[obstacle]]
name = "ground"
shape = "plane"
normal = [0.0, 1.0, 0.0]
friction = 0.5
{walls}"""


def self_fold(response):
    with open(os.path.join(ROOT, "scenes", "self_fold.toml")) as f:
        text = f.read()
    text = text.replace("dt = 0.002", "dt = 0.01").replace("duration = 2.0", "duration = 0.3")
    text = text.replace(
        "damping = { alpha = 1.0, beta = 0.0 }",
        "damping = { alpha = 1.0, beta = 0.0 }\nvelocity = [0.0, -10.0, 0.0]",
    )
    return text.replace(
        "self_collision = true", f'self_collision = true\nresponse = "{response}"'
    )


def run(supple, name, text, folder, timeout):
    path = os.path.join(folder, name + ".toml")
    with open(path, "w") as f:
        f.write(text)
    out = os.path.join(folder, "out_" + name)
    p = subprocess.Popen(
        [supple, "--threads", "1", "run", path, "--out", out, "-q"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    stopped = False
    try:
        _, stderr = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        # Ctrl-C: the run stops after its current step and writes its files.
        p.send_signal(signal.SIGINT)
        stopped = True
        try:
            _, stderr = p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            _, stderr = p.communicate()
    stderr = stderr or ""
    row = {"name": name, "exit": f"stopped at {timeout:g} s" if stopped else p.returncode}
    try:
        with open(os.path.join(out, "summary.json")) as f:
            s = json.load(f)
    except OSError:
        row["note"] = (stderr.strip().splitlines() or ["no summary"])[-1][:80]
        return row
    get = lambda k: s.get(k, "–")  # noqa: E731
    row.update(
        inside_max=get("interpenetrating_vertices_max"),
        inside_end=get("interpenetrating_vertices_end"),
        inverted_max=get("inverted_tets_max"),
        inverted_end=get("inverted_tets_end"),
        rise=get("energy_rise_max"),
        ms=s.get("wall_ms_per_step_median"),
        reason=s.get("invalid_reason") or s.get("diverged_reason") or "",
    )
    try:
        with open(os.path.join(out, "metrics.csv")) as f:
            rows = list(csv.DictReader(f))[1:]
        cols = [c for c in rows[0] if c.endswith(".newton_iterations")] if rows else []
        total = sum(float(r[c]) for r in rows for c in cols[:1])
        row["newton"] = total / max(1, len(rows))
    except (OSError, IndexError, ValueError):
        row["newton"] = "–"
    return row


def fmt(v):
    if isinstance(v, float):
        return f"{v:.3g}"
    return str(v)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--supple", default=os.path.join(ROOT, "target", "release", "supple"))
    ap.add_argument("--quick", action="store_true", help="dt 10 ms only, 2 and 4 cubes")
    ap.add_argument("--response", choices=["both", "ipc", "projection"], default="both")
    ap.add_argument(
        "--timeout", type=float, default=900.0, help="seconds per run before it is stopped (Ctrl-C)"
    )
    ap.add_argument("--only", help="run only the cases whose name matches this regular expression")
    args = ap.parse_args()
    cases = []
    responses = ["projection", "ipc"] if args.response == "both" else [args.response]
    for response in responses:
        for speed in [2, 10, 30]:
            for dt in [0.01] if args.quick else [0.001, 0.01, 0.02]:
                cases.append((f"head_on_{speed}ms_dt{int(dt * 1000)}_{response}", head_on(speed, dt, response)))
        for n in [2, 4] if args.quick else [2, 4, 8]:
            for dt in [0.01] if args.quick else [0.01, 0.02]:
                cases.append((f"stack{n}_dt{int(dt * 1000)}_{response}", cubes(n, dt, response)))
        cases.append((f"pile8_dt10_{response}", cubes(8, 0.01, response, pile=True)))
        cases.append((f"self_fold_10ms_{response}", self_fold(response)))
    if args.only:
        cases = [(name, text) for name, text in cases if re.search(args.only, name)]
    with tempfile.TemporaryDirectory() as folder:
        print("| run | exit | inside (worst, end) | inverted (worst, end) | largest energy rise | ms/step | Newton/step | reason |")
        print("|---|---|---|---|---|---|---|---|")
        for name, text in cases:
            r = run(args.supple, name, text, folder, args.timeout)
            print(
                f"| {name} | {r['exit']} | {fmt(r.get('inside_max', '–'))}, {fmt(r.get('inside_end', '–'))} "
                f"| {fmt(r.get('inverted_max', '–'))}, {fmt(r.get('inverted_end', '–'))} | {fmt(r.get('rise', '–'))} "
                f"| {fmt(r.get('ms', '–'))} | {fmt(r.get('newton', '–'))} | {(r.get('reason') or r.get('note', ''))[:70]} |",
                flush=True,
            )


if __name__ == "__main__":
    sys.exit(main())

"""What the sweep tests share: a tiny clamped bar (a few dozen tets, a tenth of a second) and
the `supple` program (SUPPLE_BIN, as tests/test_supple.py)."""

import json
import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]

# The bar of scenes/bar.toml made small (4 × 1 × 1 cells, 20 tets) and short (10 steps);
# no GIF, no plots: a run is a few milliseconds of physics.
BAR = """
name = "bar"
dt = 0.01
duration = 0.1
gravity = [0.0, -9.81, 0.0]

[integrator]
kind = "backward_euler_linearized"

[solver]
kind = "pcg"
tolerance = 1e-8
max_iterations = 1000

[output]
frame_every = 2
gif = false
plots = false

[[body]]
name = "bar"
mesh = { kind = "box", cells = [4, 1, 1], cell_size = 0.1, split = 5 }
material = { model = "corotational", youngs = 1e5, poisson = 0.33, density = 1000.0 }
fixed = [{ plane = { point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] } }]
"""

# summary.json's keys that measure the machine (supple.sweep's TIMING, by leaf name).
TIMING = {"wall_ms_per_step_median", "wall_ms_per_step_min", "intersection_ms_per_query",
          "contact_ms_per_step_median", "threads"}


def write_bar(folder, **replace):
    text = BAR
    for old, new in replace.items():
        text = text.replace(old, new)
    path = pathlib.Path(folder) / "bar.toml"
    path.write_text(text)
    return path


def supple_bin():
    if os.environ.get("SUPPLE_BIN"):
        return os.environ["SUPPLE_BIN"]
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    path = target / "release" / "supple"
    if not path.exists():
        pytest.skip(f"no supple program at {path} (set SUPPLE_BIN)")
    return str(path)


def cli_run(scene, out, sets):
    """`supple run SCENE --set ... --out OUT --quiet`; returns (exit status, summary)."""
    args = [supple_bin(), "run", str(scene), "--out", str(out), "--quiet"]
    for s in sets:
        args += ["--set", s]
    status = subprocess.run(args, capture_output=True).returncode
    return status, json.loads((pathlib.Path(out) / "summary.json").read_text())


def physics(summary):
    """summary.json without the machine's numbers."""
    if isinstance(summary, dict):
        return {k: physics(v) for k, v in summary.items() if k not in TIMING}
    if isinstance(summary, list):
        return [physics(v) for v in summary]
    return summary

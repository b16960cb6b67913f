"""`supple sweep` (the Rust program's front end over `python -m supple sweep`): the values of
`--grid` read as `--set` reads them, the runs bitwise `supple run`'s, a rerun that runs
nothing, a refused key before anything runs, and the error that names how to install the
module when the interpreter cannot import it."""

import subprocess
import sys

import pandas
import pytest

pytest.importorskip("distributed")

from sweep_common import cli_run, physics, supple_bin, write_bar  # noqa: E402

import supple  # noqa: E402


def sweep_cli(*args, python=sys.executable, env_extra=None):
    import os

    env = dict(os.environ, SUPPLE_PYTHON=python, **(env_extra or {}))
    return subprocess.run([supple_bin(), "sweep", *map(str, args)], capture_output=True,
                          text=True, env=env)


def test_supple_sweep_runs_the_grid_and_a_rerun_runs_nothing(tmp_path):
    scene = write_bar(tmp_path)
    out = tmp_path / "study"
    grid = ["--grid", "dt=0.01,0.02", "--grid", "body[0].velocity=[0,-1,0],[0,-2.5,0]"]
    r = sweep_cli(scene, *grid, "--set", "duration=0.06", "--out", out, "--workers", "2")
    assert r.returncode == 0, r.stderr
    table = pandas.read_parquet(out / "results.parquet")
    assert len(table) == 4 and (table["status"] == "finished").all()
    assert [list(v) for v in table["body[0].velocity"]] == [[0, -1, 0], [0, -2.5, 0]] * 2
    study = supple.load_sweep(out)
    last = table.iloc[3]
    status, cli = cli_run(scene, tmp_path / "cli",
                          ["duration=0.06", "dt=0.02", "body[0].velocity=[0,-2.5,0]"])
    assert status == 0 and physics(study.summary(last["id"])) == physics(cli)
    again = sweep_cli(scene, *grid, "--set", "duration=0.06", "--out", out)
    assert again.returncode == 0 and again.stderr.count("done before") == 4, again.stderr


def test_supple_sweep_refuses_a_bad_key_before_anything_runs(tmp_path):
    scene = write_bar(tmp_path)
    r = sweep_cli(scene, "--grid", "body[0].material.yungs=1,2", "--out", tmp_path / "never")
    assert r.returncode == 64
    assert "variant 0 (body[0].material.yungs=1)" in r.stderr and "unknown field `yungs`" in r.stderr
    assert not (tmp_path / "never").exists()
    # A command line argparse refuses: the same usage status, not 2 (a diverged run's).
    r = sweep_cli(scene, "--grid", "dt=0.01")
    assert r.returncode == 64 and "--out" in r.stderr
    r = sweep_cli(scene, "--grid", "dt", "--out", tmp_path / "never")
    assert r.returncode == 64 and "expected KEY=VALUE" in r.stderr


def test_supple_sweep_says_how_to_install_the_module_when_it_is_missing(tmp_path):
    scene = write_bar(tmp_path)
    # An interpreter on whose path `supple` fails to import.
    fake = tmp_path / "site" / "supple"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError(\"No module named 'supple._supple'\")\n")
    r = sweep_cli(scene, "--grid", "dt=0.01", "--out", tmp_path / "o",
                  env_extra={"PYTHONPATH": str(tmp_path / "site")})
    assert r.returncode == 1
    assert "cannot import" in r.stderr and "pip install supple distributed pandas pyarrow" in r.stderr
    assert "maturin build" in r.stderr and "SUPPLE_PYTHON" in r.stderr
    r = sweep_cli(scene, "--out", tmp_path / "o", python=str(tmp_path / "no-such-python"))
    assert r.returncode == 1 and "there is no" in r.stderr and "SUPPLE_PYTHON" in r.stderr

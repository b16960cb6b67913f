"""`supple.sweep` on a Dask LocalCluster of 2 worker processes (issue 44, "What it must
show"): summaries bitwise those of `supple run` of the same overridden scenes, the same table
on 1 and on 2 workers, a diverging variant kept as a row with its reason, a killed worker and
a restarted cluster survived with a rerun that runs only what is missing, and a bad key
refused before anything runs. The scenes are a 20-tet bar of ten steps."""

import json
import os
import signal
import threading
import time

import numpy as np
import pandas
import pytest

distributed = pytest.importorskip("distributed")

import supple  # noqa: E402
from supple._sweep import compare_columns, toml_text, variants  # noqa: E402
from sweep_common import cli_run, physics, write_bar  # noqa: E402

GRID = {"body[0].material.youngs": [1e5, 3e5], "dt": [0.01, 0.02, 0.025]}


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster:
        with distributed.Client(cluster) as c:
            yield c


def test_grid_rows_are_bitwise_supple_run_of_the_same_scenes(client, tmp_path):
    scene = write_bar(tmp_path)
    table = supple.sweep(scene, GRID, out=tmp_path / "study", client=client)
    assert len(table) == 6 and list(table["variant"]) == list(range(6))
    assert (table["status"] == "finished").all() and (table["exit_status"] == 0).all()
    assert table["id"].nunique() == 6
    # The grid's order: the last key varies fastest.
    assert list(table["dt"]) == [0.01, 0.02, 0.025] * 2
    assert list(table["body[0].material.youngs"]) == [1e5] * 3 + [3e5] * 3
    study = supple.load_sweep(tmp_path / "study")
    for _, r in table.iterrows():
        sets = [f"body[0].material.youngs={r['body[0].material.youngs']!r}", f"dt={r['dt']!r}"]
        status, cli = cli_run(scene, tmp_path / f"cli{r['variant']}", sets)
        assert status == 0
        assert physics(study.summary(r["id"])) == physics(cli)
        # The table's numbers are the summary's, bit for bit.
        assert r["steps"] == cli["steps"] == round(0.1 / r["dt"])
        assert r["bodies[0].min_tet_volume_ratio_final"] == cli["bodies"][0]["min_tet_volume_ratio_final"]
        assert r["energy_total_final"] == cli["energy_total_final"]
        frames = sorted((tmp_path / f"cli{r['variant']}" / "frames").glob("frame_*.vtu"))
        last = supple.read_vtu(frames[-1])["points"]
        assert np.array_equal(study.final_positions(r["id"])["bar"], last)
    # Not trivially equal: stiffness and step change the end state.
    assert table["energy_total_final"].nunique() == 6
    # What a folder keeps by default; the table on disk is the one returned.
    assert sorted(p.name for p in (tmp_path / "study" / table["id"][0]).iterdir()) == [
        "final_positions.npz", "metrics.csv", "scene.resolved.toml", "summary.json", "variant.json"]
    on_disk = pandas.read_parquet(tmp_path / "study" / "results.parquet")
    pandas.testing.assert_frame_equal(on_disk[compare_columns(table)], table[compare_columns(table)])
    assert len(pandas.read_csv(tmp_path / "study" / "results.csv")) == 6
    metrics = study.metrics()
    # frame_every = 2, and the last step, and t = 0.
    assert len(metrics) == sum(-(-n // 2) + 1 for n in table["steps"])
    assert list(metrics.columns[:4]) == ["variant", "id", "body[0].material.youngs", "dt"]


def test_one_and_two_workers_give_the_same_table(client, tmp_path):
    scene = write_bar(tmp_path)
    two = supple.sweep(scene, GRID, out=tmp_path / "two", client=client)
    one = supple.sweep(scene, GRID, out=tmp_path / "one", workers=1)
    assert (two["status"] == "finished").all()
    assert one["worker"].nunique() == 1
    cols = compare_columns(two)
    pandas.testing.assert_frame_equal(one[cols], two[cols], check_exact=True)


def test_a_diverging_variant_is_a_row_with_its_reason(client, tmp_path):
    scene = write_bar(tmp_path)
    # Explicit steps of 10 ms on a body 10,000 × stiffer, no step halving: it blows up.
    blowup = {"integrator.kind": "symplectic_euler", "integrator.substeps": 1,
              "body[0].material.youngs": 1e9, "step_control.max_halvings": 0}
    table = supple.sweep(scene, [{}, blowup], out=tmp_path / "s", client=client)
    ok, bad = table.iloc[0], table.iloc[1]
    assert ok["status"] == "finished" and pandas.isna(ok["reason"])
    assert bad["status"] == "diverged" and bad["exit_status"] == 2
    assert "diverged at step" in bad["reason"] and bad["diverged"]
    # `supple run` of the same overrides diverges the same way.
    status, cli = cli_run(scene, tmp_path / "cli", [f"{k}={toml_text(v)}" for k, v in blowup.items()])
    assert status == 2 and cli["diverged_reason"] == bad["diverged_reason"]
    # A diverged variant is a result: a rerun does not run it again.
    again = supple.sweep(scene, [{}, blowup], out=tmp_path / "s", client=client)
    assert again["reused"].all() and list(again["status"]) == ["finished", "diverged"]


def test_keep_trajectory_holds_every_output_frame(client, tmp_path):
    scene = write_bar(tmp_path)
    keep = ("metrics", "trajectory", "frames")
    table = supple.sweep(scene, {"dt": [0.02]}, out=tmp_path / "s", client=client, keep=keep)
    study = supple.load_sweep(tmp_path / "s")
    folder = study.folder(0)
    assert sorted(p.name for p in folder.iterdir()) == [
        "frames", "metrics.csv", "scene.pvd", "scene.resolved.toml", "summary.json",
        "trajectory.npz", "variant.json"]
    traj = study.trajectory(0)
    frames = sorted((folder / "frames").glob("frame_*.vtu"))
    assert traj["bar"].shape == (len(frames), 5 * 2 * 2, 3)  # 4 × 1 × 1 cells: 20 vertices
    for k, f in enumerate(frames):
        assert np.array_equal(traj["bar"][k], supple.read_vtu(f)["points"])
    assert np.array_equal(traj["frame.time"], study.metrics()["time"].to_numpy())
    assert table["steps"][0] == 5 and len(frames) == 4  # t = 0, steps 2, 4 and the last


def _slow_bar(tmp_path):
    # Longer runs (the 450-tet bar, 120 to 240 steps: 0.2 to 0.4 s each here) so that the
    # sweep is still running when a worker dies after the first variant finished.
    return write_bar(tmp_path, **{"[4, 1, 1]": "[10, 3, 3]", "duration = 0.1": "duration = 2.4"})


def _in_background(fn):
    box = {}
    t = threading.Thread(target=lambda: box.setdefault("result", fn()))
    t.start()
    return t, box


def _wait_for_first(out, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        done = [p.parent for p in out.glob("*/variant.json")]
        if done:
            return done
        time.sleep(0.02)
    raise AssertionError("no variant finished")


def test_a_killed_worker_and_a_restart_then_a_rerun_runs_only_what_is_missing(client, tmp_path):
    scene = _slow_bar(tmp_path)
    grid = {"body[0].material.youngs": [1e5, 2e5, 3e5], "dt": [0.01, 0.02]}
    # 1. A worker process killed mid-sweep: Dask reruns its task elsewhere, the sweep ends.
    out = tmp_path / "killed"
    t, box = _in_background(lambda: supple.sweep(scene, grid, out=out, client=client))
    _wait_for_first(out)
    pids = set(client.run(os.getpid).values())
    killed = pids.pop()
    os.kill(killed, signal.SIGKILL)
    done_at_kill = len(list(out.glob("*/variant.json")))
    t.join()
    table = box["result"]
    assert done_at_kill < 6 and (table["status"] == "finished").all()
    # The survivor and the worker the nanny started in the killed one's place ran the rest.
    ran_on = {int(w.rsplit(":", 1)[1]) for w in table["worker"]}
    assert ran_on - {killed} and ran_on <= pids | {killed} | set(client.run(os.getpid).values())
    client.wait_for_workers(2, timeout=60)
    # 2. The cluster restarted mid-sweep: what was running or waiting has no result.
    out = tmp_path / "restarted"
    t, box = _in_background(lambda: supple.sweep(scene, grid, out=out, client=client))
    _wait_for_first(out)
    client.restart()
    t.join()
    first = box["result"]
    assert set(first["status"]) == {"finished", "error"}
    # Runs that were in flight may have finished while the workers went down: the folders,
    # not the first table, say what is done.
    finished = {p.parent.name for p in out.glob("*/variant.json")}
    assert set(first.loc[first["status"] == "finished", "id"]) <= finished
    assert 0 < len(finished) < 6
    started = {i: json.loads((out / i / "variant.json").read_text())["started"] for i in finished}
    # The rerun completes the sweep and runs none of the variants already finished.
    again = supple.sweep(scene, grid, out=out, client=client)
    assert (again["status"] == "finished").all()
    assert set(again.loc[again["reused"], "id"]) == finished
    for i in finished:
        assert json.loads((out / i / "variant.json").read_text())["started"] == started[i]
    # The resumed table is the one of part 1's sweep, which Dask completed in one call.
    cols = compare_columns(again)
    pandas.testing.assert_frame_equal(again[cols], table[cols])


class NoCluster:
    def __getattr__(self, name):
        raise AssertionError(f"the sweep used its client ({name}) before refusing")


def test_a_bad_key_or_value_fails_before_any_run_starts(tmp_path):
    scene = write_bar(tmp_path)
    out = tmp_path / "never"
    grid = {"body[0].material.youngs": [1e5, -1.0], "body[0].material.yungs": [1.0]}
    with pytest.raises(ValueError) as e:
        supple.sweep(scene, grid, out=out, client=NoCluster())
    msg = str(e.value)
    assert "nothing ran" in msg and "variant 0 (body[0].material.youngs=100000.0" in msg
    assert "unknown field `yungs`" in msg and "variant 1" in msg
    with pytest.raises(ValueError, match=r"variant 1 \(body\[1\]\.material\.youngs=1.0\).*body\[1\]"):
        supple.sweep(scene, [{"dt": 0.02}, {"body[1].material.youngs": 1.0}], out=out, client=NoCluster())
    with pytest.raises(ValueError, match="dt"):
        supple.sweep(scene, {"dt": [0.01, -0.01]}, out=out, client=NoCluster())
    assert not out.exists()


def test_variants_grid_zip_and_lists():
    assert variants({"a": [1, 2], "b": ["x", "y", "z"]}) == [
        {"a": 1, "b": "x"}, {"a": 1, "b": "y"}, {"a": 1, "b": "z"},
        {"a": 2, "b": "x"}, {"a": 2, "b": "y"}, {"a": 2, "b": "z"}]
    assert variants({"a": [1, 2], "b": [3, 4]}, "zip") == [{"a": 1, "b": 3}, {"a": 2, "b": 4}]
    assert variants(None, [{"a": 1}, {"b": 2}]) == [{"a": 1}, {"b": 2}]
    with pytest.raises(ValueError, match="as many values"):
        variants({"a": [1, 2], "b": [3]}, "zip")
    with pytest.raises(ValueError, match="a list of values"):
        variants({"a": 1.0})
    assert toml_text(np.float64(0.1)) == "0.1" and toml_text(True) == "true"
    assert toml_text([0, -1.5, float("inf")]) == "[0, -1.5, inf]" and toml_text("bdf2") == '"bdf2"'

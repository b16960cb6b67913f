"""One variant of a sweep, on whichever machine runs it: its folder, its run (the native
``run_scene``, which is ``supple run``'s own code), what is kept of it, and its table row.

A variant's folder ``out/<id>/`` is finished when ``variant.json`` there says so; that file
is written last, by an atomic rename, so a run killed at any point leaves a folder that the
next sweep reruns. Nothing here imports Dask: the function runs on a worker as a plain call.
"""

import json
import os
import pathlib
import shutil
import socket
import time

from . import _supple

#: What a variant's folder can keep (``keep=``); ``summary`` is always kept (a rerun of the
#: sweep reads it instead of running the variant again).
KEEP = ("summary", "metrics", "final_positions", "trajectory", "frames", "pictures")
DEFAULT_KEEP = ("summary", "metrics", "final_positions")

#: Outcomes of the engine: a variant with one of these is done and is not run again.
DONE = ("finished", "diverged", "invalid")

#: The exit status ``supple run`` gives each outcome (README, *Exit statuses*).
EXIT_STATUS = {"finished": 0, "diverged": 2, "invalid": 3}

#: Columns that measure the machine, not the physics: they differ between two runs of the
#: same variant (compare tables without them; ``threads`` is the run's thread count).
TIMING = (
    "wall_s",
    "worker",
    "wall_ms_per_step_median",
    "wall_ms_per_step_min",
    "intersection_ms_per_query",
    "contact.contact_ms_per_step_median",
    "threads",
)

# Files of a run folder by the `keep` group that holds them (see supple-run's run.rs).
_GROUPS = {
    "summary": ("summary.json",),
    "metrics": ("metrics.csv",),
    "final_positions": ("final_positions.npz",),
    "trajectory": ("trajectory.npz",),
    "frames": ("frames", "scene.pvd", "surface.pvd"),
    "pictures": ("final.png", "images", "animation.gif", "plots", "obstacles.json"),
}
_OWN = ("variant.json", "scene.resolved.toml")


def read_done(folder):
    """``variant.json`` of a finished variant folder, or None (missing, unfinished, failed)."""
    try:
        record = json.loads((pathlib.Path(folder) / "variant.json").read_text())
    except (OSError, ValueError):
        return None
    return record if record.get("status") in DONE else None


def _write_json(path, data):
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)


def _frame_files(folder, bodies):
    """Per body, its frame files in order (``frames/frame_NNNNN.vtu``, or
    ``frames/<body>_frame_NNNNN.vtu`` when the scene has several bodies)."""
    frames = folder / "frames"
    if len(bodies) == 1:
        return {bodies[0]: sorted(frames.glob("frame_*.vtu"))}
    return {b: sorted(frames.glob(f"{b}_frame_*.vtu")) for b in bodies}


def _frame_times(folder):
    """The time of each output frame: the ``time`` column of metrics.csv (one row per frame,
    written in shortest round-trip form)."""
    import numpy as np

    lines = (folder / "metrics.csv").read_text().splitlines()
    column = lines[0].split(",").index("time")
    return np.array([float(line.split(",")[column]) for line in lines[1:]])


def _positions(folder, summary, keep):
    """Writes ``final_positions.npz`` and ``trajectory.npz`` (one ``(frames, n, 3)`` array per
    body, ``frame.time`` the frames' times) from the frame files, as asked."""
    import numpy as np

    if not ({"final_positions", "trajectory"} & set(keep)):
        return
    bodies = [b["name"] for b in summary["bodies"]]
    files = _frame_files(folder, bodies)
    if not all(files.values()):
        return  # `output.vtu = false`: the run wrote no positions
    if "final_positions" in keep:
        last = {b: _supple.read_vtu(f[-1])["points"] for b, f in files.items()}
        np.savez(folder / "final_positions.npz", **last)
    if "trajectory" in keep:
        arrays = {b: np.stack([_supple.read_vtu(p)["points"] for p in f]) for b, f in files.items()}
        arrays["frame.time"] = _frame_times(folder)
        np.savez(folder / "trajectory.npz", **arrays)


def _prune(folder, keep):
    kept = set(_OWN)
    for group in keep:
        kept.update(_GROUPS[group])
    for entry in folder.iterdir():
        if entry.name in kept:
            continue
        if entry.is_dir():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def run_variant(spec, out, keep=DEFAULT_KEEP, threads=1, force=False):
    """Runs one variant (``spec`` from the sweep's plan) into ``out/<id>/`` and returns its
    row. An engine outcome (finished, diverged, invalid) is a result; a scene that cannot be
    run or a file that cannot be written raises, and the folder stays unfinished."""
    folder = pathlib.Path(out) / spec["id"]
    done = read_done(folder)
    if done is not None:
        # A retried task whose first try finished before its worker went away.
        return row(spec, done, json.loads((folder / "summary.json").read_text()))
    if folder.exists():
        shutil.rmtree(folder)  # what an interrupted try left
    folder.mkdir(parents=True)
    (folder / "scene.resolved.toml").write_text(spec["resolved"])
    started = time.time()
    t = time.perf_counter()
    result = _supple.run_scene(spec["scene"], folder, spec["set"], threads=threads, force=force)
    wall = time.perf_counter() - t
    summary = result["summary"]
    _positions(folder, summary, keep)
    _prune(folder, keep)
    record = {
        "id": spec["id"],
        "scene": spec["scene"],
        "set": spec["set"],
        "params": spec["params"],
        "engine_version": _supple.__version__,
        "status": result["outcome"],
        "reason": result["reason"],
        "started": started,
        "wall_s": wall,
        "worker": f"{socket.gethostname()}:{os.getpid()}",
    }
    _write_json(folder / "variant.json", record)
    return row(spec, record, summary)


def _flatten(value, prefix, into):
    """summary.json as flat columns: ``bodies[0].mass``, ``contact.max_penetration``; lists
    of numbers or words as their JSON text (one cell)."""
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(v, f"{prefix}.{k}" if prefix else k, into)
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for i, v in enumerate(value):
            _flatten(v, f"{prefix}[{i}]", into)
    elif isinstance(value, list):
        into[prefix] = json.dumps(value)
    else:
        into[prefix] = value


def row(spec, record, summary):
    """The table row of a variant: its index and id, its parameters, how it ended (status,
    the exit status ``supple run`` would give, why), its wall time and worker, then
    summary.json's numbers (a summary key that is also a parameter is ``summary.<key>``)."""
    r = {"variant": spec["index"], "id": spec["id"]}
    r.update(spec["params"])
    status = record["status"]
    r.update(
        status=status,
        exit_status=EXIT_STATUS.get(status, 1),
        reason=record.get("reason"),
        wall_s=record.get("wall_s"),
        worker=record.get("worker"),
    )
    flat = {}
    _flatten(summary or {}, "", flat)
    for k, v in flat.items():
        r[f"summary.{k}" if k in r else k] = v
    return r


def error_row(spec, reason):
    """The row of a variant that has no result this time (the run raised, its worker died
    too often, the cluster restarted): a rerun of the sweep runs it again."""
    return row(spec, {"status": "error", "reason": reason}, None)

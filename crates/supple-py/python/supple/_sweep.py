"""``supple.sweep``: a scene run over a grid of its keys on a Dask cluster, one folder per
variant, resumable, and its table as parquet and CSV (issue 44; docs/recipes/sweeps.md).

The fan-out is Dask's (``dask.distributed``): a local cluster of processes by default, or
whatever cluster a client points at. Everything else is the engine's: a variant is the
scene with ``--set KEY=VALUE`` overrides, validated and run by the code of ``supple run``
(the native ``resolve_scene`` and ``run_scene``), so its summary is bit for bit that of
``supple run SCENE --set ...``. A variant's id is a hash of its resolved scene text and the
engine version: a rerun into the same folder skips the variants already done.
"""

import asyncio
import hashlib
import itertools
import json
import math
import os
import pathlib
import uuid

from . import _supple
from ._sweep_variant import DEFAULT_KEEP, KEEP, TIMING, error_row, read_done, row, run_variant

_MISSING = (
    "supple.sweep needs dask.distributed, pandas and pyarrow: "
    "pip install 'distributed' 'pandas' 'pyarrow' (the versions CI uses are in .ci/run)"
)


class Raw(str):
    """A value already written as TOML text (the command line's ``--grid key=v1,v2``: read
    as ``supple run --set`` reads it, a bare word being a string)."""


def toml_text(value):
    """A Python value as the TOML text of a ``--set`` override (floats round-trip)."""
    import numpy as np

    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return repr(v) if math.isfinite(v) else ("nan" if v != v else ("inf" if v > 0 else "-inf"))
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        inner = ", ".join(f"{json.dumps(str(k))} = {toml_text(v)}" for k, v in value.items())
        return "{ " + inner + " }"
    if isinstance(value, (list, tuple, np.ndarray)):
        return "[" + ", ".join(toml_text(v) for v in value) + "]"
    raise TypeError(f"{value!r}: not a value a scene key can take (number, bool, string, list, dict)")


def _plain(value):
    """A parameter as the table shows it: numpy scalars and arrays as Python numbers and
    lists, command-line text as the TOML value it reads as."""
    import numpy as np

    if isinstance(value, Raw):
        try:
            import tomllib

            return tomllib.loads(f"v = {value}")["v"]
        except Exception:  # no tomllib (Python < 3.11) or a bare word: the text itself
            return str(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def variants(params, mode="grid"):
    """The variants of a sweep as a list of ``{key: value}`` dicts: ``mode="grid"`` every
    combination (the last key varies fastest), ``"zip"`` the i-th value of every key
    together, or ``params`` (or ``mode``) a list of dicts, one per variant."""
    if isinstance(mode, (list, tuple)):
        params, mode = mode, "list"
    if isinstance(params, (list, tuple)):
        if not all(isinstance(p, dict) for p in params):
            raise ValueError("a list of variants holds one dict {key: value} per variant")
        return [dict(p) for p in params]
    params = dict(params or {})
    for k, v in params.items():
        if isinstance(v, (str, bytes)) or not hasattr(v, "__iter__"):
            raise ValueError(f"`{k}`: give a list of values (a single one as [{v!r}])")
    keys = list(params)
    lists = [list(params[k]) for k in keys]
    if mode == "grid":
        return [dict(zip(keys, combo)) for combo in itertools.product(*lists)]
    if mode == "zip":
        lengths = {k: len(v) for k, v in zip(keys, lists)}
        if len(set(lengths.values())) > 1:
            raise ValueError(f"mode='zip' needs as many values for every key: {lengths}")
        return [dict(zip(keys, combo)) for combo in zip(*lists)]
    raise ValueError(f"mode={mode!r}: expected 'grid', 'zip' or a list of dicts")


def variant_id(resolved):
    """A variant's id: the first 16 hex digits of the SHA-256 of the engine version and the
    resolved scene text (keys sorted), so the same scene under the same engine is the same
    folder whatever the order its keys were given in."""
    h = hashlib.sha256(f"supple {_supple.__version__}\n".encode())
    h.update(resolved.encode())
    return h.hexdigest()[:16]


def plan(scene, params=None, mode="grid", set=None, force=False):
    """Every variant resolved and validated before anything runs: a list of specs (index,
    id, params, the ``KEY=VALUE`` overrides, the resolved text). A bad key or value anywhere
    raises one ``ValueError`` naming every variant that has one."""
    scene = str(pathlib.Path(scene).resolve())
    base = [f"{k}={toml_text(v)}" for k, v in (set or {}).items()]
    specs, problems = [], []
    resolved_of = {}
    for index, p in enumerate(variants(params, mode)):
        try:
            overrides = base + [f"{k}={toml_text(v)}" for k, v in p.items()]
        except TypeError as e:
            problems.append(f"variant {index} ({_describe(p)}): {e}")
            continue
        key = tuple(overrides)
        try:
            if key not in resolved_of:
                resolved_of[key] = _supple.resolve_scene(scene, overrides, force=force)
        except (ValueError, OSError) as e:
            problems.append(f"variant {index} ({_describe(p)}): {e}")
            continue
        resolved = resolved_of[key]
        specs.append(
            {
                "index": index,
                "id": variant_id(resolved),
                "params": {k: _plain(v) for k, v in p.items()},
                "scene": scene,
                "set": overrides,
                "resolved": resolved,
            }
        )
    if problems:
        raise ValueError("the sweep was refused, nothing ran:\n  " + "\n  ".join(problems))
    return specs


def _describe(p):
    return ", ".join(f"{k}={toml_text(v) if not isinstance(v, Raw) else v}" for k, v in p.items()) or "the scene as is"


def _imports():
    try:
        import distributed
        import pandas
        import pyarrow  # noqa: F401
    except ImportError as e:
        raise ImportError(f"{_MISSING} ({e})") from e
    return distributed, pandas


def _client(distributed, client, workers, n):
    """``(client, cluster to close)``: the caller's client, one for an address, or a local
    cluster of processes with one thread each."""
    if client is None:
        cluster = distributed.LocalCluster(
            n_workers=workers or max(1, min(n, os.cpu_count() or 1)),
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
        )
        return distributed.Client(cluster), cluster
    if isinstance(client, str):
        c = distributed.Client(client)
        return c, c
    return client, None


def sweep(
    scene,
    params=None,
    mode="grid",
    out="study",
    client=None,
    keep=DEFAULT_KEEP,
    set=None,
    workers=None,
    threads=1,
    retries=2,
    force=False,
    progress=None,
):
    """Runs ``scene`` (a scene file) once per variant of ``params`` on a Dask cluster and
    returns the table (a pandas DataFrame, one row per variant in plan order), also written
    as ``out/results.parquet`` and ``out/results.csv``.

    ``params`` maps scene key paths (those of ``supple run --set``: ``dt``,
    ``body[0].material.youngs``) to lists of values; ``mode`` is ``"grid"``, ``"zip"`` or a
    list of ``{key: value}`` dicts. ``set`` holds overrides common to every variant. Every
    variant is validated before anything is submitted. ``client``: a
    ``distributed.Client``, a scheduler address, or None for a local cluster of ``workers``
    processes (default: one per core, at most one per variant) of one thread each;
    ``threads`` is the engine's threads per run. ``keep`` says what each ``out/<id>/``
    keeps (see ``KEEP``). Variants already done in ``out`` are not run again (``reused``);
    a task whose worker died is rerun by Dask up to ``retries`` times; a variant still
    without a result is a row with status ``error`` and is run by the next sweep.
    ``progress(row)`` is called as each row comes in.
    """
    keep = tuple(keep)
    unknown = [k for k in keep if k not in KEEP]
    if unknown:
        raise ValueError(f"keep={unknown}: expected some of {list(KEEP)}")
    keep = tuple(dict.fromkeys(("summary",) + keep))
    specs = plan(scene, params, mode, set, force)
    distributed, pandas = _imports()
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    _write_plan(out, specs, mode)
    rows, todo = {}, {}
    for s in specs:
        done = read_done(out / s["id"])
        if done is not None:
            summary = json.loads((out / s["id"] / "summary.json").read_text())
            rows[s["index"]] = dict(row(s, done, summary), reused=True)
            if progress:
                progress(rows[s["index"]])
        else:
            todo.setdefault(s["id"], []).append(s)
    if todo:
        _run(distributed, client, workers, todo, out, keep, threads, retries, force, rows, progress)
    table = pandas.DataFrame([rows[s["index"]] for s in specs])
    _write_table(table, out)
    return table


def _run(distributed, client, workers, todo, out, keep, threads, retries, force, rows, progress):
    c, own = _client(distributed, client, workers, len(todo))
    token = uuid.uuid4().hex[:8]
    futures = {}
    try:
        for vid, same in todo.items():
            f = c.submit(
                run_variant, same[0], str(out.resolve()), keep, threads, force,
                key=f"supple-variant-{vid}-{token}", retries=retries, pure=False,
            )
            futures[f] = same
        for f in distributed.as_completed(list(futures)):
            same = futures[f]
            try:
                r = f.result()
                got = [dict(r, variant=s["index"], **s["params"], reused=False) for s in same]
            except (Exception, asyncio.CancelledError) as e:
                got = _lost(out, same, f"{type(e).__name__}: {e}" if str(e) else type(e).__name__)
            for s, r in zip(same, got):
                rows[s["index"]] = r
                if progress:
                    progress(r)
    finally:
        # Release the tasks (the rows are here; on Ctrl-C, stop what is still queued) so
        # that the cluster neither keeps their results nor recomputes them as it closes.
        pending = list(futures)
        futures.clear()
        f = None
        try:
            c.cancel(pending)
        except Exception:  # the cluster is already gone: nothing to release
            pass
        del pending
        if own is not None:
            own.close()
            if own is not c:
                c.close()


def _lost(out, same, reason):
    """The rows of a task whose result did not come back: the folder's own when the run
    finished before its worker or the cluster went away, else an error row."""
    done = read_done(out / same[0]["id"])
    if done is None:
        return [dict(error_row(s, reason), reused=False) for s in same]
    summary = json.loads((out / same[0]["id"] / "summary.json").read_text())
    return [dict(row(s, done, summary), reused=False) for s in same]


def _write_plan(out, specs, mode):
    plan_ = {
        "engine_version": _supple.__version__,
        "scene": specs[0]["scene"] if specs else None,
        "mode": mode if isinstance(mode, str) else "list",
        "variants": [{"index": s["index"], "id": s["id"], "params": s["params"]} for s in specs],
    }
    tmp = out / "sweep.json.tmp"
    tmp.write_text(json.dumps(plan_, indent=1) + "\n")
    os.replace(tmp, out / "sweep.json")


def _write_table(table, out):
    """``results.parquet`` and ``results.csv``; a column of mixed Python types (a key given
    a number in one variant and a word in another) is written as text in the parquet file."""
    import pyarrow

    for name, write in (
        ("results.parquet", lambda t, p: t.to_parquet(p, index=False)),
        ("results.csv", lambda t, p: t.to_csv(p, index=False)),
    ):
        tmp = out / (name + ".tmp")
        try:
            write(table, tmp)
        except (pyarrow.ArrowException, TypeError, ValueError):
            mixed = table.copy()
            for col in mixed.columns[mixed.dtypes == object]:
                mixed[col] = mixed[col].map(lambda v: v if v is None else str(v))
            write(mixed, tmp)
        os.replace(tmp, out / name)


def compare_columns(table):
    """The columns of a sweep table that describe the physics (``TIMING`` and ``reused``
    left out): two runs of the same sweep agree on these bit for bit."""
    return [c for c in table.columns if c not in TIMING and c != "reused"]


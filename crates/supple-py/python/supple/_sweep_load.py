"""``supple.load_sweep(out)``: a finished (or partly finished) sweep folder read back: its
table, each variant's summary, metrics, final positions and trajectory."""

import json
import pathlib

from ._sweep_variant import read_done


class Sweep:
    """A sweep folder (``supple.sweep(..., out=...)``). ``table`` is ``results.parquet`` as a
    DataFrame; a variant is named by its id or by its ``variant`` number in the table."""

    def __init__(self, out):
        import pandas

        self.path = pathlib.Path(out)
        parquet = self.path / "results.parquet"
        if not parquet.exists():
            raise FileNotFoundError(f"{parquet}: no sweep table here (run supple.sweep with out={str(out)!r})")
        self.table = pandas.read_parquet(parquet)

    def __repr__(self):
        done = int(self.table["status"].isin(("finished", "diverged", "invalid")).sum())
        return f"Sweep({str(self.path)!r}, {len(self.table)} variants, {done} done)"

    def _id(self, variant):
        if isinstance(variant, str):
            return variant
        hits = self.table.loc[self.table["variant"] == variant, "id"]
        if hits.empty:
            raise KeyError(f"variant {variant}: the table has 0 to {len(self.table) - 1}")
        return hits.iloc[0]

    def folder(self, variant):
        """The variant's folder ``out/<id>/``."""
        return self.path / self._id(variant)

    def record(self, variant):
        """``variant.json`` of a finished variant (None when it has no result)."""
        return read_done(self.folder(variant))

    def summary(self, variant):
        """The variant's summary.json as a dict (that of ``supple run`` of its scene)."""
        return json.loads((self.folder(variant) / "summary.json").read_text())

    def metrics(self, variants=None):
        """Every variant's ``metrics.csv`` (one row per output frame) in one DataFrame, with
        the table's ``variant``, ``id`` and parameter columns in front; ``variants`` limits
        it to some (ids or numbers). Variants without metrics (not kept, no result) are
        left out."""
        import pandas

        params = self._params()
        parts = []
        rows = self.table if variants is None else self.table[self.table["id"].isin([self._id(v) for v in variants])]
        for _, r in rows.iterrows():
            path = self.path / r["id"] / "metrics.csv"
            if not path.exists():
                continue
            m = pandas.read_csv(path)
            for i, col in enumerate(["variant", "id"] + params):
                m.insert(i, col, [r[col]] * len(m))
            parts.append(m)
        return pandas.concat(parts, ignore_index=True) if parts else pandas.DataFrame()

    def final_positions(self, variant):
        """``{body: (n, 3) array}``: the positions of the last output frame (kept by
        ``keep=("final_positions", ...)``, the default)."""
        return self._npz(variant, "final_positions.npz")

    def trajectory(self, variant):
        """``{body: (frames, n, 3) array, "frame.time": (frames,)}``: the positions at every
        output frame (kept by ``keep=(..., "trajectory")``)."""
        return self._npz(variant, "trajectory.npz")

    def _npz(self, variant, name):
        import numpy as np

        with np.load(self.folder(variant) / name) as f:
            return {k: f[k] for k in f.files}

    def _params(self):
        plan = json.loads((self.path / "sweep.json").read_text())
        keys = []
        for v in plan["variants"]:
            keys += [k for k in v["params"] if k not in keys]
        return keys


def load_sweep(out):
    """Reads the sweep folder ``out`` (see ``Sweep``)."""
    return Sweep(out)

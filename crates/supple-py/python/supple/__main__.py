"""``python -m supple sweep SCENE --grid KEY=V1,V2 ... --out DIR``: ``supple.sweep`` from the
command line (what ``supple sweep`` runs). Values are read as ``supple run --set`` reads
them (TOML; a bare word is a string); ``--grid`` splits them at commas outside brackets,
braces and quotes, so ``--grid 'body[0].velocity=[0,-1,0],[0,-2,0]'`` has two values.

Exit status: 0 when every variant has a result (finished, diverged or invalid: the table
says which), 1 when some have none (a rerun runs those), 64 for a refused command line or
sweep (nothing ran).
"""

import argparse
import sys

EXIT_USAGE = 64


def split_values(text):
    """``v1,v2`` at top-level commas: ``[0,1],[2,3]`` is two values, ``"a,b"`` one."""
    out, depth, quote, start = [], 0, None, 0
    for i, c in enumerate(text):
        if quote:
            if c == quote and text[i - 1] != "\\":
                quote = None
        elif c in "\"'":
            quote = c
        elif c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
        elif c == "," and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    out.append(text[start:].strip())
    return out


def _key_values(text, flag, many):
    key, sep, values = text.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"{flag} {text}: expected KEY=VALUE{',VALUE...' if many else ''}")
    from ._sweep import Raw

    vals = [Raw(v) for v in split_values(values)] if many else [Raw(values.strip())]
    if any(not v for v in vals):
        raise ValueError(f"{flag} {text}: an empty value")
    return key.strip(), vals


class _Parser(argparse.ArgumentParser):
    """argparse with the program's usage status (64, EX_USAGE) instead of 2, which is the
    status of a diverged run."""

    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _parser():
    p = _Parser(
        prog="supple sweep",
        description="Run a scene over a grid of its keys on a Dask cluster (supple.sweep): "
        "one folder per variant under --out, a table in DIR/results.parquet and .csv; a rerun "
        "skips the variants already done.",
    )
    p.add_argument("scene", help="the scene file (TOML)")
    p.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2",
                   help="a key and its values (repeatable): every combination is run")
    p.add_argument("--zip", action="store_true",
                   help="the i-th values of every --grid key together instead of every combination")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="a key replaced in every variant, as supple run --set (repeatable)")
    p.add_argument("--out", required=True, metavar="DIR", help="the study's folder")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="a running Dask scheduler (tcp://host:8786); default: a local cluster")
    p.add_argument("--workers", type=int, metavar="N",
                   help="worker processes of the local cluster (default: one per core)")
    p.add_argument("--threads", type=int, default=1, metavar="N",
                   help="engine threads per run (default 1)")
    p.add_argument("--keep", default="summary,metrics,final_positions", metavar="WHAT",
                   help="what each variant folder keeps: some of summary, metrics, "
                   "final_positions, trajectory, frames, pictures")
    p.add_argument("--force", action="store_true", help="run past the output size limit")
    p.add_argument("--quiet", "-q", action="store_true", help="print no line per variant")
    return p


def sweep_main(argv):
    args = _parser().parse_args(argv)
    try:
        grid = dict(_key_values(g, "--grid", True) for g in args.grid)
        constant = {k: v[0] for k, v in (_key_values(s, "--set", False) for s in args.set)}
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    from ._sweep import sweep

    def show(row):
        if args.quiet:
            return
        params = ", ".join(f"{k}={row[k]}" for k in grid)
        how = "done before" if row.get("reused") else row["status"]
        why = f": {row['reason']}" if row.get("reason") else ""
        print(f"variant {row['variant']} ({params}) {row['id']}: {how}{why}", file=sys.stderr)

    try:
        table = sweep(
            args.scene, grid, mode="zip" if args.zip else "grid", out=args.out,
            client=args.scheduler, keep=[k for k in args.keep.split(",") if k],
            set=constant, workers=args.workers, threads=args.threads, force=args.force,
            progress=show,
        )
    except (ValueError, ImportError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    counts = table["status"].value_counts().to_dict()
    if not args.quiet:
        print(f"{len(table)} variants: " + ", ".join(f"{n} {s}" for s, n in counts.items())
              + f"; table in {args.out}/results.parquet and results.csv", file=sys.stderr)
    return 1 if counts.get("error") else 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] != "sweep":
        print("usage: python -m supple sweep SCENE --grid KEY=V1,V2 ... --out DIR "
              "(python -m supple sweep --help)", file=sys.stderr)
        return EXIT_USAGE
    return sweep_main(argv[1:])


if __name__ == "__main__":
    sys.exit(main())

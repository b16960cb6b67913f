#!/usr/bin/env python3
"""One thread against two on the stiff bench bars (and any other bench scene), in alternated
rounds: wall ms per step (the median of each run's medians, and the fastest run's), the solve
phase, CG iterations, and the speed-up of two threads. Prints a Markdown table.

Usage: scripts/two_threads.py [--rounds N] [--scenes bar_20k bar_160k] [--steps S --warmup W]
                              [--preconditioner P] [--json out/two_threads.json]
"""
import argparse, json, statistics, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / "target/release/supple"
STEPS = {"bar_450": (200, 10), "bar_20k": (30, 5), "bar_160k": (12, 3)}


def bench(scene, threads, steps, warm, pc):
    cmd = [str(BIN), "--threads", str(threads), "bench", str(ROOT / f"scenes/bench/{scene}.toml"),
           "--steps", str(steps), "--warmup", str(warm)]
    if pc:
        cmd += ["--preconditioner", pc]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{scene} on {threads} threads: exit {out.returncode}\n{out.stderr}")
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scenes", nargs="+", default=["bar_20k", "bar_160k"])
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--warmup", type=int, default=None)
    ap.add_argument("--preconditioner", default=None)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "supple-cli"], cwd=ROOT, check=True)
    runs = {}
    for _ in range(a.rounds):
        for scene in a.scenes:
            steps, warm = STEPS.get(scene, (20, 20))
            steps, warm = a.steps or steps, a.warmup or warm
            for t in (1, 2):
                runs.setdefault((scene, t), []).append(bench(scene, t, steps, warm, a.preconditioner))
    print("| scene | threads | wall ms/step (median of runs) | fastest run | solve ms | CG its | chosen | 2-thread speed-up (median, fastest) |")
    print("|---|---|---|---|---|---|---|---|")
    table = []
    for scene in a.scenes:
        wall = {t: [r["wall_ms_per_step"]["median"] for r in runs[(scene, t)]] for t in (1, 2)}
        for t in (1, 2):
            rs = runs[(scene, t)]
            solve = statistics.median(r["phases_ms_median"]["solve"] for r in rs)
            its = rs[0]["solver_iterations"]["mean"]
            chosen = ", ".join(sorted({c["chosen"] for r in rs for c in r.get("preconditioner", {}).values()}))
            med, best = statistics.median(wall[t]), min(wall[t])
            speed = ""
            if t == 2:
                speed = (f"{statistics.median(wall[1]) / med:.2f}x, "
                         f"{min(wall[1]) / best:.2f}x")
            print(f"| {scene} | {t} | {med:.2f} | {best:.2f} | {solve:.2f} | {its:.1f} | {chosen} | {speed} |")
            table.append(dict(scene=scene, threads=t, wall_median=med, wall_fastest=best,
                              solve_median=solve, iterations=its, chosen=chosen, walls=wall[t]))
    if a.json:
        Path(a.json).parent.mkdir(parents=True, exist_ok=True)
        Path(a.json).write_text(json.dumps(table, indent=1))


if __name__ == "__main__":
    main()

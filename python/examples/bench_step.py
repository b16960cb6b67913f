"""Python call overhead per `World.step()` on scenes/bar.toml (450 tets), measured in one
process: 1000 calls of step() against one step(1000) call (the same steps looped in Rust),
and step(0) (a call that takes no step), repeated and interleaved; medians. Prints JSON.
Usage: python bench_step.py [--threads N] [--repeats R]"""
import argparse
import json
import pathlib
import statistics
import time

import supple

ap = argparse.ArgumentParser()
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--repeats", type=int, default=7)
ap.add_argument("--steps", type=int, default=1000)
args = ap.parse_args()
scene = pathlib.Path(__file__).resolve().parents[2] / "scenes" / "bar.toml"


def fresh():
    w = supple.load_scene(scene, threads=args.threads)
    w.step(5)  # as `supple bench --warmup 5`
    return w


looped, called, per_call, empty = [], [], [], []
for _ in range(args.repeats):
    w = fresh()
    t = time.perf_counter()
    w.step(args.steps)
    looped.append((time.perf_counter() - t) / args.steps)
    w = fresh()
    times = []
    t0 = time.perf_counter()
    for _ in range(args.steps):
        t = time.perf_counter()
        w.step()
        times.append(time.perf_counter() - t)
    called.append((time.perf_counter() - t0) / args.steps)
    per_call.append(statistics.median(times))
    t = time.perf_counter()
    for _ in range(args.steps):
        w.step(0)
    empty.append((time.perf_counter() - t) / args.steps)

ms = lambda v: round(1e3 * statistics.median(v), 4)  # noqa: E731
rust, python = ms(looped), ms(called)
print(json.dumps({
    "threads": args.threads, "steps": args.steps, "repeats": args.repeats,
    "rust_loop_ms_per_step": rust,
    "python_calls_ms_per_step": python,
    "python_call_median_ms": ms(per_call),
    "empty_call_ms": ms(empty),
    "overhead_percent": round(100 * (python - rust) / rust, 2),
    "empty_call_percent_of_step": round(100 * ms(empty) / rust, 2),
}, indent=1))

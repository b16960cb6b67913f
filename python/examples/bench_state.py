"""What saving and restoring a world costs (`World.state()`, `World.set_state()`), on the
bundled bar (scenes/bar.toml, 450 tets): for states saved after N steps, the time of
`state()`, the size of the pickled state, the time of a restore after stepping on 10 steps
(a rebuild and N replayed steps), of a restore forward from the world's own past (only the
steps in between), and of `reset()`, beside the time of one step. Prints JSON.

    python python/examples/bench_state.py [--threads 1] [--steps 100 300 1000]
"""

import argparse
import json
import pathlib
import pickle
import time

import supple

BAR = pathlib.Path(__file__).resolve().parents[2] / "scenes" / "bar.toml"


def timed(f):
    t = time.perf_counter()
    f()
    return (time.perf_counter() - t) * 1e3


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--steps", type=int, nargs="+", default=[100, 300, 1000])
    args = p.parse_args()
    rows = []
    for n in args.steps:
        world = supple.load_scene(BAR, threads=args.threads)
        step_ms = timed(lambda: world.step(n)) / n
        saved = None

        def save():
            nonlocal saved
            saved = world.state()

        save_ms = timed(save)
        data = pickle.dumps(saved)
        world.step(10)
        ahead = world.state()
        back_ms = timed(lambda: world.set_state(saved))
        forward_ms = timed(lambda: world.set_state(ahead))
        reset_ms = timed(world.reset)
        rows.append({
            "steps": n,
            "step_ms": round(step_ms, 4),
            "state_ms": round(save_ms, 4),
            "pickled_bytes": len(data),
            "restore_back_ms": round(back_ms, 2),
            "restore_forward_10_ms": round(forward_ms, 2),
            "reset_ms": round(reset_ms, 2),
        })
    print(json.dumps({"threads": args.threads, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()

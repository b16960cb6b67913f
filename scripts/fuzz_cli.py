#!/usr/bin/env python3
"""Fuzzes the `supple` binary as a user would meet it: mutated scenes through `supple run`,
mutated mesh files (every reader's format) through `supple run`, mutated surfaces through
`supple mesh`, and mutated run folders through `supple render`.

The bad-input corpus (`crates/supple-io/tests/corpus`) mutates inputs in-process, through
the library. This script drives the built binary instead, one process per case, so that it
also sees what only a process shows: an abort (an allocation failure, a stack overflow), a
signal, a hang, the exit status. Each case runs under `timeout` seconds of wall clock and an
address-space limit (`RLIMIT_AS`, 2 GiB by default, as `ulimit -v 2097152`).

A case fails when the process panics (exit status 101 or "panicked at" on stderr), dies of a
signal (SIGABRT, SIGSEGV, ...), or runs past the timeout. Everything else (exit 0, 1, 2, 3)
is an answer. The run is seeded: case N of a seed is the same input on every machine, and a
failing case is written out under `--keep` to rerun by hand (`--only N` reruns one case).

Run from the repository root after `cargo build --release -p supple-cli`:

    nice python3 scripts/fuzz_cli.py --cases 3000 --seed 45 --work /tmp/supple-fuzz

Python standard library only.
"""

import argparse
import os
import random
import re
import resource
import shutil
import signal
import struct
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Scenes small enough that a few steps take well under a second.
BASE_SCENES = [
    "scenes/bar.toml",
    "scenes/mueller_bars.toml",
    "scenes/tube_drop.toml",
    "scenes/grab_tube.toml",
    "scenes/hanging_link.toml",
    "scenes/head_on.toml",
    "scenes/falling_torus.toml",
    "scenes/torus_post.toml",
    "scenes/snapping_torus.toml",
    "scenes/tube_obstacles.toml",
    "scenes/self_fold.toml",
    "scenes/hauth_bar.toml",
    "scenes/adaptive_poke.toml",
    "scenes/bars_linear_vs_corotational.toml",
    "scenes/mueller_bars_springs.toml",
    "scenes/guide/gmsh_drop.toml",
]

# Mesh files of every reader (crates/supple-io/tests/data: made by its make_data.py).
DATA = "crates/supple-io/tests/data"
BASE_MESHES = [
    ("cube.node", ["cube.node", "cube.ele"]),
    ("cube.mesh", ["cube.mesh"]),
    ("cube.vtk", ["cube.vtk"]),
    ("cube42.vtk", ["cube42.vtk"]),
    ("cube42_bin.vtk", ["cube42_bin.vtk"]),
    ("cube_bin.vtk", ["cube_bin.vtk"]),
    ("cube_ascii.vtu", ["cube_ascii.vtu"]),
    ("cube_zlib.vtu", ["cube_zlib.vtu"]),
    ("cube_gmsh22.msh", ["cube_gmsh22.msh"]),
    ("cube_gmsh22_bin.msh", ["cube_gmsh22_bin.msh"]),
    ("cube_gmsh41.msh", ["cube_gmsh41.msh"]),
    ("cube_gmsh41_bin.msh", ["cube_gmsh41_bin.msh"]),
    ("mixed_gmsh22.msh", ["mixed_gmsh22.msh"]),
    ("mixed_gmsh22_bin.msh", ["mixed_gmsh22_bin.msh"]),
]

EXTREMES = [
    "0", "-0.0", "-1", "1", "2", "7", "1e308", "-1e308", "1e-308", "5e-324", "nan", "inf",
    "-inf", "1e9", "-1e9", "1e15", "1e-9", "4294967295", "4294967296", "2147483648",
    "9223372036854775807", "18446744073709551616", "0.5", "100000", "3.0e38", "1e155",
]
WRONG = ['"x"', '""', "[]", "[1, 2]", "{}", "true", "[[1]]", '{ a = 1 }', "[nan, nan, nan]",
         "[1e308, -1e308, 1e308]", "[0, 0, 0]", "[-1, -1, -1]", "[1e9, 1e9, 1e9]"]
KEYS = ["dt", "duration", "gravity", "velocity", "cells", "cell_size", "youngs", "poisson",
        "density", "radius", "half_extents", "normal", "scale", "translate", "rotate_deg",
        "frame_every", "gif_size", "tolerance", "max_iterations", "friction", "spacing",
        "thickness", "alpha", "beta", "stiffness", "release", "point", "position", "model",
        "kind", "response", "shape", "path", "min", "max", "self_collision"]
MODELS = ['"linear"', '"warped"', '"corotational"', '"stvk"', '"neo_hookean"',
          '"fixed_corotated"', '"liesenfeld_stolfi"', '"mass_spring"', '"bogus"']
INTEGRATORS = ['"backward_euler"', '"backward_euler_linearized"', '"static"',
               '"symplectic_euler"', '"rkf45"', '"newmark"', '"bdf2"', '"nope"']
RESPONSES = ['"ipc"', '"projection"', '"springs"', '"auto"', '"none"']
SHAPES = ['"plane"', '"sphere"', '"box"', '"capsule"', '"torus"']
NUM = re.compile(rb"-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def sign(rng, n):
    return rng.choice([-1, 1]) * n


def mutate_text(rng, data, log, kind):
    """One mutation of a text file; `kind` is "toml" or "mesh". Appends what it did to log."""
    lines = data.split(b"\n")
    op = rng.randrange(12 if kind == "toml" else 10)
    if op == 0:  # a number replaced by an extreme one
        hits = list(NUM.finditer(data))
        if hits:
            m = rng.choice(hits)
            new = rng.choice(EXTREMES).encode()
            log.append(f"number@{m.start()} {m.group().decode()}->{new.decode()}")
            return data[:m.start()] + new + data[m.end():]
    if op == 1:  # a number scaled or negated
        hits = list(NUM.finditer(data))
        if hits:
            m = rng.choice(hits)
            try:
                v = float(m.group())
            except ValueError:
                v = 1.0
            f = rng.choice([-1.0, 10.0, 1e3, 1e-3, 0.0, 1e6, 1.5])
            s = repr(v * f)
            if kind == "toml" and "." not in s and "e" not in s and "n" not in s:
                s = str(int(v * f)) if rng.random() < 0.5 else s
            log.append(f"scale@{m.start()} {m.group().decode()}*{f}")
            return data[:m.start()] + s.encode() + data[m.end():]
    if op == 2 and len(lines) > 1:  # a line deleted
        i = rng.randrange(len(lines))
        log.append(f"delete line {i + 1}")
        return b"\n".join(lines[:i] + lines[i + 1:])
    if op == 3 and lines:  # a line repeated
        i = rng.randrange(len(lines))
        n = rng.choice([1, 2, 5])
        log.append(f"repeat line {i + 1} x{n}")
        return b"\n".join(lines[:i] + [lines[i]] * (n + 1) + lines[i + 1:])
    if op == 4 and len(lines) > 1:  # two lines swapped
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
        log.append(f"swap lines {i + 1},{j + 1}")
        return b"\n".join(lines)
    if op == 5 and data:  # truncated
        n = rng.randrange(len(data))
        log.append(f"truncate at {n}")
        return data[:n]
    if op == 6 and data:  # random bytes
        n = rng.randrange(len(data))
        junk = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 6)))
        log.append(f"bytes@{n} {junk.hex()}")
        return data[:n] + junk + data[n + rng.randrange(3):]
    if op == 7:  # a token split at whitespace replaced
        toks = list(re.finditer(rb"[^\s,=\[\]{}]+", data))
        if toks:
            m = rng.choice(toks)
            new = rng.choice(EXTREMES + ["-", "e", "1e", "0x10", "..", "#", "\"", "x"]).encode()
            log.append(f"token@{m.start()} {m.group()[:20]!r}->{new.decode()}")
            return data[:m.start()] + new + data[m.end():]
    if op == 8 and lines:  # a line doubled in place (longer records)
        i = rng.randrange(len(lines))
        log.append(f"append line {i + 1} to itself")
        lines[i] = lines[i] + b" " + lines[i]
        return b"\n".join(lines)
    if op == 9 and lines:  # a number list grown or emptied
        i = rng.randrange(len(lines))
        nums = NUM.findall(lines[i])
        if nums:
            extra = rng.choice([b"", b" ".join(nums * 3), b" 0 0 0", b" -1"])
            log.append(f"line {i + 1} tail {extra[:20]!r}")
            lines[i] = lines[i] + extra if extra else NUM.sub(b"", lines[i], count=1)
            return b"\n".join(lines)
    if kind == "toml":
        if op == 10:  # a known key set to a wrong or extreme value
            key = rng.choice(KEYS)
            pat = re.compile(rb"(\b" + key.encode() + rb"\s*=\s*)([^,\n}]+(?:\[[^\]\n]*\])?)")
            hits = list(pat.finditer(data))
            pool = EXTREMES + WRONG
            if key == "model":
                pool = MODELS + WRONG
            elif key == "kind":
                pool = INTEGRATORS + WRONG
            elif key == "response":
                pool = RESPONSES
            elif key == "shape":
                pool = SHAPES
            new = rng.choice(pool).encode()
            if hits:
                m = rng.choice(hits)
                log.append(f"key {key}@{m.start()} -> {new.decode()}")
                return data[:m.start(2)] + new + data[m.end(2):]
            if lines:
                i = rng.randrange(len(lines))
                log.append(f"insert {key} = {new.decode()} before line {i + 1}")
                return b"\n".join(lines[:i] + [key.encode() + b" = " + new] + lines[i:])
        if op == 11:  # a whole table appended
            table = rng.choice([
                '[[obstacle]]\nname = "o{n}"\nshape = "sphere"\nradius = {v}\nposition = [0, {w}, 0]\n',
                '[[obstacle]]\nname = "o{n}"\nshape = "box"\nhalf_extents = [{v}, {v}, {v}]\n',
                '[[obstacle]]\nname = "o{n}"\nshape = "capsule"\nradius = {v}\nhalf_length = {w}\n',
                '[[obstacle]]\nname = "o{n}"\nshape = "plane"\nnormal = [{v}, 1, 0]\npoint = [0, {w}, 0]\n',
                '[contact]\nresponse = {r}\nthickness = {v}\n',
                '[step_control]\nhalvings = {n}\n',
                '[[body]]\nname = "extra{n}"\nmesh = {{ kind = "box", cells = [{n}, 1, 1], cell_size = {v} }}\n'
                'material = {{ model = {m}, youngs = 1e5, poisson = 0.3, density = 1000.0 }}\n',
                '[output]\nframe_every = {n}\ngif_size = [{n}, {n}]\n',
            ])
            text = table.format(n=rng.choice([0, 1, 2, 3, 50]), v=rng.choice(EXTREMES),
                                w=rng.choice(EXTREMES), r=rng.choice(RESPONSES),
                                m=rng.choice(MODELS))
            log.append("append table " + text.split("\n")[0] + " " + text.replace("\n", "; ")[:80])
            return data + b"\n" + text.encode()
    # Fallback: flip one byte.
    if data:
        n = rng.randrange(len(data))
        b = bytes([data[n] ^ (1 << rng.randrange(8))])
        log.append(f"flip byte {n}")
        return data[:n] + b + data[n + 1:]
    return data


def mutate_binary(rng, data, log):
    """One mutation of a binary file: a 4- or 8-byte word overwritten, a span cut or copied."""
    if not data:
        return data
    op = rng.randrange(4)
    n = rng.randrange(len(data))
    if op == 0:
        word = rng.choice([struct.pack("<i", -1), struct.pack("<I", 2**31), struct.pack("<d", 1e308),
                           struct.pack("<d", float("nan")), struct.pack("<q", 2**62),
                           struct.pack(">i", -1), struct.pack(">d", float("inf")), b"\0" * 8])
        log.append(f"word@{n} {word.hex()}")
        return data[:n] + word + data[n + len(word):]
    if op == 1:
        m = rng.randrange(1, 64)
        log.append(f"cut {m}@{n}")
        return data[:n] + data[n + m:]
    if op == 2:
        m = rng.randrange(1, 64)
        log.append(f"copy {m}@{n}")
        return data[:n] + data[n:n + m] * 2 + data[n + m:]
    log.append(f"flip byte {n}")
    return data[:n] + bytes([data[n] ^ (1 << rng.randrange(8))]) + data[n + 1:]


def is_binary(data):
    return b"\0" in data[:4096] or any(b > 127 for b in data[:4096])


def mutate_file(rng, data, log, kind, count):
    for _ in range(count):
        if is_binary(data) and rng.random() < 0.6:
            data = mutate_binary(rng, data, log)
        else:
            data = mutate_text(rng, data, log, kind)
    return data


def cube_surface():
    """A closed unit cube of 12 triangles: (OBJ text, ASCII STL text, binary STL bytes)."""
    v = [(x, y, z) for x in (0, 1) for y in (0, 1) for z in (0, 1)]
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    tris = []
    for a, b, c, d in quads:
        tris += [(a, b, c), (a, c, d)]
    obj = "".join(f"v {x} {y} {z}\n" for x, y, z in v)
    obj += "".join(f"f {a + 1} {b + 1} {c + 1}\n" for a, b, c in tris)
    stl = "solid cube\n"
    binary = b"\0" * 80 + struct.pack("<I", len(tris))
    for t in tris:
        stl += " facet normal 0 0 0\n  outer loop\n"
        for k in t:
            stl += "   vertex %g %g %g\n" % v[k]
        stl += "  endloop\n endfacet\n"
        binary += struct.pack("<3f", 0, 0, 0)
        for k in t:
            binary += struct.pack("<3f", *v[k])
        binary += b"\0\0"
    stl += "endsolid cube\n"
    return obj.encode(), stl.encode(), binary


def absolute_paths(text, scene_path):
    """Mesh paths of a bundled scene made absolute (the case runs in another folder)."""
    base = os.path.dirname(os.path.join(ROOT, scene_path))

    def fix(m):
        p = m.group(2)
        full = os.path.normpath(os.path.join(base, p.decode()))
        return m.group(1) + full.encode() + b'"'
    return re.sub(rb'(path\s*=\s*")([^"]+)"', fix, text)


def tiny_mesh_scene(mesh_name):
    return (
        'name = "fuzz"\ndt = 0.01\nduration = 0.02\ngravity = [0.0, -9.81, 0.0]\n\n'
        '[integrator]\nkind = "backward_euler_linearized"\n\n'
        '[[body]]\nname = "b"\n'
        f'mesh = {{ kind = "file", path = "{mesh_name}" }}\n'
        'transform = { translate = [0.0, 0.5, 0.0] }\n'
        'material = { model = "corotational", youngs = 1e5, poisson = 0.33, density = 1000.0 }\n\n'
        '[[obstacle]]\nname = "ground"\nshape = "plane"\npoint = [0.0, 0.0, 0.0]\n'
        'normal = [0.0, 1.0, 0.0]\n'
    ).encode()


class Limits:
    def __init__(self, address_space, timeout):
        self.address_space = address_space
        self.timeout = timeout

    def preexec(self):
        resource.setrlimit(resource.RLIMIT_AS, (self.address_space, self.address_space))
        os.setsid()


def run(cmd, limits, cwd):
    """Runs one command; returns (outcome, exit status, stderr tail, seconds)."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            preexec_fn=limits.preexec)
    try:
        _, err = proc.communicate(timeout=limits.timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return "hang", None, "", time.monotonic() - start
    wall = time.monotonic() - start
    err = err.decode("utf-8", "replace")
    code = proc.returncode
    if code == 101 or "panicked at" in err:
        outcome = "panic"
    elif code < 0:
        outcome = "abort" if code == -signal.SIGABRT else f"signal {-code}"
    elif "memory allocation of" in err:
        outcome = "abort"
    else:
        outcome = f"exit {code}"
    return outcome, code, err[-2000:], wall


def make_render_base(binary, work, limits):
    """A finished run of the bar (frames, metrics, summary) for render cases to mutate."""
    base = os.path.join(work, "render_base")
    if os.path.exists(os.path.join(base, "scene.pvd")):
        return base
    cmd = [binary, "--threads", "1", "run", os.path.join(ROOT, "scenes/bar.toml"), "--out", base,
           "-q", "--duration", "0.05", "--set", "output.frame_every=1", "--set", "output.gif=false"]
    outcome, code, err, _ = run(cmd, limits, work)
    if code not in (0, 2, 3):
        sys.exit(f"the render base run failed: {outcome}\n{err}")
    return base


def case(n, seed, binary, work, limits, render_base, surfaces):
    """Builds and runs case n; returns (suite, outcome, log, stderr, seconds, folder)."""
    rng = random.Random(f"{seed}:{n}")
    folder = os.path.join(work, f"case{n:05d}")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    log = []
    count = rng.choice([1, 1, 1, 2, 3])
    suite = rng.choices(["scene", "mesh", "surface", "render"], weights=[40, 25, 15, 20])[0]
    out = os.path.join(folder, "out")
    duration = rng.choice(["0.01", "0.02", "0.03"])
    run_cmd = [binary, "--threads", "1", "run"]
    if suite == "scene":
        path = rng.choice(BASE_SCENES)
        with open(os.path.join(ROOT, path), "rb") as f:
            text = absolute_paths(f.read(), path)
        log.append(path)
        text = mutate_file(rng, text, log, "toml", count)
        with open(os.path.join(folder, "scene.toml"), "wb") as f:
            f.write(text)
        cmd = run_cmd + ["scene.toml", "--out", out, "-q", "--duration", duration,
                         "--set", "output.gif=false"]
    elif suite == "mesh":
        main, files = rng.choice(BASE_MESHES)
        log.append(main)
        target = rng.choice(files)
        for name in files:
            with open(os.path.join(ROOT, DATA, name), "rb") as f:
                data = f.read()
            if name == target:
                data = mutate_file(rng, data, log, "mesh", count)
            with open(os.path.join(folder, name), "wb") as f:
                f.write(data)
        with open(os.path.join(folder, "scene.toml"), "wb") as f:
            f.write(tiny_mesh_scene(main))
        cmd = run_cmd + ["scene.toml", "--out", out, "-q", "--duration", duration,
                         "--set", "output.gif=false"]
    elif suite == "surface":
        name, data = rng.choice(list(surfaces.items()))
        log.append(name)
        data = mutate_file(rng, data, log, "mesh", count)
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)
        spacing = rng.choice(["0.2", "0.25", "0.5", "1", "0.1", "1e-3", "1e299", "-1", "0",
                              "nan", "inf", "5e-324"])
        fmt = rng.choice(["tetgen", "vtu"])
        log.append(f"--spacing {spacing} --format {fmt}")
        cmd = [binary, "--threads", "1", "mesh", name, f"--spacing={spacing}", "--out",
               os.path.join(folder, "filled"), "--format", fmt]
    else:
        dest = os.path.join(folder, "run")
        shutil.copytree(render_base, dest)
        files = []
        for d, _, names in os.walk(dest):
            for name in names:
                if not name.endswith(".png") and not name.endswith(".gif"):
                    files.append(os.path.relpath(os.path.join(d, name), dest))
        files.sort()
        for _ in range(count):
            name = rng.choice(files)
            full = os.path.join(dest, name)
            if rng.random() < 0.1:
                log.append(f"remove {name}")
                if os.path.exists(full):
                    os.remove(full)
                continue
            if not os.path.exists(full):
                continue
            with open(full, "rb") as f:
                data = f.read()
            sub = []
            data = mutate_file(rng, data, sub, "mesh", 1)
            log.append(f"{name}: " + "; ".join(sub))
            with open(full, "wb") as f:
                f.write(data)
        args = ["--size", rng.choice(["64x48", "32x32", "16x16", "96x64"]),
                "--gif-size", rng.choice(["32x24", "16x16"]),
                "--color", rng.choice(["body", "displacement", "von_mises"]),
                "--png-every", rng.choice(["0", "1", "3"])]
        log.append(" ".join(args))
        cmd = [binary, "--threads", "1", "render", dest, "-q"] + args
    outcome, code, err, wall = run(cmd, limits, folder)
    return suite, outcome, log, err, wall, folder, cmd


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", default=os.path.join(ROOT, "target/release/supple"))
    ap.add_argument("--cases", type=int, default=3000)
    ap.add_argument("--first", type=int, default=0, help="first case number")
    ap.add_argument("--only", type=int, help="run this one case and keep its folder")
    ap.add_argument("--seed", default="45")
    ap.add_argument("--work", default="/tmp/supple-fuzz")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--address-space", type=int, default=2 * 1024**3,
                    help="RLIMIT_AS per run in bytes (default 2 GiB)")
    ap.add_argument("--keep", default=None,
                    help="copy the folder of every failing case here (default: WORK/failures)")
    args = ap.parse_args()
    binary = os.path.abspath(args.binary)
    work = os.path.abspath(args.work)
    keep = args.keep or os.path.join(work, "failures")
    os.makedirs(work, exist_ok=True)
    limits = Limits(args.address_space, args.timeout)
    render_base = make_render_base(binary, work, limits)
    obj, stl, stl_bin = cube_surface()
    with open(os.path.join(ROOT, "scenes/meshes/bunny.obj"), "rb") as f:
        bunny = f.read()
    surfaces = {"cube.obj": obj, "cube.stl": stl, "cube_bin.stl": stl_bin, "bunny.obj": bunny}
    cases = [args.only] if args.only is not None else range(args.first, args.first + args.cases)
    counts = {}
    failures = []
    slowest = (0.0, None)
    start = time.monotonic()
    for n in cases:
        suite, outcome, log, err, wall, folder, cmd = case(
            n, args.seed, binary, work, limits, render_base, surfaces)
        counts.setdefault(suite, {}).setdefault(outcome, 0)
        counts[suite][outcome] += 1
        if wall > slowest[0]:
            slowest = (wall, n)
        bad = outcome in ("panic", "hang", "abort") or outcome.startswith("signal")
        if bad or args.only is not None:
            last = err.strip().splitlines()[-1:] if err.strip() else [""]
            print(f"case {n} [{suite}] {outcome} {wall:.1f} s: {' | '.join(log)}\n"
                  f"  {' '.join(cmd)}\n  {last[0][:300]}", flush=True)
        if bad:
            failures.append(n)
            os.makedirs(keep, exist_ok=True)
            shutil.rmtree(os.path.join(keep, os.path.basename(folder)), ignore_errors=True)
            shutil.copytree(folder, os.path.join(keep, os.path.basename(folder)))
        if args.only is None:
            shutil.rmtree(folder, ignore_errors=True)
        done = n - args.first + 1
        if args.only is None and done % 100 == 0:
            print(f"... {done} cases, {time.monotonic() - start:.0f} s, failures {failures}",
                  file=sys.stderr, flush=True)
    total = sum(sum(c.values()) for c in counts.values())
    print(f"\n{total} cases (seed {args.seed}, cases {args.first}..{args.first + total - 1}) in "
          f"{time.monotonic() - start:.0f} s; slowest case {slowest[1]} ({slowest[0]:.1f} s)")
    for suite in sorted(counts):
        parts = ", ".join(f"{k}: {v}" for k, v in sorted(counts[suite].items()))
        print(f"  {suite}: {parts}")
    print(f"failing cases (panic, hang, abort, signal): {failures if failures else 'none'}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

"""Tests of the `supple` Python module (run by .ci/run after building and installing the
wheel). The bar tests compare against the `supple` program: set SUPPLE_BIN to it (.ci/run
does); without it they look in the cargo target folder and are skipped if it is absent."""

import os
import pathlib
import subprocess
import threading
import time

import numpy as np
import pytest

import supple

REPO = pathlib.Path(__file__).resolve().parents[3]
BAR = REPO / "scenes" / "bar.toml"


def supple_bin():
    if os.environ.get("SUPPLE_BIN"):
        return os.environ["SUPPLE_BIN"]
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    path = target / "release" / "supple"
    if not path.exists():
        pytest.skip(f"no supple program at {path} (set SUPPLE_BIN)")
    return str(path)


def run_cli(scene, out, duration):
    subprocess.run(
        [supple_bin(), "run", str(scene), "--out", str(out), "--duration", str(duration), "--quiet"],
        check=True,
    )


def bar_from_python(**world):
    """The bar of scenes/bar.toml, built from arrays and keywords (not from the file)."""
    mesh = supple.TetMesh.box(cells=(10, 3, 3), cell_size=0.1, split=5)
    clamped = np.flatnonzero(mesh.vertices[:, 0] <= 0.0)
    bar = supple.Body(mesh, name="bar", model="corotational", youngs=1e5, poisson=0.33,
                      density=1000.0, fixed=clamped)
    settings = dict(dt=0.01, gravity=(0.0, -9.81, 0.0), integrator="backward_euler_linearized",
                    solver={"kind": "pcg", "tolerance": 1e-6, "max_iterations": 1000})
    settings.update(world)
    return supple.World([bar], **settings)


def free_cube(**body):
    mesh = supple.TetMesh.box(cells=(2, 2, 2), cell_size=0.1)
    return supple.World([supple.Body(mesh, name="cube", youngs=1e5, poisson=0.3, **body)],
                        dt=0.01, gravity=(0, 0, 0),
                        solver={"kind": "pcg", "tolerance": 1e-12, "max_iterations": 1000})


def permuted_box(seed=3):
    mesh = supple.TetMesh.box(cells=(3, 2, 2), cell_size=0.1)
    perm = np.random.default_rng(seed).permutation(mesh.n_vertices)
    inverse = np.argsort(perm)
    return mesh, perm, mesh.vertices[perm], inverse[mesh.tets]


def test_arrays_keep_order_and_dtype():
    _, _, vertices, tets = permuted_box()
    mesh = supple.TetMesh(vertices, tets.astype(np.int32))
    assert mesh.vertices.dtype == np.float64 and mesh.vertices.shape == vertices.shape
    assert np.array_equal(mesh.vertices, vertices)
    assert mesh.tets.dtype == np.int64 and np.array_equal(mesh.tets, tets)
    # float32 in: the same numbers out as float64.
    mesh32 = supple.TetMesh(vertices.astype(np.float32), tets)
    assert np.array_equal(mesh32.vertices, vertices.astype(np.float32).astype(np.float64))
    world = supple.World([supple.Body(mesh, name="b", youngs=1e5, poisson=0.3)], gravity=(0, 0, 0))
    x = world.positions("b")
    assert x.dtype == np.float64 and x.shape == (mesh.n_vertices, 3) and x.flags.c_contiguous
    assert np.array_equal(x, vertices)
    x[0] = 99.0  # a copy: the world is unchanged
    assert np.array_equal(world.positions("b"), vertices)
    v = np.random.default_rng(1).normal(size=vertices.shape)
    world.set_velocities("b", v)
    assert np.array_equal(world.velocities("b"), v)
    moved = vertices + 0.01
    world.set_positions("b", moved)
    assert np.array_equal(world.positions(), moved)
    with pytest.raises(ValueError, match="rows"):
        world.set_positions("b", moved[:-1])


def test_stepping_follows_the_callers_order():
    mesh, perm, vertices, tets = permuted_box()
    fixed = lambda m: np.flatnonzero(m.vertices[:, 0] <= 0.0)  # noqa: E731
    pm = supple.TetMesh(vertices, tets)
    a = supple.World([supple.Body(mesh, youngs=1e5, poisson=0.3, fixed=fixed(mesh))])
    b = supple.World([supple.Body(pm, youngs=1e5, poisson=0.3, fixed=fixed(pm))])
    a.step(20)
    b.step(20)
    # Same motion vertex by vertex (the solves differ in rounding only).
    assert np.allclose(b.positions(), a.positions()[perm], rtol=0, atol=1e-7)
    assert np.abs(a.positions() - mesh.vertices).max() > 1e-3


def test_inverted_tet_refused_with_its_index():
    mesh = supple.TetMesh.box(cells=(2, 1, 1), cell_size=0.1)
    tets = mesh.tets
    tets[7, [0, 1]] = tets[7, [1, 0]]
    with pytest.raises(ValueError, match=r"tet 7: .*inverted"):
        supple.TetMesh(mesh.vertices, tets)
    with pytest.raises(ValueError, match="integers"):
        supple.TetMesh(mesh.vertices, mesh.tets.astype(float))
    with pytest.raises(ValueError, match=r"\(n, 3\)"):
        supple.TetMesh(mesh.vertices[:, :2], mesh.tets)


def test_bar_from_python_is_bitwise_the_cli_run(tmp_path):
    steps = 40
    run_cli(BAR, tmp_path, steps * 0.01)
    frames = sorted((tmp_path / "frames").glob("frame_*.vtu"))
    last = supple.TetMesh.load(frames[-1]).vertices
    world = bar_from_python()
    world.step(steps)
    assert world.steps == steps
    assert np.array_equal(world.positions("bar"), last)
    scene = supple.load_scene(BAR)
    scene.step(steps)
    assert np.array_equal(scene.positions("bar"), last)
    # Not trivially equal: the bar moved.
    assert np.abs(last - supple.TetMesh.box(cells=(10, 3, 3), cell_size=0.1).vertices).max() > 1e-3


def test_run_writes_what_the_cli_writes(tmp_path):
    run_cli(BAR, tmp_path / "cli", 0.2)
    summary = supple.load_scene(BAR).run(out=tmp_path / "py", duration=0.2, quiet=True)
    assert summary["steps"] == 20 and summary["diverged"] is False
    names = lambda d: sorted(p.relative_to(d).as_posix() for p in d.rglob("*") if p.is_file())  # noqa: E731
    assert names(tmp_path / "cli") == names(tmp_path / "py")
    for f in (tmp_path / "cli" / "frames").glob("*.vtu"):
        assert f.read_bytes() == (tmp_path / "py" / "frames" / f.name).read_bytes()


def test_a_run_that_ends_invalid_raises_invalid_with_the_summary(tmp_path):
    # Two boxes placed inside each other, at rest, with body contact and the projection
    # response: they stay inside each other, so the run's end state fails the verdict (its
    # files are all written). The default response (IPC) refuses the crossing start.
    bodies = lambda: [
        supple.Body(supple.TetMesh.box(cells=(2, 2, 2), cell_size=0.05, origin=origin),
                    name=name, youngs=1e5, poisson=0.3)
        for name, origin in [("a", (0.0, 0.0, 0.0)), ("b", (0.06, 0.01, 0.01))]
    ]
    output = {"gif": False, "png_every": 0, "plots": False}
    world = supple.World(bodies(), dt=0.01, gravity=(0, 0, 0), contact={"body_collision": True},
                         duration=0.05, output=output)
    with pytest.raises(supple.Diverged, match="touch or cross at the step's start"):
        world.run(out=tmp_path / "ipc", quiet=True)
    world = supple.World(bodies(), dt=0.01, gravity=(0, 0, 0),
                         contact={"body_collision": True, "response": "projection"},
                         duration=0.05, output=output)
    with pytest.raises(supple.Invalid) as info:
        world.run(out=tmp_path / "o", quiet=True)
    e = info.value
    assert e.rules == ["interpenetration", "interpenetration"]
    assert e.summary["invalid"] is True and e.summary["interpenetrating_vertices_end"] == 8
    assert "inside another body" in str(e)
    assert (tmp_path / "o" / "summary.json").exists()


@pytest.mark.parametrize(
    "body, world, key",
    [
        (dict(poisson=0.5), {}, "poisson"),
        (dict(youngs=-1.0), {}, "youngs"),
        (dict(density=0.0), {}, "density"),
        (dict(model="rubber"), {}, "model"),
        (dict(damping=(-1.0, 0.0)), {}, "damping.alpha"),
        ({}, dict(dt=-0.01), "dt"),
        ({}, dict(integrator="leapfrog"), "integrator"),
        ({}, dict(solver={"kind": "pcg", "tolerance": 0.0}), "solver.tolerance"),
    ],
)
def test_bad_parameter_raises_value_error_naming_it(body, world, key):
    mesh = supple.TetMesh.box(cells=(2, 1, 1), cell_size=0.1)
    args = dict(youngs=1e5, poisson=0.3)
    args.update(body)
    with pytest.raises(ValueError, match=key):
        supple.World([supple.Body(mesh, **args)], **world)


def test_divergence_raises_diverged():
    world = supple.World(
        [supple.Body(supple.TetMesh.box(cells=(2, 2, 2), cell_size=0.1), name="cube",
                     youngs=1e9, poisson=0.3, fixed=[0])],
        dt=0.05, integrator={"kind": "symplectic_euler", "substeps": 1},
        step_control={"max_halvings": 0})
    v = np.zeros((27, 3))
    v[-1] = (0.0, 50.0, 0.0)
    world.set_velocities("cube", v)
    with pytest.raises(supple.Diverged) as info:
        world.step(100)
    e = info.value
    assert e.body == "cube" and 1 <= e.step <= 100 and e.reason
    assert "diverged" in str(e)


def test_step_releases_the_gil():
    world = bar_from_python()
    world.step(5)
    t0 = time.perf_counter()
    world.step(100)
    per_step = (time.perf_counter() - t0) / 100
    n = max(200, int(0.6 / per_step))
    started = threading.Event()
    span = []

    def worker():
        started.set()
        span.append(time.perf_counter())
        world.step(n)
        span.append(time.perf_counter())

    thread = threading.Thread(target=worker)
    thread.start()
    started.wait()
    ticks = []
    while thread.is_alive():
        ticks.append(time.perf_counter())
    thread.join()
    t0, t1 = span
    assert t1 - t0 > 0.3
    # This thread's loop went on through the step: no stall longer than a quarter of it
    # between the step's start, the loop's ticks inside it, and its end. With the GIL held
    # by the step, the first tick would come only after the step.
    inside = [t0] + [t for t in ticks if t0 < t < t1] + [t1]
    assert max(np.diff(inside)) < 0.25 * (t1 - t0), (max(np.diff(inside)), t1 - t0, len(inside))


def test_apply_forces_changes_momentum_by_force_times_dt():
    world = free_cube()
    assert np.allclose(world.momentum("cube"), 0.0)
    idx = np.array([0, 5, 26])
    forces = np.array([[1.0, 2.0, 0.0], [0.0, -1.0, 3.0], [4.0, 0.0, 0.5]])
    world.apply_forces("cube", idx, forces)
    world.step()
    expected = forces.sum(axis=0) * world.dt
    p1 = np.array(world.momentum("cube"))
    assert np.allclose(p1, expected, rtol=1e-8, atol=1e-12)
    m = np.array(world.masses("cube"))
    assert np.allclose((m[:, None] * world.velocities("cube")).sum(axis=0), p1, rtol=1e-12)
    world.step()  # forces last one step: momentum is kept after it
    assert np.allclose(world.momentum("cube"), p1, rtol=1e-8, atol=1e-12)
    with pytest.raises(ValueError):
        world.apply_forces("cube", [0, 1], forces)


def test_grab_pulls_the_tip():
    world = bar_from_python(gravity=(0, 0, 0))
    gid = world.grab("bar", (1.0, 0.3, 0.3), stiffness=100.0, damping=1.0)
    world.move_grab(gid, (1.0, 0.5, 0.3))
    world.step(10)
    assert world.grab_force(gid)[1] > 0.0
    assert world.positions("bar")[:, 1].max() > 0.3 + 1e-3
    world.release(gid)
    assert world.grab_force(gid) is None
    with pytest.raises(ValueError):
        world.release(gid)


def test_exact_constraints_and_rigid_cores():
    world = bar_from_python()
    cid = world.constrain("bar", (1.0, 0.3, 0.3))
    world.step(20)
    # The tip corner is held exactly: the bar hangs between its clamp and this point.
    assert world.constraint_residual() <= 1e-8
    assert world.constraint_force(cid)[1] > 0.0
    world.release_constraint(cid)
    assert world.constraint_force(cid) is None
    with pytest.raises(ValueError, match="normal: required"):
        world.constrain("bar", (1.0, 0.3, 0.3), "plane")
    with pytest.raises(ValueError, match="center: not a key"):
        world.constrain("bar", (1.0, 0.3, 0.3), "plane", normal=(0, 1, 0), center=(0, 0, 0))
    x = world.positions("bar")
    tip = [i for i in range(len(x)) if x[i, 0] > 0.85]
    assert world.add_rigid_core("bar", tip) == 0
    world.step(5)
    with pytest.raises(ValueError, match="rigid core"):
        world.add_rigid_core("bar", tip[:2])


def test_energies_stats_and_names():
    world = bar_from_python()
    world.step(3)
    e = world.energies()["bar"]
    assert e["kinetic"] > 0 and e["elastic"] > 0 and e["gravity"] < 0
    s = world.stats()
    assert s["steps"] == 3 and s["bodies"]["bar"]["solver_converged"]
    assert world.body_names == ["bar"]
    with pytest.raises(ValueError, match="no body"):
        world.positions("nope")


def test_load_scene_errors():
    with pytest.raises(OSError):
        supple.load_scene(REPO / "scenes" / "no_such_scene.toml")


def test_stubs_cover_the_module():
    import ast

    stub = pathlib.Path(supple.__file__).with_name("__init__.pyi")
    tree = ast.parse(stub.read_text())
    classes = {c.name: c for c in tree.body if isinstance(c, ast.ClassDef)}
    for name in ["TetMesh", "Body", "World", "State", "Diverged", "Invalid", "Sweep"]:
        assert name in classes, name
    for name in ["TetMesh", "Body", "World", "State", "Sweep"]:
        stubbed = {f.name for f in classes[name].body
                   if isinstance(f, ast.FunctionDef) and not f.name.startswith("_")}
        public = {m for m in dir(getattr(supple, name)) if not m.startswith("_")}
        assert public == stubbed, (name, public ^ stubbed)
    functions = {f.name for f in tree.body if isinstance(f, ast.FunctionDef)}
    assert functions == {"load_scene", "read_vtu", "resolve_scene", "run_scene", "sweep",
                         "load_sweep"}, functions
    assert (pathlib.Path(supple.__file__).with_name("py.typed")).exists()


def test_reading_while_another_thread_steps():
    # In a child process: a deadlock (a reader holding the GIL while waiting for the world,
    # the stepping thread waiting for the GIL) would hang it, and the timeout catches that.
    code = f"""
import sys, threading
sys.path.insert(0, {str(pathlib.Path(__file__).parent)!r})
from test_supple import bar_from_python
world = bar_from_python()
stepper = threading.Thread(target=world.step, args=(400,))
stepper.start()
reads = 0
while stepper.is_alive():
    world.positions("bar")
    reads += 1
stepper.join()
assert world.steps == 400, world.steps
print(reads)
"""
    import sys
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) >= 1


def test_loaders_read_what_the_scenes_read(tmp_path):
    tube = supple.TetMesh.load(REPO / "scenes" / "meshes" / "tube_solid_1k.node")
    assert tube.n_tets == 1034 and tube.vertices.dtype == np.float64
    # A Gmsh 2.2 file with a physical group: its vertices become a region for `fixed`.
    msh = tmp_path / "two.msh"
    msh.write_text(
        "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$PhysicalNames\n1\n2 7 \"base\"\n$EndPhysicalNames\n"
        "$Nodes\n5\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n5 1 1 1\n$EndNodes\n"
        "$Elements\n3\n1 2 2 7 7 1 2 3\n2 4 2 1 1 1 2 3 4\n3 4 2 1 1 2 3 4 5\n$EndElements\n")
    two = supple.TetMesh.load(msh, orient="fix")
    assert two.n_tets == 2 and sorted(two.regions["base"].tolist()) == [0, 1, 2]
    world = supple.World([supple.Body(two, youngs=1e5, poisson=0.3, fixed=[{"region": "base"}])])
    world.step(2)
    assert np.array_equal(world.positions()[:3], two.vertices[:3])
    assert not np.array_equal(world.positions()[3:], two.vertices[3:])
    with pytest.raises(OSError):
        supple.TetMesh.load(tmp_path / "missing.msh")
    stuffed = supple.TetMesh.from_surface(REPO / "scenes" / "meshes" / "bunny.obj", spacing=0.8)
    assert stuffed.n_tets > 100 and stuffed.notes

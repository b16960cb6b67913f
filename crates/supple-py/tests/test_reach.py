"""Python reaches what the engine has (issue 42, item 5): stresses and volume ratios, boundary
and embedded surfaces, frames written from a scripted loop, saved and restored states, and
numpy arrays from every getter. Compared with the `supple` program where it writes the same
thing (SUPPLE_BIN, see test_supple.py)."""

import csv
import pickle

import numpy as np
import pytest

import supple
from test_supple import BAR, bar_from_python, run_cli


def bits(a):
    """The exact bits of a float64 array (NaN-safe, -0.0 distinct from 0.0)."""
    return np.ascontiguousarray(a, dtype=np.float64).view(np.uint64)


def test_stresses_are_the_frames_von_mises_bitwise(tmp_path):
    run_cli(BAR, tmp_path, 0.1)  # 10 steps, a frame every 2
    last = supple.read_vtu(tmp_path / "frames" / "frame_00005.vtu")
    world = supple.load_scene(BAR)
    world.step(10)
    vm = world.von_mises("bar")
    assert vm.dtype == np.float64 and vm.shape == (450,)
    assert np.array_equal(bits(vm), bits(last["cell_data"]["von_mises"]))
    ratios = world.volume_ratios("bar")
    assert np.array_equal(bits(ratios), bits(last["cell_data"]["volume_ratio"]))
    assert np.array_equal(bits(world.positions("bar")), bits(last["points"]))
    assert np.array_equal(world.tets("bar"), last["tets"])
    # The bar sags: stressed, and some tets are compressed, some stretched.
    assert vm.max() > 10.0 and ratios.min() < 1.0 < ratios.max()
    sigma = world.cauchy_stress("bar")
    assert sigma.shape == (450, 3, 3) and np.allclose(sigma, sigma.transpose(0, 2, 1))
    s = sigma - np.trace(sigma, axis1=1, axis2=2)[:, None, None] / 3 * np.eye(3)
    assert np.allclose(np.sqrt(1.5 * (s * s).sum(axis=(1, 2))), vm, rtol=1e-12, atol=0)


def test_write_frame_from_a_loop_writes_what_supple_run_writes(tmp_path):
    run_cli(BAR, tmp_path / "cli", 0.1)
    world = supple.load_scene(BAR)
    out = tmp_path / "py"
    assert world.write_frame(out) == 0
    for _ in range(10):
        world.step()
        if world.steps % 2 == 0:
            world.write_frame(out)
    cli_frames = sorted(p.name for p in (tmp_path / "cli" / "frames").iterdir())
    assert sorted(p.name for p in (out / "frames").iterdir()) == cli_frames
    for name in cli_frames:
        assert (out / "frames" / name).read_bytes() == (tmp_path / "cli" / "frames" / name).read_bytes()
    assert (out / "scene.pvd").read_bytes() == (tmp_path / "cli" / "scene.pvd").read_bytes()
    # metrics.csv: the same columns and numbers, but the wall time of the steps.
    rows = lambda d: list(csv.DictReader(open(d / "metrics.csv")))  # noqa: E731
    py_rows, cli_rows = rows(out), rows(tmp_path / "cli")
    assert len(py_rows) == 6 and py_rows[0].keys() == cli_rows[0].keys()
    for a, b in zip(py_rows, cli_rows):
        a.pop("wall_ms_step"), b.pop("wall_ms_step")
        assert a == b
    # Read back: the positions written are the world's.
    back = supple.read_vtu(out / "frames" / "frame_00005.vtu")
    assert np.array_equal(bits(back["points"]), bits(world.positions("bar")))
    assert np.array_equal(back["point_data"]["velocity"], world.velocities("bar"))
    # Another folder starts afresh; the same folder again removes its old frames.
    world.write_frame(tmp_path / "other")
    assert world.write_frame(out) == 0 and len(list((out / "frames").iterdir())) == 1


def test_state_round_trip_is_bitwise_and_pickles():
    world = bar_from_python()
    world.step(7)
    # Forces and a grab are part of the state as well as the steps.
    world.apply_forces("bar", [5, 9], [[0.0, 3.0, 0.0], [1.0, 0.0, 0.0]])
    gid = world.grab("bar", (1.0, 0.3, 0.3), stiffness=50.0, damping=0.5)
    world.move_grab(gid, (1.0, 0.4, 0.3))
    world.step(3)
    saved = world.state()
    assert saved.steps == 10 and saved.time == world.time
    x10, v10 = world.positions("bar"), world.velocities("bar")
    world.step(5)
    on_x, on_v = world.positions("bar"), world.velocities("bar")
    world.set_state(saved)
    assert world.steps == 10
    assert np.array_equal(bits(world.positions("bar")), bits(x10))
    assert np.array_equal(bits(world.velocities("bar")), bits(v10))
    world.step(5)
    assert np.array_equal(bits(world.positions("bar")), bits(on_x))
    assert np.array_equal(bits(world.velocities("bar")), bits(on_v))
    # Through pickle, into another world of the same scene.
    other = bar_from_python()
    other.set_state(pickle.loads(pickle.dumps(saved)))
    other.step(5)
    assert np.array_equal(bits(other.positions("bar")), bits(on_x))
    assert other.grab_force(gid) is not None
    # Forward from the world's own past: only the steps in between are taken.
    later = world.state()
    world.set_state(saved)
    world.set_state(later)
    assert np.array_equal(bits(world.positions("bar")), bits(on_x))


def test_positions_and_velocities_alone_do_not_restore_the_step():
    # What the state holds beyond the arrays matters: the PCG's warm start extrapolates from
    # the last velocities, so a fresh world given only x and v steps to other bits.
    world = bar_from_python()
    world.step(10)
    x, v = world.positions("bar"), world.velocities("bar")
    world.step(1)
    fresh = bar_from_python()
    fresh.set_positions("bar", x)
    fresh.set_velocities("bar", v)
    fresh.step(1)
    assert not np.array_equal(bits(fresh.positions("bar")), bits(world.positions("bar")))


def test_reset_and_foreign_or_broken_states():
    world = bar_from_python()
    world.step(6)
    x6 = world.positions("bar")
    world.reset()
    assert world.time == 0.0 and world.steps == 0
    assert np.array_equal(world.positions("bar"), supple.TetMesh.box(cells=(10, 3, 3), cell_size=0.1).vertices)
    world.step(6)
    assert np.array_equal(bits(world.positions("bar")), bits(x6))
    cube = supple.World([supple.Body(supple.TetMesh.box(cells=(1, 1, 1), cell_size=0.1), name="cube",
                                     youngs=1e5, poisson=0.3)])
    with pytest.raises(ValueError, match="bodies"):
        world.set_state(cube.state())
    # Same bodies, another scene (weaker gravity): the replay ends elsewhere, and the check
    # of the saved arrays refuses it instead of restoring a state that was never saved.
    lighter = bar_from_python(gravity=(0.0, -5.0, 0.0))
    lighter.step(2)
    with pytest.raises(RuntimeError, match="could not be restored"):
        lighter.set_state(world.state())
    assert lighter.steps == 0 and lighter.time == 0.0
    data = bytes(world.state())
    with pytest.raises(ValueError, match="ends early"):
        supple.State(data[:-3])
    with pytest.raises(ValueError, match="SUPPLEST"):
        supple.State(b"not a state")


def test_getters_are_numpy_arrays():
    world = bar_from_python()
    cid = world.constrain("bar", (1.0, 0.3, 0.3))
    gid = world.grab("bar", (1.0, 0.0, 0.0), stiffness=10.0)
    world.step(2)
    arrays = {
        "positions": (world.positions("bar"), (176, 3)),
        "velocities": (world.velocities("bar"), (176, 3)),
        "masses": (world.masses("bar"), (176,)),
        "momentum": (world.momentum("bar"), (3,)),
        "grab_force": (world.grab_force(gid), (3,)),
        "constraint_force": (world.constraint_force(cid), (3,)),
        "von_mises": (world.von_mises("bar"), (450,)),
        "volume_ratios": (world.volume_ratios("bar"), (450,)),
        "cauchy_stress": (world.cauchy_stress("bar"), (450, 3, 3)),
    }
    for name, (a, shape) in arrays.items():
        assert isinstance(a, np.ndarray) and a.dtype == np.float64 and a.shape == shape, name
    assert np.isclose(world.masses("bar").sum(), 1000.0 * 1.0 * 0.3 * 0.3)
    assert world.tets("bar").dtype == np.int64 and world.tets("bar").shape == (450, 4)


def test_boundary_faces_close_the_body_outward():
    world = bar_from_python()
    faces, owner = world.boundary_faces("bar", tets=True)
    # Two triangles per cube face on the box's surface: 2 (10·3 + 10·3 + 3·3) · 2.
    assert faces.dtype == np.int64 and faces.shape == (276, 3) and owner.shape == (276,)
    assert np.array_equal(world.boundary_faces("bar"), faces)
    tets = world.tets("bar")
    assert all(set(f) <= set(tets[t]) for f, t in zip(faces, owner))
    # Outward and closed: the divergence theorem gives the volume back.
    x = world.positions("bar")
    a, b, c = x[faces[:, 0]], x[faces[:, 1]], x[faces[:, 2]]
    assert np.isclose(np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0, 0.09, rtol=1e-12)


def test_embedded_surface_follows_the_body(tmp_path):
    skin = tmp_path / "skin.obj"
    skin.write_text("v 0.2 0.05 0.05\nv 0.8 0.05 0.05\nv 0.5 0.25 0.05\nv 0.5 0.15 0.25\n"
                    "f 1 3 2\nf 1 2 4\nf 2 3 4\nf 3 1 4\n")
    mesh = supple.TetMesh.box(cells=(10, 3, 3), cell_size=0.1)
    bar = supple.Body(mesh, name="bar", youngs=1e5, poisson=0.33,
                      fixed=np.flatnonzero(mesh.vertices[:, 0] <= 0.0), surface=skin)
    world = supple.World([bar])
    points, triangles = world.surface("bar")
    assert points.shape == (4, 3) and triangles.tolist() == [[0, 2, 1], [0, 1, 3], [1, 2, 3], [2, 0, 3]]
    assert np.allclose(points[1], [0.8, 0.05, 0.05], atol=1e-12)
    world.step(10)
    moved, _ = world.surface("bar")
    assert moved[1, 1] < 0.05 - 1e-4  # the bar sags and carries its skin
    world.write_frame(tmp_path / "out")
    assert (tmp_path / "out" / "surface.pvd").exists()
    assert (tmp_path / "out" / "frames" / "surface_00000.vtp").exists()
    assert bar_from_python().surface("bar") is None


@pytest.mark.parametrize("integrator", ["bdf2", "backward_euler_linearized"])
def test_state_with_contact_and_history_is_bitwise(integrator):
    # A cube dropped on a rough ground: contact (held vertices, friction) and, with BDF2,
    # the scheme's history are part of what the next step depends on.
    def drop():
        mesh = supple.TetMesh.box(cells=(2, 2, 2), cell_size=0.05, origin=(0.0, 0.02, 0.0))
        return supple.World([supple.Body(mesh, name="cube", youngs=1e5, poisson=0.3)],
                            dt=0.005, integrator=integrator,
                            obstacles=[{"name": "ground", "shape": "plane", "point": [0, 0, 0],
                                        "normal": [0, 1, 0], "friction": 0.3}])
    world = drop()
    world.step(20)
    assert world.positions("cube")[:, 1].min() < 1e-3  # on the ground
    saved = world.state()
    world.step(15)
    on = world.positions("cube")
    other = drop()
    other.set_state(pickle.loads(pickle.dumps(saved)))
    other.step(15)
    assert np.array_equal(bits(other.positions("cube")), bits(on))
    assert np.array_equal(bits(other.velocities("cube")), bits(world.velocities("cube")))


def test_a_diverged_world_restores_to_its_failed_state():
    # The failed step is part of the record: replayed, it fails again at the same step, and
    # the restored world holds the same failed state.
    def exploding():
        w = supple.World(
            [supple.Body(supple.TetMesh.box(cells=(2, 2, 2), cell_size=0.1), name="cube",
                         youngs=1e9, poisson=0.3, fixed=[0])],
            dt=0.05, integrator={"kind": "symplectic_euler", "substeps": 1},
            step_control={"max_halvings": 0})
        v = np.zeros((27, 3))
        v[-1] = (0.0, 50.0, 0.0)
        w.set_velocities("cube", v)
        return w
    world = exploding()
    with pytest.raises(supple.Diverged):
        world.step(100)
    failed = world.state()
    x = world.positions("cube")
    other = exploding()
    other.set_state(failed)
    assert other.steps == world.steps
    assert np.array_equal(bits(other.positions("cube")), bits(x))


def test_view_serves_a_scene_and_stops(tmp_path):
    # `supple.view` runs `supple view`: a stand-in page folder (index.html and the wasm
    # file it checks for), the bundled bar scene preloaded, no browser.
    from test_supple import BAR, supple_bin

    www = tmp_path / "www"
    (www / "pkg").mkdir(parents=True)
    (www / "index.html").write_text("<!doctype html><title>stand-in</title>")
    (www / "pkg" / "supple_web.wasm").write_bytes(b"\0asm")
    import urllib.request

    with supple.view(BAR, open_browser=False, www=www, program=supple_bin()) as v:
        assert v.url.startswith("http://127.0.0.1:") and v.url.endswith("index.html?view")
        with urllib.request.urlopen(v.url, timeout=10) as r:
            assert r.status == 200 and b"stand-in" in r.read()
        manifest = v.url.replace("index.html?view", "view/manifest.json")
        with urllib.request.urlopen(manifest, timeout=10) as r:
            assert b"bar" in r.read()
    assert v.process.returncode == 0, v.process.returncode
    with pytest.raises(TypeError):
        supple.view(object())
    with pytest.raises(RuntimeError, match="view did not start"):
        supple.view(tmp_path / "missing.toml", open_browser=False, www=www, program=supple_bin())


def test_view_hands_over_a_scripted_world_as_it_is_now(tmp_path):
    # `supple.view(world)`: the world's scene (its file, or for World(...) the scene written
    # out with its meshes) and its state now, which `supple view --state` checks against the
    # scene's world before serving; the page starts from it (browser-test/viewer.mjs).
    import json
    import os
    import urllib.request

    from test_supple import supple_bin

    www = tmp_path / "www"
    (www / "pkg").mkdir(parents=True)
    (www / "index.html").write_text("<!doctype html><title>stand-in</title>")
    (www / "pkg" / "supple_web.wasm").write_bytes(b"\0asm")

    def get(v, path):
        with urllib.request.urlopen(v.url.replace("index.html?view", path), timeout=10) as r:
            return r.read()

    for world in [supple.load_scene(BAR), bar_from_python()]:
        world.step(7)
        world.set_velocities("bar", world.velocities("bar") * 1.5)  # a script's own change
        with supple.view(world, open_browser=False, www=www, program=supple_bin()) as v:
            manifest = json.loads(get(v, "view/manifest.json"))
            assert manifest["state"] == "view/state"
            state = json.loads(get(v, "view/state"))
            assert state["steps"] == 7 and state["time"] == world.time
            body = state["bodies"][0]
            assert body["name"] == "bar"
            assert np.array_equal(bits(np.array(body["x"])), bits(world.positions("bar")))
            assert np.array_equal(bits(np.array(body["v"])), bits(world.velocities("bar")))
            paths = sorted(f["path"] for f in manifest["files"])
            if world.name == "bar":  # scenes/bar.toml: its generated box needs no file
                assert paths == [] and "kind = \"box\"" in manifest["text"]
            else:  # World(...): the mesh as a TetGen pair, the clamp by vertex index
                assert paths == ["body0.ele", "body0.node"], paths
                assert "tetgen" in manifest["text"] and "vertices" in manifest["text"]
            folder = v._folder
            assert os.path.isdir(folder)
        assert v.process.returncode == 0 and not os.path.exists(folder)
    # A diverged world is refused before anything is started.
    world = bar_from_python()
    world.set_positions("bar", np.full_like(world.positions("bar"), np.nan))
    with pytest.raises(ValueError, match="not finite"):
        supple.view(world, open_browser=False, www=www, program=supple_bin())

"""Supple: real-time soft-body simulation (tetrahedral FEM) from Python.

Arrays go in and out as numpy arrays, copied, in your vertex order: vertices and
positions ``(n, 3)`` float64, tets ``(m, 4)`` integers.

    >>> import supple
    >>> mesh = supple.TetMesh.box(cells=(10, 3, 3), cell_size=0.1)
    >>> bar = supple.Body(mesh, name="bar", model="corotational", youngs=1e5,
    ...                   poisson=0.33, density=1000.0, fixed=[0, 11, 22])
    >>> world = supple.World([bar], dt=0.01)
    >>> world.step(10)
    >>> world.positions("bar").shape
    (176, 3)

Bodies and worlds take the keys of Supple's scene files (see the README) and are
validated by the same code: a bad value raises ``ValueError`` naming its key. A step
that fails raises ``supple.Diverged``; a run whose end state fails its verdict raises
``supple.Invalid``. ``load_scene(path)`` builds the world of a scene
file; ``World.run(out=...)`` writes what ``supple run`` writes, and
``World.write_frame(out)`` writes the same frame files from a scripted loop
(``read_vtu`` reads them back). Stresses (``von_mises``, ``cauchy_stress``),
``volume_ratios``, ``boundary_faces`` and ``surface`` are numpy arrays;
``World.state()`` / ``set_state(s)`` save and restore a world bit for bit (the
state pickles) and ``reset()`` starts it over. ``supple.ipc`` has the
geometry of the IPC contact step (distances, barrier, mollifier, CCD) as plain functions.
``supple.view(path)`` serves the browser page of ``supple view`` for a scene or mesh file.
``supple.sweep(scene, {key: [values]}, out=...)`` runs a scene over a grid of its keys on
a Dask cluster (resumable, one folder per variant, a pandas table; needs
``dask.distributed``, ``pandas`` and ``pyarrow``), ``load_sweep(out)`` reads one back, and
``run_scene`` / ``resolve_scene`` run and validate a scene file with ``--set`` overrides.
"""

from . import ipc
from .view import Viewer, view
from ._sweep import sweep
from ._sweep_load import Sweep, load_sweep
from ._supple import (
    Body,
    Diverged,
    Invalid,
    State,
    TetMesh,
    World,
    __version__,
    load_scene,
    read_vtu,
    resolve_scene,
    run_scene,
)

__all__ = [
    "Body",
    "Diverged",
    "Invalid",
    "State",
    "TetMesh",
    "World",
    "load_scene",
    "read_vtu",
    "resolve_scene",
    "run_scene",
    "sweep",
    "Sweep",
    "load_sweep",
    "view",
    "Viewer",
    "__version__",
    "ipc",
]

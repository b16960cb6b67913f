"""Type stubs of the `supple` module (the native part is `supple._supple`)."""

import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from . import ipc as ipc
from .view import Viewer as Viewer, view as view

__version__: str

_Path = Union[str, "os.PathLike[str]"]
_Vec3 = Union[Sequence[float], npt.NDArray[np.floating]]
_Indices = Union[Sequence[int], npt.NDArray[np.integer]]
_Section = Union[str, Dict[str, Any]]

class Diverged(RuntimeError):
    """A step left a body in an unusable state; the world keeps the failed state."""

    body: str
    step: int
    time: float
    reason: str

class Invalid(RuntimeError):
    """A run took every step but its end state fails the verdict (files all written)."""

    reasons: List[str]
    rules: List[str]
    summary: Dict[str, Any]

class TetMesh:
    """Vertices `(n, 3)` float64 and positively oriented tets `(m, 4)`, validated."""

    def __init__(self, vertices: npt.ArrayLike, tets: npt.ArrayLike) -> None: ...
    @staticmethod
    def box(
        cells: Sequence[int],
        cell_size: Union[float, Sequence[float]],
        origin: Optional[_Vec3] = None,
        split: int = 5,
    ) -> "TetMesh": ...
    @staticmethod
    def load(path: _Path, kind: Optional[str] = None, orient: str = "check") -> "TetMesh": ...
    @staticmethod
    def from_surface(path: _Path, spacing: float) -> "TetMesh": ...
    @property
    def vertices(self) -> npt.NDArray[np.float64]: ...
    @property
    def tets(self) -> npt.NDArray[np.int64]: ...
    @property
    def n_vertices(self) -> int: ...
    @property
    def n_tets(self) -> int: ...
    @property
    def regions(self) -> Dict[str, npt.NDArray[np.int64]]: ...
    @property
    def notes(self) -> List[str]: ...
    def volume(self) -> float: ...

class Body:
    """A mesh and the options of a scene file's `[[body]]`."""

    def __init__(
        self,
        mesh: TetMesh,
        *,
        name: Optional[str] = None,
        model: str = "corotational",
        youngs: Optional[float] = None,
        poisson: Optional[float] = None,
        density: float = 1000.0,
        fixed: Union[_Indices, Sequence[Dict[str, Any]], None] = None,
        damping: Union[Tuple[float, float], Dict[str, float], None] = None,
        mass: Optional[str] = None,
        velocity: Optional[_Vec3] = None,
        material: Optional[Dict[str, Any]] = None,
        viscosity: Optional[Dict[str, Any]] = None,
        transform: Optional[Dict[str, Any]] = None,
        surface: Optional[_Path] = None,
    ) -> None: ...
    @property
    def mesh(self) -> TetMesh: ...
    @property
    def name(self) -> Optional[str]: ...

class World:
    """Bodies stepped in time; arrays in and out by body name."""

    def __init__(
        self,
        bodies: Sequence[Body],
        *,
        dt: float = 0.01,
        gravity: Optional[_Vec3] = None,
        integrator: Optional[_Section] = None,
        solver: Optional[_Section] = None,
        threads: Optional[int] = None,
        contact: Optional[Dict[str, Any]] = None,
        obstacles: Optional[Sequence[Dict[str, Any]]] = None,
        step_control: Optional[Dict[str, Any]] = None,
        output: Optional[Dict[str, Any]] = None,
        probes: Optional[Sequence[Dict[str, Any]]] = None,
        loads: Optional[Sequence[Dict[str, Any]]] = None,
        constraints: Optional[Sequence[Dict[str, Any]]] = None,
        grabs: Optional[Sequence[Dict[str, Any]]] = None,
        duration: float = 1.0,
        name: str = "world",
    ) -> None: ...
    def step(self, n: int = 1) -> None: ...
    def positions(self, name: Optional[str] = None) -> npt.NDArray[np.float64]: ...
    def velocities(self, name: Optional[str] = None) -> npt.NDArray[np.float64]: ...
    def set_positions(self, name: Optional[str], x: npt.ArrayLike) -> None: ...
    def set_velocities(self, name: Optional[str], v: npt.ArrayLike) -> None: ...
    def apply_forces(self, name: Optional[str], indices: _Indices, forces: npt.ArrayLike) -> None: ...
    def masses(self, name: Optional[str] = None) -> npt.NDArray[np.float64]: ...
    def momentum(self, name: Optional[str] = None) -> npt.NDArray[np.float64]: ...
    def von_mises(self, name: Optional[str] = None) -> Optional[npt.NDArray[np.float64]]: ...
    def cauchy_stress(self, name: Optional[str] = None) -> Optional[npt.NDArray[np.float64]]: ...
    def volume_ratios(self, name: Optional[str] = None) -> npt.NDArray[np.float64]: ...
    def tets(self, name: Optional[str] = None) -> npt.NDArray[np.int64]: ...
    def boundary_faces(
        self, name: Optional[str] = None, *, tets: bool = False
    ) -> Union[
        npt.NDArray[np.int64], Tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]
    ]: ...
    def surface(
        self, name: Optional[str] = None
    ) -> Optional[Tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]]: ...
    def write_frame(self, out: _Path) -> int: ...
    def state(self) -> "State": ...
    def set_state(self, state: "State") -> None: ...
    def reset(self) -> None: ...
    def energies(self) -> Dict[str, Dict[str, Optional[float]]]: ...
    def stats(self) -> Dict[str, Any]: ...
    def grab(
        self, name: Optional[str], point: _Vec3, stiffness: float, damping: float = 0.0
    ) -> int: ...
    def grab_point(
        self,
        name: Optional[str],
        vertices: _Indices,
        weights: Sequence[float],
        stiffness: float,
        damping: float = 0.0,
    ) -> int: ...
    def move_grab(self, id: int, target: _Vec3) -> None: ...
    def release(self, id: int) -> None: ...
    def grab_force(self, id: int) -> Optional[npt.NDArray[np.float64]]: ...
    def scripted_grabs(self) -> List[Tuple[str, int]]: ...
    def constrain(
        self,
        name: Optional[str],
        point: _Vec3,
        kind: str = "point",
        *,
        path: Optional[Sequence[Sequence[float]]] = None,
        normal: Optional[_Vec3] = None,
        origin: Optional[_Vec3] = None,
        center: Optional[_Vec3] = None,
        radius: Optional[float] = None,
        other: Optional[str] = None,
        other_point: Optional[_Vec3] = None,
        release: Optional[float] = None,
    ) -> int: ...
    def constraint_force(self, id: int) -> Optional[npt.NDArray[np.float64]]: ...
    def release_constraint(self, id: int) -> None: ...
    def constraint_residual(self) -> float: ...
    def add_rigid_core(self, name: Optional[str], vertices: _Indices) -> int: ...
    @property
    def time(self) -> float: ...
    @property
    def steps(self) -> int: ...
    @property
    def dt(self) -> float: ...
    @property
    def body_names(self) -> List[str]: ...
    @property
    def name(self) -> str: ...
    @property
    def duration(self) -> float: ...
    def run(
        self,
        out: Optional[_Path] = None,
        duration: Optional[float] = None,
        quiet: bool = False,
        force: bool = False,
    ) -> Dict[str, Any]: ...

class State:
    """A saved `World` state (`World.state()`): picklable, restored bit for bit."""

    def __init__(self, data: bytes) -> None: ...
    def __bytes__(self) -> bytes: ...
    @property
    def time(self) -> float: ...
    @property
    def steps(self) -> int: ...

def load_scene(path: _Path, threads: Optional[int] = None) -> World: ...
def read_vtu(path: _Path) -> Dict[str, Any]: ...
def resolve_scene(path: _Path, set: Sequence[str] = ..., force: bool = False) -> str: ...
def run_scene(
    path: _Path,
    out: _Path,
    set: Sequence[str] = ...,
    threads: Optional[int] = None,
    force: bool = False,
) -> Dict[str, Any]: ...
def sweep(
    scene: _Path,
    params: Union[Dict[str, Sequence[Any]], Sequence[Dict[str, Any]], None] = None,
    mode: Union[str, Sequence[Dict[str, Any]]] = "grid",
    out: _Path = "study",
    client: Any = None,
    keep: Sequence[str] = ("summary", "metrics", "final_positions"),
    set: Optional[Dict[str, Any]] = None,
    workers: Optional[int] = None,
    threads: int = 1,
    retries: int = 2,
    force: bool = False,
    progress: Any = None,
) -> Any: ...

class Sweep:
    """A sweep folder read back (`load_sweep`)."""

    path: Any
    table: Any
    def folder(self, variant: Union[str, int]) -> Any: ...
    def record(self, variant: Union[str, int]) -> Optional[Dict[str, Any]]: ...
    def summary(self, variant: Union[str, int]) -> Dict[str, Any]: ...
    def metrics(self, variants: Optional[Sequence[Union[str, int]]] = None) -> Any: ...
    def final_positions(self, variant: Union[str, int]) -> Dict[str, npt.NDArray[np.float64]]: ...
    def trajectory(self, variant: Union[str, int]) -> Dict[str, npt.NDArray[np.float64]]: ...

def load_sweep(out: _Path) -> Sweep: ...

"""The geometry of Supple's IPC contact step, exposed for checking and for users who need it.

These are the functions Supple's Incremental Potential Contact step (Li et al. 2020) is built
from (Rust: ``supple::contact::ipc``), called one pair at a time:

- squared distances with gradients and Hessians: ``point_point_distance2``,
  ``point_edge_distance2``, ``point_triangle_distance2``, ``edge_edge_distance2`` (segments and
  triangles, by closest feature) and the primitives ``point_line_distance2``,
  ``point_plane_distance2``, ``line_line_distance2``; each with ``_gradient`` and ``_hessian``;
- the closest-feature classification: ``point_edge_case``, ``point_triangle_case``,
  ``edge_edge_case``, returning IPC's names of the distance types (``"P_T"``, ``"EA_EB"``, ...);
- IPC's log barrier on squared distances: ``barrier``, ``barrier_first_derivative``,
  ``barrier_second_derivative``, and the adaptive stiffness ``initial_barrier_stiffness``,
  ``update_barrier_stiffness``;
- the edge-edge mollifier: ``edge_edge_mollifier_threshold``, ``edge_edge_cross_squarednorm``
  (+ gradient, Hessian), ``edge_edge_mollifier`` (+ gradient, Hessian);
- additive CCD (Li et al. 2021): ``point_triangle_accd``, ``edge_edge_accd``,
  ``point_edge_accd``, ``point_point_accd``, from start positions and displacements, returning
  a safe step fraction (``t_max`` when there is no impact);
- friction's smoothing ``f0_sf``, ``f1_sf_over_x``, ``df1_x_minus_f1_over_x3``, closest points
  and tangent bases; the per-stencil ``project_psd``.

Points are float64 arrays (or sequences) of shape ``(3,)``; gradients come back as ``(3k,)``
arrays and Hessians as ``(3k, 3k)``, vertices in argument order. Distances are squared, and so
is the barrier's ``dhat``. A wrong shape raises ``ValueError`` naming the argument.

    >>> from supple import ipc
    >>> ipc.point_triangle_distance2([0, 0, 1], [0, 0, 0], [1, 0, 0], [0, 1, 0])
    1.0
    >>> ipc.point_triangle_case([0.2, 0.2, 1], [0, 0, 0], [1, 0, 0], [0, 1, 0])
    'P_T'
"""

from ._supple import ipc as _native

__all__ = sorted(name for name in dir(_native) if not name.startswith("_"))
globals().update({name: getattr(_native, name) for name in __all__})
del _native

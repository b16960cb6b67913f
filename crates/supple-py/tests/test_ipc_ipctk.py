"""Supple's IPC contact geometry (`supple.ipc`) against IPC Toolkit's Python bindings.

IPC Toolkit (`ipctk` on PyPI, pinned in .ci/run) is the reference implementation of
Incremental Potential Contact by its authors; it shares no code with Supple. These tests
compare, on seeded random and on degenerate configurations: squared distances with
gradients and Hessians and the closest-feature cases; the log barrier and its derivatives
and the adaptive stiffness; the edge-edge mollifier; additive CCD against ipctk's
Tight-Inclusion CCD (a conservative root finder) and against ipctk's own ACCD; friction's
smoothing, closest points and tangent bases; the PSD projection. Where the two disagree by
design (ties between closest features, ipctk's parallel-edge approximation, conventions
outside the domain) the test says so and compares what is comparable; where the distance
itself is in question an exact rational referee (`fractions.Fraction` on the float inputs)
decides.

ipctk missing is an error here, not a skip: CI installs it.

Tolerances: values, gradients and Hessians agree to `RTOL = 1e-9` relative to the largest
entry, with an absolute floor of `1e-12` of the natural scale of rounding (`L·ℓ` for squared
distances, `L` for their gradients, `L/ℓ` for their Hessians; `L` the size of the
coordinates, `ℓ` the extent of the points). The line–line distance
of nearly parallel edges and the plane distance of sliver triangles are ill-conditioned in
the angle θ: there both tolerances grow to a multiple of `eps/sinθ` (`eps/sin²θ` for the
plane's derivatives), measured against exact rational derivatives for both implementations
alike (`conditioning`, test_ill_conditioned_derivatives_exact).
"""

import math
from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np
import pytest

try:
    import ipctk
except ImportError as e:  # not a skip: CI must run these
    raise ImportError(
        "these tests need IPC Toolkit's Python bindings: pip install ipctk==1.6.1 "
        "(.ci/run installs it)"
    ) from e

from supple import ipc

IPCTK_VERSION = "1.6.1"
RTOL = 1e-9
ATOL = 1e-12
EPS = np.finfo(float).eps

ipctk.set_logger_level(ipctk.LoggerLevel.error)  # its degenerate-input warnings


def test_ipctk_is_the_pinned_version():
    # Tolerances and the documented differences below are for this version.
    assert ipctk.__version__ == IPCTK_VERSION


# ---------------------------------------------------------------------------------------
# Helpers.


def assert_close(a, b, scale=1.0, rtol=RTOL, atol=ATOL, what=""):
    """max |a − b| ≤ rtol · max(|a|, |b|) + atol · scale."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    assert a.shape == b.shape, f"{what}: shapes {a.shape} vs {b.shape}"
    if np.array_equal(a, b):  # also equal infinities
        return
    err = np.max(np.abs(a - b)) if a.size else 0.0
    bound = rtol * max(np.max(np.abs(a)), np.max(np.abs(b))) + atol * scale
    assert err <= bound, f"{what}: |Δ| = {err:.3e} > {bound:.3e}\nsupple:\n{a}\nipctk:\n{b}"


def unit(v):
    return v / np.linalg.norm(v)


def sin_angle(u, v):
    nu, nv = np.linalg.norm(u), np.linalg.norm(v)
    if nu == 0 or nv == 0:
        return 0.0
    return np.linalg.norm(np.cross(u, v)) / (nu * nv)


def triangle_sin(t0, t1, t2):
    """Sine of the triangle's smallest angle (0 for a degenerate one)."""
    e = [t1 - t0, t2 - t1, t0 - t2]
    n = np.linalg.norm(np.cross(e[0], -e[2]))
    lengths = sorted(np.linalg.norm(x) for x in e)
    if lengths[0] == 0:
        return 0.0
    return n / (lengths[1] * lengths[2])


def sizes(x):
    """(L, ℓ): the size of the coordinates (at least 1) and the extent of the points. The
    natural scales (rounding of coordinates of size L) are L·ℓ for squared distances, L for
    their gradients, L/ℓ for their Hessians."""
    L = max(1.0, max(np.max(np.abs(v)) for v in x))
    ell = max(np.linalg.norm(a - b) for a in x for b in x)
    return L, max(ell, 1e-300)


def cond_atol(sin, power=1, factor=100):
    """The absolute floor of an ill-conditioned evaluation: `factor · eps / sinᵖ` of the
    natural scale (see the module doc), at least ATOL."""
    return max(ATOL, factor * EPS / sin**power) if sin > 0 else ATOL


# Exact rational referee: the squared distance of the float inputs, computed in
# fractions.Fraction (the minimum of the convex quadratic over the feature domain).
def _q(p):
    return [Fraction(float(c)) for c in p]


def _sub(a, b):
    return [x - y for x, y in zip(a, b)]


def _dot(a, b):
    return sum(x * y for x, y in zip(a, b))


def _pp(p, q):
    d = _sub(p, q)
    return _dot(d, d)


def _pe(p, e0, e1):
    e = _sub(e1, e0)
    len2 = _dot(e, e)
    if len2 == 0:
        return _pp(p, e0)
    t = min(max(_dot(_sub(p, e0), e) / len2, Fraction(0)), Fraction(1))
    return _pp(p, [a + t * b for a, b in zip(e0, e)])


def exact_point_edge(p, e0, e1):
    return float(_pe(_q(p), _q(e0), _q(e1)))


def exact_edge_edge(ea0, ea1, eb0, eb1):
    a0, a1, b0, b1 = map(_q, (ea0, ea1, eb0, eb1))
    u, v, w = _sub(a1, a0), _sub(b1, b0), _sub(a0, b0)
    a, b, c, d, e = _dot(u, u), _dot(u, v), _dot(v, v), _dot(u, w), _dot(v, w)
    den = a * c - b * b
    candidates = [_pe(a0, b0, b1), _pe(a1, b0, b1), _pe(b0, a0, a1), _pe(b1, a0, a1)]
    if den > 0:
        s, t = (b * e - c * d) / den, (a * e - b * d) / den
        if 0 < s < 1 and 0 < t < 1:
            pa = [x + s * y for x, y in zip(a0, u)]
            pb = [x + t * y for x, y in zip(b0, v)]
            candidates.append(_pp(pa, pb))
    return float(min(candidates))


def exact_point_triangle(p, t0, t1, t2):
    p, t0, t1, t2 = map(_q, (p, t0, t1, t2))
    b, c, r = _sub(t1, t0), _sub(t2, t0), _sub(p, t0)
    bb, cc, bc = _dot(b, b), _dot(c, c), _dot(b, c)
    den = bb * cc - bc * bc
    candidates = [_pe(p, t0, t1), _pe(p, t1, t2), _pe(p, t2, t0)]
    if den > 0:
        br, cr = _dot(b, r), _dot(c, r)
        l1, l2 = (cc * br - bc * cr) / den, (bb * cr - bc * br) / den
        if l1 >= 0 and l2 >= 0 and l1 + l2 <= 1:
            candidates.append(_pp(p, [x + l1 * y + l2 * z for x, y, z in zip(t0, b, c)]))
    return float(min(candidates))


# The three kinds of pair: Supple's and ipctk's functions side by side.
KINDS = {
    "point_triangle": dict(
        case=ipc.point_triangle_case,
        d=ipc.point_triangle_distance2,
        g=ipc.point_triangle_distance2_gradient,
        h=ipc.point_triangle_distance2_hessian,
        icase=lambda *x: ipctk.point_triangle_distance_type(*x).name,
        id=ipctk.point_triangle_distance,
        ig=ipctk.point_triangle_distance_gradient,
        ih=ipctk.point_triangle_distance_hessian,
        exact=exact_point_triangle,
    ),
    "edge_edge": dict(
        case=ipc.edge_edge_case,
        d=ipc.edge_edge_distance2,
        g=ipc.edge_edge_distance2_gradient,
        h=ipc.edge_edge_distance2_hessian,
        icase=lambda *x: ipctk.edge_edge_distance_type(*x).name,
        id=ipctk.edge_edge_distance,
        ig=ipctk.edge_edge_distance_gradient,
        ih=ipctk.edge_edge_distance_hessian,
        exact=exact_edge_edge,
    ),
    "point_edge": dict(
        case=ipc.point_edge_case,
        d=ipc.point_edge_distance2,
        g=ipc.point_edge_distance2_gradient,
        h=ipc.point_edge_distance2_hessian,
        icase=lambda *x: ipctk.point_edge_distance_type(*x).name,
        id=ipctk.point_edge_distance,
        ig=ipctk.point_edge_distance_gradient,
        ih=ipctk.point_edge_distance_hessian,
        exact=exact_point_edge,
    ),
}


def conditioning(kind, x, case):
    """(floor for the value, floor for the derivatives) of the case's formula.

    Measured against exact rational derivatives (test_ill_conditioned_derivatives_exact),
    both implementations alike: the line–line distance of edges at angle θ loses
    ~eps/sinθ in the value and up to ~50 eps/sinθ in the derivatives; the plane distance of
    a sliver triangle (smallest angle θ) ~eps/sinθ in the value and ~eps/sin²θ in the
    derivatives (its normal's derivatives are O(1/sinθ) and cancel)."""
    if kind == "edge_edge" and case == "EA_EB":
        sin = sin_angle(x[1] - x[0], x[3] - x[2])
        return cond_atol(sin), cond_atol(sin, factor=1000)
    if kind == "point_triangle" and case == "P_T":
        sin = triangle_sin(*x[1:])
        return cond_atol(sin), cond_atol(sin, power=2)
    return ATOL, ATOL


def compare_pair(kind, x, same_case_required=True):
    """Case, value, gradient and Hessian of one pair against ipctk (the latter two only when
    both pick the same case). Returns (Supple's case, ipctk's case)."""
    f = KINDS[kind]
    x = [np.asarray(v, float) for v in x]
    L, ell = sizes(x)
    case, icase = f["case"](*x), f["icase"](*x)
    if same_case_required:
        assert case == icase, f"{kind} case: supple {case}, ipctk {icase} at {x}"
    # The worse conditioned of the two cases' formulas.
    atol, atol_derivative = np.maximum(conditioning(kind, x, case), conditioning(kind, x, icase))
    rtol, rtol_derivative = max(RTOL, atol), max(RTOL, atol_derivative)
    assert_close(f["d"](*x), f["id"](*x), L * ell, rtol, atol, what=f"{kind} distance² at {x}")
    # Derivatives of the same formula, unless rounding is all they have left.
    if case == icase and atol_derivative <= 1e-3:
        g, gi = f["g"](*x), f["ig"](*x)
        assert_close(g, gi, L, rtol_derivative, atol_derivative, what=f"{kind} gradient at {x}")
        h, hi = f["h"](*x), f["ih"](*x)
        assert_close(h, hi, L / ell, rtol_derivative, atol_derivative, what=f"{kind} Hessian at {x}")
    return case, icase


def assert_exact(kind, x):
    """Supple's distance² against the exact rational referee."""
    x = [np.asarray(v, float) for v in x]
    L, ell = sizes(x)
    f = KINDS[kind]
    case = f["case"](*x)
    atol = conditioning(kind, x, case)[0]
    d, exact = f["d"](*x), f["exact"](*x)
    assert abs(d - exact) <= max(RTOL, atol) * exact + atol * L * ell, (
        f"{kind} distance² {d!r} (case {case}), exact {exact!r}, at {[list(v) for v in x]}"
    )


def _cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def _triple_gradient(a, b, c):
    """Exact gradient of (a·(b×c))² / ‖b×c‖² in (a, b, c)."""
    n = _cross(b, c)
    s, den = _dot(a, n), _dot(n, n)
    d = s * s / den
    ga = [2 * s * x / den for x in n]
    gb = [(2 * s * x - d * 2 * y) / den for x, y in zip(_cross(c, a), _cross(c, n))]
    gc = [(2 * s * x - d * 2 * y) / den for x, y in zip(_cross(a, b), _cross(n, b))]
    return ga, gb, gc


def exact_point_plane_gradient(p, t0, t1, t2):
    p, t0, t1, t2 = map(_q, (p, t0, t1, t2))
    ga, gb, gc = _triple_gradient(_sub(p, t0), _sub(t1, t0), _sub(t2, t0))
    g0 = [-(x + y + z) for x, y, z in zip(ga, gb, gc)]
    return np.array([float(v) for v in ga + g0 + gb + gc])


def exact_line_line_gradient(ea0, ea1, eb0, eb1):
    a0, a1, b0, b1 = map(_q, (ea0, ea1, eb0, eb1))
    gw, gu, gv = _triple_gradient(_sub(b0, a0), _sub(a1, a0), _sub(b1, b0))
    ga0 = [-(x + y) for x, y in zip(gw, gu)]
    gb0 = [x - y for x, y in zip(gw, gv)]
    return np.array([float(v) for v in ga0 + gu + gb0 + gv])


@pytest.mark.parametrize("sin", [1e-2, 1e-4, 1e-6, 1e-8])
def test_ill_conditioned_derivatives_exact(sin):
    """The gradients of the plane distance of sliver triangles and of the line–line
    distance of nearly parallel edges against exact rational ones: both implementations
    lose ~eps/sin²θ (plane) and ~eps/sinθ (lines) of the scale alike, within the floors
    of `conditioning` (the coordinates here are of size 1, so the scale is 1)."""
    rng = np.random.default_rng(int(1e3 - 100 * math.log10(sin)))
    for _ in range(100):
        t0, b = rng.uniform(-1, 1, 3), rng.uniform(-1, 1, 3)
        c = b * rng.uniform(-1.5, 1.5) + sin * unit(np.cross(b, rng.normal(size=3)))
        normal = unit(np.cross(b, c))
        p = t0 + rng.uniform(-0.5, 1.5) * b + rng.uniform(-0.5, 1.5) * c + rng.uniform(0, 1) * normal
        x = [p, t0, t0 + b, t0 + c]
        if sin >= 1e-6:
            exact = exact_point_plane_gradient(*x)
            bound = cond_atol(triangle_sin(*x[1:]), power=2)
            for name, g in [("supple", ipc.point_plane_distance2_gradient(*x)), ("ipctk", ipctk.point_plane_distance_gradient(*x))]:
                assert_close(g, exact, rtol=max(RTOL, bound), atol=bound, what=f"{name} point-plane gradient at {x}")
        x = nearly_parallel_edges(rng, sin)
        exact = exact_line_line_gradient(*x)
        bound = cond_atol(sin_angle(x[1] - x[0], x[3] - x[2]), factor=1000)
        for name, g in [("supple", ipc.line_line_distance2_gradient(*x)), ("ipctk", ipctk.line_line_distance_gradient(*x))]:
            assert_close(g, exact, rtol=max(RTOL, bound), atol=bound, what=f"{name} line-line gradient at {x}")


# ---------------------------------------------------------------------------------------
# Distances: random configurations.


@pytest.mark.parametrize("kind", ["point_triangle", "edge_edge", "point_edge"])
@pytest.mark.parametrize("offset", [0.0, 1e3])
def test_distances_random(kind, offset):
    rng = np.random.default_rng(20250 + len(kind) + int(offset))
    n = {"point_triangle": 4, "edge_edge": 4, "point_edge": 3}[kind]
    for _ in range(1500):
        scale = rng.choice([1.0, 1e-3, 1e2])
        x = rng.uniform(-1, 1, (n, 3)) * scale + offset
        compare_pair(kind, list(x))


def test_primitive_distances_random():
    """Point–point, point–line, point–plane and line–line (no case selection)."""
    rng = np.random.default_rng(7)
    for _ in range(1500):
        x = list(rng.uniform(-1, 1, (4, 3)))
        for ours, theirs, args in [
            ("point_point_distance2", "point_point_distance", x[:2]),
            ("point_line_distance2", "point_line_distance", x[:3]),
            ("point_plane_distance2", "point_plane_distance", x),
            ("line_line_distance2", "line_line_distance", x),
        ]:
            for suffix, scale in [("", 1.0), ("_gradient", 1.0), ("_hessian", 1.0)]:
                a = getattr(ipc, ours + suffix)(*args)
                b = getattr(ipctk, theirs + suffix)(*args)
                assert_close(a, b, scale, what=f"{ours}{suffix} at {args}")


def test_point_point_and_gradient_layout():
    p, q = np.array([0.1, -0.2, 0.3]), np.array([1.0, 2.0, -3.0])
    assert_close(ipc.point_point_distance2(p, q), ipctk.point_point_distance(p, q))
    g = ipc.point_point_distance2_gradient(p, q)
    assert g.shape == (6,) and g.dtype == np.float64
    assert_close(g, np.concatenate([2 * (p - q), -2 * (p - q)]))
    h = ipc.point_point_distance2_hessian(p, q)
    assert h.shape == (6, 6)
    assert_close(h, ipctk.point_point_distance_hessian(p, q))
    # Sequences are accepted as points.
    assert ipc.point_point_distance2([0, 0, 0], (3, 4, 0)) == 25.0


# ---------------------------------------------------------------------------------------
# Distances: degenerate configurations, one by one.

A0, A1 = [0, 0, 0], [1, 0, 0]
T = [[0, 0, 0], [1, 0, 0], [0, 1, 0]]

# (name, kind, points, Supple's case, ipctk's case). Where the two cases differ the
# configuration is a tie (several closest features at the same distance): the value is
# compared, the derivatives (of different formulas) are not.
DEGENERATE = [
    # Edge–edge.
    ("parallel, overlapping", "edge_edge", [A0, A1, [0.3, 0.2, 0.1], [1.7, 0.2, 0.1]], "EA_EB0", "EA_EB0"),
    ("parallel, reversed", "edge_edge", [A0, A1, [1.7, 0.2, 0.1], [0.3, 0.2, 0.1]], "EA_EB1", "EA_EB1"),
    ("parallel, disjoint", "edge_edge", [A0, A1, [1.3, 0.2, 0.1], [2.7, 0.2, 0.1]], "EA1_EB0", "EA1_EB0"),
    ("parallel, b inside a", "edge_edge", [A0, A1, [0.3, 0.2, 0.1], [0.7, 0.2, 0.1]], "EA_EB0", "EA_EB0"),
    ("parallel, a inside b", "edge_edge", [[0.3, 0, 0], [0.7, 0, 0], [0, 0.2, 0.1], [1, 0.2, 0.1]], "EA0_EB", "EA0_EB"),
    # Tie: the segments overlap on a line, every feature pair there is at distance 0.
    ("collinear, overlapping", "edge_edge", [A0, A1, [0.5, 0, 0], [1.5, 0, 0]], "EA1_EB", "EA_EB0"),
    ("collinear, disjoint", "edge_edge", [A0, A1, [1.5, 0, 0], [2.5, 0, 0]], "EA1_EB0", "EA1_EB0"),
    ("nearly parallel 1e-3", "edge_edge", [A0, A1, [0.1, -1e-3, 0.1], [0.9, 1e-3, 0.1]], "EA_EB", "EA_EB"),
    ("nearly parallel 1e-6", "edge_edge", [A0, A1, [0.1, -1e-6, 0.1], [0.9, 1e-6, 0.1]], "EA_EB", "EA_EB"),
    # Nearly parallel overlapping edges: the interior minimum and the endpoint–edge distance
    # differ by less than the rounding of the interior's closest points, so Supple takes the
    # boundary case unless the interior's points are strictly closer (the guard against
    # rounding-only interior parameters of nearly collinear disjoint edges); same value.
    ("nearly parallel 1e-8", "edge_edge", [A0, A1, [0.1, -1e-8, 0.1], [0.9, 1e-8, 0.1]], "EA_EB0", "EA_EB"),
    ("nearly parallel 1e-12", "edge_edge", [A0, A1, [0.1, -1e-12, 0.1], [0.9, 1e-12, 0.1]], "EA_EB0", "EA_EB0"),
    ("nearly parallel, d = 1e-4", "edge_edge", [A0, A1, [0.1, -1e-7, 1e-4], [0.9, 1e-7, 1e-4]], "EA_EB0", "EA_EB"),
    ("crossing at 1e-8", "edge_edge", [A0, A1, [0.5, -1, 1e-8], [0.5, 1, 1e-8]], "EA_EB", "EA_EB"),
    ("crossing at 0", "edge_edge", [A0, A1, [0.5, -1, 0], [0.5, 1, 0]], "EA_EB", "EA_EB"),
    ("endpoint on the other edge", "edge_edge", [A0, A1, [0.5, 0, 0], [0.5, 1, 1]], "EA_EB0", "EA_EB0"),
    ("endpoints touching", "edge_edge", [A0, A1, [1, 0, 0], [1, 1, 1]], "EA1_EB0", "EA1_EB0"),
    ("T, perpendicular", "edge_edge", [A0, A1, [0.5, 0.5, 0], [0.5, 1, 0]], "EA_EB0", "EA_EB0"),
    ("edge a of length 0, projecting inside b", "edge_edge", [A0, A0, [0.5, -1, 1], [0.5, 1, 1]], "EA0_EB", "EA0_EB"),
    ("edge b of length 0", "edge_edge", [A0, A1, [0.5, 1, 1], [0.5, 1, 1]], "EA_EB0", "EA_EB0"),
    ("both of length 0", "edge_edge", [A0, A0, [0.5, 1, 1], [0.5, 1, 1]], "EA0_EB0", "EA0_EB0"),
    ("edge a of length 1e-9", "edge_edge", [A0, [1e-9, 0, 0], [0.5, -1, 1], [0.5, 1, 1]], "EA1_EB", "EA1_EB"),
    # Point–triangle.
    ("above the face", "point_triangle", [[0.2, 0.3, 1], *T], "P_T", "P_T"),
    ("coplanar, inside", "point_triangle", [[0.2, 0.3, 0], *T], "P_T", "P_T"),
    ("coplanar, beside edge 0", "point_triangle", [[0.5, -0.3, 0], *T], "P_E0", "P_E0"),
    ("coplanar, beside edge 1", "point_triangle", [[0.7, 0.7, 0], *T], "P_E1", "P_E1"),
    ("coplanar, beyond vertex 0", "point_triangle", [[-0.5, -0.3, 0], *T], "P_T0", "P_T0"),
    ("on edge 0", "point_triangle", [[0.5, 0, 0], *T], "P_E0", "P_E0"),
    ("on edge 1", "point_triangle", [[0.5, 0.5, 0], *T], "P_E1", "P_E1"),
    ("at vertex 0", "point_triangle", [[0, 0, 0], *T], "P_T0", "P_T0"),
    ("at vertex 1", "point_triangle", [[1, 0, 0], *T], "P_T1", "P_T1"),
    ("above edge 0", "point_triangle", [[0.5, 0, 1], *T], "P_E0", "P_E0"),
    ("above vertex 0", "point_triangle", [[0, 0, 1], *T], "P_T0", "P_T0"),
    ("face at 1e-8", "point_triangle", [[0.2, 0.3, 1e-8], *T], "P_T", "P_T"),
    ("edge at 1e-8", "point_triangle", [[0.5, -1e-8, 0], *T], "P_E0", "P_E0"),
    ("vertex at 1e-8", "point_triangle", [[1 + 1e-8, 0, 0], *T], "P_T1", "P_T1"),
    ("vertex region", "point_triangle", [[1.5, -0.5, 0.3], *T], "P_T1", "P_T1"),
    ("vertex region, on the edge's line", "point_triangle", [[1.5, 0, 0.3], *T], "P_T1", "P_T1"),
    ("collinear triangle", "point_triangle", [[0.2, 0.3, 1], [0, 0, 0], [1, 0, 0], [2, 0, 0]], "P_E0", "P_E0"),
    ("sliver triangle 1e-9", "point_triangle", [[0.5, 0.3, 1], [0, 0, 0], [1, 0, 0], [0.5, 1e-9, 0]], "P_T2", "P_T2"),
    # Point–edge.
    ("interior", "point_edge", [[0.5, 1, 0], A0, A1], "P_E", "P_E"),
    ("on the edge", "point_edge", [[0.5, 0, 0], A0, A1], "P_E", "P_E"),
    ("beyond e1", "point_edge", [[2, 1, 0], A0, A1], "P_E1", "P_E1"),
    ("at 1e-8", "point_edge", [[0.5, 1e-8, 0], A0, A1], "P_E", "P_E"),
    ("edge of length 0", "point_edge", [[0, 1, 0], A0, A0], "P_E0", "P_E0"),
    # Ties at the endpoint: Supple's projection parameter t ≤ 0 picks the endpoint, ipctk's
    # t < 0 the interior; same value and gradient, different Hessian formula.
    ("at e0", "point_edge", [[0, 0, 0], A0, A1], "P_E0", "P_E"),
    ("at e1", "point_edge", [[1, 0, 0], A0, A1], "P_E1", "P_E"),
    ("projecting onto e0", "point_edge", [[0, 1, 0], A0, A1], "P_E0", "P_E"),
]


@pytest.mark.parametrize(
    "name, kind, points, case, icase", DEGENERATE, ids=[f"{d[1]}: {d[0]}" for d in DEGENERATE]
)
def test_distances_degenerate(name, kind, points, case, icase):
    x = [np.asarray(p, float) for p in points]
    got = compare_pair(kind, x, same_case_required=False)
    assert got == (case, icase)
    assert_exact(kind, x)
    if kind == "point_edge" and case != icase:
        # The tie at the endpoint: the gradients agree as well.
        assert_close(ipc.point_edge_distance2_gradient(*x), ipctk.point_edge_distance_gradient(*x))


# ---------------------------------------------------------------------------------------
# Distances: degenerate families, random.


def test_point_triangle_degenerate_random():
    """Points at 1e-8 from, or in the plane of, random triangles (above the face, the
    edges, the vertices, outside), exactly at a vertex, exactly on an edge."""
    rng = np.random.default_rng(31)
    ties = 0
    for i in range(600):
        t = rng.uniform(-1, 1, (3, 3))
        n = unit(np.cross(t[1] - t[0], t[2] - t[0]))
        w = rng.dirichlet([1, 1, 1]) if i % 3 == 0 else rng.uniform(-0.5, 1.5, 3)
        q = (w / w.sum()) @ t
        for off in [1e-8, 0.0]:
            x = [q + off * n * rng.choice([-1, 1]), *t]
            compare_pair("point_triangle", x)
            assert_exact("point_triangle", x)
        k = rng.integers(3)
        x = [t[k].copy(), *t]
        compare_pair("point_triangle", x)
        assert_exact("point_triangle", x)
        # Exactly on an edge (up to rounding): Face and Edge tie at distance ~0.
        a = rng.uniform()
        x = [(1 - a) * t[k] + a * t[(k + 1) % 3], *t]
        case, icase = compare_pair("point_triangle", x, same_case_required=False)
        ties += case != icase
        if case != icase:
            assert {case, icase} <= {"P_T", "P_E0", "P_E1", "P_E2"}
        assert_exact("point_triangle", x)
    assert ties < 100  # most on-edge points still agree


def test_sliver_triangles_random():
    """Triangles whose third vertex is nearly on the line of the first edge (sinθ from 1e-2
    down to exactly 0), against the exact referee; ipctk where it picks the same case."""
    rng = np.random.default_rng(32)
    for _ in range(300):
        t0, b = rng.uniform(-1, 1, 3), rng.uniform(-1, 1, 3)
        perp = unit(np.cross(b, rng.normal(size=3)))
        for s in [1e-2, 1e-4, 1e-6, 1e-8, 1e-12, 0.0]:
            c = b * rng.uniform(-1.5, 1.5) + s * perp * rng.uniform(0.5, 2)
            t1, t2 = t0 + b, t0 + c
            nrm = np.cross(b, c)
            normal = unit(nrm) if np.linalg.norm(nrm) > 0 else perp
            q = t0 + rng.uniform(-0.5, 1.5) * b + rng.uniform(-0.5, 1.5) * c
            x = [q + rng.choice([0, 1e-8, 1e-3, 0.5]) * normal, t0, t1, t2]
            assert_exact("point_triangle", x)
            if s > 1e-12:
                compare_pair("point_triangle", x, same_case_required=False)


def nearly_parallel_edges(rng, sin, along=0.5):
    """Edge b at angle `sin` to edge a (exactly parallel for 0), offset by 1, 1e-4 or 1e-8
    (nearly collinear) and slid along a by up to `along` of its length."""
    e0, u = rng.uniform(-1, 1, 3), rng.uniform(-1, 1, 3)
    perp = unit(np.cross(u, rng.normal(size=3)))
    off = rng.uniform(-1, 1, 3) * rng.choice([1, 1e-4, 1e-8])
    b0 = e0 + off + rng.uniform(-along, along) * u
    v = u * rng.uniform(0.3, 2) * rng.choice([-1, 1])
    v = v + sin * np.linalg.norm(v) * perp
    return [e0, e0 + u, b0, b0 + v]


@pytest.mark.parametrize("sin", [1e-3, 1e-6, 1e-7, 1e-10, 1e-12, 0.0])
def test_nearly_parallel_edges_random(sin):
    """Nearly parallel edges (`nearly_parallel_edges`); exact referee for Supple, ipctk
    where it is comparable.

    IPC Toolkit treats edges with sin²θ < 2.5e-16 as parallel and takes an endpoint–edge
    distance there (edge_edge_parallel_distance_type): above the true segment distance by
    up to ~2 sinθ·ℓ·√d. Where its case differs from Supple's, the value is compared within
    that bound (ties within rounding); Supple stays exact. sinθ between ~5e-9 and ~5e-8:
    test_nearly_collinear_edges_band."""
    rng = np.random.default_rng(int(41 + 1e3 * -math.log10(sin)) if sin else 40)
    for _ in range(300):
        x = nearly_parallel_edges(rng, sin)
        assert_exact("edge_edge", x)
        case, icase = compare_pair_parallel(x)
        if sin >= 1e-7:
            # Supple may take an endpoint–edge case of the same value where the interior's
            # closest points are not strictly closer within rounding (see DEGENERATE).
            assert case == icase or case in ("EA_EB0", "EA_EB1", "EA0_EB", "EA1_EB")


def test_nearly_collinear_edges_band():
    """The band where the line parameters s, t of a nearly parallel pair are mostly
    rounding (sinθ log-uniform in [5e-9, 5e-8]): Supple against the exact referee. It is
    wrong on a few in a thousand; IPC Toolkit too, less often
    (test_ipctk_nearly_collinear_misclassified)."""
    rng = np.random.default_rng(201)
    wrong = []
    for _ in range(3000):
        x = nearly_parallel_edges(rng, 10.0 ** rng.uniform(-8.3, -7.3), along=2.5)
        try:
            assert_exact("edge_edge", x)
        except AssertionError as e:
            wrong.append(str(e))
    assert not wrong, f"{len(wrong)} of 3000 wrong, e.g. " + wrong[0]


def compare_pair_parallel(x):
    """compare_pair for edges, the value within ipctk's parallel approximation where the
    cases differ (module doc of test_nearly_parallel_edges_random)."""
    f = KINDS["edge_edge"]
    case, icase = f["case"](*x), f["icase"](*x)
    if case == icase:
        return compare_pair("edge_edge", x)
    u, v = x[1] - x[0], x[3] - x[2]
    sin = sin_angle(u, v)
    ell = max(np.linalg.norm(u), np.linalg.norm(v))
    d, di = f["d"](*x), f["id"](*x)
    bound = RTOL * max(d, di) + ATOL + 4 * sin * ell * math.sqrt(max(d, di)) + 4 * (sin * ell) ** 2
    assert abs(d - di) <= bound, f"edge-edge {case}/{icase}: {d!r} vs {di!r} at {x}"
    return case, icase


@pytest.mark.parametrize("length", [0.0, 1e-12, 1e-8])
def test_short_edges_random(length):
    rng = np.random.default_rng(51)
    for _ in range(300):
        e0 = rng.uniform(-1, 1, 3)
        x = [e0, e0 + length * unit(rng.normal(size=3)), *rng.uniform(-1, 1, (2, 3))]
        assert_exact("edge_edge", x)
        if length > 0:
            compare_pair("edge_edge", x)
        # length 0: see test_ipctk_zero_length_edge_takes_the_line_distance.


def test_point_edge_degenerate_random():
    rng = np.random.default_rng(61)
    for _ in range(500):
        e0, u = rng.uniform(-1, 1, 3), rng.uniform(-1, 1, 3)
        perp = unit(np.cross(u, rng.normal(size=3)))
        for p in [e0 + rng.uniform() * u, e0 + rng.uniform() * u + 1e-8 * perp]:
            compare_pair("point_edge", [p, e0, e0 + u])
            assert_exact("point_edge", [p, e0, e0 + u])
        # At the endpoint: the documented tie (Supple P_E0, ipctk P_E).
        case, icase = compare_pair("point_edge", [e0.copy(), e0, e0 + u], same_case_required=False)
        assert (case, icase) == ("P_E0", "P_E")


# ---------------------------------------------------------------------------------------
# Where IPC Toolkit and Supple differ for real: reproducers.


def test_ipctk_zero_length_edge_takes_the_line_distance():
    """IPC Toolkit 1.6.1 classifies an edge pair with a zero-length edge a as EA0_EB
    whatever the projection, so it returns the distance to the *line* of b, below the
    true segment distance when the point projects outside b. Supple picks the endpoint
    (exact)."""
    x = [np.array(v) for v in ([0.1, 1.0, 0.6], [0.1, 1.0, 0.6], [0.0, 0.7, 0.3], [0.5, -0.8, 0.1])]
    exact = exact_edge_edge(*x)
    assert ipctk.edge_edge_distance_type(*x).name == "EA0_EB"
    assert_close(ipctk.edge_edge_distance(*x), ipc.point_line_distance2(x[0], x[2], x[3]))
    assert ipctk.edge_edge_distance(*x) < 0.6 * exact
    assert ipc.edge_edge_case(*x) == "EA0_EB0"
    assert_close(ipc.edge_edge_distance2(*x), exact)


def test_ipctk_triangle_collapsed_to_a_point():
    """IPC Toolkit 1.6.1 returns P_T and NaN for a triangle whose vertices coincide;
    Supple takes the distance to the point."""
    x = [np.array([0.2, 0.3, 1.0])] + [np.zeros(3)] * 3
    assert ipctk.point_triangle_distance_type(*x).name == "P_T"
    assert math.isnan(ipctk.point_triangle_distance(*x))
    assert ipc.point_triangle_case(*x) == "P_T0"
    assert ipc.point_triangle_distance2(*x) == pytest.approx(1.13, rel=1e-15)


# IPC Toolkit's own misses on nearly collinear edges at sinθ 2e-8 … 4e-8 (its line
# parameters are rounding too): (points, exact distance², what ipctk returns).
IPCTK_NEARLY_COLLINEAR = [
    (
        [
            [-0.5744663161065857, 0.3002863222791463, 0.09663745587011774],
            [-0.27425949214560763, 0.15535995917334522, 0.5238083684984167],
            [-0.2655922377184032, 0.15117579824831928, 0.5361411960301188],
            [0.1882302526505633, -0.06790927879889139, 1.1818952035496242],
        ],
        0.00024472713687911745,
        "the lines' distance ~5e-11 for segments 1.6e-2 apart",
    ),
    (
        [
            [-0.4781822860213265, 0.8543933098054644, 0.7664525070548178],
            [0.25778565595856673, 1.2746822177405674, 1.584999426897124],
            [0.324930569689354, 1.3130266358275369, 1.6596783078405701],
            [-0.37653907220617416, 0.9124386362885102, 0.8795005624890772],
        ],
        4.618960887154028e-18,
        "an endpoint distance 0.11 for overlapping segments 2e-9 apart",
    ),
]


@pytest.mark.parametrize("points, exact, what", IPCTK_NEARLY_COLLINEAR)
def test_ipctk_nearly_collinear_misclassified(points, exact, what):
    """IPC Toolkit 1.6.1 is wrong here by O(1) (`what`); Supple is exact."""
    x = [np.array(p) for p in points]
    assert exact_edge_edge(*x) == pytest.approx(exact, rel=1e-12)
    assert abs(ipctk.edge_edge_distance(*x) - exact) > 1e-6
    assert_exact("edge_edge", x)


# Found by this comparison: nearly collinear, *disjoint* edges at sinθ ≈ 1.5e-8 … 3e-8 (just
# above IPC Toolkit's parallel threshold, far above Supple's 1e-20). The line parameters
# s, t of `edge_edge_case` are ratios of cancelling terms over ‖u×v‖² ≈ 1e-16, so rounding
# can put both in (0, 1): EdgeEdge is picked and the line–line distance (≈ 1e-17) returned
# for segments that are far apart. IPC Toolkit gets these right.
NEARLY_COLLINEAR_MISCLASSIFIED = [
    # (points, exact distance²)
    (
        [
            [0.21924068275949016, -0.10120648731629478, 0.5535270555165739],
            [-0.23964587760992928, -0.817682527149048, 1.2445415692255446],
            [-0.34404926457412177, -0.9806912912095418, 1.4017574641475006],
            [-0.4817946644958341, -1.195758131621501, 1.6091814478306397],
        ],
        0.06218876198623616,
    ),
    (
        [
            [0.538143152866726, -0.8017011357361588, 0.6784463101169826],
            [0.667765664337097, -0.30593549422503363, 1.4894616625281247],
            [0.680613811850637, -0.2567953129772963, 1.569849331312588],
            [0.8271748164974659, 0.3037548109515983, 2.486844588008986],
        ],
        0.009042009600190741,
    ),
]


@pytest.mark.parametrize("points, exact", NEARLY_COLLINEAR_MISCLASSIFIED)
def test_edge_edge_nearly_collinear_disjoint(points, exact):
    x = [np.array(p) for p in points]
    assert exact_edge_edge(*x) == pytest.approx(exact, rel=1e-15)
    assert_close(ipctk.edge_edge_distance(*x), exact)  # IPC Toolkit: right
    assert ipc.edge_edge_case(*x) != "EA_EB"
    assert_exact("edge_edge", x)


# ---------------------------------------------------------------------------------------
# Barrier.

DHATS = [1e-8, 1e-6, 1e-3, 1.0, 7.0]


def exact_barrier(d, dhat):
    getcontext().prec = 60
    d, dhat = Decimal(d), Decimal(dhat)
    r, log = d - dhat, (d / dhat).ln()
    return float(-r * r * log), float(-2 * r * log - r * r / d), float(-2 * log - 4 * r / d + (r / d) ** 2)


@pytest.mark.parametrize("dhat", DHATS)
def test_barrier(dhat):
    """b, b', b'' on squared distances (both take d = dist², d̂ = dist̂²) across (0, d̂),
    against ipctk and an exact (60-digit) evaluation of the same formulas.

    Near d̂ (d = (1 − 1e-9) d̂) both lose digits to cancellation (ln(d/d̂) ≈ 1e-9): up to
    ~1e-7 relative, ipctk's b' and b'' more than Supple's. The floor there is 1e-12 of the
    natural scale (d̂² for b, d̂ for b', 1 for b'')."""
    rng = np.random.default_rng(71)
    fractions = np.concatenate([rng.uniform(0, 1, 200), [1e-300, 1e-12, 1e-8, 0.5, 1 - 1e-6, 1 - 1e-9]])
    for x in fractions:
        d = x * dhat
        ours = (ipc.barrier(d, dhat), ipc.barrier_first_derivative(d, dhat), ipc.barrier_second_derivative(d, dhat))
        theirs = (ipctk.barrier(d, dhat), ipctk.barrier_first_derivative(d, dhat), ipctk.barrier_second_derivative(d, dhat))
        exact = exact_barrier(d, dhat)
        for k, scale in enumerate([dhat * dhat, dhat, 1.0]):
            assert_close(ours[k], theirs[k], scale, what=f"b^({k}) at d = {x} d̂, d̂ = {dhat}")
            assert_close(ours[k], exact[k], scale, what=f"b^({k}) exact at d = {x} d̂, d̂ = {dhat}")
        assert ours[0] > 0 and ours[1] < 0 and ours[2] > 0


@pytest.mark.parametrize("dhat", DHATS)
def test_barrier_outside(dhat):
    for d in [dhat, 1.5 * dhat, 1e3 * dhat]:
        for f in ["barrier", "barrier_first_derivative", "barrier_second_derivative"]:
            assert getattr(ipc, f)(d, dhat) == 0.0 == getattr(ipctk, f)(d, dhat)
    for d in [0.0, -1e-3 * dhat]:
        assert ipc.barrier(d, dhat) == math.inf == ipctk.barrier(d, dhat)
        # Out of the domain the conventions differ: Supple returns the limits (−∞, +∞),
        # ipctk 0 for both derivatives. Neither is used there (CCD keeps d > 0).
        assert ipc.barrier_first_derivative(d, dhat) == -math.inf
        assert ipc.barrier_second_derivative(d, dhat) == math.inf
        assert ipctk.barrier_first_derivative(d, dhat) == 0.0
        assert ipctk.barrier_second_derivative(d, dhat) == 0.0


def test_initial_barrier_stiffness():
    """Supple's dhat is unsquared, like ipctk's; ipctk's barrier object is the plain
    clamped log barrier, and its codimensional offset dmin is 0."""
    barrier = ipctk.ClampedLogBarrier()
    rng = np.random.default_rng(81)
    for _ in range(200):
        n = int(rng.integers(1, 40))
        ge, gb = rng.normal(size=n), rng.normal(size=n) * 10.0 ** rng.uniform(-6, 2)
        bbox = 10.0 ** rng.uniform(-2, 2)
        dhat = bbox * 10.0 ** rng.uniform(-4, -1)
        mass = 10.0 ** rng.uniform(-4, 1)
        scale = rng.choice([1e11, 1.0, 1e5])
        for energy in [ge, ge * 1e9, -ge * 1e9, ge * 0]:  # inside, clamped above / below
            for bar in [gb, gb * 0]:  # least-squares κ, or no barrier gradient
                ours = ipc.initial_barrier_stiffness(bbox, dhat, mass, energy, bar, scale)
                theirs = ipctk.initial_barrier_stiffness(bbox, barrier, dhat, mass, energy, bar, scale)
                assert_close(ours, theirs, what=f"κ, κ_max (bbox {bbox}, d̂ {dhat}, mass {mass})")
    # d₀ = (1e-8 bbox)² ≥ d̂²: both take d₀ = d̂²/2.
    for dhat in [2e-9, 1e-8 * 2]:
        ours = ipc.initial_barrier_stiffness(2.0, dhat, 0.01, [0.0], [0.0])
        theirs = ipctk.initial_barrier_stiffness(2.0, barrier, dhat, 0.01, np.zeros(1), np.zeros(1))
        assert_close(ours, theirs)


def test_update_barrier_stiffness():
    """Both take the minimum *squared* distances and compare them with (dhat_epsilon_scale ·
    bbox)²."""
    rng = np.random.default_rng(91)
    for _ in range(2000):
        bbox = 10.0 ** rng.uniform(-2, 2)
        frac = rng.choice([1e-9, 1e-6])
        eps = (frac * bbox) ** 2
        prev, cur = eps * 10.0 ** rng.uniform(-2, 1, 2)
        kmax = 10.0 ** rng.uniform(0, 6)
        kappa = kmax * 10.0 ** rng.uniform(-3, 0)
        ours = ipc.update_barrier_stiffness(prev, cur, kmax, kappa, bbox, frac)
        theirs = ipctk.update_barrier_stiffness(prev, cur, kmax, kappa, bbox, frac)
        assert ours == theirs, (prev, cur, kmax, kappa, bbox, frac)


# ---------------------------------------------------------------------------------------
# Mollifier.


def test_mollifier_random():
    """Mollifier pieces against ipctk. For nearly parallel edges x = ‖u × v‖² carries an
    absolute rounding error ~eps ‖u‖²‖v‖², which the mollifier amplifies by 1/ε×: the
    floor there is 100 eps ‖u‖²‖v‖² / ε× (relative to each quantity's size). The scalar
    overload ipctk.edge_edge_mollifier(x, ε×) checks the formula itself at Supple's x."""
    rng = np.random.default_rng(101)
    for i in range(1500):
        x = list(rng.uniform(-1, 1, (4, 3)))
        if i % 3 == 0:  # nearly parallel: the mollifier's active region
            x[3] = x[2] + (x[1] - x[0]) * rng.uniform(-2, 2) + rng.normal(size=3) * 10.0 ** rng.uniform(-8, -1)
        rest = list(rng.uniform(-1, 1, (4, 3)))
        assert_close(ipc.edge_edge_mollifier_threshold(*rest), ipctk.edge_edge_mollifier_threshold(*rest))
        assert_close(ipc.edge_edge_cross_squarednorm(*x), ipctk.edge_edge_cross_squarednorm(*x))
        assert_close(ipc.edge_edge_cross_squarednorm_gradient(*x), ipctk.edge_edge_cross_squarednorm_gradient(*x))
        assert_close(ipc.edge_edge_cross_squarednorm_hessian(*x), ipctk.edge_edge_cross_squarednorm_hessian(*x))
        cross = ipc.edge_edge_cross_squarednorm(*x)
        lengths = np.linalg.norm(x[1] - x[0]) ** 2 * np.linalg.norm(x[3] - x[2]) ** 2
        for eps_x in [ipc.edge_edge_mollifier_threshold(*x), cross * rng.uniform(1.01, 5), cross * rng.uniform(0.2, 0.99)]:
            m = ipc.edge_edge_mollifier(*x, eps_x)
            assert_close(m, ipctk.edge_edge_mollifier(cross, eps_x), rtol=1e-14, what="m(x) at Supple's x")
            k = max(RTOL, 100 * EPS * lengths / eps_x)
            g, gi = ipc.edge_edge_mollifier_gradient(*x, eps_x), ipctk.edge_edge_mollifier_gradient(*x, eps_x)
            h, hi = ipc.edge_edge_mollifier_hessian(*x, eps_x), ipctk.edge_edge_mollifier_hessian(*x, eps_x)
            assert_close(m, ipctk.edge_edge_mollifier(*x, eps_x), rtol=k, what=f"m at {x}, ε× {eps_x}")
            assert_close(g, gi, rtol=k, what=f"∇m at {x}, ε× {eps_x}")
            assert_close(h, hi, rtol=k, what=f"∇²m at {x}, ε× {eps_x}")


def test_mollifier_degenerate():
    a = [np.array(v, float) for v in (A0, A1, [0.3, 0.2, 0.1], [1.7, 0.2, 0.1])]
    eps = ipc.edge_edge_mollifier_threshold(*a)
    assert_close(eps, 1e-3 * 1.0 * 1.96)
    # Parallel: m = 0 with zero gradient, both.
    assert ipc.edge_edge_mollifier(*a, eps) == 0.0 == ipctk.edge_edge_mollifier(*a, eps)
    assert_close(ipc.edge_edge_mollifier_gradient(*a, eps), ipctk.edge_edge_mollifier_gradient(*a, eps))
    assert_close(ipc.edge_edge_mollifier_hessian(*a, eps), ipctk.edge_edge_mollifier_hessian(*a, eps))
    # Zero-length edge, at the threshold, perpendicular, a zero threshold.
    z = [a[0], a[0], a[2], a[3]]
    w = [a[0], a[1], a[2], a[2] + np.array([0.0, 0.0, 2.0])]
    for x, e in [(z, eps), (w, eps), (w, ipc.edge_edge_cross_squarednorm(*w)), (w, 0.0), (a, 0.0)]:
        assert_close(ipc.edge_edge_mollifier(*x, e), ipctk.edge_edge_mollifier(*x, e))
        assert_close(ipc.edge_edge_mollifier_gradient(*x, e), ipctk.edge_edge_mollifier_gradient(*x, e))
        assert_close(ipc.edge_edge_mollifier_hessian(*x, e), ipctk.edge_edge_mollifier_hessian(*x, e))


# ---------------------------------------------------------------------------------------
# Additive CCD.

# The reference time of impact: Tight-Inclusion CCD (a conservative interval root finder:
# its toi is a lower bound of the first time the distance reaches 0), with no conservative
# rescaling and a tight tolerance 1e-9 (at its default 1e-6 the toi for a start distance of 1e-8
# is 25 % early, below Supple's 0.9 × the true time), at most 1e5 iterations (coplanar and
# parallel motions take seconds at its default 1e7; the cap only makes the toi earlier). With a minimum separation ξ > 0 its
# toi is early by design (it inflates by ξ in each axis, a box rather than a ball), so for
# ξ > 0 it is only the ξ = 0 bound, and the separation along Supple's step is sampled.
TIGHT_INCLUSION = ipctk.TightInclusionCCD(1e-9, 10**5, 1.0)
# ipctk's own additive CCD (C-IPC's algorithm, conservative rescaling 0.9 = Supple's s = 0.1).
ADDITIVE = ipctk.AdditiveCCD()

KINDS_DISTANCE = {
    "point_triangle": ipctk.point_triangle_distance,
    "edge_edge": ipctk.edge_edge_distance,
    "point_edge": ipctk.point_edge_distance,
    "point_point": ipctk.point_point_distance,
}
CCD = {
    "point_triangle": (ipc.point_triangle_accd, "point_triangle_ccd", 4),
    "edge_edge": (ipc.edge_edge_accd, "edge_edge_ccd", 4),
    "point_edge": (ipc.point_edge_accd, "point_edge_ccd", 3),
    "point_point": (ipc.point_point_accd, "point_point_ccd", 2),
}


def min_distance_along(kind, x, dx, t, samples=33):
    """The smallest of ipctk's distances at `samples` points of the motion over [0, t]."""
    distance = KINDS_DISTANCE[kind]
    return min(
        math.sqrt(distance(*[a + tau * b for a, b in zip(x, dx)])) for tau in np.linspace(0.0, t, samples)
    )


def check_ccd(kind, x, dx, min_separation=0.0, t_max=1.0):
    """Supple's ACCD step against ipctk for one linear motion x → x + dx. Returns the
    outcome: 'impact' (Tight Inclusion finds contact by t_max), 'clear' (no one stops), or
    'clear, ipctk ACCD impact' (no contact, but ipctk's ACCD stops before t_max)."""
    accd, method, _ = CCD[kind]
    x = [np.asarray(v, float) for v in x]
    dx = [np.asarray(v, float) for v in dx]
    end = [a + b for a, b in zip(x, dx)]
    t = accd(*x, *dx, min_separation=min_separation, t_max=t_max)
    hit, toi = getattr(TIGHT_INCLUSION, method)(*x, *end, 0.0, t_max)
    ahit, atoi = getattr(ADDITIVE, method)(*x, *end, min_separation, t_max)
    where = f"{kind} ACCD from {[list(v) for v in x]} by {[list(v) for v in dx]} (ξ {min_separation}, t_max {t_max})"
    assert 0.0 < t <= t_max, f"{where}: t = {t}"
    # Safe: the separation stays above ξ over the whole step.
    assert min_distance_along(kind, x, dx, t) > min_separation, f"{where}: t = {t}"
    if hit:
        # Never past the time of contact ...
        assert t <= toi, f"{where}: Supple {t} after ipctk's time of impact {toi}"
        # ... and the same algorithm as ipctk's ACCD, to rounding.
        assert ahit and abs(t - atoi) <= 1e-9 * atoi, f"{where}: Supple {t}, ipctk ACCD {ahit, atoi}"
        return "impact"
    if ahit:
        # ipctk's ACCD evaluates its last advancement beyond t_max and may stop on a
        # distance there; Supple clamps that advancement to t_max (accd.rs, "Differences
        # from the paper's listing"), so it goes at least as far.
        assert t >= atoi * (1 - 1e-9), f"{where}: Supple {t}, ipctk ACCD {atoi}"
        return "clear, ipctk ACCD impact"
    assert t == t_max, f"{where}: no impact, yet t = {t}"
    return "clear"


@pytest.mark.parametrize("kind", ["point_triangle", "edge_edge", "point_edge", "point_point"])
@pytest.mark.parametrize("min_separation", [0.0, 1e-3])
def test_ccd_random(kind, min_separation):
    """Random linear motions, half of them aimed at the other primitive; for point–edge and
    point–point (contact is of measure zero there) the aimed ones go exactly through a
    point of the static edge / the static point, at a random speed (past it or not)."""
    rng = np.random.default_rng(111 + len(kind) + int(1e3 * min_separation))
    n = CCD[kind][2]
    outcomes = {}
    for i in range(800):
        x = rng.uniform(-1, 1, (n, 3))
        dx = rng.uniform(-1, 1, (n, 3)) * rng.choice([0.5, 1, 2, 4])
        if i % 2 == 0:
            if kind in ("point_edge", "point_point"):
                target = x[1] + rng.uniform() * (x[-1] - x[1])
                dx[1:] = 0.0
                dx[0] = (target - x[0]) * rng.uniform(0.5, 2.5)
                dx += rng.uniform(-1, 1, 3)  # a common translation changes nothing
            else:
                split = 1 if kind == "point_triangle" else 2
                aim = x[split:].mean(0) - x[:split].mean(0)
                dx[:split] += aim * rng.uniform(0.5, 2.5)
        if i % 7 == 0:  # start close
            dx *= 1e-3
        if math.sqrt(KINDS_DISTANCE[kind](*x)) <= 2 * min_separation:
            continue
        outcome = check_ccd(kind, list(x), list(dx), min_separation)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    assert outcomes.get("impact", 0) > 80 and outcomes.get("clear", 0) > 80, outcomes


@pytest.mark.parametrize("t_max", [0.3, 1.0])
def test_ccd_random_t_max(t_max):
    rng = np.random.default_rng(121)
    for _ in range(500):
        x, dx = rng.uniform(-1, 1, (4, 3)), rng.uniform(-2, 2, (4, 3))
        check_ccd("point_triangle", x, dx, t_max=t_max)
        check_ccd("edge_edge", x, dx, t_max=t_max)


Z = [0, 0, 0]
CCD_DEGENERATE = [
    # (name, kind, start, displacement, outcome)
    ("head-on into the face", "point_triangle", [[0.2, 0.2, 1], *T], [[0, 0, -2], Z, Z, Z], "impact"),
    ("head-on onto a vertex", "point_triangle", [[0, 0, 1], *T], [[0, 0, -2], Z, Z, Z], "impact"),
    ("head-on onto an edge", "point_triangle", [[0.5, 0, 1], *T], [[0, 0, -2], Z, Z, Z], "impact"),
    ("start at 1e-8, approaching", "point_triangle", [[0.2, 0.2, 1e-8], *T], [[0, 0, -1], Z, Z, Z], "impact"),
    ("start at 1e-8, leaving", "point_triangle", [[0.2, 0.2, 1e-8], *T], [[0, 0, 1], Z, Z, Z], "clear"),
    ("coplanar, sliding into an edge", "point_triangle", [[0.5, -0.5, 0], *T], [[0, 1, 0], Z, Z, Z], "impact"),
    ("coplanar, sliding past", "point_triangle", [[1.5, -0.5, 0], *T], [[0, 1, 0], Z, Z, Z], "clear"),
    # Grazing at 1e-6 over the face: no impact, but the gap falls below s·d₀ (both ACCDs stop).
    ("grazing at 1e-6", "point_triangle", [[-0.5, 0.2, 1e-6], *T], [[2, 0, 0], Z, Z, Z], "clear, ipctk ACCD impact"),
    ("rigid translation", "point_triangle", [[0.2, 0.2, 1], *T], [[3, 1, -5]] * 4, "clear"),
    ("triangle onto the point", "point_triangle", [[0.2, 0.2, 1], *T], [Z, [0, 0, 2], [0, 0, 2], [0, 0, 2]], "impact"),
    ("rotating triangle", "point_triangle", [[0.3, 0.3, 0.2], *T], [Z, Z, [0, 0, 1], [0, 0, 1]], "impact"),
    ("parallel to the face", "point_triangle", [[0.2, 0.2, 1], *T], [[1, 1, 0], Z, Z, Z], "clear"),
    ("parallel edges closing", "edge_edge", [A0, A1, [0.3, 1, 0], [1.7, 1, 0]], [Z, Z, [0, -2, 0], [0, -2, 0]], "impact"),
    ("parallel edges, offset", "edge_edge", [A0, A1, [0.3, 0.2, 0.1], [1.7, 0.2, 0.1]], [Z, Z, [0, -0.4, -0.2], [0, -0.4, -0.2]], "impact"),
    ("nearly parallel closing", "edge_edge", [A0, A1, [0.1, -1e-9, 0.1], [0.9, 1e-9, 0.1]], [Z, Z, [0, 0, -0.2], [0, 0, -0.2]], "impact"),
    ("crossing head-on", "edge_edge", [A0, A1, [0.5, -1, 1], [0.5, 1, 1]], [Z, Z, [0, 0, -2], [0, 0, -2]], "impact"),
    ("crossing, missing", "edge_edge", [A0, A1, [1.5, -1, 1], [1.5, 1, 1]], [Z, Z, [0, 0, -2], [0, 0, -2]], "clear"),
    ("endpoint into the interior", "edge_edge", [A0, A1, [0.5, 0, 1], [0.5, 1, 2]], [Z, Z, [0, 0, -2], [0, 0, -2]], "impact"),
    ("collinear, closing", "edge_edge", [A0, A1, [2, 0, 0], [3, 0, 0]], [Z, Z, [-2, 0, 0], [-2, 0, 0]], "impact"),
    ("edge of length 0", "edge_edge", [[0.5, 0, 1], [0.5, 0, 1], A0, A1], [[0, 0, -2], [0, 0, -2], Z, Z], "impact"),
    ("start at 1e-8", "edge_edge", [A0, A1, [0.5, -1, 1e-8], [0.5, 1, 1e-8]], [Z, Z, [0, 0, -1], [0, 0, -1]], "impact"),
    ("rotating edge", "edge_edge", [A0, A1, [0.5, 0.5, 0.1], [0.5, 1.5, 0.1]], [Z, Z, [0, -1, 0], [0, -1, 0]], "clear"),
    ("point through an edge", "point_edge", [[0.5, 1, 0], A0, A1], [[0, -2, 0], Z, Z], "impact"),
    ("point past an edge", "point_edge", [[1.5, 1, 0], A0, A1], [[0, -2, 0], Z, Z], "clear"),
    ("point grazing an edge", "point_edge", [[-0.5, 1e-6, 0], A0, A1], [[2, 0, 0], Z, Z], "clear, ipctk ACCD impact"),
    ("points head-on", "point_point", [[0, 1, 0], Z], [[0, -2, 0], Z], "impact"),
]


@pytest.mark.parametrize(
    "name, kind, x, dx, outcome", CCD_DEGENERATE, ids=[f"{c[1]}: {c[0]}" for c in CCD_DEGENERATE]
)
def test_ccd_degenerate(name, kind, x, dx, outcome):
    assert check_ccd(kind, x, dx) == outcome
    for xi in [1e-3, 1e-9]:
        if math.sqrt(KINDS_DISTANCE[kind](*[np.asarray(v, float) for v in x])) > 2 * xi:
            check_ccd(kind, x, dx, min_separation=xi)
    check_ccd(kind, x, dx, t_max=0.4)


def test_ccd_head_on_values():
    """Head-on at unit distance and closing speed 2: impact at 0.5; ACCD stops at
    (1 − s) · 0.5 = 0.45 (ipctk alike), and at 0.405 with ξ = 0.1 (impact with ξ at 0.45)."""
    x, dx = [[0.2, 0.2, 1], *T], [[0, 0, -2], Z, Z, Z]
    assert ipc.point_triangle_accd(*x, *dx) == pytest.approx(0.45, rel=1e-12)
    assert ipc.point_triangle_accd(*x, *dx, min_separation=0.1) == pytest.approx(0.405, rel=1e-12)
    assert ipc.point_triangle_accd(*x, *dx, t_max=0.4) == 0.4
    assert ipc.point_triangle_accd(*x, *dx, s=0.5) == pytest.approx(0.25, rel=1e-12)
    # Already in contact, or within ξ: 0 (ipctk: impact at 0).
    touching = [[0.2, 0.2, 0], *T]
    assert ipc.point_triangle_accd(*touching, *dx) == 0.0
    assert TIGHT_INCLUSION.point_triangle_ccd(*map(np.asarray, touching), *map(np.asarray, touching), 0.0, 1.0) == (True, 0.0)
    assert ipc.point_triangle_accd(*x, *dx, min_separation=1.0) == 0.0
    # No motion at all: the whole step.
    assert ipc.point_triangle_accd(*x, *[Z] * 4) == 1.0


# ---------------------------------------------------------------------------------------
# Friction: smoothing, closest points, tangent bases.


@pytest.mark.parametrize("eps_v", [1e-6, 1e-3, 1.0])
def test_friction_smoothing(eps_v):
    ys = np.concatenate([np.linspace(0, 3 * eps_v, 301)[1:], eps_v * np.array([1e-9, 1 - 1e-12, 1, 1 + 1e-12, 1e3])])
    for y in ys:
        assert_close(ipc.f0_sf(y, eps_v), ipctk.smooth_friction_f0(y, eps_v), eps_v)
        assert_close(ipc.f1_sf_over_x(y, eps_v), ipctk.smooth_friction_f1_over_x(y, eps_v), 1 / eps_v)
        assert_close(
            ipc.df1_x_minus_f1_over_x3(y, eps_v),
            ipctk.smooth_friction_f2_x_minus_f1_over_x3(y, eps_v),
            1 / eps_v**3,
        )
    # y = 0: f0 = ε/3 and f1/y = 2/ε both; the u uᵀ coefficient is −∞ in ipctk and 0 in
    # Supple (documented: its product with u uᵀ vanishes, and 0 keeps the Hessian finite).
    assert_close(ipc.f0_sf(0.0, eps_v), ipctk.smooth_friction_f0(0.0, eps_v))
    assert_close(ipc.f1_sf_over_x(0.0, eps_v), ipctk.smooth_friction_f1_over_x(0.0, eps_v))
    assert ipc.df1_x_minus_f1_over_x3(0.0, eps_v) == 0.0
    assert ipctk.smooth_friction_f2_x_minus_f1_over_x3(0.0, eps_v) == -math.inf


def test_closest_points_and_tangent_bases():
    """Closest-point coordinates as ipctk's; tangent bases are any orthonormal pair across
    the normal, so their projectors T Tᵀ are compared."""
    rng = np.random.default_rng(131)
    for _ in range(1500):
        x = list(rng.uniform(-1, 1, (4, 3)))
        assert_close(ipc.point_triangle_closest_point(*x), ipctk.point_triangle_closest_point(*x), atol=1e-11)
        assert_close(ipc.edge_edge_closest_point(*x), ipctk.edge_edge_closest_point(*x), atol=1e-11)
        assert_close(ipc.point_edge_closest_point(*x[:3]), ipctk.point_edge_closest_point(*x[:3]))
        for name, args in [
            ("point_triangle", x),
            ("edge_edge", x),
            ("point_edge", x[:3]),
            ("point_point", x[:2]),
        ]:
            ours = getattr(ipc, name + "_tangent_basis")(*args)
            theirs = getattr(ipctk, name + "_tangent_basis")(*args)
            assert ours.shape == (3, 2)
            assert_close(ours.T @ ours, np.eye(2), what=f"{name} basis orthonormal")
            assert_close(ours @ ours.T, theirs @ theirs.T, what=f"{name} tangent projector at {args}")


# ---------------------------------------------------------------------------------------
# PSD projection.


@pytest.mark.parametrize("n", [3, 6, 9, 12])
def test_project_psd(n):
    rng = np.random.default_rng(141 + n)
    for _ in range(200):
        a = rng.normal(size=(n, n))
        sym = a + a.T
        ours = ipc.project_psd(sym)
        assert_close(ours, ipctk.project_to_psd(sym, ipctk.PSDProjectionMethod.CLAMP), 1.0, atol=1e-11)
        assert np.linalg.eigvalsh(ours).min() >= -1e-12 * np.abs(sym).max()
        spd = a @ a.T + np.eye(n)
        assert_close(ipc.project_psd(spd), ipctk.project_to_psd(spd, ipctk.PSDProjectionMethod.CLAMP))
        # Supple projects the symmetric part; ipctk assumes a symmetric input.
        assert_close(ipc.project_psd(a), ipctk.project_to_psd((a + a.T) / 2, ipctk.PSDProjectionMethod.CLAMP), 1.0, atol=1e-11)


# ---------------------------------------------------------------------------------------
# Input validation: ValueError, never a panic.


@pytest.mark.parametrize(
    "bad",
    [[0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [[0.0, 0.0, 1.0]], np.zeros((3, 1)), "abc", None, 1.0, [0, "x", 1], np.zeros(0)],
)
def test_bad_points_raise_value_error(bad):
    good = [0.0, 0.0, 1.0]
    calls = [
        lambda p: ipc.point_triangle_distance2(p, *T),
        lambda p: ipc.point_triangle_distance2_gradient(good, p, T[1], T[2]),
        lambda p: ipc.edge_edge_distance2_hessian(good, good, good, p),
        lambda p: ipc.point_edge_case(good, p, good),
        lambda p: ipc.edge_edge_mollifier(p, good, good, good, 1.0),
        lambda p: ipc.edge_edge_mollifier_threshold(good, good, p, good),
        lambda p: ipc.point_triangle_accd(good, *T, p, Z, Z, Z),
        lambda p: ipc.edge_edge_accd(good, good, good, good, Z, Z, Z, p),
        lambda p: ipc.point_point_tangent_basis(p, good),
    ]
    for call in calls:
        with pytest.raises(ValueError):
            call(bad)


def test_bad_arguments_raise_value_error():
    with pytest.raises(ValueError, match="grad_barrier"):
        ipc.initial_barrier_stiffness(1.0, 1e-3, 1.0, [1.0, 2.0], [1.0])
    with pytest.raises(ValueError):
        ipc.initial_barrier_stiffness(1.0, 1e-3, 1.0, [[1.0]], [1.0])
    with pytest.raises(ValueError, match="max_iterations"):
        ipc.point_triangle_accd([0, 0, 1], *T, Z, Z, Z, Z, max_iterations=-1)
    with pytest.raises(ValueError, match="shape"):
        ipc.project_psd(np.eye(4))
    with pytest.raises(ValueError):
        ipc.project_psd(np.zeros((3, 6)))
    with pytest.raises(ValueError, match="p: shape \\(2,\\), expected \\(3,\\)"):
        ipc.point_point_distance2([0, 0], [0, 0, 0])
    # Non-finite input is not an error: it propagates (or ACCD refuses to step).
    assert math.isnan(ipc.point_point_distance2([math.nan, 0, 0], Z))
    assert ipc.point_triangle_accd([math.nan, 0, 1], *T, Z, Z, Z, Z) == 0.0


def test_module_layout():
    import supple

    assert supple.ipc is ipc
    assert "point_triangle_distance2" in ipc.__all__
    assert "Supple's IPC contact step" in ipc.__doc__
    assert ipc.point_triangle_distance2.__doc__

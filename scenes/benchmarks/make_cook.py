#!/usr/bin/env python3
"""Cook's membrane meshes (issue 13): the trapezoid (0,0), (48,44), (48,60), (0,44), one
element layer of thickness 1 in z, an N x N mapped grid of hexahedra, each split into six
positively oriented tets (Kuhn split along the main diagonal). Writes
meshes/cook_N.node / .ele beside this script.

Usage: python3 scenes/benchmarks/make_cook.py 4 8 16 32
"""
import os
import sys


def point(xi, eta, z):
    # Bilinear map of the unit square onto the trapezoid.
    return (48.0 * xi, 44.0 * xi + eta * (44.0 - 28.0 * xi), z)


def det(a, b, c, d):
    u = [b[i] - a[i] for i in range(3)]
    v = [c[i] - a[i] for i in range(3)]
    w = [d[i] - a[i] for i in range(3)]
    return (u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0])
            + u[2] * (v[0] * w[1] - v[1] * w[0]))


def main(n):
    here = os.path.dirname(os.path.abspath(__file__))
    pts = []
    index = {}
    for k in range(2):
        for j in range(n + 1):
            for i in range(n + 1):
                index[(i, j, k)] = len(pts)
                pts.append(point(i / n, j / n, float(k)))
    # Kuhn split of the cube into 6 tets along the diagonal (0,0,0)-(1,1,1).
    paths = [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]
    tets = []
    for j in range(n):
        for i in range(n):
            for p in paths:
                c = [0, 0, 0]
                verts = [index[(i, j, 0)]]
                for axis in p:
                    c[axis] += 1
                    verts.append(index[(i + c[0], j + c[1], c[2])])
                a, b, cc, d = (pts[v] for v in verts)
                if det(a, b, cc, d) < 0:
                    verts[2], verts[3] = verts[3], verts[2]
                tets.append(verts)
    base = os.path.join(here, "meshes", f"cook_{n}")
    with open(base + ".node", "w") as f:
        f.write(f"# Cook's membrane, {n} x {n} x 1 hexahedra split in 6 tets (make_cook.py)\n")
        f.write(f"{len(pts)} 3 0 0\n")
        for i, p in enumerate(pts):
            f.write(f"{i} {p[0]!r} {p[1]!r} {p[2]!r}\n")
    with open(base + ".ele", "w") as f:
        f.write(f"{len(tets)} 4 0\n")
        for i, t in enumerate(tets):
            f.write(f"{i} {t[0]} {t[1]} {t[2]} {t[3]}\n")


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        main(int(arg))

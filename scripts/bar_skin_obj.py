#!/usr/bin/env python3
"""Writes a fine quad surface of a box (OBJ, quads fanned by the reader) 0.5 mm outside it:
the embedded-surface benchmark skin of scenes/bench/bar_20k.toml's 1 x 0.25 x 0.25 m bar.

    python3 scripts/bar_skin_obj.py 0.01 > scenes/meshes/bar_skin_1cm.obj
"""
import sys

h = float(sys.argv[1]) if len(sys.argv) > 1 else 0.01
gap = 5e-4
lo = (-gap, -gap, -gap)
hi = (1.0 + gap, 0.25 + gap, 0.25 + gap)
d = [hi[a] - lo[a] for a in range(3)]
cells = [max(1, round(d[a] / h)) for a in range(3)]
out = [f"# box 1 x 0.25 x 0.25 m, {gap} m outside, quads of about {h} m (scripts/bar_skin_obj.py)"]
count = 0


def face(origin, ua, va, flip):
    """A grid of quads on the plane spanned by axes ua and va through origin."""
    global count
    nu, nv = cells[ua], cells[va]
    for j in range(nv + 1):
        for i in range(nu + 1):
            p = list(origin)
            p[ua] = lo[ua] + d[ua] * i / nu
            p[va] = lo[va] + d[va] * j / nv
            out.append("v " + " ".join(f"{round(c, 9):g}" for c in p))
    at = lambda i, j: count + 1 + i + (nu + 1) * j
    for j in range(nv):
        for i in range(nu):
            q = [at(i, j), at(i + 1, j), at(i + 1, j + 1), at(i, j + 1)]
            out.append("f " + " ".join(map(str, reversed(q) if flip else q)))
    count += (nu + 1) * (nv + 1)


# Outward normals: counter-clockwise seen from outside.
for axis in range(3):
    ua, va = [a for a in range(3) if a != axis]
    face(lo, ua, va, True)
    top = list(lo)
    top[axis] = hi[axis]
    face(top, ua, va, False)
print("\n".join(out))

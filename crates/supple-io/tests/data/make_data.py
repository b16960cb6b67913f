"""Writes the mesh-import test files of crates/supple-io/tests/data/ (issue 19).

The original is cube.node/cube.ele (TetGen, written here by hand): a 0.5 m cube of 2x2x2
cells, each split into 6 positively oriented tets (Kuhn split), 27 vertices, 48 tets, all
coordinates multiples of 0.25 (exact in any decimal or binary form). meshio 5.3.5
(`pip install meshio`) converts it to every other format, so the readers are checked
against an independent writer:

    cube_gmsh22.msh     Gmsh 2.2 ASCII         cube_gmsh41.msh   Gmsh 4.1 ASCII
    cube_gmsh22_bin.msh Gmsh 2.2 binary        cube_gmsh41_bin.msh Gmsh 4.1 binary
    cube_ascii.vtu      VTU, ascii arrays      cube_zlib.vtu     VTU, zlib-compressed binary
    cube.vtk            legacy VTK 5.1 ASCII   cube42.vtk        legacy VTK 4.2 ASCII
    cube_bin.vtk        legacy VTK 5.1 binary  cube42_bin.vtk    legacy VTK 4.2 binary
    cube.mesh           Medit ASCII
    mixed_gmsh22.msh    Gmsh 2.2 with points, lines, triangles and tets, physical groups
                        "clamp" (the triangles on x = 0), "body" (the tets) and "corner"
                        (a point), plus a node no tet uses; mixed_gmsh22_bin.msh: the same, binary

Run from this folder: python3 make_data.py
"""
import itertools

import meshio
import numpy as np

n = 2
h = 0.25
idx = lambda i, j, k: i + (n + 1) * (j + (n + 1) * k)
points = np.array(
    [[i * h, j * h, k * h] for k in range(n + 1) for j in range(n + 1) for i in range(n + 1)]
)
tets = []
for i, j, k in itertools.product(range(n), repeat=3):
    # Kuhn split: one tet per permutation of the axes, from corner 000 to corner 111.
    for perm in itertools.permutations(range(3)):
        c = [0, 0, 0]
        path = [idx(i, j, k)]
        for axis in perm:
            c[axis] += 1
            path.append(idx(i + c[0], j + c[1], k + c[2]))
        a, b, cc, d = (points[p] for p in path)
        if np.linalg.det(np.array([b - a, cc - a, d - a])) < 0:
            path[1], path[2] = path[2], path[1]
        tets.append(path)
tets = np.array(tets)

with open("cube.node", "w") as f:
    f.write(f"{len(points)} 3 0 0\n")
    for i, p in enumerate(points):
        f.write(f"{i} {float(p[0])!r} {float(p[1])!r} {float(p[2])!r}\n")
with open("cube.ele", "w") as f:
    f.write(f"{len(tets)} 4 0\n")
    for i, t in enumerate(tets):
        f.write(f"{i} {t[0]} {t[1]} {t[2]} {t[3]}\n")

mesh = meshio.read("cube.node", file_format="tetgen")
assert len(mesh.points) == 27 and len(mesh.cells_dict["tetra"]) == 48
meshio.write("cube_gmsh22.msh", mesh, file_format="gmsh22", binary=False)
meshio.write("cube_gmsh41.msh", mesh, file_format="gmsh", binary=False)
meshio.write("cube_gmsh22_bin.msh", mesh, file_format="gmsh22", binary=True)
meshio.write("cube_gmsh41_bin.msh", mesh, file_format="gmsh", binary=True)
meshio.write("cube_ascii.vtu", mesh, binary=False)
meshio.write("cube_zlib.vtu", mesh, binary=True, compression="zlib")
meshio.write("cube.vtk", mesh, binary=False)
meshio.vtk.write("cube42.vtk", mesh, fmt_version="4.2", binary=False)
meshio.write("cube_bin.vtk", mesh, binary=True)
meshio.vtk.write("cube42_bin.vtk", mesh, fmt_version="4.2", binary=True)
meshio.write("cube.mesh", mesh, file_format="medit")

# Mixed elements and physical groups (Gmsh 2.2): an extra unused node at the end.
clamp = []
for t in tets:
    on = [v for v in t if points[v][0] == 0.0]
    if len(on) == 3:
        clamp.append(on)
clamp = np.array(clamp)
extra = np.vstack([points, [[9.0, 9.0, 9.0]]])
lines = np.array([[0, 1], [1, 2]])
mixed = meshio.Mesh(
    extra,
    [("vertex", np.array([[26]])), ("line", lines), ("triangle", clamp), ("tetra", tets)],
    cell_data={
        "gmsh:physical": [np.array([3]), np.array([0, 0]), np.full(len(clamp), 1), np.full(len(tets), 2)],
        "gmsh:geometrical": [np.array([1]), np.array([1, 1]), np.full(len(clamp), 1), np.full(len(tets), 1)],
    },
    field_data={"clamp": np.array([1, 2]), "body": np.array([2, 3]), "corner": np.array([3, 0])},
)
meshio.write("mixed_gmsh22.msh", mixed, file_format="gmsh22", binary=False)
meshio.write("mixed_gmsh22_bin.msh", mixed, file_format="gmsh22", binary=True)
print("clamp triangles:", len(clamp))

"""The sagging bar's surface coloured by von Mises stress, from a scripted world: the
boundary triangles and the per-tet stress as numpy arrays, drawn with matplotlib (when it is
installed), and the same frame written as `supple run` writes it (out/stress_surface/)."""
import pathlib

import numpy as np
import supple

mesh = supple.TetMesh.box(cells=(10, 3, 3), cell_size=0.1)
bar = supple.Body(mesh, name="bar", model="corotational", youngs=1e5, poisson=0.33,
                  density=1000.0, fixed=np.flatnonzero(mesh.vertices[:, 0] <= 0.0))
world = supple.World([bar], dt=0.01, integrator="backward_euler_linearized", solver="pcg")
world.step(100)

x = world.positions("bar")
faces, tet = world.boundary_faces("bar", tets=True)  # outward triangles, each one's tet
stress = world.von_mises("bar")                       # Pa per tet
print(f"{len(faces)} boundary triangles; von Mises stress up to {stress.max():.1f} Pa "
      f"(tet {stress.argmax()})")
frame = world.write_frame("out/stress_surface")
print(f"wrote frame {frame} into out/stress_surface/ (frames/, scene.pvd, metrics.csv)")

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection
except ImportError:
    print("matplotlib is not installed: no picture (pip install matplotlib)")
else:
    fig = plt.figure(figsize=(8, 4))
    ax = fig.add_subplot(projection="3d")
    colour = plt.cm.viridis(stress[tet] / stress.max())  # each face takes its tet's stress
    ax.add_collection3d(Poly3DCollection(x[faces], facecolors=colour, edgecolor="k",
                                         linewidths=0.1))
    lo, hi = x.min(axis=0), x.max(axis=0)
    ax.set(xlim=(lo[0], hi[0]), ylim=(lo[1], hi[1]), zlim=(lo[2], hi[2]),
           xlabel="x", ylabel="y", zlabel="z")
    ax.set_box_aspect(hi - lo)
    ax.view_init(elev=20, azim=-60, vertical_axis="y")
    ax.set_title("von Mises stress after 1 s (Pa, colour scaled to the peak)")
    pathlib.Path("out").mkdir(exist_ok=True)
    fig.savefig("out/stress_surface.png", dpi=120)
    print("wrote out/stress_surface.png")

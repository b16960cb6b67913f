"""The bar of scenes/bar.toml from Python in ten lines: clamp it, let it sag, plot its tip."""
import numpy as np
import supple

mesh = supple.TetMesh.box(cells=(10, 3, 3), cell_size=0.1)
bar = supple.Body(mesh, name="bar", model="corotational", youngs=1e5, poisson=0.33,
                  density=1000.0, fixed=np.flatnonzero(mesh.vertices[:, 0] <= 0.0))
world = supple.World([bar], dt=0.01, integrator="backward_euler_linearized", solver="pcg")
tip = np.argmin(np.linalg.norm(mesh.vertices - (1.0, 0.3, 0.3), axis=1))
t, y = [], []
for _ in range(300):
    world.step()
    t.append(world.time)
    y.append(world.positions("bar")[tip, 1])
print(f"tip height after {world.time:.2f} s: {y[-1]:.4f} m (lowest {min(y):.4f} m)")

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("matplotlib is not installed: no plot (pip install matplotlib)")
else:
    plt.plot(t, y)
    plt.xlabel("time (s)")
    plt.ylabel("tip height (m)")
    plt.title("scenes/bar.toml from Python")
    import pathlib

    pathlib.Path("out").mkdir(exist_ok=True)
    plt.savefig("out/bar_tip.png", dpi=120)
    print("wrote out/bar_tip.png")

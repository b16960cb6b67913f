"""Run scenes/bar.toml from Python as `supple run` does, then read its VTU frames with
pyvista (if installed) and report the tip's displacement frame by frame."""
import pathlib
import sys

import supple

repo = pathlib.Path(__file__).resolve().parents[2]
out = pathlib.Path("out") / "bar-python"
summary = supple.load_scene(repo / "scenes" / "bar.toml").run(out=out, duration=1.0, quiet=True)
print(f"{summary['steps']} steps written to {out}")

try:
    import pyvista as pv
except ImportError:
    sys.exit("pyvista is not installed (pip install pyvista): the frames are in " + str(out))

reader = pv.get_reader(str(out / "scene.pvd"))
for t in reader.time_values[::10]:
    reader.set_active_time_value(t)
    grid = reader.read()[0]
    d = grid.point_data["displacement"]
    print(f"t = {t:5.2f} s: largest displacement {abs(d).max():.4f} m, "
          f"smallest volume ratio {grid.cell_data['volume_ratio'].min():.3f}")
if "--show" in sys.argv:
    grid.plot(scalars="von_mises", show_edges=True)

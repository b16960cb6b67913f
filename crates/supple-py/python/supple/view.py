"""``supple.view``: the browser page of ``supple view`` for a scene or mesh file, or for a
script's world as it is now, from Python.

The engine runs in the page (the wasm build), so the server only hands out files; this
module starts the ``supple`` program's server and gives back its address.
"""

import os
import shutil
import subprocess
import tempfile
import threading

__all__ = ["Viewer", "view"]


class Viewer:
    """A running ``supple view`` server: ``url`` is the page, ``stop()`` ends it (also on
    leaving a ``with`` block)."""

    def __init__(self, process, url, folder=None):
        self.process = process
        self.url = url
        # The folder of a world's scene and state (removed on stop), or None.
        self._folder = folder

    def stop(self, timeout=10.0):
        """Stops the server (SIGTERM, as Ctrl-C does); returns its exit status (0: clean)."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None
        return self.process.returncode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def __repr__(self):
        state = "running" if self.process.poll() is None else "stopped"
        return f"Viewer({self.url!r}, {state})"


def _program(program):
    if program is not None:
        return str(program)
    if os.environ.get("SUPPLE_BIN"):
        return os.environ["SUPPLE_BIN"]
    found = shutil.which("supple")
    if found is None:
        raise FileNotFoundError(
            "supple.view runs the `supple` program's viewer: install it "
            "(`cargo install --path crates/supple-cli`), put it on PATH, or set SUPPLE_BIN"
        )
    return found


def view(target, *, open_browser=True, port=0, www=None, program=None, timeout=30.0):
    """Serves the page of ``supple view`` on 127.0.0.1 with ``target`` preloaded: a scene
    file (the files it names come along), a mesh file (any importer's format, or a closed
    OBJ/STL surface to be stuffed), which becomes a body dropped on a ground plane, or a
    :class:`World` as the script has it now. Opens a browser unless ``open_browser=False``;
    ``port=0`` takes a free port; ``www`` is the page's folder (``crates/supple-web/www``,
    built by ``web.sh build``) when the program cannot find it. Returns a :class:`Viewer`;
    the server runs until ``stop()``.

    A world is handed over as its scene (its file, or for ``World(...)`` the scene written
    out with its meshes) and its state now: the clock and every body's positions and
    velocities, bit for bit; the page starts there and its Reset returns there. Grabs and
    forces the script added, and the integrator's warm start, are not carried (the page
    steps on from the state with the scene's own). Raises ``FileNotFoundError`` without the
    program, ``ValueError`` for a diverged world, and ``RuntimeError`` with the program's
    message when it refuses the file or the state.
    """
    from ._supple import World

    folder = None
    if isinstance(target, World):
        folder = tempfile.mkdtemp(prefix="supple-view-")
        try:
            scene, state = target._view_files(folder)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        args = [os.fspath(scene), "--state", os.fspath(state)]
    elif isinstance(target, (str, os.PathLike)):
        args = [os.fspath(target)]
    else:
        raise TypeError(
            f"supple.view takes a World or a scene or mesh file path, not {type(target).__name__}"
        )
    try:
        return _serve(_program(program), args, open_browser, port, www, timeout, folder)
    except BaseException:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
        raise


def _serve(program, args, open_browser, port, www, timeout, folder):
    cmd = [program, "view", *args, "--port", str(port)]
    if not open_browser:
        cmd.append("--no-open")
    if www is not None:
        cmd += ["--www", os.fspath(www)]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    # The first line is `serving http://127.0.0.1:PORT/`; read it with a deadline.
    line = []
    reader = threading.Thread(target=lambda: line.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    first = line[0] if line else ""
    if not first.startswith("serving "):
        if proc.poll() is None:
            proc.kill()
        _, err = proc.communicate()
        raise RuntimeError(f"supple view did not start: {err.strip() or first.strip()}")
    # Keep draining the program's output so it never blocks on a full pipe.
    for stream in (proc.stdout, proc.stderr):
        threading.Thread(target=stream.read, daemon=True).start()
    url = first.split(" ", 1)[1].strip() + "index.html?view"
    return Viewer(proc, url, folder)

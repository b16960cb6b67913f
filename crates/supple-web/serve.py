"""A static server for the page on 127.0.0.1 (no backend): `python3 serve.py [PORT] [DIR]`.

Serves .wasm as application/wasm (for WebAssembly.instantiateStreaming). PORT 0 picks a free
port; the first line printed is `serving http://127.0.0.1:PORT/`.
"""

import functools
import http.server
import os
import sys


class Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm",
        ".js": "text/javascript",
        ".mjs": "text/javascript",
    }

    def log_message(self, format, *args):  # quiet: tests read stdout for the port only
        pass


def main():
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8017
    root = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "www")
    handler = functools.partial(Handler, directory=root)
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
        print(f"serving http://127.0.0.1:{server.server_address[1]}/", flush=True)
        server.serve_forever()


if __name__ == "__main__":
    main()

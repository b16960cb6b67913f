"""Drops the custom sections (debug info, names) of a .wasm file: `strip_wasm.py IN OUT`.

The workspace's release profile keeps line tables (`debug = "line-tables-only"`), which the
page does not need; the wasm format makes them easy to cut: a section is an id byte, a LEB128
size and its bytes, and custom sections have id 0.
"""

import sys


def leb128(data, at):
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def main():
    data = open(sys.argv[1], "rb").read()
    assert data[:4] == b"\0asm", "not a wasm module"
    out = bytearray(data[:8])
    at = 8
    while at < len(data):
        start = at
        section_id = data[at]
        size, body = leb128(data, at + 1)
        at = body + size
        if section_id != 0:
            out += data[start:at]
    open(sys.argv[2], "wb").write(out)


if __name__ == "__main__":
    main()

// The Supple wasm module behind a small JS class: bytes in through supple_alloc, views out of
// wasm memory. Views into memory are made again on every call: any call may grow the memory,
// which detaches every view made on the old buffer (see the crate documentation).

export const OK = 0;
export const ERR_NO_SCENE = -1;
export const ERR_INVALID = -2;
export const ERR_FAILED = -3;
export const ERR_NOT_AVAILABLE = -4;
export const ERR_ARGS = -5;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

// The files blob of supple_load (ffi.rs decode_files): per file a u32 name length, the name,
// a u32 data length, the data (little-endian).
function filesBlob(files) {
  const parts = [];
  for (const [path, data] of files) {
    for (const part of [encoder.encode(path), data]) {
      const len = new Uint8Array(4);
      new DataView(len.buffer).setUint32(0, part.length, true);
      parts.push(len, part);
    }
  }
  const blob = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    blob.set(p, at);
    at += p.length;
  }
  return blob;
}

export class Engine {
  static async load(url) {
    const response = fetch(url);
    let instance;
    try {
      ({ instance } = await WebAssembly.instantiateStreaming(response, {}));
    } catch (e) {
      // Servers that do not send application/wasm: instantiate from the bytes.
      const bytes = await (await fetch(url)).arrayBuffer();
      ({ instance } = await WebAssembly.instantiate(bytes, {}));
    }
    return new Engine(instance.exports);
  }

  constructor(exports) {
    this.x = exports;
    this.memory = exports.memory;
  }

  // Copies `bytes` into wasm memory, runs f(ptr, len), frees them.
  withBytes(bytes, f) {
    const ptr = this.x.supple_alloc(bytes.length);
    new Uint8Array(this.memory.buffer, ptr, bytes.length).set(bytes);
    try {
      return f(ptr, bytes.length);
    } finally {
      this.x.supple_free(ptr, bytes.length);
    }
  }

  message() {
    const ptr = this.x.supple_message_ptr();
    const len = this.x.supple_message_len();
    return decoder.decode(new Uint8Array(this.memory.buffer, ptr, len).slice());
  }

  // Throws the module's message on a negative code; returns the code otherwise.
  check(code, what) {
    if (code < 0) {
      const err = new Error(`${what}: ${this.message()}`);
      err.code = code;
      throw err;
    }
    return code;
  }

  // files: array of [path relative to the scene, Uint8Array].
  loadScene(text, name, files) {
    const blob = filesBlob(files);
    const t = encoder.encode(text);
    const n = encoder.encode(name);
    const code = this.withBytes(t, (tp, tl) =>
      this.withBytes(n, (np, nl) =>
        this.withBytes(blob, (bp, bl) => this.x.supple_load(tp, tl, np, nl, bp, bl))));
    return this.check(code, 'load');
  }

  // The default scene (TOML text) of the bare mesh file `name` among `files` (default_scene.rs).
  defaultScene(name, files) {
    const blob = filesBlob(files);
    const len = this.withBytes(encoder.encode(name), (np, nl) =>
      this.withBytes(blob, (bp, bl) => this.x.supple_default_scene(np, nl, bp, bl)));
    this.check(len, 'default scene');
    return this.message();
  }

  // Per-vertex values of field `kind` (field.rs), a copy, or null where the model has none.
  field(kind) {
    const ptr = this.x.supple_field(kind);
    if (ptr === 0) return null;
    return new Float32Array(this.memory.buffer, ptr, this.x.supple_positions_len() / 3).slice();
  }

  step(n) { return this.check(this.x.supple_step(n), 'step'); }
  frame(n) { return this.check(this.x.supple_frame(n), 'step'); }
  setPaused(p) { return this.check(this.x.supple_set_paused(p ? 1 : 0), 'pause'); }
  reset() { return this.check(this.x.supple_reset(), 'reset'); }
  // Starts the world from a world state's JSON (`supple view --state`; sim.rs set_start).
  setStart(json) {
    return this.check(this.withBytes(encoder.encode(json), (p, l) => this.x.supple_set_start(p, l)), 'state');
  }
  setYoungs(e) { return this.check(this.x.supple_set_youngs(e), 'E'); }
  setPoisson(nu) { return this.check(this.x.supple_set_poisson(nu), 'ν'); }
  setDamping(a, b) { return this.check(this.x.supple_set_damping(a, b), 'damping'); }
  setDt(dt) { return this.check(this.x.supple_set_dt(dt), 'dt'); }
  setModel(name) {
    return this.check(this.withBytes(encoder.encode(name), (p, l) => this.x.supple_set_model(p, l)), 'model');
  }
  setIntegrator(name) {
    return this.check(
      this.withBytes(encoder.encode(name), (p, l) => this.x.supple_set_integrator(p, l)), 'integrator');
  }

  // A fresh view of every body's positions (f32, x y z per vertex): valid until the next call.
  positions() {
    return new Float32Array(this.memory.buffer, this.x.supple_positions_ptr(), this.x.supple_positions_len());
  }

  // A copy of every body's positions in full precision (f64), for comparing with native runs.
  positions64() {
    const ptr = this.x.supple_positions_f64();
    return new Float64Array(this.memory.buffer, ptr, this.x.supple_positions_len()).slice();
  }

  // The scene's rigid obstacles with their poses now (see view.rs).
  obstacles() {
    this.check(this.x.supple_obstacles(), 'obstacles');
    return JSON.parse(this.message());
  }

  // A copy of the surface triangles (u32 indices into positions).
  triangles() {
    return new Uint32Array(this.memory.buffer, this.x.supple_triangles_ptr(), this.x.supple_triangles_len()).slice();
  }

  bodyCount() { return this.x.supple_body_count(); }

  // The nearest hit of the ray o + t d, or null.
  pick(o, d) {
    if (this.x.supple_pick(o[0], o[1], o[2], d[0], d[1], d[2]) !== 1) return null;
    const r = new Float64Array(this.memory.buffer, this.x.supple_pick_ptr(), 9);
    return { body: r[0], triangle: r[1], bary: [r[2], r[3], r[4]], t: r[5], point: [r[6], r[7], r[8]] };
  }

  stats() {
    this.check(this.x.supple_stats(), 'stats');
    return JSON.parse(this.message());
  }

  // Grab: the engine's grab spring on a picked point (see grab.rs).
  grabStart(hit, stiffness, damping) {
    const [b0, b1, b2] = hit.bary;
    return this.x.supple_grab_start(hit.body, hit.triangle, b0, b1, b2, stiffness, damping);
  }
  grabMove(id, p) { return this.x.supple_grab_move(id, p[0], p[1], p[2]); }
  grabRelease(id) { return this.x.supple_grab_release(id); }
}

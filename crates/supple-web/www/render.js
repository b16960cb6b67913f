// A small WebGL2 renderer: the bodies' surfaces lit with flat normals (from screen-space
// derivatives, so no normals are uploaded) and coloured by displacement from rest, a ground
// grid, and the grab line. With an orbit camera and the mouse ray for picking.

const MESH_VS = `#version 300 es
in vec3 position;
in vec3 rest;
uniform mat4 viewProj;
out vec3 world;
out float disp;
void main() {
  world = position;
  disp = length(position - rest);
  gl_Position = viewProj * vec4(position, 1.0);
}`;

const MESH_FS = `#version 300 es
precision highp float;
in vec3 world;
in float disp;
uniform vec3 eye;
uniform float dispScale;
out vec4 color;
void main() {
  vec3 n = normalize(cross(dFdx(world), dFdy(world)));
  vec3 v = normalize(eye - world);
  if (dot(n, v) < 0.0) n = -n;
  vec3 l = normalize(vec3(0.4, 1.0, 0.6));
  float s = clamp(disp / dispScale, 0.0, 1.0);
  vec3 base = mix(vec3(0.25, 0.55, 0.95), vec3(0.95, 0.35, 0.2), s);
  float diffuse = max(dot(n, l), 0.0);
  float spec = pow(max(dot(n, normalize(l + v)), 0.0), 32.0);
  color = vec4(base * (0.25 + 0.75 * diffuse) + vec3(0.25) * spec, 1.0);
}`;

const LINE_VS = `#version 300 es
in vec3 position;
uniform mat4 viewProj;
void main() { gl_Position = viewProj * vec4(position, 1.0); }`;

const LINE_FS = `#version 300 es
precision highp float;
uniform vec4 tint;
out vec4 color;
void main() { color = tint; }`;

function program(gl, vs, fs) {
  const p = gl.createProgram();
  for (const [type, src] of [[gl.VERTEX_SHADER, vs], [gl.FRAGMENT_SHADER, fs]]) {
    const s = gl.createShader(type);
    gl.shaderSource(s, src);
    gl.compileShader(s);
    if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error(gl.getShaderInfoLog(s));
    gl.attachShader(p, s);
  }
  gl.linkProgram(p);
  if (!gl.getProgramParameter(p, gl.LINK_STATUS)) throw new Error(gl.getProgramInfoLog(p));
  return p;
}

// ---- small vector and matrix helpers (column-major 4×4, as WebGL takes them) ----
export const sub = (a, b) => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
export const add = (a, b) => [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
export const scale = (a, s) => [a[0] * s, a[1] * s, a[2] * s];
export const dot = (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
export const cross = (a, b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
export const normalize = (a) => scale(a, 1 / Math.hypot(a[0], a[1], a[2]));

function mul(a, b) {
  const r = new Float32Array(16);
  for (let c = 0; c < 4; c++)
    for (let row = 0; row < 4; row++) {
      let s = 0;
      for (let k = 0; k < 4; k++) s += a[k * 4 + row] * b[c * 4 + k];
      r[c * 4 + row] = s;
    }
  return r;
}

// An orbit camera around `target`: yaw and pitch in radians, distance in metres.
export class Camera {
  constructor() {
    this.target = [0, 0, 0];
    this.distance = 2;
    this.yaw = 0.6;
    this.pitch = 0.35;
    this.fov = (45 * Math.PI) / 180;
  }

  eye() {
    const cp = Math.cos(this.pitch);
    const offset = [cp * Math.sin(this.yaw), Math.sin(this.pitch), cp * Math.cos(this.yaw)];
    return add(this.target, scale(offset, this.distance));
  }

  basis() {
    const forward = normalize(sub(this.target, this.eye()));
    const right = normalize(cross(forward, [0, 1, 0]));
    const up = cross(right, forward);
    return { forward, right, up };
  }

  viewProj(aspect) {
    const e = this.eye();
    const { forward: f, right: r, up: u } = this.basis();
    const view = new Float32Array([
      r[0], u[0], -f[0], 0, r[1], u[1], -f[1], 0, r[2], u[2], -f[2], 0,
      -dot(r, e), -dot(u, e), dot(f, e), 1,
    ]);
    const near = this.distance * 0.01;
    const far = this.distance * 100;
    const t = 1 / Math.tan(this.fov / 2);
    const proj = new Float32Array([
      t / aspect, 0, 0, 0, 0, t, 0, 0, 0, 0, (far + near) / (near - far), -1,
      0, 0, (2 * far * near) / (near - far), 0,
    ]);
    return mul(proj, view);
  }

  // The ray through pixel (px, py) of a w × h canvas: { origin, dir }.
  ray(px, py, w, h) {
    const { forward, right, up } = this.basis();
    const t = Math.tan(this.fov / 2);
    const x = ((2 * px) / w - 1) * t * (w / h);
    const y = (1 - (2 * py) / h) * t;
    return { origin: this.eye(), dir: normalize(add(forward, add(scale(right, x), scale(up, y)))) };
  }

  // Frames the box [lo, hi].
  frame(lo, hi) {
    this.target = scale(add(lo, hi), 0.5);
    const size = Math.hypot(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]);
    this.distance = Math.max(size, 0.1) * 1.6;
  }
}

export class Renderer {
  constructor(canvas) {
    const gl = canvas.getContext('webgl2', { antialias: true, preserveDrawingBuffer: true });
    if (!gl) throw new Error('WebGL2 is not available');
    this.gl = gl;
    this.canvas = canvas;
    this.mesh = program(gl, MESH_VS, MESH_FS);
    this.line = program(gl, LINE_VS, LINE_FS);
    this.vao = gl.createVertexArray();
    this.posBuf = gl.createBuffer();
    this.restBuf = gl.createBuffer();
    this.indexBuf = gl.createBuffer();
    this.lineVao = gl.createVertexArray();
    this.lineBuf = gl.createBuffer();
    this.count = 0;
    this.dispScale = 0.1;
    this.grid = null;
  }

  // New geometry: rest positions, triangle indices; the grid at height `groundY`.
  setMesh(rest, triangles, groundY, extent) {
    const gl = this.gl;
    gl.bindVertexArray(this.vao);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.restBuf);
    gl.bufferData(gl.ARRAY_BUFFER, rest, gl.STATIC_DRAW);
    const restLoc = gl.getAttribLocation(this.mesh, 'rest');
    gl.enableVertexAttribArray(restLoc);
    gl.vertexAttribPointer(restLoc, 3, gl.FLOAT, false, 0, 0);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.posBuf);
    gl.bufferData(gl.ARRAY_BUFFER, rest, gl.DYNAMIC_DRAW);
    const posLoc = gl.getAttribLocation(this.mesh, 'position');
    gl.enableVertexAttribArray(posLoc);
    gl.vertexAttribPointer(posLoc, 3, gl.FLOAT, false, 0, 0);
    gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, this.indexBuf);
    gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, triangles, gl.STATIC_DRAW);
    gl.bindVertexArray(null);
    this.count = triangles.length;
    const lines = [];
    const n = 10;
    const h = extent;
    for (let i = -n; i <= n; i++) {
      const s = (i / n) * h;
      lines.push(s, groundY, -h, s, groundY, h, -h, groundY, s, h, groundY, s);
    }
    this.grid = new Float32Array(lines);
  }

  // Draws the surfaces at `positions` (f32 view into wasm memory) and the optional line.
  draw(camera, positions, line) {
    const gl = this.gl;
    const w = this.canvas.clientWidth;
    const h = this.canvas.clientHeight;
    if (this.canvas.width !== w || this.canvas.height !== h) {
      this.canvas.width = w;
      this.canvas.height = h;
    }
    gl.viewport(0, 0, w, h);
    gl.clearColor(0.12, 0.13, 0.15, 1);
    gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    gl.enable(gl.DEPTH_TEST);
    const vp = camera.viewProj(w / h);
    if (this.grid) this.lines(vp, this.grid, [0.45, 0.47, 0.5, 1]);
    gl.useProgram(this.mesh);
    gl.uniformMatrix4fv(gl.getUniformLocation(this.mesh, 'viewProj'), false, vp);
    gl.uniform3fv(gl.getUniformLocation(this.mesh, 'eye'), camera.eye());
    gl.uniform1f(gl.getUniformLocation(this.mesh, 'dispScale'), this.dispScale);
    gl.bindVertexArray(this.vao);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.posBuf);
    gl.bufferSubData(gl.ARRAY_BUFFER, 0, positions);
    gl.drawElements(gl.TRIANGLES, this.count, gl.UNSIGNED_INT, 0);
    gl.bindVertexArray(null);
    if (line) {
      gl.disable(gl.DEPTH_TEST);
      this.lines(vp, new Float32Array(line), [1, 0.85, 0.2, 1]);
    }
  }

  lines(vp, data, tint) {
    const gl = this.gl;
    gl.useProgram(this.line);
    gl.uniformMatrix4fv(gl.getUniformLocation(this.line, 'viewProj'), false, vp);
    gl.uniform4fv(gl.getUniformLocation(this.line, 'tint'), tint);
    gl.bindVertexArray(this.lineVao);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.lineBuf);
    gl.bufferData(gl.ARRAY_BUFFER, data, gl.DYNAMIC_DRAW);
    const loc = gl.getAttribLocation(this.line, 'position');
    gl.enableVertexAttribArray(loc);
    gl.vertexAttribPointer(loc, 3, gl.FLOAT, false, 0, 0);
    gl.drawArrays(gl.LINES, 0, data.length / 3);
    gl.bindVertexArray(null);
  }
}

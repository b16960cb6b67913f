// The page's 3D view with three.js (vendored r187): the bodies' surfaces coloured by a
// per-vertex field (displacement, von Mises stress or volume ratio: field.rs) over the colour
// bar's range (blue → red), flat-shaded; a ground grid; the scene's rigid
// obstacles (planes, spheres, boxes, capsules) at their current poses; the grab spring as a
// line from the grabbed point to the mouse's target; OrbitControls for the camera.

import * as THREE from 'three';
import { OrbitControls } from './vendor/three/OrbitControls.js';

export const BACKGROUND = 0x1f2126;
// The colour ramp's ends (sRGB), interpolated in linear light.
const COLD = new THREE.Color().setRGB(0.25, 0.55, 0.95, THREE.SRGBColorSpace);
const HOT = new THREE.Color().setRGB(0.95, 0.35, 0.2, THREE.SRGBColorSpace);

export class View {
  constructor(canvas) {
    this.canvas = canvas;
    this.renderer = new THREE.WebGLRenderer({ canvas, antialias: true, preserveDrawingBuffer: true });
    this.renderer.setPixelRatio(1);
    this.scene = new THREE.Scene();
    this.scene.background = new THREE.Color(BACKGROUND);
    this.camera = new THREE.PerspectiveCamera(45, 1, 0.01, 100);
    this.scene.add(new THREE.HemisphereLight(0xffffff, 0x30343c, 0.9));
    const sun = new THREE.DirectionalLight(0xffffff, 2.2);
    sun.position.set(0.4, 1.0, 0.6);
    this.scene.add(sun);
    this.controls = new OrbitControls(this.camera, canvas);
    this.controls.enableDamping = false;
    this.raycaster = new THREE.Raycaster();
    this.bodies = null; // THREE.Mesh of every body's surface
    this.extras = new THREE.Group(); // grid and obstacles of the current scene
    this.scene.add(this.extras);
    this.obstacleMeshes = [];
    const lineGeometry = new THREE.BufferGeometry();
    lineGeometry.setAttribute('position', new THREE.BufferAttribute(new Float32Array(6), 3));
    this.spring = new THREE.Line(lineGeometry,
      new THREE.LineBasicMaterial({ color: 0xffd933, depthTest: false }));
    this.spring.renderOrder = 10;
    this.spring.frustumCulled = false;
    this.spring.visible = false;
    this.scene.add(this.spring);
    this.anchor = new THREE.Mesh(new THREE.SphereGeometry(1, 12, 8),
      new THREE.MeshBasicMaterial({ color: 0xffd933, depthTest: false }));
    this.anchor.renderOrder = 10;
    this.anchor.visible = false;
    this.scene.add(this.anchor);
  }

  // A new scene: rest positions (f32, xyz per vertex), triangles (u32), obstacles (view.rs).
  setScene(rest, triangles, obstacles) {
    if (this.bodies) {
      this.scene.remove(this.bodies);
      this.bodies.geometry.dispose();
    }
    for (const o of this.extras.children.slice()) {
      this.extras.remove(o);
      o.geometry?.dispose();
    }
    const g = new THREE.BufferGeometry();
    g.setAttribute('position', new THREE.BufferAttribute(rest.slice(), 3).setUsage(THREE.DynamicDrawUsage));
    g.setAttribute('color', new THREE.BufferAttribute(new Float32Array(rest.length), 3).setUsage(THREE.DynamicDrawUsage));
    g.setIndex(new THREE.BufferAttribute(triangles, 1));
    g.computeVertexNormals();
    const material = new THREE.MeshStandardMaterial({
      vertexColors: true, flatShading: true, roughness: 0.55, metalness: 0.0, side: THREE.DoubleSide,
    });
    this.bodies = new THREE.Mesh(g, material);
    this.bodies.frustumCulled = false;
    this.scene.add(this.bodies);

    const box = new THREE.Box3().setFromBufferAttribute(g.getAttribute('position'));
    const size = box.getSize(new THREE.Vector3()).length();
    // The grid on the ground: a plane obstacle facing up, or else half the bodies' size under
    // them (room for a clamped bar to sag).
    const ground = obstacles.find((o) => o.shape.kind === 'plane' && normalOf(o).y > 0.98);
    const groundY = ground ? ground.translation[1] : box.min.y - 0.5 * size;
    const extent = Math.max(2 * size, 2);
    const grid = new THREE.GridHelper(extent, 20, 0x8a8f99, 0x555a63);
    grid.position.set(0.5 * (box.min.x + box.max.x), groundY + 1e-4, 0.5 * (box.min.z + box.max.z));
    this.extras.add(grid);
    this.obstacleMeshes = obstacles.map((o) => {
      const m = obstacleMesh(o.shape, o === ground ? extent : 2 * size);
      this.extras.add(m);
      return m;
    });
    this.setObstacles(obstacles);
    this.update(rest);
    // Frame the bodies and the ground under them (a dropped body falls into view).
    const lo = box.min.clone();
    lo.y = Math.min(lo.y, groundY);
    const centre = lo.clone().add(box.max).multiplyScalar(0.5);
    const distance = Math.max(size, 0.1) * 1.6;
    const yaw = 0.6;
    const pitch = 0.35;
    this.camera.position.set(
      centre.x + distance * Math.cos(pitch) * Math.sin(yaw),
      centre.y + distance * Math.sin(pitch),
      centre.z + distance * Math.cos(pitch) * Math.cos(yaw));
    this.camera.near = distance * 0.01;
    this.camera.far = distance * 100;
    this.controls.target.copy(centre);
    this.controls.update();
    this.anchor.scale.setScalar(0.012 * size);
  }

  // Obstacle poses now (the list of setScene, same order).
  setObstacles(obstacles) {
    obstacles.forEach((o, i) => {
      const m = this.obstacleMeshes[i];
      if (!m) return;
      const [w, x, y, z] = o.rotation_wxyz;
      m.quaternion.set(x, y, z, w);
      m.position.fromArray(o.translation);
      if (o.shape.kind === 'plane') {
        // A plane is infinite: draw its square around the point nearest the bodies' centre.
        const n = normalOf(o);
        const c = this.controls.target.clone();
        const p = new THREE.Vector3().fromArray(o.translation);
        m.position.copy(c.sub(n.clone().multiplyScalar(c.clone().sub(p).dot(n))));
      }
    });
  }

  // New positions (f32, xyz per vertex) and the colour field (f32 per vertex, or null) over
  // the bar's range [lo, hi].
  update(positions, field = null, range = [0, 1]) {
    const g = this.bodies.geometry;
    const pos = g.getAttribute('position');
    pos.array.set(positions);
    pos.needsUpdate = true;
    const col = g.getAttribute('color');
    const c = new THREE.Color();
    const [lo, hi] = range;
    const span = hi > lo ? hi - lo : 1;
    for (let i = 0, v = 0; i < positions.length; i += 3, v++) {
      const t = field ? Math.min(Math.max((field[v] - lo) / span, 0), 1) : 0;
      c.lerpColors(COLD, HOT, Number.isFinite(t) ? t : 1);
      col.array[i] = c.r;
      col.array[i + 1] = c.g;
      col.array[i + 2] = c.b;
    }
    col.needsUpdate = true;
    // Picking and culling read the bounds: recompute them from the new positions on demand.
    g.boundingSphere = null;
    g.boundingBox = null;
  }

  // The grab spring from `from` (the grabbed point) to `to` (the target), or none.
  setSpring(from, to) {
    this.spring.visible = this.anchor.visible = Boolean(from && to);
    if (!this.spring.visible) return;
    const a = this.spring.geometry.getAttribute('position');
    a.array.set([...from, ...to]);
    a.needsUpdate = true;
    this.anchor.position.fromArray(to);
  }

  resize() {
    const w = this.canvas.clientWidth;
    const h = this.canvas.clientHeight;
    if (this.canvas.width !== w || this.canvas.height !== h) {
      this.renderer.setSize(w, h, false);
      this.camera.aspect = w / h;
      this.camera.updateProjectionMatrix();
    }
  }

  render() {
    this.resize();
    this.renderer.render(this.scene, this.camera);
  }

  // The mouse ray at client pixel (x, y): { origin, dir } as arrays.
  ray(clientX, clientY) {
    const r = this.canvas.getBoundingClientRect();
    const ndc = new THREE.Vector2(((clientX - r.left) / r.width) * 2 - 1, 1 - ((clientY - r.top) / r.height) * 2);
    this.raycaster.setFromCamera(ndc, this.camera);
    const { origin, direction } = this.raycaster.ray;
    return { origin: origin.toArray(), dir: direction.toArray() };
  }

  // The nearest body surface point under client pixel (x, y), or null (after ray()).
  hitBody(clientX, clientY) {
    this.ray(clientX, clientY);
    const hits = this.bodies ? this.raycaster.intersectObject(this.bodies, false) : [];
    return hits.length > 0 ? hits[0].point.toArray() : null;
  }

  // The client pixel where the world point p is drawn.
  screenOf(p) {
    this.resize();
    const r = this.canvas.getBoundingClientRect();
    const v = new THREE.Vector3().fromArray(p).project(this.camera);
    return [r.left + ((v.x + 1) / 2) * r.width, r.top + ((1 - v.y) / 2) * r.height];
  }

  // The camera's viewing direction (unit, world).
  forward() {
    return this.camera.getWorldDirection(new THREE.Vector3()).toArray();
  }
}

function normalOf(o) {
  const [w, x, y, z] = o.rotation_wxyz;
  return new THREE.Vector3(0, 0, 1).applyQuaternion(new THREE.Quaternion(x, y, z, w));
}

// A mesh of an obstacle's shape in its local frame (view.rs: planes are local z = 0 with +z
// outward, capsules along local z); `extent` sizes the square drawn for a plane.
function obstacleMesh(shape, extent) {
  const material = new THREE.MeshStandardMaterial({ color: 0x9a9ea6, roughness: 0.8, metalness: 0.0 });
  let geometry;
  switch (shape.kind) {
    case 'plane':
      geometry = new THREE.PlaneGeometry(extent, extent);
      material.color.set(0x3a3e46);
      material.transparent = true;
      material.opacity = 0.6;
      material.depthWrite = false;
      break;
    case 'sphere':
      geometry = new THREE.SphereGeometry(shape.radius, 32, 16);
      break;
    case 'box': {
      const [x, y, z] = shape.half_extents;
      geometry = new THREE.BoxGeometry(2 * x, 2 * y, 2 * z);
      break;
    }
    case 'capsule':
      geometry = new THREE.CapsuleGeometry(shape.radius, 2 * shape.half_length, 8, 24);
      geometry.rotateX(Math.PI / 2); // three's capsule runs along y; the engine's along z
      break;
    default:
      throw new Error(`unknown obstacle shape ${shape.kind}`);
  }
  const mesh = new THREE.Mesh(geometry, material);
  mesh.name = shape.kind;
  return mesh;
}

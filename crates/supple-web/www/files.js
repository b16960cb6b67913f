// Files the user gives the page (the Open button or a drop): read into bytes, and sorted into
// a scene and its meshes, or a bare mesh file for a default scene (default_scene.rs).
//
// A scene names its files by paths relative to itself (`meshes/tube_solid_1k.node`); files
// picked or dropped come with their names only, so each is given the path under which the
// scene names it (a quoted string in the scene whose last component is the file's name, or
// that name without .node/.ele for a TetGen mesh).

// Meshes whose readers build for wasm32 (supple-io's importers) and surfaces to fill with tets.
const MESH = /\.(msh|vtu|vtk|mesh|node|ele|obj|stl)$/i;

// FileList → [[name, Uint8Array]].
export async function readDropped(list) {
  const out = [];
  for (const f of list) out.push([f.name, new Uint8Array(await f.arrayBuffer())]);
  return out;
}

// { text, name, files } for a scene among `files`; { mesh, name, files } for a bare mesh;
// { error } otherwise.
export function sceneFromFiles(files) {
  const scenes = files.filter(([n]) => /\.toml$/i.test(n));
  if (scenes.length > 1) return { error: `more than one scene given (${scenes.map(([n]) => n).join(', ')}): give one .toml with its meshes` };
  if (scenes.length === 1) {
    const [name, bytes] = scenes[0];
    const text = new TextDecoder().decode(bytes);
    const named = [...text.matchAll(/"([^"\n]+)"/g)].map((m) => m[1]);
    const others = files.filter(([n]) => n !== name).map(([n, data]) => {
      const stem = n.replace(/\.(node|ele)$/i, '');
      const path = named.find((p) => p.split('/').pop() === n || p.split('/').pop() === stem.split('/').pop());
      const dir = path ? path.replace(/[^/]*$/, '') : '';
      return [`${dir}${n}`, data];
    });
    return { text, name, files: others };
  }
  const meshes = files.filter(([n]) => MESH.test(n));
  if (meshes.length === 0)
    return { error: `no scene (.toml) or mesh file (.msh, .vtu, .vtk, .mesh, .node/.ele, .obj, .stl) among ${files.map(([n]) => n).join(', ') || 'the files'}` };
  const mesh = meshes[0][0];
  return { mesh, name: mesh.replace(/\.[^.]*$/, '.toml'), files };
}

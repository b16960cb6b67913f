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

// The entries of a drop (`item.webkitGetAsEntry()`, taken before the drop handler returns:
// the items are gone after it). Null when nothing dropped is a folder (read the FileList).
export function droppedEntries(items) {
  const entries = [...(items || [])].map((i) => (i.webkitGetAsEntry ? i.webkitGetAsEntry() : null));
  return entries.some((e) => e && e.isDirectory) ? entries.filter(Boolean) : null;
}

// Dropped entries → [[path, Uint8Array]]: a file by its name, and every file under a dropped
// folder by its path inside that folder (`meshes/tube.node`), so that a scene dropped with
// its folder finds each mesh under the path it names.
export async function readEntries(entries) {
  // A folder's entries (readEntries hands them out in batches until an empty one).
  const children = async (dir) => {
    const reader = dir.createReader();
    const all = [];
    for (;;) {
      const batch = await new Promise((ok, fail) => reader.readEntries(ok, fail));
      if (batch.length === 0) return all;
      all.push(...batch);
    }
  };
  const out = [];
  const walk = async (entry, prefix) => {
    if (entry.isFile) {
      const file = await new Promise((ok, fail) => entry.file(ok, fail));
      out.push([prefix + entry.name, new Uint8Array(await file.arrayBuffer())]);
      return;
    }
    for (const child of await children(entry)) await walk(child, `${prefix}${entry.name}/`);
  };
  for (const entry of entries) {
    if (entry.isFile) await walk(entry, '');
    // A dropped folder's own name is not part of the paths; its subfolders' names are.
    else for (const child of await children(entry)) await walk(child, '');
  }
  return out;
}

// { text, name, files } for a scene among `files`; { mesh, name, files } for a bare mesh;
// { error } otherwise.
export function sceneFromFiles(files) {
  const scenes = files.filter(([n]) => /\.toml$/i.test(n));
  if (scenes.length > 1) return { error: `more than one scene given (${scenes.map(([n]) => n).join(', ')}): give one .toml with its meshes` };
  if (scenes.length === 1) {
    const [path, bytes] = scenes[0];
    const text = new TextDecoder().decode(bytes);
    const named = [...text.matchAll(/"([^"\n]+)"/g)].map((m) => m[1]);
    // From a folder: the scene's own folder, and the others' paths relative to it.
    const base = path.replace(/[^/]*$/, '');
    const name = path.slice(base.length);
    const others = files.filter(([n]) => n !== path).map(([n, data]) => {
      if (n.includes('/') || base) return [n.startsWith(base) ? n.slice(base.length) : n, data];
      const stem = n.replace(/\.(node|ele)$/i, '');
      const where = named.find((p) => p.split('/').pop() === n || p.split('/').pop() === stem.split('/').pop());
      const dir = where ? where.replace(/[^/]*$/, '') : '';
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

//! Scenes with `[adaptive]` (Debunne et al. 2000, issue 15): the bundled poke loads and builds
//! its hierarchy; bad keys and values are refused naming the file, the key and the reason.

use std::collections::BTreeMap;
use std::path::Path;
use supple::adaptive::{Coupling, ToolOrder, ToolSide, ToolTiming};
use supple_io::{load_scene, parse_scene_from_memory};

const BASE: &str = r#"dt = 0.02
duration = 0.1
gravity = [0.0, 0.0, 0.0]
[[body]]
mesh = { kind = "box", cells = [2, 2, 2], cell_size = 0.5 }
material = { model = "linear", lambda = 4.0e4, mu = 1.0e5, density = 1000.0 }
fixed = [{ plane = { point = [0.0, 0.0, 0.0], normal = [0.0, -1.0, 0.0] } }]
[adaptive]
levels = 2
split = 0.15
merge = 0.04
[adaptive.tool]
radius = 0.15
path = [[0.0, 0.5, 1.15, 0.5], [0.1, 0.5, 1.05, 0.5]]
"#;

fn err(text: &str) -> String {
    parse_scene_from_memory(text, "poke.toml", &BTreeMap::new())
        .unwrap_err()
        .to_string()
}

#[test]
fn bundled_poke_builds_three_levels_clamped_on_each() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenes/adaptive_poke.toml");
    let scene = load_scene(&path).unwrap();
    let a = scene.adaptive.as_ref().unwrap();
    let nodes: Vec<usize> = a.meshes.iter().map(|m| m.n_vertices()).collect();
    assert_eq!(nodes, [125, 729, 4913]);
    // The bottom face (y = 0) of each level: (c + 1)² nodes.
    let held: Vec<usize> = a.fixed.iter().map(Vec::len).collect();
    assert_eq!(held, [25, 81, 289]);
    let body = scene.build_adaptive().unwrap();
    assert_eq!(body.hierarchy.dt_frame, 0.02);
    assert_eq!(body.levels[0].active.len(), 125);
    let e = scene.build_world().unwrap_err().to_string();
    assert!(
        e.contains("adaptive_poke.toml") && e.contains("[adaptive]"),
        "{e}"
    );
}

#[test]
fn adaptive_mistakes_name_the_file_key_and_reason() {
    let s = parse_scene_from_memory(BASE, "poke.toml", &BTreeMap::new()).unwrap();
    assert_eq!(s.adaptive.as_ref().unwrap().meshes.len(), 2);
    let body = s.build_adaptive().unwrap();
    assert_eq!(body.settings.coupling, Coupling::Variational, "the default");
    let paper = BASE.replace("levels = 2", "levels = 2\ncoupling = \"paper\"");
    let s = parse_scene_from_memory(&paper, "poke.toml", &BTreeMap::new()).unwrap();
    assert_eq!(
        s.build_adaptive().unwrap().settings.coupling,
        Coupling::Paper
    );
    // Tool refinement and the shared overlap: on by default, off and the reach from the keys.
    assert!(body.settings.tool_refine && body.settings.share_overlap);
    assert_eq!(body.settings.tool_reach, 2.0);
    let off = BASE.replace(
        "levels = 2",
        "levels = 2\ntool_refine = false\ntool_reach = 1.5\nshare_overlap = false",
    );
    let s = parse_scene_from_memory(&off, "poke.toml", &BTreeMap::new()).unwrap();
    let settings = s.build_adaptive().unwrap().settings;
    assert!(!settings.tool_refine && !settings.share_overlap);
    assert_eq!(settings.tool_reach, 1.5);
    assert_eq!(body.settings.tool_order, ToolOrder::Graded, "the default");
    for (key, order) in [
        ("graded", ToolOrder::Graded),
        ("distance", ToolOrder::Distance),
        ("criterion", ToolOrder::Criterion),
    ] {
        let text = BASE.replace("levels = 2", &format!("levels = 2\ntool_order = \"{key}\""));
        let s = parse_scene_from_memory(&text, "poke.toml", &BTreeMap::new()).unwrap();
        assert_eq!(s.build_adaptive().unwrap().settings.tool_order, order);
    }
    assert!(body.settings.tool_persistent, "on by default");
    let off = BASE.replace("levels = 2", "levels = 2\ntool_persistent = false");
    let s = parse_scene_from_memory(&off, "poke.toml", &BTreeMap::new()).unwrap();
    assert!(!s.build_adaptive().unwrap().settings.tool_persistent);
    assert_eq!(body.settings.tool_side, ToolSide::Outside);
    assert_eq!(body.settings.tool_timing, ToolTiming::Step);
    for (key, side) in [
        ("outside", ToolSide::Outside),
        ("persistent", ToolSide::Persistent),
        ("any", ToolSide::Any),
    ] {
        let text = BASE.replace("levels = 2", &format!("levels = 2\ntool_side = \"{key}\""));
        let s = parse_scene_from_memory(&text, "poke.toml", &BTreeMap::new()).unwrap();
        assert_eq!(s.build_adaptive().unwrap().settings.tool_side, side);
    }
    let step = BASE.replace("levels = 2", "levels = 2\ntool_timing = \"frame\"");
    let s = parse_scene_from_memory(&step, "poke.toml", &BTreeMap::new()).unwrap();
    assert_eq!(
        s.build_adaptive().unwrap().settings.tool_timing,
        ToolTiming::Frame
    );
    let near = BASE.replace("levels = 2", "levels = 2\ntool_reach = 0.5");
    let s = parse_scene_from_memory(&near, "poke.toml", &BTreeMap::new()).unwrap();
    let e = s.build_adaptive().unwrap_err().to_string();
    assert!(e.contains("adaptive.tool_reach = 0.5"), "{e}");
    let cases = [
        ("split = 0.15", "split = 0.01", "adaptive.split = 0.01"),
        ("levels = 2", "levels = 9", "adaptive.levels = 9: must be 1 to 6"),
        ("levels = 2", "levles = 2", "unknown field `levles`"),
        ("levels = 2", "levels = 2\nbudget = { kind = \"predictive\", node_updates = 0 }", "adaptive.budget.node_updates = 0"),
        ("levels = 2", "levels = 2\nstart_level = 2", "adaptive.start_level = 2"),
        ("levels = 2", "levels = 2\ncoupling = \"symmetric\"", "unknown variant `symmetric`"),
        ("levels = 2", "levels = 2\njitter = 0.5", "adaptive.jitter = 0.5"),
        ("radius = 0.15", "radius = -1.0", "adaptive.tool.radius = -1"),
        ("[0.1, 0.5, 1.05, 0.5]", "[-0.1, 0.5, 1.05, 0.5]", "adaptive.tool.path[1]: time -0.1"),
        ("model = \"linear\"", "model = \"corotational\"", "body[0].material.model"),
        ("fixed = [{ plane", "velocity = [0.0, 0.0, 0.0]\nviscosity = { kind = \"strain_rate\", d_mu = 1.0, d_lambda = 10.0 }\nfixed = [{ plane", "body[0].viscosity: not available with [adaptive]"),
        ("[adaptive]\n", "[[probe]]\nname = \"p\"\npoint = [0.0, 0.0, 0.0]\n[adaptive]\n", "[[probe]]: not available with [adaptive]"),
        ("fixed = [{ plane = { point = [0.0, 0.0, 0.0], normal = [0.0, -1.0, 0.0] } }]", "fixed = [{ vertices = [0] }]", "body[0].fixed[0]: an adaptive body"),
    ];
    for (from, to, expect) in cases {
        assert!(BASE.contains(from), "{from}");
        let e = err(&BASE.replace(from, to));
        assert!(e.starts_with("poke.toml"), "{e}");
        assert!(e.contains(expect), "{to}: {e}");
    }
    // A predictive budget below the start state is refused when the body is built.
    let tight = BASE.replace(
        "levels = 2",
        "levels = 2\nbudget = { kind = \"predictive\", node_updates = 10 }",
    );
    let s = parse_scene_from_memory(&tight, "poke.toml", &BTreeMap::new()).unwrap();
    let e = s.build_adaptive().unwrap_err().to_string();
    assert!(
        e.contains("poke.toml") && e.contains("adaptive.budget.node_updates"),
        "{e}"
    );
}

/// `scenes/adaptive_bunny.toml`: three levels read from TetGen files per level (Debunne §3.1,
/// "independently defined meshes"), built, held on every level, and refined under the tool.
#[test]
fn bunny_levels_from_tetgen_files_load_build_and_refine_under_the_tool() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenes/adaptive_bunny.toml");
    let scene = load_scene(&path).unwrap();
    let a = scene.adaptive.as_ref().unwrap();
    let nodes: Vec<usize> = a.meshes.iter().map(|m| m.n_vertices()).collect();
    assert_eq!(nodes, [118, 607, 4281]);
    assert!(
        a.fixed.iter().all(|f| !f.is_empty()),
        "the base is held on every level"
    );
    // The files are the isosurface stuffing of bunny.obj at spacings 2, 1, 0.5 (the scene's
    // header): the same scene stuffing its levels on load (and improving them, as the scene
    // improves the files) has the same meshes, bit for bit (the TetGen writer prints
    // round-trip decimals), so the files are what they claim.
    let text = std::fs::read_to_string(&path).unwrap();
    let stuffed = text
        .replace(
            "{ kind = \"tetgen\", path = \"meshes/bunny_lod0\", improve = true }",
            "{ kind = \"surface\", path = \"meshes/bunny.obj\", spacing = 2.0, improve = true }",
        )
        .replace(
            "{ kind = \"tetgen\", path = \"meshes/bunny_lod1\", improve = true }",
            "{ kind = \"surface\", path = \"meshes/bunny.obj\", spacing = 1.0, improve = true }",
        )
        .replace(
            "{ kind = \"tetgen\", path = \"meshes/bunny_lod2\", improve = true }",
            "{ kind = \"surface\", path = \"meshes/bunny.obj\", spacing = 0.5, improve = true }",
        );
    assert!(!stuffed.contains("tetgen"));
    let from_surface = supple_io::parse_scene(&stuffed, &path).unwrap();
    let b = from_surface.adaptive.as_ref().unwrap();
    for (n, (m, s)) in a.meshes.iter().zip(&b.meshes).enumerate() {
        assert_eq!(m.tets, s.tets, "level {n}");
        assert_eq!(m.positions, s.positions, "level {n}");
    }
    // Non-nested: most finer interior nodes are on no coarser node.
    let (l0, l1) = (&a.meshes[0], &a.meshes[1]);
    let shared = l1
        .positions
        .iter()
        .filter(|p| l0.positions.iter().any(|q| (q - *p).norm() < 1e-9))
        .count();
    assert!(shared < l0.n_vertices(), "{shared}");
    // Press the back for 0.4 s: nodes under the tool split, nothing diverges, the base stays.
    let mut body = scene.build_adaptive().unwrap();
    let tool = a.tool.as_ref().unwrap();
    let (mut splits, mut touched) = (0, 0);
    for f in 0..20 {
        let s = body
            .step_frame(tool.at(f as f64 * scene.dt).as_ref())
            .unwrap();
        splits += s.splits;
        touched = touched.max(s.tool_contacts);
    }
    assert!(touched > 0, "the tool reaches the level-0 surface");
    assert!(splits > 0, "the press refines");
    assert!(body.levels[1].active.len() + body.levels[2].active.len() > 0);
    for (n, st) in body.levels.iter().enumerate() {
        let fixed = &body.hierarchy.levels[n].fixed;
        for &i in &st.active {
            let i = i as usize;
            assert!(st.d[i].iter().all(|c| c.is_finite()));
            if fixed[i] {
                assert_eq!(st.d[i], nalgebra::Vector3::zeros());
            }
        }
    }
}

/// `scenes/adaptive_bunny.toml` improves its stuffed levels at load (`improve = true`; Debunne
/// et al. relax their meshes, §2.2.2 and §4.1): the smallest altitude, which bounds each
/// level's explicit step, grows, and every level takes at most half the steps per frame that
/// it takes on the files as they are.
#[test]
fn the_bunny_levels_improved_at_load_take_half_the_steps_per_frame() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenes/adaptive_bunny.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.matches(", improve = true }").count(), 3);
    let raw = supple_io::parse_scene(&text.replace(", improve = true }", " }"), &path).unwrap();
    let steps = |scene: &supple_io::Scene| -> Vec<u64> {
        let body = scene.build_adaptive().unwrap();
        (0..3).map(|n| body.hierarchy.steps_per_frame(n)).collect()
    };
    let (improved, as_is) = (steps(&load_scene(&path).unwrap()), steps(&raw));
    eprintln!("steps per frame: improved {improved:?}, as the files are {as_is:?}");
    for n in 0..3 {
        assert!(
            2 * improved[n] <= as_is[n],
            "level {n}: {improved:?} against {as_is:?}"
        );
    }
}

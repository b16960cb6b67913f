//! The bad-input corpus (issue 19): thousands of mutated scenes and mesh files, generated
//! from a fixed seed, each of which must be read to `Ok` or to an `Err` whose message names
//! the file or key — never a panic, an abort or a hang. Scenes that validate and are small
//! are also built into a world and stepped once.
//!
//! A failure prints the suite, the case number and its mutations; rerun one case, with the
//! mutated input printed, by `CORPUS_CASE=N cargo test -p supple-io --release --test corpus`.

mod handwritten;
mod inputs;
mod mutate;

use inputs::{FileMap, MeshInput, SceneInput};
use mutate::{mutate, Rng};
use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::Once;
use std::time::{Duration, Instant};
use supple::mesh::stuffing::{stuff, StuffingParams, TriangleSurface};
use supple_io::files::Files;
use supple_io::import::{read_mesh_from, surface, Orient};

const SEED: u64 = 0x5eed_0019_c0de_2024;
const SCENE_CASES: usize = 3200;
const MESH_CASES: usize = 6000;
/// A case slower than this is reported as a hang (the slowest case, an RKF45 step that
/// spends its whole trial budget, takes about 8 s on 2 shared cores).
const SLOW: Duration = Duration::from_secs(20);
/// Scenes with more vertices are parsed and validated but not built and stepped.
const BUILD_MAX_VERTICES: usize = 2000;

thread_local! {
    static IN_CASE: Cell<bool> = const { Cell::new(false) };
    static PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Panics inside a case are recorded (message and place) rather than printed.
fn quiet_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if IN_CASE.with(Cell::get) {
                let place = info
                    .location()
                    .map_or(String::new(), |l| format!(" at {}:{}", l.file(), l.line()));
                PANIC.with(|p| *p.borrow_mut() = Some(format!("{info}{place}")));
            } else {
                default(info);
            }
        }));
    });
}

/// The seed of case `n` of `suite`.
fn case_seed(suite: u64, n: usize) -> u64 {
    Rng::new(SEED ^ (suite << 56) ^ n as u64).next()
}

/// Which case to run alone (`CORPUS_CASE`), if any.
fn only_case() -> Option<usize> {
    std::env::var("CORPUS_CASE").ok()?.parse().ok()
}

/// How a case ended.
#[derive(Clone, Copy)]
enum Outcome {
    /// Refused with a good message.
    Refused,
    /// Read (and, for small scenes, built and stepped).
    Accepted,
    /// Read, built and stepped.
    Stepped,
}

/// Checks an error message: not empty, and naming one of `names` (the file or a key).
fn check_message(message: &str, names: &[String]) -> Result<Outcome, String> {
    if message.trim().is_empty() {
        return Err("empty error message".into());
    }
    if !names.iter().any(|n| message.contains(n.as_str())) {
        return Err(format!("error names none of {names:?}: {message}"));
    }
    Ok(Outcome::Refused)
}

/// Runs `case` under `catch_unwind` and a clock; a panic, a bad message or a slow case
/// becomes a failure line.
fn run_case(
    (suite, id): (&str, u64),
    n: usize,
    what: &str,
    slowest: &mut (Duration, String),
    failures: &mut Vec<String>,
    tally: &mut [usize; 3],
    case: impl FnOnce() -> Result<Outcome, String>,
) {
    let start = Instant::now();
    IN_CASE.with(|c| c.set(true));
    let result = catch_unwind(AssertUnwindSafe(case));
    IN_CASE.with(|c| c.set(false));
    let took = start.elapsed();
    if took > slowest.0 {
        *slowest = (took, format!("{suite} case {n}: {what}"));
    }
    if let Ok(Ok(o)) = &result {
        tally[*o as usize] += 1;
    }
    let failure = match result {
        Ok(Ok(_)) if took > SLOW => Some(format!("took {took:.1?}")),
        Ok(Ok(_)) => None,
        Ok(Err(message)) => Some(message),
        Err(_) => Some(format!(
            "PANIC: {}",
            PANIC.with(|p| p.borrow_mut().take()).unwrap_or_default()
        )),
    };
    if let Some(f) = failure {
        failures.push(format!(
            "{suite} case {n} (seed {:#x}) {what}: {f}",
            case_seed(id, n)
        ));
    }
}

fn report(
    suite: &str,
    cases: usize,
    start: Instant,
    slowest: &(Duration, String),
    failures: &[String],
    tally: &[usize; 3],
) {
    eprintln!(
        "{suite}: {cases} cases in {:.2?} ({} refused, {} read, {} stepped), slowest {:.1?} ({}), {} failures",
        start.elapsed(),
        tally[0],
        tally[1],
        tally[2],
        slowest.0,
        slowest.1,
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {cases} {suite} cases failed (rerun one with CORPUS_CASE=N):\n{}",
        failures.len(),
        failures.join("\n")
    );
    // Mutations that never break anything, or always do, would test little.
    if only_case().is_none() {
        assert!(
            tally[0] > cases / 10 && tally[1] + tally[2] > cases / 20,
            "{suite}: outcomes too one-sided: {tally:?}"
        );
    }
}

/// Every base input must be valid, or the corpus would mutate garbage.
fn scene_base_is_valid(s: &SceneInput) {
    let scene = supple_io::parse_scene_from_memory(&s.text, &s.name, &s.files)
        .unwrap_or_else(|e| panic!("base scene {}: {e}", s.name));
    assert!(!scene.bodies.is_empty(), "{}", s.name);
}

/// Parses (and, when small, builds and steps) a mutated scene.
fn scene_case(name: &str, text: &str, files: &FileMap) -> Result<Outcome, String> {
    let mut names = vec![name.to_string()];
    names.extend(files.keys().cloned());
    let scene = match supple_io::parse_scene_from_memory(text, name, files) {
        Ok(s) => s,
        Err(e) => return check_message(&e.to_string(), &names),
    };
    let vertices: usize = scene.bodies.iter().map(|b| b.mesh.n_vertices()).sum();
    if vertices > BUILD_MAX_VERTICES {
        return Ok(Outcome::Accepted);
    }
    let mut world = match scene.build_world() {
        Ok(w) => w,
        Err(e) => return check_message(&e.to_string(), &names),
    };
    // One step: hostile tolerances make a step do all the work the integrators allow
    // (RKF45: 10,000 accepted and 10,000 rejected trials, seconds on the torus).
    match world.step() {
        Err(e) if e.to_string().trim().is_empty() => Err("empty divergence message".into()),
        _ => Ok(Outcome::Stepped),
    }
}

#[test]
fn mutated_scenes_are_refused_or_run_never_panic() {
    quiet_panics();
    let bases = inputs::scenes();
    for b in &bases {
        scene_base_is_valid(b);
    }
    let start = Instant::now();
    let (mut slowest, mut failures) = ((Duration::ZERO, String::new()), Vec::new());
    let mut tally = [0; 3];
    let only = only_case();
    for n in 0..SCENE_CASES {
        if only.is_some_and(|o| o != n) {
            continue;
        }
        let mut rng = Rng::new(case_seed(1, n));
        let base = &bases[n % bases.len()];
        let mut text = base.text.clone().into_bytes();
        let mut files = base.files.clone();
        let what = if files.is_empty() || rng.below(10) < 7 {
            format!("{}: {}", base.name, mutate(&mut text, &mut rng))
        } else {
            let key = files.keys().nth(rng.below(files.len())).unwrap().clone();
            let bytes = files.get_mut(&key).unwrap();
            format!("{} ({key}): {}", base.name, mutate(bytes, &mut rng))
        };
        let text = String::from_utf8_lossy(&text).into_owned();
        if only.is_some() {
            eprintln!("{what}\n--- scene ---\n{text}");
        }
        run_case(
            ("scene", 1),
            n,
            &what,
            &mut slowest,
            &mut failures,
            &mut tally,
            || scene_case(&base.name, &text, &files),
        );
    }
    report("scene", SCENE_CASES, start, &slowest, &failures, &tally);
}

/// Reads a mutated surface with both OBJ readers (or the STL reader) and stuffs it coarsely.
fn surface_case(path: &Path, files: &FileMap, spacing: f64) -> Result<Outcome, String> {
    let names = vec![path.display().to_string()];
    if path.extension().is_some_and(|e| e == "obj") {
        let text = String::from_utf8_lossy(&files[&names[0]]).into_owned();
        if let Err(e) = supple_io::obj::parse_obj(&text, path) {
            check_message(&e.to_string(), &names)?;
        }
    }
    let read = surface::read_surface_from(Files::Memory(files), path).and_then(|f| {
        TriangleSurface::new(&f.vertices, &f.triangles)
            .map_err(|e| supple_io::IoError::parse(path, 1, e.to_string()))
    });
    let surface = match read {
        Ok(s) => s,
        Err(e) => return check_message(&e.to_string(), &names),
    };
    let mut params = StuffingParams::new(spacing);
    params.max_lattice_vertices = 20_000;
    if let Ok(out) = stuff(&surface, &params) {
        out.mesh
            .validate()
            .map_err(|e| format!("stuffed mesh invalid: {e}"))?;
    }
    Ok(Outcome::Accepted)
}

/// A coarse stuffing spacing for a surface: a sixth of its bounding box's diagonal.
fn coarse_spacing(m: &MeshInput) -> f64 {
    let f = surface::read_surface_from(Files::Memory(&m.files), Path::new(&m.path))
        .unwrap_or_else(|e| panic!("base surface {}: {e}", m.path));
    let (lo, hi) = supple::mesh::bounding_box(&f.vertices);
    (hi - lo).norm() / 6.0
}

#[test]
fn mutated_meshes_are_refused_or_read_never_panic() {
    quiet_panics();
    let bases = inputs::meshes();
    let surfaces = |m: &MeshInput| m.path.ends_with(".obj") || m.path.ends_with(".stl");
    let spacing: Vec<f64> = bases
        .iter()
        .map(|m| if surfaces(m) { coarse_spacing(m) } else { 0.0 })
        .collect();
    for m in bases.iter().filter(|m| !surfaces(m)) {
        read_mesh_from(
            Files::Memory(&m.files),
            Path::new(&m.path),
            None,
            Orient::Check,
        )
        .unwrap_or_else(|e| panic!("base mesh {}: {e}", m.path));
    }
    let start = Instant::now();
    let (mut slowest, mut failures) = ((Duration::ZERO, String::new()), Vec::new());
    let mut tally = [0; 3];
    let only = only_case();
    for n in 0..MESH_CASES {
        if only.is_some_and(|o| o != n) {
            continue;
        }
        let mut rng = Rng::new(case_seed(2, n));
        let k = n % bases.len();
        let base = &bases[k];
        let mut files = base.files.clone();
        let key = files.keys().nth(rng.below(files.len())).unwrap().clone();
        let bytes = files.get_mut(&key).unwrap();
        let what = format!("{key}: {}", mutate(bytes, &mut rng));
        if only.is_some() {
            eprintln!("{what}\n--- {key} ---\n{}", String::from_utf8_lossy(bytes));
        }
        let orient = if rng.below(2) == 0 {
            Orient::Check
        } else {
            Orient::Fix
        };
        let path = Path::new(&base.path);
        run_case(
            ("mesh", 2),
            n,
            &what,
            &mut slowest,
            &mut failures,
            &mut tally,
            || {
                if surfaces(base) {
                    return surface_case(path, &files, spacing[k]);
                }
                match read_mesh_from(Files::Memory(&files), path, None, orient) {
                    Ok(m) => m
                        .mesh
                        .validate()
                        .map(|()| Outcome::Accepted)
                        .map_err(|e| format!("mesh read but invalid: {e}")),
                    Err(e) => {
                        check_message(&e.to_string(), &files.keys().cloned().collect::<Vec<_>>())
                    }
                }
            },
        );
    }
    report("mesh", MESH_CASES, start, &slowest, &failures, &tally);
}

#[test]
fn the_harness_catches_panics_and_unnamed_errors() {
    quiet_panics();
    let (mut slowest, mut failures, mut tally) = ((Duration::ZERO, String::new()), vec![], [0; 3]);
    run_case(
        ("t", 0),
        0,
        "panics",
        &mut slowest,
        &mut failures,
        &mut tally,
        || {
            let v: Vec<u8> = Vec::new();
            Ok(if v[usize::from(v.is_empty())] == 0 {
                Outcome::Accepted
            } else {
                Outcome::Refused
            })
        },
    );
    run_case(
        ("t", 0),
        1,
        "unnamed",
        &mut slowest,
        &mut failures,
        &mut tally,
        || check_message("line 3: bad number", &["scene.toml".into()]),
    );
    run_case(
        ("t", 0),
        2,
        "named",
        &mut slowest,
        &mut failures,
        &mut tally,
        || check_message("scene.toml:3:1: dt: bad number", &["scene.toml".into()]),
    );
    assert_eq!(failures.len(), 2, "{failures:?}");
    assert!(failures[0].contains("PANIC") && failures[0].contains("index out of bounds"));
    assert!(failures[1].contains("names none of"));
    assert_eq!(tally, [1, 0, 0]);
}

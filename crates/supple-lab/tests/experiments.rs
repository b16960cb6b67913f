//! Paper experiments that are commands rather than scenes.

use std::process::Command;

/// Hauth & Straßer 2004 Example 1 (small version): along rotate → shear → rotate, the force
/// error against Green strain is rotation invariant for every corotated model, the polar
/// rotation beats both warping heuristics, the hybrid tensor has no pressure error, and
/// Cauchy strain is far off once the sheared cube turns.
#[test]
fn hauth_example1_force_errors() {
    let out = std::env::temp_dir().join(format!("supple-hauth-{}", std::process::id()));
    let status = Command::new(env!("CARGO_BIN_EXE_supple-lab"))
        .args(["hauth-forces", "--quiet", "--cells", "3"])
        .args(["--samples", "12", "--out"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    assert!(out.join("forces.png").exists());
    let text = std::fs::read_to_string(out.join("forces.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|c| c.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 36);
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let end_of_shear = &rows[23];
    let end = &rows[35];
    assert!((end_of_shear[0] - 20.0).abs() < 1e-9);
    for model in ["polar", "warped_element", "warped_vertex", "hybrid"] {
        let c = col(&format!("{model}.total"));
        assert!(
            (end[c] - end_of_shear[c]).abs() < 1e-6 * end_of_shear[c].max(1e-3),
            "{model}: {} after the turn vs {} before",
            end[c],
            end_of_shear[c]
        );
    }
    let e = |name: &str| end_of_shear[col(name)];
    assert!(e("polar.total") < e("warped_element.total"));
    assert!(e("warped_element.total") < e("warped_vertex.total"));
    assert!(e("hybrid.pressure") < 1e-9, "{}", e("hybrid.pressure"));
    assert!(e("hybrid.total") < e("polar.total"));
    // Mid-turn (t = 25 s), the Cauchy forces of the sheared cube are wrong by far more.
    let mid = &rows[29];
    assert!(mid[col("cauchy.total")] > 10.0 * mid[col("polar.total")]);
    let _ = std::fs::remove_dir_all(&out);
}

/// Hauth & Straßer 2004 Example 3 (a few steps): the files it writes, every configuration
/// present, the references agreeing with themselves, and reading (a)'s corner equal to the
/// coarse model's (its coarse coefficients are the coarse solution).
#[test]
fn hauth_example3_hierarchy_writes_its_table() {
    let out = std::env::temp_dir().join(format!("supple-hauth-hier-{}", std::process::id()));
    let status = Command::new(env!("CARGO_BIN_EXE_supple-lab"))
        .args(["hauth-hierarchy", "--duration", "0.3"])
        .args(["--no-cholesky-reference", "--out"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    assert!(out.join("table.md").exists());
    assert!(out.join("corner.csv").exists());
    let text = std::fs::read_to_string(out.join("runs.csv")).unwrap();
    let rows: Vec<Vec<String>> = text
        .lines()
        .skip(1)
        .map(|l| {
            // The run name is quoted (it may hold commas) and comes first.
            let (name, rest) = l[1..].split_once("\",").unwrap();
            std::iter::once(name.to_string())
                .chain(rest.split(',').map(str::to_string))
                .collect()
        })
        .collect();
    let names: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(
        names,
        [
            "StVK fine, Newton + PCG (reference)",
            "corotational fine (per-element frames)",
            "hierarchical (a): detail",
            "hierarchical (b): full",
            "StVK coarse only"
        ]
    );
    let err_end = |r: &[String]| r[9].parse::<f64>().unwrap();
    assert_eq!(err_end(&rows[0]), 0.0);
    assert!((err_end(&rows[2]) - err_end(&rows[4])).abs() < 1e-9);
    for r in &rows {
        assert!(err_end(r).is_finite(), "{r:?}");
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// Hauth & Straßer 2004 Example 4 (one second): both readings run and report their steps.
#[test]
fn hauth_example4_liver_writes_its_table() {
    let out = std::env::temp_dir().join(format!("supple-hauth-liver-{}", std::process::id()));
    let status = Command::new(env!("CARGO_BIN_EXE_supple-lab"))
        .args(["hauth-liver", "--duration", "1", "--out"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let runs = std::fs::read_to_string(out.join("runs.csv")).unwrap();
    assert_eq!(runs.lines().count(), 3);
    let steps = std::fs::read_to_string(out.join("steps.csv")).unwrap();
    assert_eq!(steps.lines().count(), 1 + 2 * 33);
    let _ = std::fs::remove_dir_all(&out);
}

//! `supple-lab stress --quick`: the files it writes and their shape.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Splits a CSV line at commas outside double quotes.
fn fields(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    out
}

#[test]
fn quick_matrix_writes_table_and_runs() {
    let out = std::env::temp_dir().join(format!("supple-cli-test-{}-stress", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let output = Command::new(env!("CARGO_BIN_EXE_supple-lab"))
        .args(["stress", "--quick", "--out"])
        .arg(&out)
        .arg("--scenes")
        .arg(repo().join("scenes"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    // 7 models × 3 cases × 1 step, one progress line each.
    let runs = 21;
    assert_eq!(stderr.lines().filter(|l| l.starts_with('[')).count(), runs);

    let csv = std::fs::read_to_string(out.join("runs.csv")).unwrap();
    let lines: Vec<_> = csv.lines().collect();
    assert_eq!(lines.len(), 1 + runs);
    let header = fields(lines[0]);
    assert_eq!(header.len(), 22, "{header:?}");
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let mut cases = std::collections::BTreeSet::new();
    for line in &lines[1..] {
        let f = fields(line);
        assert_eq!(f.len(), header.len(), "{line}");
        assert_eq!(f[col("dt_ms")], "10");
        cases.insert(f[col("case")].clone());
        let failed: bool = f[col("failed")].parse().unwrap();
        assert_eq!(failed, !f[col("reason")].is_empty(), "{line}");
        // Warped has no elastic energy: its energy gain is blank, every other model's is not.
        assert_eq!(
            f[col("energy_gain_max")].is_empty(),
            f[col("model")] == "warped",
            "{line}"
        );
        let wall: f64 = f[col("wall_ms_step_median")].parse().unwrap();
        assert!(wall > 0.0, "{line}");
    }
    assert_eq!(
        cases.into_iter().collect::<Vec<_>>(),
        ["bar_200g", "throw_10", "tube_1g"]
    );

    let table = std::fs::read_to_string(out.join("table.md")).unwrap();
    assert_eq!(
        std::str::from_utf8(&output.stdout).unwrap().trim(),
        table.trim()
    );
    // The response forced on the cases (none: the scenes' own) is in the title.
    assert!(
        table.starts_with("# supple experiment stress --quick --response auto "),
        "{table}"
    );
    // One table per case: a header, a rule and one row per model, two columns each.
    assert_eq!(table.matches("| model | dt = 10 ms |").count(), 3);
    let rows: Vec<_> = table
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| model"))
        .collect();
    assert_eq!(rows.len(), runs);
    for row in &rows {
        // "| model | cell |": three unescaped bars.
        assert_eq!(row.replace("\\|", "").matches('|').count(), 3, "{row}");
    }
    for model in [
        "warped",
        "corotational",
        "corotational_invertible",
        "stvk",
        "hybrid",
        "liesenfeld_stolfi",
        "fixed_corotated",
    ] {
        assert_eq!(
            rows.iter()
                .filter(|r| r.starts_with(&format!("| {model} |")))
                .count(),
            3
        );
    }
    // The four targets and the fixed corotated line, each judged.
    let targets: Vec<_> = table
        .lines()
        .filter(|l| l.starts_with("- **PASS**") || l.starts_with("- **FAIL**"))
        .collect();
    assert_eq!(targets.len(), 5, "{table}");
    let _ = std::fs::remove_dir_all(&out);
}

/// `--cases` with a name the matrix does not have is refused before any run, naming the
/// cases it has.
#[test]
fn an_unknown_case_is_refused_with_the_matrix_cases() {
    let output = Command::new(env!("CARGO_BIN_EXE_supple-lab"))
        .args(["stress", "--quick", "--cases", "tube_1g,crush", "--out"])
        .arg(std::env::temp_dir().join(format!("supple-cli-test-{}-cases", std::process::id())))
        .arg("--scenes")
        .arg(repo().join("scenes"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    // The quick matrix has no crush.
    assert!(stderr.contains("no case `crush`"), "{stderr}");
    assert!(stderr.contains("tube_1g, throw_10, bar_200g"), "{stderr}");
    assert!(!stderr.lines().any(|l| l.starts_with('[')), "{stderr}");
}

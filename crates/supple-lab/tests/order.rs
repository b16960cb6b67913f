//! `supple-lab order`: the fill-reducing orderings study (Zhuang & Canny Tables 1–2).

use std::process::Command;

fn supple() -> Command {
    Command::new(env!("CARGO_BIN_EXE_supple-lab"))
}

fn json_stdout(args: &[&str], scene: Option<&std::path::Path>) -> serde_json::Value {
    let mut cmd = supple();
    cmd.args(args);
    if let Some(scene) = scene {
        cmd.arg(scene);
    }
    let output = cmd.output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn order_reports_every_ordering_as_json() {
    let r = json_stdout(
        &["order", "--grid", "5x5x6", "--json", "--repeat", "1"],
        None,
    );
    assert_eq!(r["n"], 3 * 5 * 5 * 6);
    let names: Vec<&str> = r["orderings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    let mut expected = vec!["natural", "random", "amd", "nd_grid", "mnd", "nd"];
    if cfg!(feature = "metis") {
        expected.push("metis");
    }
    assert_eq!(names, expected);
    let nnz_a = r["nnz_a"].as_u64().unwrap();
    for o in r["orderings"].as_array().unwrap() {
        let (nnz_l, fill) = (o["nnz_l"].as_u64().unwrap(), o["fill"].as_u64().unwrap());
        assert_eq!(fill, nnz_l - nnz_a);
        assert!(o["factor_ms"].as_f64().unwrap() > 0.0 && o["solve_ms"].as_f64().unwrap() > 0.0);
    }
    // Tet boxes have no grid ordering; malformed sizes are refused.
    let output = supple()
        .args(["order", "--box", "2x2x3", "--json", "--repeat", "1"])
        .output()
        .unwrap();
    let r: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let metis_rows = usize::from(cfg!(feature = "metis"));
    assert_eq!(r["orderings"].as_array().unwrap().len(), 5 + metis_rows);
    // `--orderings` picks rows; `nd` is never worse than `amd` (it keeps the better), and
    // never worse than the dissection alone (`nd_pure`).
    let args = "order --box 1x2x30 --json --repeat 1 --orderings amd,nd_pure,nd";
    let r = json_stdout(&args.split(' ').collect::<Vec<_>>(), None);
    let nnz: Vec<u64> = r["orderings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["nnz_l"].as_u64().unwrap())
        .collect();
    assert_eq!(nnz.len(), 3);
    assert_eq!(nnz[2], nnz[0].min(nnz[1]), "amd, nd_pure, nd: {nnz:?}");
    for (list, message) in [
        ("amd,nd_grid", "nd_grid: only for --grid"),
        ("amd,best", "--orderings best: unknown"),
    ] {
        let output = supple()
            .args(["order", "--box", "2x2x3", "--orderings", list])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&output.stderr).contains(message));
    }
    let output = supple().args(["order", "--grid", "4x4"]).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr)
        .contains("--grid 4x4: expected three positive counts"));
}

#[test]
fn order_refuses_grids_that_overflow() {
    for grid in ["1000000x1000000x1000000", "2000x2000x1000"] {
        let o = supple().args(["order", "--grid", grid]).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains(&format!("--grid {grid}")), "{err}");
    }
}

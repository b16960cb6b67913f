//! Sizes a scene asks for, checked before anything is allocated: generated meshes whose
//! counts overflow or cannot be held, and iteration limits that would allocate per
//! iteration. Run-level estimates (memory of the solve, output size) are in the CLI.

/// The most Newton iterations per step a scene may ask for (each one keeps a residual in the
/// step's history).
pub const MAX_NEWTON_ITERATIONS: u32 = 10_000;

/// The most linear-solver iterations per solve a scene may ask for.
pub const MAX_SOLVER_ITERATIONS: usize = 1_000_000;

/// Memory of a run per tet and per vertex with an iterative solver (mesh, per-element rest
/// data and rotations, the block-sparse matrix and its scatter map, the corotational
/// tangent's slot-by-slot contributions, solver vectors): the 160k-tet bar (35,721 vertices,
/// corotational, Eisenstat SSOR) peaked at 206 MB resident with its pictures, 187 MB by these
/// constants before the pictures' share (EXPERIMENTS.md, "Bounded resources"). The multigrid
/// adds its own (`supple-run`'s budget).
pub const RUN_BYTES_PER_TET: f64 = 780.0;
pub const RUN_BYTES_PER_VERTEX: f64 = 1750.0;

/// Vertices and tets of a generated box of `cells` with `tets_per_cell` (5 or 6), or `None`
/// when the counts overflow 64 bits.
pub fn box_counts(cells: [usize; 3], tets_per_cell: u64) -> Option<(u64, u64)> {
    let c = cells.map(|c| c as u64);
    let vertices = (c[0].checked_add(1)?)
        .checked_mul(c[1].checked_add(1)?)?
        .checked_mul(c[2].checked_add(1)?)?;
    let tets = c[0]
        .checked_mul(c[1])?
        .checked_mul(c[2])?
        .checked_mul(tets_per_cell)?;
    Some((vertices, tets))
}

/// Checks that a mesh of `vertices` and `cells` (tets, or `noun`) can be indexed (`u32`)
/// and simulated: the memory of a run on it ([`RUN_BYTES_PER_TET`], [`RUN_BYTES_PER_VERTEX`])
/// against the memory the system reports as available (Linux `MemAvailable`; not checked
/// where that is unknown). `key` names the scene key or option in the message.
pub fn check_mesh_size(key: &str, vertices: u64, cells: u64, noun: &str) -> Result<(), String> {
    if vertices > u64::from(u32::MAX) || cells > u64::from(u32::MAX) {
        return Err(format!(
            "{key}: {vertices} vertices and {cells} {noun}: Supple indexes both with 32 bits (at most {})",
            u32::MAX
        ));
    }
    let bytes = vertices as f64 * RUN_BYTES_PER_VERTEX + cells as f64 * RUN_BYTES_PER_TET;
    if let Some(available) = available_memory() {
        if bytes > available as f64 {
            return Err(format!(
                "{key}: {vertices} vertices and {cells} {noun} need about {} to simulate; {} is available",
                human_bytes(bytes),
                human_bytes(available as f64)
            ));
        }
    }
    Ok(())
}

/// Memory the system reports as available for new allocations (Linux `/proc/meminfo`
/// `MemAvailable`), or `None` where it is unknown.
pub fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kb.checked_mul(1024)
}

/// `1.5 GB` style (decimal units).
pub fn human_bytes(bytes: f64) -> String {
    let units = ["B", "kB", "MB", "GB", "TB", "PB", "EB"];
    let mut v = bytes;
    let mut u = 0;
    while v >= 1000.0 && u + 1 < units.len() {
        v /= 1000.0;
        u += 1;
    }
    if u == 0 {
        format!("{v:.0} B")
    } else if v.is_finite() && v < 1000.0 {
        format!("{v:.1} {}", units[u])
    } else {
        format!("{bytes:.1e} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn box_counts_overflow_to_none() {
        assert_eq!(box_counts([10, 3, 3], 5), Some((176, 450)));
        assert_eq!(box_counts([usize::MAX, 1, 1], 5), None);
        assert_eq!(box_counts([1 << 40, 1 << 20, 1 << 10], 6), None);
        let (v, t) = box_counts([10, 3, 4_294_967_296], 5).unwrap();
        assert!(check_mesh_size("k", v, t, "tets")
            .unwrap_err()
            .starts_with("k: "));
        check_mesh_size("k", 176, 450, "tets").unwrap();
    }

    #[test]
    fn human_bytes_reads() {
        assert_eq!(human_bytes(999.0), "999 B");
        assert_eq!(human_bytes(5.4e9), "5.4 GB");
        assert_eq!(human_bytes(f64::INFINITY), "inf B");
    }
}

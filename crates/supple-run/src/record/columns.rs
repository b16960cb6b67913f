//! The metrics.csv column names and the number format of its floats.

/// The metrics columns of one reaction (`body.constraint.col`).
pub(super) const REACTION_COLUMNS: [&str; 6] = [
    "reaction_fx",
    "reaction_fy",
    "reaction_fz",
    "reaction_tx",
    "reaction_ty",
    "reaction_tz",
];

/// `v` in the shortest form that reads back to the same `f64` (Rust's `Debug` for floats:
/// `0.1`, `1e-7`, `-2.5e300`), so that a value in metrics.csv can be checked to the last bit
/// (a patch-test energy to 1e-10, say); ten significant digits could not. The wall-clock
/// columns (`wall_ms_step`, `contact.ms`) stay at 0.1 µs: a clock reading has no more.
pub(super) fn shortest(v: f64) -> String {
    format!("{v:?}")
}

/// Contact columns of metrics.csv (world-wide, prefixed `contact.`): the last step's broad
/// pairs, narrow-phase tests, contacts, projection passes, vertices frozen by the fail-safe,
/// live springs, surface vertices held for a second solve (body–body and self contact held
/// in the solve), the deepest penetration since the previous row, and the contact phase's
/// wall time (ms).
pub(super) const CONTACT_COLUMNS: [&str; 9] = [
    "broad_pairs",
    "pairs_tested",
    "contacts",
    "iterations",
    "frozen",
    "springs",
    "surface_holds",
    "max_penetration",
    "ms",
];

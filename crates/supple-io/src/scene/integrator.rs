//! Validation of `[integrator]` (with the linear solver from `[solver]`).

use super::file::*;
use supple::linalg::OrderingKind;
use supple::time::{IntegratorKind, LinearSolverKind, NewtonSettings, WarmStart};

impl IntegratorName {
    fn name(self) -> &'static str {
        match self {
            IntegratorName::BackwardEulerLinearized => "backward_euler_linearized",
            IntegratorName::BackwardEuler => "backward_euler",
            IntegratorName::Bdf2 => "bdf2",
            IntegratorName::Bdf3 => "bdf3",
            IntegratorName::Static => "static",
            IntegratorName::SymplecticEuler => "symplectic_euler",
            IntegratorName::Newmark => "newmark",
            IntegratorName::Rkf45 => "rkf45",
        }
    }
}

/// Validates `i`; `solver` and `ordering` come from `[solver]`.
pub(super) fn integrator(
    i: &IntegratorSection,
    solver: LinearSolverKind,
    ordering: OrderingKind,
    warm_start: WarmStart,
) -> Result<IntegratorKind, String> {
    use IntegratorName as N;
    let kind = i.kind;
    let newton_kinds = [N::BackwardEuler, N::Bdf2, N::Bdf3, N::Static];
    let only = |set: bool, key: &str, kinds: &[N]| {
        if set && !kinds.contains(&kind) {
            let names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
            Err(format!(
                "integrator.{key}: not a setting of `{}` (only of {})",
                kind.name(),
                names.join(", ")
            ))
        } else {
            Ok(())
        }
    };
    only(
        i.newton_tolerance.is_some(),
        "newton_tolerance",
        &newton_kinds,
    )?;
    only(
        i.newton_max_iterations.is_some(),
        "newton_max_iterations",
        &newton_kinds,
    )?;
    only(i.line_search.is_some(), "line_search", &newton_kinds)?;
    only(i.load_steps.is_some(), "load_steps", &[N::Static])?;
    only(
        i.substeps.is_some(),
        "substeps",
        &[N::SymplecticEuler, N::Rkf45],
    )?;
    only(i.levels.is_some(), "levels", &[N::Newmark])?;
    only(i.rtol.is_some(), "rtol", &[N::Rkf45])?;
    only(i.atol.is_some(), "atol", &[N::Rkf45])?;

    let defaults = NewtonSettings::default();
    let newton = NewtonSettings {
        tolerance: i.newton_tolerance.unwrap_or(defaults.tolerance),
        max_iterations: i.newton_max_iterations.unwrap_or(defaults.max_iterations),
        line_search: i.line_search.unwrap_or(defaults.line_search),
        solver,
    };
    if newton_kinds.contains(&kind) {
        let t = newton.tolerance;
        if !(t > 0.0 && t < 1.0) {
            return Err(format!(
                "integrator.newton_tolerance = {t}: must be between 0 and 1 (a relative residual)"
            ));
        }
        if newton.max_iterations == 0
            || newton.max_iterations > super::budget::MAX_NEWTON_ITERATIONS
        {
            return Err(format!(
                "integrator.newton_max_iterations = {}: must be 1 to {}",
                newton.max_iterations,
                super::budget::MAX_NEWTON_ITERATIONS
            ));
        }
    }
    Ok(match kind {
        N::BackwardEulerLinearized => {
            IntegratorKind::BackwardEulerLinearized { solver, warm_start }
        }
        N::BackwardEuler => IntegratorKind::BackwardEuler { newton },
        N::Bdf2 => IntegratorKind::Bdf { order: 2, newton },
        N::Bdf3 => IntegratorKind::Bdf { order: 3, newton },
        N::Static => {
            let load_steps = i.load_steps.unwrap_or(10);
            if load_steps == 0 {
                return Err("integrator.load_steps = 0: must be at least 1".into());
            }
            IntegratorKind::Static { load_steps, newton }
        }
        N::SymplecticEuler => IntegratorKind::SymplecticEuler {
            substeps: i.substeps.unwrap_or(0),
        },
        N::Newmark => {
            let levels = i.levels.unwrap_or(0);
            if levels > supple::time::MAX_LADDER_LEVELS {
                return Err(format!(
                    "integrator.levels = {levels}: must be at most {}",
                    supple::time::MAX_LADDER_LEVELS
                ));
            }
            IntegratorKind::Newmark { levels, ordering }
        }
        N::Rkf45 => {
            let rtol = i.rtol.unwrap_or(1e-6);
            let atol = i.atol.unwrap_or(1e-8);
            for (key, v) in [("rtol", rtol), ("atol", atol)] {
                if !(v >= 0.0 && v.is_finite()) {
                    return Err(format!(
                        "integrator.{key} = {v}: must be a finite number ≥ 0"
                    ));
                }
            }
            let substeps = i.substeps.unwrap_or(0);
            if substeps == 0 && rtol == 0.0 && atol == 0.0 {
                return Err(
                    "integrator.rtol and atol are both 0: an adaptive step needs a tolerance"
                        .into(),
                );
            }
            IntegratorKind::Rkf45 {
                rtol,
                atol,
                substeps,
            }
        }
    })
}

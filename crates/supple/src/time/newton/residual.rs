//! The Newton residual `r(u)` of one step (the formulas are in the module documentation of
//! `newton`): positions from the unknown, forces there, and `−r` on the free vertices.

use super::Formula;
use crate::body::Body;
use crate::linalg::par;
use crate::time::system::{zero_fixed, System};
use nalgebra::Vector3;

/// Output buffers of one residual evaluation.
pub(super) struct Buffers<'a> {
    pub(super) x: &'a mut [Vector3<f64>],
    pub(super) g: &'a mut [Vector3<f64>],
    pub(super) f: &'a mut [Vector3<f64>],
    pub(super) mv: &'a mut [Vector3<f64>],
    pub(super) partials: &'a mut [f64],
}

/// Writes `x = ξ + γ u` (fixed vertices: `ξ`), the forces at `x`, and `g = −r(u)` (zero on
/// fixed vertices); returns `‖r‖`. Refreshes the model's frames at `x`.
pub(super) fn residual(
    system: &mut System,
    body: &mut Body,
    form: &Formula,
    u: &[Vector3<f64>],
    out: Buffers,
) -> f64 {
    let Buffers {
        x,
        g,
        f,
        mv,
        partials,
    } = out;
    let (xi, gamma) = (form.xi, form.gamma);
    let fixed = form.inputs.fixed;
    par::for_each_mut(x, |i, xi_out| {
        *xi_out = if fixed[i] {
            xi[i]
        } else {
            xi[i] + gamma * u[i]
        }
    });
    match form.eta {
        Some(eta) => {
            // g = γ (f(x, u) + M g) − M (u − η)   (the negative of r).
            system.forces(body, &form.inputs, x, u, &form.gravity, true, f);
            par::for_each_mut(g, |i, gi| *gi = u[i] - eta[i]);
            body.mass.mul_vec(&body.elems, g, mv);
            let (f, mv) = (&*f, &*mv);
            par::for_each_mut(g, |i, gi| *gi = gamma * f[i] - mv[i]);
        }
        None => {
            // g = f(x) + M g with the velocity-independent forces only: at v = 0 no damping
            // force acts (and System::forces would assemble K for a Rayleigh β only to
            // multiply it by zero).
            let (lumped, load) = (&body.mass.lumped, form.gravity);
            par::for_each_mut(f, |i, fi| *fi = lumped[i] * load);
            system.position_forces(body, &form.inputs, x, true, f);
            g.copy_from_slice(f);
        }
    }
    zero_fixed(fixed, g);
    body.constraints.project(g);
    let g = &*g;
    par::sum(g.len(), partials, |i| g[i].norm_squared()).sqrt()
}

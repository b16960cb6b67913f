//! Symplectic (semi-implicit) Euler with lumped masses, and the Courant bound of explicit
//! steps (Debunne, Desbrun, Cani & Barr 2000, §2.6 and §4.1).
//!
//! Debunne §2.6 integrates the nodal accelerations explicitly; with the velocity updated first
//! and the positions moved with the new velocity,
//!
//! `v⁺ = v + h M_L⁻¹ f(x, v)`, `x⁺ = x + h v⁺`,
//!
//! the scheme is symplectic (it keeps energy bounded, without drift, for conservative forces)
//! and first order in `(x, v)`. `M_L` is the lumped (diagonal) mass whatever the body's mass
//! kind — Debunne's point masses — so a step is one force evaluation and a division; `f` is
//! [`System::forces`] (elastic, viscous and Rayleigh forces, gravity). Fixed vertices have zero
//! inverse mass, so they keep `v = 0` and their positions.
//!
//! The step must satisfy the Courant condition (Debunne eq. 8), see [`CourantBound`]. The
//! world's `dt` is cut into `substeps` equal steps; `substeps = 0` chooses the smallest count
//! whose step is below [`COURANT_SAFETY`] times the bound.

use super::system::{zero_fixed, System};
use super::{Integrator, StepError, StepInputs, StepStats, MAX_SUBSTEPS};
use crate::body::Body;
use crate::clock::Instant;
use crate::linalg::par;
use nalgebra::Vector3;

/// The fraction of the Courant bound used when the substep count is automatic.
///
/// Debunne's eq. 8 is a strict inequality with no safety factor, and `h` there is the smallest
/// node distance. That is not enough in 3-D: a free regular tet with lumped masses has
/// `ω_max ≈ 3.25 c / a` (its dilatation mode at `ν = 0.33`, `a` the altitude), so leapfrog-type
/// schemes (this one, central differences) need `dt ≤ 2/ω_max ≈ 0.62 a/c`. On whole box meshes
/// the measured limits `2/ω_max` (power iteration on `M_L⁻¹K₀`, `tests/explicit.rs`) are 0.88 to
/// 0.96 times the altitude bound, so the bound itself is slightly unstable; one half of it
/// keeps a margin for worse-shaped meshes.
pub const COURANT_SAFETY: f64 = 0.5;

/// The Courant condition of Debunne et al. eq. 8, `dt < h √(ρ / (λ + 2μ)) = h / c`: a
/// disturbance travelling at the dilatational wave speed `c = √((λ + 2μ)/ρ)` (the faster of
/// the two elastic waves) must not cross the smallest element in one step.
///
/// `h` is taken as the smallest altitude of any tet (vertex to opposite face,
/// `1/|∇N_a|` with `N_a` the linear shape function of that vertex). Debunne take the smallest
/// distance between adjacent nodes; the altitude is never larger, and unlike the edge length
/// it sees flat tets (slivers), whose high frequencies are what limits the step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CourantBound {
    /// Smallest tet altitude of the rest mesh (m).
    pub min_altitude: f64,
    /// Dilatational wave speed `c = √((λ + 2μ)/ρ)` (m/s).
    pub wave_speed: f64,
    /// `min_altitude / wave_speed` (s).
    pub dt: f64,
}

impl CourantBound {
    /// The bound of `body`'s rest mesh and material.
    pub fn of(body: &Body) -> Self {
        let g_max = body
            .elems
            .grad
            .iter()
            .flat_map(|g| g.iter().map(|ga| ga.norm()))
            .fold(0.0_f64, f64::max);
        let min_altitude = if g_max > 0.0 {
            1.0 / g_max
        } else {
            f64::INFINITY
        };
        let lame = body.lame;
        let wave_speed = ((lame.lambda + 2.0 * lame.mu) / body.density).sqrt();
        Self {
            min_altitude,
            wave_speed,
            dt: min_altitude / wave_speed,
        }
    }

    /// The number of equal substeps of `dt` that keeps each below `COURANT_SAFETY · self.dt`.
    pub fn substeps(&self, dt: f64) -> usize {
        let n = (dt / (COURANT_SAFETY * self.dt)).ceil();
        if n.is_finite() && n >= 1.0 {
            n.min(u32::MAX as f64) as usize
        } else {
            1
        }
    }
}

/// Symplectic Euler with lumped masses (see the module documentation).
#[derive(Debug)]
pub struct SymplecticEuler {
    /// Substeps per world step; 0: automatic from the Courant bound.
    pub substeps: u32,
    courant: CourantBound,
    system: System,
    /// `1 / m_i` (lumped; 0 for a massless vertex).
    inv_mass: Vec<f64>,
    x: Vec<Vector3<f64>>,
    v: Vec<Vector3<f64>>,
    force: Vec<Vector3<f64>>,
}

impl SymplecticEuler {
    pub fn new(body: &Body, substeps: u32) -> Self {
        let n = body.n_vertices();
        let inv_mass = body
            .mass
            .lumped
            .iter()
            .map(|&m| if m <= 0.0 { 0.0 } else { 1.0 / m })
            .collect();
        Self {
            substeps,
            courant: CourantBound::of(body),
            system: System::new(body),
            inv_mass,
            x: vec![Vector3::zeros(); n],
            v: vec![Vector3::zeros(); n],
            force: vec![Vector3::zeros(); n],
        }
    }

    /// The Courant bound of the body (Debunne eq. 8), computed at construction.
    pub fn courant(&self) -> CourantBound {
        self.courant
    }

    /// The substeps one world step of `dt` takes.
    pub fn substeps_for(&self, dt: f64) -> usize {
        match self.substeps {
            0 => self.courant.substeps(dt),
            n => n as usize,
        }
    }
}

impl Integrator for SymplecticEuler {
    fn name(&self) -> &'static str {
        "symplectic_euler"
    }

    fn explicit(&self) -> bool {
        true
    }

    fn step_with(
        &mut self,
        body: &mut Body,
        inputs: &StepInputs,
        dt: f64,
        gravity: &Vector3<f64>,
    ) -> Result<StepStats, StepError> {
        let t0 = Instant::now();
        let n = self.substeps_for(dt);
        if n > MAX_SUBSTEPS {
            return Err(StepError::Bound {
                what: "symplectic Euler substeps",
                detail: format!(
                    "the Courant bound ({:.3e} s) asks for {n} substeps of dt = {dt:.3e} s, more than {MAX_SUBSTEPS}",
                    self.courant.dt
                ),
            });
        }
        let h = dt / n as f64;
        self.x.copy_from_slice(&body.x);
        self.v.copy_from_slice(&body.v);
        let fixed = inputs.fixed;
        zero_fixed(fixed, &mut self.v);
        for _ in 0..n {
            self.system.forces(
                body,
                inputs,
                &self.x,
                &self.v,
                gravity,
                true,
                &mut self.force,
            );
            let (force, inv_mass) = (&self.force, &self.inv_mass);
            par::for_each_mut(&mut self.v, |i, vi| {
                if !fixed[i] {
                    *vi += (h * inv_mass[i]) * force[i]
                }
            });
            let v = &self.v;
            par::for_each_mut(&mut self.x, |i, xi| *xi += h * v[i]);
        }
        body.x.copy_from_slice(&self.x);
        body.v.copy_from_slice(&self.v);
        Ok(StepStats {
            solver_converged: true,
            forces_s: t0.elapsed().as_secs_f64(),
            substeps: n,
            ..StepStats::default()
        })
    }

    fn notes(&self) -> Vec<String> {
        let c = &self.courant;
        let mode = match self.substeps {
            0 => format!(
                "automatic substeps: each at most {COURANT_SAFETY} × the bound ({:.3e} s)",
                COURANT_SAFETY * c.dt
            ),
            n => format!("{n} substeps per world step"),
        };
        vec![format!(
            "symplectic Euler: Courant bound dt < h/c = {:.3e} s (Debunne et al. eq. 8; \
             smallest tet altitude h = {:.3e} m, dilatational wave speed c = {:.3e} m/s); {mode}",
            c.dt, c.min_altitude, c.wave_speed
        )]
    }
}

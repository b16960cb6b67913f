//! Prescribed motions of held vertices: the target position of a vertex with rest position
//! `X` at motion parameter `p` (`p = s(t)` from the constraint's time function, or `p = t`).

use super::Keyframes;
use crate::fem::polar;
use crate::load::{interpolate, TimeFunction};
use nalgebra::{Matrix3, Rotation3, Unit, UnitQuaternion, Vector3};

/// Where a held vertex goes.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Motion {
    /// Its rest position `X`.
    #[default]
    Rest,
    /// The affine map `x = F X + c` reached at `p = 1` on the rotation group's path:
    /// `x = R(p) (I + p (U − I)) X + p c`, with `F = R U` the polar decomposition and `R(p)`
    /// the rotation by `p` times `R`'s angle about its axis (slerp from `I`). A chord
    /// `X + p (F X + c − X)` would squash a rotated body half way (a 90° turn passes through
    /// `det = ½`, and a 180° one through a flat body), which load-stepped static solves
    /// cannot get through. For a symmetric positive definite `F` (no rotation) both are the
    /// same; an `F` with `det F ≤ 0` (a reflection, no rotation path) keeps the chord.
    Affine { f: Matrix3<f64>, c: Vector3<f64> },
    /// `c + R(p θ) (X − c)`: rotation by `p θ` (radians) about `axis` through `center`
    /// (a rotation path, not a chord, so large angles stay rigid on the way).
    Rotation {
        center: Vector3<f64>,
        axis: Vector3<f64>,
        angle: f64,
    },
    /// `X + p d`.
    Translation(Vector3<f64>),
    /// `X + t v` (`p = t`; the time function is ignored).
    Velocity(Vector3<f64>),
    /// `X + d(t)`, `d` piecewise linear through `(t, d)` keyframes, held outside them
    /// (`p = t`; the time function is ignored).
    Path(Vec<(f64, Vector3<f64>)>),
    /// `X + d(t)`, `d` through `(t, d)` keyframes by the path's own interpolation (linear or
    /// Catmull–Rom, [`Keyframes`]), held outside them (`p = t`): a dragged vertex.
    Spline(Keyframes),
}

impl Motion {
    /// Why the motion is unusable, if it is.
    pub fn check(&self) -> Result<(), String> {
        let finite = |v: &[f64]| v.iter().all(|c| c.is_finite());
        match self {
            Motion::Rest => Ok(()),
            Motion::Affine { f, c } if finite(f.as_slice()) && finite(c.as_slice()) => Ok(()),
            Motion::Affine { .. } => Err("affine: F and c must be finite".into()),
            Motion::Rotation {
                center,
                axis,
                angle,
            } => {
                if !(finite(center.as_slice()) && finite(axis.as_slice()) && angle.is_finite()) {
                    Err("rotation: center, axis and angle must be finite".into())
                } else if axis.norm() == 0.0 {
                    Err("rotation.axis must not be zero".into())
                } else {
                    Ok(())
                }
            }
            Motion::Translation(d) | Motion::Velocity(d) if finite(d.as_slice()) => Ok(()),
            Motion::Translation(_) | Motion::Velocity(_) => {
                Err("the displacement or velocity must be finite".into())
            }
            // Checked when built (Keyframes::new).
            Motion::Spline(_) => Ok(()),
            Motion::Path(keys) => {
                let times: Vec<(f64, f64)> = keys
                    .iter()
                    .map(|(t, d)| (*t, if finite(d.as_slice()) { 0.0 } else { f64::NAN }))
                    .collect();
                TimeFunction::Keyframes(times)
                    .check()
                    .map_err(|e| format!("path: {e}"))
            }
        }
    }

    /// The motion parameter at time `t`.
    pub fn parameter(&self, time: &TimeFunction, t: f64) -> f64 {
        match self {
            Motion::Velocity(_) | Motion::Path(_) | Motion::Spline(_) => t,
            _ => time.at(t),
        }
    }

    /// The target of a vertex with rest position `x0` at parameter `p`.
    pub fn target(&self, x0: &Vector3<f64>, p: f64) -> Vector3<f64> {
        match self {
            Motion::Rest => *x0,
            Motion::Affine { .. } | Motion::Rotation { .. } => {
                let (a, b) = self
                    .map_at(p)
                    .unwrap_or((Matrix3::identity(), Vector3::zeros()));
                a * x0 + b
            }
            Motion::Translation(d) => x0 + p * d,
            Motion::Velocity(v) => x0 + p * v,
            Motion::Path(keys) => x0 + interpolate(keys, p, |a, b, w| a + w * (b - a)),
            Motion::Spline(path) => x0 + path.at(p),
        }
    }

    /// The map `x = A X + b` of an affine or rotation motion at parameter `p` (`None` for
    /// the other motions): computed once for all the vertices of a constraint (the affine
    /// one's polar decomposition is not per vertex).
    pub fn map_at(&self, p: f64) -> Option<(Matrix3<f64>, Vector3<f64>)> {
        match self {
            Motion::Affine { f, c } => Some((affine_path(f, p), p * c)),
            Motion::Rotation {
                center,
                axis,
                angle,
            } => {
                let r = Rotation3::from_axis_angle(&Unit::new_normalize(*axis), p * angle);
                let r = r.into_inner();
                Some((r, center - r * center))
            }
            _ => None,
        }
    }

    /// The velocity of the target at time `t` (central difference of the target along the
    /// time function, step `10⁻⁶ max(1, |t|)`).
    pub fn velocity(&self, time: &TimeFunction, x0: &Vector3<f64>, t: f64) -> Vector3<f64> {
        let h = 1e-6 * t.abs().max(1.0);
        let at = |t: f64| self.target(x0, self.parameter(time, t));
        (at(t + h) - at(t - h)) / (2.0 * h)
    }
}

/// `R(p) (I + p (U − I))` for `F = R U` (see [`Motion::Affine`]); the chord `I + p (F − I)`
/// when `det F ≤ 0`.
fn affine_path(f: &Matrix3<f64>, p: f64) -> Matrix3<f64> {
    let identity = Matrix3::identity();
    let det = f.determinant();
    if det.is_nan() || det <= 0.0 {
        return identity + p * (f - identity);
    }
    let r = polar::rotation(f);
    let stretch = r.tr_mul(f);
    // Symmetrize the stretch against round-off of the polar factor.
    let stretch = 0.5 * (stretch + stretch.transpose());
    let q = UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(r));
    let rp = q.powf(p).to_rotation_matrix().into_inner();
    rp * (identity + p * (stretch - identity))
}

//! Keyframed paths of points: positions at given times, interpolated linearly or by a
//! Catmull–Rom spline, held at the first and last keyframe outside them. Dragged vertices
//! and scripted grabs follow them.

use nalgebra::Vector3;

/// How a path is interpolated between keyframes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Interpolation {
    /// Piecewise linear (velocity jumps at the keyframes).
    #[default]
    Linear,
    /// Catmull–Rom (Catmull & Rom 1974): the cubic Hermite spline through the keyframes
    /// whose tangent at key `i` is the finite difference `(p_{i+1} − p_{i−1}) / (t_{i+1} −
    /// t_{i−1})` (one-sided at the ends): continuous velocity, no overshoot of a straight
    /// run of keys.
    CatmullRom,
}

/// Positions `p(t)` through `(t_i, p_i)` keyframes with strictly increasing times.
#[derive(Debug, Clone, PartialEq)]
pub struct Keyframes {
    keys: Vec<(f64, Vector3<f64>)>,
    pub interpolation: Interpolation,
}

impl Keyframes {
    /// Refuses an empty list, non-finite entries and times that do not increase.
    pub fn new(
        keys: Vec<(f64, Vector3<f64>)>,
        interpolation: Interpolation,
    ) -> Result<Self, String> {
        if keys.is_empty() {
            return Err("needs at least one keyframe".into());
        }
        for (i, (t, p)) in keys.iter().enumerate() {
            if !(t.is_finite() && p.iter().all(|c| c.is_finite())) {
                return Err(format!("keyframe {i} is not finite"));
            }
            if i > 0 && *t <= keys[i - 1].0 {
                return Err(format!(
                    "keyframe times must increase (key {i} at t = {t} follows t = {})",
                    keys[i - 1].0
                ));
            }
        }
        Ok(Self {
            keys,
            interpolation,
        })
    }

    pub fn keys(&self) -> &[(f64, Vector3<f64>)] {
        &self.keys
    }

    /// The same path started from `p0` at `t0`: keys at or before `t0` are dropped and
    /// `(t0, p0)` becomes the first.
    pub fn starting_at(&self, t0: f64, p0: Vector3<f64>) -> Self {
        let mut keys = vec![(t0, p0)];
        keys.extend(self.keys.iter().copied().filter(|(t, _)| *t > t0));
        Self {
            keys,
            interpolation: self.interpolation,
        }
    }

    /// The tangent `dp/dt` at key `i` for Catmull–Rom.
    fn tangent(&self, i: usize) -> Vector3<f64> {
        let k = &self.keys;
        let (lo, hi) = (i.saturating_sub(1), (i + 1).min(k.len() - 1));
        if lo == hi {
            return Vector3::zeros();
        }
        (k[hi].1 - k[lo].1) / (k[hi].0 - k[lo].0)
    }

    /// `p(t)`.
    pub fn at(&self, t: f64) -> Vector3<f64> {
        let k = &self.keys;
        if t <= k[0].0 {
            return k[0].1;
        }
        let Some(i) = k.iter().position(|(ti, _)| *ti > t) else {
            return k[k.len() - 1].1;
        };
        let ((t0, p0), (t1, p1)) = (k[i - 1], k[i]);
        let h = t1 - t0;
        let s = (t - t0) / h;
        match self.interpolation {
            Interpolation::Linear => p0 + s * (p1 - p0),
            Interpolation::CatmullRom => {
                let (m0, m1) = (h * self.tangent(i - 1), h * self.tangent(i));
                let (s2, s3) = (s * s, s * s * s);
                (2.0 * s3 - 3.0 * s2 + 1.0) * p0
                    + (s3 - 2.0 * s2 + s) * m0
                    + (-2.0 * s3 + 3.0 * s2) * p1
                    + (s3 - s2) * m1
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> Vec<(f64, Vector3<f64>)> {
        vec![
            (0.0, Vector3::zeros()),
            (1.0, Vector3::new(1.0, 0.0, 0.0)),
            (3.0, Vector3::new(1.0, 2.0, 0.0)),
        ]
    }

    #[test]
    fn both_interpolations_pass_through_the_keys_and_hold_outside() {
        for interp in [Interpolation::Linear, Interpolation::CatmullRom] {
            let path = Keyframes::new(keys(), interp).unwrap();
            for (t, p) in keys() {
                assert!((path.at(t) - p).norm() < 1e-15, "{interp:?} at {t}");
            }
            assert_eq!(path.at(-1.0), Vector3::zeros());
            assert_eq!(path.at(5.0), Vector3::new(1.0, 2.0, 0.0));
        }
        let lin = Keyframes::new(keys(), Interpolation::Linear).unwrap();
        assert!((lin.at(2.0) - Vector3::new(1.0, 1.0, 0.0)).norm() < 1e-15);
    }

    #[test]
    fn catmull_rom_has_a_continuous_velocity_and_reproduces_a_line() {
        let path = Keyframes::new(keys(), Interpolation::CatmullRom).unwrap();
        let d = 1e-6;
        let left = (path.at(1.0) - path.at(1.0 - d)) / d;
        let right = (path.at(1.0 + d) - path.at(1.0)) / d;
        assert!((left - right).norm() < 1e-4, "{left} vs {right}");
        // Keys on a line at uniform speed: the spline is that line.
        let line: Vec<_> = (0..4)
            .map(|i| (i as f64, Vector3::new(2.0 * i as f64, 0.0, 0.0)))
            .collect();
        let path = Keyframes::new(line, Interpolation::CatmullRom).unwrap();
        assert!((path.at(1.3) - Vector3::new(2.6, 0.0, 0.0)).norm() < 1e-14);
    }

    #[test]
    fn refuses_bad_keys() {
        assert!(Keyframes::new(vec![], Interpolation::Linear).is_err());
        let mut k = keys();
        k[2].0 = 1.0;
        assert!(Keyframes::new(k, Interpolation::Linear).is_err());
        let mut k = keys();
        k[1].1.x = f64::NAN;
        assert!(Keyframes::new(k, Interpolation::Linear).is_err());
    }

    #[test]
    fn starting_at_prepends_the_start() {
        let path = Keyframes::new(keys(), Interpolation::Linear).unwrap();
        let moved = path.starting_at(0.5, Vector3::new(0.0, 0.0, 1.0));
        assert_eq!(moved.keys().len(), 3);
        assert_eq!(moved.at(0.5), Vector3::new(0.0, 0.0, 1.0));
        assert_eq!(moved.at(1.0), Vector3::new(1.0, 0.0, 0.0));
    }
}

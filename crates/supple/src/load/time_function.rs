//! Scalar time functions `s(t)` that scale loads and prescribed motions.

/// A scalar function of time: the factor of a load or the parameter of a prescribed motion.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum TimeFunction {
    /// `s(t) = 1` for every `t`.
    #[default]
    One,
    /// `s(t) = value` for every `t`.
    Constant(f64),
    /// `s = 0` up to `t0`, linear to `1` at `t1`, then `1` (a load ramp).
    Ramp { t0: f64, t1: f64 },
    /// Piecewise linear through `(t, s)` keyframes with increasing `t`, held constant
    /// before the first and after the last.
    Keyframes(Vec<(f64, f64)>),
}

impl TimeFunction {
    /// Why this function is unusable, if it is: a non-finite number, `t1 ≤ t0`, no keyframe,
    /// or keyframe times that do not increase.
    pub fn check(&self) -> Result<(), String> {
        match self {
            TimeFunction::One => Ok(()),
            TimeFunction::Constant(v) if v.is_finite() => Ok(()),
            TimeFunction::Constant(v) => Err(format!("constant = {v}: must be finite")),
            TimeFunction::Ramp { t0, t1 } => {
                if t0.is_finite() && t1.is_finite() && t1 > t0 {
                    Ok(())
                } else {
                    Err(format!("ramp = [{t0}, {t1}]: needs finite t0 < t1"))
                }
            }
            TimeFunction::Keyframes(k) => {
                if k.is_empty() {
                    return Err("keyframes: needs at least one [t, value] pair".into());
                }
                if let Some(i) = k
                    .iter()
                    .position(|(t, s)| !(t.is_finite() && s.is_finite()))
                {
                    return Err(format!("keyframes[{i}]: must be finite"));
                }
                if let Some(i) = (1..k.len()).find(|&i| k[i].0 <= k[i - 1].0) {
                    return Err(format!(
                        "keyframes[{i}]: t = {} does not follow t = {} (times must increase)",
                        k[i].0,
                        k[i - 1].0
                    ));
                }
                Ok(())
            }
        }
    }

    /// `s(t)`.
    pub fn at(&self, t: f64) -> f64 {
        match self {
            TimeFunction::One => 1.0,
            TimeFunction::Constant(v) => *v,
            TimeFunction::Ramp { t0, t1 } => ((t - t0) / (t1 - t0)).clamp(0.0, 1.0),
            TimeFunction::Keyframes(k) => interpolate(k, t, |a, b, w| a + w * (b - a)),
        }
    }
}

/// Piecewise-linear interpolation through keyframes `(t, value)` (increasing `t`), held
/// constant outside them; `lerp(a, b, w) = a + w (b − a)`.
pub fn interpolate<T: Copy>(keys: &[(f64, T)], t: f64, lerp: impl Fn(T, T, f64) -> T) -> T {
    let k = keys.partition_point(|(tk, _)| *tk <= t);
    if k == 0 {
        return keys[0].1;
    }
    if k == keys.len() {
        return keys[k - 1].1;
    }
    let ((ta, a), (tb, b)) = (keys[k - 1], keys[k]);
    lerp(a, b, (t - ta) / (tb - ta))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ramp_and_keyframes_interpolate_and_hold() {
        let r = TimeFunction::Ramp { t0: 1.0, t1: 3.0 };
        assert_eq!([r.at(0.0), r.at(2.0), r.at(5.0)], [0.0, 0.5, 1.0]);
        let k = TimeFunction::Keyframes(vec![(0.0, 1.0), (1.0, 3.0), (2.0, -1.0)]);
        assert_eq!(
            [k.at(-1.0), k.at(0.5), k.at(1.0), k.at(1.5), k.at(9.0)],
            [1.0, 2.0, 3.0, 1.0, -1.0]
        );
        assert!(TimeFunction::Keyframes(vec![(1.0, 0.0), (1.0, 1.0)])
            .check()
            .is_err());
        assert!(TimeFunction::Ramp { t0: 1.0, t1: 1.0 }.check().is_err());
    }
}

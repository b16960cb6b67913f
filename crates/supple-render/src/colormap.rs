//! Colours: the per-body palette and the viridis colour map with its colour bar.

/// Viridis (matplotlib's default map: perceptually uniform, readable in grey and by most
/// colour-blind readers), sampled at 9 stops and interpolated linearly.
const VIRIDIS: [[u8; 3]; 9] = [
    [68, 1, 84],
    [71, 44, 122],
    [59, 81, 139],
    [44, 113, 142],
    [33, 144, 141],
    [39, 173, 129],
    [92, 200, 99],
    [170, 220, 50],
    [253, 231, 37],
];

/// The colour of `t ∈ [0, 1]` on the viridis map (clamped; NaN maps to 0).
pub fn colormap(t: f32) -> [u8; 3] {
    let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
    let x = t * (VIRIDIS.len() - 1) as f32;
    let i = (x.floor() as usize).min(VIRIDIS.len() - 2);
    let f = x - i as f32;
    let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
    [0, 1, 2].map(|c| (a[c] as f32 + f * (b[c] as f32 - a[c] as f32)).round() as u8)
}

/// A 256-entry lookup table of [`colormap`].
pub(crate) fn colormap_lut() -> [[u8; 3]; 256] {
    std::array::from_fn(|i| colormap(i as f32 / 255.0))
}

/// Body colours: a qualitative palette (Tableau 10), cycled.
const BODY_COLORS: [[u8; 3]; 8] = [
    [78, 121, 167],
    [242, 142, 43],
    [89, 161, 79],
    [225, 87, 89],
    [176, 122, 161],
    [118, 183, 178],
    [237, 201, 72],
    [156, 117, 95],
];

/// The colour of body number `i`.
pub fn body_color(i: usize) -> [u8; 3] {
    BODY_COLORS[i % BODY_COLORS.len()]
}

/// The legend of a colour-mapped field: `min` maps to the bottom of the map, `max` to the
/// top; `label` names the field and its unit, e.g. `|u| (m)`.
#[derive(Debug, Clone, PartialEq)]
pub struct ColorBar {
    /// Value at the bottom of the map.
    pub min: f32,
    /// Value at the top of the map.
    pub max: f32,
    /// Field name and unit.
    pub label: String,
}

impl ColorBar {
    /// Position of `v` on the map, in `[0, 1]`.
    pub fn normalize(&self, v: f32) -> f32 {
        let span = self.max - self.min;
        if span > 0.0 {
            ((v - self.min) / span).clamp(0.0, 1.0)
        } else {
            0.0
        }
    }
}

/// A short tick label: 3 significant digits, scientific notation outside `[1e-2, 1e4)`.
pub(crate) fn tick_label(v: f32) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if !(1e-2..1e4).contains(&a) {
        format!("{v:.2e}")
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colormap_ends_and_labels() {
        assert_eq!(colormap(0.0), VIRIDIS[0]);
        assert_eq!(colormap(1.0), VIRIDIS[8]);
        assert_eq!(colormap(f32::NAN), VIRIDIS[0]);
        assert_eq!(tick_label(0.0), "0");
        assert_eq!(tick_label(0.0523), "0.052");
        assert_eq!(tick_label(12345.0), "1.23e4");
        assert_eq!(tick_label(250.0), "250");
    }
}

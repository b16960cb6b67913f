//! The deformed volume of an adaptive body (Debunne et al. 2000, Fig. 7: "with μ = 10⁶, the
//! volume preservation creates an intuitive deformation when the sphere is pulled inside the
//! cube"). The active tets of the levels overlap where the levels meet (the meshes are not
//! nested), so the volume of [`AdaptiveBody::active_mesh`] is not the body's. The finest
//! level's mesh does tile the body: its rest tets, each node displaced as the simulation
//! represents that point ([`AdaptiveBody::sample_displacements`]: from the finest level
//! active there), give the deformed volume.

use super::{AdaptiveBody, AdaptiveError, RestPoints};
use nalgebra::Vector3;

/// The finest level's nodes bound to every level, and scratch (see the module notes).
#[derive(Debug, Clone)]
pub struct VolumeProbe {
    points: RestPoints,
    rest: Vec<Vector3<f64>>,
    tets: Vec<[u32; 4]>,
    d: Vec<Vector3<f64>>,
    rest_volume: f64,
}

impl VolumeProbe {
    pub fn new(body: &AdaptiveBody) -> Result<Self, AdaptiveError> {
        let finest = &body.hierarchy.levels[body.hierarchy.finest()].mesh;
        let rest = finest.positions.clone();
        let points = body.rest_points(&rest)?;
        let tets = finest.tets.clone();
        let rest_volume = total(&rest, &tets, None);
        Ok(Self {
            points,
            rest,
            tets,
            d: Vec::new(),
            rest_volume,
        })
    }

    /// The finest level's rest volume (m³).
    pub fn rest_volume(&self) -> f64 {
        self.rest_volume
    }

    /// The body's deformed volume now (m³).
    pub fn volume(&mut self, body: &AdaptiveBody) -> f64 {
        body.sample_displacements(&self.points, &mut self.d);
        total(&self.rest, &self.tets, Some(&self.d))
    }
}

/// `Σ det[x₁ − x₀, x₂ − x₀, x₃ − x₀] / 6` over `tets` at `x + d`.
fn total(x: &[Vector3<f64>], tets: &[[u32; 4]], d: Option<&[Vector3<f64>]>) -> f64 {
    let at = |i: u32| x[i as usize] + d.map_or_else(Vector3::zeros, |d| d[i as usize]);
    tets.iter()
        .map(|t| {
            let [a, b, c, e] = t.map(at);
            (b - a).cross(&(c - a)).dot(&(e - a)) / 6.0
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adaptive::tests::hierarchy;
    use crate::adaptive::AdaptiveSettings;

    #[test]
    fn the_rest_volume_is_the_cubes_and_a_linear_stretch_scales_it() {
        let mut body = AdaptiveBody::new(
            hierarchy(&[2, 4, 8], false, false),
            AdaptiveSettings::default(),
        )
        .unwrap();
        let mut probe = VolumeProbe::new(&body).unwrap();
        assert!((probe.rest_volume() - 1.0).abs() < 1e-12);
        assert!((probe.volume(&body) - 1.0).abs() < 1e-12);
        // Every node of every level displaced by a 1 % stretch along x: a linear field, which
        // each level represents exactly, so the volume is 1.01 whichever level is read.
        for (n, l) in body.levels.iter_mut().enumerate() {
            for (d, p) in l.d.iter_mut().zip(&body.hierarchy.levels[n].mesh.positions) {
                *d = Vector3::new(0.01 * p.x, 0.0, 0.0);
            }
        }
        let v = probe.volume(&body);
        assert!((v - 1.01).abs() < 1e-12, "{v}");
    }
}

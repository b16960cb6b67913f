//! What the page colours the bodies by, per vertex: displacement from rest (m), von Mises
//! stress (Pa) or current/rest volume ratio, the element fields averaged over each vertex's
//! tets (the same per-tet values a run writes to its VTU frames: `Body::von_mises_stress`,
//! `Body::volume_ratios`). Also the quick validity check the overlay shows: inverted tets and
//! non-finite positions, which a diverging world produces before a step fails.

use crate::ffi::{fail, with_sim};
use crate::sim::Sim;
use crate::ERR_ARGS;
use std::cell::RefCell;
use supple::body::Body;

thread_local! {
    /// The last field handed out by [`supple_field`].
    static FIELD: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

/// The fields, by the number the page passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// |x − X| per vertex (m).
    Displacement = 0,
    /// von Mises stress of the Cauchy stress (Pa), tet values averaged at vertices.
    VonMises = 1,
    /// Current/rest volume of the tets, averaged at vertices (1 at rest, < 0 inverted).
    VolumeRatio = 2,
}

impl Field {
    pub fn from_code(code: u32) -> Option<Self> {
        match code {
            0 => Some(Self::Displacement),
            1 => Some(Self::VonMises),
            2 => Some(Self::VolumeRatio),
            _ => None,
        }
    }
}

/// Per-vertex averages of the per-tet `values` of `body`.
fn at_vertices(body: &Body, values: &[f64]) -> Vec<f64> {
    let n = body.x.len();
    let (mut sum, mut count) = (vec![0.0; n], vec![0u32; n]);
    for (tet, v) in body.elems.tets.iter().zip(values) {
        for &i in tet {
            sum[i as usize] += v;
            count[i as usize] += 1;
        }
    }
    sum.iter()
        .zip(&count)
        .map(|(s, &c)| if c > 0 { s / f64::from(c) } else { 0.0 })
        .collect()
}

/// `field` at every vertex of every body (bodies one after another, as the positions);
/// `None` when a body's model defines no stress (von Mises only).
pub fn field(sim: &mut Sim, field: Field) -> Option<Vec<f32>> {
    let mut out = Vec::new();
    for b in sim.world_mut().bodies.iter_mut() {
        let values = match field {
            Field::Displacement => (b.x.iter().zip(&b.mesh.positions))
                .map(|(x, x0)| (x - x0).norm())
                .collect(),
            Field::VonMises => {
                let s = b.von_mises_stress()?;
                at_vertices(b, &s)
            }
            Field::VolumeRatio => at_vertices(b, &b.volume_ratios()),
        };
        out.extend(values.iter().map(|&v| v as f32));
    }
    Some(out)
}

/// Why the world is not a valid state, if it is not: non-finite positions or inverted tets
/// (the checks a run's verdict starts with; `supple::world::verdict` does the rest at the end
/// of a run).
pub fn invalid(sim: &Sim) -> Option<String> {
    let mut inverted = 0usize;
    for b in &sim.world().bodies {
        if b.x.iter().any(|p| !p.iter().all(|c| c.is_finite())) {
            return Some(format!("body {:?}: positions are not finite", b.name));
        }
        inverted += b.volume_ratios().iter().filter(|&&r| r <= 0.0).count();
    }
    (inverted > 0).then(|| format!("{inverted} inverted tet(s) (volume ratio ≤ 0)"))
}

/// Computes field `kind` (0 displacement, 1 von Mises, 2 volume ratio) into a buffer and
/// returns its start (one `f32` per vertex, [`supple_positions_len`](crate::ffi::supple_positions_len)
/// / 3 values, valid until the next call), or null (no scene, unknown kind, or a model
/// without stress: the message says which).
#[cfg_attr(target_arch = "wasm32", no_mangle)]
pub extern "C" fn supple_field(kind: u32) -> *const f32 {
    let mut out = None;
    let code = with_sim(|s| {
        let Some(f) = Field::from_code(kind) else {
            return fail(ERR_ARGS, "field: 0, 1 or 2");
        };
        match field(s, f) {
            Some(v) => {
                out = Some(v);
                0
            }
            None => fail(ERR_ARGS, "field: this model defines no stress"),
        }
    });
    match out {
        Some(v) if code == 0 => FIELD.with(|b| {
            let mut b = b.borrow_mut();
            *b = v;
            b.as_ptr()
        }),
        _ => std::ptr::null(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    const BAR: &str = "dt = 0.01\nduration = 1.0\n[[body]]\nmesh = { kind = \"box\", cells = [4, 1, 1], cell_size = 0.1 }\n\
        material = { model = \"corotational\", youngs = 1e5, poisson = 0.3, density = 1000.0 }\n\
        fixed = [{ plane = { point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] } }]\n";

    #[test]
    fn fields_start_at_rest_values_and_change_as_the_bar_sags() {
        let mut sim = Sim::load(BAR, "bar.toml", BTreeMap::new()).unwrap();
        let n = sim.positions().len() / 3;
        for (f, rest) in [
            (Field::Displacement, 0.0),
            (Field::VonMises, 0.0),
            (Field::VolumeRatio, 1.0),
        ] {
            let v = field(&mut sim, f).unwrap();
            assert_eq!(v.len(), n);
            assert!(v.iter().all(|&x| (x - rest).abs() < 1e-6), "{f:?}");
        }
        assert_eq!(invalid(&sim), None);
        sim.step(10).unwrap();
        let d = field(&mut sim, Field::Displacement).unwrap();
        let s = field(&mut sim, Field::VonMises).unwrap();
        assert!(d.iter().cloned().fold(0.0, f32::max) > 1e-3);
        assert!(s.iter().cloned().fold(0.0, f32::max) > 1.0);
        // A vertex crushed through its neighbours inverts tets, and says so.
        sim.world_mut().bodies[0].x[n - 1].x = -5.0;
        assert!(invalid(&sim).unwrap().contains("inverted"));
        sim.world_mut().bodies[0].x[n - 1].x = f64::NAN;
        assert!(invalid(&sim).unwrap().contains("not finite"));
        assert!(Field::from_code(3).is_none());
    }
}

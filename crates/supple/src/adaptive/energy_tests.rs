//! Why the undamped ghost coupling gains energy (Debunne §3.2): the linearised operator of
//! the coupled levels, with ghosts interpolated and their forces dropped, is not symmetric.

use super::tests::hierarchy;
use super::*;
use nalgebra::{DMatrix, Vector3};

/// The matrix `A` of `d̈ = −A d` over the free active dofs of every level at one instant
/// (levels at the same time, ghosts refreshed from their sources until the closure settles),
/// built column by column from unit displacements.
fn coupled_operator(body: &mut AdaptiveBody) -> DMatrix<f64> {
    let mut dofs = Vec::new();
    for (n, st) in body.levels.iter().enumerate() {
        for &i in &st.active {
            if !body.hierarchy.levels[n].fixed[i as usize] {
                dofs.push((n, i as usize));
            }
        }
    }
    let m = 3 * dofs.len();
    let mut a = DMatrix::zeros(m, m);
    for col in 0..m {
        for st in &mut body.levels {
            st.d.iter_mut().for_each(|d| *d = Vector3::zeros());
            st.v.iter_mut().for_each(|v| *v = Vector3::zeros());
            st.t = 0.0;
        }
        let (n, i) = dofs[col / 3];
        body.levels[n].d[i][col % 3] = 1.0;
        for _ in 0..8 {
            for l in 0..body.levels.len() {
                body.refresh_ghosts(l);
            }
        }
        for (l, st) in body.levels.iter_mut().enumerate() {
            let level = &body.hierarchy.levels[l];
            st.f.iter_mut().for_each(|f| *f = Vector3::zeros());
            for &e in &st.active_tets {
                let e = e as usize;
                let t = level.mesh.tets[e];
                let rest = level.rest(e);
                let x = std::array::from_fn(|k| rest[k] + st.d[t[k] as usize]);
                let fe = level
                    .force
                    .element_forces(e, &rest, &x, &[Vector3::zeros(); 4]);
                for k in 0..4 {
                    st.f[t[k] as usize] += fe[k];
                }
            }
        }
        for (row, &(l, k)) in dofs.iter().enumerate() {
            let f = body.levels[l].f[k] / body.hierarchy.levels[l].mass[k];
            for c in 0..3 {
                a[(3 * row + c, col)] = -f[c];
            }
        }
    }
    a
}

/// `(‖K − Kᵀ‖/‖K‖, the largest growth rate |Im √λ| over the eigenvalues λ of A)` with
/// `K = M A` (symmetric for a variational coupling, which then has real `λ ≥ 0`).
fn asymmetry_and_growth(body: &AdaptiveBody, a: &DMatrix<f64>) -> (f64, f64) {
    let mut mass = Vec::new();
    for (n, st) in body.levels.iter().enumerate() {
        for &i in &st.active {
            let level = &body.hierarchy.levels[n];
            if !level.fixed[i as usize] {
                mass.extend([level.mass[i as usize]; 3]);
            }
        }
    }
    let k = DMatrix::from_fn(a.nrows(), a.ncols(), |r, c| mass[r] * a[(r, c)]);
    let asym = (&k - k.transpose()).norm() / k.norm();
    let growth = a
        .clone()
        .complex_eigenvalues()
        .iter()
        .map(|l| l.sqrt().im.abs())
        .fold(0.0, f64::max);
    (asym, growth)
}

/// `d̈ = −A d` grows like `e^{|Im √λ| t}` for a complex eigenvalue `λ` of `A`, whatever the
/// time step: the gain measured in `ghost_coupling_gains_energy_undamped_and_decays_damped`
/// is in the spatial coupling (a level's forces use interpolated ghost values, and the
/// reaction on the ghosts is dropped, so `K = M A` is not symmetric), not in the multirate
/// clock or symplectic Euler.
#[test]
fn split_levels_have_a_nonsymmetric_operator_with_growing_modes() {
    let settings = AdaptiveSettings {
        adapt: false,
        ..AdaptiveSettings::default()
    };
    let mut body = AdaptiveBody::new(hierarchy(&[2, 4], false, true), settings).unwrap();
    let one = coupled_operator(&mut body);
    let (asym, growth) = asymmetry_and_growth(&body, &one);
    assert!(
        asym < 1e-12 && growth < 1e-6,
        "one level: {asym:e}, {growth:e}"
    );
    for i in 0..body.levels[0].status.len() {
        let level = &body.hierarchy.levels[0];
        if level.mesh.positions[i].x > 0.4 && !level.fixed[i] {
            body.force_split(0, i).unwrap();
        }
    }
    let two = coupled_operator(&mut body);
    let (asym, growth) = asymmetry_and_growth(&body, &two);
    // Measured: asymmetry 0.18, growth 1.07 /s (energy ×e^{2.1 t} in the worst mode).
    assert!(
        asym > 0.1 && growth > 0.5,
        "two levels: {asym:e}, {growth:e}"
    );
}

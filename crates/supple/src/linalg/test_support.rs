//! Systems and vectors shared by the solver tests.

use crate::fem::material::{build_model, CorotationalTangent, ModelKind};
use crate::fem::{ElementSet, Lame, Mass, MassKind};
use crate::linalg::BlockCsr;
use crate::mesh::{box_grid, BoxGrid, TetMesh, TetSplit};
use nalgebra::Vector3;

/// The bar of `cells` (5-tet split) with cells of 1 / `cells[0]` m.
pub fn bar_mesh(cells: [usize; 3]) -> TetMesh {
    box_grid(&BoxGrid {
        cells,
        cell_size: Vector3::repeat(0.6 / cells[0] as f64),
        origin: Vector3::zeros(),
        split: TetSplit::Five,
    })
}

/// A backward-Euler system matrix `M + h² K` (h = 10 ms, corotational tangent of a bent
/// configuration, E = 1e5 Pa, ρ = 1000 kg/m³, consistent mass) of the bar of `cells`, and
/// its number of vertices.
pub fn bar_system(cells: [usize; 3]) -> (BlockCsr, usize) {
    bar_system_scaled(cells, 1e-4)
}

/// [`bar_system`] with `M + h2 K`: a larger `h2` is a stiffer system (further from its mass
/// matrix), on which the multigrid pays.
pub fn bar_system_scaled(cells: [usize; 3], h2: f64) -> (BlockCsr, usize) {
    let mesh = bar_mesh(cells);
    let es = ElementSet::new(&mesh);
    let mut model = build_model(
        ModelKind::corotational(CorotationalTangent::Rotated),
        Lame::from_youngs_poisson(1e5, 0.33).unwrap(),
        &mesh,
        &es,
    );
    let x: Vec<_> = mesh
        .positions
        .iter()
        .map(|p| p + Vector3::new(0.0, -0.3 * p.x * p.x, 0.0))
        .collect();
    model.update_frames(&es, &x);
    let mut a = BlockCsr::zeros(es.pattern.clone());
    model.add_tangent(&es, &x, h2, &mut a);
    Mass::new(&es, mesh.n_vertices(), 1000.0, MassKind::Consistent).add_to(&mut a, 1.0);
    (a, mesh.n_vertices())
}

/// Pseudo-random vectors in [−1, 1)³ (a fixed LCG per `seed`), zero on fixed vertices.
pub fn random_vectors(n: usize, seed: u64, fixed: &[bool]) -> Vec<Vector3<f64>> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    };
    (0..n)
        .map(|i| {
            let v = Vector3::new(next(), next(), next());
            if fixed[i] {
                Vector3::zeros()
            } else {
                v
            }
        })
        .collect()
}

/// `f` run in a pool of `threads` workers (the thread-count independence tests).
pub fn on_threads<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a test thread pool")
        .install(f)
}

/// `(‖b − A x‖, ‖b_F − A_FH x_H‖)` over the free vertices `F`, with the held vertices `H`
/// at their values in `x`: the true residual and the scale of CG's stopping rule
/// (`cg::free_norm`), from products with the full matrix.
pub fn free_residual_norms(
    a: &BlockCsr,
    b: &[Vector3<f64>],
    fixed: &[bool],
    x: &[Vector3<f64>],
) -> (f64, f64) {
    let n = x.len();
    let held: Vec<_> = (0..n)
        .map(|i| if fixed[i] { x[i] } else { Vector3::zeros() })
        .collect();
    let (mut ax, mut ah) = (vec![Vector3::zeros(); n], vec![Vector3::zeros(); n]);
    a.mul_vec(x, &mut ax);
    a.mul_vec(&held, &mut ah);
    let (mut rr, mut ff) = (0.0, 0.0);
    for i in (0..n).filter(|&i| !fixed[i]) {
        rr += (b[i] - ax[i]).norm_squared();
        ff += (b[i] - ah[i]).norm_squared();
    }
    (rr.sqrt(), ff.sqrt())
}

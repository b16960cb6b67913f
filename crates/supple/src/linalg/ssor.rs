//! Symmetric block Gauss–Seidel (SSOR with ω = 1) in vertex order, as a preconditioner of the
//! one CG loop.
//!
//! Write `A = D + L + U` (3×3 diagonal blocks `D`, strict lower blocks `L`, `U = Lᵀ`). The
//! preconditioner is `P = M⁻¹` with `M = (D + L) D⁻¹ (D + U)` (Saad, *Iterative Methods for
//! Sparse Linear Systems*, 2nd ed., §10.2, eq. 10.9 with ω = 1), symmetric positive definite
//! whenever `A` is, since `D` is. `z = P r` is a forward sweep `(D + L) y = r` followed by a
//! backward sweep `(D + U) z = D y`, i.e. `zᵢ = yᵢ − Dᵢ⁻¹ Σ_{j>i} Aᵢⱼ zⱼ`. Both sweeps read
//! a compact copy of the upper half of `A` made at each refresh (`linalg::upper`: the forward
//! sweep scatters along the rows of `U = Lᵀ`), so an application reads half the bytes of a
//! full product where reading the lower half forward and the upper half backward in place
//! read all of it. Fixed vertices hold zero, which removes their rows and columns.
//!
//! Until issue 18 this preconditioner ran its own CG loop with Eisenstat's trick (1981), which
//! saves the product with `A` per iteration; it now runs in the shared loop (`linalg::cg`),
//! one matrix read more per iteration (measured in EXPERIMENTS.md, *Performance (issue 18)*).
//! The sweeps are sequential and deterministic; `linalg::multicolor` is the parallel variant.

use super::cg::Precond;
use super::pcg::BlockJacobi;
use super::upper::UpperHalf;
use super::BlockCsr;
use nalgebra::Vector3;

/// The block SSOR preconditioner: the inverse diagonal blocks and the upper half of `A`,
/// refreshed per solve.
#[derive(Debug, Clone)]
pub struct Ssor {
    jacobi: BlockJacobi,
    upper: UpperHalf,
    /// The forward sweep's sums.
    acc: Vec<Vector3<f64>>,
}

impl Ssor {
    pub fn new(n: usize) -> Self {
        Self {
            jacobi: BlockJacobi::new(n),
            upper: UpperHalf::default(),
            acc: vec![Vector3::zeros(); n],
        }
    }

    /// Takes the diagonal blocks of `a` on the free vertices and its upper half.
    pub fn refresh(&mut self, a: &BlockCsr, fixed: &[bool]) {
        self.jacobi.refresh(a, fixed);
        self.upper.load(a);
        self.acc.resize(a.n_rows(), Vector3::zeros());
    }
}

impl Precond for Ssor {
    fn apply(&mut self, a: &BlockCsr, fixed: &[bool], r: &[Vector3<f64>], z: &mut [Vector3<f64>]) {
        let d_inv = self.jacobi.block_diagonal().expect("block diagonal");
        self.upper
            .ssor(&a.pattern, d_inv, fixed, r, z, &mut self.acc);
    }
}

#[cfg(test)]
mod tests {
    use crate::linalg::test_support::{bar_system, free_residual_norms};
    use crate::linalg::{Pcg, PcgSettings, Preconditioner};
    use nalgebra::Vector3;

    #[test]
    fn ssor_and_jacobi_agree_on_a_bar_system_with_prescribed_vertices() {
        let (a, n) = bar_system([12, 3, 3]);
        let fixed: Vec<bool> = (0..n).map(|i| i % 13 == 0).collect();
        let b: Vec<_> = (0..n)
            .map(|i| Vector3::new((i as f64).sin(), 1.0, (0.3 * i as f64).cos()))
            .collect();
        let x0: Vec<_> = (0..n)
            .map(|i| {
                if fixed[i] {
                    Vector3::new(0.1, -0.2, 0.05 * i as f64)
                } else {
                    Vector3::zeros()
                }
            })
            .collect();
        let solve = |preconditioner| {
            let mut x = x0.clone();
            let settings = PcgSettings {
                tolerance: 1e-10,
                max_iterations: 2000,
                preconditioner,
            };
            let stats = Pcg::new(n).solve(&a, &b, &fixed, &mut x, &settings);
            (x, stats)
        };
        let (xj, sj) = solve(Preconditioner::BlockJacobi);
        let (xs, ss) = solve(Preconditioner::BlockSsor);
        assert!(sj.converged && ss.converged, "{sj:?} {ss:?}");
        assert!(
            ss.iterations * 2 < sj.iterations,
            "SSOR {} vs Jacobi {}",
            ss.iterations,
            sj.iterations
        );
        // The reported residual is the true one, relative to the free vertices' right-hand
        // side `b_F − A_FH x_H` (the held vertices at their prescribed values).
        let (r, scale) = free_residual_norms(&a, &b, &fixed, &xs);
        let rel = r / scale;
        assert!(
            rel <= 1e-10 && (rel - ss.relative_residual).abs() <= 1e-3 * rel,
            "{rel:e} vs {:e}",
            ss.relative_residual
        );
        let scale = xj.iter().map(|v| v.norm()).fold(0.0, f64::max);
        for i in 0..n {
            assert!((xj[i] - xs[i]).norm() <= 1e-7 * scale, "vertex {i}");
            if fixed[i] {
                assert_eq!(xs[i], x0[i]);
            }
        }
    }
}

//! The element-by-element warped tangent ([`WarpedTangent::Element`](super::WarpedTangent)):
//! `Σ_e B_e K_e B_eᵀ` with `B_e = diag(R_a)` over the element's vertices, each element's part
//! projected off the element's rigid velocity fields when the ghost correction is on.
//!
//! Without the projection this is the same matrix as the block-rotated tangent
//! `R_i K_ij R_jᵀ` (block `(i, j)` of `Σ_e B_e K_e B_eᵀ` is `R_i (Σ_e K_e,ij) R_jᵀ`), built from
//! the elements instead of the stored `K`. With it, `P_e B_e K_e B_eᵀ P_e` (`P_e` the orthogonal
//! projection off the element's 6 rigid velocity fields at the current positions): every
//! rigid velocity field of the body is rigid on each element, so the matrix has all of them in
//! its null space (`Φᵀ K = 0`) and a linearized implicit step keeps linear and angular momentum
//! (`tests/warped.rs`). That projection cannot be done on the assembled `K`; it is the reason
//! this path exists, and it costs about 3× a corotational tangent assembly.

use super::super::Lame;
use crate::fem::elements::ElementBlocks;
use crate::fem::ElementSet;
use crate::linalg::BlockCsr;
use nalgebra::{Matrix3, Vector3};

/// Block `(a, b)` of the linear element stiffness, `K_ab = V [μ (g_a·g_b) I + μ g_b g_aᵀ +
/// λ g_a g_bᵀ]` (Müller et al. 2002 eq. 7 for one tet; `K_ba = K_abᵀ`).
#[inline]
pub(super) fn linear_block(
    g: &[Vector3<f64>; 4],
    volume: f64,
    lame: Lame,
    a: usize,
    b: usize,
) -> Matrix3<f64> {
    let (mu, lambda) = (volume * lame.mu, volume * lame.lambda);
    Matrix3::from_diagonal_element(mu * g[a].dot(&g[b]))
        + (mu * g[b]) * g[a].transpose()
        + (lambda * g[a]) * g[b].transpose()
}

/// Adds `P A P` for an element with 4×4 blocks `blocks` (symmetric as a whole) and
/// current positions `x`, `P` the orthogonal projection off the element's rigid velocity
/// fields `u_a = t + ω × r_a`, `r_a = x_a − c` (`c` the centroid).
///
/// With `U_a = [I  −C_a]` (3×6, `C_a = [r_a]×`) the rigid fields are `U s`, `G = UᵀU =
/// diag(4I, J)`, `J = Σ (|r_a|² I − r_a r_aᵀ)`, and `P A P = A − U Eᵀ − E Uᵀ` with
/// `E = A U G⁻¹ − ½ U H`, `H = G⁻¹ (UᵀAU) G⁻¹`. In 3×3 blocks, with `T_a = Σ_b A_ab` and
/// `Q_a = −Σ_b A_ab C_b` (`(AU)_a = [T_a  Q_a]`): `E_a = [T_a/4 − ½(H_tt − C_a H_rt),
/// Q_a J⁻¹ − ½(H_tr − C_a H_rr)]`, and block `(a, b)` is
/// `A_ab − E_a,t − E_b,tᵀ − E_a,r C_b + C_a E_b,rᵀ`. An element squeezed onto a line
/// (singular `J`) keeps only the translation part of the projection.
fn add_projected(sink: &mut ElementBlocks, blocks: &[[Matrix3<f64>; 4]; 4], x: &[Vector3<f64>; 4]) {
    let c = (x[0] + x[1] + x[2] + x[3]) / 4.0;
    let r = x.map(|p| p - c);
    let cr = r.map(|ra| ra.cross_matrix());
    let j: Matrix3<f64> = r
        .iter()
        .map(|ra| Matrix3::from_diagonal_element(ra.norm_squared()) - ra * ra.transpose())
        .sum();
    let j_inv = if j.determinant() > 1e-12 * j.trace().powi(3) {
        j.try_inverse().unwrap_or_else(Matrix3::zeros)
    } else {
        Matrix3::zeros()
    };
    let t: [Matrix3<f64>; 4] = std::array::from_fn(|a| blocks[a].iter().sum());
    let q: [Matrix3<f64>; 4] =
        std::array::from_fn(|a| -(0..4).map(|b| blocks[a][b] * cr[b]).sum::<Matrix3<f64>>());
    // UᵀAU = [[Σ T_a, Σ Q_a], [Σ C_a T_a, Σ C_a Q_a]], then H = G⁻¹ (UᵀAU) G⁻¹.
    let (mut s_tt, mut s_tr, mut s_rt, mut s_rr) = (
        Matrix3::zeros(),
        Matrix3::zeros(),
        Matrix3::zeros(),
        Matrix3::zeros(),
    );
    for a in 0..4 {
        s_tt += t[a];
        s_tr += q[a];
        s_rt += cr[a] * t[a];
        s_rr += cr[a] * q[a];
    }
    let (h_tt, h_tr) = (s_tt / 16.0, s_tr * j_inv / 4.0);
    let (h_rt, h_rr) = (j_inv * s_rt / 4.0, j_inv * s_rr * j_inv);
    let e_t: [Matrix3<f64>; 4] = std::array::from_fn(|a| t[a] / 4.0 - 0.5 * (h_tt - cr[a] * h_rt));
    let e_r: [Matrix3<f64>; 4] =
        std::array::from_fn(|a| q[a] * j_inv - 0.5 * (h_tr - cr[a] * h_rr));
    for a in 0..4 {
        for b in a..4 {
            let m = blocks[a][b] - e_t[a] - e_t[b].transpose() - e_r[a] * cr[b]
                + cr[a] * e_r[b].transpose();
            sink.add_symmetric(a, b, &m);
        }
    }
}

/// Adds `scale · Σ_e B_e K_e B_eᵀ` into `k` (projected element by element when `project`),
/// with the vertex `rotations` of the last frame update.
#[allow(clippy::too_many_arguments)]
pub(super) fn add_element_tangent(
    elems: &ElementSet,
    lame: Lame,
    rotations: &[Matrix3<f64>],
    project: bool,
    x: &[Vector3<f64>],
    scale: f64,
    k: &mut BlockCsr,
) {
    elems.scatter_blocks(k, |e, sink| {
        let t = elems.tets[e].map(|i| i as usize);
        let rot = t.map(|i| rotations[i]);
        let g = &elems.grad[e];
        let sv = scale * elems.volume[e];
        let (mu, lambda) = (sv * lame.mu, sv * lame.lambda);
        // R_a K_ab R_bᵀ = V [μ (g_a·g_b) R_a R_bᵀ + μ (R_a g_b)(R_b g_a)ᵀ + λ (R_a g_a)(R_b g_b)ᵀ],
        // scaled by `scale`.
        let h: [[Vector3<f64>; 4]; 4] = std::array::from_fn(|a| g.map(|gc| rot[a] * gc));
        let upper: [[Matrix3<f64>; 4]; 4] = std::array::from_fn(|a| {
            std::array::from_fn(|b| {
                if b < a {
                    return Matrix3::zeros();
                }
                let rr = if a == b {
                    Matrix3::identity()
                } else {
                    rot[a] * rot[b].transpose()
                };
                (mu * g[a].dot(&g[b])) * rr
                    + (mu * h[a][b]) * h[b][a].transpose()
                    + (lambda * h[a][a]) * h[b][b].transpose()
            })
        });
        if project {
            let blocks = std::array::from_fn(|a| {
                std::array::from_fn(|b| {
                    if b < a {
                        upper[b][a].transpose()
                    } else {
                        upper[a][b]
                    }
                })
            });
            add_projected(sink, &blocks, &t.map(|i| x[i]));
        } else {
            for (a, row) in upper.iter().enumerate() {
                for (b, block) in row.iter().enumerate().skip(a) {
                    sink.add_symmetric(a, b, block);
                }
            }
        }
    });
}

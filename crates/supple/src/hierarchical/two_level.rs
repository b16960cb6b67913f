//! A two-level preconditioner for reading (b) of the hierarchical method: block Jacobi plus an
//! exact solve on the coarse level's own space (additive two-level Schwarz; Toselli & Widlund,
//! *Domain Decomposition Methods*, §2.3 — the hierarchy supplies the coarse space for free).
//!
//! `P` maps coarse nodal values to the fine field by linear interpolation over the coarse tets
//! (the columns of `T` for the coarse coefficients, [`Hierarchy::prolong`]); each fine vertex's
//! row has at most four entries, the barycentric weights of the coarse tet it lies in. With `D`
//! the block diagonal of `A` and `A_C = PᵀAP` (held fine rows and columns left out),
//! `z = D⁻¹ r + P A_C⁻¹ Pᵀ r`,
//! symmetric positive definite whenever `A` is on the free dofs and `A_C` is. Block Jacobi alone
//! damps the fine-scale error; the coarse solve removes the smooth error Jacobi leaves for
//! many iterations. `A_C` (3 × coarse-vertex rows, dense) is assembled from `A`'s blocks and
//! factored (dense Cholesky, in place) whenever the fine matrix is, i.e. at frame updates.
//! Nothing allocates after construction; if `A_C` is not positive definite the coarse term is
//! dropped (plain block Jacobi) until the next refresh.

use crate::linalg::{par, BlockCsr, BlockJacobi, Precond};
use crate::mesh::Hierarchy;
use nalgebra::Vector3;

/// Block Jacobi plus the coarse-space correction (module notes).
#[derive(Debug)]
pub struct TwoLevel {
    jacobi: BlockJacobi,
    /// Row `a` of `P`: `p[p_start[a] .. p_start[a + 1]]` as `(coarse vertex, weight)`.
    p_start: Vec<u32>,
    p: Vec<(u32, f64)>,
    /// Scalar size of the coarse system (3 × coarse vertices).
    m: usize,
    /// `A_C`, then its Cholesky factor `L` (lower triangle, row-major `m × m`).
    factor: Vec<f64>,
    factored: bool,
    rc: Vec<f64>,
}

impl TwoLevel {
    pub fn new(hierarchy: &Hierarchy) -> Self {
        let n = hierarchy.finest().n_vertices();
        let nc = hierarchy.coarse_vertices();
        let mut rows: Vec<Vec<(u32, f64)>> = (0..nc).map(|v| vec![(v as u32, 1.0)]).collect();
        rows.resize(n, Vec::new());
        for (m, [p, q]) in hierarchy.midpoints() {
            let mut row: Vec<(u32, f64)> = Vec::with_capacity(4);
            for &(c, w) in rows[p as usize].iter().chain(&rows[q as usize]) {
                match row.iter_mut().find(|(k, _)| *k == c) {
                    Some((_, acc)) => *acc += 0.5 * w,
                    None => row.push((c, 0.5 * w)),
                }
            }
            row.sort_by_key(|&(c, _)| c);
            rows[m] = row;
        }
        let mut p_start = Vec::with_capacity(n + 1);
        let mut p = Vec::new();
        for row in &rows {
            p_start.push(p.len() as u32);
            p.extend(row.iter().copied().filter(|&(_, w)| w != 0.0));
        }
        p_start.push(p.len() as u32);
        let m = 3 * nc;
        Self {
            jacobi: BlockJacobi::new(n),
            p_start,
            p,
            m,
            factor: vec![0.0; m * m],
            factored: false,
            rc: vec![0.0; m],
        }
    }

    /// Refreshes block Jacobi and assembles and factors `A_C = PᵀAP` over the free rows.
    pub fn refresh(&mut self, a: &BlockCsr, fixed: &[bool]) {
        self.jacobi.refresh(a, fixed);
        let m = self.m;
        self.factor.fill(0.0);
        let pattern = &*a.pattern;
        let (p, p_start, factor) = (&self.p, &self.p_start, &mut self.factor);
        let row_of = |v: usize| &p[p_start[v] as usize..p_start[v + 1] as usize];
        for (i, &held_i) in fixed.iter().enumerate() {
            if held_i {
                continue;
            }
            let (s, e) = (pattern.row_ptr[i] as usize, pattern.row_ptr[i + 1] as usize);
            for k in s..e {
                let j = pattern.cols[k] as usize;
                if fixed[j] {
                    continue;
                }
                let block = &a.values[k];
                for &(ci, wi) in row_of(i) {
                    for &(cj, wj) in row_of(j) {
                        let w = wi * wj;
                        for r in 0..3 {
                            let row = (3 * ci as usize + r) * m + 3 * cj as usize;
                            for c in 0..3 {
                                factor[row + c] += w * block[(r, c)];
                            }
                        }
                    }
                }
            }
        }
        // Coarse dofs no free fine dof sees (a coarse vertex whose whole hat is held): identity.
        for d in 0..m {
            if self.factor[d * m + d] == 0.0 {
                self.factor[d * m + d] = 1.0;
            }
        }
        self.factored = cholesky_in_place(&mut self.factor, m);
    }
}

/// `L Lᵀ = A` in place (lower triangle of the row-major `m × m` matrix); false when `A` is
/// not (numerically) positive definite.
fn cholesky_in_place(a: &mut [f64], m: usize) -> bool {
    for j in 0..m {
        let mut d = a[j * m + j];
        for k in 0..j {
            d -= a[j * m + k] * a[j * m + k];
        }
        if !(d > 0.0 && d.is_finite()) {
            return false;
        }
        let d = d.sqrt();
        a[j * m + j] = d;
        for i in j + 1..m {
            let mut s = a[i * m + j];
            for k in 0..j {
                s -= a[i * m + k] * a[j * m + k];
            }
            a[i * m + j] = s / d;
        }
    }
    true
}

/// Solves `L Lᵀ x = b` in place (`b` becomes `x`).
fn cholesky_solve(l: &[f64], m: usize, b: &mut [f64]) {
    for i in 0..m {
        let mut s = b[i];
        for k in 0..i {
            s -= l[i * m + k] * b[k];
        }
        b[i] = s / l[i * m + i];
    }
    for i in (0..m).rev() {
        let mut s = b[i];
        for k in i + 1..m {
            s -= l[k * m + i] * b[k];
        }
        b[i] = s / l[i * m + i];
    }
}

impl Precond for TwoLevel {
    fn apply(&mut self, a: &BlockCsr, fixed: &[bool], r: &[Vector3<f64>], z: &mut [Vector3<f64>]) {
        self.jacobi.apply(a, fixed, r, z);
        if !self.factored {
            return;
        }
        // rc = Pᵀ r (r is zero on held vertices), in vertex order: deterministic.
        self.rc.fill(0.0);
        for (i, ri) in r.iter().enumerate() {
            for &(c, w) in &self.p[self.p_start[i] as usize..self.p_start[i + 1] as usize] {
                for k in 0..3 {
                    self.rc[3 * c as usize + k] += w * ri[k];
                }
            }
        }
        cholesky_solve(&self.factor, self.m, &mut self.rc);
        let (p, p_start, rc) = (&self.p, &self.p_start, &self.rc);
        par::for_each_mut(z, |i, zi| {
            if fixed[i] {
                return;
            }
            for &(c, w) in &p[p_start[i] as usize..p_start[i + 1] as usize] {
                let c = 3 * c as usize;
                *zi += w * Vector3::new(rc[c], rc[c + 1], rc[c + 2]);
            }
        });
    }
}

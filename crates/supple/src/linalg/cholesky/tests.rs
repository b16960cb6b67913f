use super::*;

/// `A = L ⊗ S + shift·I` on a strip of `n − 3` tets (L: the element graph Laplacian, S a
/// fixed SPD 3×3): SPD for `shift > 0`.
fn strip(n: usize, shift: f64) -> BlockCsr {
    let tets: Vec<[u32; 4]> = (0..n as u32 - 3)
        .map(|i| [i, i + 1, i + 2, i + 3])
        .collect();
    let (p, scatter) = BlockPattern::from_tets(n, &tets);
    let mut a = BlockCsr::zeros(Arc::new(p));
    let s = Matrix3::new(2.0, 0.3, 0.0, 0.3, 1.5, 0.2, 0.0, 0.2, 1.0);
    for map in &scatter {
        for (k, &slot) in map.iter().enumerate() {
            a.values[slot as usize] += if k / 4 == k % 4 { 3.0 * s } else { -s };
        }
    }
    for i in 0..n {
        a.values[a.pattern.diag[i] as usize] += Matrix3::identity() * shift;
    }
    a
}

const KERNELS: [(&str, SupernodalThreshold); 2] = [
    ("simplicial", SupernodalThreshold::FORCE_SIMPLICIAL),
    ("supernodal", SupernodalThreshold::FORCE_SUPERNODAL),
];

fn orders(n: usize) -> [Vec<u32>; 3] {
    let natural: Vec<u32> = (0..n as u32).collect();
    let reversed: Vec<u32> = natural.iter().rev().copied().collect();
    // A scattered order: i ↦ 5i mod n (n coprime to 5).
    let scattered: Vec<u32> = (0..n as u32).map(|i| (5 * i) % n as u32).collect();
    [natural, reversed, scattered]
}

/// Issue 12: faer's simplicial kernel reports the failed pivot 1-based, the supernodal one
/// 0-based; a failure at the last column panicked (index out of bounds) before the LDLᵀ
/// fallback could run. A large negative diagonal entry at `(vertex, component)` leaves every
/// earlier leading minor of `P A Pᵀ` positive, so that dof is exactly the first failed pivot.
#[test]
fn a_failed_pivot_names_its_vertex_under_both_kernels_and_every_order() {
    let n = 12;
    for (kernel, threshold) in KERNELS {
        for perm in orders(n) {
            let last = perm[n - 1] as usize;
            for (vertex, component) in [(last, 2), (perm[0] as usize, 0), (perm[5] as usize, 1)] {
                let mut a = strip(n, 0.5);
                a.values[a.pattern.diag[vertex] as usize][(component, component)] = -100.0;
                let mut chol =
                    SparseCholesky::with_kernel(a.pattern.clone(), Some(&perm), threshold).unwrap();
                assert_eq!(chol.is_supernodal(), kernel == "supernodal");
                let fixed = vec![false; n];
                assert_eq!(
                    chol.factor(&a, &fixed),
                    Err(CholeskyError::NotPositiveDefinite { vertex, component }),
                    "{kernel}, order {perm:?}"
                );
                // Indefinite but nonsingular: the fallback factors and solves it.
                chol.ldlt_fallback = true;
                assert_eq!(chol.factor(&a, &fixed), Ok(FactorKind::Ldlt), "{kernel}");
                assert_eq!(chol.stats().ldlt_fallbacks, 1);
                let want: Vec<_> = (0..n)
                    .map(|i| Vector3::new(1.0 + i as f64, -(i as f64), 0.5))
                    .collect();
                let mut b = vec![Vector3::zeros(); n];
                a.mul_vec(&want, &mut b);
                let mut x = vec![Vector3::zeros(); n];
                chol.solve(&b, &fixed, &mut x).unwrap();
                for i in 0..n {
                    assert!((x[i] - want[i]).norm() < 1e-9, "{kernel}: {i}");
                }
            }
        }
    }
}

/// When LDLᵀ meets an exactly zero pivot too, the factorization is an error value naming
/// that pivot's vertex (the first of its three dofs), and no factor is kept.
#[test]
fn a_singular_matrix_is_an_error_value_under_both_kernels() {
    let n = 12;
    for (kernel, threshold) in KERNELS {
        for perm in orders(n) {
            let vertex = perm[n - 1] as usize;
            let mut a = strip(n, 0.5);
            // Zero row and column of `vertex`: its pivots are exactly 0 in LLᵀ and LDLᵀ.
            let p = a.pattern.clone();
            for i in 0..n {
                for k in p.row_ptr[i] as usize..p.row_ptr[i + 1] as usize {
                    if i == vertex || p.cols[k] as usize == vertex {
                        a.values[k] = Matrix3::zeros();
                    }
                }
            }
            let mut chol = SparseCholesky::with_kernel(p, Some(&perm), threshold).unwrap();
            chol.ldlt_fallback = true;
            assert_eq!(
                chol.factor(&a, &vec![false; n]),
                Err(CholeskyError::Singular {
                    vertex,
                    component: 0
                }),
                "{kernel}, order {perm:?}"
            );
            assert_eq!(chol.factored(), None);
            assert_eq!(chol.stats().factorizations, 0);
            // Fixing that vertex makes the rest SPD again.
            let mut fixed = vec![false; n];
            fixed[vertex] = true;
            assert_eq!(chol.factor(&a, &fixed), Ok(FactorKind::Llt), "{kernel}");
        }
    }
}

/// A NaN in the matrix fails both factorizations (an error value, not a panic).
#[test]
fn a_nan_matrix_is_an_error_value() {
    for (kernel, threshold) in KERNELS {
        let mut a = strip(12, 0.5);
        a.values[a.pattern.diag[4] as usize][(1, 1)] = f64::NAN;
        let mut chol = SparseCholesky::with_kernel(a.pattern.clone(), None, threshold).unwrap();
        chol.ldlt_fallback = true;
        let e = chol.factor(&a, &[false; 12]);
        assert_eq!(
            e,
            Err(CholeskyError::Singular {
                vertex: 4,
                component: 1
            }),
            "{kernel}"
        );
    }
}

//! Criterion benchmarks of the hot paths: a whole implicit step of the benchmark bars, the
//! rotation extraction, and one block SpMV. `supple bench` gives the per-phase JSON view;
//! this is the statistical one (`cargo bench -p supple`).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::hint::black_box;
use supple::body::{Body, BodyDesc};
use supple::fem::gathered::RotatedLinearBlocks;
use supple::fem::material::{add_rotated_linear_blocks, CorotationalTangent, Lame, ModelKind};
use supple::fem::polar;
use supple::linalg::{BlockCsr, PcgSettings, Preconditioner};
use supple::mesh::{box_grid, BoxGrid, TetSplit};
use supple::nalgebra::{Matrix3, Rotation3, Vector3};
use supple::time::{IntegratorKind, LinearSolverKind, WarmStart};
use supple::world::World;

/// The spine issue's bar: 1 m, clamped at x = 0, E = 1e5, ν = 0.33, ρ = 1000, dt = 10 ms.
fn bar(cells: [usize; 3], model: ModelKind, preconditioner: Preconditioner) -> World {
    let mesh = box_grid(&BoxGrid {
        cells,
        cell_size: Vector3::repeat(1.0 / cells[0] as f64),
        origin: Vector3::zeros(),
        split: TetSplit::Five,
    });
    let desc =
        BodyDesc::new("bar", mesh, model, 1e5, 0.33, 1000.0).with_fixed_where(|p| p.x <= 1e-12);
    let body = Body::new(desc).expect("valid bar");
    let pcg = PcgSettings {
        tolerance: 1e-6,
        max_iterations: 2000,
        preconditioner,
    };
    let integrator = IntegratorKind::BackwardEulerLinearized {
        solver: LinearSolverKind::Pcg(pcg),
        warm_start: WarmStart::Extrapolate,
    };
    let mut w = World::new(vec![body], Vector3::new(0.0, -9.81, 0.0), 0.01, integrator)
        .expect("valid world");
    for _ in 0..10 {
        w.step().expect("stable");
    }
    w
}

fn steps(c: &mut Criterion) {
    let corot = ModelKind::corotational(CorotationalTangent::Rotated);
    let mut g = c.benchmark_group("step");
    g.sample_size(20);
    for (name, cells) in [("450", [10, 3, 3]), ("20k", [40, 10, 10])] {
        for (label, model, pc) in [
            ("linear", ModelKind::Linear, Preconditioner::BlockJacobi),
            ("corotational", corot, Preconditioner::BlockJacobi),
            ("corotational_ssor", corot, Preconditioner::BlockSsor),
        ] {
            let mut w = bar(cells, model, pc);
            // The bar keeps swinging; each sample is one more step of the same run.
            g.bench_function(BenchmarkId::new(label, name), |b| {
                b.iter(|| w.step().expect("stable"))
            });
        }
    }
    g.finish();
}

fn rotations(c: &mut Criterion) {
    let mut seed = 7u64;
    let mut rnd = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    };
    let cases: Vec<(Matrix3<f64>, Matrix3<f64>)> = (0..1000)
        .map(|_| {
            let q =
                Rotation3::from_euler_angles(3.0 * rnd(), 3.0 * rnd(), 3.0 * rnd()).into_inner();
            let s = Matrix3::identity() + 0.15 * Matrix3::from_fn(|_, _| rnd());
            let near =
                Rotation3::from_euler_angles(0.02 * rnd(), 0.02 * rnd(), 0.02 * rnd()).into_inner();
            (q * (s + s.transpose()) * 0.5, q * near)
        })
        .collect();
    let mut g = c.benchmark_group("rotation_x1000");
    g.bench_function("higham", |b| {
        b.iter(|| {
            cases
                .iter()
                .map(|(f, _)| polar::rotation(black_box(f)))
                .sum::<Matrix3<f64>>()
        })
    });
    g.bench_function("newton_near", |b| {
        b.iter(|| {
            cases
                .iter()
                .map(|(f, r)| polar::rotation_near(black_box(f), r))
                .sum::<Matrix3<f64>>()
        })
    });
    g.bench_function("svd", |b| {
        b.iter(|| {
            cases
                .iter()
                .map(|(f, _)| polar::svd_rotation(black_box(f)))
                .sum::<Matrix3<f64>>()
        })
    });
    g.finish();
}

fn spmv(c: &mut Criterion) {
    let w = bar([40, 10, 10], ModelKind::Linear, Preconditioner::BlockJacobi);
    let b = &w.bodies[0];
    let mut k = BlockCsr::zeros(b.elems.pattern.clone());
    b.model.add_tangent(&b.elems, &b.x, 1.0, &mut k);
    let x = vec![Vector3::new(1.0, 0.5, 0.25); b.n_vertices()];
    let mut y = vec![Vector3::zeros(); b.n_vertices()];
    c.bench_function("spmv_20k", |bch| {
        bch.iter(|| k.mul_vec(black_box(&x), &mut y))
    });
}

/// Symmetric half storage (issue 43, *fewer bytes*): the diagonal and upper blocks of a
/// tangent, row by row, and its product, each stored block used for `y_i += A_ij x_j` and
/// `y_j += A_ijᵀ x_i`. A variant measured against [`BlockCsr::mul_vec`] here and not in the
/// library (docs/experiments/performance.md, *Tried and not kept*).
struct Upper {
    ptr: Vec<usize>,
    cols: Vec<u32>,
    vals: Vec<Matrix3<f64>>,
}

impl Upper {
    fn new(k: &BlockCsr) -> Self {
        let p = &*k.pattern;
        let mut out = Upper {
            ptr: vec![0],
            cols: Vec::new(),
            vals: Vec::new(),
        };
        out.refresh(k);
        for i in 0..p.n_rows() {
            let upper =
                (p.row_ptr[i]..p.row_ptr[i + 1]).filter(|&s| p.cols[s as usize] as usize >= i);
            out.ptr.push(out.ptr[i] + upper.count());
        }
        out
    }

    /// The upper blocks copied from `k` (what a changed matrix costs each step).
    fn refresh(&mut self, k: &BlockCsr) {
        let p = &*k.pattern;
        self.cols.clear();
        self.vals.clear();
        for i in 0..p.n_rows() {
            for s in p.row_ptr[i] as usize..p.row_ptr[i + 1] as usize {
                if p.cols[s] as usize >= i {
                    self.cols.push(p.cols[s]);
                    self.vals.push(k.values[s]);
                }
            }
        }
    }

    fn mul_vec(&self, x: &[Vector3<f64>], y: &mut [Vector3<f64>]) {
        y.fill(Vector3::zeros());
        for i in 0..x.len() {
            let xi = x[i];
            let mut acc = Vector3::zeros();
            for s in self.ptr[i]..self.ptr[i + 1] {
                let (j, a) = (self.cols[s] as usize, &self.vals[s]);
                acc += a * x[j];
                if j != i {
                    y[j] += a.tr_mul(&xi);
                }
            }
            y[i] += acc;
        }
    }
}

/// One thread: the full-storage product against the half-storage one, and the half copy's
/// refresh, on the 20k and 160k bars' tangents.
fn spmv_half(c: &mut Criterion) {
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("pool");
    let mut g = c.benchmark_group("spmv_half");
    for (name, cells) in [("20k", [40, 10, 10]), ("160k", [80, 20, 20])] {
        let mesh = box_grid(&BoxGrid {
            cells,
            cell_size: Vector3::repeat(1.0 / cells[0] as f64),
            origin: Vector3::zeros(),
            split: TetSplit::Five,
        });
        let desc = BodyDesc::new("bar", mesh, ModelKind::Linear, 1e6, 0.33, 1000.0);
        let b = Body::new(desc).expect("valid bar");
        let mut k = BlockCsr::zeros(b.elems.pattern.clone());
        b.model.add_tangent(&b.elems, &b.x, 1.0, &mut k);
        let n = b.n_vertices();
        let x: Vec<_> = (0..n)
            .map(|i| Vector3::new(1.0, (i % 7) as f64, 0.25))
            .collect();
        let mut y = vec![Vector3::zeros(); n];
        let mut upper = Upper::new(&k);
        let mut z = vec![Vector3::zeros(); n];
        k.mul_vec(&x, &mut y);
        upper.mul_vec(&x, &mut z);
        let err = y
            .iter()
            .zip(&z)
            .map(|(p, q)| (p - q).norm())
            .fold(0.0, f64::max);
        assert!(
            err <= 1e-9 * y.iter().map(|v| v.norm()).fold(0.0, f64::max),
            "{err}"
        );
        g.bench_function(BenchmarkId::new("full", name), |bch| {
            one.install(|| bch.iter(|| k.mul_vec(black_box(&x), &mut y)))
        });
        g.bench_function(BenchmarkId::new("half", name), |bch| {
            bch.iter(|| upper.mul_vec(black_box(&x), &mut z))
        });
        g.bench_function(BenchmarkId::new("half_refresh", name), |bch| {
            bch.iter(|| upper.refresh(black_box(&k)))
        });
    }
    g.finish();
}

/// The corotational tangent's assembly on the 20k bar (the model's: gathered slot by slot,
/// `fem::gathered`) beside the same matrix by the element loop (`add_rotated_linear_blocks`
/// scattered per element, the assembly before session 20) and the gather alone, and the
/// floors: the element loop's scatter of 16 blocks per element with nothing computed (the
/// memory traffic alone), and the zeroing of the matrix every assembly starts with.
fn assembly(c: &mut Criterion) {
    let corot = ModelKind::corotational(CorotationalTangent::Rotated);
    let w = bar([40, 10, 10], corot, Preconditioner::BlockJacobi);
    let b = &w.bodies[0];
    let mut k = BlockCsr::zeros(b.elems.pattern.clone());
    let mut g = c.benchmark_group("assembly_20k");
    g.bench_function("corotational_tangent", |bch| {
        bch.iter(|| {
            k.set_zero();
            b.model.add_tangent(&b.elems, &b.x, 1.0, &mut k)
        })
    });
    // The bar is at rest: identity rotations (the work does not depend on their values).
    let rotations = vec![Matrix3::identity(); b.elems.len()];
    let lame = Lame::from_youngs_poisson(1e5, 0.33).unwrap();
    g.bench_function("element_loop", |bch| {
        bch.iter(|| {
            k.set_zero();
            b.elems.scatter_blocks(&mut k, |e, sink| {
                let (grad, volume) = (&b.elems.grad[e], b.elems.volume[e]);
                add_rotated_linear_blocks(sink, grad, &rotations[e], volume, lame, 1.0)
            })
        })
    });
    let blocks = RotatedLinearBlocks::new(&b.elems);
    g.bench_function("gathered", |bch| {
        bch.iter(|| {
            k.set_zero();
            blocks.add(&b.elems, |e| rotations[e], lame, 1.0, &mut k)
        })
    });
    g.bench_function("scatter_only", |bch| {
        bch.iter(|| {
            k.set_zero();
            b.elems.scatter_blocks(&mut k, |e, sink| {
                let d = Matrix3::from_diagonal_element(b.elems.volume[e]);
                for a in 0..4 {
                    for c in a..4 {
                        sink.add_symmetric(a, c, &d);
                    }
                }
            })
        })
    });
    g.bench_function("zero_only", |bch| bch.iter(|| k.set_zero()));
    g.finish();
}

criterion_group!(benches, steps, rotations, spmv, spmv_half, assembly);
criterion_main!(benches);

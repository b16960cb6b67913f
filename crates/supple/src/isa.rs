//! The instruction set of the hot loops, chosen at run time.
//!
//! Release binaries are built for the x86-64 baseline (SSE2), so that one binary runs on any
//! x86-64 CPU (issue 18: no `target-cpu=native` by default). On this project's machines that
//! cost up to a quarter of a corotational step against a `target-cpu=native` build
//! (EXPERIMENTS.md, issue 18, *Session 16*): the rotations, the tangent blocks and the
//! solver's sweeps are short vector code that AVX2 runs in fewer instructions. The hottest
//! of those loops are therefore compiled twice — the loop is an `#[inline(always)]` function,
//! called from a copy with `#[target_feature(enable = "avx2")]` and from a plain one, both
//! written by the crate-private macro `avx2_or_baseline!` (by hand for the generic rotations of `polar::near`) —
//! and [`avx2`] chooses at run time (`is_x86_feature_detected!`, cached by the standard
//! library).
//!
//! **The same bits.** Rust never contracts a multiplication and an addition into a fused
//! multiply–add, nor reorders floating-point operations, and AVX2 adds no other arithmetic:
//! the AVX2 copy performs the same IEEE 754 operations in the same order, in wider
//! registers, and gives the same results bit for bit (`isa::tests`, with the AVX2 copies
//! turned off; a whole `target-cpu=native` build writes byte-identical frames).
//!
//! Only code inlined into the `target_feature` function gets the AVX2 copy, hence the
//! pattern: a closure or a call that LLVM declines to inline runs its baseline code.

/// Defines `fn NAME(ARGS) -> RET { BODY }` whose body is compiled for AVX2 where the CPU has
/// it ([`avx2`]) and for the baseline otherwise (see the module notes); or, written
/// `fn NAME(ARGS) -> RET => KERNEL`, runs `KERNEL(ARGS)`, an `#[inline(always)]` function (a
/// method, say). With `unsafe fn` the defined function is unsafe, with the body's contract.
macro_rules! avx2_or_baseline {
    // With the loop as the body: it becomes the kernel.
    ($(#[$meta:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? $body:block) => {
        $crate::isa::avx2_or_baseline! {
            $(#[$meta])*
            $vis fn $name($($arg: $ty),*) $(-> $ret)? => kernel;
            #[inline(always)]
            fn kernel($($arg: $ty),*) $(-> $ret)? $body
        }
    };
    ($(#[$meta:meta])* $vis:vis unsafe fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? $body:block) => {
        $crate::isa::avx2_or_baseline! {
            $(#[$meta])*
            $vis unsafe fn $name($($arg: $ty),*) $(-> $ret)? => kernel;
            #[inline(always)]
            unsafe fn kernel($($arg: $ty),*) $(-> $ret)? $body
        }
    };
    ($(#[$meta:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? => $kernel:path $(; $item:item)?) => {
        $(#[$meta])*
        $vis fn $name($($arg: $ty),*) $(-> $ret)? {
            $($item)?
            #[cfg(target_arch = "x86_64")]
            if $crate::isa::avx2() {
                #[target_feature(enable = "avx2")]
                unsafe fn avx2($($arg: $ty),*) $(-> $ret)? {
                    $kernel($($arg),*)
                }
                // SAFETY: the CPU has AVX2 (`isa::avx2`).
                return unsafe { avx2($($arg),*) };
            }
            $kernel($($arg),*)
        }
    };
    ($(#[$meta:meta])* $vis:vis unsafe fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? => $kernel:path $(; $item:item)?) => {
        $(#[$meta])*
        $vis unsafe fn $name($($arg: $ty),*) $(-> $ret)? {
            $($item)?
            #[cfg(target_arch = "x86_64")]
            if $crate::isa::avx2() {
                #[target_feature(enable = "avx2")]
                unsafe fn avx2($($arg: $ty),*) $(-> $ret)? {
                    // SAFETY: the contract of the defined function, which is the kernel's.
                    unsafe { $kernel($($arg),*) }
                }
                // SAFETY: the CPU has AVX2 (`isa::avx2`); the rest is the caller's contract.
                return unsafe { avx2($($arg),*) };
            }
            // SAFETY: the caller's contract, which is the kernel's.
            unsafe { $kernel($($arg),*) }
        }
    };
}
pub(crate) use avx2_or_baseline;

/// Whether the AVX2 copies run: the CPU has AVX2 (x86-64 only).
#[inline(always)]
pub fn avx2() -> bool {
    #[cfg(test)]
    if tests::BASELINE_ONLY.load(std::sync::atomic::Ordering::Relaxed) {
        return false;
    }
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Mutex;

    /// Set while a test runs the baseline copy (read by [`super::avx2`]).
    pub(crate) static BASELINE_ONLY: AtomicBool = AtomicBool::new(false);
    /// Serialises the tests that turn the AVX2 copy off (other tests running meanwhile take
    /// the baseline copy, which gives the same bits).
    static LOCK: Mutex<()> = Mutex::new(());

    /// `f()` with the AVX2 copy turned off.
    pub(crate) fn baseline<R>(f: impl FnOnce() -> R) -> R {
        let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        BASELINE_ONLY.store(true, Ordering::Relaxed);
        let r = f();
        BASELINE_ONLY.store(false, Ordering::Relaxed);
        r
    }

    /// A 540-tet bar stepped 30 times with and without the AVX2 copies, with the
    /// corotational model (rotations, tangent blocks, element forces, Eisenstat sweeps,
    /// products, warm start) and the warped one (rotated rest blocks): the same positions and
    /// velocities, bit for bit, and the same iteration counts. (On a CPU without AVX2 both
    /// runs take the baseline copies and the comparison is empty.)
    #[test]
    fn avx2_and_baseline_give_the_same_bits() {
        use crate::body::{Body, BodyDesc};
        use crate::fem::material::{CorotationalTangent, ModelKind, RotationField, WarpedTangent};
        use crate::mesh::{box_grid, BoxGrid, TetSplit};
        use crate::time::{IntegratorKind, LinearSolverKind, WarmStart};
        use crate::world::World;
        use nalgebra::Vector3;
        let run = |model: ModelKind| {
            let mesh = box_grid(&BoxGrid {
                cells: [12, 3, 3],
                cell_size: Vector3::repeat(0.05),
                origin: Vector3::zeros(),
                split: TetSplit::Five,
            });
            let desc = BodyDesc::new("bar", mesh, model, 1e5, 0.33, 1000.0)
                .with_fixed_where(|p| p.x < 1e-9);
            let integrator = IntegratorKind::BackwardEulerLinearized {
                solver: LinearSolverKind::default(),
                warm_start: WarmStart::default(),
            };
            let gravity = Vector3::new(0.0, -9.81, 0.0);
            let mut world =
                World::new(vec![Body::new(desc).unwrap()], gravity, 0.01, integrator).unwrap();
            let mut iterations = Vec::new();
            for _ in 0..30 {
                world.step().unwrap();
                iterations.extend(world.last_stats().iter().map(|s| s.solver_iterations));
            }
            let b = &world.bodies[0];
            (b.x.clone(), b.v.clone(), iterations)
        };
        let warped = ModelKind::Warped {
            field: RotationField::LeastSquares,
            ghost_correction: true,
            tangent: WarpedTangent::Rotated,
        };
        for model in [
            ModelKind::corotational(CorotationalTangent::Rotated),
            warped,
        ] {
            let fast = run(model);
            let plain = baseline(|| run(model));
            assert!(
                fast.0.iter().any(|p| p.y < -1e-4),
                "{model:?}: the bar sags"
            );
            assert!(
                fast == plain,
                "{model:?}: the AVX2 copies changed the results"
            );
        }
    }
}

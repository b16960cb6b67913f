//! What the coupled IPC step does step by step on a scene: Newton iterations, line-search
//! halvings, the step control's retries, the phases' times and wall time, summed over the
//! first N steps (the Newton and phase figures are of each step's last attempt) (EXPERIMENTS.md, *The default
//! response on the bundled scenes*).
//!
//! ```sh
//! cargo run --release -p supple-io --example ipc_steps -- scenes/bunny_drop.toml 100 [KEY=VALUE ...]
//! ```
//! Keys: `kappa` (fixed barrier stiffness), `eps_v` (friction's ε_v, m/s), `friction` (every
//! obstacle's μ), `cg_tol` (the linear solves' tolerance), `vtol` (Newton's velocity
//! tolerance), `hessian` (`projected` | `gauss_newton`), `precond` (`block_jacobi` |
//! `block_ssor` | `eisenstat_ssor` | `multicolor_ssor` | `amg`).

use std::time::Instant;
use supple::contact::ipc::BarrierHessian;
use supple::contact::Response;
use supple::linalg::Preconditioner;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        return Err("usage: ipc_steps SCENE STEPS [kappa=K] [eps_v=E] [friction=MU]".into());
    }
    let mut scene = supple_io::load_scene(std::path::Path::new(&args[1]))?;
    let steps: usize = args[2].parse()?;
    let contact = scene.contact.as_mut().ok_or("the scene has no contact")?;
    for kv in &args[3..] {
        let (key, value) = kv.split_once('=').ok_or("KEY=VALUE")?;
        if let ("hessian" | "precond", Response::Auto(ipc) | Response::Ipc(ipc)) =
            (key, &mut contact.response)
        {
            match (key, value) {
                ("hessian", "projected") => ipc.hessian = BarrierHessian::Projected,
                ("hessian", "gauss_newton") => ipc.hessian = BarrierHessian::GaussNewton,
                ("precond", name) => {
                    ipc.solver.preconditioner = match name {
                        "block_jacobi" => Preconditioner::BlockJacobi,
                        "block_ssor" => Preconditioner::BlockSsor,
                        "eisenstat_ssor" => Preconditioner::EisenstatSsor,
                        "multicolor_ssor" => Preconditioner::MulticolorSsor,
                        "amg" => Preconditioner::Amg,
                        _ => return Err(format!("precond={name}: not a preconditioner").into()),
                    }
                }
                _ => return Err(format!("{key}={value}: not a choice").into()),
            }
            continue;
        }
        let value: f64 = value.parse()?;
        match (key, &mut contact.response) {
            ("friction", _) => contact
                .obstacles
                .iter_mut()
                .for_each(|o| o.friction = value),
            ("kappa", Response::Auto(ipc) | Response::Ipc(ipc)) => ipc.kappa = Some(value),
            ("eps_v", Response::Auto(ipc) | Response::Ipc(ipc)) => ipc.eps_v = Some(value),
            ("cg_tol", Response::Auto(ipc) | Response::Ipc(ipc)) => ipc.solver.tolerance = value,
            ("vtol", Response::Auto(ipc) | Response::Ipc(ipc)) => ipc.velocity_tolerance = value,
            _ => return Err(format!("{key}: not a key here (or the response is not IPC)").into()),
        }
    }
    let mut world = scene.build_world()?;
    if world.ipc().is_none() {
        return Err("the scene's world does not take the IPC step".into());
    }
    let (mut newton, mut halvings, mut cuts, mut cg) = (0, 0, 0, 0);
    let mut times = [0.0; 5];
    let started = Instant::now();
    for _ in 0..steps {
        world.step()?;
        let last = world.ipc().expect("checked above").last;
        newton += last.newton_iterations;
        halvings += last.backtracks;
        cuts += last.ccd_cuts;
        cg += last.cg_iterations;
        for (t, x) in times.iter_mut().zip([
            last.times.residual_s,
            last.times.jacobian_s,
            last.times.solve_s,
            last.times.pairs_s,
            last.times.ccd_s,
        ]) {
            *t += x;
        }
    }
    println!(
        "{steps} steps: {newton} Newton iterations, {cg} CG iterations, {halvings} line-search halvings, {cuts} CCD cuts, {:.2} s",
        started.elapsed().as_secs_f64()
    );
    let totals = world.totals();
    println!(
        "step control: {} steps retried in halves ({} retries), {} kept unconverged",
        totals.retried_steps, totals.retries, totals.unconverged_steps
    );
    let mut kinds = std::collections::BTreeMap::new();
    for p in &world.ipc().expect("checked above").contact_set().pairs {
        *kinds.entry(format!("{:?}", p.kind)).or_insert(0usize) += 1;
    }
    println!("pairs at the end: {kinds:?}");
    let ms = |t: f64| 1e3 * t / steps.max(1) as f64;
    println!(
        "ms per step: residual {:.2}, jacobian {:.2}, solve {:.2}, pairs {:.2}, ccd {:.2}",
        ms(times[0]),
        ms(times[1]),
        ms(times[2]),
        ms(times[3]),
        ms(times[4])
    );
    Ok(())
}

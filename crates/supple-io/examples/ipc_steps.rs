//! What the coupled IPC step does step by step on a scene: Newton iterations, line-search
//! halvings and wall time, summed over the first N steps (EXPERIMENTS.md, *The default
//! response on the bundled scenes*).
//!
//! ```sh
//! cargo run --release -p supple-io --example ipc_steps -- scenes/bunny_drop.toml 100 [KEY=VALUE ...]
//! ```
//! Keys: `kappa` (fixed barrier stiffness), `eps_v` (friction's ε_v, m/s), `friction` (every
//! obstacle's μ).

use std::time::Instant;
use supple::contact::Response;

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
        let value: f64 = value.parse()?;
        match (key, &mut contact.response) {
            ("friction", _) => contact
                .obstacles
                .iter_mut()
                .for_each(|o| o.friction = value),
            ("kappa", Response::Auto(ipc) | Response::Ipc(ipc)) => ipc.kappa = Some(value),
            ("eps_v", Response::Auto(ipc) | Response::Ipc(ipc)) => ipc.eps_v = Some(value),
            _ => return Err(format!("{key}: not a key here (or the response is not IPC)").into()),
        }
    }
    let mut world = scene.build_world()?;
    if world.ipc().is_none() {
        return Err("the scene's world does not take the IPC step".into());
    }
    let (mut newton, mut halvings, mut cuts) = (0, 0, 0);
    let started = Instant::now();
    for _ in 0..steps {
        world.step()?;
        let last = world.ipc().expect("checked above").last;
        newton += last.newton_iterations;
        halvings += last.backtracks;
        cuts += last.ccd_cuts;
    }
    println!(
        "{steps} steps: {newton} Newton iterations, {halvings} line-search halvings, {cuts} CCD cuts, {:.2} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

//! `interfere simulate`: runs a scene file (assets/scenes/README.md) headless for a number of
//! fixed steps and writes the trajectories and per-step statistics.

use crate::output::ms;
use clap::Args;
use interfere_dynamics::Scene;
use interfere_dynamics::progress::Progress;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `interfere simulate`.
#[derive(Args)]
pub struct SimulateArgs {
    /// The scene file (JSON).
    scene: PathBuf,
    /// Number of fixed steps.
    #[arg(long, default_value_t = 600)]
    steps: u64,
    /// Override the scene's step length in seconds.
    #[arg(long)]
    dt: Option<f64>,
    /// Write trajectories and per-step stats as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
}

#[derive(Serialize)]
struct BodyState {
    position: [f64; 3],
    orientation: [f64; 4],
}

#[derive(Serialize)]
struct StepStats {
    time: f64,
    contacts: usize,
    kinetic_energy: f64,
    potential_energy: f64,
    step_ms: f64,
}

#[derive(Serialize)]
struct Output {
    scene: String,
    dt: f64,
    steps: u64,
    bodies: Vec<String>,
    trajectories: Vec<Vec<BodyState>>,
    stats: Vec<StepStats>,
}

/// Runs the command; progress goes to standard error unless `quiet`.
pub fn run(args: SimulateArgs, quiet: bool) -> Result<(), String> {
    let mut scene = Scene::load(&args.scene).map_err(|e| e.to_string())?;
    if let Some(dt) = args.dt {
        scene.dt = dt;
    }
    let mut built = scene.build().map_err(|e| e.to_string())?;
    let n = built.world.bodies().len();
    let mut trajectories: Vec<Vec<BodyState>> = (0..n).map(|_| Vec::new()).collect();
    let mut stats = Vec::new();
    let started = Instant::now();
    let label = format!("simulate {}", args.scene.display());
    let mut progress = Progress::unless_quiet(label, args.steps, quiet);
    for _ in 0..args.steps {
        let t = Instant::now();
        built.world.step(&mut built.source);
        let step_ms = ms(t);
        for (i, b) in built.world.bodies().iter().enumerate() {
            let pose = b.mesh_pose();
            trajectories[i].push(BodyState {
                position: pose.translation.to_array(),
                orientation: b.orientation.to_array(),
            });
        }
        stats.push(StepStats {
            time: built.world.time(),
            contacts: built.world.last_contacts().len(),
            kinetic_energy: built.world.kinetic_energy(),
            potential_energy: built.world.potential_energy(),
            step_ms,
        });
        progress.tick(1);
    }
    progress.finish();
    let total_ms = ms(started);
    println!(
        "{}: {} steps of {:.5} s ({:.2} s simulated) in {:.1} ms ({:.3} ms/step)",
        args.scene.display(),
        args.steps,
        scene.dt,
        built.world.time(),
        total_ms,
        total_ms / args.steps.max(1) as f64
    );
    for (i, b) in built.world.bodies().iter().enumerate().skip(1) {
        let p = b.mesh_pose().translation;
        println!(
            "  {:<16} at ({:.4}, {:.4}, {:.4}), speed {:.4} m/s",
            built.names[i],
            p.x,
            p.y,
            p.z,
            b.linear_velocity.length()
        );
    }
    if let Some(path) = &args.json {
        let out = Output {
            scene: args.scene.display().to_string(),
            dt: scene.dt,
            steps: args.steps,
            bodies: built.names.clone(),
            trajectories,
            stats,
        };
        let text = serde_json::to_string(&out).map_err(|e| e.to_string())?;
        std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

//! `interfere simulate`: runs a scene file (assets/scenes/README.md) headless for a number of
//! fixed steps and writes the trajectories and per-step statistics.

use crate::output::ms;
use clap::Args;
use interfere_dynamics::Scene;
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
    interfering_pairs: usize,
    kinetic_energy: f64,
    potential_energy: f64,
    step_ms: f64,
    narrow_ms: f64,
    volume_ms: f64,
    solver_ms: f64,
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

/// Runs the command.
pub fn run(args: SimulateArgs) -> Result<(), String> {
    let mut scene = Scene::load(&args.scene).map_err(|e| e.to_string())?;
    if let Some(dt) = args.dt {
        scene.dt = dt;
    }
    let mut built = scene.build().map_err(|e| e.to_string())?;
    let n = built.handles.len();
    let mut trajectories: Vec<Vec<BodyState>> = (0..n).map(|_| Vec::new()).collect();
    let mut stats = Vec::new();
    let started = Instant::now();
    for _ in 0..args.steps {
        let t = Instant::now();
        built.simulation.step();
        let step_ms = ms(t);
        let sim = &built.simulation;
        for (i, h) in built.handles.iter().enumerate() {
            let b = sim.body(*h).expect("scene bodies are never removed");
            let pose = b.mesh_pose();
            trajectories[i].push(BodyState {
                position: pose.translation.to_array(),
                orientation: b.orientation.to_array(),
            });
        }
        let st = sim.stats();
        stats.push(StepStats {
            time: sim.time(),
            contacts: st.volume_contacts,
            interfering_pairs: st.interfering_pairs,
            kinetic_energy: sim.kinetic_energy(),
            potential_energy: sim.potential_energy(),
            step_ms,
            narrow_ms: st.narrow_phase_ms,
            volume_ms: st.volume_ms,
            solver_ms: st.solver_ms,
        });
    }
    let total_ms = ms(started);
    println!(
        "{}: {} steps of {:.5} s ({:.2} s simulated) in {:.1} ms ({:.3} ms/step)",
        args.scene.display(),
        args.steps,
        scene.dt,
        built.simulation.time(),
        total_ms,
        total_ms / args.steps.max(1) as f64
    );
    for (i, h) in built.handles.iter().enumerate().skip(1) {
        let b = built
            .simulation
            .body(*h)
            .expect("scene bodies are never removed");
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

//! `interfere simulate`: runs a scene file (assets/scenes/README.md) headless for a number of
//! fixed steps and writes the trajectories and per-step statistics. The step is the same
//! `interfere_dynamics::Simulation` the Bevy plugin runs; `--backend gpu` or `gpu-blocking` swaps
//! in the GPU contact stages of `interfere_gpu::contact_stage` (on a headless device; a failed
//! job falls back to the CPU for its step).

use crate::output::ms;
use clap::Args;
use interfere_cli::progress::Progress;
use interfere_dynamics::{ContactStage, Scene};
use interfere_gpu::{GpuAsyncContacts, GpuBlockingContacts, GpuContext, GpuStageOptions};
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
    /// The contact stage: the CPU's (`cpu`), one GPU job per step waited for (`gpu-blocking`)
    /// or never waited for (`gpu`).
    #[arg(long, default_value = "cpu", value_parser = ["cpu", "gpu", "gpu-blocking"])]
    backend: String,
    /// Pace the steps like a game's frames: each step takes at least this many milliseconds of
    /// wall time (0: as fast as possible). With `--backend gpu` this is what lets the GPU's
    /// answers arrive a step or two later, as they would in a game.
    #[arg(long, default_value_t = 0.0)]
    frame_ms: f64,
}

#[derive(Serialize)]
struct BodyState {
    position: [f64; 3],
    orientation: [f64; 4],
}

#[derive(Serialize)]
struct StepRecord {
    time: f64,
    contacts: usize,
    interfering_pairs: usize,
    kinetic_energy: f64,
    potential_energy: f64,
    step_ms: f64,
    narrow_ms: f64,
    volume_ms: f64,
    contact_ms: f64,
    solver_ms: f64,
    gpu_ms: Option<f64>,
    latency_steps: Option<u64>,
    latency_pairs: usize,
    fallback: Option<String>,
}

#[derive(Serialize)]
struct Output {
    scene: String,
    dt: f64,
    steps: u64,
    bodies: Vec<String>,
    trajectories: Vec<Vec<BodyState>>,
    stats: Vec<StepRecord>,
}

/// Runs the command; progress goes to standard error unless `quiet`.
pub fn run(args: SimulateArgs, quiet: bool) -> Result<(), String> {
    let mut scene = Scene::load(&args.scene).map_err(|e| e.to_string())?;
    if let Some(dt) = args.dt {
        scene.dt = dt;
    }
    let mut built = scene.build().map_err(|e| e.to_string())?;
    let mut stage: Option<Box<dyn ContactStage>> = match args.backend.as_str() {
        "cpu" => None,
        backend => {
            let ctx = GpuContext::headless().map_err(|e| format!("--backend {backend}: {e}"))?;
            let options = GpuStageOptions::default();
            let stage: Box<dyn ContactStage> = if backend == "gpu" {
                Box::new(GpuAsyncContacts::with_worker(ctx, options).map_err(|e| e.to_string())?)
            } else {
                Box::new(GpuBlockingContacts::new(ctx, options).map_err(|e| e.to_string())?)
            };
            Some(stage)
        }
    };
    let n = built.handles.len();
    let mut trajectories: Vec<Vec<BodyState>> = (0..n).map(|_| Vec::new()).collect();
    let mut stats = Vec::new();
    let started = Instant::now();
    let label = format!("simulate {}", args.scene.display());
    let mut progress = Progress::unless_quiet(label, args.steps, quiet);
    for _ in 0..args.steps {
        let t = Instant::now();
        match stage.as_mut() {
            Some(stage) => built.step_with(stage.as_mut()),
            None => built.step(),
        }
        let step_ms = ms(t);
        if args.frame_ms > step_ms {
            std::thread::sleep(std::time::Duration::from_secs_f64(
                (args.frame_ms - step_ms) / 1e3,
            ));
        }
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
        stats.push(StepRecord {
            time: sim.time(),
            contacts: st.volume_contacts,
            interfering_pairs: st.interfering_pairs,
            kinetic_energy: sim.kinetic_energy(),
            potential_energy: sim.potential_energy(),
            step_ms,
            narrow_ms: st.narrow_phase_ms,
            volume_ms: st.volume_ms,
            contact_ms: st.contact_ms,
            solver_ms: st.solver_ms,
            gpu_ms: st.gpu_ms,
            latency_steps: st.latency_steps,
            latency_pairs: st.latency_pairs,
            fallback: st.fallback.clone(),
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
        built.simulation.time(),
        total_ms,
        total_ms / args.steps.max(1) as f64
    );
    let mean = |f: &dyn Fn(&StepRecord) -> f64| {
        stats.iter().map(f).sum::<f64>() / stats.len().max(1) as f64
    };
    let answered: Vec<u64> = stats.iter().filter_map(|s| s.latency_steps).collect();
    println!(
        "  backend {}: contact stage {:.3} ms/step on this thread (narrow {:.3}, volume {:.3}), \
         solver {:.3}; GPU answers on {} steps (mean latency {:.2} steps), {} fallbacks",
        args.backend,
        mean(&|s| s.contact_ms),
        mean(&|s| s.narrow_ms),
        mean(&|s| s.volume_ms),
        mean(&|s| s.solver_ms),
        answered.len(),
        answered.iter().sum::<u64>() as f64 / answered.len().max(1) as f64,
        stats.iter().filter(|s| s.fallback.is_some()).count()
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

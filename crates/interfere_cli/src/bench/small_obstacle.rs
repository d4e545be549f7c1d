//! `interfere bench small-obstacle`: the small-obstacle comparison made fair (Wang–Faure–Pai
//! 2012 §1 and §3–5; `interfere_cli::small_obstacle_study` describes the study and the ideal
//! frictionless bounce it is compared with).
//!
//! The two shipped scenes (`assets/scenes/small_obstacle_{adaptive,uniform}.json`: adaptive
//! sampling at 512 rays per pair, a uniform 10 mm lattice of about that cost) run at `--runs`
//! seeded random placements: the cube's lane offset by up to half a spacing either way for
//! both, and the uniform lattice shifted by a random fraction of its spacing along each axis.
//! The report gives, per method, how often the cube was deflected and how often it passed
//! through untouched (the example's criteria), how many runs ended sliding back and at what
//! speed, against the ideal rebound.

use crate::output::print_json;
use clap::Args;
use interfere_cli::progress::Progress;
use interfere_cli::small_obstacle_study::{MethodSummary, StudyOptions, study};
use interfere_dynamics::Scene;
use std::path::PathBuf;

/// Arguments of `interfere bench small-obstacle`.
#[derive(Args)]
pub struct SmallObstacleArgs {
    /// The adaptive scene.
    #[arg(long, default_value = "assets/scenes/small_obstacle_adaptive.json")]
    adaptive_scene: PathBuf,
    /// The uniform scene (its `volume_spacing` sets the lattice and the lane offsets' range).
    #[arg(long, default_value = "assets/scenes/small_obstacle_uniform.json")]
    uniform_scene: PathBuf,
    /// Random placements (runs per method).
    #[arg(long, default_value_t = 32)]
    runs: usize,
    /// Seed of the placements.
    #[arg(long, default_value_t = 21)]
    seed: u64,
    /// Fixed steps per run (the scenes step at 240 Hz).
    #[arg(long, default_value_t = 240)]
    steps: usize,
    /// Print JSON (every run's outcome included) instead of a table.
    #[arg(long)]
    json: bool,
}

/// Runs the study and prints the report; progress goes to standard error unless `quiet`.
pub fn run(args: SmallObstacleArgs, quiet: bool) -> Result<(), String> {
    if args.runs == 0 || args.steps == 0 {
        return Err("--runs and --steps must be at least 1".into());
    }
    let adaptive = Scene::load(&args.adaptive_scene).map_err(|e| e.to_string())?;
    let uniform = Scene::load(&args.uniform_scene).map_err(|e| e.to_string())?;
    let options = StudyOptions {
        runs: args.runs,
        seed: args.seed,
        steps: args.steps,
    };
    let mut bar = Progress::unless_quiet("small obstacle", 3 * args.runs as u64, quiet);
    let start = std::time::Instant::now();
    let report =
        study(&adaptive, &uniform, &options, |_, _| bar.tick(1)).map_err(|e| e.to_string())?;
    bar.finish();
    if args.json {
        return print_json(&report);
    }
    let i = &report.ideal;
    println!(
        "small obstacle: {} placements (seed {}), {} steps ({:.2} s) each, {:.0} s wall",
        report.runs,
        report.seed,
        report.steps,
        report.seconds,
        start.elapsed().as_secs_f64()
    );
    println!(
        "adaptive: {} rays per pair and query; uniform: {} m lattice, shifted by a random \
         fraction of a spacing per axis; both: lane offsets in ±{} m",
        report.ray_budget,
        report.spacing,
        report.spacing / 2.0
    );
    println!(
        "ideal frictionless bounce (restitution 0, centred): slides back at {:.3} m/s \
         ({:.3} of {} m/s) after rising {:.2} mm and pitching {:.1}°; tips over from {:.2} m/s",
        i.rebound_velocity,
        i.rebound_velocity / i.speed,
        i.speed,
        i.max_rise * 1e3,
        i.max_pitch_deg,
        i.tip_over_speed
    );
    println!(
        "{:<9} {:>9} {:>7} {:>8} {:>9} {:>10} {:>9} {:>7} {:>29} {:>17} {:>9} {:>11} {:>26}",
        "method",
        "deflected",
        "passed",
        "off slab",
        "rebounded",
        "like ideal",
        "over rise",
        "toppled",
        "rebound m/s median [min, max]",
        "rise mm med / max",
        "rays/step",
        "within 10 %",
        "rebound / ideal [max, min]"
    );
    for m in [&report.adaptive, &report.uniform, &report.exact] {
        row(m);
    }
    println!(
        "deflected: rise >= 0.5 mm or turn >= 5° or < 80 % of the speed kept, on the slab; \
         passed: rise < 0.1 mm, speed within 2 %, past the bump; like ideal: sliding back at \
         0.5-1.5x the ideal rebound, rise <= 2x the ideal; over rise: rise > 2x the ideal; \
         toppled: tilt > 45°; within 10 %: on the slab, sliding back within 10 % of the ideal \
         rebound; exact: the adaptive scene with the exact volume (the default contact), no rays"
    );
    Ok(())
}

fn row(m: &MethodSummary) {
    let frac = |n: usize| format!("{n}/{}", m.runs);
    println!(
        "{:<9} {:>9} {:>7} {:>8} {:>9} {:>10} {:>9} {:>7} {:>29} {:>17} {:>9.0} {:>11} {:>26}",
        m.method,
        frac(m.deflected),
        frac(m.passed_through),
        frac(m.off_slab),
        frac(m.rebounded),
        frac(m.like_ideal),
        frac(m.over_rise),
        frac(m.toppled),
        format!(
            "{:.3} [{:.3}, {:.3}]",
            m.rebound_velocity[0], m.rebound_velocity[1], m.rebound_velocity[2]
        ),
        format!(
            "{:.2} / {:.2}",
            m.deflected_rise[0] * 1e3,
            m.deflected_rise[1] * 1e3
        ),
        m.rays_per_step,
        frac(m.within_10_percent),
        format!("[{:.3}, {:.3}]", m.rebound_ratio[0], m.rebound_ratio[1])
    );
}

//! `interfere bench build`: hierarchy build times on one mesh, ours beside parry3d's, same run.
//!
//! Per mesh, each builder runs `--reps` times (after one untimed warm-up) and the median and
//! minimum are reported: the OBBTree (Lin–Manocha 1996, "Building an OBBTree") on one thread and
//! on `--threads` threads, the balanced AABB tree (Greß–Zachmann 2004, §4.1), and parry3d 0.31's
//! `TriMesh::new`, which with no flags does nothing but compute the triangles' boxes and build
//! its BVH. Only the build is timed: parry's vertex and index buffers are copied before its clock
//! starts, and every tree is dropped after its clock stops.
//!
//! `--cpu-time` reads the building thread's CPU time instead of the wall clock (Linux,
//! `/proc/thread-self/schedstat`), which other processes' load on the machine does not inflate,
//! once around all repetitions (the kernel updates it too coarsely for single short builds) and
//! reports the mean; the multi-threaded OBBTree row is then left out, since its helper threads
//! are not counted.

use super::parry_peer;
use clap::Args;
use interfere_cli::progress::Progress;
use interfere_geometry::threads::{ThreadSpec, bolt};
use interfere_geometry::{BalancedTree, MeshOptions, ObbTree, TriMesh, io};
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `interfere bench build`.
#[derive(Args)]
pub struct BuildArgs {
    /// A mesh (.obj or .stl); repeat the flag for several.
    #[arg(long)]
    mesh: Vec<PathBuf>,
    /// Also the generated M10×1.5 bolt with a 24 mm thread (`threads::bolt`, 131,456
    /// triangles; the nut-and-bolt demo's bolt).
    #[arg(long)]
    bolt: bool,
    /// Timed repetitions per builder.
    #[arg(long, default_value_t = 7)]
    reps: usize,
    /// Threads for the parallel OBBTree row.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Time by the building thread's CPU time rather than the wall clock (Linux only; leaves
    /// out the multi-threaded row).
    #[arg(long)]
    cpu_time: bool,
    /// Skip parry3d.
    #[arg(long)]
    no_parry: bool,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Row {
    builder: String,
    median_ms: f64,
    min_ms: f64,
}

#[derive(Serialize)]
struct MeshReport {
    mesh: String,
    triangles: usize,
    obb_depth: usize,
    rows: Vec<Row>,
}

#[derive(Serialize)]
struct Report {
    clock: &'static str,
    reps: usize,
    meshes: Vec<MeshReport>,
}

/// What a build is timed by.
#[derive(Clone, Copy)]
enum Clock {
    Wall,
    ThreadCpu,
}

/// The calling thread's CPU time in nanoseconds (Linux). The kernel brings it up to date at
/// ticks and context switches, so single short builds read it coarsely; [`measure`] reads it
/// once around all repetitions.
fn thread_cpu_ns() -> Result<u64, String> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat")
        .map_err(|e| format!("--cpu-time needs /proc/thread-self/schedstat: {e}"))?;
    text.split_whitespace()
        .next()
        .and_then(|x| x.parse().ok())
        .ok_or_else(|| format!("unreadable /proc/thread-self/schedstat: {text:?}"))
}

/// Times `build` on `reps` inputs from `input` (made before the clock starts) after one
/// untimed warm-up; what `build` returns is dropped after the clock stops. Wall clock: each
/// build timed alone, returns (median, min). Thread CPU time: all builds timed together,
/// returns (mean, mean).
fn measure<I, O>(
    clock: Clock,
    reps: usize,
    progress: &mut Progress,
    mut input: impl FnMut() -> I,
    mut build: impl FnMut(I) -> Result<O, String>,
) -> Result<(f64, f64), String> {
    drop(build(input())?);
    match clock {
        Clock::Wall => {
            let mut ms = Vec::with_capacity(reps);
            for _ in 0..reps {
                let i = input();
                let t = Instant::now();
                let built = build(i)?;
                ms.push(t.elapsed().as_secs_f64() * 1e3);
                drop(built);
                progress.tick(1);
            }
            ms.sort_by(f64::total_cmp);
            Ok((ms[ms.len() / 2], ms[0]))
        }
        Clock::ThreadCpu => {
            let inputs: Vec<I> = (0..reps).map(|_| input()).collect();
            let mut built = Vec::with_capacity(reps);
            let start = thread_cpu_ns()?;
            for i in inputs {
                built.push(build(i)?);
                progress.tick(1);
            }
            let mean = (thread_cpu_ns()? - start) as f64 * 1e-6 / reps as f64;
            drop(built);
            Ok((mean, mean))
        }
    }
}

/// Runs the benchmark; progress goes to standard error unless `quiet`.
pub fn run(args: BuildArgs, quiet: bool) -> Result<(), String> {
    if args.reps == 0 || args.threads == 0 {
        return Err("--reps and --threads must be at least 1".into());
    }
    let mut meshes: Vec<(String, TriMesh)> = Vec::new();
    for path in &args.mesh {
        let mesh = io::load_mesh(path, &MeshOptions::default()).map_err(|e| e.to_string())?;
        meshes.push((path.display().to_string(), mesh));
    }
    if args.bolt {
        let mesh = bolt(&ThreadSpec::M10, 24.0)
            .map_err(|e| e.to_string())?
            .into_mesh();
        meshes.push(("bolt M10x1.5, 24 mm thread".into(), mesh));
    }
    if meshes.is_empty() {
        return Err("give at least one --mesh, or --bolt".into());
    }
    let clock = if args.cpu_time {
        Clock::ThreadCpu
    } else {
        Clock::Wall
    };
    let builders = 4 - usize::from(args.no_parry) - usize::from(args.cpu_time);
    let total = (meshes.len() * builders * args.reps) as u64;
    let mut progress = Progress::unless_quiet("bench build", total, quiet).unit("builds");
    let mut reports = Vec::new();
    for (name, mesh) in &meshes {
        let reps = args.reps;
        let mut rows = Vec::new();
        let mut row = |builder: String, (median_ms, min_ms): (f64, f64)| {
            rows.push(Row {
                builder,
                median_ms,
                min_ms,
            })
        };
        let no_input = || ();
        row(
            "OBBTree, 1 thread".into(),
            measure(clock, reps, &mut progress, no_input, |()| {
                Ok(ObbTree::build(mesh))
            })?,
        );
        if !args.cpu_time {
            row(
                format!("OBBTree, {} threads", args.threads),
                measure(clock, reps, &mut progress, no_input, |()| {
                    Ok(ObbTree::build_with_threads(mesh, args.threads))
                })?,
            );
        }
        row(
            "balanced AABB tree".into(),
            measure(clock, reps, &mut progress, no_input, |()| {
                Ok(BalancedTree::build(mesh))
            })?,
        );
        if !args.no_parry {
            // parry takes the buffers by value: the copies are made before the clock starts.
            let buffers = parry_peer::buffers(mesh);
            row(
                "parry3d TriMesh::new (BVH)".into(),
                measure(
                    clock,
                    reps,
                    &mut progress,
                    || buffers.clone(),
                    |(v, i)| parry_peer::build_trimesh(v, i),
                )?,
            );
        }
        reports.push(MeshReport {
            mesh: name.clone(),
            triangles: mesh.triangle_count(),
            obb_depth: ObbTree::build(mesh).depth(),
            rows,
        });
    }
    progress.finish();
    let report = Report {
        clock: if args.cpu_time {
            "thread CPU time, mean of all runs (listed twice)"
        } else {
            "wall clock, median (min)"
        },
        reps: args.reps,
        meshes: reports,
    };
    if args.json {
        return crate::output::print_json(&report);
    }
    print_table(&report);
    Ok(())
}

fn print_table(r: &Report) {
    println!(
        "hierarchy build, {} of {} runs after a warm-up, ms",
        r.clock, r.reps
    );
    for m in &r.meshes {
        println!(
            "{} ({} triangles, OBBTree depth {})",
            m.mesh, m.triangles, m.obb_depth
        );
        let aabb = m
            .rows
            .iter()
            .find(|x| x.builder == "balanced AABB tree")
            .map_or(f64::NAN, |x| x.median_ms);
        for x in &m.rows {
            println!(
                "  {:<28} {:>9.2} ({:>8.2})  {:>5.2}x the balanced tree",
                x.builder,
                x.median_ms,
                x.min_ms,
                x.median_ms / aabb
            );
        }
    }
}

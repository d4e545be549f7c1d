//! `interfere bench coherence`: the narrow phase of a pair that keeps its OBBTree traversal front
//! between steps (`interfere_geometry::bvh::front`) against the traversal from the roots, on the
//! same poses, in the same run.
//!
//! Per mesh, a copy of it is laid on top of it, pressed in by 0.5 % of its size (a resting
//! contact), then moved for `--steps` steps in each of three ways: at rest (a jitter of 1e-6 of
//! its size and 1e-6 rad per step, what a solver leaves), sliding (0.1 % of its size per step)
//! and turning (0.01 rad per step about its centre). `--bolt` adds the nut-and-bolt demo's nut on
//! its bolt, at rest and screwing down (0.02 rad and the pitch's share per step). Each step runs
//! the full traversal (every crossing pair, exact leaf tests) and the coherent query; their
//! answers must be equal (the run fails otherwise), and the median times are reported with their
//! ratio. The coherent query's threads are `--threads`; the full traversal has one.

use super::{m10_bolt_and_nut, median, screwed_nut};
use clap::Args;
use interfere_cli::progress::Progress;
use interfere_geometry::glam::{DMat3, DQuat, DVec3, Vec3};
use interfere_geometry::{DPose, MeshOptions, MeshQueries, Method, TraversalFront, TriMesh, io};
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `interfere bench coherence`.
#[derive(Args)]
pub struct CoherenceArgs {
    /// A mesh (.obj or .stl); repeat the flag for several.
    #[arg(long)]
    mesh: Vec<PathBuf>,
    /// Also the nut-and-bolt demo's M10×1.5 nut (44,032 triangles) on its bolt (131,456).
    #[arg(long)]
    bolt: bool,
    /// Steps per motion.
    #[arg(long, default_value_t = 60)]
    steps: usize,
    /// Threads for the coherent query (large fronts only).
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Row {
    pair: String,
    motion: &'static str,
    crossing_pairs_mean: f64,
    full_ms: f64,
    coherent_ms: f64,
    ratio: f64,
    full_box_tests_mean: f64,
    coherent_box_tests_mean: f64,
    /// Of the coherent query's box tests, those on one face axis alone (a node pair re-tested
    /// on the axis that separated it last time, still apart).
    coherent_axis_tests_mean: f64,
    front_entries_mean: f64,
}

#[derive(Serialize)]
struct Report {
    steps: usize,
    threads: usize,
    clock: &'static str,
    rows: Vec<Row>,
}

/// Per step: the full traversal's and the coherent query's times (ms), and the crossing pairs,
/// the full traversal's box tests, the coherent query's box tests, its front's entries and its
/// box tests on one face axis alone.
type Followed = (Vec<f64>, Vec<f64>, [Vec<usize>; 5]);

/// A pair to follow: its name, A, B, and B's poses in A's frame per motion.
type Pair = (
    String,
    MeshQueries,
    MeshQueries,
    Vec<(&'static str, Vec<DPose>)>,
);

fn mean(v: &[usize]) -> f64 {
    v.iter().sum::<usize>() as f64 / v.len().max(1) as f64
}

/// Runs one pair through `poses`, both ways, and checks that the answers agree.
fn follow(
    a: &MeshQueries,
    b: &MeshQueries,
    poses: &[DPose],
    threads: usize,
    progress: &mut Progress,
) -> Result<Followed, String> {
    let mut front = TraversalFront::new();
    let (mut full_ms, mut coherent_ms) = (Vec::new(), Vec::new());
    let mut counts: [Vec<usize>; 5] = Default::default();
    // The front is made at the first pose (that query is the first traversal, not timed).
    a.interference_coherent(b, &poses[0], &mut front, threads);
    for p in &poses[1..] {
        let t = Instant::now();
        let full = a
            .interference(b, p, Method::Obb, true)
            .map_err(|e| e.to_string())?;
        full_ms.push(t.elapsed().as_secs_f64() * 1e3);
        let fresh_tests = {
            let mut one = TraversalFront::new();
            a.interference_coherent(b, p, &mut one, 1);
            one.stats().box_tests
        };
        let t = Instant::now();
        let coherent = a.interference_coherent(b, p, &mut front, threads);
        coherent_ms.push(t.elapsed().as_secs_f64() * 1e3);
        if coherent.pairs != full.pairs || coherent.intersecting != full.intersecting {
            return Err(format!(
                "the coherent query found {} crossing pairs where the full traversal found {}",
                coherent.pairs.len(),
                full.pairs.len()
            ));
        }
        counts[0].push(full.pairs.len());
        counts[1].push(fresh_tests);
        counts[2].push(front.stats().box_tests);
        counts[3].push(front.stats().front);
        counts[4].push(front.stats().axis_tests);
        progress.tick(1);
    }
    Ok((full_ms, coherent_ms, counts))
}

/// B's poses in A's frame: `start`, then moved by `step` each time.
fn walk(start: DPose, steps: usize, step: impl Fn(usize, &DPose) -> DPose) -> Vec<DPose> {
    let mut poses = vec![start];
    for k in 0..steps {
        let next = step(k, poses.last().unwrap_or(&start));
        poses.push(next);
    }
    poses
}

/// `pose` turned by `angle` about `axis` through the point `pivot` of B (B's frame).
fn turned(pose: &DPose, axis: DVec3, angle: f64, pivot: DVec3) -> DPose {
    let r = DMat3::from_quat(DQuat::from_axis_angle(axis, angle));
    let centre = pose.transform_dpoint(pivot);
    let rotation = r * pose.rotation;
    DPose {
        rotation,
        translation: centre - rotation * pivot,
    }
}

/// The three motions of a mesh resting on a copy of itself: the copy lowered onto it (the height
/// of first touch found by bisection), then pressed in by 0.5 % of its size.
fn resting_copy(
    queries: &MeshQueries,
    mesh: &TriMesh,
    steps: usize,
) -> Result<Vec<(&'static str, Vec<DPose>)>, String> {
    let (lo, hi) = mesh.vertices().iter().fold(
        (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)),
        |(l, h), v| (l.min(*v), h.max(*v)),
    );
    let (lo, hi) = (lo.as_dvec3(), hi.as_dvec3());
    let size = (hi - lo).length();
    let at = |z: f64| DPose {
        rotation: DMat3::IDENTITY,
        translation: DVec3::new(0.0, 0.0, z),
    };
    let crosses = |z: f64| -> Result<bool, String> {
        Ok(!queries
            .all_pairs(queries, &at(z), Method::Obb)
            .map_err(|e| e.to_string())?
            .is_empty())
    };
    // Apart above, crossing half way down (a closed mesh crosses its own copy shifted by less
    // than its height); bisect between.
    let (mut apart, mut crossing) = (hi.z - lo.z + 1e-3 * size, 0.5 * (hi.z - lo.z));
    if !crosses(crossing)? {
        return Err("the mesh does not cross its copy half its height above it".into());
    }
    for _ in 0..40 {
        let mid = 0.5 * (apart + crossing);
        if crosses(mid)? {
            crossing = mid;
        } else {
            apart = mid;
        }
    }
    let start = at(crossing - 0.005 * size);
    let centre = 0.5 * (lo + hi);
    // A fixed, irregular sequence of directions (no random generator needed).
    let dir = |k: usize| {
        let t = k as f64 * 2.399_963;
        DVec3::new(t.cos(), t.sin(), 0.3 * (1.7 * t).sin()).normalize()
    };
    Ok(vec![
        (
            "at rest",
            walk(start, steps, |k, p| {
                let mut q = turned(p, dir(k), 1e-6, centre);
                q.translation += dir(k + 7) * 1e-6 * size;
                q
            }),
        ),
        (
            "sliding",
            walk(start, steps, |_, p| DPose {
                translation: p.translation + DVec3::X * 1e-3 * size,
                ..*p
            }),
        ),
        (
            "turning",
            walk(start, steps, |_, p| {
                turned(p, DVec3::new(0.3, 0.2, 1.0).normalize(), 0.01, centre)
            }),
        ),
    ])
}

/// The nut on its bolt: still, and screwing down.
fn nut_on_bolt(steps: usize) -> Vec<(&'static str, Vec<DPose>)> {
    let screw = screwed_nut;
    vec![
        (
            "at rest",
            walk(screw(0.0), steps, |k, _| screw(1e-7 * (k + 1) as f64)),
        ),
        (
            "turning",
            walk(screw(0.0), steps, |k, _| screw(0.02 * (k + 1) as f64)),
        ),
    ]
}

/// Runs the benchmark; progress goes to standard error unless `quiet`.
pub fn run(args: CoherenceArgs, quiet: bool) -> Result<(), String> {
    if args.steps == 0 || args.threads == 0 {
        return Err("--steps and --threads must be at least 1".into());
    }
    let mut pairs: Vec<Pair> = Vec::new();
    for path in &args.mesh {
        let mesh = io::load_mesh(path, &MeshOptions::default()).map_err(|e| e.to_string())?;
        let queries = MeshQueries::new(mesh.clone());
        let motions = resting_copy(&queries, &mesh, args.steps)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let name = format!("{} on itself", path.display());
        pairs.push((name, queries, MeshQueries::new(mesh), motions));
    }
    if args.bolt {
        let (b, n) = m10_bolt_and_nut()?;
        pairs.push((
            "M10 nut on its bolt".into(),
            MeshQueries::new(b.into_mesh()),
            MeshQueries::new(n.into_mesh()),
            nut_on_bolt(args.steps),
        ));
    }
    if pairs.is_empty() {
        return Err("give at least one --mesh, or --bolt".into());
    }
    let total: usize = pairs.iter().map(|p| p.3.len() * args.steps).sum();
    let mut progress = Progress::unless_quiet("bench coherence", total as u64, quiet).unit("steps");
    let mut rows = Vec::new();
    for (name, a, b, motions) in &pairs {
        for (motion, poses) in motions {
            let (full, coherent, counts) = follow(a, b, poses, args.threads, &mut progress)?;
            let (full_ms, coherent_ms) = (median(full), median(coherent));
            rows.push(Row {
                pair: name.clone(),
                motion,
                crossing_pairs_mean: mean(&counts[0]),
                full_ms,
                coherent_ms,
                ratio: coherent_ms / full_ms,
                full_box_tests_mean: mean(&counts[1]),
                coherent_box_tests_mean: mean(&counts[2]),
                coherent_axis_tests_mean: mean(&counts[4]),
                front_entries_mean: mean(&counts[3]),
            });
        }
    }
    progress.finish();
    let report = Report {
        steps: args.steps,
        threads: args.threads,
        clock: "wall clock, median per step",
        rows,
    };
    if args.json {
        return crate::output::print_json(&report);
    }
    println!(
        "narrow phase of one pair, every crossing pair, {} steps per motion, {}; coherent query on {} thread(s)",
        report.steps, report.clock, report.threads
    );
    println!(
        "{:<44} {:<8} {:>9} {:>10} {:>10} {:>7} {:>12} {:>12} {:>14}",
        "pair",
        "motion",
        "crossing",
        "full ms",
        "front ms",
        "ratio",
        "full tests",
        "front tests",
        "of them 1-axis"
    );
    for r in &report.rows {
        println!(
            "{:<44} {:<8} {:>9.0} {:>10.3} {:>10.3} {:>7.3} {:>12.0} {:>12.0} {:>14.0}",
            r.pair,
            r.motion,
            r.crossing_pairs_mean,
            r.full_ms,
            r.coherent_ms,
            r.ratio,
            r.full_box_tests_mean,
            r.coherent_box_tests_mean,
            r.coherent_axis_tests_mean
        );
    }
    Ok(())
}

//! `interfere bench volume`: the intersection volume in the tumbling protocol of
//! `bench tumble`: our exact volume and its gradient (Wang, Faure & Pai 2012, section 2.2,
//! computed from the surfaces), its in-process exact peer (parry3d's mesh boolean), and the
//! uniform ray sampler (Eq. 1) per resolution.
//!
//! Two copies of one mesh scaled into [-1,1]^3, the second tumbling at centre distance `d`
//! (poses of [`tumble_pose`]). The exact rows (module `volume_exact`) time the narrow phase plus
//! `ExactVolume::compute`, and the fused traversals, which must agree bit for bit; that exact
//! volume is the reference of every error column. parry3d's `intersect_meshes` is timed on the
//! same poses (its error against the exact volume is reported too).
//!
//! Per resolution `R` (lines per side of the overlap box on each of the three axes), every query
//! of [`UniformVolume::compute`] (volume, per-vertex gradient, force and torque; the trees are
//! built once, as a simulation does) is timed on one thread, with its relative error against
//! the exact volume.
//!
//! The baseline in the same run is the sampler as it was before its blocks and bins: both meshes
//! placed per query, one tree walk per line and mesh ([`RayMesh::cast_axis`]), volume only. It
//! must give the sampler's volume bit for bit (the bench stops otherwise); its time against the
//! sampler's is the speed-up of those changes.
//!
//! manifold3d is not a Rust crate, so it is not run in process: its exact-volume figures from
//! `../shared/meshes/README.md` are printed as an outside reference only, labelled as such.

use super::parry_peer::ParryBoolean;
use super::tumble::tumble_pose;
use super::volume_exact::{self, ExactRow, MANIFOLD_NOTE, ParryRow};
use crate::output::{ms, print_json};
use clap::Args;
use interfere_cli::progress::Progress;
use interfere_geometry::interference::{MeshQueries, Method};
use interfere_geometry::volume::ExactVolume;
use interfere_geometry::volume::{
    AxisRay, IntervalSweep, LineCrossing, RayMesh, Sampling, UniformOptions, UniformVolume,
    VolumeError, VolumeOnlyOptions,
};
use interfere_geometry::{BalancedTree, DPose, MeshOptions, Solid, io};
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `interfere bench volume`.
#[derive(Args)]
pub struct VolumeBenchArgs {
    /// The mesh (.obj or .stl); both copies are this mesh scaled into [-1,1]^3. It must be
    /// closed.
    #[arg(long)]
    mesh: PathBuf,
    /// Centre distances, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "1,0.5")]
    distances: Vec<f64>,
    /// Resolutions to time, comma separated (lines per side of the overlap box, per axis).
    #[arg(long, value_delimiter = ',', default_value = "12,16,20,24,32")]
    resolutions: Vec<u32>,
    /// First-pass resolutions to time at every resolution, comma separated: `0` samples the
    /// overlap box (`Sampling::Resolution`), `c > 0` first finds the intersection's extent with
    /// `c` lines per side (`Sampling::Fitted`). The baseline runs for the `0` rows only.
    #[arg(long, value_delimiter = ',', default_value = "0")]
    coarse: Vec<u32>,
    /// Axes to sample, comma separated: `3` is the query with the gradient
    /// (`UniformVolume::compute`), `1` the volume alone from the longest axis of the sampled
    /// box (`UniformVolume::volume_only`, with the `--coarse` value as its pilot).
    #[arg(long, value_delimiter = ',', default_value = "3")]
    axes: Vec<u32>,
    /// Relative tolerance for the one-axis rows: each query refines its resolution until twice
    /// its estimated error is within it (`VolumeOnlyOptions::relative_tolerance`).
    #[arg(long)]
    tolerance: Option<f64>,
    /// Threads of the exact volume's per-pair work to time, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "1,2")]
    exact_threads: Vec<usize>,
    /// Skip parry3d's mesh boolean (the in-process exact peer).
    #[arg(long)]
    no_parry: bool,
    /// Skip the uniform sampler's rows (exact rows and the peer only).
    #[arg(long)]
    no_uniform: bool,
    /// Tumbling steps per distance.
    #[arg(long, default_value_t = 100)]
    steps: usize,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct ResolutionRow {
    resolution: u32,
    /// First-pass lines per side (`0`: the overlap box is sampled).
    coarse: u32,
    /// Axes sampled: 3 (volume and gradient) or 1 (volume only).
    axes: u32,
    /// The relative tolerance of one-axis rows, when asked for.
    tolerance: Option<f64>,
    /// Mean lines per side of the last pass (above `resolution` when a tolerance refined it).
    mean_final_resolution: f64,
    /// Share of the poses whose tolerance test passed (one-axis rows with a tolerance).
    tolerance_met_share: Option<f64>,
    /// Share of the poses whose actual error exceeded the tolerance.
    over_tolerance_share: Option<f64>,
    rays_per_query: f64,
    mean_ms: f64,
    max_ms: f64,
    /// Mean ms of the baseline (one tree walk per line and mesh, both placed per query), for
    /// unrefined rows.
    baseline_mean_ms: Option<f64>,
    mean_relative_error: f64,
    p95_relative_error: f64,
    max_relative_error: f64,
    /// Mean of the sampler's own error estimate, relative to the exact volume.
    mean_estimated_error: f64,
    /// 95th percentile and maximum of |error| / estimated error over the poses.
    p95_error_over_estimate: f64,
    max_error_over_estimate: f64,
}

#[derive(Serialize)]
struct DistanceRow {
    distance: f64,
    /// Poses whose exact volume is positive (the others are left out of the errors).
    overlapping_poses: usize,
    mean_exact_volume: f64,
    /// Our exact volume, timed several ways.
    exact: Vec<ExactRow>,
    /// parry3d's mesh boolean on the same poses.
    parry: Option<ParryRow>,
    resolutions: Vec<ResolutionRow>,
}

#[derive(Serialize)]
struct Report {
    mesh: String,
    triangles: usize,
    steps: usize,
    build_ms: f64,
    /// Building the exact volume's topologies and both OBBTrees.
    exact_build_ms: f64,
    distances: Vec<DistanceRow>,
    /// manifold3d's figures: an outside reference, not run here.
    outside_reference: &'static str,
}

fn options(r: u32, coarse: u32) -> UniformOptions {
    UniformOptions {
        sampling: match coarse {
            0 => Sampling::Resolution(r),
            c => Sampling::Fitted {
                coarse: c,
                resolution: r,
            },
        },
        collect_points: false,
        max_rays: u64::MAX,
        ..UniformOptions::default()
    }
}

/// The baseline: the volume of the sampler at resolution `r` with both meshes placed per query
/// and one tree walk per line and mesh (the same lines, hits and sums, so the same value).
fn baseline_volume(
    solid: &Solid,
    tree: &BalancedTree,
    b_to_a: &DPose,
    r: u32,
) -> Result<f64, VolumeError> {
    let ma = RayMesh::new(solid, tree, &DPose::IDENTITY)?;
    let mb = RayMesh::new(solid, tree, b_to_a)?;
    let lo = ma.bounds()[0].max(mb.bounds()[0]);
    let hi = ma.bounds()[1].min(mb.bounds()[1]);
    if !lo.cmplt(hi).all() {
        return Ok(0.0);
    }
    let (mut hits_a, mut hits_b) = (Vec::<LineCrossing>::new(), Vec::<LineCrossing>::new());
    let mut sweep = IntervalSweep::default();
    let mut axis_volumes = [0.0; 3];
    for (k, volume) in axis_volumes.iter_mut().enumerate() {
        let axes = [(k + 1) % 3, (k + 2) % 3];
        let h = axes.map(|a| (hi[a] - lo[a]) / f64::from(r));
        let mut length = 0.0;
        for i in 0..r {
            let u = lo[axes[0]] + (f64::from(i) + 0.5) * h[0];
            for j in 0..r {
                let v = lo[axes[1]] + (f64::from(j) + 0.5) * h[1];
                let ray = AxisRay { axis: k, u, v };
                hits_a.clear();
                ma.cast_axis(&ray, &mut hits_a);
                if hits_a.is_empty() {
                    continue;
                }
                hits_b.clear();
                mb.cast_axis(&ray, &mut hits_b);
                sweep.sweep(&hits_a, &hits_b, |e| {
                    if let Some(t0) = e.from {
                        length += e.hit.t - t0;
                    }
                });
            }
        }
        *volume = h[0] * h[1] * length;
    }
    Ok(axis_volumes.iter().sum::<f64>() / 3.0)
}

/// Which query a row times.
#[derive(Clone, Copy, Debug, PartialEq)]
enum RowKind {
    /// `UniformVolume::compute`: three axes, volume and gradient.
    ThreeAxes,
    /// `UniformVolume::volume_only`: one axis, volume only, with an optional tolerance.
    OneAxis { tolerance: Option<f64> },
}

/// Times the sampler at resolution `r` (after a first pass of `f` lines per side when `f > 0`)
/// over `poses`, with its errors against the exact volumes `reference`, and (`f = 0`) the
/// baseline, which must
/// agree bit for bit.
#[allow(clippy::too_many_arguments)]
fn time_row(
    sampler: &UniformVolume,
    solid: &Solid,
    tree: &BalancedTree,
    poses: &[DPose],
    reference: &[f64],
    r: u32,
    f: u32,
    row: RowKind,
    d: f64,
) -> Result<ResolutionRow, String> {
    let (mut sum_ms, mut max_ms, mut rays) = (0.0, 0.0f64, 0.0);
    let mut errors = Vec::with_capacity(poses.len());
    let (mut estimates, mut over_estimate) = (Vec::new(), Vec::new());
    let mut volumes = Vec::with_capacity(poses.len());
    let (mut final_r, mut met, mut over) = (0.0, 0usize, 0usize);
    let tolerance = match row {
        RowKind::OneAxis { tolerance } => tolerance,
        RowKind::ThreeAxes => None,
    };
    for (p, &v_ref) in poses.iter().zip(reference) {
        let t = Instant::now();
        let (volume, estimate, ray_count, last_r) = match row {
            RowKind::ThreeAxes => {
                let result = sampler
                    .compute(p, &options(r, f))
                    .map_err(|e| e.to_string())?;
                let est = result.estimated_error().unwrap_or(f64::NAN);
                (result.volume, est, result.ray_count, r)
            }
            RowKind::OneAxis { tolerance } => {
                let one = VolumeOnlyOptions {
                    pilot: f,
                    resolution: r,
                    relative_tolerance: tolerance,
                    max_rays: u64::MAX,
                };
                let result = sampler.volume_only(p, &one).map_err(|e| e.to_string())?;
                met += usize::from(result.tolerance_met == Some(true));
                (
                    result.volume,
                    result.estimated_error,
                    result.ray_count,
                    result.resolution,
                )
            }
        };
        let elapsed = ms(t);
        sum_ms += elapsed;
        max_ms = max_ms.max(elapsed);
        rays += ray_count as f64;
        final_r += f64::from(last_r);
        volumes.push(volume);
        if v_ref > 0.0 {
            let error = (volume - v_ref).abs();
            if let Some(tol) = tolerance {
                over += usize::from(error > tol * v_ref);
            }
            errors.push(error / v_ref);
            estimates.push(estimate / v_ref);
            over_estimate.push(if estimate > 0.0 {
                error / estimate
            } else {
                f64::INFINITY
            });
        }
    }
    // The baseline in a pass of its own, so that neither evicts the other's data.
    let baseline_mean_ms = if f == 0 && row == RowKind::ThreeAxes {
        let mut baseline_ms = 0.0;
        for (p, &v) in poses.iter().zip(&volumes) {
            let t = Instant::now();
            let baseline = baseline_volume(solid, tree, p, r).map_err(|e| e.to_string())?;
            baseline_ms += ms(t);
            if baseline != v {
                return Err(format!(
                    "the baseline's volume {baseline} differs from the sampler's {v} at d={d}, R={r}"
                ));
            }
        }
        Some(baseline_ms / poses.len() as f64)
    } else {
        None
    };
    errors.sort_by(f64::total_cmp);
    over_estimate.sort_by(f64::total_cmp);
    let quantile = |x: &[f64], q: f64| {
        if x.is_empty() {
            0.0
        } else {
            x[((x.len() - 1) as f64 * q).round() as usize]
        }
    };
    let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len().max(1) as f64;
    let n = poses.len() as f64;
    Ok(ResolutionRow {
        resolution: r,
        coarse: f,
        axes: if row == RowKind::ThreeAxes { 3 } else { 1 },
        tolerance,
        mean_final_resolution: final_r / n,
        tolerance_met_share: tolerance.map(|_| met as f64 / n),
        over_tolerance_share: tolerance.map(|_| over as f64 / errors.len().max(1) as f64),
        rays_per_query: rays / n,
        mean_ms: sum_ms / n,
        max_ms,
        baseline_mean_ms,
        mean_relative_error: mean(&errors),
        p95_relative_error: quantile(&errors, 0.95),
        max_relative_error: quantile(&errors, 1.0),
        mean_estimated_error: mean(&estimates),
        p95_error_over_estimate: quantile(&over_estimate, 0.95),
        max_error_over_estimate: quantile(&over_estimate, 1.0),
    })
}

/// Runs the benchmark; progress goes to standard error unless `quiet`.
pub fn run(args: VolumeBenchArgs, quiet: bool) -> Result<(), String> {
    if args.steps == 0 {
        return Err("--steps must be at least 1".into());
    }
    if args.resolutions.contains(&0) {
        return Err("resolutions must be positive".into());
    }
    if args.exact_threads.is_empty() {
        return Err("--exact-threads needs at least one count".into());
    }
    if let Some(&a) = args.axes.iter().find(|&&a| a != 1 && a != 3) {
        return Err(format!("--axes takes 1 or 3, got {a}"));
    }
    if let Some(t) = args.tolerance
        && !(t.is_finite() && t > 0.0)
    {
        return Err(format!("--tolerance must be positive and finite, got {t}"));
    }
    let mesh = io::load_mesh(&args.mesh, &MeshOptions::default())
        .map_err(|e| e.to_string())?
        .normalized_to_unit_cube();
    let solid = Solid::new(mesh).map_err(|e| format!("{}: {e}", args.mesh.display()))?;
    let t = Instant::now();
    let sampler = UniformVolume::new(&solid, &solid);
    let build_ms = ms(t);
    let tree = BalancedTree::build(&solid);
    let t = Instant::now();
    let exact = ExactVolume::new(&solid, &solid);
    let collider = MeshQueries::new(solid.mesh().clone());
    collider.prepare(Method::Obb);
    exact.prepare(interfere_geometry::volume::Traversal::Obb);
    let exact_build_ms = ms(t);
    let parry = if args.no_parry {
        None
    } else {
        Some(ParryBoolean::new(solid.mesh())?)
    };
    let mut distances = Vec::new();
    // Per distance: the reference volumes, then one row of `steps` poses per combination.
    let rows_per_distance = args.resolutions.len() * args.coarse.len() * args.axes.len();
    let total = (args.distances.len() * args.steps * (1 + rows_per_distance)) as u64;
    let mut progress = Progress::unless_quiet("bench volume", total, quiet).unit("poses");
    for &d in &args.distances {
        let poses: Vec<_> = (0..args.steps)
            .map(|i| tumble_pose(d, i, args.steps))
            .collect();
        let exact_rows = volume_exact::run(
            &solid,
            &collider,
            &exact,
            parry.as_ref(),
            &poses,
            &args.exact_threads,
        )?;
        let reference = exact_rows.volumes;
        progress.tick(poses.len() as u64);
        let overlapping = reference.iter().filter(|&&v| v > 0.0).count();
        let mut rows = Vec::new();
        let resolutions: &[u32] = if args.no_uniform {
            &[]
        } else {
            &args.resolutions
        };
        for &r in resolutions {
            for &f in &args.coarse {
                for &a in &args.axes {
                    let row = if a == 3 {
                        RowKind::ThreeAxes
                    } else {
                        RowKind::OneAxis {
                            tolerance: args.tolerance,
                        }
                    };
                    rows.push(time_row(
                        &sampler, &solid, &tree, &poses, &reference, r, f, row, d,
                    )?);
                    progress.tick(poses.len() as u64);
                }
            }
        }
        distances.push(DistanceRow {
            distance: d,
            overlapping_poses: overlapping,
            mean_exact_volume: reference.iter().sum::<f64>() / reference.len() as f64,
            exact: exact_rows.rows,
            parry: exact_rows.parry,
            resolutions: rows,
        });
    }
    progress.finish();
    let report = Report {
        mesh: args.mesh.display().to_string(),
        triangles: solid.triangle_count(),
        steps: args.steps,
        build_ms,
        exact_build_ms,
        distances,
        outside_reference: MANIFOLD_NOTE,
    };
    if args.json {
        return print_json(&report);
    }
    println!(
        "{}: {} triangles, {} poses per distance; sampler trees built in {:.1} ms, exact topology + OBBTrees in {:.1} ms; errors against the exact volume",
        report.mesh, report.triangles, report.steps, report.build_ms, report.exact_build_ms
    );
    for d in &report.distances {
        println!(
            "d = {}: {} overlapping poses, mean exact volume {:.6}",
            d.distance, d.overlapping_poses, d.mean_exact_volume,
        );
        println!(
            "  {:<13} {:>7} {:>9} {:>9} {:>9} {:>10} {:>9} {:>10} {:>9} {:>7}",
            "exact",
            "threads",
            "mean ms",
            "max ms",
            "cpu ms",
            "narrow ms",
            "exact ms",
            "candidates",
            "crossing",
            "regions"
        );
        let opt = |x: Option<f64>| x.map_or_else(|| "-".to_string(), |v| format!("{v:.3}"));
        for e in &d.exact {
            println!(
                "  {:<13} {:>7} {:>9.3} {:>9.3} {:>9} {:>10} {:>9} {:>10.0} {:>9.0} {:>7.2}",
                e.variant,
                e.threads,
                e.mean_ms,
                e.max_ms,
                opt(e.cpu_mean_ms),
                opt(e.narrow_mean_ms),
                opt(e.exact_mean_ms),
                e.candidates,
                e.crossing_pairs,
                e.regions
            );
        }
        if let Some(p) = &d.parry {
            let best = d
                .exact
                .iter()
                .map(|e| e.mean_ms)
                .fold(f64::INFINITY, f64::min);
            println!(
                "  parry3d intersect_meshes: mean {:.3} ms, max {:.3} ms ({:.1}x our fastest exact row); error vs exact: mean {:.2e}, max {:.2e}; {} failures, {} zero/non-zero disagreements",
                p.mean_ms,
                p.max_ms,
                p.mean_ms / best,
                p.mean_relative_error,
                p.max_relative_error,
                p.failures,
                p.disagreements
            );
        }
        if d.resolutions.is_empty() {
            continue;
        }
        println!(
            "  {:>4} {:>6} {:>4} {:>6} {:>8} {:>9} {:>9} {:>11} {:>9} {:>9} {:>9} {:>9} {:>9} {:>11} {:>7} {:>7}",
            "R",
            "coarse",
            "axes",
            "R end",
            "rays",
            "mean ms",
            "max ms",
            "baseline ms",
            "speed-up",
            "mean err",
            "p95 err",
            "max err",
            "mean est",
            "err/est p95",
            "met",
            "> tol"
        );
        let share = |x: Option<f64>| {
            x.map(|x| format!("{:.0}%", 100.0 * x))
                .unwrap_or_else(|| "-".into())
        };
        for r in &d.resolutions {
            let (baseline, speed_up) = match r.baseline_mean_ms {
                Some(b) => (format!("{b:.3}"), format!("{:.2}x", b / r.mean_ms)),
                None => ("-".into(), "-".into()),
            };
            println!(
                "  {:>4} {:>6} {:>4} {:>6.1} {:>8.0} {:>9.3} {:>9.3} {:>11} {:>9} {:>8.3}% {:>8.3}% {:>8.3}% {:>8.3}% {:>11.2} {:>7} {:>7}",
                r.resolution,
                r.coarse,
                r.axes,
                r.mean_final_resolution,
                r.rays_per_query,
                r.mean_ms,
                r.max_ms,
                baseline,
                speed_up,
                100.0 * r.mean_relative_error,
                100.0 * r.p95_relative_error,
                100.0 * r.max_relative_error,
                100.0 * r.mean_estimated_error,
                r.p95_error_over_estimate,
                share(r.tolerance_met_share),
                share(r.over_tolerance_share),
            );
        }
    }
    println!("{}", report.outside_reference);
    Ok(())
}

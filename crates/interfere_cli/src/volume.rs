//! `interfere volume`: the intersection volume of two closed meshes and the generalized force
//! it implies (Wang, Faure & Pai 2012, §2.2, Eq. 1–2), either exactly from the surfaces
//! (`--method exact`: no rays, no resolution, with the contact regions), or by parallel-ray
//! sampling along three axes on the CPU, uniform (Eq. 1) or adaptive with a volume tolerance
//! (the Error Bound Polynomial Image of §3–5).
//!
//! Forces are `-∂V/∂x`: on each body, the force pushing it out of the other, and the torque
//! about the body's own origin (its pose's translation), both in world coordinates.

use crate::check::relative;
use crate::output::{Timings, ms, print_json};
use crate::pose_arg::PosedMeshPair;
use clap::Args;
use interfere_geometry::glam::DVec3;
use interfere_geometry::volume::{
    AdaptiveOptions, AdaptiveVolume, ExactOptions, ExactVolume, Sampling, Tolerance, Traversal,
    UniformOptions, UniformVolume, ViewDirections, VolumeOnlyOptions,
};
use interfere_geometry::{MeshOptions, Solid, io};
use serde::Serialize;
use std::time::Instant;

/// Arguments of `interfere volume`.
#[derive(Args)]
pub struct VolumeArgs {
    #[command(flatten)]
    meshes: PosedMeshPair,
    /// Rays per side of the overlap box, per axis.
    #[arg(long, default_value_t = 64)]
    resolution: u32,
    /// Ray spacing in world units (a lattice fixed in A's frame); overrides --resolution.
    #[arg(long)]
    spacing: Option<f64>,
    /// First find the intersection's extent with this many rays per side of the overlap box,
    /// then sample that box at --resolution (CPU uniform only; ignored with --spacing).
    #[arg(long)]
    fit: Option<u32>,
    /// Sampling method.
    #[arg(long, value_enum, default_value_t = VolumeMethodArg::Uniform)]
    method: VolumeMethodArg,
    /// Volume tolerance. For `--method adaptive` (default 0.01), a bound: a fraction of the
    /// smaller solid's volume (for example 0.01), or an absolute volume with a trailing `abs`
    /// (for example `1e-4abs`). For `--method one-axis` (default none), a fraction of the
    /// intersection volume that twice the estimated error must meet (refining --resolution).
    #[arg(long)]
    tolerance: Option<String>,
    /// Finest EBPI image resolution (pixels per side) for `--method adaptive`.
    #[arg(long, default_value_t = 64)]
    ebpi_resolution: u32,
    /// Sampling directions for `--method adaptive`: the axes of A's frame, or the rotation
    /// minimising the normal-orthogonality energy of Wang–Faure–Pai 2012 Eq. 12 (see
    /// docs/algorithms.md: on box pairs it casts more rays, not fewer).
    #[arg(long, value_enum, default_value_t = ViewArg::Axes)]
    view: ViewArg,
    /// Cast the uniform rays on the GPU (wgpu compute; lines too close to call in `f32` are
    /// recast exactly on the CPU, so the answer equals the CPU's).
    #[arg(long)]
    gpu: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// Sampling directions of the adaptive method.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ViewArg {
    /// The axes of A's frame.
    Axes,
    /// Optimised by Eq. 12.
    Optimised,
}

/// How the volume is sampled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum VolumeMethodArg {
    /// A uniform grid of rays per axis (Eq. 1).
    Uniform,
    /// Adaptive tiles from the Error Bound Polynomial Image, honouring `--tolerance` (§3–5).
    Adaptive,
    /// The volume alone (no forces), from a uniform grid on the longest axis of the overlap box
    /// (or of the box `--fit` finds), refined to `--tolerance` when given.
    OneAxis,
    /// The exact volume and its gradient from the surfaces, with one contact point and normal
    /// per connected contact region (no sampling options apply).
    Exact,
}

fn parse_tolerance(text: &str) -> Result<Tolerance, String> {
    let (number, absolute) = match text.strip_suffix("abs") {
        Some(n) => (n, true),
        None => (text, false),
    };
    let v: f64 = number.trim().parse().map_err(|_| {
        format!("--tolerance: '{text}' is not a number (optionally ending in 'abs')")
    })?;
    if !(v.is_finite() && v > 0.0) {
        return Err(format!("--tolerance: {v} must be positive"));
    }
    Ok(if absolute {
        Tolerance::Absolute(v)
    } else {
        Tolerance::Relative(v)
    })
}

#[derive(Serialize)]
struct Wrench {
    force: [f64; 3],
    torque: [f64; 3],
}

#[derive(Serialize)]
struct Report {
    a: String,
    b: String,
    method: &'static str,
    volume: f64,
    /// The absolute tolerance asked for and the error bound reached (adaptive only).
    tolerance: Option<f64>,
    error_bound: Option<f64>,
    /// The uniform sampler's estimate of its error (one standard deviation; not a bound).
    estimated_error: Option<f64>,
    /// Whether twice the estimated error met the tolerance (one-axis with a tolerance only).
    tolerance_met: Option<bool>,
    /// The axis sampled and its final resolution (one-axis only).
    axis: Option<usize>,
    resolution: Option<u32>,
    /// Volume estimate per axis (not with one-axis).
    axis_volumes: Option<[f64; 3]>,
    rays: usize,
    /// Forces and torques (not with one-axis).
    on_a: Option<Wrench>,
    on_b: Option<Wrench>,
    timings_ms: Timings,
}

fn solid(path: &std::path::Path) -> Result<Solid, String> {
    let mesh = io::load_mesh(path, &MeshOptions::default()).map_err(|e| e.to_string())?;
    Solid::new(mesh).map_err(|e| format!("{}: {e}", path.display()))
}

/// Runs the command.
pub fn run(args: VolumeArgs) -> Result<(), String> {
    let (pose_a, pose_b) = args.meshes.poses()?;
    let t = Instant::now();
    let a = solid(&args.meshes.a)?;
    let b = solid(&args.meshes.b)?;
    let load = ms(t);
    let b_to_a = relative(&pose_a, &pose_b);
    let (r, build, query, tolerance, error_bound) = match args.method {
        VolumeMethodArg::OneAxis => return run_one_axis(&args, &a, &b, &b_to_a, load),
        VolumeMethodArg::Exact => {
            return run_exact(&args, &a, &b, &b_to_a, &pose_a.to_f64(), load);
        }
        VolumeMethodArg::Uniform => {
            let t = Instant::now();
            let sampler = UniformVolume::new(&a, &b);
            let build = ms(t);
            let options = UniformOptions {
                sampling: match (args.spacing, args.fit) {
                    (Some(h), _) => Sampling::Spacing(h),
                    (None, Some(coarse)) => Sampling::Fitted {
                        coarse,
                        resolution: args.resolution,
                    },
                    (None, None) => Sampling::Resolution(args.resolution),
                },
                centre: DVec3::ZERO,
                collect_points: false,
                ..UniformOptions::default()
            };
            let t = Instant::now();
            let r = if args.gpu {
                use interfere_gpu::{GpuContext, GpuVolume};
                let ctx = GpuContext::headless().map_err(|e| e.to_string())?;
                let mut gpu = GpuVolume::new(&ctx).map_err(|e| e.to_string())?;
                let ga = GpuVolume::upload_mesh(&ctx, &a).map_err(|e| e.to_string())?;
                let gb = GpuVolume::upload_mesh(&ctx, &b).map_err(|e| e.to_string())?;
                gpu.compute(&ctx, &ga, &gb, &b_to_a, &options)
                    .map_err(|e| e.to_string())?
            } else {
                sampler
                    .compute(&b_to_a, &options)
                    .map_err(|e| e.to_string())?
            };
            (r, build, ms(t), None, None)
        }
        VolumeMethodArg::Adaptive if args.gpu => {
            return Err("--gpu is available for --method uniform only".into());
        }
        VolumeMethodArg::Adaptive => {
            let tolerance = parse_tolerance(args.tolerance.as_deref().unwrap_or("0.01"))?;
            let t = Instant::now();
            let sampler = AdaptiveVolume::new(&a, &b);
            let build = ms(t);
            let options = AdaptiveOptions {
                tolerance,
                finest_resolution: args.ebpi_resolution,
                collect_points: false,
                view: match args.view {
                    ViewArg::Axes => ViewDirections::Axes,
                    ViewArg::Optimised => ViewDirections::Optimised,
                },
                ..AdaptiveOptions::default()
            };
            let t = Instant::now();
            let r = sampler
                .compute(&b_to_a, &options)
                .map_err(|e| e.to_string())?;
            let query = ms(t);
            (
                r.result,
                build,
                query,
                Some(r.tolerance),
                Some(r.error_bound),
            )
        }
    };

    // Everything above is in A's frame; wrenches about each body's origin, then to world.
    let wrench = |grads: &[DVec3], points: &mut dyn Iterator<Item = DVec3>, origin: DVec3| {
        let mut f = DVec3::ZERO;
        let mut tq = DVec3::ZERO;
        for (g, p) in grads.iter().zip(points) {
            f -= *g;
            tq -= (p - origin).cross(*g);
        }
        let rot = pose_a.to_f64().rotation;
        Wrench {
            force: (rot * f).to_array(),
            torque: (rot * tq).to_array(),
        }
    };
    let on_a = wrench(
        &r.gradient_a,
        &mut a.mesh().vertices().iter().map(|v| v.as_dvec3()),
        DVec3::ZERO,
    );
    let on_b = wrench(
        &r.gradient_b,
        &mut b
            .mesh()
            .vertices()
            .iter()
            .map(|v| b_to_a.transform_point(*v)),
        b_to_a.translation,
    );
    let report = Report {
        a: args.meshes.a.display().to_string(),
        b: args.meshes.b.display().to_string(),
        method: match (args.method, args.gpu) {
            (VolumeMethodArg::Uniform, false) => "uniform",
            (VolumeMethodArg::Uniform, true) => "uniform-gpu",
            (VolumeMethodArg::Adaptive, _) => "adaptive",
            (VolumeMethodArg::OneAxis, _) => "one-axis",
            (VolumeMethodArg::Exact, _) => "exact",
        },
        volume: r.volume,
        tolerance,
        error_bound,
        estimated_error: r.estimated_error(),
        tolerance_met: None,
        axis: None,
        resolution: None,
        axis_volumes: Some(r.axis_volumes),
        rays: r.ray_count,
        on_a: Some(on_a),
        on_b: Some(on_b),
        timings_ms: Timings { load, build, query },
    };
    if args.json {
        print_json(&report)?;
    } else {
        println!(
            "intersection volume {:.9} ({} rays, {})",
            r.volume, r.ray_count, report.method
        );
        if let (Some(t), Some(e)) = (tolerance, error_bound) {
            println!("  tolerance {t:.3e}, error bound {e:.3e}");
        }
        if let Some(e) = report.estimated_error {
            println!("  estimated sampling error {e:.3e} (one standard deviation, not a bound)");
        }
        println!(
            "  per axis x/y/z: {:.9} {:.9} {:.9}",
            r.axis_volumes[0], r.axis_volumes[1], r.axis_volumes[2]
        );
        for (name, w) in [("A", &report.on_a), ("B", &report.on_b)] {
            let Some(w) = w else { continue };
            println!(
                "  on {name}: force {:?}, torque about its origin {:?}",
                w.force, w.torque
            );
        }
        println!("load {load:.2} ms, build {build:.2} ms, query {query:.3} ms");
    }
    Ok(())
}

/// `--method one-axis`: the volume alone, from one axis (`UniformVolume::volume_only`).
fn run_one_axis(
    args: &VolumeArgs,
    a: &Solid,
    b: &Solid,
    b_to_a: &interfere_geometry::DPose,
    load: f64,
) -> Result<(), String> {
    if args.gpu {
        return Err(
            "--method one-axis runs on the CPU only (--gpu is for --method uniform)".into(),
        );
    }
    if args.spacing.is_some() {
        return Err("--method one-axis takes --resolution, not --spacing".into());
    }
    let relative_tolerance = match args.tolerance.as_deref().map(parse_tolerance).transpose()? {
        None => None,
        Some(Tolerance::Relative(t)) => Some(t),
        Some(Tolerance::Absolute(_)) => {
            return Err(
                "--method one-axis takes a relative --tolerance (a fraction of the intersection volume), not 'abs'"
                    .into(),
            );
        }
    };
    let t = Instant::now();
    let sampler = UniformVolume::new(a, b);
    let build = ms(t);
    let options = VolumeOnlyOptions {
        pilot: args.fit.unwrap_or(0),
        resolution: args.resolution,
        relative_tolerance,
        ..VolumeOnlyOptions::default()
    };
    let t = Instant::now();
    let r = sampler
        .volume_only(b_to_a, &options)
        .map_err(|e| e.to_string())?;
    let query = ms(t);
    let report = Report {
        a: args.meshes.a.display().to_string(),
        b: args.meshes.b.display().to_string(),
        method: "one-axis",
        volume: r.volume,
        tolerance: relative_tolerance,
        error_bound: None,
        estimated_error: Some(r.estimated_error),
        tolerance_met: r.tolerance_met,
        axis: Some(r.axis),
        resolution: Some(r.resolution),
        axis_volumes: None,
        rays: r.ray_count,
        on_a: None,
        on_b: None,
        timings_ms: Timings { load, build, query },
    };
    if args.json {
        return print_json(&report);
    }
    println!(
        "intersection volume {:.9} ({} rays, one-axis: axis {}, {} lines per side, {} passes)",
        r.volume,
        r.ray_count,
        ["x", "y", "z"][r.axis.min(2)],
        r.resolution,
        r.passes
    );
    println!(
        "  estimated sampling error {:.3e} (one standard deviation, not a bound)",
        r.estimated_error
    );
    if let (Some(t), Some(met)) = (relative_tolerance, r.tolerance_met) {
        println!(
            "  relative tolerance {t:.3e}: {}",
            if met {
                "met (twice the estimate is within it)"
            } else {
                "NOT met within the ray limit"
            }
        );
    }
    println!("load {load:.2} ms, build {build:.2} ms, query {query:.3} ms");
    Ok(())
}

#[derive(Serialize)]
struct RegionReport {
    volume: f64,
    /// Contact point and unit normal (from A into B), in world coordinates.
    point: [f64; 3],
    normal: [f64; 3],
    /// Force and torque on B (about the region's point) from this region, in world coordinates.
    force_on_b: [f64; 3],
    torque_on_b: [f64; 3],
    /// Area of B's surface inside A in this region.
    area_b: f64,
}

#[derive(Serialize)]
struct ExactReport {
    a: String,
    b: String,
    method: &'static str,
    volume: f64,
    /// Force and torque on each body about its own origin, in world coordinates.
    on_a: Wrench,
    on_b: Wrench,
    regions: Vec<RegionReport>,
    candidate_pairs: usize,
    crossing_pairs: usize,
    crossing_triangles: [usize; 2],
    inside_triangles: [usize; 2],
    contained_shells: [usize; 2],
    point_tests: usize,
    timings_ms: Timings,
}

/// `--method exact`: the exact volume from the surfaces (`ExactVolume`).
fn run_exact(
    args: &VolumeArgs,
    a: &Solid,
    b: &Solid,
    b_to_a: &interfere_geometry::DPose,
    world_a: &interfere_geometry::DPose,
    load: f64,
) -> Result<(), String> {
    if args.gpu {
        return Err("--method exact runs on the CPU (--gpu is for --method uniform)".into());
    }
    if args.spacing.is_some() || args.fit.is_some() || args.tolerance.is_some() {
        return Err("--method exact is exact: it takes no --spacing, --fit or --tolerance".into());
    }
    let t = Instant::now();
    let exact = ExactVolume::new(a, b);
    exact.prepare(Traversal::Aabb);
    let build = ms(t);
    let t = Instant::now();
    // The torque on B about its own origin (its pose's translation, in A's frame).
    let options = ExactOptions {
        centre: b_to_a.translation,
        collect_pieces: false,
        // Every core: the traversal's node pairs are split over them, with the same result
        // bit for bit as on one.
        threads: 0,
    };
    let r = exact
        .compute_traversing(b_to_a, Traversal::Aabb, &options)
        .map_err(|e| e.to_string())?;
    let query = ms(t);
    let rot = world_a.rotation;
    let world = |v: DVec3| (rot * v).to_array();
    let on_b = Wrench {
        force: world(r.force()),
        torque: world(r.torque()),
    };
    // A's gradient is minus B's about the same point; about A's origin (A's frame origin):
    // torque_A = −torque_B(about c) − (c − 0) × force_B ... with force_A = −force_B.
    let torque_a = -(r.torque() + b_to_a.translation.cross(r.force()));
    let on_a = Wrench {
        force: world(-r.force()),
        torque: world(torque_a),
    };
    let regions = r
        .regions
        .iter()
        .map(|g| RegionReport {
            volume: g.volume,
            point: world_a.transform_dpoint(g.point).to_array(),
            normal: world(g.normal),
            force_on_b: world(-g.translation_gradient),
            torque_on_b: world(-g.rotation_gradient),
            area_b: g.area_b,
        })
        .collect();
    let report = ExactReport {
        a: args.meshes.a.display().to_string(),
        b: args.meshes.b.display().to_string(),
        method: "exact",
        volume: r.volume,
        on_a,
        on_b,
        regions,
        candidate_pairs: r.candidate_pairs,
        crossing_pairs: r.crossing_pairs,
        crossing_triangles: r.crossing_triangles,
        inside_triangles: r.inside_triangles,
        contained_shells: r.contained_shells,
        point_tests: r.point_tests,
        timings_ms: Timings { load, build, query },
    };
    if args.json {
        return print_json(&report);
    }
    println!("intersection volume {:.12} (exact)", r.volume);
    println!(
        "  {} candidate pairs, {} crossing; crossing triangles A/B {}/{}, inside {}/{}, contained shells {}/{}",
        r.candidate_pairs,
        r.crossing_pairs,
        r.crossing_triangles[0],
        r.crossing_triangles[1],
        r.inside_triangles[0],
        r.inside_triangles[1],
        r.contained_shells[0],
        r.contained_shells[1]
    );
    for (name, w) in [("A", &report.on_a), ("B", &report.on_b)] {
        println!(
            "  on {name}: force {:?}, torque about its origin {:?}",
            w.force, w.torque
        );
    }
    for (i, g) in report.regions.iter().enumerate() {
        println!(
            "  region {i}: volume {:.9}, point {:?}, normal {:?}, force on B {:?}",
            g.volume, g.point, g.normal, g.force_on_b
        );
    }
    println!("load {load:.2} ms, build {build:.2} ms, query {query:.3} ms");
    Ok(())
}

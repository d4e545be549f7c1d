//! `interfere check`: do two meshes interfere at the given poses?
//!
//! Loads both files (OBJ or STL), places them with `--pose-a` / `--pose-b`, runs the chosen
//! traversal (OBBTree, balanced AABB tree depth-first, or its breadth-first level-synchronous
//! form) with the exact triangle test at the leaves, and falls back to point-in-solid when no
//! triangle pair crosses, so a solid nested in another is reported as interference.

use crate::output::{Timings, ms, print_json};
use crate::pose_arg::PosedMeshPair;
use clap::{Args, ValueEnum};
use interfere_geometry::Containment;
use interfere_geometry::interference::{MeshQueries, Method};
use interfere_geometry::{MeshOptions, Pose, io};
use serde::Serialize;
use std::time::Instant;

/// Arguments of `interfere check`.
#[derive(Args)]
pub struct CheckArgs {
    #[command(flatten)]
    meshes: PosedMeshPair,
    /// Which hierarchy and traversal to use.
    #[arg(long, value_enum, default_value_t = MethodArg::Aabb)]
    method: MethodArg,
    /// Report every intersecting triangle pair, not just the first.
    #[arg(long)]
    all_pairs: bool,
    /// Image resolution of `--method cinder` (pixels per side of the overlap region).
    #[arg(long, default_value_t = 512)]
    resolution: u32,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// CInDeR on the two meshes placed in world space: whether they interfere.
fn cinder_interferes(
    a: &MeshQueries,
    b: &MeshQueries,
    pose_a: &Pose,
    pose_b: &Pose,
    resolution: u32,
) -> Result<bool, String> {
    use interfere_gpu::{Cinder, CinderObject, GpuContext};
    let object = |c: &MeshQueries, pose: &Pose| CinderObject {
        vertices: c
            .mesh()
            .vertices()
            .iter()
            .map(|v| pose.transform_point(*v).to_array())
            .collect(),
        triangles: c.mesh().triangles().to_vec(),
    };
    let ctx = GpuContext::headless().map_err(|e| e.to_string())?;
    let cinder = Cinder::new(&ctx);
    let pairs = cinder
        .interfering_pairs(&ctx, &[object(a, pose_a), object(b, pose_b)], resolution)
        .map_err(|e| e.to_string())?;
    Ok(!pairs.is_empty())
}

/// The traversal to run.
#[derive(Clone, Copy, ValueEnum)]
pub enum MethodArg {
    /// OBBTree (Gottschalk–Lin–Manocha), depth-first.
    Obb,
    /// Balanced AABB tree (Greß–Zachmann), depth-first with SAT-lite.
    Aabb,
    /// Balanced AABB tree, breadth-first level-synchronous (the GPU's schedule, on the CPU).
    Bfs,
    /// Every triangle pair (the oracle; slow).
    Brute,
    /// Balanced AABB tree traversed breadth-first on the GPU (wgpu compute), exact triangle
    /// tests on the CPU.
    #[value(alias = "gpu-bvh")]
    Gpu,
    /// CInDeR image-space stencil test on the GPU (Knott & Pai 2003): a boolean per object pair,
    /// no triangle pairs; misses overlaps thinner than a pixel of `--resolution`.
    Cinder,
}

impl MethodArg {
    /// The CPU method, or `None` for the GPU path.
    fn cpu(self) -> Option<Method> {
        match self {
            MethodArg::Obb => Some(Method::Obb),
            MethodArg::Aabb => Some(Method::Aabb),
            MethodArg::Bfs => Some(Method::Bfs),
            MethodArg::Brute => Some(Method::Brute),
            MethodArg::Gpu | MethodArg::Cinder => None,
        }
    }
}

/// Intersecting triangle pairs from the GPU traversal (Greß–Zachmann, f32 leaf tests with a
/// conservative epsilon on the GPU), filtered by the exact test on the CPU.
fn gpu_pairs(
    a: &MeshQueries,
    b: &MeshQueries,
    b_to_a: &interfere_geometry::DPose,
    all_pairs: bool,
) -> Result<Vec<(u32, u32)>, String> {
    use interfere_gpu::tri_tri::exact_filter;
    use interfere_gpu::{GpuContext, GpuMeshSet, GpuTriangleTraversal, ObjectPair};
    let ctx = GpuContext::headless().map_err(|e| e.to_string())?;
    let set = GpuMeshSet::upload(
        &ctx,
        &[(a.mesh(), a.balanced_tree()), (b.mesh(), b.balanced_tree())],
    )
    .map_err(|e| e.to_string())?;
    let found = GpuTriangleTraversal::new(&ctx)
        .triangle_pairs(
            &ctx,
            &set,
            &[ObjectPair {
                a: 0,
                b: 1,
                b_to_a: *b_to_a,
            }],
            1 << 26,
            None,
        )
        .map_err(|e| e.to_string())?;
    let mut pairs = exact_filter(a.mesh(), b.mesh(), b_to_a, &found.of(0));
    if !all_pairs {
        pairs.truncate(1);
    }
    Ok(pairs)
}

#[derive(Serialize)]
struct Report {
    a: String,
    b: String,
    method: &'static str,
    intersecting: bool,
    contained: Option<&'static str>,
    containment_note: Option<String>,
    pair_count: usize,
    pairs: Vec<(u32, u32)>,
    triangles_a: usize,
    triangles_b: usize,
    timings_ms: Timings,
}

/// Runs the command; the error names the file or argument at fault.
pub fn run(args: CheckArgs) -> Result<(), String> {
    let (pose_a, pose_b) = args.meshes.poses()?;
    let t = Instant::now();
    let opts = MeshOptions::default();
    let mesh_a = io::load_mesh(&args.meshes.a, &opts).map_err(|e| e.to_string())?;
    let mesh_b = io::load_mesh(&args.meshes.b, &opts).map_err(|e| e.to_string())?;
    let load = ms(t);
    let method = args.method.cpu();
    let t = Instant::now();
    let a = MeshQueries::new(mesh_a);
    let b = MeshQueries::new(mesh_b);
    let prepared = method.unwrap_or(Method::Bfs);
    a.prepare(prepared);
    b.prepare(prepared);
    let build = ms(t);
    let b_to_a = relative(&pose_a, &pose_b);
    let t = Instant::now();
    let result = match method {
        Some(m) => a
            .interference(&b, &b_to_a, m, args.all_pairs)
            .map_err(|e| e.to_string())?,
        None if matches!(args.method, MethodArg::Cinder) => {
            let hit = cinder_interferes(&a, &b, &pose_a, &pose_b, args.resolution)?;
            interfere_geometry::Interference {
                intersecting: hit,
                containment_note: Some(
                    "cinder reports interfering object pairs only: no triangle pairs, nesting \
                     included in the boolean"
                        .into(),
                ),
                ..Default::default()
            }
        }
        None => {
            let pairs = gpu_pairs(&a, &b, &b_to_a, args.all_pairs)?;
            a.complete(&b, &b_to_a, pairs)
        }
    };
    let query = ms(t);
    let report = Report {
        a: args.meshes.a.display().to_string(),
        b: args.meshes.b.display().to_string(),
        method: match args.method {
            MethodArg::Cinder => "cinder",
            MethodArg::Gpu => "gpu",
            _ => method.map_or("gpu", Method::name),
        },
        intersecting: result.intersecting,
        contained: result.contained.map(|c| match c {
            Containment::AInsideB => "a_inside_b",
            Containment::BInsideA => "b_inside_a",
            Containment::ComponentsNested => "components_nested",
        }),
        containment_note: result.containment_note.clone(),
        pair_count: result.pairs.len(),
        pairs: result.pairs,
        triangles_a: a.mesh().triangle_count(),
        triangles_b: b.mesh().triangle_count(),
        timings_ms: Timings { load, build, query },
    };
    if args.json {
        print_json(&report)?;
    } else {
        println!(
            "{} ({} triangles) vs {} ({} triangles), method {}",
            report.a, report.triangles_a, report.b, report.triangles_b, report.method
        );
        let verdict = if report.intersecting {
            "INTERSECTING"
        } else {
            "separate"
        };
        println!("{verdict}");
        if let Some(c) = report.contained {
            println!("containment: {c}");
        }
        if let Some(note) = &report.containment_note {
            println!("note: {note}");
        }
        if args.all_pairs {
            println!("{} intersecting triangle pairs", report.pair_count);
            for (ta, tb) in report.pairs.iter().take(20) {
                println!("  a#{ta} b#{tb}");
            }
            if report.pair_count > 20 {
                println!("  ... (use --json for all)");
            }
        }
        println!(
            "load {:.2} ms, build {:.2} ms, query {:.3} ms",
            load, build, query
        );
    }
    Ok(())
}

/// B's frame mapped into A's, in f64 (the frame every exact test runs in).
pub fn relative(pose_a: &Pose, pose_b: &Pose) -> interfere_geometry::DPose {
    pose_a.to_f64().inverse().mul(&pose_b.to_f64())
}

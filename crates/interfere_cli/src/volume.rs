//! `interfere volume`: the intersection volume of two closed meshes and the generalized force
//! it implies (Wang, Faure & Pai 2012, §2.2, Eq. 1–2), by uniform parallel-ray sampling along
//! three axes on the CPU.
//!
//! Forces are `-∂V/∂x`: on each body, the force pushing it out of the other, and the torque
//! about the body's own origin (its pose's translation), both in world coordinates.

use crate::check::relative;
use crate::output::{Timings, ms, print_json};
use crate::pose_arg::MeshPair;
use clap::Args;
use interfere_geometry::glam::DVec3;
use interfere_geometry::volume::{Sampling, UniformOptions, UniformVolume};
use interfere_geometry::{MeshOptions, Solid, io};
use serde::Serialize;
use std::time::Instant;

/// Arguments of `interfere volume`.
#[derive(Args)]
pub struct VolumeArgs {
    #[command(flatten)]
    meshes: MeshPair,
    /// Rays per side of the overlap box, per axis.
    #[arg(long, default_value_t = 64)]
    resolution: u32,
    /// Ray spacing in world units (a lattice fixed in A's frame); overrides --resolution.
    #[arg(long)]
    spacing: Option<f64>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
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
    axis_volumes: [f64; 3],
    rays: usize,
    on_a: Wrench,
    on_b: Wrench,
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
    let t = Instant::now();
    let sampler = UniformVolume::new(&a, &b);
    let build = ms(t);
    let b_to_a = relative(&pose_a, &pose_b);
    let options = UniformOptions {
        sampling: match args.spacing {
            Some(h) => Sampling::Spacing(h),
            None => Sampling::Resolution(args.resolution),
        },
        centre: DVec3::ZERO,
        collect_points: false,
        ..UniformOptions::default()
    };
    let t = Instant::now();
    let r = sampler
        .compute(&b_to_a, &options)
        .map_err(|e| e.to_string())?;
    let query = ms(t);

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
        method: "uniform",
        volume: r.volume,
        axis_volumes: r.axis_volumes,
        rays: r.ray_count,
        on_a,
        on_b,
        timings_ms: Timings { load, build, query },
    };
    if args.json {
        print_json(&report)?;
    } else {
        println!(
            "intersection volume {:.9} ({} rays, uniform)",
            r.volume, r.ray_count
        );
        println!(
            "  per axis x/y/z: {:.9} {:.9} {:.9}",
            r.axis_volumes[0], r.axis_volumes[1], r.axis_volumes[2]
        );
        for (name, w) in [("A", &report.on_a), ("B", &report.on_b)] {
            println!(
                "  on {name}: force {:?}, torque about its origin {:?}",
                w.force, w.torque
            );
        }
        println!("load {load:.2} ms, build {build:.2} ms, query {query:.3} ms");
    }
    Ok(())
}

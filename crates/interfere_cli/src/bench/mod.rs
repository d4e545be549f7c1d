//! `interfere bench`: the benchmarks that docs/benchmarks.md reports, each comparing against
//! the peer (parry3d 0.31, in-process) or the naive baseline in the same run.

pub mod build;
pub mod coherence;
pub mod faces;
pub mod gpu_job;
pub mod parry_peer;
pub mod sap;
pub mod small_obstacle;

pub mod tumble;
pub mod volume;
pub mod volume_exact;

use clap::Subcommand;

/// The benchmarks.
#[derive(Subcommand)]
pub enum BenchCommand {
    /// Zachmann's tumbling protocol: first-hit and all-pairs per distance, vs parry3d.
    Tumble(tumble::TumbleArgs),
    /// The narrow phase of a resting, sliding and turning pair: the traversal front kept between
    /// steps against the traversal from the roots, same poses, same answers.
    Coherence(coherence::CoherenceArgs),
    /// Sweep-and-prune: incremental frame update vs a full re-sort, for many moving boxes.
    Sap(sap::SapArgs),
    /// Kitamura colliding faces on two converging spheres: serial vs static vs dynamic.
    Faces(faces::FacesArgs),
    /// Intersection volume in the tumbling protocol: the exact volume and its gradient, parry3d's
    /// mesh boolean in the same run, and the uniform sampler's time and error per resolution.
    Volume(volume::VolumeBenchArgs),
    /// Hierarchy build times: OBBTree (one and several threads), balanced AABB tree and
    /// parry3d's BVH on the same mesh.
    Build(build::BuildArgs),
    /// One GPU job per physics step (CInDeR, triangle traversal, every pair's volume in one
    /// submission) against the same work in separate blocking calls.
    GpuJob(gpu_job::GpuJobArgs),
    /// The small-obstacle scene at many random placements: how often adaptive and uniform
    /// sampling of the same ray budget deflect the cube, and its rebound against the ideal
    /// frictionless bounce.
    SmallObstacle(small_obstacle::SmallObstacleArgs),
}

/// The nut-and-bolt demo's M10 × 1.5 bolt (24 mm of thread, 131,456 triangles) and nut (8 mm
/// high, 44,032 triangles), as `bench coherence --bolt` and `bench gpu-job --nut-bolt` use them.
pub(crate) fn m10_bolt_and_nut()
-> Result<(interfere_geometry::Solid, interfere_geometry::Solid), String> {
    use interfere_geometry::threads::{ThreadSpec, bolt, nut};
    let spec = ThreadSpec::M10;
    Ok((
        bolt(&spec, 24.0).map_err(|e| e.to_string())?,
        nut(&spec, 8.0).map_err(|e| e.to_string())?,
    ))
}

/// The pose, in its bolt's frame, of the nut of [`m10_bolt_and_nut`] turned by `theta` (radians)
/// down the 1.5 mm pitch from 8 mm up the thread, 30 µm off the axis.
pub(crate) fn screwed_nut(theta: f64) -> interfere_geometry::DPose {
    use interfere_geometry::glam::{DMat3, DVec3};
    interfere_geometry::DPose {
        rotation: DMat3::from_rotation_z(theta),
        translation: DVec3::new(0.03, 0.0, 8.0 - 1.5 * theta / std::f64::consts::TAU),
    }
}

/// The median of `v` (the upper one of an even count; 0 when empty).
pub(crate) fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Runs a benchmark; `quiet` silences the progress reports on standard error.
pub fn run(cmd: BenchCommand, quiet: bool) -> Result<(), String> {
    match cmd {
        BenchCommand::Build(a) => build::run(a, quiet),
        BenchCommand::Tumble(a) => tumble::run(a, quiet),
        BenchCommand::Sap(a) => sap::run(a),
        BenchCommand::Coherence(a) => coherence::run(a, quiet),
        BenchCommand::Faces(a) => faces::run(a, quiet),
        BenchCommand::Volume(a) => volume::run(a, quiet),
        BenchCommand::GpuJob(a) => gpu_job::run(a),
        BenchCommand::SmallObstacle(a) => small_obstacle::run(a, quiet),
    }
}

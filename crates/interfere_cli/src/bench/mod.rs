//! `interfere bench`: the benchmarks that docs/benchmarks.md reports, each comparing against
//! the peer (parry3d 0.31, in-process) or the naive baseline in the same run.

pub mod faces;
pub mod gpu_job;
pub mod parry_peer;
pub mod sap;

pub mod tumble;
pub mod volume;

use clap::Subcommand;

/// The benchmarks.
#[derive(Subcommand)]
pub enum BenchCommand {
    /// Zachmann's tumbling protocol: first-hit and all-pairs per distance, vs parry3d.
    Tumble(tumble::TumbleArgs),
    /// Sweep-and-prune: incremental frame update vs a full re-sort, for many moving boxes.
    Sap(sap::SapArgs),
    /// Kitamura colliding faces on two converging spheres: serial vs static vs dynamic.
    Faces(faces::FacesArgs),
    /// Intersection volume in the tumbling protocol: time and error per resolution, vs the
    /// exact volume of manifold3d (README figures).
    Volume(volume::VolumeBenchArgs),
    /// One GPU job per physics step (CInDeR, triangle traversal, every pair's volume in one
    /// submission) against the same work in separate blocking calls.
    GpuJob(gpu_job::GpuJobArgs),
}

/// Runs a benchmark.
pub fn run(cmd: BenchCommand) -> Result<(), String> {
    match cmd {
        BenchCommand::Tumble(a) => tumble::run(a),
        BenchCommand::Sap(a) => sap::run(a),
        BenchCommand::Faces(a) => faces::run(a),
        BenchCommand::Volume(a) => volume::run(a),
        BenchCommand::GpuJob(a) => gpu_job::run(a),
    }
}

//! # interfere_gpu
//!
//! GPU kernels for Interfere, written against a plain [`wgpu::Device`] and [`wgpu::Queue`] so that
//! the same code runs in tests, in the `interfere` command-line tool and inside Bevy's render world.
//! Every kernel has a CPU twin in `interfere_geometry` (or in this crate) and a parity test.
//!
//! Start with [`GpuContext::headless`] to get a device without a window; inside Bevy, wrap the
//! render device with [`GpuContext::from_parts`]. For a physics step, [`step_job`] records all of
//! the step's GPU work (CInDeR, the triangle traversal, every pair's volume) into one
//! submission with one readback and answers through non-blocking polls.
#![deny(missing_docs)]

pub mod brute_force;
pub mod bvh_traversal;
pub mod cinder;
mod compute;
pub mod contact_stage;
pub mod context;
pub mod error;
pub mod readback;
pub mod scan;
pub mod shaders;
pub mod step_job;
pub mod testing;
pub mod timing;
pub mod tri_tri;
pub mod volume;

pub use brute_force::GpuBruteForce;
pub use bvh_traversal::{
    GpuBvhTraversal, GpuEntranceLevel, GpuMeshSet, GpuTree, GpuTriangleTraversal, ObjectPair,
    TrianglePair, TrianglePairs,
};
pub use cinder::{
    Cinder, CinderObject, CinderOptions, CinderReport, CinderSceneOptions, CinderSceneReport,
    CinderViews, DEFAULT_EDGE_OFFSET_PIXELS, InterferencePoint, ViewAxis,
};
pub use contact_stage::{
    FinishWork, GpuAnswer, GpuAsyncContacts, GpuBlockingContacts, GpuStageOptions, JobReply,
    JobRequest, JobServer, REUSE_REACH,
};
pub use context::{AdapterSummary, GpuContext};
pub use error::GpuError;
pub use scan::PrefixSum;
pub use step_job::{
    JobCapacities, JobMesh, JobObject, JobStats, JobVolume, PendingJob, ReadyJob, StepJobAnswer,
    StepJobInput, StepJobRunner,
};
pub use timing::{KernelTimes, StageTimings};
pub use volume::{GpuVolume, GpuVolumeMesh, GpuVolumeReport, agrees_with_cpu};

//! Intersection volume of two closed solids by parallel-ray sampling, and its gradient: the CPU
//! reference of the image-based volume contact reviewed in Wang, Faure & Pai 2012, section 2.2
//! (Eq. 1 for the volume, Eq. 2 for its derivative with barycentric weights).
//!
//! * [`ray_bvh`]: all hits of an axis-parallel or general line with a mesh, through a
//!   [`BalancedTree`](crate::bvh::BalancedTree) refitted in `f64`, with an exact, watertight
//!   point-in-triangle test (exact `orient2d` plus a symbolic perturbation of the line), so that
//!   along every line the entering and leaving hits of a closed mesh alternate consistently.
//! * `axis_bins`: per-axis 2D bins of a fixed mesh's projected triangles, giving the same
//!   hits as the tree walk for axis-parallel lines, faster.
//! * [`error_estimate`]: the sampling error of a uniform axis estimate, read off its line
//!   lengths.
//! * [`intervals`]: the depth intervals of a line inside both solids, from its hits.
//! * [`uniform`]: uniform sampling of the overlap of the two bounding boxes with a grid of
//!   parallel rays along each axis; volume, per-vertex gradient of both meshes, generalized force
//!   and torque on B, and surface samples of the intersection region.
//! * [`volume_only`]: the volume alone from one axis's lines (no gradient), in the box a
//!   pilot pass finds, optionally refined to an estimated relative tolerance.
//! * [`exact`]: the exact intersection volume and its gradient from the surfaces (no rays, no
//!   resolution): crossing pairs with symbolically perturbed exact predicates, pieces by their
//!   boundary, flood fill of the triangles inside, the divergence theorem; per contact region.
//! * [`adaptive`]: the adaptive sampling of Wang, Faure & Pai 2012 (sections 3–5): an Error
//!   Bound Polynomial Image, a coarsening pyramid and transient-edge refinement choose one ray
//!   per tile of a non-uniform tiling so that the volume error meets a tolerance.

pub mod adaptive;
mod axis_bins;
pub mod error_estimate;
pub mod exact;
pub mod intervals;
pub mod ray_bvh;
pub mod uniform;
pub mod volume_only;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod volume_only_tests;

pub use adaptive::{
    AdaptiveOptions, AdaptiveResult, AdaptiveVolume, Tolerance, UniformCertificate, ViewDirections,
    adaptive_volume,
};
pub use exact::{
    ContactRegion, ExactOptions, ExactResult, ExactVolume, SurfacePiece, SurfaceTopology,
    Traversal, exact_volume,
};
pub use intervals::{IntervalEnd, IntervalSweep};
pub use ray_bvh::{AxisRay, LineCrossing, RayMesh};
pub use uniform::{
    LineGrid, Sampling, SurfacePoint, UniformOptions, UniformVolume, VolumeResult, uniform_volume,
};
pub use volume_only::{VolumeOnly, VolumeOnlyOptions};

use thiserror::Error;

/// Why a volume query was refused.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum VolumeError {
    /// The resolution (rays per side) is zero.
    #[error("the resolution must be at least 1 ray per side")]
    ZeroResolution,
    /// The ray spacing is not a positive finite number.
    #[error("the ray spacing must be positive and finite, got {0}")]
    InvalidSpacing(f64),
    /// The volume tolerance is not a positive finite number.
    #[error("the volume tolerance must be positive and finite, got {0}")]
    InvalidTolerance(f64),
    /// The relative pose has a NaN or infinite entry.
    #[error("the relative pose has a non-finite entry")]
    NonFinitePose,
    /// The lattice offset of [`Sampling::ShiftedSpacing`] has a NaN or infinite entry.
    #[error("the lattice offset has a non-finite entry")]
    NonFiniteOffset,
    /// The ray origin or direction is not finite, or the direction is zero.
    #[error("the ray needs a finite origin and a finite non-zero direction")]
    InvalidRay,
    /// The sampling would cast more rays than allowed.
    #[error("the sampling needs {rays} rays, more than the limit {limit}")]
    TooManyRays {
        /// Rays the sampling asked for.
        rays: u64,
        /// The limit.
        limit: u64,
    },
    /// The fixed view rotation of an adaptive query is not finite or is zero.
    #[error("the view rotation must be a finite non-zero quaternion")]
    InvalidViewRotation,
    /// A candidate triangle pair names a triangle the mesh does not have.
    #[error(
        "candidate pair {index} is ({}, {}), but the meshes have {} and {} triangles",
        pair.0, pair.1, triangles.0, triangles.1
    )]
    PairOutOfRange {
        /// Its position in the list.
        index: usize,
        /// The pair `(triangle of A, triangle of B)`.
        pair: (u32, u32),
        /// Triangle counts of A and B.
        triangles: (usize, usize),
    },
    /// The candidate pairs miss a pair of triangles that cross: an edge was found crossing a
    /// triangle of the other mesh from one of its two triangles but not from the other. The
    /// candidates must include every pair of triangles that share a point.
    #[error(
        "the candidate pairs are incomplete: an edge of {mesh} crosses a triangle from one of its two triangles only"
    )]
    IncompleteCandidates {
        /// The mesh whose edge it is ("A" or "B").
        mesh: &'static str,
    },
    /// The exact predicates contradicted each other (never expected for finite input).
    #[error("inconsistent exact crossings: {0}")]
    Inconsistent(String),
    /// A tree was built over a different mesh.
    #[error("the tree has {tree} triangles but the mesh has {mesh}")]
    TreeMismatch {
        /// Triangles in the tree.
        tree: usize,
        /// Triangles in the mesh.
        mesh: usize,
    },
}

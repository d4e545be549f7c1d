//! # interfere_geometry
//!
//! CPU geometry for Interfere, with no Bevy and no GPU: triangle meshes and their import and
//! validation, bounding volumes, exact triangle-triangle tests, bounding-volume hierarchies and
//! their traversals, sweep-and-prune, convex hulls with closest features, colliding-face
//! detection, the intersection-volume reference, and primitive colliders (sphere, capsule,
//! cuboid, cylinder, half-space) with closed-form tests and volumes.
//!
//! Every fast path here has an oracle test (brute force, exact predicates or an analytic value),
//! and every GPU kernel in `interfere_gpu` has its CPU twin here.
#![deny(missing_docs)]

pub mod aabb;
pub mod brute_force;
pub mod bvh;
pub mod closest_features;
pub mod containment;
pub mod error;
pub mod hull;
pub mod interference;
pub mod io;
pub mod key_hash;
pub mod kitamura;
pub mod mesh;
pub mod obb;
pub mod parallel;
pub mod pipeline;
pub mod pose;
pub mod primitives;
#[cfg(test)]
mod proptests;
pub mod sap;
pub mod shape_cast;
pub mod shapes;
#[cfg(test)]
mod test_support;
pub mod threads;
pub mod topology;
pub mod tri_tri;
pub mod volume;

pub use aabb::Aabb;
pub use brute_force::{all_pairs_brute, first_hit_brute};
pub use bvh::obbtree::{ObbNode, ObbNodeKind, ObbTree};
pub use bvh::{BalancedTree, FrontStats, SatLite, TraversalFront};
pub use closest_features::{
    ClosestFeatures, ConstraintPlane, Feature, FeatureColor, HullFeatures, Proximity, WalkStats,
    classify, classify_edges, proximity_brute_force,
};
pub use containment::{Containment, PointLocation, containment, locate_point};
pub use error::{LoadError, MeshError, SapError, SaveError, ShapeError};
pub use glam;
pub use hull::{ConvexHull, Hull, HullError, convex_hull};
pub use interference::{Interference, InterferenceError, MeshQueries, Method};
pub use io::{MeshFormat, load_mesh, save_mesh};
pub use kitamura::{Detection, FacePair, KitamuraConfig, MovingMesh};
pub use mesh::{DegeneratePolicy, MeshOptions, TriMesh, ValidationReport};
pub use obb::{Obb, PlacedObb, obb_gap, obb_gap_placed, obb_overlap, obb_overlap_placed};
pub use pipeline::{
    LinManochaPipeline, ObjectId, PairDistance, PipelineError, PipelinePair, StepReport,
};
pub use pose::{DPose, Pose};
pub use primitives::{
    Compound, CompoundPart, CompoundVolumes, PartVolume, PlanarRegion, Primitive, PrimitiveError,
    PrimitiveHit, PrimitiveKind, PrimitiveVolume, PrimitiveVolumeMethod, intersection_volume,
    primitive_solid_intersect, primitive_solid_volume, primitives_intersect,
};
pub use sap::{PairTracking, ProxyId, SweepAndPrune, UpdateStats};
pub use topology::{Edge, Solid, Topology};
pub use tri_tri::{segment_intersects_triangle, triangles_intersect};
pub use volume::{
    AdaptiveOptions, AdaptiveResult, AdaptiveVolume, ContactRegion, ExactOptions, ExactResult,
    ExactVolume, Sampling, SurfacePiece, SurfaceTopology, Tolerance, Traversal, UniformOptions,
    UniformVolume, VolumeError, VolumeOnly, VolumeOnlyOptions, VolumeResult, adaptive_volume,
    exact_volume, uniform_volume,
};

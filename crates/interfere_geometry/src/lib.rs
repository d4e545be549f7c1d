//! # interfere_geometry
//!
//! CPU geometry for Interfere, with no Bevy and no GPU: triangle meshes and their import and
//! validation, bounding volumes, exact triangle-triangle tests, bounding-volume hierarchies and
//! their traversals, sweep-and-prune, convex hulls with closest features, colliding-face
//! detection and the intersection-volume reference.
//!
//! Every fast path here has an oracle test (brute force, exact predicates or an analytic value),
//! and every GPU kernel in `interfere_gpu` has its CPU twin here.
#![deny(missing_docs)]

pub mod aabb;
pub mod error;
pub mod io;
pub mod mesh;
pub mod pose;
pub mod sap;
pub mod shapes;
pub mod threads;
pub mod topology;

pub use aabb::Aabb;
pub use error::{LoadError, MeshError, SapError, SaveError};
pub use glam;
pub use io::{MeshFormat, load_mesh, save_mesh};
pub use mesh::{DegeneratePolicy, MeshOptions, TriMesh, ValidationReport};
pub use pose::{DPose, Pose};
pub use sap::{PairTracking, ProxyId, SweepAndPrune, UpdateStats};
pub use topology::{Edge, Solid, Topology};

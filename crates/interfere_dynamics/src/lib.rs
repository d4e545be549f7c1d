//! # interfere_dynamics
//!
//! The rigid-body side of Interfere, with no Bevy and no GPU: the whole physics step that the
//! Bevy plugin, scene files and `interfere simulate` share ([`Simulation`]): bodies with
//! colliders ([`collider`]), the broad phase ([`broad_phase`]), the replaceable contact stage
//! ([`stage`]: narrow phase in [`narrow_phase`], volume contacts in [`volume_stage`]), the
//! sequential-impulse solver with volume contacts ([`solver`]) over the core [`World`], and
//! sleeping ([`sleeping`]); spatial queries (rays, points, shapes, boxes) over its current state
//! are in [`query`]. Mass properties of closed meshes are in [`mass`], the analytic
//! contact sources the solver is tested with in [`contact`], scene files in [`scene`].
//!
//! The contact response follows Lin–Manocha 1996 §5 (an impulse per contact) and the volume
//! contacts of Wang–Faure–Pai 2012 §2.2 and §7 (Signorini constraints on the intersection
//! volume, impulses with post-stabilization).
#![deny(missing_docs)]

pub mod bench;
pub mod body;
pub mod broad_phase;
pub mod collider;
pub mod contact;
pub mod cpu_stage;
pub mod exact_split;
pub mod forces;
#[cfg(test)]
mod forces_tests;
pub mod latent;
pub mod margin;
pub mod mass;
#[cfg(test)]
mod mesh_compound_tests;
pub mod mesh_plane;
pub mod mesh_volume;
pub mod narrow_phase;
pub mod parallel;
pub mod primitive_contact;
#[cfg(test)]
mod primitive_tests;
pub mod progress;
pub mod query;
#[cfg(test)]
mod query_tests;
pub mod scene;
pub mod simulation;
#[cfg(test)]
mod simulation_tests;
pub mod sleeping;
pub mod small_obstacle;
pub mod solver;
pub mod stage;
pub mod stats;
#[cfg(test)]
mod test_bodies;
pub mod volume_stage;
pub mod world;

pub use bench::bench_boxes;
pub use body::{BodyError, BodyKind, LockedAxes, Material, RigidBody};
pub use collider::{
    Collider, CollisionLayers, CompoundShape, HalfSpace, MeshPart, MeshShape, PrimitiveShape,
    Shape, TESSELLATION_TOLERANCE,
};
pub use contact::{
    BodyId, ContactSource, Contacts, HalfSpaceSource, HalfSpaceVolumeSource, Plane, PointContact,
    SphereSource, VolumeContact, VolumePart, volume_below_plane, volume_below_plane_split,
};
pub use cpu_stage::CpuContacts;
pub use interfere_geometry::{Compound, CompoundPart, Primitive, PrimitiveError};
pub use mass::{MassError, MassProperties, mass_properties, mass_properties_of_surface};
pub use mesh_volume::{
    AdaptiveSample, AdaptiveSampling, MeshSpacing, MeshVolumePart, overlap_box_volume,
    split_adaptive_volume, split_mesh_volume,
};
pub use narrow_phase::CpuNarrowPhase;
pub use query::{QueryFilter, RayHit};
pub use scene::{
    AdaptiveSpec, BodySpec, BuiltScene, KindSpec, PrimitiveSpec, Scene, SceneError, ShapeSpec,
};
pub use simulation::{BodyHandle, CollisionEvent, Simulation, SimulationError, SimulationSettings};
pub use sleeping::SleepSettings;
pub use solver::{Solver, SolverSettings};
pub use stage::{
    ContactSettings, ContactStage, InterferingPair, NarrowPhase, PairContact, StageError,
    StageInput, StageOutput, StageReport, VolumeMethod, VolumeStage,
};
pub use stats::StepStats;
pub use volume_stage::CpuVolumeStage;
pub use world::{World, WorldError, WorldSettings};

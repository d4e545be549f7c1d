//! # interfere_dynamics
//!
//! The rigid-body core of Interfere, with no Bevy: mass properties of closed meshes
//! ([`mass`]), rigid bodies ([`body`]), contacts and contact sources ([`contact`]),
//! mesh–mesh volume contacts ([`mesh_volume`]), a
//! sequential-impulse solver with friction, restitution, volume contacts and post-stabilization
//! ([`solver`]) and the fixed-step world ([`world`]).
//!
//! The contact response follows Lin–Manocha 1996 §5 (an impulse per contact) and the volume
//! contacts of Wang–Faure–Pai 2012 §2.2 and §7 (Signorini constraints on the intersection
//! volume, impulses with post-stabilization).
#![deny(missing_docs)]

pub mod bench;
pub mod body;
pub mod contact;
pub mod mass;
pub mod mesh_volume;
pub mod progress;
pub mod scene;
pub mod solver;
pub mod world;

pub use bench::bench_boxes;
pub use body::{BodyError, BodyKind, Material, RigidBody};
pub use contact::{
    BodyId, ContactSource, Contacts, HalfSpaceSource, HalfSpaceVolumeSource, Plane, PointContact,
    SphereSource, VolumeContact, VolumePart, volume_below_plane, volume_below_plane_split,
};
pub use mass::{MassError, MassProperties, mass_properties, mass_properties_of_surface};
pub use mesh_volume::{
    AdaptiveSample, AdaptiveSampling, ContactSampling, MeshSpacing, MeshVolumePart,
    MeshVolumeSource, MeshVolumeStats, overlap_box_volume, split_adaptive_volume,
    split_mesh_volume,
};
pub use scene::{AdaptiveSpec, BuiltScene, Scene, SceneError};
pub use solver::{Solver, SolverSettings};
pub use world::{World, WorldError, WorldSettings};

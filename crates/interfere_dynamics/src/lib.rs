//! # interfere_dynamics
//!
//! The rigid-body side of Interfere, with no Bevy and no GPU: the whole physics step that the
//! Bevy plugin, scene files and `interfere simulate` share ([`Simulation`]). The folders follow
//! the step:
//!
//! - `body/`: bodies ([`Body`]: state, material, locks, the forces and impulses queued on them)
//!   and their mass properties;
//! - `collision/`: what a body collides with ([`BodyShape`], [`Shape`]) and which bodies may touch:
//!   the broad phase (sweep and prune with speculative margins);
//! - `contact/`: which pairs touch and their contact: the replaceable contact stage's traits
//!   ([`ContactStage`], [`NarrowPhase`], [`VolumeStage`]), the CPU narrow phase with the
//!   closed-form primitive pairs, the CPU volume stage, latent contacts from an earlier step, the
//!   contacts the solver takes ([`VolumeContact`], [`PointContact`]) and `contact/parts/`, which
//!   splits a pair's intersection volume into the parts of its manifold (exact, ray-sampled,
//!   half-space);
//! - `solver/`: the integrator (substeps, gravity, integration), the
//!   sequential-impulse rows ([`Solver`]) and sleeping;
//! - `scene/`: scene files (schema, validation, building a [`Simulation`]);
//! - `simulation/`: the [`Simulation`] that runs the step, with the game's driving controls
//!   (forces, impulses, damping, locks) set through it by handle;
//! - `query/`: rays, points, shapes and boxes against the current state ([`QueryFilter`],
//!   [`RayHit`]), and capsule casts ([`Simulation::cast_capsule`]);
//! - `character/`: the kinematic character controller ([`CharacterController`],
//!   [`Simulation::move_character`]): move-and-slide, steps, slopes, snapping, pushing.
//!
//! The contact response follows Lin–Manocha 1996 §5 (an impulse per contact) and the volume
//! contacts of Wang–Faure–Pai 2012 §2.2 and §7 (Signorini constraints on the intersection
//! volume, impulses with post-stabilization).
#![deny(missing_docs)]

pub(crate) mod body;
pub(crate) mod character;
pub(crate) mod collision;
pub(crate) mod contact;
pub(crate) mod joint;
pub(crate) mod parallel;
pub(crate) mod query;
pub(crate) mod scene;
pub(crate) mod simulation;
pub(crate) mod solver;
pub(crate) mod stats;
#[cfg(test)]
mod tests;

pub use body::mass::{MassError, MassProperties, mass_properties, mass_properties_of_surface};
pub use body::{Body, BodyError, BodyKind, LockedAxes, Material};
pub use collision::shape::{
    BodyShape, CollisionLayers, CompoundShape, HalfSpace, MeshPart, MeshShape, PrimitiveShape,
    Shape, TESSELLATION_TOLERANCE,
};
pub use contact::cpu_stage::CpuContacts;
pub use contact::narrow_phase::{CpuNarrowPhase, exact_pair};
pub use contact::overrides::PairOverride;
pub use contact::parts::sampled::{
    AdaptiveSample, AdaptiveSampling, MeshSpacing, MeshVolumePart, overlap_box_volume,
    split_adaptive_volume, split_mesh_volume,
};
pub use contact::speculative::{LookAhead, add_speculative_contacts};
pub use contact::stage::{
    ContactSettings, ContactStage, InterferingPair, NarrowPhase, PairContact, StageError,
    StageInput, StageOutput, StageReport, VolumeMethod, VolumeStage,
};
pub use contact::volume_stage::{
    CpuVolumeStage, fill_from_sampled, pair_contact, sampled_volume, spacing_for,
};
pub use contact::{
    BodyId, Contacts, PointContact, VolumeContact, VolumePart, volume_below_plane,
    volume_below_plane_split,
};
// The analytic contact sources are test fixtures: games and tools step a `Simulation` (one
// stepping API); the tests also drive the integrator (`solver::integrator`) with these.
pub use character::{
    CharacterCollision, CharacterController, CharacterError, CharacterGround, CharacterMove,
};
#[cfg(test)]
pub(crate) use contact::analytic::{HalfSpaceSource, HalfSpaceVolumeSource, Plane, SphereSource};
pub use interfere_geometry::{Compound, CompoundPart, Primitive, PrimitiveError};
pub use joint::{
    Joint, JointCompliance, JointError, JointFrame, JointHandle, JointKind, JointLimit, JointMotor,
    JointState,
};
pub use query::capsule_cast::{Capsule, CapsuleContact, CapsuleHit};
pub use query::{QueryFilter, RayHit};
pub use scene::{
    AdaptiveSpec, BodySpec, BuiltScene, CharacterSpec, ContactSpec, KindSpec, PrimitiveSpec, Scene,
    SceneCharacter, SceneError, ShapeSpec, VolumeMethodSpec,
};
pub use simulation::hooks::{ContactHook, HookedPair};
pub use simulation::{BodyHandle, CollisionEvent, Simulation, SimulationError, SimulationSettings};
pub use solver::integrator::{StepSettings, StepSettingsError};
pub use solver::sleeping::SleepSettings;
pub use solver::{Solver, SolverSettings};
pub use stats::StepStats;

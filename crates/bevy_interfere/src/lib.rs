//! # bevy_interfere
//!
//! The Bevy plugin for Interfere: closed triangle meshes as colliders, exact interference
//! detection (on the CPU with OBBTrees, on the GPU with CInDeR), intersection-volume contacts and
//! a rigid-body solver, with messages for the game and a debug overlay.
//!
//! ```no_run
//! use bevy::prelude::*;
//! use bevy_interfere::prelude::*;
//!
//! fn setup(mut commands: Commands) {
//!     commands.spawn((RigidBody::Static, Collider::cuboid(Vec3::new(5.0, 0.5, 5.0))));
//!     commands.spawn((
//!         RigidBody::Dynamic,
//!         Collider::icosphere(0.5, 2),
//!         Transform::from_xyz(0.0, 3.0, 0.0),
//!     ));
//! }
//!
//! App::new()
//!     .add_plugins((MinimalPlugins, bevy::asset::AssetPlugin::default()))
//!     .init_asset::<Mesh>()
//!     .add_plugins(InterferePlugins)
//!     .add_systems(Startup, setup)
//!     .run();
//! ```
//!
//! The plugin is a thin mirror of `interfere_dynamics::Simulation` (the same step scene files and
//! the `interfere` command run): it runs in `FixedPostUpdate` (configurable) in the
//! [`InterfereSystems`] sets, in order: prepare (colliders, ECS → simulation), step, writeback
//! (simulation → ECS, messages). Systems query the simulation through [`SpatialQuery`] (rays,
//! points, shapes, boxes). See `docs/user-guide.md` for a walk-through.
#![deny(missing_docs)]

pub mod character;
pub mod collider;
pub mod components;
pub mod debug_gizmos;
mod forces;
#[cfg(feature = "gpu")]
pub mod gpu_backend;
pub mod interpolation;
pub mod joints;
pub mod layers;
pub mod mesh_convert;
pub mod messages;
#[cfg(feature = "overlay")]
pub mod overlay;
pub mod settings;
pub mod spatial_query;
pub mod step;
mod sync;
pub mod world;
mod writeback;

pub use character::{Character, CharacterContact, CharacterOutput, CharacterPlugin};
pub use collider::{Collider, ColliderError, ColliderShape, ColliderSource};
pub use components::{
    AngularDamping, AngularVelocity, Density, ExternalAngularImpulse, ExternalForce,
    ExternalImpulse, ExternalTorque, Friction, GravityScale, LinearDamping, LinearVelocity,
    LockedAxes, Mass, MaxAngularSpeed, MaxLinearSpeed, NeverSleep, Parked, Restitution, RigidBody,
    Sleeping,
};
pub use debug_gizmos::{InterfereDebugPlugin, InterfereGizmos};
#[cfg(feature = "gpu")]
pub use gpu_backend::{
    GpuBackendPlugin, GpuJobDevice, GpuSettings, GpuSupport, InterfereGpuContext,
};
/// Sleeping thresholds ([`PhysicsSettings::sleep`]).
pub use interfere_dynamics::SleepSettings;
/// The solver's iterations, slops and thresholds ([`PhysicsSettings::solver`]).
pub use interfere_dynamics::SolverSettings;
/// How pair volumes are computed, and the ray-sampling parameters
/// ([`PhysicsSettings::volume`]).
pub use interfere_dynamics::{AdaptiveSampling, MeshSpacing, VolumeMethod};
/// A volume error tolerance, absolute or relative ([`AdaptiveSampling::tolerance`]).
pub use interfere_geometry::Tolerance;
pub use interpolation::{InterpolationPlugin, InterpolationState, TransformInterpolation};
pub use joints::{
    DistanceJoint, FixedJoint, JointBroken, JointComponent, JointEnds, JointForces, JointPlugin,
    PrismaticJoint, RevoluteJoint, SphericalJoint,
};
pub use layers::{CollisionLayers, LayerMask, Sensor};
pub use messages::{
    CollisionEnded, CollisionStarted, ContactMessage, ContactPoint, IntersectionVolumeMessage,
};
#[cfg(feature = "overlay")]
pub use overlay::{InterfereOverlayPlugin, OverlayState};
pub use settings::{Backend, ColliderPreparation, PhysicsSettings, PhysicsStats};
pub use spatial_query::{RayHitData, ShapeHitData, SpatialQuery, SpatialQueryFilter};
pub use step::ContactBackends;
pub use world::PhysicsWorld;

use bevy::app::PluginGroupBuilder;
use bevy::ecs::schedule::{InternedScheduleLabel, ScheduleLabel};
use bevy::prelude::*;

/// What a game usually imports.
pub mod prelude {
    pub use crate::{
        AngularDamping, ExternalAngularImpulse, ExternalForce, ExternalImpulse, ExternalTorque,
        GravityScale, LinearDamping, LockedAxes, MaxAngularSpeed, MaxLinearSpeed,
    };
    pub use crate::{
        AngularVelocity, Backend, Collider, ColliderPreparation, CollisionEnded, CollisionStarted,
        ContactMessage, Density, Friction, InterfereDebugPlugin, InterfereGizmos, InterferePlugins,
        InterfereSystems, IntersectionVolumeMessage, LinearVelocity, Mass, NeverSleep, Parked,
        PhysicsPlugin, PhysicsSettings, PhysicsStats, Restitution, RigidBody, Sleeping,
        SolverSettings,
    };
    pub use crate::{Character, CharacterContact, CharacterOutput, CharacterPlugin};
    pub use crate::{
        CollisionLayers, LayerMask, RayHitData, Sensor, ShapeHitData, SpatialQuery,
        SpatialQueryFilter,
    };
    pub use crate::{
        DistanceJoint, FixedJoint, JointBroken, JointForces, JointPlugin, PrismaticJoint,
        RevoluteJoint, SphericalJoint,
    };
    pub use crate::{InterpolationPlugin, TransformInterpolation};
    pub use interfere_dynamics::CharacterController;
    pub use interfere_dynamics::{AdaptiveSampling, MeshSpacing, SleepSettings, VolumeMethod};
    pub use interfere_dynamics::{ContactHook, HookedPair, JointCompliance, JointMotor};
}

/// The stages of a fixed step, in order.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InterfereSystems {
    /// Colliders prepared, the ECS mirrored into the simulation.
    Prepare,
    /// The simulation's step: broad phase, contacts (CPU or GPU), solver, sleeping.
    Step,
    /// Transforms, velocities and sleep markers written back; messages sent.
    Writeback,
}

/// The schedule the physics runs in (set by [`PhysicsPlugin`]; backend plugins add their
/// systems there).
#[derive(Resource, Clone, Copy, Debug, PartialEq, Eq)]
pub struct PhysicsSchedule(pub InternedScheduleLabel);

/// The core: components, resources, messages and the CPU pipeline.
pub struct PhysicsPlugin {
    schedule: InternedScheduleLabel,
}

impl PhysicsPlugin {
    /// Runs the pipeline in `schedule` (for example `FixedUpdate`, or a custom schedule a test
    /// runs by hand).
    pub fn new(schedule: impl ScheduleLabel) -> Self {
        Self {
            schedule: schedule.intern(),
        }
    }
}

impl Default for PhysicsPlugin {
    /// In `FixedPostUpdate`.
    fn default() -> Self {
        Self::new(FixedPostUpdate)
    }
}

impl Plugin for PhysicsPlugin {
    fn build(&self, app: &mut App) {
        use InterfereSystems::*;
        app.insert_resource(PhysicsSchedule(self.schedule))
            .init_resource::<PhysicsSettings>()
            .init_resource::<PhysicsStats>()
            .init_resource::<PhysicsWorld>()
            .init_resource::<Backend>()
            .init_resource::<ContactBackends>()
            .init_resource::<collider::ShapeCache>()
            .init_resource::<sync::Mirror>()
            .register_type::<RigidBody>()
            .register_type::<LinearVelocity>()
            .register_type::<AngularVelocity>()
            .register_type::<Density>()
            .register_type::<Mass>()
            .register_type::<Friction>()
            .register_type::<Restitution>()
            .register_type::<Sleeping>()
            .register_type::<Parked>()
            .register_type::<CollisionLayers>()
            .register_type::<Sensor>()
            .register_type::<ExternalForce>()
            .register_type::<ExternalTorque>()
            .register_type::<ExternalImpulse>()
            .register_type::<ExternalAngularImpulse>()
            .register_type::<LinearDamping>()
            .register_type::<AngularDamping>()
            .register_type::<LockedAxes>()
            .register_type::<GravityScale>()
            .register_type::<MaxLinearSpeed>()
            .register_type::<MaxAngularSpeed>()
            .register_type::<Backend>()
            .add_message::<CollisionStarted>()
            .add_message::<CollisionEnded>()
            .add_message::<ContactMessage>()
            .add_message::<IntersectionVolumeMessage>();
        if !app.world().contains_resource::<Assets<Mesh>>() {
            app.init_asset::<Mesh>();
        }
        // Preparation and the mirror run even while paused (a body spawned then is ready when
        // stepping resumes); the step and the write-back only when stepping.
        app.configure_sets(self.schedule, (Prepare, Step, Writeback).chain())
            .configure_sets(
                self.schedule,
                (Step, Writeback).run_if(step::physics_active),
            )
            .add_systems(
                self.schedule,
                (
                    (
                        collider::prepare_colliders,
                        ApplyDeferred,
                        sync::sync_settings,
                        sync::remove::remove_bodies,
                        sync::insert::insert_bodies,
                        sync::change::change_bodies,
                        forces::sync_drives,
                    )
                        .chain()
                        .in_set(Prepare),
                    step::step.in_set(Step),
                    (writeback::writeback, writeback::write_messages)
                        .chain()
                        .in_set(Writeback),
                ),
            );
    }
}

/// All of Interfere: the core with the CPU backend, joints, characters, the GPU backends (which fall back to the CPU
/// with a warning where no suitable GPU exists) and the debug gizmos (drawn only where Bevy's
/// gizmo plugin is present and [`InterfereGizmos`] is enabled). Parts can be replaced or disabled
/// with the usual `PluginGroupBuilder` calls.
#[derive(Default)]
pub struct InterferePlugins;

impl PluginGroup for InterferePlugins {
    fn build(self) -> PluginGroupBuilder {
        let group = PluginGroupBuilder::start::<Self>()
            .add(PhysicsPlugin::default())
            .add(JointPlugin)
            .add(CharacterPlugin)
            .add(InterpolationPlugin);
        #[cfg(feature = "gpu")]
        let group = group.add(GpuBackendPlugin);
        group.add(InterfereDebugPlugin)
    }
}

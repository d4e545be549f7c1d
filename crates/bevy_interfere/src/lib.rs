//! # bevy_interfere
//!
//! The Bevy plugin for Interfere: closed triangle meshes as colliders, exact interference
//! detection (on the CPU with OBBTrees, on the GPU with CInDeR), intersection-volume contacts and
//! a rigid-body stepper, with messages for the game and a debug overlay.
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
//! The pipeline runs in `FixedPostUpdate` (configurable) in the [`InterfereSystems`] sets, in
//! order: prepare, broad phase, narrow phase, volume, solver, writeback. See
//! `docs/user-guide.md` for a walk-through.
#![deny(missing_docs)]

pub mod collider;
pub mod components;
pub mod debug_gizmos;
pub mod gpu_backend;
pub mod mesh_convert;
pub mod messages;
#[cfg(feature = "overlay")]
pub mod overlay;
pub mod settings;
pub mod stepper;

pub use collider::{Collider, ColliderError, ColliderShape, ColliderSource};
pub use components::{
    AngularVelocity, Density, Friction, LinearVelocity, Mass, NeverSleep, Restitution, RigidBody,
    Sleeping,
};
pub use debug_gizmos::{InterfereDebugPlugin, InterfereGizmos};
pub use gpu_backend::{GpuBackendPlugin, GpuSupport, InterfereGpuContext};
/// The solver's iterations, slops and thresholds ([`PhysicsSettings::solver`]).
pub use interfere_dynamics::SolverSettings;
/// How pair volumes are sampled for contacts ([`PhysicsSettings::volume_sampling`]).
pub use interfere_dynamics::{AdaptiveSampling, ContactSampling};
/// A volume error tolerance, absolute or relative ([`AdaptiveSampling::tolerance`]).
pub use interfere_geometry::Tolerance;
pub use messages::{
    CollisionEnded, CollisionStarted, ContactMessage, ContactPoint, IntersectionVolumeMessage,
};
#[cfg(feature = "overlay")]
pub use overlay::{InterfereOverlayPlugin, OverlayState};
pub use settings::{Backend, PhysicsSettings, PhysicsStats, SleepSettings};
pub use stepper::{InterferingPair, PhysicsWorld};

use bevy::app::PluginGroupBuilder;
use bevy::ecs::schedule::{InternedScheduleLabel, ScheduleLabel};
use bevy::prelude::*;

/// What a game usually imports.
pub mod prelude {
    pub use crate::{
        AngularVelocity, Backend, Collider, CollisionEnded, CollisionStarted, ContactMessage,
        Density, Friction, InterfereDebugPlugin, InterfereGizmos, InterferePlugins,
        InterfereSystems, IntersectionVolumeMessage, LinearVelocity, Mass, NeverSleep,
        PhysicsPlugin, PhysicsSettings, PhysicsStats, Restitution, RigidBody, Sleeping,
        SolverSettings,
    };
    pub use interfere_dynamics::{AdaptiveSampling, ContactSampling};
}

/// The stages of a fixed step, in order.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InterfereSystems {
    /// Colliders prepared, ECS bodies synchronised into the simulation.
    Prepare,
    /// Sweep and prune over world boxes.
    BroadPhase,
    /// Interfering pairs (CPU OBBTrees, or CInDeR on the GPU) and collision messages.
    NarrowPhase,
    /// Intersection volumes and gradients, volume contacts, contact messages.
    Volume,
    /// The sequential-impulse solver.
    Solver,
    /// Transforms and velocities written back, sleeping.
    Writeback,
}

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
        app.init_resource::<PhysicsSettings>()
            .init_resource::<SleepSettings>()
            .init_resource::<PhysicsStats>()
            .init_resource::<PhysicsWorld>()
            .init_resource::<Backend>()
            .register_type::<RigidBody>()
            .register_type::<LinearVelocity>()
            .register_type::<AngularVelocity>()
            .register_type::<Density>()
            .register_type::<Mass>()
            .register_type::<Friction>()
            .register_type::<Restitution>()
            .register_type::<Sleeping>()
            .register_type::<Backend>()
            .add_message::<CollisionStarted>()
            .add_message::<CollisionEnded>()
            .add_message::<ContactMessage>()
            .add_message::<IntersectionVolumeMessage>();
        if !app.world().contains_resource::<Assets<Mesh>>() {
            app.init_asset::<Mesh>();
        }
        app.configure_sets(
            self.schedule,
            (Prepare, BroadPhase, NarrowPhase, Volume, Solver, Writeback)
                .chain()
                .run_if(stepper::physics_active),
        )
        .add_systems(
            self.schedule,
            (
                (collider::prepare_colliders, stepper::sync_bodies)
                    .chain()
                    .in_set(Prepare),
                stepper::broad_phase.in_set(BroadPhase),
                (
                    stepper::narrow_phase_cpu.run_if(resource_equals(Backend::Cpu)),
                    stepper::collision_messages,
                )
                    .chain()
                    .in_set(NarrowPhase),
                stepper::volume_contacts.in_set(Volume),
                stepper::solve.in_set(Solver),
                stepper::writeback.in_set(Writeback),
            ),
        );
        // Colliders prepared by `prepare_colliders` are inserted by commands; apply them before
        // the synchronisation reads them.
        app.add_systems(
            self.schedule,
            ApplyDeferred
                .after(collider::prepare_colliders)
                .before(stepper::sync_bodies),
        );
    }
}

/// All of Interfere: the core with the CPU backend, the GPU backends (which fall back to the CPU
/// with a warning where no suitable GPU exists) and the debug gizmos (drawn only where Bevy's
/// gizmo plugin is present and [`InterfereGizmos`] is enabled). Parts can be replaced or disabled
/// with the usual `PluginGroupBuilder` calls.
#[derive(Default)]
pub struct InterferePlugins;

impl PluginGroup for InterferePlugins {
    fn build(self) -> PluginGroupBuilder {
        PluginGroupBuilder::start::<Self>()
            .add(PhysicsPlugin::default())
            .add(GpuBackendPlugin)
            .add(InterfereDebugPlugin)
    }
}

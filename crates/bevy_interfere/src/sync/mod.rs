//! Mirroring the ECS into the simulation, incrementally, before every fixed step: a new body is
//! inserted, a despawned one removed, a changed one updated — never a rebuild, so the other
//! bodies keep their exact `f64` state and the solver its warm-start impulses.
//!
//! Change detection compares each component with what the last write-back put there: a
//! `Transform` the game changed is a teleport, new velocity components set the velocities,
//! materials are copied, a changed kind, collider or mass replaces just that body; changed
//! `CollisionLayers` or `Sensor` update the body's collider in place. Removing
//! `Sleeping` wakes a body and inserting it puts the body to sleep. A body on a child entity
//! lives in the world at its ancestors' `Transform`s composed with its own (read afresh each step,
//! so a moving parent carries it: a change of the parent's pose moves the body like a teleport),
//! and the write-back puts the pose back relative to that parent. Colliders on child entities
//! without a `RigidBody` (primitives, compounds and closed meshes) join their body's own
//! collider as one compound (a half-space is refused with a warning). Values that are not finite
//! are refused for that body with one warning and overwritten at the write-back (the body keeps
//! its simulated state; nothing else is touched).
//!
//! The mirror is four systems, chained in [`crate::InterfereSystems::Prepare`]:
//! [`sync_settings`] (the physics settings), [`remove::remove_bodies`] (entities gone),
//! [`insert::insert_bodies`] (new or rebuilt bodies, and bodies not ready yet) and
//! [`change::change_bodies`] (what changed on bodies in the simulation); colliders on child
//! entities are merged in [`merge`].

pub(crate) mod change;
pub(crate) mod insert;
pub(crate) mod merge;
pub(crate) mod remove;

use crate::collider::ColliderShape;
use crate::components::*;
use crate::layers::{CollisionLayers, Sensor};
use crate::settings::PhysicsSettings;
use crate::world::PhysicsWorld;
use bevy::platform::collections::HashSet;
use bevy::prelude::*;
use interfere_dynamics::Material;
use std::time::Instant;

/// What the mirror's systems share: the entities refused with a warning (each warned once while
/// it stays refused), when this step's mirror began, and the bodies the insert system leaves to
/// the change system.
#[derive(Resource, Default)]
pub(crate) struct Mirror {
    warned: HashSet<Entity>,
    started: Option<Instant>,
    ready: Vec<Ready>,
}

impl Mirror {
    /// Warns about `entity`'s body once (until the entity is gone).
    fn warn_once(&mut self, entity: Entity, why: String) {
        if self.warned.insert(entity) {
            warn!("interfere: body {entity} refused: {why}");
        }
    }
}

/// A body in the simulation after the insert system, with what the ECS asks of it.
struct Ready {
    entity: Entity,
    /// Inserted or replaced this step (its pose and velocities are already the ECS's).
    rebuilt: bool,
    kind: RigidBody,
    /// The entity's own `Transform`, as the game wrote it.
    local: Transform,
    /// The body's world pose (its ancestors' `Transform`s composed with its own).
    pose: Transform,
    parent: Option<Transform>,
    linear: Vec3,
    angular: Vec3,
    layers: interfere_dynamics::CollisionLayers,
    sensor: bool,
    material: Material,
    never_sleep: bool,
    sleeping: bool,
}

/// Prepare, first: the simulation takes the current [`PhysicsSettings`] (refused ones are
/// warned about and the previous ones kept).
pub(crate) fn sync_settings(
    mut pw: ResMut<PhysicsWorld>,
    settings: Res<PhysicsSettings>,
    time: Res<Time<Fixed>>,
    mut mirror: ResMut<Mirror>,
) {
    mirror.started = Some(Instant::now());
    let wanted = settings.simulation(time.timestep().as_secs_f64());
    if wanted != *pw.sim.settings()
        && let Err(e) = pw.sim.set_settings(wanted)
    {
        warn!("interfere: physics settings refused ({e}); keeping the previous ones");
    }
}

type BodyQueryData = (
    Entity,
    &'static RigidBody,
    &'static Transform,
    &'static LinearVelocity,
    &'static AngularVelocity,
    Option<&'static ColliderShape>,
    Option<&'static Density>,
    Option<&'static Mass>,
    Option<&'static Friction>,
    Option<&'static Restitution>,
    Has<Sleeping>,
    Has<NeverSleep>,
    Has<crate::collider::Collider>,
    (Option<&'static CollisionLayers>, Has<Sensor>),
    Option<&'static ChildOf>,
);

/// The ancestors of a body's entity: their `Transform`s and parents.
pub(crate) type AncestorQuery<'w, 's> =
    Query<'w, 's, (&'static Transform, Option<&'static ChildOf>)>;

/// The world transform of `child`'s parent: the `Transform`s of its ancestors composed (`None`
/// without a parent). Read from `Transform`s, not `GlobalTransform`s, so a parent the game moved
/// this frame counts at once.
pub(crate) fn parent_world(
    child: Option<&ChildOf>,
    ancestors: &AncestorQuery,
) -> Option<Transform> {
    let mut next = child.map(ChildOf::parent);
    let mut acc: Option<Transform> = None;
    // Bounded: a hierarchy deeper than this is treated as ending there.
    for _ in 0..256 {
        let Some(e) = next else { break };
        let Ok((t, up)) = ancestors.get(e) else { break };
        acc = Some(match acc {
            Some(a) => t.mul_transform(a),
            None => *t,
        });
        next = up.map(ChildOf::parent);
    }
    acc
}

/// Everything the mirror reads.
/// Parked bodies are not mirrored: one that gets [`Parked`] leaves the simulation.
pub(crate) type BodyQuery<'w, 's> = Query<'w, 's, BodyQueryData, Without<Parked>>;

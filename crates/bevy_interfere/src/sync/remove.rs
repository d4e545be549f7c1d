//! The remove system: bodies whose entity is gone (despawned, lost its `RigidBody` or was
//! [`crate::components::Parked`]) leave the simulation; nothing else is touched.

use super::{BodyQuery, Mirror};
use crate::world::PhysicsWorld;
use bevy::prelude::*;

/// Prepare, second: removes the bodies whose entity no longer matches the mirror's query.
pub(crate) fn remove_bodies(
    mut pw: ResMut<PhysicsWorld>,
    bodies: BodyQuery,
    mut mirror: ResMut<Mirror>,
) {
    let pw = &mut *pw;
    let gone: Vec<Entity> = pw
        .entries
        .keys()
        .filter(|e| !bodies.contains(**e))
        .copied()
        .collect();
    for e in gone {
        remove(pw, e);
    }
    mirror.warned.retain(|e| bodies.contains(*e));
}

/// Takes `entity`'s body out of the simulation, if it has one.
pub(super) fn remove(pw: &mut PhysicsWorld, entity: Entity) {
    if let Some(e) = pw.entries.remove(&entity) {
        let _ = pw.sim.remove(e.handle);
        if let Some(slot) = pw.entities.get_mut(e.handle.id()) {
            *slot = None;
        }
        pw.removed.insert(e.handle, entity);
    }
}

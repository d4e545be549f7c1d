//! The change system: what the game changed on a body already in the simulation is applied in
//! place — layers and sensor on its collider, its material and whether it may sleep, a
//! `Transform` or parent the game moved (a teleport), velocities it set, `Sleeping` it inserted
//! or removed. Values that are not finite are refused with one warning; the body keeps its
//! simulated state.

use super::insert::finite_transform;
use super::{Mirror, Ready};
use crate::components::{RigidBody, Sleeping};
use crate::settings::PhysicsStats;
use crate::world::PhysicsWorld;
use bevy::prelude::*;

/// Prepare, last: applies the changes of every body [`super::insert::insert_bodies`] left ready.
pub(crate) fn change_bodies(
    mut pw: ResMut<PhysicsWorld>,
    mut mirror: ResMut<Mirror>,
    mut stats: ResMut<PhysicsStats>,
    mut commands: Commands,
) {
    let pw = &mut *pw;
    let mut ready = std::mem::take(&mut mirror.ready);
    for r in ready.drain(..) {
        let Ready {
            entity,
            rebuilt,
            kind,
            local,
            pose: transform,
            parent,
            linear,
            angular,
            layers,
            sensor: is_sensor,
            material: mat,
            never_sleep,
            sleeping,
        } = r;
        let mut warn_once = |why: String| mirror.warn_once(entity, why);
        let entry = pw.entries.get(&entity).expect("inserted above").clone();
        let h = entry.handle;
        // Layers or sensor changed on a living body: its collider is updated in place.
        if let Some(c) = pw.sim.collider(h)
            && (c.layers != layers || c.sensor != is_sensor)
        {
            let c = c.clone().with_layers(layers).with_sensor(is_sensor);
            let _ = pw.sim.set_collider(h, Some(c));
        }
        let _ = pw.sim.set_material(h, mat);
        let _ = pw.sim.set_can_sleep(h, !never_sleep);
        if !rebuilt {
            let moved = entry.parent != parent
                || entry
                    .written
                    .is_none_or(|(t, r, _, _)| t != local.translation || r != local.rotation);
            if moved {
                pw.entries.get_mut(&entity).expect("present").parent = parent;
                if finite_transform(&transform) {
                    let q = transform.rotation.as_dquat().normalize();
                    let _ = pw.sim.set_pose(h, transform.translation.as_dvec3(), q);
                } else {
                    warn_once(format!(
                        "non-finite transform {:?}; the body keeps its simulated pose",
                        transform.translation
                    ));
                }
            }
            let vel_set = entry
                .written
                .is_none_or(|(_, _, l, a)| l != linear || a != angular);
            if vel_set && kind != RigidBody::Static {
                if linear.is_finite() && angular.is_finite() {
                    let _ = pw
                        .sim
                        .set_velocity(h, linear.as_dvec3(), angular.as_dvec3());
                } else {
                    warn_once(format!(
                        "non-finite velocity ({linear}, {angular}); the body keeps its simulated \
                         velocity"
                    ));
                }
            }
        }
        // `Sleeping` set or removed by the game.
        let asleep = pw.sim.body(h).is_some_and(|b| b.sleeping);
        if entry.marked_asleep && !sleeping {
            let _ = pw.sim.wake(h);
            pw.entries.get_mut(&entity).expect("present").marked_asleep = false;
        } else if sleeping && !asleep && !entry.marked_asleep && kind == RigidBody::Dynamic {
            let _ = pw.sim.sleep(h);
            pw.entries.get_mut(&entity).expect("present").marked_asleep = true;
        } else if sleeping && !asleep && entry.marked_asleep {
            // Woken by the game's pose or velocity: the marker goes.
            commands.entity(entity).remove::<Sleeping>();
            pw.entries.get_mut(&entity).expect("present").marked_asleep = false;
        }
    }
    // The emptied list goes back, keeping its allocation for the next step.
    mirror.ready = ready;
    stats.sync_ms = mirror
        .started
        .map_or(0.0, |s| s.elapsed().as_secs_f64() * 1e3);
}

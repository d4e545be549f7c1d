//! The insert system: a body whose entity is new, or whose kind, collider or mass changed, is
//! built and inserted (or replaces its old body under the same handle, keeping the exact state
//! unless the game moved it); a body that cannot join yet (its collider still being prepared, no
//! bounded shape for a dynamic body, a refused mass) leaves the simulation until it can.

use super::merge::{Merged, PartQuery, merged_shape};
use super::remove::remove;
use super::{AncestorQuery, BodyQuery, Mirror, Ready, parent_world};
use crate::collider::ColliderShape;
use crate::components::*;
use crate::world::{Entry, PhysicsWorld};
use bevy::prelude::*;
use interfere_dynamics::{Body, BodyShape, Material};

fn material(friction: Option<&Friction>, restitution: Option<&Restitution>) -> Material {
    let f = friction.copied().unwrap_or_default();
    Material {
        static_friction: f.static_coefficient.max(0.0) as f64,
        dynamic_friction: f.dynamic_coefficient.max(0.0) as f64,
        restitution: restitution.map_or(0.0, |r| r.0.clamp(0.0, 1.0) as f64),
    }
}

/// Density from `Mass` or `Density`; `Err` names the problem.
fn density_of(
    shape: Option<&ColliderShape>,
    density: Option<&Density>,
    mass: Option<&Mass>,
) -> Result<f64, String> {
    let volume = shape.map_or(0.0, ColliderShape::volume);
    let d = match mass {
        Some(m) if volume > 0.0 => m.0 as f64 / volume,
        _ => density.copied().unwrap_or_default().0 as f64,
    };
    if d.is_finite() && d > 0.0 {
        Ok(d)
    } else {
        Err(format!(
            "mass {:?} / density {:?} gives density {d}, which is not positive and finite",
            mass.map(|m| m.0),
            density.map(|d| d.0)
        ))
    }
}

/// Builds the simulated body of an entity.
fn make_body(
    kind: RigidBody,
    transform: &Transform,
    lin: Vec3,
    ang: Vec3,
    shape: Option<&ColliderShape>,
    density: f64,
    mat: Material,
) -> Result<Body, String> {
    let rotation = transform.rotation.as_dquat().normalize();
    let translation = transform.translation.as_dvec3();
    let made = match kind {
        RigidBody::Dynamic => {
            let props = shape
                .and_then(|s| s.shape().mass_at(density))
                .ok_or("a dynamic body needs a bounded collider (mesh, primitive or compound)")?;
            Body::dynamic(&props, translation, rotation)
        }
        RigidBody::Static => Body::fixed(translation, rotation),
        RigidBody::Kinematic => Body::kinematic(translation, rotation),
    };
    let mut body = made.map_err(|e| e.to_string())?.with_material(mat);
    if kind != RigidBody::Static {
        body = body.with_velocity(lin.as_dvec3(), ang.as_dvec3());
    }
    Ok(body)
}

pub(super) fn finite_transform(t: &Transform) -> bool {
    t.translation.is_finite() && t.rotation.is_finite() && t.rotation.length_squared() > 1e-12
}

/// Prepare, third: inserts or replaces the bodies that need it, and leaves every body in the
/// simulation, with what the ECS asks of it, to [`super::change::change_bodies`] (in spawn order).
pub(crate) fn insert_bodies(
    mut pw: ResMut<PhysicsWorld>,
    bodies: BodyQuery,
    ancestors: AncestorQuery,
    parts: PartQuery,
    mut mirror: ResMut<Mirror>,
) {
    let pw = &mut *pw;
    let mirror = &mut *mirror;
    mirror.ready.clear();
    // In spawn order (entity index, then generation): bodies that become ready together join in
    // the order they were spawned.
    let mut items: Vec<_> = bodies.iter().collect();
    items.sort_by_key(|item| (item.0.index_u32(), item.0.generation().to_bits()));
    for item in items {
        let (
            entity,
            kind,
            transform,
            lin,
            ang,
            shape,
            density,
            mass,
            friction,
            restitution,
            sleeping,
            never_sleep,
            has_collider,
            (layers, is_sensor),
            child_of,
        ) = item;
        // The body's pose in the world: under a parent, the parent's world transform times the
        // entity's own (scale is the collider's business, see `crate::collider`).
        let parent = parent_world(child_of, &ancestors);
        let world_pose = match parent {
            Some(p) => {
                let w = p.mul_transform(*transform);
                Transform {
                    translation: w.translation,
                    rotation: w.rotation.normalize(),
                    scale: transform.scale,
                }
            }
            None => *transform,
        };
        // What the game wrote into `Transform` (compared with the last write-back).
        let local = *transform;
        let transform = &world_pose;
        let layers: interfere_dynamics::CollisionLayers =
            layers.copied().unwrap_or_default().into();
        let mut warn_once = |why: String| mirror.warn_once(entity, why);
        // Colliders on child entities join the body's own as one compound.
        let merged = match merged_shape(entity, shape, &parts) {
            Merged::None => None,
            Merged::Pending => {
                remove(pw, entity);
                continue;
            }
            Merged::Refused(why) => {
                warn_once(why);
                None
            }
            Merged::Shape(s) => Some(s),
        };
        let has_collider = has_collider || merged.is_some();
        let shape = merged.as_ref().or(shape);
        let dens = if *kind == RigidBody::Dynamic {
            match density_of(shape, density, mass) {
                Ok(d) => d,
                Err(why) => {
                    warn_once(why);
                    remove(pw, entity);
                    continue;
                }
            }
        } else {
            0.0
        };
        // A body with a collider joins once the collider is prepared (a dynamic one needs a
        // bounded shape for its mass).
        if (has_collider && shape.is_none())
            || (*kind == RigidBody::Dynamic && shape.and_then(|s| s.shape().volume()).is_none())
        {
            remove(pw, entity);
            continue;
        }
        let mat = material(friction, restitution);
        let rebuild = match pw.entries.get(&entity) {
            None => true,
            Some(e) => {
                e.kind != *kind
                    || e.density != dens
                    || match (&e.shape, shape) {
                        (Some(a), Some(b)) => !a.same_shape(b),
                        (None, None) => false,
                        _ => true,
                    }
            }
        };
        if rebuild {
            if !finite_transform(transform) || !lin.0.is_finite() || !ang.0.is_finite() {
                warn_once(format!(
                    "non-finite transform or velocity ({:?}, {}, {})",
                    transform.translation, lin.0, ang.0
                ));
                continue;
            }
            let old = pw.entries.get(&entity).cloned();
            let mut body = match make_body(*kind, transform, lin.0, ang.0, shape, dens, mat) {
                Ok(b) => b,
                Err(why) => {
                    warn_once(why);
                    remove(pw, entity);
                    continue;
                }
            };
            let collider = shape.map(|s| {
                BodyShape::from_shape(s.shape().clone())
                    .with_layers(layers)
                    .with_sensor(is_sensor)
            });
            match old {
                Some(old) => {
                    // Keep the exact state unless the game moved the body.
                    if let Some(prev) = pw.sim.body(old.handle)
                        && old.parent == parent
                        && old.written.is_some_and(|(t, r, _, _)| {
                            t == local.translation && r == local.rotation
                        })
                    {
                        let pose = prev.mesh_pose();
                        body.orientation = prev.orientation;
                        body.position = pose.translation + body.orientation * body.local_center();
                        if old
                            .written
                            .is_some_and(|(_, _, l, a)| l == lin.0 && a == ang.0)
                            && *kind != RigidBody::Static
                        {
                            body.linear_velocity = prev.linear_velocity;
                            body.angular_velocity = prev.angular_velocity;
                        }
                    }
                    let _ = pw.sim.set_collider(old.handle, collider);
                    let _ = pw.sim.set_body(old.handle, body);
                    let entry = pw.entries.get_mut(&entity).expect("present");
                    entry.kind = *kind;
                    entry.density = dens;
                    entry.shape = shape.cloned();
                    entry.parent = parent;
                }
                None => {
                    let handle = match pw.sim.insert(body, collider) {
                        Ok(h) => h,
                        Err(e) => {
                            warn_once(e.to_string());
                            continue;
                        }
                    };
                    let _ = pw.sim.set_user_data(handle, entity.to_bits());
                    let id = handle.id();
                    if pw.entities.len() <= id {
                        pw.entities.resize(id + 1, None);
                    }
                    pw.entities[id] = Some(entity);
                    pw.entries.insert(
                        entity,
                        Entry {
                            handle,
                            kind: *kind,
                            shape: shape.cloned(),
                            density: dens,
                            written: None,
                            parent,
                            marked_asleep: false,
                        },
                    );
                }
            }
        }
        mirror.ready.push(Ready {
            entity,
            rebuilt: rebuild,
            kind: *kind,
            local,
            pose: world_pose,
            parent,
            linear: lin.0,
            angular: ang.0,
            layers,
            sensor: is_sensor,
            material: mat,
            never_sleep,
            sleeping,
        });
    }
}

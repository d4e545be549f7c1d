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

use crate::collider::ColliderShape;
use crate::components::*;
use crate::layers::{CollisionLayers, Sensor};
use crate::settings::{PhysicsSettings, PhysicsStats};
use crate::world::{Entry, PhysicsWorld};
use bevy::math::DMat3;
use bevy::platform::collections::HashSet;
use bevy::prelude::*;
use interfere_dynamics::{
    Collider as DynCollider, Material, MeshPart, RigidBody as DynBody, Shape,
};
use interfere_geometry::DPose;
use interfere_geometry::primitives::CompoundPart;
use std::time::Instant;

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

/// Entities below a body: their `Transform`, prepared collider, whether they carry a collider or
/// are bodies of their own, and their children.
pub(crate) type PartQuery<'w, 's> = Query<
    'w,
    's,
    (
        &'static Transform,
        Option<&'static ColliderShape>,
        Has<crate::collider::Collider>,
        Has<RigidBody>,
        Option<&'static Children>,
    ),
>;

/// What the colliders on a body's descendants make of its shape.
enum Merged {
    /// No descendant carries a collider: the body's own shape stands.
    None,
    /// A descendant's collider is still being prepared: the body waits.
    Pending,
    /// They cannot be merged (the reason); the body's own shape stands.
    Refused(String),
    /// The body's own shape and its descendants' as one compound.
    Shape(ColliderShape),
}

/// Colliders on child entities (down to, not into, a descendant that is a body of its own)
/// become parts of one compound with the body's own collider, each placed by the `Transform`s
/// between the body and it (rotation and translation; each collider has its own entity's scale
/// baked in). Parts may be primitives, compounds or closed meshes (a mesh part shares the
/// child's prepared mesh: nothing is rebuilt); a half-space cannot be a part.
fn merged_shape(body: Entity, own: Option<&ColliderShape>, parts: &PartQuery) -> Merged {
    let Ok((_, _, _, _, Some(children))) = parts.get(body) else {
        return Merged::None;
    };
    let mut found: Vec<CompoundPart> = Vec::new();
    let mut meshes: Vec<MeshPart> = Vec::new();
    let mut any = false;
    let mut stack: Vec<(Entity, Transform)> = children
        .iter()
        .filter_map(|c| parts.get(c).ok().map(|(t, ..)| (c, *t)))
        .collect();
    let place = |rel: &Transform| DPose {
        rotation: DMat3::from_quat(rel.rotation.as_dquat().normalize()),
        translation: rel.translation.as_dvec3(),
    };
    let mut add = |shape: &Shape, at: DPose| -> Result<(), String> {
        match shape {
            Shape::Primitive(p) => found.push(CompoundPart {
                pose: at,
                shape: *p.primitive(),
            }),
            Shape::Compound(c) => {
                found.extend(c.parts().map(|(q, pose)| CompoundPart {
                    pose: at.mul(&pose),
                    shape: *q.primitive(),
                }));
                meshes.extend(c.meshes().iter().map(|m| MeshPart {
                    shape: m.shape.clone(),
                    pose: at.mul(&m.pose),
                }));
            }
            Shape::Mesh(m) => meshes.push(MeshPart {
                shape: m.clone(),
                pose: at,
            }),
            Shape::HalfSpace(_) => return Err("a half-space collider".into()),
        }
        Ok(())
    };
    while let Some((e, rel)) = stack.pop() {
        let Ok((_, shape, has_collider, is_body, grandchildren)) = parts.get(e) else {
            continue;
        };
        if is_body {
            continue;
        }
        if has_collider {
            any = true;
            let Some(shape) = shape else {
                return Merged::Pending;
            };
            if let Err(what) = add(shape.shape(), place(&rel)) {
                return Merged::Refused(format!(
                    "child entity {e} carries {what}: a half-space cannot be part of a body \
                     (give it its own RigidBody)"
                ));
            }
        }
        if let Some(g) = grandchildren {
            stack.extend(
                g.iter()
                    .filter_map(|c| parts.get(c).ok().map(|(t, ..)| (c, rel.mul_transform(*t)))),
            );
        }
    }
    if !any {
        return Merged::None;
    }
    if let Some(own) = own
        && let Err(what) = add(own.shape(), DPose::IDENTITY)
    {
        return Merged::Refused(format!(
            "the body carries {what} and its child entities carry colliders: a half-space \
             cannot be part of a body"
        ));
    }
    // In a fixed order (the walk's order depends on the stack): by position, then shape.
    let key = |pose: &DPose| pose.translation.to_array();
    let order = |a: &DPose, b: &DPose| {
        key(a)
            .partial_cmp(&key(b))
            .unwrap_or(std::cmp::Ordering::Equal)
    };
    found.sort_by(|a, b| order(&a.pose, &b.pose));
    meshes.sort_by(|a, b| order(&a.pose, &b.pose).then(a.shape.id().cmp(&b.shape.id())));
    match Shape::compound_with_meshes(found, meshes) {
        Ok(shape) => Merged::Shape(ColliderShape::from_shape(shape)),
        Err(e) => Merged::Refused(format!("the child colliders do not form a compound: {e}")),
    }
}

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

/// Builds the simulated body of an entity.
fn make_body(
    kind: RigidBody,
    transform: &Transform,
    lin: Vec3,
    ang: Vec3,
    shape: Option<&ColliderShape>,
    density: f64,
    mat: Material,
) -> Result<DynBody, String> {
    let rotation = transform.rotation.as_dquat().normalize();
    let translation = transform.translation.as_dvec3();
    let made = match kind {
        RigidBody::Dynamic => {
            let props = shape
                .and_then(|s| s.shape().mass_at(density))
                .ok_or("a dynamic body needs a bounded collider (mesh, primitive or compound)")?;
            DynBody::dynamic(&props, translation, rotation)
        }
        RigidBody::Static => DynBody::fixed(translation, rotation),
        RigidBody::Kinematic => DynBody::kinematic(translation, rotation),
    };
    let mut body = made.map_err(|e| e.to_string())?.with_material(mat);
    if kind != RigidBody::Static {
        body = body.with_velocity(lin.as_dvec3(), ang.as_dvec3());
    }
    Ok(body)
}

fn finite_transform(t: &Transform) -> bool {
    t.translation.is_finite() && t.rotation.is_finite() && t.rotation.length_squared() > 1e-12
}

/// Prepare: brings the simulation in line with the ECS (see the module documentation).
#[allow(clippy::too_many_arguments)]
pub(crate) fn sync_bodies(
    mut pw: ResMut<PhysicsWorld>,
    settings: Res<PhysicsSettings>,
    time: Res<Time<Fixed>>,
    mut stats: ResMut<PhysicsStats>,
    bodies: BodyQuery,
    ancestors: AncestorQuery,
    parts: PartQuery,
    mut warned: Local<HashSet<Entity>>,
    mut commands: Commands,
) {
    let start = Instant::now();
    let pw = &mut *pw;
    let wanted = settings.simulation(time.timestep().as_secs_f64());
    if wanted != *pw.sim.settings()
        && let Err(e) = pw.sim.set_settings(wanted)
    {
        warn!("interfere: physics settings refused ({e}); keeping the previous ones");
    }
    // Bodies whose entity is gone (or lost its RigidBody).
    let gone: Vec<Entity> = pw
        .entries
        .keys()
        .filter(|e| !bodies.contains(**e))
        .copied()
        .collect();
    for e in gone {
        remove(pw, e);
    }
    warned.retain(|e| bodies.contains(*e));
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
        let mut warn_once = |why: String| {
            if warned.insert(entity) {
                warn!("interfere: body {entity} refused: {why}");
            }
        };
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
                DynCollider::from_shape(s.shape().clone())
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
        if !rebuild {
            let moved = entry.parent != parent
                || entry
                    .written
                    .is_none_or(|(t, r, _, _)| t != local.translation || r != local.rotation);
            if moved {
                pw.entries.get_mut(&entity).expect("present").parent = parent;
                if finite_transform(transform) {
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
                .is_none_or(|(_, _, l, a)| l != lin.0 || a != ang.0);
            if vel_set && *kind != RigidBody::Static {
                if lin.0.is_finite() && ang.0.is_finite() {
                    let _ = pw.sim.set_velocity(h, lin.0.as_dvec3(), ang.0.as_dvec3());
                } else {
                    warn_once(format!(
                        "non-finite velocity ({}, {}); the body keeps its simulated velocity",
                        lin.0, ang.0
                    ));
                }
            }
        }
        // `Sleeping` set or removed by the game.
        let asleep = pw.sim.body(h).is_some_and(|b| b.sleeping);
        if entry.marked_asleep && !sleeping {
            let _ = pw.sim.wake(h);
            pw.entries.get_mut(&entity).expect("present").marked_asleep = false;
        } else if sleeping && !asleep && !entry.marked_asleep && *kind == RigidBody::Dynamic {
            let _ = pw.sim.sleep(h);
            pw.entries.get_mut(&entity).expect("present").marked_asleep = true;
        } else if sleeping && !asleep && entry.marked_asleep {
            // Woken by the game's pose or velocity: the marker goes.
            commands.entity(entity).remove::<Sleeping>();
            pw.entries.get_mut(&entity).expect("present").marked_asleep = false;
        }
    }
    stats.sync_ms = start.elapsed().as_secs_f64() * 1e3;
}

/// Takes `entity`'s body out of the simulation, if it has one.
fn remove(pw: &mut PhysicsWorld, entity: Entity) {
    if let Some(e) = pw.entries.remove(&entity) {
        let _ = pw.sim.remove(e.handle);
        if let Some(slot) = pw.entities.get_mut(e.handle.id()) {
            *slot = None;
        }
        pw.removed.insert(e.handle, entity);
    }
}

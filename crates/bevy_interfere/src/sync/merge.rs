//! Colliders on child entities merged into their body's shape: the parts of one compound, each
//! placed by the `Transform`s between the body and it.

use crate::collider::ColliderShape;
use crate::components::RigidBody;
use bevy::math::DMat3;
use bevy::prelude::*;
use interfere_dynamics::{MeshPart, Shape};
use interfere_geometry::DPose;
use interfere_geometry::primitives::CompoundPart;

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
pub(super) enum Merged {
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
pub(super) fn merged_shape(body: Entity, own: Option<&ColliderShape>, parts: &PartQuery) -> Merged {
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

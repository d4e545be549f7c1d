//! Messages the plugin writes every fixed step: collisions starting and ending per entity
//! pair, contact points with normals, depths and triangle ids, and the intersection volume with
//! the force and torque of its gradient (Wang–Faure–Pai 2012 §2.2, Eq. 2).
//!
//! Pairs are ordered `(a, b)` with `a`'s body index below `b`'s; gradients are with respect to
//! `b`'s motion (`a`'s are the negatives).

use bevy::prelude::*;

/// Two bodies started interfering this step (the narrow phase found a crossing triangle pair or
/// one solid inside the other).
#[derive(Message, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CollisionStarted(pub Entity, pub Entity);

/// Two bodies stopped interfering this step (or one of them was removed).
#[derive(Message, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CollisionEnded(pub Entity, pub Entity);

/// One contact point of a pair (world space).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactPoint {
    /// Centroid of the part of the intersection boundary this point stands for.
    pub point: Vec3,
    /// Unit direction that moves `b` out of `a` fastest (the negative volume gradient).
    pub normal: Vec3,
    /// Mean penetration depth of this part: its volume over its gradient's length.
    pub depth: f32,
    /// Its share of the intersection volume.
    pub volume: f32,
}

/// The contact of one interfering pair this step.
#[derive(Message, Clone, Debug, PartialEq)]
pub struct ContactMessage {
    /// First body.
    pub a: Entity,
    /// Second body.
    pub b: Entity,
    /// Up to four points per contact region (its surface split in quadrants); empty when the
    /// pair interferes without volume (a touch, or a ray-sampled overlap below the spacing).
    pub points: Vec<ContactPoint>,
    /// Intersecting triangle pairs `(triangle of a, triangle of b)`: the first one found, or all
    /// with [`crate::PhysicsSettings::all_triangle_pairs`]; empty for nested solids or pairs
    /// found by the GPU backend.
    pub triangle_pairs: Vec<(u32, u32)>,
    /// Whether one solid lies entirely inside the other (no triangle crosses).
    pub contained: bool,
    /// Whether a body of the pair is a sensor (the contact exerted no force).
    pub sensor: bool,
}

/// The intersection volume of an interfering pair and the generalized force of its gradient.
#[derive(Message, Clone, Copy, Debug, PartialEq)]
pub struct IntersectionVolumeMessage {
    /// First body.
    pub a: Entity,
    /// Second body.
    pub b: Entity,
    /// Intersection volume.
    pub volume: f32,
    /// `−∂V/∂x_b`: the force on `b` of a unit-stiffness volume penalty (multiply by a stiffness
    /// in force per volume to get a penalty force); `a` gets the opposite.
    pub force: Vec3,
    /// `−∂V/∂θ_b` about `b`'s centre of mass: the matching torque on `b`.
    pub torque: Vec3,
    /// The centroid of `b`'s part of the intersection boundary (where the force acts).
    pub point: Vec3,
    /// Rays cast for this pair (0 for exact volumes).
    pub rays: u32,
    /// Whether a body of the pair is a sensor (the volume exerted no force).
    pub sensor: bool,
}

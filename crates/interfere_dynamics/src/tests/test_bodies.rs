//! Bodies the unit tests of compounds and primitives share: a half-space ground, a static mesh
//! slab, a dynamic body of any shape, a translation pose; and a pair's contact as the CPU stage
//! computes it. Test-only.

use crate::*;
use interfere_geometry::DPose;
use interfere_geometry::glam::{DMat3, DQuat, DVec3, Vec3};
use interfere_geometry::shapes::cuboid;
use std::sync::Arc;

/// A dynamic body of `shape` at `density` whose collider frame is at `origin`, turned by
/// `rotation`.
pub(crate) fn add_shape(
    sim: &mut Simulation,
    shape: &Shape,
    density: f64,
    origin: DVec3,
    rotation: DQuat,
) -> BodyHandle {
    let body = Body::dynamic(&shape.mass_at(density).unwrap(), origin, rotation).unwrap();
    sim.insert(body, Some(BodyShape::from_shape(shape.clone())))
        .unwrap()
}

/// The half-space `z ≤ 0` on a static body.
pub(crate) fn add_ground(sim: &mut Simulation) -> BodyHandle {
    add_turned_ground(sim, DQuat::IDENTITY)
}

/// [`add_ground`] turned by `turn` about the origin.
pub(crate) fn add_turned_ground(sim: &mut Simulation, turn: DQuat) -> BodyHandle {
    let body = Body::fixed(DVec3::ZERO, turn).unwrap();
    let half = HalfSpace::new(DVec3::Z, DVec3::ZERO).unwrap();
    sim.insert(body, Some(BodyShape::half_space(half))).unwrap()
}

/// A static mesh slab (half extents 3 × 3 × 0.5, 12 triangles) with its top face at `z = top`.
pub(crate) fn add_slab(sim: &mut Simulation, top: f64) -> BodyHandle {
    let slab = Arc::new(MeshShape::new(cuboid(Vec3::new(3.0, 3.0, 0.5)).unwrap()).unwrap());
    let body = Body::fixed(DVec3::new(0.0, 0.0, top - 0.5), DQuat::IDENTITY).unwrap();
    sim.insert(body, Some(BodyShape::mesh(slab))).unwrap()
}

/// The pose that translates by `translation`.
pub(crate) fn at(translation: DVec3) -> DPose {
    DPose {
        rotation: DMat3::IDENTITY,
        translation,
    }
}

/// The contact of pair `(a, b)` at the simulation's current state, as the CPU contact stage
/// computes it (the exact narrow phase, then the volume stage); `None` when it does not interfere.
pub(crate) fn contact(sim: &Simulation, a: BodyHandle, b: BodyHandle) -> Option<PairContact> {
    let input = sim.stage_input(&[]);
    let (a, b) = (a.id().min(b.id()), a.id().max(b.id()));
    let pair = exact_pair(&input, a, b, true)?;
    Some(pair_contact(&input, pair))
}

//! Helpers shared by the crate's unit tests (not part of the public API).

use crate::pose::{DPose, Pose};
use glam::{DVec3, Quat, Vec3};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// A random rigid pose: a random axis and angle, a translation in `[-reach, reach)^3`, rounded
/// through the `f32` API pose the way callers build it.
pub(crate) fn random_pose(rng: &mut ChaCha8Rng, reach: f32) -> DPose {
    let axis = Vec3::new(
        rng.random_range(-1.0..1.0),
        rng.random_range(-1.0..1.0),
        rng.random_range(-1.0..1.0),
    )
    .normalize_or(Vec3::X);
    let t = Vec3::new(
        rng.random_range(-reach..reach),
        rng.random_range(-reach..reach),
        rng.random_range(-reach..reach),
    );
    Pose::new(Quat::from_axis_angle(axis, rng.random_range(0.0..6.3)), t).to_f64()
}

/// A uniformly distributed random unit vector (rejection sampling in the unit ball).
pub(crate) fn random_unit(rng: &mut ChaCha8Rng) -> DVec3 {
    loop {
        let v = DVec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        );
        let l = v.length();
        if l > 0.1 && l <= 1.0 {
            return v / l;
        }
    }
}

/// Closed test meshes of every kind the hierarchies' tests walk: a sphere, a torus (a hole), a
/// bumpy sphere (concave), a box and a subdivided box (flat faces, coplanar contacts).
pub(crate) fn test_solids() -> Vec<crate::mesh::TriMesh> {
    use crate::shapes;
    vec![
        shapes::icosphere(1.0, 2).unwrap().into_mesh(),
        shapes::torus(1.0, 0.35, 16, 8).unwrap().into_mesh(),
        shapes::bumpy_sphere(1.0, 0.3, 4.0, 2, 7)
            .unwrap()
            .into_mesh(),
        shapes::cuboid(Vec3::new(1.0, 0.5, 0.7))
            .unwrap()
            .into_mesh(),
        shapes::subdivided_cuboid(Vec3::new(0.8, 0.6, 0.4), 3)
            .unwrap()
            .into_mesh(),
    ]
}

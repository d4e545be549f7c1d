//! Tests of the primitive colliders against independent oracles: closed-form values, the
//! exact convex clipping of inscribed and circumscribed tessellations (a rigorous bracket for
//! convex shapes), the crate's exact mesh interference and point location, Monte Carlo counts
//! with a stated statistical tolerance, and central finite differences for gradients.

mod compound_tests;
mod overlap_tests;
mod shape_tests;
mod tess_tests;
mod volume_tests;

use super::Primitive;
use super::polytope::{Face, FaceTag, Polytope};
use crate::pose::DPose;
use crate::test_support::random_unit;
use crate::topology::Solid;
use glam::{DMat3, DQuat, DVec3};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// A random rigid pose in `f64` (random axis and angle, translation in `[-reach, reach)³`).
pub(super) fn rand_pose(rng: &mut ChaCha8Rng, reach: f64) -> DPose {
    let axis = random_unit(rng);
    let q = DQuat::from_axis_angle(axis, rng.random_range(0.0..std::f64::consts::TAU));
    DPose {
        rotation: DMat3::from_quat(q),
        translation: if reach > 0.0 {
            DVec3::new(
                rng.random_range(-reach..reach),
                rng.random_range(-reach..reach),
                rng.random_range(-reach..reach),
            )
        } else {
            DVec3::ZERO
        },
    }
}

/// The pose `pose` followed by the translation `t`.
pub(super) fn shifted(pose: &DPose, t: DVec3) -> DPose {
    DPose {
        rotation: pose.rotation,
        translation: pose.translation + t,
    }
}

/// `pose` followed by a rotation by `angle` about `axis` through the point `p`.
pub(super) fn rotated_about(pose: &DPose, p: DVec3, axis: DVec3, angle: f64) -> DPose {
    let r = DMat3::from_axis_angle(axis, angle);
    DPose {
        rotation: r * pose.rotation,
        translation: p + r * (pose.translation - p),
    }
}

/// A random bounded primitive with dimensions in `[0.3, 1.5)`.
pub(super) fn rand_bounded(rng: &mut ChaCha8Rng, kind: usize) -> Primitive {
    let mut d = || rng.random_range(0.3..1.5);
    match kind % 4 {
        0 => Primitive::sphere(d()),
        1 => Primitive::capsule(d(), d()),
        2 => Primitive::cuboid(DVec3::new(d(), d(), d())),
        _ => Primitive::cylinder(d(), d()),
    }
    .expect("valid dimensions")
}

/// Volume, centre of mass and inertia (unit density, about the centre of mass) of a closed
/// mesh by the divergence theorem over tetrahedra from the origin (Mirtich / Eberly).
pub(super) fn mesh_mass(solid: &Solid) -> (f64, DVec3, DMat3) {
    let outer = |a: DVec3, b: DVec3| DMat3::from_cols(a * b.x, a * b.y, a * b.z);
    let (mut six_v, mut first, mut second) = (0.0, DVec3::ZERO, DMat3::ZERO);
    for t in 0..solid.triangle_count() {
        let [a, b, c] = solid.triangle(t).map(|v| v.as_dvec3());
        let d = a.dot(b.cross(c));
        let s = a + b + c;
        six_v += d;
        first += s * d;
        second += (outer(a, a) + outer(b, b) + outer(c, c) + outer(s, s)) * d;
    }
    let v = six_v / 6.0;
    let com = first / (24.0 * v);
    let cov = second * (1.0 / 120.0) - outer(com, com) * v;
    let tr = cov.x_axis.x + cov.y_axis.y + cov.z_axis.z;
    (v, com, DMat3::from_diagonal(DVec3::splat(tr)) - cov)
}

/// A convex closed mesh placed by `pose`, as a polytope (one face per triangle).
pub(super) fn mesh_polytope(solid: &Solid, pose: &DPose) -> Polytope {
    Polytope {
        faces: (0..solid.triangle_count())
            .map(|t| {
                let p = solid.triangle(t).map(|v| pose.transform_point(v));
                Face {
                    normal: (p[1] - p[0]).cross(p[2] - p[0]).normalize_or_zero(),
                    points: p.to_vec(),
                    tag: FaceTag::Original(0),
                }
            })
            .collect(),
    }
}

/// The face planes `(n, d)` (`n · x ≤ d` inside) of a convex closed mesh placed by `pose`.
pub(super) fn mesh_planes(solid: &Solid, pose: &DPose) -> Vec<(DVec3, f64)> {
    (0..solid.triangle_count())
        .filter_map(|t| {
            let p = solid.triangle(t).map(|v| pose.transform_point(v));
            let n = (p[1] - p[0]).cross(p[2] - p[0]).try_normalize()?;
            Some((n, n.dot((p[0] + p[1] + p[2]) / 3.0)))
        })
        .collect()
}

/// Exact volume of the intersection of two convex meshes (each placed by its pose): `a`'s
/// polytope clipped by every face plane of `b`.
pub(super) fn convex_meshes_volume(a: &Solid, pa: &DPose, b: &Solid, pb: &DPose) -> f64 {
    let mut poly = mesh_polytope(a, pa);
    for (n, d) in mesh_planes(b, pb) {
        poly = poly.clip(n, d, 0);
        if poly.faces.is_empty() {
            return 0.0;
        }
    }
    let o = poly.reference();
    poly.volume_about(o)
}

/// Exact volume of a convex mesh (placed by `pose`) clipped by the planes `n · x ≤ d`.
pub(super) fn convex_mesh_clip_volume(a: &Solid, pose: &DPose, planes: &[(DVec3, f64)]) -> f64 {
    let mut poly = mesh_polytope(a, pose);
    for &(n, d) in planes {
        poly = poly.clip(n, d, 0);
        if poly.faces.is_empty() {
            return 0.0;
        }
    }
    let o = poly.reference();
    poly.volume_about(o)
}

/// Monte Carlo estimate of the volume of `{x ∈ [lo, hi] : inside(x)}` with `n` samples, and
/// its standard deviation `V_box √(p(1−p)/n)`.
pub(super) fn monte_carlo(
    rng: &mut ChaCha8Rng,
    lo: DVec3,
    hi: DVec3,
    n: usize,
    inside: impl Fn(DVec3) -> bool,
) -> (f64, f64) {
    let size = hi - lo;
    let vbox = size.x * size.y * size.z;
    let mut hits = 0usize;
    for _ in 0..n {
        let x = lo + size * DVec3::new(rng.random(), rng.random(), rng.random());
        if inside(x) {
            hits += 1;
        }
    }
    let p = hits as f64 / n as f64;
    (
        vbox * p,
        vbox * (p * (1.0 - p) / n as f64).sqrt().max(1.0 / n as f64),
    )
}

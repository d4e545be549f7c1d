//! Interference tests: do two closed solids share a point (touching counts)?
//!
//! | pair | test |
//! |---|---|
//! | half-space – anything | the other's support point (or, for a box or a mesh, every corner with an exact sign) against the plane |
//! | sphere/capsule – sphere/capsule | segment–segment distance ≤ `r_a + r_b` |
//! | sphere – cuboid / cylinder | closest point of the box / cylinder (clamping), distance ≤ `r` |
//! | capsule – cuboid / cylinder, cylinder – cuboid / cylinder | GJK distance (module `gjk`) ≤ `r` (or ≤ `1e-13` of the size) |
//! | cuboid – cuboid | exact: `orient3d`-based triangle–triangle tests on the 12 + 12 triangles of the placed boxes (B's corners mapped into A's frame once), then one corner of each inside the other |
//! | primitive – mesh | the mesh's [`BalancedTree`] gives the triangles whose boxes meet the primitive's; sphere/capsule–triangle by point/segment–triangle distance, cuboid–triangle by the exact triangle tests plus corner-in-box, cylinder–triangle by GJK; when no triangle touches, the primitive's centre located exactly in the mesh decides nesting |
//!
//! The curved tests are closed form in `f64`: a pair closer to touching than about `1e-12` of
//! its size may go either way.

use super::ball::tree_candidates;
use super::closest::{
    on_box, on_cylinder, on_triangle, segment_segment, segment_triangle_distance,
};
use super::exact::sign_of_sum_of_products;
use super::gjk;
use super::polytope::{BOX_QUADS, box_corner};
use super::{Primitive, PrimitiveError, check_pose};
use crate::bvh::BalancedTree;
use crate::containment::{PointLocation, locate_point};
use crate::pose::DPose;
use crate::topology::Solid;
use crate::tri_tri::{orient3d_sign, triangles_intersect};
use glam::DVec3;

/// The core of a sphere or capsule (a segment, possibly a point, in the local frame) and its
/// radius.
fn core(p: &Primitive) -> Option<(DVec3, DVec3, f64)> {
    match *p {
        Primitive::Sphere { radius } => Some((DVec3::ZERO, DVec3::ZERO, radius)),
        Primitive::Capsule {
            half_length,
            radius,
        } => Some((
            DVec3::new(0.0, -half_length, 0.0),
            DVec3::new(0.0, half_length, 0.0),
            radius,
        )),
        _ => None,
    }
}

/// The support function of a bounded primitive's solid (or core, `core_only`) placed by `pose`.
fn support(p: Primitive, pose: DPose, core_only: bool) -> impl Fn(DVec3) -> DVec3 {
    let rt = pose.rotation.transpose();
    move |d: DVec3| {
        let local = rt * d;
        let s = if core_only {
            match core(&p) {
                Some((a, b, _)) => {
                    if local.dot(b - a) >= 0.0 {
                        b
                    } else {
                        a
                    }
                }
                None => p.local_support(local).unwrap_or(DVec3::ZERO),
            }
        } else {
            p.local_support(local).unwrap_or(DVec3::ZERO)
        };
        pose.transform_dpoint(s)
    }
}

/// The 12 triangles of a box given its 8 corners (outward).
fn box_triangles(corners: &[DVec3; 8]) -> [[DVec3; 3]; 12] {
    let mut out = [[DVec3::ZERO; 3]; 12];
    for (f, q) in BOX_QUADS.iter().enumerate() {
        out[2 * f] = [corners[q[0]], corners[q[1]], corners[q[2]]];
        out[2 * f + 1] = [corners[q[0]], corners[q[2]], corners[q[3]]];
    }
    out
}

/// Whether `p` lies in the closed convex polyhedron bounded by the outward triangles `tris`
/// (exact `orient3d` signs).
fn in_convex(tris: &[[DVec3; 3]], p: DVec3) -> bool {
    tris.iter().all(|t| orient3d_sign(t[0], t[1], t[2], p) >= 0)
}

/// Exact: do the box `[-ha, ha]` and the box with the given (placed, same frame) corners meet?
fn boxes_meet(ha: DVec3, b: &[DVec3; 8]) -> bool {
    let a: [DVec3; 8] = std::array::from_fn(|k| box_corner(ha, k));
    // Quick rejection on A's axes with a margin (an overlapping pair is never rejected).
    for k in 0..3 {
        let (lo, hi) = b
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), p| {
                (l.min(p[k]), h.max(p[k]))
            });
        let margin = 1e-9 * (1.0 + ha[k] + lo.abs().max(hi.abs()));
        if lo > ha[k] + margin || hi < -ha[k] - margin {
            return false;
        }
    }
    let ta = box_triangles(&a);
    let tb = box_triangles(b);
    if ta
        .iter()
        .any(|x| tb.iter().any(|y| triangles_intersect(*x, *y)))
    {
        return true;
    }
    b[0].abs().cmple(ha).all() || in_convex(&tb, a[0])
}

/// Do the primitives share a point? See the module documentation for the test per pair.
pub fn primitives_intersect(
    a: &Primitive,
    pose_a: &DPose,
    b: &Primitive,
    pose_b: &DPose,
) -> Result<bool, PrimitiveError> {
    check_pose(pose_a, "A")?;
    check_pose(pose_b, "B")?;
    Ok(intersect_checked(a, pose_a, b, pose_b))
}

fn intersect_checked(a: &Primitive, pose_a: &DPose, b: &Primitive, pose_b: &DPose) -> bool {
    // B in A's frame.
    let rel = pose_a.inverse().mul(pose_b);
    match (*a, *b) {
        (Primitive::HalfSpace { normal: na }, Primitive::HalfSpace { normal: nb }) => {
            let nb = rel.rotation * nb;
            if (na + nb).length() > 1e-12 {
                true
            } else {
                // Opposite normals: B = {na·x ≥ na·t}, A = {na·x ≤ 0}.
                na.dot(rel.translation) <= 0.0
            }
        }
        (Primitive::HalfSpace { normal }, _) => half_space_meets(normal, b, &rel),
        (_, Primitive::HalfSpace { .. }) => intersect_checked(b, pose_b, a, pose_a),
        _ => {
            if let (Some((a0, a1, ra)), Some((b0, b1, rb))) = (core(a), core(b)) {
                let (x, y) =
                    segment_segment(a0, a1, rel.transform_dpoint(b0), rel.transform_dpoint(b1));
                return (x - y).length() <= ra + rb;
            }
            if core(a).is_none() && core(b).is_some() {
                return intersect_checked(b, pose_b, a, pose_a);
            }
            // Here B is a cuboid or a cylinder; A anything bounded. Work in B's frame.
            let a_in_b = rel.inverse();
            match (*a, *b) {
                (Primitive::Sphere { radius }, Primitive::Cuboid { half_extents }) => {
                    let c = a_in_b.translation;
                    (on_box(c, half_extents) - c).length() <= radius
                }
                (
                    Primitive::Sphere { radius },
                    Primitive::Cylinder {
                        half_height,
                        radius: rc,
                    },
                ) => {
                    let c = a_in_b.translation;
                    (on_cylinder(c, half_height, rc) - c).length() <= radius
                }
                (
                    Primitive::Cuboid { half_extents: ha },
                    Primitive::Cuboid { half_extents: hb },
                ) => {
                    let corners: [DVec3; 8] =
                        std::array::from_fn(|k| rel.transform_dpoint(box_corner(hb, k)));
                    boxes_meet(ha, &corners)
                }
                _ => {
                    let r = core(a).map_or(0.0, |c| c.2);
                    let scale = a.scale() + b.scale();
                    let dist = gjk::distance(
                        support(*a, a_in_b, true),
                        support(*b, DPose::IDENTITY, false),
                        scale,
                    );
                    dist <= r
                }
            }
        }
    }
}

/// Half-space `normal · x ≤ 0` (frame A) against bounded B placed in A's frame by `rel`.
fn half_space_meets(normal: DVec3, b: &Primitive, rel: &DPose) -> bool {
    let below = |p: DVec3| {
        sign_of_sum_of_products(&[(normal.x, p.x), (normal.y, p.y), (normal.z, p.z)]) <= 0
    };
    match *b {
        Primitive::Cuboid { half_extents } => {
            (0..8).any(|k| below(rel.transform_dpoint(box_corner(half_extents, k))))
        }
        _ => match core(b) {
            Some((p, q, r)) => {
                let h = normal
                    .dot(rel.transform_dpoint(p))
                    .min(normal.dot(rel.transform_dpoint(q)));
                h <= r
            }
            None => {
                let local = rel.rotation.transpose() * -normal;
                b.local_support(local)
                    .is_some_and(|s| below(rel.transform_dpoint(s)))
            }
        },
    }
}

/// Does the primitive (placed by `pose`) share a point with the closed mesh `solid` (placed by
/// `solid_pose`, `tree` built over it)? See the module documentation.
pub fn primitive_solid_intersect(
    p: &Primitive,
    pose: &DPose,
    solid: &Solid,
    tree: &BalancedTree,
    solid_pose: &DPose,
) -> Result<bool, PrimitiveError> {
    check_pose(pose, "the primitive")?;
    check_pose(solid_pose, "the mesh")?;
    if tree.triangle_count() != solid.triangle_count() {
        return Err(PrimitiveError::TreeMismatch {
            tree: tree.triangle_count(),
            mesh: solid.triangle_count(),
        });
    }
    // The primitive in the mesh's frame.
    let rel = solid_pose.inverse().mul(pose);
    let tri = |t: usize| solid.triangle(t).map(|v| v.as_dvec3());
    if let Primitive::HalfSpace { normal } = *p {
        let n = rel.rotation * normal;
        let c = n.dot(rel.translation);
        return Ok(solid.vertices().iter().any(|v| {
            let v = v.as_dvec3();
            sign_of_sum_of_products(&[(n.x, v.x), (n.y, v.y), (n.z, v.z), (-1.0, c)]) <= 0
        }));
    }
    let Some((lo, hi)) = p.world_bounds(&rel) else {
        return Ok(false);
    };
    let candidates = tree_candidates(tree, lo, hi);
    let touches = |t: [DVec3; 3]| -> bool {
        match *p {
            Primitive::Sphere { radius } => {
                let c = rel.translation;
                (on_triangle(c, t[0], t[1], t[2]) - c).length() <= radius
            }
            Primitive::Capsule { .. } => {
                let (a, b, r) = core(p).unwrap_or((DVec3::ZERO, DVec3::ZERO, 0.0));
                segment_triangle_distance(rel.transform_dpoint(a), rel.transform_dpoint(b), t) <= r
            }
            Primitive::Cuboid { half_extents } => {
                let corners: [DVec3; 8] =
                    std::array::from_fn(|k| rel.transform_dpoint(box_corner(half_extents, k)));
                let bt = box_triangles(&corners);
                bt.iter().any(|x| triangles_intersect(*x, t)) || in_convex(&bt, t[0])
            }
            _ => {
                let scale = p.scale() + (t[1] - t[0]).length() + (t[2] - t[0]).length();
                let tri_support = move |d: DVec3| {
                    let (a, b, c) = (t[0].dot(d), t[1].dot(d), t[2].dot(d));
                    if a >= b && a >= c {
                        t[0]
                    } else if b >= c {
                        t[1]
                    } else {
                        t[2]
                    }
                };
                gjk::distance(support(*p, rel, false), tri_support, scale) <= 0.0
            }
        }
    };
    if candidates.into_iter().any(|t| touches(tri(t))) {
        return Ok(true);
    }
    // No triangle meets the solid primitive: it is inside the mesh or apart from it.
    Ok(matches!(
        locate_point(solid, rel.translation),
        PointLocation::Inside | PointLocation::Boundary
    ))
}

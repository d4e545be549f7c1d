//! Exact point-in-solid location and solid-in-solid containment.
//!
//! Implements the rest of CInDeR (Knott & Pai 2003) Theorem 1 (Section 3.1: solids interfere iff
//! an edge of one meets the volume of the other): when no edge meets the other *surface*, an
//! edge meets the other volume only if its whole surface component lies inside, which one
//! point-in-solid test per connected component decides. The point test is the boundary-crossing
//! count of Section 3.2, done exactly on the CPU.
//!
//! [`locate_point`] casts a ray from the point and sums signed crossings (the winding number, so
//! overlapping shells of a merged mesh count as inside under the non-zero rule). Every decision
//! is made with exact `orient3d` signs: a point on a triangle is reported as
//! [`PointLocation::Boundary`]; a ray that meets an edge or a vertex exactly, or slides along a
//! triangle's plane through it, is abandoned and another direction from a fixed pseudo-random
//! sequence is tried, so the answer is exact and deterministic.

use crate::mesh::TriMesh;
use crate::pose::DPose;
use crate::topology::Solid;
use crate::tri_tri::{
    orient3d_sign, point_in_triangle, projection_axis, segment_intersects_triangle,
};
use glam::DVec3;

/// Where a point lies relative to a closed oriented surface.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PointLocation {
    /// Strictly inside (non-zero winding number).
    Inside,
    /// Strictly outside (zero winding number).
    Outside,
    /// Exactly on a triangle of the surface.
    Boundary,
}

/// Which solid contains the other, for two solids whose surfaces do not meet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Containment {
    /// All of A lies inside B.
    AInsideB,
    /// All of B lies inside A.
    BInsideA,
    /// Some but not all connected surface components of one solid lie inside the other (only
    /// possible for solids made of several shells): the interiors overlap, but neither solid
    /// contains the other.
    ComponentsNested,
}

/// How many ray directions are tried before giving up. With finite inputs a direction fails only
/// when the ray meets an edge exactly, which pseudo-random directions essentially never do.
const MAX_RAYS: u32 = 64;

/// Locates `p` relative to the closed, outward-oriented surface `solid` (normally a [`Solid`],
/// which dereferences to its [`TriMesh`]), in the mesh's own coordinates. Exact.
///
/// Only a surface with non-finite coordinates can defeat every ray; the answer is then
/// `Outside`.
pub fn locate_point(solid: &TriMesh, p: DVec3) -> PointLocation {
    let verts: Vec<DVec3> = solid.vertices().iter().map(|v| v.as_dvec3()).collect();
    locate_in(&verts, solid.triangles(), p)
}

/// Like [`locate_point`], with the surface first placed by `pose` (its vertices mapped with
/// [`DPose::transform_point`], as in every pair test), and `p` given in the target frame.
pub fn locate_point_posed(solid: &TriMesh, pose: &DPose, p: DVec3) -> PointLocation {
    let verts: Vec<DVec3> = solid
        .vertices()
        .iter()
        .map(|&v| pose.transform_point(v))
        .collect();
    locate_in(&verts, solid.triangles(), p)
}

/// A deterministic sequence of well-spread, irregular directions.
fn direction(attempt: u32) -> DVec3 {
    if attempt == 0 {
        return DVec3::new(0.5772, 0.7317, 0.4093);
    }
    let mut state =
        0x9E37_79B9_7F4A_7C15u64 ^ u64::from(attempt).wrapping_mul(0xD1B5_4A32_D192_ED03);
    let mut next = || {
        // splitmix64
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    loop {
        let d = DVec3::new(next(), next(), next());
        let len2 = d.length_squared();
        if len2 > 0.01 && len2 <= 1.0 {
            return d;
        }
    }
}

fn bounds(points: impl IntoIterator<Item = DVec3>) -> (DVec3, DVec3) {
    points.into_iter().fold(
        (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)),
        |(lo, hi), v| (lo.min(v), hi.max(v)),
    )
}

#[inline]
fn boxes_overlap(a: (DVec3, DVec3), b: (DVec3, DVec3)) -> bool {
    a.0.cmple(b.1).all() && b.0.cmple(a.1).all()
}

/// The winding number of the surface around `p` along the ray `p → r` (with `r` outside the
/// surface's bounding box), or `None` when the ray meets an edge, a vertex, or runs inside a
/// triangle's plane through the triangle. `p` must not lie on the surface.
fn cast(verts: &[DVec3], tris: &[[u32; 3]], p: DVec3, r: DVec3) -> Option<i64> {
    let seg_box = (p.min(r), p.max(r));
    let mut winding = 0i64;
    for tri in tris {
        let t = tri.map(|i| verts[i as usize]);
        if !boxes_overlap(seg_box, bounds(t)) {
            continue;
        }
        // A zero-area triangle encloses nothing; a ray through it meets its neighbours' edges.
        if projection_axis(t[0], t[1], t[2]).is_none() {
            continue;
        }
        let sp = orient3d_sign(t[0], t[1], t[2], p);
        let sr = orient3d_sign(t[0], t[1], t[2], r);
        if sp == 0 {
            // p is in the plane but not in the triangle: the ray touches the plane only at p,
            // unless it runs in the plane, where meeting the triangle is ambiguous.
            if sr == 0 && segment_intersects_triangle(p, r, t) {
                return None;
            }
            continue;
        }
        // r lies outside the bounding box, so never on the triangle: sr == 0 is a miss too.
        if sp * sr >= 0 {
            continue;
        }
        let s = [
            orient3d_sign(p, r, t[0], t[1]),
            orient3d_sign(p, r, t[1], t[2]),
            orient3d_sign(p, r, t[2], t[0]),
        ];
        if s.iter().any(|&x| x < 0) && s.iter().any(|&x| x > 0) {
            continue;
        }
        if s.contains(&0) {
            return None;
        }
        // p behind the triangle (orient3d > 0): the ray leaves the solid here.
        winding += if sp > 0 { 1 } else { -1 };
    }
    Some(winding)
}

/// The box of the corners of `tris`.
fn surface_box(verts: &[DVec3], tris: &[[u32; 3]]) -> (DVec3, DVec3) {
    bounds(tris.iter().flatten().map(|&i| verts[i as usize]))
}

fn locate_in(verts: &[DVec3], tris: &[[u32; 3]], p: DVec3) -> PointLocation {
    let within = surface_box(verts, tris);
    // The first ray runs along +x: the box around its segment is flat in y and z, so nearly
    // every triangle is rejected by its box before any predicate (a ray in a general direction
    // has a box about as large as the surface's, and each triangle in it went to `orient3d`). A
    // ray that meets an edge or a vertex exactly is abandoned for the pseudo-random directions,
    // as before; the answer is exact, so the same, whatever the direction.
    locate_with(verts, tris, within, p, &[DVec3::X]).0
}

/// [`locate_in`] in the box `(lo, hi)` (holding every vertex of `tris`), trying the directions
/// `first` before the pseudo-random sequence; also returns how many rays were abandoned (for
/// tests of the degenerate-ray handling).
fn locate_with(
    verts: &[DVec3],
    tris: &[[u32; 3]],
    (lo, hi): (DVec3, DVec3),
    p: DVec3,
    first: &[DVec3],
) -> (PointLocation, usize) {
    if !p.is_finite() {
        return (PointLocation::Outside, 0);
    }
    if !(p.cmpge(lo).all() && p.cmple(hi).all()) {
        return (PointLocation::Outside, 0);
    }
    for tri in tris {
        let t = tri.map(|i| verts[i as usize]);
        if boxes_overlap((p, p), bounds(t)) && point_in_triangle(p, t) {
            return (PointLocation::Boundary, 0);
        }
    }
    let reach = (hi - lo).length() + 1.0;
    let directions = first.iter().copied().chain((0..MAX_RAYS).map(direction));
    for (abandoned, d) in directions.enumerate() {
        let mut len = 2.0 * reach;
        let mut r = p + d * len;
        // The ray must end outside the box (finite coordinates reach it in a few doublings).
        for _ in 0..64 {
            if r.cmplt(lo).any() || r.cmpgt(hi).any() {
                break;
            }
            len *= 2.0;
            r = p + d * len;
        }
        if !(r.cmplt(lo).any() || r.cmpgt(hi).any()) {
            continue;
        }
        if let Some(w) = cast(verts, tris, p, r) {
            let location = if w != 0 {
                PointLocation::Inside
            } else {
                PointLocation::Outside
            };
            return (location, abandoned);
        }
    }
    (PointLocation::Outside, first.len() + MAX_RAYS as usize)
}

/// For each connected surface component of `probe` (its vertices, `components`, placed by
/// `place`), whether it lies inside the surface `tris` over the vertices `verts()` (made only if
/// a ray is cast), whose vertices lie in `reach`: the first vertex not on that surface decides
/// (a component lying wholly on the surface counts as outside, since it does not enter the
/// interior). A vertex outside `reach` is outside the surface without a ray, as
/// [`locate_in`] would find from the surface's own box.
fn components_inside<'v>(
    components: &[Vec<u32>],
    place: impl Fn(u32) -> DVec3,
    reach: (DVec3, DVec3),
    verts: impl Fn() -> &'v [DVec3],
    tris: &[[u32; 3]],
) -> Vec<bool> {
    components
        .iter()
        .map(|comp| {
            comp.iter()
                .map(|&v| {
                    let p = place(v);
                    if p.cmpge(reach.0).all() && p.cmple(reach.1).all() {
                        locate_in(verts(), tris, p)
                    } else {
                        PointLocation::Outside
                    }
                })
                .find(|&loc| loc != PointLocation::Boundary)
                == Some(PointLocation::Inside)
        })
        .collect()
}

/// A box holding every vertex of `solid` placed by `pose` (as [`DPose::transform_point`] places
/// them): its box's corners placed, widened by far more than the placement's rounding.
fn placed_reach(solid: &Solid, pose: &DPose) -> (DVec3, DVec3) {
    let (lo, hi) = solid.bounds();
    let corners = (0..8).map(|k| {
        let pick = |bit: usize, l: f64, h: f64| if k & bit == 0 { l } else { h };
        pose.transform_dpoint(DVec3::new(
            pick(1, lo.x, hi.x),
            pick(2, lo.y, hi.y),
            pick(4, lo.z, hi.z),
        ))
    });
    let (plo, phi) = bounds(corners);
    let size = plo.abs().max(phi.abs()).max_element() + pose.translation.abs().max_element();
    let margin = 1e-9 * (size + (hi - lo).max_element()) + f64::MIN_POSITIVE;
    (plo - margin, phi + margin)
}

/// Whether one solid contains the other, with B placed in A's frame by `b_to_a`.
///
/// Valid only when no triangle pair of the two surfaces intersects (for example when
/// [`crate::brute_force::first_hit_brute`] or a BVH traversal found none): then every connected
/// surface component lies wholly inside or wholly outside the other solid, and one vertex per
/// component decides. Returns `None` when the solids are disjoint. All tests run exactly on
/// A's coordinates and B's vertices mapped with [`DPose::transform_point`].
pub fn containment(a: &Solid, b: &Solid, b_to_a: &DPose) -> Option<Containment> {
    // The vertices in f64 (A's as they are, B's placed), made only when a ray is cast: most
    // calls (surfaces apart, boxes overlapping) decide from the boxes alone.
    let a_verts = std::cell::OnceCell::new();
    let b_verts = std::cell::OnceCell::new();
    let a_verts = || -> &[DVec3] {
        a_verts.get_or_init(|| {
            a.vertices()
                .iter()
                .map(|v| v.as_dvec3())
                .collect::<Vec<_>>()
        })
    };
    let b_verts = || -> &[DVec3] {
        b_verts.get_or_init(|| {
            b.vertices()
                .iter()
                .map(|&v| b_to_a.transform_point(v))
                .collect::<Vec<_>>()
        })
    };
    let b_in_a = components_inside(
        b.components(),
        |v| b_to_a.transform_point(b.vertices()[v as usize]),
        a.bounds(),
        a_verts,
        a.triangles(),
    );
    if !b_in_a.is_empty() && b_in_a.iter().all(|&x| x) {
        return Some(Containment::BInsideA);
    }
    let a_in_b = components_inside(
        a.components(),
        |v| a.vertices()[v as usize].as_dvec3(),
        placed_reach(b, b_to_a),
        b_verts,
        b.triangles(),
    );
    if !a_in_b.is_empty() && a_in_b.iter().all(|&x| x) {
        return Some(Containment::AInsideB);
    }
    if b_in_a.iter().chain(&a_in_b).any(|&x| x) {
        return Some(Containment::ComponentsNested);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::brute_force::{all_pairs_brute, first_hit_brute};
    use crate::pose::Pose;
    use crate::shapes::{cuboid, cylinder, icosphere, subdivided_cuboid, torus, uv_sphere};
    use glam::{DMat3, Vec3};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Independent exact oracle for convex solids: inside iff strictly behind every face plane,
    /// on the boundary iff behind or on all and on at least one.
    fn convex_oracle(mesh: &TriMesh, p: DVec3) -> PointLocation {
        let mut on = false;
        for t in 0..mesh.triangle_count() {
            let [a, b, c] = mesh.triangle(t).map(|v| v.as_dvec3());
            match orient3d_sign(a, b, c, p) {
                s if s < 0 => return PointLocation::Outside,
                0 => on = true,
                _ => {}
            }
        }
        if on {
            PointLocation::Boundary
        } else {
            PointLocation::Inside
        }
    }

    fn random_point(rng: &mut ChaCha8Rng, r: f64) -> DVec3 {
        DVec3::new(
            rng.random_range(-r..r),
            rng.random_range(-r..r),
            rng.random_range(-r..r),
        )
    }

    use crate::test_support::random_pose;

    #[test]
    fn convex_solids_agree_with_exact_face_oracle() {
        let mut rng = ChaCha8Rng::seed_from_u64(21);
        let solids = [
            cuboid(Vec3::new(1.0, 0.5, 2.0)).unwrap(),
            icosphere(1.0, 1).unwrap(),
            cylinder(1.0, 0.75, 12).unwrap(),
        ];
        let mut seen = [0usize; 3];
        for solid in &solids {
            let mut points: Vec<DVec3> = (0..150).map(|_| random_point(&mut rng, 2.2)).collect();
            let v: Vec<DVec3> = solid.vertices().iter().map(|v| v.as_dvec3()).collect();
            for t in solid.triangles() {
                let [a, b, c] = t.map(|i| v[i as usize]);
                // Vertices and exact edge midpoints (f32 inputs average exactly in f64), points
                // on the edge lines beyond the ends, and centroids (oracle decides).
                points.extend([a, (a + b) * 0.5, a + (b - a) * 2.0, (a + b + c) / 3.0]);
            }
            for p in points {
                let expected = convex_oracle(solid, p);
                seen[expected as usize] += 1;
                assert_eq!(locate_point(solid, p), expected, "{p:?}");
            }
        }
        assert!(seen.iter().all(|&n| n > 50), "{seen:?}");
    }

    #[test]
    fn rays_through_edges_and_vertices_are_abandoned() {
        // Lattice solids probed from lattice points with axis and diagonal rays first: such rays
        // run through edges, vertices and along face planes; the answer must not change.
        let axes: Vec<DVec3> = [
            (1.0, 0.0, 0.0),
            (0.0, -1.0, 0.0),
            (0.0, 0.0, 1.0),
            (1.0, 1.0, 0.0),
            (1.0, 1.0, 1.0),
            (-1.0, 0.0, 1.0),
        ]
        .iter()
        .map(|&(x, y, z)| DVec3::new(x, y, z))
        .collect();
        let mut abandoned_total = 0;
        let mut seen = [0usize; 3];
        for solid in [
            cuboid(Vec3::ONE).unwrap(),
            subdivided_cuboid(Vec3::new(2.0, 1.0, 1.0), 4).unwrap(),
        ] {
            let verts: Vec<DVec3> = solid.vertices().iter().map(|v| v.as_dvec3()).collect();
            for x in -6..=6 {
                for y in -3..=3 {
                    for z in -3..=3 {
                        let p = DVec3::new(x as f64, y as f64, z as f64) * 0.5;
                        let expected = convex_oracle(&solid, p);
                        seen[expected as usize] += 1;
                        let within = surface_box(&verts, solid.triangles());
                        let (got, abandoned) =
                            locate_with(&verts, solid.triangles(), within, p, &axes);
                        assert_eq!(got, expected, "{p:?}");
                        abandoned_total += abandoned;
                    }
                }
            }
        }
        assert!(seen.iter().all(|&n| n > 20), "{seen:?}");
        assert!(abandoned_total > 100, "{abandoned_total}");
    }

    #[test]
    fn cube_faces_edges_and_vertices_are_boundary() {
        let cube = cuboid(Vec3::ONE).unwrap();
        let d = DVec3::new;
        for p in [
            d(1.0, 0.3, -0.2),
            d(0.0, 0.0, -1.0),
            d(1.0, 1.0, 0.25),
            d(-1.0, 1.0, -1.0),
            d(1.0, 0.0, 0.0),
        ] {
            assert_eq!(locate_point(&cube, p), PointLocation::Boundary, "{p:?}");
        }
        assert_eq!(
            locate_point(&cube, d(1.0f64.next_down(), 0.3, -0.2)),
            PointLocation::Inside
        );
        assert_eq!(
            locate_point(&cube, d(1.0f64.next_up(), 0.3, -0.2)),
            PointLocation::Outside
        );
        // On a face plane or an edge line, but off the surface; the centre, where every
        // axis-aligned ray would graze edges of the face diagonals.
        assert_eq!(
            locate_point(&cube, d(1.0, 3.0, 0.0)),
            PointLocation::Outside
        );
        assert_eq!(
            locate_point(&cube, d(1.0, 1.0, 5.0)),
            PointLocation::Outside
        );
        assert_eq!(locate_point(&cube, d(0.0, 0.0, 0.0)), PointLocation::Inside);
        assert_eq!(locate_point(&cube, d(0.5, 0.5, 0.5)), PointLocation::Inside);
        assert_eq!(
            locate_point(&cube, d(f64::NAN, 0.0, 0.0)),
            PointLocation::Outside
        );
    }

    #[test]
    fn posed_sphere_and_cube_agree_with_analytic_tests() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let sphere = uv_sphere(1.0, 24, 12).unwrap();
        // Inscribed radius of the polyhedron, from its face planes.
        let r_in = (0..sphere.triangle_count())
            .map(|t| {
                let [a, ..] = sphere.triangle(t).map(|v| v.as_dvec3());
                let n = sphere.face_normal_f64(t).normalize();
                a.dot(n).abs()
            })
            .fold(f64::INFINITY, f64::min);
        let cube = cuboid(Vec3::new(0.7, 1.1, 0.4)).unwrap();
        let mut decided = 0;
        for _ in 0..8 {
            let pose = random_pose(&mut rng, 3.0);
            let inv = pose.inverse();
            for _ in 0..40 {
                let p = pose.translation + random_point(&mut rng, 1.3);
                let local = inv.transform_dpoint(p);
                let expected = if local.length() < r_in - 1e-6 {
                    Some(PointLocation::Inside)
                } else if local.length() > 1.0 + 1e-6 {
                    Some(PointLocation::Outside)
                } else {
                    None
                };
                if let Some(e) = expected {
                    decided += 1;
                    assert_eq!(locate_point_posed(&sphere, &pose, p), e, "{local:?}");
                }
                let margin = DVec3::new(0.7, 1.1, 0.4) - local.abs();
                let expected = if margin.min_element() > 1e-9 {
                    Some(PointLocation::Inside)
                } else if margin.min_element() < -1e-9 {
                    Some(PointLocation::Outside)
                } else {
                    None
                };
                if let Some(e) = expected {
                    assert_eq!(locate_point_posed(&cube, &pose, p), e, "{local:?}");
                }
            }
        }
        assert!(decided > 250, "{decided}");
    }

    #[test]
    fn torus_agrees_with_analytic_test() {
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let (major, minor) = (2.0, 0.5);
        let t = torus(major, minor, 32, 16).unwrap();
        let (mut inside, mut outside) = (0, 0);
        for _ in 0..300 {
            let p = random_point(&mut rng, 2.6);
            let tube = ((p.x.hypot(p.y) - f64::from(major)).powi(2) + p.z * p.z).sqrt();
            // Polygonal tube and ring: stay clear of the faceting band.
            if tube < 0.45 {
                inside += 1;
                assert_eq!(locate_point(&t, p), PointLocation::Inside, "{p:?}");
            } else if tube > 0.52 {
                outside += 1;
                assert_eq!(locate_point(&t, p), PointLocation::Outside, "{p:?}");
            }
        }
        assert!(inside > 10 && outside > 100, "{inside} {outside}");
        // The hole's centre is outside.
        assert_eq!(locate_point(&t, DVec3::ZERO), PointLocation::Outside);
    }

    #[test]
    fn nested_solids_at_random_poses() {
        let mut rng = ChaCha8Rng::seed_from_u64(13);
        let big = icosphere(2.0, 2).unwrap();
        let small = cuboid(Vec3::new(0.5, 0.3, 0.4)).unwrap();
        for _ in 0..6 {
            let pose = random_pose(&mut rng, 0.6);
            assert_eq!(first_hit_brute(&big, &small, &pose), None);
            assert_eq!(
                containment(&big, &small, &pose),
                Some(Containment::BInsideA)
            );
            assert_eq!(
                containment(&small, &big, &pose.inverse()),
                Some(Containment::AInsideB)
            );
            // Far away: disjoint.
            let mut far = pose;
            far.translation += DVec3::new(10.0, -3.0, 1.0);
            assert_eq!(containment(&big, &small, &far), None);
            assert_eq!(containment(&small, &big, &far.inverse()), None);
        }
        // Nested spheres.
        let inner = icosphere(1.0, 1).unwrap();
        let pose = random_pose(&mut rng, 0.5);
        assert_eq!(
            containment(&big, &inner, &pose),
            Some(Containment::BInsideA)
        );
    }

    #[test]
    fn sphere_in_torus_hole_is_not_contained() {
        let t = torus(2.0, 0.5, 32, 16).unwrap();
        let ball = icosphere(1.0, 2).unwrap();
        let id = DPose::IDENTITY;
        assert!(all_pairs_brute(&t, &ball, &id).is_empty());
        assert_eq!(containment(&t, &ball, &id), None);
        assert_eq!(containment(&ball, &t, &id), None);
        // A small ball inside the tube is contained.
        let small = icosphere(0.2, 1).unwrap();
        let in_tube = DPose {
            rotation: DMat3::IDENTITY,
            translation: DVec3::new(0.0, 2.0, 0.0),
        };
        assert!(all_pairs_brute(&t, &small, &in_tube).is_empty());
        assert_eq!(
            containment(&t, &small, &in_tube),
            Some(Containment::BInsideA)
        );
    }

    #[test]
    fn multi_shell_solids() {
        let big = cuboid(Vec3::splat(2.0)).unwrap();
        let shift = |v: Vec3| Pose::from_translation(v);
        let a = icosphere(0.5, 1).unwrap().transformed(&shift(Vec3::ZERO));
        let b = icosphere(0.5, 1)
            .unwrap()
            .transformed(&shift(Vec3::new(10.0, 0.0, 0.0)));
        let two = Solid::new(TriMesh::merge(&[&a, &b]).unwrap()).unwrap();
        let id = DPose::IDENTITY;
        assert_eq!(
            containment(&big, &two, &id),
            Some(Containment::ComponentsNested)
        );
        assert_eq!(
            containment(&two, &big, &id),
            Some(Containment::ComponentsNested)
        );
        let near = icosphere(0.5, 1)
            .unwrap()
            .transformed(&shift(Vec3::new(1.0, 0.0, 0.0)));
        let both_in = Solid::new(TriMesh::merge(&[&a, &near]).unwrap()).unwrap();
        assert_eq!(
            containment(&big, &both_in, &id),
            Some(Containment::BInsideA)
        );
        // Overlapping shells of one merged mesh: the overlap is inside (non-zero winding).
        let overlap = icosphere(0.5, 1)
            .unwrap()
            .transformed(&shift(Vec3::new(0.25, 0.0, 0.0)));
        let merged = TriMesh::merge(&[&a, &overlap]).unwrap();
        assert_eq!(
            locate_point(&merged, DVec3::new(0.1, 0.0, 0.0)),
            PointLocation::Inside
        );
    }

    /// The containment of two solids as the rays alone decide it: every component's vertices
    /// located in order by a full ray cast (no cached boxes, no shortcut), the first not on the
    /// surface deciding.
    fn containment_by_rays(a: &Solid, b: &Solid, b_to_a: &DPose) -> Option<Containment> {
        let a_verts: Vec<DVec3> = a.vertices().iter().map(|v| v.as_dvec3()).collect();
        let b_verts: Vec<DVec3> = b
            .vertices()
            .iter()
            .map(|&v| b_to_a.transform_point(v))
            .collect();
        let inside = |probe: &[DVec3], mesh: &Solid, verts: &[DVec3], tris: &[[u32; 3]]| {
            crate::topology::components(mesh)
                .iter()
                .map(|comp| {
                    comp.iter()
                        .map(|&v| locate_in(verts, tris, probe[v as usize]))
                        .find(|&l| l != PointLocation::Boundary)
                        == Some(PointLocation::Inside)
                })
                .collect::<Vec<_>>()
        };
        let b_in_a = inside(&b_verts, b, &a_verts, a.triangles());
        let a_in_b = inside(&a_verts, a, &b_verts, b.triangles());
        if !b_in_a.is_empty() && b_in_a.iter().all(|&x| x) {
            Some(Containment::BInsideA)
        } else if !a_in_b.is_empty() && a_in_b.iter().all(|&x| x) {
            Some(Containment::AInsideB)
        } else if b_in_a.iter().chain(&a_in_b).any(|&x| x) {
            Some(Containment::ComponentsNested)
        } else {
            None
        }
    }

    /// [`containment`] decides most calls from cached boxes and components; it must answer as
    /// the rays alone do: random poses (nested, apart, overlapping boxes) of convex, holed and
    /// multi-shell solids, faces touching and coplanar, and far from the origin.
    #[test]
    fn box_shortcuts_answer_as_the_rays() {
        let mut rng = ChaCha8Rng::seed_from_u64(31);
        let shift = |v: Vec3| Pose::from_translation(v);
        let two = {
            let a = icosphere(0.3, 1).unwrap().transformed(&shift(Vec3::ZERO));
            let b = icosphere(0.3, 1)
                .unwrap()
                .transformed(&shift(Vec3::new(1.2, 0.0, 0.0)));
            Solid::new(TriMesh::merge(&[&a, &b]).unwrap()).unwrap()
        };
        let far = |m: Solid| {
            Solid::new(
                m.mesh()
                    .transformed(&shift(Vec3::new(3.0e5, -2.0e5, 1.0e5))),
            )
            .unwrap()
        };
        let solids = [
            icosphere(1.5, 2).unwrap(),
            cuboid(Vec3::new(0.5, 0.3, 0.4)).unwrap(),
            cuboid(Vec3::splat(0.5)).unwrap(),
            torus(1.0, 0.3, 16, 8).unwrap(),
            two,
            far(icosphere(1.5, 1).unwrap()),
            far(cuboid(Vec3::splat(0.2)).unwrap()),
        ];
        let mut decided = [0usize; 4];
        let mut check = |a: &Solid, b: &Solid, pose: &DPose| {
            if first_hit_brute(a, b, pose).is_some() {
                return;
            }
            let want = containment_by_rays(a, b, pose);
            assert_eq!(containment(a, b, pose), want, "{pose:?}");
            decided[match want {
                None => 0,
                Some(Containment::BInsideA) => 1,
                Some(Containment::AInsideB) => 2,
                Some(Containment::ComponentsNested) => 3,
            }] += 1;
        };
        for a in &solids {
            for b in &solids {
                for k in 0..40 {
                    let mut pose = random_pose(&mut rng, 0.2 + 0.05 * k as f32);
                    if k % 4 == 0 {
                        pose.rotation = DMat3::IDENTITY;
                    }
                    check(a, b, &pose);
                }
                // Coplanar and touching: B's placed faces on A's, by whole-number shifts.
                for t in [0.0, 0.1, 0.2, 0.3, 0.5, 1.0] {
                    let pose = DPose {
                        rotation: DMat3::IDENTITY,
                        translation: DVec3::new(t, 0.0, 0.0),
                    };
                    check(a, b, &pose);
                }
            }
        }
        // Every kind of answer came up.
        assert!(decided.iter().all(|&n| n > 0), "{decided:?}");
    }
}

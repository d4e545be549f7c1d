//! Brute-force interference between two meshes: every triangle pair through the exact
//! [`triangles_intersect`] test. This is the reference (oracle) for every BVH, sweep-and-prune
//! and GPU traversal of the CInDeR pipeline (the exhaustive pair test that the paper's
//! hierarchies accelerate), not a fast path.
//!
//! B's vertices are mapped into A's frame once with [`DPose::transform_point`], the single `f64`
//! transform every exact test in the crate uses, so the answers agree bit for bit with any
//! traversal that transforms the same way. A per-triangle `f64` bounding-box reject runs first;
//! it is exact (plain comparisons of the same `f64` coordinates, closed boxes).

use crate::mesh::TriMesh;
use crate::pose::DPose;
use crate::tri_tri::triangles_intersect;
use glam::DVec3;

/// Triangles of a mesh with their corners in `f64` and their exact bounding boxes.
struct Prepared {
    tris: Vec<[DVec3; 3]>,
    boxes: Vec<(DVec3, DVec3)>,
}

impl Prepared {
    fn new(mesh: &TriMesh, map: impl Fn(glam::Vec3) -> DVec3) -> Self {
        let verts: Vec<DVec3> = mesh.vertices().iter().map(|&v| map(v)).collect();
        let tris: Vec<[DVec3; 3]> = mesh
            .triangles()
            .iter()
            .map(|t| t.map(|i| verts[i as usize]))
            .collect();
        let boxes = tris
            .iter()
            .map(|t| (t[0].min(t[1]).min(t[2]), t[0].max(t[1]).max(t[2])))
            .collect();
        Self { tris, boxes }
    }
}

#[inline]
fn boxes_overlap(a: &(DVec3, DVec3), b: &(DVec3, DVec3)) -> bool {
    a.0.cmple(b.1).all() && b.0.cmple(a.1).all()
}

fn prepare(a: &TriMesh, b: &TriMesh, b_to_a: &DPose) -> (Prepared, Prepared) {
    (
        Prepared::new(a, |v| v.as_dvec3()),
        Prepared::new(b, |v| b_to_a.transform_point(v)),
    )
}

/// Every pair `(triangle of a, triangle of b)` whose closed triangles intersect (touching
/// included) when B is placed in A's frame by `b_to_a`; sorted by A's index, then B's.
pub fn all_pairs_brute(a: &TriMesh, b: &TriMesh, b_to_a: &DPose) -> Vec<(u32, u32)> {
    let (pa, pb) = prepare(a, b, b_to_a);
    let mut out = Vec::new();
    for (i, (ta, ba)) in pa.tris.iter().zip(&pa.boxes).enumerate() {
        for (j, (tb, bb)) in pb.tris.iter().zip(&pb.boxes).enumerate() {
            if boxes_overlap(ba, bb) && triangles_intersect(*ta, *tb) {
                out.push((i as u32, j as u32));
            }
        }
    }
    out
}

/// The first intersecting pair in the order of [`all_pairs_brute`] (smallest A index, then
/// smallest B index), or `None` when the surfaces do not meet.
pub fn first_hit_brute(a: &TriMesh, b: &TriMesh, b_to_a: &DPose) -> Option<(u32, u32)> {
    let (pa, pb) = prepare(a, b, b_to_a);
    for (i, (ta, ba)) in pa.tris.iter().zip(&pa.boxes).enumerate() {
        for (j, (tb, bb)) in pb.tris.iter().zip(&pb.boxes).enumerate() {
            if boxes_overlap(ba, bb) && triangles_intersect(*ta, *tb) {
                return Some((i as u32, j as u32));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shapes::{bumpy_sphere, cuboid, icosphere, subdivided_cuboid};
    use glam::{DMat3, Vec3};
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    /// The same loops without the box reject.
    fn all_pairs_no_reject(a: &TriMesh, b: &TriMesh, b_to_a: &DPose) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        for i in 0..a.triangle_count() {
            let ta = a.triangle(i).map(|v| v.as_dvec3());
            for j in 0..b.triangle_count() {
                let tb = b.triangle(j).map(|v| b_to_a.transform_point(v));
                if triangles_intersect(ta, tb) {
                    out.push((i as u32, j as u32));
                }
            }
        }
        out
    }

    use crate::test_support::random_pose;

    #[test]
    fn box_reject_changes_nothing_at_random_poses() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let a = bumpy_sphere(1.0, 0.3, 3.0, 1, 5).unwrap();
        let b = icosphere(0.7, 1).unwrap();
        let mut nonempty = 0;
        for _ in 0..12 {
            let pose = random_pose(&mut rng, 2.0);
            let pairs = all_pairs_brute(&a, &b, &pose);
            assert_eq!(pairs, all_pairs_no_reject(&a, &b, &pose));
            assert_eq!(first_hit_brute(&a, &b, &pose), pairs.first().copied());
            assert!(pairs.windows(2).all(|w| w[0] < w[1]));
            nonempty += !pairs.is_empty() as usize;
        }
        assert!(nonempty > 2 && nonempty < 12, "{nonempty}");
    }

    #[test]
    fn touching_boxes_meet_and_separated_boxes_do_not() {
        // Two 2x2x2 boxes, the second shifted by exactly 2 along x: the faces at x = 1 coincide.
        let a = subdivided_cuboid(Vec3::ONE, 2).unwrap();
        let b = subdivided_cuboid(Vec3::ONE, 3).unwrap();
        let shift = |dx: f64| DPose {
            rotation: DMat3::IDENTITY,
            translation: DVec3::new(dx, 0.0, 0.0),
        };
        let touching = all_pairs_brute(&a, &b, &shift(2.0));
        assert!(!touching.is_empty());
        // Only triangles on A's face x = 1 and B's face x = -1 (moved to x = 1), or their rims.
        for &(i, j) in &touching {
            let ta = a.triangle(i as usize);
            let tb = b.triangle(j as usize);
            assert!(ta.iter().any(|v| v.x == 1.0) && tb.iter().any(|v| v.x == -1.0));
        }
        assert!(all_pairs_brute(&a, &b, &shift(2.0f64.next_up())).is_empty());
        assert_eq!(first_hit_brute(&a, &b, &shift(2.0f64.next_up())), None);
        // Symmetry under the exact inverse shift.
        let mut back: Vec<(u32, u32)> = all_pairs_brute(&b, &a, &shift(-2.0))
            .into_iter()
            .map(|(j, i)| (i, j))
            .collect();
        back.sort_unstable();
        assert_eq!(back, touching);
    }

    #[test]
    fn nested_surfaces_do_not_meet() {
        let a = cuboid(Vec3::splat(2.0)).unwrap();
        let b = icosphere(1.0, 2).unwrap();
        assert!(all_pairs_brute(&a, &b, &DPose::IDENTITY).is_empty());
        assert_eq!(first_hit_brute(&b, &a, &DPose::IDENTITY), None);
    }
}

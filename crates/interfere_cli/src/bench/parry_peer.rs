//! The peer in our benchmarks: parry3d 0.31, run in-process on the same meshes and poses.
//!
//! Two figures per query, as `../shared/meshes/README.md` measures them:
//! - *all pairs*: `Bvh::leaf_pairs` over the two meshes' BVHs (each node pair checked by
//!   transforming B's node box into A's frame) followed by parry's triangle-triangle
//!   `intersection_test` (GJK on two support maps) for each leaf pair;
//! - *first hit*: `query::intersection_test` on the two `TriMesh` shapes.
//!
//! - *mesh boolean*: `transformation::intersect_meshes` and the volume of its result, the
//!   in-process exact-volume peer of `bench volume`.
//!
//! parry's triangle test is not exact (it reports pairs a face plane provably separates), so its
//! pair counts are printed for information, never compared for equality.

use interfere_geometry::TriMesh;
use parry3d::bounding_volume::BoundingVolume;
use parry3d::math::{Pose as PPose, Vec3 as PVec3};
use parry3d::query;
use parry3d::shape::{TriMesh as PTriMesh, TriMeshFlags};

/// A mesh converted for parry3d.
pub struct ParryMesh {
    mesh: PTriMesh,
}

impl ParryMesh {
    /// Builds parry's `TriMesh` (and its BVH) from ours.
    pub fn new(mesh: &TriMesh) -> Result<Self, String> {
        let (vertices, indices) = buffers(mesh);
        Ok(Self {
            mesh: build_trimesh(vertices, indices)?,
        })
    }
}

/// Our mesh's vertex and index buffers in parry's types.
pub fn buffers(mesh: &TriMesh) -> (Vec<PVec3>, Vec<[u32; 3]>) {
    let vertices = mesh
        .vertices()
        .iter()
        .map(|v| PVec3::new(v.x, v.y, v.z))
        .collect();
    (vertices, mesh.triangles().to_vec())
}

/// parry's `TriMesh::new` with no flags: the triangles' boxes and the BVH over them.
pub fn build_trimesh(vertices: Vec<PVec3>, indices: Vec<[u32; 3]>) -> Result<PTriMesh, String> {
    PTriMesh::new(vertices, indices).map_err(|e| format!("parry3d refused the mesh: {e:?}"))
}

/// All leaf pairs whose triangles parry's test says intersect; `b_to_a` maps B into A's frame.
pub fn all_pairs(a: &ParryMesh, b: &ParryMesh, b_to_a: &PPose) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let pairs = a.mesh.bvh().leaf_pairs(b.mesh.bvh(), |na, nb| {
        na.aabb().intersects(&nb.aabb().transform_by(b_to_a))
    });
    for (ia, ib) in pairs {
        let ta = a.mesh.triangle(ia);
        let tb = b.mesh.triangle(ib);
        if query::details::intersection_test_support_map_support_map(b_to_a, &ta, &tb) {
            out.push((ia, ib));
        }
    }
    out
}

/// A mesh converted for parry3d's mesh boolean (`intersect_meshes`), which needs the half-edge
/// topology and the pseudo-normals of an oriented mesh.
pub struct ParryBoolean {
    mesh: PTriMesh,
}

impl ParryBoolean {
    /// Builds parry's `TriMesh` with topology from ours (a closed, outward-oriented solid).
    pub fn new(mesh: &TriMesh) -> Result<Self, String> {
        let vertices = mesh
            .vertices()
            .iter()
            .map(|v| PVec3::new(v.x, v.y, v.z))
            .collect();
        let mesh = PTriMesh::with_flags(
            vertices,
            mesh.triangles().to_vec(),
            TriMeshFlags::ORIENTED | TriMeshFlags::HALF_EDGE_TOPOLOGY,
        )
        .map_err(|e| format!("parry3d refused the mesh: {e:?}"))?;
        Ok(Self { mesh })
    }

    /// The volume of `intersect_meshes(self, other placed by b_to_a)` (the signed volume of the
    /// resulting mesh, summed in `f64`), `Ok(0.0)` when parry finds no intersection, `Err` when
    /// the boolean fails.
    pub fn intersection_volume(&self, other: &ParryBoolean, b_to_a: &PPose) -> Result<f64, String> {
        let m = parry3d::transformation::intersect_meshes(
            &PPose::IDENTITY,
            &self.mesh,
            false,
            b_to_a,
            &other.mesh,
            false,
        )
        .map_err(|e| format!("{e:?}"))?;
        let Some(m) = m else {
            return Ok(0.0);
        };
        let v = m.vertices();
        let mut sum = 0.0f64;
        for t in m.indices() {
            let [a, b, c] = t.map(|i| {
                let q = v[i as usize];
                [f64::from(q.x), f64::from(q.y), f64::from(q.z)]
            });
            sum += a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0])
                + a[2] * (b[0] * c[1] - b[1] * c[0]);
        }
        Ok(sum / 6.0)
    }
}

/// parry's boolean mesh-mesh test.
pub fn first_hit(a: &ParryMesh, b: &ParryMesh, b_to_a: &PPose) -> bool {
    query::intersection_test(&PPose::IDENTITY, &a.mesh, b_to_a, &b.mesh)
        .map(|r| r.intersecting)
        .unwrap_or(false)
}

/// Converts an `f64` relative pose (rotation matrix) into parry's pose.
pub fn parry_pose_f64(pose: &interfere_geometry::DPose) -> PPose {
    let q = interfere_geometry::glam::DQuat::from_mat3(&pose.rotation).normalize();
    let t = pose.translation;
    PPose::from_parts(
        PVec3::new(t.x as f32, t.y as f32, t.z as f32),
        parry3d::math::Rot3::from_xyzw(q.x as f32, q.y as f32, q.z as f32, q.w as f32),
    )
}

#[cfg(test)]
mod tests {
    //! Our Lin–Canny closest features (`interfere_geometry::closest_features`) against parry3d's
    //! GJK `query::distance` / `closest_points` on random convex pairs (issue 6's oracle; it
    //! lives here because this crate already links parry3d).

    use super::*;
    use interfere_geometry::closest_features::{ClosestFeatures, HullFeatures, Proximity};
    use interfere_geometry::glam::{DMat3, DVec3, Vec3};
    use interfere_geometry::{DPose, Hull, convex_hull};
    use parry3d::query::ClosestPoints;
    use parry3d::shape::ConvexPolyhedron;

    /// A small deterministic generator (SplitMix64), so this crate needs no rand dependency.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
        fn unit(&mut self) -> f64 {
            (self.next() >> 11) as f64 / (1u64 << 53) as f64
        }
        fn range(&mut self, lo: f64, hi: f64) -> f64 {
            lo + (hi - lo) * self.unit()
        }
    }

    fn random_points(rng: &mut Rng, n: usize, scale: f32) -> Vec<Vec3> {
        (0..n)
            .map(|_| {
                Vec3::new(
                    rng.range(-1.0, 1.0) as f32,
                    rng.range(-1.0, 1.0) as f32,
                    rng.range(-1.0, 1.0) as f32,
                ) * scale
            })
            .collect()
    }

    #[test]
    fn hull_distance_and_closest_points_agree_with_parry3d() {
        let mut rng = Rng(11);
        let (mut separated, mut penetrating) = (0, 0);
        let mut worst: f64 = 0.0;
        let mut worst_d: f64 = 0.0;
        let mut tracker = ClosestFeatures::new();
        for case in 0..300 {
            let na = 4 + (rng.next() % 36) as usize;
            let pa = random_points(&mut rng, na, 1.0);
            let nb = 4 + (rng.next() % 36) as usize;
            let pb = random_points(&mut rng, nb, 0.7);
            let (Ok(Hull::Solid(ha)), Ok(Hull::Solid(hb))) = (convex_hull(&pa), convex_hull(&pb))
            else {
                continue;
            };
            let fa = HullFeatures::new(&ha).unwrap();
            let fb = HullFeatures::new(&hb).unwrap();
            let axis = DVec3::new(rng.unit(), rng.unit(), rng.unit()).normalize_or(DVec3::Z);
            let exact = DPose {
                rotation: DMat3::from_axis_angle(axis, rng.range(0.0, 6.3)),
                translation: DVec3::new(rng.range(0.5, 3.0), rng.range(-1.0, 1.0), 0.0),
            };
            // Both sides see the same f32 pose (parry is f32): round it once, use it for both.
            let pose = parry_pose_f64(&exact);
            let (q, t) = (pose.rotation, pose.translation);
            let b_to_a = interfere_geometry::Pose::new(
                interfere_geometry::glam::Quat::from_xyzw(q.x, q.y, q.z, q.w),
                Vec3::new(t.x, t.y, t.z),
            )
            .to_f64();
            if case % 3 == 0 {
                tracker.reset();
            }
            let brute =
                interfere_geometry::closest_features::proximity_brute_force(&fa, &fb, &b_to_a);
            let ours = tracker.query(&fa, &fb, &b_to_a);

            let to_p = |v: &[Vec3]| {
                v.iter()
                    .map(|p| PVec3::new(p.x, p.y, p.z))
                    .collect::<Vec<_>>()
            };
            // The same polytopes on both sides: parry gets our exact hull's vertices and faces.
            let ca = ConvexPolyhedron::from_convex_mesh(to_p(ha.vertices()), ha.triangles());
            let cb = ConvexPolyhedron::from_convex_mesh(to_p(hb.vertices()), hb.triangles());
            let (Some(ca), Some(cb)) = (ca, cb) else {
                continue;
            };
            let d = query::distance(&PPose::IDENTITY, &ca, &pose, &cb)
                .unwrap()
                .distance;
            match ours {
                Proximity::Separated {
                    distance,
                    point_a,
                    point_b,
                    ..
                } => {
                    separated += 1;
                    assert!(
                        (brute.distance() - distance).abs() < 1e-9,
                        "case {case}: walk vs brute"
                    );
                    assert!(
                        d > 0.0,
                        "case {case}: parry says touching, we say {distance}"
                    );
                    worst = worst.max((distance - f64::from(d)).abs());
                    worst_d = worst_d.max((distance - f64::from(d)).abs());
                    // The closest points realize the distance and match parry's up to the
                    // (possibly non-unique) choice: compare their separation only.
                    assert!(((point_b - point_a).length() - distance).abs() < 1e-9);
                    if let Ok(ClosestPoints::WithinMargin(qa, qb)) =
                        query::closest_points(&PPose::IDENTITY, &ca, &pose, &cb, 10.0)
                    {
                        let gap = (qb - qa).length();
                        worst = worst.max((f64::from(gap) - distance).abs());
                    }
                }
                Proximity::Penetrating { .. } => {
                    penetrating += 1;
                    assert!(d <= 1e-6, "case {case}: we say penetrating, parry says {d}");
                }
            }
        }
        assert!(
            separated > 50 && penetrating > 50,
            "{separated} / {penetrating}"
        );
        // parry3d is f32 (its hull and GJK); our walk equals the exact f64 brute force to 1e-9
        // (asserted above), so this bound measures parry's error, not ours.
        eprintln!(
            "closest features vs parry3d: worst difference {worst:.2e} (distance alone {worst_d:.2e})"
        );
        // Measured 4.3e-4 (parry's GJK tolerance in f32); ours is checked exactly above.
        assert!(worst < 1e-3, "worst difference {worst}");
    }
}

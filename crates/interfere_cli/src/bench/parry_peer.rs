//! The peer in our benchmarks: parry3d 0.31, run in-process on the same meshes and poses.
//!
//! Two figures per query, as `../shared/meshes/README.md` measures them:
//! - *all pairs*: `Bvh::leaf_pairs` over the two meshes' BVHs (each node pair checked by
//!   transforming B's node box into A's frame) followed by parry's triangle-triangle
//!   `intersection_test` (GJK on two support maps) for each leaf pair;
//! - *first hit*: `query::intersection_test` on the two `TriMesh` shapes.
//!
//! parry's triangle test is not exact (it reports pairs a face plane provably separates), so its
//! pair counts are printed for information, never compared for equality.

use interfere_geometry::TriMesh;
use parry3d::bounding_volume::BoundingVolume;
use parry3d::math::{Pose as PPose, Vec3 as PVec3};
use parry3d::query;
use parry3d::shape::TriMesh as PTriMesh;

/// A mesh converted for parry3d.
pub struct ParryMesh {
    mesh: PTriMesh,
}

impl ParryMesh {
    /// Builds parry's `TriMesh` (and its BVH) from ours.
    pub fn new(mesh: &TriMesh) -> Result<Self, String> {
        let vertices = mesh
            .vertices()
            .iter()
            .map(|v| PVec3::new(v.x, v.y, v.z))
            .collect();
        let mesh = PTriMesh::new(vertices, mesh.triangles().to_vec())
            .map_err(|e| format!("parry3d refused the mesh: {e:?}"))?;
        Ok(Self { mesh })
    }
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

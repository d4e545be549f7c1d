//! A closed mesh against a half-space: the exact volume of the mesh below the plane with its
//! exact gradient (Wang–Faure–Pai 2012 §2.2 with the analytic half-space,
//! [`crate::volume_below_plane`]), and its split into four quadrant contacts from the cap below
//! the plane raised by a speculative margin `δ` ([`crate::volume_below_plane_split`]), each
//! moved down to the real plane with its volume lowered by `δ` times its cap area.
//!
//! Shared by the mesh–half-space pairs of the volume stage (`volume_stage`) and the mesh parts
//! of compound bodies (`contact/primitive_pairs.rs`).

use crate::collision::shape::MeshShape;
use crate::contact::parts::exact::feature_key;
use crate::contact::{BodyId, VolumeContact, volume_below_plane, volume_below_plane_split_in};
use interfere_geometry::DPose;
use interfere_geometry::glam::{DMat3, DVec3};

/// The contact of one mesh placed in the world with the half-space below `n · x = offset`.
pub struct MeshPlaneContact {
    /// The exact totals `(volume, ∂V/∂x, ∂V/∂θ about point, point)` of the mesh below the real
    /// plane (gradients with respect to body `b` of the pair), `None` when nothing is below it.
    pub totals: Option<(f64, DVec3, DVec3, DVec3)>,
    /// The four quadrant contacts from the cap below the plane raised by `δ`.
    pub parts: Vec<VolumeContact>,
}

/// The contact of `mesh` placed by `pose` with the half-space below `n · x = offset` (`n` unit),
/// the quadrants cut along [`crate::contact::tangent_pair_in`]`(n, frame)` (`frame`: the
/// half-space body's orientation), for the pair `(a, b)`: `sign` is `+1` when the mesh belongs
/// to body `b` (the gradients are with respect to b's motion), `delta` the speculative margin,
/// `region` the region number of the parts' feature keys.
#[allow(clippy::too_many_arguments)]
pub fn mesh_plane_contact(
    (a, b): (BodyId, BodyId),
    mesh: &MeshShape,
    pose: &DPose,
    (n, offset, frame): (DVec3, f64, &DMat3),
    delta: f64,
    sign: f64,
    region: usize,
) -> MeshPlaneContact {
    let solid = mesh.solid();
    let world: Vec<DVec3> = solid
        .vertices()
        .iter()
        .map(|v| pose.transform_point(*v))
        .collect();
    let totals = volume_below_plane(&world, solid.triangles(), n, offset)
        .map(|(volume, linear, angular, point)| (volume, sign * linear, sign * angular, point));
    let parts = volume_below_plane_split_in(&world, solid.triangles(), n, offset + delta, frame)
        .unwrap_or_default()
        .iter()
        .map(|part| {
            let cap = (-n.dot(part.linear)).max(0.0);
            VolumeContact {
                body_a: a,
                body_b: b,
                volume: part.volume - delta * cap,
                point: part.point - n * delta,
                linear: sign * part.linear,
                // About the lowered point: τ' = τ + (p − p') × g.
                angular: sign * (part.angular + (n * delta).cross(part.linear)),
                feature: feature_key(a, b, region, part.quadrant),
            }
        })
        .collect();
    MeshPlaneContact { totals, parts }
}

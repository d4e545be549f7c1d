//! Capsule queries over a [`Simulation`]: the first body a capsule moving along a straight path
//! touches ([`Simulation::cast_capsule`]) and the bodies within a margin of a capsule at rest
//! ([`Simulation::capsule_contacts`]), with a [`QueryFilter`]. The geometry is
//! `interfere_geometry::shape_cast` (Newton's method on the convex distance to each triangle or
//! primitive; coplanar edges of a mesh are only grazed, never hit): meshes through their
//! balanced AABB tree, primitives and compound parts in closed form, half-spaces analytically.
//! The character controller (`crate::character`) moves with these.

use super::QueryFilter;
use crate::body::Body;
use crate::collision::shape::{MeshShape, Shape};
use crate::simulation::{BodyHandle, Simulation};
use interfere_geometry::glam::DVec3;
use interfere_geometry::shape_cast::{
    CastHit, Proximity, capsule_mesh_proximities, capsule_primitive_proximity, cast_capsule_mesh,
    cast_capsule_primitive,
};
use interfere_geometry::{DPose, Primitive};

pub use interfere_geometry::shape_cast::Capsule;

/// Where a capsule cast first touches a body.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CapsuleHit {
    /// The body touched.
    pub body: BodyHandle,
    /// The fraction of the translation travelled before the touch, in `[0, 1]`.
    pub fraction: f64,
    /// Unit normal at the contact, from the body towards the capsule.
    pub normal: DVec3,
    /// The body's point touched (world).
    pub point: DVec3,
    /// The triangle touched, for a mesh.
    pub triangle: Option<u32>,
}

/// A body within a margin of a capsule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CapsuleContact {
    /// The body.
    pub body: BodyHandle,
    /// Distance from the capsule's surface to the body; negative when they overlap.
    pub distance: f64,
    /// Unit normal from the body towards the capsule.
    pub normal: DVec3,
    /// The body's closest point (world).
    pub point: DVec3,
    /// The triangle, for a mesh.
    pub triangle: Option<u32>,
}

/// The convex pieces and meshes of a body's collider, each at its world pose.
enum Piece<'a> {
    Primitive(Primitive, DPose),
    Mesh(&'a MeshShape, DPose),
}

fn pieces<'a>(body: &Body, shape: &'a Shape) -> Vec<Piece<'a>> {
    let pose = body.mesh_pose();
    match shape {
        Shape::Mesh(m) => vec![Piece::Mesh(m, pose)],
        Shape::HalfSpace(h) => {
            let (n, offset) = h.world(&pose);
            Primitive::half_space(n)
                .map(|p| {
                    vec![Piece::Primitive(
                        p,
                        DPose {
                            rotation: interfere_geometry::glam::DMat3::IDENTITY,
                            translation: n * offset,
                        },
                    )]
                })
                .unwrap_or_default()
        }
        Shape::Primitive(p) => vec![Piece::Primitive(*p.primitive(), pose)],
        Shape::Compound(c) => c
            .parts()
            .map(|(p, local)| Piece::Primitive(*p.primitive(), pose.mul(&local)))
            .chain(
                c.meshes()
                    .iter()
                    .map(|m| Piece::Mesh(&m.shape, pose.mul(&m.pose))),
            )
            .collect(),
    }
}

/// Whether the box `[lo, hi]` meets the body's world box (half-spaces always may).
fn may_reach(body: &Body, shape: &Shape, lo: DVec3, hi: DVec3) -> bool {
    match shape {
        Shape::HalfSpace(_) => true,
        s => s
            .world_aabb(&body.mesh_pose())
            .is_some_and(|b| b.min.as_dvec3().cmple(hi).all() && b.max.as_dvec3().cmpge(lo).all()),
    }
}

impl Simulation {
    /// The pieces of the bodies the filter admits whose world boxes (or half-spaces) may reach
    /// the box `[lo, hi]`, with their bodies, by body id.
    fn pieces_near<'s>(
        &'s self,
        filter: &'s QueryFilter<'_>,
        lo: DVec3,
        hi: DVec3,
    ) -> impl Iterator<Item = (BodyHandle, Piece<'s>)> + 's {
        self.admitted(filter)
            .filter(move |(h, body, c)| {
                may_reach(body, &c.shape, lo, hi) && filter.predicate_accepts(*h)
            })
            .flat_map(|(h, body, c)| pieces(body, &c.shape).into_iter().map(move |p| (h, p)))
    }

    /// The first body that `capsule` touches when translated by `translation` (the whole path,
    /// `fraction ∈ [0, 1]`), with the contact normal and point. Contacts the capsule starts in
    /// count only when the translation pushes further in (`fraction` 0); a path that only grazes
    /// a surface (an approach below `interfere_geometry::shape_cast::GRAZE`) is not stopped by
    /// it, so a capsule slides over the coplanar edges of a tessellated floor. A capsule whose
    /// core starts inside a mesh's solid does not see that mesh (locate its core with
    /// [`Simulation::bodies_containing_point`] where that can happen). Ties go to the lower body
    /// id, then the lower triangle.
    pub fn cast_capsule(
        &self,
        capsule: &Capsule,
        translation: DVec3,
        filter: &QueryFilter<'_>,
    ) -> Option<CapsuleHit> {
        if !translation.is_finite() {
            return None;
        }
        let (lo, hi) = capsule.swept_bounds(translation);
        let mut best: Option<CapsuleHit> = None;
        for (h, piece) in self.pieces_near(filter, lo, hi) {
            let hit: Option<CastHit> = match &piece {
                Piece::Primitive(p, pose) => cast_capsule_primitive(capsule, translation, p, pose),
                Piece::Mesh(m, pose) => {
                    let (solid, tree) = m.shared();
                    cast_capsule_mesh(capsule, translation, solid.mesh(), tree, pose)
                }
            };
            let Some(hit) = hit else { continue };
            let found = CapsuleHit {
                body: h,
                fraction: hit.t,
                normal: hit.normal,
                point: hit.point,
                triangle: hit.triangle,
            };
            if best.is_none_or(|b| {
                (found.fraction, found.body.id(), found.triangle)
                    < (b.fraction, b.body.id(), b.triangle)
            }) {
                best = Some(found);
            }
        }
        best
    }

    /// Every body part within `margin` of the capsule's surface (overlapping ones with a negative
    /// distance), each mesh triangle separately, ordered by body id, then triangle.
    pub fn capsule_contacts(
        &self,
        capsule: &Capsule,
        margin: f64,
        filter: &QueryFilter<'_>,
    ) -> Vec<CapsuleContact> {
        let mut out = Vec::new();
        if !margin.is_finite() {
            return out;
        }
        let grown = capsule.inflated(margin.max(0.0));
        let (lo, hi) = grown.swept_bounds(DVec3::ZERO);
        for (h, piece) in self.pieces_near(filter, lo, hi) {
            let near: Vec<Proximity> = match piece {
                Piece::Primitive(p, pose) => {
                    capsule_primitive_proximity(capsule, &p, &pose, margin)
                        .into_iter()
                        .collect()
                }
                Piece::Mesh(m, pose) => {
                    let (solid, tree) = m.shared();
                    capsule_mesh_proximities(capsule, solid.mesh(), tree, &pose, margin)
                }
            };
            out.extend(near.into_iter().map(|p| CapsuleContact {
                body: h,
                distance: p.distance,
                normal: p.normal,
                point: p.point,
                triangle: p.triangle,
            }));
        }
        out
    }
}

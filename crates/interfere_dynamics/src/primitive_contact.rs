//! Pairs with a primitive or a compound collider ([`Shape::Primitive`], [`Shape::Compound`]):
//! the narrow phase, the intersection volume and its split into volume contacts, and the
//! interference test the spatial queries share.
//!
//! A primitive is a compound of one part at the identity, so every pair is a set of piece pairs:
//! each part of a primitive or compound body against each part (or the mesh, or the plane) of
//! the other. Per piece pair (`interfere_geometry::primitives`, Wang–Faure–Pai 2012 §2.2 for the
//! volume and its gradient):
//!
//! | piece pair | interference | volume and gradient |
//! |---|---|---|
//! | half-space – part | the part's support point along `−n` below the plane | closed form (cap, segment integral, convex clip) |
//! | sphere–sphere, cuboid–cuboid, sphere–cuboid | closed form / exact (`primitives_intersect`) | closed form (lens, convex clip, ball ∩ planes) |
//! | other part pairs (capsule, cylinder with anything but a half-space) | closed form or GJK | the exact mesh–mesh volume of the two inscribed tessellations ([`PrimitiveShape::tessellation`], volume within [`crate::collider::TESSELLATION_TOLERANCE`]; a cuboid's mesh is exact) |
//! | sphere – mesh | exact on the mesh's triangles (`primitive_solid_intersect`) | closed form: the ball clipped by the mesh's triangles |
//! | capsule, cylinder, cuboid – mesh | as above | the exact mesh–mesh volume of the tessellation and the mesh |
//!
//! These are `interfere_geometry`'s `VolumeMethod::ClosedForm` / `Tessellate` routes; the
//! tessellation route is the documented fallback where geometry has no closed form. The
//! settings' [`crate::VolumeMethod`] (exact, uniform, adaptive) applies to mesh–mesh pairs only:
//! pairs with a primitive always use the closed form or the exact volume of the tessellations.
//!
//! **Volume contacts.** A closed-form volume's flat regions ([`PrimitiveVolume::regions_b`],
//! their pieces [`PrimitiveVolume::pieces_b`]) become a four-part manifold at the principal radii
//! of the contact surface, as an exact mesh region does ([`crate::mesh_volume::principal_parts`],
//! the same depth cap at twice the mean depth); a tessellated pair's exact result is split per
//! region as in the mesh–mesh stage ([`crate::volume_stage::exact_parts`]). Feature keys number
//! the regions by `(part of a, part of b, region)`, stable while the same parts touch.
//!
//! **Half-spaces.** A part within the speculative margin of a plane
//! ([`crate::narrow_phase::shape_margin`]) but not below it gets speculative parts: the cap
//! below the plane raised by the margin `δ` gives their points (moved down to the plane),
//! directions and areas `A_q`, and each part's volume is `−gap · A_q` (the part's gap above the
//! plane), a first-order constraint that lets the gap close and no more. A part below the plane
//! gets the parts of its true cap. (The mesh–half-space stage corrects the raised volume instead,
//! `V_q − δ A_q`, which is exact for flat faces; for a curved surface the cap's volume is
//! quadratic in the depth and that correction would sink a sphere by `δ`.)

use crate::body::RigidBody;
use crate::collider::{HalfSpace, MeshShape, PrimitiveShape, Shape};
use crate::contact::{BodyId, VolumeContact};
use crate::mesh_volume::principal_parts;
use crate::narrow_phase::shape_margin;
use crate::stage::{InterferingPair, PairContact, StageInput};
use crate::volume_stage::{exact_parts, exact_totals, feature_key};
use interfere_geometry::glam::{DMat3, DVec3};
use interfere_geometry::primitives::{PrimitiveVolume, volume_method_with_solid};
use interfere_geometry::volume::{ExactOptions, ExactResult, ExactVolume};
use interfere_geometry::{
    Aabb, DPose, Method, Primitive, VolumeMethod as GeometryMethod, intersection_volume,
    primitive_solid_intersect, primitive_solid_volume, primitives_intersect,
};
use std::sync::Arc;

/// One solid piece of a bounded body placed in the world: a part of a primitive or compound
/// (its index, its shape, its world pose), or a whole mesh (its world pose).
#[derive(Clone)]
enum Piece<'a> {
    Part(usize, &'a PrimitiveShape, DPose),
    Mesh(&'a Arc<MeshShape>, DPose),
}

impl Piece<'_> {
    fn aabb(&self) -> Option<Aabb> {
        match self {
            Piece::Part(_, p, pose) => p.world_aabb(pose),
            Piece::Mesh(m, pose) => m.world_aabb(pose),
        }
    }

    fn index(&self) -> usize {
        match self {
            Piece::Part(i, ..) => *i,
            Piece::Mesh(..) => 0,
        }
    }
}

/// The pieces of a shape placed by the collider pose `pose` (none for a half-space).
fn pieces<'a>(shape: &'a Shape, pose: &DPose) -> Vec<Piece<'a>> {
    match shape {
        Shape::Mesh(m) => vec![Piece::Mesh(m, *pose)],
        Shape::HalfSpace(_) => Vec::new(),
        Shape::Primitive(p) => vec![Piece::Part(0, p, *pose)],
        Shape::Compound(c) => c
            .parts()
            .enumerate()
            .map(|(i, (p, local))| Piece::Part(i, p, pose.mul(&local)))
            .collect(),
    }
}

/// The lowest value of `n · x` over the shape placed by `pose` (mesh vertices; the primitives'
/// support points along `−n`); `None` for a half-space or a non-finite pose.
pub fn lowest_along(shape: &Shape, pose: &DPose, n: DVec3) -> Option<f64> {
    let mut lowest = f64::INFINITY;
    for piece in pieces(shape, pose) {
        let l = match piece {
            Piece::Mesh(m, pose) => m
                .solid()
                .vertices()
                .iter()
                .map(|v| n.dot(pose.transform_point(*v)))
                .fold(f64::INFINITY, f64::min),
            Piece::Part(_, p, pose) => n.dot(p.primitive().support(&pose, -n).ok()??),
        };
        lowest = lowest.min(l);
    }
    lowest.is_finite().then_some(lowest)
}

/// Whether two pieces share a point (touching counts).
fn pieces_meet(x: &Piece<'_>, y: &Piece<'_>) -> bool {
    if let (Some(bx), Some(by)) = (x.aabb(), y.aabb())
        && !bx.overlaps(&by)
    {
        return false;
    }
    match (x, y) {
        (Piece::Part(_, p, wp), Piece::Part(_, q, wq)) => {
            primitives_intersect(p.primitive(), wp, q.primitive(), wq).unwrap_or(false)
        }
        (Piece::Part(_, p, wp), Piece::Mesh(m, wm))
        | (Piece::Mesh(m, wm), Piece::Part(_, p, wp)) => primitive_solid_intersect(
            p.primitive(),
            wp,
            m.solid(),
            m.queries().balanced_tree(),
            wm,
        )
        .unwrap_or(false),
        (Piece::Mesh(ma, wa), Piece::Mesh(mb, wb)) => ma
            .queries()
            .interference(mb.queries(), &wa.inverse().mul(wb), Method::Obb, false)
            .is_ok_and(|r| r.intersecting),
    }
}

/// Whether shape `a` placed by `pose_a` and shape `b` placed by `pose_b` interfere, as the
/// step's narrow phase decides (touching counts; a half-space needs a point strictly below its
/// plane; two half-spaces never interfere). Any shapes; mesh–mesh is the OBBTree test.
pub fn shapes_interfere(a: &Shape, pose_a: &DPose, b: &Shape, pose_b: &DPose) -> bool {
    match (a, b) {
        (Shape::HalfSpace(_), Shape::HalfSpace(_)) => false,
        (Shape::HalfSpace(h), other) => {
            let (n, offset) = h.world(pose_a);
            lowest_along(other, pose_b, n).is_some_and(|l| l < offset)
        }
        (other, Shape::HalfSpace(h)) => {
            let (n, offset) = h.world(pose_b);
            lowest_along(other, pose_a, n).is_some_and(|l| l < offset)
        }
        _ => {
            let pb = pieces(b, pose_b);
            pieces(a, pose_a)
                .iter()
                .any(|x| pb.iter().any(|y| pieces_meet(x, y)))
        }
    }
}

/// The narrow phase of a pair with a primitive or compound body (see the module
/// documentation): interfering pairs carry no triangle pairs; a pair with a half-space within
/// the speculative margin but not below the plane is reported `speculative`.
pub fn primitive_pair(input: &StageInput<'_>, a: BodyId, b: BodyId) -> Option<InterferingPair> {
    let (sa, sb) = (input.shape(a)?, input.shape(b)?);
    let (ba, bb) = (input.bodies.get(a)?, input.bodies.get(b)?);
    let (pa, pb) = (ba.mesh_pose(), bb.mesh_pose());
    let pair = |speculative| InterferingPair {
        a,
        b,
        triangle_pairs: Vec::new(),
        contained: false,
        speculative,
    };
    let near_plane = |h: &HalfSpace, hp: &DPose, other: &Shape, ob: &RigidBody, op: &DPose| {
        let (n, offset) = h.world(hp);
        let lowest = lowest_along(other, op, n)?;
        let margin = shape_margin(ob, other, input.dt);
        (lowest < offset + margin).then(|| pair(lowest >= offset))
    };
    match (sa, sb) {
        (Shape::HalfSpace(_), Shape::HalfSpace(_)) => None,
        (Shape::HalfSpace(h), other) => near_plane(h, &pa, other, bb, &pb),
        (other, Shape::HalfSpace(h)) => near_plane(h, &pb, other, ba, &pa),
        _ => shapes_interfere(sa, &pa, sb, &pb).then(|| pair(false)),
    }
}

/// The pair's totals as contributions `(volume, ∂V/∂x_b, ∂V/∂θ_b about point, point, weight)`,
/// combined about the weighted mean point.
#[derive(Default)]
struct Totals(Vec<(f64, DVec3, DVec3, DVec3, f64)>);

impl Totals {
    fn add_primitive(&mut self, v: &PrimitiveVolume) {
        let weight: f64 = v.regions_b.iter().map(|r| r.area()).sum();
        self.0.push((
            v.volume,
            v.translation_gradient,
            v.rotation_gradient,
            v.point,
            weight,
        ));
    }

    fn finish(self, c: &mut PairContact) {
        if self.0.is_empty() {
            return;
        }
        let w: f64 = self.0.iter().map(|t| t.4).sum();
        let point = if w > 0.0 {
            self.0.iter().map(|t| t.3 * t.4).sum::<DVec3>() / w
        } else {
            self.0.iter().map(|t| t.3).sum::<DVec3>() / self.0.len() as f64
        };
        c.volume = self.0.iter().map(|t| t.0).sum();
        c.linear = self.0.iter().map(|t| t.1).sum();
        c.angular = self.0.iter().map(|t| t.2 + (t.3 - point).cross(t.1)).sum();
        c.point = point;
    }
}

/// The region number of region `k` of the piece pair `(i, j)` in feature keys.
fn region_of(i: usize, j: usize, k: usize) -> usize {
    ((i * 64 + j) * 16) + k
}

/// The four-part manifold of a closed-form volume (gradient with respect to body `b`), with the
/// exact stage's depth cap; `None` without a gradient (nested).
fn primitive_parts(
    a: BodyId,
    b: BodyId,
    v: &PrimitiveVolume,
    region: usize,
) -> Option<Vec<VolumeContact>> {
    let ends: Vec<(DVec3, DVec3)> = v
        .pieces_b
        .iter()
        .map(|p| (p.centroid, p.vector_area))
        .collect();
    let parts = principal_parts(
        v.volume,
        v.translation_gradient,
        v.rotation_gradient,
        v.point,
        &ends,
        &DPose::IDENTITY,
    )?;
    let area: f64 = v.regions_b.iter().map(|r| r.area()).sum();
    let cap = if area > 0.0 {
        2.0 * v.volume / area
    } else {
        f64::INFINITY
    };
    Some(
        parts
            .iter()
            .map(|part| VolumeContact {
                body_a: a,
                body_b: b,
                volume: part.volume.min(part.linear.length() * cap),
                point: part.point,
                linear: part.linear,
                angular: part.angular,
                feature: feature_key(a, b, region, part.quadrant),
            })
            .collect(),
    )
}

/// The exact mesh–mesh volume of two meshes placed by `wa`, `wb` (gradient with respect to B),
/// with every crossing triangle pair from the OBBTree traversal; `Ok(None)` when they do not
/// interfere.
fn exact_meshes(
    ma: &MeshShape,
    wa: &DPose,
    mb: &MeshShape,
    wb: &DPose,
) -> Result<Option<ExactResult>, String> {
    let b_to_a = wa.inverse().mul(wb);
    let found = ma
        .queries()
        .interference(mb.queries(), &b_to_a, Method::Obb, true)
        .map_err(|e| e.to_string())?;
    if !found.intersecting {
        return Ok(None);
    }
    let ev = ExactVolume::with_topology(
        ma.solid(),
        ma.topology().clone(),
        mb.solid(),
        mb.topology().clone(),
    )
    .map_err(|e| e.to_string())?;
    let options = ExactOptions {
        centre: DVec3::ZERO,
        collect_pieces: true,
        threads: 1,
    };
    ev.compute(&b_to_a, &found.pairs, &options)
        .map(Some)
        .map_err(|e| e.to_string())
}

/// A piece as a mesh for the tessellation route: the mesh itself, or the part's tessellation.
fn as_mesh<'a>(piece: &'a Piece<'a>) -> Result<(&'a MeshShape, DPose), String> {
    match piece {
        Piece::Mesh(m, pose) => Ok((m, *pose)),
        Piece::Part(_, p, pose) => p
            .tessellation()
            .map(|m| (&**m, *pose))
            .map_err(str::to_string),
    }
}

/// The closed-form volume of a piece pair, if it has one: `None` for the tessellation route,
/// `Some(Ok(None))` when they do not overlap. Gradients with respect to `y`.
fn closed_form(x: &Piece<'_>, y: &Piece<'_>) -> Option<Result<Option<PrimitiveVolume>, String>> {
    let err = |e: interfere_geometry::PrimitiveError| e.to_string();
    match (x, y) {
        (Piece::Part(_, p, wp), Piece::Part(_, q, wq)) => {
            (interfere_geometry::primitives::volume_method(p.primitive(), q.primitive())
                == GeometryMethod::ClosedForm)
                .then(|| intersection_volume(p.primitive(), wp, q.primitive(), wq).map_err(err))
        }
        (Piece::Part(_, p, wp), Piece::Mesh(m, wm)) => {
            (volume_method_with_solid(p.primitive()) == GeometryMethod::ClosedForm).then(|| {
                primitive_solid_volume(
                    p.primitive(),
                    wp,
                    m.solid(),
                    m.queries().balanced_tree(),
                    wm,
                )
                .map_err(err)
            })
        }
        (Piece::Mesh(m, wm), Piece::Part(_, q, wq)) => {
            (volume_method_with_solid(q.primitive()) == GeometryMethod::ClosedForm).then(|| {
                primitive_solid_volume(
                    q.primitive(),
                    wq,
                    m.solid(),
                    m.queries().balanced_tree(),
                    wm,
                )
                .map(|v| v.map(|v| v.swapped()))
                .map_err(err)
            })
        }
        (Piece::Mesh(..), Piece::Mesh(..)) => None,
    }
}

/// The contact of a pair with a primitive or compound body at the bodies' current states (see
/// the module documentation), filled into `c`.
pub fn primitive_pair_contact(input: &StageInput<'_>, c: &mut PairContact) {
    let (a, b) = (c.a, c.b);
    c.rolling = true;
    let (Some(sa), Some(sb)) = (input.shape(a), input.shape(b)) else {
        return;
    };
    let (Some(ba), Some(bb)) = (input.bodies.get(a), input.bodies.get(b)) else {
        return;
    };
    let (pa, pb) = (ba.mesh_pose(), bb.mesh_pose());
    match (sa, sb) {
        (Shape::HalfSpace(_), Shape::HalfSpace(_)) => {}
        (Shape::HalfSpace(h), other) => plane_contact(input, c, h, &pa, other, bb, 1.0),
        (other, Shape::HalfSpace(h)) => plane_contact(input, c, h, &pb, other, ba, -1.0),
        _ => {
            let mut totals = Totals::default();
            let mut parts = Vec::new();
            let pieces_b = pieces(sb, &pb);
            for x in pieces(sa, &pa) {
                for y in &pieces_b {
                    if let (Some(bx), Some(by)) = (x.aabb(), y.aabb())
                        && !bx.overlaps(&by)
                    {
                        continue;
                    }
                    let (i, j) = (x.index(), y.index());
                    match closed_form(&x, y) {
                        Some(Ok(Some(v))) => {
                            totals.add_primitive(&v);
                            parts.extend(
                                primitive_parts(a, b, &v, region_of(i, j, 0)).unwrap_or_default(),
                            );
                        }
                        Some(Ok(None)) => {}
                        Some(Err(e)) => c.refused = Some(e),
                        None => {
                            let result = as_mesh(&x).and_then(|(ma, wa)| {
                                let (mb, wb) = as_mesh(y)?;
                                Ok((exact_meshes(ma, &wa, mb, &wb)?, wa))
                            });
                            match result {
                                Ok((Some(r), wa)) => {
                                    let (volume, linear, angular, point, weight) =
                                        exact_totals(&r, &wa);
                                    totals.0.push((volume, linear, angular, point, weight));
                                    parts.extend(exact_parts(a, b, &r, &wa, region_of(i, j, 0)));
                                }
                                Ok((None, _)) => {}
                                Err(e) => c.refused = Some(e),
                            }
                        }
                    }
                }
            }
            totals.finish(c);
            c.parts = parts;
        }
    }
}

/// The parts of a primitive or compound body (`other`, placed by its body `ob`) against the
/// half-space `h` of a body at collider pose `hp`; `sign` is `+1` when `other` is body `b`
/// (the gradients below are with respect to `other`'s motion).
fn plane_contact(
    input: &StageInput<'_>,
    c: &mut PairContact,
    h: &HalfSpace,
    hp: &DPose,
    other: &Shape,
    ob: &RigidBody,
    sign: f64,
) {
    let (n, offset) = h.world(hp);
    let Ok(plane) = Primitive::half_space(n) else {
        return;
    };
    let at = |off: f64| DPose {
        rotation: DMat3::IDENTITY,
        translation: n * off,
    };
    let pose = ob.mesh_pose();
    let delta = shape_margin(ob, other, input.dt);
    let oriented = |v: PrimitiveVolume| if sign > 0.0 { v } else { v.swapped() };
    let mut totals = Totals::default();
    let mut parts = Vec::new();
    for piece in pieces(other, &pose) {
        let i = piece.index();
        let region = region_of(0, i, 0);
        let (p, wp) = match &piece {
            Piece::Part(_, p, wp) => (*p, *wp),
            Piece::Mesh(..) => continue, // mesh–half-space pairs are the volume stage's
        };
        match intersection_volume(&plane, &at(offset), p.primitive(), &wp) {
            Ok(Some(v)) => {
                let v = oriented(v);
                totals.add_primitive(&v);
                parts.extend(primitive_parts(c.a, c.b, &v, region).unwrap_or_default());
                continue;
            }
            Ok(None) => {}
            Err(e) => {
                c.refused = Some(e.to_string());
                continue;
            }
        }
        // Above the plane: speculative parts from the cap below the raised plane.
        let Ok(Some(low)) = p.primitive().support(&wp, -n) else {
            continue;
        };
        let gap = n.dot(low) - offset;
        let Ok(Some(raised)) = intersection_volume(&plane, &at(offset + delta), p.primitive(), &wp)
        else {
            continue;
        };
        let Some(raw) = primitive_parts(c.a, c.b, &raised, region) else {
            continue;
        };
        parts.extend(raw.into_iter().map(|part| {
            // Gradients here are with respect to `other`'s motion: its cap area is −n · linear.
            let area = (-n.dot(part.linear)).max(0.0);
            VolumeContact {
                volume: -gap * area,
                point: part.point - n * delta,
                linear: sign * part.linear,
                // About the lowered point: τ' = τ + (p − p') × g.
                angular: sign * (part.angular + (n * delta).cross(part.linear)),
                ..part
            }
        }));
    }
    totals.finish(c);
    c.parts = parts;
}

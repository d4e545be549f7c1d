//! Pairs with a primitive or a compound collider ([`Shape::Primitive`], [`Shape::Compound`]):
//! the narrow phase, the intersection volume and its split into volume contacts, and the
//! interference test the spatial queries share.
//!
//! A primitive is a compound of one part at the identity, so every pair is a set of piece pairs:
//! each part of a primitive or compound body (a compound's mesh parts too) against each part
//! (or the mesh, or the plane) of the other. Per piece pair (`interfere_geometry::primitives`, Wang–Faure–Pai 2012 §2.2 for the
//! volume and its gradient):
//!
//! | piece pair | interference | volume and gradient |
//! |---|---|---|
//! | half-space – part | the part's support point along `−n` below the plane | closed form (cap, segment integral, convex clip) |
//! | sphere–sphere, cuboid–cuboid, sphere–cuboid | closed form / exact (`primitives_intersect`) | closed form (lens, convex clip, ball ∩ planes) |
//! | other part pairs (capsule, cylinder with anything but a half-space) | closed form or GJK | the exact mesh–mesh volume of the two inscribed tessellations ([`PrimitiveShape::tessellation`], volume within [`crate::collision::shape::TESSELLATION_TOLERANCE`]; a cuboid's mesh is exact) |
//! | sphere – mesh | exact on the mesh's triangles (`primitive_solid_intersect`) | closed form: the ball clipped by the mesh's triangles |
//! | capsule, cylinder, cuboid – mesh | as above | the exact mesh–mesh volume of the tessellation and the mesh |
//! | mesh part of a compound – mesh or mesh part | the OBBTree test | the exact mesh–mesh volume (from the traversal's triangle pairs) |
//!
//! These are `interfere_geometry`'s `PrimitiveVolumeMethod::ClosedForm` / `Tessellate` routes; the
//! tessellation route is the documented fallback where geometry has no closed form. The
//! settings' [`crate::VolumeMethod`] (exact, uniform, adaptive) applies to mesh–mesh pairs only:
//! pairs with a primitive always use the closed form or the exact volume of the tessellations.
//!
//! **Volume contacts.** A closed-form volume's flat regions ([`PrimitiveVolume::regions_b`],
//! their pieces [`PrimitiveVolume::pieces_b`]) become a four-part manifold at the principal radii
//! of the contact surface, as an exact mesh region does ([`crate::contact::parts::sampled::principal_parts`],
//! the same depth cap at twice the mean depth; an isotropic surface — a ball's cap disk, a
//! cube's square face — has its axes set by the part's local X axis, not by rounding); a tessellated pair's exact result is split per
//! region as in the mesh–mesh stage ([`crate::contact::parts::exact::exact_parts`]), with four
//! parts where one side is flat-faced and, when the other is curved, each part's force on the
//! curved side's centre or axis ([`aim_at_axis`]). Feature keys number
//! the regions by `(part of a, part of b, region)`, stable while the same parts touch.
//!
//! **A piece lying on a cuboid's face.** A capsule, cylinder or cuboid whose projection meets
//! the face of a cuboid it reaches least deep below (a box floor, a stair's tread, a crate's
//! lid; of two cuboids the larger is the floor) takes that face as a half-space's plane, below:
//! its parts come from the raised cap and span the strip or face it lies on, and it gets
//! speculative parts within its margin before the two touch ([`face_contact`]; the narrow phase
//! reports such a pair as speculative). Where the piece overhangs the face (a forearm across a
//! stair's edge) the cap is sampled within the face instead of taken in closed form
//! ([`sampled_cap`]: columns of a grid, ray cast; oracle test against the closed form). The
//! routes in the table above keep a piece beside or deep inside the cuboid.
//!
//! **Half-spaces.** As for a mesh (`volume_stage`), each part near or below the plane (within
//! its speculative margin `δ`) gets four parts from the cap below the plane raised by `δ`, so they
//! exist, stay put while a face lands, tilts and rests, and give speculative constraints before
//! it touches. The four points are the cap's centroid `± r₁ e₁ ± r₂ e₂` (principal axes and
//! radii of gyration of the cap section; for an isotropic section the part's local X axis sets
//! `e₁`), each with a quarter of the cap's area, moved down to the plane. A part's volume is
//! `A_q (d_q − δ)`, `d_q` the depth of the primitive's surface under its point below the raised
//! plane (a ray cast): its own penetration (negative: its gap) times its area, as the mesh
//! stage's quadrants have, so a tilted face presses on one side and lifts on the other. One
//! equal shift makes the four sum to the raised cap's volume carried down to the plane to second
//! order, `V(δ) − δ A(δ) + ½ δ² dA/dh` (`dA/dh` from the section at `δ/2`, faded out over the
//! part's gap): exact for a flat face, within `π δ³` for a ball's cap, whose volume is cubic in
//! its depth (the first-order `V − δ A` of the mesh stage would sink a ball by about `δ`). Each
//! part's force acts along the surface normal's line ([`force_line`]): through a ball's centre,
//! a capsule's or cylinder's axis (so a ball rolls freely), or through the point for a flat
//! face. The margin is the shape's, but with the speed at which the part's surface approaches
//! the plane (a ball's spin does not count). The pair's totals are the true cap's. A compound's
//! mesh parts take the mesh stage's exact volume below the plane and its quadrants instead
//! ([`crate::contact::parts::half_space`]), with the part's own margin.

use crate::body::Body;
use crate::body::mass::outer;
use crate::collision::margin::{moving_margin, shape_margin};
use crate::collision::shape::{HalfSpace, MeshShape, PrimitiveShape, Shape};
use crate::contact::parts::exact::{capped_parts, exact_parts, exact_totals, feature_key};
use crate::contact::parts::half_space::mesh_plane_contact;
use crate::contact::parts::sampled::principal_parts_with_hint;
use crate::contact::stage::{InterferingPair, PairContact, StageInput};
use crate::contact::{BodyId, VolumeContact};
use interfere_geometry::glam::{DMat3, DVec3};
use interfere_geometry::primitives::{PrimitiveVolume, volume_method_with_solid};
use interfere_geometry::volume::{ExactOptions, ExactResult, ExactVolume};
use interfere_geometry::{
    Aabb, DPose, Method, Primitive, PrimitiveVolumeMethod, intersection_volume,
    primitive_solid_intersect, primitive_solid_volume, primitives_intersect,
};
use std::sync::Arc;

/// One solid piece of a bounded body placed in the world: a primitive part of a primitive or
/// compound (its index, its shape, its world pose), or a mesh — a mesh body, or a mesh part of a
/// compound, numbered after its primitive parts — (its index, its world pose).
#[derive(Clone)]
enum Piece<'a> {
    Part(usize, &'a PrimitiveShape, DPose),
    Mesh(usize, &'a Arc<MeshShape>, DPose),
}

impl Piece<'_> {
    /// Whether its surface is made of flat faces (a mesh or a cuboid). A tessellated pair with a
    /// flat-faced side gets parts with lever arms and depth shares
    /// ([`crate::contact::parts::sampled::principal_parts_with_hint`]), their forces put on the
    /// curved side's axis when it has one ([`aim_at_axis`]); two curved primitives' tessellations
    /// keep one central constraint per region.
    fn flat_faced(&self) -> bool {
        match self {
            Piece::Part(_, p, _) => matches!(p.primitive(), Primitive::Cuboid { .. }),
            Piece::Mesh(..) => true,
        }
    }

    fn aabb(&self) -> Option<Aabb> {
        match self {
            Piece::Part(_, p, pose) => p.world_aabb(pose),
            Piece::Mesh(_, m, pose) => m.world_aabb(pose),
        }
    }

    fn index(&self) -> usize {
        match self {
            Piece::Part(i, ..) | Piece::Mesh(i, ..) => *i,
        }
    }
}

/// The pieces of a shape placed by the collider pose `pose` (none for a half-space).
fn pieces<'a>(shape: &'a Shape, pose: &DPose) -> Vec<Piece<'a>> {
    match shape {
        Shape::Mesh(m) => vec![Piece::Mesh(0, m, *pose)],
        Shape::HalfSpace(_) => Vec::new(),
        Shape::Primitive(p) => vec![Piece::Part(0, p, *pose)],
        Shape::Compound(c) => {
            let mut out: Vec<Piece<'a>> = c
                .parts()
                .enumerate()
                .map(|(i, (p, local))| Piece::Part(i, p, pose.mul(&local)))
                .collect();
            let first = out.len();
            out.extend(
                c.meshes()
                    .iter()
                    .enumerate()
                    .map(|(k, m)| Piece::Mesh(first + k, &m.shape, pose.mul(&m.pose))),
            );
            out
        }
    }
}

/// The lowest value of `n · x` over the shape placed by `pose` (mesh vertices; the primitives'
/// support points along `−n`); `None` for a half-space or a non-finite pose.
pub fn lowest_along(shape: &Shape, pose: &DPose, n: DVec3) -> Option<f64> {
    let mut lowest = f64::INFINITY;
    for piece in pieces(shape, pose) {
        let l = match piece {
            Piece::Mesh(_, m, pose) => m
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
        (Piece::Part(_, p, wp), Piece::Mesh(_, m, wm))
        | (Piece::Mesh(_, m, wm), Piece::Part(_, p, wp)) => primitive_solid_intersect(
            p.primitive(),
            wp,
            m.solid(),
            m.queries().balanced_tree(),
            wm,
        )
        .unwrap_or(false),
        (Piece::Mesh(_, ma, wa), Piece::Mesh(_, mb, wb)) => ma
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
    let near_plane = |h: &HalfSpace, hp: &DPose, other: &Shape, ob: &Body, op: &DPose| {
        let (n, offset) = h.world(hp);
        let lowest = lowest_along(other, op, n)?;
        let margin = shape_margin(ob, other, input.dt);
        (lowest < offset + margin).then(|| pair(lowest >= offset))
    };
    match (sa, sb) {
        (Shape::HalfSpace(_), Shape::HalfSpace(_)) => None,
        (Shape::HalfSpace(h), other) => near_plane(h, &pa, other, bb, &pb),
        (other, Shape::HalfSpace(h)) => near_plane(h, &pb, other, ba, &pa),
        _ if shapes_interfere(sa, &pa, sb, &pb) => Some(pair(false)),
        // A piece lying on a cuboid's face within its margin, not touching: its speculative
        // parts (`face_contact`) hold it as a half-space's would.
        _ => {
            let pieces_b = pieces(sb, &pb);
            let near = pieces(sa, &pa).iter().any(|x| {
                pieces_b.iter().any(|y| {
                    face_contact(input, (a, b), (x, ba), (y, bb), 0)
                        .is_some_and(|r| r.is_ok_and(|(_, parts)| !parts.is_empty()))
                })
            });
            near.then(|| pair(true))
        }
    }
}

/// The pair's totals as contributions `(volume, ∂V/∂x_b, ∂V/∂θ_b about point, point, weight)`,
/// combined about the weighted mean point.
#[derive(Default)]
struct Totals(Vec<Total>);

impl Totals {
    fn add_primitive(&mut self, v: &PrimitiveVolume) {
        self.0.push(total_of(v));
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

/// A closed-form volume as a [`Total`], weighted by its regions' area.
fn total_of(v: &PrimitiveVolume) -> Total {
    let weight: f64 = v.regions_b.iter().map(|r| r.area()).sum();
    (
        v.volume,
        v.translation_gradient,
        v.rotation_gradient,
        v.point,
        weight,
    )
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
    hint: DVec3,
    lever_arms: bool,
) -> Option<Vec<VolumeContact>> {
    let ends: Vec<(DVec3, DVec3)> = v
        .pieces_b
        .iter()
        .map(|p| (p.centroid, p.vector_area))
        .collect();
    let parts = principal_parts_with_hint(
        v.volume,
        v.translation_gradient,
        v.rotation_gradient,
        v.point,
        &ends,
        None,
        &DPose::IDENTITY,
        Some(hint),
        None,
        lever_arms,
    )?;
    let area: f64 = v.regions_b.iter().map(|r| r.area()).sum();
    Some(capped_parts(a, b, &parts, v.volume, area, region).collect())
}

/// The axis that orients an isotropic contact's parts (see
/// [`crate::contact::parts::sampled::principal_parts_with_hint`]): the local X axis of the first part of the
/// pair, so that they turn with the body.
fn hint_of(x: &Piece<'_>, y: &Piece<'_>) -> DVec3 {
    match (x, y) {
        (Piece::Part(_, _, pose), _)
        | (_, Piece::Part(_, _, pose))
        | (Piece::Mesh(_, _, pose), _) => pose.rotation.x_axis,
    }
}

/// The parts of a tessellated pair of a curved primitive (a sphere, capsule or cylinder) and a
/// flat-faced piece (a cuboid or a mesh): each part's force is put on the line through the
/// curved piece's centre or axis ([`force_line`]), as the closed forms against a half-space have
/// it. Otherwise the tessellation's facets tilt the parts' torques about the axis: a capsule
/// lying on a box floor, at rest or given a small roll, spun itself up and wandered (0.029 →
/// 0.09 J over 20 s; `capsule_lying_on_a_box_floor_comes_to_rest`). Two curved pieces keep the
/// tessellation's own torques (one line cannot pass through both axes in general; forced through
/// one, a ragdoll's limbs touching each other rocked).
fn aim_at_axis(parts: &mut [VolumeContact], b: &Piece, a: &Piece) {
    let curved = |p: &Piece| match p {
        Piece::Part(_, s, pose) if !matches!(s.primitive(), Primitive::Cuboid { .. }) => {
            Some((*s.primitive(), *pose))
        }
        _ => None,
    };
    let (primitive, pose) = match (curved(b), curved(a)) {
        (Some(c), None) | (None, Some(c)) => c,
        _ => return,
    };
    for part in parts {
        let Some(n) = part.linear.try_normalize() else {
            continue;
        };
        let line = force_line(&primitive, &pose, n, part.point);
        part.angular = (line - part.point).cross(part.linear);
    }
}

/// A point of the line the contact force of a part at `point` acts along, for a primitive
/// pressed on a plane of normal `n`: a curved surface's normals pass through its centre (a
/// sphere, a capsule's ends) or its axis (a capsule's or cylinder's side), so turning the body
/// about them changes no part's volume (a ball rolls freely); a flat face (a cuboid, a
/// cylinder's cap, `|n · axis| > 0.99`) has its normals along `n` through the point itself, so
/// tilting it presses one side and lifts the other.
fn force_line(p: &Primitive, pose: &DPose, n: DVec3, point: DVec3) -> DVec3 {
    let centre = pose.translation;
    let axis = pose.rotation.y_axis;
    let on_axis = |half: f64| centre + axis * (point - centre).dot(axis).clamp(-half, half);
    match *p {
        Primitive::Sphere { .. } => centre,
        Primitive::Capsule { half_length, .. } => on_axis(half_length),
        Primitive::Cylinder { half_height, .. } if n.dot(axis).abs() <= 0.99 => {
            on_axis(half_height)
        }
        _ => point,
    }
}

/// Four points of a flat contact region, `c ± r₁ e₁ ± r₂ e₂` with `e_k` its principal axes and
/// `r_k` its radii of gyration (so four equal point forces there have the region's total, moment
/// and second moment: they resist tilting as the distributed contact does); an isotropic region
/// (principal moments within 1e-3) takes `e₁` from `hint` projected on its plane, so that the
/// parts (and their feature keys) turn with the body instead of with rounding. `None` for an
/// empty region.
fn quadrant_points(
    region: &interfere_geometry::PlanarRegion,
    n: DVec3,
    frame: &DMat3,
    hint: DVec3,
) -> Option<[DVec3; 4]> {
    let area = region.area();
    if !(area > 0.0 && area.is_finite()) {
        return None;
    }
    let (u, v) = crate::contact::tangent_pair_in(n, frame);
    let m = &region.second_moment;
    let (muu, muv, mvv) = (u.dot(*m * u), u.dot(*m * v), v.dot(*m * v));
    let half_trace = 0.5 * (muu + mvv);
    let diff = 0.5 * (muu - mvv);
    let root = (diff * diff + muv * muv).sqrt();
    let (l1, l2) = ((half_trace + root).max(0.0), (half_trace - root).max(0.0));
    let angle = 0.5 * (2.0 * muv).atan2(muu - mvv);
    let mut e1 = u * angle.cos() + v * angle.sin();
    if root <= 1e-3 * half_trace
        && let Some(e) = (hint - n * n.dot(hint)).try_normalize()
    {
        e1 = e;
    }
    let e2 = n.cross(e1);
    let (r1, r2) = ((l1 / area).sqrt(), (l2 / area).sqrt());
    let c = region.centroid;
    Some([
        c + e1 * r1 + e2 * r2,
        c - e1 * r1 + e2 * r2,
        c - e1 * r1 - e2 * r2,
        c + e1 * r1 - e2 * r2,
    ])
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
        Piece::Mesh(_, m, pose) => Ok((m, *pose)),
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
                == PrimitiveVolumeMethod::ClosedForm)
                .then(|| intersection_volume(p.primitive(), wp, q.primitive(), wq).map_err(err))
        }
        (Piece::Part(_, p, wp), Piece::Mesh(_, m, wm)) => (volume_method_with_solid(p.primitive())
            == PrimitiveVolumeMethod::ClosedForm)
            .then(|| {
                primitive_solid_volume(
                    p.primitive(),
                    wp,
                    m.solid(),
                    m.queries().balanced_tree(),
                    wm,
                )
                .map_err(err)
            }),
        (Piece::Mesh(_, m, wm), Piece::Part(_, q, wq)) => (volume_method_with_solid(q.primitive())
            == PrimitiveVolumeMethod::ClosedForm)
            .then(|| {
                primitive_solid_volume(
                    q.primitive(),
                    wq,
                    m.solid(),
                    m.queries().balanced_tree(),
                    wm,
                )
                .map(|v| v.map(|v| v.swapped()))
                .map_err(err)
            }),
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
                    let (i, j) = (x.index(), y.index());
                    // Before the boxes' test: a piece lying on a face within its margin has
                    // speculative parts while the boxes are apart.
                    match face_contact(input, (a, b), (&x, ba), (y, bb), region_of(i, j, 8)) {
                        Some(Ok((real, found))) => {
                            totals.0.extend(real);
                            parts.extend(found);
                            continue;
                        }
                        Some(Err(e)) => {
                            c.refused = Some(e);
                            continue;
                        }
                        None => {}
                    }
                    if let (Some(bx), Some(by)) = (x.aabb(), y.aabb())
                        && !bx.overlaps(&by)
                    {
                        continue;
                    }
                    match closed_form(&x, y) {
                        Some(Ok(Some(v))) => {
                            totals.add_primitive(&v);
                            parts.extend(
                                primitive_parts(
                                    a,
                                    b,
                                    &v,
                                    region_of(i, j, 0),
                                    hint_of(&x, y),
                                    x.flat_faced() && y.flat_faced(),
                                )
                                .unwrap_or_default(),
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
                                    let from = parts.len();
                                    parts.extend(exact_parts(
                                        a,
                                        b,
                                        &r,
                                        &wa,
                                        region_of(i, j, 0),
                                        // Four parts with lever arms where one side is flat;
                                        // a curved side's are then put on its axis.
                                        x.flat_faced() || y.flat_faced(),
                                    ));
                                    aim_at_axis(&mut parts[from..], y, &x);
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
    ob: &Body,
    sign: f64,
) {
    let (n, offset) = h.world(hp);
    let pose = ob.mesh_pose();
    let mover = Mover {
        approach: (-n.dot(ob.linear_velocity)).max(0.0),
        spin: ob.angular_velocity.length(),
        margin: shape_margin(ob, other, input.dt),
        size: other
            .local_box()
            .map_or(0.0, |(lo, hi)| (hi - lo).min_element()),
    };
    let mut totals = Totals::default();
    let mut parts = Vec::new();
    for piece in pieces(other, &pose) {
        let i = piece.index();
        let (p, wp) = match &piece {
            Piece::Part(_, p, wp) => (*p, *wp),
            Piece::Mesh(_, m, wm) => {
                // A mesh part: the exact volume below the plane and its quadrant split, as for
                // a mesh body (`crate::contact::parts::half_space`), with the part's own margin.
                let (lo, hi) = m.local_box();
                let Some(delta) = mover.part_margin((hi - lo).length(), m.size(), input.dt) else {
                    continue;
                };
                let pair = (c.a, c.b);
                let region = region_of(0, i, 0);
                let found =
                    mesh_plane_contact(pair, m, wm, (n, offset, &hp.rotation), delta, sign, region);
                if let Some((volume, linear, angular, point)) = found.totals {
                    totals
                        .0
                        .push((volume, linear, angular, point, linear.length()));
                }
                parts.extend(found.parts);
                continue;
            }
        };
        let plane = Plane {
            n,
            offset,
            frame: &hp.rotation,
        };
        let region = region_of(0, i, 0);
        let pair = (c.a, c.b);
        let on = primitive_on_plane(input.dt, &plane, p, &wp, &mover, sign, pair, region, None);
        match on {
            Ok(Some((real, found))) => {
                totals.0.extend(real);
                parts.extend(found);
            }
            Ok(None) => {}
            Err(e) => c.refused = Some(e),
        }
    }
    totals.finish(c);
    c.parts = parts;
}

/// A plane a primitive is pressed on: a half-space's boundary or a cuboid's face. `n` is its
/// outward unit normal, `offset` its `n · x`, `frame` the rotation of the body it belongs to (its
/// parts' tangent frame turns with that body, `crate::contact::tangent_pair_in`).
struct Plane<'a> {
    n: DVec3,
    offset: f64,
    frame: &'a DMat3,
}

/// How the pressed body moves relative to the plane: the speed its centre approaches the plane
/// at, its relative spin, its shape's speculative margin (`shape_margin`) and its thinnest
/// extent.
struct Mover {
    approach: f64,
    spin: f64,
    margin: f64,
    size: f64,
}

impl Mover {
    /// A part's margin: the shape's but with the speed its surface approaches the plane at: the
    /// centre's speed along −n, plus the spin times the part's `reach` (0 for a ball: turning a
    /// ball about its centre brings nothing closer), and 1 % of `size`. A rolling ball with the
    /// whole body's margin would take its parts from a cap far wider than its contact, where the
    /// second-order carry-down in [`primitive_on_plane`] is no longer accurate. `None` when it is
    /// not finite and positive.
    fn part_margin(&self, reach: f64, size: f64, dt: f64) -> Option<f64> {
        let speed = self.approach + self.spin * reach;
        let delta = (0.01 * size + 2.0 * dt * speed).min(self.margin);
        (delta > 0.0 && delta.is_finite()).then_some(delta)
    }
}

/// A pair's contribution to its totals: `(volume, ∂V/∂x_b, ∂V/∂θ_b about point, point, weight)`
/// (see [`Totals`]).
type Total = (f64, DVec3, DVec3, DVec3, f64);

/// The intersection volume of a primitive below a plane as a [`Total`] (`None` where it does not
/// reach below it) and the primitive's four parts on the plane.
type PlaneParts = (Option<Total>, Vec<VolumeContact>);

/// The rectangle of a cuboid's face a primitive lies on, for [`primitive_on_plane`]: its two
/// in-plane unit axes and the ranges of `u · x` and `v · x` within both the face and the
/// primitive's projection.
struct FaceRect {
    u: DVec3,
    v: DVec3,
    u_range: (f64, f64),
    v_range: (f64, f64),
}

/// The four parts of the primitive `p` (placed by `wp`) pressed on `plane` (see the module
/// documentation, **Half-spaces**), with the intersection volume below the plane itself for the
/// pair's totals; `sign` is `+1` when the primitive is body `b`. With `clip` (a face the
/// primitive overhangs) the cap is taken within the face's rectangle ([`sampled_cap`]).
/// `Ok(None)` when it is farther from the plane than its margin (or, clipped, has no column
/// below the raised plane within the face); the parts are empty when the raised cap has no
/// region.
#[allow(clippy::too_many_arguments)]
fn primitive_on_plane(
    dt: f64,
    plane: &Plane<'_>,
    p: &PrimitiveShape,
    wp: &DPose,
    mover: &Mover,
    sign: f64,
    (a, b): (BodyId, BodyId),
    region_number: usize,
    clip: Option<&FaceRect>,
) -> Result<Option<PlaneParts>, String> {
    let (n, offset) = (plane.n, plane.offset);
    let Ok(half_space) = Primitive::half_space(n) else {
        return Ok(None);
    };
    let at = |off: f64| DPose {
        rotation: DMat3::IDENTITY,
        translation: n * off,
    };
    let oriented = |v: PrimitiveVolume| if sign > 0.0 { v } else { v.swapped() };
    let size = mover.size;
    // A ball's reach is 0 in its margin (see `Mover::part_margin`).
    let reach = match p.primitive() {
        Primitive::Sphere { .. } => 0.0,
        _ => p.local_box().1.length(),
    };
    let Some(margin) = mover.part_margin(reach, size, dt) else {
        return Ok(None);
    };
    let Ok(Some(low)) = p.primitive().support(wp, -n) else {
        return Ok(None);
    };
    let gap = n.dot(low) - offset;
    if gap > margin {
        return Ok(None);
    }
    // The parts' cap: the primitive's slice 1 % of its size above its lowest point (not the
    // margin's, which grows with the approach speed): the manifold of a body at a pose is
    // then the same whatever its velocity. With the margin's cap, a resting ball's parts
    // moved between a narrow and a wide cap as its small velocity changed sign, and the
    // changed torques fed that velocity back: a ragdoll's head and pelvis rocked with a
    // period of two steps, never coming to rest.
    let delta = (gap.max(0.0) + 0.01 * size).min(margin);
    let reach = 2.0 * p.local_box().1.length() + delta;
    // Depth of the primitive's surface under a point of the raised plane, below it.
    let depth = |q: DVec3| {
        let from = q - n * reach;
        match p.primitive().ray_cast(wp, from, n, reach) {
            Ok(Some(hit)) if hit.normal != DVec3::ZERO => reach - hit.t,
            _ => 0.0,
        }
    };
    let mut parts = Vec::new();
    // The cap below the plane raised by the margin (as for a mesh), whose region the parts
    // come from, its volume, the area of its section at half the margin, and the volume below
    // the plane itself for the totals: closed forms, or, on a face the primitive overhangs,
    // sampled within the face (`sampled_cap`).
    let (real, region, raised_volume, half_area) = match clip {
        None => {
            let real = intersection_volume(&half_space, &at(offset), p.primitive(), wp)
                .map_err(|e| e.to_string())?
                .map(|v| total_of(&oriented(v)));
            let raised = intersection_volume(&half_space, &at(offset + delta), p.primitive(), wp);
            let Ok(Some(raised)) = raised else {
                return Ok(Some((real, parts)));
            };
            let Some(region) = raised.regions_b.first().cloned() else {
                return Ok(Some((real, parts)));
            };
            let half =
                intersection_volume(&half_space, &at(offset + 0.5 * delta), p.primitive(), wp);
            let half_area: f64 = match half {
                Ok(Some(v)) => v.regions_b.iter().map(|r| r.area()).sum(),
                _ => 0.0,
            };
            (real, region, raised.volume, half_area)
        }
        Some(rect) => {
            let Some(cap) = sampled_cap(rect, n, offset + delta, delta, &depth) else {
                return Ok(None);
            };
            let real = (cap.real_volume > 0.0).then(|| {
                let point = cap.real_centroid - n * delta;
                let linear = -n * cap.real_area * sign;
                (cap.real_volume, linear, DVec3::ZERO, point, cap.real_area)
            });
            (real, cap.region, cap.volume, cap.half_area)
        }
    };
    let total_area = region.area();
    let Some(points) = quadrant_points(&region, n, plane.frame, wp.rotation.x_axis) else {
        return Ok(Some((real, parts)));
    };
    let depths: Vec<f64> = points.iter().map(|&q| depth(q)).collect();
    let share = 0.25 * total_area;
    // First-order volumes at the real plane, then one shift (equal per part, as the areas
    // are) that makes their sum the raised cap's volume carried down to the real plane to
    // second order: `V(δ) − δ A(δ) + ½ δ² dA/dh`, with dA/dh from the section at δ/2 and
    // faded out over the part's gap (0 at a gap of δ).
    let first: f64 = depths.iter().map(|d| share * d).sum();
    let slope = ((total_area - half_area) / (0.5 * delta)).max(0.0);
    let fade = (1.0 - gap.max(0.0) / delta).clamp(0.0, 1.0);
    let shift = (raised_volume - first + 0.5 * delta * delta * slope * fade) / 4.0;
    // ∂V/∂x of a part with respect to the primitive's motion: its quarter of −A n.
    let g = region.vector_area * 0.25;
    for (q, (point, d)) in points.iter().zip(&depths).enumerate() {
        let at_plane = *point - n * delta;
        let line = force_line(p.primitive(), wp, n, at_plane);
        parts.push(VolumeContact {
            body_a: a,
            body_b: b,
            volume: share * (d - delta) + shift,
            point: at_plane,
            linear: sign * g,
            // The part's force acts along the surface normal's line (see `force_line`).
            angular: sign * (line - at_plane).cross(g),
            feature: feature_key(a, b, region_number, q as u8),
        });
    }
    Ok(Some((real, parts)))
}

/// The contact of two primitive pieces where one lies on a face of the other, a cuboid: a
/// capsule, cylinder or cuboid on a box floor, a stair's tread, a crate's lid. The face is taken
/// as a plane and the other piece gets the four parts of a primitive on a half-space
/// ([`primitive_on_plane`]: from the cap below the plane raised by the piece's margin, with
/// their lever arms at the cap's principal radii; sampled within the face where the piece
/// overhangs it). `None` (the pair then takes the closed form or the tessellation route) unless
/// one piece is a cuboid and the other a capsule, cylinder or cuboid whose projection on the
/// face meets it, the face being the cuboid's face the piece reaches least deep below
/// ([`lying_face`]); of two cuboids the larger is the floor. `region` numbers the parts'
/// feature keys (plus the face, `0..6`).
///
/// The tessellation route's region is where the surfaces overlap now: a capsule lying on a
/// tread overlaps it only at the end that is lower by nanoradians, so its parts sat at that end
/// and gave no support at the other; the capsule tipped onto the other end within the step, and
/// back: a seesaw with a period of four steps whose impacts the position projection paid for. A
/// lone capsule (r = 5 cm, 30 cm long) lying on a box, turned about the vertical, rocked at a
/// mean 0.66 rad/s for as long as it ran; a ragdoll's forearm on the machines demo's stairs
/// kept the ragdoll awake. The raised cap spans the whole strip the capsule lies on, as on a
/// half-space, where the same capsule comes to rest.
fn face_contact(
    input: &StageInput<'_>,
    (a, b): (BodyId, BodyId),
    (x, bx): (&Piece<'_>, &Body),
    (y, by): (&Piece<'_>, &Body),
    region: usize,
) -> Option<Result<PlaneParts, String>> {
    let (Piece::Part(_, px, wx), Piece::Part(_, py, wy)) = (x, y) else {
        return None;
    };
    let kind = |p: &PrimitiveShape| match *p.primitive() {
        Primitive::Cuboid { half_extents, .. } => Some(Some(half_extents)),
        Primitive::Capsule { .. } | Primitive::Cylinder { .. } => Some(None),
        _ => None,
    };
    let (kx, ky) = (kind(px)?, kind(py)?);
    let volume = |h: DVec3| h.x * h.y * h.z;
    // (floor, its pose, its body, its half extents), (piece, its pose, its body), sign (+1 when
    // the piece is body b).
    let floor_y = |h| ((*wy, by, h), (*px, *wx, bx), -1.0);
    let floor_x = |h| ((*wx, bx, h), (*py, *wy, by), 1.0);
    let order = match (kx, ky) {
        (Some(hx), Some(hy)) if volume(hx) > volume(hy) => [Some(floor_x(hx)), Some(floor_y(hy))],
        (Some(hx), Some(hy)) => [Some(floor_y(hy)), Some(floor_x(hx))],
        (None, Some(hy)) => [Some(floor_y(hy)), None],
        (Some(hx), None) => [Some(floor_x(hx)), None],
        (None, None) => return None,
    };
    for ((wf, bf, half), (p, wp, bp), sign) in order.into_iter().flatten() {
        let Some((face, n, offset, rect)) = lying_face(&wf, half, p, &wp) else {
            continue;
        };
        // The piece's motion relative to the floor's body (the floor's velocity at the piece's
        // centre), for the margins.
        let v = bp.linear_velocity
            - bf.linear_velocity
            - bf.angular_velocity.cross(wp.translation - bf.position);
        let spin = (bp.angular_velocity - bf.angular_velocity).length();
        let (lo, hi) = p.local_box();
        let mover = Mover {
            approach: (-n.dot(v)).max(0.0),
            spin,
            margin: moving_margin(v.length(), spin, (lo, hi), input.dt),
            size: (hi - lo).min_element(),
        };
        let plane = Plane {
            n,
            offset,
            frame: &wf.rotation,
        };
        let found = primitive_on_plane(
            input.dt,
            &plane,
            p,
            &wp,
            &mover,
            sign,
            (a, b),
            region + face,
            rect.as_ref(),
        );
        return match found {
            Ok(Some((real, parts))) => Some(Ok((real, parts))),
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        };
    }
    None
}

/// The face of the cuboid of half extents `half` placed by `wf` that the primitive `p` (placed
/// by `wp`) lies on, as `(face number 0..6, outward normal, n · x of the face, rectangle)`: the
/// face it reaches least deep below (its depth below every other face is larger), its depth
/// less than the cuboid's half thickness there, and its projection on the face's plane meeting
/// the face. The rectangle is `None` when that projection lies within the face (the closed
/// forms of a half-space then apply), else the face's rectangle to sample the cap within
/// (an overhang). `None` otherwise (deep inside, or beside the face).
fn lying_face(
    wf: &DPose,
    half: DVec3,
    p: &PrimitiveShape,
    wp: &DPose,
) -> Option<(usize, DVec3, f64, Option<FaceRect>)> {
    let centre = wf.translation;
    let axes = [wf.rotation.x_axis, wf.rotation.y_axis, wf.rotation.z_axis];
    // The primitive's extent along a unit direction: (lowest, highest) of `d · x`.
    let extent = |d: DVec3| -> Option<(f64, f64)> {
        let lo = d.dot(p.primitive().support(wp, -d).ok()??);
        let hi = d.dot(p.primitive().support(wp, d).ok()??);
        Some((lo, hi))
    };
    let mut best: Option<(f64, usize)> = None;
    for face in 0..6 {
        let (k, s) = (face / 2, if face % 2 == 0 { 1.0 } else { -1.0 });
        let n = axes[k] * s;
        let (lo, _) = extent(n)?;
        let depth = n.dot(centre) + half[k] - lo;
        if best.is_none_or(|(d, _)| depth < d) {
            best = Some((depth, face));
        }
    }
    let (depth, face) = best?;
    let (k, s) = (face / 2, if face % 2 == 0 { 1.0 } else { -1.0 });
    if !(depth.is_finite() && depth < half[k]) {
        return None;
    }
    let mut inside = true;
    let mut ranges = Vec::with_capacity(2);
    for other in (0..3).filter(|&o| o != k) {
        let (lo, hi) = extent(axes[other])?;
        let c = axes[other].dot(centre);
        let (f_lo, f_hi) = (c - half[other], c + half[other]);
        if hi <= f_lo || lo >= f_hi {
            return None;
        }
        inside &= lo >= f_lo && hi <= f_hi;
        // The part of the face the primitive's projection covers.
        ranges.push((axes[other], (lo.max(f_lo), hi.min(f_hi))));
    }
    let n = axes[k] * s;
    let rect = (!inside).then(|| FaceRect {
        u: ranges[0].0,
        v: ranges[1].0,
        u_range: ranges[0].1,
        v_range: ranges[1].1,
    });
    Some((face, n, n.dot(centre) + half[k], rect))
}

/// The cap of a primitive below a raised plane, within a face's rectangle, sampled (see
/// [`sampled_cap`]).
struct SampledCap {
    /// The cap's section on the raised plane, within the face.
    region: interfere_geometry::PlanarRegion,
    /// The cap's volume below the raised plane.
    volume: f64,
    /// The section's area at half the margin below the raised plane.
    half_area: f64,
    /// The volume, area and area centroid (on the raised plane) below the real plane.
    real_volume: f64,
    real_area: f64,
    real_centroid: DVec3,
}

/// Cells per side of [`sampled_cap`]'s grid, were it square (its cells are).
const CAP_CELLS: usize = 48;

/// The cap of a primitive below the plane `n · x = raised` within the face rectangle `rect`,
/// from a grid of [`CAP_CELLS`]² columns over the part of the rectangle the primitive's
/// section can reach: `depth(q)` is how far the primitive's lower surface lies below the
/// raised plane under its point `q` (0 where it does not). A column counts with its cell's area
/// (and the cell's own second moment) where its depth is positive; the volume below the real
/// plane, `delta` lower, is that of the columns deeper than `delta`. `None` when no column
/// reaches below the raised plane. Used where a primitive overhangs the face it lies on (a
/// forearm across a stair's edge), where the closed forms of a half-space would count the
/// overhang.
fn sampled_cap(
    rect: &FaceRect,
    n: DVec3,
    raised: f64,
    delta: f64,
    depth: &dyn Fn(DVec3) -> f64,
) -> Option<SampledCap> {
    let (u, v) = (rect.u, rect.v);
    // The columns reaching below the raised plane over a rectangle of the face, first over the
    // whole footprint, then over the box of the cells found (clamped to the footprint), so
    // that a narrow strip gets the grid's resolution.
    let cells = |(u0, u1): (f64, f64), (v0, v1): (f64, f64)| {
        // About square cells, [`CAP_CELLS`]² of them.
        let budget = (CAP_CELLS * CAP_CELLS) as f64;
        let aspect = (u1 - u0) / (v1 - v0);
        let nu = if aspect.is_finite() && aspect > 0.0 {
            ((budget * aspect).sqrt().round() as usize).clamp(4, CAP_CELLS * CAP_CELLS / 4)
        } else {
            CAP_CELLS
        };
        let nv = (CAP_CELLS * CAP_CELLS / nu).max(4);
        let (du, dv) = ((u1 - u0) / nu as f64, (v1 - v0) / nv as f64);
        let mut found = Vec::new();
        if du > 0.0 && dv > 0.0 {
            for i in 0..nu {
                for j in 0..nv {
                    let (a, b) = (u0 + (i as f64 + 0.5) * du, v0 + (j as f64 + 0.5) * dv);
                    let d = depth(u * a + v * b + n * raised);
                    if d > 0.0 {
                        found.push((a, b, d));
                    }
                }
            }
        }
        (found, du, dv)
    };
    let (coarse, du, dv) = cells(rect.u_range, rect.v_range);
    let lo_hi = |k: fn(&(f64, f64, f64)) -> f64, h: f64, (r0, r1): (f64, f64)| {
        let lo = coarse.iter().map(k).fold(f64::INFINITY, f64::min) - h;
        let hi = coarse.iter().map(k).fold(f64::NEG_INFINITY, f64::max) + h;
        (lo.max(r0), hi.min(r1))
    };
    if coarse.is_empty() {
        return None;
    }
    let (found, du, dv) = cells(
        lo_hi(|c| c.0, du, rect.u_range),
        lo_hi(|c| c.1, dv, rect.v_range),
    );
    let cell = du * dv;
    let square = |a: DVec3| outer(a, a);
    let own = square(u) * (cell * du * du / 12.0) + square(v) * (cell * dv * dv / 12.0);
    let (mut area, mut first, mut second, mut volume) = (0.0, DVec3::ZERO, DMat3::ZERO, 0.0);
    let (mut half_area, mut real_volume, mut real_area, mut real_first) =
        (0.0, 0.0, 0.0, DVec3::ZERO);
    for (a, b, d) in found {
        let q = u * a + v * b + n * raised;
        area += cell;
        first += q * cell;
        second += square(q) * cell + own;
        volume += cell * d;
        if d > 0.5 * delta {
            half_area += cell;
        }
        if d > delta {
            real_volume += cell * (d - delta);
            real_area += cell;
            real_first += q * cell;
        }
    }
    if area <= 0.0 {
        return None;
    }
    let centroid = first / area;
    let about = second - square(centroid) * area;
    Some(SampledCap {
        region: interfere_geometry::PlanarRegion {
            centroid,
            vector_area: -n * area,
            second_moment: about,
        },
        volume,
        half_area,
        real_volume,
        real_area,
        real_centroid: if real_area > 0.0 {
            real_first / real_area
        } else {
            centroid
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use interfere_geometry::glam::DQuat;

    /// Oracle for the sampled cap (`sampled_cap`, a primitive overhanging a face): for a
    /// capsule, a cylinder and a cuboid lying within a face, nearly flat and sunk up to 2 mm, the
    /// sampled cap's parts match the closed form's (`primitive_on_plane` without a rectangle):
    /// the four parts' volumes sum to the same within 6 % of the cap's, their points' centroid
    /// within 1 mm and their second moment within 6 % (the region's; not each point, for a short
    /// nearly isotropic region's principal axes turn with a percent's difference), each part's
    /// gradient within 6 %; the totals' volume within 6 %. Twelve seeded poses each.
    #[test]
    fn sampled_cap_matches_the_closed_form_within_a_face() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let shapes = [
            Primitive::capsule(0.1, 0.05).unwrap(),
            Primitive::cylinder(0.1, 0.05).unwrap(),
            Primitive::cuboid(DVec3::new(0.1, 0.05, 0.08)).unwrap(),
        ];
        let frame = DMat3::IDENTITY;
        let plane = Plane {
            n: DVec3::Z,
            offset: 0.0,
            frame: &frame,
        };
        let (mut checked, mut worst) = (0, 0.0f64);
        for shape in shapes {
            let p = PrimitiveShape::new(shape).unwrap();
            for _ in 0..12 {
                // Lying: the local Y axis (a capsule's or cylinder's) horizontal, turned about
                // the vertical, tilted by up to 0.3°; a cuboid on its ±Z face.
                let yaw = DQuat::from_rotation_z(rng.random_range(-3.0..3.0));
                let tilt = DQuat::from_rotation_x(rng.random_range(-0.005..0.005))
                    * DQuat::from_rotation_y(rng.random_range(-0.005..0.005));
                let lie = match shape {
                    Primitive::Cuboid { .. } => DQuat::IDENTITY,
                    _ => DQuat::from_rotation_x(std::f64::consts::FRAC_PI_2),
                };
                let q = yaw * tilt * lie;
                let mut wp = DPose {
                    rotation: DMat3::from_quat(q),
                    translation: DVec3::new(rng.random_range(-1.0..1.0), 0.3, 0.0),
                };
                let low = shape.support(&wp, -DVec3::Z).unwrap().unwrap().z;
                wp.translation.z -= low + rng.random_range(0.0..0.002);
                let mover = Mover {
                    approach: 0.0,
                    spin: 0.0,
                    margin: 1e-3,
                    size: 0.1,
                };
                let run = |clip: Option<&FaceRect>| {
                    primitive_on_plane(1.0 / 60.0, &plane, &p, &wp, &mover, 1.0, (0, 1), 0, clip)
                        .unwrap()
                        .unwrap()
                };
                // A face far larger than the footprint, given as a rectangle.
                let rect = FaceRect {
                    u: DVec3::X,
                    v: DVec3::Y,
                    u_range: (-3.0, 3.0),
                    v_range: (-3.0, 3.0),
                };
                let rect = {
                    let ext = |d: DVec3| {
                        let lo = d.dot(shape.support(&wp, -d).unwrap().unwrap());
                        let hi = d.dot(shape.support(&wp, d).unwrap().unwrap());
                        (lo, hi)
                    };
                    FaceRect {
                        u_range: ext(DVec3::X),
                        v_range: ext(DVec3::Y),
                        ..rect
                    }
                };
                let (closed_total, closed) = run(None);
                let (sampled_total, sampled) = run(Some(&rect));
                assert_eq!(closed.len(), 4);
                assert_eq!(sampled.len(), 4);
                let cap: f64 = closed.iter().map(|c| c.linear.length() * 1e-3).sum();
                let sum = |v: &[VolumeContact]| v.iter().map(|c| c.volume).sum::<f64>();
                assert!(
                    (sum(&closed) - sum(&sampled)).abs() <= 0.06 * cap,
                    "{shape:?}: volumes {} vs {} (cap {cap})",
                    sum(&closed),
                    sum(&sampled)
                );
                // The parts' centroid and second moment (the region's, whatever its principal
                // axes: a short, nearly isotropic region's axes turn with a percent's error).
                let moments = |v: &[VolumeContact]| {
                    let c = v.iter().map(|x| x.point).sum::<DVec3>() / v.len() as f64;
                    let m = v.iter().fold(DMat3::ZERO, |m, x| {
                        let d = x.point - c;
                        m + DMat3::from_cols(d * d.x, d * d.y, d * d.z)
                    });
                    (c, m)
                };
                let ((cc, mc), (cs, ms)) = (moments(&closed), moments(&sampled));
                let trace = mc.x_axis.x + mc.y_axis.y + mc.z_axis.z;
                let diff = mc - ms;
                let off = [diff.x_axis, diff.y_axis, diff.z_axis]
                    .iter()
                    .map(|c| c.length_squared())
                    .sum::<f64>()
                    .sqrt();
                worst = worst.max((cc - cs).length());
                assert!(
                    (cc - cs).length() < 1e-3 && off <= 0.06 * trace,
                    "{shape:?}: parts' centroid {cc} vs {cs}, second moment off by {off:.3e} of \
                     {trace:.3e}"
                );
                for (c, x) in closed.iter().zip(&sampled) {
                    assert!(
                        (x.linear - c.linear).length() <= 0.06 * c.linear.length(),
                        "{shape:?}: gradient {} vs {}",
                        c.linear,
                        x.linear
                    );
                }
                let (cv, sv) = (
                    closed_total.map_or(0.0, |t| t.0),
                    sampled_total.map_or(0.0, |t| t.0),
                );
                assert!(
                    (cv - sv).abs() <= 0.06 * cv.max(cap),
                    "{shape:?}: totals {cv} vs {sv}"
                );
                checked += 1;
            }
        }
        eprintln!("sampled cap: parts' centroid at most {worst:.2e} m from the closed form's");
        assert_eq!(checked, 36);
    }
}

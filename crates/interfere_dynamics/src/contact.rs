//! Contacts and the sources that produce them.
//!
//! Two contact models feed the solver:
//! - **point contacts** (`point`, `normal` from body a to body b, penetration `depth`), one impulse
//!   per contact as in Lin–Manocha 1996 §5;
//! - **volume contacts** (Wang–Faure–Pai 2012 §2.2): the intersection volume `V ≥ 0` of a pair and
//!   its gradient with respect to body b's pose. The gradient is a generalized force: `linear =
//!   ∂V/∂x_b` and `angular = ∂V/∂θ_b` with rotations taken about the world point `point`; body a's
//!   gradient is minus body b's about the same point (the volume depends only on the relative
//!   pose). The solver turns `V` and the gradient into a Signorini constraint (see `solver`).
//!
//! A [`ContactSource`] produces the contacts of the current state. This module provides
//! geometric sources that need no mesh-mesh query: [`HalfSpaceSource`] (planes attached to bodies
//! against mesh vertices, reduced to a manifold of at most 4 points per pair), [`SphereSource`]
//! (analytic spheres against planes and each other) and [`HalfSpaceVolumeSource`] (exact volume of
//! a mesh below a plane, with its exact gradient). The mesh-mesh volume source plugs into the same
//! trait.

use crate::body::RigidBody;
use interfere_geometry::Solid;
use interfere_geometry::glam::DVec3;
use serde::{Deserialize, Serialize};

/// Index of a body in its [`crate::World`].
pub type BodyId = usize;

/// A point contact between bodies `body_a` and `body_b`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointContact {
    /// First body.
    pub body_a: BodyId,
    /// Second body.
    pub body_b: BodyId,
    /// Contact point, world space.
    pub point: DVec3,
    /// Unit normal pointing from body a to body b.
    pub normal: DVec3,
    /// Penetration depth (positive when overlapping, negative for a speculative gap).
    pub depth: f64,
    /// Feature key, stable from step to step for the same touching features (warm starting).
    pub feature: u64,
}

/// A volume contact between bodies `body_a` and `body_b` (Wang–Faure–Pai 2012 §2.2).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct VolumeContact {
    /// First body.
    pub body_a: BodyId,
    /// Second body.
    pub body_b: BodyId,
    /// Intersection volume, `≥ 0`.
    pub volume: f64,
    /// Reference point for the angular gradient and the point where friction acts (for example
    /// the centroid of the intersection or of its boundary).
    pub point: DVec3,
    /// `∂V/∂x_b`: change of volume per unit translation of body b (body a's is the negative).
    pub linear: DVec3,
    /// `∂V/∂θ_b`: change of volume per unit rotation of body b about `point` (body a's is the
    /// negative).
    pub angular: DVec3,
    /// Feature key for warm starting.
    pub feature: u64,
}

/// The contacts of one state.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Contacts {
    /// Point contacts.
    pub points: Vec<PointContact>,
    /// Volume contacts.
    pub volumes: Vec<VolumeContact>,
}

impl Contacts {
    /// Removes all contacts, keeping the allocations.
    pub fn clear(&mut self) {
        self.points.clear();
        self.volumes.clear();
    }

    /// Total number of contacts.
    pub fn len(&self) -> usize {
        self.points.len() + self.volumes.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Something that finds the contacts of the current state. Implementations append to `out`
/// (which the world clears beforehand) and must be deterministic: the same bodies give the same
/// contacts in the same order.
pub trait ContactSource {
    /// Appends the contacts between `bodies` (indexed by [`BodyId`]).
    fn contacts(&mut self, bodies: &[RigidBody], out: &mut Contacts);
}

impl<A: ContactSource, B: ContactSource> ContactSource for (A, B) {
    fn contacts(&mut self, bodies: &[RigidBody], out: &mut Contacts) {
        self.0.contacts(bodies, out);
        self.1.contacts(bodies, out);
    }
}

impl<S: ContactSource + ?Sized> ContactSource for Box<S> {
    fn contacts(&mut self, bodies: &[RigidBody], out: &mut Contacts) {
        (**self).contacts(bodies, out);
    }
}

/// An infinite plane `normal · x = offset` fixed in the mesh frame of body `body`; its solid
/// side is below (opposite `normal`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plane {
    /// The body carrying the plane (usually a static ground).
    pub body: BodyId,
    /// Outward unit normal in the body's mesh frame.
    pub normal: DVec3,
    /// Offset along the normal in the body's mesh frame.
    pub offset: f64,
}

impl Plane {
    /// A plane through `point` with outward `normal` (normalized here), both in the mesh frame
    /// of `body`. `None` for a zero or non-finite normal or point.
    pub fn new(body: BodyId, normal: DVec3, point: DVec3) -> Option<Self> {
        let n = normal.try_normalize()?;
        point.is_finite().then(|| Self {
            body,
            normal: n,
            offset: n.dot(point),
        })
    }

    /// The world-space normal and offset, or `None` if the body does not exist.
    pub fn world(&self, bodies: &[RigidBody]) -> Option<(DVec3, f64)> {
        let pose = bodies.get(self.body)?.mesh_pose();
        let n = pose.transform_vector(self.normal);
        let p = pose.transform_dpoint(self.normal * self.offset);
        Some((n, n.dot(p)))
    }
}

#[derive(Clone, Debug)]
struct PlaneEntry {
    plane: Plane,
    /// `None`: every mesh of another body; otherwise only these bodies.
    targets: Option<Vec<BodyId>>,
}

/// Static or moving planes against the vertices of body meshes: every vertex closer than
/// `margin` to the plane (or below it) is a candidate point contact; each (plane, mesh) pair
/// keeps at most 4 of them, chosen as the deepest point and then extreme points spanning the
/// largest area in the plane (a stable manifold).
#[derive(Clone, Debug)]
pub struct HalfSpaceSource {
    planes: Vec<PlaneEntry>,
    meshes: Vec<(BodyId, Vec<DVec3>)>,
    /// Speculative distance: vertices up to this far above a plane already produce contacts.
    pub margin: f64,
    scratch: Vec<(DVec3, f64, u32)>,
}

impl HalfSpaceSource {
    /// An empty source with the given speculative margin (negative values count as zero).
    pub fn new(margin: f64) -> Self {
        Self {
            planes: Vec::new(),
            meshes: Vec::new(),
            margin: if margin.is_finite() {
                margin.max(0.0)
            } else {
                0.0
            },
            scratch: Vec::new(),
        }
    }

    /// Adds a plane that collides with the meshes of every other body.
    pub fn add_plane(&mut self, plane: Plane) -> usize {
        self.planes.push(PlaneEntry {
            plane,
            targets: None,
        });
        self.planes.len() - 1
    }

    /// Adds a plane that collides only with the meshes of `bodies`.
    pub fn add_plane_for(&mut self, plane: Plane, bodies: &[BodyId]) -> usize {
        self.planes.push(PlaneEntry {
            plane,
            targets: Some(bodies.to_vec()),
        });
        self.planes.len() - 1
    }

    /// Registers `solid` (in its mesh frame) as the shape of `body`.
    pub fn add_mesh(&mut self, body: BodyId, solid: &Solid) {
        self.meshes.push((
            body,
            solid.vertices().iter().map(|v| v.as_dvec3()).collect(),
        ));
    }
}

/// Picks at most 4 of `cands` (point, depth, id): the deepest, the farthest from it, the one
/// spanning the largest triangle with those two, and the one adding the most area. Ties go to
/// the earlier candidate, so the choice is deterministic.
fn reduce_manifold(cands: &[(DVec3, f64, u32)], normal: DVec3) -> [Option<usize>; 4] {
    let mut out = [None; 4];
    if cands.len() <= 4 {
        for (i, slot) in out.iter_mut().enumerate().take(cands.len()) {
            *slot = Some(i);
        }
        return out;
    }
    let argmax = |f: &dyn Fn(usize) -> f64| {
        let mut best = 0;
        let mut best_v = f64::NEG_INFINITY;
        for i in 0..cands.len() {
            let v = f(i);
            if v > best_v {
                best_v = v;
                best = i;
            }
        }
        best
    };
    let p = |i: usize| cands[i].0 - normal * normal.dot(cands[i].0);
    let i0 = argmax(&|i| cands[i].1);
    let i1 = argmax(&|i| (p(i) - p(i0)).length_squared());
    let area = |a: DVec3, b: DVec3, c: DVec3| normal.dot((b - a).cross(c - a)) * 0.5;
    let i2 = argmax(&|i| area(p(i0), p(i1), p(i)).abs());
    let base = area(p(i0), p(i1), p(i2)).abs();
    let i3 = argmax(&|i| {
        area(p(i0), p(i1), p(i)).abs()
            + area(p(i1), p(i2), p(i)).abs()
            + area(p(i2), p(i0), p(i)).abs()
            - base
    });
    out[0] = Some(i0);
    for (slot, i) in [(1, i1), (2, i2), (3, i3)] {
        if out[..slot].iter().all(|&o| o != Some(i)) {
            out[slot] = Some(i);
        }
    }
    out
}

impl ContactSource for HalfSpaceSource {
    fn contacts(&mut self, bodies: &[RigidBody], out: &mut Contacts) {
        for (pi, entry) in self.planes.iter().enumerate() {
            let Some((n, offset)) = entry.plane.world(bodies) else {
                continue;
            };
            for (body, verts) in &self.meshes {
                let body = *body;
                let wanted = match &entry.targets {
                    None => body != entry.plane.body,
                    Some(t) => t.contains(&body),
                };
                let Some(rb) = bodies.get(body) else { continue };
                if !wanted {
                    continue;
                }
                let pose = rb.mesh_pose();
                self.scratch.clear();
                for (vi, v) in verts.iter().enumerate() {
                    let w = pose.transform_dpoint(*v);
                    let depth = offset - n.dot(w);
                    if depth >= -self.margin {
                        self.scratch.push((w, depth, vi as u32));
                    }
                }
                for i in reduce_manifold(&self.scratch, n).into_iter().flatten() {
                    let (point, depth, vi) = self.scratch[i];
                    out.points.push(PointContact {
                        body_a: entry.plane.body,
                        body_b: body,
                        point,
                        normal: n,
                        depth,
                        feature: ((pi as u64) << 32) | vi as u64,
                    });
                }
            }
        }
    }
}

/// Analytic spheres (centred at their body's centre of mass) against planes and each other.
#[derive(Clone, Debug)]
pub struct SphereSource {
    spheres: Vec<(BodyId, f64)>,
    planes: Vec<Plane>,
    /// Speculative distance.
    pub margin: f64,
}

impl SphereSource {
    /// An empty source with the given speculative margin.
    pub fn new(margin: f64) -> Self {
        Self {
            spheres: Vec::new(),
            planes: Vec::new(),
            margin: if margin.is_finite() {
                margin.max(0.0)
            } else {
                0.0
            },
        }
    }

    /// Adds a sphere of `radius` on `body`. Returns `false` (and adds nothing) for a radius that
    /// is not finite and positive.
    pub fn add_sphere(&mut self, body: BodyId, radius: f64) -> bool {
        let ok = radius.is_finite() && radius > 0.0;
        if ok {
            self.spheres.push((body, radius));
        }
        ok
    }

    /// Adds a plane colliding with every sphere of another body.
    pub fn add_plane(&mut self, plane: Plane) {
        self.planes.push(plane);
    }
}

impl ContactSource for SphereSource {
    fn contacts(&mut self, bodies: &[RigidBody], out: &mut Contacts) {
        for plane in &self.planes {
            let Some((n, offset)) = plane.world(bodies) else {
                continue;
            };
            for (si, &(body, r)) in self.spheres.iter().enumerate() {
                let Some(b) = bodies.get(body) else { continue };
                if body == plane.body {
                    continue;
                }
                let depth = offset - (n.dot(b.position) - r);
                if depth >= -self.margin {
                    out.points.push(PointContact {
                        body_a: plane.body,
                        body_b: body,
                        point: b.position - n * r,
                        normal: n,
                        depth,
                        feature: si as u64,
                    });
                }
            }
        }
        for i in 0..self.spheres.len() {
            for j in i + 1..self.spheres.len() {
                let ((ia, ra), (ib, rb)) = (self.spheres[i], self.spheres[j]);
                let (Some(a), Some(b)) = (bodies.get(ia), bodies.get(ib)) else {
                    continue;
                };
                if ia == ib {
                    continue;
                }
                let d = b.position - a.position;
                let dist = d.length();
                let depth = ra + rb - dist;
                if depth < -self.margin {
                    continue;
                }
                // Concentric spheres have no defined normal; push along +z deterministically.
                let n = if dist > 1e-12 { d / dist } else { DVec3::Z };
                out.points.push(PointContact {
                    body_a: ia,
                    body_b: ib,
                    point: a.position + n * (ra - 0.5 * depth),
                    normal: n,
                    depth,
                    feature: ((i as u64) << 32) | j as u64,
                });
            }
        }
    }
}

/// Exact volume contact of closed meshes against planes: the volume of each mesh below each
/// plane and its exact gradient (Wang–Faure–Pai 2012 §2.2 with the analytic half-space instead
/// of the ray-sampled volume), emitted as up to four volume contacts per (plane, mesh), one per
/// quadrant around the cap centroid ([`volume_below_plane_split`]).
///
/// The part of the solid below the plane is bounded by the clipped surface `S⁻` and the planar
/// cap. With a reference point `o` on the plane the cap's tetrahedra are flat, so
/// `V = Σ_{S⁻} det(p₀−o, p₁−o, p₂−o)/6`. Translating the body by `δ` changes `V` by the flux
/// through the cap, and since the closed boundary has zero total vector area,
/// `∂V/∂x = Σ_{S⁻} a_t` (sum of outward area vectors of the clipped triangles). Likewise
/// `∮ x × dA = 0` gives `∂V/∂θ (about p) = Σ_{S⁻} (c_t − p) × a_t`, with `c_t` the centroid.
/// For a box face-down at depth `d` that is `V = A d`, `∂V/∂x = −A n`, the cross-section area
/// times the normal.
#[derive(Clone, Debug)]
pub struct HalfSpaceVolumeSource {
    planes: Vec<Plane>,
    meshes: Vec<(BodyId, Vec<DVec3>, Vec<[u32; 3]>)>,
}

/// Volume of a closed surface below the plane `n·x = offset` and its gradient with respect to
/// translating and rotating the surface (about `point`, the returned cap centroid estimate).
/// Returns `(volume, linear, angular, point)`; `None` if nothing is below.
pub fn volume_below_plane(
    vertices: &[DVec3],
    triangles: &[[u32; 3]],
    n: DVec3,
    offset: f64,
) -> Option<(f64, DVec3, DVec3, DVec3)> {
    let o = n * offset;
    let mut six_v = 0.0;
    let mut lin = DVec3::ZERO;
    let mut moment = DVec3::ZERO; // Σ c_t × a_t about the origin
    // Cap centroid from its boundary: each crossing triangle contributes one boundary segment
    // from its exit crossing to its entry crossing (consistently oriented); fan them from o.
    let mut cap_area = 0.0;
    let mut cap_moment = DVec3::ZERO;
    let mut crossings = [DVec3::ZERO; 2];
    let mut poly: Vec<DVec3> = Vec::with_capacity(4);
    for tri in triangles {
        let mut p = [DVec3::ZERO; 3];
        for k in 0..3 {
            p[k] = *vertices.get(tri[k] as usize)?;
        }
        let s = p.map(|q| offset - n.dot(q)); // > 0 below
        poly.clear();
        let mut nc = 0;
        for k in 0..3 {
            let (a, b) = (p[k], p[(k + 1) % 3]);
            let (sa, sb) = (s[k], s[(k + 1) % 3]);
            if sa >= 0.0 {
                poly.push(a);
            }
            if (sa >= 0.0) != (sb >= 0.0) {
                let t = sa / (sa - sb);
                let x = a + (b - a) * t;
                poly.push(x);
                // Slot 0: where the boundary leaves the submerged part, slot 1: where it
                // re-enters; the cap edge of this triangle runs from the first to the second.
                crossings[if sa >= 0.0 { 0 } else { 1 }] = x;
                nc += 1;
            }
        }
        if nc == 2 {
            let [x1, x2] = crossings;
            let a = 0.5 * n.dot((x1 - o).cross(x2 - o));
            cap_area += a;
            cap_moment += (o + x1 + x2) * (a / 3.0);
        }
        for k in 1..poly.len().saturating_sub(1) {
            let (a, b, c) = (poly[0], poly[k], poly[k + 1]);
            six_v += (a - o).dot((b - o).cross(c - o));
            let area = (b - a).cross(c - a) * 0.5;
            lin += area;
            moment += ((a + b + c) / 3.0).cross(area);
        }
    }
    let volume = six_v / 6.0;
    if volume <= 0.0 || !volume.is_finite() {
        return None;
    }
    // Friction and torque reference: the cap's area centroid (or, when the solid lies entirely
    // below and there is no cap, the projection of the vertex mean onto the plane).
    let point = if cap_area.abs() > 1e-300 {
        cap_moment / cap_area
    } else {
        let mean = vertices.iter().copied().sum::<DVec3>() / vertices.len().max(1) as f64;
        mean + n * (offset - n.dot(mean))
    };
    let angular = moment - point.cross(lin);
    Some((volume, lin, angular, point))
}

/// One part of a split volume contact: see [`volume_below_plane_split`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct VolumePart {
    /// Volume of this part.
    pub volume: f64,
    /// `∂V/∂x` of this part.
    pub linear: DVec3,
    /// `∂V/∂θ` of this part about `point`.
    pub angular: DVec3,
    /// Reference point: the part's downward-facing area centroid projected onto the plane.
    pub point: DVec3,
    /// Its quadrant around the cap centroid, `0..4` (stable while the cut stays put).
    pub quadrant: u8,
}

/// Keeps the part of the convex polygon `poly` where `dist ≥ 0` (Sutherland–Hodgman).
fn clip_polygon(poly: &[DVec3], dist: impl Fn(DVec3) -> f64, out: &mut Vec<DVec3>) {
    out.clear();
    for k in 0..poly.len() {
        let (a, b) = (poly[k], poly[(k + 1) % poly.len()]);
        let (da, db) = (dist(a), dist(b));
        if da >= 0.0 {
            out.push(a);
        }
        if (da >= 0.0) != (db >= 0.0) {
            out.push(a + (b - a) * (da / (da - db)));
        }
    }
}

/// The volume below the plane split into up to four parts by the two vertical planes through the
/// cap centroid along the tangent directions `n.any_orthonormal_pair()` (the quadrants). Each part
/// is an exact volume with its exact gradient (Reynolds transport: `dV/dt = ∫ (v + ω × (x − q))·dA`
/// over the part's share of the moving surface, the cut planes held fixed), so a resting face
/// gets four constraints that resist tilting at first order, like a four-point manifold, where a
/// single volume constraint is only neutrally stable. Parts with no volume are omitted.
pub fn volume_below_plane_split(
    vertices: &[DVec3],
    triangles: &[[u32; 3]],
    n: DVec3,
    offset: f64,
) -> Option<Vec<VolumePart>> {
    let (_, _, _, p) = volume_below_plane(vertices, triangles, n, offset)?;
    let (t1, t2) = n.any_orthonormal_pair();
    let mut six_v = [0.0; 4];
    let mut lin = [DVec3::ZERO; 4];
    let mut moment = [DVec3::ZERO; 4]; // about p
    let mut wsum = [0.0; 4];
    let mut wc = [DVec3::ZERO; 4];
    let (mut below, mut half, mut quarter) = (Vec::new(), Vec::new(), Vec::new());
    for tri in triangles {
        let mut tri_p = [DVec3::ZERO; 3];
        for k in 0..3 {
            tri_p[k] = *vertices.get(tri[k] as usize)?;
        }
        clip_polygon(&tri_p, |x| offset - n.dot(x), &mut below);
        if below.len() < 3 {
            continue;
        }
        for (q, (s1, s2)) in [(1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0)]
            .into_iter()
            .enumerate()
        {
            clip_polygon(&below, |x| s1 * t1.dot(x - p), &mut half);
            if half.len() < 3 {
                continue;
            }
            clip_polygon(&half, |x| s2 * t2.dot(x - p), &mut quarter);
            for k in 1..quarter.len().saturating_sub(1) {
                let (a, b, c) = (quarter[0], quarter[k], quarter[k + 1]);
                six_v[q] += (a - p).dot((b - p).cross(c - p));
                let area = (b - a).cross(c - a) * 0.5;
                let centroid = (a + b + c) / 3.0;
                lin[q] += area;
                moment[q] += (centroid - p).cross(area);
                let w = (-n.dot(area)).max(0.0);
                wsum[q] += w;
                wc[q] += centroid * w;
            }
        }
    }
    let mut parts = Vec::with_capacity(4);
    for q in 0..4 {
        let volume = six_v[q] / 6.0;
        if !(volume > 0.0 && volume.is_finite()) {
            continue;
        }
        let c = if wsum[q] > 0.0 { wc[q] / wsum[q] } else { p };
        let point = c + n * (offset - n.dot(c));
        parts.push(VolumePart {
            volume,
            linear: lin[q],
            angular: moment[q] + (p - point).cross(lin[q]),
            point,
            quadrant: q as u8,
        });
    }
    Some(parts)
}

impl HalfSpaceVolumeSource {
    /// An empty source.
    pub fn new() -> Self {
        Self {
            planes: Vec::new(),
            meshes: Vec::new(),
        }
    }

    /// Adds a plane colliding with every mesh of another body.
    pub fn add_plane(&mut self, plane: Plane) {
        self.planes.push(plane);
    }

    /// Registers `solid` (mesh frame) as the shape of `body`.
    pub fn add_mesh(&mut self, body: BodyId, solid: &Solid) {
        self.meshes.push((
            body,
            solid.vertices().iter().map(|v| v.as_dvec3()).collect(),
            solid.triangles().to_vec(),
        ));
    }
}

impl Default for HalfSpaceVolumeSource {
    fn default() -> Self {
        Self::new()
    }
}

impl ContactSource for HalfSpaceVolumeSource {
    fn contacts(&mut self, bodies: &[RigidBody], out: &mut Contacts) {
        let mut world = Vec::new();
        for (pi, plane) in self.planes.iter().enumerate() {
            let Some((n, offset)) = plane.world(bodies) else {
                continue;
            };
            for (mi, (body, verts, tris)) in self.meshes.iter().enumerate() {
                let Some(b) = bodies.get(*body) else { continue };
                if *body == plane.body {
                    continue;
                }
                let pose = b.mesh_pose();
                world.clear();
                world.extend(verts.iter().map(|v| pose.transform_dpoint(*v)));
                let Some(parts) = volume_below_plane_split(&world, tris, n, offset) else {
                    continue;
                };
                for (k, part) in parts.iter().enumerate() {
                    out.volumes.push(VolumeContact {
                        body_a: plane.body,
                        body_b: *body,
                        volume: part.volume,
                        point: part.point,
                        linear: part.linear,
                        angular: part.angular,
                        feature: ((pi as u64) << 32) | ((mi as u64) << 2) | k as u64,
                    });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use interfere_geometry::glam::{DMat3, DQuat};
    use interfere_geometry::shapes::{cuboid, icosphere, torus};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn posed(solid: &Solid, q: DQuat, t: DVec3) -> Vec<DVec3> {
        let r = DMat3::from_quat(q);
        solid
            .vertices()
            .iter()
            .map(|v| r * v.as_dvec3() + t)
            .collect()
    }

    #[test]
    fn box_below_plane_matches_analytic() {
        // Half extents exactly representable in f32, so the mesh is exactly this box.
        let half = DVec3::new(0.5, 0.375, 0.25);
        let solid = cuboid(half.as_vec3()).unwrap();
        for depth in [1e-6, 0.1, 0.25, 0.49] {
            let verts = posed(
                &solid,
                DQuat::IDENTITY,
                DVec3::new(0.0, 0.0, half.z - depth),
            );
            let (v, lin, ang, point) =
                volume_below_plane(&verts, solid.triangles(), DVec3::Z, 0.0).unwrap();
            let area = 4.0 * half.x * half.y;
            assert!((v - area * depth).abs() < 1e-12, "{v} vs {}", area * depth);
            assert!(
                (lin - DVec3::new(0.0, 0.0, -area)).length() < 1e-12,
                "{lin}"
            );
            assert!(ang.length() < 1e-12, "{ang}");
            assert!(point.z.abs() < 1e-12 && point.truncate().length() < 1e-12);
        }
        // Entirely above or exactly touching: no contact.
        let verts = posed(&solid, DQuat::IDENTITY, DVec3::new(0.0, 0.0, half.z));
        assert!(volume_below_plane(&verts, solid.triangles(), DVec3::Z, 0.0).is_none());
        // Entirely below: the whole volume, and zero gradient (closed surface, all submerged).
        let verts = posed(&solid, DQuat::IDENTITY, DVec3::new(0.0, 0.0, -5.0));
        let (v, lin, ang, _) =
            volume_below_plane(&verts, solid.triangles(), DVec3::Z, 0.0).unwrap();
        assert!((v - 8.0 * half.x * half.y * half.z).abs() < 1e-12);
        assert!(lin.length() < 1e-12 && ang.length() < 1e-12);
    }

    /// Oracle: central finite differences of the clipped volume for random poses of a box and a
    /// non-convex torus against random planes.
    #[test]
    fn gradient_matches_finite_differences() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let shapes = [
            cuboid(DVec3::new(0.5, 0.3, 0.2).as_vec3()).unwrap(),
            torus(0.6, 0.2, 24, 12).unwrap(),
            icosphere(0.5, 2).unwrap(),
        ];
        let mut checked = 0;
        for case in 0..60 {
            let solid = &shapes[case % shapes.len()];
            let axis = DVec3::new(
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
            )
            .normalize_or(DVec3::X);
            let q = DQuat::from_axis_angle(axis, rng.random_range(-3.0..3.0));
            let t = DVec3::new(
                rng.random_range(-0.2..0.2),
                rng.random_range(-0.2..0.2),
                rng.random_range(-0.3..0.3),
            );
            let n = DVec3::new(
                rng.random_range(-0.3..0.3),
                rng.random_range(-0.3..0.3),
                1.0,
            )
            .normalize();
            let offset = rng.random_range(-0.1..0.1);
            let tris = solid.triangles();
            let base = posed(solid, q, t);
            let Some((v, lin, ang, p)) = volume_below_plane(&base, tris, n, offset) else {
                continue;
            };
            let vol =
                |verts: &[DVec3]| volume_below_plane(verts, tris, n, offset).map_or(0.0, |x| x.0);
            let eps = 1e-6;
            for k in 0..3 {
                let d = DVec3::AXES[k] * eps;
                let plus: Vec<DVec3> = base.iter().map(|x| *x + d).collect();
                let minus: Vec<DVec3> = base.iter().map(|x| *x - d).collect();
                let fd = (vol(&plus) - vol(&minus)) / (2.0 * eps);
                assert!(
                    (fd - lin[k]).abs() < 1e-5,
                    "case {case} lin {k}: {fd} vs {}",
                    lin[k]
                );
                let rp = DQuat::from_scaled_axis(DVec3::AXES[k] * eps);
                let rm = DQuat::from_scaled_axis(-DVec3::AXES[k] * eps);
                let plus: Vec<DVec3> = base.iter().map(|x| rp * (*x - p) + p).collect();
                let minus: Vec<DVec3> = base.iter().map(|x| rm * (*x - p) + p).collect();
                let fd = (vol(&plus) - vol(&minus)) / (2.0 * eps);
                assert!(
                    (fd - ang[k]).abs() < 1e-5,
                    "case {case} ang {k}: {fd} vs {}",
                    ang[k]
                );
            }
            assert!(v > 0.0);
            checked += 1;
        }
        assert!(checked > 30, "{checked}");
    }

    /// Oracle for the split: the parts sum to the total volume and gradient, and each part's
    /// gradient matches finite differences with the cut planes held fixed.
    #[test]
    fn split_parts_sum_to_total_and_match_finite_differences() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let shapes = [
            cuboid(DVec3::new(0.5, 0.3, 0.2).as_vec3()).unwrap(),
            torus(0.6, 0.2, 24, 12).unwrap(),
        ];
        let mut checked = 0;
        for case in 0..30 {
            let solid = &shapes[case % shapes.len()];
            let axis = DVec3::new(
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
            )
            .normalize_or(DVec3::X);
            let q = DQuat::from_axis_angle(axis, rng.random_range(-3.0..3.0));
            let t = DVec3::new(0.0, 0.0, rng.random_range(-0.2..0.2));
            let tris = solid.triangles();
            let base = posed(solid, q, t);
            let Some((v, lin, _, p)) = volume_below_plane(&base, tris, DVec3::Z, 0.0) else {
                continue;
            };
            let parts = volume_below_plane_split(&base, tris, DVec3::Z, 0.0).unwrap();
            let vs: f64 = parts.iter().map(|x| x.volume).sum();
            let ls: DVec3 = parts.iter().map(|x| x.linear).sum();
            assert!((vs - v).abs() < 1e-12 * v.max(1.0), "{vs} vs {v}");
            assert!((ls - lin).length() < 1e-12, "{ls} vs {lin}");
            // Finite differences of one part with the cut planes (through p) fixed.
            let (t1, t2) = DVec3::Z.any_orthonormal_pair();
            let part_volume = |verts: &[DVec3], qd: (f64, f64)| -> f64 {
                let (mut below, mut half, mut quarter) = (Vec::new(), Vec::new(), Vec::new());
                let mut six = 0.0;
                for tri in tris {
                    let tp = tri.map(|i| verts[i as usize]);
                    clip_polygon(&tp, |x| -x.z, &mut below);
                    clip_polygon(&below, |x| qd.0 * t1.dot(x - p), &mut half);
                    clip_polygon(&half, |x| qd.1 * t2.dot(x - p), &mut quarter);
                    for k in 1..quarter.len().saturating_sub(1) {
                        six += (quarter[0] - p).dot((quarter[k] - p).cross(quarter[k + 1] - p));
                    }
                }
                six / 6.0
            };
            let quadrants = [(1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0)];
            for qd in quadrants {
                let vq = part_volume(&base, qd);
                let Some(part) = parts.iter().find(|x| (x.volume - vq).abs() < 1e-15) else {
                    assert!(vq <= 1e-15, "missing part of volume {vq}");
                    continue;
                };
                let eps = 1e-6;
                for k in 0..3 {
                    let d = DVec3::AXES[k] * eps;
                    let plus: Vec<DVec3> = base.iter().map(|x| *x + d).collect();
                    let minus: Vec<DVec3> = base.iter().map(|x| *x - d).collect();
                    let fd = (part_volume(&plus, qd) - part_volume(&minus, qd)) / (2.0 * eps);
                    assert!(
                        (fd - part.linear[k]).abs() < 1e-5,
                        "lin {fd} vs {}",
                        part.linear[k]
                    );
                    let c = part.point;
                    let rp = DQuat::from_scaled_axis(DVec3::AXES[k] * eps);
                    let rm = DQuat::from_scaled_axis(-DVec3::AXES[k] * eps);
                    let plus: Vec<DVec3> = base.iter().map(|x| rp * (*x - c) + c).collect();
                    let minus: Vec<DVec3> = base.iter().map(|x| rm * (*x - c) + c).collect();
                    let fd = (part_volume(&plus, qd) - part_volume(&minus, qd)) / (2.0 * eps);
                    assert!(
                        (fd - part.angular[k]).abs() < 1e-5,
                        "ang {fd} vs {}",
                        part.angular[k]
                    );
                }
                checked += 1;
            }
        }
        assert!(checked > 30, "{checked}");
    }

    #[test]
    fn manifold_is_at_most_four_points_and_keeps_the_deepest() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for _ in 0..50 {
            let cands: Vec<(DVec3, f64, u32)> = (0..rng.random_range(1..40))
                .map(|i| {
                    let p = DVec3::new(
                        rng.random_range(-1.0..1.0),
                        rng.random_range(-1.0..1.0),
                        0.0,
                    );
                    (p, rng.random_range(0.0..0.1), i)
                })
                .collect();
            let picked: Vec<usize> = reduce_manifold(&cands, DVec3::Z)
                .into_iter()
                .flatten()
                .collect();
            assert_eq!(picked.len(), cands.len().min(4));
            let deepest = cands.iter().map(|c| c.1).fold(f64::NEG_INFINITY, f64::max);
            assert!(picked.iter().any(|&i| cands[i].1 == deepest));
            let mut sorted = picked.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), picked.len(), "duplicates");
        }
        // Degenerate: all candidates at the same point; picks distinct indices, no panic.
        let same = vec![(DVec3::ZERO, 0.0, 0); 10];
        let picked: Vec<usize> = reduce_manifold(&same, DVec3::Z)
            .into_iter()
            .flatten()
            .collect();
        assert!(!picked.is_empty() && picked.len() <= 4);
    }

    #[test]
    fn sources_ignore_missing_bodies_and_bad_input() {
        assert!(Plane::new(0, DVec3::ZERO, DVec3::ZERO).is_none());
        assert!(Plane::new(0, DVec3::Z, DVec3::NAN).is_none());
        let mut s = SphereSource::new(f64::NAN);
        assert!(!s.add_sphere(0, -1.0));
        assert!(s.add_sphere(7, 1.0));
        s.add_plane(Plane::new(3, DVec3::Z, DVec3::ZERO).unwrap());
        let mut out = Contacts::default();
        s.contacts(&[], &mut out);
        assert!(out.is_empty());
        let mut h = HalfSpaceSource::new(-1.0);
        h.add_plane(Plane::new(0, DVec3::Z, DVec3::ZERO).unwrap());
        h.add_mesh(5, &cuboid(DVec3::ONE.as_vec3()).unwrap());
        h.contacts(&[], &mut out);
        assert!(out.is_empty());
    }
}

//! Spatial queries over a [`Simulation`] at its current state: ray casts (the first hit, or every
//! surface crossing), which solids contain a point, which bodies interfere with a shape placed
//! at a pose, and which bodies' world boxes overlap a box; each with a [`QueryFilter`] (collision
//! layers, excluded bodies, sensors, a predicate).
//!
//! - **Rays** are cast into each mesh in its own frame: the ray is mapped by the inverse of the
//!   body's mesh pose in `f64` and cast through the mesh's balanced AABB tree with the watertight
//!   hit test of `interfere_geometry::volume::RayMesh` (exact `orient2d` signs with simulation of
//!   simplicity, Woop–Benthin–Wald 2013), so a ray through an edge or a vertex crosses exactly one
//!   of the triangles there: rays never slip between the triangles of a closed mesh. A ray only
//!   grazing the surface (in a face's plane, or touching an edge or vertex without entering) may
//!   or may not report that touch. Rays report surface crossings at distances in
//!   `[0, max_distance]`; with `solid`, a ray starting inside a solid (or on its surface) hits it
//!   at distance 0 with a zero normal.
//! - **Points** are located exactly (`interfere_geometry::containment::locate_point_posed`: exact
//!   `orient3d` signs over the surface placed by the body's pose with the same `f64` transform as
//!   the narrow phase). Solids are closed: a point on the surface is contained.
//! - **Shapes** are tested with the step's own narrow phase ([`crate::contact::narrow_phase`]): the
//!   OBBTree traversal with exact triangle tests, then exact containment for nested solids
//!   (CInDeR, Knott–Pai 2003, Theorem 1), so touching counts as interfering; a mesh and a
//!   half-space interfere when a vertex lies strictly below the plane; two half-spaces never do
//!   (as in the step).
//! - **Boxes** are compared with the bodies' world boxes (the boxes the broad phase sweeps).
//!
//! Half-space bodies are answered analytically (their plane evaluated in `f64`, not exactly).
//! Primitive and compound bodies are answered in closed form (`interfere_geometry::primitives`):
//! rays by the closed-form ray casts (the exit of a convex part is the entry of the reversed ray;
//! a compound reports the crossings of each part), points by the exact point location of each
//! part, shapes by [`crate::contact::primitive_pairs::shapes_interfere`] (the narrow phase's tests). A
//! compound's mesh parts are answered as mesh bodies are, each at its pose in the body.
//!
//! Bodies are found by a linear scan over their world boxes (a few operations per body), which
//! is cheap next to the exact tests up to a few thousand bodies; there is no separate query tree.
//! Results are in a fixed order (ray hits by distance, then body id and triangle; body lists by
//! id).

pub(crate) mod capsule_cast;

use crate::body::Body;
use crate::collision::shape::{BodyShape, CollisionLayers, HalfSpace, MeshShape, Shape};
use crate::contact::BodyId;
use crate::contact::primitive_pairs::shapes_interfere;
use crate::simulation::{BodyHandle, Simulation};
use interfere_geometry::containment::{PointLocation, locate_point_posed};
use interfere_geometry::glam::DVec3;
use interfere_geometry::{Aabb, DPose, Primitive};
use std::collections::BTreeSet;

/// Which bodies a query may report. The default admits every body with a collider.
#[derive(Clone, Default)]
pub struct QueryFilter<'a> {
    /// The query's own collision layers: a body is considered when these and the body's
    /// collider's layers interact ([`CollisionLayers::interacts_with`], as for a pair in the
    /// step).
    pub layers: CollisionLayers,
    /// Bodies never reported.
    pub exclude: BTreeSet<BodyHandle>,
    /// Skip sensor colliders.
    pub exclude_sensors: bool,
    /// Called last, only for bodies that pass everything else (and the query's bounding-box
    /// test): the body is reported only if it returns `true`.
    pub predicate: Option<&'a dyn Fn(BodyHandle) -> bool>,
}

impl std::fmt::Debug for QueryFilter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueryFilter")
            .field("layers", &self.layers)
            .field("exclude", &self.exclude)
            .field("exclude_sensors", &self.exclude_sensors)
            .field(
                "predicate",
                &self.predicate.map(|_| "Fn(BodyHandle) -> bool"),
            )
            .finish()
    }
}

impl<'a> QueryFilter<'a> {
    /// Sets the query's collision layers.
    pub fn with_layers(mut self, layers: CollisionLayers) -> Self {
        self.layers = layers;
        self
    }

    /// Excludes these bodies.
    pub fn excluding(mut self, bodies: impl IntoIterator<Item = BodyHandle>) -> Self {
        self.exclude.extend(bodies);
        self
    }

    /// Skips sensors.
    pub fn without_sensors(mut self) -> Self {
        self.exclude_sensors = true;
        self
    }

    /// Reports only bodies for which `predicate` returns `true`.
    pub fn with_predicate(mut self, predicate: &'a dyn Fn(BodyHandle) -> bool) -> Self {
        self.predicate = Some(predicate);
        self
    }

    /// Whether a body with collider `c` passes the layers, the exclusions and the sensor flag
    /// (not the predicate).
    fn admits(&self, h: BodyHandle, c: &BodyShape) -> bool {
        !self.exclude.contains(&h)
            && self.layers.interacts_with(&c.layers)
            && !(self.exclude_sensors && c.sensor)
    }

    /// Whether the predicate (if any) accepts `h`.
    fn predicate_accepts(&self, h: BodyHandle) -> bool {
        self.predicate.is_none_or(|p| p(h))
    }
}

/// Where a ray meets a body.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RayHit {
    /// The body hit.
    pub body: BodyHandle,
    /// Distance from the origin along the (unit) direction.
    pub distance: f64,
    /// The hit point, world space: `origin + distance · direction`.
    pub point: DVec3,
    /// The outward unit normal of the surface hit, world space (for a mesh, the normal of the
    /// triangle hit); zero for a `solid` hit at the origin.
    pub normal: DVec3,
    /// The triangle hit (its index in the body's mesh); `None` for half-spaces, primitives,
    /// compounds and for `solid` hits at the origin.
    pub triangle: Option<u32>,
}

impl RayHit {
    /// The order of hits: distance, body id, then the hit without a triangle (a `solid` hit
    /// at the origin) before the triangles by index.
    fn key(&self) -> (f64, BodyId, u64) {
        (
            self.distance,
            self.body.id(),
            self.triangle.map_or(0, |t| u64::from(t) + 1),
        )
    }

    /// Whether this hit comes before `other` (distance, then body id, then triangle).
    fn before(&self, other: &RayHit) -> bool {
        let (a, b) = (self.key(), other.key());
        a.0.total_cmp(&b.0)
            .then(a.1.cmp(&b.1))
            .then(a.2.cmp(&b.2))
            .is_lt()
    }
}

/// A checked ray: finite origin, unit direction, distance limit in `[0, ∞]`.
#[derive(Clone, Copy)]
struct Ray {
    origin: DVec3,
    dir: DVec3,
    max: f64,
}

impl Ray {
    fn new(origin: DVec3, dir: DVec3, max: f64) -> Option<Self> {
        let dir = dir.try_normalize()?;
        (origin.is_finite() && max >= 0.0).then_some(Self { origin, dir, max })
    }

    fn at(&self, t: f64) -> DVec3 {
        self.origin + t * self.dir
    }

    /// Where the ray enters the closed box `[lo, hi]` within `[0, max]` (0 when it starts
    /// inside), or `None` when it misses it. Conservative: the boxes are padded outward far
    /// beyond the rounding here.
    fn enters_box(&self, aabb: &Aabb) -> Option<f64> {
        let (lo, hi) = (aabb.min.as_dvec3(), aabb.max.as_dvec3());
        let (mut t0, mut t1) = (0.0f64, self.max);
        for i in 0..3 {
            let (o, d) = (self.origin[i], self.dir[i]);
            if d == 0.0 {
                if o < lo[i] || o > hi[i] {
                    return None;
                }
            } else {
                let (a, b) = ((lo[i] - o) / d, (hi[i] - o) / d);
                t0 = t0.max(a.min(b));
                t1 = t1.min(a.max(b));
            }
        }
        (t0 <= t1 + 1e-9 * (t0.abs() + t1.abs())).then_some(t0)
    }
}

/// The world plane of a half-space body: `(normal, offset)`.
fn plane_of(body: &Body, h: &HalfSpace) -> (DVec3, f64) {
    h.world(&body.mesh_pose())
}

/// Whether the box reaches the closed half-space `n · x ≤ offset`.
fn box_below_plane(aabb: &Aabb, n: DVec3, offset: f64) -> bool {
    let (lo, hi) = (aabb.min.as_dvec3(), aabb.max.as_dvec3());
    let corner = DVec3::new(
        if n.x >= 0.0 { lo.x } else { hi.x },
        if n.y >= 0.0 { lo.y } else { hi.y },
        if n.z >= 0.0 { lo.z } else { hi.z },
    );
    n.dot(corner) <= offset
}

impl Simulation {
    /// Every body with a collider that passes the filter's layers, exclusions and sensor flag.
    fn admitted<'s>(
        &'s self,
        filter: &'s QueryFilter<'_>,
    ) -> impl Iterator<Item = (BodyHandle, &'s Body, &'s BodyShape)> + 's {
        self.colliders()
            .iter()
            .enumerate()
            .filter_map(move |(id, c)| {
                let c = c.as_ref()?;
                let h = self.handle(id)?;
                filter.admits(h, c).then(|| (h, &self.bodies()[id], c))
            })
    }

    /// Whether the solid of a body contains `p` (closed: the surface counts), exactly for
    /// meshes.
    fn solid_contains(body: &Body, shape: &Shape, p: DVec3) -> bool {
        match shape {
            Shape::Mesh(m) => {
                let pose = body.mesh_pose();
                m.world_aabb(&pose).is_some_and(|b| near_box(&b, p))
                    && locate_point_posed(m.solid(), &pose, p) != PointLocation::Outside
            }
            Shape::HalfSpace(h) => {
                let (n, offset) = plane_of(body, h);
                n.dot(p) <= offset
            }
            Shape::Primitive(prim) => {
                let pose = body.mesh_pose();
                prim.world_aabb(&pose).is_some_and(|b| near_box(&b, p))
                    && prim
                        .primitive()
                        .locate(&pose, p)
                        .is_ok_and(|l| l != PointLocation::Outside)
            }
            Shape::Compound(c) => {
                let pose = body.mesh_pose();
                c.world_aabb(&pose).is_some_and(|b| near_box(&b, p))
                    && (c.compound().is_some_and(|k| {
                        k.locate(&pose, p)
                            .is_ok_and(|l| l != PointLocation::Outside)
                    }) || c.meshes().iter().any(|m| {
                        let pose = pose.mul(&m.pose);
                        m.shape.world_aabb(&pose).is_some_and(|b| near_box(&b, p))
                            && locate_point_posed(m.shape.solid(), &pose, p)
                                != PointLocation::Outside
                    }))
            }
        }
    }

    /// The surface crossings of `ray` with one body, appended to `out` (unsorted), and with
    /// `solid` a hit at distance 0 when the body contains the origin.
    fn body_ray_hits(
        h: BodyHandle,
        body: &Body,
        shape: &Shape,
        ray: &Ray,
        solid: bool,
        out: &mut Vec<RayHit>,
    ) {
        if solid && Self::solid_contains(body, shape, ray.origin) {
            out.push(RayHit {
                body: h,
                distance: 0.0,
                point: ray.origin,
                normal: DVec3::ZERO,
                triangle: None,
            });
        }
        match shape {
            Shape::Mesh(m) => mesh_ray_hits(h, m, &body.mesh_pose(), ray, out),
            Shape::HalfSpace(half) => {
                let (n, offset) = plane_of(body, half);
                let denom = n.dot(ray.dir);
                if denom == 0.0 {
                    return;
                }
                let t = (offset - n.dot(ray.origin)) / denom + 0.0;
                if t >= 0.0 && t <= ray.max {
                    out.push(RayHit {
                        body: h,
                        distance: t,
                        point: ray.at(t),
                        normal: n,
                        triangle: None,
                    });
                }
            }
            Shape::Primitive(_) | Shape::Compound(_) => {
                let pose = body.mesh_pose();
                let parts: Vec<(Primitive, DPose)> = match shape {
                    Shape::Primitive(p) => vec![(*p.primitive(), pose)],
                    Shape::Compound(c) => c
                        .parts()
                        .map(|(p, local)| (*p.primitive(), pose.mul(&local)))
                        .collect(),
                    _ => Vec::new(),
                };
                for (p, pose) in parts {
                    for (t, normal) in primitive_crossings(&p, &pose, ray) {
                        out.push(RayHit {
                            body: h,
                            distance: t,
                            point: ray.at(t),
                            normal,
                            triangle: None,
                        });
                    }
                }
                if let Shape::Compound(c) = shape {
                    for m in c.meshes() {
                        mesh_ray_hits(h, &m.shape, &pose.mul(&m.pose), ray, out);
                    }
                }
            }
        }
    }

    /// The bodies whose world box (or half-space) the ray reaches within its limit, with the
    /// distance at which it does, sorted by that distance (then id).
    fn ray_candidates<'s>(
        &'s self,
        ray: &Ray,
        filter: &'s QueryFilter<'_>,
    ) -> Vec<(f64, BodyHandle, &'s Body, &'s BodyShape)> {
        let mut found: Vec<_> = self
            .admitted(filter)
            .filter_map(|(h, body, c)| {
                let entry = match &c.shape {
                    // Planes are cheap: test them whole.
                    Shape::HalfSpace(_) => 0.0,
                    s => ray.enters_box(&s.world_aabb(&body.mesh_pose())?)?,
                };
                Some((entry, h, body, c))
            })
            .collect();
        found.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.id().cmp(&b.1.id())));
        found
    }

    /// The first surface the ray `origin + t · direction`, `0 ≤ t ≤ max_distance`, meets (the
    /// direction need not be unit: distances are along its unit vector). With `solid`, a body
    /// containing the origin is hit at distance 0 (zero normal, no triangle); otherwise a ray
    /// starting inside a solid reports where it leaves it. `None` for a ray that hits nothing,
    /// and for a non-finite origin, a zero or non-finite direction, or a negative or NaN limit.
    ///
    /// Bodies are visited in the order the ray reaches their world boxes and the search stops
    /// when a box starts beyond the best hit so far. Each mesh is cast against through its
    /// [`MeshShape::ray_mesh`] (built on the first ray against that shape); `solid` adds an exact
    /// point-in-solid test (one pass over the triangles) for each body whose box holds the
    /// origin.
    pub fn cast_ray(
        &self,
        origin: DVec3,
        direction: DVec3,
        max_distance: f64,
        solid: bool,
        filter: &QueryFilter<'_>,
    ) -> Option<RayHit> {
        let ray = Ray::new(origin, direction, max_distance)?;
        let mut best: Option<RayHit> = None;
        let mut hits = Vec::new();
        for (entry, h, body, c) in self.ray_candidates(&ray, filter) {
            if best.is_some_and(|b| entry > b.distance) {
                break;
            }
            if !filter.predicate_accepts(h) {
                continue;
            }
            hits.clear();
            Self::body_ray_hits(h, body, &c.shape, &ray, solid, &mut hits);
            for hit in &hits {
                if best.is_none_or(|b| hit.before(&b)) {
                    best = Some(*hit);
                }
            }
        }
        best
    }

    /// Every surface crossing of the ray within `[0, max_distance]` (see [`Self::cast_ray`]),
    /// sorted by distance (then body id, then triangle): a ray through a closed mesh reports
    /// where it enters and where it leaves each time. With `solid`, each body containing the
    /// origin also gives a hit at distance 0.
    pub fn cast_ray_all(
        &self,
        origin: DVec3,
        direction: DVec3,
        max_distance: f64,
        solid: bool,
        filter: &QueryFilter<'_>,
    ) -> Vec<RayHit> {
        let Some(ray) = Ray::new(origin, direction, max_distance) else {
            return Vec::new();
        };
        let mut hits = Vec::new();
        for (_, h, body, c) in self.ray_candidates(&ray, filter) {
            if filter.predicate_accepts(h) {
                Self::body_ray_hits(h, body, &c.shape, &ray, solid, &mut hits);
            }
        }
        hits.sort_by(|a, b| {
            let (a, b) = (a.key(), b.key());
            a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2))
        });
        hits
    }

    /// The bodies whose solid contains `point` (exact for meshes; a point on the surface is
    /// contained), by id. Costs one pass over the triangles of each body whose world box holds
    /// the point. A non-finite point is in nothing.
    pub fn bodies_containing_point(
        &self,
        point: DVec3,
        filter: &QueryFilter<'_>,
    ) -> Vec<BodyHandle> {
        if !point.is_finite() {
            return Vec::new();
        }
        self.admitted(filter)
            .filter(|(h, body, c)| {
                let in_box = match &c.shape {
                    Shape::HalfSpace(_) => true,
                    s => s
                        .world_aabb(&body.mesh_pose())
                        .is_some_and(|b| near_box(&b, point)),
                };
                in_box
                    && filter.predicate_accepts(*h)
                    && Self::solid_contains(body, &c.shape, point)
            })
            .map(|(h, _, _)| h)
            .collect()
    }

    /// The bodies that interfere with `shape` placed by the mesh pose `pose` (what maps the
    /// shape's vertices to world space), by id, decided as the step's narrow phase decides a pair
    /// (see the module documentation: exact for meshes, touching counts). A non-finite pose
    /// interferes with nothing.
    pub fn intersecting_bodies(
        &self,
        shape: &Shape,
        pose: &DPose,
        filter: &QueryFilter<'_>,
    ) -> Vec<BodyHandle> {
        if !pose.is_finite() {
            return Vec::new();
        }
        let query_box = match shape {
            Shape::HalfSpace(_) => None,
            s => match s.world_aabb(pose) {
                Some(b) => Some(b),
                None => return Vec::new(),
            },
        };
        self.admitted(filter)
            .filter(|(h, body, c)| {
                let bpose = body.mesh_pose();
                let body_box = match &c.shape {
                    Shape::HalfSpace(_) => None,
                    s => match s.world_aabb(&bpose) {
                        Some(b) => Some(b),
                        None => return false,
                    },
                };
                // Bounding tests first, the predicate, then the exact test.
                let near = match (&c.shape, shape) {
                    (Shape::HalfSpace(_), Shape::HalfSpace(_)) => false,
                    (Shape::HalfSpace(hb), _) => {
                        let (n, offset) = plane_of(body, hb);
                        query_box.is_some_and(|q| box_below_plane(&q, n, offset))
                    }
                    (_, Shape::HalfSpace(hq)) => {
                        let (n, offset) = hq.world(pose);
                        body_box.is_some_and(|b| box_below_plane(&b, n, offset))
                    }
                    _ => query_box.is_some_and(|q| body_box.is_some_and(|b| b.overlaps(&q))),
                };
                near && filter.predicate_accepts(*h)
                    && shapes_interfere(&c.shape, &bpose, shape, pose)
            })
            .map(|(h, _, _)| h)
            .collect()
    }

    /// The bodies whose world box (the broad phase's `f32` box, padded outward) overlaps the
    /// closed box `aabb`, by id; a half-space body is reported when the box reaches its solid.
    /// An empty box overlaps nothing.
    pub fn bodies_in_aabb(&self, aabb: &Aabb, filter: &QueryFilter<'_>) -> Vec<BodyHandle> {
        if aabb.is_empty() || aabb.min.is_nan() || aabb.max.is_nan() {
            return Vec::new();
        }
        self.admitted(filter)
            .filter(|(h, body, c)| {
                let overlaps = match &c.shape {
                    Shape::HalfSpace(hs) => {
                        let (n, offset) = plane_of(body, hs);
                        box_below_plane(aabb, n, offset)
                    }
                    s => s
                        .world_aabb(&body.mesh_pose())
                        .is_some_and(|b| b.overlaps(aabb)),
                };
                overlaps && filter.predicate_accepts(*h)
            })
            .map(|(h, _, _)| h)
            .collect()
    }
}

/// Whether `p` lies in the `f64` box of `b` (an `f64` point may round into or out of the `f32`
/// box; this compares in `f64`).
fn near_box(b: &Aabb, p: DVec3) -> bool {
    p.cmpge(b.min.as_dvec3()).all() && p.cmple(b.max.as_dvec3()).all()
}

/// The surface crossings of `ray` with a convex primitive placed by `pose`, within
/// `[0, max]`: where it enters (when the origin is outside) and where it leaves, each with the
/// outward unit normal there. The entry is `interfere_geometry`'s closed-form ray cast; the exit
/// is the entry of the reversed ray cast from a point beyond the primitive's bounding sphere.
fn primitive_crossings(p: &Primitive, pose: &DPose, ray: &Ray) -> Vec<(f64, DVec3)> {
    let mut out = Vec::new();
    let Some((_, hi)) = p.local_bounds() else {
        return out;
    };
    let Ok(first) = p.ray_cast(pose, ray.origin, ray.dir, ray.max) else {
        return out;
    };
    let Some(first) = first else {
        return out;
    };
    if first.normal != DVec3::ZERO {
        out.push((first.t + 0.0, first.normal));
    }
    // A point on the ray beyond the bounding sphere (centred at the primitive's centre).
    let radius = hi.length();
    let far = (pose.translation - ray.origin).dot(ray.dir) + radius * 1.01 + 1e-9;
    if !(far > 0.0 && far.is_finite()) {
        return out;
    }
    let back = ray.at(far);
    if let Ok(Some(hit)) = p.ray_cast(pose, back, -ray.dir, far)
        && hit.normal != DVec3::ZERO
    {
        let t = (far - hit.t).max(0.0) + 0.0;
        if t <= ray.max {
            out.push((t, hit.normal));
        }
    }
    out
}

/// The crossings of `ray` with the surface of mesh `m` placed by `pose`, appended to `out` as
/// hits on body `h` (triangle indices are the mesh's).
fn mesh_ray_hits(h: BodyHandle, m: &MeshShape, pose: &DPose, ray: &Ray, out: &mut Vec<RayHit>) {
    let inv = pose.inverse();
    let (o, d) = (
        inv.transform_dpoint(ray.origin),
        inv.transform_vector(ray.dir),
    );
    let rm = m.ray_mesh();
    let mut hits = Vec::new();
    if rm.cast_line(o, d, &mut hits).is_err() {
        return;
    }
    for hit in hits {
        if !(hit.t >= 0.0 && hit.t <= ray.max) {
            continue;
        }
        // −0 (a ray starting on the surface) reads as 0.
        let t = hit.t + 0.0;
        let n = pose
            .transform_vector(rm.unit_normal(hit.triangle as usize))
            .normalize_or_zero();
        out.push(RayHit {
            body: h,
            distance: t,
            point: ray.at(t),
            normal: n,
            triangle: Some(hit.triangle),
        });
    }
}

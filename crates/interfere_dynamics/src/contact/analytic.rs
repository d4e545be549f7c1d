//! Analytic contact sources, the fixtures the integrator's tests are driven with (no mesh–mesh
//! query): [`HalfSpaceSource`] (planes attached to bodies against mesh vertices, reduced to a
//! manifold of at most 4 points per pair, as Lin–Manocha 1996 §5 takes one impulse per contact),
//! [`SphereSource`] (analytic spheres against planes and each other) and
//! [`HalfSpaceVolumeSource`] (the exact volume of a mesh below a plane with its exact gradient,
//! Wang–Faure–Pai 2012 §2.2). Games and tools step a `Simulation`, whose contact stage makes
//! these contacts from the bodies' shapes.

use super::*;
use interfere_geometry::Solid;

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
    pub fn world(&self, bodies: &[Body]) -> Option<(DVec3, f64)> {
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
pub(super) fn reduce_manifold(cands: &[(DVec3, f64, u32)], normal: DVec3) -> [Option<usize>; 4] {
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
    fn contacts(&mut self, bodies: &[Body], out: &mut Contacts) {
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
    fn contacts(&mut self, bodies: &[Body], out: &mut Contacts) {
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
    fn contacts(&mut self, bodies: &[Body], out: &mut Contacts) {
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

//! The broad phase of a [`crate::Simulation`]: sweep and prune over the world boxes of the mesh
//! bounded colliders — meshes, primitives, compounds — (Lin–Manocha 1996 §4.1, I-COLLIDE: persistent sorted endpoint lists updated by
//! insertion sort, `interfere_geometry::SweepAndPrune`), plus every half-space against the boxes
//! that reach below its plane.
//!
//! Bodies enter and leave the sweep one at a time ([`BroadPhase::remove`]); nothing is rebuilt.
//! A moving body's box covers its motion over the step ([`swept`]), so pairs that the step could
//! bring together are candidates before they touch (speculative contacts), and is grown by its
//! speculative margin ([`padded`]), so that a resting pair the position projection has just
//! lifted apart stays a candidate and keeps its contact (`Simulation::persist`). Without that
//! margin a ragdoll's shin lying on a stair's tread lost its pair whenever the projection had
//! cleared the overlap, fell freely for a whole step, landed 1.9 mm lower at 0.18 m/s and was
//! lifted out again over three steps: a limit cycle of five steps that kept it awake
//! (`stairs_ragdoll_survey`, 2026-11-29).
//! A candidate pair `(a, b)`, `a < b`, is reported when the boxes overlap (for a half-space: the
//! box reaches within the speculative margin of its plane), the collision layers
//! let the two interact, and the pair needs contact work (see [`pair_is_active`]). The output is
//! sorted.

use crate::body::{Body, BodyId, BodyKind};
use crate::collision::shape::{BodyShape, Shape};
use interfere_geometry::glam::{DVec3, Vec3};
use interfere_geometry::{Aabb, ProxyId, SweepAndPrune};

/// Whether body `b` moves this step: dynamic and awake, or kinematic with a velocity.
pub fn is_moving(b: &Body) -> bool {
    match b.kind {
        BodyKind::Dynamic => !b.sleeping,
        BodyKind::Kinematic => {
            b.linear_velocity != DVec3::ZERO || b.angular_velocity != DVec3::ZERO
        }
        BodyKind::Static => false,
    }
}

/// Whether a pair needs contact work: one body moves, and a dynamic body or a sensor is
/// involved (two kinematic or static solids never push each other), and the layers interact.
pub fn pair_is_active(
    bodies: &[Body],
    colliders: &[Option<BodyShape>],
    a: BodyId,
    b: BodyId,
) -> bool {
    let (Some(ba), Some(bb)) = (bodies.get(a), bodies.get(b)) else {
        return false;
    };
    let (Some(Some(ca)), Some(Some(cb))) = (colliders.get(a), colliders.get(b)) else {
        return false;
    };
    let dynamic = ba.kind == BodyKind::Dynamic || bb.kind == BodyKind::Dynamic;
    (is_moving(ba) || is_moving(bb))
        && (dynamic || ca.sensor || cb.sensor)
        && ca.layers.interacts_with(&cb.layers)
}

/// The world box `aabb` of a body grown to cover its motion over `dt` at its current velocity
/// (`v dt` towards where it goes, and the box's half diagonal turned by `|ω| dt` every way), so
/// that a pair that the step's motion could bring together is a candidate and gets speculative
/// contacts (`crate::contact::speculative`). Static and sleeping bodies keep their box.
pub fn swept(aabb: Aabb, body: &Body, dt: f64) -> Aabb {
    if !is_moving(body) {
        return aabb;
    }
    let d = (body.linear_velocity * dt).as_vec3();
    let turn = (body.angular_velocity.length() * dt).min(2.0) as f32;
    let pad = aabb.half_extents().length() * turn;
    let grown = Aabb::new(
        aabb.min + d.min(Vec3::ZERO) - Vec3::splat(pad),
        aabb.max + d.max(Vec3::ZERO) + Vec3::splat(pad),
    );
    if grown.min.is_finite() && grown.max.is_finite() {
        grown
    } else {
        aabb
    }
}

/// The swept box of a moving body grown by its speculative margin
/// ([`crate::collision::margin::shape_margin`]) every way, so that a pair stays a candidate while
/// its gap is within the margin that its kept contact lives in (`Simulation::persist`).
pub fn padded(aabb: Aabb, body: &Body, shape: &Shape, dt: f64) -> Aabb {
    if !is_moving(body) {
        return aabb;
    }
    let pad = crate::collision::margin::shape_margin(body, shape, dt) as f32;
    let grown = Aabb::new(aabb.min - Vec3::splat(pad), aabb.max + Vec3::splat(pad));
    if grown.min.is_finite() && grown.max.is_finite() {
        grown
    } else {
        aabb
    }
}

/// Sweep and prune plus half-spaces (see the module documentation).
#[derive(Clone, Debug, Default)]
pub struct BroadPhase {
    sap: SweepAndPrune,
    /// The proxy of each body (by id).
    proxy: Vec<Option<ProxyId>>,
    /// The body of each proxy slot.
    owner: Vec<BodyId>,
    /// Bodies carrying half-spaces.
    planes: Vec<BodyId>,
}

impl BroadPhase {
    /// Takes body `id` out (its collider was removed or replaced).
    pub fn remove(&mut self, id: BodyId) {
        if let Some(Some(p)) = self.proxy.get_mut(id).map(Option::take) {
            let _ = self.sap.remove(p);
        }
        self.planes.retain(|&p| p != id);
    }

    /// Updates the boxes of every body and writes the candidate pairs, sorted, into `out`.
    pub fn update(
        &mut self,
        bodies: &[Body],
        colliders: &[Option<BodyShape>],
        dt: f64,
        out: &mut Vec<(BodyId, BodyId)>,
    ) {
        out.clear();
        if self.proxy.len() < bodies.len() {
            self.proxy.resize(bodies.len(), None);
        }
        self.planes.clear();
        for (i, (body, collider)) in bodies.iter().zip(colliders).enumerate() {
            let shape = match collider.as_ref().map(|c| &c.shape) {
                Some(Shape::HalfSpace(_)) => {
                    self.planes.push(i);
                    continue;
                }
                Some(s) => s,
                None => continue,
            };
            let Some(aabb) = shape
                .world_aabb(&body.mesh_pose())
                .map(|b| padded(swept(b, body, dt), body, shape, dt))
            else {
                // A non-finite pose: out of the sweep until it is finite again.
                if let Some(p) = self.proxy[i].take() {
                    let _ = self.sap.remove(p);
                }
                continue;
            };
            match self.proxy[i] {
                Some(p) => {
                    let _ = self.sap.set_aabb(p, aabb);
                }
                None => {
                    if let Ok(p) = self.sap.insert(aabb) {
                        let k = p.index();
                        if self.owner.len() <= k {
                            self.owner.resize(k + 1, usize::MAX);
                        }
                        self.owner[k] = i;
                        self.proxy[i] = Some(p);
                    }
                }
            }
        }
        self.sap.update();
        for (p, q) in self.sap.pairs() {
            let (Some(&i), Some(&j)) = (self.owner.get(p.index()), self.owner.get(q.index()))
            else {
                continue;
            };
            if i != j && pair_is_active(bodies, colliders, i, j) {
                out.push((i.min(j), i.max(j)));
            }
        }
        for &h in &self.planes {
            let (Some(hb), Some(Some(hc))) = (bodies.get(h), colliders.get(h)) else {
                continue;
            };
            let Shape::HalfSpace(half) = &hc.shape else {
                continue;
            };
            let (n, offset) = half.world(&hb.mesh_pose());
            for (m, (body, collider)) in bodies.iter().zip(colliders).enumerate() {
                let Some(shape) = collider.as_ref().map(|c| &c.shape) else {
                    continue;
                };
                if m == h || !pair_is_active(bodies, colliders, h, m) {
                    continue;
                }
                let Some(aabb) = shape
                    .world_aabb(&body.mesh_pose())
                    .map(|b| swept(b, body, dt))
                else {
                    continue;
                };
                let (lo, hi) = (aabb.min.as_dvec3(), aabb.max.as_dvec3());
                // The box corner furthest along −n.
                let corner = DVec3::new(
                    if n.x >= 0.0 { lo.x } else { hi.x },
                    if n.y >= 0.0 { lo.y } else { hi.y },
                    if n.z >= 0.0 { lo.z } else { hi.z },
                );
                // Within the speculative margin (see `crate::collision::margin::shape_margin`).
                if n.dot(corner) < offset + crate::collision::margin::shape_margin(body, shape, dt)
                {
                    out.push((h.min(m), h.max(m)));
                }
            }
        }
        out.sort_unstable();
        out.dedup();
    }
}

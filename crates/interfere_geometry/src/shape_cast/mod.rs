//! Capsule casts: the first moment a capsule (the points within `radius` of a core segment; a
//! sphere when the segment is a point) translating along a straight path touches a triangle, a
//! primitive, a half-space or the surface of a closed mesh, and the obstacles within a margin of
//! a capsule at rest (for pushing it out of a shallow overlap). The character controller of
//! `interfere_dynamics` moves and slides with these.
//!
//! **Method.** For a convex obstacle `B`, the distance `g(t) = dist(S + t·d, B)` from the core
//! segment `S` translated by `t·d` is a convex function of `t` (the distance from a point moving
//! on a line to the convex set `B ⊖ S`). Newton's method started left of the first root of
//! `g(t) = r` steps to the root of the tangent line, which lies below the convex `g`, so every
//! iterate stays at or before the true first contact: the cast never reports a time past it and
//! never leaves the capsule inside the obstacle. `g′(t) = d · n`, `n` the unit vector from the
//! obstacle's closest point to the core's. Newton converges quadratically where the path crosses
//! `g = r` and linearly (halving) where it only grazes it; it stops when `g − r ≤ 10⁻¹²·scale`.
//! A path whose distance stops decreasing before contact (`g′ ≥ 0`) never touches (convexity).
//!
//! **Grazing is not a hit.** A contact whose approach `−d̂ · n` is below [`GRAZE`] (0.0057°)
//! is a tangency and is not reported; nor is one the capsule starts in and does not approach.
//! This is what keeps a capsule sliding over a tessellated floor: the next triangle across an
//! edge of the same plane is touched only tangentially (its closest point is on the edge, at
//! the floor's distance), so coplanar edges never stop or deflect the motion — there are no
//! "internal edges" for a solid's surface.
//!
//! Closest points are exact formulas (segment–triangle, segment–segment, Ericson §5.1) or, for
//! the box and the cylinder, a golden-section search of the segment for the point nearest the
//! solid (the distance to a convex set along a segment is convex), to `10⁻¹³` of the segment.
//! Meshes are searched through their balanced AABB tree with the swept box of the capsule.

use crate::bvh::balanced::{BalancedTree, NO_CHILD};
use crate::mesh::TriMesh;
use crate::pose::DPose;
use crate::primitives::Primitive;
use crate::primitives::closest::{
    on_box, on_cylinder, on_segment, segment_segment, segment_triangle_closest,
};
use glam::DVec3;

#[cfg(test)]
mod tests;

/// The smallest approach rate `−d̂ · n` (the sine of the angle between the path and the
/// obstacle's tangent plane) that counts as a hit; slower approaches are tangencies.
pub const GRAZE: f64 = 1e-4;

/// How far ahead (times the scale, at least 1 m) a contact with a slow approach is probed.
const PROBE: f64 = 1e-4;

/// Newton iterations per obstacle before a still-unconverged approach is taken for a graze.
const MAX_ITERATIONS: usize = 96;

/// A capsule: the points within `radius` of the segment `a b` (a sphere when `a == b`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Capsule {
    /// One end of the core segment.
    pub a: DVec3,
    /// The other end of the core segment.
    pub b: DVec3,
    /// Radius, positive.
    pub radius: f64,
}

impl Capsule {
    /// A capsule with core `a b` and radius `radius`; `None` unless the ends are finite and the
    /// radius finite and positive.
    pub fn new(a: DVec3, b: DVec3, radius: f64) -> Option<Self> {
        (a.is_finite() && b.is_finite() && radius.is_finite() && radius > 0.0).then_some(Self {
            a,
            b,
            radius,
        })
    }

    /// The same capsule moved by `d`.
    pub fn translated(&self, d: DVec3) -> Self {
        Self {
            a: self.a + d,
            b: self.b + d,
            radius: self.radius,
        }
    }

    /// The same capsule with its radius grown by `by` (a skin).
    pub fn inflated(&self, by: f64) -> Self {
        Self {
            radius: self.radius + by,
            ..*self
        }
    }

    /// The capsule mapped by a rigid pose.
    pub fn transformed(&self, pose: &DPose) -> Self {
        Self {
            a: pose.transform_dpoint(self.a),
            b: pose.transform_dpoint(self.b),
            radius: self.radius,
        }
    }

    /// The corners of the box around the capsule swept by `t·d`, `t ∈ [0, 1]`.
    pub fn swept_bounds(&self, d: DVec3) -> (DVec3, DVec3) {
        let r = DVec3::splat(self.radius);
        let lo = self.a.min(self.b).min(self.a.min(self.b) + d) - r;
        let hi = self.a.max(self.b).max(self.a.max(self.b) + d) + r;
        (lo, hi)
    }

    /// The absolute size used for tolerances (at least 1).
    fn scale(&self) -> f64 {
        1f64.max(self.radius)
            .max(self.a.abs().max_element())
            .max(self.b.abs().max_element())
    }
}

/// Where a capsule cast first touches an obstacle.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CastHit {
    /// The fraction of the translation travelled, in `[0, 1]`.
    pub t: f64,
    /// Unit normal at the contact, from the obstacle towards the capsule.
    pub normal: DVec3,
    /// The obstacle's point touched.
    pub point: DVec3,
    /// The triangle touched, for a mesh.
    pub triangle: Option<u32>,
}

impl CastHit {
    /// Whether this hit comes before `other` (time, then triangle index).
    pub fn before(&self, other: &CastHit) -> bool {
        self.t
            .total_cmp(&other.t)
            .then(self.triangle.cmp(&other.triangle))
            .is_lt()
    }
}

/// An obstacle near a capsule at rest.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Proximity {
    /// Distance from the capsule's surface to the obstacle: negative when they overlap (the
    /// depth, as far as the core stays outside the obstacle).
    pub distance: f64,
    /// Unit normal from the obstacle towards the capsule (the direction that separates them).
    pub normal: DVec3,
    /// The obstacle's closest point.
    pub point: DVec3,
    /// The triangle, for a mesh.
    pub triangle: Option<u32>,
}

/// The distance from a core segment to a convex obstacle, with the unit direction from the
/// obstacle's closest point to the core's (`None` when they meet: no direction) and that point.
struct Closest {
    distance: f64,
    normal: Option<DVec3>,
    point: DVec3,
}

impl Closest {
    fn between(on_core: DVec3, on_obstacle: DVec3) -> Self {
        let v = on_core - on_obstacle;
        let distance = v.length();
        Self {
            distance,
            normal: (distance > 0.0).then(|| v / distance),
            point: on_obstacle,
        }
    }
}

/// Newton's method on the convex distance `closest(t)` (see the module documentation): the
/// first `t ∈ [0, 1]` where the core comes within `radius` of the obstacle, with an approach
/// rate of at least [`GRAZE`]. `fallback` is the normal to use when the core meets the
/// obstacle at the start.
///
/// Where the approach is slower than [`GRAZE`] the step is conservative advancement instead
/// (`gap / |d|`: the distance falls no faster than the speed), since a convex distance may have
/// a kink ahead (the foot of a ramp: level, then falling). In contact with a slow approach, a
/// probe [`PROBE`] further along tells a kink (the distance falls below the radius there: a hit,
/// with the normal found there) from a tangency (it does not: no hit).
fn newton(
    closest: impl Fn(f64) -> Closest,
    d: DVec3,
    radius: f64,
    scale: f64,
    fallback: DVec3,
) -> Option<CastHit> {
    let speed = d.length();
    if !(speed > 0.0 && speed.is_finite()) {
        return None;
    }
    let tol = 1e-12 * scale;
    let mut t = 0.0;
    for _ in 0..MAX_ITERATIONS {
        let c = closest(t);
        let normal = c.normal.unwrap_or(fallback);
        let rate = d.dot(normal);
        let gap = c.distance - radius;
        let hit = |normal, point| CastHit {
            t,
            normal,
            point,
            triangle: None,
        };
        if gap <= tol {
            if -rate > GRAZE * speed {
                return Some(hit(normal, c.point));
            }
            // A kink or a tangency: look a little further along.
            let ahead = (t + PROBE * scale / speed).min(1.0);
            if ahead <= t {
                return None;
            }
            let p = closest(ahead);
            let fall = radius - p.distance;
            return (fall > 0.5 * GRAZE * (ahead - t) * speed)
                .then(|| hit(p.normal.unwrap_or(normal), c.point));
        }
        if -rate > GRAZE * speed {
            t += gap / -rate;
        } else if rate >= 0.0 {
            // Convex and not falling: it never comes closer.
            return None;
        } else {
            t += gap / speed;
        }
        if t > 1.0 {
            return None;
        }
    }
    None
}

/// The point of segment `a b` nearest the convex set whose closest-point map is `onto`, by a
/// golden-section search (the distance is convex along the segment).
fn nearest_on_segment(a: DVec3, b: DVec3, onto: impl Fn(DVec3) -> DVec3) -> (DVec3, DVec3) {
    let dist2 = |s: f64| {
        let x = a + (b - a) * s;
        (x - onto(x)).length_squared()
    };
    if a == b {
        return (a, onto(a));
    }
    const PHI: f64 = 0.618_033_988_749_894_8;
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    let mut x1 = hi - PHI * (hi - lo);
    let mut x2 = lo + PHI * (hi - lo);
    let (mut f1, mut f2) = (dist2(x1), dist2(x2));
    while hi - lo > 1e-13 {
        if f1 <= f2 {
            hi = x2;
            x2 = x1;
            f2 = f1;
            x1 = hi - PHI * (hi - lo);
            f1 = dist2(x1);
        } else {
            lo = x1;
            x1 = x2;
            f1 = f2;
            x2 = lo + PHI * (hi - lo);
            f2 = dist2(x2);
        }
    }
    // The ends are candidates too (the minimum may sit at one).
    let s = [0.0, 1.0, 0.5 * (lo + hi)]
        .into_iter()
        .min_by(|x, y| dist2(*x).total_cmp(&dist2(*y)))
        .unwrap_or(0.0);
    let x = a + (b - a) * s;
    (x, onto(x))
}

/// Closest points between the core `a b` and a bounded primitive placed by `pose` (world).
fn closest_to_primitive(a: DVec3, b: DVec3, prim: &Primitive, pose: &DPose) -> Option<Closest> {
    let inv = pose.inverse();
    let (la, lb) = (inv.transform_dpoint(a), inv.transform_dpoint(b));
    let (on_core, on_prim) = match *prim {
        Primitive::Sphere { radius } => {
            let p = on_segment(DVec3::ZERO, la, lb);
            let c = Closest::between(p, DVec3::ZERO);
            let n = c.normal.unwrap_or(DVec3::Y);
            (p, n * radius)
        }
        Primitive::Capsule {
            half_length,
            radius,
        } => {
            let (p, q) = segment_segment(
                la,
                lb,
                DVec3::new(0.0, -half_length, 0.0),
                DVec3::new(0.0, half_length, 0.0),
            );
            let n = Closest::between(p, q).normal.unwrap_or(DVec3::Y);
            (p, q + n * radius)
        }
        Primitive::Cuboid { half_extents } => {
            nearest_on_segment(la, lb, |x| on_box(x, half_extents))
        }
        Primitive::Cylinder {
            half_height,
            radius,
        } => nearest_on_segment(la, lb, |x| on_cylinder(x, half_height, radius)),
        Primitive::HalfSpace { .. } => return None,
    };
    // A core point inside a rounded primitive (sphere, capsule) sits within its radius.
    let inside = match *prim {
        Primitive::Sphere { radius } => on_core.length() <= radius,
        Primitive::Capsule {
            half_length,
            radius,
        } => {
            (on_core - on_segment(on_core, DVec3::NEG_Y * half_length, DVec3::Y * half_length))
                .length()
                <= radius
        }
        _ => false,
    };
    let mut c = Closest::between(
        pose.transform_dpoint(on_core),
        pose.transform_dpoint(on_prim),
    );
    if inside {
        c.distance = 0.0;
        c.normal = None;
    }
    Some(c)
}

/// The first contact of capsule `c` moving by `d` with the triangle `tri` (either side).
pub fn cast_capsule_triangle(c: &Capsule, d: DVec3, tri: [DVec3; 3]) -> Option<CastHit> {
    let face = (tri[1] - tri[0]).cross(tri[2] - tri[0]).normalize_or_zero();
    // Facing the capsule's start.
    let fallback = if face.dot(c.a - tri[0]) < 0.0 {
        -face
    } else {
        face
    };
    newton(
        |t| {
            let (p, q) = segment_triangle_closest(c.a + d * t, c.b + d * t, tri);
            Closest::between(p, q)
        },
        d,
        c.radius,
        c.scale(),
        fallback,
    )
}

/// The world plane `n · x = offset` of a half-space primitive placed by `pose`.
fn half_space_plane(normal: DVec3, pose: &DPose) -> (DVec3, f64) {
    let n = (pose.rotation * normal).normalize_or_zero();
    (n, n.dot(pose.translation))
}

/// The first contact of capsule `c` moving by `d` with a primitive placed by `pose` (world).
pub fn cast_capsule_primitive(
    c: &Capsule,
    d: DVec3,
    prim: &Primitive,
    pose: &DPose,
) -> Option<CastHit> {
    if let Primitive::HalfSpace { normal } = *prim {
        let (n, offset) = half_space_plane(normal, pose);
        let low = if n.dot(c.a) <= n.dot(c.b) { c.a } else { c.b };
        let gap = n.dot(low) - offset - c.radius;
        let rate = n.dot(d);
        let speed = d.length();
        if -rate <= GRAZE * speed || rate.is_nan() {
            return None;
        }
        let t = (gap / -rate).max(0.0);
        let at = low + d * t;
        return (t <= 1.0).then_some(CastHit {
            t,
            normal: n,
            point: at - n * (n.dot(at) - offset),
            triangle: None,
        });
    }
    let centre = pose.translation;
    let away = (0.5 * (c.a + c.b) - centre).normalize_or(DVec3::Z);
    let scale = c.scale().max(pose.translation.abs().max_element());
    newton(
        |t| {
            closest_to_primitive(c.a + d * t, c.b + d * t, prim, pose).unwrap_or(Closest {
                distance: f64::INFINITY,
                normal: None,
                point: centre,
            })
        },
        d,
        c.radius,
        scale,
        away,
    )
}

/// The leaves (triangle indices) of `tree` whose boxes meet the box `[lo, hi]` (mesh frame).
fn triangles_in_box(tree: &BalancedTree, lo: DVec3, hi: DVec3, out: &mut Vec<u32>) {
    let meets = |n: &crate::bvh::balanced::BalancedNode| {
        n.dmin().cmple(hi).all() && n.dmax().cmpge(lo).all()
    };
    let mut stack = vec![(0usize, 0usize)];
    while let Some((level, i)) = stack.pop() {
        let Some(node) = tree.node(level, i) else {
            continue;
        };
        if !meets(node) {
            continue;
        }
        if node.first_child == NO_CHILD {
            out.push(node.index);
        } else {
            stack.extend(tree.children(level, i).map(|j| (level + 1, j)));
        }
    }
}

/// The triangle `t` of `mesh` in `f64`.
fn triangle_f64(mesh: &TriMesh, t: usize) -> [DVec3; 3] {
    mesh.triangle(t).map(|v| v.as_dvec3())
}

/// The first contact of capsule `c` moving by `d` with the surface of a closed mesh placed by
/// `pose` (its balanced AABB tree `tree`). A capsule whose core starts inside the solid touches
/// no surface on its way out and reports nothing: locate its core first where that can happen.
pub fn cast_capsule_mesh(
    c: &Capsule,
    d: DVec3,
    mesh: &TriMesh,
    tree: &BalancedTree,
    pose: &DPose,
) -> Option<CastHit> {
    let inv = pose.inverse();
    let local = c.transformed(&inv);
    let ld = inv.rotation * d;
    let (lo, hi) = local.swept_bounds(ld);
    let pad = DVec3::splat(1e-9 * local.scale());
    let mut found = Vec::new();
    triangles_in_box(tree, lo - pad, hi + pad, &mut found);
    let mut hits: Vec<CastHit> = found
        .into_iter()
        .filter_map(|t| {
            cast_capsule_triangle(&local, ld, triangle_f64(mesh, t as usize)).map(|mut h| {
                h.triangle = Some(t);
                h
            })
        })
        .collect();
    hits.sort_by(|a, b| a.t.total_cmp(&b.t).then(a.triangle.cmp(&b.triangle)));
    // Of the triangles touched at the same moment (within rounding), the one approached most
    // directly: across an edge between coplanar triangles both are touched, one through its
    // edge (a normal tilted by the rounding), the other through its face.
    let first = hits.first().map(|h| h.t);
    let window = 1e-9 * local.scale() / ld.length();
    let best = hits
        .iter()
        .take_while(|h| first.is_some_and(|f| h.t - f <= window))
        .max_by(|a, b| {
            (-ld.dot(a.normal))
                .total_cmp(&-ld.dot(b.normal))
                .then(b.triangle.cmp(&a.triangle))
        })
        .copied();
    best.map(|h| CastHit {
        normal: pose.rotation * h.normal,
        point: pose.transform_dpoint(h.point),
        ..h
    })
}

/// How far the capsule's surface is from a primitive placed by `pose`, when within `margin`.
pub fn capsule_primitive_proximity(
    c: &Capsule,
    prim: &Primitive,
    pose: &DPose,
    margin: f64,
) -> Option<Proximity> {
    if let Primitive::HalfSpace { normal } = *prim {
        let (n, offset) = half_space_plane(normal, pose);
        let low = if n.dot(c.a) <= n.dot(c.b) { c.a } else { c.b };
        let distance = n.dot(low) - offset - c.radius;
        return (distance <= margin).then_some(Proximity {
            distance,
            normal: n,
            point: low - n * (n.dot(low) - offset),
            triangle: None,
        });
    }
    let k = closest_to_primitive(c.a, c.b, prim, pose)?;
    let distance = k.distance - c.radius;
    let away = (0.5 * (c.a + c.b) - pose.translation).normalize_or(DVec3::Z);
    (distance <= margin).then_some(Proximity {
        distance,
        normal: k.normal.unwrap_or(away),
        point: k.point,
        triangle: None,
    })
}

/// The triangles of a mesh placed by `pose` within `margin` of the capsule's surface, each with
/// its distance, direction and closest point (world), by triangle index.
pub fn capsule_mesh_proximities(
    c: &Capsule,
    mesh: &TriMesh,
    tree: &BalancedTree,
    pose: &DPose,
    margin: f64,
) -> Vec<Proximity> {
    let inv = pose.inverse();
    let local = c.transformed(&inv).inflated(margin.max(0.0));
    let (lo, hi) = local.swept_bounds(DVec3::ZERO);
    let mut found = Vec::new();
    triangles_in_box(tree, lo, hi, &mut found);
    found.sort_unstable();
    let mut out = Vec::new();
    for t in found {
        let tri = triangle_f64(mesh, t as usize);
        let (p, q) = segment_triangle_closest(local.a, local.b, tri);
        let k = Closest::between(p, q);
        let distance = k.distance - c.radius;
        if distance > margin {
            continue;
        }
        let face = (tri[1] - tri[0]).cross(tri[2] - tri[0]).normalize_or_zero();
        out.push(Proximity {
            distance,
            normal: pose.rotation * k.normal.unwrap_or(face),
            point: pose.transform_dpoint(q),
            triangle: Some(t),
        });
    }
    out
}

//! Ray casts against primitives, in closed form: the quadratic of the sphere, of the infinite
//! cylinder (capsule side, cylinder side) and of the capsule's end balls, the cylinder's cap
//! planes, the slabs of the box and the half-space plane. The first hit of a union of
//! components (capsule = side ∪ two balls, cylinder = side ∪ two caps) is the smallest
//! component hit.
//!
//! Roots are taken in the stable form `t = c / (−b + √(b² − ac))` for the entering root of
//! `a t² + 2 b t + c = 0`, with the discriminant written as `|d|² r² − |o × d|²` (the squared
//! half chord times `|d|²`), so a ray from far away does not lose the hit to cancellation.

use super::{Primitive, PrimitiveError, check_pose};
use crate::pose::DPose;
use glam::DVec3;

/// Where a ray first meets a primitive.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PrimitiveHit {
    /// Ray parameter: the hit is `origin + t · dir` (in units of the given `dir`).
    pub t: f64,
    /// The hit point, world frame.
    pub point: DVec3,
    /// Unit outward normal of the surface at the hit, world frame; zero when the origin is
    /// inside the solid (then `t = 0`).
    pub normal: DVec3,
}

/// The entering root of `a t² + 2 b t + c = 0` (`c > 0`: the origin is outside), if the ray
/// enters at some `t ≥ 0`, given the discriminant `disc = b² − ac` computed without
/// cancellation by the caller (as `a r² − |o × d|²`, the squared distance of the line).
fn entering_root(a: f64, b: f64, c: f64, disc: f64) -> Option<f64> {
    if a <= 0.0 || b >= 0.0 || disc < 0.0 {
        return None;
    }
    Some(c / (-b + disc.sqrt()))
}

/// Entering hit of the ball `|x − center| ≤ r` for an origin outside it.
fn ball_hit(o: DVec3, d: DVec3, center: DVec3, r: f64) -> Option<(f64, DVec3)> {
    let oc = o - center;
    let c = oc.length_squared() - r * r;
    if c <= 0.0 {
        return None;
    }
    let a = d.length_squared();
    let disc = a * r * r - oc.cross(d).length_squared();
    let t = entering_root(a, oc.dot(d), c, disc)?;
    Some((t, (oc + d * t) / r))
}

/// Entering hit of the side of the infinite cylinder `x² + z² ≤ r²` restricted to `|y| ≤ h`.
fn side_hit(o: DVec3, d: DVec3, r: f64, h: f64) -> Option<(f64, DVec3)> {
    let c = o.x * o.x + o.z * o.z - r * r;
    if c <= 0.0 {
        return None;
    }
    let a = d.x * d.x + d.z * d.z;
    let cross = o.x * d.z - o.z * d.x;
    let t = entering_root(a, o.x * d.x + o.z * d.z, c, a * r * r - cross * cross)?;
    let p = o + d * t;
    (p.y.abs() <= h).then(|| (t, DVec3::new(p.x, 0.0, p.z) / r))
}

impl Primitive {
    /// The first point where the ray `origin + t · dir`, `0 ≤ t ≤ max_t`, meets the solid placed
    /// by `pose` (world frame), or `None`. An origin inside (or on) the solid is a hit at `t = 0`
    /// with a zero normal, as for a solid ray cast in parry.
    pub fn ray_cast(
        &self,
        pose: &DPose,
        origin: DVec3,
        dir: DVec3,
        max_t: f64,
    ) -> Result<Option<PrimitiveHit>, PrimitiveError> {
        check_pose(pose, "primitive")?;
        if !(origin.is_finite() && dir.is_finite() && dir != DVec3::ZERO)
            || max_t.is_nan()
            || max_t < 0.0
        {
            return Err(PrimitiveError::InvalidRay);
        }
        let inv = pose.inverse();
        let o = inv.transform_dpoint(origin);
        let d = inv.rotation * dir;
        if self.locate_local(o) != crate::containment::PointLocation::Outside {
            return Ok(Some(PrimitiveHit {
                t: 0.0,
                point: origin,
                normal: DVec3::ZERO,
            }));
        }
        let hit = match *self {
            Self::Sphere { radius } => ball_hit(o, d, DVec3::ZERO, radius),
            Self::Capsule {
                half_length: h,
                radius: r,
            } => [
                side_hit(o, d, r, h),
                ball_hit(o, d, DVec3::new(0.0, h, 0.0), r),
                ball_hit(o, d, DVec3::new(0.0, -h, 0.0), r),
            ]
            .into_iter()
            .flatten()
            .min_by(|a, b| a.0.total_cmp(&b.0)),
            Self::Cylinder {
                half_height: h,
                radius: r,
            } => {
                let cap = |sign: f64| -> Option<(f64, DVec3)> {
                    // The cap plane y = sign·h, entered from outside (o.y beyond it).
                    if sign * o.y <= h || sign * d.y >= 0.0 {
                        return None;
                    }
                    let t = (sign * h - o.y) / d.y;
                    let p = o + d * t;
                    (p.x * p.x + p.z * p.z <= r * r).then_some((t, DVec3::new(0.0, sign, 0.0)))
                };
                [side_hit(o, d, r, h), cap(1.0), cap(-1.0)]
                    .into_iter()
                    .flatten()
                    .min_by(|a, b| a.0.total_cmp(&b.0))
            }
            Self::Cuboid { half_extents: h } => {
                // Slabs: the entering parameter is the largest lower crossing.
                let (mut t0, mut t1) = (0.0f64, f64::INFINITY);
                let mut axis = None;
                let mut ok = true;
                for k in 0..3 {
                    if d[k] == 0.0 {
                        if o[k].abs() > h[k] {
                            ok = false;
                        }
                        continue;
                    }
                    let (a, b) = ((-h[k] - o[k]) / d[k], (h[k] - o[k]) / d[k]);
                    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
                    if lo > t0 {
                        t0 = lo;
                        axis = Some(k);
                    }
                    t1 = t1.min(hi);
                }
                match axis {
                    Some(k) if ok && t0 <= t1 => {
                        let mut n = DVec3::ZERO;
                        n[k] = if d[k] > 0.0 { -1.0 } else { 1.0 };
                        Some((t0, n))
                    }
                    _ => None,
                }
            }
            Self::HalfSpace { normal: n } => {
                let (no, nd) = (n.dot(o), n.dot(d));
                (nd < 0.0).then(|| (-no / nd, n))
            }
        };
        Ok(hit.filter(|(t, _)| *t <= max_t).map(|(t, n)| PrimitiveHit {
            t,
            point: origin + dir * t,
            normal: (pose.rotation * n).normalize_or_zero(),
        }))
    }
}

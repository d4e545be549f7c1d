//! Closest points between points, segments, triangles, boxes and cylinders (Ericson,
//! *Real-Time Collision Detection*, §5.1), in `f64`. The sphere and capsule tests reduce to
//! "distance between the core (point or segment) and the other solid ≤ radius".

use crate::tri_tri::segment_intersects_triangle;
use glam::DVec3;

/// The point of segment `ab` closest to `p`.
pub(crate) fn on_segment(p: DVec3, a: DVec3, b: DVec3) -> DVec3 {
    let ab = b - a;
    let len2 = ab.length_squared();
    if len2 == 0.0 {
        return a;
    }
    let t = ((p - a).dot(ab) / len2).clamp(0.0, 1.0);
    a + ab * t
}

/// The closest points of segments `p1q1` and `p2q2` (Ericson §5.1.9).
pub(crate) fn segment_segment(p1: DVec3, q1: DVec3, p2: DVec3, q2: DVec3) -> (DVec3, DVec3) {
    let d1 = q1 - p1;
    let d2 = q2 - p2;
    let r = p1 - p2;
    let a = d1.length_squared();
    let e = d2.length_squared();
    let f = d2.dot(r);
    let (s, t);
    if a == 0.0 && e == 0.0 {
        return (p1, p2);
    }
    if a == 0.0 {
        s = 0.0;
        t = (f / e).clamp(0.0, 1.0);
    } else {
        let c = d1.dot(r);
        if e == 0.0 {
            t = 0.0;
            s = (-c / a).clamp(0.0, 1.0);
        } else {
            let b = d1.dot(d2);
            let denom = a * e - b * b;
            let s0 = if denom > 0.0 {
                ((b * f - c * e) / denom).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let t0 = (b * s0 + f) / e;
            if t0 < 0.0 {
                t = 0.0;
                s = (-c / a).clamp(0.0, 1.0);
            } else if t0 > 1.0 {
                t = 1.0;
                s = ((b - c) / a).clamp(0.0, 1.0);
            } else {
                t = t0;
                s = s0;
            }
        }
    }
    (p1 + d1 * s, p2 + d2 * t)
}

/// The point of triangle `abc` closest to `p` (Ericson §5.1.5, Voronoi regions).
pub(crate) fn on_triangle(p: DVec3, a: DVec3, b: DVec3, c: DVec3) -> DVec3 {
    let ab = b - a;
    let ac = c - a;
    let ap = p - a;
    let d1 = ab.dot(ap);
    let d2 = ac.dot(ap);
    if d1 <= 0.0 && d2 <= 0.0 {
        return a;
    }
    let bp = p - b;
    let d3 = ab.dot(bp);
    let d4 = ac.dot(bp);
    if d3 >= 0.0 && d4 <= d3 {
        return b;
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return a + ab * (d1 / (d1 - d3));
    }
    let cp = p - c;
    let d5 = ab.dot(cp);
    let d6 = ac.dot(cp);
    if d6 >= 0.0 && d5 <= d6 {
        return c;
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return a + ac * (d2 / (d2 - d6));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        return b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6)));
    }
    let denom = va + vb + vc;
    if denom <= 0.0 || !denom.is_finite() {
        // Degenerate triangle: the closest of its edges.
        return [(a, b), (b, c), (c, a)]
            .into_iter()
            .map(|(u, v)| on_segment(p, u, v))
            .min_by(|x, y| {
                (*x - p)
                    .length_squared()
                    .total_cmp(&(*y - p).length_squared())
            })
            .unwrap_or(a);
    }
    let v = vb / denom;
    let w = vc / denom;
    a + ab * v + ac * w
}

/// Distance between segment `pq` and triangle `t`: zero when they meet (exact test), else the
/// smallest of the endpoint–triangle and segment–edge distances.
pub(crate) fn segment_triangle_distance(p: DVec3, q: DVec3, t: [DVec3; 3]) -> f64 {
    if segment_intersects_triangle(p, q, t) {
        return 0.0;
    }
    let mut best = (on_triangle(p, t[0], t[1], t[2]) - p)
        .length()
        .min((on_triangle(q, t[0], t[1], t[2]) - q).length());
    for k in 0..3 {
        let (x, y) = segment_segment(p, q, t[k], t[(k + 1) % 3]);
        best = best.min((x - y).length());
    }
    best
}

/// The closest points of segment `pq` (possibly a point) and triangle `t`: `(on segment, on
/// triangle)`. When they meet (exact test) both are a common point.
pub(crate) fn segment_triangle_closest(p: DVec3, q: DVec3, t: [DVec3; 3]) -> (DVec3, DVec3) {
    if segment_intersects_triangle(p, q, t) {
        let n = (t[1] - t[0]).cross(t[2] - t[0]);
        let dq = n.dot(q - p);
        let x = if dq != 0.0 {
            p + (q - p) * (n.dot(t[0] - p) / dq).clamp(0.0, 1.0)
        } else {
            // In the triangle's plane: the endpoint nearer the triangle.
            let (cp, cq) = (
                on_triangle(p, t[0], t[1], t[2]),
                on_triangle(q, t[0], t[1], t[2]),
            );
            if (cp - p).length_squared() <= (cq - q).length_squared() {
                p
            } else {
                q
            }
        };
        return (x, x);
    }
    let mut best = (p, on_triangle(p, t[0], t[1], t[2]));
    let mut consider = |pair: (DVec3, DVec3)| {
        if (pair.0 - pair.1).length_squared() < (best.0 - best.1).length_squared() {
            best = pair;
        }
    };
    if q != p {
        consider((q, on_triangle(q, t[0], t[1], t[2])));
        for k in 0..3 {
            consider(segment_segment(p, q, t[k], t[(k + 1) % 3]));
        }
    }
    best
}

/// The point of the box `|x_k| ≤ h_k` closest to `p` (local frame).
pub(crate) fn on_box(p: DVec3, h: DVec3) -> DVec3 {
    p.clamp(-h, h)
}

/// The point of the solid cylinder `|y| ≤ h, x² + z² ≤ r²` closest to `p` (local frame).
pub(crate) fn on_cylinder(p: DVec3, h: f64, r: f64) -> DVec3 {
    let y = p.y.clamp(-h, h);
    let rho = p.x.hypot(p.z);
    let k = if rho > r { r / rho } else { 1.0 };
    DVec3::new(p.x * k, y, p.z * k)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn rnd(rng: &mut ChaCha8Rng) -> DVec3 {
        DVec3::new(
            rng.random_range(-2.0..2.0),
            rng.random_range(-2.0..2.0),
            rng.random_range(-2.0..2.0),
        )
    }

    /// Oracle: dense sampling of the parameter domains (the sampled distance is an upper bound
    /// that converges to the true one).
    #[test]
    fn closest_points_match_dense_sampling() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let steps = 200;
        for _ in 0..40 {
            let (p, a, b, c, q) = (
                rnd(&mut rng),
                rnd(&mut rng),
                rnd(&mut rng),
                rnd(&mut rng),
                rnd(&mut rng),
            );
            // Point–triangle.
            let got = (on_triangle(p, a, b, c) - p).length();
            let mut best = f64::INFINITY;
            for i in 0..=steps {
                for j in 0..=(steps - i) {
                    let (u, v) = (i as f64 / steps as f64, j as f64 / steps as f64);
                    best = best.min((a + (b - a) * u + (c - a) * v - p).length());
                }
            }
            assert!(got <= best + 1e-12 && best - got < 0.03, "{got} vs {best}");
            // Segment–segment.
            let (x, y) = segment_segment(p, q, a, b);
            let got = (x - y).length();
            let mut best = f64::INFINITY;
            for i in 0..=steps {
                for j in 0..=steps {
                    let (s, t) = (i as f64 / steps as f64, j as f64 / steps as f64);
                    best = best.min((p + (q - p) * s - a - (b - a) * t).length());
                }
            }
            assert!(got <= best + 1e-12 && best - got < 0.03, "{got} vs {best}");
            // Segment–triangle.
            let got = segment_triangle_distance(p, q, [a, b, c]);
            let mut best = f64::INFINITY;
            for k in 0..=steps {
                let s = p + (q - p) * (k as f64 / steps as f64);
                best = best.min((on_triangle(s, a, b, c) - s).length());
            }
            assert!(got <= best + 1e-12 && best - got < 0.03, "{got} vs {best}");
        }
        // A segment through a triangle.
        let t = [DVec3::ZERO, DVec3::X, DVec3::Y];
        assert_eq!(
            segment_triangle_distance(DVec3::new(0.2, 0.2, -1.0), DVec3::new(0.2, 0.2, 1.0), t),
            0.0
        );
        // Degenerate segments and triangles.
        let (x, y) = segment_segment(DVec3::ONE, DVec3::ONE, DVec3::ZERO, DVec3::X * 2.0);
        assert!((x - DVec3::ONE).length() == 0.0 && (y - DVec3::X).length() < 1e-15);
        let line = on_triangle(
            DVec3::new(0.5, 1.0, 0.0),
            DVec3::ZERO,
            DVec3::X,
            DVec3::X * 2.0,
        );
        assert!((line - DVec3::new(0.5, 0.0, 0.0)).length() < 1e-15);
    }

    #[test]
    fn box_and_cylinder_closest_points() {
        let h = DVec3::new(1.0, 2.0, 3.0);
        assert_eq!(
            on_box(DVec3::new(5.0, 0.5, -7.0), h),
            DVec3::new(1.0, 0.5, -3.0)
        );
        let c = on_cylinder(DVec3::new(3.0, 5.0, 4.0), 1.0, 2.0);
        assert!((c - DVec3::new(1.2, 1.0, 1.6)).length() < 1e-15);
        assert_eq!(
            on_cylinder(DVec3::new(0.1, 0.2, 0.3), 1.0, 2.0),
            DVec3::new(0.1, 0.2, 0.3)
        );
    }
}

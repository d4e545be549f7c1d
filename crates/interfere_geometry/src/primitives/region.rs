//! Planar surface regions and their area moments: the pieces that carry a volume contact's
//! gradient, and the exact moments of a polygon intersected with a disk.
//!
//! **Disk ∩ polygon** (`disk_polygon`). With the disk centred at the origin of its plane, every
//! quantity here is an integral `∫_R f(|x|) g(x/|x|) dA`, which the fan from the centre turns
//! into a sum over the polygon's edges: along the part of an edge inside the disk the fan piece
//! is the triangle `(0, P, Q)`; along a part outside it is the circular sector of radius `ρ`
//! between the directions of its ends. Each edge subtends less than `π` from the centre, so
//! every angle is a signed `atan2` with no `2π` ambiguity, whatever the polygon and wherever
//! the centre (inside, outside, on an edge). Per piece:
//! * area: `½ P × Q`, or `½ ρ² Δφ`;
//! * first moment: `½ (P × Q)(P + Q)/3`, or `ρ³/3 (sin φ₂ − sin φ₁, cos φ₁ − cos φ₂)`;
//! * second moment: `(A/12)(PPᵀ + QQᵀ + (P+Q)(P+Q)ᵀ)`, or `ρ⁴/4 ∫ (cos, sin)(cos, sin)ᵀ dφ`;
//! * solid angle seen from the point at height `h` above the centre (sphere radius
//!   `r = √(ρ² + h²)`): the triangle's by Van Oosterom & Strackee,
//!   `tan(Ω/2) = a·(b×c) / (|a||b||c| + (a·b)|c| + (a·c)|b| + (b·c)|a|)`, or
//!   `(sgn h − h/r) Δφ` for a sector (the boundary integral `∮ (sgn h − h/√(s²+h²)) dφ`).

pub use crate::volume::SurfacePiece;
use glam::{DMat3, DVec2, DVec3};

/// A flat region of the boundary of an intersection, with the normal that makes its vector area
/// a share of `∂V/∂x_b` (see [`super::PrimitiveVolume`]), and its exact area moments.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlanarRegion {
    /// Area centroid, world frame.
    pub centroid: DVec3,
    /// Area times the unit normal, signed as a share of `∂V/∂x_b`.
    pub vector_area: DVec3,
    /// Second area moment about the centroid, `∫ (x − c)(x − c)ᵀ dA` (world axes; it has no
    /// component along the normal).
    pub second_moment: DMat3,
}

impl PlanarRegion {
    /// The area.
    pub fn area(&self) -> f64 {
        self.vector_area.length()
    }

    /// The unit normal (the direction of the vector area).
    pub fn normal(&self) -> DVec3 {
        self.vector_area.normalize_or_zero()
    }

    /// Eight pieces of equal vector area on the region's inertia ellipse scaled by `√2`:
    /// `c + √2 (σ₁ cos φ_k e₁ + σ₂ sin φ_k e₂)`, `φ_k = kπ/4`, with `e_i` the principal axes
    /// and `σ_i²` the principal second moments per unit area. Their total, their moment about
    /// any point and their second moment equal the region's exactly; any four quadrants about
    /// the centroid each receive at least one piece.
    pub fn spread(&self) -> [SurfacePiece; 8] {
        let area = self.area();
        let share = self.vector_area / 8.0;
        let n = self.normal();
        let flat = [SurfacePiece {
            centroid: self.centroid,
            vector_area: share,
        }; 8];
        if area.is_nan() || area <= 0.0 || n == DVec3::ZERO {
            return flat;
        }
        let (u, v) = n.any_orthonormal_pair();
        let m = &self.second_moment;
        let (a, b, c) = (u.dot(*m * u), u.dot(*m * v), v.dot(*m * v));
        let mean = 0.5 * (a + c);
        let dev = (0.25 * (a - c) * (a - c) + b * b).sqrt();
        let (l1, l2) = ((mean + dev).max(0.0), (mean - dev).max(0.0));
        let theta = 0.5 * (2.0 * b).atan2(a - c);
        let e1 = u * theta.cos() + v * theta.sin();
        let e2 = n.cross(e1);
        let (s1, s2) = ((2.0 * l1 / area).sqrt(), (2.0 * l2 / area).sqrt());
        let mut out = flat;
        for (k, piece) in out.iter_mut().enumerate() {
            let phi = k as f64 * std::f64::consts::FRAC_PI_4;
            piece.centroid = self.centroid + e1 * (s1 * phi.cos()) + e2 * (s2 * phi.sin());
        }
        out
    }

    /// The same region with the opposite normal (the other body's share).
    pub fn negated(&self) -> Self {
        Self {
            vector_area: -self.vector_area,
            ..*self
        }
    }

    /// The region moved by `pose`.
    pub(crate) fn transformed(&self, pose: &crate::pose::DPose) -> Self {
        let r = pose.rotation;
        Self {
            centroid: pose.transform_dpoint(self.centroid),
            vector_area: r * self.vector_area,
            second_moment: r * self.second_moment * r.transpose(),
        }
    }
}

pub(crate) fn outer(a: DVec3, b: DVec3) -> DMat3 {
    DMat3::from_cols(a * b.x, a * b.y, a * b.z)
}

/// Raw area moments of a flat region about a fixed origin `o`: `∫ dA`, `∫ (x − o) dA`,
/// `∫ (x − o)(x − o)ᵀ dA`. Sums of such moments (same origin) are the moments of the union.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Moments {
    pub area: f64,
    pub first: DVec3,
    pub second: DMat3,
}

impl Default for Moments {
    /// Zero moments (note: `DMat3::default()` is the identity, so this is not derived).
    fn default() -> Self {
        Self {
            area: 0.0,
            first: DVec3::ZERO,
            second: DMat3::ZERO,
        }
    }
}

impl Moments {
    pub fn add(&mut self, o: &Moments) {
        self.area += o.area;
        self.first += o.first;
        self.second += o.second;
    }

    /// The triangle `(a, b, c)` (relative to the origin), with the area signed by `n`.
    pub fn triangle(a: DVec3, b: DVec3, c: DVec3, n: DVec3) -> Self {
        let area = 0.5 * n.dot((b - a).cross(c - a));
        let s = a + b + c;
        Self {
            area,
            first: s * (area / 3.0),
            second: (outer(a, a) + outer(b, b) + outer(c, c) + outer(s, s)) * (area / 12.0),
        }
    }

    /// A planar polygon (relative to the origin, any winding) fanned from its first vertex,
    /// with areas signed by `n`.
    pub fn polygon(pts: &[DVec3], n: DVec3) -> Self {
        let mut m = Self::default();
        for k in 1..pts.len().saturating_sub(1) {
            m.add(&Self::triangle(pts[0], pts[k], pts[k + 1], n));
        }
        m
    }

    /// The region with normal `normal` (unit) and the origin at `o`, as a [`PlanarRegion`]
    /// whose vector area is `sign · area · normal`; `None` when the area is not positive.
    pub fn region(&self, o: DVec3, normal: DVec3, sign: f64) -> Option<PlanarRegion> {
        if !(self.area > 0.0 && self.area.is_finite()) {
            return None;
        }
        let m = self.first / self.area;
        Some(PlanarRegion {
            centroid: o + m,
            vector_area: normal * (sign * self.area),
            second_moment: self.second - outer(m, m) * self.area,
        })
    }
}

/// Moments and solid angle of a disk ∩ polygon region (see the module documentation), in the
/// plane's 2D coordinates centred at the disk centre.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct DiskStats {
    pub area: f64,
    pub first: DVec2,
    /// `xx, xy, yy`.
    pub second: [f64; 3],
    /// Signed solid angle of the region seen from the point at height `h` over the centre
    /// (positive for `h > 0` and a counter-clockwise polygon).
    pub solid_angle: f64,
}

/// The part of `poly` (counter-clockwise, any shape) inside the disk of radius `rho` at the
/// origin; `h` is the height of the viewpoint over the plane and `r = √(ρ² + h²)`.
pub(crate) fn disk_polygon(poly: &[DVec2], rho: f64, h: f64, r: f64) -> DiskStats {
    let mut s = DiskStats::default();
    let sgn_h = if h > 0.0 {
        1.0
    } else if h < 0.0 {
        -1.0
    } else {
        0.0
    };
    let rho2 = rho * rho;
    let arc = |s: &mut DiskStats, p: DVec2, q: DVec2| {
        let (lp, lq) = (p.length(), q.length());
        if lp == 0.0 || lq == 0.0 {
            return;
        }
        let (u1, u2) = (p / lp, q / lq);
        let dphi = u1.perp_dot(u2).atan2(u1.dot(u2));
        s.area += 0.5 * rho2 * dphi;
        s.first += DVec2::new(u2.y - u1.y, u1.x - u2.x) * (rho2 * rho / 3.0);
        let r4 = rho2 * rho2 / 4.0;
        let sin2 = u2.y * u2.x - u1.y * u1.x; // (sin 2φ₂ − sin 2φ₁)/2
        s.second[0] += r4 * (0.5 * dphi + 0.5 * sin2);
        s.second[1] += r4 * 0.5 * (u2.y * u2.y - u1.y * u1.y);
        s.second[2] += r4 * (0.5 * dphi - 0.5 * sin2);
        if sgn_h != 0.0 {
            s.solid_angle += (sgn_h - h / r) * dphi;
        }
    };
    let straight = |s: &mut DiskStats, p: DVec2, q: DVec2| {
        let a = 0.5 * p.perp_dot(q);
        let sum = p + q;
        s.area += a;
        s.first += sum * (a / 3.0);
        let k = a / 12.0;
        s.second[0] += k * (p.x * p.x + q.x * q.x + sum.x * sum.x);
        s.second[1] += k * (p.x * p.y + q.x * q.y + sum.x * sum.y);
        s.second[2] += k * (p.y * p.y + q.y * q.y + sum.y * sum.y);
        if sgn_h != 0.0 {
            // Split at the foot of the perpendicular from the centre, so that each piece spans
            // less than a right angle: then every dot product in the denominator is positive
            // and `atan2` never meets the ±π branch (which a segment passing through or near
            // the centre would otherwise hit with a rounding-dependent sign).
            let e = q - p;
            let len2 = e.length_squared();
            let t0 = if len2 > 0.0 { -p.dot(e) / len2 } else { 0.0 };
            let tri = |p: DVec2, q: DVec2| {
                let (a3, b3, c3) = (
                    DVec3::new(0.0, 0.0, h),
                    DVec3::new(p.x, p.y, h),
                    DVec3::new(q.x, q.y, h),
                );
                let (la, lb, lc) = (h.abs(), b3.length(), c3.length());
                let num = h * p.perp_dot(q);
                let den = la * lb * lc + a3.dot(b3) * lc + a3.dot(c3) * lb + b3.dot(c3) * la;
                2.0 * num.atan2(den)
            };
            s.solid_angle += if t0 > 0.0 && t0 < 1.0 {
                let f = p + e * t0;
                tri(p, f) + tri(f, q)
            } else {
                tri(p, q)
            };
        }
    };
    for k in 0..poly.len() {
        let (a, b) = (poly[k], poly[(k + 1) % poly.len()]);
        let e = b - a;
        let len2 = e.length_squared();
        if len2 == 0.0 {
            continue;
        }
        let cross = a.perp_dot(e);
        let d2 = cross * cross / len2;
        if d2 >= rho2 {
            arc(&mut s, a, b);
            continue;
        }
        let t_star = -a.dot(e) / len2;
        let half = ((rho2 - d2) / len2).sqrt();
        let t1 = (t_star - half).clamp(0.0, 1.0);
        let t2 = (t_star + half).clamp(0.0, 1.0);
        let (p1, p2) = (
            if t1 == 0.0 { a } else { a + e * t1 },
            if t2 == 1.0 { b } else { a + e * t2 },
        );
        if t1 > 0.0 {
            arc(&mut s, a, p1);
        }
        if t2 > t1 {
            straight(&mut s, p1, p2);
        }
        if t2 < 1.0 {
            arc(&mut s, p2, b);
        }
    }
    s
}

/// Keeps the part of the 2D polygon `poly` where `n · x ≤ c` (Sutherland–Hodgman).
pub(crate) fn clip_2d(poly: &[DVec2], n: DVec2, c: f64) -> Vec<DVec2> {
    let mut out = Vec::with_capacity(poly.len() + 1);
    for k in 0..poly.len() {
        let (p, q) = (poly[k], poly[(k + 1) % poly.len()]);
        let (sp, sq) = (n.dot(p) - c, n.dot(q) - c);
        if sp <= 0.0 {
            out.push(p);
        }
        if (sp <= 0.0) != (sq <= 0.0) {
            out.push(p + (q - p) * (sp / (sp - sq)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::PI;

    fn square(c: DVec2, half: f64) -> Vec<DVec2> {
        vec![
            c + DVec2::new(-half, -half),
            c + DVec2::new(half, -half),
            c + DVec2::new(half, half),
            c + DVec2::new(-half, half),
        ]
    }

    /// Oracle: a fine grid count of the region (area, centroid, second moment) and the solid
    /// angle integral `∫ h/|x|³ dA` by the midpoint rule.
    #[test]
    fn disk_polygon_matches_a_grid() {
        let cases: Vec<(Vec<DVec2>, f64, f64)> = vec![
            (square(DVec2::ZERO, 2.0), 1.0, 0.5),  // disk inside polygon
            (square(DVec2::ZERO, 0.5), 1.0, -0.3), // polygon inside disk
            (square(DVec2::new(0.8, 0.3), 0.6), 1.0, 0.7), // partial, centre outside
            (square(DVec2::new(0.5, 0.0), 0.5), 1.0, 0.4), // centre on an edge
            (square(DVec2::new(0.5, 0.5), 0.5), 1.0, -0.2), // centre at a vertex
            (
                vec![
                    DVec2::new(-0.9, -0.2),
                    DVec2::new(1.3, -0.4),
                    DVec2::new(0.1, 1.1),
                ],
                0.8,
                0.25,
            ),
            (square(DVec2::new(3.0, 0.0), 0.5), 1.0, 0.5), // disjoint
        ];
        for (poly, rho, h) in cases {
            let r = (rho * rho + h * h).sqrt();
            let s = disk_polygon(&poly, rho, h, r);
            let n = 1500;
            let (lo, hi) = (DVec2::splat(-rho), DVec2::splat(rho));
            let cell = (hi - lo) / n as f64;
            let (mut area, mut first, mut sec, mut omega) = (0.0, DVec2::ZERO, [0.0; 3], 0.0);
            for i in 0..n {
                for j in 0..n {
                    let x = lo + DVec2::new(i as f64 + 0.5, j as f64 + 0.5) * cell;
                    if x.length_squared() > rho * rho {
                        continue;
                    }
                    let inside = (0..poly.len()).all(|k| {
                        let (a, b) = (poly[k], poly[(k + 1) % poly.len()]);
                        (b - a).perp_dot(x - a) >= 0.0
                    });
                    if inside {
                        let da = cell.x * cell.y;
                        area += da;
                        first += x * da;
                        sec[0] += x.x * x.x * da;
                        sec[1] += x.x * x.y * da;
                        sec[2] += x.y * x.y * da;
                        omega += h / (x.length_squared() + h * h).powf(1.5) * da;
                    }
                }
            }
            let tol = 4e-3 * rho * rho;
            assert!((s.area - area).abs() < tol, "{} vs {area}", s.area);
            assert!(
                (s.first - first).length() < tol * rho,
                "{} vs {first}",
                s.first
            );
            for (got, want) in s.second.iter().zip(sec) {
                assert!((got - want).abs() < tol * rho * rho);
            }
            assert!(
                (s.solid_angle - omega).abs() < 1e-2 * (1.0 + omega.abs()),
                "{} vs {omega}",
                s.solid_angle
            );
        }
        // The full disk exactly: area πρ², solid angle of a cap 2π(1 − h/r).
        let s = disk_polygon(&square(DVec2::ZERO, 5.0), 1.0, 0.6, 0.6f64.hypot(1.0));
        assert!((s.area - PI).abs() < 1e-14);
        assert!((s.solid_angle - 2.0 * PI * (1.0 - 0.6 / 0.6f64.hypot(1.0))).abs() < 1e-14);
        assert!((s.second[0] - PI / 4.0).abs() < 1e-14 && s.second[1].abs() < 1e-14);
    }

    #[test]
    fn spread_keeps_total_moment_and_second_moment() {
        let pts = [
            DVec3::new(0.0, 0.0, 0.0),
            DVec3::new(3.0, 0.0, 0.0),
            DVec3::new(3.0, 1.0, 0.2),
            DVec3::new(0.0, 1.0, 0.2),
        ];
        let n = (pts[1] - pts[0]).cross(pts[3] - pts[0]).normalize();
        let o = DVec3::new(0.3, -0.2, 0.1);
        let rel: Vec<DVec3> = pts.iter().map(|p| *p - o).collect();
        let region = Moments::polygon(&rel, n).region(o, n, -1.0).unwrap();
        assert!((region.area() - 3.0 * 1.0f64.hypot(0.2)).abs() < 1e-12);
        let pieces = region.spread();
        let total: DVec3 = pieces.iter().map(|p| p.vector_area).sum();
        assert!((total - region.vector_area).length() < 1e-12);
        let p = DVec3::new(5.0, -1.0, 2.0);
        let m: DVec3 = pieces
            .iter()
            .map(|q| (q.centroid - p).cross(q.vector_area))
            .sum();
        assert!((m - (region.centroid - p).cross(region.vector_area)).length() < 1e-12);
        let sec = pieces.iter().fold(DMat3::ZERO, |acc, q| {
            let d = q.centroid - region.centroid;
            acc + outer(d, d) * (region.area() / 8.0)
        });
        for c in 0..3 {
            assert!(
                (sec.col(c) - region.second_moment.col(c)).length() < 1e-12,
                "{sec:?} vs {:?}",
                region.second_moment
            );
        }
    }
}

//! Distance between two convex sets given by support functions: the GJK algorithm (Gilbert,
//! Johnson & Keerthi 1988) with Johnson's sub-algorithm written as closest-point region tests
//! (Ericson §9.5). Used for the pairs with no simple closest-point formula (a cylinder with a
//! segment, box, cylinder or triangle; a segment with a box).
//!
//! Each iteration brackets the distance between `v·w/|v|` and `|v|` (`v` the current closest
//! point of the Minkowski difference, `w` its support point along `−v`); the loop stops when
//! the gap is below `1e-10 |v|²`, when `|v|` falls below `1e-13` of the scale (touching or
//! overlapping), when the simplex encloses the origin, when `|v|` stops decreasing (rounding),
//! or after 128 iterations (curved shapes converge linearly), and reports `|v|`. So the
//! returned distance is an upper bound, within a relative `1e-10` of the true one once
//! converged, and overlap is decided to about `1e-13` of the shapes' size. A nearly flat
//! tetrahedron (support points clustered on a curved rim) is not taken to enclose the origin
//! unless one of its faces passes through it.

use glam::DVec3;

/// The closest point to the origin of the simplex `pts`, and the smallest face of the simplex
/// that holds it (the points to keep). Four points enclosing the origin return the origin.
fn closest_on_simplex(pts: &[DVec3]) -> (DVec3, Vec<DVec3>) {
    match pts.len() {
        1 => (pts[0], pts.to_vec()),
        2 => {
            let (a, b) = (pts[0], pts[1]);
            let ab = b - a;
            let len2 = ab.length_squared();
            let t = if len2 > 0.0 {
                (-a.dot(ab) / len2).clamp(0.0, 1.0)
            } else {
                0.0
            };
            if t <= 0.0 {
                (a, vec![a])
            } else if t >= 1.0 {
                (b, vec![b])
            } else {
                (a + ab * t, vec![a, b])
            }
        }
        3 => closest_on_triangle(pts[0], pts[1], pts[2]),
        _ => {
            let [a, b, c, d] = [pts[0], pts[1], pts[2], pts[3]];
            let faces = [(a, b, c, d), (a, c, d, b), (a, d, b, c), (b, d, c, a)];
            // A nearly flat tetrahedron (support points clustered on a curved surface) makes
            // the side tests meaningless: then every face is a candidate, and the origin is
            // only "inside" if it lies on one of them.
            let size = [b - a, c - a, d - a]
                .iter()
                .map(|e| e.length())
                .fold(0.0f64, f64::max);
            let flat = (b - a).dot((c - a).cross(d - a)).abs() <= 1e-9 * size.powi(3);
            let mut best: Option<(DVec3, Vec<DVec3>)> = None;
            for (p, q, r, opposite) in faces {
                let n = (q - p).cross(r - p);
                let s_origin = -n.dot(p);
                let s_opp = n.dot(opposite - p);
                // The origin is beyond this face (or the tetrahedron is flat).
                if flat || s_origin * s_opp < 0.0 || s_opp == 0.0 {
                    let cand = closest_on_triangle(p, q, r);
                    if best
                        .as_ref()
                        .is_none_or(|b| cand.0.length_squared() < b.0.length_squared())
                    {
                        best = Some(cand);
                    }
                }
            }
            match best {
                Some(b) if !flat || b.0 != DVec3::ZERO => b,
                _ => (DVec3::ZERO, pts.to_vec()),
            }
        }
    }
}

/// Closest point of triangle `abc` to the origin, with the vertices of the feature holding it.
fn closest_on_triangle(a: DVec3, b: DVec3, c: DVec3) -> (DVec3, Vec<DVec3>) {
    let ab = b - a;
    let ac = c - a;
    let ap = -a;
    let d1 = ab.dot(ap);
    let d2 = ac.dot(ap);
    if d1 <= 0.0 && d2 <= 0.0 {
        return (a, vec![a]);
    }
    let bp = -b;
    let d3 = ab.dot(bp);
    let d4 = ac.dot(bp);
    if d3 >= 0.0 && d4 <= d3 {
        return (b, vec![b]);
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let v = d1 / (d1 - d3);
        return (a + ab * v, vec![a, b]);
    }
    let cp = -c;
    let d5 = ab.dot(cp);
    let d6 = ac.dot(cp);
    if d6 >= 0.0 && d5 <= d6 {
        return (c, vec![c]);
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = d2 / (d2 - d6);
        return (a + ac * w, vec![a, c]);
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return (b + (c - b) * w, vec![b, c]);
    }
    let denom = va + vb + vc;
    if denom.is_nan() || denom <= 0.0 {
        // Flat triangle: fall back to its edges.
        let e = [
            closest_on_simplex(&[a, b]),
            closest_on_simplex(&[b, c]),
            closest_on_simplex(&[c, a]),
        ];
        return e
            .into_iter()
            .min_by(|x, y| x.0.length_squared().total_cmp(&y.0.length_squared()))
            .unwrap_or((a, vec![a]));
    }
    let v = vb / denom;
    let w = vc / denom;
    (a + ab * v + ac * w, vec![a, b, c])
}

/// Distance between the convex sets with support functions `sa` and `sb` (same frame); `scale`
/// is their size (for the absolute tolerance). Zero when they touch or overlap (within
/// `1e-13 · scale`).
pub(crate) fn distance(
    sa: impl Fn(DVec3) -> DVec3,
    sb: impl Fn(DVec3) -> DVec3,
    scale: f64,
) -> f64 {
    let touch2 = (1e-13 * scale).powi(2);
    let mut v = sa(DVec3::X) - sb(-DVec3::X);
    // The simplex starts with that point, so |v| never increases.
    let mut simplex: Vec<DVec3> = vec![v];
    for _ in 0..128 {
        let vv = v.length_squared();
        if vv <= touch2 {
            return 0.0;
        }
        let w = sa(-v) - sb(v);
        if vv - v.dot(w) <= 1e-10 * vv {
            return vv.sqrt();
        }
        if simplex.contains(&w) {
            // No new support point: converged as far as rounding allows.
            return vv.sqrt();
        }
        simplex.push(w);
        let (closest, kept) = closest_on_simplex(&simplex);
        if kept.len() == 4 {
            return 0.0;
        }
        simplex = kept;
        let next = closest.length_squared();
        if next >= vv {
            return vv.sqrt();
        }
        v = closest;
    }
    v.length()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn box_support(c: DVec3, h: DVec3) -> impl Fn(DVec3) -> DVec3 {
        move |d: DVec3| {
            c + DVec3::new(
                if d.x < 0.0 { -h.x } else { h.x },
                if d.y < 0.0 { -h.y } else { h.y },
                if d.z < 0.0 { -h.z } else { h.z },
            )
        }
    }

    /// Oracle: the distance between axis-aligned boxes is the length of the per-axis gaps.
    #[test]
    fn box_distances_match_the_axis_gaps() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for _ in 0..200 {
            let ca = DVec3::new(
                rng.random_range(-3.0..3.0),
                rng.random_range(-3.0..3.0),
                rng.random_range(-3.0..3.0),
            );
            let cb = DVec3::new(
                rng.random_range(-3.0..3.0),
                rng.random_range(-3.0..3.0),
                rng.random_range(-3.0..3.0),
            );
            let ha = DVec3::new(
                rng.random_range(0.1..1.0),
                rng.random_range(0.1..1.0),
                rng.random_range(0.1..1.0),
            );
            let hb = DVec3::new(
                rng.random_range(0.1..1.0),
                rng.random_range(0.1..1.0),
                rng.random_range(0.1..1.0),
            );
            let gap = ((ca - cb).abs() - ha - hb).max(DVec3::ZERO);
            let got = distance(box_support(ca, ha), box_support(cb, hb), 3.0);
            assert!(
                (got - gap.length()).abs() <= 1e-9 * (1.0 + gap.length()),
                "{got} vs {}",
                gap.length()
            );
        }
    }

    /// Oracle: point–segment distance in closed form.
    #[test]
    fn segment_to_point() {
        let seg = |d: DVec3| {
            if d.y >= 0.0 {
                DVec3::new(0.0, 1.0, 0.0)
            } else {
                DVec3::new(0.0, -1.0, 0.0)
            }
        };
        for (p, want) in [
            (DVec3::new(3.0, 0.5, 4.0), 5.0),
            (DVec3::new(0.0, 3.0, 0.0), 2.0),
            (DVec3::new(0.0, 0.5, 0.0), 0.0),
        ] {
            let got = distance(seg, move |_| p, 3.0);
            assert!((got - want).abs() < 1e-12, "{got} vs {want}");
        }
    }
}

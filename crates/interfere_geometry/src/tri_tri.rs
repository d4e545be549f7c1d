//! Exact intersection tests between closed triangles, segments and points in `f64`.
//!
//! Implements the exact primitive behind CInDeR (Knott & Pai 2003) Theorem 1, Section 3.1 (solids
//! interfere iff an edge of one meets the other; here: an edge meeting a triangle of the other
//! surface, [`segment_intersects_triangle`]) and the triangle–triangle test in the spirit
//! of Möller and Guigue–Devillers, built only from Shewchuk's exact orientation predicates
//! (`robust::orient3d`, `robust::orient2d`), so every answer is exact for the given `f64`
//! coordinates (barring overflow or underflow inside the predicates, i.e. for coordinates whose
//! magnitudes stay roughly within `1e-70 ..= 1e70`).
//!
//! All sets are closed: touching at a point, along an edge or over an area counts as
//! intersecting. Coplanar inputs are decided in a 2D projection that drops an axis along which
//! the (exact) normal is non-zero, so the projection is injective on the common plane.
//! Degenerate triangles (collinear or repeated vertices) are treated as the union of their
//! edges, i.e. as the segment or point they are.
//!
//! The reduction used: the intersection of two closed convex polygons, when non-empty, has an
//! extreme point, and every extreme point lies on the boundary of one of them inside the other.
//! So two triangles intersect iff an edge of one meets the other triangle.

use glam::DVec3;
use robust::{Coord, Coord3D, orient2d, orient3d};

#[inline]
fn c3(p: DVec3) -> Coord3D<f64> {
    Coord3D {
        x: p.x,
        y: p.y,
        z: p.z,
    }
}

#[inline]
fn sign(v: f64) -> i8 {
    if v > 0.0 {
        1
    } else if v < 0.0 {
        -1
    } else {
        0
    }
}

/// Exact sign of `orient3d(a, b, c, d)`: `+1` when `d` lies below the plane of `a, b, c` (on the
/// side opposite to the normal `(b - a) × (c - a)`), `-1` above, `0` when the four are coplanar.
#[inline]
pub fn orient3d_sign(a: DVec3, b: DVec3, c: DVec3, d: DVec3) -> i8 {
    sign(orient3d(c3(a), c3(b), c3(c), c3(d)))
}

/// Drops axis `k`: the remaining coordinates in cyclic order, so that the 2D orientation of a
/// projected triangle is the `k` component of its 3D normal.
#[inline]
fn proj(p: DVec3, k: usize) -> Coord<f64> {
    match k {
        0 => Coord { x: p.y, y: p.z },
        1 => Coord { x: p.z, y: p.x },
        _ => Coord { x: p.x, y: p.y },
    }
}

#[inline]
fn o2(a: Coord<f64>, b: Coord<f64>, c: Coord<f64>) -> i8 {
    sign(orient2d(a, b, c))
}

/// The axis to drop so that the plane through `a, b, c` projects injectively, chosen where the
/// exact normal component is largest in magnitude; `None` exactly when `a, b, c` are collinear
/// (or coincide).
pub fn projection_axis(a: DVec3, b: DVec3, c: DVec3) -> Option<usize> {
    let mut best = None;
    let mut best_mag = 0.0;
    for k in 0..3 {
        let m = orient2d(proj(a, k), proj(b, k), proj(c, k)).abs();
        if m > best_mag {
            best_mag = m;
            best = Some(k);
        }
    }
    best
}

/// Whether `a, b, c` are exactly collinear (a zero-area triangle).
pub fn is_degenerate(t: [DVec3; 3]) -> bool {
    projection_axis(t[0], t[1], t[2]).is_none()
}

#[inline]
fn in_box_2d(a: Coord<f64>, b: Coord<f64>, p: Coord<f64>) -> bool {
    p.x >= a.x.min(b.x) && p.x <= a.x.max(b.x) && p.y >= a.y.min(b.y) && p.y <= a.y.max(b.y)
}

/// Closed 2D segments `pq` and `ab` intersect (either may be a single point).
fn segments_intersect_2d(p: Coord<f64>, q: Coord<f64>, a: Coord<f64>, b: Coord<f64>) -> bool {
    let d1 = o2(a, b, p);
    let d2 = o2(a, b, q);
    let d3 = o2(p, q, a);
    let d4 = o2(p, q, b);
    if d1 * d2 < 0 && d3 * d4 < 0 {
        return true;
    }
    (d1 == 0 && in_box_2d(a, b, p))
        || (d2 == 0 && in_box_2d(a, b, q))
        || (d3 == 0 && in_box_2d(p, q, a))
        || (d4 == 0 && in_box_2d(p, q, b))
}

/// `p` lies in the closed 2D triangle `abc`, which must not be degenerate (either winding).
fn point_in_triangle_2d(p: Coord<f64>, a: Coord<f64>, b: Coord<f64>, c: Coord<f64>) -> bool {
    let s = [o2(a, b, p), o2(b, c, p), o2(c, a, p)];
    !(s.iter().any(|&x| x < 0) && s.iter().any(|&x| x > 0))
}

/// Coplanar closed segment `pq` against the non-degenerate triangle `t`, projected along `k`.
fn coplanar_segment_triangle(p: DVec3, q: DVec3, t: [DVec3; 3], k: usize) -> bool {
    let (p, q) = (proj(p, k), proj(q, k));
    let [a, b, c] = t.map(|v| proj(v, k));
    point_in_triangle_2d(p, a, b, c)
        || point_in_triangle_2d(q, a, b, c)
        || segments_intersect_2d(p, q, a, b)
        || segments_intersect_2d(p, q, b, c)
        || segments_intersect_2d(p, q, c, a)
}

/// Whether point `p` lies in the closed triangle `t` (any triangle, degenerate ones included).
pub fn point_in_triangle(p: DVec3, t: [DVec3; 3]) -> bool {
    segment_intersects_triangle(p, p, t)
}

/// Whether the closed segments `pq` and `ab` (either may be a single point) share a point. Exact.
pub fn segments_intersect(p: DVec3, q: DVec3, a: DVec3, b: DVec3) -> bool {
    if orient3d_sign(p, q, a, b) != 0 {
        return false;
    }
    // Coplanar: project along an axis on which the common plane's normal is non-zero. Unless all
    // four points are collinear, one of these triples spans the plane.
    for (x, y, z) in [(p, q, a), (p, q, b), (a, b, p), (a, b, q)] {
        if let Some(k) = projection_axis(x, y, z) {
            return segments_intersect_2d(proj(p, k), proj(q, k), proj(a, k), proj(b, k));
        }
    }
    // All four collinear: compare intervals along the axis with the largest spread, on which the
    // common line projects injectively (if every spread is zero, all four points coincide).
    let pts = [p, q, a, b];
    let mut axis = 0;
    let mut spread = -1.0;
    for k in 0..3 {
        let lo = pts.iter().map(|v| v[k]).fold(f64::INFINITY, f64::min);
        let hi = pts.iter().map(|v| v[k]).fold(f64::NEG_INFINITY, f64::max);
        if hi - lo > spread {
            spread = hi - lo;
            axis = k;
        }
    }
    let (p, q, a, b) = (p[axis], q[axis], a[axis], b[axis]);
    p.min(q).max(a.min(b)) <= p.max(q).min(a.max(b))
}

/// The segment `pq` against a non-degenerate triangle `t` with projection axis `k`, given the
/// exact orientations `sp`, `sq` of `p` and `q` against the plane of `t`.
#[inline]
fn segment_triangle_oriented(p: DVec3, q: DVec3, sp: i8, sq: i8, t: [DVec3; 3], k: usize) -> bool {
    if sp * sq > 0 {
        return false;
    }
    if sp == 0 && sq == 0 {
        return coplanar_segment_triangle(p, q, t, k);
    }
    // The segment meets the plane of t in exactly one point X (p != q here). X lies in the
    // closed triangle iff it is on the same side of (or on) all three edges, as seen along pq.
    let s = [
        orient3d_sign(p, q, t[0], t[1]),
        orient3d_sign(p, q, t[1], t[2]),
        orient3d_sign(p, q, t[2], t[0]),
    ];
    !(s.iter().any(|&x| x < 0) && s.iter().any(|&x| x > 0))
}

/// Whether the closed segment `pq` (possibly a single point) meets the closed triangle `t`
/// (possibly degenerate). Exact for the given `f64` coordinates.
pub fn segment_intersects_triangle(p: DVec3, q: DVec3, t: [DVec3; 3]) -> bool {
    match projection_axis(t[0], t[1], t[2]) {
        None => {
            segments_intersect(p, q, t[0], t[1])
                || segments_intersect(p, q, t[1], t[2])
                || segments_intersect(p, q, t[2], t[0])
        }
        Some(k) => {
            let sp = orient3d_sign(t[0], t[1], t[2], p);
            let sq = if q == p {
                sp
            } else {
                orient3d_sign(t[0], t[1], t[2], q)
            };
            segment_triangle_oriented(p, q, sp, sq, t, k)
        }
    }
}

/// Whether the closed triangles `a` and `b` share at least one point (touching counts; coplanar
/// and degenerate triangles are handled). Exact for the given `f64` coordinates.
pub fn triangles_intersect(a: [DVec3; 3], b: [DVec3; 3]) -> bool {
    let (Some(ka), Some(kb)) = (
        projection_axis(a[0], a[1], a[2]),
        projection_axis(b[0], b[1], b[2]),
    ) else {
        // A degenerate triangle is the union of its edges.
        return (0..3).any(|i| segment_intersects_triangle(a[i], a[(i + 1) % 3], b))
            || (0..3).any(|i| segment_intersects_triangle(b[i], b[(i + 1) % 3], a));
    };
    let sb = b.map(|v| orient3d_sign(a[0], a[1], a[2], v));
    if sb.iter().all(|&s| s > 0) || sb.iter().all(|&s| s < 0) {
        return false;
    }
    let sa = a.map(|v| orient3d_sign(b[0], b[1], b[2], v));
    if sa.iter().all(|&s| s > 0) || sa.iter().all(|&s| s < 0) {
        return false;
    }
    (0..3).any(|i| {
        let j = (i + 1) % 3;
        segment_triangle_oriented(a[i], a[j], sa[i], sa[j], b, kb)
    }) || (0..3).any(|i| {
        let j = (i + 1) % 3;
        segment_triangle_oriented(b[i], b[j], sb[i], sb[j], a, ka)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    type I3 = [i128; 3];

    fn sub(a: I3, b: I3) -> I3 {
        [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
    }
    fn cross(a: I3, b: I3) -> I3 {
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    }
    fn dot(a: I3, b: I3) -> i128 {
        a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
    }
    /// `det(b - a, c - a, d - a)`.
    fn orient(a: I3, b: I3, c: I3, d: I3) -> i128 {
        dot(sub(b, a), cross(sub(c, a), sub(d, a)))
    }

    /// Independent oracle: is the origin in the convex hull of `s`? By Carathéodory it is iff
    /// it lies in a non-degenerate simplex (point, segment, triangle, tetrahedron) of `s`; each
    /// is tested with exact integer determinants.
    fn hull_contains_origin(s: &[I3]) -> bool {
        let o = [0i128; 3];
        let n = s.len();
        if s.contains(&o) {
            return true;
        }
        for i in 0..n {
            for j in i + 1..n {
                let (a, b) = (s[i], s[j]);
                if a != b && cross(a, b) == o && dot(a, b) <= 0 {
                    return true;
                }
                for k in j + 1..n {
                    let c = s[k];
                    let nrm = cross(sub(b, a), sub(c, a));
                    if nrm != o
                        && orient(o, a, b, c) == 0
                        && [(a, b), (b, c), (c, a)]
                            .iter()
                            .all(|&(x, y)| dot(cross(sub(y, x), sub(o, x)), nrm) >= 0)
                    {
                        return true;
                    }
                    for &d in &s[k + 1..] {
                        let vol = orient(a, b, c, d);
                        if vol != 0
                            && [
                                orient(o, b, c, d),
                                orient(a, o, c, d),
                                orient(a, b, o, d),
                                orient(a, b, c, o),
                            ]
                            .iter()
                            .all(|&l| l * vol.signum() >= 0)
                        {
                            return true;
                        }
                    }
                }
            }
        }
        false
    }

    /// Oracle: convex hulls of `a` and `b` meet iff the origin is in the hull of `a - b`.
    fn oracle(a: &[I3], b: &[I3]) -> bool {
        let diffs: Vec<I3> = a
            .iter()
            .flat_map(|&p| b.iter().map(move |&q| sub(p, q)))
            .collect();
        hull_contains_origin(&diffs)
    }

    /// An exact map of integer points to `f64`: axis permutation, reflections, power-of-two
    /// scale and an integer offset, all representable without rounding.
    #[derive(Clone, Copy)]
    struct ExactMap {
        perm: [usize; 3],
        flip: [f64; 3],
        scale: f64,
        offset: [f64; 3],
    }

    impl ExactMap {
        const IDENTITY: Self = Self {
            perm: [0, 1, 2],
            flip: [1.0; 3],
            scale: 1.0,
            offset: [0.0; 3],
        };
        fn random(rng: &mut ChaCha8Rng) -> Self {
            let perms = [
                [0, 1, 2],
                [0, 2, 1],
                [1, 0, 2],
                [1, 2, 0],
                [2, 0, 1],
                [2, 1, 0],
            ];
            let perm = perms[rng.random_range(0..6)];
            let flip = [0; 3].map(|_| if rng.random::<bool>() { 1.0 } else { -1.0 });
            match rng.random_range(0..3) {
                0 => Self {
                    perm,
                    flip,
                    scale: 1.0,
                    offset: [0.0; 3],
                },
                // Huge coordinates: offset near 1e15, still integers exactly representable.
                1 => Self {
                    perm,
                    flip,
                    scale: (2.0f64).powi(rng.random_range(0..8)),
                    offset: [0; 3].map(|_| 1e15 + rng.random_range(-1000..1000) as f64),
                },
                // Tiny coordinates.
                _ => Self {
                    perm,
                    flip,
                    scale: (2.0f64).powi(-rng.random_range(30..60)),
                    offset: [0.0; 3],
                },
            }
        }
        fn apply(&self, p: I3) -> DVec3 {
            let v = [0, 1, 2]
                .map(|i| p[self.perm[i]] as f64 * self.flip[i] * self.scale + self.offset[i]);
            DVec3::from_array(v)
        }
    }

    fn rand_point(rng: &mut ChaCha8Rng, r: i128) -> I3 {
        [0; 3].map(|_| rng.random_range(-r..=r))
    }

    /// A random triangle pair from one of several adversarial families.
    fn random_pair(rng: &mut ChaCha8Rng, family: u32) -> ([I3; 3], [I3; 3]) {
        match family {
            // General small-lattice triangles: many touching and coplanar cases.
            0 => (
                [0; 3].map(|_| rand_point(rng, 2)),
                [0; 3].map(|_| rand_point(rng, 2)),
            ),
            // All six points in one lattice plane z = αx + βy + γ.
            1 => {
                let (al, be, ga) = (
                    rng.random_range(-1..=1),
                    rng.random_range(-1..=1),
                    rng.random_range(-2..=2),
                );
                let mut pt = || {
                    let (x, y) = (rng.random_range(-3..=3), rng.random_range(-3..=3));
                    [x, y, al * x + be * y + ga]
                };
                ([(); 3].map(|_| pt()), [(); 3].map(|_| pt()))
            }
            // Shared vertex or shared edge, or vertices one lattice step away from that.
            2 => {
                let a = [0; 3].map(|_| rand_point(rng, 3));
                let mut b = [0; 3].map(|_| rand_point(rng, 3));
                let near = |rng: &mut ChaCha8Rng, p: I3| {
                    let step = rand_point(rng, 1);
                    [p[0] + step[0], p[1] + step[1], p[2] + step[2]]
                };
                let i = rng.random_range(0..3);
                b[0] = near(rng, a[i]);
                if rng.random::<bool>() {
                    let j = rng.random_range(0..3);
                    b[1] = near(rng, a[j]);
                }
                (a, b)
            }
            // Degenerate triangles: collinear or repeated vertices, on one or both sides.
            _ => {
                let degenerate = |rng: &mut ChaCha8Rng| {
                    let p = rand_point(rng, 1);
                    let d = rand_point(rng, 1);
                    let m = rng.random_range(-1..=2);
                    let n = rng.random_range(-1..=2);
                    let q = [p[0] + m * d[0], p[1] + m * d[1], p[2] + m * d[2]];
                    let r = [p[0] + n * d[0], p[1] + n * d[1], p[2] + n * d[2]];
                    [p, q, r]
                };
                let a = degenerate(rng);
                let b = if rng.random::<bool>() {
                    degenerate(rng)
                } else {
                    [0; 3].map(|_| rand_point(rng, 2))
                };
                (a, b)
            }
        }
    }

    #[test]
    fn triangle_pairs_agree_with_integer_oracle() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut counts = [[0usize; 2]; 4];
        for family in 0..4 {
            for _ in 0..1500 {
                let (a, b) = random_pair(&mut rng, family);
                let expected = oracle(&a, &b);
                counts[family as usize][expected as usize] += 1;
                for map in [ExactMap::IDENTITY, ExactMap::random(&mut rng)] {
                    let (fa, fb) = (a.map(|p| map.apply(p)), b.map(|p| map.apply(p)));
                    assert_eq!(
                        triangles_intersect(fa, fb),
                        expected,
                        "family {family}: {a:?} vs {b:?} under scale {} offset {:?}",
                        map.scale,
                        map.offset
                    );
                    assert_eq!(triangles_intersect(fb, fa), expected, "swapped");
                    // Vertex order (winding) must not matter.
                    let ra = [fa[2], fa[1], fa[0]];
                    assert_eq!(triangles_intersect(ra, fb), expected, "reversed");
                }
            }
        }
        // Every family must produce both answers in quantity, or the test proves little.
        for (family, c) in counts.iter().enumerate() {
            assert!(c[0] > 100 && c[1] > 100, "family {family}: {c:?}");
        }
    }

    #[test]
    fn segments_and_points_agree_with_integer_oracle() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut hits = 0;
        for round in 0..3000 {
            let (t, other) = random_pair(&mut rng, round % 4);
            let (p, q) = (other[0], if round % 5 == 0 { other[0] } else { other[1] });
            let expected = oracle(&[p, q], &t);
            hits += expected as usize;
            let map = ExactMap::random(&mut rng);
            let (fp, fq, ft) = (map.apply(p), map.apply(q), t.map(|v| map.apply(v)));
            assert_eq!(
                segment_intersects_triangle(fp, fq, ft),
                expected,
                "{p:?}-{q:?} vs {t:?}"
            );
            assert_eq!(segment_intersects_triangle(fq, fp, ft), expected);
            let expected_ss = oracle(&[p, q], &t[..2]);
            assert_eq!(
                segments_intersect(fp, fq, ft[0], ft[1]),
                expected_ss,
                "{p:?}-{q:?} vs {:?}",
                &t[..2]
            );
            assert_eq!(point_in_triangle(fp, ft), oracle(&[p], &t));
        }
        assert!(hits > 500 && hits < 2500, "{hits}");
    }

    fn d(x: f64, y: f64, z: f64) -> DVec3 {
        DVec3::new(x, y, z)
    }

    #[test]
    fn hand_cases() {
        let base = [d(0.0, 0.0, 0.0), d(1.0, 0.0, 0.0), d(0.0, 1.0, 0.0)];
        // Touching at a vertex (vertex to vertex, from above).
        assert!(triangles_intersect(
            base,
            [d(1.0, 0.0, 0.0), d(2.0, 0.0, 1.0), d(2.0, 1.0, 1.0)]
        ));
        // Vertex on face interior.
        assert!(triangles_intersect(
            base,
            [d(0.25, 0.25, 0.0), d(0.0, 0.0, 1.0), d(1.0, 0.0, 1.0)]
        ));
        // Shared edge, folded.
        assert!(triangles_intersect(
            base,
            [d(0.0, 0.0, 0.0), d(1.0, 0.0, 0.0), d(0.0, -1.0, 1.0)]
        ));
        // Coplanar overlapping, disjoint, nested, edge-touching.
        assert!(triangles_intersect(
            base,
            [d(0.5, 0.5, 0.0), d(-0.5, 0.2, 0.0), d(0.2, -0.5, 0.0)]
        ));
        assert!(!triangles_intersect(
            base,
            [d(0.6, 0.6, 0.0), d(2.0, 0.6, 0.0), d(0.6, 2.0, 0.0)]
        ));
        assert!(triangles_intersect(
            base,
            [d(0.1, 0.1, 0.0), d(0.2, 0.1, 0.0), d(0.1, 0.2, 0.0)]
        ));
        assert!(triangles_intersect(
            [d(0.1, 0.1, 0.0), d(0.2, 0.1, 0.0), d(0.1, 0.2, 0.0)],
            base
        ));
        assert!(triangles_intersect(
            base,
            [d(0.5, 0.5, 0.0), d(2.0, 0.5, 0.0), d(0.5, 2.0, 0.0)]
        ));
        // Piercing without any vertex inside the other.
        assert!(triangles_intersect(
            [d(-1.0, -1.0, 0.0), d(3.0, -1.0, 0.0), d(-1.0, 3.0, 0.0)],
            [d(0.2, 0.2, -1.0), d(0.3, 0.2, 1.0), d(0.2, 0.3, 1.0)]
        ));
        // Parallel planes.
        assert!(!triangles_intersect(
            base,
            base.map(|v| v + DVec3::Z * f64::EPSILON)
        ));
    }

    #[test]
    fn one_ulp_near_misses() {
        // Triangle in the plane z = 1; a vertical triangle whose lowest vertex touches it at the
        // hypotenuse x + y = 1 (exact: 0.5 + 0.5), then moves one ulp off in each direction.
        let a = [d(0.0, 0.0, 1.0), d(1.0, 0.0, 1.0), d(0.0, 1.0, 1.0)];
        let b = |p: DVec3| [p, p + d(0.0, 0.0, 1.0), p + d(0.5, 0.0, 1.0)];
        assert!(triangles_intersect(a, b(d(0.5, 0.5, 1.0))));
        assert!(!triangles_intersect(a, b(d(0.5f64.next_up(), 0.5, 1.0))));
        assert!(triangles_intersect(a, b(d(0.5f64.next_down(), 0.5, 1.0))));
        assert!(!triangles_intersect(a, b(d(0.5, 0.5, 1.0f64.next_up()))));
        // Dipping one ulp below the plane on the hypotenuse still touches; outside it does not.
        assert!(triangles_intersect(a, b(d(0.5, 0.5, 1.0f64.next_down()))));
        assert!(!triangles_intersect(
            a,
            b(d(0.5f64.next_up(), 0.5, 1.0f64.next_down()))
        ));
        // Segment grazing a vertex, and missing it by an ulp.
        let (p, q) = (d(1.0, -1.0, 1.0), d(1.0, 1.0, 1.0));
        assert!(segment_intersects_triangle(p, q, a));
        let (p2, q2) = (
            d(1.0f64.next_up(), -1.0, 1.0),
            d(1.0f64.next_up(), 1.0, 1.0),
        );
        assert!(!segment_intersects_triangle(p2, q2, a));
        // The same with an offset of 1e15: the ulp there is 0.125.
        let o = DVec3::splat(1e15);
        let ao = a.map(|v| v * 8.0 + o);
        let bo = |p: DVec3| b(p).map(|v| v * 8.0 + o);
        assert!(triangles_intersect(ao, bo(d(0.5, 0.5, 1.0))));
        let up = (1e15 + 4.0f64).next_up();
        let hit = bo(d(0.5, 0.5, 1.0));
        let moved = [d(up, hit[0].y, hit[0].z), hit[1], hit[2]];
        assert!(!triangles_intersect(ao, moved));
    }

    #[test]
    fn huge_scaled_coordinates() {
        let s = 1e15;
        let o = d(1e15, -3e15, 2e15);
        let a = [d(0.0, 0.0, 0.0), d(1.0, 0.0, 0.0), d(0.0, 1.0, 0.0)].map(|v| v * s + o);
        let piercing = [d(0.2, 0.2, -1.0), d(0.3, 0.2, 1.0), d(0.2, 0.3, 1.0)].map(|v| v * s + o);
        let above = [d(0.2, 0.2, 0.5), d(0.3, 0.2, 1.0), d(0.2, 0.3, 1.0)].map(|v| v * s + o);
        assert!(triangles_intersect(a, piercing));
        assert!(!triangles_intersect(a, above));
    }

    #[test]
    fn degenerate_triangles() {
        let base = [d(0.0, 0.0, 0.0), d(1.0, 0.0, 0.0), d(0.0, 1.0, 0.0)];
        let seg_through = [d(0.2, 0.2, -1.0), d(0.2, 0.2, 1.0), d(0.2, 0.2, 0.0)];
        let seg_miss = [d(2.0, 2.0, -1.0), d(2.0, 2.0, 1.0), d(2.0, 2.0, 1.0)];
        let point_on = [d(0.5, 0.5, 0.0); 3];
        let point_off = [d(0.5, 0.5, 1e-9); 3];
        assert!(is_degenerate(seg_through) && is_degenerate(point_on));
        assert!(triangles_intersect(base, seg_through));
        assert!(!triangles_intersect(base, seg_miss));
        assert!(triangles_intersect(point_on, base));
        assert!(!triangles_intersect(point_off, base));
        assert!(triangles_intersect(point_on, point_on));
        assert!(!triangles_intersect(point_on, point_off));
        // Two collinear segments overlapping, and touching end to end, and disjoint.
        let s1 = [d(0.0, 0.0, 0.0), d(2.0, 2.0, 2.0), d(1.0, 1.0, 1.0)];
        let s2 = [d(2.0, 2.0, 2.0), d(3.0, 3.0, 3.0), d(3.0, 3.0, 3.0)];
        let s3 = [d(2.5, 2.5, 2.5), d(3.0, 3.0, 3.0), d(2.75, 2.75, 2.75)];
        assert!(triangles_intersect(s1, s2));
        assert!(!triangles_intersect(s1, s3));
        assert!(triangles_intersect(s2, s3));
    }
}

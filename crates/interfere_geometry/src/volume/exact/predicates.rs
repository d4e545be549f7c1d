//! Exact orientation predicates between the two surfaces with a symbolic perturbation
//! (simulation of simplicity, Edelsbrunner–Mücke 1990): B is taken as translated by
//! `t = (ε, ε², ε³)`, `ε → 0⁺`, relative to A.
//!
//! Every predicate mixing a point, edge or triangle of A with one of B is a determinant that is
//! affine in `t`; its sign for small `ε` is the sign of the first non-zero term of the expansion
//! `D + c₁ ε + c₂ ε² + c₃ ε³`, where `D` is the unperturbed determinant (Shewchuk's exact
//! `orient3d`) and the `cᵢ` are exact too:
//!
//! * a point `b` of B against triangle `(a₀, a₁, a₂)` of A: `det[a₁−a₀, a₂−a₀, b+t−a₀] =
//!   D + t·n_A`, `n_A = (a₁−a₀)×(a₂−a₀)`, whose components are exact 2D orientations of the
//!   triangle projected along each axis ([`side_of_b_point`]);
//! * a point `a` of A against triangle `(b₀, b₁, b₂)` of B: `D − t·n_B` ([`side_of_a_point`]);
//! * an edge `(p, q)` of A against an edge `(r, s)` of B: `det[q−p, r+t−p, s+t−p] =
//!   D + t·((s−r)×(q−p))`, the cross product's components evaluated exactly with expansion
//!   arithmetic (`two_diff`, `two_product` by fused multiply-add, expansion sums) in
//!   [`edge_edge`].
//!
//! The perturbed configuration is generic: no vertex of one surface lies on a face plane of the
//! other, no edge meets an edge, unless the determinant vanishes identically — a zero-area
//! triangle (`n = 0`), or two parallel edges in one plane. A zero sign therefore means "no
//! crossing" and is only ever produced for such input ([`segment_crosses`] never needs the sign
//! of two parallel edges: an edge parallel to an edge of a triangle is parallel to its plane,
//! and both its ends get the same side).
//!
//! All signs are exact functions of the `f64` coordinates, so a shared edge seen from its two
//! triangles, or a predicate evaluated with its arguments in another (even or odd) order, gives
//! consistent answers without any caching.

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

/// Exact sign of `det[b−a, c−a, d−a] = ((b−a)×(c−a))·(d−a)`: `+1` when `d` lies on the side of
/// the plane `abc` that the normal `(b−a)×(c−a)` points to. (Shewchuk's `orient3d` has the
/// opposite sign.)
#[inline]
pub fn plane_side(a: DVec3, b: DVec3, c: DVec3, d: DVec3) -> i8 {
    -sign(orient3d(c3(a), c3(b), c3(c), c3(d)))
}

/// Drops axis `k`, keeping the other two in cyclic order: the 2D orientation of a projected
/// triangle is then the `k` component of its 3D normal.
#[inline]
fn proj(p: DVec3, k: usize) -> Coord<f64> {
    match k {
        0 => Coord { x: p.y, y: p.z },
        1 => Coord { x: p.z, y: p.x },
        _ => Coord { x: p.x, y: p.y },
    }
}

/// Exact signs of the three components of the normal `(b−a)×(c−a)`.
#[inline]
pub fn normal_signs(a: DVec3, b: DVec3, c: DVec3) -> [i8; 3] {
    [0, 1, 2].map(|k| sign(orient2d(proj(a, k), proj(b, k), proj(c, k))))
}

/// The first non-zero of `signs`, or 0.
#[inline]
fn first_nonzero(signs: [i8; 3]) -> i8 {
    if signs[0] != 0 {
        signs[0]
    } else if signs[1] != 0 {
        signs[1]
    } else {
        signs[2]
    }
}

/// [`side_of_b_point`] with the perturbation `dir · t` (`dir = ±1`); sets `symbolic` when the
/// unperturbed determinant vanished and the perturbation decided.
#[inline]
pub fn side_of_b_point_dir(
    a0: DVec3,
    a1: DVec3,
    a2: DVec3,
    b: DVec3,
    dir: i8,
    symbolic: &mut bool,
) -> i8 {
    match plane_side(a0, a1, a2, b) {
        0 => {
            *symbolic = true;
            dir * first_nonzero(normal_signs(a0, a1, a2))
        }
        s => s,
    }
}

/// [`side_of_a_point`] with the perturbation `dir · t`; sets `symbolic` as above.
#[inline]
pub fn side_of_a_point_dir(
    b0: DVec3,
    b1: DVec3,
    b2: DVec3,
    a: DVec3,
    dir: i8,
    symbolic: &mut bool,
) -> i8 {
    match plane_side(b0, b1, b2, a) {
        0 => {
            *symbolic = true;
            -dir * first_nonzero(normal_signs(b0, b1, b2))
        }
        s => s,
    }
}

/// [`edge_edge`] with the perturbation `dir · t`; sets `symbolic` as above.
#[inline]
pub fn edge_edge_dir(p: DVec3, q: DVec3, r: DVec3, s: DVec3, dir: i8, symbolic: &mut bool) -> i8 {
    match plane_side(p, q, r, s) {
        0 => {
            *symbolic = true;
            dir * first_nonzero(cross_of_differences_signs(s, r, q, p))
        }
        d => d,
    }
}

/// Side of the perturbed point `b + t` of B against the plane of triangle `(a0, a1, a2)` of A:
/// `+1` on the side its normal points to (outside, for an outward triangle), `-1` on the other,
/// `0` only when the triangle has zero area.
#[inline]
pub fn side_of_b_point(a0: DVec3, a1: DVec3, a2: DVec3, b: DVec3) -> i8 {
    match plane_side(a0, a1, a2, b) {
        0 => first_nonzero(normal_signs(a0, a1, a2)),
        s => s,
    }
}

/// Side of the point `a` of A against the plane of the perturbed triangle `(b0, b1, b2) + t` of
/// B: `+1` on the side its normal points to, `-1` on the other, `0` only for a zero-area
/// triangle.
#[inline]
pub fn side_of_a_point(b0: DVec3, b1: DVec3, b2: DVec3, a: DVec3) -> i8 {
    match plane_side(b0, b1, b2, a) {
        0 => -first_nonzero(normal_signs(b0, b1, b2)),
        s => s,
    }
}

/// Sign of `det[q−p, r+t−p, s+t−p]` for the edge `(p, q)` of A and the perturbed edge
/// `(r, s) + t` of B: the side on which the directed line `rs` passes the directed line `pq`.
/// `0` only when the two edges are parallel and coplanar (or one has zero length).
#[inline]
pub fn edge_edge(p: DVec3, q: DVec3, r: DVec3, s: DVec3) -> i8 {
    match plane_side(p, q, r, s) {
        0 => first_nonzero(cross_of_differences_signs(s, r, q, p)),
        d => d,
    }
}

/// Exact signs of the components of `(a−b)×(c−d)`.
pub fn cross_of_differences_signs(a: DVec3, b: DVec3, c: DVec3, d: DVec3) -> [i8; 3] {
    [0, 1, 2].map(|k| {
        let (i, j) = ((k + 1) % 3, (k + 2) % 3);
        // (a−b)_i (c−d)_j − (a−b)_j (c−d)_i
        diff_products_sign((a[i], b[i]), (c[j], d[j]), (a[j], b[j]), (c[i], d[i]))
    })
}

/// `a + b` as `(sum, error)` with `sum + error = a + b` exactly (Knuth's two-sum).
#[inline]
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let x = a + b;
    let bv = x - a;
    let av = x - bv;
    (x, (a - av) + (b - bv))
}

/// `a − b` as `(difference, error)`, exactly.
#[inline]
fn two_diff(a: f64, b: f64) -> (f64, f64) {
    two_sum(a, -b)
}

/// `a · b` as `(product, error)`, exactly (fused multiply-add).
#[inline]
fn two_product(a: f64, b: f64) -> (f64, f64) {
    let x = a * b;
    (x, a.mul_add(b, -x))
}

/// Adds `b` to the expansion `e` (non-overlapping components, increasing magnitude, no zeros),
/// keeping those properties (Shewchuk's `grow_expansion_zeroelim`).
fn grow(e: &mut Vec<f64>, b: f64) {
    let mut q = b;
    let mut k = 0;
    for i in 0..e.len() {
        let (s, h) = two_sum(q, e[i]);
        q = s;
        if h != 0.0 {
            e[k] = h;
            k += 1;
        }
    }
    e.truncate(k);
    if q != 0.0 {
        e.push(q);
    }
}

/// Exact sign of `(a.0 − a.1)(b.0 − b.1) − (c.0 − c.1)(d.0 − d.1)`.
pub fn diff_products_sign(a: (f64, f64), b: (f64, f64), c: (f64, f64), d: (f64, f64)) -> i8 {
    let [a, b, c, d] = [a, b, c, d].map(|(x, y)| two_diff(x, y));
    let mut e: Vec<f64> = Vec::with_capacity(16);
    for (x, y, negate) in [(a, b, false), (c, d, true)] {
        for u in [x.0, x.1] {
            for v in [y.0, y.1] {
                let (p, err) = two_product(u, v);
                let s = if negate { -1.0 } else { 1.0 };
                grow(&mut e, s * p);
                grow(&mut e, s * err);
            }
        }
    }
    e.last().map_or(0, |&v| sign(v))
}

/// Whether the segment `(p, q)` crosses the triangle `tri` in the perturbed configuration, given
/// the sides `sp`, `sq` of `p` and `q` against the triangle's plane and the signs
/// `ee[k]` = [`edge_edge`]-type orientation of `pq` against the triangle's edge `k → k+1` (all
/// computed with the same roles of A and B). Exactly the generic test: ends strictly on opposite
/// sides and the line passing all three edges the same way.
#[inline]
pub fn segment_crosses(sp: i8, sq: i8, ee: [i8; 3]) -> bool {
    sp * sq < 0 && ee[0] != 0 && ee[0] == ee[1] && ee[1] == ee[2]
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Polynomials in ε with integer coefficients (degree < 10), for the brute-force oracle.
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Poly([i128; 10]);

    impl Poly {
        fn constant(c: i128) -> Self {
            let mut p = [0; 10];
            p[0] = c;
            Self(p)
        }
        fn add(self, o: Self) -> Self {
            Self(std::array::from_fn(|i| self.0[i] + o.0[i]))
        }
        fn sub(self, o: Self) -> Self {
            Self(std::array::from_fn(|i| self.0[i] - o.0[i]))
        }
        fn mul(self, o: Self) -> Self {
            let mut r = [0i128; 10];
            for i in 0..10 {
                for j in 0..10 - i {
                    r[i + j] += self.0[i] * o.0[j];
                }
            }
            Self(r)
        }
        /// Sign as ε → 0⁺: the lowest non-zero coefficient.
        fn sign(self) -> i8 {
            self.0
                .iter()
                .find(|&&c| c != 0)
                .map_or(0, |&c| c.signum() as i8)
        }
    }

    type P3 = [Poly; 3];

    fn point(p: [i64; 3], perturbed: bool) -> P3 {
        std::array::from_fn(|k| {
            let mut q = Poly::constant(i128::from(p[k]));
            if perturbed {
                q.0[k + 1] += 1; // t = (ε, ε², ε³)
            }
            q
        })
    }

    fn det(u: P3, v: P3, w: P3) -> Poly {
        let cross = [
            v[1].mul(w[2]).sub(v[2].mul(w[1])),
            v[2].mul(w[0]).sub(v[0].mul(w[2])),
            v[0].mul(w[1]).sub(v[1].mul(w[0])),
        ];
        u[0].mul(cross[0])
            .add(u[1].mul(cross[1]))
            .add(u[2].mul(cross[2]))
    }

    fn sub(a: P3, b: P3) -> P3 {
        std::array::from_fn(|k| a[k].sub(b[k]))
    }

    fn f(p: [i64; 3]) -> DVec3 {
        DVec3::new(p[0] as f64, p[1] as f64, p[2] as f64)
    }

    /// A random lattice point; small ranges give many coincidences and coplanarities.
    fn lattice(rng: &mut ChaCha8Rng, r: i64) -> [i64; 3] {
        [0; 3].map(|_| rng.random_range(-r..=r))
    }

    /// Points from one of several families: tiny lattice (degenerate), a lattice plane, a
    /// lattice line, and large random integers (up to 2^20).
    fn points(rng: &mut ChaCha8Rng, family: u32, n: usize) -> Vec<[i64; 3]> {
        match family {
            0 => (0..n).map(|_| lattice(rng, 1)).collect(),
            1 => {
                let (a, b) = (rng.random_range(-1..=1), rng.random_range(-1..=1));
                (0..n)
                    .map(|_| {
                        let (x, y) = (rng.random_range(-2..=2), rng.random_range(-2..=2));
                        [x, y, a * x + b * y]
                    })
                    .collect()
            }
            2 => {
                let d = lattice(rng, 1);
                (0..n)
                    .map(|_| {
                        let m = rng.random_range(-2..=2);
                        let o = if rng.random_bool(0.7) {
                            [0; 3]
                        } else {
                            lattice(rng, 1)
                        };
                        [o[0] + m * d[0], o[1] + m * d[1], o[2] + m * d[2]]
                    })
                    .collect()
            }
            _ => (0..n).map(|_| lattice(rng, 1 << 20)).collect(),
        }
    }

    #[test]
    fn side_predicates_match_the_perturbed_determinant() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut seen = [[0usize; 3]; 2];
        for round in 0..20000 {
            let pts = points(&mut rng, round % 4, 4);
            let (a0, a1, a2, x) = (pts[0], pts[1], pts[2], pts[3]);
            // A triangle, B point.
            let oracle = det(
                sub(point(a1, false), point(a0, false)),
                sub(point(a2, false), point(a0, false)),
                sub(point(x, true), point(a0, false)),
            )
            .sign();
            let got = side_of_b_point(f(a0), f(a1), f(a2), f(x));
            assert_eq!(got, oracle, "{pts:?}");
            seen[0][(oracle + 1) as usize] += 1;
            // B triangle, A point.
            let oracle = det(
                sub(point(a1, true), point(a0, true)),
                sub(point(a2, true), point(a0, true)),
                sub(point(x, false), point(a0, true)),
            )
            .sign();
            let got = side_of_a_point(f(a0), f(a1), f(a2), f(x));
            assert_eq!(got, oracle, "{pts:?}");
            seen[1][(oracle + 1) as usize] += 1;
        }
        // Both signs often, zero (zero-area triangles) sometimes.
        for s in seen {
            assert!(s[0] > 3000 && s[2] > 3000 && s[1] > 100, "{s:?}");
        }
    }

    #[test]
    fn edge_edge_matches_the_perturbed_determinant() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let mut zeros = 0;
        let mut degenerate_d = 0;
        for round in 0..20000 {
            let pts = points(&mut rng, round % 4, 4);
            let (p, q, r, s) = (pts[0], pts[1], pts[2], pts[3]);
            let oracle = det(
                sub(point(q, false), point(p, false)),
                sub(point(r, true), point(p, false)),
                sub(point(s, true), point(p, false)),
            )
            .sign();
            let got = edge_edge(f(p), f(q), f(r), f(s));
            assert_eq!(got, oracle, "{pts:?}");
            zeros += usize::from(oracle == 0);
            degenerate_d += usize::from(plane_side(f(p), f(q), f(r), f(s)) == 0);
            // Antisymmetry under swapping either edge's ends.
            assert_eq!(edge_edge(f(q), f(p), f(r), f(s)), -got);
            assert_eq!(edge_edge(f(p), f(q), f(s), f(r)), -got);
            if oracle == 0 {
                // Only parallel (or zero-length) edges in one plane.
                let u = f(q) - f(p);
                let v = f(s) - f(r);
                assert_eq!(u.cross(v), DVec3::ZERO, "{pts:?}");
            }
        }
        assert!(degenerate_d > 5000, "{degenerate_d}");
        assert!(zeros > 50, "{zeros}");
    }

    #[test]
    fn diff_products_sign_is_exact() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        // Values k · 2^e for integers k (|k| < 2^26) and a shared exponent e: exact in f64, and
        // (x − y)(z − w) fits an i128 after scaling by 2^-e.
        let mut signs = [0usize; 3];
        for round in 0..50000 {
            let e = rng.random_range(-60..60);
            let scale = 2f64.powi(e);
            let range = if round % 3 == 0 { 3 } else { 1 << 26 };
            let mut v = [0i64; 8];
            for x in v.iter_mut() {
                *x = rng.random_range(-range..=range);
            }
            if round % 5 == 0 {
                // Force (a−b)(c−d) = (e−f)(g−h) by copying.
                v[4] = v[0];
                v[5] = v[1];
                v[6] = v[2];
                v[7] = v[3];
                if round % 10 == 0 {
                    v.swap(4, 6);
                    v.swap(5, 7);
                }
            }
            let exact = i128::from(v[0] - v[1]) * i128::from(v[2] - v[3])
                - i128::from(v[4] - v[5]) * i128::from(v[6] - v[7]);
            let d = |i: usize| v[i] as f64 * scale;
            let got = diff_products_sign((d(0), d(1)), (d(2), d(3)), (d(4), d(5)), (d(6), d(7)));
            assert_eq!(got, exact.signum() as i8, "{v:?} at 2^{e}");
            signs[(exact.signum() + 1) as usize] += 1;
        }
        assert!(signs.iter().all(|&n| n > 5000), "{signs:?}");
        // Adversarial: differences that round in f64 and products far apart in magnitude.
        let big = 2f64.powi(53);
        // (2^53 + 1) − (2^53 + 3): neither difference is a double.
        assert_eq!(
            diff_products_sign((big + 2.0, 1.0), (1.0, 0.0), (big, -3.0), (1.0, 0.0)),
            -1
        );
        assert_eq!(
            diff_products_sign((big + 2.0, 1.0), (1.0, 0.0), (big, -1.0), (1.0, 0.0)),
            0
        );
        // Far-apart magnitudes: 2^600 · 2^-600 − 1 = 0, and one ulp more.
        let (h, l) = (2f64.powi(600), 2f64.powi(-600));
        assert_eq!(
            diff_products_sign((h, 0.0), (l, 0.0), (1.0, 0.0), (1.0, 0.0)),
            0
        );
        assert_eq!(
            diff_products_sign((h, 0.0), (l.next_up(), 0.0), (1.0, 0.0), (1.0, 0.0)),
            1
        );
        assert_eq!(
            diff_products_sign((0.1, 0.3), (0.7, 0.2), (0.7, 0.2), (0.1, 0.3)),
            0
        );
    }

    #[test]
    fn normal_signs_are_the_cross_product_signs() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        for round in 0..5000 {
            let pts = points(&mut rng, round % 4, 3);
            let n = (f(pts[1]) - f(pts[0])).cross(f(pts[2]) - f(pts[0]));
            let expected = [n.x, n.y, n.z].map(sign);
            assert_eq!(normal_signs(f(pts[0]), f(pts[1]), f(pts[2])), expected);
        }
    }
}

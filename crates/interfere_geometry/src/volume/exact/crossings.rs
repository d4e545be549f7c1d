//! The crossings of one triangle pair in the perturbed configuration (see
//! [`super::predicates`]): which edges of either triangle pass through the other, where, in
//! which direction, and the oriented intersection segment they bound.
//!
//! In the perturbed configuration two triangles meet transversally or not at all, and their
//! intersection is a segment whose two ends are edge–triangle crossings: of the six tests
//! (three edges of each against the other triangle) exactly 0 or 2 succeed. The segment is
//! oriented along `n_A × n_B`, which keeps B's inside on its left in A's triangle (and A's
//! inside on its right in B's triangle). Which end is the start follows from the crossing
//! directions alone, with no arithmetic on coordinates:
//!
//! * an edge `e = v₀ → v₁` of A's triangle (in its winding) crossing B's triangle: the segment
//!   runs into A's triangle along `n_A × e` (its inward side), and
//!   `(n_A × n_B)·(n_A × e) = |n_A|² (n_B·e)`, so the crossing is the start iff `n_B·e > 0`,
//!   i.e. the edge leaves B there;
//! * an edge `f = w₀ → w₁` of B's triangle crossing A's: `(n_A × n_B)·(n_B × f) =
//!   −|n_B|² (n_A·f)`, so the crossing is the start iff `n_A·f < 0`, i.e. `f` goes from the
//!   outer to the inner side of A's triangle.
//!
//! The crossing points are computed in `f64` (line–plane intersection, parameter clamped to the
//! edge), each from the edge's vertices in a fixed order (smaller vertex index first) and the
//! crossed triangle, so the two triangles sharing an edge get the very same point.

use super::predicates::{edge_edge_dir, segment_crosses, side_of_a_point_dir, side_of_b_point_dir};
use glam::DVec3;

/// One end of an intersection segment: an edge of one triangle crossing the other triangle.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Crossing {
    /// The crossing point, in A's frame.
    pub(crate) point: DVec3,
    /// Whether the edge belongs to A's triangle (else to B's).
    pub(crate) on_a: bool,
    /// The edge `k → k+1` of its triangle.
    pub(crate) edge: u8,
    /// Whether the edge, walked from its smaller vertex index to its larger, goes into the
    /// other solid here.
    pub(crate) entering: bool,
}

/// A crossing triangle pair and its oriented intersection segment.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct PairHit {
    pub(crate) ta: u32,
    pub(crate) tb: u32,
    pub(crate) start: Crossing,
    pub(crate) end: Crossing,
}

/// The pair's crossings were not 0 or 2 with one start and one end: only possible when the
/// exact predicates disagree with each other, i.e. never for finite input; reported, not
/// trusted.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Inconsistent {
    pub(crate) ta: u32,
    pub(crate) tb: u32,
    pub(crate) crossings: usize,
}

/// The point where the segment `pq` meets the plane through `o` with normal `n` (`f64`; the
/// parameter clamped to the segment).
#[inline]
fn plane_point(p: DVec3, q: DVec3, o: DVec3, n: DVec3) -> DVec3 {
    let dp = n.dot(p - o);
    let dq = n.dot(q - o);
    let mut lambda = dp / (dp - dq);
    if !lambda.is_finite() {
        lambda = 0.5;
    }
    let lambda = lambda.clamp(0.0, 1.0);
    p + (q - p) * lambda
}

/// A triangle's plane for the floating-point filter of the side tests: a corner, the normal
/// `(p₁−p₀)×(p₂−p₀)` in `f64`, and the sums of the absolute products of each component (the
/// permanent's factors).
struct Plane {
    o: DVec3,
    n: DVec3,
    abs: DVec3,
}

impl Plane {
    #[inline]
    fn new(t: &[DVec3; 3]) -> Self {
        let (u, v) = (t[1] - t[0], t[2] - t[0]);
        Self {
            o: t[0],
            n: u.cross(v),
            abs: DVec3::new(
                (u.y * v.z).abs() + (u.z * v.y).abs(),
                (u.z * v.x).abs() + (u.x * v.z).abs(),
                (u.x * v.y).abs() + (u.y * v.x).abs(),
            ),
        }
    }

    /// The sign of `det[p₁−p₀, p₂−p₀, q−p₀]` when the `f64` evaluation certifies it (error at
    /// most `(7 + 56ε)ε` times the permanent, Shewchuk's bound for this expansion by minors; we
    /// use the larger `1e-15`), else `0` (decide exactly).
    #[inline]
    fn side(&self, q: DVec3) -> i8 {
        let w = q - self.o;
        let det = self.n.dot(w);
        let bound = 1e-15 * self.abs.dot(w.abs());
        if det > bound {
            1
        } else if -det > bound {
            -1
        } else {
            0
        }
    }
}

/// The crossings of triangle `ta` of A (vertex indices `ia`, corners `pa`, in A's frame) and
/// triangle `tb` of B (`ib`, `pb`, B already placed in A's frame). `Ok(None)` when they do not
/// cross. B is perturbed by `dir · t` (`dir = ±1`); `symbolic` is set when a perturbation term
/// decided a sign.
#[inline]
pub(crate) fn pair_hit(
    (ta, ia, pa): (u32, [u32; 3], [DVec3; 3]),
    (tb, ib, pb): (u32, [u32; 3], [DVec3; 3]),
    dir: i8,
    symbolic: &mut bool,
) -> Result<Option<PairHit>, Inconsistent> {
    let plane_a = Plane::new(&pa);
    let sb = pb.map(|b| match plane_a.side(b) {
        0 => side_of_b_point_dir(pa[0], pa[1], pa[2], b, dir, symbolic),
        s => s,
    });
    if !(sb.contains(&1) && sb.contains(&-1)) {
        return Ok(None);
    }
    let plane_b = Plane::new(&pb);
    let sa = pa.map(|a| match plane_b.side(a) {
        0 => side_of_a_point_dir(pb[0], pb[1], pb[2], a, dir, symbolic),
        s => s,
    });
    if !(sa.contains(&1) && sa.contains(&-1)) {
        return Ok(None);
    }
    // ee[i][j]: edge i of A against edge j of B, computed on demand (2 = not yet).
    let mut ee = [[2i8; 3]; 3];
    let mut sign = |i: usize, j: usize| {
        if ee[i][j] == 2 {
            ee[i][j] = edge_edge_dir(
                pa[i],
                pa[(i + 1) % 3],
                pb[j],
                pb[(j + 1) % 3],
                dir,
                symbolic,
            );
        }
        ee[i][j]
    };
    // (crossing, is_start)
    let mut found: [(Crossing, bool); 6] = [(
        Crossing {
            point: DVec3::ZERO,
            on_a: true,
            edge: 0,
            entering: false,
        },
        false,
    ); 6];
    let mut count = 0;
    for i in 0..3 {
        let j = (i + 1) % 3;
        if sa[i] * sa[j] >= 0 {
            continue;
        }
        let e0 = sign(i, 0);
        if e0 == 0 || sign(i, 1) != e0 || sign(i, 2) != e0 {
            continue;
        }
        debug_assert!(segment_crosses(sa[i], sa[j], [e0; 3]));
        let n = plane_b.n;
        // Walked in A's winding, the edge enters B iff it goes from the + to the − side.
        let entering_winding = sa[i] > 0;
        let forward = ia[i] < ia[j];
        let point = if forward {
            plane_point(pa[i], pa[j], pb[0], n)
        } else {
            plane_point(pa[j], pa[i], pb[0], n)
        };
        found[count] = (
            Crossing {
                point,
                on_a: true,
                edge: i as u8,
                entering: entering_winding == forward,
            },
            !entering_winding,
        );
        count += 1;
    }
    for i in 0..3 {
        let j = (i + 1) % 3;
        if sb[i] * sb[j] >= 0 {
            continue;
        }
        let e0 = sign(0, i);
        if e0 == 0 || sign(1, i) != e0 || sign(2, i) != e0 {
            continue;
        }
        let n = plane_a.n;
        let entering_winding = sb[i] > 0;
        let forward = ib[i] < ib[j];
        let point = if forward {
            plane_point(pb[i], pb[j], pa[0], n)
        } else {
            plane_point(pb[j], pb[i], pa[0], n)
        };
        found[count] = (
            Crossing {
                point,
                on_a: false,
                edge: i as u8,
                entering: entering_winding == forward,
            },
            entering_winding,
        );
        count += 1;
    }
    match count {
        0 => Ok(None),
        2 if found[0].1 != found[1].1 => {
            let (start, end) = if found[0].1 {
                (found[0].0, found[1].0)
            } else {
                (found[1].0, found[0].0)
            };
            Ok(Some(PairHit { ta, tb, start, end }))
        }
        _ => Err(Inconsistent {
            ta,
            tb,
            crossings: count,
        }),
    }
}

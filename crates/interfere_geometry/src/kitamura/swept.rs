//! Step 4 of Kitamura et al. 1995 (`kitamura-1995-parallel-colliding-faces.md`, §3.5): the face
//! pair collision check on swept volumes.
//!
//! Each moving triangle is replaced by the convex hull of its six vertices (three at `t_i`,
//! three at `t_{i+1}`), and two faces are reported as possibly colliding when those hulls
//! intersect. When every vertex moves on the straight segment between its two positions, the
//! triangle at any intermediate time lies inside that hull, so a real contact in the interval is
//! never missed (for rigid rotations the vertex paths are arcs; the paper's hull is then the
//! usual approximation, exact at both instants).
//!
//! The hull test is a separating-axis test, done without building hulls: the candidate axes are
//! the normals of all 20 point triples of each six-point set (a superset of the hull face
//! normals), all 15 × 15 cross products of point-pair directions (a superset of hull edge-edge
//! cross products) and, for a flat set, its in-plane edge normals (needed when both hulls lie in
//! one plane). Every projection is compared with a forward error bound, and an axis only counts
//! as separating when the gap exceeds twice that bound: near-touching is reported as colliding,
//! so the test is conservative; NaN or infinite input is reported as colliding too.

use glam::DVec3;

/// The six vertices of a moving triangle: `[a0, a1, a2]` at `t_i`, then `[a0', a1', a2']` at
/// `t_{i+1}`.
pub type SweptFace = [DVec3; 6];

/// The 20 index triples of six points.
pub(super) const TRIPLES: [[usize; 3]; 20] = {
    let mut out = [[0usize; 3]; 20];
    let mut n = 0;
    let mut i = 0;
    while i < 6 {
        let mut j = i + 1;
        while j < 6 {
            let mut k = j + 1;
            while k < 6 {
                out[n] = [i, j, k];
                n += 1;
                k += 1;
            }
            j += 1;
        }
        i += 1;
    }
    out
};

/// The 15 index pairs of six points.
const PAIRS: [[usize; 2]; 15] = {
    let mut out = [[0usize; 2]; 15];
    let mut n = 0;
    let mut i = 0;
    while i < 6 {
        let mut j = i + 1;
        while j < 6 {
            out[n] = [i, j];
            n += 1;
            j += 1;
        }
        i += 1;
    }
    out
};

/// Points translated to a common origin, with the bound used for rounding errors.
struct Frame {
    a: [DVec3; 6],
    b: [DVec3; 6],
    /// Largest absolute translated coordinate.
    scale: f64,
}

impl Frame {
    fn new(a: &SweptFace, b: &SweptFace) -> Self {
        let o = a[0];
        let a = a.map(|p| p - o);
        let b = b.map(|p| p - o);
        let scale = a
            .iter()
            .chain(b.iter())
            .map(|p| p.abs().max_element())
            .fold(0.0, f64::max);
        Self { a, b, scale }
    }

    /// Error bound of one computed projection `n · p` (rounding of the translation and of the
    /// dot product), generously rounded up.
    #[inline]
    fn slack(&self, n: DVec3) -> f64 {
        8.0 * f64::EPSILON * (n.x.abs() + n.y.abs() + n.z.abs()) * self.scale
            + 8.0 * f64::MIN_POSITIVE
    }

    /// Whether `n` provably separates the two point sets.
    #[inline]
    fn separates(&self, n: DVec3) -> bool {
        let (mut lo_a, mut hi_a) = (f64::INFINITY, f64::NEG_INFINITY);
        for p in &self.a {
            let d = n.dot(*p);
            lo_a = lo_a.min(d);
            hi_a = hi_a.max(d);
        }
        let (mut lo_b, mut hi_b) = (f64::INFINITY, f64::NEG_INFINITY);
        for p in &self.b {
            let d = n.dot(*p);
            lo_b = lo_b.min(d);
            hi_b = hi_b.max(d);
        }
        let gap = 2.0 * self.slack(n);
        // NaN makes both comparisons false: not separated (conservative).
        hi_a + gap < lo_b || hi_b + gap < lo_a
    }

    /// Whether all of `pts` lie within the error bound of one plane with normal `n` (`n ≠ 0`).
    fn is_flat(&self, pts: &[DVec3; 6], n: DVec3) -> bool {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for p in pts {
            let d = n.dot(*p);
            lo = lo.min(d);
            hi = hi.max(d);
        }
        hi - lo <= 2.0 * self.slack(n)
    }
}

fn triple_normals(p: &[DVec3; 6]) -> [DVec3; 20] {
    TRIPLES.map(|[i, j, k]| (p[j] - p[i]).cross(p[k] - p[i]))
}

fn pair_directions(p: &[DVec3; 6]) -> [DVec3; 15] {
    PAIRS.map(|[i, j]| p[j] - p[i])
}

/// Whether the convex hulls of the two six-point sets intersect, conservatively: `false` only
/// when a separating plane is proven despite rounding, so touching and near-touching hulls (and
/// non-finite input) give `true`. This is the paper's step-4 test on the swept volumes of two
/// moving triangles.
pub fn swept_faces_intersect(a: &SweptFace, b: &SweptFace) -> bool {
    if !a.iter().chain(b.iter()).all(|p| p.is_finite()) {
        return true;
    }
    let f = Frame::new(a, b);
    if !f.scale.is_finite() {
        return true;
    }
    // A cheap first guess that separates most distant pairs: the centroid direction.
    let ca = f.a.iter().copied().sum::<DVec3>() / 6.0;
    let cb = f.b.iter().copied().sum::<DVec3>() / 6.0;
    if f.separates(cb - ca) {
        return false;
    }
    let na = triple_normals(&f.a);
    let nb = triple_normals(&f.b);
    if na.iter().chain(nb.iter()).any(|&n| f.separates(n)) {
        return false;
    }
    let ea = pair_directions(&f.a);
    let eb = pair_directions(&f.b);
    for u in &ea {
        for v in &eb {
            if f.separates(u.cross(*v)) {
                return false;
            }
        }
    }
    // Flat sets: when both hulls share a plane, only in-plane axes can separate them.
    for (pts, normals) in [(&f.a, &na), (&f.b, &nb)] {
        let Some(n) = normals
            .iter()
            .copied()
            .max_by(|x, y| x.length_squared().total_cmp(&y.length_squared()))
        else {
            continue;
        };
        if n == DVec3::ZERO || !f.is_flat(pts, n) {
            continue;
        }
        if ea.iter().chain(eb.iter()).any(|e| f.separates(n.cross(*e))) {
            return false;
        }
    }
    true
}

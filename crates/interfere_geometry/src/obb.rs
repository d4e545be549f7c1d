//! Oriented bounding boxes: the covariance fit over the convex hull's surface and the 15-axis
//! separating-axis overlap test; the closed-form eigenvectors and the one-pass conservative
//! enclosure that the OBBTree build ([`crate::bvh::obbtree`]) uses with its own covariance.
//!
//! Implements Lin–Manocha 1996 (`lin-manocha-1996-interference-dynamic.md`), "Building an
//! OBBTree" (box axes are the eigenvectors of the covariance matrix; to keep interior vertices
//! from tilting the box, the covariance is taken over the convex hull, here the area-weighted
//! form of Gottschalk–Lin–Manocha 1996 integrating uniformly over the hull triangles) and "Fast
//! Overlap Test for OBBs" (the 15 candidate separating axes: 3 face normals of each box and the 9
//! cross products of edge directions).
//!
//! Conservativeness: a fitted box contains every input point even after its centre, axes and
//! extents are rounded to `f32`; the overlap test runs in `f64`, pads the `|R|` terms (near-
//! parallel edges make the cross-product axes vanish) and every comparison by a small relative
//! slack, so it may report a near miss as an overlap but never misses an overlap.

use crate::aabb::Aabb;
use crate::hull::{Hull, HullError, convex_hull};
use crate::pose::DPose;
use glam::{DMat3, DVec3, Vec3};

/// An oriented box: `center + Σ tᵢ·axes[i]` with `|tᵢ| ≤ half_extents[i]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Obb {
    /// Centre.
    pub center: Vec3,
    /// Orthonormal axes (the columns of the box's rotation), up to `f32` rounding.
    pub axes: [Vec3; 3],
    /// Half side lengths along the axes.
    pub half_extents: Vec3,
}

/// Added to every `|R_ij|` in the overlap test: keeps vanishing cross-product axes of
/// near-parallel edges from producing false separations, and covers the `f32` rounding of the
/// axes (about `1e-7`).
const ABS_R_EPS: f64 = 1e-6;
/// Relative slack on each separating-axis comparison, times the sum of all half extents.
const REL_SLACK: f64 = 4e-6;
/// Relative slack times the coordinates' magnitude (rounding of the transformed centres).
const COORD_SLACK: f64 = 1e-12;

impl Obb {
    /// Fits a box to `points`: axes from the area-weighted covariance of their convex hull's
    /// surface, extents from the extreme projections. Degenerate point sets (planar, collinear)
    /// use the covariance of the points; a single point gets the coordinate axes.
    ///
    /// The result contains every input point (see [`Obb::contains_point`]).
    pub fn fit(points: &[Vec3]) -> Result<Obb, HullError> {
        let hull = convex_hull(points)?;
        let cov = match &hull {
            Hull::Solid(h) => hull_covariance(h).unwrap_or_else(|| point_covariance(points)),
            Hull::Planar { .. } | Hull::Collinear { .. } => point_covariance(points),
            Hull::Point { .. } => DMat3::IDENTITY,
        };
        Ok(Self::enclose(points, axes_from_covariance(cov)))
    }

    /// The box equal to an axis-aligned box (rounded outward), or `None` when it is empty or not
    /// finite.
    pub fn from_aabb(aabb: &Aabb) -> Option<Obb> {
        if aabb.is_empty() || !aabb.min.is_finite() || !aabb.max.is_finite() {
            return None;
        }
        Some(Self::enclose(
            &[aabb.min, aabb.max],
            [Vec3::X, Vec3::Y, Vec3::Z],
        ))
    }

    /// The smallest box with the given (nearly orthonormal) axes that holds `points`, padded
    /// to stay conservative after rounding. `points` must be non-empty and finite.
    fn enclose(points: &[Vec3], axes: [Vec3; 3]) -> Obb {
        let mut span = Enclosure::new(points[0], axes);
        for &p in points {
            span.add(p);
        }
        span.finish()
    }

    /// Whether `p` lies in the closed box, computed in `f64` in the box's own (parallelepiped)
    /// coordinates.
    pub fn contains_point(&self, p: Vec3) -> bool {
        let m = DMat3::from_cols(
            self.axes[0].as_dvec3(),
            self.axes[1].as_dvec3(),
            self.axes[2].as_dvec3(),
        );
        let t = m.inverse() * (p.as_dvec3() - self.center.as_dvec3());
        t.abs().cmple(self.half_extents.as_dvec3()).all()
    }

    /// The eight corners in `f64`.
    pub fn corners(&self) -> [DVec3; 8] {
        let c = self.center.as_dvec3();
        let g = [0, 1, 2].map(|i| self.axes[i].as_dvec3() * self.half_extents[i] as f64);
        std::array::from_fn(|k| {
            let s = |bit: usize| if k & bit == 0 { -1.0 } else { 1.0 };
            c + g[0] * s(1) + g[1] * s(2) + g[2] * s(4)
        })
    }

    /// Volume (`8·hx·hy·hz`).
    pub fn volume(&self) -> f64 {
        8.0 * self.half_extents.as_dvec3().element_product()
    }

    /// Index of the longest axis.
    pub fn longest_axis(&self) -> usize {
        let h = self.half_extents;
        if h.x >= h.y && h.x >= h.z {
            0
        } else if h.y >= h.z {
            1
        } else {
            2
        }
    }
}

/// The smallest `f32` not below `x`, for `x ≥ 0` (half extents). Written as a select rather
/// than a branch: whether `x` rounded down is a coin toss, and the box fit calls this three
/// times per node.
fn round_up(x: f64) -> f32 {
    debug_assert!(x >= 0.0, "{x}");
    let f = x as f32;
    // For a non-negative finite `f` the next float up is the next bit pattern (0 goes to the
    // smallest subnormal); an infinite `f` never rounded down, so its successor is not taken.
    let up = f32::from_bits(f.to_bits() + 1);
    if (f as f64) < x { up } else { f }
}

/// The extreme projections of a stream of points on a fixed frame, turned into a conservative
/// box by [`Enclosure::finish`] (one pass over the points).
///
/// The projections run in `f64` relative to the first point `r` (exact `f32` values, so
/// `p − r` is exact or off by an ulp of itself however far from the origin the points are); each
/// is off by a few ulps of `|p − r|`, at most the box's diameter, at most `2 Σ h`, far below the
/// `1e-12 · Σ h` that [`Enclosure::finish`] pads.
pub(crate) struct Enclosure {
    /// The axes in `f64` (exact copies of the `f32` axes).
    rows: [DVec3; 3],
    axes: [Vec3; 3],
    r: DVec3,
    lo: DVec3,
    hi: DVec3,
    /// The projections' rounding error this box pads for, relative to `Σ h`.
    projection_pad: f64,
}

/// The pad [`Enclosure::finish`] adds for the `f64` rounding of the projections, relative to
/// `Σ h`.
const PROJECTION_PAD: f64 = 1e-12;

impl Enclosure {
    /// An empty enclosure on `axes`, measuring from `reference` (one of the points).
    #[inline]
    pub(crate) fn new(reference: Vec3, axes: [Vec3; 3]) -> Self {
        Self {
            rows: axes.map(Vec3::as_dvec3),
            axes,
            r: reference.as_dvec3(),
            lo: DVec3::INFINITY,
            hi: DVec3::NEG_INFINITY,
            projection_pad: PROJECTION_PAD,
        }
    }

    /// An enclosure on `axes` whose extreme projections of `p − reference` (`reference` one of
    /// the points) were taken by the caller, each off by at most `projection_pad · Σ h` in
    /// absolute value, `Σ h` the sum of the half extents that `lo` and `hi` span; that much
    /// padding is added in [`Enclosure::finish`] (with [`PROJECTION_PAD`] on top, which
    /// covers the `f64` rounding there).
    #[inline]
    pub(crate) fn from_extremes(
        reference: Vec3,
        axes: [Vec3; 3],
        lo: DVec3,
        hi: DVec3,
        projection_pad: f64,
    ) -> Self {
        Self {
            rows: axes.map(Vec3::as_dvec3),
            axes,
            r: reference.as_dvec3(),
            lo,
            hi,
            projection_pad: projection_pad + PROJECTION_PAD,
        }
    }

    /// Takes one point.
    #[inline]
    pub(crate) fn add(&mut self, p: Vec3) {
        let d = p.as_dvec3() - self.r;
        let s = DVec3::new(
            self.rows[0].dot(d),
            self.rows[1].dot(d),
            self.rows[2].dot(d),
        );
        self.lo = self.lo.min(s);
        self.hi = self.hi.max(s);
    }

    /// The box: centre at the middle of the extremes rounded to `f32`, half extents measured
    /// from the rounded centre, padded for the axes' deviation from orthonormality, for the
    /// projections' rounding and for the `f64` rounding here, and rounded up to `f32`. At least
    /// one point must have been added.
    pub(crate) fn finish(self) -> Obb {
        let a = self.axes.map(Vec3::as_dvec3);
        let r = self.r;
        let (lo, hi) = (self.lo, self.hi);
        let mid = (lo + hi) * 0.5;
        let center = (r + a[0] * mid.x + a[1] * mid.y + a[2] * mid.z).as_vec3();
        // Extents from the rounded centre along the rounded axes: the projection of `p − c` is
        // the projection of `p − r` minus that of `c − r` (up to rounding that the pad covers).
        let cc = center.as_dvec3() - r;
        let cc = DVec3::new(a[0].dot(cc), a[1].dot(cc), a[2].dot(cc));
        let h = (hi - cc).max(cc - lo).max(DVec3::ZERO);
        // The axes are orthonormal only up to `eps`; a point's coordinates along the dual basis
        // (the parallelepiped's own coordinates) differ from its projections by at most
        // `eps · Σ h`, and so does the nearest exactly orthonormal frame. Pad for both and for
        // the `f64` rounding of the projections.
        let eps = [
            (a[0].length_squared() - 1.0).abs(),
            (a[1].length_squared() - 1.0).abs(),
            (a[2].length_squared() - 1.0).abs(),
            a[0].dot(a[1]).abs(),
            a[0].dot(a[2]).abs(),
            a[1].dot(a[2]).abs(),
        ]
        .into_iter()
        .fold(0.0f64, f64::max);
        let pad = (4.0 * eps + self.projection_pad) * (h.x + h.y + h.z);
        let h = h + DVec3::splat(pad);
        Obb {
            center,
            axes: self.axes,
            half_extents: Vec3::new(round_up(h.x), round_up(h.y), round_up(h.z)),
        }
    }
}

/// What the separating-axis tests of box `b` (placed by `b_to_a`) against box `a` share: the
/// centres' offset `t` and B's axes `r` in A's axes, `|r|` padded, the half extents and the
/// slack of every comparison.
struct Sat {
    /// A's axes and B's (placed), and the centres' offset, in A's frame.
    aa: [DVec3; 3],
    bb: [DVec3; 3],
    d: DVec3,
    t: [f64; 3],
    r: [[f64; 3]; 3],
    abs_r: [[f64; 3]; 3],
    ha: [f64; 3],
    hb: [f64; 3],
    slack: f64,
}

/// Box `b` placed in another box's frame: its axes and centre mapped by the pose, in `f64`
/// (what every test of `b` against boxes of that frame shares; [`obb_gap_placed`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlacedObb {
    axes: [DVec3; 3],
    center: DVec3,
    half_extents: Vec3,
}

impl PlacedObb {
    /// Box `b` placed by `b_to_a`.
    #[inline(always)]
    pub fn new(b: &Obb, b_to_a: &DPose) -> Self {
        Self {
            axes: b.axes.map(|v| b_to_a.transform_vector(v.as_dvec3())),
            center: b_to_a.transform_point(b.center),
            half_extents: b.half_extents,
        }
    }
}

/// B's boxes placed in A's frame, cached by node (direct-mapped, [`PLACED_CACHE`] slots): a
/// traversal tests a node of B against many nodes of A in a row (it splits A's larger boxes
/// first), and placing a box is about half of a box test. A cached box is the box
/// [`PlacedObb::new`] gives, bit for bit.
pub(crate) struct PlacedCache {
    slots: [(u32, PlacedObb); PLACED_CACHE],
}

/// Slots of a [`PlacedCache`].
const PLACED_CACHE: usize = 64;

impl PlacedCache {
    /// An empty cache (`any` fills the slots' unused boxes).
    pub(crate) fn new(any: &Obb, b_to_a: &DPose) -> Self {
        Self {
            slots: [(u32::MAX, PlacedObb::new(any, b_to_a)); PLACED_CACHE],
        }
    }

    /// Node `ib`'s box `obb` placed by `b_to_a`.
    #[inline(always)]
    pub(crate) fn get(&mut self, ib: u32, obb: &Obb, b_to_a: &DPose) -> &PlacedObb {
        let slot = &mut self.slots[ib as usize % PLACED_CACHE];
        if slot.0 != ib {
            *slot = (ib, PlacedObb::new(obb, b_to_a));
        }
        &slot.1
    }
}

/// The separating-axis test's allowance for rounding, for boxes of half extents `ha`, `hb`
/// centred at `ca`, `cb` (one frame): every axis' gap, the 15-axis test's and one face axis'
/// alone ([`obb_face_gap_placed`]), subtracts the same.
#[inline(always)]
fn sat_slack(ha: &[f64; 3], hb: &[f64; 3], ca: DVec3, cb: DVec3) -> f64 {
    REL_SLACK * (ha[0] + ha[1] + ha[2] + hb[0] + hb[1] + hb[2])
        + COORD_SLACK * (ca.abs().max_element() + cb.abs().max_element())
}

impl Sat {
    /// The test of `a` and the placed `b` with every row of `R` (and `t`) computed.
    #[inline(always)]
    fn placed(a: &Obb, b: &PlacedObb) -> Self {
        let mut s = Self::start(a, b);
        for i in 0..3 {
            s.row(i);
        }
        s
    }

    /// The test's axes, offset, half extents and slack, with no row of `R` computed yet.
    #[inline(always)]
    fn start(a: &Obb, b: &PlacedObb) -> Self {
        let ca = a.center.as_dvec3();
        let ha = a.half_extents.as_dvec3().to_array();
        let hb = b.half_extents.as_dvec3().to_array();
        Self {
            aa: a.axes.map(Vec3::as_dvec3),
            bb: b.axes,
            d: b.center - ca,
            t: [0.0; 3],
            r: [[0.0; 3]; 3],
            abs_r: [[0.0; 3]; 3],
            ha,
            hb,
            slack: sat_slack(&ha, &hb, ca, b.center),
        }
    }

    /// Row `i` of `R` (A's axis `i` against B's axes), padded in `abs_r`, and `t[i]`.
    #[inline(always)]
    fn row(&mut self, i: usize) {
        for j in 0..3 {
            self.r[i][j] = self.aa[i].dot(self.bb[j]);
            self.abs_r[i][j] = self.r[i][j].abs() + ABS_R_EPS;
        }
        self.t[i] = self.aa[i].dot(self.d);
    }
}

/// Whether box `b`, placed in `a`'s frame by `b_to_a`, overlaps box `a` (closed boxes: touching
/// counts). Runs the 15-axis separating-axis test in `f64`.
///
/// Conservative: it returns `true` for every overlapping pair, including those that touch or
/// whose edges are parallel; it may also return `true` for pairs closer than about `4e-6` of the
/// boxes' size (more along the cross-product axes of nearly parallel edges).
pub fn obb_overlap(a: &Obb, b: &Obb, b_to_a: &DPose) -> bool {
    obb_overlap_placed(a, &PlacedObb::new(b, b_to_a))
}

/// [`obb_overlap`] of box `a` and a box already placed in its frame (the same answer: a
/// traversal tests one placed box against many boxes of the other tree, and keeps it).
///
/// The rows of `R` (A's axes against B's) are computed as A's face axes need them, so a pair
/// separated along A's first axis costs a third of them; every comparison is the one of the
/// full test, operation for operation.
#[inline]
pub fn obb_overlap_placed(a: &Obb, b: &PlacedObb) -> bool {
    let mut s = Sat::start(a, b);
    // Face normals of A, each with its row of R.
    for i in 0..3 {
        s.row(i);
        let rb = s.hb[0] * s.abs_r[i][0] + s.hb[1] * s.abs_r[i][1] + s.hb[2] * s.abs_r[i][2];
        if s.t[i].abs() > s.ha[i] + rb + s.slack {
            return false;
        }
    }
    let Sat {
        t,
        r,
        abs_r,
        ha,
        hb,
        slack,
        ..
    } = s;
    // Face normals of B.
    for j in 0..3 {
        let ra = ha[0] * abs_r[0][j] + ha[1] * abs_r[1][j] + ha[2] * abs_r[2][j];
        let tj = t[0] * r[0][j] + t[1] * r[1][j] + t[2] * r[2][j];
        if tj.abs() > ra + hb[j] + slack {
            return false;
        }
    }
    // Cross products A_i × B_j.
    for i in 0..3 {
        let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
        for j in 0..3 {
            let (j1, j2) = ((j + 1) % 3, (j + 2) % 3);
            let ra = ha[i1] * abs_r[i2][j] + ha[i2] * abs_r[i1][j];
            let rb = hb[j1] * abs_r[i][j2] + hb[j2] * abs_r[i][j1];
            let tl = t[i2] * r[i1][j] - t[i1] * r[i2][j];
            if tl.abs() > ra + rb + slack {
                return false;
            }
        }
    }
    true
}

/// A lower bound on the distance between box `a` and box `b` placed in `a`'s frame by
/// `b_to_a`, when the 15-axis test of [`obb_overlap`] separates them (`None` exactly when
/// [`obb_overlap`] returns `true`).
///
/// The bound is the largest gap along the six face normals (each a projection on a unit axis,
/// so no more than the distance), or, when only a cross-product axis separates, the first such
/// axis' gap divided by an upper bound of its length (`0` where that axis is nearly degenerate).
/// Each gap is the test's own margin (its slack subtracted) shrunk by `1e-6` for the `f32`
/// rounding of the axes' lengths, so the bound never exceeds the true distance. The coherent
/// traversal ([`crate::bvh::front`]) keeps a separated node pair without testing it again while
/// the pair's accumulated motion stays below this bound.
pub fn obb_gap(a: &Obb, b: &Obb, b_to_a: &DPose) -> Option<f64> {
    obb_gap_placed(a, &PlacedObb::new(b, b_to_a))
}

/// [`obb_gap`] of box `a` and a box already placed in its frame (the same value, bit for bit:
/// a traversal tests one placed box against many boxes of the other tree).
#[inline]
pub fn obb_gap_placed(a: &Obb, b: &PlacedObb) -> Option<f64> {
    obb_gap_placed_axis(a, b).map(|(gap, _)| gap)
}

/// A face axis of the separating-axis test, as [`obb_gap_placed_axis`] names it: `1..=3` box
/// a's axes, `4..=6` box b's, [`NO_FACE_AXIS`] none (a cross-product axis separated them).
pub type FaceAxis = u8;

/// The [`FaceAxis`] of a pair that no face axis separates.
pub const NO_FACE_AXIS: FaceAxis = 0;

/// Shrinks a gap for the `f32` rounding of the axes' lengths (see [`obb_gap`]).
const SHRINK: f64 = 1.0 - 1e-6;

/// [`obb_gap_placed`] with the face axis its gap was measured on (the one of the six with the
/// largest gap; [`NO_FACE_AXIS`] when only a cross-product axis separates), which
/// [`obb_face_gap_placed`] tests alone later.
#[inline]
pub fn obb_gap_placed_axis(a: &Obb, b: &PlacedObb) -> Option<(f64, FaceAxis)> {
    let Sat {
        t,
        r,
        abs_r,
        ha,
        hb,
        slack,
        ..
    } = Sat::placed(a, b);
    let mut best = f64::NEG_INFINITY;
    let mut axis = NO_FACE_AXIS;
    for i in 0..3 {
        let rb = hb[0] * abs_r[i][0] + hb[1] * abs_r[i][1] + hb[2] * abs_r[i][2];
        let gap = t[i].abs() - (ha[i] + rb + slack);
        if gap > best {
            (best, axis) = (gap, 1 + i as FaceAxis);
        }
    }
    for j in 0..3 {
        let ra = ha[0] * abs_r[0][j] + ha[1] * abs_r[1][j] + ha[2] * abs_r[2][j];
        let tj = t[0] * r[0][j] + t[1] * r[1][j] + t[2] * r[2][j];
        let gap = tj.abs() - (ra + hb[j] + slack);
        if gap > best {
            (best, axis) = (gap, 4 + j as FaceAxis);
        }
    }
    if best > 0.0 {
        return Some((best * SHRINK, axis));
    }
    for i in 0..3 {
        let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
        for j in 0..3 {
            let (j1, j2) = ((j + 1) % 3, (j + 2) % 3);
            let ra = ha[i1] * abs_r[i2][j] + ha[i2] * abs_r[i1][j];
            let rb = hb[j1] * abs_r[i][j2] + hb[j2] * abs_r[i][j1];
            let tl = t[i2] * r[i1][j] - t[i1] * r[i2][j];
            let gap = tl.abs() - (ra + rb + slack);
            if gap > 0.0 {
                // |A_i × B_j| = sin of their angle ≤ √(1 − r²) + the axes' rounding.
                let length = (1.0 - r[i][j] * r[i][j]).max(0.0).sqrt() + 1e-6;
                let gap = if length > 1e-3 {
                    gap / length * SHRINK
                } else {
                    0.0
                };
                return Some((gap, NO_FACE_AXIS));
            }
        }
    }
    None
}

/// The gap between box `a` and box `b` (placed in `a`'s frame) along one face axis alone
/// (`axis` as [`obb_gap_placed_axis`] names it), when that axis separates them: a lower bound on
/// their distance, as each face axis' gap in [`obb_gap`] is (the same slack, shrunk the same
/// way), at about a fifth of the arithmetic of the 15-axis test. `None` when the axis does not
/// separate them (the boxes may still be apart along another axis) or is [`NO_FACE_AXIS`].
///
/// A traversal front re-tests a node pair, once its motion may have closed the last gap, on the
/// axis that separated it last time: a pair moved a little is most often still apart along it.
#[inline]
pub fn obb_face_gap_placed(a: &Obb, b: &PlacedObb, axis: FaceAxis) -> Option<f64> {
    let ca = a.center.as_dvec3();
    let d = b.center - ca;
    let ha = a.half_extents.as_dvec3().to_array();
    let hb = b.half_extents.as_dvec3().to_array();
    let slack = sat_slack(&ha, &hb, ca, b.center);
    let gap = match axis {
        1..=3 => {
            let i = usize::from(axis - 1);
            let l = a.axes[i].as_dvec3();
            let rb = hb[0] * (l.dot(b.axes[0]).abs() + ABS_R_EPS)
                + hb[1] * (l.dot(b.axes[1]).abs() + ABS_R_EPS)
                + hb[2] * (l.dot(b.axes[2]).abs() + ABS_R_EPS);
            l.dot(d).abs() - (ha[i] + rb + slack)
        }
        4..=6 => {
            let j = usize::from(axis - 4);
            let l = b.axes[j];
            let ra = ha[0] * (a.axes[0].as_dvec3().dot(l).abs() + ABS_R_EPS)
                + ha[1] * (a.axes[1].as_dvec3().dot(l).abs() + ABS_R_EPS)
                + ha[2] * (a.axes[2].as_dvec3().dot(l).abs() + ABS_R_EPS);
            l.dot(d).abs() - (ra + hb[j] + slack)
        }
        _ => return None,
    };
    (gap > 0.0).then_some(gap * SHRINK)
}

/// Covariance of the hull's surface with uniform area density (Gottschalk–Lin–Manocha 1996):
/// `C = Σᵢ Aᵢ/12 (9 mᵢmᵢᵀ + pᵢpᵢᵀ + qᵢqᵢᵀ + rᵢrᵢᵀ) / A_H − m_H m_Hᵀ`. `None` if the area is 0.
fn hull_covariance(hull: &crate::hull::ConvexHull) -> Option<DMat3> {
    let o = hull.vertices()[0].as_dvec3();
    let mut area = 0.0;
    let mut first = DVec3::ZERO;
    let mut second = [[0.0f64; 3]; 3];
    for t in 0..hull.triangles().len() {
        let [p, q, r] = hull.triangle(t).map(|v| v.as_dvec3() - o);
        let a = 0.5 * (q - p).cross(r - p).length();
        let m = (p + q + r) / 3.0;
        area += a;
        first += m * a;
        for j in 0..3 {
            for k in 0..3 {
                second[j][k] +=
                    a / 12.0 * (9.0 * m[j] * m[k] + p[j] * p[k] + q[j] * q[k] + r[j] * r[k]);
            }
        }
    }
    if area <= 0.0 || !area.is_finite() {
        return None;
    }
    let mean = first / area;
    let cov = DMat3::from_cols_array_2d(&std::array::from_fn(|j| {
        std::array::from_fn(|k| second[j][k] / area - mean[j] * mean[k])
    }));
    cov.is_finite().then_some(cov)
}

/// Covariance of a point set (used when the hull is flat).
pub(crate) fn point_covariance(points: &[Vec3]) -> DMat3 {
    let o = points[0].as_dvec3();
    let n = points.len() as f64;
    let mean = points.iter().map(|p| p.as_dvec3() - o).sum::<DVec3>() / n;
    let mut c = [[0.0f64; 3]; 3];
    for p in points {
        let d = p.as_dvec3() - o - mean;
        for j in 0..3 {
            for k in 0..3 {
                c[j][k] += d[j] * d[k] / n;
            }
        }
    }
    DMat3::from_cols_array_2d(&c)
}

/// Eigenvectors of a covariance, by decreasing eigenvalue, as a right-handed `f32` frame: the
/// closed form of [`closed_form_axes`] where it is well conditioned, Jacobi otherwise.
pub(crate) fn axes_from_covariance(cov: DMat3) -> [Vec3; 3] {
    if let Some(a) = closed_form_axes(cov) {
        return a.map(DVec3::as_vec3);
    }
    let (values, vectors) = symmetric_eigen(cov);
    let mut order = [0usize, 1, 2];
    order.sort_by(|&i, &j| values[j].total_cmp(&values[i]));
    let v = order.map(|i| vectors.col(i));
    let a0 = v[0].normalize_or_zero();
    let a1 = (v[1] - a0 * a0.dot(v[1])).normalize_or_zero();
    let a2 = a0.cross(a1);
    if !(a0.is_normalized() && a1.is_normalized() && a2.is_normalized()) {
        return [Vec3::X, Vec3::Y, Vec3::Z];
    }
    [a0.as_vec3(), a1.as_vec3(), a2.as_vec3()]
}

/// The eigenvectors of a symmetric 3×3 matrix in closed form, by decreasing eigenvalue, as a
/// right-handed orthonormal frame: the largest and smallest eigenvalues from the trigonometric
/// solution of the characteristic cubic, each one's eigenvector as the longest cross product of
/// two rows of `M − λI`, the middle one completing the frame. An eigenvalue within about `1e-5`
/// of the spread of another has no well-defined eigenvector; its axis is then any direction
/// orthogonal to the other, well separated one (which always exists unless all three nearly
/// coincide). `None` for a (nearly) isotropic or non-finite matrix, which the caller hands to
/// Jacobi.
///
/// A dozen products and one `acos` instead of Jacobi's sweeps; the axes only steer a box's
/// fit, whose containment does not depend on them.
pub(crate) fn closed_form_axes(m: DMat3) -> Option<[DVec3; 3]> {
    let e = |i: usize, j: usize| 0.5 * (m.col(j)[i] + m.col(i)[j]);
    let raw = [e(0, 0), e(1, 1), e(2, 2), e(0, 1), e(0, 2), e(1, 2)];
    let scale = raw.iter().fold(0.0f64, |s, x| s.max(x.abs()));
    if scale.is_nan() || scale <= 0.0 || !scale.is_finite() {
        return None;
    }
    let inv = 1.0 / scale;
    let [a00, a11, a22, a01, a02, a12] = raw.map(|x| x * inv);
    let q = (a00 + a11 + a22) * (1.0 / 3.0);
    let (b00, b11, b22) = (a00 - q, a11 - q, a22 - q);
    let p2 = (b00 * b00 + b11 * b11 + b22 * b22 + 2.0 * (a01 * a01 + a02 * a02 + a12 * a12))
        * (1.0 / 6.0);
    let p = p2.sqrt();
    if p.is_nan() || p <= 1e-9 {
        return None;
    }
    // det((M − qI)/p) / 2 = cos 3φ; the eigenvalues are q + 2p·cos(φ + 2πk/3).
    let det = b00 * (b11 * b22 - a12 * a12) - a01 * (a01 * b22 - a12 * a02)
        + a02 * (a01 * a12 - b11 * a02);
    let phi = (0.5 * det / (p2 * p)).clamp(-1.0, 1.0).acos() * (1.0 / 3.0);
    // φ ∈ [0, π/3], so sin φ ≥ 0.
    let cos = phi.cos();
    let sin = (1.0 - cos * cos).max(0.0).sqrt();
    let l1 = q + 2.0 * p * cos;
    // cos(φ + 2π/3) = −cos φ / 2 − sin φ · √3/2
    let l3 = q - p * (cos + 3f64.sqrt() * sin);
    // The eigenvector of λ and the length of the cross product it came from (about the
    // product of λ's gaps to the other two eigenvalues).
    let vector = |l: f64| {
        let r0 = DVec3::new(a00 - l, a01, a02);
        let r1 = DVec3::new(a01, a11 - l, a12);
        let r2 = DVec3::new(a02, a12, a22 - l);
        let c = [r0.cross(r1), r0.cross(r2), r1.cross(r2)];
        let n = c.map(DVec3::length_squared);
        let i = if n[0] >= n[1] && n[0] >= n[2] {
            0
        } else if n[1] >= n[2] {
            1
        } else {
            2
        };
        let len = n[i].sqrt();
        (c[i] * (1.0 / len), len)
    };
    // λ1 − λ3 ≥ 3p, so one of the two gaps to λ2 is at least 1.5p and one vector is good.
    let good = 1e-5 * p * p;
    let ((v1, n1), (v3, n3)) = (vector(l1), vector(l3));
    let (a0, a1, a2) = match (n1 >= good, n3 >= good) {
        (true, true) => {
            let a2 = (v3 - v1 * v1.dot(v3)).normalize_or_zero();
            (v1, a2.cross(v1), a2)
        }
        (true, false) => {
            let a1 = v1.any_orthonormal_vector();
            (v1, a1, v1.cross(a1))
        }
        (false, true) => {
            let a0 = v3.any_orthonormal_vector();
            (a0, v3.cross(a0), v3)
        }
        (false, false) => return None,
    };
    [a0, a1, a2]
        .iter()
        .all(|a| a.is_finite() && a.is_normalized())
        .then_some([a0, a1, a2])
}

/// Eigen-decomposition of a symmetric 3×3 matrix by cyclic Jacobi rotations: returns the
/// eigenvalues and the matrix whose columns are the matching orthonormal eigenvectors.
/// Only the matrix's symmetric part is used.
pub fn symmetric_eigen(m: DMat3) -> (DVec3, DMat3) {
    // a[row][col]
    let mut a = [[0.0f64; 3]; 3];
    for (i, row) in a.iter_mut().enumerate() {
        for (j, x) in row.iter_mut().enumerate() {
            *x = 0.5 * (m.col(j)[i] + m.col(i)[j]);
        }
    }
    let mut v = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    for _sweep in 0..64 {
        let off = a[0][1] * a[0][1] + a[0][2] * a[0][2] + a[1][2] * a[1][2];
        let diag = a[0][0] * a[0][0] + a[1][1] * a[1][1] + a[2][2] * a[2][2];
        if off <= 1e-36 * diag || off == 0.0 || !off.is_finite() {
            break;
        }
        for (p, q) in [(0, 1), (0, 2), (1, 2)] {
            if a[p][q] == 0.0 {
                continue;
            }
            let theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
            let t = if theta.abs() > 1e150 {
                0.5 / theta
            } else {
                theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt())
            };
            let c = 1.0 / (t * t + 1.0).sqrt();
            let s = t * c;
            for row in a.iter_mut() {
                let (kp, kq) = (row[p], row[q]);
                row[p] = c * kp - s * kq;
                row[q] = s * kp + c * kq;
            }
            let (row_p, row_q) = (a[p], a[q]);
            for k in 0..3 {
                a[p][k] = c * row_p[k] - s * row_q[k];
                a[q][k] = s * row_p[k] + c * row_q[k];
            }
            // The rotation annihilates a[p][q] in exact arithmetic; storing the exact zero (the
            // classical Jacobi step) rather than the rounding residue lets the sweeps stop once
            // converged instead of chasing residues of 1e-16 against the 1e-18 threshold.
            a[p][q] = 0.0;
            a[q][p] = 0.0;
            for row in v.iter_mut() {
                let (kp, kq) = (row[p], row[q]);
                row[p] = c * kp - s * kq;
                row[q] = s * kp + c * kq;
            }
        }
    }
    let values = DVec3::new(a[0][0], a[1][1], a[2][2]);
    let vectors = DMat3::from_cols(
        DVec3::new(v[0][0], v[1][0], v[2][0]),
        DVec3::new(v[0][1], v[1][1], v[2][1]),
        DVec3::new(v[0][2], v[1][2], v[2][2]),
    );
    (values, vectors)
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{DQuat, Quat};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use crate::test_support::random_unit;

    fn random_rotation(rng: &mut ChaCha8Rng) -> Quat {
        Quat::from_axis_angle(
            random_unit(rng).as_vec3(),
            rng.random_range(0.0..std::f32::consts::TAU),
        )
    }

    fn random_dpose(rng: &mut ChaCha8Rng, spread: f64) -> DPose {
        let q = DQuat::from_axis_angle(
            random_unit(rng),
            rng.random_range(0.0..std::f64::consts::TAU),
        );
        DPose {
            rotation: DMat3::from_quat(q),
            translation: random_unit(rng) * spread * rng.random::<f64>(),
        }
    }

    fn random_obb(rng: &mut ChaCha8Rng) -> Obb {
        let q = random_rotation(rng);
        Obb {
            center: Vec3::new(
                rng.random_range(-0.5..0.5),
                rng.random_range(-0.5..0.5),
                rng.random_range(-0.5..0.5),
            ),
            axes: [q * Vec3::X, q * Vec3::Y, q * Vec3::Z],
            half_extents: Vec3::new(
                rng.random_range(0.01..1.5),
                rng.random_range(0.01..1.5),
                rng.random_range(0.01..1.5),
            ),
        }
    }

    // ---------- oracle: two parallelepipeds intersect iff an edge of one meets the other ----

    /// A box as slabs `|nᵢ·x − oᵢ| ≤ 1` plus its 12 edges, all in `a`'s frame.
    struct Poly {
        normals: [DVec3; 3],
        offsets: [f64; 3],
        edges: Vec<(DVec3, DVec3)>,
    }

    fn poly(b: &Obb, pose: &DPose) -> Poly {
        let c = pose.transform_point(b.center);
        let g = [0, 1, 2]
            .map(|i| pose.transform_vector(b.axes[i].as_dvec3()) * b.half_extents[i] as f64);
        let inv = DMat3::from_cols(g[0], g[1], g[2]).inverse();
        let normals = [inv.row(0), inv.row(1), inv.row(2)];
        let offsets = normals.map(|n| n.dot(c));
        let corner = |k: usize| {
            let s = |bit: usize| if k & bit == 0 { -1.0 } else { 1.0 };
            c + g[0] * s(1) + g[1] * s(2) + g[2] * s(4)
        };
        let mut edges = Vec::new();
        for k in 0..8 {
            for bit in [1, 2, 4] {
                if k & bit == 0 {
                    edges.push((corner(k), corner(k | bit)));
                }
            }
        }
        Poly {
            normals,
            offsets,
            edges,
        }
    }

    /// Whether segment `p0 p1` meets the slabs of `x` (Liang–Barsky clipping in `f64`).
    fn segment_meets(x: &Poly, p0: DVec3, p1: DVec3) -> bool {
        let (mut lo, mut hi) = (0.0f64, 1.0f64);
        for i in 0..3 {
            let a = x.normals[i].dot(p0) - x.offsets[i];
            let da = x.normals[i].dot(p1 - p0);
            // need -1 <= a + s·da <= 1
            if da == 0.0 {
                if a.abs() > 1.0 {
                    return false;
                }
            } else {
                let (s0, s1) = ((-1.0 - a) / da, (1.0 - a) / da);
                lo = lo.max(s0.min(s1));
                hi = hi.min(s0.max(s1));
            }
        }
        lo <= hi
    }

    fn oracle(a: &Obb, b: &Obb, pose: &DPose) -> bool {
        let pa = poly(a, &DPose::IDENTITY);
        let pb = poly(b, pose);
        pb.edges.iter().any(|&(p, q)| segment_meets(&pa, p, q))
            || pa.edges.iter().any(|&(p, q)| segment_meets(&pb, p, q))
    }

    /// Largest gap over the 15 axes normalised to unit length, skipping short cross axes.
    fn exact_gap(a: &Obb, b: &Obb, pose: &DPose) -> f64 {
        let ga = [0, 1, 2].map(|i| a.axes[i].as_dvec3() * a.half_extents[i] as f64);
        let gb = [0, 1, 2]
            .map(|i| pose.transform_vector(b.axes[i].as_dvec3()) * b.half_extents[i] as f64);
        let d = pose.transform_point(b.center) - a.center.as_dvec3();
        let mut axes: Vec<DVec3> = Vec::new();
        for i in 0..3 {
            axes.push(a.axes[i].as_dvec3());
            axes.push(pose.transform_vector(b.axes[i].as_dvec3()));
            for j in 0..3 {
                let l = a.axes[i]
                    .as_dvec3()
                    .cross(pose.transform_vector(b.axes[j].as_dvec3()));
                if l.length() > 0.05 {
                    axes.push(l);
                }
            }
        }
        axes.iter()
            .map(|l| {
                let l = l.normalize();
                let r: f64 = ga.iter().chain(gb.iter()).map(|g| g.dot(l).abs()).sum();
                d.dot(l).abs() - r
            })
            .fold(f64::NEG_INFINITY, f64::max)
    }

    fn size(a: &Obb, b: &Obb) -> f64 {
        (a.half_extents + b.half_extents).as_dvec3().element_sum()
    }

    #[test]
    fn random_pairs_agree_with_the_oracle() {
        let mut rng = ChaCha8Rng::seed_from_u64(10);
        let (mut overlapping, mut separated) = (0, 0);
        for _ in 0..400 {
            let a = random_obb(&mut rng);
            let b = random_obb(&mut rng);
            let pose = random_dpose(&mut rng, 4.0);
            let got = obb_overlap(&a, &b, &pose);
            if oracle(&a, &b, &pose) {
                overlapping += 1;
                assert!(got, "missed overlap: {a:?} {b:?} {pose:?}");
                assert!(
                    exact_gap(&a, &b, &pose) < 1e-9,
                    "oracle disagrees with exact SAT"
                );
            } else {
                separated += 1;
                if exact_gap(&a, &b, &pose) > 1e-3 * size(&a, &b) {
                    assert!(!got, "clearly separated pair reported overlapping");
                }
            }
        }
        assert!(
            overlapping > 50 && separated > 50,
            "{overlapping} {separated}"
        );
    }

    /// Moves `b` along `dir` to the oracle's touching distance (bisection).
    fn touching_distance(a: &Obb, b: &Obb, rot: DMat3, base: DVec3, dir: DVec3) -> f64 {
        let at = |s: f64| DPose {
            rotation: rot,
            translation: base + dir * s,
        };
        let (mut lo, mut hi) = (0.0, 1.0);
        while oracle(a, b, &at(hi)) {
            hi *= 2.0;
        }
        if !oracle(a, b, &at(lo)) {
            return f64::NAN;
        }
        for _ in 0..80 {
            let mid = 0.5 * (lo + hi);
            if oracle(a, b, &at(mid)) {
                lo = mid
            } else {
                hi = mid
            }
        }
        lo
    }

    fn check_touching(a: &Obb, b: &Obb, rot: DMat3, base: DVec3, dir: DVec3) -> Option<bool> {
        let s = touching_distance(a, b, rot, base, dir);
        if !s.is_finite() {
            return None;
        }
        let at = |s: f64| DPose {
            rotation: rot,
            translation: base + dir * s,
        };
        for inside in [s, s * (1.0 - 1e-9), s * (1.0 - 1e-4)] {
            if oracle(a, b, &at(inside)) {
                assert!(
                    obb_overlap(a, b, &at(inside)),
                    "touching pair missed: {a:?} {b:?} {rot:?} {dir} {inside}"
                );
            }
        }
        Some(!obb_overlap(a, b, &at(s + 1e-2 * size(a, b))))
    }

    #[test]
    fn touching_pairs_in_general_position() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut rejected = 0;
        for _ in 0..100 {
            let a = random_obb(&mut rng);
            let b = random_obb(&mut rng);
            let rot = random_dpose(&mut rng, 0.0).rotation;
            if let Some(sep) = check_touching(&a, &b, rot, DVec3::ZERO, random_unit(&mut rng)) {
                rejected += sep as usize;
            }
        }
        // 1% of the size past touching, the boxes are apart; the test must see it nearly always.
        assert!(rejected > 85, "{rejected}");
    }

    #[test]
    fn near_parallel_and_identical_frames() {
        let mut rng = ChaCha8Rng::seed_from_u64(12);
        for angle in [0.0, 1e-12, 1e-9, 1e-7, 1e-5, 1e-3] {
            for _ in 0..20 {
                let a = random_obb(&mut rng);
                let mut b = random_obb(&mut rng);
                b.axes = a.axes; // same f32 frame, so edges are (nearly) parallel
                let rot = DMat3::from_axis_angle(random_unit(&mut rng), angle);
                // Slide along a face normal, an edge-diagonal and a random direction.
                let n = a.axes[rng.random_range(0..3)].as_dvec3();
                let e = (a.axes[0] + a.axes[1]).as_dvec3().normalize();
                for dir in [n, e, random_unit(&mut rng)] {
                    check_touching(&a, &b, rot, DVec3::ZERO, dir);
                }
                // (Nearly) coincident centres, and identical boxes.
                let centred = Obb {
                    center: a.center,
                    ..b
                };
                assert!(obb_overlap(
                    &a,
                    &centred,
                    &DPose {
                        rotation: rot,
                        translation: DVec3::ZERO
                    }
                ));
                assert!(obb_overlap(&a, &a, &DPose::IDENTITY));
            }
        }
    }

    #[test]
    fn huge_coordinates() {
        let mut rng = ChaCha8Rng::seed_from_u64(13);
        for _ in 0..40 {
            let mut a = random_obb(&mut rng);
            let b = random_obb(&mut rng);
            a.center += Vec3::new(1.0e6, -3.0e6, 2.0e6);
            let mut pose = random_dpose(&mut rng, 3.0);
            pose.translation += a.center.as_dvec3();
            if oracle(&a, &b, &pose) {
                assert!(obb_overlap(&a, &b, &pose));
            }
            // Slide from overlap to touching, far from the origin.
            let base = a.center.as_dvec3() - pose.rotation * b.center.as_dvec3();
            let sep = check_touching(&a, &b, pose.rotation, base, random_unit(&mut rng));
            assert_eq!(sep, Some(true));
        }
    }

    // ---------------------------------- fitting ----------------------------------

    fn assert_contains_all(obb: &Obb, points: &[Vec3]) {
        for &p in points {
            assert!(obb.contains_point(p), "{p} not in {obb:?}");
        }
        for i in 0..3 {
            assert!((obb.axes[i].length() - 1.0).abs() < 1e-6);
            for j in 0..i {
                assert!(obb.axes[i].dot(obb.axes[j]).abs() < 1e-6);
            }
        }
    }

    #[test]
    fn fit_contains_every_point() {
        let mut rng = ChaCha8Rng::seed_from_u64(14);
        for offset in [Vec3::ZERO, Vec3::new(1.0e6, 2.0e6, -1.0e6)] {
            for _ in 0..20 {
                let q = random_rotation(&mut rng);
                let scale = Vec3::new(
                    rng.random_range(0.01..3.0),
                    rng.random_range(0.01..3.0),
                    rng.random_range(0.01..3.0),
                );
                let n = rng.random_range(1..200);
                let pts: Vec<Vec3> = (0..n)
                    .map(|_| {
                        let v = random_unit(&mut rng).as_vec3() * rng.random_range(0.0..1.0);
                        offset + q * (v * scale)
                    })
                    .collect();
                let obb = Obb::fit(&pts).unwrap();
                assert_contains_all(&obb, &pts);
            }
        }
    }

    #[test]
    fn fit_degenerate_sets() {
        let p = Vec3::new(0.3, -1.7, 2.2);
        let obb = Obb::fit(&[p]).unwrap();
        assert_contains_all(&obb, &[p]);
        assert_eq!(obb.volume(), 0.0);
        // Exactly collinear in f32: multiples of a quarter.
        let line: Vec<Vec3> = (0..7)
            .map(|i| Vec3::new(0.5, -1.5, 2.0) + Vec3::new(1.0, 2.0, -0.5) * (i as f32 * 0.25))
            .collect();
        assert!(matches!(convex_hull(&line), Ok(Hull::Collinear { .. })));
        let obb = Obb::fit(&line).unwrap();
        assert_contains_all(&obb, &line);
        let h = obb.half_extents;
        assert!(
            h.x > 1.7 && h.y < 1e-6 * h.x && h.z < 1e-6 * h.x,
            "a segment's box is a thin needle: {obb:?}"
        );
        let tri = [
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(0.0, 2.0, 0.5),
            Vec3::new(-1.0, 0.3, 3.0),
        ];
        let obb = Obb::fit(&tri).unwrap();
        assert_contains_all(&obb, &tri);
        let h = obb.half_extents;
        assert!(
            h.z < 1e-6 * h.x && h.y > 0.1,
            "a triangle's box is flat: {obb:?}"
        );
        assert_eq!(Obb::fit(&[]), Err(HullError::Empty));
        assert!(Obb::fit(&[Vec3::INFINITY]).is_err());
        let aabb = Aabb::new(Vec3::new(-1.0, 2.0, 3.0), Vec3::new(0.1, 2.5, 1e6));
        let obb = Obb::from_aabb(&aabb).unwrap();
        assert_contains_all(&obb, &[aabb.min, aabb.max]);
        assert!(Obb::from_aabb(&Aabb::EMPTY).is_none());
    }

    #[test]
    fn hull_fit_ignores_interior_clutter() {
        // A rotated 6×4×2 box surface plus a dense tilted sheet of interior points: the hull
        // covariance recovers the box exactly; the vertex covariance would tilt towards the sheet.
        let q = Quat::from_euler(glam::EulerRot::XYZ, 0.3, -0.7, 1.1);
        let solid = crate::shapes::subdivided_cuboid(Vec3::new(3.0, 2.0, 1.0), 3).unwrap();
        let mut pts: Vec<Vec3> = solid.vertices().iter().map(|&v| q * v).collect();
        for i in 0..40 {
            for j in 0..40 {
                let (u, v) = (i as f32 / 20.0 - 1.0, j as f32 / 20.0 - 1.0);
                pts.push(q * Vec3::new(0.9 * u, 0.9 * v, 0.5 * (u + v) * 0.9));
            }
        }
        let obb = Obb::fit(&pts).unwrap();
        assert_contains_all(&obb, &pts);
        assert!((obb.volume() / 48.0 - 1.0).abs() < 1e-4, "{}", obb.volume());
        let naive = axes_from_covariance(point_covariance(&pts));
        assert!(Obb::enclose(&pts, naive).volume() > 48.0 * 1.05);
    }

    /// The closed form against Jacobi: on random symmetric matrices (distinct, double and
    /// nearly double eigenvalues, rank-deficient, huge and tiny scales) its frame is
    /// orthonormal, right-handed, diagonalises the matrix with the eigenvalues in decreasing
    /// order, and where the eigenvalues are well apart it is Jacobi's frame up to signs.
    #[test]
    fn closed_form_axes_agree_with_jacobi() {
        let mut rng = ChaCha8Rng::seed_from_u64(16);
        let mut solved = 0;
        for case in 0..2000 {
            let q = DMat3::from_quat(DQuat::from_axis_angle(
                random_unit(&mut rng),
                rng.random_range(0.0..6.3),
            ));
            let mut d = [0.0f64; 3].map(|_| rng.random_range(0.0..5.0));
            match case % 5 {
                1 => d[1] = d[0],
                2 => d[2] = d[1] * (1.0 + 1e-7),
                3 => d[2] = 0.0,
                _ => {}
            }
            let scale = 10f64.powi(rng.random_range(-12..12));
            let m = q * DMat3::from_diagonal(DVec3::from_array(d) * scale) * q.transpose();
            let Some(a) = closed_form_axes(m) else {
                // Only (nearly) isotropic matrices are handed to Jacobi.
                let (lo, hi) = (
                    d.iter().fold(f64::MAX, |x, &y| x.min(y)),
                    d.iter().fold(0.0f64, |x, &y| x.max(y)),
                );
                assert!(hi - lo < 1e-6 * hi, "case {case}: {d:?}");
                continue;
            };
            solved += 1;
            let r = DMat3::from_cols(a[0], a[1], a[2]);
            assert!((r.determinant() - 1.0).abs() < 1e-12, "case {case}");
            let rt_r = r.transpose() * r;
            let diag = r.transpose() * m * r;
            let top = d.iter().fold(0.0f64, |x, &y| x.max(y)) * scale;
            for i in 0..3 {
                for j in 0..3 {
                    let id = if i == j { 1.0 } else { 0.0 };
                    assert!((rt_r.col(j)[i] - id).abs() < 1e-12, "case {case}");
                    if i != j {
                        // Off-diagonal terms: rounding, or the spread of a near-double pair.
                        assert!(diag.col(j)[i].abs() < 2e-5 * top, "case {case}: {diag:?}");
                    }
                }
            }
            // Decreasing, up to the spread of a near-double pair (whose order is arbitrary).
            assert!(diag.x_axis.x >= diag.y_axis.y - 2e-5 * top, "case {case}");
            assert!(diag.y_axis.y >= diag.z_axis.z - 2e-5 * top, "case {case}");
            let mut sorted = d;
            sorted.sort_by(|x, y| y.total_cmp(x));
            let gaps = [sorted[0] - sorted[1], sorted[1] - sorted[2]];
            let spread = sorted[0] - sorted[2];
            if gaps.iter().all(|&g| g > 1e-3 * spread) {
                let (values, vectors) = symmetric_eigen(m);
                for (i, &axis) in a.iter().enumerate() {
                    let k = (0..3)
                        .find(|&k| (values[k] / scale - sorted[i]).abs() < 1e-6 * spread)
                        .unwrap();
                    assert!(axis.dot(vectors.col(k)).abs() > 1.0 - 1e-9, "case {case}");
                }
            }
        }
        assert!(solved > 1900, "{solved}");
        assert_eq!(closed_form_axes(DMat3::IDENTITY), None);
        assert_eq!(closed_form_axes(DMat3::ZERO), None);
        assert_eq!(
            closed_form_axes(DMat3::from_diagonal(DVec3::new(1.0, f64::NAN, 0.0))),
            None
        );
        let x = closed_form_axes(DMat3::from_diagonal(DVec3::new(1.0, 3.0, 2.0))).unwrap();
        assert_eq!(x.map(|v| v.abs()), [DVec3::Y, DVec3::Z, DVec3::X]);
    }

    #[test]
    fn round_up_is_the_next_float_up() {
        let mut rng = ChaCha8Rng::seed_from_u64(17);
        let mut cases = vec![
            0.0,
            f64::from(f32::MIN_POSITIVE),
            1e-45,
            1e-300,
            1.0,
            f64::from(f32::MAX),
            f64::from(f32::MAX) * 1.0000001,
        ];
        cases.extend((0..10_000).map(|_| 10f64.powf(rng.random_range(-40.0..38.0))));
        cases.extend((0..1000).map(|_| f64::from(rng.random::<f32>())));
        for x in cases {
            let f = round_up(x);
            assert!(f64::from(f) >= x, "{x}");
            assert!(f == 0.0 || f64::from(f.next_down()) < x, "{x} -> {f}");
        }
    }

    #[test]
    fn jacobi_diagonalises() {
        let mut rng = ChaCha8Rng::seed_from_u64(15);
        let mut cases: Vec<DMat3> = vec![
            DMat3::IDENTITY,
            DMat3::ZERO,
            DMat3::from_diagonal(DVec3::new(1.0, 1.0, 1e-30)),
        ];
        for _ in 0..50 {
            let q = DMat3::from_quat(DQuat::from_axis_angle(
                random_unit(&mut rng),
                rng.random_range(0.0..6.0),
            ));
            let d = DVec3::new(
                rng.random_range(-5.0..5.0),
                rng.random_range(-5.0..5.0),
                rng.random_range(-5.0..5.0),
            );
            let d = if rng.random_range(0..3) == 0 {
                DVec3::new(d.x, d.x, d.z)
            } else {
                d
            };
            cases.push(q * DMat3::from_diagonal(d) * q.transpose());
        }
        for m in cases {
            let (values, v) = symmetric_eigen(m);
            let back = v * DMat3::from_diagonal(values) * v.transpose();
            let scale = 1.0 + m.to_cols_array().iter().fold(0.0f64, |a, x| a.max(x.abs()));
            for (x, y) in back.to_cols_array().iter().zip(m.to_cols_array()) {
                assert!((x - y).abs() < 1e-12 * scale, "{m:?}");
            }
            let vtv = v.transpose() * v;
            for (x, y) in vtv
                .to_cols_array()
                .iter()
                .zip(DMat3::IDENTITY.to_cols_array())
            {
                assert!((x - y).abs() < 1e-12);
            }
        }
    }
}

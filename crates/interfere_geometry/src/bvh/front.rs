//! Temporal coherence for the OBBTree traversal: a pair's *traversal front* is kept from one
//! query to the next and brought to the new relative pose, instead of traversing from the roots.
//!
//! Lin–Manocha 1996 (`lin-manocha-1996-interference-dynamic.md`) build their whole pipeline on
//! coherence between steps (sweep and prune, closest features); their OBBTree section traverses
//! from the roots every time. This module gives the tree traversal the same property, in the
//! form known as front tracking (the bounding-volume test tree's cut is cached, Ehmann–Lin 2001):
//!
//! - The front is a cut of the test tree of node pairs: every leaf pair `(a, b)` lies below
//!   exactly one front entry. An entry is either a node pair the 15-axis test separated, with a
//!   lower bound `g` on the distance between its boxes ([`crate::obb::obb_gap`]), or a leaf pair
//!   whose boxes overlapped (its triangles were tested exactly).
//! - Between two queries the relative pose changes from `P₀` to `P₁`. A point `x` of B moves in
//!   A's frame by `|(R₁ − R₀)x + t₁ − t₀| ≤ ‖R₁ − R₀‖₂ |x| + |t₁ − t₀|`, and symmetrically for
//!   A's points in B's frame; the smaller of the two, with `|x|` bounded by the root box's reach,
//!   bounds how far any triangle of one moved relative to the other ([`motion_bound`]). These
//!   bounds accumulate over queries (`M`).
//! - A separated entry recorded when the accumulation was `M₀` with gap `g` is still separated
//!   while `M < M₀ + g`: it is kept without a test. Otherwise (and for every leaf pair with
//!   overlapping boxes) the traversal resumes from that entry, and its descendants replace it.
//!   An expired separated entry is first tested on the face axis that separated it last time
//!   alone ([`crate::obb::obb_face_gap_placed`]); still apart there, it stays with that gap.
//!
//! Every leaf pair whose triangles may meet is below an entry that was tested in this query, and
//! the leaf test is the exact one, so the answer is exactly the full traversal's (oracle tests:
//! `coherent_traversal_equals_the_full_one` over random motions, touching and nested poses).
//! The front only refines; when it has grown to twice the size of a fresh traversal's front
//! ([`REGROW`]), the next query starts again from the roots.

use crate::bvh::obbtree::{Descent, ObbNodeKind, ObbTree, descend};
use crate::obb::{
    FaceAxis, NO_FACE_AXIS, PlacedCache, PlacedObb, obb_face_gap_placed, obb_gap_placed_axis,
};
use crate::pose::DPose;
use glam::DVec3;

/// A front larger than this many times the last fresh traversal's front (plus [`REGROW_MIN`])
/// is dropped, and the query traverses from the roots.
pub const REGROW: usize = 2;
/// Fronts under this many entries are never dropped for their size.
pub const REGROW_MIN: usize = 256;

/// One entry of a [`TraversalFront`].
#[derive(Clone, Copy, Debug, PartialEq)]
struct Entry {
    /// Node of A, and in the top bits ([`AXIS_SHIFT`]) the face axis that separated the boxes
    /// when they were last tested ([`crate::obb::FaceAxis`]; [`NO_FACE_AXIS`] for leaf pairs and
    /// pairs separated by a cross-product axis).
    a: u32,
    /// Node of B, and in the top bits ([`KIND_SHIFT`]) the entry's kind.
    b: u32,
    /// The entry is tested again once the accumulated motion reaches this value (`-∞`: always).
    limit: f64,
}

/// What a coherent query did (for tests and benchmarks).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrontStats {
    /// Whether it traversed from the roots (first query, or the front had grown: [`REGROW`]).
    pub from_roots: bool,
    /// Entries kept untested.
    pub kept: usize,
    /// Box tests run (the 15-axis test, or one face axis alone: `axis_tests`).
    pub box_tests: usize,
    /// Of the box tests, those that re-tested a node pair on the face axis that separated it last
    /// time alone and found it still apart (see [`crate::obb::obb_face_gap_placed`]).
    pub axis_tests: usize,
    /// Exact triangle tests run.
    pub leaf_tests: usize,
    /// Entries after the query.
    pub front: usize,
}

/// The traversal front of one pair of trees (see the module documentation). It belongs to the
/// pair of trees it was first used with; [`ObbTree::all_pairs_coherent`] checks their node counts
/// and starts again from the roots when they differ, but a caller that may swap meshes of the same
/// size must [`TraversalFront::clear`] it.
#[derive(Clone, Debug, Default)]
pub struct TraversalFront {
    entries: Vec<Entry>,
    /// The previous query's entries' buffer, reused for the next query's.
    spare: Vec<Entry>,
    /// The relative pose the front was last brought to, and the trees' node counts.
    at: Option<(DPose, usize, usize)>,
    /// Accumulated motion since the last traversal from the roots.
    motion: Motion,
    /// Entries far from expiring, set aside: none is looked at while the motion of every kind
    /// stays below `cold_min` (their smallest limits), and the crossing pairs among them are
    /// `cold_pairs`.
    cold: Vec<Entry>,
    cold_min: [f64; 3],
    cold_pairs: Vec<(u32, u32)>,
    /// Entries after the last traversal from the roots.
    fresh_len: usize,
    stats: FrontStats,
}

impl TraversalFront {
    /// An empty front: the next query traverses from the roots.
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets the front: the next query traverses from the roots.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.spare = Vec::new();
        self.at = None;
        self.motion = Motion::default();
        self.cold.clear();
        self.cold_pairs.clear();
    }

    /// Whether the entries set aside are all still valid.
    fn cold_valid(&self) -> bool {
        !self.cold.is_empty()
            && (0..3u32).all(|k| self.motion.against(k) < self.cold_min[k as usize])
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.entries.len() + self.cold.len()
    }

    /// Whether the front is empty (no query yet, or cleared).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// What the last query did.
    pub fn stats(&self) -> FrontStats {
        self.stats
    }
}

/// The farthest any point of `tree`'s triangles lies from its mesh's origin (its root box's
/// farthest corner, rounded up).
fn reach(tree: &ObbTree) -> f64 {
    let o = &tree.root().obb;
    let axes = o.axes.map(|v| v.as_dvec3());
    let h = o.half_extents.as_dvec3();
    let corner = axes[0].abs() * h.x + axes[1].abs() * h.y + axes[2].abs() * h.z;
    (o.center.as_dvec3().abs() + corner).length() * (1.0 + 1e-6)
}

/// The triangle pair of entry `e` when it is a certified crossing leaf pair (its kind says so),
/// else `None`.
fn crossing_pair(a: &ObbTree, b: &ObbTree, e: &Entry) -> Option<(u32, u32)> {
    if e.b >> KIND_SHIFT == APART {
        return None;
    }
    match (
        a.nodes()[(e.a & A_NODE_MASK) as usize].kind,
        b.nodes()[(e.b & NODE_MASK) as usize].kind,
    ) {
        (ObbNodeKind::Leaf { triangle: ta }, ObbNodeKind::Leaf { triangle: tb }) => Some((ta, tb)),
        _ => None,
    }
}

/// Whether both trees' node indices fit beside an entry's bits (A's face axis, B's kind): A below
/// `2²⁹` nodes (a quarter of a billion triangles), B below `2³⁰`; larger trees are traversed from
/// the roots every time.
fn certifiable(a: &ObbTree, b: &ObbTree) -> bool {
    a.nodes().len() <= A_NODE_MASK as usize && b.nodes().len() <= NODE_MASK as usize
}

/// The Frobenius norm of `m`.
fn frobenius(m: glam::DMat3) -> f64 {
    (m.x_axis.length_squared() + m.y_axis.length_squared() + m.z_axis.length_squared()).sqrt()
}

/// A bound on `‖R₁ − R₀‖₂`, the most `|(R₁ − R₀)x|` can be for a unit `x`, of two rotation
/// matrices (orthonormal up to rounding). For exact rotations `R₁ − R₀ = (Q − I)R₀` with
/// `Q = R₁R₀ᵀ` a rotation by some angle `φ`, whose `Q − I` has the singular values
/// `2 sin(φ/2)` (twice) and 0: the spectral norm is the Frobenius norm over `√2`. A matrix
/// that is a rotation up to rounding lies within `‖RᵀR − I‖_F` of its polar factor (its
/// singular values `σ` have `|σ − 1| ≤ |σ² − 1|`), which adds at most `(1 + 1/√2)` times that
/// defect per matrix. Matrices that are not near proper rotations get the Frobenius norm.
fn rotation_change(r0: &glam::DMat3, r1: &glam::DMat3) -> f64 {
    let frob = frobenius(*r1 - *r0);
    let defect = |r: &glam::DMat3| frobenius(r.transpose() * *r - glam::DMat3::IDENTITY);
    let (d0, d1) = (defect(r0), defect(r1));
    let proper = d0 < 1e-6 && d1 < 1e-6 && r0.determinant() > 0.0 && r1.determinant() > 0.0;
    if !proper {
        return frob;
    }
    let spectral = frob * std::f64::consts::FRAC_1_SQRT_2 * (1.0 + 1e-12) + 2.0 * (d0 + d1) + 1e-15;
    spectral.min(frob)
}

/// A bound on how far any point of B within `reach_b` of its origin moves relative to A's frame
/// when B's pose in A's frame goes from `p0` to `p1`, the same for A's points within `reach_a`
/// in B's frame, and the smaller of the two (the distance between a point of A and a point of B
/// changes by at most either). Rounded up.
pub fn motion_bound(p0: &DPose, p1: &DPose, reach_a: f64, reach_b: f64) -> f64 {
    Motion::between(p0, p1, reach_a, reach_b).apart
}

/// Motion bounds of a pair (see [`motion_bound`]), accumulated over queries.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Motion {
    /// How much the distance between a point of A and a point of B may have changed.
    apart: f64,
    /// How far a point of B may have moved in A's frame.
    in_a: f64,
    /// How far a point of A may have moved in B's frame.
    in_b: f64,
}

impl Motion {
    fn between(p0: &DPose, p1: &DPose, reach_a: f64, reach_b: f64) -> Self {
        let up = |m: f64| {
            if m.is_finite() {
                m * (1.0 + 1e-9) + f64::MIN_POSITIVE
            } else {
                f64::INFINITY
            }
        };
        let in_a = rotation_change(&p0.rotation, &p1.rotation) * reach_b
            + (p1.translation - p0.translation).length();
        let (q0, q1) = (p0.inverse(), p1.inverse());
        let in_b = rotation_change(&q0.rotation, &q1.rotation) * reach_a
            + (q1.translation - q0.translation).length();
        Self {
            apart: up(in_a.min(in_b)),
            in_a: up(in_a),
            in_b: up(in_b),
        }
    }

    fn plus(self, o: Motion) -> Self {
        Self {
            apart: self.apart + o.apart,
            in_a: self.in_a + o.in_a,
            in_b: self.in_b + o.in_b,
        }
    }

    /// The bound an entry's certificate is measured against.
    fn against(&self, kind: u32) -> f64 {
        match kind {
            B_EDGE_THROUGH_A => self.in_a,
            A_EDGE_THROUGH_B => self.in_b,
            _ => self.apart,
        }
    }
}

/// What a leaf test answers in a coherent query: whether the two triangles meet, and for how
/// much more motion that answer is certain ([`certify_leaf`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LeafAnswer {
    /// The exact answer: the triangles meet.
    pub meet: bool,
    /// How long the answer holds (see [`LeafCertificate`]).
    pub certificate: LeafCertificate,
}

/// For how much relative motion a leaf answer stays true.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LeafCertificate {
    /// Test again at the next query.
    None,
    /// Apart by at least this distance (they stay apart while no point of one moves this much
    /// relative to the other).
    Apart(f64),
    /// An edge of B passes through A's interior; it still does while B's points move less than
    /// this in A's frame.
    BEdgeThroughA(f64),
    /// An edge of A passes through B's interior; it still does while A's points move less than
    /// this in B's frame.
    AEdgeThroughB(f64),
}

/// Entry kinds, kept in the top two bits of an entry's `b` (node indices stay below `2³⁰`).
const KIND_SHIFT: u32 = 30;
const NODE_MASK: u32 = (1 << KIND_SHIFT) - 1;
const APART: u32 = 0;
const B_EDGE_THROUGH_A: u32 = 1;
const A_EDGE_THROUGH_B: u32 = 2;
/// An entry's face axis, in the top three bits of its `a` (A's node indices stay below `2²⁹`).
const AXIS_SHIFT: u32 = 29;
const A_NODE_MASK: u32 = (1 << AXIS_SHIFT) - 1;

/// Entry `a` of node `ia` with face axis `axis`.
#[inline(always)]
fn with_axis(ia: u32, axis: FaceAxis) -> u32 {
    ia | (u32::from(axis) << AXIS_SHIFT)
}

/// The exact answer `meet` of triangles `a` and `b` (B's corners already in A's frame) with a
/// certificate computed in `f64` and shrunk for its rounding:
///
/// - apart: the gap between the triangles' boxes, or the smallest height of one triangle's
///   corners above the other's plane when all are on one side (a lower bound on their distance);
/// - crossing: an edge `pq` of one with its ends at heights `h_p > 0 > h_q` (or the reverse)
///   over the other's plane and its crossing point `x` at in-plane distance `w > 0` from the
///   other's edges. If each end moves by `m ≤ h/2` (`h = min |h|`, `H = |h_p| + |h_q|`, `L =
///   |q − p|`), the crossing parameter changes by at most `2m/H` and the crossing point by
///   `m(1 + 2L/H)`, so the edge still crosses while `m < min(h/2, w / (1 + 2L/H))`; half of
///   that is certified. Measured in the frame of the triangle crossed (the other one moves).
pub fn certify_leaf(a: &[DVec3; 3], b: &[DVec3; 3], meet: bool) -> LeafAnswer {
    let scale = a
        .iter()
        .chain(b)
        .fold(0.0f64, |m, v| m.max(v.abs().max_element()));
    let eps = 1e-10 * (scale + 1.0);
    let certificate = if meet {
        let through_a = (0..3)
            .map(|i| edge_through(a, b[i], b[(i + 1) % 3]))
            .fold(0.0, f64::max);
        let through_b = (0..3)
            .map(|i| edge_through(b, a[i], a[(i + 1) % 3]))
            .fold(0.0, f64::max);
        if through_a >= through_b && through_a - eps > 0.0 {
            LeafCertificate::BEdgeThroughA(through_a - eps)
        } else if through_b - eps > 0.0 {
            LeafCertificate::AEdgeThroughB(through_b - eps)
        } else {
            LeafCertificate::None
        }
    } else {
        let (amin, amax) = (a[0].min(a[1]).min(a[2]), a[0].max(a[1]).max(a[2]));
        let (bmin, bmax) = (b[0].min(b[1]).min(b[2]), b[0].max(b[1]).max(b[2]));
        let boxes = (bmin - amax).max(amin - bmax).max_element();
        let gap = boxes.max(above_plane(a, b)).max(above_plane(b, a)) * (1.0 - 1e-9) - eps;
        if gap > 0.0 {
            LeafCertificate::Apart(gap)
        } else {
            LeafCertificate::None
        }
    };
    LeafAnswer { meet, certificate }
}

/// The unit normal of triangle `t` (`None` when degenerate).
fn unit_normal(t: &[DVec3; 3]) -> Option<DVec3> {
    let n = (t[1] - t[0]).cross(t[2] - t[0]);
    let l = n.length();
    (l > 0.0 && l.is_finite()).then(|| n / l)
}

/// The smallest height of `b`'s corners over `a`'s plane when all are strictly on one side, else 0.
fn above_plane(a: &[DVec3; 3], b: &[DVec3; 3]) -> f64 {
    let Some(n) = unit_normal(a) else { return 0.0 };
    let h = b.map(|v| n.dot(v - a[0]));
    if h.iter().all(|&x| x > 0.0) || h.iter().all(|&x| x < 0.0) {
        h.iter().fold(f64::INFINITY, |m, x| m.min(x.abs()))
    } else {
        0.0
    }
}

/// How far the ends of edge `pq` may move (triangle `t` fixed) before it may stop crossing `t`'s
/// interior, halved (see [`certify_leaf`]); 0 when it does not cross robustly.
fn edge_through(t: &[DVec3; 3], p: DVec3, q: DVec3) -> f64 {
    let Some(n) = unit_normal(t) else { return 0.0 };
    let (hp, hq) = (n.dot(p - t[0]), n.dot(q - t[0]));
    // (NaN heights fail the test and certify nothing.)
    let crosses = hp * hq < 0.0;
    if !crosses {
        return 0.0;
    }
    let (h, big_h) = (hp.abs().min(hq.abs()), hp.abs() + hq.abs());
    let x = p + (q - p) * (hp / (hp - hq));
    let w = (0..3)
        .map(|i| {
            let e = t[(i + 1) % 3] - t[i];
            let k = n.cross(e);
            let kl = k.length();
            if kl > 0.0 {
                k.dot(x - t[i]) / kl
            } else {
                f64::NEG_INFINITY
            }
        })
        .fold(f64::INFINITY, f64::min);
    let inside = w > 0.0;
    if !inside {
        return 0.0;
    }
    let l = (q - p).length();
    let m = (0.5 * h).min(w / (1.0 + 2.0 * l / big_h));
    if m.is_finite() { 0.5 * m } else { 0.0 }
}

/// Entries that this many more steps of the last step's motion cannot expire are set aside
/// (looked at again only once one of them may have expired).
const COLD_STEPS: f64 = 16.0;

/// Fronts with more entries to resume than this run on several threads (when asked for).
pub const PARALLEL_MIN: usize = 8192;

/// A query from the roots first splits the root pair into this many open node pairs (where the
/// trees allow), the same for every thread count, so that the front does not depend on it.
const OPEN_ROOTS: usize = 256;

/// What resuming some entries produced: the entries that replace them, the crossing pairs and
/// the counts.
#[derive(Default)]
struct Resumed {
    next: Vec<Entry>,
    pairs: Vec<(u32, u32)>,
    stats: FrontStats,
}

/// The trees, the pose and the leaf test of one query.
struct Query<'a, F> {
    a: &'a ObbTree,
    b: &'a ObbTree,
    b_to_a: &'a DPose,
    leaf: &'a F,
    /// Accumulated motion at this query (entries whose `limit` exceeds the bound of their kind
    /// are kept untested).
    motion: Motion,
    /// Whether to record the replacing entries (`false`: a read-only query).
    record: bool,
}

impl<F: Fn(u32, u32) -> LeafAnswer + Sync> Query<'_, F> {
    /// Resumes the traversal from `entries` (in order), appending to `r`.
    fn resume(&self, entries: &[Entry], r: &mut Resumed) {
        let mut stack: Vec<(u32, u32)> = Vec::with_capacity(64);
        let mut placed = PlacedCache::new(&self.b.root().obb, self.b_to_a);
        for e in entries {
            let kind = e.b >> KIND_SHIFT;
            if self.motion.against(kind) < e.limit {
                if self.record {
                    r.next.push(*e);
                }
                // A certified crossing leaf pair: still crossing.
                r.pairs.extend(crossing_pair(self.a, self.b, e));
                r.stats.kept += 1;
                continue;
            }
            let (ia, ib) = (e.a & A_NODE_MASK, e.b & NODE_MASK);
            let axis = (e.a >> AXIS_SHIFT) as FaceAxis;
            if axis != NO_FACE_AXIS {
                // A node pair apart along this axis last time: most often still apart along it.
                let (na, nb) = (&self.a.nodes()[ia as usize], &self.b.nodes()[ib as usize]);
                let b_placed = placed.get(ib, &nb.obb, self.b_to_a);
                if let Some(gap) = obb_face_gap_placed(&na.obb, b_placed, axis) {
                    r.stats.box_tests += 1;
                    r.stats.axis_tests += 1;
                    if self.record {
                        r.next.push(Entry {
                            a: e.a,
                            b: e.b,
                            limit: self.motion.apart + gap,
                        });
                    }
                    continue;
                }
            }
            stack.push((ia, ib));
            while let Some((ia, ib)) = stack.pop() {
                let (na, nb) = (&self.a.nodes()[ia as usize], &self.b.nodes()[ib as usize]);
                r.stats.box_tests += 1;
                let b_placed = placed.get(ib, &nb.obb, self.b_to_a);
                if let Some((gap, axis)) = obb_gap_placed_axis(&na.obb, b_placed) {
                    if self.record {
                        r.next.push(Entry {
                            a: with_axis(ia, axis),
                            b: ib,
                            limit: self.motion.apart + gap,
                        });
                    }
                    continue;
                }
                match descend(na, nb, ia, ib) {
                    Descent::Leaves(ta, tb) => {
                        r.stats.leaf_tests += 1;
                        let answer = (self.leaf)(ta, tb);
                        if answer.meet {
                            r.pairs.push((ta, tb));
                        }
                        if self.record {
                            r.next.push(self.leaf_entry(ia, ib, answer));
                        }
                    }
                    Descent::Split([first, second]) => stack.extend([second, first]),
                }
            }
        }
    }

    /// The entry of leaf pair `(ia, ib)` after its test.
    fn leaf_entry(&self, ia: u32, ib: u32, answer: LeafAnswer) -> Entry {
        let (kind, margin) = match answer.certificate {
            LeafCertificate::Apart(g) if !answer.meet => (APART, g),
            LeafCertificate::BEdgeThroughA(m) if answer.meet => (B_EDGE_THROUGH_A, m),
            LeafCertificate::AEdgeThroughB(m) if answer.meet => (A_EDGE_THROUGH_B, m),
            _ => (APART, f64::NEG_INFINITY),
        };
        Entry {
            a: ia,
            b: ib | (kind << KIND_SHIFT),
            limit: self.motion.against(kind) + margin,
        }
    }

    /// Splits the root pair breadth-first into at least `want` open node pairs (their boxes
    /// overlap; to be resumed) where the trees allow, recording separated and leaf pairs on the
    /// way. Returns the open pairs, in a fixed order.
    fn open_roots(&self, want: usize, r: &mut Resumed) -> Vec<Entry> {
        let open = |a, b| Entry {
            a,
            b,
            limit: f64::NEG_INFINITY,
        };
        let mut level = vec![open(0, 0)];
        while level.len() < want {
            let mut below = Vec::with_capacity(2 * level.len());
            let mut split = false;
            for e in &level {
                let (na, nb) = (&self.a.nodes()[e.a as usize], &self.b.nodes()[e.b as usize]);
                r.stats.box_tests += 1;
                let b_placed = PlacedObb::new(&nb.obb, self.b_to_a);
                if let Some((gap, axis)) = obb_gap_placed_axis(&na.obb, &b_placed) {
                    if self.record {
                        r.next.push(Entry {
                            a: with_axis(e.a, axis),
                            b: e.b,
                            limit: self.motion.apart + gap,
                        });
                    }
                    continue;
                }
                match (na.kind, nb.kind) {
                    (ObbNodeKind::Leaf { .. }, ObbNodeKind::Leaf { .. }) => {
                        // Resumed (and tested) with the rest; its box test is repeated there.
                        below.push(*e);
                    }
                    (ObbNodeKind::Internal { left }, ObbNodeKind::Leaf { .. }) => {
                        below.extend([open(left, e.b), open(left + 1, e.b)]);
                        split = true;
                    }
                    (ObbNodeKind::Leaf { .. }, ObbNodeKind::Internal { left }) => {
                        below.extend([open(e.a, left), open(e.a, left + 1)]);
                        split = true;
                    }
                    (ObbNodeKind::Internal { left: la }, ObbNodeKind::Internal { left: lb }) => {
                        below.extend([
                            open(la, lb),
                            open(la, lb + 1),
                            open(la + 1, lb),
                            open(la + 1, lb + 1),
                        ]);
                        split = true;
                    }
                }
            }
            level = below;
            if !split {
                break;
            }
        }
        level
    }

    /// Resumes `entries` on up to `threads` threads: chunks taken in turn from a shared counter,
    /// their results joined in chunk order (the same as one thread's, for any thread count).
    fn resume_all(&self, entries: &[Entry], threads: usize, mut r: Resumed) -> Resumed {
        if threads <= 1 || entries.len() < PARALLEL_MIN {
            self.resume(entries, &mut r);
            return r;
        }
        let chunk = entries.len().div_ceil(8 * threads).max(256);
        let chunks: Vec<&[Entry]> = entries.chunks(chunk).collect();
        // The calling thread takes chunks too, beside `threads − 1` helpers.
        let done = crate::parallel::map_chunks(threads, chunks.len(), |k| {
            let mut part = Resumed::default();
            self.resume(chunks[k], &mut part);
            Some(vec![part])
        });
        for part in done {
            r.next.extend(part.next);
            r.pairs.extend(part.pairs);
            r.stats.kept += part.stats.kept;
            r.stats.box_tests += part.stats.box_tests;
            r.stats.axis_tests += part.stats.axis_tests;
            r.stats.leaf_tests += part.stats.leaf_tests;
        }
        r
    }

    /// The whole query from the roots: split, then resumed (appending to `r`).
    fn traverse_from_roots(&self, threads: usize, mut r: Resumed) -> Resumed {
        let open = self.open_roots(OPEN_ROOTS, &mut r);
        self.resume_all(&open, threads, r)
    }
}

impl ObbTree {
    /// [`ObbTree::all_pairs`] from the traversal front of the last query of this pair of trees,
    /// brought to `b_to_a` (see [`crate::bvh::front`]): the same sorted pairs, at a cost that
    /// follows how much the pair moved instead of how many node pairs lie above its contact.
    /// Large fronts are resumed on up to `threads` threads (neither the answer nor the front
    /// depends on the thread count).
    pub fn all_pairs_coherent(
        &self,
        other: &ObbTree,
        b_to_a: &DPose,
        front: &mut TraversalFront,
        threads: usize,
        leaf: impl Fn(u32, u32) -> LeafAnswer + Sync,
    ) -> Vec<(u32, u32)> {
        if !certifiable(self, other) {
            // Node indices would reach the entries' kind bits (over 2³⁰ nodes): no front.
            front.clear();
            return self.all_pairs(other, b_to_a, |a, b| leaf(a, b).meet);
        }
        let (na, nb) = (self.nodes().len(), other.nodes().len());
        let previous = match front.at {
            Some((pose, a, b)) if a == na && b == nb && b_to_a.is_finite() => Some(pose),
            _ => None,
        };
        let grown = front.len() > REGROW * front.fresh_len + REGROW_MIN;
        let (fresh, step) = match previous {
            Some(p0) if !grown => {
                let step = Motion::between(&p0, b_to_a, reach(self), reach(other));
                front.motion = front.motion.plus(step);
                (false, step)
            }
            _ => {
                front.motion = Motion::default();
                front.cold.clear();
                front.cold_pairs.clear();
                (true, Motion::default())
            }
        };
        // Entries set aside are looked at again, with the others, once one of them may expire.
        let cold = front.cold_valid();
        if !cold {
            let mut set_aside = std::mem::take(&mut front.cold);
            front.entries.append(&mut set_aside);
            front.cold = set_aside;
            front.cold_pairs.clear();
        }
        let q = Query {
            a: self,
            b: other,
            b_to_a,
            leaf: &leaf,
            motion: front.motion,
            record: true,
        };
        // The new entries go to the buffer the query before last left.
        let mut spare = std::mem::take(&mut front.spare);
        spare.clear();
        let start = Resumed {
            next: spare,
            ..Resumed::default()
        };
        let mut r = if fresh {
            q.traverse_from_roots(threads, start)
        } else {
            q.resume_all(&front.entries, threads, start)
        };
        r.stats.from_roots = fresh;
        front.spare = std::mem::replace(&mut front.entries, r.next);
        if !cold {
            // Set aside the entries that [`COLD_STEPS`] more steps like this one cannot expire.
            let window = [0, 1, 2].map(|k| COLD_STEPS * step.against(k));
            let mut hot = std::mem::take(&mut front.spare);
            hot.clear();
            front.cold_min = [f64::INFINITY; 3];
            for e in front.entries.drain(..) {
                let kind = (e.b >> KIND_SHIFT) as usize;
                if e.limit > front.motion.against(kind as u32) + window[kind] {
                    front.cold_min[kind] = front.cold_min[kind].min(e.limit);
                    front.cold_pairs.extend(crossing_pair(self, other, &e));
                    front.cold.push(e);
                } else {
                    hot.push(e);
                }
            }
            front.spare = std::mem::replace(&mut front.entries, hot);
        }
        r.stats.front = front.len();
        front.at = b_to_a.is_finite().then_some((*b_to_a, na, nb));
        if fresh {
            front.fresh_len = front.len();
        }
        r.stats.kept += if cold { front.cold.len() } else { 0 };
        front.stats = r.stats;
        let mut out = r.pairs;
        if cold {
            // Skipped: still crossing. (When they were just set aside, this query found them.)
            out.extend_from_slice(&front.cold_pairs);
        }
        out.sort_unstable();
        out
    }

    /// [`ObbTree::all_pairs`] at `b_to_a` from `front` without changing it (a look ahead, for
    /// example at where the pair will be at the end of the step): entries the motion from the
    /// front's pose cannot have closed are skipped, the others resumed. From the roots when
    /// `front` has never been used with these trees. Returns the sorted pairs and the counts.
    pub fn all_pairs_near_front(
        &self,
        other: &ObbTree,
        b_to_a: &DPose,
        front: &TraversalFront,
        threads: usize,
        leaf: impl Fn(u32, u32) -> LeafAnswer + Sync,
    ) -> (Vec<(u32, u32)>, FrontStats) {
        if !certifiable(self, other) {
            let pairs = self.all_pairs(other, b_to_a, |a, b| leaf(a, b).meet);
            let stats = FrontStats {
                from_roots: true,
                ..FrontStats::default()
            };
            return (pairs, stats);
        }
        let (na, nb) = (self.nodes().len(), other.nodes().len());
        let at = match front.at {
            Some((pose, a, b)) if a == na && b == nb && b_to_a.is_finite() => Some(pose),
            _ => None,
        };
        let mut q = Query {
            a: self,
            b: other,
            b_to_a,
            leaf: &leaf,
            motion: Motion::default(),
            record: false,
        };
        let mut r = match at {
            Some(p0) => {
                q.motion =
                    front
                        .motion
                        .plus(Motion::between(&p0, b_to_a, reach(self), reach(other)));
                let r = q.resume_all(&front.entries, threads, Resumed::default());
                q.resume_all(&front.cold, threads, r)
            }
            None => {
                let mut r = q.traverse_from_roots(threads, Resumed::default());
                r.stats.from_roots = true;
                r
            }
        };
        r.pairs.sort_unstable();
        (r.pairs, r.stats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::brute_force::all_pairs_brute;
    use crate::mesh::TriMesh;
    use crate::obb::{Obb, obb_gap, obb_overlap};
    use crate::shapes;
    use crate::threads::{ThreadSpec, bolt, nut};
    use crate::tri_tri::triangles_intersect;
    use glam::{DMat3, DQuat, DVec3, Vec3};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn unit(rng: &mut ChaCha8Rng) -> DVec3 {
        DVec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        )
        .normalize_or(DVec3::X)
    }

    fn random_pose(rng: &mut ChaCha8Rng, spread: f64) -> DPose {
        DPose {
            rotation: DMat3::from_quat(DQuat::from_axis_angle(
                unit(rng),
                rng.random_range(0.0..6.3),
            )),
            translation: unit(rng) * rng.random_range(0.0..spread),
        }
    }

    /// `pose` moved by a random rotation of up to `angle` about a point near B's origin and a
    /// random translation of up to `shift`.
    fn nudged(rng: &mut ChaCha8Rng, pose: &DPose, angle: f64, shift: f64) -> DPose {
        let turn = DMat3::from_quat(DQuat::from_axis_angle(
            unit(rng),
            rng.random_range(0.0..=angle),
        ));
        DPose {
            rotation: (turn * pose.rotation),
            translation: pose.translation + unit(rng) * rng.random_range(0.0..=shift),
        }
    }

    /// The full traversal's answer with the exact leaf test.
    fn full(a: &TriMesh, b: &TriMesh, ta: &ObbTree, tb: &ObbTree, p: &DPose) -> Vec<(u32, u32)> {
        ta.all_pairs(tb, p, |x, y| meet(a, b, p, x, y))
    }

    fn certified(a: &TriMesh, b: &TriMesh, p: &DPose, x: u32, y: u32) -> LeafAnswer {
        let ta = a.triangle(x as usize).map(|v| v.as_dvec3());
        let tb = b.triangle(y as usize).map(|v| p.transform_point(v));
        certify_leaf(&ta, &tb, triangles_intersect(ta, tb))
    }

    fn meet(a: &TriMesh, b: &TriMesh, p: &DPose, x: u32, y: u32) -> bool {
        let ta = a.triangle(x as usize).map(|v| v.as_dvec3());
        let tb = b.triangle(y as usize).map(|v| p.transform_point(v));
        triangles_intersect(ta, tb)
    }

    /// Runs `poses` through a front on one thread and another on three, checking every answer,
    /// and a look ahead from the front to the next pose, against the full traversal, and that
    /// both fronts are the same; returns the box tests of the coherent queries after the first,
    /// those of the same queries from the roots, and how many poses interfere.
    fn follow(a: &TriMesh, b: &TriMesh, poses: &[DPose]) -> (usize, usize, usize) {
        let (ta, tb) = (ObbTree::build(a), ObbTree::build(b));
        let (mut front, mut front3) = (TraversalFront::new(), TraversalFront::new());
        let (mut coherent, mut fresh, mut hits) = (0, 0, 0);
        for (k, p) in poses.iter().enumerate() {
            let test = |x, y| certified(a, b, p, x, y);
            let want = full(a, b, &ta, &tb, p);
            if k > 0 {
                let (ahead, _) = ta.all_pairs_near_front(&tb, p, &front, 2, test);
                assert_eq!(ahead, want, "look ahead to query {k}");
            }
            let got = ta.all_pairs_coherent(&tb, p, &mut front, 1, test);
            assert_eq!(got, want, "query {k}");
            let got3 = ta.all_pairs_coherent(&tb, p, &mut front3, 3, test);
            assert_eq!(got3, want, "query {k}, three threads");
            assert_eq!(front.entries, front3.entries, "query {k}: fronts differ");
            assert_eq!(
                front.cold, front3.cold,
                "query {k}: set-aside entries differ"
            );
            hits += usize::from(!want.is_empty());
            if k > 0 {
                coherent += front.stats().box_tests;
                let mut one = TraversalFront::new();
                ta.all_pairs_coherent(&tb, p, &mut one, 1, test);
                fresh += one.stats().box_tests;
            }
        }
        (coherent, fresh, hits)
    }

    fn meshes() -> Vec<TriMesh> {
        crate::test_support::test_solids()
    }

    #[test]
    fn coherent_traversal_equals_the_full_one() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let meshes = meshes();
        let mut hits = 0;
        for a in &meshes {
            for b in &meshes {
                // Random walks of every size of step: resting jitter, sliding, tumbling, and
                // jumps that leave nothing of the front valid.
                for (angle, shift) in [(1e-7, 1e-7), (1e-3, 1e-3), (0.05, 0.05), (1.0, 1.0)] {
                    let mut pose = random_pose(&mut rng, 1.8);
                    let mut poses = vec![pose];
                    for _ in 0..12 {
                        pose = nudged(&mut rng, &pose, angle, shift);
                        // Keep the pair near each other.
                        if pose.translation.length() > 2.2 {
                            pose.translation *= 0.5;
                        }
                        poses.push(pose);
                    }
                    hits += follow(a, b, &poses).2;
                }
                // Resting for a while (entries set aside), then a jump, then resting again.
                let mut pose = random_pose(&mut rng, 1.5);
                let mut poses = vec![pose];
                for k in 0..24 {
                    let (angle, shift) = if k % 8 == 7 { (0.2, 0.2) } else { (1e-7, 1e-7) };
                    pose = nudged(&mut rng, &pose, angle, shift);
                    poses.push(pose);
                }
                hits += follow(a, b, &poses).2;
            }
        }
        assert!(hits > 200, "only {hits} interfering queries");
    }

    #[test]
    fn touching_nested_repeated_and_far_poses() {
        let a = shapes::subdivided_cuboid(Vec3::new(0.5, 0.25, 0.75), 2)
            .unwrap()
            .into_mesh();
        let b = shapes::cuboid(Vec3::new(0.25, 0.5, 0.125))
            .unwrap()
            .into_mesh();
        // Faces touching exactly, then apart by 1e-9, then touching again; the same pose twice.
        let at = |dx: f64| DPose {
            rotation: DMat3::IDENTITY,
            translation: DVec3::new(dx, 0.1, -0.1),
        };
        let poses = [
            at(0.75),
            at(0.75),
            at(0.75 + 1e-9),
            at(0.75),
            at(0.7),
            at(0.75),
        ];
        let (_, _, hits) = follow(&a, &b, &poses);
        assert_eq!(hits, 5);
        // Nested: a small sphere moving inside a big one (no triangle pair, every query).
        let big = shapes::icosphere(3.0, 2).unwrap().into_mesh();
        let small = shapes::icosphere(0.5, 2).unwrap().into_mesh();
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let poses: Vec<DPose> = (0..10).map(|_| random_pose(&mut rng, 1.5)).collect();
        assert_eq!(follow(&big, &small, &poses).2, 0);
        // A million units from the origin, sliding by a micrometre per query.
        let far = Vec3::new(1.0e6, -2.0e6, 5.0e5);
        let shift = |m: &TriMesh| {
            let v: Vec<Vec3> = m.vertices().iter().map(|v| *v + far).collect();
            TriMesh::new(v, m.triangles().to_vec()).unwrap()
        };
        let ring = shift(&shapes::torus(1.0, 0.35, 16, 8).unwrap().into_mesh());
        let ball = shapes::icosphere(0.4, 2).unwrap().into_mesh();
        let poses: Vec<DPose> = (0..10)
            .map(|k| DPose {
                rotation: DMat3::IDENTITY,
                translation: far.as_dvec3() + DVec3::new(1.0 + 1e-6 * k as f64, 0.0, 0.2),
            })
            .collect();
        assert!(follow(&ring, &ball, &poses).2 > 0);
    }

    #[test]
    fn small_meshes_equal_brute_force() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let a = shapes::icosphere(1.0, 1).unwrap().into_mesh();
        let b = shapes::torus(0.8, 0.3, 10, 6).unwrap().into_mesh();
        let (ta, tb) = (ObbTree::build(&a), ObbTree::build(&b));
        let mut front = TraversalFront::new();
        let mut pose = random_pose(&mut rng, 1.0);
        for _ in 0..40 {
            pose = nudged(&mut rng, &pose, 0.1, 0.1);
            let got = ta.all_pairs_coherent(&tb, &pose, &mut front, 1, |x, y| {
                certified(&a, &b, &pose, x, y)
            });
            let mut want = all_pairs_brute(&a, &b, &pose);
            want.sort_unstable();
            assert_eq!(got, want);
        }
    }

    /// A nut screwed down the bolt's thread, a small turn per query (the demo's motion): the
    /// answer is the full traversal's and a still nut costs a small part of a fresh traversal.
    #[test]
    fn nut_on_its_thread() {
        let spec = ThreadSpec {
            columns: 16,
            ..ThreadSpec::M10
        };
        let bolt = bolt(&spec, 8.0).unwrap().into_mesh();
        let nut = nut(&spec, 4.0).unwrap().into_mesh();
        // Screw motion: Δθ per query, Δz = pitch · Δθ / 2π, and a sideways offset that makes the
        // flanks cross.
        let screw = |theta: f64| DPose {
            rotation: DMat3::from_rotation_z(theta),
            translation: DVec3::new(0.2, 0.0, 3.0 + 1.5 * theta / std::f64::consts::TAU),
        };
        let turning: Vec<DPose> = (0..20).map(|k| screw(0.02 * k as f64)).collect();
        let (coherent, fresh, hits) = follow(&bolt, &nut, &turning);
        assert_eq!(hits, turning.len());
        eprintln!(
            "turning 0.02 rad per query: {coherent} box tests against {fresh} from the roots"
        );
        let still: Vec<DPose> = (0..6).map(|k| screw(1e-9 * k as f64)).collect();
        let (coherent, fresh, _) = follow(&bolt, &nut, &still);
        eprintln!("still: {coherent} box tests against {fresh} from the roots");
        assert!(
            coherent * 10 < fresh,
            "a still pair: {coherent} box tests against {fresh} from the roots"
        );
    }

    /// [`obb_gap`] and each face axis' gap alone ([`obb_face_gap_placed`]) are lower bounds on
    /// the distance between random boxes (points sampled on both), the 15-axis gap is `None`
    /// exactly when the boxes overlap, and no face axis alone separates overlapping boxes.
    #[test]
    fn gap_is_none_exactly_when_the_boxes_overlap_and_never_exceeds_the_distance() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let (mut separated, mut face_named) = (0, 0);
        for k in 0..4000 {
            let random_box = |rng: &mut ChaCha8Rng| {
                let r = DMat3::from_quat(DQuat::from_axis_angle(
                    unit(rng),
                    rng.random_range(0.0..6.3),
                ));
                Obb {
                    center: (unit(rng) * rng.random_range(0.0..1.0)).as_vec3(),
                    axes: [r.x_axis, r.y_axis, r.z_axis].map(|v| v.as_vec3()),
                    half_extents: Vec3::new(
                        rng.random_range(0.01..0.5),
                        rng.random_range(0.01..0.5),
                        rng.random_range(0.0..0.5),
                    ),
                }
            };
            let (a, mut b) = (random_box(&mut rng), random_box(&mut rng));
            if k % 4 == 0 {
                // Parallel edges: the cross-product axes vanish.
                b.axes = a.axes;
            }
            let pose = random_pose(&mut rng, 1.5);
            let gap = obb_gap(&a, &b, &pose);
            assert_eq!(gap.is_none(), obb_overlap(&a, &b, &pose));
            // Each face axis alone: a gap where it separates, never more than the 15-axis one,
            // and the axis the 15-axis gap names gives that gap again (to the rounding of the
            // `f32` axes, which the 15-axis test takes as orthonormal).
            let placed = PlacedObb::new(&b, &pose);
            let named = obb_gap_placed_axis(&a, &placed);
            assert_eq!(named.map(|(g, _)| g), gap);
            let faces: Vec<f64> = (1..=6)
                .filter_map(|axis| obb_face_gap_placed(&a, &placed, axis))
                .collect();
            assert_eq!(obb_face_gap_placed(&a, &placed, NO_FACE_AXIS), None);
            if let Some((g, axis)) = named {
                if axis != NO_FACE_AXIS {
                    let alone = obb_face_gap_placed(&a, &placed, axis).expect("still apart");
                    assert!((alone - g).abs() <= 1e-6 * (1.0 + g), "{alone} against {g}");
                    face_named += 1;
                }
            } else {
                assert!(faces.is_empty(), "a face axis separates overlapping boxes");
            }
            let Some(gap) = gap else { continue };
            separated += 1;
            assert!(gap >= 0.0);
            let gap = faces.iter().fold(gap, |m, &g| m.max(g));
            // No pair of points of the two boxes is closer than the gap (corners, and random
            // points on the faces).
            let point = |o: &Obb, rng: &mut ChaCha8Rng| {
                let t = [0, 1, 2].map(|i| {
                    let h = o.half_extents[i] as f64;
                    if rng.random_bool(0.5) {
                        h * rng.random_range(-1.0..=1.0)
                    } else if rng.random_bool(0.5) {
                        h
                    } else {
                        -h
                    }
                });
                o.center.as_dvec3() + (0..3).map(|i| o.axes[i].as_dvec3() * t[i]).sum::<DVec3>()
            };
            for _ in 0..200 {
                let pa = point(&a, &mut rng);
                let pb = pose.transform_dpoint(point(&b, &mut rng));
                assert!(
                    (pa - pb).length() >= gap,
                    "gap {gap} > {}",
                    (pa - pb).length()
                );
            }
        }
        assert!(separated > 1000, "{separated}");
        assert!(face_named > 500, "{face_named}");
    }

    /// A leaf answer with a certificate does not change when the corners of the triangle that
    /// moves (B's for `Apart` and `BEdgeThroughA`, A's for `AEdgeThroughB`) each move by up to
    /// just under the certified margin, in random directions, on random and adversarial pairs
    /// (near-coplanar, grazing edges, slivers).
    #[test]
    fn leaf_certificates_hold_for_any_motion_below_their_margin() {
        let mut rng = ChaCha8Rng::seed_from_u64(13);
        let (mut apart, mut through) = (0, 0);
        for k in 0..60_000 {
            let tri = |rng: &mut ChaCha8Rng, spread: f64| {
                let c = unit(rng) * rng.random_range(0.0..spread);
                [0; 3].map(|_| c + unit(rng) * rng.random_range(0.01..1.0))
            };
            let a = tri(&mut rng, 0.5);
            let mut b = tri(&mut rng, 0.5);
            match k % 4 {
                // Nearly in A's plane.
                1 => {
                    let n = (a[1] - a[0]).cross(a[2] - a[0]).normalize();
                    for v in &mut b {
                        *v -= n * (n.dot(*v - a[0]) * (1.0 - rng.random_range(0.0..1e-3)));
                    }
                }
                // A sliver.
                2 => b[2] = b[0] + (b[1] - b[0]) * 0.5 + unit(&mut rng) * 1e-6,
                _ => {}
            }
            let meet = triangles_intersect(a, b);
            let answer = certify_leaf(&a, &b, meet);
            let (margin, moves_b) = match answer.certificate {
                LeafCertificate::None => continue,
                LeafCertificate::Apart(g) => {
                    assert!(!meet);
                    apart += 1;
                    (g, rng.random_bool(0.5))
                }
                LeafCertificate::BEdgeThroughA(m) => {
                    assert!(meet);
                    through += 1;
                    (m, true)
                }
                LeafCertificate::AEdgeThroughB(m) => {
                    assert!(meet);
                    through += 1;
                    (m, false)
                }
            };
            assert!(margin > 0.0);
            for _ in 0..8 {
                let mut moved = if moves_b { b } else { a };
                for v in &mut moved {
                    // Mostly the full margin, the worst case for the bound.
                    let r = if rng.random_bool(0.7) {
                        0.999
                    } else {
                        rng.random_range(0.0..0.999)
                    };
                    *v += unit(&mut rng) * margin * r;
                }
                let (a2, b2) = if moves_b { (a, moved) } else { (moved, b) };
                assert_eq!(
                    triangles_intersect(a2, b2),
                    meet,
                    "{:?} broke under motion below its margin",
                    answer.certificate
                );
            }
        }
        assert!(
            apart > 5_000 && through > 2_000,
            "{apart} apart, {through} crossing"
        );
    }

    /// The rotation part of the motion bound is the spectral norm of `R₁ − R₀` (up to rounding):
    /// never below the largest `|(R₁ − R₀)x|` over unit `x`, which lies perpendicular to the
    /// axis of `R₁R₀ᵀ` (mapped back by `R₀ᵀ`), and within `10⁻⁹` of it; about `1/√2` of the
    /// Frobenius norm used before. Angles from 10⁻¹⁰ to π, and matrices from quaternions that
    /// are off unit length by up to 10⁻⁸ (not rotations: the bound grows by their defect).
    #[test]
    fn rotation_change_is_the_largest_displacement_of_a_unit_vector() {
        let mut rng = ChaCha8Rng::seed_from_u64(21);
        for k in 0..4000 {
            let r0 = DMat3::from_quat(DQuat::from_axis_angle(
                unit(&mut rng),
                rng.random_range(0.0..6.3),
            ));
            let angle = 10f64.powf(rng.random_range(-10.0..0.5));
            let axis = unit(&mut rng);
            let turn = DQuat::from_axis_angle(axis, angle);
            let r1 = if k % 4 == 3 {
                // Not quite a rotation: a quaternion off unit length.
                let q = DQuat::from_mat3(&(DMat3::from_quat(turn) * r0));
                DMat3::from_quat(q * (1.0 + rng.random_range(-1e-8..1e-8)))
            } else {
                DMat3::from_quat(turn) * r0
            };
            let bound = rotation_change(&r0, &r1);
            // The worst direction: perpendicular to the turn's axis, before R₀.
            let u = axis.any_orthonormal_vector();
            let mut worst = 0.0f64;
            for j in 0..16 {
                let a = j as f64 * std::f64::consts::PI / 8.0;
                let w = u * a.cos() + axis.cross(u) * a.sin();
                let x = r0.transpose() * w;
                worst = worst.max(((r1 - r0) * x).length() / x.length());
                let y = unit(&mut rng);
                assert!(((r1 - r0) * y).length() <= bound, "{k}: random direction");
            }
            assert!(worst <= bound, "{k}: {worst} > {bound}");
            if k % 4 != 3 {
                assert!(
                    bound <= worst * (1.0 + 1e-9) + 1e-12,
                    "{k}: {bound} vs {worst}"
                );
            }
            assert!(bound <= frobenius(r1 - r0));
        }
    }

    #[test]
    fn motion_bound_bounds_every_point() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        for _ in 0..2000 {
            let (p0, p1) = (random_pose(&mut rng, 2.0), random_pose(&mut rng, 2.0));
            let p1 = if rng.random_bool(0.5) {
                nudged(&mut rng, &p0, 0.01, 0.01)
            } else {
                p1
            };
            let (ra, rb) = (rng.random_range(0.1..3.0), rng.random_range(0.1..3.0));
            let m = motion_bound(&p0, &p1, ra, rb);
            for _ in 0..20 {
                // A point of B within rb of its origin, and one of A within ra of its origin:
                // their distance changes by at most m.
                let xb = unit(&mut rng) * rng.random_range(0.0..=rb);
                let xa = unit(&mut rng) * rng.random_range(0.0..=ra);
                let d0 = (p0.transform_dpoint(xb) - xa).length();
                let d1 = (p1.transform_dpoint(xb) - xa).length();
                assert!((d1 - d0).abs() <= m, "{} > {m}", (d1 - d0).abs());
            }
        }
    }
}

//! Exact point-in-solid in the perturbed configuration of [`super::predicates`]: is a vertex of
//! A inside B + t, or a vertex of B (+ t) inside A?
//!
//! A segment from the point to a point beyond the other solid's bounding box is tested against
//! every triangle of that solid with the same perturbed predicates as the crossings (the
//! segment takes the role of an edge of the point's own mesh), so a point on the other surface,
//! or a segment through an edge or a vertex of it, is decided consistently with the crossings
//! of the pairs, and the signed count of crossings (the winding number) is exact. Triangles are
//! first rejected by their boxes around the segment, which runs along an axis of the other
//! solid's frame; a segment that misses the other solid's box is outside without the pass.
//! The pass over the other mesh runs only for a patch of crossing triangles that no crossing
//! edge anchors, and for a shell with no crossing whose box meets the other solid's box.

use super::predicates::{edge_edge_dir, side_of_a_point_dir, side_of_b_point_dir};
use crate::pose::DPose;
use crate::topology::Solid;
use glam::DVec3;

/// Whether the vertex `p` of A (in A's frame) lies inside B placed by `b_to_a` (and perturbed),
/// `b_bounds` being B's bounding box in its own frame.
pub(crate) fn a_point_in_b(
    p: DVec3,
    b: &Solid,
    b_to_a: &DPose,
    b_bounds: [DVec3; 2],
    dir: i8,
    sym: &mut bool,
) -> bool {
    // Along B's local x axis: in B's frame the segment is (nearly) axis-parallel.
    let rt = b_to_a.rotation.transpose();
    let pl = rt * (p - b_to_a.translation);
    let extent = (b_bounds[1] - b_bounds[0]).length();
    let length = (b_bounds[1].x - pl.x).max(0.0) + extent + 1.0;
    let f = p + b_to_a.rotation.x_axis * length;
    let scale = 1.0 + extent + pl.abs().max_element() + b_bounds[0].abs().max_element();
    let m = 1e-9 * scale;
    let (lo, hi) = (
        DVec3::new(pl.x - m, pl.y - m, pl.z - m),
        DVec3::new(pl.x + length + m, pl.y + m, pl.z + m),
    );
    if apart(b_bounds, [lo, hi]) {
        // The segment's box misses B's box, which holds every triangle's box: the loop below
        // would reject every triangle (a slab's corner far beside a body resting on it).
        return false;
    }
    let verts = b.vertices();
    let mut winding = 0i64;
    for tri in b.triangles() {
        let q = tri.map(|i| verts[i as usize].as_dvec3());
        let tmin = q[0].min(q[1]).min(q[2]);
        let tmax = q[0].max(q[1]).max(q[2]);
        if apart([tmin, tmax], [lo, hi]) {
            continue;
        }
        let t = tri.map(|i| b_to_a.transform_point(verts[i as usize]));
        let sp = side_of_a_point_dir(t[0], t[1], t[2], p, dir, sym);
        let sf = side_of_a_point_dir(t[0], t[1], t[2], f, dir, sym);
        if sp * sf >= 0 {
            continue;
        }
        let e0 = edge_edge_dir(p, f, t[0], t[1], dir, sym);
        if e0 != 0
            && edge_edge_dir(p, f, t[1], t[2], dir, sym) == e0
            && edge_edge_dir(p, f, t[2], t[0], dir, sym) == e0
        {
            // From the inner to the outer side: the segment leaves B here.
            winding += if sp < 0 { 1 } else { -1 };
        }
    }
    winding != 0
}

/// Whether the vertex `q` of B (placed in A's frame, then perturbed) lies inside A.
pub(crate) fn b_point_in_a(
    q: DVec3,
    a: &Solid,
    a_bounds: [DVec3; 2],
    dir: i8,
    sym: &mut bool,
) -> bool {
    let extent = (a_bounds[1] - a_bounds[0]).length();
    let length = (a_bounds[1].x - q.x).max(0.0) + extent + 1.0;
    let f = DVec3::new(q.x + length, q.y, q.z);
    // The segment runs along A's x axis: its box is [q, f].
    if apart(a_bounds, [q, f]) {
        // The segment misses A's box, which holds every triangle's box: the loop below would
        // reject every triangle.
        return false;
    }
    let verts = a.vertices();
    let mut winding = 0i64;
    for tri in a.triangles() {
        let t = tri.map(|i| verts[i as usize].as_dvec3());
        let tmin = t[0].min(t[1]).min(t[2]);
        let tmax = t[0].max(t[1]).max(t[2]);
        if apart([tmin, tmax], [q, f]) {
            continue;
        }
        let sq = side_of_b_point_dir(t[0], t[1], t[2], q, dir, sym);
        let sf = side_of_b_point_dir(t[0], t[1], t[2], f, dir, sym);
        if sq * sf >= 0 {
            continue;
        }
        let e0 = edge_edge_dir(t[0], t[1], q, f, dir, sym);
        if e0 != 0
            && edge_edge_dir(t[1], t[2], q, f, dir, sym) == e0
            && edge_edge_dir(t[2], t[0], q, f, dir, sym) == e0
        {
            winding += if sq < 0 { 1 } else { -1 };
        }
    }
    winding != 0
}

/// Whether boxes `a` and `b` (lower and upper corners) are apart along some axis: one's upper
/// corner below the other's lower one (touching boxes are not apart; a NaN separates nothing).
#[inline(always)]
fn apart(a: [DVec3; 2], b: [DVec3; 2]) -> bool {
    a[1].cmplt(b[0]).any() || a[0].cmpgt(b[1]).any()
}

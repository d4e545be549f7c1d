// Conservative f32 triangle-triangle test for the leaves of the GPU traversal (Greß & Zachmann
// 2004, section 4: the leaf pairs' primitive test; section 3: the brute-force m x n baseline uses
// the same function). Library only (no bindings, no entry points): the Rust side prepends this
// file to shaders/bvh_palette.wgsl and shaders/brute_force.wgsl, so both kernels run the very
// same code. Driven by crates/interfere_gpu/src/tri_tri.rs (constants and documentation).
//
// The test is a separating-axis test that may only answer "disjoint" with a proof: along an axis
// u the projections of the two triangles must be apart by more than eps * |u|_1, where eps
// (a relative part times the coordinate scale of the pair, plus an absolute part) dominates every
// f32 rounding error of the transform and of the projections. Any direction proves disjointness,
// so the rounding of the axes themselves does not matter. Axes (29): the 3 coordinate axes (the
// triangles' boxes), the 2 face normals, the 9 edge-edge cross products, and the 18 vectors from
// each vertex to its closest point on each edge of the other triangle (vertex-vertex and
// vertex-edge directions). Every closest-feature direction of two disjoint triangles is one of
// these, so a pair that survives all of them lies within a few eps of touching.
// NaN comparisons are false: non-finite input never proves disjointness.

struct MeshRef {
    node_base: u32,
    level_base: u32,
    depth: u32,
    tri_base: u32,
};

struct ObjectPair {
    // Columns of the rotation of b_to_a and its translation (w unused), in f32.
    rot0: vec4<f32>,
    rot1: vec4<f32>,
    rot2: vec4<f32>,
    trans: vec4<f32>,
    a: MeshRef,
    b: MeshRef,
};

fn tt_max3(v: vec3<f32>) -> f32 {
    return max(v.x, max(v.y, v.z));
}

fn tt_to_a(op: ObjectPair, v: vec3<f32>) -> vec3<f32> {
    return op.rot0.xyz * v.x + op.rot1.xyz * v.y + op.rot2.xyz * v.z + op.trans.xyz;
}

// True when the projections on u are apart by more than eps * |u|_1.
fn tt_separates(
    u: vec3<f32>,
    a0: vec3<f32>, a1: vec3<f32>, a2: vec3<f32>,
    b0: vec3<f32>, b1: vec3<f32>, b2: vec3<f32>,
    eps: f32,
) -> bool {
    let pa = vec3<f32>(dot(a0, u), dot(a1, u), dot(a2, u));
    let pb = vec3<f32>(dot(b0, u), dot(b1, u), dot(b2, u));
    let gap = max(min(pb.x, min(pb.y, pb.z)) - tt_max3(pa), min(pa.x, min(pa.y, pa.z)) - tt_max3(pb));
    return gap > eps * (abs(u.x) + abs(u.y) + abs(u.z));
}

// From the closest point of segment q0 q1 to p.
fn tt_point_segment(p: vec3<f32>, q0: vec3<f32>, q1: vec3<f32>) -> vec3<f32> {
    let e = q1 - q0;
    let w = p - q0;
    let ee = dot(e, e);
    var t = 0.0;
    if (ee > 0.0) {
        t = clamp(dot(w, e) / ee, 0.0, 1.0);
    }
    return w - t * e;
}

// True unless the axes prove the triangles disjoint.
fn tt_overlap(
    a0: vec3<f32>, a1: vec3<f32>, a2: vec3<f32>,
    b0: vec3<f32>, b1: vec3<f32>, b2: vec3<f32>,
    eps: f32,
) -> bool {
    // Boxes first (cheap, rejects most pairs).
    let amin = min(a0, min(a1, a2));
    let amax = max(a0, max(a1, a2));
    let bmin = min(b0, min(b1, b2));
    let bmax = max(b0, max(b1, b2));
    let g = max(bmin - amax, amin - bmax);
    if (g.x > eps || g.y > eps || g.z > eps) {
        return false;
    }
    var ea = array<vec3<f32>, 3>(a1 - a0, a2 - a1, a0 - a2);
    var eb = array<vec3<f32>, 3>(b1 - b0, b2 - b1, b0 - b2);
    if (tt_separates(cross(ea[0], ea[1]), a0, a1, a2, b0, b1, b2, eps)) {
        return false;
    }
    if (tt_separates(cross(eb[0], eb[1]), a0, a1, a2, b0, b1, b2, eps)) {
        return false;
    }
    for (var i = 0u; i < 3u; i = i + 1u) {
        for (var j = 0u; j < 3u; j = j + 1u) {
            if (tt_separates(cross(ea[i], eb[j]), a0, a1, a2, b0, b1, b2, eps)) {
                return false;
            }
        }
    }
    var va = array<vec3<f32>, 3>(a0, a1, a2);
    var vb = array<vec3<f32>, 3>(b0, b1, b2);
    for (var i = 0u; i < 3u; i = i + 1u) {
        for (var j = 0u; j < 3u; j = j + 1u) {
            let k = (j + 1u) % 3u;
            if (tt_separates(tt_point_segment(va[i], vb[j], vb[k]), a0, a1, a2, b0, b1, b2, eps)) {
                return false;
            }
            if (tt_separates(tt_point_segment(vb[i], va[j], va[k]), a0, a1, a2, b0, b1, b2, eps)) {
                return false;
            }
        }
    }
    return true;
}

// The leaf test of one object pair: a's triangle in A's frame, b's (local) placed by op; eps is
// rel * scale + abs with scale = |A|max + |B in A|max + 3 |B local|max + |t|max.
fn tri_pair_overlaps(
    op: ObjectPair,
    a0: vec3<f32>, a1: vec3<f32>, a2: vec3<f32>,
    l0: vec3<f32>, l1: vec3<f32>, l2: vec3<f32>,
    rel: f32,
    abs_eps: f32,
) -> bool {
    let b0 = tt_to_a(op, l0);
    let b1 = tt_to_a(op, l1);
    let b2 = tt_to_a(op, l2);
    let sa = tt_max3(max(abs(a0), max(abs(a1), abs(a2))));
    let sb = tt_max3(max(abs(b0), max(abs(b1), abs(b2))));
    let sl = tt_max3(max(abs(l0), max(abs(l1), abs(l2))));
    let scale = sa + sb + 3.0 * sl + tt_max3(abs(op.trans.xyz));
    return tt_overlap(a0, a1, a2, b0, b1, b2, rel * scale + abs_eps);
}

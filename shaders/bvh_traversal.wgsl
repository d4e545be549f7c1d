// Breadth-first simultaneous traversal of two balanced AABB trees (Greß & Zachmann 2004,
// section 4.2-4.4), driven by crates/interfere_gpu/src/bvh_traversal.rs. CPU reference:
// crates/interfere_geometry/src/bvh/bfs.rs (count_children / exclusive_scan / scatter_children).
//
// One traversal step:
//   count:   SAT-lite (appendix A: the 3 face axes of A and the 3 of B) of every pair of the
//            current list, in f32 with a conservative margin; writes the pair's number of child
//            pairs to counts[i] and to offsets[i] (the latter is scanned in place afterwards).
//   (scan.wgsl turns offsets into an exclusive prefix sum)
//   scatter: every pair with a non-zero count writes its child pairs at its offset; on the leaf
//            step (emit = 1) it writes the pair's triangle indices instead.

struct Node {
    min: vec3<f32>,
    first_child: u32,
    max: vec3<f32>,
    index: u32,
};

struct Params {
    // Columns of the rotation of b_to_a (xyz), in f32.
    rot0: vec4<f32>,
    rot1: vec4<f32>,
    rot2: vec4<f32>,
    // xyz: translation of b_to_a; w: 1.0 when the pose is finite, 0.0 otherwise.
    trans: vec4<f32>,
    // x: relative margin, y: absolute margin.
    margin: vec4<f32>,
    n: u32,
    groups_x: u32,
    capacity: u32,
    emit: u32,
    a_offset: u32,
    a_len: u32,
    a_below: u32,
    a_descends: u32,
    b_offset: u32,
    b_len: u32,
    b_below: u32,
    b_descends: u32,
};

@group(0) @binding(0) var<storage, read> nodes_a: array<Node>;
@group(0) @binding(1) var<storage, read> nodes_b: array<Node>;
@group(0) @binding(2) var<storage, read> pairs_in: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read_write> pairs_out: array<vec2<u32>>;
@group(0) @binding(4) var<storage, read_write> counts: array<u32>;
@group(0) @binding(5) var<storage, read_write> offsets: array<u32>;
@group(0) @binding(6) var<uniform> params: Params;

const WG: u32 = 64u;

fn max3(v: vec3<f32>) -> f32 {
    return max(v.x, max(v.y, v.z));
}

// Conservative SAT-lite: reports "disjoint" only when an axis separates the boxes by more than
// margin.x * scale + margin.y, which exceeds every f32 rounding error of the test (and the
// rounding of the pose to f32), so no pair the f64 CPU test accepts is ever rejected here.
// Non-finite values (NaN comparisons are false) report overlap.
fn overlaps(a: Node, b: Node) -> bool {
    if (params.trans.w == 0.0) {
        return true;
    }
    let r0 = params.rot0.xyz;
    let r1 = params.rot1.xyz;
    let r2 = params.rot2.xyz;
    let t = params.trans.xyz;
    let ca = (a.min + a.max) * 0.5;
    let ha = (a.max - a.min) * 0.5;
    let cb = (b.min + b.max) * 0.5;
    let hb = (b.max - b.min) * 0.5;
    let d = r0 * cb.x + r1 * cb.y + r2 * cb.z + t - ca;
    let scale = max3(abs(ca)) + 3.0 * max3(abs(cb)) + max3(abs(t)) + 3.0 * (max3(ha) + max3(hb));
    let eps = params.margin.x * scale + params.margin.y;
    // A's axes: B's radius is |R| hb.
    let rb = abs(r0) * hb.x + abs(r1) * hb.y + abs(r2) * hb.z;
    let s1 = abs(d) - (ha + rb);
    if (s1.x > eps || s1.y > eps || s1.z > eps) {
        return false;
    }
    // B's axes: offset R^T d, A's radius |R|^T ha.
    let dt = vec3<f32>(dot(r0, d), dot(r1, d), dot(r2, d));
    let ra = vec3<f32>(dot(abs(r0), ha), dot(abs(r1), ha), dot(abs(r2), ha));
    let s2 = abs(dt) - (hb + ra);
    return !(s2.x > eps || s2.y > eps || s2.z > eps);
}

fn child_count(i: u32, descends: u32, below: u32) -> u32 {
    if (descends == 0u) {
        return 1u;
    }
    let first = 2u * i;
    return min(first + 2u, below) - min(first, below);
}

fn child_first(i: u32, descends: u32) -> u32 {
    if (descends == 0u) {
        return i;
    }
    return 2u * i;
}

fn pair_index(wid: vec3<u32>, lid: vec3<u32>) -> u32 {
    return (wid.y * params.groups_x + wid.x) * WG + lid.x;
}

@compute @workgroup_size(64)
fn count(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let i = pair_index(wid, lid);
    if (i >= params.n) {
        return;
    }
    let p = pairs_in[i];
    var c = 0u;
    if (p.x < params.a_len && p.y < params.b_len) {
        let a = nodes_a[params.a_offset + p.x];
        let b = nodes_b[params.b_offset + p.y];
        if (overlaps(a, b)) {
            c = child_count(p.x, params.a_descends, params.a_below)
                * child_count(p.y, params.b_descends, params.b_below);
        }
    }
    counts[i] = c;
    offsets[i] = c;
}

@compute @workgroup_size(64)
fn scatter(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let i = pair_index(wid, lid);
    if (i >= params.n) {
        return;
    }
    let c = counts[i];
    if (c == 0u) {
        return;
    }
    let p = pairs_in[i];
    if (params.emit != 0u) {
        let k = offsets[i];
        if (k < params.capacity) {
            let a = nodes_a[params.a_offset + p.x];
            let b = nodes_b[params.b_offset + p.y];
            pairs_out[k] = vec2<u32>(a.index, b.index);
        }
        return;
    }
    let na = child_count(p.x, params.a_descends, params.a_below);
    let nb = child_count(p.y, params.b_descends, params.b_below);
    let fa = child_first(p.x, params.a_descends);
    let fb = child_first(p.y, params.b_descends);
    var k = offsets[i];
    for (var x = 0u; x < na; x = x + 1u) {
        for (var y = 0u; y < nb; y = y + 1u) {
            // Past the capacity the host reports an overflow; never write out of bounds.
            if (k < params.capacity) {
                pairs_out[k] = vec2<u32>(fa + x, fb + y);
            }
            k = k + 1u;
        }
    }
}

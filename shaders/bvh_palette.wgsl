// Breadth-first traversal of many object pairs at once with the triangle tests at the leaves
// (Greß & Zachmann 2004, sections 4.2-4.4, the leaf tests of section 4, and the entrance level
// of section 5), driven by crates/interfere_gpu/src/bvh_traversal/palette.rs. Prepended with
// shaders/tri_tri.wgsl (ObjectPair, MeshRef, tri_pair_overlaps).
//
// All meshes of a set share one node array, one level-offset array and one triangle array; a
// palette entry (ObjectPair) holds the relative pose of one pair and where its two meshes live.
// Every list entry is (node of A in its level, node of B in its level, object pair). Step k pairs
// level min(k, depth(A)) with min(k, depth(B)) of each object pair, as in bvh::bfs.
//
//   count:   SAT-lite of each entry (A's boxes grown by `inflate` on steps below inflate_below),
//            writing its child count to offsets[i] (thread n writes offsets[n] = 0, so the scan
//            of n + 1 values leaves the total in offsets[n]). An entry whose object pair is at its
//            leaf step runs the triangle test instead and appends a hit (object pair, triangle of
//            A, triangle of B) with an atomic counter (hits[0]); hits start at word 4.
//   (scan.wgsl)
//   scatter: every entry with offsets[i+1] > offsets[i] writes its children at offsets[i].

struct Node {
    min: vec3<f32>,
    first_child: u32,
    max: vec3<f32>,
    index: u32,
};

struct Pair {
    a: u32,
    b: u32,
    obj: u32,
};

struct Params {
    n: u32,
    groups_x: u32,
    capacity: u32,
    step: u32,
    hit_capacity: u32,
    inflate_below: u32,
    pad0: u32,
    pad1: u32,
    // x: box relative margin, y: box absolute margin, z: triangle relative eps, w: absolute.
    margin: vec4<f32>,
    // x: how much A's boxes grow on steps below inflate_below.
    inflate: vec4<f32>,
};

@group(0) @binding(0) var<storage, read> nodes: array<Node>;
@group(0) @binding(1) var<storage, read> levels: array<u32>;
@group(0) @binding(2) var<storage, read> tris: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> palette: array<ObjectPair>;
@group(0) @binding(4) var<storage, read> pairs_in: array<Pair>;
@group(0) @binding(5) var<storage, read_write> pairs_out: array<Pair>;
@group(0) @binding(6) var<storage, read_write> offsets: array<u32>;
@group(0) @binding(7) var<storage, read_write> hits: array<atomic<u32>>;
@group(0) @binding(8) var<uniform> params: Params;

const WG: u32 = 64u;

struct Level {
    offset: u32,
    len: u32,
    below: u32,
    descends: bool,
};

fn level_of(m: MeshRef) -> Level {
    let l = min(params.step, m.depth);
    var out: Level;
    out.offset = levels[m.level_base + l];
    out.len = levels[m.level_base + l + 1u] - out.offset;
    out.descends = params.step < m.depth;
    out.below = 0u;
    if (out.descends) {
        out.below = levels[m.level_base + l + 2u] - levels[m.level_base + l + 1u];
    }
    return out;
}

// Conservative SAT-lite (as in bvh_traversal.wgsl), A's half extents grown by `grow`.
fn boxes_overlap(op: ObjectPair, a: Node, b: Node, grow: f32) -> bool {
    let r0 = op.rot0.xyz;
    let r1 = op.rot1.xyz;
    let r2 = op.rot2.xyz;
    let t = op.trans.xyz;
    let ca = (a.min + a.max) * 0.5;
    let ha = (a.max - a.min) * 0.5 + vec3<f32>(grow);
    let cb = (b.min + b.max) * 0.5;
    let hb = (b.max - b.min) * 0.5;
    let d = r0 * cb.x + r1 * cb.y + r2 * cb.z + t - ca;
    let scale = tt_max3(abs(ca)) + 3.0 * tt_max3(abs(cb)) + tt_max3(abs(t))
        + 3.0 * (tt_max3(ha) + tt_max3(hb));
    let eps = params.margin.x * scale + params.margin.y;
    let rb = abs(r0) * hb.x + abs(r1) * hb.y + abs(r2) * hb.z;
    let s1 = abs(d) - (ha + rb);
    if (s1.x > eps || s1.y > eps || s1.z > eps) {
        return false;
    }
    let dt = vec3<f32>(dot(r0, d), dot(r1, d), dot(r2, d));
    let ra = vec3<f32>(dot(abs(r0), ha), dot(abs(r1), ha), dot(abs(r2), ha));
    let s2 = abs(dt) - (hb + ra);
    return !(s2.x > eps || s2.y > eps || s2.z > eps);
}

fn children(i: u32, lv: Level) -> u32 {
    if (!lv.descends) {
        return 1u;
    }
    return min(2u * i + 2u, lv.below) - min(2u * i, lv.below);
}

fn first_child(i: u32, lv: Level) -> u32 {
    return select(i, 2u * i, lv.descends);
}

fn vertex(tri: u32, k: u32) -> vec3<f32> {
    return tris[3u * tri + k].xyz;
}

fn entry_index(wid: vec3<u32>, lid: vec3<u32>) -> u32 {
    return (wid.y * params.groups_x + wid.x) * WG + lid.x;
}

@compute @workgroup_size(64)
fn count(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let i = entry_index(wid, lid);
    if (i == params.n) {
        offsets[i] = 0u;
    }
    if (i >= params.n) {
        return;
    }
    let p = pairs_in[i];
    let op = palette[p.obj];
    let la = level_of(op.a);
    let lb = level_of(op.b);
    var c = 0u;
    if (p.a < la.len && p.b < lb.len) {
        let na = nodes[op.a.node_base + la.offset + p.a];
        let nb = nodes[op.b.node_base + lb.offset + p.b];
        let grow = select(0.0, params.inflate.x, params.step < params.inflate_below);
        if (boxes_overlap(op, na, nb, grow)) {
            if (!la.descends && !lb.descends) {
                let ta = op.a.tri_base + na.index;
                let tb = op.b.tri_base + nb.index;
                if (tri_pair_overlaps(
                    op,
                    vertex(ta, 0u), vertex(ta, 1u), vertex(ta, 2u),
                    vertex(tb, 0u), vertex(tb, 1u), vertex(tb, 2u),
                    params.margin.z, params.margin.w,
                )) {
                    let k = atomicAdd(&hits[0], 1u);
                    if (k < params.hit_capacity) {
                        atomicStore(&hits[4u + 3u * k], p.obj);
                        atomicStore(&hits[5u + 3u * k], na.index);
                        atomicStore(&hits[6u + 3u * k], nb.index);
                    }
                }
            } else {
                c = children(p.a, la) * children(p.b, lb);
            }
        }
    }
    offsets[i] = c;
}

@compute @workgroup_size(64)
fn scatter(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let i = entry_index(wid, lid);
    if (i >= params.n) {
        return;
    }
    let start = offsets[i];
    if (offsets[i + 1u] == start) {
        return;
    }
    let p = pairs_in[i];
    let op = palette[p.obj];
    let la = level_of(op.a);
    let lb = level_of(op.b);
    let na = children(p.a, la);
    let nb = children(p.b, lb);
    let fa = first_child(p.a, la);
    let fb = first_child(p.b, lb);
    var k = start;
    for (var x = 0u; x < na; x = x + 1u) {
        for (var y = 0u; y < nb; y = y + 1u) {
            // Past the capacity the host reports an overflow; never write out of bounds.
            if (k < params.capacity) {
                pairs_out[k] = Pair(fa + x, fb + y, p.obj);
            }
            k = k + 1u;
        }
    }
}

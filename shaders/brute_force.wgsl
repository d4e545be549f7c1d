// Brute-force m x n triangle-pair kernel (Greß & Zachmann 2004, section 3: the all-pairs baseline
// the hierarchies accelerate), driven by crates/interfere_gpu/src/brute_force.rs. Prepended with
// shaders/tri_tri.wgsl: every pair runs the same conservative f32 test as the traversal's leaves
// (tri_pair_overlaps), so both report the same set. One dispatch per object pair; thread (x, y)
// tests triangle x of A against triangle y of B; hits are appended with an atomic counter in
// hits[0] (hits start at word 4, three words each: object pair, triangle of A, triangle of B).

struct Params {
    obj: u32,
    m: u32,
    n: u32,
    hit_capacity: u32,
    // z: triangle relative eps, w: absolute.
    margin: vec4<f32>,
};

@group(0) @binding(0) var<storage, read> tris: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> palette: array<ObjectPair>;
@group(0) @binding(2) var<storage, read_write> hits: array<atomic<u32>>;
@group(0) @binding(3) var<uniform> params: Params;

fn vertex(tri: u32, k: u32) -> vec3<f32> {
    return tris[3u * tri + k].xyz;
}

@compute @workgroup_size(8, 8)
fn all_pairs(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let j = gid.y;
    if (i >= params.m || j >= params.n) {
        return;
    }
    let op = palette[params.obj];
    let ta = op.a.tri_base + i;
    let tb = op.b.tri_base + j;
    if (tri_pair_overlaps(
        op,
        vertex(ta, 0u), vertex(ta, 1u), vertex(ta, 2u),
        vertex(tb, 0u), vertex(tb, 1u), vertex(tb, 2u),
        params.margin.z, params.margin.w,
    )) {
        let k = atomicAdd(&hits[0], 1u);
        if (k < params.hit_capacity) {
            atomicStore(&hits[4u + 3u * k], params.obj);
            atomicStore(&hits[5u + 3u * k], i);
            atomicStore(&hits[6u + 3u * k], j);
        }
    }
}

// Compute kernels that keep a whole-scene CInDeR run (shaders/cinder_scene.wgsl, Knott & Pai
// 2003) on the GPU between its views and after them, driven by
// crates/interfere_gpu/src/cinder/scene.rs:
//   gate:    after the view along z, when the views along x and y are only wanted if z found no
//            interfering pair (CinderViews::ZThenXy): ORs the ordered-pair bitset and writes
//            the indirect draw arguments of the later views' passes (their full vertex counts,
//            or zero), and a flag saying whether they ran;
//   extract: after all views, one flag per requested object pair (i, j): whether either
//            ordered bit (i, j) or (j, i) is set, so a caller gets its pairs' answers without
//            reading the bitset back (and the triangle traversal can start from them on the GPU).

struct Control {
    // Words of the pair bitset, requested pairs, drawn objects.
    words: u32,
    pairs: u32,
    objects: u32,
    // Vertices of the triangle and edge draws.
    solid_vertices: u32,
    edge_vertices: u32,
    // extract: invocations per dispatch row.
    row: u32,
    pad1: u32,
    pad2: u32,
};

@group(0) @binding(0) var<storage, read> pair_bits: array<u32>;
// Three draws of four words (triangles, edges, resolve), then the flag (1: the views ran).
@group(0) @binding(1) var<storage, read_write> draw_args: array<u32>;
// Per requested pair: the two objects' indices among the drawn objects (NONE: not drawn).
@group(0) @binding(2) var<storage, read> pair_ids: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read_write> flags: array<u32>;
@group(0) @binding(4) var<uniform> control: Control;

const NONE: u32 = 0xffffffffu;

var<workgroup> seen: atomic<u32>;

@compute @workgroup_size(256)
fn gate(@builtin(local_invocation_id) lid: vec3<u32>) {
    for (var w = lid.x; w < control.words; w += 256u) {
        if (pair_bits[w] != 0u) {
            atomicOr(&seen, 1u);
        }
    }
    workgroupBarrier();
    let found = atomicLoad(&seen);
    if (lid.x == 0u) {
        let run = select(1u, 0u, found != 0u);
        draw_args[0] = control.solid_vertices * run;
        draw_args[1] = 1u;
        draw_args[2] = 0u;
        draw_args[3] = 0u;
        draw_args[4] = control.edge_vertices * run;
        draw_args[5] = 1u;
        draw_args[6] = 0u;
        draw_args[7] = 0u;
        draw_args[8] = 3u * run;
        draw_args[9] = 1u;
        draw_args[10] = 0u;
        draw_args[11] = 0u;
        draw_args[12] = run;
    }
}

fn bit(i: u32, j: u32) -> u32 {
    let b = i * control.objects + j;
    return (pair_bits[b >> 5u] >> (b & 31u)) & 1u;
}

@compute @workgroup_size(64)
fn extract(@builtin(global_invocation_id) gid: vec3<u32>) {
    let k = gid.x + gid.y * control.row;
    if (k >= control.pairs) {
        return;
    }
    let ids = pair_ids[k];
    if (ids.x == NONE || ids.y == NONE) {
        flags[k] = 0u;
        return;
    }
    flags[k] = bit(ids.x, ids.y) | bit(ids.y, ids.x);
}

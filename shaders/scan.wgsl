// Exclusive prefix sum over u32 (Blelloch's work-efficient scan), driven by
// crates/interfere_gpu/src/scan.rs. Used by the Greß–Zachmann traversal (section 4) to turn
// per-pair child counts into write offsets for the next level's pair list.
//
// scan_blocks: each workgroup scans BLOCK = 2 * WG elements in place (exclusive) and writes the
//              block's total to block_sums[group].
// add_offsets: adds the (already scanned) block_sums[group] to every element of the block.

const WG: u32 = 256u;
const BLOCK: u32 = 512u;

struct Params {
    n: u32,
    groups_x: u32,
    _pad0: u32,
    _pad1: u32,
};

@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@group(0) @binding(1) var<storage, read_write> block_sums: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

var<workgroup> tile: array<u32, 512>;

fn group_index(wid: vec3<u32>) -> u32 {
    return wid.y * params.groups_x + wid.x;
}

@compute @workgroup_size(256)
fn scan_blocks(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let group = group_index(wid);
    let base = group * BLOCK;
    let t = lid.x;
    let a = base + 2u * t;
    let b = a + 1u;
    // Uniform control flow: every invocation reaches every barrier, out-of-range lanes load 0.
    var va = 0u;
    var vb = 0u;
    if (a < params.n) { va = data[a]; }
    if (b < params.n) { vb = data[b]; }
    tile[2u * t] = va;
    tile[2u * t + 1u] = vb;

    // Up-sweep (reduce).
    var offset = 1u;
    for (var d = BLOCK >> 1u; d > 0u; d = d >> 1u) {
        workgroupBarrier();
        if (t < d) {
            let ai = offset * (2u * t + 1u) - 1u;
            let bi = offset * (2u * t + 2u) - 1u;
            tile[bi] = tile[bi] + tile[ai];
        }
        offset = offset << 1u;
    }
    workgroupBarrier();
    if (t == 0u) {
        block_sums[group] = tile[BLOCK - 1u];
        tile[BLOCK - 1u] = 0u;
    }
    // Down-sweep.
    for (var d = 1u; d < BLOCK; d = d << 1u) {
        offset = offset >> 1u;
        workgroupBarrier();
        if (t < d) {
            let ai = offset * (2u * t + 1u) - 1u;
            let bi = offset * (2u * t + 2u) - 1u;
            let x = tile[ai];
            tile[ai] = tile[bi];
            tile[bi] = tile[bi] + x;
        }
    }
    workgroupBarrier();
    if (a < params.n) { data[a] = tile[2u * t]; }
    if (b < params.n) { data[b] = tile[2u * t + 1u]; }
}

@compute @workgroup_size(256)
fn add_offsets(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let group = group_index(wid);
    let add = block_sums[group];
    let a = group * BLOCK + 2u * lid.x;
    let b = a + 1u;
    if (a < params.n) { data[a] = data[a] + add; }
    if (b < params.n) { data[b] = data[b] + add; }
}

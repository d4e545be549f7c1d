// Control kernels of the palette traversal without readbacks (Greß & Zachmann 2004, section
// 4.4: the next level's list length is the prefix sum of the child counts), driven by
// crates/interfere_gpu/src/bvh_traversal/palette.rs. They run between the passes of
// consecutive traversal steps, so the list length never goes to the CPU and back:
//   seed:    compacts one flag per object pair (all ones, or CInDeR's answer) into the first
//            list, the roots (0, 0, k) of the flagged pairs in order, then sets up that list;
//   begin:   sets up a list of `control.pairs` entries already in place (an entrance list);
//   advance: after a step's count, scan and scatter passes, reads the scan total (offsets[n]),
//            records the first overflow, and sets up the next list (clamped to the capacity).
// "Setting up" a list of n entries writes n and the step into the traversal's Params, the
// workgroup counts of the next count and scatter passes (n + 1 invocations, 64 per group) and,
// for every level of the indirect prefix sum (shaders/scan.wgsl), its length and workgroup
// counts; an empty list gets zero workgroups everywhere, so the remaining steps cost nothing.

// Same layout as Params in shaders/bvh_palette.wgsl.
struct StepParams {
    n: u32,
    groups_x: u32,
    capacity: u32,
    step: u32,
    hit_capacity: u32,
    inflate_below: u32,
    pad0: u32,
    pad1: u32,
    margin: vec4<f32>,
    inflate: vec4<f32>,
};

struct Control {
    // Levels of the indirect scan, and words between two levels' params.
    scan_levels: u32,
    scan_stride: u32,
    // Workgroups per dispatch dimension.
    max_groups: u32,
    // seed: object pairs (flags); begin: entries of the list in place.
    pairs: u32,
    // The step the traversal starts at (list length i is the i-th step's).
    first_step: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
};

@group(0) @binding(0) var<storage, read> offsets: array<u32>;
@group(0) @binding(1) var<storage, read_write> step_params: StepParams;
@group(0) @binding(2) var<storage, read_write> scan_params: array<u32>;
// [0..3]: count/scatter workgroups (x, y, z); [4 + 4 l ..]: scan level l.
@group(0) @binding(3) var<storage, read_write> args: array<u32>;
// [0]: 1 + the first step whose next list overflowed (0: none); [1]: the length it needed;
// [4 + i]: the length of the list tested at step first_step + i.
@group(0) @binding(4) var<storage, read_write> info: array<u32>;
@group(0) @binding(5) var<storage, read> flags: array<u32>;
@group(0) @binding(6) var<storage, read_write> list: array<u32>;
@group(0) @binding(7) var<uniform> control: Control;

const WG: u32 = 64u;
const BLOCK: u32 = 512u;
const LENGTHS: u32 = 4u;

var<workgroup> tile: array<u32, 256>;

// Workgroup counts for `groups` groups at args[at..], split over two dimensions; returns x.
fn shape(groups: u32, at: u32) -> u32 {
    let x = min(groups, control.max_groups);
    var y = 0u;
    if (x > 0u) {
        y = (groups + x - 1u) / x;
    }
    args[at] = x;
    args[at + 1u] = y;
    args[at + 2u] = 1u;
    return x;
}

fn overflow(step: u32, needed: u32) {
    if (info[0] == 0u) {
        info[0] = step + 1u;
        info[1] = needed;
    }
}

// Sets up a list of `wanted` entries at step `step` (clamped to the capacity).
fn set_list(wanted: u32, step: u32) {
    let n = min(wanted, step_params.capacity);
    step_params.n = n;
    step_params.step = step;
    info[LENGTHS + step - control.first_step] = n;
    var groups = 0u;
    if (n > 0u) {
        groups = (n + WG) / WG;
    }
    step_params.groups_x = shape(groups, 0u);
    var size = n + 1u;
    for (var l = 0u; l < control.scan_levels; l += 1u) {
        let g = (size + BLOCK - 1u) / BLOCK;
        let x = shape(select(0u, g, n > 0u), 4u + 4u * l);
        scan_params[l * control.scan_stride] = size;
        scan_params[l * control.scan_stride + 1u] = x;
        size = g;
    }
}

@compute @workgroup_size(1)
fn advance() {
    let n = step_params.n;
    let step = step_params.step;
    var total = 0u;
    if (n > 0u) {
        total = offsets[n];
    }
    if (total > step_params.capacity) {
        overflow(step, total);
    }
    set_list(total, step + 1u);
}

@compute @workgroup_size(1)
fn begin() {
    if (control.pairs > step_params.capacity) {
        overflow(control.first_step, control.pairs);
    }
    set_list(control.pairs, control.first_step);
}

@compute @workgroup_size(256)
fn seed(@builtin(local_invocation_id) lid: vec3<u32>) {
    let t = lid.x;
    var base = 0u;
    let chunks = (control.pairs + 255u) / 256u;
    for (var c = 0u; c < chunks; c += 1u) {
        let k = c * 256u + t;
        var f = 0u;
        if (k < control.pairs && flags[k] != 0u) {
            f = 1u;
        }
        tile[t] = f;
        workgroupBarrier();
        // Inclusive Hillis-Steele scan of the chunk's flags.
        for (var d = 1u; d < 256u; d = d << 1u) {
            var v = tile[t];
            if (t >= d) {
                v += tile[t - d];
            }
            workgroupBarrier();
            tile[t] = v;
            workgroupBarrier();
        }
        if (f == 1u) {
            let at = base + tile[t] - 1u;
            if (at < step_params.capacity) {
                list[3u * at] = 0u;
                list[3u * at + 1u] = 0u;
                list[3u * at + 2u] = k;
            }
        }
        base += tile[255];
        workgroupBarrier();
    }
    if (t == 0u) {
        if (base > step_params.capacity) {
            overflow(control.first_step, base);
        }
        set_list(base, control.first_step);
    }
}

// CInDeR for a whole scene in one run (Knott & Pai 2003, sections 4-6), driven by
// crates/interfere_gpu/src/cinder/scene.rs.
//
// Instead of one depth value and one stencil count per pixel (which only sees the nearest edge
// point, Figure 6, and needs one counting pass per object to identify the penetrated object,
// section 5.2), every ray keeps a per-pixel list of everything it meets:
//   build pass:   triangles append (depth, object, front/back) and edges, offset outward along
//                 their vertex normals in the vertex shader (section 6.3), append (depth, object,
//                 edge);
//   resolve pass: a full-screen triangle; per pixel, for every edge point of object i and every
//                 object j met by the ray, the stencil count of section 4.1 restricted to j
//                 (front minus back faces of j in front of the point) is computed. A positive
//                 count identifies the pair (i, j) (section 5): its bit is set in an ordered pair
//                 bitset and the pixel, depth and pair are appended for localization (section
//                 6.2). A negative count at an edge point, or a non-zero count of j over the whole
//                 ray, means j is not closed (section 4.1). The pass is inside an occlusion query
//                 (section 6.1): a pixel survives only if it found something, so the host reads
//                 the results back only when the query counted samples.

struct View {
    // Clip coordinates: (dot(row_x.xyz, p) + row_x.w, dot(row_y..), dot(row_z..), 1).
    row_x: vec4<f32>,
    row_y: vec4<f32>,
    row_z: vec4<f32>,
    // x: edge offset along the vertex normal (world units).
    offset: vec4<f32>,
    // (width, height, objects, point capacity)
    dims: vec4<u32>,
    // (node capacity, unused...)
    caps: vec4<u32>,
};

@group(0) @binding(0) var<uniform> view: View;
// Per pixel: 1 + index of the newest node, 0 for none.
@group(0) @binding(1) var<storage, read_write> heads: array<atomic<u32>>;
// Nodes, three words each: depth bits, tag = object << 2 | kind (0 edge, 1 front, 2 back), next.
@group(0) @binding(2) var<storage, read_write> nodes: array<u32>;
// [0] nodes appended, [1] points found, [2] self hits, [3] saturated pixels.
@group(0) @binding(3) var<storage, read_write> counters: array<atomic<u32>>;
// Ordered pair bitset: bit (i * objects + j) = an edge point of i lies inside j.
@group(0) @binding(4) var<storage, read_write> pair_bits: array<atomic<u32>>;
// Per object bit: not closed (negative or unbalanced crossing counts).
@group(0) @binding(5) var<storage, read_write> open_bits: array<atomic<u32>>;
// Points, five words each: pixel x, pixel y, depth bits, penetrating, penetrated.
@group(0) @binding(6) var<storage, read_write> points: array<u32>;

const KIND_EDGE: u32 = 0u;
const KIND_FRONT: u32 = 1u;
const KIND_BACK: u32 = 2u;
// Longest list a pixel resolves; longer lists are counted as saturated.
const MAX_LIST: u32 = 64u;

fn project(p: vec3<f32>) -> vec4<f32> {
    let q = vec4<f32>(p, 1.0);
    return vec4<f32>(dot(view.row_x, q), dot(view.row_y, q), dot(view.row_z, q), 1.0);
}

fn pixel_index(position: vec4<f32>) -> u32 {
    return u32(position.x) + u32(position.y) * view.dims.x;
}

fn append(pixel: u32, depth: f32, tag: u32) {
    let k = atomicAdd(&counters[0], 1u);
    if (k >= view.caps.x) {
        return;
    }
    let previous = atomicExchange(&heads[pixel], k + 1u);
    nodes[3u * k] = bitcast<u32>(depth);
    nodes[3u * k + 1u] = tag;
    nodes[3u * k + 2u] = previous;
}

struct SolidOut {
    @builtin(position) position: vec4<f32>,
    @location(0) @interpolate(flat) object: u32,
};

@vertex
fn vs_solid(@location(0) p: vec3<f32>, @location(1) object: u32) -> SolidOut {
    var out: SolidOut;
    out.position = project(p);
    out.object = object;
    return out;
}

@fragment
fn fs_solid(in: SolidOut, @builtin(front_facing) front: bool) -> @location(0) u32 {
    var kind = KIND_BACK;
    if (front) {
        kind = KIND_FRONT;
    }
    append(pixel_index(in.position), in.position.z, (in.object << 2u) | kind);
    return 0u;
}

@vertex
fn vs_edge(
    @location(0) p: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) object: u32,
) -> SolidOut {
    var out: SolidOut;
    out.position = project(p + normal * view.offset.x);
    out.object = object;
    return out;
}

@fragment
fn fs_edge(in: SolidOut) -> @location(0) u32 {
    append(pixel_index(in.position), in.position.z, (in.object << 2u) | KIND_EDGE);
    return 0u;
}

@vertex
fn vs_full(@builtin(vertex_index) v: u32) -> @builtin(position) vec4<f32> {
    let x = f32((v & 1u) * 4u) - 1.0;
    let y = f32((v >> 1u) * 4u) - 1.0;
    return vec4<f32>(x, y, 0.0, 1.0);
}

fn sign_of(tag: u32) -> i32 {
    let kind = tag & 3u;
    if (kind == KIND_FRONT) {
        return 1;
    }
    if (kind == KIND_BACK) {
        return -1;
    }
    return 0;
}

@fragment
fn fs_resolve(@builtin(position) position: vec4<f32>) -> @location(0) u32 {
    let x = u32(position.x);
    let y = u32(position.y);
    let pixel = x + y * view.dims.x;
    var depth: array<f32, MAX_LIST>;
    var tag: array<u32, MAX_LIST>;
    var n = 0u;
    var at = atomicLoad(&heads[pixel]);
    while (at != 0u && n < MAX_LIST) {
        let k = at - 1u;
        depth[n] = bitcast<f32>(nodes[3u * k]);
        tag[n] = nodes[3u * k + 1u];
        at = nodes[3u * k + 2u];
        n += 1u;
    }
    if (at != 0u) {
        atomicAdd(&counters[3], 1u);
    }
    var found = 0u;
    for (var t = 0u; t < n; t += 1u) {
        if ((tag[t] & 3u) == KIND_EDGE) {
            continue;
        }
        let j = tag[t] >> 2u;
        // Handle each object once: at its first triangle node in the list.
        var seen = false;
        for (var s = 0u; s < t; s += 1u) {
            if ((tag[s] & 3u) != KIND_EDGE && (tag[s] >> 2u) == j) {
                seen = true;
                break;
            }
        }
        if (seen) {
            continue;
        }
        // Over the whole ray a closed surface is entered as often as it is left.
        var total = 0;
        for (var s = t; s < n; s += 1u) {
            if ((tag[s] >> 2u) == j) {
                total += sign_of(tag[s]);
            }
        }
        if (total != 0) {
            atomicOr(&open_bits[j >> 5u], 1u << (j & 31u));
            found = j + 1u;
        }
        // The stencil count of section 4.1, for object j only, at every edge point of the ray.
        for (var e = 0u; e < n; e += 1u) {
            if ((tag[e] & 3u) != KIND_EDGE) {
                continue;
            }
            let i = tag[e] >> 2u;
            let d = depth[e];
            var count = 0;
            for (var s = t; s < n; s += 1u) {
                if ((tag[s] >> 2u) == j && depth[s] < d) {
                    count += sign_of(tag[s]);
                }
            }
            if (count == 0) {
                continue;
            }
            if (count < 0) {
                atomicOr(&open_bits[j >> 5u], 1u << (j & 31u));
                found = j + 1u;
                continue;
            }
            if (i == j) {
                // Self-interference: what the edge offset of section 6.3 prevents.
                atomicAdd(&counters[2], 1u);
                continue;
            }
            let bit = i * view.dims.z + j;
            atomicOr(&pair_bits[bit >> 5u], 1u << (bit & 31u));
            let p = atomicAdd(&counters[1], 1u);
            if (p < view.dims.w) {
                points[5u * p] = x;
                points[5u * p + 1u] = y;
                points[5u * p + 2u] = bitcast<u32>(d);
                points[5u * p + 3u] = i;
                points[5u * p + 4u] = j;
            }
            found = j + 1u;
        }
    }
    if (found == 0u) {
        discard;
    }
    return found;
}

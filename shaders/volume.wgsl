// Uniformly ray-sampled intersection volume of two closed meshes (Wang, Faure & Pai 2012,
// section 2.2, Eq. 1 and Eq. 2), driven by crates/interfere_gpu/src/volume.rs. CPU reference:
// crates/interfere_geometry/src/volume/{uniform.rs, ray_bvh.rs}.
//
// One invocation per axis-parallel line of a batch of mesh pairs. The pair table holds, per
// pair, its lines (axis k, row i, column j, in the CPU's order k, then i, then j, numbered from
// the pair's first line), where its vertices, refitted nodes and line coordinates are in the
// shared buffers, and where its two meshes' triangles and level offsets are. Both meshes of a
// pair are given in that pair's local frame (A's frame shifted to the centre of the overlap
// box), rounded to f32 on the host, with node boxes refitted over those f32 vertices. An
// invocation finds its pair by binary search over the pairs' first lines, then:
//   1. walks each mesh's balanced AABB tree depth-first with an explicit stack, testing the
//      line's (u, v) against the node boxes (padded to cover the rounding to f32);
//   2. tests leaf triangles with three 2-D edge functions, each evaluated from the endpoint
//      with the lower vertex index (so the two triangles of an edge compute the same bits with
//      opposite signs) and a simulation-of-simplicity tie-break for exact zeros (the CPU's
//      rule): a line through a shared edge or vertex is counted once. Each edge function also
//      gets a rigorous bound on its difference from the exact f64 value the CPU computes; a
//      triangle whose decision depends on a sign within that bound marks the line UNCERTAIN;
//   3. keeps up to CAP hits (overflow marks the line OVERFLOW), sorts them by depth (leaving
//      before entering at equal depth, as the CPU), marks the line UNCERTAIN when two
//      neighbouring depths are within their error bounds (their exact order is unknown), and
//      UNBALANCED when a mesh's entering and leaving hits do not cancel;
//   4. sweeps the sorted hits with one winding count per mesh: the summed length of the depth
//      intervals inside both solids (Eq. 1, per line), and, for a line with no flag, one record
//      per interval endpoint (triangle, sign, depth, barycentric weights: Eq. 2).
// The host recasts flagged lines exactly on the CPU and reduces everything in f64, per pair.

struct Node {
    min: vec3<f32>,
    first_child: u32,
    max: vec3<f32>,
    index: u32,
};

struct Record {
    ray: u32,
    // bit 31: on B; bit 30: the interval ends here (sign +1), else it starts (sign -1);
    // bits 0..29: the triangle.
    id: u32,
    t: f32,
    l0: f32,
    l1: f32,
    l2: f32,
};

// One mesh pair of the batch.
struct PairEntry {
    // Per axis k: x = first float of the u table in geom, y = first float of the v table,
    // z = rows (u values), w = columns (v values).
    grid: array<vec4<u32>, 3>,
    // x, y, z: first line of axes 0, 1, 2 (batch numbering); w: one past the pair's last line.
    rays: vec4<u32>,
    // x: first float of A's vertices in geom; y: of B's; z: first node of A; w: of B.
    verts: vec4<u32>,
    // x: first triangle of A in tris; y: of B; z: first level offset of A in levels; w: of B.
    mesh: vec4<u32>,
    // x: leaf level of A; y: of B; z: bits of the absolute error of the host's f64 shift.
    misc: vec4<u32>,
};

struct Params {
    // Lines of the batch.
    lines: u32,
    // Invocations per dispatch row.
    row: u32,
    // Record capacity.
    capacity: u32,
    // Pairs in the table.
    pairs: u32,
};

@group(0) @binding(0) var<storage, read> geom: array<f32>;
@group(0) @binding(1) var<storage, read> nodes: array<Node>;
@group(0) @binding(2) var<storage, read> tris: array<u32>;
@group(0) @binding(3) var<storage, read> levels: array<u32>;
@group(0) @binding(4) var<storage, read> pairs: array<PairEntry>;
@group(0) @binding(5) var<storage, read_write> ray_out: array<vec2<u32>>;
@group(0) @binding(6) var<storage, read_write> records: array<Record>;
@group(0) @binding(7) var<storage, read_write> counter: array<atomic<u32>>;
@group(0) @binding(8) var<uniform> params: Params;

const WG: u32 = 64u;
// Hits of both meshes kept per line (documented as MAX_HITS_PER_RAY on the host).
const CAP: u32 = 64u;
// Depth-first stack: one pending node per level plus the current one; trees have at most 32
// levels (the host refuses more than 2^30 triangles).
const STACK: u32 = 40u;
const EPS: f32 = 5.9604645e-8; // 2^-24, the unit roundoff of f32
const ETA_REL: f32 = 1.1920929e-7; // 2^-23: twice the rounding of a coordinate to f32
const PAD_REL: f32 = 2.3841858e-7; // 2^-22

const FLAG_OVERFLOW: u32 = 1u;
const FLAG_UNCERTAIN: u32 = 2u;
const FLAG_UNBALANCED: u32 = 4u;
const ON_B: u32 = 0x80000000u;
const ENTERING: u32 = 0x40000000u;
const TRI_MASK: u32 = 0x3fffffffu;

var<private> hit_t: array<f32, CAP>;
var<private> hit_err: array<f32, CAP>;
var<private> hit_id: array<u32, CAP>;
var<private> n_hits: u32;
var<private> flags: u32;
// The invocation's pair.
var<private> pe: PairEntry;

fn level_offset(m: u32, l: u32) -> u32 {
    if (m == 0u) {
        return levels[pe.mesh.z + l];
    }
    return levels[pe.mesh.w + l];
}

fn tol() -> f32 {
    return bitcast<f32>(pe.misc.z);
}

fn vertex(m: u32, t: u32, c: u32) -> vec4<f32> {
    var v: u32;
    var base: u32;
    if (m == 0u) {
        v = tris[3u * (pe.mesh.x + t) + c];
        base = pe.verts.x;
    } else {
        v = tris[3u * (pe.mesh.y + t) + c];
        base = pe.verts.y;
    }
    let b = base + 3u * v;
    // w carries the vertex index (exact as a float bit pattern).
    return vec4<f32>(geom[b], geom[b + 1u], geom[b + 2u], bitcast<f32>(v));
}

fn pick(p: vec3<f32>, k: u32) -> f32 {
    if (k == 0u) {
        return p.x;
    }
    if (k == 1u) {
        return p.y;
    }
    return p.z;
}

// Edge function of q against the directed edge ia -> ib (positive when q is to its left),
// evaluated from the endpoint with the lower index. Returns (sign, value, error bound): the
// sign is the tie-broken sign (simulation of simplicity: q moved by (eps, eps^2), as the CPU),
// the bound covers the f32 evaluation (Shewchuk's ccwerrboundA) and input errors of at most
// `eta` per coordinate (rounding of the vertices and the line to f32).
fn edge_fn(ia: u32, pa: vec2<f32>, ib: u32, pb: vec2<f32>, q: vec2<f32>, eta: f32) -> vec3<f32> {
    var a = pa;
    var b = pb;
    var flip = 1.0;
    if (ib < ia) {
        a = pb;
        b = pa;
        flip = -1.0;
    }
    let d1 = b - a;
    let d2 = q - a;
    let p1 = d1.x * d2.y;
    let p2 = d1.y * d2.x;
    let e = p1 - p2;
    var s = sign(e);
    if (e == 0.0) {
        if (a.y != b.y) {
            s = select(-1.0, 1.0, a.y > b.y);
        } else if (b.x != a.x) {
            s = select(-1.0, 1.0, b.x > a.x);
        } else {
            s = 0.0;
        }
    }
    let bound = 1.0625 * (3.0 * EPS * (abs(p1) + abs(p2))
        + 2.0 * eta * (abs(d1.x) + abs(d1.y) + abs(d2.x) + abs(d2.y)) + 16.0 * eta * eta);
    return vec3<f32>(flip * s, flip * e, bound);
}

struct Hit {
    // 0: miss, 1: hit (raw, tie-broken decision).
    hit: u32,
    // Whether the exact decision could differ from the raw one.
    uncertain: bool,
    entering: bool,
    t: f32,
    err: f32,
    l: vec3<f32>,
};

fn test_triangle(m: u32, tri: u32, k: u32, q: vec2<f32>) -> Hit {
    var out: Hit;
    out.hit = 0u;
    out.uncertain = false;
    out.entering = false;
    out.t = 0.0;
    out.err = 0.0;
    out.l = vec3<f32>(1.0 / 3.0);
    let ku = (k + 1u) % 3u;
    let kv = (k + 2u) % 3u;
    let v0 = vertex(m, tri, 0u);
    let v1 = vertex(m, tri, 1u);
    let v2 = vertex(m, tri, 2u);
    let i0 = bitcast<u32>(v0.w);
    let i1 = bitcast<u32>(v1.w);
    let i2 = bitcast<u32>(v2.w);
    let c0 = vec2<f32>(pick(v0.xyz, ku), pick(v0.xyz, kv));
    let c1 = vec2<f32>(pick(v1.xyz, ku), pick(v1.xyz, kv));
    let c2 = vec2<f32>(pick(v2.xyz, ku), pick(v2.xyz, kv));
    let mag = max(max(max(abs(v0.xyz), abs(v1.xyz)), abs(v2.xyz)), vec3<f32>(abs(q), 0.0));
    let eta = ETA_REL * max(mag.x, max(mag.y, mag.z)) + tol();
    let e0 = edge_fn(i1, c1, i2, c2, q, eta);
    let e1 = edge_fn(i2, c2, i0, c0, q, eta);
    let e2 = edge_fn(i0, c0, i1, c1, q, eta);
    let s = e0.x;
    let raw = s != 0.0 && e1.x == s && e2.x == s;
    // An edge is certain when its value is outside its bound: the exact value has its sign.
    let sure = vec3<bool>(abs(e0.y) > e0.z, abs(e1.y) > e1.z, abs(e2.y) > e2.z);
    let sg = vec3<f32>(sign(e0.y), sign(e1.y), sign(e2.y));
    let certain_miss = (sure.x && sure.y && sg.x != sg.y) || (sure.y && sure.z && sg.y != sg.z)
        || (sure.x && sure.z && sg.x != sg.z);
    let all_sure = sure.x && sure.y && sure.z;
    out.uncertain = !(all_sure || certain_miss);
    if (!raw) {
        return out;
    }
    out.hit = 1u;
    out.entering = s < 0.0;
    let sum = e0.y + e1.y + e2.y;
    if (sum != 0.0) {
        out.l = vec3<f32>(e0.y, e1.y, e2.y) / sum;
    }
    let z0 = pick(v0.xyz, k);
    let dz1 = pick(v1.xyz, k) - z0;
    let dz2 = pick(v2.xyz, k) - z0;
    out.t = z0 + out.l.y * dz1 + out.l.z * dz2;
    // |t - t_exact| <= 3 eta + |d lambda| (|dz1| + |dz2|) + rounding, with
    // |d lambda_i| <= 2 (b0 + b1 + b2) / |sum| (valid when every |e_i| exceeds its bound).
    let delta = e0.z + e1.z + e2.z;
    var lam_err = 2.0;
    if (abs(sum) > delta) {
        lam_err = min(2.0, 2.0 * delta / abs(sum) + 8.0 * EPS);
    }
    out.err = 1.25 * (3.0 * eta + lam_err * (abs(dz1) + abs(dz2))
        + 8.0 * EPS * (abs(z0) + abs(dz1) + abs(dz2)));
    return out;
}

fn cast_mesh(m: u32, k: u32, q: vec2<f32>) {
    var depth = pe.misc.x;
    var node_base = pe.verts.z;
    var mesh_bit = 0u;
    if (m == 1u) {
        depth = pe.misc.y;
        node_base = pe.verts.w;
        mesh_bit = ON_B;
    }
    let ku = (k + 1u) % 3u;
    let kv = (k + 2u) % 3u;
    var stack: array<vec2<u32>, STACK>;
    stack[0] = vec2<u32>(0u, 0u);
    var top = 1u;
    loop {
        if (top == 0u) {
            break;
        }
        top -= 1u;
        let l = stack[top].x;
        let i = stack[top].y;
        let node = nodes[node_base + level_offset(m, l) + i];
        let lo = vec2<f32>(pick(node.min, ku), pick(node.min, kv));
        let hi = vec2<f32>(pick(node.max, ku), pick(node.max, kv));
        let pad = (abs(lo) + abs(hi) + abs(q)) * PAD_REL + vec2<f32>(2.0 * tol());
        if (any(q < lo - pad) || any(q > hi + pad)) {
            continue;
        }
        if (l == depth) {
            let h = test_triangle(m, node.index, k, q);
            if (h.uncertain) {
                flags |= FLAG_UNCERTAIN;
            }
            if (h.hit == 1u) {
                if (n_hits >= CAP) {
                    flags |= FLAG_OVERFLOW;
                } else {
                    hit_t[n_hits] = h.t;
                    hit_err[n_hits] = h.err;
                    hit_id[n_hits] = mesh_bit | select(0u, ENTERING, h.entering) | node.index;
                    n_hits += 1u;
                }
            }
            continue;
        }
        let below = level_offset(m, l + 2u) - level_offset(m, l + 1u);
        let c = 2u * i;
        if (c + 1u < below) {
            stack[top] = vec2<u32>(l + 1u, c + 1u);
            top += 1u;
        }
        stack[top] = vec2<u32>(l + 1u, c);
        top += 1u;
    }
}

// Whether hit a sorts before hit b: by depth, leaving before entering at equal depth.
fn before(ta: f32, ia: u32, tb: f32, ib: u32) -> bool {
    return ta < tb || (ta == tb && (ia & ENTERING) == 0u && (ib & ENTERING) != 0u);
}

@compute @workgroup_size(64)
fn cast_rays(@builtin(global_invocation_id) gid: vec3<u32>) {
    let r = gid.x + gid.y * params.row;
    if (r >= params.lines) {
        return;
    }
    // The pair: the last one whose first line is at most r.
    var lo = 0u;
    var hi = params.pairs;
    while (hi - lo > 1u) {
        let mid = (lo + hi) / 2u;
        if (pairs[mid].rays.x <= r) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    pe = pairs[lo];
    var k = 0u;
    if (r >= pe.rays.z) {
        k = 2u;
    } else if (r >= pe.rays.y) {
        k = 1u;
    }
    let g = pe.grid[k];
    let line = r - pe.rays[k];
    let q = vec2<f32>(geom[g.x + line / g.w], geom[g.y + line % g.w]);
    n_hits = 0u;
    flags = 0u;
    cast_mesh(0u, k, q);
    let na = n_hits;
    if (na > 0u) {
        cast_mesh(1u, k, q);
    }
    // Balance of each mesh's raw hits.
    var wa = 0i;
    var wb = 0i;
    for (var h = 0u; h < n_hits; h += 1u) {
        let step = select(-1i, 1i, (hit_id[h] & ENTERING) != 0u);
        if ((hit_id[h] & ON_B) != 0u) {
            wb += step;
        } else {
            wa += step;
        }
    }
    if (wa != 0i || wb != 0i) {
        flags |= FLAG_UNBALANCED;
    }
    var length = 0.0;
    if (na > 0u && n_hits > na) {
        // Insertion sort.
        for (var h = 1u; h < n_hits; h += 1u) {
            let t = hit_t[h];
            let e = hit_err[h];
            let id = hit_id[h];
            var p = h;
            loop {
                if (p == 0u || !before(t, id, hit_t[p - 1u], hit_id[p - 1u])) {
                    break;
                }
                hit_t[p] = hit_t[p - 1u];
                hit_err[p] = hit_err[p - 1u];
                hit_id[p] = hit_id[p - 1u];
                p -= 1u;
            }
            hit_t[p] = t;
            hit_err[p] = e;
            hit_id[p] = id;
        }
        for (var h = 1u; h < n_hits; h += 1u) {
            if (hit_t[h] - hit_t[h - 1u] <= hit_err[h] + hit_err[h - 1u]) {
                flags |= FLAG_UNCERTAIN;
            }
        }
        let keep = flags == 0u;
        wa = 0i;
        wb = 0i;
        var open = false;
        var t0 = 0.0;
        for (var h = 0u; h < n_hits; h += 1u) {
            let id = hit_id[h];
            let step = select(-1i, 1i, (id & ENTERING) != 0u);
            if ((id & ON_B) != 0u) {
                wb += step;
            } else {
                wa += step;
            }
            let inside = wa > 0i && wb > 0i;
            var end_bit = 0u;
            if (!open && inside) {
                open = true;
                t0 = hit_t[h];
            } else if (open && !inside) {
                open = false;
                length += hit_t[h] - t0;
                end_bit = ENTERING;
            } else {
                continue;
            }
            if (keep) {
                let slot = atomicAdd(&counter[0], 1u);
                if (slot < params.capacity) {
                    let m = select(0u, 1u, (id & ON_B) != 0u);
                    let tri = id & TRI_MASK;
                    let hit = test_triangle(m, tri, k, q);
                    records[slot] = Record(r, (id & ON_B) | end_bit | tri, hit_t[h], hit.l.x,
                        hit.l.y, hit.l.z);
                }
            }
        }
    }
    ray_out[r] = vec2<u32>(bitcast<u32>(length), flags | (min(n_hits, 0xffffffu) << 8u));
}

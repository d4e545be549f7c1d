//! From the crossing pairs to the volume, its gradient and the contact regions (module
//! documentation of [`super`]): pieces of the crossing triangles bounded by their inside edge
//! parts and intersection segments, the vertex status by parity along edges, the flood fill of
//! the triangles wholly inside, the shells with no crossing, and the reduction per region.

#![allow(clippy::needless_range_loop)] // parallel per-mesh and per-edge arrays read clearer by index

use super::crossings::{Crossing, PairHit};
use super::locate::{a_point_in_b, b_point_in_a};
use super::surface::{SurfaceTopology, TriangleSums};
use super::{ContactRegion, ExactOptions, ExactResult, SurfacePiece};
use crate::pose::DPose;
use crate::topology::Solid;
use crate::volume::VolumeError;
use glam::{DMat3, DVec3};

const NONE: u32 = u32::MAX;
/// `tri_slot` values at or above this mark a flood-filled triangle (patch id added).
const PATCH: u32 = 1 << 31;

/// Per-mesh scratch arrays, valid where their stamp equals the query's.
#[derive(Debug, Default)]
pub(crate) struct MeshScratch {
    /// Per triangle `[stamp, slot]`, together so that a flood fill's neighbour check reads one
    /// cache line.
    tri_slot: Vec<[u32; 2]>,
    edge_stamp: Vec<u32>,
    edge_head: Vec<u32>,
    vert_stamp: Vec<u32>,
    vert_parent: Vec<u32>,
    vert_parity: Vec<u8>,
    /// Region node of an inside vertex (`NONE` until made).
    vert_node: Vec<u32>,
    /// For a root: 0 unknown, 1 outside, 2 inside.
    vert_root_status: Vec<u8>,
}

impl MeshScratch {
    /// Makes room for a mesh of `tris` triangles, `edges` edges and `verts` vertices. Arrays
    /// already as large or larger are kept: an entry is only read after this query has stamped
    /// it (or, for a vertex, touched it), so entries beyond the mesh and those left by other
    /// meshes are never read. (Until 2026-11-30 the arrays were remade at every change of size,
    /// so a heap of meshes of many sizes allocated and zeroed them for nearly every pair.)
    fn fit(&mut self, tris: usize, edges: usize, verts: usize) {
        if self.tri_slot.len() < tris {
            self.tri_slot = vec![[0, 0]; tris];
        }
        if self.edge_stamp.len() < edges {
            self.edge_stamp = vec![0; edges];
            self.edge_head = vec![0; edges];
        }
        if self.vert_stamp.len() < verts {
            self.vert_stamp = vec![0; verts];
            self.vert_parent = vec![0; verts];
            self.vert_parity = vec![0; verts];
            self.vert_node = vec![0; verts];
            self.vert_root_status = vec![0; verts];
        }
    }

    fn reset(&mut self) {
        self.tri_slot.fill([0, 0]);
        self.edge_stamp.fill(0);
        self.vert_stamp.fill(0);
    }

    #[inline]
    fn slot(&self, stamp: u32, t: u32) -> u32 {
        let [s, v] = self.tri_slot[t as usize];
        if s == stamp { v } else { NONE }
    }

    #[inline]
    fn set_slot(&mut self, stamp: u32, t: u32, v: u32) {
        self.tri_slot[t as usize] = [stamp, v];
    }

    #[inline]
    fn head(&self, stamp: u32, e: u32) -> u32 {
        if self.edge_stamp[e as usize] == stamp {
            self.edge_head[e as usize]
        } else {
            NONE
        }
    }

    fn touch_vertex(&mut self, stamp: u32, v: u32) {
        let i = v as usize;
        if self.vert_stamp[i] != stamp {
            self.vert_stamp[i] = stamp;
            self.vert_parent[i] = v;
            self.vert_parity[i] = 0;
            self.vert_node[i] = NONE;
            self.vert_root_status[i] = 0;
        }
    }

    /// Root of `v` and the parity of `v`'s status relative to the root's.
    fn find(&mut self, v: u32) -> (u32, u8) {
        let mut x = v;
        let mut p = 0u8;
        while self.vert_parent[x as usize] != x {
            p ^= self.vert_parity[x as usize];
            x = self.vert_parent[x as usize];
        }
        let root = x;
        let (mut x, mut px) = (v, p);
        while self.vert_parent[x as usize] != x {
            let next = self.vert_parent[x as usize];
            let next_p = px ^ self.vert_parity[x as usize];
            self.vert_parent[x as usize] = root;
            self.vert_parity[x as usize] = px;
            x = next;
            px = next_p;
        }
        (root, p)
    }

    /// Records `status(u) xor status(v) = rel`; `false` on a contradiction.
    fn union(&mut self, u: u32, v: u32, rel: u8) -> bool {
        let (ru, pu) = self.find(u);
        let (rv, pv) = self.find(v);
        if ru == rv {
            return pu ^ pv == rel;
        }
        // Keep a known status on the new root.
        let (keep, drop, link) =
            if self.vert_root_status[rv as usize] != 0 && self.vert_root_status[ru as usize] == 0 {
                (rv, ru, pu ^ pv ^ rel)
            } else {
                (ru, rv, pu ^ pv ^ rel)
            };
        let (sk, sd) = (
            self.vert_root_status[keep as usize],
            self.vert_root_status[drop as usize],
        );
        if sk != 0 && sd != 0 && ((sk == 2) ^ (sd == 2)) as u8 != link {
            return false;
        }
        self.vert_parent[drop as usize] = keep;
        self.vert_parity[drop as usize] = link;
        true
    }

    /// Records that `v` is inside (or not); `false` on a contradiction.
    fn anchor(&mut self, v: u32, inside: bool) -> bool {
        let (r, p) = self.find(v);
        let root_inside = inside ^ (p == 1);
        let s = if root_inside { 2 } else { 1 };
        match self.vert_root_status[r as usize] {
            0 => {
                self.vert_root_status[r as usize] = s;
                true
            }
            old => old == s,
        }
    }

    /// The status of `v`: `Some(inside)` when known.
    fn status(&mut self, v: u32) -> Option<bool> {
        let (r, p) = self.find(v);
        match self.vert_root_status[r as usize] {
            0 => None,
            s => Some((s == 2) ^ (p == 1)),
        }
    }
}

/// Scratch for one query: per-mesh stamped slots (at least as large as the meshes, valid for
/// any meshes that fit) and the boundary sums' terms.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    stamp: u32,
    mesh: [MeshScratch; 2],
    elements: Vec<Element>,
    buffers: Buffers,
}

/// The lists a query builds, kept from query to query (emptied, their room kept): about fifteen
/// allocations a query before, which in the 200-mesh heap's volume stage (thousands of small
/// pairs a step) were a tenth of the exact volume's time.
#[derive(Debug, Default)]
struct Buffers {
    pieces: Vec<Piece>,
    crossings: Vec<EdgeCrossing>,
    uf: Vec<u32>,
    along: Vec<(f64, u32)>,
    patches: Vec<Patch>,
    stack: Vec<u32>,
    has_piece: [Vec<bool>; 2],
    contained: Vec<(usize, usize, u32)>,
    region_of_root: Vec<u32>,
    region_ids: Vec<usize>,
    patch_regions: Vec<usize>,
    shell_regions: Vec<usize>,
    parts: Vec<Part>,
    first_part: Vec<u32>,
    o_t: Vec<DVec3>,
}

impl Buffers {
    fn clear(&mut self) {
        self.pieces.clear();
        self.crossings.clear();
        self.uf.clear();
        self.along.clear();
        self.patches.clear();
        self.stack.clear();
        for h in &mut self.has_piece {
            h.clear();
        }
        self.contained.clear();
        self.region_of_root.clear();
        self.region_ids.clear();
        self.patch_regions.clear();
        self.shell_regions.clear();
        self.parts.clear();
        self.first_part.clear();
        self.o_t.clear();
    }
}

impl Scratch {
    /// Whether its slots are large enough for meshes of `tris` triangles, `edges` edges and
    /// `verts` vertices (a and b), so that a query on them allocates nothing.
    pub(crate) fn fits(&self, sizes: [(usize, usize, usize); 2]) -> bool {
        self.mesh.iter().zip(sizes).all(|(m, (t, e, v))| {
            m.tri_slot.len() >= t && m.edge_stamp.len() >= e && m.vert_stamp.len() >= v
        })
    }
}

/// One crossing on an edge, in a linked list per edge.
#[derive(Clone, Copy, Debug)]
struct EdgeCrossing {
    next: u32,
    /// The other mesh's triangle that the edge crosses.
    other: u32,
    point: DVec3,
    /// Going from the smaller to the larger vertex index, the edge enters the other solid here.
    entering: bool,
}

/// A crossing triangle, whose part inside the other solid is bounded by intersection segments
/// and inside edge parts.
#[derive(Debug)]
struct Piece {
    mesh: usize,
    tri: u32,
}

/// Triangles flood-filled from one seed edge: all inside the other solid.
#[derive(Debug)]
struct Patch {
    mesh: usize,
    node: u32,
    sums: TriangleSums,
    triangles: Vec<u32>,
}

/// The two solids placed in A's frame.
pub(crate) struct Placed<'a> {
    pub(crate) solids: [&'a Solid; 2],
    pub(crate) topo: [&'a SurfaceTopology; 2],
    pub(crate) b_to_a: &'a DPose,
    /// Each solid's bounding box in its own frame.
    pub(crate) bounds: [[DVec3; 2]; 2],
    /// The perturbation's direction (`±1`).
    pub(crate) dir: i8,
}

impl Placed<'_> {
    /// Vertex `v` of mesh `m` in A's frame (B's through `DPose::transform_point`, as in every
    /// predicate).
    #[inline]
    fn vertex(&self, m: usize, v: u32) -> DVec3 {
        let p = self.solids[m].vertices()[v as usize];
        if m == 0 {
            p.as_dvec3()
        } else {
            self.b_to_a.transform_point(p)
        }
    }

    /// `(R, τ)` taking mesh `m`'s frame to A's.
    fn frame(&self, m: usize) -> (DMat3, DVec3) {
        if m == 0 {
            (DMat3::IDENTITY, DVec3::ZERO)
        } else {
            (self.b_to_a.rotation, self.b_to_a.translation)
        }
    }

    /// Whether vertex `v` of mesh `m` lies inside the other solid (exact, perturbed).
    fn point_inside_other(&self, m: usize, v: u32, sym: &mut bool) -> bool {
        let p = self.vertex(m, v);
        if m == 0 {
            a_point_in_b(
                p,
                self.solids[1],
                self.b_to_a,
                self.bounds[1],
                self.dir,
                sym,
            )
        } else {
            b_point_in_a(p, self.solids[0], self.bounds[0], self.dir, sym)
        }
    }

    /// Mesh `m`'s shell box placed in A's frame (corners transformed, grown by a margin that
    /// covers rounding).
    fn placed_box(&self, m: usize, b: [DVec3; 2]) -> [DVec3; 2] {
        let (r, t) = self.frame(m);
        let mut lo = DVec3::INFINITY;
        let mut hi = DVec3::NEG_INFINITY;
        for i in 0..8 {
            let c = DVec3::new(
                if i & 1 == 0 { b[0].x } else { b[1].x },
                if i & 2 == 0 { b[0].y } else { b[1].y },
                if i & 4 == 0 { b[0].z } else { b[1].z },
            );
            let p = r * c + t;
            lo = lo.min(p);
            hi = hi.max(p);
        }
        let m = 1e-9 * (1.0 + lo.abs().max_element().max(hi.abs().max_element()));
        [lo - DVec3::splat(m), hi + DVec3::splat(m)]
    }
}

/// `½ (P − O) × (Q − O)` and `((P − O) + (Q − O))/3 ×` that: the vector area and the moment
/// `∫ (x − O) × n dA` of the triangle `(O, P, Q)`; both additive along a line.
#[inline]
fn fan(o: DVec3, p: DVec3, q: DVec3) -> (DVec3, DVec3) {
    let (p, q) = (p - o, q - o);
    let s = 0.5 * p.cross(q);
    (s, ((p + q) / 3.0).cross(s))
}

#[inline]
fn key_hash(e: u32, t: u32) -> u64 {
    (u64::from(e) << 32 | u64::from(t)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

fn inconsistent(what: String) -> VolumeError {
    VolumeError::Inconsistent(what)
}

/// One term of a piece's boundary sums, attributed to the region of a node.
#[derive(Debug)]
struct Element {
    piece: u32,
    node: u32,
    area: DVec3,
    moment: DVec3,
}

/// Everything after the crossing pairs. `hits` are in candidate order.
pub(crate) fn assemble(
    placed: &Placed<'_>,
    hits: &[PairHit],
    candidate_count: usize,
    options: &ExactOptions,
    scratch: &mut Scratch,
    symbolic: &mut bool,
) -> Result<ExactResult, VolumeError> {
    let topo = placed.topo;
    for m in 0..2 {
        scratch.mesh[m].fit(
            topo[m].triangle_count(),
            topo[m].edge_count(),
            placed.solids[m].vertices().len(),
        );
    }
    scratch.stamp = scratch.stamp.wrapping_add(1);
    if scratch.stamp == 0 {
        for m in &mut scratch.mesh {
            m.reset();
        }
        scratch.stamp = 1;
    }
    let stamp = scratch.stamp;
    let mut buffers = std::mem::take(&mut scratch.buffers);
    buffers.clear();
    let Buffers {
        pieces,
        crossings,
        uf,
        along,
        patches,
        stack,
        has_piece,
        contained,
        region_of_root,
        region_ids,
        patch_regions,
        shell_regions,
        parts,
        first_part,
        o_t,
    } = &mut buffers;

    // The origin of the sums: the centre of the crossing points' box.
    let origin = if hits.is_empty() {
        DVec3::ZERO
    } else {
        let mut lo = DVec3::INFINITY;
        let mut hi = DVec3::NEG_INFINITY;
        for h in hits {
            for p in [h.start.point, h.end.point] {
                lo = lo.min(p);
                hi = hi.max(p);
            }
        }
        (lo + hi) * 0.5
    };

    // Pieces, and each edge crossing once (recorded from the edge's owner triangle); every
    // crossing is a node of the region union-find.
    crossings.reserve(hits.len());
    let mut owner_check = [[0u64; 2]; 2]; // [mesh][owner?]: wrapping sums of keys
    let mut owner_count = [[0usize; 2]; 2];
    for h in hits {
        for (m, t) in [(0, h.ta), (1, h.tb)] {
            if scratch.mesh[m].slot(stamp, t) == NONE {
                scratch.mesh[m].set_slot(stamp, t, pieces.len() as u32);
                pieces.push(Piece { mesh: m, tri: t });
            }
        }
        for c in [h.start, h.end] {
            let (m, t, other) = if c.on_a {
                (0, h.ta, h.tb)
            } else {
                (1, h.tb, h.ta)
            };
            let e = topo[m].tri_edges[t as usize][c.edge as usize];
            let owner = topo[m].edge_owner[e as usize] == t;
            owner_check[m][usize::from(owner)] =
                owner_check[m][usize::from(owner)].wrapping_add(key_hash(e, other));
            owner_count[m][usize::from(owner)] += 1;
            if owner {
                push_crossing(&mut scratch.mesh[m], crossings, stamp, e, other, &c);
            }
        }
    }
    for m in 0..2 {
        if owner_count[m][0] != owner_count[m][1] || owner_check[m][0] != owner_check[m][1] {
            return Err(VolumeError::IncompleteCandidates {
                mesh: if m == 0 { "A" } else { "B" },
            });
        }
    }
    uf.extend(0..crossings.len() as u32);
    // Reused from query to query (a fresh vector grew by copying, and its new pages were a tenth
    // of the nut demo's run in page faults).
    let mut elements = std::mem::take(&mut scratch.elements);
    elements.clear();
    elements.reserve(4 * hits.len());
    for h in hits {
        let node = |c: &Crossing| -> Result<u32, VolumeError> {
            let (m, t, other) = if c.on_a {
                (0, h.ta, h.tb)
            } else {
                (1, h.tb, h.ta)
            };
            let e = topo[m].tri_edges[t as usize][c.edge as usize];
            let mut i = scratch.mesh[m].head(stamp, e);
            while i != NONE {
                if crossings[i as usize].other == other {
                    return Ok(i);
                }
                i = crossings[i as usize].next;
            }
            Err(VolumeError::IncompleteCandidates {
                mesh: if m == 0 { "A" } else { "B" },
            })
        };
        let (n0, n1) = (node(&h.start)?, node(&h.end)?);
        union(uf, n0, n1);
        let (area, moment) = fan(origin, h.start.point, h.end.point);
        let pa = scratch.mesh[0].slot(stamp, h.ta);
        let pb = scratch.mesh[1].slot(stamp, h.tb);
        elements.push(Element {
            piece: pa,
            node: n0,
            area,
            moment,
        });
        elements.push(Element {
            piece: pb,
            node: n0,
            area: -area,
            moment: -moment,
        });
    }

    // Vertex status by parity along the edges of the crossing triangles.
    let mut point_tests = 0usize;
    for m in 0..2 {
        let ms = &mut scratch.mesh[m];
        for p in pieces.iter().filter(|p| p.mesh == m) {
            for k in 0..3 {
                let e = topo[m].tri_edges[p.tri as usize][k];
                let [lo, hi] = topo[m].edge_vertices[e as usize];
                ms.touch_vertex(stamp, lo);
                ms.touch_vertex(stamp, hi);
                let (mut n_in, mut n_out) = (0i32, 0i32);
                let mut c = ms.head(stamp, e);
                while c != NONE {
                    let x = &crossings[c as usize];
                    if x.entering {
                        n_in += 1;
                    } else {
                        n_out += 1;
                    }
                    c = x.next;
                }
                if !ms.union(lo, hi, ((n_in + n_out) & 1) as u8) {
                    return Err(inconsistent(format!(
                        "parity contradiction on edge ({lo}, {hi}) of {}",
                        ["A", "B"][m]
                    )));
                }
                let ok = match n_in - n_out {
                    0 => true,
                    1 => ms.anchor(lo, false) && ms.anchor(hi, true),
                    -1 => ms.anchor(lo, true) && ms.anchor(hi, false),
                    d => {
                        return Err(inconsistent(format!(
                            "edge ({lo}, {hi}) of {} enters the other solid {d} times more than it leaves",
                            ["A", "B"][m]
                        )));
                    }
                };
                if !ok {
                    return Err(inconsistent(format!(
                        "conflicting inside/outside status at vertices of {}",
                        ["A", "B"][m]
                    )));
                }
            }
        }
        // Groups that no crossing edge anchors: one exact point test each.
        for p in pieces.iter().filter(|p| p.mesh == m) {
            let v = placed.solids[m].triangles()[p.tri as usize][0];
            if scratch.mesh[m].status(v).is_none() {
                let inside = placed.point_inside_other(m, v, symbolic);
                point_tests += 1;
                scratch.mesh[m].anchor(v, inside);
            }
        }
    }

    // Edge parts inside the other solid: along an edge from its smaller vertex `lo`, with
    // G(X) = fan(O, lo, X), the inside parts add Σ_exits G − Σ_entries G + [hi inside] G(hi)
    // (no sorting needed for the sums). For the regions, the inside intervals join their end
    // nodes: crossings sorted along the edge, inside vertices as nodes too.
    for (pi, piece) in pieces.iter().enumerate() {
        let (m, t) = (piece.mesh, piece.tri);
        let tri = placed.solids[m].triangles()[t as usize];
        for k in 0..3 {
            let e = topo[m].tri_edges[t as usize][k];
            let [lo, hi] = topo[m].edge_vertices[e as usize];
            let sign = if tri[k] == lo { 1.0 } else { -1.0 };
            let plo = placed.vertex(m, lo);
            let phi = placed.vertex(m, hi);
            let lo_in = scratch.mesh[m].status(lo) == Some(true);
            let hi_in = scratch.mesh[m].status(hi) == Some(true);
            along.clear();
            let mut c = scratch.mesh[m].head(stamp, e);
            while c != NONE {
                let x = crossings[c as usize];
                let (fs, fw) = fan(origin, plo, x.point);
                let s = if x.entering { -sign } else { sign };
                elements.push(Element {
                    piece: pi as u32,
                    node: c,
                    area: fs * s,
                    moment: fw * s,
                });
                along.push(((x.point - plo).dot(phi - plo), c));
                c = x.next;
            }
            let lo_node = if lo_in {
                Some(vertex_node(&mut scratch.mesh[m], uf, lo))
            } else {
                None
            };
            let hi_node = if hi_in {
                Some(vertex_node(&mut scratch.mesh[m], uf, hi))
            } else {
                None
            };
            if let Some(hn) = hi_node {
                let (fs, fw) = fan(origin, plo, phi);
                elements.push(Element {
                    piece: pi as u32,
                    node: hn,
                    area: fs * sign,
                    moment: fw * sign,
                });
            }
            // Join each inside interval's ends.
            along.sort_by(|x, y| x.0.total_cmp(&y.0));
            let mut open = lo_node;
            for &(_, c) in along.iter() {
                if crossings[c as usize].entering {
                    open = Some(c);
                } else if let Some(o) = open.take() {
                    union(uf, o, c);
                }
            }
            if let (Some(o), Some(hn)) = (open, hi_node) {
                union(uf, o, hn);
            }
        }
    }

    // Flood fill the triangles wholly inside from the inside edges of the crossing triangles.
    let mut inside_triangles = [0usize; 2];
    for piece in pieces.iter() {
        let (m, t) = (piece.mesh, piece.tri);
        for k in 0..3 {
            let e = topo[m].tri_edges[t as usize][k];
            if scratch.mesh[m].head(stamp, e) != NONE {
                continue;
            }
            let [lo, _] = topo[m].edge_vertices[e as usize];
            if scratch.mesh[m].status(lo) != Some(true) {
                continue;
            }
            let nb = topo[m].tri_neighbours[t as usize][k];
            if nb == NONE || scratch.mesh[m].slot(stamp, nb) != NONE {
                // Another piece (its interval nodes are joined through the shared inside
                // vertices already), or a patch already filled from another seed.
                continue;
            }
            // A new patch, joined to the region of the seed edge's vertices.
            let pid = patches.len() as u32;
            let node = uf.len() as u32;
            uf.push(node);
            let lo_node = vertex_node(&mut scratch.mesh[m], uf, lo);
            union(uf, lo_node, node);
            let mut patch = Patch {
                mesh: m,
                node,
                sums: TriangleSums::default(),
                triangles: Vec::new(),
            };
            scratch.mesh[m].set_slot(stamp, nb, PATCH + pid);
            stack.clear();
            stack.push(nb);
            while let Some(u) = stack.pop() {
                patch.sums.merge(&topo[m].tri_sums[u as usize]);
                if options.collect_pieces {
                    patch.triangles.push(u);
                }
                inside_triangles[m] += 1;
                for (j, &v) in topo[m].tri_neighbours[u as usize].iter().enumerate() {
                    if v == NONE {
                        continue;
                    }
                    let s = scratch.mesh[m].slot(stamp, v);
                    if s == NONE {
                        scratch.mesh[m].set_slot(stamp, v, PATCH + pid);
                        stack.push(v);
                    } else if s < PATCH {
                        // A crossing triangle: join through the shared edge's vertex.
                        let e2 = topo[m].tri_edges[u as usize][j];
                        let w = topo[m].edge_vertices[e2 as usize][0];
                        let wn = vertex_node(&mut scratch.mesh[m], uf, w);
                        union(uf, wn, node);
                    }
                }
            }
            patches.push(patch);
        }
    }

    // Shells with no crossing: wholly inside or outside the other solid.
    // `contained`: (mesh, shell, node).
    for m in 0..2 {
        has_piece[m].resize(topo[m].shells.len(), false);
    }
    for p in pieces.iter() {
        has_piece[p.mesh][topo[p.mesh].tri_shell[p.tri as usize] as usize] = true;
    }
    let other_box = [
        placed.placed_box(1, placed.bounds[1]),
        placed.placed_box(0, placed.bounds[0]),
    ];
    for m in 0..2 {
        for (si, shell) in topo[m].shells.iter().enumerate() {
            if has_piece[m][si] {
                continue;
            }
            let b = placed.placed_box(m, shell.bounds);
            let o = other_box[m];
            if b[1].cmplt(o[0]).any() || b[0].cmpgt(o[1]).any() {
                continue;
            }
            point_tests += 1;
            if placed.point_inside_other(m, shell.vertex, symbolic) {
                let node = uf.len() as u32;
                uf.push(node);
                contained.push((m, si, node));
                inside_triangles[m] += shell.triangles.len();
            }
        }
    }

    // Reduce per region, regions numbered in order of their first element.
    region_of_root.resize(uf.len(), NONE);
    let mut regions: Vec<RegionSums> = Vec::new();
    let mut region = |uf: &mut Vec<u32>, node: u32| -> usize {
        let r = find(uf, node) as usize;
        if region_of_root[r] == NONE {
            region_of_root[r] = regions.len() as u32;
            regions.push(RegionSums::default());
        }
        region_of_root[r] as usize
    };
    region_ids.extend(elements.iter().map(|el| region(uf, el.node)));
    patch_regions.extend(patches.iter().map(|p| region(uf, p.node)));
    shell_regions.extend(contained.iter().map(|&(_, _, n)| region(uf, n)));

    // Each piece's parts, one per region it has elements in (almost always one).
    parts.reserve(pieces.len());
    first_part.resize(pieces.len(), NONE);
    let mut closure = DVec3::ZERO;
    o_t.extend(
        pieces
            .iter()
            .map(|p| placed.vertex(p.mesh, placed.solids[p.mesh].triangles()[p.tri as usize][0])),
    );
    for (el, &r) in elements.iter().zip(region_ids.iter()) {
        let p = el.piece as usize;
        let reg = &mut regions[r];
        reg.volume += (o_t[p] - origin).dot(el.area) / 3.0;
        closure += el.area;
        if pieces[p].mesh == 1 {
            reg.area_b += el.area;
            reg.moment_b += el.moment;
        }
        // Find or make the part (piece p, region r): a short chain per piece.
        let mut i = first_part[p];
        while i != NONE && parts[i as usize].region != r {
            i = parts[i as usize].next;
        }
        if i == NONE {
            i = parts.len() as u32;
            parts.push(Part {
                piece: p as u32,
                region: r,
                next: first_part[p],
                area: DVec3::ZERO,
                moment: DVec3::ZERO,
            });
            first_part[p] = i;
        }
        parts[i as usize].area += el.area;
        parts[i as usize].moment += el.moment;
    }
    scratch.elements = elements;
    for part in parts.iter() {
        let reg = &mut regions[part.region];
        let a2 = part.area.length_squared();
        if a2 > 0.0 {
            let len = a2.sqrt();
            let ot = o_t[part.piece as usize] - origin;
            // The part is planar: its centroid from its vector area and moment about the
            // origin; the cone from the origin over it has volume ⅓ ot·A and its centroid ¾ of
            // the way to the part's.
            let c = origin + (part.area.cross(part.moment) + ot.dot(part.area) * part.area) / a2;
            reg.first_moment += 0.75 * (ot.dot(part.area) / 3.0) * (c - origin);
            if pieces[part.piece as usize].mesh != 1 {
                if options.collect_pieces {
                    reg.pieces_a.push(SurfacePiece {
                        centroid: c,
                        vector_area: part.area,
                    });
                }
                continue;
            }
            reg.weight += len;
            reg.weighted_point += c * len;
            if options.collect_pieces {
                reg.pieces.push(SurfacePiece {
                    centroid: c,
                    vector_area: part.area,
                });
            }
        }
    }
    let place_sums = |m: usize, sums: &TriangleSums| -> (f64, DVec3, DVec3, f64, DVec3, DVec3) {
        // volume, area, moment about the origin, weight, weighted point, first moment of the
        // volume about the origin (in A's frame)
        let (r, t) = placed.frame(m);
        let area = r * sums.area;
        let volume = sums.volume + (t - origin).dot(area) / 3.0;
        let first = sums.placed_first_moment(r, t, origin, volume);
        let moment = r * sums.moment + (t - origin).cross(area);
        let weighted = r * sums.weighted_centroid + t * sums.abs_area;
        (volume, area, moment, sums.abs_area, weighted, first)
    };
    let frames = [placed.frame(0), placed.frame(1)];
    let tri_piece = |m: usize, t: u32| -> SurfacePiece {
        let (r, tr) = frames[m];
        let p = placed.solids[m].triangle(t as usize).map(|v| v.as_dvec3());
        let s = 0.5 * (p[1] - p[0]).cross(p[2] - p[0]);
        SurfacePiece {
            centroid: r * ((p[0] + p[1] + p[2]) / 3.0) + tr,
            vector_area: r * s,
        }
    };
    for (patch, &r) in patches.iter().zip(patch_regions.iter()) {
        let reg = &mut regions[r];
        let (v, s, w, wt, wp, fm) = place_sums(patch.mesh, &patch.sums);
        reg.volume += v;
        reg.first_moment += fm;
        closure += s;
        if patch.mesh == 1 {
            reg.area_b += s;
            reg.moment_b += w;
            reg.weight += wt;
            reg.weighted_point += wp;
            reg.pieces
                .extend(patch.triangles.iter().map(|&t| tri_piece(1, t)));
        } else {
            reg.pieces_a
                .extend(patch.triangles.iter().map(|&t| tri_piece(0, t)));
        }
    }
    for (&(m, si, _), &r) in contained.iter().zip(shell_regions.iter()) {
        let reg = &mut regions[r];
        let shell = &topo[m].shells[si];
        let (v, s, w, wt, wp, fm) = place_sums(m, &shell.sums);
        reg.volume += v;
        reg.first_moment += fm;
        closure += s;
        if m == 1 {
            reg.area_b += s;
            reg.moment_b += w;
            reg.weight += wt;
            reg.weighted_point += wp;
            if options.collect_pieces {
                reg.pieces.extend(
                    topo[1].shell_triangles[shell.triangles.clone()]
                        .iter()
                        .map(|&t| tri_piece(1, t)),
                );
            }
        } else if options.collect_pieces {
            reg.pieces_a.extend(
                topo[0].shell_triangles[shell.triangles.clone()]
                    .iter()
                    .map(|&t| tri_piece(0, t)),
            );
        }
    }

    let mut result = ExactResult {
        volume: 0.0,
        translation_gradient: DVec3::ZERO,
        rotation_gradient: DVec3::ZERO,
        centre: options.centre,
        regions: Vec::with_capacity(regions.len()),
        candidate_pairs: candidate_count,
        crossing_pairs: hits.len(),
        crossing_triangles: [0, 0],
        inside_triangles,
        contained_shells: [0, 0],
        point_tests,
        closure,
        symmetrized: false,
    };
    for p in pieces.iter() {
        result.crossing_triangles[p.mesh] += 1;
    }
    for &(m, _, _) in contained.iter() {
        result.contained_shells[m] += 1;
    }
    let mut moment_total = DVec3::ZERO;
    for reg in regions {
        let point = if reg.weight > 0.0 {
            reg.weighted_point / reg.weight
        } else {
            origin
        };
        result.volume += reg.volume;
        result.translation_gradient += reg.area_b;
        moment_total += reg.moment_b;
        // The volume's centroid; for a region with next to no volume (faces that touch) the
        // centroid of its surface on B.
        let centroid = if reg.volume.abs() > 0.0 {
            let c = origin + reg.first_moment / reg.volume;
            if c.is_finite() { c } else { point }
        } else {
            point
        };
        result.regions.push(ContactRegion {
            volume: reg.volume,
            point,
            centroid,
            normal: (-reg.area_b).normalize_or_zero(),
            translation_gradient: reg.area_b,
            rotation_gradient: reg.moment_b + (origin - point).cross(reg.area_b),
            area_b: reg.weight,
            pieces_b: reg.pieces,
            pieces_a: reg.pieces_a,
        });
    }
    result.rotation_gradient =
        moment_total + (origin - options.centre).cross(result.translation_gradient);
    scratch.buffers = buffers;
    Ok(result)
}

/// The part of a crossing triangle of B in one region.
#[derive(Debug)]
struct Part {
    piece: u32,
    region: usize,
    next: u32,
    area: DVec3,
    moment: DVec3,
}

/// The region node of an inside vertex (made on first use).
fn vertex_node(ms: &mut MeshScratch, uf: &mut Vec<u32>, v: u32) -> u32 {
    let n = ms.vert_node[v as usize];
    if n != NONE {
        return n;
    }
    let n = uf.len() as u32;
    uf.push(n);
    ms.vert_node[v as usize] = n;
    n
}

#[derive(Default)]
struct RegionSums {
    volume: f64,
    area_b: DVec3,
    moment_b: DVec3,
    weight: f64,
    weighted_point: DVec3,
    first_moment: DVec3,
    pieces: Vec<SurfacePiece>,
    pieces_a: Vec<SurfacePiece>,
}

fn push_crossing(
    ms: &mut MeshScratch,
    crossings: &mut Vec<EdgeCrossing>,
    stamp: u32,
    e: u32,
    other: u32,
    c: &Crossing,
) {
    let head = ms.head(stamp, e);
    ms.edge_stamp[e as usize] = stamp;
    ms.edge_head[e as usize] = crossings.len() as u32;
    crossings.push(EdgeCrossing {
        next: head,
        other,
        point: c.point,
        entering: c.entering,
    });
}

fn find(uf: &mut [u32], mut x: u32) -> u32 {
    while uf[x as usize] != x {
        let up = uf[uf[x as usize] as usize];
        uf[x as usize] = up;
        x = up;
    }
    x
}

/// Unites two region nodes, the smaller index becoming the root (deterministic).
fn union(uf: &mut [u32], a: u32, b: u32) {
    let (ra, rb) = (find(uf, a), find(uf, b));
    if ra != rb {
        uf[ra.max(rb) as usize] = ra.min(rb);
    }
}

//! Ray casting against a triangle mesh through a balanced AABB tree, returning every hit along a
//! line: the ray-sampling primitive of Wang, Faure & Pai 2012, section 2.2 (the depth layers of
//! Eq. 1).
//!
//! A [`RayMesh`] is a mesh placed in a frame by a [`DPose`]: its vertices are mapped once with
//! [`DPose::transform_point`] (the crate's one `f64` transform) and the boxes of the mesh's
//! [`BalancedTree`] are refitted over those `f64` vertices (exact minima and maxima, so every box
//! contains its triangles exactly). The tree's implicit level-by-level layout is kept.
//!
//! **Watertight hit test.** A line is reduced to a point `q` in a 2D plane: for an axis-parallel
//! line along axis `k` the plane is the exact projection dropping `k` (no arithmetic at all); for
//! a general line it is the shear of Woop, Benthin & Wald 2013 ("Watertight ray/triangle
//! intersection"), which rounds but maps every vertex the same way for all its triangles. The
//! point is inside a projected triangle when the three exact `orient2d` signs of its edges agree.
//! A zero sign (the line through an edge or a vertex, or a triangle seen edge-on) is resolved by
//! simulation of simplicity: `q` is moved to `q + (ε, ε²)`, whose signs follow from exact
//! coordinate comparisons. The two triangles of a shared edge see it in opposite directions and
//! get opposite signs, so the perturbed line crosses exactly one of them, never both or none;
//! edge-on triangles are never crossed. Along every line, the crossings of a closed mesh are then
//! those of a generic line: entering and leaving hits alternate (per connected component) and
//! balance, which is what interval sampling needs.
//!
//! **Blocks of parallel lines.** `cast_axis_block` walks the tree once for up to 8 × 8
//! axis-parallel lines, carrying down the rows and columns of lines that pass through each box;
//! every line gets the hits and hit order of its own [`RayMesh::cast_axis`].
//!
//! Entering or leaving follows from the common sign, which is exactly the sign of `n · d` for
//! the triangle's normal `n` and the line direction `d`.

use super::VolumeError;
use crate::bvh::BalancedTree;
use crate::mesh::TriMesh;
use crate::pose::DPose;
use glam::DVec3;
use robust::{Coord, orient2d};

/// One crossing of a line with a triangle.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LineCrossing {
    /// The triangle's index in the mesh.
    pub triangle: u32,
    /// Line parameter of the hit: the point is `origin + t · dir` (for an [`AxisRay`], `t` is
    /// the coordinate along the axis). Negative values are hits behind the origin.
    pub t: f64,
    /// Barycentric weights of the hit for the triangle's three vertices (non-negative, sum 1).
    pub barycentric: [f64; 3],
    /// Whether the line enters the solid here (`n · d < 0` for the outward normal `n`).
    pub entering: bool,
}

/// A line parallel to coordinate axis `axis`, through the points whose two other coordinates
/// are `u` (axis `(axis + 1) % 3`) and `v` (axis `(axis + 2) % 3`), directed along `+axis`
/// (an axis above 2 is taken modulo 3).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AxisRay {
    /// The axis (0, 1 or 2).
    pub axis: usize,
    /// Coordinate along axis `(axis + 1) % 3`.
    pub u: f64,
    /// Coordinate along axis `(axis + 2) % 3`.
    pub v: f64,
}

impl AxisRay {
    /// The point of the line at parameter `t`.
    pub fn point(&self, t: f64) -> DVec3 {
        let k = self.axis % 3;
        let mut p = DVec3::ZERO;
        p[k] = t;
        p[(k + 1) % 3] = self.u;
        p[(k + 2) % 3] = self.v;
        p
    }
}

/// A mesh placed in a frame, with `f64` vertices and a refitted [`BalancedTree`], ready for
/// exact ray casting (see the module documentation).
#[derive(Clone, Debug)]
pub struct RayMesh {
    vertices: Vec<DVec3>,
    triangles: Vec<[u32; 3]>,
    /// Per node, in the order of [`BalancedTree::nodes`]: lower and upper corner.
    boxes: Vec<[DVec3; 2]>,
    /// Per node: the leaf's triangle (meaningful for leaves only).
    leaf_triangle: Vec<u32>,
    level_offsets: Vec<usize>,
    /// Largest absolute vertex coordinate (for the padding of general-line box tests).
    scale: f64,
}

impl RayMesh {
    /// Places `mesh` at the identity, with the tree [`BalancedTree::build`] built over it (so
    /// the tree matches and the pose is finite: this cannot fail).
    pub(crate) fn at_identity(mesh: &TriMesh, tree: &BalancedTree) -> Self {
        Self::place(mesh, tree, &DPose::IDENTITY)
    }

    /// Places `mesh`, with its tree `tree` (built by [`BalancedTree::build`] over the same
    /// mesh), by `pose`. Fails when the tree does not match the mesh or the pose is not finite.
    pub fn new(mesh: &TriMesh, tree: &BalancedTree, pose: &DPose) -> Result<Self, VolumeError> {
        if !pose.is_finite() {
            return Err(VolumeError::NonFinitePose);
        }
        if tree.triangle_count() != mesh.triangle_count() {
            return Err(VolumeError::TreeMismatch {
                tree: tree.triangle_count(),
                mesh: mesh.triangle_count(),
            });
        }
        Ok(Self::place(mesh, tree, pose))
    }

    /// [`Self::new`] without its checks: `tree` matches `mesh` and `pose` is finite.
    fn place(mesh: &TriMesh, tree: &BalancedTree, pose: &DPose) -> Self {
        let depth = tree.depth();
        let level_offsets = tree.level_offsets().to_vec();
        let mut leaf_triangle = vec![0u32; tree.nodes().len()];
        let leaf_base = level_offsets[depth];
        for (i, node) in tree.level(depth).iter().enumerate() {
            leaf_triangle[leaf_base + i] = node.index;
        }
        let mut placed = Self {
            vertices: Vec::new(),
            triangles: mesh.triangles().to_vec(),
            boxes: vec![[DVec3::ZERO; 2]; tree.nodes().len()],
            leaf_triangle,
            level_offsets,
            scale: 0.0,
        };
        placed.repose(mesh, pose);
        placed
    }

    /// Moves this mesh to `pose`: `mesh` must be the mesh it was placed from (same vertex count
    /// and triangles; only the vertices are read). Reuses every buffer, so a sampler that
    /// places the same mesh on every query allocates nothing.
    pub(crate) fn repose(&mut self, mesh: &TriMesh, pose: &DPose) {
        self.vertices.clear();
        self.vertices
            .extend(mesh.vertices().iter().map(|&v| pose.transform_point(v)));
        let depth = self.levels() - 1;
        let lo = &self.level_offsets;
        for node in lo[depth]..lo[depth + 1] {
            // The tree was built over this mesh, so the indices are valid.
            let t = self.leaf_triangle[node];
            let [a, b, c] = self.triangles[t as usize].map(|i| self.vertices[i as usize]);
            self.boxes[node] = [a.min(b).min(c), a.max(b).max(c)];
        }
        // Node i of a level has children 2i and (when it exists) 2i + 1 on the level below.
        for l in (0..depth).rev() {
            let (base, below) = (lo[l], lo[l + 1]);
            let below_len = lo[l + 2] - below;
            for i in 0..below - base {
                let first = self.boxes[below + 2 * i];
                self.boxes[base + i] = if 2 * i + 1 < below_len {
                    let second = self.boxes[below + 2 * i + 1];
                    [first[0].min(second[0]), first[1].max(second[1])]
                } else {
                    first
                };
            }
        }
        self.scale = self
            .vertices
            .iter()
            .fold(0.0f64, |s, v| s.max(v.abs().max_element()));
    }

    /// The triangles of the tree's leaves, in leaf order (the order of a depth-first walk).
    pub(crate) fn leaf_order(&self) -> impl Iterator<Item = u32> + '_ {
        let depth = self.levels() - 1;
        self.leaf_triangle[self.level_offsets[depth]..self.level_offsets[depth + 1]]
            .iter()
            .copied()
    }

    /// The placed vertices.
    pub fn vertices(&self) -> &[DVec3] {
        &self.vertices
    }

    /// The triangles (vertex indices).
    pub fn triangles(&self) -> &[[u32; 3]] {
        &self.triangles
    }

    /// The placed corners of triangle `t` (`t` must be a valid index).
    pub fn triangle(&self, t: usize) -> [DVec3; 3] {
        self.triangles[t].map(|i| self.vertices[i as usize])
    }

    /// The unit outward normal of triangle `t` in the placed frame (zero if degenerate).
    pub fn unit_normal(&self, t: usize) -> DVec3 {
        let [a, b, c] = self.triangle(t);
        (b - a).cross(c - a).normalize_or_zero()
    }

    /// Bounding box of the placed vertices: `[min, max]`.
    pub fn bounds(&self) -> [DVec3; 2] {
        self.boxes[0]
    }

    fn levels(&self) -> usize {
        self.level_offsets.len() - 1
    }

    fn level_len(&self, l: usize) -> usize {
        self.level_offsets[l + 1] - self.level_offsets[l]
    }

    /// Depth-first traversal: calls `leaf` for every leaf whose box passes `accept`.
    fn traverse(&self, accept: impl Fn(&[DVec3; 2]) -> bool, mut leaf: impl FnMut(u32)) {
        let depth = self.levels() - 1;
        // Depth-first with the right child pushed below the left: at most one pending node per
        // level plus the current one, and a tree over u32 triangles has at most 33 levels.
        let mut stack = [(0usize, 0usize); 72];
        let mut top = 1;
        while top > 0 {
            top -= 1;
            let (l, i) = stack[top];
            let node = self.level_offsets[l] + i;
            if !accept(&self.boxes[node]) {
                continue;
            }
            if l == depth {
                leaf(self.leaf_triangle[node]);
                continue;
            }
            let below = self.level_len(l + 1);
            for c in (2 * i..(2 * i + 2).min(below)).rev() {
                stack[top] = (l + 1, c);
                top += 1;
            }
        }
    }

    /// Appends every hit of the axis-parallel line `ray` to `out` (unsorted), using the tree.
    pub fn cast_axis(&self, ray: &AxisRay, out: &mut Vec<LineCrossing>) {
        let k = ray.axis % 3;
        let (ku, kv) = ((k + 1) % 3, (k + 2) % 3);
        let (u, v) = (ray.u, ray.v);
        self.traverse(
            |b| b[0][ku] <= u && u <= b[1][ku] && b[0][kv] <= v && v <= b[1][kv],
            |t| {
                if let Some(h) = self.hit_axis(t, k, u, v) {
                    out.push(h);
                }
            },
        );
    }

    /// Every hit of a block of axis-parallel lines along axis `axis`: the lines through
    /// `(us[i], vs[j])` for all `i < us.len()`, `j < vs.len()` (at most [`BLOCK_SIDE`] of each;
    /// more are ignored), line `i · vs.len() + j`, skipping the lines whose `mask` bit is clear.
    ///
    /// One traversal of the tree serves the whole block: a node is entered when one of the
    /// block's lines passes through its box, and a leaf's triangle is tested against
    /// exactly the lines of the block that its box contains. A line's hit set and hit order are
    /// therefore those of [`Self::cast_axis`]: both test the triangles of the leaves whose boxes
    /// contain the line (a parent's box contains its children's), with the same test, in the
    /// same depth-first leaf order.
    pub(crate) fn cast_axis_block(
        &self,
        axis: usize,
        us: &[f64],
        vs: &[f64],
        mask: u64,
        out: &mut BlockHits,
    ) {
        let k = axis % 3;
        let (ku, kv) = ((k + 1) % 3, (k + 2) % 3);
        let us = &us[..us.len().min(BLOCK_SIDE)];
        let vs = &vs[..vs.len().min(BLOCK_SIDE)];
        let nv = vs.len();
        let lines = us.len() * nv;
        out.clear(lines);
        if lines == 0 || mask == 0 {
            return;
        }
        // The rows and columns that hold a line to cast.
        let (mut rows, mut cols) = (0u64, 0u64);
        for line in 0..lines {
            if mask >> line & 1 == 1 {
                rows |= 1 << (line / nv);
                cols |= 1 << (line % nv);
            }
        }
        // The bits of `m` whose coordinate lies in `[lo, hi]` (a NaN coordinate never does).
        let within = |c: &[f64], mut m: u64, lo: f64, hi: f64| {
            let mut kept = m;
            while m != 0 {
                let i = m.trailing_zeros() as usize;
                m &= m - 1;
                if !(lo <= c[i] && c[i] <= hi) {
                    kept &= !(1 << i);
                }
            }
            kept
        };
        let depth = self.levels() - 1;
        // Depth-first, left child first (the leaf order of `traverse`), each node with the rows
        // and columns of its parent that pass through its box.
        let mut stack = [(0usize, 0usize, 0u64, 0u64); 72];
        stack[0] = (0, 0, rows, cols);
        let mut top = 1;
        while top > 0 {
            top -= 1;
            let (l, i, pu, pv) = stack[top];
            let node = self.level_offsets[l] + i;
            let b = &self.boxes[node];
            let mu = within(us, pu, b[0][ku], b[1][ku]);
            if mu == 0 {
                continue;
            }
            let mv = within(vs, pv, b[0][kv], b[1][kv]);
            if mv == 0 {
                continue;
            }
            if l + 1 < depth {
                // Skip a level: push the (up to four) grandchildren, right-most first. Their
                // own box tests only keep lines that the skipped child would have kept too
                // (its box contains theirs), so the leaves and lines reached do not change.
                let (below, below2) = (self.level_len(l + 1), self.level_len(l + 2));
                for c in (2 * i..(2 * i + 2).min(below)).rev() {
                    for g in (2 * c..(2 * c + 2).min(below2)).rev() {
                        stack[top] = (l + 2, g, mu, mv);
                        top += 1;
                    }
                }
                continue;
            }
            if l < depth {
                let below = self.level_len(l + 1);
                for c in (2 * i..(2 * i + 2).min(below)).rev() {
                    stack[top] = (l + 1, c, mu, mv);
                    top += 1;
                }
                continue;
            }
            let t = self.leaf_triangle[node];
            let mut mu = mu;
            while mu != 0 {
                let iu = mu.trailing_zeros() as usize;
                mu &= mu - 1;
                let mut m = mv;
                while m != 0 {
                    let jv = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let line = iu * nv + jv;
                    if mask >> line & 1 == 0 {
                        continue;
                    }
                    if let Some(h) = self.hit_axis(t, k, us[iu], vs[jv]) {
                        out.scratch.push((line as u32, h));
                    }
                }
            }
        }
        out.group();
    }

    /// The same hits as [`Self::cast_axis`], by testing every triangle (the oracle).
    pub fn cast_axis_brute(&self, ray: &AxisRay, out: &mut Vec<LineCrossing>) {
        let k = ray.axis % 3;
        for t in 0..self.triangles.len() as u32 {
            if let Some(h) = self.hit_axis(t, k, ray.u, ray.v) {
                out.push(h);
            }
        }
    }

    /// The hit of triangle `t` (a valid index) with the line along axis `k` through `(u, v)`.
    pub(crate) fn hit_axis(&self, t: u32, k: usize, u: f64, v: f64) -> Option<LineCrossing> {
        let p = self.triangle(t as usize);
        let (ku, kv) = ((k + 1) % 3, (k + 2) % 3);
        let c = p.map(|x| Coord { x: x[ku], y: x[kv] });
        let (sign, bary) = point_in_triangle_sos(c, Coord { x: u, y: v })?;
        Some(LineCrossing {
            triangle: t,
            t: interpolate(bary, [p[0][k], p[1][k], p[2][k]]),
            barycentric: bary,
            entering: sign < 0,
        })
    }

    /// Appends every hit of the line `origin + t · dir` (all real `t`) to `out` (unsorted),
    /// using the tree. Fails on a non-finite origin or direction, or a zero direction.
    pub fn cast_line(
        &self,
        origin: DVec3,
        dir: DVec3,
        out: &mut Vec<LineCrossing>,
    ) -> Result<(), VolumeError> {
        let shear = Shear::new(origin, dir)?;
        // Box tests are padded far beyond the rounding of the shear and the slab arithmetic, so
        // they never reject a triangle that the hit test would accept.
        let pad = 1e-9 * (self.scale + origin.abs().max_element()) + f64::MIN_POSITIVE;
        let inv = dir.recip();
        self.traverse(
            |b| {
                let mut t0 = f64::NEG_INFINITY;
                let mut t1 = f64::INFINITY;
                for i in 0..3 {
                    let (lo, hi) = (b[0][i] - pad, b[1][i] + pad);
                    if dir[i] == 0.0 {
                        if origin[i] < lo || origin[i] > hi {
                            return false;
                        }
                    } else {
                        let (a, c) = ((lo - origin[i]) * inv[i], (hi - origin[i]) * inv[i]);
                        t0 = t0.max(a.min(c));
                        t1 = t1.min(a.max(c));
                    }
                }
                // Relative slack for the rounding of the slab parameters.
                t0 <= t1 + 1e-9 * (t0.abs() + t1.abs())
            },
            |t| {
                if let Some(h) = self.hit_line(t, &shear) {
                    out.push(h);
                }
            },
        );
        Ok(())
    }

    /// The same hits as [`Self::cast_line`], by testing every triangle (the oracle).
    pub fn cast_line_brute(
        &self,
        origin: DVec3,
        dir: DVec3,
        out: &mut Vec<LineCrossing>,
    ) -> Result<(), VolumeError> {
        let shear = Shear::new(origin, dir)?;
        for t in 0..self.triangles.len() as u32 {
            if let Some(h) = self.hit_line(t, &shear) {
                out.push(h);
            }
        }
        Ok(())
    }

    fn hit_line(&self, t: u32, s: &Shear) -> Option<LineCrossing> {
        let p = self.triangle(t as usize);
        let rel = p.map(|x| x - s.origin);
        let c = rel.map(|r| Coord {
            x: r[s.kx] - s.sx * r[s.kz],
            y: r[s.ky] - s.sy * r[s.kz],
        });
        let (sign, bary) = point_in_triangle_sos(c, Coord { x: 0.0, y: 0.0 })?;
        let z = interpolate(bary, [rel[0][s.kz], rel[1][s.kz], rel[2][s.kz]]);
        Some(LineCrossing {
            triangle: t,
            t: z / s.dz,
            barycentric: bary,
            entering: sign < 0,
        })
    }
}

/// Lines per side of a block in [`RayMesh::cast_axis_block`] (a block has at most 64 lines, one
/// bit each in its mask).
pub(crate) const BLOCK_SIDE: usize = 8;

/// The hits of a block of lines, grouped by line (see [`RayMesh::cast_axis_block`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct BlockHits {
    /// Hits in traversal order, tagged with their line.
    scratch: Vec<(u32, LineCrossing)>,
    /// Hits grouped by line, each line's in traversal order.
    hits: Vec<LineCrossing>,
    /// `hits[start[l]..start[l + 1]]` are line `l`'s.
    start: Vec<usize>,
}

impl BlockHits {
    fn clear(&mut self, lines: usize) {
        self.scratch.clear();
        self.hits.clear();
        self.start.clear();
        self.start.resize(lines + 1, 0);
    }

    /// A stable counting sort of the tagged hits by line.
    fn group(&mut self) {
        let lines = self.start.len() - 1;
        for &(l, _) in &self.scratch {
            self.start[l as usize + 1] += 1;
        }
        for l in 0..lines {
            self.start[l + 1] += self.start[l];
        }
        let mut next = self.start.clone();
        let filler = LineCrossing {
            triangle: 0,
            t: 0.0,
            barycentric: [0.0; 3],
            entering: false,
        };
        self.hits.resize(self.scratch.len(), filler);
        for &(l, h) in &self.scratch {
            self.hits[next[l as usize]] = h;
            next[l as usize] += 1;
        }
    }

    /// Starts a block of `lines` lines (for casters outside this module).
    pub(crate) fn begin(&mut self, lines: usize) {
        self.clear(lines);
    }

    /// Records a hit of line `line` (below the count given to [`Self::begin`]).
    pub(crate) fn push(&mut self, line: usize, hit: LineCrossing) {
        self.scratch.push((line as u32, hit));
    }

    /// Groups the recorded hits by line, each line's in the order recorded.
    pub(crate) fn finish(&mut self) {
        self.group();
    }

    /// The hits of line `l` (empty for a line outside the block or skipped by the mask).
    pub(crate) fn line(&self, l: usize) -> &[LineCrossing] {
        match (self.start.get(l), self.start.get(l + 1)) {
            (Some(&a), Some(&b)) => &self.hits[a..b],
            _ => &[],
        }
    }
}

/// `Σ λᵢ zᵢ`, written relative to the first corner so that a triangle at constant depth gives
/// that depth exactly (coplanar faces of two meshes then report equal depths).
#[inline]
fn interpolate(bary: [f64; 3], z: [f64; 3]) -> f64 {
    z[0] + bary[1] * (z[1] - z[0]) + bary[2] * (z[2] - z[0])
}

/// The shear of Woop et al. 2013 that maps a line to the `kz` axis through the origin.
struct Shear {
    origin: DVec3,
    kx: usize,
    ky: usize,
    kz: usize,
    sx: f64,
    sy: f64,
    dz: f64,
}

impl Shear {
    fn new(origin: DVec3, dir: DVec3) -> Result<Self, VolumeError> {
        if !origin.is_finite() || !dir.is_finite() || dir == DVec3::ZERO {
            return Err(VolumeError::InvalidRay);
        }
        let a = dir.abs();
        let kz = if a.x >= a.y && a.x >= a.z {
            0
        } else if a.y >= a.z {
            1
        } else {
            2
        };
        let (mut kx, mut ky) = ((kz + 1) % 3, (kz + 2) % 3);
        // Keep the 2D orientation equal to the sign of n · dir.
        if dir[kz] < 0.0 {
            std::mem::swap(&mut kx, &mut ky);
        }
        Ok(Self {
            origin,
            kx,
            ky,
            kz,
            sx: dir[kx] / dir[kz],
            sy: dir[ky] / dir[kz],
            dz: dir[kz],
        })
    }
}

/// Sign of `orient2d(a, b, q + (ε, ε²))` for an infinitesimal `ε > 0`: exact, and zero only when
/// `a` and `b` coincide.
#[inline]
fn edge_sign(a: Coord<f64>, b: Coord<f64>, q: Coord<f64>) -> (i8, f64) {
    let o = orient2d(a, b, q);
    if o > 0.0 {
        return (1, o);
    }
    if o < 0.0 {
        return (-1, o);
    }
    // orient2d(a, b, q) = (b.x - a.x)(q.y - a.y) - (b.y - a.y)(q.x - a.x): its derivative in
    // q.x is a.y - b.y (the ε term), in q.y it is b.x - a.x (the ε² term).
    let s = if a.y != b.y {
        if a.y > b.y { 1 } else { -1 }
    } else if b.x > a.x {
        1
    } else if b.x < a.x {
        -1
    } else {
        0
    };
    (s, 0.0)
}

/// Whether the perturbed point `q + (ε, ε²)` lies inside the projected triangle `p`: its common
/// edge sign (the orientation of the triangle) and the barycentric weights of `q` itself.
#[inline]
fn point_in_triangle_sos(p: [Coord<f64>; 3], q: Coord<f64>) -> Option<(i8, [f64; 3])> {
    let (s0, w0) = edge_sign(p[1], p[2], q);
    let (s1, w1) = edge_sign(p[2], p[0], q);
    if s0 == 0 || s0 != s1 {
        return None;
    }
    let (s2, w2) = edge_sign(p[0], p[1], q);
    if s2 != s0 {
        return None;
    }
    // The weights are exact-signed (zero or of sign s0), so their sum is non-zero unless all
    // three vanish, which a non-degenerate projected triangle cannot do.
    let sum = w0 + w1 + w2;
    if sum == 0.0 || !sum.is_finite() {
        // A sliver whose weights underflow: split evenly among the vertices.
        return Some((s0, [1.0 / 3.0; 3]));
    }
    Some((s0, [w0 / sum, w1 / sum, w2 / sum]))
}

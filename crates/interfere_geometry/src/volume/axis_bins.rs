//! Per-axis 2D bins of a fixed mesh's projected triangles, for casting many axis-parallel lines
//! against a mesh that does not move in the sampling frame (A in [`super::UniformVolume`]).
//! An acceleration of the ray sampling of Wang, Faure & Pai 2012, section 2.2 (Eq. 1): ours, not
//! the paper's.
//!
//! For axis `k`, the rectangle of the mesh's bounds across `k` is cut into `n × n` cells, and
//! each triangle is listed in every cell that its projected bounding box meets, in the leaf
//! order of the mesh's tree. A line looks up its cell and tests the listed triangles whose box
//! contains it, with [`RayMesh`]'s exact hit test. Those are exactly the triangles whose leaves
//! the tree walk reaches (a leaf is reached when its box contains the line, a parent's box
//! containing its children's), in the same depth-first leaf order, so a line gets the hits, in
//! the order, of [`RayMesh::cast_axis`].
//!
//! **Exact lookup.** The cell of a coordinate `x` is `⌊fl((x − lo) · s)⌋`, clamped to the grid,
//! for the same `lo` and `s` at build and lookup. Rounding is monotone, so `a ≤ x ≤ b` puts the
//! cell of `x` between those of `a` and `b`: a triangle whose box contains a line is listed in
//! the line's cell. A line outside the rectangle meets no triangle's box and gets no hits.
//!
//! Building costs one pass over the triangles per axis; a sampler that casts a few thousand
//! lines per query against the same placed mesh pays it once. A mesh whose boxes would fill too
//! many cells (very long, thin triangles across a fine grid) is not binned on that axis, and its
//! lines go through the tree.

use super::ray_bvh::{BLOCK_SIDE, BlockHits, RayMesh};

/// Cells per triangle, on average, above which an axis is not binned.
const MAX_ENTRIES_PER_TRIANGLE: usize = 16;

/// One listed triangle: its index and its projected box `[u_lo, u_hi, v_lo, v_hi]`.
#[derive(Clone, Copy, Debug)]
struct Entry {
    triangle: u32,
    bounds: [f64; 4],
}

/// The bins of one axis.
#[derive(Clone, Debug)]
struct Bins {
    axis: usize,
    lo: [f64; 2],
    hi: [f64; 2],
    /// Cells per unit length, per direction.
    scale: [f64; 2],
    n: usize,
    /// `entries[start[c]..start[c + 1]]` are cell `c`'s (`c = i · n + j`).
    start: Vec<u32>,
    entries: Vec<Entry>,
}

impl Bins {
    fn build(mesh: &RayMesh, axis: usize) -> Option<Self> {
        let (ku, kv) = ((axis + 1) % 3, (axis + 2) % 3);
        let [blo, bhi] = mesh.bounds();
        let (lo, hi) = ([blo[ku], blo[kv]], [bhi[ku], bhi[kv]]);
        let triangles = mesh.triangles().len();
        // About four triangles' worth of cells per triangle side: a few entries per cell.
        let n = (((triangles / 4) as f64).sqrt().ceil() as usize).clamp(1, 1024);
        let scale = [0, 1].map(|d| {
            let extent = hi[d] - lo[d];
            if extent > 0.0 && extent.is_finite() {
                n as f64 / extent
            } else {
                0.0
            }
        });
        if !(scale[0].is_finite() && scale[1].is_finite()) {
            return None;
        }
        let mut bins = Self {
            axis,
            lo,
            hi,
            scale,
            n,
            start: vec![0; n * n + 1],
            entries: Vec::new(),
        };
        let boxes: Vec<(u32, [f64; 4], [usize; 4])> = mesh
            .leaf_order()
            .map(|t| {
                let [a, b, c] = mesh.triangle(t as usize);
                let bmin = a.min(b).min(c);
                let bmax = a.max(b).max(c);
                let bounds = [bmin[ku], bmax[ku], bmin[kv], bmax[kv]];
                let cells = [
                    bins.cell(0, bounds[0]),
                    bins.cell(0, bounds[1]),
                    bins.cell(1, bounds[2]),
                    bins.cell(1, bounds[3]),
                ];
                (t, bounds, cells)
            })
            .collect();
        let total: usize = boxes
            .iter()
            .map(|(_, _, c)| (c[1] - c[0] + 1) * (c[3] - c[2] + 1))
            .sum();
        if total > MAX_ENTRIES_PER_TRIANGLE * triangles.max(1) || total > u32::MAX as usize {
            return None;
        }
        for (_, _, c) in &boxes {
            for i in c[0]..=c[1] {
                for j in c[2]..=c[3] {
                    bins.start[i * n + j + 1] += 1;
                }
            }
        }
        for cell in 0..n * n {
            bins.start[cell + 1] += bins.start[cell];
        }
        let mut next: Vec<u32> = bins.start[..n * n].to_vec();
        let filler = Entry {
            triangle: 0,
            bounds: [0.0; 4],
        };
        bins.entries = vec![filler; total];
        for &(triangle, bounds, c) in &boxes {
            for i in c[0]..=c[1] {
                for j in c[2]..=c[3] {
                    let slot = &mut next[i * n + j];
                    bins.entries[*slot as usize] = Entry { triangle, bounds };
                    *slot += 1;
                }
            }
        }
        Some(bins)
    }

    /// The cell index of coordinate `x` in direction `d` (0: u, 1: v), clamped to the grid.
    #[inline]
    fn cell(&self, d: usize, x: f64) -> usize {
        let c = ((x - self.lo[d]) * self.scale[d]).floor();
        if c >= self.n as f64 {
            self.n - 1
        } else if c >= 0.0 {
            c as usize
        } else {
            0
        }
    }
}

/// The bins of a mesh on the three axes (an axis is missing when it could not be binned).
#[derive(Clone, Debug)]
pub(crate) struct AxisBins {
    axes: [Option<Bins>; 3],
}

impl AxisBins {
    /// Bins `mesh` (placed where it will be cast against) on the three axes.
    pub(crate) fn build(mesh: &RayMesh) -> Self {
        Self {
            axes: std::array::from_fn(|k| Bins::build(mesh, k)),
        }
    }

    /// Whether axis `axis` is binned (else its lines go through the tree).
    #[cfg(test)]
    pub(crate) fn binned(&self, axis: usize) -> bool {
        self.axes[axis % 3].is_some()
    }

    /// [`RayMesh::cast_axis_block`] of `mesh` (the mesh these bins were built from), through
    /// the bins when the axis has them: the same hits, in the same order, on every line.
    pub(crate) fn cast_axis_block(
        &self,
        mesh: &RayMesh,
        axis: usize,
        us: &[f64],
        vs: &[f64],
        mask: u64,
        out: &mut BlockHits,
    ) {
        let Some(bins) = &self.axes[axis % 3] else {
            mesh.cast_axis_block(axis, us, vs, mask, out);
            return;
        };
        let k = bins.axis;
        let us = &us[..us.len().min(BLOCK_SIDE)];
        let vs = &vs[..vs.len().min(BLOCK_SIDE)];
        let nv = vs.len();
        out.begin(us.len() * nv);
        for (i, &u) in us.iter().enumerate() {
            if !(bins.lo[0] <= u && u <= bins.hi[0]) {
                continue;
            }
            let ci = bins.cell(0, u);
            for (j, &v) in vs.iter().enumerate() {
                let line = i * nv + j;
                if mask >> line & 1 == 0 || !(bins.lo[1] <= v && v <= bins.hi[1]) {
                    continue;
                }
                let c = ci * bins.n + bins.cell(1, v);
                let (a, b) = (bins.start[c] as usize, bins.start[c + 1] as usize);
                for e in &bins.entries[a..b] {
                    let [u0, u1, v0, v1] = e.bounds;
                    if u0 <= u
                        && u <= u1
                        && v0 <= v
                        && v <= v1
                        && let Some(h) = mesh.hit_axis(e.triangle, k, u, v)
                    {
                        out.push(line, h);
                    }
                }
            }
        }
        out.finish();
    }
}

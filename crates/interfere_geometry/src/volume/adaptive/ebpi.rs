//! The Error Bound Polynomial Image (Wang, Faure & Pai 2012, sections 3.2, 4.1 and 4.2: Alg. 1,
//! Alg. 2, Eq. 5–9), built on the CPU by a DDA raster of the mesh edges of both solids.
//!
//! For a view axis `k` the image plane holds the two other coordinates `(u, v)` = axes
//! `((k + 1) % 3, (k + 2) % 3)`, playing the paper's `(x, y)`; depth is along `k`. Every edge of
//! both meshes with a face that reaches into the overlap box's depth slab is clipped to the
//! box's column (the image rectangle at every depth), projected, and walked pixel by pixel. The
//! clip is not made in depth: an edge just above the box still bounds the sliver where its
//! steep face enters the box (and a face parallel to the view has its discontinuity line only
//! on the projections of its edges, which may all lie outside the box).
//! Within a pixel, the piece of projected length `(l_x, l_y)` adds to the seven coefficients of
//! Eq. 9 (`w²`, `h²`, `wh`, `h³/w`, `w³/h`, `h`, `w`), so that [`Texel::bound`] is the paper's
//! `Δ(w, h)`: an upper bound of the midpoint-quadrature error of all tiles of size `w × h` that
//! the edges cross.
//!
//! **Slopes (Alg. 1).** For a non-steep face with unit outward normal `n`, the depth is a linear
//! function of `(u, v)` with gradient `∇z = −(n_u, n_v) / n_k` (the paper's `α = n_x / n_z` up
//! to the sign). Alg. 1 chooses the signs `k^i, k^j = ±1` so that `k^i|α^i| + k^j|α^j|` is the
//! magnitude of the jump of the depth slope across the edge, measured away from the edge on
//! each side. We compute that jump directly: `J = ∇z_i − ∇z_j`, which is normal to the projected
//! edge (both planes agree along it). It is the jump of the sampled length function in both of
//! the paper's situations: two faces of the same depth layer (Fig. 3a), and a silhouette edge
//! (Fig. 3b), where the thickness `z_top − z_bot` starts with slope `∇z_top − ∇z_bot`.
//!
//! **Cases and narrow faces (Alg. 2).** The edge is in case 1 when its projection is steeper
//! than the pixel's diagonal (`l_y / l_x ≥ h_b / w_b`, crossing the front and back boundaries of
//! a tile): the slope taken is `α_1 = |J_u|` and the edge's slope in the plane
//! `β_1 = |e_u / e_v|`; otherwise case 2 with `α_2 = |J_v|`, `β_2 = |e_v / e_u|`. A face is
//! narrow when it is steep (`|n_k|` below [`STEEP`]) or when its depth interval `d` (within the
//! overlap box) is below a quarter of the frustum-extrapolated depth `w_b |α| / 8`; its error is
//! then the box `½ w h d` (with `k = +1`, the conservative sign) and the slope term keeps only
//! the other face's own slope.
//!
//! Edges whose projection lies on the image border are skipped: tiles never straddle the
//! border, so a kink or a wall there makes no midpoint error.
//!
//! Besides the seven channels, every texel keeps the two sums of Eq. 11 (the optimal tile aspect
//! ratio) and `Σ α`, `Σ d` of its edges for the butterfly bound of section 5.

use crate::topology::Edge;
use crate::volume::ray_bvh::RayMesh;
use glam::DVec3;

/// Below this `|n_k|` a unit face normal is taken as parallel to the view axis (Alg. 1's `ε`).
pub(crate) const STEEP: f64 = 1e-9;

/// One EBPI pixel: the Eq. 9 coefficients and the auxiliary sums.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Texel {
    /// Coefficients of `w²`, `h²`, `wh`, `h³/w`, `w³/h`, `h`, `w` (Eq. 9).
    pub c: [f64; 7],
    /// Eq. 11: `Σ l_x (α + d)` and `Σ l_y (α + d)`.
    pub aspect: [f64; 2],
    /// `Σ α` over the edge pieces in the pixel (section 5, butterfly slope).
    pub slope: f64,
    /// `Σ d` over the narrow faces in the pixel (section 5, offset `z_0`).
    pub depth: f64,
}

impl Texel {
    /// Adds another texel's channels (the pyramid's coarsening).
    pub fn add(&mut self, o: &Texel) {
        for (a, b) in self.c.iter_mut().zip(o.c) {
            *a += b;
        }
        self.aspect[0] += o.aspect[0];
        self.aspect[1] += o.aspect[1];
        self.slope += o.slope;
        self.depth += o.depth;
    }

    /// Whether no edge contributes (one ray per tile is then exact up to transient edges).
    pub fn is_empty(&self) -> bool {
        self.c.iter().all(|&c| c == 0.0)
    }

    /// `Δ(w, h)` of Eq. 9: the error bound of the pixel sampled with `w × h` tiles.
    pub fn bound(&self, w: f64, h: f64) -> f64 {
        let c = &self.c;
        c[0] * w * w
            + c[1] * h * h
            + c[2] * w * h
            + c[3] * h * h * h / w
            + c[4] * w * w * w / h
            + c[5] * h
            + c[6] * w
    }
}

/// Alg. 2's result for one edge: which case, its slope and plane-slope terms, and the depth of
/// its narrow faces.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct EdgeTerms {
    /// Case 1 (the edge crosses the tile's front and back boundaries) or case 2.
    pub case1: bool,
    /// `Σ k|α|` over the edge's two faces (the slope jump across the edge).
    pub alpha: f64,
    /// `β`: the slope of the projected edge in the image plane.
    pub beta: f64,
    /// `Σ d` over its narrow faces.
    pub depth: f64,
}

impl EdgeTerms {
    /// Adds the piece of the edge with projected lengths `(lx, ly)` to a texel (Eq. 8 expanded
    /// into Eq. 9).
    pub fn accumulate(&self, lx: f64, ly: f64, t: &mut Texel) {
        let (a, b2) = (self.alpha, self.beta * self.beta);
        if self.case1 {
            t.c[0] += a * ly / 8.0;
            t.c[1] += a * b2 * ly / 24.0;
            t.c[2] += a * lx / 8.0;
            t.c[3] += a * b2 * lx / 24.0;
        } else {
            t.c[0] += a * b2 * lx / 24.0;
            t.c[1] += a * lx / 8.0;
            t.c[2] += a * ly / 8.0;
            t.c[4] += a * b2 * ly / 24.0;
        }
        t.c[5] += self.depth * lx / 2.0;
        t.c[6] += self.depth * ly / 2.0;
        t.aspect[0] += lx * (a + self.depth);
        t.aspect[1] += ly * (a + self.depth);
        t.slope += a;
        t.depth += self.depth;
    }
}

/// The depth gradient `∇z = −(n_u, n_v) / n_k` of a face, or `None` when it is steep.
pub(crate) fn depth_gradient(n: DVec3, k: usize) -> Option<[f64; 2]> {
    if n[k].abs() <= STEEP {
        return None;
    }
    Some([-n[(k + 1) % 3] / n[k], -n[(k + 2) % 3] / n[k]])
}

/// Alg. 1 and Alg. 2 for the edge between faces `i` and `j` (unit outward normals `ni`, `nj`,
/// depth intervals `di`, `dj`), whose projection has direction `e` in the image plane of axis
/// `k`, rasterized into pixels of size `pixel`.
pub(crate) fn edge_terms(
    ni: DVec3,
    nj: DVec3,
    di: f64,
    dj: f64,
    e: [f64; 2],
    k: usize,
    pixel: [f64; 2],
) -> EdgeTerms {
    let case1 = e[1].abs() * pixel[0] >= e[0].abs() * pixel[1];
    let (c, wb, beta) = if case1 {
        (0, pixel[0], (e[0] / e[1]).abs())
    } else {
        (1, pixel[1], (e[1] / e[0]).abs())
    };
    let beta = if beta.is_finite() { beta } else { 0.0 };
    let (gi, gj) = (depth_gradient(ni, k), depth_gradient(nj, k));
    let narrow = |g: Option<[f64; 2]>, d: f64| g.is_none_or(|g| wb * g[c].abs() / 8.0 > d);
    let (narrow_i, narrow_j) = (narrow(gi, di), narrow(gj, dj));
    let (alpha, depth) = match (gi, gj, narrow_i, narrow_j) {
        (Some(gi), Some(gj), false, false) => ((gi[c] - gj[c]).abs(), 0.0),
        (_, Some(gj), true, false) => (gj[c].abs(), di),
        (Some(gi), _, false, true) => (gi[c].abs(), dj),
        _ => (0.0, di + dj),
    };
    EdgeTerms {
        case1,
        alpha,
        beta,
        depth,
    }
}

/// A mesh placed in A's frame, with its face normals and edges, as the raster reads it.
pub(crate) struct EdgeSource<'m> {
    /// The placed mesh.
    pub mesh: &'m RayMesh,
    /// Unit outward normal per triangle.
    pub normals: &'m [DVec3],
    /// Edges with their two faces.
    pub edges: &'m [Edge],
}

/// The EBPI of one view axis over the overlap box's face, `n × n` pixels.
#[derive(Clone, Debug)]
pub(crate) struct Ebpi {
    /// Pixels per side.
    pub n: usize,
    /// Lower corner of the image (coordinates `u`, `v`).
    pub origin: [f64; 2],
    /// Pixel size `(w_b, h_b)`.
    pub pixel: [f64; 2],
    /// Texels, row `v` major: index `j * n + i` for column `i` (along `u`) and row `j`.
    pub texels: Vec<Texel>,
}

impl Ebpi {
    /// Rasterizes the edges of `sources` that meet the box `[lo, hi]` into an `n × n` image
    /// of the box's face orthogonal to axis `k`.
    pub fn build(k: usize, lo: DVec3, hi: DVec3, n: usize, sources: &[EdgeSource<'_>]) -> Self {
        let (ku, kv) = ((k + 1) % 3, (k + 2) % 3);
        let origin = [lo[ku], lo[kv]];
        let pixel = [(hi[ku] - lo[ku]) / n as f64, (hi[kv] - lo[kv]) / n as f64];
        let mut texels = vec![Texel::default(); n * n];
        // Edges on the box's faces count: pad the clip box (conservative, more edges only).
        let pad = 1e-9 * (hi - lo).max_element() + 1e-12 * lo.abs().max(hi.abs()).max_element();
        // The clip is a column: the image rectangle at every depth (see the module docs).
        let (mut blo, mut bhi) = (lo - DVec3::splat(pad), hi + DVec3::splat(pad));
        blo[k] = f64::NEG_INFINITY;
        bhi[k] = f64::INFINITY;
        for src in sources {
            // The depth interval of a face within the box's slab, `None` when it misses it.
            let depth_in_box = |t: u32| {
                let p = src.mesh.triangle(t as usize);
                let zmin = p[0][k].min(p[1][k]).min(p[2][k]).max(lo[k] - pad);
                let zmax = p[0][k].max(p[1][k]).max(p[2][k]).min(hi[k] + pad);
                (zmax >= zmin).then(|| (zmax - zmin).min(hi[k] - lo[k]))
            };
            for e in src.edges {
                if e.uses != 2 {
                    continue;
                }
                let v = src.mesh.vertices();
                let (p, q) = (v[e.vertices[0] as usize], v[e.vertices[1] as usize]);
                let Some((p, q)) = clip_segment(p, q, blo, bhi) else {
                    continue;
                };
                // An edge on the image border lies on tile boundaries, where a kink or a wall
                // makes no midpoint error (tiles never straddle the border).
                let on = |x: f64, y: f64, c: f64| (x - c).abs() <= pad && (y - c).abs() <= pad;
                if on(p[ku], q[ku], lo[ku])
                    || on(p[ku], q[ku], hi[ku])
                    || on(p[kv], q[kv], lo[kv])
                    || on(p[kv], q[kv], hi[kv])
                {
                    continue;
                }
                let d = q - p;
                let dir = [d[ku], d[kv]];
                if dir[0] == 0.0 && dir[1] == 0.0 {
                    // Parallel to the view axis: both faces are steep, and their error comes
                    // from their other edges.
                    continue;
                }
                let [fi, fj] = e.faces;
                let (di, dj) = (depth_in_box(fi), depth_in_box(fj));
                if di.is_none() && dj.is_none() {
                    continue;
                }
                let terms = edge_terms(
                    src.normals[fi as usize],
                    src.normals[fj as usize],
                    di.unwrap_or(0.0),
                    dj.unwrap_or(0.0),
                    dir,
                    k,
                    pixel,
                );
                if terms.alpha == 0.0 && terms.depth == 0.0 {
                    continue; // coplanar faces
                }
                let a = [
                    (p[ku] - origin[0]) / pixel[0],
                    (p[kv] - origin[1]) / pixel[1],
                ];
                let b = [
                    (q[ku] - origin[0]) / pixel[0],
                    (q[kv] - origin[1]) / pixel[1],
                ];
                raster(a, b, n, |i, j, t0, t1| {
                    let s = t1 - t0;
                    terms.accumulate(
                        (dir[0] * s).abs(),
                        (dir[1] * s).abs(),
                        &mut texels[j * n + i],
                    );
                });
            }
        }
        Self {
            n,
            origin,
            pixel,
            texels,
        }
    }
}

/// The part of segment `pq` inside the box `[lo, hi]` (Liang–Barsky), if any.
pub(crate) fn clip_segment(p: DVec3, q: DVec3, lo: DVec3, hi: DVec3) -> Option<(DVec3, DVec3)> {
    let d = q - p;
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for i in 0..3 {
        if d[i] == 0.0 {
            if p[i] < lo[i] || p[i] > hi[i] {
                return None;
            }
            continue;
        }
        let (a, b) = ((lo[i] - p[i]) / d[i], (hi[i] - p[i]) / d[i]);
        t0 = t0.max(a.min(b));
        t1 = t1.min(a.max(b));
        if t0 > t1 {
            return None;
        }
    }
    Some((p + d * t0, p + d * t1))
}

/// Walks the pixels of an `n × n` grid crossed by the segment from `a` to `b` (in pixel units),
/// calling `visit(i, j, t0, t1)` with the parameter range of the segment in pixel `(i, j)`
/// (Amanatides–Woo DDA). Points outside the grid are clamped to its border pixels.
pub(crate) fn raster(
    a: [f64; 2],
    b: [f64; 2],
    n: usize,
    mut visit: impl FnMut(usize, usize, f64, f64),
) {
    let last = n as i64 - 1;
    let cell = |x: f64| (x.floor() as i64).clamp(0, last);
    let (mut i, mut j) = (cell(a[0]), cell(a[1]));
    let d = [b[0] - a[0], b[1] - a[1]];
    let step = d.map(|x| if x > 0.0 { 1i64 } else { -1 });
    // Parameter of the next vertical / horizontal grid line, and the spacing between them.
    let next = |c: i64, x: f64, dx: f64, s: i64| {
        if dx == 0.0 {
            f64::INFINITY
        } else {
            let line = if s > 0 { c + 1 } else { c } as f64;
            ((line - x) / dx).max(0.0)
        }
    };
    let mut tmax = [next(i, a[0], d[0], step[0]), next(j, a[1], d[1], step[1])];
    let delta = d.map(|x| {
        if x == 0.0 {
            f64::INFINITY
        } else {
            1.0 / x.abs()
        }
    });
    let mut t = 0.0;
    for _ in 0..(4 * n + 4) {
        let tn = tmax[0].min(tmax[1]).min(1.0);
        if tn > t {
            visit(i as usize, j as usize, t, tn);
        }
        if tn >= 1.0 {
            return;
        }
        t = tn;
        if tmax[0] <= tmax[1] {
            tmax[0] += delta[0];
            i = (i + step[0]).clamp(0, last);
        } else {
            tmax[1] += delta[1];
            j = (j + step[1]).clamp(0, last);
        }
    }
    if t < 1.0 {
        visit(i as usize, j as usize, t, 1.0);
    }
}

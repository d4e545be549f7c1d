//! Uniformly ray-sampled intersection volume of two closed solids and its gradient
//! (Wang, Faure & Pai 2012, section 2.2, Eq. 1 and Eq. 2; the uniform-resolution scheme of
//! Faure et al. 2008 and Allard et al. 2010 that the paper's adaptive method refines).
//!
//! **Sampling.** B is placed in A's frame by `b_to_a`. Over the overlap of the two bounding
//! boxes, a grid of parallel lines is cast along each coordinate axis `k`; line `(i, j)` stands
//! for a pixel of area `w_k`. All hits of both meshes along a line are sorted by depth and swept
//! with one winding count per mesh; the line is inside the intersection where both counts are
//! positive. Eq. 1 is the sum, over these depth intervals `[z⁻, z⁺]`, of `w_k (z⁺ − z⁻)`; the
//! three axis estimates are averaged into [`VolumeResult::volume`].
//!
//! **Casting in blocks.** A is placed once, at the identity, when the sampler is built; B is
//! moved into A's frame on every query, in place (`RayMesh::repose`, reusing the last query's
//! buffers). The lines of an axis are cast in blocks of 8 × 8: one walk of B's tree serves a
//! block (`RayMesh::cast_axis_block`: a node is entered when one of the block's lines passes
//! through its box, a leaf is tested against exactly those lines), and B is cast only on the
//! lines that hit A. A sampler made by [`UniformVolume::new`] bins A's triangles per axis
//! (module `axis_bins`) and looks A's hits up there; [`UniformVolume::with_trees`] (one query
//! per sampler in the physics) walks A's tree like B's. Each line gets the hits, in the order,
//! that casting it alone would give, and the lines are reduced in the same order (`i`, then
//! `j`), so the result does not depend on either; on bunny25k this is 1.5–2.4 times faster than
//! one walk per line (the baseline of `interfere bench volume`, docs/benchmarks.md).
//!
//! **Error estimate and fitted box** (our additions): every result carries an estimate of its
//! sampling error read off the line lengths (module `error_estimate`), and
//! [`Sampling::Fitted`] samples the box that a coarse first pass finds the intersection in
//! instead of the whole overlap box.
//!
//! **Gradient (Eq. 2).** Each interval endpoint lies on a triangle of A or B, at barycentric
//! weights `λ`. Moving that triangle's vertex `p_m` by `δ` along the sampling axis `k` moves the
//! triangle's point on the line by `λ_m δ` along `k`, so the endpoint's depth changes by
//! `λ_m δ`: `∂z/∂p_m^k = λ_m`. An upper endpoint `z⁺` is where the line leaves the intersection
//! (the surface's outward normal has `n_k > 0`), a lower endpoint `z⁻` where it enters
//! (`n_k < 0`); hence `∂V_k/∂p_m^k = w_k Σ λ_m sign(n_k)` over the endpoints on triangles that use
//! vertex `m`. As in the paper, the `k` component of every vertex gradient comes from the rays
//! along axis `k`. (Equivalently, the endpoint is an area element `w_k / |n̂_k|` of the region's
//! boundary with outward normal `n̂`, whose `k` component is `w_k sign(n_k)`.) The derivative is
//! exact for the sampled estimate `V_k` while no interval appears, vanishes or merges.
//!
//! **Rigid motion of B.** Translating B by `δ` moves every vertex by `δ`, so `∂V/∂translation =
//! Σ_m g_m`; rotating B by a small angle `θ` about an axis `ω` through a centre `c` moves vertex
//! `m` by `θ ω × (p_m − c)`, so `∂V/∂θ = ω · Σ_m (p_m − c) × g_m`. The generalized force on B
//! that reduces the volume is the negated pair.

use super::VolumeError;
use super::axis_bins::AxisBins;
use super::error_estimate;
use super::intervals::IntervalSweep;
use super::ray_bvh::{AxisRay, BLOCK_SIDE, BlockHits, RayMesh};
use crate::bvh::BalancedTree;
use crate::pose::DPose;
use crate::topology::Solid;
use glam::DVec3;
use std::sync::Mutex;

/// How densely the overlap box is sampled.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Sampling {
    /// `R × R` lines per axis at the pixel centres of the overlap box's face (pixels are
    /// rectangles when the box is not a cube). The grid follows the box as the solids move.
    Resolution(u32),
    /// Square pixels of side `h` on a lattice fixed in A's frame (line coordinates
    /// `(i + ½) h`), covering the overlap box. The grid does not move with the solids, which
    /// makes the estimate vary smoothly under motion.
    Spacing(f64),
    /// The lattice of [`Sampling::Spacing`] shifted by `offset` (in A's frame): line
    /// coordinates `(i + ½) spacing + offset` along the two axes across each line (the offset's
    /// component along a line's own axis does nothing). A zero offset is
    /// [`Sampling::Spacing`]`(spacing)`, bit for bit. For studies of where a feature falls
    /// between lattice lines (`interfere bench small-obstacle`): the estimate is unbiased over
    /// offsets spread uniformly over one lattice cell.
    ShiftedSpacing {
        /// Side of the square pixels.
        spacing: f64,
        /// Shift of the lattice, in A's frame.
        offset: DVec3,
    },
    /// Two passes (our addition, not in the paper): `coarse × coarse` lines per axis over the
    /// overlap box find the intersection's extent (the box of their interval ends, grown by one
    /// coarse line spacing on every side, within the overlap box), then `resolution ×
    /// resolution` lines per axis sample that box, which is often much smaller than the overlap
    /// box (on the bunny bench it halves the mean error at equal resolution). The result (volume,
    /// gradient, points) is the second pass's; [`VolumeResult::ray_count`] counts both. A part
    /// of the intersection that no coarse line meets and that reaches further than one coarse
    /// spacing beyond the parts they meet is missed; when the coarse lines meet nothing, the
    /// second pass samples the whole overlap box. The box moves with what the coarse lines
    /// hit, so the estimate is not smooth under motion: for queries, not for contact forces.
    Fitted {
        /// Lines per side of the first pass.
        coarse: u32,
        /// Lines per side of the second pass.
        resolution: u32,
    },
}

/// Options of [`uniform_volume`] and [`UniformVolume::compute`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UniformOptions {
    /// Ray density.
    pub sampling: Sampling,
    /// Reference point (in A's frame) about which [`VolumeResult::torque`] is reduced.
    pub centre: DVec3,
    /// Whether to fill [`VolumeResult::points`].
    pub collect_points: bool,
    /// Refuse samplings that need more lines than this, over the three axes.
    pub max_rays: u64,
}

impl Default for UniformOptions {
    /// 32 lines per side, torque about A's origin, points collected, at most 2²⁴ lines.
    fn default() -> Self {
        Self {
            sampling: Sampling::Resolution(32),
            centre: DVec3::ZERO,
            collect_points: true,
            max_rays: 1 << 24,
        }
    }
}

/// One endpoint of a sampled depth interval: a point on the boundary of the intersection.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SurfacePoint {
    /// The point, in A's frame.
    pub point: DVec3,
    /// Unit outward normal of the intersection region there (the outward normal of the
    /// triangle it lies on), in A's frame.
    pub normal: DVec3,
    /// Whether the point lies on B's surface (else on A's).
    pub on_b: bool,
    /// The triangle it lies on, in its own mesh.
    pub triangle: u32,
    /// The sampling axis of its line.
    pub axis: u8,
    /// The surface area it stands for: pixel area `/ |normal_axis|`.
    pub area: f64,
}

/// The sampled intersection volume and its derivatives.
#[derive(Clone, Debug, PartialEq)]
pub struct VolumeResult {
    /// Mean of the three axis estimates.
    pub volume: f64,
    /// Eq. 1 estimate from the lines along each axis.
    pub axis_volumes: [f64; 3],
    /// Estimated standard deviation of the sampling error of each axis estimate, read off the
    /// sampled line lengths (uniform sampling, CPU and GPU; module `error_estimate`, which gives
    /// its calibration): an estimate, not a bound. `None` from the adaptive method, whose
    /// tolerance is a bound of its own.
    pub estimated_axis_error: Option<[f64; 3]>,
    /// `∂V/∂p` for every vertex of A (in A's frame).
    pub gradient_a: Vec<DVec3>,
    /// `∂V/∂p` for every vertex of B, its position taken in A's frame.
    pub gradient_b: Vec<DVec3>,
    /// Generalized force on B that reduces the volume: `−∂V/∂(translation of B)`, in A's frame.
    pub force: DVec3,
    /// Its torque part: `−∂V/∂(rotation of B about the centre)`, in A's frame.
    pub torque: DVec3,
    /// Lines cast over the three axes.
    pub ray_count: usize,
    /// Pixel area per axis.
    pub pixel_area: [f64; 3],
    /// Interval endpoints (when collected).
    pub points: Vec<SurfacePoint>,
}

impl VolumeResult {
    /// A zero result with zero gradients for `na` and `nb` vertices (empty gradient vectors
    /// when both are 0, as a pass that computes no gradient leaves them).
    fn empty(na: usize, nb: usize) -> Self {
        Self {
            volume: 0.0,
            axis_volumes: [0.0; 3],
            estimated_axis_error: Some([0.0; 3]),
            gradient_a: vec![DVec3::ZERO; na],
            gradient_b: vec![DVec3::ZERO; nb],
            force: DVec3::ZERO,
            torque: DVec3::ZERO,
            ray_count: 0,
            pixel_area: [0.0; 3],
            points: Vec::new(),
        }
    }

    /// [`Self::points`] grouped by sampling line: the maximal runs of consecutive points with
    /// the same axis and the same two coordinates across it. A query collects the endpoints of
    /// one line together, in order along it (entry before exit), so each run is one line's
    /// intervals. The coordinates are compared exactly, which holds for results sampled along
    /// A's axes (uniform, and adaptive with the default axis views); in a rotated view every
    /// point is a run of its own.
    pub fn lines(&self) -> impl Iterator<Item = &[SurfacePoint]> {
        let pts = &self.points;
        let mut start = 0;
        std::iter::from_fn(move || {
            let first = pts.get(start)?;
            let k = (first.axis as usize).min(2);
            let (u, v) = ((k + 1) % 3, (k + 2) % 3);
            let len = pts[start..]
                .iter()
                .take_while(|p| {
                    p.axis == first.axis
                        && p.point[u] == first.point[u]
                        && p.point[v] == first.point[v]
                })
                .count()
                .max(1);
            let run = &pts[start..start + len];
            start += len;
            Some(run)
        })
    }

    /// Estimated standard deviation of the sampling error of [`Self::volume`] (the mean of the
    /// three axis estimates, their errors taken as independent), when estimated.
    pub fn estimated_error(&self) -> Option<f64> {
        self.estimated_axis_error
            .map(|e| e.iter().map(|s| s * s).sum::<f64>().sqrt() / 3.0)
    }

    /// `∂V/∂(translation of B)`: the sum of B's vertex gradients.
    pub fn translation_gradient(&self) -> DVec3 {
        -self.force
    }

    /// `∂V/∂(rotation of B about the centre)`: `Σ (p − c) × ∂V/∂p` over B's vertices.
    pub fn rotation_gradient(&self) -> DVec3 {
        -self.torque
    }
}

/// Two solids with their trees, for repeated volume queries under changing poses.
#[derive(Debug)]
pub struct UniformVolume<'a> {
    b: &'a Solid,
    tree_b: BalancedTree,
    /// A placed at the identity, built once: every query samples in A's frame.
    ray_a: RayMesh,
    /// A's triangles binned per axis, when the sampler was made for repeated queries
    /// ([`Self::new`]).
    bins_a: Option<AxisBins>,
    /// B as the last query placed it, moved by the next query instead of allocated again
    /// (taken while a query runs; a concurrent query places its own).
    ray_b: Mutex<Option<RayMesh>>,
}

impl Clone for UniformVolume<'_> {
    fn clone(&self) -> Self {
        Self {
            b: self.b,
            tree_b: self.tree_b.clone(),
            ray_a: self.ray_a.clone(),
            bins_a: self.bins_a.clone(),
            ray_b: Mutex::new(None),
        }
    }
}

impl<'a> UniformVolume<'a> {
    /// Builds the trees of `a` and `b`, and bins A's triangles per axis for repeated queries
    /// (one pass over A per axis; [`Self::with_trees`] skips it).
    pub fn new(a: &'a Solid, b: &'a Solid) -> Self {
        let tree_a = BalancedTree::build(a);
        let ray_a = RayMesh::at_identity(a, &tree_a);
        let bins_a = Some(AxisBins::build(&ray_a));
        Self {
            b,
            tree_b: BalancedTree::build(b),
            ray_a,
            bins_a,
            ray_b: Mutex::new(None),
        }
    }

    /// Uses trees built earlier by [`BalancedTree::build`] over `a` and `b`.
    pub fn with_trees(
        a: &'a Solid,
        tree_a: BalancedTree,
        b: &'a Solid,
        tree_b: BalancedTree,
    ) -> Result<Self, VolumeError> {
        for (s, t) in [(a, &tree_a), (b, &tree_b)] {
            if t.triangle_count() != s.triangle_count() {
                return Err(VolumeError::TreeMismatch {
                    tree: t.triangle_count(),
                    mesh: s.triangle_count(),
                });
            }
        }
        let ray_a = RayMesh::new(a, &tree_a, &DPose::IDENTITY)?;
        Ok(Self {
            b,
            tree_b,
            ray_a,
            bins_a: None,
            ray_b: Mutex::new(None),
        })
    }

    /// The sampled intersection volume of A and B (placed in A's frame by `b_to_a`) and its
    /// gradient (see the module documentation).
    pub fn compute(
        &self,
        b_to_a: &DPose,
        options: &UniformOptions,
    ) -> Result<VolumeResult, VolumeError> {
        match options.sampling {
            Sampling::Resolution(0) => return Err(VolumeError::ZeroResolution),
            Sampling::Fitted { coarse, resolution } if coarse == 0 || resolution == 0 => {
                return Err(VolumeError::ZeroResolution);
            }
            Sampling::Spacing(h) | Sampling::ShiftedSpacing { spacing: h, .. }
                if !(h.is_finite() && h > 0.0) =>
            {
                return Err(VolumeError::InvalidSpacing(h));
            }
            Sampling::ShiftedSpacing { offset, .. } if !offset.is_finite() => {
                return Err(VolumeError::NonFiniteOffset);
            }
            _ => {}
        }
        if !options.centre.is_finite() {
            return Err(VolumeError::NonFinitePose);
        }
        self.with_b_placed(b_to_a, |mb| self.sample(mb, options))?
    }

    /// Calls `f` with B placed in A's frame by `b_to_a` (moving the last query's placement in
    /// place when it is free). Fails on a non-finite pose.
    pub(crate) fn with_b_placed<T>(
        &self,
        b_to_a: &DPose,
        f: impl FnOnce(&RayMesh) -> T,
    ) -> Result<T, VolumeError> {
        if !b_to_a.is_finite() {
            return Err(VolumeError::NonFinitePose);
        }
        let cached = self.ray_b.try_lock().ok().and_then(|mut slot| slot.take());
        let mb = match cached {
            Some(mut mb) => {
                mb.repose(self.b, b_to_a);
                mb
            }
            None => RayMesh::new(self.b, &self.tree_b, b_to_a)?,
        };
        let result = f(&mb);
        if let Ok(mut slot) = self.ray_b.try_lock() {
            *slot = Some(mb);
        }
        Ok(result)
    }

    /// The overlap of A's box and B's (B placed as `mb`), when it has an interior.
    pub(crate) fn overlap_box(&self, mb: &RayMesh) -> Option<(DVec3, DVec3)> {
        let lo = self.ray_a.bounds()[0].max(mb.bounds()[0]);
        let hi = self.ray_a.bounds()[1].min(mb.bounds()[1]);
        lo.cmplt(hi).all().then_some((lo, hi))
    }

    /// The box that a first pass of `coarse × coarse` lines per axis over `[lo, hi]` finds the
    /// intersection in (the box of its interval ends, grown by one coarse spacing on every
    /// side, within `[lo, hi]`; `[lo, hi]` itself when no line meets the intersection), and the
    /// lines it cast.
    pub(crate) fn fitted_box(
        &self,
        mb: &RayMesh,
        (lo, hi): (DVec3, DVec3),
        coarse: u32,
        max_rays: u64,
    ) -> Result<((DVec3, DVec3), usize), VolumeError> {
        let probe = UniformOptions {
            sampling: Sampling::Resolution(coarse),
            collect_points: false,
            max_rays,
            ..UniformOptions::default()
        };
        let pass = Pass {
            axes: [true; 3],
            gradient: false,
            extent: true,
        };
        let (first, extent) = self.sample_box(mb, lo, hi, &probe, pass)?;
        let fitted = match extent {
            None => (lo, hi),
            Some([flo, fhi]) => {
                let grow = (hi - lo) / f64::from(coarse);
                ((flo - grow).max(lo), (fhi + grow).min(hi))
            }
        };
        Ok((fitted, first.ray_count))
    }

    /// The queries' sampling, with B placed in A's frame as `mb`.
    fn sample(&self, mb: &RayMesh, options: &UniformOptions) -> Result<VolumeResult, VolumeError> {
        let Some((lo, hi)) = self.overlap_box(mb) else {
            return Ok(VolumeResult::empty(
                self.ray_a.vertices().len(),
                mb.vertices().len(),
            ));
        };
        let Sampling::Fitted { coarse, resolution } = options.sampling else {
            return Ok(self.sample_box(mb, lo, hi, options, Pass::FULL)?.0);
        };
        let ((flo, fhi), first_rays) = self.fitted_box(mb, (lo, hi), coarse, options.max_rays)?;
        let second = UniformOptions {
            sampling: Sampling::Resolution(resolution),
            max_rays: options.max_rays.saturating_sub(first_rays as u64),
            ..*options
        };
        let mut result = self.sample_box(mb, flo, fhi, &second, Pass::FULL)?.0;
        result.ray_count += first_rays;
        Ok(result)
    }

    /// Samples the box `[lo, hi]` (with a non-empty interior) by `options.sampling`, which is
    /// not [`Sampling::Fitted`], on the axes of `pass`, with the gradient when `pass` asks for
    /// it (else the gradient vectors are empty and the force and torque zero). With
    /// `pass.extent`, also returns the box of the interval ends (`None` when there is none).
    pub(crate) fn sample_box(
        &self,
        mb: &RayMesh,
        lo: DVec3,
        hi: DVec3,
        options: &UniformOptions,
        pass: Pass,
    ) -> Result<(VolumeResult, Option<[DVec3; 2]>), VolumeError> {
        let ma = &self.ray_a;
        let mut result = if pass.gradient {
            VolumeResult::empty(ma.vertices().len(), mb.vertices().len())
        } else {
            VolumeResult::empty(0, 0)
        };
        let mut extent: Option<[DVec3; 2]> = None;
        let grids: [LineGrid; 3] =
            std::array::from_fn(|k| LineGrid::new(k, lo, hi, options.sampling));
        let rays: f64 = grids
            .iter()
            .zip(pass.axes)
            .filter(|(_, cast)| *cast)
            .map(|(g, _)| g.n[0] as f64 * g.n[1] as f64)
            .sum();
        if rays > options.max_rays as f64 {
            return Err(VolumeError::TooManyRays {
                rays: rays.min(u64::MAX as f64) as u64,
                limit: options.max_rays,
            });
        }

        let mut sweep = IntervalSweep::default();
        // Lines are cast in blocks of BLOCK_SIDE × BLOCK_SIDE (one tree traversal per block and
        // mesh), a band of BLOCK_SIDE rows at a time, and reduced in line order (i, then j).
        let mut band: Vec<(BlockHits, BlockHits)> = Vec::new();
        let mut lengths: Vec<f64> = Vec::new();
        let mut axis_error = [0.0; 3];
        for (k, g) in grids.iter().enumerate() {
            if !pass.axes[k] {
                continue;
            }
            let w = g.h[0] * g.h[1];
            result.pixel_area[k] = w;
            let mut length = 0.0;
            let n1 = g.n[1] as usize;
            lengths.clear();
            lengths.resize(g.n[0] as usize * n1, 0.0);
            let coord = |d: usize, i: u64| g.coord(d, i);
            let side = BLOCK_SIDE as u64;
            let tiles = g.n[1].div_ceil(side) as usize;
            if band.len() < tiles {
                band.resize_with(tiles, Default::default);
            }
            let mut us = Vec::with_capacity(BLOCK_SIDE);
            let mut vs = Vec::with_capacity(BLOCK_SIDE);
            for i0 in (0..g.n[0]).step_by(BLOCK_SIDE) {
                us.clear();
                us.extend((i0..(i0 + side).min(g.n[0])).map(|i| coord(0, i)));
                for (tile, (block_a, block_b)) in band.iter_mut().take(tiles).enumerate() {
                    let j0 = tile as u64 * side;
                    vs.clear();
                    vs.extend((j0..(j0 + side).min(g.n[1])).map(|j| coord(1, j)));
                    match &self.bins_a {
                        Some(bins) => bins.cast_axis_block(ma, k, &us, &vs, u64::MAX, block_a),
                        None => ma.cast_axis_block(k, &us, &vs, u64::MAX, block_a),
                    }
                    let lines = us.len() * vs.len();
                    let with_a = (0..lines).fold(0u64, |m, l| {
                        m | (u64::from(!block_a.line(l).is_empty()) << l)
                    });
                    mb.cast_axis_block(k, &us, &vs, with_a, block_b);
                }
                for (di, &u) in us.iter().enumerate() {
                    for j in 0..g.n[1] {
                        let tile = (j / side) as usize;
                        let nv = (g.n[1] - tile as u64 * side).min(side) as usize;
                        let line = di * nv + (j % side) as usize;
                        let (block_a, block_b) = &band[tile];
                        let ray = AxisRay {
                            axis: k,
                            u,
                            v: coord(1, j),
                        };
                        result.ray_count += 1;
                        let (hits_a, hits_b) = (block_a.line(line), block_b.line(line));
                        if hits_a.is_empty() || hits_b.is_empty() {
                            continue;
                        }
                        let cell = (i0 as usize + di) * n1 + j as usize;
                        sweep.sweep(hits_a, hits_b, |e| {
                            if let Some(t0) = e.from {
                                length += e.hit.t - t0;
                                lengths[cell] += e.hit.t - t0;
                            }
                            let (t, on_b, sign, hit) = (e.hit.t, e.on_b, e.sign, &e.hit);
                            if pass.extent {
                                let p = ray.point(t);
                                extent = Some(match extent {
                                    None => [p, p],
                                    Some([l, h]) => [l.min(p), h.max(p)],
                                });
                            }
                            let (mesh, grad): (&RayMesh, &mut Vec<DVec3>) = if on_b {
                                (mb, &mut result.gradient_b)
                            } else {
                                (ma, &mut result.gradient_a)
                            };
                            if pass.gradient {
                                let tri = mesh.triangles()[hit.triangle as usize];
                                for (m, &vi) in tri.iter().enumerate() {
                                    grad[vi as usize][k] += sign * w * hit.barycentric[m];
                                }
                            }
                            if options.collect_points {
                                let normal = mesh.unit_normal(hit.triangle as usize);
                                result.points.push(SurfacePoint {
                                    point: ray.point(t),
                                    normal,
                                    on_b,
                                    triangle: hit.triangle,
                                    axis: k as u8,
                                    area: w / normal[k].abs().max(f64::MIN_POSITIVE),
                                });
                            }
                        });
                        // A closed solid leaves every line it enters; an interval left open
                        // (only an open mesh can leave one) adds no length.
                    }
                }
            }
            result.axis_volumes[k] = w * length;
            axis_error[k] = error_estimate::axis_error(&lengths, g.n[0] as usize, n1, w);
        }
        result.estimated_axis_error = Some(axis_error);
        let cast = pass.axes.iter().filter(|&&c| c).count().max(1);
        result.volume = result.axis_volumes.iter().sum::<f64>() / cast as f64;
        let c = options.centre;
        for (g, &p) in result.gradient_b.iter().zip(mb.vertices()) {
            result.force -= *g;
            result.torque -= (p - c).cross(*g);
        }
        Ok((result, extent))
    }
}

/// The sampled intersection volume of `a` and `b` (placed in A's frame by `b_to_a`) and its
/// gradient; builds both trees (use [`UniformVolume`] to reuse them). A single query walks A's
/// tree: binning A's triangles ([`UniformVolume::new`]) pays off over repeated queries only.
pub fn uniform_volume(
    a: &Solid,
    b: &Solid,
    b_to_a: &DPose,
    options: &UniformOptions,
) -> Result<VolumeResult, VolumeError> {
    UniformVolume::with_trees(a, BalancedTree::build(a), b, BalancedTree::build(b))?
        .compute(b_to_a, options)
}

/// What a sampling pass of [`UniformVolume::sample_box`] casts and computes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pass {
    /// The axes whose lines are cast.
    pub(crate) axes: [bool; 3],
    /// Whether the vertex gradients (and the force and torque) are accumulated.
    pub(crate) gradient: bool,
    /// Whether the box of the interval ends is returned.
    pub(crate) extent: bool,
}

impl Pass {
    /// The three axes with the gradient: a query's pass.
    const FULL: Self = Self {
        axes: [true; 3],
        gradient: true,
        extent: false,
    };

    /// Axis `k` alone, volume only.
    pub(crate) fn one_axis(k: usize) -> Self {
        Self {
            axes: std::array::from_fn(|a| a == k),
            gradient: false,
            extent: false,
        }
    }
}

/// The line grid of one axis: counts, spacings and start of the two transverse coordinates
/// (the GPU volume builds its lines from the same grid, so both sample the same lines).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LineGrid {
    /// Lines along each transverse direction (`(k + 1) % 3`, `(k + 2) % 3` for axis `k`).
    pub n: [u64; 2],
    /// Spacing along each transverse direction.
    pub h: [f64; 2],
    /// Where each transverse direction's first cell starts (its line is half a spacing in).
    pub start: [f64; 2],
}

impl LineGrid {
    /// Coordinate along transverse direction `d` of line `i`.
    pub fn coord(&self, d: usize, i: u64) -> f64 {
        self.start[d] + (i as f64 + 0.5) * self.h[d]
    }

    /// Lattice lines `(i + ½) h + o` (across `axes`) with `i` from `⌊(lo − o)/h − ½⌋` to
    /// `⌈(hi − o)/h − ½⌉`: they cover the box `[lo, hi]`.
    fn lattice(axes: [usize; 2], lo: DVec3, hi: DVec3, h: f64, offset: DVec3) -> Self {
        let first = axes.map(|a| ((lo[a] - offset[a]) / h - 0.5).floor());
        let last = axes.map(|a| ((hi[a] - offset[a]) / h - 0.5).ceil());
        Self {
            n: [0, 1].map(|i| ((last[i] - first[i]).max(0.0) + 1.0).min(u64::MAX as f64) as u64),
            h: [h; 2],
            start: [0, 1].map(|i| first[i] * h + offset[axes[i]]),
        }
    }

    /// The grid of axis `k` over the box `[lo, hi]` for `sampling` (`Fitted` as its resolution).
    pub fn new(k: usize, lo: DVec3, hi: DVec3, sampling: Sampling) -> Self {
        let axes = [(k + 1) % 3, (k + 2) % 3];
        match sampling {
            Sampling::Resolution(r) | Sampling::Fitted { resolution: r, .. } => {
                let r = r.max(1);
                Self {
                    n: [u64::from(r); 2],
                    h: axes.map(|a| (hi[a] - lo[a]) / f64::from(r)),
                    start: axes.map(|a| lo[a]),
                }
            }
            Sampling::Spacing(h) => Self::lattice(axes, lo, hi, h, DVec3::ZERO),
            Sampling::ShiftedSpacing { spacing, offset } => {
                Self::lattice(axes, lo, hi, spacing, offset)
            }
        }
    }
}

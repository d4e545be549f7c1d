//! Adaptive image-based intersection volume with a volume error tolerance: Wang, Faure & Pai
//! 2012, "Adaptive image-based intersection volume", sections 3–5 (Alg. 1–3, Eq. 5–11), on the
//! CPU. The uniform sampler of [`super::uniform`] casts a fixed grid; this one casts one ray per
//! tile of a non-uniform tiling chosen so that a bound of the volume error meets a tolerance.
//!
//! Per view axis `k` (x, y, z of A's frame) over the overlap box of the two meshes' bounding
//! boxes, as in the uniform sampler (Alg. 3):
//!
//! 1. `ebpi`: the edges of both meshes inside the overlap box are rasterized into an
//!    `n × n` Error Bound Polynomial Image (Alg. 1–2, Eq. 5–9, seven channels).
//! 2. `pyramid` and `tile_size`: a multi-resolution pyramid (2×2 sums); every pixel gets
//!    the tiling that maximizes the tile area under its share of the edge budget (Eq. 10–11),
//!    and pixels are coarsened where that saves rays.
//! 3. `refine`: one ray per tile at its centre, weighted by the tile's area (Eq. 1, Eq. 2 for
//!    the gradient); transient edges (crossings of A's and B's surfaces) are detected from the
//!    hits' approximation planes and the EBPI, and their tiles are refined 4×4 (section 5).
//!
//! **Error budget.** The tolerance `T` (absolute, volume units) applies to each axis estimate,
//! so it also holds for their mean, [`VolumeResult::volume`]. Three quarters of `T` go to the
//! a-priori edge bounds (area-proportional over the pyramid pixels), and what the edge bounds
//! leave is given to transient edges. [`AdaptiveResult::error_bound`] is the mean over the axes
//! of (edge bounds + transient charges). The bounds are those of the paper: conservative for the
//! piecewise-linear length function inside a tile, but not a proof (a transient edge that no
//! tile centre brackets can escape, Fig. 7a); the tests compare against exact volumes.
//!
//! **Viewing directions (section 4.4, Eq. 12).** By default the views are A's coordinate axes.
//! [`AdaptiveOptions::view`] can rotate them ([`ViewDirections`]): both meshes are then placed in
//! the view frame (A at `Rᵀ`, B at `Rᵀ · b_to_a`, with `R`'s columns the view axes in A's frame),
//! sampled there, and every output is rotated back into A's frame (gradients, points, normals,
//! force, torque); [`VolumeResult::axis_volumes`], [`VolumeResult::pixel_area`] and
//! [`SurfacePoint::axis`](super::SurfacePoint::axis) stay per view axis. The optimised view
//! minimises Eq. 12 over the area-weighted normals of the triangles that meet the overlap box
//! (module `views`). [`ViewDirections::OptimisedFrom`] warm-starts that minimisation from the
//! previous frame's rotation (the paper's time coherency).
//!
//! **Certified uniform sampling.** [`AdaptiveVolume::certified_uniform_resolution`] gives the
//! smallest uniform grid whose Eq. 9 bound, charged exactly as the planner charges its tiles,
//! meets the same edge budget: the uniform sampling with the same guarantee, against which the
//! adaptive method's ray counts are compared (paper Fig. 9; module `certified`).

mod certified;
mod ebpi;
mod pyramid;
mod refine;
mod tile_size;
mod views;

#[cfg(test)]
mod certified_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod view_tests;

use super::VolumeError;
use super::ray_bvh::RayMesh;
use super::uniform::VolumeResult;
use crate::bvh::BalancedTree;
use crate::mesh::TriMesh;
use crate::pose::DPose;
use crate::topology::Solid;
pub use certified::UniformCertificate;
use ebpi::{Ebpi, EdgeSource};
use glam::{DMat3, DQuat, DVec3};
use refine::{AxisJob, run_axis};
pub use views::{NormalMoments, ViewOptimum};

/// Share of the tolerance given to the a-priori edge bounds (the rest goes to transient edges).
const EDGE_SHARE: f64 = 0.75;

/// The volume error tolerance of an adaptive query.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tolerance {
    /// In volume units.
    Absolute(f64),
    /// A fraction of `min(volume of A, volume of B)` (the largest possible intersection),
    /// known before sampling.
    Relative(f64),
}

impl Tolerance {
    /// The tolerance in volume units for solids of volumes `va` and `vb`; fails unless it is
    /// positive and finite.
    pub fn absolute(&self, va: f64, vb: f64) -> Result<f64, VolumeError> {
        let t = match *self {
            Tolerance::Absolute(t) => t,
            Tolerance::Relative(r) => {
                if !(r.is_finite() && r > 0.0) {
                    return Err(VolumeError::InvalidTolerance(r));
                }
                r * va.min(vb)
            }
        };
        if t.is_finite() && t > 0.0 {
            Ok(t)
        } else {
            Err(VolumeError::InvalidTolerance(t))
        }
    }
}

/// Options of [`adaptive_volume`] and [`AdaptiveVolume::compute`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdaptiveOptions {
    /// The volume error tolerance.
    pub tolerance: Tolerance,
    /// Reference point (in A's frame) about which [`VolumeResult::torque`] is reduced.
    pub centre: DVec3,
    /// Refuse tilings that need more rays than this, over the three axes; refinement passes
    /// stop at it (the result then says whether the tolerance was met).
    pub max_rays: u64,
    /// EBPI resolution (pixels per side of the finest level), rounded up to a power of two.
    pub finest_resolution: u32,
    /// Whether to fill [`VolumeResult::points`].
    pub collect_points: bool,
    /// The three orthogonal sampling directions (section 4.4).
    pub view: ViewDirections,
}

/// The sampling directions of an adaptive query (Wang, Faure & Pai 2012, section 4.4).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum ViewDirections {
    /// A's coordinate axes.
    #[default]
    Axes,
    /// The rotation minimising Eq. 12 over the area-weighted normals of both meshes' triangles
    /// whose bounding boxes meet the overlap box (in A's frame) of the meshes' bounding boxes
    /// ([`view_moments`], [`NormalMoments::optimise`]). Measured: more rays than
    /// [`ViewDirections::Axes`] at equal tolerance on box pairs, about as many on sphere pairs
    /// (docs/algorithms.md).
    Optimised,
    /// The columns of this rotation's matrix, in A's frame (normalised; refused with
    /// [`VolumeError::InvalidViewRotation`] unless finite and non-zero).
    Fixed(DQuat),
    /// Eq. 12 warm-started from this rotation (the previous frame's
    /// [`AdaptiveResult::view`]): one descent from it ([`NormalMoments::optimise_from`]), the
    /// paper's use of time coherency, instead of the thirteen cold starts of
    /// [`ViewDirections::Optimised`]. It follows the local minimum the previous frame found.
    /// Refused with [`VolumeError::InvalidViewRotation`] unless finite and non-zero.
    OptimisedFrom(DQuat),
}

impl Default for AdaptiveOptions {
    /// 1 % of the smaller solid's volume, torque about A's origin, at most 2²⁴ rays, a 64×64
    /// EBPI, points collected.
    fn default() -> Self {
        Self {
            tolerance: Tolerance::Relative(1e-2),
            centre: DVec3::ZERO,
            max_rays: 1 << 24,
            finest_resolution: 64,
            collect_points: true,
            view: ViewDirections::Axes,
        }
    }
}

/// The adaptive estimate and its error accounting.
#[derive(Clone, Debug, PartialEq)]
pub struct AdaptiveResult {
    /// Volume, axis volumes, gradients, force, torque, rays and points. `pixel_area` holds the
    /// mean tile area of each axis.
    pub result: VolumeResult,
    /// The tolerance honoured, in volume units.
    pub tolerance: f64,
    /// Error bound of [`VolumeResult::volume`]: the mean of [`Self::axis_error_bounds`].
    pub error_bound: f64,
    /// Per axis: a-priori edge bounds plus transient-edge charges.
    pub axis_error_bounds: [f64; 3],
    /// Whether every axis bound is within the tolerance (false only when refinement stopped at
    /// the ray limit or its depth limit).
    pub tolerance_met: bool,
    /// Rays cast by transient-edge refinement (included in `ray_count`).
    pub refined_rays: usize,
    /// The view rotation used: the columns of its matrix are the sampling axes in A's frame
    /// (the identity for [`ViewDirections::Axes`]).
    pub view: DQuat,
}

/// The fourth-order normal moments (Eq. 12) of the triangles of `a` and of `b` (placed in A's
/// frame by `b_to_a`) whose bounding boxes meet the overlap of the two meshes' bounding boxes in
/// A's frame; empty when the boxes do not overlap.
pub fn view_moments(a: &TriMesh, b: &TriMesh, b_to_a: &DPose) -> NormalMoments {
    let va: Vec<DVec3> = a.vertices().iter().map(|v| v.as_dvec3()).collect();
    let vb: Vec<DVec3> = b
        .vertices()
        .iter()
        .map(|&v| b_to_a.transform_point(v))
        .collect();
    let bounds = |v: &[DVec3]| {
        v.iter()
            .fold([DVec3::INFINITY, DVec3::NEG_INFINITY], |[l, h], &p| {
                [l.min(p), h.max(p)]
            })
    };
    let (ba, bb) = (bounds(&va), bounds(&vb));
    let (lo, hi) = (ba[0].max(bb[0]), ba[1].min(bb[1]));
    let mut m = NormalMoments::new();
    if !lo.cmple(hi).all() {
        return m;
    }
    for (mesh, v) in [(a, &va), (b, &vb)] {
        for t in mesh.triangles() {
            let p = t.map(|i| v[i as usize]);
            let (tl, th) = (p[0].min(p[1]).min(p[2]), p[0].max(p[1]).max(p[2]));
            if tl.cmple(hi).all() && th.cmpge(lo).all() {
                m.add_triangle(p);
            }
        }
    }
    m
}

/// Two solids with their trees, for repeated adaptive volume queries under changing poses.
#[derive(Clone, Debug)]
pub struct AdaptiveVolume<'a> {
    a: &'a Solid,
    b: &'a Solid,
    tree_a: BalancedTree,
    tree_b: BalancedTree,
}

impl<'a> AdaptiveVolume<'a> {
    /// Builds the trees of `a` and `b`.
    pub fn new(a: &'a Solid, b: &'a Solid) -> Self {
        Self {
            a,
            b,
            tree_a: BalancedTree::build(a),
            tree_b: BalancedTree::build(b),
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
        Ok(Self {
            a,
            b,
            tree_a,
            tree_b,
        })
    }

    /// The adaptively sampled intersection volume of A and B (placed in A's frame by `b_to_a`)
    /// and its gradient (see the module documentation).
    pub fn compute(
        &self,
        b_to_a: &DPose,
        options: &AdaptiveOptions,
    ) -> Result<AdaptiveResult, VolumeError> {
        let frame = self.frame(b_to_a, options, None)?;
        let Some(ebpis) = frame.ebpis(self, options.finest_resolution) else {
            return Ok(frame.empty_result());
        };
        // Plan all three axes before casting, so that an over-limit query casts nothing.
        let plans: Vec<(Ebpi, Vec<pyramid::Node>)> = ebpis
            .into_iter()
            .map(|e| {
                let nodes = pyramid::coarsen(&e, EDGE_SHARE * frame.tolerance);
                (e, nodes)
            })
            .collect();
        frame.cast(plans, options, true)
    }

    /// The view frame of a query: checks the inputs, resolves the tolerance and the view
    /// rotation (`view` overrides `options.view`), and places both meshes in the view frame.
    fn frame(
        &self,
        b_to_a: &DPose,
        options: &AdaptiveOptions,
        view: Option<DQuat>,
    ) -> Result<Frame, VolumeError> {
        if options.finest_resolution == 0 {
            return Err(VolumeError::ZeroResolution);
        }
        if !b_to_a.is_finite() || !options.centre.is_finite() {
            return Err(VolumeError::NonFinitePose);
        }
        let tolerance = options
            .tolerance
            .absolute(self.a.volume(), self.b.volume())?;
        let view = match (view, options.view) {
            (Some(q), _) => q,
            (None, ViewDirections::Axes) => DQuat::IDENTITY,
            (None, ViewDirections::Fixed(q)) => {
                if !(q.is_finite() && q.length() > 1e-12) {
                    return Err(VolumeError::InvalidViewRotation);
                }
                q.normalize()
            }
            (None, ViewDirections::Optimised) => {
                view_moments(self.a, self.b, b_to_a).optimise(None).rotation
            }
            (None, ViewDirections::OptimisedFrom(q)) => {
                if !(q.is_finite() && q.length() > 1e-12) {
                    return Err(VolumeError::InvalidViewRotation);
                }
                view_moments(self.a, self.b, b_to_a)
                    .optimise_from(q)
                    .rotation
            }
        };
        // The view frame: A at Rᵀ, B at Rᵀ · b_to_a (exactly the A frame for the axes).
        let rot = DMat3::from_quat(view);
        let rotated = rot != DMat3::IDENTITY;
        let (pose_a, pose_b) = if rotated {
            let to_view = DPose {
                rotation: rot.transpose(),
                translation: DVec3::ZERO,
            };
            (to_view, to_view.mul(b_to_a))
        } else {
            (DPose::IDENTITY, *b_to_a)
        };
        let ma = RayMesh::new(self.a, &self.tree_a, &pose_a)?;
        let mb = RayMesh::new(self.b, &self.tree_b, &pose_b)?;
        let lo = ma.bounds()[0].max(mb.bounds()[0]);
        let hi = ma.bounds()[1].min(mb.bounds()[1]);
        Ok(Frame {
            view,
            rot,
            rotated,
            ma,
            mb,
            lo,
            hi,
            tolerance,
        })
    }
}

/// Both meshes placed in the view frame of a query, the overlap box and the tolerance.
struct Frame {
    view: DQuat,
    rot: DMat3,
    rotated: bool,
    ma: RayMesh,
    mb: RayMesh,
    lo: DVec3,
    hi: DVec3,
    tolerance: f64,
}

impl Frame {
    /// Whether the bounding boxes overlap with a non-empty interior.
    fn overlaps(&self) -> bool {
        self.lo.cmplt(self.hi).all()
    }

    /// The result of an empty overlap: nothing cast, zero volume, zero bounds.
    fn empty_result(&self) -> AdaptiveResult {
        AdaptiveResult {
            result: VolumeResult {
                volume: 0.0,
                axis_volumes: [0.0; 3],
                estimated_axis_error: None,
                gradient_a: vec![DVec3::ZERO; self.ma.vertices().len()],
                gradient_b: vec![DVec3::ZERO; self.mb.vertices().len()],
                force: DVec3::ZERO,
                torque: DVec3::ZERO,
                ray_count: 0,
                pixel_area: [0.0; 3],
                points: Vec::new(),
            },
            tolerance: self.tolerance,
            error_bound: 0.0,
            axis_error_bounds: [0.0; 3],
            tolerance_met: true,
            refined_rays: 0,
            view: self.view,
        }
    }

    /// The EBPIs of the three view axes at `finest_resolution` (rounded up to a power of two,
    /// at most 4096), or `None` when the bounding boxes do not overlap.
    fn ebpis(&self, v: &AdaptiveVolume<'_>, finest_resolution: u32) -> Option<Vec<Ebpi>> {
        if !self.overlaps() {
            return None;
        }
        let n = finest_resolution.clamp(1, 1 << 12).next_power_of_two() as usize;
        let normals = |m: &RayMesh| -> Vec<DVec3> {
            (0..m.triangles().len()).map(|t| m.unit_normal(t)).collect()
        };
        let (na, nb) = (normals(&self.ma), normals(&self.mb));
        let sources = [
            EdgeSource {
                mesh: &self.ma,
                normals: &na,
                edges: &v.a.topology().edges,
            },
            EdgeSource {
                mesh: &self.mb,
                normals: &nb,
                edges: &v.b.topology().edges,
            },
        ];
        Some(
            (0..3)
                .map(|k| Ebpi::build(k, self.lo, self.hi, n, &sources))
                .collect(),
        )
    }

    /// Casts the planned tiles of the three axes (refining transient edges when `refine`) and
    /// assembles the result; refused before casting when the plans exceed the ray limit.
    fn cast(
        &self,
        plans: Vec<(Ebpi, Vec<pyramid::Node>)>,
        options: &AdaptiveOptions,
        refine: bool,
    ) -> Result<AdaptiveResult, VolumeError> {
        let (lo, hi, tolerance) = (self.lo, self.hi, self.tolerance);
        let planned: u64 = plans
            .iter()
            .flat_map(|(_, nodes)| nodes.iter().map(|nd| nd.plan.rays()))
            .fold(0u64, u64::saturating_add);
        if planned > options.max_rays {
            return Err(VolumeError::TooManyRays {
                rays: planned,
                limit: options.max_rays,
            });
        }
        let mut out = self.empty_result();
        let mut spare = options.max_rays - planned;
        for (k, (ebpi, nodes)) in plans.iter().enumerate() {
            let own: u64 = nodes.iter().map(|nd| nd.plan.rays()).sum();
            let job = AxisJob {
                k,
                ma: &self.ma,
                mb: &self.mb,
                ebpi,
                nodes,
                depth_extent: hi[k] - lo[k],
                tolerance,
                // Each axis may refine with what the earlier ones left, spread over the rest.
                max_rays: if refine {
                    own + spare / (3 - k) as u64
                } else {
                    own
                },
                collect_points: options.collect_points,
            };
            let o = run_axis(&job, &mut out.result);
            spare = spare.saturating_sub(o.rays - own);
            let r = &mut out.result;
            r.axis_volumes[k] = o.volume;
            r.ray_count += o.rays as usize;
            r.pixel_area[k] = (hi - lo)[(k + 1) % 3] * (hi - lo)[(k + 2) % 3] / o.rays as f64;
            out.refined_rays += o.refined_rays as usize;
            out.axis_error_bounds[k] = o.edge_bound + o.transient_bound;
            out.tolerance_met &= out.axis_error_bounds[k] <= tolerance;
        }
        let r = &mut out.result;
        r.volume = r.axis_volumes.iter().sum::<f64>() / 3.0;
        out.error_bound = out.axis_error_bounds.iter().sum::<f64>() / 3.0;
        let rot = self.rot;
        if self.rotated {
            // Back into A's frame.
            for g in r.gradient_a.iter_mut().chain(r.gradient_b.iter_mut()) {
                *g = rot * *g;
            }
            for p in &mut r.points {
                p.point = rot * p.point;
                p.normal = rot * p.normal;
            }
        }
        let c = options.centre;
        for (g, &p) in r.gradient_b.iter().zip(self.mb.vertices()) {
            let p = if self.rotated { rot * p } else { p };
            r.force -= *g;
            r.torque -= (p - c).cross(*g);
        }
        Ok(out)
    }
}

/// The adaptively sampled intersection volume of `a` and `b` (placed in A's frame by `b_to_a`)
/// and its gradient; builds both trees (use [`AdaptiveVolume`] to reuse them).
pub fn adaptive_volume(
    a: &Solid,
    b: &Solid,
    b_to_a: &DPose,
    options: &AdaptiveOptions,
) -> Result<AdaptiveResult, VolumeError> {
    AdaptiveVolume::new(a, b).compute(b_to_a, options)
}

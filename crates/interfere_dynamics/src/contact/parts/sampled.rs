//! Mesh–mesh volume contacts from ray-sampled volumes: the intersection volume of two closed
//! meshes and its gradient (Wang–Faure–Pai 2012 §2.2, Eq. 1 and 2, computed by
//! [`interfere_geometry::UniformVolume`] or [`interfere_geometry::AdaptiveVolume`]) turned into
//! the [`crate::VolumeContact`]s of the volume-based contact response of §7 (Signorini
//! constraints on `V` solved with impulses and post-stabilization). The volume stage
//! ([`crate::contact::volume_stage`]) calls these per interfering pair.
//!
//! 1. **Sampling.** Mesh A's frame holds the lattice: [`interfere_geometry::Sampling::Spacing`]
//!    lines, the spacing [`MeshSpacing::Relative`] times the smaller of the two meshes' sizes (the
//!    shortest edge of its mesh-frame AABB) by default, so the lattice is smooth under motion.
//! 2. **Adaptive** sampling instead ([`AdaptiveSampling`], see item 6).
//! 3. **Gradient.** Each interval endpoint on B's surface (a [`SurfacePoint`] with `on_b`) along
//!    axis `k`, pixel area `w`, contributes `g = w sign(n_k) e_k` to `∂V/∂x_b`: its barycentric
//!    shares of B's vertex gradients sum to it, and the hit point is the barycentric mean of the
//!    triangle's vertices, so `Σ_m (p_m − c) × g_m = Σ_points (x − c) × g` exactly. The points
//!    therefore carry the full rigid gradient of B, located on the contact surface.
//! 4. **Split.** As in [`crate::HalfSpaceVolumeSource`], a pair is split into up to four parts
//!    so that a resting face gets four constraints that resist tilting (one volume constraint is
//!    only neutrally stable): the endpoints on B are grouped into the quadrants around their
//!    `w`-weighted centroid `c`, in the plane orthogonal to the total gradient `G`
//!    (`Ĝ.any_orthonormal_pair()` in A's frame, so the cut is fixed to A). Part `q` gets the
//!    exact gradient of its points, `g_q = Σ g`, `∂V_q/∂θ = Σ (x − c_q) × g` about its own
//!    centroid `c_q`, and the **volume share `V_q = V |g_q| / Σ_r |g_r|`**: every part then has
//!    the same mean depth `V_q / |g_q|` (exact for a slab of uniform depth, where `|g_q|` is the
//!    part's area), which is what the solver's slop (depth × `|g_q|`) compares against. The
//!    parts' gradients sum to the total gradient (up to rounding).
//! 5. **Volume estimate.** The three axis estimates `V_k` of Eq. 1 are combined with weights
//!    `G_k² / |G|²` instead of the plain mean: the `k` component of the gradient comes from the
//!    rays along `k` only, and rays nearly parallel to a thin contact layer give a jumpy `V_k`
//!    (a lattice line inside a 0.1 mm layer counts its whole length). With `G ≈ 0` (a deep,
//!    symmetric overlap) the plain mean is used.
//!
//! 6. **Adaptive sampling** ([`crate::VolumeMethod::Adaptive`], Wang–Faure–Pai 2012 §3–5 through
//!    [`interfere_geometry::AdaptiveVolume`]): one ray per tile of an EBPI-driven tiling, so a
//!    small feature (an edge, a bump) inside a large contact gets rays that a uniform lattice
//!    of the same budget misses. Each endpoint then stands for its own tile, of area
//!    `w = SurfacePoint::area · |n_k|` instead of one pixel area per axis
//!    ([`split_adaptive_volume`]); two endpoints on B of one ray with opposite normals (a
//!    chord of B inside A) cancel, and each remaining endpoint is spread over its tile as four
//!    quarter points before the quadrant split (same total and moment); the rest of the split
//!    is the same. The cost per pair is
//!    bounded by [`AdaptiveSampling::ray_budget`]: the tolerance is loosened until the tiling
//!    fits, so the budget is spent where the EBPI error bounds are largest. The tiles follow the
//!    overlap box (not a lattice fixed in A), so adaptive contacts are less smooth under motion
//!    than uniform ones at a fine spacing; their strength is at a small budget. A pair is
//!    sampled in the frame of whichever body gives the smaller overlap box
//!    ([`AdaptiveSampling::sample_pair`]): the tiles' depth and size follow that box, and a small
//!    body tipped on a large one otherwise gets tiles as tall as itself.
//!
//! Everything runs in a fixed order, so the same bodies give bit-identical contacts.

use interfere_geometry::glam::DVec3;
use interfere_geometry::volume::SurfacePoint;
use interfere_geometry::{
    AdaptiveOptions, AdaptiveVolume, BalancedTree, DPose, Solid, Tolerance, VolumeError,
    VolumeResult,
};

/// How the sampling lattice spacing of a pair is chosen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MeshSpacing {
    /// This fraction of the smaller mesh size of the pair (size: the shortest edge of the mesh's
    /// own AABB).
    Relative(f64),
    /// A fixed spacing in metres.
    Absolute(f64),
}

impl Default for MeshSpacing {
    /// An eighth of the smaller mesh size.
    fn default() -> Self {
        MeshSpacing::Relative(0.125)
    }
}

/// Parameters of adaptive (EBPI) volume sampling, Wang–Faure–Pai 2012 §3–5; see
/// [`AdaptiveOptions`].
///
/// The paper's sampler is driven by a volume tolerance; a contact source needs a bounded cost per
/// step. So each pair's query starts at `tolerance`, and while its tiling needs more than
/// `ray_budget` rays (capped by [`crate::ContactSettings::max_rays_per_pair`]) the tolerance is loosened
/// (a secant search on the planned ray count, at most [`AdaptiveSampling::MAX_LOOSENINGS`]
/// plans, aiming at ¾ of the budget and accepting from ½), so the rays go where the edge error
/// bounds are largest. A pair that does not fit is refused (no contact; counted in
/// [`crate::StepStats::pairs_refused`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdaptiveSampling {
    /// Volume error tolerance asked for first.
    pub tolerance: Tolerance,
    /// EBPI resolution (pixels per side), rounded up to a power of two.
    pub finest_resolution: u32,
    /// Rays one pair's query may cast over its three views (tiles plus transient-edge
    /// refinement).
    pub ray_budget: u64,
}

impl AdaptiveSampling {
    /// How many plans (queries) the tolerance search of one pair may make.
    pub const MAX_LOOSENINGS: u32 = 16;

    /// The adaptive volume of `a` and `b` (placed in A's frame by `b_to_a`; `tree_a` and
    /// `tree_b` built by [`BalancedTree::build`] over them), with surface points, at the tightest
    /// tolerance from [`Self::tolerance`] up whose tiling fits `min(ray_budget, max_rays)` rays;
    /// and whether the tolerance had to be loosened. Fails on a bad tolerance, pose or tree, or
    /// with [`VolumeError::TooManyRays`] when no tolerance within the search fits.
    pub fn sample(
        &self,
        a: &Solid,
        tree_a: BalancedTree,
        b: &Solid,
        tree_b: BalancedTree,
        b_to_a: &DPose,
        max_rays: u64,
    ) -> Result<(VolumeResult, bool), VolumeError> {
        let av = AdaptiveVolume::with_trees(a, tree_a, b, tree_b)?;
        let tol = self.tolerance.absolute(a.volume(), b.volume())?;
        adaptive_within_budget(&av, b_to_a, self, self.ray_budget.min(max_rays), tol)
    }

    /// [`Self::sample`] in the frame of whichever body of the pair gives the smaller overlap
    /// box ([`overlap_box_volume`]; A on a tie), see [`AdaptiveSample`]. The EBPI views, the
    /// tiles and the depth of every tile are those of the overlap box of the frame the query
    /// runs in, so the frame with the tighter box bounds every tile's volume error more tightly
    /// at the same budget. A small box tipped on a large slab is the case this is for: in the
    /// box's frame the slab's bounding box is tipped and fills the whole box, a loosened tiling
    /// has tiles as tall as the box, and one ray along the thin contact wedge then counts the
    /// full tile area (a volume estimate orders of magnitude too large); in the slab's frame
    /// the overlap box is the thin wedge itself.
    pub fn sample_pair(
        &self,
        a: &Solid,
        tree_a: BalancedTree,
        b: &Solid,
        tree_b: BalancedTree,
        b_to_a: &DPose,
        max_rays: u64,
    ) -> Result<AdaptiveSample, VolumeError> {
        let a_to_b = b_to_a.inverse();
        if overlap_box_volume(b, a, &a_to_b) < overlap_box_volume(a, b, b_to_a) {
            let (r, loosened) = self.sample(b, tree_b, a, tree_a, &a_to_b, max_rays)?;
            Ok(AdaptiveSample {
                result: swap_roles(r),
                loosened,
                in_b_frame: true,
            })
        } else {
            let (result, loosened) = self.sample(a, tree_a, b, tree_b, b_to_a, max_rays)?;
            Ok(AdaptiveSample {
                result,
                loosened,
                in_b_frame: false,
            })
        }
    }
}

/// One pair's adaptive query from [`AdaptiveSampling::sample_pair`].
///
/// With `in_b_frame` the query ran with the roles swapped (B's mesh as the reference) and was
/// mapped back to the pair's A/B convention: everything in `result` is in **B's** frame
/// (points, normals, vertex gradients; `force` and `torque` are `−∂V/∂(translation of B)` and
/// `−∂V/∂(rotation of B about B's origin)`), `gradient_a`/`gradient_b` are A's and B's, and
/// `SurfacePoint::on_b` marks the points on B. So [`split_adaptive_volume`] of it with **B's**
/// pose gives `∂V/∂x_b` in world space, as it does for an unswapped result with A's pose.
#[derive(Clone, Debug)]
pub struct AdaptiveSample {
    /// The volume result (in B's frame when `in_b_frame`).
    pub result: VolumeResult,
    /// Whether the tolerance was loosened to fit the ray budget.
    pub loosened: bool,
    /// Whether the query ran in B's frame.
    pub in_b_frame: bool,
}

impl AdaptiveSample {
    /// The pose of the frame [`Self::result`] is in: `b_pose` when the query ran in B's frame,
    /// else `a_pose`. [`split_adaptive_volume`] of the result takes this pose.
    pub fn frame_pose(&self, a_pose: DPose, b_pose: DPose) -> DPose {
        if self.in_b_frame { b_pose } else { a_pose }
    }
}

/// Volume of the overlap box of `a` and `b` (placed in A's frame by `b_to_a`) as a query in A's
/// frame sees it: `a`'s bounding box intersected with the axis-aligned box (in A's frame) of the
/// eight placed corners of `b`'s bounding box. Zero when they do not overlap; infinite on a
/// non-finite pose.
pub fn overlap_box_volume(a: &Solid, b: &Solid, b_to_a: &DPose) -> f64 {
    let (ba, bb) = (a.aabb(), b.aabb());
    let (blo, bhi) = (bb.min.as_dvec3(), bb.max.as_dvec3());
    let mut lo = DVec3::splat(f64::INFINITY);
    let mut hi = DVec3::splat(f64::NEG_INFINITY);
    for i in 0..8 {
        let c = DVec3::new(
            if i & 1 == 0 { blo.x } else { bhi.x },
            if i & 2 == 0 { blo.y } else { bhi.y },
            if i & 4 == 0 { blo.z } else { bhi.z },
        );
        let p = b_to_a.transform_dpoint(c);
        lo = lo.min(p);
        hi = hi.max(p);
    }
    if !(lo.is_finite() && hi.is_finite()) {
        return f64::INFINITY;
    }
    let ext = (hi.min(ba.max.as_dvec3()) - lo.max(ba.min.as_dvec3())).max(DVec3::ZERO);
    ext.x * ext.y * ext.z
}

/// A result of the query of (B, A) — B's frame, `on_b` marking A's points — in the (A, B)
/// convention of [`AdaptiveSample`]. The volume does not depend on which body moves, so
/// `∂V/∂(rigid motion of A) = −∂V/∂(same motion of B)`: the force and torque (about B's origin,
/// the swapped query's centre) change sign; the points and vertex gradients stay, only their
/// owners swap.
fn swap_roles(mut r: VolumeResult) -> VolumeResult {
    std::mem::swap(&mut r.gradient_a, &mut r.gradient_b);
    r.force = -r.force;
    r.torque = -r.torque;
    for p in &mut r.points {
        p.on_b = !p.on_b;
    }
    r
}

/// The adaptive query of `av` at `b_to_a` with the tightest tolerance, from `tol` up, whose
/// tiling fits `budget` rays (see [`AdaptiveSampling`]), and whether `tol` had to be loosened.
///
/// The planned ray count falls like `T^−p` with `p` between 1 (edge-dominated) and 2
/// (area-dominated). A refused plan is cheap (no ray is cast), so the search steps with `p = 2`
/// (a step that is too short is refused again), then with `p` measured from the last two plans
/// (a secant in log–log). Once a tolerance fits, it is tightened inside the bracket until the
/// query uses at least half the budget or the bracket is narrower than 5 %.
fn adaptive_within_budget(
    av: &AdaptiveVolume<'_>,
    b_to_a: &DPose,
    a: &AdaptiveSampling,
    budget: u64,
    tol: f64,
) -> Result<(VolumeResult, bool), VolumeError> {
    let mut last_err = VolumeError::TooManyRays {
        rays: u64::MAX,
        limit: budget,
    };
    let target = 0.75 * budget as f64;
    let mut t = tol;
    // Largest refused tolerance and its planned rays; the one before it.
    let mut fail: Option<(f64, f64)> = None;
    let mut prev_fail: Option<(f64, f64)> = None;
    // Smallest accepted tolerance, its rays and result.
    let mut best: Option<(f64, f64, VolumeResult)> = None;
    for _ in 0..AdaptiveSampling::MAX_LOOSENINGS {
        let opts = AdaptiveOptions {
            tolerance: Tolerance::Absolute(t),
            centre: DVec3::ZERO,
            max_rays: budget,
            finest_resolution: a.finest_resolution,
            collect_points: true,
            view: Default::default(),
        };
        match av.compute(b_to_a, &opts) {
            Ok(r) => {
                if fail.is_none() {
                    // The asked tolerance fits: no search.
                    return Ok((r.result, false));
                }
                let rays = r.result.ray_count as f64;
                let done = rays >= 0.5 * budget as f64;
                best = Some((t, rays.max(1.0), r.result));
                if done {
                    break;
                }
            }
            Err(VolumeError::TooManyRays { rays, limit }) => {
                prev_fail = fail;
                fail = Some((t, rays as f64));
                last_err = VolumeError::TooManyRays { rays, limit };
            }
            Err(e) => return Err(e),
        }
        let Some((tf, rf)) = fail else {
            break;
        };
        t = match &best {
            Some((tb, rb, _)) => {
                if tb / tf < 1.05 {
                    break;
                }
                let span = (tb / tf).ln();
                let p = ((rf / rb).ln() / span).clamp(0.5, 3.0);
                // T with rays = target on the line through the bracket's ends, kept inside.
                let x = ((rf / target).ln() / p / span).clamp(0.1, 0.9);
                tf * (x * span).exp()
            }
            None => {
                let p = match prev_fail {
                    Some((t0, r0)) if tf > t0 && r0 > rf => {
                        ((r0 / rf).ln() / (tf / t0).ln()).clamp(0.5, 3.0)
                    }
                    _ => 2.0,
                };
                tf * (rf / target).powf(1.0 / p).max(1.5)
            }
        };
        if !t.is_finite() {
            break;
        }
    }
    best.map(|(_, _, r)| (r, true)).ok_or(last_err)
}

impl Default for AdaptiveSampling {
    /// A tolerance of 10⁻⁴ of the smaller solid's volume, a 64 × 64 EBPI and 1024 rays per
    /// pair.
    fn default() -> Self {
        Self {
            tolerance: Tolerance::Relative(1e-4),
            finest_resolution: 64,
            ray_budget: 1024,
        }
    }
}

/// One part of a split mesh–mesh volume contact (world space); see the module documentation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeshVolumePart {
    /// Volume share of this part.
    pub volume: f64,
    /// `∂V/∂x_b` of this part's points.
    pub linear: DVec3,
    /// `∂V/∂θ_b` of this part's points about `point`.
    pub angular: DVec3,
    /// The part's centroid (of its endpoints on B, weighted by pixel area).
    pub point: DVec3,
    /// Its quadrant, `0..4` (stable while the cut stays put: used in the feature key).
    pub quadrant: u8,
}

/// The weight of the depth tilt in [`principal_parts`]' volume shares: the position projection
/// then removes half of a tilt per substep. At full weight a cube dropped tilted on a mesh slab
/// settled into a period-two rocking (its tilt flipped sign every step, ±0.14 mm at its edges);
/// at ¾ and ½ it comes to rest (`mesh_boxes_rest_still_on_a_mesh_slab` in `tests/scenes.rs`).
const TILT_WEIGHT: f64 = 0.5;

/// How flat a region's contact surface must be for its parts to sit at the principal radii
/// with one normal ([`principal_parts_with_hint`]): over the pieces facing along the unit
/// gradient `n` (within 60°; side walls do not count), `Σ g·n / Σ |g|`, the mean cosine of their
/// normals to `n`, at least this (a spread of about 0.8°): the faces of boxes and other
/// flat-faced meshes. A curved region is split by its own pieces instead
/// ([`quadrant_parts`]), so that motions that slide it along itself (a nut's screw motion on
/// its helical flanks) move no part into the other solid.
pub const FLAT_FACING: f64 = 0.9999;

/// How flat the pieces `ends` (point, vector area) facing along `n` (within 60°) are: the mean
/// cosine of their normals to their own mean normal `m = Σ g / |Σ g|`, `Σ g·m / Σ |g|` (1 for a
/// plane), and `m`; `(0, n)` when none faces along `n`. Measured against the pieces' own mean
/// normal, not `n`: the side walls of a box that a face drags into the other solid turn the
/// region's gradient by degrees, but the face is still a plane. See [`FLAT_FACING`].
pub fn flatness_and_normal(ends: &[(DVec3, DVec3)], n: DVec3) -> (f64, DVec3) {
    let facing = || {
        ends.iter()
            .map(|&(_, g)| g)
            .filter(|g| g.dot(n) > 0.5 * g.length())
    };
    let Some(m) = facing().sum::<DVec3>().try_normalize() else {
        return (0.0, n);
    };
    let (along, area) = facing().fold((0.0, 0.0), |(d, a), g| (d + g.dot(m), a + g.length()));
    if area > 0.0 {
        (along / area, m)
    } else {
        (0.0, n)
    }
}

/// The flatness of [`flatness_and_normal`]: 1 for a plane, 0 when no piece faces along `n`.
pub fn facing_flatness(ends: &[(DVec3, DVec3)], n: DVec3) -> f64 {
    flatness_and_normal(ends, n).0
}

/// The quadrant `0..4` of offset `d` along `(e₁, e₂)`: signs `(+,+), (−,+), (−,−), (+,−)`.
fn quadrant(d: DVec3, (e1, e2): (DVec3, DVec3)) -> usize {
    match (d.dot(e1) >= 0.0, d.dot(e2) >= 0.0) {
        (true, true) => 0,
        (false, true) => 1,
        (false, false) => 2,
        (true, false) => 3,
    }
}

/// The parts of a curved region: its pieces `ends` grouped by the quadrant of their centroid
/// about `c` along the principal axes `(e₁, e₂)`, each group one part at its area-weighted
/// centroid carrying the group's own `∂V/∂x_b = Σ g` and `∂V/∂θ_b = Σ (x − p) × g` (what the
/// pieces' rounding leaves of the region's `linear` and its torque about `c`, `tau_c`, shared
/// equally), and the volume in proportion to its area facing along `n`. A rigid motion that
/// keeps the surface in place (sliding a helix along itself, turning a surface of revolution
/// about its axis) changes no part's volume to first order, as it does not change the region's.
#[allow(clippy::too_many_arguments)]
fn quadrant_parts(
    volume: f64,
    linear: DVec3,
    tau_c: DVec3,
    ends: &[(DVec3, DVec3)],
    c: DVec3,
    axes: (DVec3, DVec3),
    n: DVec3,
    a_pose: &DPose,
) -> Vec<MeshVolumePart> {
    let mut g = [DVec3::ZERO; 4];
    let mut m = [DVec3::ZERO; 4];
    let mut w = [0.0; 4];
    let mut wp = [DVec3::ZERO; 4];
    for &(x, gi) in ends {
        let q = quadrant(x - c, axes);
        let a = gi.length();
        g[q] += gi;
        m[q] += (x - c).cross(gi);
        w[q] += a;
        wp[q] += x * a;
    }
    let active: Vec<usize> = (0..4).filter(|&q| w[q] > 0.0).collect();
    if active.is_empty() {
        return Vec::new();
    }
    let k = active.len() as f64;
    let dg = (linear - active.iter().map(|&q| g[q]).sum::<DVec3>()) / k;
    let dm = (tau_c - active.iter().map(|&q| m[q]).sum::<DVec3>()) / k;
    let shares: Vec<f64> = active
        .iter()
        .map(|&q| (g[q] + dg).dot(n).max(0.0))
        .collect();
    let total: f64 = shares.iter().sum();
    let rot = a_pose.rotation;
    active
        .iter()
        .zip(&shares)
        .map(|(&q, &share)| {
            let p = wp[q] / w[q];
            let lin = g[q] + dg;
            // About its own point: τ_p = τ_c + (c − p) × G.
            let ang = m[q] + dm + (c - p).cross(lin);
            MeshVolumePart {
                volume: if total > 0.0 {
                    volume * share / total
                } else {
                    volume / k
                },
                linear: rot * lin,
                angular: rot * ang,
                point: a_pose.transform_dpoint(p),
                quadrant: q as u8,
            }
        })
        .collect()
}

/// A four-part manifold of one contact region from its weighted surface points `ends` (point,
/// `∂V/∂p`: for the exact volume, each piece of B's surface inside A as (centroid, vector area)),
/// in the frame `a_pose` maps to world, carrying `volume`, `linear = ∂V/∂x_b` and `angular =
/// ∂V/∂θ_b` about `point` (that frame too).
///
/// The parts do not follow the pieces (a coarse mesh has a few large triangles: a box's bottom
/// face is two, and a quadrant split of piece centroids leaves whole quadrants to side walls).
/// They follow the second moment of the contact surface instead: with `Ĝ` the unit gradient, each
/// piece weighs its area facing along `Ĝ` (`w = max(0, g·Ĝ)`; side walls weigh nothing), the
/// weighted centroid `c` and in-plane second moment `M = Σ w (d dᵀ + w/4π P) / Σ w` (`d` the
/// offset from `c` across `Ĝ`, `P = I − ĜĜᵀ`; the second term spreads each piece as a disk of
/// its area) give the principal directions `e₁, e₂` and radii `r_k = √λ_k`, and the four parts
/// sit at `c ± r₁ e₁ ± r₂ e₂`, each with a quarter of the volume and of `∂V/∂x_b`, and, about
/// its own point, a quarter of the torque about `c` (the region's own moment, zero for a flat
/// face): each part is a contact at its place, so about `c` it carries `¼ τ_c + (p − c) × ¼ G`.
/// The parts' constraints then sum to the region's exactly (the four lever arms cancel), and four
/// points at the radius of gyration resist tilting with the same first-order stiffness as the
/// distributed contact (a square of side `s`: `±s/√12`). (Until 2026-11 the quarter torque about
/// `c` was moved to each point, `¼ τ_c + (c − p) × ¼ G` about `p`: that cancels the lever arm, so
/// the solver, which takes `τ_p + (p − x) × G` about a body's centre `x`, saw four copies of one
/// constraint with no tilt stiffness, and a mesh box resting on a mesh rocked.) `None` without a
/// gradient.
///
/// **Depth tilt.** With the volume's centroid `c_V` (`centroid`, same frame; the exact volume
/// has it), the overlap's depth over the contact surface is fitted as an affine field
/// `d = d̄ + a u₁ + b u₂` along the principal axes: its first moments `∫ d u_k dA` must equal the
/// volume's, `V (c_V − c)·e_k`, and the surface's second moments are `λ_k Σ w`, so part
/// `(s₁, s₂)` (at `s_k r_k` along `e_k`) gets the volume
/// `V_q = V/4 (1 + s₁ κ₁ + s₂ κ₂)`, `κ_k = (c_V − c)·e_k / r_k` — the four points integrate an
/// affine field exactly, so the shares still sum to `V` and their first moment is the volume's
/// (the shares use `κ_k` at [`TILT_WEIGHT`], ½: see there). A tilted overlap (one side deeper)
/// then gives its deep side the larger share and the position projection turns the body back,
/// instead of lifting all four parts alike (with lever arms but equal shares a cube dropped
/// tilted on a mesh slab still moved by 1.5 mm). A wedge of depth `D → 0` across the surface has
/// `κ = 1/√3`; `κ_k` is clamped to `[−1, 1]` for regions that are no height field. A part whose
/// share goes negative is speculative (the solver lets its side close the gap but not overlap
/// within the substep). `None` for `centroid`: equal shares.
#[cfg(test)]
pub fn principal_parts(
    volume: f64,
    linear: DVec3,
    angular: DVec3,
    point: DVec3,
    ends: &[(DVec3, DVec3)],
    centroid: Option<DVec3>,
    a_pose: &DPose,
) -> Option<Vec<MeshVolumePart>> {
    principal_parts_with_hint(
        volume, linear, angular, point, ends, centroid, a_pose, None, None, true,
    )
}

/// [`principal_parts`], with `hint` (a direction in the frame of `ends`) naming the first axis
/// when the contact surface is (nearly) isotropic: its principal moments within 1e-3 of each
/// other, so that the eigenvectors are set by rounding and would turn from step to step (the
/// parts' feature keys then name other places and their warm-started friction impulses twist
/// the body). The hint is projected on the contact plane; without one (or when it is along the
/// normal) the eigenvectors are kept.
///
/// With `lever_arms`, a flat contact surface ([`FLAT_FACING`]) gets the four parts above with
/// their lever arms and depth shares, and a curved one is split by its own pieces
/// ([`quadrant_parts`]: each part its quadrant's own force and torque, so a motion that slides
/// the surface along itself, a nut's screw motion, moves no part into the other solid). Without
/// (the tessellation of a curved primitive, whose contact acts through its centre: lever arms
/// at the cap's radius would resist a ball's rolling) every part carries, about its own point,
/// the quarter torque about `c` plus `(c − p) × ¼ G`, and equal shares: about any centre the four
/// are then one constraint, the region's, with no tilt stiffness of their own.
#[allow(clippy::too_many_arguments)]
pub fn principal_parts_with_hint(
    volume: f64,
    linear: DVec3,
    angular: DVec3,
    point: DVec3,
    ends: &[(DVec3, DVec3)],
    centroid: Option<DVec3>,
    a_pose: &DPose,
    hint: Option<DVec3>,
    face: Option<DVec3>,
    lever_arms: bool,
) -> Option<Vec<MeshVolumePart>> {
    let glen = linear.length();
    if !(glen > 0.0 && glen.is_finite() && volume.is_finite() && volume > 0.0) {
        return None;
    }
    let flat = facing_flatness(ends, linear / glen) >= FLAT_FACING;
    // Two flat faces pressed together (`face`: their common normal) push along that normal:
    // the strips of side wall that the overlap drags into the other solid (a box sunk `d` into
    // another has walls `d` tall inside it, and walls flush with the other's are cut on one
    // side only) turn the gradient sideways by `d` times the walls' length over the face's
    // area, an artefact of the overlap's depth, not of the contact; a stack of boxes whose faces
    // were offset by millimetres was pushed sideways by it at every landing. Elsewhere (a
    // facet tilted on a face, curved surfaces) the whole gradient is kept.
    let linear = match face {
        Some(m) if lever_arms && flat && linear.dot(m) > 0.0 => m * linear.dot(m),
        _ => linear,
    };
    let glen = linear.length();
    let n = linear / glen;
    let facing = |g: DVec3| g.dot(n).max(0.0);
    let mut wsum: f64 = ends.iter().map(|&(_, g)| facing(g)).sum();
    let weight: &dyn Fn(DVec3) -> f64 = if wsum > 0.0 {
        &facing
    } else {
        wsum = ends.iter().map(|&(_, g)| g.length()).sum();
        &|g: DVec3| g.length()
    };
    if wsum.is_nan() || wsum <= 0.0 {
        return None;
    }
    let c = ends.iter().map(|&(x, g)| x * weight(g)).sum::<DVec3>() / wsum;
    let (u, v) = n.any_orthonormal_pair();
    let (mut muu, mut muv, mut mvv) = (0.0, 0.0, 0.0);
    for &(x, g) in ends {
        let w = weight(g);
        let d = x - c;
        let (du, dv) = (d.dot(u), d.dot(v));
        let disk = w / (4.0 * std::f64::consts::PI);
        muu += w * (du * du + disk);
        muv += w * du * dv;
        mvv += w * (dv * dv + disk);
    }
    let (muu, muv, mvv) = (muu / wsum, muv / wsum, mvv / wsum);
    // Eigen-decomposition of the symmetric 2 × 2 [[muu, muv], [muv, mvv]].
    let half_trace = 0.5 * (muu + mvv);
    let diff = 0.5 * (muu - mvv);
    let root = (diff * diff + muv * muv).sqrt();
    let (l1, l2) = (half_trace + root, (half_trace - root).max(0.0));
    let angle = 0.5 * (2.0 * muv).atan2(muu - mvv);
    let mut e1 = u * angle.cos() + v * angle.sin();
    if let Some(h) = hint
        && root <= 1e-3 * half_trace
        && let Some(e) = (h - n * n.dot(h)).try_normalize()
    {
        e1 = e;
    }
    let e2 = n.cross(e1);
    let (r1, r2) = (l1.max(0.0).sqrt(), l2.sqrt());
    // Depth tilt (see above): κ_k = (c_V − c)·e_k / r_k, clamped; 0 without a centroid or a
    // spread along e_k.
    let tilt = |e: DVec3, r: f64| -> f64 {
        match centroid {
            Some(cv) if r > 0.0 => {
                let k = (cv - c).dot(e) / r;
                if k.is_finite() {
                    k.clamp(-1.0, 1.0)
                } else {
                    0.0
                }
            }
            _ => 0.0,
        }
    };
    // Torque about c: τ_c = τ_p + (p − c) × G.
    let tau_c = angular + (point - c).cross(linear);
    // Lever arms: at the principal radii on a flat surface, by the pieces on a curved one.
    if lever_arms && !flat {
        let parts = quadrant_parts(volume, linear, tau_c, ends, c, (e1, e2), n, a_pose);
        return (!parts.is_empty()).then_some(parts);
    }
    let (k1, k2) = if lever_arms {
        (TILT_WEIGHT * tilt(e1, r1), TILT_WEIGHT * tilt(e2, r2))
    } else {
        (0.0, 0.0)
    };
    let rot = a_pose.rotation;
    let mut parts = Vec::with_capacity(4);
    for (q, (s1, s2)) in [(1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0)]
        .into_iter()
        .enumerate()
    {
        let p = c + e1 * (s1 * r1) + e2 * (s2 * r2);
        let g = linear * 0.25;
        parts.push(MeshVolumePart {
            volume: 0.25 * volume * (1.0 + s1 * k1 + s2 * k2),
            linear: rot * g,
            angular: if lever_arms {
                rot * (0.25 * tau_c)
            } else {
                rot * (0.25 * tau_c + (c - p).cross(g))
            },
            point: a_pose.transform_dpoint(p),
            quadrant: q as u8,
        });
    }
    Some(parts)
}

/// The split of one pair: see the module documentation. `result` must come from a query with
/// `collect_points`; `a_pose` maps A's frame to world. Returns the pair's volume estimate, total
/// `∂V/∂x_b`, total `∂V/∂θ_b` about the centroid of B's endpoints, that centroid (all world
/// space) and the parts; `None` when no endpoint lies on B (no gradient).
pub fn split_mesh_volume(
    result: &VolumeResult,
    a_pose: &DPose,
) -> Option<(f64, DVec3, DVec3, DVec3, Vec<MeshVolumePart>)> {
    let ends: Vec<(DVec3, DVec3)> = result
        .points
        .iter()
        .filter(|p| p.on_b)
        .map(|p| {
            let k = (p.axis as usize).min(2);
            (p.point, axis_gradient(p, result.pixel_area[k]))
        })
        .collect();
    split_weighted(result, a_pose, &ends)
}

/// [`split_mesh_volume`] for a result with a different area per point (adaptive sampling, where
/// every ray stands for its own tile): the weight of a point is its tile area
/// `SurfacePoint::area · |n_k|` (`area` is the tile area over `|n_k|`).
///
/// Endpoints on B of the same ray with opposite normals (a chord of B that lies inside A, such
/// as a ray through both side faces of a box sunk into a slab) are cancelled in pairs first:
/// their gradients are equal and opposite along one line, so they add nothing to `∂V/∂x_b` or
/// `∂V/∂θ_b`, but split into different parts they would make two opposed one-sided contacts
/// that brake any sliding along the ray. With a uniform lattice this needs a line inside the
/// (thin) overlap layer, which a coarse lattice does not have; an adaptive tiling always casts
/// at least one ray per view there.
pub fn split_adaptive_volume(
    result: &VolumeResult,
    a_pose: &DPose,
) -> Option<(f64, DVec3, DVec3, DVec3, Vec<MeshVolumePart>)> {
    // `∂V/∂p` of an endpoint standing for its own tile (of area `area · |n_k|`).
    let weighted = |p: &SurfacePoint| {
        let k = (p.axis as usize).min(2);
        (p.point, axis_gradient(p, p.area * p.normal[k].abs()))
    };
    let mut ends: Vec<(DVec3, DVec3)> = Vec::new();
    // One tile's ends lie on one ray.
    for line in result.lines() {
        let k = (line[0].axis as usize).min(2);
        // Match opposite B endpoints like brackets along the ray (one tile: equal weights up to
        // rounding); keep the unmatched ones.
        let mut open: Vec<(DVec3, DVec3)> = Vec::new();
        for p in line.iter().filter(|p| p.on_b) {
            let (x, g) = weighted(p);
            match open.last() {
                Some(&(_, h)) if h[k] * g[k] < 0.0 => {
                    open.pop();
                }
                _ => open.push((x, g)),
            }
        }
        // Each remaining endpoint stands for its whole tile: spread it over a square of the
        // tile's area (the tile's own aspect is not kept in the point) as four quarter points
        // at the sub-square centres. The total and the moment about any point are unchanged
        // (the four points are symmetric about the tile centre), but a tile that covers several
        // quadrants now supports each of them.
        for (x, g) in open {
            let half = 0.25 * g[k].abs().sqrt();
            let (u, v) = ((k + 1) % 3, (k + 2) % 3);
            for (su, sv) in [(-1.0, -1.0), (1.0, -1.0), (-1.0, 1.0), (1.0, 1.0)] {
                let mut y = x;
                y[u] += su * half;
                y[v] += sv * half;
                ends.push((y, 0.25 * g));
            }
        }
    }
    if ends.is_empty() {
        // Every endpoint on B cancelled (B nested in A: no gradient): the plain split, as for
        // a uniform result.
        ends = result
            .points
            .iter()
            .filter(|p| p.on_b)
            .map(weighted)
            .collect();
    }
    split_weighted(result, a_pose, &ends)
}

/// `∂V/∂p` of one endpoint standing for a pixel (tile) of area `w`: `±w` along its ray's axis,
/// the sign of its normal's component.
fn axis_gradient(p: &SurfacePoint, w: f64) -> DVec3 {
    let k = (p.axis as usize).min(2);
    let mut g = DVec3::ZERO;
    g[k] = if p.normal[k] >= 0.0 { w } else { -w };
    g
}

/// The split of the endpoints on B, each given as (point, `∂V/∂p`) in A's frame.
fn split_weighted(
    result: &VolumeResult,
    a_pose: &DPose,
    ends: &[(DVec3, DVec3)],
) -> Option<(f64, DVec3, DVec3, DVec3, Vec<MeshVolumePart>)> {
    // The volume estimate weights each axis by the gradient's share along it (item 5).
    let total: DVec3 = ends.iter().map(|&(_, g)| g).sum();
    let wsum: f64 = ends.iter().map(|&(_, g)| g.length()).sum();
    let glen2 = total.length_squared();
    let volume = if glen2 > 1e-24 * wsum * wsum {
        (0..3)
            .map(|k| result.axis_volumes[k] * total[k] * total[k])
            .sum::<f64>()
            / glen2
    } else {
        result.volume
    };
    let mut split = split_with_volume(volume, a_pose, ends)?;
    // A part's depth (volume over gradient length) cannot exceed the diameter of the
    // intersection, whose boundary the sampled points (on A and on B) lie on. When the sampled
    // gradient nearly cancels (opposite endpoints of a thin sliver), `volume · share / |g_q|`
    // would claim depths of kilometres and launch the bodies; such parts are capped at that
    // diameter.
    let (lo, hi) = result.points.iter().fold(
        (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)),
        |(lo, hi), p| (lo.min(p.point), hi.max(p.point)),
    );
    let extent = (hi - lo).length();
    if extent > 0.0 {
        for part in &mut split.4 {
            part.volume = part.volume.min(part.linear.length() * extent);
        }
    }
    Some(split)
}

/// The quadrant split of weighted surface points `ends` (point, `∂V/∂p`, in the frame `a_pose`
/// maps to world) carrying `volume` (see the module documentation, item 4): the total volume,
/// `∂V/∂x_b`, `∂V/∂θ_b` about the points' centroid, that centroid (world space) and the parts.
/// `None` without weight or without a positive finite volume. The exact volume's contact
/// regions are split with this from their pieces on B (centroid, vector area).
pub fn split_with_volume(
    volume: f64,
    a_pose: &DPose,
    ends: &[(DVec3, DVec3)],
) -> Option<(f64, DVec3, DVec3, DVec3, Vec<MeshVolumePart>)> {
    let mut total = DVec3::ZERO;
    let mut wsum = 0.0;
    let mut wc = DVec3::ZERO;
    for &(x, g) in ends {
        total += g;
        let w = g.length();
        wsum += w;
        wc += x * w;
    }
    if !(wsum > 0.0 && wc.is_finite() && volume > 0.0 && volume.is_finite()) {
        return None;
    }
    let c = wc / wsum;
    let (t1, t2) = total.normalize_or(DVec3::Z).any_orthonormal_pair();
    let mut lin = [DVec3::ZERO; 4];
    let mut mom = [DVec3::ZERO; 4]; // about c
    let mut pw = [0.0; 4];
    let mut pc = [DVec3::ZERO; 4];
    let mut ang_total = DVec3::ZERO;
    for &(x, g) in ends {
        let d = x - c;
        let q = match (t1.dot(d) >= 0.0, t2.dot(d) >= 0.0) {
            (true, true) => 0,
            (false, true) => 1,
            (false, false) => 2,
            (true, false) => 3,
        };
        let m = d.cross(g);
        lin[q] += g;
        mom[q] += m;
        ang_total += m;
        let w = g.length();
        pw[q] += w;
        pc[q] += x * w;
    }
    let norm_sum: f64 = lin.iter().map(|g| g.length()).sum();
    let r = a_pose.rotation;
    let mut parts = Vec::with_capacity(4);
    for q in 0..4 {
        if pw[q] <= 0.0 {
            continue;
        }
        let share = if norm_sum > 0.0 {
            lin[q].length() / norm_sum
        } else {
            pw[q] / wsum
        };
        let cq = pc[q] / pw[q];
        // Moment about c_q: Σ (x − c_q) × g = Σ (x − c) × g − (c_q − c) × g_q.
        let angular = mom[q] - (cq - c).cross(lin[q]);
        parts.push(MeshVolumePart {
            volume: volume * share,
            linear: r * lin[q],
            angular: r * angular,
            point: a_pose.transform_dpoint(cq),
            quadrant: q as u8,
        });
    }
    Some((
        volume,
        r * total,
        r * ang_total,
        a_pose.transform_dpoint(c),
        parts,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use interfere_geometry::glam::{DMat3, DQuat, Vec3};
    use interfere_geometry::shapes::{cuboid, icosphere, torus};
    use interfere_geometry::{Sampling, UniformOptions, UniformVolume};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn random_pose(rng: &mut ChaCha8Rng, spread: f64) -> (DVec3, DQuat) {
        let axis = DVec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        )
        .normalize_or(DVec3::X);
        let t = DVec3::new(
            rng.random_range(-spread..spread),
            rng.random_range(-spread..spread),
            rng.random_range(-spread..spread),
        );
        (t, DQuat::from_axis_angle(axis, rng.random_range(-3.0..3.0)))
    }

    /// Oracle: the points-based totals equal the vertex-gradient totals of the volume query
    /// (`Σ gradient_b` and `Σ (p − c) × g`), the parts sum to them, and world conversion is the
    /// rotation of A's pose.
    #[test]
    fn split_matches_vertex_gradients_and_parts_sum_to_total() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let shapes = [
            cuboid(Vec3::new(0.5, 0.3, 0.2)).unwrap(),
            torus(0.4, 0.15, 12, 6).unwrap(),
            icosphere(0.4, 1).unwrap(),
        ];
        let mut checked = 0;
        for case in 0..40 {
            let a = &shapes[case % 3];
            let b = &shapes[(case / 3) % 3];
            let uv = UniformVolume::new(a, b);
            let (t, q) = random_pose(&mut rng, 0.4);
            let b_to_a = DPose {
                rotation: DMat3::from_quat(q),
                translation: t,
            };
            let (at, aq) = random_pose(&mut rng, 5.0);
            let a_pose = DPose {
                rotation: DMat3::from_quat(aq),
                translation: at,
            };
            let mut opts = UniformOptions {
                sampling: Sampling::Spacing(0.05),
                centre: DVec3::ZERO,
                collect_points: true,
                max_rays: 1 << 20,
            };
            let r = uv.compute(&b_to_a, &opts).unwrap();
            let Some((v, lin, ang, c, parts)) = split_mesh_volume(&r, &a_pose) else {
                assert!(r.gradient_b.iter().all(|g| *g == DVec3::ZERO) || r.volume == 0.0);
                continue;
            };
            // Centre in A's frame, to ask the query for the torque about it.
            opts.centre = a_pose.inverse().transform_dpoint(c);
            let r2 = uv.compute(&b_to_a, &opts).unwrap();
            let rt = a_pose.rotation;
            let scale = lin.length().max(1e-12);
            assert!((lin - rt * r2.translation_gradient()).length() < 1e-9 * scale);
            assert!((ang - rt * r2.rotation_gradient()).length() < 1e-9 * (1.0 + ang.length()));
            let vs: f64 = parts.iter().map(|p| p.volume).sum();
            let ls: DVec3 = parts.iter().map(|p| p.linear).sum();
            let angs: DVec3 = parts
                .iter()
                .map(|p| p.angular + (p.point - c).cross(p.linear))
                .sum();
            assert!((vs - v).abs() <= 1e-12 * v, "{vs} vs {v}");
            assert!((ls - lin).length() < 1e-9 * scale);
            assert!((angs - ang).length() < 1e-9 * (1.0 + ang.length()));
            assert!(!parts.is_empty() && parts.len() <= 4);
            let mut quads: Vec<u8> = parts.iter().map(|p| p.quadrant).collect();
            quads.dedup();
            assert_eq!(quads.len(), parts.len());
            // The estimate is a convex combination of the axis estimates.
            let lo = r.axis_volumes.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = r.axis_volumes.iter().copied().fold(0.0, f64::max);
            assert!(v >= lo * (1.0 - 1e-12) && v <= hi * (1.0 + 1e-12));
            checked += 1;
        }
        assert!(checked > 15, "{checked}");
    }

    /// Oracle for the principal manifold: a square contact of side `s` made of two triangles
    /// (and side walls that must not count) gives four parts at `c ± r e₁ ± r e₂` with the
    /// radius between the two-triangle estimate and the square's `s/√12`; the parts sum to the
    /// region's volume, gradient and torque; a rotated frame maps them to world.
    #[test]
    fn principal_parts_follow_the_second_moment_and_sum_to_the_region() {
        let s = 2.0;
        // The bottom face of a box (outward normal −z, so ∂V/∂x_b points down) as two triangles,
        // plus four thin side walls.
        let tri = |c: DVec3| (c, DVec3::new(0.0, 0.0, -0.5 * s * s));
        let mut ends = vec![
            tri(DVec3::new(s / 6.0, -s / 6.0, 0.0)),
            tri(DVec3::new(-s / 6.0, s / 6.0, 0.0)),
        ];
        for (d, n) in [
            (DVec3::X, DVec3::X),
            (-DVec3::X, -DVec3::X),
            (DVec3::Y, DVec3::Y),
            (-DVec3::Y, -DVec3::Y),
        ] {
            ends.push((d * (0.5 * s) + DVec3::Z * 0.01, n * (s * 0.02)));
        }
        let linear: DVec3 = ends.iter().map(|e| e.1).sum();
        let point = DVec3::ZERO;
        let angular = DVec3::new(0.3, -0.2, 0.05);
        let volume = 0.04;
        let frame = DPose {
            rotation: DMat3::from_quat(DQuat::from_rotation_z(0.7) * DQuat::from_rotation_x(0.2)),
            translation: DVec3::new(5.0, -3.0, 1.0),
        };
        let parts = principal_parts(volume, linear, angular, point, &ends, None, &frame).unwrap();
        assert_eq!(parts.len(), 4);
        let r = frame.rotation;
        let c_world = frame.transform_dpoint(DVec3::ZERO);
        let vs: f64 = parts.iter().map(|p| p.volume).sum();
        let ls: DVec3 = parts.iter().map(|p| p.linear).sum();
        let ts: DVec3 = parts
            .iter()
            .map(|p| p.angular + (p.point - c_world).cross(p.linear))
            .sum();
        assert!((vs - volume).abs() < 1e-15);
        assert!((ls - r * linear).length() < 1e-12);
        assert!(
            (ts - r * angular).length() < 1e-12,
            "{ts} vs {}",
            r * angular
        );
        // Each part sits in the face's plane, at the same radius from the centre, spread in
        // both directions: between the centroids' spread plus a disk each and the square's.
        let square = s / 12f64.sqrt();
        for p in &parts {
            let local = frame.inverse().transform_dpoint(p.point);
            assert!(local.z.abs() < 1e-12, "{local}");
            let (rx, ry) = (local.x.abs(), local.y.abs());
            let rr = (rx * rx + ry * ry).sqrt();
            assert!(
                rr > 0.7 * square * 2f64.sqrt() && rr < 1.05 * square * 2f64.sqrt(),
                "{local}"
            );
            assert!((p.linear - r * linear * 0.25).length() < 1e-12);
        }
        // Distinct quadrants.
        let mut q: Vec<u8> = parts.iter().map(|p| p.quadrant).collect();
        q.sort_unstable();
        assert_eq!(q, [0, 1, 2, 3]);
        // Each part is a contact at its place: its gradient about its own point is a quarter of
        // the region's torque about the centre (here `angular`, the centre being the origin),
        // so about the centre it carries its lever arm `(p − c) × G/4`.
        for p in &parts {
            assert!((p.angular - r * angular * 0.25).length() < 1e-12, "{p:?}");
        }
        // Depth tilt: with a volume centroid off the surface's centroid, the shares sum to the
        // volume and their first moment is
        // `TILT_WEIGHT` times the volume's, `V (c_V − c)` (in the plane; unclamped here).
        let cv = DVec3::new(0.05, -0.02, -0.01);
        let tilted =
            principal_parts(volume, linear, angular, point, &ends, Some(cv), &frame).unwrap();
        let vs: f64 = tilted.iter().map(|p| p.volume).sum();
        assert!((vs - volume).abs() < 1e-15);
        let first: DVec3 = tilted
            .iter()
            .map(|p| p.volume * (frame.inverse().transform_dpoint(p.point)))
            .sum();
        let want = TILT_WEIGHT * volume * DVec3::new(cv.x, cv.y, 0.0);
        assert!((first - want).length() < 1e-12, "{first} vs {want}");
        // Only the shares change.
        for (p, q) in tilted.iter().zip(&parts) {
            assert_eq!(
                (p.linear, p.angular, p.point),
                (q.linear, q.angular, q.point)
            );
        }
        // A curved surface (the two bottom triangles tilted 5° apart, past `FLAT_FACING`): split
        // by its pieces. Each triangle is one part at its own centroid with its own gradient
        // (so a part pushes along its own face's normal), the parts sum to the region's force
        // and torque, and the volume is shared by the area facing along the gradient (equal
        // here).
        let tip = |c: DVec3, a: f64| {
            (
                c,
                DQuat::from_rotation_x(a) * DVec3::new(0.0, 0.0, -0.5 * s * s),
            )
        };
        let curved = [
            tip(DVec3::new(s / 6.0, -s / 6.0, 0.0), 0.044),
            tip(DVec3::new(-s / 6.0, s / 6.0, 0.0), -0.044),
        ];
        assert!(facing_flatness(&curved, DVec3::NEG_Z) < FLAT_FACING);
        let curved_linear: DVec3 = curved.iter().map(|e| e.1).sum();
        let curved_angular: DVec3 = curved.iter().map(|e| e.0.cross(e.1)).sum();
        let split = principal_parts(
            volume,
            curved_linear,
            curved_angular,
            point,
            &curved,
            Some(cv),
            &frame,
        )
        .unwrap();
        assert_eq!(split.len(), 2);
        let ls: DVec3 = split.iter().map(|p| p.linear).sum();
        let ts: DVec3 = split
            .iter()
            .map(|p| p.angular + (p.point - c_world).cross(p.linear))
            .sum();
        assert!((ls - r * curved_linear).length() < 1e-12, "{ls}");
        assert!((ts - r * curved_angular).length() < 1e-12, "{ts}");
        for p in &split {
            let piece = curved
                .iter()
                .find(|e| (frame.transform_dpoint(e.0) - p.point).length() < 1e-12)
                .expect("a part at each triangle's centroid");
            assert!((p.linear - r * piece.1).length() < 1e-12, "{p:?}");
            assert!(p.angular.length() < 1e-12, "{p:?}");
            assert!((p.volume - 0.5 * volume).abs() < 1e-15);
        }
        // No gradient: no parts.
        assert!(
            principal_parts(volume, DVec3::ZERO, angular, point, &ends, None, &frame).is_none()
        );
    }
}

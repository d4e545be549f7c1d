//! Certified uniform sampling: the smallest uniform ray grid whose Eq. 9 edge bound meets a
//! tolerance (Wang, Faure & Pai 2012, sections 4.2–4.3 and Fig. 9 right, where the lowest EBPI
//! resolution, one pixel subdivided uniformly, is uniform sampling with the same guarantee).
//!
//! A tolerance is a guarantee only through a bound; uniform sampling
//! ([`Sampling::Resolution`](crate::volume::Sampling::Resolution)`(R)`: per view axis `k`, `R × R`
//! lines at the tile centres of the overlap box's face, tiles of `(W / R) × (H / R)`) gets the
//! same bound as the adaptive planner, charged the same way:
//!
//! * **The same texels.** The EBPI of each axis is built exactly as for
//!   [`AdaptiveVolume::compute`] (same overlap box, same view, same `finest_resolution`, so the
//!   same Alg. 2 case and narrow-face choices), and its texels are summed into one image texel:
//!   the channels are linear in the edge lengths, so this is the top of the adaptive pyramid
//!   ([`pyramid`](super::pyramid) adds 2×2 texels the same way), and `Δ_image(w, h)` is the sum
//!   over all texels of their `Δ(w, h)` at the uniform tile size.
//! * **The same budget.** The adaptive planner gives every axis `EDGE_SHARE · T` (three
//!   quarters of the tolerance `T`) for its edge bounds, spread over its pyramid pixels in
//!   proportion to area; for the single image pixel that is the whole `EDGE_SHARE · T`. A
//!   resolution `R` is certified when, on every axis, `Δ_image(W / R, H / R) ≤ EDGE_SHARE · T`:
//!   exactly the test [`plan`](super::tile_size::plan) applies to the top pyramid pixel tiled
//!   `R × R`. Since every Eq. 9 coefficient is non-negative, `Δ_image(W/R, H/R) = A / R² + B / R`
//!   decreases with `R`, and the smallest certified `R` is the root of a quadratic, rounded up
//!   (and checked against `R − 1`).
//!
//! **Transient edges.** The remaining quarter of `T` is for transient edges, which the adaptive
//! method charges after casting and refines 4×4 where needed (section 5). Uniform sampling cannot
//! refine, so the certified resolution certifies the edge share only; the transient charges of
//! the uniform tiles (the same section 5 test and charge, with the same EBPI) are checked after
//! casting by [`AdaptiveVolume::certified_uniform_volume`], whose
//! [`AdaptiveResult::tolerance_met`] says whether the whole tolerance is certified. Rays of the
//! certified resolution are therefore a lower bound of what a fully certified uniform sampling
//! needs; the adaptive method's ray counts include its refinement rays
//! ([`AdaptiveResult::refined_rays`]), so compare `ray_count − refined_rays` for the edge share
//! alone.

use super::ebpi::Texel;
use super::pyramid::Node;
use super::tile_size::TilePlan;
use super::{AdaptiveOptions, AdaptiveResult, AdaptiveVolume, EDGE_SHARE, Frame};
use crate::pose::DPose;
use crate::volume::VolumeError;

/// The Eq. 9 edge certificate of a uniform sampling ([`AdaptiveVolume::uniform_certificate`],
/// [`AdaptiveVolume::certified_uniform_resolution`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UniformCertificate {
    /// Lines per side per axis, as in
    /// [`Sampling::Resolution`](crate::volume::Sampling::Resolution).
    pub resolution: u32,
    /// Rays over the three axes: `3 R²`, or 0 when the bounding boxes do not overlap (nothing is
    /// cast then).
    pub rays: u64,
    /// The tolerance `T`, in volume units.
    pub tolerance: f64,
    /// The edge share of the tolerance that each axis's edge bound must meet:
    /// `EDGE_SHARE · T`, the adaptive planner's per-axis edge budget.
    pub edge_budget: f64,
    /// Per view axis: the Eq. 9 edge bound `Δ_image(W / R, H / R)` of the uniform tiles.
    pub axis_edge_bounds: [f64; 3],
}

impl UniformCertificate {
    /// Whether every axis's edge bound is within the edge budget.
    pub fn edge_bound_met(&self) -> bool {
        self.axis_edge_bounds.iter().all(|&b| b <= self.edge_budget)
    }
}

/// Per view axis: the sum of all EBPI texels and the image size `(W, H)`.
type ImageTexels = [(Texel, [f64; 2]); 3];

impl AdaptiveVolume<'_> {
    /// The frame and the image texels of a query (see the module documentation); `None` for the
    /// texels when the bounding boxes do not overlap.
    fn image_texels(
        &self,
        b_to_a: &DPose,
        options: &AdaptiveOptions,
    ) -> Result<(Frame, Option<ImageTexels>), VolumeError> {
        let frame = self.frame(b_to_a, options, None)?;
        let Some(ebpis) = frame.ebpis(self, options.finest_resolution) else {
            return Ok((frame, None));
        };
        let size = frame.hi - frame.lo;
        let texels = std::array::from_fn(|k| {
            let mut t = Texel::default();
            for x in &ebpis[k].texels {
                t.add(x);
            }
            (t, [size[(k + 1) % 3], size[(k + 2) % 3]])
        });
        Ok((frame, Some(texels)))
    }

    /// The Eq. 9 edge bounds of uniform sampling at `resolution` lines per side per axis, for B
    /// placed by `b_to_a`, against the edge share of `options.tolerance` (see the module
    /// documentation; `options.max_rays` is not applied, nothing is cast). With the default
    /// [`ViewDirections::Axes`](super::ViewDirections::Axes) the grid is that of
    /// [`Sampling::Resolution`](crate::volume::Sampling::Resolution)`(resolution)`.
    pub fn uniform_certificate(
        &self,
        b_to_a: &DPose,
        options: &AdaptiveOptions,
        resolution: u32,
    ) -> Result<UniformCertificate, VolumeError> {
        if resolution == 0 {
            return Err(VolumeError::ZeroResolution);
        }
        let (frame, texels) = self.image_texels(b_to_a, options)?;
        let mut c = UniformCertificate {
            resolution,
            rays: 0,
            tolerance: frame.tolerance,
            edge_budget: EDGE_SHARE * frame.tolerance,
            axis_edge_bounds: [0.0; 3],
        };
        if let Some(texels) = texels {
            c.rays = 3 * u64::from(resolution).pow(2);
            c.axis_edge_bounds = texels.map(|(t, s)| uniform_bound(&t, s, resolution));
        }
        Ok(c)
    }

    /// The smallest uniform resolution `R` (lines per side per axis) whose Eq. 9 edge bound meets
    /// the edge share of `options.tolerance` on every axis, for B placed by `b_to_a`: the
    /// adaptive planner's guarantee, bought with uniform tiles (see the module documentation).
    /// `R` is 1 when the bounding boxes do not overlap or no edge makes an error. Refused with
    /// [`VolumeError::TooManyRays`] when `3 R²` exceeds `options.max_rays`.
    pub fn certified_uniform_resolution(
        &self,
        b_to_a: &DPose,
        options: &AdaptiveOptions,
    ) -> Result<UniformCertificate, VolumeError> {
        let (frame, texels) = self.image_texels(b_to_a, options)?;
        let budget = EDGE_SHARE * frame.tolerance;
        let mut c = UniformCertificate {
            resolution: 1,
            rays: 0,
            tolerance: frame.tolerance,
            edge_budget: budget,
            axis_edge_bounds: [0.0; 3],
        };
        let Some(texels) = texels else {
            return Ok(c);
        };
        let mut r = 1u64;
        for (t, s) in &texels {
            r = r.max(smallest_resolution(t, *s, budget));
        }
        let rays = r.saturating_mul(r).saturating_mul(3);
        if r > u64::from(u32::MAX) || rays > options.max_rays {
            return Err(VolumeError::TooManyRays {
                rays,
                limit: options.max_rays,
            });
        }
        c.resolution = r as u32;
        c.rays = rays;
        c.axis_edge_bounds = texels.map(|(t, s)| uniform_bound(&t, s, c.resolution));
        Ok(c)
    }

    /// Uniform sampling at `resolution` lines per side per axis with its full certificate: the
    /// uniform grid is cast (one line per tile centre, no refinement), and
    /// [`AdaptiveResult::axis_error_bounds`] holds, per axis, the Eq. 9 edge bound of the uniform
    /// tiles plus the section 5 transient charges of the cast tiles, charged as in
    /// [`AdaptiveVolume::compute`]. [`AdaptiveResult::tolerance_met`] says whether that meets
    /// the tolerance; [`AdaptiveResult::refined_rays`] is 0. With the default
    /// [`ViewDirections::Axes`](super::ViewDirections::Axes) the lines are those of
    /// [`Sampling::Resolution`](crate::volume::Sampling::Resolution)`(resolution)`, and so is
    /// the volume (up to the order of the sums). Refused with [`VolumeError::TooManyRays`] when
    /// `3 R²` exceeds `options.max_rays`.
    pub fn certified_uniform_volume(
        &self,
        b_to_a: &DPose,
        options: &AdaptiveOptions,
        resolution: u32,
    ) -> Result<AdaptiveResult, VolumeError> {
        if resolution == 0 {
            return Err(VolumeError::ZeroResolution);
        }
        let frame = self.frame(b_to_a, options, None)?;
        let Some(ebpis) = frame.ebpis(self, options.finest_resolution) else {
            return Ok(frame.empty_result());
        };
        let size = frame.hi - frame.lo;
        let plans = ebpis
            .into_iter()
            .enumerate()
            .map(|(k, e)| {
                let mut t = Texel::default();
                for x in &e.texels {
                    t.add(x);
                }
                let s = [size[(k + 1) % 3], size[(k + 2) % 3]];
                let node = Node {
                    origin: e.origin,
                    size: s,
                    plan: TilePlan {
                        n: [u64::from(resolution); 2],
                        bound: uniform_bound(&t, s, resolution),
                    },
                };
                (e, vec![node])
            })
            .collect();
        frame.cast(plans, options, false)
    }
}

/// `Δ(W / R, H / R)` of the image texel `t` of size `s` (0 for an empty texel, as the planner).
fn uniform_bound(t: &Texel, s: [f64; 2], r: u32) -> f64 {
    if t.is_empty() {
        return 0.0;
    }
    let r = f64::from(r);
    t.bound(s[0] / r, s[1] / r).max(0.0)
}

/// The smallest `R ≥ 1` with `Δ(W / R, H / R) ≤ budget`, saturating above `u32::MAX`.
fn smallest_resolution(t: &Texel, [w, h]: [f64; 2], budget: f64) -> u64 {
    if t.is_empty() || t.bound(w, h) <= budget {
        return 1;
    }
    // Δ(W/R, H/R) = a / R² + b / R with a, b ≥ 0: the root of budget R² − b R − a.
    let c = &t.c;
    let a =
        c[0] * w * w + c[1] * h * h + c[2] * w * h + c[3] * h * h * h / w + c[4] * w * w * w / h;
    let b = c[5] * h + c[6] * w;
    let root = (b + (b * b + 4.0 * budget * a).sqrt()) / (2.0 * budget);
    let cap = u64::from(u32::MAX) + 1;
    if !(root.is_finite() && root < cap as f64) {
        return cap;
    }
    let mut r = (root.ceil() as u64).clamp(1, cap);
    let fits = |r: u64| t.bound(w / r as f64, h / r as f64) <= budget;
    // The closed form is exact up to rounding: settle the last unit by evaluation.
    while r > 1 && fits(r - 1) {
        r -= 1;
    }
    while r < cap && !fits(r) {
        r += 1;
    }
    r
}

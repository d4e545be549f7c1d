//! The intersection volume alone, from the lines of one axis, optionally to an estimated
//! relative tolerance: our addition to the uniform sampling of Wang, Faure & Pai 2012,
//! section 2.2 (Eq. 1 on one axis).
//!
//! **Why one axis.** The paper casts lines along three axes because the `k` component of every
//! vertex gradient (Eq. 2) comes from the lines along axis `k`. The volume needs one: each axis
//! estimate is Eq. 1 on its own. On the tumbling bunnies their mean is barely more accurate than
//! the one-axis estimate at the same `R` (docs/benchmarks.md), while the midpoint rule's error
//! falls about as `R⁻²` with the lines per side `R`. So the same number of lines cast along one
//! axis, `√3 R` per side, gives a smaller error than `R` per side on three axes
//! (docs/benchmarks.md measures both).
//!
//! **Which axis.** The one along which the sampled box is longest: its face across the lines is
//! the smallest, so its cells are. It costs nothing to pick; the bench's one-axis rows measure
//! the error it gives.
//!
//! **Pilot.** With `pilot > 0`, a first pass of `pilot × pilot` lines on each axis finds the
//! box of the intersection (as [`super::Sampling::Fitted`] does, computing
//! nothing else), and the one-axis pass samples that box. Not smooth under motion: for queries.
//!
//! **Tolerance.** With a relative tolerance `t`, after each pass the sampler's own estimate
//! `σ` of its error (module `error_estimate`, one standard deviation) is checked against
//! `2σ ≤ t V`; while it fails, the pass is cast again with `R` scaled by `√(2σ / t V)` (the
//! `R⁻²` law, with 10 % to spare, and at least one more line per side), within the ray limit.
//! It is an estimate, not a bound: [`VolumeOnly::tolerance_met`] reports the test, and the
//! bench reports how often the actual error exceeded `t`.

use super::VolumeError;
use super::uniform::{Pass, Sampling, UniformOptions, UniformVolume};
use crate::pose::DPose;

/// Options of [`UniformVolume::volume_only`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VolumeOnlyOptions {
    /// Lines per side, on each of the three axes, of the first pass that finds the
    /// intersection's box; `0` samples the whole overlap box.
    pub pilot: u32,
    /// Lines per side of the (first) one-axis pass.
    pub resolution: u32,
    /// When set, the one-axis pass is repeated at finer resolutions until twice its estimated
    /// error is at most this fraction of its volume (see the module documentation).
    pub relative_tolerance: Option<f64>,
    /// Refuse a query whose pilot and first one-axis pass need more lines than this; a finer
    /// pass that would take the total beyond it is not cast (the tolerance is then reported as
    /// not met).
    pub max_rays: u64,
}

impl Default for VolumeOnlyOptions {
    /// No pilot (on the bunny bench it did not pay for its lines), 32 lines per side on the one
    /// axis, no tolerance, at most 2²⁴ lines.
    fn default() -> Self {
        Self {
            pilot: 0,
            resolution: 32,
            relative_tolerance: None,
            max_rays: 1 << 24,
        }
    }
}

/// The volume of [`UniformVolume::volume_only`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VolumeOnly {
    /// The Eq. 1 estimate of the last pass.
    pub volume: f64,
    /// The axis its lines ran along (0 when the bounding boxes do not overlap and nothing was
    /// cast).
    pub axis: usize,
    /// Its lines per side.
    pub resolution: u32,
    /// Its estimated error (one standard deviation; an estimate, not a bound).
    pub estimated_error: f64,
    /// Lines cast over all passes.
    pub ray_count: usize,
    /// One-axis passes cast.
    pub passes: u32,
    /// Whether twice the estimated error is within the relative tolerance (`None` when none
    /// was asked for).
    pub tolerance_met: Option<bool>,
}

/// Most one-axis passes a tolerance may cause.
const MAX_PASSES: u32 = 8;

impl UniformVolume<'_> {
    /// The sampled intersection volume of A and B (B placed in A's frame by `b_to_a`) without
    /// its gradient, from the lines of one axis (see the module documentation). Fails on a zero
    /// resolution, a tolerance that is not positive and finite, a non-finite pose, or a first
    /// pass that needs more lines than `options.max_rays`.
    pub fn volume_only(
        &self,
        b_to_a: &DPose,
        options: &VolumeOnlyOptions,
    ) -> Result<VolumeOnly, VolumeError> {
        if options.resolution == 0 {
            return Err(VolumeError::ZeroResolution);
        }
        if let Some(t) = options.relative_tolerance
            && !(t.is_finite() && t > 0.0)
        {
            return Err(VolumeError::InvalidTolerance(t));
        }
        self.with_b_placed(b_to_a, |mb| {
            let Some((lo, hi)) = self.overlap_box(mb) else {
                return Ok(VolumeOnly {
                    volume: 0.0,
                    axis: 0,
                    resolution: options.resolution,
                    estimated_error: 0.0,
                    ray_count: 0,
                    passes: 0,
                    tolerance_met: options.relative_tolerance.map(|_| true),
                });
            };
            let ((lo, hi), mut rays) = if options.pilot > 0 {
                self.fitted_box(mb, (lo, hi), options.pilot, options.max_rays)?
            } else {
                ((lo, hi), 0)
            };
            // The longest side of the sampled box (the lowest such axis on a tie).
            let size = hi - lo;
            let axis = (0..3)
                .reduce(|a, b| if size[b] > size[a] { b } else { a })
                .unwrap_or(0);
            let mut r = options.resolution;
            let mut passes = 0;
            loop {
                let pass = UniformOptions {
                    sampling: Sampling::Resolution(r),
                    collect_points: false,
                    max_rays: options.max_rays.saturating_sub(rays as u64),
                    ..UniformOptions::default()
                };
                let (result, _) = self.sample_box(mb, lo, hi, &pass, Pass::one_axis(axis))?;
                rays += result.ray_count;
                passes += 1;
                let volume = result.axis_volumes[axis];
                let error = result.estimated_axis_error.map_or(0.0, |e| e[axis]);
                let done = |met| VolumeOnly {
                    volume,
                    axis,
                    resolution: r,
                    estimated_error: error,
                    ray_count: rays,
                    passes,
                    tolerance_met: met,
                };
                let Some(t) = options.relative_tolerance else {
                    return Ok(done(None));
                };
                let target = t * volume;
                if 2.0 * error <= target {
                    return Ok(done(Some(true)));
                }
                let scale = if target > 0.0 {
                    1.1 * (2.0 * error / target).sqrt()
                } else {
                    2.0
                };
                let next = (f64::from(r) * scale).ceil().min(f64::from(u32::MAX)) as u32;
                let next = next.max(r.saturating_add(1));
                let next_rays = u64::from(next) * u64::from(next);
                if passes >= MAX_PASSES || next_rays > options.max_rays.saturating_sub(rays as u64)
                {
                    return Ok(done(Some(false)));
                }
                r = next;
            }
        })?
    }
}

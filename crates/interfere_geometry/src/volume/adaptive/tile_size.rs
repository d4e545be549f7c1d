//! Optimal tile size of an EBPI pixel (Wang, Faure & Pai 2012, section 4.3, Eq. 10 and 11):
//! maximize the tile area `w h` subject to `w ≤ W`, `h ≤ H` and `Δ(w, h) ≤ Δ̄`.
//!
//! The aspect ratio is fixed by Eq. 11, `γ = w / h = Σ l_x (α + d) / Σ l_y (α + d)`. Along
//! `w = γ h` every term of Eq. 9 is proportional to `h²` or `h`, so `Δ(γ h, h) = A h² + B h`
//! with `A, B ≥ 0` and the constraint is solved in closed form. When that tile is wider or
//! taller than the pixel, the offending side is clamped to the pixel and the other side is
//! grown along the active constraint, a 1-D convex root (Newton's method safeguarded by
//! bisection). The pixel is then split into `⌈W / w⌉ × ⌈H / h⌉` tiles; since Eq. 9 is not
//! monotone in each side alone, the bound is re-evaluated at the actual tile size and the
//! counts are raised until it holds.

use super::ebpi::Texel;

/// Most tiles per side of one pixel (keeps counts finite for absurd tolerances).
pub(crate) const MAX_SPLIT: u64 = 1 << 16;

/// How a pixel is tiled.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct TilePlan {
    /// Tiles along `u` and `v`.
    pub n: [u64; 2],
    /// `Δ` of Eq. 9 at the actual tile size.
    pub bound: f64,
}

impl TilePlan {
    /// Rays (tiles) of the plan.
    pub fn rays(&self) -> u64 {
        self.n[0] * self.n[1]
    }
}

/// The tiling of a pixel of size `size` with channels `t` that meets the error budget `budget`
/// (Eq. 10) with the fewest tiles this method finds.
pub(crate) fn plan(t: &Texel, size: [f64; 2], budget: f64) -> TilePlan {
    let [ww, hh] = size;
    if t.is_empty() || t.bound(ww, hh) <= budget {
        return TilePlan {
            n: [1, 1],
            bound: t.bound(ww, hh).max(0.0),
        };
    }
    let (w, h) = optimal_size(t, ww, hh, budget);
    let mut n = [split(ww, w), split(hh, h)];
    let mut bound = t.bound(ww / n[0] as f64, hh / n[1] as f64);
    let mut turn = 0;
    while bound > budget && (n[0] < MAX_SPLIT || n[1] < MAX_SPLIT) {
        // Raise the count of the side whose halving helps more, alternating on ties.
        let bu = t.bound(ww / (n[0] + 1) as f64, hh / n[1] as f64);
        let bv = t.bound(ww / n[0] as f64, hh / (n[1] + 1) as f64);
        let grow_u = if n[0] >= MAX_SPLIT {
            false
        } else if n[1] >= MAX_SPLIT {
            true
        } else if bu != bv {
            bu < bv
        } else {
            turn % 2 == 0
        };
        turn += 1;
        if grow_u {
            n[0] = (n[0] + n[0].div_ceil(8)).min(MAX_SPLIT);
        } else {
            n[1] = (n[1] + n[1].div_ceil(8)).min(MAX_SPLIT);
        }
        bound = t.bound(ww / n[0] as f64, hh / n[1] as f64);
    }
    TilePlan { n, bound }
}

fn split(size: f64, tile: f64) -> u64 {
    let r = size / tile;
    if !r.is_finite() {
        return MAX_SPLIT;
    }
    // A hair of slack so that an exact fit does not round up to one more tile.
    ((r * (1.0 - 1e-12)).ceil() as u64).clamp(1, MAX_SPLIT)
}

/// The continuous optimum `(w, h)` of Eq. 10 with the aspect ratio of Eq. 11.
pub(crate) fn optimal_size(t: &Texel, ww: f64, hh: f64, budget: f64) -> (f64, f64) {
    let c = &t.c;
    let [gx, gy] = t.aspect;
    let gamma = if gx > 0.0 && gy > 0.0 {
        gx / gy
    } else if gx > 0.0 {
        f64::INFINITY
    } else if gy > 0.0 {
        0.0
    } else {
        ww / hh
    };
    // The largest point on the ray w = γ h inside the box [0, W] × [0, H]. An aspect of 0
    // (all edges along v) or ∞ (all along u) gives full-height or full-width tiles.
    let (w0, h0) = if gamma == 0.0 {
        (0.0, hh)
    } else if gamma.is_infinite() {
        (ww, 0.0)
    } else {
        let a = c[0] * gamma * gamma + c[1] + c[2] * gamma + c[3] / gamma + c[4] * gamma.powi(3);
        let b = c[5] + c[6] * gamma;
        let h = root_quadratic(a, b, budget).min(hh).min(ww / gamma);
        (gamma * h, h)
    };
    // Grow the side that did not hit the pixel boundary, along Δ(w, h) = Δ̄.
    if h0 >= hh * (1.0 - 1e-12) && w0 < ww {
        let w = grow(|w| t.bound(w, hh) - budget, w0, ww);
        (w, hh)
    } else if w0 >= ww * (1.0 - 1e-12) && h0 < hh {
        let h = grow(|h| t.bound(ww, h) - budget, h0, hh);
        (ww, h)
    } else {
        (w0.max(ww * 1e-12), h0.max(hh * 1e-12))
    }
}

/// The positive root of `a x² + b x = c` (`a, b ≥ 0`, `c > 0`), infinite when `a = b = 0`.
fn root_quadratic(a: f64, b: f64, c: f64) -> f64 {
    let disc = (b * b + 4.0 * a * c).sqrt();
    if b + disc == 0.0 {
        return f64::INFINITY;
    }
    2.0 * c / (b + disc)
}

/// The largest `x` in `[lo, hi]` with `f(x) ≤ 0`, for `f` convex on `(0, hi]`, `f(hi) > 0` and
/// (when `lo > 0`) `f(lo) ≤ 0`: Newton steps from `hi` downward, kept inside the bracket by
/// bisection. Returns `lo` when it does not bracket a root.
fn grow(f: impl Fn(f64) -> f64, lo: f64, hi: f64) -> f64 {
    let mut a = lo.max(hi * 1e-12);
    if f(a) > 0.0 {
        return a;
    }
    let mut b = hi;
    let mut x = hi;
    for _ in 0..100 {
        let fx = f(x);
        if fx <= 0.0 {
            a = x;
        } else {
            b = x;
        }
        if b - a <= 1e-9 * hi {
            break;
        }
        let dx = 1e-7 * hi;
        let slope = (f(x) - f(x - dx)) / dx;
        let newton = x - fx / slope;
        x = if slope.is_finite() && slope > 0.0 && newton > a && newton < b {
            newton
        } else {
            0.5 * (a + b)
        };
    }
    a
}

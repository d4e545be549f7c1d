//! The part of a cylinder below a plane: its volume and the moments of the plane's section, in
//! the cylinder's frame (axis Y, half height `L`, radius `r`; plane `n · x ≤ d`, `n` unit).
//!
//! Write `n = n_y ŷ + s ê` (`s ≥ 0`, `ê ⊥ ŷ`). The slice of the cylinder at height `y` is the
//! disk of radius `r`, cut by the chord at `w = ê·x = δ(y) = (d − n_y y)/s`; the part below is a
//! circular segment of area `A(δ) = r²(θ − sin θ cos θ)` with `δ = −r cos θ`, `θ ∈ [0, π]`. So
//! `V = ∫_{−L}^{L} A(δ(y)) dy`: `πr²` times the length where `δ ≥ r`, plus the integral over the
//! `y`-interval where `|δ| < r`, where the plane crosses the side (the end caps are cut wherever
//! that interval reaches `±L`). In closed form, with `F(δ) = r²δ acos(−δ/r) + √(r²−δ²)(2r²+δ²)/3`
//! the antiderivative of `A`, `V = (s/n_y)[F(δ(−L)) − F(δ(L))]` — but that difference loses
//! every digit when the cylinder lies almost flat (`n_y → 0`, the interval of `δ` shrinks to a
//! point) and near tangency. The integral is therefore evaluated in the angle: on
//! `θ ∈ [θ₁, θ₂]`, `y = (d + s r cos θ)/n_y` and `dy = −(s r/n_y) sin θ dθ`, and the integrand
//! is an entire function of `θ`, so 16-point Gauss–Legendre in `θ` is exact to rounding (the
//! remainder term is below `1e-30` relative on any sub-interval of `[0, π]`). The singular
//! factor `1/n_y` cancels analytically: with `θ_m` the mid-angle, `sin(Δθ/2) = X =
//! −n_y Δy/(2 s r sin θ_m)`, and the weights become `w_i sin θ_i · asinc(X) · Δy/(2 sin θ_m)`
//! (`asinc x = asin x / x`), the nodes' heights `y_i − y₁ = sin((θ_i+θ₁)/2) sinc(z_i)
//! (1+ξ_i) asinc(X) Δy/(2 sin θ_m)`, `z_i = (Δθ/4)(1+ξ_i)` — regular at `n_y = 0`, where they
//! reduce to plain Gauss–Legendre in `y`. The closed form `F` is kept as a test oracle where it
//! is well conditioned.
//!
//! The section `R` of the plane is the union of the slices' chords: at height `y`, the segment
//! of half length `r sin θ` through `P(y) = δ ê + y ŷ` along `v̂ = ŷ × ê`; on the plane
//! `dA = dv dy / s`, which gives its area, first and second moments from the same nodes.

use super::region::{Moments, outer};
use glam::DVec3;
use std::f64::consts::PI;
use std::sync::OnceLock;

const GL_POINTS: usize = 16;

/// Gauss–Legendre nodes and weights on `[-1, 1]` (Newton on `P_16`, to rounding).
fn gauss_legendre() -> &'static [(f64, f64); GL_POINTS] {
    static TABLE: OnceLock<[(f64, f64); GL_POINTS]> = OnceLock::new();
    TABLE.get_or_init(|| {
        let n = GL_POINTS;
        let mut out = [(0.0, 0.0); GL_POINTS];
        for (i, slot) in out.iter_mut().enumerate() {
            let mut x = (PI * (i as f64 + 0.75) / (n as f64 + 0.5)).cos();
            let mut dp = 1.0;
            for _ in 0..100 {
                let (mut p0, mut p1) = (1.0, x);
                for k in 2..=n {
                    let k = k as f64;
                    let p2 = ((2.0 * k - 1.0) * x * p1 - (k - 1.0) * p0) / k;
                    p0 = p1;
                    p1 = p2;
                }
                dp = n as f64 * (x * p1 - p0) / (x * x - 1.0);
                let dx = p1 / dp;
                x -= dx;
                if dx.abs() < 1e-16 {
                    break;
                }
            }
            *slot = (x, 2.0 / ((1.0 - x * x) * dp * dp));
        }
        out
    })
}

/// `x − sin x`, without cancellation for small `x`.
pub(crate) fn x_minus_sin(x: f64) -> f64 {
    if x.abs() < 0.25 {
        let x2 = x * x;
        // x³/3! − x⁵/5! + x⁷/7! − x⁹/9! + x¹¹/11!
        x * x2
            * (1.0 / 6.0
                - x2 * (1.0 / 120.0
                    - x2 * (1.0 / 5040.0 - x2 * (1.0 / 362_880.0 - x2 / 39_916_800.0))))
    } else {
        x - x.sin()
    }
}

fn asinc(x: f64) -> f64 {
    if x.abs() < 1e-4 {
        1.0 + x * x / 6.0 + 3.0 * x.powi(4) / 40.0
    } else {
        x.asin() / x
    }
}

fn sinc(x: f64) -> f64 {
    if x.abs() < 1e-4 {
        1.0 - x * x / 6.0
    } else {
        x.sin() / x
    }
}

/// The part of the cylinder below the plane: volume, and the raw moments (about the local
/// origin) of the plane's section inside the cylinder.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CylinderCut {
    pub volume: f64,
    pub section: Moments,
}

/// See the module documentation. `n` must be a unit vector.
pub(crate) fn cylinder_below_plane(r: f64, l: f64, n: DVec3, d: f64) -> CylinderCut {
    let disk = PI * r * r;
    let ny = n.y;
    let perp = DVec3::new(n.x, 0.0, n.z);
    let s = perp.length();
    let mut out = CylinderCut::default();
    if s <= 1e-12 {
        // The plane is perpendicular to the axis (to within a tilt of 1e-12, which moves the
        // volume by less than 1e-12 πr³): y ≤ y0 (n_y > 0) or y ≥ y0 (n_y < 0).
        let y0 = d / ny;
        let len = if ny > 0.0 { y0 + l } else { l - y0 };
        out.volume = disk * len.clamp(0.0, 2.0 * l);
        if y0 > -l && y0 < l {
            let p = DVec3::new(0.0, y0, 0.0);
            let lateral = disk * r * r / 4.0;
            out.section = Moments {
                area: disk,
                first: p * disk,
                second: outer(p, p) * disk
                    + outer(DVec3::X, DVec3::X) * lateral
                    + outer(DVec3::Z, DVec3::Z) * lateral,
            };
        }
        return out;
    }
    let e = perp / s;
    let vhat = DVec3::Y.cross(e);
    let delta = |y: f64| (d - ny * y) / s;
    // The y-interval where the plane crosses the side, and the length where the slice is full.
    let (full_len, cross) = if ny == 0.0 {
        let dl = d / s;
        if dl >= r {
            (2.0 * l, None)
        } else if dl <= -r {
            (0.0, None)
        } else {
            (0.0, Some((-l, l)))
        }
    } else {
        let y_full = (d - s * r) / ny; // δ = r
        let y_empty = (d + s * r) / ny; // δ = −r
        let full_len = if ny > 0.0 {
            (y_full.min(l) + l).max(0.0)
        } else {
            (l - y_full.max(-l)).max(0.0)
        };
        let (lo, hi) = if y_full < y_empty {
            (y_full, y_empty)
        } else {
            (y_empty, y_full)
        };
        let (lo, hi) = (lo.max(-l), hi.min(l));
        (full_len.min(2.0 * l), (hi > lo).then_some((lo, hi)))
    };
    out.volume = disk * full_len;
    let Some((y1, y2)) = cross else {
        return out;
    };
    let theta = |y: f64| {
        let dl = delta(y).clamp(-r, r);
        ((r - dl) * (r + dl)).max(0.0).sqrt().atan2(-dl)
    };
    let (t1, t2) = (theta(y1), theta(y2));
    let tm = 0.5 * (t1 + t2);
    let sm = tm.sin();
    if sm.is_nan() || sm <= 0.0 {
        return out;
    }
    let dy = y2 - y1;
    let x = (-ny * dy / (2.0 * s * r * sm)).clamp(-1.0, 1.0);
    let dtheta = 2.0 * x.asin();
    let t_start = tm - 0.5 * dtheta;
    let k = asinc(x) * dy / (2.0 * sm);
    let mut volume = 0.0;
    let mut sec = Moments::default();
    for &(xi, w) in gauss_legendre() {
        let th = tm + 0.5 * dtheta * xi;
        let (sin_t, cos_t) = th.sin_cos();
        let weight = w * sin_t * k;
        let z = 0.25 * dtheta * (1.0 + xi);
        let y = y1 + (0.5 * (th + t_start)).sin() * sinc(z) * (1.0 + xi) * k;
        volume += weight * 0.5 * r * r * x_minus_sin(2.0 * th);
        let half = r * sin_t;
        let p = e * (-r * cos_t) + DVec3::Y * y;
        let a = 2.0 * half * weight / s;
        sec.area += a;
        sec.first += p * a;
        sec.second += outer(p, p) * a + outer(vhat, vhat) * (2.0 * half.powi(3) / 3.0 * weight / s);
    }
    out.volume += volume;
    out.section = sec;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gauss_legendre_integrates_polynomials_of_degree_31() {
        for deg in [0, 1, 2, 7, 30, 31] {
            let got: f64 = gauss_legendre().iter().map(|&(x, w)| w * x.powi(deg)).sum();
            let want = if deg % 2 == 1 {
                0.0
            } else {
                2.0 / (deg as f64 + 1.0)
            };
            assert!((got - want).abs() < 1e-14, "degree {deg}: {got} vs {want}");
        }
    }

    #[test]
    fn x_minus_sin_is_continuous_and_accurate() {
        for x in [1e-8, 1e-3, 0.1, 0.2499999, 0.25, 0.3, 1.0, 3.0] {
            // Reference by the series to many terms in f64 (well conditioned: all terms of
            // alternating decreasing size for |x| <= 3).
            let mut term: f64 = x * x * x / 6.0;
            let mut sum = 0.0;
            let mut k = 3.0;
            while term.abs() > 1e-40 {
                sum += term;
                term *= -x * x / ((k + 1.0) * (k + 2.0));
                k += 2.0;
            }
            assert!(
                (x_minus_sin(x) - sum).abs() <= 1e-14 * sum.abs(),
                "{x}: {} vs {sum}",
                x_minus_sin(x)
            );
        }
    }
}

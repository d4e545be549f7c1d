//! Viewing-direction optimisation of the adaptive intersection volume: Wang, Faure & Pai 2012,
//! section 4.4, Eq. 12.
//!
//! Faces parallel to a sampling axis make large EBPI error bounds (their narrow/steep terms), so
//! the three orthogonal view axes `a_j = R e_j` are rotated away from the face normals of the
//! geometry in the overlap. The orientation error of Eq. 12 is
//!
//! `e(R) = Σ_i w_i Σ_j (n̂_i · a_j)⁴`,
//!
//! with `w_i` the area of triangle `i` and `n̂_i` its unit normal. For one normal,
//! `Σ_j (n̂·a_j)⁴` is 1 when `n̂` lies along an axis (the face is then parallel to the two
//! others) and `1/3` at least, reached when `n̂` lies along a diagonal `(±1, ±1, ±1)/√3` of the
//! view frame; so `e` is minimised.
//!
//! **Exact moments instead of a histogram.** The paper accumulates a cube-map histogram of the
//! area-weighted normals on the GPU. Here the sum is exact and independent of the triangle count
//! after one pass: `Σ_i w_i (n̂_i·a)⁴ = M(a, a, a, a)` with the fourth-order moment tensor
//! `M = Σ_i w_i n̂_i ⊗ n̂_i ⊗ n̂_i ⊗ n̂_i` ([`NormalMoments`]), so every evaluation of `e` and of its
//! gradient costs O(1).
//!
//! **Gradient.** For a rotation vector `ω` applied on the left, `R ← exp([ω]×) R`, each axis
//! moves by `ω × a_j`, and `∂e/∂ω = 4 Σ_j a_j × M(a_j, a_j, a_j, ·)`.
//!
//! **Optimiser.** Fletcher–Reeves conjugate gradients on the rotation (left-multiplied rotation
//! vectors, Armijo backtracking, restart to steepest descent every three steps or when the
//! direction is not a descent direction), run from a fixed set of deterministic starting
//! rotations instead of the paper's small random steps; the best end point is kept.

use glam::{DMat3, DQuat, DVec3};

/// Area-weighted fourth-order moment tensor of unit face normals: `Σ_i w_i n̂_i⊗n̂_i⊗n̂_i⊗n̂_i`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NormalMoments {
    /// `m[i][j][k][l]`, flattened as `27 i + 9 j + 3 k + l`.
    m: [f64; 81],
    /// `Σ_i w_i`.
    weight: f64,
}

impl Default for NormalMoments {
    fn default() -> Self {
        Self::new()
    }
}

impl NormalMoments {
    /// No normals.
    pub fn new() -> Self {
        Self {
            m: [0.0; 81],
            weight: 0.0,
        }
    }

    /// Adds the triangle `[p, q, r]` (counter-clockwise seen from outside): its unit normal with
    /// its area as the weight. Degenerate or non-finite triangles add nothing.
    pub fn add_triangle(&mut self, [p, q, r]: [DVec3; 3]) {
        let c = (q - p).cross(r - p);
        let len = c.length();
        if !(len.is_finite() && len > 0.0) {
            return;
        }
        self.add_normal(c / len, 0.5 * len);
    }

    /// Adds the unit normal `n` with weight `w` (ignored unless `w > 0` and both are finite;
    /// `n` is normalised).
    pub fn add_normal(&mut self, n: DVec3, w: f64) {
        let len = n.length();
        if !(w.is_finite() && w > 0.0 && len.is_finite() && len > 0.0) {
            return;
        }
        let n = n / len;
        for i in 0..3 {
            for j in 0..3 {
                for k in 0..3 {
                    for l in 0..3 {
                        self.m[27 * i + 9 * j + 3 * k + l] += w * n[i] * n[j] * n[k] * n[l];
                    }
                }
            }
        }
        self.weight += w;
    }

    /// `Σ_i w_i`: the total weight (area) added.
    pub fn weight(&self) -> f64 {
        self.weight
    }

    /// `M(a, a, a, ·)`.
    fn contract3(&self, a: DVec3) -> DVec3 {
        let mut out = DVec3::ZERO;
        for i in 0..3 {
            for j in 0..3 {
                for k in 0..3 {
                    let s = a[i] * a[j] * a[k];
                    let b = 27 * i + 9 * j + 3 * k;
                    out += s * DVec3::new(self.m[b], self.m[b + 1], self.m[b + 2]);
                }
            }
        }
        out
    }

    /// Eq. 12: `e(R) = Σ_i w_i Σ_j (n̂_i · R e_j)⁴`, for a rotation `R` whose columns are the view
    /// axes.
    pub fn energy(&self, r: &DMat3) -> f64 {
        (0..3)
            .map(|j| {
                let a = r.col(j);
                a.dot(self.contract3(a))
            })
            .sum()
    }

    /// `∂e/∂ω` at `ω = 0` for the rotations `exp([ω]×) R` (ω in the frame of the normals).
    pub fn gradient(&self, r: &DMat3) -> DVec3 {
        (0..3)
            .map(|j| {
                let a = r.col(j);
                4.0 * a.cross(self.contract3(a))
            })
            .sum()
    }

    /// Minimises [`Self::energy`] over rotations (see the module documentation); `start` is an
    /// extra starting rotation (e.g. the previous step's, for time coherency). With no weight the
    /// answer is the identity.
    pub fn optimise(&self, start: Option<DQuat>) -> ViewOptimum {
        let mut best = ViewOptimum {
            rotation: DQuat::IDENTITY,
            energy: self.energy(&DMat3::IDENTITY),
            iterations: 0,
        };
        if self.weight <= 0.0 || !self.weight.is_finite() {
            return best;
        }
        let extra = start.filter(|q| q.is_finite() && q.length() > 0.0);
        let starts = start_rotations()
            .into_iter()
            .chain(extra.map(|q| q.normalize()));
        for q0 in starts {
            let o = self.descend(q0);
            best.iterations += o.iterations;
            if o.energy < best.energy {
                best.rotation = o.rotation;
                best.energy = o.energy;
            }
        }
        best
    }

    /// Minimises [`Self::energy`] by one descent from `start` (normalised), for time coherency:
    /// the previous frame's optimum is the starting point, and the descent follows its local
    /// minimum as the geometry moves. The energy is never above that of `start`. With no
    /// weight, or a `start` that is not finite and non-zero, the answer is
    /// [`Self::optimise`]`(None)`.
    pub fn optimise_from(&self, start: DQuat) -> ViewOptimum {
        if self.weight <= 0.0
            || !self.weight.is_finite()
            || !(start.is_finite() && start.length() > 0.0)
        {
            return self.optimise(None);
        }
        self.descend(start.normalize())
    }

    /// Fletcher–Reeves conjugate gradients from `q`.
    fn descend(&self, mut q: DQuat) -> ViewOptimum {
        let scale = self.weight;
        let mut r = DMat3::from_quat(q);
        let mut e = self.energy(&r);
        let mut g = self.gradient(&r);
        let mut d = -g;
        let mut iterations = 0;
        for it in 0..MAX_ITERATIONS {
            iterations = it + 1;
            if g.length() <= 1e-12 * scale {
                break;
            }
            let slope = g.dot(d);
            if slope >= 0.0 || it % 3 == 0 {
                d = -g;
            }
            let slope = g.dot(d);
            // Armijo backtracking, the first trial step a rotation of at most 0.5 rad.
            let mut t = 0.5 / d.length();
            let mut moved = false;
            for _ in 0..60 {
                let qn = (DQuat::from_scaled_axis(d * t) * q).normalize();
                let rn = DMat3::from_quat(qn);
                let en = self.energy(&rn);
                if en <= e + 1e-4 * t * slope {
                    moved = en < e;
                    q = qn;
                    r = rn;
                    e = en;
                    break;
                }
                t *= 0.5;
            }
            if !moved {
                break;
            }
            let gn = self.gradient(&r);
            let beta = gn.length_squared() / g.length_squared();
            d = -gn + beta * d;
            g = gn;
        }
        ViewOptimum {
            rotation: q,
            energy: e,
            iterations,
        }
    }
}

/// Iteration cap of one descent.
const MAX_ITERATIONS: usize = 200;

/// The deterministic starting rotations: the identity, 45° about each axis, 60° about the body
/// diagonal, and 8 points of an additive (R3) low-discrepancy sequence through Shoemake's
/// uniform-quaternion map.
fn start_rotations() -> Vec<DQuat> {
    use std::f64::consts::{FRAC_PI_4, TAU};
    let mut out = vec![
        DQuat::IDENTITY,
        DQuat::from_rotation_x(FRAC_PI_4),
        DQuat::from_rotation_y(FRAC_PI_4),
        DQuat::from_rotation_z(FRAC_PI_4),
        DQuat::from_axis_angle(DVec3::ONE.normalize(), TAU / 6.0),
    ];
    // The plastic-number sequence (Roberts' R3).
    let g = 1.220_744_084_605_759_5_f64;
    let alpha = [1.0 / g, 1.0 / (g * g), 1.0 / (g * g * g)];
    for i in 1..=8 {
        let u = alpha.map(|a| (0.5 + a * i as f64).fract());
        let (s1, s2) = ((1.0 - u[0]).sqrt(), u[0].sqrt());
        let (t1, t2) = (TAU * u[1], TAU * u[2]);
        out.push(
            DQuat::from_xyzw(s1 * t1.sin(), s1 * t1.cos(), s2 * t2.sin(), s2 * t2.cos())
                .normalize(),
        );
    }
    out
}

/// The result of [`NormalMoments::optimise`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ViewOptimum {
    /// The view rotation: its matrix's columns are the view axes.
    pub rotation: DQuat,
    /// Eq. 12 at it (area units; divide by [`NormalMoments::weight`] for a value in `[1/3, 1]`).
    pub energy: f64,
    /// Descent iterations over all starts.
    pub iterations: usize,
}

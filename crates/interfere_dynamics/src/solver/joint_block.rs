//! Direct solve of the joints' two-sided rows, a group at a time: the bodies that two-sided joint
//! rows connect (through bodies that move) form a group, and its rows' system
//! `(J M⁻¹ Jᵀ + Γ) Δλ = −(J v + b + Γ λ)` is factored once per phase (Cholesky, dense: a ragdoll
//! or a 20-link chain is at most a few hundred rows) and solved exactly in every sweep. The
//! sweeps stay Gauss–Seidel across blocks (a group, then the one-sided joint rows, then each
//! contact), so contacts and limits still interleave with the joints; within a group, the mass
//! ratio no longer matters.
//!
//! Why: scalar Gauss–Seidel moves a load's weight up a chain one link per sweep, and with light
//! links (a 10 kg load on 0.1 kg links, mass ratio 1:100) ten sweeps at 4 substeps let a chain of
//! two links stretch without bound (measured: 18 m of joint error after 10 s). This is the
//! block (or "direct") solver that game engines use for articulated bodies in maximal
//! coordinates (Baraff 1996, "Linear-time dynamics using Lagrange multipliers", solves the same
//! system; a dense factor of a few hundred rows costs microseconds and is simpler).
//!
//! Groups larger than [`MAX_BLOCK_ROWS`] stay scalar Gauss–Seidel. Redundant rows (a loop of
//! joints, rows along locked axes) make the system singular; a relative regularization of
//! [`REGULARIZATION`] on the diagonal keeps the factor defined and gives the least-squares
//! impulse.

use super::SBody;
use super::joint_rows::JointRow;
use super::sleeping::Islands;
use interfere_geometry::glam::DVec3;

/// Groups with more rows are left to scalar Gauss–Seidel.
pub(super) const MAX_BLOCK_ROWS: usize = 384;
const REGULARIZATION: f64 = 1e-10;

/// One group: its rows (indices into the joint rows) and the factor of its system.
#[derive(Clone, Debug, Default)]
pub(super) struct Block {
    rows: Vec<usize>,
    /// Lower Cholesky factor, row-major `n × n`.
    factor: Vec<f64>,
    rhs: Vec<f64>,
    /// The group's one-sided rows (limits, motors), solved in the group's constrained space.
    coupled: Vec<Coupled>,
}

/// A one-sided row on a group's bodies, updated so that the group's two-sided rows stay solved:
/// its impulse `d` comes with `−w d` on the group's rows (`w = K_BB⁻¹ K_Br`), and its effective
/// mass is the Schur complement `K_rr − K_rB w`. A door's limit then stops the door in one
/// update; as a separate row it took a few percent of the door's inertia per sweep (the hinge's
/// point rows carry the rest) and let it through by 0.04 rad at 20 rad/s.
#[derive(Clone, Debug)]
struct Coupled {
    row: usize,
    w: Vec<f64>,
    /// `1 / (K_rr + γ − K_rB w)`, or 0 when the group's rows determine the row already.
    eff: f64,
}

pub(super) fn moves(b: &SBody) -> bool {
    b.inv_mass != DVec3::ZERO
        || b.inv_inertia.x_axis != DVec3::ZERO
        || b.inv_inertia.y_axis != DVec3::ZERO
        || b.inv_inertia.z_axis != DVec3::ZERO
}

/// Finds the groups of the two-sided rows among `rows`, marks them as solved in blocks and
/// factors each group's system.
pub(super) fn build_blocks(rows: &mut [JointRow], bodies: &[SBody], blocks: &mut Vec<Block>) {
    blocks.clear();
    let two_sided: Vec<usize> = (0..rows.len())
        .filter(|&i| rows[i].is_two_sided())
        .collect();
    if two_sided.is_empty() {
        return;
    }
    let one_sided: Vec<usize> = (0..rows.len())
        .filter(|&i| !rows[i].is_two_sided())
        .collect();
    let mut groups = Islands::new(bodies.len());
    for &i in &two_sided {
        let (a, b) = (rows[i].a, rows[i].b);
        if moves(&bodies[a]) && moves(&bodies[b]) {
            groups.union(a, b);
        }
    }
    // Group of a row: the root of its moving body (or bodies).
    let mut by_root: Vec<(usize, usize)> = two_sided
        .iter()
        .map(|&i| {
            let (a, b) = (rows[i].a, rows[i].b);
            let body = if moves(&bodies[a]) { a } else { b };
            (groups.find(body), i)
        })
        .collect();
    by_root.sort_unstable();
    let mut start = 0;
    while start < by_root.len() {
        let root = by_root[start].0;
        let mut end = start;
        while end < by_root.len() && by_root[end].0 == root {
            end += 1;
        }
        let members: Vec<usize> = by_root[start..end].iter().map(|&(_, i)| i).collect();
        start = end;
        if members.len() > MAX_BLOCK_ROWS {
            continue;
        }
        if let Some(mut block) = factor(&members, rows, bodies) {
            for &i in &members {
                rows[i].in_block = true;
            }
            let coupled: Vec<usize> = one_sided
                .iter()
                .copied()
                .filter(|&i| {
                    let (a, b) = (rows[i].a, rows[i].b);
                    [a, b]
                        .into_iter()
                        .any(|x| moves(&bodies[x]) && groups.find(x) == root)
                })
                .collect();
            for i in coupled {
                block.couple(i, rows, bodies);
                rows[i].in_block = true;
            }
            blocks.push(block);
        }
    }
}

/// The row's Jacobian on body `x` (linear, angular), zero when the row does not touch it.
fn jacobian(r: &JointRow, x: usize) -> (DVec3, DVec3) {
    if x == r.b {
        (r.row.lin, r.row.ang_b)
    } else if x == r.a {
        (-r.row.lin, -r.row.ang_a)
    } else {
        (DVec3::ZERO, DVec3::ZERO)
    }
}

/// `J_i M⁻¹ J_jᵀ`.
fn coupling(ri: &JointRow, rj: &JointRow, bodies: &[SBody]) -> f64 {
    let mut sum = 0.0;
    for x in [ri.a, ri.b] {
        if !(x == rj.a || x == rj.b) || !moves(&bodies[x]) {
            continue;
        }
        let (li, ai) = jacobian(ri, x);
        let (lj, aj) = jacobian(rj, x);
        sum += li.dot(bodies[x].inv_mass * lj) + ai.dot(bodies[x].inv_inertia * aj);
    }
    sum
}

fn factor(members: &[usize], rows: &[JointRow], bodies: &[SBody]) -> Option<Block> {
    let n = members.len();
    let mut k = vec![0.0; n * n];
    for (p, &i) in members.iter().enumerate() {
        let ri = &rows[i];
        for (q, &j) in members.iter().enumerate().take(p + 1) {
            k[p * n + q] = coupling(ri, &rows[j], bodies);
        }
        k[p * n + p] *= 1.0 + REGULARIZATION;
        k[p * n + p] += ri.gamma;
    }
    // In-place Cholesky of the lower triangle.
    for p in 0..n {
        for q in 0..=p {
            let mut s = k[p * n + q];
            for m in 0..q {
                s -= k[p * n + m] * k[q * n + m];
            }
            if p == q {
                if !(s > 0.0 && s.is_finite()) {
                    return None;
                }
                k[p * n + p] = s.sqrt();
            } else {
                k[p * n + q] = s / k[q * n + q];
            }
        }
    }
    Some(Block {
        rows: members.to_vec(),
        factor: k,
        rhs: vec![0.0; n],
        coupled: Vec::new(),
    })
}

impl Block {
    /// The first of the block's rows (an index into the joint rows).
    pub(super) fn first_row(&self) -> Option<usize> {
        self.rows.first().copied()
    }

    /// Adds one-sided row `i` (see [`Coupled`]): `w = K_BB⁻¹ K_Br` and the inverse of the Schur
    /// complement `K_rr − K_rB w` (plus the row's `γ`), 0 when the group's rows determine the row
    /// already.
    fn couple(&mut self, i: usize, rows: &[JointRow], bodies: &[SBody]) {
        let r = &rows[i];
        for (p, &j) in self.rows.iter().enumerate() {
            self.rhs[p] = coupling(&rows[j], r, bodies);
        }
        let k_rb = self.rhs.clone();
        self.solve_in_place();
        let w = std::mem::replace(&mut self.rhs, vec![0.0; k_rb.len()]);
        let k_rr = coupling(r, r, bodies);
        let schur = k_rr - k_rb.iter().zip(&w).map(|(k, w)| k * w).sum::<f64>();
        let eff = if schur > 1e-9 * k_rr {
            1.0 / (schur + r.gamma)
        } else {
            0.0
        };
        self.coupled.push(Coupled { row: i, w, eff });
    }

    /// Solves `L Lᵀ x = rhs` in place.
    fn solve_in_place(&mut self) {
        let n = self.rows.len();
        let (l, x) = (&self.factor, &mut self.rhs);
        for p in 0..n {
            let mut s = x[p];
            for m in 0..p {
                s -= l[p * n + m] * x[m];
            }
            x[p] = s / l[p * n + p];
        }
        for p in (0..n).rev() {
            let mut s = x[p];
            for m in p + 1..n {
                s -= l[m * n + p] * x[m];
            }
            x[p] = s / l[p * n + p];
        }
    }

    /// One exact update of the group's rows, then of its coupled rows: the velocity rows
    /// (`position` false: impulses) or the projection's (`position` true: displacements).
    pub(super) fn solve(&mut self, rows: &mut [JointRow], bodies: &mut [SBody], position: bool) {
        for (p, &i) in self.rows.iter().enumerate() {
            self.rhs[p] = -rows[i].residual(bodies, position);
        }
        self.solve_in_place();
        for (p, &i) in self.rows.iter().enumerate() {
            rows[i].add(bodies, self.rhs[p], position);
        }
        for c in &self.coupled {
            if c.eff == 0.0 {
                continue;
            }
            let r = &rows[c.row];
            let new = (r.lambda - r.residual(bodies, position) * c.eff).clamp(r.lo, r.hi);
            let d = new - r.lambda;
            rows[c.row].add(bodies, d, position);
            // The group's answer: `−w d` on its rows, which keeps them solved.
            for (p, &j) in self.rows.iter().enumerate() {
                rows[j].add(bodies, -c.w[p] * d, position);
            }
        }
    }
}

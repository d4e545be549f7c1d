//! The solver's rows for joints (`crate::joint`): each locked degree of freedom, limit and motor
//! is a scalar row `J v` with an accumulated impulse, solved in the same Gauss–Seidel sweeps as
//! the contacts (joints first, so contacts have the last word) and projected with them after the
//! positions advance (post-stabilization: the position error never feeds the velocities, so a
//! rigid joint adds no energy).
//!
//! - Rigid rows: rate target 0, impulse unbounded; their drift is projected out.
//! - Limits: one-sided rows, speculative as contacts are: a coordinate `p` below its `max` may
//!   approach it by `(max − p)` within the substep and no further (`u ≤ (max − p)/h`), so a fast
//!   door stops at its stop without a bounce and without a position correction.
//! - Compliance and position motors are implicit spring–dampers in the soft-constraint form
//!   (Catto, "Soft Step", GDC 2011): with stiffness `k`, damping `c` and substep `h`, the force
//!   `−k (C + h u⁺) − c u⁺` on the row's new rate `u⁺` is the impulse update
//!   `Δλ = −(u + b + γ λ) / (K + γ)` with `γ = 1 / (h (h k + c))` and `b = k C / (h k + c)`;
//!   stable for any stiffness, and dissipative (implicit Euler), so a spring never gains energy.
//! - Velocity motors drive the rate to the target with the impulse clamped by `max_force · h`.

use super::{Row, SBody};
use crate::body::Body;
use crate::contact::BodyId;
use crate::joint::{Joint, JointKind, JointLimit, JointMotor, JointState};
use interfere_geometry::glam::DVec3;
use std::f64::consts::PI;

/// Rows per joint at most: three linear locks, three angular locks, two limit sides, a motor.
pub(crate) const JOINT_ROWS: usize = 9;
const LIMIT_LO: usize = 6;
const LIMIT_HI: usize = 7;
const MOTOR: usize = 8;

/// A joint as the solver keeps it: the bodies, the joint, its last impulses (warm start) and
/// what it did.
#[derive(Clone, Debug)]
pub(crate) struct JointSlot {
    pub(crate) a: BodyId,
    pub(crate) b: BodyId,
    pub(crate) joint: Joint,
    pub(crate) state: JointState,
    pub(crate) warm: [f64; JOINT_ROWS],
    pub(crate) alive: bool,
    pub(crate) generation: u32,
}

impl JointSlot {
    pub(crate) fn acts(&self) -> bool {
        self.alive && !self.state.broken
    }
}

/// What a row measures (for the joint's reported force, torque and breaking).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Class {
    Linear,
    Angular,
    Motor,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct JointRow {
    pub(super) a: usize,
    pub(super) b: usize,
    joint: usize,
    slot: usize,
    class: Class,
    pub(super) row: Row,
    /// `1 / (K + γ)`.
    eff: f64,
    pub(super) gamma: f64,
    bias: f64,
    pub(super) lo: f64,
    pub(super) hi: f64,
    /// The row's position error (projection).
    error: f64,
    pub(super) lambda: f64,
    /// Solved with its group by `super::joint_block`, not row by row.
    pub(super) in_block: bool,
}

impl JointRow {
    /// A two-sided row (a lock: no limit side, no motor clamp).
    pub(super) fn is_two_sided(&self) -> bool {
        self.lo == f64::NEG_INFINITY && self.hi == f64::INFINITY
    }

    /// What an update drives to zero: `J v + b + γ λ` for the velocity rows, the position error
    /// left after the displacements so far for the projection's.
    pub(super) fn residual(&self, bodies: &[SBody], position: bool) -> f64 {
        let (a, b) = (&bodies[self.a], &bodies[self.b]);
        if position {
            self.error + self.row.rate_pos(a, b)
        } else {
            self.row.rate(a, b) + self.bias + self.gamma * self.lambda
        }
    }

    /// Adds `d` to the accumulated impulse (or, for the projection, pseudo-impulse), unclamped.
    pub(super) fn add(&mut self, bodies: &mut [SBody], d: f64, position: bool) {
        if position {
            self.row.displace(bodies, self.a, self.b, d);
        } else {
            self.row.apply(bodies, self.a, self.b, d);
        }
        self.lambda += d;
    }

    /// One Gauss–Seidel update of a row outside the groups solved in blocks: the velocity row
    /// (`position` false) or the projection's.
    pub(super) fn solve(&mut self, bodies: &mut [SBody], position: bool) {
        if self.in_block {
            return;
        }
        let eff = if position { self.row.k_inv } else { self.eff };
        let new = (self.lambda - self.residual(bodies, position) * eff).clamp(self.lo, self.hi);
        let d = new - self.lambda;
        self.add(bodies, d, position);
    }
}

/// Pushes one joint's rows (see [`build_rows`]).
struct Builder<'a> {
    out: &'a mut Vec<JointRow>,
    a: usize,
    b: usize,
    joint: usize,
    h: f64,
    position: bool,
}

impl Builder<'_> {
    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        slot: usize,
        class: Class,
        row: Row,
        error: f64,
        (lo, hi): (f64, f64),
        bias: f64,
        gamma: f64,
    ) {
        if row.k_inv == 0.0 {
            return;
        }
        self.out.push(JointRow {
            a: self.a,
            b: self.b,
            joint: self.joint,
            slot,
            class,
            row,
            eff: 1.0 / (1.0 / row.k_inv + gamma),
            gamma,
            bias,
            lo,
            hi,
            error,
            lambda: 0.0,
            in_block: false,
        });
    }

    /// A locked (two-sided) row with error `c`: rigid, or soft with (stiffness, damping).
    fn lock(&mut self, slot: usize, class: Class, row: Row, c: f64, soft: Option<(f64, f64)>) {
        let free = (f64::NEG_INFINITY, f64::INFINITY);
        match (soft, self.position) {
            (Some(_), true) => {}
            (Some((k, d)), false) => {
                let (gamma, bias) = soft_terms(k, d, c, self.h);
                self.push(slot, class, row, c, free, bias, gamma);
            }
            (None, _) => self.push(slot, class, row, c, free, 0.0, 0.0),
        }
    }

    /// The free coordinate `p`'s limit and motor, on a row whose rate is `p`'s rate.
    #[allow(clippy::too_many_arguments)]
    fn free(
        &mut self,
        class: Class,
        row: Row,
        p: f64,
        wrap: bool,
        limit: Option<JointLimit>,
        motor: Option<JointMotor>,
        soft: Option<(f64, f64)>,
    ) {
        self.free_in(
            (LIMIT_LO, LIMIT_HI),
            class,
            row,
            p,
            wrap,
            limit,
            motor,
            soft,
        );
    }

    /// [`Self::free`] with the limit's two rows in the slots `(lo, hi)` (a joint with two
    /// limited coordinates keeps their impulses apart).
    #[allow(clippy::too_many_arguments)]
    fn free_in(
        &mut self,
        (lo, hi): (usize, usize),
        class: Class,
        row: Row,
        p: f64,
        wrap: bool,
        limit: Option<JointLimit>,
        motor: Option<JointMotor>,
        soft: Option<(f64, f64)>,
    ) {
        let h = self.h;
        if let Some(l) = limit {
            for (slot, c, below) in [(lo, p - l.min, true), (hi, p - l.max, false)] {
                if !c.is_finite() {
                    continue;
                }
                let violated = if below { c < 0.0 } else { c > 0.0 };
                let side = if below {
                    (0.0, f64::INFINITY)
                } else {
                    (f64::NEG_INFINITY, 0.0)
                };
                if self.position {
                    if violated && soft.is_none() {
                        self.push(slot, class, row, c, side, 0.0, 0.0);
                    }
                } else if violated {
                    let (gamma, bias) = match soft {
                        Some((k, d)) => soft_terms(k, d, c, h),
                        None => (0.0, 0.0),
                    };
                    self.push(slot, class, row, c, side, bias, gamma);
                } else {
                    // Speculative: the coordinate may reach the limit within the substep.
                    self.push(slot, class, row, c, side, c / h, 0.0);
                }
            }
        }
        if let (Some(m), false) = (motor, self.position) {
            let max = m.max_force * h;
            let (gamma, bias) = match m.target_position {
                Some(target) => {
                    let c = if wrap {
                        wrap_angle(p - target)
                    } else {
                        p - target
                    };
                    soft_terms(m.stiffness, m.damping, c, h)
                }
                None => (0.0, 0.0),
            };
            let bias = bias - m.target_velocity;
            self.push(MOTOR, Class::Motor, row, 0.0, (-max, max), bias, gamma);
        }
    }
}

/// Builds joint `index`'s rows at the bodies' current poses: the velocity rows (`position`
/// false: locks, speculative limits, motor, soft rows) or the projection's (`position` true:
/// the rigid locks and the violated limits, with their errors).
pub(super) fn build_rows(
    slot: &JointSlot,
    index: usize,
    bodies: &[Body],
    sb: &[SBody],
    h: f64,
    position: bool,
    out: &mut Vec<JointRow>,
) {
    let (ia, ib) = (slot.a, slot.b);
    let (ba, bb) = (&bodies[ia], &bodies[ib]);
    let (sa, sbb) = (&sb[ia], &sb[ib]);
    let j = &slot.joint;
    let pa = j.frame_a.world_anchor(ba);
    let pb = j.frame_b.world_anchor(bb);
    let (ra, rb) = (pa - ba.position, pb - bb.position);
    let qa = j.frame_a.world_rotation(ba);
    let qb = j.frame_b.world_rotation(bb);
    let (ua, ub) = (qa * DVec3::X, qb * DVec3::X);
    let soft_lin = j.compliance.map(|c| (c.linear_stiffness, c.linear_damping));
    let soft_ang = j
        .compliance
        .map(|c| (c.angular_stiffness, c.angular_damping));
    let mut rows = Builder {
        out,
        a: ia,
        b: ib,
        joint: index,
        h,
        position,
    };
    let axes = [DVec3::X, DVec3::Y, DVec3::Z];
    let point_lock = |rows: &mut Builder| {
        let d = pb - pa;
        for (k, e) in axes.into_iter().enumerate() {
            let row = Row::point(e, ra, rb, sa, sbb);
            rows.lock(k, Class::Linear, row, e.dot(d), soft_lin);
        }
    };
    let angular_lock = |rows: &mut Builder| {
        let mut q = qb * qa.inverse();
        if q.w < 0.0 {
            q = -q;
        }
        let theta = q.to_scaled_axis();
        for (k, e) in axes.into_iter().enumerate() {
            let row = Row::new(DVec3::ZERO, e, e, sa, sbb);
            rows.lock(3 + k, Class::Angular, row, e.dot(theta), soft_ang);
        }
    };
    match j.kind {
        JointKind::Fixed => {
            point_lock(&mut rows);
            angular_lock(&mut rows);
        }
        JointKind::Revolute { limit, motor } => {
            point_lock(&mut rows);
            let c = ua.cross(ub);
            let (t1, t2) = ua.any_orthonormal_pair();
            for (k, t) in [t1, t2].into_iter().enumerate() {
                let row = Row::new(DVec3::ZERO, t, t, sa, sbb);
                rows.lock(3 + k, Class::Angular, row, c.dot(t), soft_ang);
            }
            if limit.is_some() || motor.is_some() {
                let (ya, yb) = (qa * DVec3::Y, qb * DVec3::Y);
                let angle = ua.dot(ya.cross(yb)).atan2(ya.dot(yb));
                let row = Row::new(DVec3::ZERO, ua, ua, sa, sbb);
                rows.free(Class::Angular, row, angle, true, limit, motor, soft_ang);
            }
        }
        JointKind::Prismatic { limit, motor } => {
            angular_lock(&mut rows);
            let d = pb - pa;
            let arm_a = pb - ba.position;
            let (t1, t2) = ua.any_orthonormal_pair();
            for (k, t) in [t1, t2].into_iter().enumerate() {
                let row = Row::point(t, arm_a, rb, sa, sbb);
                rows.lock(k, Class::Linear, row, t.dot(d), soft_lin);
            }
            if limit.is_some() || motor.is_some() {
                let row = Row::point(ua, arm_a, rb, sa, sbb);
                rows.free(Class::Linear, row, ua.dot(d), false, limit, motor, soft_lin);
            }
        }
        JointKind::Spherical {
            swing_limit,
            twist_limit,
        } => {
            point_lock(&mut rows);
            if let Some(limit) = twist_limit {
                // Twist about X: the angle of the twist part of B's frame relative to A's
                // (swing–twist decomposition, q = swing · twist in A's axes), on a row about the
                // bisector of the two X axes. The angular locks' slots (3, 4) are free here.
                let mut q = qa.inverse() * qb;
                if q.w < 0.0 {
                    q = -q;
                }
                let psi = wrap_angle(2.0 * q.x.atan2(q.w));
                if let Some(n) = (ua + ub).try_normalize() {
                    let row = Row::new(DVec3::ZERO, n, n, sa, sbb);
                    rows.free_in(
                        (3, 4),
                        Class::Angular,
                        row,
                        psi,
                        true,
                        Some(limit),
                        None,
                        soft_ang,
                    );
                }
            }
            if let Some(max) = swing_limit {
                let c = ua.cross(ub);
                let s = c.length();
                if s > 1e-12 {
                    let n = c / s;
                    let phi = s.atan2(ua.dot(ub));
                    let limit = JointLimit {
                        min: f64::NEG_INFINITY,
                        max,
                    };
                    let row = Row::new(DVec3::ZERO, n, n, sa, sbb);
                    rows.free(Class::Angular, row, phi, false, Some(limit), None, soft_ang);
                }
            }
        }
        JointKind::Distance { min, max } => {
            let d = pb - pa;
            let len = d.length();
            let n = if len > 1e-12 { d / len } else { ua };
            let row = Row::point(n, ra, rb, sa, sbb);
            if min == max {
                rows.lock(0, Class::Linear, row, len - min, soft_lin);
            } else {
                let limit = Some(JointLimit { min, max });
                rows.free(Class::Linear, row, len, false, limit, None, soft_lin);
            }
        }
    }
}

/// The soft-constraint terms `(γ, b)` of an implicit spring–damper (see the module docs).
fn soft_terms(k: f64, d: f64, c: f64, h: f64) -> (f64, f64) {
    let s = h * k + d;
    if s <= 0.0 {
        return (f64::INFINITY, 0.0);
    }
    (1.0 / (h * s), k * c / s)
}

fn wrap_angle(a: f64) -> f64 {
    let mut a = a % (2.0 * PI);
    if a > PI {
        a -= 2.0 * PI;
    } else if a <= -PI {
        a += 2.0 * PI;
    }
    a
}

/// Applies last step's impulses of each row as the initial guess.
pub(super) fn warm_start(rows: &mut [JointRow], slots: &[JointSlot], bodies: &mut [SBody]) {
    for r in rows {
        let l = slots[r.joint].warm[r.slot].clamp(r.lo, r.hi);
        if l != 0.0 {
            r.row.apply(bodies, r.a, r.b, l);
            r.lambda = l;
        }
    }
}

/// Stores each row's impulse for the next substep and the joint's force, torque and motor force
/// (impulse over `h`), and breaks the joints that exceeded their limits.
pub(super) fn finish_velocities(rows: &[JointRow], slots: &mut [JointSlot], h: f64) {
    for s in slots.iter_mut() {
        s.warm = [0.0; JOINT_ROWS];
        if s.acts() {
            s.state.force = DVec3::ZERO;
            s.state.torque = DVec3::ZERO;
            s.state.motor_force = 0.0;
        }
    }
    for r in rows {
        let s = &mut slots[r.joint];
        s.warm[r.slot] = r.lambda;
        match r.class {
            Class::Linear => s.state.force += r.row.lin * (r.lambda / h),
            Class::Angular => s.state.torque += r.row.ang_b * (r.lambda / h),
            Class::Motor => s.state.motor_force += r.lambda / h,
        }
    }
    for s in slots.iter_mut().filter(|s| s.acts()) {
        let j = &s.joint;
        if j.break_force.is_some_and(|f| s.state.force.length() > f)
            || j.break_torque.is_some_and(|t| s.state.torque.length() > t)
        {
            s.state.broken = true;
        }
    }
}

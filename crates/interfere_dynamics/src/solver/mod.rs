//! Sequential-impulse contact solver with warm starting, Coulomb friction, restitution and
//! post-stabilization (no Baumgarte term: position errors never feed the velocities).
//!
//! - Point contacts (Lin–Manocha 1996 §5: an impulse per contact): the normal impulse
//!   `λₙ ≥ 0` makes the relative normal velocity `uₙ ≥ target`, where the target is the
//!   speculative closing speed `−gap/h` for a separated contact, `0` for a touching one and the
//!   restitution bounce `−e·uₙ⁰ + (uₙ* − uₙ⁰)` when the contact approaches faster than the
//!   restitution threshold (`uₙ⁰` before and `uₙ*` after this step's external forces, so an
//!   elastic bounce does not gain the gravity impulse of the step). Friction: two tangent
//!   directions, accumulated impulse clamped to the disc `|λₜ| ≤ μ λₙ`, with the static
//!   coefficient when the tangential speed at the start of the step is below a threshold.
//! - Volume contacts (Wang–Faure–Pai 2012 §2.2 and §7, "impulse-based method with
//!   post-stabilization"): with `J = ∂V/∂q` (both bodies, angular part about each centre of
//!   mass), the impulse `−Jᵀλ`, `λ ≥ 0`, enforces `J v ≤ 0` while `V > 0`; friction acts at the
//!   contact point orthogonally to the linear gradient, clamped by `μ |∂V/∂x| λ`. A contact
//!   with `V ≤ 0` (found earlier in the step, its bodies separated since: see `crate::contact::latent`) is
//!   speculative: it enforces `V + h J v ≤ 0`, so the bodies may close the gap but not overlap
//!   again within the substep.
//! - Post-stabilization: after the positions are advanced, a projection with pseudo-impulses
//!   (displacements `Δq = M⁻¹Jᵀδ`, `δ ≥ 0`, Gauss–Seidel on the linearized constraints) removes
//!   the remaining penetration `depth − h uₙ` beyond a slop, and the remaining volume
//!   `V + h J v` (the Signorini condition `V + h J v ≤ 0`). It moves positions only, so it adds
//!   no velocity and no kinetic energy.
//!
//! Warm starting caches the accumulated normal impulse and the world-space friction impulse by
//! `(body a, body b, feature key)`; it is looked up, never iterated, so the solver is
//! deterministic. A substep with many contacts has them coloured (`colouring`: no two of a
//! colour move one body) and swept colour by colour, alternately forward and backward, on every
//! core (`sweeps`, `sweep_pool`), with the same bits for any thread count.

mod colouring;
pub(crate) mod integrator;
mod joint_block;
pub(crate) mod joint_rows;
pub(crate) mod sleeping;
mod sweep_pool;
mod sweeps;

use crate::body::Body;
use crate::contact::{BodyId, Contacts};
use interfere_geometry::glam::{DMat3, DQuat, DVec3};
use interfere_geometry::key_hash::KeyMap;
use joint_rows::{JointRow, JointSlot};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};

/// Solver parameters.
///
/// Lengths and speeds are in world units and the defaults suit metres. A scene in other units
/// sets the two slops (keep them well below the smallest clearance between parts that must
/// slide past each other) and the two speed thresholds itself: the nut-and-bolt demo, in
/// millimetres with a 0.058 mm flank play, uses slops of 0.005 mm and thresholds of 200 and
/// 10 mm/s. With the metre defaults there its volume slop (10⁻⁴ mm) let the flank contact vanish
/// every other step and the nut chattered ±0.07 mm in the play.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SolverSettings {
    /// Gauss–Seidel sweeps over the velocity constraints (at least; see
    /// `max_velocity_iterations`).
    pub velocity_iterations: u32,
    /// The most sweeps over the velocity constraints: past `velocity_iterations` the sweeps go
    /// on while one still changes a contact's velocity by more than a hundredth of what gravity
    /// adds in a substep (converged stacks; without gravity, `velocity_iterations` sweeps).
    pub max_velocity_iterations: u32,
    /// Gauss–Seidel sweeps of the position projection.
    pub position_iterations: u32,
    /// Approach speed below which restitution is ignored (contacts come to rest).
    pub restitution_threshold: f64,
    /// Tangential speed below which the static friction coefficient applies.
    pub static_friction_threshold: f64,
    /// Penetration left uncorrected by the projection (keeps resting contacts touching).
    pub linear_slop: f64,
    /// Depth of overlap left uncorrected by the projection of a volume contact: the volume slop
    /// is this depth times the contact's area `|∂V/∂x|`. It keeps resting volume contacts alive
    /// from substep to substep; with zero slop the projection leaves `V = 0` exactly, the contact
    /// vanishes every other substep and a resting box creeps (measured: 1 cm in 10 s).
    ///
    /// It must also exceed the depth error of the sampled volume and of its linearization (the
    /// projection trusts both), so it follows the ray spacing: the default, 0.1 mm, suits finely
    /// sampled contacts (the Ruina wheels' 1 mm rays, the small obstacle); scenes sampled at a
    /// few centimetres need millimetres. On a pile of 300 boxes with 2 cm rays, at 0.1 mm the
    /// projection overshot by more than the slop and lifted boxes clear of their supports; they
    /// fell back and hit, and the pile never settled (with the projection switched off it
    /// does). At 1 mm the 120 Hz pile settled (below 0.05 m/s from 7.0 s) but the 60 Hz one did
    /// not within 10 s; at 3 mm both settled (8.3 s and 7.6 s). Rerun with
    /// `PILE_BOXES=300 PILE_HEIGHT=2.6 PILE_SLOP=0.003 PILE_HZ=120 PILE_SECONDS=12 cargo test
    /// -p interfere_dynamics --release --lib -- --ignored --nocapture box_pile_repro`
    /// (`PILE_POSITER=0` switches the projection off; that test keeps 3 mm by default). The box
    /// pile example and scene, on the exact volume, keep this default (the example takes
    /// `--slop 3e-3` with `--volume uniform`).
    pub volume_slop_depth: f64,
    /// Reuse last step's impulses as the initial guess.
    pub warm_start: bool,
}

impl Default for SolverSettings {
    fn default() -> Self {
        Self {
            velocity_iterations: 10,
            max_velocity_iterations: 40,
            position_iterations: 4,
            restitution_threshold: 0.2,
            static_friction_threshold: 0.01,
            linear_slop: 1e-4,
            volume_slop_depth: 1e-4,
            warm_start: true,
        }
    }
}

/// The velocity sweeps stop (past `velocity_iterations`) once a sweep changes no contact row's
/// velocity by more than this fraction of what gravity adds in the substep. Scanned on
/// 2026-11-28: at 1/20 and 1/10 five and two of the nine ragdoll drops of `ragdoll_survey` were
/// at rest by 19 s (nine at 1/30, 1/50 and 1/100); the nut demo's frictionless nut turns 0.99
/// times in its 150 steps at 1/100 and 1.15 at 1/50; of the crate's tests, only 1/100 met
/// every single-trajectory bound (the ten-box stack, the small pile).
const CONVERGED: f64 = 1e-2;

#[derive(Clone, Copy, Debug, Default)]
struct Cached {
    /// The normal impulse.
    normal: f64,
    /// The row's scale (`|∂V/∂x|` for volume rows, 1 for point contacts).
    scale: f64,
    friction: DVec3,
}

type Key = (BodyId, BodyId, u64, u8);

/// Per-body solver state (a copy of what the iterations touch). The inverse mass is per world
/// axis (zero along a locked axis) and the inverse inertia is projected on the free rotation
/// axes (see [`Body::effective_inv_inertia_world`]), so no constraint moves a body along a
/// locked axis.
///
/// What a velocity sweep reads and writes (`v`, `w`, the inverse mass and inertia) comes first,
/// in one place.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
struct SBody {
    v: DVec3,
    w: DVec3,
    inv_mass: DVec3,
    inv_inertia: DMat3,
    dx: DVec3,
    dtheta: DVec3,
}

impl SBody {
    #[inline(always)]
    fn apply(&mut self, lin: DVec3, ang: DVec3) {
        kick(
            &mut self.v,
            &mut self.w,
            self.inv_mass,
            self.inv_inertia,
            lin,
            ang,
        );
    }
    #[inline(always)]
    fn displace(&mut self, lin: DVec3, ang: DVec3) {
        kick(
            &mut self.dx,
            &mut self.dtheta,
            self.inv_mass,
            self.inv_inertia,
            lin,
            ang,
        );
    }
}

/// Adds to a body's velocity `(v, w)` (or its displacement) what an impulse `(lin, ang)` changes
/// it by: `lin m⁻¹` and `I⁻¹ ang` (`SBody::apply`, `SBody::displace` and the sweeps'
/// `sweeps::update_contact` alike, so that they give the same bits).
#[inline(always)]
fn kick(v: &mut DVec3, w: &mut DVec3, inv_mass: DVec3, inv_inertia: DMat3, lin: DVec3, ang: DVec3) {
    *v += lin * inv_mass;
    *w += inv_inertia * ang;
}

/// One scalar constraint direction for a pair: impulse `λ` applies `(lin, ang_b)` to b and
/// `(−lin, −ang_a)` to a, where the angular parts are `r × lin` for a point row.
///
/// (Keeping `I⁻¹ ang` beside the row instead of multiplying by the inverse inertia at each
/// impulse was tried three times, in the eleventh, seventeenth and eighteenth sessions: an
/// update 11 % cheaper, but the other rounding took the 300-box pile along a trajectory with
/// 16 % more updates, settled from 7.54 s instead of 6.20 s, so its solver was no faster; the
/// tori fall asleep at the same rate either way, 38 of 40. docs/benchmarks.md, "The settled
/// pile's sweeps never converge".)
#[derive(Clone, Copy, Debug, Default)]
struct Row {
    lin: DVec3,
    ang_a: DVec3,
    ang_b: DVec3,
    k_inv: f64,
    /// `J M⁻¹ Jᵀ`, `1 / k_inv` (0 where `k_inv` is): an impulse `Δλ` changes the row's rate by
    /// `Δλ k`, which the sweeps' convergence measure takes as a product instead of dividing by
    /// `k_inv` (the divisions were a sixth of the box pile's sweep time).
    k: f64,
}

impl Row {
    fn new(lin: DVec3, ang_a: DVec3, ang_b: DVec3, a: &SBody, b: &SBody) -> Self {
        let m = a.inv_mass + b.inv_mass;
        // Uniform (nothing locked): the scalar form, as before locks existed (same bits).
        let k_lin = if m.x == m.y && m.y == m.z {
            m.x * lin.length_squared()
        } else {
            lin.dot(m * lin)
        };
        let k = k_lin + ang_a.dot(a.inv_inertia * ang_a) + ang_b.dot(b.inv_inertia * ang_b);
        // A row that locked axes leave next to no freedom (a normal along a locked axis, turned
        // by rounding) is infeasible, not stiff: `1/k` of a rounding residue displaced a body by
        // 10¹² m. `k` is compared with the row's scale with every axis free.
        let diag = |m: DMat3| m.x_axis.x.max(m.y_axis.y).max(m.z_axis.z);
        let scale = m.max_element() * lin.length_squared()
            + diag(a.inv_inertia) * ang_a.length_squared()
            + diag(b.inv_inertia) * ang_b.length_squared();
        let feasible = k > 1e-300 && k > 1e-12 * scale;
        Self {
            lin,
            ang_a,
            ang_b,
            k_inv: if feasible { 1.0 / k } else { 0.0 },
            k: if feasible { k } else { 0.0 },
        }
    }
    fn point(d: DVec3, ra: DVec3, rb: DVec3, a: &SBody, b: &SBody) -> Self {
        Self::new(d, ra.cross(d), rb.cross(d), a, b)
    }
    /// Rate of the row for the velocities (or displacements) `(v, w)` of a and of b.
    #[inline(always)]
    fn rate_of(&self, (va, wa): (DVec3, DVec3), (vb, wb): (DVec3, DVec3)) -> f64 {
        self.lin.dot(vb - va) + self.ang_b.dot(wb) - self.ang_a.dot(wa)
    }
    /// Rate of the constraint (relative velocity along the row).
    #[inline(always)]
    fn rate(&self, a: &SBody, b: &SBody) -> f64 {
        self.rate_of((a.v, a.w), (b.v, b.w))
    }
    #[inline(always)]
    fn rate_pos(&self, a: &SBody, b: &SBody) -> f64 {
        self.rate_of((a.dx, a.dtheta), (b.dx, b.dtheta))
    }
    #[inline(always)]
    fn apply(&self, bodies: &mut [SBody], ia: usize, ib: usize, l: f64) {
        bodies[ib].apply(self.lin * l, self.ang_b * l);
        bodies[ia].apply(-self.lin * l, -self.ang_a * l);
    }
    #[inline(always)]
    fn displace(&self, bodies: &mut [SBody], ia: usize, ib: usize, l: f64) {
        bodies[ib].displace(self.lin * l, self.ang_b * l);
        bodies[ia].displace(-self.lin * l, -self.ang_a * l);
    }
}

/// A contact's rows and impulses: what the sweeps read and write (the rest is its
/// [`ConstraintInfo`]).
#[derive(Clone, Copy, Debug)]
struct Constraint {
    a: usize,
    b: usize,
    /// Whether body a, and body b, moves (`joint_block::moves`): only those are written.
    moves_a: bool,
    moves_b: bool,
    /// Normal row (points: along n; volumes: along −∂V/∂q so that λ ≥ 0 pushes apart).
    normal: Row,
    tangents: [Row; 2],
    /// Target rates of the tangent rows (a hook's surface velocity; 0 otherwise).
    tangent_targets: [f64; 2],
    /// Scale from λ to the normal force magnitude used in the friction clamp.
    normal_scale: f64,
    /// `1 / normal_scale`.
    inv_normal_scale: f64,
    target: f64,
    mu: f64,
    lambda: f64,
    lambda_t: [f64; 2],
    /// Positional error to remove (penetration, or volume), before this step's motion.
    error: f64,
    slop: f64,
    delta: f64,
}

/// What the warm start needs of a contact beside its [`Constraint`].
#[derive(Clone, Copy, Debug)]
struct ConstraintInfo {
    key: Key,
    /// World directions of the tangent rows (for caching the friction impulse).
    tangent_dirs: [DVec3; 2],
}

/// The contact solver and its warm-start cache.
#[derive(Clone, Debug, Default)]
pub struct Solver {
    /// Parameters.
    pub settings: SolverSettings,
    cache: KeyMap<Key, Cached>,
    constraints: Vec<Constraint>,
    infos: Vec<ConstraintInfo>,
    colours: colouring::Colours,
    /// Threads for the contact sweeps (0 or 1: the calling thread alone); the results do not
    /// depend on it (`colouring`).
    pub(crate) threads: usize,
    pool: sweep_pool::SweepPool,
    timer: sweeps::SweepTimer,
    joint_rows: Vec<JointRow>,
    joint_blocks: Vec<joint_block::Block>,
    sbodies: Vec<SBody>,
    islands: SweepIslands,
    work: SolverWork,
}

/// What the velocity phase did since it was last asked ([`Solver::take_work`]): the measure of
/// the solver's cost that does not depend on the machine.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SolverWork {
    /// Contact constraints built (one per point contact or volume part, per substep).
    pub contacts: u64,
    /// Gauss–Seidel sweeps of the velocity phase (per substep, the most any island took).
    pub sweeps: u64,
    /// Contact updates (a contact's two friction rows and its normal row) over all sweeps.
    pub updates: u64,
}

/// The islands of a substep's velocity phase: dynamic bodies joined by contacts and joint rows
/// (static and kinematic bodies join nothing; the union–find is sleeping's
/// [`sleeping::Islands`]), numbered `0..count`, with the island of each contact constraint,
/// joint row and joint block.
#[derive(Clone, Debug, Default)]
struct SweepIslands {
    count: usize,
    contacts: Vec<usize>,
    rows: Vec<usize>,
    blocks: Vec<usize>,
    number: Vec<usize>,
    links: sleeping::Islands,
}

impl SweepIslands {
    fn build(
        &mut self,
        bodies: &[Body],
        constraints: &[Constraint],
        rows: &[JointRow],
        blocks: &[joint_block::Block],
    ) {
        let n = bodies.len();
        let links = &mut self.links;
        links.reset(n);
        let dynamic = |i: usize| bodies[i].is_dynamic();
        let pairs = constraints
            .iter()
            .map(|c| (c.a, c.b))
            .chain(rows.iter().map(|r| (r.a, r.b)));
        for (a, b) in pairs {
            if dynamic(a) && dynamic(b) {
                links.union(a, b);
            }
        }
        self.number.clear();
        self.number.resize(n, usize::MAX);
        self.count = 0;
        let mut island_of = |a: usize, b: usize| {
            let root = links.find(if dynamic(a) { a } else { b });
            if self.number[root] == usize::MAX {
                self.number[root] = self.count;
                self.count += 1;
            }
            self.number[root]
        };
        self.contacts.clear();
        self.contacts
            .extend(constraints.iter().map(|c| island_of(c.a, c.b)));
        self.rows.clear();
        self.rows.extend(rows.iter().map(|r| island_of(r.a, r.b)));
        self.blocks.clear();
        self.blocks.extend(
            blocks
                .iter()
                .map(|b| b.first_row().map_or(0, |r| self.rows[r])),
        );
        self.count = self.count.max(1);
    }
}

/// The target rate of a contact row with restitution `e`: `base` (0, or the speculative closing
/// rate), or when the contact `hits` within the substep approaching faster than `threshold`
/// (rates in the row's units: `u0` before the step's external forces, `u_now` now), the bounce
/// `−e u0` less the step's external impulse `u_now − u0`, whichever is larger. Point and volume
/// rows share it.
fn bounce_target(base: f64, hits: bool, u0: f64, u_now: f64, threshold: f64, e: f64) -> f64 {
    if hits && -u0 > threshold && e > 0.0 {
        base.max(-e * u0 + (u_now - u0))
    } else {
        base
    }
}

/// The material of the pair `(ia, ib)`: the bodies' combined one with a hook's friction and
/// restitution, and the velocity b's surface should slide at relative to a's (zero without a
/// hook).
fn pair_material(
    ba: &Body,
    bb: &Body,
    ia: usize,
    ib: usize,
    overrides: &[crate::contact::overrides::PairOverride],
) -> (crate::body::Material, DVec3) {
    let mut m = ba.material.combine(&bb.material);
    let Some(o) = crate::contact::overrides::find(overrides, ia, ib) else {
        return (m, DVec3::ZERO);
    };
    if let Some(f) = o.friction.filter(|f| f.is_finite() && *f >= 0.0) {
        m.static_friction = f;
        m.dynamic_friction = f;
    }
    if let Some(r) = o.restitution.filter(|r| r.is_finite()) {
        m.restitution = r.clamp(0.0, 1.0);
    }
    let slide = if o.a == ia {
        o.surface_velocity
    } else {
        -o.surface_velocity
    };
    (
        m,
        if slide.is_finite() {
            slide
        } else {
            DVec3::ZERO
        },
    )
}

impl Solver {
    /// A solver with the given settings and an empty cache.
    pub fn new(settings: SolverSettings) -> Self {
        Self {
            settings,
            ..Default::default()
        }
    }

    /// Forgets the warm-start impulses of body `id` (it was removed; its id may be reused).
    pub(crate) fn forget_body(&mut self, id: BodyId) {
        self.cache.retain(|k, _| k.0 != id && k.1 != id);
    }

    /// Number of constraints built in the last step.
    pub fn constraint_count(&self) -> usize {
        self.constraints.len()
    }

    /// What the velocity phase did since the last call (and starts counting afresh).
    pub(crate) fn take_work(&mut self) -> SolverWork {
        std::mem::take(&mut self.work)
    }

    /// Builds the rows of the acting joints between two bodies of which one is dynamic: the
    /// velocity rows (`position` false) or the projection's (see [`joint_rows::build_rows`]).
    fn build_joint_rows(&mut self, bodies: &[Body], joints: &[JointSlot], h: f64, position: bool) {
        self.joint_rows.clear();
        let nb = bodies.len();
        for (i, j) in joints.iter().enumerate() {
            if j.acts()
                && j.a < nb
                && j.b < nb
                && j.a != j.b
                && (bodies[j.a].is_dynamic() || bodies[j.b].is_dynamic())
            {
                joint_rows::build_rows(
                    j,
                    i,
                    bodies,
                    &self.sbodies,
                    h,
                    position,
                    &mut self.joint_rows,
                );
            }
        }
    }

    /// Velocity phase: builds the constraints for `contacts` (positions as of the start of the
    /// step), warm starts and runs the iterations on the bodies' velocities. `start_velocities`
    /// are the velocities before this step's external forces (for restitution).
    pub(crate) fn solve_velocities(
        &mut self,
        bodies: &mut [Body],
        contacts: &Contacts,
        start_velocities: &[(DVec3, DVec3)],
        h: f64,
        gravity: DVec3,
        joints: &mut [JointSlot],
    ) {
        let s = self.settings;
        self.sbodies.clear();
        self.sbodies.extend(bodies.iter().map(|b| SBody {
            inv_mass: b.effective_inv_mass(),
            inv_inertia: b.effective_inv_inertia_world(),
            v: b.linear_velocity,
            w: b.angular_velocity,
            dx: DVec3::ZERO,
            dtheta: DVec3::ZERO,
        }));
        self.constraints.clear();
        self.infos.clear();
        let nb = bodies.len();
        let valid = |a: usize, b: usize| {
            a < nb && b < nb && a != b && (bodies[a].is_dynamic() || bodies[b].is_dynamic())
        };
        for c in &contacts.points {
            let (ia, ib) = (c.body_a, c.body_b);
            if !(valid(ia, ib)
                && c.normal.is_finite()
                && c.point.is_finite()
                && c.depth.is_finite())
            {
                continue;
            }
            let Some(n) = c.normal.try_normalize() else {
                continue;
            };
            let (ba, bb) = (&bodies[ia], &bodies[ib]);
            let (ra, rb) = (c.point - ba.position, c.point - bb.position);
            let (sa, sb) = (&self.sbodies[ia], &self.sbodies[ib]);
            let normal = Row::point(n, ra, rb, sa, sb);
            let u_now = normal.rate(sa, sb);
            let (va0, wa0) = start_velocities[ia];
            let (vb0, wb0) = start_velocities[ib];
            let rel0 = vb0 + wb0.cross(rb) - va0 - wa0.cross(ra);
            let u0 = n.dot(rel0);
            let (m, slide) = pair_material(ba, bb, ia, ib, &contacts.overrides);
            let (t1, t2) = crate::contact::tangent_pair_in(n, &DMat3::from_quat(ba.orientation));
            let tangents = [
                Row::point(t1, ra, rb, sa, sb),
                Row::point(t2, ra, rb, sa, sb),
            ];
            let tangential0 = (rel0 - slide - n * n.dot(rel0 - slide)).length();
            let gap = -c.depth;
            let base = if gap > 0.0 { -gap / h } else { 0.0 };
            let hits = gap <= 0.0 || -u_now * h >= gap;
            let target = bounce_target(
                base,
                hits,
                u0,
                u_now,
                s.restitution_threshold,
                m.restitution,
            );
            let mu = m.friction_at(tangential0, s.static_friction_threshold);
            self.infos.push(ConstraintInfo {
                key: (ia, ib, c.feature, 0),
                tangent_dirs: [t1, t2],
            });
            self.constraints.push(Constraint {
                a: ia,
                b: ib,
                moves_a: joint_block::moves(sa),
                moves_b: joint_block::moves(sb),
                normal,
                tangents,
                tangent_targets: [t1.dot(slide), t2.dot(slide)],
                normal_scale: 1.0,
                inv_normal_scale: 1.0,
                target,
                mu,
                lambda: 0.0,
                lambda_t: [0.0; 2],
                error: c.depth,
                slop: s.linear_slop,
                delta: 0.0,
            });
        }
        for c in &contacts.volumes {
            let (ia, ib) = (c.body_a, c.body_b);
            if !(valid(ia, ib)
                && c.volume.is_finite()
                && c.linear.is_finite()
                && c.angular.is_finite()
                && c.point.is_finite())
            {
                continue;
            }
            let glen = c.linear.length();
            if glen <= 1e-300 {
                continue;
            }
            let (ba, bb) = (&bodies[ia], &bodies[ib]);
            // Generalized gradient about each centre of mass: τ_c = τ_p + (p − c) × f.
            let jb_ang = c.angular + (c.point - bb.position).cross(c.linear);
            let ja_ang = c.angular + (c.point - ba.position).cross(c.linear);
            let (sa, sb) = (&self.sbodies[ia], &self.sbodies[ib]);
            // Row direction −J: a positive λ reduces the volume.
            let normal = Row::new(-c.linear, -ja_ang, -jb_ang, sa, sb);
            let n = -c.linear / glen;
            let (ra, rb) = (c.point - ba.position, c.point - bb.position);
            let (va0, wa0) = start_velocities[ia];
            let (vb0, wb0) = start_velocities[ib];
            let rel0 = vb0 + wb0.cross(rb) - va0 - wa0.cross(ra);
            let (m, slide) = pair_material(ba, bb, ia, ib, &contacts.overrides);
            let rel0 = rel0 - slide;
            let (t1, t2) = crate::contact::tangent_pair_in(n, &DMat3::from_quat(ba.orientation));
            let tangents = [
                Row::point(t1, ra, rb, sa, sb),
                Row::point(t2, ra, rb, sa, sb),
            ];
            let tangential0 = (rel0 - n * n.dot(rel0)).length();
            let mu = m.friction_at(tangential0, s.static_friction_threshold);
            // The row's rate is `−dV/dt` (separation positive); over `|∂V/∂x|` it is the
            // approach speed along the gradient. Before this step's external forces (`u0`) and
            // now (`u_now`), as for point contacts: a contact that overlaps, or closes its gap
            // within the substep, approaching faster than the threshold bounces back at `e`
            // times the approach speed along the gradient (and only along it: friction and the
            // other rows are untouched), less the step's gravity impulse.
            let u_now = normal.rate(sa, sb);
            let u0 = {
                let mut a0 = *sa;
                let mut b0 = *sb;
                (a0.v, a0.w, b0.v, b0.w) = (va0, wa0, vb0, wb0);
                normal.rate(&a0, &b0)
            };
            let base = c.volume.min(0.0) / h;
            let hits = c.volume >= 0.0 || u_now * h <= c.volume;
            let threshold = s.restitution_threshold * glen;
            let target = bounce_target(base, hits, u0, u_now, threshold, m.restitution);
            self.infos.push(ConstraintInfo {
                key: (ia, ib, c.feature, 1),
                tangent_dirs: [t1, t2],
            });
            self.constraints.push(Constraint {
                a: ia,
                b: ib,
                moves_a: joint_block::moves(sa),
                moves_b: joint_block::moves(sb),
                normal,
                tangents,
                tangent_targets: [t1.dot(slide), t2.dot(slide)],
                normal_scale: glen,
                inv_normal_scale: 1.0 / glen,
                // A speculative contact (V < 0: the bodies have not met yet, or have separated
                // since the contact was found) lets the volume grow back to zero within the
                // substep and no further: `V + h J v ≤ 0`, i.e. a separation rate of at least
                // `V / h`; restitution as above.
                target,
                mu,
                lambda: 0.0,
                lambda_t: [0.0; 2],
                error: c.volume,
                slop: s.volume_slop_depth * glen,
                delta: 0.0,
            });
        }
        self.colours.build(
            &self.sbodies,
            |i| bodies[i].position,
            &mut self.constraints,
            &mut self.infos,
            self.threads,
        );
        // Joints: their rows at the start of the substep (see `joint_rows`).
        self.build_joint_rows(bodies, joints, h, false);
        if s.warm_start {
            joint_rows::warm_start(&mut self.joint_rows, joints, &mut self.sbodies);
        }
        joint_block::build_blocks(&mut self.joint_rows, &self.sbodies, &mut self.joint_blocks);
        // Warm start.
        if s.warm_start {
            for (c, info) in self.constraints.iter_mut().zip(&self.infos) {
                if let Some(cached) = self.cache.get(&info.key) {
                    // A volume row's λ scales with 1/|∂V/∂x|: a key that now names a part with
                    // a much larger gradient (contact regions appear, vanish and renumber)
                    // would get |g'|/|g| times last step's push and launch the body. The warm
                    // start is the cached λ, scaled down so that it never pushes more than
                    // twice as hard as last step (ordinary fluctuations keep it whole).
                    let ratio = (2.0 * cached.scale / c.normal_scale).min(1.0);
                    c.lambda = (cached.normal * ratio).max(0.0);
                    c.normal.apply(&mut self.sbodies, c.a, c.b, c.lambda);
                    for k in 0..2 {
                        let l = cached.friction.dot(info.tangent_dirs[k]);
                        c.lambda_t[k] = l;
                        c.tangents[k].apply(&mut self.sbodies, c.a, c.b, l);
                    }
                }
            }
        }
        // At least `velocity_iterations` sweeps; then more, up to `max_velocity_iterations`, of
        // each island (bodies joined by contacts and joints) whose last sweep still changed some
        // contact's velocity by more than the tolerance (a hundredth of what gravity adds in the
        // substep): a stack's sweeps pass a push up the stack one box per sweep, and stopped
        // early they leave the boxes with velocities the next substep's projection and landings
        // turn into energy and creep. By islands, so that a body's result never depends on an
        // unrelated one, and converged islands cost no more sweeps.
        let tolerance = CONVERGED * gravity.length() * h;
        // Nothing to solve: no sweeps (they would change nothing).
        let most = if self.constraints.is_empty() && self.joint_rows.is_empty() {
            0
        } else {
            s.max_velocity_iterations.max(s.velocity_iterations)
        };
        self.islands.build(
            bodies,
            &self.constraints,
            &self.joint_rows,
            &self.joint_blocks,
        );
        let count = self.islands.count;
        let active: Vec<AtomicBool> = (0..count).map(|_| AtomicBool::new(true)).collect();
        let mut change = vec![0.0; count];
        self.work.contacts += self.constraints.len() as u64;
        // Large problems whose colours have shares for several threads may sweep on the helpers
        // too (`sweep_pool`). Whether they pay depends on the machine and on what else runs
        // (measured: the 300-box pile's solver 1.26 times faster on two threads here, the
        // 200-mesh heap's 1.65 times slower inside the Bevy app), so the solver times both ways
        // and takes the faster (`sweeps::SweepTimer`); the bits are the same either way.
        let shareable = self.colours.any_shared();
        let pooled = shareable && self.timer.try_helpers();
        let started = std::time::Instant::now();
        let Self {
            constraints,
            sbodies,
            colours,
            islands,
            joint_rows,
            joint_blocks,
            pool,
            ..
        } = self;
        let has_joints = !(joint_rows.is_empty() && joint_blocks.is_empty());
        let mut joints_sweep = |bodies: &mut [SBody], active: &[AtomicBool]| {
            if has_joints {
                velocity_sweep_joints(joint_blocks, joint_rows, bodies, islands, active);
            }
        };
        // After `velocity_iterations` sweeps, each island goes on while its last sweep changed
        // a contact's velocity by more than the tolerance; false once none does.
        let go_on = |sweep: u32, active: &[AtomicBool], change: &[f64]| {
            if sweep < s.velocity_iterations {
                return true;
            }
            let mut any = false;
            for (on, &c) in active.iter().zip(change) {
                let still = on.load(Ordering::Relaxed) && tolerance > 0.0 && c > tolerance;
                on.store(still, Ordering::Relaxed);
                any |= still;
            }
            any
        };
        let (sweeps, updates) = if pooled {
            let job = sweep_pool::SweepJob::new(
                std::mem::take(constraints),
                sbodies,
                &islands.contacts,
                active,
                std::mem::take(colours),
            );
            let (job, counts) = pool.run(job, |runner| {
                sweep_until(most, |sweep| {
                    // The joints, then the contacts.
                    if has_joints {
                        runner.with_bodies(sbodies, &mut joints_sweep);
                    }
                    let updates = runner.sweep(&mut change, sweep % 2 == 0);
                    (updates, go_on(sweep, runner.active(), &change))
                })
            });
            (*constraints, *colours) = job.finish(sbodies);
            counts
        } else {
            sweep_until(most, |sweep| {
                // The joints, then the contacts.
                joints_sweep(sbodies, &active);
                let updates = sweeps::sweep_alone(
                    constraints,
                    colours,
                    sweep % 2 == 0,
                    sbodies,
                    &islands.contacts,
                    &active,
                    &mut change,
                );
                (updates, go_on(sweep, &active, &change))
            })
        };
        if shareable {
            self.timer.record(pooled, started.elapsed(), updates);
        }
        self.work.sweeps += sweeps;
        self.work.updates += updates;
        joint_rows::finish_velocities(&self.joint_rows, joints, h);
        self.cache.clear();
        for (c, info) in self.constraints.iter().zip(&self.infos) {
            self.cache.insert(
                info.key,
                Cached {
                    normal: c.lambda,
                    scale: c.normal_scale,
                    friction: info.tangent_dirs[0] * c.lambda_t[0]
                        + info.tangent_dirs[1] * c.lambda_t[1],
                },
            );
        }
        for (b, sb) in bodies.iter_mut().zip(&self.sbodies) {
            if b.is_dynamic() {
                b.linear_velocity = sb.v;
                b.angular_velocity = sb.w;
            }
        }
    }

    /// Position phase (post-stabilization), after the positions were advanced by `h` with the
    /// solved velocities: projects out the remaining linearized penetration and volume.
    pub(crate) fn stabilize_positions(
        &mut self,
        bodies: &mut [Body],
        h: f64,
        joints: &[JointSlot],
    ) {
        // Joints: their rigid rows and violated limits at the advanced poses.
        self.build_joint_rows(bodies, joints, h, true);
        if self.constraints.is_empty() && self.joint_rows.is_empty() {
            return;
        }
        joint_block::build_blocks(&mut self.joint_rows, &self.sbodies, &mut self.joint_blocks);
        for c in &mut self.constraints {
            // Error at the end of the step, linearized: error − h·(rate of separation).
            let u = c.normal.rate(&self.sbodies[c.a], &self.sbodies[c.b]);
            c.error -= h * u;
            c.delta = 0.0;
        }
        for _ in 0..self.settings.position_iterations {
            for c in &mut self.constraints {
                let moved = c.normal.rate_pos(&self.sbodies[c.a], &self.sbodies[c.b]);
                let remaining = c.error - c.slop - moved;
                let new_d = (c.delta + remaining * c.normal.k_inv).max(0.0);
                if new_d != c.delta {
                    c.normal
                        .displace(&mut self.sbodies, c.a, c.b, new_d - c.delta);
                }
                c.delta = new_d;
            }
        }
        // Then the joints, on their own: their groups are solved exactly, so the projection ends
        // with every joint in place. Interleaved with the contacts' sweeps, the two fought: a
        // contact pushed a ragdoll's torso out of the ground, the torso's joint group pulled it
        // back spreading the move over the limbs, the contact pushed again, and four sweeps
        // built displacements of 0.15 m and rotations of 2 rad that the linearization cannot
        // carry (the ragdoll gained 47 J in one step). With the contacts' sweeps last,
        // the joints were left a little off, the next projection pulled the bodies back into the
        // ground and a leg lying still hopped at 0.1 m/s for as long as it ran. Coupling the
        // contacts to the joint groups (a contact's push moving the whole articulation with its
        // joints held, through the Schur complement as for limits) was tried: a ragdoll lying
        // by a staircase then came to rest, but one on flat ground with no damping rocked at
        // 0.16 m/s instead of lying still; not kept.
        for _ in 0..self.settings.position_iterations {
            for block in &mut self.joint_blocks {
                block.solve(&mut self.joint_rows, &mut self.sbodies, true);
            }
            for r in &mut self.joint_rows {
                r.solve(&mut self.sbodies, true);
            }
        }
        for (b, sb) in bodies.iter_mut().zip(&self.sbodies) {
            if b.is_dynamic() {
                b.position += sb.dx;
                if sb.dtheta != DVec3::ZERO {
                    b.orientation =
                        (DQuat::from_scaled_axis(sb.dtheta) * b.orientation).normalize();
                }
            }
        }
    }
}

/// Runs `sweep(k)` for sweeps `k = 1, 2, …, most` until one says to stop (it returns its contact
/// updates and whether to go on). Returns the sweeps run and their updates: the one loop of the
/// velocity phase, whether the sweeps run on the calling thread alone or with the helpers.
fn sweep_until(most: u32, mut sweep: impl FnMut(u32) -> (u64, bool)) -> (u64, u64) {
    let (mut sweeps, mut updates) = (0, 0);
    for k in 1..=most {
        sweeps += 1;
        let (u, go_on) = sweep(k);
        updates += u;
        if !go_on {
            break;
        }
    }
    (sweeps, updates)
}

/// The joints' part of a Gauss–Seidel sweep of the velocity phase over the islands marked
/// `active`: the joint blocks, then the single joint rows. The contacts follow
/// (`sweeps::update_contact`: each contact's friction, clamped to the cone of its current normal
/// impulse, then its normal row).
fn velocity_sweep_joints(
    blocks: &mut [joint_block::Block],
    rows: &mut [JointRow],
    bodies: &mut [SBody],
    islands: &SweepIslands,
    active: &[AtomicBool],
) {
    let on = |isl: usize| active[isl].load(Ordering::Relaxed);
    for (block, &isl) in blocks.iter_mut().zip(&islands.blocks) {
        if on(isl) {
            block.solve(rows, bodies, false);
        }
    }
    for (r, &isl) in rows.iter_mut().zip(&islands.rows) {
        if on(isl) {
            r.solve(bodies, false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::LockedAxes;
    use crate::contact::VolumeContact;

    /// A volume contact whose gradient lies along a locked axis but for a rounding residue
    /// (1e-17 along a free one) is infeasible: neither the velocity phase nor the projection
    /// moves the body (before, `1/k` of the residue threw it 10¹² m), and a feasible contact
    /// beside it still works.
    #[test]
    fn rows_along_locked_axes_move_nothing() {
        let mass = crate::body::mass::MassProperties {
            volume: 0.002,
            mass: 2.0,
            center_of_mass: DVec3::ZERO,
            inertia: DMat3::from_diagonal(DVec3::splat(0.1)),
        };
        let ground = Body::fixed(DVec3::ZERO, DQuat::IDENTITY).unwrap();
        let mut body = Body::dynamic(&mass, DVec3::new(0.0, 0.0, 1.0), DQuat::IDENTITY).unwrap();
        body.set_locked_axes(LockedAxes::ROTATION | LockedAxes::TRANSLATION_X);
        let contact = |linear: DVec3, feature: u64| VolumeContact {
            body_a: 0,
            body_b: 1,
            volume: 1e-3,
            point: DVec3::new(0.0, 0.0, 1.0),
            linear,
            angular: DVec3::ZERO,
            feature,
        };
        for (linear, moves) in [
            (DVec3::new(-0.5, 1e-17, 0.0), false),
            (DVec3::new(0.0, -0.5, 0.0), true),
        ] {
            let mut bodies = vec![ground.clone(), body.clone()];
            let contacts = Contacts {
                volumes: vec![contact(linear, 1)],
                ..Default::default()
            };
            let start = vec![(DVec3::ZERO, DVec3::ZERO); 2];
            let mut solver = Solver::new(SolverSettings::default());
            solver.solve_velocities(
                &mut bodies,
                &contacts,
                &start,
                1.0 / 60.0,
                DVec3::ZERO,
                &mut [],
            );
            solver.stabilize_positions(&mut bodies, 1.0 / 60.0, &[]);
            let moved = bodies[1].position - DVec3::new(0.0, 0.0, 1.0);
            assert!(moved.is_finite(), "{moved}");
            if moves {
                // Pushed along +y, out of the volume, by a bounded step.
                assert!(moved.y > 0.0 && moved.length() < 0.1, "{moved}");
            } else {
                assert_eq!(moved, DVec3::ZERO);
                assert_eq!(bodies[1].linear_velocity, DVec3::ZERO);
            }
        }
    }
}

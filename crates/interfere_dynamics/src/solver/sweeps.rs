//! The velocity phase's contact sweeps: each contact's Gauss–Seidel update, swept on the calling
//! thread alone or, for large coloured problems (`solver::colouring`), shared with the helper
//! threads of `solver::sweep_pool`, with the same result bits for any thread count; and the
//! timer that decides which way is faster on this machine, now.

use super::colouring::Colours;
use super::{Constraint, Row, SBody, kick};
use interfere_geometry::glam::{DMat3, DVec3};
use std::sync::atomic::{AtomicBool, Ordering};

/// A contact's accumulated impulses during the sweeps: normal, and friction along its two
/// tangent rows.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Impulse {
    pub(super) normal: f64,
    pub(super) friction: [f64; 2],
}

impl Impulse {
    pub(super) fn of(c: &Constraint) -> Self {
        Self {
            normal: c.lambda,
            friction: c.lambda_t,
        }
    }

    pub(super) fn store_in(self, c: &mut Constraint) {
        c.lambda = self.normal;
        c.lambda_t = self.friction;
    }
}

/// Where the sweeps read and write the bodies' velocities.
pub(super) trait Velocities {
    /// Body `i`'s linear and angular velocity, its inverse mass (per axis) and inertia.
    fn load(&self, i: usize) -> (DVec3, DVec3, DVec3, DMat3);
    /// Sets body `i`'s velocities.
    fn store(&mut self, i: usize, v: DVec3, w: DVec3);
}

impl Velocities for [SBody] {
    #[inline(always)]
    fn load(&self, i: usize) -> (DVec3, DVec3, DVec3, DMat3) {
        let b = &self[i];
        (b.v, b.w, b.inv_mass, b.inv_inertia)
    }
    #[inline(always)]
    fn store(&mut self, i: usize, v: DVec3, w: DVec3) {
        let b = &mut self[i];
        (b.v, b.w) = (v, w);
    }
}

/// One contact's Gauss–Seidel update: its friction rows (clamped to the disc of its current
/// normal impulse), then its normal row. Returns the largest change it made to a row's velocity
/// (m/s: a volume row's rate over `|∂V/∂x|`). Only bodies that move are written.
///
/// The arithmetic is `Row::rate` and `Row::apply`'s (`Row::rate_of`, `kick`), operation for
/// operation, so the velocities are those of the sweeps before threads (the same bits for every
/// problem too small to be coloured).
#[inline(always)]
pub(super) fn update_contact<V: Velocities + ?Sized>(
    c: &Constraint,
    imp: &mut Impulse,
    bodies: &mut V,
) -> f64 {
    let (mut va, mut wa, ma, ia) = bodies.load(c.a);
    let (mut vb, mut wb, mb, ib) = bodies.load(c.b);
    // Body b gets `(lin d, ang_b d)`, a gets `(−lin d, −ang_a d)`, as in `Row::apply`.
    let apply =
        |row: &Row, d: f64, va: &mut DVec3, wa: &mut DVec3, vb: &mut DVec3, wb: &mut DVec3| {
            kick(vb, wb, mb, ib, row.lin * d, row.ang_b * d);
            kick(va, wa, ma, ia, -row.lin * d, -row.ang_a * d);
        };
    let mut most = 0.0f64;
    // Friction first, clamped by the current normal impulse. A row pair with no impulse and
    // none allowed (no normal impulse, or no friction) stays at zero: skipped, as most
    // speculative and separated parts are in a pile.
    let limit = c.mu * imp.normal * c.normal_scale;
    let old = imp.friction;
    if limit > 0.0 || old != [0.0; 2] {
        let mut new = old;
        for k in 0..2 {
            let row = &c.tangents[k];
            let u = row.rate_of((va, wa), (vb, wb));
            new[k] = old[k] - (u - c.tangent_targets[k]) * row.k_inv;
        }
        let len = (new[0] * new[0] + new[1] * new[1]).sqrt();
        if len > limit {
            let f = if len > 0.0 { limit / len } else { 0.0 };
            new = [new[0] * f, new[1] * f];
        }
        for k in 0..2 {
            let row = &c.tangents[k];
            let d = new[k] - old[k];
            apply(row, d, &mut va, &mut wa, &mut vb, &mut wb);
            most = most.max(d.abs() * row.k);
        }
        imp.friction = new;
    }
    // Normal.
    let row = &c.normal;
    let u = row.rate_of((va, wa), (vb, wb));
    let new_l = (imp.normal + (c.target - u) * row.k_inv).max(0.0);
    if new_l != imp.normal {
        let d = new_l - imp.normal;
        apply(row, d, &mut va, &mut wa, &mut vb, &mut wb);
    }
    most = most.max((new_l - imp.normal).abs() * row.k * c.inv_normal_scale);
    imp.normal = new_l;
    if c.moves_a {
        bodies.store(c.a, va, wa);
    }
    if c.moves_b {
        bodies.store(c.b, vb, wb);
    }
    most
}

/// What a share of a sweep did: the largest change of a contact row's velocity per island, and
/// the contact updates.
#[derive(Clone, Debug, Default)]
pub(super) struct Tally {
    change: Vec<f64>,
    updates: u64,
}

impl Tally {
    pub(super) fn reset(&mut self, islands: usize) {
        self.change.clear();
        self.change.resize(islands, 0.0);
        self.updates = 0;
    }

    pub(super) fn merge_into(&self, change: &mut [f64]) -> u64 {
        for (c, &x) in change.iter_mut().zip(&self.change) {
            *c = c.max(x);
        }
        self.updates
    }
}

/// Updates `constraints[range]` (contacts of inactive islands skipped) with their impulses
/// `impulses` (one per contact of the range) into `tally`.
#[inline(always)]
pub(super) fn sweep_range<V: Velocities + ?Sized>(
    constraints: &[Constraint],
    range: std::ops::Range<usize>,
    impulses: &mut [Impulse],
    bodies: &mut V,
    islands: &[usize],
    active: &[AtomicBool],
    tally: &mut Tally,
) {
    for (k, imp) in range.zip(impulses) {
        let isl = islands[k];
        if !active[isl].load(Ordering::Relaxed) {
            continue;
        }
        tally.updates += 1;
        let most = update_contact(&constraints[k], imp, bodies);
        tally.change[isl] = tally.change[isl].max(most);
    }
}

/// One sweep of all `constraints` on the calling thread, colour by colour (`backward`: the
/// colours in reverse order), each colour's contacts in their order. Sets `change[i]` to the
/// largest change of a contact row's velocity in island `i` and returns the updates.
pub(super) fn sweep_alone(
    constraints: &mut [Constraint],
    colours: &Colours,
    backward: bool,
    bodies: &mut [SBody],
    islands: &[usize],
    active: &[AtomicBool],
    change: &mut [f64],
) -> u64 {
    change.fill(0.0);
    let mut updates = 0;
    for k in colour_order(colours.count(), backward) {
        let range = colours.whole(k);
        for (c, &isl) in constraints[range.clone()].iter_mut().zip(&islands[range]) {
            if !active[isl].load(Ordering::Relaxed) {
                continue;
            }
            updates += 1;
            let mut imp = Impulse::of(c);
            let most = update_contact(c, &mut imp, bodies);
            imp.store_in(c);
            change[isl] = change[isl].max(most);
        }
    }
    updates
}

/// The colours `0..count` in the order a sweep visits them: forward, or (`backward`) in reverse.
/// Sweeps alternate (symmetric Gauss–Seidel), so that a push carried up a pile by the colours'
/// order in one sweep is carried down by the next; only the order of colours changes, so a
/// problem of one colour (too small to be coloured) is swept as before.
pub(super) fn colour_order(count: usize, backward: bool) -> impl Iterator<Item = usize> {
    (0..count).map(move |k| if backward { count - 1 - k } else { k })
}

/// Which way the contact sweeps run faster on this machine, now: on the calling thread alone or
/// with the helpers. Each way's time per contact update is kept as a running mean of its
/// substeps; the faster is used, and the other is tried again every [`SweepTimer::RETRY`]
/// substeps (what else runs on the cores changes). Only the time changes with the choice, never
/// the result.
#[derive(Clone, Debug, Default)]
pub(super) struct SweepTimer {
    /// Seconds per contact update alone and with the helpers (`None`: not timed yet).
    alone: Option<f64>,
    helped: Option<f64>,
    /// Substeps since the slower way was last tried.
    since: u32,
}

impl SweepTimer {
    /// Substeps between tries of the slower way.
    const RETRY: u32 = 16;

    /// Whether the next substep's sweeps use the helpers.
    pub(super) fn try_helpers(&mut self) -> bool {
        self.since += 1;
        match (self.alone, self.helped) {
            (_, None) => true,
            (None, _) => false,
            (Some(a), Some(h)) => {
                let faster = h < a;
                if self.since >= Self::RETRY {
                    self.since = 0;
                    !faster
                } else {
                    faster
                }
            }
        }
    }

    /// Records that a substep's sweeps (`helped` or not) took `time` for `updates` contact
    /// updates.
    pub(super) fn record(&mut self, helped: bool, time: std::time::Duration, updates: u64) {
        if updates == 0 {
            return;
        }
        let per = time.as_secs_f64() / updates as f64;
        let slot = if helped {
            &mut self.helped
        } else {
            &mut self.alone
        };
        *slot = Some(slot.map_or(per, |m| 0.5 * (m + per)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// The timer tries both ways first, then keeps the faster and tries the slower once every
    /// `RETRY` substeps, and follows a change of which is faster.
    #[test]
    fn the_sweep_timer_keeps_the_faster_way_and_retries_the_other() {
        let mut timer = SweepTimer::default();
        let ms = Duration::from_millis;
        assert!(timer.try_helpers(), "helpers tried first");
        timer.record(true, ms(1), 1000);
        assert!(!timer.try_helpers(), "then alone");
        timer.record(false, ms(3), 1000);
        let mut tries = 0;
        for _ in 0..(4 * SweepTimer::RETRY) {
            let helped = timer.try_helpers();
            tries += usize::from(!helped);
            timer.record(helped, if helped { ms(1) } else { ms(3) }, 1000);
        }
        assert_eq!(
            tries, 4,
            "alone, the slower, tried once every RETRY substeps"
        );
        // Helpers become slow: the timer moves to the calling thread alone.
        for _ in 0..(4 * SweepTimer::RETRY) {
            let helped = timer.try_helpers();
            timer.record(helped, if helped { ms(9) } else { ms(3) }, 1000);
        }
        assert!(!timer.try_helpers());
    }
}

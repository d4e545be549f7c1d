//! The depth intervals of a line inside both solids, from the line's hits with each: the sweep
//! behind Eq. 1 and Eq. 2 of Wang, Faure & Pai 2012 (section 2.2), shared by the uniform and
//! adaptive samplers and by the GPU volume's exact recasts.
//!
//! The hits of A and of B are merged by depth, with one winding count per solid; the line is
//! inside the intersection while both counts are positive. At equal depth a leaving hit comes
//! before an entering one, so surfaces that only touch make no zero-length interval. The order
//! of hits at equal depth and kind is the order of the hit lists (an unstable sort on depth and
//! kind: the same lists give the same ends).

use super::ray_bvh::LineCrossing;

/// One end of a depth interval inside both solids.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IntervalEnd {
    /// Whether the end lies on B's surface (else on A's).
    pub on_b: bool,
    /// The hit at the end (its depth is `hit.t`).
    pub hit: LineCrossing,
    /// `-1` where the line enters the intersection (a lower end `z⁻`), `+1` where it leaves
    /// (an upper end `z⁺`): the sign of the end's term in Eq. 2.
    pub sign: f64,
    /// At an upper end, the depth of the interval's lower end (the interval is `[from, hit.t]`).
    pub from: Option<f64>,
}

/// Scratch space of [`IntervalSweep::sweep`], reused from line to line.
#[derive(Clone, Debug, Default)]
pub struct IntervalSweep {
    /// (depth, entering, on B, index into its hit list).
    events: Vec<(f64, bool, bool, usize)>,
}

impl IntervalSweep {
    /// Calls `end` for every interval end of the line whose hits with A and with B are `hits_a`
    /// and `hits_b` (unsorted), in order along the line. Returns whether an interval is left
    /// open at the end of the line (only an open mesh can leave one; its lower end was
    /// reported).
    pub fn sweep(
        &mut self,
        hits_a: &[LineCrossing],
        hits_b: &[LineCrossing],
        mut end: impl FnMut(IntervalEnd),
    ) -> bool {
        let events = &mut self.events;
        events.clear();
        events.extend(
            hits_a
                .iter()
                .enumerate()
                .map(|(i, h)| (h.t, h.entering, false, i)),
        );
        events.extend(
            hits_b
                .iter()
                .enumerate()
                .map(|(i, h)| (h.t, h.entering, true, i)),
        );
        events.sort_unstable_by(|p, q| p.0.total_cmp(&q.0).then(p.1.cmp(&q.1)));
        let (mut wa, mut wb) = (0i32, 0i32);
        let mut open: Option<f64> = None;
        for &(t, entering, on_b, idx) in events.iter() {
            let step = if entering { 1 } else { -1 };
            if on_b {
                wb += step;
            } else {
                wa += step;
            }
            let inside = wa > 0 && wb > 0;
            let (sign, from) = match (open, inside) {
                (None, true) => {
                    open = Some(t);
                    (-1.0, None)
                }
                (Some(t0), false) => {
                    open = None;
                    (1.0, Some(t0))
                }
                _ => continue,
            };
            let hit = if on_b { hits_b[idx] } else { hits_a[idx] };
            end(IntervalEnd {
                on_b,
                hit,
                sign,
                from,
            });
        }
        open.is_some()
    }
}

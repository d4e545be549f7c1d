//! The colouring of a substep's contacts for the sweeps on every core (`solver::sweeps`): no two
//! contacts of one colour move the same body, so each colour can be shared out among the
//! threads with the same result bits for any thread count.
//!
//! Gauss–Seidel updates the contacts one after the other, each seeing the velocities the ones
//! before it left. Two updates that move different bodies commute exactly (each reads and
//! writes only its own two bodies' velocities; a static or kinematic body is only read), so a
//! set of contacts no two of which move a common body can be updated in any order, or at once
//! on several threads, with the same bits. The sweep visits the colours one after the other
//! (alternately forward and backward: `solver::sweeps`); within a colour the order is free, and
//! each thread takes the pairs of one slab of the moving bodies (sorted along their widest
//! spread), so that a body's velocity stays in one core's cache from colour to colour. With one
//! thread that is an ordinary sequential sweep, and with more the same sweep (the test
//! `thread_count_does_not_change_a_coloured_pile`: 1, 2 and 3 threads). This is the graph colouring
//! that rapier and avian use for their parallel solvers (and PhysX for its GPU one), here on the
//! pairs: all the parts of a pair (a volume contact's manifold) share its two bodies and stay
//! together, in their order, in one colour, so a box in a pile needs a colour per neighbour
//! instead of one per part.
//!
//! A problem with fewer than [`COLOURED_MIN`] contacts is swept in the order it was built (one
//! colour; no thread could earn its start there), so small scenes are solved as before. The
//! choice depends on the problem only, never on the thread count.

use super::{Constraint, ConstraintInfo, SBody, joint_block};
use interfere_geometry::glam::DVec3;

/// Problems with at least this many contacts are coloured (see the module documentation).
pub(super) const COLOURED_MIN: usize = 256;

/// Colours a thread shares out only when each thread gets at least this many contacts of it;
/// smaller ones the calling thread updates alone (the same bits either way).
const SHARE_MIN: usize = 48;

/// The colours a pair can take; pairs that find all of them taken by their bodies' other pairs
/// go to one last colour that a single thread sweeps in order.
const COLOURS: usize = 64;

/// The colouring of one substep's contacts: colour `k` is `constraints[starts[k]..starts[k + 1]]`,
/// and thread `t`'s share of it `splits[k][t]..splits[k][t + 1]`.
#[derive(Clone, Debug, Default)]
pub(super) struct Colours {
    starts: Vec<usize>,
    splits: Vec<usize>,
    pub(super) threads: usize,
    used: Vec<u64>,
    /// Per pair: its colour, its home body (then its sort key), its contacts.
    runs: Vec<(usize, usize, usize, usize)>,
    group: Vec<usize>,
    moving: Vec<usize>,
    /// Whether the last colour is the serial one (pairs that found every colour taken; its
    /// contacts may share bodies and one thread sweeps it in order).
    serial: bool,
    offsets: Vec<usize>,
    scratch: Vec<Constraint>,
    scratch_info: Vec<ConstraintInfo>,
}

impl Colours {
    /// The number of colours.
    pub(super) fn count(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    /// Colours `constraints` (reordering them and `infos` alike, by colour, in their order within
    /// a colour) and shares each colour among `threads`.
    pub(super) fn build(
        &mut self,
        bodies: &[SBody],
        position: impl Fn(usize) -> DVec3,
        constraints: &mut Vec<Constraint>,
        infos: &mut Vec<ConstraintInfo>,
        threads: usize,
    ) {
        let n = constraints.len();
        let t = threads.max(1);
        self.threads = t;
        self.starts.clear();
        self.splits.clear();
        self.serial = false;
        if n < COLOURED_MIN {
            self.starts.extend([0, n]);
            self.splits.push(0);
            self.splits.extend(std::iter::repeat_n(n, t));
            return;
        }
        // The pairs: runs of contacts between the same two bodies, each given the first colour
        // neither of its moving bodies has yet.
        self.used.clear();
        self.used.resize(bodies.len(), 0);
        self.runs.clear();
        let mut counts = vec![0usize; COLOURS + 1];
        let mut start = 0;
        while start < n {
            let c = &constraints[start];
            let (a, b, ma, mb) = (c.a, c.b, c.moves_a, c.moves_b);
            let mut end = start + 1;
            while end < n && constraints[end].a == a && constraints[end].b == b {
                end += 1;
            }
            let taken = if ma { self.used[a] } else { 0 } | if mb { self.used[b] } else { 0 };
            let colour = (!taken).trailing_zeros() as usize;
            if colour < COLOURS {
                if ma {
                    self.used[a] |= 1 << colour;
                }
                if mb {
                    self.used[b] |= 1 << colour;
                }
            }
            counts[colour] += end - start;
            let home = if ma { a } else { b };
            self.runs.push((colour, home, start, end));
            start = end;
        }
        // Each thread sweeps the pairs of one slab of the moving bodies (`group`), so that a
        // body's velocity stays in one core's cache from colour to colour; colours too small
        // to share, and the last (serial) one, go whole to the first thread.
        self.serial = counts[COLOURS] > 0;
        self.group_bodies(bodies, position, t);
        let shared = |colour: usize, count: usize| colour < COLOURS && count >= SHARE_MIN * t;
        // Stable counting sort by (colour, thread). Within a colour the order does not change
        // the result (see the module documentation), so the thread count may choose it.
        let mut keyed = vec![0usize; (COLOURS + 1) * t];
        for r in &mut self.runs {
            let thread = if t > 1 && shared(r.0, counts[r.0]) {
                self.group[r.1]
            } else {
                0
            };
            r.1 = r.0 * t + thread;
            keyed[r.1] += r.3 - r.2;
        }
        self.offsets.clear();
        let mut at = 0;
        for (key, &c) in keyed.iter().enumerate() {
            self.offsets.push(at);
            if key % t == 0 && counts[key / t] > 0 {
                self.starts.push(at);
            }
            at += c;
        }
        self.starts.push(n);
        for (colour, &count) in counts.iter().enumerate() {
            if count > 0 {
                // The threads' shares: where each thread's pairs start, and the colour's end.
                self.splits
                    .extend((0..t).map(|thread| self.offsets[colour * t + thread]));
                self.splits.push(self.offsets[colour * t] + count);
            }
        }
        self.scratch.clear();
        self.scratch.resize(n, constraints[0]);
        self.scratch_info.clear();
        self.scratch_info.resize(n, infos[0]);
        for &(_, key, s, e) in &self.runs {
            let o = self.offsets[key];
            self.scratch[o..o + e - s].copy_from_slice(&constraints[s..e]);
            self.scratch_info[o..o + e - s].copy_from_slice(&infos[s..e]);
            self.offsets[key] += e - s;
        }
        std::mem::swap(constraints, &mut self.scratch);
        std::mem::swap(infos, &mut self.scratch_info);
    }

    /// Sets `group[i]` for each moving body: the slab of `t` along the axis the moving bodies
    /// spread most along, each slab holding as many bodies.
    fn group_bodies(&mut self, bodies: &[SBody], position: impl Fn(usize) -> DVec3, t: usize) {
        self.group.clear();
        self.group.resize(bodies.len(), 0);
        if t <= 1 {
            return;
        }
        self.moving.clear();
        self.moving
            .extend((0..bodies.len()).filter(|&i| joint_block::moves(&bodies[i])));
        let (lo, hi) = self.moving.iter().fold(
            (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)),
            |(lo, hi), &i| (lo.min(position(i)), hi.max(position(i))),
        );
        let spread = hi - lo;
        let axis = if spread.x >= spread.y && spread.x >= spread.z {
            0
        } else if spread.y >= spread.z {
            1
        } else {
            2
        };
        // Ties (and NaN) by index, so that the slabs depend on the positions' bits only.
        self.moving.sort_by(|&i, &j| {
            position(i)[axis]
                .total_cmp(&position(j)[axis])
                .then(i.cmp(&j))
        });
        let m = self.moving.len().max(1);
        for (rank, &i) in self.moving.iter().enumerate() {
            self.group[i] = rank * t / m;
        }
    }

    /// Colour `k`'s contacts.
    pub(super) fn whole(&self, k: usize) -> std::ops::Range<usize> {
        self.starts[k]..self.starts[k + 1]
    }

    /// Thread `t`'s share of colour `k`.
    pub(super) fn range(&self, k: usize, t: usize) -> std::ops::Range<usize> {
        let base = k * (self.threads + 1);
        self.splits[base + t]..self.splits[base + t + 1]
    }

    /// Whether colour `k` is shared among several threads (else the first has it whole).
    pub(super) fn shared(&self, k: usize) -> bool {
        self.threads > 1 && self.range(k, 1).start < self.starts[k + 1]
    }

    /// Whether some colour is shared among several threads.
    pub(super) fn any_shared(&self) -> bool {
        (0..self.count()).any(|k| self.shared(k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::Row;
    use interfere_geometry::glam::DMat3;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn body(moves: bool) -> SBody {
        let m = if moves { 1.0 } else { 0.0 };
        SBody {
            v: DVec3::ZERO,
            w: DVec3::ZERO,
            inv_mass: DVec3::splat(m),
            dx: DVec3::ZERO,
            dtheta: DVec3::ZERO,
            inv_inertia: DMat3::from_diagonal(DVec3::splat(m)),
        }
    }

    fn contact(bodies: &[SBody], a: usize, b: usize, tag: f64) -> Constraint {
        Constraint {
            a,
            b,
            moves_a: joint_block::moves(&bodies[a]),
            moves_b: joint_block::moves(&bodies[b]),
            normal: Row::default(),
            tangents: [Row::default(); 2],
            tangent_targets: [0.0; 2],
            normal_scale: 1.0,
            inv_normal_scale: 1.0,
            target: tag,
            mu: 0.0,
            lambda: 0.0,
            lambda_t: [0.0; 2],
            error: 0.0,
            slop: 0.0,
            delta: 0.0,
        }
    }

    /// Random pairs (several parts each, some with a static body, a hub body in many pairs so
    /// that the 64 colours run out): every colour moves each body at most once, the pairs' parts
    /// stay together and in order, the threads' shares cover each colour exactly, and nothing is
    /// lost or duplicated, for 1 to 4 threads.
    #[test]
    fn colours_never_share_a_moving_body_and_shares_cover_them() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for round in 0..20 {
            let n = 40 + round * 7;
            let bodies: Vec<SBody> = (0..n).map(|i| body(i % 9 != 0)).collect();
            let positions: Vec<DVec3> = (0..n)
                .map(|_| DVec3::new(rng.random(), rng.random(), rng.random()))
                .collect();
            let mut built = Vec::new();
            let mut tag = 0.0;
            for _ in 0..(n * 3) {
                let a = if rng.random_bool(0.2) {
                    1
                } else {
                    rng.random_range(0..n)
                };
                let b = rng.random_range(0..n);
                if a == b || !(bodies[a].inv_mass.x > 0.0 || bodies[b].inv_mass.x > 0.0) {
                    continue;
                }
                for _ in 0..rng.random_range(1..6) {
                    tag += 1.0;
                    built.push(contact(&bodies, a.min(b), a.max(b), tag));
                }
            }
            assert!(built.len() >= COLOURED_MIN);
            for threads in 1..=4 {
                let mut constraints = built.clone();
                let mut infos: Vec<ConstraintInfo> = built
                    .iter()
                    .map(|c| ConstraintInfo {
                        key: (c.a, c.b, c.target as u64, 0),
                        tangent_dirs: [DVec3::X, DVec3::Y],
                    })
                    .collect();
                let mut colours = Colours::default();
                colours.build(
                    &bodies,
                    |i| positions[i],
                    &mut constraints,
                    &mut infos,
                    threads,
                );
                // Nothing lost, each info still beside its contact.
                let mut tags: Vec<u64> = constraints.iter().map(|c| c.target as u64).collect();
                tags.sort_unstable();
                assert_eq!(tags, (1..=built.len() as u64).collect::<Vec<_>>());
                for (c, i) in constraints.iter().zip(&infos) {
                    assert_eq!(i.key.2, c.target as u64);
                }
                // A pair's parts keep their order.
                for w in constraints.windows(2) {
                    if (w[0].a, w[0].b) == (w[1].a, w[1].b) {
                        assert!(w[0].target < w[1].target);
                    }
                }
                let count = colours.count();
                assert_eq!(colours.starts[0], 0);
                assert_eq!(colours.starts[count], constraints.len());
                for k in 0..count {
                    let whole = colours.starts[k]..colours.starts[k + 1];
                    let mut at = whole.start;
                    for t in 0..threads {
                        let r = colours.range(k, t);
                        assert_eq!(r.start, at, "shares of colour {k} are contiguous");
                        at = r.end;
                    }
                    assert_eq!(at, whole.end);
                    // The last colour may be the serial one (pairs that found the 64 taken).
                    let serial = colours.serial && k + 1 == count;
                    let mut seen = std::collections::HashMap::new();
                    for (i, c) in constraints[whole.clone()].iter().enumerate() {
                        for x in [c.a, c.b] {
                            if joint_block::moves(&bodies[x]) {
                                let pair = (c.a, c.b);
                                let first = *seen.entry(x).or_insert((pair, i));
                                assert!(
                                    serial || first.0 == pair,
                                    "colour {k}: body {x} moved by two pairs"
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}

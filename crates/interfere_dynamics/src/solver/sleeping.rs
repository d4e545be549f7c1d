//! Sleeping, by islands (as Box2D, Bullet, rapier and avian do): the dynamic bodies joined by
//! this step's contacts form islands ([`Islands`]); when every body of an island has moved
//! slower than the thresholds for long enough, the whole island stops being simulated (each of
//! its bodies acts as static: no gravity, no integration, infinite mass) until something wakes
//! one of them — the game setting its pose or velocity, or an interfering pair with a body that
//! moves faster than the thresholds — and then the whole island wakes.

use serde::{Deserialize, Serialize};

/// When resting bodies go to sleep.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SleepSettings {
    /// Whether bodies sleep at all.
    pub enabled: bool,
    /// Linear speed below which a body counts as resting.
    pub linear_threshold: f64,
    /// Angular speed below which a body counts as resting.
    pub angular_threshold: f64,
    /// Seconds a body must rest before it sleeps.
    pub time_to_sleep: f64,
}

impl Default for SleepSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            linear_threshold: 0.02,
            angular_threshold: 0.05,
            time_to_sleep: 1.0,
        }
    }
}

impl SleepSettings {
    /// Never sleeping (scene files and benches that measure every step).
    pub const NEVER: Self = Self {
        enabled: false,
        linear_threshold: 0.0,
        angular_threshold: 0.0,
        time_to_sleep: f64::INFINITY,
    };
}

/// The islands of a step: bodies joined by the contacts that push them apart, found by union–find
/// (path halving, union by index so that the result does not depend on the order of the links).
/// A resting pile sleeps and wakes as one: a box that slept alone inside a pile became an
/// immovable support for its neighbours, and waking it (its neighbours still moved a little)
/// dropped their load on a body with no warm-started contact; the pile kept twitching (the 300-box
/// pile: boxes at 0.1–0.3 m/s every second or so after 6 s with per-body sleeping, none faster
/// than 7 mm/s from 7 s on with sleeping switched off by a temporary edit of the example).
#[derive(Clone, Debug, Default)]
pub(crate) struct Islands {
    parent: Vec<usize>,
}

impl Islands {
    /// `n` bodies, each its own island.
    pub(crate) fn new(n: usize) -> Self {
        Self {
            parent: (0..n).collect(),
        }
    }

    /// [`Self::new`] in place: `n` bodies, each its own island, keeping the allocation.
    pub(crate) fn reset(&mut self, n: usize) {
        self.parent.clear();
        self.parent.extend(0..n);
    }

    /// The representative of `i`'s island (the smallest id in it).
    pub(crate) fn find(&mut self, mut i: usize) -> usize {
        while self.parent[i] != i {
            self.parent[i] = self.parent[self.parent[i]];
            i = self.parent[i];
        }
        i
    }

    /// Joins the islands of `a` and `b`.
    pub(crate) fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        let (lo, hi) = (ra.min(rb), ra.max(rb));
        self.parent[hi] = lo;
    }
}

#[cfg(test)]
mod tests {
    use super::Islands;

    /// Islands against a brute-force flood fill over random links.
    #[test]
    fn islands_match_a_flood_fill() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |m: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % m as u64) as usize
        };
        // One value reused through `reset` (as the solver's sweep islands do), and a fresh one.
        let mut reused = Islands::new(0);
        for n in [1, 2, 7, 40] {
            for round in 0..20 {
                let links: Vec<(usize, usize)> =
                    (0..next(2 * n + 1)).map(|_| (next(n), next(n))).collect();
                let mut fresh = Islands::new(n);
                reused.reset(n);
                let isl = if round % 2 == 0 {
                    &mut fresh
                } else {
                    &mut reused
                };
                for &(a, b) in &links {
                    isl.union(a, b);
                }
                // Flood fill: the smallest id reachable from each body.
                for start in 0..n {
                    let mut seen = vec![false; n];
                    let mut stack = vec![start];
                    seen[start] = true;
                    while let Some(i) = stack.pop() {
                        for &(a, b) in &links {
                            for (x, y) in [(a, b), (b, a)] {
                                if x == i && !seen[y] {
                                    seen[y] = true;
                                    stack.push(y);
                                }
                            }
                        }
                    }
                    let smallest = seen.iter().position(|&s| s).unwrap();
                    assert_eq!(isl.find(start), smallest, "n {n}, links {links:?}");
                }
            }
        }
    }
}

//! Breadth-first, level-synchronous simultaneous traversal of two [`BalancedTree`]s
//! (Greß & Zachmann 2004, sections 4.2–4.4), written as the CPU reference of the GPU kernels,
//! with the temporal-coherence entrance level of section 5.
//!
//! The traversal keeps one list of node pairs per step. Step `k` pairs node `min(k, depth(A))`
//! levels of `A` with level `min(k, depth(B))` of `B`: when one tree has reached its leaves, its
//! leaf stays itself while the other one keeps descending. Each step is four data-parallel
//! phases, one function each, mirroring one GPU kernel each:
//!
//! 1. [`count_children`]: SAT-lite test of every pair, writing its number of child pairs (0 when
//!    disjoint; otherwise `children(A) × children(B)`, a node that stays counting as one child);
//! 2. [`exclusive_scan`]: exclusive prefix sum of the counts (each pair's output offset) and the
//!    next list's length, checked against a capacity (overflow is a typed
//!    [`PairListOverflow`], as a fixed-size GPU buffer would need);
//! 3. [`scatter_children`]: every overlapping pair writes its child pairs at its offset;
//! 4. at the last step, [`test_leaf_pairs`]: SAT-lite on the leaf boxes, then the caller's exact
//!    triangle test.
//!
//! The paper builds the child list with a multi-pass overlap-count mip-map (written before
//! compute shaders and scans existed); a prefix sum gives the same list in the same order.
//!
//! **Entrance level (section 5).** [`EntranceLevel`] remembers the pair list of one step and
//! restarts the next traversals from it instead of from the roots. Reusing the previous frame's
//! surviving pairs as they are would be wrong as soon as the objects move (new pairs can start
//! to overlap), so the list is recorded with `A`'s boxes grown by a margin `δ` on the steps above
//! it, and reused only while every point involved has moved by less than `δ` since (checked with
//! a bound on the pose change); beyond that the traversal falls back to the roots and records
//! anew. A recorded empty list is a valid proof that nothing can overlap within the margin.
//! The level follows the paper's heuristic: the deepest step at which at least a given fraction
//! of the tested pairs overlapped. Results are identical with and without it.
//!
//! As for [`super::dfs`], the callback must only accept triangle pairs whose leaf boxes overlap
//! (an exact triangle-triangle test does); the result then equals the brute-force set.

use super::balanced::{BalancedNode, BalancedTree};
use super::sat_lite::SatLite;
use crate::pose::DPose;
use bytemuck::{Pod, Zeroable};
use glam::DVec3;
use thiserror::Error;

/// A pair of node indices within the levels of the current step (GPU layout, 8 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Pod, Zeroable)]
pub struct NodePair {
    /// Node index in `A`'s level.
    pub a: u32,
    /// Node index in `B`'s level.
    pub b: u32,
}

/// A step's next pair list would exceed the capacity.
#[derive(Clone, Copy, Debug, Error, PartialEq, Eq)]
#[error(
    "pair list overflow after traversal step {step}: {needed} pairs needed, capacity {capacity}"
)]
pub struct PairListOverflow {
    /// The step whose children did not fit.
    pub step: usize,
    /// Length the list would have had.
    pub needed: u64,
    /// The capacity.
    pub capacity: u32,
}

/// Traversal settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BfsConfig {
    /// Most pairs a step's list may hold (the GPU pair buffer's size).
    pub capacity: u32,
}

impl Default for BfsConfig {
    fn default() -> Self {
        Self { capacity: 1 << 24 }
    }
}

/// Which levels a traversal step pairs and whether each tree descends from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepLevels {
    /// `A`'s level at this step.
    pub a_level: usize,
    /// `B`'s level at this step.
    pub b_level: usize,
    /// Whether `A`'s nodes split into their children for the next step.
    pub a_descends: bool,
    /// Whether `B`'s nodes split into their children for the next step.
    pub b_descends: bool,
}

impl StepLevels {
    /// The levels of step `step`.
    pub fn new(a: &BalancedTree, b: &BalancedTree, step: usize) -> Self {
        Self {
            a_level: step.min(a.depth()),
            b_level: step.min(b.depth()),
            a_descends: step < a.depth(),
            b_descends: step < b.depth(),
        }
    }

    /// Whether both trees are at their leaves (the triangle-test step).
    pub fn is_leaf_step(&self) -> bool {
        !self.a_descends && !self.b_descends
    }
}

/// The index of the last (leaf) step: the deeper tree's depth.
pub fn last_step(a: &BalancedTree, b: &BalancedTree) -> usize {
    a.depth().max(b.depth())
}

fn nodes<'t>(
    a: &'t BalancedTree,
    b: &'t BalancedTree,
    levels: StepLevels,
    p: NodePair,
) -> Option<(&'t BalancedNode, &'t BalancedNode)> {
    Some((
        a.node(levels.a_level, p.a as usize)?,
        b.node(levels.b_level, p.b as usize)?,
    ))
}

fn child_range(
    tree: &BalancedTree,
    level: usize,
    i: u32,
    descends: bool,
) -> std::ops::Range<usize> {
    if descends {
        tree.children(level, i as usize)
    } else {
        i as usize..i as usize + 1
    }
}

/// Kernel 1: SAT-lite test of every pair (with `A`'s boxes grown by `inflate`), writing each
/// pair's number of child pairs to `counts` (0 when disjoint or when a pair names no node).
/// Returns how many pairs overlapped.
pub fn count_children(
    a: &BalancedTree,
    b: &BalancedTree,
    sat: &SatLite,
    levels: StepLevels,
    inflate: f64,
    pairs: &[NodePair],
    counts: &mut Vec<u32>,
) -> usize {
    counts.clear();
    let mut overlapping = 0;
    for &p in pairs {
        let count = match nodes(a, b, levels, p) {
            Some((na, nb)) if sat.overlaps_inflated(na, nb, inflate) => {
                overlapping += 1;
                let ca = child_range(a, levels.a_level, p.a, levels.a_descends).len();
                let cb = child_range(b, levels.b_level, p.b, levels.b_descends).len();
                (ca * cb) as u32
            }
            _ => 0,
        };
        counts.push(count);
    }
    overlapping
}

/// Kernel 2: exclusive prefix sum of `counts` into `offsets` (same length); returns the total.
/// Offsets are meaningful only while the total fits in `u32` (the caller checks the capacity).
pub fn exclusive_scan(counts: &[u32], offsets: &mut Vec<u32>) -> u64 {
    offsets.clear();
    let mut sum = 0u64;
    for &c in counts {
        offsets.push(sum as u32);
        sum += u64::from(c);
    }
    sum
}

/// Kernel 3: every pair with a non-zero count writes its child pairs (for each child of `A`,
/// each child of `B`, in order) at its offset. `out` gets `total` entries; entries that inputs
/// inconsistent with [`count_children`] would write out of range are skipped.
#[allow(clippy::too_many_arguments)]
pub fn scatter_children(
    a: &BalancedTree,
    b: &BalancedTree,
    levels: StepLevels,
    pairs: &[NodePair],
    counts: &[u32],
    offsets: &[u32],
    total: usize,
    out: &mut Vec<NodePair>,
) {
    out.clear();
    out.resize(total, NodePair::default());
    for ((&p, &count), &offset) in pairs.iter().zip(counts).zip(offsets) {
        if count == 0 {
            continue;
        }
        let mut k = offset as usize;
        for ca in child_range(a, levels.a_level, p.a, levels.a_descends) {
            for cb in child_range(b, levels.b_level, p.b, levels.b_descends) {
                if let Some(slot) = out.get_mut(k) {
                    *slot = NodePair {
                        a: ca as u32,
                        b: cb as u32,
                    };
                }
                k += 1;
            }
        }
    }
}

/// Kernel 4 (last step): SAT-lite on each leaf pair, then `intersects(triangle of A, triangle
/// of B)`; accepted pairs are appended to `hits`. Returns how many leaf boxes overlapped.
pub fn test_leaf_pairs<F>(
    a: &BalancedTree,
    b: &BalancedTree,
    sat: &SatLite,
    pairs: &[NodePair],
    intersects: &mut F,
    hits: &mut Vec<(u32, u32)>,
) -> usize
where
    F: FnMut(u32, u32) -> bool,
{
    let levels = StepLevels::new(a, b, last_step(a, b));
    let mut overlapping = 0;
    for &p in pairs {
        if let Some((na, nb)) = nodes(a, b, levels, p)
            && sat.overlaps(na, nb)
        {
            overlapping += 1;
            if intersects(na.index, nb.index) {
                hits.push((na.index, nb.index));
            }
        }
    }
    overlapping
}

/// Counts of one traversal step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraversalStepStats {
    /// The step.
    pub step: usize,
    /// Pairs tested.
    pub tested: usize,
    /// Pairs whose boxes overlapped.
    pub overlapping: usize,
}

/// What the entrance level did in one traversal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntranceUse {
    /// No entrance level was given.
    Off,
    /// Started at the roots and recorded the list of this step.
    Recorded {
        /// The recorded step.
        step: usize,
    },
    /// Started from the list recorded at this step.
    Reused {
        /// The step started from.
        step: usize,
    },
}

/// The result of [`traverse`].
#[derive(Clone, Debug, PartialEq)]
pub struct BfsOutput {
    /// Accepted triangle pairs `(triangle of A, triangle of B)`, sorted.
    pub pairs: Vec<(u32, u32)>,
    /// Per-step counts, in step order, from the starting step on.
    pub steps: Vec<TraversalStepStats>,
    /// What the entrance level did.
    pub entrance: EntranceUse,
}

#[derive(Clone, Debug, PartialEq)]
struct StoredList {
    step: usize,
    pairs: Vec<NodePair>,
    pose: DPose,
    a_offsets: Vec<usize>,
    b_offsets: Vec<usize>,
    roots: [BalancedNode; 2],
    /// Largest distance from `B`'s origin of a point of `B`'s root box or of `A`'s root box
    /// seen in `B`'s frame at the recording pose.
    radius: f64,
}

/// Temporal-coherence entrance level (section 5) for one pair of trees: see the module
/// documentation.
#[derive(Clone, Debug, PartialEq)]
pub struct EntranceLevel {
    level: usize,
    auto: bool,
    threshold: f64,
    margin: f64,
    stored: Option<StoredList>,
}

fn sanitize(margin: f64) -> f64 {
    if margin.is_finite() && margin > 0.0 {
        margin
    } else {
        0.0
    }
}

impl EntranceLevel {
    /// An entrance level chosen by the paper's heuristic (deepest step with at least half of
    /// the tested pairs overlapping), recorded with margin `margin` (in `A`'s length units; how
    /// far points may move before the list is recorded anew; non-positive values disable
    /// reuse).
    pub fn new(margin: f64) -> Self {
        Self {
            level: 0,
            auto: true,
            threshold: 0.5,
            margin: sanitize(margin),
            stored: None,
        }
    }

    /// An entrance level fixed at step `level` (clamped to the trees' last inner step).
    pub fn fixed(level: usize, margin: f64) -> Self {
        Self {
            level,
            auto: false,
            ..Self::new(margin)
        }
    }

    /// Sets the overlap fraction of the heuristic (default 0.5).
    pub fn with_threshold(mut self, fraction: f64) -> Self {
        self.threshold = fraction;
        self
    }

    /// The step the next recording will store.
    pub fn level(&self) -> usize {
        self.level
    }

    /// The margin.
    pub fn margin(&self) -> f64 {
        self.margin
    }

    /// The step of the stored list, if any.
    pub fn stored_step(&self) -> Option<usize> {
        self.stored.as_ref().map(|s| s.step)
    }

    /// Length of the stored list (0 when none).
    pub fn stored_len(&self) -> usize {
        self.stored.as_ref().map_or(0, |s| s.pairs.len())
    }

    /// Forgets the stored list.
    pub fn clear(&mut self) {
        self.stored = None;
    }

    fn reusable(
        &self,
        a: &BalancedTree,
        b: &BalancedTree,
        pose: &DPose,
        capacity: u32,
    ) -> Option<&StoredList> {
        let s = self.stored.as_ref()?;
        if s.a_offsets != a.level_offsets()
            || s.b_offsets != b.level_offsets()
            || s.roots != [*a.root(), *b.root()]
            || s.pairs.len() > capacity as usize
            || !(pose.rotation.is_finite() && pose.translation.is_finite())
        {
            return None;
        }
        // Every point p involved moves by |ΔR p + Δt| ≤ ‖ΔR‖_F |p| + |Δt|.
        let dr = pose.rotation - s.pose.rotation;
        let frob =
            (dr.x_axis.length_squared() + dr.y_axis.length_squared() + dr.z_axis.length_squared())
                .sqrt();
        let moved = frob * s.radius + (pose.translation - s.pose.translation).length();
        // Slack for the SAT-lite margins and rounding at both poses.
        let corner_max = |n: &BalancedNode| n.dmin().abs().max(n.dmax().abs()).max_element();
        let half = |n: &BalancedNode| ((n.dmax() - n.dmin()) * 0.5).max_element();
        let (ra, rb) = (a.root(), b.root());
        let scale = corner_max(ra)
            + 3.0 * corner_max(rb)
            + pose
                .translation
                .abs()
                .max(s.pose.translation.abs())
                .max_element()
            + 3.0 * (half(ra) + half(rb) + self.margin);
        let slack = 4.0 * SatLite::RELATIVE_MARGIN * scale;
        (moved * (1.0 + 1e-9) + slack <= self.margin).then_some(s)
    }

    fn store(
        &mut self,
        a: &BalancedTree,
        b: &BalancedTree,
        pose: &DPose,
        step: usize,
        pairs: &[NodePair],
    ) {
        let corners = |n: &BalancedNode| {
            let (lo, hi) = (n.dmin(), n.dmax());
            (0..8).map(move |i| {
                DVec3::new(
                    if i & 1 == 0 { lo.x } else { hi.x },
                    if i & 2 == 0 { lo.y } else { hi.y },
                    if i & 4 == 0 { lo.z } else { hi.z },
                )
            })
        };
        let rb = corners(b.root()).map(|p| p.length()).fold(0.0, f64::max);
        let ra = corners(a.root())
            .map(|q| (q - pose.translation).length())
            .fold(0.0, f64::max);
        self.stored = Some(StoredList {
            step,
            pairs: pairs.to_vec(),
            pose: *pose,
            a_offsets: a.level_offsets().to_vec(),
            b_offsets: b.level_offsets().to_vec(),
            roots: [*a.root(), *b.root()],
            radius: ra.max(rb),
        });
    }

    fn adjust(&mut self, steps: &[TraversalStepStats], last: usize) {
        if !self.auto {
            return;
        }
        self.level = steps
            .iter()
            .filter(|s| {
                s.step < last
                    && s.tested > 0
                    && s.overlapping as f64 >= self.threshold * s.tested as f64
            })
            .map(|s| s.step)
            .max()
            .unwrap_or(0);
    }
}

/// All accepted triangle pairs, sorted (breadth-first traversal from the roots).
pub fn all_pairs<F>(
    a: &BalancedTree,
    b: &BalancedTree,
    b_to_a: &DPose,
    config: &BfsConfig,
    intersects: F,
) -> Result<Vec<(u32, u32)>, PairListOverflow>
where
    F: FnMut(u32, u32) -> bool,
{
    traverse(a, b, b_to_a, config, None, intersects).map(|o| o.pairs)
}

/// The breadth-first traversal, optionally starting from (and maintaining) an entrance level.
pub fn traverse<F>(
    a: &BalancedTree,
    b: &BalancedTree,
    b_to_a: &DPose,
    config: &BfsConfig,
    entrance: Option<&mut EntranceLevel>,
    mut intersects: F,
) -> Result<BfsOutput, PairListOverflow>
where
    F: FnMut(u32, u32) -> bool,
{
    let sat = SatLite::new(b_to_a);
    let last = last_step(a, b);
    let mut step = 0;
    let mut pairs = vec![NodePair::default()];
    let mut used = EntranceUse::Off;
    let mut record: Option<(&mut EntranceLevel, usize)> = None;
    if let Some(e) = entrance {
        if let Some(s) = e.reusable(a, b, b_to_a, config.capacity) {
            step = s.step;
            pairs.clone_from(&s.pairs);
            used = EntranceUse::Reused { step };
        } else {
            e.stored = None;
            let at = e.level.min(last.saturating_sub(1));
            used = EntranceUse::Recorded { step: at };
            record = Some((e, at));
        }
    }
    if pairs.len() > config.capacity as usize {
        return Err(PairListOverflow {
            step,
            needed: pairs.len() as u64,
            capacity: config.capacity,
        });
    }
    let (mut counts, mut offsets, mut next, mut hits) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut steps = Vec::new();
    loop {
        if let Some((e, at)) = record.as_mut()
            && step == *at
        {
            e.store(a, b, b_to_a, step, &pairs);
        }
        let levels = StepLevels::new(a, b, step);
        if levels.is_leaf_step() {
            let overlapping = test_leaf_pairs(a, b, &sat, &pairs, &mut intersects, &mut hits);
            steps.push(TraversalStepStats {
                step,
                tested: pairs.len(),
                overlapping,
            });
            break;
        }
        let inflate = match &record {
            Some((e, at)) if step < *at => e.margin,
            _ => 0.0,
        };
        let overlapping = count_children(a, b, &sat, levels, inflate, &pairs, &mut counts);
        steps.push(TraversalStepStats {
            step,
            tested: pairs.len(),
            overlapping,
        });
        let total = exclusive_scan(&counts, &mut offsets);
        if total > u64::from(config.capacity) {
            return Err(PairListOverflow {
                step,
                needed: total,
                capacity: config.capacity,
            });
        }
        scatter_children(
            a,
            b,
            levels,
            &pairs,
            &counts,
            &offsets,
            total as usize,
            &mut next,
        );
        std::mem::swap(&mut pairs, &mut next);
        step += 1;
        if pairs.is_empty() {
            if let Some((e, at)) = record.as_mut()
                && step <= *at
            {
                // Nothing survives even the grown boxes: a valid (empty) entrance list.
                e.store(a, b, b_to_a, step, &pairs);
            }
            break;
        }
    }
    if let Some((e, _)) = record {
        e.adjust(&steps, last);
    }
    hits.sort_unstable();
    Ok(BfsOutput {
        pairs: hits,
        steps,
        entrance: used,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn exclusive_scan_matches_naive() {
        let mut rng = ChaCha8Rng::seed_from_u64(21);
        let mut offsets = vec![7; 3];
        for len in [0usize, 1, 2, 17, 300] {
            let counts: Vec<u32> = (0..len).map(|_| rng.random_range(0..5)).collect();
            let total = exclusive_scan(&counts, &mut offsets);
            assert_eq!(offsets.len(), len);
            for i in 0..len {
                assert_eq!(offsets[i], counts[..i].iter().sum::<u32>());
            }
            assert_eq!(total, counts.iter().map(|&c| u64::from(c)).sum::<u64>());
        }
        // Totals past u32 are reported exactly.
        let total = exclusive_scan(&[u32::MAX, u32::MAX, 5], &mut offsets);
        assert_eq!(total, 2 * u64::from(u32::MAX) + 5);
    }
}

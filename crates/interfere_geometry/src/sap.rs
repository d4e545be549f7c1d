//! Sweep and prune: the broad phase of Lin–Manocha 1996 section 3 ("Sweep and Prune", after
//! Cohen, Lin, Manocha and Ponamgi's I-COLLIDE, 1995).
//!
//! Every box is projected onto the x, y and z axes; each axis keeps a persistent sorted list of
//! interval endpoints. Two boxes overlap if and only if their intervals overlap on all three
//! axes. Each frame the endpoint values are refreshed and every list is re-sorted by insertion
//! sort, which is expected `O(n + swaps)` when objects move coherently. Only a swap of a *min*
//! endpoint with a *max* endpoint changes an interval overlap:
//!
//! * a min moving left past another box's max starts an overlap on that axis,
//! * a max moving left past another box's min ends one.
//!
//! With [`PairTracking::AxisCounters`] (the paper's scheme, the default) each such swap toggles
//! a per-pair counter of overlapping axes kept in a hash map; a pair overlaps when its counter
//! is 3. The map holds every pair that overlaps on at least one axis, which can be far more
//! than the overlapping pairs. [`PairTracking::DirectTest`] keeps no counters: the axes are
//! sorted one after the other, and when an overlap starts on axis `k` the other two axes are
//! tested directly on the mixed state (new values on the axes already sorted, old values on
//! the others), which changes the 3-D status exactly when the counter would reach or leave 3.
//!
//! Endpoints are ordered by (value, min before max, proxy id), so touching boxes (equal
//! endpoints) overlap, as in [`Aabb::overlaps`], and the order is total: identical boxes are
//! handled like any others. [`SweepAndPrune::update_full_resort`] is the non-incremental
//! reference (full sort of every axis and a rebuild of the pair set by a sweep).

use crate::aabb::Aabb;
use crate::error::SapError;
use std::collections::BTreeSet;

/// A box in a [`SweepAndPrune`]. Ids of removed boxes are reused after the next update.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProxyId(u32);

impl ProxyId {
    /// The id as an index (dense: ids are reused, so they stay below the peak box count).
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// How the incremental update keeps the set of overlapping pairs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PairTracking {
    /// Per-pair counters of overlapping axes in a hash map (Lin–Manocha / I-COLLIDE). Kept as
    /// the paper's scheme; it holds a counter for every pair overlapping on any one axis, which
    /// at 10,000 boxes is millions of counters and slower than a full re-sort.
    AxisCounters,
    /// No counters: when an overlap starts or ends on one axis, test the other two axes
    /// directly. Same pair set, memory proportional to the overlapping pairs (the default).
    #[default]
    DirectTest,
}

/// What one update did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UpdateStats {
    /// Adjacent endpoint exchanges made by the insertion sorts.
    pub swaps: u64,
    /// Pairs overlapping now that did not before the update.
    pub added: usize,
    /// Pairs overlapping before the update that no longer do.
    pub removed: usize,
    /// Whether the lists and pairs were rebuilt from scratch (first update, many insertions
    /// or removals, a full resort, or counters left stale by a full resort).
    pub rebuilt: bool,
}

type PairMap<V> = crate::key_hash::KeyMap<u64, V>;

/// The key of an unordered pair: smaller id in the high half.
#[inline]
fn pair_key(a: u32, b: u32) -> u64 {
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    (u64::from(lo) << 32) | u64::from(hi)
}

#[inline]
fn unpack_pair(key: u64) -> (ProxyId, ProxyId) {
    (ProxyId((key >> 32) as u32), ProxyId(key as u32))
}

const MAX_BIT: u32 = 1 << 31;

/// Maps an `f32` (not NaN) to a `u32` with the same order; `-0.0` and `0.0` map alike.
#[inline]
fn sortable(v: f32) -> u32 {
    let bits = (v + 0.0).to_bits();
    if bits & 0x8000_0000 != 0 {
        !bits
    } else {
        bits | 0x8000_0000
    }
}

/// An endpoint as one sortable `u64`: value, then min before max, then proxy id.
#[inline]
fn endpoint(value: f32, id: u32, is_max: bool) -> u64 {
    (u64::from(sortable(value)) << 32) | u64::from(if is_max { MAX_BIT | id } else { id })
}

#[inline]
fn ep_id(e: u64) -> u32 {
    (e as u32) & !MAX_BIT
}

#[inline]
fn ep_is_max(e: u64) -> bool {
    (e as u32) & MAX_BIT != 0
}

#[inline]
fn overlap_on(a: &Aabb, b: &Aabb, axis: usize) -> bool {
    a.min[axis] <= b.max[axis] && b.min[axis] <= a.max[axis]
}

#[inline]
fn overlap_axes(a: &Aabb, b: &Aabb) -> u8 {
    (0..3).map(|k| u8::from(overlap_on(a, b, k))).sum()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Free slot.
    Vacant,
    /// Inserted, not yet in the lists.
    Pending,
    /// In the lists.
    Active,
    /// In the lists, removal requested.
    Removing,
}

#[derive(Clone, Copy, Debug)]
struct Slot {
    state: State,
    /// The box the lists and pairs currently describe.
    committed: Aabb,
    /// The box set by the user, applied at the next update.
    target: Aabb,
}

/// Sweep-and-prune broad phase over axis-aligned boxes with incremental updates.
#[derive(Clone, Debug, Default)]
pub struct SweepAndPrune {
    tracking: PairTracking,
    slots: Vec<Slot>,
    free: Vec<u32>,
    to_free: Vec<u32>,
    pending_inserts: Vec<u32>,
    pending_removes: Vec<u32>,
    axes: [Vec<u64>; 3],
    counters: PairMap<u8>,
    counters_valid: bool,
    pairs: BTreeSet<u64>,
    in_lists: usize,
    /// Initial overlap status of the pairs whose status changed during the current update.
    changed: PairMap<bool>,
}

impl SweepAndPrune {
    /// An empty broad phase with per-pair axis counters (the paper's scheme).
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty broad phase with the chosen pair tracking.
    pub fn with_tracking(tracking: PairTracking) -> Self {
        Self {
            tracking,
            ..Self::default()
        }
    }

    /// The pair tracking in use.
    pub fn tracking(&self) -> PairTracking {
        self.tracking
    }

    fn check(aabb: &Aabb) -> Result<(), SapError> {
        // `<=` is false for NaN, so this also refuses NaN coordinates.
        if aabb.min.cmple(aabb.max).all() {
            Ok(())
        } else {
            Err(SapError::InvalidAabb {
                min: aabb.min.to_array(),
                max: aabb.max.to_array(),
            })
        }
    }

    /// Adds a box; it takes part in the pairs from the next update. Infinite coordinates are
    /// allowed; NaN or `min > max` are refused.
    pub fn insert(&mut self, aabb: Aabb) -> Result<ProxyId, SapError> {
        Self::check(&aabb)?;
        let slot = Slot {
            state: State::Pending,
            committed: aabb,
            target: aabb,
        };
        let id = match self.free.pop() {
            Some(id) => {
                self.slots[id as usize] = slot;
                id
            }
            None => {
                let id = u32::try_from(self.slots.len())
                    .ok()
                    .filter(|&id| id < MAX_BIT)
                    .ok_or(SapError::TooManyProxies)?;
                self.slots.push(slot);
                id
            }
        };
        self.pending_inserts.push(id);
        Ok(ProxyId(id))
    }

    fn slot_mut(&mut self, id: ProxyId) -> Result<&mut Slot, SapError> {
        match self.slots.get_mut(id.index()) {
            Some(slot) if matches!(slot.state, State::Pending | State::Active) => Ok(slot),
            _ => Err(SapError::UnknownProxy(id.0)),
        }
    }

    /// Removes a box; its pairs disappear at the next update.
    pub fn remove(&mut self, id: ProxyId) -> Result<(), SapError> {
        let slot = self.slot_mut(id)?;
        match slot.state {
            State::Pending => {
                slot.state = State::Vacant;
                self.to_free.push(id.0);
            }
            _ => {
                slot.state = State::Removing;
                self.pending_removes.push(id.0);
            }
        }
        Ok(())
    }

    /// Moves a box; the change takes effect at the next update.
    pub fn set_aabb(&mut self, id: ProxyId, aabb: Aabb) -> Result<(), SapError> {
        Self::check(&aabb)?;
        self.slot_mut(id)?.target = aabb;
        Ok(())
    }

    /// The box last given for `id` (inserted or set), if `id` is live.
    pub fn aabb(&self, id: ProxyId) -> Option<Aabb> {
        self.slots
            .get(id.index())
            .filter(|s| matches!(s.state, State::Pending | State::Active))
            .map(|s| s.target)
    }

    /// Number of live boxes (including those inserted since the last update).
    pub fn len(&self) -> usize {
        self.slots
            .iter()
            .filter(|s| matches!(s.state, State::Pending | State::Active))
            .count()
    }

    /// Whether there is no live box.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The overlapping pairs as of the last update, each `(a, b)` with `a < b`, in increasing
    /// order.
    pub fn pairs(&self) -> impl Iterator<Item = (ProxyId, ProxyId)> + '_ {
        self.pairs.iter().map(|&k| unpack_pair(k))
    }

    /// Number of overlapping pairs as of the last update.
    pub fn pair_count(&self) -> usize {
        self.pairs.len()
    }

    /// Whether `a` and `b` overlapped at the last update.
    pub fn overlapping(&self, a: ProxyId, b: ProxyId) -> bool {
        self.pairs.contains(&pair_key(a.0, b.0))
    }

    /// Number of per-pair counters held (pairs overlapping on at least one axis), the memory
    /// cost of [`PairTracking::AxisCounters`]; 0 with [`PairTracking::DirectTest`] or after a
    /// full resort.
    pub fn counter_count(&self) -> usize {
        self.counters.len()
    }

    /// Applies insertions, removals and moves, re-sorting every axis by insertion sort and
    /// updating the pairs incrementally (falling back to a rebuild when many boxes were added
    /// or removed, or after [`Self::update_full_resort`] in counter mode).
    pub fn update(&mut self) -> UpdateStats {
        let structural = self.pending_inserts.len() + self.pending_removes.len();
        let need_counters = self.tracking == PairTracking::AxisCounters;
        if (need_counters && !self.counters_valid) || structural * 8 > self.in_lists {
            return self.rebuild(need_counters);
        }
        self.changed.clear();
        self.apply_removals();
        let mut stats = UpdateStats {
            swaps: self.resort_incremental(),
            ..UpdateStats::default()
        };
        self.apply_insertions();
        for (&key, &before) in &self.changed {
            let now = self.pairs.contains(&key);
            stats.added += usize::from(now && !before);
            stats.removed += usize::from(before && !now);
        }
        self.finish();
        stats
    }

    /// The non-incremental reference: applies all changes, fully sorts every axis and rebuilds
    /// the pair set by a sweep along x with direct y and z tests. Counters (if used) are
    /// rebuilt by the next [`Self::update`].
    pub fn update_full_resort(&mut self) -> UpdateStats {
        self.rebuild(false)
    }

    /// Marks a pair's status as about to change (remembering its status before the update).
    #[inline]
    fn note_change(changed: &mut PairMap<bool>, key: u64, was: bool) {
        changed.entry(key).or_insert(was);
    }

    fn apply_removals(&mut self) {
        let removes = std::mem::take(&mut self.pending_removes);
        for &r in &removes {
            let rb = self.slots[r as usize].committed;
            for (o, slot) in self.slots.iter().enumerate() {
                let o = o as u32;
                if o == r || !matches!(slot.state, State::Active | State::Removing) {
                    continue;
                }
                let c = overlap_axes(&rb, &slot.committed);
                if c == 0 {
                    continue;
                }
                let key = pair_key(r, o);
                self.counters.remove(&key);
                if c == 3 && self.pairs.remove(&key) {
                    Self::note_change(&mut self.changed, key, true);
                }
            }
            self.slots[r as usize].state = State::Vacant;
            self.to_free.push(r);
        }
        if !removes.is_empty() {
            let slots = &self.slots;
            for list in &mut self.axes {
                list.retain(|&e| slots[ep_id(e) as usize].state == State::Active);
            }
            self.in_lists -= removes.len();
        }
        self.pending_removes = removes;
        self.pending_removes.clear();
    }

    /// Refreshes endpoint values and insertion-sorts each axis, updating pairs on min/max swaps.
    fn resort_incremental(&mut self) -> u64 {
        let Self {
            tracking,
            slots,
            axes,
            counters,
            pairs,
            changed,
            ..
        } = self;
        let mut swaps = 0;
        for (k, list) in axes.iter_mut().enumerate() {
            for e in list.iter_mut() {
                let id = ep_id(*e);
                let is_max = ep_is_max(*e);
                let b = &slots[id as usize].target;
                *e = endpoint(if is_max { b.max[k] } else { b.min[k] }, id, is_max);
            }
            swaps += insertion_sort(list, |moving, passed| {
                let (a, b) = (ep_id(moving), ep_id(passed));
                if a == b {
                    // A box's own min and max never cross (boxes have min <= max).
                    return;
                }
                let key = pair_key(a, b);
                let starts = !ep_is_max(moving);
                match tracking {
                    PairTracking::AxisCounters => {
                        if starts {
                            let c = counters.entry(key).or_insert(0);
                            *c += 1;
                            debug_assert!(*c <= 3, "axis counter above 3");
                            if *c == 3 {
                                pairs.insert(key);
                                Self::note_change(changed, key, false);
                            }
                        } else if let Some(c) = counters.get_mut(&key) {
                            if *c == 3 {
                                pairs.remove(&key);
                                Self::note_change(changed, key, true);
                            }
                            *c -= 1;
                            if *c == 0 {
                                counters.remove(&key);
                            }
                        } else {
                            debug_assert!(false, "overlap ended on a pair without a counter");
                        }
                    }
                    PairTracking::DirectTest => {
                        // The pair set holds the 3-D overlaps of the mixed state (new values
                        // on the axes sorted already, old values on the rest); this swap
                        // changes the pair's status iff the other two axes overlap there.
                        let (sa, sb) = (&slots[a as usize], &slots[b as usize]);
                        let others = (0..3).filter(|&j| j != k).all(|j| {
                            if j < k {
                                overlap_on(&sa.target, &sb.target, j)
                            } else {
                                overlap_on(&sa.committed, &sb.committed, j)
                            }
                        });
                        if !others {
                            return;
                        }
                        if starts {
                            let inserted = pairs.insert(key);
                            debug_assert!(inserted, "overlap started on a listed pair");
                            Self::note_change(changed, key, false);
                        } else {
                            let removed = pairs.remove(&key);
                            debug_assert!(removed, "overlap ended on an unlisted pair");
                            Self::note_change(changed, key, true);
                        }
                    }
                }
            });
        }
        for slot in slots.iter_mut().filter(|s| s.state == State::Active) {
            slot.committed = slot.target;
        }
        swaps
    }

    fn apply_insertions(&mut self) {
        let inserts = std::mem::take(&mut self.pending_inserts);
        let mut new_endpoints: [Vec<u64>; 3] = Default::default();
        for &n in &inserts {
            if self.slots[n as usize].state != State::Pending {
                continue;
            }
            let nb = self.slots[n as usize].target;
            for (o, slot) in self.slots.iter().enumerate() {
                if slot.state != State::Active {
                    continue;
                }
                let c = overlap_axes(&nb, &slot.committed);
                if c == 0 {
                    continue;
                }
                let key = pair_key(n, o as u32);
                if self.tracking == PairTracking::AxisCounters {
                    self.counters.insert(key, c);
                }
                if c == 3 && self.pairs.insert(key) {
                    Self::note_change(&mut self.changed, key, false);
                }
            }
            let slot = &mut self.slots[n as usize];
            slot.state = State::Active;
            slot.committed = nb;
            for (k, list) in new_endpoints.iter_mut().enumerate() {
                list.push(endpoint(nb.min[k], n, false));
                list.push(endpoint(nb.max[k], n, true));
            }
            self.in_lists += 1;
        }
        for (list, mut new) in self.axes.iter_mut().zip(new_endpoints) {
            if !new.is_empty() {
                new.sort_unstable();
                *list = merge_sorted(list, &new);
            }
        }
        self.pending_inserts = inserts;
        self.pending_inserts.clear();
    }

    /// Applies all changes and rebuilds lists, pairs and (optionally) counters from scratch.
    fn rebuild(&mut self, with_counters: bool) -> UpdateStats {
        let old_pairs = std::mem::take(&mut self.pairs);
        for &r in &self.pending_removes {
            if self.slots[r as usize].state == State::Removing {
                self.slots[r as usize].state = State::Vacant;
                self.to_free.push(r);
            }
        }
        self.pending_removes.clear();
        self.pending_inserts.clear();
        self.in_lists = 0;
        for slot in &mut self.slots {
            if slot.state == State::Pending {
                slot.state = State::Active;
            }
            if slot.state == State::Active {
                slot.committed = slot.target;
                self.in_lists += 1;
            }
        }
        for (k, list) in self.axes.iter_mut().enumerate() {
            list.clear();
            for (id, slot) in self.slots.iter().enumerate() {
                if slot.state == State::Active {
                    list.push(endpoint(slot.committed.min[k], id as u32, false));
                    list.push(endpoint(slot.committed.max[k], id as u32, true));
                }
            }
            list.sort_unstable();
        }
        self.counters.clear();
        let mut found = Vec::new();
        if with_counters {
            for list in &self.axes {
                sweep(list, self.slots.len(), |a, b| {
                    *self.counters.entry(pair_key(a, b)).or_insert(0) += 1;
                });
            }
            found.extend(
                self.counters
                    .iter()
                    .filter(|&(_, &c)| c == 3)
                    .map(|(&key, _)| key),
            );
        } else {
            let slots = &self.slots;
            sweep(&self.axes[0], slots.len(), |a, b| {
                let (sa, sb) = (&slots[a as usize].committed, &slots[b as usize].committed);
                if overlap_on(sa, sb, 1) && overlap_on(sa, sb, 2) {
                    found.push(pair_key(a, b));
                }
            });
        }
        found.sort_unstable();
        self.pairs = found.into_iter().collect();
        self.counters_valid = with_counters;
        let stats = UpdateStats {
            swaps: 0,
            added: self.pairs.difference(&old_pairs).count(),
            removed: old_pairs.difference(&self.pairs).count(),
            rebuilt: true,
        };
        self.finish();
        stats
    }

    fn finish(&mut self) {
        self.free.append(&mut self.to_free);
        self.changed.clear();
    }
}

/// Insertion sort calling `on_cross(moving, passed)` whenever a min endpoint and a max endpoint
/// exchange places (`moving` moves left past `passed`); returns the number of exchanges.
fn insertion_sort(list: &mut [u64], mut on_cross: impl FnMut(u64, u64)) -> u64 {
    let mut swaps = 0;
    for i in 1..list.len() {
        let e = list[i];
        let mut j = i;
        while j > 0 && list[j - 1] > e {
            let f = list[j - 1];
            if ep_is_max(e) != ep_is_max(f) {
                on_cross(e, f);
            }
            list[j] = f;
            j -= 1;
            swaps += 1;
        }
        list[j] = e;
    }
    swaps
}

/// Calls `f(a, b)` for every pair of intervals that overlap in a sorted endpoint list.
fn sweep(list: &[u64], id_bound: usize, mut f: impl FnMut(u32, u32)) {
    let mut open: Vec<u32> = Vec::new();
    let mut position = vec![0u32; id_bound];
    for &e in list {
        let id = ep_id(e);
        if ep_is_max(e) {
            let p = position[id as usize] as usize;
            open.swap_remove(p);
            if let Some(&moved) = open.get(p) {
                position[moved as usize] = p as u32;
            }
        } else {
            for &o in &open {
                f(o, id);
            }
            position[id as usize] = open.len() as u32;
            open.push(id);
        }
    }
}

fn merge_sorted(a: &[u64], b: &[u64]) -> Vec<u64> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i] < b[j] {
            out.push(a[i]);
            i += 1;
        } else {
            out.push(b[j]);
            j += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

pub mod bench {
    //! A timing harness for `interfere bench sap`: boxes moving coherently, incremental update
    //! against the full-resort reference.

    use super::{PairTracking, SweepAndPrune};
    use crate::aabb::Aabb;
    use glam::Vec3;
    use std::time::Instant;

    /// Timings of [`bench_sap`] (milliseconds per frame are means over all frames).
    #[derive(Clone, Debug, PartialEq)]
    pub struct SapBenchReport {
        /// Number of boxes.
        pub boxes: usize,
        /// Number of timed frames.
        pub frames: usize,
        /// Side of the cubic world the boxes move in (box sides are 0.5 to 1.5).
        pub world_size: f32,
        /// Initial build (first update) with axis counters, in ms.
        pub build_ms: f64,
        /// Incremental update with axis counters (the paper's scheme), ms per frame.
        pub incremental_counters_ms: f64,
        /// Incremental update with direct tests instead of counters, ms per frame.
        pub incremental_direct_ms: f64,
        /// Full resort and pair rebuild, ms per frame.
        pub full_resort_ms: f64,
        /// Mean endpoint swaps per frame of the incremental update.
        pub mean_swaps: f64,
        /// Mean overlapping pairs per frame.
        pub mean_pairs: f64,
        /// Mean pairs added plus removed per frame.
        pub mean_pair_changes: f64,
        /// Counters held by the counter variant at the end (pairs overlapping on some axis).
        pub counters: usize,
        /// Whether the three variants reported the same pairs after every frame.
        pub pairs_agree: bool,
    }

    impl std::fmt::Display for SapBenchReport {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            writeln!(
                f,
                "sweep and prune: {} boxes, {} frames, world {:.1}",
                self.boxes, self.frames, self.world_size
            )?;
            writeln!(f, "  initial build (counters)   {:>9.3} ms", self.build_ms)?;
            writeln!(
                f,
                "  incremental, axis counters {:>9.3} ms/frame",
                self.incremental_counters_ms
            )?;
            writeln!(
                f,
                "  incremental, direct tests  {:>9.3} ms/frame",
                self.incremental_direct_ms
            )?;
            writeln!(
                f,
                "  full resort + rebuild      {:>9.3} ms/frame",
                self.full_resort_ms
            )?;
            writeln!(
                f,
                "  swaps/frame {:.0}, pairs {:.1}, pair changes/frame {:.1}, counters {}, \
                 variants agree: {}",
                self.mean_swaps,
                self.mean_pairs,
                self.mean_pair_changes,
                self.counters,
                self.pairs_agree
            )
        }
    }

    /// SplitMix64, so the harness needs no random-number crate.
    struct Rng(u64);

    impl Rng {
        fn next_u64(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
        /// Uniform in `[0, 1)`.
        fn unit(&mut self) -> f32 {
            (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
        }
        fn vec(&mut self, lo: f32, hi: f32) -> Vec3 {
            Vec3::new(self.unit(), self.unit(), self.unit()) * (hi - lo) + Vec3::splat(lo)
        }
    }

    /// Moves `n` boxes (sides 0.5 to 1.5) for `frames` frames with small constant velocities
    /// (at most 0.02 per axis per frame, bouncing off the walls of a world sized for about two
    /// overlaps per box), timing [`SweepAndPrune::update`] with both pair trackings against
    /// [`SweepAndPrune::update_full_resort`]. Only the update calls are timed.
    pub fn bench_sap(n: usize, frames: usize, seed: u64) -> SapBenchReport {
        let mut rng = Rng(seed);
        // Expected overlaps per box ~ n (2 / world)^3 for unit boxes: aim for 2.
        let world = (2.0 * (n as f32 / 2.0).cbrt()).max(4.0);
        let mut centres: Vec<Vec3> = (0..n).map(|_| rng.vec(0.0, world)).collect();
        let halves: Vec<Vec3> = (0..n).map(|_| rng.vec(0.25, 0.75)).collect();
        let mut velocities: Vec<Vec3> = (0..n).map(|_| rng.vec(-0.02, 0.02)).collect();
        let aabb = |c: Vec3, h: Vec3| Aabb::new(c - h, c + h);

        let mut counters = SweepAndPrune::with_tracking(PairTracking::AxisCounters);
        let mut direct = SweepAndPrune::with_tracking(PairTracking::DirectTest);
        let mut full = SweepAndPrune::new();
        let mut ids = Vec::with_capacity(n);
        for i in 0..n {
            let b = aabb(centres[i], halves[i]);
            // Boxes are finite with min <= max, so insertion cannot fail; skip any that would.
            if let (Ok(a), Ok(_), Ok(_)) = (counters.insert(b), direct.insert(b), full.insert(b)) {
                ids.push(a);
            }
        }
        let start = Instant::now();
        counters.update();
        let build_ms = start.elapsed().as_secs_f64() * 1e3;
        direct.update();
        full.update_full_resort();

        let (mut t_counters, mut t_direct, mut t_full) = (0.0, 0.0, 0.0);
        let (mut swaps, mut pairs, mut changes) = (0u64, 0usize, 0usize);
        let mut agree = true;
        for _ in 0..frames {
            for (i, &id) in ids.iter().enumerate() {
                let mut c = centres[i] + velocities[i];
                for k in 0..3 {
                    if c[k] < 0.0 || c[k] > world {
                        velocities[i][k] = -velocities[i][k];
                        c[k] = c[k].clamp(0.0, world);
                    }
                }
                centres[i] = c;
                let b = aabb(c, halves[i]);
                let ok = counters.set_aabb(id, b).is_ok()
                    && direct.set_aabb(id, b).is_ok()
                    && full.set_aabb(id, b).is_ok();
                agree &= ok;
            }
            let start = Instant::now();
            let stats = counters.update();
            t_counters += start.elapsed().as_secs_f64();
            let start = Instant::now();
            direct.update();
            t_direct += start.elapsed().as_secs_f64();
            let start = Instant::now();
            full.update_full_resort();
            t_full += start.elapsed().as_secs_f64();
            swaps += stats.swaps;
            pairs += counters.pair_count();
            changes += stats.added + stats.removed;
            agree &= counters.pair_count() == full.pair_count()
                && direct.pair_count() == full.pair_count();
        }
        agree &= counters.pairs().eq(full.pairs()) && direct.pairs().eq(full.pairs());
        let per_frame = |t: f64| t * 1e3 / frames.max(1) as f64;
        let mean = |x: f64| x / frames.max(1) as f64;
        SapBenchReport {
            boxes: ids.len(),
            frames,
            world_size: world,
            build_ms,
            incremental_counters_ms: per_frame(t_counters),
            incremental_direct_ms: per_frame(t_direct),
            full_resort_ms: per_frame(t_full),
            mean_swaps: mean(swaps as f64),
            mean_pairs: mean(pairs as f64),
            mean_pair_changes: mean(changes as f64),
            counters: counters.counter_count(),
            pairs_agree: agree,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::collections::BTreeMap;

    type Pairs = BTreeSet<(ProxyId, ProxyId)>;

    fn brute(live: &BTreeMap<ProxyId, Aabb>) -> Pairs {
        let v: Vec<_> = live.iter().collect();
        let mut out = Pairs::new();
        for i in 0..v.len() {
            for j in i + 1..v.len() {
                if v[i].1.overlaps(v[j].1) {
                    out.insert((*v[i].0, *v[j].0));
                }
            }
        }
        out
    }

    impl SweepAndPrune {
        /// Lists sorted and holding exactly the committed endpoints of the boxes in them;
        /// counters (when valid) equal to the per-axis overlap counts.
        fn check_invariants(&self) {
            let active: Vec<u32> = (0..self.slots.len() as u32)
                .filter(|&i| self.slots[i as usize].state == State::Active)
                .collect();
            assert_eq!(active.len(), self.in_lists);
            for (k, list) in self.axes.iter().enumerate() {
                assert_eq!(list.len(), 2 * active.len());
                assert!(list.windows(2).all(|w| w[0] < w[1]), "axis {k} unsorted");
                for &e in list {
                    let s = &self.slots[ep_id(e) as usize];
                    assert_eq!(s.state, State::Active);
                    let v = if ep_is_max(e) {
                        s.committed.max[k]
                    } else {
                        s.committed.min[k]
                    };
                    assert_eq!(e, endpoint(v, ep_id(e), ep_is_max(e)));
                }
            }
            if self.tracking == PairTracking::AxisCounters && self.counters_valid {
                let mut expected = 0;
                for (i, &a) in active.iter().enumerate() {
                    for &b in &active[i + 1..] {
                        let c = overlap_axes(
                            &self.slots[a as usize].committed,
                            &self.slots[b as usize].committed,
                        );
                        let held = self.counters.get(&pair_key(a, b)).copied();
                        assert_eq!(held, (c > 0).then_some(c), "counter of ({a}, {b})");
                        expected += usize::from(c > 0);
                    }
                }
                assert_eq!(self.counters.len(), expected);
            }
        }
    }

    /// Grid-snapped boxes so that equal coordinates and touching faces are common, with some
    /// flat and point boxes, signed zeros, huge and infinite coordinates.
    fn random_box(rng: &mut ChaCha8Rng) -> Aabb {
        let snap = |x: f32| (x * 2.0).round() / 2.0;
        let mut min = Vec3::new(
            snap(rng.random_range(-8.0..8.0)),
            snap(rng.random_range(-8.0..8.0)),
            snap(rng.random_range(-8.0..8.0)),
        );
        let size = Vec3::new(
            snap(rng.random_range(0.0..3.0)),
            snap(rng.random_range(0.0..3.0)),
            snap(rng.random_range(0.0..3.0)),
        );
        let mut max = min + size;
        match rng.random_range(0..40) {
            0 => min.x = -1e30,
            1 => max.y = 1e30,
            2 => {
                min.z = f32::NEG_INFINITY;
                max.z = f32::INFINITY;
            }
            3 => max = min,
            4 => {
                min = min.map(|v| if v == 0.0 { -0.0 } else { v });
                max = max.max(min);
            }
            _ => {}
        }
        Aabb::new(min, max)
    }

    fn nudge(rng: &mut ChaCha8Rng, b: Aabb) -> Aabb {
        if rng.random_range(0..100) == 0 {
            return random_box(rng);
        }
        let step = |rng: &mut ChaCha8Rng| rng.random_range(-1..=1) as f32 * 0.5;
        let d = Vec3::new(step(rng), step(rng), step(rng));
        let grow = if rng.random_range(0..10) == 0 {
            Vec3::splat(0.5)
        } else {
            Vec3::ZERO
        };
        Aabb::new(b.min + d - grow, b.max + d + grow)
    }

    #[test]
    fn random_motion_matches_brute_force_every_frame() {
        let mut rng = ChaCha8Rng::seed_from_u64(2024);
        let mut counters = SweepAndPrune::with_tracking(PairTracking::AxisCounters);
        let mut direct = SweepAndPrune::with_tracking(PairTracking::DirectTest);
        let mut full = SweepAndPrune::new();
        let mut live: BTreeMap<ProxyId, Aabb> = BTreeMap::new();
        let mut previous = Pairs::new();
        let (mut incremental_frames, mut rebuilt_frames, mut total_swaps) = (0, 0, 0);

        let insert = |rng: &mut ChaCha8Rng,
                      live: &mut BTreeMap<ProxyId, Aabb>,
                      sets: [&mut SweepAndPrune; 3]| {
            let b = if !live.is_empty() && rng.random_range(0..12) == 0 {
                // An exact copy of a live box.
                *live.values().nth(rng.random_range(0..live.len())).unwrap()
            } else {
                random_box(rng)
            };
            let ids = sets.map(|s| s.insert(b).unwrap());
            assert!(ids[0] == ids[1] && ids[1] == ids[2]);
            live.insert(ids[0], b);
        };

        for _ in 0..150 {
            insert(&mut rng, &mut live, [&mut counters, &mut direct, &mut full]);
        }
        for frame in 0..300 {
            // Coherent motion of about half of the boxes.
            let ids: Vec<ProxyId> = live.keys().copied().collect();
            for &id in &ids {
                if rng.random::<bool>() {
                    let b = nudge(&mut rng, live[&id]);
                    for s in [&mut counters, &mut direct, &mut full] {
                        s.set_aabb(id, b).unwrap();
                    }
                    live.insert(id, b);
                }
            }
            let removals = if frame % 50 == 49 {
                30
            } else {
                rng.random_range(0..4)
            };
            for _ in 0..removals {
                if live.is_empty() {
                    break;
                }
                let id = *live.keys().nth(rng.random_range(0..live.len())).unwrap();
                for s in [&mut counters, &mut direct, &mut full] {
                    s.remove(id).unwrap();
                }
                live.remove(&id);
            }
            let insertions = if frame % 40 == 39 {
                40
            } else {
                rng.random_range(0..4)
            };
            for _ in 0..insertions {
                insert(&mut rng, &mut live, [&mut counters, &mut direct, &mut full]);
            }
            // Insert then remove before any update: never appears.
            if frame % 7 == 0 {
                let id = counters.insert(random_box(&mut rng)).unwrap();
                assert_eq!(direct.insert(random_box(&mut rng)).unwrap(), id);
                assert_eq!(full.insert(random_box(&mut rng)).unwrap(), id);
                for s in [&mut counters, &mut direct, &mut full] {
                    s.remove(id).unwrap();
                }
            }

            let expected = brute(&live);
            let added = expected.difference(&previous).count();
            let removed = previous.difference(&expected).count();
            let stats = [
                if frame % 25 == 24 {
                    counters.update_full_resort()
                } else {
                    counters.update()
                },
                direct.update(),
                full.update_full_resort(),
            ];
            for (s, st) in [&counters, &direct, &full].into_iter().zip(stats) {
                let got: Pairs = s.pairs().collect();
                assert_eq!(got, expected, "frame {frame}, {:?}", s.tracking());
                assert!(got.iter().all(|(a, b)| a < b));
                assert_eq!(s.pair_count(), expected.len());
                assert_eq!((st.added, st.removed), (added, removed), "frame {frame}");
                assert_eq!(s.len(), live.len());
                s.check_invariants();
            }
            if stats[0].rebuilt {
                rebuilt_frames += 1;
            } else {
                incremental_frames += 1;
                total_swaps += stats[0].swaps;
            }
            assert_eq!(
                stats[1].swaps,
                if stats[1].rebuilt { 0 } else { stats[1].swaps }
            );
            previous = expected;
        }
        // Both code paths were exercised, and the incremental one did real work.
        assert!(
            incremental_frames > 200,
            "{incremental_frames} incremental frames"
        );
        assert!(rebuilt_frames >= 10, "{rebuilt_frames} rebuilt frames");
        assert!(total_swaps > 10_000, "{total_swaps} swaps");
        assert!(
            previous.len() > 20,
            "too few overlaps to be a meaningful test"
        );
    }

    #[test]
    fn touching_identical_and_degenerate_boxes() {
        let unit = |x: f32, y: f32, z: f32| {
            Aabb::new(Vec3::new(x, y, z), Vec3::new(x + 1.0, y + 1.0, z + 1.0))
        };
        let boxes = [
            unit(0.0, 0.0, 0.0),
            unit(1.0, 0.0, 0.0),                           // shares a face with 0
            unit(1.0, 1.0, 0.0),                           // shares an edge with 0
            unit(1.0, 1.0, 1.0),                           // shares a corner with 0
            unit(0.0, 0.0, 0.0),                           // identical to 0
            Aabb::new(Vec3::splat(1.0), Vec3::splat(1.0)), // a point at 0's corner
            unit(1.0_f32.next_up(), 0.0, 0.0),             // one ulp away from 0
            Aabb::new(Vec3::new(-0.0, -5.0, -5.0), Vec3::new(0.0, -1.0, 5.0)), // flat, signed zero
            Aabb::new(Vec3::new(-0.0, -1.0, 0.5), Vec3::new(-0.0, 0.0, 0.5)), // touches 0 and 7
        ];
        for tracking in [PairTracking::AxisCounters, PairTracking::DirectTest] {
            let mut sap = SweepAndPrune::with_tracking(tracking);
            let ids: Vec<ProxyId> = boxes.iter().map(|&b| sap.insert(b).unwrap()).collect();
            // Insert in two batches so both the rebuild and the per-box insertion run.
            let late = sap.insert(unit(0.5, 0.5, 0.5)).unwrap();
            sap.remove(late).unwrap();
            sap.update();
            let again = sap.insert(unit(0.5, 0.5, -1.0)).unwrap(); // touches 0 from below
            let stats = sap.update();
            assert!(!stats.rebuilt);
            let mut live: BTreeMap<ProxyId, Aabb> = ids.iter().copied().zip(boxes).collect();
            live.insert(again, unit(0.5, 0.5, -1.0));
            let expected = brute(&live);
            assert_eq!(sap.pairs().collect::<Pairs>(), expected);
            for p in [(0, 1), (0, 2), (0, 3), (0, 4), (0, 5), (0, 8), (7, 8)] {
                assert!(sap.overlapping(ids[p.0], ids[p.1]), "{p:?}");
            }
            assert!(!sap.overlapping(ids[0], ids[6]));
            assert!(sap.overlapping(ids[0], again));
            // Slide box 1 one ulp right: the face contact breaks.
            let moved = unit(1.0_f32.next_up(), 0.0, 0.0);
            sap.set_aabb(ids[1], moved).unwrap();
            let stats = sap.update();
            assert!(!sap.overlapping(ids[0], ids[1]));
            live.insert(ids[1], moved);
            let expected_now = brute(&live);
            assert_eq!(sap.pairs().collect::<Pairs>(), expected_now);
            assert_eq!(stats.removed, expected.difference(&expected_now).count());
            assert!(stats.swaps > 0);
            sap.check_invariants();
        }
    }

    #[test]
    fn static_scene_costs_no_swaps_and_errors_are_typed() {
        let mut sap = SweepAndPrune::new();
        let a = sap.insert(Aabb::new(Vec3::ZERO, Vec3::ONE)).unwrap();
        let b = sap
            .insert(Aabb::new(Vec3::splat(0.5), Vec3::splat(2.0)))
            .unwrap();
        let first = sap.update();
        assert_eq!((first.added, first.removed, first.rebuilt), (1, 0, true));
        let second = sap.update();
        assert_eq!(second, UpdateStats::default());
        assert_eq!(sap.pairs().collect::<Vec<_>>(), vec![(a, b)]);

        let nan = Aabb::new(Vec3::new(f32::NAN, 0.0, 0.0), Vec3::ONE);
        assert!(matches!(sap.insert(nan), Err(SapError::InvalidAabb { .. })));
        let inverted = Aabb::new(Vec3::ONE, Vec3::ZERO);
        assert!(matches!(
            sap.set_aabb(a, inverted),
            Err(SapError::InvalidAabb { .. })
        ));
        assert!(matches!(
            sap.insert(Aabb::EMPTY),
            Err(SapError::InvalidAabb { .. })
        ));
        assert_eq!(sap.remove(ProxyId(99)), Err(SapError::UnknownProxy(99)));
        sap.remove(b).unwrap();
        assert_eq!(sap.remove(b), Err(SapError::UnknownProxy(b.0)));
        assert!(sap.set_aabb(b, inverted).is_err());
        assert_eq!(sap.aabb(b), None);
        let stats = sap.update();
        assert_eq!((stats.added, stats.removed), (0, 1));
        assert_eq!(sap.pair_count(), 0);
        assert_eq!(sap.len(), 1);
        // The freed id is reused.
        assert_eq!(sap.insert(Aabb::new(Vec3::ZERO, Vec3::ONE)).unwrap(), b);
    }

    #[test]
    fn bench_harness_runs_and_variants_agree() {
        let report = bench::bench_sap(300, 5, 3);
        assert!(report.pairs_agree, "{report}");
        assert_eq!(report.boxes, 300);
        assert!(
            report.mean_pairs > 0.0 && report.mean_swaps > 0.0,
            "{report}"
        );
    }
}

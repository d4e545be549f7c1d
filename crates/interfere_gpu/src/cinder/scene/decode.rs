//! Reading a scene round back: the readback plan of its counters, queries, pair bitset and
//! points, and their decoding into pairs, localized points (§6.2) and not-closed reports.

use super::*;

impl SceneOutcome {
    /// Views that ran, and the most list entries one of them wrote.
    pub(crate) fn view_summary(&self) -> (usize, u64) {
        (
            self.views.len(),
            self.views
                .iter()
                .map(|(_, v)| v.stats.fragments)
                .max()
                .unwrap_or(0),
        )
    }
}

impl SceneRound {
    /// Adds the round's results to `plan`: per-view counters and queries, the gate's flag, and
    /// the pair and not-closed bitsets (`with_bits`) or the per-pair flags.
    pub(crate) fn plan(&self, plan: &mut ReadbackPlan, with_bits: bool) -> SceneRegions {
        let views = self.projections.len() as u64;
        SceneRegions {
            counters: plan.add(&self.counters, 0, self.counter_stride * views),
            queries: plan.add(&self.queries, 0, 8 * views),
            gate: if self.gated {
                plan.add(&self.draw_args, 48, 4)
            } else {
                Region::default()
            },
            pair_bits: if with_bits {
                plan.add(&self.pair_bits, 0, self.pair_words * 4)
            } else {
                Region::default()
            },
            open_bits: if with_bits {
                plan.add(&self.open_bits, 0, self.open_words * 4)
            } else {
                Region::default()
            },
            flags: match &self.flags {
                Some(flags) => plan.add(flags, 0, self.pairs * 4),
                None => Region::default(),
            },
        }
    }

    /// Decodes the round.
    pub(crate) fn decode(&self, regions: &SceneRegions, bytes: &[u8]) -> SceneOutcome {
        let counters = regions.counters.words(bytes);
        let queries: Vec<u64> = bytemuck::pod_collect_to_vec(regions.queries.bytes(bytes));
        let later_ran = !self.gated || regions.gate.words(bytes)[0] != 0;
        let stride = (self.counter_stride / 4) as usize;
        let mut overflow = None;
        let mut views = Vec::new();
        for (v, projection) in self.projections.iter().enumerate() {
            if v > 0 && !later_ran {
                continue;
            }
            let c = &counters[v * stride..v * stride + 4];
            let fragments = u64::from(c[0]);
            if fragments > self.capacity {
                overflow = Some(overflow.unwrap_or(0).max(fragments));
            }
            let flagged = queries[v];
            views.push((
                v,
                ViewOutcome {
                    stats: ViewStats {
                        axis: projection.axis,
                        width: projection.width,
                        height: projection.height,
                        pixel_size: projection.pixel,
                        edge_offset: projection.offset,
                        fragments,
                        flagged_pixels: flagged,
                        read_back: flagged > 0,
                    },
                    points_found: u64::from(c[1]),
                    self_hits: u64::from(c[2]),
                    saturated: u64::from(c[3]),
                },
            ));
        }
        let mut hits = Vec::new();
        for (w, &word) in regions.pair_bits.words(bytes).iter().enumerate() {
            let mut word = word;
            while word != 0 {
                let bit = w as u64 * 32 + u64::from(word.trailing_zeros());
                word &= word - 1;
                hits.push(((bit / self.objects) as usize, (bit % self.objects) as usize));
            }
        }
        let open = regions.open_bits.words(bytes);
        let not_closed = (0..self.objects as usize)
            .filter(|&j| open.get(j / 32).is_some_and(|w| w >> (j % 32) & 1 == 1))
            .collect();
        SceneOutcome {
            overflow,
            views,
            hits,
            not_closed,
            flags: regions.flags.words(bytes).iter().map(|&f| f != 0).collect(),
        }
    }
}

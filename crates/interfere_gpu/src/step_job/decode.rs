//! Finishing a ready job on the CPU (any thread): the exact recasts of the flagged volume lines
//! and the per-pair reduction, and the exact filter of the traversal's triangle pairs, into a
//! [`StepJobAnswer`].

use super::*;

impl ReadyJob {
    /// The job's step.
    pub fn step(&self) -> u64 {
        self.plan.step
    }

    /// The CPU part of the answer: CInDeR's flagged pairs, the exact filter of each pair's
    /// triangle candidates (`tri_tri::exact_filter`), and each pair's volume reduced in `f64`
    /// with its flagged lines recast exactly (as [`crate::GpuVolume::compute`] does).
    pub fn finish(self) -> StepJobAnswer {
        let clock = Instant::now();
        let ReadyJob {
            plan,
            decoded,
            rounds,
            gpu_ms,
            mut stats,
        } = self;
        let flagged = plan.cinder.as_ref().map(|_| {
            let flags = decoded.cinder.as_deref().unwrap_or(&[]);
            plan.pairs
                .iter()
                .zip(flags)
                .filter(|(_, f)| **f)
                .map(|(p, _)| *p)
                .collect()
        });
        let triangles = plan.asked_triangles.then(|| {
            let mut candidates = vec![Vec::new(); plan.pairs.len()];
            if let Some(t) = &decoded.traversal {
                for p in &t.pairs {
                    if let Some(c) = candidates.get_mut(p.object_pair as usize) {
                        c.push((p.a, p.b));
                    }
                }
            }
            candidates
                .iter()
                .enumerate()
                .map(|(k, c)| {
                    let (ma, mb) = &plan.meshes[k];
                    tri_tri::exact_filter(ma.solid.mesh(), mb.solid.mesh(), &plan.b_to_a[k], c)
                })
                .collect()
        });
        let volumes = plan.volume.map(|v| {
            let raw = decoded.volume.unwrap_or_default();
            let starts = {
                let mut at = 0u64;
                let mut starts = Vec::with_capacity(v.batch.len());
                for &k in &v.batch {
                    starts.push(at);
                    if let VolumePair::Lines(prep, _) = &v.pairs[k] {
                        at += prep.total;
                    }
                }
                starts
            };
            v.pairs
                .into_iter()
                .enumerate()
                .map(|(k, pair)| match pair {
                    VolumePair::Failed(e) => Err(e),
                    VolumePair::Empty(r) => Ok(r),
                    VolumePair::Lines(prep, b) => {
                        let (lines, records) = raw.pair(starts[b], prep.total);
                        let (ma, mb) = &plan.meshes[k];
                        let mut report = GpuVolumeReport::default();
                        let r = reduce_pair(
                            &prep,
                            (ma.solid.mesh(), &ma.at_identity),
                            (mb.solid.mesh(), &mb.tree),
                            &plan.b_to_a[k],
                            lines,
                            records,
                            starts[b],
                            &mut report,
                        );
                        stats.recast_lines += report.recast;
                        r
                    }
                })
                .collect()
        });
        StepJobAnswer {
            step: plan.step,
            flagged,
            triangles,
            volumes,
            rounds,
            gpu_ms,
            cpu_ms: clock.elapsed().as_secs_f64() * 1e3,
            stats,
        }
    }
}

pub(super) fn empty_traversal() -> TraversalOutcome {
    TraversalOutcome {
        pairs: Vec::new(),
        lengths: Vec::new(),
        list_overflow: None,
        hits_needed: 0,
        hit_overflow: false,
    }
}

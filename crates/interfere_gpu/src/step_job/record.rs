//! Recording and submitting one round of a job: the stages not final yet (CInDeR, the palette
//! traversal, the volume lines) in one command encoder inside wgpu error scopes, and the readback
//! of their results through one staging buffer.

use super::*;

impl StepJobRunner {
    /// Records the stages that are not final yet into one encoder, submits it and starts the
    /// readback (or, with nothing to do, leaves the job ready for the next poll).
    pub(super) fn submit_round(
        &self,
        ctx: &GpuContext,
        job: &mut PendingJob,
    ) -> Result<(), GpuError> {
        let plan = &job.plan;
        let need_cinder = job.decoded.cinder.is_none() && plan.cinder.is_some();
        let need_traversal = job.decoded.traversal.is_none();
        let need_volume = job.decoded.volume.is_none();
        if !need_cinder && !need_traversal && !need_volume {
            job.round = None;
            return Ok(());
        }
        let round = scoped(ctx, WHAT, || {
            let mut encoder = ctx
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("interfere step job"),
                });
            let mut readback = ReadbackPlan::default();
            let cinder = match (&plan.cinder, need_cinder) {
                (Some(c), true) => {
                    let r = self.cinder.record(
                        ctx,
                        &mut encoder,
                        &c.scene,
                        &c.projections,
                        &c.options,
                        c.capacity,
                        false,
                        Some(&c.pair_ids),
                    )?;
                    let regions = r.plan(&mut readback, false);
                    Some((r, regions))
                }
                _ => None,
            };
            let traversal = match (&plan.traversal, need_traversal) {
                (Some(t), true) => {
                    let host_flags;
                    let flags = match (&cinder, &job.decoded.cinder) {
                        (Some((r, _)), _) => r.flags.as_ref().expect("pairs requested"),
                        (None, Some(f)) => {
                            let words: Vec<u32> = f.iter().map(|&x| u32::from(x)).collect();
                            host_flags = storage_buffer(
                                ctx,
                                "job pair flags",
                                &words,
                                wgpu::BufferUsages::empty(),
                            )?;
                            &host_flags
                        }
                        (None, None) => {
                            host_flags = storage_buffer(
                                ctx,
                                "job pair flags",
                                &vec![1u32; plan.pairs.len()],
                                wgpu::BufferUsages::empty(),
                            )?;
                            &host_flags
                        }
                    };
                    let r = self.traversal.record(
                        ctx,
                        &mut encoder,
                        &RoundSpec {
                            set: &plan.uploaded.set,
                            palette: &t.palette,
                            pairs: plan.pairs.len() as u32,
                            start: Start::Flags(flags),
                            first_step: 0,
                            last_step: t.last,
                            list_capacity: t.list_capacity,
                            hit_capacity: t.hit_capacity,
                            inflate: 0.0,
                            inflate_below: 0,
                            store_at: None,
                        },
                        None,
                    )?;
                    let regions = r.plan(&mut readback);
                    Some((r, regions))
                }
                _ => None,
            };
            let volume = match (&plan.volume, need_volume) {
                (Some(v), true) => {
                    let batch: Vec<BatchPair<'_>> = v
                        .batch
                        .iter()
                        .map(|&k| {
                            let VolumePair::Lines(prep, _) = &v.pairs[k] else {
                                unreachable!("the batch holds pairs with lines")
                            };
                            let (ma, mb) = plan.mesh_index[k];
                            BatchPair {
                                prep,
                                a: plan.uploaded.loc(ma),
                                b: plan.uploaded.loc(mb),
                            }
                        })
                        .collect();
                    let b = self.volume.record(
                        ctx,
                        &mut encoder,
                        &batch,
                        &plan.uploaded.vol_tris,
                        &plan.uploaded.set.levels,
                        v.capacity,
                    )?;
                    let regions = b.plan(&mut readback);
                    Some((b, regions))
                }
                _ => None,
            };
            let staging = readback.record(ctx, &mut encoder)?;
            ctx.queue.submit([encoder.finish()]);
            Ok(Round {
                cinder,
                traversal,
                volume,
                watch: Some(MapWatch::start(staging)),
            })
        })?;
        job.round = Some(round);
        job.rounds += 1;
        job.stalls = StallCount::default();
        Ok(())
    }
}

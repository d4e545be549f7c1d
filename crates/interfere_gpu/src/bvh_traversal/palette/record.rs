//! Recording a traversal round on the GPU (Greß–Zachmann 2004, §4–5 with a pose palette): the
//! starting list, then per step the SAT-lite count pass, the indirect prefix sum, the scatter pass
//! and the `advance` kernel, all sized on the GPU; and the round's readback plan and decoding.

use super::*;

impl GpuTriangleTraversal {
    /// Records one traversal round into `encoder`: the starting list, then for every step from
    /// `first_step` to `last_step` the count pass, the indirect prefix sum, the scatter pass and
    /// the `advance` kernel, all sized on the GPU. Nothing is read back here.
    pub(crate) fn record(
        &self,
        ctx: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        spec: &RoundSpec<'_>,
        mut stamps: Option<&mut Timestamps>,
    ) -> Result<TraversalRound, GpuError> {
        let device = &ctx.device;
        let capacity = spec.list_capacity.max(1);
        if capacity > u64::from(u32::MAX / 4) || spec.hit_capacity > u64::from(u32::MAX / 4) {
            return Err(GpuError::InvalidInput {
                what: "GPU triangle traversal",
                reason: format!(
                    "list capacity {capacity} or hit capacity {} exceeds u32 indexing",
                    spec.hit_capacity
                ),
            });
        }
        let steps = spec.last_step + 1 - spec.first_step.min(spec.last_step + 1);
        let lists = [
            Growable::create(ctx, "GPU pair list", capacity * 12)?,
            Growable::create(ctx, "GPU pair list", capacity * 12)?,
        ];
        let offsets = Growable::create(ctx, "GPU pair offsets", (capacity + 1) * 4)?;
        let hits = Growable::create(ctx, "GPU triangle pairs", (4 + 3 * spec.hit_capacity) * 4)?;
        let scan = self.scan.indirect(ctx, &offsets, capacity + 1)?;
        let info = Growable::create(ctx, "GPU traversal info", (4 + steps as u64 + 2) * 4)?;
        let args = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("GPU traversal dispatch arguments"),
            size: 16 * (1 + scan.levels as u64),
            usage: wgpu::BufferUsages::INDIRECT
                | wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let params = Params {
            n: 0,
            groups_x: 0,
            capacity: capacity as u32,
            step: spec.first_step as u32,
            hit_capacity: spec.hit_capacity as u32,
            inflate_below: spec.inflate_below,
            pad: [0; 2],
            margin: [
                TRI_PATH_BOX_MARGIN,
                BOX_ABSOLUTE_MARGIN,
                TRI_RELATIVE_EPS,
                TRI_ABSOLUTE_EPS,
            ],
            inflate: [spec.inflate, 0.0, 0.0, 0.0],
        };
        let step_params = init_buffer(
            ctx,
            "bvh palette params",
            bytemuck::bytes_of(&params),
            wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::STORAGE,
        );
        let (start_pairs, flags) = match spec.start {
            Start::Flags(flags) => (spec.pairs, flags.clone()),
            Start::List(_, len) => (
                to_u32("GPU entrance list", len as usize)?,
                Growable::create(ctx, "GPU palette flags", 4)?,
            ),
        };
        let control = Control {
            scan_levels: scan.levels as u32,
            scan_stride: (scan.stride / 4) as u32,
            max_groups: device.limits().max_compute_workgroups_per_dimension,
            pairs: start_pairs,
            first_step: spec.first_step as u32,
            pad: [0; 3],
        };
        let control_uniform = init_buffer(
            ctx,
            "palette control",
            bytemuck::bytes_of(&control),
            wgpu::BufferUsages::UNIFORM,
        );
        let bind = |buffers: &[&wgpu::Buffer], layout: &wgpu::BindGroupLayout| {
            let entries: Vec<wgpu::BindGroupEntry> = buffers
                .iter()
                .enumerate()
                .map(|(i, buffer)| wgpu::BindGroupEntry {
                    binding: i as u32,
                    resource: buffer.as_entire_binding(),
                })
                .collect();
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("bvh palette bind group"),
                layout,
                entries: &entries,
            })
        };
        let set = spec.set;
        let steps_bind = [0, 1].map(|cur| {
            bind(
                &[
                    &set.nodes,
                    &set.levels,
                    &set.tris,
                    spec.palette,
                    &lists[cur],
                    &lists[1 - cur],
                    &offsets,
                    &hits,
                    &step_params,
                ],
                &self.layout,
            )
        });
        let control_bind = bind(
            &[
                &offsets,
                &step_params,
                &scan.params,
                &args,
                &info,
                &flags,
                &lists[0],
                &control_uniform,
            ],
            &self.control_layout,
        );
        let store_bytes = capacity * 12;
        let stored = match spec.store_at {
            Some(_) => Some(Growable::create(ctx, "GPU entrance list", store_bytes)?),
            None => None,
        };
        // The starting list.
        if let Start::List(list, len) = spec.start
            && len > 0
        {
            encoder.copy_buffer_to_buffer(list, 0, &lists[0], 0, len.min(capacity) * 12);
        }
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("bvh palette start"),
                timestamp_writes: None,
            });
            pass.set_bind_group(0, &control_bind, &[]);
            match spec.start {
                Start::Flags(_) => pass.set_pipeline(&self.seed),
                Start::List(..) => pass.set_pipeline(&self.begin),
            }
            pass.dispatch_workgroups(1, 1, 1);
        }
        if let (Some(at), Some(copy)) = (spec.store_at, &stored)
            && at == spec.first_step
        {
            encoder.copy_buffer_to_buffer(&lists[0], 0, copy, 0, store_bytes);
        }
        for k in 0..steps {
            let cur = k % 2;
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("bvh palette count"),
                    timestamp_writes: stamps.as_deref_mut().and_then(|t| t.pass(Stage::Test)),
                });
                pass.set_pipeline(&self.count);
                pass.set_bind_group(0, &steps_bind[cur], &[]);
                pass.dispatch_workgroups_indirect(&args, 0);
            }
            let record_scan = |encoder: &mut wgpu::CommandEncoder| {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("bvh palette scan"),
                    timestamp_writes: None,
                });
                self.scan.record_indirect(&mut pass, &scan, &args, 16);
            };
            match stamps.as_deref_mut() {
                Some(t) => t.bracket(encoder, Stage::Scan, record_scan),
                None => record_scan(encoder),
            }
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("bvh palette scatter"),
                    timestamp_writes: stamps.as_deref_mut().and_then(|t| t.pass(Stage::Scatter)),
                });
                pass.set_pipeline(&self.scatter);
                pass.set_bind_group(0, &steps_bind[cur], &[]);
                pass.dispatch_workgroups_indirect(&args, 0);
                pass.set_pipeline(&self.advance);
                pass.set_bind_group(0, &control_bind, &[]);
                pass.dispatch_workgroups(1, 1, 1);
            }
            if let (Some(at), Some(copy)) = (spec.store_at, &stored)
                && at == spec.first_step + k + 1
            {
                encoder.copy_buffer_to_buffer(&lists[1 - cur], 0, copy, 0, store_bytes);
            }
        }
        Ok(TraversalRound {
            hits,
            info,
            steps,
            first_step: spec.first_step,
            hit_capacity: spec.hit_capacity,
            stored,
            _keep: vec![
                lists[0].clone(),
                lists[1].clone(),
                offsets,
                args,
                step_params,
                control_uniform,
                flags,
                scan.params.clone(),
            ],
        })
    }
}

impl TraversalRound {
    /// Adds the round's results (per-step lengths and overflow, then the hit list) to `plan`.
    pub(crate) fn plan(&self, plan: &mut ReadbackPlan) -> TraversalRegions {
        TraversalRegions {
            info: plan.add(&self.info, 0, (4 + self.steps as u64 + 1) * 4),
            hits: plan.add(&self.hits, 0, (4 + 3 * self.hit_capacity) * 4),
        }
    }

    /// Decodes the round from the staging bytes.
    pub(crate) fn decode(&self, regions: &TraversalRegions, bytes: &[u8]) -> TraversalOutcome {
        let info = regions.info.words(bytes);
        let hits = regions.hits.words(bytes);
        let list_overflow = (info[0] > 0).then(|| ((info[0] - 1) as usize, u64::from(info[1])));
        let lengths: Vec<u64> = info[4..4 + self.steps]
            .iter()
            .map(|&n| u64::from(n))
            .take_while(|&n| n > 0)
            .collect();
        let hits_needed = u64::from(hits[0]);
        let stored = hits_needed.min(self.hit_capacity) as usize;
        let mut pairs: Vec<TrianglePair> = hits[4..4 + 3 * stored]
            .chunks_exact(3)
            .map(|w| TrianglePair {
                object_pair: w[0],
                a: w[1],
                b: w[2],
            })
            .collect();
        pairs.sort_unstable();
        let _ = self.first_step;
        TraversalOutcome {
            pairs,
            lengths,
            list_overflow,
            hits_needed,
            hit_overflow: hits_needed > self.hit_capacity,
        }
    }
}

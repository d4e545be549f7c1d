//! Brute-force m × n triangle-pair kernel on the GPU (Greß & Zachmann 2004, section 3: the
//! all-pairs baseline that the hierarchy accelerates), shader `shaders/tri_tri.wgsl` +
//! `shaders/brute_force.wgsl`. Every pair runs the same conservative `f32` test as the leaves of
//! [`crate::GpuTriangleTraversal`], so the two report the same set (tested).
//!
//! One dispatch per object pair (an `8 × 8` workgroup grid over A's × B's triangles). Hits are
//! appended with an atomic counter into a buffer that starts small; the count is read back
//! first, and when it exceeded the buffer (but not the caller's capacity) the buffer is grown to
//! the count and the dispatches run again; then only that many hits are read back.

use crate::bvh_traversal::palette::{new_hits, palette_entries, read_hits};
use crate::bvh_traversal::{GpuMeshSet, ObjectPair, TrianglePairs};
use crate::compute::{compute_kernels, storage_entry, uniform_entry};
use crate::context::GpuContext;
use crate::error::GpuError;
use crate::readback::{check_dispatch, map_and_copy, storage_buffer};
use crate::timing::{Stage, StageTimings, Timestamps};
use crate::tri_tri::{TRI_ABSOLUTE_EPS, TRI_RELATIVE_EPS};
use crate::{shaders, tri_tri};
use interfere_geometry::bvh::bfs::EntranceUse;
use std::time::Instant;
use wgpu::util::DeviceExt;

/// Hits the first attempt makes room for.
const INITIAL_HITS: u64 = 1 << 14;

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    obj: u32,
    m: u32,
    n: u32,
    hit_capacity: u32,
    margin: [f32; 4],
}

/// The compiled brute-force kernel.
pub struct GpuBruteForce {
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
}

impl GpuBruteForce {
    /// Compiles the kernel on `ctx`'s device.
    pub fn new(ctx: &GpuContext) -> Self {
        let module = tri_tri::module(&ctx.device, "brute_force.wgsl", shaders::BRUTE_FORCE);
        let (layout, [pipeline]) = compute_kernels(
            &ctx.device,
            "brute force",
            &module,
            &[
                storage_entry(0, true),
                storage_entry(1, true),
                storage_entry(2, false),
                uniform_entry(3),
            ],
            ["all_pairs"],
        );
        Self { pipeline, layout }
    }

    /// Every triangle pair of every object pair of `pairs` through the GPU triangle test (same
    /// result contract as [`crate::GpuTriangleTraversal::triangle_pairs`]). More than `capacity`
    /// hits is [`GpuError::PairListOverflow`]; a mesh with more than
    /// `8 × max_compute_workgroups_per_dimension` triangles is [`GpuError::DispatchTooLarge`].
    pub fn triangle_pairs(
        &self,
        ctx: &GpuContext,
        set: &GpuMeshSet,
        pairs: &[ObjectPair],
        capacity: u32,
    ) -> Result<TrianglePairs, GpuError> {
        let started = Instant::now();
        let mut timings = StageTimings::default();
        let palette = palette_entries(set, pairs)?;
        let limit = u64::from(capacity.min(u32::MAX / 4));
        let shapes = pairs
            .iter()
            .map(|p| {
                let m = set.meshes[p.a as usize].triangles;
                let n = set.meshes[p.b as usize].triangles;
                let gx = check_dispatch(ctx, "brute-force kernel", u64::from(m).div_ceil(8))?;
                let gy = check_dispatch(ctx, "brute-force kernel", u64::from(n).div_ceil(8))?;
                Ok((m, n, gx, gy))
            })
            .collect::<Result<Vec<_>, GpuError>>()?;
        let palette_buffer =
            storage_buffer(ctx, "GPU palette", &palette, wgpu::BufferUsages::empty())?;
        let mut room = INITIAL_HITS.min(limit);
        let mut stamps = Timestamps::new(ctx);
        loop {
            let hits = new_hits(ctx, room)?;
            let mut encoder = ctx.device.create_command_encoder(&Default::default());
            let binds: Vec<wgpu::BindGroup> = shapes
                .iter()
                .enumerate()
                .map(|(k, &(m, n, _, _))| {
                    let params = Params {
                        obj: k as u32,
                        m,
                        n,
                        hit_capacity: room as u32,
                        margin: [0.0, 0.0, TRI_RELATIVE_EPS, TRI_ABSOLUTE_EPS],
                    };
                    let uniform =
                        ctx.device
                            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                                label: Some("brute force params"),
                                contents: bytemuck::bytes_of(&params),
                                usage: wgpu::BufferUsages::UNIFORM,
                            });
                    let buffers = [&set.tris, &palette_buffer, &hits.buffer, &uniform];
                    let entries: Vec<wgpu::BindGroupEntry> = buffers
                        .iter()
                        .enumerate()
                        .map(|(i, b)| wgpu::BindGroupEntry {
                            binding: i as u32,
                            resource: b.as_entire_binding(),
                        })
                        .collect();
                    ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
                        label: Some("brute force bind group"),
                        layout: &self.layout,
                        entries: &entries,
                    })
                })
                .collect();
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("brute force"),
                    timestamp_writes: stamps.as_mut().and_then(|t| t.pass(Stage::Test)),
                });
                pass.set_pipeline(&self.pipeline);
                for (bind, &(_, _, gx, gy)) in binds.iter().zip(&shapes) {
                    pass.set_bind_group(0, bind, &[]);
                    pass.dispatch_workgroups(gx, gy, 1);
                }
            }
            let staging = ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("brute force count staging"),
                size: 4,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            encoder.copy_buffer_to_buffer(&hits.buffer, 0, &staging, 0, 4);
            ctx.queue.submit([encoder.finish()]);
            let t = Instant::now();
            let count =
                u64::from(map_and_copy::<u32>(ctx, "brute-force hit count", &staging, 1)?[0]);
            timings.readback += t.elapsed();
            timings.round_trips += 1;
            if count > limit {
                return Err(GpuError::PairListOverflow {
                    step: 0,
                    needed: count,
                    capacity,
                });
            }
            if count > room {
                room = count;
                // The timings of a rerun replace the first attempt's.
                stamps = Timestamps::new(ctx);
                continue;
            }
            let t = Instant::now();
            let out = read_hits(ctx, &hits.buffer, count)?;
            timings.readback += t.elapsed();
            timings.round_trips += 1;
            timings.wall = started.elapsed();
            if let Some(stamps) = stamps {
                timings.kernels = stamps.resolve(ctx)?.map(|mut k| {
                    k.scan = None;
                    k
                });
            }
            return Ok(TrianglePairs {
                pairs: out,
                timings,
                entrance: EntranceUse::Off,
                list_lengths: Vec::new(),
            });
        }
    }
}

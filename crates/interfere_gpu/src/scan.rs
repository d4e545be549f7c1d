//! GPU exclusive prefix sum over `u32` (Blelloch scan, recursive over block sums).
//!
//! Greß–Zachmann (2004, section 4) build each level's node-pair list from per-pair child counts
//! with a prefix sum; this is that primitive, done in compute shaders instead of the paper's
//! fragment-program reduction. [`exclusive_scan_cpu`] is its CPU twin.

use crate::compute::{compute_kernels, storage_entry, uniform_entry};
use crate::context::GpuContext;
use crate::error::GpuError;
use crate::readback::{check_dispatch, read_buffer, storage_buffer, storage_buffer_sized};
use crate::shaders;
use wgpu::util::DeviceExt;

/// Elements scanned by one workgroup.
pub const BLOCK: u64 = 512;

/// Exclusive prefix sum on the CPU (wrapping like the GPU's `u32` adds); returns the total.
pub fn exclusive_scan_cpu(values: &mut [u32]) -> u32 {
    let mut running = 0u32;
    for v in values.iter_mut() {
        let x = *v;
        *v = running;
        running = running.wrapping_add(x);
    }
    running
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    n: u32,
    groups_x: u32,
    _pad: [u32; 2],
}

/// Compiled scan pipelines; reusable across calls and buffers.
pub struct PrefixSum {
    scan_blocks: wgpu::ComputePipeline,
    add_offsets: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
}

/// The buffers one scan needs besides its data; keep it to scan again without reallocating.
#[derive(Default)]
pub struct ScanScratch {
    levels: Vec<(u64, wgpu::Buffer)>,
}

impl ScanScratch {
    fn level(
        &mut self,
        ctx: &GpuContext,
        index: usize,
        elements: u64,
    ) -> Result<&wgpu::Buffer, GpuError> {
        let needs_new = match self.levels.get(index) {
            Some((capacity, _)) => *capacity < elements,
            None => true,
        };
        if needs_new {
            let capacity = elements.next_power_of_two().max(BLOCK);
            let buffer = storage_buffer_sized(
                ctx,
                "prefix-sum block sums",
                capacity * 4,
                wgpu::BufferUsages::empty(),
            )?;
            if index < self.levels.len() {
                self.levels[index] = (capacity, buffer);
            } else {
                self.levels.push((capacity, buffer));
            }
        }
        Ok(&self.levels[index].1)
    }
}

/// Splits `groups` workgroups into an `(x, y)` grid within the device's per-dimension limit.
pub(crate) fn dispatch_shape(ctx: &GpuContext, groups: u64) -> Result<(u32, u32), GpuError> {
    let max = ctx.device.limits().max_compute_workgroups_per_dimension as u64;
    if groups <= max {
        return Ok((groups as u32, 1));
    }
    let y = groups.div_ceil(max);
    check_dispatch(ctx, "prefix sum", y)?;
    Ok((max as u32, y as u32))
}

impl PrefixSum {
    /// Compiles the scan kernels on `ctx`'s device.
    pub fn new(ctx: &GpuContext) -> Self {
        let device = &ctx.device;
        let module = shaders::module(device, "scan.wgsl", shaders::SCAN);
        let (layout, [scan_blocks, add_offsets]) = compute_kernels(
            device,
            "scan",
            &module,
            &[
                storage_entry(0, false),
                storage_entry(1, false),
                uniform_entry(2),
            ],
            ["scan_blocks", "add_offsets"],
        );
        Self {
            scan_blocks,
            add_offsets,
            layout,
        }
    }

    /// Records an in-place exclusive scan of the first `n` elements of `data` into `encoder`.
    /// The total is written to the first element of the returned buffer (the top level's block
    /// sum), which stays valid until `scratch` is used again.
    pub fn encode<'s>(
        &self,
        ctx: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        data: &wgpu::Buffer,
        n: u64,
        scratch: &'s mut ScanScratch,
    ) -> Result<&'s wgpu::Buffer, GpuError> {
        if n > u32::MAX as u64 {
            return Err(GpuError::InvalidInput {
                what: "prefix sum",
                reason: format!("{n} elements exceed u32 indexing"),
            });
        }
        // Level sizes: n, ceil(n/B), ceil(n/B^2), ... down to one block.
        let mut sizes = vec![n.max(1)];
        while *sizes.last().unwrap_or(&1) > BLOCK {
            let last = *sizes.last().unwrap_or(&1);
            sizes.push(last.div_ceil(BLOCK));
        }
        for (level, &size) in sizes.iter().enumerate() {
            scratch.level(ctx, level, size.div_ceil(BLOCK))?;
        }
        let mut bind_groups = Vec::with_capacity(sizes.len());
        for (level, &size) in sizes.iter().enumerate() {
            let groups = size.div_ceil(BLOCK);
            let (gx, gy) = dispatch_shape(ctx, groups)?;
            let params = Params {
                n: size as u32,
                groups_x: gx,
                _pad: [0; 2],
            };
            let uniform = ctx
                .device
                .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("scan params"),
                    contents: bytemuck::bytes_of(&params),
                    usage: wgpu::BufferUsages::UNIFORM,
                });
            let input = if level == 0 {
                data
            } else {
                &scratch.levels[level - 1].1
            };
            let sums = &scratch.levels[level].1;
            let bind_group = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("scan bind group"),
                layout: &self.layout,
                entries: &[
                    wgpu::BindGroupEntry {
                        binding: 0,
                        resource: input.as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: 1,
                        resource: sums.as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: 2,
                        resource: uniform.as_entire_binding(),
                    },
                ],
            });
            bind_groups.push((bind_group, gx, gy));
        }
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("prefix sum"),
            timestamp_writes: None,
        });
        pass.set_pipeline(&self.scan_blocks);
        for (bind_group, gx, gy) in &bind_groups {
            pass.set_bind_group(0, bind_group, &[]);
            pass.dispatch_workgroups(*gx, *gy, 1);
        }
        pass.set_pipeline(&self.add_offsets);
        for (bind_group, gx, gy) in bind_groups.iter().rev().skip(1) {
            pass.set_bind_group(0, bind_group, &[]);
            pass.dispatch_workgroups(*gx, *gy, 1);
        }
        drop(pass);
        Ok(&scratch.levels[sizes.len() - 1].1)
    }

    /// Uploads `values`, scans them on the GPU and reads back the exclusive prefix sums and the
    /// total. Convenience for tests and tools; kernels chain [`PrefixSum::encode`] instead.
    pub fn scan(&self, ctx: &GpuContext, values: &[u32]) -> Result<(Vec<u32>, u32), GpuError> {
        let data = storage_buffer(ctx, "prefix-sum data", values, wgpu::BufferUsages::COPY_DST)?;
        let mut scratch = ScanScratch::default();
        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        let total_buffer =
            self.encode(ctx, &mut encoder, &data, values.len() as u64, &mut scratch)?;
        ctx.queue.submit([encoder.finish()]);
        let total = read_buffer::<u32>(ctx, "prefix-sum total", total_buffer, 1)?[0];
        let scanned = read_buffer::<u32>(ctx, "prefix-sum data", &data, values.len())?;
        Ok((scanned, if values.is_empty() { 0 } else { total }))
    }
}

/// Number of scan levels [`PrefixSum::encode`] uses for `n` elements (1 up to [`BLOCK`]).
pub(crate) fn scan_levels(n: u64) -> usize {
    let mut levels = 1;
    let mut size = n.max(1);
    while size > BLOCK {
        size = size.div_ceil(BLOCK);
        levels += 1;
    }
    levels
}

/// Per level `l` of a scan of `n` elements (`levels` levels, as sized for the largest `n`):
/// its length and its dispatch shape `(x, y)` within `max_groups` workgroups per dimension.
/// The GPU twin is `scan_shape` in `shaders/palette_control.wgsl`.
pub(crate) fn scan_shape(n: u64, levels: usize, max_groups: u64) -> Vec<(u64, u32, u32)> {
    let mut out = Vec::with_capacity(levels);
    let mut size = n.max(1);
    for _ in 0..levels {
        let groups = size.div_ceil(BLOCK);
        let x = groups.min(max_groups);
        out.push((size, x as u32, groups.div_ceil(x) as u32));
        size = groups;
    }
    out
}

/// A prefix sum whose length is decided on the GPU: its block-sum buffers are sized for the
/// largest length, and each level reads its `Params` (length, dispatch width) from
/// [`IndirectScan::params`] at `l · stride` and its workgroup counts from an indirect-argument
/// buffer, both written by a GPU kernel (`shaders/palette_control.wgsl`), so no level needs a
/// readback. Unneeded top levels scan one element, which changes nothing.
pub(crate) struct IndirectScan {
    /// Levels (fixed by the largest length).
    pub(crate) levels: usize,
    /// Per level, at `l · stride` bytes: `n`, `groups_x`, 0, 0 (uniform and storage usage).
    pub(crate) params: wgpu::Buffer,
    /// Bytes between two levels' params (the device's uniform offset alignment, at least 16).
    pub(crate) stride: u64,
    _sums: Vec<wgpu::Buffer>,
    bind_groups: Vec<wgpu::BindGroup>,
}

impl PrefixSum {
    /// The buffers and bind groups of an indirect scan over up to `max_n` elements of `data`.
    pub(crate) fn indirect(
        &self,
        ctx: &GpuContext,
        data: &wgpu::Buffer,
        max_n: u64,
    ) -> Result<IndirectScan, GpuError> {
        if max_n > u64::from(u32::MAX) {
            return Err(GpuError::InvalidInput {
                what: "prefix sum",
                reason: format!("{max_n} elements exceed u32 indexing"),
            });
        }
        let levels = scan_levels(max_n);
        let shape = scan_shape(max_n, levels, u64::MAX);
        let stride = u64::from(ctx.device.limits().min_uniform_buffer_offset_alignment).max(16);
        let params = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("indirect scan params"),
            size: stride * levels as u64,
            usage: wgpu::BufferUsages::UNIFORM
                | wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut sums = Vec::with_capacity(levels);
        for &(size, _, _) in &shape {
            sums.push(storage_buffer_sized(
                ctx,
                "prefix-sum block sums",
                size.div_ceil(BLOCK).max(1) * 4,
                wgpu::BufferUsages::empty(),
            )?);
        }
        let bind_groups = (0..levels)
            .map(|l| {
                let input = if l == 0 { data } else { &sums[l - 1] };
                ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("indirect scan bind group"),
                    layout: &self.layout,
                    entries: &[
                        wgpu::BindGroupEntry {
                            binding: 0,
                            resource: input.as_entire_binding(),
                        },
                        wgpu::BindGroupEntry {
                            binding: 1,
                            resource: sums[l].as_entire_binding(),
                        },
                        wgpu::BindGroupEntry {
                            binding: 2,
                            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                                buffer: &params,
                                offset: l as u64 * stride,
                                size: wgpu::BufferSize::new(16),
                            }),
                        },
                    ],
                })
            })
            .collect();
        Ok(IndirectScan {
            levels,
            params,
            stride,
            _sums: sums,
            bind_groups,
        })
    }

    /// Records the scan's dispatches into `pass`: level `l` takes its workgroup counts from
    /// `args` at `args_offset + 16 · l`.
    pub(crate) fn record_indirect(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        scan: &IndirectScan,
        args: &wgpu::Buffer,
        args_offset: u64,
    ) {
        pass.set_pipeline(&self.scan_blocks);
        for (l, bind_group) in scan.bind_groups.iter().enumerate() {
            pass.set_bind_group(0, bind_group, &[]);
            pass.dispatch_workgroups_indirect(args, args_offset + 16 * l as u64);
        }
        pass.set_pipeline(&self.add_offsets);
        for (l, bind_group) in scan.bind_groups.iter().enumerate().rev().skip(1) {
            pass.set_bind_group(0, bind_group, &[]);
            pass.dispatch_workgroups_indirect(args, args_offset + 16 * l as u64);
        }
    }
}

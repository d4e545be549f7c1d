//! The batched volume kernel: every pair's lines cast in one dispatch, recorded into the
//! caller's encoder, and the readback plan and decoding of its records.

use super::*;

/// One pair of a batch: its preparation and where its two meshes are.
pub(crate) struct BatchPair<'p> {
    /// The prepared pair.
    pub prep: &'p PairPrep,
    /// Mesh A.
    pub a: MeshLoc,
    /// Mesh B.
    pub b: MeshLoc,
}

/// The GPU resources of one recorded batch (kept alive until it is read back).
pub(crate) struct VolumeBatch {
    pub(super) counter: wgpu::Buffer,
    pub(super) ray_out: wgpu::Buffer,
    pub(super) records: wgpu::Buffer,
    pub(super) lines: u64,
    pub(super) capacity: u64,
    pub(super) _keep: Vec<wgpu::Buffer>,
}

/// Where a batch's results land in the staging buffer.
pub(crate) struct VolumeRegions {
    pub(super) counter: Region,
    pub(super) ray_out: Region,
    pub(super) records: Region,
}

/// A batch read back: per line (overlap length bits, flags), and the endpoint records sorted by
/// line.
#[derive(Default)]
pub(crate) struct VolumeRaw {
    /// Records the kernel wanted to write (more than the capacity: the batch must be re-run).
    pub count: u64,
    /// Per line: length bits and flags.
    pub per_ray: Vec<[u32; 2]>,
    /// The records kept, sorted by line.
    pub records: Vec<Record>,
}

impl VolumeRaw {
    /// The lines and records of the pair whose lines are `start..start + len`.
    pub(crate) fn pair(&self, start: u64, len: u64) -> (&[[u32; 2]], &[Record]) {
        let lines = &self.per_ray[start as usize..(start + len) as usize];
        let from = self.records.partition_point(|r| u64::from(r.ray) < start);
        let to = self
            .records
            .partition_point(|r| u64::from(r.ray) < start + len);
        (lines, &self.records[from..to])
    }
}

impl VolumeKernel {
    /// Compiles the kernel on `ctx`'s device.
    pub(crate) fn new(ctx: &GpuContext) -> Self {
        let device = &ctx.device;
        let module = shaders::module(device, "volume.wgsl", shaders::VOLUME);
        let (layout, [pipeline]) = compute_kernels(
            device,
            "volume",
            &module,
            &[
                storage_entry(0, true),
                storage_entry(1, true),
                storage_entry(2, true),
                storage_entry(3, true),
                storage_entry(4, true),
                storage_entry(5, false),
                storage_entry(6, false),
                storage_entry(7, false),
                uniform_entry(8),
            ],
            ["cast_rays"],
        );
        Self { pipeline, layout }
    }

    /// Records one dispatch casting every line of `pairs` (in order) with room for `capacity`
    /// endpoint records. `tris` holds the meshes' triangles (three `u32` vertex indices each)
    /// and `levels` their level offsets, at the pairs' [`MeshLoc`]s.
    pub(crate) fn record(
        &self,
        ctx: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        pairs: &[BatchPair<'_>],
        tris: &wgpu::Buffer,
        levels: &wgpu::Buffer,
        capacity: u64,
    ) -> Result<VolumeBatch, GpuError> {
        let lines: u64 = pairs.iter().map(|p| p.prep.total).sum();
        if lines > MAX_GPU_RAYS {
            return Err(VolumeError::TooManyRays {
                rays: lines,
                limit: MAX_GPU_RAYS,
            }
            .into());
        }
        let capacity = capacity.clamp(1, u64::from(u32::MAX));
        let mut geom: Vec<f32> = Vec::new();
        let mut nodes: Vec<BalancedNode> = Vec::new();
        let mut table = Vec::with_capacity(pairs.len());
        let mut first = 0u64;
        for p in pairs {
            let prep = p.prep;
            let g = to_u32("GPU volume batch geometry", geom.len() as u64)?;
            let n = to_u32("GPU volume batch nodes", nodes.len() as u64)?;
            let mut grid = prep.grid;
            for axis in &mut grid {
                axis[0] = to_u32(
                    "GPU volume batch geometry",
                    u64::from(axis[0]) + u64::from(g),
                )?;
                axis[1] = to_u32(
                    "GPU volume batch geometry",
                    u64::from(axis[1]) + u64::from(g),
                )?;
            }
            let at = |k: usize| -> Result<u32, GpuError> {
                to_u32(
                    "GPU volume batch lines",
                    first + prep.per_axis[..k].iter().sum::<u64>(),
                )
            };
            table.push(PairEntry {
                grid,
                rays: [at(0)?, at(1)?, at(2)?, at(3)?],
                verts: [
                    g,
                    to_u32(
                        "GPU volume batch geometry",
                        u64::from(g) + u64::from(prep.b_base),
                    )?,
                    n,
                    to_u32(
                        "GPU volume batch nodes",
                        u64::from(n) + u64::from(prep.b_nodes),
                    )?,
                ],
                mesh: [p.a.tri_base, p.b.tri_base, p.a.level_base, p.b.level_base],
                misc: [prep.depth[0], prep.depth[1], prep.tol.to_bits(), 0],
            });
            first += prep.total;
            geom.extend_from_slice(&prep.geom);
            nodes.extend_from_slice(&prep.nodes);
        }
        let device = &ctx.device;
        let ray_out = Growable::sized(ctx, "volume per-line output", 8 * lines)?;
        let records = Growable::sized(ctx, "volume endpoint records", RECORD_BYTES * capacity)?;
        let counter = Growable::sized(ctx, "volume endpoint counter", 16)?;
        let batch = |geom_buffer: Vec<wgpu::Buffer>| VolumeBatch {
            counter: counter.clone(),
            ray_out: ray_out.clone(),
            records: records.clone(),
            lines,
            capacity,
            _keep: geom_buffer,
        };
        if lines == 0 {
            return Ok(batch(Vec::new()));
        }
        let geom_buffer = storage_buffer(
            ctx,
            "volume vertices and line coordinates",
            &geom,
            wgpu::BufferUsages::empty(),
        )?;
        let node_buffer = storage_buffer(
            ctx,
            "volume tree nodes",
            &nodes,
            wgpu::BufferUsages::empty(),
        )?;
        let table_buffer = storage_buffer(
            ctx,
            "volume pair table",
            &table,
            wgpu::BufferUsages::empty(),
        )?;
        let groups = lines.div_ceil(WG);
        let max = u64::from(device.limits().max_compute_workgroups_per_dimension);
        let (gx, gy) = if groups <= max {
            (groups as u32, 1)
        } else {
            (
                max as u32,
                check_dispatch(ctx, "GPU volume", groups.div_ceil(max))?,
            )
        };
        let params = Params {
            lines: lines as u32,
            row: gx * WG as u32,
            capacity: capacity as u32,
            pairs: table.len() as u32,
        };
        let uniform = init_buffer(
            ctx,
            "volume params",
            bytemuck::bytes_of(&params),
            wgpu::BufferUsages::UNIFORM,
        );
        let buffers = [
            &geom_buffer,
            &node_buffer,
            tris,
            levels,
            &table_buffer,
            &ray_out,
            &records,
            &counter,
            &uniform,
        ];
        let entries: Vec<wgpu::BindGroupEntry> = buffers
            .iter()
            .enumerate()
            .map(|(i, buffer)| wgpu::BindGroupEntry {
                binding: i as u32,
                resource: buffer.as_entire_binding(),
            })
            .collect();
        let bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("volume bind group"),
            layout: &self.layout,
            entries: &entries,
        });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("volume cast rays"),
                timestamp_writes: None,
            });
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &bind, &[]);
            pass.dispatch_workgroups(gx, gy, 1);
        }
        Ok(batch(vec![geom_buffer, node_buffer, table_buffer, uniform]))
    }
}

/// Storage buffers made to a size (zero-initialized by wgpu).
pub(super) struct Growable;

impl Growable {
    pub(super) fn sized(
        ctx: &GpuContext,
        what: &'static str,
        bytes: u64,
    ) -> Result<wgpu::Buffer, GpuError> {
        check_size(ctx, what, bytes)?;
        Ok(ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(what),
            size: bytes.max(4).next_multiple_of(4),
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        }))
    }
}

impl VolumeBatch {
    /// Adds the batch's results (the record count, every line, the record list) to `plan`.
    pub(crate) fn plan(&self, plan: &mut ReadbackPlan) -> VolumeRegions {
        if self.lines == 0 {
            return VolumeRegions {
                counter: Region::default(),
                ray_out: Region::default(),
                records: Region::default(),
            };
        }
        VolumeRegions {
            counter: plan.add(&self.counter, 0, 16),
            ray_out: plan.add(&self.ray_out, 0, 8 * self.lines),
            records: plan.add(&self.records, 0, RECORD_BYTES * self.capacity),
        }
    }

    /// Decodes the batch from the staging bytes.
    pub(crate) fn decode(&self, regions: &VolumeRegions, bytes: &[u8]) -> VolumeRaw {
        if self.lines == 0 {
            return VolumeRaw {
                count: 0,
                per_ray: Vec::new(),
                records: Vec::new(),
            };
        }
        let count = u64::from(regions.counter.words(bytes)[0]);
        let words = regions.ray_out.words(bytes);
        let per_ray = words.chunks_exact(2).map(|c| [c[0], c[1]]).collect();
        let kept = count.min(self.capacity) as usize;
        let mut records: Vec<Record> = bytemuck::pod_collect_to_vec(
            &regions.records.bytes(bytes)[..kept * RECORD_BYTES as usize],
        );
        records.sort_by_key(|r| r.ray);
        VolumeRaw {
            count,
            per_ray,
            records,
        }
    }

    /// Whether the record list overflowed (the batch must be re-run with `raw.count` records).
    pub(crate) fn overflowed(&self, raw: &VolumeRaw) -> bool {
        raw.count > self.capacity
    }
}

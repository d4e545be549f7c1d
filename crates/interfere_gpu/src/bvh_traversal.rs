//! GPU breadth-first simultaneous traversal of two balanced AABB trees (Greß & Zachmann 2004,
//! section 4: 4.1 the balanced tree, 4.2 the level-synchronous traversal, 4.3 and appendix A the
//! "SAT lite" box test, 4.4 building the next level's pair list from overlap counts).
//!
//! The CPU reference is `interfere_geometry::bvh::bfs`; every step here is the same three
//! data-parallel phases as there, one GPU pass each (shader `shaders/bvh_traversal.wgsl`):
//!
//! 1. `count`: SAT-lite of every pair of the current list, writing its number of child pairs;
//! 2. the [`PrefixSum`] Blelloch scan of the counts (each pair's output offset and the total),
//!    in place of the paper's overlap-count mip-map;
//! 3. `scatter`: every overlapping pair writes its child pairs at its offset (on the leaf step,
//!    the triangle indices of the pair instead).
//!
//! Step `k` pairs level `min(k, depth(A))` of `A` with level `min(k, depth(B))` of `B`, exactly
//! as [`StepLevels`] does.
//!
//! **Conservative `f32` test.** The CPU test runs in `f64`; the shader runs in `f32` on the pose
//! rounded to `f32`, and declares a pair disjoint only when an axis separates the boxes by more
//! than [`RELATIVE_MARGIN`] times the magnitude of the coordinates involved plus
//! [`ABSOLUTE_MARGIN`]. That margin is far larger than every rounding error of the `f32`
//! arithmetic (a few units of `2⁻²⁴` relative), so the GPU never rejects a pair the CPU accepts:
//! its leaf candidates are a superset of the CPU traversal's leaf-box pairs, and each extra one is
//! a near miss within [`margin_bound`] (see the tests). The exact triangle test then runs on the
//! CPU on the candidates, so the final result equals the brute-force set.
//!
//! **Readback.** After the count and scan passes of each step the scan total (one `u32`) is read
//! back: it is checked against the caller's capacity (overflow is
//! [`GpuError::PairListOverflow`], like the CPU's `PairListOverflow`), sizes the next list's
//! buffer (buffers grow to what the traversal needs, never beyond the capacity) and the next
//! dispatch. The candidate list itself is read back once, after the leaf step.
//!
//! **Complete traversal.** [`palette`] adds what the paper's pipeline needs beyond candidates:
//! the triangle tests at the leaves on the GPU ([`crate::tri_tri`]), many object pairs per
//! dispatch (a pose palette), the section-5 entrance level, and kernel timings.

use crate::compute::{compute_kernels, storage_entry, uniform_entry};
use crate::context::GpuContext;
use crate::error::GpuError;
use crate::readback::{check_size, map_and_copy, read_buffer, storage_buffer};
use crate::scan::{PrefixSum, ScanScratch, dispatch_shape};
use crate::shaders;
use interfere_geometry::DPose;
use interfere_geometry::bvh::bfs::StepLevels;
use interfere_geometry::bvh::{BalancedNode, BalancedTree};
use wgpu::util::DeviceExt;

pub mod palette;

pub use palette::{
    GpuEntranceLevel, GpuMeshSet, GpuTriangleTraversal, ObjectPair, TrianglePair, TrianglePairs,
};

/// Relative part of the `f32` test's separation margin (times the magnitude of the box
/// coordinates and the translation involved).
pub const RELATIVE_MARGIN: f32 = 1e-5;

/// Absolute part of the `f32` test's separation margin (covers subnormals flushed to zero).
pub const ABSOLUTE_MARGIN: f32 = 1e-30;

/// Invocations per workgroup of the count and scatter passes.
const WG: u64 = 64;

/// An upper bound (in `f64`) on how far apart, along the SAT-lite axes, the boxes of a pair the
/// GPU test accepts can be: growing `a` by this much makes
/// `SatLite::overlaps_inflated(a, b, margin_bound(..))` accept every pair the GPU accepts.
pub fn margin_bound(a: &BalancedNode, b: &BalancedNode, b_to_a: &DPose) -> f64 {
    let (ca, ha) = ((a.dmin() + a.dmax()) * 0.5, (a.dmax() - a.dmin()) * 0.5);
    let (cb, hb) = ((b.dmin() + b.dmax()) * 0.5, (b.dmax() - b.dmin()) * 0.5);
    let scale = ca.abs().max_element()
        + 3.0 * cb.abs().max_element()
        + b_to_a.translation.abs().max_element()
        + 3.0 * (ha.max_element() + hb.max_element());
    2.0 * (f64::from(RELATIVE_MARGIN) * scale + f64::from(ABSOLUTE_MARGIN))
}

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    rot: [[f32; 4]; 3],
    trans: [f32; 4],
    margin: [f32; 4],
    n: u32,
    groups_x: u32,
    capacity: u32,
    emit: u32,
    a_offset: u32,
    a_len: u32,
    a_below: u32,
    a_descends: u32,
    b_offset: u32,
    b_len: u32,
    b_below: u32,
    b_descends: u32,
}

/// A [`BalancedTree`] uploaded to the GPU: its node array and its level layout.
#[derive(Debug)]
pub struct GpuTree {
    nodes: wgpu::Buffer,
    level_offsets: Vec<u32>,
}

impl GpuTree {
    /// Number of levels (1 for a single triangle).
    pub fn levels(&self) -> usize {
        self.level_offsets.len() - 1
    }

    /// Index of the leaf level.
    pub fn depth(&self) -> usize {
        self.levels() - 1
    }

    /// Number of nodes of level `l` (0 when out of range).
    pub fn level_len(&self, l: usize) -> u32 {
        match (self.level_offsets.get(l), self.level_offsets.get(l + 1)) {
            (Some(&s), Some(&e)) => e - s,
            _ => 0,
        }
    }

    /// Number of triangles (leaves).
    pub fn triangle_count(&self) -> u32 {
        self.level_len(self.depth())
    }

    /// The node buffer (32-byte [`BalancedNode`]s, level by level, root first).
    pub fn buffer(&self) -> &wgpu::Buffer {
        &self.nodes
    }
}

/// A storage buffer that grows (by powers of two, never past a limit) to what is asked.
pub(crate) struct Growable {
    pub(crate) what: &'static str,
    pub(crate) element_size: u64,
    pub(crate) elements: u64,
    pub(crate) buffer: wgpu::Buffer,
}

impl Growable {
    fn new(ctx: &GpuContext, what: &'static str, element_size: u64) -> Result<Self, GpuError> {
        Ok(Self {
            what,
            element_size,
            elements: 1,
            buffer: Self::create(ctx, what, element_size)?,
        })
    }

    fn create(ctx: &GpuContext, what: &'static str, bytes: u64) -> Result<wgpu::Buffer, GpuError> {
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

    /// Makes room for `elements` (the old contents are not kept).
    fn ensure(&mut self, ctx: &GpuContext, elements: u64, limit: u64) -> Result<(), GpuError> {
        if self.elements < elements {
            let grown = elements.next_power_of_two().min(limit.max(elements));
            self.buffer = Self::create(ctx, self.what, grown * self.element_size)?;
            self.elements = grown;
        }
        Ok(())
    }
}

/// The compiled traversal kernels (reusable across trees, poses and calls).
pub struct GpuBvhTraversal {
    count: wgpu::ComputePipeline,
    scatter: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
    scan: PrefixSum,
}

fn to_u32(what: &'static str, v: usize) -> Result<u32, GpuError> {
    u32::try_from(v).map_err(|_| GpuError::InvalidInput {
        what,
        reason: format!("{v} exceeds u32 indexing"),
    })
}

impl GpuBvhTraversal {
    /// Compiles the count and scatter kernels and the prefix sum on `ctx`'s device.
    pub fn new(ctx: &GpuContext) -> Self {
        let device = &ctx.device;
        let module = shaders::module(device, "bvh_traversal.wgsl", shaders::BVH_TRAVERSAL);
        let (layout, [count, scatter]) = compute_kernels(
            device,
            "bvh traversal",
            &module,
            &[
                storage_entry(0, true),
                storage_entry(1, true),
                storage_entry(2, true),
                storage_entry(3, false),
                storage_entry(4, false),
                storage_entry(5, false),
                uniform_entry(6),
            ],
            ["count", "scatter"],
        );
        Self {
            count,
            scatter,
            layout,
            scan: PrefixSum::new(ctx),
        }
    }

    /// Uploads `tree`'s nodes to `ctx`'s device (use the returned tree only with that device).
    pub fn upload_tree(ctx: &GpuContext, tree: &BalancedTree) -> Result<GpuTree, GpuError> {
        let level_offsets = tree
            .level_offsets()
            .iter()
            .map(|&o| to_u32("BVH tree upload", o))
            .collect::<Result<Vec<u32>, GpuError>>()?;
        let nodes = storage_buffer(
            ctx,
            "BVH tree nodes",
            tree.nodes(),
            wgpu::BufferUsages::empty(),
        )?;
        Ok(GpuTree {
            nodes,
            level_offsets,
        })
    }

    /// The candidate triangle pairs `(triangle of A, triangle of B)`, sorted: every leaf pair
    /// whose ancestors and leaf boxes all pass the conservative `f32` SAT-lite with `B` placed in
    /// `A`'s frame by `b_to_a` (see the module documentation). No pair list (the leaf candidates
    /// included) may exceed `capacity` entries, or [`GpuError::PairListOverflow`] is returned
    /// (capacities above `u32::MAX / 4` are lowered to it, so the GPU scan's `u32` totals stay
    /// exact). Both trees must have been uploaded to `ctx`'s device. One `u32` is read back per
    /// traversal step (see the module documentation), the candidates once at the end.
    pub fn candidate_pairs(
        &self,
        ctx: &GpuContext,
        a: &GpuTree,
        b: &GpuTree,
        b_to_a: &DPose,
        capacity: u32,
    ) -> Result<Vec<(u32, u32)>, GpuError> {
        if capacity == 0 {
            return Err(GpuError::PairListOverflow {
                step: 0,
                needed: 1,
                capacity,
            });
        }
        // Every pair writes at most 4 children: keep the scan's u32 totals exact.
        let capacity = capacity.min(u32::MAX / 4);
        let limit = u64::from(capacity);
        let pose = pose_uniform(b_to_a);
        let last = a.depth().max(b.depth());

        let mut lists = [
            Growable::new(ctx, "BVH pair list", 8)?,
            Growable::new(ctx, "BVH pair list", 8)?,
        ];
        let mut counts = Growable::new(ctx, "BVH pair counts", 4)?;
        let mut offsets = Growable::new(ctx, "BVH pair offsets", 4)?;
        let mut scratch = ScanScratch::default();
        // Step 0: the pair of roots.
        ctx.queue
            .write_buffer(&lists[0].buffer, 0, bytemuck::bytes_of(&[0u32, 0u32]));
        let mut n = 1u64;
        let mut current = 0;
        for step in 0..=last {
            let levels = step_levels(a, b, step);
            let emit = step == last;
            let groups = n.div_ceil(WG);
            let (gx, gy) = dispatch_shape(ctx, groups)?;
            let mut params = Params {
                rot: pose.0,
                trans: pose.1,
                margin: [RELATIVE_MARGIN, ABSOLUTE_MARGIN, 0.0, 0.0],
                n: n as u32,
                groups_x: gx,
                capacity: 0,
                emit: u32::from(emit),
                a_offset: a.level_offsets[levels.a_level],
                a_len: a.level_len(levels.a_level),
                a_below: a.level_len(levels.a_level + 1),
                a_descends: u32::from(levels.a_descends),
                b_offset: b.level_offsets[levels.b_level],
                b_len: b.level_len(levels.b_level),
                b_below: b.level_len(levels.b_level + 1),
                b_descends: u32::from(levels.b_descends),
            };
            counts.ensure(ctx, n, limit)?;
            offsets.ensure(ctx, n, limit)?;
            let next = 1 - current;

            // Count + scan, then read the total.
            let mut encoder = ctx.device.create_command_encoder(&Default::default());
            let bind = self.bind_group(ctx, a, b, &lists, current, &counts, &offsets, &params);
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("bvh count"),
                    timestamp_writes: None,
                });
                pass.set_pipeline(&self.count);
                pass.set_bind_group(0, &bind, &[]);
                pass.dispatch_workgroups(gx, gy, 1);
            }
            let total_buffer =
                self.scan
                    .encode(ctx, &mut encoder, &offsets.buffer, n, &mut scratch)?;
            let staging = ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("bvh total staging"),
                size: 4,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            encoder.copy_buffer_to_buffer(total_buffer, 0, &staging, 0, 4);
            ctx.queue.submit([encoder.finish()]);
            let total = u64::from(map_and_copy::<u32>(ctx, "BVH pair total", &staging, 1)?[0]);
            if total > limit {
                return Err(GpuError::PairListOverflow {
                    step,
                    needed: total,
                    capacity,
                });
            }
            if total == 0 {
                return Ok(Vec::new());
            }

            // Scatter into a list large enough for `total` pairs.
            lists[next].ensure(ctx, total, limit)?;
            // Fits in u32: at most `limit`, or the initial single element.
            params.capacity = lists[next].elements as u32;
            let bind = self.bind_group(ctx, a, b, &lists, current, &counts, &offsets, &params);
            let mut encoder = ctx.device.create_command_encoder(&Default::default());
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("bvh scatter"),
                    timestamp_writes: None,
                });
                pass.set_pipeline(&self.scatter);
                pass.set_bind_group(0, &bind, &[]);
                pass.dispatch_workgroups(gx, gy, 1);
            }
            ctx.queue.submit([encoder.finish()]);
            if emit {
                let raw: Vec<[u32; 2]> =
                    read_buffer(ctx, "BVH candidates", &lists[next].buffer, total as usize)?;
                let mut pairs: Vec<(u32, u32)> = raw.into_iter().map(|[x, y]| (x, y)).collect();
                pairs.sort_unstable();
                return Ok(pairs);
            }
            n = total;
            current = next;
        }
        Ok(Vec::new())
    }

    #[allow(clippy::too_many_arguments)]
    fn bind_group(
        &self,
        ctx: &GpuContext,
        a: &GpuTree,
        b: &GpuTree,
        lists: &[Growable; 2],
        current: usize,
        counts: &Growable,
        offsets: &Growable,
        params: &Params,
    ) -> wgpu::BindGroup {
        let uniform = ctx
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("bvh params"),
                contents: bytemuck::bytes_of(params),
                usage: wgpu::BufferUsages::UNIFORM,
            });
        let buffers = [
            &a.nodes,
            &b.nodes,
            &lists[current].buffer,
            &lists[1 - current].buffer,
            &counts.buffer,
            &offsets.buffer,
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
        ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("bvh traversal bind group"),
            layout: &self.layout,
            entries: &entries,
        })
    }
}

/// The levels of step `step` (the GPU twin of [`StepLevels::new`], from the uploaded layout).
fn step_levels(a: &GpuTree, b: &GpuTree, step: usize) -> StepLevels {
    StepLevels {
        a_level: step.min(a.depth()),
        b_level: step.min(b.depth()),
        a_descends: step < a.depth(),
        b_descends: step < b.depth(),
    }
}

/// The pose as the shader's rotation columns and translation (`w` = 1 when every `f32` value is
/// finite, 0 to make every pair overlap).
fn pose_uniform(b_to_a: &DPose) -> ([[f32; 4]; 3], [f32; 4]) {
    let r = b_to_a.rotation;
    let cols = [r.x_axis.as_vec3(), r.y_axis.as_vec3(), r.z_axis.as_vec3()];
    let t = b_to_a.translation.as_vec3();
    let finite = cols.iter().all(|c| c.is_finite()) && t.is_finite();
    (
        cols.map(|c| [c.x, c.y, c.z, 0.0]),
        [t.x, t.y, t.z, if finite { 1.0 } else { 0.0 }],
    )
}

//! GPU uniformly ray-sampled intersection volume of two closed solids and its gradient
//! (Wang, Faure & Pai 2012, section 2.2: Eq. 1 for the volume, Eq. 2 for the per-vertex
//! gradient with barycentric weights). Shader: `shaders/volume.wgsl`. CPU twin:
//! `interfere_geometry::volume::{uniform, ray_bvh}`; this module returns the same
//! [`VolumeResult`] for the same [`UniformOptions`] and samples exactly the same lines.
//!
//! **Frames and precision.** B's vertices are mapped into A's frame on the CPU with
//! [`DPose::transform_point`] (the `f64` values the CPU reference uses). Both meshes are then
//! shifted to a local origin at the centre of the overlap of the two boxes (in `f64`) and rounded
//! to `f32`, so the `f32` error scales with the size of the overlap region, not with the
//! distance from A's origin (poses with translations of 10⁴ keep full precision). The balanced
//! trees (`BalancedTree`, Greß & Zachmann §4.1) keep their layout; their boxes are refitted on
//! the host over the rounded vertices, and uploaded with them, on every call.
//!
//! **Kernel.** One invocation per line (see the shader's header): a stack-based depth-first
//! walk of both trees, a watertight `f32` axis-parallel hit test (edge functions evaluated from
//! the lower vertex index, so shared edges see identical values with opposite signs, and the
//! CPU's simulation-of-simplicity tie-break on exact zeros, so a line through a shared edge or
//! vertex is counted once), up to [`MAX_HITS_PER_RAY`] hits in a per-thread array (more is
//! [`GpuError::VolumeHitOverflow`], never a truncated answer), an insertion sort by depth and
//! the interval sweep. Each line writes its overlap length; each interval endpoint of a line
//! writes a record (triangle, sign, depth, barycentric weights) to a list compacted with an
//! atomic counter (the list grows and the dispatch is repeated when it overflows).
//!
//! **Batches.** The kernel casts the lines of many pairs in one dispatch: a pair table (per
//! pair: its lines per axis, where its local vertices, refitted nodes and line coordinates are,
//! where its two meshes' triangles and level offsets are) and one binary search per invocation
//! for its pair. [`GpuVolume::compute`] is a batch of one; the step job ([`crate::step_job`])
//! batches every pair of a physics step. Each pair keeps its own local frame and refit, so a
//! pair's lines and records are the same in a batch as alone (tested pair by pair). The trees
//! are refitted on the host: on the falling-heap bench (`interfere bench gpu-job`, lavapipe, 40
//! bodies, 220 pairs) placing the pairs in their local frames and refitting took 6.9 ms of a
//! 137 ms host preparation (docs/benchmarks.md), so there is no GPU refit pass.
//!
//! **Certified lines, exact fix-up.** Every edge function comes with a rigorous bound on its
//! distance to the exact value of the CPU's predicate on the `f64` geometry: Shewchuk's
//! `ccwerrboundA` (`3ε + 16ε²` times the sum of the magnitudes of the two products) for the
//! `f32` evaluation, plus `2η(|d₁| + |d₂|) + 16η²` for input errors of at most `η = 2⁻²³ M`
//! per coordinate (`M` the largest local coordinate of the triangle and the line; rounding a
//! coordinate to `f32` moves it by at most `2⁻²⁴ M`), plus the `f64` error of the shift. When
//! each edge's sign is outside its bound, the GPU's hit decision and direction are the CPU's;
//! likewise every hit's depth carries an error bound, and sorted neighbours closer than their
//! bounds make the order uncertain. A line with any uncertain decision (or with unbalanced
//! hits) is flagged, and the host recasts exactly those lines with the CPU's exact
//! [`RayMesh`]. Hence the hit sets, their order, the intervals and the endpoint triangles equal
//! the CPU's on every line; only the depths and barycentric weights carry `f32` rounding.
//!
//! **Reduction.** The per-line lengths (`f32`) and the endpoint records are read back and
//! reduced on the host in `f64`, in the CPU's line order (records are sorted by line with a
//! stable sort, so results are deterministic). Why not per-vertex fixed-point atomics on the
//! GPU: measured on bunny25k against itself at resolution 128 on lavapipe, the 39,348 records
//! are 0.9 MB of readback and the whole host reduction (sort, gradients, 17 recast lines) takes
//! about 2 ms of a 343 ms call, so atomics could save under 1 %, while costing determinism
//! (atomic order) and a fixed-point range; the host pass is also where flagged lines are fixed.

mod kernel;
mod prepare;
mod reduce;

pub(crate) use kernel::*;
pub(crate) use prepare::*;
pub(crate) use reduce::*;

use crate::compute::{compute_kernels, storage_entry, uniform_entry};
use crate::context::GpuContext;
use crate::error::GpuError;
use crate::readback::{
    ReadbackPlan, Region, check_dispatch, check_size, init_buffer, scoped, storage_buffer, wait_for,
};
use crate::shaders;
use interfere_geometry::bvh::{BalancedNode, BalancedTree};
use interfere_geometry::glam::{DVec3, Vec3};
use interfere_geometry::volume::{
    AxisRay, IntervalSweep, LineCrossing, LineGrid, RayMesh, Sampling, SurfacePoint,
    UniformOptions, VolumeError, VolumeResult, error_estimate,
};
use interfere_geometry::{DPose, Solid, TriMesh};
use std::time::Instant;

/// Hits (of both meshes together) one GPU thread holds for one line; a line crossing more
/// triangles makes [`GpuVolume::compute`] fail with [`GpuError::VolumeHitOverflow`]. Must match
/// `CAP` in `shaders/volume.wgsl`.
pub const MAX_HITS_PER_RAY: u32 = 64;

/// Most lines one call (or one batch of pairs) may cast (so that the endpoint counter, at most
/// `MAX_HITS_PER_RAY` per line, stays within `u32`).
pub const MAX_GPU_RAYS: u64 = 1 << 26;

/// Most triangles per mesh (the shader packs a triangle index into 30 bits).
pub const MAX_TRIANGLES: usize = 1 << 30;

/// Most tree levels (the shader's depth-first stack holds one node per level).
const MAX_LEVELS: usize = 33;

const WG: u64 = 64;
const FLAG_OVERFLOW: u32 = 1;
const FLAG_UNCERTAIN: u32 = 2;
const FLAG_UNBALANCED: u32 = 4;
const ON_B: u32 = 0x8000_0000;
const INTERVAL_END: u32 = 0x4000_0000;
const TRI_MASK: u32 = 0x3fff_ffff;

/// Uniform of `shaders/volume.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    lines: u32,
    row: u32,
    capacity: u32,
    pairs: u32,
}

/// One entry of the pair table (`PairEntry` in `shaders/volume.wgsl`).
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct PairEntry {
    grid: [[u32; 4]; 3],
    rays: [u32; 4],
    verts: [u32; 4],
    mesh: [u32; 4],
    misc: [u32; 4],
}

/// One interval endpoint as the kernel writes it.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct Record {
    ray: u32,
    id: u32,
    t: f32,
    l: [f32; 3],
}

/// Bytes of one endpoint record.
pub(crate) const RECORD_BYTES: u64 = std::mem::size_of::<Record>() as u64;

/// Whether a GPU volume agrees with its CPU twin (`interfere_geometry::volume::uniform_volume`
/// at the same options) within the tolerance the GPU tests hold it to: the same lines, pixel
/// areas and endpoint count; the volume within `10⁻⁵` of the CPU's (plus `10⁻⁹` of a cube 64
/// lines wide); each gradient component within `10⁻⁴` of the CPU's largest. The `f32` line
/// casts are certified and fixed up exactly where a hit is uncertain, so the lines agree; the
/// tolerance covers the `f32` depths and weights. `Err` says what differs.
pub fn agrees_with_cpu(gpu: &VolumeResult, cpu: &VolumeResult) -> Result<(), String> {
    if gpu.ray_count != cpu.ray_count
        || gpu.pixel_area != cpu.pixel_area
        || gpu.points.len() != cpu.points.len()
    {
        return Err(format!(
            "{} lines, {} endpoints and pixel areas {:?}; the CPU's {}, {} and {:?}",
            gpu.ray_count,
            gpu.points.len(),
            gpu.pixel_area,
            cpu.ray_count,
            cpu.points.len(),
            cpu.pixel_area
        ));
    }
    let size = cpu.pixel_area.iter().fold(0.0f64, |m, a| m.max(a.sqrt())) * 64.0;
    if (gpu.volume - cpu.volume).abs() > 1e-5 * cpu.volume.abs() + 1e-9 * size.powi(3) {
        return Err(format!(
            "volume {} against the CPU's {}",
            gpu.volume, cpu.volume
        ));
    }
    let scale = cpu
        .gradient_a
        .iter()
        .chain(&cpu.gradient_b)
        .fold(0.0f64, |m, g| m.max(g.abs().max_element()));
    for (g, c) in gpu
        .gradient_a
        .iter()
        .chain(&gpu.gradient_b)
        .zip(cpu.gradient_a.iter().chain(&cpu.gradient_b))
    {
        if (*g - *c).abs().max_element() > 1e-4 * scale + 1e-12 {
            return Err(format!("gradient {g} against the CPU's {c}"));
        }
    }
    Ok(())
}

/// A solid uploaded for [`GpuVolume`]: its triangles on the GPU, and on the host its vertices,
/// its balanced tree (layout reused every call) and its exact `f64` twin for recasting lines.
pub struct GpuVolumeMesh {
    mesh: TriMesh,
    tree: BalancedTree,
    triangles: wgpu::Buffer,
    levels: Vec<u32>,
    at_identity: RayMesh,
}

impl GpuVolumeMesh {
    /// Number of triangles.
    pub fn triangle_count(&self) -> usize {
        self.mesh.triangle_count()
    }

    /// Number of vertices.
    pub fn vertex_count(&self) -> usize {
        self.mesh.vertices().len()
    }
}

/// One sampled line as the GPU saw it (see [`GpuVolumeReport::rays`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpuRay {
    /// The kernel's overlap length of the line (`f32`, before any host fix-up).
    pub length: f32,
    /// Some hit decision or hit order was within the `f32` error bounds (the line was recast
    /// exactly on the CPU).
    pub uncertain: bool,
    /// The kernel's entering and leaving hits of a mesh did not cancel (also recast).
    pub unbalanced: bool,
    /// Hits the kernel found (both meshes; B is only cast when A has hits).
    pub hits: u32,
}

/// What a [`GpuVolume::compute_with_report`] call did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GpuVolumeReport {
    /// Every line, in the CPU's order (axis, then row, then column); empty when the boxes do not
    /// overlap.
    pub rays: Vec<GpuRay>,
    /// Lines recast on the CPU (uncertain or unbalanced).
    pub recast: usize,
    /// Lines whose raw kernel hits were unbalanced.
    pub unbalanced: usize,
    /// Endpoint records the kernel wrote.
    pub records: usize,
    /// Kernel dispatches (more than 1 when the record list had to grow).
    pub dispatches: usize,
    /// The local origin (centre of the overlap box) in A's frame.
    pub origin: DVec3,
    /// Host time to transform, shift, refit and pack, in milliseconds.
    pub prepare_ms: f64,
    /// Upload, kernel and readback time, in milliseconds.
    pub gpu_ms: f64,
    /// Host reduction and fix-up time, in milliseconds.
    pub reduce_ms: f64,
}

/// The compiled volume kernel.
pub struct GpuVolume {
    kernel: VolumeKernel,
}

/// The pipeline of `shaders/volume.wgsl` (shared by [`GpuVolume`] and the step job).
pub(crate) struct VolumeKernel {
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
}

fn empty_result(na: usize, nb: usize) -> VolumeResult {
    VolumeResult {
        volume: 0.0,
        axis_volumes: [0.0; 3],
        estimated_axis_error: Some([0.0; 3]),
        gradient_a: vec![DVec3::ZERO; na],
        gradient_b: vec![DVec3::ZERO; nb],
        force: DVec3::ZERO,
        torque: DVec3::ZERO,
        ray_count: 0,
        pixel_area: [0.0; 3],
        points: Vec::new(),
    }
}

/// Bounds of the vertices the triangles use (what the CPU's refitted root box holds).
fn triangle_bounds(triangles: &[[u32; 3]], vertices: &[DVec3]) -> [DVec3; 2] {
    let mut b = [DVec3::INFINITY, DVec3::NEG_INFINITY];
    for t in triangles {
        for &i in t {
            let p = vertices[i as usize];
            b = [b[0].min(p), b[1].max(p)];
        }
    }
    b
}

/// The tree's nodes with boxes refitted over `local` (exact `f32` minima and maxima).
fn refit(tree: &BalancedTree, triangles: &[[u32; 3]], local: &[Vec3], out: &mut Vec<BalancedNode>) {
    let base = out.len();
    out.extend_from_slice(tree.nodes());
    let offsets = tree.level_offsets();
    let depth = tree.depth();
    for n in &mut out[base + offsets[depth]..base + offsets[depth + 1]] {
        let [a, b, c] = triangles[n.index as usize].map(|i| local[i as usize]);
        n.min = a.min(b).min(c).to_array();
        n.max = a.max(b).max(c).to_array();
    }
    for l in (0..depth).rev() {
        let below = base + offsets[l + 1];
        let below_len = tree.level_len(l + 1);
        for i in 0..tree.level_len(l) {
            let mut mn = Vec3::INFINITY;
            let mut mx = Vec3::NEG_INFINITY;
            for c in (2 * i)..(2 * i + 2).min(below_len) {
                let child = out[below + c];
                mn = mn.min(Vec3::from_array(child.min));
                mx = mx.max(Vec3::from_array(child.max));
            }
            let n = &mut out[base + offsets[l] + i];
            n.min = mn.to_array();
            n.max = mx.to_array();
        }
    }
}

fn to_u32(what: &'static str, v: u64) -> Result<u32, GpuError> {
    u32::try_from(v).map_err(|_| GpuError::InvalidInput {
        what,
        reason: format!("{v} exceeds u32 indexing"),
    })
}

impl GpuVolume {
    /// Compiles the kernel on `ctx`'s device.
    pub fn new(ctx: &GpuContext) -> Result<Self, GpuError> {
        scoped(ctx, "GPU volume kernel", || {
            Ok(Self {
                kernel: VolumeKernel::new(ctx),
            })
        })
    }

    /// Uploads `solid`'s triangles to `ctx`'s device and builds its balanced tree and exact CPU
    /// twin. Use the mesh only with `ctx`'s device. Fails above [`MAX_TRIANGLES`] triangles.
    pub fn upload_mesh(ctx: &GpuContext, solid: &Solid) -> Result<GpuVolumeMesh, GpuError> {
        Self::upload_with_tree(ctx, solid, BalancedTree::build(solid))
    }

    /// Like [`Self::upload_mesh`] with a tree built earlier by [`BalancedTree::build`] over the
    /// same solid.
    pub fn upload_with_tree(
        ctx: &GpuContext,
        solid: &Solid,
        tree: BalancedTree,
    ) -> Result<GpuVolumeMesh, GpuError> {
        let mesh: TriMesh = solid.mesh().clone();
        let levels = check_mesh(&mesh, &tree)?;
        let at_identity = RayMesh::new(&mesh, &tree, &DPose::IDENTITY)?;
        let flat: Vec<u32> = mesh.triangles().iter().flatten().copied().collect();
        let triangles = storage_buffer(
            ctx,
            "volume mesh triangles",
            &flat,
            wgpu::BufferUsages::empty(),
        )?;
        Ok(GpuVolumeMesh {
            mesh,
            tree,
            triangles,
            levels,
            at_identity,
        })
    }

    /// The sampled intersection volume of A and B (B placed in A's frame by `b_to_a`) and its
    /// gradient: the CPU reference's [`VolumeResult`] for the same options (the lines are the
    /// same; see the module documentation for what differs by `f32` rounding). Both meshes must
    /// have been uploaded to `ctx`'s device.
    pub fn compute(
        &mut self,
        ctx: &GpuContext,
        a: &GpuVolumeMesh,
        b: &GpuVolumeMesh,
        b_to_a: &DPose,
        options: &UniformOptions,
    ) -> Result<VolumeResult, GpuError> {
        self.compute_with_report(ctx, a, b, b_to_a, options)
            .map(|(r, _)| r)
    }

    /// [`Self::compute`], also returning what the kernel saw per line and where time went.
    /// One pair is a batch of one for the kernel the step job ([`crate::step_job`]) batches.
    pub fn compute_with_report(
        &mut self,
        ctx: &GpuContext,
        a: &GpuVolumeMesh,
        b: &GpuVolumeMesh,
        b_to_a: &DPose,
        options: &UniformOptions,
    ) -> Result<(VolumeResult, GpuVolumeReport), GpuError> {
        let clock = Instant::now();
        let mut report = GpuVolumeReport::default();
        let prep = match prepare_pair((&a.mesh, &a.tree), (&b.mesh, &b.tree), b_to_a, options)? {
            Prepared::Empty(result) => return Ok((*result, report)),
            Prepared::Lines(prep) => prep,
        };
        report.prepare_ms = clock.elapsed().as_secs_f64() * 1e3;

        let clock = Instant::now();
        let (ta, tb) = (a.triangle_count() as u64, b.triangle_count() as u64);
        let levels: Vec<u32> = a.levels.iter().chain(&b.levels).copied().collect();
        let locs = [
            MeshLoc::default(),
            MeshLoc {
                tri_base: to_u32("GPU volume triangles", ta)?,
                level_base: a.levels.len() as u32,
            },
        ];
        // Start with room for 4 endpoints per line.
        let mut capacity = (4 * prep.total).max(64);
        let raw = loop {
            let (batch, regions, staging) = scoped(ctx, "GPU volume", || {
                let tris = Growable::sized(ctx, "volume triangles", 12 * (ta + tb))?;
                let level_buffer = storage_buffer(
                    ctx,
                    "volume level offsets",
                    &levels,
                    wgpu::BufferUsages::empty(),
                )?;
                let mut encoder = ctx.device.create_command_encoder(&Default::default());
                encoder.copy_buffer_to_buffer(&a.triangles, 0, &tris, 0, 12 * ta);
                encoder.copy_buffer_to_buffer(&b.triangles, 0, &tris, 12 * ta, 12 * tb);
                let batch = self.kernel.record(
                    ctx,
                    &mut encoder,
                    &[BatchPair {
                        prep: &prep,
                        a: locs[0],
                        b: locs[1],
                    }],
                    &tris,
                    &level_buffer,
                    capacity,
                )?;
                let mut plan = ReadbackPlan::default();
                let regions = batch.plan(&mut plan);
                let staging = plan.record(ctx, &mut encoder)?;
                ctx.queue.submit([encoder.finish()]);
                Ok((batch, regions, staging))
            })?;
            let bytes = wait_for(ctx, "GPU volume", staging)?;
            report.dispatches += 1;
            let raw = batch.decode(&regions, &bytes);
            if batch.overflowed(&raw) {
                capacity = raw.count;
                continue;
            }
            break raw;
        };
        report.gpu_ms = clock.elapsed().as_secs_f64() * 1e3;

        let clock = Instant::now();
        let result = reduce_pair(
            &prep,
            (&a.mesh, &a.at_identity),
            (&b.mesh, &b.tree),
            b_to_a,
            &raw.per_ray,
            &raw.records,
            0,
            &mut report,
        )?;
        report.reduce_ms = clock.elapsed().as_secs_f64() * 1e3;
        Ok((result, report))
    }
}

/// Checks a mesh and its tree for the kernel (triangle count, leaves, depth) and returns the
/// tree's level offsets.
pub(crate) fn check_mesh(mesh: &TriMesh, tree: &BalancedTree) -> Result<Vec<u32>, GpuError> {
    if mesh.triangle_count() > MAX_TRIANGLES {
        return Err(GpuError::InvalidInput {
            what: "GPU volume mesh upload",
            reason: format!(
                "{} triangles, more than {MAX_TRIANGLES}",
                mesh.triangle_count()
            ),
        });
    }
    if tree.triangle_count() != mesh.triangle_count() {
        return Err(VolumeError::TreeMismatch {
            tree: tree.triangle_count(),
            mesh: mesh.triangle_count(),
        }
        .into());
    }
    if tree.levels() > MAX_LEVELS {
        return Err(GpuError::InvalidInput {
            what: "GPU volume mesh upload",
            reason: format!("{} tree levels, more than {MAX_LEVELS}", tree.levels()),
        });
    }
    tree.level_offsets()
        .iter()
        .map(|&o| to_u32("GPU volume mesh upload", o as u64))
        .collect()
}

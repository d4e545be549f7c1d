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
    AxisRay, IntervalSweep, LineGrid, RayHit, RayMesh, Sampling, SurfacePoint, UniformOptions,
    VolumeError, VolumeResult, error_estimate,
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

fn pose_is_finite(p: &DPose) -> bool {
    p.translation.is_finite()
        && p.rotation.x_axis.is_finite()
        && p.rotation.y_axis.is_finite()
        && p.rotation.z_axis.is_finite()
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

/// Per-call state of the host reduction.
struct Reduce<'m> {
    result: VolumeResult,
    va: &'m [DVec3],
    vb: &'m [DVec3],
    tris_a: &'m [[u32; 3]],
    tris_b: &'m [[u32; 3]],
    collect_points: bool,
}

impl Reduce<'_> {
    /// One interval endpoint on triangle `tri` of A or B at depth `t` of `ray`.
    fn endpoint(&mut self, ray: &AxisRay, on_b: bool, tri: u32, sign: f64, t: f64, bary: [f64; 3]) {
        let k = ray.axis;
        let w = self.result.pixel_area[k];
        let (tris, verts, grad) = if on_b {
            (self.tris_b, self.vb, &mut self.result.gradient_b)
        } else {
            (self.tris_a, self.va, &mut self.result.gradient_a)
        };
        let corners = tris[tri as usize];
        for (m, &vi) in corners.iter().enumerate() {
            grad[vi as usize][k] += sign * w * bary[m];
        }
        if self.collect_points {
            let [a, b, c] = corners.map(|i| verts[i as usize]);
            let normal = (b - a).cross(c - a).normalize_or_zero();
            self.result.points.push(SurfacePoint {
                point: ray.point(t),
                normal,
                on_b,
                triangle: tri,
                axis: k as u8,
                area: w / normal[k].abs().max(f64::MIN_POSITIVE),
            });
        }
    }

    /// The CPU reference's treatment of one line (exact hits, sort, sweep): its overlap length.
    fn recast(&mut self, ma: &RayMesh, mb: &RayMesh, ray: &AxisRay, scratch: &mut Scratch) -> f64 {
        let mut length = 0.0;
        scratch.hits_a.clear();
        ma.cast_axis(ray, &mut scratch.hits_a);
        if scratch.hits_a.is_empty() {
            return 0.0;
        }
        scratch.hits_b.clear();
        mb.cast_axis(ray, &mut scratch.hits_b);
        if scratch.hits_b.is_empty() {
            return 0.0;
        }
        scratch.sweep.sweep(&scratch.hits_a, &scratch.hits_b, |e| {
            if let Some(t0) = e.from {
                length += e.hit.t - t0;
            }
            self.endpoint(
                ray,
                e.on_b,
                e.hit.triangle,
                e.sign,
                e.hit.t,
                e.hit.barycentric,
            );
        });
        length
    }
}

#[derive(Default)]
struct Scratch {
    hits_a: Vec<RayHit>,
    hits_b: Vec<RayHit>,
    sweep: IntervalSweep,
}

/// Where a mesh's triangles and level offsets are in a batch's shared buffers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct MeshLoc {
    /// First triangle (index triple) in the triangle buffer.
    pub tri_base: u32,
    /// First level offset in the level buffer.
    pub level_base: u32,
}

/// One mesh pair prepared on the host for the batched kernel: `B` placed in `A`'s frame in
/// `f64`, the line grids over the overlap box, both meshes shifted to the local frame (the
/// overlap box's centre) and rounded to `f32`, and both trees refitted over the rounded
/// vertices.
pub(crate) struct PairPrep {
    va: Vec<DVec3>,
    vb: Vec<DVec3>,
    grids: [LineGrid; 3],
    per_axis: [u64; 3],
    /// Lines over the three axes.
    pub(crate) total: u64,
    /// The local origin in A's frame.
    pub(crate) origin: DVec3,
    /// A's local vertices, B's (from float `b_base`), then the line coordinate tables.
    geom: Vec<f32>,
    b_base: u32,
    /// Per axis: first float of the u and v tables in `geom`, rows, columns.
    grid: [[u32; 4]; 3],
    /// A's refitted nodes, then B's (from node `b_nodes`).
    nodes: Vec<BalancedNode>,
    b_nodes: u32,
    depth: [u32; 2],
    tol: f32,
    centre: DVec3,
    collect_points: bool,
}

/// A prepared pair: nothing to cast (the boxes do not overlap, the zero result), or lines.
pub(crate) enum Prepared {
    /// The boxes do not overlap.
    Empty(Box<VolumeResult>),
    /// Lines to cast.
    Lines(Box<PairPrep>),
}

/// Validates the options and pose and prepares one pair (see [`PairPrep`]); the same checks
/// and refusals as the CPU reference.
pub(crate) fn prepare_pair(
    (mesh_a, tree_a): (&TriMesh, &BalancedTree),
    (mesh_b, tree_b): (&TriMesh, &BalancedTree),
    b_to_a: &DPose,
    options: &UniformOptions,
) -> Result<Prepared, GpuError> {
    match options.sampling {
        Sampling::Resolution(0) => return Err(VolumeError::ZeroResolution.into()),
        Sampling::Fitted { .. } => {
            return Err(GpuError::InvalidInput {
                what: "the GPU volume",
                reason: "Sampling::Fitted (two passes, the second over the box the first \
                         finds) is done by the CPU sampler only"
                    .into(),
            });
        }
        Sampling::Spacing(h) | Sampling::ShiftedSpacing { spacing: h, .. }
            if !(h.is_finite() && h > 0.0) =>
        {
            return Err(VolumeError::InvalidSpacing(h).into());
        }
        Sampling::ShiftedSpacing { offset, .. } if !offset.is_finite() => {
            return Err(VolumeError::NonFiniteOffset.into());
        }
        _ => {}
    }
    if !pose_is_finite(b_to_a) || !options.centre.is_finite() {
        return Err(VolumeError::NonFinitePose.into());
    }
    let va: Vec<DVec3> = mesh_a
        .vertices()
        .iter()
        .map(|&v| DPose::IDENTITY.transform_point(v))
        .collect();
    let vb: Vec<DVec3> = mesh_b
        .vertices()
        .iter()
        .map(|&v| b_to_a.transform_point(v))
        .collect();
    let (tris_a, tris_b) = (mesh_a.triangles(), mesh_b.triangles());
    let ba = triangle_bounds(tris_a, &va);
    let bb = triangle_bounds(tris_b, &vb);
    let lo = ba[0].max(bb[0]);
    let hi = ba[1].min(bb[1]);
    if !lo.cmplt(hi).all() {
        return Ok(Prepared::Empty(Box::new(empty_result(va.len(), vb.len()))));
    }
    let grids: [LineGrid; 3] = std::array::from_fn(|k| LineGrid::new(k, lo, hi, options.sampling));
    let rays: f64 = grids.iter().map(|g| g.n[0] as f64 * g.n[1] as f64).sum();
    for limit in [options.max_rays, MAX_GPU_RAYS] {
        if rays > limit as f64 {
            return Err(VolumeError::TooManyRays {
                rays: rays.min(u64::MAX as f64) as u64,
                limit,
            }
            .into());
        }
    }
    let per_axis: [u64; 3] = std::array::from_fn(|k| grids[k].n[0] * grids[k].n[1]);
    let total = per_axis.iter().sum::<u64>();

    // Local frame: shift by the overlap box's centre, round to f32.
    let origin = (lo + hi) * 0.5;
    let local = |p: DVec3| (p - origin).as_vec3();
    let la: Vec<Vec3> = va.iter().map(|&p| local(p)).collect();
    let lb: Vec<Vec3> = vb.iter().map(|&p| local(p)).collect();
    if !la.iter().chain(&lb).all(|p| p.is_finite()) {
        return Err(GpuError::InvalidInput {
            what: "GPU volume",
            reason: "a vertex is beyond f32 range in the local frame".into(),
        });
    }
    let mut geom: Vec<f32> = Vec::with_capacity(3 * (la.len() + lb.len()));
    geom.extend(la.iter().flat_map(|p| p.to_array()));
    let b_base = to_u32("GPU volume vertices", geom.len() as u64)?;
    geom.extend(lb.iter().flat_map(|p| p.to_array()));
    let mut grid = [[0u32; 4]; 3];
    for (k, g) in grids.iter().enumerate() {
        let axes = [(k + 1) % 3, (k + 2) % 3];
        for d in 0..2 {
            grid[k][d] = to_u32("GPU volume line table", geom.len() as u64)?;
            geom.extend((0..g.n[d]).map(|i| (g.coord(d, i) - origin[axes[d]]) as f32));
        }
        grid[k][2] = to_u32("GPU volume line grid", g.n[0])?;
        grid[k][3] = to_u32("GPU volume line grid", g.n[1])?;
    }
    let mut nodes = Vec::with_capacity(tree_a.nodes().len() + tree_b.nodes().len());
    refit(tree_a, tris_a, &la, &mut nodes);
    let b_nodes = to_u32("GPU volume nodes", nodes.len() as u64)?;
    refit(tree_b, tris_b, &lb, &mut nodes);
    Ok(Prepared::Lines(Box::new(PairPrep {
        va,
        vb,
        grids,
        per_axis,
        total,
        origin,
        geom,
        b_base,
        grid,
        nodes,
        b_nodes,
        depth: [tree_a.depth() as u32, tree_b.depth() as u32],
        // The f64 shift p - origin rounds by at most 2^-53 (|p| + |origin|); the CPU's own f64
        // depths by a few units of 2^-53 |p|: 2^-48 |origin| + the relative terms covers both.
        tol: (origin.abs().max_element() * 2f64.powi(-48)) as f32,
        centre: options.centre,
        collect_points: options.collect_points,
    })))
}

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
    counter: wgpu::Buffer,
    ray_out: wgpu::Buffer,
    records: wgpu::Buffer,
    lines: u64,
    capacity: u64,
    _keep: Vec<wgpu::Buffer>,
}

/// Where a batch's results land in the staging buffer.
pub(crate) struct VolumeRegions {
    counter: Region,
    ray_out: Region,
    records: Region,
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
struct Growable;

impl Growable {
    fn sized(ctx: &GpuContext, what: &'static str, bytes: u64) -> Result<wgpu::Buffer, GpuError> {
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

/// The host reduction of one pair: the CPU's line order, exact recasts of flagged lines, the
/// gradient and points from the records (see the module documentation). `lines` and `records`
/// are the pair's (records sorted by line, numbered from `start`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn reduce_pair(
    prep: &PairPrep,
    (mesh_a, a_at_identity): (&TriMesh, &RayMesh),
    (mesh_b, tree_b): (&TriMesh, &BalancedTree),
    b_to_a: &DPose,
    lines: &[[u32; 2]],
    records: &[Record],
    start: u64,
    report: &mut GpuVolumeReport,
) -> Result<VolumeResult, GpuError> {
    let grids = &prep.grids;
    let mut ray_index = 0usize;
    for (k, g) in grids.iter().enumerate() {
        for i in 0..g.n[0] {
            for j in 0..g.n[1] {
                if lines[ray_index][1] & FLAG_OVERFLOW != 0 {
                    return Err(GpuError::VolumeHitOverflow {
                        axis: k,
                        u: g.coord(0, i),
                        v: g.coord(1, j),
                        cap: MAX_HITS_PER_RAY,
                    });
                }
                ray_index += 1;
            }
        }
    }
    report.records = records.len();
    let (tris_a, tris_b) = (mesh_a.triangles(), mesh_b.triangles());
    let mut reduce = Reduce {
        result: empty_result(prep.va.len(), prep.vb.len()),
        va: &prep.va,
        vb: &prep.vb,
        tris_a,
        tris_b,
        collect_points: prep.collect_points,
    };
    report.origin = prep.origin;
    report.rays = lines
        .iter()
        .map(|&[len, flags]| GpuRay {
            length: f32::from_bits(len),
            uncertain: flags & FLAG_UNCERTAIN != 0,
            unbalanced: flags & FLAG_UNBALANCED != 0,
            hits: flags >> 8,
        })
        .collect();
    let origin = prep.origin;
    let mut mb: Option<RayMesh> = None;
    let mut scratch = Scratch::default();
    let mut cursor = 0usize;
    let mut ray_index = 0u64;
    let mut axis_error = [0.0; 3];
    let mut lengths = Vec::new();
    for (k, g) in grids.iter().enumerate() {
        let w = g.h[0] * g.h[1];
        reduce.result.pixel_area[k] = w;
        let mut length = 0.0;
        lengths.clear();
        for i in 0..g.n[0] {
            let u = g.coord(0, i);
            for j in 0..g.n[1] {
                let ray = AxisRay {
                    axis: k,
                    u,
                    v: g.coord(1, j),
                };
                let gpu = report.rays[ray_index as usize];
                if gpu.unbalanced {
                    report.unbalanced += 1;
                }
                if gpu.uncertain || gpu.unbalanced {
                    report.recast += 1;
                    if mb.is_none() {
                        mb = Some(RayMesh::new(mesh_b, tree_b, b_to_a)?);
                    }
                    if let Some(mb) = &mb {
                        let l = reduce.recast(a_at_identity, mb, &ray, &mut scratch);
                        length += l;
                        lengths.push(l);
                    }
                } else {
                    length += f64::from(gpu.length);
                    lengths.push(f64::from(gpu.length));
                }
                while cursor < records.len() && u64::from(records[cursor].ray) == start + ray_index
                {
                    let r = records[cursor];
                    cursor += 1;
                    if gpu.uncertain || gpu.unbalanced {
                        continue;
                    }
                    let sign = if r.id & INTERVAL_END != 0 { 1.0 } else { -1.0 };
                    reduce.endpoint(
                        &ray,
                        r.id & ON_B != 0,
                        r.id & TRI_MASK,
                        sign,
                        f64::from(r.t) + origin[k],
                        r.l.map(f64::from),
                    );
                }
                ray_index += 1;
            }
        }
        reduce.result.axis_volumes[k] = w * length;
        axis_error[k] = error_estimate::axis_error(&lengths, g.n[0] as usize, g.n[1] as usize, w);
    }
    let mut result = reduce.result;
    result.estimated_axis_error = Some(axis_error);
    result.ray_count = prep.total as usize;
    result.volume = result.axis_volumes.iter().sum::<f64>() / 3.0;
    let c = prep.centre;
    for (g, &p) in result.gradient_b.iter().zip(&prep.vb) {
        result.force -= *g;
        result.torque -= (p - c).cross(*g);
    }
    Ok(result)
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

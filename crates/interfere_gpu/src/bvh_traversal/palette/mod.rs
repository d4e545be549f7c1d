//! The complete Greß–Zachmann GPU traversal (2004, sections 4.2–4.4 and 5): many object pairs in
//! one dispatch per step, triangle tests at the leaves on the GPU, and the temporal-coherence
//! entrance level. Shaders: `shaders/tri_tri.wgsl` + `shaders/bvh_palette.wgsl`.
//!
//! Every mesh of a [`GpuMeshSet`] lives in three shared buffers (nodes, level offsets,
//! triangles). A query gets a **palette** of [`ObjectPair`]s (two meshes of the set and the
//! relative pose `b_to_a`); each list entry carries its object pair's index, so the traversal of
//! all pairs shares every dispatch. Step `k` pairs level `min(k, depth)` of each tree of each
//! object pair, as `interfere_geometry::bvh::bfs` does for one pair; an entry whose object pair
//! is at its leaf step runs the conservative `f32` triangle test ([`crate::tri_tri`]) and
//! appends `(object pair, triangle of A, triangle of B)` with an atomic counter.
//!
//! Per step: `count` (box test or leaf triangle test), the prefix sum ([`crate::PrefixSum`],
//! here in its indirect form), `scatter`, then the `advance` kernel of
//! `shaders/palette_control.wgsl`, which reads the scan total on the GPU, clamps it to the list
//! capacity (recording the first overflow and the length it needed) and writes the next step's
//! indirect dispatch arguments (count/scatter and every scan level). So every step of a query
//! is recorded up front and submitted at once; the hits (up to the hit capacity, their count
//! counted past it) and the per-step list lengths come back in one readback. A round whose
//! lists or hits did not fit is repeated with the measured size (`seed` starts the list from
//! one flag per object pair, which lets the step job start from CInDeR's answer on the GPU).
//!
//! The box test's margin on this path is [`TRI_PATH_BOX_MARGIN`], larger than the triangle
//! test's distance bound, so no pair the triangle test reports is pruned higher up: the result
//! equals the brute-force kernel's ([`crate::brute_force`]) and is independent of the entrance
//! level.

mod record;

use super::{Growable, to_u32};
use crate::compute::{compute_kernels, storage_entry, uniform_entry};
use crate::context::GpuContext;
use crate::error::GpuError;
use crate::readback::{
    ReadbackPlan, Region, init_buffer, read_buffer, scoped, storage_buffer, wait_for,
};
use crate::scan::PrefixSum;
use crate::timing::{Stage, StageTimings, Timestamps};
use crate::tri_tri::{
    GpuObjectPair, MeshRef, TRI_ABSOLUTE_EPS, TRI_PATH_BOX_MARGIN, TRI_RELATIVE_EPS,
};
use crate::{shaders, tri_tri};
use interfere_geometry::bvh::bfs::EntranceUse;
use interfere_geometry::bvh::{BalancedNode, BalancedTree};
use interfere_geometry::glam::DVec3;
use interfere_geometry::{DPose, TriMesh};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Absolute part of the box margin on the triangle path.
const BOX_ABSOLUTE_MARGIN: f32 = 1e-30;

/// One mesh of a set, host side.
#[derive(Debug, Clone)]
pub(crate) struct MeshInfo {
    pub(crate) r: MeshRef,
    pub(crate) triangles: u32,
    depth: usize,
    root: BalancedNode,
}

/// Meshes with their balanced trees uploaded to one device, ready for [`GpuTriangleTraversal`]
/// and [`crate::GpuBruteForce`] queries.
#[derive(Debug)]
pub struct GpuMeshSet {
    id: u64,
    pub(crate) nodes: wgpu::Buffer,
    pub(crate) levels: wgpu::Buffer,
    pub(crate) tris: wgpu::Buffer,
    pub(crate) meshes: Vec<MeshInfo>,
}

impl GpuMeshSet {
    /// Uploads `meshes` (each with the [`BalancedTree`] built from it) to `ctx`'s device.
    /// A tree whose leaf count differs from its mesh's triangle count, or totals past `u32`
    /// indexing or the device's buffer limits, are typed errors.
    pub fn upload(
        ctx: &GpuContext,
        meshes: &[(&TriMesh, &BalancedTree)],
    ) -> Result<Self, GpuError> {
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        let (mut nodes, mut levels, mut tris) = (Vec::new(), Vec::new(), Vec::<[f32; 4]>::new());
        let mut infos = Vec::with_capacity(meshes.len());
        for (k, (mesh, tree)) in meshes.iter().enumerate() {
            if tree.level_len(tree.depth()) != mesh.triangle_count() {
                return Err(GpuError::InvalidInput {
                    what: "GPU mesh set upload",
                    reason: format!(
                        "mesh {k}: the tree has {} leaves but the mesh {} triangles",
                        tree.level_len(tree.depth()),
                        mesh.triangle_count()
                    ),
                });
            }
            let r = MeshRef {
                node_base: to_u32("GPU mesh set nodes", nodes.len())?,
                level_base: to_u32("GPU mesh set levels", levels.len())?,
                depth: to_u32("GPU mesh set depth", tree.depth())?,
                tri_base: to_u32("GPU mesh set triangles", tris.len() / 3)?,
            };
            let level_offsets = tree
                .level_offsets()
                .iter()
                .map(|&o| to_u32("GPU mesh set levels", o))
                .collect::<Result<Vec<u32>, _>>()?;
            levels.extend_from_slice(&level_offsets);
            nodes.extend_from_slice(tree.nodes());
            for t in 0..mesh.triangle_count() {
                tris.extend(mesh.triangle(t).map(|v| [v.x, v.y, v.z, 0.0]));
            }
            infos.push(MeshInfo {
                r,
                triangles: to_u32("GPU mesh set triangles", mesh.triangle_count())?,
                depth: tree.depth(),
                root: *tree.root(),
            });
        }
        // Shader indices: node_base + offset + i and 3 * tri + k must fit in u32.
        to_u32("GPU mesh set nodes", nodes.len())?;
        to_u32("GPU mesh set triangle vertices", tris.len())?;
        Ok(Self {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            nodes: storage_buffer(
                ctx,
                "GPU mesh set nodes",
                &nodes,
                wgpu::BufferUsages::empty(),
            )?,
            levels: storage_buffer(
                ctx,
                "GPU mesh set levels",
                &levels,
                wgpu::BufferUsages::empty(),
            )?,
            tris: storage_buffer(
                ctx,
                "GPU mesh set triangles",
                &tris,
                wgpu::BufferUsages::empty(),
            )?,
            meshes: infos,
        })
    }

    /// Number of meshes.
    pub fn len(&self) -> usize {
        self.meshes.len()
    }

    /// Whether the set holds no mesh.
    pub fn is_empty(&self) -> bool {
        self.meshes.is_empty()
    }

    /// Triangle count of mesh `mesh`.
    pub fn triangle_count(&self, mesh: usize) -> Option<u32> {
        self.meshes.get(mesh).map(|m| m.triangles)
    }

    /// Depth (leaf level index) of mesh `mesh`'s tree.
    pub fn depth(&self, mesh: usize) -> Option<usize> {
        self.meshes.get(mesh).map(|m| m.depth)
    }
}

/// One object pair of a query palette: mesh `b` of the set placed in mesh `a`'s frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ObjectPair {
    /// Index of `A` in the mesh set.
    pub a: u32,
    /// Index of `B` in the mesh set.
    pub b: u32,
    /// `B`'s vertices mapped into `A`'s frame.
    pub b_to_a: DPose,
}

/// A reported triangle pair, tagged with its object pair (index in the palette).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TrianglePair {
    /// Index of the object pair in the query's palette.
    pub object_pair: u32,
    /// Triangle of `A`.
    pub a: u32,
    /// Triangle of `B`.
    pub b: u32,
}

/// The result of a triangle query.
#[derive(Clone, Debug, PartialEq)]
pub struct TrianglePairs {
    /// Every reported pair, sorted by object pair, then `A`'s triangle, then `B`'s: a superset of
    /// the exact set, each extra within [`crate::tri_tri::distance_bound`] of touching.
    pub pairs: Vec<TrianglePair>,
    /// Per-stage timings.
    pub timings: StageTimings,
    /// What the entrance level did (`Off` without one; always `Off` for brute force).
    pub entrance: EntranceUse,
    /// Length of the pair list tested at each step, from the starting step on.
    pub list_lengths: Vec<u64>,
}

impl TrianglePairs {
    /// The pairs `(triangle of A, triangle of B)` of object pair `object_pair`, sorted.
    pub fn of(&self, object_pair: u32) -> Vec<(u32, u32)> {
        self.pairs
            .iter()
            .filter(|p| p.object_pair == object_pair)
            .map(|p| (p.a, p.b))
            .collect()
    }
}

/// Checks a palette against the set and builds its GPU entries.
pub(crate) fn palette_entries(
    set: &GpuMeshSet,
    pairs: &[ObjectPair],
) -> Result<Vec<GpuObjectPair>, GpuError> {
    to_u32("GPU palette", pairs.len())?;
    pairs
        .iter()
        .enumerate()
        .map(|(k, p)| {
            let mesh = |i: u32| {
                set.meshes
                    .get(i as usize)
                    .ok_or_else(|| GpuError::InvalidInput {
                        what: "GPU palette",
                        reason: format!(
                            "object pair {k} names mesh {i}, the set has {}",
                            set.len()
                        ),
                    })
            };
            let (a, b) = (mesh(p.a)?, mesh(p.b)?);
            let r = p.b_to_a.rotation;
            let t = p.b_to_a.translation;
            let finite = [r.x_axis, r.y_axis, r.z_axis, t]
                .iter()
                .all(|c| c.as_vec3().is_finite());
            if !finite {
                return Err(GpuError::InvalidInput {
                    what: "GPU palette",
                    reason: format!("object pair {k}: the pose is not finite in f32"),
                });
            }
            Ok(GpuObjectPair::new(&p.b_to_a, a.r, b.r))
        })
        .collect()
}

/// Reads the hit list (`count` hits after the 4-word header) and sorts it.
pub(crate) fn read_hits(
    ctx: &GpuContext,
    hits: &wgpu::Buffer,
    count: u64,
) -> Result<Vec<TrianglePair>, GpuError> {
    let words: Vec<u32> = read_buffer(ctx, "GPU triangle pairs", hits, 4 + 3 * count as usize)?;
    let mut out: Vec<TrianglePair> = words[4..]
        .chunks_exact(3)
        .map(|w| TrianglePair {
            object_pair: w[0],
            a: w[1],
            b: w[2],
        })
        .collect();
    out.sort_unstable();
    Ok(out)
}

/// A new hit buffer with room for `hits` hits and a zero count.
pub(crate) fn new_hits(ctx: &GpuContext, hits: u64) -> Result<Growable, GpuError> {
    let words = 4 + 3 * hits;
    let buffer = Growable {
        what: "GPU triangle pairs",
        element_size: 4,
        elements: words,
        buffer: Growable::create(ctx, "GPU triangle pairs", words * 4)?,
    };
    ctx.queue
        .write_buffer(&buffer.buffer, 0, bytemuck::cast_slice(&[0u32; 4]));
    Ok(buffer)
}

/// Params uniform of `bvh_palette.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    n: u32,
    groups_x: u32,
    capacity: u32,
    step: u32,
    hit_capacity: u32,
    inflate_below: u32,
    pad: [u32; 2],
    margin: [f32; 4],
    inflate: [f32; 4],
}

#[derive(Debug)]
struct Stored {
    step: usize,
    list: wgpu::Buffer,
    len: u64,
    set_id: u64,
    palette: Vec<(u32, u32, DPose)>,
    radii: Vec<f64>,
}

/// Temporal-coherence entrance level (Greß & Zachmann section 5) for the GPU traversal: the
/// GPU twin of `interfere_geometry::bvh::bfs::EntranceLevel` (fixed level). The pair list of
/// step `level` is recorded (it stays on the GPU) with `A`'s boxes grown by `margin` on the
/// steps above it, and the next queries start from it while every object pair of the same
/// palette has moved, by a bound on the pose change, less than `margin` minus the `f32` test's
/// slack; otherwise they start at the roots and record anew. Results are identical either way.
#[derive(Debug)]
pub struct GpuEntranceLevel {
    level: usize,
    margin: f64,
    stored: Option<Stored>,
}

impl GpuEntranceLevel {
    /// An entrance level at step `level` (clamped below every object pair's leaf step) with
    /// margin `margin` in `A`'s length units (non-positive or non-finite values disable reuse).
    pub fn fixed(level: usize, margin: f64) -> Self {
        Self {
            level,
            margin: if margin.is_finite() && margin > 0.0 {
                margin
            } else {
                0.0
            },
            stored: None,
        }
    }

    /// The configured step.
    pub fn level(&self) -> usize {
        self.level
    }

    /// The margin.
    pub fn margin(&self) -> f64 {
        self.margin
    }

    /// The step of the stored list, if any.
    pub fn stored_step(&self) -> Option<usize> {
        self.stored.as_ref().map(|s| s.step)
    }

    /// Length of the stored list (0 when none).
    pub fn stored_len(&self) -> u64 {
        self.stored.as_ref().map_or(0, |s| s.len)
    }

    /// Forgets the stored list.
    pub fn clear(&mut self) {
        self.stored = None;
    }

    fn reusable(&self, set: &GpuMeshSet, pairs: &[ObjectPair], capacity: u64) -> Option<&Stored> {
        let s = self.stored.as_ref()?;
        if s.set_id != set.id || s.palette.len() != pairs.len() || s.len > capacity {
            return None;
        }
        for ((&(a, b, ref pose0), p), &radius) in s.palette.iter().zip(pairs).zip(&s.radii) {
            if (a, b) != (p.a, p.b) {
                return None;
            }
            let (ra, rb) = (&set.meshes[a as usize].root, &set.meshes[b as usize].root);
            let pose = &p.b_to_a;
            // Every point moves by |ΔR p + Δt| ≤ ‖ΔR‖_F |p| + |Δt|.
            let dr = pose.rotation - pose0.rotation;
            let frob = (dr.x_axis.length_squared()
                + dr.y_axis.length_squared()
                + dr.z_axis.length_squared())
            .sqrt();
            let moved = frob * radius + (pose.translation - pose0.translation).length();
            let corner_max = |n: &BalancedNode| n.dmin().abs().max(n.dmax().abs()).max_element();
            let half = |n: &BalancedNode| ((n.dmax() - n.dmin()) * 0.5).max_element();
            let scale = corner_max(ra)
                + 3.0 * corner_max(rb)
                + pose
                    .translation
                    .abs()
                    .max(pose0.translation.abs())
                    .max_element()
                + 3.0 * (half(ra) + half(rb) + self.margin);
            // The f32 box test accepts separations up to its margin at both poses.
            let slack = 8.0 * (f64::from(TRI_PATH_BOX_MARGIN) * scale + 1e-29);
            let fits = moved * (1.0 + 1e-9) + slack <= self.margin;
            if !fits {
                return None;
            }
        }
        Some(s)
    }
}

/// Largest distance from `B`'s origin of a point of `B`'s root box or of `A`'s root box seen in
/// `B`'s frame.
fn motion_radius(a: &BalancedNode, b: &BalancedNode, pose: &DPose) -> f64 {
    let corners = |n: &BalancedNode| {
        let (lo, hi) = (n.dmin(), n.dmax());
        (0..8).map(move |i| {
            DVec3::new(
                if i & 1 == 0 { lo.x } else { hi.x },
                if i & 2 == 0 { lo.y } else { hi.y },
                if i & 4 == 0 { lo.z } else { hi.z },
            )
        })
    };
    let rb = corners(b).map(|p| p.length()).fold(0.0, f64::max);
    let ra = corners(a)
        .map(|q| (q - pose.translation).length())
        .fold(0.0, f64::max);
    ra.max(rb)
}

/// The compiled kernels of the palette traversal with leaf triangle tests, and the control
/// kernels that chain its steps on the GPU (`shaders/palette_control.wgsl`).
pub struct GpuTriangleTraversal {
    count: wgpu::ComputePipeline,
    scatter: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
    advance: wgpu::ComputePipeline,
    begin: wgpu::ComputePipeline,
    seed: wgpu::ComputePipeline,
    control_layout: wgpu::BindGroupLayout,
    scan: PrefixSum,
    /// Starting list and hit capacities of the next blocking query (learned from the last).
    learned: std::sync::Mutex<(u64, u64)>,
}

/// Where a recorded traversal starts.
pub(crate) enum Start<'a> {
    /// The roots `(0, 0, k)` of the palette's object pairs `k` whose flag (one `u32` per pair
    /// in this buffer) is non-zero, compacted on the GPU in order.
    Flags(&'a wgpu::Buffer),
    /// A list of this many entries (an entrance list), copied in.
    List(&'a wgpu::Buffer, u64),
}

/// What one traversal round needs besides the kernels.
pub(crate) struct RoundSpec<'a> {
    /// The meshes.
    pub set: &'a GpuMeshSet,
    /// The palette entries (`GpuObjectPair`s).
    pub palette: &'a wgpu::Buffer,
    /// Number of palette entries.
    pub pairs: u32,
    /// The starting list.
    pub start: Start<'a>,
    /// The step the starting list belongs to.
    pub first_step: usize,
    /// The last step (the deepest leaf step of the palette).
    pub last_step: usize,
    /// Entries one pair list holds.
    pub list_capacity: u64,
    /// Hits the hit list holds.
    pub hit_capacity: u64,
    /// Growth of `A`'s boxes on the steps below `inflate_below` (entrance recording).
    pub inflate: f32,
    /// See `inflate`.
    pub inflate_below: u32,
    /// Copy the list of this step (an entrance level being recorded).
    pub store_at: Option<usize>,
}

/// The GPU resources of one recorded traversal round (kept alive until it is read back).
pub(crate) struct TraversalRound {
    hits: wgpu::Buffer,
    info: wgpu::Buffer,
    steps: usize,
    first_step: usize,
    hit_capacity: u64,
    /// The copy of the list at `RoundSpec::store_at` (the full capacity; its length is known
    /// after the readback).
    stored: Option<wgpu::Buffer>,
    _keep: Vec<wgpu::Buffer>,
}

/// Where a round's results land in the staging buffer.
pub(crate) struct TraversalRegions {
    info: Region,
    hits: Region,
}

/// A decoded traversal round.
#[derive(Debug)]
pub(crate) struct TraversalOutcome {
    /// The reported triangle pairs, sorted (incomplete when the round overflowed).
    pub pairs: Vec<TrianglePair>,
    /// Length of the list tested at each step from the first, up to the first empty one.
    pub lengths: Vec<u64>,
    /// The first step whose next list did not fit, and the length it needed.
    pub list_overflow: Option<(usize, u64)>,
    /// Hits the leaf tests reported (all of them when no list overflowed).
    pub hits_needed: u64,
    /// Whether `hits_needed` exceeded the hit capacity.
    pub hit_overflow: bool,
}

impl TraversalOutcome {
    /// [`Self::regrow`]'s capacities, at most what the device holds ([`device_capacities`]),
    /// but the list never below `needed` (a need past the device's limit fails when the
    /// buffers are made, [`GpuError::BufferTooLarge`]).
    pub(crate) fn regrow_on(
        &self,
        ctx: &GpuContext,
        needed: u64,
        step: usize,
        last: usize,
        old: u64,
    ) -> (u64, u64) {
        let (list, hits) = self.regrow(needed, step, last, old);
        let (max_list, max_hits) = device_capacities(ctx);
        (list.min(max_list).max(needed), hits.min(max_hits).max(1))
    }

    /// List and hit capacities for the next round after the list of step `step + 1` needed
    /// `needed` entries (of a traversal whose last step is `last`, lists of `old` entries). The
    /// later steps' lengths are unknown (they ran on a truncated list), so they are extrapolated
    /// with the growth per step seen so far (between 2 and 2.5, at most 16 times `needed`); the
    /// hits are bounded by the last list's length. Without this, every later step that
    /// outgrows its list would cost one more round.
    fn regrow(&self, needed: u64, step: usize, last: usize, old: u64) -> (u64, u64) {
        let growth = self
            .lengths
            .windows(2)
            .filter(|w| w[0] > 0)
            .map(|w| w[1] as f64 / w[0] as f64)
            .fold(2.0f64, f64::max)
            .min(2.5);
        let remaining = last.saturating_sub(step + 1) as i32;
        let estimate = (needed as f64 * growth.powi(remaining)).min(16.0 * needed as f64) as u64;
        let list = estimate
            .max(needed)
            .max(2 * old)
            .min(u64::from(u32::MAX / 4));
        (list, list)
    }
}

/// The largest node-pair list and triangle-pair list capacities whose buffers the device allows
/// (12 bytes per listed node pair, 12 per triangle pair after a 16-byte header; the smaller of
/// its storage-binding and buffer-size limits), and at most `u32::MAX / 4` for the kernels'
/// `u32` totals.
pub(crate) fn device_capacities(ctx: &GpuContext) -> (u64, u64) {
    let bytes = crate::readback::buffer_limit(ctx);
    let cap = u64::from(u32::MAX / 4);
    (
        (bytes / 12).min(cap),
        (bytes.saturating_sub(16) / 12).min(cap),
    )
}

/// The list and hit capacities a traversal starts with: `learned` (list, hits) from earlier
/// queries, within what the device holds ([`device_capacities`]), the list never below the
/// `start` node pairs it begins with.
pub(crate) fn starting_capacities(ctx: &GpuContext, learned: (u64, u64), start: u64) -> (u64, u64) {
    let (max_list, max_hits) = device_capacities(ctx);
    (learned.0.min(max_list).max(start), learned.1.min(max_hits))
}

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct Control {
    scan_levels: u32,
    scan_stride: u32,
    max_groups: u32,
    pairs: u32,
    first_step: u32,
    pad: [u32; 3],
}

/// Initial capacities of a blocking query's lists (grown on overflow, up to the caller's
/// capacity).
const FIRST_LIST_CAPACITY: u64 = 1 << 16;
const FIRST_HIT_CAPACITY: u64 = 1 << 14;

impl GpuTriangleTraversal {
    /// Compiles the kernels on `ctx`'s device.
    pub fn new(ctx: &GpuContext) -> Self {
        let device = &ctx.device;
        let module = tri_tri::module(device, "bvh_palette.wgsl", shaders::BVH_PALETTE);
        let mut entries: Vec<wgpu::BindGroupLayoutEntry> =
            (0..5).map(|i| storage_entry(i, true)).collect();
        entries.extend((5..8).map(|i| storage_entry(i, false)));
        entries.push(uniform_entry(8));
        let (layout, [count, scatter]) = compute_kernels(
            device,
            "bvh palette",
            &module,
            &entries,
            ["count", "scatter"],
        );
        let control = shaders::module(device, "palette_control.wgsl", shaders::PALETTE_CONTROL);
        let (control_layout, [advance, begin, seed]) = compute_kernels(
            device,
            "palette control",
            &control,
            &[
                storage_entry(0, true),
                storage_entry(1, false),
                storage_entry(2, false),
                storage_entry(3, false),
                storage_entry(4, false),
                storage_entry(5, true),
                storage_entry(6, false),
                uniform_entry(7),
            ],
            ["advance", "begin", "seed"],
        );
        Self {
            count,
            scatter,
            layout,
            advance,
            begin,
            seed,
            control_layout,
            scan: PrefixSum::new(ctx),
            learned: std::sync::Mutex::new((FIRST_LIST_CAPACITY, FIRST_HIT_CAPACITY)),
        }
    }

    /// The triangle pairs of every object pair of `pairs` (one traversal for all of them).
    /// No pair list and no hit list may exceed `capacity` entries, or
    /// [`GpuError::PairListOverflow`] is returned (capacities above `u32::MAX / 4` are lowered to
    /// it). With `entrance`, the traversal starts from its stored list when that is valid for
    /// this palette and these poses, and records one otherwise. Meshes out of range and poses not
    /// finite in `f32` are [`GpuError::InvalidInput`].
    ///
    /// All steps are recorded at once and submitted together: the list lengths stay on the GPU
    /// (`shaders/palette_control.wgsl` sets up each step's indirect dispatches), and the hits and
    /// per-step lengths come back in one readback. Lists start at half as much again as the
    /// previous query needed (at least 65,536 entries, hits at least 16,384; at most
    /// `capacity`); a round whose lists did not fit is repeated with the length it measured
    /// ([`StageTimings::round_trips`] counts the rounds: only the first overflowing step's need
    /// is known, so a query much larger than the previous one may take several).
    pub fn triangle_pairs(
        &self,
        ctx: &GpuContext,
        set: &GpuMeshSet,
        pairs: &[ObjectPair],
        capacity: u32,
        mut entrance: Option<&mut GpuEntranceLevel>,
    ) -> Result<TrianglePairs, GpuError> {
        let started = Instant::now();
        let mut timings = StageTimings::default();
        let palette = palette_entries(set, pairs)?;
        if capacity == 0 {
            return Err(GpuError::PairListOverflow {
                step: 0,
                needed: 1,
                capacity,
            });
        }
        let capacity = capacity.min(u32::MAX / 4);
        let limit = u64::from(capacity);
        if pairs.is_empty() {
            return Ok(TrianglePairs {
                pairs: Vec::new(),
                timings,
                entrance: EntranceUse::Off,
                list_lengths: Vec::new(),
            });
        }
        let lasts: Vec<usize> = pairs
            .iter()
            .map(|p| {
                set.meshes[p.a as usize]
                    .depth
                    .max(set.meshes[p.b as usize].depth)
            })
            .collect();
        let last = lasts.iter().copied().max().unwrap_or(0);
        let first_leaf = lasts.iter().copied().min().unwrap_or(0);
        let (palette_buffer, all) = scoped(ctx, "GPU triangle traversal", || {
            Ok((
                storage_buffer(ctx, "GPU palette", &palette, wgpu::BufferUsages::empty())?,
                storage_buffer(
                    ctx,
                    "GPU palette flags",
                    &vec![1u32; pairs.len()],
                    wgpu::BufferUsages::empty(),
                )?,
            ))
        })?;

        // Starting list: the stored entrance list, or the roots of every object pair.
        let mut used = EntranceUse::Off;
        let mut record: Option<usize> = None;
        let reuse = entrance
            .as_deref()
            .and_then(|e| e.reusable(set, pairs, limit))
            .map(|s| (s.step, s.len, s.list.clone()));
        let first_step = match &reuse {
            Some((step, _, _)) => {
                used = EntranceUse::Reused { step: *step };
                *step
            }
            None => {
                if pairs.len() as u64 > limit {
                    return Err(GpuError::PairListOverflow {
                        step: 0,
                        needed: pairs.len() as u64,
                        capacity,
                    });
                }
                if let Some(e) = entrance.as_deref_mut() {
                    e.stored = None;
                    let at = e.level.min(first_leaf.saturating_sub(1));
                    used = EntranceUse::Recorded { step: at };
                    record = Some(at);
                }
                0
            }
        };
        let inflate = entrance.as_deref().map_or(0.0, |e| e.margin) as f32;
        let start_len = reuse.as_ref().map_or(pairs.len() as u64, |r| r.1);
        let (first_list, first_hits) = self
            .learned
            .lock()
            .map(|l| *l)
            .unwrap_or((FIRST_LIST_CAPACITY, FIRST_HIT_CAPACITY));
        let (first_list, first_hits) =
            starting_capacities(ctx, (first_list, first_hits), start_len);
        let mut list_capacity = first_list.min(limit);
        let mut hit_capacity = first_hits.min(limit);
        loop {
            let mut stamps = Timestamps::new(ctx);
            let (round, outcome) = scoped(ctx, "GPU triangle traversal", || {
                let mut encoder = ctx.device.create_command_encoder(&Default::default());
                let round = self.record(
                    ctx,
                    &mut encoder,
                    &RoundSpec {
                        set,
                        palette: &palette_buffer,
                        pairs: pairs.len() as u32,
                        start: match &reuse {
                            Some((_, len, list)) => Start::List(list, *len),
                            None => Start::Flags(&all),
                        },
                        first_step,
                        last_step: last,
                        list_capacity,
                        hit_capacity,
                        inflate,
                        inflate_below: record.map_or(0, |at| at as u32),
                        store_at: record,
                    },
                    stamps.as_mut(),
                )?;
                let mut plan = ReadbackPlan::default();
                let regions = round.plan(&mut plan);
                let staging = plan.record(ctx, &mut encoder)?;
                ctx.queue.submit([encoder.finish()]);
                Ok((round, (regions, staging)))
            })?;
            let (regions, staging) = outcome;
            let t = Instant::now();
            let bytes = wait_for(ctx, "GPU triangle pairs", staging)?;
            timings.readback += t.elapsed();
            timings.round_trips += 1;
            let outcome = round.decode(&regions, &bytes);
            if let Some((step, needed)) = outcome.list_overflow {
                if needed > limit {
                    return Err(GpuError::PairListOverflow {
                        step,
                        needed,
                        capacity,
                    });
                }
                let (list, hits) = outcome.regrow_on(ctx, needed, step, last, list_capacity);
                list_capacity = list.min(limit);
                hit_capacity = hit_capacity.max(hits).min(limit);
                continue;
            }
            if outcome.hit_overflow {
                if outcome.hits_needed > limit {
                    return Err(GpuError::PairListOverflow {
                        step: first_step + outcome.lengths.len().saturating_sub(1),
                        needed: outcome.hits_needed,
                        capacity,
                    });
                }
                hit_capacity = outcome.hits_needed.max(2 * hit_capacity).min(limit);
                continue;
            }
            if let (Some(at), Some(e)) = (record, entrance.as_deref_mut()) {
                // The traversal may end before the entrance step: then an empty list is kept
                // at the step where it ended.
                let ended = first_step + outcome.lengths.len();
                let step = at.min(ended);
                let len = outcome.lengths.get(step - first_step).copied().unwrap_or(0);
                if let Some(list) = round.stored.clone() {
                    e.stored = Some(Stored {
                        step,
                        list,
                        len,
                        set_id: set.id,
                        palette: pairs.iter().map(|p| (p.a, p.b, p.b_to_a)).collect(),
                        radii: pairs
                            .iter()
                            .map(|p| {
                                motion_radius(
                                    &set.meshes[p.a as usize].root,
                                    &set.meshes[p.b as usize].root,
                                    &p.b_to_a,
                                )
                            })
                            .collect(),
                    });
                }
            }
            // The next query starts from half as much again as this one needed (never below
            // the first sizes, shrinking by at most half per query).
            if let Ok(mut l) = self.learned.lock() {
                let longest = outcome.lengths.iter().copied().max().unwrap_or(0);
                let next = |needed: u64, old: u64, first: u64| {
                    (needed + needed / 2).max(old / 2).max(first)
                };
                *l = (
                    next(longest, l.0, FIRST_LIST_CAPACITY),
                    next(outcome.hits_needed, l.1, FIRST_HIT_CAPACITY),
                );
            }
            timings.steps = outcome.lengths.len() as u32;
            timings.wall = started.elapsed();
            if let Some(stamps) = stamps {
                timings.kernels = stamps.resolve(ctx)?;
            }
            return Ok(TrianglePairs {
                pairs: outcome.pairs,
                timings,
                entrance: used,
                list_lengths: outcome.lengths,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::readback::wait_for;
    use crate::scan::{BLOCK, scan_shape};

    /// A list that overflowed is regrown by the growth seen so far, but never past what the
    /// device holds in one buffer (at 8 nut–bolt pairs the extrapolation asked lavapipe for
    /// 137 MB against its 128 MiB), and never below the measured need; a traversal starting
    /// from learned sizes starts within the device too.
    #[test]
    fn regrown_lists_fit_the_device() {
        let Some(ctx) = crate::testing::gpu_or_skip("regrown_lists_fit_the_device") else {
            return;
        };
        let bytes = crate::readback::buffer_limit(&ctx);
        let (max_list, max_hits) = device_capacities(&ctx);
        assert!(
            max_list * 12 <= bytes && (max_list + 1) * 12 > bytes.min(u64::from(u32::MAX / 4) * 12)
        );
        assert!(16 + max_hits * 12 <= bytes);
        let outcome = TraversalOutcome {
            pairs: Vec::new(),
            lengths: vec![1, 3, 9, 27],
            list_overflow: None,
            hits_needed: 0,
            hit_overflow: false,
        };
        // Small: the extrapolation as before (2.5 per step left, at most 16 times the need).
        assert_eq!(outcome.regrow_on(&ctx, 100, 3, 10, 64), (1600, 1600));
        // Past the device: capped, but never below the need.
        let big = max_list / 4;
        let (list, hits) = outcome.regrow_on(&ctx, big, 3, 10, 64);
        assert_eq!((list, hits), (max_list, max_hits.min(16 * big)));
        let (list, _) = outcome.regrow_on(&ctx, max_list + 5, 3, 10, 64);
        assert_eq!(list, max_list + 5);
        // A start from learned sizes: within the device, the list never below its start.
        assert_eq!(starting_capacities(&ctx, (100, 50), 300), (300, 50));
        assert_eq!(
            starting_capacities(&ctx, (u64::MAX, u64::MAX), 7),
            (max_list, max_hits)
        );
    }

    /// The GPU's list set-up (`begin` in `shaders/palette_control.wgsl`) writes the dispatch
    /// arguments and scan parameters that the host twins (`scan_shape`, 64 invocations per
    /// count group) give, for lengths around every block boundary, past one dispatch row and
    /// past the capacity (recorded as an overflow); the indirect scan they drive equals the CPU
    /// twin (`exclusive_scan_cpu`) on those lengths.
    #[test]
    fn gpu_list_setup_matches_the_host_shapes() {
        let Some(ctx) = crate::testing::gpu_or_skip("gpu_list_setup_matches_the_host_shapes")
        else {
            return;
        };
        let t = GpuTriangleTraversal::new(&ctx);
        let capacity: u64 = 1 << 23;
        // Data to scan: a fixed pseudo-random sequence of small counts.
        let values: Vec<u32> = (0..=capacity as u32)
            .map(|i| i.wrapping_mul(2_654_435_761) >> 30)
            .collect();
        let offsets = Growable::create(&ctx, "offsets", (capacity + 1) * 4).expect("buffer");
        let scan = t
            .scan
            .indirect(&ctx, &offsets, capacity + 1)
            .expect("indirect scan");
        let max_groups = u64::from(ctx.device.limits().max_compute_workgroups_per_dimension);
        for n in [
            0u64,
            1,
            63,
            64,
            511,
            512,
            513,
            BLOCK * BLOCK - 1,
            BLOCK * BLOCK,
            300_001,
            64 * max_groups + 5,
            capacity + 7,
        ] {
            let params = Params {
                n: 0,
                groups_x: 0,
                capacity: capacity as u32,
                step: 3,
                hit_capacity: 1,
                inflate_below: 0,
                pad: [0; 2],
                margin: [0.0; 4],
                inflate: [0.0; 4],
            };
            let step_params = init_buffer(
                &ctx,
                "params",
                bytemuck::bytes_of(&params),
                wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            );
            let control = Control {
                scan_levels: scan.levels as u32,
                scan_stride: (scan.stride / 4) as u32,
                max_groups: max_groups as u32,
                pairs: n as u32,
                first_step: 3,
                pad: [0; 3],
            };
            let control = init_buffer(
                &ctx,
                "control",
                bytemuck::bytes_of(&control),
                wgpu::BufferUsages::UNIFORM,
            );
            let args = ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("args"),
                size: 16 * (1 + scan.levels as u64),
                usage: wgpu::BufferUsages::INDIRECT
                    | wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            let info = Growable::create(&ctx, "info", 64).expect("buffer");
            let dummy = [
                Growable::create(&ctx, "flags", 4).expect("buffer"),
                Growable::create(&ctx, "list", 4).expect("buffer"),
            ];
            let buffers = [
                &offsets,
                &step_params,
                &scan.params,
                &args,
                &info,
                &dummy[0],
                &dummy[1],
                &control,
            ];
            let entries: Vec<wgpu::BindGroupEntry> = buffers
                .iter()
                .enumerate()
                .map(|(i, b)| wgpu::BindGroupEntry {
                    binding: i as u32,
                    resource: b.as_entire_binding(),
                })
                .collect();
            let bind = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: None,
                layout: &t.control_layout,
                entries: &entries,
            });
            ctx.queue
                .write_buffer(&offsets, 0, bytemuck::cast_slice(&values));
            let mut encoder = ctx.device.create_command_encoder(&Default::default());
            {
                let mut pass = encoder.begin_compute_pass(&Default::default());
                pass.set_pipeline(&t.begin);
                pass.set_bind_group(0, &bind, &[]);
                pass.dispatch_workgroups(1, 1, 1);
            }
            // The indirect scan of the n + 1 counts those arguments describe.
            {
                let mut pass = encoder.begin_compute_pass(&Default::default());
                t.scan.record_indirect(&mut pass, &scan, &args, 16);
            }
            let mut plan = ReadbackPlan::default();
            let r_params = plan.add(&step_params, 0, 8);
            let r_args = plan.add(&args, 0, 16 * (1 + scan.levels as u64));
            let r_scan = plan.add(&scan.params, 0, scan.stride * scan.levels as u64);
            let r_info = plan.add(&info, 0, 24);
            let kept = n.min(capacity);
            // The scan is compared up to a million values (three levels), the shapes always.
            let compared = kept > 0 && kept <= 1 << 20;
            let r_data = plan.add(&offsets, 0, if compared { (kept + 1) * 4 } else { 0 });
            let staging = plan.record(&ctx, &mut encoder).expect("staging");
            ctx.queue.submit([encoder.finish()]);
            let bytes = wait_for(&ctx, "list setup", staging).expect("readback");
            if compared {
                let mut expected = values[..=kept as usize].to_vec();
                crate::scan::exclusive_scan_cpu(&mut expected);
                assert!(
                    r_data.words(&bytes) == expected,
                    "n = {n}: the indirect scan differs from the CPU twin"
                );
            }
            let p = r_params.words(&bytes);
            let a = r_args.words(&bytes);
            let sp = r_scan.words(&bytes);
            let info = r_info.words(&bytes);
            assert_eq!(u64::from(p[0]), kept, "n = {n}: list length");
            assert_eq!(
                (info[0], u64::from(info[1])),
                if n > capacity { (4, n) } else { (0, 0) },
                "n = {n}: overflow record"
            );
            assert_eq!(u64::from(info[4]), kept, "n = {n}: recorded length");
            let groups = if kept == 0 {
                0
            } else {
                (kept + 1).div_ceil(64)
            };
            let x = groups.min(max_groups);
            let y = if x == 0 { 0 } else { groups.div_ceil(x) };
            assert_eq!(
                (u64::from(a[0]), u64::from(a[1]), a[2]),
                (x, y, 1),
                "n = {n}: count groups"
            );
            assert_eq!(u64::from(p[1]), x, "n = {n}: groups_x");
            let stride = (scan.stride / 4) as usize;
            for (l, &(size, gx, gy)) in scan_shape(kept + 1, scan.levels, max_groups)
                .iter()
                .enumerate()
            {
                let (gx, gy) = if kept == 0 { (0, 0) } else { (gx, gy) };
                assert_eq!(
                    (a[4 + 4 * l], a[5 + 4 * l]),
                    (gx, gy),
                    "n = {n}: scan level {l} groups"
                );
                assert_eq!(u64::from(sp[l * stride]), size, "n = {n}: level {l} size");
                assert_eq!(sp[l * stride + 1], gx, "n = {n}: level {l} width");
            }
        }
    }
}

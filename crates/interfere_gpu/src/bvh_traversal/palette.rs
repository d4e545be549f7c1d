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
//! Per step: `count` (box test or leaf triangle test), [`crate::PrefixSum`], one readback of 8
//! bytes (the scan total and the hit count: they size the next list and the hit buffer and are
//! checked against the capacity), then `scatter`. At the end the hit count is already known, so
//! only that many hits are read back.
//!
//! The box test's margin on this path is [`TRI_PATH_BOX_MARGIN`], larger than the triangle
//! test's distance bound, so no pair the triangle test reports is pruned higher up: the result
//! equals the brute-force kernel's ([`crate::brute_force`]) and is independent of the entrance
//! level.

use super::{Growable, WG, to_u32};
use crate::compute::{compute_kernels, storage_entry, uniform_entry};
use crate::context::GpuContext;
use crate::error::GpuError;
use crate::readback::{check_size, map_and_copy, read_buffer, storage_buffer};
use crate::scan::{PrefixSum, ScanScratch, dispatch_shape};
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
use wgpu::util::DeviceExt;

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

/// Makes a hit buffer (4-word header, then 3 words per hit) hold `hits` hits, copying the old
/// contents into the new buffer through `encoder`. Returns the capacity in hits.
pub(crate) fn ensure_hits(
    ctx: &GpuContext,
    encoder: &mut wgpu::CommandEncoder,
    buffer: &mut Growable,
    hits: u64,
    limit: u64,
) -> Result<u64, GpuError> {
    let words = 4 + 3 * hits;
    if buffer.elements < words {
        let grown = hits.next_power_of_two().min(limit.max(hits));
        let bytes = (4 + 3 * grown) * 4;
        let new = Growable::create(ctx, buffer.what, bytes)?;
        encoder.copy_buffer_to_buffer(&buffer.buffer, 0, &new, 0, buffer.elements * 4);
        buffer.buffer = new;
        buffer.elements = 4 + 3 * grown;
    }
    Ok((buffer.elements - 4) / 3)
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

/// The compiled kernels of the palette traversal with leaf triangle tests.
pub struct GpuTriangleTraversal {
    count: wgpu::ComputePipeline,
    scatter: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
    scan: PrefixSum,
}

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
        Self {
            count,
            scatter,
            layout,
            scan: PrefixSum::new(ctx),
        }
    }

    /// The triangle pairs of every object pair of `pairs` (one traversal for all of them).
    /// No pair list and no hit list may exceed `capacity` entries, or
    /// [`GpuError::PairListOverflow`] is returned (capacities above `u32::MAX / 4` are lowered to
    /// it). With `entrance`, the traversal starts from its stored list when that is valid for
    /// this palette and these poses, and records one otherwise. Meshes out of range and poses not
    /// finite in `f32` are [`GpuError::InvalidInput`].
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
        let palette_buffer =
            storage_buffer(ctx, "GPU palette", &palette, wgpu::BufferUsages::empty())?;

        let mut lists = [
            Growable::new(ctx, "GPU pair list", 12)?,
            Growable::new(ctx, "GPU pair list", 12)?,
        ];
        let mut offsets = Growable::new(ctx, "GPU pair offsets", 4)?;
        let mut hits = new_hits(ctx, 0)?;
        let mut scratch = ScanScratch::default();
        let mut stamps = Timestamps::new(ctx);

        // Starting list: the stored entrance list, or the roots of every object pair.
        let mut step = 0;
        let mut n = pairs.len() as u64;
        let mut used = EntranceUse::Off;
        let mut record: Option<usize> = None;
        let reuse = entrance
            .as_deref()
            .and_then(|e| e.reusable(set, pairs, limit))
            .map(|s| (s.step, s.len));
        if let Some((s, len)) = reuse {
            step = s;
            n = len;
            used = EntranceUse::Reused { step };
            if n > 0 {
                lists[0].ensure(ctx, n, limit.max(n))?;
                let stored = entrance.as_deref().and_then(|e| e.stored.as_ref());
                if let Some(stored) = stored {
                    let mut encoder = ctx.device.create_command_encoder(&Default::default());
                    encoder.copy_buffer_to_buffer(&stored.list, 0, &lists[0].buffer, 0, n * 12);
                    ctx.queue.submit([encoder.finish()]);
                }
            }
        } else {
            if n > limit {
                return Err(GpuError::PairListOverflow {
                    step: 0,
                    needed: n,
                    capacity,
                });
            }
            let roots: Vec<[u32; 3]> = (0..pairs.len() as u32).map(|k| [0, 0, k]).collect();
            lists[0].ensure(ctx, n, limit)?;
            ctx.queue
                .write_buffer(&lists[0].buffer, 0, bytemuck::cast_slice(&roots));
            if let Some(e) = entrance.as_deref_mut() {
                e.stored = None;
                let at = e.level.min(first_leaf.saturating_sub(1));
                used = EntranceUse::Recorded { step: at };
                record = Some(at);
            }
        }
        let inflate = entrance.as_deref().map_or(0.0, |e| e.margin) as f32;
        let mut list_lengths = Vec::new();
        let mut hit_count = 0u64;
        let mut current = 0;
        loop {
            if record == Some(step) {
                self.store(
                    ctx,
                    entrance.as_deref_mut(),
                    set,
                    pairs,
                    step,
                    &lists[current],
                    n,
                )?;
            }
            if n == 0 || step > last {
                break;
            }
            list_lengths.push(n);
            let groups = (n + 1).div_ceil(WG);
            let (gx, gy) = dispatch_shape(ctx, groups)?;
            offsets.ensure(ctx, n + 1, limit + 1)?;
            let mut encoder = ctx.device.create_command_encoder(&Default::default());
            let hit_capacity = if step >= first_leaf {
                ensure_hits(
                    ctx,
                    &mut encoder,
                    &mut hits,
                    (hit_count + n).min(limit),
                    limit,
                )?
            } else {
                (hits.elements - 4) / 3
            };
            let mut params = Params {
                n: n as u32,
                groups_x: gx,
                capacity: 0,
                step: step as u32,
                hit_capacity: hit_capacity as u32,
                inflate_below: record.map_or(0, |at| at as u32),
                pad: [0; 2],
                margin: [
                    TRI_PATH_BOX_MARGIN,
                    BOX_ABSOLUTE_MARGIN,
                    TRI_RELATIVE_EPS,
                    TRI_ABSOLUTE_EPS,
                ],
                inflate: [inflate, 0.0, 0.0, 0.0],
            };
            let bind = self.bind_group(
                ctx,
                set,
                &palette_buffer,
                &lists,
                current,
                &offsets,
                &hits,
                &params,
            );
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("bvh palette count"),
                    timestamp_writes: stamps.as_mut().and_then(|t| t.pass(Stage::Test)),
                });
                pass.set_pipeline(&self.count);
                pass.set_bind_group(0, &bind, &[]);
                pass.dispatch_workgroups(gx, gy, 1);
            }
            let scan = &self.scan;
            let mut record_scan = |encoder: &mut wgpu::CommandEncoder| {
                scan.encode(ctx, encoder, &offsets.buffer, n + 1, &mut scratch)
                    .map(|_| ())
            };
            match stamps.as_mut() {
                Some(t) => t.bracket(&mut encoder, Stage::Scan, record_scan)?,
                None => record_scan(&mut encoder)?,
            }
            let staging = ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("bvh palette counts staging"),
                size: 8,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            encoder.copy_buffer_to_buffer(&offsets.buffer, n * 4, &staging, 0, 4);
            encoder.copy_buffer_to_buffer(&hits.buffer, 0, &staging, 4, 4);
            ctx.queue.submit([encoder.finish()]);
            let t = Instant::now();
            let read = map_and_copy::<u32>(ctx, "GPU pair total and hit count", &staging, 2)?;
            timings.readback += t.elapsed();
            timings.round_trips += 1;
            timings.steps += 1;
            let (total, hits_now) = (u64::from(read[0]), u64::from(read[1]));
            if hits_now > hit_capacity {
                return Err(GpuError::PairListOverflow {
                    step,
                    needed: hits_now,
                    capacity,
                });
            }
            hit_count = hits_now;
            if total > limit {
                return Err(GpuError::PairListOverflow {
                    step,
                    needed: total,
                    capacity,
                });
            }
            step += 1;
            if total == 0 {
                // Record an empty list at the entrance step when nothing survives before it.
                if let Some(at) = record
                    && step <= at
                {
                    self.store(
                        ctx,
                        entrance.as_deref_mut(),
                        set,
                        pairs,
                        step,
                        &lists[current],
                        0,
                    )?;
                }
                break;
            }
            let next = 1 - current;
            lists[next].ensure(ctx, total, limit)?;
            params.capacity = lists[next].elements as u32;
            let bind = self.bind_group(
                ctx,
                set,
                &palette_buffer,
                &lists,
                current,
                &offsets,
                &hits,
                &params,
            );
            let mut encoder = ctx.device.create_command_encoder(&Default::default());
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("bvh palette scatter"),
                    timestamp_writes: stamps.as_mut().and_then(|t| t.pass(Stage::Scatter)),
                });
                pass.set_pipeline(&self.scatter);
                pass.set_bind_group(0, &bind, &[]);
                pass.dispatch_workgroups(gx, gy, 1);
            }
            ctx.queue.submit([encoder.finish()]);
            n = total;
            current = next;
        }
        let t = Instant::now();
        let out = read_hits(ctx, &hits.buffer, hit_count)?;
        timings.readback += t.elapsed();
        timings.round_trips += 1;
        timings.wall = started.elapsed();
        if let Some(stamps) = stamps {
            timings.kernels = stamps.resolve(ctx)?;
        }
        Ok(TrianglePairs {
            pairs: out,
            timings,
            entrance: used,
            list_lengths,
        })
    }

    /// Copies the current list into the entrance level (on the GPU).
    #[allow(clippy::too_many_arguments)]
    fn store(
        &self,
        ctx: &GpuContext,
        entrance: Option<&mut GpuEntranceLevel>,
        set: &GpuMeshSet,
        pairs: &[ObjectPair],
        step: usize,
        list: &Growable,
        len: u64,
    ) -> Result<(), GpuError> {
        let Some(e) = entrance else {
            return Ok(());
        };
        check_size(ctx, "GPU entrance list", len * 12)?;
        let buffer = Growable::create(ctx, "GPU entrance list", len * 12)?;
        if len > 0 {
            let mut encoder = ctx.device.create_command_encoder(&Default::default());
            encoder.copy_buffer_to_buffer(&list.buffer, 0, &buffer, 0, len * 12);
            ctx.queue.submit([encoder.finish()]);
        }
        e.stored = Some(Stored {
            step,
            list: buffer,
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
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn bind_group(
        &self,
        ctx: &GpuContext,
        set: &GpuMeshSet,
        palette: &wgpu::Buffer,
        lists: &[Growable; 2],
        current: usize,
        offsets: &Growable,
        hits: &Growable,
        params: &Params,
    ) -> wgpu::BindGroup {
        let uniform = ctx
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("bvh palette params"),
                contents: bytemuck::bytes_of(params),
                usage: wgpu::BufferUsages::UNIFORM,
            });
        let buffers = [
            &set.nodes,
            &set.levels,
            &set.tris,
            palette,
            &lists[current].buffer,
            &lists[1 - current].buffer,
            &offsets.buffer,
            &hits.buffer,
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
            label: Some("bvh palette bind group"),
            layout: &self.layout,
            entries: &entries,
        })
    }
}

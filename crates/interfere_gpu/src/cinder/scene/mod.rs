//! CInDeR for a whole scene in one run: object identification (Knott & Pai 2003, §5),
//! early non-interference by occlusion query (§6.1), localization (§6.2), offset edges (§6.3),
//! several view directions, and "mesh not closed" reports (§4.1). Shader:
//! `shaders/cinder_scene.wgsl`.
//!
//! **Per-pixel lists instead of one stencil count.** The paper's stencil buffer holds one count
//! per pixel, for the nearest edge point only; identifying the penetrated object then needs one
//! counting pass per object (§5.2), and an interfering edge point hidden behind a nearer edge
//! point is lost (§6.4, Figure 6). Here every ray keeps the list of all triangle crossings
//! (depth, object, front or back face) and all edge points (depth, object) it meets, appended by
//! fragment shaders with atomics in one render pass over every object. A full-screen resolve pass
//! then evaluates, per pixel, the §4.1 count *per object*: for an edge point of `i` at depth `d`
//! and an object `j`, front minus back faces of `j` in front of `d`. A positive count identifies
//! the ordered pair "`i` penetrates `j`" directly, so all pairs of all `N` objects come out of one
//! build pass and one resolve pass per view (linear in objects and polygons, §7.3), and no edge
//! point hides another.
//!
//! **Reads (§6.1).** The resolve pass keeps a pixel only when it found an interference or an
//! unbalanced count, inside an occlusion query. All views of a run are recorded and submitted at
//! once; their counters and queries, the pair bitset and the not-closed bits (both accumulated
//! over the views) come back in one readback, and the points of the views whose query counted
//! samples in a second one. With [`CinderViews::ZThenXy`] a compute kernel
//! (`shaders/cinder_pairs.wgsl`) between the views ORs the bitset after the view along `z` and
//! writes the indirect draw arguments of the views along `x` and `y`: their full vertex counts
//! when `z` found no pair, zero otherwise, so the fallback views cost a readback of nothing. The
//! surviving pixels also write the penetrated object's identifier (plus one) into an `R32Uint`
//! colour target, the §5 frame buffer, which stays on the GPU: a pixel can see several pairs, so
//! pairs are read from the bitset instead.
//!
//! **Localization (§6.2).** Each interfering edge pixel's position and depth are un-projected
//! (in f64) to the world-space edge point. It lies on the penetrating object's offset edge,
//! within about a pixel sideways of the sampled ray, inside the penetrated object up to the
//! pixel size.
//!
//! **Offset edges (§6.3).** Lines and triangles are not rasterized alike, so an edge point can
//! land just inside its own object. Edges are moved outward along the (angle-weighted) vertex
//! normals in the vertex shader by [`CinderSceneOptions::edge_offset_pixels`] pixels (default 1): that
//! is the paper's cure. Because the lists know object identities, self-crossings can never be
//! reported as pairs anyway; they are counted in [`CinderSceneReport::self_hits`] (zero with the
//! offset in the tests). The price of the offset is that objects closer than about the offset
//! are reported as interfering (see below).
//!
//! **Precision (§6.5).** One orthographic view per axis covers the union of the bounding boxes of
//! the objects whose boxes overlap another box (objects whose boxes overlap nothing cannot
//! interfere and are not drawn); pixels are square, `pixel = largest extent / resolution`.
//! With `p` the pixel size and `o` the edge offset:
//! - pairs whose intersection contains a ball of radius [`CinderSceneReport::resolution_bound`]
//!   `= o + 2p` are found (tested; a smaller penetration may be missed);
//! - pairs farther apart than `o + p` are never reported;
//! - in between, including touching objects (closed sets meeting at the boundary, which the exact
//!   CPU test calls interfering) and gaps smaller than a pixel: either answer. With the default
//!   offset, face-to-face contact is in practice *reported* (the offset edges enter the other
//!   object; tested), and so may be a gap below about the offset (`o / √3` at a cube corner)
//!   when the bounding boxes still overlap; objects whose bounding boxes are disjoint are never
//!   drawn, hence never reported, and a gap of a few pixels is not reported (tested).
//!
//! **Views.** Edges parallel to the view axis project to points and produce no fragments, so
//! an interference witnessed only by such edges (axis-aligned boxes sliding into each other along
//! the view axis, a box poking straight through another's top and bottom) is invisible along that
//! axis. [`CinderViews::ZThenXy`] (default) runs the views along `x` and `y` when the view along
//! `z` finds no pair: enough for one pair or a few objects. With many objects the first view
//! almost always finds some pair, so scenes with axis-aligned edges (boxes in a rack, stacked
//! crates) need [`CinderViews::All`], which runs all three and reports the union; scenes in
//! general position need only [`CinderViews::Z`].
//!
//! **Not closed (§4.1).** An object is reported in [`CinderSceneReport::not_closed`] when some
//! edge point sees more back than front faces of it, or some ray crosses it an unequal number of
//! times in and out (a closed, outward-oriented mesh gives zero over every whole ray).
//!
//! Limits: a pixel resolves at most 64 list entries; longer lists are counted in
//! [`CinderSceneReport::saturated_pixels`] (the rest of the list is ignored there). The node
//! storage is sized from the projected areas (an upper estimate) and, when a view still
//! overflows it (its counter counts past the capacity), the run is repeated with the measured
//! size.

mod build;
mod decode;
mod record;

pub(crate) use build::*;
pub(crate) use record::*;

use super::{CinderObject, WHAT, validate};
use crate::compute::{compute_kernels, storage_entry, uniform_entry};
use crate::context::GpuContext;
use crate::error::GpuError;
use crate::readback::{
    ReadbackPlan, Region, check_size, init_buffer, scoped, storage_buffer, wait_for,
};
use crate::shaders;
use std::collections::BTreeSet;

/// Size of the `View` uniform in `cinder_scene.wgsl`.
const VIEW_BYTES: u64 = 96;
/// Words per list node and per point.
const NODE_WORDS: u64 = 3;
const POINT_WORDS: u64 = 5;
const ID_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::R32Uint;

/// The fragment capacity to run with: `want` (an estimate, or a measured need with room), at
/// most what the device holds in one node buffer (the smaller of its storage-binding and
/// buffer-size limits), but never less than `needed` (a need past the device's limit fails
/// when the buffers are made, [`GpuError::BufferTooLarge`]).
pub(crate) fn fragment_capacity(ctx: &GpuContext, want: u64, needed: u64) -> u64 {
    let most = crate::readback::buffer_limit(ctx) / (NODE_WORDS * 4);
    want.min(most).max(needed)
}

/// Which view directions a run uses (see the module documentation for when each is needed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CinderViews {
    /// Only the view along `z`.
    Z,
    /// Along `z`; along `x` and `y` as well when `z` finds no interfering pair.
    #[default]
    ZThenXy,
    /// Along `z`, `x` and `y`, reporting the union.
    All,
}

/// A view axis: the rays run parallel to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ViewAxis {
    /// Rays along `x` (image axes `y`, `z`).
    X,
    /// Rays along `y` (image axes `z`, `x`).
    Y,
    /// Rays along `z` (image axes `x`, `y`).
    Z,
}

impl ViewAxis {
    /// World axes `(u, v, w)`: image right, image up, and the axis the viewer looks down
    /// (toward `-w`); `u × v = w`, so outward counter-clockwise triangles seen from `+w` are front
    /// faces.
    fn axes(self) -> [usize; 3] {
        match self {
            ViewAxis::X => [1, 2, 0],
            ViewAxis::Y => [2, 0, 1],
            ViewAxis::Z => [0, 1, 2],
        }
    }
}

/// Settings of [`super::Cinder::run`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CinderSceneOptions {
    /// Pixels along the longer side of each view (the shorter side keeps pixels square).
    pub resolution: u32,
    /// Which views to run.
    pub views: CinderViews,
    /// Outward edge offset along vertex normals, in pixels of the view (§6.3); 0 disables it.
    pub edge_offset_pixels: f32,
    /// Most localization points returned (the number found is always reported).
    pub max_points: u32,
}

impl Default for CinderSceneOptions {
    fn default() -> Self {
        Self {
            resolution: 512,
            views: CinderViews::default(),
            edge_offset_pixels: 1.0,
            max_points: 1 << 16,
        }
    }
}

/// One interfering edge point (§6.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InterferencePoint {
    /// The object whose (offset) edge the point is on.
    pub penetrating: usize,
    /// The object the point lies inside.
    pub penetrated: usize,
    /// World-space position: the pixel centre and the edge's depth, un-projected.
    pub position: [f64; 3],
    /// The view that saw it.
    pub axis: ViewAxis,
}

/// What one view did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ViewStats {
    /// The view axis.
    pub axis: ViewAxis,
    /// Image size in pixels.
    pub width: u32,
    /// Image size in pixels.
    pub height: u32,
    /// Side of a (square) pixel in world units.
    pub pixel_size: f64,
    /// The edge offset in world units.
    pub edge_offset: f64,
    /// List entries (triangle and edge fragments) written.
    pub fragments: u64,
    /// Pixels the occlusion query counted (interference or unbalanced counts).
    pub flagged_pixels: u64,
    /// Whether the view's points were read back (only when `flagged_pixels > 0`, §6.1).
    pub read_back: bool,
}

/// Everything one [`super::Cinder::run`] found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CinderSceneReport {
    /// Interfering unordered pairs `(i, j)`, `i < j`, sorted.
    pub pairs: Vec<(usize, usize)>,
    /// Ordered hits `(penetrating, penetrated)`: an edge point of the first lies inside the
    /// second; sorted.
    pub hits: Vec<(usize, usize)>,
    /// Interfering edge points, up to [`CinderSceneOptions::max_points`].
    pub points: Vec<InterferencePoint>,
    /// How many interfering edge points the views found (may exceed `points.len()`).
    pub points_found: u64,
    /// Objects seen with negative or unbalanced crossing counts: not closed, or not outward
    /// oriented (§4.1); sorted.
    pub not_closed: Vec<usize>,
    /// Edge points found inside their own object (what the §6.3 offset prevents; never pairs).
    pub self_hits: u64,
    /// Pixels whose list was longer than the resolve pass handles (their tail was ignored).
    pub saturated_pixels: u64,
    /// Penetrations whose intersection contains a ball of this radius are found: the edge
    /// offset plus two pixels, largest over the views run (0 when nothing was drawn).
    pub resolution_bound: f64,
    /// The views run, in order.
    pub views: Vec<ViewStats>,
}

/// Pipelines of the scene run.
pub(crate) struct ScenePipelines {
    layout: wgpu::BindGroupLayout,
    solid: wgpu::RenderPipeline,
    edge: wgpu::RenderPipeline,
    resolve: wgpu::RenderPipeline,
    pairs_layout: wgpu::BindGroupLayout,
    gate: wgpu::ComputePipeline,
    extract: wgpu::ComputePipeline,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct View {
    row_x: [f32; 4],
    row_y: [f32; 4],
    row_z: [f32; 4],
    offset: [f32; 4],
    dims: [u32; 4],
    caps: [u32; 4],
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct SolidVertex {
    p: [f32; 3],
    object: u32,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct EdgeVertex {
    p: [f32; 3],
    normal: [f32; 3],
    object: u32,
}

impl ScenePipelines {
    /// Compiles the shaders and builds the pipelines.
    pub(crate) fn new(device: &wgpu::Device) -> Self {
        let module = shaders::module(device, "cinder_scene.wgsl", shaders::CINDER_SCENE);
        let storage = |binding: u32| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::FRAGMENT,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only: false },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("cinder scene layout"),
            entries: &[
                wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::VERTEX | wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: false,
                        min_binding_size: wgpu::BufferSize::new(VIEW_BYTES),
                    },
                    count: None,
                },
                storage(1),
                storage(2),
                storage(3),
                storage(4),
                storage(5),
                storage(6),
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("cinder scene pipeline layout"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let solid_attributes = wgpu::vertex_attr_array![0 => Float32x3, 1 => Uint32];
        let edge_attributes = wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32x3, 2 => Uint32];
        let make = |label: &'static str,
                    vs: &'static str,
                    fs: &'static str,
                    buffers: &[wgpu::VertexBufferLayout],
                    topology: wgpu::PrimitiveTopology,
                    write: wgpu::ColorWrites| {
            device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                label: Some(label),
                layout: Some(&pipeline_layout),
                vertex: wgpu::VertexState {
                    module: &module,
                    entry_point: Some(vs),
                    compilation_options: Default::default(),
                    buffers,
                },
                primitive: wgpu::PrimitiveState {
                    topology,
                    front_face: wgpu::FrontFace::Ccw,
                    cull_mode: None,
                    ..Default::default()
                },
                depth_stencil: None,
                multisample: Default::default(),
                fragment: Some(wgpu::FragmentState {
                    module: &module,
                    entry_point: Some(fs),
                    compilation_options: Default::default(),
                    targets: &[Some(wgpu::ColorTargetState {
                        format: ID_FORMAT,
                        blend: None,
                        write_mask: write,
                    })],
                }),
                multiview_mask: None,
                cache: None,
            })
        };
        let solid = make(
            "cinder scene triangles",
            "vs_solid",
            "fs_solid",
            &[wgpu::VertexBufferLayout {
                array_stride: std::mem::size_of::<SolidVertex>() as u64,
                step_mode: wgpu::VertexStepMode::Vertex,
                attributes: &solid_attributes,
            }],
            wgpu::PrimitiveTopology::TriangleList,
            wgpu::ColorWrites::empty(),
        );
        let edge = make(
            "cinder scene edges",
            "vs_edge",
            "fs_edge",
            &[wgpu::VertexBufferLayout {
                array_stride: std::mem::size_of::<EdgeVertex>() as u64,
                step_mode: wgpu::VertexStepMode::Vertex,
                attributes: &edge_attributes,
            }],
            wgpu::PrimitiveTopology::LineList,
            wgpu::ColorWrites::empty(),
        );
        let resolve = make(
            "cinder scene resolve",
            "vs_full",
            "fs_resolve",
            &[],
            wgpu::PrimitiveTopology::TriangleList,
            wgpu::ColorWrites::ALL,
        );
        let pairs_module = shaders::module(device, "cinder_pairs.wgsl", shaders::CINDER_PAIRS);
        let (pairs_layout, [gate, extract]) = compute_kernels(
            device,
            "cinder pairs",
            &pairs_module,
            &[
                storage_entry(0, true),
                storage_entry(1, false),
                storage_entry(2, true),
                storage_entry(3, false),
                uniform_entry(4),
            ],
            ["gate", "extract"],
        );
        Self {
            layout,
            solid,
            edge,
            resolve,
            pairs_layout,
            gate,
            extract,
        }
    }
}

/// [`super::Cinder::run`]: every view recorded and submitted at once, one readback of the
/// counters, queries and bitsets (and a second one for the points, when some were found);
/// a view whose list storage overflowed makes the whole run repeat with the measured size.
pub(super) fn run(
    pipelines: &ScenePipelines,
    ctx: &GpuContext,
    objects: &[CinderObject],
    options: &CinderSceneOptions,
) -> Result<CinderSceneReport, GpuError> {
    let scene = prepare(ctx, objects, options, None)?;
    let mut report = CinderSceneReport::default();
    if scene.original.is_empty() {
        return Ok(report);
    }
    let (projections, estimate) = projections(&scene, options);
    let mut capacity = fragment_capacity(ctx, estimate, 0);
    let with_points = options.max_points > 0;
    loop {
        let (round, regions, staging) = scoped(ctx, WHAT, || {
            let mut encoder = ctx.device.create_command_encoder(&Default::default());
            let round = pipelines.record(
                ctx,
                &mut encoder,
                &scene,
                &projections,
                options,
                capacity,
                with_points,
                None,
            )?;
            let mut plan = ReadbackPlan::default();
            let regions = round.plan(&mut plan, true);
            let staging = plan.record(ctx, &mut encoder)?;
            ctx.queue.submit([encoder.finish()]);
            Ok((round, regions, staging))
        })?;
        let bytes = wait_for(ctx, WHAT, staging)?;
        let outcome = round.decode(&regions, &bytes);
        if let Some(needed) = outcome.overflow {
            capacity = fragment_capacity(ctx, needed + needed / 8 + 1024, needed);
            continue;
        }
        // Points of the views that found some, in view order (second readback, §6.1).
        let mut point_regions = Vec::new();
        let mut plan = ReadbackPlan::default();
        for (v, view) in &outcome.views {
            let stored = view.points_found.min(u64::from(round.point_capacity));
            point_regions.push(plan.add(
                &round.points,
                *v as u64 * round.point_stride,
                stored * POINT_WORDS * 4,
            ));
        }
        let point_bytes = if plan.size() > 0 {
            let staging = scoped(ctx, WHAT, || {
                let mut encoder = ctx.device.create_command_encoder(&Default::default());
                let staging = plan.record(ctx, &mut encoder)?;
                ctx.queue.submit([encoder.finish()]);
                Ok(staging)
            })?;
            wait_for(ctx, WHAT, staging)?
        } else {
            Vec::new()
        };
        let mut hits = BTreeSet::new();
        for &(i, j) in &outcome.hits {
            hits.insert((scene.original[i], scene.original[j]));
        }
        for ((v, view), region) in outcome.views.iter().zip(&point_regions) {
            let projection = &round.projections[*v];
            let room = (options.max_points as usize).saturating_sub(report.points.len());
            for p in region
                .words(&point_bytes)
                .chunks_exact(POINT_WORDS as usize)
                .take(room)
            {
                let local = projection.unproject(p[0], p[1], f32::from_bits(p[2]));
                report.points.push(InterferencePoint {
                    penetrating: scene.original[p[3] as usize],
                    penetrated: scene.original[p[4] as usize],
                    position: std::array::from_fn(|k| local[k] + scene.centre[k]),
                    axis: projection.axis,
                });
            }
            report.points_found += view.points_found;
            report.self_hits += view.self_hits;
            report.saturated_pixels += view.saturated;
            report.resolution_bound = report
                .resolution_bound
                .max(view.stats.edge_offset + 2.0 * view.stats.pixel_size);
            report.views.push(view.stats);
        }
        report.hits = hits.iter().copied().collect();
        report.pairs = hits
            .iter()
            .map(|&(a, b)| (a.min(b), a.max(b)))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        report.not_closed = outcome
            .not_closed
            .iter()
            .map(|&j| scene.original[j])
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        return Ok(report);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The per-pixel list's capacity is the estimate or the measured need with room, but never
    /// past what the device holds in one buffer (at 8 nut–bolt pairs the estimate asked
    /// lavapipe for 194 MB against its 128 MiB), and never below the measured need.
    #[test]
    fn fragment_capacity_fits_the_device() {
        let Some(ctx) = crate::testing::gpu_or_skip("fragment_capacity_fits_the_device") else {
            return;
        };
        let most = crate::readback::buffer_limit(&ctx) / (NODE_WORDS * 4);
        assert_eq!(fragment_capacity(&ctx, 5000, 0), 5000);
        assert_eq!(fragment_capacity(&ctx, 5000, 6000), 6000);
        assert_eq!(fragment_capacity(&ctx, u64::MAX, 1), most);
        assert_eq!(fragment_capacity(&ctx, u64::MAX, most + 7), most + 7);
    }
}

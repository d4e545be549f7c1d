//! CInDeR: image-space interference detection of closed meshes with the depth and stencil
//! buffers and occlusion queries (Knott & Pai 2003, "CInDeR: Collision and Interference Detection
//! in Real-time using Graphics Hardware"; shader `shaders/cinder.wgsl`).
//!
//! **What it decides.** Theorem 1 (§3.1): two solids interfere iff an edge of one meets the
//! volume of the other. Edge points are located against a solid by counting boundary crossings
//! along a ray (§3.2): rays are the pixels of an orthographic view, and the stencil buffer holds,
//! per pixel, the number of front-facing minus back-facing polygons of the solid lying in front of
//! the nearest edge point (§4.1).
//!
//! **Passes (§4.1), one render pass per ordered test "edges of object `i` against the volume of
//! object `j`":**
//! 1. draw `i`'s edges as lines (depth write on, depth test `Always`): the depth buffer holds the
//!    nearest edge point of `i` per pixel;
//! 2. and 3. in one draw: `j`'s triangles with depth test `Less` (only surfaces in front of the
//!    edge point), no depth write, two-sided stencil: `IncrementWrap` on front faces,
//!    `DecrementWrap` on back faces;
//! 4. redraw `i`'s edges (depth `LessEqual`, no write) with stencil test `NotEqual 0` inside an
//!    occlusion query (§6.1): a positive sample count means an edge point of `i` lies inside `j`.
//!    A second query counts edge pixels whose stencil is negative (above 128 after wrapping): per
//!    §4.1 that means `j` is not a closed, outward-oriented manifold; those tests are reported in
//!    [`CinderReport::negative`].
//!
//! **Object identification (§5)** is done by running the test per ordered pair instead of by
//! writing identifiers into colour channels: `(i, j)` interfere when either ordered test hits.
//! Which pairs are tested is chosen on the CPU by a bounding-box prefilter (boxes that do not
//! overlap cannot interfere), as §6.4 suggests; for `N` objects with `K` overlapping boxes this is
//! `2K` render passes of `resolution²` pixels.
//!
//! **Frustum (§6.5).** Per pair, the view is an orthographic projection along `-z` whose `x`,`y`
//! extent is the overlap of the two boxes (any common point lies in it), at `resolution ×
//! resolution` pixels (anisotropic pixels: each axis uses its own extent). The depth range spans
//! the *union* of both boxes in `z`, so no triangle is clipped by the near or far plane (a clipped
//! triangle would corrupt the crossing count); edge fragments outside the overlap's `z` slab are
//! discarded in the fragment shader, so only edge points that can be inside the other object are
//! written, which also reduces occlusion among edges (§6.4, Figure 6).
//!
//! **Edge offsets (§6.3).** Every edge vertex is moved, in the vertex shader, along its
//! area-weighted vertex normal (computed on the host: the sum of the unnormalized normals of its
//! triangles) by `edge_offset_pixels` pixels of the pair's view ([`CinderOptions`]; a pixel is
//! the larger side of the overlap box divided by the resolution). The paper offsets *outward* so
//! that, in its single whole-scene pass, an object's rasterized edges never count as inside its
//! own polygons. Here every test is an ordered pair of *distinct* objects, so an object is never
//! tested against itself at all, and an outward offset would do harm: the edges of two objects in
//! contact (touching, no shared volume) would be pushed into each other and reported. The default
//! ([`DEFAULT_EDGE_OFFSET_PIXELS`] = -1.5) therefore moves edges *inward* by 1.5 pixels, more than
//! line rasterization's lateral error (a line fragment's sample point lies up to half a pixel
//! across the line; a corner normal tilts the offset by up to `1/√3` off a face normal): touching
//! pairs are not reported (tested face-to-face and edge-to-face at 32 to 256 pixels). A positive
//! value gives the paper's outward offset.
//!
//! **Resolution bound.** The price of the inward offset is that shallow penetrations are missed:
//! [`CinderOptions::resolution_bound`] = `(|offset| + 1)` pixels (2.5 pixels by default) of the
//! pair's overlap box. An ordered pair whose deepest edge point lies deeper than that inside the
//! other object, and is not hidden behind other edge points (Figure 6), is reported; shallower
//! ones may be missed. In the 200-box scene test, 3 of 178 interfering pairs are missed, all with
//! penetration depths (exact, 15-axis SAT) below their bound.
//!
//! **Localization (§6.2).** [`Cinder::localize`] reruns one ordered test with a colour target
//! (`Rgba32Float`) into which the stencil-tested edge redraw writes the world position of the
//! (offset) edge point, interpolated along the line; the colour target is read back only for the
//! views whose occlusion query counted samples (§6.1, early non-interference detection).
//!
//! **Views.** [`CinderOptions::views`] adds views along `x` and then `y` (the coordinates are
//! cyclically permuted on the host, a rotation, so orientation and front faces are kept); a
//! pair hits when any view hits.
//!
//! **What a single view along `z` misses** (the method is approximate, §1, §6.5):
//! - penetrations narrower than a pixel in `x` or `y` (precision is the overlap extent divided by
//!   `resolution` per axis; depth has 24 bits), and, with the inward offset, shallower than the
//!   resolution bound above;
//! - edges parallel to `z` project to points and are not rasterized, and segments shorter than a
//!   pixel may cover no pixel centre: an interference whose only witnesses are such edges is
//!   missed, e.g. a pillar thinner than a pixel pushed straight along `z` through a box (seen only
//!   edge-on from `z`), which the view along `x` catches (tested); more views fix this case;
//! - an interfering edge point hidden behind a nearer edge point of the same object inside the
//!   overlap slab (Figure 6);
//! - contact without overlapping volume is not reported with the default inward offset.
//!
//! Objects are given in world space (poses applied on the CPU); meshes should be closed and
//! outward oriented (counter-clockwise seen from outside). Open meshes may give wrong answers;
//! negative counts, when seen, are reported.

mod passes;
use passes::{depth_attachment, depth_texture, extent, ordered_tests};
mod pipeline;

pub mod scene;

pub use scene::{
    CinderSceneOptions, CinderSceneReport, CinderViews, InterferencePoint, ViewAxis, ViewStats,
};

use crate::context::GpuContext;
use crate::error::GpuError;
use crate::readback::{map_and_copy, read_buffer};
use crate::shaders;
use std::collections::BTreeSet;
use wgpu::util::DeviceExt;

const WHAT: &str = "CInDeR interference";
const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth24PlusStencil8;
const LOCATE_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba32Float;
/// Size of the `View` uniform in `cinder.wgsl`.
const VIEW_BYTES: u64 = 48;
/// Ordered tests per submission (two occlusion queries each, within wgpu's 4096 per set).
const TESTS_PER_BATCH: usize = 1024;
/// Stencil reference above which a wrapped stencil value counts as negative.
const NEGATIVE_REFERENCE: u32 = 128;
/// Largest accepted `|edge_offset_pixels|`.
const MAX_OFFSET_PIXELS: f32 = 64.0;

/// The default edge offset of [`CinderOptions`], in pixels (negative: inward). See the module
/// documentation, "Edge offsets".
pub const DEFAULT_EDGE_OFFSET_PIXELS: f32 = -1.5;

/// One object in world space: a closed, outward-oriented triangle mesh.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CinderObject {
    /// Vertex positions in world space.
    pub vertices: Vec<[f32; 3]>,
    /// Triangles as indices into `vertices`, counter-clockwise seen from outside.
    pub triangles: Vec<[u32; 3]>,
}

/// Everything one [`Cinder::detect`] call found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CinderReport {
    /// Interfering unordered pairs `(i, j)` with `i < j`, sorted.
    pub pairs: Vec<(usize, usize)>,
    /// Ordered hits `(penetrating, penetrated)`: an edge of the first lies inside the second;
    /// sorted.
    pub hits: Vec<(usize, usize)>,
    /// Ordered tests `(penetrating, penetrated)` in which some edge pixel saw more back-facing than
    /// front-facing polygons of the penetrated object: that object is not a closed,
    /// outward-oriented manifold (§4.1); sorted, once per ordered pair whatever the view.
    pub negative: Vec<(usize, usize)>,
    /// How many ordered tests (render passes) were run after the bounding-box prefilter (one per
    /// ordered pair and view).
    pub tests: usize,
}

/// Options of [`Cinder::detect_with`] and [`Cinder::localize_with`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CinderOptions {
    /// View directions, 1 to 3: `z` alone, then also `x`, then also `y`. An ordered pair hits
    /// when any view sees an edge point inside (see the module documentation for what `z` alone
    /// misses). Each view costs one more render pass per ordered pair.
    pub views: u32,
    /// Offset of every edge vertex along its area-weighted vertex normal (§6.3), in pixels of
    /// the pair's view (the larger of the two pixel sides); negative moves edges inward. Finite,
    /// at most 64 in magnitude.
    pub edge_offset_pixels: f32,
}

impl Default for CinderOptions {
    fn default() -> Self {
        Self {
            views: 1,
            edge_offset_pixels: DEFAULT_EDGE_OFFSET_PIXELS,
        }
    }
}

impl CinderOptions {
    /// The guaranteed-resolution bound of a pair, in world units: an ordered pair whose deepest
    /// edge point lies deeper than this inside the other object (and is not hidden behind other
    /// edge points of the same object, §6.4) is reported; shallower penetrations may be missed.
    /// It is `|edge_offset_pixels| + 1` pixels (one pixel for line rasterization, whose
    /// fragments lie up to half a pixel across the line from the rasterized polygons' sample
    /// points, and half a pixel for the solid's crossing count), a pixel being the largest side
    /// `extent / resolution` of the two objects' bounding-box overlap (`overlap_extent`).
    pub fn resolution_bound(&self, overlap_extent: [f64; 3], resolution: u32) -> f64 {
        let pixel = overlap_extent.iter().fold(0.0f64, |m, &e| m.max(e)) / f64::from(resolution);
        (f64::from(self.edge_offset_pixels.abs()) + 1.0) * pixel
    }
}

/// The CInDeR pipelines (create once per device, reuse for every query).
pub struct Cinder {
    layout: wgpu::BindGroupLayout,
    edge_depth: wgpu::RenderPipeline,
    solid_count: wgpu::RenderPipeline,
    edge_inside: wgpu::RenderPipeline,
    edge_negative: wgpu::RenderPipeline,
    /// Localization variants (one colour target): passes 1-3 with colour writes off, then the
    /// stencil-tested edge redraw writing world positions.
    locate_edge_depth: wgpu::RenderPipeline,
    locate_solid_count: wgpu::RenderPipeline,
    locate_edge_inside: wgpu::RenderPipeline,
    scene: scene::ScenePipelines,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct View {
    centre: [f32; 4],
    scale: [f32; 4],
    clip_z: [f32; 4],
}

#[derive(Clone, Copy, Debug)]
struct Box3 {
    min: [f64; 3],
    max: [f64; 3],
}

impl Box3 {
    fn overlaps(&self, other: &Box3) -> bool {
        (0..3).all(|k| self.min[k] <= other.max[k] && other.min[k] <= self.max[k])
    }

    fn rotated(&self, view: usize) -> Box3 {
        Box3 {
            min: to_view(self.min, view),
            max: to_view(self.max, view),
        }
    }
}

/// Coordinates of view `view` (0: along `z`, 1: along `x`, 2: along `y`): a cyclic permutation
/// (a rotation, so orientation and the front/back faces are kept) moving the view axis to `z`.
fn to_view<T: Copy>(p: [T; 3], view: usize) -> [T; 3] {
    match view {
        1 => [p[1], p[2], p[0]],
        2 => [p[2], p[0], p[1]],
        _ => p,
    }
}

/// The inverse of [`to_view`].
fn from_view<T: Copy>(q: [T; 3], view: usize) -> [T; 3] {
    match view {
        1 => [q[2], q[0], q[1]],
        2 => [q[1], q[2], q[0]],
        _ => q,
    }
}

fn stencil_face(
    compare: wgpu::CompareFunction,
    pass_op: wgpu::StencilOperation,
) -> wgpu::StencilFaceState {
    wgpu::StencilFaceState {
        compare,
        fail_op: wgpu::StencilOperation::Keep,
        depth_fail_op: wgpu::StencilOperation::Keep,
        pass_op,
    }
}

/// Validated geometry of one call: per view, the edge (position, normal) and triangle vertex
/// buffers in that view's coordinates; per object, its ranges and world bounding box.
struct Prepared {
    edge_buffers: Vec<wgpu::Buffer>,
    solid_buffers: Vec<wgpu::Buffer>,
    edge_ranges: Vec<std::ops::Range<u32>>,
    solid_ranges: Vec<std::ops::Range<u32>>,
    boxes: Vec<Option<Box3>>,
}

/// One ordered test: penetrating object, penetrated object, view index and its uniform.
#[derive(Clone, Copy)]
struct Test {
    pen: usize,
    tgt: usize,
    view: usize,
    uniform: View,
}

fn invalid(reason: String) -> GpuError {
    GpuError::InvalidInput { what: WHAT, reason }
}

/// Area-weighted vertex normals (sum of the unnormalized triangle normals, normalized; zero
/// where that sum vanishes), in f64.
fn vertex_normals(object: &CinderObject) -> Vec<[f32; 3]> {
    let mut sums = vec![[0.0f64; 3]; object.vertices.len()];
    for t in &object.triangles {
        let p = t.map(|i| object.vertices[i as usize].map(f64::from));
        let u: [f64; 3] = std::array::from_fn(|k| p[1][k] - p[0][k]);
        let v: [f64; 3] = std::array::from_fn(|k| p[2][k] - p[0][k]);
        let n = [
            u[1] * v[2] - u[2] * v[1],
            u[2] * v[0] - u[0] * v[2],
            u[0] * v[1] - u[1] * v[0],
        ];
        for &i in t {
            for k in 0..3 {
                sums[i as usize][k] += n[k];
            }
        }
    }
    sums.into_iter()
        .map(|n| {
            let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
            if len > 0.0 && len.is_finite() {
                n.map(|c| (c / len) as f32)
            } else {
                [0.0; 3]
            }
        })
        .collect()
}

impl Cinder {
    /// Finds all interfering object pairs of a scene in one run (one build and one resolve
    /// pass per view, whatever the number of objects), with localization points and not-closed
    /// reports: see [`scene`] for the method, its precision and when each view is needed.
    ///
    /// Fails with [`GpuError::InvalidInput`] like [`Cinder::detect`], or for an edge offset that
    /// is negative, not finite, or a quarter of the resolution or more;
    /// [`GpuError::BufferTooLarge`] when the lists, pair bitset or points exceed the device's
    /// buffer limits.
    pub fn run(
        &self,
        ctx: &GpuContext,
        objects: &[CinderObject],
        options: &CinderSceneOptions,
    ) -> Result<CinderSceneReport, GpuError> {
        scene::run(&self.scene, ctx, objects, options)
    }

    /// The interfering unordered pairs `(i, j)`, `i < j`, sorted, seen through a
    /// `resolution × resolution` view per candidate pair with the default [`CinderOptions`] (see
    /// the module documentation for what the view can miss).
    pub fn interfering_pairs(
        &self,
        ctx: &GpuContext,
        objects: &[CinderObject],
        resolution: u32,
    ) -> Result<Vec<(usize, usize)>, GpuError> {
        Ok(self.detect(ctx, objects, resolution)?.pairs)
    }

    /// [`Cinder::detect_with`] with the default [`CinderOptions`] (one view along `z`, edges
    /// offset inward by [`DEFAULT_EDGE_OFFSET_PIXELS`]).
    pub fn detect(
        &self,
        ctx: &GpuContext,
        objects: &[CinderObject],
        resolution: u32,
    ) -> Result<CinderReport, GpuError> {
        self.detect_with(ctx, objects, resolution, &CinderOptions::default())
    }

    /// Runs the ordered tests for every pair whose bounding boxes overlap, in every view of
    /// `options`, and reports hits, interfering pairs and negative counts.
    ///
    /// Fails with [`GpuError::InvalidInput`] for a resolution of 0 or above the device's texture
    /// limit, a non-finite vertex, a triangle index out of range, or invalid options.
    pub fn detect_with(
        &self,
        ctx: &GpuContext,
        objects: &[CinderObject],
        resolution: u32,
        options: &CinderOptions,
    ) -> Result<CinderReport, GpuError> {
        let prepared = self.prepare(ctx, objects, resolution, options)?;
        let mut report = CinderReport::default();
        let mut tests = Vec::new();
        for i in 0..objects.len() {
            for j in i + 1..objects.len() {
                tests.extend(ordered_tests(&prepared, i, j, resolution, options));
            }
        }
        if tests.is_empty() {
            return Ok(report);
        }
        let device = &ctx.device;
        let depth = depth_texture(device, resolution);
        let depth_view = depth.create_view(&Default::default());
        let mut hits = BTreeSet::new();
        let mut negative = BTreeSet::new();
        for batch in tests.chunks(TESTS_PER_BATCH) {
            let (bind_group, stride) = self.uniforms(device, batch);
            let query_count = 2 * batch.len() as u32;
            let queries = device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("cinder occlusion"),
                ty: wgpu::QueryType::Occlusion,
                count: query_count,
            });
            let resolve = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("cinder query resolve"),
                size: 8 * query_count as u64,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("cinder"),
            });
            for (k, test) in batch.iter().enumerate() {
                let q = 2 * k as u32;
                let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                    label: Some("cinder ordered test"),
                    color_attachments: &[],
                    depth_stencil_attachment: Some(depth_attachment(&depth_view)),
                    timestamp_writes: None,
                    occlusion_query_set: Some(&queries),
                    multiview_mask: None,
                });
                pass.set_bind_group(0, &bind_group, &[(k as u64 * stride) as u32]);
                self.count_passes(&mut pass, &prepared, test, false);
                // Counting redraws under occlusion queries (§6.1).
                let edges = &prepared.edge_buffers[test.view];
                pass.set_vertex_buffer(0, edges.slice(..));
                pass.set_pipeline(&self.edge_inside);
                pass.set_stencil_reference(0);
                pass.begin_occlusion_query(q);
                pass.draw(prepared.edge_ranges[test.pen].clone(), 0..1);
                pass.end_occlusion_query();
                pass.set_pipeline(&self.edge_negative);
                pass.set_stencil_reference(NEGATIVE_REFERENCE);
                pass.begin_occlusion_query(q + 1);
                pass.draw(prepared.edge_ranges[test.pen].clone(), 0..1);
                pass.end_occlusion_query();
            }
            encoder.resolve_query_set(&queries, 0..query_count, &resolve, 0);
            ctx.queue.submit([encoder.finish()]);
            let samples = read_buffer::<u64>(ctx, WHAT, &resolve, query_count as usize)?;
            for (k, test) in batch.iter().enumerate() {
                if samples[2 * k] > 0 {
                    hits.insert((test.pen, test.tgt));
                }
                if samples[2 * k + 1] > 0 {
                    negative.insert((test.pen, test.tgt));
                }
            }
            report.tests += batch.len();
        }
        report.hits = hits.into_iter().collect();
        report.negative = negative.into_iter().collect();
        let pairs: BTreeSet<(usize, usize)> = report
            .hits
            .iter()
            .map(|&(a, b)| (a.min(b), a.max(b)))
            .collect();
        report.pairs = pairs.into_iter().collect();
        Ok(report)
    }

    /// [`Cinder::localize_with`] with the default [`CinderOptions`].
    pub fn localize(
        &self,
        ctx: &GpuContext,
        objects: &[CinderObject],
        resolution: u32,
        pair: (usize, usize),
    ) -> Result<Vec<[f32; 3]>, GpuError> {
        self.localize_with(ctx, objects, resolution, pair, &CinderOptions::default())
    }

    /// Interference localization (§6.2) for the ordered pair `(penetrating, penetrated)`: the
    /// world-space edge points of the penetrating object (offset as in §6.3) that the view(s)
    /// find inside the penetrated object, at most one per pixel and view (the nearest edge point
    /// of the overlap slab), in view order then row-major pixel order.
    ///
    /// Each view first runs the occlusion-query test (§6.1, early non-interference detection);
    /// the colour target holding the points is rendered and read back only for views whose
    /// query counted samples. Empty when the pair does not interfere (or the boxes do not
    /// overlap). Fails like [`Cinder::detect_with`], and for an index out of range or `i == j`.
    pub fn localize_with(
        &self,
        ctx: &GpuContext,
        objects: &[CinderObject],
        resolution: u32,
        pair: (usize, usize),
        options: &CinderOptions,
    ) -> Result<Vec<[f32; 3]>, GpuError> {
        let (pen, tgt) = pair;
        if pen >= objects.len() || tgt >= objects.len() || pen == tgt {
            return Err(invalid(format!(
                "pair {pair:?} is not two distinct objects of {}",
                objects.len()
            )));
        }
        let prepared = self.prepare(ctx, objects, resolution, options)?;
        let tests: Vec<Test> = ordered_tests(&prepared, pen, tgt, resolution, options)
            .into_iter()
            .filter(|t| t.pen == pen)
            .collect();
        let mut points = Vec::new();
        if tests.is_empty() {
            return Ok(points);
        }
        let device = &ctx.device;
        let depth = depth_texture(device, resolution);
        let depth_view = depth.create_view(&Default::default());
        let (bind_group, stride) = self.uniforms(device, &tests);
        // Early non-interference detection: one occlusion query per view.
        let query_count = tests.len() as u32;
        let queries = device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("cinder locate occlusion"),
            ty: wgpu::QueryType::Occlusion,
            count: query_count,
        });
        let resolve = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("cinder locate resolve"),
            size: 8 * query_count as u64,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("cinder locate queries"),
        });
        for (k, test) in tests.iter().enumerate() {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("cinder locate query"),
                color_attachments: &[],
                depth_stencil_attachment: Some(depth_attachment(&depth_view)),
                timestamp_writes: None,
                occlusion_query_set: Some(&queries),
                multiview_mask: None,
            });
            pass.set_bind_group(0, &bind_group, &[(k as u64 * stride) as u32]);
            self.count_passes(&mut pass, &prepared, test, false);
            pass.set_vertex_buffer(0, prepared.edge_buffers[test.view].slice(..));
            pass.set_pipeline(&self.edge_inside);
            pass.set_stencil_reference(0);
            pass.begin_occlusion_query(k as u32);
            pass.draw(prepared.edge_ranges[test.pen].clone(), 0..1);
            pass.end_occlusion_query();
        }
        encoder.resolve_query_set(&queries, 0..query_count, &resolve, 0);
        ctx.queue.submit([encoder.finish()]);
        let samples = read_buffer::<u64>(ctx, WHAT, &resolve, query_count as usize)?;
        let colour = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("cinder locate colour"),
            size: extent(resolution),
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: LOCATE_FORMAT,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
            view_formats: &[],
        });
        let colour_view = colour.create_view(&Default::default());
        let row_bytes = (u64::from(resolution) * 16).next_multiple_of(256);
        for (k, test) in tests.iter().enumerate() {
            if samples[k] == 0 {
                continue;
            }
            let staging = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("cinder locate staging"),
                size: row_bytes * u64::from(resolution),
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("cinder locate"),
            });
            {
                let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                    label: Some("cinder locate pass"),
                    color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                        view: &colour_view,
                        depth_slice: None,
                        resolve_target: None,
                        ops: wgpu::Operations {
                            load: wgpu::LoadOp::Clear(wgpu::Color::TRANSPARENT),
                            store: wgpu::StoreOp::Store,
                        },
                    })],
                    depth_stencil_attachment: Some(depth_attachment(&depth_view)),
                    timestamp_writes: None,
                    occlusion_query_set: None,
                    multiview_mask: None,
                });
                pass.set_bind_group(0, &bind_group, &[(k as u64 * stride) as u32]);
                self.count_passes(&mut pass, &prepared, test, true);
                pass.set_vertex_buffer(0, prepared.edge_buffers[test.view].slice(..));
                pass.set_pipeline(&self.locate_edge_inside);
                pass.set_stencil_reference(0);
                pass.draw(prepared.edge_ranges[test.pen].clone(), 0..1);
            }
            encoder.copy_texture_to_buffer(
                colour.as_image_copy(),
                wgpu::TexelCopyBufferInfo {
                    buffer: &staging,
                    layout: wgpu::TexelCopyBufferLayout {
                        offset: 0,
                        bytes_per_row: Some(row_bytes as u32),
                        rows_per_image: Some(resolution),
                    },
                },
                extent(resolution),
            );
            ctx.queue.submit([encoder.finish()]);
            let floats = (row_bytes / 4 * u64::from(resolution)) as usize;
            let texels = map_and_copy::<f32>(ctx, WHAT, &staging, floats)?;
            let row_floats = (row_bytes / 4) as usize;
            for row in texels.chunks(row_floats) {
                for px in row[..4 * resolution as usize].chunks_exact(4) {
                    if px[3] > 0.5 {
                        points.push(from_view([px[0], px[1], px[2]], test.view));
                    }
                }
            }
        }
        Ok(points)
    }
}

/// Checks the resolution against the device and every object for finite vertices and triangle
/// indices in range.
fn validate(ctx: &GpuContext, objects: &[CinderObject], resolution: u32) -> Result<(), GpuError> {
    let max_dim = ctx.device.limits().max_texture_dimension_2d;
    if resolution == 0 || resolution > max_dim {
        return Err(GpuError::InvalidInput {
            what: WHAT,
            reason: format!("resolution {resolution} is outside 1..={max_dim}"),
        });
    }
    for (index, object) in objects.iter().enumerate() {
        let n = object.vertices.len();
        if let Some(v) = object
            .vertices
            .iter()
            .position(|p| p.iter().any(|c| !c.is_finite()))
        {
            return Err(GpuError::InvalidInput {
                what: WHAT,
                reason: format!("object {index}: vertex {v} is not finite"),
            });
        }
        if let Some(t) = object
            .triangles
            .iter()
            .position(|t| t.iter().any(|&i| i as usize >= n))
        {
            return Err(GpuError::InvalidInput {
                what: WHAT,
                reason: format!("object {index}: triangle {t} indexes past its {n} vertices"),
            });
        }
    }
    Ok(())
}

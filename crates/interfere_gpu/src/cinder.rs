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
//! **What a single view along `z` misses** (the method is approximate, §1, §6.5):
//! - penetrations narrower than a pixel in `x` or `y` (precision is the overlap extent divided by
//!   `resolution` per axis; depth has 24 bits);
//! - edges parallel to `z` project to points and are not rasterized, so an interference whose only
//!   witnesses are such edges (e.g. an axis-aligned box poking straight through the top and bottom
//!   of another) is missed;
//! - an interfering edge point hidden behind a nearer edge point of the same object inside the
//!   overlap slab (Figure 6);
//! - contact without overlapping volume (touching) is not reliably reported either way.
//!
//! Objects are given in world space (poses applied on the CPU); meshes should be closed and
//! outward oriented (counter-clockwise seen from outside). Open meshes may give wrong answers;
//! negative counts, when seen, are reported.

pub mod scene;

pub use scene::{
    CinderOptions, CinderSceneReport, CinderViews, InterferencePoint, ViewAxis, ViewStats,
};

use crate::context::GpuContext;
use crate::error::GpuError;
use crate::readback::read_buffer;
use crate::shaders;
use std::collections::BTreeSet;
use wgpu::util::DeviceExt;

const WHAT: &str = "CInDeR interference";
const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth24PlusStencil8;
/// Size of the `View` uniform in `cinder.wgsl`.
const VIEW_BYTES: u64 = 48;
/// Unordered pairs per submission (four occlusion queries each, within wgpu's 4096 per set).
const PAIRS_PER_BATCH: usize = 512;
/// Stencil reference above which a wrapped stencil value counts as negative.
const NEGATIVE_REFERENCE: u32 = 128;

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
    /// outward-oriented manifold (§4.1); sorted.
    pub negative: Vec<(usize, usize)>,
    /// How many ordered tests (render passes) were run after the bounding-box prefilter.
    pub tests: usize,
}

/// The CInDeR pipelines (create once per device, reuse for every query).
pub struct Cinder {
    layout: wgpu::BindGroupLayout,
    edge_depth: wgpu::RenderPipeline,
    solid_count: wgpu::RenderPipeline,
    edge_inside: wgpu::RenderPipeline,
    edge_negative: wgpu::RenderPipeline,
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

impl Cinder {
    /// Compiles the shader and builds the four pipelines.
    pub fn new(ctx: &GpuContext) -> Self {
        let device = &ctx.device;
        let module = shaders::module(device, "cinder.wgsl", shaders::CINDER);
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("cinder layout"),
            entries: &[wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::VERTEX | wgpu::ShaderStages::FRAGMENT,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Uniform,
                    has_dynamic_offset: true,
                    min_binding_size: wgpu::BufferSize::new(VIEW_BYTES),
                },
                count: None,
            }],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("cinder pipeline layout"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let make = |label: &'static str,
                    edges: bool,
                    depth_write: bool,
                    depth_compare: wgpu::CompareFunction,
                    front: wgpu::StencilFaceState,
                    back: wgpu::StencilFaceState| {
            device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                label: Some(label),
                layout: Some(&pipeline_layout),
                vertex: wgpu::VertexState {
                    module: &module,
                    entry_point: Some(if edges { "vs_edge" } else { "vs_solid" }),
                    compilation_options: Default::default(),
                    buffers: &[wgpu::VertexBufferLayout {
                        array_stride: 12,
                        step_mode: wgpu::VertexStepMode::Vertex,
                        attributes: &wgpu::vertex_attr_array![0 => Float32x3],
                    }],
                },
                primitive: wgpu::PrimitiveState {
                    topology: if edges {
                        wgpu::PrimitiveTopology::LineList
                    } else {
                        wgpu::PrimitiveTopology::TriangleList
                    },
                    front_face: wgpu::FrontFace::Ccw,
                    cull_mode: None,
                    ..Default::default()
                },
                depth_stencil: Some(wgpu::DepthStencilState {
                    format: DEPTH_FORMAT,
                    depth_write_enabled: Some(depth_write),
                    depth_compare: Some(depth_compare),
                    stencil: wgpu::StencilState {
                        front,
                        back,
                        read_mask: 0xff,
                        write_mask: 0xff,
                    },
                    bias: Default::default(),
                }),
                multisample: Default::default(),
                fragment: edges.then_some(wgpu::FragmentState {
                    module: &module,
                    entry_point: Some("fs_edge"),
                    compilation_options: Default::default(),
                    targets: &[],
                }),
                multiview_mask: None,
                cache: None,
            })
        };
        use wgpu::CompareFunction as C;
        use wgpu::StencilOperation as S;
        let keep = wgpu::StencilFaceState::IGNORE;
        let edge_depth = make("cinder edge depth", true, true, C::Always, keep, keep);
        let solid_count = make(
            "cinder solid count",
            false,
            false,
            C::Less,
            stencil_face(C::Always, S::IncrementWrap),
            stencil_face(C::Always, S::DecrementWrap),
        );
        let inside = stencil_face(C::NotEqual, S::Keep);
        let edge_inside = make(
            "cinder edge inside",
            true,
            false,
            C::LessEqual,
            inside,
            inside,
        );
        let negative = stencil_face(C::Less, S::Keep);
        let edge_negative = make(
            "cinder edge negative",
            true,
            false,
            C::LessEqual,
            negative,
            negative,
        );
        Self {
            layout,
            edge_depth,
            solid_count,
            edge_inside,
            edge_negative,
            scene: scene::ScenePipelines::new(device),
        }
    }

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
        options: &CinderOptions,
    ) -> Result<CinderSceneReport, GpuError> {
        scene::run(&self.scene, ctx, objects, options)
    }

    /// The interfering unordered pairs `(i, j)`, `i < j`, sorted, seen through a
    /// `resolution × resolution` view per candidate pair (see the module documentation for what
    /// the view can miss).
    pub fn interfering_pairs(
        &self,
        ctx: &GpuContext,
        objects: &[CinderObject],
        resolution: u32,
    ) -> Result<Vec<(usize, usize)>, GpuError> {
        Ok(self.detect(ctx, objects, resolution)?.pairs)
    }

    /// Runs the ordered tests for every pair whose bounding boxes overlap and reports hits,
    /// interfering pairs and negative counts.
    ///
    /// Fails with [`GpuError::InvalidInput`] for a resolution of 0 or above the device's texture
    /// limit, a non-finite vertex, or a triangle index out of range.
    pub fn detect(
        &self,
        ctx: &GpuContext,
        objects: &[CinderObject],
        resolution: u32,
    ) -> Result<CinderReport, GpuError> {
        validate(ctx, objects, resolution)?;
        let mut edge_vertices: Vec<[f32; 3]> = Vec::new();
        let mut solid_vertices: Vec<[f32; 3]> = Vec::new();
        let mut edge_ranges = Vec::with_capacity(objects.len());
        let mut solid_ranges = Vec::with_capacity(objects.len());
        let mut boxes = Vec::with_capacity(objects.len());
        for object in objects {
            let mut edges = BTreeSet::new();
            let mut bounds: Option<Box3> = None;
            let start = solid_vertices.len() as u32;
            for t in &object.triangles {
                for k in 0..3 {
                    let (a, b) = (t[k], t[(k + 1) % 3]);
                    if a != b {
                        edges.insert((a.min(b), a.max(b)));
                    }
                    let p = object.vertices[t[k] as usize];
                    solid_vertices.push(p);
                    let q = p.map(f64::from);
                    bounds = Some(match bounds {
                        None => Box3 { min: q, max: q },
                        Some(b) => Box3 {
                            min: std::array::from_fn(|i| b.min[i].min(q[i])),
                            max: std::array::from_fn(|i| b.max[i].max(q[i])),
                        },
                    });
                }
            }
            solid_ranges.push(start..solid_vertices.len() as u32);
            let start = edge_vertices.len() as u32;
            for (a, b) in edges {
                edge_vertices.push(object.vertices[a as usize]);
                edge_vertices.push(object.vertices[b as usize]);
            }
            edge_ranges.push(start..edge_vertices.len() as u32);
            boxes.push(bounds);
        }
        let mut candidates = Vec::new();
        for i in 0..objects.len() {
            for j in i + 1..objects.len() {
                if let (Some(a), Some(b)) = (&boxes[i], &boxes[j])
                    && a.overlaps(b)
                {
                    candidates.push((i, j, view_for(a, b)));
                }
            }
        }
        let mut report = CinderReport::default();
        if candidates.is_empty() {
            return Ok(report);
        }
        let device = &ctx.device;
        let edge_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("cinder edges"),
            contents: bytemuck::cast_slice(&edge_vertices),
            usage: wgpu::BufferUsages::VERTEX,
        });
        let solid_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("cinder triangles"),
            contents: bytemuck::cast_slice(&solid_vertices),
            usage: wgpu::BufferUsages::VERTEX,
        });
        let depth = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("cinder depth-stencil"),
            size: wgpu::Extent3d {
                width: resolution,
                height: resolution,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: DEPTH_FORMAT,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
            view_formats: &[],
        });
        let depth_view = depth.create_view(&Default::default());
        let alignment = u64::from(device.limits().min_uniform_buffer_offset_alignment.max(16));
        let stride = VIEW_BYTES.next_multiple_of(alignment);
        for batch in candidates.chunks(PAIRS_PER_BATCH) {
            let mut uniform = vec![0u8; stride as usize * batch.len()];
            for (k, (_, _, view)) in batch.iter().enumerate() {
                let at = k * stride as usize;
                uniform[at..at + VIEW_BYTES as usize].copy_from_slice(bytemuck::bytes_of(view));
            }
            let uniform_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("cinder views"),
                contents: &uniform,
                usage: wgpu::BufferUsages::UNIFORM,
            });
            let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("cinder bind group"),
                layout: &self.layout,
                entries: &[wgpu::BindGroupEntry {
                    binding: 0,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: &uniform_buffer,
                        offset: 0,
                        size: wgpu::BufferSize::new(VIEW_BYTES),
                    }),
                }],
            });
            let query_count = 4 * batch.len() as u32;
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
            let mut tests = Vec::with_capacity(2 * batch.len());
            for (k, &(i, j, _)) in batch.iter().enumerate() {
                for (pen, tgt) in [(i, j), (j, i)] {
                    let q = tests.len() as u32 * 2;
                    tests.push((pen, tgt));
                    let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                        label: Some("cinder ordered test"),
                        color_attachments: &[],
                        depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                            view: &depth_view,
                            depth_ops: Some(wgpu::Operations {
                                load: wgpu::LoadOp::Clear(1.0),
                                store: wgpu::StoreOp::Discard,
                            }),
                            stencil_ops: Some(wgpu::Operations {
                                load: wgpu::LoadOp::Clear(0),
                                store: wgpu::StoreOp::Discard,
                            }),
                        }),
                        timestamp_writes: None,
                        occlusion_query_set: Some(&queries),
                        multiview_mask: None,
                    });
                    pass.set_bind_group(0, &bind_group, &[(k as u64 * stride) as u32]);
                    // Pass 1: nearest edge points of the penetrating object.
                    pass.set_vertex_buffer(0, edge_buffer.slice(..));
                    pass.set_pipeline(&self.edge_depth);
                    pass.draw(edge_ranges[pen].clone(), 0..1);
                    // Passes 2-3: crossings of the penetrated object's surface in front of them.
                    pass.set_vertex_buffer(0, solid_buffer.slice(..));
                    pass.set_pipeline(&self.solid_count);
                    pass.draw(solid_ranges[tgt].clone(), 0..1);
                    // Counting redraws under occlusion queries (§6.1).
                    pass.set_vertex_buffer(0, edge_buffer.slice(..));
                    pass.set_pipeline(&self.edge_inside);
                    pass.set_stencil_reference(0);
                    pass.begin_occlusion_query(q);
                    pass.draw(edge_ranges[pen].clone(), 0..1);
                    pass.end_occlusion_query();
                    pass.set_pipeline(&self.edge_negative);
                    pass.set_stencil_reference(NEGATIVE_REFERENCE);
                    pass.begin_occlusion_query(q + 1);
                    pass.draw(edge_ranges[pen].clone(), 0..1);
                    pass.end_occlusion_query();
                }
            }
            encoder.resolve_query_set(&queries, 0..query_count, &resolve, 0);
            ctx.queue.submit([encoder.finish()]);
            let samples = read_buffer::<u64>(ctx, WHAT, &resolve, query_count as usize)?;
            for (t, &(pen, tgt)) in tests.iter().enumerate() {
                if samples[2 * t] > 0 {
                    report.hits.push((pen, tgt));
                }
                if samples[2 * t + 1] > 0 {
                    report.negative.push((pen, tgt));
                }
            }
            report.tests += tests.len();
        }
        report.hits.sort_unstable();
        report.negative.sort_unstable();
        let pairs: BTreeSet<(usize, usize)> = report
            .hits
            .iter()
            .map(|&(a, b)| (a.min(b), a.max(b)))
            .collect();
        report.pairs = pairs.into_iter().collect();
        Ok(report)
    }
}

/// The orthographic view of one candidate pair: `x`,`y` on the overlap of the boxes, depth over
/// the union of their `z` ranges, edge points kept on the overlap's `z` slab (all slightly
/// padded so that rounding never clips geometry that lies on a box face).
fn view_for(a: &Box3, b: &Box3) -> View {
    let lo: [f64; 3] = std::array::from_fn(|k| a.min[k].max(b.min[k]));
    let hi: [f64; 3] = std::array::from_fn(|k| a.max[k].min(b.max[k]));
    let union_lo: [f64; 3] = std::array::from_fn(|k| a.min[k].min(b.min[k]));
    let union_hi: [f64; 3] = std::array::from_fn(|k| a.max[k].max(b.max[k]));
    let magnitude = (0..3)
        .map(|k| union_lo[k].abs().max(union_hi[k].abs()))
        .fold(0.0f64, f64::max);
    let size = (0..3)
        .map(|k| union_hi[k] - union_lo[k])
        .fold(0.0f64, f64::max);
    // f32 rounding of the inputs and of the projection, with a floor for degenerate boxes.
    let eps = (magnitude * 4.0 * f32::EPSILON as f64)
        .max(size * 1e-6)
        .max(1e-30);
    let half = |k: usize| ((hi[k] - lo[k]) * 0.5 + eps).max(f32::MIN_POSITIVE as f64);
    let z_far = union_hi[2] + eps + (union_hi[2] - union_lo[2]) * 1e-3;
    let z_near = union_lo[2] - eps - (union_hi[2] - union_lo[2]) * 1e-3;
    View {
        centre: [
            ((lo[0] + hi[0]) * 0.5) as f32,
            ((lo[1] + hi[1]) * 0.5) as f32,
            z_far as f32,
            0.0,
        ],
        scale: [
            (1.0 / half(0)) as f32,
            (1.0 / half(1)) as f32,
            (1.0 / (z_far - z_near).max(f32::MIN_POSITIVE as f64)) as f32,
            0.0,
        ],
        clip_z: [(lo[2] - eps) as f32, (hi[2] + eps) as f32, 0.0, 0.0],
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

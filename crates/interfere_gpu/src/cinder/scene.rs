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

/// The objects that are drawn (their boxes overlap another's), in scene-centred coordinates.
pub(crate) struct Scene {
    /// Original index of each drawn object.
    pub(crate) original: Vec<usize>,
    /// Triangle corners (three per triangle).
    solids: Vec<SolidVertex>,
    /// Edge end points (two per unique edge).
    edges: Vec<EdgeVertex>,
    /// Box of the drawn objects, scene-centred.
    lo: [f64; 3],
    hi: [f64; 3],
    /// Scene centre added back when un-projecting.
    centre: [f64; 3],
}

type Bounds = ([f64; 3], [f64; 3]);

fn bounds(object: &CinderObject) -> Option<Bounds> {
    let mut used = object.triangles.iter().flatten();
    let first = object.vertices[*used.next()? as usize].map(f64::from);
    let (mut lo, mut hi) = (first, first);
    for &v in used {
        let p = object.vertices[v as usize].map(f64::from);
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    Some((lo, hi))
}

/// Objects whose bounding box overlaps another object's box (sort and sweep on `x`).
fn candidates(boxes: &[Option<Bounds>]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..boxes.len()).filter(|&i| boxes[i].is_some()).collect();
    let get = |i: usize| boxes[i].expect("filtered");
    order.sort_by(|&a, &b| get(a).0[0].total_cmp(&get(b).0[0]));
    let mut marked = vec![false; boxes.len()];
    for (k, &a) in order.iter().enumerate() {
        let (alo, ahi) = get(a);
        for &b in &order[k + 1..] {
            let (blo, bhi) = get(b);
            if blo[0] > ahi[0] {
                break;
            }
            if (0..3).all(|d| alo[d] <= bhi[d] && blo[d] <= ahi[d]) {
                marked[a] = true;
                marked[b] = true;
            }
        }
    }
    (0..boxes.len()).filter(|&i| marked[i]).collect()
}

/// Angle-weighted vertex normals in f64 (zero for unused or degenerate vertices).
fn vertex_normals(object: &CinderObject) -> Vec<[f32; 3]> {
    use interfere_geometry::glam::DVec3;
    let mut normals = vec![DVec3::ZERO; object.vertices.len()];
    let at = |i: u32| DVec3::from(object.vertices[i as usize].map(f64::from));
    for t in &object.triangles {
        let p = t.map(at);
        let n = (p[1] - p[0]).cross(p[2] - p[0]).normalize_or_zero();
        for k in 0..3 {
            let e1 = (p[(k + 1) % 3] - p[k]).normalize_or_zero();
            let e2 = (p[(k + 2) % 3] - p[k]).normalize_or_zero();
            normals[t[k] as usize] += n * e1.dot(e2).clamp(-1.0, 1.0).acos();
        }
    }
    normals
        .into_iter()
        .map(|n| n.normalize_or_zero().as_vec3().to_array())
        .collect()
}

/// Per object, its unique edges (shared between jobs by a mesh cache).
pub(crate) type EdgeLists = [std::sync::Arc<Vec<(u32, u32)>>];

/// The unique edges `(low, high)` of a triangle list, sorted (degenerate ones dropped).
pub(crate) fn unique_edges(triangles: &[[u32; 3]]) -> Vec<(u32, u32)> {
    let mut unique = BTreeSet::new();
    for t in triangles {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            if a != b {
                unique.insert((a.min(b), a.max(b)));
            }
        }
    }
    unique.into_iter().collect()
}

/// The scene of `objects` (each object's [`unique_edges`] given, or computed here).
pub(crate) fn build_scene(objects: &[CinderObject], edge_lists: Option<&EdgeLists>) -> Scene {
    let boxes: Vec<Option<Bounds>> = objects.iter().map(bounds).collect();
    let original = candidates(&boxes);
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for &i in &original {
        let (blo, bhi) = boxes[i].expect("candidates have boxes");
        for k in 0..3 {
            lo[k] = lo[k].min(blo[k]);
            hi[k] = hi[k].max(bhi[k]);
        }
    }
    let centre: [f64; 3] = if original.is_empty() {
        [0.0; 3]
    } else {
        std::array::from_fn(|k| 0.5 * (lo[k] + hi[k]))
    };
    let local =
        |p: [f32; 3]| -> [f32; 3] { std::array::from_fn(|k| (p[k] as f64 - centre[k]) as f32) };
    let mut solids = Vec::new();
    let mut edges = Vec::new();
    for (id, &i) in original.iter().enumerate() {
        let object = &objects[i];
        let normals = vertex_normals(object);
        for t in &object.triangles {
            for &v in t {
                solids.push(SolidVertex {
                    p: local(object.vertices[v as usize]),
                    object: id as u32,
                });
            }
        }
        let computed;
        let unique: &[(u32, u32)] = match edge_lists {
            Some(lists) => &lists[i],
            None => {
                computed = unique_edges(&object.triangles);
                &computed
            }
        };
        for &(a, b) in unique {
            for v in [a, b] {
                edges.push(EdgeVertex {
                    p: local(object.vertices[v as usize]),
                    normal: normals[v as usize],
                    object: id as u32,
                });
            }
        }
    }
    let (lo, hi) = if original.is_empty() {
        ([0.0; 3], [0.0; 3])
    } else {
        (
            std::array::from_fn(|k| lo[k] - centre[k]),
            std::array::from_fn(|k| hi[k] - centre[k]),
        )
    };
    Scene {
        original,
        solids,
        edges,
        lo,
        hi,
        centre,
    }
}

/// The projection of one view.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Projection {
    axis: ViewAxis,
    width: u32,
    height: u32,
    pixel: f64,
    offset: f64,
    centre_u: f64,
    centre_v: f64,
    w_far: f64,
    w_range: f64,
}

impl Projection {
    fn new(scene: &Scene, axis: ViewAxis, options: &CinderSceneOptions) -> Self {
        let [u, v, w] = axis.axes();
        let magnitude = (0..3)
            .map(|k| scene.lo[k].abs().max(scene.hi[k].abs()))
            .fold(0.0f64, f64::max);
        let size = (0..3)
            .map(|k| scene.hi[k] - scene.lo[k])
            .fold(0.0f64, f64::max);
        let resolution = f64::from(options.resolution);
        // Pixel size from the padded box; the offset, in pixels, is fixed by it.
        let eps = (magnitude * 8.0 * f32::EPSILON as f64)
            .max(size * 1e-6)
            .max(1e-30);
        let offset_px = f64::from(options.edge_offset_pixels.max(0.0));
        let ext = |k: usize| scene.hi[k] - scene.lo[k] + 2.0 * eps;
        // pixel = (ext + 2 * offset_px * pixel) / resolution, solved for pixel.
        let denominator = (resolution - 2.0 * offset_px).max(1.0);
        let pixel = (ext(u).max(ext(v)) / denominator).max(f32::MIN_POSITIVE as f64);
        let offset = offset_px * pixel;
        let pad = eps + offset;
        let side = |k: usize| {
            (((scene.hi[k] - scene.lo[k] + 2.0 * pad) / pixel).ceil() as u32)
                .clamp(1, options.resolution)
        };
        let w_far = scene.hi[w] + pad + size * 1e-3;
        let w_near = scene.lo[w] - pad - size * 1e-3;
        Self {
            axis,
            width: side(u),
            height: side(v),
            pixel,
            offset,
            centre_u: 0.5 * (scene.lo[u] + scene.hi[u]),
            centre_v: 0.5 * (scene.lo[v] + scene.hi[v]),
            w_far,
            w_range: (w_far - w_near).max(f32::MIN_POSITIVE as f64),
        }
    }

    fn uniform(&self, objects: u32, node_capacity: u32, point_capacity: u32) -> View {
        let [u, v, w] = self.axis.axes();
        let mut row_x = [0.0f32; 4];
        let mut row_y = [0.0f32; 4];
        let mut row_z = [0.0f32; 4];
        let sx = 2.0 / (f64::from(self.width) * self.pixel);
        let sy = 2.0 / (f64::from(self.height) * self.pixel);
        row_x[u] = sx as f32;
        row_x[3] = (-self.centre_u * sx) as f32;
        row_y[v] = sy as f32;
        row_y[3] = (-self.centre_v * sy) as f32;
        row_z[w] = (-1.0 / self.w_range) as f32;
        row_z[3] = (self.w_far / self.w_range) as f32;
        View {
            row_x,
            row_y,
            row_z,
            offset: [self.offset as f32, 0.0, 0.0, 0.0],
            dims: [self.width, self.height, objects, point_capacity],
            caps: [node_capacity, 0, 0, 0],
        }
    }

    /// World position (scene-centred) of pixel `(x, y)` at depth `d`.
    fn unproject(&self, x: u32, y: u32, d: f32) -> [f64; 3] {
        let [u, v, w] = self.axis.axes();
        let mut p = [0.0; 3];
        p[u] = self.centre_u + (f64::from(x) + 0.5 - 0.5 * f64::from(self.width)) * self.pixel;
        p[v] = self.centre_v + (0.5 * f64::from(self.height) - f64::from(y) - 0.5) * self.pixel;
        p[w] = self.w_far - f64::from(d) * self.w_range;
        p
    }

    /// Upper estimate of the fragments the build pass writes (projected triangle areas and edge
    /// lengths in pixels, plus one per primitive).
    fn fragment_estimate(&self, scene: &Scene) -> u64 {
        let [u, v, _] = self.axis.axes();
        let area2 = 1.0 / (self.pixel * self.pixel);
        let mut total = 0.0f64;
        for t in scene.solids.chunks_exact(3) {
            let a = t[0].p.map(f64::from);
            let b = t[1].p.map(f64::from);
            let c = t[2].p.map(f64::from);
            let cross = (b[u] - a[u]) * (c[v] - a[v]) - (b[v] - a[v]) * (c[u] - a[u]);
            let perimeter = [(a, b), (b, c), (c, a)]
                .iter()
                .map(|(p, q)| (q[u] - p[u]).abs() + (q[v] - p[v]).abs())
                .sum::<f64>();
            total += 0.5 * cross.abs() * area2 + perimeter / self.pixel + 2.0;
        }
        for e in scene.edges.chunks_exact(2) {
            let (a, b) = (e[0].p.map(f64::from), e[1].p.map(f64::from));
            total += ((b[u] - a[u]).abs() + (b[v] - a[v]).abs()) / self.pixel + 2.0;
        }
        (total * 1.05) as u64 + 1024
    }
}

/// Checks the options (after [`validate`] has checked the objects).
fn check_options(options: &CinderSceneOptions) -> Result<(), GpuError> {
    if !options.edge_offset_pixels.is_finite() || options.edge_offset_pixels < 0.0 {
        return Err(GpuError::InvalidInput {
            what: WHAT,
            reason: format!(
                "edge offset {} pixels is not a finite non-negative number",
                options.edge_offset_pixels
            ),
        });
    }
    if f64::from(options.edge_offset_pixels) * 4.0 >= f64::from(options.resolution) {
        return Err(GpuError::InvalidInput {
            what: WHAT,
            reason: format!(
                "edge offset {} pixels leaves no room in a {}-pixel view",
                options.edge_offset_pixels, options.resolution
            ),
        });
    }
    Ok(())
}

/// Validates `objects` and `options` against `ctx`'s device and builds the scene.
pub(crate) fn prepare(
    ctx: &GpuContext,
    objects: &[CinderObject],
    options: &CinderSceneOptions,
    edge_lists: Option<&EdgeLists>,
) -> Result<Scene, GpuError> {
    validate(ctx, objects, options.resolution)?;
    check_options(options)?;
    Ok(build_scene(objects, edge_lists))
}

/// The views a run records, and whether the later ones are gated on the first finding nothing.
fn view_axes(views: CinderViews) -> (&'static [ViewAxis], bool) {
    match views {
        CinderViews::Z => (&[ViewAxis::Z], false),
        CinderViews::ZThenXy => (&[ViewAxis::Z, ViewAxis::X, ViewAxis::Y], true),
        CinderViews::All => (&[ViewAxis::Z, ViewAxis::X, ViewAxis::Y], false),
    }
}

/// The projections of a run's views and the fragment capacity their estimates ask for.
pub(crate) fn projections(scene: &Scene, options: &CinderSceneOptions) -> (Vec<Projection>, u64) {
    let (axes, _) = view_axes(options.views);
    let projections: Vec<Projection> = axes
        .iter()
        .map(|&axis| Projection::new(scene, axis, options))
        .collect();
    let capacity = projections
        .iter()
        .map(|p| p.fragment_estimate(scene))
        .max()
        .unwrap_or(1024);
    (projections, capacity)
}

/// Uniform of `shaders/cinder_pairs.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct PairsControl {
    words: u32,
    pairs: u32,
    objects: u32,
    solid_vertices: u32,
    edge_vertices: u32,
    row: u32,
    pad: [u32; 2],
}

/// Marks an object that is not drawn in a pair request.
pub(crate) const NOT_DRAWN: u32 = u32::MAX;

/// The GPU resources of one recorded scene run (all its views).
pub(crate) struct SceneRound {
    projections: Vec<Projection>,
    gated: bool,
    capacity: u64,
    objects: u64,
    counters: wgpu::Buffer,
    counter_stride: u64,
    queries: wgpu::Buffer,
    draw_args: wgpu::Buffer,
    pair_bits: wgpu::Buffer,
    pair_words: u64,
    open_bits: wgpu::Buffer,
    open_words: u64,
    points: wgpu::Buffer,
    point_stride: u64,
    point_capacity: u32,
    /// Per requested pair, whether CInDeR flags it (one `u32` each), when pairs were given.
    pub(crate) flags: Option<wgpu::Buffer>,
    pairs: u64,
    _keep: Vec<wgpu::Buffer>,
}

/// Where a round's results land in the staging buffer.
pub(crate) struct SceneRegions {
    counters: Region,
    queries: Region,
    gate: Region,
    pair_bits: Region,
    open_bits: Region,
    flags: Region,
}

/// One view as read back.
struct ViewOutcome {
    stats: ViewStats,
    points_found: u64,
    self_hits: u64,
    saturated: u64,
}

/// A decoded scene round.
pub(crate) struct SceneOutcome {
    /// Fragments the largest view needed when some view overflowed its list storage.
    pub(crate) overflow: Option<u64>,
    views: Vec<(usize, ViewOutcome)>,
    /// Ordered hits in drawn-object indices (from the bitset, when it was read back).
    hits: Vec<(usize, usize)>,
    not_closed: Vec<usize>,
    /// Per requested pair: flagged or not (when pairs were given).
    pub(crate) flags: Vec<bool>,
}

impl ScenePipelines {
    /// Records every view of a run into `encoder` (one build and one resolve pass per view; the
    /// gate between the view along `z` and the others under [`CinderViews::ZThenXy`]) with room
    /// for `capacity` list nodes per view, and, with `pairs` (drawn-object indices, or
    /// [`NOT_DRAWN`]), the per-pair flag extraction. Points are kept when `with_points`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn record(
        &self,
        ctx: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        scene: &Scene,
        projections: &[Projection],
        options: &CinderSceneOptions,
        capacity: u64,
        with_points: bool,
        pairs: Option<&[[u32; 2]]>,
    ) -> Result<SceneRound, GpuError> {
        let device = &ctx.device;
        let limits = device.limits();
        let objects = scene.original.len() as u64;
        let (_, gated) = view_axes(options.views);
        let views = projections.len() as u64;
        let pixels = projections
            .iter()
            .map(|p| u64::from(p.width) * u64::from(p.height))
            .max()
            .unwrap_or(1);
        let node_bytes = capacity * NODE_WORDS * 4;
        let pair_words = (objects * objects).div_ceil(32);
        let open_words = objects.div_ceil(32);
        let point_capacity = if with_points { options.max_points } else { 0 };
        let point_bytes = (u64::from(point_capacity) * POINT_WORDS * 4).max(4);
        let align = u64::from(limits.min_storage_buffer_offset_alignment).max(16);
        let point_stride = point_bytes.next_multiple_of(align);
        check_size(ctx, "CInDeR per-pixel list nodes", node_bytes)?;
        check_size(ctx, "CInDeR pixel heads", pixels * 4)?;
        check_size(ctx, "CInDeR pair bitset", pair_words * 4)?;
        check_size(ctx, "CInDeR points", point_stride * views)?;
        if capacity > u64::from(u32::MAX - 1) || objects * objects > u64::from(u32::MAX) {
            return Err(GpuError::InvalidInput {
                what: WHAT,
                reason: format!("{objects} objects and {capacity} fragments exceed 32-bit indices"),
            });
        }
        let storage = |label: &'static str, bytes: u64, extra: wgpu::BufferUsages| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: bytes.max(4).next_multiple_of(4),
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST
                    | extra,
                mapped_at_creation: false,
            })
        };
        let none = wgpu::BufferUsages::empty();
        let heads = storage("cinder scene heads", pixels * 4, none);
        let nodes = storage("cinder scene nodes", node_bytes, none);
        let counters = storage("cinder scene counters", align * views, none);
        let pair_bits = storage("cinder scene pairs", pair_words * 4, none);
        let open_bits = storage("cinder scene open", open_words * 4, none);
        let points = storage("cinder scene points", point_stride * views, none);
        let draw_args = storage("cinder scene gated draws", 64, wgpu::BufferUsages::INDIRECT);
        let solid_buffer = init_buffer(
            ctx,
            "cinder scene triangles",
            bytemuck::cast_slice(&scene.solids),
            wgpu::BufferUsages::VERTEX,
        );
        let edge_buffer = init_buffer(
            ctx,
            "cinder scene edges",
            if scene.edges.is_empty() {
                &[0; std::mem::size_of::<EdgeVertex>()]
            } else {
                bytemuck::cast_slice(&scene.edges)
            },
            wgpu::BufferUsages::VERTEX,
        );
        let width = projections.iter().map(|p| p.width).max().unwrap_or(1);
        let height = projections.iter().map(|p| p.height).max().unwrap_or(1);
        let ids = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("cinder scene object ids"),
            size: wgpu::Extent3d {
                width,
                height,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: ID_FORMAT,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
            view_formats: &[],
        });
        let ids_view = ids.create_view(&Default::default());
        let query_set = device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("cinder scene occlusion"),
            ty: wgpu::QueryType::Occlusion,
            count: views as u32,
        });
        let queries = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("cinder scene query resolve"),
            size: 8 * views,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let pair_count = pairs.map_or(0, |p| p.len() as u64);
        let pair_ids = storage_buffer(
            ctx,
            "cinder scene requested pairs",
            pairs.unwrap_or(&[]),
            none,
        )?;
        let flags = storage("cinder scene pair flags", pair_count * 4, none);
        let extract_groups = pair_count.div_ceil(64);
        let max_groups = u64::from(limits.max_compute_workgroups_per_dimension);
        let (gx, gy) = if extract_groups <= max_groups {
            (extract_groups as u32, 1)
        } else {
            (
                max_groups as u32,
                crate::readback::check_dispatch(ctx, WHAT, extract_groups.div_ceil(max_groups))?,
            )
        };
        let control = PairsControl {
            words: pair_words as u32,
            pairs: pair_count as u32,
            objects: objects as u32,
            solid_vertices: scene.solids.len() as u32,
            edge_vertices: scene.edges.len() as u32,
            row: gx * 64,
            pad: [0; 2],
        };
        let control = init_buffer(
            ctx,
            "cinder pairs control",
            bytemuck::bytes_of(&control),
            wgpu::BufferUsages::UNIFORM,
        );
        fn entry(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
            wgpu::BindGroupEntry {
                binding,
                resource: buffer.as_entire_binding(),
            }
        }
        fn part(buffer: &wgpu::Buffer, offset: u64, size: u64) -> wgpu::BindingResource<'_> {
            wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer,
                offset,
                size: wgpu::BufferSize::new(size),
            })
        }
        let pairs_bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("cinder pairs bind group"),
            layout: &self.pairs_layout,
            entries: &[
                entry(0, &pair_bits),
                entry(1, &draw_args),
                entry(2, &pair_ids),
                entry(3, &flags),
                entry(4, &control),
            ],
        });
        let mut uniforms = Vec::with_capacity(projections.len());
        let mut view_binds = Vec::with_capacity(projections.len());
        for (v, projection) in projections.iter().enumerate() {
            let view = projection.uniform(objects as u32, capacity as u32, point_capacity);
            let uniform = init_buffer(
                ctx,
                "cinder scene view",
                bytemuck::bytes_of(&view),
                wgpu::BufferUsages::UNIFORM,
            );
            view_binds.push(device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("cinder scene bind group"),
                layout: &self.layout,
                entries: &[
                    entry(0, &uniform),
                    entry(1, &heads),
                    entry(2, &nodes),
                    wgpu::BindGroupEntry {
                        binding: 3,
                        resource: part(&counters, v as u64 * align, 16),
                    },
                    entry(4, &pair_bits),
                    entry(5, &open_bits),
                    wgpu::BindGroupEntry {
                        binding: 6,
                        resource: part(&points, v as u64 * point_stride, point_bytes),
                    },
                ],
            }));
            uniforms.push(uniform);
        }
        for buffer in [&counters, &pair_bits, &open_bits] {
            encoder.clear_buffer(buffer, 0, None);
        }
        let attachment = |load| {
            [Some(wgpu::RenderPassColorAttachment {
                view: &ids_view,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    load,
                    store: wgpu::StoreOp::Store,
                },
            })]
        };
        for (v, projection) in projections.iter().enumerate() {
            let indirect = gated && v > 0;
            let (w, h) = (projection.width as f32, projection.height as f32);
            encoder.clear_buffer(&heads, 0, None);
            {
                let colour = attachment(wgpu::LoadOp::Clear(wgpu::Color::TRANSPARENT));
                let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                    label: Some("cinder scene build"),
                    color_attachments: &colour,
                    depth_stencil_attachment: None,
                    timestamp_writes: None,
                    occlusion_query_set: None,
                    multiview_mask: None,
                });
                pass.set_viewport(0.0, 0.0, w, h, 0.0, 1.0);
                pass.set_bind_group(0, &view_binds[v], &[]);
                pass.set_pipeline(&self.solid);
                pass.set_vertex_buffer(0, solid_buffer.slice(..));
                if indirect {
                    pass.draw_indirect(&draw_args, 0);
                } else {
                    pass.draw(0..scene.solids.len() as u32, 0..1);
                }
                pass.set_pipeline(&self.edge);
                pass.set_vertex_buffer(0, edge_buffer.slice(..));
                if indirect {
                    pass.draw_indirect(&draw_args, 16);
                } else {
                    pass.draw(0..scene.edges.len() as u32, 0..1);
                }
            }
            {
                let colour = attachment(wgpu::LoadOp::Load);
                let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                    label: Some("cinder scene resolve"),
                    color_attachments: &colour,
                    depth_stencil_attachment: None,
                    timestamp_writes: None,
                    occlusion_query_set: Some(&query_set),
                    multiview_mask: None,
                });
                pass.set_viewport(0.0, 0.0, w, h, 0.0, 1.0);
                pass.set_bind_group(0, &view_binds[v], &[]);
                pass.set_pipeline(&self.resolve);
                pass.begin_occlusion_query(v as u32);
                if indirect {
                    pass.draw_indirect(&draw_args, 32);
                } else {
                    pass.draw(0..3, 0..1);
                }
                pass.end_occlusion_query();
            }
            if gated && v == 0 {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("cinder scene gate"),
                    timestamp_writes: None,
                });
                pass.set_pipeline(&self.gate);
                pass.set_bind_group(0, &pairs_bind, &[]);
                pass.dispatch_workgroups(1, 1, 1);
            }
        }
        encoder.resolve_query_set(&query_set, 0..views as u32, &queries, 0);
        if pair_count > 0 {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("cinder scene pair flags"),
                timestamp_writes: None,
            });
            pass.set_pipeline(&self.extract);
            pass.set_bind_group(0, &pairs_bind, &[]);
            pass.dispatch_workgroups(gx, gy, 1);
        }
        let mut keep = uniforms;
        keep.extend([heads, nodes, solid_buffer, edge_buffer, pair_ids, control]);
        Ok(SceneRound {
            projections: projections.to_vec(),
            gated,
            capacity,
            objects,
            counters,
            counter_stride: align,
            queries,
            draw_args,
            pair_bits,
            pair_words,
            open_bits,
            open_words,
            points,
            point_stride,
            point_capacity,
            flags: pairs.map(|_| flags),
            pairs: pair_count,
            _keep: keep,
        })
    }
}

impl SceneOutcome {
    /// Views that ran, and the most list entries one of them wrote.
    pub(crate) fn view_summary(&self) -> (usize, u64) {
        (
            self.views.len(),
            self.views
                .iter()
                .map(|(_, v)| v.stats.fragments)
                .max()
                .unwrap_or(0),
        )
    }
}

impl SceneRound {
    /// Adds the round's results to `plan`: per-view counters and queries, the gate's flag, and
    /// the pair and not-closed bitsets (`with_bits`) or the per-pair flags.
    pub(crate) fn plan(&self, plan: &mut ReadbackPlan, with_bits: bool) -> SceneRegions {
        let views = self.projections.len() as u64;
        SceneRegions {
            counters: plan.add(&self.counters, 0, self.counter_stride * views),
            queries: plan.add(&self.queries, 0, 8 * views),
            gate: if self.gated {
                plan.add(&self.draw_args, 48, 4)
            } else {
                Region::default()
            },
            pair_bits: if with_bits {
                plan.add(&self.pair_bits, 0, self.pair_words * 4)
            } else {
                Region::default()
            },
            open_bits: if with_bits {
                plan.add(&self.open_bits, 0, self.open_words * 4)
            } else {
                Region::default()
            },
            flags: match &self.flags {
                Some(flags) => plan.add(flags, 0, self.pairs * 4),
                None => Region::default(),
            },
        }
    }

    /// Decodes the round.
    pub(crate) fn decode(&self, regions: &SceneRegions, bytes: &[u8]) -> SceneOutcome {
        let counters = regions.counters.words(bytes);
        let queries: Vec<u64> = bytemuck::pod_collect_to_vec(regions.queries.bytes(bytes));
        let later_ran = !self.gated || regions.gate.words(bytes)[0] != 0;
        let stride = (self.counter_stride / 4) as usize;
        let mut overflow = None;
        let mut views = Vec::new();
        for (v, projection) in self.projections.iter().enumerate() {
            if v > 0 && !later_ran {
                continue;
            }
            let c = &counters[v * stride..v * stride + 4];
            let fragments = u64::from(c[0]);
            if fragments > self.capacity {
                overflow = Some(overflow.unwrap_or(0).max(fragments));
            }
            let flagged = queries[v];
            views.push((
                v,
                ViewOutcome {
                    stats: ViewStats {
                        axis: projection.axis,
                        width: projection.width,
                        height: projection.height,
                        pixel_size: projection.pixel,
                        edge_offset: projection.offset,
                        fragments,
                        flagged_pixels: flagged,
                        read_back: flagged > 0,
                    },
                    points_found: u64::from(c[1]),
                    self_hits: u64::from(c[2]),
                    saturated: u64::from(c[3]),
                },
            ));
        }
        let mut hits = Vec::new();
        for (w, &word) in regions.pair_bits.words(bytes).iter().enumerate() {
            let mut word = word;
            while word != 0 {
                let bit = w as u64 * 32 + u64::from(word.trailing_zeros());
                word &= word - 1;
                hits.push(((bit / self.objects) as usize, (bit % self.objects) as usize));
            }
        }
        let open = regions.open_bits.words(bytes);
        let not_closed = (0..self.objects as usize)
            .filter(|&j| open.get(j / 32).is_some_and(|w| w >> (j % 32) & 1 == 1))
            .collect();
        SceneOutcome {
            overflow,
            views,
            hits,
            not_closed,
            flags: regions.flags.words(bytes).iter().map(|&f| f != 0).collect(),
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
    let (projections, mut capacity) = projections(&scene, options);
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
            capacity = needed + needed / 8 + 1024;
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

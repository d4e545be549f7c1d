//! Building a scene for CInDeR (§5): the objects whose boxes overlap another, their offset
//! edges along vertex normals (§6.3), the orthographic projection of each view (§6.5) and the
//! storage estimates from projected areas.

use super::*;

/// The objects that are drawn (their boxes overlap another's), in scene-centred coordinates.
pub(crate) struct CinderScene {
    /// Original index of each drawn object.
    pub(crate) original: Vec<usize>,
    /// Triangle corners (three per triangle).
    pub(super) solids: Vec<SolidVertex>,
    /// Edge end points (two per unique edge).
    pub(super) edges: Vec<EdgeVertex>,
    /// Box of the drawn objects, scene-centred.
    pub(super) lo: [f64; 3],
    pub(super) hi: [f64; 3],
    /// Scene centre added back when un-projecting.
    pub(super) centre: [f64; 3],
}

pub(super) type Bounds = ([f64; 3], [f64; 3]);

pub(super) fn bounds(object: &CinderObject) -> Option<Bounds> {
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
pub(super) fn candidates(boxes: &[Option<Bounds>]) -> Vec<usize> {
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
pub(super) fn vertex_normals(object: &CinderObject) -> Vec<[f32; 3]> {
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
pub(crate) fn build_scene(objects: &[CinderObject], edge_lists: Option<&EdgeLists>) -> CinderScene {
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
    CinderScene {
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
    pub(super) axis: ViewAxis,
    pub(super) width: u32,
    pub(super) height: u32,
    pub(super) pixel: f64,
    pub(super) offset: f64,
    pub(super) centre_u: f64,
    pub(super) centre_v: f64,
    pub(super) w_far: f64,
    pub(super) w_range: f64,
}

impl Projection {
    pub(super) fn new(scene: &CinderScene, axis: ViewAxis, options: &CinderSceneOptions) -> Self {
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

    pub(super) fn uniform(&self, objects: u32, node_capacity: u32, point_capacity: u32) -> View {
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
    pub(super) fn unproject(&self, x: u32, y: u32, d: f32) -> [f64; 3] {
        let [u, v, w] = self.axis.axes();
        let mut p = [0.0; 3];
        p[u] = self.centre_u + (f64::from(x) + 0.5 - 0.5 * f64::from(self.width)) * self.pixel;
        p[v] = self.centre_v + (0.5 * f64::from(self.height) - f64::from(y) - 0.5) * self.pixel;
        p[w] = self.w_far - f64::from(d) * self.w_range;
        p
    }

    /// Upper estimate of the fragments the build pass writes (projected triangle areas and edge
    /// lengths in pixels, plus one per primitive).
    pub(super) fn fragment_estimate(&self, scene: &CinderScene) -> u64 {
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
pub(super) fn check_options(options: &CinderSceneOptions) -> Result<(), GpuError> {
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
) -> Result<CinderScene, GpuError> {
    validate(ctx, objects, options.resolution)?;
    check_options(options)?;
    Ok(build_scene(objects, edge_lists))
}

/// The views a run records, and whether the later ones are gated on the first finding nothing.
pub(super) fn view_axes(views: CinderViews) -> (&'static [ViewAxis], bool) {
    match views {
        CinderViews::Z => (&[ViewAxis::Z], false),
        CinderViews::ZThenXy => (&[ViewAxis::Z, ViewAxis::X, ViewAxis::Y], true),
        CinderViews::All => (&[ViewAxis::Z, ViewAxis::X, ViewAxis::Y], false),
    }
}

/// The projections of a run's views and the fragment capacity their estimates ask for.
pub(crate) fn projections(
    scene: &CinderScene,
    options: &CinderSceneOptions,
) -> (Vec<Projection>, u64) {
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

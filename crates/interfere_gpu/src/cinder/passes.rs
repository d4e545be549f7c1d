//! Preparing and recording the per-pair tests: vertex buffers per view, each ordered test's
//! uniforms, the count passes (§4.1, §6.1), and the tight view of two overlapping boxes (§6.5).

use super::*;

impl Cinder {
    /// Validates the input and uploads, per view, the edge and triangle vertex buffers.
    pub(super) fn prepare(
        &self,
        ctx: &GpuContext,
        objects: &[CinderObject],
        resolution: u32,
        options: &CinderOptions,
    ) -> Result<Prepared, GpuError> {
        let max_dim = ctx.device.limits().max_texture_dimension_2d;
        if resolution == 0 || resolution > max_dim {
            return Err(invalid(format!(
                "resolution {resolution} is outside 1..={max_dim}"
            )));
        }
        if !(1..=3).contains(&options.views) {
            return Err(invalid(format!("views {} is outside 1..=3", options.views)));
        }
        if !options.edge_offset_pixels.is_finite()
            || options.edge_offset_pixels.abs() > MAX_OFFSET_PIXELS
        {
            return Err(invalid(format!(
                "edge offset {} pixels is not finite or above {MAX_OFFSET_PIXELS} in magnitude",
                options.edge_offset_pixels
            )));
        }
        // World-space edge (position, normal) pairs and triangle corners, rotated per view below.
        let mut edge_vertices: Vec<[[f32; 3]; 2]> = Vec::new();
        let mut solid_vertices: Vec<[f32; 3]> = Vec::new();
        let mut edge_ranges = Vec::with_capacity(objects.len());
        let mut solid_ranges = Vec::with_capacity(objects.len());
        let mut boxes = Vec::with_capacity(objects.len());
        for (index, object) in objects.iter().enumerate() {
            let n = object.vertices.len();
            if let Some(v) = object
                .vertices
                .iter()
                .position(|p| p.iter().any(|c| !c.is_finite()))
            {
                return Err(invalid(format!("object {index}: vertex {v} is not finite")));
            }
            if let Some(t) = object
                .triangles
                .iter()
                .position(|t| t.iter().any(|&i| i as usize >= n))
            {
                return Err(invalid(format!(
                    "object {index}: triangle {t} indexes past its {n} vertices"
                )));
            }
            let normals = vertex_normals(object);
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
                edge_vertices.push([object.vertices[a as usize], normals[a as usize]]);
                edge_vertices.push([object.vertices[b as usize], normals[b as usize]]);
            }
            edge_ranges.push(start..edge_vertices.len() as u32);
            boxes.push(bounds);
        }
        let device = &ctx.device;
        let mut edge_buffers = Vec::new();
        let mut solid_buffers = Vec::new();
        for view in 0..options.views as usize {
            let edges: Vec<[[f32; 3]; 2]> = edge_vertices
                .iter()
                .map(|&[p, n]| [to_view(p, view), to_view(n, view)])
                .collect();
            let solids: Vec<[f32; 3]> = solid_vertices.iter().map(|&p| to_view(p, view)).collect();
            // Zero-sized buffers are not allowed as vertex buffers: pad with one vertex.
            let edge_bytes: &[u8] = bytemuck::cast_slice(&edges);
            let solid_bytes: &[u8] = bytemuck::cast_slice(&solids);
            edge_buffers.push(
                device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("cinder edges"),
                    contents: if edge_bytes.is_empty() {
                        &[0; 24]
                    } else {
                        edge_bytes
                    },
                    usage: wgpu::BufferUsages::VERTEX,
                }),
            );
            solid_buffers.push(
                device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("cinder triangles"),
                    contents: if solid_bytes.is_empty() {
                        &[0; 12]
                    } else {
                        solid_bytes
                    },
                    usage: wgpu::BufferUsages::VERTEX,
                }),
            );
        }
        Ok(Prepared {
            edge_buffers,
            solid_buffers,
            edge_ranges,
            solid_ranges,
            boxes,
        })
    }

    /// One uniform slot per test and the bind group over them; returns the slot stride.
    pub(super) fn uniforms(&self, device: &wgpu::Device, tests: &[Test]) -> (wgpu::BindGroup, u64) {
        let alignment = u64::from(device.limits().min_uniform_buffer_offset_alignment.max(16));
        let stride = VIEW_BYTES.next_multiple_of(alignment);
        let mut uniform = vec![0u8; stride as usize * tests.len()];
        for (k, test) in tests.iter().enumerate() {
            let at = k * stride as usize;
            uniform[at..at + VIEW_BYTES as usize]
                .copy_from_slice(bytemuck::bytes_of(&test.uniform));
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
        (bind_group, stride)
    }

    /// Passes 1 to 3 of one ordered test: nearest edge points, then crossings of the penetrated
    /// object's surface in front of them.
    pub(super) fn count_passes(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        prepared: &Prepared,
        test: &Test,
        locate: bool,
    ) {
        pass.set_vertex_buffer(0, prepared.edge_buffers[test.view].slice(..));
        pass.set_pipeline(if locate {
            &self.locate_edge_depth
        } else {
            &self.edge_depth
        });
        pass.draw(prepared.edge_ranges[test.pen].clone(), 0..1);
        pass.set_vertex_buffer(0, prepared.solid_buffers[test.view].slice(..));
        pass.set_pipeline(if locate {
            &self.locate_solid_count
        } else {
            &self.solid_count
        });
        pass.draw(prepared.solid_ranges[test.tgt].clone(), 0..1);
    }
}

/// Both ordered tests of the pair `(i, j)` in every view when their boxes overlap, else none.
pub(super) fn ordered_tests(
    prepared: &Prepared,
    i: usize,
    j: usize,
    resolution: u32,
    options: &CinderOptions,
) -> Vec<Test> {
    let (Some(a), Some(b)) = (&prepared.boxes[i], &prepared.boxes[j]) else {
        return Vec::new();
    };
    if !a.overlaps(b) {
        return Vec::new();
    }
    let mut tests = Vec::with_capacity(2 * options.views as usize);
    for view in 0..options.views as usize {
        let uniform = view_for(
            &a.rotated(view),
            &b.rotated(view),
            resolution,
            options.edge_offset_pixels,
        );
        for (pen, tgt) in [(i, j), (j, i)] {
            tests.push(Test {
                pen,
                tgt,
                view,
                uniform,
            });
        }
    }
    tests
}

pub(super) fn extent(resolution: u32) -> wgpu::Extent3d {
    wgpu::Extent3d {
        width: resolution,
        height: resolution,
        depth_or_array_layers: 1,
    }
}

pub(super) fn depth_texture(device: &wgpu::Device, resolution: u32) -> wgpu::Texture {
    device.create_texture(&wgpu::TextureDescriptor {
        label: Some("cinder depth-stencil"),
        size: extent(resolution),
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: DEPTH_FORMAT,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
        view_formats: &[],
    })
}

pub(super) fn depth_attachment(
    view: &wgpu::TextureView,
) -> wgpu::RenderPassDepthStencilAttachment<'_> {
    wgpu::RenderPassDepthStencilAttachment {
        view,
        depth_ops: Some(wgpu::Operations {
            load: wgpu::LoadOp::Clear(1.0),
            store: wgpu::StoreOp::Discard,
        }),
        stencil_ops: Some(wgpu::Operations {
            load: wgpu::LoadOp::Clear(0),
            store: wgpu::StoreOp::Discard,
        }),
    }
}

/// The orthographic view of one candidate pair (boxes in the view's coordinates): `x`,`y` on the
/// overlap of the boxes, depth over the union of their `z` ranges, edge points kept on the
/// overlap's `z` slab (all slightly padded so that rounding never clips geometry that lies on a
/// box face), and the edge offset in world units.
pub(super) fn view_for(a: &Box3, b: &Box3, resolution: u32, offset_pixels: f32) -> View {
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
    let pixel = 2.0 * half(0).max(half(1)) / f64::from(resolution);
    let offset = f64::from(offset_pixels) * pixel;
    // Outward offsets may move edge points off the overlap slab by up to `offset`.
    let slab_pad = eps + offset.max(0.0);
    let z_far = union_hi[2] + slab_pad + (union_hi[2] - union_lo[2]) * 1e-3;
    let z_near = union_lo[2] - slab_pad - (union_hi[2] - union_lo[2]) * 1e-3;
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
        clip_z: [
            (lo[2] - eps) as f32,
            (hi[2] + eps) as f32,
            offset as f32,
            0.0,
        ],
    }
}

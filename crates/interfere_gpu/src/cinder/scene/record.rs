//! Recording a scene round: per view, the build pass appending every crossing and edge point
//! to per-pixel lists and the resolve pass evaluating the §4.1 count per object inside an
//! occlusion query (§6.1), with the `ZThenXy` fallback views drawn indirectly.

use super::*;

/// Uniform of `shaders/cinder_pairs.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
pub(super) struct PairsControl {
    pub(super) words: u32,
    pub(super) pairs: u32,
    pub(super) objects: u32,
    pub(super) solid_vertices: u32,
    pub(super) edge_vertices: u32,
    pub(super) row: u32,
    pub(super) pad: [u32; 2],
}

/// Marks an object that is not drawn in a pair request.
pub(crate) const NOT_DRAWN: u32 = u32::MAX;

/// The GPU resources of one recorded scene run (all its views).
pub(crate) struct SceneRound {
    pub(super) projections: Vec<Projection>,
    pub(super) gated: bool,
    pub(super) capacity: u64,
    pub(super) objects: u64,
    pub(super) counters: wgpu::Buffer,
    pub(super) counter_stride: u64,
    pub(super) queries: wgpu::Buffer,
    pub(super) draw_args: wgpu::Buffer,
    pub(super) pair_bits: wgpu::Buffer,
    pub(super) pair_words: u64,
    pub(super) open_bits: wgpu::Buffer,
    pub(super) open_words: u64,
    pub(super) points: wgpu::Buffer,
    pub(super) point_stride: u64,
    pub(super) point_capacity: u32,
    /// Per requested pair, whether CInDeR flags it (one `u32` each), when pairs were given.
    pub(crate) flags: Option<wgpu::Buffer>,
    pub(super) pairs: u64,
    pub(super) _keep: Vec<wgpu::Buffer>,
}

/// Where a round's results land in the staging buffer.
pub(crate) struct SceneRegions {
    pub(super) counters: Region,
    pub(super) queries: Region,
    pub(super) gate: Region,
    pub(super) pair_bits: Region,
    pub(super) open_bits: Region,
    pub(super) flags: Region,
}

/// One view as read back.
pub(super) struct ViewOutcome {
    pub(super) stats: ViewStats,
    pub(super) points_found: u64,
    pub(super) self_hits: u64,
    pub(super) saturated: u64,
}

/// A decoded scene round.
pub(crate) struct SceneOutcome {
    /// Fragments the largest view needed when some view overflowed its list storage.
    pub(crate) overflow: Option<u64>,
    pub(super) views: Vec<(usize, ViewOutcome)>,
    /// Ordered hits in drawn-object indices (from the bitset, when it was read back).
    pub(super) hits: Vec<(usize, usize)>,
    pub(super) not_closed: Vec<usize>,
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
        scene: &CinderScene,
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

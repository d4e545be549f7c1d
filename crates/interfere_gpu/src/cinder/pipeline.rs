//! The per-pair CInDeR pipelines (Knott & Pai 2003, §4): the edge pass writing the two-sided
//! stencil count, the face passes and the occlusion-query count pass, compiled once per device.

use super::*;

impl Cinder {
    /// Compiles the shader and builds the pipelines.
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
        let edge_attributes = wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32x3];
        let solid_attributes = wgpu::vertex_attr_array![0 => Float32x3];
        // `colour`: None for the detection passes (no colour attachment), Some(write mask) for
        // the localization pass.
        let make = |label: &'static str,
                    edges: bool,
                    colour: Option<wgpu::ColorWrites>,
                    depth_write: bool,
                    depth_compare: wgpu::CompareFunction,
                    front: wgpu::StencilFaceState,
                    back: wgpu::StencilFaceState| {
            let targets = colour.map(|write_mask| {
                [Some(wgpu::ColorTargetState {
                    format: LOCATE_FORMAT,
                    blend: None,
                    write_mask,
                })]
            });
            let fragment_entry = match (edges, colour.is_some()) {
                (true, false) => Some("fs_edge"),
                (true, true) => Some("fs_locate"),
                (false, true) => Some("fs_solid_masked"),
                (false, false) => None,
            };
            device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                label: Some(label),
                layout: Some(&pipeline_layout),
                vertex: wgpu::VertexState {
                    module: &module,
                    entry_point: Some(if edges { "vs_edge" } else { "vs_solid" }),
                    compilation_options: Default::default(),
                    buffers: &[if edges {
                        wgpu::VertexBufferLayout {
                            array_stride: 24,
                            step_mode: wgpu::VertexStepMode::Vertex,
                            attributes: &edge_attributes,
                        }
                    } else {
                        wgpu::VertexBufferLayout {
                            array_stride: 12,
                            step_mode: wgpu::VertexStepMode::Vertex,
                            attributes: &solid_attributes,
                        }
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
                fragment: fragment_entry.map(|entry| wgpu::FragmentState {
                    module: &module,
                    entry_point: Some(entry),
                    compilation_options: Default::default(),
                    targets: targets.as_ref().map_or(&[], |t| t.as_slice()),
                }),
                multiview_mask: None,
                cache: None,
            })
        };
        use wgpu::CompareFunction as C;
        use wgpu::StencilOperation as S;
        let keep = wgpu::StencilFaceState::IGNORE;
        let count = (
            stencil_face(C::Always, S::IncrementWrap),
            stencil_face(C::Always, S::DecrementWrap),
        );
        let inside = stencil_face(C::NotEqual, S::Keep);
        let negative = stencil_face(C::Less, S::Keep);
        let off = Some(wgpu::ColorWrites::empty());
        let all = Some(wgpu::ColorWrites::ALL);
        Self {
            layout: layout.clone(),
            edge_depth: make("cinder edge depth", true, None, true, C::Always, keep, keep),
            solid_count: make(
                "cinder solid count",
                false,
                None,
                false,
                C::Less,
                count.0,
                count.1,
            ),
            edge_inside: make(
                "cinder edge inside",
                true,
                None,
                false,
                C::LessEqual,
                inside,
                inside,
            ),
            edge_negative: make(
                "cinder edge negative",
                true,
                None,
                false,
                C::LessEqual,
                negative,
                negative,
            ),
            locate_edge_depth: make(
                "cinder locate depth",
                true,
                off,
                true,
                C::Always,
                keep,
                keep,
            ),
            locate_solid_count: make(
                "cinder locate count",
                false,
                off,
                false,
                C::Less,
                count.0,
                count.1,
            ),
            locate_edge_inside: make(
                "cinder locate inside",
                true,
                all,
                false,
                C::LessEqual,
                inside,
                inside,
            ),
            scene: scene::ScenePipelines::new(device),
        }
    }
}

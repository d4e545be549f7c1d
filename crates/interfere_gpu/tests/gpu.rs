//! GPU tests for `interfere_gpu`, run on whatever adapter exists (Mesa's software Vulkan driver in
//! CI). Under CI=true a missing adapter fails every test here.

use interfere_gpu::scan::exclusive_scan_cpu;
use interfere_gpu::testing::gpu_or_skip;
use interfere_gpu::{GpuContext, PrefixSum};
use rand::{Rng, SeedableRng};
use wgpu::util::DeviceExt;

#[test]
fn prefix_sum_matches_cpu_twin() {
    let Some(ctx) = gpu_or_skip("prefix_sum_matches_cpu_twin") else {
        return;
    };
    let scan = PrefixSum::new(&ctx);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    for &n in &[
        0usize, 1, 2, 511, 512, 513, 1023, 4096, 100_003, 262_144, 300_001,
    ] {
        let values: Vec<u32> = (0..n).map(|_| rng.random_range(0..5)).collect();
        let mut expected = values.clone();
        let expected_total = exclusive_scan_cpu(&mut expected);
        let (got, total) = scan.scan(&ctx, &values).expect("scan runs");
        assert_eq!(total, expected_total, "total for n = {n}");
        assert_eq!(got, expected, "prefix sums for n = {n}");
    }
}

const QUAD_SHADER: &str = r#"
@vertex
fn vs(@location(0) p: vec3<f32>) -> @builtin(position) vec4<f32> {
    return vec4<f32>(p, 1.0);
}
"#;

fn quad(x0: f32, y0: f32, x1: f32, y1: f32, z: f32) -> [[f32; 3]; 6] {
    // Counter-clockwise in NDC (front-facing with the default FrontFace::Ccw).
    [
        [x0, y0, z],
        [x1, y0, z],
        [x1, y1, z],
        [x0, y0, z],
        [x1, y1, z],
        [x0, y1, z],
    ]
}

/// The CInDeR building blocks on a case computed by hand: a 64x64 depth-stencil target; depth 0.25
/// written over the top half; a left-half quad at depth 0.5 increments the stencil where it passes
/// the depth test (only the bottom-left quadrant, 32x32 pixels); an occlusion query over a
/// full-screen stencil-tested redraw must count exactly 1024 samples.
#[test]
fn stencil_occlusion_query_counts_hand_computed_samples() {
    let Some(ctx) = gpu_or_skip("stencil_occlusion_query_counts_hand_computed_samples") else {
        return;
    };
    let samples = occlusion_case(&ctx);
    assert_eq!(samples, 1024, "occlusion query sample count");
}

fn occlusion_case(ctx: &GpuContext) -> u64 {
    let device = &ctx.device;
    let size = 64u32;
    let depth = device.create_texture(&wgpu::TextureDescriptor {
        label: Some("depth-stencil"),
        size: wgpu::Extent3d {
            width: size,
            height: size,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Depth24PlusStencil8,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
        view_formats: &[],
    });
    let view = depth.create_view(&Default::default());
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("quad"),
        source: wgpu::ShaderSource::Wgsl(QUAD_SHADER.into()),
    });
    let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: None,
        bind_group_layouts: &[],
        immediate_size: 0,
    });
    let pipeline =
        |write_depth: bool, compare: wgpu::CompareFunction, stencil: wgpu::StencilFaceState| {
            device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                label: None,
                layout: Some(&layout),
                vertex: wgpu::VertexState {
                    module: &module,
                    entry_point: Some("vs"),
                    compilation_options: Default::default(),
                    buffers: &[wgpu::VertexBufferLayout {
                        array_stride: 12,
                        step_mode: wgpu::VertexStepMode::Vertex,
                        attributes: &wgpu::vertex_attr_array![0 => Float32x3],
                    }],
                },
                primitive: wgpu::PrimitiveState::default(),
                depth_stencil: Some(wgpu::DepthStencilState {
                    format: wgpu::TextureFormat::Depth24PlusStencil8,
                    depth_write_enabled: Some(write_depth),
                    depth_compare: Some(compare),
                    stencil: wgpu::StencilState {
                        front: stencil,
                        back: stencil,
                        read_mask: 0xff,
                        write_mask: 0xff,
                    },
                    bias: Default::default(),
                }),
                multisample: Default::default(),
                fragment: None,
                multiview_mask: None,
                cache: None,
            })
        };
    let keep = wgpu::StencilFaceState::IGNORE;
    let write_depth = pipeline(true, wgpu::CompareFunction::Always, keep);
    let increment = pipeline(
        false,
        wgpu::CompareFunction::Less,
        wgpu::StencilFaceState {
            compare: wgpu::CompareFunction::Always,
            fail_op: wgpu::StencilOperation::Keep,
            depth_fail_op: wgpu::StencilOperation::Keep,
            pass_op: wgpu::StencilOperation::IncrementWrap,
        },
    );
    let count = pipeline(
        false,
        wgpu::CompareFunction::Always,
        wgpu::StencilFaceState {
            compare: wgpu::CompareFunction::Equal,
            fail_op: wgpu::StencilOperation::Keep,
            depth_fail_op: wgpu::StencilOperation::Keep,
            pass_op: wgpu::StencilOperation::Keep,
        },
    );
    let mut vertices = Vec::new();
    vertices.extend_from_slice(&quad(-1.0, 0.0, 1.0, 1.0, 0.25)); // top half (NDC y up)
    vertices.extend_from_slice(&quad(-1.0, -1.0, 0.0, 1.0, 0.5)); // left half
    vertices.extend_from_slice(&quad(-1.0, -1.0, 1.0, 1.0, 0.9)); // full screen
    let vertex_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("quads"),
        contents: bytemuck::cast_slice(&vertices),
        usage: wgpu::BufferUsages::VERTEX,
    });
    let queries = device.create_query_set(&wgpu::QuerySetDescriptor {
        label: Some("occlusion"),
        ty: wgpu::QueryType::Occlusion,
        count: 1,
    });
    let resolve = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("query resolve"),
        size: 8,
        usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("cinder-like passes"),
            color_attachments: &[],
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: &view,
                depth_ops: Some(wgpu::Operations {
                    load: wgpu::LoadOp::Clear(1.0),
                    store: wgpu::StoreOp::Store,
                }),
                stencil_ops: Some(wgpu::Operations {
                    load: wgpu::LoadOp::Clear(0),
                    store: wgpu::StoreOp::Store,
                }),
            }),
            timestamp_writes: None,
            occlusion_query_set: Some(&queries),
            multiview_mask: None,
        });
        pass.set_vertex_buffer(0, vertex_buffer.slice(..));
        pass.set_pipeline(&write_depth);
        pass.draw(0..6, 0..1);
        pass.set_pipeline(&increment);
        pass.draw(6..12, 0..1);
        pass.set_pipeline(&count);
        pass.set_stencil_reference(1);
        pass.begin_occlusion_query(0);
        pass.draw(12..18, 0..1);
        pass.end_occlusion_query();
    }
    encoder.resolve_query_set(&queries, 0..1, &resolve, 0);
    ctx.queue.submit([encoder.finish()]);
    interfere_gpu::readback::read_buffer::<u64>(ctx, "occlusion result", &resolve, 1)
        .expect("readback")[0]
}

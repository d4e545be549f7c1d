//! Shared building blocks of the compute kernels (the prefix sum of Greß–Zachmann §4.4 and the
//! breadth-first traversal of §4.2–4.3): bind-group layout entries, and one layout plus a
//! pipeline per entry point of a WGSL module.

/// A storage-buffer binding visible to compute shaders.
pub(crate) fn storage_entry(binding: u32, read_only: bool) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

/// A uniform-buffer binding visible to compute shaders.
pub(crate) fn uniform_entry(binding: u32) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

/// One bind-group layout over `entries` and a compute pipeline for each of `entry_points` of
/// `module`, all sharing that layout.
pub(crate) fn compute_kernels<const N: usize>(
    device: &wgpu::Device,
    label: &str,
    module: &wgpu::ShaderModule,
    entries: &[wgpu::BindGroupLayoutEntry],
    entry_points: [&'static str; N],
) -> (wgpu::BindGroupLayout, [wgpu::ComputePipeline; N]) {
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(&format!("{label} layout")),
        entries,
    });
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(&format!("{label} pipeline layout")),
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    let pipelines = entry_points.map(|entry| {
        device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(entry),
            layout: Some(&pipeline_layout),
            module,
            entry_point: Some(entry),
            compilation_options: Default::default(),
            cache: None,
        })
    });
    (layout, pipelines)
}

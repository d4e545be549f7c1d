//! The WGSL sources, one file per kernel under the workspace's `shaders/` folder, named like the
//! Rust module that drives them; compiled into the crate so tools need no files at run time.

/// Exclusive prefix sum (Blelloch scan) used to compact pair lists.
pub const SCAN: &str = include_str!("../../../shaders/scan.wgsl");

/// Breadth-first simultaneous traversal of two balanced AABB trees (count and scatter passes).
pub const BVH_TRAVERSAL: &str = include_str!("../../../shaders/bvh_traversal.wgsl");

/// Conservative `f32` triangle-triangle test (function library, prepended to the kernels below).
pub const TRI_TRI: &str = include_str!("../../../shaders/tri_tri.wgsl");

/// Palette traversal of many object pairs with leaf triangle tests (count and scatter passes).
pub const BVH_PALETTE: &str = include_str!("../../../shaders/bvh_palette.wgsl");

/// Brute-force m x n triangle-pair kernel.
pub const BRUTE_FORCE: &str = include_str!("../../../shaders/brute_force.wgsl");

/// CInDeR image-space interference: edge and solid passes of an orthographic view along z.
pub const CINDER: &str = include_str!("../../../shaders/cinder.wgsl");

/// CInDeR for a whole scene: per-pixel crossing lists and the per-object resolve pass.
pub const CINDER_SCENE: &str = include_str!("../../../shaders/cinder_scene.wgsl");
/// Uniformly ray-sampled intersection volume: one invocation per axis-parallel line.
pub const VOLUME: &str = include_str!("../../../shaders/volume.wgsl");

/// Creates a shader module from one of the sources above.
pub fn module(
    device: &wgpu::Device,
    label: &'static str,
    source: &'static str,
) -> wgpu::ShaderModule {
    device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    })
}

/// Control kernels of the palette traversal without readbacks: list setup between steps.
pub const PALETTE_CONTROL: &str = include_str!("../../../shaders/palette_control.wgsl");

/// CInDeR scene helpers: the gate of the later views and the per-pair flag extraction.
pub const CINDER_PAIRS: &str = include_str!("../../../shaders/cinder_pairs.wgsl");

//! The conservative `f32` triangle–triangle test run on the GPU at the leaves of the traversal
//! (Greß & Zachmann 2004, section 4) and by the brute-force kernel (section 3); shader
//! `shaders/tri_tri.wgsl`, a function library prepended to `shaders/bvh_palette.wgsl` and
//! `shaders/brute_force.wgsl` so that both kernels run the same code.
//!
//! **What it guarantees.** The exact CPU test (`interfere_geometry::tri_tri`, Shewchuk's
//! `orient3d` on `DPose::transform_point`'s `f64` vertices) is the reference. The GPU test is a
//! separating-axis test in `f32` that answers "disjoint" only with a proof: some axis `u` must
//! separate the two triangles' projections by more than `eps · |u|₁`, where
//! `eps = TRI_RELATIVE_EPS · scale + TRI_ABSOLUTE_EPS` ([`triangle_epsilon`]) dominates every
//! rounding error of the `f32` transform and projections (about 30 units of `2⁻²⁴ · scale`,
//! against the ~10 the arithmetic can make). Any direction proves disjointness, so:
//!
//! - it **never misses** a pair the exact test finds (touching and coplanar contact included);
//! - its 29 axes (coordinate axes, face normals, the 9 edge–edge cross products, and the 18
//!   vertex-to-closest-point-on-edge directions) contain the closest-feature direction of every
//!   disjoint pair, so each **extra** pair (reported, but rejected by the exact test) lies within
//!   [`distance_bound`] `= DISTANCE_FACTOR · eps` of the other triangle (exact distance; checked
//!   in the tests with an `f64` triangle distance on every extra).
//!
//! [`exact_filter`] runs the exact CPU test on the (few) reported pairs and returns the exact set.

use interfere_geometry::glam::Vec3;
use interfere_geometry::{DPose, TriMesh, triangles_intersect};

/// Relative part of the triangle test's epsilon (times the pair's coordinate scale).
pub const TRI_RELATIVE_EPS: f32 = 2e-6;

/// Absolute part of the triangle test's epsilon (covers subnormals flushed to zero).
pub const TRI_ABSOLUTE_EPS: f32 = 1e-30;

/// Extra pairs have exact distance at most this many times [`triangle_epsilon`].
pub const DISTANCE_FACTOR: f64 = 8.0;

/// Relative margin of the box (SAT-lite) tests on the triangle path. It exceeds
/// [`distance_bound`] relative to the boxes' scale, so a pair the triangle test reports can never
/// be pruned higher up: the traversal and the brute-force kernel report the same set, and
/// starting from an entrance level changes nothing.
pub const TRI_PATH_BOX_MARGIN: f32 = 1e-4;

/// The coordinate scale the shader uses for a pair: largest |coordinate| of `a`, of `b` placed in
/// `A`'s frame, three times that of `b`'s local vertices, and of the translation.
pub fn triangle_scale(a: [Vec3; 3], b_local: [Vec3; 3], b_to_a: &DPose) -> f64 {
    let max_abs = |p: &[f64]| p.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let sa = max_abs(
        &a.iter()
            .flat_map(|v| v.to_array().map(f64::from))
            .collect::<Vec<_>>(),
    );
    let sb = max_abs(
        &b_local
            .iter()
            .flat_map(|&v| b_to_a.transform_point(v).to_array())
            .collect::<Vec<_>>(),
    );
    let sl = max_abs(
        &b_local
            .iter()
            .flat_map(|v| v.to_array().map(f64::from))
            .collect::<Vec<_>>(),
    );
    sa + sb + 3.0 * sl + b_to_a.translation.abs().max_element()
}

/// The epsilon of the GPU test for one pair (`TRI_RELATIVE_EPS · scale + TRI_ABSOLUTE_EPS`).
pub fn triangle_epsilon(a: [Vec3; 3], b_local: [Vec3; 3], b_to_a: &DPose) -> f64 {
    f64::from(TRI_RELATIVE_EPS) * triangle_scale(a, b_local, b_to_a) + f64::from(TRI_ABSOLUTE_EPS)
}

/// The stated bound on the exact distance of a pair the GPU reports but the exact test rejects.
pub fn distance_bound(a: [Vec3; 3], b_local: [Vec3; 3], b_to_a: &DPose) -> f64 {
    DISTANCE_FACTOR * triangle_epsilon(a, b_local, b_to_a)
}

/// The pairs of `pairs` (triangle of `a`, triangle of `b`) that the exact CPU test accepts with
/// `b` placed by `b_to_a`; indices out of range are dropped. Order is kept.
pub fn exact_filter(
    a: &TriMesh,
    b: &TriMesh,
    b_to_a: &DPose,
    pairs: &[(u32, u32)],
) -> Vec<(u32, u32)> {
    pairs
        .iter()
        .copied()
        .filter(|&(i, j)| {
            if i as usize >= a.triangle_count() || j as usize >= b.triangle_count() {
                return false;
            }
            let ta = a.triangle(i as usize).map(|v| v.as_dvec3());
            let tb = b.triangle(j as usize).map(|v| b_to_a.transform_point(v));
            triangles_intersect(ta, tb)
        })
        .collect()
}

/// Where one mesh of a [`crate::bvh_traversal::GpuMeshSet`] lives (shader `MeshRef`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct MeshRef {
    pub node_base: u32,
    pub level_base: u32,
    pub depth: u32,
    pub tri_base: u32,
}

/// One palette entry (shader `ObjectPair`): relative pose in `f32` and the two meshes.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct GpuObjectPair {
    pub rot: [[f32; 4]; 3],
    pub trans: [f32; 4],
    pub a: MeshRef,
    pub b: MeshRef,
}

impl GpuObjectPair {
    pub(crate) fn new(b_to_a: &DPose, a: MeshRef, b: MeshRef) -> Self {
        let r = b_to_a.rotation;
        let cols = [r.x_axis.as_vec3(), r.y_axis.as_vec3(), r.z_axis.as_vec3()];
        let t = b_to_a.translation.as_vec3();
        Self {
            rot: cols.map(|c| [c.x, c.y, c.z, 0.0]),
            trans: [t.x, t.y, t.z, 0.0],
            a,
            b,
        }
    }
}

/// The shader source of a kernel that uses the triangle test: `tri_tri.wgsl` then `kernel`.
pub(crate) fn with_tri_tri(kernel: &str) -> String {
    format!("{}\n{}", crate::shaders::TRI_TRI, kernel)
}

/// Creates a module from [`with_tri_tri`].
pub(crate) fn module(
    device: &wgpu::Device,
    label: &'static str,
    kernel: &str,
) -> wgpu::ShaderModule {
    device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source: wgpu::ShaderSource::Wgsl(with_tri_tri(kernel).into()),
    })
}

//! GPU tests for `interfere_gpu`, run on whatever adapter exists (Mesa's software Vulkan driver in
//! CI). Under CI=true a missing adapter fails every test here.

use interfere_gpu::scan::exclusive_scan_cpu;
use interfere_gpu::testing::gpu_or_skip;
use interfere_gpu::{GpuContext, PrefixSum};
use rand::{Rng, SeedableRng};
use wgpu::util::DeviceExt;

#[path = "gpu/cinder_scene.rs"]
mod cinder_scene;
#[path = "gpu/contact_stage.rs"]
mod contact_stage;

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

// ---------------------------------------------------------------------------------------------
// GPU breadth-first BVH traversal (Greß–Zachmann section 4) against the CPU bfs and brute force.

mod bvh {
    use super::*;
    use interfere_geometry::bvh::bfs::{self, BfsConfig};
    use interfere_geometry::bvh::{BalancedNode, BalancedTree, SatLite};
    use interfere_geometry::glam::{DMat3, DVec3, Quat, Vec3};
    use interfere_geometry::{DPose, Pose, TriMesh, all_pairs_brute, shapes, triangles_intersect};
    use interfere_gpu::GpuError;
    use interfere_gpu::bvh_traversal::{GpuBvhTraversal, margin_bound};
    use std::collections::BTreeSet;
    use std::io::Write;

    fn random_pose(rng: &mut rand_chacha::ChaCha8Rng, reach: f32) -> DPose {
        let q = loop {
            let v = interfere_geometry::glam::Vec4::new(
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
            );
            if v.length_squared() > 0.01 && v.length_squared() < 1.0 {
                break Quat::from_vec4(v.normalize());
            }
        };
        let t = Vec3::new(
            rng.random_range(-reach..reach),
            rng.random_range(-reach..reach),
            rng.random_range(-reach..reach),
        );
        Pose::new(q, t).to_f64()
    }

    fn leaves_by_triangle(tree: &BalancedTree) -> Vec<BalancedNode> {
        let leaves = tree.level(tree.depth());
        let mut out = vec![BalancedNode::default(); leaves.len()];
        for leaf in leaves {
            out[leaf.index as usize] = *leaf;
        }
        out
    }

    /// Runs the GPU traversal and checks it against the CPU: superset of the CPU bfs leaf-box
    /// pairs, every extra pair a near miss, and after the exact triangle test exactly the brute
    /// force set. Returns (candidates, final pairs).
    fn check_case(
        ctx: &GpuContext,
        gpu: &GpuBvhTraversal,
        a: &TriMesh,
        b: &TriMesh,
        pose: &DPose,
        label: &str,
    ) -> (usize, usize) {
        let (ta, tb) = (BalancedTree::build(a), BalancedTree::build(b));
        let (ga, gb) = (
            GpuBvhTraversal::upload_tree(ctx, &ta).expect("upload A"),
            GpuBvhTraversal::upload_tree(ctx, &tb).expect("upload B"),
        );
        let candidates = gpu
            .candidate_pairs(ctx, &ga, &gb, pose, 1 << 22)
            .expect("GPU traversal");
        assert!(candidates.is_sorted(), "{label}: sorted output");
        let gpu_set: BTreeSet<(u32, u32)> = candidates.iter().copied().collect();
        assert_eq!(gpu_set.len(), candidates.len(), "{label}: no duplicates");

        let cpu =
            bfs::all_pairs(&ta, &tb, pose, &BfsConfig::default(), |_, _| true).expect("CPU bfs");
        for p in &cpu {
            assert!(
                gpu_set.contains(p),
                "{label}: CPU leaf-box pair {p:?} missing on the GPU"
            );
        }
        let (la, lb) = (leaves_by_triangle(&ta), leaves_by_triangle(&tb));
        let sat = SatLite::new(pose);
        let cpu_set: BTreeSet<(u32, u32)> = cpu.iter().copied().collect();
        // "Near" independently of the kernel's constants: a thousandth of the coordinate scale.
        let extent = |m: &TriMesh| {
            m.vertices()
                .iter()
                .map(|v| f64::from(v.abs().max_element()))
                .fold(0.0, f64::max)
        };
        let near = 1e-3 * (extent(a) + extent(b) + pose.translation.abs().max_element());
        for &(i, j) in gpu_set.difference(&cpu_set) {
            let (na, nb) = (&la[i as usize], &lb[j as usize]);
            let margin = margin_bound(na, nb, pose);
            assert!(margin <= near, "{label}: margin {margin} is not small");
            assert!(
                sat.overlaps_inflated(na, nb, margin),
                "{label}: extra GPU pair ({i}, {j}) is not a near miss"
            );
        }

        let bv: Vec<DVec3> = b
            .vertices()
            .iter()
            .map(|&v| pose.transform_point(v))
            .collect();
        let tri_a = |t: u32| a.triangle(t as usize).map(|v| v.as_dvec3());
        let tri_b = |t: u32| b.triangles()[t as usize].map(|k| bv[k as usize]);
        let exact: Vec<(u32, u32)> = candidates
            .iter()
            .copied()
            .filter(|&(i, j)| triangles_intersect(tri_a(i), tri_b(j)))
            .collect();
        assert_eq!(
            exact,
            all_pairs_brute(a, b, pose),
            "{label}: exact pair set"
        );
        (candidates.len(), exact.len())
    }

    #[test]
    fn gpu_bvh_traversal_matches_cpu_on_random_poses() {
        let Some(ctx) = gpu_or_skip("gpu_bvh_traversal_matches_cpu_on_random_poses") else {
            return;
        };
        let gpu = GpuBvhTraversal::new(&ctx);
        let meshes: Vec<(&str, TriMesh)> = vec![
            ("icosphere", shapes::icosphere(1.0, 3).unwrap().into_mesh()),
            (
                "torus",
                shapes::torus(1.0, 0.35, 32, 12).unwrap().into_mesh(),
            ),
            (
                "bumpy",
                shapes::bumpy_sphere(1.0, 0.3, 4.0, 3, 5)
                    .unwrap()
                    .into_mesh(),
            ),
            (
                "cuboid",
                shapes::cuboid(Vec3::new(0.8, 0.5, 1.2))
                    .unwrap()
                    .into_mesh(),
            ),
            (
                "subdivided cuboid",
                shapes::subdivided_cuboid(Vec3::new(0.7, 0.9, 0.6), 6)
                    .unwrap()
                    .into_mesh(),
            ),
        ];
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2004);
        let (mut hit_cases, mut extra_candidates) = (0, 0);
        for case in 0..40 {
            let ia = rng.random_range(0..meshes.len());
            let ib = rng.random_range(0..meshes.len());
            let pose = random_pose(&mut rng, 1.8);
            let label = format!("case {case}: {} vs {}", meshes[ia].0, meshes[ib].0);
            let (candidates, exact) =
                check_case(&ctx, &gpu, &meshes[ia].1, &meshes[ib].1, &pose, &label);
            hit_cases += usize::from(exact > 0);
            extra_candidates += candidates - exact;
        }
        assert!(
            hit_cases >= 5,
            "most random poses must interfere ({hit_cases})"
        );
        assert!(extra_candidates > 0, "the box test must pass some non-hits");
    }

    #[test]
    fn gpu_bvh_traversal_adversarial_cases() {
        let Some(ctx) = gpu_or_skip("gpu_bvh_traversal_adversarial_cases") else {
            return;
        };
        let gpu = GpuBvhTraversal::new(&ctx);
        // Coincident: same mesh, identity pose (every face touches itself).
        let sphere = shapes::icosphere(1.0, 2).unwrap().into_mesh();
        let (_, exact) = check_case(&ctx, &gpu, &sphere, &sphere, &DPose::IDENTITY, "coincident");
        assert!(exact >= sphere.triangle_count());
        // Face-to-face touching boxes (coplanar contact, exact in f32).
        let cube = shapes::subdivided_cuboid(Vec3::ONE, 4).unwrap().into_mesh();
        let touch = Pose::from_translation(Vec3::new(2.0, 0.5, 0.0)).to_f64();
        let (_, exact) = check_case(&ctx, &gpu, &cube, &cube, &touch, "touching cubes");
        assert!(exact > 0, "touching faces intersect");
        // Nested: a small sphere inside a big one (no surface contact), and a single triangle.
        let small = shapes::icosphere(0.3, 2).unwrap().into_mesh();
        let (_, exact) = check_case(&ctx, &gpu, &sphere, &small, &DPose::IDENTITY, "nested");
        assert_eq!(exact, 0);
        let one = TriMesh::new(sphere.vertices().to_vec(), vec![sphere.triangles()[0]]).unwrap();
        check_case(
            &ctx,
            &gpu,
            &one,
            &sphere,
            &DPose::IDENTITY,
            "single triangle A",
        );
        check_case(
            &ctx,
            &gpu,
            &sphere,
            &one,
            &DPose::IDENTITY,
            "single triangle B",
        );
        // Huge coordinates: a bumpy sphere far from the origin against itself rotated slightly
        // about its centre.
        let c = Vec3::new(1.0e5, -2.0e5, 3.0e4);
        let bumpy = shapes::bumpy_sphere(1.0, 0.3, 4.0, 2, 9).unwrap();
        let far = TriMesh::new(
            bumpy.vertices().iter().map(|&v| v + c).collect(),
            bumpy.triangles().to_vec(),
        )
        .unwrap();
        let r = DMat3::from_quat(interfere_geometry::glam::DQuat::from_rotation_y(0.2));
        let cd = c.as_dvec3();
        let spin = DPose {
            rotation: r,
            translation: cd - r * cd,
        };
        let (_, exact) = check_case(&ctx, &gpu, &far, &far, &spin, "huge coordinates");
        assert!(exact > 0);
        // A non-finite pose: every pair is a candidate (conservative), the exact set stays.
        let nan = DPose {
            rotation: DMat3::IDENTITY,
            translation: DVec3::new(f64::NAN, 0.0, 0.0),
        };
        let (ta, tb) = (BalancedTree::build(&cube), BalancedTree::build(&small));
        let (ga, gb) = (
            GpuBvhTraversal::upload_tree(&ctx, &ta).unwrap(),
            GpuBvhTraversal::upload_tree(&ctx, &tb).unwrap(),
        );
        let all = gpu.candidate_pairs(&ctx, &ga, &gb, &nan, 1 << 22).unwrap();
        assert_eq!(all.len(), cube.triangle_count() * small.triangle_count());
    }

    #[test]
    fn gpu_bvh_traversal_disjoint_is_empty() {
        let Some(ctx) = gpu_or_skip("gpu_bvh_traversal_disjoint_is_empty") else {
            return;
        };
        let gpu = GpuBvhTraversal::new(&ctx);
        let a = shapes::torus(1.0, 0.3, 24, 10).unwrap().into_mesh();
        let b = shapes::icosphere(0.5, 3).unwrap().into_mesh();
        let (ta, tb) = (BalancedTree::build(&a), BalancedTree::build(&b));
        let (ga, gb) = (
            GpuBvhTraversal::upload_tree(&ctx, &ta).unwrap(),
            GpuBvhTraversal::upload_tree(&ctx, &tb).unwrap(),
        );
        for t in [
            Vec3::new(5.0, 0.0, 0.0),
            Vec3::new(0.0, 0.0, 1.0),
            Vec3::new(-3.0, 2.0, -1.0),
        ] {
            let pose = Pose::new(Quat::from_rotation_x(0.7), t).to_f64();
            let got = gpu.candidate_pairs(&ctx, &ga, &gb, &pose, 1 << 20).unwrap();
            assert!(got.is_empty(), "{t}: {} candidates", got.len());
            assert!(all_pairs_brute(&a, &b, &pose).is_empty());
        }
        // The hole of the torus holds a small sphere without contact; boxes overlap at the top
        // levels, so the traversal must descend and still end empty of exact hits.
        let inside = shapes::icosphere(0.4, 2).unwrap().into_mesh();
        let (_, exact) = check_case(&ctx, &gpu, &a, &inside, &DPose::IDENTITY, "torus hole");
        assert_eq!(exact, 0);
    }

    #[test]
    fn gpu_bvh_traversal_overflow_is_an_error() {
        let Some(ctx) = gpu_or_skip("gpu_bvh_traversal_overflow_is_an_error") else {
            return;
        };
        let gpu = GpuBvhTraversal::new(&ctx);
        let mesh = shapes::icosphere(1.0, 2).unwrap().into_mesh();
        let tree = BalancedTree::build(&mesh);
        let g = GpuBvhTraversal::upload_tree(&ctx, &tree).unwrap();
        let pose = DPose::IDENTITY;
        let full = gpu.candidate_pairs(&ctx, &g, &g, &pose, 1 << 20).unwrap();
        let needed = full.len() as u32;
        for capacity in [0u32, 1, 3, 50, needed - 1] {
            match gpu.candidate_pairs(&ctx, &g, &g, &pose, capacity) {
                Err(GpuError::PairListOverflow {
                    needed: n,
                    capacity: c,
                    ..
                }) => {
                    assert_eq!(c, capacity);
                    assert!(n > u64::from(capacity));
                }
                other => panic!("capacity {capacity}: expected overflow, got {other:?}"),
            }
        }
        // Overflow is monotone in the capacity: binary-search the longest list, then the
        // capacity one below it must report exactly that length as needed.
        let fits = |c: u32| gpu.candidate_pairs(&ctx, &g, &g, &pose, c).is_ok();
        let (mut lo, mut hi) = (needed, needed * 4);
        assert!(fits(hi), "no step has more than 4x the leaf pairs here");
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if fits(mid) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        let longest = lo;
        assert_eq!(
            gpu.candidate_pairs(&ctx, &g, &g, &pose, longest).unwrap(),
            full
        );
        match gpu.candidate_pairs(&ctx, &g, &g, &pose, longest - 1) {
            Err(GpuError::PairListOverflow { needed: n, .. }) => assert_eq!(n, u64::from(longest)),
            other => panic!("capacity {}: expected overflow, got {other:?}", longest - 1),
        }
    }

    /// Not a benchmark: one ~5k-triangle pair, timed (printed) and checked against the CPU bfs.
    #[test]
    fn gpu_bvh_traversal_5k_pair() {
        let Some(ctx) = gpu_or_skip("gpu_bvh_traversal_5k_pair") else {
            return;
        };
        let gpu = GpuBvhTraversal::new(&ctx);
        let a = shapes::icosphere(1.0, 4).unwrap().into_mesh();
        let b = shapes::bumpy_sphere(1.0, 0.3, 4.0, 4, 3)
            .unwrap()
            .into_mesh();
        let (ta, tb) = (BalancedTree::build(&a), BalancedTree::build(&b));
        let (ga, gb) = (
            GpuBvhTraversal::upload_tree(&ctx, &ta).unwrap(),
            GpuBvhTraversal::upload_tree(&ctx, &tb).unwrap(),
        );
        let pose = Pose::new(Quat::from_rotation_z(0.4), Vec3::new(0.5, 0.2, 0.1)).to_f64();
        let _warm = gpu.candidate_pairs(&ctx, &ga, &gb, &pose, 1 << 22).unwrap();
        let start = std::time::Instant::now();
        let got = gpu.candidate_pairs(&ctx, &ga, &gb, &pose, 1 << 22).unwrap();
        let elapsed = start.elapsed();
        let start = std::time::Instant::now();
        let cpu = bfs::all_pairs(&ta, &tb, &pose, &BfsConfig::default(), |_, _| true).unwrap();
        let cpu_elapsed = start.elapsed();
        let gpu_set: BTreeSet<(u32, u32)> = got.iter().copied().collect();
        assert!(cpu.iter().all(|p| gpu_set.contains(p)));
        assert!(!cpu.is_empty());
        let _ = writeln!(
            std::io::stderr(),
            "gpu bvh traversal: {} x {} triangles, {} candidates in {:?} on {} (CPU bfs: {} \
             leaf-box pairs in {:?})",
            a.triangle_count(),
            b.triangle_count(),
            got.len(),
            elapsed,
            ctx.adapter.name,
            cpu.len(),
            cpu_elapsed,
        );
    }
}

// ---------------------------------------------------------------------------------------------
// CInDeR image-space interference (Knott & Pai 2003) against the exact CPU interference test.

mod cinder {
    use super::*;
    use interfere_geometry::glam::{EulerRot, Quat, Vec3};
    use interfere_geometry::interference::{MeshQueries, Method};
    use interfere_geometry::{DPose, Pose, TriMesh, shapes};
    use interfere_gpu::{Cinder, CinderObject, GpuError};
    use std::collections::BTreeSet;
    use std::io::Write;

    const RESOLUTION: u32 = 256;

    fn object(mesh: &TriMesh, pose: &Pose) -> CinderObject {
        let world = mesh.transformed(pose);
        CinderObject {
            vertices: world.vertices().iter().map(|v| v.to_array()).collect(),
            triangles: world.triangles().to_vec(),
        }
    }

    /// The exact CPU answer (triangle pairs, then containment) on the same world-space meshes.
    fn cpu_interferes(a: &TriMesh, pose_a: &Pose, b: &TriMesh, pose_b: &Pose) -> bool {
        let a = MeshQueries::new(a.transformed(pose_a));
        let b = MeshQueries::new(b.transformed(pose_b));
        a.interference(&b, &DPose::IDENTITY, Method::Aabb, false)
            .expect("cpu interference")
            .intersecting
    }

    #[test]
    fn cinder_two_cubes_overlapping_and_separated() {
        let Some(ctx) = gpu_or_skip("cinder_two_cubes_overlapping_and_separated") else {
            return;
        };
        let cinder = Cinder::new(&ctx);
        let cube = shapes::cuboid(Vec3::splat(1.0)).unwrap();
        let tilt = Quat::from_euler(EulerRot::XYZ, 0.3, 0.2, 0.1);
        let cases = [
            (Pose::from_translation(Vec3::new(1.5, 0.7, 0.4)), true),
            (Pose::new(tilt, Vec3::new(1.8, -0.5, 0.9)), true),
            (Pose::from_translation(Vec3::new(2.1, 0.7, 0.4)), false),
            (Pose::from_translation(Vec3::new(0.3, 0.2, 2.1)), false), // gap along the view axis
            (Pose::from_translation(Vec3::new(0.3, 0.2, 1.9)), true), // overlap along the view axis
            (Pose::new(tilt, Vec3::new(4.0, 4.0, 4.0)), false),
        ];
        for (k, (pose, expected)) in cases.iter().enumerate() {
            assert_eq!(
                cpu_interferes(&cube, &Pose::IDENTITY, &cube, pose),
                *expected,
                "oracle, case {k}"
            );
            let objects = [object(&cube, &Pose::IDENTITY), object(&cube, pose)];
            let report = cinder
                .detect(&ctx, &objects, RESOLUTION)
                .expect("cinder runs");
            let want: Vec<(usize, usize)> = if *expected { vec![(0, 1)] } else { vec![] };
            assert_eq!(report.pairs, want, "case {k}: {report:?}");
            assert!(report.negative.is_empty(), "case {k}: {report:?}");
            // Same answer with the objects listed the other way round.
            let swapped = [objects[1].clone(), objects[0].clone()];
            assert_eq!(
                cinder
                    .interfering_pairs(&ctx, &swapped, RESOLUTION)
                    .unwrap(),
                want,
                "case {k} swapped"
            );
        }
    }

    #[test]
    fn cinder_nested_sphere_and_inverted_mesh() {
        let Some(ctx) = gpu_or_skip("cinder_nested_sphere_and_inverted_mesh") else {
            return;
        };
        let cinder = Cinder::new(&ctx);
        let big = shapes::icosphere(2.0, 2).unwrap();
        let small = shapes::icosphere(0.3, 2).unwrap();
        let inner = Pose::from_translation(Vec3::new(0.5, -0.4, 0.6));
        assert!(cpu_interferes(&big, &Pose::IDENTITY, &small, &inner));
        let objects = [object(&big, &Pose::IDENTITY), object(&small, &inner)];
        let report = cinder.detect(&ctx, &objects, RESOLUTION).unwrap();
        // Only the small sphere's edges lie inside the big one: the hit is ordered (1 into 0).
        assert_eq!(report.hits, vec![(1, 0)], "{report:?}");
        assert_eq!(report.pairs, vec![(0, 1)]);
        assert!(report.negative.is_empty());
        assert_eq!(report.tests, 2);
        // Moved out of the big sphere: nothing.
        let outer = Pose::from_translation(Vec3::new(2.5, 0.0, 0.0));
        let objects = [object(&big, &Pose::IDENTITY), object(&small, &outer)];
        assert!(!cpu_interferes(&big, &Pose::IDENTITY, &small, &outer));
        assert!(
            cinder
                .interfering_pairs(&ctx, &objects, RESOLUTION)
                .unwrap()
                .is_empty()
        );
        // An inward-oriented (flipped) big sphere gives negative counts (§4.1), which are reported.
        let objects = [
            object(&big.flipped(), &Pose::IDENTITY),
            object(&small, &inner),
        ];
        let report = cinder.detect(&ctx, &objects, RESOLUTION).unwrap();
        assert_eq!(report.negative, vec![(1, 0)], "{report:?}");
    }

    /// Non-convex geometry (§6.4): a torus seen edge-on and face-on, with a small sphere in its
    /// hole (no interference), inside its tube (nested: interference) and through its surface.
    /// Also the same scenes far from the origin (f32 coordinates around 1e4).
    #[test]
    fn cinder_torus_hole_tube_and_far_from_origin() {
        let Some(ctx) = gpu_or_skip("cinder_torus_hole_tube_and_far_from_origin") else {
            return;
        };
        let cinder = Cinder::new(&ctx);
        let torus = shapes::torus(2.0, 0.6, 48, 24).unwrap().mesh().clone();
        let ball = shapes::icosphere(0.25, 2).unwrap().mesh().clone();
        let mut checked = 0;
        for far in [Vec3::ZERO, Vec3::new(1.0e4, -1.0e4, 1.0e4)] {
            for torus_rotation in [Quat::IDENTITY, Quat::from_rotation_x(1.3)] {
                let torus_pose = Pose::new(torus_rotation, far);
                for (local, expected) in [
                    (Vec3::ZERO, false),               // in the hole
                    (Vec3::new(0.3, 0.9, 0.0), false), // in the hole, off centre
                    (Vec3::new(2.0, 0.0, 0.0), true),  // inside the tube
                    (Vec3::new(0.0, -2.1, 0.1), true), // inside the tube, elsewhere
                    (Vec3::new(2.6, 0.0, 0.0), true),  // through the outer surface
                    (Vec3::new(0.0, 0.0, 1.2), false), // above the hole
                ] {
                    let ball_pose = Pose::from_translation(far + torus_rotation * local);
                    assert_eq!(
                        cpu_interferes(&torus, &torus_pose, &ball, &ball_pose),
                        expected,
                        "oracle at {local} {far}"
                    );
                    let objects = [object(&torus, &torus_pose), object(&ball, &ball_pose)];
                    let report = cinder.detect(&ctx, &objects, RESOLUTION).unwrap();
                    let want: Vec<(usize, usize)> = if expected { vec![(0, 1)] } else { vec![] };
                    assert_eq!(report.pairs, want, "ball at {local}, far {far}: {report:?}");
                    assert!(report.negative.is_empty(), "{report:?}");
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, 24);
    }

    #[test]
    fn cinder_rejects_bad_input() {
        let Some(ctx) = gpu_or_skip("cinder_rejects_bad_input") else {
            return;
        };
        let cinder = Cinder::new(&ctx);
        let cube = object(&shapes::cuboid(Vec3::ONE).unwrap(), &Pose::IDENTITY);
        let bad_index = CinderObject {
            vertices: vec![[0.0; 3]; 3],
            triangles: vec![[0, 1, 3]],
        };
        let nan = CinderObject {
            vertices: vec![[f32::NAN, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
            triangles: vec![[0, 1, 2]],
        };
        for (objects, resolution) in [
            (vec![cube.clone()], 0),
            (vec![cube.clone()], u32::MAX),
            (vec![cube.clone(), bad_index], 64),
            (vec![nan, cube.clone()], 64),
        ] {
            assert!(matches!(
                cinder.interfering_pairs(&ctx, &objects, resolution),
                Err(GpuError::InvalidInput { .. })
            ));
        }
        // Empty inputs and objects without triangles are fine and interfere with nothing.
        assert!(cinder.interfering_pairs(&ctx, &[], 64).unwrap().is_empty());
        let empty = CinderObject::default();
        let moved = object(
            &shapes::cuboid(Vec3::ONE).unwrap(),
            &Pose::from_translation(Vec3::new(0.5, 0.6, 0.7)),
        );
        assert_eq!(
            cinder
                .interfering_pairs(&ctx, &[cube, empty, moved], 64)
                .unwrap(),
            vec![(0, 2)]
        );
    }

    /// A random convex shape: an icosphere (radius `r`) or a cuboid (half extents `h`), with a
    /// way to build its shrunk (`-delta`) and grown (`+delta`) versions.
    #[derive(Clone, Copy)]
    enum Shape {
        Sphere(f32),
        Box(Vec3),
    }

    impl Shape {
        fn mesh(self, delta: f32) -> TriMesh {
            match self {
                Shape::Sphere(r) => shapes::icosphere(r + delta, 1).unwrap().mesh().clone(),
                Shape::Box(h) => shapes::cuboid(h + Vec3::splat(delta))
                    .unwrap()
                    .mesh()
                    .clone(),
            }
        }
    }

    #[test]
    fn cinder_matches_cpu_on_random_poses() {
        let Some(ctx) = gpu_or_skip("cinder_matches_cpu_on_random_poses") else {
            return;
        };
        let cinder = Cinder::new(&ctx);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2003);
        let shape = |rng: &mut rand_chacha::ChaCha8Rng| {
            if rng.random::<f32>() < 0.5 {
                Shape::Sphere(rng.random_range(0.4..1.0))
            } else {
                Shape::Box(Vec3::new(
                    rng.random_range(0.15..1.0),
                    rng.random_range(0.15..1.0),
                    rng.random_range(0.15..1.0),
                ))
            }
        };
        let pose = |rng: &mut rand_chacha::ChaCha8Rng, reach: f32| {
            let axis = Vec3::new(
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
            )
            .normalize_or(Vec3::X);
            Pose::new(
                Quat::from_axis_angle(axis, rng.random_range(0.0..std::f32::consts::TAU)),
                Vec3::new(
                    rng.random_range(-reach..reach),
                    rng.random_range(-reach..reach),
                    rng.random_range(-reach..reach),
                ),
            )
        };
        let (mut asserted, mut positive, mut skipped) = (0, 0, 0);
        for case in 0..80 {
            let (sa, sb) = (shape(&mut rng), shape(&mut rng));
            let (pa, pb) = (pose(&mut rng, 0.2), pose(&mut rng, 1.4));
            let objects = [object(&sa.mesh(0.0), &pa), object(&sb.mesh(0.0), &pb)];
            // Pixel size: the view spans at most the union of the two boxes (< 4.5 units here).
            let delta = 3.0 * 4.5 / RESOLUTION as f32;
            let shrunk = cpu_interferes(&sa.mesh(-delta), &pa, &sb.mesh(-delta), &pb);
            let grown = cpu_interferes(&sa.mesh(delta), &pa, &sb.mesh(delta), &pb);
            let exact = cpu_interferes(&sa.mesh(0.0), &pa, &sb.mesh(0.0), &pb);
            let gpu = cinder
                .interfering_pairs(&ctx, &objects, RESOLUTION)
                .unwrap();
            if shrunk != grown {
                skipped += 1;
                continue;
            }
            assert_eq!(exact, shrunk, "case {case}: oracle consistency");
            assert_eq!(
                gpu,
                if exact { vec![(0, 1)] } else { vec![] },
                "case {case}"
            );
            asserted += 1;
            positive += exact as usize;
        }
        let _ = writeln!(
            std::io::stderr(),
            "cinder random: {asserted} asserted ({positive} interfering), {skipped} within 3 px"
        );
        assert!(asserted >= 60, "too few decisive cases: {asserted}");
        assert!(
            positive >= 15 && asserted - positive >= 15,
            "{positive} of {asserted}"
        );
    }

    #[test]
    fn cinder_grid_of_boxes_finds_the_overlapping_pairs() {
        let Some(ctx) = gpu_or_skip("cinder_grid_of_boxes_finds_the_overlapping_pairs") else {
            return;
        };
        let cinder = Cinder::new(&ctx);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(99);
        let cube = shapes::cuboid(Vec3::splat(0.3)).unwrap().mesh().clone();
        let mut poses: Vec<Pose> = (0..100)
            .map(|k| {
                // Small tilts about every axis and a z jitter: boxes that are only spun about z
                // share their top and bottom planes and penetrate only along z-parallel edges,
                // which a view along z cannot see (see the module documentation).
                let mut angle = || rng.random_range(-0.1..0.1);
                let tilt = Quat::from_euler(EulerRot::XYZ, angle(), angle(), angle());
                let z = rng.random_range(-0.05..0.05);
                Pose::new(tilt, Vec3::new((k % 10) as f32, (k / 10) as f32, z))
            })
            .collect();
        // Overlaps made on purpose: sideways, diagonally, and stacked along the view axis.
        poses[12].translation += Vec3::new(0.55, 0.0, 0.1);
        poses[45].translation += Vec3::new(0.0, 0.6, -0.2);
        poses[77].translation += Vec3::new(0.75, 0.75, 0.0); // meets 88 only
        poses.push(Pose::from_translation(Vec3::new(3.0, 3.0, 0.45))); // 100 on top of 33
        poses.push(Pose::from_translation(Vec3::new(6.0, 6.0, 0.8))); // 101 just above 66
        let objects: Vec<CinderObject> = poses.iter().map(|p| object(&cube, p)).collect();
        let mut expected = BTreeSet::new();
        let mut box_overlaps = 0;
        for i in 0..poses.len() {
            for j in i + 1..poses.len() {
                if !cube
                    .aabb_under(&poses[i])
                    .overlaps(&cube.aabb_under(&poses[j]))
                {
                    continue;
                }
                box_overlaps += 1;
                if cpu_interferes(&cube, &poses[i], &cube, &poses[j]) {
                    expected.insert((i, j));
                }
            }
        }
        let expected: Vec<(usize, usize)> = expected.into_iter().collect();
        assert_eq!(expected, vec![(12, 13), (33, 100), (45, 55), (77, 88)]);
        let start = std::time::Instant::now();
        let report = cinder.detect(&ctx, &objects, RESOLUTION).unwrap();
        let _ = writeln!(
            std::io::stderr(),
            "cinder grid: {} objects, {} ordered tests at {RESOLUTION}x{RESOLUTION} in {:?} on {}",
            objects.len(),
            report.tests,
            start.elapsed(),
            ctx.adapter.name
        );
        assert_eq!(report.pairs, expected, "{report:?}");
        assert_eq!(report.tests, 2 * box_overlaps, "bounding-box prefilter");
        assert!(report.negative.is_empty());
    }
}

// Complete GPU traversal: leaf triangle tests, palettes, entrance level, brute-force kernel.
#[path = "gpu/bvh.rs"]
mod bvh_complete;
#[path = "gpu/cinder.rs"]
mod cinder_ext;
#[path = "gpu/step_job.rs"]
mod step_job;
#[path = "gpu/volume.rs"]
mod volume;

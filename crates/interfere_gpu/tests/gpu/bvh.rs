//! The complete GPU traversal (Greß–Zachmann 2004, sections 3–5): leaf triangle tests on the
//! GPU, palettes of object pairs, the entrance level and the brute-force kernel, against the
//! exact CPU sets (interfere_geometry's brute force, exact orient3d) and an f64 triangle distance.

use interfere_geometry::bvh::BalancedTree;
use interfere_geometry::bvh::bfs::EntranceUse;
use interfere_geometry::glam::{DMat3, DVec3, Quat, Vec3};
use interfere_geometry::{DPose, Pose, TriMesh, all_pairs_brute, shapes, triangles_intersect};
use interfere_gpu::testing::gpu_or_skip;
use interfere_gpu::tri_tri::distance_bound;
use interfere_gpu::{
    GpuBruteForce, GpuContext, GpuEntranceLevel, GpuError, GpuMeshSet, GpuTriangleTraversal,
    ObjectPair, TrianglePairs,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeSet;

// ---- f64 triangle distance (the oracle for the extras) -------------------------------------

fn closest_on_segment(p: DVec3, a: DVec3, b: DVec3) -> DVec3 {
    let e = b - a;
    let ee = e.dot(e);
    if ee == 0.0 {
        return a;
    }
    a + e * ((p - a).dot(e) / ee).clamp(0.0, 1.0)
}

fn point_triangle(p: DVec3, t: [DVec3; 3]) -> f64 {
    let edges = (0..3)
        .map(|i| (p - closest_on_segment(p, t[i], t[(i + 1) % 3])).length())
        .fold(f64::INFINITY, f64::min);
    let n = (t[1] - t[0]).cross(t[2] - t[0]);
    if n.length_squared() == 0.0 {
        return edges;
    }
    let inside = (0..3).all(|i| (t[(i + 1) % 3] - t[i]).cross(p - t[i]).dot(n) >= 0.0);
    if inside {
        ((p - t[0]).dot(n) / n.length()).abs()
    } else {
        edges
    }
}

/// Distance of segments p0p1 and q0q1 (Ericson, Real-Time Collision Detection 5.1.9).
fn segment_segment(p0: DVec3, p1: DVec3, q0: DVec3, q1: DVec3) -> f64 {
    let (d1, d2, r) = (p1 - p0, q1 - q0, p0 - q0);
    let (a, e, f) = (d1.dot(d1), d2.dot(d2), d2.dot(r));
    let (s, t);
    if a == 0.0 && e == 0.0 {
        return r.length();
    }
    if a == 0.0 {
        s = 0.0;
        t = (f / e).clamp(0.0, 1.0);
    } else {
        let c = d1.dot(r);
        if e == 0.0 {
            t = 0.0;
            s = (-c / a).clamp(0.0, 1.0);
        } else {
            let b = d1.dot(d2);
            let denom = a * e - b * b;
            let s0 = if denom > 0.0 {
                ((b * f - c * e) / denom).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let t0 = (b * s0 + f) / e;
            if t0 < 0.0 {
                t = 0.0;
                s = (-c / a).clamp(0.0, 1.0);
            } else if t0 > 1.0 {
                t = 1.0;
                s = ((b - c) / a).clamp(0.0, 1.0);
            } else {
                t = t0;
                s = s0;
            }
        }
    }
    ((p0 + d1 * s) - (q0 + d2 * t)).length()
}

/// Exact-test-aware distance: 0 when the exact test says they intersect, else the f64 distance
/// (the minimum over vertex–triangle and edge–edge distances of two disjoint triangles).
fn triangle_distance(a: [DVec3; 3], b: [DVec3; 3]) -> f64 {
    if triangles_intersect(a, b) {
        return 0.0;
    }
    let mut d = f64::INFINITY;
    for i in 0..3 {
        d = d.min(point_triangle(a[i], b)).min(point_triangle(b[i], a));
        for j in 0..3 {
            d = d.min(segment_segment(a[i], a[(i + 1) % 3], b[j], b[(j + 1) % 3]));
        }
    }
    d
}

#[test]
fn triangle_distance_oracle_hand_values() {
    let t = |a: [f64; 9]| {
        [
            DVec3::new(a[0], a[1], a[2]),
            DVec3::new(a[3], a[4], a[5]),
            DVec3::new(a[6], a[7], a[8]),
        ]
    };
    let base = t([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
    // Parallel plane above the face: distance 0.5.
    let above = t([0.1, 0.1, 0.5, 0.3, 0.1, 0.5, 0.1, 0.3, 0.5]);
    assert!((triangle_distance(base, above) - 0.5).abs() < 1e-15);
    // Edge to edge, skew: x-axis edge vs a segment along y at height 2 over x = 0.5.
    let skew = t([0.5, -1.0, 2.0, 0.5, -2.0, 2.0, 0.5, -1.0, 3.0]);
    assert!((triangle_distance(base, skew) - 5f64.sqrt()).abs() < 1e-12);
    // Vertex to vertex across the origin.
    let opposite = t([-1.0, -1.0, 0.0, -2.0, -1.0, 0.0, -1.0, -2.0, 0.0]);
    assert!((triangle_distance(base, opposite) - 2f64.sqrt()).abs() < 1e-15);
    // Crossing triangles: zero.
    let crossing = t([0.2, 0.2, -1.0, 0.2, 0.2, 1.0, 0.3, 0.25, 1.0]);
    assert_eq!(triangle_distance(base, crossing), 0.0);
}

// ---- helpers ---------------------------------------------------------------------------------

fn random_pose(rng: &mut ChaCha8Rng, reach: f32) -> DPose {
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

struct Kernels {
    ctx: GpuContext,
    traversal: GpuTriangleTraversal,
    brute: GpuBruteForce,
}

fn kernels(test: &str) -> Option<Kernels> {
    let ctx = gpu_or_skip(test)?;
    Some(Kernels {
        traversal: GpuTriangleTraversal::new(&ctx),
        brute: GpuBruteForce::new(&ctx),
        ctx,
    })
}

fn upload(k: &Kernels, meshes: &[TriMesh]) -> GpuMeshSet {
    let trees: Vec<BalancedTree> = meshes.iter().map(BalancedTree::build).collect();
    let inputs: Vec<(&TriMesh, &BalancedTree)> = meshes.iter().zip(&trees).collect();
    GpuMeshSet::upload(&k.ctx, &inputs).expect("upload")
}

#[derive(Default, Debug)]
struct Tally {
    exact: usize,
    extras: usize,
    worst_ratio: f64,
}

/// Checks one object pair's reported pairs against the exact CPU set: nothing missing, every
/// extra rejected by the exact test and within the stated distance bound.
fn check_pair(
    a: &TriMesh,
    b: &TriMesh,
    pose: &DPose,
    got: &[(u32, u32)],
    label: &str,
    tally: &mut Tally,
) {
    assert!(got.is_sorted(), "{label}: sorted");
    let gpu: BTreeSet<(u32, u32)> = got.iter().copied().collect();
    assert_eq!(gpu.len(), got.len(), "{label}: no duplicates");
    let exact = all_pairs_brute(a, b, pose);
    for p in &exact {
        assert!(
            gpu.contains(p),
            "{label}: exact pair {p:?} missed on the GPU"
        );
    }
    let exact: BTreeSet<(u32, u32)> = exact.into_iter().collect();
    for &(i, j) in gpu.difference(&exact) {
        let (ta, tb) = (a.triangle(i as usize), b.triangle(j as usize));
        let da = ta.map(|v| v.as_dvec3());
        let db = tb.map(|v| pose.transform_point(v));
        let d = triangle_distance(da, db);
        let bound = distance_bound(ta, tb, pose);
        assert!(
            d > 0.0,
            "{label}: ({i}, {j}) is exact but not in the exact set"
        );
        assert!(
            d <= bound,
            "{label}: extra ({i}, {j}) at distance {d:e} > bound {bound:e}"
        );
        tally.worst_ratio = tally.worst_ratio.max(d / bound);
        tally.extras += 1;
    }
    tally.exact += exact.len();
}

/// Runs a palette through the traversal (once together, once per pair) and the brute-force
/// kernel, checks all against the exact sets; returns the traversal result.
fn check_palette(
    k: &Kernels,
    meshes: &[TriMesh],
    pairs: &[ObjectPair],
    brute: bool,
    label: &str,
    tally: &mut Tally,
) -> TrianglePairs {
    let set = upload(k, meshes);
    let out = k
        .traversal
        .triangle_pairs(&k.ctx, &set, pairs, 1 << 22, None)
        .expect("GPU traversal");
    assert!(out.pairs.is_sorted(), "{label}: sorted by object pair");
    for (idx, p) in pairs.iter().enumerate() {
        let l = format!("{label} / object pair {idx}");
        let got = out.of(idx as u32);
        check_pair(
            &meshes[p.a as usize],
            &meshes[p.b as usize],
            &p.b_to_a,
            &got,
            &l,
            tally,
        );
        let alone = k
            .traversal
            .triangle_pairs(&k.ctx, &set, std::slice::from_ref(p), 1 << 22, None)
            .expect("single run");
        assert_eq!(alone.of(0), got, "{l}: palette differs from a separate run");
    }
    if brute {
        let b = k
            .brute
            .triangle_pairs(&k.ctx, &set, pairs, 1 << 22)
            .expect("GPU brute force");
        assert_eq!(
            b.pairs, out.pairs,
            "{label}: brute-force kernel differs from the BVH path"
        );
    }
    out
}

// ---- parity tests ----------------------------------------------------------------------------

#[test]
fn gpu_triangle_pairs_match_exact_on_random_poses() {
    let Some(k) = kernels("gpu_triangle_pairs_match_exact_on_random_poses") else {
        return;
    };
    let meshes = vec![
        shapes::icosphere(1.0, 2).unwrap().into_mesh(),
        shapes::torus(1.0, 0.35, 24, 10).unwrap().into_mesh(),
        shapes::bumpy_sphere(1.0, 0.3, 4.0, 2, 5)
            .unwrap()
            .into_mesh(),
        shapes::cuboid(Vec3::new(0.8, 0.5, 1.2))
            .unwrap()
            .into_mesh(),
        shapes::subdivided_cuboid(Vec3::new(0.7, 0.9, 0.6), 4)
            .unwrap()
            .into_mesh(),
    ];
    let mut rng = ChaCha8Rng::seed_from_u64(2004);
    let mut tally = Tally::default();
    for round in 0..3 {
        // One palette of 8 random object pairs per round (self pairs included).
        let pairs: Vec<ObjectPair> = (0..8)
            .map(|_| ObjectPair {
                a: rng.random_range(0..meshes.len() as u32),
                b: rng.random_range(0..meshes.len() as u32),
                b_to_a: random_pose(&mut rng, 1.5),
            })
            .collect();
        check_palette(
            &k,
            &meshes,
            &pairs,
            round == 0,
            &format!("round {round}"),
            &mut tally,
        );
    }
    eprintln!("random poses: {tally:?}");
    assert!(
        tally.exact > 100,
        "the poses must produce contacts: {tally:?}"
    );
}

/// Single-triangle meshes: touching at a vertex, along an edge, coplanar overlap, 1-ulp near
/// misses, crossing, degenerate, all in one palette.
#[test]
fn gpu_triangle_test_adversarial_triangle_pairs() {
    let Some(k) = kernels("gpu_triangle_test_adversarial_triangle_pairs") else {
        return;
    };
    let tri = |p: [[f32; 3]; 3]| {
        TriMesh::new(p.map(Vec3::from).to_vec(), vec![[0, 1, 2]]).expect("triangle")
    };
    let up = |x: f32| f32::from_bits(x.to_bits() + 1);
    let base = tri([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]);
    let others = vec![
        // Vertex on the face.
        tri([[0.25, 0.25, 0.0], [0.3, 0.2, 1.0], [0.2, 0.4, 1.0]]),
        // Vertex one ulp above the face.
        tri([[0.25, 0.25, up(0.0)], [0.3, 0.2, 1.0], [0.2, 0.4, 1.0]]),
        // Shared edge, folded.
        tri([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.5, -0.5, 0.7]]),
        // Coplanar overlapping.
        tri([[0.2, 0.2, 0.0], [1.2, 0.2, 0.0], [0.2, 1.2, 0.0]]),
        // Coplanar touching at the hypotenuse midpoint.
        tri([[0.5, 0.5, 0.0], [1.0, 1.0, 0.0], [1.5, 0.2, 0.0]]),
        // Coplanar, one ulp past the hypotenuse.
        tri([[up(0.5), up(0.5), 0.0], [1.0, 1.0, 0.0], [1.5, 0.6, 0.0]]),
        // Piercing through the interior.
        tri([[0.2, 0.2, -1.0], [0.25, 0.2, 1.0], [0.2, 0.25, 1.0]]),
        // Degenerate (a segment) crossing the face.
        tri([[0.3, 0.3, -1.0], [0.3, 0.3, 1.0], [0.3, 0.3, 0.0]]),
        // Clearly apart.
        tri([[3.0, 3.0, 3.0], [4.0, 3.0, 3.0], [3.0, 4.0, 3.0]]),
        // Parallel edges 1e-6 apart.
        tri([[0.0, -1e-6, 0.0], [1.0, -1e-6, 0.0], [0.5, -1.0, 0.0]]),
    ];
    let mut meshes = vec![base];
    meshes.extend(others);
    let pairs: Vec<ObjectPair> = (1..meshes.len() as u32)
        .map(|b| ObjectPair {
            a: 0,
            b,
            b_to_a: DPose::IDENTITY,
        })
        .collect();
    let mut tally = Tally::default();
    let out = check_palette(&k, &meshes, &pairs, true, "triangle pairs", &mut tally);
    eprintln!("adversarial triangle pairs: {tally:?}");
    // The exact hits are all reported; the clearly separated pair is not.
    assert!(out.of(8).is_empty(), "separated triangles reported");
    for touching in [0u32, 2, 3, 4, 6, 7] {
        assert_eq!(out.of(touching), vec![(0, 0)], "pair {touching}");
    }
}

#[test]
fn gpu_triangle_pairs_adversarial_scenes() {
    let Some(k) = kernels("gpu_triangle_pairs_adversarial_scenes") else {
        return;
    };
    let cube = shapes::subdivided_cuboid(Vec3::ONE, 3).unwrap().into_mesh();
    let sphere = shapes::icosphere(1.0, 2).unwrap().into_mesh();
    let small = shapes::icosphere(0.3, 2).unwrap().into_mesh();
    let bumpy = shapes::bumpy_sphere(1.0, 0.3, 4.0, 2, 9).unwrap();
    let far = Vec3::new(1.0e4, -2.0e4, 5.0e3);
    let bumpy_far = TriMesh::new(
        bumpy.vertices().iter().map(|&v| v + far).collect(),
        bumpy.triangles().to_vec(),
    )
    .expect("mesh");
    let meshes = vec![cube, sphere, small, bumpy_far, bumpy.into_mesh()];
    let pose = |r: DMat3, t: DVec3| DPose {
        rotation: r,
        translation: t,
    };
    let id = DMat3::IDENTITY;
    let pairs = vec![
        // Face to face touching (coplanar faces, shared grid lines).
        ObjectPair {
            a: 0,
            b: 0,
            b_to_a: pose(id, DVec3::new(2.0, 0.0, 0.0)),
        },
        // Offset by half a grid cell in the touching plane.
        ObjectPair {
            a: 0,
            b: 0,
            b_to_a: pose(id, DVec3::new(2.0, 1.0 / 3.0, 0.25)),
        },
        // Edge to edge touching.
        ObjectPair {
            a: 0,
            b: 0,
            b_to_a: pose(id, DVec3::new(2.0, 2.0, 0.0)),
        },
        // Nested: small sphere inside the big one (no triangle pair), and inside the cube.
        ObjectPair {
            a: 1,
            b: 2,
            b_to_a: pose(id, DVec3::new(0.1, 0.0, 0.0)),
        },
        ObjectPair {
            a: 0,
            b: 2,
            b_to_a: DPose::IDENTITY,
        },
        // Sphere through the cube's face.
        ObjectPair {
            a: 0,
            b: 1,
            b_to_a: pose(DMat3::from_rotation_y(0.3), DVec3::new(1.5, 0.2, 0.0)),
        },
        // Large translation: B is the same blob at the origin placed far away, slightly turned.
        ObjectPair {
            a: 3,
            b: 4,
            b_to_a: pose(
                DMat3::from_rotation_z(0.02),
                far.as_dvec3() + DVec3::new(0.3, 0.0, 0.0),
            ),
        },
        // Identical placement of a mesh on itself (every adjacent pair touches).
        ObjectPair {
            a: 1,
            b: 1,
            b_to_a: DPose::IDENTITY,
        },
    ];
    let mut tally = Tally::default();
    let out = check_palette(&k, &meshes, &pairs, true, "adversarial scenes", &mut tally);
    eprintln!(
        "adversarial scenes: {tally:?}, list lengths {:?}",
        out.list_lengths
    );
    assert!(
        !out.of(0).is_empty() && !out.of(2).is_empty(),
        "touching cubes must be reported"
    );
    assert!(out.of(3).is_empty(), "nested spheres have no triangle pair");
}

#[test]
fn gpu_entrance_level_equals_root_start() {
    let Some(k) = kernels("gpu_entrance_level_equals_root_start") else {
        return;
    };
    let meshes = vec![
        shapes::bumpy_sphere(1.0, 0.3, 4.0, 2, 3)
            .unwrap()
            .into_mesh(),
        shapes::torus(1.0, 0.35, 24, 10).unwrap().into_mesh(),
    ];
    let set = upload(&k, &meshes);
    let mut entrance = GpuEntranceLevel::fixed(3, 0.05);
    let (mut reused, mut recorded) = (0, 0);
    let mut rng = ChaCha8Rng::seed_from_u64(55);
    let mut poses = [random_pose(&mut rng, 0.8), random_pose(&mut rng, 0.8)];
    for frame in 0..40 {
        // Small motion each frame; a teleport every 13 frames.
        for p in &mut poses {
            if frame % 13 == 12 {
                *p = random_pose(&mut rng, 0.8);
            } else {
                let turn = DMat3::from_axis_angle(DVec3::new(0.3, 1.0, -0.2).normalize(), 0.004);
                p.rotation = turn * p.rotation;
                p.translation += DVec3::new(0.003, -0.002, 0.001);
            }
        }
        let pairs = [
            ObjectPair {
                a: 0,
                b: 1,
                b_to_a: poses[0],
            },
            ObjectPair {
                a: 1,
                b: 0,
                b_to_a: poses[1],
            },
        ];
        let with = k
            .traversal
            .triangle_pairs(&k.ctx, &set, &pairs, 1 << 22, Some(&mut entrance))
            .expect("with entrance");
        let root = k
            .traversal
            .triangle_pairs(&k.ctx, &set, &pairs, 1 << 22, None)
            .expect("from the roots");
        assert_eq!(
            with.pairs, root.pairs,
            "frame {frame}: entrance level changed the result"
        );
        match with.entrance {
            EntranceUse::Reused { step } => {
                reused += 1;
                assert_eq!(step, 3);
                assert_eq!(with.list_lengths.len() + 3, root.list_lengths.len());
            }
            EntranceUse::Recorded { .. } => recorded += 1,
            EntranceUse::Off => panic!("entrance level not used"),
        }
    }
    eprintln!("entrance level: {reused} reused, {recorded} recorded");
    assert!(
        reused >= 20 && recorded >= 3,
        "{reused} reused, {recorded} recorded"
    );
}

#[test]
fn gpu_triangle_query_errors_are_typed() {
    let Some(k) = kernels("gpu_triangle_query_errors_are_typed") else {
        return;
    };
    let meshes = vec![shapes::icosphere(1.0, 2).unwrap().into_mesh()];
    let set = upload(&k, &meshes);
    let touching = ObjectPair {
        a: 0,
        b: 0,
        b_to_a: DPose::IDENTITY,
    };
    match k
        .traversal
        .triangle_pairs(&k.ctx, &set, &[touching], 50, None)
    {
        Err(GpuError::PairListOverflow {
            capacity: 50,
            needed,
            ..
        }) => assert!(needed > 50),
        other => panic!("expected an overflow, got {other:?}"),
    }
    match k.brute.triangle_pairs(&k.ctx, &set, &[touching], 50) {
        Err(GpuError::PairListOverflow {
            capacity: 50,
            needed,
            ..
        }) => assert!(needed > 50),
        other => panic!("expected an overflow, got {other:?}"),
    }
    let bad_mesh = ObjectPair {
        a: 0,
        b: 3,
        ..touching
    };
    assert!(matches!(
        k.traversal
            .triangle_pairs(&k.ctx, &set, &[bad_mesh], 1 << 20, None),
        Err(GpuError::InvalidInput { .. })
    ));
    let mut nan = touching;
    nan.b_to_a.translation.x = f64::NAN;
    assert!(matches!(
        k.brute.triangle_pairs(&k.ctx, &set, &[nan], 1 << 20),
        Err(GpuError::InvalidInput { .. })
    ));
    let mut huge = touching;
    huge.b_to_a.translation.y = 1e300;
    assert!(matches!(
        k.traversal
            .triangle_pairs(&k.ctx, &set, &[huge], 1 << 20, None),
        Err(GpuError::InvalidInput { .. })
    ));
    // A tree that does not belong to the mesh.
    let other = shapes::icosphere(1.0, 1).unwrap().into_mesh();
    let tree = BalancedTree::build(&other);
    assert!(matches!(
        GpuMeshSet::upload(&k.ctx, &[(&meshes[0], &tree)]),
        Err(GpuError::InvalidInput { .. })
    ));
    // Empty palette: nothing, no error. Growing buffers: a large hit count still comes back.
    let empty = k
        .traversal
        .triangle_pairs(&k.ctx, &set, &[], 10, None)
        .expect("empty");
    assert!(empty.pairs.is_empty());
    let big = k
        .brute
        .triangle_pairs(&k.ctx, &set, &[touching; 3], 1 << 20)
        .expect("brute");
    assert_eq!(
        big.pairs.len(),
        3 * all_pairs_brute(&meshes[0], &meshes[0], &DPose::IDENTITY).len()
    );
}

#[test]
fn gpu_kernel_timings_follow_the_adapter() {
    let Some(k) = kernels("gpu_kernel_timings_follow_the_adapter") else {
        return;
    };
    let meshes = vec![shapes::icosphere(1.0, 2).unwrap().into_mesh()];
    let set = upload(&k, &meshes);
    let pair = ObjectPair {
        a: 0,
        b: 0,
        b_to_a: DPose {
            rotation: DMat3::from_rotation_x(0.5),
            translation: DVec3::new(0.5, 0.0, 0.0),
        },
    };
    let out = k
        .traversal
        .triangle_pairs(&k.ctx, &set, &[pair], 1 << 20, None)
        .expect("run");
    let features = k.ctx.device.features();
    eprintln!(
        "adapter {}: TIMESTAMP_QUERY {}, INSIDE_ENCODERS {}; timings {:?}",
        k.ctx.adapter,
        features.contains(wgpu::Features::TIMESTAMP_QUERY),
        features.contains(wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS),
        out.timings
    );
    assert_eq!(
        out.timings.kernels.is_some(),
        features.contains(wgpu::Features::TIMESTAMP_QUERY)
    );
    assert_eq!(out.timings.steps as usize, out.list_lengths.len());
    // All steps go to the GPU in one submission with one readback (the lists fit the first
    // capacities here, so there is no second round).
    assert!(out.timings.steps > 1);
    assert_eq!(out.timings.round_trips, 1);
    assert!(out.timings.wall >= out.timings.readback);
    if let Some(kt) = out.timings.kernels {
        assert!(kt.test > std::time::Duration::ZERO, "{kt:?}");
        assert_eq!(
            kt.scan.is_some(),
            features.contains(wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS)
        );
    }
}

/// `cargo test -p interfere_gpu --release --locked --test gpu -- --ignored --nocapture bunny_tumble`
#[test]
#[ignore = "benchmark: run in release"]
fn bunny_tumble_gpu_vs_cpu_obbtree() {
    use interfere_geometry::{MeshOptions, MeshQueries, Method};
    use std::time::{Duration, Instant};
    let Some(k) = kernels("bunny_tumble_gpu_vs_cpu_obbtree") else {
        return;
    };
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/meshes/bunny25k.obj");
    let path = if path.exists() {
        path
    } else {
        "/work/shared/meshes/bunny25k.obj".into()
    };
    let mesh = interfere_geometry::io::load_mesh(&path, &MeshOptions::default())
        .expect("bunny25k")
        .normalized_to_unit_cube();
    let collider = MeshQueries::new(mesh.clone());
    collider.prepare(Method::Obb);
    let set = upload(&k, std::slice::from_ref(&mesh));
    let tumble = |d: f64, i: usize, n: usize| {
        let golden = (1.0 + 5f64.sqrt()) / 2.0;
        let alpha = std::f64::consts::TAU * i as f64 / n as f64;
        let beta = std::f64::consts::TAU * (i as f64 * golden).fract();
        DPose {
            rotation: DMat3::from_rotation_x(beta) * DMat3::from_rotation_z(alpha),
            translation: DVec3::new(d, 0.0, 0.0),
        }
    };
    let steps = 20;
    // Warm-up: the software driver compiles the pipelines on first use.
    let warm = ObjectPair {
        a: 0,
        b: 0,
        b_to_a: tumble(0.5, 1, steps),
    };
    k.traversal
        .triangle_pairs(&k.ctx, &set, &[warm], 1 << 26, None)
        .expect("warm-up");
    println!(
        "adapter: {}  (bunny25k, {} triangles, {steps} tumble poses per distance)",
        k.ctx.adapter,
        mesh.triangle_count()
    );
    println!(
        "{:>5} {:>8} {:>9} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11}",
        "d",
        "pairs",
        "gpu extra",
        "cpu obb ms",
        "gpu e2e ms",
        "gpu+exact",
        "kern test",
        "kern scan",
        "kern scat"
    );
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    for d in [1.0, 0.75, 0.5, 0.25, 0.0] {
        let (mut cpu, mut gpu, mut gpu_exact) = (Duration::ZERO, Duration::ZERO, Duration::ZERO);
        let (mut kt, mut ks, mut kc) = (Duration::ZERO, Duration::ZERO, Duration::ZERO);
        let (mut pairs, mut extras) = (0, 0);
        let mut have_kernels = true;
        for i in 0..steps {
            let pose = tumble(d, i, steps);
            let t = Instant::now();
            let exact = collider
                .all_pairs(&collider, &pose, Method::Obb)
                .expect("obb");
            cpu += t.elapsed();
            let t = Instant::now();
            let out = k
                .traversal
                .triangle_pairs(
                    &k.ctx,
                    &set,
                    &[ObjectPair {
                        a: 0,
                        b: 0,
                        b_to_a: pose,
                    }],
                    1 << 26,
                    None,
                )
                .expect("gpu");
            gpu += t.elapsed();
            let got = out.of(0);
            let filtered = interfere_gpu::tri_tri::exact_filter(&mesh, &mesh, &pose, &got);
            gpu_exact += t.elapsed();
            assert_eq!(filtered, exact, "d={d} step {i}");
            pairs += exact.len();
            extras += got.len() - exact.len();
            match out.timings.kernels {
                Some(x) => {
                    kt += x.test;
                    ks += x.scan.unwrap_or_default();
                    kc += x.scatter;
                }
                None => have_kernels = false,
            }
        }
        let n = steps as f64;
        let kern = |x: Duration| {
            if have_kernels {
                format!("{:.3}", ms(x) / n)
            } else {
                "n/a".into()
            }
        };
        println!(
            "{d:>5} {:>8.1} {:>9.1} {:>11.3} {:>11.3} {:>11.3} {:>11} {:>11} {:>11}",
            pairs as f64 / n,
            extras as f64 / n,
            ms(cpu) / n,
            ms(gpu) / n,
            ms(gpu_exact) / n,
            kern(kt),
            kern(ks),
            kern(kc)
        );
    }
}

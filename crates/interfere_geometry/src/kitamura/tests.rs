//! Oracle tests for the Kitamura et al. 1995 colliding-face pipeline.

use super::*;
use crate::shapes::{cuboid, icosphere};
use crate::tri_tri::{
    orient3d_sign, point_in_triangle, segment_intersects_triangle, triangles_intersect,
};
use glam::{DMat3, DQuat};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

// ---------------------------------------------------------------------------------------------
// Exact oracle for step 4.

// The 20 index triples of six points (a combinatorial table, shared with the code under test).
use super::swept::TRIPLES;

fn point_in_tetra(p: DVec3, t: [DVec3; 4]) -> bool {
    let s = orient3d_sign(t[0], t[1], t[2], t[3]);
    if s == 0 {
        return false;
    }
    (0..4).all(|i| {
        let mut q = t;
        q[i] = p;
        let o = orient3d_sign(q[0], q[1], q[2], q[3]);
        o == 0 || o == s
    })
}

fn point_in_hull(p: DVec3, h: &SweptFace) -> bool {
    TRIPLES
        .iter()
        .any(|t| point_in_triangle(p, t.map(|i| h[i])))
        || (0..6).any(|i| {
            (i + 1..6).any(|j| {
                (j + 1..6).any(|k| (k + 1..6).any(|l| point_in_tetra(p, [h[i], h[j], h[k], h[l]])))
            })
        })
}

/// Exact: two convex hulls intersect iff one contains a point of the other or an edge of one
/// meets a face of the other; all point pairs and triples are a superset of edges and faces.
fn exact_hulls_intersect(a: &SweptFace, b: &SweptFace) -> bool {
    let cross = |x: &SweptFace, y: &SweptFace| {
        (0..6).any(|i| {
            (i..6).any(|j| {
                TRIPLES
                    .iter()
                    .any(|t| segment_intersects_triangle(x[i], x[j], t.map(|k| y[k])))
            })
        })
    };
    cross(a, b)
        || cross(b, a)
        || a.iter().any(|&p| point_in_hull(p, b))
        || b.iter().any(|&p| point_in_hull(p, a))
}

fn rand_vec(rng: &mut ChaCha8Rng, r: f64) -> DVec3 {
    DVec3::new(
        rng.random_range(-r..r),
        rng.random_range(-r..r),
        rng.random_range(-r..r),
    )
}

fn random_swept(rng: &mut ChaCha8Rng, centre: DVec3, size: f64, motion: f64) -> SweptFace {
    let t: [DVec3; 3] = std::array::from_fn(|_| centre + rand_vec(rng, size));
    let m = rand_vec(rng, motion);
    let d = motion * 0.3;
    [
        t[0],
        t[1],
        t[2],
        t[0] + m + rand_vec(rng, d + 1e-12),
        t[1] + m + rand_vec(rng, d + 1e-12),
        t[2] + m + rand_vec(rng, d + 1e-12),
    ]
}

#[test]
fn swept_test_equals_exact_oracle_on_random_cases() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let (mut hits, mut misses) = (0, 0);
    for _ in 0..400 {
        let a = random_swept(&mut rng, DVec3::ZERO, 1.0, 1.0);
        let c = rand_vec(&mut rng, 1.6);
        let b = random_swept(&mut rng, c, 1.0, 1.0);
        let exact = exact_hulls_intersect(&a, &b);
        assert_eq!(swept_faces_intersect(&a, &b), exact, "{a:?} {b:?}");
        assert_eq!(swept_faces_intersect(&b, &a), exact);
        if exact {
            hits += 1;
        } else {
            misses += 1;
        }
    }
    assert!(hits > 50 && misses > 50, "{hits} {misses}");
}

fn static_face(t: [DVec3; 3]) -> SweptFace {
    [t[0], t[1], t[2], t[0], t[1], t[2]]
}

#[test]
fn swept_test_adversarial_cases() {
    let x = DVec3::X;
    let y = DVec3::Y;
    let z = DVec3::Z;
    let o = DVec3::ZERO;
    let tri = [o, x, y];
    let cases: Vec<(SweptFace, SweptFace, bool)> = vec![
        // Touching at a shared vertex.
        (static_face(tri), static_face([x, x + y, x + z]), true),
        // Coplanar, separated in the plane only (needs in-plane axes).
        (
            static_face(tri),
            static_face([x + y, x * 2.0 + y, x + y * 2.0]),
            false,
        ),
        // Coplanar, touching along an edge.
        (static_face(tri), static_face([x, y, x + y]), true),
        // Coplanar, overlapping.
        (
            static_face(tri),
            static_face([x * 0.2 + y * 0.2, x * 2.0, y * 2.0]),
            true,
        ),
        // Parallel planes, tiny gap (far above rounding).
        (
            static_face(tri),
            static_face([z * 1e-9, x + z * 1e-9, y + z * 1e-9]),
            false,
        ),
        // Identical faces.
        (static_face(tri), static_face(tri), true),
        // Small static face nested in a large swept hull.
        (
            [
                o,
                x * 4.0,
                y * 4.0,
                z * 4.0,
                x * 4.0 + z * 4.0,
                y * 4.0 + z * 4.0,
            ],
            static_face([x * 0.5 + z, x * 0.6 + z, x * 0.5 + y * 0.1 + z]),
            true,
        ),
        // Degenerate (collinear) static face touching a triangle.
        (
            static_face([o, x, x * 2.0]),
            static_face([x, x + y, x + z]),
            true,
        ),
        // Degenerate face a point, away from the triangle.
        (static_face([z, z, z]), static_face(tri), false),
        // Fast face passing through another: each instant far, hull crosses.
        (
            [
                x * -5.0,
                x * -5.0 + y,
                x * -5.0 + z,
                x * 5.0,
                x * 5.0 + y,
                x * 5.0 + z,
            ],
            static_face(
                [y * 0.2 + z * 0.2, y * 0.3 + z * 0.2, y * 0.2 + z * 0.3]
                    .map(|p| p - DVec3::new(0.0, 0.0, 0.0)),
            ),
            true,
        ),
    ];
    for (i, (a, b, want)) in cases.iter().enumerate() {
        assert_eq!(exact_hulls_intersect(a, b), *want, "oracle case {i}");
        assert_eq!(swept_faces_intersect(a, b), *want, "case {i}");
        assert_eq!(swept_faces_intersect(b, a), *want, "case {i} swapped");
    }
    // Non-finite input is reported as colliding (conservative).
    let mut bad = static_face(tri);
    bad[4] = DVec3::NAN;
    assert!(swept_faces_intersect(
        &bad,
        &static_face([z * 9.0, z * 9.0 + x, z * 9.0 + y])
    ));
}

#[test]
fn swept_test_is_conservative_at_huge_coordinates() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let off = DVec3::new(1e9, -3e9, 2e9);
    let mut agree = 0;
    for _ in 0..200 {
        let a = random_swept(&mut rng, off, 1.0, 0.5);
        let c = off + rand_vec(&mut rng, 2.0);
        let b = random_swept(&mut rng, c, 1.0, 0.5);
        let exact = exact_hulls_intersect(&a, &b);
        let fast = swept_faces_intersect(&a, &b);
        assert!(!exact || fast, "missed an exact intersection: {a:?} {b:?}");
        agree += usize::from(exact == fast);
    }
    // Rounding slack at 1e9 is ~1e-6, far below the random gaps: nearly all agree.
    assert!(agree >= 195, "{agree}");
}

// ---------------------------------------------------------------------------------------------
// Scenes.

fn random_rotation(rng: &mut ChaCha8Rng) -> DMat3 {
    let q = DQuat::from_xyzw(
        rng.random_range(-1.0..1.0),
        rng.random_range(-1.0..1.0),
        rng.random_range(-1.0..1.0),
        rng.random_range(-1.0..1.0),
    );
    let q = if q.length() > 1e-3 {
        q.normalize()
    } else {
        DQuat::IDENTITY
    };
    DMat3::from_quat(q)
}

/// `n` small objects near the origin, each moving (and, when `deform`, every vertex jittered
/// independently at `t_{i+1}`).
fn random_scene(rng: &mut ChaCha8Rng, n: usize, deform: bool) -> Vec<MovingMesh> {
    let shapes = [
        icosphere(0.5, 1).unwrap(),
        cuboid(Vec3::new(0.6, 0.3, 0.15)).unwrap(),
    ];
    (0..n)
        .map(|k| {
            let mesh = &shapes[k % shapes.len()];
            let p0 = DPose {
                rotation: random_rotation(rng),
                translation: rand_vec(rng, 0.6),
            };
            let p1 = DPose {
                rotation: p0.rotation * DMat3::from_rotation_x(rng.random_range(-0.3..0.3)),
                translation: p0.translation + rand_vec(rng, 0.3),
            };
            let m = MovingMesh::from_poses(mesh, &p0, &p1).unwrap();
            if !deform {
                return m;
            }
            let after = m.after().iter().map(|&v| v + rand_vec(rng, 0.08)).collect();
            MovingMesh::new(m.triangles().to_vec(), m.before().to_vec(), after).unwrap()
        })
        .collect()
}

use glam::Vec3;

#[test]
fn serial_equals_brute_force_on_random_scenes() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut total = 0;
    for case in 0..12 {
        let objects = random_scene(&mut rng, 3, case % 2 == 1);
        let brute = brute_force(&objects);
        total += brute.len();
        for depth in [0, 1, 3, 5] {
            let d = detect(&objects, &KitamuraConfig { depth }).unwrap();
            let extra: Vec<_> = d
                .colliding
                .iter()
                .filter(|p| brute.binary_search(p).is_err())
                .collect();
            let missed: Vec<_> = brute
                .iter()
                .filter(|p| d.colliding.binary_search(p).is_err())
                .collect();
            assert!(
                extra.is_empty() && missed.is_empty(),
                "case {case} depth {depth}: extra {extra:?} missed {missed:?}"
            );
            assert_eq!(d.colliding, brute);
            assert!(d.candidates >= d.colliding.len());
        }
    }
    assert!(total > 100, "scenes too sparse: {total}");
}

#[test]
fn octree_prunes_candidates() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let objects = random_scene(&mut rng, 2, false);
    let all = objects[0].face_count() * objects[1].face_count();
    let c0 = candidate_pairs(&objects, &KitamuraConfig { depth: 0 }).unwrap();
    let c4 = candidate_pairs(&objects, &KitamuraConfig { depth: 4 }).unwrap();
    assert!(c0.len() <= all);
    assert!(c4.len() <= c0.len());
    // Deeper cells only refine: every deep candidate is a shallow one.
    assert!(c4.iter().all(|p| c0.binary_search(p).is_ok()));
    // Candidates are sorted and distinct.
    assert!(c4.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn parallel_drivers_equal_serial() {
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    for case in 0..6 {
        let objects = random_scene(&mut rng, 4, case % 2 == 0);
        let config = KitamuraConfig { depth: 3 };
        let serial = detect(&objects, &config).unwrap();
        assert!(!serial.colliding.is_empty() || case > 0);
        for threads in [1, 2, 4] {
            assert_eq!(
                detect_static(&objects, &config, threads).unwrap(),
                serial,
                "static {threads}"
            );
            assert_eq!(
                detect_dynamic(&objects, &config, threads).unwrap(),
                serial,
                "dynamic {threads}"
            );
        }
    }
}

fn static_pairs(objects: &[MovingMesh], after: bool) -> Vec<FacePair> {
    let face = |o: &MovingMesh, f: usize| {
        if after {
            o.face_after(f)
        } else {
            o.face_before(f)
        }
        .unwrap()
    };
    let mut out = Vec::new();
    for (i, oi) in objects.iter().enumerate() {
        for (j, oj) in objects.iter().enumerate().skip(i + 1) {
            for fa in 0..oi.face_count() {
                for fb in 0..oj.face_count() {
                    if triangles_intersect(face(oi, fa), face(oj, fb)) {
                        out.push(FacePair {
                            a: FaceRef {
                                object: i as u32,
                                face: fa as u32,
                            },
                            b: FaceRef {
                                object: j as u32,
                                face: fb as u32,
                            },
                        });
                    }
                }
            }
        }
    }
    out
}

#[test]
fn swept_detection_contains_static_intersections() {
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    let mut seen = 0;
    for case in 0..8 {
        let objects = random_scene(&mut rng, 3, case % 2 == 0);
        let d = detect(&objects, &KitamuraConfig { depth: 4 }).unwrap();
        for after in [false, true] {
            for p in static_pairs(&objects, after) {
                seen += 1;
                assert!(
                    d.colliding.binary_search(&p).is_ok(),
                    "case {case}: {p:?} missed"
                );
            }
        }
    }
    assert!(seen > 20, "{seen}");
}

#[test]
fn touching_objects_are_reported() {
    // Two unit cubes sharing a face plane, static: the static test finds touching pairs, so the
    // swept test must too.
    let cube = cuboid(Vec3::splat(0.5)).unwrap();
    let left = DPose::IDENTITY;
    let right = DPose {
        rotation: DMat3::IDENTITY,
        translation: DVec3::X,
    };
    let objects = [
        MovingMesh::from_poses(&cube, &left, &left).unwrap(),
        MovingMesh::from_poses(&cube, &right, &right).unwrap(),
    ];
    let d = detect(&objects, &KitamuraConfig { depth: 6 }).unwrap();
    let stat = static_pairs(&objects, false);
    assert!(!stat.is_empty());
    assert!(stat.iter().all(|p| d.colliding.binary_search(p).is_ok()));
    assert_eq!(d.colliding, brute_force(&objects));
}

#[test]
fn fast_thin_plate_crossing_sphere_is_caught() {
    let sphere = icosphere(1.0, 2).unwrap();
    let plate = cuboid(Vec3::new(0.01, 0.5, 0.5)).unwrap();
    let still = DPose::IDENTITY;
    let at = |x: f64| DPose {
        rotation: DMat3::IDENTITY,
        translation: DVec3::new(x, 0.1, -0.05),
    };
    let objects = [
        MovingMesh::from_poses(&sphere, &still, &still).unwrap(),
        MovingMesh::from_poses(&plate, &at(-2.0), &at(2.0)).unwrap(),
    ];
    assert!(static_pairs(&objects, false).is_empty());
    assert!(static_pairs(&objects, true).is_empty());
    let config = KitamuraConfig { depth: 5 };
    let d = detect(&objects, &config).unwrap();
    assert!(!d.colliding.is_empty(), "tunnelling missed");
    assert_eq!(d.colliding, brute_force(&objects));
    // The plate's large side faces must sweep through faces on both sides of the sphere.
    let xs: Vec<f64> = d
        .colliding
        .iter()
        .map(|p| objects[0].face_before(p.a.face as usize).unwrap()[0].x)
        .collect();
    assert!(xs.iter().any(|&x| x < -0.5) && xs.iter().any(|&x| x > 0.5));
    for threads in [1, 2, 4] {
        assert_eq!(detect_static(&objects, &config, threads).unwrap(), d);
        assert_eq!(detect_dynamic(&objects, &config, threads).unwrap(), d);
    }
}

#[test]
fn far_apart_objects_have_no_regions() {
    let s = icosphere(0.5, 1).unwrap();
    let p = |x: f64| DPose {
        rotation: DMat3::IDENTITY,
        translation: DVec3::new(x, 0.0, 0.0),
    };
    let objects = [
        MovingMesh::from_poses(&s, &p(0.0), &p(0.2)).unwrap(),
        MovingMesh::from_poses(&s, &p(3.0), &p(2.0)).unwrap(),
    ];
    assert!(overlap_regions(&objects).is_empty());
    let d = detect(&objects, &KitamuraConfig::default()).unwrap();
    assert_eq!(
        d,
        Detection {
            colliding: vec![],
            candidates: 0
        }
    );
    // Step 2 on an explicit region.
    let r = DBox {
        min: DVec3::new(0.6, -1.0, -1.0),
        max: DVec3::new(0.8, 1.0, 1.0),
    };
    let f = faces_in_region(&objects[0], &r);
    assert!(!f.is_empty() && f.len() < objects[0].face_count());
    assert!(
        f.iter()
            .all(|&i| objects[0].face_box(i as usize).unwrap().overlaps(&r))
    );
}

#[test]
fn bad_input_is_rejected() {
    let v = vec![DVec3::ZERO, DVec3::X, DVec3::Y];
    assert_eq!(
        MovingMesh::new(vec![[0, 1, 2]], v.clone(), v[..2].to_vec()),
        Err(KitamuraError::VertexCountMismatch {
            before: 3,
            after: 2
        })
    );
    assert_eq!(
        MovingMesh::new(vec![[0, 1, 3]], v.clone(), v.clone()),
        Err(KitamuraError::IndexOutOfRange {
            face: 0,
            index: 3,
            vertices: 3
        })
    );
    let mut w = v.clone();
    w[1].y = f64::INFINITY;
    assert_eq!(
        MovingMesh::new(vec![[0, 1, 2]], v.clone(), w),
        Err(KitamuraError::NonFinite {
            vertex: 1,
            instant: 1
        })
    );
    let m = MovingMesh::new(vec![[0, 1, 2]], v.clone(), v).unwrap();
    let objs = [m.clone(), m];
    let deep = KitamuraConfig {
        depth: MAX_DEPTH + 1,
    };
    assert!(matches!(
        detect(&objs, &deep),
        Err(KitamuraError::DepthTooLarge { .. })
    ));
    assert!(matches!(
        detect_dynamic(&objs, &deep, 2),
        Err(KitamuraError::DepthTooLarge { .. })
    ));
    let ok = KitamuraConfig::default();
    assert_eq!(detect_static(&objs, &ok, 0), Err(KitamuraError::NoThreads));
    assert_eq!(detect_dynamic(&objs, &ok, 0), Err(KitamuraError::NoThreads));
    // Identical coincident triangles collide.
    assert_eq!(detect(&objs, &ok).unwrap().colliding.len(), 1);
    assert!(objs[0].face_box(1).is_none() && objs[0].swept_face(1).is_none());
}

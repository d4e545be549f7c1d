//! CInDeR extensions (Knott & Pai 2003): edge offsets (§6.3), localization (§6.2), extra view
//! directions, and a 200-box scene against the exact CPU interference test.

use interfere_geometry::containment::{PointLocation, locate_point};
use interfere_geometry::glam::{DVec3, EulerRot, Quat, Vec3};
use interfere_geometry::interference::{MeshQueries, Method};
use interfere_geometry::{DPose, Pose, Solid, TriMesh, shapes};
use interfere_gpu::testing::gpu_or_skip;
use interfere_gpu::{Cinder, CinderObject, CinderOptions, DEFAULT_EDGE_OFFSET_PIXELS, GpuError};
use rand::{Rng, SeedableRng};
use std::io::Write;

fn object(mesh: &TriMesh, pose: &Pose) -> CinderObject {
    let world = mesh.transformed(pose);
    CinderObject {
        vertices: world.vertices().iter().map(|v| v.to_array()).collect(),
        triangles: world.triangles().to_vec(),
    }
}

fn cpu_interferes(a: &TriMesh, pose_a: &Pose, b: &TriMesh, pose_b: &Pose) -> bool {
    let a = MeshQueries::new(a.transformed(pose_a));
    let b = MeshQueries::new(b.transformed(pose_b));
    a.interference(&b, &DPose::IDENTITY, Method::Obb, false)
        .expect("cpu interference")
        .intersecting
}

/// World AABB of an object, f64.
fn bounds(o: &CinderObject) -> ([f64; 3], [f64; 3]) {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for v in &o.vertices {
        for k in 0..3 {
            lo[k] = lo[k].min(f64::from(v[k]));
            hi[k] = hi[k].max(f64::from(v[k]));
        }
    }
    (lo, hi)
}

/// Extent of the overlap of two objects' boxes (negative components: no overlap).
fn overlap_extent(a: &CinderObject, b: &CinderObject) -> [f64; 3] {
    let (alo, ahi) = bounds(a);
    let (blo, bhi) = bounds(b);
    std::array::from_fn(|k| ahi[k].min(bhi[k]) - alo[k].max(blo[k]))
}

/// Signed distance from `p` (world) to the box of half extents `half` placed by `pose`.
fn box_signed_distance(half: Vec3, pose: &Pose, p: DVec3) -> f64 {
    let dpose = pose.to_f64();
    let local = dpose.rotation.transpose() * (p - dpose.translation);
    let q = local.abs() - half.as_dvec3();
    q.max(DVec3::ZERO).length() + q.max_element().min(0.0)
}

fn segment_distance(p: DVec3, a: DVec3, b: DVec3) -> f64 {
    let ab = b - a;
    let t = ((p - a).dot(ab) / ab.length_squared().max(f64::MIN_POSITIVE)).clamp(0.0, 1.0);
    (a + ab * t - p).length()
}

/// §6.3: face-to-face and edge-to-face contact (touching, no shared volume) is not reported with
/// the default inward offset, at several resolutions, while an outward offset of the same size
/// (the paper's direction, meant against self-interference in a whole-scene pass) turns the
/// contact into hits; a penetration deeper than the resolution bound is reported.
#[test]
fn cinder_offset_touching_is_not_interference() {
    let Some(ctx) = gpu_or_skip("cinder_offset_touching_is_not_interference") else {
        return;
    };
    let cinder = Cinder::new(&ctx);
    let small = shapes::cuboid(Vec3::splat(0.5)).unwrap();
    let big = shapes::cuboid(Vec3::new(1.0, 2.0, 2.0)).unwrap();
    let tilt = Quat::from_rotation_x(0.7);
    // `big` spans x in [-1, 1]; the small cube rests on its +x face.
    let touching = [
        Pose::from_translation(Vec3::new(1.5, 0.3, -0.2)), // face to face
        Pose::new(tilt, Vec3::new(1.5, 0.0, 0.0)),         // face to face, turned about x
        Pose::new(
            Quat::from_rotation_z(std::f32::consts::FRAC_PI_4),
            Vec3::new(1.0 + 0.5 * std::f32::consts::SQRT_2, 0.2, 0.1),
        ), // an edge on the face
    ];
    let outward = CinderOptions {
        views: 3,
        edge_offset_pixels: -DEFAULT_EDGE_OFFSET_PIXELS,
    };
    let inward = CinderOptions {
        views: 3,
        ..CinderOptions::default()
    };
    let mut outward_hits = 0;
    for (k, pose) in touching.iter().enumerate() {
        let objects = [object(&big, &Pose::IDENTITY), object(&small, pose)];
        for resolution in [32, 128, 256] {
            let report = cinder
                .detect_with(&ctx, &objects, resolution, &inward)
                .unwrap();
            assert!(
                report.pairs.is_empty(),
                "case {k} at {resolution}: {report:?}"
            );
            let report = cinder
                .detect_with(&ctx, &objects, resolution, &outward)
                .unwrap();
            outward_hits += report.pairs.len();
        }
        // Pushed in by more than the bound: reported.
        let resolution = 128;
        let extent = overlap_extent(&objects[0], &objects[1]);
        let depth =
            2.0 * inward.resolution_bound([extent[0].max(0.5), extent[1], extent[2]], resolution);
        let pushed = Pose::new(
            pose.rotation,
            pose.translation - Vec3::new(depth as f32, 0.0, 0.0),
        );
        assert!(cpu_interferes(&big, &Pose::IDENTITY, &small, &pushed));
        let objects = [object(&big, &Pose::IDENTITY), object(&small, &pushed)];
        let report = cinder
            .detect_with(&ctx, &objects, resolution, &inward)
            .unwrap();
        assert_eq!(
            report.pairs,
            vec![(0, 1)],
            "case {k} pushed by {depth}: {report:?}"
        );
    }
    assert!(
        outward_hits > 0,
        "outward offsets never reported a touching contact"
    );
    // Bad options are typed errors.
    let objects = [object(&big, &Pose::IDENTITY), object(&small, &touching[0])];
    for bad in [
        CinderOptions { views: 0, ..inward },
        CinderOptions { views: 4, ..inward },
        CinderOptions {
            edge_offset_pixels: f32::NAN,
            ..inward
        },
        CinderOptions {
            edge_offset_pixels: 1e6,
            ..inward
        },
    ] {
        assert!(matches!(
            cinder.detect_with(&ctx, &objects, 64, &bad),
            Err(GpuError::InvalidInput { .. })
        ));
    }
    assert!(matches!(
        cinder.localize(&ctx, &objects, 64, (1, 1)),
        Err(GpuError::InvalidInput { .. })
    ));
    assert!(matches!(
        cinder.localize(&ctx, &objects, 64, (0, 2)),
        Err(GpuError::InvalidInput { .. })
    ));
}

/// §6.2: every localized point lies inside the penetrated box (or within one pixel plus the
/// offset of its surface) and on an offset edge of the penetrating box; none for pairs that do
/// not interfere or whose ordered test does not hit.
#[test]
fn cinder_localize_points_inside_and_on_edges() {
    let Some(ctx) = gpu_or_skip("cinder_localize_points_inside_and_on_edges") else {
        return;
    };
    let cinder = Cinder::new(&ctx);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(62);
    let resolution = 96;
    let mut located = 0;
    for case in 0..12 {
        let ha = Vec3::new(
            rng.random_range(0.4..1.2),
            rng.random_range(0.4..1.2),
            rng.random_range(0.4..1.2),
        );
        let hb = Vec3::new(
            rng.random_range(0.2..0.8),
            rng.random_range(0.2..0.8),
            rng.random_range(0.2..0.8),
        );
        let rot = |rng: &mut rand_chacha::ChaCha8Rng| {
            Quat::from_euler(
                EulerRot::XYZ,
                rng.random_range(-3.0..3.0),
                rng.random_range(-3.0..3.0),
                rng.random_range(-3.0..3.0),
            )
        };
        let pose_a = Pose::new(rot(&mut rng), Vec3::ZERO);
        let dir = Vec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        )
        .normalize_or(Vec3::X);
        let pose_b = Pose::new(rot(&mut rng), dir * rng.random_range(0.6..1.8));
        let (ma, mb) = (shapes::cuboid(ha).unwrap(), shapes::cuboid(hb).unwrap());
        let objects = [object(&ma, &pose_a), object(&mb, &pose_b)];
        let interferes = cpu_interferes(&ma, &pose_a, &mb, &pose_b);
        let options = CinderOptions {
            views: 3,
            ..CinderOptions::default()
        };
        let report = cinder
            .detect_with(&ctx, &objects, resolution, &options)
            .unwrap();
        if !interferes {
            assert!(report.pairs.is_empty(), "case {case}: {report:?}");
        }
        let extent = overlap_extent(&objects[0], &objects[1]);
        let pixel = extent.iter().fold(0.0f64, |m, &e| m.max(e)) / f64::from(resolution);
        let offset = f64::from(options.edge_offset_pixels.abs()) * pixel;
        let solids = [
            Solid::new(ma.transformed(&pose_a)).unwrap(),
            Solid::new(mb.transformed(&pose_b)).unwrap(),
        ];
        let halves = [ha, hb];
        let poses = [pose_a, pose_b];
        for (pen, tgt) in [(0usize, 1usize), (1, 0)] {
            let points = cinder
                .localize_with(&ctx, &objects, resolution, (pen, tgt), &options)
                .unwrap();
            assert_eq!(
                !points.is_empty(),
                report.hits.contains(&(pen, tgt)),
                "case {case} ({pen}, {tgt}): {} points, {report:?}",
                points.len()
            );
            let edges: Vec<(DVec3, DVec3)> = {
                let m = &objects[pen];
                let mut e = Vec::new();
                for t in &m.triangles {
                    for k in 0..3 {
                        let a = Vec3::from_array(m.vertices[t[k] as usize]).as_dvec3();
                        let b = Vec3::from_array(m.vertices[t[(k + 1) % 3] as usize]).as_dvec3();
                        e.push((a, b));
                    }
                }
                e
            };
            for p in &points {
                let p = Vec3::from_array(*p).as_dvec3();
                let inside = locate_point(&solids[tgt], p) == PointLocation::Inside;
                let d = box_signed_distance(halves[tgt], &poses[tgt], p);
                assert!(
                    inside || d <= pixel + offset,
                    "case {case}: point {p} is {d} outside the penetrated box (pixel {pixel})"
                );
                let near = edges
                    .iter()
                    .map(|&(a, b)| segment_distance(p, a, b))
                    .fold(f64::INFINITY, f64::min);
                assert!(
                    near <= offset * 1.01 + 1e-5,
                    "case {case}: point {p} is {near} from the penetrating edges (offset {offset})"
                );
            }
            located += points.len();
        }
    }
    assert!(located > 0);
    // Nested spheres: only the small one's edges are inside the big one.
    let big = shapes::icosphere(2.0, 2).unwrap();
    let small = shapes::icosphere(0.3, 2).unwrap();
    let inner = Pose::from_translation(Vec3::new(0.5, -0.4, 0.6));
    let objects = [object(&big, &Pose::IDENTITY), object(&small, &inner)];
    assert!(
        cinder
            .localize(&ctx, &objects, 64, (0, 1))
            .unwrap()
            .is_empty()
    );
    let points = cinder.localize(&ctx, &objects, 64, (1, 0)).unwrap();
    assert!(!points.is_empty());
    for p in points {
        let r = (Vec3::from_array(p) - inner.translation).length();
        assert!(
            r <= 0.3 + 1e-4,
            "point {p:?} is {r} from the small sphere's centre"
        );
    }
    // Separated: nothing.
    let outer = Pose::from_translation(Vec3::new(2.5, 0.0, 0.0));
    let objects = [object(&big, &Pose::IDENTITY), object(&small, &outer)];
    for pair in [(0, 1), (1, 0)] {
        assert!(
            cinder
                .localize(&ctx, &objects, 64, pair)
                .unwrap()
                .is_empty()
        );
    }
}

/// A case the view along `z` misses and the view along `x` catches: a pillar thinner than a
/// pixel pierces a box straight along `z`. Its vertical edges project to points, its face
/// diagonals to segments shorter than a pixel (centred on a pixel corner, half a pixel from every pixel centre, so they cover no sample and are not rasterized);
/// the overlap frustum is kept wide by a plate (part of the same object) above the box. Seen
/// along `x`, the vertical edges are long lines inside the box.
#[test]
fn cinder_second_view_catches_what_z_misses() {
    let Some(ctx) = gpu_or_skip("cinder_second_view_catches_what_z_misses") else {
        return;
    };
    let cinder = Cinder::new(&ctx);
    let resolution = 64;
    let block = shapes::cuboid(Vec3::ONE).unwrap();
    // Pixel corners of the z view of the overlap [-1, 1]²: -1 + i / 32.
    let (px, py) = (-1.0 + 40.0 / 32.0, -1.0 + 12.0 / 32.0);
    let pillar = shapes::cuboid(Vec3::new(0.001, 0.001, 1.5))
        .unwrap()
        .mesh()
        .transformed(&Pose::from_translation(Vec3::new(px, py, 0.0)));
    let plate = shapes::cuboid(Vec3::new(1.2, 1.2, 0.05))
        .unwrap()
        .mesh()
        .transformed(&Pose::from_translation(Vec3::new(0.0, 0.0, 1.85)));
    let pin = TriMesh::merge(&[&pillar, &plate]).unwrap();
    assert!(cpu_interferes(
        &block,
        &Pose::IDENTITY,
        &pin,
        &Pose::IDENTITY
    ));
    let objects = [
        object(&block, &Pose::IDENTITY),
        object(&pin, &Pose::IDENTITY),
    ];
    // No offset here: an inward offset of 1.5 pixels would cross the pillar's edges over and
    // spread them over 2 pixels, which the z view then sees.
    let z_only = CinderOptions {
        views: 1,
        edge_offset_pixels: 0.0,
    };
    let report = cinder
        .detect_with(&ctx, &objects, resolution, &z_only)
        .unwrap();
    assert!(report.pairs.is_empty(), "z alone: {report:?}");
    for views in [2, 3] {
        for edge_offset_pixels in [0.0, DEFAULT_EDGE_OFFSET_PIXELS] {
            let options = CinderOptions {
                views,
                edge_offset_pixels,
            };
            let report = cinder
                .detect_with(&ctx, &objects, resolution, &options)
                .unwrap();
            assert_eq!(report.hits, vec![(1, 0)], "{options:?}: {report:?}");
            assert_eq!(report.tests, 2 * views as usize);
        }
    }
    // The x view localizes points on the pillar, inside the block.
    let options = CinderOptions {
        views: 2,
        edge_offset_pixels: 0.0,
    };
    let points = cinder
        .localize_with(&ctx, &objects, resolution, (1, 0), &options)
        .unwrap();
    assert!(!points.is_empty());
    for p in points {
        assert!(
            (p[0] - px).abs() < 0.01 && (p[1] - py).abs() < 0.01,
            "{p:?}"
        );
        assert!(p[2].abs() <= 1.0 + 1e-3, "{p:?}");
    }
}

/// Minimum overlap over the 15 separating-axis candidates of two boxes given by their 8 world
/// corners: the exact penetration depth when positive (convex polyhedra).
fn box_penetration_depth(a: &[DVec3], a_axes: [DVec3; 3], b: &[DVec3], b_axes: [DVec3; 3]) -> f64 {
    let mut axes: Vec<DVec3> = a_axes.iter().chain(b_axes.iter()).copied().collect();
    for u in a_axes {
        for v in b_axes {
            let c = u.cross(v);
            if c.length() > 1e-9 {
                axes.push(c.normalize());
            }
        }
    }
    axes.iter()
        .map(|&n| {
            let (alo, ahi) = a
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), p| {
                    (l.min(p.dot(n)), h.max(p.dot(n)))
                });
            let (blo, bhi) = b
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), p| {
                    (l.min(p.dot(n)), h.max(p.dot(n)))
                });
            ahi.min(bhi) - alo.max(blo)
        })
        .fold(f64::INFINITY, f64::min)
}

/// 200 randomly rotated small boxes on a jittered grid, one `detect_with` call (3 views): no
/// pair the CPU says is separate is reported, and every interfering pair the GPU misses has a
/// penetration depth below its resolution bound; those are printed and must be few.
#[test]
fn cinder_scene_of_200_boxes_matches_cpu() {
    let Some(ctx) = gpu_or_skip("cinder_scene_of_200_boxes_matches_cpu") else {
        return;
    };
    let cinder = Cinder::new(&ctx);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2003);
    let resolution = 128;
    let options = CinderOptions {
        views: 3,
        ..CinderOptions::default()
    };
    let mut meshes = Vec::new();
    let mut objects = Vec::new();
    let mut corners = Vec::new();
    for k in 0..200usize {
        let cell = Vec3::new((k % 6) as f32, ((k / 6) % 6) as f32, (k / 36) as f32);
        let jitter = Vec3::new(
            rng.random_range(-0.25..0.25),
            rng.random_range(-0.25..0.25),
            rng.random_range(-0.25..0.25),
        );
        let half = Vec3::new(
            rng.random_range(0.15..0.55),
            rng.random_range(0.15..0.55),
            rng.random_range(0.15..0.55),
        );
        let rotation = Quat::from_euler(
            EulerRot::XYZ,
            rng.random_range(-3.0..3.0),
            rng.random_range(-3.0..3.0),
            rng.random_range(-3.0..3.0),
        );
        let pose = Pose::new(rotation, cell + jitter);
        let mesh = shapes::cuboid(half).unwrap().mesh().transformed(&pose);
        let axes = [Vec3::X, Vec3::Y, Vec3::Z].map(|e| (rotation * e).as_dvec3());
        corners.push((
            mesh.vertices()
                .iter()
                .map(|v| v.as_dvec3())
                .collect::<Vec<_>>(),
            axes,
        ));
        objects.push(CinderObject {
            vertices: mesh.vertices().iter().map(|v| v.to_array()).collect(),
            triangles: mesh.triangles().to_vec(),
        });
        meshes.push(MeshQueries::new(mesh));
    }
    let start = std::time::Instant::now();
    let report = cinder
        .detect_with(&ctx, &objects, resolution, &options)
        .unwrap();
    let elapsed = start.elapsed();
    assert!(report.negative.is_empty(), "{report:?}");
    let mut cpu_pairs = Vec::new();
    let mut candidates = 0;
    for i in 0..objects.len() {
        for j in i + 1..objects.len() {
            let extent = overlap_extent(&objects[i], &objects[j]);
            if extent.iter().any(|&e| e < 0.0) {
                continue;
            }
            candidates += 1;
            if meshes[i]
                .interference(&meshes[j], &DPose::IDENTITY, Method::Obb, false)
                .unwrap()
                .intersecting
            {
                cpu_pairs.push((i, j));
            }
        }
    }
    assert_eq!(report.tests, 2 * 3 * candidates);
    let extras: Vec<_> = report
        .pairs
        .iter()
        .filter(|p| !cpu_pairs.contains(p))
        .collect();
    assert!(
        extras.is_empty(),
        "reported but separate on the CPU: {extras:?}"
    );
    let mut below = Vec::new();
    for &(i, j) in cpu_pairs.iter().filter(|p| !report.pairs.contains(p)) {
        let depth = box_penetration_depth(&corners[i].0, corners[i].1, &corners[j].0, corners[j].1);
        let bound = options.resolution_bound(overlap_extent(&objects[i], &objects[j]), resolution);
        assert!(
            depth < bound,
            "missed ({i}, {j}) with penetration depth {depth} above its bound {bound}"
        );
        below.push(((i, j), depth, bound));
    }
    let mut out = std::io::stderr().lock();
    writeln!(
        out,
        "cinder scene: 200 boxes, {candidates} box-overlapping pairs, {} interfering (cpu), {} \
         found, {} missed below the resolution bound {below:?}; {} ordered tests at \
         {resolution}x{resolution}, 3 views, in {elapsed:?} on {}",
        cpu_pairs.len(),
        report.pairs.len(),
        below.len(),
        report.tests,
        ctx.adapter.name
    )
    .unwrap();
    // The same scene with the view along z only: never more pairs than the CPU, usually fewer.
    let start = std::time::Instant::now();
    let z_only = cinder
        .detect_with(&ctx, &objects, resolution, &CinderOptions::default())
        .unwrap();
    let z_elapsed = start.elapsed();
    assert!(
        z_only.pairs.iter().all(|p| cpu_pairs.contains(p)),
        "{z_only:?}"
    );
    writeln!(
        out,
        "cinder scene, z view only: {} found of {} in {z_elapsed:?}",
        z_only.pairs.len(),
        cpu_pairs.len()
    )
    .unwrap();
    assert!(
        cpu_pairs.len() >= 20,
        "scene too sparse: {}",
        cpu_pairs.len()
    );
    assert!(
        below.len() * 10 <= cpu_pairs.len(),
        "too many misses: {below:?}"
    );
}

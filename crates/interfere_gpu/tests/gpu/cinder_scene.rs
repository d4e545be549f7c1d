//! CInDeR scene runs (`Cinder::run`): object identification, localization, offset edges, views
//! and not-closed reports, against the exact CPU answer of interfere_geometry (brute-force
//! triangle pairs, then containment) on the same f32 world-space meshes.

use interfere_geometry::glam::{DVec3, Quat, Vec3};
use interfere_geometry::{
    PointLocation, Pose, Solid, TriMesh, containment, first_hit_brute, locate_point, shapes,
};
use interfere_gpu::testing::gpu_or_skip;
use interfere_gpu::{
    Cinder, CinderObject, CinderSceneOptions, CinderSceneReport, CinderViews, GpuContext, GpuError,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeSet;
use std::io::Write;

fn object(mesh: &TriMesh) -> CinderObject {
    CinderObject {
        vertices: mesh.vertices().iter().map(|v| v.to_array()).collect(),
        triangles: mesh.triangles().to_vec(),
    }
}

/// Exact interference of two world-space solids: a crossing triangle pair, else containment.
fn exact(a: &Solid, b: &Solid) -> bool {
    use interfere_geometry::DPose;
    first_hit_brute(a, b, &DPose::IDENTITY).is_some()
        || containment(a, b, &DPose::IDENTITY).is_some()
}

fn boxes_overlap(a: &TriMesh, b: &TriMesh) -> bool {
    a.aabb().overlaps(&b.aabb())
}

/// Distance from `p` to triangle `abc` (closest point by regions).
fn point_triangle_distance(p: DVec3, a: DVec3, b: DVec3, c: DVec3) -> f64 {
    let n = (b - a).cross(c - a);
    if n.length_squared() > 0.0 {
        let inside = [(a, b), (b, c), (c, a)]
            .iter()
            .all(|&(u, v)| (v - u).cross(p - u).dot(n) >= 0.0);
        if inside {
            return (p - a).dot(n).abs() / n.length();
        }
    }
    [(a, b), (b, c), (c, a)]
        .iter()
        .map(|&(u, v)| {
            let d = v - u;
            let t = if d.length_squared() > 0.0 {
                ((p - u).dot(d) / d.length_squared()).clamp(0.0, 1.0)
            } else {
                0.0
            };
            (p - (u + d * t)).length()
        })
        .fold(f64::INFINITY, f64::min)
}

fn surface_distance(mesh: &TriMesh, p: DVec3) -> f64 {
    (0..mesh.triangle_count())
        .map(|t| {
            let [a, b, c] = mesh.triangle(t).map(Vec3::as_dvec3);
            point_triangle_distance(p, a, b, c)
        })
        .fold(f64::INFINITY, f64::min)
}

/// Every localization point lies on (near) the penetrating object's surface and inside, or within
/// a pixel of, the penetrated one (§6.2).
fn check_points(report: &CinderSceneReport, meshes: &[TriMesh]) {
    assert!(!report.points.is_empty() || report.pairs.is_empty());
    let pixel = report
        .views
        .iter()
        .map(|v| v.pixel_size)
        .fold(0.0, f64::max);
    let offset = report
        .views
        .iter()
        .map(|v| v.edge_offset)
        .fold(0.0, f64::max);
    let pairs: BTreeSet<(usize, usize)> = report.hits.iter().copied().collect();
    // A spread of at most about 400 points keeps the CPU distance checks fast.
    let stride = report.points.len().div_ceil(400).max(1);
    for point in report.points.iter().step_by(stride) {
        assert!(pairs.contains(&(point.penetrating, point.penetrated)));
        let p = DVec3::from(point.position);
        let target = &meshes[point.penetrated];
        let inside = locate_point(target, p) != PointLocation::Outside;
        let to_target = surface_distance(target, p);
        assert!(
            inside || to_target <= 1.5 * pixel,
            "{point:?}: {to_target} outside the penetrated object (pixel {pixel})"
        );
        let to_source = surface_distance(&meshes[point.penetrating], p);
        assert!(
            to_source <= offset + 1.5 * pixel,
            "{point:?}: {to_source} from the penetrating object (pixel {pixel}, offset {offset})"
        );
    }
}

/// 300 cuboids on a jittered 10 × 10 × 3 grid with random rotations and sizes.
fn box_scene(seed: u64) -> Vec<(Vec3, Pose)> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..300)
        .map(|k| {
            let half = Vec3::new(
                rng.random_range(0.15..0.45),
                rng.random_range(0.15..0.45),
                rng.random_range(0.15..0.45),
            );
            let axis = Vec3::new(
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
            )
            .normalize_or(Vec3::Z);
            let rotation = Quat::from_axis_angle(axis, rng.random_range(0.0..6.3));
            let mut jitter = || rng.random_range(-0.25..0.25);
            let grid = Vec3::new((k % 10) as f32, ((k / 10) % 10) as f32, (k / 100) as f32);
            (
                half,
                Pose::new(rotation, grid + Vec3::new(jitter(), jitter(), jitter())),
            )
        })
        .collect()
}

/// Signed penetration of two cuboids by the separating axis theorem over the 15 axes (face
/// normals of both, cross products of their edges): the smallest overlap of their projections.
/// Positive: the penetration depth (the shortest translation that separates them). Negative: a
/// gap along some axis, so they are at least that far apart.
fn box_penetration(a: (Vec3, Pose), b: (Vec3, Pose)) -> f64 {
    let axes_of =
        |pose: &Pose| [Vec3::X, Vec3::Y, Vec3::Z].map(|e| pose.rotation.as_dquat() * e.as_dvec3());
    let (ua, ub) = (axes_of(&a.1), axes_of(&b.1));
    let (ha, hb) = (a.0.as_dvec3().to_array(), b.0.as_dvec3().to_array());
    let d = b.1.translation.as_dvec3() - a.1.translation.as_dvec3();
    let mut candidates: Vec<DVec3> = ua.iter().chain(ub.iter()).copied().collect();
    for x in ua {
        for y in ub {
            let c = x.cross(y);
            if c.length() > 1e-9 {
                candidates.push(c.normalize());
            }
        }
    }
    candidates
        .iter()
        .map(|&n| {
            let ra: f64 = (0..3).map(|k| ha[k] * ua[k].dot(n).abs()).sum();
            let rb: f64 = (0..3).map(|k| hb[k] * ub[k].dot(n).abs()).sum();
            ra + rb - d.dot(n).abs()
        })
        .fold(f64::INFINITY, f64::min)
}

struct Oracle {
    /// Pairs whose penetration depth exceeds the bound.
    deep: BTreeSet<(usize, usize)>,
    /// Pairs whose penetration depth or gap is within the bound: (pair, exact answer, depth).
    close: Vec<((usize, usize), bool, f64)>,
}

/// Classifies every pair of cuboids: exactly (brute-force triangle pairs and containment) for
/// pairs whose bounding boxes overlap (the others cannot interfere), and by penetration depth.
fn box_oracle(scene: &[(Vec3, Pose)], meshes: &[TriMesh], bound: f64) -> Oracle {
    let solids: Vec<Solid> = meshes
        .iter()
        .map(|m| Solid::new(m.clone()).expect("closed"))
        .collect();
    let mut oracle = Oracle {
        deep: BTreeSet::new(),
        close: Vec::new(),
    };
    for i in 0..scene.len() {
        for j in i + 1..scene.len() {
            let e = boxes_overlap(&meshes[i], &meshes[j]) && exact(&solids[i], &solids[j]);
            let depth = box_penetration(scene[i], scene[j]);
            if depth.abs() > 1e-5 {
                assert_eq!(e, depth > 0.0, "oracles disagree on {i} {j}: depth {depth}");
            }
            if depth > bound {
                oracle.deep.insert((i, j));
            } else if depth >= -bound {
                oracle.close.push(((i, j), e, depth));
            }
        }
    }
    oracle
}

fn run_box_scene(ctx: &GpuContext, cinder: &Cinder, resolution: u32, views: CinderViews) {
    let scene = box_scene(2003);
    let meshes: Vec<TriMesh> = scene
        .iter()
        .map(|(h, p)| shapes::cuboid(*h).unwrap().mesh().transformed(p))
        .collect();
    let objects: Vec<CinderObject> = meshes.iter().map(object).collect();
    let options = CinderSceneOptions {
        resolution,
        views,
        ..Default::default()
    };
    let start = std::time::Instant::now();
    let report = cinder.run(ctx, &objects, &options).expect("cinder runs");
    let elapsed = start.elapsed();
    let bound = report.resolution_bound;
    let oracle = box_oracle(&scene, &meshes, bound);
    let found: BTreeSet<(usize, usize)> = report.pairs.iter().copied().collect();
    let close: BTreeSet<(usize, usize)> = oracle.close.iter().map(|c| c.0).collect();
    let decided: Vec<(usize, usize)> = found.difference(&close).copied().collect();
    let close_exact = oracle.close.iter().filter(|c| c.1).count();
    let _ = writeln!(
        std::io::stderr(),
        "cinder 300 boxes at {resolution} ({views:?}): {:?}; {} pairs found, {} deep, {} close to \
         call ({} of them exactly interfering, {} of those found), bound {bound:.4}, views {:?}, \
         self hits {}, points {}",
        elapsed,
        found.len(),
        oracle.deep.len(),
        close.len(),
        close_exact,
        oracle
            .close
            .iter()
            .filter(|c| c.1 && found.contains(&c.0))
            .count(),
        report
            .views
            .iter()
            .map(|v| (v.axis, v.width, v.height, v.fragments))
            .collect::<Vec<_>>(),
        report.self_hits,
        report.points_found,
    );
    for c in &oracle.close {
        let _ = writeln!(
            std::io::stderr(),
            "  within the resolution bound: pair {:?}, exact {}, depth {:.4}, cinder {}",
            c.0,
            c.1,
            c.2,
            found.contains(&c.0)
        );
    }
    // Every pair outside the undecidable band is exactly what the CPU says.
    assert_eq!(
        decided,
        oracle.deep.iter().copied().collect::<Vec<_>>(),
        "pairs outside the resolution band"
    );
    assert!(oracle.deep.len() >= 40, "too few interfering pairs");
    // Within the band either answer is allowed, but few differ from the exact one (touching
    // within about the edge offset is reported: see the module documentation of `scene`).
    let differ = oracle
        .close
        .iter()
        .filter(|c| c.1 != found.contains(&c.0))
        .count();
    let missed = oracle
        .close
        .iter()
        .filter(|c| c.1 && !found.contains(&c.0))
        .count();
    let _ = writeln!(
        std::io::stderr(),
        "  {differ} of {} pairs within the bound differ from the exact answer ({missed} missed)",
        close.len()
    );
    assert!(missed * 20 <= oracle.deep.len(), "{missed} missed");
    // Pairs farther apart than the offset plus a pixel are never reported (the SAT gap is a
    // lower bound of the distance).
    let view = report.views[0];
    for c in &oracle.close {
        if found.contains(&c.0) && !c.1 {
            assert!(
                -c.2 <= view.edge_offset + view.pixel_size,
                "{c:?} reported at a gap above the offset plus a pixel"
            );
        }
    }
    assert!(report.not_closed.is_empty(), "{:?}", report.not_closed);
    assert_eq!(report.saturated_pixels, 0);
    assert_eq!(report.self_hits, 0, "offset edges (6.3)");
    check_points(&report, &meshes);
}

#[test]
fn cinder_scene_300_boxes_match_exact_pairs() {
    let Some(ctx) = gpu_or_skip("cinder_scene_300_boxes_match_exact_pairs") else {
        return;
    };
    let cinder = Cinder::new(&ctx);
    run_box_scene(&ctx, &cinder, 768, CinderViews::Z);
}

/// End-to-end time of the 300-box run (release: `cargo test -p interfere_gpu --release --test
/// gpu -- --ignored cinder_scene_300_boxes_timing --nocapture`).
#[test]
#[ignore]
fn cinder_scene_300_boxes_timing() {
    let Some(ctx) = gpu_or_skip("cinder_scene_300_boxes_timing") else {
        return;
    };
    let cinder = Cinder::new(&ctx);
    let scene = box_scene(2003);
    let objects: Vec<CinderObject> = scene
        .iter()
        .map(|(h, p)| object(&shapes::cuboid(*h).unwrap().mesh().transformed(p)))
        .collect();
    for (resolution, views) in [
        (512, CinderViews::Z),
        (768, CinderViews::Z),
        (1024, CinderViews::Z),
        (768, CinderViews::All),
    ] {
        let options = CinderSceneOptions {
            resolution,
            views,
            ..Default::default()
        };
        cinder.run(&ctx, &objects, &options).unwrap(); // warm-up
        let runs = 5;
        let start = std::time::Instant::now();
        let mut pairs = 0;
        for _ in 0..runs {
            pairs = cinder.run(&ctx, &objects, &options).unwrap().pairs.len();
        }
        let _ = writeln!(
            std::io::stderr(),
            "cinder 300 boxes, {resolution} px, {views:?}: {:?} per run end to end ({pairs} \
             pairs) on {}",
            start.elapsed() / runs,
            ctx.adapter.name
        );
    }
    run_box_scene(&ctx, &cinder, 1024, CinderViews::All);
}

fn run_default(ctx: &GpuContext, cinder: &Cinder, meshes: &[TriMesh]) -> CinderSceneReport {
    let objects: Vec<CinderObject> = meshes.iter().map(object).collect();
    cinder
        .run(ctx, &objects, &CinderSceneOptions::default())
        .expect("cinder runs")
}

/// Containment (§3.1): no surfaces cross, yet the inner object's edges lie inside the outer one.
#[test]
fn cinder_scene_nested_objects() {
    let Some(ctx) = gpu_or_skip("cinder_scene_nested_objects") else {
        return;
    };
    let cinder = Cinder::new(&ctx);
    let tilt = Pose::new(
        Quat::from_euler(interfere_geometry::glam::EulerRot::XYZ, 0.4, 0.3, 0.2),
        Vec3::new(0.2, -0.1, 0.3),
    );
    let meshes = vec![
        shapes::icosphere(2.0, 2).unwrap().mesh().clone(),
        shapes::cuboid(Vec3::new(0.5, 0.3, 0.4))
            .unwrap()
            .mesh()
            .transformed(&tilt),
        // A torus far away with a ball inside its tube.
        shapes::torus(2.0, 0.6, 32, 16)
            .unwrap()
            .mesh()
            .transformed(&Pose::from_translation(Vec3::new(8.0, 0.0, 0.0))),
        shapes::icosphere(0.3, 1)
            .unwrap()
            .mesh()
            .transformed(&Pose::from_translation(Vec3::new(10.0, 0.0, 0.0))),
        // A ball in the torus' hole: no interference.
        shapes::icosphere(0.3, 1)
            .unwrap()
            .mesh()
            .transformed(&Pose::from_translation(Vec3::new(8.0, 0.2, 0.0))),
    ];
    let solids: Vec<Solid> = meshes
        .iter()
        .map(|m| Solid::new(m.clone()).unwrap())
        .collect();
    assert!(
        first_hit_brute(&solids[0], &solids[1], &interfere_geometry::DPose::IDENTITY).is_none()
    );
    assert!(exact(&solids[0], &solids[1]) && exact(&solids[2], &solids[3]));
    assert!(!exact(&solids[2], &solids[4]));
    let report = run_default(&ctx, &cinder, &meshes);
    assert_eq!(report.pairs, vec![(0, 1), (2, 3)], "{report:?}");
    // Only the inner objects' edges are inside: the hits are ordered inner into outer.
    assert_eq!(report.hits, vec![(1, 0), (3, 2)]);
    assert!(report.not_closed.is_empty());
    assert_eq!(report.views.len(), 1);
    check_points(&report, &meshes);
    // The inner box's points lie inside the sphere.
    for p in report.points.iter().filter(|p| p.penetrating == 1) {
        assert_eq!(
            locate_point(&meshes[0], DVec3::from(p.position)),
            PointLocation::Inside
        );
    }
}

/// A random shape of one of the generator families, with a size for the margins.
fn random_shape(rng: &mut ChaCha8Rng) -> TriMesh {
    match rng.random_range(0..3) {
        0 => shapes::icosphere(rng.random_range(0.3..0.8), 2)
            .unwrap()
            .mesh()
            .clone(),
        1 => {
            let major = rng.random_range(0.5..0.9);
            shapes::torus(major, major * rng.random_range(0.2..0.45), 24, 12)
                .unwrap()
                .mesh()
                .clone()
        }
        _ => shapes::bumpy_sphere(
            rng.random_range(0.4..0.8),
            0.2,
            3.0,
            2,
            rng.random_range(0..1000),
        )
        .unwrap()
        .mesh()
        .clone(),
    }
}

/// `mesh` with every vertex moved by `delta` along its vertex normal (a shrunk or grown copy).
pub(crate) fn offset_mesh(mesh: &TriMesh, delta: f32) -> TriMesh {
    let normals = mesh.vertex_normals();
    let vertices = mesh
        .vertices()
        .iter()
        .zip(&normals)
        .map(|(v, n)| *v + *n * delta)
        .collect();
    TriMesh::new(vertices, mesh.triangles().to_vec()).expect("offset mesh")
}

/// Random poses of spheres, tori and bumpy spheres, eight objects per scene: pairs found equal
/// the exact pairs wherever shrinking by twice the bound and growing by the bound do not
/// change the exact answer.
#[test]
fn cinder_scene_random_curved_shapes() {
    let Some(ctx) = gpu_or_skip("cinder_scene_random_curved_shapes") else {
        return;
    };
    let cinder = Cinder::new(&ctx);
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let (mut decided, mut positive, mut band) = (0, 0, 0);
    for scene in 0..6 {
        let local: Vec<TriMesh> = (0..8).map(|_| random_shape(&mut rng)).collect();
        let poses: Vec<Pose> = (0..8)
            .map(|_| {
                let axis = Vec3::new(
                    rng.random_range(-1.0..1.0),
                    rng.random_range(-1.0..1.0),
                    rng.random_range(-1.0..1.0),
                )
                .normalize_or(Vec3::X);
                Pose::new(
                    Quat::from_axis_angle(axis, rng.random_range(0.0..6.3)),
                    Vec3::new(
                        rng.random_range(-1.6..1.6),
                        rng.random_range(-1.6..1.6),
                        rng.random_range(-1.6..1.6),
                    ),
                )
            })
            .collect();
        let meshes: Vec<TriMesh> = local
            .iter()
            .zip(&poses)
            .map(|(m, p)| m.transformed(p))
            .collect();
        let report = run_default(&ctx, &cinder, &meshes);
        let delta = report.resolution_bound as f32;
        let world = |d: f32| -> Vec<Solid> {
            local
                .iter()
                .zip(&poses)
                .map(|(m, p)| Solid::new(offset_mesh(m, d).transformed(p)).expect("closed"))
                .collect()
        };
        let (exact_s, shrunk, grown) = (world(0.0), world(-2.0 * delta), world(delta));
        let found: BTreeSet<(usize, usize)> = report.pairs.iter().copied().collect();
        for i in 0..8 {
            for j in i + 1..8 {
                // Disjoint bounding boxes of the grown copies: none of the three interferes.
                let near = boxes_overlap(&grown[i], &grown[j]);
                let e = near && exact(&exact_s[i], &exact_s[j]);
                let s = near && exact(&shrunk[i], &shrunk[j]);
                let g = near && exact(&grown[i], &grown[j]);
                if s != g {
                    band += 1;
                    continue;
                }
                assert_eq!(e, s, "scene {scene} pair {i} {j}: oracle consistency");
                assert_eq!(
                    found.contains(&(i, j)),
                    e,
                    "scene {scene} pair {i} {j}: {report:?}"
                );
                decided += 1;
                positive += e as usize;
            }
        }
        assert!(report.not_closed.is_empty(), "scene {scene}");
        assert_eq!(report.saturated_pixels, 0);
        check_points(&report, &meshes);
    }
    let _ = writeln!(
        std::io::stderr(),
        "cinder curved scenes: {decided} pairs decided ({positive} interfering), {band} within \
         the bound"
    );
    assert!(
        positive >= 15 && decided - positive >= 60,
        "{positive} of {decided}"
    );
    assert!(band * 5 <= decided, "{band} within the bound");
}

/// Touching and near-touching cuboids, face to face along `x` (the smaller face inside the
/// larger one): what the documentation promises around the resolution bound.
#[test]
fn cinder_scene_touching_and_sub_pixel_gaps() {
    let Some(ctx) = gpu_or_skip("cinder_scene_touching_and_sub_pixel_gaps") else {
        return;
    };
    let cinder = Cinder::new(&ctx);
    let big = shapes::cuboid(Vec3::ONE).unwrap().mesh().clone();
    let small = shapes::cuboid(Vec3::splat(0.5)).unwrap().mesh().clone();
    // Pixel size of the default 512-pixel view over the pair's box (about 3.5 units wide).
    let probe = run_default(
        &ctx,
        &cinder,
        &[
            big.clone(),
            small.transformed(&Pose::from_translation(Vec3::new(1.5, 0.0, 0.0))),
        ],
    );
    let pixel = probe.views[0].pixel_size as f32;
    let offset = probe.views[0].edge_offset as f32;
    for (gap_px, expected) in [
        (-4.0, true),  // penetration of 4 pixels: found
        (0.0, true),   // touching: the offset edges enter the other box
        (0.25, false), // a quarter-pixel gap: the bounding boxes are disjoint, never drawn
        (4.0, false),  // four pixels apart: never reported
    ] {
        let x = 1.5 + gap_px * pixel;
        let meshes = [
            big.clone(),
            small.transformed(&Pose::from_translation(Vec3::new(x, 0.0, 0.0))),
        ];
        let solids: Vec<Solid> = meshes
            .iter()
            .map(|m| Solid::new(m.clone()).unwrap())
            .collect();
        assert_eq!(
            exact(&solids[0], &solids[1]),
            gap_px <= 0.0,
            "oracle at {gap_px} px"
        );
        let report = run_default(&ctx, &cinder, &meshes);
        assert_eq!(
            !report.pairs.is_empty(),
            expected,
            "gap {gap_px} px (pixel {pixel}, offset {offset}): {report:?}"
        );
    }
    // Without the offset, touching is decided by rasterization: no promise, but a clear
    // penetration is still found and a gap of a pixel is not reported.
    for (gap_px, expected) in [(-3.0, true), (1.0, false)] {
        let x = 1.5 + gap_px * pixel;
        let meshes = [
            big.clone(),
            small.transformed(&Pose::from_translation(Vec3::new(x, 0.0, 0.0))),
        ];
        let objects: Vec<CinderObject> = meshes.iter().map(object).collect();
        let options = CinderSceneOptions {
            edge_offset_pixels: 0.0,
            ..Default::default()
        };
        let report = cinder.run(&ctx, &objects, &options).unwrap();
        assert_eq!(
            !report.pairs.is_empty(),
            expected,
            "no offset, gap {gap_px} px"
        );
    }
}

/// A needle thinner than a pixel through a slab, placed on a pixel corner of the `z` view: its
/// edges, all parallel to `z` or shorter than a pixel there, produce no fragments along `z`. The
/// `x` and `y` views see them as long lines.
#[test]
fn cinder_scene_views_along_other_axes() {
    let Some(ctx) = gpu_or_skip("cinder_scene_views_along_other_axes") else {
        return;
    };
    let cinder = Cinder::new(&ctx);
    let slab = shapes::cuboid(Vec3::new(1.0, 1.0, 0.5))
        .unwrap()
        .mesh()
        .clone();
    let needle = shapes::cuboid(Vec3::new(0.001, 0.001, 2.0))
        .unwrap()
        .mesh()
        .clone();
    let with = |views| CinderSceneOptions {
        views,
        ..Default::default()
    };
    // The union box is the slab's in x and y, centred on the origin with an even pixel count:
    // multiples of the pixel size are pixel corners.
    let probe = cinder
        .run(
            &ctx,
            &[object(&slab), object(&needle)],
            &with(CinderViews::Z),
        )
        .unwrap();
    assert_eq!(probe.views[0].width % 2, 0);
    let pixel = probe.views[0].pixel_size as f32;
    let at = Vec3::new(
        (0.3 / pixel).round() * pixel,
        (0.1 / pixel).round() * pixel,
        0.0,
    );
    let needle = needle.transformed(&Pose::from_translation(at));
    let solids = [
        Solid::new(slab.clone()).unwrap(),
        Solid::new(needle.clone()).unwrap(),
    ];
    assert!(exact(&solids[0], &solids[1]));
    let objects = [object(&slab), object(&needle)];
    let z = cinder.run(&ctx, &objects, &with(CinderViews::Z)).unwrap();
    assert_eq!(z.views[0].pixel_size as f32, pixel);
    assert!(z.pairs.is_empty(), "the z view cannot see it: {:?}", z.hits);
    assert_eq!(z.views.len(), 1);
    assert!(
        !z.views[0].read_back,
        "nothing flagged, nothing read back (6.1)"
    );
    let fallback = cinder
        .run(&ctx, &objects, &with(CinderViews::ZThenXy))
        .unwrap();
    assert_eq!(fallback.pairs, vec![(0, 1)]);
    assert_eq!(fallback.hits, vec![(1, 0)]);
    assert_eq!(fallback.views.len(), 3);
    assert!(fallback.views[1..].iter().all(|v| v.read_back));
    check_points(&fallback, &[slab.clone(), needle.clone()]);
    let all = cinder.run(&ctx, &objects, &with(CinderViews::All)).unwrap();
    assert_eq!(all.pairs, vec![(0, 1)]);
    // Tilted, the needle is seen along z at once and no extra view runs.
    let tilt = Pose::new(Quat::from_rotation_x(0.3), at);
    let tilted = shapes::cuboid(Vec3::new(0.05, 0.05, 2.0))
        .unwrap()
        .mesh()
        .transformed(&tilt);
    let report = run_default(&ctx, &cinder, &[slab.clone(), tilted.clone()]);
    assert_eq!(report.pairs, vec![(0, 1)]);
    assert_eq!(report.views.len(), 1);
    check_points(&report, &[slab, tilted]);
}

/// A cuboid with a missing triangle and an inside-out sphere are reported as not closed (§4.1);
/// closed neighbours are not.
#[test]
fn cinder_scene_reports_meshes_that_are_not_closed() {
    let Some(ctx) = gpu_or_skip("cinder_scene_reports_meshes_that_are_not_closed") else {
        return;
    };
    let cinder = Cinder::new(&ctx);
    let cube = shapes::cuboid(Vec3::ONE).unwrap().mesh().clone();
    let mut open = object(&cube.transformed(&Pose::new(
        Quat::from_rotation_y(0.4),
        Vec3::new(0.8, 0.3, 0.2),
    )));
    open.triangles.remove(3);
    let inverted = shapes::icosphere(0.6, 2)
        .unwrap()
        .mesh()
        .flipped()
        .transformed(&Pose::from_translation(Vec3::new(6.0, 0.0, 0.0)));
    let inside = shapes::icosphere(0.2, 1)
        .unwrap()
        .mesh()
        .transformed(&Pose::from_translation(Vec3::new(6.1, 0.0, 0.0)));
    let objects = vec![object(&cube), open, object(&inverted), object(&inside)];
    let report = cinder
        .run(&ctx, &objects, &CinderSceneOptions::default())
        .unwrap();
    assert_eq!(report.not_closed, vec![1, 2], "{report:?}");
    assert!(report.pairs.contains(&(0, 1)));
}

#[test]
fn cinder_scene_rejects_bad_input_and_handles_empty_scenes() {
    let Some(ctx) = gpu_or_skip("cinder_scene_rejects_bad_input_and_handles_empty_scenes") else {
        return;
    };
    let cinder = Cinder::new(&ctx);
    let cube = object(shapes::cuboid(Vec3::ONE).unwrap().mesh());
    let nan = CinderObject {
        vertices: vec![[f32::NAN, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
        triangles: vec![[0, 1, 2]],
    };
    let bad_index = CinderObject {
        vertices: vec![[0.0; 3]; 3],
        triangles: vec![[0, 1, 3]],
    };
    let base = CinderSceneOptions::default();
    for (objects, options) in [
        (
            vec![cube.clone()],
            CinderSceneOptions {
                resolution: 0,
                ..base
            },
        ),
        (
            vec![cube.clone()],
            CinderSceneOptions {
                edge_offset_pixels: -1.0,
                ..base
            },
        ),
        (
            vec![cube.clone()],
            CinderSceneOptions {
                edge_offset_pixels: f32::NAN,
                ..base
            },
        ),
        (
            vec![cube.clone()],
            CinderSceneOptions {
                resolution: 8,
                edge_offset_pixels: 2.0,
                ..base
            },
        ),
        (vec![cube.clone(), nan], base),
        (vec![bad_index, cube.clone()], base),
    ] {
        assert!(matches!(
            cinder.run(&ctx, &objects, &options),
            Err(GpuError::InvalidInput { .. })
        ));
    }
    assert_eq!(
        cinder.run(&ctx, &[], &base).unwrap(),
        CinderSceneReport::default()
    );
    // Objects without triangles and objects whose boxes overlap nothing are not drawn.
    let far = object(
        &shapes::cuboid(Vec3::ONE)
            .unwrap()
            .mesh()
            .transformed(&Pose::from_translation(Vec3::new(5.0, 0.0, 0.0))),
    );
    let report = cinder
        .run(&ctx, &[cube.clone(), CinderObject::default(), far], &base)
        .unwrap();
    assert!(report.views.is_empty() && report.pairs.is_empty());
    // A tiny resolution still works (coarse, but a deep overlap is found).
    let moved = object(
        &shapes::cuboid(Vec3::ONE)
            .unwrap()
            .mesh()
            .transformed(&Pose::from_translation(Vec3::new(0.5, 0.4, 0.3))),
    );
    let coarse = CinderSceneOptions {
        resolution: 16,
        ..base
    };
    assert_eq!(
        cinder.run(&ctx, &[cube, moved], &coarse).unwrap().pairs,
        vec![(0, 1)]
    );
}

//! Tests of the spatial queries ([`crate::query`]) against their oracles: ray casts against an
//! exact closed segment–triangle test over every triangle of every body (nearest hit and every
//! crossing), including rays through edges and vertices, rays starting inside or on a solid,
//! grazing rays and the distance limit; point queries against `locate_point_posed` over every
//! body and against crossing parity; shape queries against the brute-force interference test;
//! box queries against the boxes compared directly; and every filter with a case that would
//! otherwise match.

use crate::*;
use interfere_geometry::containment::{PointLocation, locate_point_posed};
use interfere_geometry::glam::{DMat3, DQuat, DVec3, Vec3};
use interfere_geometry::shapes::{cuboid, icosphere, torus};
use interfere_geometry::{Aabb, DPose, Method, Solid, TriMesh, segment_intersects_triangle};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

fn mesh(solid: Solid) -> Arc<MeshShape> {
    Arc::new(MeshShape::new(solid).unwrap())
}

/// A box whose mesh frame is off its centre (so a dynamic body's mesh pose differs from its
/// centre-of-mass position).
fn offset_cuboid(half: Vec3, offset: Vec3) -> Solid {
    let c = cuboid(half).unwrap();
    let verts = c.vertices().iter().map(|v| *v + offset).collect();
    Solid::new(TriMesh::new(verts, c.triangles().to_vec()).unwrap()).unwrap()
}

fn random_unit(rng: &mut ChaCha8Rng) -> DVec3 {
    loop {
        let v = DVec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        );
        if v.length_squared() > 0.01 && v.length_squared() <= 1.0 {
            return v.normalize();
        }
    }
}

fn random_point(rng: &mut ChaCha8Rng, spread: f64) -> DVec3 {
    DVec3::new(
        rng.random_range(-spread..spread),
        rng.random_range(-spread..spread),
        rng.random_range(-spread..spread),
    )
}

fn random_rotation(rng: &mut ChaCha8Rng) -> DQuat {
    DQuat::from_axis_angle(random_unit(rng), rng.random_range(-3.0..3.0))
}

/// A random shape: a box, a geodesic sphere, a torus (not convex, its centre is outside).unwrap() or a
/// box off its frame's origin.
fn random_shape(rng: &mut ChaCha8Rng) -> Arc<MeshShape> {
    match rng.random_range(0..4) {
        0 => mesh(
            cuboid(Vec3::new(
                rng.random_range(0.2..0.6),
                rng.random_range(0.2..0.6),
                rng.random_range(0.2..0.6),
            ))
            .unwrap(),
        ),
        1 => mesh(icosphere(rng.random_range(0.2..0.6), rng.random_range(1..3)).unwrap()),
        2 => mesh(torus(0.5, 0.15, 14, 8).unwrap()),
        _ => mesh(offset_cuboid(
            Vec3::new(0.3, 0.2, 0.4),
            Vec3::new(0.25, -0.1, 0.3),
        )),
    }
}

/// A scene of `n` static and dynamic meshes at random poses in `[-spread, spread]³`, plus (with
/// `ground`) a tilted half-space well below.
fn random_scene(rng: &mut ChaCha8Rng, n: usize, spread: f64, ground: bool) -> Simulation {
    let mut sim = Simulation::new(SimulationSettings::default()).unwrap();
    for i in 0..n {
        let shape = random_shape(rng);
        let (t, q) = (random_point(rng, spread), random_rotation(rng));
        let body = if i % 2 == 0 {
            Body::fixed(t, q).unwrap()
        } else {
            Body::dynamic(&shape.mass_at(100.0), t, q).unwrap()
        };
        sim.insert(body, Some(BodyShape::mesh(shape))).unwrap();
    }
    if ground {
        let body = Body::fixed(
            DVec3::new(0.0, 0.0, -spread - 1.0),
            DQuat::from_rotation_x(0.2),
        )
        .unwrap();
        let plane = HalfSpace::new(DVec3::Z, DVec3::ZERO).unwrap();
        sim.insert(body, Some(BodyShape::half_space(plane)))
            .unwrap();
    }
    sim
}

/// A crossing found by the oracle.
#[derive(Clone, Copy, Debug)]
struct Touch {
    body: BodyHandle,
    triangle: Option<u32>,
    t: f64,
}

/// Oracle: every triangle of every body (world corners by the pose's `f64` transform) whose
/// closed triangle the closed segment `o → o + reach · d` meets, exactly, with the distance of
/// the meeting point from the triangle's plane; half-spaces by their plane. Touches in a
/// triangle's own plane (grazing) are counted in the second value and left out of the first.
fn oracle_touches(sim: &Simulation, o: DVec3, d: DVec3, reach: f64) -> (Vec<Touch>, usize) {
    let end = o + reach * d;
    let mut out = Vec::new();
    let mut grazing = 0;
    for h in sim.handles() {
        let body = sim.body(h).unwrap();
        match &sim.collider(h).unwrap().shape {
            Shape::Mesh(m) => {
                let pose = body.mesh_pose();
                let solid = m.solid();
                for t in 0..solid.triangle_count() {
                    let c = solid.triangle(t).map(|v| pose.transform_point(v));
                    if !segment_intersects_triangle(o, end, c) {
                        continue;
                    }
                    let n = (c[1] - c[0]).cross(c[2] - c[0]);
                    let denom = n.dot(d);
                    if denom == 0.0 {
                        grazing += 1;
                        continue;
                    }
                    out.push(Touch {
                        body: h,
                        triangle: Some(t as u32),
                        t: n.dot(c[0] - o) / denom,
                    });
                }
            }
            Shape::HalfSpace(hs) => {
                let (n, offset) = hs.world(&body.mesh_pose());
                let t = (offset - n.dot(o)) / n.dot(d);
                if t.is_finite() && (0.0..=reach).contains(&t) {
                    out.push(Touch {
                        body: h,
                        triangle: None,
                        t,
                    });
                }
            }
            _ => unreachable!("meshes and half-spaces only"),
        }
    }
    out.sort_by(|a, b| a.t.total_cmp(&b.t));
    (out, grazing)
}

const TOL: f64 = 1e-9;

/// The hit lies on the oracle's triangle (within rounding) and has its outward unit normal.
fn check_on_triangle(sim: &Simulation, hit: &RayHit, what: &str) {
    let Some(t) = hit.triangle else {
        return;
    };
    let body = sim.body(hit.body).unwrap();
    let Shape::Mesh(m) = &sim.collider(hit.body).unwrap().shape else {
        panic!("{what}: a triangle on a half-space");
    };
    let pose = body.mesh_pose();
    let c = m
        .solid()
        .triangle(t as usize)
        .map(|v| pose.transform_point(v));
    let n = (c[1] - c[0]).cross(c[2] - c[0]);
    let unit = n.normalize();
    assert!(
        (hit.normal - unit).length() < TOL,
        "{what}: normal {} vs triangle's {unit}",
        hit.normal
    );
    // Barycentric weights of the hit point, from sub-triangle areas along the normal.
    let w = [
        (c[1] - hit.point).cross(c[2] - hit.point).dot(n),
        (c[2] - hit.point).cross(c[0] - hit.point).dot(n),
        (c[0] - hit.point).cross(c[1] - hit.point).dot(n),
    ]
    .map(|x| x / n.length_squared());
    assert!(
        w.iter().all(|&x| x > -1e-7) && unit.dot(hit.point - c[0]).abs() < TOL,
        "{what}: point {} off triangle {t} (weights {w:?})",
        hit.point
    );
}

/// Whether a hit and an oracle touch are the same crossing.
fn same_crossing(hit: &RayHit, touch: &Touch) -> bool {
    hit.body == touch.body
        && hit.triangle == touch.triangle
        && (hit.distance - touch.t).abs() < TOL * (1.0 + touch.t)
}

/// Oracle: random rays (generic: they meet no edge or vertex) through random scenes give the
/// nearest exact crossing (distance, body, triangle, normal, point), and every crossing in order;
/// from inside a solid a non-solid ray reports where it leaves and a solid ray hits at 0, where
/// inside is decided by the parity of the oracle's crossings.
#[test]
fn ray_casts_match_brute_force() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let all = QueryFilter::default();
    let (mut hits, mut inside, mut through_all) = (0, 0, 0);
    for scene in 0..6 {
        let sim = random_scene(&mut rng, 14, 2.0, true);
        let handles: Vec<_> = sim.handles().collect();
        for ray in 0..120 {
            // A quarter of the rays start at a body's centre of mass (inside, except for tori).
            let o = if ray % 4 == 0 {
                sim.body(handles[rng.random_range(0..handles.len() - 1)])
                    .unwrap()
                    .position
            } else {
                random_point(&mut rng, 3.0)
            };
            let d = random_unit(&mut rng);
            let max = if ray % 3 == 0 {
                rng.random_range(0.5..4.0)
            } else {
                f64::INFINITY
            };
            let what = format!("scene {scene} ray {ray}: {o} → {d}, max {max}");
            let (touches, grazing) = oracle_touches(&sim, o, d, 1e3);
            assert_eq!(grazing, 0, "{what}: a random ray grazes");
            let ahead: Vec<_> = touches
                .iter()
                .filter(|t| t.t >= 0.0 && t.t <= max)
                .copied()
                .collect();
            // Nearest hit, hollow.
            let got = sim.cast_ray(o, d, max, false, &all);
            match (got, ahead.first()) {
                (None, None) => {}
                (Some(hit), Some(first)) => {
                    hits += 1;
                    assert!(
                        (hit.distance - first.t).abs() < TOL * (1.0 + first.t),
                        "{what}: distance {} vs {}",
                        hit.distance,
                        first.t
                    );
                    let tie = ahead.get(1).is_some_and(|s| s.t - first.t < 1e-6);
                    if !tie {
                        assert!(same_crossing(&hit, first), "{what}: {hit:?} vs {first:?}");
                    }
                    check_on_triangle(&sim, &hit, &what);
                    if hit.triangle.is_none() {
                        assert!((hit.normal - first_normal(&sim, hit.body)).length() < TOL);
                    }
                }
                (got, want) => panic!("{what}: got {got:?}, oracle {want:?}"),
            }
            // Every crossing.
            let every = sim.cast_ray_all(o, d, max, false, &all);
            assert_eq!(every.len(), ahead.len(), "{what}: {every:?} vs {ahead:?}");
            through_all += every.len();
            for (k, (hit, touch)) in every.iter().zip(&ahead).enumerate() {
                let tie = ahead
                    .iter()
                    .filter(|s| (s.t - touch.t).abs() < 1e-6)
                    .count()
                    > 1;
                assert!(
                    (hit.distance - touch.t).abs() < TOL * (1.0 + touch.t)
                        && (tie || same_crossing(hit, touch)),
                    "{what}: crossing {k}: {hit:?} vs {touch:?}"
                );
                check_on_triangle(&sim, hit, &what);
            }
            assert!(every.windows(2).all(|w| w[0].distance <= w[1].distance));
            // Solid: the bodies holding the origin, by the parity of the crossings ahead
            // (half-spaces by their plane).
            let holding: Vec<BodyHandle> = handles
                .iter()
                .copied()
                .filter(|&h| match &sim.collider(h).unwrap().shape {
                    Shape::Mesh(_) => {
                        touches.iter().filter(|t| t.body == h && t.t > 0.0).count() % 2 == 1
                    }
                    Shape::HalfSpace(hs) => {
                        let (n, off) = hs.world(&sim.body(h).unwrap().mesh_pose());
                        n.dot(o) <= off
                    }
                    _ => unreachable!("meshes and half-spaces only"),
                })
                .collect();
            let solid = sim.cast_ray(o, d, max, true, &all);
            match holding.first() {
                Some(&first) => {
                    inside += 1;
                    let hit = solid.unwrap_or_else(|| panic!("{what}: solid ray missed"));
                    assert_eq!(
                        (hit.body, hit.distance, hit.normal, hit.triangle),
                        (first, 0.0, DVec3::ZERO, None),
                        "{what}"
                    );
                    let zeros: Vec<_> = sim
                        .cast_ray_all(o, d, max, true, &all)
                        .into_iter()
                        .filter(|h| h.triangle.is_none() && h.normal == DVec3::ZERO)
                        .map(|h| h.body)
                        .collect();
                    assert_eq!(zeros, holding, "{what}");
                }
                None => assert_eq!(solid, got, "{what}"),
            }
        }
    }
    assert!(
        hits > 300 && inside > 100 && through_all > 500,
        "{hits} {inside} {through_all}"
    );
}

/// The outward world normal of a half-space body.
fn first_normal(sim: &Simulation, h: BodyHandle) -> DVec3 {
    match &sim.collider(h).unwrap().shape {
        Shape::HalfSpace(hs) => hs.world(&sim.body(h).unwrap().mesh_pose()).0,
        Shape::Mesh(_) => DVec3::NAN,
        _ => unreachable!("meshes and half-spaces only"),
    }
}

/// Watertightness: rays aimed through the vertices and edge midpoints of convex bodies at
/// random poses, towards their centres, hit at the vertex or edge (nothing slips between the
/// triangles there), and cross each body exactly twice (once in, once out; a crossing is never
/// counted on both triangles of an edge), whatever else is in the scene.
#[test]
fn rays_through_edges_and_vertices_are_watertight() {
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    let all = QueryFilter::default();
    let mut rays = 0;
    for case in 0..8 {
        let mut sim = Simulation::new(SimulationSettings::default()).unwrap();
        let shape = if case % 2 == 0 {
            mesh(cuboid(Vec3::new(0.5, 0.3, 0.4)).unwrap())
        } else {
            mesh(icosphere(0.5, 2).unwrap())
        };
        let (t, q) = (random_point(&mut rng, 0.5), random_rotation(&mut rng));
        let target = sim
            .insert(
                Body::fixed(t, q).unwrap(),
                Some(BodyShape::mesh(shape.clone())),
            )
            .unwrap();
        let pose = sim.body(target).unwrap().mesh_pose();
        let solid = shape.solid();
        let mut aims: Vec<DVec3> = solid
            .vertices()
            .iter()
            .map(|&v| pose.transform_point(v))
            .collect();
        for tri in solid.triangles() {
            for k in 0..3 {
                let (a, b) = (tri[k], tri[(k + 1) % 3]);
                if a < b {
                    let (pa, pb) = (
                        pose.transform_point(solid.vertices()[a as usize]),
                        pose.transform_point(solid.vertices()[b as usize]),
                    );
                    aims.push((pa + pb) * 0.5);
                }
            }
        }
        for (k, aim) in aims.iter().enumerate() {
            let from = t + (aim - t) * rng.random_range(2.0..4.0);
            let d = t - from;
            let what = format!("case {case} aim {k} at {aim}");
            let want = (aim - from).length();
            let hit = sim
                .cast_ray(from, d, f64::INFINITY, false, &all)
                .unwrap_or_else(|| panic!("{what}: slipped through"));
            assert!(
                hit.body == target && (hit.distance - want).abs() < TOL,
                "{what}: {hit:?}, expected distance {want}"
            );
            check_on_triangle(&sim, &hit, &what);
            let every = sim.cast_ray_all(from, d, f64::INFINITY, false, &all);
            assert_eq!(every.len(), 2, "{what}: {every:?}");
            assert!(
                every[0].normal.dot(d) < 0.0 && every[1].normal.dot(d) > 0.0,
                "{what}"
            );
            rays += 1;
        }
    }
    assert!(rays > 1000, "{rays}");
}

/// Adversarial rays against an axis-aligned box `[0.5, 1.5] × [-0.5, 0.5]²` (exact
/// coordinates): grazing a face or running along an edge (a hit, if any, is at the touching
/// point, and crossings stay paired), starting inside (leaving through the far face; `solid`
/// hits at 0), starting on the surface, the distance limit (inclusive), non-unit directions,
/// and invalid rays; and a half-space from above, below and along its plane.
#[test]
fn ray_edge_cases() {
    let mut sim = Simulation::new(SimulationSettings::default()).unwrap();
    let shape = mesh(cuboid(Vec3::splat(0.5)).unwrap());
    let b = sim
        .insert(
            Body::fixed(DVec3::new(1.0, 0.0, 0.0), DQuat::IDENTITY).unwrap(),
            Some(BodyShape::mesh(shape)),
        )
        .unwrap();
    let all = QueryFilter::default();
    let inf = f64::INFINITY;
    // Grazing the top face, along an edge and along a face's diagonal plane.
    for (o, d) in [
        (DVec3::new(-2.0, 0.2, 0.5), DVec3::X),
        (DVec3::new(-2.0, 0.5, 0.5), DVec3::X),
        (DVec3::new(-2.0, -0.5, 0.5), DVec3::X),
        (DVec3::new(1.0, -2.0, 0.5), DVec3::Y),
        (DVec3::new(-1.0, -1.5, 0.5), DVec3::new(1.0, 1.0, 0.0)),
    ] {
        let d = d.normalize();
        let (touches, grazing) = oracle_touches(&sim, o, d, 1e3);
        let entry = grazing_entry(o, d);
        assert!(
            grazing > 0 && entry < 5.0,
            "{o} {d}: the ray must graze the box"
        );
        assert!((touches[0].t - entry).abs() < TOL, "{o} {d}: {touches:?}");
        let every = sim.cast_ray_all(o, d, inf, false, &all);
        assert!(every.is_empty() || every.len() == 2, "{o} {d}: {every:?}");
        if let Some(hit) = sim.cast_ray(o, d, inf, false, &all) {
            assert!(
                hit.body == b && (hit.distance - entry).abs() < TOL,
                "{o} {d}: {hit:?}, entry {entry}"
            );
            assert_eq!(every[0], hit);
        }
    }
    // Starting inside: out through +x at 0.5; solid: at 0.
    let centre = DVec3::new(1.0, 0.0, 0.0);
    let out = sim.cast_ray(centre, DVec3::X, inf, false, &all).unwrap();
    assert_eq!(
        (out.body, out.distance, out.normal, out.point),
        (b, 0.5, DVec3::X, DVec3::new(1.5, 0.0, 0.0))
    );
    assert_eq!(
        sim.cast_ray_all(centre, DVec3::X, inf, false, &all).len(),
        1
    );
    let s = sim.cast_ray(centre, DVec3::X, inf, true, &all).unwrap();
    assert_eq!((s.distance, s.normal, s.triangle), (0.0, DVec3::ZERO, None));
    // On the surface: the face at distance 0, entering or leaving; solid: contained.
    let on = DVec3::new(0.5, 0.1, 0.2);
    for d in [DVec3::X, -DVec3::X] {
        let hit = sim.cast_ray(on, d, inf, false, &all).unwrap();
        assert_eq!((hit.distance, hit.normal), (0.0, -DVec3::X), "{d}");
        assert!(hit.distance.is_sign_positive(), "{d}: -0");
    }
    let s = sim.cast_ray(on, -DVec3::X, inf, true, &all).unwrap();
    assert_eq!((s.distance, s.triangle), (0.0, None));
    // The limit is inclusive; beyond it nothing is reported; the direction's length is ignored.
    let o = DVec3::new(-2.0, 0.1, 0.2);
    assert_eq!(sim.cast_ray(o, DVec3::X, 2.4, false, &all), None);
    assert_eq!(
        sim.cast_ray(o, DVec3::X, 2.5, false, &all)
            .unwrap()
            .distance,
        2.5
    );
    assert_eq!(sim.cast_ray_all(o, DVec3::X, 3.0, false, &all).len(), 1);
    let far = sim.cast_ray_all(o, DVec3::X * 7.0, inf, false, &all);
    assert_eq!(
        far.iter().map(|h| h.distance).collect::<Vec<_>>(),
        [2.5, 3.5]
    );
    assert_eq!(
        sim.cast_ray(o, -DVec3::X, inf, false, &all),
        None,
        "behind the origin"
    );
    // Invalid rays.
    for (o, d, max) in [
        (DVec3::NAN, DVec3::X, inf),
        (o, DVec3::ZERO, inf),
        (o, DVec3::new(f64::INFINITY, 0.0, 0.0), inf),
        (o, DVec3::X, -1.0),
        (o, DVec3::X, f64::NAN),
    ] {
        assert_eq!(sim.cast_ray(o, d, max, true, &all), None);
        assert!(sim.cast_ray_all(o, d, max, true, &all).is_empty());
    }
    // A ground half-space z ≤ -1.
    let g = sim
        .insert(
            Body::fixed(DVec3::new(0.0, 0.0, -1.0), DQuat::IDENTITY).unwrap(),
            Some(BodyShape::half_space(
                HalfSpace::new(DVec3::Z, DVec3::ZERO).unwrap(),
            )),
        )
        .unwrap();
    let down = sim
        .cast_ray(DVec3::new(5.0, 5.0, 4.0), -DVec3::Z, inf, false, &all)
        .unwrap();
    assert_eq!(
        (down.body, down.distance, down.normal, down.triangle),
        (g, 5.0, DVec3::Z, None)
    );
    let below = DVec3::new(5.0, 5.0, -2.0);
    assert_eq!(sim.cast_ray(below, -DVec3::Z, inf, false, &all), None);
    assert_eq!(
        sim.cast_ray(below, -DVec3::Z, inf, true, &all)
            .unwrap()
            .distance,
        0.0
    );
    let up = sim.cast_ray(below, DVec3::Z, inf, false, &all).unwrap();
    assert_eq!((up.body, up.distance, up.normal), (g, 1.0, DVec3::Z));
    assert_eq!(
        sim.cast_ray(DVec3::new(5.0, 5.0, 0.0), DVec3::X, inf, false, &all),
        None
    );
}

/// Where a ray in the plane `z = 0.5` first reaches the closed box `[0.5, 1.5] × [-0.5, 0.5]²`
/// (slab test in exact coordinates), or infinity.
fn grazing_entry(o: DVec3, d: DVec3) -> f64 {
    let (lo, hi) = (DVec3::new(0.5, -0.5, -0.5), DVec3::new(1.5, 0.5, 0.5));
    let (mut t0, mut t1) = (0.0f64, f64::INFINITY);
    for i in 0..3 {
        if d[i] == 0.0 {
            if o[i] < lo[i] || o[i] > hi[i] {
                return f64::INFINITY;
            }
        } else {
            let (a, b) = ((lo[i] - o[i]) / d[i], (hi[i] - o[i]) / d[i]);
            t0 = t0.max(a.min(b));
            t1 = t1.min(a.max(b));
        }
    }
    if t0 <= t1 { t0 } else { f64::INFINITY }
}

/// Oracle: the bodies containing a point are those `locate_point_posed` over every body (no box
/// pruning) does not place outside, half-spaces by their plane; for generic points that agrees
/// with the parity of a random ray's crossings. Vertices of posed bodies (on the surface) are
/// contained.
#[test]
fn point_queries_match_locate_point() {
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    let all = QueryFilter::default();
    let (mut found, mut on_surface) = (0, 0);
    for scene in 0..5 {
        let sim = random_scene(&mut rng, 14, 1.5, true);
        let brute = |p: DVec3| -> Vec<BodyHandle> {
            sim.handles()
                .filter(|&h| {
                    let body = sim.body(h).unwrap();
                    match &sim.collider(h).unwrap().shape {
                        Shape::Mesh(m) => {
                            locate_point_posed(m.solid(), &body.mesh_pose(), p)
                                != PointLocation::Outside
                        }
                        Shape::HalfSpace(hs) => {
                            let (n, off) = hs.world(&body.mesh_pose());
                            n.dot(p) <= off
                        }
                        _ => unreachable!("meshes and half-spaces only"),
                    }
                })
                .collect()
        };
        for k in 0..300 {
            let p = if k % 3 == 0 {
                let h = sim.handles().nth(rng.random_range(0..14)).unwrap();
                sim.body(h).unwrap().position + random_point(&mut rng, 0.3)
            } else {
                random_point(&mut rng, 2.5)
            };
            let got = sim.bodies_containing_point(p, &all);
            assert_eq!(got, brute(p), "scene {scene} point {p}");
            found += got.len();
            // Parity of a random ray's crossings (meshes only).
            let d = random_unit(&mut rng);
            let (touches, grazing) = oracle_touches(&sim, p, d, 1e3);
            assert_eq!(grazing, 0);
            for h in sim.handles() {
                if sim.collider(h).unwrap().shape.mesh().is_some() {
                    let odd = touches.iter().filter(|t| t.body == h).count() % 2 == 1;
                    assert_eq!(got.contains(&h), odd, "scene {scene} point {p} body {h:?}");
                }
            }
        }
        // Points on the surfaces: the posed vertices.
        for h in sim.handles() {
            let body = sim.body(h).unwrap();
            if let Shape::Mesh(m) = &sim.collider(h).unwrap().shape {
                for v in m.solid().vertices().iter().step_by(5) {
                    let p = body.mesh_pose().transform_point(*v);
                    let got = sim.bodies_containing_point(p, &all);
                    assert!(
                        got.contains(&h),
                        "scene {scene}: vertex {p} of {h:?} not contained"
                    );
                    assert_eq!(got, brute(p));
                    on_surface += 1;
                }
            }
        }
    }
    assert!(found > 300 && on_surface > 100, "{found} {on_surface}");
    // Exact boundary cases on an axis-aligned box [-0.5, 0.5]³ shifted by (1, 0, 0).
    let mut sim = Simulation::new(SimulationSettings::default()).unwrap();
    let b = sim
        .insert(
            Body::fixed(DVec3::X, DQuat::IDENTITY).unwrap(),
            Some(BodyShape::mesh(mesh(cuboid(Vec3::splat(0.5)).unwrap()))),
        )
        .unwrap();
    let above = |x: f64| f64::from_bits(x.to_bits() + 1);
    for (p, inside) in [
        (DVec3::new(1.0, 0.0, 0.0), true),
        (DVec3::new(1.5, 0.1, 0.2), true),         // on a face
        (DVec3::new(1.5, 0.5, 0.2), true),         // on an edge
        (DVec3::new(1.5, 0.5, -0.5), true),        // a corner
        (DVec3::new(above(1.5), 0.1, 0.2), false), // just outside the face
        (DVec3::new(0.5, 0.0, above(0.5)), false),
        (DVec3::new(3.0, 0.0, 0.0), false),
        (DVec3::NAN, false),
    ] {
        assert_eq!(
            sim.bodies_containing_point(p, &all) == vec![b],
            inside,
            "{p}"
        );
    }
}

/// Oracle: the bodies interfering with a shape at a pose are those the brute-force test
/// (`BodyShape::interference` with `Method::Brute`: every triangle pair exactly, then exact
/// containment) finds, with half-spaces by their vertices strictly below the plane; including
/// nested and face-touching shapes.
#[test]
fn shape_queries_match_brute_force() {
    let mut rng = ChaCha8Rng::seed_from_u64(14);
    let all = QueryFilter::default();
    let (mut found, mut on_ground, mut off_ground) = (0, 0, 0);
    for scene in 0..5 {
        let sim = random_scene(&mut rng, 12, 1.5, true);
        for k in 0..30 {
            let shape = if k % 10 == 9 {
                Shape::HalfSpace(HalfSpace::new(random_unit(&mut rng), DVec3::ZERO).unwrap())
            } else {
                Shape::Mesh(random_shape(&mut rng))
            };
            let mut pose = DPose {
                rotation: DMat3::from_quat(random_rotation(&mut rng)),
                translation: random_point(&mut rng, 1.8),
            };
            if k % 3 == 1 {
                // Near the ground (its plane passes through z = -2.5, tilted).
                pose.translation.z = -2.5 + rng.random_range(-0.6..0.6);
            }
            let want: Vec<BodyHandle> = sim
                .handles()
                .filter(|&h| {
                    let bpose = sim.body(h).unwrap().mesh_pose();
                    match (&sim.collider(h).unwrap().shape, &shape) {
                        (Shape::Mesh(m), Shape::Mesh(q)) => {
                            m.queries()
                                .interference(
                                    q.queries(),
                                    &bpose.inverse().mul(&pose),
                                    Method::Brute,
                                    false,
                                )
                                .unwrap()
                                .intersecting
                        }
                        (Shape::HalfSpace(hs), Shape::Mesh(q)) => {
                            let (n, off) = hs.world(&bpose);
                            q.solid()
                                .vertices()
                                .iter()
                                .any(|v| n.dot(pose.transform_point(*v)) < off)
                        }
                        (Shape::Mesh(m), Shape::HalfSpace(hq)) => {
                            let (n, off) = hq.world(&pose);
                            m.solid()
                                .vertices()
                                .iter()
                                .any(|v| n.dot(bpose.transform_point(*v)) < off)
                        }
                        (Shape::HalfSpace(_), Shape::HalfSpace(_)) => false,
                        _ => unreachable!("meshes and half-spaces only"),
                    }
                })
                .collect();
            let got = sim.intersecting_bodies(&shape, &pose, &all);
            assert_eq!(got, want, "scene {scene} query {k}");
            found += got.len();
            let ground = sim.handles().last().unwrap();
            if shape.mesh().is_some() && k % 3 == 1 {
                if got.contains(&ground) {
                    on_ground += 1;
                } else {
                    off_ground += 1;
                }
            }
        }
    }
    assert!(
        found > 60 && on_ground > 5 && off_ground > 5,
        "{found} {on_ground} {off_ground}"
    );
    // Nested, touching face to face, and a hair apart (axis-aligned, exact coordinates).
    let mut sim = Simulation::new(SimulationSettings::default()).unwrap();
    let big = sim
        .insert(
            Body::fixed(DVec3::ZERO, DQuat::IDENTITY).unwrap(),
            Some(BodyShape::mesh(mesh(cuboid(Vec3::splat(1.0)).unwrap()))),
        )
        .unwrap();
    let small = Shape::Mesh(mesh(cuboid(Vec3::splat(0.25)).unwrap()));
    let at = |x: f64| DPose {
        rotation: DMat3::IDENTITY,
        translation: DVec3::new(x, 0.0, 0.0),
    };
    assert_eq!(
        sim.intersecting_bodies(&small, &at(0.1), &all),
        [big],
        "nested"
    );
    assert_eq!(
        sim.intersecting_bodies(&small, &at(1.25), &all),
        [big],
        "touching"
    );
    let apart = f64::from_bits(1.25f64.to_bits() + 1);
    assert!(
        sim.intersecting_bodies(&small, &at(apart), &all).is_empty(),
        "apart"
    );
    assert!(sim.intersecting_bodies(&small, &at(3.0), &all).is_empty());
    let bad = DPose {
        rotation: DMat3::IDENTITY,
        translation: DVec3::NAN,
    };
    assert!(sim.intersecting_bodies(&small, &bad, &all).is_empty());
}

/// Oracle: the bodies in a box are those whose world box overlaps it, compared directly, and
/// half-spaces reaching it (some corner of the box on or below the plane, all eight tried).
#[test]
fn box_queries_match_brute_force() {
    let mut rng = ChaCha8Rng::seed_from_u64(15);
    let all = QueryFilter::default();
    let mut found = 0;
    for _ in 0..5 {
        let sim = random_scene(&mut rng, 16, 2.0, true);
        for _ in 0..100 {
            let c = random_point(&mut rng, 2.5);
            let e = DVec3::new(
                rng.random_range(0.0..1.0),
                rng.random_range(0.0..1.0),
                rng.random_range(0.0..1.0),
            );
            let q = Aabb::new((c - e).as_vec3(), (c + e).as_vec3());
            let want: Vec<_> = sim
                .handles()
                .filter(|&h| {
                    let body = sim.body(h).unwrap();
                    match &sim.collider(h).unwrap().shape {
                        Shape::Mesh(m) => {
                            let b = m.world_aabb(&body.mesh_pose()).unwrap();
                            (0..3).all(|i| b.min[i] <= q.max[i] && q.min[i] <= b.max[i])
                        }
                        Shape::HalfSpace(hs) => {
                            let (n, off) = hs.world(&body.mesh_pose());
                            (0..8).any(|k| {
                                let corner = DVec3::new(
                                    if k & 1 == 0 { q.min.x } else { q.max.x } as f64,
                                    if k & 2 == 0 { q.min.y } else { q.max.y } as f64,
                                    if k & 4 == 0 { q.min.z } else { q.max.z } as f64,
                                );
                                n.dot(corner) <= off
                            })
                        }
                        _ => unreachable!("meshes and half-spaces only"),
                    }
                })
                .collect();
            let got = sim.bodies_in_aabb(&q, &all);
            assert_eq!(got, want);
            found += got.len();
        }
        assert!(sim.bodies_in_aabb(&Aabb::EMPTY, &all).is_empty());
    }
    assert!(found > 200, "{found}");
}

/// Every filter removes a body each query would otherwise report: layers (both directions of
/// the interaction test), exclusion, sensors, the predicate; and a removed body is never
/// reported.
#[test]
fn filters_remove_what_would_match() {
    let mut sim = Simulation::new(SimulationSettings::default()).unwrap();
    let shape = mesh(cuboid(Vec3::splat(0.5)).unwrap());
    let place = |x: f64| Body::fixed(DVec3::new(x, 0.0, 0.0), DQuat::IDENTITY).unwrap();
    // Three boxes along +x at 2, 4, 6: a plain one, one in group 2 only, a sensor.
    let plain = sim
        .insert(place(2.0), Some(BodyShape::mesh(shape.clone())))
        .unwrap();
    let grouped = sim
        .insert(
            place(4.0),
            Some(BodyShape::mesh(shape.clone()).with_layers(CollisionLayers::new(0b10, 0b10))),
        )
        .unwrap();
    let sensor = sim
        .insert(
            place(6.0),
            Some(BodyShape::mesh(shape.clone()).with_sensor(true)),
        )
        .unwrap();
    let ray = |f: &QueryFilter<'_>| {
        sim.cast_ray(DVec3::ZERO, DVec3::X, f64::INFINITY, false, f)
            .map(|h| h.body)
    };
    let ray_bodies = |f: &QueryFilter<'_>| {
        let mut b: Vec<_> = sim
            .cast_ray_all(DVec3::ZERO, DVec3::X, f64::INFINITY, false, f)
            .into_iter()
            .map(|h| h.body)
            .collect();
        b.dedup();
        b
    };
    let points = |f: &QueryFilter<'_>| -> Vec<BodyHandle> {
        [2.0, 4.0, 6.0]
            .into_iter()
            .flat_map(|x| sim.bodies_containing_point(DVec3::new(x, 0.0, 0.0), f))
            .collect()
    };
    let probe = Shape::Mesh(mesh(cuboid(Vec3::new(3.0, 0.1, 0.1)).unwrap()));
    let probe_pose = DPose {
        rotation: DMat3::IDENTITY,
        translation: DVec3::new(4.0, 0.0, 0.0),
    };
    let shapes = |f: &QueryFilter<'_>| sim.intersecting_bodies(&probe, &probe_pose, f);
    let boxed = |f: &QueryFilter<'_>| {
        sim.bodies_in_aabb(
            &Aabb::new(Vec3::new(1.0, -1.0, -1.0), Vec3::new(7.0, 1.0, 1.0)),
            f,
        )
    };

    let everything = vec![plain, grouped, sensor];
    let all = QueryFilter::default();
    assert_eq!(ray(&all), Some(plain));
    assert_eq!(ray_bodies(&all), everything);
    assert_eq!(points(&all), everything);
    assert_eq!(shapes(&all), everything);
    assert_eq!(boxed(&all), everything);

    let check = |f: QueryFilter<'_>, want: Vec<BodyHandle>, what: &str| {
        assert_eq!(ray(&f), want.first().copied(), "{what}: first hit");
        assert_eq!(ray_bodies(&f), want, "{what}: all hits");
        assert_eq!(points(&f), want, "{what}: points");
        assert_eq!(shapes(&f), want, "{what}: shapes");
        assert_eq!(boxed(&f), want, "{what}: boxes");
    };
    // Layers: a query in group 1 collides with neither group 2 body...
    check(
        QueryFilter::default().with_layers(CollisionLayers::new(0b01, u32::MAX)),
        vec![plain, sensor],
        "query memberships",
    );
    // ...nor does one whose filters leave out group 2.
    check(
        QueryFilter::default().with_layers(CollisionLayers::new(u32::MAX, 0b01)),
        vec![plain, sensor],
        "query filters",
    );
    check(
        QueryFilter::default().with_layers(CollisionLayers::new(0b10, 0b10)),
        vec![plain, grouped, sensor],
        "group 2 query",
    );
    check(
        QueryFilter::default().with_layers(CollisionLayers::NONE),
        vec![],
        "no layers",
    );
    check(
        QueryFilter::default().excluding([plain]),
        vec![grouped, sensor],
        "exclusion",
    );
    check(
        QueryFilter::default().without_sensors(),
        vec![plain, grouped],
        "sensors",
    );
    let not_plain = |h: BodyHandle| h != plain;
    check(
        QueryFilter::default().with_predicate(&not_plain),
        vec![grouped, sensor],
        "predicate",
    );
    // A removed body is gone; its slot's next body has a new handle.
    sim.remove(plain).unwrap();
    assert_eq!(
        sim.cast_ray(DVec3::ZERO, DVec3::X, f64::INFINITY, false, &all)
            .map(|h| h.body),
        Some(grouped)
    );
    let again = sim
        .insert(place(2.0), Some(BodyShape::mesh(shape)))
        .unwrap();
    assert_ne!(again, plain);
    assert_eq!(
        sim.cast_ray(
            DVec3::ZERO,
            DVec3::X,
            f64::INFINITY,
            false,
            &QueryFilter::default().excluding([plain])
        )
        .map(|h| h.body),
        Some(again)
    );
}

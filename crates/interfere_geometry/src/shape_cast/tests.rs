//! Oracles for the capsule casts: dense sampling of the path with independently computed
//! distances, the brute-force minimum over a mesh's triangles for the tree search, analytic
//! times against planes and boxes, and the sliding capsule on a tessellated floor.

use super::*;
use crate::primitives::closest::on_triangle;
use crate::shapes::{icosphere, subdivided_cuboid};
use glam::{DMat3, Vec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn rnd(rng: &mut ChaCha8Rng, s: f64) -> DVec3 {
    DVec3::new(
        rng.random_range(-s..s),
        rng.random_range(-s..s),
        rng.random_range(-s..s),
    )
}

/// Distance from the capsule core to a convex set by dense sampling of the core (an upper
/// bound within `len/2n` of the true one), given the set's closest-point map.
fn sampled_distance(a: DVec3, b: DVec3, onto: &dyn Fn(DVec3) -> DVec3) -> f64 {
    let n = 400;
    (0..=n)
        .map(|i| {
            let x = a + (b - a) * (i as f64 / n as f64);
            (x - onto(x)).length()
        })
        .fold(f64::INFINITY, f64::min)
}

/// The first sampled `t` where the sampled distance is within `r`, along `steps` samples.
fn sampled_first_contact(
    c: &Capsule,
    d: DVec3,
    onto: &dyn Fn(DVec3) -> DVec3,
    steps: usize,
) -> (Option<f64>, f64) {
    let mut min_gap = f64::INFINITY;
    let mut first = None;
    for i in 0..=steps {
        let t = i as f64 / steps as f64;
        let g = sampled_distance(c.a + d * t, c.b + d * t, onto) - c.radius;
        min_gap = min_gap.min(g);
        if first.is_none() && g <= 0.0 {
            first = Some(t);
        }
    }
    (first, min_gap)
}

/// Compares a cast against the sampled path: a clear crossing (the sampled gap goes below
/// `−depth`) is found within a sample step and never after the sampled contact; a path that
/// stays clear of the obstacle reports nothing.
fn check_against_samples(
    hit: Option<CastHit>,
    c: &Capsule,
    d: DVec3,
    onto: &dyn Fn(DVec3) -> DVec3,
    what: &str,
) -> bool {
    let steps = 400;
    let len = (c.b - c.a).length();
    let slack = len / 800.0 + 1e-9;
    let (first, min_gap) = sampled_first_contact(c, d, onto, steps);
    let start_gap = sampled_distance(c.a, c.b, onto) - c.radius;
    if start_gap < slack {
        return false; // starts in contact: not this oracle's case
    }
    match (hit, first) {
        (Some(h), Some(tb)) => {
            assert!(
                h.t <= tb + 1e-9,
                "{what}: hit at {} after the sampled contact {tb}",
                h.t
            );
            if min_gap < -0.01 {
                assert!(
                    h.t >= tb - 1.0 / steps as f64 - slack / d.length(),
                    "{what}: hit at {} well before the sampled contact {tb}",
                    h.t
                );
            }
            // At the hit the capsule touches: the sampled gap there is about zero.
            let at = sampled_distance(c.a + d * h.t, c.b + d * h.t, onto) - c.radius;
            assert!(at.abs() < slack + 1e-9, "{what}: gap {at} at the hit");
            true
        }
        (None, Some(_)) => {
            assert!(
                min_gap > -0.01 * c.radius - slack,
                "{what}: missed a crossing {min_gap} deep"
            );
            false
        }
        (Some(h), None) => {
            let at = sampled_distance(c.a + d * h.t, c.b + d * h.t, onto) - c.radius;
            assert!(
                at < slack + 1e-9,
                "{what}: a hit at {} where the sampled gap is {at}",
                h.t
            );
            true
        }
        (None, None) => false,
    }
}

/// Oracle: random capsules moving past random triangles against the sampled path.
#[test]
fn triangle_casts_match_the_sampled_path() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut hits = 0;
    for k in 0..300 {
        let tri = [rnd(&mut rng, 1.0), rnd(&mut rng, 1.0), rnd(&mut rng, 1.0)];
        let a = rnd(&mut rng, 2.5);
        let b = if k % 4 == 0 {
            a
        } else {
            a + rnd(&mut rng, 0.6)
        };
        let c = Capsule::new(a, b, rng.random_range(0.05..0.5)).unwrap();
        // Aim roughly at the triangle.
        let d = (tri[0] - a) * rng.random_range(0.5..2.5) + rnd(&mut rng, 0.8);
        let onto = |x: DVec3| on_triangle(x, tri[0], tri[1], tri[2]);
        let hit = cast_capsule_triangle(&c, d, tri);
        hits += usize::from(check_against_samples(hit, &c, d, &onto, "triangle"));
    }
    assert!(
        hits > 60,
        "only {hits} hits: the oracle saw too few contacts"
    );
}

/// Oracle: casts against placed spheres, capsules, boxes and cylinders against the sampled
/// path (the closest points found independently: sampled core, closed-form projections).
#[test]
fn primitive_casts_match_the_sampled_path() {
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    let mut hits = 0;
    for k in 0..240 {
        let prim = match k % 4 {
            0 => Primitive::sphere(rng.random_range(0.2..1.0)),
            1 => Primitive::capsule(rng.random_range(0.1..0.8), rng.random_range(0.1..0.6)),
            2 => Primitive::cuboid(DVec3::new(
                rng.random_range(0.1..1.0),
                rng.random_range(0.1..1.0),
                rng.random_range(0.1..1.0),
            )),
            _ => Primitive::cylinder(rng.random_range(0.1..0.8), rng.random_range(0.1..0.8)),
        }
        .unwrap();
        let axis = rnd(&mut rng, 1.0).normalize_or(DVec3::X);
        let pose = DPose {
            rotation: DMat3::from_axis_angle(axis, rng.random_range(0.0..3.0)),
            translation: rnd(&mut rng, 0.5),
        };
        let inv = pose.inverse();
        let onto = move |x: DVec3| -> DVec3 {
            let l = inv.transform_dpoint(x);
            let p = match prim {
                Primitive::Sphere { radius } => l.normalize_or_zero() * radius.min(l.length()),
                Primitive::Capsule {
                    half_length,
                    radius,
                } => {
                    let s = DVec3::new(0.0, l.y.clamp(-half_length, half_length), 0.0);
                    s + (l - s).normalize_or_zero() * radius.min((l - s).length())
                }
                Primitive::Cuboid { half_extents } => on_box(l, half_extents),
                Primitive::Cylinder {
                    half_height,
                    radius,
                } => on_cylinder(l, half_height, radius),
                Primitive::HalfSpace { .. } => unreachable!(),
            };
            pose.transform_dpoint(p)
        };
        let a = rnd(&mut rng, 3.0);
        let b = if k % 3 == 0 {
            a
        } else {
            a + rnd(&mut rng, 0.6)
        };
        let c = Capsule::new(a, b, rng.random_range(0.05..0.4)).unwrap();
        let d = (pose.translation - a) * rng.random_range(0.5..2.5) + rnd(&mut rng, 1.0);
        let hit = cast_capsule_primitive(&c, d, &prim, &pose);
        hits += usize::from(check_against_samples(hit, &c, d, &onto, prim.kind().name()));
    }
    assert!(hits > 60, "only {hits} hits");
}

/// Analytic: a sphere dropped onto a half-space and onto an axis-aligned box top lands when its
/// lowest point reaches the plane; a capsule lying down lands on both core ends at once.
#[test]
fn drops_onto_a_plane_and_a_box_land_at_the_analytic_time() {
    let ground = Primitive::half_space(DVec3::Z).unwrap();
    let slab = Primitive::cuboid(DVec3::new(5.0, 5.0, 0.5)).unwrap();
    let at = |z: f64| DPose {
        rotation: DMat3::IDENTITY,
        translation: DVec3::new(0.0, 0.0, z),
    };
    let ball = Capsule::new(DVec3::new(0.3, 0.2, 2.0), DVec3::new(0.3, 0.2, 2.0), 0.25).unwrap();
    let d = DVec3::new(0.4, 0.0, -4.0);
    // Plane z = 0: the centre reaches 0.25 at t = (2 − 0.25) / 4.
    let h = cast_capsule_primitive(&ball, d, &ground, &at(0.0)).unwrap();
    assert!((h.t - 1.75 / 4.0).abs() < 1e-14, "{}", h.t);
    assert!((h.normal - DVec3::Z).length() < 1e-14);
    // Box top z = 0.3 (centre −0.2): the centre reaches 0.55 at t = 1.45 / 4.
    let h = cast_capsule_primitive(&ball, d, &slab, &at(-0.2)).unwrap();
    assert!((h.t - 1.45 / 4.0).abs() < 1e-12, "{}", h.t);
    assert!((h.normal - DVec3::Z).length() < 1e-9);
    // A lying capsule on a box top.
    let lying = Capsule::new(DVec3::new(-0.5, 0.0, 1.0), DVec3::new(0.5, 0.0, 1.0), 0.2).unwrap();
    let h = cast_capsule_primitive(&lying, DVec3::new(0.0, 0.0, -2.0), &slab, &at(-0.5)).unwrap();
    assert!((h.t - 0.4).abs() < 1e-12, "{}", h.t);
    // Moving away or along the plane: no hit; starting in contact and pushing in: t = 0.
    assert!(cast_capsule_primitive(&ball, DVec3::Z, &ground, &at(0.0)).is_none());
    let resting = ball.translated(DVec3::new(0.0, 0.0, -1.75));
    assert!(cast_capsule_primitive(&resting, DVec3::X, &ground, &at(0.0)).is_none());
    let h = cast_capsule_primitive(&resting, -DVec3::Z, &ground, &at(0.0)).unwrap();
    assert_eq!(h.t, 0.0);
}

/// Oracle: the tree search of a mesh gives the earliest hit over all of its triangles.
#[test]
fn mesh_casts_equal_the_earliest_triangle_hit() {
    let solid = icosphere(0.8, 2).unwrap();
    let mesh = solid.mesh();
    let tree = BalancedTree::build(mesh);
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    let mut hits = 0;
    for k in 0..120 {
        let pose = DPose {
            rotation: DMat3::from_axis_angle(
                rnd(&mut rng, 1.0).normalize_or(DVec3::Y),
                rng.random_range(0.0..3.0),
            ),
            translation: rnd(&mut rng, 0.3),
        };
        let a = rnd(&mut rng, 1.0).normalize_or(DVec3::X) * rng.random_range(1.3..2.5);
        let b = a + rnd(&mut rng, 0.4) * f64::from(u8::from(k % 2 == 0));
        let c = Capsule::new(a, b, rng.random_range(0.05..0.3)).unwrap();
        let d = -a * rng.random_range(0.2..1.5) + rnd(&mut rng, 0.8);
        let got = cast_capsule_mesh(&c, d, mesh, &tree, &pose);
        let mut brute: Option<CastHit> = None;
        for t in 0..mesh.triangle_count() {
            let tri = mesh
                .triangle(t)
                .map(|v| pose.transform_dpoint(v.as_dvec3()));
            if let Some(mut h) = cast_capsule_triangle(&c, d, tri) {
                h.triangle = Some(t as u32);
                if brute.is_none_or(|b| h.before(&b)) {
                    brute = Some(h);
                }
            }
        }
        match (got, brute) {
            (Some(g), Some(b)) => {
                hits += 1;
                assert!((g.t - b.t).abs() < 1e-9, "{} vs {}", g.t, b.t);
                // Of simultaneous touches, the most direct approach.
                assert!(-d.dot(g.normal) >= -d.dot(b.normal) - 1e-12);
            }
            (None, None) => {}
            (g, b) => panic!("tree {g:?} vs all triangles {b:?}"),
        }
    }
    assert!(hits > 40, "{hits}");
}

/// No internal edges: a capsule standing on a finely tessellated floor slides across hundreds
/// of coplanar edges in every direction without one hit, however it was put down (dropped by a
/// cast, at rest at its skin); pushed into the floor it is stopped at once with the face normal.
#[test]
fn a_capsule_slides_over_a_tessellated_floor_without_touching_its_edges() {
    let solid = subdivided_cuboid(Vec3::new(4.0, 4.0, 0.25), 64).unwrap();
    let mesh = solid.mesh();
    let tree = BalancedTree::build(mesh);
    let mut rng = ChaCha8Rng::seed_from_u64(14);
    for k in 0..40 {
        let pose = DPose {
            rotation: DMat3::IDENTITY,
            translation: DVec3::new(0.0, 0.0, -0.25),
        };
        let x = DVec3::new(
            rng.random_range(-2.0..2.0),
            rng.random_range(-2.0..2.0),
            0.0,
        );
        let standing = if k % 2 == 0 {
            Capsule::new(x + DVec3::Z * 0.8, x + DVec3::Z * 1.4, 0.3).unwrap()
        } else {
            Capsule::new(x + DVec3::Z * 0.8, x + DVec3::Z * 0.8, 0.3).unwrap()
        };
        // Put it down with a cast (as the controller's ground snap does).
        let down = DVec3::new(0.0, 0.0, -1.0);
        let h = cast_capsule_mesh(&standing, down, mesh, &tree, &pose).unwrap();
        assert!((h.normal - DVec3::Z).length() < 1e-9);
        let placed = standing.translated(down * h.t);
        assert!((placed.a.z - 0.3).abs() < 1e-9, "{}", placed.a.z);
        let angle = rng.random_range(0.0..std::f64::consts::TAU);
        let along = DVec3::new(angle.cos(), angle.sin(), 0.0) * 1.5;
        let slide = cast_capsule_mesh(&placed, along, mesh, &tree, &pose);
        assert!(slide.is_none(), "snagged on {slide:?}");
        let into = cast_capsule_mesh(
            &placed,
            along + DVec3::new(0.0, 0.0, -0.3),
            mesh,
            &tree,
            &pose,
        )
        .unwrap();
        assert_eq!(into.t, 0.0);
        assert!(
            (into.normal - DVec3::Z).length() < 1e-9,
            "{:?}",
            into.normal
        );
    }
}

/// The same casts far from the origin: times and normals hold at 10⁵ m.
#[test]
fn casts_far_from_the_origin_agree() {
    let tri = [
        DVec3::new(-1.0, -1.0, 0.0),
        DVec3::new(2.0, -1.0, 0.1),
        DVec3::new(0.0, 2.0, -0.1),
    ];
    let c = Capsule::new(DVec3::new(0.1, 0.2, 1.0), DVec3::new(0.3, 0.2, 1.5), 0.2).unwrap();
    let d = DVec3::new(0.2, -0.1, -1.5);
    let near = cast_capsule_triangle(&c, d, tri).unwrap();
    let off = DVec3::new(1e5, -2e5, 3e4);
    let far = cast_capsule_triangle(&c.translated(off), d, tri.map(|v| v + off)).unwrap();
    assert!((near.t - far.t).abs() < 1e-8, "{} vs {}", near.t, far.t);
    assert!((near.normal - far.normal).length() < 1e-6);
}

/// Proximities: a capsule pressed 1 cm into a box top reports a depth of 1 cm with the top's
/// normal; a mesh floor reports each triangle under it; nothing beyond the margin.
#[test]
fn proximities_report_depth_and_direction() {
    let slab = Primitive::cuboid(DVec3::new(5.0, 5.0, 0.5)).unwrap();
    let pose = DPose {
        rotation: DMat3::IDENTITY,
        translation: DVec3::new(0.0, 0.0, -0.5),
    };
    let c = Capsule::new(DVec3::new(0.0, 0.0, 0.29), DVec3::new(0.0, 0.0, 1.0), 0.3).unwrap();
    let p = capsule_primitive_proximity(&c, &slab, &pose, 0.05).unwrap();
    assert!((p.distance + 0.01).abs() < 1e-9, "{}", p.distance);
    assert!((p.normal - DVec3::Z).length() < 1e-9);
    assert!(capsule_primitive_proximity(&c.translated(DVec3::Z), &slab, &pose, 0.05).is_none());
    let solid = subdivided_cuboid(Vec3::new(4.0, 4.0, 0.25), 16).unwrap();
    let tree = BalancedTree::build(solid.mesh());
    let floor = DPose {
        rotation: DMat3::IDENTITY,
        translation: DVec3::new(0.0, 0.0, -0.25),
    };
    let near = capsule_mesh_proximities(&c, solid.mesh(), &tree, &floor, 0.05);
    assert!(!near.is_empty());
    let deepest = near
        .iter()
        .map(|p| p.distance)
        .fold(f64::INFINITY, f64::min);
    assert!((deepest + 0.01).abs() < 1e-9, "{deepest}");
    for p in &near {
        assert!(p.distance <= 0.05);
    }
}

//! Tests of compounds with mesh parts ([`CompoundShape::with_meshes`]): mass properties against
//! the divergence theorem over the parts' merged surfaces and against closed forms, contact
//! volumes and gradients against analytic box overlaps (mesh part against a mesh, a half-space,
//! and beside a primitive part), resting on a half-space and on a mesh slab, and the spatial
//! queries against the parts' own geometry.

use crate::tests::test_bodies::{add_ground, add_shape, add_slab, at, contact};
use crate::*;
use interfere_geometry::glam::{DMat3, DQuat, DVec3, Vec3};
use interfere_geometry::shapes::{cuboid, icosphere};
use interfere_geometry::{CompoundPart, DPose};
use std::f64::consts::PI;
use std::sync::Arc;

const DENSITY: f64 = 700.0;

fn mesh(solid: interfere_geometry::Solid) -> Arc<MeshShape> {
    Arc::new(MeshShape::new(solid).unwrap())
}

fn cube(half: f32) -> Arc<MeshShape> {
    mesh(cuboid(Vec3::splat(half)).unwrap())
}

fn pose(rotation: DQuat, translation: DVec3) -> DPose {
    DPose {
        rotation: DMat3::from_quat(rotation),
        translation,
    }
}

fn part(shape: &Arc<MeshShape>, pose: DPose) -> MeshPart {
    MeshPart {
        shape: shape.clone(),
        pose,
    }
}

/// A dynamic body of `shape` at [`DENSITY`] whose collider frame is at `origin`.
fn add(sim: &mut Simulation, shape: &Shape, origin: DVec3, rotation: DQuat) -> BodyHandle {
    add_shape(sim, shape, DENSITY, origin, rotation)
}

fn weightless() -> Simulation {
    let mut s = SimulationSettings::default();
    s.world.gravity = DVec3::ZERO;
    Simulation::new(s).unwrap()
}

/// Two cube meshes (half side 0.25) at `x = ±0.6`: the parts used below.
fn two_cubes() -> Shape {
    let c = cube(0.25);
    Shape::compound_with_meshes(
        Vec::new(),
        vec![
            part(&c, at(DVec3::new(-0.6, 0.0, 0.0))),
            part(
                &c,
                pose(DQuat::from_rotation_z(PI / 2.0), DVec3::new(0.6, 0.0, 0.0)),
            ),
        ],
    )
    .unwrap()
}

/// Oracle: the mass properties of a compound of two meshes (a rotated box and an icosphere)
/// equal those of their merged surfaces placed in the compound's frame, computed in one pass by
/// the divergence theorem (`mass_properties_of_surface`, which never sees the parts); a
/// compound of a mesh box and a primitive ball equals the closed forms moved by the
/// parallel-axis theorem written out here.
#[test]
fn mesh_compound_mass_matches_the_merged_surface_and_closed_forms() {
    let boxy = mesh(cuboid(Vec3::new(0.3, 0.2, 0.1)).unwrap());
    let ball = mesh(icosphere(0.25, 2).unwrap());
    let pa = pose(
        DQuat::from_axis_angle(DVec3::new(1.0, 2.0, 0.5).normalize(), 0.8),
        DVec3::new(0.5, -0.2, 0.1),
    );
    let pb = at(DVec3::new(-0.7, 0.4, 0.3));
    let shape =
        Shape::compound_with_meshes(Vec::new(), vec![part(&boxy, pa), part(&ball, pb)]).unwrap();
    let got = shape.mass_at(DENSITY).unwrap();
    // The merged surface, placed in f64 and rounded once to f32 (the merged oracle takes f32).
    let mut vertices: Vec<Vec3> = Vec::new();
    let mut triangles: Vec<[u32; 3]> = Vec::new();
    for (m, p) in [(&boxy, pa), (&ball, pb)] {
        let first = vertices.len() as u32;
        vertices.extend(
            m.solid()
                .vertices()
                .iter()
                .map(|v| p.transform_point(*v).as_vec3()),
        );
        triangles.extend(m.solid().triangles().iter().map(|t| t.map(|i| i + first)));
    }
    let want = mass_properties_of_surface(&vertices, &triangles, DENSITY).unwrap();
    // The placed vertices are rounded to f32 for the oracle: relative 1e-6 agreement.
    assert!(
        (got.mass - want.mass).abs() < 1e-6 * want.mass,
        "{} vs {}",
        got.mass,
        want.mass
    );
    assert!(
        (got.center_of_mass - want.center_of_mass).length() < 1e-6,
        "{} vs {}",
        got.center_of_mass,
        want.center_of_mass
    );
    let scale = want.inertia.x_axis.x.abs();
    for k in 0..3 {
        assert!(
            (got.inertia.col(k) - want.inertia.col(k)).length() < 1e-5 * scale,
            "{:?} vs {:?}",
            got.inertia,
            want.inertia
        );
    }

    // A mesh box (half extents h) and a primitive ball: closed forms.
    // The f32 half extents the mesh's vertices carry.
    let h = DVec3::new(0.3f32.into(), 0.2f32.into(), 0.1f32.into());
    let r = 0.2;
    let (box_at, ball_at) = (DVec3::new(0.4, 0.0, 0.0), DVec3::new(-0.5, 0.1, 0.0));
    let mixed = Shape::compound_with_meshes(
        vec![CompoundPart {
            pose: at(ball_at),
            shape: Primitive::sphere(r).unwrap(),
        }],
        vec![part(&boxy, at(box_at))],
    )
    .unwrap();
    let got = mixed.mass_at(DENSITY).unwrap();
    let mb = DENSITY * 8.0 * h.x * h.y * h.z;
    let ms = DENSITY * 4.0 / 3.0 * PI * r.powi(3);
    let com = (box_at * mb + ball_at * ms) / (mb + ms);
    let shift = |d: DVec3, m: f64| {
        (DMat3::IDENTITY * d.length_squared() - DMat3::from_cols(d * d.x, d * d.y, d * d.z)) * m
    };
    let own_box = DMat3::from_diagonal(DVec3::new(
        h.y * h.y + h.z * h.z,
        h.x * h.x + h.z * h.z,
        h.x * h.x + h.y * h.y,
    )) * (mb / 3.0);
    let own_ball = DMat3::IDENTITY * (0.4 * ms * r * r);
    let inertia = own_box + shift(box_at - com, mb) + own_ball + shift(ball_at - com, ms);
    assert!((got.mass - (mb + ms)).abs() < 1e-9 * (mb + ms));
    assert!((got.center_of_mass - com).length() < 1e-9);
    for k in 0..3 {
        assert!(
            (got.inertia.col(k) - inertia.col(k)).length() < 1e-6 * inertia.x_axis.x,
            "{:?} vs {inertia:?}",
            got.inertia
        );
    }

    // Refused: no part at all, a scaled or non-finite mesh pose.
    assert!(Shape::compound_with_meshes(Vec::new(), Vec::new()).is_err());
    let scaled = DPose {
        rotation: DMat3::IDENTITY * 2.0,
        translation: DVec3::ZERO,
    };
    assert!(Shape::compound_with_meshes(Vec::new(), vec![part(&boxy, scaled)]).is_err());
    assert!(Shape::compound_with_meshes(Vec::new(), vec![part(&boxy, at(DVec3::NAN))]).is_err());
}

/// Oracle: two cube meshes (half side 0.25, one turned 90° about z) sunk `d = 0.05` into a
/// mesh slab and into a half-space overlap each by a box `0.5 × 0.5 × d`: the pair's volume is
/// `2 · 0.25 d`, its gradient with respect to the compound `−0.5 ẑ` (two faces of 0.25), the
/// parts sum to it (flat faces) and the contact point lies midway between the cubes; a mesh
/// cube beside a primitive ball in a half-space gives the box plus the ball's cap
/// `π η² (3r − η) / 3`.
#[test]
fn mesh_compound_contacts_match_analytic_overlaps() {
    let d = 0.05;
    let shape = two_cubes();
    for slab in [true, false] {
        let mut sim = weightless();
        let ground = if slab {
            add_slab(&mut sim, 0.0)
        } else {
            add_ground(&mut sim)
        };
        let body = add(
            &mut sim,
            &shape,
            DVec3::new(0.3, -0.2, 0.25 - d),
            DQuat::IDENTITY,
        );
        let c = contact(&sim, ground, body).expect("the cubes are sunk into the ground");
        let want = 2.0 * 0.25 * d;
        assert!(
            (c.volume - want).abs() < 1e-9,
            "slab {slab}: {} vs {want}",
            c.volume
        );
        assert!(
            (c.linear + DVec3::Z * 0.5).length() < 1e-9,
            "slab {slab}: {}",
            c.linear
        );
        assert!(
            (c.point.x - 0.3).abs() < 1e-9 && (c.point.y + 0.2).abs() < 1e-9,
            "slab {slab}: {}",
            c.point
        );
        let vol: f64 = c.parts.iter().map(|p| p.volume).sum();
        let lin: DVec3 = c.parts.iter().map(|p| p.linear).sum();
        assert!((vol - want).abs() < 1e-9, "slab {slab}: parts {vol}");
        assert!((lin - c.linear).length() < 1e-9, "slab {slab}: parts {lin}");
        assert!(c.parts.len() >= 8, "slab {slab}: {} parts", c.parts.len());
    }
    // A mesh part against a mesh body: a box (half extents 0.25) over the +x cube, sunk 0.04.
    let mut sim = weightless();
    let body = add(&mut sim, &shape, DVec3::ZERO, DQuat::IDENTITY);
    let lid = Shape::Mesh(cube(0.25));
    let other = add(&mut sim, &lid, DVec3::new(0.7, 0.1, 0.46), DQuat::IDENTITY);
    let c = contact(&sim, body, other).expect("the lid overlaps a cube");
    // x ∈ [0.45, 0.85], y ∈ [−0.15, 0.25], z ∈ [0.21, 0.25].
    let want = 0.4 * 0.4 * 0.04;
    assert!((c.volume - want).abs() < 1e-9, "{} vs {want}", c.volume);
    // Moving the lid (b) up, or along +x or +y, lessens the overlap by the face it uncovers.
    let grad = DVec3::new(-0.4 * 0.04, -0.4 * 0.04, -0.4 * 0.4);
    assert!((c.linear - grad).length() < 1e-9, "{} vs {grad}", c.linear);

    // A mesh cube beside a primitive ball, both sunk into the ground.
    let (r, eta) = (0.2, 0.03);
    let mixed = Shape::compound_with_meshes(
        vec![CompoundPart {
            pose: at(DVec3::new(0.6, 0.0, r - 0.25)),
            shape: Primitive::sphere(r).unwrap(),
        }],
        vec![part(&cube(0.25), at(DVec3::new(-0.6, 0.0, 0.0)))],
    )
    .unwrap();
    let mut sim = weightless();
    let g = add_ground(&mut sim);
    let body = add(
        &mut sim,
        &mixed,
        DVec3::new(0.0, 0.0, 0.25 - eta),
        DQuat::IDENTITY,
    );
    let c = contact(&sim, g, body).unwrap();
    let want = 0.25 * eta + PI * eta * eta * (3.0 * r - eta) / 3.0;
    assert!((c.volume - want).abs() < 1e-9, "{} vs {want}", c.volume);
    let area = 0.25 + PI * (2.0 * r * eta - eta * eta);
    assert!((c.linear + DVec3::Z * area).length() < 1e-9, "{}", c.linear);
}

/// Oracle: a dumbbell of two cube meshes on a primitive bar, dropped tilted, settles level on
/// its cubes' faces at their half side (within 2 mm, at rest) on a half-space and on a mesh slab,
/// and never gains energy. (On the slab it kept bouncing by a few millimetres, up to 0.25 m/s,
/// before the exact manifold's parts got their lever arms.)
#[test]
fn mesh_compound_rests_on_its_faces() {
    let c = cube(0.15);
    let dumbbell = Shape::compound_with_meshes(
        vec![CompoundPart {
            pose: pose(DQuat::from_rotation_z(PI / 2.0), DVec3::ZERO),
            shape: Primitive::cylinder(0.3, 0.04).unwrap(),
        }],
        vec![
            part(&c, at(DVec3::new(-0.45, 0.0, 0.0))),
            part(&c, at(DVec3::new(0.45, 0.0, 0.0))),
        ],
    )
    .unwrap();
    for slab in [false, true] {
        let mut sim = Simulation::new(SimulationSettings::default()).unwrap();
        if slab {
            add_slab(&mut sim, 0.0);
        } else {
            add_ground(&mut sim);
        }
        let body = add(
            &mut sim,
            &dumbbell,
            DVec3::new(0.0, 0.0, 0.6),
            DQuat::from_rotation_y(0.15),
        );
        sim.set_can_sleep(body, false).unwrap();
        let e0 = sim.kinetic_energy() + sim.potential_energy();
        let (mut lowest, mut highest) = (f64::INFINITY, f64::NEG_INFINITY);
        for k in 0..240 {
            sim.step();
            if k >= 180 {
                let z = sim.body(body).unwrap().position.z;
                (lowest, highest) = (lowest.min(z), highest.max(z));
            }
            let e = sim.kinetic_energy() + sim.potential_energy();
            assert!(
                e - e0 < 1e-6 * DENSITY,
                "slab {slab}: energy rose by {}",
                e - e0
            );
        }
        let b = sim.body(body).unwrap();
        let x_axis = b.orientation * DVec3::X;
        assert!(x_axis.z.abs() < 2e-3, "slab {slab}: not level: {x_axis}");
        eprintln!(
            "slab {slab}: height {lowest:.6}–{highest:.6} over the last 60 steps, speed {:.2e}",
            b.linear_velocity.length()
        );
        assert!(
            (lowest - 0.15).abs() < 2e-3 && (highest - 0.15).abs() < 2e-3,
            "slab {slab}: height {lowest}–{highest} over the last 60 steps"
        );
        assert!(
            b.linear_velocity.length() < 1e-3,
            "slab {slab}: {}",
            b.linear_velocity
        );
    }
}

/// Oracle: rays, points and shapes against a compound of two cube meshes answer as the cubes
/// placed by hand do: a ray down onto the turned cube hits its top face at the analytic distance
/// with a triangle index and the normal `+z`; a ray between the cubes misses; points inside a
/// cube are contained and a point between them is not; a ball overlapping one cube interferes
/// and one between them does not.
#[test]
fn spatial_queries_see_mesh_parts() {
    let mut sim = weightless();
    let shape = two_cubes();
    let body = add(&mut sim, &shape, DVec3::new(0.0, 0.0, 1.0), DQuat::IDENTITY);
    let filter = QueryFilter::default();
    let hit = sim
        .cast_ray(DVec3::new(0.7, 0.1, 3.0), -DVec3::Z, 10.0, false, &filter)
        .expect("the ray hits the cube at x = 0.6");
    assert_eq!(hit.body, body);
    assert!((hit.distance - 1.75).abs() < 1e-9, "{}", hit.distance);
    assert!((hit.normal - DVec3::Z).length() < 1e-9, "{}", hit.normal);
    assert!(hit.triangle.is_some());
    let all = sim.cast_ray_all(DVec3::new(-0.6, 0.0, 3.0), -DVec3::Z, 10.0, false, &filter);
    let distances: Vec<f64> = all.iter().map(|h| h.distance).collect();
    assert!(
        distances.len() == 2
            && (distances[0] - 1.75).abs() < 1e-9
            && (distances[1] - 2.25).abs() < 1e-9,
        "{distances:?}"
    );
    assert!(
        sim.cast_ray(DVec3::new(0.0, 0.0, 3.0), -DVec3::Z, 10.0, false, &filter)
            .is_none()
    );
    for (p, inside) in [
        (DVec3::new(0.6, 0.2, 1.2), true),
        (DVec3::new(-0.8, -0.1, 0.8), true),
        (DVec3::new(-0.35, 0.0, 1.0), true), // on a face
        (DVec3::new(0.0, 0.0, 1.0), false),
        (DVec3::new(0.6, 0.0, 1.3), false),
    ] {
        let got = sim.bodies_containing_point(p, &filter);
        assert_eq!(got == vec![body], inside, "{p}: {got:?}");
    }
    let ball = Shape::from_primitive(Primitive::sphere(0.1).unwrap());
    let overlapping = sim.intersecting_bodies(&ball, &at(DVec3::new(0.4, 0.0, 1.0)), &filter);
    assert_eq!(overlapping, vec![body]);
    let between = sim.intersecting_bodies(&ball, &at(DVec3::new(0.0, 0.0, 1.0)), &filter);
    assert!(between.is_empty(), "{between:?}");
    let mesh_ball = Shape::Mesh(mesh(icosphere(0.1, 1).unwrap()));
    let overlapping = sim.intersecting_bodies(&mesh_ball, &at(DVec3::new(-0.4, 0.0, 1.0)), &filter);
    assert_eq!(overlapping, vec![body]);
}

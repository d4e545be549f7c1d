//! The character controller (issue 30) against analytic paths: level walking over a finely
//! tessellated floor (no internal edges: the path is straight, level and at full speed), a
//! walkable ramp (the centre follows the plane offset by the capsule), a slope too steep to
//! climb, a wall slid along, a staircase climbed and descended step by step, a step too high,
//! a rough terrain mesh crossed without sinking in or snagging, dynamic bodies pushed, refused
//! parameters.

use crate::*;
use interfere_geometry::glam::{DQuat, DVec3};
use interfere_geometry::shapes::{staircase, staircase_rest_height, subdivided_cuboid, terrain};
use std::sync::Arc;

const DT: f64 = 1.0 / 60.0;
const G: f64 = 9.81;

fn world() -> Simulation {
    Simulation::new(SimulationSettings::default()).unwrap()
}

fn fixed_mesh(sim: &mut Simulation, solid: interfere_geometry::Solid, at: DVec3) -> BodyHandle {
    fixed_mesh_turned(sim, solid, at, DQuat::IDENTITY)
}

fn fixed_mesh_turned(
    sim: &mut Simulation,
    solid: interfere_geometry::Solid,
    at: DVec3,
    rotation: DQuat,
) -> BodyHandle {
    let shape = Arc::new(MeshShape::new(solid).unwrap());
    // A fixed body's mesh frame is its position.
    let body = Body::fixed(at, rotation).unwrap();
    sim.insert(body, Some(BodyShape::mesh(shape))).unwrap()
}

/// A tessellated floor, top at z = 0, 64 × 64 quads per face over 16 m.
fn floor(sim: &mut Simulation) -> BodyHandle {
    let solid = subdivided_cuboid(interfere_geometry::glam::Vec3::new(8.0, 8.0, 0.5), 64).unwrap();
    fixed_mesh(sim, solid, DVec3::new(0.0, 0.0, -0.5))
}

/// The character's kinematic body: a capsule along Z (the primitive's axis is its local Y).
fn character(sim: &mut Simulation, ctrl: &CharacterController, at: DVec3) -> BodyHandle {
    let shape = Shape::from(Primitive::capsule(ctrl.half_length, ctrl.radius).unwrap());
    let turn = DQuat::from_rotation_arc(DVec3::Y, DVec3::Z);
    let body = Body::kinematic(at, turn).unwrap();
    sim.insert(body, Some(BodyShape::from_shape(shape)))
        .unwrap()
}

/// A player: walks at `velocity` (horizontal), falls under gravity when not on the ground.
struct Walker {
    body: BodyHandle,
    ctrl: CharacterController,
    fall: f64,
}

impl Walker {
    fn new(sim: &mut Simulation, at: DVec3) -> Self {
        let ctrl = CharacterController::default();
        Self {
            body: character(sim, &ctrl, at),
            ctrl,
            fall: 0.0,
        }
    }

    fn frame(&mut self, sim: &mut Simulation, velocity: DVec3) -> CharacterMove {
        self.fall -= G * DT;
        let desired = (velocity + DVec3::Z * self.fall) * DT;
        let mv = sim
            .move_character(self.body, &self.ctrl, desired, &QueryFilter::default())
            .unwrap();
        if mv.grounded {
            self.fall = 0.0;
        }
        sim.step();
        let at = sim.body(self.body).unwrap().position;
        assert!(
            (at - mv.position).length() < 1e-9,
            "the step carried the body to {at}, not {}",
            mv.position
        );
        mv
    }

    fn position(&self, sim: &Simulation) -> DVec3 {
        sim.body(self.body).unwrap().position
    }

    /// The centre's height when standing on level ground at z = `ground`.
    fn standing(&self, ground: f64) -> f64 {
        ground + self.ctrl.half_length + self.ctrl.radius + self.ctrl.skin
    }
}

/// No internal edges: walking 6 m in a straight line over 8,192 coplanar triangles, in several
/// directions, the centre stays level (1e-9 m), on its line (1e-9 m) and at full speed (each
/// move covers the asked distance to 1e-9 m); it is on the ground every frame.
#[test]
fn walking_over_a_tessellated_floor_is_straight_level_and_full_speed() {
    for angle in [0.0f64, 0.3, 0.7, 1.9] {
        let mut sim = world();
        floor(&mut sim);
        let start = DVec3::new(-3.0 * angle.cos(), -3.0 * angle.sin(), 1.2);
        let mut w = Walker::new(&mut sim, start);
        // Land first.
        for _ in 0..60 {
            w.frame(&mut sim, DVec3::ZERO);
        }
        let z = w.standing(0.0);
        assert!(
            (w.position(&sim).z - z).abs() < 1e-9,
            "{}",
            w.position(&sim).z
        );
        let dir = DVec3::new(angle.cos(), angle.sin(), 0.0);
        let from = w.position(&sim);
        for _ in 0..240 {
            let mv = w.frame(&mut sim, dir * 1.5);
            assert!(mv.grounded);
            let p = w.position(&sim);
            assert!((p.z - z).abs() < 1e-9, "height {}", p.z);
            let off = (p - from) - dir * (p - from).dot(dir);
            assert!(off.length() < 1e-9, "left its line by {}", off.length());
            let horizontal = DVec3::new(mv.translation.x, mv.translation.y, 0.0);
            assert!(
                (horizontal.length() - 1.5 * DT).abs() < 1e-9,
                "moved {} of {}",
                horizontal.length(),
                1.5 * DT
            );
        }
    }
}

/// A closed wedge rising along +x at `slope` from x = 0 (length `len`, 4 m wide), on the floor.
fn ramp(sim: &mut Simulation, slope: f64, len: f64) {
    let h = (len * slope.tan()) as f32;
    let l = len as f32;
    let v = |x: f32, y: f32, z: f32| interfere_geometry::glam::Vec3::new(x, y, z);
    let vertices = vec![
        v(0.0, -2.0, 0.0),
        v(l, -2.0, 0.0),
        v(l, -2.0, h),
        v(0.0, 2.0, 0.0),
        v(l, 2.0, 0.0),
        v(l, 2.0, h),
    ];
    let triangles = vec![
        [0, 2, 1],
        [3, 4, 5],
        [0, 1, 4],
        [0, 4, 3],
        [1, 2, 5],
        [1, 5, 4],
        [0, 3, 5],
        [0, 5, 2],
    ];
    let mesh = interfere_geometry::TriMesh::new(vertices, triangles).unwrap();
    let solid = interfere_geometry::Solid::new(mesh).unwrap();
    fixed_mesh(sim, solid, DVec3::ZERO);
}

/// A walkable 20° ramp: once on it, the centre follows the plane raised by the capsule,
/// `z = x tan θ + half_length + (radius + skin) / cos θ`, to 1e-6 m, and it stays on the ground.
#[test]
fn walking_up_a_ramp_follows_the_plane() {
    let slope = 20f64.to_radians();
    let mut sim = world();
    floor(&mut sim);
    ramp(&mut sim, slope, 6.0);
    let mut w = Walker::new(&mut sim, DVec3::new(-1.5, 0.0, 1.0));
    for _ in 0..30 {
        w.frame(&mut sim, DVec3::ZERO);
    }
    let offset = w.ctrl.half_length + (w.ctrl.radius + w.ctrl.skin) / slope.cos();
    // The lowest point of the bottom sphere touches the plane once x ≥ (r + skin) sin θ.
    let on_ramp = (w.ctrl.radius + w.ctrl.skin) * slope.sin() + 0.05;
    let mut checked = 0;
    for _ in 0..240 {
        let mv = w.frame(&mut sim, DVec3::X * 1.2);
        let p = w.position(&sim);
        if p.x > on_ramp && p.x < 5.0 {
            let want = p.x * slope.tan() + offset;
            assert!(
                (p.z - want).abs() < 1e-6,
                "at x {}: z {} vs {want}",
                p.x,
                p.z
            );
            assert!(mv.grounded, "off the ground at x {}", p.x);
            checked += 1;
        }
    }
    assert!(checked > 100, "{checked} frames on the ramp");
}

/// A 60° slope (steeper than the 45° limit) is a wall: the character does not climb it (its
/// centre stays at standing height) and stops at its foot.
#[test]
fn a_slope_too_steep_is_not_climbed() {
    let slope = 60f64.to_radians();
    let mut sim = world();
    floor(&mut sim);
    ramp(&mut sim, slope, 2.0);
    let mut w = Walker::new(&mut sim, DVec3::new(-1.5, 0.0, 1.0));
    for _ in 0..30 {
        w.frame(&mut sim, DVec3::ZERO);
    }
    let z = w.standing(0.0);
    for _ in 0..300 {
        w.frame(&mut sim, DVec3::new(1.2, 0.2, 0.0));
        let p = w.position(&sim);
        assert!(p.z < z + 1e-6, "climbed to {}", p.z);
        // The slope's foot is at x = 0: the bottom sphere stops against it.
        assert!(p.x < 0.0, "passed the foot: x {}", p.x);
    }
}

/// Sliding along a wall: walking at 45° into a wall keeps the component along it exactly and
/// loses the one into it.
#[test]
fn a_wall_is_slid_along() {
    let mut sim = world();
    floor(&mut sim);
    let wall = subdivided_cuboid(interfere_geometry::glam::Vec3::new(0.25, 6.0, 1.5), 12).unwrap();
    fixed_mesh(&mut sim, wall, DVec3::new(1.0, 0.0, 1.5));
    let mut w = Walker::new(&mut sim, DVec3::new(0.0, -3.0, 1.0));
    for _ in 0..30 {
        w.frame(&mut sim, DVec3::ZERO);
    }
    let v = DVec3::new(1.0, 1.0, 0.0);
    let mut touching = 0;
    for _ in 0..200 {
        let before = w.position(&sim);
        let mv = w.frame(&mut sim, v);
        let p = w.position(&sim);
        // The wall face is at x = 0.75: the capsule keeps its radius and skin from it.
        assert!(
            p.x <= 0.75 - w.ctrl.radius - w.ctrl.skin + 1e-9,
            "x {} {before} {mv:?}",
            p.x
        );
        if !mv.collisions.is_empty() && mv.collisions.iter().any(|c| c.normal.x < -0.99) {
            touching += 1;
            assert!(
                ((p.y - before.y) - v.y * DT).abs() < 1e-8,
                "{}",
                p.y - before.y
            );
        }
    }
    assert!(touching > 100, "{touching}");
}

/// A staircase of 0.2 m steps with 0.35 m treads (narrower than the capsule): climbed with the
/// 0.3 m step height, the centre follows the analytic resting height over the treads and nosings
/// in every frame it is on the ground (1e-6 m), and it reaches the top; walking back down,
/// snapping keeps it on the ground every frame, on the same path. Steps of 0.45 m stop it at the
/// first riser.
#[test]
fn stairs_are_climbed_and_descended_on_the_analytic_path() {
    let (steps, rise, tread) = (6u32, 0.2, 0.35);
    let build = || {
        let mut sim = world();
        floor(&mut sim);
        let stairs = staircase(steps, rise as f32, tread as f32, 1.5).unwrap();
        fixed_mesh(&mut sim, stairs, DVec3::ZERO);
        sim
    };
    let mut sim = build();
    let mut w = Walker::new(&mut sim, DVec3::new(-1.0, 0.0, 1.0));
    for _ in 0..30 {
        w.frame(&mut sim, DVec3::ZERO);
    }
    let r = w.ctrl.radius + w.ctrl.skin;
    let half_length = w.ctrl.half_length;
    let path = |x: f64| staircase_rest_height(x, steps, rise, tread, r) + half_length;
    let mut checked = 0;
    let mut highest: f64 = 0.0;
    for _ in 0..200 {
        let mv = w.frame(&mut sim, DVec3::X * 1.0);
        let p = w.position(&sim);
        highest = highest.max(p.z);
        if mv.grounded {
            assert!(
                (p.z - path(p.x)).abs() < 1e-6,
                "at x {}: z {} vs {}",
                p.x,
                p.z,
                path(p.x)
            );
            checked += 1;
        }
    }
    assert!(checked > 150, "{checked} frames on the ground");
    let summit = f64::from(steps) * rise + r + half_length;
    assert!(
        (highest - summit).abs() < 1e-6,
        "highest {highest} vs {summit}"
    );

    // Down again from the top tread: on the ground every frame (snapping), on the same path.
    let mut sim = build();
    let mut w = Walker::new(
        &mut sim,
        DVec3::new((f64::from(steps) - 0.5) * tread, 0.0, 2.5),
    );
    for _ in 0..60 {
        w.frame(&mut sim, DVec3::ZERO);
    }
    for _ in 0..150 {
        let mv = w.frame(&mut sim, -DVec3::X * 1.0);
        let p = w.position(&sim);
        assert!(mv.grounded, "airborne at x {}", p.x);
        assert!(
            (p.z - path(p.x)).abs() < 1e-6,
            "at x {}: z {} vs {}",
            p.x,
            p.z,
            path(p.x)
        );
    }
    assert!((w.position(&sim).z - w.standing(0.0)).abs() < 1e-9);

    // Steps too high.
    let mut sim = world();
    floor(&mut sim);
    let stairs = staircase(3, 0.45, 0.5, 1.5).unwrap();
    fixed_mesh(&mut sim, stairs, DVec3::ZERO);
    let mut w = Walker::new(&mut sim, DVec3::new(-1.0, 0.0, 1.0));
    for _ in 0..200 {
        w.frame(&mut sim, DVec3::X * 1.0);
    }
    let p = w.position(&sim);
    assert!(p.x < 0.0 && (p.z - w.standing(0.0)).abs() < 1e-6, "{p}");
}

/// A rough terrain mesh (32,768 triangles, ±1 m of relief): walking across it, the capsule
/// never sinks into the ground (no contact deeper than 1e-6 m at any frame), keeps at least
/// 70 % of its speed over the ground (no snagging) and is on the ground in 95 % of frames.
#[test]
fn a_rough_terrain_mesh_is_crossed_without_sinking_or_snagging() {
    let mut sim = world();
    let ground = terrain(12.0, 4.0, 1.0, 128, 3).unwrap();
    fixed_mesh(&mut sim, ground, DVec3::ZERO);
    let mut w = Walker::new(&mut sim, DVec3::new(-9.0, -2.0, 3.5));
    for _ in 0..90 {
        w.frame(&mut sim, DVec3::ZERO);
    }
    let from = w.position(&sim);
    let v = DVec3::new(1.5, 0.3, 0.0);
    let frames = 600;
    let mut grounded = 0;
    for _ in 0..frames {
        let mv = w.frame(&mut sim, v);
        grounded += usize::from(mv.grounded);
        let p = w.position(&sim);
        let capsule = w.ctrl.capsule(p, DVec3::Z);
        let deepest = sim
            .capsule_contacts(&capsule, 0.0, &QueryFilter::default().excluding([w.body]))
            .iter()
            .map(|c| c.distance)
            .fold(f64::INFINITY, f64::min);
        assert!(deepest > -1e-6, "sank {deepest} at {p}");
    }
    let p = w.position(&sim);
    let covered = DVec3::new(p.x - from.x, p.y - from.y, 0.0).length();
    let asked = DVec3::new(v.x, v.y, 0.0).length() * frames as f64 * DT;
    assert!(covered > 0.7 * asked, "covered {covered} of {asked}");
    assert!(
        grounded * 100 > 95 * frames,
        "grounded {grounded} of {frames}"
    );
}

/// Pushing: walking into a 40 kg crate on the floor (asleep) wakes it and moves it along (by
/// more than 1 m in 3 s); with no push force the crate stays and the character is stopped at it.
#[test]
fn dynamic_bodies_are_pushed_with_a_bounded_force() {
    for push in [800.0, 0.0] {
        let mut sim = world();
        floor(&mut sim);
        let shape = Shape::from(Primitive::cuboid(DVec3::splat(0.3)).unwrap());
        let mass = shape.mass_at(40.0 / 0.216).unwrap();
        let crate_at = DVec3::new(1.0, 0.0, 0.3);
        let body = Body::dynamic(&mass, crate_at, DQuat::IDENTITY).unwrap();
        let crate_body = sim
            .insert(body, Some(BodyShape::from_shape(shape)))
            .unwrap();
        let mut w = Walker::new(&mut sim, DVec3::new(-0.5, 0.0, 1.0));
        w.ctrl.push_force = push;
        for _ in 0..180 {
            w.frame(&mut sim, DVec3::X * 1.0);
        }
        let moved = sim.body(crate_body).unwrap().position.x - crate_at.x;
        if push > 0.0 {
            assert!(moved > 1.0, "pushed only {moved}");
        } else {
            assert!(moved.abs() < 1e-3, "moved {moved} without a push");
            let gap = 1.0 - 0.3 - w.position(&sim).x;
            assert!(gap > w.ctrl.radius, "walked into the crate: gap {gap}");
        }
    }
}

/// Refused input: each bad parameter is named; a non-kinematic body is refused; a non-finite
/// translation is refused; the simulation is unchanged.
#[test]
fn bad_character_input_is_refused_by_name() {
    let mut sim = world();
    floor(&mut sim);
    let ctrl = CharacterController::default();
    let body = character(&mut sim, &ctrl, DVec3::new(0.0, 0.0, 1.0));
    for (field, c) in [
        (
            "radius",
            CharacterController {
                radius: 0.0,
                ..ctrl
            },
        ),
        ("skin", CharacterController { skin: 0.5, ..ctrl }),
        (
            "max_slope",
            CharacterController {
                max_slope: 2.0,
                ..ctrl
            },
        ),
        (
            "step_height",
            CharacterController {
                step_height: f64::NAN,
                ..ctrl
            },
        ),
        (
            "max_slides",
            CharacterController {
                max_slides: 0,
                ..ctrl
            },
        ),
        (
            "up",
            CharacterController {
                up: Some(DVec3::ZERO),
                ..ctrl
            },
        ),
    ] {
        match sim.move_character(body, &c, DVec3::X, &QueryFilter::default()) {
            Err(CharacterError::BadParameter { field: f, .. }) => assert_eq!(f, field),
            other => panic!("{field}: {other:?}"),
        }
    }
    assert!(matches!(
        sim.move_character(body, &ctrl, DVec3::NAN, &QueryFilter::default()),
        Err(CharacterError::NonFinite("translation"))
    ));
    let shape = Shape::from(Primitive::sphere(0.2).unwrap());
    let b = Body::dynamic(
        &shape.mass_at(100.0).unwrap(),
        DVec3::Z * 3.0,
        DQuat::IDENTITY,
    )
    .unwrap();
    let ball = sim.insert(b, Some(BodyShape::from_shape(shape))).unwrap();
    assert!(matches!(
        sim.move_character(ball, &ctrl, DVec3::X, &QueryFilter::default()),
        Err(CharacterError::NotKinematic(_))
    ));
    assert_eq!(sim.body(body).unwrap().linear_velocity, DVec3::ZERO);
}

//! Contact hooks (issue 30): a one-way platform, a conveyor belt, per-pair friction and
//! restitution, and a dropped pair that stays reported.

use crate::*;
use interfere_geometry::glam::{DQuat, DVec3};

fn world() -> Simulation {
    Simulation::new(SimulationSettings {
        sleep: SleepSettings::NEVER,
        ..Default::default()
    })
    .unwrap()
}

fn fixed_box(sim: &mut Simulation, half: DVec3, at: DVec3) -> BodyHandle {
    let shape = Shape::from(Primitive::cuboid(half).unwrap());
    let body = Body::fixed(at, DQuat::IDENTITY).unwrap();
    sim.insert(body, Some(BodyShape::from_shape(shape)))
        .unwrap()
}

/// A static mesh box (a primitive box on a primitive box does not rest yet: issue 28, see
/// `tests::scenes::solid_contact`).
fn fixed_mesh_box(sim: &mut Simulation, half: DVec3, at: DVec3) -> BodyHandle {
    let mesh = interfere_geometry::shapes::cuboid(half.as_vec3()).unwrap();
    let shape = std::sync::Arc::new(MeshShape::new(mesh).unwrap());
    let body = Body::fixed(at, DQuat::IDENTITY).unwrap();
    sim.insert(body, Some(BodyShape::mesh(shape))).unwrap()
}

fn dynamic(sim: &mut Simulation, primitive: Primitive, at: DVec3, v: DVec3) -> BodyHandle {
    let shape = Shape::from(primitive);
    let body = Body::dynamic(&shape.mass_at(500.0).unwrap(), at, DQuat::IDENTITY)
        .unwrap()
        .with_velocity(v, DVec3::ZERO);
    sim.insert(body, Some(BodyShape::from_shape(shape)))
        .unwrap()
}

/// A one-way platform: a ball thrown up from below passes through it (the hook drops the pair
/// while the ball's centre is below the platform's top or it moves up), falls back and comes to
/// rest on top of it; without the hook it is stopped below.
#[test]
fn a_one_way_platform_lets_a_ball_through_from_below() {
    for with_hook in [true, false] {
        let mut sim = world();
        let top = 1.0;
        let platform = fixed_box(
            &mut sim,
            DVec3::new(1.0, 1.0, 0.05),
            DVec3::new(0.0, 0.0, top - 0.05),
        );
        let r = 0.1;
        let ball = dynamic(
            &mut sim,
            Primitive::sphere(r).unwrap(),
            DVec3::new(0.0, 0.0, 0.4),
            DVec3::new(0.0, 0.0, 5.0),
        );
        if with_hook {
            sim.set_contact_hook(Some(Box::new(move |pair: &mut HookedPair<'_>| match pair
                .other(platform)
            {
                Some((_, other)) => {
                    other.position.z - 0.5 * r >= top && other.linear_velocity.z <= 0.0
                }
                None => true,
            })));
        }
        let mut highest = 0.0f64;
        for _ in 0..240 {
            sim.step();
            highest = highest.max(sim.body(ball).unwrap().position.z);
        }
        let z = sim.body(ball).unwrap().position.z;
        eprintln!("hook {with_hook}: highest {highest:.3} m, rests at {z:.4} m");
        if with_hook {
            assert!(highest > 1.3, "the ball did not pass through: {highest}");
            assert!(
                (z - (top + r)).abs() < 2e-3,
                "the ball rests at {z}, not on top"
            );
        } else {
            assert!(
                highest < top - 0.09,
                "the platform let the ball through: {highest}"
            );
        }
    }
}

/// A conveyor belt: a box resting on a static slab whose surface the hook moves at 1 m/s is
/// carried along at that speed (within 2 % after 1 s); without the hook it stays put. A hook
/// that drops the pair lets the box fall through the slab, and the pair is still reported.
#[test]
fn a_conveyor_belt_carries_a_box_and_a_dropped_pair_stays_reported() {
    for (belt_speed, drop) in [(1.0, false), (0.0, false), (0.0, true)] {
        let mut sim = world();
        let belt = fixed_mesh_box(
            &mut sim,
            DVec3::new(5.0, 1.0, 0.25),
            DVec3::new(0.0, 0.0, -0.25),
        );
        let crate_ = dynamic(
            &mut sim,
            Primitive::cuboid(DVec3::splat(0.1)).unwrap(),
            DVec3::new(0.0, 0.0, 0.1),
            DVec3::ZERO,
        );
        if belt_speed != 0.0 || drop {
            sim.set_contact_hook(Some(Box::new(move |pair: &mut HookedPair<'_>| {
                pair.set_surface_velocity(belt, DVec3::new(belt_speed, 0.0, 0.0));
                !drop
            })));
        }
        let mut reported = false;
        for _ in 0..60 {
            sim.step();
            reported |= !sim.pair_contacts().is_empty();
        }
        let b = sim.body(crate_).unwrap();
        eprintln!(
            "belt {belt_speed}, drop {drop}: box at {}, velocity {}",
            b.position, b.linear_velocity
        );
        if drop {
            assert!(
                b.position.z < -0.5,
                "a dropped pair still held the box: {}",
                b.position
            );
            assert!(reported, "the dropped pair was not reported");
        } else {
            assert!(
                (b.linear_velocity.x - belt_speed).abs() < 0.02 + 1e-9,
                "box at {} on a belt at {belt_speed}",
                b.linear_velocity
            );
            assert!((b.position.z - 0.1).abs() < 2e-3, "{}", b.position);
        }
    }
}

/// Per-pair friction and restitution: a box sliding at 2 m/s keeps sliding with the hook's
/// friction 0 and stops without it; a ball dropped from 1 m bounces back above 0.8 m with the
/// hook's restitution 1 and not at all without it.
#[test]
fn a_hook_sets_friction_and_restitution_per_pair() {
    for frictionless in [true, false] {
        let mut sim = world();
        fixed_mesh_box(
            &mut sim,
            DVec3::new(20.0, 1.0, 0.25),
            DVec3::new(0.0, 0.0, -0.25),
        );
        let b = dynamic(
            &mut sim,
            Primitive::cuboid(DVec3::splat(0.1)).unwrap(),
            DVec3::new(0.0, 0.0, 0.1),
            DVec3::new(2.0, 0.0, 0.0),
        );
        if frictionless {
            sim.set_contact_hook(Some(Box::new(|pair: &mut HookedPair<'_>| {
                pair.friction = Some(0.0);
                true
            })));
        }
        for _ in 0..60 {
            sim.step();
        }
        let v = sim.body(b).unwrap().linear_velocity.x;
        eprintln!("frictionless {frictionless}: {v} m/s after 1 s");
        if frictionless {
            assert!((v - 2.0).abs() < 0.02, "{v}");
        } else {
            assert!(v.abs() < 0.01, "{v}");
        }
    }
    for elastic in [true, false] {
        let mut sim = world();
        fixed_mesh_box(
            &mut sim,
            DVec3::new(2.0, 2.0, 0.25),
            DVec3::new(0.0, 0.0, -0.25),
        );
        let r = 0.1;
        let ball = dynamic(
            &mut sim,
            Primitive::sphere(r).unwrap(),
            DVec3::new(0.0, 0.0, 1.0 + r),
            DVec3::ZERO,
        );
        if elastic {
            sim.set_contact_hook(Some(Box::new(|pair: &mut HookedPair<'_>| {
                pair.restitution = Some(1.0);
                true
            })));
        }
        let mut landed = false;
        let mut rebound = 0.0f64;
        for _ in 0..120 {
            sim.step();
            let z = sim.body(ball).unwrap().position.z - r;
            landed |= z < 0.01;
            if landed {
                rebound = rebound.max(z);
            }
        }
        eprintln!("elastic {elastic}: rebound {rebound:.3} m");
        if elastic {
            assert!(rebound > 0.8 && rebound < 1.0 + 1e-3, "{rebound}");
        } else {
            assert!(rebound < 0.05, "{rebound}");
        }
    }
}

//! Joint oracles (issue 30): constraint error at rest, a pendulum's period against the analytic
//! one, motors reaching their targets, limits never crossed, energy of undriven frictionless
//! mechanisms never growing, a spring's period, breaking, disabled collision between connected
//! bodies, sleeping as one island, a 20-link chain holding a 100× heavier load, and refused
//! input.

use crate::*;
use interfere_geometry::glam::{DMat3, DQuat, DVec3};
use std::f64::consts::PI;

fn world(substeps: u32) -> Simulation {
    let mut settings = SimulationSettings::default();
    settings.world.substeps = substeps;
    settings.sleep = SleepSettings::NEVER;
    Simulation::new(settings).unwrap()
}

/// A dynamic body of mass `m` with a solid sphere's inertia of radius `r`, no collider.
fn ball(sim: &mut Simulation, m: f64, r: f64, at: DVec3) -> BodyHandle {
    let props = MassProperties {
        volume: 4.0 / 3.0 * PI * r * r * r,
        mass: m,
        center_of_mass: DVec3::ZERO,
        inertia: DMat3::from_diagonal(DVec3::splat(0.4 * m * r * r)),
    };
    sim.insert(Body::dynamic(&props, at, DQuat::IDENTITY).unwrap(), None)
        .unwrap()
}

fn anchor(sim: &mut Simulation, at: DVec3) -> BodyHandle {
    sim.insert(Body::fixed(at, DQuat::IDENTITY).unwrap(), None)
        .unwrap()
}

fn joint_at(
    sim: &Simulation,
    kind: JointKind,
    a: BodyHandle,
    b: BodyHandle,
    p: DVec3,
    axis: DVec3,
) -> Joint {
    Joint::at_world(kind, sim.body(a).unwrap(), sim.body(b).unwrap(), p, axis)
}

/// Position and angle error of a joint's locked rows (anchors apart; for a revolute joint the
/// axes' angle; for a fixed joint the relative rotation).
fn joint_error(sim: &Simulation, h: JointHandle) -> (f64, f64) {
    let j = sim.joint(h).unwrap();
    let (a, b) = sim.joint_bodies(h).unwrap();
    let (ba, bb) = (sim.body(a).unwrap(), sim.body(b).unwrap());
    let lin = (j.frame_a.world_anchor(ba) - j.frame_b.world_anchor(bb)).length();
    let (qa, qb) = (j.frame_a.world_rotation(ba), j.frame_b.world_rotation(bb));
    let ang = match j.kind {
        JointKind::Fixed => qa.angle_between(qb),
        JointKind::Prismatic { .. } => {
            let d = j.frame_b.world_anchor(bb) - j.frame_a.world_anchor(ba);
            let axis = qa * DVec3::X;
            return ((d - axis * axis.dot(d)).length(), qa.angle_between(qb));
        }
        JointKind::Revolute { .. } => (qa * DVec3::X).angle_between(qb * DVec3::X),
        _ => 0.0,
    };
    (lin, ang)
}

fn energy(sim: &Simulation) -> f64 {
    sim.kinetic_energy() + sim.potential_energy()
}

/// A physical pendulum (1 kg ball of radius 5 cm on a 1 m arm, hinged on a static body) swings
/// with the analytic period `2π √((I + m L²) / (m g L))` within 1 % (amplitude 0.1 rad: the
/// finite-amplitude correction is 0.06 %).
#[test]
fn pendulum_period_is_the_analytic_one() {
    for kind in [
        JointKind::Revolute {
            limit: None,
            motor: None,
        },
        JointKind::Spherical {
            swing_limit: None,
            twist_limit: None,
        },
    ] {
        let mut sim = world(4);
        let pivot = DVec3::new(0.0, 0.0, 2.0);
        let top = anchor(&mut sim, pivot);
        let (l, theta0, m, r) = (1.0, 0.1f64, 1.0, 0.05);
        let bob = ball(
            &mut sim,
            m,
            r,
            pivot + DVec3::new(l * theta0.sin(), 0.0, -l * theta0.cos()),
        );
        let j = joint_at(&sim, kind, top, bob, pivot, DVec3::Y);
        sim.insert_joint(top, bob, j).unwrap();
        let g = 9.81;
        let expected = 2.0 * PI * ((0.4 * m * r * r + m * l * l) / (m * g * l)).sqrt();
        // Upward zero crossings of x.
        let mut crossings = Vec::new();
        let mut last = sim.body(bob).unwrap().position.x;
        for step in 1..=(60 * 12) {
            sim.step();
            let x = sim.body(bob).unwrap().position.x;
            if last < 0.0 && x >= 0.0 {
                crossings.push(step as f64 / 60.0 - x / (x - last) / 60.0);
            }
            last = x;
        }
        assert!(crossings.len() >= 5, "{kind:?}: {crossings:?}");
        let n = crossings.len() - 1;
        let period = (crossings[n] - crossings[0]) / n as f64;
        let err = (period / expected - 1.0).abs();
        eprintln!("{kind:?}: period {period:.5} s, analytic {expected:.5} s, error {err:.2e}");
        assert!(err < 0.01, "{kind:?}: period {period} vs {expected}");
    }
}

/// Every joint kind holding a body against gravity (off-centre, so the angular rows carry a
/// torque) keeps its locked rows within 1e-3 m and 1e-3 rad at rest, and the reported force
/// balances the weight within 1 %.
#[test]
fn joints_hold_within_a_millimetre_at_rest() {
    let kinds = [
        JointKind::Fixed,
        JointKind::Revolute {
            limit: None,
            motor: None,
        },
        JointKind::Prismatic {
            limit: Some(JointLimit::new(-0.2, 0.2)),
            motor: None,
        },
        JointKind::Spherical {
            swing_limit: None,
            twist_limit: None,
        },
        JointKind::Distance { min: 0.0, max: 0.5 },
    ];
    for kind in kinds {
        let mut sim = world(4);
        let pivot = DVec3::new(0.0, 0.0, 2.0);
        let top = anchor(&mut sim, pivot);
        // Horizontal arm for the fixed joint (a cantilever); hanging below for the rest.
        let (at, axis) = match kind {
            JointKind::Fixed => (pivot + DVec3::new(0.5, 0.0, 0.0), DVec3::Y),
            JointKind::Prismatic { .. } => (pivot + DVec3::new(0.3, 0.0, 0.0), DVec3::Z),
            _ => (pivot + DVec3::new(0.0, 0.0, -0.5), DVec3::Y),
        };
        let body = ball(&mut sim, 2.0, 0.1, at);
        let mut j = joint_at(&sim, kind, top, body, pivot, axis);
        if let JointKind::Distance { .. } = kind {
            j = j.with_world_anchor_b(sim.body(body).unwrap(), at);
        }
        let h = sim.insert_joint(top, body, j).unwrap();
        sim.set_damping(body, 0.5, 0.5).unwrap();
        for _ in 0..240 {
            sim.step();
        }
        let (lin, ang) = if let JointKind::Distance { max, .. } = kind {
            let p = sim.body(body).unwrap().position;
            (((p - pivot).length() - max).abs(), 0.0)
        } else {
            joint_error(&sim, h)
        };
        let force = sim.joint_state(h).unwrap().force;
        let weight = 2.0 * 9.81;
        eprintln!("{kind:?}: error {lin:.2e} m, {ang:.2e} rad, force {force:.3}");
        assert!(lin < 1e-3 && ang < 1e-3, "{kind:?}: {lin} m, {ang} rad");
        // The force on B (the hanging body) holds it up: +z, the weight.
        let (_, b) = sim.joint_bodies(h).unwrap();
        assert_eq!(b, body);
        assert!(
            (force.z - weight).abs() < 0.01 * weight,
            "{kind:?}: force {force} vs weight {weight}"
        );
    }
}

/// A velocity motor brings a free wheel (hinged on a static body) to its target speed within
/// 1 % and holds it; a torque limit too small for the load leaves it slower; a position motor
/// brings a slider to its target within 1 mm.
#[test]
fn motors_reach_their_targets() {
    let mut sim = world(4);
    sim.set_settings(SimulationSettings {
        world: StepSettings {
            gravity: DVec3::ZERO,
            ..sim.settings().world
        },
        ..*sim.settings()
    })
    .unwrap();
    let hub = anchor(&mut sim, DVec3::ZERO);
    let wheel = ball(&mut sim, 5.0, 0.3, DVec3::ZERO);
    let motor = JointMotor::velocity(5.0, 100.0);
    let kind = JointKind::Revolute {
        limit: None,
        motor: Some(motor),
    };
    let j = joint_at(&sim, kind, hub, wheel, DVec3::ZERO, DVec3::Z);
    let h = sim.insert_joint(hub, wheel, j).unwrap();
    for _ in 0..60 {
        sim.step();
    }
    let w = sim.body(wheel).unwrap().angular_velocity;
    assert!(
        (w.z - 5.0).abs() < 0.05 && w.truncate().length() < 1e-6,
        "{w}"
    );
    // A brake against an applied torque larger than the motor can give.
    sim.set_torque(wheel, DVec3::new(0.0, 0.0, -150.0)).unwrap();
    for _ in 0..60 {
        sim.step();
    }
    let w = sim.body(wheel).unwrap().angular_velocity.z;
    let torque = sim.joint_state(h).unwrap().motor_force;
    assert!(w < 4.0, "the motor exceeded its torque: {w} rad/s");
    assert!((torque - 100.0).abs() < 1e-6, "motor torque {torque}");

    // A position motor on a slider.
    let mut sim = world(4);
    let base = anchor(&mut sim, DVec3::ZERO);
    let cart = ball(&mut sim, 1.0, 0.1, DVec3::ZERO);
    let kind = JointKind::Prismatic {
        limit: None,
        motor: Some(JointMotor::position(0.25, 400.0, 40.0, 1000.0)),
    };
    let j = joint_at(&sim, kind, base, cart, DVec3::ZERO, DVec3::X);
    sim.insert_joint(base, cart, j).unwrap();
    for _ in 0..180 {
        sim.step();
    }
    let x = sim.body(cart).unwrap().position;
    assert!(
        (x.x - 0.25).abs() < 1e-3 && x.truncate().y.abs() < 1e-6,
        "{x}"
    );
    assert!(
        x.z.abs() < 1e-3,
        "gravity pulled the slider off its axis: {x}"
    );
}

/// Limits hold fast motion: a door flung at 20 rad/s stops at its 0.5 rad stop, a slider thrown
/// at 10 m/s stops at 0.3 m, a bob falling on a 1 m rope stops at 1 m, each overshooting by less
/// than 1e-3, and none gains energy.
#[test]
fn limits_stop_fast_motion() {
    // Door.
    let mut sim = world(4);
    let frame = anchor(&mut sim, DVec3::ZERO);
    let door = ball(&mut sim, 10.0, 0.2, DVec3::new(0.5, 0.0, 0.0));
    let kind = JointKind::Revolute {
        limit: Some(JointLimit::new(-0.5, 0.5)),
        motor: None,
    };
    let j = joint_at(&sim, kind, frame, door, DVec3::ZERO, DVec3::Z);
    sim.insert_joint(frame, door, j).unwrap();
    sim.set_velocity(door, DVec3::new(0.0, 10.0, 0.0), DVec3::new(0.0, 0.0, 20.0))
        .unwrap();
    let e0 = sim.kinetic_energy();
    let mut widest = 0.0f64;
    for _ in 0..120 {
        sim.step();
        let p = sim.body(door).unwrap().position;
        widest = widest.max(p.y.atan2(p.x));
        assert!(sim.kinetic_energy() <= e0 * (1.0 + 1e-9));
    }
    assert!(
        widest < 0.5 + 1e-3 && widest > 0.45,
        "door opened to {widest} rad"
    );

    // Slider.
    let mut sim = world(4);
    let rail = anchor(&mut sim, DVec3::ZERO);
    let cart = ball(&mut sim, 1.0, 0.1, DVec3::ZERO);
    let kind = JointKind::Prismatic {
        limit: Some(JointLimit::new(-0.3, 0.3)),
        motor: None,
    };
    let j = joint_at(&sim, kind, rail, cart, DVec3::ZERO, DVec3::X);
    sim.insert_joint(rail, cart, j).unwrap();
    sim.set_velocity(cart, DVec3::new(10.0, 0.0, 0.0), DVec3::ZERO)
        .unwrap();
    let mut farthest = 0.0f64;
    for _ in 0..60 {
        sim.step();
        farthest = farthest.max(sim.body(cart).unwrap().position.x);
    }
    assert!(
        farthest < 0.3 + 1e-3 && farthest > 0.29,
        "slider went to {farthest}"
    );

    // Rope.
    let mut sim = world(4);
    let top = anchor(&mut sim, DVec3::new(0.0, 0.0, 3.0));
    let bob = ball(&mut sim, 1.0, 0.05, DVec3::new(0.0, 0.0, 3.0));
    let j = joint_at(
        &sim,
        JointKind::Distance { min: 0.0, max: 1.0 },
        top,
        bob,
        DVec3::new(0.0, 0.0, 3.0),
        DVec3::X,
    );
    sim.insert_joint(top, bob, j).unwrap();
    let e0 = energy(&sim);
    let mut lowest = 3.0f64;
    for _ in 0..120 {
        sim.step();
        lowest = lowest.min(sim.body(bob).unwrap().position.z);
        assert!(energy(&sim) <= e0 + 1e-9, "{} > {e0}", energy(&sim));
    }
    assert!(
        lowest > 2.0 - 1e-3 && lowest < 2.0 + 1e-6,
        "rope stretched to {}",
        3.0 - lowest
    );
}

/// Undriven frictionless mechanisms never gain energy: a double pendulum and a 10-link chain
/// released sideways, 20 s each, total energy never above its start by more than 1e-6 of the
/// swing's energy scale.
#[test]
fn undriven_mechanisms_never_gain_energy() {
    for links in [2usize, 10] {
        let mut sim = world(4);
        let pivot = DVec3::new(0.0, 0.0, 5.0);
        let mut prev = anchor(&mut sim, pivot);
        let mut prev_end = pivot;
        let len = 0.3;
        for _ in 0..links {
            let centre = prev_end + DVec3::new(len / 2.0, 0.0, 0.0);
            let link = ball(&mut sim, 1.0, 0.05, centre);
            let j = joint_at(
                &sim,
                JointKind::Spherical {
                    swing_limit: None,
                    twist_limit: None,
                },
                prev,
                link,
                prev_end,
                DVec3::X,
            );
            sim.insert_joint(prev, link, j).unwrap();
            prev = link;
            prev_end = centre + DVec3::new(len / 2.0, 0.0, 0.0);
        }
        let e0 = energy(&sim);
        let scale = links as f64 * 9.81 * len * links as f64;
        let mut highest = f64::NEG_INFINITY;
        for _ in 0..1200 {
            sim.step();
            highest = highest.max(energy(&sim) - e0);
        }
        eprintln!("{links} links: largest gain {highest:.3e} J (scale {scale} J)");
        assert!(highest <= 1e-6 * scale, "{links} links gained {highest} J");
    }
}

/// A 10 kg ball on a spring (a distance joint of rest length 1 m with compliance 1000 N/m)
/// oscillates with the period `2π √(m/k)` within 2 %, and its energy (with the spring's) never
/// grows.
#[test]
fn a_compliant_joint_is_a_spring() {
    let mut sim = world(8);
    sim.set_settings(SimulationSettings {
        world: StepSettings {
            gravity: DVec3::ZERO,
            ..sim.settings().world
        },
        ..*sim.settings()
    })
    .unwrap();
    let wall = anchor(&mut sim, DVec3::ZERO);
    let (m, k) = (10.0, 1000.0);
    let bob = ball(&mut sim, m, 0.1, DVec3::new(1.1, 0.0, 0.0));
    let j = joint_at(
        &sim,
        JointKind::Distance { min: 1.0, max: 1.0 },
        wall,
        bob,
        DVec3::ZERO,
        DVec3::X,
    )
    .with_world_anchor_b(sim.body(bob).unwrap(), DVec3::new(1.1, 0.0, 0.0))
    .with_compliance(JointCompliance {
        linear_stiffness: k,
        linear_damping: 0.0,
        angular_stiffness: 0.0,
        angular_damping: 0.0,
    });
    sim.insert_joint(wall, bob, j).unwrap();
    let spring_energy = |sim: &Simulation| {
        let x = sim.body(bob).unwrap().position.x - 1.0;
        0.5 * k * x * x + sim.kinetic_energy()
    };
    let e0 = spring_energy(&sim);
    let mut crossings = Vec::new();
    let mut last = 0.1;
    for step in 1..=600 {
        sim.step();
        let x = sim.body(bob).unwrap().position.x - 1.0;
        if last > 0.0 && x <= 0.0 {
            crossings.push(step as f64 / 60.0);
        }
        last = x;
        assert!(spring_energy(&sim) <= e0 * (1.0 + 1e-9));
    }
    let n = crossings.len() - 1;
    let period = (crossings[n] - crossings[0]) / n as f64;
    let expected = 2.0 * PI * (m / k).sqrt();
    eprintln!("spring period {period:.4} s, analytic {expected:.4} s");
    assert!(
        (period / expected - 1.0).abs() < 0.02,
        "{period} vs {expected}"
    );
}

/// A fixed joint with a 50 N breaking force cannot hold 10 kg: it breaks at the first step and
/// the body falls; with 200 N it holds.
#[test]
fn joints_break_above_their_force() {
    for (limit, breaks) in [(50.0, true), (200.0, false)] {
        let mut sim = world(4);
        let top = anchor(&mut sim, DVec3::new(0.0, 0.0, 1.0));
        let body = ball(&mut sim, 10.0, 0.1, DVec3::new(0.0, 0.0, 0.9));
        let j = joint_at(
            &sim,
            JointKind::Fixed,
            top,
            body,
            DVec3::new(0.0, 0.0, 1.0),
            DVec3::X,
        )
        .with_break_force(limit);
        let h = sim.insert_joint(top, body, j).unwrap();
        for _ in 0..30 {
            sim.step();
        }
        let z = sim.body(body).unwrap().position.z;
        assert_eq!(sim.joint_state(h).unwrap().broken, breaks, "limit {limit}");
        if breaks {
            assert!(z < 0.0, "a broken joint held: z {z}");
        } else {
            assert!((z - 0.9).abs() < 1e-3, "z {z}");
        }
    }
}

/// Two overlapping boxes joined by a joint do not collide (no interfering pair), unless the
/// joint says they do; removing a body removes its joints.
#[test]
fn connected_bodies_do_not_collide_by_default() {
    for collide in [false, true] {
        let mut sim = world(4);
        let shape = Shape::from(Primitive::cuboid(DVec3::splat(0.2)).unwrap());
        let a = crate::tests::test_bodies::add_shape(
            &mut sim,
            &shape,
            100.0,
            DVec3::new(0.0, 0.0, 1.0),
            DQuat::IDENTITY,
        );
        let b = crate::tests::test_bodies::add_shape(
            &mut sim,
            &shape,
            100.0,
            DVec3::new(0.3, 0.0, 1.0),
            DQuat::IDENTITY,
        );
        let j = joint_at(
            &sim,
            JointKind::Fixed,
            a,
            b,
            DVec3::new(0.15, 0.0, 1.0),
            DVec3::X,
        )
        .with_collide_connected(collide);
        let h = sim.insert_joint(a, b, j).unwrap();
        sim.step();
        assert_eq!(
            sim.pair_contacts().len(),
            usize::from(collide),
            "collide {collide}"
        );
        sim.remove(b).unwrap();
        assert!(sim.joint(h).is_none());
        assert_eq!(sim.joints().count(), 0);
        assert!(matches!(sim.remove_joint(h), Err(JointError::NoJoint(_))));
    }
}

/// A pendulum at rest falls asleep with the body it hangs from as one island, and both wake when
/// the game pushes one of them.
#[test]
fn joined_bodies_sleep_and_wake_as_one_island() {
    let mut sim = Simulation::new(SimulationSettings::default()).unwrap();
    let top = anchor(&mut sim, DVec3::new(0.0, 0.0, 3.0));
    let upper = ball(&mut sim, 1.0, 0.05, DVec3::new(0.0, 0.0, 2.5));
    let lower = ball(&mut sim, 1.0, 0.05, DVec3::new(0.0, 0.0, 2.0));
    for (a, b, p) in [(top, upper, 3.0), (upper, lower, 2.5)] {
        let j = joint_at(
            &sim,
            JointKind::Spherical {
                swing_limit: None,
                twist_limit: None,
            },
            a,
            b,
            DVec3::new(0.0, 0.0, p),
            DVec3::X,
        );
        sim.insert_joint(a, b, j).unwrap();
    }
    for _ in 0..120 {
        sim.step();
    }
    assert!(sim.body(upper).unwrap().sleeping && sim.body(lower).unwrap().sleeping);
    sim.apply_impulse(lower, DVec3::new(1.0, 0.0, 0.0)).unwrap();
    assert!(
        !sim.body(upper).unwrap().sleeping,
        "the island did not wake"
    );
    for _ in 0..10 {
        sim.step();
    }
    assert!(sim.body(upper).unwrap().linear_velocity.length() > 1e-3);
}

/// A 20-link chain of 0.1 kg, 10 cm links holding a 10 kg load (mass ratio 1:100) at 60 Hz,
/// released from a slanted straight line, swings in one piece: finite, every joint within
/// 1e-6 m over the last 10 s of 20 (the joint groups' direct solve; scalar Gauss–Seidel let two
/// such links stretch by metres), and the load hangs 2.1 m below the pivot at the end.
///
/// The links have a rod's inertia (`m L² / 12`). A link's rotation under the load's tension `T`
/// is a stiff mode of frequency `√(6 T / (m L))` (240 rad/s here); semi-implicit Euler is stable
/// for it while `ω h < 2` (1.0 at 4 substeps). Links with a tenth of that inertia (a 2 cm ball
/// carrying anchors 5 cm away) need 8 substeps.
#[test]
fn a_chain_holds_a_hundred_times_heavier_load() {
    let mut sim = world(4);
    let pivot = DVec3::new(0.0, 0.0, 5.0);
    let mut prev = anchor(&mut sim, pivot);
    let mut end = pivot;
    let len = 0.1f64;
    let mut joints = Vec::new();
    for i in 0..=20 {
        let dir = DVec3::new(0.6, 0.0, -0.8);
        let centre = end + dir * (len / 2.0);
        let link = if i == 20 {
            ball(&mut sim, 10.0, 0.1, centre)
        } else {
            // 0.4 m r² = m L² / 12.
            ball(&mut sim, 0.1, len / 4.8f64.sqrt(), centre)
        };
        let j = joint_at(
            &sim,
            JointKind::Spherical {
                swing_limit: None,
                twist_limit: None,
            },
            prev,
            link,
            end,
            DVec3::X,
        );
        joints.push(sim.insert_joint(prev, link, j).unwrap());
        sim.set_damping(link, 0.1, 0.1).unwrap();
        prev = link;
        end = centre + dir * (len / 2.0);
    }
    let mut worst = 0.0f64;
    for step in 0..1200 {
        sim.step();
        if step >= 600 {
            for &h in &joints {
                worst = worst.max(joint_error(&sim, h).0);
            }
        }
    }
    let load = sim.body(prev).unwrap().position;
    eprintln!("chain: worst joint error {worst:.2e} m over the last 10 s, load at {load}");
    assert!(load.is_finite());
    assert!(worst < 1e-6, "chain stretched by {worst} m at a joint");
    // Taut: the load's centre 20.5 links from the pivot.
    let reach = (load - pivot).length();
    assert!((reach - 2.05).abs() < 0.01, "load {reach} m from the pivot");
}

/// Bad joints are refused with the reason.
#[test]
fn bad_joints_are_refused() {
    let mut sim = world(4);
    let a = anchor(&mut sim, DVec3::ZERO);
    let b = ball(&mut sim, 1.0, 0.1, DVec3::X);
    let good = joint_at(&sim, JointKind::Fixed, a, b, DVec3::ZERO, DVec3::X);
    let mut nan = good;
    nan.frame_a.anchor.x = f64::NAN;
    assert!(matches!(
        sim.insert_joint(a, b, nan),
        Err(JointError::NonFinite(_))
    ));
    let reversed = Joint {
        kind: JointKind::Prismatic {
            limit: Some(JointLimit::new(1.0, -1.0)),
            motor: None,
        },
        ..good
    };
    assert!(matches!(
        sim.insert_joint(a, b, reversed),
        Err(JointError::BadLimit { .. })
    ));
    assert!(matches!(
        sim.insert_joint(b, b, good),
        Err(JointError::SameBody)
    ));
    let negative = good.with_break_force(-1.0);
    assert!(matches!(
        sim.insert_joint(a, b, negative),
        Err(JointError::Negative(_))
    ));
    let removed = ball(&mut sim, 1.0, 0.1, DVec3::Y);
    sim.remove(removed).unwrap();
    assert!(matches!(
        sim.insert_joint(a, removed, good),
        Err(JointError::NoBody)
    ));
    assert_eq!(sim.joints().count(), 0);
    assert!(sim.insert_joint(a, b, good).is_ok());
}

/// What a ragdoll drop ([`ragdoll_drop`]) did.
pub(crate) struct RagdollRun {
    /// When it came to rest for good: every body below 1 mm/s from then on (`None` if one
    /// still moved in the last second), seconds.
    pub rest: Option<f64>,
    /// The largest rise of the total energy above its start, joules.
    pub gain: f64,
    /// The start's total energy, joules.
    pub start: f64,
    /// The worst joint error at the end, metres.
    pub joint_error: f64,
    /// The lowest point of any body at the end, along the turned up axis, metres.
    pub lowest: f64,
}

/// An 11-body ragdoll of primitives ([`ragdoll`]) dropped tumbling from 0.6 m onto a ground
/// half-space with no damping and no sleeping, the whole scene (ground, gravity, ragdoll, its
/// velocities) turned by `turn` about the origin, the torso given 0.5 m/s along x and `spin`;
/// `steps` steps at 60 Hz.
pub(crate) fn ragdoll_drop(turn: DQuat, spin: DVec3, steps: usize) -> RagdollRun {
    let mut sim = Simulation::new(SimulationSettings {
        sleep: SleepSettings::NEVER,
        ..Default::default()
    })
    .unwrap();
    let mut s = *sim.settings();
    s.world.gravity = turn * s.world.gravity;
    sim.set_settings(s).unwrap();
    crate::tests::test_bodies::add_turned_ground(&mut sim, turn);
    let (ragdoll, joints) = ragdoll(&mut sim, DVec3::new(0.0, 0.0, 0.6));
    // The joints' frames are the bodies' own, so turning every body turns the whole ragdoll.
    for &b in &ragdoll {
        let body = sim.body(b).unwrap();
        let (p, q) = (turn * body.position, turn * body.orientation);
        sim.set_pose(b, p, q).unwrap();
    }
    sim.set_velocity(ragdoll[1], turn * DVec3::new(0.5, 0.0, 0.0), turn * spin)
        .unwrap();
    let start = energy(&sim);
    let (mut gain, mut moving_at) = (f64::NEG_INFINITY, 0usize);
    for step in 0..steps {
        sim.step();
        gain = gain.max(energy(&sim) - start);
        if ragdoll
            .iter()
            .any(|&b| sim.body(b).unwrap().linear_velocity.length() >= 1e-3)
        {
            moving_at = step + 1;
        }
    }
    let up = turn * DVec3::Z;
    RagdollRun {
        rest: (moving_at + 60 <= steps).then_some(moving_at as f64 / 60.0),
        gain,
        start,
        joint_error: joints
            .iter()
            .map(|&h| joint_error(&sim, h).0)
            .fold(0.0, f64::max),
        lowest: ragdoll
            .iter()
            .map(|&b| lowest_point(&sim, b, up))
            .fold(f64::INFINITY, f64::min),
    }
}

/// The 11-body ragdoll ([`ragdoll_drop`]; 1:18 mass ratio between head and forearm… torso, on
/// spherical and revolute joints with swing and hinge limits) dropped tumbling, with no damping
/// and no sleeping, in three turned worlds (z up, y up, and turned 0.7 rad about (1, 2, 0.5)),
/// each with its own spin: every joint within 1e-3 m of its lock at the end, nothing below the
/// ground by more than 1 cm, at rest (every body below 1 mm/s) from 12 s on, and the total
/// energy never above its start. Measured: at rest from 2.7, 2.7 and 2.45 s (2.1, 2.9 and 2.4 s
/// before fast primitive pairs looked ahead: `contact::speculative`); all nine pairs of these
/// turns and spins (`ragdoll_survey`) from 2.4–3.6 s but one, from 18.2 s (before: 2.1–9.7 s).
/// The three here are not the hardest: of 24 drops with random spins (`ragdoll_survey`) 18 are
/// at rest by 12 s.
///
/// Until 2026-11-28 (issue 28) it came to rest from 11 s z up only: turned, the same drop
/// still rocked at 0.13 m/s at 20 s, and of the nine, five were at rest by 19 s. Three causes,
/// each fixed: the friction rows' tangent basis was taken from the world's axes (now body a's
/// frame: a turned scene solves the same rows); a primitive's parts on a half-space came from a
/// cap as deep as its speculative margin, which grows with the approach speed, so a resting
/// head's four parts changed with the sign of its small velocity and fed it back (a rocking
/// with a period of two steps); and ten velocity sweeps left the contacts and the joints
/// unconverged (the sweeps now go on while they still change a contact's velocity by more than
/// a hundredth of gravity's per substep, at most 40).
#[test]
fn a_ragdoll_falls_and_comes_to_rest() {
    for (turn, spin) in [
        (DQuat::IDENTITY, DVec3::new(0.0, 2.0, 1.0)),
        (
            DQuat::from_rotation_x(-PI / 2.0),
            DVec3::new(1.5, -1.0, 0.5),
        ),
        (
            DQuat::from_axis_angle(DVec3::new(1.0, 2.0, 0.5).normalize(), 0.7),
            DVec3::new(-1.0, 0.0, 2.5),
        ),
    ] {
        let run = ragdoll_drop(turn, spin, 1200);
        eprintln!(
            "ragdoll turned {turn}: joint error {:.2e} m, at rest from {:?} s, lowest {:.4} m, \
             largest energy gain {:.3e} J",
            run.joint_error, run.rest, run.lowest, run.gain
        );
        assert!(run.joint_error < 1e-3, "joint error {}", run.joint_error);
        assert!(
            run.rest.is_some_and(|t| t <= 12.0),
            "turned {turn}: not at rest from 12 s ({:?})",
            run.rest
        );
        assert!(run.lowest > -0.01, "sank to {}", run.lowest);
        assert!(run.gain <= 1e-6 * run.start.abs(), "gained {} J", run.gain);
    }
}

/// Experiment: [`ragdoll_drop`] in every pair of three turns and three spins, and with 24 random
/// spins, printed, to compare solver variants on many trajectories rather than one. `cargo test
/// -p interfere_dynamics --release --lib -- --ignored --nocapture ragdoll_survey`. Measured
/// 2026-11-29 (fifteenth session): of the 24, 18 at rest by 12 s, two more by 18 s, four still
/// moving at about 1 mm/s at 20 s. Traced in the third (at rest only from 17.4 s): a thigh
/// rocking with a period of two steps, next to a contact whose four parts swap their feature
/// keys every step (see docs/benchmarks.md, "Resting ragdolls, and the principal axes' sign").
#[test]
#[ignore = "experiment; run in release with --nocapture"]
fn ragdoll_survey() {
    let turns = [
        DQuat::IDENTITY,
        DQuat::from_rotation_x(-PI / 2.0),
        DQuat::from_axis_angle(DVec3::new(1.0, 2.0, 0.5).normalize(), 0.7),
    ];
    let spins = [
        DVec3::new(0.0, 2.0, 1.0),
        DVec3::new(1.5, -1.0, 0.5),
        DVec3::new(-1.0, 0.0, 2.5),
    ];
    let mut rested = 0;
    for (i, turn) in turns.iter().enumerate() {
        for (j, spin) in spins.iter().enumerate() {
            let run = ragdoll_drop(*turn, *spin, 1200);
            rested += usize::from(run.rest.is_some());
            eprintln!(
                "ragdoll turn {i} spin {j}: at rest from {:?} s, energy gain {:.2e} J",
                run.rest, run.gain
            );
        }
    }
    eprintln!("ragdoll survey: {rested} of 9 at rest by 19 s");
    // And 24 spins drawn at random (components in ±2.5 rad/s), the three turns in turn: how
    // many are at rest by 12 s, as the test above asks of its three.
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let (mut by_twelve, mut line) = (0, String::new());
    for k in 0..24 {
        let spin = DVec3::new(
            rng.random_range(-2.5..2.5),
            rng.random_range(-2.5..2.5),
            rng.random_range(-2.5..2.5),
        );
        let run = ragdoll_drop(turns[k % 3], spin, 1200);
        by_twelve += usize::from(run.rest.is_some_and(|t| t <= 12.0));
        line += &format!(" {:.1}", run.rest.unwrap_or(f64::INFINITY));
    }
    eprintln!("ragdoll survey, random spins: {by_twelve} of 24 at rest by 12 s; from (s):{line}");
}

/// The lowest point of a body's primitive collider along `up`.
fn lowest_point(sim: &Simulation, h: BodyHandle, up: DVec3) -> f64 {
    let b = sim.body(h).unwrap();
    match &sim.collider(h).unwrap().shape {
        Shape::Primitive(p) => {
            let pose = b.mesh_pose();
            p.primitive().support(&pose, -up).unwrap().unwrap().dot(up)
        }
        _ => unreachable!("the ragdoll is made of primitives"),
    }
}

/// Builds the ragdoll (pelvis, torso, head, two arms and two legs of two parts each) standing,
/// lifted by `lift`; returns its bodies (pelvis first, torso second) and joints.
fn ragdoll(sim: &mut Simulation, lift: DVec3) -> (Vec<BodyHandle>, Vec<JointHandle>) {
    use crate::tests::test_bodies::add_shape;
    let density = 1000.0;
    let boxy =
        |x: f64, y: f64, z: f64| Shape::from(Primitive::cuboid(DVec3::new(x, y, z)).unwrap());
    let capsule = |half: f64, r: f64| Shape::from(Primitive::capsule(half, r).unwrap());
    // Capsules are along local Y: turned onto X for the arms and Z for the legs.
    let along_x = DQuat::from_rotation_z(-PI / 2.0);
    let along_z = DQuat::from_rotation_x(PI / 2.0);
    let mut bodies = Vec::new();
    let mut add = |sim: &mut Simulation, s: Shape, at: DVec3, q: DQuat| {
        let h = add_shape(sim, &s, density, at + lift, q);
        bodies.push(h);
        h
    };
    let pelvis = add(
        sim,
        boxy(0.15, 0.1, 0.08),
        DVec3::new(0.0, 0.0, 1.0),
        DQuat::IDENTITY,
    );
    let torso = add(
        sim,
        boxy(0.17, 0.1, 0.2),
        DVec3::new(0.0, 0.0, 1.3),
        DQuat::IDENTITY,
    );
    let head = add(
        sim,
        Shape::from(Primitive::sphere(0.1).unwrap()),
        DVec3::new(0.0, 0.0, 1.63),
        DQuat::IDENTITY,
    );
    let mut joints = Vec::new();
    let mut join = |sim: &mut Simulation,
                    a: BodyHandle,
                    b: BodyHandle,
                    kind: JointKind,
                    at: DVec3,
                    axis: DVec3| {
        let j = joint_at(sim, kind, a, b, at + lift, axis);
        joints.push(sim.insert_joint(a, b, j).unwrap());
    };
    let swing = |s: f64| JointKind::Spherical {
        swing_limit: Some(s),
        twist_limit: None,
    };
    let hinge = |min: f64, max: f64| JointKind::Revolute {
        limit: Some(JointLimit::new(min, max)),
        motor: None,
    };
    join(
        sim,
        pelvis,
        torso,
        swing(0.5),
        DVec3::new(0.0, 0.0, 1.09),
        DVec3::Z,
    );
    join(
        sim,
        torso,
        head,
        swing(0.6),
        DVec3::new(0.0, 0.0, 1.52),
        DVec3::Z,
    );
    for side in [-1.0, 1.0] {
        let upper = add(
            sim,
            capsule(0.1, 0.05),
            DVec3::new(side * 0.35, 0.0, 1.45),
            along_x,
        );
        let lower = add(
            sim,
            capsule(0.1, 0.05),
            DVec3::new(side * 0.65, 0.0, 1.45),
            along_x,
        );
        join(
            sim,
            torso,
            upper,
            swing(1.5),
            DVec3::new(side * 0.2, 0.0, 1.45),
            DVec3::X * side,
        );
        join(
            sim,
            upper,
            lower,
            hinge(-0.1, 2.4),
            DVec3::new(side * 0.5, 0.0, 1.45),
            DVec3::Z * side,
        );
        let thigh = add(
            sim,
            capsule(0.14, 0.07),
            DVec3::new(side * 0.09, 0.0, 0.71),
            along_z,
        );
        let shin = add(
            sim,
            capsule(0.14, 0.06),
            DVec3::new(side * 0.09, 0.0, 0.29),
            along_z,
        );
        join(
            sim,
            pelvis,
            thigh,
            swing(1.2),
            DVec3::new(side * 0.09, 0.0, 0.92),
            DVec3::NEG_Z,
        );
        join(
            sim,
            thigh,
            shin,
            hinge(-2.4, 0.05),
            DVec3::new(side * 0.09, 0.0, 0.5),
            DVec3::X,
        );
    }
    let _ = head;
    (bodies, joints)
}

/// A car (a 90 kg box on four 0.3 m cylinder wheels, each on a hinge with a velocity motor)
/// drives on the ground: it reaches the rolling speed `ω r` of its motors' 5 rad/s within 10 %
/// and stays level.
#[test]
fn a_motorised_car_drives_at_its_wheels_speed() {
    use crate::tests::test_bodies::add_shape;
    let mut sim = Simulation::new(SimulationSettings {
        sleep: SleepSettings::NEVER,
        ..Default::default()
    })
    .unwrap();
    crate::tests::test_bodies::add_ground(&mut sim);
    let chassis_shape = Shape::from(Primitive::cuboid(DVec3::new(1.0, 0.5, 0.15)).unwrap());
    let chassis = add_shape(
        &mut sim,
        &chassis_shape,
        300.0,
        DVec3::new(0.0, 0.0, 0.5),
        DQuat::IDENTITY,
    );
    let (r, speed) = (0.3, 5.0);
    let wheel_shape = Shape::from(Primitive::cylinder(0.1, r).unwrap());
    for (x, y) in [(0.7, 0.62), (0.7, -0.62), (-0.7, 0.62), (-0.7, -0.62)] {
        // Cylinders are along local Y: the axle.
        let at = DVec3::new(x, y, r + 0.002);
        let wheel = add_shape(&mut sim, &wheel_shape, 500.0, at, DQuat::IDENTITY);
        let kind = JointKind::Revolute {
            limit: None,
            motor: Some(JointMotor::velocity(speed, 200.0)),
        };
        let j = joint_at(&sim, kind, chassis, wheel, at, DVec3::Y);
        sim.insert_joint(chassis, wheel, j).unwrap();
    }
    for _ in 0..180 {
        sim.step();
    }
    let c = sim.body(chassis).unwrap();
    let v = c.linear_velocity;
    let tilt = (c.orientation * DVec3::Z).angle_between(DVec3::Z);
    eprintln!("car: velocity {v}, tilt {tilt:.3e} rad, at {}", c.position);
    assert!(
        (v.x / (speed * r) - 1.0).abs() < 0.1,
        "car at {v}, wheels' speed {}",
        speed * r
    );
    assert!(v.y.abs() < 0.05 && tilt < 0.05, "veered: {v}, tilt {tilt}");
}

/// The twist of a spherical joint (B's frame relative to A's about A's X axis), by the
/// swing–twist decomposition done the long way: the shortest rotation taking X to B's X axis
/// (the swing) is undone, and what is left is a rotation about X.
fn twist_and_swing(sim: &Simulation, h: JointHandle) -> (f64, f64) {
    let j = sim.joint(h).unwrap();
    let (a, b) = sim.joint_bodies(h).unwrap();
    let qa = j.frame_a.world_rotation(sim.body(a).unwrap());
    let qb = j.frame_b.world_rotation(sim.body(b).unwrap());
    let q = qa.inverse() * qb;
    let u = q * DVec3::X;
    let swing = DQuat::from_rotation_arc(DVec3::X, u);
    let mut t = swing.inverse() * q;
    if t.w < 0.0 {
        t = -t;
    }
    (2.0 * t.x.atan2(t.w), DVec3::X.angle_between(u))
}

/// Twist limits: a box on a ball joint at its centre (no damping, no gravity torque), spun about
/// the joint axis and swung at once, twists up to its limit and no farther (1e-3 rad), in both
/// directions, with and without a swing cone (which holds too), and its energy never grows.
#[test]
fn twist_limits_hold() {
    for (spin, swing_limit) in [
        (4.0, None),
        (-4.0, None),
        (4.0, Some(0.5)),
        (-6.0, Some(0.5)),
    ] {
        let mut sim = world(4);
        let pivot = anchor(&mut sim, DVec3::new(0.0, 0.0, 2.0));
        let props = MassProperties {
            volume: 0.004,
            mass: 1.0,
            center_of_mass: DVec3::ZERO,
            inertia: DMat3::from_diagonal(DVec3::new(0.002, 0.004, 0.005)),
        };
        let body = Body::dynamic(&props, DVec3::new(0.0, 0.0, 2.0), DQuat::IDENTITY)
            .unwrap()
            .with_velocity(DVec3::ZERO, DVec3::new(spin, 1.5, -1.0));
        let b = sim.insert(body, None).unwrap();
        let (min, max) = (-0.4, 0.3);
        let j = joint_at(
            &sim,
            JointKind::Spherical {
                swing_limit,
                twist_limit: Some(JointLimit::new(min, max)),
            },
            pivot,
            b,
            DVec3::new(0.0, 0.0, 2.0),
            DVec3::X,
        );
        let h = sim.insert_joint(pivot, b, j).unwrap();
        let e0 = energy(&sim);
        let (mut lowest, mut highest, mut widest) = (0.0f64, 0.0f64, 0.0f64);
        for _ in 0..180 {
            sim.step();
            let (twist, swing) = twist_and_swing(&sim, h);
            lowest = lowest.min(twist);
            highest = highest.max(twist);
            widest = widest.max(swing);
            assert!(
                twist >= min - 1e-3 && twist <= max + 1e-3,
                "twist {twist} outside [{min}, {max}] (spin {spin}, swing {swing_limit:?})"
            );
            assert!(energy(&sim) <= e0 * (1.0 + 1e-9), "energy grew");
        }
        if spin > 0.0 {
            assert!(
                highest > max - 0.02,
                "never reached the upper limit: {highest}"
            );
        } else {
            assert!(
                lowest < min + 0.02,
                "never reached the lower limit: {lowest}"
            );
        }
        if let Some(s) = swing_limit {
            assert!(widest <= s + 1e-3, "swing {widest} past {s}");
        }
    }
}

/// A refused twist range: outside `[−π, π]`, or min above max.
#[test]
fn bad_twist_limits_are_refused() {
    let mut sim = world(4);
    let a = anchor(&mut sim, DVec3::ZERO);
    let b = ball(&mut sim, 1.0, 0.1, DVec3::X);
    for (min, max) in [(-4.0, 0.0), (0.5, -0.5), (0.0, f64::NAN)] {
        let j = joint_at(
            &sim,
            JointKind::Spherical {
                swing_limit: None,
                twist_limit: Some(JointLimit { min, max }),
            },
            a,
            b,
            DVec3::ZERO,
            DVec3::X,
        );
        assert!(
            matches!(sim.insert_joint(a, b, j), Err(JointError::BadLimit { .. })),
            "({min}, {max}) accepted"
        );
    }
}

/// Experiment: the machines demo's staircase (five static primitive boxes 0.2 m high and 0.4 m
/// deep, friction 0.8) with the ragdoll ([`ragdoll`], angular damping 1 per second on every
/// part, as the demo gives it) standing on the top tread and pushed over the edge, 24 seeded
/// pushes (1–2 m/s, turned up to ±0.4 rad about the vertical) with sleeping on: when every part
/// is asleep for good, and how many are by 45 s (the demo's criterion), with the fastest part's
/// speed after 45 s for those that are not. A single run's end pose is chaotic (any change in
/// the contact moves it), so variants are compared on these 24 rather than on the demo's one.
/// Measured 2026-11-29 (sixteenth session; see docs/benchmarks.md, "A ragdoll on stairs"):
/// 21 of 24 before, 22 of 24 after the broad phase's margin and the face contact of a piece
/// lying on a cuboid (overhangs sampled); one of the two left traced to a forearm in the corner
/// between the ground and the lowest riser. `cargo test -p interfere_dynamics
/// --release --lib -- --ignored --nocapture stairs_ragdoll_survey`.
#[test]
#[ignore = "experiment; run in release with --nocapture"]
fn stairs_ragdoll_survey() {
    use crate::tests::test_bodies::add_ground;
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    let (mut by_45, mut line) = (0, String::new());
    for _ in 0..24 {
        let mut sim = Simulation::new(SimulationSettings::default()).unwrap();
        add_ground(&mut sim);
        for k in 0..5 {
            let h = 0.2 * (5 - k) as f64;
            let step = Primitive::cuboid(DVec3::new(0.2, 1.0, h / 2.0)).unwrap();
            let at = DVec3::new(-0.4 * (5 - k) as f64, 0.0, h / 2.0);
            let body = Body::fixed(at, DQuat::IDENTITY)
                .unwrap()
                .with_material(Material::new(0.8, 0.0));
            sim.insert(body, Some(BodyShape::from_shape(Shape::from(step))))
                .unwrap();
        }
        let (parts, _) = ragdoll(&mut sim, DVec3::new(-2.0, 0.0, 0.93));
        for &b in &parts {
            sim.set_damping(b, 0.0, 1.0).unwrap();
        }
        let speed = rng.random_range(1.0..2.0);
        let heading = rng.random_range(-0.4..0.4f64);
        let push = DVec3::new(heading.cos(), heading.sin(), 0.0) * speed;
        sim.set_velocity(parts[1], push, DVec3::ZERO).unwrap();
        let (mut awake_at, mut fastest_late) = (0usize, 0.0f64);
        for step in 0..3600 {
            sim.step();
            let bodies = parts.iter().map(|&b| sim.body(b).unwrap());
            if bodies.clone().any(|b| !b.sleeping) {
                awake_at = step + 1;
            }
            if step >= 2700 {
                fastest_late = bodies
                    .map(|b| b.linear_velocity.length())
                    .fold(fastest_late, f64::max);
            }
        }
        by_45 += usize::from(awake_at <= 2700);
        line += &format!(" {:.1}", awake_at as f64 / 60.0);
        if awake_at > 2700 {
            line += &format!(" ({:.1} mm/s)", fastest_late * 1e3);
        }
    }
    eprintln!("stairs ragdoll survey: {by_45} of 24 asleep by 45 s; asleep from (s):{line}");
}

//! The ragdoll scene (issue 30's peer figure, `--scene ragdoll [--frames N] [--report PATH]`):
//! the 11-body ragdoll of `a_ragdoll_falls_and_comes_to_rest` in `crates/interfere_dynamics`
//! (there z-up, here y-up) — box pelvis and torso, ball head, capsule arms and legs, density
//! 1000 — on spherical joints with swing limits (neck 0.6, spine 0.5, shoulders 1.5, hips 1.2 rad)
//! and revolute elbows and knees with limits, dropped from 0.6 m with a kick onto a ground
//! half-space and left for 20 s at 60 Hz with 4 substeps, no damping, no sleeping, jointed bodies
//! not colliding with each other. Run by avian3d 0.7 (`SphericalJoint` swing limits about the
//! joint axis, `RevoluteJoint` angle limits), bevy_rapier3d 0.36 (a `GenericJoint` with the
//! spherical or revolute locked axes, its frames' X along the joint axis, the swing limited per
//! axis — a pyramid, not a cone) and Interfere's `Simulation` in this process.
//!
//! The limits' sign conventions are each engine's own (an elbow's range may open the other way);
//! the figures compare the cost of the step and whether each ragdoll holds together and comes to
//! rest, not the pose it ends in. Reported per engine: step times, the fastest body over the last
//! 4 s, the worst joint anchor distance at the end, and the lowest body centre.

use crate::chain::{ChainRun, GRAVITY, SUBSTEPS, avian_app, rapier_app};
use bevy::prelude::*;
use std::f32::consts::PI;
use std::time::Instant;

const DENSITY: f32 = 1000.0;
const LIFT: f32 = 0.6;

/// A body part: its shape, centre and rotation.
#[derive(Clone, Copy)]
enum Part {
    Box(Vec3),
    Ball(f32),
    Capsule { half: f32, r: f32 },
}

struct Piece {
    part: Part,
    at: Vec3,
    rotation: Quat,
}

#[derive(Clone, Copy)]
enum Kind {
    Swing(f32),
    Hinge(f32, f32),
}

struct JointDef {
    a: usize,
    b: usize,
    kind: Kind,
    at: Vec3,
    axis: Vec3,
}

/// The ragdoll standing with its feet at the ground, lifted by [`LIFT`] (y-up).
fn ragdoll() -> (Vec<Piece>, Vec<JointDef>) {
    let lift = Vec3::Y * LIFT;
    let along_x = Quat::from_rotation_z(-PI / 2.0);
    let mut pieces = vec![
        Piece {
            part: Part::Box(Vec3::new(0.15, 0.08, 0.1)),
            at: Vec3::new(0.0, 1.0, 0.0) + lift,
            rotation: Quat::IDENTITY,
        },
        Piece {
            part: Part::Box(Vec3::new(0.17, 0.2, 0.1)),
            at: Vec3::new(0.0, 1.3, 0.0) + lift,
            rotation: Quat::IDENTITY,
        },
        Piece {
            part: Part::Ball(0.1),
            at: Vec3::new(0.0, 1.63, 0.0) + lift,
            rotation: Quat::IDENTITY,
        },
    ];
    let mut joints = vec![
        JointDef {
            a: 0,
            b: 1,
            kind: Kind::Swing(0.5),
            at: Vec3::new(0.0, 1.09, 0.0) + lift,
            axis: Vec3::Y,
        },
        JointDef {
            a: 1,
            b: 2,
            kind: Kind::Swing(0.6),
            at: Vec3::new(0.0, 1.52, 0.0) + lift,
            axis: Vec3::Y,
        },
    ];
    for side in [-1.0f32, 1.0] {
        let upper = pieces.len();
        pieces.push(Piece {
            part: Part::Capsule { half: 0.1, r: 0.05 },
            at: Vec3::new(side * 0.35, 1.45, 0.0) + lift,
            rotation: along_x,
        });
        pieces.push(Piece {
            part: Part::Capsule { half: 0.1, r: 0.05 },
            at: Vec3::new(side * 0.65, 1.45, 0.0) + lift,
            rotation: along_x,
        });
        joints.push(JointDef {
            a: 1,
            b: upper,
            kind: Kind::Swing(1.5),
            at: Vec3::new(side * 0.2, 1.45, 0.0) + lift,
            axis: Vec3::X * side,
        });
        joints.push(JointDef {
            a: upper,
            b: upper + 1,
            kind: Kind::Hinge(-0.1, 2.4),
            at: Vec3::new(side * 0.5, 1.45, 0.0) + lift,
            axis: Vec3::Y * side,
        });
        let thigh = pieces.len();
        pieces.push(Piece {
            part: Part::Capsule {
                half: 0.14,
                r: 0.07,
            },
            at: Vec3::new(side * 0.09, 0.71, 0.0) + lift,
            rotation: Quat::IDENTITY,
        });
        pieces.push(Piece {
            part: Part::Capsule {
                half: 0.14,
                r: 0.06,
            },
            at: Vec3::new(side * 0.09, 0.29, 0.0) + lift,
            rotation: Quat::IDENTITY,
        });
        joints.push(JointDef {
            a: 0,
            b: thigh,
            kind: Kind::Swing(1.2),
            at: Vec3::new(side * 0.09, 0.92, 0.0) + lift,
            axis: Vec3::NEG_Y,
        });
        joints.push(JointDef {
            a: thigh,
            b: thigh + 1,
            kind: Kind::Hinge(-2.4, 0.05),
            at: Vec3::new(side * 0.09, 0.5, 0.0) + lift,
            axis: Vec3::X,
        });
    }
    (pieces, joints)
}

/// The torso's kick: linear and angular velocity (y-up).
const KICK_V: Vec3 = Vec3::new(0.5, 0.0, 0.0);
const KICK_W: Vec3 = Vec3::new(0.0, 1.0, -2.0);

/// The joint's local anchors and the bases mapping X to the joint axis, per body.
fn joint_frames(pieces: &[Piece], j: &JointDef) -> (Vec3, Vec3, Quat, Quat) {
    let (pa, pb) = (&pieces[j.a], &pieces[j.b]);
    let a1 = pa.rotation.inverse() * (j.at - pa.at);
    let a2 = pb.rotation.inverse() * (j.at - pb.at);
    let world = Quat::from_rotation_arc(Vec3::X, j.axis.normalize());
    (
        a1,
        a2,
        pa.rotation.inverse() * world,
        pb.rotation.inverse() * world,
    )
}

/// Per frame after the step: each body's pose and speed; gives the worst anchor distance, the
/// fastest speed and the lowest centre.
fn measure(poses: &[(Vec3, Quat, f32)], pieces: &[Piece], joints: &[JointDef]) -> (f64, f64, f64) {
    let mut worst: f64 = 0.0;
    for j in joints {
        let (a1, a2, _, _) = joint_frames(pieces, j);
        let (pa, qa, _) = poses[j.a];
        let (pb, qb, _) = poses[j.b];
        worst = worst.max(f64::from(((pa + qa * a1) - (pb + qb * a2)).length()));
    }
    let fastest = poses.iter().map(|p| f64::from(p.2)).fold(0.0, f64::max);
    let lowest = poses
        .iter()
        .map(|p| f64::from(p.0.y))
        .fold(f64::INFINITY, f64::min);
    (worst, fastest, lowest)
}

/// The run's figures from per-frame measurements.
fn finish(
    engine: &'static str,
    step_ms: Vec<f64>,
    per_frame: &[(f64, f64, f64)],
    last_speeds: &[Pose],
) -> ChainRun {
    let last4 = per_frame.len().saturating_sub(240);
    let fastest = per_frame[last4..].iter().map(|m| m.1).fold(0.0, f64::max);
    let (worst, _, lowest) = per_frame
        .last()
        .copied()
        .unwrap_or((f64::NAN, 0.0, f64::NAN));
    ChainRun {
        engine,
        step_ms,
        worst_error: worst,
        reach: lowest,
        finite: worst.is_finite() && lowest.is_finite() && fastest.is_finite(),
        extra: serde_json::json!({
            "fastest_body_last_4_s_m_per_s": fastest,
            "worst_joint_error_at_end_m": worst,
            "lowest_centre_at_end_m": lowest,
            // Body order: pelvis, torso, head, then per side (left, right) upper arm, forearm,
            // thigh, shin.
            "body_speeds_at_end_m_per_s": last_speeds.iter().map(|p| p.2).collect::<Vec<_>>(),
        }),
    }
}

/// A body's position, rotation and speed after a step.
type Pose = (Vec3, Quat, f32);

/// Steps `state` `frames` times, timing `step` alone; after each step `observe` reads every
/// body's pose and speed (in [`ragdoll`]'s order); the run's figures.
fn run_frames<S>(
    engine: &'static str,
    state: &mut S,
    frames: u32,
    (pieces, joints): (&[Piece], &[JointDef]),
    mut step: impl FnMut(&mut S),
    mut observe: impl FnMut(&S) -> Vec<Pose>,
) -> ChainRun {
    let mut step_ms = Vec::new();
    let mut per_frame = Vec::new();
    let mut last = Vec::new();
    for _ in 0..frames {
        let t = Instant::now();
        step(state);
        step_ms.push(t.elapsed().as_secs_f64() * 1e3);
        let poses = observe(state);
        per_frame.push(measure(&poses, pieces, joints));
        last = poses;
    }
    finish(engine, step_ms, &per_frame, &last)
}

mod avian_ragdoll {
    use super::*;
    use avian3d::prelude::*;

    pub fn run(frames: u32) -> ChainRun {
        let mut app = avian_app();
        let (pieces, joints) = ragdoll();
        let world = app.world_mut();
        world.spawn((RigidBody::Static, Collider::half_space(Vec3::Y)));
        let bodies: Vec<Entity> = pieces
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let collider = match p.part {
                    Part::Box(h) => Collider::cuboid(2.0 * h.x, 2.0 * h.y, 2.0 * h.z),
                    Part::Ball(r) => Collider::sphere(r),
                    Part::Capsule { half, r } => Collider::capsule(r, 2.0 * half),
                };
                let mut e = world.spawn((
                    RigidBody::Dynamic,
                    collider,
                    ColliderDensity(DENSITY),
                    SleepingDisabled,
                    Transform::from_translation(p.at).with_rotation(p.rotation),
                ));
                if i == 1 {
                    e.insert((LinearVelocity(KICK_V), AngularVelocity(KICK_W)));
                }
                e.id()
            })
            .collect();
        for j in &joints {
            let (a1, a2, b1, b2) = joint_frames(&pieces, j);
            let (e1, e2) = (bodies[j.a], bodies[j.b]);
            match j.kind {
                Kind::Swing(s) => world.spawn((
                    SphericalJoint::new(e1, e2)
                        .with_local_anchor1(a1)
                        .with_local_anchor2(a2)
                        .with_local_basis1(b1)
                        .with_local_basis2(b2)
                        .with_twist_axis(Vec3::X)
                        .with_swing_limits(-s, s),
                    JointCollisionDisabled,
                )),
                Kind::Hinge(min, max) => world.spawn((
                    RevoluteJoint::new(e1, e2)
                        .with_local_anchor1(a1)
                        .with_local_anchor2(a2)
                        .with_local_basis1(b1)
                        .with_local_basis2(b2)
                        .with_hinge_axis(Vec3::X)
                        .with_angle_limits(min, max),
                    JointCollisionDisabled,
                )),
            };
        }
        run_frames(
            "avian3d 0.7.0",
            &mut app,
            frames,
            (&pieces, &joints),
            App::update,
            |app| {
                let world = app.world();
                bodies
                    .iter()
                    .map(|&e| {
                        let p = world.get::<Position>(e).map_or(Vec3::NAN, |p| p.0);
                        let q = world.get::<Rotation>(e).map_or(Quat::NAN, |r| r.0);
                        let v = world
                            .get::<LinearVelocity>(e)
                            .map_or(f32::NAN, |v| v.0.length());
                        (p, q, v)
                    })
                    .collect()
            },
        )
    }
}

mod rapier_ragdoll {
    use super::*;
    use bevy_rapier3d::prelude::{
        Collider, ColliderMassProperties, GenericJointBuilder, ImpulseJoint, JointAxesMask,
        JointAxis, RigidBody, Sleeping, TypedJoint, Velocity,
    };

    pub fn run(frames: u32) -> ChainRun {
        let mut app = rapier_app();
        let (pieces, joints) = ragdoll();
        let world = app.world_mut();
        world.spawn((
            RigidBody::Fixed,
            Collider::halfspace(Vec3::Y).expect("a unit normal"),
            Transform::default(),
        ));
        let bodies: Vec<Entity> = pieces
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let collider = match p.part {
                    Part::Box(h) => Collider::cuboid(h.x, h.y, h.z),
                    Part::Ball(r) => Collider::ball(r),
                    Part::Capsule { half, r } => Collider::capsule_y(half, r),
                };
                let v = if i == 1 {
                    Velocity {
                        linear: KICK_V,
                        angular: KICK_W,
                    }
                } else {
                    Velocity::zero()
                };
                world
                    .spawn((
                        RigidBody::Dynamic,
                        collider,
                        ColliderMassProperties::Density(DENSITY),
                        Sleeping::disabled(),
                        v,
                        Transform::from_translation(p.at).with_rotation(p.rotation),
                    ))
                    .id()
            })
            .collect();
        for j in &joints {
            let (a1, a2, b1, b2) = joint_frames(&pieces, j);
            let builder = match j.kind {
                Kind::Swing(s) => GenericJointBuilder::new(JointAxesMask::LOCKED_SPHERICAL_AXES)
                    .limits(JointAxis::AngY, [-s, s])
                    .limits(JointAxis::AngZ, [-s, s]),
                Kind::Hinge(min, max) => {
                    GenericJointBuilder::new(JointAxesMask::LOCKED_REVOLUTE_AXES)
                        .limits(JointAxis::AngX, [min, max])
                }
            };
            let mut joint = builder
                .local_anchor1(a1)
                .local_anchor2(a2)
                .local_basis1(b1)
                .local_basis2(b2)
                .build();
            joint.set_contacts_enabled(false);
            world.entity_mut(bodies[j.b]).insert(ImpulseJoint::new(
                bodies[j.a],
                TypedJoint::GenericJoint(joint),
            ));
        }
        run_frames(
            "bevy_rapier3d 0.36.0",
            &mut app,
            frames,
            (&pieces, &joints),
            App::update,
            |app| {
                let world = app.world();
                bodies
                    .iter()
                    .map(|&e| {
                        let t = world.get::<Transform>(e).copied().unwrap_or_default();
                        let v = world
                            .get::<Velocity>(e)
                            .map_or(f32::NAN, |v| v.linear.length());
                        (t.translation, t.rotation, v)
                    })
                    .collect()
            },
        )
    }
}

mod interfere_ragdoll {
    use super::*;
    use interfere_dynamics::{
        Body, BodyShape, HalfSpace, Joint, JointKind, JointLimit, Primitive, Shape, Simulation,
        SimulationSettings, SleepSettings,
    };
    use interfere_geometry::glam::{DQuat, DVec3};

    pub fn run(frames: u32) -> ChainRun {
        let mut settings = SimulationSettings::default();
        settings.world.gravity = DVec3::new(0.0, -f64::from(GRAVITY), 0.0);
        settings.world.dt = 1.0 / 60.0;
        settings.world.substeps = SUBSTEPS as u32;
        settings.sleep = SleepSettings::NEVER;
        let mut sim = Simulation::new(settings).expect("valid settings");
        let ground = HalfSpace::new(DVec3::Y, DVec3::ZERO).expect("a plane");
        sim.insert(
            Body::fixed(DVec3::ZERO, DQuat::IDENTITY).expect("a pose"),
            Some(BodyShape::half_space(ground)),
        )
        .expect("the ground");
        let (pieces, joints) = ragdoll();
        let d = |v: Vec3| v.as_dvec3();
        let bodies: Vec<_> = pieces
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let primitive = match p.part {
                    Part::Box(h) => Primitive::cuboid(d(h)),
                    Part::Ball(r) => Primitive::sphere(f64::from(r)),
                    Part::Capsule { half, r } => Primitive::capsule(f64::from(half), f64::from(r)),
                }
                .expect("valid dimensions");
                let shape = Shape::from(primitive);
                let mass = shape.mass_at(f64::from(DENSITY)).expect("a mass");
                let mut body =
                    Body::dynamic(&mass, d(p.at), p.rotation.as_dquat()).expect("a body");
                if i == 1 {
                    body = body.with_velocity(d(KICK_V), d(KICK_W));
                }
                sim.insert(body, Some(BodyShape::from_shape(shape)))
                    .expect("a body")
            })
            .collect();
        for j in &joints {
            let kind = match j.kind {
                Kind::Swing(s) => JointKind::Spherical {
                    swing_limit: Some(f64::from(s)),
                    twist_limit: None,
                },
                Kind::Hinge(min, max) => JointKind::Revolute {
                    limit: Some(JointLimit::new(f64::from(min), f64::from(max))),
                    motor: None,
                },
            };
            let (ba, bb) = (bodies[j.a], bodies[j.b]);
            let joint = Joint::at_world(
                kind,
                sim.body(ba).expect("a"),
                sim.body(bb).expect("b"),
                d(j.at),
                d(j.axis),
            );
            sim.insert_joint(ba, bb, joint).expect("a joint");
        }
        let mut stages = [0.0f64; 4];
        let mut run = run_frames(
            "interfere (Simulation, in process)",
            &mut sim,
            frames,
            (&pieces, &joints),
            Simulation::step,
            |sim| {
                let st = sim.stats();
                let means = [
                    st.broad_phase_ms,
                    st.narrow_phase_ms,
                    st.volume_ms,
                    st.solver_ms,
                ];
                for (k, v) in means.into_iter().enumerate() {
                    stages[k] += v / f64::from(frames);
                }
                bodies
                    .iter()
                    .map(|&h| {
                        let b = sim.body(h).expect("a body");
                        (
                            b.position.as_vec3(),
                            b.orientation.as_quat(),
                            b.linear_velocity.length() as f32,
                        )
                    })
                    .collect()
            },
        );
        run.extra["stage_means_ms"] = serde_json::json!({
            "broad_phase": stages[0],
            "narrow_phase": stages[1],
            "volume": stages[2],
            "solver": stages[3],
        });
        run
    }
}

/// Runs the three engines on the ragdoll and returns the report.
pub fn run(frames: u32) -> serde_json::Value {
    crate::chain::compare(
        "ragdoll (11 primitives on 10 limited joints, a ground half-space, 60 Hz, 4 substeps, no sleeping)",
        frames,
        [
            avian_ragdoll::run(frames),
            rapier_ragdoll::run(frames),
            interfere_ragdoll::run(frames),
        ],
    )
}

//! The chain scene (issue 30's peer figure, `--scene chain [--frames N] [--report PATH]`): twenty
//! 10 cm links of 0.1 kg (a rod's inertia, `m L² / 12`) and a 10 kg load (a 0.1 m ball's
//! inertia) hanging from a fixed pivot on spherical joints, mass ratio 1:100, released from a
//! slanted straight line and swinging at 60 Hz with 4 substeps (solver iterations in rapier),
//! linear and angular damping 0.1/s, no colliders: the joints alone. The scene of
//! `a_chain_holds_a_hundred_times_heavier_load` in `crates/interfere_dynamics` (there z-up, here
//! y-up), run by avian3d 0.7 (`SphericalJoint`), bevy_rapier3d 0.36 (`ImpulseJoint` with a
//! `SphericalJointBuilder`) and Interfere's `Simulation` in this process.
//!
//! Reported per engine: the step time (each `app.update()`, one fixed step, or `Simulation::step`)
//! and the worst distance between a joint's two anchors over the last half of the run, and the
//! load's distance from the pivot at the end (2.05 m when the chain is taut).

use bevy::app::ScheduleRunnerPlugin;
use bevy::diagnostic::FrameCountPlugin;
use bevy::prelude::*;
use bevy::time::{TimePlugin, TimeUpdateStrategy};
use bevy::transform::TransformPlugin;
use std::time::{Duration, Instant};

const LINKS: usize = 20;
const LINK_MASS: f32 = 0.1;
const LINK_LEN: f32 = 0.1;
const LOAD_MASS: f32 = 10.0;
const LOAD_R: f32 = 0.1;
const DAMPING: f32 = 0.1;
const HZ: f64 = 60.0;
pub(crate) const SUBSTEPS: usize = 4;
pub(crate) const GRAVITY: f32 = 9.81;

/// One body of the chain: centre, mass, principal inertia, and the joint that hangs it from the
/// body before it (world anchor).
struct Link {
    centre: Vec3,
    mass: f32,
    inertia: Vec3,
    joint: Vec3,
}

fn pivot() -> Vec3 {
    Vec3::new(0.0, 5.0, 0.0)
}

fn layout() -> Vec<Link> {
    let dir = Vec3::new(0.6, -0.8, 0.0);
    let mut end = pivot();
    (0..=LINKS)
        .map(|i| {
            let centre = end + dir * (LINK_LEN / 2.0);
            let (mass, inertia) = if i == LINKS {
                (LOAD_MASS, Vec3::splat(0.4 * LOAD_MASS * LOAD_R * LOAD_R))
            } else {
                // 0.4 m r² = m L² / 12 about every axis, as the Interfere test.
                (
                    LINK_MASS,
                    Vec3::splat(LINK_MASS * LINK_LEN * LINK_LEN / 12.0),
                )
            };
            let link = Link {
                centre,
                mass,
                inertia,
                joint: end,
            };
            end = centre + dir * (LINK_LEN / 2.0);
            link
        })
        .collect()
}

/// What one engine did (the ragdoll scene reuses it: `reach` is then its lowest centre, and
/// its own figures are in `extra`).
pub(crate) struct ChainRun {
    pub engine: &'static str,
    pub step_ms: Vec<f64>,
    pub worst_error: f64,
    pub reach: f64,
    pub finite: bool,
    pub extra: serde_json::Value,
}

impl ChainRun {
    fn report(&self) -> serde_json::Value {
        let mut sorted = self.step_ms.clone();
        sorted.sort_by(f64::total_cmp);
        let mean = sorted.iter().sum::<f64>() / sorted.len().max(1) as f64;
        let at = |q: f64| {
            sorted
                .get(((sorted.len() as f64 - 1.0) * q) as usize)
                .copied()
        };
        let mut out = serde_json::json!({
            "engine": self.engine,
            "steps": self.step_ms.len(),
            "step_ms": { "mean": mean, "median": at(0.5), "p95": at(0.95), "max": at(1.0) },
            "finite": self.finite,
        });
        match &self.extra {
            serde_json::Value::Object(m) => {
                for (k, v) in m {
                    out[k] = v.clone();
                }
            }
            _ => {
                out["worst_joint_error_last_half_m"] = self.worst_error.into();
                out["load_from_pivot_m"] = self.reach.into();
            }
        }
        out
    }
}

/// A headless app stepping one fixed step per update.
pub(crate) fn headless() -> App {
    let mut app = App::new();
    app.add_plugins((
        bevy::app::TaskPoolPlugin::default(),
        FrameCountPlugin,
        TimePlugin,
        ScheduleRunnerPlugin::default(),
        TransformPlugin,
    ))
    .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
        1.0 / HZ,
    )))
    .insert_resource(Time::<Fixed>::from_hz(HZ));
    app
}

/// A headless app with avian3d at [`GRAVITY`] and [`SUBSTEPS`], ready to step.
pub(crate) fn avian_app() -> App {
    use avian3d::prelude::{Gravity, PhysicsPlugins, SubstepCount};
    let mut app = headless();
    app.add_plugins(PhysicsPlugins::default())
        .insert_resource(Gravity(Vec3::new(0.0, -GRAVITY, 0.0)))
        .insert_resource(SubstepCount(SUBSTEPS as u32));
    app.finish();
    app.cleanup();
    app
}

/// A headless app with bevy_rapier3d in `FixedPostUpdate` at [`GRAVITY`], one rapier step per
/// fixed step with [`SUBSTEPS`] solver iterations (its TGS-soft substeps), ready to step.
pub(crate) fn rapier_app() -> App {
    use bevy_rapier3d::prelude::{
        NoUserData, RapierConfiguration, RapierContextInitialization, RapierPhysicsPlugin,
        TimestepMode,
    };
    use bevy_rapier3d::rapier::dynamics::IntegrationParameters;
    let integration_parameters = IntegrationParameters {
        num_solver_iterations: SUBSTEPS,
        ..IntegrationParameters::default()
    };
    let mut rapier_configuration = RapierConfiguration::new(1.0);
    rapier_configuration.gravity = Vec3::new(0.0, -GRAVITY, 0.0);
    let mut app = headless();
    app.add_plugins(
        RapierPhysicsPlugin::<NoUserData>::default()
            .with_custom_initialization(
                RapierContextInitialization::InitializeDefaultRapierContext {
                    integration_parameters,
                    rapier_configuration,
                },
            )
            .in_schedule(FixedPostUpdate),
    )
    .insert_resource(TimestepMode::Fixed {
        dt: (1.0 / HZ) as f32,
        substeps: 1,
    });
    app.finish();
    app.cleanup();
    app
}

/// Steps `app` `frames` times; after each step, `error(world)` gives the worst anchor distance.
fn run_app(
    engine: &'static str,
    mut app: App,
    frames: u32,
    error: impl Fn(&mut World) -> (f64, f64, bool),
) -> ChainRun {
    let mut step_ms = Vec::new();
    let mut worst: f64 = 0.0;
    let mut last = (0.0, 0.0, true);
    for f in 0..frames {
        let t = Instant::now();
        app.update();
        step_ms.push(t.elapsed().as_secs_f64() * 1e3);
        last = error(app.world_mut());
        if f >= frames / 2 {
            worst = worst.max(last.0);
        }
    }
    ChainRun {
        engine,
        step_ms,
        worst_error: worst,
        reach: last.1,
        finite: last.2,
        extra: serde_json::Value::Null,
    }
}

mod avian_chain {
    use super::*;
    use avian3d::prelude::*;

    pub fn run(frames: u32) -> ChainRun {
        let mut app = avian_app();
        let world = app.world_mut();
        let mut prev = world
            .spawn((RigidBody::Static, Transform::from_translation(pivot())))
            .id();
        let mut prev_centre = pivot();
        let mut joints = Vec::new();
        for l in layout() {
            let e = world
                .spawn((
                    RigidBody::Dynamic,
                    Mass(l.mass),
                    AngularInertia::new(l.inertia),
                    LinearDamping(DAMPING),
                    AngularDamping(DAMPING),
                    Transform::from_translation(l.centre),
                ))
                .id();
            let (a1, a2) = (l.joint - prev_centre, l.joint - l.centre);
            world.spawn(
                SphericalJoint::new(prev, e)
                    .with_local_anchor1(a1)
                    .with_local_anchor2(a2),
            );
            joints.push((prev, e, a1, a2));
            prev = e;
            prev_centre = l.centre;
        }
        let load = prev;
        run_app("avian3d 0.7.0", app, frames, move |world| {
            let pose = |world: &World, e: Entity| -> Option<(Vec3, Quat)> {
                match (world.get::<Position>(e), world.get::<Rotation>(e)) {
                    (Some(p), Some(r)) => Some((p.0, r.0)),
                    _ => world
                        .get::<Transform>(e)
                        .map(|t| (t.translation, t.rotation)),
                }
            };
            let mut worst: f64 = 0.0;
            let mut finite = true;
            for &(a, b, a1, a2) in &joints {
                if let (Some((pa, qa)), Some((pb, qb))) = (pose(world, a), pose(world, b)) {
                    let d = (pa + qa * a1) - (pb + qb * a2);
                    finite &= d.is_finite();
                    worst = worst.max(f64::from(d.length()));
                }
            }

            let reach =
                pose(world, load).map_or(f64::NAN, |(p, _)| f64::from((p - pivot()).length()));
            (worst, reach, finite && reach.is_finite())
        })
    }
}

mod rapier_chain {
    use super::*;
    use bevy_rapier3d::prelude::{
        AdditionalMassProperties, Damping, ImpulseJoint, MassProperties, RigidBody,
        SphericalJointBuilder,
    };

    pub fn run(frames: u32) -> ChainRun {
        let mut app = rapier_app();
        let world = app.world_mut();
        let mut prev = world
            .spawn((RigidBody::Fixed, Transform::from_translation(pivot())))
            .id();
        let mut prev_centre = pivot();
        let mut joints = Vec::new();
        for l in layout() {
            let (a1, a2) = (l.joint - prev_centre, l.joint - l.centre);
            let e = world
                .spawn((
                    RigidBody::Dynamic,
                    AdditionalMassProperties::MassProperties(MassProperties {
                        local_center_of_mass: Vec3::ZERO,
                        mass: l.mass,
                        principal_inertia_local_frame: Quat::IDENTITY,
                        principal_inertia: l.inertia,
                    }),
                    Damping {
                        linear_damping: DAMPING,
                        angular_damping: DAMPING,
                    },
                    Transform::from_translation(l.centre),
                    ImpulseJoint::new(
                        prev,
                        SphericalJointBuilder::new()
                            .local_anchor1(a1)
                            .local_anchor2(a2),
                    ),
                ))
                .id();
            joints.push((prev, e, a1, a2));
            prev = e;
            prev_centre = l.centre;
        }
        let load = prev;
        run_app("bevy_rapier3d 0.36.0", app, frames, move |world| {
            let pose = |e: Entity| {
                world
                    .get::<Transform>(e)
                    .map(|t| (t.translation, t.rotation))
            };
            let mut worst: f64 = 0.0;
            let mut finite = true;
            for &(a, b, a1, a2) in &joints {
                if let (Some((pa, qa)), Some((pb, qb))) = (pose(a), pose(b)) {
                    let d = (pa + qa * a1) - (pb + qb * a2);
                    finite &= d.is_finite();
                    worst = worst.max(f64::from(d.length()));
                }
            }
            let reach = pose(load).map_or(f64::NAN, |(p, _)| f64::from((p - pivot()).length()));
            (worst, reach, finite && reach.is_finite())
        })
    }
}

mod interfere_chain {
    use super::*;
    use interfere_dynamics::{
        Body, Joint, JointKind, MassProperties, Simulation, SimulationSettings, SleepSettings,
    };
    use interfere_geometry::glam::{DMat3, DQuat, DVec3};

    pub fn run(frames: u32) -> ChainRun {
        let mut settings = SimulationSettings::default();
        settings.world.gravity = DVec3::new(0.0, -f64::from(GRAVITY), 0.0);
        settings.world.dt = 1.0 / HZ;
        settings.world.substeps = SUBSTEPS as u32;
        settings.sleep = SleepSettings::NEVER;
        let mut sim = Simulation::new(settings).expect("valid settings");
        let d = |v: Vec3| v.as_dvec3();
        let mut prev = sim
            .insert(
                Body::fixed(d(pivot()), DQuat::IDENTITY).expect("a pose"),
                None,
            )
            .expect("a body");
        let mut joints = Vec::new();
        for l in layout() {
            let props = MassProperties {
                volume: 1.0,
                mass: f64::from(l.mass),
                center_of_mass: DVec3::ZERO,
                inertia: DMat3::from_diagonal(d(l.inertia)),
            };
            let body = Body::dynamic(&props, d(l.centre), DQuat::IDENTITY).expect("a body");
            let e = sim.insert(body, None).expect("a body");
            sim.set_damping(e, f64::from(DAMPING), f64::from(DAMPING))
                .expect("damping");
            let j = Joint::at_world(
                JointKind::Spherical {
                    swing_limit: None,
                    twist_limit: None,
                },
                sim.body(prev).expect("present"),
                sim.body(e).expect("present"),
                d(l.joint),
                DVec3::X,
            );
            joints.push(sim.insert_joint(prev, e, j).expect("a joint"));
            prev = e;
        }
        let load = prev;
        let mut step_ms = Vec::new();
        let mut worst: f64 = 0.0;
        for f in 0..frames {
            let t = Instant::now();
            sim.step();
            step_ms.push(t.elapsed().as_secs_f64() * 1e3);
            if f >= frames / 2 {
                for &h in &joints {
                    let (Some(j), Some((a, b))) = (sim.joint(h), sim.joint_bodies(h)) else {
                        continue;
                    };
                    let (ba, bb) = (sim.body(a).expect("a"), sim.body(b).expect("b"));
                    let e = (j.frame_a.world_anchor(ba) - j.frame_b.world_anchor(bb)).length();
                    worst = worst.max(e);
                }
            }
        }
        let p = sim.body(load).expect("the load").position;
        let reach = (p - d(pivot())).length();
        ChainRun {
            engine: "interfere (Simulation, in process)",
            step_ms,
            worst_error: worst,
            reach,
            finite: reach.is_finite(),
            extra: serde_json::Value::Null,
        }
    }
}

/// Runs the three engines on the chain and returns the report.
pub fn run(frames: u32) -> serde_json::Value {
    compare(
        "chain (20 links of 0.1 kg + a 10 kg load, spherical joints, 60 Hz, 4 substeps)",
        frames,
        [
            avian_chain::run(frames),
            rapier_chain::run(frames),
            interfere_chain::run(frames),
        ],
    )
}

/// The report of three runs (avian, rapier, Interfere), with Interfere's mean step over each
/// peer's.
pub(crate) fn compare(scene: &str, frames: u32, runs: [ChainRun; 3]) -> serde_json::Value {
    let mean = |r: &ChainRun| r.step_ms.iter().sum::<f64>() / r.step_ms.len().max(1) as f64;
    let interfere_mean = mean(&runs[2]);
    let ratios: serde_json::Map<String, serde_json::Value> = runs[..2]
        .iter()
        .map(|r| {
            (
                r.engine.to_string(),
                serde_json::json!(interfere_mean / mean(r)),
            )
        })
        .collect();
    serde_json::json!({
        "scene": scene,
        "frames": frames,
        "engines": runs.iter().map(ChainRun::report).collect::<Vec<_>>(),
        "interfere_step_over_peer_step": ratios,
    })
}

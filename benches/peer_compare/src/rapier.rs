//! The scene on bevy_rapier3d 0.36.0 (rapier3d 0.35, parry3d 0.30), its systems moved from
//! `PostUpdate` into `FixedPostUpdate` (where avian runs) with one rapier step per fixed step.

use crate::{
    Args, BodyState, ColliderKind, DENSITY, EngineRun, FIXED_HZ, GRAVITY, SLAB_FRICTION, SLAB_TOP,
    SLEEP_ANGULAR, SLEEP_LINEAR, SLEEP_TIME, SUBSTEPS, build_colliders, placements, run_frames,
    shape,
};
use bevy::app::ScheduleRunnerPlugin;
use bevy::diagnostic::FrameCountPlugin;
use bevy::prelude::*;
use bevy::time::{TimePlugin, TimeUpdateStrategy};
use bevy::transform::TransformPlugin;
use bevy_rapier3d::prelude::{
    CoefficientCombineRule, Collider, ColliderMassProperties, Friction, NoUserData, PhysicsSet,
    RapierConfiguration, RapierContextInitialization, RapierContextSimulation, RapierPhysicsPlugin,
    RapierRigidBodyHandle, RapierRigidBodySet, RigidBody, Sleeping, TimestepMode, VHACDParameters,
    Velocity,
};
use bevy_rapier3d::rapier::dynamics::IntegrationParameters;
use std::time::{Duration, Instant};

/// Marks the dropped bodies with their shape kind.
#[derive(Component)]
struct Dropped(usize);

#[derive(Resource, Default)]
struct Log(crate::StepLog);

fn step_begin(mut log: ResMut<Log>, mut contexts: Query<&mut RapierContextSimulation>) {
    // Rapier's own stage timers (broad, narrow, solver) are off by default.
    for mut sim in &mut contexts {
        if !sim.pipeline.counters.enabled() {
            sim.pipeline.counters.enable();
        }
    }
    log.0.started = Some(Instant::now());
}

fn step_end(mut log: ResMut<Log>, contexts: Query<&RapierContextSimulation>) {
    let log = &mut log.0;
    let Some(started) = log.started.take() else {
        return;
    };
    log.step_ms.push(started.elapsed().as_secs_f64() * 1e3);
    let (mut broad, mut narrow, mut solver, mut touching, mut contacts) = (0.0, 0.0, 0.0, 0, 0);
    for sim in &contexts {
        let c = &sim.pipeline.counters;
        broad += c.broad_phase_time_ms();
        narrow += c.narrow_phase_time_ms();
        solver += c.solver_time_ms();
        for pair in sim.narrow_phase.contact_pairs() {
            if pair.has_any_active_contact() {
                touching += 1;
                contacts += pair
                    .solver_manifolds()
                    .iter()
                    .map(|m| m.data.solver_contacts.len())
                    .sum::<usize>();
            }
        }
    }
    log.broad_ms.push(broad);
    log.narrow_ms.push(narrow);
    log.solver_ms.push(solver);
    log.touching_pairs.push(touching);
    log.contact_count.push(contacts);
}

/// Rapier's sleep delay is not a `Sleeping` field: set it on the rapier bodies once they exist.
fn sleep_delay(
    added: Query<&RapierRigidBodyHandle, Added<RapierRigidBodyHandle>>,
    mut sets: Query<&mut RapierRigidBodySet>,
) {
    if added.is_empty() {
        return;
    }
    for mut set in &mut sets {
        for h in &added {
            if let Some(rb) = set.bodies.get_mut(h.0) {
                rb.activation_mut().time_until_sleep = SLEEP_TIME;
            }
        }
    }
}

pub fn run(args: &Args) -> Result<EngineRun, String> {
    let (colliders, shapes, collider_build_ms) = build_colliders(
        |name, vertices, indices| {
            Ok(match args.collider {
                // The stack's cube: rapier's own box (half extents), as a user stacks boxes.
                _ if name == "cube" => Collider::cuboid(
                    crate::stack::CUBE_HALF,
                    crate::stack::CUBE_HALF,
                    crate::stack::CUBE_HALF,
                ),
                ColliderKind::Trimesh => Collider::trimesh(vertices, indices)
                    .map_err(|e| format!("rapier: {name}: trimesh failed: {e:?}"))?,
                _ if args.decomposes(name) => Collider::convex_decomposition_with_params(
                    &vertices,
                    &indices,
                    &VHACDParameters::default(),
                ),
                _ => Collider::convex_hull(&vertices)
                    .ok_or_else(|| format!("rapier: {name}: convex hull failed"))?,
            })
        },
        |collider: &Collider| collider.raw.as_compound().map_or(1, |c| c.shapes().len()),
    )?;

    let setup_started = Instant::now();
    let mut app = App::new();
    let task_pool = args.task_pool();
    // Rapier's TGS-soft solver: each of the `num_solver_iterations` is a substep (integrate,
    // solve, relax) inside one collision detection, as avian's `SubstepCount`; rapier's
    // `TimestepMode` substeps would rerun the whole pipeline, collision detection included.
    // Contact recycling (on by default in this rapier) keeps a pair's contacts without
    // recomputing them while its bodies move less than 5 cm against each other, which skips
    // most of the narrow phase once the heap rests; `--rapier-recycle off` measures without it.
    let integration_parameters = IntegrationParameters {
        num_solver_iterations: SUBSTEPS,
        contact_recycling: args.rapier_recycle,
        ..IntegrationParameters::default()
    };
    let mut rapier_configuration = RapierConfiguration::new(1.0);
    rapier_configuration.gravity = Vec3::new(0.0, -GRAVITY, 0.0);
    app.insert_resource(TimestepMode::Fixed {
        dt: (1.0 / FIXED_HZ) as f32,
        substeps: 1,
    });
    app.add_plugins((
        task_pool,
        FrameCountPlugin,
        TimePlugin,
        ScheduleRunnerPlugin::default(),
        TransformPlugin,
        RapierPhysicsPlugin::<NoUserData>::default()
            .with_custom_initialization(
                RapierContextInitialization::InitializeDefaultRapierContext {
                    integration_parameters,
                    rapier_configuration,
                },
            )
            .in_schedule(FixedPostUpdate),
    ));
    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
        1.0 / FIXED_HZ,
    )))
    .insert_resource(Time::<Fixed>::from_hz(FIXED_HZ))
    .init_resource::<Log>()
    .add_systems(
        FixedPostUpdate,
        (
            step_begin.before(PhysicsSet::SyncBackend),
            step_end.after(PhysicsSet::Writeback),
        ),
    );
    if args.interfere_sleep {
        app.add_systems(
            FixedPostUpdate,
            sleep_delay
                .after(PhysicsSet::SyncBackend)
                .before(PhysicsSet::StepSimulation),
        );
    }
    app.finish();
    app.cleanup();

    let world = app.world_mut();
    let (half, placements) = placements(args);
    let average = |coefficient| Friction {
        coefficient,
        combine_rule: CoefficientCombineRule::Average,
    };
    world.spawn((
        Name::new("slab"),
        RigidBody::Fixed,
        Collider::cuboid(half, 0.25, half),
        average(SLAB_FRICTION),
        Transform::from_xyz(0.0, SLAB_TOP - 0.25, 0.0),
    ));
    for (i, p) in placements.iter().enumerate() {
        let sleeping = if args.interfere_sleep {
            Sleeping {
                normalized_linear_threshold: SLEEP_LINEAR,
                angular_threshold: SLEEP_ANGULAR,
                sleeping: false,
            }
        } else {
            Sleeping::default()
        };
        world.spawn((
            Name::new(format!("{} {i}", shape(p.kind).1)),
            Dropped(p.kind),
            crate::Tracked(i),
            RigidBody::Dynamic,
            colliders[p.kind].clone(),
            ColliderMassProperties::Density(DENSITY),
            average(crate::BODY_FRICTION),
            Velocity::zero(),
            sleeping,
            Transform::from_translation(p.position).with_rotation(p.rotation),
        ));
    }
    let setup_ms = setup_started.elapsed().as_secs_f64() * 1e3;

    let mut tracker = crate::Tracker::for_scene(args, &placements);
    let (update_ms, wall_s, cpu_s) = run_frames(&mut app, args.frames, &mut tracker);

    let world = app.world_mut();
    // The final state from rapier's own bodies (not the written-back components).
    let handles: Vec<(usize, usize, RapierRigidBodyHandle)> = world
        .query::<(&Dropped, &crate::Tracked, &RapierRigidBodyHandle)>()
        .iter(world)
        .map(|(d, t, h)| (d.0, t.0, *h))
        .collect();
    let mut sets = world.query::<&RapierRigidBodySet>();
    let set = sets
        .single(world)
        .map_err(|e| format!("rapier: no single rigid-body set: {e}"))?;
    let mut bodies = Vec::with_capacity(handles.len());
    for (kind, index, h) in handles {
        let Some(rb) = set.bodies.get(h.0) else {
            continue;
        };
        let pose = rb.position();
        let linvel = rb.linvel();
        bodies.push(BodyState {
            index,
            kind,
            position: Vec3::new(pose.translation.x, pose.translation.y, pose.translation.z),
            rotation: Quat::from_xyzw(
                pose.rotation.x,
                pose.rotation.y,
                pose.rotation.z,
                pose.rotation.w,
            ),
            speed: Vec3::new(linvel.x, linvel.y, linvel.z).length(),
            asleep: rb.is_sleeping(),
        });
    }
    let log = std::mem::take(&mut world.resource_mut::<Log>().0);
    let compute = bevy::tasks::ComputeTaskPool::try_get().map(|p| p.thread_num());
    Ok(EngineRun {
        engine: "rapier",
        shapes,
        collider_build_ms,
        setup_ms,
        log,
        update_ms,
        wall_s,
        cpu_s,
        threads: serde_json::json!({
            "bevy_compute": compute,
            "rayon": rayon::current_num_threads(),
        }),
        settings: serde_json::json!({
            "version": "bevy_rapier3d 0.36.0 (rapier3d 0.35.0-glamx0.2, parry3d 0.30, features dim3 parallel)",
            "num_solver_iterations": SUBSTEPS,
            "timestep_mode": "Fixed { dt: 1/60, substeps: 1 }",
            "schedule": "FixedPostUpdate, PhysicsSet::SyncBackend..Writeback",
            "sleep": if args.interfere_sleep { "Sleeping 0.02 m/s, 0.05 rad/s; time_until_sleep 1 s" } else { "rapier defaults (0.05 m/s, 0.5 rad/s, 0.5 s)" },
            "contact_recycling": args.rapier_recycle,
            "solver": "rapier defaults otherwise (contact clustering on, CCD against fixed bodies on)",
        }),
        bodies,
        drift: tracker.drift,
    })
}

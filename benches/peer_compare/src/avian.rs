//! The scene on avian3d 0.7.0 (parry3d 0.27), in `FixedPostUpdate` as avian schedules itself.

use crate::{
    Args, BodyState, ColliderKind, DENSITY, EngineRun, FIXED_HZ, GRAVITY, SLAB_FRICTION, SLAB_TOP,
    SLEEP_ANGULAR, SLEEP_LINEAR, SLEEP_TIME, SUBSTEPS, build_colliders, placements, run_frames,
    shape,
};
use avian3d::collision::CollisionDiagnostics;
use avian3d::dynamics::solver::SolverDiagnostics;
use avian3d::prelude::*;
use bevy::app::ScheduleRunnerPlugin;
use bevy::diagnostic::FrameCountPlugin;
use bevy::prelude::*;
use bevy::time::{TimePlugin, TimeUpdateStrategy};
use bevy::transform::TransformPlugin;
use std::time::{Duration, Instant};

/// Marks the dropped bodies with their shape kind.
#[derive(Component)]
struct Dropped(usize);

#[derive(Resource, Default)]
struct Log(crate::StepLog);

fn step_begin(mut log: ResMut<Log>) {
    log.0.started = Some(Instant::now());
}

fn step_end(
    mut log: ResMut<Log>,
    collisions: Collisions,
    cd: Res<CollisionDiagnostics>,
    sd: Res<SolverDiagnostics>,
) {
    let log = &mut log.0;
    let Some(started) = log.started.take() else {
        return;
    };
    log.step_ms.push(started.elapsed().as_secs_f64() * 1e3);
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    log.broad_ms.push(ms(cd.broad_phase));
    log.narrow_ms.push(ms(cd.narrow_phase));
    let solver = sd.prepare_constraints
        + sd.update_velocity_increments
        + sd.integrate_velocities
        + sd.warm_start
        + sd.solve_constraints
        + sd.integrate_positions
        + sd.relax_velocities
        + sd.apply_restitution
        + sd.finalize
        + sd.store_impulses
        + sd.swept_ccd;
    log.solver_ms.push(ms(solver));
    log.contact_count.push(cd.contact_count as usize);
    let touching = collisions.iter().filter(|p| p.is_touching()).count();
    log.touching_pairs.push(touching);
}

pub fn run(args: &Args) -> Result<EngineRun, String> {
    let (colliders, shapes, collider_build_ms) = build_colliders(
        |name, vertices, indices| {
            Ok(match args.collider {
                // The stack's cube: avian's own box (full extents), as a user stacks boxes.
                _ if name == "cube" => Collider::cuboid(
                    2.0 * crate::stack::CUBE_HALF,
                    2.0 * crate::stack::CUBE_HALF,
                    2.0 * crate::stack::CUBE_HALF,
                ),
                ColliderKind::Trimesh => Collider::try_trimesh(vertices, indices)
                    .map_err(|e| format!("avian: {name}: trimesh failed: {e:?}"))?,
                _ if args.decomposes(name) => Collider::convex_decomposition_with_config(
                    vertices,
                    indices,
                    VhacdParameters::default(),
                ),
                _ => Collider::convex_hull(vertices)
                    .ok_or_else(|| format!("avian: {name}: convex hull failed"))?,
            })
        },
        |collider: &Collider| {
            collider
                .shape()
                .as_compound()
                .map_or(1, |c| c.shapes().len())
        },
    )?;

    let setup_started = Instant::now();
    let mut app = App::new();
    let task_pool = args.task_pool();
    app.add_plugins((
        task_pool,
        FrameCountPlugin,
        TimePlugin,
        ScheduleRunnerPlugin::default(),
        TransformPlugin,
        PhysicsPlugins::default(),
    ));
    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
        1.0 / FIXED_HZ,
    )))
    .insert_resource(Time::<Fixed>::from_hz(FIXED_HZ))
    .insert_resource(Gravity(Vec3::new(0.0, -GRAVITY, 0.0)))
    .insert_resource(SubstepCount(SUBSTEPS as u32))
    .init_resource::<Log>()
    .add_systems(
        FixedPostUpdate,
        (
            step_begin.before(PhysicsSystems::First),
            step_end.after(PhysicsSystems::Last),
        ),
    );
    if args.interfere_sleep {
        app.insert_resource(TimeToSleep(SLEEP_TIME));
    }
    app.finish();
    app.cleanup();

    let world = app.world_mut();
    let (half, placements) = placements(args);
    // The example's slab is a 12-triangle box mesh; here an exact cuboid of the same size.
    // Avian's default friction is 0.5 (the slab's), its default combine rule the average.
    world.spawn((
        Name::new("slab"),
        RigidBody::Static,
        Collider::cuboid(2.0 * half, 0.5, 2.0 * half),
        Friction::new(SLAB_FRICTION),
        Transform::from_xyz(0.0, SLAB_TOP - 0.25, 0.0),
    ));
    for (i, p) in placements.iter().enumerate() {
        let mut body = world.spawn((
            Name::new(format!("{} {i}", shape(p.kind).1)),
            Dropped(p.kind),
            crate::Tracked(i),
            RigidBody::Dynamic,
            colliders[p.kind].clone(),
            ColliderDensity(DENSITY),
            Friction::new(crate::BODY_FRICTION),
            Transform::from_translation(p.position).with_rotation(p.rotation),
        ));
        if args.interfere_sleep {
            body.insert(SleepThreshold {
                linear: SLEEP_LINEAR,
                angular: SLEEP_ANGULAR,
            });
        }
    }
    let setup_ms = setup_started.elapsed().as_secs_f64() * 1e3;

    let mut tracker = crate::Tracker::for_scene(args, &placements);
    let (update_ms, wall_s, cpu_s) = run_frames(&mut app, args.frames, &mut tracker);

    let world = app.world_mut();
    let mut q = world.query::<(
        &Dropped,
        &crate::Tracked,
        &Position,
        &Rotation,
        &LinearVelocity,
        Has<Sleeping>,
    )>();
    let bodies = q
        .iter(world)
        .map(|(d, t, p, r, v, s)| BodyState {
            index: t.0,
            kind: d.0,
            position: p.0,
            rotation: r.0,
            speed: v.0.length(),
            asleep: s,
        })
        .collect();
    let log = std::mem::take(&mut world.resource_mut::<Log>().0);
    let threads = bevy::tasks::ComputeTaskPool::try_get().map(|p| p.thread_num());
    Ok(EngineRun {
        engine: "avian",
        shapes,
        collider_build_ms,
        setup_ms,
        log,
        update_ms,
        wall_s,
        cpu_s,
        threads: serde_json::json!({ "bevy_compute": threads }),
        settings: serde_json::json!({
            "version": "avian3d 0.7.0 (parry3d 0.27, features 3d f32 parry-f32 parallel)",
            "substeps": SUBSTEPS,
            "schedule": "FixedPostUpdate, PhysicsSystems::First..Last",
            "sleep": if args.interfere_sleep { "SleepThreshold 0.02 m/s, 0.05 rad/s; TimeToSleep 1 s" } else { "avian defaults" },
            "solver": "avian defaults otherwise (soft constraints, speculative contacts)",
        }),
        bodies,
        drift: tracker.drift,
    })
}

//! Headless Bevy tests of the physics plugins: `MinimalPlugins` plus Interfere, one fixed step per
//! `app.update()` (manual time). GPU backends run on whatever adapter exists (Mesa's software
//! Vulkan driver in CI); under CI=true a missing adapter fails the GPU tests.

use bevy::asset::AssetPlugin;
use bevy::ecs::message::{MessageCursor, Messages};
use bevy::mesh::{Mesh, Meshable};
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_interfere::prelude::*;
use bevy_interfere::{
    ColliderError, ColliderShape, GpuBackendPlugin, GpuSupport, InterfereGpuContext, PhysicsWorld,
};
use interfere_gpu::testing::gpu_or_skip;
use std::sync::Arc;

const HZ: f64 = 64.0;

fn app(backend: Backend, gpu: Option<interfere_gpu::GpuContext>) -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, AssetPlugin::default()))
        .init_asset::<Mesh>()
        .insert_resource(Time::<Fixed>::from_hz(HZ))
        .insert_resource(TimeUpdateStrategy::FixedTimesteps(1))
        .insert_resource(backend);
    if let Some(ctx) = gpu {
        app.insert_resource(InterfereGpuContext(ctx));
    }
    app.add_plugins(InterferePlugins);
    app.finish();
    app.cleanup();
    app
}

fn ground(app: &mut App) -> Entity {
    app.world_mut()
        .spawn((
            RigidBody::Static,
            Collider::cuboid_mesh(Vec3::new(2.0, 0.25, 2.0)),
            Transform::from_xyz(0.0, -0.25, 0.0),
            Name::new("ground"),
        ))
        .id()
}

fn falling_box(app: &mut App, y: f32) -> Entity {
    app.world_mut()
        .spawn((
            RigidBody::Dynamic,
            Collider::cuboid_mesh(Vec3::splat(0.25)),
            Transform::from_xyz(0.0, y, 0.0).with_rotation(Quat::from_rotation_y(0.3)),
            NeverSleep,
            Name::new("box"),
        ))
        .id()
}

/// Reads every message of type `M` written since the cursor's last read.
struct Inbox<M: Message> {
    cursor: MessageCursor<M>,
    got: Vec<M>,
}

impl<M: Message + Clone> Inbox<M> {
    fn new() -> Self {
        Self {
            cursor: MessageCursor::default(),
            got: Vec::new(),
        }
    }
    fn drain(&mut self, app: &App) {
        let messages = app.world().resource::<Messages<M>>();
        self.got.extend(self.cursor.read(messages).cloned());
    }
}

struct Run {
    heights: Vec<f32>,
    started: Vec<CollisionStarted>,
    contacts: Vec<ContactMessage>,
    volumes: Vec<IntersectionVolumeMessage>,
    final_speed: f32,
    backend_seen: Vec<Backend>,
    /// Steps whose narrow phase reported GPU time.
    gpu_steps: usize,
    /// Steps whose volume stage ran on the GPU.
    gpu_volume_steps: usize,
}

fn drop_box(backend: Backend, gpu: Option<interfere_gpu::GpuContext>, steps: usize) -> Run {
    let mut app = app(backend, gpu);
    let g = ground(&mut app);
    let b = falling_box(&mut app, 1.0);
    until_joined(&mut app, &[g, b]);
    let mut s = Inbox::<CollisionStarted>::new();
    let mut c = Inbox::<ContactMessage>::new();
    let mut v = Inbox::<IntersectionVolumeMessage>::new();
    let mut heights = Vec::new();
    let mut backend_seen = Vec::new();
    let mut gpu_steps = 0;
    let mut gpu_volume_steps = 0;
    for _ in 0..steps {
        app.update();
        if backend == Backend::Gpu {
            // Paced like frames of a game (the asynchronous job's answer then arrives a step or
            // two later, as in an app; unpaced, the loop outruns a lavapipe job by many steps).
            std::thread::sleep(std::time::Duration::from_millis(15));
        }
        s.drain(&app);
        c.drain(&app);
        v.drain(&app);
        heights.push(app.world().get::<Transform>(b).unwrap().translation.y);
        let stats = app.world().resource::<PhysicsStats>();
        if stats.steps() > 0 {
            backend_seen.push(stats.backend);
            gpu_steps += usize::from(stats.step.gpu_ms.is_some());
            gpu_volume_steps += usize::from(stats.step.volume_backend.starts_with("gpu"));
        }
    }
    for m in &s.got {
        assert!(
            (m.0 == g && m.1 == b) || (m.0 == b && m.1 == g),
            "collision between unexpected entities {m:?}"
        );
    }
    let lin = app.world().get::<LinearVelocity>(b).unwrap().0;
    let ang = app.world().get::<AngularVelocity>(b).unwrap().0;
    Run {
        heights,
        started: s.got,
        contacts: c.got,
        volumes: v.got,
        final_speed: lin.length() + 0.25 * ang.length(),
        backend_seen,
        gpu_steps,
        gpu_volume_steps,
    }
}

fn check_rest(run: &Run, label: &str) {
    let last = *run.heights.last().unwrap();
    // Resting on the ground: centre a half side above the top face, minus the small volume
    // overlap the contact keeps (slop depth 1e-4 plus sampling error).
    assert!(
        (last - 0.25).abs() < 0.01,
        "{label}: box rests at y = {last}, expected 0.25"
    );
    assert!(
        run.final_speed < 0.05,
        "{label}: still moving, speed {}",
        run.final_speed
    );
    let min = run.heights.iter().copied().fold(f32::INFINITY, f32::min);
    assert!(min > 0.2, "{label}: sank to {min} (tunnelling?)");
    assert!(!run.started.is_empty(), "{label}: no CollisionStarted");
    assert!(!run.contacts.is_empty(), "{label}: no ContactMessage");
    // Contact messages: points on the ground's top face, normals up (b is pushed out of a,
    // and the box is b or a depending on body order: normals are ±y).
    let with_points: Vec<_> = run
        .contacts
        .iter()
        .filter(|c| !c.points.is_empty())
        .collect();
    assert!(!with_points.is_empty(), "{label}: no contact points");
    for c in &with_points {
        for p in &c.points {
            assert!(
                p.normal.y.abs() > 0.9,
                "{label}: normal {:?} not vertical",
                p.normal
            );
            assert!(
                p.point.y.abs() < 0.05,
                "{label}: contact point {:?} off the face",
                p.point
            );
            assert!(
                p.depth >= 0.0 && p.depth < 0.05,
                "{label}: depth {}",
                p.depth
            );
        }
    }
    // Volume messages: small positive volumes, forces vertical and consistent with the
    // contact normals' sign.
    assert!(
        !run.volumes.is_empty(),
        "{label}: no IntersectionVolumeMessage"
    );
    for v in &run.volumes {
        assert!(
            v.volume > 0.0 && v.volume < 0.01,
            "{label}: volume {}",
            v.volume
        );
        let f = v.force.normalize();
        assert!(f.y.abs() > 0.9, "{label}: force {:?}", v.force);
        // The CPU's default exact volume casts no rays; the blocking GPU backend samples lines.
        // (The asynchronous one leaves a pair to the CPU's exact volume on a step whose answer
        // is too old or whose bodies moved too far since: its messages come from either.)
        if label != "gpu" {
            assert_eq!(v.rays > 0, label != "cpu", "{label}: rays {}", v.rays);
        }
    }
    if label == "gpu" {
        assert!(
            run.volumes.iter().any(|v| v.rays > 0),
            "{label}: no volume from a GPU answer"
        );
    }
}

#[test]
fn cpu_box_falls_and_rests_on_static_mesh() {
    let run = drop_box(Backend::Cpu, None, 192);
    check_rest(&run, "cpu");
    assert!(run.backend_seen.iter().all(|b| *b == Backend::Cpu));
    // Touch-down happened once and stayed (no chatter of started/ended at rest).
    assert!(
        run.started.len() <= 2,
        "started {} times",
        run.started.len()
    );
}

#[test]
fn gpu_blocking_box_falls_and_rests_and_matches_cpu() {
    let Some(ctx) = gpu_or_skip("gpu_blocking_box_falls_and_rests_and_matches_cpu") else {
        return;
    };
    let gpu = drop_box(Backend::GpuBlocking, Some(ctx), 192);
    check_rest(&gpu, "gpu-blocking");
    assert!(
        gpu.backend_seen.iter().all(|b| *b == Backend::GpuBlocking),
        "the GPU backend fell back: {:?}",
        gpu.backend_seen
    );
    // CInDeR ran on every step that had a candidate pair (from touch-down on).
    assert!(gpu.gpu_steps > 100, "GPU ran on {} steps", gpu.gpu_steps);
    // The volumes were sampled on the GPU too (equal to the CPU's line by line).
    assert!(
        gpu.gpu_volume_steps > 100,
        "GPU volume on {} steps",
        gpu.gpu_volume_steps
    );
    let cpu = drop_box(Backend::Cpu, None, 192);
    assert_eq!(cpu.gpu_steps, 0);
    assert_eq!(cpu.gpu_volume_steps, 0);
    let worst = cpu
        .heights
        .iter()
        .zip(&gpu.heights)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    // The narrow phases agree except on penetrations below a CInDeR pixel (the contact then
    // starts a step later), so trajectories differ by at most about one step of fall.
    assert!(
        worst < 0.06,
        "cpu and gpu-blocking heights differ by up to {worst}"
    );
    eprintln!("cpu vs gpu-blocking: worst height difference {worst} m over 192 steps");
}

#[test]
fn gpu_async_box_falls_and_rests() {
    let Some(ctx) = gpu_or_skip("gpu_async_box_falls_and_rests") else {
        return;
    };
    let run = drop_box(Backend::Gpu, Some(ctx), 192);
    check_rest(&run, "gpu");
    assert!(run.backend_seen.iter().all(|b| *b == Backend::Gpu));
    // Of about 180 steps with the pair (margin for a loaded CI machine, where a lavapipe job can
    // outlast `max_latency_steps` of paced frames and the CPU decides that step).
    assert!(
        run.gpu_steps > 60,
        "GPU answers used on {} steps",
        run.gpu_steps
    );
}

/// A manual-time app with `backend` selected; `plugins` adds what the test needs (resources and
/// the Interfere plugins). Finished and cleaned up.
fn fallback_app(backend: Backend, plugins: impl FnOnce(&mut App)) -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, AssetPlugin::default()))
        .init_asset::<Mesh>()
        .insert_resource(TimeUpdateStrategy::FixedTimesteps(1))
        .insert_resource(backend);
    plugins(&mut app);
    app.finish();
    app.cleanup();
    app
}

/// Drops a box 0.6 above the ground, steps 64 times and returns its height.
fn dropped_box_height(app: &mut App) -> f32 {
    let g = ground(app);
    let b = falling_box(app, 0.6);
    until_joined(app, &[g, b]);
    for _ in 0..64 {
        app.update();
    }
    app.world().get::<Transform>(b).unwrap().translation.y
}

#[test]
fn gpu_backend_without_device_falls_back_to_cpu() {
    let mut app = fallback_app(Backend::GpuBlocking, |app| {
        app.insert_resource(GpuSupport {
            unavailable: Some("forced by the test".into()),
            ..Default::default()
        })
        .add_plugins(InterferePlugins);
    });
    assert_eq!(*app.world().resource::<Backend>(), Backend::Cpu);
    let y = dropped_box_height(&mut app);
    assert!((y - 0.25).abs() < 0.02, "fell back but box at {y}");
}

/// What a build without the `gpu` feature does: `InterferePlugins` has no `GpuBackendPlugin`, so a
/// GPU backend selected anyway has no stage registered; the step warns, selects the CPU and the
/// box rests as on the CPU backend.
#[test]
fn gpu_backend_without_its_plugin_steps_on_the_cpu() {
    let mut app = fallback_app(Backend::Gpu, |app| {
        app.add_plugins(InterferePlugins.build().disable::<GpuBackendPlugin>());
    });
    let y = dropped_box_height(&mut app);
    assert_eq!(*app.world().resource::<Backend>(), Backend::Cpu);
    assert_eq!(app.world().resource::<PhysicsStats>().backend, Backend::Cpu);
    assert!((y - 0.25).abs() < 0.02, "stepped on the CPU but box at {y}");
}

/// `ColliderPreparation::Blocking`: every mesh collider (a `Solid`, a `Mesh3d` asset, an open
/// mesh refused) has its outcome by the first fixed step, and the body is in the simulation then;
/// two apps spawning the same bodies give the same states (no dependence on the task pool).
#[test]
fn blocking_collider_preparation_is_ready_by_the_first_step_and_reproducible() {
    let run = || {
        let mut app = app(Backend::Cpu, None);
        app.insert_resource(ColliderPreparation::Blocking);
        let sphere = app
            .world_mut()
            .resource_mut::<Assets<Mesh>>()
            .add(Sphere::new(0.5).mesh().ico(3).unwrap());
        let plane = app
            .world_mut()
            .resource_mut::<Assets<Mesh>>()
            .add(Plane3d::default().mesh().size(1.0, 1.0).build());
        let floor = ground(&mut app);
        let ball = app
            .world_mut()
            .spawn((
                RigidBody::Dynamic,
                Mesh3d(sphere),
                Collider::from_mesh3d(),
                Transform::from_xyz(0.0, 1.0, 0.0),
            ))
            .id();
        let ring = app
            .world_mut()
            .spawn((
                RigidBody::Dynamic,
                Collider::solid(interfere_geometry::shapes::torus(0.3, 0.1, 24, 12).unwrap()),
                Transform::from_xyz(0.8, 0.6, 0.0),
            ))
            .id();
        let open = app
            .world_mut()
            .spawn((
                RigidBody::Dynamic,
                Collider::mesh(plane),
                Transform::default(),
            ))
            .id();
        // Up to the first fixed step (the first update may run none).
        while app.world().resource::<PhysicsStats>().steps() == 0 {
            app.update();
        }
        let w = app.world();
        assert_eq!(w.resource::<PhysicsStats>().steps(), 1);
        for e in [floor, ball, ring] {
            assert!(w.get::<ColliderShape>(e).is_some(), "{e} not ready");
            assert!(
                w.resource::<PhysicsWorld>().body(e).is_some(),
                "{e} not simulated"
            );
        }
        assert!(w.get::<ColliderError>(open).is_some());
        for _ in 0..60 {
            app.update();
        }
        let w = app.world();
        [ball, ring].map(|e| {
            let t = w.get::<Transform>(e).unwrap();
            (t.translation.to_array(), t.rotation.to_array())
        })
    };
    assert_eq!(run(), run());
}

#[test]
fn open_mesh_collider_is_refused_with_a_reason() {
    let mut app = app(Backend::Cpu, None);
    let plane = app
        .world_mut()
        .resource_mut::<Assets<Mesh>>()
        .add(Plane3d::default().mesh().size(1.0, 1.0).build());
    let sphere = app
        .world_mut()
        .resource_mut::<Assets<Mesh>>()
        .add(Sphere::new(0.5).mesh().ico(2).unwrap());
    let bad = app
        .world_mut()
        .spawn((
            RigidBody::Dynamic,
            Collider::mesh(plane),
            Transform::default(),
        ))
        .id();
    let good = app
        .world_mut()
        .spawn((
            RigidBody::Dynamic,
            Mesh3d(sphere),
            Collider::from_mesh3d(),
            Transform::from_scale(Vec3::splat(2.0)),
        ))
        .id();
    let no_mesh = app
        .world_mut()
        .spawn((RigidBody::Dynamic, Collider::from_mesh3d()))
        .id();
    // Colliders are prepared on the task pool: wait until every one has an outcome.
    update_until(&mut app, "an outcome for every collider", |w| {
        w.get::<ColliderError>(bad).is_some()
            && w.get::<ColliderError>(no_mesh).is_some()
            && w.get::<ColliderShape>(good).is_some()
    });
    let err = app
        .world()
        .get::<ColliderError>(bad)
        .expect("open mesh refused");
    assert!(
        err.reason.contains("not a closed solid"),
        "reason: {}",
        err.reason
    );
    assert!(app.world().get::<ColliderError>(no_mesh).is_some());
    let shape = app
        .world()
        .get::<ColliderShape>(good)
        .expect("sphere accepted");
    // Scale 2 baked in: the icosphere of radius 0.5 becomes radius 1 (volume a bit under 4π/3).
    let v = shape.volume();
    assert!(v > 3.9 && v < 4.19, "scaled volume {v}");
    // The refused body is not simulated; the good one falls.
    let pw = app.world().resource::<PhysicsWorld>();
    assert!(pw.body(bad).is_none());
    assert!(pw.body(good).is_some());
}

#[test]
fn despawn_ends_collision_and_teleport_and_velocity_are_honoured() {
    let mut app = app(Backend::Cpu, None);
    let g = ground(&mut app);
    let b = falling_box(&mut app, 0.24);
    until_joined(&mut app, &[g, b]);
    let mut ended = Inbox::<CollisionEnded>::new();
    let mut started = Inbox::<CollisionStarted>::new();
    for _ in 0..5 {
        app.update();
        started.drain(&app);
    }
    assert_eq!(started.got.len(), 1, "{:?}", started.got);
    // Teleport: the game writes Transform; the body continues from there.
    app.world_mut().get_mut::<Transform>(b).unwrap().translation = Vec3::new(5.0, 3.0, 0.0);
    app.world_mut().get_mut::<LinearVelocity>(b).unwrap().0 = Vec3::new(1.0, 0.0, 0.0);
    app.update();
    ended.drain(&app);
    let t = app.world().get::<Transform>(b).unwrap().translation;
    let dt = 1.0 / HZ as f32;
    assert!(
        (t.x - (5.0 + dt)).abs() < 1e-3,
        "x after teleport and push: {}",
        t.x
    );
    assert!(t.y < 3.0 && t.y > 2.99, "y after teleport: {}", t.y);
    assert_eq!(ended.got.len(), 1, "{:?}", ended.got);
    assert!(ended.got[0] == CollisionEnded(g, b) || ended.got[0] == CollisionEnded(b, g));
    // Back onto the ground, then despawn the ground: the collision ends.
    app.world_mut().get_mut::<Transform>(b).unwrap().translation = Vec3::new(0.0, 0.24, 0.0);
    app.world_mut().get_mut::<LinearVelocity>(b).unwrap().0 = Vec3::ZERO;
    for _ in 0..3 {
        app.update();
        started.drain(&app);
        ended.drain(&app);
    }
    assert_eq!(started.got.len(), 2);
    app.world_mut().despawn(g);
    app.update();
    ended.drain(&app);
    assert_eq!(ended.got.len(), 2, "{:?}", ended.got);
}

#[test]
fn resting_body_sleeps_and_wakes() {
    let mut app = app(Backend::Cpu, None);
    let g = ground(&mut app);
    let b = app
        .world_mut()
        .spawn((
            RigidBody::Dynamic,
            Collider::cuboid_mesh(Vec3::splat(0.25)),
            Transform::from_xyz(0.0, 0.3, 0.0),
        ))
        .id();
    until_joined(&mut app, &[g, b]);
    let mut slept_at = None;
    for i in 0..300 {
        app.update();
        if app.world().get::<Sleeping>(b).is_some() {
            slept_at = Some(i);
            break;
        }
    }
    let slept_at = slept_at.expect("the resting box falls asleep");
    let y = app.world().get::<Transform>(b).unwrap().translation.y;
    for _ in 0..20 {
        app.update();
    }
    assert_eq!(
        app.world().get::<Transform>(b).unwrap().translation.y,
        y,
        "asleep but moved"
    );
    // A velocity set by the game wakes it.
    app.world_mut().get_mut::<LinearVelocity>(b).unwrap().0 = Vec3::new(0.0, 2.0, 0.0);
    app.update();
    assert!(app.world().get::<Sleeping>(b).is_none(), "woke up");
    assert!(app.world().get::<Transform>(b).unwrap().translation.y > y);
    eprintln!("slept after {slept_at} steps");
}

#[test]
fn pause_and_single_step() {
    let mut app = app(Backend::Cpu, None);
    let b = falling_box(&mut app, 5.0);
    app.world_mut().resource_mut::<PhysicsSettings>().paused = true;
    for _ in 0..5 {
        app.update();
    }
    // Its collider is prepared on the task pool (also while paused): wait until it has joined.
    until_joined(&mut app, &[b]);
    assert!(app.world().resource::<PhysicsSettings>().paused);
    assert_eq!(app.world().get::<Transform>(b).unwrap().translation.y, 5.0);
    app.world_mut()
        .resource_mut::<PhysicsSettings>()
        .single_steps = 2;
    for _ in 0..5 {
        app.update();
    }
    let v = app.world().get::<LinearVelocity>(b).unwrap().0.y;
    let expected = -9.81 * 2.0 / HZ as f32;
    assert!(
        (v - expected).abs() < 1e-4,
        "two steps of gravity: v = {v}, expected {expected}"
    );
    assert_eq!(app.world().resource::<PhysicsStats>().steps(), 2);
}

/// With `all_triangle_pairs`, the GPU backend's triangle pairs (Greß–Zachmann traversal on the
/// GPU, exact filter) equal the CPU's exact OBBTree pairs, step by step.
#[test]
fn gpu_triangle_pairs_equal_cpu_pairs() {
    let Some(ctx) = gpu_or_skip("gpu_triangle_pairs_equal_cpu_pairs") else {
        return;
    };
    let run = |backend: Backend, gpu: Option<interfere_gpu::GpuContext>| {
        let mut app = app(backend, gpu);
        // Both bodies join in the step after they are spawned, in the same order in both runs
        // (with background preparation the order follows which collider was ready first, and a
        // pair's triangle indices come transposed when the ball joins first).
        app.insert_resource(ColliderPreparation::Blocking);
        let mut settings = app.world_mut().resource_mut::<PhysicsSettings>();
        settings.all_triangle_pairs = true;
        // The GPU's volume is uniform sampling: the CPU runs its twin, so the runs agree.
        settings.volume = VolumeMethod::Uniform {
            spacing: MeshSpacing::default(),
        };
        let g = ground(&mut app);
        // A sphere (many triangles) so pairs are plentiful.
        let ball = app
            .world_mut()
            .spawn((
                RigidBody::Dynamic,
                Collider::icosphere(0.3, 2),
                Transform::from_xyz(0.1, 0.5, 0.0),
                NeverSleep,
            ))
            .id();
        until_joined(&mut app, &[g, ball]);
        let mut inbox = Inbox::<ContactMessage>::new();
        let mut per_step = Vec::new();
        for _ in 0..60 {
            app.update();
            inbox.drain(&app);
            let mut pairs: Vec<(u32, u32)> =
                inbox.got.drain(..).flat_map(|m| m.triangle_pairs).collect();
            pairs.sort_unstable();
            per_step.push(pairs);
        }
        per_step
    };
    let cpu = run(Backend::Cpu, None);
    let gpu = run(Backend::GpuBlocking, Some(ctx));
    let total: usize = cpu.iter().map(Vec::len).sum();
    assert!(total > 50, "too few triangle pairs to compare: {total}");
    // The runs are aligned at their first contact: CInDeR at its pixel size may see a
    // touch-down one step after the exact test (a penetration below a pixel, no sampled volume
    // yet); from then on the pairs are equal.
    let first = |v: &[Vec<(u32, u32)>]| v.iter().position(|p| !p.is_empty());
    let (c0, g0) = (first(&cpu).unwrap(), first(&gpu).unwrap());
    let same = |d: usize| {
        let (c, g) = (&cpu[c0 + d..], &gpu[g0..]);
        let n = c.len().min(g.len());
        n > 20 && c[..n] == g[..n]
    };
    assert!(
        same(0) || same(1),
        "per-step triangle pairs differ:\ncpu {:?}\ngpu {:?}",
        &cpu[c0..],
        &gpu[g0..]
    );
}

/// The raw image-space answer (no exact confirmation): CInDeR's conservative pairs alone still
/// give a box that falls and rests.
#[test]
fn gpu_blocking_without_exact_confirmation_rests() {
    let Some(ctx) = gpu_or_skip("gpu_blocking_without_exact_confirmation_rests") else {
        return;
    };
    let mut app = app(Backend::GpuBlocking, Some(ctx));
    app.world_mut()
        .resource_mut::<bevy_interfere::GpuSettings>()
        .exact_confirm = false;
    let g = ground(&mut app);
    let b = falling_box(&mut app, 1.0);
    until_joined(&mut app, &[g, b]);
    for _ in 0..192 {
        app.update();
    }
    let y = app.world().get::<Transform>(b).unwrap().translation.y;
    let v = app.world().get::<LinearVelocity>(b).unwrap().0.length();
    assert!((y - 0.25).abs() < 0.01 && v < 0.05, "y {y}, speed {v}");
    assert_eq!(
        app.world().resource::<PhysicsStats>().backend,
        Backend::GpuBlocking
    );
}

/// One scene through `interfere_dynamics::Scene` (what `interfere simulate` runs) and through
/// the plugin (entities, components, `MinimalPlugins`, CPU backend) gives the same trajectory, bit
/// for bit. The scene's numbers are exact in `f32` (the plugin's components are `f32`).
#[test]
fn scene_and_plugin_give_the_same_trajectory_bit_for_bit() {
    use interfere_dynamics::{KindSpec, Scene, ShapeSpec};
    const SCENE: &str = r#"{
        "gravity": [0, 0, -9.75],
        "dt": 0.015625,
        "substeps": 4,
        "planes": [{ "normal": [0, 0, 1] }],
        "bodies": [
            { "name": "table", "kind": "static",
              "shape": { "cuboid": { "half_extents": [1.5, 1.5, 0.25] } },
              "position": [0, 0, 0.25], "friction": 0.75 },
            { "name": "box", "shape": { "cuboid": { "half_extents": [0.25, 0.375, 0.125] } },
              "position": [0.25, 0, 1.5], "angular_velocity": [0.5, 1.0, 0], "friction": 0.5 },
            { "name": "ball", "shape": { "icosphere": { "radius": 0.25, "subdivisions": 1 } },
              "position": [-0.5, 0.25, 2.0], "velocity": [0.5, 0, 0], "density": 500,
              "restitution": 0.25 },
            { "name": "ring", "shape": { "torus": { "major": 0.25, "minor": 0.0625,
              "major_segments": 12, "minor_segments": 6 } },
              "position": [2.5, 0, 0.5], "velocity": [0, 0, 0] }
        ]
    }"#;
    let scene = Scene::from_json(SCENE, std::path::Path::new("parity.json")).unwrap();
    let mut built = scene.build().unwrap();
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, AssetPlugin::default()))
        .init_asset::<Mesh>()
        .insert_resource(Time::<Fixed>::from_seconds(scene.dt))
        .insert_resource(TimeUpdateStrategy::FixedTimesteps(1))
        .insert_resource(PhysicsSettings {
            gravity: Vec3::new(0.0, 0.0, -9.75),
            substeps: scene.substeps,
            ..default()
        })
        .add_plugins(InterferePlugins);
    app.finish();
    app.cleanup();
    // The same bodies in the same order: the ground with the plane first, then the scene's.
    let mut spawned = vec![
        app.world_mut()
            .spawn((
                RigidBody::Static,
                Collider::half_space(Vec3::Z, Vec3::ZERO),
                Transform::default(),
            ))
            .id(),
    ];
    for b in &scene.bodies {
        let solid = match &b.shape {
            ShapeSpec::Cuboid { half_extents } => interfere_geometry::shapes::cuboid(
                interfere_geometry::glam::Vec3::from_array(*half_extents),
            ),
            ShapeSpec::Icosphere {
                radius,
                subdivisions,
            } => interfere_geometry::shapes::icosphere(*radius, *subdivisions),
            ShapeSpec::Torus {
                major,
                minor,
                major_segments,
                minor_segments,
            } => {
                interfere_geometry::shapes::torus(*major, *minor, *major_segments, *minor_segments)
            }
            other => panic!("shape not used here: {other:?}"),
        };
        let v = |a: [f64; 3]| Vec3::new(a[0] as f32, a[1] as f32, a[2] as f32);
        let e = app.world_mut().spawn((
            match b.kind {
                KindSpec::Dynamic => RigidBody::Dynamic,
                KindSpec::Static => RigidBody::Static,
                KindSpec::Kinematic => RigidBody::Kinematic,
            },
            // Prepared here, so every body joins at the same step as in the scene (a collider
            // prepared on the task pool joins when it is ready).
            Collider::prepared(std::sync::Arc::new(
                interfere_dynamics::MeshShape::new(solid.unwrap()).unwrap(),
            )),
            Transform::from_translation(v(b.position)),
            LinearVelocity(v(b.velocity)),
            AngularVelocity(v(b.angular_velocity)),
            Density(b.density as f32),
            Friction::new(b.friction as f32),
            Restitution(b.restitution as f32),
        ));
        spawned.push(e.id());
    }
    // Wait, paused, until every body has joined.
    until_joined(&mut app, &spawned);
    assert_eq!(
        app.world().resource::<PhysicsWorld>().len(),
        built.handles.len()
    );
    app.world_mut().resource_mut::<PhysicsSettings>().paused = false;
    let mut contacts = 0;
    for step in 0..240 {
        built.simulation.step();
        app.update();
        let pw = app.world().resource::<PhysicsWorld>();
        assert_eq!(
            pw.simulation().state_bits(),
            built.simulation.state_bits(),
            "trajectories differ at step {step}"
        );
        contacts += built.simulation.pair_contacts().len();
    }
    assert!(contacts > 200, "the scene must have contacts ({contacts})");
}

/// Spawning and despawning an unrelated body leaves the others' simulated state untouched, bit
/// for bit (no rebuild, warm starting kept).
#[test]
fn spawn_and_despawn_do_not_disturb_other_bodies() {
    // The box's state after every step it was in the simulation. Collider preparation runs on
    // the task pool, so both runs wait, paused, until the box and the ground have joined; the
    // visitor may join an update earlier or later depending on load, which must not matter.
    let run = |visitor: bool| {
        let mut app = app(Backend::Cpu, None);
        let g = ground(&mut app);
        let b = falling_box(&mut app, 1.0);
        until_joined(&mut app, &[g, b]);
        let mut v = None;
        let mut states = Vec::new();
        for step in 0..150 {
            if visitor && step == 30 {
                v = Some(
                    app.world_mut()
                        .spawn((
                            RigidBody::Dynamic,
                            Collider::icosphere(0.2, 1),
                            Transform::from_xyz(40.0, 5.0, 0.0),
                        ))
                        .id(),
                );
            }
            if step == 100
                && let Some(e) = v.take()
            {
                app.world_mut().despawn(e);
            }
            app.update();
            let pw = app.world().resource::<PhysicsWorld>();
            if let Some(body) = pw.body(b) {
                states.push((
                    body.position.to_array().map(f64::to_bits),
                    body.orientation.to_array().map(f64::to_bits),
                ));
            }
        }
        states
    };
    let (alone, visited) = (run(false), run(true));
    let n = alone.len().min(visited.len());
    assert_eq!(n, 150, "the box was simulated for only {n} steps");
    assert_eq!(alone[..n], visited[..n]);
}

/// What the ray-casting system saw on its last run.
#[derive(Resource, Default)]
struct Seen {
    down: Option<RayHitData>,
    excluded: Option<RayHitData>,
    masked: Option<RayHitData>,
    predicate: Option<RayHitData>,
    solid_inside: Option<RayHitData>,
    all: Vec<RayHitData>,
    points: [Vec<Entity>; 2],
    shapes: Vec<Entity>,
    boxed: Vec<Entity>,
    capsule: Option<ShapeHitData>,
}

/// The entity named "target".
#[derive(Resource)]
struct Target(Entity);

fn cast_rays(query: SpatialQuery, target: Res<Target>, mut seen: ResMut<Seen>) {
    let t = target.0;
    let top = Vec3::new(1.0, 5.0, 0.0);
    let all = SpatialQueryFilter::default();
    seen.down = query.cast_ray(top, Dir3::NEG_Y, 100.0, false, &all);
    let without = SpatialQueryFilter::default().with_excluded_entities([t]);
    seen.excluded = query.cast_ray(top, Dir3::NEG_Y, 100.0, false, &without);
    seen.masked = query.cast_ray(
        top,
        Dir3::NEG_Y,
        100.0,
        false,
        &SpatialQueryFilter::from_mask(0b01),
    );
    let not_target = |e: Entity| e != t;
    let predicate = SpatialQueryFilter::default().with_predicate(&not_target);
    seen.predicate = query.cast_ray(top, Dir3::NEG_Y, 100.0, false, &predicate);
    seen.solid_inside = query.cast_ray(Vec3::new(1.0, 1.0, 0.0), Dir3::X, 100.0, true, &all);
    seen.all = query.ray_hits(top, Dir3::NEG_Y, 100.0, false, &all);
    seen.points = [
        query.point_intersections(Vec3::new(1.0, 1.0, 0.0), &all),
        query.point_intersections(Vec3::new(-1.0, -0.1, 0.0), &all),
    ];
    let probe = ColliderShape::new(
        interfere_geometry::shapes::cuboid(interfere_geometry::glam::Vec3::new(0.1, 2.0, 0.1))
            .unwrap(),
    )
    .unwrap();
    seen.shapes = query.shape_intersections(&probe, Vec3::new(1.0, 1.0, 0.0), Quat::IDENTITY, &all);
    seen.capsule = query.cast_capsule(
        Vec3::new(-1.0, 3.0, 0.0),
        Vec3::new(-1.0, 3.5, 0.0),
        0.25,
        Dir3::NEG_Y,
        100.0,
        &all,
    );
    seen.boxed = query.aabb_intersections_with_aabb(
        bevy::math::bounding::Aabb3d::new(Vec3::new(1.0, 1.5, 0.0), Vec3::splat(0.1)),
        &all,
    );
}

/// A system's ray cast hits the expected entity with the right normal, distance and point;
/// exclusion, a layer mask and a predicate let it through to the ground; a solid ray from inside
/// hits at 0; point, shape and box queries name the right entities; a capsule cast lands on the
/// ground at the analytic distance.
#[test]
fn spatial_query_from_a_system() {
    let mut app = app(Backend::Cpu, None);
    let g = ground(&mut app);
    let angle = 0.4f32;
    let t = app
        .world_mut()
        .spawn((
            RigidBody::Static,
            Collider::cuboid_mesh(Vec3::splat(0.5)),
            Transform::from_xyz(1.0, 1.0, 0.0).with_rotation(Quat::from_rotation_z(angle)),
            CollisionLayers::new(0b10, LayerMask::ALL),
            Name::new("target"),
        ))
        .id();
    app.insert_resource(Target(t))
        .init_resource::<Seen>()
        .add_systems(Update, cast_rays);
    until_joined(&mut app, &[g, t]);
    for _ in 0..5 {
        app.update();
    }
    assert_eq!(app.world().resource::<PhysicsWorld>().len(), 2);
    let seen = app.world().resource::<Seen>();
    // The target's top face, tilted by the rotation about z.
    let down = seen.down.expect("the ray hits the target");
    let normal = Vec3::new(-angle.sin(), angle.cos(), 0.0);
    let top_y = 1.0 + 0.5 / angle.cos();
    assert_eq!(down.entity, t);
    assert!((down.normal - normal).length() < 1e-6, "{down:?}");
    assert!((down.distance - (5.0 - top_y)).abs() < 1e-5, "{down:?}");
    assert!(
        (down.point - Vec3::new(1.0, top_y, 0.0)).length() < 1e-5,
        "{down:?}"
    );
    assert!(down.triangle.is_some());
    // Through to the ground's top face at y = 0.
    for (hit, what) in [
        (seen.excluded, "excluded"),
        (seen.masked, "mask"),
        (seen.predicate, "predicate"),
    ] {
        let hit = hit.unwrap_or_else(|| panic!("{what}: no hit"));
        assert_eq!(hit.entity, g, "{what}");
        assert!(
            (hit.distance - 5.0).abs() < 1e-5 && (hit.normal - Vec3::Y).length() < 1e-6,
            "{what}: {hit:?}"
        );
    }
    let inside = seen.solid_inside.unwrap();
    assert_eq!(
        (
            inside.entity,
            inside.distance,
            inside.normal,
            inside.triangle
        ),
        (t, 0.0, Vec3::ZERO, None)
    );
    // In and out of the target, then in and out of the ground.
    let order: Vec<Entity> = seen.all.iter().map(|h| h.entity).collect();
    assert_eq!(order, [t, t, g, g], "{:?}", seen.all);
    assert_eq!(seen.points, [vec![t], vec![g]]);
    // In no particular order: the order the two joined depends on when each collider was ready.
    let mut shapes = seen.shapes.clone();
    shapes.sort();
    let mut expected = [g, t];
    expected.sort();
    assert_eq!(shapes, expected);
    assert_eq!(seen.boxed, [t]);
    // A capsule dropped beside the target lands on the ground: its lowest point travels 2.75 m.
    let c = seen.capsule.expect("the capsule lands");
    assert_eq!(c.entity, g);
    assert!((c.distance - 2.75).abs() < 1e-5, "{c:?}");
    assert!((c.normal - Vec3::Y).length() < 1e-6, "{c:?}");
    assert!(
        (c.point - Vec3::new(-1.0, 0.0, 0.0)).length() < 1e-5,
        "{c:?}"
    );
}

/// What one run of [`drop_through_zone`] saw.
struct ZoneRun {
    heights: Vec<f32>,
    contacts: Vec<ContactMessage>,
    volumes: Vec<IntersectionVolumeMessage>,
    /// Per step with a zone contact: whether the box was wholly inside, and the volume message's
    /// volume (if one was sent).
    zone_steps: Vec<(bool, Option<f32>)>,
    zone: Option<Entity>,
}

/// Drops a box through the spot a sensor zone may occupy (spawned last, so the other bodies'
/// ids do not change).
fn drop_through_zone(zone: bool) -> ZoneRun {
    let mut app = app(Backend::Cpu, None);
    let g = ground(&mut app);
    let b = falling_box(&mut app, 2.0);
    let z = zone.then(|| {
        app.world_mut()
            .spawn((
                RigidBody::Static,
                Collider::cuboid_mesh(Vec3::new(0.6, 0.4, 0.6)),
                Transform::from_xyz(0.0, 1.0, 0.0),
                Sensor,
            ))
            .id()
    });
    let mut joining = vec![g, b];
    joining.extend(z);
    until_joined(&mut app, &joining);
    let mut s = Inbox::<CollisionStarted>::new();
    let mut c = Inbox::<ContactMessage>::new();
    let mut v = Inbox::<IntersectionVolumeMessage>::new();
    let mut heights = Vec::new();
    let mut zone_steps = Vec::new();
    for _ in 0..150 {
        app.update();
        let (nc, nv) = (c.got.len(), v.got.len());
        s.drain(&app);
        c.drain(&app);
        v.drain(&app);
        heights.push(app.world().get::<Transform>(b).unwrap().translation.y);
        let Some(z) = z else { continue };
        let touches = |a: Entity, b: Entity| a == z || b == z;
        if let Some(contact) = c.got[nc..].iter().find(|m| touches(m.a, m.b)) {
            let volume = v.got[nv..].iter().find(|m| touches(m.a, m.b));
            zone_steps.push((contact.contained, volume.map(|m| m.volume)));
        }
    }
    if let Some(z) = z {
        let with_zone = |m: &CollisionStarted| (m.0 == z && m.1 == b) || (m.0 == b && m.1 == z);
        assert_eq!(
            s.got.iter().filter(|m| with_zone(m)).count(),
            1,
            "{:?}",
            s.got
        );
    }
    ZoneRun {
        heights,
        contacts: c.got,
        volumes: v.got,
        zone_steps,
        zone: z,
    }
}

/// A body falling through a sensor zone produces collision, contact and volume messages flagged
/// `sensor` for the zone (with the box's volume while it is wholly inside), while its trajectory
/// is that of a run without the zone, bit for bit (and it still lands on the ground, whose
/// contacts are not sensor contacts).
#[test]
fn sensor_zone_reports_but_exerts_nothing() {
    let free = drop_through_zone(false);
    let sensed = drop_through_zone(true);
    let zone = sensed.zone.unwrap();
    // Collider preparation runs on the task pool, so a body may join a step earlier or later
    // depending on load: the trajectories are compared from the first step the box moved.
    let start = |h: &[f32]| h.iter().position(|y| *y != 2.0).unwrap_or(h.len());
    let moving = |h: &[f32]| -> Vec<u32> { h[start(h)..].iter().map(|y| y.to_bits()).collect() };
    // Steps by which the sensed run's box started later than the free run's (either sign).
    let late = start(&sensed.heights) as i64 - start(&free.heights) as i64;
    let (free_bits, sensed_bits) = (moving(&free.heights), moving(&sensed.heights));
    let n = free_bits.len().min(sensed_bits.len());
    assert!(n >= 100, "the box moved for only {n} steps");
    assert_eq!(free_bits[..n], sensed_bits[..n]);
    assert!(
        (free.heights.last().unwrap() - 0.25).abs() < 0.01,
        "rests on the ground"
    );
    let (with_zone, other): (Vec<_>, Vec<_>) = sensed
        .contacts
        .iter()
        .partition(|m| m.a == zone || m.b == zone);
    assert!(with_zone.len() > 3, "{}", with_zone.len());
    assert!(with_zone.iter().all(|m| m.sensor));
    assert!(!other.is_empty() && other.iter().all(|m| !m.sensor));
    // As many ground contact messages as without the zone, but for the steps one run's box
    // started later (it landed that much later in the same number of updates).
    assert!(
        (other.len() as i64 - free.contacts.len() as i64).abs() <= late.abs(),
        "{} ground contacts with the zone, {} without, start offset {late}",
        other.len(),
        free.contacts.len()
    );
    let zone_volumes: Vec<_> = sensed
        .volumes
        .iter()
        .filter(|m| m.a == zone || m.b == zone)
        .collect();
    assert!(!zone_volumes.is_empty() && zone_volumes.iter().all(|m| m.sensor));
    // The box (0.125 m³) passes wholly inside the zone: meanwhile the volume is the box's.
    let inside: Vec<_> = sensed.zone_steps.iter().filter(|(c, _)| *c).collect();
    assert!(inside.len() >= 2, "{:?}", sensed.zone_steps);
    assert!(
        inside
            .iter()
            .all(|(_, v)| v.is_some_and(|v| (v - 0.125).abs() < 1e-4)),
        "{:?}",
        sensed.zone_steps
    );
}

/// Layers that do not interact let a body fall through the ground while one with default layers
/// rests; changing a resting body's layers, or making the ground a sensor and back, updates the
/// collider of the same body (no rebuild) and takes effect.
#[test]
fn layers_let_bodies_fall_through_and_changes_apply_in_place() {
    let mut app = app(Backend::Cpu, None);
    let g = ground(&mut app);
    app.world_mut()
        .entity_mut(g)
        .insert(CollisionLayers::new(0b01, 0b01));
    let ghost = app
        .world_mut()
        .spawn((
            RigidBody::Dynamic,
            Collider::cuboid_mesh(Vec3::splat(0.25)),
            Transform::from_xyz(-1.0, 1.0, 0.0),
            CollisionLayers::new(0b10, 0b10),
            NeverSleep,
        ))
        .id();
    let solid = falling_box(&mut app, 1.0);
    until_joined(&mut app, &[g, ghost, solid]);
    for _ in 0..90 {
        app.update();
    }
    let y = |app: &App, e: Entity| app.world().get::<Transform>(e).unwrap().translation.y;
    assert!(y(&app, ghost) < -1.0, "ghost at {}", y(&app, ghost));
    assert!(
        (y(&app, solid) - 0.25).abs() < 0.01,
        "solid at {}",
        y(&app, solid)
    );
    let handle = |app: &App, e: Entity| app.world().resource::<PhysicsWorld>().handle(e).unwrap();
    let (hs, hg) = (handle(&app, solid), handle(&app, g));
    // The resting box leaves the ground's groups: it falls, as the same body.
    app.world_mut()
        .entity_mut(solid)
        .insert(CollisionLayers::new(0b10, 0b10));
    for _ in 0..60 {
        app.update();
    }
    assert_eq!(handle(&app, solid), hs);
    assert!(y(&app, solid) < -1.0, "solid at {}", y(&app, solid));
    let sim_layers = |app: &App, e: Entity| {
        let pw = app.world().resource::<PhysicsWorld>();
        let c = pw.simulation().collider(pw.handle(e).unwrap()).unwrap();
        (c.layers, c.sensor)
    };
    assert_eq!(
        sim_layers(&app, solid).0,
        interfere_dynamics::CollisionLayers::new(0b10, 0b10)
    );
    // The ground becomes a sensor and back, in place.
    app.world_mut().entity_mut(g).insert(Sensor);
    app.update();
    assert_eq!(handle(&app, g), hg);
    assert!(sim_layers(&app, g).1);
    app.world_mut().entity_mut(g).remove::<Sensor>();
    app.update();
    assert_eq!(handle(&app, g), hg);
    assert!(!sim_layers(&app, g).1);
}

/// An app without gravity whose bodies have all joined (colliders prepared).
fn weightless_app() -> App {
    let mut app = app(Backend::Cpu, None);
    app.world_mut().resource_mut::<PhysicsSettings>().gravity = Vec3::ZERO;
    app
}

/// Updates, paused, until every entity in `bodies` has joined the simulation, then restores the
/// pause setting. Colliders are prepared on the task pool, off the main thread, so how many
/// updates that takes depends on the machine's load: the wait is bounded by wall time, not by a
/// count of updates, and no step runs while it lasts.
fn until_joined(app: &mut App, bodies: &[Entity]) {
    let was_paused = app.world().resource::<PhysicsSettings>().paused;
    app.world_mut().resource_mut::<PhysicsSettings>().paused = true;
    update_until(app, "every body joined", |w| {
        let pw = w.resource::<PhysicsWorld>();
        bodies.iter().all(|e| pw.body(*e).is_some())
    });
    app.world_mut().resource_mut::<PhysicsSettings>().paused = was_paused;
}

/// Updates until `done` holds for the world, bounded by wall time (60 s, then it fails naming
/// `what`), not by a count of updates: what the task pool finishes meanwhile depends on the
/// machine's load.
fn update_until(app: &mut App, what: &str, done: impl Fn(&World) -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        app.update();
        if done(app.world()) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "not within 60 s: {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

fn spawn_free_box(app: &mut App, at: Vec3, rotation: Quat) -> Entity {
    app.world_mut()
        .spawn((
            RigidBody::Dynamic,
            Collider::prepared(std::sync::Arc::new(
                interfere_dynamics::MeshShape::new(
                    interfere_geometry::shapes::cuboid(interfere_geometry::glam::Vec3::new(
                        0.5, 0.25, 0.125,
                    ))
                    .unwrap(),
                )
                .unwrap(),
            )),
            Transform::from_translation(at).with_rotation(rotation),
            NeverSleep,
        ))
        .id()
}

/// Oracle: an `ExternalImpulse` at a point changes the body's linear momentum by the impulse and
/// its angular momentum about the centre of mass by `(p − c) × J` (world inertia at the moment it
/// is applied; to 1e-12 relative, in `f64`), once: the component is set back to zero and the next
/// step leaves the velocities unchanged. An `ExternalAngularImpulse` in the body's axes adds
/// `R A`.
#[test]
fn external_impulse_changes_momentum_by_the_impulse() {
    let mut app = weightless_app();
    let q = Quat::from_rotation_y(0.7) * Quat::from_rotation_x(0.2);
    let e = spawn_free_box(&mut app, Vec3::new(1.0, 2.0, 3.0), q);
    until_joined(&mut app, &[e]);
    let b0 = app
        .world()
        .resource::<PhysicsWorld>()
        .body(e)
        .unwrap()
        .clone();
    assert_eq!(b0.linear_velocity, interfere_geometry::glam::DVec3::ZERO);
    let (j, p, a) = (
        Vec3::new(3.0, -1.5, 2.0),
        Vec3::new(1.25, 2.5, 2.75),
        Vec3::new(0.0, 0.0, 0.5),
    );
    app.world_mut().entity_mut(e).insert((
        ExternalImpulse::new(j).with_point(p),
        ExternalAngularImpulse::new(a).with_local(true),
    ));
    app.update();
    let b1 = app
        .world()
        .resource::<PhysicsWorld>()
        .body(e)
        .unwrap()
        .clone();
    let m = b0.mass();
    let dp = m * b1.linear_velocity;
    let jd = j.as_dvec3();
    assert!((dp - jd).length() <= 1e-12 * jd.length(), "Δp {dp} vs {jd}");
    let dl = b0.inertia_world() * b1.angular_velocity;
    let want = (p.as_dvec3() - b0.position).cross(jd) + b0.orientation * a.as_dvec3();
    assert!(
        (dl - want).length() <= 1e-12 * want.length(),
        "ΔL {dl} vs {want}"
    );
    assert_eq!(
        app.world().get::<ExternalImpulse>(e).unwrap().impulse,
        Vec3::ZERO
    );
    assert_eq!(
        app.world()
            .get::<ExternalAngularImpulse>(e)
            .unwrap()
            .impulse,
        Vec3::ZERO
    );
    app.update();
    let b2 = app.world().resource::<PhysicsWorld>().body(e).unwrap();
    assert_eq!(b2.linear_velocity, b1.linear_velocity);
    assert_eq!(b2.angular_velocity, b1.angular_velocity);
    // The written-back velocity is the simulated one.
    let lin = app.world().get::<LinearVelocity>(e).unwrap().0;
    assert_eq!(lin, b2.linear_velocity.as_vec3());
}

/// A locked axis holds: gravity (−y) and a force along y do not move a body with y locked, while
/// a force along x moves it; a body with `GravityScale(0)` floats while its neighbour falls, and a
/// local force turns with the body. Removing the components restores the defaults.
#[test]
fn locked_axes_gravity_scale_and_local_force() {
    let mut app = app(Backend::Cpu, None);
    let locked = spawn_free_box(&mut app, Vec3::new(0.0, 5.0, 0.0), Quat::IDENTITY);
    let floating = spawn_free_box(&mut app, Vec3::new(3.0, 5.0, 0.0), Quat::IDENTITY);
    let falling = spawn_free_box(&mut app, Vec3::new(6.0, 5.0, 0.0), Quat::IDENTITY);
    let turned = spawn_free_box(
        &mut app,
        Vec3::new(9.0, 5.0, 0.0),
        Quat::from_rotation_z(std::f32::consts::FRAC_PI_2),
    );
    app.world_mut().entity_mut(locked).insert((
        LockedAxes::new().lock_translation_y(),
        ExternalForce::new(Vec3::new(10.0, -50.0, 0.0)),
    ));
    app.world_mut()
        .entity_mut(floating)
        .insert(GravityScale(0.0));
    // Along the body's x, which the 90° turn about z makes world +y; with GravityScale(0).
    app.world_mut().entity_mut(turned).insert((
        GravityScale(0.0),
        ExternalForce::new(Vec3::X * 5.0).with_local(true),
        LockedAxes::ROTATION_LOCKED,
    ));
    until_joined(&mut app, &[locked, floating, falling, turned]);
    let y_of = |app: &App, e: Entity| {
        app.world()
            .resource::<PhysicsWorld>()
            .body(e)
            .unwrap()
            .position
            .y
    };
    let y0 = y_of(&app, locked);
    let f0 = y_of(&app, floating);
    for _ in 0..60 {
        app.update();
        assert_eq!(y_of(&app, locked), y0);
        assert_eq!(y_of(&app, floating), f0);
    }
    let pw = app.world().resource::<PhysicsWorld>();
    // The free axis moves as F t² / 2m (to 10 %: the force starts with the first step).
    let body = pw.body(locked).unwrap();
    let t = 60.0 / HZ;
    let expected = 0.5 * 10.0 / body.mass() * t * t;
    assert!(
        (body.position.x - expected).abs() < 0.1 * expected,
        "the free axis moves: x = {}, expected {expected}",
        body.position.x
    );
    assert_eq!(
        pw.body(floating).unwrap().position,
        interfere_geometry::glam::DVec3::new(3.0, 5.0, 0.0)
    );
    assert!(y_of(&app, falling) < 4.0, "the neighbour falls");
    let t = pw.body(turned).unwrap();
    // The velocity along world +y is F t / m (to 10 %: the force starts with the first step).
    let expected = 5.0 / t.mass() * 60.0 / HZ;
    assert!(
        (t.linear_velocity.y - expected).abs() < 0.1 * expected,
        "local +x is world +y: {}, expected {expected} along y",
        t.linear_velocity
    );
    assert!(t.linear_velocity.x.abs() < 1e-6, "{}", t.linear_velocity);
    // Removing the lock and the scale: back to falling.
    app.world_mut().entity_mut(locked).remove::<LockedAxes>();
    app.world_mut()
        .entity_mut(floating)
        .remove::<GravityScale>();
    for _ in 0..10 {
        app.update();
    }
    assert!(y_of(&app, locked) < y0);
    assert!(y_of(&app, floating) < f0);
}

/// Oracle for `TransformInterpolation`: with three frames per fixed step, the shown `Transform`
/// of an interpolated falling box lies (per axis) between its last two step poses at every frame,
/// strictly between them on frames inside a step, and the simulation is unaffected: its
/// trajectory is bit for bit the one of the same box without interpolation.
#[test]
fn interpolation_lies_between_the_two_step_poses() {
    let run = |interpolate: bool| {
        let mut app = App::new();
        app.add_plugins((MinimalPlugins, AssetPlugin::default()))
            .init_asset::<Mesh>()
            .insert_resource(Time::<Fixed>::from_hz(HZ))
            .insert_resource(TimeUpdateStrategy::ManualDuration(
                std::time::Duration::from_secs_f64(1.0 / (3.0 * HZ)),
            ))
            // Both runs' bodies join at the same frame, so both see the same frame phase. (With
            // background preparation one full-suite run under load in 2026-11-28 saw the two
            // trajectories differ from the landing on, by 1e-10 m sideways; eleven reruns did
            // not. Whether the frame phase can change the simulation is not established.)
            .insert_resource(ColliderPreparation::Blocking)
            .add_plugins(InterferePlugins);
        app.finish();
        app.cleanup();
        let g = ground(&mut app);
        let b = falling_box(&mut app, 1.0);
        until_joined(&mut app, &[g, b]);
        if interpolate {
            app.world_mut().entity_mut(b).insert(TransformInterpolation);
        }
        let (mut inside, mut simulated) = (0, Vec::new());
        for _ in 0..360 {
            app.update();
            let pw = app.world().resource::<PhysicsWorld>();
            let Some(body) = pw.body(b) else { continue };
            simulated.push(body.position.to_array().map(f64::to_bits));
            if !interpolate {
                continue;
            }
            let shown = *app.world().get::<Transform>(b).unwrap();
            let state = *app
                .world()
                .get::<bevy_interfere::InterpolationState>(b)
                .unwrap();
            let (Some(p), Some(c)) = (state.previous, state.current) else {
                continue;
            };
            for k in 0..3 {
                let (lo, hi) = (p.0[k].min(c.0[k]), p.0[k].max(c.0[k]));
                let x = shown.translation[k];
                assert!(
                    x >= lo - 1e-6 && x <= hi + 1e-6,
                    "axis {k}: shown {x} outside [{lo}, {hi}]"
                );
                if k == 1 && x > lo + 1e-6 && x < hi - 1e-6 {
                    inside += 1;
                }
            }
            assert!(shown.rotation.is_normalized());
        }
        (inside, simulated)
    };
    // The box joins when its collider is ready (task pool): compare the step states, not frames.
    let states = |mut v: Vec<[u64; 3]>| {
        v.dedup();
        v
    };
    let (inside, with) = run(true);
    let (_, without) = run(false);
    let (with, without) = (states(with), states(without));
    let n = with.len().min(without.len());
    assert!(n > 60, "{n} step states");
    let (with, without) = (&with[..n], &without[..n]);
    assert!(
        inside > 20,
        "{inside} frames strictly between two step poses"
    );
    assert_eq!(with, without, "the interpolation changed the simulation");
}

/// A body thrown out of the world bound is reported and parked (out of the simulation, with
/// `Parked`), while the rest keeps stepping; removing `Parked` brings it back where it is.
#[test]
fn bodies_leaving_the_world_bound_are_parked() {
    let mut app = app(Backend::Cpu, None);
    app.world_mut()
        .resource_mut::<PhysicsSettings>()
        .world_bound = 50.0;
    let g = ground(&mut app);
    let stay = falling_box(&mut app, 1.0);
    let thrown = falling_box(&mut app, 3.0);
    app.world_mut()
        .entity_mut(thrown)
        .insert(LinearVelocity(Vec3::new(2000.0, 0.0, 0.0)));
    until_joined(&mut app, &[g, stay, thrown]);
    for _ in 0..20 {
        app.update();
    }
    let parked = *app
        .world()
        .get::<Parked>(thrown)
        .expect("the thrown box is parked");
    assert!(parked.position.x > 50.0, "{parked:?}");
    let pw = app.world().resource::<PhysicsWorld>();
    assert!(
        pw.body(thrown).is_none(),
        "the parked box left the simulation"
    );
    let y0 = pw.body(stay).unwrap().position.y;
    for _ in 0..20 {
        app.update();
    }
    let y1 = app
        .world()
        .resource::<PhysicsWorld>()
        .body(stay)
        .unwrap()
        .position
        .y;
    assert!(y1 < y0, "the other box keeps falling: {y0} → {y1}");
    // Back in at its Transform once un-parked (moved inside the bound by the game).
    app.world_mut()
        .entity_mut(thrown)
        .remove::<Parked>()
        .insert((
            Transform::from_xyz(0.0, 5.0, 0.0),
            LinearVelocity(Vec3::ZERO),
        ));
    for _ in 0..3 {
        app.update();
    }
    assert!(
        app.world()
            .resource::<PhysicsWorld>()
            .body(thrown)
            .is_some()
    );
}

/// A game system writing NaN or infinity into a body's `Transform` or velocity: refused for that
/// body (the simulation keeps its state and writes it back over the bad value), the others keep
/// stepping, nothing is poisoned.
#[test]
fn non_finite_writes_are_refused_per_body() {
    let mut app = app(Backend::Cpu, None);
    ground(&mut app);
    let a = falling_box(&mut app, 1.0);
    let b = falling_box(&mut app, 3.0);
    until_joined(&mut app, &[a, b]);
    app.world_mut()
        .get_mut::<Transform>(a)
        .unwrap()
        .translation
        .x = f32::NAN;
    app.world_mut().get_mut::<LinearVelocity>(b).unwrap().0 = Vec3::splat(f32::INFINITY);
    for _ in 0..10 {
        app.update();
    }
    let pw = app.world().resource::<PhysicsWorld>();
    for e in [a, b] {
        let body = pw.body(e).expect("still simulated");
        assert!(body.position.is_finite() && body.linear_velocity.is_finite());
        let t = app.world().get::<Transform>(e).unwrap().translation;
        assert!(t.is_finite(), "{t}");
        assert_eq!(t, body.mesh_pose().translation.as_vec3());
        let v = app.world().get::<LinearVelocity>(e).unwrap().0;
        assert!(v.is_finite(), "{v}");
    }
    assert!(pw.body(b).unwrap().position.y < 3.0, "b keeps falling");
}

/// Oracle: primitive colliders (`Collider::sphere`, `Collider::cuboid`, a compound of a box and
/// a ball) dropped on a half-space, and a sphere dropped on a mesh slab (a primitive–mesh pair), land and rest at
/// their closed-form heights (radius, half height; within 2 mm: the volume slop and the last
/// step's motion), level and still; the sphere–slab pair reports a `CollisionStarted`.
#[test]
fn primitive_colliders_land_and_rest_on_half_space_and_mesh() {
    let mut app = app(Backend::Cpu, None);
    app.world_mut().spawn((
        RigidBody::Static,
        Collider::half_space(Vec3::Y, Vec3::ZERO),
        Transform::default(),
    ));
    // A mesh slab with its top face at y = 1.
    let slab = app
        .world_mut()
        .spawn((
            RigidBody::Static,
            Collider::cuboid_mesh(Vec3::new(1.0, 0.25, 1.0)),
            Transform::from_xyz(5.0, 0.75, 0.0),
        ))
        .id();
    let mut body = |collider: Collider, t: Transform| {
        app.world_mut()
            .spawn((RigidBody::Dynamic, collider, t, NeverSleep))
            .id()
    };
    let sphere = body(Collider::sphere(0.3), Transform::from_xyz(0.0, 1.5, 0.0));
    let cuboid = body(
        Collider::cuboid(Vec3::new(0.3, 0.2, 0.25)),
        Transform::from_xyz(2.0, 1.5, 0.0).with_rotation(Quat::from_rotation_y(0.4)),
    );
    let on_mesh = body(Collider::sphere(0.25), Transform::from_xyz(5.0, 2.0, 0.0));
    // A box with a ball on top (centre of mass off the box's centre, above its face).
    let compound = body(
        Collider::compound([
            (Transform::default(), Collider::cuboid(Vec3::splat(0.2))),
            (Transform::from_xyz(0.1, 0.35, 0.0), Collider::sphere(0.15)),
        ]),
        Transform::from_xyz(-3.0, 1.5, 0.0),
    );
    until_joined(&mut app, &[slab, sphere, cuboid, on_mesh, compound]);
    let mut started = Inbox::<CollisionStarted>::new();
    for _ in 0..240 {
        app.update();
        started.drain(&app);
    }
    for (e, want) in [
        (sphere, 0.3),
        (cuboid, 0.2),
        (on_mesh, 1.25),
        (compound, 0.2),
    ] {
        assert!(app.world().get::<ColliderError>(e).is_none());
        assert!(app.world().get::<ColliderShape>(e).is_some());
        let t = app.world().get::<Transform>(e).unwrap();
        assert!(
            (t.translation.y - want).abs() < 2e-3,
            "{e}: rests at y = {}, expected {want} ({:?}, {})",
            t.translation.y,
            t.rotation,
            app.world().get::<LinearVelocity>(e).unwrap().0
        );
        let v = app.world().get::<LinearVelocity>(e).unwrap().0;
        assert!(v.y.abs() < 1e-2, "{e}: vertical speed {v}");
    }
    // The box and the compound rest level (the box on a face, the compound on both parts).
    for e in [cuboid, compound] {
        let up = app.world().get::<Transform>(e).unwrap().rotation * Vec3::Y;
        assert!(up.y > 0.999, "{e}: tilted, up = {up}");
    }
    assert!(
        started
            .got
            .iter()
            .any(|m| (m.0 == on_mesh && m.1 == slab) || (m.0 == slab && m.1 == on_mesh)),
        "no CollisionStarted between the sphere and the mesh slab"
    );
}

/// Oracle: bad primitive parameters, a scale a primitive cannot take and a mesh inside a compound
/// are refused with a `ColliderError`; a scale it can take is applied to its dimensions (the
/// prepared volume is the closed form of the scaled shape).
#[test]
fn primitive_colliders_apply_scale_or_refuse() {
    let mut app = app(Backend::Cpu, None);
    let mut spawn = |c: Collider, scale: Vec3| {
        app.world_mut()
            .spawn((
                RigidBody::Static,
                c,
                Transform::from_xyz(0.0, 5.0, 0.0).with_scale(scale),
            ))
            .id()
    };
    let bad_radius = spawn(Collider::sphere(-1.0), Vec3::ONE);
    let squashed = spawn(Collider::sphere(0.5), Vec3::new(1.0, 2.0, 1.0));
    let stretched = spawn(
        Collider::cuboid(Vec3::splat(0.5)),
        Vec3::new(2.0, 1.0, -3.0),
    );
    let tall = spawn(Collider::cylinder(0.5, 0.2), Vec3::new(1.0, 4.0, 1.0));
    let mesh_part = spawn(
        Collider::compound([(Transform::default(), Collider::icosphere(0.5, 1))]),
        Vec3::ONE,
    );
    let big = spawn(
        Collider::compound([(Transform::from_xyz(1.0, 0.0, 0.0), Collider::sphere(0.5))]),
        Vec3::splat(2.0),
    );
    app.update();
    app.update();
    let world = app.world();
    for e in [bad_radius, squashed, mesh_part] {
        assert!(world.get::<ColliderError>(e).is_some(), "{e} not refused");
    }
    let volume = |e: Entity| world.get::<ColliderShape>(e).unwrap().volume();
    assert!(
        (volume(stretched) - 6.0).abs() < 1e-9,
        "{}",
        volume(stretched)
    );
    let pi = std::f64::consts::PI;
    assert!((volume(tall) - pi * 0.04 * 4.0).abs() < 1e-6);
    assert!((volume(big) - 4.0 / 3.0 * pi).abs() < 1e-9);
}

/// Bodies on child entities: the world pose is the ancestors' `Transform`s composed with the
/// body's own. A static body under a parent sits at the composed pose and follows its parent
/// when the parent moves; a dynamic body two levels down (rotated parent) falls in the world,
/// rests on the ground, and is written back relative to its parent (parent ∘ local = world).
#[test]
fn bodies_follow_their_parents() {
    let mut app = app(Backend::Cpu, None);
    let g = ground(&mut app);
    let holder = app
        .world_mut()
        .spawn(Transform::from_xyz(3.0, 0.0, 0.0).with_rotation(Quat::from_rotation_y(0.5)))
        .id();
    let platform = app
        .world_mut()
        .spawn((
            RigidBody::Static,
            Collider::cuboid_mesh(Vec3::new(0.5, 0.05, 0.5)),
            Transform::from_xyz(0.0, 1.0, 0.0),
            ChildOf(holder),
        ))
        .id();
    let grandparent = app
        .world_mut()
        .spawn(Transform::from_xyz(-1.5, 0.0, 0.0))
        .id();
    let parent = app
        .world_mut()
        .spawn((
            Transform::from_xyz(0.0, 0.5, 0.0).with_rotation(Quat::from_rotation_y(1.0)),
            ChildOf(grandparent),
        ))
        .id();
    let b = app
        .world_mut()
        .spawn((
            RigidBody::Dynamic,
            Collider::cuboid_mesh(Vec3::splat(0.2)),
            Transform::from_xyz(0.0, 0.5, 0.0),
            ChildOf(parent),
            NeverSleep,
        ))
        .id();
    until_joined(&mut app, &[g, platform, b]);
    for _ in 0..150 {
        app.update();
    }
    let pw = app.world().resource::<PhysicsWorld>();
    let at = pw
        .body(platform)
        .expect("the platform is simulated")
        .position;
    assert!(
        (at - bevy::math::DVec3::new(3.0, 1.0, 0.0)).length() < 1e-6,
        "platform at {at}"
    );
    let world = pw.body(b).expect("the box is simulated").position.as_vec3();
    assert!((world.y - 0.2).abs() < 0.01, "the box rests at {world}");
    assert!(
        (world.x + 1.5).abs() < 0.01 && world.z.abs() < 0.01,
        "the box fell straight down from (-1.5, 1, 0): {world}"
    );
    // Written back relative to its parent.
    let parent_world = app
        .world()
        .get::<Transform>(grandparent)
        .unwrap()
        .mul_transform(*app.world().get::<Transform>(parent).unwrap());
    let local = *app.world().get::<Transform>(b).unwrap();
    let composed = parent_world.mul_transform(local).translation;
    assert!(
        (composed - world).length() < 1e-4,
        "parent ∘ local = {composed}, world {world}"
    );
    assert!((local.translation.y - (world.y - 0.5)).abs() < 1e-4);
    // A moving parent carries its static child.
    app.world_mut()
        .get_mut::<Transform>(holder)
        .unwrap()
        .translation
        .x = 4.0;
    app.update();
    let at = app
        .world()
        .resource::<PhysicsWorld>()
        .body(platform)
        .unwrap()
        .position;
    assert!(
        (at - bevy::math::DVec3::new(4.0, 1.0, 0.0)).length() < 1e-6,
        "platform at {at} after its parent moved"
    );
}

/// Two children of `body` carrying `collider`, each at `x = −d` in its parent's frame: one
/// directly, one under an intermediate entity without a collider turned about y by 180° (so at
/// `x = +d` in the body's frame). Returns the two collider entities.
fn mirrored_children(app: &mut App, body: Entity, d: f32, collider: Collider) -> (Entity, Entity) {
    let direct = app
        .world_mut()
        .spawn((
            collider.clone(),
            Transform::from_xyz(-d, 0.0, 0.0),
            ChildOf(body),
        ))
        .id();
    let holder = app
        .world_mut()
        .spawn((
            Transform::from_rotation(Quat::from_rotation_y(std::f32::consts::PI)),
            ChildOf(body),
        ))
        .id();
    let turned = app
        .world_mut()
        .spawn((collider, Transform::from_xyz(-d, 0.0, 0.0), ChildOf(holder)))
        .id();
    (direct, turned)
}

/// Runs 150 updates; whether a contact message named `body` and `ground` as the pair.
fn settle_naming(app: &mut App, body: Entity, ground: Entity) -> bool {
    let mut contacts = Inbox::<ContactMessage>::new();
    for _ in 0..150 {
        app.update();
        contacts.drain(app);
    }
    contacts
        .got
        .iter()
        .any(|c| (c.a == body && c.b == ground) || (c.a == ground && c.b == body))
}

/// The diagonal of `i` against `want`, each within `rel` times `want[1]`.
fn assert_inertia_diagonal(i: bevy::math::DMat3, want: [f64; 3], rel: f64) {
    for k in 0..3 {
        assert!(
            (i.col(k)[k] - want[k]).abs() < rel * want[1],
            "inertia {i} against the diagonal {want:?}"
        );
    }
}

/// Colliders on child entities (one through an intermediate entity without a collider) become
/// one compound body of their rigid ancestor: its mass and inertia are the parts' sums (two
/// balls: `2ρ·4/3πr³`, each ball `2/5 m r²` about its centre plus `m d²` off the axis, computed
/// here), it falls and rests on the ground on the balls, and its contacts name the body entity.
#[test]
fn child_colliders_form_one_compound_body() {
    let mut app = app(Backend::Cpu, None);
    let g = ground(&mut app);
    // The f32 values the components carry, in f64.
    let (r, d) = (f64::from(0.1f32), f64::from(0.3f32));
    let body = app
        .world_mut()
        .spawn((
            RigidBody::Dynamic,
            Transform::from_xyz(0.0, 0.6, 0.0),
            NeverSleep,
        ))
        .id();
    // The second ball sits under an intermediate entity turned about y by 180°.
    mirrored_children(&mut app, body, d as f32, Collider::sphere(r as f32));
    until_joined(&mut app, &[g, body]);
    let named_body = settle_naming(&mut app, body, g);
    let pw = app.world().resource::<PhysicsWorld>();
    let b = pw.body(body).expect("the compound body is simulated");
    let ball = 1000.0 * 4.0 / 3.0 * std::f64::consts::PI * r.powi(3);
    assert!(
        (b.mass() - 2.0 * ball).abs() < 1e-9 * ball,
        "mass {} against {}",
        b.mass(),
        2.0 * ball
    );
    let i = b.inertia_local();
    let own = 0.4 * ball * r * r;
    let want = [
        2.0 * own,
        2.0 * (own + ball * d * d),
        2.0 * (own + ball * d * d),
    ];
    assert_inertia_diagonal(i, want, 1e-6);
    assert!(
        (b.position.y - r).abs() < 2e-3,
        "the dumbbell rests on its balls: centre at {}",
        b.position
    );
    assert!(
        named_body,
        "no contact message between the body and the ground"
    );
}

/// Mesh colliders on child entities join their rigid ancestor's body with its primitive ones:
/// a body with a mesh box child, a mesh box under a turned intermediate entity and a ball of
/// its own is one compound whose mass and inertia are the parts' sums (each box
/// `m (b² + c²) / 3` about its centre, the ball `2/5 m r²`, moved by `m d²`, computed here); it
/// falls on a half-space and rests level on the boxes' faces; its contacts name the body
/// entity; the mesh children share their prepared meshes (nothing is rebuilt). A half-space on
/// a child entity is refused with a warning and the body stays out; the rest of the world
/// steps.
#[test]
fn child_mesh_colliders_join_their_body() {
    let mut app = app(Backend::Cpu, None);
    let g = app
        .world_mut()
        .spawn((
            RigidBody::Static,
            Collider::half_space(Vec3::Y, Vec3::ZERO),
            Transform::default(),
        ))
        .id();
    // The f32 values the components carry, in f64.
    let (h, d, r) = (f64::from(0.1f32), f64::from(0.3f32), f64::from(0.05f32));
    let body = app
        .world_mut()
        .spawn((
            RigidBody::Dynamic,
            Collider::sphere(r as f32),
            Transform::from_xyz(0.0, 0.5, 0.0),
            NeverSleep,
        ))
        .id();
    let (left, right) = mirrored_children(
        &mut app,
        body,
        d as f32,
        Collider::cuboid_mesh(Vec3::splat(h as f32)),
    );
    until_joined(&mut app, &[body]);
    let named_body = settle_naming(&mut app, body, g);
    let pw = app.world().resource::<PhysicsWorld>();
    let b = pw.body(body).expect("the compound body is simulated");
    let cube = 1000.0 * 8.0 * h.powi(3);
    let ball = 1000.0 * 4.0 / 3.0 * std::f64::consts::PI * r.powi(3);
    assert!(
        (b.mass() - (2.0 * cube + ball)).abs() < 1e-6 * cube,
        "mass {} against {}",
        b.mass(),
        2.0 * cube + ball
    );
    let own_cube = cube * 2.0 * h * h / 3.0;
    let own_ball = 0.4 * ball * r * r;
    let want = [
        2.0 * own_cube + own_ball,
        2.0 * (own_cube + cube * d * d) + own_ball,
        2.0 * (own_cube + cube * d * d) + own_ball,
    ];
    let i = b.inertia_local();
    assert_inertia_diagonal(i, want, 1e-5);
    assert!(
        (b.position.y - h).abs() < 2e-3,
        "the body rests on its boxes: centre at {}",
        b.position
    );
    assert!(
        (b.orientation * bevy::math::DVec3::X).y.abs() < 2e-3,
        "not level: {}",
        b.orientation
    );
    assert!(
        named_body,
        "no contact message between the body and the ground"
    );
    // The children's prepared meshes are the ones in the body (shared, not rebuilt).
    let child_meshes: Vec<_> = [left, right]
        .iter()
        .map(|&e| {
            app.world()
                .get::<ColliderShape>(e)
                .and_then(|s| s.mesh().cloned())
                .expect("the child's mesh is prepared")
        })
        .collect();
    let shape = pw
        .collider(body)
        .expect("the body has a collider")
        .shape
        .clone();
    let interfere_dynamics::Shape::Compound(c) = shape else {
        panic!("not a compound: {shape:?}");
    };
    assert_eq!(c.meshes().len(), 2);
    for child in &child_meshes {
        assert!(
            c.meshes().iter().any(|m| Arc::ptr_eq(&m.shape, child)),
            "a child's prepared mesh is not in the body"
        );
    }

    // A half-space on a child entity is refused; the rest of the world steps.
    let refused = app
        .world_mut()
        .spawn((RigidBody::Dynamic, Transform::from_xyz(3.0, 1.0, 0.0)))
        .id();
    app.world_mut().spawn((
        Collider::half_space(Vec3::Y, Vec3::ZERO),
        Transform::default(),
        ChildOf(refused),
    ));
    let other = falling_box(&mut app, 1.5);
    until_joined(&mut app, &[other]);
    for _ in 0..30 {
        app.update();
    }
    let pw = app.world().resource::<PhysicsWorld>();
    assert!(
        pw.body(refused).is_none(),
        "the body joined with a half-space child"
    );
    assert!(pw.body(other).is_some_and(|b| b.position.y < 1.4));
}

/// Joints as components (issue 30): a pendulum on a `RevoluteJoint` keeps its arm and reports the
/// force holding it; a new motor set on the component drives it (the joint changes in place);
/// a `FixedJoint` with a breaking force too small for its load breaks once (`JointBroken`); a
/// despawned joint entity frees its body; a joint on a despawned body goes with it.
#[test]
fn joints_connect_bodies_and_follow_their_components() {
    let mut app = app(Backend::Cpu, None);
    let post = app
        .world_mut()
        .spawn((
            RigidBody::Static,
            Collider::cuboid(Vec3::splat(0.05)),
            Transform::from_xyz(0.0, 2.0, 0.0),
        ))
        .id();
    let bob = app
        .world_mut()
        .spawn((
            RigidBody::Dynamic,
            Collider::sphere(0.1),
            Transform::from_xyz(1.0, 2.0, 0.0),
        ))
        .id();
    let hinge = app
        .world_mut()
        .spawn(
            RevoluteJoint::new(post, bob)
                .with_local_anchor_2(Vec3::new(-1.0, 0.0, 0.0))
                .with_local_axis(Vec3::Z),
        )
        .id();
    let arm = |app: &App| {
        let p = app.world().get::<Transform>(bob).unwrap().translation;
        (p - Vec3::new(0.0, 2.0, 0.0)).length()
    };
    for _ in 0..64 {
        app.update();
        assert!((arm(&app) - 1.0).abs() < 1e-3, "arm {}", arm(&app));
    }
    let forces = *app.world().get::<JointForces>(hinge).unwrap();
    assert!(forces.force.length() > 1.0 && !forces.broken, "{forces:?}");
    // A motor spinning the pendulum round at 3 rad/s.
    app.world_mut()
        .get_mut::<RevoluteJoint>(hinge)
        .unwrap()
        .motor = Some(JointMotor::velocity(3.0, 1000.0));
    for _ in 0..32 {
        app.update();
    }
    let w = app.world().get::<AngularVelocity>(bob).unwrap().z;
    assert!((w - 3.0).abs() < 0.05, "motor speed {w}");
    assert!((arm(&app) - 1.0).abs() < 1e-3);
    // Without the joint the bob flies off.
    app.world_mut().entity_mut(hinge).despawn();
    for _ in 0..32 {
        app.update();
    }
    assert!(
        arm(&app) > 1.2,
        "arm {} after the joint was removed",
        arm(&app)
    );
    assert_eq!(
        app.world()
            .resource::<PhysicsWorld>()
            .simulation()
            .joints()
            .count(),
        0
    );

    // A weak fixed joint breaks under its load, once.
    let weak = app
        .world_mut()
        .spawn(
            FixedJoint::new(post, bob)
                .with_local_anchor_2(Vec3::ZERO)
                .with_break_force(1.0),
        )
        .id();
    let mut cursor = app.world().resource::<Messages<JointBroken>>().get_cursor();
    let mut broke = Vec::new();
    for _ in 0..8 {
        app.update();
        let messages = app.world().resource::<Messages<JointBroken>>();
        broke.extend(cursor.read(messages).map(|m| m.0));
    }
    assert_eq!(broke, vec![weak]);
    assert!(app.world().get::<JointForces>(weak).unwrap().broken);
    // A joint whose body is despawned goes with it.
    app.world_mut().entity_mut(bob).despawn();
    app.update();
    assert_eq!(
        app.world()
            .resource::<PhysicsWorld>()
            .simulation()
            .joints()
            .count(),
        0
    );
}

/// A contact hook set on the `PhysicsWorld` (issue 30): a static slab entity made a conveyor
/// belt carries a box resting on it at the belt's speed; the hook finds the belt by entity.
#[test]
fn a_contact_hook_makes_a_conveyor_belt() {
    let mut app = app(Backend::Cpu, None);
    let belt = ground(&mut app);
    let crate_ = app
        .world_mut()
        .spawn((
            RigidBody::Dynamic,
            Collider::cuboid_mesh(Vec3::splat(0.1)),
            Transform::from_xyz(0.0, 0.1, 0.0),
        ))
        .id();
    app.world_mut()
        .resource_mut::<PhysicsWorld>()
        .set_contact_hook(Some(Box::new(move |pair: &mut HookedPair<'_>| {
            if let Some(h) = pair.with_user(belt.to_bits()) {
                pair.set_surface_velocity(h, bevy::math::DVec3::new(0.5, 0.0, 0.0));
            }
            true
        })));
    // Both mesh colliders are prepared on the task pool: the crate must not fall before the
    // belt has joined.
    until_joined(&mut app, &[belt, crate_]);
    for _ in 0..64 {
        app.update();
    }
    let v = app.world().get::<LinearVelocity>(crate_).unwrap().0;
    assert!((v.x - 0.5).abs() < 0.01 && v.z.abs() < 0.01, "box at {v}");
}

/// The character controller as components (issue 30): a `Character` on a kinematic capsule walks
/// along +X (translation set each fixed step, falling while off the ground), climbs onto a
/// 0.15 m step (its `CharacterOutput` names the step as ground, the `Transform` follows the
/// step's top), comes back down onto the floor and pushes a crate along; a character with
/// `push_force` 0 is stopped by the crate instead.
#[test]
fn a_character_walks_up_a_step_and_pushes_a_crate() {
    for push in [800.0, 0.0] {
        let mut app = app(Backend::Cpu, None);
        let floor = app
            .world_mut()
            .spawn((
                RigidBody::Static,
                Collider::cuboid_mesh(Vec3::new(8.0, 0.25, 4.0)),
                Transform::from_xyz(0.0, -0.25, 0.0),
            ))
            .id();
        let step = app
            .world_mut()
            .spawn((
                RigidBody::Static,
                Collider::cuboid(Vec3::new(0.5, 0.075, 1.5)),
                Transform::from_xyz(1.2, 0.075, 0.0),
            ))
            .id();
        let crate_box = app
            .world_mut()
            .spawn((
                RigidBody::Dynamic,
                Collider::cuboid(Vec3::splat(0.2)),
                Density(300.0),
                Transform::from_xyz(2.6, 0.2, 0.0),
            ))
            .id();
        let mut character = Character::default();
        character.controller.push_force = push;
        let skin = character.controller.skin as f32;
        let standing =
            (character.controller.half_length + character.controller.radius) as f32 + skin;
        let walker = app
            .world_mut()
            .spawn((
                RigidBody::Kinematic,
                character.collider(),
                character,
                Transform::from_xyz(-1.2, 1.2, 0.0),
            ))
            .id();
        // The floor's mesh collider is prepared on the task pool: the character must not walk
        // (and fall) before it has joined. Under load it once joined after the character had
        // fallen past its top ("0 frames on the step").
        until_joined(&mut app, &[floor, step, crate_box, walker]);
        let dt = (1.0 / HZ) as f32;
        let mut fall = 0.0f32;
        let mut on_step = 0;
        for _ in 0..(6 * HZ as usize) {
            let grounded = app.world().get::<CharacterOutput>(walker).unwrap().grounded;
            fall = if grounded { 0.0 } else { fall - 9.81 * dt };
            app.world_mut()
                .get_mut::<Character>(walker)
                .unwrap()
                .translation = Some(Vec3::new(1.0, fall, 0.0) * dt);
            app.update();
            let out = app.world().get::<CharacterOutput>(walker).unwrap().clone();
            let p = app.world().get::<Transform>(walker).unwrap().translation;
            if (p.x - 1.2).abs() < 0.15 && out.grounded {
                assert_eq!(out.ground.map(|g| g.entity), Some(step), "{out:?}");
                assert!((p.y - (0.15 + standing)).abs() < 1e-4, "on the step at {p}");
                on_step += 1;
            }
        }
        let p = app.world().get::<Transform>(walker).unwrap().translation;
        let crate_x = app
            .world()
            .get::<Transform>(crate_box)
            .unwrap()
            .translation
            .x;
        if push > 0.0 {
            assert!(on_step > 5, "{on_step} frames on the step");
            assert!(
                crate_x > 3.0,
                "crate pushed to {crate_x} (character at {p}) {:?} {crate_box}",
                app.world().get::<CharacterOutput>(walker)
            );
            assert!((p.y - standing).abs() < 1e-3, "back on the floor: {p}");
        } else {
            assert!((crate_x - 2.6).abs() < 1e-3, "crate moved to {crate_x}");
            assert!(p.x < 2.6 - 0.2 - 0.3, "walked into the crate: {p}");
        }
    }
}

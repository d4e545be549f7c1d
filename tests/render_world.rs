//! The GPU backend inside Bevy's render world: a headless app with `DefaultPlugins` (no window,
//! lavapipe in CI) runs [`Backend::Gpu`] on Bevy's render device, its jobs pumped by a system in
//! the render world, and gets answers back (GPU volumes, a measured latency) while a box falls
//! onto a static one and comes to rest. Under CI=true a missing adapter fails the test.

use bevy::prelude::*;
use bevy::render::RenderPlugin;
use bevy::time::TimeUpdateStrategy;
use bevy::window::ExitCondition;
use bevy::winit::WinitPlugin;
use bevy_interfere::prelude::*;
use bevy_interfere::{GpuSupport, PhysicsWorld};
use std::time::Duration;

#[test]
fn gpu_backend_answers_from_the_render_world() {
    if interfere_gpu::testing::gpu_or_skip("gpu_backend_answers_from_the_render_world").is_none() {
        return;
    }
    let mut app = App::new();
    app.add_plugins(
        DefaultPlugins
            .set(WindowPlugin {
                primary_window: None,
                exit_condition: ExitCondition::DontExit,
                ..default()
            })
            .set(RenderPlugin {
                synchronous_pipeline_compilation: true,
                ..default()
            })
            .disable::<WinitPlugin>(),
    )
    .insert_resource(Time::<Fixed>::from_hz(64.0))
    .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
        1.0 / 64.0,
    )))
    .insert_resource(Backend::Gpu)
    .add_plugins(InterferePlugins);
    app.finish();
    app.cleanup();
    let support = app.world().resource::<GpuSupport>().clone();
    assert!(
        support.shared_with_renderer && support.unavailable.is_none(),
        "{support:?}"
    );
    app.world_mut().spawn((
        RigidBody::Static,
        Collider::cuboid_mesh(Vec3::new(2.0, 0.25, 2.0)),
        Transform::from_xyz(0.0, -0.25, 0.0),
    ));
    let b = app
        .world_mut()
        .spawn((
            RigidBody::Dynamic,
            Collider::cuboid_mesh(Vec3::splat(0.25)),
            Transform::from_xyz(0.0, 0.4, 0.0),
            NeverSleep,
        ))
        .id();
    let (mut answered, mut gpu_volume, mut latency) = (0, 0, Vec::new());
    for _ in 0..400 {
        app.update();
        // Paced like frames: the render world gets the time a game's frame would give it.
        std::thread::sleep(Duration::from_millis(10));
        let stats = app.world().resource::<PhysicsStats>();
        if let Some(age) = stats.step.latency_steps {
            answered += 1;
            latency.push(age);
        }
        gpu_volume += usize::from(stats.step.volume_backend == "gpu-uniform");
        if answered >= 10 {
            break;
        }
    }
    assert!(
        answered >= 10,
        "{answered} steps used a render-world answer ({gpu_volume} with the GPU stage)"
    );
    assert_eq!(app.world().resource::<PhysicsStats>().backend, Backend::Gpu);
    assert!(latency.iter().all(|&a| a >= 1), "latencies {latency:?}");
    let y = app
        .world()
        .resource::<PhysicsWorld>()
        .body(b)
        .unwrap()
        .position
        .y;
    assert!(y > 0.15 && y < 0.45, "the box is at y = {y}");
}

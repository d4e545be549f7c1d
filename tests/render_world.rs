//! The GPU backend inside Bevy's render world: a headless app with `DefaultPlugins` (no window,
//! lavapipe in CI) runs [`Backend::Gpu`] on Bevy's render device, its jobs pumped by a system in
//! the render world, and gets answers back (GPU volumes, a measured latency) while a box falls
//! onto a static one and comes to rest. The headless examples with criteria (`playground`,
//! `machines`, `character`) run here too, short. Under CI=true a missing adapter fails the tests.

use bevy::prelude::*;
use bevy::render::RenderPlugin;
use bevy::time::TimeUpdateStrategy;
use bevy::window::ExitCondition;
use bevy::winit::WinitPlugin;
use bevy_interfere::prelude::*;
use bevy_interfere::{GpuJobDevice, GpuSettings, GpuSupport, PhysicsWorld};
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
    // Both bodies join in the step after they are spawned (with background preparation the
    // floor could join after the box had fallen past it on a loaded machine).
    .insert_resource(ColliderPreparation::Blocking)
    // Lavapipe is a software adapter, on which `Auto` gives the jobs a device of their own.
    .insert_resource(GpuSettings {
        job_device: GpuJobDevice::RenderWorld,
        ..default()
    })
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

/// Runs example `name` headless for `frames` frames (the binary `cargo test` built beside the
/// test binaries) and returns its JSON report, after checking that it exited zero and met its
/// criteria.
fn run_example(name: &str, frames: u32, extra: &[&str]) -> serde_json::Value {
    let exe = std::env::current_exe().expect("the test binary's path");
    // target/<profile>/deps/render_world-… → target/<profile>/examples/<name>
    let example = exe
        .parent()
        .and_then(|deps| deps.parent())
        .map(|profile| profile.join("examples").join(name))
        .expect("the test binary sits in target/<profile>/deps");
    assert!(
        example.exists(),
        "{} is missing: `cargo test --workspace` builds it (or `cargo build --example {name}`)",
        example.display()
    );
    let report = std::env::temp_dir().join(format!("interfere_{name}_{}.json", std::process::id()));
    let out = std::process::Command::new(&example)
        .args(["--headless", "--frames", &frames.to_string(), "--report"])
        .arg(&report)
        .args(extra)
        .output()
        .expect("the example runs");
    let text = std::fs::read_to_string(&report).unwrap_or_default();
    let _ = std::fs::remove_file(&report);
    assert!(
        out.status.success(),
        "{name} exited with {}: {}\n{text}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .rev()
            .take(5)
            .collect::<Vec<_>>()
            .join("\n")
    );
    let value: serde_json::Value = serde_json::from_str(&text).expect("a JSON report");
    assert_eq!(
        value["all_criteria_met"],
        serde_json::Value::Bool(true),
        "{text}"
    );
    value
}

/// `examples/playground.rs` headless: the forces, layers, sensor and spatial-query checks of its
/// report all hold (the example exits non-zero otherwise).
#[test]
fn playground_example_meets_its_criteria_headless() {
    if interfere_gpu::testing::gpu_or_skip("playground_example_meets_its_criteria_headless")
        .is_none()
    {
        return;
    }
    let value = run_example("playground", 120, &[]);
    let criteria = value["criteria"].as_object().expect("criteria");
    assert_eq!(criteria.len(), 5, "{value}");
}

/// `examples/machines.rs` headless, short (6 s of its 60): the door, car, crane, joint,
/// conveyor-belt and one-way-platform criteria hold; the ragdoll's overlap and rest are judged
/// only on longer runs (null here).
#[test]
fn machines_example_meets_its_criteria_headless() {
    if interfere_gpu::testing::gpu_or_skip("machines_example_meets_its_criteria_headless").is_none()
    {
        return;
    }
    let value = run_example("machines", 360, &[]);
    let criteria = value["criteria"].as_object().expect("criteria");
    let judged = criteria.values().filter(|v| !v.is_null()).count();
    assert_eq!(judged, 9, "{value}");
}

/// `examples/character.rs` headless, short (12 s of its 20) on the generated hill (CI has no
/// benchmark meshes): the flat-floor, staircase, ramp, overlap and hill criteria hold; the crate
/// and the end are judged on longer runs.
#[test]
fn character_example_meets_its_criteria_headless() {
    if interfere_gpu::testing::gpu_or_skip("character_example_meets_its_criteria_headless")
        .is_none()
    {
        return;
    }
    let value = run_example("character", 720, &["--generated-hill"]);
    let criteria = value["criteria"].as_object().expect("criteria");
    for judged in [
        "full_speed_on_the_flat_floor",
        "straight_and_level_on_the_flat_floor",
        "stairs_on_the_analytic_path",
        "reached_the_top_of_the_stairs",
        "on_the_ground_down_the_ramp",
        "never_inside_a_solid",
        "crossed_the_hill",
        "finite",
    ] {
        assert_eq!(
            criteria[judged],
            serde_json::Value::Bool(true),
            "{judged}: {value}"
        );
    }
}

//! Ruina's wheels (Wang–Faure–Pai 2012, Fig. 1b): two hexagonal wheels that differ only in their
//! faces, slightly convex on one and slightly concave on the other (a sagitta of ±0.5 mm on a
//! 10 cm wheel, barely visible), get the same rolling push on a static slab. The exact volume
//! contact (the default) resolves the curvature with nothing to tune; with `--volume uniform` the
//! ray spacing must be below the sagitta's scale (`--spacing`, default 1 mm). The convex wheel
//! rolls farther: it loses less energy at each corner.
//!
//! ```text
//! cargo run --release --example ruina_wheels -- [--volume exact|uniform] [--spacing METRES]
//!     [--speed M_PER_S]
//!     [--sagitta METRES] [--backend cpu|gpu|gpu-blocking]
//!     [--headless --frames N --screenshot out.png --report out.json]
//! ```
//!
//! The report gives each wheel's roll distance (centre travel until it rests, or until the last
//! frame), whether it came to rest (below 2 mm/s and 0.02 rad/s for a quarter second) and is
//! still at rest at the end, and the convex/concave ratio. Criteria: the convex wheel rolls more
//! than 1.1 times as far, and both wheels come to rest and stay at rest.

#[path = "support/mod.rs"]
mod support;

use bevy::prelude::*;
use bevy_interfere::mesh_convert::{Shading, bevy_mesh_from_trimesh};
use bevy_interfere::prelude::*;
use interfere_geometry::shapes::polygon_wheel;
use support::DemoArgs;

const RADIUS: f32 = 0.1;
const SIDES: u32 = 6;
const HALF_WIDTH: f32 = 0.03;
const HZ: f64 = 240.0;

#[derive(Component)]
struct Wheel {
    name: &'static str,
    start_x: f32,
    /// Seconds with speed below the rest threshold.
    calm: f32,
    rested_at: Option<(f32, f32)>,
}

#[derive(Resource, Clone, Copy)]
struct Launch {
    speed: f32,
    sagitta: f32,
}

fn setup(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
    launch: Res<Launch>,
) {
    support::spawn_static_cuboid(
        &mut commands,
        &mut meshes,
        "slab",
        Vec3::new(3.0, 0.25, 0.4),
        materials.add(Color::srgb(0.5, 0.52, 0.55)),
        Some(0.8),
        Transform::from_xyz(2.5, -0.25, 0.0),
    );
    for (name, sagitta, z, colour) in [
        ("convex", launch.sagitta, -0.15, Color::srgb(0.85, 0.4, 0.2)),
        (
            "concave",
            -launch.sagitta,
            0.15,
            Color::srgb(0.2, 0.5, 0.85),
        ),
    ] {
        let wheel = polygon_wheel(RADIUS, SIDES, HALF_WIDTH, sagitta, 16).expect("checked in main");
        // A face down (the face between the corners at 240° and 300° is horizontal), 0.2 mm up.
        let lowest = wheel
            .vertices()
            .iter()
            .map(|v| v.y)
            .fold(f32::INFINITY, f32::min);
        commands.spawn((
            Name::new(format!("{name} wheel")),
            Wheel {
                name,
                start_x: 0.0,
                calm: 0.0,
                rested_at: None,
            },
            RigidBody::Dynamic,
            Density(800.0),
            Friction::new(0.8),
            NeverSleep,
            Mesh3d(meshes.add(bevy_mesh_from_trimesh(&wheel, Shading::Flat))),
            MeshMaterial3d(materials.add(colour)),
            Collider::solid(wheel),
            Transform::from_xyz(0.0, -lowest + 2e-4, z),
            LinearVelocity(Vec3::new(launch.speed, 0.0, 0.0)),
            AngularVelocity(Vec3::new(0.0, 0.0, -launch.speed / RADIUS)),
        ));
    }
    support::spawn_camera_and_lights(
        &mut commands,
        Vec3::new(0.45, 0.45, 1.4),
        Vec3::new(0.45, 0.05, 0.0),
        Vec3::Y,
    );
}

/// Whether a wheel is at rest: below 2 mm/s and 0.02 rad/s.
fn at_rest(v: &LinearVelocity, a: &AngularVelocity) -> bool {
    v.0.length() < 2e-3 && a.0.length() < 2e-2
}

/// Notes when each wheel comes to rest (speed below thresholds for a quarter second).
fn watch(
    time: Res<Time<Fixed>>,
    world: Res<bevy_interfere::PhysicsWorld>,
    mut wheels: Query<(&mut Wheel, &Transform, &LinearVelocity, &AngularVelocity)>,
) {
    let dt = time.timestep().as_secs_f32();
    for (mut w, t, v, a) in &mut wheels {
        if w.rested_at.is_some() {
            continue;
        }
        if at_rest(v, a) {
            w.calm += dt;
            if w.calm > 0.25 {
                w.rested_at = Some((world.time() as f32, t.translation.x - w.start_x));
            }
        } else {
            w.calm = 0.0;
        }
    }
}

fn main() {
    let args = DemoArgs::parse(
        1440,
        " [--volume exact|uniform] [--spacing METRES] [--speed M_PER_S] [--sagitta METRES] [--backend cpu|gpu|gpu-blocking]",
    );
    let (volume, spacing) = args.volume_method(1e-3);
    let launch = Launch {
        speed: args.parsed("--speed", 0.6),
        sagitta: args.parsed("--sagitta", 5e-4),
    };
    // The wheels are built from --sagitta: refuse a bad value here, with its reason.
    for sagitta in [launch.sagitta, -launch.sagitta] {
        support::or_exit(
            "--sagitta",
            polygon_wheel(RADIUS, SIDES, HALF_WIDTH, sagitta, 16),
        );
    }
    let backend = args.backend();
    let mut app = support::base_app(&args, "Interfere: Ruina wheels", HZ);
    app.insert_resource(backend)
        .insert_resource(launch)
        .insert_resource(PhysicsSettings {
            volume,
            substeps: 2,
            ..default()
        })
        .insert_resource(bevy_interfere::GpuSettings {
            cinder_resolution: 512,
            ..default()
        })
        .init_resource::<support::StageLog>()
        .add_plugins(InterferePlugins)
        .add_systems(Startup, setup)
        .add_systems(FixedLast, (watch, support::log_stages));
    support::run(app, &args, |world| {
        let time = world.resource::<bevy_interfere::PhysicsWorld>().time();
        let mut q = world.query::<(&Wheel, &Transform, &LinearVelocity, &AngularVelocity)>();
        let mut out = serde_json::Map::new();
        let mut distance = std::collections::HashMap::new();
        let mut all_resting = true;
        for (w, t, v, a) in q.iter(world) {
            let (rested, d) = match w.rested_at {
                Some((_, d)) => (true, d),
                None => (false, t.translation.x - w.start_x),
            };
            // Still at rest at the end: the same test as the watch's.
            let still = at_rest(v, a);
            all_resting &= rested && still;
            distance.insert(w.name, d);
            out.insert(
                w.name.into(),
                serde_json::json!({
                    "roll_distance_m": d,
                    "came_to_rest": rested,
                    "rest_time_s": w.rested_at.map(|r| r.0),
                    "at_rest_at_the_end": still,
                    "final_speed_m_per_s": v.0.length(),
                    "final_angular_speed_rad_per_s": a.0.length(),
                    "final_centre_height_m": t.translation.y,
                }),
            );
        }
        let ratio = distance["convex"] / distance["concave"];
        out.insert("scene".into(), "ruina_wheels".into());
        out.insert(
            "backend".into(),
            world.resource::<support::StageLog>().backend_report(),
        );
        out.insert(
            "physics_ms".into(),
            world.resource::<support::StageLog>().timing_report(),
        );
        out.insert("volume".into(), DemoArgs::volume_label(spacing, "m").into());
        out.insert("sagitta_m".into(), launch.sagitta.into());
        out.insert("launch_speed_m_per_s".into(), launch.speed.into());
        out.insert("simulated_s".into(), time.into());
        out.insert("convex_over_concave".into(), ratio.into());
        out.insert("convex_rolls_farther".into(), (ratio > 1.1).into());
        out.insert("both_at_rest".into(), all_resting.into());
        out.insert(
            "all_criteria_met".into(),
            (ratio > 1.1 && all_resting).into(),
        );
        serde_json::Value::Object(out)
    });
}

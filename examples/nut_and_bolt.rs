//! Nut and bolt: a procedural M10×1.5 bolt and a matching nut (static scene for now; the physics
//! arrives with the plugin).
//!
//! `cargo run --release --example nut_and_bolt -- --headless --screenshot out.png --report out.json`

#[path = "support/mod.rs"]
mod support;

use bevy::prelude::*;
use bevy_interfere::mesh_convert::{Shading, bevy_mesh_from_trimesh};
use interfere_geometry::threads::{ThreadSpec, bolt, nut};
use support::DemoArgs;

#[derive(Resource)]
struct SceneStats {
    bolt_triangles: usize,
    nut_triangles: usize,
    bolt_volume: f64,
    nut_volume: f64,
}

fn main() {
    let args = DemoArgs::parse(5, " [--columns N]");
    let spec = ThreadSpec {
        columns: args.parsed("--columns", 64),
        ..ThreadSpec::M10
    };
    let bolt = bolt(&spec, 24.0);
    let nut = nut(&spec, 8.0);
    let mut app = support::base_app(&args, "Interfere: nut and bolt", 60.0);
    app.insert_resource(SceneStats {
        bolt_triangles: bolt.triangle_count(),
        nut_triangles: nut.triangle_count(),
        bolt_volume: bolt.volume(),
        nut_volume: nut.volume(),
    });
    let bolt_mesh = bevy_mesh_from_trimesh(bolt.mesh(), Shading::Flat);
    let nut_mesh = bevy_mesh_from_trimesh(nut.mesh(), Shading::Flat);
    app.add_systems(
        Startup,
        move |mut commands: Commands,
              mut meshes: ResMut<Assets<Mesh>>,
              mut materials: ResMut<Assets<StandardMaterial>>| {
            support::spawn_camera_and_lights(
                &mut commands,
                Vec3::new(38.0, -30.0, 26.0),
                Vec3::new(0.0, 0.0, 14.0),
                Vec3::Z,
            );
            commands.spawn((
                Mesh3d(meshes.add(bolt_mesh.clone())),
                MeshMaterial3d(materials.add(StandardMaterial {
                    base_color: Color::srgb(0.72, 0.74, 0.78),
                    metallic: 0.6,
                    perceptual_roughness: 0.35,
                    ..default()
                })),
                Transform::IDENTITY,
            ));
            commands.spawn((
                Mesh3d(meshes.add(nut_mesh.clone())),
                MeshMaterial3d(materials.add(StandardMaterial {
                    base_color: Color::srgb(0.85, 0.62, 0.25),
                    metallic: 0.5,
                    perceptual_roughness: 0.4,
                    ..default()
                })),
                Transform::from_xyz(0.0, 0.0, 12.0),
            ));
        },
    );
    support::run(app, &args, |world| {
        let stats = world.resource::<SceneStats>();
        serde_json::json!({
            "scene": "nut_and_bolt",
            "bolt_triangles": stats.bolt_triangles,
            "nut_triangles": stats.nut_triangles,
            "bolt_volume_mm3": stats.bolt_volume,
            "nut_volume_mm3": stats.nut_volume,
        })
    });
}

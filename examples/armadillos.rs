//! Armadillos (issue 8, optional scene): three 100k-triangle Stanford armadillos (the benchmark
//! mesh in `../shared/meshes/armadillo.obj`, not shipped with the project) fall onto a static
//! slab and onto each other, simulated by the Interfere plugins with the exact mesh–mesh
//! narrow phase and volume contacts on the full meshes, no simplification or decomposition.
//!
//! ```text
//! cargo run --release --example armadillos -- [--mesh PATH] [--count N] [--spacing METRES]
//!     [--backend cpu|gpu|gpu-blocking]
//!     [--headless --frames N --screenshot out.png --report out.json]
//! ```
//!
//! The mesh (about 1 m tall, used at that size) is read and validated as a closed solid; a
//! missing file or a mesh that is not closed ends the program with the reason (exit code 2). The
//! first armadillo stands on the slab, the others are dropped tilted from above it, offset so
//! that they strike it and each other.
//!
//! The report gives the per-step physics time (mean, median, 95th percentile, maximum) and its
//! stages (narrow phase, volume, solver, GPU end to end), the first step apart (the bodies
//! enter the simulation in it), the triangle count, the pair counts, the rays and the largest
//! intersection volume between two armadillos, the collision messages, and the sanity checks:
//! every armadillo touched another one (`armadillos_collided`), no vertex sank more than 5 cm
//! into the slab (`no_tunnelling`).

#[path = "support/mod.rs"]
mod support;

use bevy::platform::collections::HashSet;
use bevy::prelude::*;
use bevy_interfere::mesh_convert::{Shading, bevy_mesh_from_trimesh};
use bevy_interfere::prelude::*;
use interfere_geometry::{MeshOptions, Solid, load_mesh};
use support::DemoArgs;

const SLAB_TOP: f32 = 0.0;
const HZ: f64 = 60.0;
/// Deepest allowed vertex below the slab top (m).
const MAX_SINK: f32 = 0.05;

/// Marks the armadillos with their index.
#[derive(Component)]
struct Armadillo(usize);

#[derive(Resource)]
struct Scene {
    /// Shared by every armadillo: prepared once.
    solid: std::sync::Arc<Solid>,
    count: usize,
}

/// Contacts between armadillos, for the report (the stage timings are in
/// [`support::StageLog`]).
#[derive(Resource, Default)]
struct ArmadilloLog {
    max_armadillo_volume: f32,
    armadillo_contacts: usize,
    touched: HashSet<usize>,
}

fn setup(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
    scene: Res<Scene>,
) {
    support::spawn_static_cuboid(
        &mut commands,
        &mut meshes,
        "slab",
        Vec3::new(2.0, 0.25, 2.0),
        materials.add(Color::srgb(0.45, 0.47, 0.5)),
        Some(0.6),
        Transform::from_xyz(0.0, SLAB_TOP - 0.25, 0.0),
    );
    let mesh = meshes.add(bevy_mesh_from_trimesh(&scene.solid, Shading::Smooth));
    let colours = [
        Color::srgb(0.8, 0.55, 0.3),
        Color::srgb(0.35, 0.55, 0.8),
        Color::srgb(0.45, 0.7, 0.4),
        Color::srgb(0.75, 0.65, 0.3),
    ];
    let lowest = scene
        .solid
        .vertices()
        .iter()
        .map(|v| v.y)
        .fold(f32::INFINITY, f32::min);
    for i in 0..scene.count {
        // The first stands 2 mm above the slab; each next one falls from 1.1 m higher, lying on
        // its side, turned and offset so that it lands across the ones below.
        let f = i as f32;
        let rotation = if i == 0 {
            Quat::IDENTITY
        } else {
            Quat::from_rotation_y(1.1 * f) * Quat::from_rotation_z(std::f32::consts::FRAC_PI_2)
        };
        let position = if i == 0 {
            Vec3::new(0.0, SLAB_TOP + 0.002 - lowest, 0.0)
        } else {
            Vec3::new(
                0.12 * (1.7 * f).cos(),
                0.4 + 1.1 * f,
                0.12 * (1.7 * f).sin(),
            )
        };
        commands.spawn((
            Name::new(format!("armadillo {i}")),
            Armadillo(i),
            RigidBody::Dynamic,
            Mesh3d(mesh.clone()),
            MeshMaterial3d(materials.add(colours[i % colours.len()])),
            Collider::shared_solid(scene.solid.clone()),
            Friction::new(0.6),
            Transform::from_translation(position).with_rotation(rotation),
        ));
    }
    support::spawn_camera_and_lights(
        &mut commands,
        Vec3::new(2.2, 1.7, 2.8),
        Vec3::new(0.0, 0.45, 0.0),
        Vec3::Y,
    );
}

fn log_armadillo_contacts(
    mut log: ResMut<ArmadilloLog>,
    mut volumes: MessageReader<IntersectionVolumeMessage>,
    armadillos: Query<&Armadillo>,
) {
    for m in volumes.read() {
        if let (Ok(a), Ok(b)) = (armadillos.get(m.a), armadillos.get(m.b)) {
            log.armadillo_contacts += 1;
            log.max_armadillo_volume = log.max_armadillo_volume.max(m.volume);
            log.touched.insert(a.0);
            log.touched.insert(b.0);
        }
    }
}

/// The armadillo mesh as a closed solid, or the reason it cannot be used.
fn load(path: &std::path::Path) -> Result<Solid, String> {
    if !path.exists() {
        return Err(format!(
            "{} not found: this demo needs the benchmark meshes in ../shared/meshes \
             (or --mesh PATH to a closed OBJ/STL mesh)",
            path.display()
        ));
    }
    let mesh = load_mesh(path, &MeshOptions::default()).map_err(|e| e.to_string())?;
    Solid::new(mesh).map_err(|e| format!("{}: {e}", path.display()))
}

fn main() {
    let args = DemoArgs::parse(
        120,
        " [--mesh PATH] [--count N] [--spacing METRES] [--backend cpu|gpu|gpu-blocking]",
    );
    let default_mesh = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/meshes/armadillo.obj"
    );
    let path = std::path::PathBuf::from(args.value("--mesh").unwrap_or(default_mesh));
    let solid = match load(&path) {
        Ok(s) => s,
        Err(why) => {
            eprintln!("armadillos: {why}");
            std::process::exit(2);
        }
    };
    let backend = args.backend();
    let count = args.parsed("--count", 3usize).clamp(1, 8);
    let spacing: f32 = args.parsed("--spacing", 0.01);
    let triangles = solid.triangles().len();
    let mut app = support::base_app(&args, "Interfere: armadillos", HZ);
    app.insert_resource(backend)
        .insert_resource(Scene {
            solid: std::sync::Arc::new(solid),
            count,
        })
        .init_resource::<support::StageLog>()
        .init_resource::<ArmadilloLog>()
        .add_plugins(InterferePlugins)
        .add_systems(Startup, setup)
        .add_systems(FixedLast, (support::log_stages, log_armadillo_contacts));
    {
        let mut settings = app.world_mut().resource_mut::<PhysicsSettings>();
        settings.volume = VolumeMethod::Uniform {
            spacing: MeshSpacing::Absolute(f64::from(spacing)),
        };
    }
    support::run(app, &args, move |world| {
        let mut q = world.query_filtered::<&Transform, With<Armadillo>>();
        let heights: Vec<f32> = q.iter(world).map(|t| t.translation.y).collect();
        let lowest = support::lowest_vertex::<Armadillo>(world);
        let contacts = world.resource::<ArmadilloLog>();
        let collided = contacts.touched.len() == count && count > 1;
        let (armadillo_contacts, max_volume) =
            (contacts.armadillo_contacts, contacts.max_armadillo_volume);
        let log = world.resource::<support::StageLog>();
        let (rays_mean, rays_max) = log.rays_per_step();
        let sink = SLAB_TOP - lowest;
        serde_json::json!({
            "scene": "armadillos",
            "mesh": path.display().to_string(),
            "armadillos": count,
            "triangles_each": triangles,
            "volume_ray_spacing_m": spacing,
            "backend": log.backend_report(),
            "steps": log.total_ms.len(),
            "first_step_ms": log.total_ms.first(),
            "step_ms_after_the_first": support::summary(log.total_ms.get(1..).unwrap_or_default()),
            "narrow_phase_ms": support::summary(&log.narrow_ms),
            "volume_ms": support::summary(&log.volume_ms),
            "solver_ms": support::summary(&log.solver_ms),
            "gpu_end_to_end_ms": support::summary(&log.gpu_ms),
            "rays_per_step_mean": rays_mean,
            "rays_per_step_max": rays_max,
            "max_interfering_pairs": log.max_interfering,
            "armadillo_pair_contacts": armadillo_contacts,
            "max_armadillo_intersection_volume_m3": max_volume,
            "collisions_started": log.started,
            "collisions_ended": log.ended,
            "centre_heights_m": heights,
            "lowest_point_below_slab_top_m": sink,
            "armadillos_collided": collided,
            "no_tunnelling": sink < MAX_SINK,
            "all_criteria_met": collided && sink < MAX_SINK,
        })
    });
}

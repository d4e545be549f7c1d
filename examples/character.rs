//! A kinematic character (issue 30) walking a course of exact meshes: a finely tessellated floor
//! (no internal edges to snag on), a mesh staircase (0.2 m steps, 0.35 m treads, climbed with the
//! 0.3 m step height), a 20° ramp down, a hill made of the scanned bunny (`bunny100k.obj` from
//! `../shared/meshes`, flattened and half buried; a generated rough terrain when that file is
//! absent) and a crate it pushes out of its way. The character is a `Character` on a kinematic
//! capsule, steered towards the end of the course at 2.5 m/s and falling under gravity when off the
//! ground; see docs/algorithms.md, "Character controller".
//!
//! ```text
//! cargo run --release --example character -- [--headless --frames N --screenshot out.png
//!     --report out.json --generated-hill]
//! ```
//!
//! The report's criteria: on the flat floor every move covers the asked distance (99.9 %) on a
//! straight, level line (1 mm); on the staircase, in every frame on the ground, the centre is at
//! the analytic resting height of its capsule over the treads and nosings (1 mm), and it reaches
//! the top; down the ramp it stays on the ground in every frame, on the ramp's plane raised by
//! the capsule (1 mm); the capsule never overlaps a solid by more than 1 mm; it crosses the hill
//! (null until it could have); it pushes the crate 1.5 m (null until then); it reaches the end
//! (null before 19 s); nothing is NaN. Documented length 20 s (1,200 frames). The example exits
//! non-zero when one fails. Y is up.

#[path = "support/mod.rs"]
mod support;

use bevy::prelude::*;
use bevy_interfere::PhysicsWorld;
use bevy_interfere::prelude::*;
use interfere_geometry::{MeshOptions, Solid, TriMesh, load_mesh, shapes};
use std::f32::consts::PI;
use support::DemoArgs;

const HZ: f64 = 60.0;
const SPEED: f32 = 2.5;
const START_X: f32 = -16.0;
const STAIRS_X: f32 = -12.0;
const STEPS: u32 = 6;
const RISE: f32 = 0.2;
const TREAD: f32 = 0.35;
const RAMP_SLOPE: f32 = 20.0 * PI / 180.0;
const HILL_X: f32 = 2.0;
const CRATE_X: f32 = 11.0;
const CRATE_HALF: f32 = 0.3;
const END_X: f32 = 16.0;
/// By then the character has reached the end (it does at about 15 s; the documented length is
/// 20 s).
const END_S: f64 = 19.0;

#[derive(Component)]
struct Walker;
#[derive(Component)]
struct CrateBox;

/// The staircase top and the ramp's foot.
fn stairs_top_x() -> f32 {
    STAIRS_X + STEPS as f32 * TREAD
}
fn ramp_foot_x() -> f32 {
    stairs_top_x() + (STEPS as f32 * RISE) / RAMP_SLOPE.tan()
}

/// What the watch system records over the run.
#[derive(Resource, Default)]
struct Watch {
    /// The smallest fraction of the asked horizontal move covered on the flat floor.
    flat_slowest: Option<f32>,
    /// The largest departure from the straight level line on the flat floor, m.
    flat_off_line: f32,
    /// The largest |height − analytic| on the stairs while on the ground, m.
    stairs_error: Option<f32>,
    /// The highest centre reached on the stairs.
    stairs_highest: f32,
    /// Frames on the ramp, and those on the ground.
    ramp_frames: u32,
    ramp_grounded: u32,
    /// The largest |height − the ramp's plane raised by the capsule| on the ramp, m.
    ramp_error: f32,
    /// The deepest overlap of the capsule with any solid, m.
    deepest: f32,
    /// The farthest x reached.
    farthest: f32,
    nan: bool,
}

/// The height of the capsule's centre resting on the staircase at `x` (its bottom sphere, of
/// radius `r`, on the stairs' upper envelope).
fn on_stairs(x: f32, r: f32, half_length: f32) -> f32 {
    let rest = shapes::staircase_rest_height(
        f64::from(x - STAIRS_X),
        STEPS,
        f64::from(RISE),
        f64::from(TREAD),
        f64::from(r),
    );
    rest as f32 + half_length
}

/// The wedge of the ramp down: from the top of the stairs (height `h`) to the floor over
/// `h / tan θ`, `2·half_width` wide (Y up).
fn ramp(h: f32, half_width: f32) -> Solid {
    let len = h / RAMP_SLOPE.tan();
    let v = Vec3::new;
    let vertices = vec![
        v(0.0, 0.0, -half_width),
        v(0.0, h, -half_width),
        v(len, 0.0, -half_width),
        v(0.0, 0.0, half_width),
        v(0.0, h, half_width),
        v(len, 0.0, half_width),
    ];
    let triangles = vec![
        [0, 2, 1],
        [3, 4, 5],
        [0, 3, 5],
        [0, 5, 2],
        [0, 1, 4],
        [0, 4, 3],
        [1, 2, 5],
        [1, 5, 4],
    ];
    let mesh = TriMesh::new(vertices, triangles).expect("a valid wedge");
    Solid::new(mesh).expect("a closed wedge")
}

/// The hill: the scanned bunny flattened (×20 across, ×5 up) with its base 2.3 m under the
/// floor, or, without the benchmark meshes, a generated rough terrain.
fn hill(generated: bool) -> (Solid, Transform, &'static str) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/meshes/bunny100k.obj"
    );
    if !generated && let Ok(mesh) = load_mesh(std::path::Path::new(path), &MeshOptions::default()) {
        let scale = Vec3::new(20.0, 5.0, 20.0);
        let vertices: Vec<Vec3> = mesh.vertices().iter().map(|p| *p * scale).collect();
        let base = vertices.iter().map(|p| p.y).fold(f32::INFINITY, f32::min);
        if let Ok(solid) = TriMesh::new(vertices, mesh.triangles().to_vec()).map(Solid::new)
            && let Ok(solid) = solid
        {
            return (
                solid,
                Transform::from_xyz(HILL_X, -2.3 - base, 0.0),
                "bunny100k (../shared/meshes)",
            );
        }
    }
    let solid =
        shapes::terrain(6.0, 2.0, 0.8, 96, 5).expect("the generated terrain is a valid solid");
    // Z-up heights to Y-up.
    (
        solid,
        Transform::from_xyz(HILL_X, 0.0, 0.0).with_rotation(Quat::from_rotation_x(-PI / 2.0)),
        if generated {
            "generated terrain (--generated-hill)"
        } else {
            "generated terrain (bunny100k.obj not found)"
        },
    )
}

#[derive(Resource)]
struct HillSource(&'static str);

/// `--generated-hill`: the generated terrain even where the bunny is at hand.
#[derive(Resource)]
struct GeneratedHill(bool);

fn setup(
    generated: Res<GeneratedHill>,
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    let grey = materials.add(Color::srgb(0.5, 0.52, 0.55));
    let sand = materials.add(Color::srgb(0.75, 0.68, 0.5));
    let wood = materials.add(Color::srgb(0.65, 0.45, 0.25));
    let blue = materials.add(Color::srgb(0.25, 0.45, 0.85));
    // The floor: 64 × 64 quads per face (Z-up generator, symmetric).
    let floor =
        shapes::subdivided_cuboid(Vec3::new(20.0, 0.5, 6.0), 64).expect("a valid tessellated slab");
    let ground = |commands: &mut Commands,
                  meshes: &mut Assets<Mesh>,
                  name: &'static str,
                  solid: Solid,
                  material: &Handle<StandardMaterial>,
                  at: Transform| {
        support::spawn_static_solid(
            commands,
            meshes,
            name,
            solid,
            material.clone(),
            Some(0.6),
            at,
        );
    };
    ground(
        &mut commands,
        &mut meshes,
        "floor",
        floor,
        &grey,
        Transform::from_xyz(0.0, -0.5, 0.0),
    );
    // The staircase (generated climbing +x with Z up): turned to Y up.
    let stairs = shapes::staircase(STEPS, RISE, TREAD, 1.5).expect("a valid staircase");
    ground(
        &mut commands,
        &mut meshes,
        "staircase",
        stairs,
        &sand,
        Transform::from_xyz(STAIRS_X, 0.0, 0.0).with_rotation(Quat::from_rotation_x(-PI / 2.0)),
    );
    ground(
        &mut commands,
        &mut meshes,
        "ramp",
        ramp(STEPS as f32 * RISE, 1.5),
        &sand,
        Transform::from_xyz(stairs_top_x(), 0.0, 0.0),
    );
    let (solid, at, source) = hill(generated.0);
    commands.insert_resource(HillSource(source));
    ground(&mut commands, &mut meshes, "hill", solid, &sand, at);
    let half = Vec3::splat(CRATE_HALF);
    commands.spawn((
        Name::new("crate"),
        CrateBox,
        RigidBody::Dynamic,
        Collider::cuboid(half),
        Density(40.0 / (8.0 * CRATE_HALF.powi(3))),
        Friction::new(0.4),
        Mesh3d(meshes.add(Cuboid::from_size(half * 2.0))),
        MeshMaterial3d(wood),
        Transform::from_xyz(CRATE_X, CRATE_HALF, 0.0),
    ));
    let character = Character::default();
    let c = &character.controller;
    let visual = Capsule3d::new(c.radius as f32, 2.0 * c.half_length as f32);
    commands.spawn((
        Name::new("character"),
        Walker,
        RigidBody::Kinematic,
        character.collider(),
        character,
        Mesh3d(meshes.add(visual)),
        MeshMaterial3d(blue),
        Transform::from_xyz(START_X, 1.0, 0.0),
    ));
    support::spawn_camera_and_lights(
        &mut commands,
        Vec3::new(0.0, 9.0, 20.0),
        Vec3::new(0.0, 0.5, 0.0),
        Vec3::Y,
    );
}

/// Each fixed step: towards the end of the course at [`SPEED`], falling when off the ground;
/// it stops at the end.
fn steer(
    time: Res<Time>,
    mut fall: Local<f32>,
    mut walkers: Query<(&Transform, &mut Character, &CharacterOutput), With<Walker>>,
) {
    let dt = time.delta_secs();
    for (t, mut c, out) in &mut walkers {
        *fall = if out.grounded { 0.0 } else { *fall - 9.81 * dt };
        let to = Vec3::new(END_X - t.translation.x, 0.0, -t.translation.z);
        let v = if to.length() > 0.05 {
            to.normalize() * SPEED
        } else {
            Vec3::ZERO
        };
        c.translation = Some((v + Vec3::Y * *fall) * dt);
    }
}

fn watch(
    pw: Res<PhysicsWorld>,
    mut w: ResMut<Watch>,
    mut last: Local<Option<Vec3>>,
    walkers: Query<(Entity, &Transform, &Character, &CharacterOutput), With<Walker>>,
) {
    let Ok((entity, t, character, out)) = walkers.single() else {
        return;
    };
    let p = t.translation;
    w.nan |= !p.is_finite();
    w.farthest = w.farthest.max(p.x);
    let c = &character.controller;
    let (r, half) = ((c.radius + c.skin) as f32, c.half_length as f32);
    let standing = half + r;
    // The flat floor before the stairs (after landing; clear of the first nosing by a radius).
    if p.x > START_X + 1.5
        && p.x < STAIRS_X - 1.0
        && let Some(before) = *last
    {
        let asked = Vec3::new(out.desired.x, 0.0, out.desired.z).length();
        let moved = Vec3::new(p.x - before.x, 0.0, p.z - before.z).length();
        if asked > 0.0 {
            let f = moved / asked;
            w.flat_slowest = Some(w.flat_slowest.map_or(f, |s: f32| s.min(f)));
        }
        w.flat_off_line = w.flat_off_line.max(p.z.abs()).max((p.y - standing).abs());
    }
    if p.x > STAIRS_X - 1.0 && p.x < stairs_top_x() && out.grounded {
        let e = (p.y - on_stairs(p.x, r, half)).abs();
        w.stairs_error = Some(w.stairs_error.map_or(e, |s: f32| s.max(e)));
        w.stairs_highest = w.stairs_highest.max(p.y);
    }
    // The ramp's middle (clear of its edges by a radius).
    let (top, foot) = (stairs_top_x(), ramp_foot_x());
    if p.x > top + 0.5 && p.x < foot - 0.5 {
        w.ramp_frames += 1;
        w.ramp_grounded += u32::from(out.grounded);
        let surface = (foot - p.x) * RAMP_SLOPE.tan();
        let want = surface + half + r / RAMP_SLOPE.cos();
        w.ramp_error = w.ramp_error.max((p.y - want).abs());
    }
    // Overlap with any solid (the capsule without its skin).
    let sim = pw.simulation();
    if let Some(h) = pw.handle(entity) {
        let capsule = c.capsule(p.as_dvec3(), bevy::math::DVec3::Y);
        let filter = interfere_dynamics::QueryFilter::default().excluding([h]);
        let deepest = sim
            .capsule_contacts(&capsule, 0.0, &filter)
            .iter()
            .map(|k| k.distance)
            .fold(0.0, f64::min);
        w.deepest = w.deepest.max(-deepest as f32);
    }
    *last = Some(p);
}

fn main() {
    let args = DemoArgs::parse(1200, " [--generated-hill]");
    let mut app = support::base_app(&args, "Interfere: character", HZ);
    app.insert_resource(args.backend())
        .insert_resource(GeneratedHill(args.flag("--generated-hill")))
        .init_resource::<Watch>()
        .init_resource::<support::StageLog>()
        .add_plugins(InterferePlugins)
        .add_systems(Startup, setup)
        .add_systems(FixedUpdate, steer)
        .add_systems(FixedLast, (watch, support::log_stages));
    support::run(app, &args, |world| {
        let time = world.resource::<PhysicsWorld>().time();
        let crate_x = world
            .query_filtered::<&Transform, With<CrateBox>>()
            .single(world)
            .map(|t| t.translation.x)
            .unwrap_or(f32::NAN);
        let walker = world
            .query_filtered::<&Transform, With<Walker>>()
            .single(world)
            .map(|t| t.translation)
            .unwrap_or(Vec3::NAN);
        let hill = world.resource::<HillSource>().0;
        let w = world.resource::<Watch>();
        let c = Character::default().controller;
        let summit = STEPS as f32 * RISE + (c.radius + c.skin + c.half_length) as f32;
        let criteria = serde_json::json!({
            "full_speed_on_the_flat_floor": w.flat_slowest.map(|s| s > 0.999),
            "straight_and_level_on_the_flat_floor": w.flat_slowest.map(|_| w.flat_off_line < 1e-3),
            "stairs_on_the_analytic_path": w.stairs_error.map(|e| e < 1e-3),
            "reached_the_top_of_the_stairs": (w.farthest > stairs_top_x())
                .then_some((w.stairs_highest - summit).abs() < 1e-3),
            "on_the_ground_down_the_ramp": (w.ramp_frames > 0).then_some(
                w.ramp_grounded == w.ramp_frames && w.ramp_error < 1e-3
            ),
            "never_inside_a_solid": w.deepest < 1e-3,
            "crossed_the_hill": (w.farthest > HILL_X + 7.0).then_some(true)
                .or((time >= END_S).then_some(false)),
            "pushed_the_crate_1_5_m": (crate_x > CRATE_X + 1.5).then_some(true)
                .or((time >= END_S).then_some(false)),
            "reached_the_end": (time >= END_S).then_some((walker.x - END_X).abs() < 0.1),
            "finite": !w.nan && walker.is_finite() && crate_x.is_finite(),
        });
        let all = criteria
            .as_object()
            .expect("an object")
            .values()
            .all(|v| v.is_null() || v == &serde_json::Value::Bool(true));
        serde_json::json!({
            "scene": "character",
            "simulated_s": time,
            "hill": hill,
            "character_position_m": [walker.x, walker.y, walker.z],
            "crate_x_m": crate_x,
            "flat_slowest_fraction": w.flat_slowest,
            "flat_off_line_m": w.flat_off_line,
            "stairs_worst_error_m": w.stairs_error,
            "stairs_highest_m": w.stairs_highest,
            "ramp_frames": w.ramp_frames,
            "ramp_grounded_frames": w.ramp_grounded,
            "ramp_worst_error_m": w.ramp_error,
            "deepest_overlap_m": w.deepest,
            "farthest_x_m": w.farthest,
            "backend": world.resource::<support::StageLog>().backend_report(),
            "physics_ms": world.resource::<support::StageLog>().timing_report(),
            "criteria": criteria,
            "all_criteria_met": all,
        })
    });
}

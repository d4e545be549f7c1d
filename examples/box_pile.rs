//! Box pile: several hundred boxes (three sizes) dropped into a static bin (a floor slab and four
//! walls), simulated by the Interfere plugins the way a game uses them. Boxes that currently
//! interfere with something (another box, the floor or a wall) are drawn red: a game system reads
//! the plugin's [`ContactMessage`]s (one per interfering pair and step, from the exact OBBTree
//! test on the CPU backend, from the CInDeR passes confirmed by the exact test on the GPU
//! backends) and swaps each box between two shared materials, its normal one and the red one.
//!
//! ```text
//! cargo run --release --example box_pile -- [--boxes N] [--backend cpu|gpu|gpu-blocking]
//!     [--hz F] [--substeps N] [--iterations N] [--volume exact|uniform] [--spacing M]
//!     [--slop M] [--series]
//!     [--headless --frames N --screenshot out.png --report out.json]
//! ```
//!
//! The boxes arrive in layers of 25, one layer every 0.4 s, from 2.6 m above the floor (a game's
//! spawner; dropping them all at once from a tall lattice either overlaps them at the start or
//! makes the top ones land fast). The physics runs at 120 fixed steps per second by default.
//! The volume contacts are exact (no spacing, no slop to tune). With `--volume uniform` they are
//! sampled every 2 cm (`--spacing`) and the solver's volume slop must be raised to about 3 mm
//! (`--slop 3e-3`): at the 0.1 mm default the position projection overshot the sampled depth,
//! lifted boxes off their supports and the pile never settled (see
//! `SolverSettings::volume_slop_depth`).
//!
//! The report gives, per fixed step, the detection time (broad phase plus narrow phase, from
//! [`PhysicsStats`]), the broad-phase pair count, the interfering pair count, the red boxes and
//! the boxes at rest, each as min/mean/max over the run, with the other stage timings, and the
//! sanity checks: every box spawned, every box vertex inside the bin at the end (no tunnelling
//! through the floor or the walls; within the volume contact's resting overlap) and whether the
//! pile settled (no box faster than 0.05 m/s at the end, and from which time on). `--series`
//! adds the per-step values.
//!
//! A settled pile is all red: the volume contact keeps a small overlap at rest, so every box
//! that lies on something interferes with it. Boxes still falling keep their own colour.
//!
//! **Sleeping pairs.** The plugin does not test a pair in which no body is awake (both asleep, or
//! one asleep and the other static): such a pair cannot change while that lasts. The colouring
//! system therefore keeps a pair it saw interfering while neither of its bodies is awake, and
//! otherwise trusts this step's messages.

#[path = "support/mod.rs"]
mod support;

use bevy::platform::collections::HashSet;
use bevy::prelude::*;
use bevy_interfere::GpuSupport;
use bevy_interfere::mesh_convert::{Shading, bevy_mesh_from_trimesh};
use bevy_interfere::prelude::*;
use interfere_dynamics::SolverSettings;
use interfere_geometry::{Solid, shapes};
use support::DemoArgs;

/// Half the inner width of the bin (x and z).
const BIN_HALF: f32 = 1.5;
/// Wall thickness.
const WALL: f32 = 0.1;
/// Wall height above the floor top.
const WALL_HEIGHT: f32 = 2.0;
/// The floor top.
const FLOOR_TOP: f32 = 0.0;
/// Half extents of the three box sizes.
const SIZES: [Vec3; 3] = [
    Vec3::new(0.15, 0.10, 0.20),
    Vec3::new(0.12, 0.12, 0.12),
    Vec3::new(0.20, 0.08, 0.14),
];
/// The pile counts as settled when no box moves faster than this (m/s) at the end.
const SETTLED_SPEED: f32 = 0.05;
/// A box counts as at rest below these speeds (the plugin's default sleep thresholds).
const REST_LINEAR: f32 = 0.02;
const REST_ANGULAR: f32 = 0.05;

/// Boxes per layer side when spawning (a layer is `LAYER_SIDE`² boxes).
const LAYER_SIDE: usize = 5;
/// Lattice spacing of a spawned layer (m).
const SPACING: f32 = 0.58;
/// Largest offset of a spawned box from its lattice point, per axis (m).
const JITTER: f32 = 0.015;
/// Height of a spawned layer's centres above the floor top (m).
const SPAWN_HEIGHT: f32 = 2.6;
/// Seconds between two layers: in free fall a layer drops at least `g t² / 2` = 0.78 m in that
/// time, more than the spacing, before the next one appears.
const SPAWN_PERIOD: f64 = 0.4;

/// Squared radius of the largest box's bounding sphere.
const fn largest_radius_sq() -> f32 {
    let mut r = 0.0f32;
    let mut k = 0;
    while k < SIZES.len() {
        let h = SIZES[k];
        let r2 = h.x * h.x + h.y * h.y + h.z * h.z;
        if r2 > r {
            r = r2;
        }
        k += 1;
    }
    r
}

// Spawned boxes overlap neither each other (the lattice gap exceeds the bounding-sphere
// diameter) nor the walls (the outermost sphere stays inside the bin).
const _: () = {
    let gap = SPACING - 2.0 * JITTER;
    assert!(gap * gap > 4.0 * largest_radius_sq());
    let reach = (LAYER_SIDE as f32 - 1.0) * SPACING * 0.5 + JITTER;
    assert!((BIN_HALF - reach) * (BIN_HALF - reach) > largest_radius_sq());
};

/// The box kinds (mesh, normal material, collider solid) and how many boxes are still to come.
#[derive(Resource)]
struct Spawner {
    kinds: Vec<(
        Handle<Mesh>,
        Handle<StandardMaterial>,
        std::sync::Arc<Solid>,
    )>,
    left: usize,
    spawned: usize,
    steps: u32,
}

/// Marks a dropped box and holds its normal material.
#[derive(Component)]
struct PileBox {
    normal: Handle<StandardMaterial>,
    red: bool,
}

/// The shared highlight material.
#[derive(Resource)]
struct RedMaterial(Handle<StandardMaterial>);

#[derive(Resource)]
struct SceneConfig {
    boxes: usize,
    /// Fixed steps per second.
    hz: f64,
}

/// The interfering pairs the colouring currently shows.
#[derive(Resource, Default)]
struct Interfering(HashSet<(Entity, Entity)>);

/// Per-step statistics for the report.
#[derive(Resource, Default)]
struct StepLog {
    detection_ms: Vec<f64>,
    broad_ms: Vec<f64>,
    narrow_ms: Vec<f64>,
    volume_ms: Vec<f64>,
    solver_ms: Vec<f64>,
    solver_contacts: Vec<f64>,
    solver_sweeps: Vec<f64>,
    solver_updates: Vec<f64>,
    total_ms: Vec<f64>,
    gpu_ms: Vec<f64>,
    broad_pairs: Vec<f64>,
    interfering_pairs: Vec<f64>,
    latency_pairs: Vec<f64>,
    red_boxes: Vec<f64>,
    resting: Vec<f64>,
    sleeping: Vec<f64>,
    fastest: Vec<f64>,
    moving: Vec<f64>,
    spawned: Vec<usize>,
    backends: Vec<&'static str>,
}

fn setup(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
    config: Res<SceneConfig>,
) {
    // The bin: a floor slab and four walls, all static (drawn translucent so the pile shows).
    let outer = BIN_HALF + 2.0 * WALL;
    support::spawn_static_cuboid(
        &mut commands,
        &mut meshes,
        "floor",
        Vec3::new(outer, 0.25, outer),
        materials.add(Color::srgb(0.42, 0.44, 0.47)),
        Some(0.6),
        Transform::from_xyz(0.0, FLOOR_TOP - 0.25, 0.0),
    );
    let wall_material = materials.add(StandardMaterial {
        base_color: Color::srgba(0.6, 0.7, 0.8, 0.22),
        alpha_mode: AlphaMode::Blend,
        ..default()
    });
    let half_y = WALL_HEIGHT * 0.5;
    let walls = [
        (
            Vec3::new(WALL, half_y, outer),
            Vec3::new(BIN_HALF + WALL, 0.0, 0.0),
        ),
        (
            Vec3::new(WALL, half_y, outer),
            Vec3::new(-BIN_HALF - WALL, 0.0, 0.0),
        ),
        (
            Vec3::new(BIN_HALF, half_y, WALL),
            Vec3::new(0.0, 0.0, BIN_HALF + WALL),
        ),
        (
            Vec3::new(BIN_HALF, half_y, WALL),
            Vec3::new(0.0, 0.0, -BIN_HALF - WALL),
        ),
    ];
    for (k, (half, centre)) in walls.into_iter().enumerate() {
        support::spawn_static_cuboid(
            &mut commands,
            &mut meshes,
            format!("wall {k}"),
            half,
            wall_material.clone(),
            Some(0.3),
            Transform::from_translation(centre + Vec3::Y * (FLOOR_TOP + half_y)),
        );
    }

    // Three box sizes, three normal colours (not red), one shared red.
    let colours = [
        Color::srgb(0.25, 0.5, 0.85),
        Color::srgb(0.85, 0.78, 0.55),
        Color::srgb(0.35, 0.7, 0.45),
    ];
    let kinds = SIZES
        .iter()
        .zip(colours)
        .map(|(&half, colour)| {
            let solid = shapes::cuboid(half).expect("SIZES are valid boxes");
            (
                meshes.add(bevy_mesh_from_trimesh(&solid, Shading::Flat)),
                materials.add(colour),
                std::sync::Arc::new(solid),
            )
        })
        .collect();
    commands.insert_resource(RedMaterial(materials.add(Color::srgb(0.9, 0.08, 0.06))));
    commands.insert_resource(Spawner {
        kinds,
        left: config.boxes,
        spawned: 0,
        steps: 0,
    });
    let eye = Vec3::new(3.2, 4.6, 4.4);
    support::spawn_camera_and_lights(&mut commands, eye, Vec3::new(0.0, 0.3, 0.0), Vec3::Y);
}

/// A deterministic pseudo-random number in [0, 1) for box `i` and draw `k`.
fn hash01(i: usize, k: u32) -> f32 {
    let mut x = (i as u32).wrapping_mul(0x9E37_79B9) ^ k.wrapping_mul(0x85EB_CA6B);
    x ^= x >> 16;
    x = x.wrapping_mul(0x7FEB_352D);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846C_A68B);
    x ^= x >> 16;
    (x >> 8) as f32 / (1u32 << 24) as f32
}

/// The game side, part one: every [`SPAWN_PERIOD`] seconds a layer of boxes appears above
/// the bin, on a lattice whose spacing exceeds the largest box's bounding sphere, so that the
/// new boxes overlap nothing whatever their orientation, and the layer before has fallen clear.
fn spawn_layer(mut commands: Commands, mut spawner: ResMut<Spawner>, config: Res<SceneConfig>) {
    let step = spawner.steps;
    spawner.steps += 1;
    let interval = ((SPAWN_PERIOD * config.hz).round() as u32).max(1);
    if spawner.left == 0 || !step.is_multiple_of(interval) {
        return;
    }
    let offset = (LAYER_SIDE as f32 - 1.0) * SPACING * 0.5;
    for j in 0..(LAYER_SIDE * LAYER_SIDE).min(spawner.left) {
        let i = spawner.spawned;
        let (mesh, material, solid) = spawner.kinds[i % spawner.kinds.len()].clone();
        let (gx, gz) = ((j % LAYER_SIDE) as f32, (j / LAYER_SIDE) as f32);
        let jitter = |k: u32| (hash01(i, k) - 0.5) * 2.0 * JITTER;
        let position = Vec3::new(
            gx * SPACING - offset + jitter(0),
            SPAWN_HEIGHT + jitter(1),
            gz * SPACING - offset + jitter(2),
        );
        let tau = std::f32::consts::TAU;
        let rotation = Quat::from_euler(
            EulerRot::YXZ,
            tau * hash01(i, 3),
            tau * hash01(i, 4),
            tau * hash01(i, 5),
        );
        commands.spawn((
            Name::new(format!("box {i}")),
            PileBox {
                normal: material.clone(),
                red: false,
            },
            RigidBody::Dynamic,
            Mesh3d(mesh),
            MeshMaterial3d(material),
            Collider::shared_solid(solid),
            Friction::new(0.6),
            Transform::from_translation(position).with_rotation(rotation),
        ));
        spawner.spawned += 1;
        spawner.left -= 1;
    }
}

/// The game side, part two: this step's contact messages decide which boxes are red.
fn colour_interfering(
    mut contacts: MessageReader<ContactMessage>,
    mut shown: ResMut<Interfering>,
    red: Res<RedMaterial>,
    bodies: Query<(&RigidBody, Has<Sleeping>)>,
    mut boxes: Query<(Entity, &mut PileBox, &mut MeshMaterial3d<StandardMaterial>)>,
) {
    // A body is awake when it is dynamic or kinematic and not sleeping; a pair without an awake
    // body is not tested by the plugin and keeps its last state.
    let awake = |e: Entity| {
        bodies
            .get(e)
            .is_ok_and(|(kind, sleeping)| *kind != RigidBody::Static && !sleeping)
    };
    let mut now: HashSet<(Entity, Entity)> = shown
        .0
        .iter()
        .copied()
        .filter(|&(a, b)| bodies.contains(a) && bodies.contains(b) && !awake(a) && !awake(b))
        .collect();
    now.extend(contacts.read().map(|c| (c.a, c.b)));
    let touching: HashSet<Entity> = now.iter().flat_map(|&(a, b)| [a, b]).collect();
    shown.0 = now;
    for (e, mut pile_box, mut material) in &mut boxes {
        let red_now = touching.contains(&e);
        if red_now != pile_box.red {
            pile_box.red = red_now;
            material.0 = if red_now {
                red.0.clone()
            } else {
                pile_box.normal.clone()
            };
        }
    }
}

/// Records this step's statistics (after the colouring).
fn log_step(
    stats: Res<PhysicsStats>,
    mut log: ResMut<StepLog>,
    spawner: Res<Spawner>,
    boxes: Query<(&PileBox, &LinearVelocity, &AngularVelocity, Has<Sleeping>)>,
) {
    log.broad_ms.push(stats.step.broad_phase_ms);
    log.narrow_ms.push(stats.step.narrow_phase_ms);
    log.detection_ms
        .push(stats.step.broad_phase_ms + stats.step.narrow_phase_ms);
    log.volume_ms.push(stats.step.volume_ms);
    log.solver_ms.push(stats.step.solver_ms);
    log.solver_contacts.push(stats.step.solver_contacts as f64);
    log.solver_sweeps.push(stats.step.solver_sweeps as f64);
    log.solver_updates.push(stats.step.solver_updates as f64);
    log.total_ms.push(stats.total_ms());
    if let Some(g) = stats.step.gpu_ms {
        log.gpu_ms.push(g);
    }
    log.broad_pairs.push(stats.step.candidate_pairs as f64);
    log.interfering_pairs
        .push(stats.step.interfering_pairs as f64);
    log.latency_pairs.push(stats.step.latency_pairs as f64);
    let (mut red, mut resting, mut sleeping, mut moving, mut fastest) = (0, 0, 0, 0, 0.0f32);
    for (b, v, w, asleep) in &boxes {
        fastest = fastest.max(v.0.length());
        moving += usize::from(v.0.length() >= SETTLED_SPEED);
        red += usize::from(b.red);
        sleeping += usize::from(asleep);
        resting +=
            usize::from(asleep || (v.0.length() < REST_LINEAR && w.0.length() < REST_ANGULAR));
    }
    log.red_boxes.push(red as f64);
    log.resting.push(resting as f64);
    log.sleeping.push(sleeping as f64);
    log.fastest.push(fastest as f64);
    log.moving.push(moving as f64);
    log.spawned.push(spawner.spawned);
    log.backends.push(stats.backend.name());
}

fn summary(v: &[f64]) -> serde_json::Value {
    if v.is_empty() {
        return serde_json::Value::Null;
    }
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    serde_json::json!({ "min": min, "mean": mean, "max": max, "last": v[v.len() - 1] })
}

fn main() {
    let args = DemoArgs::parse(
        300,
        " [--boxes N] [--backend cpu|gpu|gpu-blocking] [--hz F] \
         [--substeps N] [--iterations N] [--volume exact|uniform] [--spacing M] [--slop M] \
         [--series]",
    );
    let backend = args.backend();
    let boxes = args.parsed("--boxes", 300usize);
    let series = args.flag("--series");
    let hz = args.parsed("--hz", 120.0f64);
    let defaults = PhysicsSettings::default();
    let substeps = args.parsed("--substeps", defaults.substeps);
    let iterations = args.parsed("--iterations", defaults.solver.velocity_iterations);
    // The exact volume contact (the default) needs no slop tuning: the solver's default volume
    // slop holds. With `--volume uniform` (rays every `--spacing`, 2 cm by default) the sampled
    // depths err by millimetres and the pile only settles with a slop of millimetres (`--slop`,
    // see SolverSettings::volume_slop_depth).
    let (volume, spacing) = args.volume_method(0.02);
    let slop = args.parsed("--slop", defaults.solver.volume_slop_depth);
    if !(hz.is_finite() && hz >= 1.0)
        || substeps == 0
        || iterations == 0
        || !(slop.is_finite() && slop >= 0.0)
    {
        eprintln!("--hz must be at least 1, --substeps and --iterations positive, --slop >= 0");
        std::process::exit(2);
    }
    let mut app = support::base_app(&args, "Interfere: box pile", hz);
    app.insert_resource(backend)
        .insert_resource(PhysicsSettings {
            volume,
            substeps,
            solver: SolverSettings {
                velocity_iterations: iterations,
                volume_slop_depth: slop,
                ..defaults.solver
            },
            ..defaults
        })
        .insert_resource(SceneConfig { boxes, hz })
        .init_resource::<Interfering>()
        .init_resource::<StepLog>()
        .init_resource::<support::StageLog>()
        .add_plugins(InterferePlugins)
        .add_systems(Startup, setup)
        .add_systems(FixedUpdate, spawn_layer)
        .add_systems(
            FixedLast,
            (colour_interfering, log_step, support::log_stages).chain(),
        );
    support::run(app, &args, |world| {
        // Final state: the lowest vertex against the floor top, the farthest against the walls'
        // inner faces, the fastest box.
        let mut below_floor = f32::NEG_INFINITY;
        let mut outside_walls = f32::NEG_INFINITY;
        let mut fastest = 0.0f32;
        let mut count = 0usize;
        let mut q = world.query::<(
            &PileBox,
            &Transform,
            &LinearVelocity,
            &bevy_interfere::ColliderShape,
        )>();
        for (_, t, v, shape) in q.iter(world) {
            count += 1;
            fastest = fastest.max(v.0.length());
            let Some(solid) = shape.solid() else {
                continue;
            };
            for p in solid.vertices() {
                let w = t.transform_point(Vec3::from_array(p.to_array()));
                below_floor = below_floor.max(FLOOR_TOP - w.y);
                outside_walls = outside_walls.max(w.x.abs().max(w.z.abs()) - BIN_HALF);
            }
        }
        // Allowed: the volume contact's resting overlap: with exact volumes a few millimetres
        // (the slop and what the position projection leaves), with rays about one spacing.
        let tolerance = match spacing {
            None => 0.01,
            Some(h) => 0.03f32.max(1.5 * h as f32),
        };
        let contained = count > 0 && below_floor < tolerance && outside_walls < tolerance;
        let gpu_adapter = world.resource::<GpuSupport>().adapter.clone();
        let log = world.resource::<StepLog>();
        let all_spawned = count == boxes;
        let settled = all_spawned && fastest < SETTLED_SPEED;
        // The first step from which every box stayed below the settled speed to the end.
        let calm_from = log
            .fastest
            .iter()
            .zip(&log.spawned)
            .rposition(|(&v, &n)| v >= SETTLED_SPEED as f64 || n < boxes)
            .map_or(0, |k| k + 1);
        let settled_at_s =
            (settled && calm_from < log.fastest.len()).then(|| (calm_from + 1) as f64 / hz);
        let mut report = serde_json::json!({
            "scene": "box_pile",
            "boxes": count,
            "boxes_requested": boxes,
            "fixed_hz": hz,
            "substeps": substeps,
            "velocity_iterations": iterations,
            "volume": DemoArgs::volume_label(spacing, "m"),
            "volume_slop_depth_m": slop,
            "all_spawned": all_spawned,
            "backend": world.resource::<support::StageLog>().backend_report(),
            "gpu_adapter": gpu_adapter,
            "steps": log.total_ms.len(),
            "simulated_s": log.total_ms.len() as f64 / hz,
            "detection_ms": summary(&log.detection_ms),
            "broad_phase_ms": summary(&log.broad_ms),
            "narrow_phase_ms": summary(&log.narrow_ms),
            "gpu_end_to_end_ms": summary(&log.gpu_ms),
            "volume_ms": summary(&log.volume_ms),
            "solver_ms": summary(&log.solver_ms),
            "solver_contacts_per_step": summary(&log.solver_contacts),
            "solver_sweeps_per_step": summary(&log.solver_sweeps),
            "solver_updates_per_step": summary(&log.solver_updates),
            "step_ms": summary(&log.total_ms),
            "broad_phase_pairs": summary(&log.broad_pairs),
            "interfering_pairs": summary(&log.interfering_pairs),
            "latency_pairs": summary(&log.latency_pairs),
            "red_boxes": summary(&log.red_boxes),
            "boxes_at_rest": summary(&log.resting),
            "boxes_sleeping": summary(&log.sleeping),
            "deepest_below_floor_m": below_floor,
            "farthest_outside_walls_m": outside_walls,
            "containment_tolerance_m": tolerance,
            "no_tunnelling": contained,
            "fastest_speed_m_per_s": fastest,
            "settled_threshold_m_per_s": SETTLED_SPEED,
            "settled": settled,
            "settled_at_s": settled_at_s,
            "all_criteria_met": all_spawned && settled && contained,
            "fastest_box_m_per_s": summary(&log.fastest),
            "moving_boxes": summary(&log.moving),
        });
        if series {
            report["series"] = serde_json::json!({
                "detection_ms": log.detection_ms,
                "volume_ms": log.volume_ms,
                "interfering_pairs": log.interfering_pairs,
                "red_boxes": log.red_boxes,
                "boxes_at_rest": log.resting,
                "boxes_sleeping": log.sleeping,
                "moving_boxes": log.moving,
                "fastest_box_m_per_s": log.fastest,
            });
        }
        report
    });
}

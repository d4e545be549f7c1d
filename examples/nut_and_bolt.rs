//! Nut and bolt (Wang–Faure–Pai 2012 §7, Fig. 1a): two procedural M10×1.5 bolts (ISO 68-1
//! profile, 64 facets per turn, about 130 000 triangles each) stand head up, each with a matching
//! nut (0.05 mm radial clearance, about 44 000 triangles) resting on its thread. Gravity points
//! down the bolt axis; nothing else acts on the nuts.
//!
//! - The **free** nut (left, frictionless) unscrews spontaneously: the only forces are the
//!   volume contacts on the thread flanks, whose gradient has an axial and a tangential part, so
//!   the nut turns as it sinks. Its axial travel must follow the pitch, Δz = P·Δθ/2π.
//! - The **locked** nut (right) has friction above the self-locking limit
//!   (μ > tan λ · cos 30°, about 0.046 for M10×1.5) and must stay put.
//!
//! Units are millimetres (gravity 9810 mm/s²), 240 Hz fixed steps with one substep (contacts are
//! found once per fixed step, and a nut falling freely for 1/60 s would sink 0.7 mm into the
//! thread before its first contact), the exact intersection volume (`--volume uniform` casts rays
//! every 0.1 mm instead, `--spacing`). Each nut starts
//! resting on its bolt's flanks: lowered from the centred pose by half the axial play, plus 2 µm.
//!
//! ```text
//! cargo run --release --example nut_and_bolt -- [--volume exact|uniform] [--spacing MM]
//!     [--locked-friction MU]
//!     [--columns N] [--backend cpu|gpu|gpu-blocking]
//!     [--headless --frames N --screenshot out.png --report out.json]
//! ```
//!
//! The report gives, per nut: axial travel, rotation, the pitch they imply against the thread's,
//! the largest deviation from the helix through the start pose (a nut that jumped a flank would be
//! a pitch off), the largest intersection volume, the turns a frictionless rigid nut would make
//! in the same time (`ideal_frictionless_turns_on_thread`, from the nut's moment of inertia) and
//! the fraction of them made, and the pass/fail of each criterion. The thread
//! is judged while the nut is wholly on it: run four times longer, the free nut unscrews off the
//! bolt's tip and falls (the report's `left_the_thread`).

#[path = "support/mod.rs"]
mod support;

use bevy::prelude::*;
use bevy_interfere::mesh_convert::{Shading, bevy_mesh_from_trimesh};
use bevy_interfere::prelude::*;
use interfere_geometry::threads::{ThreadSpec, bolt, nut};
use std::f64::consts::TAU;
use support::DemoArgs;

/// Fixed steps per second.
const HZ: f64 = 240.0;
/// Height of the nut's bottom face above the bolt's tip where the threads clear by the same gap
/// on both flanks.
const CENTRED_Z: f32 = 12.0;
/// Distance of each bolt from the scene centre.
const BOLT_X: f32 = 14.0;

/// One tracked nut.
#[derive(Component)]
struct Nut {
    name: &'static str,
    friction: f32,
    /// Unwrapped rotation about the bolt axis (radians; positive is counter-clockwise seen from
    /// above, which for a right-hand thread goes with rising).
    theta: f64,
    /// Twist angle of the last step (for unwrapping).
    last_twist: f64,
    /// (time, z, θ) per step.
    samples: Vec<(f64, f64, f64)>,
    /// Largest intersection volume on the nut, per step.
    volumes: Vec<f32>,
    max_volume: f32,
    max_tilt: f64,
    max_radial: f64,
}

#[derive(Resource, Clone, Copy)]
struct Config {
    spec: ThreadSpec,
    locked_friction: f32,
}

/// Axial play of the thread flanks: the radial clearance over the flank slope dr/dz = √3.
fn axial_play(spec: &ThreadSpec) -> f32 {
    2.0 * spec.clearance / 3f32.sqrt()
}

/// Height of the nut's frame at the start: resting on the bolt's flanks, 2 µm into them.
fn start_z(spec: &ThreadSpec) -> f32 {
    CENTRED_Z - axial_play(spec) / 2.0 - 0.002
}

/// Rotation of `q` about +z (the twist part of a swing–twist split), in (−π, π].
fn twist_about_z(q: Quat) -> f64 {
    let q = q.as_dquat();
    2.0 * q.z.atan2(q.w)
}

/// Wraps an angle difference into (−π, π].
fn wrap(a: f64) -> f64 {
    let w = a.rem_euclid(TAU);
    if w > std::f64::consts::PI { w - TAU } else { w }
}

fn setup(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
    config: Res<Config>,
) {
    let spec = config.spec;
    let bolt_solid = bolt(&spec, 24.0).expect("checked in main");
    let nut_solid = nut(&spec, 8.0).expect("checked in main");
    let bolt_mesh = meshes.add(bevy_mesh_from_trimesh(&bolt_solid, Shading::Flat));
    let nut_mesh = meshes.add(bevy_mesh_from_trimesh(&nut_solid, Shading::Flat));
    let steel = materials.add(StandardMaterial {
        base_color: Color::srgb(0.72, 0.74, 0.78),
        metallic: 0.6,
        perceptual_roughness: 0.35,
        ..default()
    });
    for (name, x, friction, colour) in [
        ("free", -BOLT_X, 0.0, Color::srgb(0.85, 0.62, 0.25)),
        (
            "locked",
            BOLT_X,
            config.locked_friction,
            Color::srgb(0.35, 0.55, 0.85),
        ),
    ] {
        commands.spawn((
            Name::new(format!("{name} bolt")),
            RigidBody::Static,
            Mesh3d(bolt_mesh.clone()),
            MeshMaterial3d(steel.clone()),
            Collider::solid(bolt_solid.clone()),
            Friction::new(friction),
            Transform::from_xyz(x, 0.0, 0.0),
        ));
        commands.spawn((
            Name::new(format!("{name} nut")),
            Nut {
                name,
                friction,
                theta: 0.0,
                last_twist: 0.0,
                samples: Vec::new(),
                volumes: Vec::new(),
                max_volume: 0.0,
                max_tilt: 0.0,
                max_radial: 0.0,
            },
            RigidBody::Dynamic,
            Density(7.85e-3),
            Friction::new(friction),
            NeverSleep,
            Mesh3d(nut_mesh.clone()),
            MeshMaterial3d(materials.add(StandardMaterial {
                base_color: colour,
                metallic: 0.5,
                perceptual_roughness: 0.4,
                ..default()
            })),
            Collider::solid(nut_solid.clone()),
            Transform::from_xyz(x, 0.0, start_z(&spec)),
        ));
    }
    support::spawn_camera_and_lights(
        &mut commands,
        Vec3::new(0.0, -62.0, 30.0),
        Vec3::new(0.0, 0.0, 12.0),
        Vec3::Z,
    );
}

/// Records each nut's pose after every step, and the largest intersection volume on it.
fn track(
    world: Res<bevy_interfere::PhysicsWorld>,
    mut volumes: MessageReader<IntersectionVolumeMessage>,
    mut nuts: Query<(Entity, &mut Nut, &Transform)>,
) {
    let volumes: Vec<_> = volumes.read().copied().collect();
    for (entity, mut nut, t) in &mut nuts {
        let twist = twist_about_z(t.rotation);
        let step = wrap(twist - nut.last_twist);
        nut.theta += step;
        nut.last_twist = twist;
        let sample = (world.time(), f64::from(t.translation.z), nut.theta);
        nut.samples.push(sample);
        let axis = t.rotation * Vec3::Z;
        nut.max_tilt = nut.max_tilt.max(f64::from(axis.z.clamp(-1.0, 1.0)).acos());
        let bolt_x = if nut.name == "free" { -BOLT_X } else { BOLT_X };
        let radial = Vec2::new(t.translation.x - bolt_x, t.translation.y).length();
        nut.max_radial = nut.max_radial.max(f64::from(radial));
        let step_volume = volumes
            .iter()
            .filter(|v| v.a == entity || v.b == entity)
            .fold(0.0f32, |m, v| m.max(v.volume));
        nut.volumes.push(step_volume);
        nut.max_volume = nut.max_volume.max(step_volume);
    }
}

/// Least-squares slope of z against θ.
fn slope(samples: &[(f64, f64, f64)]) -> Option<f64> {
    let n = samples.len() as f64;
    if samples.len() < 2 {
        return None;
    }
    let (mt, mz) = samples
        .iter()
        .fold((0.0, 0.0), |(a, b), s| (a + s.2 / n, b + s.1 / n));
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for s in samples {
        sxy += (s.2 - mt) * (s.1 - mz);
        sxx += (s.2 - mt) * (s.2 - mt);
    }
    (sxx > 0.0).then(|| sxy / sxx)
}

/// Gravity, mm/s².
const G: f64 = 9810.0;

/// The turns of a rigid nut screwing down a frictionless thread from rest for `t` seconds under
/// gravity alone: the screw motion `z = P θ / 2π` leaves one degree of freedom with kinetic
/// energy `½ (m + I (2π/P)²) ż²`, so `z̈ = g / (1 + (I/m)(2π/P)²)`, `I` the nut's moment of
/// inertia about its axis (about 800 times `m` here: the nut spins far more than it falls).
fn ideal_turns(solid: &interfere_geometry::Solid, spec: &ThreadSpec, t: f64) -> f64 {
    let pitch = f64::from(spec.pitch);
    let mass = interfere_dynamics::mass_properties(solid, 1.0).expect("a closed nut");
    let k = mass.inertia.z_axis.z / mass.mass * (TAU / pitch).powi(2);
    0.5 * G / (1.0 + k) * t * t / pitch
}

/// The report of one nut (`solid`: the nut's mesh, for the rigid ideal).
fn nut_report(
    nut: &Nut,
    spec: &ThreadSpec,
    solid: &interfere_geometry::Solid,
) -> serde_json::Value {
    let pitch = f64::from(spec.pitch);
    let z0 = f64::from(start_z(spec));
    let end = nut.samples.last().copied().unwrap_or((0.0, z0, 0.0));
    let (dz, dtheta) = (end.1 - z0, end.2);
    let turns = dtheta / TAU;
    let axial_play = f64::from(axial_play(spec));
    // The thread is judged while the nut is wholly on it: its bottom face (its frame) above the
    // bolt's tip at z = 0. A free nut run long enough (four times the documented 150 frames)
    // unscrews off the tip and falls, as it should.
    let on_thread: Vec<(f64, f64, f64)> = nut
        .samples
        .iter()
        .copied()
        .take_while(|s| s.1 >= 0.0)
        .collect();
    let left_thread = on_thread.len() < nut.samples.len();
    let last_on = on_thread.last().copied().unwrap_or((0.0, z0, 0.0));
    let turns_on_thread = last_on.2 / TAU;
    // Deviation from the helix through the start pose: z − z0 − P θ / 2π.
    let residuals: Vec<f64> = on_thread
        .iter()
        .map(|s| s.1 - z0 - pitch * s.2 / TAU)
        .collect();
    let max_residual = residuals.iter().fold(0.0f64, |m, r| m.max(r.abs()));
    // The largest change of that deviation from one sample (physics step) to the next: how far
    // the nut jumps across its axial play in a step instead of following the thread (a rigid
    // nut sliding on its lower flanks keeps it constant). Reported, not a criterion (issue 28:
    // the contact stage's look ahead does not see the step's gravity, 0.17 mm of fall at 240 Hz,
    // three times the play, so the nut lands on flanks it has no rows for and is pushed back).
    let max_step_jump = residuals
        .windows(2)
        .fold(0.0f64, |m, w| m.max((w[1] - w[0]).abs()));
    // A pitch is only implied by a real rotation (the locked nut turns by micro-radians).
    let implied_pitch = (turns_on_thread.abs() > 0.01).then(|| (last_on.1 - z0) / turns_on_thread);
    // The fit over the samples after the first quarter turn (the start settles into the play).
    let engaged: Vec<_> = on_thread
        .iter()
        .copied()
        .filter(|s| s.2.abs() > TAU / 4.0)
        .collect();
    let fitted_pitch = slope(&engaged).map(|s| s * TAU);
    let mut v = serde_json::json!({
        "friction": nut.friction,
        "axial_travel_mm": dz,
        "rotation_turns": turns,
        "rotation_turns_on_thread": turns_on_thread,
        "left_the_thread": left_thread,
        "pitch_mm": pitch,
        "implied_pitch_mm": implied_pitch,
        "implied_pitch_error": implied_pitch.map(|p| (p / pitch - 1.0).abs()),
        "fitted_pitch_after_quarter_turn_mm": fitted_pitch,
        "max_helix_deviation_on_thread_mm": max_residual,
        "max_step_jump_off_helix_mm": max_step_jump,
        "flank_axial_play_mm": axial_play,
        "max_intersection_volume_mm3": nut.max_volume,
        "intersection_volume_every_20_steps_mm3": nut.volumes.iter().step_by(20).collect::<Vec<_>>(),
        "max_tilt_deg": nut.max_tilt.to_degrees(),
        "max_off_axis_mm": nut.max_radial,
    });
    if let serde_json::Value::Object(map) = &mut v {
        if nut.name == "free" {
            // Unscrews: at least half a turn downwards (a nut held by its contact would not
            // turn), along the pitch within 5 %, and never a flank jump (a quarter pitch off the
            // helix would mean the thread was crossed). Reported beside it: the turns of a
            // frictionless rigid nut over the same time on the thread, and the fraction of them
            // made (what the contact does not dissipate); not a criterion.
            let ideal = ideal_turns(solid, spec, last_on.0);
            map.insert("ideal_frictionless_turns_on_thread".into(), ideal.into());
            map.insert(
                "fraction_of_ideal_turns".into(),
                (-turns_on_thread / ideal).into(),
            );
            map.insert(
                "unscrewed_half_a_turn".into(),
                (turns_on_thread <= -0.5 && dz < 0.0).into(),
            );
            map.insert(
                "follows_pitch_within_5_percent".into(),
                implied_pitch
                    .map(|p| (p / pitch - 1.0).abs() < 0.05)
                    .unwrap_or(false)
                    .into(),
            );
            map.insert("no_tunnelling".into(), (max_residual < pitch / 4.0).into());
        } else {
            // Stays put: within the flank play axially, under a hundredth of a turn.
            let stayed = dz.abs() <= axial_play + 0.02 && turns.abs() < 0.01;
            map.insert("stayed_put".into(), stayed.into());
        }
    }
    v
}

fn main() {
    // 150 frames of 1/240 s: the free nut turns about once (a frictionless rigid nut would turn
    // 1.56 times).
    let args = DemoArgs::parse(
        150,
        " [--volume exact|uniform] [--spacing MM] [--locked-friction MU] [--columns N] [--backend cpu|gpu|gpu-blocking]",
    );
    let spec = ThreadSpec {
        columns: args.parsed("--columns", 64),
        ..ThreadSpec::M10
    };
    // The parts are built from --columns: refuse a bad value here, with its reason.
    support::or_exit("--columns", bolt(&spec, 24.0).and(nut(&spec, 8.0)));
    let (volume, spacing) = args.volume_method(0.1);
    let locked_friction: f32 = args.parsed("--locked-friction", 0.2);
    let backend = args.backend();
    let mut app = support::base_app(&args, "Interfere: nut and bolt", HZ);
    app.insert_resource(backend)
        .insert_resource(Config {
            spec,
            locked_friction,
        })
        .insert_resource(PhysicsSettings {
            gravity: Vec3::new(0.0, 0.0, -G as f32),
            volume,
            max_rays_per_pair: 1 << 22,
            substeps: 1,
            // The solver's defaults are for metres; lengths here are millimetres, and the slops
            // must stay well below the 0.058 mm flank play.
            solver: SolverSettings {
                restitution_threshold: 200.0,
                static_friction_threshold: 10.0,
                linear_slop: 0.005,
                volume_slop_depth: 0.005,
                ..default()
            },
            ..default()
        })
        .init_resource::<support::StageLog>()
        .add_plugins(InterferePlugins)
        .add_systems(Startup, setup)
        .add_systems(FixedLast, (track, support::log_stages));
    support::run(app, &args, move |world| {
        let time = world.resource::<bevy_interfere::PhysicsWorld>().time();
        let stats = world.resource::<PhysicsStats>().clone();
        let mut q = world.query::<&Nut>();
        let mut out = serde_json::Map::new();
        let mut ok = true;
        let nut_solid = nut(&spec, 8.0).expect("checked in main");
        for nut in q.iter(world) {
            let r = nut_report(nut, &spec, &nut_solid);
            for key in [
                "unscrewed_half_a_turn",
                "follows_pitch_within_5_percent",
                "no_tunnelling",
                "stayed_put",
            ] {
                if let Some(b) = r.get(key).and_then(|b| b.as_bool()) {
                    ok &= b;
                }
            }
            out.insert(format!("{}_nut", nut.name), r);
        }
        out.insert("scene".into(), "nut_and_bolt".into());
        out.insert(
            "backend".into(),
            world.resource::<support::StageLog>().backend_report(),
        );
        out.insert(
            "physics_ms".into(),
            world.resource::<support::StageLog>().timing_report(),
        );
        out.insert("simulated_s".into(), time.into());
        out.insert("thread".into(), "M10x1.5 ISO 68-1".into());
        out.insert("columns".into(), spec.columns.into());
        out.insert("radial_clearance_mm".into(), spec.clearance.into());
        out.insert(
            "self_locking_friction".into(),
            spec.self_locking_friction().into(),
        );
        out.insert(
            "volume".into(),
            DemoArgs::volume_label(spacing, "mm").into(),
        );
        out.insert(
            "bolt_triangles".into(),
            bolt(&spec, 24.0)
                .expect("checked in main")
                .triangle_count()
                .into(),
        );
        out.insert("nut_triangles".into(), nut_solid.triangle_count().into());
        out.insert("nut_volume_mm3".into(), nut_solid.volume().into());
        out.insert("last_step_rays".into(), stats.step.rays.into());
        out.insert("all_criteria_met".into(), ok.into());
        serde_json::Value::Object(out)
    });
}

//! Playground: the game-developer API in one scene — forces and impulses, collision layers, a
//! sensor zone and spatial queries — with a report that checks each against its physics.
//!
//! ```text
//! cargo run --release --example playground -- [--backend cpu|gpu|gpu-blocking]
//!     [--headless --frames N --screenshot out.png --report out.json]
//! ```
//!
//! On a static floor (layer `GROUND`):
//! - a **crate** gets a one-shot `ExternalImpulse` and slides, with friction, into
//! - a **sensor zone** (`Sensor`): it reports the crate (collision and volume messages flagged
//!   `sensor`) and exerts nothing: a **ball** dropped through it follows the integrator's free
//!   fall, step for step, until it nears the floor;
//! - a **ghost** in layer `GHOST`, whose filters leave out `GROUND`, falls through the floor;
//! - a **hover** box carries an `ExternalForce` equal to its weight and stays where it started.
//!
//! After the last frame, `SpatialQuery` casts a ray down onto the crate (first hit: its top
//! face; all hits: the crate's two faces and the floor's, the crate's bottom and the floor's top
//! within 1 mm of each other in either order: the resting contact overlaps by up to the slop), asks which bodies contain the crate's
//! centre (exact containment, with and without sensors), which interfere with a small cube placed
//! there (exact), and which boxes overlap the hover box's. The report lists each check and exits
//! non-zero when one fails.

#[path = "support/mod.rs"]
mod support;

use bevy::ecs::system::SystemState;
use bevy::prelude::*;
use bevy_interfere::ColliderShape;
use bevy_interfere::mesh_convert::{Shading, bevy_mesh_from_trimesh};
use bevy_interfere::prelude::*;
use interfere_geometry::shapes;
use support::DemoArgs;

const HZ: f64 = 60.0;
const GROUND: LayerMask = LayerMask::layer(0);
const GHOST: LayerMask = LayerMask::layer(1);
const CRATE_HALF: f32 = 0.15;
const CRATE_MASS: f32 = 2.0;
/// The crate's kick (N·s): 2 m/s on a 2 kg crate.
const KICK: Vec3 = Vec3::new(4.0, 0.0, 0.0);
const BALL_RADIUS: f32 = 0.1;
const ZONE_CENTRE: Vec3 = Vec3::new(0.55, 0.35, 0.0);
const ZONE_HALF: Vec3 = Vec3::new(0.45, 0.3, 0.45);
const HOVER_START: Vec3 = Vec3::new(-0.7, 0.8, -0.6);

#[derive(Component, Clone, Copy, PartialEq, Eq, Debug)]
enum Role {
    Floor,
    Crate,
    Zone,
    Ball,
    Ghost,
    Hover,
}

/// What the fixed steps recorded.
#[derive(Resource, Default, Clone)]
struct Record {
    /// The ball's height and vertical speed after each step (once it joined the world).
    ball: Vec<(f32, f32)>,
    /// The crate's horizontal velocity after the first step it moved.
    crate_kick_velocity: Option<Vec3>,
    /// Sensor messages with the zone: collision started, volume messages with the crate.
    zone_started: Vec<Entity>,
    zone_crate_volume: f32,
    /// Non-sensor messages that involve the zone (must stay empty).
    zone_forces: usize,
}

fn entity_of(world: &mut World, role: Role) -> Entity {
    let mut q = world.query::<(Entity, &Role)>();
    q.iter(world)
        .find(|(_, r)| **r == role)
        .map(|(e, _)| e)
        .expect("spawned at start-up")
}

fn setup(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
    settings: Res<PhysicsSettings>,
) {
    support::spawn_camera_and_lights(
        &mut commands,
        Vec3::new(1.2, 1.6, 3.2),
        Vec3::new(0.0, 0.3, 0.0),
        Vec3::Y,
    );
    let ball = shapes::icosphere(BALL_RADIUS, 2).expect("a valid sphere");
    let ball_look = (
        Mesh3d(meshes.add(bevy_mesh_from_trimesh(&ball, Shading::Smooth))),
        MeshMaterial3d(materials.add(Color::srgb(0.3, 0.45, 0.9))),
    );
    let mut cuboid = |half: Vec3, colour: Color| {
        let solid = shapes::cuboid(half).expect("the playground's boxes are valid");
        (
            Mesh3d(meshes.add(bevy_mesh_from_trimesh(&solid, Shading::Flat))),
            MeshMaterial3d(materials.add(colour)),
            Collider::solid(solid),
        )
    };
    commands.spawn((
        Role::Floor,
        Name::new("floor"),
        RigidBody::Static,
        cuboid(Vec3::new(2.0, 0.25, 1.5), Color::srgb(0.5, 0.52, 0.55)),
        Transform::from_xyz(0.0, -0.25, 0.0),
        Friction::new(0.3),
        CollisionLayers::new(GROUND, LayerMask::ALL),
    ));
    commands.spawn((
        Role::Crate,
        Name::new("crate"),
        RigidBody::Dynamic,
        cuboid(Vec3::splat(CRATE_HALF), Color::srgb(0.85, 0.55, 0.2)),
        Transform::from_xyz(-0.25, CRATE_HALF, 0.0),
        Mass(CRATE_MASS),
        Friction::new(0.3),
        ExternalImpulse::new(KICK),
        NeverSleep,
    ));
    commands.spawn((
        Role::Zone,
        Name::new("sensor zone"),
        RigidBody::Static,
        Sensor,
        cuboid(ZONE_HALF, Color::srgba(0.2, 0.8, 0.4, 0.25)),
        Transform::from_translation(ZONE_CENTRE),
    ));
    commands.spawn((
        Role::Ball,
        Name::new("ball"),
        RigidBody::Dynamic,
        ball_look,
        Collider::solid(ball),
        Transform::from_xyz(ZONE_CENTRE.x, 1.5, 0.3),
    ));
    commands.spawn((
        Role::Ghost,
        Name::new("ghost"),
        RigidBody::Dynamic,
        cuboid(Vec3::splat(0.1), Color::srgba(0.7, 0.7, 0.9, 0.5)),
        Transform::from_xyz(-1.2, 0.5, 0.6),
        CollisionLayers::new(GHOST, LayerMask(!GROUND.0)),
    ));
    // Its weight, cancelled: mass 1 kg, force −g.
    commands.spawn((
        Role::Hover,
        Name::new("hover"),
        RigidBody::Dynamic,
        cuboid(Vec3::splat(0.1), Color::srgb(0.8, 0.3, 0.6)),
        Transform::from_translation(HOVER_START),
        Mass(1.0),
        ExternalForce::new(-settings.gravity),
        NeverSleep,
    ));
}

/// Records the ball's fall, the crate's kick and the zone's messages after each step.
fn record(
    mut rec: ResMut<Record>,
    bodies: Query<(Entity, &Role, &Transform, &LinearVelocity)>,
    mut started: MessageReader<CollisionStarted>,
    mut contacts: MessageReader<ContactMessage>,
    mut volumes: MessageReader<IntersectionVolumeMessage>,
) {
    let role = |e: Entity| bodies.get(e).ok().map(|(_, r, _, _)| *r);
    for (_, r, t, v) in &bodies {
        match r {
            Role::Ball if v.0 != Vec3::ZERO || !rec.ball.is_empty() => {
                rec.ball.push((t.translation.y, v.0.y));
            }
            Role::Crate if rec.crate_kick_velocity.is_none() && v.0 != Vec3::ZERO => {
                rec.crate_kick_velocity = Some(v.0);
            }
            _ => {}
        }
    }
    for CollisionStarted(a, b) in started.read() {
        match (role(*a), role(*b)) {
            (Some(Role::Zone), _) => rec.zone_started.push(*b),
            (_, Some(Role::Zone)) => rec.zone_started.push(*a),
            _ => {}
        }
    }
    for c in contacts.read() {
        let zone = role(c.a) == Some(Role::Zone) || role(c.b) == Some(Role::Zone);
        rec.zone_forces += usize::from(zone && !c.sensor);
    }
    for v in volumes.read() {
        let (ra, rb) = (role(v.a), role(v.b));
        let zone = ra == Some(Role::Zone) || rb == Some(Role::Zone);
        rec.zone_forces += usize::from(zone && !v.sensor);
        if zone && (ra == Some(Role::Crate) || rb == Some(Role::Crate)) {
            rec.zone_crate_volume = v.volume;
        }
    }
}

/// The integrator's free fall (semi-implicit Euler per substep) from `(y, vy)` over one step.
fn free_fall_step(mut y: f64, mut vy: f64, g: f64, dt: f64, substeps: u32) -> (f64, f64) {
    let h = dt / f64::from(substeps);
    for _ in 0..substeps {
        vy += g * h;
        y += vy * h;
    }
    (y, vy)
}

/// The checks, from the final world.
fn report(world: &mut World) -> serde_json::Value {
    let settings = world.resource::<PhysicsSettings>().clone();
    let [floor, crate_, zone, ghost, hover] = [
        Role::Floor,
        Role::Crate,
        Role::Zone,
        Role::Ghost,
        Role::Hover,
    ]
    .map(|r| entity_of(world, r));
    let pos = |world: &World, e: Entity| world.get::<Transform>(e).expect("a body").translation;
    let (crate_at, ghost_at, hover_at) = (pos(world, crate_), pos(world, ghost), pos(world, hover));
    let rec = world.resource::<Record>().clone();

    // Impulse: horizontal momentum changed by the kick (less at most one step of floor
    // friction, μ m g dt = 2.5 % of it; the vertical part is the step's gravity).
    let kick_v = rec.crate_kick_velocity.unwrap_or(Vec3::ZERO);
    let horizontal = |v: Vec3| Vec3::new(v.x, 0.0, v.z);
    let kick_error = (horizontal(kick_v * CRATE_MASS) - KICK).length() / KICK.length();
    let kick_ok = kick_error < 0.05;

    // Sensor: the crate entered the zone and was reported with a volume; the zone exerted
    // nothing on anything; the ball fell freely while in or above it.
    let zone_reported = rec.zone_started.contains(&crate_) && rec.zone_crate_volume > 0.0;
    let g = f64::from(settings.gravity.y);
    let dt = 1.0 / HZ;
    let mut fall_error = 0.0f64;
    let mut fall_steps = 0;
    if let Some(&(y0, v0)) = rec.ball.first() {
        let (mut y, mut vy) = (f64::from(y0), f64::from(v0));
        for &(ry, _) in &rec.ball[1..] {
            (y, vy) = free_fall_step(y, vy, g, dt, settings.substeps);
            // Until the ball is within 2 cm of the floor (where it lands).
            if y - f64::from(BALL_RADIUS) < 0.02 {
                break;
            }
            fall_error = fall_error.max((f64::from(ry) - y).abs());
            fall_steps += 1;
        }
    }
    let passed_zone_top = rec.ball.iter().any(|&(y, _)| y < ZONE_CENTRE.y);
    let free_fall_ok = fall_steps >= 10 && fall_error < 1e-4 && passed_zone_top;
    let sensor_ok = zone_reported && rec.zone_forces == 0 && free_fall_ok;

    // Layers: the ghost fell through the floor; the crate did not.
    let layers_ok = ghost_at.y < -0.5 && crate_at.y > 0.0;
    // Force: the hover box stayed put.
    let hover_drift = (hover_at - HOVER_START).length();
    let hover_ok = hover_drift < 1e-3;

    // Spatial queries, as a game system would make them.
    let mut state = SystemState::<SpatialQuery>::new(world);
    let query = state
        .get(world)
        .expect("the physics world exists while the plugin runs");
    let solid_only = SpatialQueryFilter::default().without_sensors();
    let top = Vec3::new(crate_at.x, 2.0, crate_at.z);
    let first = query.cast_ray(top, Dir3::NEG_Y, 5.0, false, &solid_only);
    let crate_top = crate_at.y + CRATE_HALF;
    let ray_ok = first.is_some_and(|h| {
        h.entity == crate_ && (h.point.y - crate_top).abs() < 2e-3 && h.normal.y > 0.99
    });
    let all_hits = query.ray_hits(top, Dir3::NEG_Y, 5.0, false, &solid_only);
    let hits: Vec<Entity> = all_hits.iter().map(|h| h.entity).collect();
    // In order of distance: the crate's top, then its bottom and the floor's top, which a
    // resting contact overlaps by up to the solver's slop (0.1 mm), so they may come in either
    // order but within a millimetre of each other; then the floor's bottom.
    let at = |e: Entity, k: usize| all_hits.iter().filter(|h| h.entity == e).nth(k);
    let all_hits_ok = hits.len() == 4
        && hits[0] == crate_
        && hits[3] == floor
        && match (at(crate_, 1), at(floor, 0)) {
            (Some(bottom), Some(floor_top)) => (bottom.distance - floor_top.distance).abs() < 1e-3,
            _ => false,
        };
    let containing = query.point_intersections(crate_at, &SpatialQueryFilter::default());
    let containing_solid = query.point_intersections(crate_at, &solid_only);
    let point_ok = containing_solid == vec![crate_]
        && containing.contains(&zone) == zone_contains(crate_at)
        && containing.contains(&crate_);
    let probe = ColliderShape::new(shapes::cuboid(Vec3::splat(0.05)).expect("a valid box"))
        .expect("a closed box");
    let overlapping = query.shape_intersections(&probe, crate_at, Quat::IDENTITY, &solid_only);
    let shape_ok = overlapping == vec![crate_];
    let near_hover = query.aabb_intersections_with_aabb(
        bevy::math::bounding::Aabb3d::new(hover_at, Vec3::splat(0.05)),
        &SpatialQueryFilter::default(),
    );
    let aabb_ok = near_hover == vec![hover];
    let queries_ok = ray_ok && all_hits_ok && point_ok && shape_ok && aabb_ok;
    let name = |world: &World, e: Entity| {
        world
            .get::<Name>(e)
            .map_or_else(|| format!("{e:?}"), |n| n.to_string())
    };
    let names = |world: &World, v: &[Entity]| v.iter().map(|&e| name(world, e)).collect::<Vec<_>>();
    let log = world.resource::<support::StageLog>();
    serde_json::json!({
        "scene": "playground",
        "criteria": {
            "impulse_changes_momentum_by_the_impulse_within_5_percent": kick_ok,
            "sensor_reports_the_crate_and_exerts_nothing": sensor_ok,
            "ghost_layer_falls_through_the_floor": layers_ok,
            "force_equal_to_weight_holds_the_hover_box_within_1mm": hover_ok,
            "spatial_queries_match_the_scene": queries_ok,
        },
        "all_criteria_met": kick_ok && sensor_ok && layers_ok && hover_ok && queries_ok,
        "backend": log.backend_report(),
        "physics_ms": log.timing_report(),
        "impulse": {
            "kick": KICK.to_array(),
            "momentum_after": (kick_v * CRATE_MASS).to_array(),
            "relative_error": kick_error,
        },
        "sensor": {
            "zone_started_with": names(world, &rec.zone_started),
            "crate_volume_in_zone_m3": rec.zone_crate_volume,
            "forces_from_zone_messages": rec.zone_forces,
            "ball_free_fall_steps_checked": fall_steps,
            "ball_largest_deviation_from_free_fall_m": fall_error,
        },
        "layers": { "ghost_y": ghost_at.y, "crate_y": crate_at.y },
        "force": { "hover_drift_m": hover_drift },
        "queries": {
            "ray_first_hit": first.map(|h| serde_json::json!({
                "entity": name(world, h.entity),
                "point": h.point.to_array(),
                "normal": h.normal.to_array(),
                "expected_y": crate_top,
            })),
            "ray_all_hits": names(world, &hits),
            "containing_crate_centre": names(world, &containing),
            "containing_crate_centre_without_sensors": names(world, &containing_solid),
            "interfering_with_probe_cube": names(world, &overlapping),
            "aabb_around_hover": names(world, &near_hover),
            "ray_ok": ray_ok, "all_hits_ok": all_hits_ok, "point_ok": point_ok,
            "shape_ok": shape_ok, "aabb_ok": aabb_ok,
        },
        "crate_final": crate_at.to_array(),
    })
}

/// Whether `p` lies inside the sensor zone's box.
fn zone_contains(p: Vec3) -> bool {
    ((p - ZONE_CENTRE).abs() - ZONE_HALF).max_element() <= 0.0
}

fn main() {
    let args = DemoArgs::parse(120, "");
    let backend = args.backend();
    let mut app = support::base_app(&args, "Interfere: playground", HZ);
    app.insert_resource(backend)
        .init_resource::<Record>()
        .init_resource::<support::StageLog>()
        .add_plugins(InterferePlugins)
        .add_systems(Startup, setup)
        .add_systems(FixedLast, (record, support::log_stages));
    support::run(app, &args, report);
}

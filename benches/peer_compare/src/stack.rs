//! The stack scene (issue 28's peer scene, `--scene stack`): ten 0.2 m cubes (density 1000,
//! friction 0.6) stacked on a static slab (friction 0.5, its top at `SLAB_TOP`), every other one
//! offset by 3 mm along x, each `gap` above the one below (the lowest `gap` above the slab), at
//! rest; the scene of `ten_box_stack_stands` in `crates/interfere_dynamics` (there z-up, here
//! y-up). Run by avian3d and bevy_rapier3d as the heap is, and by Interfere's `Simulation` in
//! this process (mesh cubes on a mesh slab, exact volume contacts, the default settings), so that
//! the three stand side by side from one run.
//!
//! Reported per engine (`stack` in its section): the largest horizontal distance any box
//! reached from where it was placed over the run (`max_drift`, sampled after every frame), the
//! top box's final horizontal offset, the deepest overlap of two neighbouring boxes and of the
//! lowest box with the slab at the end (from their vertices: for boxes this close to level,
//! the lowest vertex of the upper below the highest vertex of the lower), and whether the stack
//! still stands (every box within 5 cm of its column and above the one below).

use crate::{
    Args, BodyState, EngineRun, FIXED_HZ, GRAVITY, Placement, SLAB_FRICTION, SLAB_TOP, SUBSTEPS,
    StepLog, shape, to_bevy,
};
use bevy::math::{Quat, Vec3};
use interfere_dynamics::{
    Body, BodyShape, Material, MeshShape, Simulation, SimulationSettings, StepSettings,
};
use interfere_geometry::glam::{DQuat, DVec3};
use std::sync::Arc;
use std::time::Instant;

/// Boxes in the stack.
pub const BOXES: usize = 10;
/// The cube's half side, metres.
pub const CUBE_HALF: f32 = 0.1;
/// The shape kind of the cube (see `shape`).
pub const CUBE_KIND: usize = 4;
/// The slab's half extent in x and z (as Interfere's test: 3 m).
pub const SLAB_HALF: f32 = 3.0;
/// The offset of every other box along x, metres.
pub const OFFSET: f32 = 0.003;
/// The default gap between neighbours (`--gap`): 0.5 mm.
pub const DEFAULT_GAP: f32 = 5e-4;

/// The stack's boxes, bottom first.
pub fn placements(gap: f32) -> Vec<Placement> {
    (0..BOXES)
        .map(|i| Placement {
            kind: CUBE_KIND,
            position: Vec3::new(
                if i % 2 == 1 { OFFSET } else { 0.0 },
                SLAB_TOP + CUBE_HALF + gap + (2.0 * CUBE_HALF + gap) * i as f32,
                0.0,
            ),
            rotation: Quat::IDENTITY,
        })
        .collect()
}

/// The `stack` section of an engine's report (see the module documentation).
pub fn report(run: &EngineRun, gap: f32) -> serde_json::Value {
    let start = placements(gap);
    let (cube, _) = shape(CUBE_KIND);
    let mut boxes: Vec<&BodyState> = run.bodies.iter().collect();
    boxes.sort_by_key(|b| b.index);
    // Horizontal distance from the box's placement.
    let offset = |b: &BodyState| {
        let off = b.position - start[b.index.min(BOXES - 1)].position;
        Vec3::new(off.x, 0.0, off.z).length()
    };
    let extent = |b: &BodyState| {
        cube.vertices()
            .iter()
            .map(|&v| (b.position + b.rotation * to_bevy(v)).y)
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), y| {
                (lo.min(y), hi.max(y))
            })
    };
    let mut deepest_pair = 0.0f32;
    let mut stands = boxes.len() == BOXES;
    for (k, b) in boxes.iter().enumerate() {
        stands &= offset(b) < 0.05;
        if k > 0 {
            let (lo, _) = extent(b);
            let (_, hi) = extent(boxes[k - 1]);
            deepest_pair = deepest_pair.max(hi - lo);
            stands &= b.position.y > boxes[k - 1].position.y;
        }
    }
    let slab_depth = boxes.first().map_or(f32::NAN, |b| SLAB_TOP - extent(b).0);
    let top = boxes.last().map(|b| offset(b));
    serde_json::json!({
        "gap": gap,
        "stands": stands,
        "max_drift": run.drift.iter().copied().fold(0.0f32, f32::max),
        "top_final_offset": top,
        // Neighbours by index are neighbours in space only while the stack stands.
        "deepest_box_overlap": if stands { Some(deepest_pair) } else { None },
        "lowest_box_below_slab_top": slab_depth,
        "asleep": boxes.iter().filter(|b| b.asleep).count(),
        "fastest_speed": boxes.iter().map(|b| b.speed).fold(0.0f32, f32::max),
    })
}

/// The stack on Interfere's `Simulation` (exact volume contacts, default solver and sleeping; a
/// 12-triangle mesh cube per box and a mesh slab), `args.frames` fixed steps of 1/60 s with 4
/// substeps, in this process. Each body's largest horizontal drift is sampled after every step,
/// as the peers' are after every frame.
pub fn run_interfere(args: &Args, gap: f32) -> Result<EngineRun, String> {
    let err = |e: &dyn std::fmt::Display| format!("interfere: {e}");
    let started = Instant::now();
    let mut settings = SimulationSettings::default();
    settings.world = StepSettings {
        gravity: DVec3::new(0.0, -f64::from(GRAVITY), 0.0),
        dt: 1.0 / FIXED_HZ,
        substeps: SUBSTEPS as u32,
        ..settings.world
    };
    let mut sim = Simulation::new(settings).map_err(|e| err(&e))?;
    let slab = interfere_geometry::shapes::cuboid(interfere_geometry::glam::Vec3::new(
        SLAB_HALF, 0.25, SLAB_HALF,
    ))
    .map_err(|e| err(&e))?;
    let slab_shape = Arc::new(MeshShape::new(slab).map_err(|e| err(&e))?);
    let slab_body = Body::fixed(
        DVec3::new(0.0, f64::from(SLAB_TOP) - 0.25, 0.0),
        DQuat::IDENTITY,
    )
    .map_err(|e| err(&e))?
    .with_material(Material::new(f64::from(SLAB_FRICTION), 0.0));
    sim.insert(slab_body, Some(BodyShape::mesh(slab_shape)))
        .map_err(|e| err(&e))?;
    let cube = Arc::new(MeshShape::new(shape(CUBE_KIND).0).map_err(|e| err(&e))?);
    let start = placements(gap);
    let mut handles = Vec::new();
    for p in &start {
        let at = DVec3::new(
            f64::from(p.position.x),
            f64::from(p.position.y),
            f64::from(p.position.z),
        );
        let body = Body::dynamic(
            &cube.mass_at(f64::from(crate::DENSITY)),
            at,
            DQuat::IDENTITY,
        )
        .map_err(|e| err(&e))?
        .with_material(Material::new(f64::from(crate::BODY_FRICTION), 0.0));
        handles.push(
            sim.insert(body, Some(BodyShape::mesh(cube.clone())))
                .map_err(|e| err(&e))?,
        );
    }
    let setup_ms = started.elapsed().as_secs_f64() * 1e3;
    let mut log = StepLog::default();
    let mut tracker = crate::Tracker::for_scene(args, &start);
    let mut update_ms = Vec::new();
    let loop_started = Instant::now();
    for _ in 0..args.frames {
        let t = Instant::now();
        sim.step();
        let ms = t.elapsed().as_secs_f64() * 1e3;
        update_ms.push(ms);
        log.step_ms.push(ms);
        let s = sim.stats();
        log.broad_ms.push(s.broad_phase_ms);
        log.narrow_ms.push(s.narrow_phase_ms + s.volume_ms);
        log.solver_ms.push(s.solver_ms);
        log.touching_pairs.push(sim.pair_contacts().len());
        log.contact_count.push(s.volume_contacts);
        for (i, &h) in handles.iter().enumerate() {
            if let Some(b) = sim.body(h) {
                let x = b.position.as_vec3();
                tracker.record(i, Vec3::new(x.x, x.y, x.z));
            }
        }
    }
    let wall_s = loop_started.elapsed().as_secs_f64();
    let bodies = handles
        .iter()
        .enumerate()
        .filter_map(|(i, &h)| {
            // The cube's centre of mass is its mesh origin: the body pose is the mesh pose.
            let b = sim.body(h)?;
            let (x, q) = (b.position, b.orientation);
            Some(BodyState {
                index: i,
                kind: CUBE_KIND,
                position: Vec3::new(x.x as f32, x.y as f32, x.z as f32),
                rotation: Quat::from_xyzw(q.x as f32, q.y as f32, q.z as f32, q.w as f32),
                speed: b.linear_velocity.length() as f32,
                asleep: b.sleeping,
            })
        })
        .collect();
    Ok(EngineRun {
        engine: "interfere",
        shapes: Vec::new(),
        collider_build_ms: 0.0,
        setup_ms,
        log,
        update_ms,
        wall_s,
        cpu_s: None,
        threads: serde_json::json!({ "contact_threads": "interfere default" }),
        settings: serde_json::json!({
            "version": "interfere_dynamics (this workspace), exact volume contacts",
            "substeps": SUBSTEPS,
            "sleep": "SleepSettings::default (0.02 m/s, 0.05 rad/s, 1 s; islands)",
            "friction": "0.6 boxes, 0.5 slab, geometric mean (0.548 box on slab; the peers average: 0.55)",
        }),
        bodies,
        drift: tracker.drift,
    })
}

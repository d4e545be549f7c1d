//! One step of a [`Simulation`] with `n` mesh boxes (unit cubes, 12 triangles each) resting on a
//! half-space ground, side by side and apart: the broad phase (sweep and prune with speculative
//! margins), the exact mesh–half-space volume contacts (Wang–Faure–Pai 2012 §2.2 with the
//! analytic half-space) and the sequential-impulse solver (Lin–Manocha 1996 §5) with sleeping
//! off, so every box is stepped every time.
//!
//! `cargo bench -p interfere_dynamics --bench resting_boxes` prints criterion's `time:` line for
//! 100 and 1,000 boxes (one step, after they settled for a second).

// `criterion_group!` expands to an undocumented public function.
#![allow(missing_docs)]

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use interfere_dynamics::{
    Body, BodyShape, HalfSpace, Material, MeshShape, Simulation, SimulationSettings, SleepSettings,
};
use interfere_geometry::glam::{DQuat, DVec3, Vec3};
use interfere_geometry::shapes::cuboid;
use std::sync::Arc;

/// `n` unit boxes (half extent 0.5) on a grid, resting on the half-space `z ≤ 0`.
fn boxes_on_ground(n: usize) -> Simulation {
    let settings = SimulationSettings {
        sleep: SleepSettings {
            enabled: false,
            ..SleepSettings::default()
        },
        ..SimulationSettings::default()
    };
    let mut sim = Simulation::new(settings).expect("default settings are valid");
    let ground = Body::fixed(DVec3::ZERO, DQuat::IDENTITY)
        .expect("identity pose is valid")
        .with_material(Material::new(0.5, 0.0));
    let half = HalfSpace::new(DVec3::Z, DVec3::ZERO).expect("unit normal");
    sim.insert(ground, Some(BodyShape::half_space(half)))
        .expect("a ground joins");
    let shape = Arc::new(MeshShape::new(cuboid(Vec3::splat(0.5)).unwrap()).unwrap());
    let props = shape.mass_at(1000.0);
    let side = (n as f64).sqrt().ceil().max(1.0) as usize;
    for i in 0..n {
        let (x, y) = ((i % side) as f64 * 1.5, (i / side) as f64 * 1.5);
        let body = Body::dynamic(&props, DVec3::new(x, y, 0.5), DQuat::IDENTITY)
            .expect("valid box")
            .with_material(Material::new(0.5, 0.0));
        sim.insert(body, Some(BodyShape::mesh(shape.clone())))
            .expect("a box joins");
    }
    sim
}

fn step_boxes(c: &mut Criterion) {
    let mut group = c.benchmark_group("resting_boxes_step");
    group.sample_size(20);
    for n in [100, 1000] {
        let mut sim = boxes_on_ground(n);
        // Settle for a second into the resting state the step is measured in.
        for _ in 0..64 {
            sim.step();
        }
        group.bench_function(BenchmarkId::from_parameter(n), |b| b.iter(|| sim.step()));
    }
    group.finish();
}

criterion_group!(benches, step_boxes);
criterion_main!(benches);

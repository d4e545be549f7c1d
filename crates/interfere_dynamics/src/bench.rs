//! A timing scene: `n` boxes resting on a ground plane (point contacts from
//! [`HalfSpaceSource`]), used to measure the cost of the solver of Lin–Manocha 1996 §5 style
//! impulse dynamics per step.

use crate::body::{Material, RigidBody};
use crate::contact::{HalfSpaceSource, Plane};
use crate::mass::mass_properties;
use crate::world::{World, WorldSettings};
use interfere_geometry::glam::{DQuat, DVec3, Vec3};
use interfere_geometry::shapes::cuboid;
use std::time::Instant;

/// Builds `n` unit boxes (half extent 0.5) on a grid just above a static plane `z = 0`.
pub fn boxes_on_plane(n: usize) -> (World, HalfSpaceSource) {
    let mut world = World::new(WorldSettings::default()).expect("default settings are valid");
    let ground = world.add_body(
        RigidBody::fixed(DVec3::ZERO, DQuat::IDENTITY)
            .expect("identity pose is valid")
            .with_material(Material::new(0.5, 0.0)),
    );
    let mut source = HalfSpaceSource::new(0.02);
    source.add_plane(Plane::new(ground, DVec3::Z, DVec3::ZERO).expect("unit normal"));
    let solid = cuboid(Vec3::splat(0.5)).expect("a unit box is valid");
    let props = mass_properties(&solid, 1000.0).expect("a box has volume");
    let side = (n as f64).sqrt().ceil().max(1.0) as usize;
    for i in 0..n {
        let (x, y) = ((i % side) as f64 * 1.5, (i / side) as f64 * 1.5);
        let body = RigidBody::dynamic(&props, DVec3::new(x, y, 0.5), DQuat::IDENTITY)
            .expect("valid box")
            .with_material(Material::new(0.5, 0.0));
        let id = world.add_body(body);
        source.add_mesh(id, &solid);
    }
    (world, source)
}

/// Milliseconds per [`World::step`] for `n` boxes resting on a plane, averaged over `steps`
/// steps (at least one).
pub fn bench_boxes(n: usize, steps: usize) -> f64 {
    let (mut world, mut source) = boxes_on_plane(n);
    let steps = steps.max(1);
    let start = Instant::now();
    for _ in 0..steps {
        world.step(&mut source);
    }
    start.elapsed().as_secs_f64() * 1e3 / steps as f64
}

//! The experiment of Kitamura et al. 1995 (`kitamura-1995-parallel-colliding-faces.md`, §5):
//! two identical tessellated spheres approach each other with translation and rotation, timed in
//! the step where their faces first collide, serially and with both parallel algorithms.

use super::{
    Detection, KitamuraConfig, KitamuraError, MovingMesh, detect, detect_dynamic, detect_static,
};
use crate::pose::DPose;
use crate::shapes::uv_sphere;
use glam::{DMat3, DVec3};
use std::time::{Duration, Instant};

/// Timings of one sphere experiment (each the best of several runs).
#[derive(Clone, Debug, PartialEq)]
pub struct SphereBench {
    /// Faces of each sphere.
    pub faces_per_sphere: usize,
    /// Threads used by the parallel drivers.
    pub threads: usize,
    /// Octree depth.
    pub depth: u32,
    /// Distinct candidate pairs after step 3.
    pub candidates: usize,
    /// Colliding pairs after step 4.
    pub colliding: usize,
    /// Serial algorithm.
    pub serial: Duration,
    /// Static load distribution.
    pub static_time: Duration,
    /// Dynamic load distribution.
    pub dynamic_time: Duration,
}

/// The two converging unit spheres: a latitude-longitude sphere with about `faces` triangles
/// (`segments = round(√faces)` made even, `rings = segments / 2`; 3968 faces, the paper's
/// largest model, for `faces = 3968`), centres moving from `∓1.08` to `∓0.97` on x while turning
/// 3° about y and z, so that they touch within the step.
pub fn converging_spheres(faces: usize) -> Result<[MovingMesh; 2], KitamuraError> {
    let s = ((faces as f64).sqrt().round() as u32).clamp(4, 2048);
    let s = s + s % 2;
    let sphere = uv_sphere(1.0, s, s / 2)
        .expect("a unit sphere with 4..=2048 segments is within the generator's limits");
    let turn = 3f64.to_radians();
    let pose = |x: f64, angle: f64| DPose {
        rotation: DMat3::from_rotation_y(angle) * DMat3::from_rotation_z(angle),
        translation: DVec3::new(x, 0.0, 0.0),
    };
    Ok([
        MovingMesh::from_poses(&sphere, &pose(-1.08, 0.0), &pose(-0.97, turn))?,
        MovingMesh::from_poses(&sphere, &pose(1.08, 0.0), &pose(0.97, -turn))?,
    ])
}

/// Runs `f` `runs` times (at least once); the best time and the last detection.
pub fn best_of<F: FnMut() -> Result<Detection, KitamuraError>>(
    runs: usize,
    mut f: F,
) -> Result<(Duration, Detection), KitamuraError> {
    let mut best = Duration::MAX;
    let mut last = None;
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        let d = f()?;
        best = best.min(t.elapsed());
        last = Some(d);
    }
    // `runs.max(1)` iterations ran, so `last` is set.
    let d = last.unwrap_or(Detection {
        colliding: Vec::new(),
        candidates: 0,
    });
    Ok((best, d))
}

/// Times serial, static and dynamic detection on [`converging_spheres`]`(faces)` with an octree
/// of `depth` levels, `threads` threads for the parallel drivers, best of `runs` runs each.
pub fn bench_spheres(
    faces: usize,
    threads: usize,
    depth: u32,
    runs: usize,
) -> Result<SphereBench, KitamuraError> {
    let objects = converging_spheres(faces)?;
    let config = KitamuraConfig { depth };
    let (serial, d) = best_of(runs, || detect(&objects, &config))?;
    let (static_time, ds) = best_of(runs, || detect_static(&objects, &config, threads))?;
    let (dynamic_time, dd) = best_of(runs, || detect_dynamic(&objects, &config, threads))?;
    debug_assert_eq!(d, ds, "static differs from serial");
    debug_assert_eq!(d, dd, "dynamic differs from serial");
    Ok(SphereBench {
        faces_per_sphere: objects[0].face_count(),
        threads,
        depth,
        candidates: d.candidates,
        colliding: d.colliding.len(),
        serial,
        static_time,
        dynamic_time,
    })
}

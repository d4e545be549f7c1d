//! Times the uniform ray-sampled intersection volume (Wang, Faure & Pai 2012, section 2.2) of two
//! overlapping 5120-triangle icospheres at a few resolutions.
//!
//! `cargo run -p interfere_geometry --release --example volume_timing`

use interfere_geometry::glam::{DMat3, DVec3};
use interfere_geometry::{DPose, Sampling, UniformOptions, UniformVolume, shapes};
use std::time::Instant;

fn main() {
    let a = shapes::icosphere(1.0, 4).expect("valid sphere");
    let b = shapes::icosphere(1.0, 4).expect("valid sphere");
    let start = Instant::now();
    let uv = UniformVolume::new(&a, &b);
    println!(
        "{} + {} triangles, trees built in {:.3} ms",
        a.triangle_count(),
        b.triangle_count(),
        start.elapsed().as_secs_f64() * 1e3
    );
    let pose = DPose {
        rotation: DMat3::from_axis_angle(DVec3::new(1.0, 2.0, 3.0).normalize(), 0.7),
        translation: DVec3::new(0.9, 0.3, -0.2),
    };
    for r in [16, 32, 64, 128] {
        let options = UniformOptions {
            sampling: Sampling::Resolution(r),
            ..UniformOptions::default()
        };
        let reps = 10;
        let mut result = None;
        let start = Instant::now();
        for _ in 0..reps {
            result = uv.compute(&pose, &options).ok();
        }
        let ms = start.elapsed().as_secs_f64() * 1e3 / f64::from(reps);
        if let Some(res) = result {
            println!(
                "R = {r:4}: {ms:8.3} ms per query, {} lines, {} surface points, V = {:.6}, \
                 axis estimates {:.6?}, force {:.4?}",
                res.ray_count,
                res.points.len(),
                res.volume,
                res.axis_volumes,
                res.force
            );
        }
    }
}

//! Closest features of two convex hulls (Lin–Canny, Lin–Manocha 1996 §4.1) on a tumbling
//! trajectory: the walk warm-started from the previous frame's features (the coherent case the
//! paper is built for), the same walk restarted cold every query, and the brute-force oracle over
//! all feature pairs. The walk is checked against the oracle before anything is timed.
//!
//! `cargo bench -p interfere_geometry --bench closest_features` prints one `time:` line per
//! case: the time of one query (warm and cold: the mean over a 2,000-frame orbit).

// `criterion_group!` expands to an undocumented public function.
#![allow(missing_docs)]

use criterion::{Criterion, criterion_group, criterion_main};
use interfere_geometry::glam::{DMat3, DVec3, Vec3};
use interfere_geometry::{
    ClosestFeatures, DPose, Hull, HullFeatures, convex_hull, proximity_brute_force, shapes,
};
use std::hint::black_box;

const FRAMES: usize = 2000;

fn features_of(points: &[Vec3]) -> HullFeatures {
    let Ok(Hull::Solid(hull)) = convex_hull(points) else {
        panic!("an icosphere spans a volume");
    };
    HullFeatures::new(&hull).expect("features of a valid hull")
}

/// Frame `i` of the orbit: B circles A at distance 2 while turning about a fixed axis.
fn pose_at(i: usize) -> DPose {
    let t = i as f64 / FRAMES as f64 * std::f64::consts::TAU;
    DPose {
        rotation: DMat3::from_axis_angle(DVec3::new(1.0, 2.0, 3.0).normalize(), 3.0 * t),
        translation: DVec3::new(2.0 * t.cos(), 2.0 * t.sin(), 0.3 * (5.0 * t).sin()),
    }
}

fn closest_features(c: &mut Criterion) {
    let a = features_of(shapes::icosphere(1.0, 3).unwrap().vertices());
    let b = features_of(shapes::icosphere(0.5, 2).unwrap().vertices());
    for i in (0..FRAMES).step_by(100) {
        let d = proximity_brute_force(&a, &b, &pose_at(i)).distance();
        let w = ClosestFeatures::new().query(&a, &b, &pose_at(i)).distance();
        assert!((d - w).abs() < 1e-9, "frame {i}: walk {w}, brute force {d}");
    }
    let poses: Vec<DPose> = (0..FRAMES).map(pose_at).collect();
    let mut group = c.benchmark_group("closest_features_icospheres");
    let mut warm = ClosestFeatures::new();
    let mut frame = 0;
    group.bench_function("warm", |bench| {
        bench.iter(|| {
            frame = (frame + 1) % FRAMES;
            black_box(warm.query(&a, &b, &poses[frame]).distance())
        })
    });
    let mut cold = ClosestFeatures::new();
    group.bench_function("cold", |bench| {
        bench.iter(|| {
            frame = (frame + 1) % FRAMES;
            cold.reset();
            black_box(cold.query(&a, &b, &poses[frame]).distance())
        })
    });
    group.sample_size(10);
    group.bench_function("brute_force", |bench| {
        bench.iter(|| {
            frame = (frame + 97) % FRAMES;
            black_box(proximity_brute_force(&a, &b, &poses[frame]).distance())
        })
    });
    group.finish();
}

criterion_group!(benches, closest_features);
criterion_main!(benches);

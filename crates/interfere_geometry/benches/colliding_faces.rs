//! Kitamura et al. colliding-face detection (§3–4) on two converging icospheres: the serial
//! algorithm, its static and dynamic parallel distributions on one and two threads, and its
//! steps 1–3 alone (overlap region and face octree; the serial part of the static distribution).
//! The three detections are checked to agree before they are timed.
//!
//! `cargo bench -p interfere_geometry --bench colliding_faces` prints one `time:` line per case.
//! `interfere bench faces` reports the same comparison as a table.

// `criterion_group!` expands to an undocumented public function.
#![allow(missing_docs)]

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use interfere_geometry::KitamuraConfig;
use interfere_geometry::kitamura::{
    candidate_pairs, converging_spheres, detect, detect_dynamic, detect_static,
};

fn colliding_faces(c: &mut Criterion) {
    let mut group = c.benchmark_group("colliding_faces_spheres");
    group.sample_size(10);
    for faces in [960, 3968] {
        let objects = converging_spheres(faces).unwrap();
        for depth in [3, 5] {
            let config = KitamuraConfig { depth };
            let serial = detect(&objects, &config).unwrap();
            assert!(!serial.colliding.is_empty(), "the spheres collide");
            for threads in [1, 2] {
                assert_eq!(detect_static(&objects, &config, threads).unwrap(), serial);
                assert_eq!(detect_dynamic(&objects, &config, threads).unwrap(), serial);
            }
            let case = format!("{faces}_faces_depth_{depth}");
            group.bench_function(BenchmarkId::new("serial", &case), |b| {
                b.iter(|| detect(&objects, &config).unwrap())
            });
            for threads in [1, 2] {
                let id = format!("{case}_{threads}_threads");
                group.bench_function(BenchmarkId::new("static", &id), |b| {
                    b.iter(|| detect_static(&objects, &config, threads).unwrap())
                });
                group.bench_function(BenchmarkId::new("dynamic", &id), |b| {
                    b.iter(|| detect_dynamic(&objects, &config, threads).unwrap())
                });
            }
            group.bench_function(BenchmarkId::new("steps_1_to_3", &case), |b| {
                b.iter(|| candidate_pairs(&objects, &config).unwrap())
            });
        }
    }
    group.finish();
}

criterion_group!(benches, colliding_faces);
criterion_main!(benches);

//! Hierarchy build and traversal on two 20,480-triangle icospheres (generated, no files needed):
//! the OBBTree build (Gottschalk–Lin–Manocha, one thread), the balanced AABB tree build
//! (Greß–Zachmann §3), and all leaf pairs of the sphere against itself at four offsets by the
//! depth-first and the breadth-first traversal of the balanced tree (Greß–Zachmann §4–5) and by
//! the OBBTree. The traversals are checked to agree on the pair count before they are timed.
//!
//! `cargo bench -p interfere_geometry --bench hierarchies` prints criterion's `time:` line per
//! case (its middle figure is the estimate).

// `criterion_group!` expands to an undocumented public function.
#![allow(missing_docs)]

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use interfere_geometry::bvh::bfs::{self, BfsConfig};
use interfere_geometry::bvh::dfs;
use interfere_geometry::glam::{DMat3, DVec3, Quat, Vec3};
use interfere_geometry::{BalancedTree, DPose, ObbTree, Pose, shapes};

fn builds(c: &mut Criterion) {
    let sphere = shapes::icosphere(1.0, 5).unwrap().into_mesh();
    assert_eq!(sphere.triangle_count(), 20_480);
    let mut group = c.benchmark_group("build_20k_sphere");
    group.sample_size(20);
    group.bench_function("obbtree", |b| b.iter(|| ObbTree::build(&sphere)));
    group.bench_function("balanced", |b| b.iter(|| BalancedTree::build(&sphere)));
    group.finish();
}

fn traversals(c: &mut Criterion) {
    let sphere = shapes::icosphere(1.0, 5).unwrap().into_mesh();
    let balanced = BalancedTree::build(&sphere);
    let obb = ObbTree::build(&sphere);
    let mut group = c.benchmark_group("all_pairs_20k_spheres");
    group.sample_size(10);
    for offset in [1.9f32, 1.5, 1.0, 0.0] {
        let pose = Pose::new(Quat::from_rotation_y(0.4), Vec3::new(offset, 0.1, 0.0)).to_f64();
        let dfs_pairs = dfs::all_pairs(&balanced, &balanced, &pose, |_, _| true).len();
        let bfs_pairs = bfs::all_pairs(
            &balanced,
            &balanced,
            &pose,
            &BfsConfig::default(),
            |_, _| true,
        )
        .unwrap()
        .len();
        assert_eq!(dfs_pairs, bfs_pairs, "offset {offset}");
        group.bench_with_input(BenchmarkId::new("dfs", offset), &pose, |b, pose| {
            b.iter(|| dfs::all_pairs(&balanced, &balanced, pose, |_, _| true).len())
        });
        group.bench_with_input(BenchmarkId::new("bfs", offset), &pose, |b, pose| {
            b.iter(|| {
                bfs::all_pairs(&balanced, &balanced, pose, &BfsConfig::default(), |_, _| {
                    true
                })
                .unwrap()
                .len()
            })
        });
    }
    let pose = DPose {
        rotation: DMat3::from_rotation_y(0.3),
        translation: DVec3::new(1.5, 0.2, 0.1),
    };
    group.bench_function("obbtree_offset_1.5", |b| {
        b.iter(|| obb.all_pairs(&obb, &pose, |_, _| true).len())
    });
    group.finish();
}

criterion_group!(benches, builds, traversals);
criterion_main!(benches);

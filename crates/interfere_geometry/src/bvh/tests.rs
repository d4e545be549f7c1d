//! Oracle tests of the traversals: for random and adversarial poses of generated meshes, the
//! depth-first and breadth-first results (with and without the entrance level) must equal the
//! brute-force set over all triangle pairs under the same leaf predicate.
//!
//! The leaf predicate is "triangle `B` (moved into `A`'s frame in `f64` by `DPose`) overlaps the
//! AABB of triangle `A`" (a 13-axis triangle-box separating-axis test). It only accepts pairs
//! whose leaf boxes share a point, as any exact triangle test does, so pruning by the
//! conservative box test cannot change the result. (Comparing triangle `B`'s *axis-aligned* box
//! in `A`'s frame with `A`'s box would not be such a predicate: a rotated triangle's AABB can
//! overlap boxes that its tree box does not reach.)

use super::balanced::BalancedTree;
use super::bfs::{self, BfsConfig, EntranceLevel, EntranceUse};
use super::dfs;
use crate::mesh::TriMesh;
use crate::pose::{DPose, Pose};
use crate::shapes;
use glam::{DVec3, Quat, Vec3, Vec4};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::cell::Cell;

/// Closed triangle-box overlap (Akenine-Möller's 13 axes) in `f64`; `c`, `h`: box centre and
/// half extents.
fn tri_box_overlap(c: DVec3, h: DVec3, tri: &[DVec3; 3]) -> bool {
    let v = tri.map(|p| p - c);
    for i in 0..3 {
        let lo = v[0][i].min(v[1][i]).min(v[2][i]);
        let hi = v[0][i].max(v[1][i]).max(v[2][i]);
        if lo > h[i] || hi < -h[i] {
            return false;
        }
    }
    let e = [v[1] - v[0], v[2] - v[1], v[0] - v[2]];
    let n = e[0].cross(e[1]);
    if n.dot(v[0]).abs() > h.dot(n.abs()) {
        return false;
    }
    for edge in e {
        for axis in [DVec3::X, DVec3::Y, DVec3::Z] {
            let a = axis.cross(edge);
            if a == DVec3::ZERO {
                continue;
            }
            let p = v.map(|x| a.dot(x));
            let r = h.dot(a.abs());
            if p[0].min(p[1]).min(p[2]) > r || p[0].max(p[1]).max(p[2]) < -r {
                return false;
            }
        }
    }
    true
}

/// The leaf predicate for one pose, with `A`'s triangle boxes and `B`'s moved triangles
/// precomputed.
struct Oracle {
    a_boxes: Vec<(DVec3, DVec3)>,
    b_tris: Vec<[DVec3; 3]>,
    calls: Cell<usize>,
}

impl Oracle {
    fn new(a: &TriMesh, b: &TriMesh, b_to_a: &DPose) -> Self {
        let a_boxes = (0..a.triangle_count())
            .map(|t| {
                let tri = a.triangle(t).map(Vec3::as_dvec3);
                let lo = tri[0].min(tri[1]).min(tri[2]);
                let hi = tri[0].max(tri[1]).max(tri[2]);
                ((lo + hi) * 0.5, (hi - lo) * 0.5)
            })
            .collect();
        let b_tris = (0..b.triangle_count())
            .map(|t| b.triangle(t).map(|p| b_to_a.transform_point(p)))
            .collect();
        Self {
            a_boxes,
            b_tris,
            calls: Cell::new(0),
        }
    }

    fn pred(&self, ta: u32, tb: u32) -> bool {
        self.calls.set(self.calls.get() + 1);
        let (c, h) = self.a_boxes[ta as usize];
        tri_box_overlap(c, h, &self.b_tris[tb as usize])
    }

    fn brute(&self) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        for (tb, tri) in self.b_tris.iter().enumerate() {
            for (ta, &(c, h)) in self.a_boxes.iter().enumerate() {
                if tri_box_overlap(c, h, tri) {
                    out.push((ta as u32, tb as u32));
                }
            }
        }
        out.sort_unstable();
        out
    }
}

struct Case {
    a: TriMesh,
    b: TriMesh,
    ta: BalancedTree,
    tb: BalancedTree,
}

impl Case {
    fn new(a: TriMesh, b: TriMesh) -> Self {
        let (ta, tb) = (BalancedTree::build(&a), BalancedTree::build(&b));
        Self { a, b, ta, tb }
    }

    /// Checks dfs, bfs and first_hit against brute force; returns (hits, leaf callback calls
    /// of the dfs, brute-force pair count).
    fn check(&self, pose: &DPose) -> (usize, usize, usize) {
        let oracle = Oracle::new(&self.a, &self.b, pose);
        let brute = oracle.brute();
        oracle.calls.set(0);
        let d = dfs::all_pairs(&self.ta, &self.tb, pose, |x, y| oracle.pred(x, y));
        let dfs_calls = oracle.calls.get();
        assert_eq!(d, brute, "dfs vs brute force at {pose:?}");
        let f = bfs::all_pairs(&self.ta, &self.tb, pose, &BfsConfig::default(), |x, y| {
            oracle.pred(x, y)
        })
        .expect("default capacity suffices");
        assert_eq!(f, brute, "bfs vs brute force at {pose:?}");
        let first = dfs::first_hit(&self.ta, &self.tb, pose, |x, y| oracle.pred(x, y));
        assert_eq!(first.is_some(), !brute.is_empty());
        if let Some(p) = first {
            assert!(brute.binary_search(&p).is_ok());
        }
        (
            brute.len(),
            dfs_calls,
            self.a.triangle_count() * self.b.triangle_count(),
        )
    }
}

fn random_rotation(rng: &mut ChaCha8Rng) -> Quat {
    loop {
        let v = Vec4::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        );
        if v.length_squared() > 0.01 && v.length_squared() < 1.0 {
            return Quat::from_vec4(v.normalize());
        }
    }
}

fn random_pose(rng: &mut ChaCha8Rng, reach: f32) -> DPose {
    let t = Vec3::new(
        rng.random_range(-reach..reach),
        rng.random_range(-reach..reach),
        rng.random_range(-reach..reach),
    );
    Pose::new(random_rotation(rng), t).to_f64()
}

#[test]
fn random_poses_match_brute_force() {
    let mut rng = ChaCha8Rng::seed_from_u64(31);
    let cases = [
        Case::new(
            shapes::icosphere(1.0, 2).unwrap().into_mesh(),
            shapes::torus(0.9, 0.35, 16, 8).unwrap().into_mesh(),
        ),
        Case::new(
            shapes::bumpy_sphere(1.0, 0.3, 4.0, 2, 5)
                .unwrap()
                .into_mesh(),
            shapes::bumpy_sphere(0.8, 0.4, 5.0, 2, 9)
                .unwrap()
                .into_mesh(),
        ),
        Case::new(
            shapes::torus(1.0, 0.3, 12, 10).unwrap().into_mesh(),
            shapes::torus(0.8, 0.25, 14, 7).unwrap().into_mesh(),
        ),
        Case::new(
            shapes::cuboid(Vec3::new(1.0, 0.5, 0.25))
                .unwrap()
                .into_mesh(),
            shapes::icosphere(0.7, 2).unwrap().into_mesh(),
        ),
    ];
    let (mut nonempty, mut empty) = (0, 0);
    let (mut calls, mut all) = (0, 0);
    for case in &cases {
        for _ in 0..12 {
            let (hits, c, n) = case.check(&random_pose(&mut rng, 1.6));
            nonempty += usize::from(hits > 0);
            empty += usize::from(hits == 0);
            calls += c;
            all += n;
        }
    }
    assert!(
        nonempty > 25 && empty > 0,
        "{nonempty} intersecting, {empty} apart"
    );
    assert!(
        calls * 20 < all,
        "the tree must prune: {calls} leaf tests of {all}"
    );
}

#[test]
fn identical_pose_and_touching_contacts() {
    // The same mesh at the identity: every triangle meets itself and its neighbours.
    let sphere = Case::new(
        shapes::icosphere(1.0, 2).unwrap().into_mesh(),
        shapes::icosphere(1.0, 2).unwrap().into_mesh(),
    );
    let (hits, _, _) = sphere.check(&DPose::IDENTITY);
    assert!(hits >= 320 * 4);

    let cube = || shapes::cuboid(Vec3::ONE).unwrap().into_mesh();
    let cubes = Case::new(cube(), cube());
    // Face to face on x = 1 (exact), also with B turned a quarter about x (x stays exact).
    for rot in [
        Quat::IDENTITY,
        Quat::from_rotation_x(std::f32::consts::FRAC_PI_2),
    ] {
        let (hits, _, _) = cubes.check(&Pose::new(rot, Vec3::new(2.0, 0.0, 0.0)).to_f64());
        assert!(hits >= 4, "face contact found");
    }
    // Edge to edge and corner to corner.
    let (hits, _, _) = cubes.check(&Pose::from_translation(Vec3::new(2.0, 2.0, 0.0)).to_f64());
    assert!(hits > 0);
    let (hits, _, _) = cubes.check(&Pose::from_translation(Vec3::splat(2.0)).to_f64());
    assert!(hits > 0);
    // One f32 step apart: nothing.
    let gap = 2.0f32.next_up();
    let (hits, _, _) = cubes.check(&Pose::from_translation(Vec3::new(gap, 0.0, 0.0)).to_f64());
    assert_eq!(hits, 0);
    // Sphere resting on the cube's top face at a vertex of the icosphere (the pole (0, 1, 0)
    // is not a vertex; its vertices lie on the unit sphere, so put the lowest one on y = 1).
    let ico = shapes::icosphere(1.0, 2).unwrap().into_mesh();
    let low = ico
        .vertices()
        .iter()
        .map(|v| v.y)
        .fold(f32::INFINITY, f32::min);
    let on_top = Case::new(cube(), ico);
    // In f64 the lowest vertex lands exactly on y = 1.
    let pose = DPose {
        rotation: glam::DMat3::IDENTITY,
        translation: DVec3::new(0.0, 1.0 - f64::from(low), 0.0),
    };
    let (hits, _, _) = on_top.check(&pose);
    assert!(hits > 0, "vertex-on-face contact");
}

#[test]
fn deep_and_shallow_trees_and_huge_coordinates() {
    let mut rng = ChaCha8Rng::seed_from_u64(32);
    let cube = shapes::cuboid(Vec3::splat(0.3)).unwrap().into_mesh();
    let sphere = shapes::icosphere(1.0, 4).unwrap().into_mesh(); // 5120 triangles
    let shallow_deep = Case::new(cube.clone(), sphere.clone());
    let deep_shallow = Case::new(sphere, cube);
    assert!(shallow_deep.tb.depth() >= shallow_deep.ta.depth() + 8);
    let mut hits = 0;
    for _ in 0..6 {
        // Straddle the sphere's surface.
        let dir = random_rotation(&mut rng) * Vec3::X;
        let pose = Pose::new(random_rotation(&mut rng), dir * rng.random_range(0.8..1.2));
        hits += shallow_deep.check(&pose.inverse().to_f64()).0;
        hits += deep_shallow.check(&pose.to_f64()).0;
    }
    assert!(hits > 0);

    // Far from the origin and large: the margins scale with the coordinates.
    let far = Pose::from_translation(Vec3::new(1.0e6, -2.0e6, 3.0e5));
    let a = shapes::icosphere(1000.0, 2)
        .unwrap()
        .into_mesh()
        .transformed(&far);
    let b = shapes::torus(900.0, 300.0, 14, 8)
        .unwrap()
        .into_mesh()
        .transformed(&far);
    let big = Case::new(a, b);
    let mut hits = 0;
    for _ in 0..5 {
        let q = random_rotation(&mut rng);
        let centre = Vec3::new(1.0e6, -2.0e6, 3.0e5);
        // Rotate B about the common centre, plus a small offset.
        let offset = Vec3::new(
            rng.random_range(-500.0..500.0),
            rng.random_range(-500.0..500.0),
            rng.random_range(-500.0..500.0),
        );
        let pose = Pose::from_translation(centre + offset)
            .mul(&Pose::from_rotation(q))
            .mul(&Pose::from_translation(-centre));
        hits += big.check(&pose.to_f64()).0;
    }
    assert!(hits > 0);
}

#[test]
fn disjoint_objects_stop_at_the_roots() {
    let case = Case::new(
        shapes::icosphere(1.0, 2).unwrap().into_mesh(),
        shapes::torus(1.0, 0.3, 12, 8).unwrap().into_mesh(),
    );
    let pose = Pose::from_translation(Vec3::new(5.0, 0.0, 0.0)).to_f64();
    assert_eq!(case.check(&pose).0, 0);
    let out = bfs::traverse(
        &case.ta,
        &case.tb,
        &pose,
        &BfsConfig::default(),
        None,
        |_, _| true,
    )
    .unwrap();
    assert_eq!(out.steps.len(), 1);
    assert_eq!(out.steps[0].overlapping, 0);
    assert_eq!(out.entrance, EntranceUse::Off);
}

#[test]
fn capacity_overflow_is_an_error() {
    let case = Case::new(
        shapes::icosphere(1.0, 2).unwrap().into_mesh(),
        shapes::icosphere(1.0, 2).unwrap().into_mesh(),
    );
    let pose = Pose::from_rotation(Quat::from_rotation_y(0.3)).to_f64();
    let out = bfs::traverse(
        &case.ta,
        &case.tb,
        &pose,
        &BfsConfig::default(),
        None,
        |_, _| true,
    )
    .unwrap();
    let needed = out.steps.iter().map(|s| s.tested).max().unwrap();
    assert!(needed > 100);
    let ok = bfs::all_pairs(
        &case.ta,
        &case.tb,
        &pose,
        &BfsConfig {
            capacity: needed as u32,
        },
        |_, _| true,
    )
    .unwrap();
    assert_eq!(ok, out.pairs);
    let err = bfs::all_pairs(
        &case.ta,
        &case.tb,
        &pose,
        &BfsConfig {
            capacity: needed as u32 - 1,
        },
        |_, _| true,
    )
    .unwrap_err();
    assert_eq!(err.needed, needed as u64);
    assert_eq!(err.capacity, needed as u32 - 1);
    assert!(
        bfs::all_pairs(
            &case.ta,
            &case.tb,
            &pose,
            &BfsConfig { capacity: 0 },
            |_, _| true
        )
        .is_err()
    );
}

#[test]
fn kernels_ignore_bad_pairs_without_panicking() {
    let case = Case::new(
        shapes::cuboid(Vec3::ONE).unwrap().into_mesh(),
        shapes::icosphere(1.0, 1).unwrap().into_mesh(),
    );
    let sat = super::SatLite::new(&DPose::IDENTITY);
    let levels = bfs::StepLevels::new(&case.ta, &case.tb, 1);
    let pairs = [
        bfs::NodePair { a: 0, b: 1 },
        bfs::NodePair { a: 99, b: 0 },
        bfs::NodePair { a: 1, b: u32::MAX },
    ];
    let mut counts = Vec::new();
    bfs::count_children(&case.ta, &case.tb, &sat, levels, 0.0, &pairs, &mut counts);
    assert_eq!(counts[1..], [0, 0]);
    // A's node 0 of level 1 has two children, B's node 1 only one (level 2 has 3 nodes).
    assert_eq!(counts[0], 2);
    let mut offsets = Vec::new();
    let total = bfs::exclusive_scan(&counts, &mut offsets);
    let mut next = Vec::new();
    bfs::scatter_children(
        &case.ta,
        &case.tb,
        levels,
        &pairs,
        &counts,
        &offsets,
        total as usize,
        &mut next,
    );
    assert_eq!(next, [(0, 2), (1, 2)].map(|(a, b)| bfs::NodePair { a, b }));
    // Inconsistent inputs: a too-short output is not written past its end.
    bfs::scatter_children(
        &case.ta, &case.tb, levels, &pairs, &counts, &offsets, 1, &mut next,
    );
    assert_eq!(next, [bfs::NodePair { a: 0, b: 2 }]);
    let mut hits = Vec::new();
    bfs::test_leaf_pairs(
        &case.ta,
        &case.tb,
        &sat,
        &pairs,
        &mut |_, _| true,
        &mut hits,
    );
}

/// Runs a motion sequence with an entrance level; every frame must match brute force and the
/// plain traversal. Returns (reused frames, recorded frames).
fn run_sequence(case: &Case, poses: &[DPose], entrance: &mut EntranceLevel) -> (usize, usize) {
    let (mut reused, mut recorded) = (0, 0);
    for pose in poses {
        let oracle = Oracle::new(&case.a, &case.b, pose);
        let brute = oracle.brute();
        let out = bfs::traverse(
            &case.ta,
            &case.tb,
            pose,
            &BfsConfig::default(),
            Some(entrance),
            |x, y| oracle.pred(x, y),
        )
        .unwrap();
        assert_eq!(out.pairs, brute, "entrance {:?} at {pose:?}", out.entrance);
        match out.entrance {
            EntranceUse::Reused { step } => {
                reused += 1;
                assert_eq!(out.steps[0].step, step);
            }
            EntranceUse::Recorded { .. } => recorded += 1,
            EntranceUse::Off => unreachable!("an entrance level was given"),
        }
    }
    (reused, recorded)
}

#[test]
fn entrance_level_gives_identical_results() {
    let case = Case::new(
        shapes::bumpy_sphere(1.0, 0.3, 4.0, 2, 3)
            .unwrap()
            .into_mesh(),
        shapes::torus(0.9, 0.3, 16, 8).unwrap().into_mesh(),
    );
    // Approach from afar (empty lists recorded and reused), then tumble in contact, with one
    // teleport in the middle.
    let mut poses = Vec::new();
    for i in 0..90 {
        let s = i as f32;
        let x = (3.0 - 0.04 * s).max(0.4);
        let mut t = Vec3::new(x, 0.1 * (0.05 * s).sin(), 0.0);
        if i == 60 {
            t.y += 0.7;
        }
        let q = Quat::from_rotation_y(0.004 * s) * Quat::from_rotation_z(0.3 + 0.003 * s);
        poses.push(Pose::new(q, t).to_f64());
    }
    let mut auto = EntranceLevel::new(0.12);
    let (reused, recorded) = run_sequence(&case, &poses, &mut auto);
    assert!(
        reused > 30 && recorded > 5,
        "{reused} reused, {recorded} recorded"
    );
    let last = bfs::last_step(&case.ta, &case.tb);
    assert!(auto.level() > 0 && auto.level() < last);

    for level in [0, 3, 6, last - 1, last + 5] {
        let mut fixed = EntranceLevel::fixed(level, 0.08);
        let (reused, recorded) = run_sequence(&case, &poses, &mut fixed);
        assert!(
            reused > 20 && recorded > 5,
            "level {level}: {reused} reused, {recorded}"
        );
        assert_eq!(fixed.level(), level);
    }

    // No margin: never reused, still correct.
    let mut none = EntranceLevel::new(0.0);
    assert_eq!(run_sequence(&case, &poses[..10], &mut none), (0, 10));

    // A stored list of other trees is never reused.
    let mut e = EntranceLevel::fixed(4, 1.0);
    run_sequence(&case, &poses[80..81], &mut e);
    assert!(e.stored_step().is_some());
    let other = Case::new(
        shapes::bumpy_sphere(1.0, 0.3, 4.0, 2, 4)
            .unwrap()
            .into_mesh(),
        shapes::torus(0.9, 0.3, 16, 8).unwrap().into_mesh(),
    );
    assert_eq!(run_sequence(&other, &poses[80..81], &mut e), (0, 1));
}

//! Oracle tests of the ray casting and of the uniform volume: brute force over all triangles,
//! exact polyhedral volumes, analytic overlaps and finite differences.

use super::*;
use crate::bvh::BalancedTree;
use crate::pose::DPose;
use crate::shapes;
use crate::topology::Solid;
use glam::{DMat3, DVec3, Vec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub(super) fn pose(axis: DVec3, angle: f64, t: DVec3) -> DPose {
    DPose {
        rotation: DMat3::from_axis_angle(axis.normalize(), angle),
        translation: t,
    }
}

pub(super) fn shift(t: DVec3) -> DPose {
    DPose {
        rotation: DMat3::IDENTITY,
        translation: t,
    }
}

pub(super) fn random_pose(rng: &mut ChaCha8Rng) -> DPose {
    let axis = DVec3::new(
        rng.random_range(-1.0..1.0),
        rng.random_range(-1.0..1.0),
        rng.random_range(-1.0..1.0),
    ) + DVec3::new(0.01, 0.0, 0.0);
    pose(
        axis,
        rng.random_range(-3.0..3.0),
        DVec3::new(
            rng.random_range(-2.0..2.0),
            rng.random_range(-2.0..2.0),
            rng.random_range(-2.0..2.0),
        ),
    )
}

fn ray_mesh(s: &Solid, p: &DPose) -> RayMesh {
    RayMesh::new(s, &BalancedTree::build(s), p).unwrap()
}

fn sorted(mut h: Vec<LineCrossing>) -> Vec<LineCrossing> {
    h.sort_by_key(|a| a.triangle);
    h
}

fn test_solids() -> Vec<Solid> {
    vec![
        shapes::cuboid(Vec3::new(1.0, 0.5, 0.25)).unwrap(),
        shapes::subdivided_cuboid(Vec3::ONE, 3).unwrap(),
        shapes::icosphere(1.0, 2).unwrap(),
        shapes::torus(1.0, 0.3, 16, 8).unwrap(),
        shapes::bumpy_sphere(1.0, 0.3, 4.0, 2, 5).unwrap(),
    ]
}

/// Checks that the hits of a closed mesh balance and, for a convex one, that there is at most
/// one of each kind.
fn check_balanced(hits: &[LineCrossing], convex: bool, what: &str) {
    let enter = hits.iter().filter(|h| h.entering).count();
    let leave = hits.len() - enter;
    assert_eq!(enter, leave, "{what}: {hits:?}");
    if convex {
        assert!(enter <= 1, "{what}: {hits:?}");
    }
    for h in hits {
        let s: f64 = h.barycentric.iter().sum();
        assert!((s - 1.0).abs() < 1e-12 && h.barycentric.iter().all(|&b| b >= 0.0));
    }
}

#[test]
fn axis_rays_match_brute_force_random() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for s in test_solids() {
        for _ in 0..3 {
            let p = random_pose(&mut rng);
            let m = ray_mesh(&s, &p);
            let [lo, hi] = m.bounds();
            for _ in 0..60 {
                let axis = rng.random_range(0..3);
                let (ku, kv) = ((axis + 1) % 3, (axis + 2) % 3);
                let ray = AxisRay {
                    axis,
                    u: rng.random_range(lo[ku] - 0.1..hi[ku] + 0.1),
                    v: rng.random_range(lo[kv] - 0.1..hi[kv] + 0.1),
                };
                let (mut fast, mut brute) = (Vec::new(), Vec::new());
                m.cast_axis(&ray, &mut fast);
                m.cast_axis_brute(&ray, &mut brute);
                let fast = sorted(fast);
                assert_eq!(fast, sorted(brute));
                check_balanced(&fast, false, "random axis ray");
                for h in &fast {
                    // The hit point lies on the triangle's plane.
                    let [a, b, c] = m.triangle(h.triangle as usize);
                    let q = ray.point(h.t);
                    let n = (b - a).cross(c - a).normalize();
                    assert!(n.dot(q - a).abs() < 1e-9, "{h:?}");
                    assert_eq!(h.entering, n[axis] < 0.0);
                }
            }
        }
    }
}

#[test]
fn axis_rays_through_vertices_and_edges_are_watertight() {
    // Lines through every vertex and every edge's exact grid points of boxes (faces split into
    // triangles along diagonals) and of a sphere: hits balance, and convex meshes get at most
    // one entry. The tree agrees with brute force on every one.
    let boxes = [
        shapes::cuboid(Vec3::ONE).unwrap(),
        shapes::subdivided_cuboid(Vec3::new(1.0, 2.0, 0.5), 4).unwrap(),
    ];
    for s in &boxes {
        let m = ray_mesh(s, &DPose::IDENTITY);
        let coords: Vec<f64> = (-8..=8).map(|i| i as f64 * 0.25).collect();
        for axis in 0..3 {
            for &u in &coords {
                for &v in &coords {
                    let ray = AxisRay { axis, u, v };
                    let (mut fast, mut brute) = (Vec::new(), Vec::new());
                    m.cast_axis(&ray, &mut fast);
                    m.cast_axis_brute(&ray, &mut brute);
                    let fast = sorted(fast);
                    assert_eq!(fast, sorted(brute));
                    check_balanced(&fast, true, "box grid line");
                    // Strictly inside the face's projection: exactly one entry and one exit.
                    let [lo, hi] = m.bounds();
                    let (ku, kv) = ((axis + 1) % 3, (axis + 2) % 3);
                    if lo[ku] < u && u < hi[ku] && lo[kv] < v && v < hi[kv] {
                        assert_eq!(fast.len(), 2, "{ray:?}");
                    }
                }
            }
        }
    }
    let sphere = shapes::icosphere(1.0, 2).unwrap();
    let m = ray_mesh(&sphere, &DPose::IDENTITY);
    for &p in m.vertices() {
        for axis in 0..3 {
            let ray = AxisRay {
                axis,
                u: p[(axis + 1) % 3],
                v: p[(axis + 2) % 3],
            };
            let mut hits = Vec::new();
            m.cast_axis(&ray, &mut hits);
            check_balanced(&hits, true, "sphere vertex line");
        }
    }
}

/// Checks [`RayMesh::cast_axis_block`] against one [`RayMesh::cast_axis`] per line: the same
/// hits in the same order on every cast line, none on the masked-out ones.
fn check_block(m: &RayMesh, axis: usize, us: &[f64], vs: &[f64], mask: u64, what: &str) {
    let mut block = ray_bvh::BlockHits::default();
    m.cast_axis_block(axis, us, vs, mask, &mut block);
    check_block_hits(m, &block, axis, us, vs, mask, what);
    // The same block through the per-axis bins of the mesh.
    let bins = axis_bins::AxisBins::build(m);
    bins.cast_axis_block(m, axis, us, vs, mask, &mut block);
    check_block_hits(m, &block, axis, us, vs, mask, &format!("{what} (bins)"));
}

/// Checks `block` (a cast of the lines `us × vs` along `axis` with `mask`) against one
/// [`RayMesh::cast_axis`] per line.
fn check_block_hits(
    m: &RayMesh,
    block: &ray_bvh::BlockHits,
    axis: usize,
    us: &[f64],
    vs: &[f64],
    mask: u64,
    what: &str,
) {
    let (nu, nv) = (us.len().min(8), vs.len().min(8));
    for (i, &u) in us.iter().take(nu).enumerate() {
        for (j, &v) in vs.iter().take(nv).enumerate() {
            let line = i * nv + j;
            let mut single = Vec::new();
            if mask >> line & 1 == 1 {
                m.cast_axis(&AxisRay { axis, u, v }, &mut single);
            }
            assert_eq!(
                block.line(line),
                &single[..],
                "{what}: axis {axis}, line ({i}, {j})"
            );
        }
    }
    assert!(
        block.line(nu * nv).is_empty(),
        "{what}: a line past the block"
    );
}

#[test]
fn axis_blocks_match_single_lines() {
    let mut rng = ChaCha8Rng::seed_from_u64(41);
    let boxes = [
        shapes::cuboid(Vec3::ONE).unwrap(),
        shapes::subdivided_cuboid(Vec3::new(1.0, 2.0, 0.5), 4).unwrap(),
    ];
    for s in test_solids().iter().chain(&boxes) {
        for _ in 0..6 {
            let m = ray_mesh(s, &random_pose(&mut rng));
            let [lo, hi] = m.bounds();
            for axis in 0..3 {
                let (ku, kv) = ((axis + 1) % 3, (axis + 2) % 3);
                // Random blocks of 1..=8 × 1..=8 lines over the mesh, in any order, with a
                // random mask; and a regular block as the uniform sampler casts it.
                let nu = rng.random_range(1..=8);
                let nv = rng.random_range(1..=8);
                let us: Vec<f64> = (0..nu).map(|_| rng.random_range(lo[ku]..hi[ku])).collect();
                let vs: Vec<f64> = (0..nv).map(|_| rng.random_range(lo[kv]..hi[kv])).collect();
                check_block(&m, axis, &us, &vs, rng.random::<u64>(), "random block");
                let us: Vec<f64> = (0..8)
                    .map(|i| lo[ku] + (i as f64 + 0.5) * (hi[ku] - lo[ku]) / 8.0)
                    .collect();
                let vs: Vec<f64> = (0..8)
                    .map(|j| lo[kv] + (j as f64 + 0.5) * (hi[kv] - lo[kv]) / 8.0)
                    .collect();
                check_block(&m, axis, &us, &vs, u64::MAX, "regular block");
            }
        }
    }
    // Adversarial: lines exactly through the vertices and edges of boxes (coordinates on the
    // faces' grid), repeated coordinates, a NaN coordinate, an empty mask, too many lines.
    for s in &boxes {
        let m = ray_mesh(s, &DPose::IDENTITY);
        let grid: Vec<f64> = (-4..=3).map(|i| i as f64 * 0.25).collect();
        for axis in 0..3 {
            check_block(&m, axis, &grid, &grid, u64::MAX, "vertex and edge lines");
            check_block(
                &m,
                axis,
                &[0.5, 0.5, -0.25],
                &[0.0, 0.0],
                u64::MAX,
                "repeats",
            );
            check_block(&m, axis, &[0.1, f64::NAN], &[0.2, 0.3], u64::MAX, "NaN");
            check_block(&m, axis, &grid, &grid, 0, "empty mask");
            let many: Vec<f64> = (0..12).map(|i| i as f64 * 0.1 - 0.55).collect();
            check_block(&m, axis, &many, &many, u64::MAX, "more than 8 per side");
        }
    }
    // Huge coordinates: a box far from the origin.
    let far = ray_mesh(&boxes[1], &shift(DVec3::new(1e9, -3e8, 7e8)));
    let [lo, hi] = far.bounds();
    let us: Vec<f64> = (0..8)
        .map(|i| lo[1] + (hi[1] - lo[1]) * i as f64 / 7.0)
        .collect();
    let vs: Vec<f64> = (0..8)
        .map(|j| lo[2] + (hi[2] - lo[2]) * j as f64 / 7.0)
        .collect();
    check_block(&far, 0, &us, &vs, u64::MAX, "huge coordinates");
}

#[test]
fn axis_bins_cover_cell_edges_flat_meshes_and_fall_back() {
    // Lines exactly on the bins' cell boundaries and on the mesh's bounds, through a fine
    // subdivided box (many triangles, so a fine grid), a mesh flat across an axis (a zero
    // extent), lines outside the bounds, and a mesh of long slivers that is not binned.
    let fine = shapes::subdivided_cuboid(Vec3::new(1.0, 2.0, 0.5), 16).unwrap();
    let m = ray_mesh(&fine, &pose(DVec3::Z, 0.3, DVec3::new(0.1, -0.2, 0.05)));
    let [lo, hi] = m.bounds();
    let bins = axis_bins::AxisBins::build(&m);
    for axis in 0..3 {
        assert!(bins.binned(axis), "the fine box is binned on axis {axis}");
        let (ku, kv) = ((axis + 1) % 3, (axis + 2) % 3);
        let tri = m.triangles().len();
        let n = (((tri / 4) as f64).sqrt().ceil() as usize).clamp(1, 1024) as f64;
        // Cell boundaries lo + c · extent / n, and the bounds themselves.
        let edges = |d: usize| -> Vec<f64> {
            (0..8)
                .map(|c| lo[d] + (c as f64 * 3.0).min(n) * (hi[d] - lo[d]) / n)
                .collect()
        };
        check_block(&m, axis, &edges(ku), &edges(kv), u64::MAX, "cell edges");
        check_block(
            &m,
            axis,
            &[lo[ku], hi[ku]],
            &[lo[kv], hi[kv]],
            u64::MAX,
            "bounds",
        );
        let outside = [
            lo[ku] - 1.0,
            hi[ku] + 1e-12,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        check_block(
            &m,
            axis,
            &outside,
            &[lo[kv], 0.0, hi[kv]],
            u64::MAX,
            "outside",
        );
    }
    // A flat mesh: a square of two triangles in the plane z = 0.3 (not closed; the bins do not
    // need it), seen along x and y its extent across one direction is zero.
    let flat = crate::mesh::TriMesh::new(
        vec![
            Vec3::new(0.0, 0.0, 0.3),
            Vec3::new(1.0, 0.0, 0.3),
            Vec3::new(1.0, 1.0, 0.3),
            Vec3::new(0.0, 1.0, 0.3),
        ],
        vec![[0, 1, 2], [0, 2, 3]],
    )
    .unwrap();
    let m = RayMesh::new(&flat, &BalancedTree::build(&flat), &DPose::IDENTITY).unwrap();
    for axis in 0..3 {
        let c = [0.0, 0.3, 0.5, 1.0];
        check_block(&m, axis, &c, &c, u64::MAX, "flat square");
    }
    // Long slivers: every triangle spans the whole grid in one direction, so binning would need
    // far more entries than triangles; the axis falls back to the tree, with the same hits.
    let mut vertices = Vec::new();
    let mut triangles = Vec::new();
    for i in 0..200u32 {
        let y = i as f32 * 0.01;
        vertices.extend([
            Vec3::new(0.0, y, 0.0),
            Vec3::new(10.0, y + 0.004, 0.0),
            Vec3::new(10.0, y + 0.5, 1.0),
        ]);
        triangles.push([3 * i, 3 * i + 1, 3 * i + 2]);
    }
    let slivers = crate::mesh::TriMesh::new(vertices, triangles).unwrap();
    let m = RayMesh::new(&slivers, &BalancedTree::build(&slivers), &DPose::IDENTITY).unwrap();
    let us: Vec<f64> = (0..8).map(|i| 0.5 + i as f64 * 1.2).collect();
    let vs: Vec<f64> = (0..8).map(|j| 0.05 + j as f64 * 0.3).collect();
    let bins = axis_bins::AxisBins::build(&m);
    assert!(
        !bins.binned(2),
        "slivers across the whole grid are not binned"
    );
    for axis in 0..3 {
        check_block(&m, axis, &us, &vs, u64::MAX, "slivers");
    }
}

#[test]
fn general_lines_match_brute_force_and_are_watertight() {
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    for s in test_solids() {
        let p = random_pose(&mut rng);
        let m = ray_mesh(&s, &p);
        let [lo, hi] = m.bounds();
        let centre = (lo + hi) / 2.0;
        let mut lines = Vec::new();
        for _ in 0..40 {
            let o = DVec3::new(
                rng.random_range(lo.x..hi.x),
                rng.random_range(lo.y..hi.y),
                rng.random_range(lo.z..hi.z),
            );
            let d = DVec3::new(
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
            );
            lines.push((o, d));
        }
        // Adversarial: lines through the centre and a vertex, or two vertices.
        for (i, &v) in m.vertices().iter().enumerate().step_by(7) {
            lines.push((centre, v - centre));
            let w = m.vertices()[(i * 31 + 5) % m.vertices().len()];
            if w != v {
                lines.push((v, w - v));
            }
        }
        for (o, d) in lines {
            let (mut fast, mut brute) = (Vec::new(), Vec::new());
            m.cast_line(o, d, &mut fast).unwrap();
            m.cast_line_brute(o, d, &mut brute).unwrap();
            let fast = sorted(fast);
            assert_eq!(fast, sorted(brute));
            check_balanced(&fast, false, "general line");
            for h in &fast {
                let [a, b, c] = m.triangle(h.triangle as usize);
                let n = (b - a).cross(c - a).normalize();
                let q = o + h.t * d;
                assert!(n.dot(q - a).abs() < 1e-7 * (1.0 + d.length()), "{h:?}");
            }
        }
    }
    // A convex mesh crossed through its vertices: exactly one entry and one exit.
    let s = shapes::icosphere(1.0, 2).unwrap();
    let m = ray_mesh(&s, &DPose::IDENTITY);
    for &v in m.vertices() {
        let mut hits = Vec::new();
        m.cast_line(DVec3::ZERO, v, &mut hits).unwrap();
        check_balanced(&hits, true, "centre-vertex line");
        assert_eq!(hits.len(), 2);
    }
    let mut out = Vec::new();
    assert_eq!(
        m.cast_line(DVec3::ZERO, DVec3::ZERO, &mut out),
        Err(VolumeError::InvalidRay)
    );
    assert_eq!(
        m.cast_line(DVec3::NAN, DVec3::X, &mut out),
        Err(VolumeError::InvalidRay)
    );
}

#[test]
fn axis_and_general_casts_agree() {
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    let s = shapes::bumpy_sphere(1.0, 0.3, 4.0, 2, 9).unwrap();
    let m = ray_mesh(&s, &random_pose(&mut rng));
    for _ in 0..100 {
        let axis = rng.random_range(0..3);
        let ray = AxisRay {
            axis,
            u: rng.random_range(-1.5..1.5),
            v: rng.random_range(-1.5..1.5),
        };
        let mut dir = DVec3::ZERO;
        dir[axis] = if rng.random::<bool>() { 1.0 } else { -1.0 };
        let (mut a, mut g) = (Vec::new(), Vec::new());
        m.cast_axis(&ray, &mut a);
        m.cast_line(ray.point(0.0), dir, &mut g).unwrap();
        let (a, g) = (sorted(a), sorted(g));
        assert_eq!(a.len(), g.len());
        for (x, y) in a.iter().zip(&g) {
            assert_eq!(x.triangle, y.triangle);
            assert!((x.t - y.t * dir[axis]).abs() < 1e-12);
            assert_eq!(x.entering, y.entering == (dir[axis] > 0.0));
        }
    }
}

pub(super) fn opts(sampling: Sampling) -> UniformOptions {
    UniformOptions {
        sampling,
        ..UniformOptions::default()
    }
}

/// Overlap length of `[a0, a1]` and `[b0, b1]` and its derivative under a shift of the second.
fn overlap_1d(a0: f64, a1: f64, b0: f64, b1: f64) -> (f64, f64) {
    let lo = a0.max(b0);
    let hi = a1.min(b1);
    if hi <= lo {
        return (0.0, 0.0);
    }
    let d = f64::from(u8::from(b1 < a1)) - f64::from(u8::from(b0 > a0));
    (hi - lo, d)
}

#[test]
fn axis_aligned_boxes_are_exact_with_analytic_gradient() {
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    for case in 0..20 {
        let ha = DVec3::new(
            rng.random_range(0.2..1.5),
            rng.random_range(0.2..1.5),
            rng.random_range(0.2..1.5),
        );
        let hb = DVec3::new(
            rng.random_range(0.2..1.5),
            rng.random_range(0.2..1.5),
            rng.random_range(0.2..1.5),
        );
        let t = DVec3::new(
            rng.random_range(-1.5..1.5),
            rng.random_range(-1.5..1.5),
            rng.random_range(-1.5..1.5),
        );
        // Huge coordinates in a few cases: everything scaled by 1e5.
        let scale = if case % 5 == 4 { 1e5 } else { 1.0 };
        let a = shapes::cuboid((ha * scale).as_vec3()).unwrap();
        let b = shapes::cuboid((hb * scale).as_vec3()).unwrap();
        let ha = a.aabb().max.as_dvec3();
        let hb = b.aabb().max.as_dvec3();
        let tb = t * scale;
        let r = uniform_volume(&a, &b, &shift(tb), &opts(Sampling::Resolution(3))).unwrap();
        let ov: [(f64, f64); 3] =
            std::array::from_fn(|k| overlap_1d(-ha[k], ha[k], tb[k] - hb[k], tb[k] + hb[k]));
        let exact = ov[0].0 * ov[1].0 * ov[2].0;
        let tol = 1e-12 * (scale * scale * scale) * 30.0;
        assert!(
            (r.volume - exact).abs() <= tol,
            "{case}: {} vs {exact}",
            r.volume
        );
        for k in 0..3 {
            assert!((r.axis_volumes[k] - exact).abs() <= tol);
            let d = ov[k].1 * ov[(k + 1) % 3].0 * ov[(k + 2) % 3].0;
            let g = r.translation_gradient()[k];
            assert!((g - d).abs() <= tol / scale, "{case} axis {k}: {g} vs {d}");
        }
        let sum_a: DVec3 = r.gradient_a.iter().sum();
        assert!((sum_a + r.translation_gradient()).abs().max_element() <= tol / scale);
    }
}

#[test]
fn huge_coordinates_stay_exact() {
    let a = shapes::cuboid(Vec3::splat(1.0e5)).unwrap();
    let b = shapes::cuboid(Vec3::splat(1.0e5)).unwrap();
    let off = DVec3::new(1.0e7, -3.0e7, 2.0e7);
    // Large boxes (1e5) overlapping; then far apart (1e7).
    let p = shift(DVec3::new(0.5e5, 0.25e5, -0.5e5));
    let r = uniform_volume(&a, &b, &p, &opts(Sampling::Resolution(5))).unwrap();
    let exact = 1.5e5 * 1.75e5 * 1.5e5;
    assert!((r.volume - exact).abs() <= 1e-12 * exact);
    // A single far-away pair: the same boxes translated by a huge offset overlap nothing.
    let r = uniform_volume(&a, &b, &shift(off), &opts(Sampling::Resolution(5))).unwrap();
    assert_eq!(r.volume, 0.0);
    assert_eq!(r.ray_count, 0);
}

/// Area of the intersection of two convex polygons (counter-clockwise), by clipping.
/// The area, in the xy plane, of the 1.6 × 0.8 rectangle centred at the origin and placed by
/// `p` (a rotation about z and a shift), inside the square `[-1, 1]²`: the exact cross-section of
/// the rotated-prism oracles.
pub(super) fn rectangle_area_in_square(p: &DPose) -> f64 {
    let corners: Vec<[f64; 2]> = [(-0.8, -0.4), (0.8, -0.4), (0.8, 0.4), (-0.8, 0.4)]
        .iter()
        .map(|&(x, y)| {
            let q = p.transform_point(Vec3::new(x, y, 0.0));
            [q.x, q.y]
        })
        .collect();
    let square = [[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]];
    convex_clip_area(&corners, &square)
}

pub(super) fn convex_clip_area(subject: &[[f64; 2]], clip: &[[f64; 2]]) -> f64 {
    let mut poly = subject.to_vec();
    for i in 0..clip.len() {
        let (a, b) = (clip[i], clip[(i + 1) % clip.len()]);
        let side = |p: [f64; 2]| (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]);
        let mut out = Vec::new();
        for j in 0..poly.len() {
            let (p, q) = (poly[j], poly[(j + 1) % poly.len()]);
            let (sp, sq) = (side(p), side(q));
            if sp >= 0.0 {
                out.push(p);
            }
            if (sp >= 0.0) != (sq >= 0.0) {
                let t = sp / (sp - sq);
                out.push([p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])]);
            }
        }
        poly = out;
        if poly.is_empty() {
            return 0.0;
        }
    }
    let mut area = 0.0;
    for j in 0..poly.len() {
        let (p, q) = (poly[j], poly[(j + 1) % poly.len()]);
        area += p[0] * q[1] - p[1] * q[0];
    }
    area / 2.0
}

#[test]
fn boxes_rotated_about_z_converge_to_the_exact_prism() {
    let a = shapes::cuboid(Vec3::new(1.0, 1.0, 0.5)).unwrap();
    let b = shapes::cuboid(Vec3::new(0.8, 0.4, 1.0)).unwrap();
    let uv = UniformVolume::new(&a, &b);
    for (angle, t) in [
        (0.6, DVec3::new(0.9, 0.3, 0.0)),
        (-1.1, DVec3::new(-0.5, 0.8, 0.2)),
        (std::f64::consts::FRAC_PI_4, DVec3::new(0.2, -0.1, -0.3)),
    ] {
        let p = pose(DVec3::Z, angle, t);
        // B's z extent [-1, 1] + t.z covers A's [-0.5, 0.5].
        let exact = rectangle_area_in_square(&p);
        let err = |r: u32| {
            let v = uv.compute(&p, &opts(Sampling::Resolution(r))).unwrap();
            // Rays along z see the exact prism: every interval has the full height.
            ((v.volume - exact) / exact).abs()
        };
        let (e16, e64) = (err(16), err(64));
        assert!(e64 < e16, "angle {angle}: {e16} -> {e64}");
        assert!(e64 < 5e-3, "angle {angle}: {e64}");
    }
}

/// Volume of the lens of two balls of radius `r` at centre distance `d`.
pub(super) fn lens(r: f64, d: f64) -> f64 {
    std::f64::consts::PI * (4.0 * r + d) * (2.0 * r - d).powi(2) / 12.0
}

#[test]
fn sphere_lens_volume_and_gradient() {
    let s = shapes::icosphere(1.0, 3).unwrap();
    // The radius of the ball with the polyhedron's volume, for the analytic reference.
    let r = (3.0 * s.volume() / (4.0 * std::f64::consts::PI)).cbrt();
    let uv = UniformVolume::new(&s, &s);
    for d in [0.6, 1.0, 1.5] {
        let res = uv
            .compute(
                &shift(DVec3::new(d, 0.0, 0.0)),
                &opts(Sampling::Resolution(48)),
            )
            .unwrap();
        let exact = lens(r, d);
        assert!(
            ((res.volume - exact) / exact).abs() < 0.02,
            "d {d}: {} vs {exact}",
            res.volume
        );
        // dV/dd = −π (4r² − d²) / 4: the area of the lens's rim disc, pushing B out along +x.
        let dv = -std::f64::consts::PI * (4.0 * r * r - d * d) / 4.0;
        let g = res.translation_gradient();
        assert!(((g.x - dv) / dv).abs() < 0.03, "d {d}: {} vs {dv}", g.x);
        assert!(g.y.abs() < 0.03 * dv.abs() && g.z.abs() < 0.03 * dv.abs());
        assert!(res.force.x > 0.0);
        // The surface samples lie on the lens boundary, normals pointing outward of it.
        assert!(!res.points.is_empty());
        for p in &res.points {
            let c = if p.on_b {
                DVec3::new(d, 0.0, 0.0)
            } else {
                DVec3::ZERO
            };
            assert!(((p.point - c).length() - 1.0).abs() < 0.02);
            assert!((p.point - c).normalize().dot(p.normal) > 0.95);
        }
    }
}

#[test]
fn nested_solid_volume_converges_to_the_exact_polyhedral_volume() {
    let big = shapes::icosphere(2.0, 2).unwrap();
    let small = shapes::bumpy_sphere(0.5, 0.2, 3.0, 2, 3).unwrap();
    let p = pose(DVec3::new(1.0, 2.0, 0.5), 0.7, DVec3::new(0.3, 0.2, -0.1));
    let exact = small.volume();
    let uv = UniformVolume::new(&big, &small);
    let mut errs = Vec::new();
    for res in [8, 16, 64] {
        let r = uv.compute(&p, &opts(Sampling::Resolution(res))).unwrap();
        errs.push(((r.volume - exact) / exact).abs());
        // Inside A, translating B does not change the volume, exactly for the sampled estimate
        // too: every interval starts and ends on B.
        assert!(r.translation_gradient().abs().max_element() < 1e-12);
        assert!(r.gradient_a.iter().all(|g| *g == DVec3::ZERO));
        assert!(r.points.iter().all(|q| q.on_b));
        assert_eq!(r.ray_count, 3 * (res * res) as usize);
    }
    assert!(errs[2] < errs[1] && errs[2] < errs[0], "{errs:?}");
    assert!(errs[2] < 3e-3, "{errs:?}");
    // Swapping the roles (B contains A) gives the same volume.
    let inv = p.inverse();
    let r = uniform_volume(&small, &big, &inv, &opts(Sampling::Resolution(64))).unwrap();
    assert!(((r.volume - exact) / exact).abs() < 3e-3);
    assert!(r.gradient_b.iter().all(|g| *g == DVec3::ZERO));
}

#[test]
fn disjoint_and_touching_solids_have_zero_volume_and_gradient() {
    let s = shapes::icosphere(1.0, 2).unwrap();
    // Disjoint boxes.
    let r = uniform_volume(
        &s,
        &s,
        &shift(DVec3::new(3.0, 0.0, 0.0)),
        &opts(Sampling::Resolution(8)),
    )
    .unwrap();
    assert_eq!(r.volume, 0.0);
    assert_eq!(r.ray_count, 0);
    assert_eq!(r.gradient_b.len(), s.vertices().len());
    // Overlapping boxes, disjoint balls.
    let r = uniform_volume(
        &s,
        &s,
        &shift(DVec3::new(1.7, 1.7, 0.0)),
        &opts(Sampling::Resolution(16)),
    )
    .unwrap();
    assert_eq!(r.volume, 0.0);
    assert!(r.ray_count > 0);
    assert!(
        r.gradient_a
            .iter()
            .chain(&r.gradient_b)
            .all(|g| *g == DVec3::ZERO)
    );
    assert_eq!(r.force, DVec3::ZERO);
    // Face-to-face touching boxes (flat overlap box) and edge-touching ones.
    let c = shapes::cuboid(Vec3::ONE).unwrap();
    for t in [DVec3::new(2.0, 0.3, -0.2), DVec3::new(2.0, 2.0, 0.0)] {
        let r = uniform_volume(&c, &c, &shift(t), &opts(Sampling::Resolution(8))).unwrap();
        assert_eq!(r.volume, 0.0);
        assert_eq!(r.force, DVec3::ZERO);
    }
    // Touching along a face with a rotated box whose overlap box is not flat: the line hits
    // at the shared plane leave A before entering B.
    let b = shapes::cuboid(Vec3::new(1.0, 0.5, 0.5)).unwrap();
    let p = pose(DVec3::X, 0.5, DVec3::new(2.0, 0.0, 0.0));
    let r = uniform_volume(&c, &b, &p, &opts(Sampling::Resolution(8))).unwrap();
    assert_eq!(r.volume, 0.0);
    assert_eq!(r.force, DVec3::ZERO);
}

#[test]
fn face_contact_inside_the_overlap_box_has_zero_volume_and_gradient() {
    // B is two unit boxes touching A's faces x = ±1 from outside; B's bounding box contains A's,
    // so every line along x meets both contact planes. Equal depths leave before they enter:
    // no zero-length interval, no gradient at exact contact.
    let a = shapes::cuboid(Vec3::ONE).unwrap();
    let piece = |x: f32| {
        a.mesh()
            .transformed(&crate::pose::Pose::from_translation(Vec3::new(x, 0.0, 0.0)))
    };
    let (right, left) = (piece(2.0), piece(-2.0));
    let b = Solid::new(crate::mesh::TriMesh::merge(&[&right, &left]).unwrap()).unwrap();
    for p in [DPose::IDENTITY, shift(DVec3::new(0.0, 0.5, -0.25))] {
        let r = uniform_volume(&a, &b, &p, &opts(Sampling::Resolution(8))).unwrap();
        assert!(r.ray_count > 0);
        assert_eq!(r.volume, 0.0);
        assert!(
            r.gradient_a
                .iter()
                .chain(&r.gradient_b)
                .all(|g| *g == DVec3::ZERO)
        );
        assert!(r.points.is_empty());
    }
    // Pushed in by 0.1 on the right: the volume and a force pushing B back out along +x.
    let r = uniform_volume(
        &a,
        &b,
        &shift(DVec3::new(-0.1, 0.0, 0.0)),
        &opts(Sampling::Resolution(8)),
    )
    .unwrap();
    // (The lines along y and z sit at x = ±0.875, ... and miss the 0.1-thick slab.)
    assert!(
        (r.axis_volumes[0] - 0.4).abs() < 1e-12,
        "{:?}",
        r.axis_volumes
    );
    assert!(
        (r.force - DVec3::new(4.0, 0.0, 0.0)).length() < 1e-9,
        "{}",
        r.force
    );
}

#[test]
fn coincident_solids_give_their_own_volume() {
    let c = shapes::cuboid(Vec3::new(1.0, 0.5, 0.25)).unwrap();
    let r = uniform_volume(&c, &c, &DPose::IDENTITY, &opts(Sampling::Resolution(4))).unwrap();
    assert!((r.volume - c.volume()).abs() < 1e-12);
    let s = shapes::icosphere(1.0, 2).unwrap();
    let r = uniform_volume(&s, &s, &DPose::IDENTITY, &opts(Sampling::Resolution(32))).unwrap();
    assert!(((r.volume - s.volume()) / s.volume()).abs() < 5e-3);
}

fn volume_at(uv: &UniformVolume<'_>, p: &DPose, o: &UniformOptions) -> VolumeResult {
    uv.compute(p, o).unwrap()
}

#[test]
fn gradient_matches_finite_differences() {
    let cases = [
        (
            shapes::bumpy_sphere(1.0, 0.25, 3.0, 3, 1).unwrap(),
            shapes::icosphere(0.7, 3).unwrap(),
            pose(DVec3::new(1.0, 1.0, 0.0), 0.4, DVec3::new(0.9, 0.4, -0.3)),
        ),
        (
            shapes::cuboid(Vec3::new(1.0, 0.8, 0.6)).unwrap(),
            shapes::cuboid(Vec3::new(0.7, 0.3, 0.5)).unwrap(),
            pose(DVec3::new(0.3, 1.0, 0.5), 0.8, DVec3::new(1.1, 0.2, 0.3)),
        ),
    ];
    for (ci, (a, b, p)) in cases.iter().enumerate() {
        let uv = UniformVolume::new(a, b);
        let centre = p.translation + DVec3::new(0.1, -0.2, 0.05);
        let o = UniformOptions {
            sampling: Sampling::Spacing(0.02),
            centre,
            collect_points: false,
            ..UniformOptions::default()
        };
        let r = volume_at(&uv, p, &o);
        let g = r.translation_gradient();
        let scale = g.length();
        assert!(scale > 0.1, "{ci}: {g}");
        let dt = 1e-3;
        for k in 0..3 {
            let mut e = DVec3::ZERO;
            e[k] = dt;
            let plus = volume_at(&uv, &shift(e).mul(p), &o);
            let minus = volume_at(&uv, &shift(-e).mul(p), &o);
            // The axis-k estimate is what the k component differentiates: nearly exact.
            let fd_k = (plus.axis_volumes[k] - minus.axis_volumes[k]) / (2.0 * dt);
            assert!(
                (fd_k - g[k]).abs() < 0.01 * scale,
                "{ci} axis {k}: {fd_k} vs {}",
                g[k]
            );
            // The averaged volume: within a few percent.
            let fd = (plus.volume - minus.volume) / (2.0 * dt);
            assert!(
                (fd - g[k]).abs() < 0.04 * scale,
                "{ci} axis {k}: {fd} vs {}",
                g[k]
            );
        }
        // Rotations of B about the centre.
        let rg = r.rotation_gradient();
        let rscale = rg.length().max(0.05);
        let da = 2e-3;
        for k in 0..3 {
            let mut axis = DVec3::ZERO;
            axis[k] = 1.0;
            let rot = |a: f64| {
                let rp = pose(axis, a, DVec3::ZERO);
                // Rotate about the centre: x -> R (x - c) + c.
                shift(centre).mul(&rp).mul(&shift(-centre)).mul(p)
            };
            let fd = (volume_at(&uv, &rot(da), &o).volume - volume_at(&uv, &rot(-da), &o).volume)
                / (2.0 * da);
            assert!(
                (fd - rg[k]).abs() < 0.05 * rscale,
                "{ci} rot {k}: {fd} vs {}",
                rg[k]
            );
        }
        // The generalized force is the negated gradient, reduced about the centre.
        let sum: DVec3 = r.gradient_b.iter().sum();
        assert!((sum + r.force).abs().max_element() < 1e-12);
    }
}

#[test]
fn invalid_inputs_are_refused() {
    let s = shapes::icosphere(1.0, 1).unwrap();
    let id = DPose::IDENTITY;
    assert_eq!(
        uniform_volume(&s, &s, &id, &opts(Sampling::Resolution(0))),
        Err(VolumeError::ZeroResolution)
    );
    for (coarse, resolution) in [(0, 8), (8, 0)] {
        let fitted = Sampling::Fitted { coarse, resolution };
        assert_eq!(
            uniform_volume(&s, &s, &id, &opts(fitted)),
            Err(VolumeError::ZeroResolution)
        );
    }
    for h in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            uniform_volume(&s, &s, &id, &opts(Sampling::Spacing(h))),
            Err(VolumeError::InvalidSpacing(_))
        ));
    }
    let bad = shift(DVec3::new(f64::NAN, 0.0, 0.0));
    assert_eq!(
        uniform_volume(&s, &s, &bad, &opts(Sampling::Resolution(4))),
        Err(VolumeError::NonFinitePose)
    );
    assert!(matches!(
        uniform_volume(&s, &s, &id, &opts(Sampling::Spacing(1e-9))),
        Err(VolumeError::TooManyRays { .. })
    ));
    let other = shapes::icosphere(1.0, 2).unwrap();
    assert!(matches!(
        UniformVolume::with_trees(&s, BalancedTree::build(&other), &s, BalancedTree::build(&s)),
        Err(VolumeError::TreeMismatch { .. })
    ));
    assert!(matches!(
        RayMesh::new(&s, &BalancedTree::build(&other), &id),
        Err(VolumeError::TreeMismatch { .. })
    ));
}

#[test]
fn spacing_lattice_is_fixed_in_space() {
    // Spacing-based sampling: halving the spacing changes the estimate little and casts about
    // four times as many lines.
    let a = shapes::bumpy_sphere(1.0, 0.2, 3.0, 2, 4).unwrap();
    let b = shapes::icosphere(0.6, 2).unwrap();
    let h = 0.05;
    let p = pose(DVec3::Y, 0.3, DVec3::new(0.8, 0.1, 0.2));
    let o = opts(Sampling::Spacing(h));
    let r0 = uniform_volume(&a, &b, &p, &o).unwrap();
    assert!(r0.volume > 0.0);
    let r1 = uniform_volume(&a, &b, &p, &opts(Sampling::Spacing(h / 2.0))).unwrap();
    assert!(((r0.volume - r1.volume) / r1.volume).abs() < 0.02);
    assert!(r1.ray_count > 3 * r0.ray_count);
}

/// A shifted lattice (`Sampling::ShiftedSpacing`): with a zero offset it is `Spacing`, bit for
/// bit; on axis-aligned boxes each axis estimate is the overlap's length times the pixel area
/// times the number of shifted lattice lines inside the overlap's cross-section, counted here
/// independently; over random offsets the estimate of rotated boxes averages to the exact
/// volume (`exact_box_box`, clipped faces) within four standard errors.
#[test]
fn shifted_lattice_counts_its_lines_and_is_unbiased() {
    let (ha, hb) = (DVec3::new(0.5, 0.3, 0.2), DVec3::new(0.25, 0.4, 0.35));
    let a = shapes::cuboid(ha.as_vec3()).unwrap();
    let b = shapes::cuboid(hb.as_vec3()).unwrap();
    let h = 0.07;
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    // Zero offset: the plain lattice, bit for bit.
    for _ in 0..8 {
        let p = random_pose(&mut rng);
        let p = DPose {
            translation: p.translation * 0.2,
            ..p
        };
        let plain = uniform_volume(&a, &b, &p, &opts(Sampling::Spacing(h))).unwrap();
        let zero = Sampling::ShiftedSpacing {
            spacing: h,
            offset: DVec3::ZERO,
        };
        assert_eq!(uniform_volume(&a, &b, &p, &opts(zero)).unwrap(), plain);
    }
    // Aligned boxes: count the lines (i + ½) h + o inside the overlap's cross-section.
    let t = DVec3::new(0.31, -0.12, 0.07);
    let (lo, hi) = ((-ha).max(t - hb), ha.min(t + hb));
    let lines_in = |a0: f64, a1: f64, o: f64| {
        let first = ((a0 - o) / h - 0.5).ceil() as i64;
        let last = ((a1 - o) / h - 0.5).floor() as i64;
        (last - first + 1).max(0) as f64
    };
    let mut shifted_differs = false;
    for _ in 0..64 {
        let offset = DVec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        ) * h;
        let sampling = Sampling::ShiftedSpacing { spacing: h, offset };
        let r = uniform_volume(&a, &b, &shift(t), &opts(sampling)).unwrap();
        for k in 0..3 {
            let (u, v) = ((k + 1) % 3, (k + 2) % 3);
            let expected = (hi[k] - lo[k])
                * h
                * h
                * lines_in(lo[u], hi[u], offset[u])
                * lines_in(lo[v], hi[v], offset[v]);
            assert!(
                // The meshes hold f32 vertices; a line more or less changes it by 5 % or more.
                (r.axis_volumes[k] - expected).abs() <= 1e-6 * expected.max(1e-9),
                "axis {k} offset {offset}: {} vs {expected}",
                r.axis_volumes[k]
            );
        }
        let plain = uniform_volume(&a, &b, &shift(t), &opts(Sampling::Spacing(h))).unwrap();
        shifted_differs |= r.axis_volumes != plain.axis_volumes;
    }
    assert!(shifted_differs, "no offset changed which lines fall inside");
    // Rotated boxes: the mean over random offsets is the exact volume.
    for _ in 0..3 {
        let p = pose(
            DVec3::new(
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                1.0,
            ),
            rng.random_range(-1.5..1.5),
            DVec3::new(
                rng.random_range(-0.3..0.3),
                rng.random_range(-0.3..0.3),
                rng.random_range(-0.2..0.2),
            ),
        );
        let exact = exact_box_box(ha, hb, &p);
        assert!(exact > 0.0);
        let n = 96;
        let vs: Vec<f64> = (0..n)
            .map(|_| {
                let offset = DVec3::new(
                    rng.random_range(0.0..h),
                    rng.random_range(0.0..h),
                    rng.random_range(0.0..h),
                );
                let sampling = Sampling::ShiftedSpacing { spacing: h, offset };
                uniform_volume(&a, &b, &p, &opts(sampling)).unwrap().volume
            })
            .collect();
        let mean = vs.iter().sum::<f64>() / n as f64;
        let var = vs.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let se = (var / n as f64).sqrt();
        assert!(se > 0.0, "the offsets changed nothing");
        assert!(
            (mean - exact).abs() < 4.0 * se,
            "mean {mean} exact {exact} standard error {se}"
        );
    }
    // Bad offsets and spacings are refused.
    for offset in [DVec3::new(f64::NAN, 0.0, 0.0), DVec3::splat(f64::INFINITY)] {
        let sampling = Sampling::ShiftedSpacing { spacing: h, offset };
        assert_eq!(
            uniform_volume(&a, &b, &shift(t), &opts(sampling)),
            Err(VolumeError::NonFiniteOffset)
        );
    }
    let sampling = Sampling::ShiftedSpacing {
        spacing: -h,
        offset: DVec3::ZERO,
    };
    assert!(matches!(
        uniform_volume(&a, &b, &shift(t), &opts(sampling)),
        Err(VolumeError::InvalidSpacing(_))
    ));
}

/// Exact volume of a convex polyhedron (outward face polygons) clipped to the half-spaces
/// `n · x <= d`: Sutherland–Hodgman on every face plus a cap polygon per plane.
pub(super) fn clipped_convex_volume(faces: Vec<Vec<DVec3>>, planes: &[(DVec3, f64)]) -> f64 {
    clipped_convex_moments(faces, planes).0
}

/// The volume and the first moment `∫ x dV` of the convex polytope bounded by `faces` clipped
/// by the half-spaces `n · x <= d` (tetrahedra from the origin over the clipped faces' fans).
pub(super) fn clipped_convex_moments(
    mut faces: Vec<Vec<DVec3>>,
    planes: &[(DVec3, f64)],
) -> (f64, DVec3) {
    for &(n, d) in planes {
        let mut out_faces = Vec::new();
        let mut cut: Vec<DVec3> = Vec::new();
        for f in &faces {
            let mut poly = Vec::new();
            for j in 0..f.len() {
                let (p, q) = (f[j], f[(j + 1) % f.len()]);
                let (sp, sq) = (n.dot(p) - d, n.dot(q) - d);
                if sp <= 0.0 {
                    poly.push(p);
                }
                if (sp <= 0.0) != (sq <= 0.0) {
                    let x = p + (q - p) * (sp / (sp - sq));
                    poly.push(x);
                    cut.push(x);
                }
                if sp == 0.0 {
                    cut.push(p);
                }
            }
            if poly.len() >= 3 {
                out_faces.push(poly);
            }
        }
        if cut.len() >= 3 {
            let c = cut.iter().sum::<DVec3>() / cut.len() as f64;
            let u = n.any_orthonormal_vector();
            let v = n.cross(u);
            cut.sort_by(|a, b| {
                let (pa, pb) = (*a - c, *b - c);
                pa.dot(v)
                    .atan2(pa.dot(u))
                    .total_cmp(&pb.dot(v).atan2(pb.dot(u)))
            });
            cut.dedup_by(|a, b| (*a - *b).length() < 1e-12);
            if cut.len() >= 3 {
                out_faces.push(cut);
            }
        }
        faces = out_faces;
    }
    let (mut vol, mut first) = (0.0, DVec3::ZERO);
    for f in &faces {
        for j in 1..f.len() - 1 {
            let v = f[0].dot(f[j].cross(f[j + 1])) / 6.0;
            vol += v;
            first += v * (f[0] + f[j] + f[j + 1]) / 4.0;
        }
    }
    (vol, first)
}

#[test]
fn rotated_boxes_converge_to_the_exact_clipped_polytope() {
    let mut rng = ChaCha8Rng::seed_from_u64(31);
    let ha = DVec3::new(1.0, 0.8, 0.6);
    let hb = DVec3::new(0.7, 0.5, 0.9);
    let a = shapes::cuboid(ha.as_vec3()).unwrap();
    let b = shapes::cuboid(hb.as_vec3()).unwrap();
    let uv = UniformVolume::new(&a, &b);
    for case in 0..4 {
        let p = random_pose(&mut rng);
        let p = DPose {
            translation: p.translation * 0.4,
            ..p
        };
        // The clipping itself: far planes keep all of B.
        assert!((exact_box_box(DVec3::splat(1e3), hb, &p) - b.volume()).abs() < 1e-6);
        let exact = exact_box_box(ha, hb, &p);
        assert!(exact > 0.05, "{case}: {exact}");
        let err = |r: u32| {
            let v = uv.compute(&p, &opts(Sampling::Resolution(r))).unwrap();
            ((v.volume - exact) / exact).abs()
        };
        let (e8, e64) = (err(8), err(64));
        assert!(e64 < e8 && e64 < 1e-3, "{case}: {e8} -> {e64}");
    }
}

/// The exact volume of box A (half extents `ha`, at the origin) and box B (half extents `hb`)
/// placed by `p`: B's faces clipped by A's planes.
pub(super) fn exact_box_box(ha: DVec3, hb: DVec3, p: &DPose) -> f64 {
    let planes: Vec<(DVec3, f64)> = (0..3)
        .flat_map(|k| {
            let mut e = DVec3::ZERO;
            e[k] = 1.0;
            [(e, ha[k]), (-e, ha[k])]
        })
        .collect();
    let corner = |i: usize| {
        p.transform_dpoint(DVec3::new(
            if i & 1 == 0 { -hb.x } else { hb.x },
            if i & 2 == 0 { -hb.y } else { hb.y },
            if i & 4 == 0 { -hb.z } else { hb.z },
        ))
    };
    let quads = [
        [0, 2, 3, 1],
        [4, 5, 7, 6],
        [0, 1, 5, 4],
        [2, 6, 7, 3],
        [0, 4, 6, 2],
        [1, 3, 7, 5],
    ];
    let faces: Vec<Vec<DVec3>> = quads
        .iter()
        .map(|q| q.iter().map(|&i| corner(i)).collect())
        .collect();
    clipped_convex_volume(faces, &planes)
}

/// The error estimate against the exact volume of rotated boxes and of a sphere lens: the
/// actual error over the estimate stays small (median under 1, none over 4, as calibrated on
/// the bunny), the estimate shrinks with the line spacing, and an empty overlap estimates zero.
/// The estimate must not be a constant: at a coarse grid it must exceed the error of most poses
/// and be within a factor 30 of the actual error on average.
#[test]
fn error_estimate_tracks_the_actual_error() {
    let mut rng = ChaCha8Rng::seed_from_u64(77);
    let (ha, hb) = (DVec3::new(1.0, 0.8, 0.6), DVec3::new(0.7, 0.5, 0.9));
    let (a, b) = (
        shapes::cuboid(ha.as_vec3()).unwrap(),
        shapes::cuboid(hb.as_vec3()).unwrap(),
    );
    let uv = UniformVolume::new(&a, &b);
    let mut ratios = Vec::new();
    let (mut sum_err, mut sum_est) = (0.0, 0.0);
    for case in 0..40 {
        let p = random_pose(&mut rng);
        let p = DPose {
            translation: p.translation * 0.4,
            ..p
        };
        let exact = exact_box_box(ha, hb, &p);
        let mut last = f64::INFINITY;
        for r in [8, 16, 32] {
            let v = uv.compute(&p, &opts(Sampling::Resolution(r))).unwrap();
            let est = v.estimated_error().unwrap();
            assert!(est > 0.0 && est.is_finite(), "{case} R={r}: {est}");
            assert!(
                est < last,
                "{case} R={r}: the estimate grew: {last} -> {est}"
            );
            last = est;
            let err = (v.volume - exact).abs();
            ratios.push(err / est);
            if r == 8 {
                sum_err += err;
                sum_est += est;
            }
        }
    }
    // A sphere lens: curved, its length function going to zero at the rim.
    let s = shapes::icosphere(1.0, 3).unwrap();
    let radius = (3.0 * s.volume() / (4.0 * std::f64::consts::PI)).cbrt();
    let us = UniformVolume::new(&s, &s);
    for (i, d) in [0.5, 0.8, 1.1, 1.4].into_iter().enumerate() {
        let p = DPose {
            rotation: DMat3::from_rotation_z(0.3 * i as f64),
            translation: DVec3::new(d, 0.1 * i as f64, 0.0),
        };
        let exact = lens(radius, (p.translation).length());
        for r in [12, 24] {
            let v = us.compute(&p, &opts(Sampling::Resolution(r))).unwrap();
            // The polyhedron is not the ball: allow its own deviation (0.3 % of the lens).
            let err = ((v.volume - exact).abs() - 3e-3 * exact).max(0.0);
            ratios.push(err / v.estimated_error().unwrap());
        }
    }
    ratios.sort_by(f64::total_cmp);
    let median = ratios[ratios.len() / 2];
    let max = ratios[ratios.len() - 1];
    assert!(
        median < 1.0 && max < 4.0,
        "median {median}, max {max}: {ratios:?}"
    );
    assert!(
        sum_est < 30.0 * sum_err,
        "estimate {sum_est} vs error {sum_err}"
    );
    // Nothing to sample: zero estimate, not none.
    let far = uv.compute(
        &shift(DVec3::new(5.0, 0.0, 0.0)),
        &opts(Sampling::Resolution(8)),
    );
    assert_eq!(far.unwrap().estimated_axis_error, Some([0.0; 3]));
}

/// `Sampling::Fitted` samples the box its first pass finds: against the exact clipped polytope
/// it converges, counts both passes' lines, and on average beats the overlap-box grid of the
/// same resolution. When the first pass meets nothing (a corner of B poking into A away from
/// the overlap box's centre lines), the second samples the whole overlap box: the same volume
/// as `Sampling::Resolution`, bit for bit.
#[test]
fn fitted_sampling_converges_and_falls_back_to_the_overlap_box() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let (ha, hb) = (DVec3::new(1.0, 0.8, 0.6), DVec3::new(0.7, 0.5, 0.9));
    let (a, b) = (
        shapes::cuboid(ha.as_vec3()).unwrap(),
        shapes::cuboid(hb.as_vec3()).unwrap(),
    );
    let uv = UniformVolume::new(&a, &b);
    let (mut fitted_err, mut plain_err) = (0.0, 0.0);
    let mut checked = 0;
    for case in 0..12 {
        let p = random_pose(&mut rng);
        let p = DPose {
            translation: p.translation * 0.6,
            ..p
        };
        let exact = exact_box_box(ha, hb, &p);
        if exact < 1e-3 {
            continue;
        }
        let fitted = Sampling::Fitted {
            coarse: 6,
            resolution: 16,
        };
        let f = uv.compute(&p, &opts(fitted)).unwrap();
        let plain = uv.compute(&p, &opts(Sampling::Resolution(16))).unwrap();
        assert_eq!(f.ray_count, 3 * (36 + 256), "{case}");
        fitted_err += ((f.volume - exact) / exact).abs();
        plain_err += ((plain.volume - exact) / exact).abs();
        let fine = Sampling::Fitted {
            coarse: 6,
            resolution: 96,
        };
        let e = ((uv.compute(&p, &opts(fine)).unwrap().volume - exact) / exact).abs();
        assert!(e < 2e-3, "{case}: {e}");
        checked += 1;
    }
    assert!(checked >= 6, "only {checked} of 12 poses overlap");
    assert!(
        fitted_err < plain_err,
        "fitted {fitted_err} vs plain {plain_err}"
    );

    // A unit cube and a cube turned so that one corner pokes 0.2 into A's +x face: the lines
    // through the overlap box's centre miss the small pyramid.
    let c = shapes::cuboid(Vec3::splat(1.0)).unwrap();
    let uc = UniformVolume::new(&c, &c);
    let turn = DMat3::from_rotation_y(std::f64::consts::FRAC_PI_4)
        * DMat3::from_rotation_z(std::f64::consts::FRAC_PI_4);
    let corner = 3f64.sqrt();
    let p = DPose {
        rotation: turn,
        translation: DVec3::new(1.0 + corner - 0.2, 0.3, -0.2),
    };
    let fitted = Sampling::Fitted {
        coarse: 1,
        resolution: 24,
    };
    let probe = uc.compute(&p, &opts(Sampling::Resolution(1))).unwrap();
    assert_eq!(probe.volume, 0.0, "the probe line must miss the corner");
    let f = uc.compute(&p, &opts(fitted)).unwrap();
    let plain = uc.compute(&p, &opts(Sampling::Resolution(24))).unwrap();
    assert!(plain.volume > 0.0);
    assert_eq!(f.volume, plain.volume);
    assert_eq!(f.gradient_b, plain.gradient_b);
    assert_eq!(f.ray_count, plain.ray_count + 3);
}

/// `VolumeResult::lines` splits the endpoints into maximal runs on one line each: every run
/// lies on one axis line, neighbouring runs are on different lines, the runs cover the points
/// in order, and each run of closed solids holds whole intervals (an even count, the entries
/// and exits alternating along the line). A point with a NaN coordinate is a run of its own
/// rather than a stall.
#[test]
fn lines_group_the_endpoints_by_sampling_line() {
    let a = shapes::torus(0.5, 0.2, 24, 12).unwrap();
    let b = shapes::icosphere(0.4, 2).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(41);
    let mut runs_seen = 0;
    for _ in 0..8 {
        let pose = crate::test_support::random_pose(&mut rng, 0.3);
        let r = uniform_volume(&a, &b, &pose, &opts(Sampling::Resolution(12))).unwrap();
        let runs: Vec<&[SurfacePoint]> = r.lines().collect();
        assert_eq!(runs.iter().map(|l| l.len()).sum::<usize>(), r.points.len());
        let on_line = |p: &SurfacePoint, q: &SurfacePoint| {
            let k = p.axis as usize;
            p.axis == q.axis && (0..3).all(|j| j == k || p.point[j] == q.point[j])
        };
        for (i, line) in runs.iter().enumerate() {
            assert!(line.iter().all(|p| on_line(&line[0], p)));
            assert_eq!(line.len() % 2, 0, "a closed pair gives whole intervals");
            let k = line[0].axis as usize;
            assert!(line.windows(2).all(|w| w[0].point[k] <= w[1].point[k]));
            if let Some(next) = runs.get(i + 1) {
                assert!(!on_line(&line[0], &next[0]), "runs are maximal");
            }
        }
        runs_seen += runs.len();
    }
    assert!(
        runs_seen > 50,
        "only {runs_seen} lines crossed the overlaps"
    );
    let mut r = uniform_volume(&a, &b, &DPose::IDENTITY, &opts(Sampling::Resolution(4))).unwrap();
    let n = r.points.len();
    assert!(n > 0);
    r.points[0].point.y = f64::NAN;
    assert_eq!(r.lines().map(|l| l.len()).sum::<usize>(), n);
}

#[test]
fn reposed_meshes_and_reused_samplers_match_fresh_ones() {
    // `RayMesh::repose` (the sampler's reused B) against a mesh placed afresh: the same
    // vertices, bounds and hits; and a sampler's answers do not depend on the queries before.
    let mut rng = ChaCha8Rng::seed_from_u64(77);
    let a = shapes::bumpy_sphere(1.0, 0.3, 4.0, 2, 5).unwrap();
    let b = shapes::torus(0.8, 0.3, 16, 8).unwrap();
    let tree_b = BalancedTree::build(&b);
    let mut reused = RayMesh::new(&b, &tree_b, &random_pose(&mut rng)).unwrap();
    let uv = UniformVolume::new(&a, &b);
    let o = opts(Sampling::Resolution(12));
    for _ in 0..8 {
        let p = random_pose(&mut rng);
        reused.repose(&b, &p);
        let fresh = RayMesh::new(&b, &tree_b, &p).unwrap();
        assert_eq!(reused.vertices(), fresh.vertices());
        assert_eq!(reused.bounds(), fresh.bounds());
        let [lo, hi] = fresh.bounds();
        for axis in 0..3 {
            let (ku, kv) = ((axis + 1) % 3, (axis + 2) % 3);
            let ray = AxisRay {
                axis,
                u: rng.random_range(lo[ku]..hi[ku]),
                v: rng.random_range(lo[kv]..hi[kv]),
            };
            let (mut h1, mut h2) = (Vec::new(), Vec::new());
            reused.cast_axis(&ray, &mut h1);
            fresh.cast_axis(&ray, &mut h2);
            assert_eq!(h1, h2);
        }
        // Near poses so that most queries overlap.
        let near = DPose {
            translation: p.translation * 0.3,
            ..p
        };
        let again = uv.compute(&near, &o).unwrap();
        let first = uv.clone().compute(&near, &o).unwrap();
        assert_eq!(again, first);
    }
}

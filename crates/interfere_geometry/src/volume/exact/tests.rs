//! Oracle tests of the exact volume: closed-form and convex-clipping volumes, analytic
//! gradients, finite differences, the uniform sampler's convergence, parry3d's mesh boolean,
//! and the degenerate contacts the perturbation must resolve.

use super::crossings::pair_hit;
use super::*;
use crate::interference::{MeshQueries, Method};
use crate::mesh::TriMesh;
use crate::pose::Pose;
use crate::shapes;
use crate::tri_tri::triangles_intersect;
use crate::volume::tests::{
    clipped_convex_moments, clipped_convex_volume, exact_box_box, lens, pose, random_pose, shift,
};
use crate::volume::{Sampling, UniformOptions, UniformVolume};
use glam::{DMat3, Vec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn options() -> ExactOptions {
    ExactOptions::default()
}

/// The exact volume with the narrow phase's pairs, checked against the fused traversal (both
/// trees, on one, two and three threads), which must give the same result bit for bit.
fn exact(a: &Solid, b: &Solid, p: &DPose) -> ExactResult {
    let ev = ExactVolume::new(a, b);
    let ca = MeshQueries::new(a.mesh().clone());
    let cb = MeshQueries::new(b.mesh().clone());
    let pairs = ca.all_pairs(&cb, p, Method::Obb).unwrap();
    let r = ev.compute(p, &pairs, &options()).unwrap();
    for t in [Traversal::Aabb, Traversal::Obb] {
        let f = ev.compute_traversing(p, t, &options()).unwrap();
        assert_eq!(f.volume.to_bits(), r.volume.to_bits(), "{t:?}");
        assert_eq!(f.translation_gradient, r.translation_gradient);
        assert_eq!(f.regions, r.regions);
        for threads in [2, 3] {
            let o = ExactOptions {
                threads,
                ..options()
            };
            assert_eq!(
                ev.compute_traversing(p, t, &o).unwrap(),
                f,
                "{t:?}, {threads} threads"
            );
        }
    }
    check_invariants(&r);
    r
}

/// Closure of the pieces, and the regions adding up.
fn check_invariants(r: &ExactResult) {
    let scale = r.regions.iter().map(|g| g.area_b).sum::<f64>().max(1e-300);
    assert!(
        r.closure.length() <= 1e-9 * scale.max(1.0),
        "closure {} (area {scale})",
        r.closure
    );
    let sum: f64 = r.regions.iter().map(|g| g.volume).sum();
    assert!(
        (sum - r.volume).abs() <= 1e-12 * r.volume.abs().max(1e-300),
        "{sum} vs {}",
        r.volume
    );
    let g: DVec3 = r.regions.iter().map(|g| g.translation_gradient).sum();
    assert!((g - r.translation_gradient).length() <= 1e-12 * g.length().max(1e-300));
    // Each region's pieces on A and on B bound its volume together: A's vector areas sum to
    // minus B's (`−∂V/∂x_B`), and their moments to minus B's (`−∂V/∂θ_B`), so either side
    // gives the region's force and torque (the contact parts are built on the flatter one).
    // A symmetrized result keeps one perturbation's pieces with averaged gradients: not checked.
    if r.symmetrized {
        return;
    }
    for region in &r.regions {
        let sum = |pieces: &[SurfacePiece]| -> (DVec3, DVec3) {
            pieces.iter().fold((DVec3::ZERO, DVec3::ZERO), |(f, t), p| {
                (f + p.vector_area, t + p.centroid.cross(p.vector_area))
            })
        };
        let (fa, ta) = sum(&region.pieces_a);
        let (fb, tb) = sum(&region.pieces_b);
        let torque = region.rotation_gradient + region.point.cross(region.translation_gradient);
        let tol = 1e-9 * scale.max(1.0);
        assert!((fb - region.translation_gradient).length() <= tol, "{fb}");
        assert!((fa + region.translation_gradient).length() <= tol, "{fa}");
        let arm = region.point.length().max(1.0);
        assert!((tb - torque).length() <= tol * arm, "{tb} vs {torque}");
        assert!((ta + torque).length() <= tol * arm, "{ta} vs {torque}");
    }
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1e-300)
}

fn unit(k: usize) -> DVec3 {
    let mut e = DVec3::ZERO;
    e[k] = 1.0;
    e
}

/// The convex polyhedron `s` placed by `p`: its faces (triangles), for the clipping oracle.
fn faces(s: &Solid, p: &DPose) -> Vec<Vec<DVec3>> {
    (0..s.triangle_count())
        .map(|t| {
            s.triangle(t)
                .iter()
                .map(|&v| p.transform_point(v))
                .collect()
        })
        .collect()
}

/// The half-spaces `n · x <= d` of a convex solid's faces (in its own frame), each plane once
/// (clipping twice by one plane would cut the first cap's points by their rounding).
fn planes(s: &Solid) -> Vec<(DVec3, f64)> {
    let mut out: Vec<(DVec3, f64)> = Vec::new();
    for t in 0..s.triangle_count() {
        let [a, b, c] = s.triangle(t).map(|v| v.as_dvec3());
        let n = (b - a).cross(c - a).normalize();
        let d = n.dot(a);
        if !out
            .iter()
            .any(|&(m, e)| m.dot(n) > 1.0 - 1e-12 && (e - d).abs() < 1e-12)
        {
            out.push((n, d));
        }
    }
    out
}

#[test]
fn crossings_are_zero_or_two_and_agree_with_the_closed_test() {
    // Random lattice triangle pairs (many coplanar, touching, shared-vertex cases): the
    // perturbed crossing never reports an odd count (pair_hit would fail), a crossing pair
    // always meets in the closed test, and a pair in general position (no zero orientation)
    // crosses exactly when the closed test says they meet.
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut stats = [0usize; 3];
    for round in 0..40000 {
        let r = if round % 2 == 0 { 1 } else { 3 };
        let mut pt = || {
            DVec3::new(
                rng.random_range(-r..=r) as f64,
                rng.random_range(-r..=r) as f64,
                rng.random_range(-r..=r) as f64,
            )
        };
        let pa = [pt(), pt(), pt()];
        let pb = [pt(), pt(), pt()];
        let mut symbolic = false;
        let hit = pair_hit((0, [0, 1, 2], pa), (0, [0, 1, 2], pb), 1, &mut symbolic)
            .expect("0 or 2 crossings");
        let minus = pair_hit((0, [0, 1, 2], pa), (0, [0, 1, 2], pb), -1, &mut symbolic)
            .expect("0 or 2 crossings for -t");
        if minus.is_some() {
            assert!(triangles_intersect(pa, pb));
        }
        let closed = triangles_intersect(pa, pb);
        if hit.is_some() {
            assert!(closed, "{pa:?} {pb:?}");
            stats[0] += 1;
        }
        let generic = pa
            .iter()
            .all(|&a| predicates::plane_side(pb[0], pb[1], pb[2], a) != 0)
            && pb
                .iter()
                .all(|&b| predicates::plane_side(pa[0], pa[1], pa[2], b) != 0)
            && (0..3).all(|i| {
                (0..3).all(|j| {
                    predicates::plane_side(pa[i], pa[(i + 1) % 3], pb[j], pb[(j + 1) % 3]) != 0
                })
            });
        if generic {
            stats[1] += 1;
            assert_eq!(hit.is_some(), closed, "{pa:?} {pb:?}");
        } else {
            stats[2] += 1;
        }
    }
    assert!(stats.iter().all(|&n| n > 2000), "{stats:?}");
}

#[test]
fn box_box_at_random_poses_matches_the_clipped_polytope() {
    let mut rng = ChaCha8Rng::seed_from_u64(41);
    let mut overlapping = 0;
    for case in 0..60 {
        let ha = DVec3::new(
            rng.random_range(0.3..1.2),
            rng.random_range(0.3..1.2),
            rng.random_range(0.3..1.2),
        );
        let hb = DVec3::new(
            rng.random_range(0.3..1.2),
            rng.random_range(0.3..1.2),
            rng.random_range(0.3..1.2),
        );
        let a = shapes::cuboid(ha.as_vec3()).unwrap();
        let b = shapes::cuboid(hb.as_vec3()).unwrap();
        let (ha, hb) = (a.aabb().max.as_dvec3(), b.aabb().max.as_dvec3());
        let p = random_pose(&mut rng);
        let p = DPose {
            translation: p.translation * 0.6,
            ..p
        };
        let oracle = exact_box_box(ha, hb, &p);
        let r = exact(&a, &b, &p);
        if oracle > 0.0 {
            overlapping += 1;
            assert!(
                rel(r.volume, oracle) <= 1e-9,
                "{case}: {} vs {oracle}",
                r.volume
            );
        } else {
            assert!(r.volume.abs() <= 1e-12, "{case}: {}", r.volume);
        }
    }
    assert!(overlapping > 40, "{overlapping}");
}

#[test]
fn axis_aligned_boxes_give_the_product_of_overlaps_and_its_gradient() {
    let mut rng = ChaCha8Rng::seed_from_u64(42);
    for case in 0..40 {
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
        let a = shapes::cuboid(ha.as_vec3()).unwrap();
        let b = shapes::cuboid(hb.as_vec3()).unwrap();
        let (ha, hb) = (a.aabb().max.as_dvec3(), b.aabb().max.as_dvec3());
        let t = DVec3::new(
            rng.random_range(-1.5..1.5),
            rng.random_range(-1.5..1.5),
            rng.random_range(-1.5..1.5),
        );
        let r = exact(&a, &b, &shift(t));
        let ov: [(f64, f64); 3] = std::array::from_fn(|k| {
            let (lo, hi) = ((-ha[k]).max(t[k] - hb[k]), ha[k].min(t[k] + hb[k]));
            if hi <= lo {
                return (0.0, 0.0);
            }
            let d = f64::from(u8::from(t[k] + hb[k] < ha[k]))
                - f64::from(u8::from(t[k] - hb[k] > -ha[k]));
            (hi - lo, d)
        });
        let v = ov[0].0 * ov[1].0 * ov[2].0;
        assert!(
            (r.volume - v).abs() <= 1e-12 * (1.0 + v),
            "{case}: {} vs {v}",
            r.volume
        );
        if v > 0.0 {
            for k in 0..3 {
                let g = ov[k].1 * ov[(k + 1) % 3].0 * ov[(k + 2) % 3].0;
                assert!(
                    (r.translation_gradient[k] - g).abs() <= 1e-12,
                    "{case} axis {k}: {} vs {g}",
                    r.translation_gradient[k]
                );
            }
            assert_eq!(r.regions.len(), 1);
        }
    }
}

#[test]
fn convex_polyhedra_match_the_clipping_oracle() {
    // Icospheres (lens-like overlaps of tessellated balls), a box and an icosphere, and a
    // cylinder: B's faces clipped by A's face planes.
    let mut rng = ChaCha8Rng::seed_from_u64(43);
    let solids = [
        shapes::icosphere(1.0, 2).unwrap(),
        shapes::cuboid(Vec3::new(0.9, 0.6, 0.4)).unwrap(),
        shapes::cylinder(0.7, 0.9, 24).unwrap(),
        shapes::icosphere(0.8, 1).unwrap(),
    ];
    let mut n = 0;
    for (i, a) in solids.iter().enumerate() {
        for (j, b) in solids.iter().enumerate().skip(i) {
            for case in 0..6 {
                let p = random_pose(&mut rng);
                let p = DPose {
                    translation: p.translation * 0.6,
                    ..p
                };
                let oracle = clipped_convex_volume(faces(b, &p), &planes(a));
                let r = exact(a, b, &p);
                if oracle > 1e-6 {
                    n += 1;
                    assert!(
                        rel(r.volume, oracle) <= 1e-9,
                        "{i} {j} {case}: {} vs {oracle} {p:?}",
                        r.volume
                    );
                }
            }
        }
    }
    assert!(n > 40, "{n}");
}

/// The regions' volume centroids against the clipped polytope's first moment (tetrahedra from
/// the origin): random poses of convex pairs (crossing pieces and flood-filled patches, B's
/// frame rotated), and solids wholly inside the other both ways (a contained shell: its
/// centroid is its own). Relative to the pair's size, 1e-9.
#[test]
fn region_centroids_match_the_clipped_polytope_first_moment() {
    let mut rng = ChaCha8Rng::seed_from_u64(47);
    let solids = [
        shapes::cuboid(Vec3::new(0.9, 0.6, 0.4)).unwrap(),
        shapes::icosphere(1.0, 2).unwrap(),
        shapes::cylinder(0.7, 0.9, 24).unwrap(),
    ];
    let first_moment =
        |r: &ExactResult| -> DVec3 { r.regions.iter().map(|g| g.centroid * g.volume).sum() };
    // Nested: a small turned box deep inside the big one, and the big one around the small one.
    let small = shapes::cuboid(Vec3::new(0.2, 0.1, 0.15)).unwrap();
    let big = shapes::cuboid(Vec3::splat(1.0)).unwrap();
    let turned = pose(DVec3::new(0.4, -0.7, 1.1), 0.9, DVec3::new(0.3, -0.2, 0.25));
    let r = exact(&big, &small, &turned);
    assert!(
        (first_moment(&r) / r.volume - turned.translation).length() <= 1e-12,
        "{} {:?}",
        first_moment(&r) / r.volume,
        r.regions
    );
    let back = turned.inverse();
    let r = exact(&small, &big, &back);
    assert!(
        first_moment(&r).length() <= 1e-12,
        "the small box's centroid is its origin: {}",
        first_moment(&r) / r.volume
    );
    let mut n = 0;
    for (i, a) in solids.iter().enumerate() {
        for (j, b) in solids.iter().enumerate() {
            for case in 0..5 {
                let p = random_pose(&mut rng);
                let p = DPose {
                    translation: p.translation * 0.7,
                    ..p
                };
                let (volume, first) = clipped_convex_moments(faces(b, &p), &planes(a));
                if volume < 1e-4 {
                    continue;
                }
                n += 1;
                let r = exact(a, b, &p);
                let got = first_moment(&r) / r.volume;
                let want = first / volume;
                assert!(
                    (got - want).length() <= 1e-9,
                    "{i} {j} {case}: centroid {got} vs {want}; volume {} vs {volume}; {} regions, {:?}",
                    r.volume,
                    r.regions.len(),
                    r.regions
                        .iter()
                        .map(|g| (g.volume, g.centroid))
                        .collect::<Vec<_>>()
                );
            }
        }
    }
    assert!(n > 25, "{n}");
}

#[test]
fn convex_polyhedron_against_a_half_space_box() {
    // A tessellated convex solid sunk into a huge box whose top face is the plane z = h: the
    // volume below the plane (the convex clip by one plane).
    let s = shapes::icosphere(1.0, 3).unwrap();
    let slab = shapes::cuboid(Vec3::new(50.0, 50.0, 50.0)).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(44);
    for _ in 0..8 {
        let rot = random_pose(&mut rng).rotation;
        let h: f64 = rng.random_range(-0.9..0.9);
        // The slab is B, placed so that its top face is at z = h in A's frame.
        let p = DPose {
            rotation: DMat3::IDENTITY,
            translation: DVec3::new(0.0, 0.0, h - 50.0),
        };
        let a_rot = Solid::new(
            s.mesh()
                .transformed(&Pose::from_rotation(glam::DQuat::from_mat3(&rot).as_quat())),
        )
        .unwrap();
        let oracle = clipped_convex_volume(faces(&a_rot, &DPose::IDENTITY), &[(DVec3::Z, h)]);
        let r = exact(&a_rot, &slab, &p);
        assert!(rel(r.volume, oracle) <= 1e-9, "{} vs {oracle}", r.volume);
        // d V / d(slab up) = the area of the cross-section.
        assert!(r.translation_gradient.z > 0.0);
        assert!(r.translation_gradient.x.abs() + r.translation_gradient.y.abs() < 1e-9);
    }
}

#[test]
fn sphere_lens_matches_the_polyhedral_clip_and_nearly_the_analytic_lens() {
    let s = shapes::icosphere(1.0, 3).unwrap();
    let radius = (3.0 * s.volume() / (4.0 * std::f64::consts::PI)).cbrt();
    for d in [0.3, 0.9, 1.6] {
        let p = shift(DVec3::new(d, 0.0, 0.0));
        let r = exact(&s, &s, &p);
        let oracle = clipped_convex_volume(faces(&s, &p), &planes(&s));
        assert!(
            rel(r.volume, oracle) <= 1e-9,
            "d {d}: {} vs {oracle}",
            r.volume
        );
        // The tessellation is within 1 % of the ball's lens.
        assert!(rel(r.volume, lens(radius, d)) < 0.02, "d {d}");
        // B pushed out along +x; the lens's rim disc area.
        let dv = -std::f64::consts::PI * (4.0 * radius * radius - d * d) / 4.0;
        assert!(rel(r.translation_gradient.x, dv) < 0.03, "d {d}");
        assert!(r.regions[0].normal.x > 0.99);
    }
}

#[test]
fn gradient_matches_central_differences() {
    let mut rng = ChaCha8Rng::seed_from_u64(45);
    let cases = [
        (
            shapes::bumpy_sphere(1.0, 0.25, 3.0, 2, 1).unwrap(),
            shapes::icosphere(0.7, 2).unwrap(),
        ),
        (
            shapes::cuboid(Vec3::new(1.0, 0.8, 0.6)).unwrap(),
            shapes::cuboid(Vec3::new(0.7, 0.3, 0.5)).unwrap(),
        ),
        (
            shapes::torus(1.0, 0.35, 24, 12).unwrap(),
            shapes::bumpy_sphere(0.8, 0.2, 4.0, 2, 9).unwrap(),
        ),
    ];
    let mut checked = 0;
    for (a, b) in &cases {
        let ev = ExactVolume::new(a, b);
        for _ in 0..4 {
            let p = random_pose(&mut rng);
            let p = DPose {
                translation: p.translation * 0.5,
                ..p
            };
            let v = |q: &DPose| {
                ev.compute_traversing(q, Traversal::Aabb, &options())
                    .unwrap()
            };
            let centre = p.translation + DVec3::new(0.1, -0.2, 0.05);
            let o = ExactOptions {
                centre,
                ..options()
            };
            let r = ev.compute_traversing(&p, Traversal::Aabb, &o).unwrap();
            if r.volume < 1e-3 {
                continue;
            }
            checked += 1;
            let g = r.translation_gradient;
            let h = 1e-6;
            for k in 0..3 {
                let e = unit(k) * h;
                let fd = (v(&shift(e).mul(&p)).volume - v(&shift(-e).mul(&p)).volume) / (2.0 * h);
                assert!(
                    (fd - g[k]).abs() <= 1e-6 * (1.0 + g.length()),
                    "axis {k}: {fd} vs {}",
                    g[k]
                );
            }
            let rg = r.rotation_gradient;
            for k in 0..3 {
                let rot = |ang: f64| {
                    shift(centre)
                        .mul(&pose(unit(k), ang, DVec3::ZERO))
                        .mul(&shift(-centre))
                        .mul(&p)
                };
                let fd = (v(&rot(h)).volume - v(&rot(-h)).volume) / (2.0 * h);
                assert!(
                    (fd - rg[k]).abs() <= 1e-6 * (1.0 + rg.length()),
                    "rot {k}: {fd} vs {}",
                    rg[k]
                );
            }
            // A's gradient is minus B's: the pieces on A sum to −∂V/∂x_B.
            assert!(r.closure.length() < 1e-9);
        }
    }
    assert!(checked >= 6, "{checked}");
}

#[test]
fn uniform_sampler_converges_to_the_exact_volume() {
    let a = shapes::bumpy_sphere(1.0, 0.2, 3.0, 3, 4).unwrap();
    let b = shapes::torus(0.9, 0.35, 32, 16).unwrap();
    let p = pose(DVec3::new(1.0, 0.3, -0.5), 0.8, DVec3::new(0.6, 0.2, -0.1));
    let r = exact(&a, &b, &p);
    assert!(r.volume > 0.05);
    let uv = UniformVolume::new(&a, &b);
    let mut errors = Vec::new();
    for res in [16, 32, 64] {
        let s = uv
            .compute(
                &p,
                &UniformOptions {
                    sampling: Sampling::Resolution(res),
                    collect_points: false,
                    ..UniformOptions::default()
                },
            )
            .unwrap();
        let err = (s.volume - r.volume).abs();
        // Within four of the sampler's own error estimates (its calibration), and shrinking.
        let est = s.estimated_error().unwrap();
        assert!(
            err <= 4.0 * est + 1e-12,
            "R {res}: error {err}, estimate {est}"
        );
        errors.push(err / r.volume);
    }
    assert!(errors[2] < errors[0], "{errors:?}");
    assert!(errors[2] < 2e-3, "{errors:?}");
}

#[test]
fn matches_parry3d_mesh_boolean_on_random_poses() {
    use parry3d::math::{Pose as PPose, Vec3 as PVec3};
    use parry3d::shape::{TriMesh as PTriMesh, TriMeshFlags};
    let to_parry = |s: &Solid, p: &DPose| {
        let v = s
            .vertices()
            .iter()
            .map(|&v| {
                let q = p.transform_point(v);
                PVec3::new(q.x as f32, q.y as f32, q.z as f32)
            })
            .collect();
        PTriMesh::with_flags(
            v,
            s.triangles().to_vec(),
            TriMeshFlags::ORIENTED | TriMeshFlags::HALF_EDGE_TOPOLOGY,
        )
        .unwrap()
    };
    let a = shapes::bumpy_sphere(1.0, 0.2, 3.0, 2, 11).unwrap();
    let b = shapes::bumpy_sphere(0.9, 0.25, 2.0, 2, 3).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(46);
    let (mut compared, mut arbitrated, mut worst) = (0, 0, 0.0f64);
    for _ in 0..12 {
        let p = random_pose(&mut rng);
        let p = DPose {
            translation: p.translation * 0.5,
            ..p
        };
        // parry is f32: give it B already placed (rounded to f32), and compare with our volume
        // of the same rounded placement.
        let pb = to_parry(&b, &p);
        let placed_b = Solid::new(
            TriMesh::new(
                pb.vertices()
                    .iter()
                    .map(|v| Vec3::new(v.x, v.y, v.z))
                    .collect(),
                b.triangles().to_vec(),
            )
            .unwrap(),
        )
        .unwrap();
        let ours = exact(&a, &placed_b, &DPose::IDENTITY).volume;
        let pa = to_parry(&a, &DPose::IDENTITY);
        let Ok(Some(m)) = parry3d::transformation::intersect_meshes(
            &PPose::IDENTITY,
            &pa,
            false,
            &PPose::IDENTITY,
            &pb,
            false,
        ) else {
            continue;
        };
        let mut v = 0.0f64;
        for t in m.indices() {
            let [x, y, z] = t.map(|i| {
                let q = m.vertices()[i as usize];
                DVec3::new(q.x as f64, q.y as f64, q.z as f64)
            });
            v += x.dot(y.cross(z)) / 6.0;
        }
        compared += 1;
        let r = (v - ours).abs() / ours;
        worst = worst.max(r);
        // parry3d's boolean is f32 with merging tolerances: it agrees to 1e-4 at most poses;
        // where it does not, the uniform sampler at R = 256 arbitrates (measured: parry 3.5e-4
        // off at one pose, where the sampler agrees with ours to 2e-6).
        assert!(r <= 1e-3, "{v} vs {ours}");
        if r > 1e-4 {
            arbitrated += 1;
            let s = UniformVolume::new(&a, &placed_b)
                .compute(
                    &DPose::IDENTITY,
                    &UniformOptions {
                        sampling: Sampling::Resolution(256),
                        collect_points: false,
                        ..UniformOptions::default()
                    },
                )
                .unwrap();
            let est = s.estimated_error().unwrap();
            assert!(
                (s.volume - ours).abs() <= 4.0 * est,
                "{} vs {ours} ({est})",
                s.volume
            );
            assert!(
                (s.volume - ours).abs() < (v - ours).abs(),
                "parry is closer"
            );
        }
    }
    eprintln!(
        "parry3d intersect_meshes vs exact: worst relative difference {worst:.2e}, {arbitrated} arbitrated"
    );
    assert!(compared >= 8, "{compared}");
}

#[test]
fn box_resting_flat_on_a_slab() {
    let cube = shapes::cuboid(Vec3::splat(0.5)).unwrap();
    let slab = shapes::cuboid(Vec3::new(3.0, 3.0, 0.5)).unwrap();
    // A is the cube, B the slab below it with its top face exactly at the cube's bottom face.
    let below = shift(DVec3::new(0.2, -0.1, -1.0));
    let r = exact(&cube, &slab, &below);
    assert_eq!(r.volume.abs(), 0.0, "{}", r.volume);
    // Defined gradient at the kink: raising the slab (B) overlaps at the rate of the cube's
    // footprint (+z, 1), lowering it does not (0); the result is their mean.
    assert!(r.symmetrized);
    assert!(
        (r.translation_gradient - DVec3::new(0.0, 0.0, 0.5)).length() < 1e-12,
        "{}",
        r.translation_gradient
    );
    // Swapped roles: the same contact seen from the cube: the mean is −z/2.
    let r = exact(&slab, &cube, &below.inverse());
    assert_eq!(r.volume, 0.0);
    assert!(
        (r.translation_gradient - DVec3::new(0.0, 0.0, -0.5)).length() < 1e-12,
        "{}",
        r.translation_gradient
    );
    // Sunk exactly flush: the slab's top face at the cube's centre plane.
    let flush = shift(DVec3::new(0.2, -0.1, -0.5));
    let r = exact(&cube, &slab, &flush);
    assert!((r.volume - 0.5).abs() < 1e-12, "{}", r.volume);
    assert!((r.translation_gradient - DVec3::Z).length() < 1e-12);
    assert_eq!(r.regions.len(), 1);
    assert!((r.regions[0].normal + DVec3::Z).length() < 1e-12);
}

#[test]
fn aligned_faces_give_no_sideways_gradient() {
    // Two unit cubes offset along x only: their y and z faces are coplanar. The volume is
    // 1 − x; the gradient must be exactly (−1, 0, 0), not a one-sided derivative across the
    // aligned faces (which would push B sideways).
    let c = shapes::cuboid(Vec3::splat(0.5)).unwrap();
    for x in [0.25, 0.5, 0.75] {
        let r = exact(&c, &c, &shift(DVec3::new(x, 0.0, 0.0)));
        assert!(r.symmetrized);
        assert!((r.volume - (1.0 - x)).abs() < 1e-12);
        assert!(
            (r.translation_gradient - DVec3::new(-1.0, 0.0, 0.0)).length() < 1e-12,
            "{x}: {}",
            r.translation_gradient
        );
        assert_eq!(r.regions.len(), 1);
        assert!((r.regions[0].normal - DVec3::X).length() < 1e-12);
    }
    // A box stacked on another with aligned sides, sunk a little: pushed straight up.
    let b = shapes::cuboid(Vec3::new(0.5, 0.5, 0.25)).unwrap();
    let r = exact(&c, &b, &shift(DVec3::new(0.0, 0.0, 0.7)));
    assert!((r.volume - 0.05).abs() < 1e-12, "{}", r.volume);
    assert!((r.translation_gradient - DVec3::new(0.0, 0.0, -1.0)).length() < 1e-12);
    // A generic pose is not symmetrized.
    let r = exact(
        &c,
        &b,
        &pose(DVec3::new(1.0, 2.0, 3.0), 0.3, DVec3::new(0.1, 0.2, 0.6)),
    );
    assert!(!r.symmetrized && r.volume > 0.0);
}

#[test]
fn identical_and_coincident_solids() {
    for s in [
        shapes::cuboid(Vec3::new(1.0, 0.5, 0.25)).unwrap(),
        shapes::icosphere(1.0, 2).unwrap(),
        shapes::torus(1.0, 0.3, 16, 8).unwrap(),
        shapes::subdivided_cuboid(Vec3::ONE, 3).unwrap(),
    ] {
        let r = exact(&s, &s, &DPose::IDENTITY);
        assert!(
            rel(r.volume, s.volume()) <= 1e-12,
            "{} vs {}",
            r.volume,
            s.volume()
        );
    }
}

#[test]
fn cubes_sharing_faces_edges_and_vertices() {
    let c = shapes::cuboid(Vec3::splat(0.5)).unwrap();
    for t in [
        DVec3::new(1.0, 0.0, 0.0),
        DVec3::new(1.0, 1.0, 0.0),
        DVec3::new(1.0, 1.0, 1.0),
        DVec3::new(-1.0, 0.0, 0.0),
        DVec3::new(0.0, -1.0, 1.0),
        DVec3::new(-1.0, -1.0, -1.0),
    ] {
        let r = exact(&c, &c, &shift(t));
        assert_eq!(r.volume, 0.0, "{t}");
        // Touching without overlap: the gradient is one-sided along t = (ε, ε², ε³): only a
        // face contact whose normal the perturbation pushes into can have one.
        let g = r.translation_gradient;
        assert!(g.x <= 0.0 || t.x < 0.0, "{t}: {g}");
        // Half a step inside: the product of overlaps.
        let r = exact(&c, &c, &shift(t * 0.5));
        let expected = (1.0 - 0.5 * t.x.abs()) * (1.0 - 0.5 * t.y.abs()) * (1.0 - 0.5 * t.z.abs());
        assert!((r.volume - expected).abs() < 1e-12, "{t}: {}", r.volume);
    }
}

#[test]
fn one_solid_inside_the_other_both_ways() {
    let big = shapes::icosphere(2.0, 2).unwrap();
    let small = shapes::bumpy_sphere(0.5, 0.2, 3.0, 2, 3).unwrap();
    let p = pose(DVec3::new(1.0, 2.0, 0.5), 0.7, DVec3::new(0.3, 0.2, -0.1));
    let r = exact(&big, &small, &p);
    assert!(rel(r.volume, small.volume()) <= 1e-12, "{}", r.volume);
    assert_eq!(r.crossing_pairs, 0);
    assert_eq!(r.contained_shells, [0, 1]);
    assert!(r.translation_gradient.length() < 1e-12);
    assert!(r.rotation_gradient.length() < 1e-12);
    let r = exact(&small, &big, &p.inverse());
    assert!(rel(r.volume, small.volume()) <= 1e-12);
    assert_eq!(r.contained_shells, [1, 0]);
    assert!(r.translation_gradient.length() < 1e-12);
    // Disjoint: far away, and inside the box but outside the solid (torus hole).
    let r = exact(&big, &small, &shift(DVec3::new(5.0, 0.0, 0.0)));
    assert_eq!(r.volume, 0.0);
    assert_eq!(r.point_tests, 0);
    let t = shapes::torus(2.0, 0.5, 32, 16).unwrap();
    let ball = shapes::icosphere(1.0, 2).unwrap();
    let r = exact(&t, &ball, &DPose::IDENTITY);
    assert_eq!(r.volume, 0.0);
    assert!(r.regions.is_empty());
}

#[test]
fn nested_shells_and_two_regions() {
    // B has two shells: one overlapping A's left side, one right; and a third case with one
    // shell inside A and one crossing.
    let a = shapes::cuboid(Vec3::new(2.0, 0.5, 0.5)).unwrap();
    let ball = |x: f32| {
        shapes::icosphere(0.4, 2)
            .unwrap()
            .mesh()
            .transformed(&Pose::from_translation(Vec3::new(x, 0.0, 0.5)))
    };
    let two = Solid::new(TriMesh::merge(&[&ball(-1.5), &ball(1.5)]).unwrap()).unwrap();
    let r = exact(&a, &two, &DPose::IDENTITY);
    assert_eq!(r.regions.len(), 2);
    let one = Solid::new(ball(-1.5)).unwrap();
    let r1 = exact(&a, &one, &DPose::IDENTITY);
    assert_eq!(r1.regions.len(), 1);
    assert!(
        rel(r.volume, 2.0 * r1.volume) < 1e-12,
        "{} vs {}",
        r.volume,
        r1.volume
    );
    for g in &r.regions {
        assert!(rel(g.volume, r1.volume) < 1e-12);
        // B's lower half is in A: pushing B up (+z, from A into B) separates them.
        assert!(g.normal.z > 0.99, "{}", g.normal);
        assert!((g.point.x.abs() - 1.5).abs() < 1e-9, "{}", g.point);
    }
    // One shell crossing, one shell wholly inside.
    let inner = shapes::icosphere(0.3, 1)
        .unwrap()
        .mesh()
        .transformed(&Pose::from_translation(Vec3::new(0.0, 0.0, 0.0)));
    let mixed = Solid::new(TriMesh::merge(&[&ball(1.5), &inner]).unwrap()).unwrap();
    let r = exact(&a, &mixed, &DPose::IDENTITY);
    let inner_v = Solid::new(inner).unwrap().volume();
    assert_eq!(r.contained_shells, [0, 1]);
    assert_eq!(r.regions.len(), 2);
    assert!(rel(r.volume, r1.volume + inner_v) < 1e-12);
}

#[test]
fn huge_offsets_on_both_poses() {
    let a = shapes::bumpy_sphere(1.0, 0.2, 3.0, 2, 2).unwrap();
    let b = shapes::icosphere(0.8, 2).unwrap();
    let rel_pose = pose(DVec3::new(0.3, 1.0, 0.2), 0.9, DVec3::new(0.7, 0.3, -0.2));
    let base = exact(&a, &b, &rel_pose);
    for (offset, tol) in [(1e6, 1e-8), (1e9, 1e-5)] {
        // World poses with a huge common offset; the relative pose computed in f64 as the
        // caller would (A⁻¹ B), which rounds the translation at the offset's ulp.
        let wa = DPose {
            rotation: DMat3::from_axis_angle(DVec3::new(1.0, 2.0, 3.0).normalize(), 0.4),
            translation: DVec3::splat(offset),
        };
        let wb = wa.mul(&rel_pose);
        let rp = wa.inverse().mul(&wb);
        let r = exact(&a, &b, &rp);
        assert!(
            rel(r.volume, base.volume) <= tol,
            "offset {offset}: {} vs {}",
            r.volume,
            base.volume
        );
    }
    // Huge coordinates in the meshes themselves: boxes of half size 1e5, shifted.
    let big = shapes::cuboid(Vec3::splat(1.0e5)).unwrap();
    let r = exact(&big, &big, &shift(DVec3::new(0.5e5, 0.25e5, -0.5e5)));
    let expected = 1.5e5 * 1.75e5 * 1.5e5;
    assert!(rel(r.volume, expected) <= 1e-12, "{}", r.volume);
}

#[test]
fn tiny_overlaps_and_slivers() {
    let c = shapes::cuboid(Vec3::splat(0.5)).unwrap();
    // 1e-9 deep, rotated slightly: a sliver wedge.
    for depth in [1e-9, 1e-6] {
        let p = shift(DVec3::new(1.0 - depth, 0.1, -0.2));
        let r = exact(&c, &c, &p);
        assert!(
            rel(r.volume, depth * 0.9 * 0.8) < 1e-6,
            "{depth}: {}",
            r.volume
        );
        assert!((r.translation_gradient.x + 0.9 * 0.8).abs() < 1e-9);
    }
    // A thin rotated slab crossing a box: sliver triangles everywhere.
    let thin = shapes::cuboid(Vec3::new(2.0, 2.0, 1e-4)).unwrap();
    let p = pose(DVec3::new(0.2, 0.1, 1.0), 0.3, DVec3::new(0.05, 0.0, 0.1));
    let ha = DVec3::splat(0.5);
    let hb = thin.aabb().max.as_dvec3();
    let r = exact(&c, &thin, &p);
    let oracle = exact_box_box(ha, hb, &p);
    assert!(rel(r.volume, oracle) < 1e-9, "{} vs {oracle}", r.volume);
}

#[test]
fn same_result_with_one_and_two_threads() {
    let a = shapes::bumpy_sphere(1.0, 0.2, 3.0, 5, 5).unwrap();
    let b = shapes::bumpy_sphere(1.0, 0.25, 2.0, 5, 8).unwrap();
    let ev = ExactVolume::new(&a, &b);
    let ca = MeshQueries::new(a.mesh().clone());
    let cb = MeshQueries::new(b.mesh().clone());
    let mut rng = ChaCha8Rng::seed_from_u64(47);
    for _ in 0..4 {
        let p = random_pose(&mut rng);
        let p = DPose {
            translation: p.translation * 0.2,
            ..p
        };
        let pairs = ca.all_pairs(&cb, &p, Method::Aabb).unwrap();
        assert!(pairs.len() > 2 * super::PAIRS_PER_THREAD, "{}", pairs.len());
        let one = ev.compute(&p, &pairs, &options()).unwrap();
        let two = ev
            .compute(
                &p,
                &pairs,
                &ExactOptions {
                    threads: 2,
                    ..options()
                },
            )
            .unwrap();
        assert_eq!(one, two);
        assert_eq!(one.volume.to_bits(), two.volume.to_bits());
        // Unsorted, repeated candidates give the same result too.
        let mut shuffled = pairs.clone();
        shuffled.reverse();
        shuffled.extend_from_slice(&pairs[..10]);
        let three = ev.compute(&p, &shuffled, &options()).unwrap();
        assert_eq!(one.volume.to_bits(), three.volume.to_bits());
        // The fused traversals split their node pairs over the threads: the same result, and
        // the same candidates, for any thread count.
        for t in [Traversal::Obb, Traversal::Aabb] {
            let fused = |threads| {
                ev.compute_traversing(
                    &p,
                    t,
                    &ExactOptions {
                        threads,
                        ..options()
                    },
                )
                .unwrap()
            };
            let f1 = fused(1);
            assert_eq!(f1.volume.to_bits(), one.volume.to_bits(), "{t:?}");
            for threads in [2, 3, 8] {
                let f = fused(threads);
                assert_eq!(f, f1, "{t:?}, {threads} threads");
                assert_eq!(f.candidate_pairs, f1.candidate_pairs);
            }
        }
    }
}

#[test]
fn bad_input_is_refused() {
    let s = shapes::icosphere(1.0, 1).unwrap();
    let ev = ExactVolume::new(&s, &s);
    let bad = shift(DVec3::new(f64::NAN, 0.0, 0.0));
    assert_eq!(
        ev.compute(&bad, &[], &options()),
        Err(VolumeError::NonFinitePose)
    );
    let o = ExactOptions {
        centre: DVec3::INFINITY,
        ..options()
    };
    assert_eq!(
        ev.compute(&DPose::IDENTITY, &[], &o),
        Err(VolumeError::NonFinitePose)
    );
    let n = s.triangle_count() as u32;
    assert!(matches!(
        ev.compute(&DPose::IDENTITY, &[(0, 0), (n, 0)], &options()),
        Err(VolumeError::PairOutOfRange { index: 1, .. })
    ));
    // Candidates missing half of the crossing pairs.
    let p = shift(DVec3::new(0.8, 0.1, 0.0));
    let ca = MeshQueries::new(s.mesh().clone());
    let pairs = ca.all_pairs(&ca, &p, Method::Obb).unwrap();
    let half: Vec<(u32, u32)> = pairs.iter().copied().step_by(2).collect();
    assert!(matches!(
        ev.compute(&p, &half, &options()),
        Err(VolumeError::IncompleteCandidates { .. })
    ));
    let other = shapes::icosphere(1.0, 2).unwrap();
    let topo = Arc::new(SurfaceTopology::new(&other));
    assert!(matches!(
        ExactVolume::with_topology(&s, topo.clone(), &s, topo),
        Err(VolumeError::TreeMismatch { .. })
    ));
}

/// The real bunny (../shared/meshes/bunny25k.obj, outside the project: `#[ignore]`d): the exact
/// volume agrees with parry3d's mesh boolean at tumbling poses, and the stages are timed (a
/// profile for development; the figures to report come from `interfere bench volume`).
#[test]
#[ignore = "needs ../shared/meshes/bunny25k.obj"]
fn bunny25k_profile() {
    // On-CPU time of this thread (the machine is shared: wall time is not ours alone).
    struct Instant(u64);
    impl Instant {
        fn now() -> Self {
            let s = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
            Self(
                s.split_whitespace()
                    .next()
                    .and_then(|x| x.parse().ok())
                    .unwrap_or(0),
            )
        }
        fn elapsed(&self) -> std::time::Duration {
            std::time::Duration::from_nanos(Self::now().0 - self.0)
        }
    }
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/meshes/bunny25k.obj");
    let mesh = crate::io::load_mesh(&path, &crate::mesh::MeshOptions::default())
        .unwrap()
        .normalized_to_unit_cube();
    let s = Solid::new(mesh).unwrap();
    let ev = ExactVolume::new(&s, &s);
    let col = MeshQueries::new(s.mesh().clone());
    col.prepare(Method::Obb);
    ev.prepare(Traversal::Obb);
    for d in [1.0, 0.5] {
        let n = 20;
        let mut best = [f64::INFINITY; 3];
        let mut inside = [0usize; 2];
        for _rep in 0..5 {
            let (mut t_narrow, mut t_exact, mut t_fused) = (0.0, 0.0, 0.0);
            inside = [0; 2];
            for i in 0..n {
                let golden = (1.0 + 5f64.sqrt()) / 2.0;
                let alpha = std::f64::consts::TAU * i as f64 / n as f64;
                let beta = std::f64::consts::TAU * (i as f64 * golden).fract();
                let p = DPose {
                    rotation: DMat3::from_rotation_x(beta) * DMat3::from_rotation_z(alpha),
                    translation: DVec3::new(d, 0.0, 0.0),
                };
                let t = Instant::now();
                let pairs = col.all_pairs(&col, &p, Method::Obb).unwrap();
                t_narrow += t.elapsed().as_secs_f64();
                let t = Instant::now();
                let r = ev.compute(&p, &pairs, &options()).unwrap();
                t_exact += t.elapsed().as_secs_f64();
                let t = Instant::now();
                let f = ev
                    .compute_traversing(&p, Traversal::Obb, &options())
                    .unwrap();
                t_fused += t.elapsed().as_secs_f64();
                assert_eq!(r.volume.to_bits(), f.volume.to_bits());
                inside[0] += r.inside_triangles[0];
                inside[1] += r.inside_triangles[1];
            }

            best = [
                best[0].min(t_narrow),
                best[1].min(t_exact),
                best[2].min(t_fused),
            ];
        }
        let [t_narrow, t_exact, t_fused] = best;
        eprintln!("inside triangles per query: {:?}", inside.map(|x| x / n));
        let k = 1e3 / n as f64;
        eprintln!(
            "d {d}: narrow {:.3} ms, exact on its pairs {:.3} ms, fused {:.3} ms",
            t_narrow * k,
            t_exact * k,
            t_fused * k
        );
    }
}

/// A query's scratch is reused by later `ExactVolume`s (the spares of dropped ones): the same
/// pairs at the same poses give the same bits with a fresh scratch and with one left by pairs of
/// other sizes, in any order.
#[test]
fn reused_scratch_gives_the_same_bits() {
    let mut rng = ChaCha8Rng::seed_from_u64(31);
    let small = shapes::icosphere(0.5, 1).unwrap();
    let large = shapes::icosphere(0.6, 3).unwrap();
    let cube = shapes::cuboid(Vec3::new(0.4, 0.3, 0.5)).unwrap();
    let pairs = [(&small, &cube), (&large, &cube), (&large, &small)];
    let poses: Vec<DPose> = (0..6)
        .map(|_| crate::test_support::random_pose(&mut rng, 0.3))
        .collect();
    let run = |a: &Solid, b: &Solid, p: &DPose| {
        let r = ExactVolume::new(a, b)
            .compute_traversing(p, Traversal::Obb, &options())
            .unwrap();
        (r.volume.to_bits(), r.translation_gradient, r.regions)
    };
    let first: Vec<_> = pairs
        .iter()
        .flat_map(|&(a, b)| poses.iter().map(move |p| (a, b, p)))
        .map(|(a, b, p)| run(a, b, p))
        .collect();
    assert!(first.iter().any(|r| f64::from_bits(r.0) > 0.0));
    // Again, pairs in reverse order (each query now gets a scratch another pair left).
    let mut again: Vec<_> = pairs
        .iter()
        .rev()
        .flat_map(|&(a, b)| poses.iter().rev().map(move |p| (a, b, p)))
        .map(|(a, b, p)| run(a, b, p))
        .collect();
    again.reverse();
    assert_eq!(first, again);
}

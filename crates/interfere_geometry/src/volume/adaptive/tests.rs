//! Oracle tests of the adaptive volume: exact polyhedral volumes (convex clipping, analytic box
//! overlaps, nested solids), the tolerance in every case, finite differences of the gradient,
//! and unit checks of the raster, the tile-size optimization and the pyramid.

use super::ebpi::{Ebpi, EdgeSource, Texel, raster};
use super::pyramid::coarsen;
use super::tile_size::{MAX_SPLIT, plan};
use super::*;
use crate::shapes;
use crate::volume::tests::{
    clipped_convex_volume, pose, random_pose, rectangle_area_in_square, shift,
};
use crate::volume::{Sampling, UniformOptions, UniformVolume};
use glam::Vec3;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn opts(tolerance: Tolerance) -> AdaptiveOptions {
    AdaptiveOptions {
        tolerance,
        collect_points: false,
        ..AdaptiveOptions::default()
    }
}

/// Exact volume of convex `a ∩ b` (both convex, B placed by `p`): B's triangles clipped by the
/// planes of A's triangles.
pub(super) fn exact_convex(a: &Solid, b: &Solid, p: &DPose) -> f64 {
    let faces: Vec<Vec<DVec3>> = b
        .triangles()
        .iter()
        .map(|t| {
            t.iter()
                .map(|&i| p.transform_point(b.vertices()[i as usize]))
                .collect()
        })
        .collect();
    let mut planes: Vec<(DVec3, f64)> = Vec::new();
    for t in 0..a.triangle_count() {
        let [x, y, z] = a.triangle(t).map(|v| v.as_dvec3());
        let n = (y - x).cross(z - x).normalize();
        let plane = (n, n.dot(x));
        // Clipping twice by one plane would add its cap twice (a box face is two triangles).
        if !planes
            .iter()
            .any(|q| (q.0 - plane.0).length() < 1e-9 && (q.1 - plane.1).abs() < 1e-9)
        {
            planes.push(plane);
        }
    }
    clipped_convex_volume(faces, &planes)
}

/// The tolerances every case is checked at: 1 % and 0.1 % of the smaller solid's volume, and
/// 1 % of the exact intersection volume.
fn tolerances(exact: f64) -> [Tolerance; 3] {
    [
        Tolerance::Relative(1e-2),
        Tolerance::Relative(1e-3),
        Tolerance::Absolute(1e-2 * exact),
    ]
}

/// Runs the adaptive volume and checks the tolerance against `exact`; returns the result.
fn check(
    av: &AdaptiveVolume<'_>,
    p: &DPose,
    tolerance: Tolerance,
    exact: f64,
    what: &str,
) -> AdaptiveResult {
    let r = av.compute(p, &opts(tolerance)).unwrap();
    println!(
        "{what}: rays {} refined {} bound {:.2e} tol {:.2e} err {:.2e}",
        r.result.ray_count,
        r.refined_rays,
        r.error_bound,
        r.tolerance,
        (r.result.volume - exact).abs()
    );
    let err = (r.result.volume - exact).abs();
    assert!(
        r.tolerance_met && r.error_bound <= r.tolerance,
        "{what}: bound {} > tolerance {}",
        r.error_bound,
        r.tolerance
    );
    assert!(
        err <= r.tolerance,
        "{what}: |{} - {exact}| = {err} > tolerance {} (bound {}, rays {})",
        r.result.volume,
        r.tolerance,
        r.error_bound,
        r.result.ray_count
    );
    // The error bound of each axis bounds that axis's actual error.
    for k in 0..3 {
        let ek = (r.result.axis_volumes[k] - exact).abs();
        assert!(
            ek <= r.axis_error_bounds[k] + 1e-12 * exact.max(1.0),
            "{what}: axis {k} error {ek} > bound {}",
            r.axis_error_bounds[k]
        );
    }
    r
}

#[test]
fn convex_oracle_is_exact_on_known_cases() {
    // A sphere inside a big box, and a lens against the uniform sampler at high resolution.
    let s = shapes::icosphere(1.0, 2).unwrap();
    let big = shapes::cuboid(Vec3::splat(3.0)).unwrap();
    let p = pose(DVec3::new(1.0, 2.0, 3.0), 0.5, DVec3::new(0.1, 0.2, 0.3));
    let v = exact_convex(&big, &s, &p);
    assert!((v - s.volume()).abs() < 1e-9 * s.volume(), "{v}");
    let p = pose(DVec3::new(1.0, 2.0, 3.0), 0.5, DVec3::new(0.9, 0.2, 0.3));
    let v = exact_convex(&s, &s, &p);
    let u = crate::volume::uniform_volume(
        &s,
        &s,
        &p,
        &UniformOptions {
            sampling: Sampling::Resolution(96),
            collect_points: false,
            ..UniformOptions::default()
        },
    )
    .unwrap();
    assert!((v - u.volume).abs() < 2e-3 * v, "{v} vs {}", u.volume);
    let c = shapes::cuboid(Vec3::ONE).unwrap();
    let v = exact_convex(&c, &c, &shift(DVec3::new(0.5, 0.25, -1.5)));
    assert!((v - 1.5 * 1.75 * 0.5).abs() < 1e-12, "{v}");
}

#[test]
fn rotated_boxes_meet_the_tolerance() {
    let mut rng = ChaCha8Rng::seed_from_u64(51);
    let a = shapes::cuboid(Vec3::new(1.0, 0.8, 0.6)).unwrap();
    let b = shapes::cuboid(Vec3::new(0.7, 0.5, 0.9)).unwrap();
    let av = AdaptiveVolume::new(&a, &b);
    for case in 0..6 {
        let p = random_pose(&mut rng);
        let p = DPose {
            translation: p.translation * 0.4,
            ..p
        };
        let exact = exact_convex(&a, &b, &p);
        assert!(exact > 0.05, "{case}: {exact}");
        for tol in tolerances(exact) {
            check(&av, &p, tol, exact, &format!("boxes {case} {tol:?}"));
        }
    }
}

#[test]
fn aligned_coplanar_and_touching_boxes() {
    let a = shapes::cuboid(Vec3::new(1.0, 1.0, 0.5)).unwrap();
    // Axis-aligned, sharing the face planes y = ±1 and z = ±0.5 (coplanar faces of both).
    let b = shapes::cuboid(Vec3::new(0.6, 1.0, 0.5)).unwrap();
    let av = AdaptiveVolume::new(&a, &b);
    // The f32 half extents, exactly as the meshes hold them.
    let h = f64::from(0.6f32);
    for x in [0.0, 0.7, -1.3] {
        let exact = (1.0f64.min(x + h) - (-1.0f64).max(x - h)) * 2.0 * 1.0;
        for tol in tolerances(exact) {
            check(&av, &shift(DVec3::new(x, 0.0, 0.0)), tol, exact, "aligned");
        }
    }
    // Rotated about z, top and bottom faces coplanar with A's: the exact prism.
    let b = shapes::cuboid(Vec3::new(0.8, 0.4, 0.5)).unwrap();
    let av = AdaptiveVolume::new(&a, &b);
    for (angle, t) in [
        (0.6, DVec3::new(0.9, 0.3, 0.0)),
        (-1.1, DVec3::new(-0.5, 0.8, 0.0)),
    ] {
        let p = pose(DVec3::Z, angle, t);
        let exact = rectangle_area_in_square(&p);
        // B's walls are parallel to z and slanted in the image: the narrow-face bound needs
        // small tiles in both directions along them (section 4.4's view optimization is what
        // the paper uses against that), so only the 1 % tolerance is run here.
        check(&av, &p, Tolerance::Relative(1e-2), exact, "prism");
    }
    // Touching face to face and edge to edge: zero volume, zero gradient.
    let c = shapes::cuboid(Vec3::ONE).unwrap();
    let av = AdaptiveVolume::new(&c, &c);
    for t in [DVec3::new(2.0, 0.3, -0.2), DVec3::new(2.0, 2.0, 0.0)] {
        let r = av
            .compute(&shift(t), &opts(Tolerance::Relative(1e-3)))
            .unwrap();
        assert_eq!(r.result.volume, 0.0);
        assert_eq!(r.result.force, DVec3::ZERO);
    }
    // A rotated box touching A's face x = 1 from outside (non-flat overlap box).
    let b = shapes::cuboid(Vec3::new(1.0, 0.5, 0.5)).unwrap();
    let r = adaptive_volume(
        &c,
        &b,
        &pose(DVec3::X, 0.5, DVec3::new(2.0, 0.0, 0.0)),
        &opts(Tolerance::Relative(1e-3)),
    )
    .unwrap();
    assert_eq!(r.result.volume, 0.0);
    assert!(
        r.result
            .gradient_a
            .iter()
            .chain(&r.result.gradient_b)
            .all(|g| *g == DVec3::ZERO)
    );
}

#[test]
fn sphere_lenses_meet_the_tolerance() {
    let mut rng = ChaCha8Rng::seed_from_u64(52);
    let s = shapes::icosphere(1.0, 2).unwrap();
    let av = AdaptiveVolume::new(&s, &s);
    for d in [0.3, 1.0, 1.7] {
        let rot = random_pose(&mut rng).rotation;
        let p = DPose {
            rotation: rot,
            translation: DVec3::new(d, 0.2 * d, -0.1),
        };
        let exact = exact_convex(&s, &s, &p);
        assert!(exact > 1e-3, "{d}: {exact}");
        for tol in tolerances(exact) {
            check(&av, &p, tol, exact, &format!("lens d {d} {tol:?}"));
        }
    }
}

#[test]
fn box_sphere_meets_the_tolerance() {
    let mut rng = ChaCha8Rng::seed_from_u64(53);
    let a = shapes::cuboid(Vec3::new(1.0, 0.6, 0.8)).unwrap();
    let b = shapes::icosphere(0.8, 2).unwrap();
    let av = AdaptiveVolume::new(&a, &b);
    // Random poses until four overlap by at least 1e-2 (small overlaps are covered by the lens
    // and nested tests); the draws are capped so that a change of the pose generator that makes
    // overlaps rare fails here instead of checking nothing.
    let mut checked = 0;
    for case in 0..40 {
        if checked == 4 {
            break;
        }
        let p = random_pose(&mut rng);
        let p = DPose {
            translation: p.translation * 0.6,
            ..p
        };
        let exact = exact_convex(&a, &b, &p);
        if exact < 1e-2 {
            continue;
        }
        for tol in tolerances(exact) {
            check(&av, &p, tol, exact, &format!("box-sphere {case} {tol:?}"));
        }
        checked += 1;
    }
    assert_eq!(checked, 4, "too few overlapping poses in 40 draws");
}

#[test]
fn nested_and_coincident_solids_meet_the_tolerance() {
    let big = shapes::icosphere(2.0, 2).unwrap();
    let small = shapes::bumpy_sphere(0.5, 0.2, 3.0, 2, 3).unwrap();
    let p = pose(DVec3::new(1.0, 2.0, 0.5), 0.7, DVec3::new(0.3, 0.2, -0.1));
    let exact = small.volume();
    let av = AdaptiveVolume::new(&big, &small);
    for tol in tolerances(exact) {
        let r = check(&av, &p, tol, exact, "nested");
        // Inside A the volume does not depend on B's translation.
        assert!(r.result.translation_gradient().abs().max_element() < 1e-12);
        assert!(r.result.gradient_a.iter().all(|g| *g == DVec3::ZERO));
    }
    let av = AdaptiveVolume::new(&small, &big);
    check(
        &av,
        &p.inverse(),
        Tolerance::Relative(1e-2),
        exact,
        "nested, swapped",
    );
    // Coincident solids: every face of A coplanar with one of B.
    for s in [
        shapes::cuboid(Vec3::new(1.0, 0.5, 0.25)).unwrap(),
        shapes::icosphere(1.0, 2).unwrap(),
    ] {
        let av = AdaptiveVolume::new(&s, &s);
        check(
            &av,
            &DPose::IDENTITY,
            Tolerance::Relative(1e-2),
            s.volume(),
            "coincident",
        );
    }
}

#[test]
fn gradient_matches_finite_differences_of_the_adaptive_volume() {
    let a = shapes::icosphere(1.0, 2).unwrap();
    let b = shapes::icosphere(0.8, 2).unwrap();
    let av = AdaptiveVolume::new(&a, &b);
    let p = pose(DVec3::new(1.0, 1.0, 0.0), 0.4, DVec3::new(0.9, 0.4, -0.3));
    let o = AdaptiveOptions {
        tolerance: Tolerance::Relative(5e-4),
        collect_points: false,
        ..AdaptiveOptions::default()
    };
    let r = av.compute(&p, &o).unwrap();
    let g = r.result.translation_gradient();
    assert!(g.length() > 0.5, "{g}");
    let dt = 5e-2;
    for k in 0..3 {
        let mut e = DVec3::ZERO;
        e[k] = dt;
        let plus = av.compute(&shift(e).mul(&p), &o).unwrap();
        let minus = av.compute(&shift(-e).mul(&p), &o).unwrap();
        let fd = (plus.result.volume - minus.result.volume) / (2.0 * dt);
        // Each volume is within its error bound of the exact one, so the difference quotient
        // of the adaptive volume is within (bound⁺ + bound⁻) / 2dt of the exact difference
        // quotient; 3 % of |g| covers the gradient's own sampling and the O(dt²) term.
        let slack = (plus.error_bound + minus.error_bound) / (2.0 * dt) + 0.03 * g.length();
        assert!(
            (fd - g[k]).abs() <= slack,
            "axis {k}: fd {fd} vs {} (slack {slack})",
            g[k]
        );
    }
    let sum: DVec3 = r.result.gradient_b.iter().sum();
    assert!((sum + r.result.force).abs().max_element() < 1e-12);
}

#[test]
fn invalid_inputs_are_refused() {
    let s = shapes::icosphere(1.0, 1).unwrap();
    let av = AdaptiveVolume::new(&s, &s);
    let id = DPose::IDENTITY;
    for t in [
        Tolerance::Absolute(0.0),
        Tolerance::Absolute(-1.0),
        Tolerance::Relative(f64::NAN),
        Tolerance::Relative(f64::INFINITY),
    ] {
        assert!(matches!(
            av.compute(&id, &opts(t)),
            Err(VolumeError::InvalidTolerance(_))
        ));
    }
    let o = AdaptiveOptions {
        finest_resolution: 0,
        ..opts(Tolerance::Relative(1e-2))
    };
    assert_eq!(av.compute(&id, &o), Err(VolumeError::ZeroResolution));
    assert_eq!(
        av.compute(
            &shift(DVec3::new(f64::NAN, 0.0, 0.0)),
            &opts(Tolerance::Relative(1e-2))
        ),
        Err(VolumeError::NonFinitePose)
    );
    let o = AdaptiveOptions {
        max_rays: 10,
        ..opts(Tolerance::Relative(1e-6))
    };
    assert!(matches!(
        av.compute(&id, &o),
        Err(VolumeError::TooManyRays { .. })
    ));
    let other = shapes::icosphere(1.0, 2).unwrap();
    assert!(matches!(
        AdaptiveVolume::with_trees(&s, BalancedTree::build(&other), &s, BalancedTree::build(&s)),
        Err(VolumeError::TreeMismatch { .. })
    ));
}

#[test]
fn raster_visits_every_crossed_pixel_once_with_the_full_length() {
    let mut rng = ChaCha8Rng::seed_from_u64(54);
    let n = 16;
    for case in 0..200 {
        let mut pt = || {
            [
                rng.random_range(0.0..n as f64),
                rng.random_range(0.0..n as f64),
            ]
        };
        let (a, mut b) = (pt(), pt());
        if case % 10 == 0 {
            b = [a[0], b[1]]; // vertical
        }
        if case % 10 == 1 {
            b = [a[0].floor(), a[1].floor()]; // ends on a grid corner
        }
        let mut total = 0.0;
        let mut seen = std::collections::HashSet::new();
        raster(a, b, n, |i, j, t0, t1| {
            assert!(t1 > t0);
            assert!(seen.insert((i, j)), "pixel visited twice");
            // The piece's midpoint lies in the pixel.
            let tm = 0.5 * (t0 + t1);
            let m = [a[0] + tm * (b[0] - a[0]), a[1] + tm * (b[1] - a[1])];
            assert!(
                m[0] >= i as f64 - 1e-9 && m[0] <= (i + 1) as f64 + 1e-9,
                "{case}"
            );
            assert!(
                m[1] >= j as f64 - 1e-9 && m[1] <= (j + 1) as f64 + 1e-9,
                "{case}"
            );
            total += t1 - t0;
        });
        assert!((total - 1.0).abs() < 1e-12, "{case}: {total}");
    }
}

#[test]
fn tile_plans_meet_their_budget() {
    let mut rng = ChaCha8Rng::seed_from_u64(55);
    for _ in 0..300 {
        let mut t = Texel::default();
        for c in t.c.iter_mut() {
            if rng.random::<f64>() < 0.6 {
                *c = rng.random_range(0.0..2.0);
            }
        }
        t.aspect = [rng.random_range(0.0..1.0), rng.random_range(0.0..1.0)];
        let size = [rng.random_range(0.01..1.0), rng.random_range(0.01..1.0)];
        let budget = 10f64.powf(rng.random_range(-8.0..0.0));
        let p = plan(&t, size, budget);
        // Infeasible budgets (narrow-face terms linear in the tile size) end at the split cap.
        assert!(
            p.bound <= budget || p.n == [MAX_SPLIT; 2],
            "{t:?} {size:?} {budget}: {p:?}"
        );
        let actual = t.bound(size[0] / p.n[0] as f64, size[1] / p.n[1] as f64);
        assert_eq!(actual.max(0.0), p.bound);
    }
}

#[test]
fn pyramid_tiles_the_image_exactly_once() {
    let a = shapes::torus(1.0, 0.3, 24, 12).unwrap();
    let b = shapes::icosphere(0.7, 2).unwrap();
    let (ta, tb) = (BalancedTree::build(&a), BalancedTree::build(&b));
    let ma = RayMesh::new(&a, &ta, &DPose::IDENTITY).unwrap();
    let mb = RayMesh::new(&b, &tb, &shift(DVec3::new(0.9, 0.1, 0.0))).unwrap();
    let na: Vec<DVec3> = (0..a.triangle_count()).map(|t| ma.unit_normal(t)).collect();
    let nb: Vec<DVec3> = (0..b.triangle_count()).map(|t| mb.unit_normal(t)).collect();
    let src = [
        EdgeSource {
            mesh: &ma,
            normals: &na,
            edges: &a.topology().edges,
        },
        EdgeSource {
            mesh: &mb,
            normals: &nb,
            edges: &b.topology().edges,
        },
    ];
    let lo = ma.bounds()[0].max(mb.bounds()[0]);
    let hi = ma.bounds()[1].min(mb.bounds()[1]);
    for k in 0..3 {
        let e = Ebpi::build(k, lo, hi, 32, &src);
        assert!(e.texels.iter().any(|t| !t.is_empty()));
        let budget = 1e-3;
        let nodes = coarsen(&e, budget);
        let area: f64 = nodes.iter().map(|n| n.size[0] * n.size[1]).sum();
        let image = e.pixel[0] * e.pixel[1] * 32.0 * 32.0;
        assert!((area - image).abs() < 1e-9 * image);
        let bound: f64 = nodes.iter().map(|n| n.plan.bound).sum();
        assert!(bound <= budget * (1.0 + 1e-9), "{bound}");
        // Coarsening never costs rays: the chosen tiling is no worse than the finest level's.
        let fine: u64 = e
            .texels
            .iter()
            .map(|t| plan(t, e.pixel, budget / 1024.0).rays())
            .sum();
        let chosen: u64 = nodes.iter().map(|n| n.plan.rays()).sum();
        assert!(chosen <= fine, "{chosen} vs {fine}");
    }
}

/// Time of `f` in milliseconds (best of `reps`).
fn time_ms<T>(reps: usize, mut f: impl FnMut() -> T) -> (T, f64) {
    let mut best = f64::INFINITY;
    let mut out = None;
    for _ in 0..reps {
        let t0 = std::time::Instant::now();
        let r = f();
        best = best.min(t0.elapsed().as_secs_f64() * 1e3);
        out = Some(r);
    }
    (out.unwrap(), best)
}

/// Prints, for a pair, tolerance → adaptive rays / time / achieved error, and the uniform
/// resolution (first of a geometric sweep) that reaches the same error with its rays and time.
fn rays_vs_tolerance(name: &str, a: &Solid, b: &Solid, p: &DPose, reference: f64) {
    let av = AdaptiveVolume::new(a, b);
    let uv = UniformVolume::new(a, b);
    println!("\n{name}: reference volume {reference:.6}");
    println!(
        "| tolerance (rel. to V) | adaptive rays | adaptive ms | achieved rel. error | bound | uniform R | uniform rays | uniform ms |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for rel in [1e-1, 3e-2, 1e-2, 5e-3, 1e-3] {
        let o = AdaptiveOptions {
            tolerance: Tolerance::Absolute(rel * reference),
            collect_points: false,
            finest_resolution: 64,
            ..AdaptiveOptions::default()
        };
        if let Err(e) = av.compute(p, &o) {
            println!("| {rel:.0e} | refused: {e} | | | | | | |");
            continue;
        }
        let (r, ms) = time_ms(3, || av.compute(p, &o).unwrap());
        let err = (r.result.volume - reference).abs() / reference;
        let mut res = 4u32;
        let mut found = None;
        while res <= 2048 {
            let uo = UniformOptions {
                sampling: Sampling::Resolution(res),
                collect_points: false,
                ..UniformOptions::default()
            };
            let u = uv.compute(p, &uo).unwrap();
            if (u.volume - reference).abs() / reference <= err {
                let (u, ums) = time_ms(3, || uv.compute(p, &uo).unwrap());
                found = Some((res, u.ray_count, ums));
                break;
            }
            res = (res as f64 * 1.25).ceil() as u32;
        }
        let (ur, urays, ums) = found.map_or(
            ("> 2048".to_string(), "-".to_string(), "-".to_string()),
            |(r, n, t)| (r.to_string(), n.to_string(), format!("{t:.2}")),
        );
        println!(
            "| {rel:.0e} | {} | {ms:.2} | {err:.2e} | {:.2e} | {ur} | {urays} | {ums} |",
            r.result.ray_count,
            r.error_bound / reference,
        );
    }
}

/// Prints, for a pair and each tolerance (relative to `reference`), the certified comparison:
/// uniform sampling at the smallest resolution whose Eq. 9 edge bound meets the planner's edge
/// budget ([`AdaptiveVolume::certified_uniform_resolution`]; its transient charges checked by
/// [`AdaptiveVolume::certified_uniform_volume`]) against the adaptive method at EBPI
/// resolutions 1, 16, 64 and 256 (with coarsening). One row per method: rays (refinement rays),
/// time, achieved relative error, bound / tolerance.
fn certified_vs_adaptive(
    name: &str,
    a: &Solid,
    b: &Solid,
    p: &DPose,
    reference: f64,
    rels: &[f64],
) {
    let av = AdaptiveVolume::new(a, b);
    let uv = UniformVolume::new(a, b);
    let limit = 1u64 << 26;
    println!("\n{name}: certified comparison, reference volume {reference:.6}");
    println!(
        "| tolerance | method | rays (refinement) | ms | achieved rel. error | bound / tolerance |"
    );
    println!("|---|---|---|---|---|---|");
    for &rel in rels {
        let base = AdaptiveOptions {
            tolerance: Tolerance::Absolute(rel * reference),
            collect_points: false,
            max_rays: limit,
            ..AdaptiveOptions::default()
        };
        match av.certified_uniform_resolution(p, &base) {
            Err(e) => println!("| {rel:.0e} | certified uniform | refused: {e} | | | |"),
            Ok(c) => {
                let uo = UniformOptions {
                    sampling: Sampling::Resolution(c.resolution),
                    collect_points: false,
                    max_rays: limit,
                    ..UniformOptions::default()
                };
                let (u, ms) = time_ms(1, || uv.compute(p, &uo).unwrap());
                let full = av.certified_uniform_volume(p, &base, c.resolution).unwrap();
                let edge = c.axis_edge_bounds.iter().sum::<f64>() / 3.0;
                // The certificate depends on the EBPI the bound is read from (Alg. 2's case and
                // narrow-face choices use the pixel size): R from 1² and 256² texels.
                let other: Vec<String> = [1u32, 256]
                    .iter()
                    .map(|&n| {
                        let o = AdaptiveOptions {
                            finest_resolution: n,
                            max_rays: u64::MAX,
                            ..base
                        };
                        av.certified_uniform_resolution(p, &o)
                            .map_or("-".into(), |c| format!("{n}²: R = {}", c.resolution))
                    })
                    .collect();
                println!(
                    "| {rel:.0e} | certified uniform, 64² texels: R = {} ({}) | {} (0) | {ms:.1} | {:.1e} | edge {:.2}, with transient {:.2}{} |",
                    c.resolution,
                    other.join(", "),
                    u.ray_count,
                    (u.volume - reference).abs() / reference,
                    edge / c.tolerance,
                    full.error_bound / c.tolerance,
                    if full.tolerance_met { "" } else { " (not met)" },
                );
            }
        }
        for n in [1u32, 16, 64, 256] {
            let o = AdaptiveOptions {
                finest_resolution: n,
                ..base
            };
            match time_ms(1, || av.compute(p, &o)) {
                (Err(e), _) => println!("| {rel:.0e} | adaptive, EBPI {n}² | refused: {e} | | | |"),
                (Ok(r), ms) => println!(
                    "| {rel:.0e} | adaptive, EBPI {n}² | {} ({}) | {ms:.1} | {:.1e} | {:.2}{} |",
                    r.result.ray_count,
                    r.refined_rays,
                    (r.result.volume - reference).abs() / reference,
                    r.error_bound / r.tolerance,
                    if r.tolerance_met { "" } else { " (not met)" },
                ),
            }
        }
    }
}

/// The certified comparison's claim on the lens of docs/benchmarks.md ("Certified comparison"),
/// guarded: at a tolerance both certify by the same Eq. 9 bound read from 64² texels, the
/// adaptive method casts fewer rays than the certified uniform grid (measured 1.17× at 1e-1 and
/// 1.15× at 3e-2 of the volume; guarded at 1.05×) and meets the tolerance.
#[test]
fn adaptive_needs_fewer_rays_than_a_certified_uniform_grid_on_the_lens() {
    let s = shapes::icosphere(1.0, 4).unwrap();
    let p = pose(DVec3::new(0.3, 1.0, 0.2), 0.7, DVec3::new(1.0, 0.3, 0.1));
    let reference = exact_convex(&s, &s, &p);
    let av = AdaptiveVolume::new(&s, &s);
    let uv = UniformVolume::new(&s, &s);
    for rel in [1e-1, 3e-2] {
        let o = AdaptiveOptions {
            tolerance: Tolerance::Absolute(rel * reference),
            collect_points: false,
            max_rays: 1 << 26,
            finest_resolution: 64,
            ..AdaptiveOptions::default()
        };
        let c = av.certified_uniform_resolution(&p, &o).unwrap();
        let u = uv
            .compute(
                &p,
                &UniformOptions {
                    sampling: Sampling::Resolution(c.resolution),
                    collect_points: false,
                    max_rays: 1 << 26,
                    ..UniformOptions::default()
                },
            )
            .unwrap();
        let a = av.compute(&p, &o).unwrap();
        assert!(a.tolerance_met, "{rel}: adaptive bound {}", a.error_bound);
        assert!(
            (a.result.volume - reference).abs() <= rel * reference,
            "{rel}: adaptive error"
        );
        let ratio = u.ray_count as f64 / a.result.ray_count as f64;
        assert!(
            ratio >= 1.05,
            "{rel}: certified uniform {} rays (R = {}), adaptive {} rays: ratio {ratio:.3}",
            u.ray_count,
            c.resolution,
            a.result.ray_count
        );
    }
}

/// Release-mode table of rays and time against tolerance (paper Fig. 9), for the bunny25k pair
/// of `/work/shared/meshes` and a sphere pair. Run with
/// `cargo test -p interfere_geometry --release --locked bench_rays_vs_tolerance -- --ignored --nocapture`.
#[test]
#[ignore]
fn bench_rays_vs_tolerance() {
    let s = shapes::icosphere(1.0, 4).unwrap();
    let p = pose(DVec3::new(0.3, 1.0, 0.2), 0.7, DVec3::new(1.0, 0.3, 0.1));
    let exact = exact_convex(&s, &s, &p);
    rays_vs_tolerance("icosphere(1, 4).unwrap() lens, d ≈ 1.04", &s, &s, &p, exact);
    certified_vs_adaptive(
        "icosphere(1, 4).unwrap() lens, d ≈ 1.04",
        &s,
        &s,
        &p,
        exact,
        &[1e-1, 3e-2, 1e-2, 3e-3],
    );

    let path = std::path::Path::new("/work/shared/meshes/bunny25k.obj");
    let Ok(mesh) = crate::io::load_mesh(path, &crate::mesh::MeshOptions::default()) else {
        println!("bunny25k.obj not found: skipped");
        return;
    };
    let bunny = Solid::new(mesh.normalized_to_unit_cube()).unwrap();
    // The tumbling protocol's pose: second copy rotated about z then x, centres 0.5 apart.
    let rot = DMat3::from_rotation_x(0.9) * DMat3::from_rotation_z(0.6);
    let p = DPose {
        rotation: rot,
        translation: DVec3::new(0.5, 0.0, 0.0),
    };
    let av = AdaptiveVolume::new(&bunny, &bunny);
    let uref = UniformVolume::new(&bunny, &bunny)
        .compute(
            &p,
            &UniformOptions {
                sampling: Sampling::Resolution(1536),
                collect_points: false,
                max_rays: 1 << 26,
                ..UniformOptions::default()
            },
        )
        .unwrap();
    let spread = uref
        .axis_volumes
        .iter()
        .fold(0.0f64, |m, &x| m.max((x - uref.volume).abs()));
    println!(
        "bunny reference: uniform R=1536 {:.7} (axis estimates within {:.1e} of it)",
        uref.volume, spread
    );
    let v = uref.volume;
    rays_vs_tolerance("bunny25k pair, d = 0.5", &bunny, &bunny, &p, v);
    certified_vs_adaptive(
        "bunny25k pair, d = 0.5",
        &bunny,
        &bunny,
        &p,
        v,
        &[1e-1, 3e-2, 1e-2],
    );
    // The EBPI resolution (section 7.1, Fig. 9 right) at one tolerance.
    for n in [16, 32, 64, 128, 256] {
        let o = AdaptiveOptions {
            tolerance: Tolerance::Absolute(3e-2 * v),
            collect_points: false,
            finest_resolution: n,
            max_rays: 1 << 26,
            ..AdaptiveOptions::default()
        };
        let (r, ms) = time_ms(1, || av.compute(&p, &o).unwrap());
        println!(
            "bunny 3 %, EBPI {n}: {} rays ({} refined), {ms:.1} ms, error {:.1e}, bound {:.1e}",
            r.result.ray_count,
            r.refined_rays,
            (r.result.volume - v).abs() / v,
            r.error_bound / v
        );
    }
    // The project goal: a 0.5 %-accurate bunny25k volume, vs manifold3d's exact 15 ms.
    let o = AdaptiveOptions {
        tolerance: Tolerance::Absolute(5e-3 * v),
        collect_points: false,
        max_rays: 1 << 26,
        ..AdaptiveOptions::default()
    };
    let (r, ms) = time_ms(1, || av.compute(&p, &o).unwrap());
    let (_, build_ms) = time_ms(5, || AdaptiveVolume::new(&bunny, &bunny));
    println!(
        "bunny25k 0.5 %: {ms:.2} ms per query (trees prebuilt; building them: {build_ms:.2} ms), \
         {} rays, error {:.2e} relative, bound {:.2e}",
        r.result.ray_count,
        (r.result.volume - v).abs() / v,
        r.error_bound / v
    );
}

use glam::DMat3;

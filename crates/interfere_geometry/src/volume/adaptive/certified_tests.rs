//! Oracle tests of certified uniform sampling: the certified resolution meets the edge budget
//! and `R − 1` does not (minimality), the bound is the sum of the texels' own Eq. 9 bounds,
//! the uniform volume at the certified resolution is within the tolerance of exact volumes
//! (axis-aligned, rotated and z-rotated boxes, icosphere lenses, nested solids), the cast
//! certificate is the uniform sampler's grid, and touching, disjoint, tiny-tolerance and invalid
//! queries are answered with typed results.

use super::ebpi::{Ebpi, EdgeSource};
use super::tests::exact_convex;
use super::*;
use crate::shapes;
use crate::volume::tests::{pose, random_pose, rectangle_area_in_square, shift};
use crate::volume::{Sampling, UniformOptions, UniformVolume};
use glam::Vec3;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn opts(tolerance: Tolerance) -> AdaptiveOptions {
    AdaptiveOptions {
        tolerance,
        collect_points: false,
        ..AdaptiveOptions::default()
    }
}

/// Checks the certified resolution of one pose and tolerance against `exact`; returns it.
fn check(a: &Solid, b: &Solid, p: &DPose, tolerance: Tolerance, exact: f64, what: &str) -> u32 {
    let av = AdaptiveVolume::new(a, b);
    let o = opts(tolerance);
    let c = av.certified_uniform_resolution(p, &o).unwrap();
    let r = c.resolution;
    println!(
        "{what}: R {r} rays {} bounds {:.2?} budget {:.2e}",
        c.rays, c.axis_edge_bounds, c.edge_budget
    );
    assert!(c.edge_bound_met(), "{what}: {c:?}");
    assert_eq!(c.rays, 3 * u64::from(r).pow(2));
    assert!((c.edge_budget - 0.75 * c.tolerance).abs() <= 1e-15 * c.tolerance);
    assert_eq!(av.uniform_certificate(p, &o, r).unwrap(), c, "{what}");
    if r > 1 {
        // Minimal: one line fewer per side breaks the edge budget on some axis.
        let below = av.uniform_certificate(p, &o, r - 1).unwrap();
        assert!(
            !below.edge_bound_met(),
            "{what}: R - 1 = {} also fits",
            r - 1
        );
    }
    // The uniform sampler at R is within the tolerance of the exact volume.
    let u = UniformVolume::new(a, b)
        .compute(
            p,
            &UniformOptions {
                sampling: Sampling::Resolution(r),
                collect_points: false,
                ..UniformOptions::default()
            },
        )
        .unwrap();
    let err = (u.volume - exact).abs();
    assert!(err <= c.tolerance, "{what}: error {err} > {}", c.tolerance);
    // The cast certificate: the same lines and volume, per axis error within edge + transient.
    let cv = av.certified_uniform_volume(p, &o, r).unwrap();
    assert_eq!(cv.result.ray_count, u.ray_count);
    assert_eq!(cv.refined_rays, 0);
    for k in 0..3 {
        let (x, y) = (cv.result.axis_volumes[k], u.axis_volumes[k]);
        // Only the order of the sums differs.
        assert!(
            (x - y).abs() <= 1e-10 * exact.max(1.0),
            "{what}: {x} vs {y}"
        );
        assert!(cv.axis_error_bounds[k] >= c.axis_edge_bounds[k]);
        let ek = (x - exact).abs();
        assert!(
            ek <= cv.axis_error_bounds[k] + 1e-12 * exact.max(1.0),
            "{what}: axis {k} error {ek} > bound {}",
            cv.axis_error_bounds[k]
        );
    }
    r
}

#[test]
fn axis_aligned_and_nested_boxes_need_one_line() {
    // Axis-aligned boxes: the intersection is the overlap box, every edge in the image lies on
    // its border, the bound is 0 and one line per axis is exact.
    let a = shapes::cuboid(Vec3::new(1.0, 1.0, 0.5)).unwrap();
    let b = shapes::cuboid(Vec3::new(0.6, 1.0, 0.5)).unwrap();
    let h = f64::from(0.6f32);
    for x in [0.0, 0.7, -1.3] {
        let exact = (1.0f64.min(x + h) - (-1.0f64).max(x - h)) * 2.0;
        let p = shift(DVec3::new(x, 0.0, 0.0));
        for t in [Tolerance::Relative(1e-2), Tolerance::Relative(1e-9)] {
            assert_eq!(check(&a, &b, &p, t, exact, "aligned"), 1);
        }
    }
    // A small box inside a big one.
    let big = shapes::cuboid(Vec3::ONE).unwrap();
    let small = shapes::cuboid(Vec3::new(0.3, 0.2, 0.4)).unwrap();
    let p = shift(DVec3::new(0.2, -0.3, 0.1));
    let exact = exact_convex(&big, &small, &p);
    assert_eq!(
        check(&big, &small, &p, Tolerance::Relative(1e-3), exact, "nested"),
        1
    );
}

#[test]
fn rotated_boxes_and_prisms_are_certified_minimally() {
    let mut rng = ChaCha8Rng::seed_from_u64(61);
    let a = shapes::cuboid(Vec3::new(1.0, 0.8, 0.6)).unwrap();
    let b = shapes::cuboid(Vec3::new(0.7, 0.5, 0.9)).unwrap();
    for case in 0..3 {
        let p = random_pose(&mut rng);
        let p = DPose {
            translation: p.translation * 0.4,
            ..p
        };
        let exact = exact_convex(&a, &b, &p);
        let r = check(&a, &b, &p, Tolerance::Relative(3e-2), exact, "boxes");
        assert!(r > 1, "{case}");
    }
    // Rotated about z with coplanar top and bottom faces: the exact prism.
    let a = shapes::cuboid(Vec3::new(1.0, 1.0, 0.5)).unwrap();
    let b = shapes::cuboid(Vec3::new(0.8, 0.4, 0.5)).unwrap();
    let p = pose(DVec3::Z, 0.6, DVec3::new(0.9, 0.3, 0.0));
    let exact = rectangle_area_in_square(&p);
    check(&a, &b, &p, Tolerance::Relative(3e-2), exact, "prism");
}

#[test]
fn icosphere_lenses_are_certified_minimally() {
    let mut rng = ChaCha8Rng::seed_from_u64(62);
    let s = shapes::icosphere(1.0, 2).unwrap();
    for d in [0.3, 1.0, 1.7] {
        let p = DPose {
            rotation: random_pose(&mut rng).rotation,
            translation: DVec3::new(d, 0.2 * d, -0.1),
        };
        let exact = exact_convex(&s, &s, &p);
        for t in [Tolerance::Relative(3e-2), Tolerance::Absolute(3e-2 * exact)] {
            let r = check(&s, &s, &p, t, exact, &format!("lens {d} {t:?}"));
            assert!(r > 1);
        }
    }
}

#[test]
fn the_uniform_bound_is_the_sum_of_the_texel_bounds() {
    // Σ over the finest texels of Δ(W/R, H/R), computed texel by texel from an EBPI built here.
    let s = shapes::icosphere(1.0, 2).unwrap();
    let p = pose(DVec3::new(1.0, 0.5, 0.2), 0.8, DVec3::new(0.9, 0.3, -0.2));
    let av = AdaptiveVolume::new(&s, &s);
    let tree = BalancedTree::build(&s);
    let ma = RayMesh::new(&s, &tree, &DPose::IDENTITY).unwrap();
    let mb = RayMesh::new(&s, &tree, &p).unwrap();
    let na: Vec<DVec3> = (0..s.triangle_count()).map(|t| ma.unit_normal(t)).collect();
    let nb: Vec<DVec3> = (0..s.triangle_count()).map(|t| mb.unit_normal(t)).collect();
    let src = [
        EdgeSource {
            mesh: &ma,
            normals: &na,
            edges: &s.topology().edges,
        },
        EdgeSource {
            mesh: &mb,
            normals: &nb,
            edges: &s.topology().edges,
        },
    ];
    let lo = ma.bounds()[0].max(mb.bounds()[0]);
    let hi = ma.bounds()[1].min(mb.bounds()[1]);
    for n in [1u32, 16, 64] {
        let o = AdaptiveOptions {
            finest_resolution: n,
            ..opts(Tolerance::Relative(1e-2))
        };
        for r in [1u32, 7, 40, 333] {
            let c = av.uniform_certificate(&p, &o, r).unwrap();
            for k in 0..3 {
                let e = Ebpi::build(k, lo, hi, n as usize, &src);
                let (w, h) = (
                    (hi - lo)[(k + 1) % 3] / f64::from(r),
                    (hi - lo)[(k + 2) % 3] / f64::from(r),
                );
                let direct: f64 = e.texels.iter().map(|t| t.bound(w, h)).sum();
                assert!(direct > 0.0);
                let got = c.axis_edge_bounds[k];
                assert!(
                    (got - direct).abs() <= 1e-10 * direct,
                    "n {n} R {r} axis {k}: {got} vs {direct}"
                );
            }
        }
        // The bound falls as R grows.
        let b: Vec<f64> = [10u32, 20, 40]
            .iter()
            .map(|&r| av.uniform_certificate(&p, &o, r).unwrap().axis_edge_bounds[0])
            .collect();
        assert!(b[0] > b[1] && b[1] > b[2], "{b:?}");
    }
}

#[test]
fn touching_disjoint_tiny_and_invalid_queries() {
    let c = shapes::cuboid(Vec3::ONE).unwrap();
    let av = AdaptiveVolume::new(&c, &c);
    let o = opts(Tolerance::Relative(1e-3));
    // Touching face to face (flat overlap box) and disjoint: nothing to cast, R = 1.
    for t in [
        DVec3::new(2.0, 0.3, -0.2),
        DVec3::new(2.0, 2.0, 0.0),
        DVec3::X * 5.0,
    ] {
        let cert = av.certified_uniform_resolution(&shift(t), &o).unwrap();
        assert_eq!((cert.resolution, cert.rays), (1, 0));
        assert_eq!(cert.axis_edge_bounds, [0.0; 3]);
        let r = av.certified_uniform_volume(&shift(t), &o, 5).unwrap();
        assert_eq!((r.result.volume, r.result.ray_count), (0.0, 0));
        assert!(r.tolerance_met);
    }
    // A rotated box touching A's face x = 1 from outside.
    let b = shapes::cuboid(Vec3::new(1.0, 0.5, 0.5)).unwrap();
    let avb = AdaptiveVolume::new(&c, &b);
    let p = pose(DVec3::X, 0.5, DVec3::new(2.0, 0.0, 0.0));
    let cert = avb.certified_uniform_resolution(&p, &o).unwrap();
    let r = avb
        .certified_uniform_volume(&p, &o, cert.resolution)
        .unwrap();
    assert_eq!(r.result.volume, 0.0);
    // Tiny tolerances: refused with a typed error, not a panic or an endless search.
    let s = shapes::icosphere(1.0, 1).unwrap();
    let avs = AdaptiveVolume::new(&s, &s);
    let p = shift(DVec3::new(0.8, 0.1, 0.0));
    for t in [
        Tolerance::Relative(1e-12),
        Tolerance::Absolute(1e-300),
        Tolerance::Absolute(f64::MIN_POSITIVE),
    ] {
        assert!(
            matches!(
                avs.certified_uniform_resolution(&p, &opts(t)),
                Err(VolumeError::TooManyRays { .. })
            ),
            "{t:?}"
        );
        // The bound of a given resolution is still answered.
        let c = avs.uniform_certificate(&p, &opts(t), 64).unwrap();
        assert!(!c.edge_bound_met());
    }
    // A limit below the certified resolution's rays.
    let o = opts(Tolerance::Relative(1e-2));
    let need = avs.certified_uniform_resolution(&p, &o).unwrap();
    let tight = AdaptiveOptions {
        max_rays: need.rays - 1,
        ..o
    };
    assert_eq!(
        avs.certified_uniform_resolution(&p, &tight),
        Err(VolumeError::TooManyRays {
            rays: need.rays,
            limit: need.rays - 1
        })
    );
    assert!(matches!(
        avs.certified_uniform_volume(&p, &tight, need.resolution),
        Err(VolumeError::TooManyRays { .. })
    ));
    // Invalid inputs.
    assert_eq!(
        avs.uniform_certificate(&p, &o, 0),
        Err(VolumeError::ZeroResolution)
    );
    assert_eq!(
        avs.certified_uniform_volume(&p, &o, 0),
        Err(VolumeError::ZeroResolution)
    );
    assert!(matches!(
        avs.certified_uniform_resolution(&p, &opts(Tolerance::Absolute(0.0))),
        Err(VolumeError::InvalidTolerance(_))
    ));
    assert_eq!(
        avs.certified_uniform_resolution(&shift(DVec3::NAN), &o),
        Err(VolumeError::NonFinitePose)
    );
    let zero = AdaptiveOptions {
        finest_resolution: 0,
        ..o
    };
    assert_eq!(
        avs.certified_uniform_resolution(&p, &zero),
        Err(VolumeError::ZeroResolution)
    );
}

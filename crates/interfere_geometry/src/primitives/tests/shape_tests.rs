//! Construction, bounds, mass properties, support points, point location and ray casts.

use super::*;
use crate::containment::PointLocation;
use crate::primitives::{PrimitiveError, PrimitiveKind};
use rand::SeedableRng;

fn all_shapes() -> Vec<Primitive> {
    vec![
        Primitive::sphere(0.8).unwrap(),
        Primitive::capsule(0.7, 0.4).unwrap(),
        Primitive::cuboid(DVec3::new(0.5, 0.9, 0.3)).unwrap(),
        Primitive::cylinder(0.6, 0.45).unwrap(),
    ]
}

#[test]
fn constructors_refuse_bad_dimensions_with_the_field() {
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert!(matches!(
            Primitive::sphere(bad),
            Err(PrimitiveError::InvalidDimension {
                shape: PrimitiveKind::Sphere,
                field: "radius",
                ..
            })
        ));
        assert!(matches!(
            Primitive::capsule(bad, 1.0),
            Err(PrimitiveError::InvalidDimension {
                field: "half_length",
                ..
            })
        ));
        assert!(matches!(
            Primitive::capsule(1.0, bad),
            Err(PrimitiveError::InvalidDimension {
                field: "radius",
                ..
            })
        ));
        assert!(matches!(
            Primitive::cylinder(bad, 1.0),
            Err(PrimitiveError::InvalidDimension {
                shape: PrimitiveKind::Cylinder,
                field: "half_height",
                ..
            })
        ));
        let err = Primitive::cuboid(DVec3::new(1.0, 1.0, bad)).unwrap_err();
        assert!(
            matches!(
                err,
                PrimitiveError::InvalidDimension {
                    field: "half_extents.z",
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("half_extents.z"));
    }
    for bad in [
        DVec3::ZERO,
        DVec3::splat(1e-13),
        DVec3::new(f64::NAN, 1.0, 0.0),
        DVec3::new(f64::INFINITY, 0.0, 0.0),
        DVec3::splat(1e308),
    ] {
        assert!(
            matches!(
                Primitive::half_space(bad),
                Err(PrimitiveError::InvalidNormal(_))
            ),
            "{bad}"
        );
    }
    let Primitive::HalfSpace { normal } = Primitive::half_space(DVec3::new(0.0, 3.0, 4.0)).unwrap()
    else {
        panic!("not a half-space")
    };
    assert!((normal - DVec3::new(0.0, 0.6, 0.8)).length() < 1e-15);
}

#[test]
fn invalid_poses_are_typed_errors_everywhere() {
    let s = Primitive::sphere(1.0).unwrap();
    let mut nan = DPose::IDENTITY;
    nan.translation.y = f64::NAN;
    let mut skew = DPose::IDENTITY;
    skew.rotation.x_axis.x = 2.0;
    let mirror = DPose {
        rotation: DMat3::from_diagonal(DVec3::new(-1.0, 1.0, 1.0)),
        translation: DVec3::ZERO,
    };
    for bad in [nan, skew, mirror] {
        assert!(matches!(
            s.locate(&bad, DVec3::ZERO),
            Err(PrimitiveError::InvalidPose { .. })
        ));
        assert!(matches!(
            s.ray_cast(&bad, DVec3::X * 3.0, -DVec3::X, 10.0),
            Err(PrimitiveError::InvalidPose { .. })
        ));
        assert!(s.aabb(&bad).is_none());
        assert!(s.support(&bad, DVec3::X).is_err());
        assert!(matches!(
            crate::primitives::primitives_intersect(&s, &bad, &s, &DPose::IDENTITY),
            Err(PrimitiveError::InvalidPose { what: "A" })
        ));
        assert!(matches!(
            crate::primitives::intersection_volume(&s, &DPose::IDENTITY, &s, &bad),
            Err(PrimitiveError::InvalidPose { what: "B" })
        ));
    }
    // A non-finite point and ray.
    assert!(matches!(
        s.locate(&DPose::IDENTITY, DVec3::splat(f64::NAN)),
        Err(PrimitiveError::InvalidPoint(_))
    ));
    for (o, d, t) in [
        (DVec3::ZERO, DVec3::ZERO, 1.0),
        (DVec3::splat(f64::NAN), DVec3::X, 1.0),
        (DVec3::ZERO, DVec3::X, -1.0),
        (DVec3::ZERO, DVec3::X, f64::NAN),
    ] {
        assert!(matches!(
            s.ray_cast(&DPose::IDENTITY, o, d, t),
            Err(PrimitiveError::InvalidRay)
        ));
    }
}

/// Oracle: the divergence-theorem mass properties of the inscribed and circumscribed
/// tessellations bracket the volume, and converge to the closed forms.
#[test]
fn mass_properties_match_fine_tessellations() {
    for shape in all_shapes() {
        let v = shape.volume();
        let i = shape.inertia().unwrap();
        let mut last = f64::INFINITY;
        for res in [16, 64, 256] {
            let (vi, ci, ii) = mesh_mass(&shape.to_solid(res).unwrap());
            let (vo, _, io) = mesh_mass(&shape.to_solid_circumscribed(res).unwrap());
            assert!(
                vi <= v * (1.0 + 1e-6) && v <= vo * (1.0 + 1e-6),
                "{shape:?}"
            );
            assert!(ci.length() < 1e-6, "centre of mass {ci}");
            // Inertia bracketed component-wise on the diagonal, off-diagonals ~0.
            for k in 0..3 {
                let (a, b, c) = (ii.col(k)[k], i.col(k)[k], io.col(k)[k]);
                assert!(
                    a <= b * (1.0 + 1e-6) && b <= c * (1.0 + 1e-6),
                    "{shape:?} {k}"
                );
                for j in 0..3 {
                    if j != k {
                        assert!(ii.col(k)[j].abs() < 1e-6 * b);
                    }
                }
            }
            let err = (0..3)
                .map(|k| (ii.col(k)[k] - i.col(k)[k]).abs() / i.col(k)[k])
                .fold(0.0, f64::max);
            assert!(err <= last, "{shape:?}: no convergence {err} vs {last}");
            last = err;
        }
        // Measured at resolution 256: 4.5e-4 (sphere), 2.6e-4 (capsule), 2.0e-4 (cylinder),
        // 3e-8 (cuboid, f32 vertices).
        assert!(last < 6e-4, "{shape:?}: {last}");
    }
    assert!(Primitive::half_space(DVec3::Y).unwrap().inertia().is_none());
    assert_eq!(
        Primitive::half_space(DVec3::Y).unwrap().volume(),
        f64::INFINITY
    );
}

/// Oracle: the box encloses the placed tessellation of the circumscribed mesh's inscribed
/// counterpart and every support point, and is tight: each face of the box is touched by the
/// support point along that axis (within the `f32` pad).
#[test]
fn world_boxes_enclose_and_touch() {
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    for shape in all_shapes() {
        for _ in 0..30 {
            let pose = rand_pose(&mut rng, 50.0);
            let b = shape.aabb(&pose).unwrap();
            for _ in 0..50 {
                let d = random_unit(&mut rng);
                let s = shape.support(&pose, d).unwrap().unwrap();
                for k in 0..3 {
                    assert!(b.min[k] as f64 <= s[k] && s[k] <= b.max[k] as f64);
                }
            }
            for k in 0..3 {
                let mut e = DVec3::ZERO;
                e[k] = 1.0;
                let hi = shape.support(&pose, e).unwrap().unwrap()[k];
                let lo = shape.support(&pose, -e).unwrap().unwrap()[k];
                let pad = 2e-6 * (1.0 + hi.abs().max(lo.abs()));
                assert!((b.max[k] as f64 - hi).abs() <= pad, "{shape:?} axis {k}");
                assert!((b.min[k] as f64 - lo).abs() <= pad, "{shape:?} axis {k}");
            }
        }
    }
    assert!(
        Primitive::half_space(DVec3::Y)
            .unwrap()
            .aabb(&DPose::IDENTITY)
            .is_none()
    );
}

/// Oracle: the support point maximizes `d · x` over the vertices of a fine inscribed mesh
/// (which lie on the surface), and lies in the solid.
#[test]
fn support_points_are_extreme() {
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    for shape in all_shapes() {
        let mesh = shape.to_solid(128).unwrap();
        for _ in 0..40 {
            let d = random_unit(&mut rng);
            let s = shape.local_support(d).unwrap();
            let best = mesh
                .vertices()
                .iter()
                .map(|v| v.as_dvec3().dot(d))
                .fold(f64::NEG_INFINITY, f64::max);
            assert!(s.dot(d) >= best - 1e-6, "{shape:?}");
            assert!(s.dot(d) <= best + 1e-3 * shape.scale(), "{shape:?}");
            assert_ne!(shape.locate_local(s * 0.999), PointLocation::Outside);
        }
    }
}

/// Oracle: a closed-form signed distance, evaluated away from the surface; exact boundary
/// points chosen to be representable.
#[test]
fn point_location_is_exact() {
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    let dist = |s: &Primitive, p: DVec3| -> f64 {
        // Signed distance (negative inside), from the closest-point helpers.
        match *s {
            Primitive::Sphere { radius } => p.length() - radius,
            Primitive::Capsule {
                half_length,
                radius,
            } => DVec3::new(p.x, (p.y.abs() - half_length).max(0.0), p.z).length() - radius,
            Primitive::Cuboid { half_extents } => {
                let q = p.abs() - half_extents;
                q.max(DVec3::ZERO).length() + q.max_element().min(0.0)
            }
            Primitive::Cylinder {
                half_height,
                radius,
            } => {
                let q = glam::DVec2::new(p.x.hypot(p.z) - radius, p.y.abs() - half_height);
                q.max(glam::DVec2::ZERO).length() + q.max_element().min(0.0)
            }
            Primitive::HalfSpace { normal } => normal.dot(p),
        }
    };
    let mut shapes = all_shapes();
    shapes.push(Primitive::half_space(DVec3::new(1.0, -2.0, 0.5)).unwrap());
    for shape in &shapes {
        let (mut inside, mut outside) = (0, 0);
        for _ in 0..10000 {
            let p = DVec3::new(
                rng.random_range(-1.6..1.6),
                rng.random_range(-1.6..1.6),
                rng.random_range(-1.6..1.6),
            );
            let d = dist(shape, p);
            if d.abs() < 1e-9 {
                continue;
            }
            let want = if d < 0.0 {
                inside += 1;
                PointLocation::Inside
            } else {
                outside += 1;
                PointLocation::Outside
            };
            assert_eq!(shape.locate_local(p), want, "{shape:?} {p}");
        }
        assert!(inside > 100 && outside > 100);
    }
    // Representable boundary points and their neighbours one ulp away.
    let next_up_magnitude = |x: f64| f64::from_bits(x.to_bits() + 1);
    let cases = [
        (Primitive::sphere(5.0).unwrap(), DVec3::new(3.0, 4.0, 0.0)),
        (
            Primitive::capsule(1.0, 0.625).unwrap(),
            DVec3::new(0.375, 1.5, 0.0),
        ),
        (
            Primitive::capsule(1.0, 0.625).unwrap(),
            DVec3::new(0.625, -0.25, 0.0),
        ),
        (
            Primitive::cylinder(2.0, 5.0).unwrap(),
            DVec3::new(3.0, 1.0, 4.0),
        ),
        (
            Primitive::cylinder(2.0, 5.0).unwrap(),
            DVec3::new(1.0, 2.0, 1.0),
        ),
        (
            Primitive::cuboid(DVec3::new(0.1, 0.2, 0.3)).unwrap(),
            DVec3::new(0.1, 0.05, -0.3),
        ),
    ];
    for (s, p) in cases {
        assert_eq!(s.locate_local(p), PointLocation::Boundary, "{s:?} {p}");
        // One ulp further out along the largest coordinate.
        let k = (0..3)
            .max_by(|&i, &j| p[i].abs().total_cmp(&p[j].abs()))
            .unwrap();
        let mut bumped = p;
        bumped[k] = next_up_magnitude(p[k]);
        assert_eq!(
            s.locate_local(bumped),
            PointLocation::Outside,
            "{s:?} {bumped}"
        );
    }
    let hs = Primitive::half_space(DVec3::new(1.0, 1.0, 0.0)).unwrap();
    assert_eq!(
        hs.locate_local(DVec3::new(1.0, -1.0, 7.0)),
        PointLocation::Boundary
    );
    assert_eq!(
        hs.locate_local(DVec3::new(1e-300, -1e-300 * 0.5, 0.0)),
        PointLocation::Outside
    );
    // Through a pose: the centre of a far-away sphere is inside, a point beyond it outside.
    let pose = DPose {
        rotation: DMat3::from_rotation_z(0.3),
        translation: DVec3::splat(1e6),
    };
    let s = Primitive::sphere(1.0).unwrap();
    assert_eq!(
        s.locate(&pose, DVec3::splat(1e6)).unwrap(),
        PointLocation::Inside
    );
    assert_eq!(
        s.locate(&pose, DVec3::splat(1e6) + DVec3::X * 1.001)
            .unwrap(),
        PointLocation::Outside
    );
}

/// First hit of a ray against a triangle mesh (Möller–Trumbore, all triangles).
fn mesh_ray(solid: &Solid, o: DVec3, d: DVec3) -> Option<f64> {
    let mut best: Option<f64> = None;
    for t in 0..solid.triangle_count() {
        let [a, b, c] = solid.triangle(t).map(|v| v.as_dvec3());
        let (e1, e2) = (b - a, c - a);
        let p = d.cross(e2);
        let det = e1.dot(p);
        if det.abs() < 1e-300 {
            continue;
        }
        let s = o - a;
        let u = s.dot(p) / det;
        let q = s.cross(e1);
        let v = d.dot(q) / det;
        if !(0.0..=1.0).contains(&u) || v < 0.0 || u + v > 1.0 {
            continue;
        }
        let t = e2.dot(q) / det;
        if t >= 0.0 && best.is_none_or(|b| t < b) {
            best = Some(t);
        }
    }
    best
}

/// Oracle: the first hits on the circumscribed and inscribed tessellations bracket the hit
/// (`t_outer ≤ t ≤ t_inner`), the hit point is on the surface and the normal is the unit
/// gradient of the signed distance there.
#[test]
fn ray_casts_are_bracketed_by_the_tessellations() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    for shape in all_shapes() {
        let inner = shape.to_solid(256).unwrap();
        let outer = shape.to_solid_circumscribed(256).unwrap();
        let (mut hits, mut misses) = (0, 0);
        for _ in 0..300 {
            let pose = rand_pose(&mut rng, 3.0);
            let o = DVec3::new(
                rng.random_range(-6.0..6.0),
                rng.random_range(-6.0..6.0),
                rng.random_range(-6.0..6.0),
            );
            let target = pose.translation + random_unit(&mut rng) * rng.random_range(0.0..1.5);
            let d = (target - o) * rng.random_range(0.5..2.0);
            let got = shape.ray_cast(&pose, o, d, f64::INFINITY).unwrap();
            let inv = pose.inverse();
            let (lo, ld) = (inv.transform_dpoint(o), inv.rotation * d);
            if shape.locate_local(lo) != PointLocation::Outside {
                assert_eq!(got.unwrap().t, 0.0);
                continue;
            }
            let t_in = mesh_ray(&inner, lo, ld);
            let t_out = mesh_ray(&outer, lo, ld);
            match got {
                Some(h) => {
                    hits += 1;
                    if let Some(ti) = t_in {
                        assert!(h.t <= ti + 1e-6, "{shape:?}: {} > inner {ti}", h.t);
                    }
                    let to = t_out.expect("a hit must hit the circumscribed mesh");
                    assert!(h.t >= to - 1e-6, "{shape:?}: {} < outer {to}", h.t);
                    // On the surface: a step back is outside, a step forward inside (unless
                    // grazing).
                    let p = inv.transform_dpoint(h.point);
                    assert!((h.point - (o + d * h.t)).length() < 1e-12 * (1.0 + h.t * d.length()));
                    let step = 1e-7 / ld.length();
                    assert_eq!(
                        shape.locate_local(lo + ld * (h.t - step)),
                        PointLocation::Outside
                    );
                    assert!((h.normal.length() - 1.0).abs() < 1e-12);
                    assert!(h.normal.dot(d) <= 1e-12, "the normal faces the ray");
                    let nl = inv.rotation * h.normal;
                    let e = 1e-6;
                    let probe = shape.locate_local(p + nl * e);
                    assert_eq!(
                        probe,
                        PointLocation::Outside,
                        "{shape:?}: normal points out"
                    );
                }
                None => {
                    misses += 1;
                    assert!(t_in.is_none(), "{shape:?}: the inscribed mesh was hit");
                }
            }
        }
        assert!(
            hits > 50 && misses > 20,
            "{shape:?}: {hits} hits, {misses} misses"
        );
    }
    // max_t cuts the hit off; the half-space.
    let s = Primitive::sphere(1.0).unwrap();
    let o = DVec3::new(-5.0, 0.0, 0.0);
    assert!(
        (s.ray_cast(&DPose::IDENTITY, o, DVec3::X, 10.0)
            .unwrap()
            .unwrap()
            .t
            - 4.0)
            .abs()
            < 1e-15
    );
    assert!(
        s.ray_cast(&DPose::IDENTITY, o, DVec3::X, 3.9)
            .unwrap()
            .is_none()
    );
    let hs = Primitive::half_space(DVec3::Y).unwrap();
    let h = hs
        .ray_cast(
            &DPose::IDENTITY,
            DVec3::new(0.0, 2.0, 0.0),
            DVec3::new(1.0, -1.0, 0.0),
            9.0,
        )
        .unwrap()
        .unwrap();
    assert!((h.t - 2.0).abs() < 1e-15 && (h.normal - DVec3::Y).length() < 1e-15);
    assert!(
        hs.ray_cast(&DPose::IDENTITY, DVec3::Y, DVec3::X, 9.0)
            .unwrap()
            .is_none()
    );
    // A ray from 1e6 away keeps the hit (stable root).
    let far = s
        .ray_cast(
            &DPose::IDENTITY,
            DVec3::new(-1e6, 0.5, 0.0),
            DVec3::X,
            f64::INFINITY,
        )
        .unwrap()
        .unwrap();
    assert!((far.point.x + 0.75f64.sqrt()).abs() < 1e-9, "{}", far.point);
}

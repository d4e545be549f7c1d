//! Tessellations: closed and outward, volume equal to the closed-form polyhedron volume, deficit
//! below the a priori bound, the circumscribed mesh contains the primitive, and the resolution
//! chosen for a tolerance meets it.

use super::*;
use crate::containment::{PointLocation, locate_point};
use crate::primitives::{PrimitiveError, TESSELLATION_MAX_RESOLUTION};
use rand::SeedableRng;

fn shapes() -> Vec<Primitive> {
    vec![
        Primitive::sphere(1.3).unwrap(),
        Primitive::capsule(0.9, 0.35).unwrap(),
        Primitive::capsule(0.05, 2.0).unwrap(),
        Primitive::cylinder(0.25, 1.1).unwrap(),
        Primitive::cylinder(3.0, 0.2).unwrap(),
        Primitive::cuboid(DVec3::new(0.3, 1.0, 2.0)).unwrap(),
    ]
}

/// Oracle: the mesh's own divergence-theorem volume against the closed form of the frusta,
/// and the a priori bound.
#[test]
fn mesh_volume_is_the_closed_form_and_the_deficit_is_bounded() {
    for shape in shapes() {
        let mut last = f64::INFINITY;
        for res in [3, 4, 5, 7, 8, 16, 33, 64, 200, 512] {
            let solid = shape.to_solid(res).unwrap();
            assert!(!solid.was_reoriented(), "{shape:?} {res}: inward faces");
            let exact = shape.tessellation_volume(res).unwrap();
            assert!(
                (solid.volume() - exact).abs() <= 1e-6 * exact,
                "{shape:?} {res}: mesh {} vs closed form {exact}",
                solid.volume()
            );
            let err = shape.tessellation_error(res).unwrap();
            let bound = shape.tessellation_error_bound(res).unwrap();
            assert!(
                (0.0..=bound + 1e-15).contains(&err),
                "{shape:?} {res}: {err} > {bound}"
            );
            assert!(err <= last, "{shape:?}: deficit grew at {res}");
            last = err;
            let outer = shape.to_solid_circumscribed(res).unwrap();
            assert!(!outer.was_reoriented());
            assert!(outer.volume() >= shape.volume(), "{shape:?} {res}");
        }
        // Measured: at resolution 512 the sphere's deficit is 6.3e-5, the others' smaller.
        assert!(last < 7e-5, "{shape:?}: {last}");
    }
    // Cylinder: the deficit is exactly that of the regular polygon, 1 − sin(2π/n)·n/(2π).
    let c = Primitive::cylinder(1.0, 1.0).unwrap();
    let n = 12.0f64;
    let want = 1.0 - n * (std::f64::consts::TAU / n).sin() / std::f64::consts::TAU;
    assert!((c.tessellation_error(12).unwrap() - want).abs() < 1e-15);
}

/// Oracle: exact point location in the meshes. Random points of the primitive lie inside the
/// circumscribed mesh; vertices of the inscribed mesh lie on the primitive's surface (up to
/// `f32`); both meshes are convex (every vertex behind every face plane).
#[test]
fn inscribed_and_circumscribed_meshes_bracket_the_primitive() {
    let mut rng = ChaCha8Rng::seed_from_u64(17);
    for shape in shapes() {
        for res in [3, 6, 24] {
            let inner = shape.to_solid(res).unwrap();
            let outer = shape.to_solid_circumscribed(res).unwrap();
            for mesh in [&inner, &outer] {
                for (n, d) in mesh_planes(mesh, &DPose::IDENTITY) {
                    for v in mesh.vertices() {
                        assert!(
                            n.dot(v.as_dvec3()) <= d + 1e-6,
                            "{shape:?} {res}: not convex"
                        );
                    }
                }
            }
            for v in inner.vertices() {
                let p = v.as_dvec3();
                let grown = p * (1.0 + 1e-6);
                let shrunk = p * (1.0 - 1e-6);
                assert_ne!(shape.locate_local(shrunk), PointLocation::Outside);
                if shape.kind() != crate::primitives::PrimitiveKind::Cuboid {
                    // Scaling about the centre moves a surface point out of the convex body.
                    assert_eq!(
                        shape.locate_local(grown * (1.0 + 1e-5)),
                        PointLocation::Outside
                    );
                }
            }
            let (lo, hi) = shape.local_bounds().unwrap();
            let mut inside = 0;
            while inside < 300 {
                let p = lo + (hi - lo) * DVec3::new(rng.random(), rng.random(), rng.random());
                if shape.locate_local(p) == PointLocation::Outside {
                    continue;
                }
                inside += 1;
                assert_ne!(
                    locate_point(&outer, p),
                    PointLocation::Outside,
                    "{shape:?} {res}: {p} escapes the circumscribed mesh"
                );
            }
            // Surface points (support points) are inside the circumscribed mesh too.
            for _ in 0..100 {
                let s = shape.local_support(random_unit(&mut rng)).unwrap();
                assert_ne!(locate_point(&outer, s), PointLocation::Outside, "{shape:?}");
            }
        }
    }
}

#[test]
fn resolution_for_meets_the_tolerance() {
    for shape in shapes() {
        for tol in [0.1, 1e-2, 1e-3, 1e-4] {
            let n = shape.resolution_for(tol).unwrap();
            let (mesh, m) = shape.to_solid_within(tol).unwrap();
            assert_eq!(m, n);
            let err = 1.0 - mesh.volume() / shape.volume();
            assert!(err.abs() <= tol, "{shape:?} tol {tol}: n {n} gives {err}");
            if n > 3 {
                assert!(
                    shape.tessellation_error(n - 1).unwrap() + 1e-6 > tol,
                    "{shape:?} tol {tol}: {n} is not the smallest"
                );
            }
        }
    }
    let s = Primitive::sphere(1.0).unwrap();
    for bad in [0.0, -1.0, 1e-7, f64::NAN, 2.0] {
        assert!(matches!(
            s.resolution_for(bad),
            Err(PrimitiveError::InvalidTolerance(_))
        ));
    }
    for bad in [0, 2, TESSELLATION_MAX_RESOLUTION + 1] {
        assert!(matches!(
            s.to_solid(bad),
            Err(PrimitiveError::InvalidResolution { .. })
        ));
    }
    let hs = Primitive::half_space(DVec3::Y).unwrap();
    assert!(matches!(hs.to_solid(8), Err(PrimitiveError::Unbounded(_))));
    assert!(matches!(
        hs.resolution_for(0.01),
        Err(PrimitiveError::Unbounded(_))
    ));
}

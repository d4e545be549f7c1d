//! Interference tests against the crate's exact mesh interference of inscribed and
//! circumscribed tessellations: inscribed meshes that meet force "intersecting",
//! circumscribed meshes that do not force "apart".

use super::*;
use crate::bvh::BalancedTree;
use crate::interference::{MeshQueries, Method};
use crate::primitives::{primitive_solid_intersect, primitives_intersect};
use crate::shapes;
use rand::SeedableRng;

fn meshes_meet(a: &MeshQueries, pa: &DPose, b: &MeshQueries, pb: &DPose) -> bool {
    let b_to_a = pa.inverse().mul(pb);
    a.interference(b, &b_to_a, Method::Aabb, false)
        .expect("valid pose")
        .intersecting
}

#[test]
fn primitive_pairs_agree_with_tessellation_brackets() {
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    let res = 48;
    let mut decided = 0;
    let mut ambiguous = 0;
    for ka in 0..4 {
        for kb in ka..4 {
            let (mut yes, mut no) = (0, 0);
            for _ in 0..60 {
                let a = rand_bounded(&mut rng, ka);
                let b = rand_bounded(&mut rng, kb);
                let pa = rand_pose(&mut rng, 1.0);
                let pb = rand_pose(&mut rng, 1.8);
                let got = primitives_intersect(&a, &pa, &b, &pb).unwrap();
                assert_eq!(
                    got,
                    primitives_intersect(&b, &pb, &a, &pa).unwrap(),
                    "symmetry"
                );
                let (ia, ib) = (
                    MeshQueries::new(a.to_solid(res).unwrap().into_mesh()),
                    MeshQueries::new(b.to_solid(res).unwrap().into_mesh()),
                );
                let (oa, ob) = (
                    MeshQueries::new(a.to_solid_circumscribed(res).unwrap().into_mesh()),
                    MeshQueries::new(b.to_solid_circumscribed(res).unwrap().into_mesh()),
                );
                if meshes_meet(&ia, &pa, &ib, &pb) {
                    assert!(got, "{a:?} {b:?}: inscribed meshes meet");
                    decided += 1;
                } else if !meshes_meet(&oa, &pa, &ob, &pb) {
                    assert!(!got, "{a:?} {b:?}: circumscribed meshes are apart");
                    decided += 1;
                } else {
                    ambiguous += 1;
                }
                if got {
                    yes += 1;
                } else {
                    no += 1;
                }
            }
            assert!(yes > 5 && no > 5, "kinds {ka} {kb}: {yes} yes, {no} no");
        }
    }
    // Measured: 1 of 600 random poses falls between the two tessellations at 48.
    assert!(
        ambiguous * 50 < decided,
        "{ambiguous} ambiguous of {}",
        decided + ambiguous
    );
}

#[test]
fn half_space_pairs_agree_with_tessellation_vertices() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for k in 0..4 {
        for _ in 0..80 {
            let hs = Primitive::half_space(random_unit(&mut rng)).unwrap();
            let ph = rand_pose(&mut rng, 1.0);
            let b = rand_bounded(&mut rng, k);
            let pb = rand_pose(&mut rng, 1.5);
            let got = primitives_intersect(&hs, &ph, &b, &pb).unwrap();
            assert_eq!(got, primitives_intersect(&b, &pb, &hs, &ph).unwrap());
            let Primitive::HalfSpace { normal } = hs else {
                unreachable!()
            };
            let n = ph.rotation * normal;
            let below = |s: &Solid| {
                s.vertices()
                    .iter()
                    .any(|v| n.dot(pb.transform_point(*v) - ph.translation) <= 0.0)
            };
            if below(&b.to_solid(64).unwrap()) {
                assert!(got);
            } else if !below(&b.to_solid_circumscribed(64).unwrap()) {
                assert!(!got);
            }
        }
    }
    // Two half-spaces: apart only when opposite and separated.
    let up = Primitive::half_space(DVec3::Y).unwrap();
    let down = Primitive::half_space(-DVec3::Y).unwrap();
    let at = |y: f64| DPose {
        rotation: DMat3::IDENTITY,
        translation: DVec3::new(0.0, y, 0.0),
    };
    assert!(primitives_intersect(&up, &at(0.0), &down, &at(-1.0)).unwrap());
    assert!(primitives_intersect(&up, &at(0.0), &down, &at(0.0)).unwrap());
    assert!(!primitives_intersect(&up, &at(0.0), &down, &at(1e-9)).unwrap());
    assert!(primitives_intersect(&up, &at(0.0), &up, &at(100.0)).unwrap());
    let tilted = Primitive::half_space(DVec3::new(0.0, -1.0, 1e-6)).unwrap();
    assert!(primitives_intersect(&up, &at(0.0), &tilted, &at(5.0)).unwrap());
}

/// Exact touching: boxes sharing a face, an edge or a corner meet; moved apart by the next
/// representable coordinate they do not. Spheres and capsules at exactly the sum of radii.
#[test]
fn touching_counts_and_a_gap_does_not() {
    let b = Primitive::cuboid(DVec3::new(0.5, 0.25, 1.0)).unwrap();
    let at = |t: DVec3| DPose {
        rotation: DMat3::IDENTITY,
        translation: t,
    };
    for t in [
        DVec3::new(1.0, 0.0, 0.0),
        DVec3::new(1.0, 0.5, 0.0),
        DVec3::new(1.0, 0.5, 2.0),
        DVec3::new(0.3, 0.5, -0.7),
    ] {
        assert!(
            primitives_intersect(&b, &at(DVec3::ZERO), &b, &at(t)).unwrap(),
            "{t}"
        );
        let mut apart = t;
        let k = if t.x == 1.0 { 0 } else { 1 };
        apart[k] = f64::from_bits(t[k].to_bits() + 1);
        assert!(
            !primitives_intersect(&b, &at(DVec3::ZERO), &b, &at(apart)).unwrap(),
            "{apart}"
        );
    }
    // Rotated by 90° about z (an exact rotation matrix): still exact.
    let quarter = DPose {
        rotation: DMat3::from_cols(DVec3::Y, -DVec3::X, DVec3::Z),
        translation: DVec3::new(0.75, 0.0, 0.0),
    };
    assert!(primitives_intersect(&b, &at(DVec3::ZERO), &b, &quarter).unwrap());
    let mut gap = quarter;
    gap.translation.x = f64::from_bits(0.75f64.to_bits() + 1);
    assert!(!primitives_intersect(&b, &at(DVec3::ZERO), &b, &gap).unwrap());
    // Nested boxes (no surface contact) meet, both ways.
    let small = Primitive::cuboid(DVec3::splat(0.1)).unwrap();
    assert!(primitives_intersect(&b, &at(DVec3::ZERO), &small, &at(DVec3::ZERO)).unwrap());
    assert!(primitives_intersect(&small, &at(DVec3::ZERO), &b, &at(DVec3::ZERO)).unwrap());
    let s1 = Primitive::sphere(0.5).unwrap();
    let s2 = Primitive::capsule(1.0, 0.25).unwrap();
    assert!(
        primitives_intersect(&s1, &at(DVec3::ZERO), &s2, &at(DVec3::new(0.75, 0.0, 0.0))).unwrap()
    );
    assert!(
        !primitives_intersect(
            &s1,
            &at(DVec3::ZERO),
            &s2,
            &at(DVec3::new(0.7500001, 0.0, 0.0))
        )
        .unwrap()
    );
    assert!(
        primitives_intersect(&s1, &at(DVec3::ZERO), &s2, &at(DVec3::new(0.0, 1.75, 0.0))).unwrap()
    );
    assert!(
        !primitives_intersect(
            &s1,
            &at(DVec3::ZERO),
            &s2,
            &at(DVec3::new(0.0, 1.7500001, 0.0))
        )
        .unwrap()
    );
    // A cylinder lying on a box, and one just above it (GJK).
    let cyl = Primitive::cylinder(1.0, 0.5).unwrap();
    let lying = |y: f64| DPose {
        rotation: DMat3::from_rotation_z(std::f64::consts::FRAC_PI_2),
        translation: DVec3::new(0.0, y, 0.0),
    };
    assert!(primitives_intersect(&b, &at(DVec3::ZERO), &cyl, &lying(0.75)).unwrap());
    assert!(!primitives_intersect(&b, &at(DVec3::ZERO), &cyl, &lying(0.75 + 1e-9)).unwrap());
    // Huge coordinates: the same configuration shifted by 1e6.
    let far = DVec3::splat(1e6);
    assert!(
        primitives_intersect(&s1, &at(far), &s2, &at(far + DVec3::new(0.74, 0.0, 0.0))).unwrap()
    );
    assert!(
        !primitives_intersect(&s1, &at(far), &s2, &at(far + DVec3::new(0.76, 0.0, 0.0))).unwrap()
    );
}

/// Primitive against meshes: the cuboid's 12-triangle mesh is exact, so the answer must equal
/// the primitive–cuboid answer; other meshes are bracketed by the primitive's tessellations.
#[test]
fn primitive_against_meshes() {
    let mut rng = ChaCha8Rng::seed_from_u64(31);
    let h = DVec3::new(0.625, 0.375, 0.875); // exact in f32, so the mesh is the box
    let box_prim = Primitive::cuboid(h).unwrap();
    let box_mesh = shapes::cuboid(h.as_vec3()).unwrap();
    let box_tree = BalancedTree::build(&box_mesh);
    let torus = shapes::torus(1.0, 0.35, 40, 20).unwrap();
    let torus_tree = BalancedTree::build(&torus);
    let torus_col = MeshQueries::new(torus.clone().into_mesh());
    let (mut agree, mut bracketed) = (0, 0);
    for k in 0..5 {
        for _ in 0..60 {
            let p = if k == 4 {
                Primitive::half_space(random_unit(&mut rng)).unwrap()
            } else {
                rand_bounded(&mut rng, k)
            };
            let pp = rand_pose(&mut rng, 1.6);
            let pm = rand_pose(&mut rng, 0.5);
            let got = primitive_solid_intersect(&p, &pp, &box_mesh, &box_tree, &pm).unwrap();
            let want = primitives_intersect(&p, &pp, &box_prim, &pm).unwrap();
            assert_eq!(got, want, "{p:?}");
            agree += 1;
            if k == 4 {
                continue;
            }
            let got = primitive_solid_intersect(&p, &pp, &torus, &torus_tree, &pm).unwrap();
            let inner = MeshQueries::new(p.to_solid(48).unwrap().into_mesh());
            let outer = MeshQueries::new(p.to_solid_circumscribed(48).unwrap().into_mesh());
            if meshes_meet(&inner, &pp, &torus_col, &pm) {
                assert!(got, "{p:?}: inscribed mesh meets the torus");
                bracketed += 1;
            } else if !meshes_meet(&outer, &pp, &torus_col, &pm) {
                assert!(!got, "{p:?}: circumscribed mesh misses the torus");
                bracketed += 1;
            }
        }
    }
    assert!(agree == 300 && bracketed > 200, "{bracketed}");
    // Nesting without surface contact: a small sphere inside the box mesh, the box mesh
    // inside a big sphere, a sphere in the torus hole (apart).
    let id = DPose::IDENTITY;
    let small = Primitive::sphere(0.1).unwrap();
    let big = Primitive::sphere(5.0).unwrap();
    assert!(primitive_solid_intersect(&small, &id, &box_mesh, &box_tree, &id).unwrap());
    assert!(primitive_solid_intersect(&big, &id, &box_mesh, &box_tree, &id).unwrap());
    assert!(!primitive_solid_intersect(&small, &id, &torus, &torus_tree, &id).unwrap());
    // A tree built for another mesh is refused.
    assert!(primitive_solid_intersect(&small, &id, &torus, &box_tree, &id).is_err());
}

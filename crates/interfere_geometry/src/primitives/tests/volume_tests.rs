//! Intersection volumes and gradients against independent oracles: the exact convex clipping
//! of inscribed and circumscribed tessellations (a rigorous bracket), textbook closed forms
//! (caps, lens, axis-aligned boxes), the closed-form antiderivative of the cylinder, Monte
//! Carlo counts with a 5σ tolerance, and central finite differences of the volume for the
//! gradient.

use super::*;
use crate::bvh::BalancedTree;
use crate::containment::{PointLocation, locate_point};
use crate::mesh::TriMesh;
use crate::primitives::ball::ball_planes;
use crate::primitives::cylinder::cylinder_below_plane;
use crate::primitives::{
    PrimitiveError, PrimitiveKind, PrimitiveVolume, PrimitiveVolumeMethod, half_space_solid_volume,
    intersection_volume, primitive_solid_volume, sphere_solid_volume, volume_method,
    volume_method_with_solid,
};
use crate::shapes;
use glam::Vec3;
use rand::SeedableRng;
use std::f64::consts::PI;

fn vol(a: &Primitive, pa: &DPose, b: &Primitive, pb: &DPose) -> f64 {
    intersection_volume(a, pa, b, pb)
        .unwrap()
        .map_or(0.0, |v| v.volume)
}

fn hs_normal(p: &Primitive) -> DVec3 {
    match p {
        Primitive::HalfSpace { normal } => *normal,
        _ => panic!("not a half-space"),
    }
}

/// A half-space whose world plane has unit normal `n` through `point`, with a random frame.
fn half_space_at(rng: &mut ChaCha8Rng, n: DVec3, point: DVec3) -> (Primitive, DPose) {
    let mut pose = rand_pose(rng, 0.0);
    pose.translation = point;
    let local = pose.rotation.transpose() * n;
    (Primitive::half_space(local).unwrap(), pose)
}

/// The regions and pieces reproduce the gradient they claim: sums and moments.
fn check_pieces(v: &PrimitiveVolume) {
    let scale = v.translation_gradient.length() + v.rotation_gradient.length() + 1e-300;
    let sum: DVec3 = v.regions_b.iter().map(|r| r.vector_area).sum();
    let psum: DVec3 = v.pieces_b.iter().map(|p| p.vector_area).sum();
    assert!((sum - v.translation_gradient).length() <= 1e-12 * scale);
    assert!((psum - v.translation_gradient).length() <= 1e-9 * scale);
    let m: DVec3 = v
        .pieces_b
        .iter()
        .map(|p| (p.centroid - v.point).cross(p.vector_area))
        .sum();
    assert!(
        (m - v.rotation_gradient).length() <= 1e-9 * (scale + 1.0) * (1.0 + v.point.length()),
        "{m} vs {}",
        v.rotation_gradient
    );
    assert!((v.normal.length() - 1.0).abs() < 1e-12);
    if v.translation_gradient.length() > 0.0 {
        assert!((v.normal + v.translation_gradient.normalize()).length() < 1e-12);
    }
}

/// Central finite differences of `f(pose_b)` along translations and rotations about the
/// reported point, against the reported gradient.
fn check_gradient(
    v: &PrimitiveVolume,
    pose_b: &DPose,
    h: f64,
    tol: f64,
    f: impl Fn(&DPose) -> f64,
) {
    let g_scale = v
        .translation_gradient
        .length()
        .max(v.volume.powf(2.0 / 3.0));
    for k in 0..3 {
        let mut e = DVec3::ZERO;
        e[k] = 1.0;
        let fd = (f(&shifted(pose_b, e * h)) - f(&shifted(pose_b, -e * h))) / (2.0 * h);
        assert!(
            (fd - v.translation_gradient[k]).abs() <= tol * g_scale,
            "translation {k}: fd {fd} vs {}",
            v.translation_gradient[k]
        );
        let fr = (f(&rotated_about(pose_b, v.point, e, h))
            - f(&rotated_about(pose_b, v.point, e, -h)))
            / (2.0 * h);
        let r_scale = g_scale * v.volume.cbrt().max(h);
        assert!(
            (fr - v.rotation_gradient[k]).abs() <= tol * r_scale,
            "rotation {k}: fd {fr} vs {}",
            v.rotation_gradient[k]
        );
    }
}

/// Oracle: the half-space clip of the inscribed and circumscribed tessellations (exact
/// polyhedral clipping, a different code path) brackets every half-space volume; the results
/// are symmetric under swapping; the gradient matches finite differences.
#[test]
fn half_space_volumes_are_bracketed_by_the_tessellations() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for k in 0..4 {
        let mut seen = 0;
        for case in 0..40 {
            let b = rand_bounded(&mut rng, k);
            let pb = rand_pose(&mut rng, 2.0);
            let n = if case < 4 {
                // Axis-aligned and nearly axis-aligned planes in B's frame.
                let axis = [
                    DVec3::Y,
                    DVec3::X,
                    DVec3::new(1e-9, 1.0, 0.0),
                    DVec3::new(1.0, 1e-12, 0.0),
                ][case];
                pb.rotation * axis.normalize()
            } else {
                random_unit(&mut rng)
            };
            let offset = rng.random_range(-1.2..1.2) * b.scale();
            let (hs, ph) = half_space_at(&mut rng, n, pb.translation + n * offset);
            let got = intersection_volume(&hs, &ph, &b, &pb).unwrap();
            let v = got.as_ref().map_or(0.0, |v| v.volume);
            let vin = half_space_solid_volume(hs_normal(&hs), &ph, &b.to_solid(256).unwrap(), &pb)
                .unwrap()
                .map_or(0.0, |v| v.volume);
            let vout = half_space_solid_volume(
                hs_normal(&hs),
                &ph,
                &b.to_solid_circumscribed(256).unwrap(),
                &pb,
            )
            .unwrap()
            .map_or(0.0, |v| v.volume);
            // The tessellations' vertices are rounded to f32 (relative 6e-8).
            let slack = 1e-6 * b.volume();
            assert!(
                vin <= v + slack && v <= vout + slack,
                "{b:?}: {vin} <= {v} <= {vout}"
            );
            assert!(v <= b.volume() * (1.0 + 1e-12));
            let swapped = intersection_volume(&b, &pb, &hs, &ph).unwrap();
            assert_eq!(got.as_ref().map(|v| v.swapped()), swapped);
            if let Some(v) = got {
                seen += 1;
                check_pieces(&v);
                if v.volume < b.volume() * (1.0 - 1e-9) {
                    check_gradient(&v, &pb, 1e-6, 1e-5, |p| vol(&hs, &ph, &b, p));
                }
            }
        }
        assert!(seen > 15, "kind {k}: {seen}");
    }
}

/// `F(δ)`, the antiderivative of the circular segment area `A(δ)` (the disk part `w ≤ δ`).
fn segment_antiderivative(r: f64, d: f64) -> f64 {
    if d <= -r {
        0.0
    } else if d >= r {
        PI * r * r * d
    } else {
        r * r * d * (-d / r).acos() + (r * r - d * d).sqrt() * (2.0 * r * r + d * d) / 3.0
    }
}

/// Oracle: the closed-form antiderivative where it is well conditioned, textbook special cases,
/// and continuity into the regime where it is not (the cylinder lying flat).
#[test]
fn cylinder_below_a_plane_matches_the_closed_form() {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let (r, l) = (0.7, 1.3);
    let full = PI * r * r * 2.0 * l;
    for _ in 0..500 {
        let mut n = random_unit(&mut rng);
        if n.y.abs() < 0.3 {
            n.y = 0.3f64.copysign(n.y);
            n = n.normalize();
        }
        let d = rng.random_range(-1.8..1.8);
        let got = cylinder_below_plane(r, l, n, d).volume;
        let s = DVec3::new(n.x, 0.0, n.z).length();
        let delta = |y: f64| (d - n.y * y) / s;
        let want = (s / n.y)
            * (segment_antiderivative(r, delta(-l)) - segment_antiderivative(r, delta(l)));
        assert!(
            (got - want).abs() <= 1e-12 * full,
            "{n} {d}: {got} vs {want}"
        );
    }
    // Axis perpendicular to the plane: a disk times the depth.
    for d in [-2.0, -1.3, -0.4, 0.0, 0.9, 1.3, 3.0] {
        let got = cylinder_below_plane(r, l, DVec3::Y, d).volume;
        assert!((got - PI * r * r * (d + l).clamp(0.0, 2.0 * l)).abs() < 1e-14);
        let got = cylinder_below_plane(r, l, -DVec3::Y, d).volume;
        assert!((got - PI * r * r * (l + d).clamp(0.0, 2.0 * l)).abs() < 1e-14);
    }
    // Axis parallel to the plane: the segment area times the length, and the nearly parallel
    // planes converge to it (the secant of F would lose every digit here).
    let seg = |dl: f64| {
        let th = (-dl / r).clamp(-1.0, 1.0).acos();
        r * r * (th - th.sin() * th.cos())
    };
    for dl in [-0.7, -0.6999, -0.5, -0.1, 0.0, 0.33, 0.69999, 0.7] {
        let want = 2.0 * l * seg(dl);
        let got = cylinder_below_plane(r, l, DVec3::X, dl).volume;
        assert!((got - want).abs() <= 1e-13 * full, "{dl}: {got} vs {want}");
        for tilt in [1e-15, 1e-10, 1e-6, 1e-3] {
            let n = DVec3::new(1.0, tilt, 0.0).normalize();
            let got = cylinder_below_plane(r, l, n, dl * n.x).volume;
            // Oracle: the midpoint rule in y on the segment area (δ varies by at most
            // 2.6e-3 r over the length, so 20000 slices leave an error far below 1e-12).
            let m = 20_000;
            let s = n.x;
            let mid: f64 = (0..m)
                .map(|i| {
                    let y = -l + (i as f64 + 0.5) * 2.0 * l / m as f64;
                    let dy = (dl * n.x - n.y * y) / s;
                    let th = (-dy / r).clamp(-1.0, 1.0).acos();
                    // θ − sin θ cos θ = (2θ − sin 2θ)/2, without cancellation.
                    r * r * 0.5 * crate::primitives::cylinder::x_minus_sin(2.0 * th)
                })
                .sum::<f64>()
                * 2.0
                * l
                / m as f64;
            assert!(
                (got - mid).abs() <= 1e-12 * full,
                "{dl} {tilt}: {got} vs {mid}"
            );
        }
    }
    // The section of the plane: an ellipse of semi-axes r and r/|n_y| when it cuts no cap.
    let n = DVec3::new(0.6, 0.8, 0.0);
    let cut = cylinder_below_plane(r, l, n, 0.05);
    assert!((cut.section.area - PI * r * r / 0.8).abs() < 1e-12);
    // The sphere cap against the general ball ∩ planes routine (one plane).
    for d in [-0.99, -0.5, 0.0, 0.3, 0.999] {
        let clip = ball_planes(DVec3::ZERO, 1.0, &[(DVec3::new(0.0, 0.0, 1.0), d)]);
        let eta = 1.0 + d;
        assert!((clip.volume - PI * eta * eta * (3.0 - eta) / 3.0).abs() < 1e-13);
    }
}

#[test]
fn upright_capsule_below_a_plane_is_cap_plus_cylinder() {
    let (l, r) = (0.8, 0.5);
    let c = Primitive::capsule(l, r).unwrap();
    let cap = |eta: f64| PI * eta * eta * (3.0 * r - eta) / 3.0;
    let total = c.volume();
    for y0 in [-1.4, -1.3, -1.0, -0.8, -0.3, 0.0, 0.7, 0.8, 1.1, 1.3, 1.5] {
        let want = if y0 <= -l - r {
            0.0
        } else if y0 <= -l {
            cap(y0 + l + r)
        } else if y0 <= l {
            2.0 / 3.0 * PI * r.powi(3) + PI * r * r * (y0 + l)
        } else if y0 < l + r {
            total - cap(l + r - y0)
        } else {
            total
        };
        let hs = Primitive::half_space(DVec3::Y).unwrap();
        let ph = DPose {
            rotation: DMat3::IDENTITY,
            translation: DVec3::new(0.0, y0, 0.0),
        };
        let got = vol(&hs, &ph, &c, &DPose::IDENTITY);
        assert!((got - want).abs() < 1e-13 * total, "{y0}: {got} vs {want}");
    }
}

/// Oracle: the textbook lens formula, and the bracket of the tessellations' convex clip.
#[test]
fn lens_matches_the_formula_and_the_bracket() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    for _ in 0..60 {
        let (ra, rb) = (rng.random_range(0.2..1.5), rng.random_range(0.2..1.5));
        let d = rng.random_range(0.0..(ra + rb) * 1.1);
        let pa = rand_pose(&mut rng, 5.0);
        let mut pb = rand_pose(&mut rng, 0.0);
        pb.translation = pa.translation + random_unit(&mut rng) * d;
        let (a, b) = (
            Primitive::sphere(ra).unwrap(),
            Primitive::sphere(rb).unwrap(),
        );
        let got = vol(&a, &pa, &b, &pb);
        let d = (pb.translation - pa.translation).length();
        let want = if d >= ra + rb {
            0.0
        } else if d <= (ra - rb).abs() {
            4.0 / 3.0 * PI * ra.min(rb).powi(3)
        } else {
            PI * (ra + rb - d).powi(2) * (d * d + 2.0 * d * (ra + rb) - 3.0 * (ra - rb).powi(2))
                / (12.0 * d)
        };
        assert!(
            (got - want).abs() <= 1e-12 * (1.0 + want),
            "{ra} {rb} {d}: {got} vs {want}"
        );
        // Clipping one convex mesh by every face plane of the other is quadratic: a coarse
        // bracket (resolution 32) keeps it quick.
        let vin =
            convex_meshes_volume(&a.to_solid(32).unwrap(), &pa, &b.to_solid(32).unwrap(), &pb);
        let vout = convex_meshes_volume(
            &a.to_solid_circumscribed(32).unwrap(),
            &pa,
            &b.to_solid_circumscribed(32).unwrap(),
            &pb,
        );
        assert!(
            vin <= got + 1e-6 * want.max(1e-3) && got <= vout + 1e-6 * want.max(1e-3),
            "{vin} <= {got} <= {vout}"
        );
        if let Some(v) = intersection_volume(&a, &pa, &b, &pb).unwrap() {
            check_pieces(&v);
            if d > (ra - rb).abs() + 1e-4 {
                check_gradient(&v, &pb, 1e-6, 1e-6, |p| vol(&a, &pa, &b, p));
            } else {
                assert_eq!(v.translation_gradient, DVec3::ZERO);
            }
        }
    }
}

/// Oracle: axis-aligned boxes (product of overlaps), Monte Carlo (5σ) for rotated ones, the
/// role swap, and finite differences.
#[test]
fn box_box_matches_products_and_monte_carlo() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let at = |t: DVec3| DPose {
        rotation: DMat3::IDENTITY,
        translation: t,
    };
    for _ in 0..50 {
        let ha = DVec3::new(
            rng.random_range(0.2..1.0),
            rng.random_range(0.2..1.0),
            rng.random_range(0.2..1.0),
        );
        let hb = DVec3::new(
            rng.random_range(0.2..1.0),
            rng.random_range(0.2..1.0),
            rng.random_range(0.2..1.0),
        );
        let t = DVec3::new(
            rng.random_range(-1.5..1.5),
            rng.random_range(-1.5..1.5),
            rng.random_range(-1.5..1.5),
        );
        let (a, b) = (
            Primitive::cuboid(ha).unwrap(),
            Primitive::cuboid(hb).unwrap(),
        );
        let got = vol(&a, &at(DVec3::ZERO), &b, &at(t));
        let overlap = ((ha + hb) - t.abs()).max(DVec3::ZERO).min(2.0 * ha.min(hb));
        let want = overlap.x * overlap.y * overlap.z;
        assert!((got - want).abs() < 1e-13, "{got} vs {want}");
    }
    let mut checked = 0;
    while checked < 12 {
        let a = rand_bounded(&mut rng, 2);
        let b = rand_bounded(&mut rng, 2);
        let pa = rand_pose(&mut rng, 0.5);
        let pb = rand_pose(&mut rng, 0.8);
        let Some(v) = intersection_volume(&a, &pa, &b, &pb).unwrap() else {
            continue;
        };
        checked += 1;
        let back = intersection_volume(&b, &pb, &a, &pa).unwrap().unwrap();
        assert!((back.volume - v.volume).abs() < 1e-12 * v.volume);
        assert!(
            (back.translation_gradient + v.translation_gradient).length()
                < 1e-9 * v.translation_gradient.length().max(1e-9)
        );
        let (lo_a, hi_a) = a.world_bounds(&pa).unwrap();
        let (lo_b, hi_b) = b.world_bounds(&pb).unwrap();
        let (lo, hi) = (lo_a.max(lo_b), hi_a.min(hi_b));
        let (mc, sigma) = monte_carlo(&mut rng, lo, hi, 200_000, |x| {
            a.locate(&pa, x).unwrap() != PointLocation::Outside
                && b.locate(&pb, x).unwrap() != PointLocation::Outside
        });
        assert!(
            (mc - v.volume).abs() <= 5.0 * sigma,
            "{} vs MC {mc} ± {sigma}",
            v.volume
        );
        check_pieces(&v);
        check_gradient(&v, &pb, 1e-6, 1e-5, |p| vol(&a, &pa, &b, p));
    }
}

/// Oracle: the bracket of the sphere's tessellations clipped by the box's planes; and the same
/// volume through the mesh route on the box's exact 12-triangle mesh (another code path).
#[test]
fn sphere_box_is_bracketed_and_agrees_with_the_mesh_route() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let h = DVec3::new(0.75, 0.5, 0.375); // exact in f32
    let boxp = Primitive::cuboid(h).unwrap();
    let mesh = shapes::cuboid(h.as_vec3()).unwrap();
    let tree = BalancedTree::build(&mesh);
    let mut seen = 0;
    for _ in 0..80 {
        let r = rng.random_range(0.1..1.2);
        let s = Primitive::sphere(r).unwrap();
        let ps = rand_pose(&mut rng, 1.2);
        let pb = rand_pose(&mut rng, 0.3);
        let got = intersection_volume(&s, &ps, &boxp, &pb).unwrap();
        let v = got.as_ref().map_or(0.0, |v| v.volume);
        let planes = mesh_planes(&mesh, &pb);
        let vin = convex_mesh_clip_volume(&s.to_solid(128).unwrap(), &ps, &planes);
        let vout = convex_mesh_clip_volume(&s.to_solid_circumscribed(128).unwrap(), &ps, &planes);
        assert!(
            vin <= v + 1e-12 && v <= vout + 1e-12,
            "{vin} <= {v} <= {vout}"
        );
        let via_mesh = sphere_solid_volume(r, &ps, &mesh, &tree, &pb).unwrap();
        let vm = via_mesh.as_ref().map_or(0.0, |v| v.volume);
        assert!(
            (vm - v).abs() <= 1e-12 * s.volume(),
            "mesh route {vm} vs {v}"
        );
        if let (Some(a), Some(b)) = (&got, &via_mesh) {
            seen += 1;
            assert!((a.translation_gradient - b.translation_gradient).length() < 1e-10);
            check_pieces(a);
            check_pieces(b);
            if a.volume < 1e-9 * s.volume() {
                // Grazing: the cone formula's absolute rounding (~1e-16 r³) dominates; finite
                // differences of it are noise.
                continue;
            }
            check_gradient(a, &pb, 1e-6, 1e-5, |p| vol(&s, &ps, &boxp, p));
            let back = intersection_volume(&boxp, &pb, &s, &ps).unwrap().unwrap();
            // Moving the sphere is the reverse of moving the box.
            check_gradient(&back, &ps, 1e-6, 1e-5, |p| vol(&boxp, &pb, &s, p));
        }
    }
    assert!(seen > 30, "{seen}");
}

/// A prism of height `2 hz` over a simple counter-clockwise polygon whose fan from `apex`
/// triangulates it.
fn prism(poly: &[(f32, f32)], hz: f32, apex: usize) -> Solid {
    let m = poly.len() as u32;
    let mut v: Vec<Vec3> = poly.iter().map(|&(x, y)| Vec3::new(x, y, -hz)).collect();
    v.extend(poly.iter().map(|&(x, y)| Vec3::new(x, y, hz)));
    let mut t = Vec::new();
    for i in 0..m {
        let j = (i + 1) % m;
        t.push([i, j, m + j]);
        t.push([i, m + j, m + i]);
    }
    let a = apex as u32;
    for k in 1..m - 1 {
        let (p, q) = ((a + k) % m, (a + k + 1) % m);
        t.push([m + a, m + p, m + q]);
        t.push([a, q, p]);
    }
    Solid::new(TriMesh::new(v, t).unwrap()).unwrap()
}

/// Oracle for a non-convex mesh: an L-shaped prism is the union of two boxes, so its volume
/// with a ball is bracketed by the sums of the boxes' convex clips of the ball's
/// tessellations; a torus against Monte Carlo (5σ) with the exact point location.
#[test]
fn sphere_against_non_convex_meshes() {
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let hz = 0.5f32;
    let l_shape = prism(
        &[
            (0.0, 0.0),
            (2.0, 0.0),
            (2.0, 1.0),
            (1.0, 1.0),
            (1.0, 2.0),
            (0.0, 2.0),
        ],
        hz,
        3,
    );
    assert!((l_shape.volume() - 3.0).abs() < 1e-12);
    let tree = BalancedTree::build(&l_shape);
    let boxes = [
        (DVec3::new(1.0, 0.5, 0.0), DVec3::new(1.0, 0.5, 0.5)),
        (DVec3::new(0.5, 1.5, 0.0), DVec3::new(0.5, 0.5, 0.5)),
    ];
    let mut seen = 0;
    for _ in 0..60 {
        let r = rng.random_range(0.2..1.3);
        let pm = rand_pose(&mut rng, 0.5);
        let mut ps = rand_pose(&mut rng, 0.0);
        ps.translation = pm.transform_dpoint(DVec3::new(
            rng.random_range(-0.5..2.5),
            rng.random_range(-0.5..2.5),
            rng.random_range(-1.0..1.0),
        ));
        let s = Primitive::sphere(r).unwrap();
        let got = sphere_solid_volume(r, &ps, &l_shape, &tree, &pm).unwrap();
        let v = got.as_ref().map_or(0.0, |v| v.volume);
        let (mut vin, mut vout, mut vclosed) = (0.0, 0.0, 0.0);
        for (c, h) in boxes {
            let bp = pm.mul(&DPose {
                rotation: DMat3::IDENTITY,
                translation: c,
            });
            let planes = mesh_planes(&shapes::cuboid(h.as_vec3()).unwrap(), &bp);
            vin += convex_mesh_clip_volume(&s.to_solid(128).unwrap(), &ps, &planes);
            vout += convex_mesh_clip_volume(&s.to_solid_circumscribed(128).unwrap(), &ps, &planes);
            vclosed += vol(&s, &ps, &Primitive::cuboid(h).unwrap(), &bp);
        }
        assert!(
            vin <= v + 1e-12 && v <= vout + 1e-12,
            "{vin} <= {v} <= {vout}"
        );
        assert!(
            (v - vclosed).abs() <= 1e-11 * s.volume(),
            "{v} vs two boxes {vclosed}"
        );
        if let Some(g) = got {
            seen += 1;
            check_pieces(&g);
            check_gradient(&g, &pm, 1e-6, 1e-5, |p| {
                sphere_solid_volume(r, &ps, &l_shape, &tree, p)
                    .unwrap()
                    .map_or(0.0, |v| v.volume)
            });
        }
    }
    assert!(seen > 30);
    // Torus: Monte Carlo over the ball's box.
    let torus = shapes::torus(1.0, 0.4, 32, 16).unwrap();
    let ttree = BalancedTree::build(&torus);
    for (c, r) in [
        (DVec3::new(1.0, 0.0, 0.2), 0.5),
        (DVec3::ZERO, 0.9),
        (DVec3::new(0.3, 0.4, 0.0), 1.6),
    ] {
        let ps = DPose {
            rotation: DMat3::IDENTITY,
            translation: c,
        };
        let v = sphere_solid_volume(r, &ps, &torus, &ttree, &DPose::IDENTITY)
            .unwrap()
            .map_or(0.0, |v| v.volume);
        let (mc, sigma) = monte_carlo(
            &mut rng,
            c - DVec3::splat(r),
            c + DVec3::splat(r),
            40_000,
            |x| (x - c).length() <= r && locate_point(&torus, x) != PointLocation::Outside,
        );
        assert!(
            (mc - v).abs() <= 5.0 * sigma,
            "{c} {r}: {v} vs MC {mc} ± {sigma}"
        );
    }
}

/// Degenerate positions of the centre against the cube mesh `[-1, 1]³`: on a face, an edge, a
/// vertex (principal-value solid angle), tangent planes, faces entirely inside the ball, the
/// ball inside the mesh and the mesh inside the ball; each against the box closed form, the
/// tessellation bracket, and continuity under a 1e-9 nudge.
#[test]
fn sphere_mesh_degenerate_centres() {
    let mesh = shapes::cuboid(Vec3::ONE).unwrap();
    let tree = BalancedTree::build(&mesh);
    let cube = Primitive::cuboid(DVec3::ONE).unwrap();
    let id = DPose::IDENTITY;
    let at = |c: DVec3| DPose {
        rotation: DMat3::IDENTITY,
        translation: c,
    };
    let planes = mesh_planes(&mesh, &id);
    let cases = [
        (DVec3::new(1.0, 0.3, 0.2), 0.5),
        (DVec3::new(1.0, 0.3, 0.2), 1.5),
        (DVec3::new(1.0, 1.0, 0.2), 0.5),
        (DVec3::new(1.0, 1.0, 1.0), 0.5),
        (DVec3::new(1.0, 1.0, 1.0), 2.5),
        (DVec3::new(-1.0, 0.0, 0.0), 1.0),
        (DVec3::ZERO, 1.0),               // tangent to all six faces from inside
        (DVec3::ZERO, 1.2),               // faces partly inside
        (DVec3::ZERO, 0.5),               // ball inside the mesh
        (DVec3::ZERO, 1.8),               // mesh inside the ball (√3 < 1.8)
        (DVec3::new(2.0, 0.0, 0.0), 1.0), // tangent from outside
    ];
    for (c, r) in cases {
        let s = Primitive::sphere(r).unwrap();
        let v = sphere_solid_volume(r, &at(c), &mesh, &tree, &id)
            .unwrap()
            .map_or(0.0, |v| v.volume);
        let closed = vol(&s, &at(c), &cube, &id);
        assert!(
            (v - closed).abs() <= 1e-12 * s.volume(),
            "{c} {r}: mesh {v} vs box {closed}"
        );
        let vin = convex_mesh_clip_volume(&s.to_solid(256).unwrap(), &at(c), &planes);
        let vout =
            convex_mesh_clip_volume(&s.to_solid_circumscribed(256).unwrap(), &at(c), &planes);
        assert!(
            vin <= v + 1e-12 && v <= vout + 1e-12,
            "{c} {r}: {vin} <= {v} <= {vout}"
        );
        for nudge in [DVec3::new(1.0, 0.7, -0.4), DVec3::new(-0.2, -1.0, 0.9)] {
            let v2 = sphere_solid_volume(r, &at(c + nudge.normalize() * 1e-9), &mesh, &tree, &id)
                .unwrap()
                .map_or(0.0, |v| v.volume);
            assert!((v2 - v).abs() <= 1e-7 * r * r, "{c} {r}: {v} jumps to {v2}");
        }
    }
    let sv = |c: DVec3, r: f64| sphere_solid_volume(r, &at(c), &mesh, &tree, &id).unwrap();
    assert!(
        sv(DVec3::new(2.0, 0.0, 0.0), 1.0).is_none(),
        "tangent from outside"
    );
    let inside = sv(DVec3::ZERO, 1.0).unwrap();
    assert!((inside.volume - 4.0 / 3.0 * PI).abs() < 1e-13);
    assert!((sv(DVec3::ZERO, 1.8).unwrap().volume - 8.0).abs() < 1e-12);
    assert!(sv(DVec3::ZERO, 0.5).unwrap().translation_gradient == DVec3::ZERO);
    // Centre exactly on a face: half a ball.
    assert!(
        (sv(DVec3::new(1.0, 0.0, 0.0), 0.5).unwrap().volume - 2.0 / 3.0 * PI * 0.125).abs() < 1e-14
    );
    // On an edge: a quarter; on a corner: an eighth.
    assert!((sv(DVec3::new(1.0, 1.0, 0.0), 0.5).unwrap().volume - PI * 0.125 / 3.0).abs() < 1e-14);
    assert!((sv(DVec3::ONE, 0.5).unwrap().volume - PI * 0.125 / 6.0).abs() < 1e-14);
}

/// Adversarial: touching, nested both ways, coincident centres, 1e6 offsets, tiny sizes.
#[test]
fn adversarial_configurations() {
    let id = DPose::IDENTITY;
    let at = |c: DVec3| DPose {
        rotation: DMat3::IDENTITY,
        translation: c,
    };
    let s = Primitive::sphere(1.0).unwrap();
    let b = Primitive::cuboid(DVec3::splat(0.5)).unwrap();
    // Touching: zero volume.
    assert!(
        intersection_volume(&s, &id, &s, &at(DVec3::X * 2.0))
            .unwrap()
            .is_none()
    );
    assert!(
        intersection_volume(&b, &id, &b, &at(DVec3::X))
            .unwrap()
            .is_none()
    );
    assert!(
        intersection_volume(&s, &id, &b, &at(DVec3::X * 1.5))
            .unwrap()
            .is_none()
    );
    let hs = Primitive::half_space(DVec3::Y).unwrap();
    assert!(
        intersection_volume(&hs, &id, &s, &at(DVec3::Y))
            .unwrap()
            .is_none()
    );
    assert!(
        intersection_volume(&hs, &id, &b, &at(DVec3::Y * 0.5))
            .unwrap()
            .is_none()
    );
    // Nested both ways and coincident centres: the smaller volume, no gradient.
    let small = Primitive::sphere(0.25).unwrap();
    for (x, y) in [(&s, &small), (&small, &s)] {
        let v = intersection_volume(x, &id, y, &id).unwrap().unwrap();
        assert!((v.volume - small.volume()).abs() < 1e-15);
        assert_eq!(v.translation_gradient, DVec3::ZERO);
        assert!((v.normal.length() - 1.0).abs() < 1e-15);
        let v = intersection_volume(x, &id, &b, &id).unwrap().unwrap();
        assert!(
            (v.volume - x.volume().min(b.volume())).abs() < 1e-12,
            "{x:?}"
        );
        assert!(v.translation_gradient.length() < 1e-12);
    }
    let v = intersection_volume(
        &b,
        &id,
        &Primitive::cuboid(DVec3::splat(0.25)).unwrap(),
        &id,
    )
    .unwrap()
    .unwrap();
    assert!((v.volume - 0.125).abs() < 1e-15 && v.translation_gradient.length() < 1e-15);
    let v = intersection_volume(&s, &id, &s, &id).unwrap().unwrap();
    assert!((v.volume - s.volume()).abs() < 1e-15);
    // A half-space swallowing the shape: full volume, no gradient.
    let v = intersection_volume(&hs, &id, &b, &at(-DVec3::Y * 10.0))
        .unwrap()
        .unwrap();
    assert!((v.volume - 1.0).abs() < 1e-14 && v.translation_gradient == DVec3::ZERO);
    // 1e6 offsets: the same configurations shifted far away.
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    let far = DVec3::new(1e6, -2e6, 3e6);
    let mut compared = 0;
    while compared < 40 {
        let k = compared % 5;
        let (a, bb) = match k {
            0 => (
                Primitive::sphere(0.8).unwrap(),
                Primitive::sphere(0.6).unwrap(),
            ),
            1 => (
                Primitive::cuboid(DVec3::new(0.5, 0.7, 0.3)).unwrap(),
                Primitive::cuboid(DVec3::splat(0.4)).unwrap(),
            ),
            2 => (
                Primitive::sphere(0.7).unwrap(),
                Primitive::cuboid(DVec3::new(0.5, 0.2, 0.6)).unwrap(),
            ),
            3 => (
                Primitive::half_space(random_unit(&mut rng)).unwrap(),
                Primitive::cylinder(0.6, 0.4).unwrap(),
            ),
            _ => (
                Primitive::half_space(random_unit(&mut rng)).unwrap(),
                Primitive::capsule(0.5, 0.3).unwrap(),
            ),
        };
        let pa = rand_pose(&mut rng, 0.4);
        let pb = rand_pose(&mut rng, 0.4);
        let Some(near) = intersection_volume(&a, &pa, &bb, &pb).unwrap() else {
            continue;
        };
        compared += 1;
        let fa = shifted(&pa, far);
        let fb = shifted(&pb, far);
        let v = intersection_volume(&a, &fa, &bb, &fb).unwrap().unwrap();
        assert!(
            (v.volume - near.volume).abs() <= 1e-8 * near.volume.max(1e-3),
            "{a:?} {bb:?}: {} vs {}",
            v.volume,
            near.volume
        );
        assert!((v.translation_gradient - near.translation_gradient).length() <= 1e-7);
        assert!((v.point - far - near.point).length() <= 1e-7);
        assert!((v.rotation_gradient - near.rotation_gradient).length() <= 1e-6);
    }
    // The mesh routes far away: a sphere and a half-space against a bumpy (non-convex) mesh.
    let blob = shapes::bumpy_sphere(1.0, 0.2, 3.0, 3, 2).unwrap();
    let tree = BalancedTree::build(&blob);
    for _ in 0..10 {
        let pm = rand_pose(&mut rng, 0.3);
        let ps = rand_pose(&mut rng, 1.2);
        let n = random_unit(&mut rng);
        let near_s = sphere_solid_volume(0.7, &ps, &blob, &tree, &pm).unwrap();
        let far_s =
            sphere_solid_volume(0.7, &shifted(&ps, far), &blob, &tree, &shifted(&pm, far)).unwrap();
        let near_h = half_space_solid_volume(n, &ps, &blob, &pm).unwrap();
        let far_h =
            half_space_solid_volume(n, &shifted(&ps, far), &blob, &shifted(&pm, far)).unwrap();
        for (a, b) in [(near_s, far_s), (near_h, far_h)] {
            match (a, b) {
                (Some(a), Some(b)) => {
                    assert!((a.volume - b.volume).abs() <= 1e-8 * a.volume.max(1e-3));
                    assert!((a.translation_gradient - b.translation_gradient).length() <= 1e-7);
                    assert!((b.point - far - a.point).length() <= 1e-7);
                }
                (None, None) => {}
                (a, b) => panic!("far away changed the answer: {a:?} vs {b:?}"),
            }
        }
    }
    // Tiny sizes: the volume scales as λ³ and the gradient as λ².
    let lam = 1e-6;
    for (a, bb, t) in [
        (
            Primitive::sphere(1.0).unwrap(),
            Primitive::sphere(0.7).unwrap(),
            DVec3::new(1.2, 0.3, 0.0),
        ),
        (
            Primitive::sphere(1.0).unwrap(),
            Primitive::cuboid(DVec3::new(0.5, 0.7, 0.3)).unwrap(),
            DVec3::new(1.2, 0.3, 0.1),
        ),
    ] {
        let big = intersection_volume(&a, &id, &bb, &at(t)).unwrap().unwrap();
        let scale = |p: &Primitive| match *p {
            Primitive::Sphere { radius } => Primitive::sphere(radius * lam).unwrap(),
            Primitive::Cuboid { half_extents } => Primitive::cuboid(half_extents * lam).unwrap(),
            _ => unreachable!(),
        };
        let tiny = intersection_volume(&scale(&a), &id, &scale(&bb), &at(t * lam))
            .unwrap()
            .unwrap();
        assert!((tiny.volume / lam.powi(3) - big.volume).abs() < 1e-9 * big.volume);
        assert!(
            (tiny.translation_gradient / (lam * lam) - big.translation_gradient).length() < 1e-9
        );
    }
}

#[test]
fn methods_and_refusals() {
    let s = Primitive::sphere(1.0).unwrap();
    let c = Primitive::capsule(1.0, 0.5).unwrap();
    let y = Primitive::cylinder(1.0, 0.5).unwrap();
    let b = Primitive::cuboid(DVec3::ONE).unwrap();
    let h = Primitive::half_space(DVec3::Y).unwrap();
    let id = DPose::IDENTITY;
    for (x, z, want) in [
        (&s, &s, PrimitiveVolumeMethod::ClosedForm),
        (&s, &b, PrimitiveVolumeMethod::ClosedForm),
        (&b, &s, PrimitiveVolumeMethod::ClosedForm),
        (&b, &b, PrimitiveVolumeMethod::ClosedForm),
        (&h, &c, PrimitiveVolumeMethod::ClosedForm),
        (&y, &h, PrimitiveVolumeMethod::ClosedForm),
        (&h, &h, PrimitiveVolumeMethod::Unbounded),
        (&s, &c, PrimitiveVolumeMethod::Tessellate),
        (&c, &c, PrimitiveVolumeMethod::Tessellate),
        (&c, &b, PrimitiveVolumeMethod::Tessellate),
        (&y, &s, PrimitiveVolumeMethod::Tessellate),
        (&y, &y, PrimitiveVolumeMethod::Tessellate),
        (&b, &y, PrimitiveVolumeMethod::Tessellate),
    ] {
        assert_eq!(volume_method(x, z), want, "{x:?} {z:?}");
        assert_eq!(volume_method(z, x), want);
        let r = intersection_volume(x, &id, z, &id);
        match want {
            PrimitiveVolumeMethod::ClosedForm => assert!(r.unwrap().is_some()),
            PrimitiveVolumeMethod::Tessellate => {
                assert!(matches!(r, Err(PrimitiveError::NoClosedForm { .. })))
            }
            PrimitiveVolumeMethod::Unbounded => {
                assert!(matches!(r, Err(PrimitiveError::Unbounded(_))))
            }
        }
    }
    let mesh = shapes::cuboid(Vec3::ONE).unwrap();
    let tree = BalancedTree::build(&mesh);
    assert_eq!(
        volume_method_with_solid(&s),
        PrimitiveVolumeMethod::ClosedForm
    );
    assert_eq!(
        volume_method_with_solid(&h),
        PrimitiveVolumeMethod::ClosedForm
    );
    for p in [&c, &b, &y] {
        assert_eq!(
            volume_method_with_solid(p),
            PrimitiveVolumeMethod::Tessellate
        );
        assert!(matches!(
            primitive_solid_volume(p, &id, &mesh, &tree, &id),
            Err(PrimitiveError::NoClosedFormWithMesh(_))
        ));
    }
    assert!(
        primitive_solid_volume(&s, &id, &mesh, &tree, &id)
            .unwrap()
            .is_some()
    );
    assert!(
        primitive_solid_volume(&h, &id, &mesh, &tree, &id)
            .unwrap()
            .is_some()
    );
    let other = BalancedTree::build(&shapes::icosphere(1.0, 1).unwrap());
    assert!(matches!(
        primitive_solid_volume(&s, &id, &mesh, &other, &id),
        Err(PrimitiveError::TreeMismatch { .. })
    ));
    assert!(matches!(
        sphere_solid_volume(-1.0, &id, &mesh, &tree, &id),
        Err(PrimitiveError::InvalidDimension {
            shape: PrimitiveKind::Sphere,
            ..
        })
    ));
}

/// Half-space against meshes: the box mesh against the box closed form (clip), the mesh of a
/// tessellated sphere against its exact deficit, and finite differences on a non-convex mesh.
#[test]
fn half_space_against_meshes() {
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let h = DVec3::new(0.75, 0.5, 0.375);
    let mesh = shapes::cuboid(h.as_vec3()).unwrap();
    let boxp = Primitive::cuboid(h).unwrap();
    let blob = shapes::bumpy_sphere(1.0, 0.3, 3.0, 3, 5).unwrap();
    for _ in 0..60 {
        let n = random_unit(&mut rng);
        let pm = rand_pose(&mut rng, 1.0);
        let offset = rng.random_range(-1.0..1.0);
        let (hs, ph) = half_space_at(&mut rng, n, pm.translation + n * offset);
        let got = half_space_solid_volume(hs_normal(&hs), &ph, &mesh, &pm).unwrap();
        let want = intersection_volume(&hs, &ph, &boxp, &pm).unwrap();
        assert!(
            (got.as_ref().map_or(0.0, |v| v.volume) - want.as_ref().map_or(0.0, |v| v.volume))
                .abs()
                < 1e-12
        );
        if let (Some(g), Some(w)) = (&got, &want) {
            assert!((g.translation_gradient - w.translation_gradient).length() < 1e-12);
            assert!((g.point - w.point).length() < 1e-9);
        }
        if let Some(g) = half_space_solid_volume(hs_normal(&hs), &ph, &blob, &pm).unwrap() {
            check_pieces(&g);
            if g.volume < blob.volume() * 0.999 {
                check_gradient(&g, &pm, 1e-6, 1e-5, |p| {
                    half_space_solid_volume(hs_normal(&hs), &ph, &blob, p)
                        .unwrap()
                        .map_or(0.0, |v| v.volume)
                });
            }
        }
    }
}

/// Oracle: the crate's ray-sampled volume (`uniform_volume`) of the sphere's inscribed and
/// circumscribed tessellations against the torus brackets the exact sphere–torus volume up to
/// its sampling error, converges to it, and its gradient with respect to the torus agrees.
#[test]
fn sphere_torus_agrees_with_the_ray_sampler() {
    use crate::volume::{Sampling, UniformOptions, uniform_volume};
    let torus = shapes::torus(1.0, 0.4, 48, 24).unwrap();
    let tree = BalancedTree::build(&torus);
    let r = 0.8;
    let s = Primitive::sphere(r).unwrap();
    let ps = DPose {
        rotation: DMat3::IDENTITY,
        translation: DVec3::new(0.9, 0.3, 0.25),
    };
    let pm = DPose {
        rotation: DMat3::from_rotation_x(0.3),
        translation: DVec3::ZERO,
    };
    let exact = sphere_solid_volume(r, &ps, &torus, &tree, &pm)
        .unwrap()
        .unwrap();
    let inner = s.to_solid(128).unwrap();
    let outer = s.to_solid_circumscribed(128).unwrap();
    let b_to_a = ps.inverse().mul(&pm);
    let mut last = f64::INFINITY;
    for res in [32, 64, 128] {
        let opts = UniformOptions {
            sampling: Sampling::Resolution(res),
            collect_points: false,
            ..UniformOptions::default()
        };
        let vi = uniform_volume(&inner, &torus, &b_to_a, &opts).unwrap();
        let vo = uniform_volume(&outer, &torus, &b_to_a, &opts).unwrap();
        let (ei, eo) = (vi.estimated_error().unwrap(), vo.estimated_error().unwrap());
        assert!(
            vi.volume - 5.0 * ei <= exact.volume && exact.volume <= vo.volume + 5.0 * eo,
            "{res}: {} ± {ei} <= {} <= {} ± {eo}",
            vi.volume,
            exact.volume,
            vo.volume
        );
        let err = (vi.volume - exact.volume).abs();
        assert!(err < last * 1.2, "{res}: {err} after {last}");
        last = err;
        if res == 128 {
            // The sampler's gradient is with respect to B (the torus) in A's (the sphere's)
            // frame; ours is in the world: rotate it.
            let g = ps.rotation * vi.translation_gradient();
            let rel =
                (g - exact.translation_gradient).length() / exact.translation_gradient.length();
            // Measured: 0.22 %.
            assert!(rel < 0.02, "gradient {g} vs {}", exact.translation_gradient);
        }
    }
    // Measured: 1.1e-3, 4.3e-4, 3.4e-4 of the volume at 32, 64, 128 lines per side (at 128
    // the inscribed sphere's own deficit dominates).
    assert!(last < 2e-3 * exact.volume, "{last} of {}", exact.volume);
}

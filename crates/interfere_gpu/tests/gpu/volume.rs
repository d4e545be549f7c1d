//! GPU uniform intersection volume (Wang, Faure & Pai 2012, §2.2) against the CPU reference
//! `interfere_geometry::volume::uniform_volume` at the same resolution, per line against an
//! independent per-line CPU sweep, and against analytic box–box volumes.
//!
//! Tolerances and why they hold:
//! * **Per line.** A line the kernel does not flag has the CPU's exact hit set, order and
//!   endpoint triangles (see `interfere_gpu::volume`), so its length differs from the CPU's
//!   only by the `f32` depth errors of its endpoints: a few units of `2⁻²³ M` (`M` the size of
//!   the overlap box, since coordinates are local) plus the barycentric error times the
//!   triangle's depth extent, which grows only for triangles seen almost edge-on, i.e. for lines
//!   within a sliver's width of an edge. We require `|Δ| ≤ 2e-5 M` on every unflagged line
//!   farther than `EDGE_EPS · M` from every projected edge of both meshes, and count (and print)
//!   the lines that are nearer.
//! * **Volume.** `V_k = w Σ lengths`; flagged lines are recast exactly, the others differ by the
//!   per-line bound, so `|ΔV| ≤ 2e-5 M · w · (lines crossing the region)` ≤ `2e-5 M · area`,
//!   i.e. a relative error below `2e-5 M / thickness`; we require `1e-5` relative (plus
//!   `1e-9 M³`): observed errors are below `1e-7` (printed).
//! * **Gradients.** The endpoint triangles are the CPU's and the barycentric weights differ by
//!   `f32` rounding (`~1e-7` relative), so per-vertex gradients agree to `1e-4` of the largest
//!   component (observed: below `1e-6`).

use interfere_geometry::bvh::BalancedTree;
use interfere_geometry::glam::{DVec3, Quat, Vec3};
use interfere_geometry::volume::{
    AxisRay, LineCrossing, RayMesh, Sampling, UniformOptions, VolumeError, VolumeResult,
    uniform_volume,
};
use interfere_geometry::{DPose, Pose, Solid, TriMesh, shapes};
use interfere_gpu::testing::gpu_or_skip;
use interfere_gpu::volume::{GpuVolume, GpuVolumeReport, MAX_HITS_PER_RAY};
use interfere_gpu::{GpuContext, GpuError};
use rand::{Rng, SeedableRng};
use std::io::Write;

/// Lines nearer than this (times the overlap box size) to a projected edge are excluded from
/// the per-line comparison and counted.
const EDGE_EPS: f64 = 1e-5;

fn random_pose(rng: &mut rand_chacha::ChaCha8Rng, reach: f32) -> DPose {
    let axis = Vec3::new(
        rng.random_range(-1.0..1.0),
        rng.random_range(-1.0..1.0),
        rng.random_range(-1.0..1.0),
    )
    .normalize_or(Vec3::Z);
    let q = Quat::from_axis_angle(axis, rng.random_range(0.0..std::f32::consts::TAU));
    let t = Vec3::new(
        rng.random_range(-reach..reach),
        rng.random_range(-reach..reach),
        rng.random_range(-reach..reach),
    );
    Pose::new(q, t).to_f64()
}

fn opts(r: u32) -> UniformOptions {
    UniformOptions {
        sampling: Sampling::Resolution(r),
        centre: DVec3::new(0.1, -0.2, 0.3),
        collect_points: true,
        max_rays: 1 << 24,
    }
}

/// Independent per-line CPU oracle: the lines of `Resolution(r)` over the overlap box (CPU
/// order) with their overlap lengths, from exact hits.
fn cpu_lines(a: &Solid, b: &Solid, b_to_a: &DPose, r: u32) -> Vec<(AxisRay, f64)> {
    let ma = RayMesh::new(a, &BalancedTree::build(a), &DPose::IDENTITY).unwrap();
    let mb = RayMesh::new(b, &BalancedTree::build(b), b_to_a).unwrap();
    let lo = ma.bounds()[0].max(mb.bounds()[0]);
    let hi = ma.bounds()[1].min(mb.bounds()[1]);
    let mut out = Vec::new();
    if !lo.cmplt(hi).all() {
        return out;
    }
    for k in 0..3 {
        let (ku, kv) = ((k + 1) % 3, (k + 2) % 3);
        let hu = (hi[ku] - lo[ku]) / f64::from(r);
        let hv = (hi[kv] - lo[kv]) / f64::from(r);
        for i in 0..r {
            for j in 0..r {
                let ray = AxisRay {
                    axis: k,
                    u: lo[ku] + (f64::from(i) + 0.5) * hu,
                    v: lo[kv] + (f64::from(j) + 0.5) * hv,
                };
                let (mut ha, mut hb) = (Vec::<LineCrossing>::new(), Vec::<LineCrossing>::new());
                ma.cast_axis_brute(&ray, &mut ha);
                mb.cast_axis_brute(&ray, &mut hb);
                let mut ev: Vec<(f64, bool, bool)> = ha
                    .iter()
                    .map(|h| (h.t, h.entering, false))
                    .chain(hb.iter().map(|h| (h.t, h.entering, true)))
                    .collect();
                ev.sort_by(|p, q| p.0.total_cmp(&q.0).then(p.1.cmp(&q.1)));
                let (mut wa, mut wb, mut start, mut len) = (0, 0, None, 0.0);
                for (t, enter, on_b) in ev {
                    let s = if enter { 1 } else { -1 };
                    if on_b {
                        wb += s
                    } else {
                        wa += s
                    }
                    let inside = wa > 0 && wb > 0;
                    match (start, inside) {
                        (None, true) => start = Some(t),
                        (Some(t0), false) => {
                            len += t - t0;
                            start = None;
                        }
                        _ => {}
                    }
                }
                out.push((ray, len));
            }
        }
    }
    out
}

/// Distance (in the line's projection plane) from the line to the nearest projected edge of
/// either mesh.
fn edge_distance(a: &[[DVec3; 3]], b: &[[DVec3; 3]], ray: &AxisRay) -> f64 {
    let (ku, kv) = ((ray.axis + 1) % 3, (ray.axis + 2) % 3);
    let mut best = f64::INFINITY;
    for tri in a.iter().chain(b) {
        for e in 0..3 {
            let p = [tri[e][ku], tri[e][kv]];
            let q = [tri[(e + 1) % 3][ku], tri[(e + 1) % 3][kv]];
            let d = [q[0] - p[0], q[1] - p[1]];
            let w = [ray.u - p[0], ray.v - p[1]];
            let len2 = d[0] * d[0] + d[1] * d[1];
            let s = if len2 > 0.0 {
                ((w[0] * d[0] + w[1] * d[1]) / len2).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let dx = w[0] - s * d[0];
            let dy = w[1] - s * d[1];
            best = best.min((dx * dx + dy * dy).sqrt());
        }
    }
    best
}

fn placed(m: &TriMesh, pose: &DPose) -> Vec<[DVec3; 3]> {
    m.triangles()
        .iter()
        .map(|t| t.map(|i| pose.transform_point(m.vertices()[i as usize])))
        .collect()
}

struct Stats {
    lines: usize,
    near_edge: usize,
    near_edge_err: f64,
    flagged: usize,
    max_line_err: f64,
    rel_volume_err: f64,
    rel_grad_err: f64,
}

fn gpu_volume(
    ctx: &GpuContext,
    vol: &mut GpuVolume,
    a: &Solid,
    b: &Solid,
    b_to_a: &DPose,
    o: &UniformOptions,
) -> Result<(VolumeResult, GpuVolumeReport), GpuError> {
    let ga = GpuVolume::upload_mesh(ctx, a)?;
    let gb = GpuVolume::upload_mesh(ctx, b)?;
    vol.compute_with_report(ctx, &ga, &gb, b_to_a, o)
}

fn max_abs(g: &[DVec3]) -> f64 {
    g.iter().fold(0.0, |m, v| m.max(v.abs().max_element()))
}

/// Runs one case through the GPU, the CPU reference and the per-line oracle; asserts the
/// tolerances of the module documentation and returns what was seen.
fn check_case(
    ctx: &GpuContext,
    vol: &mut GpuVolume,
    name: &str,
    a: &Solid,
    b: &Solid,
    b_to_a: &DPose,
    r: u32,
) -> Stats {
    let o = opts(r);
    let cpu = uniform_volume(a, b, b_to_a, &o).expect("cpu volume");
    let (gpu, report) = gpu_volume(ctx, vol, a, b, b_to_a, &o).expect("gpu volume");
    assert_eq!(gpu.ray_count, cpu.ray_count, "{name}: ray count");
    assert_eq!(gpu.pixel_area, cpu.pixel_area, "{name}: pixel areas");
    assert_eq!(gpu.gradient_a.len(), cpu.gradient_a.len());
    assert_eq!(gpu.gradient_b.len(), cpu.gradient_b.len());
    assert_eq!(gpu.points.len(), cpu.points.len(), "{name}: endpoint count");

    let lines = cpu_lines(a, b, b_to_a, r);
    assert_eq!(lines.len(), report.rays.len(), "{name}: line count");
    let size = if report.rays.is_empty() {
        1.0
    } else {
        let ma = RayMesh::new(a, &BalancedTree::build(a), &DPose::IDENTITY).unwrap();
        let mb = RayMesh::new(b, &BalancedTree::build(b), b_to_a).unwrap();
        let lo = ma.bounds()[0].max(mb.bounds()[0]);
        let hi = ma.bounds()[1].min(mb.bounds()[1]);
        (hi - lo).max_element()
    };
    let (pa, pb) = (placed(a, &DPose::IDENTITY), placed(b, b_to_a));
    let mut stats = Stats {
        lines: lines.len(),
        near_edge: 0,
        near_edge_err: 0.0,
        flagged: report.recast,
        max_line_err: 0.0,
        rel_volume_err: 0.0,
        rel_grad_err: 0.0,
    };
    for (idx, ((ray, len), g)) in lines.iter().zip(&report.rays).enumerate() {
        if g.uncertain || g.unbalanced {
            continue; // recast exactly on the CPU
        }
        let err = (f64::from(g.length) - len).abs();
        if edge_distance(&pa, &pb, ray) < EDGE_EPS * size {
            stats.near_edge += 1;
            stats.near_edge_err = stats.near_edge_err.max(err);
            continue;
        }
        stats.max_line_err = stats.max_line_err.max(err);
        assert!(
            err <= 2e-5 * size,
            "{name}: line {idx} {ray:?}: gpu {} cpu {len} (|d| = {err:e}, size {size})",
            g.length
        );
    }
    let dv = (gpu.volume - cpu.volume).abs();
    stats.rel_volume_err = dv / cpu.volume.max(f64::MIN_POSITIVE);
    assert!(
        dv <= 1e-5 * cpu.volume + 1e-9 * size.powi(3),
        "{name}: volume gpu {} cpu {} (rel {:e})",
        gpu.volume,
        cpu.volume,
        stats.rel_volume_err
    );
    for k in 0..3 {
        let d = (gpu.axis_volumes[k] - cpu.axis_volumes[k]).abs();
        assert!(
            d <= 1e-5 * cpu.axis_volumes[k] + 1e-9 * size.powi(3),
            "{name}: axis {k} volume gpu {} cpu {}",
            gpu.axis_volumes[k],
            cpu.axis_volumes[k]
        );
    }
    // The error estimate comes from the same line lengths (the GPU's in f32).
    let (ge, ce) = (
        gpu.estimated_axis_error
            .expect("the GPU estimates its error"),
        cpu.estimated_axis_error
            .expect("the CPU estimates its error"),
    );
    for k in 0..3 {
        assert!(
            (ge[k] - ce[k]).abs() <= 1e-3 * ce[k] + 1e-7 * size.powi(3),
            "{name}: axis {k} error estimate gpu {} cpu {}",
            ge[k],
            ce[k]
        );
    }
    let gscale = max_abs(&cpu.gradient_a)
        .max(max_abs(&cpu.gradient_b))
        .max(1e-300);
    for (which, g, c) in [
        ("A", &gpu.gradient_a, &cpu.gradient_a),
        ("B", &gpu.gradient_b, &cpu.gradient_b),
    ] {
        for (v, (x, y)) in g.iter().zip(c.iter()).enumerate() {
            let d = (*x - *y).abs().max_element();
            stats.rel_grad_err = stats.rel_grad_err.max(d / gscale);
            assert!(
                d <= 1e-4 * gscale,
                "{name}: gradient of {which} vertex {v}: gpu {x} cpu {y}"
            );
        }
    }
    let fscale = gscale * (b.vertices().len() as f64) * (1.0 + size);
    assert!(
        (gpu.force - cpu.force).abs().max_element() <= 1e-4 * fscale,
        "{name}: force gpu {} cpu {}",
        gpu.force,
        cpu.force
    );
    assert!(
        (gpu.torque - cpu.torque).abs().max_element() <= 1e-4 * fscale,
        "{name}: torque gpu {} cpu {}",
        gpu.torque,
        cpu.torque
    );
    // The endpoints are the same surface points, line by line, in the same order.
    for (p, q) in gpu.points.iter().zip(&cpu.points) {
        assert_eq!(
            (p.on_b, p.triangle, p.axis),
            (q.on_b, q.triangle, q.axis),
            "{name}"
        );
        assert!(
            (p.point - q.point).length() <= 2e-5 * size,
            "{name}: {p:?} {q:?}"
        );
    }
    let _ = writeln!(
        std::io::stderr(),
        "gpu volume {name}: lines {}, recast {}, near-edge (skipped) {} (max err {:.1e}), max line err {:.2e}, \
         rel volume err {:.2e}, rel gradient err {:.2e}, V = {:.6}",
        stats.lines,
        stats.flagged,
        stats.near_edge,
        stats.near_edge_err,
        stats.max_line_err,
        stats.rel_volume_err,
        stats.rel_grad_err,
        cpu.volume
    );
    stats
}

#[test]
fn gpu_volume_matches_cpu_on_random_poses() {
    let Some(ctx) = gpu_or_skip("gpu_volume_matches_cpu_on_random_poses") else {
        return;
    };
    let mut vol = GpuVolume::new(&ctx).expect("kernel");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2012);
    let shapes: Vec<(&str, Solid)> = vec![
        ("icosphere", shapes::icosphere(1.0, 2).unwrap()),
        ("box", shapes::cuboid(Vec3::new(0.9, 0.6, 0.4)).unwrap()),
        ("torus", shapes::torus(0.8, 0.3, 24, 12).unwrap()),
        ("bumpy", shapes::bumpy_sphere(0.9, 0.25, 4.0, 2, 5).unwrap()),
    ];
    let (mut lines, mut flagged, mut near) = (0, 0, 0);
    for case in 0..12 {
        let (na, a) = &shapes[case % 4];
        let (nb, b) = &shapes[(case / 4 + case + 1) % 4];
        let pose = random_pose(&mut rng, 0.7);
        let s = check_case(
            &ctx,
            &mut vol,
            &format!("{case}: {na} x {nb}"),
            a,
            b,
            &pose,
            20,
        );
        lines += s.lines;
        flagged += s.flagged;
        near += s.near_edge;
    }
    let _ = writeln!(
        std::io::stderr(),
        "gpu volume random: {lines} lines, {flagged} recast, {near} near an edge"
    );
    assert!(lines > 10_000);
    assert!(flagged * 20 < lines, "{flagged} of {lines} lines recast");
}

#[test]
fn gpu_volume_adversarial_cases() {
    let Some(ctx) = gpu_or_skip("gpu_volume_adversarial_cases") else {
        return;
    };
    let mut vol = GpuVolume::new(&ctx).expect("kernel");
    let unit = shapes::cuboid(Vec3::ONE).unwrap();
    let half = shapes::cuboid(Vec3::splat(0.5)).unwrap();
    let fine = shapes::subdivided_cuboid(Vec3::ONE, 4).unwrap();
    let sphere = shapes::icosphere(1.0, 2).unwrap();
    let small = shapes::icosphere(0.45, 1).unwrap();
    let t = |x: f64, y: f64, z: f64| DPose {
        rotation: interfere_geometry::glam::DMat3::IDENTITY,
        translation: DVec3::new(x, y, z),
    };
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(77);
    // Touching from inside: B's face x = 1 lies in A's face x = 1 (coplanar, both leaving).
    check_case(
        &ctx,
        &mut vol,
        "touch inside",
        &unit,
        &half,
        &t(0.5, 0.0, 0.0),
        16,
    );
    // Coplanar side faces: A and B share the planes y = ±1 and z = ±1.
    check_case(
        &ctx,
        &mut vol,
        "coplanar",
        &unit,
        &fine,
        &t(0.5, 0.0, 0.0),
        16,
    );
    // The same two contacts with both meshes rotated (f32 vertices): the faces are coplanar up
    // to rounding, so depths on A and B differ by rounding and their order is decided by it.
    let q = Quat::from_axis_angle(Vec3::new(0.3, 0.5, 0.8).normalize(), 0.6);
    let rotated = |s: &Solid| Solid::new(s.mesh().transformed(&Pose::from_rotation(q))).unwrap();
    let shift = Pose::from_translation(q * Vec3::new(0.5, 0.0, 0.0)).to_f64();
    let (runit, rhalf, rfine) = (rotated(&unit), rotated(&half), rotated(&fine));
    check_case(
        &ctx,
        &mut vol,
        "rotated touch inside",
        &runit,
        &rhalf,
        &shift,
        16,
    );
    check_case(
        &ctx,
        &mut vol,
        "rotated coplanar",
        &runit,
        &rfine,
        &shift,
        16,
    );
    // Nested: a small sphere inside a large one, at a random rotation.
    let mut p = random_pose(&mut rng, 0.1);
    check_case(&ctx, &mut vol, "nested", &sphere, &small, &p, 20);
    p.translation = DVec3::ZERO;
    check_case(
        &ctx,
        &mut vol,
        "nested outer in inner frame",
        &small,
        &sphere,
        &p,
        20,
    );
    // Lines exactly through shared vertices and edges of A's subdivided faces.
    check_case(
        &ctx,
        &mut vol,
        "lines through vertices",
        &fine,
        &unit,
        &t(0.0, 0.0, 0.0),
        8,
    );
    // Large translation: both meshes near 1e4.
    let far: Solid = Solid::new(
        sphere
            .mesh()
            .transformed(&Pose::from_translation(Vec3::splat(1.0e4))),
    )
    .unwrap();
    let mut p = random_pose(&mut rng, 0.6);
    p.translation += DVec3::splat(1.0e4);
    check_case(&ctx, &mut vol, "translation 1e4", &far, &sphere, &p, 20);

    // Touching from outside (the overlap box is empty) and disjoint: zero and empty.
    for (name, pose) in [
        ("touch outside", t(2.0, 0.5, 0.25)),
        ("disjoint", t(5.0, 1.0, -3.0)),
    ] {
        let (gpu, report) =
            gpu_volume(&ctx, &mut vol, &unit, &sphere, &pose, &opts(16)).expect(name);
        let cpu = uniform_volume(&unit, &sphere, &pose, &opts(16)).unwrap();
        assert_eq!(gpu, cpu, "{name}");
        assert_eq!(gpu.volume, 0.0);
        assert!(report.rays.is_empty());
    }
}

/// The watertight test on the GPU alone: lines through shared vertices and edges of a
/// subdivided box (all edge functions exact in `f32`, so the tie-break decides) cross each face
/// exactly once, and the kernel's raw lengths are the exact ones.
#[test]
fn gpu_volume_tie_break_is_watertight() {
    let Some(ctx) = gpu_or_skip("gpu_volume_tie_break_is_watertight") else {
        return;
    };
    let mut vol = GpuVolume::new(&ctx).expect("kernel");
    let fine = shapes::subdivided_cuboid(Vec3::ONE, 4).unwrap();
    let inner = shapes::cuboid(Vec3::splat(0.75)).unwrap();
    // Overlap box [-0.75, 0.75]^3 at resolution 3: lines at -0.5, 0, 0.5, which are vertex and
    // edge coordinates of `fine` (grid step 0.5).
    let (gpu, report) =
        gpu_volume(&ctx, &mut vol, &fine, &inner, &DPose::IDENTITY, &opts(3)).unwrap();
    assert_eq!(report.rays.len(), 27);
    assert_eq!(report.unbalanced, 0);
    for g in &report.rays {
        assert_eq!(g.hits, 4, "{g:?}"); // two faces of each box
        assert_eq!(g.length, 1.5, "{g:?}");
        assert!(g.uncertain, "exact zeros must be reported as uncertain");
    }
    assert!((gpu.volume - 1.5f64.powi(3)).abs() < 1e-12);
}

/// Axis-aligned boxes: every line over the overlap box crosses both boxes, so the sampled
/// volume is the exact product of the overlaps.
#[test]
fn gpu_volume_box_box_is_analytic() {
    let Some(ctx) = gpu_or_skip("gpu_volume_box_box_is_analytic") else {
        return;
    };
    let mut vol = GpuVolume::new(&ctx).expect("kernel");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    for case in 0..8 {
        let ha = Vec3::new(
            rng.random_range(0.3..1.5),
            rng.random_range(0.3..1.5),
            rng.random_range(0.3..1.5),
        );
        let hb = Vec3::new(
            rng.random_range(0.3..1.5),
            rng.random_range(0.3..1.5),
            rng.random_range(0.3..1.5),
        );
        let a = shapes::cuboid(ha).unwrap();
        let b = shapes::cuboid(hb).unwrap();
        let off = DVec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        );
        let pose = DPose {
            rotation: interfere_geometry::glam::DMat3::IDENTITY,
            translation: off,
        };
        let (ha, hb) = (ha.as_dvec3(), hb.as_dvec3());
        let overlap = ((ha).min(off + hb) - (-ha).max(off - hb)).max(DVec3::ZERO);
        let exact = overlap.x * overlap.y * overlap.z;
        let (gpu, _) = gpu_volume(&ctx, &mut vol, &a, &b, &pose, &opts(7)).unwrap();
        assert!(
            (gpu.volume - exact).abs() <= 1e-5 * exact,
            "case {case}: gpu {} exact {exact}",
            gpu.volume
        );
        for k in 0..3 {
            assert!((gpu.axis_volumes[k] - exact).abs() <= 1e-5 * exact);
        }
        // dV/dx of B's translation is -(overlap area across x) where B's face x = off + hb is
        // inside A, etc.: compare with the CPU reference.
        let cpu = uniform_volume(&a, &b, &pose, &opts(7)).unwrap();
        assert!((gpu.force - cpu.force).abs().max_element() <= 1e-5 * exact.max(1e-3));
    }
}

#[test]
fn gpu_volume_refuses_bad_input_and_overflow() {
    let Some(ctx) = gpu_or_skip("gpu_volume_refuses_bad_input_and_overflow") else {
        return;
    };
    let mut vol = GpuVolume::new(&ctx).expect("kernel");
    let a = shapes::icosphere(1.0, 1).unwrap();
    let b = shapes::cuboid(Vec3::splat(0.5)).unwrap();
    let ga = GpuVolume::upload_mesh(&ctx, &a).unwrap();
    let gb = GpuVolume::upload_mesh(&ctx, &b).unwrap();
    let mut o = opts(0);
    assert!(matches!(
        vol.compute(&ctx, &ga, &gb, &DPose::IDENTITY, &o),
        Err(GpuError::Volume(VolumeError::ZeroResolution))
    ));
    o.sampling = Sampling::Spacing(-1.0);
    assert!(matches!(
        vol.compute(&ctx, &ga, &gb, &DPose::IDENTITY, &o),
        Err(GpuError::Volume(VolumeError::InvalidSpacing(_)))
    ));
    o = opts(64);
    o.max_rays = 1000;
    assert!(matches!(
        vol.compute(&ctx, &ga, &gb, &DPose::IDENTITY, &o),
        Err(GpuError::Volume(VolumeError::TooManyRays { .. }))
    ));
    // The two-pass fitted sampling is the CPU sampler's only: refused with the reason.
    o = opts(8);
    o.sampling = Sampling::Fitted {
        coarse: 4,
        resolution: 8,
    };
    let err = vol.compute(&ctx, &ga, &gb, &DPose::IDENTITY, &o).err();
    assert!(
        matches!(&err, Some(GpuError::InvalidInput { reason, .. }) if reason.contains("Fitted")),
        "{err:?}"
    );
    let mut bad = DPose::IDENTITY;
    bad.translation.x = f64::NAN;
    assert!(matches!(
        vol.compute(&ctx, &ga, &gb, &bad, &opts(8)),
        Err(GpuError::Volume(VolumeError::NonFinitePose))
    ));
    // Spacing sampling works too and equals the CPU.
    o = opts(8);
    o.sampling = Sampling::Spacing(0.07);
    let gpu = vol.compute(&ctx, &ga, &gb, &DPose::IDENTITY, &o).unwrap();
    let cpu = uniform_volume(&a, &b, &DPose::IDENTITY, &o).unwrap();
    assert_eq!(gpu.ray_count, cpu.ray_count);
    assert!((gpu.volume - cpu.volume).abs() <= 1e-4 * cpu.volume);

    // 40 nested shells: a line through the centre crosses 80 > MAX_HITS_PER_RAY triangles.
    let shells: Vec<TriMesh> = (0..40)
        .map(|i| {
            shapes::icosphere(1.0 + 0.02 * i as f32, 1)
                .unwrap()
                .into_mesh()
        })
        .collect();
    let refs: Vec<&TriMesh> = shells.iter().collect();
    let onion = Solid::new(TriMesh::merge(&refs).unwrap()).unwrap();
    let gonion = GpuVolume::upload_mesh(&ctx, &onion).unwrap();
    let err = vol
        .compute(&ctx, &gonion, &gb, &DPose::IDENTITY, &opts(4))
        .err();
    assert!(
        matches!(err, Some(GpuError::VolumeHitOverflow { cap, .. }) if cap == MAX_HITS_PER_RAY),
        "{err:?}"
    );
    // The buffers still work after an error.
    let gpu = vol
        .compute(&ctx, &ga, &gb, &DPose::IDENTITY, &opts(8))
        .unwrap();
    let cpu = uniform_volume(&a, &b, &DPose::IDENTITY, &opts(8)).unwrap();
    assert!((gpu.volume - cpu.volume).abs() <= 1e-4 * cpu.volume);
}

/// bunny25k against a rotated, shifted copy at resolution 32/64/128: GPU end to end vs the CPU
/// uniform volume (trees prebuilt on both sides). Run with
/// `cargo test -p interfere_gpu --release --locked --test gpu gpu_volume_bunny_timing -- --ignored --nocapture`.
#[test]
#[ignore]
fn gpu_volume_bunny_timing() {
    let Some(ctx) = gpu_or_skip("gpu_volume_bunny_timing") else {
        return;
    };
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/meshes/bunny25k.obj");
    let path = if path.exists() {
        path
    } else {
        std::path::PathBuf::from("/work/shared/meshes/bunny25k.obj")
    };
    let mesh = interfere_geometry::io::load_mesh(&path, &Default::default()).expect("bunny25k");
    let bunny = Solid::new(mesh).expect("closed bunny");
    let size = bunny.aabb().size().max_element();
    let pose = Pose::new(
        Quat::from_axis_angle(Vec3::new(0.3, 1.0, 0.2).normalize(), 0.7),
        Vec3::new(0.15, 0.05, -0.1) * size,
    )
    .to_f64();
    let mut vol = GpuVolume::new(&ctx).expect("kernel");
    let ga = GpuVolume::upload_mesh(&ctx, &bunny).unwrap();
    let cpu_vol = interfere_geometry::volume::UniformVolume::new(&bunny, &bunny);
    println!("adapter: {}", ctx.adapter);
    println!(
        "| R | lines | CPU ms | GPU ms (end to end) | prepare | kernel+readback | reduce | \
         recast | records | rel dV |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for r in [32u32, 64, 128] {
        let mut o = opts(r);
        o.collect_points = false;
        // Warm up (pipeline compilation, buffer growth).
        vol.compute(&ctx, &ga, &ga, &pose, &o).unwrap();
        let reps = 3;
        let clock = std::time::Instant::now();
        let mut cpu = None;
        for _ in 0..reps {
            cpu = Some(cpu_vol.compute(&pose, &o).unwrap());
        }
        let cpu_ms = clock.elapsed().as_secs_f64() * 1e3 / reps as f64;
        let clock = std::time::Instant::now();
        let mut gpu = None;
        for _ in 0..reps {
            gpu = Some(vol.compute_with_report(&ctx, &ga, &ga, &pose, &o).unwrap());
        }
        let gpu_ms = clock.elapsed().as_secs_f64() * 1e3 / reps as f64;
        let (cpu, (gpu, rep)) = (cpu.unwrap(), gpu.unwrap());
        println!(
            "| {r} | {} | {cpu_ms:.1} | {gpu_ms:.1} | {:.1} | {:.1} | {:.1} | {} | {} | {:.1e} |",
            gpu.ray_count,
            rep.prepare_ms,
            rep.gpu_ms,
            rep.reduce_ms,
            rep.recast,
            rep.records,
            (gpu.volume - cpu.volume).abs() / cpu.volume
        );
        assert!((gpu.volume - cpu.volume).abs() <= 1e-4 * cpu.volume);
    }
}

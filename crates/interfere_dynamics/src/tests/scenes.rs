//! Physics claims of the integrator, the solver and the step, with measured tolerances (see each
//! test). Many drive the integrator (`crate::solver::integrator`) with analytic contact sources (planes, spheres).

use crate::contact::ContactSource;
use crate::solver::integrator::Integrator;
use crate::*;
use interfere_geometry::glam::{DQuat, DVec3, Vec3};
use interfere_geometry::shapes::cuboid;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::f64::consts::FRAC_PI_2;
use std::sync::Arc;

#[path = "scenes/adaptive_contacts.rs"]
mod adaptive_contacts;
#[path = "scenes/box_pile.rs"]
mod box_pile;
#[path = "scenes/soak.rs"]
mod soak;
#[path = "scenes/solid_contact.rs"]
mod solid_contact;

const G: f64 = 9.81;

fn world(dt: f64, substeps: u32, gravity: DVec3) -> Integrator {
    Integrator::new(StepSettings {
        gravity,
        dt,
        substeps,
        solver: SolverSettings::default(),
    })
    .unwrap()
}

fn ground(w: &mut Integrator, mat: Material) -> BodyId {
    w.add_body(
        Body::fixed(DVec3::ZERO, DQuat::IDENTITY)
            .unwrap()
            .with_material(mat),
    )
}

fn add_box(
    w: &mut Integrator,
    src: &mut HalfSpaceSource,
    half: DVec3,
    at: DVec3,
    q: DQuat,
    mat: Material,
) -> BodyId {
    let solid = cuboid(half.as_vec3()).unwrap();
    let props = mass_properties(&solid, 500.0).unwrap();
    let id = w.add_body(Body::dynamic(&props, at, q).unwrap().with_material(mat));
    src.add_mesh(id, &solid);
    id
}

fn rotation_angle(a: DQuat, b: DQuat) -> f64 {
    (a.inverse() * b).normalize().to_axis_angle().1.abs()
}

#[test]
fn box_rests_on_plane_for_ten_seconds() {
    let mut w = world(1.0 / 60.0, 4, DVec3::new(0.0, 0.0, -G));
    let g = ground(&mut w, Material::new(0.6, 0.0));
    let mut src = HalfSpaceSource::new(0.02);
    src.add_plane(Plane::new(g, DVec3::Z, DVec3::ZERO).unwrap());
    let half = DVec3::new(0.5, 0.3, 0.2);
    let b = add_box(
        &mut w,
        &mut src,
        half,
        DVec3::new(1.0, -2.0, 0.2),
        DQuat::from_rotation_z(0.4),
        Material::new(0.6, 0.0),
    );
    let (p0, q0) = (w.bodies()[b].position, w.bodies()[b].orientation);
    let mut max_drift: f64 = 0.0;
    for _ in 0..600 {
        w.step(&mut src);
        max_drift = max_drift.max((w.bodies()[b].position - p0).length());
    }
    let body = &w.bodies()[b];
    eprintln!(
        "resting box: max drift {max_drift:.3e} m, rotation {:.3e} rad, speed {:.3e}",
        rotation_angle(q0, body.orientation),
        body.linear_velocity.length()
    );
    // Measured 8.8e-11 m (docs/algorithms.md quotes it at this guard, 1e-9 m).
    assert!(max_drift < 1e-9);
    assert!(rotation_angle(q0, body.orientation) < 1e-9);
    assert!(w.last_contacts().points.len() == 4);
}

fn stack(n: usize) -> (Integrator, HalfSpaceSource, Vec<BodyId>) {
    let mut w = world(1.0 / 60.0, 4, DVec3::new(0.0, 0.0, -G));
    let g = ground(&mut w, Material::new(0.6, 0.0));
    let mut src = HalfSpaceSource::new(0.02);
    src.add_plane(Plane::new(g, DVec3::Z, DVec3::ZERO).unwrap());
    let half = DVec3::new(0.5, 0.5, 0.25);
    let mut ids = Vec::new();
    for i in 0..n {
        let id = add_box(
            &mut w,
            &mut src,
            half,
            DVec3::new(0.0, 0.0, half.z * (2 * i + 1) as f64),
            DQuat::IDENTITY,
            Material::new(0.6, 0.0),
        );
        ids.push(id);
    }
    // Each box's top face is a plane that supports only the box above it (infinite planes: a
    // stand-in for box-box contact while the boxes stay aligned).
    for i in 0..n - 1 {
        let plane = Plane::new(ids[i], DVec3::Z, DVec3::new(0.0, 0.0, half.z)).unwrap();
        src.add_plane_for(plane, &[ids[i + 1]]);
    }
    (w, src, ids)
}

#[test]
fn stack_of_five_boxes_stands_ten_seconds() {
    let (mut w, mut src, ids) = stack(5);
    let start: Vec<DVec3> = ids.iter().map(|&i| w.bodies()[i].position).collect();
    for _ in 0..600 {
        w.step(&mut src);
    }
    let mut worst: f64 = 0.0;
    for (k, &i) in ids.iter().enumerate() {
        let b = &w.bodies()[i];
        worst = worst.max((b.position - start[k]).length());
        assert!(rotation_angle(DQuat::IDENTITY, b.orientation) < 1e-3);
    }
    eprintln!("stack of 5: worst drift {worst:.3e} m");
    assert!(worst < 1e-3);
}

#[test]
fn sliding_box_stops_after_v2_over_2_mu_g() {
    for (v, mu) in [(3.0, 0.5), (2.0, 0.2)] {
        let mut w = world(1.0 / 60.0, 4, DVec3::new(0.0, 0.0, -G));
        let g = ground(&mut w, Material::new(mu, 0.0));
        let mut src = HalfSpaceSource::new(0.02);
        src.add_plane(Plane::new(g, DVec3::Z, DVec3::ZERO).unwrap());
        // A flat box: low, so friction at its base barely tips it.
        let b = add_box(
            &mut w,
            &mut src,
            DVec3::new(0.5, 0.5, 0.1),
            DVec3::new(0.0, 0.0, 0.1),
            DQuat::IDENTITY,
            Material::new(mu, 0.0),
        );
        w.body_mut(b).unwrap().linear_velocity = DVec3::new(v, 0.0, 0.0);
        let x0 = w.bodies()[b].position.x;
        let mut steps = 0;
        while w.bodies()[b].linear_velocity.length() > 1e-6 && steps < 1200 {
            w.step(&mut src);
            steps += 1;
        }
        for _ in 0..30 {
            w.step(&mut src);
        }
        let d = w.bodies()[b].position.x - x0;
        let expected = v * v / (2.0 * mu * G);
        eprintln!(
            "sliding v={v} mu={mu}: {d:.4} m vs {expected:.4} m ({:+.2}%)",
            100.0 * (d / expected - 1.0)
        );
        // Measured −0.68 % and −0.41 %; docs/algorithms.md quotes "within 1 %".
        assert!((d / expected - 1.0).abs() < 0.01);
    }
}

#[test]
fn static_friction_holds_on_incline_and_dynamic_friction_slides() {
    // tan θ = 0.4 between μ_d = 0.3 and μ_s = 0.5.
    let theta = 0.4f64.atan();
    let n = DVec3::new(0.0, theta.sin(), theta.cos());
    let down_slope = DVec3::new(0.0, theta.cos(), -theta.sin());
    let mat = Material {
        static_friction: 0.5,
        dynamic_friction: 0.3,
        restitution: 0.0,
    };
    for push in [0.0, 1.0] {
        let mut w = world(1.0 / 60.0, 4, DVec3::new(0.0, 0.0, -G));
        let g = ground(&mut w, mat);
        let mut src = HalfSpaceSource::new(0.02);
        src.add_plane(Plane::new(g, n, DVec3::ZERO).unwrap());
        let q = DQuat::from_rotation_arc(DVec3::Z, n);
        let half = DVec3::new(0.5, 0.5, 0.1);
        let b = add_box(&mut w, &mut src, half, n * half.z, q, mat);
        w.body_mut(b).unwrap().linear_velocity = down_slope * push;
        let p0 = w.bodies()[b].position;
        for _ in 0..120 {
            w.step(&mut src);
        }
        let moved = (w.bodies()[b].position - p0).dot(down_slope);
        if push == 0.0 {
            eprintln!("incline at rest: moved {moved:.3e} m in 2 s");
            assert!(moved.abs() < 1e-3);
        } else {
            // a = g (sin θ − μ_d cos θ); s = v t + a t²/2.
            let a = G * (theta.sin() - 0.3 * theta.cos());
            let expected = push * 2.0 + 0.5 * a * 4.0;
            eprintln!("incline pushed: moved {moved:.4} m vs {expected:.4} m");
            assert!((moved / expected - 1.0).abs() < 0.05);
        }
    }
}

#[test]
fn bouncing_sphere_rebounds_follow_restitution() {
    for e in [0.5, 0.8] {
        let mut w = world(1.0 / 60.0, 8, DVec3::new(0.0, 0.0, -G));
        let g = ground(&mut w, Material::new(0.0, e));
        let r = 0.1;
        let props = MassProperties::sphere(r, 1000.0).unwrap();
        let h0 = 1.0;
        let s = w.add_body(
            Body::dynamic(&props, DVec3::new(0.0, 0.0, h0 + r), DQuat::IDENTITY)
                .unwrap()
                .with_material(Material::new(0.0, e)),
        );
        let mut src = SphereSource::new(0.01);
        src.add_plane(Plane::new(g, DVec3::Z, DVec3::ZERO).unwrap());
        assert!(src.add_sphere(s, r));
        let mut apexes = Vec::new();
        let mut prev_vz = 0.0;
        for _ in 0..400 {
            w.step(&mut src);
            let b = &w.bodies()[s];
            if prev_vz > 0.0 && b.linear_velocity.z <= 0.0 {
                apexes.push(b.position.z - r);
            }
            prev_vz = b.linear_velocity.z;
        }
        eprintln!("e={e}: apexes {apexes:?}");
        assert!(apexes.len() >= 3);
        for (k, &a) in apexes.iter().take(3).enumerate() {
            let expected = h0 * e.powi(2 * (k as i32 + 1));
            // Measured at most 3.2 % (third bounce at e = 0.8); docs/algorithms.md quotes 3.5 %.
            assert!(
                (a / expected - 1.0).abs() < 0.035,
                "bounce {k}: {a} vs {expected}"
            );
        }
    }
}

fn elastic_scene(gravity: DVec3, seed: u64) -> (Integrator, SphereSource) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut w = world(1.0 / 60.0, 4, gravity);
    let mat = Material::new(0.0, 1.0);
    let g = ground(&mut w, mat);
    let mut src = SphereSource::new(0.01);
    // A closed box of planes [-2, 2]³ facing inward.
    for axis in [DVec3::X, DVec3::Y, DVec3::Z] {
        src.add_plane(Plane::new(g, axis, -axis * 2.0).unwrap());
        src.add_plane(Plane::new(g, -axis, axis * 2.0).unwrap());
    }
    for i in 0..8 {
        let r = 0.3;
        let props = MassProperties::sphere(r, rng.random_range(500.0..2000.0)).unwrap();
        let p = DVec3::new(
            -1.2 + 0.8 * (i % 4) as f64,
            if i < 4 { -0.6 } else { 0.6 },
            rng.random_range(-1.0..1.0),
        );
        let v = DVec3::new(
            rng.random_range(-4.0..4.0),
            rng.random_range(-4.0..4.0),
            rng.random_range(-4.0..4.0),
        );
        let id = w.add_body(
            Body::dynamic(&props, p, DQuat::IDENTITY)
                .unwrap()
                .with_material(mat)
                .with_velocity(v, DVec3::ZERO),
        );
        src.add_sphere(id, r);
    }
    (w, src)
}

#[test]
fn frictionless_elastic_scene_never_gains_energy() {
    for (gravity, seed) in [(DVec3::ZERO, 1), (DVec3::new(0.0, 0.0, -G), 2)] {
        let (mut w, mut src) = elastic_scene(gravity, seed);
        let e0 = w.kinetic_energy() + w.potential_energy();
        let mut max_rel: f64 = f64::NEG_INFINITY;
        let mut contacts = 0;
        for _ in 0..600 {
            w.step(&mut src);
            contacts += w.last_contacts().points.len();
            let e = w.kinetic_energy() + w.potential_energy();
            max_rel = max_rel.max((e - e0) / e0.abs());
        }
        let e_end = w.kinetic_energy() + w.potential_energy();
        eprintln!(
            "elastic g={:?}: max relative gain {max_rel:.3e}, end {:.4} vs {:.4}, contacts seen {contacts}",
            gravity.z, e_end, e0
        );
        assert!(contacts > 50, "the scene must actually collide");
        assert!(max_rel <= 1e-9, "energy gained: {max_rel}");
        // Elastic and frictionless: without gravity only slow (< restitution threshold) and
        // simultaneous impacts lose energy (measured 0.5 %); with gravity semi-implicit Euler
        // itself dissipates ½ m g² h² per substep (measured 13.5 % over 10 s).
        let allowed_loss = if gravity == DVec3::ZERO { 0.01 } else { 0.2 };
        assert!(e_end > (1.0 - allowed_loss) * e0);
    }
}

fn tumbling_boxes(seed: u64) -> (Integrator, HalfSpaceSource) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut w = world(1.0 / 60.0, 2, DVec3::new(0.0, 0.0, -G));
    let g = ground(&mut w, Material::new(0.5, 0.3));
    let mut src = HalfSpaceSource::new(0.02);
    src.add_plane(Plane::new(g, DVec3::Z, DVec3::ZERO).unwrap());
    for i in 0..6 {
        let axis = DVec3::new(rng.random(), rng.random(), rng.random()).normalize_or(DVec3::Z);
        let id = add_box(
            &mut w,
            &mut src,
            DVec3::new(0.3, 0.2, 0.1),
            DVec3::new(i as f64, 0.0, 1.0 + rng.random::<f64>()),
            DQuat::from_axis_angle(axis, rng.random_range(0.0..6.0)),
            Material::new(0.5, 0.3),
        );
        w.body_mut(id).unwrap().angular_velocity =
            DVec3::new(rng.random(), rng.random(), rng.random()) * 5.0;
    }
    (w, src)
}

#[test]
fn determinism_bit_identical() {
    let run = || {
        let (mut w, mut src) = tumbling_boxes(11);
        for _ in 0..240 {
            w.step(&mut src);
        }
        w.state_bits()
    };
    let a = run();
    let b = run();
    assert_eq!(a, b);
    // The scene is not trivial: the boxes moved and came to touch the ground.
    let (w0, _) = tumbling_boxes(11);
    assert_ne!(a, w0.state_bits());
}

/// Counts the volume contacts its inner source produces, over all substeps.
struct Counting<S> {
    inner: S,
    volumes: usize,
}

impl<S: ContactSource> ContactSource for Counting<S> {
    fn contacts(&mut self, bodies: &[Body], out: &mut Contacts) {
        let before = out.volumes.len();
        self.inner.contacts(bodies, out);
        self.volumes += out.volumes.len() - before;
    }
}

#[test]
fn box_rests_on_volume_contact() {
    let mut w = world(1.0 / 60.0, 4, DVec3::new(0.0, 0.0, -G));
    let g = ground(&mut w, Material::new(0.6, 0.0));
    let solid = cuboid(Vec3::new(0.5, 0.4, 0.3)).unwrap();
    let props = mass_properties(&solid, 500.0).unwrap();
    let b = w.add_body(
        Body::dynamic(&props, DVec3::new(0.0, 0.0, 0.35), DQuat::IDENTITY)
            .unwrap()
            .with_material(Material::new(0.6, 0.0)),
    );
    let mut inner = HalfSpaceVolumeSource::new();
    inner.add_plane(Plane::new(g, DVec3::Z, DVec3::ZERO).unwrap());
    inner.add_mesh(b, &solid);
    let mut src = Counting { inner, volumes: 0 };
    let mut zs = Vec::new();
    for _ in 0..600 {
        w.step(&mut src);
        zs.push(w.bodies()[b].position.z);
    }
    let volume_contacts = src.volumes;
    let body = &w.bodies()[b];
    // Settled: the bottom at z ≈ −slop (1e-4 m of overlap is left so the contact persists),
    // steady, no drift, no rotation.
    let last_second = &zs[540..];
    let (lo, hi) = last_second
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &z| {
            (l.min(z), h.max(z))
        });
    let drift = body.position.truncate().length();
    let tilt = rotation_angle(DQuat::IDENTITY, body.orientation);
    eprintln!(
        "volume contact: final z {:.6}, last-second range {:.2e}, horizontal drift {drift:.2e} m, rotation {tilt:.2e} rad",
        body.position.z,
        hi - lo
    );
    assert!((body.position.z - 0.3).abs() < 1e-3);
    assert!(hi - lo < 1e-5);
    assert!(drift < 1e-4);
    assert!(tilt < 1e-4);
    // What holds the box is the volume constraint (there is no other source): four quadrant
    // parts per substep.
    assert!(volume_contacts >= 4 * 4 * 500, "{volume_contacts}");
}

#[test]
fn tilted_box_dropped_on_volume_contact_settles_on_a_face() {
    let mut w = world(1.0 / 60.0, 4, DVec3::new(0.0, 0.0, -G));
    let g = ground(&mut w, Material::new(0.6, 0.0));
    let half = Vec3::new(0.5, 0.4, 0.3);
    let solid = cuboid(half).unwrap();
    let props = mass_properties(&solid, 500.0).unwrap();
    let q0 = DQuat::from_rotation_x(0.3) * DQuat::from_rotation_y(0.2);
    let b = w.add_body(
        Body::dynamic(&props, DVec3::new(0.0, 0.0, 0.8), q0)
            .unwrap()
            .with_material(Material::new(0.6, 0.0)),
    );
    let mut src = HalfSpaceVolumeSource::new();
    src.add_plane(Plane::new(g, DVec3::Z, DVec3::ZERO).unwrap());
    src.add_mesh(b, &solid);
    for _ in 0..300 {
        w.step(&mut src);
    }
    let body = &w.bodies()[b];
    // Resting on some face: one body axis is vertical and the centre sits at that half extent.
    let r = interfere_geometry::glam::DMat3::from_quat(body.orientation);
    let (k, up) = (0..3)
        .map(|k| (k, r.col(k).z.abs()))
        .fold((0, 0.0), |a, x| if x.1 > a.1 { x } else { a });
    let expected_z = half.as_dvec3()[k];
    eprintln!(
        "tilted drop: axis {k} up ({up:.6}), z {:.5} vs {expected_z}, speed {:.2e}, spin {:.2e}",
        body.position.z,
        body.linear_velocity.length(),
        body.angular_velocity.length()
    );
    assert!(up > 1.0 - 1e-4);
    assert!((body.position.z - expected_z).abs() < 1e-3);
    assert!(body.linear_velocity.length() < 1e-3 && body.angular_velocity.length() < 1e-3);
}

// ---- Mesh–mesh volume contacts (the Simulation: broad phase, narrow phase, volume stage) ----
//
// These scenes run the one step the plugin, scene files and the CLI share: contacts are found
// once per fixed step (at the step's start state) and advanced to each substep by their gradient
// (`interfere_dynamics::latent`). Where a test counted volume contacts per substep before, it now
// counts them per step (see each test).

fn world_settings(dt: f64, substeps: u32, gravity: DVec3) -> StepSettings {
    StepSettings {
        gravity,
        dt,
        substeps,
        solver: SolverSettings::default(),
    }
}

/// A simulation that never sleeps (as the core `Integrator` these tests first ran on), computing
/// mesh–mesh volumes with `volume`.
fn simulation(world: StepSettings, volume: VolumeMethod) -> Simulation {
    Simulation::new(SimulationSettings {
        world,
        contact: ContactSettings {
            volume,
            ..ContactSettings::default()
        },
        sleep: SleepSettings::NEVER,
    })
    .unwrap()
}

fn uniform(spacing: MeshSpacing) -> VolumeMethod {
    VolumeMethod::Uniform { spacing }
}

fn shape(solid: interfere_geometry::Solid) -> Arc<MeshShape> {
    Arc::new(MeshShape::new(solid).unwrap())
}

/// A static mesh body.
fn add_fixed(
    sim: &mut Simulation,
    solid: interfere_geometry::Solid,
    at: DVec3,
    q: DQuat,
    mat: Material,
) -> BodyHandle {
    let body = Body::fixed(at, q).unwrap().with_material(mat);
    sim.insert(body, Some(BodyShape::mesh(shape(solid))))
        .unwrap()
}

/// A dynamic mesh body (its mesh frame at `at`, turned by `q`).
fn add_dynamic(
    sim: &mut Simulation,
    solid: interfere_geometry::Solid,
    density: f64,
    at: DVec3,
    q: DQuat,
    mat: Material,
) -> BodyHandle {
    let s = shape(solid);
    let body = Body::dynamic(&s.mass_at(density), at, q)
        .unwrap()
        .with_material(mat);
    sim.insert(body, Some(BodyShape::mesh(s))).unwrap()
}

/// A static body at the origin carrying the half-space `z < 0`.
fn add_ground(sim: &mut Simulation, mat: Material) -> BodyHandle {
    let body = Body::fixed(DVec3::ZERO, DQuat::IDENTITY)
        .unwrap()
        .with_material(mat);
    let half = HalfSpace::new(DVec3::Z, DVec3::ZERO).unwrap();
    sim.insert(body, Some(BodyShape::half_space(half))).unwrap()
}

/// The contact of pair `(a, b)`, `a < b`, as the simulation's CPU contact stage computes it for
/// the body states `bodies` (the exact narrow phase, then the volume stage); `None` when the pair
/// does not interfere.
fn contact_at(sim: &Simulation, bodies: &[Body], a: BodyId, b: BodyId) -> Option<PairContact> {
    let input = StageInput {
        bodies,
        ..sim.stage_input(&[])
    };
    let pair = exact_pair(&input, a, b, input.needs_all_triangle_pairs())?;
    Some(pair_contact(&input, pair))
}

/// The volume contacts the last step gave the solver for the interfering pairs that `keep`
/// selects (speculative contacts of separated pairs, whose volume is negative, are not counted:
/// the count is of contacts with overlap, as the former per-substep counts were).
fn volume_parts(sim: &Simulation, keep: impl Fn(&PairContact) -> bool) -> usize {
    sim.pair_contacts()
        .iter()
        .enumerate()
        .filter(|&(k, p)| sim.pair_exerts(k) && keep(p))
        .map(|(_, p)| p.parts.len())
        .sum()
}

/// Oracle: the contact's summed volume gradient against central finite differences of the
/// summed volume of its parts, translating and rotating body b (a sphere and a tilted box pressed
/// into a static box). Component `k` of the gradient is exact for the axis-`k` estimate `V_k`
/// (Eq. 2); the other axes' estimates converge to the same derivative only as O(h) (measured on
/// case 2, the sphere over A's edge: 5.0% off |∂V/∂x| at h = 0.02 = r/20, 1.6% at h = 0.01),
/// hence the fine lattice here. The contact is the one the simulation's step computes (checked).
#[test]
fn mesh_volume_gradient_matches_finite_differences() {
    use interfere_geometry::shapes::icosphere;
    let a_solid = cuboid(Vec3::new(1.0, 1.0, 0.5)).unwrap();
    let cases = [
        (
            icosphere(0.5, 2).unwrap(),
            DVec3::new(0.3, -0.2, 0.5 + 0.5 - 0.15),
            DQuat::from_rotation_z(0.3),
        ),
        (
            cuboid(Vec3::new(0.4, 0.3, 0.2)).unwrap(),
            DVec3::new(-0.2, 0.1, 0.5 + 0.1),
            DQuat::from_rotation_x(0.4) * DQuat::from_rotation_y(-0.3),
        ),
        // Over A's edge: the overlap touches two faces of A.
        (
            icosphere(0.4, 2).unwrap(),
            DVec3::new(0.95, 0.2, 0.4),
            DQuat::IDENTITY,
        ),
    ];
    let mat = Material::new(0.6, 0.0);
    let mut worst: f64 = 0.0;
    for (ci, (b_solid, at, q)) in cases.iter().enumerate() {
        let mut sim = simulation(
            world_settings(1.0 / 60.0, 4, DVec3::new(0.0, 0.0, -G)),
            uniform(MeshSpacing::Absolute(0.01)),
        );
        let a = add_fixed(&mut sim, a_solid.clone(), DVec3::ZERO, DQuat::IDENTITY, mat);
        let b = add_dynamic(&mut sim, b_solid.clone(), 500.0, *at, *q, mat);
        let (a, b) = (a.id(), b.id());
        let bodies = sim.bodies().to_vec();
        let pair = contact_at(&sim, &bodies, a, b).expect("the pair interferes");
        let vols = &pair.parts;
        assert!((1..=4).contains(&vols.len()), "{}", vols.len());
        let (v, lin, ang, c) = (pair.volume, pair.linear, pair.angular, pair.point);
        // The parts the solver gets; their sums are the totals.
        let vs: f64 = vols.iter().map(|x| x.volume).sum();
        let ls: DVec3 = vols.iter().map(|x| x.linear).sum();
        let as_: DVec3 = vols
            .iter()
            .map(|x| x.angular + (x.point - c).cross(x.linear))
            .sum();
        assert!((vs - v).abs() < 1e-12 * v, "{vs} vs {v}");
        assert!((ls - lin).length() < 1e-12 * lin.length(), "{ls} vs {lin}");
        assert!(
            (as_ - ang).length() < 1e-9 * (1.0 + ang.length()),
            "{as_} vs {ang}"
        );
        let total_v = |bodies: &[Body]| -> f64 {
            contact_at(&sim, bodies, a, b).map_or(0.0, |p| p.parts.iter().map(|x| x.volume).sum())
        };
        let eps = 1e-3;
        let scale = lin.length();
        for k in 0..3 {
            let d = DVec3::AXES[k] * eps;
            let mut bp = bodies.clone();
            bp[b].position += d;
            let mut bm = bodies.clone();
            bm[b].position -= d;
            let fd = (total_v(&bp) - total_v(&bm)) / (2.0 * eps);
            let err = (fd - lin[k]).abs() / scale;
            eprintln!(
                "mesh volume case {ci} lin {k}: fd {fd:.5e} vs {:.5e} (rel {err:.2e})",
                lin[k]
            );
            worst = worst.max(err);
            assert!(err < 0.03, "case {ci} lin {k}: {fd} vs {}", lin[k]);
            // Rotation of b about c by ±eps around axis k.
            let rot = |s: f64| {
                let r = DQuat::from_scaled_axis(DVec3::AXES[k] * s * eps);
                let mut bs = bodies.clone();
                bs[b].position = c + r * (bs[b].position - c);
                bs[b].orientation = (r * bs[b].orientation).normalize();
                bs
            };
            let fd = (total_v(&rot(1.0)) - total_v(&rot(-1.0))) / (2.0 * eps);
            // Relative to |∂V/∂x| times the contact's size (a lever arm of 0.3 m).
            let err = (fd - ang[k]).abs() / (0.3 * scale);
            eprintln!(
                "mesh volume case {ci} ang {k}: fd {fd:.5e} vs {:.5e} (rel {err:.2e})",
                ang[k]
            );
            worst = worst.max(err);
            assert!(err < 0.03, "case {ci} ang {k}: {fd} vs {}", ang[k]);
        }
        // The step computes the same contact at its start state (what the solver got).
        sim.step();
        assert_eq!(
            sim.pair_contacts(),
            std::slice::from_ref(&pair),
            "case {ci}"
        );
    }
    eprintln!("mesh volume gradient: worst relative error {worst:.2e}");
}

#[test]
fn box_rests_on_static_box_via_mesh_volume() {
    let mat = Material::new(0.6, 0.0);
    let mut sim = simulation(
        world_settings(1.0 / 60.0, 4, DVec3::new(0.0, 0.0, -G)),
        uniform(MeshSpacing::default()),
    );
    add_fixed(
        &mut sim,
        cuboid(Vec3::new(2.0, 2.0, 0.5)).unwrap(),
        DVec3::new(0.0, 0.0, -0.5),
        DQuat::IDENTITY,
        mat,
    );
    let q0 = DQuat::from_rotation_z(0.3);
    let b = add_dynamic(
        &mut sim,
        cuboid(Vec3::new(0.5, 0.4, 0.3)).unwrap(),
        500.0,
        DVec3::new(0.2, -0.1, 0.3),
        q0,
        mat,
    );
    let p0 = sim.body(b).unwrap().position;
    let mut max_drift: f64 = 0.0;
    let mut zs = Vec::new();
    let mut volumes = 0;
    for _ in 0..240 {
        sim.step();
        volumes += volume_parts(&sim, |_| true);
        let p = sim.body(b).unwrap().position;
        max_drift = max_drift.max((p - p0).length());
        zs.push(p.z);
    }
    let body = sim.body(b).unwrap();
    let tilt = rotation_angle(q0, body.orientation);
    let (lo, hi) = zs[180..]
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &z| {
            (l.min(z), h.max(z))
        });
    eprintln!(
        "box on box (mesh volume, 4 s): max drift {max_drift:.3e} m, final z {:.6}, last-second z range {:.2e}, rotation {tilt:.3e} rad, speed {:.2e}, {volumes} volume contacts, last step {:?}",
        body.position.z,
        hi - lo,
        body.linear_velocity.length(),
        sim.stats()
    );
    assert!(max_drift < 3e-3);
    assert!(tilt < 3e-3);
    assert!(hi - lo < 1e-3);
    // A volume contact in every step (contacts are found once per step; this counted one per
    // substep, 240 × 4, when they were found at every substep).
    assert!(volumes >= 240, "{volumes}");
}

/// A torus thrown sideways around a static peg (both meshes; the pair is non-convex: the peg
/// goes through the hole) onto the ground (an exact half-space volume contact). Returns the
/// simulation, the peg's id and the torus.
fn torus_on_peg() -> (Simulation, BodyId, BodyHandle) {
    use interfere_geometry::shapes::{cylinder, torus};
    let mat = Material::new(0.6, 0.0);
    let mut sim = simulation(
        world_settings(1.0 / 60.0, 4, DVec3::new(0.0, 0.0, -G)),
        uniform(MeshSpacing::default()),
    );
    add_ground(&mut sim, mat);
    let peg = add_fixed(
        &mut sim,
        cylinder(0.1, 0.3, 12).unwrap(),
        DVec3::new(0.0, 0.0, 0.3),
        DQuat::IDENTITY,
        mat,
    );
    let t_solid = torus(0.4, 0.1, 20, 8).unwrap();
    let s = shape(t_solid);
    let body = Body::dynamic(
        &s.mass_at(500.0),
        DVec3::new(0.12, 0.0, 0.5),
        DQuat::from_rotation_x(0.3),
    )
    .unwrap()
    .with_material(mat)
    .with_velocity(DVec3::new(1.0, 0.3, 0.0), DVec3::new(0.0, 0.0, 1.0));
    let t = sim.insert(body, Some(BodyShape::mesh(s))).unwrap();
    (sim, peg.id(), t)
}

/// The torus's volume contacts with the peg in the last step.
fn peg_parts(sim: &Simulation, peg: BodyId) -> usize {
    volume_parts(sim, |p| p.a == peg || p.b == peg)
}

#[test]
fn torus_thrown_around_peg_settles_threaded() {
    let (mut sim, peg, t) = torus_on_peg();
    let mut ke = Vec::new();
    let mut pos = Vec::new();
    let mut peg_volumes = 0;
    for _ in 0..240 {
        sim.step();
        peg_volumes += peg_parts(&sim, peg);
        ke.push(sim.kinetic_energy());
        pos.push(sim.body(t).unwrap().position);
    }
    let body = sim.body(t).unwrap();
    let radial = body.position.truncate().length();
    let max_ke_last = ke[180..].iter().fold(0.0f64, |a, &x| a.max(x));
    let jitter = pos[180..]
        .iter()
        .map(|p| (*p - pos[180]).length())
        .fold(0.0f64, f64::max);
    let up = interfere_geometry::glam::DMat3::from_quat(body.orientation)
        .col(2)
        .z;
    eprintln!(
        "torus on peg (4 s): centre {:.4?} (off axis {radial:.4} m), axis·z {up:.6}, max KE last second {max_ke_last:.3e} J (mass {:.2} kg), last-second motion {jitter:.3e} m, peg volume contacts {peg_volumes}",
        body.position,
        body.mass(),
    );
    // The peg took part: the torus hit it on its way down.
    assert!(peg_volumes > 0);
    // Threaded: centre within hole radius − peg radius of the axis, below the peg top, lying flat
    // on the ground (centre at the tube radius).
    assert!(radial < 0.3 - 0.1 + 1e-3, "{radial}");
    assert!(body.position.z < 0.6);
    assert!((body.position.z - 0.1).abs() < 5e-3, "{}", body.position.z);
    // Flat, either face down (the torus is symmetric; it may land turned over).
    assert!(up.abs() > 0.999, "{up}");
    // Settled without jitter.
    assert!(max_ke_last < 1e-4, "{max_ke_last}");
    assert!(jitter < 1e-3, "{jitter}");
}

#[test]
fn mesh_volume_determinism_bit_identical() {
    let run = || {
        let (mut sim, peg, _) = torus_on_peg();
        let mut peg_volumes = 0;
        for _ in 0..60 {
            sim.step();
            peg_volumes += peg_parts(&sim, peg);
        }
        (sim.state_bits(), peg_volumes)
    };
    let (a, na) = run();
    let (b, nb) = run();
    assert!(na > 0);
    assert_eq!(na, nb);
    assert_eq!(a, b);
}

/// A ring hanging on a horizontal peg, swung by `swing` radians about the peg: the only support
/// is the non-convex torus–peg volume contact (the peg passes through the hole).
fn ring_on_hook(swing: f64) -> (Simulation, BodyHandle) {
    use interfere_geometry::shapes::{cylinder, torus};
    let mat = Material::new(0.6, 0.0);
    let mut sim = simulation(
        world_settings(1.0 / 60.0, 4, DVec3::new(0.0, 0.0, -G)),
        uniform(MeshSpacing::Absolute(0.01)),
    );
    // Peg along y at height 1.
    add_fixed(
        &mut sim,
        cylinder(0.1, 0.4, 16).unwrap(),
        DVec3::new(0.0, 0.0, 1.0),
        DQuat::from_rotation_x(FRAC_PI_2),
        mat,
    );
    // Ring plane vertical (its axis along y), inner rim (radius 0.3) on the peg (radius 0.1).
    let hang = DVec3::new(0.0, 0.0, -0.2);
    let q = DQuat::from_rotation_y(swing) * DQuat::from_rotation_x(FRAC_PI_2);
    let t = add_dynamic(
        &mut sim,
        torus(0.4, 0.1, 24, 8).unwrap(),
        500.0,
        DVec3::new(0.0, 0.0, 1.0) + DQuat::from_rotation_y(swing) * hang,
        q,
        mat,
    );
    (sim, t)
}

#[test]
fn ring_hangs_on_horizontal_peg() {
    for swing in [0.0, 0.3] {
        let (mut sim, t) = ring_on_hook(swing);
        let e0 = sim.kinetic_energy() + sim.potential_energy();
        let mut ke = Vec::new();
        let mut pos = Vec::new();
        let mut e_max = f64::NEG_INFINITY;
        let (mut volumes, mut steps_held) = (0, 0);
        for _ in 0..240 {
            sim.step();
            let n = volume_parts(&sim, |_| true);
            volumes += n;
            steps_held += usize::from(n > 0);
            ke.push(sim.kinetic_energy());
            pos.push(sim.body(t).unwrap().position);
            e_max = e_max.max(sim.kinetic_energy() + sim.potential_energy());
        }
        let body = sim.body(t).unwrap();
        let max_ke_last = ke[180..].iter().fold(0.0f64, |a, &x| a.max(x));
        let jitter = pos[180..]
            .iter()
            .map(|p| (*p - pos[180]).length())
            .fold(0.0f64, f64::max);
        let sag = pos.iter().map(|p| p.z).fold(f64::INFINITY, f64::min);
        eprintln!(
            "ring on hook swing {swing} (4 s): centre {:.4?}, lowest z {sag:.4}, max KE last second {max_ke_last:.3e} J (mass {:.2} kg), last-second motion {jitter:.3e} m, energy gain {:.3e} J, volume contacts {volumes} in {steps_held} steps",
            body.position,
            body.mass(),
            e_max - e0,
        );
        // Held by the peg all along: a volume contact in every step (contacts are found once
        // per step; this counted 240 × 4, one per substep, when they were found at every
        // substep), no fall, no drift along the peg, no energy gained.
        assert!(volumes >= 240, "{volumes}");
        assert!(sag > 0.79, "{sag}");
        assert!(body.position.y.abs() < 0.01);
        assert!(e_max <= e0 + 1e-6, "{e_max} vs {e0}");
        if swing == 0.0 {
            // Hanging still: 2.5 mm of settling into the faceted contact, then at rest.
            assert!((body.position - DVec3::new(0.0, 0.0, 0.8)).length() < 5e-3);
            assert!(max_ke_last < 1e-4, "{max_ke_last}");
            assert!(jitter < 1e-4, "{jitter}");
        }
    }
}

/// The stack with real box-box contact: every pair of boxes (and the boxes on a static slab)
/// meets through mesh-mesh intersection volume, no stand-in planes.
///
/// Stepped at 240 Hz with one substep: contacts are found once per step, so this keeps the rate
/// at which they are found that this test had at 60 Hz × 4 substeps when they were found at
/// every substep (and gives the same figures, below). With contacts found once per 60 Hz step the
/// stack does not stand: the boxes rock, bounce and slide (measured worst drift / tilt after
/// 10 s: 9.1 cm / 0.13 rad with the contacts advanced over 4 substeps, 20 cm / 0.27 rad with one
/// substep). Advancing contacts over substeps does not replace finding them: 240 Hz × 2
/// substeps gives 1.1 mm / 1.1·10⁻³ rad, 120 Hz × 4 2.6 mm / 3.2·10⁻³, 120 Hz × 8 3.6 cm /
/// 1.2·10⁻².
#[test]
fn stack_of_five_boxes_stands_ten_seconds_on_mesh_volume_contact() {
    let mat = Material::new(0.6, 0.0);
    let mut sim = simulation(
        world_settings(1.0 / 240.0, 1, DVec3::new(0.0, 0.0, -G)),
        uniform(MeshSpacing::default()),
    );
    add_fixed(
        &mut sim,
        cuboid(Vec3::new(2.0, 2.0, 0.5)).unwrap(),
        DVec3::new(0.0, 0.0, -0.5),
        DQuat::IDENTITY,
        mat,
    );
    let half = Vec3::new(0.5, 0.5, 0.25);
    let mut ids = Vec::new();
    for i in 0..5 {
        let z = f64::from(half.z) * (2 * i + 1) as f64;
        let h = add_dynamic(
            &mut sim,
            cuboid(half).unwrap(),
            500.0,
            DVec3::new(0.0, 0.0, z),
            DQuat::IDENTITY,
            mat,
        );
        ids.push(h);
    }
    let start: Vec<DVec3> = ids.iter().map(|&h| sim.body(h).unwrap().position).collect();
    // Ten seconds.
    for _ in 0..2400 {
        sim.step();
    }
    let mut worst: f64 = 0.0;
    let mut tilt: f64 = 0.0;
    for (k, &h) in ids.iter().enumerate() {
        let b = sim.body(h).unwrap();
        worst = worst.max((b.position - start[k]).length());
        tilt = tilt.max(rotation_angle(DQuat::IDENTITY, b.orientation));
    }
    eprintln!("mesh-volume stack of 5: worst drift {worst:.3e} m, worst tilt {tilt:.3e} rad");
    // Each contact settles by the volume slop (1e-4 m of depth), so the top box sinks by a
    // few of those (measured 0.66 mm, tilt 3.9e-4 rad; the run is deterministic).
    assert!(worst < 1e-3, "drift {worst}");
    assert!(tilt < 1e-3, "tilt {tilt}");
}

/// Ruina's wheels (Wang–Faure–Pai 2012 Fig. 1b) on the mesh–mesh volume contact: two hexagonal
/// wheels that differ only by the sign of a sub-millimetre face sagitta, launched rolling at the
/// same speed on a static slab. Prints the roll distance of each (a prototype of the demo).
#[test]
#[ignore = "experiment; run with --release -- --ignored --nocapture"]
fn ruina_wheels_roll_distances() {
    use interfere_geometry::shapes::polygon_wheel;
    let roll = |sagitta: f32, spacing: f64, speed: f64| {
        let mut sim = simulation(
            world_settings(1.0 / 240.0, 2, DVec3::new(0.0, -G, 0.0)),
            uniform(MeshSpacing::Absolute(spacing)),
        );
        add_fixed(
            &mut sim,
            cuboid(Vec3::new(3.0, 0.25, 0.3)).unwrap(),
            DVec3::new(2.5, -0.25, 0.0),
            DQuat::IDENTITY,
            Material::new(0.6, 0.0),
        );
        let (r, sides) = (0.1f32, 6u32);
        let wheel = polygon_wheel(r, sides, 0.03, sagitta, 16).unwrap();
        // A face down: the face between the corners at 240° and 300° is horizontal.
        let lowest = wheel
            .vertices()
            .iter()
            .map(|v| v.y)
            .fold(f32::INFINITY, f32::min) as f64;
        let s = shape(wheel);
        let body = Body::dynamic(
            &s.mass_at(800.0),
            DVec3::new(0.0, -lowest + 2e-4, 0.0),
            DQuat::IDENTITY,
        )
        .unwrap()
        .with_material(Material::new(0.8, 0.0))
        .with_velocity(
            DVec3::new(speed, 0.0, 0.0),
            DVec3::new(0.0, 0.0, -speed / r as f64),
        );
        let b = sim.insert(body, Some(BodyShape::mesh(s))).unwrap();
        let x0 = sim.body(b).unwrap().position.x;
        let mut steps = 0;
        for i in 0..(240 * 6) {
            sim.step();
            steps = i;
            let body = sim.body(b).unwrap();
            if i > 24
                && body.linear_velocity.length() < 1e-3
                && body.angular_velocity.length() < 1e-2
            {
                break;
            }
        }
        let body = sim.body(b).unwrap();
        (body.position.x - x0, steps, body.position.y)
    };
    for spacing in [1e-3, 5e-4] {
        for speed in [0.6, 1.0] {
            let convex = roll(5e-4, spacing, speed);
            let concave = roll(-5e-4, spacing, speed);
            eprintln!(
                "spacing {spacing:.0e} speed {speed}: convex {:.4} m ({} steps, y {:.4}), concave {:.4} m ({} steps, y {:.4}), ratio {:.3}",
                convex.0,
                convex.1,
                convex.2,
                concave.0,
                concave.1,
                concave.2,
                convex.0 / concave.0
            );
        }
    }
}

/// The solver settings of the millimetre thread scenes: the default slops and thresholds are for
/// metres.
fn thread_solver() -> SolverSettings {
    SolverSettings {
        restitution_threshold: 200.0,
        static_friction_threshold: 10.0,
        linear_slop: 0.005,
        volume_slop_depth: 0.005,
        ..SolverSettings::default()
    }
}

/// A coarse M10×1.5 nut (32 facets per turn, 4.5 mm high, steel) with friction `mu` resting on
/// the flanks of its fixed bolt (12 mm of thread, tip at the origin), in millimetres with gravity
/// 9810 mm/s² along −z at 240 Hz, one substep, nothing sleeping. Returns the simulation, the
/// nut and the axial flank play.
fn coarse_nut_on_bolt(mu: f64, volume: VolumeMethod) -> (Simulation, BodyHandle, f64) {
    use interfere_geometry::threads::{ThreadSpec, bolt, nut};
    let spec = ThreadSpec {
        columns: 32,
        ..ThreadSpec::M10
    };
    let mut sim = simulation(
        StepSettings {
            gravity: DVec3::new(0.0, 0.0, -9810.0),
            dt: 1.0 / 240.0,
            substeps: 1,
            solver: thread_solver(),
        },
        volume,
    );
    let mat = Material::new(mu, 0.0);
    add_fixed(
        &mut sim,
        bolt(&spec, 12.0).unwrap(),
        DVec3::ZERO,
        DQuat::IDENTITY,
        mat,
    );
    // Centred in the thread at z = 6 (a whole number of pitches), lowered by half the axial
    // flank play 2c/√3 and 2 µm so it starts resting on the flanks.
    let play = 2.0 * f64::from(spec.clearance) / 3f64.sqrt();
    let start = DVec3::new(0.0, 0.0, 6.0 - play / 2.0 - 0.002);
    let n = add_dynamic(
        &mut sim,
        nut(&spec, 4.5).unwrap(),
        7.85e-6,
        start,
        DQuat::IDENTITY,
        mat,
    );
    (sim, n, play)
}

/// [`coarse_nut_on_bolt`] run for `steps` (0.2 mm volume rays or the exact volume): the only
/// support is the non-convex volume contact on the thread flanks. Returns the nut's (z,
/// unwrapped rotation about +z) per step, the axial play and the volume contacts over the run
/// (one substep per step: per step and per substep agree).
fn nut_on_bolt(mu: f64, steps: usize, volume: VolumeMethod) -> (Vec<(f64, f64)>, f64, usize) {
    let (mut sim, n, play) = coarse_nut_on_bolt(mu, volume);
    let z0 = sim.body(n).unwrap().position.z;
    let (mut theta, mut last) = (0.0, 0.0);
    let mut out = Vec::new();
    let mut volumes = 0;
    for _ in 0..steps {
        sim.step();
        volumes += volume_parts(&sim, |_| true);
        let b = sim.body(n).unwrap();
        let q = b.orientation;
        let twist = 2.0 * q.z.atan2(q.w);
        let d = (twist - last + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU)
            - std::f64::consts::PI;
        theta += d;
        last = twist;
        out.push((b.position.z - z0, theta));
    }
    (out, play, volumes)
}

/// With the exact volume (the default) and with uniform rays every 0.2 mm.
#[test]
fn frictionless_nut_unscrews_along_the_pitch_and_a_locked_nut_holds() {
    nut_unscrews_and_locked_nut_holds(VolumeMethod::Exact);
    nut_unscrews_and_locked_nut_holds(uniform(MeshSpacing::Absolute(0.2)));
}

fn nut_unscrews_and_locked_nut_holds(volume: VolumeMethod) {
    eprintln!("{volume:?}");
    let pitch = 1.5;
    let (free, play, volumes) = nut_on_bolt(0.0, 90, volume);
    let (dz, dtheta) = *free.last().unwrap();
    // The helix through the start: z = P·θ/2π (θ negative, turning clockwise seen from above).
    let deviation = free
        .iter()
        .map(|&(z, t)| (z - pitch * t / std::f64::consts::TAU).abs())
        .fold(0.0f64, f64::max);
    eprintln!(
        "free nut after 90 steps: dz {dz:.4} mm, rotation {:.4} turns, implied pitch {:.4} mm, max helix deviation {deviation:.4} mm (axial play {play:.4}), volume contacts {volumes}",
        dtheta / std::f64::consts::TAU,
        dz * std::f64::consts::TAU / dtheta
    );
    assert!(volumes >= 90, "{volumes}");
    // It turned (more than a tenth of a turn, clockwise) while sinking.
    assert!(dtheta < -0.1 * std::f64::consts::TAU, "{dtheta}");
    assert!(dz < -0.1, "{dz}");
    // Along the pitch within 5 % once seated (the second half of the run: the first steps settle
    // into the flank play and the contact depth), within 10 % overall, and never off the helix by
    // more than the play plus one ray spacing (a nut that crossed a flank would be P/2 off).
    let implied = dz * std::f64::consts::TAU / dtheta;
    // Least-squares slope dz/dθ over steps 20.. (robust to the rattle in the flank play).
    let tail = &free[20..];
    let n = tail.len() as f64;
    let (mz, mt) = tail
        .iter()
        .fold((0.0, 0.0), |(a, b), s| (a + s.0 / n, b + s.1 / n));
    let (sxy, sxx) = tail.iter().fold((0.0, 0.0), |(a, b), s| {
        (a + (s.1 - mt) * (s.0 - mz), b + (s.1 - mt) * (s.1 - mt))
    });
    let seated = sxy / sxx * std::f64::consts::TAU;
    eprintln!("fitted pitch after step 20: {seated:.4} mm");
    assert!((seated / pitch - 1.0).abs() < 0.05, "{seated}");
    assert!((implied / pitch - 1.0).abs() < 0.1, "{implied}");
    assert!(deviation < play + 0.2, "{deviation}");

    // Friction 0.2 is above the self-locking limit (≈ 0.046): the nut stays where it is.
    let (locked, _, _) = nut_on_bolt(0.2, 90, volume);
    let (dz, dtheta) = *locked.last().unwrap();
    eprintln!("locked nut after 90 steps: dz {dz:.5} mm, rotation {dtheta:.3e} rad");
    assert!(dz.abs() < play + 0.02, "{dz}");
    assert!(dtheta.abs() < 0.01 * std::f64::consts::TAU, "{dtheta}");
}

#[path = "scenes/adaptive_frame.rs"]
mod adaptive_frame;

/// The shipped Ruina scene (`assets/scenes/ruina_wheels.json`, the example's wheels and launch,
/// exact volume by default): after 6 s the convex wheel has rolled farther than the concave one
/// and both are at rest (below the example's rest thresholds, 2 mm/s and 0.02 rad/s; until the
/// separated parts were kept, `simulation::separated`, the convex wheel jittered at 2.2 mm/s and
/// 0.029 rad/s and this test allowed 1 cm/s and 0.1 rad/s). Measured 0.1999 m against 0.1000 m, ratio 2.00, as with
/// 1 mm rays (0.2005 and 0.1003 m: `ruina_wheels_roll_distances`). Before every contact region got lever
/// arms (flat faces at their principal radii, curved ones split by their pieces: see
/// `principal_parts_with_hint`), the wheels' barely curved faces had one central constraint
/// each, no tilt stiffness, and rolled 0.6094 and 0.2025 m, still moving at 6 s. Guarded: ratio
/// above 1.8 and both at rest (docs/demos.md quotes the figures).
#[test]
fn shipped_ruina_scene_convex_wheel_rolls_farther() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/scenes");
    let scene = crate::Scene::load(&dir.join("ruina_wheels.json")).expect("loads");
    let mut built = scene.build().expect("builds");
    let find = |name: &str| built.names.iter().position(|n| n == name).expect(name);
    let (cx, cc) = (find("convex wheel"), find("concave wheel"));
    let handle = |k: usize| built.handles[k];
    let x0 = |b: &BuiltScene, k: usize| b.simulation.body(b.handles[k]).unwrap().position.x;
    let (x0_convex, x0_concave) = (x0(&built, cx), x0(&built, cc));
    for _ in 0..1440 {
        built.simulation.step();
    }
    let x = |k: usize| built.simulation.body(handle(k)).unwrap().position.x;
    let (convex, concave) = (x(cx) - x0_convex, x(cc) - x0_concave);
    let ratio = convex / concave;
    eprintln!("ruina scene: convex {convex:.4} m, concave {concave:.4} m, ratio {ratio:.3}");
    assert!(concave > 0.05, "the concave wheel rolled {concave} m");
    assert!(
        ratio > 1.8,
        "ratio {ratio}: convex {convex} m, concave {concave} m"
    );
    for k in [cx, cc] {
        let b = built.simulation.body(handle(k)).unwrap();
        eprintln!(
            "{}: {:.3e} m/s, {:.3e} rad/s",
            built.names[k],
            b.linear_velocity.length(),
            b.angular_velocity.length()
        );
        assert!(
            b.linear_velocity.length() < 2e-3 && b.angular_velocity.length() < 2e-2,
            "{} still moves: {} m/s, {} rad/s",
            built.names[k],
            b.linear_velocity.length(),
            b.angular_velocity.length()
        );
    }
}

/// Mesh boxes resting on a mesh slab with the default exact volume at the plugin's rate (64 Hz,
/// 4 substeps): a cube dropped flat, a cube dropped tilted, and a flat box turned about the
/// vertical. Over the last five of ten seconds each stays still: height range, speed and
/// rotation rate below the thresholds asserted. Before the four-part manifold's lever arms were
/// fixed (see `interfere_dynamics::principal_parts`) the flat cube rocked itself up to ±4 mm
/// and 0.23 m/s and walked 37 mm.
#[test]
fn mesh_boxes_rest_still_on_a_mesh_slab() {
    let mat = Material::new(0.6, 0.0);
    let cases = [
        ("cube, flat", Vec3::splat(0.25), 0.6, DQuat::IDENTITY),
        (
            "cube, tilted",
            Vec3::splat(0.25),
            0.8,
            DQuat::from_rotation_x(0.3) * DQuat::from_rotation_y(0.2),
        ),
        (
            "box, turned",
            Vec3::new(0.5, 0.4, 0.3),
            0.6,
            DQuat::from_rotation_z(0.3),
        ),
    ];
    for (name, half, z0, q0) in cases {
        let mut sim = simulation(
            world_settings(1.0 / 64.0, 4, DVec3::new(0.0, 0.0, -G)),
            VolumeMethod::Exact,
        );
        add_fixed(
            &mut sim,
            cuboid(Vec3::new(2.0, 2.0, 0.25)).unwrap(),
            DVec3::new(0.0, 0.0, -0.25),
            DQuat::IDENTITY,
            mat,
        );
        let b = add_dynamic(
            &mut sim,
            cuboid(half).unwrap(),
            500.0,
            DVec3::new(0.1, -0.2, z0),
            q0,
            mat,
        );
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        let (mut speed, mut spin): (f64, f64) = (0.0, 0.0);
        let mut start = None;
        for step in 0..640 {
            sim.step();
            let body = sim.body(b).unwrap();
            if step >= 320 {
                let p = body.position;
                start.get_or_insert(p);
                lo = lo.min(p.z);
                hi = hi.max(p.z);
                speed = speed.max(body.linear_velocity.length());
                spin = spin.max(body.angular_velocity.length());
            }
        }
        let body = sim.body(b).unwrap();
        let walk = (body.position - start.unwrap()).length();
        eprintln!(
            "{name}: z {lo:.6}..{hi:.6} (range {:.2e} m), max speed {speed:.2e} m/s, max spin {spin:.2e} rad/s, walked {walk:.2e} m",
            hi - lo
        );
        // Resting on its lowest face: z is half its height, less the slop's depth.
        assert!(
            (lo - f64::from(half.z)).abs() < 1e-3,
            "{name}: rests at {lo}"
        );
        assert!(hi - lo < 5e-5, "{name}: height range {}", hi - lo);
        assert!(speed < 2e-3, "{name}: speed {speed}");
        assert!(spin < 1e-2, "{name}: spin {spin}");
        assert!(walk < 1e-4, "{name}: walked {walk}");
    }
}

//! Tests of the driving controls ([`crate::simulation::forces`], [`crate::body`]) against their oracles:
//! momentum changes of impulses, `Δv = F T / m` and `Δω = I⁻¹ τ T` under constant loads, the
//! closed form of the damping model, gravity scale, locked axes with contacts, speed limits, bad
//! input, and the defaults changing nothing.

use crate::*;
use interfere_geometry::glam::{DQuat, DVec3, Vec3};
use interfere_geometry::shapes::cuboid;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

/// No gravity, no sleeping, 60 Hz with 4 substeps.
fn space() -> Simulation {
    let mut s = SimulationSettings::default();
    s.world.gravity = DVec3::ZERO;
    s.sleep = SleepSettings::NEVER;
    Simulation::new(s).unwrap()
}

fn with_gravity() -> Simulation {
    let s = SimulationSettings {
        sleep: SleepSettings::NEVER,
        ..SimulationSettings::default()
    };
    Simulation::new(s).unwrap()
}

/// A free body (no collider) with a box's mass properties.
fn free_box(half: DVec3, at: DVec3, q: DQuat) -> Body {
    let props = MassProperties::cuboid(half, 700.0).unwrap();
    Body::dynamic(&props, at, q).unwrap()
}

fn vec(rng: &mut ChaCha8Rng, r: f64) -> DVec3 {
    DVec3::new(
        rng.random_range(-r..r),
        rng.random_range(-r..r),
        rng.random_range(-r..r),
    )
}

fn quat(rng: &mut ChaCha8Rng) -> DQuat {
    let axis = vec(rng, 1.0).normalize_or(DVec3::Z);
    DQuat::from_axis_angle(axis, rng.random_range(-3.0..3.0))
}

fn bits(b: &Body) -> Vec<u64> {
    b.position
        .to_array()
        .into_iter()
        .chain(b.orientation.to_array())
        .chain(b.linear_velocity.to_array())
        .chain(b.angular_velocity.to_array())
        .map(f64::to_bits)
        .collect()
}

/// Oracle: an impulse `J` at a point `p` changes the linear momentum by exactly `J` and the
/// angular momentum about the centre of mass `c` by `(p − c) × J` (plus any angular impulse `A`),
/// measured with the world inertia at the moment it is applied (free flight keeps ω constant, so
/// `I(q₀)(ω₁ − ω₀)` after the step is that change). Random bodies, poses, velocities, impulses
/// and points, including far from the origin and with tiny and large impulses.
#[test]
fn impulses_change_momentum_by_the_impulse() {
    let mut rng = ChaCha8Rng::seed_from_u64(31);
    for case in 0..60 {
        let mut sim = space();
        let half = DVec3::new(
            rng.random_range(0.05..1.0),
            rng.random_range(0.05..1.0),
            rng.random_range(0.05..1.0),
        );
        let far = if case % 3 == 0 { 1e4 } else { 1.0 };
        let at = vec(&mut rng, 5.0) * far;
        let body = free_box(half, at, quat(&mut rng))
            .with_velocity(vec(&mut rng, 3.0), vec(&mut rng, 2.0));
        let h = sim.insert(body, None).unwrap();
        let b0 = sim.body(h).unwrap().clone();
        let scale = [1e-6, 1.0, 1e4][case % 3];
        let j = vec(&mut rng, 1.0) * scale * b0.mass();
        let r = vec(&mut rng, 1.0);
        let p = b0.position + r;
        let a = if case % 2 == 0 {
            vec(&mut rng, 1.0) * scale
        } else {
            DVec3::ZERO
        };
        sim.apply_impulse_at_point(h, j, p).unwrap();
        sim.apply_angular_impulse(h, a).unwrap();
        sim.step();
        let b1 = sim.body(h).unwrap().clone();
        let m = b0.mass();
        let dp = m * b1.linear_velocity - m * b0.linear_velocity;
        let tol_p = 1e-12 * (j.length() + m * b0.linear_velocity.length());
        assert!((dp - j).length() <= tol_p, "case {case}: Δp {dp} vs J {j}");
        let iw = b0.inertia_world();
        let dl = iw * (b1.angular_velocity - b0.angular_velocity);
        let want = (p - b0.position).cross(j) + a;
        let tol_l = 1e-12 * (want.length() + (iw * b0.angular_velocity).length());
        assert!(
            (dl - want).length() <= tol_l,
            "case {case}: ΔL {dl} vs {want}"
        );
        // Applied once: the next step leaves the velocities bit for bit.
        assert_eq!(b1.pending_impulse(), DVec3::ZERO);
        sim.step();
        let b2 = sim.body(h).unwrap();
        assert_eq!(b2.linear_velocity, b1.linear_velocity);
        assert_eq!(b2.angular_velocity, b1.angular_velocity);
    }
    // Through the centre of mass: no rotation at all; impulses queued before a step add up.
    let mut sim = space();
    let h = sim
        .insert(
            free_box(DVec3::splat(0.5), DVec3::ZERO, DQuat::IDENTITY),
            None,
        )
        .unwrap();
    let m = sim.body(h).unwrap().mass();
    sim.apply_impulse(h, DVec3::new(m, 0.0, 0.0)).unwrap();
    sim.apply_impulse(h, DVec3::new(0.0, 2.0 * m, 0.0)).unwrap();
    sim.step();
    let b = sim.body(h).unwrap();
    assert_eq!(b.linear_velocity, DVec3::new(1.0, 2.0, 0.0));
    assert_eq!(b.angular_velocity, DVec3::ZERO);
    // A sleeping body is woken by an impulse; a static one ignores it (and drops it).
    sim.sleep(h).unwrap();
    sim.apply_impulse(h, DVec3::new(0.0, 0.0, m)).unwrap();
    assert!(!sim.body(h).unwrap().sleeping);
    sim.step();
    assert_eq!(sim.body(h).unwrap().linear_velocity.z, 1.0);
    let s = sim
        .insert(Body::fixed(DVec3::ZERO, DQuat::IDENTITY).unwrap(), None)
        .unwrap();
    sim.apply_impulse_at_point(s, DVec3::X, DVec3::Y).unwrap();
    sim.step();
    let sb = sim.body(s).unwrap();
    assert_eq!(sb.linear_velocity, DVec3::ZERO);
    assert_eq!(sb.pending_angular_impulse(), DVec3::ZERO);
}

/// Oracle: a constant force `F` for `T` seconds in free flight gives `Δv = F T / m` (the
/// semi-implicit Euler velocity is exact: only rounding, checked to 1e-12 relative), and the
/// displacement of the discrete scheme, `F T² (1 + 1/n) / 2m` over `n` substeps; it differs from
/// the continuous `F T² / 2m` by `F T h / 2m` (`h` the substep), which is the discretization bound
/// stated here. A constant torque about a principal axis gives `Δω = I⁻¹ τ T`, and a force at a
/// point both.
#[test]
fn constant_force_and_torque() {
    let mut sim = space();
    let half = DVec3::new(0.5, 0.3, 0.2);
    let v0 = DVec3::new(0.3, -0.2, 0.1);
    let h = sim
        .insert(
            free_box(half, DVec3::ZERO, DQuat::IDENTITY).with_velocity(v0, DVec3::ZERO),
            None,
        )
        .unwrap();
    let b0 = sim.body(h).unwrap().clone();
    let m = b0.mass();
    let f = DVec3::new(3.0, -7.0, 11.0);
    sim.set_force(h, f).unwrap();
    let steps = 120;
    for _ in 0..steps {
        sim.step();
    }
    let s = sim.settings().world;
    let t = steps as f64 * s.dt;
    let n = (steps * s.substeps as usize) as f64;
    let hs = s.dt / s.substeps as f64;
    let b = sim.body(h).unwrap();
    let dv = b.linear_velocity - v0;
    let want = f * t / m;
    assert!(
        (dv - want).length() <= 1e-12 * want.length(),
        "{dv} vs {want}"
    );
    let dx = b.position - b0.position - v0 * t;
    let discrete = f * t * t * (1.0 + 1.0 / n) / (2.0 * m);
    assert!(
        (dx - discrete).length() <= 1e-11 * discrete.length(),
        "{dx} vs {discrete}"
    );
    let continuous = f * t * t / (2.0 * m);
    let bound = (f * t * hs / (2.0 * m)).length();
    assert!((dx - continuous).length() <= bound * (1.0 + 1e-7));
    assert!(
        (dx - continuous).length() >= bound * (1.0 - 1e-7),
        "the bound is attained"
    );
    assert_eq!(b.angular_velocity, DVec3::ZERO);
    // Torque about the body's z axis (a principal axis): Δω = τ T / I_zz, nothing else turns.
    let mut sim = space();
    let h = sim
        .insert(free_box(half, DVec3::ZERO, DQuat::IDENTITY), None)
        .unwrap();
    let izz = sim.body(h).unwrap().inertia_local().z_axis.z;
    let tau = 0.37;
    sim.set_torque(h, DVec3::new(0.0, 0.0, tau)).unwrap();
    for _ in 0..steps {
        sim.step();
    }
    let w = sim.body(h).unwrap().angular_velocity;
    assert_eq!((w.x, w.y), (0.0, 0.0));
    assert!(
        (w.z - tau * t / izz).abs() <= 1e-12 * (tau * t / izz),
        "{w}"
    );
    // A force at a point: the force, and the torque (p − c) × F about a principal axis.
    let mut sim = space();
    let h = sim
        .insert(free_box(half, DVec3::ZERO, DQuat::IDENTITY), None)
        .unwrap();
    let (f, r) = (DVec3::new(0.0, 2.0, 0.0), DVec3::new(0.4, 0.0, 0.0));
    sim.add_force_at_point(h, f, r).unwrap();
    assert_eq!(sim.body(h).unwrap().torque(), DVec3::new(0.0, 0.0, 0.8));
    for _ in 0..steps {
        sim.step();
    }
    let b = sim.body(h).unwrap();
    assert!((b.linear_velocity - f * t / m).length() <= 1e-12 * (f * t / m).length());
    assert!((b.angular_velocity.z - 0.8 * t / izz).abs() <= 1e-12 * (0.8 * t / izz));
    // Cleared: the velocities stay.
    sim.clear_forces(h).unwrap();
    let before = sim.body(h).unwrap().clone();
    sim.step();
    assert_eq!(sim.body(h).unwrap().linear_velocity, before.linear_velocity);
    assert_eq!(
        sim.body(h).unwrap().angular_velocity,
        before.angular_velocity
    );
}

/// Gravity scale: 0 floats (bit for bit at rest), 2 falls exactly twice as far and fast as 1
/// (doubling is exact in binary), −1 rises as fast as 1 falls; the velocity at scale 1 is `g T`.
#[test]
fn gravity_scale_floats_and_doubles() {
    let mut sim = with_gravity();
    let hs: Vec<BodyHandle> = [1.0, 0.0, 2.0, -1.0]
        .iter()
        .map(|&s| {
            let h = sim
                .insert(
                    free_box(DVec3::splat(0.2), DVec3::ZERO, DQuat::IDENTITY),
                    None,
                )
                .unwrap();
            sim.set_gravity_scale(h, s).unwrap();
            h
        })
        .collect();
    for _ in 0..90 {
        sim.step();
    }
    let g = sim.settings().world.gravity;
    let body = |k: usize| sim.body(hs[k]).unwrap();
    let (one, zero, two, minus) = (body(0), body(1), body(2), body(3));
    let want = g * 90.0 * sim.settings().world.dt;
    assert!((one.linear_velocity - want).length() <= 1e-12 * want.length());
    assert_eq!(zero.position, DVec3::ZERO);
    assert_eq!(zero.linear_velocity, DVec3::ZERO);
    assert_eq!(two.position, 2.0 * one.position);
    assert_eq!(two.linear_velocity, 2.0 * one.linear_velocity);
    assert_eq!(minus.position, -one.position);
    assert!(one.position.z < -1.0);
}

/// Oracle: the damping model's closed form. With no other load, `n` substeps multiply the
/// velocity by `(1 + c h)⁻ⁿ` (checked against `powi` to 1e-13 relative, and bit for bit against
/// the model replayed); under gravity the velocity is `v* + (v₀ − v*)(1 + c h)⁻ⁿ` with the
/// terminal velocity `v* = g / c`.
#[test]
fn damping_matches_the_discrete_closed_form() {
    let mut sim = space();
    let (cl, ca) = (0.8, 2.5);
    let (v0, w0) = (DVec3::new(3.0, -1.0, 2.0), DVec3::new(0.0, 0.0, 4.0));
    let h = sim
        .insert(
            free_box(DVec3::splat(0.3), DVec3::ZERO, DQuat::IDENTITY).with_velocity(v0, w0),
            None,
        )
        .unwrap();
    sim.set_damping(h, cl, ca).unwrap();
    let steps = 150;
    for _ in 0..steps {
        sim.step();
    }
    let s = sim.settings().world;
    let hs = s.dt / s.substeps as f64;
    let n = (steps * s.substeps) as i32;
    let b = sim.body(h).unwrap();
    let want_v = v0 * (1.0 + cl * hs).powi(-n);
    let want_w = w0 * (1.0 + ca * hs).powi(-n);
    assert!((b.linear_velocity - want_v).length() <= 1e-13 * want_v.length());
    assert!((b.angular_velocity - want_w).length() <= 1e-13 * want_w.length());
    let (mut v, mut w) = (v0, w0);
    for _ in 0..n {
        v *= 1.0 / (1.0 + cl * hs);
        w *= 1.0 / (1.0 + ca * hs);
    }
    assert_eq!((b.linear_velocity, b.angular_velocity), (v, w));
    // Under gravity: approaches g / c along the closed form.
    let mut sim = with_gravity();
    let h = sim
        .insert(
            free_box(DVec3::splat(0.3), DVec3::ZERO, DQuat::IDENTITY),
            None,
        )
        .unwrap();
    let c = 1.5;
    sim.set_damping(h, c, 0.0).unwrap();
    let g = sim.settings().world.gravity;
    let terminal = g / c;
    for _ in 0..steps {
        sim.step();
    }
    let want = terminal - terminal * (1.0 + c * hs).powi(-n);
    let got = sim.body(h).unwrap().linear_velocity;
    assert!(
        (got - want).length() <= 1e-12 * terminal.length(),
        "{got} vs {want}"
    );
    for _ in 0..3000 {
        sim.step();
    }
    let got = sim.body(h).unwrap().linear_velocity;
    assert!(
        (got - terminal).length() <= 1e-9 * terminal.length(),
        "{got} vs {terminal}"
    );
}

fn mesh(half: Vec3) -> Arc<MeshShape> {
    Arc::new(MeshShape::new(cuboid(half).unwrap()).unwrap())
}

/// A box on the ground, pushed along +y into a frictionless wall turned 45° about z (rotation
/// locked in both runs): the contact's normal has an x part, so a box free along x slides off
/// along the wall; with x locked its x never changes (bit for bit), the wall still stops it along
/// y and the ground still holds it up.
#[test]
fn locked_translation_holds_against_contacts() {
    let run = |locked: bool| {
        let mut sim = with_gravity();
        sim.insert(
            Body::fixed(DVec3::ZERO, DQuat::IDENTITY).unwrap(),
            Some(BodyShape::half_space(
                HalfSpace::new(DVec3::Z, DVec3::ZERO).unwrap(),
            )),
        )
        .unwrap();
        let wall = mesh(Vec3::new(0.2, 2.0, 1.0));
        sim.insert(
            Body::fixed(
                DVec3::new(0.0, 1.3, 1.0),
                DQuat::from_rotation_z(std::f64::consts::FRAC_PI_4),
            )
            .unwrap()
            // Frictionless, so the pressed box cannot hang on the wall by friction.
            .with_material(Material::new(0.0, 0.0)),
            Some(BodyShape::mesh(wall)),
        )
        .unwrap();
        let shape = mesh(Vec3::splat(0.25));
        let body = Body::dynamic(
            &shape.mass_at(500.0),
            DVec3::new(0.0, 0.0, 0.25),
            DQuat::IDENTITY,
        )
        .unwrap();
        let h = sim.insert(body, Some(BodyShape::mesh(shape))).unwrap();
        // Rotation locked in both runs, so the box slides without tumbling.
        let lock = if locked {
            LockedAxes::ROTATION | LockedAxes::TRANSLATION_X
        } else {
            LockedAxes::ROTATION
        };
        sim.set_locked_axes(h, lock).unwrap();
        let m = sim.body(h).unwrap().mass();
        sim.set_force(h, DVec3::new(0.0, 1.5 * 9.81 * m, 0.0))
            .unwrap();
        let x0 = sim.body(h).unwrap().position.x;
        let mut wall_contacts = 0;
        for _ in 0..240 {
            sim.step();
            wall_contacts += sim
                .pair_contacts()
                .iter()
                .filter(|p| p.a == 1 || p.b == 1)
                .count();
            if locked {
                assert_eq!(sim.body(h).unwrap().position.x.to_bits(), x0.to_bits());
                assert_eq!(sim.body(h).unwrap().linear_velocity.x, 0.0);
            }
        }
        let b = sim.body(h).unwrap().clone();
        (b, wall_contacts)
    };
    let (free, free_contacts) = run(false);
    let (held, held_contacts) = run(true);
    assert!(
        free_contacts > 20 && held_contacts > 20,
        "{free_contacts} {held_contacts}"
    );
    // Free: deflected towards −x by the oblique wall (its normal is (1, 1, 0)/√2).
    assert!(free.position.x < -0.5, "free box x {}", free.position.x);
    // Held: stopped where its edge meets the wall's face, at y = 1.3 − (0.2 + 0.25√2)·√2 ≈ 0.517
    // (within the contact's small overlap), resting on the ground.
    let stop = 1.3 - (0.2 + 0.25 * 2f64.sqrt()) * 2f64.sqrt();
    assert!(
        (held.position.y - stop).abs() < 0.03,
        "{} vs {stop}",
        held.position
    );
    assert!((held.position.z - 0.25).abs() < 0.01, "{}", held.position);
    assert!(
        held.linear_velocity.length() < 0.05,
        "{}",
        held.linear_velocity
    );
}

/// Locked rotation: with every rotation locked a box landing on its corner, hit off-centre and
/// twisted keeps its orientation bit for bit; with x and z locked a twisted body turns only about
/// y (its quaternion keeps exactly zero x and z parts).
#[test]
fn locked_rotation_keeps_orientation() {
    let mut sim = with_gravity();
    sim.insert(
        Body::fixed(DVec3::ZERO, DQuat::IDENTITY).unwrap(),
        Some(BodyShape::half_space(
            HalfSpace::new(DVec3::Z, DVec3::ZERO).unwrap(),
        )),
    )
    .unwrap();
    let shape = mesh(Vec3::new(0.3, 0.2, 0.25));
    let q = DQuat::from_rotation_x(0.6) * DQuat::from_rotation_y(0.4);
    let body = Body::dynamic(&shape.mass_at(500.0), DVec3::new(0.0, 0.0, 1.0), q).unwrap();
    let h = sim
        .insert(body, Some(BodyShape::mesh(shape.clone())))
        .unwrap();
    sim.set_locked_axes(h, LockedAxes::ROTATION).unwrap();
    let q0 = sim.body(h).unwrap().orientation;
    let p = sim.body(h).unwrap().position + DVec3::new(0.3, 0.1, 0.0);
    sim.apply_impulse_at_point(h, DVec3::new(0.0, 50.0, 20.0), p)
        .unwrap();
    sim.set_torque(h, DVec3::new(5.0, -3.0, 2.0)).unwrap();
    let mut touched = 0;
    for _ in 0..180 {
        sim.step();
        touched += sim.pair_contacts().len();
        assert_eq!(sim.body(h).unwrap().orientation, q0);
        assert_eq!(sim.body(h).unwrap().angular_velocity, DVec3::ZERO);
    }
    assert!(touched > 50, "the box must land ({touched})");
    // Only y free.
    let mut sim = space();
    let h = sim
        .insert(
            free_box(DVec3::new(0.4, 0.2, 0.1), DVec3::ZERO, DQuat::IDENTITY),
            None,
        )
        .unwrap();
    sim.set_locked_axes(h, LockedAxes::ROTATION_X | LockedAxes::ROTATION_Z)
        .unwrap();
    sim.set_torque(h, DVec3::new(1.0, 2.0, 3.0)).unwrap();
    sim.apply_angular_impulse(h, DVec3::new(4.0, 1.0, -2.0))
        .unwrap();
    for _ in 0..60 {
        sim.step();
        let b = sim.body(h).unwrap();
        assert_eq!((b.orientation.x, b.orientation.z), (0.0, 0.0));
        assert_eq!((b.angular_velocity.x, b.angular_velocity.z), (0.0, 0.0));
    }
    assert!(sim.body(h).unwrap().angular_velocity.y > 0.0);
}

/// A locked translation axis takes no force, impulse or gravity; the free axes take all of it.
#[test]
fn locked_axes_take_no_load() {
    let mut sim = with_gravity();
    let h = sim
        .insert(
            free_box(
                DVec3::splat(0.2),
                DVec3::new(1.0, 2.0, 3.0),
                DQuat::IDENTITY,
            ),
            None,
        )
        .unwrap();
    sim.set_locked_axes(h, LockedAxes::TRANSLATION_X | LockedAxes::TRANSLATION_Z)
        .unwrap();
    let m = sim.body(h).unwrap().mass();
    sim.set_force(h, DVec3::new(5.0, m, -2.0)).unwrap();
    sim.apply_impulse(h, DVec3::new(3.0, m, 7.0)).unwrap();
    for _ in 0..60 {
        sim.step();
    }
    let b = sim.body(h).unwrap();
    assert_eq!((b.position.x, b.position.z), (1.0, 3.0));
    // y: the impulse (1 m/s) plus the force (1 m/s²) for 1 s.
    assert!(
        (b.linear_velocity.y - 2.0).abs() < 1e-12,
        "{}",
        b.linear_velocity
    );
    assert_eq!(b.effective_inv_mass(), DVec3::new(0.0, 1.0 / m, 0.0));
    assert_eq!(LockedAxes::ALL.bits(), 63);
    assert!(LockedAxes::ALL.contains(LockedAxes::ROTATION_Y | LockedAxes::TRANSLATION_Z));
    assert_eq!(LockedAxes::from_bits(0xff), LockedAxes::ALL);
}

/// Speed limits clamp the speed exactly to the limit under a large force and after a large
/// impulse, in any direction.
#[test]
fn max_speed_clamps() {
    let mut sim = space();
    let h = sim
        .insert(
            free_box(DVec3::splat(0.2), DVec3::ZERO, DQuat::IDENTITY),
            None,
        )
        .unwrap();
    sim.set_max_speeds(h, 2.0, 1.5).unwrap();
    let m = sim.body(h).unwrap().mass();
    sim.apply_impulse(h, DVec3::new(30.0, -40.0, 0.0) * m)
        .unwrap();
    sim.apply_angular_impulse(h, DVec3::new(0.0, 0.0, 1e3))
        .unwrap();
    sim.step();
    let b = sim.body(h).unwrap();
    assert!(
        (b.linear_velocity.length() - 2.0).abs() < 1e-15,
        "{}",
        b.linear_velocity
    );
    let dir = b.linear_velocity / 2.0;
    assert!((dir - DVec3::new(0.6, -0.8, 0.0)).length() < 1e-15);
    assert!((b.angular_velocity.length() - 1.5).abs() < 1e-15);
    sim.set_force(h, DVec3::new(0.0, 0.0, 1e3 * m)).unwrap();
    let mut top: f64 = 0.0;
    for _ in 0..30 {
        sim.step();
        top = top.max(sim.body(h).unwrap().linear_velocity.length());
    }
    assert!(
        top <= 2.0 * (1.0 + 1e-15) && top > 2.0 * (1.0 - 1e-15),
        "{top}"
    );
    assert!(sim.body(h).unwrap().linear_velocity.z > 1.99);
}

/// Bad input is refused with an error naming the field and changes nothing (not even half of a
/// two-value setter); the body keeps stepping with finite state. A body read from a file with a
/// bad field is refused at insertion.
#[test]
fn bad_values_are_refused() {
    let mut sim = with_gravity();
    let h = sim
        .insert(
            free_box(DVec3::splat(0.2), DVec3::ZERO, DQuat::IDENTITY),
            None,
        )
        .unwrap();
    sim.set_damping(h, 0.5, 0.5).unwrap();
    sim.step();
    let before = sim.body(h).unwrap().clone();
    let field = |r: Result<(), SimulationError>| match r {
        Err(SimulationError::Body(BodyError::BadInput { field, .. })) => field,
        other => panic!("expected a refusal, got {other:?}"),
    };
    let nan = f64::NAN;
    let inf = f64::INFINITY;
    assert_eq!(field(sim.set_gravity_scale(h, nan)), "gravity_scale");
    assert_eq!(field(sim.set_gravity_scale(h, -inf)), "gravity_scale");
    assert_eq!(field(sim.set_damping(h, 2.0, -1.0)), "angular_damping");
    assert_eq!(field(sim.set_damping(h, nan, 1.0)), "linear_damping");
    assert_eq!(field(sim.set_damping(h, inf, 1.0)), "linear_damping");
    assert_eq!(field(sim.set_max_speeds(h, 3.0, nan)), "max_angular_speed");
    assert_eq!(field(sim.set_max_speeds(h, -1.0, 1.0)), "max_linear_speed");
    assert_eq!(field(sim.set_force(h, DVec3::new(0.0, inf, 0.0))), "force");
    // Finite but overflowing the velocity of a light body.
    let light = sim
        .insert(
            free_box(DVec3::splat(0.01), DVec3::X, DQuat::IDENTITY),
            None,
        )
        .unwrap();
    assert_eq!(
        field(sim.set_force(light, DVec3::new(0.0, 1e308, 0.0))),
        "force"
    );
    assert_eq!(
        field(sim.apply_impulse(light, DVec3::new(0.0, 0.0, -1e308))),
        "impulse"
    );
    sim.remove(light).unwrap();
    assert_eq!(field(sim.set_torque(h, DVec3::splat(nan))), "torque");
    assert_eq!(
        field(sim.set_force_and_torque(h, DVec3::ONE, DVec3::splat(nan))),
        "torque"
    );
    assert_eq!(
        field(sim.add_force_at_point(h, DVec3::ONE, DVec3::splat(nan))),
        "point"
    );
    assert_eq!(
        field(sim.apply_impulse(h, DVec3::new(nan, 0.0, 0.0))),
        "impulse"
    );
    assert_eq!(
        field(sim.apply_impulse_at_point(h, DVec3::X, DVec3::splat(-inf))),
        "point"
    );
    assert_eq!(
        field(sim.apply_angular_impulse(h, DVec3::splat(inf))),
        "angular_impulse"
    );
    // Adding up to an overflow is refused too.
    sim.set_force(h, DVec3::new(1e308, 0.0, 0.0)).unwrap();
    let before_force = sim.body(h).unwrap().clone();
    assert_eq!(
        field(sim.add_force_at_point(h, DVec3::new(1e308, 0.0, 0.0), DVec3::ZERO)),
        "force"
    );
    assert_eq!(sim.body(h).unwrap(), &before_force);
    sim.clear_forces(h).unwrap();
    assert_eq!(sim.body(h).unwrap(), &before);
    // Infinity is a valid speed limit (no limit), and a negative gravity scale is fine.
    sim.set_max_speeds(h, inf, inf).unwrap();
    sim.set_gravity_scale(h, -0.5).unwrap();
    for _ in 0..10 {
        sim.step();
    }
    let b = sim.body(h).unwrap();
    assert!(b.position.is_finite() && b.linear_velocity.is_finite());
    assert!(b.linear_velocity.z > 0.0);
    // A deserialized body with a bad driving field is refused at insertion.
    let mut json = serde_json::to_value(before.clone()).unwrap();
    json["linear_damping"] = serde_json::json!(-3.0);
    let bad: Body = serde_json::from_value(json).unwrap();
    assert!(matches!(
        sim.insert(bad, None),
        Err(SimulationError::Body(BodyError::BadInput {
            field: "linear_damping",
            ..
        }))
    ));
    // Round trip with the defaults: what an old file without the fields reads as.
    let mut json =
        serde_json::to_value(free_box(DVec3::ONE, DVec3::ZERO, DQuat::IDENTITY)).unwrap();
    for k in [
        "gravity_scale",
        "linear_damping",
        "angular_damping",
        "locked",
        "force",
        "torque",
        "pending_impulse",
        "pending_angular_impulse",
    ] {
        json.as_object_mut().unwrap().remove(k).expect(k);
    }
    let old: Body = serde_json::from_value(json).unwrap();
    assert_eq!(old, free_box(DVec3::ONE, DVec3::ZERO, DQuat::IDENTITY));
    // A stale handle is reported as such.
    sim.remove(h).unwrap();
    assert_eq!(
        sim.set_gravity_scale(h, 1.0),
        Err(SimulationError::NoBody(h))
    );
}

/// Setters wake a sleeping body only when the value changes; mass changes keep the controls.
#[test]
fn setters_wake_on_change_and_survive_mass_changes() {
    let mut sim = space();
    let h = sim
        .insert(
            free_box(DVec3::splat(0.2), DVec3::ZERO, DQuat::IDENTITY),
            None,
        )
        .unwrap();
    sim.set_gravity_scale(h, 0.5).unwrap();
    sim.set_force(h, DVec3::X).unwrap();
    sim.sleep(h).unwrap();
    sim.set_gravity_scale(h, 0.5).unwrap();
    sim.set_force(h, DVec3::X).unwrap();
    sim.apply_impulse(h, DVec3::ZERO).unwrap();
    assert!(
        sim.body(h).unwrap().sleeping,
        "the same values leave it asleep"
    );
    sim.set_force(h, DVec3::Y).unwrap();
    assert!(!sim.body(h).unwrap().sleeping, "a new force wakes it");
    sim.set_locked_axes(h, LockedAxes::ROTATION).unwrap();
    sim.set_max_speeds(h, 3.0, 4.0).unwrap();
    sim.set_damping(h, 0.1, 0.2).unwrap();
    let props = MassProperties::cuboid(DVec3::splat(0.4), 100.0).unwrap();
    sim.set_mass_properties(h, &props).unwrap();
    let b = sim.body(h).unwrap();
    assert_eq!(b.gravity_scale(), 0.5);
    assert_eq!(b.force(), DVec3::Y);
    assert_eq!(b.locked_axes(), LockedAxes::ROTATION);
    assert_eq!((b.max_linear_speed(), b.max_angular_speed()), (3.0, 4.0));
    assert_eq!((b.linear_damping(), b.angular_damping()), (0.1, 0.2));
    assert_eq!(b.mass(), props.mass);
}

/// The defaults change nothing: a pile of random boxes on the ground with every control set
/// explicitly to its default (scale 1, zero damping, nothing locked, infinite limits, zero force
/// and impulse) follows the untouched run bit for bit, contacts included.
#[test]
fn default_controls_change_nothing() {
    let run = |touch: bool| {
        let mut sim = Simulation::new(SimulationSettings::default()).unwrap();
        sim.insert(
            Body::fixed(DVec3::ZERO, DQuat::IDENTITY).unwrap(),
            Some(BodyShape::half_space(
                HalfSpace::new(DVec3::Z, DVec3::ZERO).unwrap(),
            )),
        )
        .unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let shape = mesh(Vec3::new(0.3, 0.2, 0.25));
        let mut hs = Vec::new();
        for k in 0..6 {
            let at = DVec3::new((k % 2) as f64 * 0.3, 0.0, 0.4 + 0.6 * k as f64);
            let body = Body::dynamic(&shape.mass_at(400.0), at, quat(&mut rng)).unwrap();
            hs.push(
                sim.insert(body, Some(BodyShape::mesh(shape.clone())))
                    .unwrap(),
            );
        }
        for step in 0..150 {
            if touch && step % 7 == 0 {
                for &h in &hs {
                    sim.set_gravity_scale(h, 1.0).unwrap();
                    sim.set_damping(h, 0.0, 0.0).unwrap();
                    sim.set_locked_axes(h, LockedAxes::NONE).unwrap();
                    sim.set_max_speeds(h, f64::INFINITY, f64::INFINITY).unwrap();
                    sim.set_force_and_torque(h, DVec3::ZERO, DVec3::ZERO)
                        .unwrap();
                    sim.apply_impulse(h, DVec3::ZERO).unwrap();
                }
            }
            sim.step();
        }
        assert!(sim.stats().interfering_pairs > 3);
        hs.iter()
            .flat_map(|&h| bits(sim.body(h).unwrap()))
            .collect::<Vec<_>>()
    };
    assert_eq!(run(false), run(true));
    // The identity the solver relies on: nothing locked, the effective inverses are the plain
    // ones, bit for bit.
    let b = free_box(
        DVec3::new(0.1, 0.2, 0.3),
        DVec3::ZERO,
        DQuat::from_rotation_x(0.3),
    );
    assert_eq!(b.effective_inv_mass(), DVec3::splat(b.inv_mass()));
    assert_eq!(b.effective_inv_inertia_world(), b.inv_inertia_world());
    let mut locked = b.clone();
    locked.set_locked_axes(LockedAxes::ROTATION_Y);
    let p = locked.effective_inv_inertia_world();
    assert_eq!((p.y_axis, p.row(1)), (DVec3::ZERO, DVec3::ZERO));
    let full = b.inv_inertia_world();
    assert_eq!(p.x_axis.x, full.x_axis.x);
    assert_eq!(p.z_axis.x, full.z_axis.x);
}

//! Mirroring the driving components ([`ExternalForce`], [`ExternalTorque`], [`ExternalImpulse`],
//! [`ExternalAngularImpulse`], [`LinearDamping`], [`AngularDamping`], [`LockedAxes`],
//! [`GravityScale`], [`MaxLinearSpeed`], [`MaxAngularSpeed`]) into the simulation, right after
//! [`crate::sync`] and before every fixed step (the model is `interfere_dynamics/src/simulation/forces.rs`).
//!
//! Every body's wanted values are computed from its components (defaults where absent, so
//! removing a component restores the default) and set only where they differ from the simulated
//! body's, bit for bit: a body without these components is never touched, and a sleeping body
//! whose controls did not change stays asleep. Local forces and forces at a point are turned
//! into world axes from the body's pose at the start of the step. One-shot impulses are queued
//! into the simulation and their component's value is set back to zero. A refused value (not
//! finite, negative damping, …) gets one warning for the entity and leaves the body's previous
//! value.

use crate::components::*;
use crate::world::PhysicsWorld;
use bevy::platform::collections::HashSet;
use bevy::prelude::*;
use interfere_dynamics::Body;

type DriveQueryData = (
    Entity,
    Option<&'static ExternalForce>,
    Option<&'static ExternalTorque>,
    Option<&'static mut ExternalImpulse>,
    Option<&'static mut ExternalAngularImpulse>,
    Option<&'static LinearDamping>,
    Option<&'static AngularDamping>,
    Option<&'static LockedAxes>,
    Option<&'static GravityScale>,
    Option<&'static MaxLinearSpeed>,
    Option<&'static MaxAngularSpeed>,
);

/// A vector given in the body's axes (`local`) or the world's, in world axes.
fn world_vector(body: &Body, v: Vec3, local: bool) -> bevy::math::DVec3 {
    let v = v.as_dvec3();
    if local { body.orientation * v } else { v }
}

/// A point given in the body's frame (`local`) or the world's, in world coordinates.
fn world_point(body: &Body, p: Vec3, local: bool) -> bevy::math::DVec3 {
    let p = p.as_dvec3();
    if local {
        body.mesh_pose().transform_dpoint(p)
    } else {
        p
    }
}

/// Prepare, after the mirror: brings each body's driving fields in line with its components.
pub(crate) fn sync_drives(
    mut pw: ResMut<PhysicsWorld>,
    mut bodies: Query<DriveQueryData, With<RigidBody>>,
    mut warned: Local<HashSet<Entity>>,
) {
    let pw = &mut *pw;
    warned.retain(|e| bodies.contains(*e));
    for (
        entity,
        force,
        torque,
        impulse,
        angular_impulse,
        lin_damp,
        ang_damp,
        locked,
        scale,
        max_lin,
        max_ang,
    ) in &mut bodies
    {
        let Some(h) = pw.handle(entity) else {
            continue;
        };
        let Some(body) = pw.sim.body(h) else {
            continue;
        };
        let mut refuse = |what: &str, e: interfere_dynamics::SimulationError| {
            if warned.insert(entity) {
                warn!("interfere: {what} of body {entity} refused: {e}");
            }
        };
        // Persistent force and torque, in world axes about the current centre of mass.
        let mut f = bevy::math::DVec3::ZERO;
        let mut t = bevy::math::DVec3::ZERO;
        if let Some(ef) = force {
            let fw = world_vector(body, ef.force, ef.local);
            f += fw;
            if let Some(p) = ef.at_point {
                t += (world_point(body, p, ef.local) - body.position).cross(fw);
            }
        }
        if let Some(et) = torque {
            t += world_vector(body, et.torque, et.local);
        }
        // One-shot impulses, in world axes now.
        let j = impulse
            .as_ref()
            .filter(|i| i.impulse != Vec3::ZERO)
            .map(|i| {
                let jw = world_vector(body, i.impulse, i.local);
                (jw, i.at_point.map(|p| world_point(body, p, i.local)))
            });
        let a = angular_impulse
            .as_ref()
            .filter(|i| i.impulse != Vec3::ZERO)
            .map(|i| world_vector(body, i.impulse, i.local));
        let scale = scale.copied().unwrap_or_default().0 as f64;
        let damping = (
            lin_damp.map_or(0.0, |d| d.0 as f64),
            ang_damp.map_or(0.0, |d| d.0 as f64),
        );
        let max = (
            max_lin.copied().unwrap_or_default().0 as f64,
            max_ang.copied().unwrap_or_default().0 as f64,
        );
        let locks = interfere_dynamics::LockedAxes::from_bits(locked.map_or(0, |l| l.0));
        let now = (
            body.force(),
            body.torque(),
            body.gravity_scale(),
            (body.linear_damping(), body.angular_damping()),
            (body.max_linear_speed(), body.max_angular_speed()),
            body.locked_axes(),
        );
        if (now.0, now.1) != (f, t)
            && let Err(e) = pw.sim.set_force_and_torque(h, f, t)
        {
            refuse("ExternalForce/ExternalTorque", e);
        }
        if now.2 != scale
            && let Err(e) = pw.sim.set_gravity_scale(h, scale)
        {
            refuse("GravityScale", e);
        }
        if now.3 != damping
            && let Err(e) = pw.sim.set_damping(h, damping.0, damping.1)
        {
            refuse("LinearDamping/AngularDamping", e);
        }
        if now.4 != max
            && let Err(e) = pw.sim.set_max_speeds(h, max.0, max.1)
        {
            refuse("MaxLinearSpeed/MaxAngularSpeed", e);
        }
        if now.5 != locks {
            let _ = pw.sim.set_locked_axes(h, locks);
        }
        if let Some((jw, point)) = j {
            let queued = match point {
                Some(p) => pw.sim.apply_impulse_at_point(h, jw, p),
                None => pw.sim.apply_impulse(h, jw),
            };
            if let Err(e) = queued {
                refuse("ExternalImpulse", e);
            }
            if let Some(mut i) = impulse {
                i.impulse = Vec3::ZERO;
            }
        }
        if let Some(aw) = a {
            if let Err(e) = pw.sim.apply_angular_impulse(h, aw) {
                refuse("ExternalAngularImpulse", e);
            }
            if let Some(mut i) = angular_impulse {
                i.impulse = Vec3::ZERO;
            }
        }
    }
}

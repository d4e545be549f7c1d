//! After the step: transforms and velocities written back, `Sleeping` markers kept in line with
//! the simulation, single steps counted, and the step's contact output turned into messages
//! (collisions started and ended, contact points, intersection volumes).

use crate::components::*;
use crate::messages::*;
use crate::settings::{PhysicsSettings, PhysicsStats};
use crate::world::PhysicsWorld;
use bevy::prelude::*;
use interfere_dynamics::CollisionEvent;
use std::time::Instant;

/// Writeback: transforms and velocities out, sleeping markers, single steps counted.
#[allow(clippy::type_complexity)]
pub(crate) fn writeback(
    mut pw: ResMut<PhysicsWorld>,
    mut settings: ResMut<PhysicsSettings>,
    mut stats: ResMut<PhysicsStats>,
    mut query: Query<(
        &mut Transform,
        &mut LinearVelocity,
        &mut AngularVelocity,
        Has<Sleeping>,
    )>,
    mut commands: Commands,
) {
    let start = Instant::now();
    let pw = &mut *pw;
    for (entity, entry) in pw.entries.iter_mut() {
        let Some(body) = pw.sim.body(entry.handle) else {
            continue;
        };
        let Ok((mut transform, mut lin, mut ang, has_sleeping)) = query.get_mut(*entity) else {
            continue;
        };
        let p = body.position;
        let bound = f64::from(settings.world_bound);
        let finite =
            p.is_finite() && body.linear_velocity.is_finite() && body.angular_velocity.is_finite();
        if !finite || p.abs().max_element() > bound {
            warn!(
                "interfere: body {entity} parked: its centre is at {p} (world bound {bound} m){}",
                if finite {
                    ""
                } else {
                    ", its state is not finite"
                }
            );
            commands.entity(*entity).insert(Parked {
                position: p.as_vec3(),
            });
            continue;
        }
        if entry.kind != RigidBody::Static || !transform.translation.is_finite() {
            let pose = body.mesh_pose();
            let (mut t, mut r) = (
                pose.translation.as_vec3(),
                body.orientation.as_quat().normalize(),
            );
            // Under a parent, the pose relative to it (the parent's world transform of this
            // step, see `crate::sync`).
            if let Some(p) = entry.parent {
                let inv = p.compute_affine().inverse();
                t = inv.transform_point3(t);
                r = (p.rotation.inverse() * r).normalize();
            }
            if transform.translation != t || transform.rotation != r {
                transform.translation = t;
                transform.rotation = r;
            }
            let (l, a) = (
                body.linear_velocity.as_vec3(),
                body.angular_velocity.as_vec3(),
            );
            if lin.0 != l {
                lin.0 = l;
            }
            if ang.0 != a {
                ang.0 = a;
            }
        }
        entry.written = Some((transform.translation, transform.rotation, lin.0, ang.0));
        if body.sleeping && !entry.marked_asleep {
            commands.entity(*entity).insert(Sleeping);
            entry.marked_asleep = true;
        } else if !body.sleeping && entry.marked_asleep {
            if has_sleeping {
                commands.entity(*entity).remove::<Sleeping>();
            }
            entry.marked_asleep = false;
        }
    }
    settings.single_steps = settings.single_steps.saturating_sub(1);
    stats.writeback_ms = start.elapsed().as_secs_f64() * 1e3;
}

/// Messages of the step: collision events, contacts and volumes of every interfering pair.
pub(crate) fn write_messages(
    mut pw: ResMut<PhysicsWorld>,
    mut started: MessageWriter<CollisionStarted>,
    mut ended: MessageWriter<CollisionEnded>,
    mut contact_out: MessageWriter<ContactMessage>,
    mut volume_out: MessageWriter<IntersectionVolumeMessage>,
) {
    let pw = &mut *pw;
    for event in pw.sim.events() {
        match *event {
            CollisionEvent::Started(a, b) => {
                if let (Some(ea), Some(eb)) = (pw.entity_of(a), pw.entity_of(b)) {
                    started.write(CollisionStarted(ea, eb));
                }
            }
            CollisionEvent::Ended(a, b) => {
                if let (Some(ea), Some(eb)) = (pw.entity_of(a), pw.entity_of(b)) {
                    ended.write(CollisionEnded(ea, eb));
                }
            }
        }
    }
    pw.removed.clear();
    let bodies = pw.sim.bodies();
    for (k, c) in pw.sim.pair_contacts().iter().enumerate() {
        let (Some(ea), Some(eb)) = (pw.entity(c.a), pw.entity(c.b)) else {
            continue;
        };
        let points = c
            .parts
            .iter()
            .filter(|part| !part.is_predicted())
            .map(|part| {
                let glen = part.linear.length().max(f64::MIN_POSITIVE);
                ContactPoint {
                    point: part.point.as_vec3(),
                    normal: (-part.linear / glen).as_vec3(),
                    depth: (part.volume / glen) as f32,
                    volume: part.volume as f32,
                }
            })
            .collect();
        if c.volume > 0.0 {
            // Torque about b's centre of mass: Σ (x − com) × g = τ_c + (c − com) × G.
            let com = bodies[c.b].position;
            let about_com = c.angular + (c.point - com).cross(c.linear);
            volume_out.write(IntersectionVolumeMessage {
                a: ea,
                b: eb,
                volume: c.volume as f32,
                force: (-c.linear).as_vec3(),
                torque: (-about_com).as_vec3(),
                point: c.point.as_vec3(),
                rays: c.rays as u32,
                sensor: !pw.sim.pair_exerts(k),
            });
        }
        contact_out.write(ContactMessage {
            a: ea,
            b: eb,
            points,
            triangle_pairs: c.triangle_pairs.clone(),
            contained: c.contained,
            sensor: !pw.sim.pair_exerts(k),
        });
    }
}

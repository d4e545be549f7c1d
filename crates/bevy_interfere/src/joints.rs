//! Joints as components, avian-style: a [`FixedJoint`], [`RevoluteJoint`], [`PrismaticJoint`],
//! [`SphericalJoint`] or [`DistanceJoint`] on an entity of its own names the two body entities
//! it connects; [`JointPlugin`] mirrors them into the simulation (`interfere_dynamics::Joint`,
//! solved with the contacts in the same solver) and writes back what each did
//! ([`JointForces`], [`JointBroken`]).
//!
//! Anchors are in each body entity's local frame (its `Transform`'s translation and rotation,
//! not its scale). The joint axis (hinge, slide, swing cone) is given in the first body's frame;
//! the second body's frame is fixed when the joint enters the simulation, so the relative
//! rotation the bodies have then is the joint's rest: a fixed joint keeps it, a hinge's angle
//! and a slider's rotation are measured from it. Changing a joint's component (a new motor
//! target, limit or compliance) changes the joint in place and keeps that rest; naming other
//! bodies replaces it. A joint whose bodies are not in the simulation yet (a collider still
//! being prepared) enters when they are; a joint whose body is despawned is removed with it.

use crate::world::PhysicsWorld;
use crate::{InterfereSystems, PhysicsSchedule};
use bevy::ecs::schedule::ScheduleLabel;
use bevy::platform::collections::{HashMap, HashSet};
use bevy::prelude::*;
use interfere_dynamics::{
    Body, Joint, JointCompliance, JointFrame, JointHandle, JointKind, JointLimit, JointMotor,
};
use interfere_geometry::glam::{DQuat, DVec3};

/// What every joint component holds besides its kind: the two bodies, their anchors and the
/// joint's options.
#[derive(Clone, Copy, Debug, PartialEq, Reflect)]
pub struct JointEnds {
    /// The first body's entity.
    pub body1: Entity,
    /// The second body's entity.
    pub body2: Entity,
    /// The anchor in the first body's local frame.
    pub local_anchor1: Vec3,
    /// The anchor in the second body's local frame.
    pub local_anchor2: Vec3,
    /// The joint axis in the first body's local frame (normalized on use; default X).
    pub local_axis1: Vec3,
    /// Breaking force (N): the joint stops acting for good above it.
    pub break_force: Option<f32>,
    /// Breaking torque (N·m).
    pub break_torque: Option<f32>,
    /// Whether the two bodies still collide (default false).
    pub collide_connected: bool,
    /// Spring–damper rows instead of rigid ones (linear N/m, N·s/m; angular N·m/rad, N·m·s/rad).
    #[reflect(ignore)]
    pub compliance: Option<JointCompliance>,
}

impl JointEnds {
    fn new(body1: Entity, body2: Entity) -> Self {
        Self {
            body1,
            body2,
            local_anchor1: Vec3::ZERO,
            local_anchor2: Vec3::ZERO,
            local_axis1: Vec3::X,
            break_force: None,
            break_torque: None,
            collide_connected: false,
            compliance: None,
        }
    }
}

/// A joint component: its ends and its kind in the simulation's terms.
pub trait JointComponent: Component {
    /// The bodies, anchors and options.
    fn ends(&self) -> &JointEnds;
    /// What it locks, with limits and motor.
    fn kind(&self) -> JointKind;
}

macro_rules! joint_component {
    ($name:ident, $doc:literal { $($(#[$fattr:meta])* $field:ident : $ty:ty = $default:expr, #[doc = $fdoc:literal])* } => |$s:ident| $kind:expr) => {
        #[doc = $doc]
        #[derive(Component, Clone, Copy, Debug, PartialEq, Reflect)]
        #[reflect(Component, Debug, PartialEq)]
        #[require(JointForces)]
        pub struct $name {
            /// The bodies, anchors and options.
            pub ends: JointEnds,
            $($(#[$fattr])* #[doc = $fdoc] pub $field: $ty,)*
        }

        impl $name {
            /// A joint between `body1` and `body2`, anchored at both entities' origins.
            pub fn new(body1: Entity, body2: Entity) -> Self {
                Self {
                    ends: JointEnds::new(body1, body2),
                    $($field: $default,)*
                }
            }

            /// The anchor in the first body's local frame.
            pub fn with_local_anchor_1(mut self, anchor: Vec3) -> Self {
                self.ends.local_anchor1 = anchor;
                self
            }

            /// The anchor in the second body's local frame.
            pub fn with_local_anchor_2(mut self, anchor: Vec3) -> Self {
                self.ends.local_anchor2 = anchor;
                self
            }

            /// The joint axis in the first body's local frame.
            pub fn with_local_axis(mut self, axis: Vec3) -> Self {
                self.ends.local_axis1 = axis;
                self
            }

            /// Breaks above this force (N).
            pub fn with_break_force(mut self, force: f32) -> Self {
                self.ends.break_force = Some(force);
                self
            }

            /// Breaks above this torque (N·m).
            pub fn with_break_torque(mut self, torque: f32) -> Self {
                self.ends.break_torque = Some(torque);
                self
            }

            /// Whether the connected bodies collide (default false).
            pub fn with_collide_connected(mut self, collide: bool) -> Self {
                self.ends.collide_connected = collide;
                self
            }

            /// Spring–damper rows instead of rigid ones.
            pub fn with_compliance(mut self, compliance: JointCompliance) -> Self {
                self.ends.compliance = Some(compliance);
                self
            }
        }

        impl JointComponent for $name {
            fn ends(&self) -> &JointEnds {
                &self.ends
            }
            fn kind(&self) -> JointKind {
                let $s = self;
                $kind
            }
        }
    };
}

fn limit(l: Option<Vec2>) -> Option<JointLimit> {
    l.map(|l| JointLimit::new(l.x as f64, l.y as f64))
}

joint_component!(FixedJoint, "Locks every relative degree of freedom of two bodies." {} => |_s| JointKind::Fixed);

joint_component!(RevoluteJoint, "A hinge about the joint axis." {
    angle_limit: Option<Vec2> = None, #[doc = "The hinge angle's range `(min, max)` in radians, within `[-π, π]`."]
    #[reflect(ignore)] motor: Option<JointMotor> = None, #[doc = "A motor on the hinge angle."]
} => |s| JointKind::Revolute { limit: limit(s.angle_limit), motor: s.motor });

joint_component!(PrismaticJoint, "A slider along the joint axis." {
    distance_limit: Option<Vec2> = None, #[doc = "The slide's range `(min, max)`."]
    #[reflect(ignore)] motor: Option<JointMotor> = None, #[doc = "A motor on the slide."]
} => |s| JointKind::Prismatic { limit: limit(s.distance_limit), motor: s.motor });

joint_component!(SphericalJoint, "A ball joint." {
    swing_limit: Option<f32> = None, #[doc = "The largest angle (radians) between the two bodies' joint axes."]
    twist_limit: Option<Vec2> = None, #[doc = "The twist's range `(min, max)` about the joint axis in radians, within `[-π, π]`."]
} => |s| JointKind::Spherical { swing_limit: s.swing_limit.map(f64::from), twist_limit: limit(s.twist_limit) });

joint_component!(DistanceJoint, "Keeps the anchors' distance within a range: a rope, a rod or (with compliance) a spring." {
    min_distance: f32 = 0.0, #[doc = "Shortest distance."]
    max_distance: f32 = 1.0, #[doc = "Longest distance."]
} => |s| JointKind::Distance { min: s.min_distance as f64, max: s.max_distance as f64 });

impl RevoluteJoint {
    /// With an angle range (radians).
    pub fn with_angle_limits(mut self, min: f32, max: f32) -> Self {
        self.angle_limit = Some(Vec2::new(min, max));
        self
    }

    /// With a motor.
    pub fn with_motor(mut self, motor: JointMotor) -> Self {
        self.motor = Some(motor);
        self
    }
}

impl PrismaticJoint {
    /// With a slide range.
    pub fn with_limits(mut self, min: f32, max: f32) -> Self {
        self.distance_limit = Some(Vec2::new(min, max));
        self
    }

    /// With a motor.
    pub fn with_motor(mut self, motor: JointMotor) -> Self {
        self.motor = Some(motor);
        self
    }
}

impl SphericalJoint {
    /// With a swing cone (radians).
    pub fn with_swing_limit(mut self, angle: f32) -> Self {
        self.swing_limit = Some(angle);
        self
    }

    /// With a twist range about the joint axis (radians).
    pub fn with_twist_limits(mut self, min: f32, max: f32) -> Self {
        self.twist_limit = Some(Vec2::new(min, max));
        self
    }
}

impl DistanceJoint {
    /// With a distance range (`min = max` for a rod, or a spring with compliance).
    pub fn with_limits(mut self, min: f32, max: f32) -> Self {
        self.min_distance = min;
        self.max_distance = max;
        self
    }
}

/// What a joint did in the last step (written back every step).
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Reflect)]
#[reflect(Component, Debug, Default, PartialEq)]
pub struct JointForces {
    /// Force on the second body (N).
    pub force: Vec3,
    /// Torque on the second body (N·m).
    pub torque: Vec3,
    /// The motor's force or torque along the axis.
    pub motor_force: f32,
    /// The joint broke and no longer acts.
    pub broken: bool,
}

/// A joint broke this step (its entity).
#[derive(Message, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct JointBroken(pub Entity);

/// The plugin's joints: which simulation joint each entity is.
#[derive(Resource, Default)]
pub(crate) struct JointMirror {
    joints: HashMap<Entity, (JointHandle, Entity, Entity)>,
    warned: HashSet<Entity>,
    broken: HashSet<Entity>,
}

/// Joints as components (see the module documentation).
pub struct JointPlugin;

impl Plugin for JointPlugin {
    fn build(&self, app: &mut App) {
        let schedule = app
            .world()
            .get_resource::<PhysicsSchedule>()
            .map(|s| s.0)
            .unwrap_or_else(|| FixedPostUpdate.intern());
        app.init_resource::<JointMirror>()
            .register_type::<FixedJoint>()
            .register_type::<RevoluteJoint>()
            .register_type::<PrismaticJoint>()
            .register_type::<SphericalJoint>()
            .register_type::<DistanceJoint>()
            .register_type::<JointForces>()
            .add_message::<JointBroken>()
            .add_systems(
                schedule,
                (
                    (
                        remove_joints,
                        sync_joints::<FixedJoint>,
                        sync_joints::<RevoluteJoint>,
                        sync_joints::<PrismaticJoint>,
                        sync_joints::<SphericalJoint>,
                        sync_joints::<DistanceJoint>,
                    )
                        .chain()
                        .in_set(InterfereSystems::Prepare)
                        .after(crate::forces::sync_drives),
                    write_joint_forces.in_set(InterfereSystems::Writeback),
                ),
            );
    }
}

type AnyJoint = Or<(
    With<FixedJoint>,
    With<RevoluteJoint>,
    With<PrismaticJoint>,
    With<SphericalJoint>,
    With<DistanceJoint>,
)>;

/// Removes the joints whose entity lost its joint component or is gone, and forgets those the
/// simulation removed with a body.
fn remove_joints(
    mut pw: ResMut<PhysicsWorld>,
    mut mirror: ResMut<JointMirror>,
    joints: Query<(), AnyJoint>,
) {
    let pw = &mut *pw;
    let gone: Vec<Entity> = mirror
        .joints
        .iter()
        .filter(|(e, (h, ..))| !joints.contains(**e) || pw.sim.joint(*h).is_none())
        .map(|(e, _)| *e)
        .collect();
    for e in gone {
        if let Some((h, ..)) = mirror.joints.remove(&e) {
            let _ = pw.sim.remove_joint(h);
        }
        mirror.broken.remove(&e);
    }
    mirror.warned.retain(|e| joints.contains(*e));
}

/// The body frame of a point and axis given in an entity's local frame (the body frame is the
/// mesh frame moved to the centre of mass).
fn body_frame(body: &Body, anchor: Vec3) -> DVec3 {
    anchor.as_dvec3() - body.local_center()
}

fn to_joint<T: JointComponent>(c: &T, a: &Body, b: &Body, rest: Option<DQuat>) -> Joint {
    let e = c.ends();
    let axis = e.local_axis1.as_dvec3().normalize_or(DVec3::X);
    let rot_a = DQuat::from_rotation_arc(DVec3::X, axis);
    // The second frame: the first's rotation carried into body B at the current pose (the rest).
    let rot_b =
        rest.unwrap_or_else(|| (b.orientation.inverse() * a.orientation * rot_a).normalize());
    let mut j = Joint::new(
        c.kind(),
        JointFrame {
            anchor: body_frame(a, e.local_anchor1),
            rotation: rot_a,
        },
        JointFrame {
            anchor: body_frame(b, e.local_anchor2),
            rotation: rot_b,
        },
    );
    j.break_force = e.break_force.map(f64::from);
    j.break_torque = e.break_torque.map(f64::from);
    j.collide_connected = e.collide_connected;
    j.compliance = e.compliance;
    j
}

/// Inserts new joints of kind `T` (once both bodies are in the simulation) and updates changed
/// ones.
fn sync_joints<T: JointComponent>(
    mut pw: ResMut<PhysicsWorld>,
    mut mirror: ResMut<JointMirror>,
    joints: Query<(Entity, Ref<T>)>,
) {
    let pw = &mut *pw;
    let mirror = &mut *mirror;
    for (entity, c) in &joints {
        let e = c.ends();
        let existing = mirror.joints.get(&entity).copied();
        if let Some((h, b1, b2)) = existing {
            if !c.is_changed() {
                continue;
            }
            if b1 == e.body1 && b2 == e.body2 {
                let (Some(a), Some(b)) = (pw.body(b1), pw.body(b2)) else {
                    continue;
                };
                let rest = pw.sim.joint(h).map(|j| j.frame_b.rotation);
                let joint = to_joint(&*c, a, b, rest);
                if let Err(err) = pw.sim.set_joint(h, joint)
                    && mirror.warned.insert(entity)
                {
                    warn!("interfere: joint {entity} change refused: {err}");
                }
                continue;
            }
            let _ = pw.sim.remove_joint(h);
            mirror.joints.remove(&entity);
        }
        let (Some(h1), Some(h2)) = (pw.handle(e.body1), pw.handle(e.body2)) else {
            continue;
        };
        let (Some(a), Some(b)) = (pw.sim.body(h1), pw.sim.body(h2)) else {
            continue;
        };
        let joint = to_joint(&*c, a, b, None);
        match pw.sim.insert_joint(h1, h2, joint) {
            Ok(h) => {
                mirror.joints.insert(entity, (h, e.body1, e.body2));
                mirror.warned.remove(&entity);
            }
            Err(err) => {
                if mirror.warned.insert(entity) {
                    warn!("interfere: joint {entity} refused: {err}");
                }
            }
        }
    }
}

/// Writes each joint's forces back and sends [`JointBroken`] once when one breaks.
fn write_joint_forces(
    pw: Res<PhysicsWorld>,
    mut mirror: ResMut<JointMirror>,
    mut forces: Query<&mut JointForces>,
    mut broken: MessageWriter<JointBroken>,
) {
    let mirror = &mut *mirror;
    for (entity, (h, ..)) in &mirror.joints {
        let Some(state) = pw.sim.joint_state(*h) else {
            continue;
        };
        if let Ok(mut f) = forces.get_mut(*entity) {
            let new = JointForces {
                force: state.force.as_vec3(),
                torque: state.torque.as_vec3(),
                motor_force: state.motor_force as f32,
                broken: state.broken,
            };
            f.set_if_neq(new);
        }
        if state.broken && mirror.broken.insert(*entity) {
            broken.write(JointBroken(*entity));
        }
    }
}

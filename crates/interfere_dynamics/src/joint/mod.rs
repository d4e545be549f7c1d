//! Joints: what connects two bodies (fixed, revolute, prismatic, spherical, distance), with
//! limits, motors, compliance in physical units and a breaking force. The solver's rows for them
//! are in `crate::solver::joint_rows`; they are solved with the contacts in the same
//! sequential-impulse iterations and projected with them (post-stabilization, no Baumgarte).
//!
//! A joint holds a frame on each body ([`JointFrame`]: an anchor and a rotation in the body
//! frame, about its centre of mass). The joint's axis is the frame's X axis (the hinge of a
//! revolute joint, the slide of a prismatic one, the cone axis of a spherical joint's swing
//! limit); its reference direction for angles is the frame's Y axis. Which of the six relative
//! degrees of freedom are locked follows the kind:
//!
//! | kind | locked | free (limit and motor act on) |
//! |---|---|---|
//! | [`JointKind::Fixed`] | all six | — |
//! | [`JointKind::Revolute`] | anchors together, axes aligned | the angle about X |
//! | [`JointKind::Prismatic`] | rotation, the anchors' offset across X | the offset along X |
//! | [`JointKind::Spherical`] | anchors together | rotation (swing cone about X, twist range about X) |
//! | [`JointKind::Distance`] | the anchors' distance within `[min, max]` | the rest |

use crate::body::Body;
use interfere_geometry::glam::{DQuat, DVec3};
use serde::{Deserialize, Serialize};

/// A frame on a body: an anchor point and a rotation, both in the body frame (origin at the
/// centre of mass, the axes of [`Body::orientation`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct JointFrame {
    /// The anchor, in the body frame.
    pub anchor: DVec3,
    /// The frame's rotation relative to the body frame; its X axis is the joint axis.
    pub rotation: DQuat,
}

impl Default for JointFrame {
    fn default() -> Self {
        Self {
            anchor: DVec3::ZERO,
            rotation: DQuat::IDENTITY,
        }
    }
}

impl JointFrame {
    /// The frame of `body` that is at world point `anchor` with world rotation `rotation` in the
    /// body's current pose.
    pub fn from_world(body: &Body, anchor: DVec3, rotation: DQuat) -> Self {
        let inv = body.orientation.inverse();
        Self {
            anchor: inv * (anchor - body.position),
            rotation: (inv * rotation).normalize(),
        }
    }

    /// The anchor in world space for `body`'s current pose.
    pub fn world_anchor(&self, body: &Body) -> DVec3 {
        body.position + body.orientation * self.anchor
    }

    /// The frame's world rotation for `body`'s current pose.
    pub fn world_rotation(&self, body: &Body) -> DQuat {
        body.orientation * self.rotation
    }
}

/// A range for a joint's free coordinate (radians for angles, world units for lengths).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct JointLimit {
    /// Lower bound.
    pub min: f64,
    /// Upper bound (at least `min`).
    pub max: f64,
}

impl JointLimit {
    /// The range `[min, max]`.
    pub fn new(min: f64, max: f64) -> Self {
        Self { min, max }
    }
}

/// A motor on a joint's free coordinate: it drives the coordinate's rate to `target_velocity`
/// and, with a `target_position`, acts as an implicit spring–damper towards it (force
/// `−stiffness (x − target) − damping (ẋ − target_velocity)`, integrated implicitly so any
/// stiffness is stable), never exerting more than `max_force` (N, or N·m for angles).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JointMotor {
    /// The rate the motor drives to (rad/s or units/s).
    #[serde(default)]
    pub target_velocity: f64,
    /// The position the motor drives to (radians or units); none for a velocity motor.
    #[serde(default)]
    pub target_position: Option<f64>,
    /// Spring stiffness towards `target_position` (N/m or N·m/rad).
    #[serde(default)]
    pub stiffness: f64,
    /// Damping of the rate towards `target_velocity` (N·s/m or N·m·s/rad) for a position
    /// motor; a velocity motor is rigid up to `max_force`.
    #[serde(default)]
    pub damping: f64,
    /// The largest force (N) or torque (N·m) the motor exerts.
    pub max_force: f64,
}

impl JointMotor {
    /// A motor that drives the rate to `speed` with at most `max_force`.
    pub fn velocity(speed: f64, max_force: f64) -> Self {
        Self {
            target_velocity: speed,
            target_position: None,
            stiffness: 0.0,
            damping: 0.0,
            max_force,
        }
    }

    /// A spring–damper motor towards `target` with at most `max_force`.
    pub fn position(target: f64, stiffness: f64, damping: f64, max_force: f64) -> Self {
        Self {
            target_velocity: 0.0,
            target_position: Some(target),
            stiffness,
            damping,
            max_force,
        }
    }
}

/// Compliance of a joint's locked rows and limits as a spring–damper in physical units,
/// integrated implicitly (the soft-constraint form of an implicit Euler spring), so a joint can
/// be a spring (a distance joint with `min = max` is a spring of that rest length) or a
/// slightly soft hinge. Without it the rows are rigid.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JointCompliance {
    /// Stiffness of the linear rows (N/m).
    pub linear_stiffness: f64,
    /// Damping of the linear rows (N·s/m).
    #[serde(default)]
    pub linear_damping: f64,
    /// Stiffness of the angular rows (N·m/rad).
    #[serde(default)]
    pub angular_stiffness: f64,
    /// Damping of the angular rows (N·m·s/rad).
    #[serde(default)]
    pub angular_damping: f64,
}

/// Which degrees of freedom a joint locks (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum JointKind {
    /// Locks all six relative degrees of freedom.
    Fixed,
    /// A hinge about the frames' X axis.
    Revolute {
        /// Range of the hinge angle (radians, from frame B's Y axis relative to frame A's,
        /// counter-clockwise about X), within (−π, π].
        #[serde(default)]
        limit: Option<JointLimit>,
        /// A motor on the hinge angle.
        #[serde(default)]
        motor: Option<JointMotor>,
    },
    /// A slider along the frames' X axis.
    Prismatic {
        /// Range of the offset of anchor B from anchor A along A's X axis.
        #[serde(default)]
        limit: Option<JointLimit>,
        /// A motor on the offset.
        #[serde(default)]
        motor: Option<JointMotor>,
    },
    /// A ball joint.
    Spherical {
        /// The largest angle (radians, below π) between the frames' X axes.
        #[serde(default)]
        swing_limit: Option<f64>,
        /// The range (radians, within `[−π, π]`) of the twist about the X axes: the angle of the
        /// twist part of the swing–twist decomposition of B's frame relative to A's.
        #[serde(default)]
        twist_limit: Option<JointLimit>,
    },
    /// Keeps the anchors' distance within `[min, max]`: a rope (`min = 0`), a rod (`min = max`)
    /// or, with [`JointCompliance`], a spring of rest length `min = max`.
    Distance {
        /// Shortest distance.
        min: f64,
        /// Longest distance.
        max: f64,
    },
}

/// A joint between two bodies (the bodies are named when it is inserted, see
/// [`crate::Simulation::insert_joint`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Joint {
    /// What it locks.
    pub kind: JointKind,
    /// The frame on the first body.
    pub frame_a: JointFrame,
    /// The frame on the second body.
    pub frame_b: JointFrame,
    /// Soft rows; rigid when none.
    pub compliance: Option<JointCompliance>,
    /// The joint breaks (stops acting, for good) when the force of its locked linear rows
    /// exceeds this (N).
    pub break_force: Option<f64>,
    /// The joint breaks when the torque of its locked angular rows exceeds this (N·m).
    pub break_torque: Option<f64>,
    /// Whether the two bodies still collide with each other (default false, as in avian and
    /// rapier).
    pub collide_connected: bool,
}

impl Joint {
    /// A joint with the given frames.
    pub fn new(kind: JointKind, frame_a: JointFrame, frame_b: JointFrame) -> Self {
        Self {
            kind,
            frame_a,
            frame_b,
            compliance: None,
            break_force: None,
            break_torque: None,
            collide_connected: false,
        }
    }

    /// A joint whose frames meet at world point `anchor` with their X axes along world `axis` in
    /// the bodies' current poses (for a distance joint the frames sit at `anchor` and
    /// `anchor_b` is given with [`Self::with_world_anchor_b`]).
    pub fn at_world(kind: JointKind, a: &Body, b: &Body, anchor: DVec3, axis: DVec3) -> Self {
        let rotation = DQuat::from_rotation_arc(DVec3::X, axis.normalize_or(DVec3::X));
        Self::new(
            kind,
            JointFrame::from_world(a, anchor, rotation),
            JointFrame::from_world(b, anchor, rotation),
        )
    }

    /// Moves body B's anchor to world point `anchor` (current pose), keeping its rotation.
    pub fn with_world_anchor_b(mut self, b: &Body, anchor: DVec3) -> Self {
        self.frame_b.anchor = b.orientation.inverse() * (anchor - b.position);
        self
    }

    /// With compliance.
    pub fn with_compliance(mut self, compliance: JointCompliance) -> Self {
        self.compliance = Some(compliance);
        self
    }

    /// With a breaking force (N).
    pub fn with_break_force(mut self, force: f64) -> Self {
        self.break_force = Some(force);
        self
    }

    /// With a breaking torque (N·m).
    pub fn with_break_torque(mut self, torque: f64) -> Self {
        self.break_torque = Some(torque);
        self
    }

    /// Whether the connected bodies collide.
    pub fn with_collide_connected(mut self, collide: bool) -> Self {
        self.collide_connected = collide;
        self
    }

    /// Checks every number (finite, ranges ordered, stiffness and forces non-negative).
    pub fn validate(&self) -> Result<(), JointError> {
        let finite3 = |v: DVec3, what: &'static str| {
            if v.is_finite() {
                Ok(())
            } else {
                Err(JointError::NonFinite(what))
            }
        };
        finite3(self.frame_a.anchor, "frame_a.anchor")?;
        finite3(self.frame_b.anchor, "frame_b.anchor")?;
        for (q, what) in [
            (self.frame_a.rotation, "frame_a.rotation"),
            (self.frame_b.rotation, "frame_b.rotation"),
        ] {
            if !q.is_finite() || (q.length() - 1.0).abs() > 1e-6 {
                return Err(JointError::NonFinite(what));
            }
        }
        let nonneg = |x: Option<f64>, what: &'static str| match x {
            Some(x) if !(x.is_finite() && x >= 0.0) => Err(JointError::Negative(what)),
            _ => Ok(()),
        };
        nonneg(self.break_force, "break_force")?;
        nonneg(self.break_torque, "break_torque")?;
        if let Some(c) = self.compliance {
            for (x, what) in [
                (c.linear_stiffness, "compliance.linear_stiffness"),
                (c.linear_damping, "compliance.linear_damping"),
                (c.angular_stiffness, "compliance.angular_stiffness"),
                (c.angular_damping, "compliance.angular_damping"),
            ] {
                nonneg(Some(x), what)?;
            }
            if c.linear_stiffness + c.linear_damping <= 0.0
                && !matches!(self.kind, JointKind::Spherical { .. })
                || c.angular_stiffness + c.angular_damping <= 0.0
                    && !matches!(self.kind, JointKind::Distance { .. })
            {
                return Err(JointError::Negative(
                    "compliance: a row with neither stiffness nor damping is no constraint",
                ));
            }
        }
        let limit = |l: Option<JointLimit>| match l {
            Some(l) if !(l.min.is_finite() && l.max.is_finite() && l.min <= l.max) => {
                Err(JointError::BadLimit {
                    min: l.min,
                    max: l.max,
                })
            }
            _ => Ok(()),
        };
        let motor = |m: Option<JointMotor>| match m {
            Some(m) => {
                if !(m.target_velocity.is_finite() && m.target_position.is_none_or(f64::is_finite))
                {
                    return Err(JointError::NonFinite("motor target"));
                }
                nonneg(Some(m.stiffness), "motor.stiffness")?;
                nonneg(Some(m.damping), "motor.damping")?;
                nonneg(Some(m.max_force), "motor.max_force")?;
                if m.target_position.is_some() && m.stiffness + m.damping <= 0.0 {
                    return Err(JointError::Negative(
                        "motor: a position motor needs stiffness or damping",
                    ));
                }
                Ok(())
            }
            None => Ok(()),
        };
        match self.kind {
            JointKind::Fixed => Ok(()),
            JointKind::Revolute { limit: l, motor: m } => {
                limit(l)?;
                if let Some(l) = l
                    && (l.min < -std::f64::consts::PI || l.max > std::f64::consts::PI)
                {
                    return Err(JointError::BadLimit {
                        min: l.min,
                        max: l.max,
                    });
                }
                motor(m)
            }
            JointKind::Prismatic { limit: l, motor: m } => {
                limit(l)?;
                motor(m)
            }
            JointKind::Spherical {
                swing_limit,
                twist_limit,
            } => {
                if let Some(s) = swing_limit
                    && !(s.is_finite() && (0.0..std::f64::consts::PI).contains(&s))
                {
                    return Err(JointError::BadLimit { min: 0.0, max: s });
                }
                limit(twist_limit)?;
                if let Some(l) = twist_limit
                    && (l.min < -std::f64::consts::PI || l.max > std::f64::consts::PI)
                {
                    return Err(JointError::BadLimit {
                        min: l.min,
                        max: l.max,
                    });
                }
                Ok(())
            }
            JointKind::Distance { min, max } => {
                limit(Some(JointLimit { min, max }))?;
                if min < 0.0 {
                    return Err(JointError::BadLimit { min, max });
                }
                Ok(())
            }
        }
    }
}

/// A joint of a [`crate::Simulation`]: its index and the slot's generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JointHandle {
    pub(crate) index: u32,
    pub(crate) generation: u32,
}

/// What a joint did in the last step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct JointState {
    /// The force its locked and limit linear rows exerted on body B over the last substep (N).
    pub force: DVec3,
    /// The torque its locked and limit angular rows exerted on body B over the last substep
    /// (N·m, about the anchor).
    pub torque: DVec3,
    /// The motor's force or torque over the last substep (N or N·m, along the axis).
    pub motor_force: f64,
    /// It broke (exceeded its breaking force or torque) and no longer acts.
    pub broken: bool,
}

/// Why a joint was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum JointError {
    /// A body handle does not name a living body.
    #[error("joint body is not in the simulation (removed, or from another simulation)")]
    NoBody,
    /// Both ends are the same body.
    #[error("a joint needs two different bodies")]
    SameBody,
    /// The joint handle does not name a living joint.
    #[error("no joint {0:?} (removed, or from another simulation)")]
    NoJoint(JointHandle),
    /// A number is not finite (or a rotation not a unit quaternion).
    #[error("joint {0} is not finite")]
    NonFinite(&'static str),
    /// A stiffness, damping, force or torque is negative (or a row has no constraint).
    #[error("joint {0} must be finite and non-negative")]
    Negative(&'static str),
    /// A limit's range is empty or out of bounds.
    #[error("joint limit [{min}, {max}] is not an ordered finite range (angles within [-π, π])")]
    BadLimit {
        /// Lower bound.
        min: f64,
        /// Upper bound.
        max: f64,
    },
}

//! The components a game puts on its entities: the body kind, velocities, mass and material.
//!
//! `Transform` is the source of truth for where a body is, in and out: the plugin reads it
//! before every step (a transform changed by the game teleports the body) and writes it back
//! after. The simulation itself keeps `f64` state between steps, so a body that nobody moves does
//! not accumulate `f32` rounding.

use bevy::prelude::*;

/// How a body moves (Lin–Manocha 1996 §5: static, scripted and free bodies).
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Reflect)]
#[reflect(Component, Debug, Default, PartialEq)]
#[require(Transform, LinearVelocity, AngularVelocity)]
pub enum RigidBody {
    /// Moved by gravity and contacts; needs a [`crate::Collider`] (its mass comes from the shape
    /// and the [`Density`] or [`Mass`]).
    #[default]
    Dynamic,
    /// Never moves; infinite mass.
    Static,
    /// Moved only by its velocity components (or by the game through `Transform`); pushes
    /// dynamic bodies, is not pushed back.
    Kinematic,
}

/// Linear velocity of the body's centre of mass, in world units per second.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Deref, DerefMut, Reflect)]
#[reflect(Component, Debug, Default, PartialEq)]
pub struct LinearVelocity(pub Vec3);

/// Angular velocity in radians per second (world axes).
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Deref, DerefMut, Reflect)]
#[reflect(Component, Debug, Default, PartialEq)]
pub struct AngularVelocity(pub Vec3);

/// Density of a dynamic body, in mass per unit volume (default 1000, water in kg/m³). Ignored
/// when a [`Mass`] is present.
#[derive(Component, Clone, Copy, Debug, PartialEq, Deref, DerefMut, Reflect)]
#[reflect(Component, Debug, Default, PartialEq)]
pub struct Density(pub f32);

impl Default for Density {
    fn default() -> Self {
        Density(1000.0)
    }
}

/// Total mass of a dynamic body; the density is chosen to match it (the inertia follows the
/// shape). Must be positive and finite, otherwise the body is refused with a warning.
#[derive(Component, Clone, Copy, Debug, PartialEq, Deref, DerefMut, Reflect)]
#[reflect(Component, Debug, PartialEq)]
pub struct Mass(pub f32);

/// Coulomb friction coefficients. Two bodies in contact use the geometric mean of their
/// coefficients (so a frictionless body is frictionless against anything).
#[derive(Component, Clone, Copy, Debug, PartialEq, Reflect)]
#[reflect(Component, Debug, Default, PartialEq)]
pub struct Friction {
    /// Coefficient while the contact sticks.
    pub static_coefficient: f32,
    /// Coefficient while it slides.
    pub dynamic_coefficient: f32,
}

impl Friction {
    /// The same coefficient for sticking and sliding.
    pub fn new(coefficient: f32) -> Self {
        Self {
            static_coefficient: coefficient,
            dynamic_coefficient: coefficient,
        }
    }
}

impl Default for Friction {
    /// The default material (0.5).
    fn default() -> Self {
        Friction::new(0.5)
    }
}

/// Coefficient of restitution in `[0, 1]` (the larger of two bodies' values is used).
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Deref, DerefMut, Reflect)]
#[reflect(Component, Debug, Default, PartialEq)]
pub struct Restitution(pub f32);

/// Present while a dynamic body sleeps: it is treated as static until something wakes it (a
/// velocity or transform set by the game, removing this component, or contact with an awake
/// body). Inserted by the plugin after `PhysicsSettings::sleep.time_to_sleep` seconds below the
/// speed thresholds.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Component, Debug, Default, PartialEq)]
pub struct Sleeping;

/// A body that left the world bound ([`crate::PhysicsSettings::world_bound`]) or whose state
/// stopped being finite: it is out of the simulation until this component is removed.
#[derive(Component, Clone, Copy, Debug, PartialEq, Reflect)]
#[reflect(Component, Debug, PartialEq)]
pub struct Parked {
    /// Where its centre was when it was parked (may be non-finite).
    pub position: Vec3,
}

/// Opt a body out of sleeping.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Component, Debug, Default, PartialEq)]
pub struct NeverSleep;

// ---------------------------------------------------------------------------------------------
// Driving bodies: forces, torques, impulses, damping, locked axes, gravity scale, speed limits.
// Mirrored into the simulation by `crate::forces` before every step; they act on dynamic bodies
// only. Names and meanings follow avian3d's where they can.
// ---------------------------------------------------------------------------------------------

/// A force on a dynamic body that acts every step until it is changed or removed.
///
/// By default the force is in world axes and acts through the centre of mass. With
/// [`Self::at_point`] it acts at that point, adding the torque `(point − centre of mass) × force`
/// (recomputed every step from the body's current centre of mass). With [`Self::local`] the force
/// and the point are in the body's own frame (the entity's translation and rotation; the
/// collider's baked scale is already in world units), so a thruster turns with the body; they are
/// turned into world axes at the start of each step and held through its substeps.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Reflect)]
#[reflect(Component, Debug, Default, PartialEq)]
pub struct ExternalForce {
    /// The force (mass × length / s²).
    pub force: Vec3,
    /// Where it acts (`None`: the centre of mass).
    pub at_point: Option<Vec3>,
    /// Whether `force` and `at_point` are in the body's frame.
    pub local: bool,
}

impl ExternalForce {
    /// A world-frame force through the centre of mass.
    pub fn new(force: Vec3) -> Self {
        Self {
            force,
            at_point: None,
            local: false,
        }
    }

    /// Acting at `point` (world, or body frame with [`Self::with_local`]).
    pub fn with_point(mut self, point: Vec3) -> Self {
        self.at_point = Some(point);
        self
    }

    /// In the body's frame (`true`) or world axes (`false`, the default).
    pub fn with_local(mut self, local: bool) -> Self {
        self.local = local;
        self
    }
}

/// A torque on a dynamic body (about its centre of mass) that acts every step until it is
/// changed or removed; world axes, or the body's axes with `local`.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Reflect)]
#[reflect(Component, Debug, Default, PartialEq)]
pub struct ExternalTorque {
    /// The torque (mass × length² / s²).
    pub torque: Vec3,
    /// Whether `torque` is in the body's axes.
    pub local: bool,
}

impl ExternalTorque {
    /// A world-frame torque.
    pub fn new(torque: Vec3) -> Self {
        Self {
            torque,
            local: false,
        }
    }

    /// In the body's axes (`true`) or world axes (`false`, the default).
    pub fn with_local(mut self, local: bool) -> Self {
        self.local = local;
        self
    }
}

/// A one-shot impulse: applied once at the start of the next simulated step (linear momentum
/// changes by `impulse`, angular momentum by `(point − centre of mass) × impulse`), after which
/// the plugin sets `impulse` back to zero and leaves the component in place, so the game can set
/// it again. Frames and the point as for [`ExternalForce`]. Impulses set while paused wait for
/// the next step.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Reflect)]
#[reflect(Component, Debug, Default, PartialEq)]
pub struct ExternalImpulse {
    /// The impulse (mass × length / s).
    pub impulse: Vec3,
    /// Where it acts (`None`: the centre of mass).
    pub at_point: Option<Vec3>,
    /// Whether `impulse` and `at_point` are in the body's frame.
    pub local: bool,
}

impl ExternalImpulse {
    /// A world-frame impulse through the centre of mass.
    pub fn new(impulse: Vec3) -> Self {
        Self {
            impulse,
            at_point: None,
            local: false,
        }
    }

    /// Acting at `point` (world, or body frame with [`Self::with_local`]).
    pub fn with_point(mut self, point: Vec3) -> Self {
        self.at_point = Some(point);
        self
    }

    /// In the body's frame (`true`) or world axes (`false`, the default).
    pub fn with_local(mut self, local: bool) -> Self {
        self.local = local;
        self
    }
}

/// A one-shot angular impulse about the centre of mass: applied once at the start of the next
/// simulated step, then set back to zero (the component stays).
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Reflect)]
#[reflect(Component, Debug, Default, PartialEq)]
pub struct ExternalAngularImpulse {
    /// The angular impulse (mass × length² / s).
    pub impulse: Vec3,
    /// Whether `impulse` is in the body's axes.
    pub local: bool,
}

impl ExternalAngularImpulse {
    /// A world-frame angular impulse.
    pub fn new(impulse: Vec3) -> Self {
        Self {
            impulse,
            local: false,
        }
    }

    /// In the body's axes (`true`) or world axes (`false`, the default).
    pub fn with_local(mut self, local: bool) -> Self {
        self.local = local;
        self
    }
}

/// Linear damping per second (default 0): every substep of length `h` the velocity is divided by
/// `1 + c h` (after gravity and forces), so a body under a constant acceleration `a` tends to
/// `a / c`. Must be finite and non-negative.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Deref, DerefMut, Reflect)]
#[reflect(Component, Debug, Default, PartialEq)]
pub struct LinearDamping(pub f32);

/// Angular damping per second (default 0), as [`LinearDamping`] for the angular velocity.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Deref, DerefMut, Reflect)]
#[reflect(Component, Debug, Default, PartialEq)]
pub struct AngularDamping(pub f32);

/// Multiplies gravity on the body (default 1: 0 floats, 2 falls twice as fast, negative rises).
#[derive(Component, Clone, Copy, Debug, PartialEq, Deref, DerefMut, Reflect)]
#[reflect(Component, Debug, Default, PartialEq)]
pub struct GravityScale(pub f32);

impl Default for GravityScale {
    fn default() -> Self {
        GravityScale(1.0)
    }
}

/// The largest linear speed of the body (default: no limit); clamped every substep after the
/// contacts are solved. Must be non-negative (`f32::INFINITY` for no limit).
#[derive(Component, Clone, Copy, Debug, PartialEq, Deref, DerefMut, Reflect)]
#[reflect(Component, Debug, Default, PartialEq)]
pub struct MaxLinearSpeed(pub f32);

impl Default for MaxLinearSpeed {
    fn default() -> Self {
        MaxLinearSpeed(f32::INFINITY)
    }
}

/// The largest angular speed in radians per second (default: no limit).
#[derive(Component, Clone, Copy, Debug, PartialEq, Deref, DerefMut, Reflect)]
#[reflect(Component, Debug, Default, PartialEq)]
pub struct MaxAngularSpeed(pub f32);

impl Default for MaxAngularSpeed {
    fn default() -> Self {
        MaxAngularSpeed(f32::INFINITY)
    }
}

/// World axes along which a dynamic body can neither translate nor rotate: neither forces,
/// impulses, gravity nor contacts move it along them (its inverse mass and inertia are zero
/// there, and its velocity along them is zeroed). Bits 0–2 lock translation along x, y, z; bits
/// 3–5 rotation about x, y, z.
///
/// The ECS wrapper of [`interfere_dynamics::LockedAxes`] (the simulation's own type, which the
/// mirror builds from these bits every step), with builder methods and Bevy reflection.
///
/// ```
/// # use bevy_interfere::LockedAxes;
/// // A character that only turns about the vertical axis.
/// let upright = LockedAxes::new().lock_rotation_x().lock_rotation_z();
/// assert!(upright.is_rotation_x_locked() && !upright.is_rotation_y_locked());
/// ```
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Reflect)]
#[reflect(Component, Debug, Default, PartialEq)]
pub struct LockedAxes(pub u8);

impl LockedAxes {
    /// All translation locked, rotation free.
    pub const TRANSLATION_LOCKED: Self = Self(0b000_111);
    /// All rotation locked, translation free.
    pub const ROTATION_LOCKED: Self = Self(0b111_000);
    /// Everything locked.
    pub const ALL_LOCKED: Self = Self(0b111_111);

    /// Nothing locked.
    pub const fn new() -> Self {
        Self(0)
    }

    /// Locks translation along world x.
    pub const fn lock_translation_x(self) -> Self {
        Self(self.0 | 1)
    }
    /// Locks translation along world y.
    pub const fn lock_translation_y(self) -> Self {
        Self(self.0 | 1 << 1)
    }
    /// Locks translation along world z.
    pub const fn lock_translation_z(self) -> Self {
        Self(self.0 | 1 << 2)
    }
    /// Locks rotation about world x.
    pub const fn lock_rotation_x(self) -> Self {
        Self(self.0 | 1 << 3)
    }
    /// Locks rotation about world y.
    pub const fn lock_rotation_y(self) -> Self {
        Self(self.0 | 1 << 4)
    }
    /// Locks rotation about world z.
    pub const fn lock_rotation_z(self) -> Self {
        Self(self.0 | 1 << 5)
    }
    /// Whether translation along x is locked.
    pub const fn is_translation_x_locked(self) -> bool {
        self.0 & 1 != 0
    }
    /// Whether translation along y is locked.
    pub const fn is_translation_y_locked(self) -> bool {
        self.0 & 1 << 1 != 0
    }
    /// Whether translation along z is locked.
    pub const fn is_translation_z_locked(self) -> bool {
        self.0 & 1 << 2 != 0
    }
    /// Whether rotation about x is locked.
    pub const fn is_rotation_x_locked(self) -> bool {
        self.0 & 1 << 3 != 0
    }
    /// Whether rotation about y is locked.
    pub const fn is_rotation_y_locked(self) -> bool {
        self.0 & 1 << 4 != 0
    }
    /// Whether rotation about z is locked.
    pub const fn is_rotation_z_locked(self) -> bool {
        self.0 & 1 << 5 != 0
    }
}

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

/// Opt a body out of sleeping.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Component, Debug, Default, PartialEq)]
pub struct NeverSleep;

//! Rigid bodies: kind (static, kinematic, dynamic), `f64` pose (centre-of-mass position and unit
//! quaternion), velocities, mass, body-frame inverse inertia and contact material.
//!
//! These are the state variables advanced by the impulse-based dynamics of Lin–Manocha 1996 §5
//! ("an impulse was applied to the object at each contact before advancing the clock") and by the
//! impulse/post-stabilization scheme Wang–Faure–Pai 2012 §7 use with volume contacts.
//!
//! A dynamic body is also *driven* by what the game sets on it (no paper; the usual game-engine
//! controls), all in world axes and acting only while the body is dynamic and awake:
//!
//! - a persistent force and torque (kept until changed; a force at a point `p` adds the torque
//!   `(p − c) × F` about the centre of mass `c` at the time it is set);
//! - one-shot impulses and angular impulses, queued and applied once at the start of the next step
//!   (`Δv = J / m`, `Δω = I⁻¹ (r × J + A)` with the world inverse inertia of that moment), then
//!   cleared;
//! - a gravity scale;
//! - linear and angular damping `c` (per second): every substep of length `h`, after gravity and
//!   the forces, `v ← v / (1 + c h)` (implicit Euler for `dv/dt = a − c v`; the terminal velocity
//!   under a constant acceleration `a` is `a / c`, and with `a = 0` the speed after `n` substeps
//!   is exactly `v₀ (1 + c h)⁻ⁿ` up to rounding);
//! - locked axes ([`LockedAxes`], world axes): a locked translation axis has zero inverse mass
//!   along it and a locked rotation axis zero inverse inertia (`P I⁻¹ P` with `P` the projection
//!   on the free axes), in the integrator and in the contact solver, and the velocity along it is
//!   zeroed every substep, so neither forces nor contacts move the body along it;
//! - a maximum linear and angular speed, clamped every substep after the contact solver (before
//!   the positions advance).
//!
//! Every setter refuses non-finite or out-of-range input with [`BodyError::BadInput`] naming the
//! field, leaving the body unchanged. With the defaults (scale 1, no damping, nothing locked, no
//! limits, no force) the step computes exactly what it computed before these controls existed,
//! bit for bit.

pub(crate) mod mass;

use crate::body::mass::MassProperties;
use interfere_geometry::DPose;
use interfere_geometry::glam::{DMat3, DQuat, DVec3};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Index of a body in its [`crate::Simulation`] (the slot of its handle).
pub type BodyId = usize;

/// Why a body could not be built.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum BodyError {
    /// Mass not finite and positive.
    #[error("mass must be finite and positive, got {0}")]
    BadMass(f64),
    /// The inertia tensor is not symmetric positive definite.
    #[error("the inertia tensor is not positive definite")]
    BadInertia,
    /// A position, orientation or velocity is not finite, or the orientation has zero length.
    #[error("non-finite or degenerate pose or velocity")]
    BadState,
    /// A driving input (force, torque, impulse, point, damping, gravity scale, speed limit) was
    /// refused; the body is unchanged.
    #[error("{field} refused: {reason}")]
    BadInput {
        /// The field or argument, e.g. `"linear_damping"` or `"impulse"`.
        field: &'static str,
        /// Why, with the value.
        reason: String,
    },
}

/// Axes along which a dynamic body can neither translate nor rotate, in **world** axes. A small
/// bit set: combine with `|`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct LockedAxes(u8);

impl LockedAxes {
    /// Nothing locked.
    pub const NONE: Self = Self(0);
    /// No translation along world x.
    pub const TRANSLATION_X: Self = Self(1);
    /// No translation along world y.
    pub const TRANSLATION_Y: Self = Self(1 << 1);
    /// No translation along world z.
    pub const TRANSLATION_Z: Self = Self(1 << 2);
    /// No rotation about world x.
    pub const ROTATION_X: Self = Self(1 << 3);
    /// No rotation about world y.
    pub const ROTATION_Y: Self = Self(1 << 4);
    /// No rotation about world z.
    pub const ROTATION_Z: Self = Self(1 << 5);
    /// No translation at all.
    pub const TRANSLATION: Self = Self(0b111);
    /// No rotation at all.
    pub const ROTATION: Self = Self(0b111_000);
    /// Everything locked (the body stays put, whatever pushes it).
    pub const ALL: Self = Self(0b111_111);

    /// From bits (bit 0–2: translation x, y, z; bit 3–5: rotation x, y, z; higher bits are
    /// ignored).
    pub const fn from_bits(bits: u8) -> Self {
        Self(bits & 0b111_111)
    }

    /// The bits (see [`Self::from_bits`]).
    pub const fn bits(self) -> u8 {
        self.0
    }

    /// Both sets of locks.
    pub const fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// Whether every lock of `other` is in `self`.
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether nothing is locked.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether some translation axis is locked.
    pub const fn locks_translation(self) -> bool {
        self.0 & Self::TRANSLATION.0 != 0
    }

    /// Whether some rotation axis is locked.
    pub const fn locks_rotation(self) -> bool {
        self.0 & Self::ROTATION.0 != 0
    }

    /// `1` on the free translation axes, `0` on the locked ones.
    pub fn translation_mask(self) -> DVec3 {
        DVec3::new(
            free(self.0 & 1),
            free(self.0 & (1 << 1)),
            free(self.0 & (1 << 2)),
        )
    }

    /// `1` on the free rotation axes, `0` on the locked ones.
    pub fn rotation_mask(self) -> DVec3 {
        DVec3::new(
            free(self.0 & (1 << 3)),
            free(self.0 & (1 << 4)),
            free(self.0 & (1 << 5)),
        )
    }
}

fn free(bit: u8) -> f64 {
    if bit == 0 { 1.0 } else { 0.0 }
}

impl std::ops::BitOr for LockedAxes {
    type Output = Self;
    fn bitor(self, rhs: Self) -> Self {
        self.union(rhs)
    }
}

impl std::ops::BitOrAssign for LockedAxes {
    fn bitor_assign(&mut self, rhs: Self) {
        *self = self.union(rhs);
    }
}

/// Sets the components of `v` on the locked axes (mask 0) to zero, leaving the others untouched.
fn zero_locked(v: &mut DVec3, mask: DVec3) {
    for k in 0..3 {
        if mask[k] == 0.0 {
            v[k] = 0.0;
        }
    }
}

fn bad(field: &'static str, reason: String) -> BodyError {
    BodyError::BadInput { field, reason }
}

fn check_vec(field: &'static str, v: DVec3) -> Result<DVec3, BodyError> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(bad(field, format!("must be finite, got {v}")))
    }
}

fn check_finite(field: &'static str, x: f64) -> Result<f64, BodyError> {
    if x.is_finite() {
        Ok(x)
    } else {
        Err(bad(field, format!("must be finite, got {x}")))
    }
}

fn check_rate(field: &'static str, x: f64) -> Result<f64, BodyError> {
    if x.is_finite() && x >= 0.0 {
        Ok(x)
    } else {
        Err(bad(
            field,
            format!("must be finite and non-negative, got {x}"),
        ))
    }
}

fn check_limit(field: &'static str, x: f64) -> Result<f64, BodyError> {
    if x >= 0.0 {
        Ok(x)
    } else {
        Err(bad(
            field,
            format!("must be non-negative (infinity for no limit), got {x}"),
        ))
    }
}

fn one() -> f64 {
    1.0
}

fn unlimited() -> f64 {
    f64::INFINITY
}

fn is_unlimited(x: &f64) -> bool {
    *x == f64::INFINITY
}

/// How the body moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum BodyKind {
    /// Never moves; infinite mass.
    Static,
    /// Moves with its prescribed velocities; infinite mass (not pushed by contacts or gravity).
    Kinematic,
    /// Moves under gravity and contact impulses.
    Dynamic,
}

/// Contact material. Pairs combine by [`Material::combine`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Material {
    /// Coulomb coefficient used while the contact is (nearly) sticking.
    pub static_friction: f64,
    /// Coulomb coefficient used while it slides.
    pub dynamic_friction: f64,
    /// Coefficient of restitution in `[0, 1]`.
    pub restitution: f64,
}

impl Default for Material {
    fn default() -> Self {
        Self {
            static_friction: 0.5,
            dynamic_friction: 0.5,
            restitution: 0.0,
        }
    }
}

impl Material {
    /// A material with equal static and dynamic friction `mu` and restitution `e`.
    pub fn new(mu: f64, restitution: f64) -> Self {
        Self {
            static_friction: mu,
            dynamic_friction: mu,
            restitution,
        }
    }

    /// The friction coefficient of a contact whose surfaces slide at `tangential_speed`: static
    /// below `threshold`, dynamic otherwise.
    pub fn friction_at(&self, tangential_speed: f64, threshold: f64) -> f64 {
        if tangential_speed < threshold {
            self.static_friction
        } else {
            self.dynamic_friction
        }
    }

    /// The material of a contact pair: geometric mean of the frictions (so a frictionless body
    /// is frictionless against anything), maximum of the restitutions. Negative or non-finite
    /// values are treated as zero; restitution is clamped to `[0, 1]`.
    pub fn combine(&self, other: &Material) -> Material {
        let clean = |x: f64| if x.is_finite() && x > 0.0 { x } else { 0.0 };
        Material {
            static_friction: (clean(self.static_friction) * clean(other.static_friction)).sqrt(),
            dynamic_friction: (clean(self.dynamic_friction) * clean(other.dynamic_friction)).sqrt(),
            restitution: clean(self.restitution)
                .max(clean(other.restitution))
                .min(1.0),
        }
    }
}

/// A rigid body. `position` is the centre of mass in world space; the body frame has its origin
/// there and the axes of the mesh the mass properties came from, rotated by `orientation`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Body {
    /// Static, kinematic or dynamic.
    pub kind: BodyKind,
    /// Centre of mass, world space.
    pub position: DVec3,
    /// Unit quaternion from body to world.
    pub orientation: DQuat,
    /// Velocity of the centre of mass.
    pub linear_velocity: DVec3,
    /// Angular velocity, world space.
    pub angular_velocity: DVec3,
    /// Contact material.
    pub material: Material,
    /// A sleeping dynamic body is not simulated: it acts as static (no gravity, no integration,
    /// infinite mass) until woken (see `crate::solver::sleeping`).
    #[serde(default)]
    pub sleeping: bool,
    mass: f64,
    inv_mass: f64,
    inertia_local: DMat3,
    inv_inertia_local: DMat3,
    local_center: DVec3,
    /// Multiplies gravity (see the module documentation for all driving fields).
    #[serde(default = "one")]
    gravity_scale: f64,
    #[serde(default)]
    linear_damping: f64,
    #[serde(default)]
    angular_damping: f64,
    #[serde(default)]
    locked: LockedAxes,
    #[serde(default = "unlimited", skip_serializing_if = "is_unlimited")]
    max_linear_speed: f64,
    #[serde(default = "unlimited", skip_serializing_if = "is_unlimited")]
    max_angular_speed: f64,
    /// Persistent force, world frame.
    #[serde(default)]
    force: DVec3,
    /// Persistent torque about the centre of mass, world frame.
    #[serde(default)]
    torque: DVec3,
    /// One-shot impulse applied at the start of the next step.
    #[serde(default)]
    pending_impulse: DVec3,
    /// One-shot angular impulse (about the centre of mass) applied at the start of the next step.
    #[serde(default)]
    pending_angular_impulse: DVec3,
}

fn finite_quat(q: DQuat) -> Option<DQuat> {
    let len = q.length();
    (q.is_finite() && len > 1e-12).then(|| q / len)
}

impl Body {
    /// A static body at the origin with the default driving fields (the template the
    /// constructors fill in).
    const UNDRIVEN: Self = Self {
        kind: BodyKind::Static,
        position: DVec3::ZERO,
        orientation: DQuat::IDENTITY,
        linear_velocity: DVec3::ZERO,
        angular_velocity: DVec3::ZERO,
        material: Material {
            static_friction: 0.5,
            dynamic_friction: 0.5,
            restitution: 0.0,
        },
        sleeping: false,
        mass: f64::INFINITY,
        inv_mass: 0.0,
        inertia_local: DMat3::ZERO,
        inv_inertia_local: DMat3::ZERO,
        local_center: DVec3::ZERO,
        gravity_scale: 1.0,
        linear_damping: 0.0,
        angular_damping: 0.0,
        locked: LockedAxes::NONE,
        max_linear_speed: f64::INFINITY,
        max_angular_speed: f64::INFINITY,
        force: DVec3::ZERO,
        torque: DVec3::ZERO,
        pending_impulse: DVec3::ZERO,
        pending_angular_impulse: DVec3::ZERO,
    };

    fn immovable(kind: BodyKind, position: DVec3, orientation: DQuat) -> Result<Self, BodyError> {
        let orientation = finite_quat(orientation).ok_or(BodyError::BadState)?;
        if !position.is_finite() {
            return Err(BodyError::BadState);
        }
        Ok(Self {
            kind,
            position,
            orientation,
            linear_velocity: DVec3::ZERO,
            angular_velocity: DVec3::ZERO,
            material: Material::default(),
            sleeping: false,
            mass: f64::INFINITY,
            inv_mass: 0.0,
            inertia_local: DMat3::ZERO,
            inv_inertia_local: DMat3::ZERO,
            local_center: DVec3::ZERO,
            ..Self::UNDRIVEN
        })
    }

    /// A static body whose frame is at `position` with `orientation`.
    pub fn fixed(position: DVec3, orientation: DQuat) -> Result<Self, BodyError> {
        Self::immovable(BodyKind::Static, position, orientation)
    }

    /// A kinematic body (moves with the velocities you set, unaffected by contacts).
    pub fn kinematic(position: DVec3, orientation: DQuat) -> Result<Self, BodyError> {
        Self::immovable(BodyKind::Kinematic, position, orientation)
    }

    /// A dynamic body with the given mass properties whose *mesh frame* is placed at
    /// `mesh_position` with `orientation` (so the centre of mass lands at
    /// `mesh_position + orientation · props.center_of_mass`).
    pub fn dynamic(
        props: &MassProperties,
        mesh_position: DVec3,
        orientation: DQuat,
    ) -> Result<Self, BodyError> {
        let orientation = finite_quat(orientation).ok_or(BodyError::BadState)?;
        if !(mesh_position.is_finite() && props.center_of_mass.is_finite()) {
            return Err(BodyError::BadState);
        }
        if !(props.mass.is_finite() && props.mass > 0.0) {
            return Err(BodyError::BadMass(props.mass));
        }
        let i = props.inertia;
        // Symmetric positive definite: Sylvester's criterion on the leading minors.
        let sym = (i.x_axis.y - i.y_axis.x).abs()
            + (i.x_axis.z - i.z_axis.x).abs()
            + (i.y_axis.z - i.z_axis.y).abs();
        let m1 = i.x_axis.x;
        let m2 = i.x_axis.x * i.y_axis.y - i.x_axis.y * i.y_axis.x;
        let m3 = i.determinant();
        let scale = m1.abs().max(i.y_axis.y.abs()).max(i.z_axis.z.abs());
        if !(i.is_finite() && m1 > 0.0 && m2 > 0.0 && m3 > 0.0 && sym <= 1e-9 * scale) {
            return Err(BodyError::BadInertia);
        }
        Ok(Self {
            kind: BodyKind::Dynamic,
            position: mesh_position + orientation * props.center_of_mass,
            orientation,
            linear_velocity: DVec3::ZERO,
            angular_velocity: DVec3::ZERO,
            material: Material::default(),
            sleeping: false,
            mass: props.mass,
            inv_mass: 1.0 / props.mass,
            inertia_local: i,
            inv_inertia_local: i.inverse(),
            local_center: props.center_of_mass,
            ..Self::UNDRIVEN
        })
    }

    /// Sets the material.
    pub fn with_material(mut self, material: Material) -> Self {
        self.material = material;
        self
    }

    /// Sets the linear and angular velocity.
    pub fn with_velocity(mut self, linear: DVec3, angular: DVec3) -> Self {
        self.linear_velocity = linear;
        self.angular_velocity = angular;
        self
    }

    /// Whether contacts and gravity move it: dynamic and awake.
    pub fn is_dynamic(&self) -> bool {
        self.kind == BodyKind::Dynamic && !self.sleeping
    }

    /// Mass (infinite for static and kinematic bodies).
    pub fn mass(&self) -> f64 {
        self.mass
    }

    /// `1 / mass` (zero for static and kinematic bodies).
    pub fn inv_mass(&self) -> f64 {
        if self.is_dynamic() {
            self.inv_mass
        } else {
            0.0
        }
    }

    /// Inertia about the centre of mass, body frame.
    pub fn inertia_local(&self) -> DMat3 {
        self.inertia_local
    }

    /// Inverse inertia, body frame (zero for non-dynamic bodies).
    pub fn inv_inertia_local(&self) -> DMat3 {
        if self.is_dynamic() {
            self.inv_inertia_local
        } else {
            DMat3::ZERO
        }
    }

    /// Inverse inertia in world space, `R I⁻¹ Rᵀ`.
    pub fn inv_inertia_world(&self) -> DMat3 {
        let r = DMat3::from_quat(self.orientation);
        r * self.inv_inertia_local() * r.transpose()
    }

    /// Inertia in world space, `R I Rᵀ`.
    pub fn inertia_world(&self) -> DMat3 {
        let r = DMat3::from_quat(self.orientation);
        r * self.inertia_local * r.transpose()
    }

    /// Centre of mass in the mesh frame.
    pub fn local_center(&self) -> DVec3 {
        self.local_center
    }

    /// The pose of the mesh frame (what maps the mesh's vertices to world space).
    pub fn mesh_pose(&self) -> DPose {
        let rotation = DMat3::from_quat(self.orientation);
        DPose {
            rotation,
            translation: self.position - rotation * self.local_center,
        }
    }

    /// Velocity of the material point currently at world position `p`.
    pub fn velocity_at(&self, p: DVec3) -> DVec3 {
        self.linear_velocity + self.angular_velocity.cross(p - self.position)
    }

    /// Kinetic energy `½ m v² + ½ ωᵀ I ω` (zero for non-dynamic bodies).
    pub fn kinetic_energy(&self) -> f64 {
        if !self.is_dynamic() {
            return 0.0;
        }
        let w = self.angular_velocity;
        0.5 * self.mass * self.linear_velocity.length_squared()
            + 0.5 * w.dot(self.inertia_world() * w)
    }

    /// Applies an impulse `j` at world point `p` now (no effect on non-dynamic bodies; locked
    /// axes take none of it). See [`Self::queue_impulse_at_point`] for one applied at the next
    /// step.
    pub fn apply_impulse(&mut self, j: DVec3, p: DVec3) {
        if !self.is_dynamic() {
            return;
        }
        self.linear_velocity += j * self.effective_inv_mass();
        self.angular_velocity += self.effective_inv_inertia_world() * (p - self.position).cross(j);
    }

    /// Inverse mass per world axis as the integrator and the solver use it: `1 / mass` on free
    /// axes, zero on locked ones and for non-dynamic or sleeping bodies.
    pub fn effective_inv_mass(&self) -> DVec3 {
        let m = DVec3::splat(self.inv_mass());
        if self.locked.locks_translation() {
            m * self.locked.translation_mask()
        } else {
            m
        }
    }

    /// World inverse inertia as the integrator and the solver use it: `P R I⁻¹ Rᵀ P` with `P`
    /// the projection on the free rotation axes (zero for non-dynamic or sleeping bodies).
    pub fn effective_inv_inertia_world(&self) -> DMat3 {
        let i = self.inv_inertia_world();
        if !self.locked.locks_rotation() {
            return i;
        }
        let p = self.locked.rotation_mask();
        let col = |c: DVec3, k: usize| c * p * p[k];
        DMat3::from_cols(col(i.x_axis, 0), col(i.y_axis, 1), col(i.z_axis, 2))
    }

    /// Gravity multiplier (default 1; 0 floats, 2 falls twice as fast, negative rises).
    pub fn gravity_scale(&self) -> f64 {
        self.gravity_scale
    }

    /// Sets the gravity multiplier (any finite value).
    pub fn set_gravity_scale(&mut self, scale: f64) -> Result<(), BodyError> {
        self.gravity_scale = check_finite("gravity_scale", scale)?;
        Ok(())
    }

    /// Linear damping per second (default 0; see the module documentation for the model).
    pub fn linear_damping(&self) -> f64 {
        self.linear_damping
    }

    /// Sets the linear damping (finite, non-negative).
    pub fn set_linear_damping(&mut self, per_second: f64) -> Result<(), BodyError> {
        self.linear_damping = check_rate("linear_damping", per_second)?;
        Ok(())
    }

    /// Angular damping per second (default 0).
    pub fn angular_damping(&self) -> f64 {
        self.angular_damping
    }

    /// Sets the angular damping (finite, non-negative).
    pub fn set_angular_damping(&mut self, per_second: f64) -> Result<(), BodyError> {
        self.angular_damping = check_rate("angular_damping", per_second)?;
        Ok(())
    }

    /// The locked world axes.
    pub fn locked_axes(&self) -> LockedAxes {
        self.locked
    }

    /// Locks world axes (the velocity along them is zeroed at the next substep).
    pub fn set_locked_axes(&mut self, locked: LockedAxes) {
        self.locked = locked;
    }

    /// Largest linear speed (default infinity: no limit).
    pub fn max_linear_speed(&self) -> f64 {
        self.max_linear_speed
    }

    /// Sets the largest linear speed (non-negative; infinity for none).
    pub fn set_max_linear_speed(&mut self, speed: f64) -> Result<(), BodyError> {
        self.max_linear_speed = check_limit("max_linear_speed", speed)?;
        Ok(())
    }

    /// Largest angular speed in radians per second (default infinity: no limit).
    pub fn max_angular_speed(&self) -> f64 {
        self.max_angular_speed
    }

    /// Sets the largest angular speed (non-negative; infinity for none).
    pub fn set_max_angular_speed(&mut self, speed: f64) -> Result<(), BodyError> {
        self.max_angular_speed = check_limit("max_angular_speed", speed)?;
        Ok(())
    }

    /// The persistent force (world frame).
    pub fn force(&self) -> DVec3 {
        self.force
    }

    /// The persistent torque about the centre of mass (world frame).
    pub fn torque(&self) -> DVec3 {
        self.torque
    }

    /// Refuses a vector whose effect on the velocity would not be finite (`v · inverse mass`
    /// overflowing), besides non-finite vectors.
    fn check_effect(&self, field: &'static str, v: DVec3, inv: f64) -> Result<DVec3, BodyError> {
        let v = check_vec(field, v)?;
        if (v * inv).is_finite() {
            Ok(v)
        } else {
            Err(bad(
                field,
                format!("{v} overflows the velocity (inverse mass or inertia {inv})"),
            ))
        }
    }

    fn inv_inertia_bound(&self) -> f64 {
        let i = self.inv_inertia_local;
        i.x_axis.abs().max_element() + i.y_axis.abs().max_element() + i.z_axis.abs().max_element()
    }

    /// Sets the persistent force through the centre of mass (replacing the previous one).
    pub fn set_force(&mut self, force: DVec3) -> Result<(), BodyError> {
        self.force = self.check_effect("force", force, self.inv_mass)?;
        Ok(())
    }

    /// Sets the persistent torque (replacing the previous one).
    pub fn set_torque(&mut self, torque: DVec3) -> Result<(), BodyError> {
        self.torque = self.check_effect("torque", torque, self.inv_inertia_bound())?;
        Ok(())
    }

    /// Adds to the persistent force.
    pub fn add_force(&mut self, force: DVec3) -> Result<(), BodyError> {
        let f = self.check_effect("force", force, self.inv_mass)?;
        self.force = self.check_effect("force", self.force + f, self.inv_mass)?;
        Ok(())
    }

    /// Adds to the persistent torque.
    pub fn add_torque(&mut self, torque: DVec3) -> Result<(), BodyError> {
        let bound = self.inv_inertia_bound();
        let t = self.check_effect("torque", torque, bound)?;
        self.torque = self.check_effect("torque", self.torque + t, bound)?;
        Ok(())
    }

    /// Adds a persistent force acting at world point `point`: the force, and the torque
    /// `(point − centre of mass) × force` about the centre of mass as it is now.
    pub fn add_force_at_point(&mut self, force: DVec3, point: DVec3) -> Result<(), BodyError> {
        let f = self.check_effect("force", force, self.inv_mass)?;
        let p = check_vec("point", point)?;
        let bound = self.inv_inertia_bound();
        let new_force = self.check_effect("force", self.force + f, self.inv_mass)?;
        let new_torque =
            self.check_effect("torque", self.torque + (p - self.position).cross(f), bound)?;
        self.force = new_force;
        self.torque = new_torque;
        Ok(())
    }

    /// Removes the persistent force and torque.
    pub fn clear_forces(&mut self) {
        self.force = DVec3::ZERO;
        self.torque = DVec3::ZERO;
    }

    /// The impulse queued for the next step.
    pub fn pending_impulse(&self) -> DVec3 {
        self.pending_impulse
    }

    /// The angular impulse (about the centre of mass) queued for the next step.
    pub fn pending_angular_impulse(&self) -> DVec3 {
        self.pending_angular_impulse
    }

    /// Queues an impulse through the centre of mass, applied once at the start of the next step.
    pub fn queue_impulse(&mut self, impulse: DVec3) -> Result<(), BodyError> {
        let j = self.check_effect("impulse", impulse, self.inv_mass)?;
        self.pending_impulse =
            self.check_effect("impulse", self.pending_impulse + j, self.inv_mass)?;
        Ok(())
    }

    /// Queues an impulse at world point `point` (the impulse, and the angular impulse
    /// `(point − centre of mass) × impulse` about the centre of mass as it is now), applied once
    /// at the start of the next step.
    pub fn queue_impulse_at_point(
        &mut self,
        impulse: DVec3,
        point: DVec3,
    ) -> Result<(), BodyError> {
        let j = self.check_effect("impulse", impulse, self.inv_mass)?;
        let p = check_vec("point", point)?;
        let bound = self.inv_inertia_bound();
        let lin = self.check_effect("impulse", self.pending_impulse + j, self.inv_mass)?;
        let ang = self.check_effect(
            "angular_impulse",
            self.pending_angular_impulse + (p - self.position).cross(j),
            bound,
        )?;
        self.pending_impulse = lin;
        self.pending_angular_impulse = ang;
        Ok(())
    }

    /// Queues an angular impulse (about the centre of mass), applied once at the start of the
    /// next step.
    pub fn queue_angular_impulse(&mut self, angular_impulse: DVec3) -> Result<(), BodyError> {
        let bound = self.inv_inertia_bound();
        let a = self.check_effect("angular_impulse", angular_impulse, bound)?;
        self.pending_angular_impulse =
            self.check_effect("angular_impulse", self.pending_angular_impulse + a, bound)?;
        Ok(())
    }

    /// Checks every driving field (a body read from a file could carry anything).
    pub fn check_drive(&self) -> Result<(), BodyError> {
        check_finite("gravity_scale", self.gravity_scale)?;
        check_rate("linear_damping", self.linear_damping)?;
        check_rate("angular_damping", self.angular_damping)?;
        check_limit("max_linear_speed", self.max_linear_speed)?;
        check_limit("max_angular_speed", self.max_angular_speed)?;
        check_vec("force", self.force)?;
        check_vec("torque", self.torque)?;
        check_vec("impulse", self.pending_impulse)?;
        check_vec("angular_impulse", self.pending_angular_impulse)?;
        Ok(())
    }

    /// Copies the driving fields (scale, damping, locks, limits, forces, queued impulses) of
    /// `other`.
    pub(crate) fn copy_drive_from(&mut self, other: &Body) {
        self.gravity_scale = other.gravity_scale;
        self.linear_damping = other.linear_damping;
        self.angular_damping = other.angular_damping;
        self.locked = other.locked;
        self.max_linear_speed = other.max_linear_speed;
        self.max_angular_speed = other.max_angular_speed;
        self.force = other.force;
        self.torque = other.torque;
        self.pending_impulse = other.pending_impulse;
        self.pending_angular_impulse = other.pending_angular_impulse;
    }

    /// Applies the queued impulses (dynamic, awake bodies) and clears them (all bodies).
    pub(crate) fn apply_pending(&mut self) {
        let (j, a) = (self.pending_impulse, self.pending_angular_impulse);
        if j == DVec3::ZERO && a == DVec3::ZERO {
            return;
        }
        if self.is_dynamic() {
            self.linear_velocity += j * self.effective_inv_mass();
            self.angular_velocity += self.effective_inv_inertia_world() * a;
        }
        self.pending_impulse = DVec3::ZERO;
        self.pending_angular_impulse = DVec3::ZERO;
    }

    /// The linear acceleration [`Self::integrate_velocity`] gives the body before contacts:
    /// gravity (scaled) and its force over its mass, along its free translation axes. Zero
    /// unless it is dynamic and awake.
    pub(crate) fn external_acceleration(&self, gravity: DVec3) -> DVec3 {
        if !self.is_dynamic() {
            return DVec3::ZERO;
        }
        let mut a = gravity * self.gravity_scale + self.force * self.effective_inv_mass();
        if self.locked.locks_translation() {
            zero_locked(&mut a, self.locked.translation_mask());
        }
        if a.is_finite() { a } else { DVec3::ZERO }
    }

    /// The velocity part of a substep before the contacts, for a dynamic awake body: gravity
    /// (scaled), force and torque, damping, locks. With the default fields this is exactly the
    /// former `v += g h`.
    pub(crate) fn integrate_velocity(&mut self, gravity: DVec3, h: f64) {
        self.linear_velocity += gravity * self.gravity_scale * h;
        if self.force != DVec3::ZERO {
            self.linear_velocity += self.force * self.effective_inv_mass() * h;
        }
        if self.torque != DVec3::ZERO {
            self.angular_velocity += self.effective_inv_inertia_world() * self.torque * h;
        }
        if self.linear_damping != 0.0 {
            self.linear_velocity *= 1.0 / (1.0 + self.linear_damping * h);
        }
        if self.angular_damping != 0.0 {
            self.angular_velocity *= 1.0 / (1.0 + self.angular_damping * h);
        }
        self.enforce_locks();
    }

    /// Zeroes the velocity along locked axes.
    fn enforce_locks(&mut self) {
        if self.locked.locks_translation() {
            zero_locked(&mut self.linear_velocity, self.locked.translation_mask());
        }
        if self.locked.locks_rotation() {
            zero_locked(&mut self.angular_velocity, self.locked.rotation_mask());
        }
    }

    /// After the contact solver, for a dynamic awake body: the locks again and the speed limits.
    pub(crate) fn limit_velocity(&mut self) {
        self.enforce_locks();
        let v = self.linear_velocity.length();
        if v > self.max_linear_speed {
            self.linear_velocity *= self.max_linear_speed / v;
        }
        let w = self.angular_velocity.length();
        if w > self.max_angular_speed {
            self.angular_velocity *= self.max_angular_speed / w;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn world_inertia_and_impulse() {
        let props = MassProperties::cuboid(DVec3::new(1.0, 0.5, 0.25), 2.0).unwrap();
        let q = DQuat::from_rotation_z(0.7) * DQuat::from_rotation_x(0.3);
        let mut b = Body::dynamic(&props, DVec3::new(1.0, 2.0, 3.0), q).unwrap();
        let iw = b.inertia_world();
        let prod = iw * b.inv_inertia_world();
        assert!((prod - DMat3::IDENTITY).abs_diff_eq(DMat3::ZERO, 1e-12));
        // An impulse through the centre changes only the linear velocity.
        b.apply_impulse(DVec3::new(0.0, 0.0, 4.0), b.position);
        assert!((b.linear_velocity.z - 4.0 / props.mass).abs() < 1e-15);
        assert_eq!(b.angular_velocity, DVec3::ZERO);
        // An off-centre impulse changes the angular momentum by r × j.
        let r = DVec3::new(0.3, -0.2, 0.1);
        b.apply_impulse(DVec3::X, b.position + r);
        let l = iw * b.angular_velocity;
        assert!((l - r.cross(DVec3::X)).length() < 1e-12);
        // The mesh pose maps the local centre of mass to the world position.
        assert!((b.mesh_pose().transform_dpoint(b.local_center()) - b.position).length() < 1e-12);
    }

    #[test]
    fn bad_bodies_are_refused() {
        let mut props = MassProperties::sphere(1.0, 1.0).unwrap();
        assert!(Body::dynamic(&props, DVec3::ZERO, DQuat::from_xyzw(0.0, 0.0, 0.0, 0.0)).is_err());
        assert!(Body::dynamic(&props, DVec3::NAN, DQuat::IDENTITY).is_err());
        props.inertia.y_axis.y = -1.0;
        assert_eq!(
            Body::dynamic(&props, DVec3::ZERO, DQuat::IDENTITY),
            Err(BodyError::BadInertia)
        );
        props.mass = 0.0;
        assert!(matches!(
            Body::dynamic(&props, DVec3::ZERO, DQuat::IDENTITY),
            Err(BodyError::BadMass(_))
        ));
        let s = Body::fixed(DVec3::ZERO, DQuat::IDENTITY).unwrap();
        assert_eq!(s.inv_mass(), 0.0);
        assert_eq!(s.inv_inertia_world(), DMat3::ZERO);
    }

    #[test]
    fn material_combination() {
        let a = Material::new(0.4, 0.2);
        let b = Material::new(0.9, 0.7);
        let c = a.combine(&b);
        assert!((c.dynamic_friction - 0.6).abs() < 1e-12);
        assert_eq!(c.restitution, 0.7);
        assert_eq!(a.combine(&Material::new(0.0, 0.0)).static_friction, 0.0);
        assert_eq!(a.combine(&Material::new(f64::NAN, 5.0)).restitution, 1.0);
    }
}

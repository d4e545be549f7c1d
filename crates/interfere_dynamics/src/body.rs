//! Rigid bodies: kind (static, kinematic, dynamic), `f64` pose (centre-of-mass position and unit
//! quaternion), velocities, mass, body-frame inverse inertia and contact material.
//!
//! These are the state variables advanced by the impulse-based dynamics of Lin–Manocha 1996 §5
//! ("an impulse was applied to the object at each contact before advancing the clock") and by the
//! impulse/post-stabilization scheme Wang–Faure–Pai 2012 §7 use with volume contacts.

use crate::mass::MassProperties;
use interfere_geometry::DPose;
use interfere_geometry::glam::{DMat3, DQuat, DVec3};
use serde::{Deserialize, Serialize};
use thiserror::Error;

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
pub struct RigidBody {
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
    /// infinite mass) until woken (see `crate::sleeping`).
    #[serde(default)]
    pub sleeping: bool,
    mass: f64,
    inv_mass: f64,
    inertia_local: DMat3,
    inv_inertia_local: DMat3,
    local_center: DVec3,
}

fn finite_quat(q: DQuat) -> Option<DQuat> {
    let len = q.length();
    (q.is_finite() && len > 1e-12).then(|| q / len)
}

impl RigidBody {
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

    /// Applies an impulse `j` at world point `p` (no effect on non-dynamic bodies).
    pub fn apply_impulse(&mut self, j: DVec3, p: DVec3) {
        if !self.is_dynamic() {
            return;
        }
        self.linear_velocity += j * self.inv_mass;
        self.angular_velocity += self.inv_inertia_world() * (p - self.position).cross(j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn world_inertia_and_impulse() {
        let props = MassProperties::cuboid(DVec3::new(1.0, 0.5, 0.25), 2.0).unwrap();
        let q = DQuat::from_rotation_z(0.7) * DQuat::from_rotation_x(0.3);
        let mut b = RigidBody::dynamic(&props, DVec3::new(1.0, 2.0, 3.0), q).unwrap();
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
        assert!(
            RigidBody::dynamic(&props, DVec3::ZERO, DQuat::from_xyzw(0.0, 0.0, 0.0, 0.0)).is_err()
        );
        assert!(RigidBody::dynamic(&props, DVec3::NAN, DQuat::IDENTITY).is_err());
        props.inertia.y_axis.y = -1.0;
        assert_eq!(
            RigidBody::dynamic(&props, DVec3::ZERO, DQuat::IDENTITY),
            Err(BodyError::BadInertia)
        );
        props.mass = 0.0;
        assert!(matches!(
            RigidBody::dynamic(&props, DVec3::ZERO, DQuat::IDENTITY),
            Err(BodyError::BadMass(_))
        ));
        let s = RigidBody::fixed(DVec3::ZERO, DQuat::IDENTITY).unwrap();
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

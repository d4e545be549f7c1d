//! Rigid poses: rotation plus translation, in `f32` for the API (Bevy's `Transform` converts
//! losslessly) and in `f64` for the exact tests, which must see the same transformed coordinates
//! whichever traversal asks for them.

use glam::{DMat3, DQuat, DVec3, Quat, Vec3};
use serde::{Deserialize, Serialize};

/// A rigid transform: first rotate, then translate.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pose {
    /// Rotation (unit quaternion).
    pub rotation: Quat,
    /// Translation.
    pub translation: Vec3,
}

impl Default for Pose {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl Pose {
    /// The identity pose.
    pub const IDENTITY: Self = Self {
        rotation: Quat::IDENTITY,
        translation: Vec3::ZERO,
    };

    /// A pose from a rotation and a translation.
    pub fn new(rotation: Quat, translation: Vec3) -> Self {
        Self {
            rotation,
            translation,
        }
    }

    /// A pure translation.
    pub fn from_translation(translation: Vec3) -> Self {
        Self::new(Quat::IDENTITY, translation)
    }

    /// A pure rotation.
    pub fn from_rotation(rotation: Quat) -> Self {
        Self::new(rotation, Vec3::ZERO)
    }

    /// Applies the pose to a point.
    pub fn transform_point(&self, p: Vec3) -> Vec3 {
        self.rotation * p + self.translation
    }

    /// Applies the rotation to a direction.
    pub fn transform_vector(&self, v: Vec3) -> Vec3 {
        self.rotation * v
    }

    /// The inverse pose.
    pub fn inverse(&self) -> Self {
        let inv = self.rotation.inverse();
        Self::new(inv, -(inv * self.translation))
    }

    /// `self * other`: applies `other` first, then `self`.
    pub fn mul(&self, other: &Pose) -> Self {
        Self::new(
            self.rotation * other.rotation,
            self.rotation * other.translation + self.translation,
        )
    }

    /// The pose of `other`'s frame seen from `self`'s frame: `self⁻¹ · other`.
    pub fn relative_to(&self, other: &Pose) -> Self {
        self.inverse().mul(other)
    }

    /// Whether all components are finite and the rotation is a unit quaternion (within 1e-3).
    pub fn is_valid(&self) -> bool {
        self.rotation.is_finite()
            && self.translation.is_finite()
            && (self.rotation.length() - 1.0).abs() < 1e-3
    }

    /// The same pose in `f64`, with the rotation as a matrix.
    pub fn to_f64(&self) -> DPose {
        let q = DQuat::from_xyzw(
            self.rotation.x as f64,
            self.rotation.y as f64,
            self.rotation.z as f64,
            self.rotation.w as f64,
        )
        .normalize();
        DPose {
            rotation: DMat3::from_quat(q),
            translation: self.translation.as_dvec3(),
        }
    }
}

/// A rigid transform in `f64`, used wherever exact predicates consume transformed vertices.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DPose {
    /// Rotation matrix.
    pub rotation: DMat3,
    /// Translation.
    pub translation: DVec3,
}

impl DPose {
    /// The identity.
    pub const IDENTITY: Self = Self {
        rotation: DMat3::IDENTITY,
        translation: DVec3::ZERO,
    };

    /// Whether every component of the rotation and the translation is finite (queries and GPU
    /// jobs refuse a pose that is not).
    pub fn is_finite(&self) -> bool {
        self.translation.is_finite()
            && self.rotation.x_axis.is_finite()
            && self.rotation.y_axis.is_finite()
            && self.rotation.z_axis.is_finite()
    }

    /// Transforms an `f32` mesh vertex to `f64` coordinates. Every exact test in the crate
    /// transforms vertices through this one function, so all traversals agree bit for bit.
    #[inline]
    pub fn transform_point(&self, p: Vec3) -> DVec3 {
        self.rotation * p.as_dvec3() + self.translation
    }

    /// Transforms an `f64` point.
    #[inline]
    pub fn transform_dpoint(&self, p: DVec3) -> DVec3 {
        self.rotation * p + self.translation
    }

    /// Rotates a direction.
    #[inline]
    pub fn transform_vector(&self, v: DVec3) -> DVec3 {
        self.rotation * v
    }

    /// The inverse transform.
    pub fn inverse(&self) -> Self {
        let rt = self.rotation.transpose();
        Self {
            rotation: rt,
            translation: -(rt * self.translation),
        }
    }

    /// `self * other`: applies `other` first.
    pub fn mul(&self, other: &DPose) -> Self {
        Self {
            rotation: self.rotation * other.rotation,
            translation: self.rotation * other.translation + self.translation,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_and_relative_round_trip() {
        let a = Pose::new(Quat::from_rotation_y(0.7), Vec3::new(1.0, 2.0, 3.0));
        let b = Pose::new(Quat::from_rotation_x(-1.1), Vec3::new(-4.0, 0.5, 2.0));
        let p = Vec3::new(0.3, -0.2, 0.9);
        let rel = a.relative_to(&b);
        let via_rel = a.transform_point(rel.transform_point(p));
        assert!((via_rel - b.transform_point(p)).length() < 1e-5);
        let back = a.inverse().transform_point(a.transform_point(p));
        assert!((back - p).length() < 1e-5);
        let d = b.to_f64();
        assert!((d.transform_point(p).as_vec3() - b.transform_point(p)).length() < 1e-5);
        assert!(
            (d.inverse().transform_dpoint(d.transform_point(p)) - p.as_dvec3()).length() < 1e-12
        );
    }

    #[test]
    fn validity() {
        assert!(Pose::IDENTITY.is_valid());
        assert!(!Pose::from_translation(Vec3::new(f32::NAN, 0.0, 0.0)).is_valid());
        assert!(!Pose::from_rotation(Quat::from_xyzw(0.0, 0.0, 0.0, 2.0)).is_valid());
    }
}

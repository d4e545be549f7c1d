//! Primitive colliders: sphere, capsule, cuboid, cylinder and half-space, with closed-form mass
//! properties, exact point location, ray casts, tessellations with a stated volume error,
//! interference tests against each other and against closed triangle meshes, and intersection
//! volumes with their gradient (the volume contact of Wang, Faure & Pai 2012, §2.2) where a
//! closed form or an exact polyhedral computation exists.
//!
//! * [`Primitive`] (module `shape`): construction with validation, bounds, volume, centre of
//!   mass, inertia, support point, exact point location;
//! * `ray`: first hit of a ray, closed form per shape;
//! * `tessellate`: closed triangle meshes of a primitive, inscribed and circumscribed, with the
//!   exact volume deficit of the inscribed one;
//! * `overlap`: do two primitives, or a primitive and a placed [`Solid`], share a point;
//! * `volume`: intersection volume `V`, `∂V/∂x_b`, `∂V/∂θ_b` and the planar surface regions
//!   they come from ([`PrimitiveVolume`]), for the pairs listed in [`PrimitiveVolumeMethod`];
//! * [`Compound`]: several primitives fixed in one body.
//!
//! Every pose is a [`DPose`] mapping the primitive's local frame to the world; a pose with a
//! non-finite entry or a rotation that is not orthonormal is refused with
//! [`PrimitiveError::InvalidPose`].
//!
//! [`Solid`]: crate::Solid

mod ball;
pub(crate) mod closest;
mod compound;
mod cylinder;
mod exact;
mod gjk;
mod overlap;
mod polytope;
mod ray;
mod region;
mod shape;
mod tessellate;
mod volume;

#[cfg(test)]
mod tests;

pub use compound::{Compound, CompoundPart, CompoundVolumes, PartVolume, parallel_axis};
pub use overlap::{primitive_solid_intersect, primitives_intersect};
pub use ray::PrimitiveHit;
pub use region::{PlanarRegion, SurfacePiece};
pub use tessellate::TESSELLATION_MAX_RESOLUTION;
pub use volume::{
    PrimitiveVolume, PrimitiveVolumeMethod, half_space_solid_volume, intersection_volume,
    primitive_solid_volume, sphere_solid_volume, volume_method, volume_method_with_solid,
};

use crate::pose::DPose;
use glam::DVec3;
use thiserror::Error;

/// A convex (or, for the half-space, unbounded) solid described by a few numbers, in its own
/// local frame. Build one with [`Primitive::sphere`], [`Primitive::capsule`],
/// [`Primitive::cuboid`], [`Primitive::cylinder`] or [`Primitive::half_space`], which validate
/// the dimensions; the variants can be matched but not built outside this crate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Primitive {
    /// A ball of radius `radius` centred at the origin.
    #[non_exhaustive]
    Sphere {
        /// Radius, finite and positive.
        radius: f64,
    },
    /// The points within `radius` of the segment from `(0, −half_length, 0)` to
    /// `(0, half_length, 0)` (axis local Y, as Bevy's `Capsule3d`).
    #[non_exhaustive]
    Capsule {
        /// Half the length of the axis segment, finite and positive.
        half_length: f64,
        /// Radius, finite and positive.
        radius: f64,
    },
    /// The box `|x| ≤ h.x, |y| ≤ h.y, |z| ≤ h.z`.
    #[non_exhaustive]
    Cuboid {
        /// Half extents, finite and positive.
        half_extents: DVec3,
    },
    /// The points with `|y| ≤ half_height` and `x² + z² ≤ radius²` (axis local Y, as Bevy's
    /// `Cylinder`).
    #[non_exhaustive]
    Cylinder {
        /// Half the height, finite and positive.
        half_height: f64,
        /// Radius, finite and positive.
        radius: f64,
    },
    /// The half-space `normal · x ≤ 0`: its boundary plane passes through the local origin and
    /// `normal` is its unit outward normal (the solid lies opposite it).
    #[non_exhaustive]
    HalfSpace {
        /// Unit outward normal.
        normal: DVec3,
    },
}

/// The kind of a primitive, for messages and dispatch tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PrimitiveKind {
    /// [`Primitive::Sphere`].
    Sphere,
    /// [`Primitive::Capsule`].
    Capsule,
    /// [`Primitive::Cuboid`].
    Cuboid,
    /// [`Primitive::Cylinder`].
    Cylinder,
    /// [`Primitive::HalfSpace`].
    HalfSpace,
}

impl PrimitiveKind {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Sphere => "sphere",
            Self::Capsule => "capsule",
            Self::Cuboid => "cuboid",
            Self::Cylinder => "cylinder",
            Self::HalfSpace => "half-space",
        }
    }
}

impl std::fmt::Display for PrimitiveKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a primitive query was refused.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum PrimitiveError {
    /// A dimension is not finite and positive.
    #[error("{shape} {field} must be finite and positive, got {value}")]
    InvalidDimension {
        /// The shape being built.
        shape: PrimitiveKind,
        /// Which dimension.
        field: &'static str,
        /// The value given.
        value: f64,
    },
    /// A half-space normal is not finite or is (nearly) zero, so it has no direction.
    #[error("the half-space normal must be finite and non-zero, got {0:?}")]
    InvalidNormal([f64; 3]),
    /// A pose has a non-finite entry or a rotation that is not orthonormal (within 1e-6).
    #[error("the pose of {what} has a non-finite entry or a non-orthonormal rotation")]
    InvalidPose {
        /// Which pose.
        what: &'static str,
    },
    /// A ray has a non-finite origin, a zero or non-finite direction, or a NaN or negative
    /// maximum distance.
    #[error("the ray needs a finite origin, a finite non-zero direction and max_t >= 0")]
    InvalidRay,
    /// A query point is not finite.
    #[error("the point {0:?} is not finite")]
    InvalidPoint([f64; 3]),
    /// The tessellation resolution is outside `3..=TESSELLATION_MAX_RESOLUTION`.
    #[error("the tessellation resolution must be in 3..={max}, got {got}")]
    InvalidResolution {
        /// The resolution asked for.
        got: u32,
        /// The largest accepted.
        max: u32,
    },
    /// The requested relative volume error cannot be met (not finite, not positive, or below
    /// what the finest tessellation and `f32` vertex storage reach).
    #[error("the relative volume error {0} cannot be met (accepted: 5e-5 ..= 1)")]
    InvalidTolerance(f64),
    /// The query needs a bounded shape and got a half-space (infinite volume, no mesh).
    #[error("a half-space is unbounded: {0}")]
    Unbounded(&'static str),
    /// There is no closed form for this pair: route it through the mesh–mesh volume with
    /// tessellations (see [`PrimitiveVolumeMethod`]).
    #[error(
        "no closed-form intersection volume for {a}–{b}; use tessellations and the mesh–mesh volume"
    )]
    NoClosedForm {
        /// First shape.
        a: PrimitiveKind,
        /// Second shape.
        b: PrimitiveKind,
    },
    /// There is no closed form for this primitive against a mesh: tessellate it (exact for a
    /// cuboid) and use the mesh–mesh volume.
    #[error(
        "no closed-form intersection volume for {0}–mesh; use its tessellation and the mesh–mesh volume"
    )]
    NoClosedFormWithMesh(PrimitiveKind),
    /// The tree was built for a different mesh.
    #[error("the tree has {tree} triangles but the mesh has {mesh}")]
    TreeMismatch {
        /// Triangles in the tree.
        tree: usize,
        /// Triangles in the mesh.
        mesh: usize,
    },
    /// A tessellation could not be built as a closed mesh (only for dimensions so far apart
    /// that `f32` vertices coincide).
    #[error("the tessellation is not a valid closed mesh: {0}")]
    Mesh(#[from] crate::error::MeshError),
    /// The cuboid's mesh generator refused the dimensions.
    #[error("the tessellation could not be generated: {0}")]
    Shape(#[from] crate::error::ShapeError),
    /// A compound needs at least one part and accepts no half-space.
    #[error("invalid compound: {0}")]
    InvalidCompound(String),
}

/// Refuses a pose with a non-finite entry or a rotation that is not orthonormal within 1e-6.
pub(crate) fn check_pose(pose: &DPose, what: &'static str) -> Result<(), PrimitiveError> {
    let r = pose.rotation;
    let finite = r.is_finite() && pose.translation.is_finite();
    let ortho = finite && {
        let e = r.transpose() * r;
        let id = glam::DMat3::IDENTITY;
        (0..3).all(|c| (e.col(c) - id.col(c)).abs().max_element() < 1e-6) && r.determinant() > 0.0
    };
    if ortho {
        Ok(())
    } else {
        Err(PrimitiveError::InvalidPose { what })
    }
}

//! [`Primitive`]: validated construction, bounds, closed-form volume, centre of mass and inertia
//! tensor per unit density, support points, and exact point location in the local frame.
//!
//! Inertia tensors (about the centre of mass, local axes, unit density, so mass = volume):
//! sphere `⅖ V r²`; cuboid `V/3 (h_y² + h_z², …)`; cylinder of half height `h` along Y:
//! `I_y = V r²/2`, `I_x = I_z = V (r²/4 + h²/3)`; capsule of half length `h` along Y, with
//! `V_c = 2πr²h` (cylinder) and `V_s = 4/3 πr³` (both hemispheres): `I_y = V_c r²/2 + ⅖ V_s r²`,
//! `I_x = I_z = V_c (r²/4 + h²/3) + V_s (⅖ r² + h² + ¾ h r)` (each hemisphere about its flat
//! face has `⅖ m r²`; the shift to the capsule centre is `h² + ¾ h r` per unit mass after the
//! parallel-axis theorem through the hemisphere's centroid at `⅜ r`).

use super::exact::sign_of_sum_of_products;
use super::{Primitive, PrimitiveError, PrimitiveKind, check_pose};
use crate::aabb::Aabb;
use crate::containment::PointLocation;
use crate::pose::DPose;
use glam::{DMat3, DVec3, Vec3};
use std::f64::consts::PI;

fn positive(shape: PrimitiveKind, field: &'static str, value: f64) -> Result<f64, PrimitiveError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(PrimitiveError::InvalidDimension {
            shape,
            field,
            value,
        })
    }
}

/// The `f32` box enclosing the `f64` box `[lo, hi]`, rounded outward with a relative pad of
/// `1e-6` (as [`Aabb::of_placed_box`]); `None` when a bound is not finite.
pub(crate) fn padded_aabb(lo: DVec3, hi: DVec3) -> Option<Aabb> {
    if !(lo.is_finite() && hi.is_finite()) {
        return None;
    }
    let pad = |x: f64| 1e-6 * (1.0 + x.abs());
    let down = lo.to_array().map(|x| (x - pad(x)) as f32);
    let up = hi.to_array().map(|x| (x + pad(x)) as f32);
    Some(Aabb::new(Vec3::from_array(down), Vec3::from_array(up)))
}

impl Primitive {
    /// A ball of the given radius.
    pub fn sphere(radius: f64) -> Result<Self, PrimitiveError> {
        Ok(Self::Sphere {
            radius: positive(PrimitiveKind::Sphere, "radius", radius)?,
        })
    }

    /// A capsule along local Y: the points within `radius` of the segment `y ∈ [−half_length,
    /// half_length]`.
    pub fn capsule(half_length: f64, radius: f64) -> Result<Self, PrimitiveError> {
        Ok(Self::Capsule {
            half_length: positive(PrimitiveKind::Capsule, "half_length", half_length)?,
            radius: positive(PrimitiveKind::Capsule, "radius", radius)?,
        })
    }

    /// An axis-aligned box centred at the origin.
    pub fn cuboid(half_extents: DVec3) -> Result<Self, PrimitiveError> {
        for (k, field) in ["half_extents.x", "half_extents.y", "half_extents.z"]
            .into_iter()
            .enumerate()
        {
            positive(PrimitiveKind::Cuboid, field, half_extents[k])?;
        }
        Ok(Self::Cuboid { half_extents })
    }

    /// A cylinder along local Y with flat caps at `y = ±half_height`.
    pub fn cylinder(half_height: f64, radius: f64) -> Result<Self, PrimitiveError> {
        Ok(Self::Cylinder {
            half_height: positive(PrimitiveKind::Cylinder, "half_height", half_height)?,
            radius: positive(PrimitiveKind::Cylinder, "radius", radius)?,
        })
    }

    /// The half-space `n̂ · x ≤ 0` with `n̂ = normal / |normal|` (its boundary plane passes
    /// through the local origin; place it with a pose). The normal must be finite with a
    /// length of at least `1e-12`.
    pub fn half_space(normal: DVec3) -> Result<Self, PrimitiveError> {
        let len = normal.length();
        if !(normal.is_finite() && len.is_finite() && len >= 1e-12) {
            return Err(PrimitiveError::InvalidNormal(normal.to_array()));
        }
        Ok(Self::HalfSpace {
            normal: normal / len,
        })
    }

    /// The kind of shape.
    pub fn kind(&self) -> PrimitiveKind {
        match self {
            Self::Sphere { .. } => PrimitiveKind::Sphere,
            Self::Capsule { .. } => PrimitiveKind::Capsule,
            Self::Cuboid { .. } => PrimitiveKind::Cuboid,
            Self::Cylinder { .. } => PrimitiveKind::Cylinder,
            Self::HalfSpace { .. } => PrimitiveKind::HalfSpace,
        }
    }

    /// Whether the shape is bounded (everything but the half-space).
    pub fn is_bounded(&self) -> bool {
        !matches!(self, Self::HalfSpace { .. })
    }

    /// The local bounding box `[lo, hi]` (`None` for the half-space).
    pub fn local_bounds(&self) -> Option<(DVec3, DVec3)> {
        let h = match *self {
            Self::Sphere { radius } => DVec3::splat(radius),
            Self::Capsule {
                half_length,
                radius,
            } => DVec3::new(radius, half_length + radius, radius),
            Self::Cuboid { half_extents } => half_extents,
            Self::Cylinder {
                half_height,
                radius,
            } => DVec3::new(radius, half_height, radius),
            Self::HalfSpace { .. } => return None,
        };
        Some((-h, h))
    }

    /// The world bounding box of the shape placed by `pose`, tight for every shape (not only
    /// the box of the local box), in `f64` and then rounded outward to `f32` with a relative pad
    /// of `1e-6` like [`Aabb::of_placed_box`]. `None` for the half-space (unbounded: a broad
    /// phase must pair it with everything) and for an invalid pose.
    pub fn aabb(&self, pose: &DPose) -> Option<Aabb> {
        let (lo, hi) = self.world_bounds(pose)?;
        padded_aabb(lo, hi)
    }

    /// The exact-in-`f64` world bounds behind [`Primitive::aabb`].
    pub(crate) fn world_bounds(&self, pose: &DPose) -> Option<(DVec3, DVec3)> {
        check_pose(pose, "primitive").ok()?;
        let c = pose.translation;
        let r = pose.rotation;
        let e = match *self {
            Self::Sphere { radius } => DVec3::splat(radius),
            Self::Capsule {
                half_length,
                radius,
            } => (r.y_axis * half_length).abs() + DVec3::splat(radius),
            Self::Cuboid { half_extents } => {
                let abs = DMat3::from_cols(r.x_axis.abs(), r.y_axis.abs(), r.z_axis.abs());
                abs * half_extents
            }
            Self::Cylinder {
                half_height,
                radius,
            } => {
                let a = r.y_axis;
                let side = (DVec3::ONE - a * a).max(DVec3::ZERO);
                (a * half_height).abs()
                    + DVec3::new(side.x.sqrt(), side.y.sqrt(), side.z.sqrt()) * radius
            }
            Self::HalfSpace { .. } => return None,
        };
        Some((c - e, c + e))
    }

    /// Enclosed volume (`f64::INFINITY` for the half-space).
    pub fn volume(&self) -> f64 {
        match *self {
            Self::Sphere { radius } => 4.0 / 3.0 * PI * radius.powi(3),
            Self::Capsule {
                half_length,
                radius,
            } => PI * radius * radius * (2.0 * half_length + 4.0 / 3.0 * radius),
            Self::Cuboid { half_extents: h } => 8.0 * h.x * h.y * h.z,
            Self::Cylinder {
                half_height,
                radius,
            } => 2.0 * PI * radius * radius * half_height,
            Self::HalfSpace { .. } => f64::INFINITY,
        }
    }

    /// Centre of mass in the local frame (the origin for every bounded shape; `None` for the
    /// half-space).
    pub fn center_of_mass(&self) -> Option<DVec3> {
        self.is_bounded().then_some(DVec3::ZERO)
    }

    /// Inertia tensor about the centre of mass, in the local axes, for unit density (so the
    /// mass is the volume); `None` for the half-space. See the module header for the formulas.
    pub fn inertia(&self) -> Option<DMat3> {
        let d = match *self {
            Self::Sphere { radius } => DVec3::splat(0.4 * self.volume() * radius * radius),
            Self::Cuboid { half_extents: h } => {
                let v = self.volume() / 3.0;
                DVec3::new(
                    h.y * h.y + h.z * h.z,
                    h.x * h.x + h.z * h.z,
                    h.x * h.x + h.y * h.y,
                ) * v
            }
            Self::Cylinder {
                half_height: h,
                radius: r,
            } => {
                let v = self.volume();
                let side = v * (r * r / 4.0 + h * h / 3.0);
                DVec3::new(side, v * r * r / 2.0, side)
            }
            Self::Capsule {
                half_length: h,
                radius: r,
            } => {
                let vc = 2.0 * PI * r * r * h;
                let vs = 4.0 / 3.0 * PI * r.powi(3);
                let axial = vc * r * r / 2.0 + 0.4 * vs * r * r;
                let side =
                    vc * (r * r / 4.0 + h * h / 3.0) + vs * (0.4 * r * r + h * h + 0.75 * h * r);
                DVec3::new(side, axial, side)
            }
            Self::HalfSpace { .. } => return None,
        };
        Some(DMat3::from_diagonal(d))
    }

    /// A point of the shape farthest along `dir` (local frame), ties broken towards the
    /// positive side; `None` for the half-space or a non-finite direction. A zero direction
    /// gives some point of the shape.
    pub fn local_support(&self, dir: DVec3) -> Option<DVec3> {
        if !dir.is_finite() {
            return None;
        }
        let sgn = |x: f64| if x < 0.0 { -1.0 } else { 1.0 };
        Some(match *self {
            Self::Sphere { radius } => dir.normalize_or_zero() * radius,
            Self::Capsule {
                half_length,
                radius,
            } => DVec3::new(0.0, sgn(dir.y) * half_length, 0.0) + dir.normalize_or_zero() * radius,
            Self::Cuboid { half_extents: h } => {
                DVec3::new(sgn(dir.x) * h.x, sgn(dir.y) * h.y, sgn(dir.z) * h.z)
            }
            Self::Cylinder {
                half_height,
                radius,
            } => {
                let radial = DVec3::new(dir.x, 0.0, dir.z).normalize_or_zero() * radius;
                radial + DVec3::new(0.0, sgn(dir.y) * half_height, 0.0)
            }
            Self::HalfSpace { .. } => return None,
        })
    }

    /// [`Primitive::local_support`] for the shape placed by `pose`, with `dir` and the result
    /// in world coordinates.
    pub fn support(&self, pose: &DPose, dir: DVec3) -> Result<Option<DVec3>, PrimitiveError> {
        check_pose(pose, "primitive")?;
        Ok(self
            .local_support(pose.rotation.transpose() * dir)
            .map(|p| pose.transform_dpoint(p)))
    }

    /// Exact location of a local point: the sign of the defining polynomial (`r² − |p|²` for
    /// the sphere, its capsule and cylinder variants, `n · p` for the half-space, coordinate
    /// comparisons for the box) evaluated without rounding, so a point exactly on the surface
    /// is [`PointLocation::Boundary`]. A non-finite point is `Outside`.
    pub fn locate_local(&self, p: DVec3) -> PointLocation {
        if !p.is_finite() {
            return PointLocation::Outside;
        }
        let from_sign = |s: i8| match s {
            1 => PointLocation::Inside,
            0 => PointLocation::Boundary,
            _ => PointLocation::Outside,
        };
        match *self {
            Self::Sphere { radius: r } => from_sign(sign_of_sum_of_products(&[
                (r, r),
                (-p.x, p.x),
                (-p.y, p.y),
                (-p.z, p.z),
            ])),
            Self::Capsule {
                half_length: h,
                radius: r,
            } => {
                let ay = p.y.abs();
                if ay <= h {
                    from_sign(sign_of_sum_of_products(&[(r, r), (-p.x, p.x), (-p.z, p.z)]))
                } else {
                    // r² − x² − z² − (|y| − h)², expanded so that every product is exact.
                    from_sign(sign_of_sum_of_products(&[
                        (r, r),
                        (-p.x, p.x),
                        (-p.z, p.z),
                        (-ay, ay),
                        (2.0 * ay, h),
                        (-h, h),
                    ]))
                }
            }
            Self::Cuboid { half_extents: h } => {
                let a = p.abs();
                if a.cmpgt(h).any() {
                    PointLocation::Outside
                } else if a.cmpeq(h).any() {
                    PointLocation::Boundary
                } else {
                    PointLocation::Inside
                }
            }
            Self::Cylinder {
                half_height: h,
                radius: r,
            } => {
                let ay = p.y.abs();
                let radial = sign_of_sum_of_products(&[(r, r), (-p.x, p.x), (-p.z, p.z)]);
                if ay > h || radial < 0 {
                    PointLocation::Outside
                } else if ay == h || radial == 0 {
                    PointLocation::Boundary
                } else {
                    PointLocation::Inside
                }
            }
            Self::HalfSpace { normal: n } => from_sign(-sign_of_sum_of_products(&[
                (n.x, p.x),
                (n.y, p.y),
                (n.z, p.z),
            ])),
        }
    }

    /// Location of the world point `p` relative to the shape placed by `pose`: the point is
    /// mapped to the local frame (`Rᵀ (p − t)`, rounded once) and located exactly there.
    pub fn locate(&self, pose: &DPose, p: DVec3) -> Result<PointLocation, PrimitiveError> {
        check_pose(pose, "primitive")?;
        if !p.is_finite() {
            return Err(PrimitiveError::InvalidPoint(p.to_array()));
        }
        Ok(self.locate_local(pose.inverse().transform_dpoint(p)))
    }

    /// A length scale of the shape (its largest dimension; 1 for the half-space), used for
    /// relative tolerances.
    pub(crate) fn scale(&self) -> f64 {
        match self.local_bounds() {
            Some((_, hi)) => hi.max_element(),
            None => 1.0,
        }
    }
}

//! Compound colliders: several bounded primitives fixed in one body, each placed by its own
//! pose in the body's frame.
//!
//! The parts are assumed not to overlap: the mass properties add (volume, first moment, and the
//! inertia tensors moved to the common centre of mass by the parallel-axis theorem), and the
//! intersection volume with another body is reported per pair of parts ([`PartVolume`]), whose
//! sum is the compound's volume only when the parts are disjoint. Location, ray casts and
//! interference are those of the union (exact whatever the overlap).

use super::overlap::{primitive_solid_intersect, primitives_intersect};
use super::ray::PrimitiveHit;
use super::volume::{PrimitiveVolume, PrimitiveVolumeMethod, intersection_volume, volume_method};
use super::{Primitive, PrimitiveError, check_pose};
use crate::aabb::Aabb;
use crate::bvh::BalancedTree;
use crate::containment::PointLocation;
use crate::mesh::TriMesh;
use crate::pose::DPose;
use crate::topology::Solid;
use glam::{DMat3, DVec3};

/// The parallel-axis term per unit mass: the inertia about a point a unit mass at offset `d`
/// from it adds, `|d|² I − d dᵀ`.
pub fn parallel_axis(d: DVec3) -> DMat3 {
    DMat3::from_diagonal(DVec3::splat(d.length_squared()))
        - DMat3::from_cols(d * d.x, d * d.y, d * d.z)
}

/// One part of a [`Compound`]: a bounded primitive and its pose in the compound's frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CompoundPart {
    /// Maps the primitive's local frame to the compound's frame.
    pub pose: DPose,
    /// The shape (not a half-space).
    pub shape: Primitive,
}

/// Several primitives forming one rigid body (see the module documentation).
#[derive(Clone, Debug, PartialEq)]
pub struct Compound {
    parts: Vec<CompoundPart>,
}

/// The per-part intersections of a compound with another body.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CompoundVolumes {
    /// The overlapping part pairs with a closed form, and their volumes.
    pub volumes: Vec<PartVolume>,
    /// The overlapping part pairs `(part_a, part_b)` without a closed form (see
    /// [`super::PrimitiveVolumeMethod::Tessellate`]): route them through the mesh–mesh volume.
    pub needs_mesh: Vec<(usize, usize)>,
}

/// The intersection of part `part_a` of the first body with part `part_b` of the second (0 for
/// a plain primitive).
#[derive(Clone, Debug, PartialEq)]
pub struct PartVolume {
    /// Index of the part in the first body.
    pub part_a: usize,
    /// Index of the part in the second body.
    pub part_b: usize,
    /// The volume and its gradient with respect to the second body's pose (world frame).
    pub volume: PrimitiveVolume,
}

impl Compound {
    /// A compound of at least one part; half-spaces and invalid part poses are refused.
    pub fn new(parts: Vec<CompoundPart>) -> Result<Self, PrimitiveError> {
        if parts.is_empty() {
            return Err(PrimitiveError::InvalidCompound("it has no parts".into()));
        }
        for (i, p) in parts.iter().enumerate() {
            if !p.shape.is_bounded() {
                return Err(PrimitiveError::InvalidCompound(format!(
                    "part {i} is a half-space"
                )));
            }
            check_pose(&p.pose, "a compound part")
                .map_err(|_| PrimitiveError::InvalidCompound(format!("part {i} has a bad pose")))?;
        }
        Ok(Self { parts })
    }

    /// The parts.
    pub fn parts(&self) -> &[CompoundPart] {
        &self.parts
    }

    fn placed(&self, pose: &DPose) -> impl Iterator<Item = (usize, Primitive, DPose)> + '_ {
        let pose = *pose;
        self.parts
            .iter()
            .enumerate()
            .map(move |(i, p)| (i, p.shape, pose.mul(&p.pose)))
    }

    /// The world bounding box (union of the parts' boxes); `None` for an invalid pose.
    pub fn aabb(&self, pose: &DPose) -> Option<Aabb> {
        check_pose(pose, "the compound").ok()?;
        let mut out = Aabb::EMPTY;
        for (_, shape, p) in self.placed(pose) {
            out = out.union(shape.aabb(&p)?);
        }
        Some(out)
    }

    /// Sum of the parts' volumes.
    pub fn volume(&self) -> f64 {
        self.parts.iter().map(|p| p.shape.volume()).sum()
    }

    /// Centre of mass in the compound's frame (uniform density).
    pub fn center_of_mass(&self) -> DVec3 {
        let v = self.volume();
        self.parts
            .iter()
            .map(|p| p.pose.translation * p.shape.volume())
            .sum::<DVec3>()
            / v
    }

    /// Inertia tensor per unit density about the centre of mass, in the compound's axes.
    pub fn inertia(&self) -> DMat3 {
        let com = self.center_of_mass();
        let mut out = DMat3::ZERO;
        for p in &self.parts {
            let r = p.pose.rotation;
            let local = p.shape.inertia().unwrap_or(DMat3::ZERO);
            let d = p.pose.translation - com;
            out += r * local * r.transpose() + parallel_axis(d) * p.shape.volume();
        }
        out
    }

    /// Location of a world point: inside if inside a part, on the boundary if on a part's
    /// boundary and inside none, else outside (exact per part, see [`Primitive::locate`]).
    pub fn locate(&self, pose: &DPose, p: DVec3) -> Result<PointLocation, PrimitiveError> {
        check_pose(pose, "the compound")?;
        let mut out = PointLocation::Outside;
        for (_, shape, pp) in self.placed(pose) {
            match shape.locate(&pp, p)? {
                PointLocation::Inside => return Ok(PointLocation::Inside),
                PointLocation::Boundary => out = PointLocation::Boundary,
                PointLocation::Outside => {}
            }
        }
        Ok(out)
    }

    /// The first hit of the ray over all parts (see [`Primitive::ray_cast`]).
    pub fn ray_cast(
        &self,
        pose: &DPose,
        origin: DVec3,
        dir: DVec3,
        max_t: f64,
    ) -> Result<Option<PrimitiveHit>, PrimitiveError> {
        check_pose(pose, "the compound")?;
        let mut best: Option<PrimitiveHit> = None;
        for (_, shape, pp) in self.placed(pose) {
            if let Some(h) = shape.ray_cast(&pp, origin, dir, max_t)?
                && best.is_none_or(|b| h.t < b.t)
            {
                best = Some(h);
            }
        }
        Ok(best)
    }

    /// Whether a part meets the primitive `other`.
    pub fn intersects_primitive(
        &self,
        pose: &DPose,
        other: &Primitive,
        other_pose: &DPose,
    ) -> Result<bool, PrimitiveError> {
        check_pose(pose, "the compound")?;
        for (_, shape, pp) in self.placed(pose) {
            if primitives_intersect(&shape, &pp, other, other_pose)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Whether a part of each compound meet.
    pub fn intersects_compound(
        &self,
        pose: &DPose,
        other: &Compound,
        other_pose: &DPose,
    ) -> Result<bool, PrimitiveError> {
        check_pose(other_pose, "the other compound")?;
        for (_, shape, pp) in other.placed(other_pose) {
            if self.intersects_primitive(pose, &shape, &pp)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Whether a part meets the closed mesh (see [`super::primitive_solid_intersect`]).
    pub fn intersects_solid(
        &self,
        pose: &DPose,
        solid: &Solid,
        tree: &BalancedTree,
        solid_pose: &DPose,
    ) -> Result<bool, PrimitiveError> {
        check_pose(pose, "the compound")?;
        for (_, shape, pp) in self.placed(pose) {
            if primitive_solid_intersect(&shape, &pp, solid, tree, solid_pose)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The intersection volume of every part (A) that meets the primitive `other` (B): closed
    /// forms where they exist, the other meeting parts listed in `needs_mesh` (see
    /// [`super::volume_method`]).
    pub fn volumes_with_primitive(
        &self,
        pose: &DPose,
        other: &Primitive,
        other_pose: &DPose,
    ) -> Result<CompoundVolumes, PrimitiveError> {
        check_pose(pose, "the compound")?;
        let mut out = CompoundVolumes::default();
        for (i, shape, pp) in self.placed(pose) {
            if !primitives_intersect(&shape, &pp, other, other_pose)? {
                continue;
            }
            match volume_method(&shape, other) {
                PrimitiveVolumeMethod::ClosedForm => {
                    if let Some(v) = intersection_volume(&shape, &pp, other, other_pose)? {
                        out.volumes.push(PartVolume {
                            part_a: i,
                            part_b: 0,
                            volume: v,
                        });
                    }
                }
                _ => out.needs_mesh.push((i, 0)),
            }
        }
        Ok(out)
    }

    /// [`Compound::volumes_with_primitive`] for every part of `other` (B).
    pub fn volumes_with_compound(
        &self,
        pose: &DPose,
        other: &Compound,
        other_pose: &DPose,
    ) -> Result<CompoundVolumes, PrimitiveError> {
        check_pose(other_pose, "the other compound")?;
        let mut out = CompoundVolumes::default();
        for (j, shape, pp) in other.placed(other_pose) {
            let part = self.volumes_with_primitive(pose, &shape, &pp)?;
            out.volumes.extend(part.volumes.into_iter().map(|mut v| {
                v.part_b = j;
                v
            }));
            out.needs_mesh
                .extend(part.needs_mesh.into_iter().map(|(i, _)| (i, j)));
        }
        Ok(out)
    }

    /// The parts' inscribed meshes (see [`Primitive::to_solid`]) placed in the compound's frame,
    /// as one closed mesh of several shells.
    pub fn to_solid(&self, resolution: u32) -> Result<Solid, PrimitiveError> {
        let mut vertices = Vec::new();
        let mut triangles = Vec::new();
        for p in &self.parts {
            let s = p.shape.to_solid(resolution)?;
            let base = vertices.len() as u32;
            vertices.extend(
                s.vertices()
                    .iter()
                    .map(|v| p.pose.transform_point(*v).as_vec3()),
            );
            triangles.extend(s.triangles().iter().map(|t| t.map(|i| i + base)));
        }
        Ok(Solid::new(TriMesh::new(vertices, triangles)?)?)
    }
}

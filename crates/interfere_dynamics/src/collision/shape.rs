//! Colliders of a [`crate::Simulation`]: what a body collides with, prepared once.
//!
//! - [`MeshShape`]: a closed triangle mesh ([`Solid`]) with the hierarchies its queries need, built
//!   when the shape is made (the OBBTree of Gottschalk–Lin–Manocha for the exact narrow phase,
//!   the Greß–Zachmann balanced AABB tree for ray sampling), its local bounding box and its mass
//!   properties at unit density. It is shared (`Arc`) between bodies and with GPU jobs, and
//!   carries an [`MeshShape::id`] unique in the process, so device-side caches can key on it.
//! - [`HalfSpace`]: an infinite solid below a plane fixed in its body's frame (a ground), whose
//!   volume contact with a mesh is exact (Wang–Faure–Pai 2012 §2.2 with the analytic half-space,
//!   [`crate::volume_below_plane_split`]).
//!
//! - [`PrimitiveShape`]: a sphere, capsule, cuboid or cylinder (`interfere_geometry`'s
//!   [`Primitive`]) with closed-form mass properties, tight world boxes, closed-form or exact
//!   interference tests and intersection volumes (see [`crate::contact::primitive_pairs`]), and its
//!   inscribed tessellation built on first use for the pairs without a closed-form volume.
//! - [`CompoundShape`]: several primitives ([`Compound`]) and closed meshes ([`MeshPart`])
//!   fixed in one body, each with its own pose in the body's collider frame; mass properties are
//!   the sum of the parts' (parallel-axis theorem), contacts are per pair of parts.
//!
//! A mesh shape also carries, built on first use, the [`RayMesh`] the spatial queries cast rays
//! against ([`MeshShape::ray_mesh`], [`crate::query`]).
//!
//! Making a mesh shape is the expensive part of adding a body (the trees): do it off the hot
//! path (the Bevy plugin does it on a task pool) and share the `Arc`.

use crate::body::mass::{MassError, MassProperties, mass_properties};
use interfere_geometry::glam::{DMat3, DVec3};
use interfere_geometry::primitives::{CompoundPart, parallel_axis};
use interfere_geometry::volume::RayMesh;
use interfere_geometry::volume::SurfaceTopology;
use interfere_geometry::{Aabb, DPose, MeshQueries, Solid};
use interfere_geometry::{Compound, Primitive, PrimitiveError};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

static NEXT_SHAPE_ID: AtomicU64 = AtomicU64::new(1);

/// A closed triangle mesh prepared for collision: the solid, its hierarchies, local box and mass
/// properties at unit density.
pub struct MeshShape {
    id: u64,
    queries: MeshQueries,
    /// Edge adjacency and shells for the exact volume's flood fill (built once).
    topology: Arc<SurfaceTopology>,
    /// The solid and its balanced tree as shared handles (for GPU jobs), made on first use.
    shared: std::sync::OnceLock<(Arc<Solid>, Arc<interfere_geometry::BalancedTree>)>,
    unit_mass: MassProperties,
    lo: DVec3,
    hi: DVec3,
    /// The mesh at the identity with `f64` vertices and the balanced tree's boxes, for ray
    /// queries (built on first use).
    ray: OnceLock<RayMesh>,
}

impl std::fmt::Debug for MeshShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MeshShape")
            .field("id", &self.id)
            .field("triangles", &self.solid().triangle_count())
            .field("volume", &self.unit_mass.volume)
            .finish()
    }
}

impl MeshShape {
    /// Prepares `solid`: mass properties at unit density and both hierarchies (built now, not in
    /// the middle of a step). Fails when the solid encloses no positive volume.
    pub fn new(solid: Solid) -> Result<Self, MassError> {
        let unit_mass = mass_properties(&solid, 1.0)?;
        let aabb = solid.aabb();
        let topology = Arc::new(SurfaceTopology::new(&solid));
        let queries = MeshQueries::new(solid.into_mesh());
        queries.obb_tree();
        queries.balanced_tree();
        Ok(Self {
            id: NEXT_SHAPE_ID.fetch_add(1, Ordering::Relaxed),
            queries,
            topology,
            shared: std::sync::OnceLock::new(),
            unit_mass,
            lo: aabb.min.as_dvec3(),
            hi: aabb.max.as_dvec3(),
            ray: OnceLock::new(),
        })
    }

    /// The mesh in its own frame prepared for exact ray casting (`f64` vertices, the balanced
    /// AABB tree's boxes refitted over them), built on the first call: call it once off the hot
    /// path to have the first ray query not pay for it.
    pub fn ray_mesh(&self) -> &RayMesh {
        self.ray.get_or_init(|| {
            RayMesh::new(
                self.queries.mesh(),
                self.queries.balanced_tree(),
                &DPose::IDENTITY,
            )
            .expect("the balanced tree is built over this mesh and the identity is finite")
        })
    }

    /// A process-wide unique id (device caches key on it).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The closed solid, in the body's mesh frame.
    pub fn solid(&self) -> &Solid {
        self.queries
            .solid()
            .expect("MeshShape is only built from a Solid, which stays closed")
    }

    /// The surface topology the exact volume uses.
    pub fn topology(&self) -> &Arc<SurfaceTopology> {
        &self.topology
    }

    /// The solid and its balanced tree as shared handles (a GPU job takes these), made once.
    pub fn shared(&self) -> &(Arc<Solid>, Arc<interfere_geometry::BalancedTree>) {
        self.shared.get_or_init(|| {
            (
                Arc::new(self.solid().clone()),
                Arc::new(self.queries.balanced_tree().clone()),
            )
        })
    }

    /// The interference queries (trees, exact pair tests).
    pub fn queries(&self) -> &MeshQueries {
        &self.queries
    }

    /// Volume, centre of mass and inertia at unit density.
    pub fn unit_mass(&self) -> &MassProperties {
        &self.unit_mass
    }

    /// Mass properties at `density`.
    pub fn mass_at(&self, density: f64) -> MassProperties {
        let u = &self.unit_mass;
        MassProperties {
            volume: u.volume,
            mass: u.volume * density,
            center_of_mass: u.center_of_mass,
            inertia: u.inertia * density,
        }
    }

    /// The local bounding box `(min, max)`.
    pub fn local_box(&self) -> (DVec3, DVec3) {
        (self.lo, self.hi)
    }

    /// The smallest side of the local box (the scale relative ray spacings refer to).
    pub fn size(&self) -> f64 {
        (self.hi - self.lo).min_element()
    }

    /// The world box under the mesh pose `pose`, rounded outward to `f32`.
    pub fn world_aabb(&self, pose: &DPose) -> Option<Aabb> {
        Aabb::of_placed_box(self.lo, self.hi, pose)
    }
}

/// The solid below the plane `normal · x = offset` of its body's mesh frame (`normal` unit,
/// pointing out of the solid).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HalfSpace {
    /// Outward unit normal, mesh frame.
    pub normal: DVec3,
    /// Offset along the normal, mesh frame.
    pub offset: f64,
}

impl HalfSpace {
    /// The half-space below the plane through `point` with outward `normal` (normalized here);
    /// `None` for a zero or non-finite normal or point.
    pub fn new(normal: DVec3, point: DVec3) -> Option<Self> {
        let n = normal.try_normalize()?;
        point.is_finite().then(|| Self {
            normal: n,
            offset: n.dot(point),
        })
    }

    /// The plane in world space under the mesh pose `pose`: `(normal, offset)`.
    pub fn world(&self, pose: &DPose) -> (DVec3, f64) {
        let n = pose.transform_vector(self.normal);
        let p = pose.transform_dpoint(self.normal * self.offset);
        (n, n.dot(p))
    }
}

/// The relative volume error of the inscribed tessellation a [`PrimitiveShape`] uses for the
/// pairs without a closed-form volume (`interfere_geometry::primitives::PrimitiveVolumeMethod::Tessellate`):
/// the mesh encloses at least `1 − 1e-2` of the primitive's volume (a cuboid's mesh is exact).
pub const TESSELLATION_TOLERANCE: f64 = 1e-2;

/// A bounded primitive (sphere, capsule, cuboid, cylinder) prepared for collision, centred at
/// the origin of its body's collider frame. Cheap to build; its tessellation (for pairs without
/// a closed-form volume) is made on first use and kept.
pub struct PrimitiveShape {
    primitive: Primitive,
    tessellation: OnceLock<Result<Arc<MeshShape>, String>>,
}

impl Clone for PrimitiveShape {
    fn clone(&self) -> Self {
        Self {
            primitive: self.primitive,
            tessellation: self.tessellation.clone(),
        }
    }
}

impl std::fmt::Debug for PrimitiveShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrimitiveShape")
            .field("primitive", &self.primitive)
            .finish()
    }
}

impl PrimitiveShape {
    /// Prepares a bounded primitive; a half-space is refused
    /// ([`PrimitiveError::Unbounded`]: use [`Shape::from_primitive`] or [`HalfSpace`]).
    pub fn new(primitive: Primitive) -> Result<Self, PrimitiveError> {
        if !primitive.is_bounded() {
            return Err(PrimitiveError::Unbounded(
                "a half-space is a Shape::HalfSpace, not a PrimitiveShape",
            ));
        }
        Ok(Self {
            primitive,
            tessellation: OnceLock::new(),
        })
    }

    /// The primitive.
    pub fn primitive(&self) -> &Primitive {
        &self.primitive
    }

    /// The inscribed mesh within [`TESSELLATION_TOLERANCE`] of the volume (exact for a cuboid),
    /// prepared as a [`MeshShape`] on the first call (`Err` only if the tessellation cannot be
    /// made, for dimensions whose `f32` vertices coincide).
    pub fn tessellation(&self) -> Result<&Arc<MeshShape>, &str> {
        self.tessellation
            .get_or_init(|| {
                let (solid, _) = self
                    .primitive
                    .to_solid_within(TESSELLATION_TOLERANCE)
                    .map_err(|e| e.to_string())?;
                MeshShape::new(solid)
                    .map(Arc::new)
                    .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(String::as_str)
    }

    /// Volume, centre of mass (the origin) and inertia at unit density, in closed form.
    pub fn unit_mass(&self) -> MassProperties {
        let volume = self.primitive.volume();
        MassProperties {
            volume,
            mass: volume,
            center_of_mass: DVec3::ZERO,
            inertia: self.primitive.inertia().unwrap_or(DMat3::ZERO),
        }
    }

    /// The local bounding box `(min, max)`.
    pub fn local_box(&self) -> (DVec3, DVec3) {
        self.primitive
            .local_bounds()
            .unwrap_or((DVec3::ZERO, DVec3::ZERO))
    }

    /// The world box under the collider pose `pose` (tight for every primitive, rounded outward
    /// to `f32`); `None` for a non-finite pose.
    pub fn world_aabb(&self, pose: &DPose) -> Option<Aabb> {
        self.primitive.aabb(pose)
    }
}

/// A closed mesh fixed in a compound body: the prepared mesh (shared with wherever else it is
/// used, its trees are not rebuilt) and its pose in the compound's frame.
#[derive(Clone, Debug)]
pub struct MeshPart {
    /// The prepared mesh.
    pub shape: Arc<MeshShape>,
    /// Its pose in the compound's frame (rotation and translation; no scale).
    pub pose: DPose,
}

/// Several bounded solids fixed in one body, prepared for collision: primitive parts (a
/// [`Compound`], each part with its own [`PrimitiveShape`], so its tessellation is made once)
/// and closed meshes ([`MeshPart`]), the mass properties at unit density and the local box.
///
/// The parts are assumed not to overlap (their masses add; where they overlap, the shared
/// volume counts twice, and a body pressed into two overlapping parts feels both). The Bevy
/// plugin builds one from `BodyShape::compound` and from the colliders of a body's child
/// entities (meshes included).
#[derive(Clone, Debug)]
pub struct CompoundShape {
    /// The primitive parts (`None` for a compound of meshes only).
    compound: Option<Compound>,
    parts: Vec<PrimitiveShape>,
    meshes: Vec<MeshPart>,
    unit_mass: MassProperties,
    lo: DVec3,
    hi: DVec3,
}

impl CompoundShape {
    /// Prepares a compound of primitives (at least one part, no half-space: see
    /// [`Compound::new`]).
    pub fn new(parts: Vec<CompoundPart>) -> Result<Self, PrimitiveError> {
        Self::from_compound(Compound::new(parts)?)
    }

    /// Prepares a compound of primitives built already.
    pub fn from_compound(compound: Compound) -> Result<Self, PrimitiveError> {
        Self::build(Some(compound), Vec::new())
    }

    /// Prepares a compound of primitive parts and mesh parts (at least one part in all; no
    /// half-space; every pose finite with a rotation matrix that is orthonormal within `1e-6`).
    pub fn with_meshes(
        parts: Vec<CompoundPart>,
        meshes: Vec<MeshPart>,
    ) -> Result<Self, PrimitiveError> {
        let compound = if parts.is_empty() {
            None
        } else {
            Some(Compound::new(parts)?)
        };
        Self::build(compound, meshes)
    }

    fn build(compound: Option<Compound>, meshes: Vec<MeshPart>) -> Result<Self, PrimitiveError> {
        let refuse = |why: String| PrimitiveError::InvalidCompound(why);
        if compound.is_none() && meshes.is_empty() {
            return Err(refuse("a compound needs at least one part".into()));
        }
        for (k, m) in meshes.iter().enumerate() {
            let r = m.pose.rotation;
            let orthonormal = (r.transpose() * r - DMat3::IDENTITY)
                .to_cols_array()
                .iter()
                .all(|e| e.abs() <= 1e-6)
                && r.determinant() > 0.0;
            if !(m.pose.translation.is_finite() && r.is_finite() && orthonormal) {
                return Err(refuse(format!(
                    "mesh part {k} has a pose that is not a finite rotation and translation"
                )));
            }
        }
        let parts = match &compound {
            Some(c) => c
                .parts()
                .iter()
                .map(|p| PrimitiveShape::new(p.shape))
                .collect::<Result<Vec<_>, _>>()?,
            None => Vec::new(),
        };
        // Each solid's (volume, centre of mass, inertia about it) in the compound's frame.
        let mut solids: Vec<(f64, DVec3, DMat3)> = Vec::new();
        if let Some(c) = &compound {
            solids.push((c.volume(), c.center_of_mass(), c.inertia()));
        }
        for m in &meshes {
            let u = m.shape.unit_mass();
            let r = m.pose.rotation;
            solids.push((
                u.volume,
                m.pose.transform_dpoint(u.center_of_mass),
                r * u.inertia * r.transpose(),
            ));
        }
        let unit_mass = combined_mass(&solids)
            .ok_or_else(|| refuse("its parts enclose no finite positive volume".into()))?;
        let mut aabb = match &compound {
            Some(c) => c.aabb(&DPose::IDENTITY),
            None => Some(Aabb::EMPTY),
        };
        for m in &meshes {
            let (lo, hi) = m.shape.local_box();
            aabb = aabb
                .zip(Aabb::of_placed_box(lo, hi, &m.pose))
                .map(|(a, b)| a.union(b));
        }
        let aabb = aabb.ok_or_else(|| refuse("its bounding box is not finite".into()))?;
        Ok(Self {
            compound,
            parts,
            meshes,
            unit_mass,
            lo: aabb.min.as_dvec3(),
            hi: aabb.max.as_dvec3(),
        })
    }

    /// The primitive parts as a [`Compound`] (`None` when every part is a mesh).
    pub fn compound(&self) -> Option<&Compound> {
        self.compound.as_ref()
    }

    /// The primitive parts: each prepared shape with its pose in the collider frame.
    pub fn parts(&self) -> impl Iterator<Item = (&PrimitiveShape, DPose)> + '_ {
        self.parts
            .iter()
            .zip(self.compound.iter().flat_map(|c| c.parts()))
            .map(|(s, p)| (s, p.pose))
    }

    /// The mesh parts, numbered after the primitive parts in contacts.
    pub fn meshes(&self) -> &[MeshPart] {
        &self.meshes
    }

    /// Volume, centre of mass and inertia at unit density (the parts' sums, parallel-axis
    /// theorem).
    pub fn unit_mass(&self) -> &MassProperties {
        &self.unit_mass
    }

    /// The local bounding box `(min, max)`.
    pub fn local_box(&self) -> (DVec3, DVec3) {
        (self.lo, self.hi)
    }

    /// The world box under the collider pose `pose` (the union of the parts' boxes: tight for
    /// the primitives, the placed local box for a mesh); `None` for a non-finite pose.
    pub fn world_aabb(&self, pose: &DPose) -> Option<Aabb> {
        let mut out = match &self.compound {
            Some(c) => c.aabb(pose)?,
            None => Aabb::EMPTY,
        };
        for m in &self.meshes {
            out = out.union(m.shape.world_aabb(&pose.mul(&m.pose))?);
        }
        Some(out)
    }

    /// Whether two compounds have the same parts at the same poses (mesh parts: the same
    /// prepared mesh, [`MeshShape::id`]).
    pub fn same_parts(&self, other: &Self) -> bool {
        self.compound == other.compound
            && self.meshes.len() == other.meshes.len()
            && self
                .meshes
                .iter()
                .zip(&other.meshes)
                .all(|(a, b)| a.shape.id() == b.shape.id() && a.pose == b.pose)
    }
}

/// Volume, centre of mass and inertia about it of solids given as `(volume, centre of mass,
/// inertia about it)` in one frame (unit density; parallel-axis theorem); `None` when the total
/// volume is not finite and positive.
fn combined_mass(solids: &[(f64, DVec3, DMat3)]) -> Option<MassProperties> {
    let volume: f64 = solids.iter().map(|s| s.0).sum();
    if !(volume.is_finite() && volume > 0.0) {
        return None;
    }
    let com = solids.iter().map(|s| s.1 * s.0).sum::<DVec3>() / volume;
    let mut inertia = DMat3::ZERO;
    for &(v, c, i) in solids {
        inertia += i + parallel_axis(c - com) * v;
    }
    Some(MassProperties {
        volume,
        mass: volume,
        center_of_mass: com,
        inertia,
    })
}

/// What a body collides with.
#[derive(Clone, Debug)]
pub enum Shape {
    /// A closed triangle mesh.
    Mesh(Arc<MeshShape>),
    /// An infinite half-space (for static or kinematic bodies: it has no mass).
    HalfSpace(HalfSpace),
    /// A sphere, capsule, cuboid or cylinder.
    Primitive(Arc<PrimitiveShape>),
    /// Several primitives in one body.
    Compound(Arc<CompoundShape>),
}

impl Shape {
    /// The shape of a primitive: a [`Shape::Primitive`], or for a half-space a
    /// [`Shape::HalfSpace`] through the frame's origin.
    pub fn from_primitive(primitive: Primitive) -> Self {
        match primitive {
            Primitive::HalfSpace { normal, .. } => Shape::HalfSpace(HalfSpace {
                normal,
                offset: 0.0,
            }),
            p => Shape::Primitive(Arc::new(
                PrimitiveShape::new(p).expect("a bounded primitive is accepted"),
            )),
        }
    }

    /// The shape of a compound of primitives (see [`CompoundShape::new`]).
    pub fn compound(parts: Vec<CompoundPart>) -> Result<Self, PrimitiveError> {
        Ok(Shape::Compound(Arc::new(CompoundShape::new(parts)?)))
    }

    /// The shape of a compound of primitives and meshes (see [`CompoundShape::with_meshes`]).
    pub fn compound_with_meshes(
        parts: Vec<CompoundPart>,
        meshes: Vec<MeshPart>,
    ) -> Result<Self, PrimitiveError> {
        Ok(Shape::Compound(Arc::new(CompoundShape::with_meshes(
            parts, meshes,
        )?)))
    }

    /// The mesh, if this is one.
    pub fn mesh(&self) -> Option<&Arc<MeshShape>> {
        match self {
            Shape::Mesh(m) => Some(m),
            _ => None,
        }
    }

    /// Mass properties at `density`; `None` for shapes without a finite volume (half-spaces).
    pub fn mass_at(&self, density: f64) -> Option<MassProperties> {
        let unit = match self {
            Shape::Mesh(m) => *m.unit_mass(),
            Shape::HalfSpace(_) => return None,
            Shape::Primitive(p) => p.unit_mass(),
            Shape::Compound(c) => *c.unit_mass(),
        };
        Some(MassProperties {
            volume: unit.volume,
            mass: unit.volume * density,
            center_of_mass: unit.center_of_mass,
            inertia: unit.inertia * density,
        })
    }

    /// Enclosed volume (`None` for a half-space).
    pub fn volume(&self) -> Option<f64> {
        self.mass_at(1.0).map(|m| m.volume)
    }

    /// The local bounding box `(min, max)`; `None` for a half-space.
    pub fn local_box(&self) -> Option<(DVec3, DVec3)> {
        match self {
            Shape::Mesh(m) => Some(m.local_box()),
            Shape::HalfSpace(_) => None,
            Shape::Primitive(p) => Some(p.local_box()),
            Shape::Compound(c) => Some(c.local_box()),
        }
    }

    /// The world box under the collider pose `pose`, rounded outward to `f32`; `None` for a
    /// half-space and for a non-finite pose.
    pub fn world_aabb(&self, pose: &DPose) -> Option<Aabb> {
        match self {
            Shape::Mesh(m) => m.world_aabb(pose),
            Shape::HalfSpace(_) => None,
            Shape::Primitive(p) => p.world_aabb(pose),
            Shape::Compound(c) => c.world_aabb(pose),
        }
    }

    /// Whether the shape is a primitive or a compound (its pairs are handled by
    /// `contact::primitive_pairs`).
    pub fn is_primitive(&self) -> bool {
        matches!(self, Shape::Primitive(_) | Shape::Compound(_))
    }
}

impl From<Primitive> for Shape {
    fn from(p: Primitive) -> Self {
        Shape::from_primitive(p)
    }
}

/// Which collision groups a collider belongs to and which it collides with (as avian's and
/// Rapier's collision groups): two colliders interact when each one's `memberships` meet the
/// other's `filters`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CollisionLayers {
    /// The groups this collider is in (bit `k` is group `k`).
    pub memberships: u32,
    /// The groups it collides with.
    pub filters: u32,
}

impl CollisionLayers {
    /// In every group, colliding with every group (the default).
    pub const ALL: Self = Self {
        memberships: u32::MAX,
        filters: u32::MAX,
    };
    /// In no group, colliding with nothing.
    pub const NONE: Self = Self {
        memberships: 0,
        filters: 0,
    };

    /// Layers from the two masks.
    pub const fn new(memberships: u32, filters: u32) -> Self {
        Self {
            memberships,
            filters,
        }
    }

    /// Whether colliders with these layers and `other` interact.
    pub const fn interacts_with(&self, other: &Self) -> bool {
        self.memberships & other.filters != 0 && other.memberships & self.filters != 0
    }
}

impl Default for CollisionLayers {
    fn default() -> Self {
        Self::ALL
    }
}

/// A body's collider.
#[derive(Clone, Debug)]
pub struct BodyShape {
    /// The shape, in the body's mesh frame.
    pub shape: Shape,
    /// Collision groups (default: everything with everything).
    pub layers: CollisionLayers,
    /// A sensor reports interference and intersection volume but exerts no force.
    pub sensor: bool,
}

impl BodyShape {
    /// A collider of a prepared mesh.
    pub fn mesh(shape: Arc<MeshShape>) -> Self {
        Self::from_shape(Shape::Mesh(shape))
    }

    /// A collider of a primitive (a half-space primitive gives a half-space collider).
    pub fn primitive(primitive: Primitive) -> Self {
        Self::from_shape(Shape::from_primitive(primitive))
    }

    /// A half-space collider.
    pub fn half_space(half_space: HalfSpace) -> Self {
        Self::from_shape(Shape::HalfSpace(half_space))
    }

    /// A solid (non-sensor) collider of `shape` in every layer.
    pub fn from_shape(shape: Shape) -> Self {
        Self {
            shape,
            layers: CollisionLayers::ALL,
            sensor: false,
        }
    }

    /// Sets the collision layers.
    pub fn with_layers(mut self, layers: CollisionLayers) -> Self {
        self.layers = layers;
        self
    }

    /// Makes it a sensor (or not).
    pub fn with_sensor(mut self, sensor: bool) -> Self {
        self.sensor = sensor;
        self
    }
}

impl From<Arc<MeshShape>> for BodyShape {
    fn from(shape: Arc<MeshShape>) -> Self {
        Self::mesh(shape)
    }
}

impl From<HalfSpace> for BodyShape {
    fn from(h: HalfSpace) -> Self {
        Self::half_space(h)
    }
}

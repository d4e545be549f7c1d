//! Colliders: the shape a body collides with — a primitive (sphere, capsule, cuboid, cylinder:
//! closed-form mass, contacts and queries), a compound of primitives, a closed triangle mesh given
//! as a Bevy `Mesh` (a handle, or the entity's own `Mesh3d`) or as an Interfere [`Solid`], or a
//! half-space — and its preparation. A primitive or compound is ready at once (the entity's
//! scale applied to its dimensions: any scale for a cuboid, `|x| = |z|` for a cylinder, a uniform
//! one for a sphere, a capsule or a compound; another scale is refused with a
//! [`ColliderError`]). A mesh's preparation: the mesh is validated, the entity's scale baked in, and the hierarchies built
//! (the OBBTree of Gottschalk–Lin–Manocha for the exact narrow phase, the Greß–Zachmann balanced
//! AABB tree for ray sampling; `interfere_dynamics::MeshShape`).
//!
//! Preparation runs on Bevy's `AsyncComputeTaskPool`, off the main thread where the app has
//! threads: the entity gets a [`ColliderShape`] when it is done, and the body joins the
//! simulation at the next fixed step. Shapes are shared: every entity with the same source and
//! scale gets the same prepared shape (prepared once).
//!
//! A mesh that cannot be a collider (not a triangle list, not closed, inconsistently oriented,
//! degenerate) is not silently dropped: the entity gets a [`ColliderError`] component naming the
//! reason and a warning is logged; fixing the mesh asset (or replacing the component) retries.

use crate::mesh_convert::trimesh_from_bevy;
use crate::settings::ColliderPreparation;
use bevy::platform::collections::HashMap;
use bevy::prelude::*;
use bevy::tasks::{AsyncComputeTaskPool, Task, futures::check_ready};
use interfere_dynamics::{HalfSpace, MeshShape, Shape};
use interfere_geometry::glam::{DMat3, DVec3, Vec3 as GVec3};
use interfere_geometry::{CompoundPart, DPose, Primitive, PrimitiveError};
use interfere_geometry::{ShapeError, Solid, TriMesh, shapes};
use std::sync::Arc;

/// Where a collider's shape comes from.
#[derive(Clone, Debug)]
pub enum ColliderSource {
    /// The entity's own `Mesh3d` (the rendered mesh is the collision mesh).
    Mesh3d,
    /// A mesh asset (resolved once it is loaded).
    Mesh(Handle<Mesh>),
    /// A closed solid built in code.
    Solid(Arc<Solid>),
    /// A shape prepared already (shared as is; the entity's scale is not applied).
    Prepared(Arc<MeshShape>),
    /// The solid half-space below the plane through `point` with outward `normal` (entity
    /// frame; for static and kinematic bodies).
    HalfSpace {
        /// Outward normal.
        normal: Vec3,
        /// A point on the plane.
        point: Vec3,
    },
    /// A generator ([`Collider::cuboid_mesh`], [`Collider::icosphere`]) refused its parameters;
    /// the entity gets a [`ColliderError`] naming the parameter.
    Invalid(ShapeError),
    /// A sphere, capsule, cuboid or cylinder centred at the entity's origin (a half-space
    /// primitive is a half-space through the origin).
    Primitive(Primitive),
    /// Several primitives, each placed by its pose in the entity's frame (see
    /// [`Collider::compound`]).
    Compound(Vec<CompoundPart>),
    /// A primitive or compound constructor refused its parameters; the entity gets a
    /// [`ColliderError`] naming them.
    InvalidPrimitive(PrimitiveError),
}

/// The collision shape of a body, in the entity's local frame (the entity's `Transform` scale
/// is baked in when the shape is prepared).
#[derive(Component, Clone, Debug)]
pub struct Collider {
    source: ColliderSource,
}

impl Collider {
    /// Collide with the entity's rendered `Mesh3d`.
    pub fn from_mesh3d() -> Self {
        Self {
            source: ColliderSource::Mesh3d,
        }
    }

    /// Collide with a mesh asset.
    pub fn mesh(handle: Handle<Mesh>) -> Self {
        Self {
            source: ColliderSource::Mesh(handle),
        }
    }

    /// Collide with a closed solid.
    pub fn solid(solid: Solid) -> Self {
        Self::shared_solid(Arc::new(solid))
    }

    /// Collide with a shared closed solid (prepared once for every entity that shares it at the
    /// same scale).
    pub fn shared_solid(solid: Arc<Solid>) -> Self {
        Self {
            source: ColliderSource::Solid(solid),
        }
    }

    /// Collide with a shape prepared already (for example once at start-up for many bodies).
    pub fn prepared(shape: Arc<MeshShape>) -> Self {
        Self {
            source: ColliderSource::Prepared(shape),
        }
    }

    /// The solid half-space below the plane through `point` with outward `normal`.
    pub fn half_space(normal: Vec3, point: Vec3) -> Self {
        Self {
            source: ColliderSource::HalfSpace { normal, point },
        }
    }

    /// A box with the given half extents, as a primitive (closed-form mass, contacts and
    /// queries). Half extents that are not finite and positive give a collider that the plugin
    /// refuses with a [`ColliderError`].
    pub fn cuboid(half_extents: Vec3) -> Self {
        Self::primitive_or_refused(Primitive::cuboid(half_extents.as_dvec3()))
    }

    /// A ball of the given radius, as a primitive.
    pub fn sphere(radius: f32) -> Self {
        Self::primitive_or_refused(Primitive::sphere(radius as f64))
    }

    /// A capsule along the entity's local Y (as Bevy's `Capsule3d`): the points within
    /// `radius` of the segment `y ∈ [−half_length, half_length]`, as a primitive.
    pub fn capsule(half_length: f32, radius: f32) -> Self {
        Self::primitive_or_refused(Primitive::capsule(half_length as f64, radius as f64))
    }

    /// A cylinder along the entity's local Y (as Bevy's `Cylinder`) with flat caps at
    /// `y = ±half_height`, as a primitive.
    pub fn cylinder(half_height: f32, radius: f32) -> Self {
        Self::primitive_or_refused(Primitive::cylinder(half_height as f64, radius as f64))
    }

    /// Any `interfere_geometry` primitive (a half-space primitive gives a half-space through
    /// the entity's origin).
    pub fn primitive(primitive: Primitive) -> Self {
        Self {
            source: ColliderSource::Primitive(primitive),
        }
    }

    /// Several primitive colliders fixed in one body, each placed by a `Transform` in the
    /// entity's frame (its scale is applied to that part's dimensions, with the rules of the
    /// entity scale in the module documentation). Every part must be a primitive collider
    /// ([`Collider::sphere`], [`Collider::capsule`], [`Collider::cuboid`],
    /// [`Collider::cylinder`], [`Collider::primitive`] with a bounded primitive, or a compound,
    /// whose parts are taken over); anything else, or no part, gives a collider the plugin
    /// refuses with a [`ColliderError`]. The parts should not overlap (their masses add).
    pub fn compound(parts: impl IntoIterator<Item = (Transform, Collider)>) -> Self {
        let mut out = Vec::new();
        for (k, (t, c)) in parts.into_iter().enumerate() {
            let refuse = |why: String| Self {
                source: ColliderSource::InvalidPrimitive(PrimitiveError::InvalidCompound(format!(
                    "part {k}: {why}"
                ))),
            };
            let rotation = DMat3::from_quat(t.rotation.as_dquat().normalize());
            let place = DPose {
                rotation,
                translation: t.translation.as_dvec3(),
            };
            let inner: Vec<CompoundPart> = match c.source {
                ColliderSource::Primitive(p) => vec![CompoundPart {
                    pose: DPose::IDENTITY,
                    shape: p,
                }],
                ColliderSource::Compound(parts) => parts,
                ColliderSource::InvalidPrimitive(e) => return refuse(e.to_string()),
                _ => return refuse("only primitive colliders can be parts of a compound".into()),
            };
            for part in inner {
                match scaled_part(&part, t.scale) {
                    Ok(part) => out.push(CompoundPart {
                        pose: place.mul(&part.pose),
                        shape: part.shape,
                    }),
                    Err(e) => return refuse(e),
                }
            }
        }
        Self::from_parts(out)
    }

    /// A compound of primitives placed in the entity's frame (the form child colliders can be
    /// merged into). Invalid parts (none, a half-space, a bad pose) give a collider the plugin
    /// refuses with a [`ColliderError`].
    pub fn from_parts(parts: Vec<CompoundPart>) -> Self {
        match interfere_geometry::Compound::new(parts.clone()) {
            Ok(_) => Self {
                source: ColliderSource::Compound(parts),
            },
            Err(e) => Self {
                source: ColliderSource::InvalidPrimitive(e),
            },
        }
    }

    /// A box with the given half extents as a closed triangle mesh (12 triangles: the mesh
    /// pipeline, for comparisons with mesh colliders and GPU backends).
    pub fn cuboid_mesh(half_extents: Vec3) -> Self {
        Self::generated(shapes::cuboid(GVec3::from_array(half_extents.to_array())))
    }

    /// A geodesic sphere mesh (`subdivisions` 2 gives 320 triangles, 3 gives 1280). A radius
    /// that is not finite and positive, or too many subdivisions, give a collider that the
    /// plugin refuses with a [`ColliderError`]. [`Collider::sphere`] is the exact ball.
    pub fn icosphere(radius: f32, subdivisions: u32) -> Self {
        Self::generated(shapes::icosphere(radius, subdivisions))
    }

    fn primitive_or_refused(p: Result<Primitive, PrimitiveError>) -> Self {
        match p {
            Ok(p) => Self::primitive(p),
            Err(e) => Self {
                source: ColliderSource::InvalidPrimitive(e),
            },
        }
    }

    fn generated(solid: Result<Solid, ShapeError>) -> Self {
        match solid {
            Ok(solid) => Self::solid(solid),
            Err(e) => Self {
                source: ColliderSource::Invalid(e),
            },
        }
    }

    /// Where the shape comes from.
    pub fn source(&self) -> &ColliderSource {
        &self.source
    }
}

/// Why an entity's collider could not be prepared (shown as a warning on the entity).
#[derive(Component, Clone, Debug, PartialEq, Eq)]
pub struct ColliderError {
    /// The reason, naming the mesh and the problem (for example the first open edge).
    pub reason: String,
}

/// A prepared collider (inserted by the plugin when preparation finishes): the shape with the
/// entity's scale baked in.
#[derive(Component, Clone, Debug)]
pub struct ColliderShape {
    shape: Shape,
    scale: Vec3,
}

impl ColliderShape {
    /// A prepared shape as it is (for example a primitive for a shape query).
    pub fn from_shape(shape: Shape) -> Self {
        Self {
            shape,
            scale: Vec3::ONE,
        }
    }

    /// Prepares `solid` (already scaled) now, on the calling thread.
    pub fn new(solid: Solid) -> Result<Self, String> {
        MeshShape::new(solid)
            .map(|m| Self {
                shape: Shape::Mesh(Arc::new(m)),
                scale: Vec3::ONE,
            })
            .map_err(|e| e.to_string())
    }

    /// The prepared shape.
    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// The mesh, for mesh colliders.
    pub fn mesh(&self) -> Option<&Arc<MeshShape>> {
        self.shape.mesh()
    }

    /// The solid (entity frame, scale applied), for mesh colliders.
    pub fn solid(&self) -> Option<&Solid> {
        self.mesh().map(|m| m.solid())
    }

    /// Enclosed volume (0 for a half-space).
    pub fn volume(&self) -> f64 {
        self.shape.volume().unwrap_or(0.0)
    }

    /// The scale that was baked in.
    pub fn scale(&self) -> Vec3 {
        self.scale
    }

    /// Whether two prepared shapes are the same one (shared).
    pub fn same_shape(&self, other: &ColliderShape) -> bool {
        match (&self.shape, &other.shape) {
            (Shape::Mesh(a), Shape::Mesh(b)) => Arc::ptr_eq(a, b),
            (Shape::HalfSpace(a), Shape::HalfSpace(b)) => a == b,
            (Shape::Primitive(a), Shape::Primitive(b)) => a.primitive() == b.primitive(),
            (Shape::Compound(a), Shape::Compound(b)) => a.same_parts(b),
            _ => false,
        }
    }
}

/// The entity's `scale` applied to a primitive's dimensions: any scale for a cuboid,
/// `|x| = |z|` for a cylinder, a uniform one (up to signs) for a sphere or a capsule (the shapes
/// are symmetric under each axis reflection, so signs do not matter); `Err` names the scale
/// that does not keep the shape's kind. A half-space is returned as it is.
pub(crate) fn scaled_primitive(p: &Primitive, scale: Vec3) -> Result<Primitive, String> {
    if scale == Vec3::ONE || !p.is_bounded() {
        return Ok(*p);
    }
    let s = scale.as_dvec3().abs();
    if !(s.is_finite() && s.min_element() > 0.0) {
        return Err(format!("the entity's scale {scale} is zero or not finite"));
    }
    let uniform = |what: &str| {
        if (s.x - s.y).abs() <= 1e-6 * s.x && (s.x - s.z).abs() <= 1e-6 * s.x {
            Ok(s.x)
        } else {
            Err(format!(
                "the non-uniform scale {scale} would not keep the {what} a {what}; use a uniform \
                 scale, or a mesh collider"
            ))
        }
    };
    let made = match p.kind() {
        interfere_geometry::PrimitiveKind::Cuboid => {
            let (_, hi) = p.local_bounds().unwrap_or_default();
            Primitive::cuboid(hi * s)
        }
        interfere_geometry::PrimitiveKind::Sphere => {
            let (_, hi) = p.local_bounds().unwrap_or_default();
            Primitive::sphere(hi.x * uniform("sphere")?)
        }
        interfere_geometry::PrimitiveKind::Capsule => {
            let k = uniform("capsule")?;
            let (_, hi) = p.local_bounds().unwrap_or_default();
            // Local bounds: (r, h + r, r).
            Primitive::capsule((hi.y - hi.x) * k, hi.x * k)
        }
        interfere_geometry::PrimitiveKind::Cylinder => {
            if (s.x - s.z).abs() > 1e-6 * s.x {
                return Err(format!(
                    "the scale {scale} has |x| ≠ |z| and would not keep the cylinder round; \
                     use a mesh collider"
                ));
            }
            let (_, hi) = p.local_bounds().unwrap_or_default();
            Primitive::cylinder(hi.y * s.y, hi.x * s.x)
        }
        interfere_geometry::PrimitiveKind::HalfSpace => Ok(*p),
    };
    made.map_err(|e| e.to_string())
}

/// A compound part under `scale` (the compound's frame scaled about its origin): `|scale|` must
/// be uniform; its signs reflect the part's position, and its rotation `R` becomes `S R S` (`S`
/// the diagonal of signs), which places the same primitive since each is symmetric under its
/// own axis reflections.
pub(crate) fn scaled_part(part: &CompoundPart, scale: Vec3) -> Result<CompoundPart, String> {
    if scale == Vec3::ONE {
        return Ok(*part);
    }
    let s = scale.as_dvec3();
    let k = s.x.abs();
    if !(s.is_finite() && k > 0.0)
        || (s.y.abs() - k).abs() > 1e-6 * k
        || (s.z.abs() - k).abs() > 1e-6 * k
    {
        return Err(format!(
            "the scale {scale} of a compound must be uniform (up to signs)"
        ));
    }
    let signs = DMat3::from_diagonal(DVec3::new(s.x.signum(), s.y.signum(), s.z.signum()));
    Ok(CompoundPart {
        pose: DPose {
            rotation: signs * part.pose.rotation * signs,
            translation: part.pose.translation * s,
        },
        shape: scaled_primitive(&part.shape, Vec3::splat(k as f32))?,
    })
}

/// Scales a solid's vertices (a mirror, negative determinant, flips the winding back outward).
pub(crate) fn scaled_solid(solid: &Solid, scale: Vec3) -> Result<Solid, String> {
    if scale == Vec3::ONE {
        return Ok(solid.clone());
    }
    if !(scale.is_finite() && scale.x * scale.y * scale.z != 0.0) {
        return Err(format!("the entity's scale {scale} is zero or not finite"));
    }
    let s = GVec3::from_array(scale.to_array());
    let vertices: Vec<GVec3> = solid.vertices().iter().map(|v| *v * s).collect();
    let mut triangles = solid.triangles().to_vec();
    if s.x * s.y * s.z < 0.0 {
        for t in &mut triangles {
            t.swap(1, 2);
        }
    }
    let mesh = TriMesh::new(vertices, triangles).map_err(|e| e.to_string())?;
    Solid::new(mesh).map_err(|e| e.to_string())
}

/// What identifies a preparation: the source (a solid's allocation or a mesh asset) and the
/// scale's bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum ShapeKey {
    Solid(usize, [u32; 3]),
    Asset(AssetId<Mesh>, [u32; 3]),
}

type Prepared = Result<Arc<MeshShape>, String>;

/// Shapes prepared or being prepared, shared between entities with the same key.
#[derive(Resource, Default)]
pub(crate) struct ShapeCache {
    ready: HashMap<ShapeKey, Prepared>,
    running: HashMap<ShapeKey, Task<Prepared>>,
    /// Solids whose allocation keys are in `ready` (kept alive so an address is never reused by
    /// another solid while it is a key).
    keep: Vec<Arc<Solid>>,
}

impl ShapeCache {
    /// Prepares `solid` at `scale` under `key`: now (`blocking`, [`ColliderPreparation`]) or
    /// on the async compute pool.
    fn start(&mut self, key: ShapeKey, solid: Result<Solid, String>, scale: Vec3, blocking: bool) {
        if blocking {
            self.ready.insert(key, prepare(solid, scale));
        } else {
            let task = AsyncComputeTaskPool::get().spawn(async move { prepare(solid, scale) });
            self.running.insert(key, task);
        }
    }
}

/// An entity waiting for its shape.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PendingShape(ShapeKey);

fn scale_bits(s: Vec3) -> [u32; 3] {
    s.to_array().map(f32::to_bits)
}

fn prepare(solid: Result<Solid, String>, scale: Vec3) -> Prepared {
    solid
        .and_then(|s| scaled_solid(&s, scale))
        .and_then(|s| MeshShape::new(s).map_err(|e| e.to_string()))
        .map(Arc::new)
}

/// Starts (or joins) the preparation of colliders that are new, changed, or whose scale or mesh
/// asset changed; inserts finished shapes.
#[allow(clippy::type_complexity)]
pub(crate) fn prepare_colliders(
    mut commands: Commands,
    meshes: Res<Assets<Mesh>>,
    mut cache: ResMut<ShapeCache>,
    preparation: Option<Res<ColliderPreparation>>,
    mut mesh_events: MessageReader<AssetEvent<Mesh>>,
    query: Query<(
        Entity,
        Ref<Collider>,
        &Transform,
        Option<&Mesh3d>,
        Option<&ColliderShape>,
        Option<&ColliderError>,
        Option<&PendingShape>,
        Option<&Name>,
    )>,
) {
    let blocking = preparation.is_some_and(|p| *p == ColliderPreparation::Blocking);
    let changed_assets: Vec<AssetId<Mesh>> = mesh_events
        .read()
        .filter_map(|e| match e {
            AssetEvent::Added { id } | AssetEvent::Modified { id } => Some(*id),
            _ => None,
        })
        .collect();
    for id in &changed_assets {
        cache
            .ready
            .retain(|k, _| !matches!(k, ShapeKey::Asset(a, _) if a == id));
    }
    // Finish running preparations.
    let cache = &mut *cache;
    let mut finished = Vec::new();
    for (key, task) in cache.running.iter_mut() {
        if let Some(result) = check_ready(task) {
            finished.push((*key, result));
        }
    }
    for (key, result) in finished {
        cache.running.remove(&key);
        cache.ready.insert(key, result);
    }
    for (entity, collider, transform, mesh3d, shape, error, pending, name) in &query {
        let label = || {
            name.map(|n| format!("{n} ({entity})"))
                .unwrap_or_else(|| entity.to_string())
        };
        // A pending entity whose shape is ready.
        if let Some(PendingShape(key)) = pending
            && !collider.is_changed()
        {
            if let Some(result) = cache.ready.get(key) {
                finish(&mut commands, entity, &label(), result, transform.scale);
            }
            continue;
        }
        let handle = match &collider.source {
            ColliderSource::Mesh3d => mesh3d.map(|m| m.0.clone()),
            ColliderSource::Mesh(h) => Some(h.clone()),
            _ => None,
        };
        let asset_changed = handle
            .as_ref()
            .is_some_and(|h| changed_assets.contains(&h.id()));
        let scale_changed = shape.is_some_and(|s| {
            s.scale != transform.scale && !matches!(collider.source, ColliderSource::Prepared(_))
        });
        let fresh = shape.is_none() && error.is_none() && pending.is_none();
        if !(fresh || collider.is_changed() || asset_changed || scale_changed) {
            continue;
        }
        let scale = transform.scale;
        let key = match &collider.source {
            ColliderSource::Invalid(e) => {
                report(&mut commands, entity, &label(), e.to_string());
                continue;
            }
            ColliderSource::InvalidPrimitive(e) => {
                report(&mut commands, entity, &label(), e.to_string());
                continue;
            }
            ColliderSource::Primitive(p) => {
                match scaled_primitive(p, scale) {
                    Ok(p) => ready(&mut commands, entity, Shape::from_primitive(p), scale),
                    Err(e) => report(&mut commands, entity, &label(), e),
                }
                continue;
            }
            ColliderSource::Compound(parts) => {
                let made = parts
                    .iter()
                    .map(|p| scaled_part(p, scale))
                    .collect::<Result<Vec<_>, _>>()
                    .and_then(|parts| Shape::compound(parts).map_err(|e| e.to_string()));
                match made {
                    Ok(shape) => ready(&mut commands, entity, shape, scale),
                    Err(e) => report(&mut commands, entity, &label(), e),
                }
                continue;
            }
            ColliderSource::Prepared(m) => {
                finish(&mut commands, entity, &label(), &Ok(m.clone()), Vec3::ONE);
                continue;
            }
            ColliderSource::HalfSpace { normal, point } => {
                match HalfSpace::new(normal.as_dvec3(), point.as_dvec3()) {
                    Some(h) => {
                        commands
                            .entity(entity)
                            .insert(ColliderShape {
                                shape: Shape::HalfSpace(h),
                                scale: Vec3::ONE,
                            })
                            .remove::<(ColliderError, PendingShape)>();
                    }
                    None => report(
                        &mut commands,
                        entity,
                        &label(),
                        format!("half-space normal {normal} or point {point} is not usable"),
                    ),
                }
                continue;
            }
            ColliderSource::Solid(s) => {
                let key = ShapeKey::Solid(Arc::as_ptr(s) as usize, scale_bits(scale));
                if !cache.ready.contains_key(&key) && !cache.running.contains_key(&key) {
                    cache.keep.push(s.clone());
                    cache.start(key, Ok((**s).clone()), scale, blocking);
                }
                key
            }
            ColliderSource::Mesh3d | ColliderSource::Mesh(_) => {
                let Some(handle) = handle else {
                    report(
                        &mut commands,
                        entity,
                        &label(),
                        "Collider::from_mesh3d() on an entity without Mesh3d".into(),
                    );
                    continue;
                };
                let key = ShapeKey::Asset(handle.id(), scale_bits(scale));
                if !cache.ready.contains_key(&key) && !cache.running.contains_key(&key) {
                    let Some(mesh) = meshes.get(&handle) else {
                        // Not loaded yet: try again next step.
                        continue;
                    };
                    let solid = trimesh_from_bevy(mesh)
                        .map_err(|e| format!("mesh {handle:?}: {e}"))
                        .and_then(|(m, _)| {
                            Solid::new(m)
                                .map_err(|e| format!("mesh {handle:?} is not a closed solid: {e}"))
                        });
                    cache.start(key, solid, scale, blocking);
                }
                key
            }
        };
        match cache.ready.get(&key) {
            Some(result) => finish(&mut commands, entity, &label(), result, scale),
            None => {
                commands.entity(entity).insert(PendingShape(key));
            }
        }
    }
}

fn finish(commands: &mut Commands, entity: Entity, label: &str, result: &Prepared, scale: Vec3) {
    match result {
        Ok(mesh) => {
            commands
                .entity(entity)
                .insert(ColliderShape {
                    shape: Shape::Mesh(mesh.clone()),
                    scale,
                })
                .remove::<(ColliderError, PendingShape)>();
        }
        Err(reason) => report(commands, entity, label, reason.clone()),
    }
}

fn ready(commands: &mut Commands, entity: Entity, shape: Shape, scale: Vec3) {
    commands
        .entity(entity)
        .insert(ColliderShape { shape, scale })
        .remove::<(ColliderError, PendingShape)>();
}

fn report(commands: &mut Commands, entity: Entity, label: &str, reason: String) {
    warn!("interfere: collider of {label} refused: {reason}");
    commands
        .entity(entity)
        .insert(ColliderError { reason })
        .remove::<(ColliderShape, PendingShape)>();
}

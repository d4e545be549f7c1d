//! Colliders: the shape a body collides with — a closed triangle mesh given as a Bevy `Mesh` (a
//! handle, or the entity's own `Mesh3d`) or as an Interfere [`Solid`], or a half-space — and its
//! preparation: the mesh is validated, the entity's scale baked in, and the hierarchies built
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
use bevy::platform::collections::HashMap;
use bevy::prelude::*;
use bevy::tasks::{AsyncComputeTaskPool, Task, futures::check_ready};
use interfere_dynamics::{HalfSpace, MeshShape, Shape};
use interfere_geometry::glam::Vec3 as GVec3;
use interfere_geometry::{Solid, TriMesh, shapes};
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

    /// A box with the given half extents (12 triangles).
    pub fn cuboid(half_extents: Vec3) -> Self {
        Self::solid(shapes::cuboid(GVec3::from_array(half_extents.to_array())))
    }

    /// A geodesic sphere (`subdivisions` 2 gives 320 triangles, 3 gives 1280).
    pub fn icosphere(radius: f32, subdivisions: u32) -> Self {
        Self::solid(shapes::icosphere(radius, subdivisions))
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
        self.mesh().map_or(0.0, |m| m.unit_mass().volume)
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
            _ => false,
        }
    }
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
                    let solid = (**s).clone();
                    let task =
                        AsyncComputeTaskPool::get().spawn(async move { prepare(Ok(solid), scale) });
                    cache.running.insert(key, task);
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
                    let task =
                        AsyncComputeTaskPool::get().spawn(async move { prepare(solid, scale) });
                    cache.running.insert(key, task);
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

fn report(commands: &mut Commands, entity: Entity, label: &str, reason: String) {
    warn!("interfere: collider of {label} refused: {reason}");
    commands
        .entity(entity)
        .insert(ColliderError { reason })
        .remove::<(ColliderShape, PendingShape)>();
}

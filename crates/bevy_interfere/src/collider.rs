//! Colliders: the closed triangle mesh a body collides with, given as a Bevy `Mesh` (a handle, or
//! the entity's own `Mesh3d`) or as an Interfere [`Solid`], validated once and prepared with the
//! hierarchies the narrow phase (OBBTree, Gottschalk–Lin–Manocha 1996) and the volume sampling
//! (balanced AABB tree, Greß–Zachmann 2004 §3) need.
//!
//! A mesh that cannot be a collider (not a triangle list, not closed, inconsistently oriented,
//! degenerate) is not silently dropped: the entity gets a [`ColliderError`] component naming the
//! reason and a warning is logged; fixing the mesh asset (or replacing the component) retries.

use crate::mesh_convert::trimesh_from_bevy;
use bevy::prelude::*;
use interfere_dynamics::{MassProperties, mass_properties};
use interfere_geometry::glam::{DVec3, Vec3 as GVec3};
use interfere_geometry::{Collider as MeshCollider, ShapeError, Solid, TriMesh, shapes};
use std::sync::Arc;

/// Where a collider's mesh comes from.
#[derive(Clone, Debug)]
pub enum ColliderSource {
    /// The entity's own `Mesh3d` (the rendered mesh is the collision mesh).
    Mesh3d,
    /// A mesh asset (resolved once it is loaded).
    Mesh(Handle<Mesh>),
    /// A closed solid built in code.
    Solid(Arc<Solid>),
    /// A generator ([`Collider::cuboid`], [`Collider::icosphere`]) refused its parameters; the
    /// entity gets a [`ColliderError`] naming the parameter.
    Invalid(ShapeError),
}

/// The collision shape of a body: a closed triangle mesh in the entity's local frame (the
/// entity's `Transform` scale is baked in when the shape is prepared).
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
        Self {
            source: ColliderSource::Solid(Arc::new(solid)),
        }
    }

    /// A box with the given half extents (12 triangles). Half extents that are not finite and
    /// positive give a collider that the plugin refuses with a [`ColliderError`].
    pub fn cuboid(half_extents: Vec3) -> Self {
        Self::generated(shapes::cuboid(GVec3::from_array(half_extents.to_array())))
    }

    /// A geodesic sphere (`subdivisions` 2 gives 320 triangles, 3 gives 1280). A radius that is
    /// not finite and positive, or too many subdivisions, give a collider that the plugin
    /// refuses with a [`ColliderError`].
    pub fn icosphere(radius: f32, subdivisions: u32) -> Self {
        Self::generated(shapes::icosphere(radius, subdivisions))
    }

    fn generated(solid: Result<Solid, ShapeError>) -> Self {
        match solid {
            Ok(solid) => Self::solid(solid),
            Err(e) => Self {
                source: ColliderSource::Invalid(e),
            },
        }
    }

    /// Where the mesh comes from.
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

/// A prepared collider (inserted by the plugin): the solid with the entity's scale baked in,
/// its hierarchies and its mass properties at unit density.
#[derive(Component, Clone)]
pub struct ColliderShape(pub(crate) Arc<PreparedShape>);

impl ColliderShape {
    /// Prepares `solid` (already scaled) for collision.
    pub fn new(solid: Solid) -> Result<Self, String> {
        PreparedShape::new(solid).map(|s| Self(Arc::new(s)))
    }

    /// The solid, in the entity's local frame with its scale applied.
    pub fn solid(&self) -> &Solid {
        &self.0.solid
    }

    /// Number of triangles.
    pub fn triangle_count(&self) -> usize {
        self.0.solid.triangle_count()
    }

    /// Enclosed volume.
    pub fn volume(&self) -> f64 {
        self.0.unit_mass.volume
    }

    /// The scale that was baked in.
    pub fn scale(&self) -> Vec3 {
        self.0.scale
    }
}

impl std::fmt::Debug for ColliderShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ColliderShape")
            .field("triangles", &self.triangle_count())
            .field("volume", &self.volume())
            .field("scale", &self.0.scale)
            .finish()
    }
}

/// Everything the pipeline needs of one collider.
pub(crate) struct PreparedShape {
    pub solid: Solid,
    /// Exact narrow phase (OBBTree) and volume sampling tree (balanced AABB tree).
    pub collider: MeshCollider,
    pub unit_mass: MassProperties,
    pub lo: DVec3,
    pub hi: DVec3,
    pub scale: Vec3,
}

impl PreparedShape {
    fn new(solid: Solid) -> Result<Self, String> {
        let unit_mass = mass_properties(&solid, 1.0).map_err(|e| e.to_string())?;
        let aabb = solid.aabb();
        let collider = MeshCollider::new(solid.mesh().clone());
        // Build both hierarchies now, not in the middle of a step.
        collider.obb_tree();
        collider.balanced_tree();
        Ok(Self {
            lo: aabb.min.as_dvec3(),
            hi: aabb.max.as_dvec3(),
            collider,
            unit_mass,
            scale: Vec3::ONE,
            solid,
        })
    }

    /// The smallest side of the local box (the scale the volume spacing is relative to).
    pub fn size(&self) -> f64 {
        (self.hi - self.lo).min_element()
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

/// Prepares colliders that are new, changed, or whose scale or mesh asset changed.
#[allow(clippy::type_complexity)]
pub(crate) fn prepare_colliders(
    mut commands: Commands,
    meshes: Res<Assets<Mesh>>,
    mut mesh_events: MessageReader<AssetEvent<Mesh>>,
    query: Query<(
        Entity,
        Ref<Collider>,
        &Transform,
        Option<&Mesh3d>,
        Option<&ColliderShape>,
        Option<&ColliderError>,
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
    for (entity, collider, transform, mesh3d, shape, error, name) in &query {
        let handle = match &collider.source {
            ColliderSource::Mesh3d => mesh3d.map(|m| m.0.clone()),
            ColliderSource::Mesh(h) => Some(h.clone()),
            ColliderSource::Solid(_) | ColliderSource::Invalid(_) => None,
        };
        let asset_changed = handle
            .as_ref()
            .is_some_and(|h| changed_assets.contains(&h.id()));
        let scale_changed = shape.is_some_and(|s| s.0.scale != transform.scale);
        let pending = shape.is_none() && error.is_none();
        if !(pending || collider.is_changed() || asset_changed || scale_changed) {
            continue;
        }
        let label = name
            .map(|n| format!("{n} ({entity})"))
            .unwrap_or_else(|| entity.to_string());
        let solid: Result<Solid, String> = match &collider.source {
            ColliderSource::Solid(s) => Ok((**s).clone()),
            ColliderSource::Invalid(e) => Err(e.to_string()),
            ColliderSource::Mesh3d | ColliderSource::Mesh(_) => {
                let Some(handle) = handle else {
                    report(
                        &mut commands,
                        entity,
                        &label,
                        "Collider::from_mesh3d() on an entity without Mesh3d".into(),
                    );
                    continue;
                };
                let Some(mesh) = meshes.get(&handle) else {
                    // Not loaded yet: try again next step.
                    continue;
                };
                trimesh_from_bevy(mesh)
                    .map_err(|e| format!("mesh {handle:?}: {e}"))
                    .and_then(|(m, _)| {
                        Solid::new(m)
                            .map_err(|e| format!("mesh {handle:?} is not a closed solid: {e}"))
                    })
            }
        };
        match solid
            .and_then(|s| scaled_solid(&s, transform.scale))
            .and_then(|s| {
                PreparedShape::new(s).map(|mut p| {
                    p.scale = transform.scale;
                    p
                })
            }) {
            Ok(prepared) => {
                commands
                    .entity(entity)
                    .insert(ColliderShape(Arc::new(prepared)))
                    .remove::<ColliderError>();
            }
            Err(reason) => report(&mut commands, entity, &label, reason),
        }
    }
}

fn report(commands: &mut Commands, entity: Entity, label: &str, reason: String) {
    warn!("interfere: collider of {label} refused: {reason}");
    commands
        .entity(entity)
        .insert(ColliderError { reason })
        .remove::<ColliderShape>();
}

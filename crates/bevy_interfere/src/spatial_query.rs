//! Spatial queries from systems: the [`SpatialQuery`] system parameter answers ray casts, point
//! containment, shape intersection, capsule casts and box queries over the simulation's current state (as of
//! the last fixed step), with entities instead of body handles and an entity-based
//! [`SpatialQueryFilter`]. Every query is `interfere_dynamics::query` underneath: rays are cast
//! with a watertight exact hit test through each mesh's tree, point containment and shape
//! intersection are exact (the step's own narrow phase). See that module for the details and
//! the cost (a linear scan over the bodies' boxes, then the exact test).
//!
//! ```no_run
//! use bevy::prelude::*;
//! use bevy_interfere::prelude::*;
//!
//! fn look_down(query: SpatialQuery) {
//!     let filter = SpatialQueryFilter::default();
//!     if let Some(hit) = query.cast_ray(Vec3::Y * 10.0, Dir3::NEG_Y, 100.0, false, &filter) {
//!         info!("{} at {} (normal {})", hit.entity, hit.distance, hit.normal);
//!     }
//! }
//! ```

use crate::collider::ColliderShape;
use crate::layers::{CollisionLayers, LayerMask};
use crate::world::PhysicsWorld;
use bevy::ecs::entity::EntityHashSet;
use bevy::ecs::system::SystemParam;
use bevy::math::bounding::Aabb3d;
use bevy::prelude::*;
use interfere_dynamics::{BodyHandle, QueryFilter};
use interfere_geometry::glam::DMat3;
use interfere_geometry::{Aabb, DPose};

/// Which entities a spatial query may report. The default admits every body.
#[derive(Clone, Default)]
pub struct SpatialQueryFilter<'a> {
    /// The query's own layers: a body is considered when these and the body's
    /// [`CollisionLayers`] interact (each one's memberships meet the other's filters).
    pub layers: CollisionLayers,
    /// Entities never reported.
    pub excluded_entities: EntityHashSet,
    /// Skip [`crate::Sensor`] bodies.
    pub exclude_sensors: bool,
    /// Called last, for entities that pass everything else: reported only if it returns `true`.
    pub predicate: Option<&'a dyn Fn(Entity) -> bool>,
}

impl std::fmt::Debug for SpatialQueryFilter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpatialQueryFilter")
            .field("layers", &self.layers)
            .field("excluded_entities", &self.excluded_entities)
            .field("exclude_sensors", &self.exclude_sensors)
            .field("predicate", &self.predicate.map(|_| "Fn(Entity) -> bool"))
            .finish()
    }
}

impl<'a> SpatialQueryFilter<'a> {
    /// Reports bodies in a group of `mask` (that collide with some group at all).
    pub fn from_mask(mask: impl Into<LayerMask>) -> Self {
        Self::default().with_layers(CollisionLayers::new(LayerMask::ALL, mask))
    }

    /// Sets the query's layers.
    pub fn with_layers(mut self, layers: CollisionLayers) -> Self {
        self.layers = layers;
        self
    }

    /// Excludes these entities.
    pub fn with_excluded_entities(mut self, entities: impl IntoIterator<Item = Entity>) -> Self {
        self.excluded_entities.extend(entities);
        self
    }

    /// Skips sensors.
    pub fn without_sensors(mut self) -> Self {
        self.exclude_sensors = true;
        self
    }

    /// Reports only entities for which `predicate` returns `true`.
    pub fn with_predicate(mut self, predicate: &'a dyn Fn(Entity) -> bool) -> Self {
        self.predicate = Some(predicate);
        self
    }
}

/// Where a ray meets a body.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RayHitData {
    /// The entity hit.
    pub entity: Entity,
    /// Distance from the origin along the direction.
    pub distance: f32,
    /// The hit point.
    pub point: Vec3,
    /// Outward unit normal of the surface hit (of the triangle hit, for meshes); zero for a
    /// `solid` hit at the origin.
    pub normal: Vec3,
    /// The triangle hit (its index in the collider's mesh); `None` for half-spaces and `solid`
    /// hits at the origin.
    pub triangle: Option<u32>,
}

/// Where a capsule cast first touches a body.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShapeHitData {
    /// The entity touched.
    pub entity: Entity,
    /// How far the capsule travelled along the direction before touching.
    pub distance: f32,
    /// The body's point touched.
    pub point: Vec3,
    /// The normal at the contact, from the body towards the capsule.
    pub normal: Vec3,
    /// The triangle touched, for a mesh.
    pub triangle: Option<u32>,
}

/// A system parameter for spatial queries over the physics world (see the module
/// documentation). It reads [`PhysicsWorld`], so it sees the state of the last fixed step.
#[derive(SystemParam)]
pub struct SpatialQuery<'w> {
    world: Res<'w, PhysicsWorld>,
}

impl SpatialQuery<'_> {
    /// The physics world queried.
    pub fn physics_world(&self) -> &PhysicsWorld {
        &self.world
    }

    /// The first surface the ray from `origin` along `direction` meets within `max_distance`.
    /// With `solid`, a body containing the origin is hit at distance 0; otherwise a ray starting
    /// inside a body reports where it leaves it.
    pub fn cast_ray(
        &self,
        origin: Vec3,
        direction: Dir3,
        max_distance: f32,
        solid: bool,
        filter: &SpatialQueryFilter,
    ) -> Option<RayHitData> {
        let pw = &*self.world;
        with_filter(pw, filter, |f| {
            pw.simulation().cast_ray(
                origin.as_dvec3(),
                direction.as_vec3().as_dvec3(),
                f64::from(max_distance),
                solid,
                f,
            )
        })
        .and_then(|h| hit_data(pw, &h))
    }

    /// The first body a capsule (the points within `radius` of the segment `a`–`b`; a sphere
    /// when they coincide) moving along `direction` for up to `max_distance` touches, exactly
    /// (`interfere_dynamics::Simulation::cast_capsule`): a contact it starts in counts only when
    /// the motion pushes further in, and surfaces it only grazes (the coplanar edges of a
    /// tessellated floor) do not stop it. `None` for a non-finite segment or a radius not above 0.
    pub fn cast_capsule(
        &self,
        a: Vec3,
        b: Vec3,
        radius: f32,
        direction: Dir3,
        max_distance: f32,
        filter: &SpatialQueryFilter,
    ) -> Option<ShapeHitData> {
        let pw = &*self.world;
        let capsule =
            interfere_dynamics::Capsule::new(a.as_dvec3(), b.as_dvec3(), f64::from(radius))?;
        let max = f64::from(max_distance.max(0.0));
        let translation = direction.as_vec3().as_dvec3() * max;
        let hit = with_filter(pw, filter, |f| {
            pw.simulation().cast_capsule(&capsule, translation, f)
        })?;
        Some(ShapeHitData {
            entity: pw.entity_of(hit.body)?,
            distance: (hit.fraction * max) as f32,
            point: hit.point.as_vec3(),
            normal: hit.normal.as_vec3(),
            triangle: hit.triangle,
        })
    }

    /// Every surface crossing of the ray within `max_distance`, nearest first (a ray through a
    /// body reports where it enters and where it leaves); with `solid`, each body containing the
    /// origin also gives a hit at distance 0.
    pub fn ray_hits(
        &self,
        origin: Vec3,
        direction: Dir3,
        max_distance: f32,
        solid: bool,
        filter: &SpatialQueryFilter,
    ) -> Vec<RayHitData> {
        let pw = &*self.world;
        with_filter(pw, filter, |f| {
            pw.simulation().cast_ray_all(
                origin.as_dvec3(),
                direction.as_vec3().as_dvec3(),
                f64::from(max_distance),
                solid,
                f,
            )
        })
        .iter()
        .filter_map(|h| hit_data(pw, h))
        .collect()
    }

    /// The entities whose solid contains `point` (exact; a point on the surface is contained),
    /// in no particular order.
    pub fn point_intersections(&self, point: Vec3, filter: &SpatialQueryFilter) -> Vec<Entity> {
        let pw = &*self.world;
        let found = with_filter(pw, filter, |f| {
            pw.simulation().bodies_containing_point(point.as_dvec3(), f)
        });
        entities(pw, &found)
    }

    /// The entities whose collider interferes with `shape` placed at `position` and `rotation`
    /// (as an entity's `Transform` places its collider; the shape's scale is the one baked in
    /// when it was prepared). Exact, with the step's narrow phase: touching counts. In no
    /// particular order (the order bodies joined the simulation, which with background collider
    /// preparation depends on when each collider was ready).
    pub fn shape_intersections(
        &self,
        shape: &ColliderShape,
        position: Vec3,
        rotation: Quat,
        filter: &SpatialQueryFilter,
    ) -> Vec<Entity> {
        let pw = &*self.world;
        let pose = DPose {
            rotation: DMat3::from_quat(rotation.as_dquat().normalize()),
            translation: position.as_dvec3(),
        };
        let found = with_filter(pw, filter, |f| {
            pw.simulation().intersecting_bodies(shape.shape(), &pose, f)
        });
        entities(pw, &found)
    }

    /// The entities whose world bounding box overlaps `aabb` (half-spaces: whose solid it
    /// reaches), in no particular order.
    pub fn aabb_intersections_with_aabb(
        &self,
        aabb: Aabb3d,
        filter: &SpatialQueryFilter,
    ) -> Vec<Entity> {
        let pw = &*self.world;
        let b = Aabb::new(Vec3::from(aabb.min), Vec3::from(aabb.max));
        let found = with_filter(pw, filter, |f| pw.simulation().bodies_in_aabb(&b, f));
        entities(pw, &found)
    }
}

/// Runs `query` with the body-handle filter equivalent to `filter`.
fn with_filter<R>(
    pw: &PhysicsWorld,
    filter: &SpatialQueryFilter,
    query: impl FnOnce(&QueryFilter<'_>) -> R,
) -> R {
    let predicate = |h: BodyHandle| {
        filter
            .predicate
            .is_none_or(|p| pw.entity_of(h).is_some_and(p))
    };
    let predicate: &dyn Fn(BodyHandle) -> bool = &predicate;
    let f = QueryFilter {
        layers: filter.layers.into(),
        exclude: filter
            .excluded_entities
            .iter()
            .filter_map(|e| pw.handle(*e))
            .collect(),
        exclude_sensors: filter.exclude_sensors,
        predicate: filter.predicate.map(|_| predicate),
    };
    query(&f)
}

fn hit_data(pw: &PhysicsWorld, h: &interfere_dynamics::RayHit) -> Option<RayHitData> {
    Some(RayHitData {
        entity: pw.entity_of(h.body)?,
        distance: h.distance as f32,
        point: h.point.as_vec3(),
        normal: h.normal.as_vec3(),
        triangle: h.triangle,
    })
}

fn entities(pw: &PhysicsWorld, handles: &[BodyHandle]) -> Vec<Entity> {
    handles.iter().filter_map(|h| pw.entity_of(*h)).collect()
}

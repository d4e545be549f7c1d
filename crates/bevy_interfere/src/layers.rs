//! Collision layers and sensors, as components mirrored into the body's collider
//! (`interfere_dynamics::BodyShape::{layers, sensor}`) before every step: the broad phase pairs
//! only bodies whose layers interact, the spatial queries ([`crate::SpatialQuery`]) filter by
//! them, and a sensor's contacts are reported ([`crate::ContactMessage::sensor`]) but exert no
//! force. Changing either on a living body updates its collider in place (no rebuild).

use bevy::prelude::*;

/// A set of collision groups, one bit per group (32 groups).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Reflect)]
#[reflect(Debug, Default, PartialEq)]
pub struct LayerMask(pub u32);

impl LayerMask {
    /// Every group.
    pub const ALL: Self = Self(u32::MAX);
    /// No group.
    pub const NONE: Self = Self(0);

    /// Group `k` alone (`NONE` for `k` ≥ 32).
    pub const fn layer(k: u32) -> Self {
        if k < 32 { Self(1 << k) } else { Self::NONE }
    }

    /// Whether the two masks share a group.
    pub const fn intersects(self, other: Self) -> bool {
        self.0 & other.0 != 0
    }
}

impl Default for LayerMask {
    /// Every group.
    fn default() -> Self {
        Self::ALL
    }
}

impl From<u32> for LayerMask {
    fn from(bits: u32) -> Self {
        Self(bits)
    }
}

impl std::ops::BitOr for LayerMask {
    type Output = Self;
    fn bitor(self, rhs: Self) -> Self {
        Self(self.0 | rhs.0)
    }
}

/// Which collision groups a body is in (`memberships`) and which it collides with (`filters`):
/// two bodies interact when each one's memberships meet the other's filters. Without the
/// component a body is in every group and collides with every group.
///
/// The ECS wrapper of [`interfere_dynamics::CollisionLayers`] (the simulation's own type, which the
/// mirror converts this into every step), with [`LayerMask`]s and Bevy reflection.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash, Reflect)]
#[reflect(Component, Debug, Default, PartialEq)]
pub struct CollisionLayers {
    /// The groups this body is in.
    pub memberships: LayerMask,
    /// The groups it collides with.
    pub filters: LayerMask,
}

impl CollisionLayers {
    /// In every group, colliding with every group (the default).
    pub const ALL: Self = Self {
        memberships: LayerMask::ALL,
        filters: LayerMask::ALL,
    };
    /// In no group, colliding with nothing.
    pub const NONE: Self = Self {
        memberships: LayerMask::NONE,
        filters: LayerMask::NONE,
    };

    /// Layers from the two masks (`u32` bits or [`LayerMask`]s).
    pub fn new(memberships: impl Into<LayerMask>, filters: impl Into<LayerMask>) -> Self {
        Self {
            memberships: memberships.into(),
            filters: filters.into(),
        }
    }

    /// Whether bodies with these layers and `other` interact.
    pub fn interacts_with(&self, other: &Self) -> bool {
        interfere_dynamics::CollisionLayers::from(*self).interacts_with(&(*other).into())
    }
}

impl Default for CollisionLayers {
    fn default() -> Self {
        Self::ALL
    }
}

impl From<CollisionLayers> for interfere_dynamics::CollisionLayers {
    fn from(l: CollisionLayers) -> Self {
        Self::new(l.memberships.0, l.filters.0)
    }
}

/// Makes a body a sensor: its overlaps are reported (collision and contact messages, with the
/// intersection volume, flagged `sensor`) but it exerts no force and feels none from contacts.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Component, Debug, Default, PartialEq)]
pub struct Sensor;

//! A contact hook's changes to one pair as the solver takes them ([`PairOverride`]); the hook
//! itself ([`crate::ContactHook`]) runs in `crate::simulation::hooks`.

use crate::contact::BodyId;
use interfere_geometry::glam::DVec3;
use serde::{Deserialize, Serialize};

/// What a hook changed for a pair, as the solver takes it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairOverride {
    /// The first body (lower id).
    pub a: BodyId,
    /// The second body.
    pub b: BodyId,
    /// Friction coefficient (static and dynamic) instead of the combined one.
    pub friction: Option<f64>,
    /// Restitution instead of the combined one.
    pub restitution: Option<f64>,
    /// Target velocity of b's surface relative to a's (its tangential part is used).
    pub surface_velocity: DVec3,
}

/// The override for the pair `(a, b)` in `overrides` (sorted by `(a, b)`, lower id first).
pub(crate) fn find(overrides: &[PairOverride], a: BodyId, b: BodyId) -> Option<&PairOverride> {
    let key = (a.min(b), a.max(b));
    overrides
        .binary_search_by_key(&key, |o| (o.a, o.b))
        .ok()
        .map(|k| &overrides[k])
}

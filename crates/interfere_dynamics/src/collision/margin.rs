//! Speculative margins near half-spaces: how far above a plane a body may be and still get
//! (speculative) contacts this step, from its size and its fastest point's travel in a step. The
//! broad phase, the narrow phase and the primitive contacts share them.

use crate::body::Body;
use crate::collision::shape::{MeshShape, Shape};
use interfere_geometry::glam::DVec3;

/// The speculative margin of a mesh body near a half-space: how far above the plane it may be
/// and still get (speculative) contacts this step — 1 % of its size, plus twice the distance its
/// fastest point can travel in a step.
pub fn plane_margin(b: &Body, mesh: &MeshShape, dt: f64) -> f64 {
    box_margin(b, mesh.local_box(), dt)
}

/// [`plane_margin`] for any shape with a local box (mesh, primitive, compound); 0 for a
/// half-space.
pub fn shape_margin(b: &Body, shape: &Shape, dt: f64) -> f64 {
    shape.local_box().map_or(0.0, |lb| box_margin(b, lb, dt))
}

/// How far the fastest point of body `b` travels in `dt` at its current velocity, `reach` being
/// its size (a point at that distance from its centre turns with `|ω|`). Shared with the
/// speculative contacts of moving mesh pairs (`crate::contact::speculative`).
pub fn travel(b: &Body, reach: f64, dt: f64) -> f64 {
    (b.linear_velocity.length() + b.angular_velocity.length() * reach) * dt
}

fn box_margin(b: &Body, lb: (DVec3, DVec3), dt: f64) -> f64 {
    moving_margin(
        b.linear_velocity.length(),
        b.angular_velocity.length(),
        lb,
        dt,
    )
}

/// The speculative margin of a shape with local box `(lo, hi)` moving at `speed` and turning at
/// `spin` (its own velocity, or its velocity relative to what it meets): 1 % of its thinnest
/// extent plus twice the distance its fastest point travels in `dt` ([`travel`]); 0 when that is
/// not finite.
pub fn moving_margin(speed: f64, spin: f64, (lo, hi): (DVec3, DVec3), dt: f64) -> f64 {
    let travel = (speed + spin * (hi - lo).length()) * dt;
    let margin = 0.01 * (hi - lo).min_element() + 2.0 * travel;
    if margin.is_finite() { margin } else { 0.0 }
}

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

fn box_margin(b: &Body, (lo, hi): (DVec3, DVec3), dt: f64) -> f64 {
    let margin = 0.01 * (hi - lo).min_element() + 2.0 * travel(b, (hi - lo).length(), dt);
    if margin.is_finite() { margin } else { 0.0 }
}

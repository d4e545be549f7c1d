//! Closed triangle meshes of primitives, with their exact volume deficit.
//!
//! The curved primitives are solids of revolution about local Y. A profile polygon in the
//! meridian half-plane `(ρ, y)` is revolved with `n = resolution` segments: every ring is a
//! regular `n`-gon, every band between two rings is made of planar trapezoids (split into two
//! triangles each), the poles are single vertices. The profile of the inscribed mesh has its
//! corners on the true profile:
//! * sphere: `2q` chords of the meridian semicircle, `q = ⌈n/4⌉` (so the meridian step `π/(2q)`
//!   matches the azimuth step `2π/n`);
//! * capsule: `q` chords per quarter circle on each hemisphere, joined by the straight side;
//! * cylinder: the rectangle (the caps are flat `n`-gon fans);
//! * cuboid: its 12 triangles (exact, resolution ignored).
//!
//! **Volume.** A band between rings `(ρ_i, y_i)` and `(ρ_{i+1}, y_{i+1})` is a frustum of similar
//! regular `n`-gons, of volume `k_n · π Δy (ρ_i² + ρ_i ρ_{i+1} + ρ_{i+1}²)/3` with
//! `k_n = n sin(2π/n)/(2π)` (polygon area over circle area). The inscribed mesh's volume is
//! therefore known in closed form ([`Primitive::tessellation_volume`]) and so is its relative
//! deficit ([`Primitive::tessellation_error`]). A priori: the chord polygon with `q` chords per
//! quarter contains the disk of radius `r cos(π/(4q))`, so the deficit is at most
//! `1 − k_n cos³(π/(4q)) ≤ (2π/n)²/6 + 3/2 (π/(4q))²` (for the cylinder exactly `1 − k_n`).
//! The vertices are stored in `f32`, which moves the mesh volume by less than `1e-6` of the
//! volume (tested) on top of that.
//!
//! **Circumscribed mesh** ([`Primitive::to_solid_circumscribed`]): the same construction with the
//! curved profile scaled about its centre(s) by `1/κ`, `κ` the smallest distance of a face
//! plane from the centre (per unit radius), so that every face plane is at least `r` from the
//! centre (sphere), the axis segment (capsule) or the axis (cylinder side), padded by `2e-6`
//! for the `f32` rounding. Both meshes are convex, so `inscribed ⊆ primitive ⊆ circumscribed`:
//! the pair brackets any monotone quantity, which the tests use as an oracle.

use super::{Primitive, PrimitiveError};
use crate::mesh::TriMesh;
use crate::shapes;
use crate::topology::Solid;
use glam::Vec3;
use std::f64::consts::PI;

/// The finest resolution (segments around the axis) accepted by the tessellations: a sphere at
/// this resolution has about 0.5 million triangles.
pub const TESSELLATION_MAX_RESOLUTION: u32 = 1024;

/// The smallest relative volume error [`Primitive::resolution_for`] accepts.
const MIN_TOLERANCE: f64 = 5e-5;

fn check_resolution(resolution: u32) -> Result<(), PrimitiveError> {
    if (3..=TESSELLATION_MAX_RESOLUTION).contains(&resolution) {
        Ok(())
    } else {
        Err(PrimitiveError::InvalidResolution {
            got: resolution,
            max: TESSELLATION_MAX_RESOLUTION,
        })
    }
}

/// `k_n`: area of the regular `n`-gon inscribed in the unit circle over `π`.
fn polygon_factor(n: u32) -> f64 {
    let n = n as f64;
    n * (2.0 * PI / n).sin() / (2.0 * PI)
}

fn quarter_steps(n: u32) -> u32 {
    n.div_ceil(4).max(1)
}

/// Points of a quarter-circle chord polygon: `(cos α, sin α)` for `α = a0 + i π/(2q)`.
fn arc(q: u32, from: u32, to: u32) -> impl Iterator<Item = (f64, f64)> {
    (from..=to).map(move |i| {
        let a = -PI / 2.0 + i as f64 * PI / (2.0 * q as f64);
        // Exact zeros at the poles and ones at the equator.
        let (s, c) = if i == 0 {
            (-1.0, 0.0)
        } else if i == 2 * q {
            (1.0, 0.0)
        } else if 2 * i == 2 * q {
            (0.0, 1.0)
        } else {
            a.sin_cos()
        };
        (c, s)
    })
}

/// Smallest distance from the origin of the line through `(x1, y1)`, `(x2, y2)`.
fn line_distance(x1: f64, y1: f64, x2: f64, y2: f64) -> f64 {
    (x1 * y2 - x2 * y1).abs() / (x2 - x1).hypot(y2 - y1)
}

/// `κ`: the smallest distance from the centre of a face plane of the unit sphere's inscribed
/// mesh (`n` segments, `q` steps per quarter).
fn sphere_face_ratio(n: u32, q: u32) -> f64 {
    let c = (PI / n as f64).cos();
    let pts: Vec<(f64, f64)> = arc(q, 0, 2 * q).collect();
    pts.windows(2)
        .map(|w| line_distance(w[0].0 * c, w[0].1, w[1].0 * c, w[1].1))
        .fold(c, f64::min)
}

impl Primitive {
    /// The profile `(ρ, y)` from the bottom pole to the top pole, and whether it is curved
    /// (sphere, capsule), for the solids of revolution; `scale` multiplies the curved parts'
    /// radii about their centres (the cylinder side's radius for the cylinder).
    fn profile(&self, n: u32, scale: f64) -> Option<Vec<(f64, f64)>> {
        let q = quarter_steps(n);
        Some(match *self {
            Self::Sphere { radius } => arc(q, 0, 2 * q)
                .map(|(c, s)| (radius * scale * c, radius * scale * s))
                .collect(),
            Self::Capsule {
                half_length: h,
                radius,
            } => {
                let r = radius * scale;
                arc(q, 0, q)
                    .map(|(c, s)| (r * c, -h + r * s))
                    .chain(arc(q, q, 2 * q).map(|(c, s)| (r * c, h + r * s)))
                    .collect()
            }
            Self::Cylinder {
                half_height: h,
                radius,
            } => vec![
                (0.0, -h),
                (radius * scale, -h),
                (radius * scale, h),
                (0.0, h),
            ],
            Self::Cuboid { .. } | Self::HalfSpace { .. } => return None,
        })
    }

    /// The revolved profile as a closed, outward-facing solid.
    fn revolve(profile: &[(f64, f64)], n: u32) -> Result<Solid, PrimitiveError> {
        let mut vertices: Vec<Vec3> = Vec::new();
        // Ring start index, or a pole vertex index (ρ = 0).
        let mut rings: Vec<(u32, bool)> = Vec::with_capacity(profile.len());
        for &(rho, y) in profile {
            let start = vertices.len() as u32;
            if rho == 0.0 {
                vertices.push(Vec3::new(0.0, y as f32, 0.0));
                rings.push((start, true));
            } else {
                for j in 0..n {
                    let phi = 2.0 * PI * j as f64 / n as f64;
                    let (s, c) = phi.sin_cos();
                    vertices.push(Vec3::new((rho * c) as f32, y as f32, (rho * s) as f32));
                }
                rings.push((start, false));
            }
        }
        let at = |(start, pole): (u32, bool), j: u32| if pole { start } else { start + j % n };
        let mut triangles = Vec::new();
        for w in rings.windows(2) {
            let (lo, hi) = (w[0], w[1]);
            for j in 0..n {
                let (a, b) = (at(lo, j), at(lo, j + 1));
                let (d, c) = (at(hi, j), at(hi, j + 1));
                if !lo.1 || !hi.1 {
                    if a != d && d != c && a != c {
                        triangles.push([a, d, c]);
                    }
                    if a != c && c != b && a != b {
                        triangles.push([a, c, b]);
                    }
                }
            }
        }
        Ok(Solid::new(TriMesh::new(vertices, triangles)?)?)
    }

    /// A closed triangle mesh inscribed in the primitive (vertices on its surface), with
    /// `resolution` segments around the axis (see the module documentation); the cuboid gives
    /// its 12 triangles for any resolution. Its volume falls short by
    /// [`Primitive::tessellation_error`] (relative). Refused for the half-space and for a
    /// resolution outside `3..=`[`TESSELLATION_MAX_RESOLUTION`].
    pub fn to_solid(&self, resolution: u32) -> Result<Solid, PrimitiveError> {
        check_resolution(resolution)?;
        match *self {
            Self::Cuboid { half_extents } => Ok(shapes::cuboid(half_extents.as_vec3())?),
            Self::HalfSpace { .. } => Err(PrimitiveError::Unbounded("it has no closed mesh")),
            _ => {
                let profile = self.profile(resolution, 1.0).unwrap_or_default();
                Self::revolve(&profile, resolution)
            }
        }
    }

    /// A closed convex triangle mesh that contains the primitive (see the module
    /// documentation); the cuboid gives its 12 triangles grown by a relative `2e-6`.
    pub fn to_solid_circumscribed(&self, resolution: u32) -> Result<Solid, PrimitiveError> {
        check_resolution(resolution)?;
        let pad = 1.0 + 2e-6;
        match *self {
            Self::Cuboid { half_extents } => Ok(shapes::cuboid((half_extents * pad).as_vec3())?),
            Self::HalfSpace { .. } => Err(PrimitiveError::Unbounded("it has no closed mesh")),
            Self::Cylinder { .. } => {
                let f = pad / (PI / resolution as f64).cos();
                let mut profile = self.profile(resolution, f).unwrap_or_default();
                // Pad the caps too (the f32 rounding of y).
                for p in &mut profile {
                    p.1 *= pad;
                }
                Self::revolve(&profile, resolution)
            }
            _ => {
                let kappa = sphere_face_ratio(resolution, quarter_steps(resolution));
                let profile = self.profile(resolution, pad / kappa).unwrap_or_default();
                Self::revolve(&profile, resolution)
            }
        }
    }

    /// The exact volume of [`Primitive::to_solid`]'s polyhedron before its vertices are rounded
    /// to `f32` (closed form, see the module documentation).
    pub fn tessellation_volume(&self, resolution: u32) -> Result<f64, PrimitiveError> {
        check_resolution(resolution)?;
        match *self {
            Self::Cuboid { .. } => Ok(self.volume()),
            Self::HalfSpace { .. } => Err(PrimitiveError::Unbounded("it has no closed mesh")),
            _ => {
                let profile = self.profile(resolution, 1.0).unwrap_or_default();
                let frusta: f64 = profile
                    .windows(2)
                    .map(|w| {
                        let ((r0, y0), (r1, y1)) = (w[0], w[1]);
                        PI * (y1 - y0) / 3.0 * (r0 * r0 + r0 * r1 + r1 * r1)
                    })
                    .sum();
                Ok(polygon_factor(resolution) * frusta)
            }
        }
    }

    /// The relative volume deficit `1 − V_mesh / V` of [`Primitive::to_solid`] (before `f32`
    /// rounding; 0 for the cuboid).
    pub fn tessellation_error(&self, resolution: u32) -> Result<f64, PrimitiveError> {
        Ok(1.0 - self.tessellation_volume(resolution)? / self.volume())
    }

    /// The a priori bound on [`Primitive::tessellation_error`]: `1 − k_n cos³(π/(4q))` for the
    /// sphere and capsule, `1 − k_n` for the cylinder, 0 for the cuboid.
    pub fn tessellation_error_bound(&self, resolution: u32) -> Result<f64, PrimitiveError> {
        check_resolution(resolution)?;
        let k = polygon_factor(resolution);
        let q = quarter_steps(resolution) as f64;
        match self {
            Self::Cuboid { .. } => Ok(0.0),
            Self::Cylinder { .. } => Ok(1.0 - k),
            Self::HalfSpace { .. } => Err(PrimitiveError::Unbounded("it has no closed mesh")),
            _ => Ok(1.0 - k * (PI / (4.0 * q)).cos().powi(3)),
        }
    }

    /// The inscribed mesh at [`Primitive::resolution_for`]`(rel_error)`, with that resolution:
    /// the tessellation route for pairs without a closed form (see
    /// [`super::PrimitiveVolumeMethod::Tessellate`]).
    pub fn to_solid_within(&self, rel_error: f64) -> Result<(Solid, u32), PrimitiveError> {
        let n = self.resolution_for(rel_error)?;
        Ok((self.to_solid(n)?, n))
    }

    /// The smallest resolution whose inscribed mesh's volume is within `rel_error` of the
    /// primitive's (the exact deficit plus `1e-6` for the `f32` vertices); `rel_error` must be
    /// in `5e-5 ..= 1` (the finest resolution, 1024, leaves a sphere 1.6e-5 short). The cuboid needs no resolution (3 is returned).
    pub fn resolution_for(&self, rel_error: f64) -> Result<u32, PrimitiveError> {
        if !(rel_error.is_finite() && (MIN_TOLERANCE..=1.0).contains(&rel_error)) {
            return Err(PrimitiveError::InvalidTolerance(rel_error));
        }
        if !self.is_bounded() {
            return Err(PrimitiveError::Unbounded("it has no closed mesh"));
        }
        // The deficit decreases with the resolution; bisect on it.
        let ok = |n: u32| {
            self.tessellation_error(n)
                .is_ok_and(|e| e + 1e-6 <= rel_error)
        };
        let (mut lo, mut hi) = (3u32, TESSELLATION_MAX_RESOLUTION);
        if ok(lo) {
            return Ok(lo);
        }
        if !ok(hi) {
            return Err(PrimitiveError::InvalidTolerance(rel_error));
        }
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            if ok(mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        Ok(hi)
    }
}

//! Procedural closed meshes for tests, benchmarks and demos: boxes, spheres, tori, cylinders and
//! bumpy non-convex blobs. Every generator returns an outward-facing closed [`Solid`].

use crate::error::{MeshError, ShapeError};
use crate::mesh::{DegeneratePolicy, MeshOptions, TriMesh};
use crate::topology::Solid;
use glam::Vec3;
use std::collections::HashMap;
use std::f32::consts::TAU;

/// The most triangles a generator builds (2²⁴); larger requests are refused with
/// [`ShapeError::TooManyTriangles`] before anything is allocated.
pub const MAX_TRIANGLES: u64 = 1 << 24;

/// Refuses a NaN, infinite, zero or negative length.
pub(crate) fn positive(
    shape: &'static str,
    parameter: &'static str,
    v: f32,
) -> Result<(), ShapeError> {
    let reason = if v.is_nan() {
        "is not a number"
    } else if v.is_infinite() {
        "is not finite"
    } else if v <= 0.0 {
        "must be > 0"
    } else {
        return Ok(());
    };
    Err(bad(shape, parameter, v, reason))
}

/// Refuses a NaN or infinite value.
pub(crate) fn finite(
    shape: &'static str,
    parameter: &'static str,
    v: f32,
) -> Result<(), ShapeError> {
    if v.is_finite() {
        Ok(())
    } else {
        Err(bad(shape, parameter, v, "is not finite"))
    }
}

/// A [`ShapeError::Parameter`] for `value`.
pub(crate) fn bad(
    shape: &'static str,
    parameter: &'static str,
    value: impl std::fmt::Debug,
    reason: impl Into<String>,
) -> ShapeError {
    ShapeError::Parameter {
        shape,
        parameter,
        value: format!("{value:?}"),
        reason: reason.into(),
    }
}

/// Refuses a count below `min`.
fn at_least(
    shape: &'static str,
    parameter: &'static str,
    v: u32,
    min: u32,
) -> Result<(), ShapeError> {
    if v < min {
        return Err(bad(shape, parameter, v, format!("must be at least {min}")));
    }
    Ok(())
}

/// Refuses more than [`MAX_TRIANGLES`] triangles.
pub(crate) fn triangle_budget(shape: &'static str, triangles: u128) -> Result<(), ShapeError> {
    if triangles > MAX_TRIANGLES as u128 {
        return Err(ShapeError::TooManyTriangles {
            shape,
            triangles,
            limit: MAX_TRIANGLES,
        });
    }
    Ok(())
}

/// Validates a generated surface: finite vertices, no zero-area triangle, closed, and facing
/// outward as built. With parameters in range this fails only where `f32` cannot represent the
/// solid (overflow, or rounding that collapses a triangle).
pub(crate) fn checked_solid(
    shape: &'static str,
    vertices: Vec<Vec3>,
    triangles: Vec<[u32; 3]>,
) -> Result<Solid, ShapeError> {
    let options = MeshOptions {
        degenerate: DegeneratePolicy::Reject,
        ..MeshOptions::default()
    };
    let mesh_err = |source| ShapeError::Mesh { shape, source };
    let (mesh, _) = TriMesh::with_options(vertices, triangles, &options).map_err(mesh_err)?;
    let solid = Solid::new(mesh).map_err(mesh_err)?;
    if solid.was_reoriented() {
        return Err(mesh_err(MeshError::NotClosed(
            "the surface came out inside-out".into(),
        )));
    }
    Ok(solid)
}

/// An axis-aligned box centred at the origin with the given half extents (12 triangles).
///
/// Refused: a half extent that is not finite and > 0.
pub fn cuboid(half_extents: Vec3) -> Result<Solid, ShapeError> {
    const SHAPE: &str = "cuboid";
    check_half_extents(SHAPE, half_extents)?;
    let h = half_extents;
    let vertices: Vec<Vec3> = (0..8)
        .map(|i| {
            Vec3::new(
                if i & 1 == 0 { -h.x } else { h.x },
                if i & 2 == 0 { -h.y } else { h.y },
                if i & 4 == 0 { -h.z } else { h.z },
            )
        })
        .collect();
    let quads = [
        [0, 2, 3, 1], // -z
        [4, 5, 7, 6], // +z
        [0, 1, 5, 4], // -y
        [2, 6, 7, 3], // +y
        [0, 4, 6, 2], // -x
        [1, 3, 7, 5], // +x
    ];
    let mut triangles = Vec::with_capacity(12);
    for [a, b, c, d] in quads {
        triangles.push([a, b, c]);
        triangles.push([a, c, d]);
    }
    checked_solid(SHAPE, vertices, triangles)
}

fn check_half_extents(shape: &'static str, h: Vec3) -> Result<(), ShapeError> {
    positive(shape, "half_extents.x", h.x)?;
    positive(shape, "half_extents.y", h.y)?;
    positive(shape, "half_extents.z", h.z)
}

/// A box subdivided into `n × n` quads per face (for tests that need many triangles on flat
/// faces, such as coplanar contact).
///
/// Refused: a half extent that is not finite and > 0, `n = 0`, more than [`MAX_TRIANGLES`]
/// triangles (12·n²).
pub fn subdivided_cuboid(half_extents: Vec3, n: u32) -> Result<Solid, ShapeError> {
    const SHAPE: &str = "subdivided_cuboid";
    check_half_extents(SHAPE, half_extents)?;
    at_least(SHAPE, "n", n, 1)?;
    triangle_budget(SHAPE, 12 * (n as u128).pow(2))?;
    let mut vertices = Vec::new();
    let mut index: HashMap<[i32; 3], u32> = HashMap::new();
    let mut triangles = Vec::new();
    let mut vid = |g: [i32; 3], vertices: &mut Vec<Vec3>| -> u32 {
        *index.entry(g).or_insert_with(|| {
            let p = Vec3::new(g[0] as f32, g[1] as f32, g[2] as f32) / n as f32 * 2.0 - Vec3::ONE;
            vertices.push(p * half_extents);
            (vertices.len() - 1) as u32
        })
    };
    // n ≤ 2^11 by the triangle budget, so it fits an i32.
    let n = n as i32;
    // For each axis and side, the face grid spans the two other axes, wound outward.
    for axis in 0..3 {
        for side in [0, n] {
            let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
            for i in 0..n {
                for j in 0..n {
                    let corner = |di: i32, dj: i32| {
                        let mut g = [0; 3];
                        g[axis] = side;
                        g[u] = i + di;
                        g[v] = j + dj;
                        g
                    };
                    let q = [corner(0, 0), corner(1, 0), corner(1, 1), corner(0, 1)]
                        .map(|g| vid(g, &mut vertices));
                    if side == n {
                        triangles.push([q[0], q[1], q[2]]);
                        triangles.push([q[0], q[2], q[3]]);
                    } else {
                        triangles.push([q[0], q[2], q[1]]);
                        triangles.push([q[0], q[3], q[2]]);
                    }
                }
            }
        }
    }
    checked_solid(SHAPE, vertices, triangles)
}

/// Refuses icosphere subdivisions beyond the triangle budget (20·4^s triangles).
fn icosphere_budget(shape: &'static str, subdivisions: u32) -> Result<(), ShapeError> {
    // 20·4^12 > 2^24 already; checking the exponent first keeps the power from overflowing.
    let triangles = if subdivisions > 16 {
        u128::MAX
    } else {
        20 * 4u128.pow(subdivisions)
    };
    triangle_budget(shape, triangles)
}

/// A geodesic sphere: an icosahedron subdivided `subdivisions` times (20·4^s triangles).
///
/// Refused: a radius that is not finite and > 0, more than [`MAX_TRIANGLES`] triangles
/// (`subdivisions` > 9).
pub fn icosphere(radius: f32, subdivisions: u32) -> Result<Solid, ShapeError> {
    const SHAPE: &str = "icosphere";
    positive(SHAPE, "radius", radius)?;
    icosphere_budget(SHAPE, subdivisions)?;
    let (vertices, triangles) = unit_icosphere(subdivisions);
    checked_solid(
        SHAPE,
        vertices.into_iter().map(|v| v * radius).collect(),
        triangles,
    )
}

fn unit_icosphere(subdivisions: u32) -> (Vec<Vec3>, Vec<[u32; 3]>) {
    let t = (1.0 + 5f32.sqrt()) / 2.0;
    let mut vertices: Vec<Vec3> = [
        [-1.0, t, 0.0],
        [1.0, t, 0.0],
        [-1.0, -t, 0.0],
        [1.0, -t, 0.0],
        [0.0, -1.0, t],
        [0.0, 1.0, t],
        [0.0, -1.0, -t],
        [0.0, 1.0, -t],
        [t, 0.0, -1.0],
        [t, 0.0, 1.0],
        [-t, 0.0, -1.0],
        [-t, 0.0, 1.0],
    ]
    .iter()
    .map(|p| Vec3::from_array(*p).normalize())
    .collect();
    let mut triangles: Vec<[u32; 3]> = vec![
        [0, 11, 5],
        [0, 5, 1],
        [0, 1, 7],
        [0, 7, 10],
        [0, 10, 11],
        [1, 5, 9],
        [5, 11, 4],
        [11, 10, 2],
        [10, 7, 6],
        [7, 1, 8],
        [3, 9, 4],
        [3, 4, 2],
        [3, 2, 6],
        [3, 6, 8],
        [3, 8, 9],
        [4, 9, 5],
        [2, 4, 11],
        [6, 2, 10],
        [8, 6, 7],
        [9, 8, 1],
    ];
    for _ in 0..subdivisions {
        let mut midpoints: HashMap<(u32, u32), u32> = HashMap::new();
        let mut mid = |a: u32, b: u32, vertices: &mut Vec<Vec3>| -> u32 {
            let key = (a.min(b), a.max(b));
            *midpoints.entry(key).or_insert_with(|| {
                vertices.push(((vertices[a as usize] + vertices[b as usize]) * 0.5).normalize());
                (vertices.len() - 1) as u32
            })
        };
        let mut next = Vec::with_capacity(triangles.len() * 4);
        for [a, b, c] in triangles {
            let ab = mid(a, b, &mut vertices);
            let bc = mid(b, c, &mut vertices);
            let ca = mid(c, a, &mut vertices);
            next.extend_from_slice(&[[a, ab, ca], [b, bc, ab], [c, ca, bc], [ab, bc, ca]]);
        }
        triangles = next;
    }
    (vertices, triangles)
}

/// A latitude-longitude sphere with `segments` around and `rings` from pole to pole.
///
/// Refused: a radius that is not finite and > 0, fewer than 3 segments or 2 rings, more than
/// [`MAX_TRIANGLES`] triangles (2·segments·(rings − 1)).
pub fn uv_sphere(radius: f32, segments: u32, rings: u32) -> Result<Solid, ShapeError> {
    const SHAPE: &str = "uv_sphere";
    positive(SHAPE, "radius", radius)?;
    at_least(SHAPE, "segments", segments, 3)?;
    at_least(SHAPE, "rings", rings, 2)?;
    triangle_budget(SHAPE, 2 * segments as u128 * (rings as u128 - 1))?;
    let mut vertices = vec![Vec3::new(0.0, 0.0, radius)];
    for r in 1..rings {
        let theta = std::f32::consts::PI * r as f32 / rings as f32;
        for s in 0..segments {
            let phi = TAU * s as f32 / segments as f32;
            vertices.push(
                Vec3::new(
                    theta.sin() * phi.cos(),
                    theta.sin() * phi.sin(),
                    theta.cos(),
                ) * radius,
            );
        }
    }
    vertices.push(Vec3::new(0.0, 0.0, -radius));
    let south = (vertices.len() - 1) as u32;
    let ring = |r: u32, s: u32| 1 + (r - 1) * segments + s % segments;
    let mut triangles = Vec::new();
    for s in 0..segments {
        triangles.push([0, ring(1, s), ring(1, s + 1)]);
        triangles.push([south, ring(rings - 1, s + 1), ring(rings - 1, s)]);
    }
    for r in 1..rings - 1 {
        for s in 0..segments {
            let (a, b, c, d) = (
                ring(r, s),
                ring(r, s + 1),
                ring(r + 1, s + 1),
                ring(r + 1, s),
            );
            triangles.push([a, d, c]);
            triangles.push([a, c, b]);
        }
    }
    checked_solid(SHAPE, vertices, triangles)
}

/// A torus around the z axis: `major` radius to the tube centre, `minor` tube radius.
///
/// Refused: a `minor` radius that is not finite and > 0, a `major` radius that is not finite
/// and greater than `minor` (the tube would cross the axis) or more than 10⁴ × `minor` (the
/// tube's cross-section would be below `f32` resolution at that distance from the axis), fewer
/// than 3 segments either way, more than [`MAX_TRIANGLES`] triangles
/// (2·major_segments·minor_segments).
pub fn torus(
    major: f32,
    minor: f32,
    major_segments: u32,
    minor_segments: u32,
) -> Result<Solid, ShapeError> {
    const SHAPE: &str = "torus";
    positive(SHAPE, "minor", minor)?;
    finite(SHAPE, "major", major)?;
    if major <= minor {
        return Err(bad(
            SHAPE,
            "major",
            major,
            format!("must be greater than minor ({minor:?})"),
        ));
    }
    if major as f64 > 1e4 * minor as f64 {
        return Err(bad(
            SHAPE,
            "major",
            major,
            format!("is more than 1e4 × minor ({minor:?}): the tube is below f32 resolution there"),
        ));
    }
    at_least(SHAPE, "major_segments", major_segments, 3)?;
    at_least(SHAPE, "minor_segments", minor_segments, 3)?;
    triangle_budget(SHAPE, 2 * major_segments as u128 * minor_segments as u128)?;
    let (m, n) = (major_segments, minor_segments);
    let mut vertices = Vec::with_capacity((m * n) as usize);
    for i in 0..m {
        let u = TAU * i as f32 / m as f32;
        for j in 0..n {
            let v = TAU * j as f32 / n as f32;
            let r = major + minor * v.cos();
            vertices.push(Vec3::new(r * u.cos(), r * u.sin(), minor * v.sin()));
        }
    }
    let id = |i: u32, j: u32| (i % m) * n + (j % n);
    let mut triangles = Vec::with_capacity((2 * m * n) as usize);
    for i in 0..m {
        for j in 0..n {
            let (a, b, c, d) = (id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1));
            triangles.push([a, b, c]);
            triangles.push([a, c, d]);
        }
    }
    checked_solid(SHAPE, vertices, triangles)
}

/// A closed cylinder along z, centred at the origin.
///
/// Refused: a radius or half height that is not finite and > 0, fewer than 3 segments, more
/// than [`MAX_TRIANGLES`] triangles (4·segments).
pub fn cylinder(radius: f32, half_height: f32, segments: u32) -> Result<Solid, ShapeError> {
    const SHAPE: &str = "cylinder";
    positive(SHAPE, "radius", radius)?;
    positive(SHAPE, "half_height", half_height)?;
    at_least(SHAPE, "segments", segments, 3)?;
    triangle_budget(SHAPE, 4 * segments as u128)?;
    let s = segments;
    let mut vertices = Vec::with_capacity(2 * s as usize + 2);
    for z in [-half_height, half_height] {
        for i in 0..s {
            let a = TAU * i as f32 / s as f32;
            vertices.push(Vec3::new(radius * a.cos(), radius * a.sin(), z));
        }
    }
    vertices.push(Vec3::new(0.0, 0.0, -half_height));
    vertices.push(Vec3::new(0.0, 0.0, half_height));
    let (bottom, top) = (2 * s, 2 * s + 1);
    let mut triangles = Vec::new();
    for i in 0..s {
        let j = (i + 1) % s;
        triangles.push([i, j, s + j]);
        triangles.push([i, s + j, s + i]);
        triangles.push([bottom, j, i]);
        triangles.push([top, s + i, s + j]);
    }
    checked_solid(SHAPE, vertices, triangles)
}

/// A polygonal wheel (a prism along z): a regular `sides`-gon of circumradius `radius`, extruded
/// to `±half_width`, whose faces bulge outward by `sagitta` at their middle along a parabola
/// (negative: hollowed inward), each face cut into `segments` strips. With `sagitta` 0 it is a
/// plain prism. Ruina's wheels (Wang–Faure–Pai 2012, Fig. 1b) differ only by the sign of a small
/// sagitta.
///
/// Refused: a radius or half width that is not finite and > 0, fewer than 3 sides or 1 segment,
/// a sagitta that is not finite or at most −a/2 for the apothem a = radius·cos(π/sides) (the
/// profile must stay star-shaped about the axis, as the end caps are fans from the axis: the
/// angle of a face's parabola x = (t − ½)·chord, y = a + 4·sagitta·t(1 − t) turns monotonically
/// iff a + sagitta·(1 + u²) > 0 for u = 1 − 2t in [−1, 1]), more than [`MAX_TRIANGLES`]
/// triangles (4·sides·segments), and parameters whose `f32` profile is not star-shaped after
/// rounding (checked exactly on the built profile: a sagitta many orders of magnitude above the
/// radius, whose bulge swamps the chord).
pub fn polygon_wheel(
    radius: f32,
    sides: u32,
    half_width: f32,
    sagitta: f32,
    segments: u32,
) -> Result<Solid, ShapeError> {
    const SHAPE: &str = "polygon_wheel";
    positive(SHAPE, "radius", radius)?;
    positive(SHAPE, "half_width", half_width)?;
    at_least(SHAPE, "sides", sides, 3)?;
    at_least(SHAPE, "segments", segments, 1)?;
    finite(SHAPE, "sagitta", sagitta)?;
    let apothem = radius as f64 * (std::f64::consts::PI / sides as f64).cos();
    if apothem + 2.0 * sagitta as f64 <= 0.0 {
        return Err(bad(
            SHAPE,
            "sagitta",
            sagitta,
            format!(
                "must be greater than -apothem/2 = {:?} (a hollower face is not star-shaped \
                 about the axis)",
                -apothem / 2.0
            ),
        ));
    }
    triangle_budget(SHAPE, 4 * sides as u128 * segments as u128)?;
    let n = sides;
    let m = segments;
    let corner = |k: u32| {
        let a = TAU * (k % n) as f32 / n as f32;
        glam::Vec2::new(radius * a.cos(), radius * a.sin())
    };
    let mut profile = Vec::with_capacity((n * m) as usize);
    for k in 0..n {
        let (c0, c1) = (corner(k), corner(k + 1));
        let mid = (c0 + c1) * 0.5;
        let outward = mid.normalize_or_zero();
        for j in 0..m {
            let t = j as f32 / m as f32;
            profile.push(c0.lerp(c1, t) + outward * (sagitta * 4.0 * t * (1.0 - t)));
        }
    }
    // The caps are fans from the axis: every step along the rounded profile must turn
    // counter-clockwise about it (exact orientation test on the f32 coordinates).
    let origin = robust::Coord { x: 0.0, y: 0.0 };
    let coord = |q: glam::Vec2| robust::Coord {
        x: q.x as f64,
        y: q.y as f64,
    };
    for (i, q) in profile.iter().enumerate() {
        let next = profile[(i + 1) % profile.len()];
        if robust::orient2d(origin, coord(*q), coord(next)) <= 0.0 {
            return Err(bad(
                SHAPE,
                "sagitta",
                sagitta,
                format!(
                    "gives an f32 profile that is not star-shaped about the axis (at point {i}) \
                     for radius {radius:?}"
                ),
            ));
        }
    }
    let p = profile.len() as u32;
    let mut vertices = Vec::with_capacity(2 * p as usize + 2);
    for z in [-half_width, half_width] {
        vertices.extend(profile.iter().map(|q| Vec3::new(q.x, q.y, z)));
    }
    vertices.push(Vec3::new(0.0, 0.0, -half_width));
    vertices.push(Vec3::new(0.0, 0.0, half_width));
    let (back, front) = (2 * p, 2 * p + 1);
    let mut triangles = Vec::with_capacity(4 * p as usize);
    for i in 0..p {
        let j = (i + 1) % p;
        triangles.push([i, j, p + j]);
        triangles.push([i, p + j, p + i]);
        triangles.push([back, j, i]);
        triangles.push([front, p + i, p + j]);
    }
    checked_solid(SHAPE, vertices, triangles)
}

/// A non-convex blob: an icosphere whose radius is modulated by
/// `1 + amplitude · sin(f·x) sin(f·y) sin(f·z)` (plus a phase from `seed`).
///
/// Refused: a radius that is not finite and > 0, |amplitude| ≥ 1 or NaN (the radius must stay
/// positive, so that the surface is a radial graph), a frequency that is not finite, more than
/// [`MAX_TRIANGLES`] triangles (`subdivisions` > 9).
pub fn bumpy_sphere(
    radius: f32,
    amplitude: f32,
    frequency: f32,
    subdivisions: u32,
    seed: u64,
) -> Result<Solid, ShapeError> {
    const SHAPE: &str = "bumpy_sphere";
    positive(SHAPE, "radius", radius)?;
    if amplitude.is_nan() || amplitude.abs() >= 1.0 {
        return Err(bad(SHAPE, "amplitude", amplitude, "must be in (-1, 1)"));
    }
    finite(SHAPE, "frequency", frequency)?;
    icosphere_budget(SHAPE, subdivisions)?;
    let (vertices, triangles) = unit_icosphere(subdivisions);
    let phase = Vec3::new(
        (seed % 97) as f32 * 0.37,
        (seed % 89) as f32 * 0.53,
        (seed % 83) as f32 * 0.71,
    );
    let vertices = vertices
        .into_iter()
        .map(|v| {
            let w = v * frequency + phase;
            v * radius * (1.0 + amplitude * w.x.sin() * w.y.sin() * w.z.sin())
        })
        .collect();
    checked_solid(SHAPE, vertices, triangles)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::PI;

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs()
    }

    #[test]
    fn generated_solids_are_closed_with_expected_volume() {
        assert!(rel(cuboid(Vec3::new(1.0, 2.0, 3.0)).unwrap().volume(), 48.0) < 1e-9);
        assert!(
            rel(
                subdivided_cuboid(Vec3::new(1.0, 2.0, 3.0), 4)
                    .unwrap()
                    .volume(),
                48.0
            ) < 1e-6
        );
        assert_eq!(
            subdivided_cuboid(Vec3::ONE, 4).unwrap().triangle_count(),
            6 * 16 * 2
        );
        let sphere = icosphere(2.0, 4).unwrap();
        assert_eq!(sphere.triangle_count(), 20 * 256);
        assert!(rel(sphere.volume(), 4.0 / 3.0 * PI * 8.0) < 0.01);
        assert!(rel(uv_sphere(1.0, 64, 32).unwrap().volume(), 4.0 / 3.0 * PI) < 0.01);
        assert!(
            rel(
                torus(2.0, 0.5, 96, 48).unwrap().volume(),
                2.0 * PI * PI * 2.0 * 0.25
            ) < 0.01
        );
        assert!(rel(cylinder(1.0, 1.0, 128).unwrap().volume(), 2.0 * PI) < 0.01);
        // Wheels: polygon area plus (or minus) the parabolic caps, 2/3 chord × sagitta each,
        // up to the polyline's chord error (1/m² of the cap).
        for sag in [0.0f32, 0.01, -0.01] {
            let (r, n, w) = (0.5f64, 8u32, 0.1f64);
            let chord = 2.0 * r * (PI / n as f64).sin();
            let area = 0.5 * n as f64 * r * r * (2.0 * PI / n as f64).sin()
                + n as f64 * 2.0 / 3.0 * chord * sag as f64;
            let wheel = polygon_wheel(r as f32, n, w as f32, sag, 16).unwrap();
            assert!(rel(wheel.volume(), area * 2.0 * w) < 2e-4, "sagitta {sag}");
            assert!(!wheel.was_reoriented());
        }
        let blob = bumpy_sphere(1.0, 0.3, 4.0, 3, 1).unwrap();
        assert!(blob.volume() > 0.0);
        for s in [&sphere, &blob] {
            assert!(!s.was_reoriented());
        }
    }
}

/// A straight staircase of `steps` steps, each `rise` high and `tread` deep, `2·half_width`
/// wide: the solid under the steps, from the floor `z = 0` up, the first riser at `x = 0` and
/// the steps climbing along `+x` (top `steps · rise` at `x ∈ [(steps − 1)·tread, steps·tread]`),
/// centred on `y = 0`. The sides are triangulated column by column so that every edge is shared
/// by exactly two triangles.
///
/// Refused: a length that is not finite and > 0, `steps = 0`, more than [`MAX_TRIANGLES`]
/// triangles.
pub fn staircase(steps: u32, rise: f32, tread: f32, half_width: f32) -> Result<Solid, ShapeError> {
    const SHAPE: &str = "staircase";
    positive(SHAPE, "rise", rise)?;
    positive(SHAPE, "tread", tread)?;
    positive(SHAPE, "half_width", half_width)?;
    at_least(SHAPE, "steps", steps, 1)?;
    triangle_budget(SHAPE, 16 * steps as u128 + 8)?;
    let n = steps as usize;
    let x = |i: usize| i as f32 * tread;
    let h = |i: usize| (i + 1) as f32 * rise; // top of column i
    let mut vertices = Vec::new();
    let mut triangles = Vec::new();
    // Profile points (x, z) of column i, counter-clockwise seen from −y: bottom left, bottom
    // right, top right, top left, and (i > 0) the top of the previous column on the left edge.
    let side = |y: f32, vertices: &mut Vec<Vec3>, triangles: &mut Vec<[u32; 3]>| {
        for i in 0..n {
            let base = vertices.len() as u32;
            let mut pts = vec![(x(i), 0.0), (x(i + 1), 0.0), (x(i + 1), h(i)), (x(i), h(i))];
            if i > 0 {
                pts.push((x(i), h(i - 1)));
            }
            vertices.extend(pts.iter().map(|&(px, pz)| Vec3::new(px, y, pz)));
            // Fan from the top right corner (never collinear with the left edge).
            let k = pts.len() as u32;
            for j in 3..=k {
                let (a, b) = (j % k, (j + 1) % k);
                let tri = [base + 2, base + a, base + b];
                triangles.push(if y < 0.0 {
                    tri
                } else {
                    [tri[0], tri[2], tri[1]]
                });
            }
        }
    };
    side(-half_width, &mut vertices, &mut triangles);
    side(half_width, &mut vertices, &mut triangles);
    // Quads across the width, wound outward: (x0, z0) → (x1, z1) along the profile.
    let mut quad = |p0: (f32, f32), p1: (f32, f32)| {
        let base = vertices.len() as u32;
        vertices.extend([
            Vec3::new(p0.0, -half_width, p0.1),
            Vec3::new(p1.0, -half_width, p1.1),
            Vec3::new(p1.0, half_width, p1.1),
            Vec3::new(p0.0, half_width, p0.1),
        ]);
        triangles.push([base, base + 2, base + 1]);
        triangles.push([base, base + 3, base + 2]);
    };
    for i in 0..n {
        quad((x(i), 0.0), (x(i + 1), 0.0)); // floor
        quad((x(i + 1), h(i)), (x(i), h(i))); // tread
        let below = if i == 0 { 0.0 } else { h(i - 1) };
        quad((x(i), h(i)), (x(i), below)); // riser (the front face for i = 0)
    }
    quad((x(n), 0.0), (x(n), h(n - 1))); // back
    // Shared corners were emitted once per face: weld them.
    let (vertices, triangles) = weld(vertices, triangles);
    checked_solid(SHAPE, vertices, triangles)
}

/// Where the centre of a ball of radius `radius` rests on [`staircase`]`(steps, rise, tread, _)`
/// (and the floor `z = 0` around it) at `x` along the stairs: the height of the upper envelope
/// of the floor, the treads and the staircase's convex edges (each step's nosing, and the top's
/// back edge) raised by the ball — the analytic path of a ball or capsule rolled over the stairs.
pub fn staircase_rest_height(x: f64, steps: u32, rise: f64, tread: f64, radius: f64) -> f64 {
    let n = steps as usize;
    let top = |j: usize| (j + 1) as f64 * rise;
    let mut z = radius; // the floor
    for j in 0..n {
        if x >= j as f64 * tread && x <= (j + 1) as f64 * tread {
            z = z.max(top(j) + radius);
        }
    }
    let nosings = (0..n).map(|j| (j as f64 * tread, top(j)));
    let back = (n > 0).then(|| (n as f64 * tread, top(n - 1)));
    for (ex, ez) in nosings.chain(back) {
        let dx = x - ex;
        if dx.abs() <= radius {
            z = z.max(ez + (radius * radius - dx * dx).sqrt());
        }
    }
    z
}

/// A block of ground `2·half_size` square whose top is a rolling, rough surface over an
/// `n × n` grid: height `amplitude · (sin sin + a sum of finer waves)` with phases from `seed`,
/// the bottom flat at `−depth` (so the solid is closed), sides triangulated along the grid.
///
/// Refused: a length that is not finite and > 0, an amplitude that is not finite or not below
/// `depth`, `n = 0`, more than [`MAX_TRIANGLES`] triangles.
pub fn terrain(
    half_size: f32,
    depth: f32,
    amplitude: f32,
    n: u32,
    seed: u64,
) -> Result<Solid, ShapeError> {
    const SHAPE: &str = "terrain";
    positive(SHAPE, "half_size", half_size)?;
    positive(SHAPE, "depth", depth)?;
    finite(SHAPE, "amplitude", amplitude)?;
    if amplitude.abs() >= depth {
        return Err(bad(SHAPE, "amplitude", amplitude, "must be below depth"));
    }
    at_least(SHAPE, "n", n, 1)?;
    triangle_budget(SHAPE, 4 * (n as u128).pow(2) + 8 * n as u128)?;
    let phase = |k: u64| {
        ((seed
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add(k * 7919))
            % 6283) as f32
            * 1e-3
    };
    let height = |u: f32, v: f32| {
        let (s, t) = (u / half_size, v / half_size);
        let mut z = (1.3 * s + phase(1)).sin() * (1.1 * t + phase(2)).sin();
        for k in 1..5u64 {
            let f = 2.7 * k as f32;
            z += (f * s + phase(3 + k)).sin() * (f * 1.3 * t + phase(9 + k)).cos()
                / (2.0 * k as f32);
        }
        amplitude * z / 2.0
    };
    let m = n as usize + 1;
    let coord = |i: usize| -half_size + 2.0 * half_size * i as f32 / n as f32;
    let mut vertices = Vec::with_capacity(2 * m * m);
    for top in [true, false] {
        for j in 0..m {
            for i in 0..m {
                let (u, v) = (coord(i), coord(j));
                vertices.push(Vec3::new(u, v, if top { height(u, v) } else { -depth }));
            }
        }
    }
    let id = |i: usize, j: usize, top: bool| (j * m + i + if top { 0 } else { m * m }) as u32;
    let mut triangles = Vec::new();
    for j in 0..m - 1 {
        for i in 0..m - 1 {
            let (a, b, c, d) = (
                id(i, j, true),
                id(i + 1, j, true),
                id(i + 1, j + 1, true),
                id(i, j + 1, true),
            );
            triangles.extend([[a, b, c], [a, c, d]]);
            let (a, b, c, d) = (
                id(i, j, false),
                id(i + 1, j, false),
                id(i + 1, j + 1, false),
                id(i, j + 1, false),
            );
            triangles.extend([[a, c, b], [a, d, c]]);
        }
    }
    // The rim, counter-clockwise seen from above, each edge a quad from top to bottom.
    let mut rim = Vec::new();
    rim.extend((0..m - 1).map(|i| (i, 0)));
    rim.extend((0..m - 1).map(|j| (m - 1, j)));
    rim.extend((1..m).rev().map(|i| (i, m - 1)));
    rim.extend((1..m).rev().map(|j| (0, j)));
    for k in 0..rim.len() {
        let (p, q) = (rim[k], rim[(k + 1) % rim.len()]);
        let (pt, qt, pb, qb) = (
            id(p.0, p.1, true),
            id(q.0, q.1, true),
            id(p.0, p.1, false),
            id(q.0, q.1, false),
        );
        triangles.extend([[pt, pb, qb], [pt, qb, qt]]);
    }
    checked_solid(SHAPE, vertices, triangles)
}

/// Merges vertices with identical coordinates, renumbering the triangles.
fn weld(vertices: Vec<Vec3>, triangles: Vec<[u32; 3]>) -> (Vec<Vec3>, Vec<[u32; 3]>) {
    let mut index: HashMap<[u32; 3], u32> = HashMap::new();
    let mut out = Vec::new();
    let map: Vec<u32> = vertices
        .iter()
        .map(|v| {
            *index
                .entry([v.x.to_bits(), v.y.to_bits(), v.z.to_bits()])
                .or_insert_with(|| {
                    out.push(*v);
                    (out.len() - 1) as u32
                })
        })
        .collect();
    let triangles = triangles
        .into_iter()
        .map(|t| t.map(|i| map[i as usize]))
        .collect();
    (out, triangles)
}

#[cfg(test)]
mod ground_tests {
    use super::*;

    /// Oracle: the staircase's volume is the sum of its columns, `Σ (i+1)·rise·tread·width`;
    /// the terrain's is its grid's prisms (the exact volume of the closed mesh); both are closed.
    #[test]
    fn staircase_and_terrain_are_closed_with_their_volumes() {
        for steps in [1u32, 2, 7] {
            let s = staircase(steps, 0.2, 0.3, 0.75).unwrap();
            let want: f64 = (1..=steps).map(|i| f64::from(i) * 0.2 * 0.3 * 1.5).sum();
            assert!(
                (s.volume() - want).abs() < 1e-5 * want,
                "{} vs {want}",
                s.volume()
            );
        }
        let t = terrain(10.0, 3.0, 1.5, 48, 7).unwrap();
        assert!(t.topology().is_closed());
        let (v, tri) = (t.mesh().vertices(), t.mesh().triangles());
        // The top is a height field: its prisms over the grid to z = −3 add up to the volume.
        let prisms: f64 = tri
            .iter()
            .map(|t| t.map(|i| v[i as usize].as_dvec3()))
            .filter(|p| p.iter().all(|q| q.z > -3.0))
            .map(|p| {
                let area = ((p[1] - p[0]).cross(p[2] - p[0])).z * 0.5;
                area * ((p[0].z + p[1].z + p[2].z) / 3.0 + 3.0)
            })
            .sum();
        assert!(
            (t.volume() - prisms).abs() < 1e-6 * prisms,
            "{} vs {prisms}",
            t.volume()
        );
        assert!(staircase(0, 0.2, 0.3, 0.5).is_err());
        // A small ball's resting height: the floor away from the stairs, a tread's top in its
        // middle, a nosing's top right over it, the top's back edge, and in between the arc
        // over a nosing (`r² = dx² + dz²`).
        let h = |x: f64| staircase_rest_height(x, 3, 0.2, 0.5, 0.1);
        assert_eq!(h(-1.0), 0.1);
        assert_eq!(h(0.75), 0.4 + 0.1);
        assert!((h(1.0) - (0.6 + 0.1)).abs() < 1e-12);
        assert!((h(1.55) - (0.6 + (0.01f64 - 0.0025).sqrt())).abs() < 1e-12);
        assert!((h(0.95) - (0.6 + (0.01f64 - 0.0025).sqrt())).abs() < 1e-12);
        assert!(terrain(10.0, 1.0, 2.0, 8, 0).is_err());
    }
}

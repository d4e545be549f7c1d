//! Procedural closed meshes for tests, benchmarks and demos: boxes, spheres, tori, cylinders and
//! bumpy non-convex blobs. Every generator returns an outward-facing closed [`Solid`].

use crate::mesh::TriMesh;
use crate::topology::Solid;
use glam::Vec3;
use std::collections::HashMap;
use std::f32::consts::TAU;

fn solid(vertices: Vec<Vec3>, triangles: Vec<[u32; 3]>) -> Solid {
    // The generators build closed, outward-facing surfaces by construction; the validation here
    // is a self-check that the constructions keep that promise.
    let mesh = TriMesh::new(vertices, triangles).expect("generator produced an invalid mesh");
    Solid::new(mesh).expect("generator produced an open mesh")
}

/// An axis-aligned box centred at the origin with the given half extents (12 triangles).
pub fn cuboid(half_extents: Vec3) -> Solid {
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
    solid(vertices, triangles)
}

/// A box subdivided into `n × n` quads per face (for tests that need many triangles on flat
/// faces, such as coplanar contact).
pub fn subdivided_cuboid(half_extents: Vec3, n: u32) -> Solid {
    let n = n.max(1);
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
    solid(vertices, triangles)
}

/// A geodesic sphere: an icosahedron subdivided `subdivisions` times (20·4^s triangles).
pub fn icosphere(radius: f32, subdivisions: u32) -> Solid {
    let (vertices, triangles) = unit_icosphere(subdivisions);
    solid(
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
pub fn uv_sphere(radius: f32, segments: u32, rings: u32) -> Solid {
    let segments = segments.max(3);
    let rings = rings.max(2);
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
    solid(vertices, triangles)
}

/// A torus around the z axis: `major` radius to the tube centre, `minor` tube radius.
pub fn torus(major: f32, minor: f32, major_segments: u32, minor_segments: u32) -> Solid {
    let (m, n) = (major_segments.max(3), minor_segments.max(3));
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
    solid(vertices, triangles)
}

/// A closed cylinder along z, centred at the origin.
pub fn cylinder(radius: f32, half_height: f32, segments: u32) -> Solid {
    let s = segments.max(3);
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
    solid(vertices, triangles)
}

/// A polygonal wheel (a prism along z): a regular `sides`-gon of circumradius `radius`, extruded
/// to `±half_width`, whose faces bulge outward by `sagitta` at their middle along a parabola
/// (negative: hollowed inward), each face cut into `segments` strips. With `sagitta` 0 it is a
/// plain prism. Ruina's wheels (Wang–Faure–Pai 2012, Fig. 1b) differ only by the sign of a small
/// sagitta.
pub fn polygon_wheel(
    radius: f32,
    sides: u32,
    half_width: f32,
    sagitta: f32,
    segments: u32,
) -> Solid {
    let n = sides.max(3);
    let m = segments.max(1);
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
    solid(vertices, triangles)
}

/// A non-convex blob: an icosphere whose radius is modulated by
/// `1 + amplitude · sin(f·x) sin(f·y) sin(f·z)` (plus a phase from `seed`).
pub fn bumpy_sphere(
    radius: f32,
    amplitude: f32,
    frequency: f32,
    subdivisions: u32,
    seed: u64,
) -> Solid {
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
    solid(vertices, triangles)
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
        assert!(rel(cuboid(Vec3::new(1.0, 2.0, 3.0)).volume(), 48.0) < 1e-9);
        assert!(
            rel(
                subdivided_cuboid(Vec3::new(1.0, 2.0, 3.0), 4).volume(),
                48.0
            ) < 1e-6
        );
        assert_eq!(subdivided_cuboid(Vec3::ONE, 4).triangle_count(), 6 * 16 * 2);
        let sphere = icosphere(2.0, 4);
        assert_eq!(sphere.triangle_count(), 20 * 256);
        assert!(rel(sphere.volume(), 4.0 / 3.0 * PI * 8.0) < 0.01);
        assert!(rel(uv_sphere(1.0, 64, 32).volume(), 4.0 / 3.0 * PI) < 0.01);
        assert!(rel(torus(2.0, 0.5, 96, 48).volume(), 2.0 * PI * PI * 2.0 * 0.25) < 0.01);
        assert!(rel(cylinder(1.0, 1.0, 128).volume(), 2.0 * PI) < 0.01);
        // Wheels: polygon area plus (or minus) the parabolic caps, 2/3 chord × sagitta each,
        // up to the polyline's chord error (1/m² of the cap).
        for sag in [0.0f32, 0.01, -0.01] {
            let (r, n, w) = (0.5f64, 8u32, 0.1f64);
            let chord = 2.0 * r * (PI / n as f64).sin();
            let area = 0.5 * n as f64 * r * r * (2.0 * PI / n as f64).sin()
                + n as f64 * 2.0 / 3.0 * chord * sag as f64;
            let wheel = polygon_wheel(r as f32, n, w as f32, sag, 16);
            assert!(rel(wheel.volume(), area * 2.0 * w) < 2e-4, "sagitta {sag}");
            assert!(!wheel.was_reoriented());
        }
        let blob = bumpy_sphere(1.0, 0.3, 4.0, 3, 1);
        assert!(blob.volume() > 0.0);
        for s in [&sphere, &blob] {
            assert!(!s.was_reoriented());
        }
    }
}

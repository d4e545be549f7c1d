//! Robust 3D convex hulls of point sets (quickhull, i.e. beneath-beyond insertion of the
//! furthest outside point, with exact predicates).
//!
//! Implements the convex hulls that Lin–Manocha 1996 (`lin-manocha-1996-interference-dynamic.md`,
//! "Building an OBBTree") fit oriented bounding boxes to: the covariance of the hull surface
//! rather than of the raw vertices, so interior vertices cannot tilt the box.
//!
//! Robustness: every visibility decision is Shewchuk's exact `orient3d` on the `f64` images of
//! the `f32` inputs (exact conversions), so the hull is exactly convex whatever the input:
//! duplicates and points on the surface never create faces, and coplanar neighbouring faces are
//! allowed (they stay separate triangles). Inputs whose hull has no volume (one point, points on
//! a line, points in a plane) return a [`Hull`] variant describing the degeneracy instead of a
//! mesh.

use glam::{DVec3, Vec3};
use thiserror::Error;

/// Why no hull could be computed.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum HullError {
    /// No points were given.
    #[error("the point set is empty")]
    Empty,
    /// A point has a NaN or infinite coordinate.
    #[error("point {index} has a non-finite coordinate {value:?}")]
    NonFinite {
        /// The point's index.
        index: usize,
        /// Its coordinates.
        value: [f32; 3],
    },
    /// More points than 32-bit indices allow.
    #[error("{count} points, more than 32-bit indices allow")]
    TooLarge {
        /// How many points.
        count: usize,
    },
    /// The construction found its own state inconsistent (a bug; never expected with exact
    /// predicates, reported rather than panicking).
    #[error("internal hull inconsistency: {0}")]
    Inconsistent(&'static str),
}

/// The convex hull of a point set, by dimension.
#[derive(Clone, Debug, PartialEq)]
pub enum Hull {
    /// All points are the same point.
    Point {
        /// Index of one of them.
        index: u32,
    },
    /// All points lie on one line (and not all are equal).
    Collinear {
        /// Indices of the two extreme points (lexicographically smallest and largest).
        ends: [u32; 2],
    },
    /// All points lie in one plane (and not all on one line).
    Planar {
        /// Indices of three non-collinear input points that span the plane.
        basis: [u32; 3],
    },
    /// The hull has volume.
    Solid(ConvexHull),
}

/// A closed, outward-oriented triangle mesh bounding the convex hull of a point set with volume.
///
/// Vertices are a subset of the input points (bit-identical). Triangles are counter-clockwise
/// seen from outside; adjacent triangles may be coplanar.
#[derive(Clone, Debug, PartialEq)]
pub struct ConvexHull {
    vertices: Vec<Vec3>,
    input_indices: Vec<u32>,
    triangles: Vec<[u32; 3]>,
}

impl ConvexHull {
    /// The hull's vertices (copies of input points).
    pub fn vertices(&self) -> &[Vec3] {
        &self.vertices
    }

    /// For each hull vertex, the index of the input point it copies.
    pub fn input_indices(&self) -> &[u32] {
        &self.input_indices
    }

    /// The hull's triangles, indices into [`ConvexHull::vertices`], outward-facing.
    pub fn triangles(&self) -> &[[u32; 3]] {
        &self.triangles
    }

    /// The corners of triangle `t`.
    pub fn triangle(&self, t: usize) -> [Vec3; 3] {
        self.triangles[t].map(|i| self.vertices[i as usize])
    }

    /// Whether `p` lies in the closed hull, decided exactly.
    pub fn contains_point(&self, p: Vec3) -> bool {
        (0..self.triangles.len()).all(|t| {
            let [a, b, c] = self.triangle(t);
            orient(a, b, c, p) >= 0.0
        })
    }

    /// The enclosed volume (divergence theorem, `f64`).
    pub fn volume(&self) -> f64 {
        let o = self.vertices[0].as_dvec3();
        (0..self.triangles.len())
            .map(|t| {
                let [a, b, c] = self.triangle(t).map(|v| v.as_dvec3() - o);
                a.dot(b.cross(c))
            })
            .sum::<f64>()
            / 6.0
    }
}

/// Exact orientation: positive when `d` is below the plane of `a, b, c` (the side from which
/// `a, b, c` look clockwise), i.e. *inside* for an outward face; negative when outside; zero
/// when coplanar.
#[inline]
pub(crate) fn orient(a: Vec3, b: Vec3, c: Vec3, d: Vec3) -> f64 {
    let k = |v: Vec3| robust::Coord3D {
        x: v.x as f64,
        y: v.y as f64,
        z: v.z as f64,
    };
    robust::orient3d(k(a), k(b), k(c), k(d))
}

/// Exact collinearity of three points (all three coordinate-plane projections degenerate).
pub(crate) fn collinear(a: Vec3, b: Vec3, c: Vec3) -> bool {
    let proj = |v: Vec3, i: usize, j: usize| robust::Coord {
        x: v[i] as f64,
        y: v[j] as f64,
    };
    [(0, 1), (1, 2), (2, 0)]
        .iter()
        .all(|&(i, j)| robust::orient2d(proj(a, i, j), proj(b, i, j), proj(c, i, j)) == 0.0)
}

const NONE: u32 = u32::MAX;

struct Face {
    v: [u32; 3],
    /// `adj[e]` is the face across edge `v[e] → v[(e + 1) % 3]`.
    adj: [u32; 3],
    outside: Vec<u32>,
    alive: bool,
    /// Visit stamp: `2·epoch` visible, `2·epoch + 1` not visible.
    mark: u64,
}

/// Computes the convex hull of `points`.
///
/// Returns a degenerate [`Hull`] variant when the points span less than three dimensions, and
/// an error only for empty, non-finite or oversized input.
pub fn convex_hull(points: &[Vec3]) -> Result<Hull, HullError> {
    if points.is_empty() {
        return Err(HullError::Empty);
    }
    if points.len() >= u32::MAX as usize {
        return Err(HullError::TooLarge {
            count: points.len(),
        });
    }
    if let Some(index) = points.iter().position(|p| !p.is_finite()) {
        return Err(HullError::NonFinite {
            index,
            value: points[index].to_array(),
        });
    }
    let simplex = match initial_simplex(points) {
        Ok(s) => s,
        Err(degenerate) => return Ok(degenerate),
    };
    Builder::new(points, simplex).run().map(Hull::Solid)
}

fn lex_less(a: Vec3, b: Vec3) -> bool {
    (a.x, a.y, a.z) < (b.x, b.y, b.z)
}

/// Four affinely independent input points, or the degenerate hull when there are none.
fn initial_simplex(points: &[Vec3]) -> Result<[u32; 4], Hull> {
    let mut i0 = 0;
    let mut imax = 0;
    for (i, &p) in points.iter().enumerate() {
        if lex_less(p, points[i0]) {
            i0 = i;
        }
        if lex_less(points[imax], p) {
            imax = i;
        }
    }
    let p0 = points[i0];
    let d0 = p0.as_dvec3();
    let far = |f: &dyn Fn(DVec3) -> f64| {
        let mut best = (0usize, -1.0f64);
        for (i, p) in points.iter().enumerate() {
            let v = f(p.as_dvec3());
            if v > best.1 {
                best = (i, v);
            }
        }
        best.0
    };
    let i1 = far(&|p| (p - d0).length_squared());
    if points[i1] == p0 {
        return Err(Hull::Point { index: i0 as u32 });
    }
    let p1 = points[i1];
    let d1 = p1.as_dvec3();
    let mut i2 = far(&|p| (d1 - d0).cross(p - d0).length_squared());
    if collinear(p0, p1, points[i2]) {
        match points.iter().position(|&p| !collinear(p0, p1, p)) {
            Some(i) => i2 = i,
            None => {
                return Err(Hull::Collinear {
                    ends: [i0 as u32, imax as u32],
                });
            }
        }
    }
    let p2 = points[i2];
    let mut best = (0usize, 0.0f64);
    for (i, &p) in points.iter().enumerate() {
        let o = orient(p0, p1, p2, p).abs();
        if o > best.1 {
            best = (i, o);
        }
    }
    if best.1 == 0.0 {
        return Err(Hull::Planar {
            basis: [i0 as u32, i1 as u32, i2 as u32],
        });
    }
    Ok([i0 as u32, i1 as u32, i2 as u32, best.0 as u32])
}

struct Builder<'a> {
    points: &'a [Vec3],
    faces: Vec<Face>,
    epoch: u64,
    /// Per point scratch: new face whose horizon edge starts / ends at the point.
    starts: Vec<u32>,
    ends: Vec<u32>,
}

impl<'a> Builder<'a> {
    fn new(points: &'a [Vec3], s: [u32; 4]) -> Self {
        let [a, mut b, mut c, d] = s;
        if orient(
            points[a as usize],
            points[b as usize],
            points[c as usize],
            points[d as usize],
        ) < 0.0
        {
            std::mem::swap(&mut b, &mut c);
        }
        // Positively oriented tetrahedron (a, b, c, d): these four faces are outward.
        let tris = [[a, b, c], [a, d, b], [b, d, c], [a, c, d]];
        let mut faces: Vec<Face> = tris
            .iter()
            .map(|&v| Face {
                v,
                adj: [NONE; 3],
                outside: Vec::new(),
                alive: true,
                mark: 0,
            })
            .collect();
        for f in 0..4 {
            for e in 0..3 {
                let (x, y) = (faces[f].v[e], faces[f].v[(e + 1) % 3]);
                for g in 0..4 {
                    if g == f {
                        continue;
                    }
                    if (0..3).any(|k| faces[g].v[k] == y && faces[g].v[(k + 1) % 3] == x) {
                        faces[f].adj[e] = g as u32;
                    }
                }
            }
        }
        let mut builder = Self {
            points,
            faces,
            epoch: 0,
            starts: vec![NONE; points.len()],
            ends: vec![NONE; points.len()],
        };
        for i in 0..points.len() as u32 {
            if s.contains(&i) {
                continue;
            }
            if let Some(f) = (0..4u32).find(|&f| builder.height(f, i) > 0.0) {
                builder.faces[f as usize].outside.push(i);
            }
        }
        builder
    }

    /// Positive when point `p` is strictly outside face `f` (exact sign, approximate magnitude
    /// proportional to the distance).
    #[inline]
    fn height(&self, f: u32, p: u32) -> f64 {
        let [a, b, c] = self.faces[f as usize].v.map(|i| self.points[i as usize]);
        -orient(a, b, c, self.points[p as usize])
    }

    fn run(mut self) -> Result<ConvexHull, HullError> {
        let mut pending: Vec<u32> = (0..4).collect();
        let mut visible: Vec<u32> = Vec::new();
        let mut horizon: Vec<(u32, u32, u32, usize)> = Vec::new();
        let mut new_faces: Vec<u32> = Vec::new();
        while let Some(f) = pending.pop() {
            let face = &self.faces[f as usize];
            if !face.alive || face.outside.is_empty() {
                continue;
            }
            let mut eye = face.outside[0];
            let mut best = f64::NEG_INFINITY;
            for &p in &face.outside {
                let h = self.height(f, p);
                if h > best {
                    best = h;
                    eye = p;
                }
            }
            // Visible region: faces that see `eye` strictly, grown from `f` across edges.
            self.epoch += 1;
            let (vis_mark, hidden_mark) = (2 * self.epoch, 2 * self.epoch + 1);
            visible.clear();
            horizon.clear();
            visible.push(f);
            self.faces[f as usize].mark = vis_mark;
            let mut i = 0;
            while i < visible.len() {
                let g = visible[i];
                i += 1;
                for e in 0..3 {
                    let n = self.faces[g as usize].adj[e];
                    if n == NONE {
                        return Err(HullError::Inconsistent("open hull surface"));
                    }
                    let mark = self.faces[n as usize].mark;
                    let is_visible = if mark == vis_mark {
                        continue;
                    } else if mark == hidden_mark {
                        false
                    } else if self.height(n, eye) > 0.0 {
                        self.faces[n as usize].mark = vis_mark;
                        visible.push(n);
                        true
                    } else {
                        self.faces[n as usize].mark = hidden_mark;
                        false
                    };
                    if !is_visible {
                        let gv = self.faces[g as usize].v;
                        let (a, b) = (gv[e], gv[(e + 1) % 3]);
                        let nv = self.faces[n as usize].v;
                        let k = (0..3)
                            .find(|&k| nv[k] == b && nv[(k + 1) % 3] == a)
                            .ok_or(HullError::Inconsistent("neighbour lacks the shared edge"))?;
                        horizon.push((a, b, n, k));
                    }
                }
            }
            // Cone of new faces from the horizon to the eye.
            new_faces.clear();
            for &(a, b, n, k) in &horizon {
                let id = self.faces.len() as u32;
                if self.starts[a as usize] != NONE || self.ends[b as usize] != NONE {
                    return Err(HullError::Inconsistent("horizon is not a simple cycle"));
                }
                self.starts[a as usize] = id;
                self.ends[b as usize] = id;
                self.faces[n as usize].adj[k] = id;
                self.faces.push(Face {
                    v: [a, b, eye],
                    adj: [n, NONE, NONE],
                    outside: Vec::new(),
                    alive: true,
                    mark: 0,
                });
                new_faces.push(id);
            }
            for &id in &new_faces {
                let [a, b, _] = self.faces[id as usize].v;
                let next = self.starts[b as usize];
                let prev = self.ends[a as usize];
                if next == NONE || prev == NONE {
                    return Err(HullError::Inconsistent("horizon is not closed"));
                }
                self.faces[id as usize].adj[1] = next;
                self.faces[id as usize].adj[2] = prev;
            }
            for &(a, b, _, _) in &horizon {
                self.starts[a as usize] = NONE;
                self.ends[b as usize] = NONE;
            }
            // Retire the visible faces and hand their outside points to the new faces.
            let mut orphans = Vec::new();
            for &g in &visible {
                let face = &mut self.faces[g as usize];
                face.alive = false;
                orphans.append(&mut face.outside);
            }
            for p in orphans {
                if p == eye {
                    continue;
                }
                if let Some(&nf) = new_faces.iter().find(|&&nf| self.height(nf, p) > 0.0) {
                    self.faces[nf as usize].outside.push(p);
                }
            }
            for &nf in &new_faces {
                if !self.faces[nf as usize].outside.is_empty() {
                    pending.push(nf);
                }
            }
        }
        // Compact the surviving faces.
        let mut remap = vec![NONE; self.points.len()];
        let mut vertices = Vec::new();
        let mut input_indices = Vec::new();
        let mut triangles = Vec::new();
        for face in self.faces.iter().filter(|f| f.alive) {
            triangles.push(face.v.map(|i| {
                if remap[i as usize] == NONE {
                    remap[i as usize] = vertices.len() as u32;
                    vertices.push(self.points[i as usize]);
                    input_indices.push(i);
                }
                remap[i as usize]
            }));
        }
        Ok(ConvexHull {
            vertices,
            input_indices,
            triangles,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::collections::HashMap;

    /// Checks every property promised for a solid hull against the input, exactly.
    fn check_solid(points: &[Vec3]) -> ConvexHull {
        let hull = match convex_hull(points).expect("valid input") {
            Hull::Solid(h) => h,
            other => panic!("expected a solid hull, got {other:?}"),
        };
        // Vertices are input points.
        for (v, &i) in hull.vertices().iter().zip(hull.input_indices()) {
            assert_eq!(*v, points[i as usize]);
        }
        // No triangle is degenerate; every input point is on or inside every face plane.
        for t in 0..hull.triangles().len() {
            let [a, b, c] = hull.triangle(t);
            assert!(!collinear(a, b, c), "degenerate hull triangle");
            for &p in points {
                assert!(orient(a, b, c, p) >= 0.0, "point {p} outside hull face {t}");
            }
        }
        // Closed and consistently oriented: every directed edge once, with its reverse.
        let mut directed: HashMap<(u32, u32), usize> = HashMap::new();
        for tri in hull.triangles() {
            for e in 0..3 {
                *directed.entry((tri[e], tri[(e + 1) % 3])).or_default() += 1;
            }
        }
        for (&(a, b), &n) in &directed {
            assert_eq!(n, 1, "directed edge used twice");
            assert_eq!(directed.get(&(b, a)), Some(&1), "edge without its twin");
        }
        // Euler characteristic of a sphere, every vertex used.
        let v = hull.vertices().len() as i64;
        let e = directed.len() as i64 / 2;
        let f = hull.triangles().len() as i64;
        assert_eq!(v - e + f, 2, "Euler characteristic");
        let mut used = vec![false; hull.vertices().len()];
        hull.triangles()
            .iter()
            .flatten()
            .for_each(|&i| used[i as usize] = true);
        assert!(used.iter().all(|&u| u));
        assert!(hull.volume() > 0.0);
        for &p in points {
            assert!(hull.contains_point(p));
        }
        hull
    }

    fn ball(rng: &mut ChaCha8Rng, n: usize, radius: f32, center: Vec3) -> Vec<Vec3> {
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            let p = Vec3::new(
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
            );
            if p.length_squared() <= 1.0 {
                out.push(center + p * radius);
            }
        }
        out
    }

    #[test]
    fn random_balls() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for n in [4, 5, 10, 50, 300] {
            for _ in 0..8 {
                let pts = ball(&mut rng, n, 1.0, Vec3::ZERO);
                check_solid(&pts);
            }
        }
    }

    #[test]
    fn cube_corners_with_interior_points_and_duplicates() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let mut pts = ball(&mut rng, 200, 0.99, Vec3::ZERO)
            .into_iter()
            .map(|p| p.clamp(Vec3::splat(-0.9), Vec3::splat(0.9)))
            .collect::<Vec<_>>();
        for i in 0..8 {
            let c = Vec3::new(
                if i & 1 == 0 { -1.0 } else { 1.0 },
                if i & 2 == 0 { -1.0 } else { 1.0 },
                if i & 4 == 0 { -1.0 } else { 1.0 },
            );
            pts.insert(rng.random_range(0..pts.len()), c);
            pts.push(c); // duplicate
        }
        let hull = check_solid(&pts);
        assert_eq!(hull.vertices().len(), 8);
        assert_eq!(hull.triangles().len(), 12);
        assert!((hull.volume() - 8.0).abs() < 1e-12);
    }

    #[test]
    fn lattice_with_many_coplanar_points() {
        // Every face of the lattice cube carries coplanar points; the hull must still be exact.
        let mut pts = Vec::new();
        for x in 0..6 {
            for y in 0..5 {
                for z in 0..4 {
                    pts.push(Vec3::new(x as f32, y as f32, z as f32) * 0.5);
                }
            }
        }
        let hull = check_solid(&pts);
        assert!((hull.volume() - 2.5 * 2.0 * 1.5).abs() < 1e-12);
    }

    #[test]
    fn points_on_a_sphere_are_all_vertices() {
        let sphere = crate::shapes::icosphere(1.0, 3).unwrap();
        let hull = check_solid(sphere.vertices());
        assert_eq!(hull.vertices().len(), sphere.vertices().len());
        assert_eq!(hull.triangles().len(), 2 * sphere.vertices().len() - 4);
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let pts: Vec<Vec3> = ball(&mut rng, 400, 1.0, Vec3::ZERO)
            .into_iter()
            .map(|p| p.normalize() * 3.0)
            .collect();
        let hull = check_solid(&pts);
        assert!(hull.vertices().len() > 380, "{}", hull.vertices().len());
    }

    #[test]
    fn huge_offsets_snap_to_a_coarse_grid() {
        // At 1e6 the f32 spacing is 1/16: the points collapse onto a grid with many duplicates
        // and coplanar quadruples.
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        for radius in [0.5f32, 1.0, 50.0] {
            let pts = ball(&mut rng, 300, radius, Vec3::new(1.0e6, -2.0e6, 1.5e6));
            check_solid(&pts);
        }
    }

    #[test]
    fn degenerate_inputs() {
        assert_eq!(convex_hull(&[]), Err(HullError::Empty));
        assert!(matches!(
            convex_hull(&[Vec3::ZERO, Vec3::new(f32::NAN, 0.0, 0.0)]),
            Err(HullError::NonFinite { index: 1, .. })
        ));
        let p = Vec3::new(1.0, 2.0, 3.0);
        assert_eq!(convex_hull(&[p]), Ok(Hull::Point { index: 0 }));
        assert_eq!(convex_hull(&[p, p, p]), Ok(Hull::Point { index: 0 }));
        let line: Vec<Vec3> = [3.0f32, -1.0, 0.5, 7.0, 3.0]
            .iter()
            .map(|&t| p + Vec3::new(1.0, -2.0, 0.5) * t)
            .collect();
        assert_eq!(convex_hull(&line), Ok(Hull::Collinear { ends: [1, 3] }));
        assert_eq!(
            convex_hull(&[p, p + Vec3::X]),
            Ok(Hull::Collinear { ends: [0, 1] })
        );
        // A tilted grid with exactly representable coplanar points: z = x + 2y.
        let mut grid = Vec::new();
        for i in 0..10 {
            for j in 0..10 {
                let (x, y) = (i as f32 * 0.25, j as f32 * 0.5);
                grid.push(Vec3::new(x, y, x + 2.0 * y));
            }
        }
        match convex_hull(&grid) {
            Ok(Hull::Planar { basis }) => {
                let [a, b, c] = basis.map(|i| grid[i as usize]);
                assert!(!collinear(a, b, c));
            }
            other => panic!("expected planar, got {other:?}"),
        }
        // Three points and a fourth coplanar one.
        let tri = [Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::new(0.25, 0.25, 0.0)];
        assert!(matches!(convex_hull(&tri), Ok(Hull::Planar { .. })));
        // The smallest solid.
        let tet = [Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::Z];
        let hull = check_solid(&tet);
        assert_eq!(hull.triangles().len(), 4);
        assert!((hull.volume() - 1.0 / 6.0).abs() < 1e-15);
    }
}

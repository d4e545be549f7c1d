//! Triangle meshes: construction with validation (index ranges, finite coordinates, degenerate
//! triangles, vertex welding) and the geometric queries every other module builds on.
//!
//! [`TriMesh`] accepts any triangle soup that passes validation; [`crate::Solid`] additionally
//! requires a closed, consistently oriented surface.

use crate::aabb::Aabb;
use crate::error::MeshError;
use crate::pose::Pose;
use glam::{DVec3, Vec3};
use std::collections::HashMap;

/// What to do with zero-area triangles.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DegeneratePolicy {
    /// Keep them and list them in the report (they cannot cause wrong answers in the exact
    /// tests, and removing them can open a closed mesh).
    #[default]
    Keep,
    /// Remove them and list them in the report.
    Drop,
    /// Refuse the mesh with [`MeshError::Degenerate`].
    Reject,
}

/// Options for building a mesh from raw arrays.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MeshOptions {
    /// Merge vertices closer than this (`Some(0.0)` merges only identical positions).
    pub weld_tolerance: Option<f32>,
    /// What to do with zero-area triangles.
    pub degenerate: DegeneratePolicy,
}

/// What validation found and changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ValidationReport {
    /// Input triangles with zero area (indices into the input triangle list).
    pub degenerate_triangles: Vec<usize>,
    /// Whether those were removed.
    pub dropped_degenerate: bool,
    /// How many vertices were merged into others by welding.
    pub welded_vertices: usize,
    /// Vertices no triangle uses (kept; they do not affect any query).
    pub unused_vertices: usize,
}

/// A validated triangle mesh: finite vertices, in-range indices, at least one triangle.
#[derive(Clone, Debug, PartialEq)]
pub struct TriMesh {
    vertices: Vec<Vec3>,
    triangles: Vec<[u32; 3]>,
}

impl TriMesh {
    /// Builds a mesh with the default options (no welding, degenerate triangles kept).
    pub fn new(vertices: Vec<Vec3>, triangles: Vec<[u32; 3]>) -> Result<Self, MeshError> {
        Self::with_options(vertices, triangles, &MeshOptions::default()).map(|(mesh, _)| mesh)
    }

    /// Builds a mesh, validating and optionally welding and dropping degenerate triangles.
    pub fn with_options(
        mut vertices: Vec<Vec3>,
        mut triangles: Vec<[u32; 3]>,
        options: &MeshOptions,
    ) -> Result<(Self, ValidationReport), MeshError> {
        if vertices.is_empty() || triangles.is_empty() {
            return Err(MeshError::Empty {
                vertices: vertices.len(),
                triangles: triangles.len(),
            });
        }
        if vertices.len() > u32::MAX as usize {
            return Err(MeshError::TooLarge {
                what: "vertices",
                count: vertices.len(),
            });
        }
        if triangles.len() > u32::MAX as usize {
            return Err(MeshError::TooLarge {
                what: "triangles",
                count: triangles.len(),
            });
        }
        for (i, v) in vertices.iter().enumerate() {
            if !v.is_finite() {
                return Err(MeshError::NonFinite {
                    vertex: i,
                    value: v.to_array(),
                });
            }
        }
        for (t, tri) in triangles.iter().enumerate() {
            for &index in tri {
                if index as usize >= vertices.len() {
                    return Err(MeshError::IndexOutOfRange {
                        triangle: t,
                        index: index as u64,
                        vertex_count: vertices.len(),
                    });
                }
            }
        }
        let mut report = ValidationReport::default();
        if let Some(tolerance) = options.weld_tolerance {
            report.welded_vertices = weld(&mut vertices, &mut triangles, tolerance.max(0.0));
        }
        for (t, tri) in triangles.iter().enumerate() {
            if let Some(reason) = degeneracy(&vertices, tri) {
                if options.degenerate == DegeneratePolicy::Reject {
                    return Err(MeshError::Degenerate {
                        triangle: t,
                        reason,
                    });
                }
                report.degenerate_triangles.push(t);
            }
        }
        if options.degenerate == DegeneratePolicy::Drop && !report.degenerate_triangles.is_empty() {
            let mut drop = vec![false; triangles.len()];
            for &t in &report.degenerate_triangles {
                drop[t] = true;
            }
            let mut i = 0;
            triangles.retain(|_| {
                let keep = !drop[i];
                i += 1;
                keep
            });
            report.dropped_degenerate = true;
            if triangles.is_empty() {
                return Err(MeshError::Empty {
                    vertices: vertices.len(),
                    triangles: 0,
                });
            }
        }
        let mut used = vec![false; vertices.len()];
        for tri in &triangles {
            for &i in tri {
                used[i as usize] = true;
            }
        }
        report.unused_vertices = used.iter().filter(|u| !**u).count();
        Ok((
            Self {
                vertices,
                triangles,
            },
            report,
        ))
    }

    /// The vertex positions.
    pub fn vertices(&self) -> &[Vec3] {
        &self.vertices
    }

    /// The triangles, as counter-clockwise (outward-facing for solids) vertex index triples.
    pub fn triangles(&self) -> &[[u32; 3]] {
        &self.triangles
    }

    /// Number of triangles.
    pub fn triangle_count(&self) -> usize {
        self.triangles.len()
    }

    /// The three corners of triangle `t`.
    #[inline]
    pub fn triangle(&self, t: usize) -> [Vec3; 3] {
        let [a, b, c] = self.triangles[t];
        [
            self.vertices[a as usize],
            self.vertices[b as usize],
            self.vertices[c as usize],
        ]
    }

    /// Bounding box of all vertices used or not.
    pub fn aabb(&self) -> Aabb {
        Aabb::from_points(self.vertices.iter().copied())
    }

    /// The bounding box of the mesh under `pose`.
    pub fn aabb_under(&self, pose: &Pose) -> Aabb {
        Aabb::from_points(self.vertices.iter().map(|&v| pose.transform_point(v)))
    }

    /// Unnormalized face normal (cross product of two edges, twice the area), in `f64`.
    pub fn face_normal_f64(&self, t: usize) -> DVec3 {
        let [a, b, c] = self.triangle(t).map(Vec3::as_dvec3);
        (b - a).cross(c - a)
    }

    /// Unit face normal (zero for degenerate triangles).
    pub fn face_normal(&self, t: usize) -> Vec3 {
        self.face_normal_f64(t).normalize_or_zero().as_vec3()
    }

    /// Triangle area.
    pub fn triangle_area(&self, t: usize) -> f64 {
        0.5 * self.face_normal_f64(t).length()
    }

    /// Total surface area.
    pub fn surface_area(&self) -> f64 {
        (0..self.triangles.len())
            .map(|t| self.triangle_area(t))
            .sum()
    }

    /// Angle-weighted vertex normals (unit length; zero for unused vertices), used to offset
    /// edges outward in CInDeR (section 6.3) and for shading.
    pub fn vertex_normals(&self) -> Vec<Vec3> {
        let mut normals = vec![DVec3::ZERO; self.vertices.len()];
        for t in 0..self.triangles.len() {
            let idx = self.triangles[t];
            let p = self.triangle(t).map(Vec3::as_dvec3);
            let n = (p[1] - p[0]).cross(p[2] - p[0]).normalize_or_zero();
            for k in 0..3 {
                let e1 = (p[(k + 1) % 3] - p[k]).normalize_or_zero();
                let e2 = (p[(k + 2) % 3] - p[k]).normalize_or_zero();
                let angle = e1.dot(e2).clamp(-1.0, 1.0).acos();
                normals[idx[k] as usize] += n * angle;
            }
        }
        normals
            .into_iter()
            .map(|n| n.normalize_or_zero().as_vec3())
            .collect()
    }

    /// Signed volume enclosed by the surface (divergence theorem); positive for a closed mesh
    /// whose triangles face outward.
    pub fn signed_volume(&self) -> f64 {
        let mut sum = 0.0;
        for t in 0..self.triangles.len() {
            let [a, b, c] = self.triangle(t).map(Vec3::as_dvec3);
            sum += a.dot(b.cross(c));
        }
        sum / 6.0
    }

    /// A copy with every vertex moved by `pose`.
    pub fn transformed(&self, pose: &Pose) -> TriMesh {
        TriMesh {
            vertices: self
                .vertices
                .iter()
                .map(|&v| pose.transform_point(v))
                .collect(),
            triangles: self.triangles.clone(),
        }
    }

    /// A copy uniformly scaled and translated so that its bounding box is centred at the origin
    /// with its longest side spanning `[-1, 1]` (the benchmark protocol of Zachmann).
    pub fn normalized_to_unit_cube(&self) -> TriMesh {
        let aabb = self.aabb();
        let centre = aabb.center();
        let half = aabb.half_extents().max_element().max(f32::MIN_POSITIVE);
        TriMesh {
            vertices: self.vertices.iter().map(|&v| (v - centre) / half).collect(),
            triangles: self.triangles.clone(),
        }
    }

    /// A copy with every triangle's winding reversed (normals flipped).
    pub fn flipped(&self) -> TriMesh {
        TriMesh {
            vertices: self.vertices.clone(),
            triangles: self.triangles.iter().map(|&[a, b, c]| [a, c, b]).collect(),
        }
    }

    /// Concatenates meshes into one soup (indices shifted).
    pub fn merge(meshes: &[&TriMesh]) -> Result<TriMesh, MeshError> {
        let mut vertices = Vec::new();
        let mut triangles = Vec::new();
        for mesh in meshes {
            let base = vertices.len() as u32;
            vertices.extend_from_slice(&mesh.vertices);
            triangles.extend(mesh.triangles.iter().map(|t| t.map(|i| i + base)));
        }
        TriMesh::new(vertices, triangles)
    }
}

/// Why a triangle has zero area, if it does (exact test in `f64`).
fn degeneracy(vertices: &[Vec3], tri: &[u32; 3]) -> Option<&'static str> {
    let [a, b, c] = *tri;
    if a == b || b == c || a == c {
        return Some("repeated vertex index");
    }
    let p = tri.map(|i| vertices[i as usize]);
    if p[0] == p[1] || p[1] == p[2] || p[0] == p[2] {
        return Some("coincident corners");
    }
    // Collinear iff all three 2-D projections have zero signed area; f32 inputs are exact in f64
    // products of differences up to rounding, so use the robust predicate.
    let to = |v: Vec3| robust::Coord {
        x: v.x as f64,
        y: v.y as f64,
    };
    let to_yz = |v: Vec3| robust::Coord {
        x: v.y as f64,
        y: v.z as f64,
    };
    let to_zx = |v: Vec3| robust::Coord {
        x: v.z as f64,
        y: v.x as f64,
    };
    let xy = robust::orient2d(to(p[0]), to(p[1]), to(p[2]));
    let yz = robust::orient2d(to_yz(p[0]), to_yz(p[1]), to_yz(p[2]));
    let zx = robust::orient2d(to_zx(p[0]), to_zx(p[1]), to_zx(p[2]));
    if xy == 0.0 && yz == 0.0 && zx == 0.0 {
        return Some("collinear corners");
    }
    None
}

/// Merges vertices within `tolerance` (grid hashing; the first vertex of a cluster wins) and
/// rewrites the triangles; returns how many vertices were merged away. Unused vertices stay.
fn weld(vertices: &mut Vec<Vec3>, triangles: &mut [[u32; 3]], tolerance: f32) -> usize {
    let n = vertices.len();
    let mut remap = vec![0u32; n];
    let mut kept: Vec<Vec3> = Vec::with_capacity(n);
    if tolerance == 0.0 {
        let mut seen: HashMap<[u32; 3], u32> = HashMap::with_capacity(n);
        for (i, v) in vertices.iter().enumerate() {
            // +0.0 and -0.0 are the same position.
            let key = (*v + Vec3::ZERO).to_array().map(f32::to_bits);
            let id = *seen.entry(key).or_insert_with(|| {
                kept.push(*v);
                (kept.len() - 1) as u32
            });
            remap[i] = id;
        }
    } else {
        let cell = tolerance * 2.0;
        let key = |v: Vec3| (v / cell).floor().as_ivec3();
        let mut grid: HashMap<glam::IVec3, Vec<u32>> = HashMap::with_capacity(n);
        for (i, v) in vertices.iter().enumerate() {
            let k = key(*v);
            let mut found = None;
            'search: for dx in -1..=1 {
                for dy in -1..=1 {
                    for dz in -1..=1 {
                        // Saturating: coordinates far beyond tolerance × 2^31 all land in the
                        // last cell, where the exact distance test below still decides.
                        let cell = k.saturating_add(glam::IVec3::new(dx, dy, dz));
                        if let Some(ids) = grid.get(&cell) {
                            for &id in ids {
                                if kept[id as usize].distance(*v) <= tolerance {
                                    found = Some(id);
                                    break 'search;
                                }
                            }
                        }
                    }
                }
            }
            remap[i] = match found {
                Some(id) => id,
                None => {
                    kept.push(*v);
                    let id = (kept.len() - 1) as u32;
                    grid.entry(k).or_default().push(id);
                    id
                }
            };
        }
    }
    for tri in triangles.iter_mut() {
        *tri = tri.map(|i| remap[i as usize]);
    }
    let merged = n - kept.len();
    *vertices = kept;
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tetra() -> (Vec<Vec3>, Vec<[u32; 3]>) {
        (
            vec![Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::Z],
            vec![[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]],
        )
    }

    #[test]
    fn validation_errors_name_the_culprit() {
        let (v, _) = tetra();
        assert_eq!(
            TriMesh::new(v.clone(), vec![]),
            Err(MeshError::Empty {
                vertices: 4,
                triangles: 0
            })
        );
        assert_eq!(
            TriMesh::new(v.clone(), vec![[0, 1, 2], [0, 1, 9]]),
            Err(MeshError::IndexOutOfRange {
                triangle: 1,
                index: 9,
                vertex_count: 4
            })
        );
        let mut bad = v.clone();
        bad[2].y = f32::NAN;
        assert!(matches!(
            TriMesh::new(bad, vec![[0, 1, 2]]),
            Err(MeshError::NonFinite { vertex: 2, .. })
        ));
    }

    #[test]
    fn degenerate_triangles_are_reported_dropped_or_rejected() {
        let v = vec![Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::new(2.0, 0.0, 0.0)];
        let tris = vec![[0, 1, 2], [0, 1, 3], [0, 0, 2]];
        let (mesh, report) =
            TriMesh::with_options(v.clone(), tris.clone(), &MeshOptions::default()).unwrap();
        assert_eq!(report.degenerate_triangles, vec![1, 2]);
        assert_eq!(mesh.triangle_count(), 3);
        let options = MeshOptions {
            degenerate: DegeneratePolicy::Drop,
            ..Default::default()
        };
        let (mesh, report) = TriMesh::with_options(v.clone(), tris.clone(), &options).unwrap();
        assert!(report.dropped_degenerate);
        assert_eq!(mesh.triangles(), &[[0, 1, 2]]);
        let options = MeshOptions {
            degenerate: DegeneratePolicy::Reject,
            ..Default::default()
        };
        assert_eq!(
            TriMesh::with_options(v, tris, &options).unwrap_err(),
            MeshError::Degenerate {
                triangle: 1,
                reason: "collinear corners"
            }
        );
    }

    #[test]
    fn welding_merges_duplicates_exactly_and_within_tolerance() {
        let v = vec![
            Vec3::ZERO,
            Vec3::X,
            Vec3::Y,
            Vec3::new(-0.0, 0.0, 0.0),
            Vec3::new(1.0, 1e-7, 0.0),
            Vec3::Z,
        ];
        let tris = vec![[0, 1, 2], [3, 4, 5]];
        let exact = MeshOptions {
            weld_tolerance: Some(0.0),
            ..Default::default()
        };
        let (mesh, report) = TriMesh::with_options(v.clone(), tris.clone(), &exact).unwrap();
        assert_eq!(report.welded_vertices, 1);
        assert_eq!(mesh.triangles()[1][0], 0);
        let loose = MeshOptions {
            weld_tolerance: Some(1e-5),
            ..Default::default()
        };
        let (mesh, report) = TriMesh::with_options(v, tris, &loose).unwrap();
        assert_eq!(report.welded_vertices, 2);
        assert_eq!(mesh.triangles()[1], [0, 1, 3]);
    }

    #[test]
    fn welding_huge_coordinates_with_a_tiny_tolerance_does_not_overflow() {
        // v / (2 · tolerance) saturates the i32 cell index; the neighbour cells must too.
        let v = vec![
            Vec3::new(3e38, -3e38, 1.0),
            Vec3::new(3e38, -3e38, 1.0),
            Vec3::new(-3e38, 3e38, 0.0),
            Vec3::new(1.0, 2.0, 3e38),
        ];
        let options = MeshOptions {
            weld_tolerance: Some(1e-30),
            ..Default::default()
        };
        let (mesh, report) =
            TriMesh::with_options(v, vec![[0, 2, 3], [1, 3, 2]], &options).unwrap();
        assert_eq!(report.welded_vertices, 1);
        assert_eq!(mesh.vertices().len(), 3);
        assert_eq!(mesh.triangles()[1], [0, 2, 1]);
    }

    #[test]
    fn tetrahedron_volume_and_normals() {
        let (v, t) = tetra();
        let mesh = TriMesh::new(v, t).unwrap();
        assert!((mesh.signed_volume() - 1.0 / 6.0).abs() < 1e-12);
        assert!((mesh.flipped().signed_volume() + 1.0 / 6.0).abs() < 1e-12);
        let n = mesh.vertex_normals();
        assert!(n[0].dot(Vec3::ONE.normalize()) < -0.9);
    }
}

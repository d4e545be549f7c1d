//! Colliding-face detection between moving, deforming meshes over one time step, with serial and
//! parallel drivers: Kitamura, Smith, Takemura & Kishino 1995, "Parallel Algorithms for
//! Real-time Colliding Face Detection" (`kitamura-1995-parallel-colliding-faces.md`).
//!
//! * §3.2 step 1, [`overlap_regions`]: each object's axis-aligned box over both instants; for
//!   every overlapping object pair, the intersection box (the overlap region).
//! * §3.3 step 2, [`faces_in_region`]: the faces of each object whose swept box (over both
//!   instants) meets the overlap region.
//! * §3.4 step 3, [`candidate_pairs`]: the memoryless face octree: the overlap region is
//!   recursively cut into octants to a user-set depth, a cell keeps only the faces meeting it and
//!   is dropped unless it holds faces of both objects; every leaf cell contributes all its
//!   cross-object face pairs, deduplicated.
//! * §3.5 step 4, [`swept_faces_intersect`]: the convex hulls of each face's six vertices
//!   (three per instant) are tested for intersection, conservatively.
//! * §4.2 and §4.3: [`detect_static`] (steps 1–3 serial, candidate pairs dealt round-robin to the
//!   threads) and [`detect_dynamic`] (one producer runs step 3 and streams new face pairs over a
//!   channel to consumers running step 4; when done it becomes a consumer and then joins them).
//!
//! All drivers return the same sorted, deduplicated [`Detection`] as [`detect`]; the tests
//! check them against [`brute_force`] (every face pair of every object pair through the same
//! step-4 test), and the step-4 test against an exact hull-intersection oracle.
//!
//! Boxes are closed and built from the exact `f64` vertex coordinates, and octree cells are
//! split at one shared midpoint, so children cover their parent exactly: any point common to two
//! swept hulls lies in some leaf cell met by both faces, and the octree never drops a pair that
//! step 4 would report.

mod bench;
mod octree;
mod parallel;
mod swept;
#[cfg(test)]
mod tests;

pub use bench::{SphereBench, bench_spheres, best_of, converging_spheres};
pub use octree::{MAX_DEPTH, candidate_pairs};
pub use parallel::{detect_dynamic, detect_static};
pub use swept::{SweptFace, swept_faces_intersect};

use crate::mesh::TriMesh;
use crate::pose::DPose;
use glam::DVec3;
use thiserror::Error;

/// Why a detection could not run.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum KitamuraError {
    /// The two vertex arrays of a moving mesh differ in length.
    #[error("{before} vertices at t_i but {after} at t_i+1")]
    VertexCountMismatch {
        /// Vertices at `t_i`.
        before: usize,
        /// Vertices at `t_{i+1}`.
        after: usize,
    },
    /// A triangle refers to a vertex that does not exist.
    #[error("face {face} uses vertex {index}, but there are only {vertices}")]
    IndexOutOfRange {
        /// The face.
        face: usize,
        /// The bad index.
        index: u32,
        /// How many vertices there are.
        vertices: usize,
    },
    /// A vertex position is NaN or infinite.
    #[error("vertex {vertex} has a non-finite position at instant {instant}")]
    NonFinite {
        /// The vertex.
        vertex: usize,
        /// 0 for `t_i`, 1 for `t_{i+1}`.
        instant: u8,
    },
    /// More faces or objects than 32-bit indices allow.
    #[error("{count} faces or objects, more than 32-bit indices allow")]
    TooLarge {
        /// How many.
        count: usize,
    },
    /// The octree depth exceeds [`MAX_DEPTH`].
    #[error("octree depth {depth} exceeds the maximum {max}")]
    DepthTooLarge {
        /// Requested depth.
        depth: u32,
        /// The maximum.
        max: u32,
    },
    /// A parallel driver was asked to use zero threads.
    #[error("at least one thread is needed")]
    NoThreads,
}

/// A triangle mesh whose vertices are known at two instants `t_i` and `t_{i+1}` (same topology;
/// the object may move and deform in between).
#[derive(Clone, Debug, PartialEq)]
pub struct MovingMesh {
    triangles: Vec<[u32; 3]>,
    before: Vec<DVec3>,
    after: Vec<DVec3>,
}

impl MovingMesh {
    /// A moving mesh from its triangles and its vertex positions at both instants. Checks that
    /// the arrays match, every index exists and every coordinate is finite.
    pub fn new(
        triangles: Vec<[u32; 3]>,
        before: Vec<DVec3>,
        after: Vec<DVec3>,
    ) -> Result<Self, KitamuraError> {
        if before.len() != after.len() {
            return Err(KitamuraError::VertexCountMismatch {
                before: before.len(),
                after: after.len(),
            });
        }
        if triangles.len() > u32::MAX as usize {
            return Err(KitamuraError::TooLarge {
                count: triangles.len(),
            });
        }
        for (face, t) in triangles.iter().enumerate() {
            if let Some(&index) = t.iter().find(|&&i| i as usize >= before.len()) {
                return Err(KitamuraError::IndexOutOfRange {
                    face,
                    index,
                    vertices: before.len(),
                });
            }
        }
        for (instant, vs) in [(0u8, &before), (1u8, &after)] {
            if let Some(vertex) = vs.iter().position(|v| !v.is_finite()) {
                return Err(KitamuraError::NonFinite { vertex, instant });
            }
        }
        Ok(Self {
            triangles,
            before,
            after,
        })
    }

    /// A rigid mesh moving from pose `before` to pose `after` (vertices through
    /// [`DPose::transform_point`]).
    pub fn from_poses(
        mesh: &TriMesh,
        before: &DPose,
        after: &DPose,
    ) -> Result<Self, KitamuraError> {
        Self::new(
            mesh.triangles().to_vec(),
            mesh.vertices()
                .iter()
                .map(|&v| before.transform_point(v))
                .collect(),
            mesh.vertices()
                .iter()
                .map(|&v| after.transform_point(v))
                .collect(),
        )
    }

    /// The triangles (indices into both vertex arrays).
    pub fn triangles(&self) -> &[[u32; 3]] {
        &self.triangles
    }

    /// Vertex positions at `t_i`.
    pub fn before(&self) -> &[DVec3] {
        &self.before
    }

    /// Vertex positions at `t_{i+1}`.
    pub fn after(&self) -> &[DVec3] {
        &self.after
    }

    /// Number of faces.
    pub fn face_count(&self) -> usize {
        self.triangles.len()
    }

    /// Face `f` at `t_i` (`None` if out of range).
    pub fn face_before(&self, f: usize) -> Option<[DVec3; 3]> {
        self.triangles
            .get(f)
            .map(|t| t.map(|i| self.before[i as usize]))
    }

    /// Face `f` at `t_{i+1}` (`None` if out of range).
    pub fn face_after(&self, f: usize) -> Option<[DVec3; 3]> {
        self.triangles
            .get(f)
            .map(|t| t.map(|i| self.after[i as usize]))
    }

    /// The six vertices swept by face `f` (`None` if out of range).
    pub fn swept_face(&self, f: usize) -> Option<SweptFace> {
        let t = self.triangles.get(f)?;
        let b = t.map(|i| self.before[i as usize]);
        let a = t.map(|i| self.after[i as usize]);
        Some([b[0], b[1], b[2], a[0], a[1], a[2]])
    }

    /// The box around face `f` at both instants (`None` if out of range).
    pub fn face_box(&self, f: usize) -> Option<DBox> {
        self.swept_face(f).map(|p| DBox::from_points(&p))
    }

    /// The box around the whole mesh at both instants (empty for a mesh without vertices).
    pub fn bounds(&self) -> DBox {
        let mut b = DBox::EMPTY;
        for p in self.before.iter().chain(self.after.iter()) {
            b = b.grown_to(*p);
        }
        b
    }
}

/// A closed axis-aligned box in `f64` (empty when some `min > max`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DBox {
    /// Minimum corner.
    pub min: DVec3,
    /// Maximum corner.
    pub max: DVec3,
}

impl DBox {
    /// The empty box.
    pub const EMPTY: Self = Self {
        min: DVec3::INFINITY,
        max: DVec3::NEG_INFINITY,
    };

    /// The smallest box containing `points`.
    pub fn from_points(points: &[DVec3]) -> Self {
        points.iter().fold(Self::EMPTY, |b, &p| b.grown_to(p))
    }

    /// This box grown to contain `p`.
    pub fn grown_to(self, p: DVec3) -> Self {
        Self {
            min: self.min.min(p),
            max: self.max.max(p),
        }
    }

    /// Whether the box is empty.
    pub fn is_empty(&self) -> bool {
        self.min.cmpgt(self.max).any()
    }

    /// Whether two closed boxes share a point (touching counts).
    pub fn overlaps(&self, other: &DBox) -> bool {
        self.min.cmple(other.max).all() && other.min.cmple(self.max).all()
    }

    /// The common part of two boxes, `None` when they do not overlap.
    pub fn intersection(&self, other: &DBox) -> Option<DBox> {
        self.overlaps(other).then(|| DBox {
            min: self.min.max(other.min),
            max: self.max.min(other.max),
        })
    }

    /// Octant `i` (bit 0: upper x half, bit 1: upper y, bit 2: upper z). The eight octants
    /// share the exact midpoint, so together they cover the box.
    pub fn octant(&self, i: usize) -> DBox {
        let mid = self.min + (self.max - self.min) * 0.5;
        let mut b = *self;
        for k in 0..3 {
            if i >> k & 1 == 1 {
                b.min[k] = mid[k];
            } else {
                b.max[k] = mid[k];
            }
        }
        b
    }
}

/// The overlap region of two objects (step 1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OverlapRegion {
    /// The first object (smaller index).
    pub a: u32,
    /// The second object.
    pub b: u32,
    /// The intersection of their boxes over both instants.
    pub region: DBox,
}

/// One face of one object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FaceRef {
    /// Index of the object in the input slice.
    pub object: u32,
    /// Index of the face in that object.
    pub face: u32,
}

/// A pair of faces of two different objects, `a.object < b.object`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FacePair {
    /// The face of the object with the smaller index.
    pub a: FaceRef,
    /// The face of the other object.
    pub b: FaceRef,
}

/// Parameters of the detection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KitamuraConfig {
    /// Depth of the face octree over each overlap region (0: the region is one leaf).
    pub depth: u32,
}

impl Default for KitamuraConfig {
    fn default() -> Self {
        Self { depth: 4 }
    }
}

/// The result of one detection over `[t_i, t_{i+1}]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Detection {
    /// Face pairs whose swept volumes intersect, sorted, without duplicates.
    pub colliding: Vec<FacePair>,
    /// How many distinct candidate face pairs step 3 produced (the step-4 workload).
    pub candidates: usize,
}

/// Step 1: the overlap region of every pair of objects whose boxes (each over both instants)
/// overlap, in order of `(a, b)`.
pub fn overlap_regions(objects: &[MovingMesh]) -> Vec<OverlapRegion> {
    let boxes: Vec<DBox> = objects.iter().map(MovingMesh::bounds).collect();
    let mut out = Vec::new();
    for (i, bi) in boxes.iter().enumerate() {
        for (j, bj) in boxes.iter().enumerate().skip(i + 1) {
            if let Some(region) = bi.intersection(bj) {
                out.push(OverlapRegion {
                    a: i as u32,
                    b: j as u32,
                    region,
                });
            }
        }
    }
    out
}

/// Step 2: the faces of `object` whose swept box meets `region`, in increasing order.
pub fn faces_in_region(object: &MovingMesh, region: &DBox) -> Vec<u32> {
    (0..object.face_count())
        .filter(|&f| object.face_box(f).is_some_and(|b| b.overlaps(region)))
        .map(|f| f as u32)
        .collect()
}

fn check_input(objects: &[MovingMesh], config: &KitamuraConfig) -> Result<(), KitamuraError> {
    if objects.len() > u32::MAX as usize {
        return Err(KitamuraError::TooLarge {
            count: objects.len(),
        });
    }
    if config.depth > MAX_DEPTH {
        return Err(KitamuraError::DepthTooLarge {
            depth: config.depth,
            max: MAX_DEPTH,
        });
    }
    Ok(())
}

/// Step 4 on one candidate pair.
fn pair_collides(objects: &[MovingMesh], p: &FacePair) -> bool {
    let a = objects[p.a.object as usize].swept_face(p.a.face as usize);
    let b = objects[p.b.object as usize].swept_face(p.b.face as usize);
    match (a, b) {
        (Some(a), Some(b)) => swept_faces_intersect(&a, &b),
        _ => false,
    }
}

/// The serial algorithm (§3, steps 1–4).
pub fn detect(objects: &[MovingMesh], config: &KitamuraConfig) -> Result<Detection, KitamuraError> {
    let candidates = candidate_pairs(objects, config)?;
    let colliding = candidates
        .iter()
        .filter(|p| pair_collides(objects, p))
        .copied()
        .collect();
    Ok(Detection {
        colliding,
        candidates: candidates.len(),
    })
}

/// The oracle: every face pair of every pair of objects through the step-4 test, sorted.
pub fn brute_force(objects: &[MovingMesh]) -> Vec<FacePair> {
    let mut out = Vec::new();
    for (i, oi) in objects.iter().enumerate() {
        for (j, oj) in objects.iter().enumerate().skip(i + 1) {
            for fa in 0..oi.face_count() {
                for fb in 0..oj.face_count() {
                    let p = FacePair {
                        a: FaceRef {
                            object: i as u32,
                            face: fa as u32,
                        },
                        b: FaceRef {
                            object: j as u32,
                            face: fb as u32,
                        },
                    };
                    if pair_collides(objects, &p) {
                        out.push(p);
                    }
                }
            }
        }
    }
    out.sort_unstable();
    out
}

//! The interference query: do two meshes at a relative pose intersect, which triangle pairs
//! cross, and is one nested inside the other?
//!
//! This ties the geometry core together the way CInDeR (Knott & Pai 2003) Theorem 1 frames it:
//! two closed solids interfere iff an edge of one meets the volume of the other, i.e. some pair
//! of boundary triangles intersects or one solid lies wholly inside the other. A BVH traversal
//! (OBBTree, Gottschalk–Lin–Manocha 1996; balanced AABB tree depth-first or breadth-first,
//! Greß–Zachmann 2004 §3–4) prunes triangle pairs, the exact triangle test
//! ([`crate::tri_tri::triangles_intersect`]) decides each leaf pair, and when no pair crosses,
//! exact point-in-solid ([`crate::containment`](mod@crate::containment)) decides nesting.
//!
//! All methods see the same exactly defined inputs (A's `f32` vertices as `f64`, B's mapped by
//! [`DPose::transform_point`]), so they return identical pair sets; the tests check that against
//! the brute-force oracle. Trees are built lazily, once, the first time a method needs them.

use crate::brute_force;
use crate::bvh::balanced::BalancedTree;
use crate::bvh::bfs::{self, BfsConfig, PairListOverflow};
use crate::bvh::dfs;
use crate::bvh::front::{LeafAnswer, TraversalFront, certify_leaf};
use crate::bvh::obbtree::ObbTree;
use crate::containment::{self, Containment};
use crate::mesh::TriMesh;
use crate::pose::DPose;
use crate::topology::Solid;
use crate::tri_tri::triangles_intersect;
use glam::DVec3;
use std::sync::OnceLock;

/// The traversal an interference query runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// OBBTree, depth-first, 15-axis SAT at inner nodes.
    Obb,
    /// Balanced AABB tree, depth-first, SAT-lite at inner nodes.
    Aabb,
    /// Balanced AABB tree, breadth-first level-synchronous (the GPU schedule, on the CPU).
    Bfs,
    /// Every triangle pair: the oracle.
    Brute,
}

impl Method {
    /// A short lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Method::Obb => "obb",
            Method::Aabb => "aabb",
            Method::Bfs => "bfs",
            Method::Brute => "brute",
        }
    }
}

/// Why an interference query could not answer.
#[derive(Debug, thiserror::Error)]
pub enum InterferenceError {
    /// The breadth-first traversal's pair list outgrew its capacity.
    #[error(transparent)]
    Overflow(#[from] PairListOverflow),
}

/// The answer of [`MeshQueries::interference`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Interference {
    /// Whether the two meshes interfere (a triangle pair crosses or one solid contains the other).
    pub intersecting: bool,
    /// Set when no triangle pair crosses but one solid lies inside the other.
    pub contained: Option<Containment>,
    /// Why containment was not checked (a mesh is not a closed solid), if it was not.
    pub containment_note: Option<String>,
    /// Intersecting triangle pairs `(triangle of A, triangle of B)`, sorted: all of them when
    /// asked for, otherwise at most the first one found.
    pub pairs: Vec<(u32, u32)>,
}

/// What a collider wraps: a closed solid, or an open mesh and why it is not a solid.
enum Shape {
    Solid(Solid),
    Open { mesh: TriMesh, why: String },
}

/// A mesh prepared for interference queries: the mesh, whether it is a closed solid, and its
/// hierarchies (built on first use).
///
/// A collider is `Send + Sync`: [`MeshQueries::prepare`] may run on a worker thread (a task pool)
/// before the collider is moved to or shared with the thread that queries it, and threads that
/// race to build the same tree get one build, whose result they all see (`OnceLock`).
pub struct MeshQueries {
    shape: Shape,
    balanced: OnceLock<BalancedTree>,
    obb: OnceLock<ObbTree>,
}

// Compile-time guard of the promise above (and of the trees' own thread safety).
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<MeshQueries>();
    send_sync::<ObbTree>();
    send_sync::<BalancedTree>();
};

impl MeshQueries {
    /// Wraps a mesh. Open or non-manifold meshes are accepted (triangle pairs are still exact);
    /// only the containment test, which needs a closed solid, is skipped for them, with a note.
    pub fn new(mesh: TriMesh) -> Self {
        // `Solid::new` consumes the mesh and returns only the reason on failure, so the open
        // case keeps the original; the solid case keeps only the (possibly re-oriented) solid.
        let shape = match Solid::new(mesh.clone()) {
            Ok(solid) => Shape::Solid(solid),
            Err(e) => Shape::Open {
                mesh,
                why: e.to_string(),
            },
        };
        Self {
            shape,
            balanced: OnceLock::new(),
            obb: OnceLock::new(),
        }
    }

    /// The mesh (re-oriented outward when it was a closed solid wound inside out).
    pub fn mesh(&self) -> &TriMesh {
        match &self.shape {
            Shape::Solid(solid) => solid.mesh(),
            Shape::Open { mesh, .. } => mesh,
        }
    }

    /// The closed solid, or why the mesh is not one.
    pub fn solid(&self) -> Result<&Solid, &str> {
        match &self.shape {
            Shape::Solid(solid) => Ok(solid),
            Shape::Open { why, .. } => Err(why),
        }
    }

    /// Builds the hierarchy `method` needs now rather than on the first query.
    pub fn prepare(&self, method: Method) {
        match method {
            Method::Obb => {
                self.obb_tree();
            }
            Method::Aabb | Method::Bfs => {
                self.balanced_tree();
            }
            Method::Brute => {}
        }
    }

    /// The OBBTree (built on first use).
    pub fn obb_tree(&self) -> &ObbTree {
        self.obb.get_or_init(|| ObbTree::build(self.mesh()))
    }

    /// The balanced AABB tree (built on first use).
    pub fn balanced_tree(&self) -> &BalancedTree {
        self.balanced
            .get_or_init(|| BalancedTree::build(self.mesh()))
    }

    /// The first intersecting triangle pair the traversal meets (no containment test).
    pub fn first_hit(
        &self,
        other: &MeshQueries,
        b_to_a: &DPose,
        method: Method,
    ) -> Result<Option<(u32, u32)>, InterferenceError> {
        let leaf = LeafTest::new(self.mesh(), other.mesh(), b_to_a);
        Ok(match method {
            Method::Obb => self
                .obb_tree()
                .first_hit(other.obb_tree(), b_to_a, |a, b| leaf.test(a, b)),
            Method::Aabb => dfs::first_hit(
                self.balanced_tree(),
                other.balanced_tree(),
                b_to_a,
                |a, b| leaf.test(a, b),
            ),
            // Level-synchronous: every level is finished before the next, so there is no early
            // exit; the first pair is the smallest of the complete set.
            Method::Bfs => self.all_pairs(other, b_to_a, Method::Bfs)?.first().copied(),
            Method::Brute => brute_force::first_hit_brute(self.mesh(), other.mesh(), b_to_a),
        })
    }

    /// Every intersecting triangle pair, sorted (no containment test).
    pub fn all_pairs(
        &self,
        other: &MeshQueries,
        b_to_a: &DPose,
        method: Method,
    ) -> Result<Vec<(u32, u32)>, InterferenceError> {
        let leaf = LeafTest::new(self.mesh(), other.mesh(), b_to_a);
        Ok(match method {
            Method::Obb => self
                .obb_tree()
                .all_pairs(other.obb_tree(), b_to_a, |a, b| leaf.test(a, b)),
            Method::Aabb => dfs::all_pairs(
                self.balanced_tree(),
                other.balanced_tree(),
                b_to_a,
                |a, b| leaf.test(a, b),
            ),
            Method::Bfs => bfs::all_pairs(
                self.balanced_tree(),
                other.balanced_tree(),
                b_to_a,
                &BfsConfig::default(),
                |a, b| leaf.test(a, b),
            )?,
            Method::Brute => brute_force::all_pairs_brute(self.mesh(), other.mesh(), b_to_a),
        })
    }

    /// The full query: triangle pairs (the first, or all), then containment when none cross.
    pub fn interference(
        &self,
        other: &MeshQueries,
        b_to_a: &DPose,
        method: Method,
        all_pairs: bool,
    ) -> Result<Interference, InterferenceError> {
        let pairs = if all_pairs {
            self.all_pairs(other, b_to_a, method)?
        } else {
            self.first_hit(other, b_to_a, method)?.into_iter().collect()
        };
        Ok(self.complete(other, b_to_a, pairs))
    }

    /// [`MeshQueries::interference`] with every crossing pair, by the OBBTree traversal resumed
    /// from `front`, the traversal front this pair of meshes left at its last query
    /// ([`crate::bvh::front`]), on up to `threads` threads for a large front. The answer is the
    /// same as the full traversal's; the cost follows the relative motion since that query.
    /// `front` must belong to this pair (in this order).
    pub fn interference_coherent(
        &self,
        other: &MeshQueries,
        b_to_a: &DPose,
        front: &mut TraversalFront,
        threads: usize,
    ) -> Interference {
        let leaf = LeafTest::new(self.mesh(), other.mesh(), b_to_a);
        let pairs =
            self.obb_tree()
                .all_pairs_coherent(other.obb_tree(), b_to_a, front, threads, |a, b| {
                    leaf.certified(a, b)
                });
        self.complete(other, b_to_a, pairs)
    }

    /// Completes a query whose intersecting pairs were found elsewhere (for example by the GPU
    /// traversal with [`MeshQueries::pair_intersects`] at the leaves): when `pairs` is empty and
    /// both meshes are closed, containment decides nesting.
    pub fn complete(
        &self,
        other: &MeshQueries,
        b_to_a: &DPose,
        pairs: Vec<(u32, u32)>,
    ) -> Interference {
        if !pairs.is_empty() {
            return Interference {
                intersecting: true,
                pairs,
                ..Default::default()
            };
        }
        match (self.solid(), other.solid()) {
            (Ok(a), Ok(b)) => {
                let contained = containment::containment(a, b, b_to_a);
                Interference {
                    intersecting: contained.is_some(),
                    contained,
                    containment_note: None,
                    pairs,
                }
            }
            (Err(why), _) | (_, Err(why)) => Interference {
                intersecting: false,
                contained: None,
                containment_note: Some(format!(
                    "containment not checked, a mesh is not a closed solid: {why}"
                )),
                pairs,
            },
        }
    }

    /// The exact leaf test every method uses: does triangle `ta` of this mesh meet triangle
    /// `tb` of `other` placed by `b_to_a`? Out-of-range indices answer `false`.
    pub fn pair_intersects(&self, other: &MeshQueries, b_to_a: &DPose, ta: u32, tb: u32) -> bool {
        if ta as usize >= self.mesh().triangle_count()
            || tb as usize >= other.mesh().triangle_count()
        {
            return false;
        }
        LeafTest::new(self.mesh(), other.mesh(), b_to_a).test(ta, tb)
    }
}

/// The exact leaf test shared by every traversal: A's triangle as `f64`, B's mapped into A's
/// frame by `b_to_a` (the one transform every method uses, so all agree bit for bit).
struct LeafTest<'a> {
    a: &'a TriMesh,
    b: &'a TriMesh,
    b_to_a: &'a DPose,
}

impl<'a> LeafTest<'a> {
    fn new(a: &'a TriMesh, b: &'a TriMesh, b_to_a: &'a DPose) -> Self {
        Self { a, b, b_to_a }
    }

    /// Triangle `ta` of A and `tb` of B in A's frame.
    #[inline]
    fn corners(&self, ta: u32, tb: u32) -> ([DVec3; 3], [DVec3; 3]) {
        let a = self.a.triangle(ta as usize).map(|v| v.as_dvec3());
        let b = self
            .b
            .triangle(tb as usize)
            .map(|v| self.b_to_a.transform_point(v));
        (a, b)
    }

    #[inline]
    fn test(&self, ta: u32, tb: u32) -> bool {
        let (a, b) = self.corners(ta, tb);
        Self::meet(a, b)
    }

    #[inline]
    fn meet(a: [DVec3; 3], b: [DVec3; 3]) -> bool {
        // Exact pre-filter on the very values the predicates see: if the two triangles' boxes
        // in A's frame are disjoint, so are the triangles. Cheap, and it rejects most of the
        // leaf pairs whose (differently oriented) tree boxes overlapped.
        let (amin, amax) = (a[0].min(a[1]).min(a[2]), a[0].max(a[1]).max(a[2]));
        let (bmin, bmax) = (b[0].min(b[1]).min(b[2]), b[0].max(b[1]).max(b[2]));
        if amax.cmplt(bmin).any() || bmax.cmplt(amin).any() {
            return false;
        }
        triangles_intersect(a, b)
    }

    /// [`LeafTest::test`] with the certificate of how long its answer holds (for the coherent
    /// traversal, [`crate::bvh::front::certify_leaf`]).
    fn certified(&self, ta: u32, tb: u32) -> LeafAnswer {
        let (a, b) = self.corners(ta, tb);
        certify_leaf(&a, &b, Self::meet(a, b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shapes;
    use glam::{DMat3, Vec3};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    const METHODS: [Method; 3] = [Method::Obb, Method::Aabb, Method::Bfs];

    fn random_pose(rng: &mut ChaCha8Rng, reach: f64) -> DPose {
        let axis = DVec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        )
        .normalize_or(DVec3::Z);
        DPose {
            rotation: DMat3::from_axis_angle(axis, rng.random_range(0.0..std::f64::consts::TAU)),
            translation: DVec3::new(
                rng.random_range(-reach..reach),
                rng.random_range(-reach..reach),
                rng.random_range(-reach..reach),
            ),
        }
    }

    fn check_all_methods(a: &MeshQueries, b: &MeshQueries, pose: &DPose) -> Vec<(u32, u32)> {
        let oracle = a.all_pairs(b, pose, Method::Brute).unwrap();
        for m in METHODS {
            let pairs = a.all_pairs(b, pose, m).unwrap();
            assert_eq!(
                pairs,
                oracle,
                "{} all-pairs differs from brute force",
                m.name()
            );
            let first = a.first_hit(b, pose, m).unwrap();
            assert_eq!(
                first.is_some(),
                !oracle.is_empty(),
                "{} first-hit",
                m.name()
            );
            if let Some(p) = first {
                assert!(
                    oracle.binary_search(&p).is_ok(),
                    "{} first-hit {p:?}",
                    m.name()
                );
            }
        }
        oracle
    }

    #[test]
    fn every_traversal_equals_the_exact_brute_force_set_on_random_poses() {
        let meshes: Vec<MeshQueries> = vec![
            MeshQueries::new(shapes::icosphere(1.0, 2).unwrap().into_mesh()),
            MeshQueries::new(shapes::torus(1.0, 0.35, 24, 12).unwrap().into_mesh()),
            MeshQueries::new(
                shapes::bumpy_sphere(1.0, 0.15, 3.0, 2, 7)
                    .unwrap()
                    .into_mesh(),
            ),
            MeshQueries::new(
                shapes::subdivided_cuboid(Vec3::new(0.8, 0.5, 0.3), 3)
                    .unwrap()
                    .into_mesh(),
            ),
        ];
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut hits = 0;
        let mut cases = 0;
        for a in &meshes {
            for b in &meshes {
                for _ in 0..4 {
                    let pose = random_pose(&mut rng, 1.6);
                    hits += usize::from(!check_all_methods(a, b, &pose).is_empty());
                    cases += 1;
                }
            }
        }
        // The poses must exercise both answers, or the equality above proves little.
        assert!(
            hits > cases / 4 && hits < cases,
            "{hits} of {cases} intersect"
        );
    }

    #[test]
    fn touching_and_coincident_cases_agree_with_brute_force() {
        let cube = MeshQueries::new(
            shapes::subdivided_cuboid(Vec3::splat(0.5), 2)
                .unwrap()
                .into_mesh(),
        );
        // Face on face, exactly: touching is intersecting.
        let face = DPose {
            rotation: DMat3::IDENTITY,
            translation: DVec3::new(1.0, 0.0, 0.0),
        };
        assert!(!check_all_methods(&cube, &cube, &face).is_empty());
        // One step of f64 further away: nothing.
        let gap = DPose {
            translation: DVec3::new(1f64.next_up(), 0.0, 0.0),
            ..face
        };
        assert!(check_all_methods(&cube, &cube, &gap).is_empty());
        // Coincident copies: every triangle touches its twin and neighbours.
        assert!(!check_all_methods(&cube, &cube, &DPose::IDENTITY).is_empty());
        // Edge on edge after a quarter turn about z (exact rotation matrix).
        let edge = DPose {
            rotation: DMat3::from_cols(DVec3::Y, -DVec3::X, DVec3::Z),
            translation: DVec3::new(1.0, 1.0, 0.0),
        };
        assert!(!check_all_methods(&cube, &cube, &edge).is_empty());
    }

    #[test]
    fn nested_solids_interfere_without_crossing_pairs() {
        let big = MeshQueries::new(shapes::icosphere(2.0, 2).unwrap().into_mesh());
        let small = MeshQueries::new(
            shapes::bumpy_sphere(0.5, 0.1, 3.0, 2, 3)
                .unwrap()
                .into_mesh(),
        );
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        for _ in 0..8 {
            let pose = random_pose(&mut rng, 0.6);
            for m in METHODS.into_iter().chain([Method::Brute]) {
                let r = big.interference(&small, &pose, m, true).unwrap();
                assert!(r.pairs.is_empty());
                assert!(r.intersecting, "{}", m.name());
                assert_eq!(r.contained, Some(Containment::BInsideA));
                let r = small.interference(&big, &pose.inverse(), m, false).unwrap();
                assert_eq!(r.contained, Some(Containment::AInsideB));
            }
        }
        // Far apart: nothing, and no containment.
        let far = DPose {
            rotation: DMat3::IDENTITY,
            translation: DVec3::new(5.0, 0.0, 0.0),
        };
        let r = big.interference(&small, &far, Method::Aabb, true).unwrap();
        assert_eq!(r, Interference::default());
    }

    /// Trees built on other threads (racing for the same `OnceLock`, or in a worker that
    /// hands the collider back) are the trees built on this one.
    #[test]
    fn trees_build_off_the_calling_thread() {
        let mesh = shapes::bumpy_sphere(1.0, 0.2, 4.0, 3, 5)
            .unwrap()
            .into_mesh();
        let here = MeshQueries::new(mesh.clone());
        let shared = MeshQueries::new(mesh.clone());
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    shared.prepare(Method::Obb);
                    shared.prepare(Method::Aabb);
                });
            }
        });
        let moved = std::thread::spawn(move || {
            let c = MeshQueries::new(mesh);
            c.prepare(Method::Obb);
            c
        })
        .join()
        .unwrap();
        for other in [&shared, &moved] {
            assert!(other.obb_tree() == here.obb_tree());
        }
        assert!(shared.balanced_tree() == here.balanced_tree());
    }

    #[test]
    fn open_meshes_are_accepted_with_a_note_instead_of_containment() {
        let closed = shapes::icosphere(1.0, 1).unwrap().into_mesh();
        let mut tris = closed.triangles().to_vec();
        tris.pop();
        let open = TriMesh::new(closed.vertices().to_vec(), tris).unwrap();
        let open = MeshQueries::new(open);
        assert!(open.solid().is_err());
        let inner = MeshQueries::new(shapes::icosphere(0.2, 1).unwrap().into_mesh());
        let r = open
            .interference(&inner, &DPose::IDENTITY, Method::Obb, true)
            .unwrap();
        assert!(!r.intersecting);
        assert!(
            r.containment_note
                .as_deref()
                .unwrap()
                .contains("not a closed solid")
        );
        // Pairs are still found on open meshes.
        let shifted = DPose {
            rotation: DMat3::IDENTITY,
            translation: DVec3::new(0.3, 0.1, 0.0),
        };
        assert!(!check_all_methods(&open, &open, &shifted).is_empty());
    }
}

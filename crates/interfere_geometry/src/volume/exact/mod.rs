//! The exact intersection volume of two closed triangle meshes and its gradient with respect to
//! B's pose, computed from the surfaces: the quantity that Wang, Faure & Pai 2012, section 2.2,
//! samples with rays (Eq. 1 for the volume, Eq. 2 for its gradient), without any resolution.
//! The cost grows with the part of the surfaces in contact: the crossing triangle pairs, the
//! intersection curve, and the triangles wholly inside the other solid (reached by flood fill).
//!
//! **Frame and perturbation.** Everything is in A's frame; B's vertices are mapped by
//! [`DPose::transform_point`] exactly as the narrow phase maps them, so the exact predicates
//! see the coordinates that [`crate::MeshQueries::all_pairs`] sees. B is taken as translated by
//! `t = (ε, ε², ε³)`, `ε → 0⁺` (simulation of simplicity, module [`predicates`]): in that
//! configuration the surfaces meet transversally, and every degeneracy of the input — coplanar
//! faces (a box resting flat on a slab), a vertex on a face, edges through edges, shared
//! vertices, identical solids — is resolved consistently. The volume is continuous in the pose,
//! so the perturbed configuration's volume, evaluated at `ε = 0`, is the input's volume; the
//! gradient is the one-sided gradient in the direction of `t` where the volume has a kink
//! (touching faces).
//!
//! **Crossings** (module `crossings`). The caller passes candidate triangle pairs that include
//! every pair of closed triangles that meet (exactly what [`crate::MeshQueries::all_pairs`]
//! returns, so the narrow phase's result is reused and nothing is traversed twice), or lets
//! [`ExactVolume::compute_traversing`] run the traversal itself. Per pair, the six
//! edge–triangle crossings are decided with the perturbed predicates; exactly 0 or 2 succeed,
//! the two ends of the oriented intersection segment. Only the combinatorics are exact: the
//! crossing points are computed in `f64`, each from fixed inputs, so an edge's two triangles and
//! the crossed triangle all get the same point.
//!
//! **Pieces by their boundary.** For a crossing triangle `T` of A, the piece `R = T ∩ B` is
//! bounded by the parts of `T`'s edges inside B and by its intersection segments, the latter
//! oriented along `n_A × n_B` (B's inside on the left). No 2D arrangement is built: the vector
//! area `S = ∫_R n dA = ½ Σ (P − O) × (Q − O)` and the moment `W = ∫_R (x − O) × n dA = Σ
//! ((P − O) + (Q − O))/3 × ½ (P − O) × (Q − O)` are sums over the boundary segments `P → Q`
//! (`O` any fixed point: both integrals depend on the boundary only, `∇ × (x − O) = 0`). Both
//! sums are additive along a line, so an edge `lo → hi` contributes `Σ_exits G(X) −
//! Σ_entries G(X) + [hi inside] G(hi)` with `G(X)` the sum over the segment `lo → X`, without
//! sorting its crossings, and with the entry/exit of each crossing known exactly. B's pieces
//! `T ∩ A` use the same segments reversed.
//!
//! **Inside status and flood fill.** The status of the vertices of crossing triangles follows
//! by parity along their edges (status flips at each crossing; an edge with one more entry than
//! exit goes from outside to inside), solved by a union-find with parity. A group of such
//! vertices that no crossing edge anchors (a small feature of B poking through a large triangle
//! of A) gets one exact perturbed point-in-solid test (module `locate`). Triangles with no
//! crossing next to an inside edge are wholly inside: a flood fill through the edge adjacency
//! ([`SurfaceTopology`], built once per solid) collects them, and their sums are taken in their
//! own mesh's frame and placed once. A shell with no crossing triangle is wholly inside or
//! outside; one point test decides (skipped when its box misses the other solid's).
//!
//! **Volume and gradient.** By the divergence theorem, with `o_T` any point of `T`'s plane,
//! `V = ⅓ Σ_T (o_T − O)·S_T` over the pieces of both meshes. Moving B's surface moves the part
//! of `∂(A ∩ B)` that lies on B: `∂V/∂x_B = Σ_{T ∈ B} S_T` (equal to `−Σ_{T ∈ A} S_T`, since
//! `∂(A ∩ B)` is closed: [`ExactResult::closure`] reports the sum, zero up to rounding) and
//! `∂V/∂θ_B` about a point `p` is `Σ_{T ∈ B} ∫ (x − p) × n dA = Σ W_T + (O − p) × S_T`. A's
//! gradient is minus B's about the same point (the volume depends on the relative pose only).
//!
//! **Contact regions.** Pieces are joined by a union-find: the two triangles of each crossing
//! pair, the triangles on either side of an inside edge, and the flood-filled triangles with the
//! pieces they touch. Each region reports its own divergence sum (the regions' volumes add up
//! to the total), its gradient, the area-weighted centroid of its pieces on B as its point, the
//! unit normal `−∂V/∂x_B / |∂V/∂x_B|` (pointing from A into B: the direction that pushes B out),
//! and optionally the pieces on B as (centroid, vector area), the weighted points a contact
//! model can split the way it splits ray endpoints.
//!
//! **Threads.** The per-pair work is split over threads (`std::thread::scope`); the pairs'
//! results are concatenated in candidate order and everything after is sequential, so the result
//! is the same bit for bit for any thread count. The fused traversal
//! ([`ExactVolume::compute_traversing`]) expands the roots' node pair breadth first into a fixed
//! number of pairs (not depending on the thread count) and shares runs of them between the
//! threads, each visiting its pairs depth first; the runs' hits are joined in order.

mod assemble;
mod crossings;
mod locate;
pub mod predicates;
mod surface;

#[cfg(test)]
mod tests;

pub use surface::SurfaceTopology;

use super::VolumeError;
use crate::bvh::BalancedTree;
use crate::bvh::obbtree::{Descent, ObbNode, ObbTree, visit};
use crate::bvh::sat_lite::SatLite;
use crate::obb::PlacedCache;
use crate::pose::DPose;
use crate::topology::Solid;
use assemble::{Placed, Scratch};
use crossings::{Inconsistent, PairHit, pair_hit};
use glam::DVec3;
use std::sync::{Arc, Mutex, OnceLock};

/// Options of [`ExactVolume::compute`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ExactOptions {
    /// Point (in A's frame) about which [`ExactResult::rotation_gradient`] is taken.
    pub centre: DVec3,
    /// Whether to list each region's pieces on B and on A ([`ContactRegion::pieces_b`],
    /// [`ContactRegion::pieces_a`]).
    pub collect_pieces: bool,
    /// Threads for the per-pair work, and for the fused traversal's node pairs
    /// ([`ExactVolume::compute_traversing`]): `0` for all available cores. A query with few
    /// candidate pairs runs its per-pair work on one thread whatever this says. The result is
    /// the same bit for bit for any value.
    pub threads: usize,
}

impl ExactOptions {
    /// The threads [`ExactOptions::threads`] asks for (`0`: all available cores).
    fn thread_count(&self) -> usize {
        match self.threads {
            0 => crate::parallel::available_threads(),
            n => n,
        }
    }
}

impl Default for ExactOptions {
    /// Rotation gradient about A's origin, pieces collected, one thread.
    fn default() -> Self {
        Self {
            centre: DVec3::ZERO,
            collect_pieces: true,
            threads: 1,
        }
    }
}

/// A piece of the intersection's boundary and its share of the contact's generalized force:
/// `vector_area` is its share of `∂V/∂x_B`, applied at `centroid` (so its moment
/// `(centroid − p) × vector_area` is its share of `∂V/∂θ_B` about `p`). The exact volume's
/// pieces are B's surface inside A (a crossing triangle's part inside A, or a whole triangle)
/// and A's inside B, in A's frame; the primitive closed forms' are their flat regions or points
/// spread over them (`crate::primitives::PlanarRegion::spread`), in the world frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SurfacePiece {
    /// Where the piece acts: its centroid.
    pub centroid: DVec3,
    /// `∫ n dA` over it (B's outward normal times its area): the piece's share of `∂V/∂x_B`.
    pub vector_area: DVec3,
}

/// One connected region of the intersection's boundary (see the module documentation).
#[derive(Clone, Debug, PartialEq)]
pub struct ContactRegion {
    /// Its divergence sum: the volume it encloses (the regions' volumes add up to
    /// [`ExactResult::volume`]; a region that is a cavity's wall counts negative).
    pub volume: f64,
    /// Area-weighted centroid of its pieces on B, in A's frame (when it has none, the origin
    /// of the sums).
    pub point: DVec3,
    /// The centroid of the volume it encloses (`∫ x dV / V`, from the divergence theorem over
    /// the same pieces: cones from a common apex), in A's frame; [`Self::point`] when the
    /// volume is zero. Its offset from [`Self::point`] along the contact surface says which way
    /// the overlap deepens (the contact split gives the deeper side the larger share).
    pub centroid: DVec3,
    /// `−∂V/∂x_B` normalised: the direction from A into B, along which pushing B reduces the
    /// overlap fastest; zero when the gradient vanishes (B nested in A).
    pub normal: DVec3,
    /// `∂V/∂x_B` of this region: `Σ` of its pieces' vector areas on B.
    pub translation_gradient: DVec3,
    /// `∂V/∂θ_B` of this region about [`Self::point`].
    pub rotation_gradient: DVec3,
    /// Total area of its pieces on B.
    pub area_b: f64,
    /// Its pieces on B (when [`ExactOptions::collect_pieces`]).
    pub pieces_b: Vec<SurfacePiece>,
    /// Its pieces on A, with A's outward vector areas (`Σ` of them is `−∂V/∂x_B` of the region
    /// but for rounding: the two sides bound the same volume), in A's frame (when
    /// [`ExactOptions::collect_pieces`]).
    pub pieces_a: Vec<SurfacePiece>,
}

/// The exact intersection volume and its gradient.
#[derive(Clone, Debug, PartialEq)]
pub struct ExactResult {
    /// The intersection volume.
    pub volume: f64,
    /// `∂V/∂(translation of B)`, in A's frame. A's is its negative.
    pub translation_gradient: DVec3,
    /// `∂V/∂(rotation of B about [`Self::centre`])`, in A's frame (the derivative of `V` for a
    /// rotation of B by a small angle `θ` about the axis `ω` through the centre is
    /// `ω · rotation_gradient`).
    pub rotation_gradient: DVec3,
    /// The centre of [`Self::rotation_gradient`] ([`ExactOptions::centre`]).
    pub centre: DVec3,
    /// The connected contact regions.
    pub regions: Vec<ContactRegion>,
    /// Candidate pairs examined.
    pub candidate_pairs: usize,
    /// Pairs whose triangles cross (in the perturbed configuration).
    pub crossing_pairs: usize,
    /// Triangles of A and of B in some crossing pair.
    pub crossing_triangles: [usize; 2],
    /// Triangles of A wholly inside B, and of B wholly inside A (flood-filled or in a contained
    /// shell).
    pub inside_triangles: [usize; 2],
    /// Shells of A inside B and of B inside A with no crossing triangle.
    pub contained_shells: [usize; 2],
    /// Exact point-in-solid tests that were needed.
    pub point_tests: usize,
    /// `Σ ∫ n dA` over all pieces of both surfaces: zero up to rounding (a self-check).
    pub closure: DVec3,
    /// Whether the input was degenerate (a perturbation term decided some sign: touching or
    /// coplanar faces, a vertex on a face, ...) and the gradients are the mean of those for the
    /// perturbations `+t` and `−t` (the two one-sided gradients at a kink of the volume).
    pub symmetrized: bool,
}

impl ExactResult {
    /// The generalized force on B that reduces the volume: `−∂V/∂x_B`.
    pub fn force(&self) -> DVec3 {
        -self.translation_gradient
    }

    /// Its torque about [`Self::centre`]: `−∂V/∂θ_B`.
    pub fn torque(&self) -> DVec3 {
        -self.rotation_gradient
    }
}

/// The traversal [`ExactVolume::compute_traversing`] runs to find the candidate pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Traversal {
    /// OBBTrees (slow to build, fewer node tests).
    Obb,
    /// Balanced AABB trees (fast to build).
    Aabb,
}

/// Two solids prepared for repeated exact volume queries under changing poses.
pub struct ExactVolume<'a> {
    a: &'a Solid,
    b: &'a Solid,
    topo: [Arc<SurfaceTopology>; 2],
    bounds: [[DVec3; 2]; 2],
    scratch: Mutex<Option<Scratch>>,
    obb: [OnceLock<ObbTree>; 2],
    balanced: [OnceLock<BalancedTree>; 2],
}

impl std::fmt::Debug for ExactVolume<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExactVolume")
            .field(
                "triangles",
                &[self.a.triangle_count(), self.b.triangle_count()],
            )
            .finish()
    }
}

/// The solid's box, as the solid keeps it (the extremes of its `f32` vertices, exact in `f64`):
/// the dynamics make an `ExactVolume` for every pair and query, and folding over every vertex
/// here was about 1 % of the nut demo's step (88,000 vertices a query).
fn bounds_of(s: &Solid) -> [DVec3; 2] {
    let (lo, hi) = s.bounds();
    [lo, hi]
}

/// Fewer candidate pairs than this per thread are not worth a thread.
const PAIRS_PER_THREAD: usize = 256;

impl<'a> ExactVolume<'a> {
    /// Builds both solids' [`SurfaceTopology`].
    pub fn new(a: &'a Solid, b: &'a Solid) -> Self {
        let ta = Arc::new(SurfaceTopology::new(a));
        let tb = if std::ptr::eq(a, b) {
            ta.clone()
        } else {
            Arc::new(SurfaceTopology::new(b))
        };
        Self::assemble(a, ta, b, tb)
    }

    /// Uses topologies built earlier (for example one per body, shared by all its pairs).
    pub fn with_topology(
        a: &'a Solid,
        topo_a: Arc<SurfaceTopology>,
        b: &'a Solid,
        topo_b: Arc<SurfaceTopology>,
    ) -> Result<Self, VolumeError> {
        for (s, t) in [(a, &topo_a), (b, &topo_b)] {
            if !t.fits(s) {
                return Err(VolumeError::TreeMismatch {
                    tree: t.triangle_count(),
                    mesh: s.triangle_count(),
                });
            }
        }
        Ok(Self::assemble(a, topo_a, b, topo_b))
    }

    fn assemble(
        a: &'a Solid,
        ta: Arc<SurfaceTopology>,
        b: &'a Solid,
        tb: Arc<SurfaceTopology>,
    ) -> Self {
        Self {
            a,
            b,
            topo: [ta, tb],
            bounds: [bounds_of(a), bounds_of(b)],
            scratch: Mutex::new(None),
            obb: [OnceLock::new(), OnceLock::new()],
            balanced: [OnceLock::new(), OnceLock::new()],
        }
    }

    /// The topologies of A and B.
    pub fn topology(&self) -> [&Arc<SurfaceTopology>; 2] {
        [&self.topo[0], &self.topo[1]]
    }

    /// Triangles, edges and vertices of A and of B (what a query's scratch is sized to).
    fn sizes(&self) -> [(usize, usize, usize); 2] {
        let size = |t: &SurfaceTopology, s: &Solid| {
            (t.triangle_count(), t.edge_count(), s.vertices().len())
        };
        [size(&self.topo[0], self.a), size(&self.topo[1], self.b)]
    }

    fn placed<'s>(&'s self, b_to_a: &'s DPose, dir: i8) -> Placed<'s> {
        Placed {
            solids: [self.a, self.b],
            topo: [&self.topo[0], &self.topo[1]],
            b_to_a,
            bounds: self.bounds,
            dir,
        }
    }

    fn check(&self, b_to_a: &DPose, options: &ExactOptions) -> Result<(), VolumeError> {
        if !b_to_a.is_finite() || !options.centre.is_finite() {
            return Err(VolumeError::NonFinitePose);
        }
        Ok(())
    }

    /// The pair's triangles: `(index, vertex indices, corners in A's frame)` for A and B.
    #[inline]
    #[allow(clippy::type_complexity)]
    fn pair_input(
        &self,
        b_to_a: &DPose,
        ta: u32,
        tb: u32,
    ) -> ((u32, [u32; 3], [DVec3; 3]), (u32, [u32; 3], [DVec3; 3])) {
        let ia = self.a.triangles()[ta as usize];
        let ib = self.b.triangles()[tb as usize];
        let va = self.a.vertices();
        let vb = self.b.vertices();
        (
            (ta, ia, ia.map(|i| va[i as usize].as_dvec3())),
            (tb, ib, ib.map(|i| b_to_a.transform_point(vb[i as usize]))),
        )
    }

    /// The exact volume of A and B (placed in A's frame by `b_to_a`) and its gradient, from
    /// `candidate_pairs` `(triangle of A, triangle of B)`: a superset of the pairs of closed
    /// triangles that share a point, such as [`crate::MeshQueries::all_pairs`] returns for the same
    /// pose. Pairs may come in any order; repeated pairs count once.
    ///
    /// Fails on a non-finite pose or centre, a pair out of range, and candidate pairs that miss
    /// a crossing pair the found crossings imply ([`VolumeError::IncompleteCandidates`]).
    pub fn compute(
        &self,
        b_to_a: &DPose,
        candidate_pairs: &[(u32, u32)],
        options: &ExactOptions,
    ) -> Result<ExactResult, VolumeError> {
        self.check(b_to_a, options)?;
        let (na, nb) = (self.a.triangle_count(), self.b.triangle_count());
        if let Some((i, &(ta, tb))) = candidate_pairs
            .iter()
            .enumerate()
            .find(|(_, (ta, tb))| *ta as usize >= na || *tb as usize >= nb)
        {
            return Err(VolumeError::PairOutOfRange {
                index: i,
                pair: (ta, tb),
                triangles: (na, nb),
            });
        }
        let sorted;
        let pairs = if candidate_pairs.windows(2).all(|w| w[0] < w[1]) {
            candidate_pairs
        } else {
            let mut v = candidate_pairs.to_vec();
            v.sort_unstable();
            v.dedup();
            sorted = v;
            &sorted[..]
        };
        let threads = options
            .thread_count()
            .min(pairs.len() / PAIRS_PER_THREAD)
            .max(1);
        let run = |chunk: &[(u32, u32)], dir: i8| -> Result<(Vec<PairHit>, bool), Inconsistent> {
            let mut out = Vec::new();
            let mut symbolic = false;
            for &(ta, tb) in chunk {
                let (x, y) = self.pair_input(b_to_a, ta, tb);
                if let Some(h) = pair_hit(x, y, dir, &mut symbolic)? {
                    out.push(h);
                }
            }
            Ok((out, symbolic))
        };
        let hits_for = |dir: i8| -> Result<(Vec<PairHit>, bool), VolumeError> {
            if threads == 1 {
                return run(pairs, dir).map_err(inconsistent);
            }
            let chunk = pairs.len().div_ceil(threads);
            let chunks: Vec<&[(u32, u32)]> = pairs.chunks(chunk).collect();
            let parts = crate::parallel::map_chunks(threads, chunks.len(), |k| {
                Some(vec![run(chunks[k], dir)])
            });
            let mut hits = Vec::new();
            let mut symbolic = false;
            for p in parts {
                let (h, s) = p.map_err(inconsistent)?;
                hits.extend(h);
                symbolic |= s;
            }
            Ok((hits, symbolic))
        };
        let (hits, mut symbolic) = hits_for(1)?;
        let first = self.finish(b_to_a, &hits, pairs.len(), options, 1, &mut symbolic)?;
        if !symbolic {
            return Ok(first);
        }
        let (hits, mut s2) = hits_for(-1)?;
        let second = self.finish(b_to_a, &hits, pairs.len(), options, -1, &mut s2)?;
        Ok(symmetrize(first, second))
    }

    /// Like [`Self::compute`], finding the candidate pairs itself with a traversal of both
    /// meshes' trees (built on first use) whose leaf pairs go straight to the per-pair crossing
    /// test (no separate narrow phase, no pair list).
    pub fn compute_traversing(
        &self,
        b_to_a: &DPose,
        traversal: Traversal,
        options: &ExactOptions,
    ) -> Result<ExactResult, VolumeError> {
        self.check(b_to_a, options)?;
        let (first, symbolic) = self.traversing(b_to_a, traversal, options, 1)?;
        if !symbolic {
            return Ok(first);
        }
        let (second, _) = self.traversing(b_to_a, traversal, options, -1)?;
        Ok(symmetrize(first, second))
    }

    /// One traversal with the perturbation `dir · t`.
    fn traversing(
        &self,
        b_to_a: &DPose,
        traversal: Traversal,
        options: &ExactOptions,
        dir: i8,
    ) -> Result<(ExactResult, bool), VolumeError> {
        let threads = options.thread_count();
        let leaf = LeafTest {
            ev: self,
            b_to_a,
            dir,
        };
        let found = match traversal {
            Traversal::Obb => {
                let [ta, tb] = self.obb_trees();
                split_traversal(
                    threads,
                    &ObbStep {
                        a: ta.nodes(),
                        b: tb.nodes(),
                        b_to_a,
                        leaf,
                    },
                )
            }
            Traversal::Aabb => {
                let trees = self.balanced_trees();
                split_traversal(
                    threads,
                    &BalancedStep {
                        trees,
                        leaves: trees.map(|t| t.depth() as u32),
                        sat: SatLite::new(b_to_a),
                        leaf,
                    },
                )
            }
        };
        let Found {
            mut hits,
            candidates,
            mut symbolic,
            failure,
        } = found;
        if let Some(e) = failure {
            return Err(inconsistent(e));
        }
        // The traversal's order depends on the trees, not the threads; sort for a canonical
        // order anyway (the result must not depend on how pairs were found).
        hits.sort_unstable_by_key(|h| (h.ta, h.tb));
        let r = self.finish(b_to_a, &hits, candidates, options, dir, &mut symbolic)?;
        Ok((r, symbolic))
    }

    /// Both OBBTrees (built on first use; one tree when A and B are the same solid).
    fn obb_trees(&self) -> [&ObbTree; 2] {
        let ta = self.obb[0].get_or_init(|| ObbTree::build(self.a));
        if std::ptr::eq(self.a, self.b) {
            return [ta, ta];
        }
        [ta, self.obb[1].get_or_init(|| ObbTree::build(self.b))]
    }

    /// Both balanced AABB trees (built on first use; one tree when A and B are the same solid).
    fn balanced_trees(&self) -> [&BalancedTree; 2] {
        let ta = self.balanced[0].get_or_init(|| BalancedTree::build(self.a));
        if std::ptr::eq(self.a, self.b) {
            return [ta, ta];
        }
        [
            ta,
            self.balanced[1].get_or_init(|| BalancedTree::build(self.b)),
        ]
    }

    /// Builds the tree a traversal needs now rather than on the first query.
    pub fn prepare(&self, traversal: Traversal) {
        match traversal {
            Traversal::Obb => {
                self.obb_trees();
            }
            Traversal::Aabb => {
                self.balanced_trees();
            }
        }
    }

    fn finish(
        &self,
        b_to_a: &DPose,
        hits: &[PairHit],
        candidates: usize,
        options: &ExactOptions,
        dir: i8,
        symbolic: &mut bool,
    ) -> Result<ExactResult, VolumeError> {
        let mut scratch = self
            .scratch
            .try_lock()
            .ok()
            .and_then(|mut s| s.take())
            .or_else(|| spare_scratch(self.sizes()))
            .unwrap_or_default();
        let result = assemble::assemble(
            &self.placed(b_to_a, dir),
            hits,
            candidates,
            options,
            &mut scratch,
            symbolic,
        );
        if let Ok(mut slot) = self.scratch.try_lock() {
            *slot = Some(scratch);
        }
        result
    }
}

/// Scratch left by dropped [`ExactVolume`]s, for the next ones (at most [`SPARE_SCRATCH`]). The
/// dynamics make an `ExactVolume` for each pair and step; a fresh scratch allocated its slots
/// (megabytes for the nut demo's bolt) at every query, and touching their new pages was a tenth
/// of that demo's run.
static SPARES: Mutex<Vec<Scratch>> = Mutex::new(Vec::new());

/// Scratch kept for later [`ExactVolume`]s.
const SPARE_SCRATCH: usize = 4;

/// A spare scratch, one sized for meshes of `sizes` if there is one.
fn spare_scratch(sizes: [(usize, usize, usize); 2]) -> Option<Scratch> {
    let mut spares = SPARES.lock().ok()?;
    let k = spares
        .iter()
        .position(|s| s.fits(sizes))
        .or(spares.len().checked_sub(1))?;
    Some(spares.swap_remove(k))
}

impl Drop for ExactVolume<'_> {
    fn drop(&mut self) {
        let scratch = self.scratch.get_mut().ok().and_then(Option::take);
        if let (Some(scratch), Ok(mut spares)) = (scratch, SPARES.lock()) {
            if spares.len() >= SPARE_SCRATCH {
                spares.remove(0);
            }
            spares.push(scratch);
        }
    }
}

/// The result for `+t` with the gradients averaged with those for `−t` (the volume is the same
/// for both, up to rounding). Regions are averaged pairwise when both perturbations give the same
/// number of regions (the usual case: aligned faces); when only one gives regions (faces that
/// touch without overlap) its regions are kept with half their gradients; otherwise (both give
/// regions, in different numbers: not seen in the tests) the regions are those of `+t`.
fn symmetrize(mut first: ExactResult, mut second: ExactResult) -> ExactResult {
    first.translation_gradient = 0.5 * (first.translation_gradient + second.translation_gradient);
    first.rotation_gradient = 0.5 * (first.rotation_gradient + second.rotation_gradient);
    if first.regions.is_empty() != second.regions.is_empty() {
        if first.regions.is_empty() {
            first.regions = std::mem::take(&mut second.regions);
        }
        for r in &mut first.regions {
            r.translation_gradient *= 0.5;
            r.rotation_gradient *= 0.5;
        }
    } else if first.regions.len() == second.regions.len() {
        for (r, q) in first.regions.iter_mut().zip(&second.regions) {
            // q's rotation gradient about r's point.
            let q_rot = q.rotation_gradient + (q.point - r.point).cross(q.translation_gradient);
            r.translation_gradient = 0.5 * (r.translation_gradient + q.translation_gradient);
            r.rotation_gradient = 0.5 * (r.rotation_gradient + q_rot);
            r.normal = (-r.translation_gradient).normalize_or_zero();
        }
    }
    first.symmetrized = true;
    first
}

fn inconsistent(e: Inconsistent) -> VolumeError {
    VolumeError::Inconsistent(format!(
        "triangle {} of A and {} of B have {} crossings",
        e.ta, e.tb, e.crossings
    ))
}

/// What the leaf pairs of (part of) a fused traversal found.
#[derive(Default)]
struct Found {
    hits: Vec<PairHit>,
    candidates: usize,
    symbolic: bool,
    /// The first inconsistency met, in traversal order.
    failure: Option<Inconsistent>,
}

/// Node pairs a fused traversal is split into before its parts run on threads: the root's
/// pairs breadth first, until at least this many are left to visit. The split does not depend
/// on the thread count, so neither does the order in which leaves are met.
const SPLIT_PAIRS: usize = 64;

/// A leaf pair's test in a fused traversal: the exact box pre-filter, then the crossing test
/// ([`pair_hit`]) with the perturbation `dir · t`.
#[derive(Clone, Copy)]
struct LeafTest<'a, 'b> {
    ev: &'a ExactVolume<'b>,
    b_to_a: &'a DPose,
    dir: i8,
}

impl LeafTest<'_, '_> {
    #[inline(always)]
    fn test(&self, found: &mut Found, ta: u32, tb: u32) {
        found.candidates += 1;
        let (x, y) = self.ev.pair_input(self.b_to_a, ta, tb);
        // Exact box pre-filter on the very coordinates the predicates see.
        let (amin, amax) = (
            x.2[0].min(x.2[1]).min(x.2[2]),
            x.2[0].max(x.2[1]).max(x.2[2]),
        );
        let (bmin, bmax) = (
            y.2[0].min(y.2[1]).min(y.2[2]),
            y.2[0].max(y.2[1]).max(y.2[2]),
        );
        if amax.cmplt(bmin).any() || bmax.cmplt(amin).any() {
            return;
        }
        match pair_hit(x, y, self.dir, &mut found.symbolic) {
            Ok(Some(h)) => found.hits.push(h),
            Ok(None) => {}
            Err(e) => {
                found.failure.get_or_insert(e);
            }
        }
    }
}

/// One step of a fused traversal of two trees whose node pairs are `Pair`: tests a pair and
/// pushes the pairs below it onto the stack (the first to visit last), or tests its triangle
/// pair into a [`Found`].
trait TraversalStep: Sync {
    type Pair: Copy + Send + Sync;
    /// A thread's scratch (the OBB traversal's placed boxes).
    type Scratch;
    fn root(&self) -> Self::Pair;
    fn scratch(&self) -> Self::Scratch;
    fn step(
        &self,
        scratch: &mut Self::Scratch,
        pair: Self::Pair,
        next: &mut Vec<Self::Pair>,
        found: &mut Found,
    );
}

/// The OBBTree traversal's step (`obbtree::visit`: the 15-axis test, B's boxes placed once
/// per node).
struct ObbStep<'a, 'b> {
    a: &'a [ObbNode],
    b: &'a [ObbNode],
    b_to_a: &'a DPose,
    leaf: LeafTest<'a, 'b>,
}

impl TraversalStep for ObbStep<'_, '_> {
    type Pair = (u32, u32);
    type Scratch = PlacedCache;

    fn root(&self) -> (u32, u32) {
        (0, 0)
    }

    fn scratch(&self) -> PlacedCache {
        PlacedCache::new(&self.b[0].obb, self.b_to_a)
    }

    #[inline(always)]
    fn step(
        &self,
        placed: &mut PlacedCache,
        pair: (u32, u32),
        next: &mut Vec<(u32, u32)>,
        found: &mut Found,
    ) {
        match visit(self.a, self.b, placed, self.b_to_a, pair) {
            None => {}
            Some(Descent::Leaves(ta, tb)) => self.leaf.test(found, ta, tb),
            Some(Descent::Split([first, second])) => next.extend([second, first]),
        }
    }
}

/// The balanced-tree traversal's step (SAT-lite node tests): node pairs are
/// `[al, ai, bl, bi]`, level and index in each tree (the leaves at levels `leaves`); the larger
/// box's children are visited.
struct BalancedStep<'a, 'b> {
    trees: [&'a BalancedTree; 2],
    leaves: [u32; 2],
    sat: SatLite,
    leaf: LeafTest<'a, 'b>,
}

impl TraversalStep for BalancedStep<'_, '_> {
    type Pair = [u32; 4];
    type Scratch = ();

    fn root(&self) -> [u32; 4] {
        [0; 4]
    }

    fn scratch(&self) {}

    #[inline(always)]
    fn step(
        &self,
        _: &mut (),
        [al, ai, bl, bi]: [u32; 4],
        next: &mut Vec<[u32; 4]>,
        found: &mut Found,
    ) {
        let [a, b] = self.trees;
        let [a_leaf, b_leaf] = self.leaves;
        let na = &a.level(al as usize)[ai as usize];
        let nb = &b.level(bl as usize)[bi as usize];
        if !self.sat.overlaps(na, nb) {
            return;
        }
        let descend_a = match (al == a_leaf, bl == b_leaf) {
            (true, true) => {
                self.leaf.test(found, na.index, nb.index);
                return;
            }
            (true, false) => false,
            (false, true) => true,
            (false, false) => {
                na.aabb().size().length_squared() >= nb.aabb().size().length_squared()
            }
        };
        if descend_a {
            for c in a.children(al as usize, ai as usize).rev() {
                next.push([al + 1, c as u32, bl, bi]);
            }
        } else {
            for c in b.children(bl as usize, bi as usize).rev() {
                next.push([al, ai, bl + 1, c as u32]);
            }
        }
    }
}

/// Visits every node pair below `seeds` depth first, in order.
#[inline(always)]
fn depth_first<S: TraversalStep>(
    traversal: &S,
    seeds: &[S::Pair],
    scratch: &mut S::Scratch,
    found: &mut Found,
) {
    let mut stack = Vec::with_capacity(64);
    for &seed in seeds {
        stack.push(seed);
        while let Some(pair) = stack.pop() {
            traversal.step(scratch, pair, &mut stack, found);
        }
    }
}

/// Runs a fused traversal on `threads`: the root's pairs are expanded breadth first into
/// [`SPLIT_PAIRS`] pairs, which are visited depth first in order, in runs of consecutive pairs
/// shared by the threads (`crate::parallel::map_chunks`); the runs' [`Found`] are joined in
/// order, so the result is the same for any thread count (the hits are sorted afterwards
/// anyway).
fn split_traversal<S: TraversalStep>(threads: usize, traversal: &S) -> Found {
    let mut found = Found::default();
    let mut scratch = traversal.scratch();
    // Breadth first from the root until the pairs left are enough to share.
    let mut queue = std::collections::VecDeque::from([traversal.root()]);
    let mut below = Vec::new();
    while queue.len() < SPLIT_PAIRS {
        let Some(pair) = queue.pop_front() else { break };
        traversal.step(&mut scratch, pair, &mut below, &mut found);
        // `below` is in stack order (the first to visit last).
        queue.extend(below.drain(..).rev());
    }
    let seeds: Vec<S::Pair> = queue.into();
    let threads = threads.clamp(1, seeds.len().max(1));
    if threads == 1 {
        depth_first(traversal, &seeds, &mut scratch, &mut found);
        return found;
    }
    // A few runs of consecutive seeds per thread, taken as threads come free.
    let run = seeds.len().div_ceil(4 * threads);
    let runs: Vec<&[S::Pair]> = seeds.chunks(run).collect();
    let parts = crate::parallel::map_chunks(threads, runs.len(), |k| {
        let mut part = Found::default();
        depth_first(traversal, runs[k], &mut traversal.scratch(), &mut part);
        Some(vec![part])
    });
    for part in parts {
        found.hits.extend(part.hits);
        found.candidates += part.candidates;
        found.symbolic |= part.symbolic;
        if found.failure.is_none() {
            found.failure = part.failure;
        }
    }
    found
}

/// The exact intersection volume of `a` and `b` (placed in A's frame by `b_to_a`) and its
/// gradient, in one call: builds both topologies and balanced AABB trees and runs the traversal
/// itself (use [`ExactVolume`] to reuse them, and [`ExactVolume::compute`] to reuse a narrow
/// phase's pairs).
pub fn exact_volume(a: &Solid, b: &Solid, b_to_a: &DPose) -> Result<ExactResult, VolumeError> {
    ExactVolume::new(a, b).compute_traversing(b_to_a, Traversal::Aabb, &ExactOptions::default())
}

//! The CPU narrow phase: which candidate pairs interfere, exactly.
//!
//! - Mesh–mesh: the OBBTree traversal (Gottschalk–Lin–Manocha, Lin–Manocha 1996) with exact
//!   triangle tests (Shewchuk's predicates) at the leaves, stopping at the first crossing pair or
//!   finding all of them, then exact point-in-solid for nesting when none crosses (CInDeR,
//!   Knott & Pai 2003, Theorem 1: solids interfere iff an edge of one meets the other's surface or
//!   one contains the other). See `interfere_geometry::interference`.
//! - Mesh–half-space: some vertex strictly below the plane.
//! - Pairs with a primitive or a compound: closed-form and exact primitive tests
//!   ([`crate::contact::primitive_pairs`]).
//!
//! Pairs are independent and run on every core ([`crate::parallel`]); the result is in candidate
//! order whatever the thread count.
//!
//! Temporal coherence: when every crossing pair is wanted (the exact volume), each mesh–mesh
//! candidate keeps its OBBTree traversal front from one step to the next
//! (`interfere_geometry::bvh::front`: separated node pairs are kept untested while the pair's
//! accumulated motion stays below their gap), so a resting pair costs a small part of its first
//! traversal and a moving one what its motion changed. The answer is exactly the full
//! traversal's. A pair's front is dropped when it stops being a candidate or a body's mesh
//! changes. The speculative look ahead (`crate::contact::speculative`) takes a moving pair's
//! front, brings it to where the pair is predicted at the end of the step and gives it back, so
//! that the next step resumes from there: only the motion the solver changed is left to catch
//! up, not the whole step's.

pub use crate::collision::margin::plane_margin;
use crate::collision::shape::{HalfSpace, MeshShape, Shape};
use crate::contact::BodyId;
use crate::contact::stage::{InterferingPair, NarrowPhase, StageInput};
use crate::parallel::{par_map_mut_with, par_map_with};
use interfere_geometry::key_hash::KeyMap;
use interfere_geometry::{Interference, Method, TraversalFront};

/// The exact CPU narrow phase (see the module documentation), with each mesh–mesh candidate's
/// traversal front kept between steps.
#[derive(Clone, Debug, Default)]
pub struct CpuNarrowPhase {
    fronts: KeyMap<(BodyId, BodyId), PairFront>,
}

/// A mesh–mesh pair's traversal front, and the ids of the two meshes it belongs to.
#[derive(Clone, Debug)]
struct PairFront {
    meshes: (u64, u64),
    front: TraversalFront,
}

impl CpuNarrowPhase {
    /// The number of pairs with a kept traversal front.
    pub fn kept_fronts(&self) -> usize {
        self.fronts.len()
    }
}

impl NarrowPhase for CpuNarrowPhase {
    fn name(&self) -> &'static str {
        "cpu-obb"
    }

    fn interfering(&mut self, input: &StageInput<'_>, out: &mut Vec<InterferingPair>) {
        let threads = input.settings.thread_count();
        if !input.needs_all_triangle_pairs() {
            // The first crossing pair is wanted: the traversal stops there, no front to keep.
            self.fronts.clear();
            out.extend(
                par_map_with(threads, input.candidates, |&(a, b)| {
                    exact_pair(input, a, b, false)
                })
                .into_iter()
                .flatten(),
            );
            return;
        }
        // Each candidate takes its front out of the map; fronts of pairs that are no longer
        // candidates are dropped. Heavy pairs (by their last query's work) run one after the
        // other with every thread each, the others side by side on one thread each.
        let mut light = Vec::new();
        let mut heavy = Vec::new();
        for (k, &pair) in input.candidates.iter().enumerate() {
            let front = self.fronts.remove(&pair);
            let work = front.as_ref().map_or(0, |f| {
                let s = f.front.stats();
                s.box_tests + s.leaf_tests
            });
            if work > HEAVY {
                heavy.push((k, pair, front));
            } else {
                light.push((k, pair, front));
            }
        }
        self.fronts.clear();
        let mut found: Vec<Option<InterferingPair>> = vec![None; input.candidates.len()];
        let light_found = par_map_mut_with(threads, &mut light, |(_, (a, b), front)| {
            coherent_pair(input, *a, *b, front, 1)
        });
        for ((k, _, _), f) in light.iter().zip(light_found) {
            found[*k] = f;
        }
        for (k, (a, b), front) in &mut heavy {
            found[*k] = coherent_pair(input, *a, *b, front, threads);
        }
        self.fronts.extend(
            light
                .into_iter()
                .chain(heavy)
                .filter_map(|(_, pair, f)| Some((pair, f?))),
        );
        out.extend(found.into_iter().flatten());
    }

    fn take_front(&mut self, a: BodyId, b: BodyId, meshes: (u64, u64)) -> Option<TraversalFront> {
        match self.fronts.remove(&(a, b)) {
            Some(f) if f.meshes == meshes => Some(f.front),
            _ => None,
        }
    }

    fn keep_front(&mut self, a: BodyId, b: BodyId, meshes: (u64, u64), front: TraversalFront) {
        self.fronts.insert((a, b), PairFront { meshes, front });
    }
}

/// A pair whose last query ran more box and triangle tests than this is resumed on every
/// thread (a nut on its bolt: about 400,000); lighter pairs share the threads.
const HEAVY: usize = 50_000;

/// [`exact_pair`] with every crossing pair, a mesh–mesh pair resuming its traversal `front`
/// (made, or replaced when its meshes changed; left `None` for other pairs) on up to `threads`
/// threads.
fn coherent_pair(
    input: &StageInput<'_>,
    a: BodyId,
    b: BodyId,
    front: &mut Option<PairFront>,
    threads: usize,
) -> Option<InterferingPair> {
    let Some((ma, mb, _, b_to_a)) = input.mesh_pair(a, b) else {
        *front = None;
        return exact_pair(input, a, b, true);
    };
    let meshes = (ma.id(), mb.id());
    let kept = front.get_or_insert_with(|| PairFront {
        meshes,
        front: TraversalFront::new(),
    });
    if kept.meshes != meshes {
        kept.meshes = meshes;
        kept.front.clear();
    }
    let r = ma
        .queries()
        .interference_coherent(mb.queries(), &b_to_a, &mut kept.front, threads);
    meshes_interfere(a, b, r)
}

/// [`exact_pair`] with every crossing pair at the poses of `input`, for a mesh–mesh pair
/// resuming the traversal `front` it had at nearby poses and leaving it at these
/// (`interfere_geometry::bvh::front`: the same answer as from the roots), on up to `threads`
/// threads. Other pairs: [`exact_pair`].
pub(crate) fn exact_pair_from_front(
    input: &StageInput<'_>,
    a: BodyId,
    b: BodyId,
    front: &mut TraversalFront,
    threads: usize,
) -> Option<InterferingPair> {
    let Some((ma, mb, _, b_to_a)) = input.mesh_pair(a, b) else {
        return exact_pair(input, a, b, true);
    };
    let r = ma
        .queries()
        .interference_coherent(mb.queries(), &b_to_a, front, threads);
    meshes_interfere(a, b, r)
}

/// The exact test of one pair at the bodies' current poses (`all`: every crossing triangle pair,
/// else the first).
pub fn exact_pair(
    input: &StageInput<'_>,
    a: BodyId,
    b: BodyId,
    all: bool,
) -> Option<InterferingPair> {
    let near = |inside: bool| {
        Some(InterferingPair {
            a,
            b,
            triangle_pairs: Vec::new(),
            contained: false,
            speculative: !inside,
        })
    };
    match (input.shape(a)?, input.shape(b)?) {
        (sa, sb) if sa.is_primitive() || sb.is_primitive() => {
            crate::contact::primitive_pairs::primitive_pair(input, a, b)
        }
        (Shape::Mesh(_), Shape::Mesh(_)) => {
            let (ma, mb, _, b_to_a) = input.mesh_pair(a, b)?;
            let r = ma
                .queries()
                .interference(mb.queries(), &b_to_a, Method::Obb, all)
                .ok()?;
            meshes_interfere(a, b, r)
        }
        (Shape::HalfSpace(h), Shape::Mesh(m)) => near(below_plane(input, a, h, b, m)?),
        (Shape::Mesh(m), Shape::HalfSpace(h)) => near(below_plane(input, b, h, a, m)?),
        _ => None,
    }
}

/// Mesh–mesh pair `(a, b)` as the narrow phase reports it, when query `r` found it interfering.
fn meshes_interfere(a: BodyId, b: BodyId, r: Interference) -> Option<InterferingPair> {
    r.intersecting.then(|| InterferingPair {
        a,
        b,
        triangle_pairs: r.pairs,
        contained: r.contained.is_some(),
        speculative: false,
    })
}

/// Whether mesh body `m` reaches within its margin of half-space body `h` (`None`: not at all),
/// and whether a vertex lies strictly below the plane (they interfere).
fn below_plane(
    input: &StageInput<'_>,
    h: BodyId,
    half: &HalfSpace,
    m: BodyId,
    mesh: &MeshShape,
) -> Option<bool> {
    let (hb, mb) = (input.bodies.get(h)?, input.bodies.get(m)?);
    let (n, offset) = half.world(&hb.mesh_pose());
    let pose = mb.mesh_pose();
    let margin = plane_margin(mb, mesh, input.dt);
    let lowest = mesh
        .solid()
        .vertices()
        .iter()
        .map(|v| n.dot(pose.transform_point(*v)))
        .fold(f64::INFINITY, f64::min);
    (lowest < offset + margin).then_some(lowest < offset)
}

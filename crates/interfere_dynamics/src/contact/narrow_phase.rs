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

pub use crate::collision::margin::plane_margin;
use crate::collision::shape::{HalfSpace, MeshShape, Shape};
use crate::contact::BodyId;
use crate::contact::stage::{InterferingPair, NarrowPhase, StageInput};
use crate::parallel::par_map_with;
use interfere_geometry::Method;

/// The exact CPU narrow phase (see the module documentation).
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuNarrowPhase;

impl NarrowPhase for CpuNarrowPhase {
    fn name(&self) -> &'static str {
        "cpu-obb"
    }

    fn interfering(&mut self, input: &StageInput<'_>, out: &mut Vec<InterferingPair>) {
        let all = input.needs_all_triangle_pairs();
        out.extend(
            par_map_with(
                input.settings.thread_count(),
                input.candidates,
                |&(a, b)| exact_pair(input, a, b, all),
            )
            .into_iter()
            .flatten(),
        );
    }
}

/// The exact test of one pair at the bodies' current poses (`all`: every crossing triangle pair,
/// else the first).
pub fn exact_pair(
    input: &StageInput<'_>,
    a: BodyId,
    b: BodyId,
    all: bool,
) -> Option<InterferingPair> {
    let found = |triangle_pairs, contained| {
        Some(InterferingPair {
            a,
            b,
            triangle_pairs,
            contained,
            speculative: false,
        })
    };
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
            if r.intersecting {
                found(r.pairs, r.contained.is_some())
            } else {
                None
            }
        }
        (Shape::HalfSpace(h), Shape::Mesh(m)) => near(below_plane(input, a, h, b, m)?),
        (Shape::Mesh(m), Shape::HalfSpace(h)) => near(below_plane(input, b, h, a, m)?),
        _ => None,
    }
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

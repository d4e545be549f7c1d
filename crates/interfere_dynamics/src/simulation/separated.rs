//! Where a contact came apart: the parts of a pair's earlier contacts that have separated since,
//! kept as speculative rows while the pair is still reported (the memory of a contact manifold,
//! for volume contacts).
//!
//! The exact volume sees only where the surfaces cross now. A body resting on supports spread
//! apart (a torus on the ring of vertices at the bottom of its tube, a box on two edges) is found
//! touching at one of them as soon as it tilts by less than their spread; with no rows at the
//! others it tips toward them, unchecked, for the rest of the step, lands there inside the other
//! solid, and is pushed out by the projection, which lifts its centre: each step the mirror
//! image, a rocking fed by the projection that never ends (a torus lying flat on a slab, issue
//! 28). A part of an earlier contact that has come apart stays a speculative row: its volume is
//! advanced from the poses it was measured at by the first-order term of its gradient
//! (`crate::contact::latent`; negative once apart), so the solver lets the gap close and no
//! further. It is kept while
//! - the pair is still reported (otherwise `Simulation::persist` keeps the pair's last contact
//!   whole, for a bounded number of steps);
//! - its gap is within the pair's speculative margin (`crate::collision::margin`);
//! - the two material points it joined have not slid apart along the contact by more than
//!   [`SLIP`] of the thinner body's thinnest extent: a box sliding off a table's edge loses
//!   the rows of the face it left instead of hovering on them.
//!
//! Of two kept parts with the same feature key, the newer wins. Contacts measured by rays
//! (uniform and adaptive sampling) keep only the last step's parts, and only where the contact's
//! area shrank: their volumes carry the sampling error, which a part kept for many steps would
//! carry with it (a pile of sampled boxes settled later when they were kept).

use crate::body::Body;
use crate::contact::latent::advanced_parts;
use crate::contact::speculative::SEPARATED_FEATURE;
use crate::contact::stage::PairContact;
use crate::contact::{BodyId, VolumeContact};

/// How far the two material points of a separated part may slide apart along its contact, as
/// a fraction of the thinner body's thinnest extent, before the part is dropped.
const SLIP: f64 = 0.01;

/// A sampled pair keeps the last step's separated parts only where its contact area fell below
/// this fraction of the last step's.
const SHRUNK: f64 = 0.9;

/// What [`SeparatedParts::update`] reads of the simulation.
pub(crate) struct World<'a> {
    /// The bodies, at the current state.
    pub bodies: &'a [Body],
    /// Whether a body is alive.
    pub alive: &'a dyn Fn(BodyId) -> bool,
    /// Whether a contact was measured before a teleport of one of its bodies.
    pub stale: &'a dyn Fn(&PairContact) -> bool,
    /// A pair's speculative margin now.
    pub margin: &'a dyn Fn(&PairContact) -> f64,
    /// A body's thinnest extent (its local box's), if it has a shape with a box.
    pub thinnest: &'a dyn Fn(BodyId) -> Option<f64>,
}

/// The separated parts kept so far: measured contacts (each with the poses it was measured at)
/// holding only their kept parts, sorted by pair, newest first within a pair.
#[derive(Clone, Debug, Default)]
pub(crate) struct SeparatedParts {
    entries: Vec<PairContact>,
}

/// `p` with `parts` instead of its own, as a speculative contact, without the triangle pairs
/// (the solver reads none; a detailed pair has thousands).
fn with_parts(p: &PairContact, parts: Vec<VolumeContact>) -> PairContact {
    PairContact {
        a: p.a,
        b: p.b,
        volume: p.volume,
        linear: p.linear,
        angular: p.angular,
        point: p.point,
        parts,
        rays: p.rays,
        refused: None,
        triangle_pairs: Vec::new(),
        contained: p.contained,
        speculative: true,
        rolling: p.rolling,
        at_step: p.at_step,
        poses: p.poses,
    }
}

/// The area of a contact's own parts (not the predicted or separated ones).
fn area(c: &PairContact) -> f64 {
    c.parts
        .iter()
        .filter(|k| !k.is_predicted())
        .map(|k| k.linear.length())
        .sum()
}

impl SeparatedParts {
    /// Drops everything of body `id`.
    pub(crate) fn forget(&mut self, id: BodyId) {
        self.entries.retain(|p| p.a != id && p.b != id);
    }

    /// The kept parts of the pairs of `current` (this step's interfering pairs, sorted by pair),
    /// from `last` (the last step's interfering pairs, sorted by pair) and the parts kept so far:
    /// one speculative contact per pair, its parts advanced to the current state (poses and
    /// step now), sorted by pair. Keeps what it kept for the next step.
    pub(crate) fn update(
        &mut self,
        world: &World<'_>,
        last: &[PairContact],
        current: &[PairContact],
        step: u64,
    ) -> Vec<PairContact> {
        let bodies = world.bodies;
        let mut kept = Vec::new();
        // The last step's contact of each pair (its own parts), then the older ones.
        let mut sources: Vec<PairContact> = last
            .iter()
            .filter(|p| !p.rolling)
            .map(|p| {
                let own = p.parts.iter().filter(|k| !k.is_predicted()).copied();
                with_parts(p, own.collect())
            })
            .chain(std::mem::take(&mut self.entries))
            .collect();
        // Stable: the last step's contact stays first within its pair.
        sources.sort_by_key(|p| (p.a, p.b));
        let mut start = 0;
        while start < sources.len() {
            let pair = (sources[start].a, sources[start].b);
            let len = sources[start..]
                .iter()
                .take_while(|p| (p.a, p.b) == pair)
                .count();
            let group = &sources[start..start + len];
            start += len;
            let (a, b) = pair;
            let Ok(now) = current.binary_search_by_key(&pair, |c| (c.a, c.b)) else {
                continue;
            };
            if !((world.alive)(a) && (world.alive)(b)) {
                continue;
            }
            if group[0].rays > 0 {
                // Sampled: the last step's parts, where the area shrank (see the module docs).
                let p = &group[0];
                if area(&current[now]) >= SHRUNK * area(p) {
                    continue;
                }
                if let Some(c) = Self::sampled(world, p) {
                    kept.push(c);
                }
                continue;
            }
            let slip_limit = SLIP
                * [a, b]
                    .iter()
                    .filter_map(|&i| (world.thinnest)(i))
                    .fold(f64::INFINITY, f64::min);
            let (ba, bb) = (&bodies[a], &bodies[b]);
            let mut features: Vec<u64> = Vec::new();
            let mut parts = Vec::new();
            for e in group {
                if (world.stale)(e) {
                    continue;
                }
                let margin = (world.margin)(e);
                let moved = advanced_parts(e, bodies);
                if moved.len() != e.parts.len() {
                    continue;
                }
                let [(xa, qa), (xb, qb)] = e.poses;
                let mut still = Vec::new();
                for (m, v) in e.parts.iter().zip(&moved) {
                    let feature = m.feature | SEPARATED_FEATURE;
                    // The material points of a and b that were at the part's point.
                    let on_a = ba.position + ba.orientation * (qa.inverse() * (m.point - xa));
                    let on_b = bb.position + bb.orientation * (qb.inverse() * (m.point - xb));
                    let d = on_b - on_a;
                    let n = m.linear.normalize_or_zero();
                    let slip = (d - n * n.dot(d)).length();
                    if v.volume < 0.0
                        && -v.volume <= margin * v.linear.length()
                        && slip <= slip_limit
                        && !features.contains(&feature)
                    {
                        features.push(feature);
                        still.push(VolumeContact { feature, ..*m });
                        parts.push(VolumeContact { feature, ..*v });
                    }
                }
                if !still.is_empty() {
                    self.entries.push(with_parts(e, still));
                }
            }
            if !parts.is_empty() {
                kept.push(PairContact {
                    at_step: step,
                    poses: [(ba.position, ba.orientation), (bb.position, bb.orientation)],
                    ..with_parts(&group[0], parts)
                });
            }
        }
        kept
    }

    /// The separated parts of a sampled pair's last contact `p`, as measured (with `p`'s poses).
    fn sampled(world: &World<'_>, p: &PairContact) -> Option<PairContact> {
        if p.parts.is_empty() || (world.stale)(p) {
            return None;
        }
        let margin = (world.margin)(p);
        let moved = advanced_parts(p, world.bodies);
        if moved.len() != p.parts.len() {
            return None;
        }
        let parts: Vec<_> = p
            .parts
            .iter()
            .zip(&moved)
            .filter(|(_, v)| v.volume < 0.0 && -v.volume <= margin * v.linear.length())
            .map(|(k, _)| VolumeContact {
                feature: k.feature | SEPARATED_FEATURE,
                ..*k
            })
            .collect();
        (!parts.is_empty()).then(|| with_parts(p, parts))
    }
}

//! Speculative volume contacts for moving pairs (meshes, primitives and compounds; a half-space
//! has its own margins): a contact is created before the surfaces meet when the pair's relative
//! motion could close the gap within the step.
//!
//! The exact volume only sees surfaces that already cross, so a face that turns or moves into
//! the other solid during the step has no constraint until the next step finds it overlapping;
//! the position projection then pushes it out. That push lifts the body without taking its
//! kinetic energy: a faceted ball rolling on a slab landed on each new face that way, kept its
//! spin instead of losing it in the face's impact, and had its centre lifted by the projection
//! at every face, and it rolled faster and faster (issue 28). A half-space has had speculative
//! contacts from a raised plane (`contact/parts/half_space.rs`); this is the same idea for two
//! meshes, with the pair's own motion instead of a fixed direction:
//!
//! 1. each moving body is advanced by its velocity over one step (`x' = x + v Δt`,
//!    `q' = exp(ω Δt) q`: where it goes if nothing stops it);
//! 2. the narrow phase and the exact volume run at those predicted poses (the same CPU code as
//!    the step's own contacts: any region found there is a contact the motion would make);
//! 3. each part of the predicted manifold is carried back to the current state: its point with
//!    the material of the body that moves more (so that its lever arm about that body's centre is
//!    the predicted one; its gradient about the point is kept), its volume by
//!    the first-order term of its gradient, `V = V' − ∂V/∂x_b·(Δx_b − Δx_a) − ∂V/∂θ_b·(θ_b − θ_a)`
//!    with `Δx`, `θ` each body's motion from now to the predicted state (Wang–Faure–Pai 2012
//!    §2.2, Eq. 2, run backwards), and clamped to `V ≤ 0`.
//!
//! A part with `V < 0` is the solver's speculative constraint `V + h J v ≤ 0` (see
//! `crate::solver`): the bodies may close the gap `−V` but not overlap within the substep, so an
//! approaching face is stopped by an impulse when it arrives (an inelastic impact that takes the
//! approach's energy), not pushed out afterwards. A part with `V = 0` forbids approach along its
//! gradient from now on. Neither ever pushes in the position projection (their error is not
//! positive). The parts get their own feature keys ([`SPECULATIVE_FEATURE`]).
//!
//! Pairs whose relative motion over the step is below [`MIN_MOTION`] of the smaller body's size
//! (resting, asleep) get none when they are in contact: their contacts do not change within a
//! step. A pair at rest that is *not* in contact (a body placed exactly on the ground, or with a
//! hair's gap) looks ahead where its velocities and the step's external forces (gravity, applied
//! forces) carry it, at one pose at the end of the step; where it interferes there, the first
//! touch is found by bisection (to 1/256 of the step) and the contact there is carried back, so
//! a curved surface's linearized gap is not taken from deep in (`resting_samples`). Without it
//! such a body fell through its support for a whole step (1.7 mm at 60 Hz) before its contact
//! was found, and was pushed back out.
//!
//! A moving pair with a primitive or compound body gets none unless a step could carry one
//! through the other ([`FAST`]); before 2026-11-28 such pairs had none at all, and a 5 cm
//! primitive cube at 20 m/s fell through a 1 cm primitive slab.

use crate::body::Body;
use crate::collision::broad_phase::is_moving;
use crate::collision::margin::travel;
use crate::collision::shape::Shape;
use crate::contact::narrow_phase::{exact_pair, exact_pair_from_front};
use crate::contact::parts::exact::feature_key;
use crate::contact::stage::{NarrowPhase, PairContact, StageInput};
use crate::contact::volume_stage::pair_contact;
use crate::contact::{BodyId, VolumeContact};
use crate::parallel::par_map_mut_with;
use interfere_geometry::TraversalFront;
use interfere_geometry::glam::{DQuat, DVec3};

/// Set in the feature key of a speculative part, so that its warm start never mixes with the
/// pair's own regions.
pub const SPECULATIVE_FEATURE: u64 = 1 << 63;

/// Set in the feature key of a part kept from the last step's contact of a pair that is still
/// reported, where it has come apart since (`Simulation::persist`), so that its warm start never
/// mixes with the part of the same key in the current contact.
pub const SEPARATED_FEATURE: u64 = 1 << 62;

/// The relative motion over a step, as a fraction of the smaller body's size (the diagonal of
/// its local box), below which a pair gets no speculative contacts.
pub const MIN_MOTION: f64 = 1e-4;

/// The state of `body` advanced by its velocity and the acceleration `accel` over `t`
/// (unchanged unless it moves: [`is_moving`]).
fn predicted(body: &Body, t: f64, accel: DVec3) -> Body {
    let mut b = body.clone();
    if is_moving(body) {
        b.position += body.linear_velocity * t + accel * (0.5 * t * t);
        let w = body.angular_velocity * t;
        if w != DVec3::ZERO && w.is_finite() {
            b.orientation = (DQuat::from_scaled_axis(w) * body.orientation).normalize();
        }
    }
    b
}

/// How far the fastest point of `body` (of size `reach`) travels in `dt`: 0 unless it moves.
fn moving_travel(body: &Body, reach: f64, dt: f64) -> f64 {
    if is_moving(body) {
        travel(body, reach, dt)
    } else {
        0.0
    }
}

/// The size of a shape with a box (a mesh, a primitive or a compound; a half-space has its own
/// margins, `crate::collision::margin`): its local box's diagonal and its thinnest extent.
fn size(shape: &Shape) -> Option<(f64, f64)> {
    let (lo, hi) = shape.local_box()?;
    Some(((hi - lo).length(), (hi - lo).min_element()))
}

/// Which moving pairs a contact stage looks ahead for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LookAhead {
    /// None.
    Off,
    /// Only pairs that a step could carry one through the other (their motion in a step at
    /// least `FAST` times the thinner body's thinnest extent), meshes included: no tunnelling,
    /// but slower pairs meet only the surfaces that already cross. The asynchronous GPU stage
    /// uses it for the pairs it decides in the step, which alternate with its answers' pairs
    /// (computed steps before, without a look ahead): with every moving pair looking ahead, a
    /// box resting on a mesh on that stage rattled at up to 0.36 m/s between the two kinds of
    /// contact (`bevy_interfere`'s `gpu_async_box_falls_and_rests`, 2026-11-29).
    Fast,
    /// Every pair that moves (mesh pairs from `MIN_MOTION`; pairs with a primitive or compound
    /// body from `FAST`, as in `Fast`). The default, and the blocking GPU stage's.
    #[default]
    Moving,
}

/// How many poses along the step pair `(a, b)` is tested at (see [`add_speculative_contacts`]):
/// 0 when it moves less than [`MIN_MOTION`] of the smaller body's size in a step (or has a
/// half-space), otherwise enough that consecutive poses are at most half the thinner body's
/// thinnest extent apart (so that a fast body cannot pass a thin one between two of them), at
/// most [`MAX_SAMPLES`].
fn samples(input: &StageInput<'_>, a: BodyId, b: BodyId, look: LookAhead) -> usize {
    let (Some(sa), Some(sb)) = (input.shape(a), input.shape(b)) else {
        return 0;
    };
    let (Some((ra, ta)), Some((rb, tb))) = (size(sa), size(sb)) else {
        return 0;
    };
    let (ba, bb) = (&input.bodies[a], &input.bodies[b]);
    let motion = moving_travel(ba, ra, input.dt) + moving_travel(bb, rb, input.dt);
    if !(motion.is_finite() && motion > MIN_MOTION * ra.min(rb)) {
        return 0;
    }
    // A pair with a primitive or compound body looks ahead only when a step could carry one
    // through the other ([`FAST`]): slower, its own contact (`contact::primitive_pairs`), which
    // keeps the points of curved surfaces where they meet while they roll, is left as it was.
    // Looking ahead at every speed changed how such bodies come to rest: the machines demo's
    // ragdoll never fell asleep on its stairs, a ball on a one-way platform rested 3 mm deep.
    let meshes = matches!((sa, sb), (Shape::Mesh(_), Shape::Mesh(_)));
    let only_fast = look == LookAhead::Fast || !meshes;
    if look == LookAhead::Off || (only_fast && motion < FAST * ta.min(tb)) {
        return 0;
    }
    let spacing = 0.5 * ta.min(tb);
    if spacing > 0.0 {
        ((motion / spacing).ceil() as usize).clamp(1, MAX_SAMPLES)
    } else {
        1
    }
}

/// How many poses along the step a pair at rest (its velocities move it less than
/// [`MIN_MOTION`] of the smaller body's size in a step, so [`samples`] leaves it out) that is not
/// in contact now is tested at, the bodies carried by their velocities *and the step's external
/// forces* (`Body::external_acceleration`): 1 when that carries them more than [`MIN_MOTION`]
/// of the smaller body's size (whatever their shapes), otherwise 0. Pairs that move keep
/// [`samples`]' rule (a pair with a primitive that moves slower than [`FAST`] gets no look
/// ahead at all).
///
/// A body at rest exactly touching another, as a level designer places a prop on the ground, has
/// no overlap (no contact) and no velocity (no look ahead by velocity); without this it fell
/// through its support for a whole step before its contact was found, 1.7 mm at 60 Hz, and was
/// pushed back out by the projection (a primitive cube on a primitive floor, 2026-11-29). A pair
/// in contact keeps its own contact and needs none of this; a pair that moves looks ahead by
/// its velocity ([`samples`]).
fn resting_samples(input: &StageInput<'_>, a: BodyId, b: BodyId, look: LookAhead) -> usize {
    if look == LookAhead::Off {
        return 0;
    }
    let (Some(sa), Some(sb)) = (input.shape(a), input.shape(b)) else {
        return 0;
    };
    let (Some((ra, _)), Some((rb, _))) = (size(sa), size(sb)) else {
        return 0;
    };
    let (ba, bb) = (&input.bodies[a], &input.bodies[b]);
    let still = MIN_MOTION * ra.min(rb);
    let moved = moving_travel(ba, ra, input.dt) + moving_travel(bb, rb, input.dt);
    let fall = 0.5 * input.dt * input.dt;
    let pulled = fall
        * (ba.external_acceleration(input.gravity).length()
            + bb.external_acceleration(input.gravity).length());
    usize::from(moved <= still && (moved + pulled).is_finite() && moved + pulled > still)
}

/// The motion in a step, as a fraction of the thinner body's thinnest extent, from which a pair
/// with a primitive or compound body looks ahead: a step that could carry one through the other.
pub const FAST: f64 = 1.0;

/// The most poses along a step a pair is tested at.
pub const MAX_SAMPLES: usize = 64;

/// The displacement from `now` to `then` of the material point of a body at `p` (given in the
/// `then` state), the body's rotation vector from `now` to `then`, and where that material point
/// is now.
fn motion_back(now: &Body, then: &Body, p: DVec3) -> (DVec3, DVec3, DVec3) {
    let back = now.orientation * then.orientation.inverse();
    let material_now = now.position + back * (p - then.position);
    let theta = (then.orientation * now.orientation.inverse()).to_scaled_axis();
    (p - material_now, theta, material_now)
}

/// Whether two bodies move together: their relative velocity is under half the larger of their
/// speeds (the speeds of their centres of mass).
fn together(a: &Body, b: &Body) -> bool {
    let relative = (a.linear_velocity - b.linear_velocity).length();
    relative < 0.5 * a.linear_velocity.length().max(b.linear_velocity.length())
}

/// The parts of `contact`, the pair `(a, b)`'s contact computed as bodies 0 and 1 at the
/// predicted states `then`, carried back to the current states `now` (see the module
/// documentation).
fn carried_back(
    contact: &PairContact,
    (a, b): (BodyId, BodyId),
    now: [&Body; 2],
    then: &[Body; 2],
    gaps_only: bool,
) -> Vec<VolumeContact> {
    let ([now_a, now_b], [then_a, then_b]) = (now, then);
    // Feature keys XOR the bodies' ids in (`feature_key`): swap (0, 1) for (a, b).
    let rekey = feature_key(0, 1, 0, 0) ^ feature_key(a, b, 0, 0);
    // The row's point: the contact point carried back with the material of the body that moves
    // more (exact for that body's lever arm; the other's is off by the pair's relative motion,
    // which is small when that body is the slower one).
    let b_moves =
        (now_b.position - then_b.position).length() >= (now_a.position - then_a.position).length();
    contact
        .parts
        .iter()
        .filter_map(|k| {
            let (da, ta, on_a) = motion_back(now_a, then_a, k.point);
            let (db, tb, on_b) = motion_back(now_b, then_b, k.point);
            let volume = k.volume - k.linear.dot(db - da) - k.angular.dot(tb - ta);
            let part = VolumeContact {
                body_a: a,
                body_b: b,
                volume: volume.min(0.0),
                point: if b_moves { on_b } else { on_a },
                feature: (k.feature ^ rekey) | SPECULATIVE_FEATURE,
                ..*k
            };
            (part.volume.is_finite() && part.point.is_finite() && !(gaps_only && volume >= 0.0))
                .then_some(part)
        })
        .collect()
}

/// The speculative parts of pair `(a, b)`, tested at `count` poses along the step (each body
/// carried by its velocity, and with `accelerate` by the step's external forces too): its
/// contact at the first of them where it overlaps (its contact has parts), carried back to the
/// current state (see the module documentation). Empty when it overlaps at none.
///
/// (Tried and dropped for moving pairs, kept for pairs at rest, `accelerate`: adding the contact
/// at the first touch, found by bisection between the last pose apart and the first overlapping
/// one. The box and sphere of
/// `fast_bodies_never_pass_through_thin_slabs` went exactly as deep, and the faceted ball of
/// `faceted_ball_comes_to_rest_on_a_mesh_slab_in_any_orientation` gained 0.05 J on landing.)
fn predicted_parts(
    input: &StageInput<'_>,
    (a, b): (BodyId, BodyId),
    count: usize,
    accelerate: bool,
    mut front: Option<&mut TraversalFront>,
    threads: usize,
) -> Vec<VolumeContact> {
    let now = [&input.bodies[a], &input.bodies[b]];
    let accel = now.map(|body| {
        if accelerate {
            body.external_acceleration(input.gravity)
        } else {
            DVec3::ZERO
        }
    });
    // The pair alone, as bodies 0 and 1 (ids and feature keys are mapped back).
    let colliders = [input.colliders[a].clone(), input.colliders[b].clone()];
    let all = input.needs_all_triangle_pairs();
    // The sweeps: both bodies along their velocities, then, when both move, each alone with the
    // other held where it is now. Two bodies falling side by side have no relative motion, but
    // the lower one may be stopped within the step (it lands) while the upper keeps falling: the
    // gap between them closes with one body's own motion. Each sweep's contact is a linearized
    // gap, valid whatever moved; the first sweep that finds one gives the parts.
    // At rest (`accelerate`), two bodies that gravity pulls alike have no relative motion
    // either: a cube placed on another that rests on the floor falls onto it unless the upper
    // one is swept alone.
    let both = is_moving(now[0]) && is_moving(now[1]) && (accelerate || together(now[0], now[1]));
    let sweeps: &[[bool; 2]] = if both {
        &[[true, true], [false, true], [true, false]]
    } else {
        &[[true, true]]
    };
    // The pair at time `t` of the step (each body moved where `moves` says), and its hit there.
    let mut at = |t: f64, moves: &[bool; 2]| {
        let then = [0, 1].map(|i| {
            if moves[i] {
                predicted(now[i], t, accel[i])
            } else {
                now[i].clone()
            }
        });
        let future = StageInput {
            bodies: &then,
            colliders: &colliders,
            candidates: &[(0, 1)],
            ..*input
        };
        let hit = match front.as_deref_mut() {
            Some(front) if all => exact_pair_from_front(&future, 0, 1, front, threads),
            _ => exact_pair(&future, 0, 1, all),
        };
        let contact = hit.map(|hit| pair_contact(&future, hit));
        (then, contact)
    };
    for moves in sweeps {
        for k in 1..=count {
            let t = input.dt * k as f64 / count as f64;
            let (mut then, found) = at(t, moves);
            let Some(mut contact) = found else {
                continue;
            };
            if contact.parts.is_empty() {
                // Touching with no overlap (no parts): not where the contact starts; the next
                // pose (or, for a pair at rest, the next sweep, which moves each body alone)
                // finds it. Until 2026-11-29 such a pose ended the look ahead with nothing, and
                // a fast cube whose first pose just touched a thin slab went half through it
                // (`a_look_ahead_pose_that_only_touches_does_not_end_the_look_ahead`).
                continue;
            }
            if accelerate {
                // A pair at rest that the step's forces bring into contact: the contact at the
                // first touch, to within 1/256 of the step (bisected; it is apart now). Carried
                // back from deeper, the linearized gap of a curved surface (a ball's cap, whose
                // volume grows with the square of its depth) closes too early by half that depth:
                // a ball placed on a floor sank 0.68 mm, a lying capsule 0.57 mm. A pose whose
                // contact has no parts counts as apart (a capsule's inscribed tessellation
                // touches later than the capsule).
                let (mut lo, mut hi) = (0.0, t);
                for _ in 0..8 {
                    let mid = 0.5 * (lo + hi);
                    match at(mid, moves) {
                        (state, Some(c)) if !c.parts.is_empty() => {
                            (hi, then, contact) = (mid, state, c)
                        }
                        _ => lo = mid,
                    }
                }
            }
            // A sweep of one body alone keeps only gaps (the other may be stopped within the
            // step, so a part already touching says nothing), except for a pair at rest, whose
            // touching parts are what holds the upper body where it was placed.
            let gaps_only = moves != &[true, true] && !accelerate;
            return carried_back(&contact, (a, b), now, &then, gaps_only);
        }
    }
    Vec::new()
}

/// Adds the speculative parts of the moving candidate pairs of `input` that `look` names to
/// `pairs` (the stage's contacts, sorted by `(a, b)`): to a pair's contact when it interferes
/// now, otherwise as a new speculative [`PairContact`]. Keeps `pairs` sorted.
pub fn add_speculative_contacts(
    input: &StageInput<'_>,
    pairs: &mut Vec<PairContact>,
    narrow: &mut dyn NarrowPhase,
    look: LookAhead,
) {
    let in_contact = |a: BodyId, b: BodyId| {
        pairs
            .binary_search_by_key(&(a, b), |p| (p.a, p.b))
            .is_ok_and(|k| !pairs[k].parts.is_empty())
    };
    // Each pair's poses, and whether the step's external forces carry its bodies too (pairs
    // at rest and not in contact: [`resting_samples`]).
    let moving: Vec<((BodyId, BodyId), usize, bool)> = input
        .candidates
        .iter()
        .copied()
        .filter(|&(a, b)| a < input.bodies.len() && b < input.bodies.len())
        .map(|(a, b)| match samples(input, a, b, look) {
            0 if !in_contact(a, b) => ((a, b), resting_samples(input, a, b, look), true),
            count => ((a, b), count, false),
        })
        .filter(|&(_, count, _)| count > 0)
        .collect();
    if moving.is_empty() {
        return;
    }
    // A mesh–mesh pair looks ahead from the traversal front the narrow phase left it and gives
    // it back where the look ahead left it, at the end of the step if the pair goes on as it
    // moves: the next step's narrow phase resumes from there (the answers are those of a
    // traversal from the roots: `interfere_geometry::bvh::front`). When fewer pairs move than
    // there are threads, each takes its share of them.
    let threads = input.settings.thread_count();
    let per_pair = (threads / moving.len()).max(1);
    let mut looks: Vec<_> = moving
        .iter()
        .map(|&((a, b), count, accelerate)| {
            let meshes = input
                .mesh_pair(a, b)
                .map(|(ma, mb, _, _)| (ma.id(), mb.id()));
            let front = meshes.and_then(|m| narrow.take_front(a, b, m));
            ((a, b), count, accelerate, meshes, front)
        })
        .collect();
    let found = par_map_mut_with(
        threads,
        &mut looks,
        |(pair, count, accelerate, _, front)| {
            predicted_parts(input, *pair, *count, *accelerate, front.as_mut(), per_pair)
        },
    );
    for ((a, b), _, _, meshes, front) in looks {
        if let (Some(meshes), Some(front)) = (meshes, front) {
            narrow.keep_front(a, b, meshes, front);
        }
    }
    let mut added = false;
    for (&((a, b), _, _), parts) in moving.iter().zip(found) {
        if parts.is_empty() {
            continue;
        }
        match pairs.binary_search_by_key(&(a, b), |p| (p.a, p.b)) {
            Ok(k) => pairs[k].parts.extend(parts),
            Err(_) => {
                let mut c = PairContact::touching(
                    crate::contact::stage::InterferingPair {
                        a,
                        b,
                        triangle_pairs: Vec::new(),
                        contained: false,
                        speculative: true,
                    },
                    input.bodies,
                    input.step,
                );
                c.parts = parts;
                pairs.push(c);
                added = true;
            }
        }
    }
    if added {
        pairs.sort_by_key(|p| (p.a, p.b));
    }
}

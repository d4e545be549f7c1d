//! Contacts found once per step, used at every substep (and, for an asynchronous GPU stage, at a
//! later step): each is advanced from the body states it was computed at to the current ones by
//! the first-order term of its gradient (Wang–Faure–Pai 2012 §2.2, Eq. 2):
//!
//! `V(now) ≈ V + ∂V/∂x_b·(Δx_b − Δx_a) + ∂V/∂θ_b·(θ_b − θ_a)`,
//!
//! with `Δx` the displacement of the material point at the contact point on each body and `θ`
//! each body's rotation vector since then; its point moves with body b (with b's centre of mass
//! only, not its rotation, for the curved primitive contacts marked
//! [`PairContact::rolling`]). A contact whose advanced
//! volume is no longer positive stays as a speculative constraint (the solver lets the bodies
//! close the gap `−V` but not overlap again within the substep), so a resting contact that the
//! post-stabilization has just cleared does not vanish for the rest of the step.

use crate::body::Body;
use crate::contact::stage::PairContact;
use crate::contact::{ContactSource, Contacts, VolumeContact};
use interfere_geometry::glam::{DQuat, DVec3};

/// Displacement of the material point at `p` and rotation vector of a body since `(x0, q0)`.
fn motion(body: &Body, (x0, q0): (DVec3, DQuat), p: DVec3) -> (DVec3, DVec3) {
    let dq = body.orientation * q0.inverse();
    let theta = dq.to_scaled_axis();
    let moved = body.position + dq * (p - x0);
    (moved - p, theta)
}

/// The solver's contact source: the parts of `pairs` advanced to the bodies' current states.
/// Pairs listed in `skip` (sensors) exert nothing.
pub struct LatentSource<'a> {
    /// The step's pair contacts.
    pub pairs: &'a [PairContact],
    /// Whether pair `k` of `pairs` exerts forces.
    pub exerts: &'a [bool],
}

impl ContactSource for LatentSource<'_> {
    fn contacts(&mut self, bodies: &[Body], out: &mut Contacts) {
        for (pair, &exerts) in self.pairs.iter().zip(self.exerts) {
            if !exerts {
                continue;
            }
            let (Some(a), Some(b)) = (bodies.get(pair.a), bodies.get(pair.b)) else {
                continue;
            };
            for k in &pair.parts {
                let (da, ta) = motion(a, pair.poses[0], k.point);
                let (db, tb) = motion(b, pair.poses[1], k.point);
                let volume = k.volume + k.linear.dot(db - da) + k.angular.dot(tb - ta);
                let shift = if pair.rolling {
                    b.position - pair.poses[1].0
                } else {
                    db
                };
                if volume.is_finite() {
                    out.volumes.push(VolumeContact {
                        volume,
                        point: k.point + shift,
                        ..*k
                    });
                }
            }
        }
    }
}

/// Each part of the one contact `p` advanced to the current states of `bodies` (what
/// [`LatentSource`] gives the solver for it).
pub(crate) fn advanced_parts(p: &PairContact, bodies: &[Body]) -> Vec<VolumeContact> {
    let mut out = Contacts::default();
    LatentSource {
        pairs: std::slice::from_ref(p),
        exerts: &[true],
    }
    .contacts(bodies, &mut out);
    out.volumes
}

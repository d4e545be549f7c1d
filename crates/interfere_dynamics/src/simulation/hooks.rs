//! Contact hooks (issue 30): game code that sees each pair's contact after the contact stage and
//! before the solver, and may drop it for the step or change its friction, restitution and the
//! target velocity of the surfaces' sliding (avian's `CollisionHooks`, rapier's `PhysicsHooks`):
//! one-way platforms, conveyor belts, per-pair friction.
//!
//! A hook runs once per step for every pair that exerts force (interfering pairs and the
//! speculative ones, sensors excluded), in pair order, on the simulation's thread. A dropped pair
//! stays an interfering pair for events and queries but exerts nothing this step; the changes of
//! a kept pair reach the solver as a [`PairOverride`].

use crate::body::Body;
use crate::contact::overrides::PairOverride;
use crate::contact::stage::PairContact;
use crate::contact::{ContactSource, Contacts};
use crate::simulation::{BodyHandle, Simulation};
use interfere_geometry::glam::DVec3;

/// Game code that may drop or change each pair's contact before the solver (see the module
/// documentation).
pub trait ContactHook: Send + Sync {
    /// Called for each pair that exerts force this step. Return `false` to drop the pair's
    /// contact for this step; change `pair`'s friction, restitution or surface velocity to
    /// change how it acts.
    fn modify(&self, pair: &mut HookedPair<'_>) -> bool;
}

impl<F: Fn(&mut HookedPair<'_>) -> bool + Send + Sync> ContactHook for F {
    fn modify(&self, pair: &mut HookedPair<'_>) -> bool {
        self(pair)
    }
}

/// One pair's contact as a hook sees it.
#[derive(Debug)]
pub struct HookedPair<'a> {
    /// The first body (the lower id).
    pub a: BodyHandle,
    /// The second body.
    pub b: BodyHandle,
    /// The first body's state.
    pub body_a: &'a Body,
    /// The second body's state.
    pub body_b: &'a Body,
    /// The user data of each body (the plugin keeps the entity's bits there; see
    /// [`Self::with_user`]).
    pub user: [u64; 2],
    /// The contact: volume, gradient, parts, triangle pairs (gradients with respect to b).
    pub contact: &'a PairContact,
    /// The friction coefficient to use instead of the bodies' combined one.
    pub friction: Option<f64>,
    /// The restitution to use instead of the bodies' combined one.
    pub restitution: Option<f64>,
    /// The velocity b's surface should slide at relative to a's at the contact (its tangential
    /// part; zero: the surfaces stick as friction allows). See [`Self::set_surface_velocity`].
    pub surface_velocity: DVec3,
}

impl HookedPair<'_> {
    /// The unit direction that moves b out of a fastest (the negative volume gradient), if the
    /// contact has one.
    pub fn normal(&self) -> Option<DVec3> {
        (-self.contact.linear).try_normalize()
    }

    /// Whether `h` is one of the pair's bodies.
    pub fn involves(&self, h: BodyHandle) -> bool {
        self.a == h || self.b == h
    }

    /// The other body of the pair, as seen from `h` (None when `h` is not in it).
    pub fn other(&self, h: BodyHandle) -> Option<(BodyHandle, &Body)> {
        if h == self.a {
            Some((self.b, self.body_b))
        } else if h == self.b {
            Some((self.a, self.body_a))
        } else {
            None
        }
    }

    /// The pair's body whose user data is `user` (the plugin's `entity.to_bits()`), if either.
    pub fn with_user(&self, user: u64) -> Option<BodyHandle> {
        if self.user[0] == user {
            Some(self.a)
        } else if self.user[1] == user {
            Some(self.b)
        } else {
            None
        }
    }

    /// Makes `belt`'s surface move at `velocity` under what touches it (a conveyor belt): the
    /// other body is carried along as friction allows. No effect when `belt` is not in the pair.
    pub fn set_surface_velocity(&mut self, belt: BodyHandle, velocity: DVec3) {
        if belt == self.a {
            self.surface_velocity = velocity;
        } else if belt == self.b {
            self.surface_velocity = -velocity;
        }
    }
}

impl Simulation {
    /// Sets (or with `None` removes) the hook that sees every pair's contact before the solver.
    pub fn set_contact_hook(&mut self, hook: Option<Box<dyn ContactHook>>) {
        self.hook = hook;
    }

    /// Runs the hook on the step's force-exerting pairs (interfering, then speculative): drops
    /// the pairs it refuses (their `exerts` flag) and collects the changes of the others.
    pub(crate) fn run_hook(&mut self) {
        self.overrides.clear();
        let Some(hook) = self.hook.as_ref() else {
            return;
        };
        let bodies = self.world.bodies();
        let slots = &self.slots;
        let handle = |id: usize| BodyHandle {
            index: id as u32,
            generation: slots[id].generation,
        };
        for (pairs, exerts) in [
            (&self.output.pairs, &mut self.exerts),
            (&self.speculative, &mut self.speculative_exerts),
        ] {
            for (p, exerts) in pairs.iter().zip(exerts.iter_mut()) {
                if !*exerts {
                    continue;
                }
                let (Some(body_a), Some(body_b)) = (bodies.get(p.a), bodies.get(p.b)) else {
                    continue;
                };
                let mut pair = HookedPair {
                    a: handle(p.a),
                    b: handle(p.b),
                    body_a,
                    body_b,
                    user: [slots[p.a].user, slots[p.b].user],
                    contact: p,
                    friction: None,
                    restitution: None,
                    surface_velocity: DVec3::ZERO,
                };
                if !hook.modify(&mut pair) {
                    *exerts = false;
                    continue;
                }
                if pair.friction.is_some()
                    || pair.restitution.is_some()
                    || pair.surface_velocity != DVec3::ZERO
                {
                    // Stage pairs have `a < b`, the order overrides are kept in.
                    self.overrides.push(PairOverride {
                        a: p.a,
                        b: p.b,
                        friction: pair.friction,
                        restitution: pair.restitution,
                        surface_velocity: pair.surface_velocity,
                    });
                }
            }
        }
        self.overrides.sort_by_key(|o| (o.a, o.b));
        self.overrides.dedup_by_key(|o| (o.a, o.b));
    }
}

/// Hands the hook's overrides to the solver with each substep's contacts.
pub(crate) struct OverrideSource<'a>(pub(crate) &'a [PairOverride]);

impl ContactSource for OverrideSource<'_> {
    fn contacts(&mut self, _: &[crate::body::Body], out: &mut Contacts) {
        out.overrides.extend_from_slice(self.0);
    }
}

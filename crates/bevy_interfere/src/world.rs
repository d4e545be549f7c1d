//! The simulation behind the ECS: [`PhysicsWorld`] holds the `interfere_dynamics::Simulation`
//! (the same step scene files and `interfere simulate` run) and which entity each body is. The
//! plugin mirrors the ECS into it (`sync`), steps it ([`crate::step`]) and writes the
//! results back (`writeback`); games read it through the accessors here.

use crate::collider::ColliderShape;
use crate::components::RigidBody;
use bevy::platform::collections::HashMap;
use bevy::prelude::*;
use interfere_dynamics::{Body, BodyHandle, BodyId, PairContact, Simulation, SimulationSettings};

/// What the plugin remembers of one entity's body.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    pub handle: BodyHandle,
    pub kind: RigidBody,
    pub shape: Option<ColliderShape>,
    /// Density actually used (from `Density` or `Mass`), to notice changes.
    pub density: f64,
    /// What the last write-back put into `(translation, rotation, linear, angular)` (a
    /// difference means the game changed it: a teleport or a new velocity).
    pub written: Option<(Vec3, Quat, Vec3, Vec3)>,
    /// The world transform of the entity's parent (its ancestors' `Transform`s composed) when the
    /// body was last mirrored; `None` without a parent. The body's world pose is this times its
    /// own `Transform`, and a change of it moves the body like a teleport.
    pub parent: Option<Transform>,
    /// Whether the plugin inserted `Sleeping` on the entity.
    pub marked_asleep: bool,
}

/// The simulation state behind the ECS (see the module documentation).
#[derive(Resource)]
pub struct PhysicsWorld {
    pub(crate) sim: Simulation,
    pub(crate) entries: HashMap<Entity, Entry>,
    /// The entity of each body id.
    pub(crate) entities: Vec<Option<Entity>>,
    /// Entities of bodies removed since the last write-back (their pairs' end messages).
    pub(crate) removed: HashMap<BodyHandle, Entity>,
}

impl Default for PhysicsWorld {
    fn default() -> Self {
        Self {
            sim: Simulation::new(SimulationSettings::default())
                .expect("the default settings are valid"),
            entries: HashMap::default(),
            entities: Vec::new(),
            removed: HashMap::default(),
        }
    }
}

impl PhysicsWorld {
    /// The simulation (read-only: the plugin owns its state; change bodies through components).
    pub fn simulation(&self) -> &Simulation {
        &self.sim
    }

    /// Number of bodies.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no bodies.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entity of body `id`.
    pub fn entity(&self, id: BodyId) -> Option<Entity> {
        self.entities.get(id).copied().flatten()
    }

    /// The entity of a body handle (also for a body removed since the last step).
    pub fn entity_of(&self, h: BodyHandle) -> Option<Entity> {
        if self.sim.contains(h) {
            self.entity(h.id())
        } else {
            self.removed.get(&h).copied()
        }
    }

    /// The body handle of `entity`.
    pub fn handle(&self, entity: Entity) -> Option<BodyHandle> {
        self.entries.get(&entity).map(|e| e.handle)
    }

    /// The simulated body of `entity` (`f64` state).
    pub fn body(&self, entity: Entity) -> Option<&Body> {
        self.sim.body(self.handle(entity)?)
    }

    /// The collider of `entity`'s body as the simulation has it (for a body with collider
    /// children: the compound they form).
    pub fn collider(&self, entity: Entity) -> Option<&interfere_dynamics::BodyShape> {
        self.sim.collider(self.handle(entity)?)
    }

    /// The interfering pairs of the last step, as entity pairs.
    pub fn interfering_pairs(&self) -> Vec<(Entity, Entity)> {
        self.pair_contacts().map(|(a, b, _)| (a, b)).collect()
    }

    /// The candidate (box-overlapping) pairs of the last step.
    pub fn candidate_pairs(&self) -> Vec<(Entity, Entity)> {
        self.sim
            .candidate_pairs()
            .iter()
            .filter_map(|&(a, b)| Some((self.entity(a)?, self.entity(b)?)))
            .collect()
    }

    /// The contacts of the last step's interfering pairs (world space): volume, gradient, the
    /// parts the solver got, triangle pairs.
    pub fn pair_contacts(&self) -> impl Iterator<Item = (Entity, Entity, &PairContact)> {
        self.sim
            .pair_contacts()
            .iter()
            .filter_map(|c| Some((self.entity(c.a)?, self.entity(c.b)?, c)))
    }

    /// Simulated time in seconds.
    pub fn time(&self) -> f64 {
        self.sim.time()
    }

    /// Sets (or with `None` removes) the hook that sees every pair's contact after the contact
    /// stage and before the solver, and may drop it for the step or change its friction,
    /// restitution and surface velocity (one-way platforms, conveyor belts; see
    /// `interfere_dynamics::ContactHook`). It runs inside the fixed step, on its thread; an
    /// entity's body in the pair is `pair.with_user(entity.to_bits())`.
    pub fn set_contact_hook(&mut self, hook: Option<Box<dyn interfere_dynamics::ContactHook>>) {
        self.sim.set_contact_hook(hook);
    }
}

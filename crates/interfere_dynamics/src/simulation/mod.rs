//! The whole step, shared by the Bevy plugin, scene files and `interfere simulate`: bodies with
//! colliders, the broad phase, the contact stage (narrow phase and volume contacts, CPU or a
//! replaceable backend), the solver, sleeping, and collision events.
//!
//! One [`Simulation::step`]:
//! 1. **Broad phase** ([`crate::collision::broad_phase`]): candidate pairs from sweep and prune
//!    (Lin–Manocha 1996 §4.1) over the current world boxes.
//! 2. **Contact stage** ([`crate::contact::stage`]): the interfering pairs and their intersection volumes
//!    and gradients (Wang–Faure–Pai 2012 §2.2), as [`PairContact`]s. The stage is the
//!    simulation's CPU stage, or one passed to [`Simulation::step_with`] (a GPU backend); if that
//!    fails the CPU stage runs instead, so the step is never lost. Contacts an asynchronous stage
//!    computed for an earlier state are kept (they are advanced to the current one, below), except
//!    for pairs with a body the game teleported since: those are recomputed on the CPU.
//! 3. **Wake-up**: a sleeping body in an interfering pair with a body that moves faster than the
//!    sleep thresholds wakes, and with it the island it fell asleep with.
//! 4. **Events**: pairs that started and stopped interfering ([`CollisionEvent`]).
//! 5. **Solver**: the core integrator (`crate::solver::integrator`) advances by one fixed step
//!    in substeps (Lin–Manocha 1996 §5 impulses, Wang–Faure–Pai 2012 §7 volume constraints with
//!    post-stabilization); contacts are found once per step and advanced to each substep's state
//!    by their gradient ([`crate::contact::latent`]). Sensors' contacts are reported but exert nothing.
//! 6. **Sleeping** by islands ([`crate::solver::sleeping`]).
//!
//! Bodies are added and removed one at a time; their ids stay put (a removed body's slot is
//! reused later under a new [`BodyHandle`] generation), so nothing is rebuilt and warm starting
//! carries over. Everything runs in a fixed order with per-pair work gathered in pair order, so
//! the same inputs give bit-identical states whatever the thread count.

pub(crate) mod forces;
pub(crate) mod hooks;
pub(crate) mod joints;
pub(crate) mod separated;

use crate::body::{Body, BodyKind};
use crate::collision::broad_phase::{BroadPhase, is_moving};
use crate::collision::shape::BodyShape;
use crate::contact::BodyId;
use crate::contact::cpu_stage::CpuContacts;
use crate::contact::latent::LatentSource;
use crate::contact::speculative::SEPARATED_FEATURE;
use crate::contact::stage::{ContactSettings, ContactStage, PairContact, StageInput, StageOutput};
use crate::solver::integrator::{Integrator, StepSettings, StepSettingsError};
use crate::solver::sleeping::{Islands, SleepSettings};
use crate::stats::StepStats;
use interfere_geometry::glam::{DQuat, DVec3};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

/// A body of a [`Simulation`]: its id (index) and a generation that changes when the slot is
/// reused, so a stale handle never reaches another body.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BodyHandle {
    index: u32,
    generation: u32,
}

impl BodyHandle {
    /// The body's id: its index into [`Simulation::bodies`] while it lives.
    pub fn id(self) -> BodyId {
        self.index as BodyId
    }

    /// The slot's generation.
    pub fn generation(self) -> u32 {
        self.generation
    }
}

/// Two bodies started or stopped interfering.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CollisionEvent {
    /// They interfere now and did not at the last step.
    Started(BodyHandle, BodyHandle),
    /// They interfered at the last step and do not now (or one was removed). A pair that is no
    /// longer tested because neither body moves (asleep, static) is not ended.
    Ended(BodyHandle, BodyHandle),
}

/// Everything a simulation is configured with.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct SimulationSettings {
    /// Gravity, timestep, substeps and solver.
    pub world: StepSettings,
    /// Narrow phase and volume contacts.
    pub contact: ContactSettings,
    /// Sleeping.
    pub sleep: SleepSettings,
}

/// Why a body could not be added or changed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SimulationError {
    /// The handle does not name a living body.
    #[error("no body {0:?} (removed, or from another simulation)")]
    NoBody(BodyHandle),
    /// A pose or velocity is not finite (the body is refused, the rest keeps stepping).
    #[error("non-finite state: {0}")]
    NonFinite(&'static str),
    /// A driving input (force, impulse, damping, …) was refused; the body is unchanged. See
    /// `simulation::forces`.
    #[error(transparent)]
    Body(#[from] crate::BodyError),
}

#[derive(Clone, Debug, Default)]
struct Slot {
    generation: u32,
    alive: bool,
    /// Seconds spent below the sleep thresholds.
    calm: f64,
    can_sleep: bool,
    /// The island it fell asleep with (0: none; see [`crate::solver::sleeping`]).
    island: u64,
    /// The step at which the game last teleported the body (contacts computed before are stale).
    teleported: Option<u64>,
    /// User data (the plugin stores the entity's bits).
    user: u64,
}

/// The whole step (see the module documentation).
pub struct Simulation {
    pub(crate) world: Integrator,
    settings: SimulationSettings,
    slots: Vec<Slot>,
    colliders: Vec<Option<BodyShape>>,
    free: Vec<BodyId>,
    broad: BroadPhase,
    cpu: CpuContacts,
    candidates: Vec<(BodyId, BodyId)>,
    output: StageOutput,
    /// Whether each interfering pair exerts forces (not a sensor pair).
    exerts: Vec<bool>,
    /// Speculative contacts of this step: pairs near contact (the stage's own, and contacts of
    /// earlier steps kept while their pair stays close; see [`Self::persist`]).
    speculative: Vec<PairContact>,
    speculative_exerts: Vec<bool>,
    /// The last step's interfering pairs (kept as speculative contacts when they separate).
    last_interfering: Vec<PairContact>,
    /// Parts of earlier contacts of pairs still reported that have come apart since, each with
    /// the poses it was measured at (see [`Self::persist`]); sorted by pair, newest first.
    separated: separated::SeparatedParts,
    colliding: BTreeSet<(BodyHandle, BodyHandle)>,
    events: Vec<CollisionEvent>,
    pending_events: Vec<CollisionEvent>,
    stats: StepStats,
    /// The game's contact hook (see [`crate::ContactHook`]).
    hook: Option<Box<dyn crate::simulation::hooks::ContactHook>>,
    /// This step's changes from the hook, sorted by pair.
    overrides: Vec<crate::contact::overrides::PairOverride>,
}

impl Simulation {
    /// An empty simulation.
    pub fn new(settings: SimulationSettings) -> Result<Self, StepSettingsError> {
        Ok(Self {
            world: Integrator::new(settings.world)?,
            settings,
            slots: Vec::new(),
            colliders: Vec::new(),
            free: Vec::new(),
            broad: BroadPhase::default(),
            cpu: CpuContacts::default(),
            candidates: Vec::new(),
            output: StageOutput::default(),
            exerts: Vec::new(),
            speculative: Vec::new(),
            speculative_exerts: Vec::new(),
            last_interfering: Vec::new(),
            separated: separated::SeparatedParts::default(),
            colliding: BTreeSet::new(),
            events: Vec::new(),
            pending_events: Vec::new(),
            stats: StepStats::default(),
            hook: None,
            overrides: Vec::new(),
        })
    }

    /// The settings.
    pub fn settings(&self) -> &SimulationSettings {
        &self.settings
    }

    /// Changes the settings, keeping every body and the solver's warm-start cache.
    pub fn set_settings(&mut self, settings: SimulationSettings) -> Result<(), StepSettingsError> {
        self.world.set_settings(settings.world)?;
        self.settings = settings;
        Ok(())
    }

    /// The CPU contact stage (its narrow phase and volume stage can be replaced).
    pub fn cpu_stage_mut(&mut self) -> &mut CpuContacts {
        &mut self.cpu
    }

    /// Adds a body with an optional collider. A dynamic body's mass properties are its own (build
    /// it from the collider's, e.g. [`crate::Shape::mass_at`]).
    pub fn insert(
        &mut self,
        body: Body,
        collider: Option<BodyShape>,
    ) -> Result<BodyHandle, SimulationError> {
        check_state(&body)?;
        let id = match self.free.pop() {
            Some(id) => {
                self.world.replace_body(id, body);
                id
            }
            None => {
                self.slots.push(Slot::default());
                self.colliders.push(None);
                self.world.add_body(body)
            }
        };
        let slot = &mut self.slots[id];
        slot.generation = slot.generation.wrapping_add(1);
        slot.alive = true;
        slot.calm = 0.0;
        slot.can_sleep = true;
        slot.island = 0;
        // A contact an asynchronous stage computed before this step cannot be about this body
        // (its id may have belonged to a removed one): treated like a teleport.
        slot.teleported = Some(self.stats.steps);
        slot.user = 0;
        self.colliders[id] = collider;
        Ok(self.handle_of(id))
    }

    /// Removes a body; pairs it was in end (reported with the next step's events).
    pub fn remove(&mut self, h: BodyHandle) -> Result<Body, SimulationError> {
        let id = self.check(h)?;
        let body = self.world.bodies()[id].clone();
        self.broad.remove(id);
        self.colliders[id] = None;
        self.slots[id].alive = false;
        self.world.replace_body(id, vacant_body());
        self.world.forget_body(id);
        self.remove_joints_of(id);
        self.speculative.retain(|p| p.a != id && p.b != id);
        self.last_interfering.retain(|p| p.a != id && p.b != id);
        self.separated.forget(id);
        let ended: Vec<_> = self
            .colliding
            .iter()
            .filter(|(a, b)| *a == h || *b == h)
            .copied()
            .collect();
        for pair in ended {
            self.colliding.remove(&pair);
            self.pending_events
                .push(CollisionEvent::Ended(pair.0, pair.1));
        }
        self.free.push(id);
        Ok(body)
    }

    fn handle_of(&self, id: BodyId) -> BodyHandle {
        BodyHandle {
            index: id as u32,
            generation: self.slots[id].generation,
        }
    }

    pub(crate) fn check(&self, h: BodyHandle) -> Result<BodyId, SimulationError> {
        let id = h.index as usize;
        match self.slots.get(id) {
            Some(s) if s.alive && s.generation == h.generation => Ok(id),
            _ => Err(SimulationError::NoBody(h)),
        }
    }

    /// Whether `h` names a living body.
    pub fn contains(&self, h: BodyHandle) -> bool {
        self.check(h).is_ok()
    }

    /// The handle of the living body with id `id`.
    pub fn handle(&self, id: BodyId) -> Option<BodyHandle> {
        self.slots
            .get(id)
            .filter(|s| s.alive)
            .map(|_| self.handle_of(id))
    }

    /// Handles of all living bodies, by id.
    pub fn handles(&self) -> impl Iterator<Item = BodyHandle> + '_ {
        (0..self.slots.len()).filter_map(|i| self.handle(i))
    }

    /// Number of living bodies.
    pub fn len(&self) -> usize {
        self.slots.iter().filter(|s| s.alive).count()
    }

    /// Whether there are no living bodies.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A body.
    pub fn body(&self, h: BodyHandle) -> Option<&Body> {
        self.check(h).ok().map(|id| &self.world.bodies()[id])
    }

    /// Every body slot by id (removed ones are static placeholders without a collider; see
    /// [`Self::handle`]).
    pub fn bodies(&self) -> &[Body] {
        self.world.bodies()
    }

    /// A body's collider.
    pub fn collider(&self, h: BodyHandle) -> Option<&BodyShape> {
        self.check(h)
            .ok()
            .and_then(|id| self.colliders[id].as_ref())
    }

    /// Every collider by id.
    pub fn colliders(&self) -> &[Option<BodyShape>] {
        &self.colliders
    }

    /// Replaces a body's collider (its mass properties are not changed: see
    /// [`Self::set_mass_properties`]).
    pub fn set_collider(
        &mut self,
        h: BodyHandle,
        collider: Option<BodyShape>,
    ) -> Result<(), SimulationError> {
        let id = self.check(h)?;
        self.broad.remove(id);
        self.colliders[id] = collider;
        self.wake_id(id);
        Ok(())
    }

    /// Replaces the body's state wholesale (kind, mass, material, pose, velocity), waking it; a
    /// changed pose counts as a teleport.
    pub fn set_body(&mut self, h: BodyHandle, body: Body) -> Result<(), SimulationError> {
        let id = self.check(h)?;
        check_state(&body)?;
        let old = &self.world.bodies()[id];
        if old.position != body.position || old.orientation != body.orientation {
            self.slots[id].teleported = Some(self.stats.steps);
        }
        self.world.replace_body(id, body);
        self.wake_id(id);
        Ok(())
    }

    /// Mass, centre of mass and inertia of a dynamic body (keeping its mesh pose, velocity,
    /// material and driving fields: forces, queued impulses, damping, locks, limits).
    pub fn set_mass_properties(
        &mut self,
        h: BodyHandle,
        props: &crate::MassProperties,
    ) -> Result<(), crate::BodyError> {
        let id = self.check(h).map_err(|_| crate::BodyError::BadState)?;
        let old = &self.world.bodies()[id];
        let pose = old.mesh_pose();
        let mut made = Body::dynamic(props, pose.translation, old.orientation)?
            .with_material(old.material)
            .with_velocity(old.linear_velocity, old.angular_velocity);
        made.copy_drive_from(old);
        self.world.replace_body(id, made);
        self.wake_id(id);
        Ok(())
    }

    /// Teleports a body: its mesh frame to `translation` with `orientation` (wakes it; contacts
    /// computed before are recomputed).
    pub fn set_pose(
        &mut self,
        h: BodyHandle,
        translation: DVec3,
        orientation: DQuat,
    ) -> Result<(), SimulationError> {
        let id = self.check(h)?;
        let q = orientation.normalize();
        if !(translation.is_finite() && q.is_finite()) {
            return Err(SimulationError::NonFinite("pose"));
        }
        let steps = self.stats.steps;
        let b = self.world.body_mut(id).expect("checked");
        b.orientation = q;
        b.position = translation + q * b.local_center();
        self.slots[id].teleported = Some(steps);
        self.wake_id(id);
        Ok(())
    }

    /// Sets a body's velocities (wakes it).
    pub fn set_velocity(
        &mut self,
        h: BodyHandle,
        linear: DVec3,
        angular: DVec3,
    ) -> Result<(), SimulationError> {
        let id = self.check(h)?;
        if !(linear.is_finite() && angular.is_finite()) {
            return Err(SimulationError::NonFinite("velocity"));
        }
        let b = self.world.body_mut(id).expect("checked");
        b.linear_velocity = linear;
        b.angular_velocity = angular;
        self.wake_id(id);
        Ok(())
    }

    /// Sets a body's contact material (does not wake it).
    pub fn set_material(
        &mut self,
        h: BodyHandle,
        material: crate::Material,
    ) -> Result<(), SimulationError> {
        let id = self.check(h)?;
        self.world.body_mut(id).expect("checked").material = material;
        Ok(())
    }

    /// Whether the body may fall asleep (default yes).
    pub fn set_can_sleep(&mut self, h: BodyHandle, can_sleep: bool) -> Result<(), SimulationError> {
        let id = self.check(h)?;
        self.slots[id].can_sleep = can_sleep;
        if !can_sleep {
            self.wake_id(id);
        }
        Ok(())
    }

    /// Wakes a sleeping body.
    pub fn wake(&mut self, h: BodyHandle) -> Result<(), SimulationError> {
        let id = self.check(h)?;
        self.wake_id(id);
        Ok(())
    }

    /// Puts a dynamic body to sleep now (velocities zeroed).
    pub fn sleep(&mut self, h: BodyHandle) -> Result<(), SimulationError> {
        let id = self.check(h)?;
        let b = self.world.body_mut(id).expect("checked");
        if b.kind == BodyKind::Dynamic {
            b.sleeping = true;
            b.linear_velocity = DVec3::ZERO;
            b.angular_velocity = DVec3::ZERO;
            self.slots[id].island = 0;
        }
        Ok(())
    }

    /// Wakes body `id` and every body that fell asleep in its island.
    pub(crate) fn wake_id(&mut self, id: BodyId) {
        let island = std::mem::take(&mut self.slots[id].island);
        let wake = |slot: &mut Slot, body: Option<&mut Body>| {
            slot.calm = 0.0;
            slot.island = 0;
            if let Some(b) = body {
                b.sleeping = false;
            }
        };
        wake(&mut self.slots[id], self.world.body_mut(id));
        if island != 0 {
            for i in 0..self.slots.len() {
                if self.slots[i].island == island {
                    wake(&mut self.slots[i], self.world.body_mut(i));
                }
            }
        }
    }

    /// User data attached to a body (the plugin keeps the entity there).
    pub fn user_data(&self, h: BodyHandle) -> Option<u64> {
        self.check(h).ok().map(|id| self.slots[id].user)
    }

    /// Attaches user data to a body.
    pub fn set_user_data(&mut self, h: BodyHandle, data: u64) -> Result<(), SimulationError> {
        let id = self.check(h)?;
        self.slots[id].user = data;
        Ok(())
    }

    /// The core world (bodies and solver).
    pub fn world(&self) -> &Integrator {
        &self.world
    }

    /// Simulated time.
    pub fn time(&self) -> f64 {
        self.world.time()
    }

    /// A contact-stage input over the current state (for queries that recompute a pair, such as
    /// the debug drawing's ray samples).
    pub fn stage_input<'a>(&'a self, candidates: &'a [(BodyId, BodyId)]) -> StageInput<'a> {
        StageInput {
            step: self.stats.steps,
            dt: self.settings.world.dt,
            gravity: self.settings.world.gravity,
            bodies: self.world.bodies(),
            colliders: &self.colliders,
            candidates,
            settings: &self.settings.contact,
        }
    }

    /// The last step's candidate pairs (by id, sorted).
    pub fn candidate_pairs(&self) -> &[(BodyId, BodyId)] {
        &self.candidates
    }

    /// The last step's pair contacts: every interfering pair (by id, sorted), with its volume,
    /// gradient and the parts the solver got.
    pub fn pair_contacts(&self) -> &[PairContact] {
        &self.output.pairs
    }

    /// Whether pair `k` of [`Self::pair_contacts`] exerted forces (not a sensor pair).
    pub fn pair_exerts(&self, k: usize) -> bool {
        self.exerts.get(k).copied().unwrap_or(false)
    }

    /// The last step's collision events.
    pub fn events(&self) -> &[CollisionEvent] {
        &self.events
    }

    /// The last step's statistics.
    pub fn stats(&self) -> &StepStats {
        &self.stats
    }

    /// Total kinetic energy.
    pub fn kinetic_energy(&self) -> f64 {
        self.world.kinetic_energy()
    }

    /// Total gravitational potential energy of the dynamic bodies.
    pub fn potential_energy(&self) -> f64 {
        self.world.potential_energy()
    }

    /// The full state as raw bits, for determinism checks.
    pub fn state_bits(&self) -> Vec<u64> {
        self.world.state_bits()
    }

    /// Advances by one fixed step with the CPU contact stage.
    pub fn step(&mut self) {
        self.run_step(None);
    }

    /// Advances by one fixed step with `stage` (a GPU backend), falling back to the CPU stage for
    /// this step if it fails.
    pub fn step_with(&mut self, stage: &mut dyn ContactStage) {
        self.run_step(Some(stage));
    }

    fn run_step(&mut self, stage: Option<&mut dyn ContactStage>) {
        let step_start = Instant::now();
        let step = self.stats.steps;
        self.events.clear();
        self.events.append(&mut self.pending_events);
        // Queued impulses first, so the swept boxes see the new velocities.
        self.world.apply_pending_impulses();

        // 1. Broad phase.
        let start = Instant::now();
        self.broad.update(
            self.world.bodies(),
            &self.colliders,
            self.settings.world.dt,
            &mut self.candidates,
        );
        self.filter_joined_pairs();
        let broad_ms = ms(start);

        // 2. Contact stage.
        let start = Instant::now();
        self.output.clear();
        let input = StageInput {
            step,
            dt: self.settings.world.dt,
            gravity: self.settings.world.gravity,
            bodies: self.world.bodies(),
            colliders: &self.colliders,
            candidates: &self.candidates,
            settings: &self.settings.contact,
        };
        let cpu = &mut self.cpu;
        match stage {
            Some(stage) => {
                if let Err(e) = stage.run(&input, &mut self.output) {
                    self.output.clear();
                    let _ = cpu.run(&input, &mut self.output);
                    self.output.report.fallback = Some(format!("{}: {e}", stage.name()));
                }
            }
            None => {
                let _ = cpu.run(&input, &mut self.output);
            }
        }
        self.recompute_teleported(step);
        self.persist(step);
        let contact_ms = ms(start);

        // 3. Wake sleeping bodies touched by moving ones: a kinematic body with a velocity, or
        // an awake dynamic body that moved faster than the sleep thresholds last step (a calm
        // one joins the island instead, and falls asleep with it).
        let mut wake = Vec::new();
        for p in &self.output.pairs {
            let bodies = self.world.bodies();
            for (x, y) in [(p.a, p.b), (p.b, p.a)] {
                let stirs = is_moving(&bodies[y])
                    && (bodies[y].kind != BodyKind::Dynamic || self.slots[y].calm == 0.0);
                if bodies[x].sleeping && stirs {
                    wake.push(x);
                }
            }
        }
        for id in wake {
            self.wake_id(id);
        }

        // 4. Events.
        self.update_events();

        // 5. Solver.
        let start = Instant::now();
        let sensor = |i: BodyId| self.colliders[i].as_ref().is_some_and(|c| c.sensor);
        self.exerts.clear();
        self.exerts.extend(
            self.output
                .pairs
                .iter()
                .map(|p| !(sensor(p.a) || sensor(p.b))),
        );
        self.speculative_exerts.clear();
        self.speculative_exerts.extend(
            self.speculative
                .iter()
                .map(|p| !(sensor(p.a) || sensor(p.b))),
        );
        self.run_hook();
        self.world
            .set_solver_threads(self.settings.contact.thread_count());
        self.world.step(&mut (
            (
                LatentSource {
                    pairs: &self.output.pairs,
                    exerts: &self.exerts,
                },
                LatentSource {
                    pairs: &self.speculative,
                    exerts: &self.speculative_exerts,
                },
            ),
            hooks::OverrideSource(&self.overrides),
        ));
        let solver_ms = ms(start);
        let work = self.world.take_solver_work();

        // 6. Sleeping.
        self.update_sleep();

        let r = &self.output.report;
        let s = &mut self.stats;
        s.steps = step + 1;
        s.bodies = self.slots.iter().filter(|x| x.alive).count();
        s.sleeping = self.world.bodies().iter().filter(|b| b.sleeping).count();
        s.candidate_pairs = self.candidates.len();
        s.interfering_pairs = self.output.pairs.len();
        s.volume_contacts = self
            .output
            .pairs
            .iter()
            .zip(&self.exerts)
            .chain(self.speculative.iter().zip(&self.speculative_exerts))
            .filter(|(_, e)| **e)
            .map(|(p, _)| p.parts.len())
            .sum();
        s.rays = r.rays;
        s.pairs_refused = r.pairs_refused;
        s.latency_pairs = r.latency_pairs;
        s.latency_steps = r.latency_steps;
        s.narrow_backend = r.narrow;
        s.volume_backend = r.volume;
        s.fallback = r.fallback.clone();
        s.broad_phase_ms = broad_ms;
        s.narrow_phase_ms = r.narrow_ms;
        s.volume_ms = r.volume_ms;
        s.contact_ms = contact_ms;
        s.gpu_ms = r.gpu_ms;
        s.solver_ms = solver_ms;
        s.solver_contacts = work.contacts;
        s.solver_sweeps = work.sweeps;
        s.solver_updates = work.updates;
        s.total_ms = ms(step_start);
    }

    /// Splits the stage's speculative pairs off the interfering ones, and keeps contacts of the
    /// previous step whose pair the stage no longer reports but is still a candidate and close:
    /// advanced to the current state their volume is negative, a speculative constraint that stops
    /// the bodies from sinking back in within the step. Without it a resting contact that the
    /// position correction has just cleared would vanish for a whole step (the body then falls
    /// freely and lands again: a rocking limit cycle). A kept contact lives while its linearized
    /// gap is within the pair's speculative margin, and at most [`Self::MAX_PERSIST`] steps. A
    /// pair still reported gets the parts of its earlier contacts that have come apart since
    /// ([`separated`]).
    fn persist(&mut self, step: u64) {
        let fresh: Vec<PairContact> = self
            .output
            .pairs
            .iter()
            .filter(|p| p.speculative)
            .cloned()
            .collect();
        self.output.pairs.retain(|p| !p.speculative);
        let old = std::mem::replace(&mut self.speculative, fresh);
        let old_interfering = std::mem::take(&mut self.last_interfering);
        let covered = |a: BodyId, b: BodyId, list: &[PairContact]| {
            list.binary_search_by_key(&(a, b), |p| (p.a, p.b)).is_ok()
        };
        self.speculative.sort_by_key(|p| (p.a, p.b));
        let dt = self.settings.world.dt;
        let bodies = self.world.bodies();
        let margin_of = |p: &PairContact| {
            [p.a, p.b]
                .iter()
                .filter_map(|&i| {
                    let shape = &self.colliders[i].as_ref()?.shape;
                    Some(crate::collision::margin::shape_margin(
                        &bodies[i], shape, dt,
                    ))
                })
                .fold(0.0, f64::max)
        };
        // Each part of `p` advanced to the current state.
        let stale = |p: &PairContact| {
            [p.a, p.b]
                .iter()
                .any(|&i| self.slots[i].teleported.is_some_and(|t| p.at_step < t))
        };
        let thinnest = |i: BodyId| {
            let (lo, hi) = self.colliders[i].as_ref()?.shape.local_box()?;
            Some((hi - lo).min_element())
        };
        let alive = |i: BodyId| self.slots[i].alive;
        let world = separated::World {
            bodies,
            alive: &alive,
            stale: &stale,
            margin: &margin_of,
            thinnest: &thinnest,
        };
        let mut kept = self
            .separated
            .update(&world, &old_interfering, &self.output.pairs, step);
        // A pair that stopped being reported keeps its last contact whole, with the separated
        // parts it had beside it (`separated`: measured at the same state, sorted by pair
        // like `old`): of two contacts of a pair only the first is kept below.
        let old_interfering: Vec<PairContact> = old_interfering
            .into_iter()
            .map(|mut p| {
                if let Ok(k) = old.binary_search_by_key(&(p.a, p.b), |c| (c.a, c.b))
                    && old[k].poses == p.poses
                    && old[k]
                        .parts
                        .iter()
                        .all(|q| q.feature & SEPARATED_FEATURE != 0)
                {
                    p.parts.extend_from_slice(&old[k].parts);
                }
                p
            })
            .collect();
        for p in old_interfering.into_iter().chain(old) {
            if p.parts.is_empty()
                || step.saturating_sub(p.at_step) > Self::MAX_PERSIST
                || covered(p.a, p.b, &self.output.pairs)
                || covered(p.a, p.b, &self.speculative)
                || self.candidates.binary_search(&(p.a, p.b)).is_err()
                || !(self.slots[p.a].alive && self.slots[p.b].alive)
                || stale(&p)
            {
                continue;
            }
            let margin = margin_of(&p);
            let now = crate::contact::latent::advanced_parts(&p, bodies);
            let volume: f64 = now.iter().map(|v| v.volume).sum();
            let area: f64 = now.iter().map(|v| v.linear.length()).sum();
            if area > 0.0 && -volume <= margin * area {
                let mut p = p;
                p.speculative = true;
                kept.push(p);
            }
        }
        self.speculative.extend(kept);
        self.speculative.sort_by_key(|p| (p.a, p.b));
        self.speculative.dedup_by_key(|p| (p.a, p.b));
        self.last_interfering = self.output.pairs.clone();
    }

    /// The most steps a contact is kept after its pair stopped being reported (see
    /// `Self::persist`).
    pub const MAX_PERSIST: u64 = 30;

    /// Pairs computed before a teleport of one of their bodies are recomputed on the CPU now.
    fn recompute_teleported(&mut self, step: u64) {
        let stale = |p: &PairContact, slots: &[Slot]| {
            [p.a, p.b]
                .iter()
                .any(|&i| slots[i].teleported.is_some_and(|t| p.at_step < t))
        };
        if !self.output.pairs.iter().any(|p| stale(p, &self.slots)) {
            return;
        }
        let redo: Vec<(BodyId, BodyId)> = self
            .output
            .pairs
            .iter()
            .filter(|p| stale(p, &self.slots))
            .map(|p| (p.a, p.b))
            .collect();
        let slots = &self.slots;
        self.output.pairs.retain(|p| !stale(p, slots));
        let input = StageInput {
            step,
            dt: self.settings.world.dt,
            gravity: self.settings.world.gravity,
            bodies: self.world.bodies(),
            colliders: &self.colliders,
            candidates: &redo,
            settings: &self.settings.contact,
        };
        let mut redone = StageOutput::default();
        let _ = self.cpu.run(&input, &mut redone);
        self.output.report.latency_pairs += redo.len();
        self.output.pairs.extend(redone.pairs);
        self.output.pairs.sort_by_key(|p| (p.a, p.b));
    }

    fn update_events(&mut self) {
        let now: BTreeSet<(BodyHandle, BodyHandle)> = self
            .output
            .pairs
            .iter()
            .filter(|p| self.slots[p.a].alive && self.slots[p.b].alive)
            .map(|p| (self.handle_of(p.a), self.handle_of(p.b)))
            .collect();
        for pair in now.difference(&self.colliding) {
            self.events.push(CollisionEvent::Started(pair.0, pair.1));
        }
        let bodies = self.world.bodies();
        let idle = |h: BodyHandle| !is_moving(&bodies[h.id()]);
        let mut kept = Vec::new();
        for pair in self.colliding.difference(&now) {
            // A pair whose bodies both stopped moving (asleep, static, or a kinematic body at
            // rest) is no longer tested, but still touches: it does not end.
            if idle(pair.0) && idle(pair.1) {
                kept.push(*pair);
            } else {
                self.events.push(CollisionEvent::Ended(pair.0, pair.1));
            }
        }
        self.colliding = now;
        self.colliding.extend(kept);
    }

    /// Updates each awake body's calm time, then puts to sleep every island whose bodies have
    /// all been calm for [`SleepSettings::time_to_sleep`] (see [`crate::solver::sleeping`]).
    fn update_sleep(&mut self) {
        let s = self.settings.sleep;
        let dt = self.settings.world.dt;
        for (id, slot) in self.slots.iter_mut().enumerate() {
            let Some(b) = self.world.body(id) else {
                continue;
            };
            if !slot.alive || b.kind != BodyKind::Dynamic || b.sleeping {
                continue;
            }
            let calm = b.linear_velocity.length() < s.linear_threshold
                && b.angular_velocity.length() < s.angular_threshold;
            slot.calm = if calm { slot.calm + dt } else { 0.0 };
        }
        if !s.enabled {
            return;
        }
        // Islands: dynamic bodies joined by this step's force-exerting contacts, and by the
        // islands they fell asleep with (pairs of two sleeping bodies are not tested).
        let bodies = self.world.bodies();
        let dynamic = |i: BodyId| self.slots[i].alive && bodies[i].kind == BodyKind::Dynamic;
        let mut islands = Islands::new(bodies.len());
        for (p, &exerts) in self.output.pairs.iter().zip(&self.exerts) {
            if exerts && dynamic(p.a) && dynamic(p.b) {
                islands.union(p.a, p.b);
            }
        }
        self.join_islands(&mut islands);
        let mut first_of: BTreeMap<u64, BodyId> = BTreeMap::new();
        for (i, slot) in self.slots.iter().enumerate() {
            if slot.island != 0 && dynamic(i) && bodies[i].sleeping {
                let first = *first_of.entry(slot.island).or_insert(i);
                islands.union(first, i);
            }
        }
        // An island sleeps when it has an awake body and every awake body may sleep and has
        // been calm long enough.
        let mut ready = vec![true; bodies.len()];
        let mut awake = vec![false; bodies.len()];
        for i in (0..bodies.len()).filter(|&i| dynamic(i)) {
            let root = islands.find(i);
            if !bodies[i].sleeping {
                awake[root] = true;
                let slot = &self.slots[i];
                ready[root] &= slot.can_sleep && slot.calm >= s.time_to_sleep;
            }
        }
        let sleepers: Vec<(BodyId, usize)> = (0..bodies.len())
            .filter(|&i| dynamic(i))
            .map(|i| (i, islands.find(i)))
            .filter(|&(_, root)| awake[root] && ready[root])
            .collect();
        for (i, root) in sleepers {
            // Island ids: the step and the representative, unique and deterministic.
            self.slots[i].island = (self.stats.steps << 32 | root as u64) + 1;
            if let Some(b) = self.world.body_mut(i) {
                b.sleeping = true;
                b.linear_velocity = DVec3::ZERO;
                b.angular_velocity = DVec3::ZERO;
            }
        }
    }
}

fn ms(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

fn check_state(body: &Body) -> Result<(), SimulationError> {
    if !(body.position.is_finite() && body.orientation.is_finite()) {
        return Err(SimulationError::NonFinite("pose"));
    }
    if !(body.linear_velocity.is_finite() && body.angular_velocity.is_finite()) {
        return Err(SimulationError::NonFinite("velocity"));
    }
    body.check_drive()?;
    Ok(())
}

/// What a removed body's slot holds until it is reused: a static body at the origin (it has no
/// collider, so it takes part in nothing).
fn vacant_body() -> Body {
    Body::fixed(DVec3::ZERO, DQuat::IDENTITY).expect("the identity pose is valid")
}

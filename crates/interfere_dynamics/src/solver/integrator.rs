//! The simulation world: bodies, gravity, a fixed timestep split into substeps, semi-implicit
//! Euler integration with exact (exponential-map) quaternion updates kept normalized, and the
//! contact pipeline of Lin–Manocha 1996 §5 (contacts found, impulses applied, clock advanced)
//! with the post-stabilization of Wang–Faure–Pai 2012 §7.
//!
//! A step first applies the impulses queued on the bodies (see [`crate::body`]), then runs its
//! substeps. One substep of length `h = dt / substeps`:
//! 1. remember the velocities; to dynamic bodies add gravity `h s g` (`s` the body's gravity
//!    scale) and their force and torque `h M⁻¹ F`, `h I⁻¹ τ`, then apply their damping and locks;
//! 2. ask the [`ContactSource`] for the contacts of the current positions, and make each volume
//!    contact region too small to resist a tilt one part (`crate::contact::parts::merge`);
//! 3. solve the velocity constraints (sequential impulses, warm started), then clamp dynamic
//!    bodies to their speed limits;
//! 4. advance positions `x += h v`, orientations `q ← exp(h ω / 2) q` (normalized);
//! 5. post-stabilize positions.
//!
//! No gyroscopic term is integrated (angular velocity is constant in free flight), which is the
//! usual stable choice for games and keeps the step simple. Everything runs sequentially in a
//! fixed order, so the same inputs give bit-identical outputs.

use crate::body::Body;
use crate::contact::{BodyId, ContactSource, Contacts};
use crate::solver::joint_rows::JointSlot;
use crate::solver::{Solver, SolverSettings};
use interfere_geometry::glam::{DQuat, DVec3};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Why world settings were refused.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum StepSettingsError {
    /// The timestep is not finite and positive, or there are no substeps.
    #[error(
        "timestep must be finite and positive with at least one substep (dt {dt}, substeps {substeps})"
    )]
    BadTimestep {
        /// The timestep.
        dt: f64,
        /// The substep count.
        substeps: u32,
    },
    /// Gravity is not finite.
    #[error("gravity must be finite")]
    BadGravity,
}

/// The integrator's parameters: gravity, the fixed timestep, its substeps and the solver.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepSettings {
    /// Gravity acceleration.
    pub gravity: DVec3,
    /// Fixed timestep of one `Integrator::step`.
    pub dt: f64,
    /// Substeps per step.
    pub substeps: u32,
    /// Contact solver parameters.
    pub solver: SolverSettings,
}

impl Default for StepSettings {
    fn default() -> Self {
        Self {
            gravity: DVec3::new(0.0, 0.0, -9.81),
            dt: 1.0 / 60.0,
            substeps: 4,
            solver: SolverSettings::default(),
        }
    }
}

fn validate(settings: &StepSettings) -> Result<(), StepSettingsError> {
    if !(settings.dt.is_finite() && settings.dt > 0.0 && settings.substeps > 0) {
        return Err(StepSettingsError::BadTimestep {
            dt: settings.dt,
            substeps: settings.substeps,
        });
    }
    if !settings.gravity.is_finite() {
        return Err(StepSettingsError::BadGravity);
    }
    Ok(())
}

/// Bodies plus the state the solver carries between steps.
#[derive(Clone, Debug)]
pub struct Integrator {
    bodies: Vec<Body>,
    settings: StepSettings,
    solver: Solver,
    contacts: Contacts,
    /// Joints by slot (removed ones stay as dead slots until reused).
    pub(crate) joints: Vec<JointSlot>,
    start_velocities: Vec<(DVec3, DVec3)>,
    time: f64,
    steps: u64,
}

impl Integrator {
    /// An empty world.
    pub fn new(settings: StepSettings) -> Result<Self, StepSettingsError> {
        validate(&settings)?;
        Ok(Self {
            bodies: Vec::new(),
            settings,
            solver: Solver::new(settings.solver),
            contacts: Contacts::default(),
            joints: Vec::new(),
            start_velocities: Vec::new(),
            time: 0.0,
            steps: 0,
        })
    }

    /// The settings.
    pub fn settings(&self) -> &StepSettings {
        &self.settings
    }

    /// Changes the settings, keeping the bodies and the solver's warm-start cache.
    pub fn set_settings(&mut self, settings: StepSettings) -> Result<(), StepSettingsError> {
        validate(&settings)?;
        self.settings = settings;
        self.solver.settings = settings.solver;
        Ok(())
    }

    /// Replaces body `id` (no effect for an unknown id).
    pub(crate) fn replace_body(&mut self, id: BodyId, body: Body) {
        if let Some(b) = self.bodies.get_mut(id) {
            *b = body;
        }
    }

    /// Threads for the solver's contact sweeps (the results do not depend on it).
    pub(crate) fn set_solver_threads(&mut self, threads: usize) {
        self.solver.threads = threads;
    }

    /// What the solver's velocity phase did since the last call.
    pub(crate) fn take_solver_work(&mut self) -> crate::solver::SolverWork {
        self.solver.take_work()
    }

    /// Drops what the solver remembers of body `id` (it was removed).
    pub(crate) fn forget_body(&mut self, id: BodyId) {
        self.solver.forget_body(id);
    }

    /// Adds a body; its id is its index.
    pub fn add_body(&mut self, body: Body) -> BodyId {
        self.bodies.push(body);
        self.bodies.len() - 1
    }

    /// All bodies, indexed by id.
    pub fn bodies(&self) -> &[Body] {
        &self.bodies
    }

    /// One body.
    pub fn body(&self, id: BodyId) -> Option<&Body> {
        self.bodies.get(id)
    }

    /// One body, mutably (to set velocities or teleport it).
    pub fn body_mut(&mut self, id: BodyId) -> Option<&mut Body> {
        self.bodies.get_mut(id)
    }

    /// Simulated time.
    pub fn time(&self) -> f64 {
        self.time
    }

    /// Steps taken.
    pub fn step_count(&self) -> u64 {
        self.steps
    }

    /// The contacts of the last substep, as the solver took them (a volume contact region too
    /// small to resist a tilt as one part, `crate::contact::parts::merge`).
    pub fn last_contacts(&self) -> &Contacts {
        &self.contacts
    }

    /// Total kinetic energy.
    pub fn kinetic_energy(&self) -> f64 {
        self.bodies.iter().map(Body::kinetic_energy).sum()
    }

    /// Total gravitational potential energy `−Σ m g·x` of the dynamic bodies.
    pub fn potential_energy(&self) -> f64 {
        self.bodies
            .iter()
            .filter(|b| b.kind == crate::body::BodyKind::Dynamic)
            .map(|b| -b.mass() * self.settings.gravity.dot(b.position))
            .sum()
    }

    /// The full state as raw bits (positions, orientations, velocities), for determinism checks.
    pub fn state_bits(&self) -> Vec<u64> {
        let mut out = Vec::with_capacity(self.bodies.len() * 13);
        for b in &self.bodies {
            let q: DQuat = b.orientation;
            for x in b
                .position
                .to_array()
                .into_iter()
                .chain(q.to_array())
                .chain(b.linear_velocity.to_array())
                .chain(b.angular_velocity.to_array())
            {
                out.push(x.to_bits());
            }
        }
        out
    }

    /// Applies the impulses queued on the bodies (and clears them); [`Self::step`] starts with
    /// this, and [`crate::Simulation`] calls it before its broad phase so the new velocities
    /// size the swept boxes.
    pub(crate) fn apply_pending_impulses(&mut self) {
        for b in &mut self.bodies {
            b.apply_pending();
        }
    }

    /// Advances by one fixed timestep, querying `source` for contacts at every substep.
    pub fn step(&mut self, source: &mut dyn ContactSource) {
        self.apply_pending_impulses();
        let h = self.settings.dt / self.settings.substeps as f64;
        for _ in 0..self.settings.substeps {
            self.substep(source, h);
        }
        self.steps += 1;
        self.time = self.steps as f64 * self.settings.dt;
    }

    fn substep(&mut self, source: &mut dyn ContactSource, h: f64) {
        let g = self.settings.gravity;
        self.start_velocities.clear();
        for b in &mut self.bodies {
            self.start_velocities
                .push((b.linear_velocity, b.angular_velocity));
            if b.is_dynamic() {
                b.integrate_velocity(g, h);
            }
        }
        self.contacts.clear();
        source.contacts(&self.bodies, &mut self.contacts);
        // A region whose parts lie too close together for their lever arms to matter is one
        // row, not four the sweeps cannot tell apart.
        crate::contact::parts::merge::merge_unresolved_parts(
            &mut self.contacts.volumes,
            &self.bodies,
        );
        self.solver.solve_velocities(
            &mut self.bodies,
            &self.contacts,
            &self.start_velocities,
            h,
            g,
            &mut self.joints,
        );
        for b in &mut self.bodies {
            if b.kind == crate::body::BodyKind::Static {
                continue;
            }
            if b.is_dynamic() {
                b.limit_velocity();
            }
            b.position += b.linear_velocity * h;
            let w = b.angular_velocity * h;
            if w != DVec3::ZERO {
                b.orientation = (DQuat::from_scaled_axis(w) * b.orientation).normalize();
            }
        }
        self.solver
            .stabilize_positions(&mut self.bodies, h, &self.joints);
    }
}

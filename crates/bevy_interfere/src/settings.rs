//! Resources that steer the simulation: global settings, the contact backend, and the per-step
//! statistics the debug overlay shows.

use bevy::prelude::*;
use interfere_dynamics::{
    ContactSettings, SimulationSettings, SleepSettings, SolverSettings, StepSettings, StepStats,
    VolumeMethod,
};

/// Where the contact stage (narrow phase and volumes) runs. Selectable at run time, in either
/// direction.
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Reflect)]
#[reflect(Resource, Debug, Default, PartialEq)]
pub enum Backend {
    /// Exact OBBTree narrow phase and the configured volume method on the CPU, all cores.
    #[default]
    Cpu,
    /// One GPU job per step (CInDeR, Knott–Pai 2003; the triangle traversal of Greß–Zachmann
    /// 2004 when asked; every pair's uniform volume in one batched dispatch), asynchronous: the
    /// answer for step `n` is used when it arrives (normally at `n + 1`) and advanced to the
    /// current poses by its gradient; pairs it does not cover are done on the CPU. Nothing waits
    /// for the GPU on the main or the render thread. See [`crate::gpu_backend`].
    Gpu,
    /// The same GPU job, waited for in the step (headless simulation, tests).
    GpuBlocking,
}

impl Backend {
    /// Display name.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Cpu => "cpu",
            Backend::Gpu => "gpu",
            Backend::GpuBlocking => "gpu-blocking",
        }
    }
}

/// When colliders are prepared (their meshes' hierarchies built, mass properties computed).
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Reflect)]
#[reflect(Resource, Debug, Default, PartialEq)]
pub enum ColliderPreparation {
    /// On the async compute pool: the frame never waits, and a body joins the simulation in the
    /// first step after its collider is ready, which depends on the machine's speed (a run is
    /// not reproducible when bodies wait for large meshes).
    #[default]
    Background,
    /// In the system that finds the collider, before the next step: every body joins in the
    /// step after it is spawned, so headless runs and tests are reproducible. A large mesh
    /// stalls that frame.
    Blocking,
}

/// Global simulation settings (the Bevy face of [`SimulationSettings`]; the timestep is
/// `Time<Fixed>`'s).
#[derive(Resource, Clone, Debug, PartialEq)]
pub struct PhysicsSettings {
    /// Gravity (world units per second squared).
    pub gravity: Vec3,
    /// Solver substeps per fixed step (contacts are found once per step and advanced to each
    /// substep by their volume gradient).
    pub substeps: u32,
    /// Solver iterations, slops and thresholds.
    pub solver: SolverSettings,
    /// How pair volumes are computed on the CPU.
    pub volume: VolumeMethod,
    /// Pairs whose volume query needs more rays than this are refused (counted in
    /// [`PhysicsStats`]).
    pub max_rays_per_pair: u64,
    /// Report every intersecting triangle pair in [`crate::ContactMessage`] (the narrow phase
    /// then runs to completion instead of stopping at the first pair).
    pub all_triangle_pairs: bool,
    /// Sleeping.
    pub sleep: SleepSettings,
    /// While set, fixed steps do nothing.
    pub paused: bool,
    /// Steps to take while paused (decremented by each step; the overlay's "step" button).
    pub single_steps: u32,
    /// Bodies whose centre leaves the cube `|x|, |y|, |z| ≤ world_bound` (metres), or whose
    /// state stops being finite, are reported with a warning and parked: they get [`crate::Parked`]
    /// and leave the simulation (the rest keeps stepping); removing `Parked` lets them rejoin
    /// at their `Transform`.
    pub world_bound: f32,
}

impl Default for PhysicsSettings {
    fn default() -> Self {
        let contact = ContactSettings::default();
        Self {
            gravity: Vec3::new(0.0, -9.81, 0.0),
            substeps: 4,
            solver: SolverSettings::default(),
            volume: contact.volume,
            max_rays_per_pair: contact.max_rays_per_pair,
            all_triangle_pairs: contact.all_triangle_pairs,
            sleep: SleepSettings::default(),
            paused: false,
            single_steps: 0,
            world_bound: 1.0e4,
        }
    }
}

impl PhysicsSettings {
    /// The simulation settings for a fixed step of `dt` seconds.
    pub fn simulation(&self, dt: f64) -> SimulationSettings {
        SimulationSettings {
            world: StepSettings {
                gravity: self.gravity.as_dvec3(),
                dt,
                substeps: self.substeps.max(1),
                solver: self.solver,
            },
            contact: ContactSettings {
                volume: self.volume,
                max_rays_per_pair: self.max_rays_per_pair,
                all_triangle_pairs: self.all_triangle_pairs,
                threads: 0,
            },
            sleep: self.sleep,
        }
    }
}

/// Counts and timings of the last fixed step (for the overlay and benches): the simulation's
/// own [`StepStats`] plus what the plugin adds around it.
#[derive(Resource, Clone, Debug, Default, PartialEq)]
pub struct PhysicsStats {
    /// The simulation's statistics of the last step (stage timings, pair counts, the backends
    /// that actually ran, a fallback's reason, the GPU latency in steps).
    pub step: StepStats,
    /// The backend that was asked for.
    pub backend: Backend,
    /// Milliseconds mirroring the ECS into the simulation.
    pub sync_ms: f64,
    /// Milliseconds in the simulation's step (broad phase, contacts, solver, sleeping).
    pub step_ms: f64,
    /// Milliseconds writing transforms, velocities and messages back.
    pub writeback_ms: f64,
}

impl PhysicsStats {
    /// Total milliseconds of the last fixed step on the main thread.
    pub fn total_ms(&self) -> f64 {
        self.sync_ms + self.step_ms + self.writeback_ms
    }

    /// Steps taken.
    pub fn steps(&self) -> u64 {
        self.step.steps
    }
}

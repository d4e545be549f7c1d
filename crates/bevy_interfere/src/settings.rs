//! Resources that steer the simulation: global settings, the narrow-phase backend, sleeping,
//! and the per-step statistics the debug overlay shows.

use bevy::prelude::*;
use interfere_dynamics::{ContactSampling, SolverSettings};

/// Where the narrow phase (interfering pairs) runs. Selectable at run time.
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Reflect)]
#[reflect(Resource, Debug, Default, PartialEq)]
pub enum Backend {
    /// Exact OBBTree traversal with exact triangle tests on the CPU (Gottschalk–Lin–Manocha).
    #[default]
    Cpu,
    /// CInDeR on the GPU (Knott–Pai 2003), asynchronous: the pairs found for the poses of step
    /// `n` are used at step `n + 1`; see [`crate::gpu_backend`] for how the latency is handled.
    Gpu,
    /// CInDeR on the GPU, waiting for this step's result (headless simulation, tests).
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

/// Global simulation settings.
#[derive(Resource, Clone, Debug, PartialEq)]
pub struct PhysicsSettings {
    /// Gravity (world units per second squared).
    pub gravity: Vec3,
    /// Solver substeps per fixed step (contacts are found once per step and advanced to each
    /// substep by their volume gradient).
    pub substeps: u32,
    /// Solver iterations, slops and thresholds.
    pub solver: SolverSettings,
    /// Volume ray spacing as a fraction of the smaller collider size of a pair (smaller is more
    /// accurate and costs rays quadratically).
    pub volume_spacing: f32,
    /// Absolute volume ray spacing in world units; overrides `volume_spacing` when set.
    pub volume_spacing_absolute: Option<f32>,
    /// At most this many rays per pair and axis grid; larger queries are skipped with a count
    /// in [`PhysicsStats::pairs_refused`].
    pub max_rays_per_pair: u64,
    /// How pair volumes are sampled: [`ContactSampling::Uniform`] (the default: a lattice of
    /// spacing `volume_spacing` / `volume_spacing_absolute`, fixed in A's frame) or
    /// [`ContactSampling::Adaptive`] (Wang–Faure–Pai 2012 §3–5: EBPI tiles within a per-pair ray
    /// budget, also capped by `max_rays_per_pair`; the spacing settings are then unused).
    /// Adaptive sampling runs on the CPU only: with it, the GPU backends still find the pairs on
    /// the GPU but sample their volumes on the CPU (`gpu_volume` is ignored).
    pub volume_sampling: ContactSampling,
    /// CInDeR image resolution (pixels per side) for the GPU backends.
    pub cinder_resolution: u32,
    /// Report every intersecting triangle pair in [`crate::ContactMessage`] (the narrow phase
    /// then runs to completion instead of stopping at the first pair).
    pub all_triangle_pairs: bool,
    /// GPU backends: confirm every pair CInDeR reports with the exact CPU test (CInDeR is run
    /// conservatively and also reports touching pairs).
    pub gpu_exact_confirm: bool,
    /// GPU backends: sample the intersection volumes on the GPU too (`interfere_gpu::GpuVolume`,
    /// equal to the CPU's line by line).
    pub gpu_volume: bool,
    /// While set, fixed steps do nothing.
    pub paused: bool,
    /// Steps to take while paused (decremented by each step; the overlay's "step" button).
    pub single_steps: u32,
}

impl Default for PhysicsSettings {
    fn default() -> Self {
        Self {
            gravity: Vec3::new(0.0, -9.81, 0.0),
            substeps: 4,
            solver: SolverSettings::default(),
            volume_spacing: 0.125,
            volume_spacing_absolute: None,
            max_rays_per_pair: 1 << 18,
            volume_sampling: ContactSampling::Uniform,
            cinder_resolution: 256,
            all_triangle_pairs: false,
            gpu_exact_confirm: true,
            gpu_volume: true,
            paused: false,
            single_steps: 0,
        }
    }
}

/// When resting bodies go to sleep.
#[derive(Resource, Clone, Copy, Debug, PartialEq, Reflect)]
#[reflect(Resource, Debug, PartialEq)]
pub struct SleepSettings {
    /// Whether bodies sleep at all.
    pub enabled: bool,
    /// Linear speed below which a body counts as resting.
    pub linear_threshold: f32,
    /// Angular speed below which a body counts as resting.
    pub angular_threshold: f32,
    /// Seconds a body must rest before it sleeps.
    pub time_to_sleep: f32,
}

impl Default for SleepSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            linear_threshold: 0.02,
            angular_threshold: 0.05,
            time_to_sleep: 1.0,
        }
    }
}

/// Counts and timings of the last fixed step, per stage (for the overlay and benches).
#[derive(Resource, Clone, Debug, Default, PartialEq)]
pub struct PhysicsStats {
    /// Steps taken.
    pub steps: u64,
    /// Bodies in the world.
    pub bodies: usize,
    /// Backend that produced the last narrow phase.
    pub backend: Backend,
    /// Pairs whose world boxes overlap (sweep and prune).
    pub candidate_pairs: usize,
    /// Pairs that interfere (narrow phase).
    pub interfering_pairs: usize,
    /// Pairs the GPU backend handed to the CPU because the GPU had not seen them yet.
    pub latency_pairs: usize,
    /// Volume contacts given to the solver.
    pub volume_contacts: usize,
    /// Rays cast by the volume stage.
    pub rays: usize,
    /// Pairs whose volume query was refused (too many rays).
    pub pairs_refused: usize,
    /// Milliseconds in the body synchronisation.
    pub sync_ms: f64,
    /// Milliseconds in sweep and prune.
    pub broad_phase_ms: f64,
    /// Milliseconds in the narrow phase (wall clock, including GPU waits).
    pub narrow_phase_ms: f64,
    /// Milliseconds of GPU work reported by the GPU backend (end to end, including readback).
    pub gpu_ms: Option<f64>,
    /// Whether the last volume stage ran on the GPU.
    pub volume_on_gpu: bool,
    /// Milliseconds in the volume stage.
    pub volume_ms: f64,
    /// Milliseconds in the solver.
    pub solver_ms: f64,
    /// Milliseconds writing transforms and messages back.
    pub writeback_ms: f64,
}

impl PhysicsStats {
    /// Total milliseconds of the last step.
    pub fn total_ms(&self) -> f64 {
        self.sync_ms
            + self.broad_phase_ms
            + self.narrow_phase_ms
            + self.volume_ms
            + self.solver_ms
            + self.writeback_ms
    }
}

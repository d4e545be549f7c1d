//! Counts and timings of the last step of a [`crate::Simulation`], per stage, with the backends
//! that actually ran each stage (for the overlay, examples' reports and benches).

/// What the last step did and how long each stage took (milliseconds on the calling thread).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepStats {
    /// Steps taken so far.
    pub steps: u64,
    /// Bodies in the simulation.
    pub bodies: usize,
    /// Of which asleep.
    pub sleeping: usize,
    /// Candidate pairs from the broad phase.
    pub candidate_pairs: usize,
    /// Pairs that interfere.
    pub interfering_pairs: usize,
    /// Volume contacts given to the solver (speculative ones included).
    pub volume_contacts: usize,
    /// Lines cast by ray-sampled volumes.
    pub rays: usize,
    /// Pairs whose volume query was refused.
    pub pairs_refused: usize,
    /// Pairs an asynchronous stage left to the CPU this step.
    pub latency_pairs: usize,
    /// Age in steps of the asynchronous answer used this step.
    pub latency_steps: Option<u64>,
    /// What ran the narrow phase this step.
    pub narrow_backend: &'static str,
    /// What ran the volumes this step.
    pub volume_backend: &'static str,
    /// Why the configured stage failed and the CPU stage ran instead, if it did.
    pub fallback: Option<String>,
    /// Broad phase.
    pub broad_phase_ms: f64,
    /// Narrow phase.
    pub narrow_phase_ms: f64,
    /// Volumes.
    pub volume_ms: f64,
    /// The contact stage as a whole (narrow phase, volumes and an asynchronous stage's own
    /// bookkeeping).
    pub contact_ms: f64,
    /// GPU job end to end, when one answered.
    pub gpu_ms: Option<f64>,
    /// Solver (all substeps).
    pub solver_ms: f64,
    /// Contact constraints the solver built, summed over the substeps.
    pub solver_contacts: u64,
    /// Velocity sweeps, summed over the substeps.
    pub solver_sweeps: u64,
    /// Contact updates over all sweeps and substeps (the sweeps' work: each updates a contact's
    /// friction and normal rows).
    pub solver_updates: u64,
    /// The whole step.
    pub total_ms: f64,
}

//! The replaceable stages of a step and what flows between them.
//!
//! A [`crate::Simulation`] step runs: broad phase (sweep and prune, Lin–Manocha 1996 §4.1) →
//! **contact stage** → solver. The contact stage turns the broad phase's candidate pairs into
//! [`PairContact`]s: the pairs that interfere (narrow phase: CInDeR's Theorem 1, an edge of one
//! surface through the other or one solid inside the other) and their intersection volume with
//! its gradient (Wang–Faure–Pai 2012 §2.2), split into the volume contacts the solver takes.
//!
//! - [`ContactStage`] is the unit a backend replaces. The CPU one, [`crate::CpuContacts`]
//!   (in [`crate::contact::cpu_stage`]), is a
//!   [`NarrowPhase`] followed by a [`VolumeStage`] (both small traits, with CPU implementations
//!   in [`crate::contact::narrow_phase`] and [`crate::contact::volume_stage`]). The GPU stages (in `interfere_gpu`)
//!   implement [`ContactStage`] directly: one GPU job per step does both.
//! - A stage may answer from an earlier step (an asynchronous GPU job): each [`PairContact`]
//!   records the step and the body states it was computed at, and the simulation advances it to
//!   the current poses by its gradient (see [`crate::simulation`]).
//! - A stage that fails returns a [`StageError`]; the simulation then runs its CPU stage for that
//!   step (nothing is lost) and reports the fallback.

use crate::body::Body;
use crate::collision::shape::{BodyShape, MeshShape, Shape};
use crate::contact::parts::sampled::{AdaptiveSampling, MeshSpacing};
use crate::contact::{BodyId, VolumeContact};
use interfere_geometry::DPose;
use interfere_geometry::glam::{DQuat, DVec3};
use std::sync::Arc;

/// How pair volumes are computed on the CPU.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum VolumeMethod {
    /// The exact intersection volume and gradient from the surfaces in contact
    /// (`interfere_geometry::volume::exact`): no resolution, no spacing to tune; its cost follows
    /// the crossing triangles and the triangles inside the other solid.
    Exact,
    /// Uniform ray sampling on a lattice fixed in A's frame (Wang–Faure–Pai 2012 §2.2, Eq. 1–2).
    Uniform {
        /// The lattice spacing rule.
        spacing: MeshSpacing,
    },
    /// Adaptive EBPI sampling (§3–5) within a ray budget per pair.
    Adaptive(AdaptiveSampling),
}

impl Default for VolumeMethod {
    /// [`VolumeMethod::Exact`].
    fn default() -> Self {
        VolumeMethod::Exact
    }
}

impl VolumeMethod {
    /// A short lower-case name.
    pub fn name(&self) -> &'static str {
        match self {
            VolumeMethod::Exact => "exact",
            VolumeMethod::Uniform { .. } => "uniform",
            VolumeMethod::Adaptive(_) => "adaptive",
        }
    }
}

/// What the contact stage computes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactSettings {
    /// How volumes are computed on the CPU.
    pub volume: VolumeMethod,
    /// Pairs whose volume query needs more lines than this are refused (counted, no contact).
    pub max_rays_per_pair: u64,
    /// Report every intersecting triangle pair (otherwise the narrow phase stops at the first).
    pub all_triangle_pairs: bool,
    /// Worker threads for per-pair work and the solver's contact sweeps (0: every core, or
    /// `INTERFERE_THREADS`). Results do not depend on it.
    pub threads: usize,
}

impl ContactSettings {
    /// The worker thread count to use.
    pub fn thread_count(&self) -> usize {
        if self.threads > 0 {
            self.threads
        } else {
            crate::parallel::thread_count()
        }
    }
}

impl Default for ContactSettings {
    fn default() -> Self {
        Self {
            volume: VolumeMethod::default(),
            max_rays_per_pair: 1 << 18,
            all_triangle_pairs: false,
            threads: 0,
        }
    }
}

/// What a contact stage sees: the bodies at the start of the step, their colliders, the broad
/// phase's candidate pairs (`(a, b)` with `a < b`, sorted) and the settings.
#[derive(Clone, Copy)]
pub struct StageInput<'a> {
    /// The step being computed (0 for the first).
    pub step: u64,
    /// The fixed step's length in seconds (for speculative margins).
    pub dt: f64,
    /// The world's gravity: where a body at rest is carried within the step (the look ahead of
    /// pairs not yet in contact, `crate::contact::speculative`).
    pub gravity: DVec3,
    /// Every body, by id.
    pub bodies: &'a [Body],
    /// Every body's collider, by id.
    pub colliders: &'a [Option<BodyShape>],
    /// Candidate pairs.
    pub candidates: &'a [(BodyId, BodyId)],
    /// The settings.
    pub settings: &'a ContactSettings,
}

/// The two meshes of a mesh–mesh pair, A's mesh pose and B's mesh pose in A's frame.
pub type MeshPair<'a> = (&'a Arc<MeshShape>, &'a Arc<MeshShape>, DPose, DPose);

impl<'a> StageInput<'a> {
    /// The same input with other candidates (a stage's fallback for a subset).
    pub fn with_candidates(&self, candidates: &'a [(BodyId, BodyId)]) -> Self {
        Self {
            candidates,
            ..*self
        }
    }

    /// The shape of body `i`, if it has a collider.
    pub fn shape(&self, i: BodyId) -> Option<&'a Shape> {
        self.colliders.get(i)?.as_ref().map(|c| &c.shape)
    }

    /// Both meshes of a mesh–mesh pair with A's pose and B's pose in A's frame; `None` unless
    /// both bodies exist and carry meshes.
    pub fn mesh_pair(&self, a: BodyId, b: BodyId) -> Option<MeshPair<'a>> {
        let (Some(Shape::Mesh(ma)), Some(Shape::Mesh(mb))) = (self.shape(a), self.shape(b)) else {
            return None;
        };
        let pa = self.bodies.get(a)?.mesh_pose();
        let pb = self.bodies.get(b)?.mesh_pose();
        Some((ma, mb, pa, pa.inverse().mul(&pb)))
    }

    /// Whether the narrow phase must find every crossing triangle pair (asked for, or needed by
    /// the volume method).
    pub fn needs_all_triangle_pairs(&self) -> bool {
        self.settings.all_triangle_pairs || self.settings.volume == VolumeMethod::Exact
    }
}

/// A pair the narrow phase found interfering.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InterferingPair {
    /// First body (`a < b`).
    pub a: BodyId,
    /// Second body.
    pub b: BodyId,
    /// Intersecting triangle pairs `(triangle of a, triangle of b)`: the first found, or all of
    /// them when asked for; empty for nested solids, half-spaces, and GPU pairs without the
    /// triangle traversal.
    pub triangle_pairs: Vec<(u32, u32)>,
    /// One solid lies inside the other (no triangle crosses).
    pub contained: bool,
    /// The pair does not interfere but is close enough that the volume stage should give it
    /// speculative contacts (negative volume: the solver lets the gap close but no more).
    pub speculative: bool,
}

/// The contact of one interfering pair, as computed at step `at_step` from the body states
/// `poses`.
#[derive(Clone, Debug, PartialEq)]
pub struct PairContact {
    /// First body (`a < b`).
    pub a: BodyId,
    /// Second body.
    pub b: BodyId,
    /// Intersection volume (0 when the pair touches, or the sampling found no volume).
    pub volume: f64,
    /// `∂V/∂x_b`, world space.
    pub linear: DVec3,
    /// `∂V/∂θ_b` about `point`, world space.
    pub angular: DVec3,
    /// Where the contact acts (the centroid of the contact surface on b).
    pub point: DVec3,
    /// The volume contacts given to the solver (up to four per contact region), and for a
    /// moving pair the speculative parts of the contact its motion would make
    /// ([`VolumeContact::is_predicted`]).
    pub parts: Vec<VolumeContact>,
    /// Lines cast (0 for exact methods).
    pub rays: usize,
    /// Why the volume query was refused, if it was (the pair then has no parts).
    pub refused: Option<String>,
    /// Intersecting triangle pairs (see [`InterferingPair::triangle_pairs`]).
    pub triangle_pairs: Vec<(u32, u32)>,
    /// One solid inside the other.
    pub contained: bool,
    /// Not an interfering pair: speculative parts only (see [`InterferingPair::speculative`]).
    pub speculative: bool,
    /// The parts' points follow body b's centre of mass but not its rotation when the contact is
    /// advanced to later states (`contact::latent`): set for pairs with a primitive or compound,
    /// whose curved surfaces keep their contact point where the bodies meet while they turn (a
    /// rolling ball's contact stays under its centre; carried round with the material it would
    /// put the support force off the centre and drive the rolling). Mesh contacts turn with b.
    pub rolling: bool,
    /// The step whose start state this was computed from.
    pub at_step: u64,
    /// `(position, orientation)` of a and b at that state.
    pub poses: [(DVec3, DQuat); 2],
}

impl PairContact {
    /// A contact without volume for an interfering pair at the bodies' current states.
    pub fn touching(p: InterferingPair, bodies: &[Body], step: u64) -> Self {
        let state = |i: BodyId| {
            bodies.get(i).map_or((DVec3::ZERO, DQuat::IDENTITY), |b| {
                (b.position, b.orientation)
            })
        };
        Self {
            a: p.a,
            b: p.b,
            volume: 0.0,
            linear: DVec3::ZERO,
            angular: DVec3::ZERO,
            point: DVec3::ZERO,
            parts: Vec::new(),
            rays: 0,
            refused: None,
            poses: [state(p.a), state(p.b)],
            triangle_pairs: p.triangle_pairs,
            contained: p.contained,
            speculative: p.speculative,
            rolling: false,
            at_step: step,
        }
    }
}

/// What a stage did this step (for statistics and the reports of examples).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StageReport {
    /// What ran the narrow phase (`"cpu-obb"`, `"gpu-cinder"`, …).
    pub narrow: &'static str,
    /// What ran the volumes (`"cpu-uniform"`, `"gpu-uniform"`, …).
    pub volume: &'static str,
    /// Milliseconds in the narrow phase on the calling thread.
    pub narrow_ms: f64,
    /// Milliseconds in the volumes on the calling thread.
    pub volume_ms: f64,
    /// GPU job end to end (submit to answer), when a GPU answer was used.
    pub gpu_ms: Option<f64>,
    /// Lines cast.
    pub rays: usize,
    /// Pairs whose volume query was refused.
    pub pairs_refused: usize,
    /// Candidate pairs an asynchronous stage decided on the CPU because its answer did not
    /// cover them (new since the job left).
    pub latency_pairs: usize,
    /// Age in steps of the asynchronous answer used (0: computed for this step's poses).
    pub latency_steps: Option<u64>,
    /// Set when the stage failed and the CPU stage ran instead: why.
    pub fallback: Option<String>,
}

/// A stage's output for one step.
#[derive(Clone, Debug, Default)]
pub struct StageOutput {
    /// One contact per interfering pair, sorted by `(a, b)`.
    pub pairs: Vec<PairContact>,
    /// What happened.
    pub report: StageReport,
}

impl StageOutput {
    /// Clears the pairs and the report.
    pub fn clear(&mut self) {
        self.pairs.clear();
        self.report = StageReport::default();
    }
}

/// Why a stage could not answer (the simulation falls back to the CPU for that step).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StageError {
    /// The GPU failed (device lost, limit refused, readback failed, …).
    #[error("GPU: {0}")]
    Gpu(String),
    /// The stage is not available (for example not set up yet).
    #[error("unavailable: {0}")]
    Unavailable(String),
}

/// Finds the interfering pairs among the candidates.
pub trait NarrowPhase: Send + Sync {
    /// A short name for reports.
    fn name(&self) -> &'static str;
    /// Appends the interfering pairs among `input.candidates`, in candidate order.
    fn interfering(&mut self, input: &StageInput<'_>, out: &mut Vec<InterferingPair>);
    /// Takes out the OBBTree traversal front mesh–mesh pair `(a, b)` (meshes of ids `meshes`)
    /// was left with, for a look ahead that brings it to other poses of the pair
    /// (`interfere_geometry::bvh::front`; `crate::contact::speculative`). The pair has no front
    /// until [`NarrowPhase::keep_front`] gives one back. `None` by default and when it has none
    /// for these meshes.
    fn take_front(
        &mut self,
        _a: BodyId,
        _b: BodyId,
        _meshes: (u64, u64),
    ) -> Option<interfere_geometry::TraversalFront> {
        None
    }
    /// Gives mesh–mesh pair `(a, b)` a traversal front of its meshes `meshes`, wherever it was
    /// brought to (a front taken by [`NarrowPhase::take_front`] and moved to where the pair is
    /// predicted to be): the next [`NarrowPhase::interfering`] resumes from it. Dropped by
    /// default.
    fn keep_front(
        &mut self,
        _a: BodyId,
        _b: BodyId,
        _meshes: (u64, u64),
        _front: interfere_geometry::TraversalFront,
    ) {
    }
}

/// Computes the volume contacts of interfering pairs.
pub trait VolumeStage: Send + Sync {
    /// A short name for reports.
    fn name(&self) -> &'static str;
    /// Appends one [`PairContact`] per pair of `pairs`, in order; returns the lines cast.
    fn contacts(
        &mut self,
        input: &StageInput<'_>,
        pairs: Vec<InterferingPair>,
        out: &mut Vec<PairContact>,
    ) -> usize;
}

/// Turns candidate pairs into pair contacts (narrow phase and volumes together).
pub trait ContactStage: Send {
    /// A short name for reports.
    fn name(&self) -> &'static str;
    /// Fills `out` (cleared by the caller) for `input`.
    fn run(&mut self, input: &StageInput<'_>, out: &mut StageOutput) -> Result<(), StageError>;
}

//! One GPU job per physics step: all of a step's GPU work (whole-scene CInDeR, Knott & Pai
//! 2003; the Greß–Zachmann 2004 triangle traversal; the uniform intersection volume of Wang,
//! Faure & Pai 2012, §2.2, for every pair) recorded into one command encoder, submitted at once
//! and read back through one staging buffer with one `map_async`, without ever waiting.
//!
//! **Flow.** [`StepJobRunner::submit`] prepares the step on the host (world-space meshes for
//! CInDeR, each pair's volume lines in its local frame, the traversal's palette), records every
//! stage and submits; it returns a [`PendingJob`]. [`StepJobRunner::poll_ready`] polls the
//! device without blocking (`PollType::Poll`) and looks at the map callback's flag: `None` while
//! the GPU works, else a [`ReadyJob`] holding the raw results. [`ReadyJob::finish`] does the CPU
//! work (exact recasts of the flagged volume lines and the per-pair reduction, the exact filter
//! of the traversal's triangle pairs) and can run on any thread; [`StepJobRunner::poll`] is both
//! in one call, and [`StepJobRunner::run_blocking`] submits and waits.
//!
//! **Inside one round** (one submission):
//! 1. CInDeR over the objects of the candidate pairs (`Cinder::run`'s views, with the views along
//!    `x` and `y` drawn indirectly, only when `z` found nothing under
//!    [`CinderViews::ZThenXy`](crate::CinderViews::ZThenXy)), then a kernel extracts one flag per
//!    candidate pair from the pair bitset;
//! 2. the palette traversal of the flagged pairs (all pairs without CInDeR), seeded on the GPU
//!    from those flags, each step's list length set up on the GPU for the next step's indirect
//!    dispatches (`shaders/palette_control.wgsl`);
//! 3. one dispatch casting the volume lines of every pair (a per-pair table: local frame,
//!    grids, where the pair's vertices, refitted nodes and meshes are).
//!
//! **Sizes without readbacks.** The list storage of CInDeR comes from the projected areas (an
//! upper estimate); the traversal's list and hit capacities and the volume's record capacity come
//! from the previous job's measured sizes (see [`JobCapacities`]). Every stage counts with
//! atomics what it wanted to write. A stage that overflowed is recorded again, with the measured
//! size, in a second round (a stage that depends on it too: a new CInDeR answer means a new
//! traversal); stages that fitted keep their results. So a step is never lost and never waits:
//! the job just takes one more round ([`StepJobAnswer::rounds`]).
//!
//! **Errors.** Everything recorded runs inside wgpu error scopes, so a wgpu error (including the
//! invalid resources of a lost or destroyed device) is a [`GpuError`], not the device's panic
//! handler; a readback that never arrives while the queue is empty is
//! [`GpuError::DeviceLost`]. A failed job loses nothing but itself: the caller computes that
//! step on the CPU.
//!
//! **Meshes** are uploaded once per [`JobMesh::id`] (with their trees) and kept while used; an
//! id unused for [`StepJobRunner::evict_after`] jobs is dropped at the next upload.

mod arena;
mod decode;
mod plan;
mod record;

use crate::bvh_traversal::GpuTriangleTraversal;
use crate::bvh_traversal::palette::{
    GpuMeshSet, ObjectPair, RoundSpec, Start, TraversalOutcome, TraversalRegions, TraversalRound,
    palette_entries,
};
use crate::cinder::scene::{
    self, CinderScene, NOT_DRAWN, Projection, SceneOutcome, ScenePipelines, SceneRegions,
    SceneRound,
};
use crate::cinder::{CinderObject, CinderSceneOptions};
use crate::context::GpuContext;
use crate::error::GpuError;
use crate::readback::{MapState, MapWatch, ReadbackPlan, StallCount, scoped, storage_buffer};
use crate::tri_tri;
use crate::volume::{
    BatchPair, GpuVolumeReport, MeshLoc, PairPrep, Prepared, VolumeBatch, VolumeKernel, VolumeRaw,
    VolumeRegions, check_mesh, prepare_pair, reduce_pair,
};
use arena::{ArenaMesh, MeshArena, Uploaded};
use decode::empty_traversal;
use interfere_geometry::bvh::BalancedTree;
use interfere_geometry::glam::DVec3;
use interfere_geometry::volume::{RayMesh, Sampling, UniformOptions, VolumeResult};
use interfere_geometry::{DPose, Solid};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Instant;

/// A mesh the job's objects use, with its balanced tree. Meshes are uploaded once per `id`
/// (a new `Arc` under a known id replaces the old mesh).
#[derive(Clone, Debug)]
pub struct JobMesh {
    /// Stable id (a collider's).
    pub id: u64,
    /// The closed, outward-oriented solid.
    pub solid: Arc<Solid>,
    /// Its balanced tree ([`BalancedTree::build`] over the same solid).
    pub tree: Arc<BalancedTree>,
}

impl JobMesh {
    /// A mesh with its tree built now.
    pub fn new(id: u64, solid: Arc<Solid>) -> Self {
        let tree = Arc::new(BalancedTree::build(&solid));
        Self { id, solid, tree }
    }
}

/// One object of a step: a mesh placed in the world.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JobObject {
    /// The [`JobMesh::id`] of its mesh.
    pub mesh: u64,
    /// Mesh frame to world.
    pub pose: DPose,
}

/// The volume query of a job: the uniform volume ([`VolumeResult`]) of every candidate pair
/// `(i, j)`, in `i`'s frame (`A = i`), torque about `A`'s origin.
#[derive(Clone, Debug, PartialEq)]
pub struct JobVolume {
    /// Line sampling: one entry for every pair, or one per pair (in the order of the pairs).
    /// [`Sampling::Fitted`] is refused (the CPU sampler's two-pass mode).
    pub sampling: Vec<Sampling>,
    /// Whether to fill [`VolumeResult::points`].
    pub collect_points: bool,
    /// Most lines per pair (over the three axes); a pair needing more gets
    /// `VolumeError::TooManyRays` as its result.
    pub max_rays: u64,
}

impl JobVolume {
    /// The options of pair `k` (of `pairs` pairs), or why they are malformed.
    fn options(&self, k: usize, pairs: usize) -> Result<UniformOptions, GpuError> {
        let sampling = match self.sampling.len() {
            1 => self.sampling[0],
            n if n == pairs => self.sampling[k],
            n => {
                return Err(GpuError::InvalidInput {
                    what: WHAT,
                    reason: format!("{n} volume samplings for {pairs} pairs (give 1 or {pairs})"),
                });
            }
        };
        Ok(UniformOptions {
            sampling,
            centre: DVec3::ZERO,
            collect_points: self.collect_points,
            max_rays: self.max_rays,
        })
    }
}

/// Everything one step asks of the GPU.
#[derive(Clone, Debug, Default)]
pub struct StepJobInput {
    /// The step number (returned in the answer).
    pub step: u64,
    /// Every mesh the objects use (cheap `Arc` clones; only ids not yet on the device are
    /// uploaded).
    pub meshes: Vec<JobMesh>,
    /// The objects.
    pub objects: Vec<JobObject>,
    /// Candidate object pairs `(i, j)`, `i < j` (the answers follow this order).
    pub pairs: Vec<(u32, u32)>,
    /// Run whole-scene CInDeR over the objects of `pairs` and report which of `pairs` it flags.
    pub cinder: Option<CinderSceneOptions>,
    /// Run the Greß–Zachmann traversal for the pairs CInDeR flags (every pair without CInDeR)
    /// and filter its triangle pairs with the exact CPU test.
    pub triangle_pairs: bool,
    /// Compute the uniform volume of every pair.
    pub volume: Option<JobVolume>,
}

/// What a job measured.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JobStats {
    /// Candidate pairs.
    pub pairs: usize,
    /// CInDeR views that ran (of the final round).
    pub cinder_views: usize,
    /// Most list entries (fragments) one CInDeR view wrote.
    pub cinder_fragments: u64,
    /// Traversal steps that tested a non-empty list.
    pub traversal_steps: usize,
    /// Longest pair list of the traversal.
    pub longest_list: u64,
    /// Triangle pairs the GPU test reported (before the exact filter).
    pub triangle_candidates: u64,
    /// Volume lines cast (all pairs).
    pub volume_lines: u64,
    /// Volume endpoint records written.
    pub volume_records: u64,
    /// Volume lines recast exactly on the CPU.
    pub recast_lines: usize,
    /// Bytes read back over all rounds.
    pub readback_bytes: u64,
    /// Host time to prepare and record the first round, in milliseconds.
    pub prepare_ms: f64,
    /// Of which: the CInDeR scene (world-space meshes, normals, edges, size estimates).
    pub prepare_cinder_ms: f64,
    /// Of which: the volume pairs (placing `j` in `i`'s frame, local `f32` frames, refits).
    pub prepare_volume_ms: f64,
}

/// The answer to one step's job. Every list follows the order of [`StepJobInput::pairs`].
#[derive(Debug)]
pub struct StepJobAnswer {
    /// [`StepJobInput::step`].
    pub step: u64,
    /// The pairs CInDeR flags (with [`StepJobInput::cinder`]), sorted like the input.
    pub flagged: Option<Vec<(u32, u32)>>,
    /// Per pair, its exactly intersecting triangle pairs `(triangle of i, triangle of j)`,
    /// sorted (with [`StepJobInput::triangle_pairs`]; empty for pairs CInDeR did not flag).
    pub triangles: Option<Vec<Vec<(u32, u32)>>>,
    /// Per pair, its volume in `i`'s frame or why it has none (with [`StepJobInput::volume`]).
    pub volumes: Option<Vec<Result<VolumeResult, GpuError>>>,
    /// GPU submissions used (1, more when a stage overflowed).
    pub rounds: u32,
    /// Time from the first submission to the readback being seen, in milliseconds (how often
    /// the caller polls bounds its resolution).
    pub gpu_ms: f64,
    /// Host time of [`ReadyJob::finish`] (decode, exact recasts, filters), in milliseconds.
    pub cpu_ms: f64,
    /// What the job measured.
    pub stats: JobStats,
}

/// Starting sizes of the buffers a job cannot size from its input. The runner updates them
/// after every job from what it measured (half as much again, plus a margin); set them small
/// to force a second round (tests) or large to avoid one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JobCapacities {
    /// CInDeR list entries per view: `None` sizes them from the projected areas (an upper
    /// estimate, every job), `Some(n)` starts every job at `n` (raised after a job that needed
    /// more).
    pub fragments: Option<u64>,
    /// Entries of one traversal pair list.
    pub pair_list: u64,
    /// Triangle pairs the traversal's leaf tests may report.
    pub hits: u64,
    /// Volume endpoint records per line cast.
    pub records_per_line: f64,
}

impl Default for JobCapacities {
    fn default() -> Self {
        Self {
            fragments: None,
            pair_list: 1 << 16,
            hits: 1 << 14,
            records_per_line: 2.0,
        }
    }
}

const WHAT: &str = "GPU step job";
/// Triangle pairs per object pair above which the traversal's `u32` totals could overflow.
const MAX_CAPACITY: u64 = (u32::MAX / 4) as u64;

/// The pipelines of one device, the mesh cache and the buffer sizes learned from past jobs.
/// Own it on the thread that submits and polls (it is `Send`).
pub struct StepJobRunner {
    cinder: ScenePipelines,
    traversal: GpuTriangleTraversal,
    volume: VolumeKernel,
    arena: MeshArena,
    capacities: JobCapacities,
    jobs: u64,
    evict_after: u64,
}

/// What a device must allow for the job's kernels (checked by [`StepJobRunner::new`]).
const NEEDED_LIMITS: [(&str, u64); 5] = [
    ("max_storage_buffers_per_shader_stage", 8),
    ("max_compute_invocations_per_workgroup", 256),
    ("max_compute_workgroup_size_x", 256),
    ("max_compute_workgroup_storage_size", 2048),
    ("max_uniform_buffer_binding_size", 96),
];

fn limit_value(limits: &wgpu::Limits, name: &str) -> u64 {
    match name {
        "max_storage_buffers_per_shader_stage" => {
            u64::from(limits.max_storage_buffers_per_shader_stage)
        }
        "max_compute_invocations_per_workgroup" => {
            u64::from(limits.max_compute_invocations_per_workgroup)
        }
        "max_compute_workgroup_size_x" => u64::from(limits.max_compute_workgroup_size_x),
        "max_compute_workgroup_storage_size" => {
            u64::from(limits.max_compute_workgroup_storage_size)
        }
        _ => limits.max_uniform_buffer_binding_size,
    }
}

/// One prepared volume pair.
enum VolumePair {
    /// Refused (options, pose, too many lines).
    Failed(GpuError),
    /// The boxes do not overlap.
    Empty(VolumeResult),
    /// Lines to cast: the preparation and the pair's index in the batch.
    Lines(Box<PairPrep>, usize),
}

/// The host side of a job, from `submit` to `finish`.
struct JobPlan {
    step: u64,
    pairs: Vec<(u32, u32)>,
    /// Per pair: the meshes of `i` and `j` and `j`'s pose in `i`'s frame.
    meshes: Vec<(Arc<ArenaMesh>, Arc<ArenaMesh>)>,
    /// Per pair: the two meshes' indices in the upload.
    mesh_index: Vec<(u32, u32)>,
    b_to_a: Vec<DPose>,
    uploaded: Arc<Uploaded>,
    /// Whether the triangle pairs and the volumes were asked for.
    asked_triangles: bool,
    cinder: Option<CinderPlan>,
    traversal: Option<TraversalPlan>,
    volume: Option<VolumePlan>,
    /// Host milliseconds of the CInDeR and volume preparation.
    prepare_ms: [f64; 2],
}

struct CinderPlan {
    options: CinderSceneOptions,
    scene: CinderScene,
    projections: Vec<Projection>,
    capacity: u64,
    pair_ids: Vec<[u32; 2]>,
}

struct TraversalPlan {
    palette: wgpu::Buffer,
    last: usize,
    list_capacity: u64,
    hit_capacity: u64,
}

struct VolumePlan {
    pairs: Vec<VolumePair>,
    /// Pair indices of the batch, in batch order.
    batch: Vec<usize>,
    lines: u64,
    capacity: u64,
}

/// The stages of one submitted round and where their results land.
struct Round {
    cinder: Option<(SceneRound, SceneRegions)>,
    traversal: Option<(TraversalRound, TraversalRegions)>,
    volume: Option<(VolumeBatch, VolumeRegions)>,
    watch: Option<MapWatch>,
}

/// Stage results that are final.
#[derive(Default)]
struct Decoded {
    cinder: Option<Vec<bool>>,
    cinder_stats: (usize, u64),
    traversal: Option<TraversalOutcome>,
    volume: Option<VolumeRaw>,
}

/// A submitted job: poll it with [`StepJobRunner::poll_ready`] or [`StepJobRunner::poll`].
pub struct PendingJob {
    plan: JobPlan,
    round: Option<Round>,
    decoded: Decoded,
    rounds: u32,
    submitted: Instant,
    stalls: StallCount,
    stats: JobStats,
    answered: bool,
}

impl PendingJob {
    /// The job's step.
    pub fn step(&self) -> u64 {
        self.plan.step
    }

    /// Rounds submitted so far.
    pub fn rounds(&self) -> u32 {
        self.rounds
    }
}

/// A job whose GPU work is done: [`ReadyJob::finish`] does the CPU part (on any thread).
pub struct ReadyJob {
    plan: JobPlan,
    decoded: Decoded,
    rounds: u32,
    gpu_ms: f64,
    stats: JobStats,
}

impl StepJobRunner {
    /// Builds the pipelines on `ctx`'s device. Fails with [`GpuError::LimitTooLow`] when the
    /// device allows fewer storage buffers, workgroup invocations or workgroup memory than the
    /// kernels use, and with [`GpuError::Wgpu`] when a pipeline is refused.
    pub fn new(ctx: &GpuContext) -> Result<Self, GpuError> {
        let limits = ctx.device.limits();
        for (name, needed) in NEEDED_LIMITS {
            let available = limit_value(&limits, name);
            if available < needed {
                return Err(GpuError::LimitTooLow {
                    adapter: ctx.adapter.name.clone(),
                    limit: name,
                    available,
                    needed,
                    what: WHAT,
                });
            }
        }
        scoped(ctx, "building the step job's pipelines", || {
            Ok(Self {
                cinder: ScenePipelines::new(&ctx.device),
                traversal: GpuTriangleTraversal::new(ctx),
                volume: VolumeKernel::new(ctx),
                arena: MeshArena::default(),
                capacities: JobCapacities::default(),
                jobs: 0,
                evict_after: 64,
            })
        })
    }

    /// The sizes the next job starts with.
    pub fn capacities(&self) -> JobCapacities {
        self.capacities
    }

    /// Sets the sizes the next job starts with (they keep adapting afterwards).
    pub fn set_capacities(&mut self, capacities: JobCapacities) {
        self.capacities = capacities;
    }

    /// Jobs after which an unused mesh id is dropped (default 64).
    pub fn evict_after(&self) -> u64 {
        self.evict_after
    }

    /// Sets [`Self::evict_after`].
    pub fn set_evict_after(&mut self, jobs: u64) {
        self.evict_after = jobs;
    }

    /// Mesh ids currently uploaded.
    pub fn uploaded_meshes(&self) -> Vec<u64> {
        let mut ids: Vec<u64> = self
            .arena
            .uploaded
            .as_ref()
            .map(|u| u.index.keys().copied().collect())
            .unwrap_or_default();
        ids.sort_unstable();
        ids
    }

    /// Prepares the step on the host, records all of its GPU work, submits it and starts the
    /// readback's `map_async`; never waits for the GPU. Each job owns its GPU buffers, so
    /// several may be in flight at once. Input errors (unknown mesh ids, pairs
    /// out of range or not `i < j`, poses not finite, CInDeR options the device refuses) and
    /// buffers beyond the device's limits are errors of the whole job; a pair's volume that
    /// cannot be computed is an error of that pair only (in the answer).
    pub fn submit(
        &mut self,
        ctx: &GpuContext,
        input: StepJobInput,
    ) -> Result<PendingJob, GpuError> {
        let clock = Instant::now();
        self.jobs += 1;
        let plan = scoped(ctx, WHAT, || self.plan(ctx, input))?;
        let mut job = PendingJob {
            plan,
            round: None,
            decoded: Decoded::default(),
            rounds: 0,
            submitted: Instant::now(),
            stalls: StallCount::default(),
            stats: JobStats::default(),
            answered: false,
        };
        job.stats.pairs = job.plan.pairs.len();
        [job.stats.prepare_cinder_ms, job.stats.prepare_volume_ms] = job.plan.prepare_ms;
        // What is known without the GPU.
        if let Some(c) = &job.plan.cinder
            && c.scene.original.is_empty()
        {
            job.decoded.cinder = Some(vec![false; job.plan.pairs.len()]);
        }
        let nothing_flagged = job
            .decoded
            .cinder
            .as_ref()
            .is_some_and(|f| f.iter().all(|&x| !x));
        if job.plan.traversal.is_none() || nothing_flagged {
            job.decoded.traversal = Some(empty_traversal());
        }
        if job.plan.volume.as_ref().is_none_or(|v| v.batch.is_empty()) {
            job.decoded.volume = Some(VolumeRaw::default());
        }
        self.submit_round(ctx, &mut job)?;
        job.stats.prepare_ms = clock.elapsed().as_secs_f64() * 1e3;
        job.submitted = Instant::now();
        Ok(job)
    }

    /// Polls the device without blocking and checks the readback. `Ok(None)` while the GPU is
    /// busy (or after submitting a bigger round because a stage overflowed); `Ok(Some(ready))`
    /// once every stage fitted: [`ReadyJob::finish`] gives the answer. Errors are the job's
    /// (a failed map, a lost device, a buffer past the device's limits on a second round).
    pub fn poll_ready(
        &mut self,
        ctx: &GpuContext,
        job: &mut PendingJob,
    ) -> Result<Option<ReadyJob>, GpuError> {
        if job.answered {
            return Err(GpuError::InvalidInput {
                what: WHAT,
                reason: "this job was already answered".into(),
            });
        }
        let bytes = match job.round.as_ref().and_then(|r| r.watch.as_ref()) {
            None => Vec::new(),
            Some(watch) => {
                let mut state = watch.state();
                if state == MapState::Pending {
                    let status = ctx.device.poll(wgpu::PollType::Poll)?;
                    state = watch.state();
                    if state == MapState::Pending {
                        job.stalls.check(WHAT, status.is_queue_empty())?;
                        return Ok(None);
                    }
                }
                if let MapState::Failed(reason) = state {
                    return Err(GpuError::Readback { what: WHAT, reason });
                }
                match job.round.as_mut().and_then(|r| r.watch.take()) {
                    Some(watch) => watch.take(),
                    None => Vec::new(),
                }
            }
        };
        job.stats.readback_bytes += bytes.len() as u64;
        let round = job.round.take();
        let mut again = false;
        if let Some(round) = round {
            if let Some((r, regions)) = &round.cinder {
                let outcome: SceneOutcome = r.decode(regions, &bytes);
                let cinder = job.plan.cinder.as_mut().expect("cinder planned");
                match outcome.overflow {
                    Some(needed) => {
                        cinder.capacity =
                            scene::fragment_capacity(ctx, needed + needed / 8 + 1024, needed);
                        // The traversal started from incomplete flags.
                        job.decoded.traversal = None;
                        again = true;
                    }
                    None => {
                        job.decoded.cinder_stats = outcome.view_summary();
                        job.decoded.cinder = Some(outcome.flags);
                    }
                }
            }
            if let Some((r, regions)) = &round.traversal {
                let outcome = r.decode(regions, &bytes);
                let t = job.plan.traversal.as_mut().expect("traversal planned");
                if let Some((step, needed)) = outcome.list_overflow {
                    let (list, hits) =
                        outcome.regrow_on(ctx, needed, step, t.last, t.list_capacity);
                    t.list_capacity = list.min(MAX_CAPACITY);
                    t.hit_capacity = t.hit_capacity.max(hits).min(MAX_CAPACITY);
                    again = true;
                } else if outcome.hit_overflow {
                    t.hit_capacity = grow(outcome.hits_needed, t.hit_capacity);
                    again = true;
                } else if job.decoded.cinder.is_some() || job.plan.cinder.is_none() {
                    job.decoded.traversal = Some(outcome);
                }
            }
            if let Some((batch, regions)) = &round.volume {
                let raw = batch.decode(regions, &bytes);
                let v = job.plan.volume.as_mut().expect("volume planned");
                if batch.overflowed(&raw) {
                    v.capacity = raw.count + raw.count / 8 + 64;
                    again = true;
                } else {
                    job.decoded.volume = Some(raw);
                }
            }
        }
        let complete = job.decoded.cinder.is_some() || job.plan.cinder.is_none();
        if again || !complete || job.decoded.traversal.is_none() || job.decoded.volume.is_none() {
            self.submit_round(ctx, job)?;
            return Ok(None);
        }
        job.answered = true;
        self.learn(job);
        Ok(Some(ReadyJob {
            plan: {
                let empty = JobPlan::empty(&job.plan);
                std::mem::replace(&mut job.plan, empty)
            },
            decoded: std::mem::take(&mut job.decoded),
            rounds: job.rounds,
            gpu_ms: job.submitted.elapsed().as_secs_f64() * 1e3,
            stats: job.stats.clone(),
        }))
    }

    /// [`Self::poll_ready`] and, when ready, [`ReadyJob::finish`] on this thread.
    pub fn poll(
        &mut self,
        ctx: &GpuContext,
        job: &mut PendingJob,
    ) -> Result<Option<StepJobAnswer>, GpuError> {
        Ok(self.poll_ready(ctx, job)?.map(ReadyJob::finish))
    }

    /// Submits the job and waits for its answer (the blocking backend and tests).
    pub fn run_blocking(
        &mut self,
        ctx: &GpuContext,
        input: StepJobInput,
    ) -> Result<StepJobAnswer, GpuError> {
        let mut job = self.submit(ctx, input)?;
        loop {
            if let Some(answer) = self.poll(ctx, &mut job)? {
                return Ok(answer);
            }
            ctx.device.poll(wgpu::PollType::wait_indefinitely())?;
        }
    }

    /// Updates the starting capacities from what a finished job measured.
    fn learn(&mut self, job: &mut PendingJob) {
        if let Some(t) = &job.decoded.traversal {
            let longest = t.lengths.iter().copied().max().unwrap_or(0);
            job.stats.traversal_steps = t.lengths.len();
            job.stats.longest_list = longest;
            job.stats.triangle_candidates = t.hits_needed;
            if job.plan.traversal.is_some() {
                self.capacities.pair_list = (longest + longest / 2 + 1024).min(MAX_CAPACITY);
                self.capacities.hits = (t.hits_needed + t.hits_needed / 2 + 1024).min(MAX_CAPACITY);
            }
        }
        if let (Some(raw), Some(v)) = (&job.decoded.volume, &job.plan.volume) {
            job.stats.volume_lines = v.lines;
            job.stats.volume_records = raw.count;
            if v.lines > 0 {
                self.capacities.records_per_line =
                    (1.5 * raw.count as f64 / v.lines as f64).max(0.25);
            }
        }
        (job.stats.cinder_views, job.stats.cinder_fragments) = job.decoded.cinder_stats;
        if let Some(n) = self.capacities.fragments.as_mut() {
            let needed = job.stats.cinder_fragments;
            *n = (*n).max(needed + needed / 8 + 1024);
        }
    }
}

/// A capacity that held `needed` next time: the need, at least doubled, within `u32` totals.
fn grow(needed: u64, old: u64) -> u64 {
    needed.max(2 * old).min(MAX_CAPACITY)
}

/// The world-space [`CinderObject`] the job draws for `solid` at `pose`: every vertex mapped
/// by [`DPose::transform_point`] and rounded to `f32`. Running [`crate::Cinder::run`] on these
/// objects (those of the job's pairs, in increasing object order) gives the job's CInDeR answer.
pub fn job_cinder_object(solid: &Solid, pose: &DPose) -> CinderObject {
    CinderObject {
        vertices: solid
            .vertices()
            .iter()
            .map(|&v| pose.transform_point(v).as_vec3().to_array())
            .collect(),
        triangles: solid.triangles().to_vec(),
    }
}

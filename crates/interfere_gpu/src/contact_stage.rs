//! The GPU contact stages of `interfere_dynamics`: a step's mesh–mesh candidate pairs go to one
//! [`crate::step_job`] (CInDeR, Knott & Pai 2003, flags the interfering pairs; the Greß–Zachmann
//! 2004 traversal lists their triangle pairs when asked; every pair's uniform intersection
//! volume of Wang–Faure–Pai 2012 §2.2 in one batched dispatch), and the answer becomes the same
//! [`PairContact`]s the CPU stage makes with [`VolumeMethod::Uniform`] (the CPU twin: the split
//! into parts is shared, [`fill_from_sampled`]). Pairs with a half-space are decided on the CPU in
//! the step (they are closed-form and cheap).
//!
//! - [`GpuBlockingContacts`] submits the job and waits for it inside the step.
//! - [`GpuAsyncContacts`] never waits: it hands the job ([`JobRequest`], with an owned copy of the
//!   state it is about) to an executor through a crossbeam channel and uses the newest answer
//!   that has come back (normally the previous step's). The simulation advances such an answer to
//!   the current poses by its gradient (each [`PairContact`] carries the step and the poses it was
//!   computed at); candidate pairs the answer does not cover (new since the job left, a body
//!   replaced) or that have moved against each other by more than [`REUSE_REACH`] of their
//!   lattice spacing since (an answer's "apart" or its first-order contact no longer holds) are
//!   decided on the CPU in the step, with the simulation's own volume method; the latency in
//!   steps and the pairs left to the CPU are reported.
//! - The executor is a [`JobServer`]: [`JobServer::pump`] submits the requests and polls the jobs
//!   in flight without blocking; what is ready comes back as [`FinishWork`] (the CPU part of the
//!   answer), to run on any thread. [`GpuAsyncContacts::with_worker`] runs a server on a thread of
//!   its own; Bevy's render world pumps one from a system ([`GpuAsyncContacts::with_server`]).
//!
//! Speculative contacts (`interfere_dynamics::add_speculative_contacts`, the CPU's look ahead at
//! the poses the step's motion predicts): [`GpuBlockingContacts`] looks ahead for every moving
//! candidate after its answer, as the CPU stage does, measuring the uniform volume its answers
//! have (with the exact volume there the two models disagreed by more than the nut demo's flank
//! play, and its free nut nearly stopped); [`GpuAsyncContacts`] for the pairs it
//! decides in the step and only where a step could carry one body through the other
//! ([`LookAhead::Fast`]): its answers' pairs were computed steps before, at other poses, and get
//! none. The look ahead itself runs on the CPU.
//!
//! A job that fails (device lost, a limit refused) is reported by the next step's
//! [`ContactStage::run`] as a [`StageError`], and the simulation computes that step on the CPU:
//! nothing is lost.

use crate::step_job::{JobMesh, JobObject, JobVolume, PendingJob, ReadyJob, StepJobInput};
use crate::{CinderSceneOptions, GpuContext, GpuError, StepJobAnswer, StepJobRunner};
use crossbeam_channel::{Receiver, Sender, TryRecvError, unbounded};
use interfere_dynamics::{
    Body, BodyId, BodyShape, ContactSettings, ContactStage, CpuContacts, InterferingPair,
    LookAhead, MeshSpacing, PairContact, Shape, StageError, StageInput, StageOutput, VolumeMethod,
    add_speculative_contacts, exact_pair, fill_from_sampled, spacing_for,
};
use interfere_geometry::Sampling;
use interfere_geometry::glam::{DQuat, DVec3};
use std::collections::{HashMap, VecDeque};
use std::time::Instant;

/// What the GPU stages compute and how.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpuStageOptions {
    /// Whole-scene CInDeR to flag the interfering pairs; `None` decides every pair by its volume
    /// and (with [`Self::exact_confirm`]) the exact CPU test.
    pub cinder: Option<CinderSceneOptions>,
    /// Confirm the pairs CInDeR flags (or every pair, without CInDeR) that have no sampled
    /// volume with the exact CPU test (CInDeR is conservative: its pixels see near misses).
    pub exact_confirm: bool,
    /// The volume lattice's spacing, unless the simulation's volume method is
    /// [`VolumeMethod::Uniform`] (whose spacing is then used).
    pub spacing: MeshSpacing,
    /// The oldest answer (in steps) [`GpuAsyncContacts`] still uses; older ones are replaced by
    /// the CPU for that step. Default 8. Within it, what decides is motion: a pair's answer
    /// stands in for the present only while the two bodies have moved against each other by at
    /// most [`REUSE_REACH`] times the pair's lattice spacing since the answer's step; otherwise
    /// the pair is decided on the CPU with the simulation's own volume method. (A limit of 8
    /// steps without that motion test, earlier, let bodies of `falling_meshes --bodies 200`
    /// sink through the slab by up to 2.2 m on lavapipe's 3–5-step-old answers; with it the
    /// lowest point is the CPU backend's.)
    pub max_latency_steps: u64,
}

impl Default for GpuStageOptions {
    fn default() -> Self {
        Self {
            cinder: Some(CinderSceneOptions {
                resolution: 256,
                ..CinderSceneOptions::default()
            }),
            exact_confirm: true,
            spacing: MeshSpacing::default(),
            max_latency_steps: 8,
        }
    }
}

impl GpuStageOptions {
    fn spacing(&self, settings: &ContactSettings) -> MeshSpacing {
        match settings.volume {
            VolumeMethod::Uniform { spacing } => spacing,
            _ => self.spacing,
        }
    }

    fn narrow_name(&self) -> &'static str {
        match (self.cinder.is_some(), self.exact_confirm) {
            (true, true) => "gpu-cinder+exact",
            (true, false) => "gpu-cinder",
            (false, _) => "gpu-volume+exact",
        }
    }
}

/// An owned copy of the state a job is about (what the answer needs to become contacts on
/// another thread, steps later).
#[derive(Clone)]
struct Snapshot {
    step: u64,
    dt: f64,
    gravity: DVec3,
    bodies: Vec<Body>,
    colliders: Vec<Option<BodyShape>>,
    /// The job's pairs, by body.
    pairs: Vec<(BodyId, BodyId)>,
    /// The body of each job object (increasing).
    objects: Vec<BodyId>,
    /// The mesh ids of each pair's shapes at submission.
    shapes: Vec<(u64, u64)>,
    settings: ContactSettings,
    options: GpuStageOptions,
}

/// One step's job and the state it is about, on its way to a [`JobServer`].
pub struct JobRequest {
    job: StepJobInput,
    snapshot: Snapshot,
}

/// A GPU answer turned into contacts.
#[derive(Clone, Debug, Default)]
pub struct GpuAnswer {
    /// The step whose state it was computed at.
    pub step: u64,
    /// The pairs it decided (interfering or not), sorted, with their shapes' mesh ids.
    pub covered: Vec<((BodyId, BodyId), (u64, u64))>,
    /// The interfering ones, sorted by `(a, b)`.
    pub contacts: Vec<PairContact>,
    /// Every body's position and orientation at that step (by body id): how far a pair has
    /// moved since is measured against these.
    pub states: Vec<(DVec3, DQuat)>,
    /// Submission to answer, milliseconds.
    pub gpu_ms: f64,
    /// Submissions the job took (more than one after an overflow).
    pub rounds: u32,
    /// Volume lines cast.
    pub rays: usize,
    /// Pairs whose volume was refused.
    pub refused: usize,
}

/// What a [`JobServer`] sends back for a request.
pub type JobReply = Result<GpuAnswer, GpuError>;

fn mesh_id(colliders: &[Option<BodyShape>], i: BodyId) -> u64 {
    match colliders.get(i).and_then(|c| c.as_ref()).map(|c| &c.shape) {
        Some(Shape::Mesh(m)) => m.id(),
        _ => 0,
    }
}

/// Splits `input`'s candidates into the GPU job (mesh–mesh pairs) and the pairs left to the CPU.
fn plan(input: &StageInput<'_>, options: &GpuStageOptions) -> (JobRequest, Vec<(BodyId, BodyId)>) {
    let mut cpu = Vec::new();
    let mut pairs = Vec::new();
    for &(a, b) in input.candidates {
        if input.mesh_pair(a, b).is_some() {
            pairs.push((a.min(b), a.max(b)));
        } else {
            cpu.push((a, b));
        }
    }
    // Objects in increasing body order, so every pair (i, j) has i < j.
    let mut bodies: Vec<BodyId> = pairs.iter().flat_map(|&(a, b)| [a, b]).collect();
    bodies.sort_unstable();
    bodies.dedup();
    let object: HashMap<BodyId, u32> = bodies
        .iter()
        .enumerate()
        .map(|(k, &b)| (b, k as u32))
        .collect();
    let mut meshes: Vec<JobMesh> = Vec::new();
    let mut objects = Vec::with_capacity(bodies.len());
    for &b in &bodies {
        let Some(Shape::Mesh(m)) = input.shape(b) else {
            unreachable!("only mesh bodies are in mesh pairs")
        };
        if !meshes.iter().any(|x| x.id == m.id()) {
            let (solid, tree) = m.shared().clone();
            meshes.push(JobMesh {
                id: m.id(),
                solid,
                tree,
            });
        }
        objects.push(JobObject {
            mesh: m.id(),
            pose: input.bodies[b].mesh_pose(),
        });
    }
    let spacing = options.spacing(input.settings);
    let sampling = pairs
        .iter()
        .map(|&(a, b)| {
            let (ma, mb, _, _) = input.mesh_pair(a, b).expect("a mesh pair");
            Sampling::Spacing(spacing_for(spacing, ma, mb))
        })
        .collect();
    let job = StepJobInput {
        step: input.step,
        meshes,
        objects,
        pairs: pairs
            .iter()
            .map(|&(a, b)| (object[&a], object[&b]))
            .collect(),
        cinder: options.cinder,
        triangle_pairs: input.settings.all_triangle_pairs,
        volume: Some(JobVolume {
            sampling,
            collect_points: true,
            max_rays: input.settings.max_rays_per_pair,
        }),
    };
    let snapshot = Snapshot {
        step: input.step,
        dt: input.dt,
        gravity: input.gravity,
        bodies: input.bodies.to_vec(),
        colliders: input.colliders.to_vec(),
        shapes: pairs
            .iter()
            .map(|&(a, b)| (mesh_id(input.colliders, a), mesh_id(input.colliders, b)))
            .collect(),
        pairs,
        objects: bodies,
        settings: *input.settings,
        options: *options,
    };
    (JobRequest { job, snapshot }, cpu)
}

/// Turns a job's answer into contacts (the CPU part: runs on whatever thread finishes the job).
fn contacts(snapshot: Snapshot, answer: StepJobAnswer) -> GpuAnswer {
    let input = StageInput {
        step: snapshot.step,
        dt: snapshot.dt,
        gravity: snapshot.gravity,
        bodies: &snapshot.bodies,
        colliders: &snapshot.colliders,
        candidates: &snapshot.pairs,
        settings: &snapshot.settings,
    };
    let n = snapshot.pairs.len();
    let flagged: Option<Vec<bool>> = answer.flagged.as_ref().map(|f| {
        // The flags are object pairs.
        let bodies = &snapshot.objects;
        let set: std::collections::HashSet<(BodyId, BodyId)> = f
            .iter()
            .map(|&(i, j)| (bodies[i as usize], bodies[j as usize]))
            .collect();
        snapshot.pairs.iter().map(|p| set.contains(p)).collect()
    });
    let mut volumes = answer.volumes.unwrap_or_default();
    volumes.resize_with(n, || {
        Err(GpuError::DeviceLost {
            what: "the step job's volumes",
            reason: "no volume was answered for this pair".into(),
        })
    });
    let mut triangles = answer.triangles.unwrap_or_default();
    triangles.resize_with(n, Vec::new);
    let all = input.needs_all_triangle_pairs();
    let mut out = GpuAnswer {
        step: snapshot.step,
        covered: snapshot
            .pairs
            .iter()
            .copied()
            .zip(snapshot.shapes.iter().copied())
            .collect(),
        states: snapshot
            .bodies
            .iter()
            .map(|b| (b.position, b.orientation))
            .collect(),
        gpu_ms: answer.gpu_ms,
        rounds: answer.rounds,
        ..GpuAnswer::default()
    };
    for (k, (&(a, b), volume)) in snapshot.pairs.iter().zip(volumes).enumerate() {
        let sampled = volume.as_ref().is_ok_and(|r| r.volume > 0.0);
        let flag = flagged.as_ref().is_none_or(|f| f[k]);
        let pair = if !sampled && flag && snapshot.options.exact_confirm {
            exact_pair(&input, a, b, all)
        } else if sampled || (flag && flagged.is_some()) {
            Some(InterferingPair {
                a,
                b,
                triangle_pairs: std::mem::take(&mut triangles[k]),
                contained: false,
                speculative: false,
            })
        } else {
            None
        };
        let Some(pair) = pair else { continue };
        let mut c = PairContact::touching(pair, &snapshot.bodies, snapshot.step);
        match volume {
            Ok(r) => {
                let frame = snapshot.bodies[a].mesh_pose();
                fill_from_sampled(&mut c, &r, &frame, false);
                out.rays += r.ray_count;
            }
            Err(e) => {
                c.refused = Some(e.to_string());
                out.refused += 1;
            }
        }
        out.contacts.push(c);
    }
    out.contacts.sort_by_key(|c| (c.a, c.b));
    out.covered.sort_unstable_by_key(|&(p, _)| p);
    out
}

/// How far two bodies may have moved against each other since a GPU answer, as a fraction of
/// the pair's volume lattice spacing, for the answer to stand in for the present: within a
/// quarter of the spacing, a pair the answer found apart overlaps now by at most that much (a
/// depth the lattice itself could miss), and a contact advanced by its gradient is off by a
/// second-order term in that motion.
pub const REUSE_REACH: f64 = 0.25;

/// The largest displacement, relative to `b`, of any point of the smaller of bodies `a` and `b`
/// since the states `then` (the bodies' positions and orientations when an answer was computed):
/// the change in their relative translation plus the relative rotation's angle times the
/// smaller body's radius about its centre of mass. `None` when a body or its state is missing.
fn relative_motion(
    input: &StageInput<'_>,
    then: &[(DVec3, DQuat)],
    a: BodyId,
    b: BodyId,
) -> Option<f64> {
    let radius = |i: BodyId| -> Option<f64> {
        let body = input.bodies.get(i)?;
        let Some(Shape::Mesh(m)) = input.shape(i) else {
            return None;
        };
        let bx = m.world_aabb(&body.mesh_pose())?;
        let (lo, hi) = (bx.min.as_dvec3(), bx.max.as_dvec3());
        Some(((lo + hi) * 0.5 - body.position).length() + (hi - lo).length() * 0.5)
    };
    let (ra, rb) = (radius(a)?, radius(b)?);
    // Moving points of `s` (the smaller) in the frame of `o`.
    let (s, o, r) = if ra <= rb { (a, b, ra) } else { (b, a, rb) };
    let rel = |(xs, qs): (DVec3, DQuat), (xo, qo): (DVec3, DQuat)| {
        let inv = qo.inverse();
        (inv * (xs - xo), inv * qs)
    };
    let now = |i: BodyId| (input.bodies[i].position, input.bodies[i].orientation);
    let (t0, q0) = rel(*then.get(s)?, *then.get(o)?);
    let (t1, q1) = rel(now(s), now(o));
    let angle = (q1 * q0.inverse()).normalize().to_axis_angle().1;
    let angle = if angle > std::f64::consts::PI {
        std::f64::consts::TAU - angle
    } else {
        angle
    };
    let m = (t1 - t0).length() + angle * r;
    m.is_finite().then_some(m)
}

fn gpu_error(e: GpuError) -> StageError {
    StageError::Gpu(e.to_string())
}

/// The CPU stage of the pairs a GPU stage leaves to the CPU (with the simulation's own volume
/// method), with the look ahead `speculative`.
fn cpu_part(speculative: LookAhead) -> CpuContacts {
    CpuContacts {
        speculative,
        ..CpuContacts::default()
    }
}

/// Runs the CPU stage on `pairs` (with the simulation's own volume method) and appends its
/// contacts and its report's counts to `out`.
fn cpu_pairs(
    cpu: &mut CpuContacts,
    input: &StageInput<'_>,
    pairs: &[(BodyId, BodyId)],
    out: &mut StageOutput,
) -> Result<(), StageError> {
    if pairs.is_empty() {
        return Ok(());
    }
    let input = StageInput {
        candidates: pairs,
        ..*input
    };
    let mut part = StageOutput::default();
    cpu.run(&input, &mut part)?;
    out.pairs.extend(part.pairs);
    out.report.rays += part.report.rays;
    out.report.pairs_refused += part.report.pairs_refused;
    out.report.narrow_ms += part.report.narrow_ms;
    out.report.volume_ms += part.report.volume_ms;
    Ok(())
}

/// The GPU job, waited for in the step.
pub struct GpuBlockingContacts {
    ctx: GpuContext,
    runner: StepJobRunner,
    options: GpuStageOptions,
    cpu: CpuContacts,
}

impl GpuBlockingContacts {
    /// A stage on `ctx` (fails when the device's limits are too low for the kernels).
    pub fn new(ctx: GpuContext, options: GpuStageOptions) -> Result<Self, GpuError> {
        let runner = StepJobRunner::new(&ctx)?;
        Ok(Self {
            ctx,
            runner,
            options,
            // Its look ahead runs once for every candidate, after the answer (see `run`).
            cpu: cpu_part(LookAhead::Off),
        })
    }

    /// The options (change them between steps).
    pub fn options_mut(&mut self) -> &mut GpuStageOptions {
        &mut self.options
    }
}

impl ContactStage for GpuBlockingContacts {
    fn name(&self) -> &'static str {
        "gpu-blocking"
    }

    fn run(&mut self, input: &StageInput<'_>, out: &mut StageOutput) -> Result<(), StageError> {
        let start = Instant::now();
        let (request, cpu) = plan(input, &self.options);
        let answer = if request.job.pairs.is_empty() {
            GpuAnswer::default()
        } else {
            let raw = self
                .runner
                .run_blocking(&self.ctx, request.job)
                .map_err(gpu_error)?;
            contacts(request.snapshot, raw)
        };
        let gpu_ms = start.elapsed().as_secs_f64() * 1e3;
        cpu_pairs(&mut self.cpu, input, &cpu, out)?;
        let r = &mut out.report;
        r.narrow = self.options.narrow_name();
        r.volume = "gpu-uniform";
        r.volume_ms += gpu_ms;
        r.gpu_ms = (!answer.covered.is_empty()).then_some(answer.gpu_ms);
        r.latency_steps = Some(0);
        r.rays += answer.rays;
        r.pairs_refused += answer.refused;
        out.pairs.extend(answer.contacts);
        out.pairs.sort_by_key(|p| (p.a, p.b));
        // The contacts the step's motion would make: the CPU stage's look ahead at the predicted
        // poses (exact narrow phase), for every candidate, with the answers' volume model (the
        // uniform volume at the job's spacing), so that moving meshes meet the same speculative
        // constraints as on the CPU backend with that method.
        let start = Instant::now();
        let settings = ContactSettings {
            volume: VolumeMethod::Uniform {
                spacing: self.options.spacing(input.settings),
            },
            ..*input.settings
        };
        add_speculative_contacts(
            &StageInput {
                settings: &settings,
                ..*input
            },
            &mut out.pairs,
            &mut *self.cpu.narrow,
            LookAhead::Moving,
        );
        out.report.volume_ms += start.elapsed().as_secs_f64() * 1e3;
        Ok(())
    }
}

/// The CPU part of a finished job: run it on any thread (a task pool, the worker).
pub struct FinishWork {
    ready: ReadyJob,
    snapshot: Snapshot,
    replies: Sender<JobReply>,
}

impl FinishWork {
    /// Finishes the job (exact recasts, the per-pair reduction, the split into contacts) and
    /// sends the answer back.
    pub fn run(self) {
        let answer = contacts(self.snapshot, self.ready.finish());
        let _ = self.replies.send(Ok(answer));
    }
}

/// The executor side of [`GpuAsyncContacts`]: submits the jobs it receives and polls them without
/// ever blocking.
pub struct JobServer {
    ctx: GpuContext,
    runner: StepJobRunner,
    requests: Receiver<JobRequest>,
    replies: Sender<JobReply>,
    in_flight: VecDeque<(PendingJob, Snapshot)>,
    disconnected: bool,
}

impl JobServer {
    /// Takes the requests that arrived and submits them, then polls the jobs in flight once
    /// (non-blocking). Returns the finished jobs' CPU work; failures are sent back as errors.
    pub fn pump(&mut self) -> Vec<FinishWork> {
        loop {
            match self.requests.try_recv() {
                Ok(request) => self.submit(request),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    self.disconnected = true;
                    break;
                }
            }
        }
        let mut done = Vec::new();
        let mut still = VecDeque::with_capacity(self.in_flight.len());
        while let Some((mut job, snapshot)) = self.in_flight.pop_front() {
            match self.runner.poll_ready(&self.ctx, &mut job) {
                Ok(None) => still.push_back((job, snapshot)),
                Ok(Some(ready)) => done.push(FinishWork {
                    ready,
                    snapshot,
                    replies: self.replies.clone(),
                }),
                Err(e) => {
                    let _ = self.replies.send(Err(e));
                }
            }
        }
        self.in_flight = still;
        done
    }

    /// Whether a job is on the GPU.
    pub fn busy(&self) -> bool {
        !self.in_flight.is_empty()
    }

    /// Whether the stage that sends the requests is gone (and nothing is left to do).
    pub fn finished(&self) -> bool {
        self.disconnected && self.in_flight.is_empty()
    }

    fn submit(&mut self, request: JobRequest) {
        match self.runner.submit(&self.ctx, request.job) {
            Ok(job) => self.in_flight.push_back((job, request.snapshot)),
            Err(e) => {
                let _ = self.replies.send(Err(e));
            }
        }
    }

    /// Runs the server on this thread until the stage is dropped: waits for a request when idle
    /// and for the GPU when busy (this is the worker thread; nothing else waits).
    pub fn serve(mut self) {
        loop {
            if self.in_flight.is_empty() {
                match self.requests.recv() {
                    Ok(request) => self.submit(request),
                    Err(_) => return,
                }
            }
            for work in self.pump() {
                work.run();
            }
            if self.finished() {
                return;
            }
            if self.busy() {
                // Bounded, so a device that stops answering is noticed by the next pump (its
                // jobs end with an error) instead of hanging the worker.
                let wait = wgpu::PollType::Wait {
                    submission_index: None,
                    timeout: Some(std::time::Duration::from_millis(100)),
                };
                if self.ctx.device.poll(wait).is_err() {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
            }
        }
    }
}

/// The GPU job without waiting: each step sends its job to an executor and uses the newest
/// answer back (see the module documentation).
pub struct GpuAsyncContacts {
    requests: Sender<JobRequest>,
    replies: Receiver<JobReply>,
    in_flight: usize,
    latest: Option<GpuAnswer>,
    options: GpuStageOptions,
    cpu: CpuContacts,
}

impl GpuAsyncContacts {
    /// The most jobs in flight at once (a step whose predecessors are all still on the GPU
    /// sends none).
    pub const MAX_IN_FLIGHT: usize = 2;

    /// The stage and its executor, which the caller pumps ([`JobServer::pump`]) where it likes
    /// (Bevy's render world).
    pub fn with_server(
        ctx: GpuContext,
        options: GpuStageOptions,
    ) -> Result<(Self, JobServer), GpuError> {
        let runner = StepJobRunner::new(&ctx)?;
        let (requests, requests_rx) = unbounded();
        let (replies_tx, replies) = unbounded();
        let server = JobServer {
            ctx,
            runner,
            requests: requests_rx,
            replies: replies_tx,
            in_flight: VecDeque::new(),
            disconnected: false,
        };
        let stage = Self {
            requests,
            replies,
            in_flight: 0,
            latest: None,
            options,
            // The pairs decided in the step look ahead when a step could carry one through the
            // other; an answer's pairs were computed steps ago and have none (see the module's
            // notes and `LookAhead::Fast`).
            cpu: cpu_part(LookAhead::Fast),
        };
        Ok((stage, server))
    }

    /// The stage with its executor on a worker thread of its own (which ends when the stage is
    /// dropped).
    pub fn with_worker(ctx: GpuContext, options: GpuStageOptions) -> Result<Self, GpuError> {
        let (stage, server) = Self::with_server(ctx, options)?;
        std::thread::Builder::new()
            .name("interfere-gpu-jobs".into())
            .spawn(move || server.serve())
            .map_err(|e| GpuError::DeviceLost {
                what: "starting the GPU worker thread",
                reason: e.to_string(),
            })?;
        Ok(stage)
    }

    /// The options (change them between steps).
    pub fn options_mut(&mut self) -> &mut GpuStageOptions {
        &mut self.options
    }

    /// Jobs sent and not yet answered.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Takes the answers that came back; an error ends the wait for that job and is returned.
    fn receive(&mut self) -> Result<(), StageError> {
        let mut failed = None;
        loop {
            match self.replies.try_recv() {
                Ok(reply) => {
                    self.in_flight = self.in_flight.saturating_sub(1);
                    match reply {
                        Ok(answer) => {
                            if self.latest.as_ref().is_none_or(|l| l.step <= answer.step) {
                                self.latest = Some(answer);
                            }
                        }
                        Err(e) => failed = Some(gpu_error(e)),
                    }
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    self.in_flight = 0;
                    return Err(StageError::Unavailable("the GPU executor stopped".into()));
                }
            }
        }
        match failed {
            Some(e) => {
                self.latest = None;
                Err(e)
            }
            None => Ok(()),
        }
    }
}

impl ContactStage for GpuAsyncContacts {
    fn name(&self) -> &'static str {
        "gpu"
    }

    fn run(&mut self, input: &StageInput<'_>, out: &mut StageOutput) -> Result<(), StageError> {
        let start = Instant::now();
        self.receive()?;
        let (request, cpu) = plan(input, &self.options);
        let mesh_pairs = request.snapshot.pairs.clone();
        if !mesh_pairs.is_empty() && self.in_flight < Self::MAX_IN_FLIGHT {
            self.requests
                .send(request)
                .map_err(|_| StageError::Unavailable("the GPU executor stopped".into()))?;
            self.in_flight += 1;
        }
        let latest = self
            .latest
            .as_ref()
            .filter(|l| input.step.saturating_sub(l.step) <= self.options.max_latency_steps);
        // Mesh pairs the answer covers (same shapes) and that have barely moved against each
        // other since take its contacts (advanced to now by their gradient); the others run now.
        let spacing = self.options.spacing(input.settings);
        let mut late = cpu;
        let mut used = Vec::new();
        for &(a, b) in &mesh_pairs {
            let shapes = (mesh_id(input.colliders, a), mesh_id(input.colliders, b));
            let covered = latest.is_some_and(|l| {
                let same = l
                    .covered
                    .binary_search_by_key(&(a, b), |&(p, _)| p)
                    .is_ok_and(|k| l.covered[k].1 == shapes);
                same && {
                    let (ma, mb, _, _) = input.mesh_pair(a, b).expect("a mesh pair");
                    let reach = REUSE_REACH * spacing_for(spacing, ma, mb);
                    relative_motion(input, &l.states, a, b).is_some_and(|m| m <= reach)
                }
            });
            if covered {
                used.push((a, b));
            } else {
                late.push((a, b));
            }
        }
        used.sort_unstable();
        let latency_pairs = mesh_pairs.len() - used.len();
        cpu_pairs(&mut self.cpu, input, &late, out)?;
        let r = &mut out.report;
        r.narrow = self.options.narrow_name();
        r.volume = "gpu-uniform";
        if let Some(l) = latest {
            for c in &l.contacts {
                if used.binary_search(&(c.a, c.b)).is_ok() {
                    out.pairs.push(c.clone());
                }
            }
            r.gpu_ms = Some(l.gpu_ms);
            r.latency_steps = Some(input.step - l.step);
        }
        r.latency_pairs += latency_pairs;
        // Main-thread time: the CPU pairs' narrow phase is in `narrow_ms`, the rest here.
        r.volume_ms = (start.elapsed().as_secs_f64() * 1e3 - r.narrow_ms).max(0.0);
        out.pairs.sort_by_key(|p| (p.a, p.b));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use interfere_dynamics::{Body, BodyShape, HalfSpace, MeshShape, Primitive, Shape};
    use interfere_geometry::glam::{DQuat, DVec3, Vec3};
    use std::sync::Arc;

    /// Oracle: the GPU job takes exactly the mesh–mesh candidates; every pair with a half-space,
    /// a primitive or a compound is left to the CPU stage (no device needed to plan).
    #[test]
    fn pairs_with_primitives_go_to_the_cpu() {
        let mesh = Arc::new(
            MeshShape::new(interfere_geometry::shapes::cuboid(Vec3::splat(0.5)).unwrap()).unwrap(),
        );
        let ball = Shape::from_primitive(Primitive::sphere(0.5).unwrap());
        let colliders = vec![
            Some(BodyShape::mesh(mesh.clone())),
            Some(BodyShape::mesh(mesh)),
            Some(BodyShape::from_shape(ball)),
            Some(BodyShape::half_space(
                HalfSpace::new(DVec3::Z, DVec3::ZERO).unwrap(),
            )),
        ];
        let bodies: Vec<Body> = (0..4)
            .map(|i| Body::fixed(DVec3::X * i as f64, DQuat::IDENTITY).unwrap())
            .collect();
        let candidates = [(0, 1), (0, 2), (1, 3), (2, 3)];
        let settings = interfere_dynamics::ContactSettings::default();
        let input = StageInput {
            step: 0,
            dt: 1.0 / 60.0,
            gravity: DVec3::new(0.0, 0.0, -9.81),
            bodies: &bodies,
            colliders: &colliders,
            candidates: &candidates,
            settings: &settings,
        };
        let (request, cpu) = plan(&input, &GpuStageOptions::default());
        assert_eq!(request.snapshot.pairs, vec![(0, 1)]);
        assert_eq!(cpu, vec![(0, 2), (1, 3), (2, 3)]);
        assert_eq!(request.job.pairs.len(), 1);
    }
}

//! The GPU narrow phase: CInDeR (Knott & Pai 2003, §4–6) finds the interfering body pairs from
//! the bodies' world-space meshes, on Bevy's own render device where Bevy renders, or on a
//! headless device of its own where it does not (tests with `MinimalPlugins`).
//!
//! * [`Backend::GpuBlocking`]: the main world builds the objects (the transformed meshes of the
//!   bodies in candidate pairs), runs CInDeR and waits for its answer in the same step.
//! * [`Backend::Gpu`]: asynchronous. Step `n` sends a job through a crossbeam channel to the
//!   render world, where a system in Bevy's `RenderGraph` schedule (set
//!   `RenderGraphSystems::Render`) runs the passes on the render device and sends the pairs back
//!   through a second channel; without a render sub-app a worker thread plays that part. The
//!   answer reaches the main world at a later step (normally `n + 1`). **Latency handling:** the
//!   pairs CInDeR found at step `n` are used at the step the answer arrives; their volume (and
//!   so their contact) is always computed exactly at the current poses, so a pair that separated
//!   meanwhile just gives no contact. Candidate pairs the answer does not cover (the boxes
//!   started overlapping after the job left) are tested on the CPU that step
//!   ([`crate::PhysicsStats::latency_pairs`]). A pair that was tested disjoint at step `n` and
//!   interferes at `n + 1` gets its contact one step late, with at most one step of relative
//!   motion of penetration, which the volume contact's position correction removes.
//!
//! With [`crate::PhysicsSettings::all_triangle_pairs`] both GPU backends also run the
//! Greß–Zachmann traversal (`interfere_gpu::GpuTriangleTraversal`: f32 triangle tests at the
//! leaves, all interfering pairs in one palette dispatch, the collider meshes uploaded once per
//! body numbering) and filter its answer with the exact test, so [`crate::ContactMessage`]
//! carries the exact intersecting triangle pairs as on the CPU.
//!
//! CInDeR runs on the whole scene at once (`Cinder::run`: per-pixel lists, pairs identified at
//! each edge point) with edges offset outward by a pixel, so it also reports pairs that touch or
//! nearly touch: it is a conservative image-space filter. With
//! [`crate::PhysicsSettings::gpu_exact_confirm`] (the default) each reported pair is confirmed by
//! the exact CPU test, so the interfering set equals the CPU backend's wherever CInDeR is
//! conservative; without it the raw image-space answer is used (touching pairs then count as
//! colliding, and penetrations thinner than the pixel size along every view may be missed). [`GpuBackendPlugin`]'s `finish()` checks for a
//! usable device and falls back to [`Backend::Cpu`] with a warning where there is none.

use crate::collider::PreparedShape;
use crate::settings::{Backend, PhysicsSettings, PhysicsStats};
use crate::stepper::{InterferingPair, PhysicsWorld, exact_pair};
use bevy::prelude::*;
use crossbeam_channel::{Receiver, Sender, TryRecvError};
use interfere_geometry::DPose;
use interfere_gpu::{
    Cinder, CinderObject, CinderSceneOptions, GpuContext, GpuMeshSet, GpuTriangleTraversal,
    GpuVolume, GpuVolumeMesh, ObjectPair,
};
use std::sync::Arc;
use std::time::Instant;

/// What the GPU backend found when it started.
#[derive(Resource, Clone, Debug, Default, PartialEq, Eq)]
pub struct GpuSupport {
    /// The adapter in use (name, backend, driver), if any.
    pub adapter: Option<String>,
    /// Whether it is Bevy's render device (otherwise a headless device of our own).
    pub shared_with_renderer: bool,
    /// Why there is no GPU backend, if there is none.
    pub unavailable: Option<String>,
}

/// A device to use for the GPU backends instead of Bevy's render device or a new headless one
/// (insert it before the app finishes; tests share one device this way).
#[derive(Resource, Clone)]
pub struct InterfereGpuContext(pub GpuContext);

/// A CInDeR job: the objects (world-space meshes) and which body each is.
struct GpuJob {
    step: u64,
    generation: u64,
    objects: Vec<CinderObject>,
    bodies: Vec<usize>,
    resolution: u32,
    /// With [`PhysicsSettings::all_triangle_pairs`]: every body's shape (indexed by body) and
    /// mesh pose, for the Greß–Zachmann traversal of the interfering pairs.
    triangles: Option<(ShapeList, Vec<DPose>)>,
}

/// The answer to a job: interfering body pairs.
struct GpuAnswer {
    step: u64,
    generation: u64,
    pairs: Result<Vec<(usize, usize)>, String>,
    /// Exact intersecting triangle pairs per interfering pair (when asked for).
    triangles: TrianglesPerPair,
    /// The candidate pairs the job covered.
    covered: Vec<(usize, usize)>,
    gpu_ms: f64,
}

/// The GPU side in the main world.
#[derive(Resource)]
pub(crate) struct GpuNarrow {
    ctx: Arc<GpuContext>,
    /// The volume kernel and the collider meshes uploaded for it (per body numbering).
    volume: std::sync::Mutex<Option<VolumeCache>>,
    cinder: Arc<Cinder>,
    traversal: Arc<GpuTriangleTraversal>,
    meshes: std::sync::Mutex<Option<MeshCache>>,
    jobs: Sender<(GpuJob, Vec<(usize, usize)>)>,
    answers: Receiver<GpuAnswer>,
    in_flight: Option<u64>,
    latest: Option<GpuAnswer>,
}

/// The render world's end of the channels.
#[derive(Resource)]
struct RenderGpuJobs {
    ctx: Arc<GpuContext>,
    cinder: Arc<Cinder>,
    traversal: Arc<GpuTriangleTraversal>,
    meshes: std::sync::Mutex<Option<MeshCache>>,
    jobs: Receiver<(GpuJob, Vec<(usize, usize)>)>,
    answers: Sender<GpuAnswer>,
}

/// Adds the GPU backends ([`Backend::Gpu`], [`Backend::GpuBlocking`]).
#[derive(Default)]
pub struct GpuBackendPlugin;

impl Plugin for GpuBackendPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<GpuSupport>();
        if !app.is_plugin_added::<crate::PhysicsPlugin>() {
            warn!("interfere: GpuBackendPlugin needs PhysicsPlugin first; GPU backends disabled");
            return;
        }
        app.add_systems(
            FixedPostUpdate,
            (
                ensure_gpu.run_if(wants_gpu),
                narrow_phase_gpu_blocking.run_if(resource_equals(Backend::GpuBlocking)),
                narrow_phase_gpu_async.run_if(resource_equals(Backend::Gpu)),
            )
                .chain()
                .in_set(crate::InterfereSystems::NarrowPhase)
                .before(crate::stepper::collision_messages),
        );
    }

    fn finish(&self, app: &mut App) {
        // Set up now only if a GPU backend is already asked for; otherwise on first use.
        if *app.world().resource::<Backend>() == Backend::Cpu {
            return;
        }
        if let Some(end) = setup_gpu(app.world_mut()) {
            use bevy::render::RenderApp;
            use bevy::render::renderer::{RenderGraph, RenderGraphSystems};
            match app.get_sub_app_mut(RenderApp) {
                Some(render_app) => {
                    render_app.insert_resource(end).add_systems(
                        RenderGraph,
                        run_render_jobs.in_set(RenderGraphSystems::Render),
                    );
                }
                None => spawn_worker(end),
            }
        }
    }
}

fn wants_gpu(backend: Res<Backend>, gpu: Option<Res<GpuNarrow>>) -> bool {
    *backend != Backend::Cpu && gpu.is_none()
}

/// Switching to a GPU backend at run time sets the GPU up (once), or falls back to the CPU.
fn ensure_gpu(world: &mut World) {
    if let Some(end) = setup_gpu(world) {
        spawn_worker(end);
    }
}

/// A worker thread that owns the GPU end (where no render sub-app runs the jobs).
fn spawn_worker(end: RenderGpuJobs) {
    let spawned = std::thread::Builder::new()
        .name("interfere-gpu".into())
        .spawn(move || {
            while let Ok(job) = end.jobs.recv() {
                if end
                    .answers
                    .send(run_job(
                        &end.ctx,
                        &end.cinder,
                        &end.traversal,
                        &end.meshes,
                        job,
                    ))
                    .is_err()
                {
                    break;
                }
            }
        });
    if let Err(e) = spawned {
        warn!("interfere: could not start the GPU worker thread: {e}");
    }
}

/// Finds a device (Bevy's, else a headless one), builds the CInDeR pipelines and the channels
/// and returns the far end of the channels (for the render world or a worker thread); on
/// failure records why, warns and selects [`Backend::Cpu`].
fn setup_gpu(world: &mut World) -> Option<RenderGpuJobs> {
    if world.contains_resource::<GpuNarrow>() {
        return None;
    }
    if world.resource::<GpuSupport>().unavailable.is_some() {
        *world.resource_mut::<Backend>() = Backend::Cpu;
        return None;
    }
    let given = world
        .get_resource::<InterfereGpuContext>()
        .map(|c| c.0.clone());
    let (ctx, shared_with_renderer) = match (given, render_device_context(world)) {
        (Some(ctx), _) => (Ok(ctx), false),
        (None, Some(ctx)) => (Ok(ctx), true),
        (None, None) => (GpuContext::headless(), false),
    };
    let ctx = match ctx {
        Ok(ctx) => Arc::new(ctx),
        Err(e) => {
            let reason = format!("no GPU device for the GPU backend: {e}");
            warn!("interfere: {reason}; falling back to the CPU backend");
            world.resource_mut::<GpuSupport>().unavailable = Some(reason);
            *world.resource_mut::<Backend>() = Backend::Cpu;
            return None;
        }
    };
    let resolution = world.resource::<PhysicsSettings>().cinder_resolution;
    let max = ctx.device.limits().max_texture_dimension_2d;
    if resolution == 0 || resolution > max {
        let reason = format!("CInDeR resolution {resolution} is outside 1..={max} on this device");
        warn!("interfere: {reason}; falling back to the CPU backend");
        world.resource_mut::<GpuSupport>().unavailable = Some(reason);
        *world.resource_mut::<Backend>() = Backend::Cpu;
        return None;
    }
    let cinder = Arc::new(Cinder::new(&ctx));
    let traversal = Arc::new(GpuTriangleTraversal::new(&ctx));
    let (job_tx, job_rx) = crossbeam_channel::unbounded();
    let (answer_tx, answer_rx) = crossbeam_channel::unbounded();
    let end = RenderGpuJobs {
        ctx: ctx.clone(),
        cinder: cinder.clone(),
        traversal: traversal.clone(),
        meshes: std::sync::Mutex::new(None),
        jobs: job_rx,
        answers: answer_tx,
    };
    let a = &ctx.adapter;
    world.insert_resource(GpuSupport {
        adapter: Some(format!("{} ({}, {})", a.name, a.backend, a.driver)),
        shared_with_renderer,
        unavailable: None,
    });
    info!(
        "interfere: GPU backend on {} ({})",
        a.name,
        if shared_with_renderer {
            "Bevy's render device"
        } else {
            "own headless device"
        }
    );
    world.insert_resource(GpuNarrow {
        volume: std::sync::Mutex::new(None),
        ctx,
        cinder,
        traversal,
        meshes: std::sync::Mutex::new(None),
        jobs: job_tx,
        answers: answer_rx,
        in_flight: None,
        latest: None,
    });
    Some(end)
}

/// A context on Bevy's render device, when the render plugin has set one up.
fn render_device_context(world: &World) -> Option<GpuContext> {
    use bevy::render::renderer::{RenderAdapterInfo, RenderDevice, RenderQueue};
    let device = world.get_resource::<RenderDevice>()?;
    let queue = world.get_resource::<RenderQueue>()?;
    let info = world.get_resource::<RenderAdapterInfo>()?;
    let queue: &wgpu::Queue = queue;
    let info: &wgpu::AdapterInfo = info;
    Some(GpuContext::from_parts(
        device.wgpu_device().clone(),
        queue.clone(),
        info,
    ))
}

/// Render world: runs every waiting job on the render device.
fn run_render_jobs(end: Res<RenderGpuJobs>) {
    while let Ok(job) = end.jobs.try_recv() {
        let _ = end.answers.send(run_job(
            &end.ctx,
            &end.cinder,
            &end.traversal,
            &end.meshes,
            job,
        ));
    }
}

/// The GPU volume kernel with the colliders of one body numbering uploaded.
struct VolumeCache {
    generation: u64,
    kernel: GpuVolume,
    meshes: Vec<Option<GpuVolumeMesh>>,
}

/// The volume queries of the interfering pairs on the GPU (`interfere_gpu::GpuVolume`: the
/// uniform rays in a compute kernel; lines too close to call in `f32` are recast exactly on the
/// CPU, so each result equals the CPU's line by line). `None` when the GPU volume cannot run
/// (the caller then uses the CPU); a failed pair gives its error text.
pub(crate) fn gpu_volume_queries(
    gpu: &GpuNarrow,
    pw: &PhysicsWorld,
    settings: &PhysicsSettings,
) -> Option<Vec<Option<crate::stepper::VolumeQuery>>> {
    let mut guard = gpu.volume.lock().ok()?;
    if guard.as_ref().is_none_or(|c| c.generation != pw.generation) {
        let kernel = match GpuVolume::new(&gpu.ctx) {
            Ok(k) => k,
            Err(e) => {
                warn!("interfere: GPU volume kernel unavailable ({e}); volumes on the CPU");
                return None;
            }
        };
        let meshes = pw
            .slots
            .iter()
            .map(|slot| {
                slot.shape.as_ref().and_then(|s| {
                    GpuVolume::upload_with_tree(
                        &gpu.ctx,
                        &s.solid,
                        s.collider.balanced_tree().clone(),
                    )
                    .ok()
                })
            })
            .collect();
        *guard = Some(VolumeCache {
            generation: pw.generation,
            kernel,
            meshes,
        });
    }
    let cache = guard.as_mut()?;
    Some(
        pw.interfering
            .iter()
            .map(|p| {
                let (opts, pa, b_to_a) = crate::stepper::volume_setup(pw, settings, p)?;
                let (ma, mb) = (cache.meshes[p.a].as_ref()?, cache.meshes[p.b].as_ref()?);
                let r = cache
                    .kernel
                    .compute(&gpu.ctx, ma, mb, &b_to_a, &opts)
                    .map_err(|e| e.to_string());
                Some((r, pa))
            })
            .collect(),
    )
}

/// Every body's collider (indexed by body) for the triangle traversal.
type ShapeList = Arc<Vec<Option<Arc<PreparedShape>>>>;
/// Exact intersecting triangle pairs per interfering body pair.
type TrianglesPerPair = Vec<((usize, usize), Vec<(u32, u32)>)>;

/// The uploaded collider meshes of one body numbering: body index to mesh-set index.
struct MeshCache {
    generation: u64,
    set: GpuMeshSet,
    index: Vec<Option<u32>>,
}

fn run_job(
    ctx: &GpuContext,
    cinder: &Cinder,
    traversal: &GpuTriangleTraversal,
    meshes: &std::sync::Mutex<Option<MeshCache>>,
    (job, covered): (GpuJob, Vec<(usize, usize)>),
) -> GpuAnswer {
    let start = Instant::now();
    // The whole-scene CInDeR run (one build and one resolve pass per view, pairs identified
    // per pixel), edges offset outward so touching pairs are reported too: conservative, the
    // CPU confirms (see the module documentation).
    let options = CinderSceneOptions {
        resolution: job.resolution,
        ..CinderSceneOptions::default()
    };
    let pairs = cinder
        .run(ctx, &job.objects, &options)
        .map(|report| {
            let mut out: Vec<(usize, usize)> = report
                .pairs
                .into_iter()
                .map(|(i, j)| {
                    let (a, b) = (job.bodies[i], job.bodies[j]);
                    (a.min(b), a.max(b))
                })
                .collect();
            out.sort_unstable();
            out
        })
        .map_err(|e| e.to_string());
    let mut triangles = Vec::new();
    let pairs = match (pairs, &job.triangles) {
        (Ok(p), Some((shapes, poses))) => {
            match triangle_pairs(ctx, traversal, meshes, job.generation, shapes, poses, &p) {
                Ok(t) => {
                    triangles = t;
                    Ok(p)
                }
                Err(e) => Err(e),
            }
        }
        (p, _) => p,
    };
    GpuAnswer {
        step: job.step,
        generation: job.generation,
        pairs,
        triangles,
        covered,
        gpu_ms: start.elapsed().as_secs_f64() * 1e3,
    }
}

/// The Greß–Zachmann traversal (f32 leaf tests on the GPU, all object pairs in one palette)
/// for the interfering pairs, each result filtered by the exact test.
fn triangle_pairs(
    ctx: &GpuContext,
    traversal: &GpuTriangleTraversal,
    meshes: &std::sync::Mutex<Option<MeshCache>>,
    generation: u64,
    shapes: &[Option<Arc<PreparedShape>>],
    poses: &[DPose],
    pairs: &[(usize, usize)],
) -> Result<TrianglesPerPair, String> {
    if pairs.is_empty() {
        return Ok(Vec::new());
    }
    let mut guard = meshes
        .lock()
        .map_err(|_| "GPU mesh cache poisoned".to_string())?;
    if guard.as_ref().is_none_or(|c| c.generation != generation) {
        let mut index = vec![None; shapes.len()];
        let mut list = Vec::new();
        for (i, s) in shapes.iter().enumerate() {
            if let Some(s) = s {
                index[i] = Some(list.len() as u32);
                list.push((s.solid.mesh(), s.collider.balanced_tree()));
            }
        }
        let set = GpuMeshSet::upload(ctx, &list).map_err(|e| e.to_string())?;
        *guard = Some(MeshCache {
            generation,
            set,
            index,
        });
    }
    let cache = guard.as_ref().expect("filled above");
    let palette: Vec<ObjectPair> = pairs
        .iter()
        .filter_map(|&(a, b)| {
            Some(ObjectPair {
                a: (*cache.index.get(a)?)?,
                b: (*cache.index.get(b)?)?,
                b_to_a: poses[a].inverse().mul(&poses[b]),
            })
        })
        .collect();
    if palette.len() != pairs.len() {
        return Err("an interfering body has no collider mesh".into());
    }
    let found = traversal
        .triangle_pairs(ctx, &cache.set, &palette, 1 << 24, None)
        .map_err(|e| e.to_string())?;
    Ok(pairs
        .iter()
        .zip(&palette)
        .enumerate()
        .map(|(k, (&(a, b), op))| {
            let (sa, sb) = (
                shapes[a].as_ref().expect("indexed"),
                shapes[b].as_ref().expect("indexed"),
            );
            let exact = interfere_gpu::tri_tri::exact_filter(
                sa.solid.mesh(),
                sb.solid.mesh(),
                &op.b_to_a,
                &found.of(k as u32),
            );
            ((a, b), exact)
        })
        .collect())
}

/// The job for the current poses: world-space meshes of the bodies in candidate pairs.
fn build_job(
    pw: &PhysicsWorld,
    step: u64,
    resolution: u32,
    with_triangles: bool,
) -> (GpuJob, Vec<(usize, usize)>) {
    let mut bodies: Vec<usize> = pw.candidates.iter().flat_map(|&(a, b)| [a, b]).collect();
    bodies.sort_unstable();
    bodies.dedup();
    let objects = bodies
        .iter()
        .map(|&i| {
            let shape = pw.slots[i].shape.as_ref().expect("candidates have shapes");
            let pose = pw.pose(i);
            CinderObject {
                vertices: shape
                    .solid
                    .vertices()
                    .iter()
                    .map(|v| pose.transform_point(*v).as_vec3().to_array())
                    .collect(),
                triangles: shape.solid.triangles().to_vec(),
            }
        })
        .collect();
    (
        GpuJob {
            step,
            generation: pw.generation,
            objects,
            bodies,
            resolution,
            triangles: with_triangles.then(|| {
                (
                    Arc::new(pw.slots.iter().map(|s| s.shape.clone()).collect()),
                    (0..pw.slots.len()).map(|i| pw.pose(i)).collect(),
                )
            }),
        },
        pw.candidates.clone(),
    )
}

fn pairs_to_interfering(
    pairs: &[(usize, usize)],
    triangles: &TrianglesPerPair,
    candidates: &[(usize, usize)],
) -> Vec<InterferingPair> {
    pairs
        .iter()
        .filter(|p| candidates.binary_search(p).is_ok())
        .map(|&(a, b)| InterferingPair {
            a,
            b,
            triangle_pairs: triangles
                .iter()
                .find(|(k, _)| *k == (a, b))
                .map(|(_, t)| t.clone())
                .unwrap_or_default(),
            contained: false,
        })
        .collect()
}

/// With [`PhysicsSettings::gpu_exact_confirm`], keeps only the GPU-reported pairs the exact
/// CPU test confirms (keeping the GPU's exact triangle pairs where it found them).
fn confirm(
    pw: &PhysicsWorld,
    found: Vec<InterferingPair>,
    settings: &PhysicsSettings,
) -> Vec<InterferingPair> {
    if !settings.gpu_exact_confirm {
        return found;
    }
    crate::stepper::par_map(&found, |p| {
        exact_pair(pw, p.a, p.b, false).map(|exact| InterferingPair {
            triangle_pairs: if p.triangle_pairs.is_empty() {
                exact.triangle_pairs
            } else {
                p.triangle_pairs.clone()
            },
            ..exact
        })
    })
    .into_iter()
    .flatten()
    .collect()
}

fn fall_back(backend: &mut Backend, why: &str) {
    warn!("interfere: GPU narrow phase failed ({why}); falling back to the CPU backend");
    *backend = Backend::Cpu;
}

/// [`Backend::GpuBlocking`]: CInDeR on the current poses (and, with
/// [`PhysicsSettings::all_triangle_pairs`], the GPU triangle traversal of the interfering
/// pairs), waited for.
fn narrow_phase_gpu_blocking(
    mut pw: ResMut<PhysicsWorld>,
    gpu: Option<Res<GpuNarrow>>,
    settings: Res<PhysicsSettings>,
    mut stats: ResMut<PhysicsStats>,
    mut backend: ResMut<Backend>,
) {
    let start = Instant::now();
    let Some(gpu) = gpu else {
        return fall_back(&mut backend, "no GPU set up");
    };
    let (job, covered) = build_job(
        &pw,
        stats.steps,
        settings.cinder_resolution,
        settings.all_triangle_pairs,
    );
    let answer = run_job(
        &gpu.ctx,
        &gpu.cinder,
        &gpu.traversal,
        &gpu.meshes,
        (job, covered),
    );
    match answer.pairs {
        Ok(pairs) => {
            let found = pairs_to_interfering(&pairs, &answer.triangles, &pw.candidates);
            pw.interfering = confirm(&pw, found, &settings);
            stats.gpu_ms = Some(answer.gpu_ms);
        }
        Err(e) => return fall_back(&mut backend, &e),
    }
    stats.backend = Backend::GpuBlocking;
    stats.latency_pairs = 0;
    stats.interfering_pairs = pw.interfering.len();
    stats.narrow_phase_ms = start.elapsed().as_secs_f64() * 1e3;
}

/// [`Backend::Gpu`]: uses the newest answer, tests uncovered candidates on the CPU, sends the
/// next job.
fn narrow_phase_gpu_async(
    mut pw: ResMut<PhysicsWorld>,
    gpu: Option<ResMut<GpuNarrow>>,
    settings: Res<PhysicsSettings>,
    mut stats: ResMut<PhysicsStats>,
    mut backend: ResMut<Backend>,
) {
    let start = Instant::now();
    let Some(mut gpu) = gpu else {
        return fall_back(&mut backend, "no GPU set up");
    };
    loop {
        match gpu.answers.try_recv() {
            Ok(a) => {
                if gpu.in_flight == Some(a.step) {
                    gpu.in_flight = None;
                }
                gpu.latest = Some(a);
            }
            Err(TryRecvError::Empty) => break,
            Err(TryRecvError::Disconnected) => {
                world_lost(&mut gpu);
                return fall_back(&mut backend, "the GPU worker stopped");
            }
        }
    }
    let pw = &mut *pw;
    // An answer about an older body numbering (bodies were added or removed) is useless.
    if gpu
        .latest
        .as_ref()
        .is_some_and(|a| a.generation != pw.generation)
    {
        gpu.latest = None;
    }
    let (mut interfering, covered, gpu_ms) = match &gpu.latest {
        Some(a) => match &a.pairs {
            Ok(p) => (
                pairs_to_interfering(p, &a.triangles, &pw.candidates),
                a.covered.clone(),
                Some(a.gpu_ms),
            ),
            Err(e) => {
                let e = e.clone();
                return fall_back(&mut backend, &e);
            }
        },
        None => (Vec::new(), Vec::new(), None),
    };
    // Candidates the answer did not cover: the CPU decides them this step.
    let mut latency = 0;
    for &(a, b) in &pw.candidates {
        if covered.binary_search(&(a, b)).is_err() {
            latency += 1;
            if let Some(p) = exact_pair(pw, a, b, false) {
                interfering.push(p);
            }
        }
    }
    interfering.sort_by_key(|p| (p.a, p.b));
    pw.interfering = confirm(pw, interfering, &settings);
    if gpu.in_flight.is_none() {
        let step = stats.steps;
        let job = build_job(
            pw,
            step,
            settings.cinder_resolution,
            settings.all_triangle_pairs,
        );
        if gpu.jobs.send(job).is_ok() {
            gpu.in_flight = Some(step);
        }
    }
    stats.backend = Backend::Gpu;
    stats.gpu_ms = gpu_ms;
    stats.latency_pairs = latency;
    stats.interfering_pairs = pw.interfering.len();
    stats.narrow_phase_ms = start.elapsed().as_secs_f64() * 1e3;
}

fn world_lost(gpu: &mut GpuNarrow) {
    gpu.in_flight = None;
    gpu.latest = None;
}

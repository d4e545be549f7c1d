//! `interfere bench gpu-job`: one GPU job per physics step (`interfere_gpu::step_job`: CInDeR,
//! the Greß–Zachmann triangle traversal and every candidate pair's uniform volume in one
//! submission with one readback) against the same work done by separate blocking calls, as the
//! plugin did it: `Cinder::run`, then `GpuTriangleTraversal::triangle_pairs` on the flagged
//! pairs (with the exact filter), then `GpuVolume::compute` once per pair.
//!
//! The scene is a falling-meshes-like heap of `N` bodies (icospheres, tori, cuboids of about unit
//! size on a jittered grid tighter than their size, so neighbours touch or overlap), moved a
//! little every frame; the candidate pairs are the overlapping world boxes. Every frame runs
//! both paths on the same input; their answers must agree (flags, exact triangle pairs,
//! volumes bit for bit) or the bench stops. The first frame (pipelines, mesh upload) is not
//! timed; figures are medians over the other frames. The job is driven as a frame loop would
//! drive it: `submit`, then `poll_ready` every 0.1 ms until the readback is there, then
//! `ReadyJob::finish`; "caller" is the time spent inside `submit` and `poll_ready`, i.e. what
//! the thread that owns the job pays (the separate calls block their caller throughout).
//!
//! `--nut-bolt N` runs the Factory setting (Narang et al. 2022: many nut–bolt pairs in one GPU
//! job) instead of the heap: `N` copies of the nut-and-bolt demo's M10 bolt (131,456 triangles)
//! each with its nut (44,032) on it, every pair at its own angle on the thread and screwed
//! down by 0.02 rad (and its share of the pitch) per frame; the meshes are uploaded once and
//! shared by every pair, and the traversal and volume of every pair run batched in the one job.
//! The job runs without CInDeR there (`--cinder auto`; `--cinder on` to run it): every pair
//! touches, so the image-space test only adds its cost, and over a scene of many pairs its
//! pixel is wider than the thread's 0.05 mm clearance (at 256 px and 8 pairs it missed a pair
//! with 3,070 crossing triangle pairs, which the check below reports as an error).
//!
//! Every frame also checks the job against the CPU on one thread (column "cpu"): each candidate
//! pair's crossing triangle pairs against the exact OBBTree traversal
//! (`MeshQueries::all_pairs`, Shewchuk's predicates; a pair with crossing triangles that
//! CInDeR did not flag is an error), and each volume against the CPU twin
//! (`interfere_geometry::volume::UniformVolume`: the same lines, the volume within 10⁻⁵ of it
//! and each gradient component within 10⁻⁴ of the largest). A difference stops the bench.

use super::{m10_bolt_and_nut, median, screwed_nut};
use crate::output::{ms, print_json};
use clap::Args;
use interfere_geometry::glam::{DVec3, Quat, Vec3};
use interfere_geometry::volume::{Sampling, UniformOptions, UniformVolume};
use interfere_geometry::{Aabb, DPose, MeshQueries, Method, Pose, Solid, shapes};
use interfere_gpu::step_job::job_cinder_object;
use interfere_gpu::{
    Cinder, CinderSceneOptions, GpuContext, GpuMeshSet, GpuTriangleTraversal, GpuVolume, JobMesh,
    JobObject, JobVolume, ObjectPair, StepJobInput, StepJobRunner,
};
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;

/// Arguments of `interfere bench gpu-job`.
#[derive(Args)]
pub struct GpuJobArgs {
    /// Body counts, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "10,40")]
    bodies: Vec<usize>,
    /// Instead of the heap: this many nut–bolt pairs per job (comma separated counts).
    #[arg(long = "nut-bolt", value_delimiter = ',')]
    nut_bolt: Vec<usize>,
    /// Whether the job runs CInDeR before the traversal: `auto` runs it on the heap, not on
    /// nut–bolt pairs (every pair touches, so the image-space test can only cost, and over a
    /// scene of many pairs a pixel is wider than the thread's 0.05 mm clearance: it misses
    /// contacts).
    #[arg(long, value_enum, default_value_t = CinderUse::Auto)]
    cinder: CinderUse,
    /// Frames per body count (the first is not timed).
    #[arg(long, default_value_t = 6)]
    frames: usize,
    /// CInDeR resolution (pixels along the longer side of a view).
    #[arg(long, default_value_t = 256)]
    resolution: u32,
    /// Volume line spacing, relative to the smaller body's box side (the plugin's default).
    #[arg(long, default_value_t = 0.125)]
    spacing: f64,
    /// Seed of the heap and its motion.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// Whether a job runs CInDeR (`--cinder`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum CinderUse {
    Auto,
    On,
    Off,
}

/// One body count's figures (milliseconds are medians over the timed frames).
#[derive(Serialize)]
struct Row {
    bodies: usize,
    /// Nut–bolt pairs (`--nut-bolt`; 0 for the heap).
    nut_bolt_pairs: usize,
    /// Whether the job ran CInDeR (`flagged_pairs` are every candidate pair when not).
    cinder: bool,
    candidate_pairs: f64,
    flagged_pairs: f64,
    /// Exactly crossing triangle pairs over all pairs (the job's, equal to the CPU's).
    triangle_pairs: f64,
    volume_lines: f64,
    /// The job: submit to answer (submit, non-blocking polls, finish).
    job_ms: f64,
    /// Time the calling thread spent in `submit` and `poll_ready` (not waiting).
    job_caller_ms: f64,
    /// Host preparation and recording before the submission.
    job_prepare_ms: f64,
    /// Of which: the CInDeR scene.
    job_prepare_cinder_ms: f64,
    /// Of which: the volume pairs (local frames, refits).
    job_prepare_volume_ms: f64,
    /// Submission to readback seen.
    job_gpu_ms: f64,
    /// `ReadyJob::finish`: decode, exact recasts, exact triangle filter.
    job_cpu_ms: f64,
    job_rounds_max: u32,
    job_readback_kib: f64,
    /// The separate blocking calls.
    separate_ms: f64,
    separate_cinder_ms: f64,
    separate_triangles_ms: f64,
    separate_volume_ms: f64,
    /// The CPU check on one thread: exact triangle pairs (OBBTree) and uniform volumes.
    cpu_ms: f64,
}

#[derive(Serialize)]
struct Report {
    adapter: String,
    resolution: u32,
    spacing: f64,
    frames: usize,
    rows: Vec<Row>,
}

struct Heap {
    meshes: Vec<JobMesh>,
    objects: Vec<JobObject>,
    /// Per body: its mesh's index in `meshes`.
    kind: Vec<usize>,
    /// Nut–bolt pairs: per pair, its bolt's pose and its nut's angle on the thread (empty for
    /// the heap).
    screws: Vec<(DPose, f64)>,
}

fn lcg(state: &mut u64) -> f64 {
    *state = state
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (*state >> 11) as f64 / (1u64 << 53) as f64
}

fn heap(n: usize, seed: u64) -> Heap {
    let meshes = vec![
        JobMesh::new(0, Arc::new(shapes::icosphere(0.5, 2).unwrap())),
        JobMesh::new(1, Arc::new(shapes::torus(0.45, 0.15, 24, 12).unwrap())),
        JobMesh::new(2, Arc::new(shapes::cuboid(Vec3::splat(0.4)).unwrap())),
    ];
    let mut state = seed.wrapping_add(0x9e37_79b9);
    let side = (n as f64).cbrt().ceil() as usize;
    let mut objects = Vec::with_capacity(n);
    let mut kind = Vec::with_capacity(n);
    for b in 0..n {
        let (x, y, z) = (b % side, (b / side) % side, b / (side * side));
        let jitter = |s: &mut u64| (lcg(s) - 0.5) * 0.2;
        let t = DVec3::new(
            x as f64 * 0.85 + jitter(&mut state),
            z as f64 * 0.85 + jitter(&mut state),
            y as f64 * 0.85 + jitter(&mut state),
        );
        let axis = Vec3::new(
            lcg(&mut state) as f32 - 0.5,
            lcg(&mut state) as f32 - 0.5,
            lcg(&mut state) as f32 - 0.5,
        )
        .normalize_or(Vec3::Y);
        let pose = Pose::new(
            Quat::from_axis_angle(axis, lcg(&mut state) as f32 * 6.0),
            Vec3::ZERO,
        )
        .to_f64();
        let k = b % meshes.len();
        objects.push(JobObject {
            mesh: meshes[k].id,
            pose: DPose {
                translation: t,
                ..pose
            },
        });
        kind.push(k);
    }
    Heap {
        meshes,
        objects,
        kind,
        screws: Vec::new(),
    }
}

/// `n` nut–bolt pairs (see the module documentation): bolts (mesh 0) on a square grid 30 mm
/// apart, each nut (mesh 1) at its own angle. Bodies `2i` and `2i + 1` are pair `i`.
fn nut_bolts(n: usize, seed: u64) -> Result<Heap, String> {
    let (bolt, nut) = m10_bolt_and_nut()?;
    let meshes = vec![
        JobMesh::new(0, Arc::new(bolt)),
        JobMesh::new(1, Arc::new(nut)),
    ];
    let mut state = seed.wrapping_add(0x7f4a_7c15);
    let side = (n as f64).sqrt().ceil() as usize;
    let mut heap = Heap {
        meshes,
        objects: Vec::with_capacity(2 * n),
        kind: Vec::with_capacity(2 * n),
        screws: Vec::with_capacity(n),
    };
    for i in 0..n {
        let at = DPose {
            rotation: interfere_geometry::glam::DMat3::IDENTITY,
            translation: DVec3::new((i % side) as f64 * 30.0, (i / side) as f64 * 30.0, 0.0),
        };
        let theta = lcg(&mut state) * std::f64::consts::TAU;
        heap.screws.push((at, theta));
        heap.objects.push(JobObject { mesh: 0, pose: at });
        heap.objects.push(JobObject {
            mesh: 1,
            pose: at.mul(&screwed_nut(theta)),
        });
        heap.kind.extend([0, 1]);
    }
    Ok(heap)
}

/// Moves every body a little (a frame of a falling heap), or screws every nut down its bolt.
fn advance(heap: &mut Heap, state: &mut u64) {
    if !heap.screws.is_empty() {
        for (i, (at, theta)) in heap.screws.iter_mut().enumerate() {
            *theta += 0.02;
            heap.objects[2 * i + 1].pose = at.mul(&screwed_nut(*theta));
        }
        return;
    }
    for o in &mut heap.objects {
        let d = DVec3::new(lcg(state) - 0.5, lcg(state) - 0.7, lcg(state) - 0.5) * 0.03;
        let spin = Quat::from_rotation_y((lcg(state) as f32 - 0.5) * 0.05).as_dquat();
        o.pose.translation += d;
        o.pose.rotation = interfere_geometry::glam::DMat3::from_quat(spin) * o.pose.rotation;
    }
}

fn world_box(solid: &Solid, pose: &DPose) -> Aabb {
    let mut lo = Vec3::INFINITY;
    let mut hi = Vec3::NEG_INFINITY;
    for &v in solid.vertices() {
        let p = pose.transform_point(v).as_vec3();
        lo = lo.min(p);
        hi = hi.max(p);
    }
    Aabb { min: lo, max: hi }
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// Runs the benchmark and prints the report.
pub fn run(args: GpuJobArgs) -> Result<(), String> {
    if args.frames < 2 || args.bodies.contains(&0) || args.nut_bolt.contains(&0) {
        return Err(
            "--frames must be at least 2 and every --bodies and --nut-bolt at least 1".into(),
        );
    }
    if !(args.spacing.is_finite() && args.spacing > 0.0) {
        return Err(format!("--spacing {} must be positive", args.spacing));
    }
    let ctx = GpuContext::headless().map_err(|e| e.to_string())?;
    let mut runner = StepJobRunner::new(&ctx).map_err(|e| e.to_string())?;
    let cinder = Cinder::new(&ctx);
    let traversal = GpuTriangleTraversal::new(&ctx);
    let mut volume = GpuVolume::new(&ctx).map_err(|e| e.to_string())?;
    let options = CinderSceneOptions {
        resolution: args.resolution,
        ..Default::default()
    };
    let mut rows = Vec::new();
    // (bodies, nut–bolt pairs) of each row.
    let scenes: Vec<(usize, usize)> = if args.nut_bolt.is_empty() {
        args.bodies.iter().map(|&n| (n, 0)).collect()
    } else {
        args.nut_bolt.iter().map(|&p| (2 * p, p)).collect()
    };
    for &(n, screws) in &scenes {
        let mut heap = if screws > 0 {
            nut_bolts(screws, args.seed)?
        } else {
            heap(n, args.seed)
        };
        let use_cinder = match args.cinder {
            CinderUse::On => true,
            CinderUse::Off => false,
            CinderUse::Auto => screws == 0,
        };
        let mut state = args.seed ^ 0x5151;
        let solids: Vec<Arc<Solid>> = heap.meshes.iter().map(|m| m.solid.clone()).collect();
        let mut cpu = CpuCheck::new(&solids);
        // The separate path's uploads, once (as a simulation would).
        let set = GpuMeshSet::upload(
            &ctx,
            &heap
                .meshes
                .iter()
                .map(|m| (m.solid.mesh(), m.tree.as_ref()))
                .collect::<Vec<_>>(),
        )
        .map_err(|e| e.to_string())?;
        let vol_meshes = heap
            .meshes
            .iter()
            .map(|m| GpuVolume::upload_with_tree(&ctx, &m.solid, (*m.tree).clone()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        let sizes: Vec<f64> = heap
            .meshes
            .iter()
            .map(|m| {
                let b = m.solid.aabb();
                f64::from((b.max - b.min).min_element())
            })
            .collect();
        let mut t = Timings::default();
        for frame in 0..args.frames {
            advance(&mut heap, &mut state);
            let boxes: Vec<Aabb> = heap
                .objects
                .iter()
                .zip(&heap.kind)
                .map(|(o, &k)| world_box(&heap.meshes[k].solid, &o.pose))
                .collect();
            let mut pairs = Vec::new();
            for i in 0..n {
                for j in i + 1..n {
                    if boxes[i].overlaps(&boxes[j]) {
                        pairs.push((i as u32, j as u32));
                    }
                }
            }
            let sampling: Vec<Sampling> = pairs
                .iter()
                .map(|&(i, j)| {
                    Sampling::Spacing(
                        args.spacing
                            * sizes[heap.kind[i as usize]].min(sizes[heap.kind[j as usize]]),
                    )
                })
                .collect();
            let input = StepJobInput {
                step: frame as u64,
                meshes: heap.meshes.clone(),
                objects: heap.objects.clone(),
                pairs: pairs.clone(),
                cinder: use_cinder.then_some(options),
                triangle_pairs: true,
                volume: Some(JobVolume {
                    sampling: sampling.clone(),
                    collect_points: true,
                    max_rays: 1 << 18,
                }),
            };

            // The job: submit, poll without blocking (sleeping 0.1 ms between polls, as a frame
            // loop would do other work), then the CPU part.
            let clock = Instant::now();
            let mut job = runner
                .submit(&ctx, input)
                .map_err(|e| format!("step job: {e}"))?;
            let mut caller_ms = ms(clock);
            let ready = loop {
                let poll = Instant::now();
                let ready = runner
                    .poll_ready(&ctx, &mut job)
                    .map_err(|e| format!("step job: {e}"))?;
                caller_ms += ms(poll);
                match ready {
                    Some(ready) => break ready,
                    None => std::thread::sleep(std::time::Duration::from_micros(100)),
                }
            };
            let answer = ready.finish();
            let job_ms = ms(clock);

            // The separate blocking calls.
            let clock = Instant::now();
            let flagged = if use_cinder {
                let mut used: Vec<u32> = pairs.iter().flat_map(|&(i, j)| [i, j]).collect();
                used.sort_unstable();
                used.dedup();
                let objects: Vec<_> = used
                    .iter()
                    .map(|&o| {
                        job_cinder_object(
                            &heap.meshes[heap.kind[o as usize]].solid,
                            &heap.objects[o as usize].pose,
                        )
                    })
                    .collect();
                let report = cinder
                    .run(&ctx, &objects, &options)
                    .map_err(|e| format!("Cinder::run: {e}"))?;
                let mut flagged: Vec<(u32, u32)> = report
                    .pairs
                    .iter()
                    .map(|&(a, b)| (used[a], used[b]))
                    .filter(|p| pairs.contains(p))
                    .collect();
                flagged.sort_by_key(|p| pairs.iter().position(|q| q == p));
                flagged
            } else {
                pairs.clone()
            };
            let cinder_ms = ms(clock);
            let clock = Instant::now();
            let b_to_a = |(i, j): (u32, u32)| {
                let (pa, pb) = (heap.objects[i as usize].pose, heap.objects[j as usize].pose);
                pa.inverse().mul(&pb)
            };
            let palette: Vec<ObjectPair> = flagged
                .iter()
                .map(|&(i, j)| ObjectPair {
                    a: heap.kind[i as usize] as u32,
                    b: heap.kind[j as usize] as u32,
                    b_to_a: b_to_a((i, j)),
                })
                .collect();
            let found = traversal
                .triangle_pairs(&ctx, &set, &palette, 1 << 24, None)
                .map_err(|e| format!("triangle traversal: {e}"))?;
            let mut triangles = vec![Vec::new(); pairs.len()];
            for (k, op) in palette.iter().enumerate() {
                let (i, j) = flagged[k];
                let at = pairs.iter().position(|&p| p == (i, j)).unwrap_or(0);
                triangles[at] = interfere_gpu::tri_tri::exact_filter(
                    heap.meshes[op.a as usize].solid.mesh(),
                    heap.meshes[op.b as usize].solid.mesh(),
                    &op.b_to_a,
                    &found.of(k as u32),
                );
            }
            let triangles_ms = ms(clock);
            let clock = Instant::now();
            let mut volumes = Vec::with_capacity(pairs.len());
            for (k, &(i, j)) in pairs.iter().enumerate() {
                let o = UniformOptions {
                    sampling: sampling[k],
                    centre: DVec3::ZERO,
                    collect_points: true,
                    max_rays: 1 << 18,
                };
                volumes.push(
                    volume
                        .compute(
                            &ctx,
                            &vol_meshes[heap.kind[i as usize]],
                            &vol_meshes[heap.kind[j as usize]],
                            &b_to_a((i, j)),
                            &o,
                        )
                        .map_err(|e| e.to_string()),
                );
            }
            let volume_ms = ms(clock);

            // Same answers, or stop.
            if use_cinder && answer.flagged.as_ref() != Some(&flagged) {
                return Err(format!("{n} bodies, frame {frame}: the flags differ"));
            }
            if answer.triangles.as_ref() != Some(&triangles) {
                return Err(format!(
                    "{n} bodies, frame {frame}: the triangle pairs differ"
                ));
            }
            let job_volumes = answer.volumes.as_ref().ok_or("no volumes")?;
            for (k, (a, b)) in job_volumes.iter().zip(&volumes).enumerate() {
                if a.as_ref().ok() != b.as_ref().ok() {
                    return Err(format!(
                        "{n} bodies, frame {frame}: pair {:?}'s volume differs",
                        pairs[k]
                    ));
                }
            }
            let clock = Instant::now();
            cpu.check(&heap, &pairs, &sampling, &answer)
                .map_err(|e| format!("{n} bodies, frame {frame}: {e}"))?;
            let cpu_ms = ms(clock);
            if frame == 0 {
                continue;
            }
            t.cpu_check.push(cpu_ms);
            t.pairs.push(pairs.len() as f64);
            t.flagged.push(flagged.len() as f64);
            t.triangles_found
                .push(triangles.iter().map(Vec::len).sum::<usize>() as f64);
            t.lines.push(answer.stats.volume_lines as f64);
            t.job.push(job_ms);
            t.caller.push(caller_ms);
            t.prepare.push(answer.stats.prepare_ms);
            t.prepare_cinder.push(answer.stats.prepare_cinder_ms);
            t.prepare_volume.push(answer.stats.prepare_volume_ms);
            t.gpu.push(answer.gpu_ms);
            t.cpu.push(answer.cpu_ms);
            t.rounds = t.rounds.max(answer.rounds);
            t.readback.push(answer.stats.readback_bytes as f64 / 1024.0);
            t.separate.push(cinder_ms + triangles_ms + volume_ms);
            t.cinder.push(cinder_ms);
            t.triangles.push(triangles_ms);
            t.volume.push(volume_ms);
        }
        rows.push(Row {
            bodies: n,
            nut_bolt_pairs: screws,
            cinder: use_cinder,
            candidate_pairs: mean(&t.pairs),
            flagged_pairs: mean(&t.flagged),
            triangle_pairs: mean(&t.triangles_found),
            volume_lines: mean(&t.lines),
            job_ms: median(t.job),
            job_caller_ms: median(t.caller),
            job_prepare_ms: median(t.prepare),
            job_prepare_cinder_ms: median(t.prepare_cinder),
            job_prepare_volume_ms: median(t.prepare_volume),
            job_gpu_ms: median(t.gpu),
            job_cpu_ms: median(t.cpu),
            job_rounds_max: t.rounds,
            job_readback_kib: mean(&t.readback),
            separate_ms: median(t.separate),
            separate_cinder_ms: median(t.cinder),
            separate_triangles_ms: median(t.triangles),
            separate_volume_ms: median(t.volume),
            cpu_ms: median(t.cpu_check),
        });
    }
    let report = Report {
        adapter: ctx.adapter.to_string(),
        resolution: args.resolution,
        spacing: args.spacing,
        frames: args.frames,
        rows,
    };
    if args.json {
        return print_json(&report);
    }
    println!("adapter: {}", report.adapter);
    println!(
        "CInDeR {} px, volume spacing {} x the smaller body's box side, {} frames (first \
         untimed); medians in ms; answers agree on every frame, with each other and with the \
         CPU (column cpu: the CPU's exact triangle pairs and uniform volumes, one thread)",
        report.resolution, report.spacing, report.frames
    );
    if report.rows.iter().any(|r| r.nut_bolt_pairs > 0) {
        println!(
            "nut-bolt pairs: bodies = 2 x pairs (the M10 bolt's 131,456 and the nut's 44,032 \
             triangles, uploaded once and shared by every pair)"
        );
    }
    println!(
        "{:>6} {:>6} {:>7} {:>7} | {:>8} {:>7} {:>7} {:>8} {:>6} {:>6} {:>6} | {:>9} {:>7} \
         {:>7} {:>7} | {:>6} | {:>8}",
        "bodies",
        "pairs",
        "flagged",
        "lines",
        "job",
        "caller",
        "prepare",
        "gpu",
        "finish",
        "rounds",
        "KiB",
        "separate",
        "cinder",
        "tris",
        "volume",
        "ratio",
        "cpu"
    );
    for r in &report.rows {
        println!(
            "{:>6} {:>6.1} {:>7.1} {:>7.0} | {:>8.1} {:>7.1} {:>7.1} {:>8.1} {:>6.1} {:>6} \
             {:>6.0} | {:>9.1} {:>7.1} {:>7.1} {:>7.1} | {:>6.2} | {:>8.1}",
            r.bodies,
            r.candidate_pairs,
            r.flagged_pairs,
            r.volume_lines,
            r.job_ms,
            r.job_caller_ms,
            r.job_prepare_ms,
            r.job_gpu_ms,
            r.job_cpu_ms,
            r.job_rounds_max,
            r.job_readback_kib,
            r.separate_ms,
            r.separate_cinder_ms,
            r.separate_triangles_ms,
            r.separate_volume_ms,
            r.separate_ms / r.job_ms.max(1e-9),
            r.cpu_ms
        );
    }
    Ok(())
}

#[derive(Default)]
struct Timings {
    pairs: Vec<f64>,
    flagged: Vec<f64>,
    triangles_found: Vec<f64>,
    lines: Vec<f64>,
    job: Vec<f64>,
    caller: Vec<f64>,
    prepare: Vec<f64>,
    prepare_cinder: Vec<f64>,
    prepare_volume: Vec<f64>,
    gpu: Vec<f64>,
    cpu: Vec<f64>,
    rounds: u32,
    readback: Vec<f64>,
    separate: Vec<f64>,
    cinder: Vec<f64>,
    triangles: Vec<f64>,
    volume: Vec<f64>,
    cpu_check: Vec<f64>,
}

/// The CPU side of the check (see the module documentation): each mesh's OBBTree queries, and a
/// uniform volume per pair of meshes, built on first use.
struct CpuCheck<'a> {
    solids: &'a [Arc<Solid>],
    queries: Vec<MeshQueries>,
    volumes: Vec<Vec<Option<UniformVolume<'a>>>>,
}

impl<'a> CpuCheck<'a> {
    fn new(solids: &'a [Arc<Solid>]) -> Self {
        let k = solids.len();
        Self {
            solids,
            queries: solids
                .iter()
                .map(|s| MeshQueries::new(s.mesh().clone()))
                .collect(),
            volumes: (0..k).map(|_| (0..k).map(|_| None).collect()).collect(),
        }
    }

    /// The uniform volume of meshes `(a, b)`.
    fn volume(&mut self, a: usize, b: usize) -> &UniformVolume<'a> {
        let solids = self.solids;
        self.volumes[a][b].get_or_insert_with(|| UniformVolume::new(&solids[a], &solids[b]))
    }

    /// Checks the job's `answer` for candidate `pairs` against the CPU.
    fn check(
        &mut self,
        heap: &Heap,
        pairs: &[(u32, u32)],
        sampling: &[Sampling],
        answer: &interfere_gpu::StepJobAnswer,
    ) -> Result<(), String> {
        let triangles = answer.triangles.as_ref().ok_or("no triangle pairs")?;
        let volumes = answer.volumes.as_ref().ok_or("no volumes")?;
        for (k, &(i, j)) in pairs.iter().enumerate() {
            let (ka, kb) = (heap.kind[i as usize], heap.kind[j as usize]);
            let (pa, pb) = (heap.objects[i as usize].pose, heap.objects[j as usize].pose);
            let b_to_a = pa.inverse().mul(&pb);
            let want = self.queries[ka]
                .all_pairs(&self.queries[kb], &b_to_a, Method::Obb)
                .map_err(|e| e.to_string())?;
            let mut got = triangles[k].clone();
            got.sort_unstable();
            if got != want {
                // Without CInDeR every candidate pair is traversed.
                let traversed = answer.flagged.as_ref().is_none_or(|f| f.contains(&(i, j)));
                let why = if traversed {
                    "the GPU traversal's"
                } else {
                    "CInDeR did not flag the pair; its"
                };
                return Err(format!(
                    "pair ({i}, {j}): {why} {} crossing triangle pairs differ from the CPU's {}",
                    got.len(),
                    want.len()
                ));
            }
            let o = UniformOptions {
                sampling: sampling[k],
                centre: DVec3::ZERO,
                collect_points: true,
                max_rays: 1 << 18,
            };
            let cpu = self.volume(ka, kb).compute(&b_to_a, &o);
            match (&volumes[k], &cpu) {
                (Ok(gpu), Ok(cpu)) => interfere_gpu::agrees_with_cpu(gpu, cpu)
                    .map_err(|e| format!("pair ({i}, {j})'s volume: {e}"))?,
                (Err(_), Err(_)) => {}
                (gpu, cpu) => {
                    return Err(format!(
                        "pair ({i}, {j})'s volume: job {:?}, CPU {:?}",
                        gpu.as_ref().map(|v| v.volume),
                        cpu.as_ref().map(|v| v.volume)
                    ));
                }
            }
        }
        Ok(())
    }
}

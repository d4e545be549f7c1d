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

use super::median;
use crate::output::{ms, print_json};
use clap::Args;
use interfere_geometry::glam::{DVec3, Quat, Vec3};
use interfere_geometry::volume::{Sampling, UniformOptions};
use interfere_geometry::{Aabb, DPose, Pose, Solid, shapes};
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

/// One body count's figures (milliseconds are medians over the timed frames).
#[derive(Serialize)]
struct Row {
    bodies: usize,
    candidate_pairs: f64,
    flagged_pairs: f64,
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
    }
}

/// Moves every body a little (a frame of a falling heap).
fn advance(heap: &mut Heap, state: &mut u64) {
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
    if args.frames < 2 || args.bodies.contains(&0) {
        return Err("--frames must be at least 2 and every --bodies at least 1".into());
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
    for &n in &args.bodies {
        let mut heap = heap(n, args.seed);
        let mut state = args.seed ^ 0x5151;
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
                cinder: Some(options),
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
            if answer.flagged.as_ref() != Some(&flagged) {
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
            if frame == 0 {
                continue;
            }
            t.pairs.push(pairs.len() as f64);
            t.flagged.push(flagged.len() as f64);
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
            candidate_pairs: mean(&t.pairs),
            flagged_pairs: mean(&t.flagged),
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
         untimed); medians in ms; answers agree on every frame",
        report.resolution, report.spacing, report.frames
    );
    println!(
        "{:>6} {:>6} {:>7} {:>7} | {:>8} {:>7} {:>7} {:>8} {:>6} {:>6} {:>6} | {:>9} {:>7} \
         {:>7} {:>7} | {:>6}",
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
        "ratio"
    );
    for r in &report.rows {
        println!(
            "{:>6} {:>6.1} {:>7.1} {:>7.0} | {:>8.1} {:>7.1} {:>7.1} {:>8.1} {:>6.1} {:>6} \
             {:>6.0} | {:>9.1} {:>7.1} {:>7.1} {:>7.1} | {:>6.2}",
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
            r.separate_ms / r.job_ms.max(1e-9)
        );
    }
    Ok(())
}

#[derive(Default)]
struct Timings {
    pairs: Vec<f64>,
    flagged: Vec<f64>,
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
}

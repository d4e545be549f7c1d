//! The per-step GPU job (`interfere_gpu::step_job`) against the separate kernels and the CPU:
//! CInDeR's flags equal `Cinder::run` on the same world-space objects and contain every exact
//! CPU interfering pair outside CInDeR's resolution band; the triangle pairs equal
//! `MeshQueries::all_pairs` exactly; each pair's volume equals `GpuVolume::compute` (the same
//! lines, bit for bit) and the CPU `uniform_volume` within the tolerance of
//! `tests/gpu/volume.rs`. Also: forced overflows (a second round, identical answers), polling
//! without blocking, empty inputs, refused inputs and limits, a destroyed device, the mesh
//! cache.

use interfere_geometry::glam::{DVec3, Quat, Vec3};
use interfere_geometry::volume::{Sampling, UniformOptions, VolumeResult, uniform_volume};
use interfere_geometry::{DPose, MeshQueries, Method, Pose, Solid, TriMesh, shapes};
use interfere_gpu::step_job::job_cinder_object;
use interfere_gpu::testing::gpu_or_skip;
use interfere_gpu::{
    Cinder, CinderSceneOptions, CinderViews, GpuContext, GpuError, GpuVolume, JobCapacities,
    JobMesh, JobObject, JobVolume, PendingJob, ReadyJob, StepJobAnswer, StepJobInput,
    StepJobRunner,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeSet;
use std::io::Write;
use std::sync::Arc;

/// A scene: meshes (shared by several objects), objects, candidate pairs.
struct Scene {
    meshes: Vec<JobMesh>,
    objects: Vec<JobObject>,
    pairs: Vec<(u32, u32)>,
}

impl Scene {
    fn solid(&self, object: usize) -> &Solid {
        let id = self.objects[object].mesh;
        &self.meshes.iter().find(|m| m.id == id).expect("mesh").solid
    }

    fn world(&self, object: usize) -> TriMesh {
        let o = &self.objects[object];
        let vertices = self
            .solid(object)
            .vertices()
            .iter()
            .map(|&v| o.pose.transform_point(v).as_vec3())
            .collect();
        TriMesh::new(vertices, self.solid(object).triangles().to_vec()).expect("world mesh")
    }

    fn b_to_a(&self, (i, j): (u32, u32)) -> DPose {
        let (pa, pb) = (self.objects[i as usize].pose, self.objects[j as usize].pose);
        pa.inverse().mul(&pb)
    }

    fn input(&self, cinder: bool, triangles: bool, volume: Option<JobVolume>) -> StepJobInput {
        StepJobInput {
            step: 7,
            meshes: self.meshes.clone(),
            objects: self.objects.clone(),
            pairs: self.pairs.clone(),
            cinder: cinder.then(|| CinderSceneOptions {
                resolution: 256,
                ..Default::default()
            }),
            triangle_pairs: triangles,
            volume,
        }
    }
}

fn mesh_palette(rng: &mut ChaCha8Rng, first_id: u64) -> Vec<JobMesh> {
    let solids = [
        shapes::cuboid(Vec3::new(
            rng.random_range(0.3..0.7),
            rng.random_range(0.3..0.7),
            rng.random_range(0.3..0.7),
        ))
        .unwrap(),
        shapes::icosphere(rng.random_range(0.35..0.6), 2).unwrap(),
        shapes::torus(0.55, 0.18, 16, 8).unwrap(),
        shapes::subdivided_cuboid(Vec3::new(0.6, 0.25, 0.4), 2).unwrap(),
        shapes::icosphere(0.3, 1).unwrap(),
    ];
    solids
        .into_iter()
        .enumerate()
        .map(|(k, s)| JobMesh::new(first_id + k as u64, Arc::new(s)))
        .collect()
}

fn random_pose(rng: &mut ChaCha8Rng, reach: f32) -> DPose {
    let axis = Vec3::new(
        rng.random_range(-1.0..1.0),
        rng.random_range(-1.0..1.0),
        rng.random_range(-1.0..1.0),
    )
    .normalize_or(Vec3::Z);
    Pose::new(
        Quat::from_axis_angle(axis, rng.random_range(0.0..std::f32::consts::TAU)),
        Vec3::new(
            rng.random_range(-reach..reach),
            rng.random_range(-reach..reach),
            rng.random_range(-reach..reach),
        ),
    )
    .to_f64()
}

/// `n` objects from a palette of meshes, packed so that many boxes overlap; candidate pairs are
/// the overlapping world boxes plus, for coverage, a few far pairs (no volume, no flag).
fn random_scene(rng: &mut ChaCha8Rng, n: usize) -> Scene {
    let meshes = mesh_palette(rng, 100);
    let reach = 0.75 * (n as f32).cbrt();
    let objects: Vec<JobObject> = (0..n)
        .map(|_| JobObject {
            mesh: meshes[rng.random_range(0..meshes.len())].id,
            pose: random_pose(rng, reach),
        })
        .collect();
    let mut scene = Scene {
        meshes,
        objects,
        pairs: Vec::new(),
    };
    let boxes: Vec<_> = (0..n).map(|i| scene.world(i).aabb()).collect();
    for i in 0..n {
        for j in i + 1..n {
            if boxes[i].overlaps(&boxes[j]) || (i + 3 * j) % 23 == 0 {
                scene.pairs.push((i as u32, j as u32));
            }
        }
    }
    scene
}

/// Hand-made cases: face-to-face contact, a sphere nested in a box, a sphere through a torus's
/// tube, a sphere in the torus's hole (no contact), a far pair.
fn adversarial_scene() -> Scene {
    let meshes = vec![
        JobMesh::new(1, Arc::new(shapes::cuboid(Vec3::ONE).unwrap())),
        JobMesh::new(2, Arc::new(shapes::cuboid(Vec3::splat(0.5)).unwrap())),
        JobMesh::new(3, Arc::new(shapes::icosphere(0.3, 2).unwrap())),
        JobMesh::new(4, Arc::new(shapes::torus(0.8, 0.2, 24, 12).unwrap())),
    ];
    let at = |x: f64, y: f64, z: f64| DPose {
        translation: DVec3::new(x, y, z),
        ..DPose::IDENTITY
    };
    let objects = vec![
        JobObject {
            mesh: 1,
            pose: DPose::IDENTITY,
        },
        // Touching face to face along x.
        JobObject {
            mesh: 2,
            pose: at(1.5, 0.2, -0.1),
        },
        // Nested in the big cube.
        JobObject {
            mesh: 3,
            pose: at(0.1, -0.2, 0.3),
        },
        JobObject {
            mesh: 4,
            pose: at(6.0, 0.0, 0.0),
        },
        // Through the torus's tube.
        JobObject {
            mesh: 3,
            pose: at(6.8, 0.0, 0.0),
        },
        // In the torus's hole, touching nothing.
        JobObject {
            mesh: 3,
            pose: at(6.0, 0.0, 0.0),
        },
        // Far away.
        JobObject {
            mesh: 2,
            pose: at(-9.0, 0.0, 0.0),
        },
    ];
    let pairs = vec![
        (0, 1),
        (0, 2),
        (1, 2),
        (3, 4),
        (3, 5),
        (4, 5),
        (0, 6),
        (5, 6),
    ];
    Scene {
        meshes,
        objects,
        pairs,
    }
}

fn per_pair_volume(scene: &Scene) -> JobVolume {
    // Spacing from the smaller object's box: about 16 lines across it.
    let sampling = scene
        .pairs
        .iter()
        .map(|&(i, j)| {
            let size = |o: u32| {
                let b = scene.solid(o as usize).aabb();
                (b.max - b.min).max_element() as f64
            };
            Sampling::Spacing(size(i).min(size(j)) / 16.0)
        })
        .collect();
    JobVolume {
        sampling,
        collect_points: true,
        max_rays: 1 << 20,
    }
}

fn options(volume: &JobVolume, k: usize) -> UniformOptions {
    UniformOptions {
        sampling: if volume.sampling.len() == 1 {
            volume.sampling[0]
        } else {
            volume.sampling[k]
        },
        centre: DVec3::ZERO,
        collect_points: volume.collect_points,
        max_rays: volume.max_rays,
    }
}

/// The CPU's exact interference of two placed solids (crossing triangles, else containment).
fn interferes(a: &MeshQueries, b: &MeshQueries) -> bool {
    a.interference(b, &DPose::IDENTITY, Method::Aabb, false)
        .expect("exact query")
        .intersecting
}

/// The GPU volume's tolerance against the CPU (`interfere_gpu::agrees_with_cpu`).
fn assert_close_to_cpu(gpu: &VolumeResult, cpu: &VolumeResult, what: &str) {
    if let Err(e) = interfere_gpu::agrees_with_cpu(gpu, cpu) {
        panic!("{what}: {e}");
    }
}

/// Every check of the module documentation on one scene's answer.
fn check_answer(
    ctx: &GpuContext,
    scene: &Scene,
    input: &StepJobInput,
    answer: &StepJobAnswer,
    name: &str,
) -> (usize, usize, usize) {
    let pairs = &input.pairs;
    assert_eq!(answer.step, input.step);
    let colliders: Vec<MeshQueries> = (0..scene.objects.len())
        .map(|i| MeshQueries::new(scene.world(i)))
        .collect();
    let mut flagged_count = 0;
    // CInDeR: equal to Cinder::run on the same objects, and conservative outside the band.
    if let Some(options) = &input.cinder {
        let flagged = answer.flagged.as_ref().expect("flags asked for");
        flagged_count = flagged.len();
        let used: BTreeSet<u32> = pairs.iter().flat_map(|&(i, j)| [i, j]).collect();
        let order: Vec<u32> = used.into_iter().collect();
        let objects: Vec<_> = order
            .iter()
            .map(|&o| job_cinder_object(scene.solid(o as usize), &scene.objects[o as usize].pose))
            .collect();
        let report = Cinder::new(ctx)
            .run(ctx, &objects, options)
            .expect("Cinder::run");
        let mut expected: Vec<(u32, u32)> = report
            .pairs
            .iter()
            .map(|&(a, b)| (order[a], order[b]))
            .filter(|p| pairs.contains(p))
            .collect();
        expected.sort_by_key(|p| pairs.iter().position(|q| q == p));
        assert_eq!(flagged, &expected, "{name}: flags against Cinder::run");
        let delta = report.resolution_bound as f32;
        let offset = |i: usize, d: f32| {
            MeshQueries::new(crate::cinder_scene::offset_mesh(&scene.world(i), d))
        };
        for &(i, j) in pairs {
            let (i, j) = (i as usize, j as usize);
            let exact = interferes(&colliders[i], &colliders[j]);
            if !exact || flagged.contains(&(i as u32, j as u32)) {
                continue;
            }
            // Missed: allowed only inside the band (shrunk copies no longer interfere).
            assert!(
                !interferes(&offset(i, -2.0 * delta), &offset(j, -2.0 * delta)),
                "{name}: CInDeR missed ({i}, {j}), which interferes by more than the bound \
                 {delta}"
            );
        }
    }
    // Triangle pairs: exactly the CPU's for every traversed pair.
    let mut with_triangles = 0;
    if input.triangle_pairs {
        let triangles = answer.triangles.as_ref().expect("triangles asked for");
        assert_eq!(triangles.len(), pairs.len());
        for (k, &(i, j)) in pairs.iter().enumerate() {
            let traversed = match &answer.flagged {
                Some(f) => f.contains(&(i, j)),
                None => true,
            };
            // The exact set for the job's geometry: the local meshes with j placed in i's frame.
            let local = {
                let a = MeshQueries::new(scene.solid(i as usize).mesh().clone());
                let b = MeshQueries::new(scene.solid(j as usize).mesh().clone());
                if traversed {
                    a.all_pairs(&b, &scene.b_to_a((i, j)), Method::Aabb)
                        .expect("cpu pairs")
                } else {
                    Vec::new()
                }
            };
            assert_eq!(triangles[k], local, "{name}: triangle pairs of ({i}, {j})");
            with_triangles += usize::from(!triangles[k].is_empty());
        }
    }
    // Volumes: GpuVolume::compute bit for bit, the CPU within tolerance.
    let mut with_volume = 0;
    if let Some(volume) = &input.volume {
        let volumes = answer.volumes.as_ref().expect("volumes asked for");
        assert_eq!(volumes.len(), pairs.len());
        let mut kernel = GpuVolume::new(ctx).expect("volume kernel");
        for (k, &(i, j)) in pairs.iter().enumerate() {
            let o = options(volume, k);
            let b_to_a = scene.b_to_a((i, j));
            let (sa, sb) = (scene.solid(i as usize), scene.solid(j as usize));
            let ga = GpuVolume::upload_mesh(ctx, sa).expect("upload");
            let gb = GpuVolume::upload_mesh(ctx, sb).expect("upload");
            let single = kernel.compute(ctx, &ga, &gb, &b_to_a, &o);
            match (&volumes[k], single) {
                (Ok(job), Ok(single)) => {
                    assert_eq!(job, &single, "{name}: pair ({i}, {j}) against compute");
                    let cpu = uniform_volume(sa, sb, &b_to_a, &o).expect("cpu volume");
                    assert_close_to_cpu(job, &cpu, &format!("{name}: pair ({i}, {j})"));
                    with_volume += usize::from(job.volume > 0.0);
                }
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                (a, b) => panic!("{name}: pair ({i}, {j}): job {a:?}, compute {b:?}"),
            }
        }
    }
    (flagged_count, with_triangles, with_volume)
}

fn runner(ctx: &GpuContext) -> StepJobRunner {
    StepJobRunner::new(ctx).expect("step job runner")
}

#[test]
fn step_job_matches_the_separate_kernels_on_random_scenes() {
    let Some(ctx) = gpu_or_skip("step_job_matches_the_separate_kernels_on_random_scenes") else {
        return;
    };
    let mut runner = runner(&ctx);
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let (mut pairs, mut flagged, mut crossing, mut overlapping) = (0, 0, 0, 0);
    for (s, n) in [2usize, 5, 12, 24, 40].into_iter().enumerate() {
        let scene = random_scene(&mut rng, n);
        let input = scene.input(true, true, Some(per_pair_volume(&scene)));
        let answer = runner.run_blocking(&ctx, input.clone()).expect("job");
        let (f, t, v) = check_answer(&ctx, &scene, &input, &answer, &format!("scene {s}"));
        pairs += scene.pairs.len();
        flagged += f;
        crossing += t;
        overlapping += v;
        // Without CInDeR the traversal covers every pair; one sampling for all pairs.
        let input = scene.input(
            false,
            true,
            Some(JobVolume {
                sampling: vec![Sampling::Resolution(10)],
                collect_points: false,
                max_rays: 1 << 20,
            }),
        );
        let answer = runner.run_blocking(&ctx, input.clone()).expect("job");
        assert!(answer.flagged.is_none());
        check_answer(
            &ctx,
            &scene,
            &input,
            &answer,
            &format!("scene {s}, all pairs"),
        );
    }
    let _ = writeln!(
        std::io::stderr(),
        "step job random scenes: {pairs} pairs, {flagged} flagged, {crossing} with crossing \
         triangles, {overlapping} with volume"
    );
    assert!(
        flagged >= 20 && crossing >= 15 && overlapping >= 15,
        "too few positive cases"
    );
    assert!(pairs >= flagged + 20, "too few negative cases");
}

#[test]
fn step_job_handles_touching_nested_and_far_pairs() {
    let Some(ctx) = gpu_or_skip("step_job_handles_touching_nested_and_far_pairs") else {
        return;
    };
    let mut runner = runner(&ctx);
    let scene = adversarial_scene();
    for views in [CinderViews::ZThenXy, CinderViews::All, CinderViews::Z] {
        let mut input = scene.input(true, true, Some(per_pair_volume(&scene)));
        if let Some(c) = input.cinder.as_mut() {
            c.views = views;
        }
        let answer = runner.run_blocking(&ctx, input.clone()).expect("job");
        check_answer(
            &ctx,
            &scene,
            &input,
            &answer,
            &format!("adversarial {views:?}"),
        );
        let flagged = answer.flagged.as_ref().expect("flags");
        let volumes = answer.volumes.as_ref().expect("volumes");
        let triangles = answer.triangles.as_ref().expect("triangles");
        // Nested: flagged, no crossing triangle, the inner sphere's volume.
        let nested = scene.pairs.iter().position(|&p| p == (0, 2)).expect("pair");
        assert!(flagged.contains(&(0, 2)), "{views:?}: nested sphere");
        assert!(triangles[nested].is_empty());
        let v = volumes[nested].as_ref().expect("volume").volume;
        let sphere = scene.solid(2).volume();
        assert!((v - sphere).abs() < 0.05 * sphere, "{v} vs {sphere}");
        // Through the tube: flagged, crossing triangles, some volume.
        let tube = scene.pairs.iter().position(|&p| p == (3, 4)).expect("pair");
        assert!(flagged.contains(&(3, 4)));
        assert!(!triangles[tube].is_empty());
        assert!(volumes[tube].as_ref().expect("volume").volume > 0.0);
        // In the hole, and the far pairs: nothing at all.
        for p in [(3, 5), (0, 6), (5, 6)] {
            let k = scene.pairs.iter().position(|&q| q == p).expect("pair");
            assert!(!flagged.contains(&p), "{p:?}");
            assert!(triangles[k].is_empty());
            let r = volumes[k].as_ref().expect("volume");
            assert_eq!(r.volume, 0.0, "{p:?}");
        }
        // Face to face: the exact CPU calls it interfering (closed sets meet); the job's
        // triangles agree with the CPU (checked above), the volume is zero.
        let touching = scene.pairs.iter().position(|&p| p == (0, 1)).expect("pair");
        assert!(volumes[touching].as_ref().expect("volume").volume.abs() < 1e-9);
    }
}

#[test]
fn step_job_forced_overflows_take_more_rounds_with_identical_answers() {
    let Some(ctx) =
        gpu_or_skip("step_job_forced_overflows_take_more_rounds_with_identical_answers")
    else {
        return;
    };
    let mut runner = runner(&ctx);
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let scene = random_scene(&mut rng, 16);
    let input = scene.input(true, true, Some(per_pair_volume(&scene)));
    runner.set_capacities(JobCapacities::default());
    let reference = runner.run_blocking(&ctx, input.clone()).expect("job");
    assert_eq!(reference.rounds, 1, "the default capacities fit this scene");
    let tiny = |fragments, pair_list, hits, records_per_line| JobCapacities {
        fragments,
        pair_list,
        hits,
        records_per_line,
    };
    let big = JobCapacities {
        fragments: None,
        pair_list: 1 << 20,
        hits: 1 << 20,
        records_per_line: 8.0,
    };
    for (name, caps) in [
        ("fragments", tiny(Some(64), big.pair_list, big.hits, 8.0)),
        ("pair list", tiny(None, 2, big.hits, 8.0)),
        ("hits", tiny(None, big.pair_list, 1, 8.0)),
        ("records", tiny(None, big.pair_list, big.hits, 0.0)),
        ("everything", tiny(Some(16), 1, 1, 0.0)),
    ] {
        runner.set_capacities(caps);
        let answer = runner.run_blocking(&ctx, input.clone()).expect("job");
        assert!(answer.rounds >= 2, "{name}: {} rounds", answer.rounds);
        assert_eq!(answer.flagged, reference.flagged, "{name}");
        assert_eq!(answer.triangles, reference.triangles, "{name}");
        let (a, b) = (
            answer.volumes.as_ref().expect("volumes"),
            reference.volumes.as_ref().expect("volumes"),
        );
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert_eq!(x.as_ref().ok(), y.as_ref().ok(), "{name}");
        }
        // The runner learned the sizes: the next job fits in one round.
        let again = runner.run_blocking(&ctx, input.clone()).expect("job");
        assert_eq!(again.rounds, 1, "{name}: after learning");
        assert_eq!(again.triangles, reference.triangles);
    }
}

#[test]
fn step_job_answers_through_non_blocking_polls() {
    let Some(ctx) = gpu_or_skip("step_job_answers_through_non_blocking_polls") else {
        return;
    };
    let mut runner = runner(&ctx);
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let scene = random_scene(&mut rng, 20);
    let input = scene.input(true, true, Some(per_pair_volume(&scene)));
    let reference = runner.run_blocking(&ctx, input.clone()).expect("job");
    // Force a second round too, so a re-submission happens inside poll.
    runner.set_capacities(JobCapacities {
        records_per_line: 0.0,
        ..runner.capacities()
    });
    let mut job: PendingJob = runner.submit(&ctx, input).expect("submit");
    assert_eq!(job.step(), 7);
    let mut polls = 0u64;
    let ready: ReadyJob = loop {
        polls += 1;
        assert!(polls < 2_000_000, "no answer after {polls} polls");
        match runner.poll_ready(&ctx, &mut job).expect("poll") {
            Some(ready) => break ready,
            None => std::thread::sleep(std::time::Duration::from_micros(200)),
        }
    };
    // The CPU part on another thread, as a caller's thread pool would.
    let answer = std::thread::spawn(move || ready.finish())
        .join()
        .expect("finish");
    let _ = writeln!(
        std::io::stderr(),
        "non-blocking job: {polls} polls, {} rounds, gpu {:.1} ms, cpu {:.1} ms",
        answer.rounds,
        answer.gpu_ms,
        answer.cpu_ms
    );
    assert!(answer.rounds >= 2);
    assert_eq!(answer.flagged, reference.flagged);
    assert_eq!(answer.triangles, reference.triangles);
    for (x, y) in answer
        .volumes
        .as_ref()
        .expect("volumes")
        .iter()
        .zip(reference.volumes.as_ref().expect("volumes"))
    {
        assert_eq!(x.as_ref().ok(), y.as_ref().ok());
    }
    // An answered job is not answered twice.
    assert!(matches!(
        runner.poll_ready(&ctx, &mut job),
        Err(GpuError::InvalidInput { .. })
    ));
}

#[test]
fn step_job_empty_inputs_and_pairs_without_work() {
    let Some(ctx) = gpu_or_skip("step_job_empty_inputs_and_pairs_without_work") else {
        return;
    };
    let mut runner = runner(&ctx);
    let everything = |scene: &Scene| scene.input(true, true, Some(per_pair_volume(scene)));
    // Nothing at all.
    let empty = Scene {
        meshes: Vec::new(),
        objects: Vec::new(),
        pairs: Vec::new(),
    };
    let answer = runner
        .run_blocking(&ctx, everything(&empty))
        .expect("empty");
    assert_eq!(answer.flagged, Some(Vec::new()));
    assert_eq!(answer.triangles, Some(Vec::new()));
    assert!(answer.volumes.expect("volumes").is_empty());
    assert_eq!(answer.rounds, 0);
    // Nothing asked.
    let scene = adversarial_scene();
    let answer = runner
        .run_blocking(&ctx, scene.input(false, false, None))
        .expect("nothing asked");
    assert!(answer.flagged.is_none() && answer.triangles.is_none() && answer.volumes.is_none());
    assert_eq!(answer.rounds, 0);
    // Only far pairs: CInDeR draws nothing, every answer is empty or zero.
    let far = Scene {
        pairs: vec![(0, 6), (3, 6)],
        ..adversarial_scene()
    };
    let input = everything(&far);
    let answer = runner.run_blocking(&ctx, input.clone()).expect("far pairs");
    check_answer(&ctx, &far, &input, &answer, "far pairs");
    assert_eq!(answer.flagged, Some(Vec::new()));
    assert_eq!(answer.triangles, Some(vec![Vec::new(), Vec::new()]));
    for v in answer.volumes.expect("volumes") {
        let v = v.expect("volume");
        assert_eq!((v.volume, v.ray_count), (0.0, 0));
    }
}

#[test]
fn step_job_refuses_bad_input() {
    let Some(ctx) = gpu_or_skip("step_job_refuses_bad_input") else {
        return;
    };
    let mut runner = runner(&ctx);
    let scene = adversarial_scene();
    let base = scene.input(true, true, Some(per_pair_volume(&scene)));
    let refused = |runner: &mut StepJobRunner, input: StepJobInput, why: &str| match runner
        .submit(&ctx, input)
    {
        Err(GpuError::InvalidInput { .. }) => {}
        Err(e) => panic!("{why}: wrong error {e}"),
        Ok(_) => panic!("{why}: accepted"),
    };
    refused(
        &mut runner,
        StepJobInput {
            pairs: vec![(1, 0)],
            ..base.clone()
        },
        "i > j",
    );
    refused(
        &mut runner,
        StepJobInput {
            pairs: vec![(0, 99)],
            ..base.clone()
        },
        "object out of range",
    );
    let mut unknown = base.clone();
    unknown.objects[1].mesh = 77;
    refused(&mut runner, unknown, "unknown mesh id");
    let mut nan = base.clone();
    nan.objects[2].pose.translation.y = f64::NAN;
    refused(&mut runner, nan, "pose not finite");
    let mut samplings = base.clone();
    if let Some(v) = samplings.volume.as_mut() {
        v.sampling.truncate(2);
    }
    refused(&mut runner, samplings, "two samplings for eight pairs");
    let mut resolution = base.clone();
    if let Some(c) = resolution.cinder.as_mut() {
        c.resolution = 0;
    }
    refused(&mut runner, resolution, "CInDeR resolution 0");
    // Per-pair refusals are the pair's answer, not the job's.
    let mut per_pair = base.clone();
    if let Some(v) = per_pair.volume.as_mut() {
        v.sampling[0] = Sampling::Spacing(-1.0);
        v.sampling[1] = Sampling::Fitted {
            coarse: 4,
            resolution: 8,
        };
        v.max_rays = 100;
    }
    let answer = runner.run_blocking(&ctx, per_pair).expect("job");
    let volumes = answer.volumes.expect("volumes");
    assert!(matches!(volumes[0], Err(GpuError::Volume(_))));
    assert!(matches!(volumes[1], Err(GpuError::InvalidInput { .. })));
    assert!(
        volumes[2..]
            .iter()
            .any(|v| matches!(v, Err(GpuError::Volume(_)))),
        "max_rays refuses the finely sampled pairs"
    );
}

/// A private headless device with `limits` (instead of the adapter's).
fn device_with(limits: impl FnOnce(&wgpu::Adapter) -> wgpu::Limits) -> Option<GpuContext> {
    pollster::block_on(async {
        let mut descriptor = wgpu::InstanceDescriptor::new_without_display_handle();
        descriptor.backends = wgpu::Backends::PRIMARY;
        let instance = wgpu::Instance::new(descriptor.with_env());
        let adapter = instance
            .request_adapter(&wgpu::RequestAdapterOptions::default())
            .await
            .ok()?;
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("private test device"),
                required_features: wgpu::Features::empty(),
                required_limits: limits(&adapter),
                ..Default::default()
            })
            .await
            .ok()?;
        Some(GpuContext::from_parts(device, queue, &adapter.get_info()))
    })
}

#[test]
fn step_job_refuses_limits_the_device_lacks() {
    if gpu_or_skip("step_job_refuses_limits_the_device_lacks").is_none() {
        return;
    }
    let low = device_with(|_| wgpu::Limits::downlevel_defaults()).expect("downlevel device");
    match StepJobRunner::new(&low) {
        Err(GpuError::LimitTooLow {
            limit, available, ..
        }) => assert!(available > 0, "{limit}"),
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("a downlevel device was accepted"),
    }
    // Storage bindings of 256 KiB: a job whose volume lines need more is refused, typed.
    let small = device_with(|a| wgpu::Limits {
        max_storage_buffer_binding_size: 256 << 10,
        ..a.limits()
    })
    .expect("small device");
    let mut runner = StepJobRunner::new(&small).expect("runner");
    let scene = adversarial_scene();
    let mut input = scene.input(false, false, None);
    input.pairs = vec![(0, 2)];
    input.volume = Some(JobVolume {
        sampling: vec![Sampling::Resolution(200)],
        collect_points: false,
        max_rays: 1 << 24,
    });
    match runner.submit(&small, input.clone()) {
        Err(GpuError::BufferTooLarge {
            requested, limit, ..
        }) => assert!(requested > limit),
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("a job past the binding limit was accepted"),
    }
    // The same runner still answers a job that fits.
    input.volume = Some(JobVolume {
        sampling: vec![Sampling::Resolution(16)],
        collect_points: false,
        max_rays: 1 << 24,
    });
    let answer = runner.run_blocking(&small, input).expect("small job");
    assert!(
        answer.volumes.expect("volumes")[0]
            .as_ref()
            .expect("volume")
            .volume
            > 0.0
    );
}

#[test]
fn step_job_on_a_destroyed_device_is_an_error() {
    if gpu_or_skip("step_job_on_a_destroyed_device_is_an_error").is_none() {
        return;
    }
    let scene = adversarial_scene();
    let input = scene.input(true, true, Some(per_pair_volume(&scene)));
    // Destroyed while a job is in flight: the job ends (answer or error), never hangs.
    let ctx = device_with(|a| a.limits()).expect("private device");
    let mut runner = StepJobRunner::new(&ctx).expect("runner");
    let mut job = runner.submit(&ctx, input.clone()).expect("submit");
    ctx.device.destroy();
    let mut polls = 0;
    let ended = loop {
        polls += 1;
        assert!(polls < 100_000, "the job neither ended nor failed");
        match runner.poll(&ctx, &mut job) {
            Ok(Some(_)) => break "answered",
            Ok(None) => std::thread::sleep(std::time::Duration::from_micros(100)),
            Err(_) => break "failed",
        }
    };
    let _ = writeln!(
        std::io::stderr(),
        "job in flight on a destroyed device: {ended}"
    );
    // Submitted after the device is gone: an error, from submit or from poll.
    let failed = match runner.submit(&ctx, input.clone()) {
        Err(e) => Some(e),
        Ok(mut job) => (0..100_000).find_map(|_| match runner.poll(&ctx, &mut job) {
            Ok(Some(_)) => panic!("a destroyed device answered"),
            Ok(None) => {
                std::thread::sleep(std::time::Duration::from_micros(100));
                None
            }
            Err(e) => Some(e),
        }),
    };
    let e = failed.expect("an error within the polls");
    let _ = writeln!(std::io::stderr(), "job after destroy: {e}");
    assert!(matches!(
        e,
        GpuError::Wgpu { .. } | GpuError::DeviceLost { .. } | GpuError::Readback { .. }
    ));
    // A new runner on the dead device: an error too, not a panic.
    if let Ok(mut r) = StepJobRunner::new(&ctx) {
        assert!(r.run_blocking(&ctx, input).is_err());
    }
}

#[test]
fn step_job_mesh_cache_uploads_once_and_evicts_unused_ids() {
    let Some(ctx) = gpu_or_skip("step_job_mesh_cache_uploads_once_and_evicts_unused_ids") else {
        return;
    };
    let mut runner = runner(&ctx);
    runner.set_evict_after(1);
    let scene = adversarial_scene();
    let only = |pairs: Vec<(u32, u32)>| {
        let mut input = scene.input(true, true, Some(per_pair_volume(&scene)));
        let volume = input.volume.as_mut().expect("volume");
        volume.sampling = vec![Sampling::Resolution(12)];
        input.pairs = pairs;
        input
    };
    // Pairs of meshes 1, 2, 3; then 4 and 3 (twice); then 1 and 2 with a new Arc for mesh 2
    // (twice).
    let first = only(vec![(0, 1), (0, 2)]);
    let answer = runner.run_blocking(&ctx, first.clone()).expect("job 1");
    check_answer(&ctx, &scene, &first, &answer, "cache job 1");
    assert_eq!(runner.uploaded_meshes(), vec![1, 2, 3]);
    let second = only(vec![(3, 4)]);
    runner.run_blocking(&ctx, second.clone()).expect("job 2");
    assert_eq!(
        runner.uploaded_meshes(),
        vec![1, 2, 3, 4],
        "used one job ago: kept"
    );
    runner.run_blocking(&ctx, second).expect("job 3");
    assert_eq!(
        runner.uploaded_meshes(),
        vec![1, 2, 3, 4],
        "nothing new: no upload"
    );
    let replaced = |seed: f32| {
        let mut input = only(vec![(0, 1)]);
        input.meshes[1] = JobMesh::new(
            2,
            Arc::new(shapes::cuboid(Vec3::splat(0.5 + seed)).unwrap()),
        );
        input
    };
    let fourth = replaced(0.0);
    let answer = runner.run_blocking(&ctx, fourth.clone()).expect("job 4");
    check_answer(&ctx, &scene, &fourth, &answer, "cache job 4");
    assert_eq!(
        runner.uploaded_meshes(),
        vec![1, 2, 3, 4],
        "a replaced mesh re-uploads; 3 and 4 were used one job ago"
    );
    runner.run_blocking(&ctx, replaced(0.0)).expect("job 5");
    assert_eq!(
        runner.uploaded_meshes(),
        vec![1, 2],
        "replaced again; 3 and 4 unused for two jobs are dropped"
    );
}

#[test]
fn step_job_types_can_move_between_threads() {
    fn send<T: Send>() {}
    send::<StepJobRunner>();
    send::<PendingJob>();
    send::<ReadyJob>();
    send::<StepJobAnswer>();
}

//! `interfere bench tumble`: the Zachmann benchmark protocol (Greß–Zachmann 2004, §6).
//!
//! Two copies of one mesh, both scaled into [-1,1]^3. The first stays at the origin; the second
//! is placed with its centre at distance `d` along x and tumbles: at step `i` of `N` it is
//! rotated by `α_i = 360°·i/N` about z, then by `β_i = 360°·frac(i·φ)` about x (φ the golden
//! ratio, which spreads the second angle evenly without a grid). Every query is timed on one
//! thread; per distance we print mean and max milliseconds of first-hit and all-pairs for each
//! of our traversals and for parry3d 0.31 in the same run, the pair counts, and the ratios.
//!
//! The all-pairs sets of our traversals must agree exactly (they share the exact triangle test);
//! the bench stops with an error if they do not. parry3d's triangle test is not exact, so its
//! counts are shown, not compared.

use super::parry_peer::{self, ParryMesh};
use crate::output::{ms, print_json};
use clap::Args;
use interfere_cli::progress::Progress;
use interfere_geometry::glam::{DMat3, DVec3};
use interfere_geometry::interference::{MeshQueries, Method};
use interfere_geometry::{DPose, MeshOptions, io};
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `interfere bench tumble`.
#[derive(Args)]
pub struct TumbleArgs {
    /// The mesh (.obj or .stl); both copies are this mesh scaled into [-1,1]^3.
    #[arg(long)]
    mesh: PathBuf,
    /// Centre distances, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "2,1.5,1,0.5,0.25,0")]
    distances: Vec<f64>,
    /// Tumbling steps per distance.
    #[arg(long, default_value_t = 100)]
    steps: usize,
    /// Skip parry3d (for example when it refuses the mesh).
    #[arg(long)]
    no_parry: bool,
    /// Also time the GPU breadth-first traversal with f32 leaf tests on the GPU (end to end:
    /// pose upload, dispatches, readbacks, then the exact filter of the few near-touching extras
    /// on the CPU), and its kernel-only time from timestamp queries where the adapter has them;
    /// its pairs must equal the CPU's.
    #[arg(long)]
    gpu: bool,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Default, Serialize, Clone, Copy)]
struct Stat {
    mean_ms: f64,
    max_ms: f64,
}

#[derive(Default)]
struct Acc {
    sum: f64,
    max: f64,
    n: usize,
}

impl Acc {
    fn add(&mut self, ms: f64) {
        self.sum += ms;
        self.max = self.max.max(ms);
        self.n += 1;
    }
    fn stat(&self) -> Stat {
        Stat {
            mean_ms: if self.n == 0 {
                0.0
            } else {
                self.sum / self.n as f64
            },
            max_ms: self.max,
        }
    }
}

#[derive(Serialize)]
struct MethodRow {
    method: String,
    first_hit: Stat,
    all_pairs: Stat,
    mean_pairs: f64,
    hits: usize,
}

#[derive(Serialize)]
struct DistanceRow {
    distance: f64,
    methods: Vec<MethodRow>,
}

#[derive(Serialize)]
struct Report {
    mesh: String,
    triangles: usize,
    steps: usize,
    build_ms: Vec<(String, f64)>,
    distances: Vec<DistanceRow>,
}

/// The pose of the second copy at step `i` of `n`, at centre distance `d`.
pub fn tumble_pose(d: f64, i: usize, n: usize) -> DPose {
    let golden = (1.0 + 5f64.sqrt()) / 2.0;
    let alpha = std::f64::consts::TAU * i as f64 / n.max(1) as f64;
    let beta = std::f64::consts::TAU * (i as f64 * golden).fract();
    DPose {
        rotation: DMat3::from_rotation_x(beta) * DMat3::from_rotation_z(alpha),
        translation: DVec3::new(d, 0.0, 0.0),
    }
}

/// Runs the benchmark; progress goes to standard error unless `quiet`.
pub fn run(args: TumbleArgs, quiet: bool) -> Result<(), String> {
    if args.steps == 0 {
        return Err("--steps must be at least 1".into());
    }
    let mesh = io::load_mesh(&args.mesh, &MeshOptions::default())
        .map_err(|e| e.to_string())?
        .normalized_to_unit_cube();
    let methods = [Method::Obb, Method::Aabb, Method::Bfs];
    let mut build_ms = Vec::new();
    let collider = MeshQueries::new(mesh.clone());
    for m in methods {
        if m == Method::Bfs {
            continue; // shares the balanced tree with Aabb
        }
        let t = Instant::now();
        collider.prepare(m);
        build_ms.push((m.name().to_string(), ms(t)));
    }
    let parry = if args.no_parry {
        None
    } else {
        let t = Instant::now();
        let p = ParryMesh::new(&mesh)?;
        build_ms.push(("parry3d TriMesh+Bvh".to_string(), ms(t)));
        Some(p)
    };
    let gpu = if args.gpu {
        let ctx = interfere_gpu::GpuContext::headless().map_err(|e| e.to_string())?;
        let traversal = interfere_gpu::GpuTriangleTraversal::new(&ctx);
        let t = Instant::now();
        let set =
            interfere_gpu::GpuMeshSet::upload(&ctx, &[(collider.mesh(), collider.balanced_tree())])
                .map_err(|e| e.to_string())?;
        build_ms.push((format!("gpu upload ({})", ctx.adapter), ms(t)));
        Some((ctx, traversal, set))
    } else {
        None
    };
    let mut rows = Vec::new();
    let total = (args.distances.len() * args.steps) as u64;
    let mut progress = Progress::unless_quiet("bench tumble", total, quiet).unit("poses");
    for &d in &args.distances {
        let mut accs: Vec<(Acc, Acc, f64, usize)> = (0..methods.len() + 3)
            .map(|_| (Acc::default(), Acc::default(), 0.0, 0))
            .collect();
        for i in 0..args.steps {
            let pose = tumble_pose(d, i, args.steps);
            let mut reference: Option<Vec<(u32, u32)>> = None;
            for (k, &m) in methods.iter().enumerate() {
                let t = Instant::now();
                let hit = collider
                    .first_hit(&collider, &pose, m)
                    .map_err(|e| e.to_string())?;
                accs[k].0.add(ms(t));
                let t = Instant::now();
                let pairs = collider
                    .all_pairs(&collider, &pose, m)
                    .map_err(|e| e.to_string())?;
                accs[k].1.add(ms(t));
                accs[k].2 += pairs.len() as f64;
                if hit.is_some() == pairs.is_empty() {
                    return Err(format!(
                        "{}: first-hit and all-pairs disagree at d={d}, step {i}",
                        m.name()
                    ));
                }
                accs[k].3 += usize::from(hit.is_some());
                match &reference {
                    None => reference = Some(pairs),
                    Some(r) if *r != pairs => {
                        return Err(format!(
                            "{} found {} pairs where {} found {} at d={d}, step {i}",
                            m.name(),
                            pairs.len(),
                            methods[0].name(),
                            r.len()
                        ));
                    }
                    Some(_) => {}
                }
            }
            if let Some((ctx, traversal, set)) = &gpu {
                let k = methods.len() + 1;
                let t = Instant::now();
                let found = traversal
                    .triangle_pairs(
                        ctx,
                        set,
                        &[interfere_gpu::ObjectPair {
                            a: 0,
                            b: 0,
                            b_to_a: pose,
                        }],
                        1 << 26,
                        None,
                    )
                    .map_err(|e| e.to_string())?;
                let pairs = interfere_gpu::tri_tri::exact_filter(
                    collider.mesh(),
                    collider.mesh(),
                    &pose,
                    &found.of(0),
                );
                let elapsed = ms(t);
                // Level-synchronous: no early exit, first hit costs the full traversal.
                accs[k].0.add(elapsed);
                accs[k].1.add(elapsed);
                accs[k].2 += pairs.len() as f64;
                accs[k].3 += usize::from(!pairs.is_empty());
                // Kernel-only time from timestamp queries, where the adapter has them.
                if let Some(kernels) = found.timings.kernels {
                    let kt = kernels.total().as_secs_f64() * 1e3;
                    accs[k + 1].0.add(kt);
                    accs[k + 1].1.add(kt);
                    accs[k + 1].2 += pairs.len() as f64;
                    accs[k + 1].3 += usize::from(!pairs.is_empty());
                }
                if reference.as_ref().is_some_and(|r| *r != pairs) {
                    return Err(format!(
                        "gpu-bvh found {} pairs where the CPU found {} at d={d}, step {i}",
                        pairs.len(),
                        reference.as_ref().map_or(0, Vec::len)
                    ));
                }
            }
            if let Some(p) = &parry {
                let pp = parry_peer::parry_pose_f64(&pose);
                let k = methods.len();
                let t = Instant::now();
                let hit = parry_peer::first_hit(p, p, &pp);
                accs[k].0.add(ms(t));
                let t = Instant::now();
                let pairs = parry_peer::all_pairs(p, p, &pp);
                accs[k].1.add(ms(t));
                accs[k].2 += pairs.len() as f64;
                accs[k].3 += usize::from(hit);
            }
            progress.tick(1);
        }
        let mut names: Vec<String> = methods.iter().map(|m| m.name().to_string()).collect();
        names.push("parry3d".into());
        names.push("gpu-bvh".into());
        names.push("gpu-kern".into());
        let methods_rows = accs
            .iter()
            .zip(names)
            .filter(|(a, _)| a.0.n > 0)
            .map(|(a, name)| MethodRow {
                method: name,
                first_hit: a.0.stat(),
                all_pairs: a.1.stat(),
                mean_pairs: a.2 / args.steps as f64,
                hits: a.3,
            })
            .collect();
        rows.push(DistanceRow {
            distance: d,
            methods: methods_rows,
        });
    }
    progress.finish();
    let report = Report {
        mesh: args.mesh.display().to_string(),
        triangles: mesh.triangle_count(),
        steps: args.steps,
        build_ms,
        distances: rows,
    };
    if args.json {
        print_json(&report)?;
    } else {
        print_table(&report);
    }
    Ok(())
}

fn print_table(r: &Report) {
    println!(
        "tumble: {} ({} triangles), {} steps per distance, one thread",
        r.mesh, r.triangles, r.steps
    );
    for (name, t) in &r.build_ms {
        println!("  build {name}: {t:.1} ms");
    }
    println!(
        "{:>5} {:<8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>6} {:>9} {:>9}",
        "d",
        "method",
        "first avg",
        "first max",
        "all avg",
        "all max",
        "pairs",
        "hits",
        "parry/us1",
        "parry/usA"
    );
    for row in &r.distances {
        let parry = row.methods.iter().find(|m| m.method == "parry3d");
        for m in &row.methods {
            let (r1, ra) = match parry {
                Some(p) if m.method != "parry3d" => (
                    format!(
                        "{:.2}x",
                        p.first_hit.mean_ms / m.first_hit.mean_ms.max(1e-9)
                    ),
                    format!(
                        "{:.2}x",
                        p.all_pairs.mean_ms / m.all_pairs.mean_ms.max(1e-9)
                    ),
                ),
                _ => (String::new(), String::new()),
            };
            println!(
                "{:>5} {:<8} {:>10.4} {:>10.4} {:>10.4} {:>10.4} {:>10.1} {:>6} {:>9} {:>9}",
                row.distance,
                m.method,
                m.first_hit.mean_ms,
                m.first_hit.max_ms,
                m.all_pairs.mean_ms,
                m.all_pairs.max_ms,
                m.mean_pairs,
                m.hits,
                r1,
                ra
            );
        }
    }
    println!(
        "times in ms; parry/us = parry3d time over ours (higher is better for us); parry3d's \
         pair counts come from its inexact triangle test; gpu-bvh is end to end (upload, \
         dispatches, readbacks, exact filter), gpu-kern its kernels alone (timestamp queries)"
    );
}

//! The exact rows of `interfere bench volume`: our exact intersection volume with its gradient
//! and contact regions (`interfere_geometry::volume::exact`), and the in-process exact-volume
//! peer, parry3d's mesh boolean (`intersect_meshes`) plus the volume of its result, timed on the
//! same poses in the same run.
//!
//! Three ways to run ours are timed: the narrow phase's all-pairs query
//! (`MeshQueries::all_pairs`, OBBTree, as a simulation already runs it) followed by
//! `ExactVolume::compute` on its pairs, with the two times reported apart; and the traversal
//! fused with the crossing test (`ExactVolume::compute_traversing`) over the OBBTree and over
//! the balanced AABB tree. All must give the same volume bit for bit at every pose (the bench
//! stops otherwise); that volume is the reference of every error column.

use super::parry_peer::{ParryBoolean, parry_pose_f64};
use crate::output::ms;
use interfere_geometry::interference::{MeshQueries, Method};
use interfere_geometry::volume::{ExactOptions, ExactVolume, Traversal};
use interfere_geometry::{DPose, Solid};
use serde::Serialize;
use std::time::Instant;

/// One way of running the exact volume, timed over the poses.
#[derive(Serialize, Clone)]
pub struct ExactRow {
    /// `narrow+exact`, `fused-obb` or `fused-aabb`.
    pub variant: &'static str,
    /// Threads (`ExactOptions::threads`): of the per-pair work for `narrow+exact` (its narrow
    /// phase is one thread), of the traversal and the per-pair work for the fused rows.
    pub threads: usize,
    /// Mean and max ms per query (volume, gradient and regions), all stages.
    pub mean_ms: f64,
    /// Slowest query.
    pub max_ms: f64,
    /// Mean on-CPU ms per query of the calling thread (Linux `/proc/thread-self/schedstat`;
    /// one-thread rows only): what the query cost when the machine is shared.
    pub cpu_mean_ms: Option<f64>,
    /// Of the mean: the narrow phase (all pairs), for `narrow+exact`.
    pub narrow_mean_ms: Option<f64>,
    /// Of the mean: `ExactVolume::compute` on the narrow phase's pairs, for `narrow+exact`.
    pub exact_mean_ms: Option<f64>,
    /// Mean candidate pairs examined per query.
    pub candidates: f64,
    /// Mean crossing pairs per query.
    pub crossing_pairs: f64,
    /// Mean contact regions per query.
    pub regions: f64,
}

/// parry3d's mesh boolean on the same poses.
#[derive(Serialize, Clone)]
pub struct ParryRow {
    /// Mean and max ms per query (boolean and the volume of its mesh).
    pub mean_ms: f64,
    /// Slowest query.
    pub max_ms: f64,
    /// Relative error against our exact volume, over the poses where both are positive and
    /// parry succeeded.
    pub mean_relative_error: f64,
    /// Largest such error.
    pub max_relative_error: f64,
    /// Poses where parry's boolean returned an error.
    pub failures: usize,
    /// Poses where one volume is zero and the other is not (parry's tolerances).
    pub disagreements: usize,
}

/// The exact volumes of the poses and the rows timing them.
pub struct ExactRows {
    /// Exact volume per pose.
    pub volumes: Vec<f64>,
    /// Timed variants.
    pub rows: Vec<ExactRow>,
    /// The peer, unless skipped.
    pub parry: Option<ParryRow>,
}

/// On-CPU nanoseconds of the calling thread so far (Linux), for the `cpu_mean_ms` column.
fn thread_cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Times the exact variants and the parry peer over `poses`.
pub fn run(
    solid: &Solid,
    collider: &MeshQueries,
    exact: &ExactVolume,
    parry: Option<&ParryBoolean>,
    poses: &[DPose],
    threads: &[usize],
) -> Result<ExactRows, String> {
    let mut rows = Vec::new();
    let mut volumes: Option<Vec<f64>> = None;
    let mut check = |vs: Vec<f64>, what: &str| -> Result<(), String> {
        match &volumes {
            None => volumes = Some(vs),
            Some(r) => {
                if let Some(i) = (0..r.len()).find(|&i| r[i].to_bits() != vs[i].to_bits()) {
                    return Err(format!(
                        "{what}: exact volume {} differs from {} at pose {i}",
                        vs[i], r[i]
                    ));
                }
            }
        }
        Ok(())
    };
    let _ = solid;
    for &t in threads {
        let options = ExactOptions {
            threads: t,
            collect_pieces: false,
            ..ExactOptions::default()
        };
        let (mut narrow, mut compute, mut max, mut cand, mut cross, mut regions) =
            (0.0, 0.0, 0.0f64, 0.0, 0.0, 0.0);
        let mut vs = Vec::with_capacity(poses.len());
        let cpu0 = thread_cpu_ns();
        for p in poses {
            let t0 = Instant::now();
            let pairs = collider
                .all_pairs(collider, p, Method::Obb)
                .map_err(|e| e.to_string())?;
            let n = ms(t0);
            let t1 = Instant::now();
            let r = exact
                .compute(p, &pairs, &options)
                .map_err(|e| e.to_string())?;
            let c = ms(t1);
            narrow += n;
            compute += c;
            max = max.max(n + c);
            cand += r.candidate_pairs as f64;
            cross += r.crossing_pairs as f64;
            regions += r.regions.len() as f64;
            vs.push(r.volume);
        }
        let cpu1 = thread_cpu_ns();
        check(vs, "narrow+exact")?;
        let k = poses.len() as f64;
        rows.push(ExactRow {
            variant: "narrow+exact",
            threads: t,
            mean_ms: (narrow + compute) / k,
            max_ms: max,
            cpu_mean_ms: match (cpu0, cpu1, t) {
                (Some(a), Some(b), 1) => Some((b - a) as f64 * 1e-6 / k),
                _ => None,
            },
            narrow_mean_ms: Some(narrow / k),
            exact_mean_ms: Some(compute / k),
            candidates: cand / k,
            crossing_pairs: cross / k,
            regions: regions / k,
        });
    }
    let fused = [
        ("fused-obb", Traversal::Obb),
        ("fused-aabb", Traversal::Aabb),
    ];
    for ((variant, traversal), &t) in fused
        .iter()
        .flat_map(|f| threads.iter().map(move |t| (f, t)))
    {
        let (variant, traversal) = (*variant, *traversal);
        exact.prepare(traversal);
        let options = ExactOptions {
            collect_pieces: false,
            threads: t,
            ..ExactOptions::default()
        };
        let (mut sum, mut max, mut cand, mut cross, mut regions) = (0.0, 0.0f64, 0.0, 0.0, 0.0);
        let mut vs = Vec::with_capacity(poses.len());
        let cpu0 = thread_cpu_ns();
        for p in poses {
            let t0 = Instant::now();
            let r = exact
                .compute_traversing(p, traversal, &options)
                .map_err(|e| e.to_string())?;
            let e = ms(t0);
            sum += e;
            max = max.max(e);
            cand += r.candidate_pairs as f64;
            cross += r.crossing_pairs as f64;
            regions += r.regions.len() as f64;
            vs.push(r.volume);
        }
        let cpu1 = thread_cpu_ns();
        check(vs, variant)?;
        let k = poses.len() as f64;
        rows.push(ExactRow {
            variant,
            threads: t,
            mean_ms: sum / k,
            max_ms: max,
            cpu_mean_ms: match (cpu0, cpu1, t) {
                (Some(a), Some(b), 1) => Some((b - a) as f64 * 1e-6 / k),
                _ => None,
            },
            narrow_mean_ms: None,
            exact_mean_ms: None,
            candidates: cand / k,
            crossing_pairs: cross / k,
            regions: regions / k,
        });
    }
    let volumes = volumes.unwrap_or_default();
    let parry = match parry {
        None => None,
        Some(pm) => {
            let (mut sum, mut max) = (0.0, 0.0f64);
            let (mut failures, mut disagreements) = (0, 0);
            let mut errors = Vec::new();
            for (p, &v) in poses.iter().zip(&volumes) {
                let pose = parry_pose_f64(p);
                let t0 = Instant::now();
                let r = pm.intersection_volume(pm, &pose);
                let e = ms(t0);
                sum += e;
                max = max.max(e);
                match r {
                    Err(_) => failures += 1,
                    Ok(pv) => {
                        if (pv > 0.0) != (v > 0.0) {
                            disagreements += 1;
                        } else if v > 0.0 {
                            errors.push((pv - v).abs() / v);
                        }
                    }
                }
            }
            let k = poses.len() as f64;
            Some(ParryRow {
                mean_ms: sum / k,
                max_ms: max,
                mean_relative_error: errors.iter().sum::<f64>() / errors.len().max(1) as f64,
                max_relative_error: errors.iter().copied().fold(0.0, f64::max),
                failures,
                disagreements,
            })
        }
    };
    Ok(ExactRows {
        volumes,
        rows,
        parry,
    })
}

/// manifold3d's figures, printed as an outside reference only (not run here).
pub const MANIFOLD_NOTE: &str = "outside reference, not run here (../shared/meshes/README.md, \
    a 2-core machine of this kind, one thread): manifold3d exact intersection volume \
    14.8 / 19.2 ms (bunny25k, d = 1 / 0.5), 52 / 77 ms (bunny100k, d = 1 / 0.5)";

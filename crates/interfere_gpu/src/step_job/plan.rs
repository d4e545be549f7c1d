//! Planning a job on the host: the input validated, meshes uploaded, and each stage's inputs
//! prepared (CInDeR's world-space objects, the traversal's palette, every pair's volume lines in
//! its local frame) with the capacities learned from earlier jobs.

use super::*;
use crate::bvh_traversal::palette::starting_capacities;

impl StepJobRunner {
    /// Validates the input and prepares everything on the host.
    pub(super) fn plan(
        &mut self,
        ctx: &GpuContext,
        input: StepJobInput,
    ) -> Result<JobPlan, GpuError> {
        let n = input.objects.len();
        for (k, &(i, j)) in input.pairs.iter().enumerate() {
            if i >= j || j as usize >= n {
                return Err(GpuError::InvalidInput {
                    what: WHAT,
                    reason: format!("pair {k} is ({i}, {j}): needs i < j < {n} objects"),
                });
            }
        }
        for (k, o) in input.objects.iter().enumerate() {
            if !o.pose.is_finite() {
                return Err(GpuError::InvalidInput {
                    what: WHAT,
                    reason: format!("object {k}: the pose is not finite"),
                });
            }
        }
        let used: BTreeSet<usize> = input
            .pairs
            .iter()
            .flat_map(|&(i, j)| [i as usize, j as usize])
            .collect();
        let needed: BTreeSet<u64> = used.iter().map(|&o| input.objects[o].mesh).collect();
        let uploaded =
            self.arena
                .ensure(ctx, &input.meshes, &needed, self.jobs, self.evict_after)?;
        let mesh_of = |o: u32| uploaded.index[&input.objects[o as usize].mesh];
        let meshes: Vec<(Arc<ArenaMesh>, Arc<ArenaMesh>)> = input
            .pairs
            .iter()
            .map(|&(i, j)| {
                (
                    uploaded.meshes[mesh_of(i) as usize].clone(),
                    uploaded.meshes[mesh_of(j) as usize].clone(),
                )
            })
            .collect();
        let b_to_a: Vec<DPose> = input
            .pairs
            .iter()
            .map(|&(i, j)| {
                let (pa, pb) = (
                    input.objects[i as usize].pose,
                    input.objects[j as usize].pose,
                );
                pa.inverse().mul(&pb)
            })
            .collect();

        // CInDeR over the objects of the pairs, in increasing object order.
        let clock = Instant::now();
        let cinder = match &input.cinder {
            None => None,
            Some(options) => {
                let order: Vec<usize> = used.iter().copied().collect();
                let objects: Vec<CinderObject> = order
                    .iter()
                    .map(|&o| {
                        let mesh = &uploaded.meshes[mesh_of(o as u32) as usize];
                        job_cinder_object(&mesh.solid, &input.objects[o].pose)
                    })
                    .collect();
                let edges: Vec<Arc<Vec<(u32, u32)>>> = order
                    .iter()
                    .map(|&o| uploaded.meshes[mesh_of(o as u32) as usize].edges.clone())
                    .collect();
                let scene = scene::prepare(ctx, &objects, options, Some(&edges))?;
                let mut drawn = vec![NOT_DRAWN; n];
                for (d, &k) in scene.original.iter().enumerate() {
                    drawn[order[k]] = d as u32;
                }
                let pair_ids = input
                    .pairs
                    .iter()
                    .map(|&(i, j)| [drawn[i as usize], drawn[j as usize]])
                    .collect();
                let (projections, estimate) = scene::projections(&scene, options);
                Some(CinderPlan {
                    options: *options,
                    capacity: scene::fragment_capacity(
                        ctx,
                        self.capacities.fragments.unwrap_or(estimate),
                        1,
                    ),
                    scene,
                    projections,
                    pair_ids,
                })
            }
        };

        let cinder_ms = clock.elapsed().as_secs_f64() * 1e3;
        // The traversal's palette.
        let traversal = if input.triangle_pairs && !input.pairs.is_empty() {
            let palette: Vec<ObjectPair> = input
                .pairs
                .iter()
                .zip(&b_to_a)
                .map(|(&(i, j), pose)| ObjectPair {
                    a: mesh_of(i),
                    b: mesh_of(j),
                    b_to_a: *pose,
                })
                .collect();
            let entries = palette_entries(&uploaded.set, &palette)?;
            let last = palette
                .iter()
                .map(|p| {
                    let depth = |m: u32| uploaded.set.depth(m as usize).unwrap_or(0);
                    depth(p.a).max(depth(p.b))
                })
                .max()
                .unwrap_or(0);
            // What earlier jobs learned, within what the device can hold.
            let (list, hits) = starting_capacities(
                ctx,
                (self.capacities.pair_list, self.capacities.hits),
                input.pairs.len() as u64,
            );
            Some(TraversalPlan {
                palette: storage_buffer(ctx, "job palette", &entries, wgpu::BufferUsages::empty())?,
                last,
                list_capacity: list.clamp(1, MAX_CAPACITY),
                hit_capacity: hits.clamp(1, MAX_CAPACITY),
            })
        } else {
            None
        };

        // Every pair's volume lines.
        let clock = Instant::now();
        let volume = match &input.volume {
            None => None,
            Some(v) => {
                let mut pairs = Vec::with_capacity(input.pairs.len());
                let mut batch = Vec::new();
                let mut lines = 0u64;
                for (k, ((ma, mb), pose)) in meshes.iter().zip(&b_to_a).enumerate() {
                    let options = v.options(k, input.pairs.len())?;
                    let prepared = prepare_pair(
                        (ma.solid.mesh(), &ma.tree),
                        (mb.solid.mesh(), &mb.tree),
                        pose,
                        &options,
                    );
                    pairs.push(match prepared {
                        Err(e) => VolumePair::Failed(e),
                        Ok(Prepared::Empty(r)) => VolumePair::Empty(*r),
                        Ok(Prepared::Lines(prep)) => {
                            if lines + prep.total > crate::volume::MAX_GPU_RAYS {
                                VolumePair::Failed(GpuError::InvalidInput {
                                    what: WHAT,
                                    reason: format!(
                                        "pair {k}'s {} lines do not fit the job's batch of at \
                                         most {} lines",
                                        prep.total,
                                        crate::volume::MAX_GPU_RAYS
                                    ),
                                })
                            } else {
                                lines += prep.total;
                                batch.push(k);
                                VolumePair::Lines(prep, batch.len() - 1)
                            }
                        }
                    });
                }
                let capacity =
                    ((lines as f64 * self.capacities.records_per_line).ceil() as u64).max(1) + 64;
                Some(VolumePlan {
                    pairs,
                    batch,
                    lines,
                    capacity: capacity.min(u64::from(u32::MAX)),
                })
            }
        };
        let volume_ms = clock.elapsed().as_secs_f64() * 1e3;
        let mesh_index = input
            .pairs
            .iter()
            .map(|&(i, j)| (mesh_of(i), mesh_of(j)))
            .collect();
        Ok(JobPlan {
            step: input.step,
            pairs: input.pairs,
            meshes,
            mesh_index,
            b_to_a,
            uploaded,
            asked_triangles: input.triangle_pairs,
            cinder,
            traversal,
            volume,
            prepare_ms: [cinder_ms, volume_ms],
        })
    }
}

impl JobPlan {
    /// A plan with nothing in it (what a [`PendingJob`] keeps once answered).
    pub(super) fn empty(other: &JobPlan) -> JobPlan {
        JobPlan {
            step: other.step,
            pairs: Vec::new(),
            meshes: Vec::new(),
            mesh_index: Vec::new(),
            b_to_a: Vec::new(),
            uploaded: other.uploaded.clone(),
            asked_triangles: false,
            cinder: None,
            traversal: None,
            volume: None,
            prepare_ms: [0.0; 2],
        }
    }
}

//! The job's mesh cache on the device: each mesh (its vertices, triangles and balanced tree)
//! uploaded once per [`JobMesh::id`] and dropped when unused for [`StepJobRunner::evict_after`]
//! jobs.

use super::*;

/// A mesh on the device with what the job needs of it on the host.
pub(super) struct ArenaMesh {
    pub(super) solid: Arc<Solid>,
    pub(super) tree: Arc<BalancedTree>,
    /// Exact `f64` twin at the identity (volume recasts).
    pub(super) at_identity: RayMesh,
    /// Unique edges (CInDeR).
    pub(super) edges: Arc<Vec<(u32, u32)>>,
}

/// The meshes uploaded together (one [`GpuMeshSet`] and the volume's index buffer).
pub(super) struct Uploaded {
    pub(super) set: GpuMeshSet,
    /// Triangles as vertex indices, in the set's order (the volume kernel's `tris`).
    pub(super) vol_tris: wgpu::Buffer,
    pub(super) index: HashMap<u64, u32>,
    pub(super) meshes: Vec<Arc<ArenaMesh>>,
}

impl Uploaded {
    pub(super) fn loc(&self, mesh: u32) -> MeshLoc {
        let r = self.set.meshes[mesh as usize].r;
        MeshLoc {
            tri_base: r.tri_base,
            level_base: r.level_base,
        }
    }
}

/// The mesh cache of a runner.
#[derive(Default)]
pub(super) struct MeshArena {
    pub(super) meshes: HashMap<u64, (Arc<ArenaMesh>, u64)>,
    pub(super) uploaded: Option<Arc<Uploaded>>,
}

impl MeshArena {
    /// Makes every mesh of `given` known and every id of `needed` uploaded; rebuilds the upload
    /// (dropping ids unused for `evict_after` jobs) when something is missing or replaced.
    pub(super) fn ensure(
        &mut self,
        ctx: &GpuContext,
        given: &[JobMesh],
        needed: &BTreeSet<u64>,
        job: u64,
        evict_after: u64,
    ) -> Result<Arc<Uploaded>, GpuError> {
        let mut dirty = false;
        for m in given {
            let same = self.meshes.get(&m.id).is_some_and(|(old, _)| {
                Arc::ptr_eq(&old.solid, &m.solid) && Arc::ptr_eq(&old.tree, &m.tree)
            });
            if same {
                continue;
            }
            if !needed.contains(&m.id) && !self.meshes.contains_key(&m.id) {
                continue;
            }
            check_mesh(m.solid.mesh(), &m.tree)?;
            let at_identity = RayMesh::new(m.solid.mesh(), &m.tree, &DPose::IDENTITY)?;
            let mesh = ArenaMesh {
                solid: m.solid.clone(),
                tree: m.tree.clone(),
                at_identity,
                edges: Arc::new(scene::unique_edges(m.solid.triangles())),
            };
            self.meshes.insert(m.id, (Arc::new(mesh), job));
            dirty = true;
        }
        for id in needed {
            match self.meshes.get_mut(id) {
                Some((_, used)) => *used = job,
                None => {
                    return Err(GpuError::InvalidInput {
                        what: WHAT,
                        reason: format!("an object uses mesh id {id}, which no JobMesh gives"),
                    });
                }
            }
        }
        if let Some(up) = &self.uploaded
            && !dirty
            && needed.iter().all(|id| up.index.contains_key(id))
        {
            return Ok(up.clone());
        }
        self.meshes
            .retain(|id, (_, used)| needed.contains(id) || *used + evict_after >= job);
        let mut ids: Vec<u64> = self.meshes.keys().copied().collect();
        ids.sort_unstable();
        let meshes: Vec<Arc<ArenaMesh>> = ids.iter().map(|id| self.meshes[id].0.clone()).collect();
        let list: Vec<_> = meshes
            .iter()
            .map(|m| (m.solid.mesh(), m.tree.as_ref()))
            .collect();
        let set = GpuMeshSet::upload(ctx, &list)?;
        let flat: Vec<u32> = meshes
            .iter()
            .flat_map(|m| m.solid.triangles().iter().flatten().copied())
            .collect();
        let vol_tris = storage_buffer(
            ctx,
            "job mesh triangles",
            &flat,
            wgpu::BufferUsages::empty(),
        )?;
        let up = Arc::new(Uploaded {
            set,
            vol_tris,
            index: ids
                .iter()
                .enumerate()
                .map(|(k, &id)| (id, k as u32))
                .collect(),
            meshes,
        });
        self.uploaded = Some(up.clone());
        Ok(up)
    }
}

//! Preparing a pair for the volume kernel on the host: the pair's local frame, its refitted
//! boxes and the line grid of its overlap.

use super::*;

/// Where a mesh's triangles and level offsets are in a batch's shared buffers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct MeshLoc {
    /// First triangle (index triple) in the triangle buffer.
    pub tri_base: u32,
    /// First level offset in the level buffer.
    pub level_base: u32,
}

/// One mesh pair prepared on the host for the batched kernel: `B` placed in `A`'s frame in
/// `f64`, the line grids over the overlap box, both meshes shifted to the local frame (the
/// overlap box's centre) and rounded to `f32`, and both trees refitted over the rounded
/// vertices.
pub(crate) struct PairPrep {
    pub(super) va: Vec<DVec3>,
    pub(super) vb: Vec<DVec3>,
    pub(super) grids: [LineGrid; 3],
    pub(super) per_axis: [u64; 3],
    /// Lines over the three axes.
    pub(crate) total: u64,
    /// The local origin in A's frame.
    pub(crate) origin: DVec3,
    /// A's local vertices, B's (from float `b_base`), then the line coordinate tables.
    pub(super) geom: Vec<f32>,
    pub(super) b_base: u32,
    /// Per axis: first float of the u and v tables in `geom`, rows, columns.
    pub(super) grid: [[u32; 4]; 3],
    /// A's refitted nodes, then B's (from node `b_nodes`).
    pub(super) nodes: Vec<BalancedNode>,
    pub(super) b_nodes: u32,
    pub(super) depth: [u32; 2],
    pub(super) tol: f32,
    pub(super) centre: DVec3,
    pub(super) collect_points: bool,
}

/// A prepared pair: nothing to cast (the boxes do not overlap, the zero result), or lines.
pub(crate) enum Prepared {
    /// The boxes do not overlap.
    Empty(Box<VolumeResult>),
    /// Lines to cast.
    Lines(Box<PairPrep>),
}

/// Validates the options and pose and prepares one pair (see [`PairPrep`]); the same checks
/// and refusals as the CPU reference.
pub(crate) fn prepare_pair(
    (mesh_a, tree_a): (&TriMesh, &BalancedTree),
    (mesh_b, tree_b): (&TriMesh, &BalancedTree),
    b_to_a: &DPose,
    options: &UniformOptions,
) -> Result<Prepared, GpuError> {
    match options.sampling {
        Sampling::Resolution(0) => return Err(VolumeError::ZeroResolution.into()),
        Sampling::Fitted { .. } => {
            return Err(GpuError::InvalidInput {
                what: "the GPU volume",
                reason: "Sampling::Fitted (two passes, the second over the box the first \
                         finds) is done by the CPU sampler only"
                    .into(),
            });
        }
        Sampling::Spacing(h) | Sampling::ShiftedSpacing { spacing: h, .. }
            if !(h.is_finite() && h > 0.0) =>
        {
            return Err(VolumeError::InvalidSpacing(h).into());
        }
        Sampling::ShiftedSpacing { offset, .. } if !offset.is_finite() => {
            return Err(VolumeError::NonFiniteOffset.into());
        }
        _ => {}
    }
    if !b_to_a.is_finite() || !options.centre.is_finite() {
        return Err(VolumeError::NonFinitePose.into());
    }
    let va: Vec<DVec3> = mesh_a
        .vertices()
        .iter()
        .map(|&v| DPose::IDENTITY.transform_point(v))
        .collect();
    let vb: Vec<DVec3> = mesh_b
        .vertices()
        .iter()
        .map(|&v| b_to_a.transform_point(v))
        .collect();
    let (tris_a, tris_b) = (mesh_a.triangles(), mesh_b.triangles());
    let ba = triangle_bounds(tris_a, &va);
    let bb = triangle_bounds(tris_b, &vb);
    let lo = ba[0].max(bb[0]);
    let hi = ba[1].min(bb[1]);
    if !lo.cmplt(hi).all() {
        return Ok(Prepared::Empty(Box::new(empty_result(va.len(), vb.len()))));
    }
    let grids: [LineGrid; 3] = std::array::from_fn(|k| LineGrid::new(k, lo, hi, options.sampling));
    let rays: f64 = grids.iter().map(|g| g.n[0] as f64 * g.n[1] as f64).sum();
    for limit in [options.max_rays, MAX_GPU_RAYS] {
        if rays > limit as f64 {
            return Err(VolumeError::TooManyRays {
                rays: rays.min(u64::MAX as f64) as u64,
                limit,
            }
            .into());
        }
    }
    let per_axis: [u64; 3] = std::array::from_fn(|k| grids[k].n[0] * grids[k].n[1]);
    let total = per_axis.iter().sum::<u64>();

    // Local frame: shift by the overlap box's centre, round to f32.
    let origin = (lo + hi) * 0.5;
    let local = |p: DVec3| (p - origin).as_vec3();
    let la: Vec<Vec3> = va.iter().map(|&p| local(p)).collect();
    let lb: Vec<Vec3> = vb.iter().map(|&p| local(p)).collect();
    if !la.iter().chain(&lb).all(|p| p.is_finite()) {
        return Err(GpuError::InvalidInput {
            what: "GPU volume",
            reason: "a vertex is beyond f32 range in the local frame".into(),
        });
    }
    let mut geom: Vec<f32> = Vec::with_capacity(3 * (la.len() + lb.len()));
    geom.extend(la.iter().flat_map(|p| p.to_array()));
    let b_base = to_u32("GPU volume vertices", geom.len() as u64)?;
    geom.extend(lb.iter().flat_map(|p| p.to_array()));
    let mut grid = [[0u32; 4]; 3];
    for (k, g) in grids.iter().enumerate() {
        let axes = [(k + 1) % 3, (k + 2) % 3];
        for d in 0..2 {
            grid[k][d] = to_u32("GPU volume line table", geom.len() as u64)?;
            geom.extend((0..g.n[d]).map(|i| (g.coord(d, i) - origin[axes[d]]) as f32));
        }
        grid[k][2] = to_u32("GPU volume line grid", g.n[0])?;
        grid[k][3] = to_u32("GPU volume line grid", g.n[1])?;
    }
    let mut nodes = Vec::with_capacity(tree_a.nodes().len() + tree_b.nodes().len());
    refit(tree_a, tris_a, &la, &mut nodes);
    let b_nodes = to_u32("GPU volume nodes", nodes.len() as u64)?;
    refit(tree_b, tris_b, &lb, &mut nodes);
    Ok(Prepared::Lines(Box::new(PairPrep {
        va,
        vb,
        grids,
        per_axis,
        total,
        origin,
        geom,
        b_base,
        grid,
        nodes,
        b_nodes,
        depth: [tree_a.depth() as u32, tree_b.depth() as u32],
        // The f64 shift p - origin rounds by at most 2^-53 (|p| + |origin|); the CPU's own f64
        // depths by a few units of 2^-53 |p|: 2^-48 |origin| + the relative terms covers both.
        tol: (origin.abs().max_element() * 2f64.powi(-48)) as f32,
        centre: options.centre,
        collect_points: options.collect_points,
    })))
}

//! The CPU side of a pair's volume: the records the kernel wrote reduced to the volume and its
//! gradient (Wang–Faure–Pai 2012, Eq. 1–2), with exact recasts of the lines the kernel flagged.

use super::*;

/// Per-call state of the host reduction.
pub(super) struct Reduce<'m> {
    pub(super) result: VolumeResult,
    pub(super) va: &'m [DVec3],
    pub(super) vb: &'m [DVec3],
    pub(super) tris_a: &'m [[u32; 3]],
    pub(super) tris_b: &'m [[u32; 3]],
    pub(super) collect_points: bool,
}

impl Reduce<'_> {
    /// One interval endpoint on triangle `tri` of A or B at depth `t` of `ray`.
    pub(super) fn endpoint(
        &mut self,
        ray: &AxisRay,
        on_b: bool,
        tri: u32,
        sign: f64,
        t: f64,
        bary: [f64; 3],
    ) {
        let k = ray.axis;
        let w = self.result.pixel_area[k];
        let (tris, verts, grad) = if on_b {
            (self.tris_b, self.vb, &mut self.result.gradient_b)
        } else {
            (self.tris_a, self.va, &mut self.result.gradient_a)
        };
        let corners = tris[tri as usize];
        for (m, &vi) in corners.iter().enumerate() {
            grad[vi as usize][k] += sign * w * bary[m];
        }
        if self.collect_points {
            let [a, b, c] = corners.map(|i| verts[i as usize]);
            let normal = (b - a).cross(c - a).normalize_or_zero();
            self.result.points.push(SurfacePoint {
                point: ray.point(t),
                normal,
                on_b,
                triangle: tri,
                axis: k as u8,
                area: w / normal[k].abs().max(f64::MIN_POSITIVE),
            });
        }
    }

    /// The CPU reference's treatment of one line (exact hits, sort, sweep): its overlap length.
    pub(super) fn recast(
        &mut self,
        ma: &RayMesh,
        mb: &RayMesh,
        ray: &AxisRay,
        scratch: &mut Scratch,
    ) -> f64 {
        let mut length = 0.0;
        scratch.hits_a.clear();
        ma.cast_axis(ray, &mut scratch.hits_a);
        if scratch.hits_a.is_empty() {
            return 0.0;
        }
        scratch.hits_b.clear();
        mb.cast_axis(ray, &mut scratch.hits_b);
        if scratch.hits_b.is_empty() {
            return 0.0;
        }
        scratch.sweep.sweep(&scratch.hits_a, &scratch.hits_b, |e| {
            if let Some(t0) = e.from {
                length += e.hit.t - t0;
            }
            self.endpoint(
                ray,
                e.on_b,
                e.hit.triangle,
                e.sign,
                e.hit.t,
                e.hit.barycentric,
            );
        });
        length
    }
}

#[derive(Default)]
pub(super) struct Scratch {
    pub(super) hits_a: Vec<LineCrossing>,
    pub(super) hits_b: Vec<LineCrossing>,
    pub(super) sweep: IntervalSweep,
}

/// The host reduction of one pair: the CPU's line order, exact recasts of flagged lines, the
/// gradient and points from the records (see the module documentation). `lines` and `records`
/// are the pair's (records sorted by line, numbered from `start`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn reduce_pair(
    prep: &PairPrep,
    (mesh_a, a_at_identity): (&TriMesh, &RayMesh),
    (mesh_b, tree_b): (&TriMesh, &BalancedTree),
    b_to_a: &DPose,
    lines: &[[u32; 2]],
    records: &[Record],
    start: u64,
    report: &mut GpuVolumeReport,
) -> Result<VolumeResult, GpuError> {
    let grids = &prep.grids;
    let mut ray_index = 0usize;
    for (k, g) in grids.iter().enumerate() {
        for i in 0..g.n[0] {
            for j in 0..g.n[1] {
                if lines[ray_index][1] & FLAG_OVERFLOW != 0 {
                    return Err(GpuError::VolumeHitOverflow {
                        axis: k,
                        u: g.coord(0, i),
                        v: g.coord(1, j),
                        cap: MAX_HITS_PER_RAY,
                    });
                }
                ray_index += 1;
            }
        }
    }
    report.records = records.len();
    let (tris_a, tris_b) = (mesh_a.triangles(), mesh_b.triangles());
    let mut reduce = Reduce {
        result: empty_result(prep.va.len(), prep.vb.len()),
        va: &prep.va,
        vb: &prep.vb,
        tris_a,
        tris_b,
        collect_points: prep.collect_points,
    };
    report.origin = prep.origin;
    report.rays = lines
        .iter()
        .map(|&[len, flags]| GpuRay {
            length: f32::from_bits(len),
            uncertain: flags & FLAG_UNCERTAIN != 0,
            unbalanced: flags & FLAG_UNBALANCED != 0,
            hits: flags >> 8,
        })
        .collect();
    let origin = prep.origin;
    let mut mb: Option<RayMesh> = None;
    let mut scratch = Scratch::default();
    let mut cursor = 0usize;
    let mut ray_index = 0u64;
    let mut axis_error = [0.0; 3];
    let mut lengths = Vec::new();
    for (k, g) in grids.iter().enumerate() {
        let w = g.h[0] * g.h[1];
        reduce.result.pixel_area[k] = w;
        let mut length = 0.0;
        lengths.clear();
        for i in 0..g.n[0] {
            let u = g.coord(0, i);
            for j in 0..g.n[1] {
                let ray = AxisRay {
                    axis: k,
                    u,
                    v: g.coord(1, j),
                };
                let gpu = report.rays[ray_index as usize];
                if gpu.unbalanced {
                    report.unbalanced += 1;
                }
                if gpu.uncertain || gpu.unbalanced {
                    report.recast += 1;
                    if mb.is_none() {
                        mb = Some(RayMesh::new(mesh_b, tree_b, b_to_a)?);
                    }
                    if let Some(mb) = &mb {
                        let l = reduce.recast(a_at_identity, mb, &ray, &mut scratch);
                        length += l;
                        lengths.push(l);
                    }
                } else {
                    length += f64::from(gpu.length);
                    lengths.push(f64::from(gpu.length));
                }
                while cursor < records.len() && u64::from(records[cursor].ray) == start + ray_index
                {
                    let r = records[cursor];
                    cursor += 1;
                    if gpu.uncertain || gpu.unbalanced {
                        continue;
                    }
                    let sign = if r.id & INTERVAL_END != 0 { 1.0 } else { -1.0 };
                    reduce.endpoint(
                        &ray,
                        r.id & ON_B != 0,
                        r.id & TRI_MASK,
                        sign,
                        f64::from(r.t) + origin[k],
                        r.l.map(f64::from),
                    );
                }
                ray_index += 1;
            }
        }
        reduce.result.axis_volumes[k] = w * length;
        axis_error[k] = error_estimate::axis_error(&lengths, g.n[0] as usize, g.n[1] as usize, w);
    }
    let mut result = reduce.result;
    result.estimated_axis_error = Some(axis_error);
    result.ray_count = prep.total as usize;
    result.volume = result.axis_volumes.iter().sum::<f64>() / 3.0;
    let c = prep.centre;
    for (g, &p) in result.gradient_b.iter().zip(&prep.vb) {
        result.force -= *g;
        result.torque -= (p - c).cross(*g);
    }
    Ok(result)
}

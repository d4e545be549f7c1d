//! Casting one ray per tile, transient-edge detection and 4×4 refinement (Wang, Faure & Pai
//! 2012, section 5 and the ray loop of Alg. 3), and the volume and gradient of one view axis.
//!
//! **Casting.** Every tile of every chosen pyramid pixel gets one line along the view axis
//! through its centre. The hits of both meshes are swept as in the uniform sampler: the line is
//! inside the intersection where both winding counts are positive, and the tile contributes
//! `area × length` to the axis volume (midpoint quadrature of Eq. 1 with the tile's area) and
//! `± area × λ` to the gradient of the vertices of each interval endpoint's triangle (Eq. 2).
//!
//! **Transient edges.** Where the surfaces of A and B cross inside a tile, the sampled length
//! function has a kink that no mesh edge explains. Every hit defines an approximation plane:
//! depth `z` at the centre and gradient `∇z` from its normal. Within the tile the true surface
//! stays within the butterfly region of that plane, `z_1 = ½ √(w² + h²) Σ α + Σ d` (the EBPI
//! sums of the fine pixels under the tile, read from a summed-area table). For every pair of a
//! hit on A and a hit on B with slope jump `J = ∇z_a − ∇z_b`, the planes can meet inside the
//! tile when `|z_a − z_b| ≤ |J_u| w / 2 + |J_v| h / 2 + z_1`; the transient edge is then charged
//! like a mesh edge through the tile: a hinge of jump `J` through a `w × h` rectangle changes the
//! midpoint rule by at most `(|J_u| w + |J_v| h) w h / 8` (and never by more than the tile's
//! column, `w h` times the overlap box's depth).
//!
//! **Refinement.** The transient budget of an axis is what the a-priori edge bounds left of the
//! tolerance. While the tiles' transient charges exceed it, the tiles with the largest charges
//! are replaced by 4×4 sub-tiles (each charge is expected to drop about fourfold), which are
//! cast and checked again; a few passes at most, within the ray limit. The reported error bound
//! of the axis is the sum of the pyramid pixels' edge bounds and the final tiles' charges.

use super::ebpi::{Ebpi, depth_gradient};
use super::pyramid::Node;
use crate::volume::intervals::IntervalSweep;
use crate::volume::ray_bvh::{AxisRay, LineCrossing, RayMesh};
use crate::volume::uniform::{SurfacePoint, VolumeResult};

/// Refinement passes at most.
const MAX_PASSES: usize = 8;
/// Refinement depth at most (each level divides a tile's sides by 4).
const MAX_DEPTH: u8 = 6;

/// What one axis produced.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct AxisOutcome {
    /// The axis volume estimate.
    pub volume: f64,
    /// Sum of the pyramid pixels' a-priori edge bounds.
    pub edge_bound: f64,
    /// Sum of the final tiles' transient charges.
    pub transient_bound: f64,
    /// Rays cast (refined tiles included).
    pub rays: u64,
    /// Rays cast by the refinement passes.
    pub refined_rays: u64,
}

/// Inputs shared by all tiles of an axis.
pub(crate) struct AxisJob<'r> {
    /// The view axis.
    pub k: usize,
    /// A, placed.
    pub ma: &'r RayMesh,
    /// B, placed in A's frame.
    pub mb: &'r RayMesh,
    /// The EBPI of the axis (for the butterfly sums under a tile).
    pub ebpi: &'r Ebpi,
    /// The chosen pyramid pixels.
    pub nodes: &'r [Node],
    /// Depth of the overlap box along the axis.
    pub depth_extent: f64,
    /// The axis's error tolerance (volume units).
    pub tolerance: f64,
    /// Rays this axis may cast at most.
    pub max_rays: u64,
    /// Whether to record the interval endpoints.
    pub collect_points: bool,
}

#[derive(Clone, Copy, Debug)]
struct Endpoint {
    on_b: bool,
    hit: LineCrossing,
    sign: f64,
}

#[derive(Clone, Debug)]
struct Tile {
    centre: [f64; 2],
    size: [f64; 2],
    level: u8,
    charge: f64,
    length: f64,
    ends: std::ops::Range<usize>,
    live: bool,
}

/// Summed-area table of the EBPI's `Σ α` and `Σ d`.
struct Sat {
    n: usize,
    sums: Vec<[f64; 2]>,
}

impl Sat {
    fn new(e: &Ebpi) -> Self {
        let n = e.n;
        let mut sums = vec![[0.0; 2]; (n + 1) * (n + 1)];
        for j in 0..n {
            for i in 0..n {
                let t = &e.texels[j * n + i];
                let at = |i: usize, j: usize, s: &Vec<[f64; 2]>| s[j * (n + 1) + i];
                let (l, d, ld) = (at(i, j + 1, &sums), at(i + 1, j, &sums), at(i, j, &sums));
                sums[(j + 1) * (n + 1) + i + 1] =
                    [t.slope + l[0] + d[0] - ld[0], t.depth + l[1] + d[1] - ld[1]];
            }
        }
        Self { n, sums }
    }

    /// `(Σ α, Σ d)` over the fine pixels that meet the rectangle `[lo, hi]`.
    fn over(&self, e: &Ebpi, lo: [f64; 2], hi: [f64; 2]) -> [f64; 2] {
        let n = self.n as f64;
        let idx = |x: f64, o: f64, p: f64, up: bool| {
            let f = (x - o) / p;
            let f = if up { f.ceil() } else { f.floor() };
            f.clamp(0.0, n) as usize
        };
        let (i0, i1) = (
            idx(lo[0], e.origin[0], e.pixel[0], false),
            idx(hi[0], e.origin[0], e.pixel[0], true),
        );
        let (j0, j1) = (
            idx(lo[1], e.origin[1], e.pixel[1], false),
            idx(hi[1], e.origin[1], e.pixel[1], true),
        );
        let w = self.n + 1;
        let s = |i: usize, j: usize| self.sums[j * w + i];
        let (a, b, c, d) = (s(i1, j1), s(i0, j1), s(i1, j0), s(i0, j0));
        [a[0] - b[0] - c[0] + d[0], a[1] - b[1] - c[1] + d[1]]
    }
}

struct Caster<'r> {
    job: &'r AxisJob<'r>,
    sat: Sat,
    hits_a: Vec<LineCrossing>,
    hits_b: Vec<LineCrossing>,
    sweep: IntervalSweep,
    ends: Vec<Endpoint>,
}

impl Caster<'_> {
    /// Casts the tile's centre line, records its interval endpoints and its transient charge.
    fn cast(&mut self, centre: [f64; 2], size: [f64; 2], level: u8) -> Tile {
        let k = self.job.k;
        let ray = AxisRay {
            axis: k,
            u: centre[0],
            v: centre[1],
        };
        let start = self.ends.len();
        let mut tile = Tile {
            centre,
            size,
            level,
            charge: 0.0,
            length: 0.0,
            ends: start..start,
            live: true,
        };
        self.hits_a.clear();
        self.job.ma.cast_axis(&ray, &mut self.hits_a);
        self.hits_b.clear();
        self.job.mb.cast_axis(&ray, &mut self.hits_b);
        if self.hits_a.is_empty() || self.hits_b.is_empty() {
            return tile;
        }
        tile.charge = self.transient_charge(centre, size);
        let ends = &mut self.ends;
        let open = self.sweep.sweep(&self.hits_a, &self.hits_b, |e| {
            if let Some(t0) = e.from {
                tile.length += e.hit.t - t0;
            }
            ends.push(Endpoint {
                on_b: e.on_b,
                hit: e.hit,
                sign: e.sign,
            });
        });
        if open {
            // An open mesh could leave an interval open: drop its start (as the uniform sampler).
            self.ends.pop();
        }
        tile.ends = start..self.ends.len();
        tile
    }

    /// Section 5: the error charged to transient edges that may cross the tile.
    fn transient_charge(&self, centre: [f64; 2], size: [f64; 2]) -> f64 {
        let job = self.job;
        let k = job.k;
        let [w, h] = size;
        let lo = [centre[0] - w / 2.0, centre[1] - h / 2.0];
        let hi = [centre[0] + w / 2.0, centre[1] + h / 2.0];
        let [slope, depth] = self.sat.over(job.ebpi, lo, hi);
        let z1 = 0.5 * (w * w + h * h).sqrt() * slope + depth;
        let column = w * h * job.depth_extent;
        let plane = |m: &RayMesh, hit: &LineCrossing| {
            let n = m.unit_normal(hit.triangle as usize);
            // A steep face seen by the line has a huge slope; the column cap bounds its charge.
            let g = depth_gradient(n, k).unwrap_or([f64::MAX.sqrt(); 2]);
            (hit.t, g)
        };
        let planes_b: Vec<(f64, [f64; 2])> = self.hits_b.iter().map(|x| plane(job.mb, x)).collect();
        let mut charge = 0.0;
        for ha in &self.hits_a {
            let (za, ga) = plane(job.ma, ha);
            for &(zb, gb) in &planes_b {
                let j = [(ga[0] - gb[0]).abs(), (ga[1] - gb[1]).abs()];
                let reach = j[0] * w / 2.0 + j[1] * h / 2.0 + z1;
                if (za - zb).abs() <= reach {
                    charge += ((j[0] * w + j[1] * h) * w * h / 8.0).min(column);
                }
            }
        }
        charge.min(column)
    }
}

/// Casts, refines and accumulates one view axis into `result` (volume not set).
pub(crate) fn run_axis(job: &AxisJob<'_>, result: &mut VolumeResult) -> AxisOutcome {
    let mut caster = Caster {
        job,
        sat: Sat::new(job.ebpi),
        hits_a: Vec::new(),
        hits_b: Vec::new(),
        sweep: IntervalSweep::default(),
        ends: Vec::new(),
    };
    let mut out = AxisOutcome::default();
    let mut tiles: Vec<Tile> = Vec::new();
    for node in job.nodes {
        out.edge_bound += node.plan.bound;
        let [nu, nv] = node.plan.n;
        let size = [node.size[0] / nu as f64, node.size[1] / nv as f64];
        for j in 0..nv {
            for i in 0..nu {
                let centre = [
                    node.origin[0] + (i as f64 + 0.5) * size[0],
                    node.origin[1] + (j as f64 + 0.5) * size[1],
                ];
                tiles.push(caster.cast(centre, size, 0));
            }
        }
    }
    out.rays = tiles.len() as u64;
    let allowance = (job.tolerance - out.edge_bound).max(0.0);
    for _ in 0..MAX_PASSES {
        let total: f64 = tiles.iter().filter(|t| t.live).map(|t| t.charge).sum();
        if total <= allowance {
            break;
        }
        // Refine the largest charges until the predicted total fits.
        let mut order: Vec<usize> = (0..tiles.len())
            .filter(|&i| tiles[i].live && tiles[i].charge > 0.0 && tiles[i].level < MAX_DEPTH)
            .collect();
        order.sort_unstable_by(|&a, &b| tiles[b].charge.total_cmp(&tiles[a].charge));
        let mut predicted = total;
        let mut chosen = Vec::new();
        for i in order {
            if predicted <= allowance || out.rays + 16 * (chosen.len() as u64 + 1) > job.max_rays {
                break;
            }
            predicted -= 0.75 * tiles[i].charge;
            chosen.push(i);
        }
        if chosen.is_empty() {
            break;
        }
        for i in chosen {
            tiles[i].live = false;
            let (c, s, level) = (tiles[i].centre, tiles[i].size, tiles[i].level + 1);
            let sub = [s[0] / 4.0, s[1] / 4.0];
            for j in 0..4 {
                for i in 0..4 {
                    let centre = [
                        c[0] + (i as f64 - 1.5) * sub[0],
                        c[1] + (j as f64 - 1.5) * sub[1],
                    ];
                    tiles.push(caster.cast(centre, sub, level));
                }
            }
            out.rays += 16;
            out.refined_rays += 16;
        }
    }
    let k = job.k;
    let mut volume = 0.0;
    for t in tiles.iter().filter(|t| t.live) {
        let area = t.size[0] * t.size[1];
        volume += area * t.length;
        out.transient_bound += t.charge;
        for e in &caster.ends[t.ends.clone()] {
            let (mesh, grad) = if e.on_b {
                (job.mb, &mut result.gradient_b)
            } else {
                (job.ma, &mut result.gradient_a)
            };
            let tri = mesh.triangles()[e.hit.triangle as usize];
            for (m, &vi) in tri.iter().enumerate() {
                grad[vi as usize][k] += e.sign * area * e.hit.barycentric[m];
            }
            if job.collect_points {
                let normal = mesh.unit_normal(e.hit.triangle as usize);
                let ray = AxisRay {
                    axis: k,
                    u: t.centre[0],
                    v: t.centre[1],
                };
                result.points.push(SurfacePoint {
                    point: ray.point(e.hit.t),
                    normal,
                    on_b: e.on_b,
                    triangle: e.hit.triangle,
                    axis: k as u8,
                    area: area / normal[k].abs().max(f64::MIN_POSITIVE),
                });
            }
        }
    }
    out.volume = volume;
    out
}

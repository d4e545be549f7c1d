//! The multi-resolution EBPI pyramid and pixel coarsening (Wang, Faure & Pai 2012, section 4.3).
//!
//! Level 0 is the rasterized EBPI (`n × n`, `n` a power of two); each texel of level `l + 1` is
//! the sum of the 2×2 texels below it. Every pixel of every level gets its optimal tiling from
//! [`plan`](super::tile_size::plan) with a budget proportional to its area, `Δ̄ · area / image
//! area`, so that the chosen pixels' bounds add up to at most `Δ̄`. Coarsening is a bottom-up
//! choice over the quadtree: a pixel is used as a whole when its tiling needs no more rays than
//! the best tilings of its four children together (ties go to the coarse pixel); the chosen
//! pixels cover the image exactly once.

use super::ebpi::{Ebpi, Texel};
use super::tile_size::{TilePlan, plan};

/// A chosen pyramid pixel and its tiling.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Node {
    /// Lower corner `(u, v)`.
    pub origin: [f64; 2],
    /// Size `(W, H)`.
    pub size: [f64; 2],
    /// Its tiling and error bound.
    pub plan: TilePlan,
}

/// The chosen pixels of the pyramid of `ebpi` for the total edge-error budget `budget`.
pub(crate) fn coarsen(ebpi: &Ebpi, budget: f64) -> Vec<Node> {
    let n0 = ebpi.n;
    let levels = n0.trailing_zeros() as usize; // n0 is a power of two
    let mut texels: Vec<Vec<Texel>> = vec![ebpi.texels.clone()];
    for l in 0..levels {
        let n = n0 >> l;
        let below = &texels[l];
        let mut up = vec![Texel::default(); (n / 2) * (n / 2)];
        for j in 0..n {
            for i in 0..n {
                up[(j / 2) * (n / 2) + i / 2].add(&below[j * n + i]);
            }
        }
        texels.push(up);
    }
    let image_area = (ebpi.pixel[0] * n0 as f64) * (ebpi.pixel[1] * n0 as f64);
    // Per level: each pixel's own plan, and the best ray count of its subtree.
    let mut plans: Vec<Vec<TilePlan>> = Vec::with_capacity(levels + 1);
    let mut best: Vec<Vec<u64>> = Vec::with_capacity(levels + 1);
    for (l, tex) in texels.iter().enumerate() {
        let n = n0 >> l;
        let size = [
            ebpi.pixel[0] * (1 << l) as f64,
            ebpi.pixel[1] * (1 << l) as f64,
        ];
        let b = budget * size[0] * size[1] / image_area;
        let p: Vec<TilePlan> = tex.iter().map(|t| plan(t, size, b)).collect();
        let own: Vec<u64> = p.iter().map(TilePlan::rays).collect();
        let cost = if l == 0 {
            own
        } else {
            let prev = &best[l - 1];
            let m = 2 * n;
            (0..n * n)
                .map(|idx| {
                    let (i, j) = (idx % n, idx / n);
                    let kids = prev[2 * j * m + 2 * i]
                        .saturating_add(prev[2 * j * m + 2 * i + 1])
                        .saturating_add(prev[(2 * j + 1) * m + 2 * i])
                        .saturating_add(prev[(2 * j + 1) * m + 2 * i + 1]);
                    own[idx].min(kids)
                })
                .collect()
        };
        plans.push(p);
        best.push(cost);
    }
    let mut out = Vec::new();
    let mut stack = vec![(levels, 0usize, 0usize)];
    while let Some((l, i, j)) = stack.pop() {
        let n = n0 >> l;
        let p = plans[l][j * n + i];
        if l == 0 || p.rays() <= best[l][j * n + i] {
            let size = [
                ebpi.pixel[0] * (1 << l) as f64,
                ebpi.pixel[1] * (1 << l) as f64,
            ];
            out.push(Node {
                origin: [
                    ebpi.origin[0] + i as f64 * size[0],
                    ebpi.origin[1] + j as f64 * size[1],
                ],
                size,
                plan: p,
            });
        } else {
            for (di, dj) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                stack.push((l - 1, 2 * i + di, 2 * j + dj));
            }
        }
    }
    out
}

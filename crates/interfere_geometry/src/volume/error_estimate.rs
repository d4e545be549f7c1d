//! An a-posteriori estimate of the sampling error of one axis of the uniform volume (Eq. 1 of
//! Wang, Faure & Pai 2012, section 2.2), from the grid of line lengths it sampled. Our addition: the paper bounds the
//! error a priori (its EBPI, sections 3–4); this reads it off the samples.
//!
//! **Model.** Eq. 1 is the midpoint rule: cell `(i, j)` of area `w` stands for `w L(i, j)`, where
//! `L` is the length of the line through its centre inside both solids. Over a cell where `L` is
//! linear the rule is exact; its error comes from the cells where `L` jumps (the silhouette of
//! the intersection) or kinks (its edges). A jump of size `d` that crosses the line between two
//! cell centres at a uniformly random place makes an error uniform in `±w d / 2`, of variance
//! `w² d² / 12`, and shows up as second differences `±d` in the two cells beside it. So the
//! variance charged to a cell is `w² (Dᵢ² + Dⱼ²) / 24`, with `Dᵢ = L(i−1, j) − 2 L(i, j) + L(i+1, j)`
//! (zero beyond the grid, which covers the whole overlap) and `Dⱼ` likewise; the charges of
//! different cells are taken as independent and add up. A linear `L` costs nothing. A flat face
//! of the intersection lying on the overlap box's face (aligned boxes) is charged through the
//! zero padding although the midpoint rule is exact there: the estimate errs on the high side.
//!
//! **Calibration** (`interfere bench volume`, bunny25k and bunny100k tumbling, R = 12–32,
//! docs/benchmarks.md): the 95th percentile of the actual error over the estimated standard
//! deviation is 1.2–1.8 (1.96 for a normal variable); the test
//! `error_estimate_tracks_the_actual_error` bounds the median and maximum on exact box–box and
//! lens volumes. It is an estimate, not a bound: a feature thinner than the line spacing that no line meets makes no
//! second difference at all.
//!
//! **Refinement was tried** and dropped: splitting the cells that carry most of the charge into
//! 2 × 2 sub-lines gave no smaller error per ray than a finer uniform grid on the bunny
//! (docs/benchmarks.md). Every edge of a fine mesh is a kink of `L`, so the error is not
//! confined to a few cells.

/// The estimated standard deviation of the sampling error of one axis: the square root of the
/// charges of all cells of its `n0 × n1` grid of line lengths (`lengths[i * n1 + j]`), cells of
/// area `w`.
pub fn axis_error(lengths: &[f64], n0: usize, n1: usize, w: f64) -> f64 {
    assert_eq!(lengths.len(), n0 * n1, "the grid is n0 × n1");
    (0..n0)
        .flat_map(|i| (0..n1).map(move |j| (i, j)))
        .map(|(i, j)| cell_variance(lengths, n1, w, i, j))
        .sum::<f64>()
        .sqrt()
}

/// The variance charged to cell `(i, j)` of a grid of `lengths.len() / n1` rows of `n1` line
/// lengths with cells of area `w` (the lengths beyond the grid are zero).
fn cell_variance(lengths: &[f64], n1: usize, w: f64, i: usize, j: usize) -> f64 {
    let n0 = lengths.len() / n1;
    let at = |i: usize, j: usize| lengths[i * n1 + j];
    let c = at(i, j);
    let up = if i > 0 { at(i - 1, j) } else { 0.0 };
    let down = if i + 1 < n0 { at(i + 1, j) } else { 0.0 };
    let left = if j > 0 { at(i, j - 1) } else { 0.0 };
    let right = if j + 1 < n1 { at(i, j + 1) } else { 0.0 };
    let (di, dj) = (up - 2.0 * c + down, left - 2.0 * c + right);
    w * w * (di * di + dj * dj) / 24.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every cell's charge, in cell order.
    fn cell_variances(lengths: &[f64], n0: usize, n1: usize, w: f64) -> Vec<f64> {
        (0..n0 * n1)
            .map(|c| cell_variance(lengths, n1, w, c / n1, c % n1))
            .collect()
    }

    #[test]
    fn linear_lengths_cost_nothing_inside_and_a_step_charges_the_cells_beside_it() {
        // L = 2 + i + 3j over the interior of a 6 × 6 grid: only the border (where the grid
        // meets the zero beyond it) is charged.
        let (n0, n1) = (6, 6);
        let lin: Vec<f64> = (0..n0 * n1)
            .map(|c| 2.0 + (c / n1) as f64 + 3.0 * (c % n1) as f64)
            .collect();
        let v = cell_variances(&lin, n0, n1, 0.5);
        for i in 1..n0 - 1 {
            for j in 1..n1 - 1 {
                assert_eq!(v[i * n1 + j], 0.0, "cell ({i}, {j})");
            }
        }
        // A step of 4 between columns 2 and 3, inside rows that continue beyond the grid is
        // not possible (zero outside), so take a constant block in the middle of a zero grid.
        let mut step = vec![0.0; 8 * 8];
        for i in 2..6 {
            for j in 2..6 {
                step[i * 8 + j] = 4.0;
            }
        }
        let v = cell_variances(&step, 8, 8, 1.0);
        // Interior of the block and the far zeros: nothing; the cells on both sides of the
        // block's edge: charged.
        assert_eq!(v[3 * 8 + 3], 0.0);
        assert_eq!(v[0], 0.0);
        assert!(v[3 * 8 + 2] > 0.0 && v[3 * 8 + 1] > 0.0);
        // (3, 1): Dⱼ = 0 − 0 + 4 = 4 → 16 / 24.
        assert!((v[3 * 8 + 1] - 16.0 / 24.0).abs() < 1e-15);
        // The axis error is the square root of all the charges.
        let total: f64 = v.iter().sum();
        assert_eq!(axis_error(&step, 8, 8, 1.0), total.sqrt());
    }
}

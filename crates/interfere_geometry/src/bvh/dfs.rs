//! Depth-first simultaneous traversal of two [`BalancedTree`]s: the classic CPU traversal that
//! Greß & Zachmann 2004 (section 4.1) contrast with their breadth-first GPU scheme, used here as
//! the fast CPU path and as a second reference for [`super::bfs`].
//!
//! Node pairs are tested with [`SatLite`]; an overlapping pair descends into the children of
//! the node with the larger box (or of the one that is not a leaf), using an explicit stack.
//! Leaf pairs whose boxes pass the test go to the caller's exact triangle test.
//!
//! The callback must only return `true` for triangle pairs that share a point (or whose leaf
//! boxes overlap), as an exact triangle-triangle test does: pairs pruned by the conservative box
//! test are then certainly rejected by it too, and the result equals the brute-force set.

use super::balanced::BalancedTree;
use super::sat_lite::SatLite;
use crate::pose::DPose;

#[derive(Clone, Copy)]
struct Entry {
    a_level: u32,
    a: u32,
    b_level: u32,
    b: u32,
}

/// The first triangle pair `(triangle of A, triangle of B)` for which `intersects` returns
/// `true`, stopping the traversal there; `None` when there is none.
pub fn first_hit<F>(
    a: &BalancedTree,
    b: &BalancedTree,
    b_to_a: &DPose,
    mut intersects: F,
) -> Option<(u32, u32)>
where
    F: FnMut(u32, u32) -> bool,
{
    let mut hits = Vec::new();
    traverse(a, b, b_to_a, &mut intersects, true, &mut hits);
    hits.first().copied()
}

/// All triangle pairs `(triangle of A, triangle of B)` for which `intersects` returns `true`,
/// sorted.
pub fn all_pairs<F>(
    a: &BalancedTree,
    b: &BalancedTree,
    b_to_a: &DPose,
    mut intersects: F,
) -> Vec<(u32, u32)>
where
    F: FnMut(u32, u32) -> bool,
{
    let mut hits = Vec::new();
    traverse(a, b, b_to_a, &mut intersects, false, &mut hits);
    hits.sort_unstable();
    hits
}

fn traverse<F>(
    a: &BalancedTree,
    b: &BalancedTree,
    b_to_a: &DPose,
    intersects: &mut F,
    stop_at_first: bool,
    hits: &mut Vec<(u32, u32)>,
) where
    F: FnMut(u32, u32) -> bool,
{
    let sat = SatLite::new(b_to_a);
    let (a_leaf, b_leaf) = (a.depth() as u32, b.depth() as u32);
    let mut stack = vec![Entry {
        a_level: 0,
        a: 0,
        b_level: 0,
        b: 0,
    }];
    while let Some(e) = stack.pop() {
        let na = &a.level(e.a_level as usize)[e.a as usize];
        let nb = &b.level(e.b_level as usize)[e.b as usize];
        if !sat.overlaps(na, nb) {
            continue;
        }
        let descend_a = match (e.a_level == a_leaf, e.b_level == b_leaf) {
            (true, true) => {
                if intersects(na.index, nb.index) {
                    hits.push((na.index, nb.index));
                    if stop_at_first {
                        return;
                    }
                }
                continue;
            }
            (true, false) => false,
            (false, true) => true,
            (false, false) => {
                // Rigid motion keeps sizes: compare the box diagonals directly.
                let size = |n: &super::balanced::BalancedNode| n.aabb().size().length_squared();
                size(na) >= size(nb)
            }
        };
        // Push in reverse so the first child is visited first.
        if descend_a {
            for c in a.children(e.a_level as usize, e.a as usize).rev() {
                stack.push(Entry {
                    a_level: e.a_level + 1,
                    a: c as u32,
                    ..e
                });
            }
        } else {
            for c in b.children(e.b_level as usize, e.b as usize).rev() {
                stack.push(Entry {
                    b_level: e.b_level + 1,
                    b: c as u32,
                    ..e
                });
            }
        }
    }
}

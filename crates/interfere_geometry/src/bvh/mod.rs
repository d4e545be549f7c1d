//! Bounding-volume hierarchies and their simultaneous traversals.
//!
//! - [`balanced`]: the balanced AABB tree of Greß & Zachmann 2004 (section 4.1), flat and
//!   level by level for GPU upload;
//! - [`sat_lite`]: their conservative 6-axis box test (section 4.3, appendix A);
//! - [`dfs`]: depth-first simultaneous traversal (CPU fast path);
//! - [`bfs`]: breadth-first level-synchronous traversal as the CPU reference of the GPU kernels
//!   (sections 4.2–4.4) with the temporal-coherence entrance level (section 5);
//! - [`front`]: temporal coherence for the OBBTree traversal (a pair's traversal front kept
//!   between queries);
//! - [`obbtree`]: the OBBTree of Gottschalk, Lin & Manocha (top-down, covariance of the
//!   convex hull, 15-axis separating-axis test).

pub mod balanced;
pub mod bfs;
pub mod dfs;
pub mod front;
pub mod obbtree;
pub mod sat_lite;

#[cfg(test)]
mod tests;

pub use balanced::{BalancedNode, BalancedTree};
pub use bfs::{BfsConfig, EntranceLevel, PairListOverflow};
pub use front::{FrontStats, TraversalFront};
pub use sat_lite::SatLite;

//! The balanced AABB tree of Greß & Zachmann 2004, section 4.1.
//!
//! The leaf level has exactly one node per triangle and every other level `L` has
//! `n(L) = ⌈n(L+1)/2⌉` nodes, so all leaves sit on the lowest level and every inner node has one
//! or two children (at most one node per level has a single child). Node `i` of a level has the
//! children `2i` and `2i + 1` (when that exists) of the next level, so the layout is implicit and
//! the tree is ready for a breadth-first, level-synchronous GPU traversal: all nodes are stored
//! level by level, root level first, in one flat array of 32-byte [`BalancedNode`]s.
//!
//! Siblings are made spatially coherent by ordering the triangles before pairing: a recursive
//! median split of the triangle centroids along the widest axis, where each split puts exactly
//! as many triangles on the left as the implicit tree's left subtree holds (a power of two), so
//! every node at every level covers a compact group of triangles.
//!
//! Boxes are exact: a leaf box is the `f32` minimum and maximum of its triangle's corners and an
//! inner box the union of its children's, with no arithmetic that could round.

use crate::aabb::Aabb;
use crate::mesh::TriMesh;
use bytemuck::{Pod, Zeroable};
use glam::{DVec3, Vec3};
use std::ops::Range;

/// The `first_child` value of a leaf node.
pub const NO_CHILD: u32 = u32::MAX;

/// One node of a [`BalancedTree`], laid out for GPU upload (32 bytes, no padding).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct BalancedNode {
    /// Lower corner of the box.
    pub min: [f32; 3],
    /// Index of the first child in the next level's node array ([`NO_CHILD`] for leaves).
    pub first_child: u32,
    /// Upper corner of the box.
    pub max: [f32; 3],
    /// For a leaf: the triangle index in the mesh. For an inner node: its number of children
    /// (1 or 2), which also follows from the level sizes.
    pub index: u32,
}

impl BalancedNode {
    /// The node's box.
    #[inline]
    pub fn aabb(&self) -> Aabb {
        Aabb::new(Vec3::from_array(self.min), Vec3::from_array(self.max))
    }

    /// The lower corner in `f64` (exact).
    #[inline]
    pub fn dmin(&self) -> DVec3 {
        Vec3::from_array(self.min).as_dvec3()
    }

    /// The upper corner in `f64` (exact).
    #[inline]
    pub fn dmax(&self) -> DVec3 {
        Vec3::from_array(self.max).as_dvec3()
    }

    fn from_aabb(b: Aabb, first_child: u32, index: u32) -> Self {
        Self {
            min: b.min.to_array(),
            first_child,
            max: b.max.to_array(),
            index,
        }
    }
}

/// A balanced AABB tree over the triangles of a mesh (see the module documentation).
#[derive(Clone, Debug, PartialEq)]
pub struct BalancedTree {
    nodes: Vec<BalancedNode>,
    /// `levels() + 1` entries: level `l` is `nodes[level_offsets[l]..level_offsets[l + 1]]`.
    level_offsets: Vec<usize>,
}

impl BalancedTree {
    /// Builds the tree over all triangles of `mesh` (a [`TriMesh`] has at least one triangle).
    pub fn build(mesh: &TriMesh) -> Self {
        let n = mesh.triangle_count();
        let mut centroids = Vec::with_capacity(n);
        let mut boxes = Vec::with_capacity(n);
        for t in 0..n {
            let tri = mesh.triangle(t);
            boxes.push(Aabb::from_points(tri));
            centroids.push((tri[0].as_dvec3() + tri[1].as_dvec3() + tri[2].as_dvec3()) / 3.0);
        }
        // Triangle counts fit in u32 (TriMesh guarantees it).
        let mut order: Vec<u32> = (0..n as u32).collect();
        median_order(&mut order, &centroids, n.next_power_of_two());

        // Bottom-up, one Vec per level, leaves first.
        let mut bottom_up: Vec<Vec<BalancedNode>> = vec![
            order
                .iter()
                .map(|&t| BalancedNode::from_aabb(boxes[t as usize], NO_CHILD, t))
                .collect(),
        ];
        while let Some(below) = bottom_up.last().filter(|l| l.len() > 1) {
            let level: Vec<BalancedNode> = below
                .chunks(2)
                .enumerate()
                .map(|(i, pair)| {
                    let b = pair.iter().fold(Aabb::EMPTY, |b, c| b.union(c.aabb()));
                    // i < n/2, so 2i fits in u32.
                    BalancedNode::from_aabb(b, 2 * i as u32, pair.len() as u32)
                })
                .collect();
            bottom_up.push(level);
        }
        let mut nodes = Vec::with_capacity(bottom_up.iter().map(Vec::len).sum());
        let mut level_offsets = Vec::with_capacity(bottom_up.len() + 1);
        for level in bottom_up.iter().rev() {
            level_offsets.push(nodes.len());
            nodes.extend_from_slice(level);
        }
        level_offsets.push(nodes.len());
        Self {
            nodes,
            level_offsets,
        }
    }

    /// Number of levels (1 for a single triangle).
    #[inline]
    pub fn levels(&self) -> usize {
        self.level_offsets.len() - 1
    }

    /// Index of the leaf level (`levels() - 1`); the root is level 0.
    #[inline]
    pub fn depth(&self) -> usize {
        self.levels() - 1
    }

    /// The nodes of level `l` (root level 0); empty when `l` is out of range.
    #[inline]
    pub fn level(&self, l: usize) -> &[BalancedNode] {
        if l >= self.levels() {
            return &[];
        }
        &self.nodes[self.level_offsets[l]..self.level_offsets[l + 1]]
    }

    /// Number of nodes on level `l` (0 when out of range).
    #[inline]
    pub fn level_len(&self, l: usize) -> usize {
        self.level(l).len()
    }

    /// The children of node `i` of `level`, as indices into `level(level + 1)`; empty for leaves
    /// and out-of-range arguments.
    #[inline]
    pub fn children(&self, level: usize, i: usize) -> Range<usize> {
        let below = self.level_len(level + 1);
        if i >= self.level_len(level) || below == 0 {
            return 0..0;
        }
        let first = 2 * i;
        first..(first + 2).min(below)
    }

    /// Node `i` of `level`, if it exists.
    #[inline]
    pub fn node(&self, level: usize, i: usize) -> Option<&BalancedNode> {
        self.level(level).get(i)
    }

    /// The root node.
    #[inline]
    pub fn root(&self) -> &BalancedNode {
        &self.nodes[0]
    }

    /// All nodes, level by level, root level first (the GPU buffer).
    #[inline]
    pub fn nodes(&self) -> &[BalancedNode] {
        &self.nodes
    }

    /// Start of each level in [`Self::nodes`], plus the total node count as the last entry.
    #[inline]
    pub fn level_offsets(&self) -> &[usize] {
        &self.level_offsets
    }

    /// Number of triangles (leaves).
    #[inline]
    pub fn triangle_count(&self) -> usize {
        self.level_len(self.depth())
    }

    /// The nodes as raw bytes for GPU upload.
    pub fn node_bytes(&self) -> &[u8] {
        bytemuck::cast_slice(&self.nodes)
    }
}

/// Orders `items` so that every aligned block of a power-of-two size is spatially compact:
/// `span` is the capacity (a power of two, at least `items.len()`) of the implicit subtree the
/// items fill from the left.
fn median_order(items: &mut [u32], centroids: &[DVec3], span: usize) {
    if items.len() <= 1 {
        return;
    }
    let half = span / 2;
    if items.len() <= half {
        // The right subtree is empty: the same items fill the left one.
        median_order(items, centroids, half);
        return;
    }
    let (lo, hi) = items
        .iter()
        .fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(lo, hi), &t| {
            let c = centroids[t as usize];
            (lo.min(c), hi.max(c))
        });
    let e = hi - lo;
    let axis = if e.x >= e.y && e.x >= e.z {
        0
    } else if e.y >= e.z {
        1
    } else {
        2
    };
    items.select_nth_unstable_by(half, |&p, &q| {
        centroids[p as usize][axis].total_cmp(&centroids[q as usize][axis])
    });
    let (left, right) = items.split_at_mut(half);
    median_order(left, centroids, half);
    median_order(right, centroids, half);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shapes;
    use rand::SeedableRng;
    use rand::seq::SliceRandom;
    use rand_chacha::ChaCha8Rng;

    fn check_structure(mesh: &TriMesh, tree: &BalancedTree) {
        let n = mesh.triangle_count();
        assert_eq!(tree.triangle_count(), n);
        assert_eq!(tree.level_len(0), 1);
        for l in 0..tree.depth() {
            assert_eq!(tree.level_len(l), tree.level_len(l + 1).div_ceil(2));
        }
        assert_eq!(*tree.level_offsets().last().unwrap(), tree.nodes().len());
        let mut single_child = 0;
        for l in 0..tree.depth() {
            for (i, node) in tree.level(l).iter().enumerate() {
                let ch = tree.children(l, i);
                assert!(!ch.is_empty() && ch.len() <= 2);
                assert_eq!(node.first_child as usize, ch.start);
                assert_eq!(node.index as usize, ch.len());
                single_child += usize::from(ch.len() == 1);
                let union = tree.level(l + 1)[ch]
                    .iter()
                    .fold(Aabb::EMPTY, |b, c| b.union(c.aabb()));
                assert_eq!(union, node.aabb(), "inner box is exactly the union");
            }
            assert!(
                single_child <= l + 1,
                "at most one single-child node per level"
            );
        }
        let leaves = tree.level(tree.depth());
        let mut seen = vec![false; n];
        for (i, leaf) in leaves.iter().enumerate() {
            assert_eq!(leaf.first_child, NO_CHILD);
            assert!(tree.children(tree.depth(), i).is_empty());
            let t = leaf.index as usize;
            assert!(!seen[t], "each triangle once");
            seen[t] = true;
            assert_eq!(leaf.aabb(), Aabb::from_points(mesh.triangle(t)));
        }
        assert!(tree.children(0, 1).is_empty());
        assert!(tree.children(tree.levels() + 3, 0).is_empty());
        assert!(tree.level(tree.levels()).is_empty());
    }

    #[test]
    fn node_layout_is_32_bytes() {
        assert_eq!(std::mem::size_of::<BalancedNode>(), 32);
        let tree = BalancedTree::build(&shapes::cuboid(Vec3::ONE).unwrap());
        assert_eq!(tree.node_bytes().len(), 32 * tree.nodes().len());
        let back: &[BalancedNode] = bytemuck::cast_slice(tree.node_bytes());
        assert_eq!(back, tree.nodes());
    }

    #[test]
    fn structure_for_many_sizes() {
        // Triangle counts 1..=40 cover every remainder pattern of the ceil rule.
        let sphere = shapes::icosphere(1.0, 1).unwrap();
        for n in 1..=40usize {
            let tris: Vec<[u32; 3]> = sphere.triangles()[..n].to_vec();
            let mesh = TriMesh::new(sphere.vertices().to_vec(), tris).unwrap();
            let tree = BalancedTree::build(&mesh);
            check_structure(&mesh, &tree);
            assert_eq!(
                tree.levels(),
                n.next_power_of_two().trailing_zeros() as usize + 1
            );
        }
        for mesh in [
            shapes::torus(1.0, 0.3, 24, 11).unwrap().into_mesh(),
            shapes::bumpy_sphere(1.0, 0.3, 4.0, 3, 7)
                .unwrap()
                .into_mesh(),
        ] {
            check_structure(&mesh, &BalancedTree::build(&mesh));
        }
    }

    #[test]
    fn huge_and_tiny_coordinates_keep_exact_boxes() {
        let v = vec![
            Vec3::new(3.0e37, -3.0e37, 1.0e-30),
            Vec3::new(-3.0e38, 1.0, 2.0),
            Vec3::new(1.0e-38, 3.0e38, -3.0e38),
            Vec3::new(0.0, 0.0, 0.0),
        ];
        let mesh = TriMesh::new(v, vec![[0, 1, 2], [1, 2, 3], [0, 2, 3]]).unwrap();
        let tree = BalancedTree::build(&mesh);
        check_structure(&mesh, &tree);
        assert_eq!(tree.root().aabb(), mesh.aabb());
    }

    #[test]
    fn siblings_are_coherent() {
        // Pairing in median order must give much tighter parent boxes than a random order.
        let mesh = shapes::icosphere(1.0, 3).unwrap().into_mesh();
        let tree = BalancedTree::build(&mesh);
        let area = |b: Aabb| {
            let s = b.size();
            s.x * s.y + s.y * s.z + s.z * s.x
        };
        let leaves = tree.level(tree.depth());
        let parents: f32 = tree
            .level(tree.depth() - 1)
            .iter()
            .map(|n| area(n.aabb()))
            .sum();
        let grand: f32 = tree
            .level(tree.depth() - 3)
            .iter()
            .map(|n| area(n.aabb()))
            .sum();
        let mut shuffled: Vec<BalancedNode> = leaves.to_vec();
        shuffled.shuffle(&mut ChaCha8Rng::seed_from_u64(3));
        let random_parents: f32 = shuffled
            .chunks(2)
            .map(|p| area(p.iter().fold(Aabb::EMPTY, |b, c| b.union(c.aabb()))))
            .sum();
        let random_grand: f32 = shuffled
            .chunks(8)
            .map(|p| area(p.iter().fold(Aabb::EMPTY, |b, c| b.union(c.aabb()))))
            .sum();
        assert!(
            parents < 0.7 * random_parents,
            "{parents} vs {random_parents}"
        );
        assert!(grand < 0.3 * random_grand, "{grand} vs {random_grand}");
    }
}

//! OBBTree: a binary hierarchy of oriented bounding boxes over a mesh's triangles, and the
//! simultaneous traversal of two such trees that reports the triangle pairs whose boxes overlap
//! down to the leaves.
//!
//! Implements Lin–Manocha 1996 (`lin-manocha-1996-interference-dynamic.md`), "Building an
//! OBBTree": top-down construction, each node's box fitted to its triangles' vertices with the
//! hull-covariance fit of [`Obb::fit`]; a node is split by the plane through the mean of its
//! triangles' centres perpendicular to the box's longest axis, falling back to the second
//! longest and then the shortest axis when one side would be empty. Where the paper declares such
//! a group indivisible, this build splits it at the median instead, so every leaf holds exactly
//! one triangle. Overlap of node boxes is the 15-axis test of [`obb_overlap`], which is
//! conservative, so the traversal never loses a pair whose leaf test would succeed.
//!
//! The nodes live in one flat array; the two children of an internal node are adjacent. The
//! traversal keeps an explicit stack and descends the larger of the two boxes.

use crate::aabb::Aabb;
use crate::mesh::TriMesh;
use crate::obb::{Obb, obb_overlap};
use crate::pose::DPose;
use glam::{DVec3, Vec3};

/// What a node holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObbNodeKind {
    /// A leaf holding one triangle of the mesh.
    Leaf {
        /// The triangle's index in the mesh.
        triangle: u32,
    },
    /// An internal node; its children are nodes `left` and `left + 1`.
    Internal {
        /// Index of the first child.
        left: u32,
    },
}

/// One node of an [`ObbTree`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ObbNode {
    /// A box holding every vertex of every triangle below the node.
    pub obb: Obb,
    /// Leaf or internal.
    pub kind: ObbNodeKind,
}

/// A hierarchy of oriented bounding boxes over a mesh's triangles (the root is node 0).
#[derive(Clone, Debug, PartialEq)]
pub struct ObbTree {
    nodes: Vec<ObbNode>,
    triangle_count: usize,
}

/// A box that overlaps everything; only used if fitting fails, which it cannot for a validated
/// mesh (finite, non-empty).
const EVERYWHERE: Obb = Obb {
    center: Vec3::ZERO,
    axes: [Vec3::X, Vec3::Y, Vec3::Z],
    half_extents: Vec3::splat(f32::MAX),
};

impl ObbTree {
    /// Builds the tree top-down over all triangles of `mesh` (`2n − 1` nodes for `n`
    /// triangles, one triangle per leaf).
    pub fn build(mesh: &TriMesh) -> Self {
        let tris = mesh.triangles();
        let vertices = mesh.vertices();
        let centroids: Vec<DVec3> = (0..tris.len())
            .map(|t| {
                let [a, b, c] = mesh.triangle(t).map(Vec3::as_dvec3);
                (a + b + c) / 3.0
            })
            .collect();
        let mut order: Vec<u32> = (0..tris.len() as u32).collect();
        let placeholder = ObbNode {
            obb: EVERYWHERE,
            kind: ObbNodeKind::Leaf { triangle: 0 },
        };
        let mut nodes = Vec::with_capacity(2 * tris.len());
        nodes.push(placeholder);
        let mut work = vec![(0usize, 0usize, tris.len())];
        let mut ids: Vec<u32> = Vec::new();
        let mut points: Vec<Vec3> = Vec::new();
        while let Some((node, start, end)) = work.pop() {
            let group = &mut order[start..end];
            ids.clear();
            ids.extend(group.iter().flat_map(|&t| tris[t as usize]));
            ids.sort_unstable();
            ids.dedup();
            points.clear();
            points.extend(ids.iter().map(|&i| vertices[i as usize]));
            let obb = Obb::fit(&points)
                .ok()
                .or_else(|| Obb::from_aabb(&Aabb::from_points(points.iter().copied())))
                .unwrap_or(EVERYWHERE);
            if group.len() == 1 {
                nodes[node] = ObbNode {
                    obb,
                    kind: ObbNodeKind::Leaf { triangle: group[0] },
                };
                continue;
            }
            let mid = split(group, &centroids, &obb);
            let left = nodes.len();
            nodes.push(placeholder);
            nodes.push(placeholder);
            nodes[node] = ObbNode {
                obb,
                kind: ObbNodeKind::Internal { left: left as u32 },
            };
            work.push((left + 1, start + mid, end));
            work.push((left, start, start + mid));
        }
        Self {
            nodes,
            triangle_count: tris.len(),
        }
    }

    /// The nodes; node 0 is the root.
    pub fn nodes(&self) -> &[ObbNode] {
        &self.nodes
    }

    /// The root node.
    pub fn root(&self) -> &ObbNode {
        &self.nodes[0]
    }

    /// Number of triangles (leaves).
    pub fn triangle_count(&self) -> usize {
        self.triangle_count
    }

    /// The number of nodes on the longest root-to-leaf path.
    pub fn depth(&self) -> usize {
        let mut deepest = 0;
        let mut stack = vec![(0u32, 1usize)];
        while let Some((n, d)) = stack.pop() {
            deepest = deepest.max(d);
            if let ObbNodeKind::Internal { left } = self.nodes[n as usize].kind {
                stack.push((left, d + 1));
                stack.push((left + 1, d + 1));
            }
        }
        deepest
    }

    /// Traverses this tree (mesh A) against `other` (mesh B, placed in A's frame by `b_to_a`)
    /// and returns the first triangle pair `(a, b)` whose boxes overlap all the way down and for
    /// which `leaf(a, b)` returns `true`, or `None`.
    pub fn first_hit(
        &self,
        other: &ObbTree,
        b_to_a: &DPose,
        mut leaf: impl FnMut(u32, u32) -> bool,
    ) -> Option<(u32, u32)> {
        let mut out = Vec::new();
        self.traverse(other, b_to_a, &mut leaf, true, &mut out);
        out.first().copied()
    }

    /// Every triangle pair `(a, b)` whose boxes overlap all the way down and for which
    /// `leaf(a, b)` returns `true`, sorted. `leaf` is called once per candidate pair.
    pub fn all_pairs(
        &self,
        other: &ObbTree,
        b_to_a: &DPose,
        mut leaf: impl FnMut(u32, u32) -> bool,
    ) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        self.traverse(other, b_to_a, &mut leaf, false, &mut out);
        out.sort_unstable();
        out
    }

    fn traverse<F: FnMut(u32, u32) -> bool>(
        &self,
        other: &ObbTree,
        b_to_a: &DPose,
        leaf: &mut F,
        first_only: bool,
        out: &mut Vec<(u32, u32)>,
    ) {
        let mut stack: Vec<(u32, u32)> = Vec::with_capacity(64);
        stack.push((0, 0));
        while let Some((ia, ib)) = stack.pop() {
            let (na, nb) = (&self.nodes[ia as usize], &other.nodes[ib as usize]);
            if !obb_overlap(&na.obb, &nb.obb, b_to_a) {
                continue;
            }
            match (na.kind, nb.kind) {
                (ObbNodeKind::Leaf { triangle: ta }, ObbNodeKind::Leaf { triangle: tb }) => {
                    if leaf(ta, tb) {
                        out.push((ta, tb));
                        if first_only {
                            return;
                        }
                    }
                }
                (ObbNodeKind::Internal { left }, ObbNodeKind::Leaf { .. }) => {
                    stack.push((left + 1, ib));
                    stack.push((left, ib));
                }
                (ObbNodeKind::Leaf { .. }, ObbNodeKind::Internal { left }) => {
                    stack.push((ia, left + 1));
                    stack.push((ia, left));
                }
                (ObbNodeKind::Internal { left: la }, ObbNodeKind::Internal { left: lb }) => {
                    let size = |o: &Obb| o.half_extents.length_squared();
                    if size(&na.obb) >= size(&nb.obb) {
                        stack.push((la + 1, ib));
                        stack.push((la, ib));
                    } else {
                        stack.push((ia, lb + 1));
                        stack.push((ia, lb));
                    }
                }
            }
        }
    }
}

/// Reorders `group` (at least two triangles) into two non-empty halves and returns the size of
/// the first: split by centroid at the mean along the box's axes, longest first; the median
/// along the longest axis when no axis separates.
fn split(group: &mut [u32], centroids: &[DVec3], obb: &Obb) -> usize {
    let n = group.len();
    let mean = group.iter().map(|&t| centroids[t as usize]).sum::<DVec3>() / n as f64;
    let h = obb.half_extents;
    let mut axes = [0usize, 1, 2];
    axes.sort_by(|&i, &j| h[j].total_cmp(&h[i]));
    for &i in &axes {
        let axis = obb.axes[i].as_dvec3();
        let below = |t: u32| (centroids[t as usize] - mean).dot(axis) < 0.0;
        let mut k = 0;
        for j in 0..n {
            if below(group[j]) {
                group.swap(j, k);
                k += 1;
            }
        }
        if k > 0 && k < n {
            return k;
        }
    }
    let axis = obb.axes[axes[0]].as_dvec3();
    group.sort_unstable_by(|&s, &t| {
        let (ps, pt) = (
            centroids[s as usize].dot(axis),
            centroids[t as usize].dot(axis),
        );
        ps.total_cmp(&pt).then(s.cmp(&t))
    });
    n / 2
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shapes;
    use glam::{DMat3, DQuat};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Triangle corners in A's frame, in `f64`: A's as they are, B's through `DPose`.
    fn corners(mesh: &TriMesh, pose: &DPose) -> Vec<[DVec3; 3]> {
        let v: Vec<DVec3> = mesh
            .vertices()
            .iter()
            .map(|&p| pose.transform_point(p))
            .collect();
        mesh.triangles()
            .iter()
            .map(|t| t.map(|i| v[i as usize]))
            .collect()
    }

    /// Closed triangle–triangle intersection by the separating-axis theorem in `f64`: the two
    /// normals, the nine edge-edge cross products and the six in-plane edge normals (which settle
    /// the coplanar case). Touching counts as intersecting.
    fn triangles_meet(a: &[DVec3; 3], b: &[DVec3; 3]) -> bool {
        let ea = [a[1] - a[0], a[2] - a[1], a[0] - a[2]];
        let eb = [b[1] - b[0], b[2] - b[1], b[0] - b[2]];
        let (na, nb) = (ea[0].cross(ea[1]), eb[0].cross(eb[1]));
        let mut axes = vec![na, nb];
        for i in 0..3 {
            axes.push(na.cross(ea[i]));
            axes.push(nb.cross(eb[i]));
            axes.extend(eb.iter().map(|e| ea[i].cross(*e)));
        }
        let span = |t: &[DVec3; 3], l: DVec3| {
            let d = t.map(|p| p.dot(l));
            (d[0].min(d[1]).min(d[2]), d[0].max(d[1]).max(d[2]))
        };
        axes.iter().filter(|l| **l != DVec3::ZERO).all(|&l| {
            let ((a0, a1), (b0, b1)) = (span(a, l), span(b, l));
            a1 >= b0 && b1 >= a0
        })
    }

    /// The triangle-box predicate the brief suggested (triangle AABBs overlap) is looser than
    /// the geometry the node boxes bound, so an OBB tree may rightly prune pairs it accepts;
    /// it is used only to check that the tree's output is a subset of brute force.
    fn boxes_touch(a: &[DVec3; 3], b: &[DVec3; 3]) -> bool {
        let lo = |t: &[DVec3; 3]| t[0].min(t[1]).min(t[2]);
        let hi = |t: &[DVec3; 3]| t[0].max(t[1]).max(t[2]);
        lo(a).cmple(hi(b)).all() && lo(b).cmple(hi(a)).all()
    }

    fn brute_force(
        ca: &[[DVec3; 3]],
        cb: &[[DVec3; 3]],
        pred: fn(&[DVec3; 3], &[DVec3; 3]) -> bool,
    ) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        for (i, x) in ca.iter().enumerate() {
            for (j, y) in cb.iter().enumerate() {
                if pred(x, y) {
                    out.push((i as u32, j as u32));
                }
            }
        }
        out
    }

    /// Runs both traversals against brute force with the exact-intersection leaf predicate;
    /// returns (pairs, leaf tests).
    fn check(a: &TriMesh, b: &TriMesh, ta: &ObbTree, tb: &ObbTree, pose: &DPose) -> (usize, usize) {
        let (ca, cb) = (corners(a, &DPose::IDENTITY), corners(b, pose));
        let mut calls = 0;
        let pairs = ta.all_pairs(tb, pose, |i, j| {
            calls += 1;
            triangles_meet(&ca[i as usize], &cb[j as usize])
        });
        let expected = brute_force(&ca, &cb, triangles_meet);
        assert_eq!(
            pairs, expected,
            "tree pairs differ from brute force under {pose:?}"
        );
        let first = ta.first_hit(tb, pose, |i, j| {
            triangles_meet(&ca[i as usize], &cb[j as usize])
        });
        match first {
            Some(p) => assert!(expected.binary_search(&p).is_ok()),
            None => assert!(expected.is_empty()),
        }
        // With the looser box predicate the tree returns a subset of brute force, and every
        // pair it drops is a pair of disjoint triangles.
        let loose = ta.all_pairs(tb, pose, |i, j| {
            boxes_touch(&ca[i as usize], &cb[j as usize])
        });
        let loose_all = brute_force(&ca, &cb, boxes_touch);
        let mut k = 0;
        for p in &loose_all {
            if loose.get(k) == Some(p) {
                k += 1;
            } else {
                assert!(!triangles_meet(&ca[p.0 as usize], &cb[p.1 as usize]));
            }
        }
        assert_eq!(k, loose.len(), "tree pairs not a subset of brute force");
        (pairs.len(), calls)
    }

    fn check_structure(mesh: &TriMesh, tree: &ObbTree) {
        let n = mesh.triangle_count();
        assert_eq!(tree.nodes().len(), 2 * n - 1);
        assert_eq!(tree.triangle_count(), n);
        let mut seen = vec![0; n];
        // Walk down, checking each node's box holds every vertex below it.
        let mut stack = vec![0u32];
        let mut below: Vec<Vec<u32>> = vec![Vec::new(); tree.nodes().len()];
        let mut post = Vec::new();
        while let Some(i) = stack.pop() {
            post.push(i);
            if let ObbNodeKind::Internal { left } = tree.nodes()[i as usize].kind {
                assert!(left > i && (left as usize + 1) < tree.nodes().len());
                stack.push(left);
                stack.push(left + 1);
            }
        }
        assert_eq!(post.len(), tree.nodes().len(), "every node reachable once");
        for &i in post.iter().rev() {
            let node = tree.nodes()[i as usize];
            below[i as usize] = match node.kind {
                ObbNodeKind::Leaf { triangle } => {
                    seen[triangle as usize] += 1;
                    vec![triangle]
                }
                ObbNodeKind::Internal { left } => {
                    let mut v = below[left as usize].clone();
                    v.extend_from_slice(&below[left as usize + 1]);
                    v
                }
            };
            for &t in &below[i as usize] {
                for p in mesh.triangle(t as usize) {
                    assert!(node.obb.contains_point(p), "node {i} misses a vertex");
                }
            }
        }
        assert!(
            seen.iter().all(|&c| c == 1),
            "each triangle in exactly one leaf"
        );
    }

    fn random_pose(rng: &mut ChaCha8Rng, spread: f64) -> DPose {
        let axis = DVec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        )
        .normalize_or(DVec3::X);
        DPose {
            rotation: DMat3::from_quat(DQuat::from_axis_angle(axis, rng.random_range(0.0..6.3))),
            translation: DVec3::new(
                rng.random_range(-spread..spread),
                rng.random_range(-spread..spread),
                rng.random_range(-spread..spread),
            ),
        }
    }

    fn meshes() -> Vec<TriMesh> {
        vec![
            shapes::icosphere(1.0, 2).unwrap().into_mesh(),
            shapes::torus(1.0, 0.35, 16, 8).unwrap().into_mesh(),
            shapes::bumpy_sphere(1.0, 0.3, 4.0, 2, 7)
                .unwrap()
                .into_mesh(),
            shapes::cuboid(Vec3::new(1.0, 0.5, 0.7))
                .unwrap()
                .into_mesh(),
            shapes::subdivided_cuboid(Vec3::new(0.8, 0.6, 0.4), 3)
                .unwrap()
                .into_mesh(),
        ]
    }

    #[test]
    fn structure_and_containment() {
        for mesh in meshes() {
            let tree = ObbTree::build(&mesh);
            check_structure(&mesh, &tree);
            assert!(tree.depth() <= 4 * (mesh.triangle_count() as f64).log2().ceil() as usize + 2);
        }
        // A single triangle, and a soup of identical triangles (no axis separates them).
        let one = TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2]]).unwrap();
        check_structure(&one, &ObbTree::build(&one));
        let same = TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![[0, 1, 2]; 9]).unwrap();
        let tree = ObbTree::build(&same);
        check_structure(&same, &tree);
        let pairs = tree.all_pairs(&tree, &DPose::IDENTITY, |_, _| true);
        assert_eq!(pairs.len(), 81);
    }

    #[test]
    fn random_poses_match_brute_force() {
        let mut rng = ChaCha8Rng::seed_from_u64(20);
        let meshes = meshes();
        let trees: Vec<ObbTree> = meshes.iter().map(ObbTree::build).collect();
        let (mut hits, mut misses) = (0, 0);
        for ia in 0..meshes.len() {
            for ib in 0..meshes.len() {
                for _ in 0..6 {
                    let pose = random_pose(&mut rng, 2.0);
                    let (pairs, calls) =
                        check(&meshes[ia], &meshes[ib], &trees[ia], &trees[ib], &pose);
                    if pairs > 0 {
                        hits += 1;
                    } else {
                        misses += 1;
                    }
                    // The boxes must prune: far fewer leaf tests than all pairs.
                    let all = meshes[ia].triangle_count() * meshes[ib].triangle_count();
                    if all > 10_000 {
                        assert!(calls * 4 < all, "{calls} leaf tests of {all}");
                    }
                }
            }
        }
        assert!(hits > 40 && misses > 10, "{hits} {misses}");
    }

    #[test]
    fn touching_and_identical_poses() {
        // Identical pose: every triangle meets itself and its neighbours.
        for mesh in meshes() {
            let tree = ObbTree::build(&mesh);
            let (pairs, _) = check(&mesh, &mesh, &tree, &tree, &DPose::IDENTITY);
            assert!(pairs >= mesh.triangle_count());
        }
        // Face contact between boxes, exactly: translation by the sum of half extents, and an
        // exact quarter turn (a permutation matrix) before it.
        let a = shapes::subdivided_cuboid(Vec3::new(0.5, 0.25, 0.75), 2)
            .unwrap()
            .into_mesh();
        let b = shapes::cuboid(Vec3::new(0.25, 0.5, 0.125))
            .unwrap()
            .into_mesh();
        let (ta, tb) = (ObbTree::build(&a), ObbTree::build(&b));
        let quarter = DMat3::from_cols(DVec3::X, DVec3::Z, -DVec3::Y);
        for (rotation, dx) in [
            (DMat3::IDENTITY, 0.75),
            (quarter, 0.75),
            (quarter, 0.75 + 1e-9),
        ] {
            for shift in [0.0, 0.1, 0.2] {
                let pose = DPose {
                    rotation,
                    translation: DVec3::new(dx, shift, -shift),
                };
                let (pairs, _) = check(&a, &b, &ta, &tb, &pose);
                assert_eq!(pairs > 0, dx == 0.75, "touching faces at dx = {dx}");
            }
        }
        // Edge contact along a line, and vertex contact.
        let pose = DPose {
            rotation: DMat3::IDENTITY,
            translation: DVec3::new(0.75, 0.75, 0.0),
        };
        assert!(check(&a, &b, &ta, &tb, &pose).0 > 0);
        let pose = DPose {
            rotation: DMat3::IDENTITY,
            translation: DVec3::new(0.75, 0.75, 0.875),
        };
        assert!(check(&a, &b, &ta, &tb, &pose).0 > 0);
    }

    #[test]
    fn nested_and_far_from_the_origin() {
        let mut rng = ChaCha8Rng::seed_from_u64(21);
        // A small sphere deep inside a torus-free big sphere: no triangle boxes meet.
        let big = shapes::icosphere(3.0, 2).unwrap().into_mesh();
        let small = shapes::bumpy_sphere(0.5, 0.2, 3.0, 2, 3)
            .unwrap()
            .into_mesh();
        let (tbig, tsmall) = (ObbTree::build(&big), ObbTree::build(&small));
        let (pairs, _) = check(&big, &small, &tbig, &tsmall, &random_pose(&mut rng, 0.3));
        assert_eq!(pairs, 0);
        // Both meshes a million units from the origin.
        let offset = crate::pose::Pose::from_translation(Vec3::new(1.0e6, -2.0e6, 5.0e5));
        let a = shapes::torus(1.0, 0.35, 16, 8)
            .unwrap()
            .transformed(&offset);
        let b = shapes::icosphere(0.8, 2).unwrap().transformed(&offset);
        let (ta, tb) = (ObbTree::build(&a), ObbTree::build(&b));
        check_structure(&a, &ta);
        for _ in 0..10 {
            let local = random_pose(&mut rng, 1.5);
            // b_to_a = T(offset) · local · T(−offset)
            let o = DVec3::new(1.0e6, -2.0e6, 5.0e5);
            let pose = DPose {
                rotation: local.rotation,
                translation: o + local.translation - local.rotation * o,
            };
            check(&a, &b, &ta, &tb, &pose);
        }
    }

    #[test]
    #[ignore = "timing; run with --release -- --ignored --nocapture"]
    fn build_time_20k_sphere() {
        let mesh = shapes::icosphere(1.0, 5).unwrap().into_mesh();
        let start = std::time::Instant::now();
        let tree = ObbTree::build(&mesh);
        let build = start.elapsed();
        let pose = DPose {
            rotation: DMat3::from_rotation_y(0.3),
            translation: DVec3::new(1.5, 0.2, 0.1),
        };
        let start = std::time::Instant::now();
        let mut calls = 0u64;
        let pairs = tree.all_pairs(&tree, &pose, |_, _| {
            calls += 1;
            true
        });
        let query = start.elapsed();
        println!(
            "{} triangles: build {build:?}, depth {}; all_pairs vs itself: {} leaf pairs in {query:?}",
            mesh.triangle_count(),
            tree.depth(),
            pairs.len()
        );
        assert_eq!(tree.nodes().len(), 2 * mesh.triangle_count() - 1);
        assert_eq!(calls as usize, pairs.len());
    }
}

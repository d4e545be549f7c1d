//! Per-solid data the exact volume reuses across queries: for every triangle its three edge
//! ids and its three neighbours across them, for every edge its two faces, and the surface's
//! shells (connected components through edges) with their volume and bounding box.

use crate::topology::Solid;
use glam::{DMat3, DVec3, Vec3};

/// The edge-adjacency structure of a closed solid, built once per solid
/// ([`SurfaceTopology::new`]) and shared by every [`super::ExactVolume`] that uses the solid.
#[derive(Clone, Debug)]
pub struct SurfaceTopology {
    /// For triangle `t`, the edge ids of its edges `k → k+1` (`k = 0, 1, 2`).
    pub(crate) tri_edges: Vec<[u32; 3]>,
    /// For triangle `t`, the triangle across its edge `k → k+1`.
    pub(crate) tri_neighbours: Vec<[u32; 3]>,
    /// For edge `e`, its vertices (smaller index first) and its two triangles.
    pub(crate) edge_vertices: Vec<[u32; 2]>,
    /// For edge `e`, its owner: the first of its two triangles.
    pub(crate) edge_owner: Vec<u32>,
    /// For triangle `t`, its shell.
    pub(crate) tri_shell: Vec<u32>,
    /// For triangle `t`, its own [`TriangleSums`] (what a flood fill adds per triangle).
    pub(crate) tri_sums: Vec<TriangleSums>,
    /// The shells.
    pub(crate) shells: Vec<Shell>,
    /// Triangles ordered by shell (`shells[i].triangles` indexes into it).
    pub(crate) shell_triangles: Vec<u32>,
    vertex_count: usize,
}

/// One connected component of a surface.
#[derive(Clone, Debug)]
pub(crate) struct Shell {
    /// A vertex of the shell.
    pub(crate) vertex: u32,
    /// Its triangles: a range of `shell_triangles`.
    pub(crate) triangles: std::ops::Range<usize>,
    /// Its bounding box `[lo, hi]`, in the solid's frame.
    pub(crate) bounds: [DVec3; 2],
    /// Sums over its triangles, in the solid's frame: see [`TriangleSums`].
    pub(crate) sums: TriangleSums,
}

/// Sums over whole triangles, in the frame of their mesh: vector area `Σ s`, cone volume from
/// the frame's origin `Σ ⅓ p₀·s`, moment `Σ c × s` (`c` the centroid, so `c × s = ∫ x × n dA`),
/// area `Σ |s|` and area-weighted centroid sum `Σ |s| c`; for the first moment of the volume,
/// the cone volumes times their bases' centroids `Σ (⅓ p₀·s) c` (a cone's centroid is ¾ of the
/// way from its apex to its base's centroid) and `Σ c sᵀ` (what moving the apex adds, see
/// [`TriangleSums::placed_first_moment`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct TriangleSums {
    pub(crate) area: DVec3,
    pub(crate) volume: f64,
    pub(crate) moment: DVec3,
    pub(crate) abs_area: f64,
    pub(crate) weighted_centroid: DVec3,
    pub(crate) first_moment: DVec3,
    pub(crate) centroid_area: DMat3,
}

impl Default for TriangleSums {
    /// All zero (glam's `DMat3::default()` is the identity, not zero).
    fn default() -> Self {
        Self {
            area: DVec3::ZERO,
            volume: 0.0,
            moment: DVec3::ZERO,
            abs_area: 0.0,
            weighted_centroid: DVec3::ZERO,
            first_moment: DVec3::ZERO,
            centroid_area: DMat3::ZERO,
        }
    }
}

impl TriangleSums {
    /// The sums of the one triangle `p`.
    #[inline]
    pub(crate) fn of(p: [Vec3; 3]) -> Self {
        let mut s = Self::default();
        s.add(p);
        s
    }

    /// Adds another sum.
    #[inline]
    pub(crate) fn merge(&mut self, o: &TriangleSums) {
        self.area += o.area;
        self.volume += o.volume;
        self.moment += o.moment;
        self.abs_area += o.abs_area;
        self.weighted_centroid += o.weighted_centroid;
        self.first_moment += o.first_moment;
        self.centroid_area += o.centroid_area;
    }

    /// Adds the triangle `p` (in the mesh's frame).
    #[inline]
    pub(crate) fn add(&mut self, p: [Vec3; 3]) {
        let [p0, p1, p2] = p.map(Vec3::as_dvec3);
        let s = 0.5 * (p1 - p0).cross(p2 - p0);
        let c = (p0 + p1 + p2) / 3.0;
        let a = s.length();
        self.area += s;
        self.volume += p0.dot(s) / 3.0;
        self.moment += c.cross(s);
        self.abs_area += a;
        self.weighted_centroid += c * a;
        let v = p0.dot(s) / 3.0;
        self.first_moment += v * c;
        self.centroid_area += DMat3::from_cols(c * s.x, c * s.y, c * s.z);
    }

    /// The first moment `∫ (x − o) dV` of the cones from `o` over these triangles placed by
    /// `x ↦ r x + t`: per triangle `v' ¾ (c' − o)` with `v' = v + ⅓ d·(r s)`, `c' = r c + t`,
    /// `d = t − o`, which sums to `¾ (r Σ v c + d V' + ⅓ r (Σ c sᵀ) rᵀ d)` with `V'` the placed
    /// cone volume `Σ v + ⅓ d·(r Σ s)` (`placed_volume`, which the caller has already).
    pub(crate) fn placed_first_moment(
        &self,
        r: DMat3,
        t: DVec3,
        o: DVec3,
        placed_volume: f64,
    ) -> DVec3 {
        let d = t - o;
        0.75 * (r * self.first_moment
            + d * placed_volume
            + r * (self.centroid_area * (r.transpose() * d)) / 3.0)
    }
}

impl SurfaceTopology {
    /// Builds the adjacency of a closed solid (every edge has exactly two triangles; a
    /// [`Solid`] guarantees it).
    pub fn new(solid: &Solid) -> Self {
        let topo = solid.topology();
        let tris = solid.triangles();
        let n = tris.len();
        let mut tri_edges = vec![[u32::MAX; 3]; n];
        let mut tri_neighbours = vec![[u32::MAX; 3]; n];
        let mut edge_vertices = Vec::with_capacity(topo.edges.len());
        let mut edge_owner = Vec::with_capacity(topo.edges.len());
        // Topology::edges is sorted by vertex pair: find each triangle edge by binary search.
        for edge in &topo.edges {
            edge_vertices.push(edge.vertices);
            edge_owner.push(edge.faces[0]);
        }
        for (t, tri) in tris.iter().enumerate() {
            for k in 0..3 {
                let (a, b) = (tri[k], tri[(k + 1) % 3]);
                let key = [a.min(b), a.max(b)];
                if let Ok(e) = topo.edges.binary_search_by(|x| x.vertices.cmp(&key)) {
                    tri_edges[t][k] = e as u32;
                    let f = topo.edges[e].faces;
                    tri_neighbours[t][k] = if f[0] == t as u32 { f[1] } else { f[0] };
                }
            }
        }
        // Shells: connected components of triangles through edges.
        let mut tri_shell = vec![u32::MAX; n];
        let mut shells = Vec::new();
        let mut shell_triangles = Vec::with_capacity(n);
        for seed in 0..n {
            if tri_shell[seed] != u32::MAX {
                continue;
            }
            let id = shells.len() as u32;
            let start = shell_triangles.len();
            tri_shell[seed] = id;
            shell_triangles.push(seed as u32);
            let mut i = start;
            while i < shell_triangles.len() {
                let t = shell_triangles[i] as usize;
                i += 1;
                for &nb in &tri_neighbours[t] {
                    if nb != u32::MAX && tri_shell[nb as usize] == u32::MAX {
                        tri_shell[nb as usize] = id;
                        shell_triangles.push(nb);
                    }
                }
            }
            let range = start..shell_triangles.len();
            let mut sums = TriangleSums::default();
            let mut bounds = [DVec3::INFINITY, DVec3::NEG_INFINITY];
            for &t in &shell_triangles[range.clone()] {
                let p = solid.triangle(t as usize);
                sums.add(p);
                for v in p {
                    bounds = [bounds[0].min(v.as_dvec3()), bounds[1].max(v.as_dvec3())];
                }
            }
            shells.push(Shell {
                vertex: tris[seed][0],
                triangles: range,
                bounds,
                sums,
            });
        }
        let tri_sums = (0..n)
            .map(|t| TriangleSums::of(solid.triangle(t)))
            .collect();
        Self {
            tri_edges,
            tri_neighbours,
            tri_sums,
            edge_vertices,
            edge_owner,
            tri_shell,
            shells,
            shell_triangles,
            vertex_count: solid.vertices().len(),
        }
    }

    /// Whether this topology was built for a solid with these counts.
    pub fn fits(&self, solid: &Solid) -> bool {
        self.tri_edges.len() == solid.triangle_count()
            && self.vertex_count == solid.vertices().len()
    }

    /// Number of triangles.
    pub fn triangle_count(&self) -> usize {
        self.tri_edges.len()
    }

    /// Number of edges.
    pub fn edge_count(&self) -> usize {
        self.edge_vertices.len()
    }

    /// Number of shells (connected components through edges).
    pub fn shell_count(&self) -> usize {
        self.shells.len()
    }
}

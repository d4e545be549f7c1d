//! Mesh topology: edge adjacency, boundary and non-manifold edges, orientation consistency,
//! closedness; and [`Solid`], the closed and consistently oriented mesh that the interference,
//! containment and volume methods require.

use crate::error::MeshError;
use crate::mesh::TriMesh;
use glam::DVec3;
use serde::Serialize;

/// An undirected edge and the triangles that use it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Edge {
    /// The edge's vertices, smaller index first.
    pub vertices: [u32; 2],
    /// The first two triangles using the edge (`u32::MAX` where there is none).
    pub faces: [u32; 2],
    /// How many triangles use the edge (2 for a closed manifold).
    pub uses: u32,
}

/// What the topology check found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Topology {
    /// All undirected edges, sorted by vertex pair.
    pub edges: Vec<Edge>,
    /// Indices into `edges` of edges used by one triangle only.
    pub boundary_edges: Vec<usize>,
    /// Indices into `edges` of edges used by more than two triangles.
    pub non_manifold_edges: Vec<usize>,
    /// Indices into `edges` of edges whose two triangles traverse them in the same direction.
    pub inconsistent_edges: Vec<usize>,
    /// Signed volume (positive when triangles face outward).
    pub signed_volume: f64,
}

impl Topology {
    /// Computes the topology of a mesh (sort-based, `O(n log n)`).
    pub fn of(mesh: &TriMesh) -> Self {
        let mut directed: Vec<(u32, u32, u32, bool)> =
            Vec::with_capacity(mesh.triangle_count() * 3);
        for (t, tri) in mesh.triangles().iter().enumerate() {
            for k in 0..3 {
                let a = tri[k];
                let b = tri[(k + 1) % 3];
                if a == b {
                    continue;
                }
                directed.push((a.min(b), a.max(b), t as u32, a < b));
            }
        }
        directed.sort_unstable();
        let mut edges = Vec::new();
        let mut boundary_edges = Vec::new();
        let mut non_manifold_edges = Vec::new();
        let mut inconsistent_edges = Vec::new();
        let mut i = 0;
        while i < directed.len() {
            let (a, b, _, _) = directed[i];
            let mut j = i;
            while j < directed.len() && directed[j].0 == a && directed[j].1 == b {
                j += 1;
            }
            let group = &directed[i..j];
            let index = edges.len();
            let uses = group.len() as u32;
            edges.push(Edge {
                vertices: [a, b],
                faces: [group[0].2, group.get(1).map_or(u32::MAX, |g| g.2)],
                uses,
            });
            match uses {
                1 => boundary_edges.push(index),
                2 => {
                    if group[0].3 == group[1].3 {
                        inconsistent_edges.push(index);
                    }
                }
                _ => non_manifold_edges.push(index),
            }
            i = j;
        }
        Self {
            edges,
            boundary_edges,
            non_manifold_edges,
            inconsistent_edges,
            signed_volume: mesh.signed_volume(),
        }
    }

    /// Every edge is shared by exactly two triangles.
    pub fn is_closed(&self) -> bool {
        self.boundary_edges.is_empty() && self.non_manifold_edges.is_empty()
    }

    /// Neighbouring triangles agree on orientation across every two-triangle edge.
    pub fn is_consistently_oriented(&self) -> bool {
        self.inconsistent_edges.is_empty()
    }

    /// A one-line human summary.
    pub fn summary(&self) -> String {
        format!(
            "{} edges, {} boundary, {} non-manifold, {} with inconsistent orientation, signed volume {:.6}",
            self.edges.len(),
            self.boundary_edges.len(),
            self.non_manifold_edges.len(),
            self.inconsistent_edges.len(),
            self.signed_volume
        )
    }

    /// Why the mesh is not a solid, or `None` when it is one.
    pub fn solid_problem(&self, mesh: &TriMesh) -> Option<String> {
        let edge_text = |list: &[usize]| {
            let e = self.edges[list[0]];
            format!(
                "edge ({}, {}) of triangle {}",
                e.vertices[0], e.vertices[1], e.faces[0]
            )
        };
        if !self.boundary_edges.is_empty() {
            return Some(format!(
                "{} boundary edge(s), first {} ({})",
                self.boundary_edges.len(),
                edge_text(&self.boundary_edges),
                self.summary()
            ));
        }
        if !self.non_manifold_edges.is_empty() {
            return Some(format!(
                "{} non-manifold edge(s), first {} ({})",
                self.non_manifold_edges.len(),
                edge_text(&self.non_manifold_edges),
                self.summary()
            ));
        }
        if !self.inconsistent_edges.is_empty() {
            return Some(format!(
                "{} edge(s) with inconsistent triangle orientation, first {} ({})",
                self.inconsistent_edges.len(),
                edge_text(&self.inconsistent_edges),
                self.summary()
            ));
        }
        if self.signed_volume == 0.0 || !self.signed_volume.is_finite() {
            return Some(format!(
                "it encloses no volume ({} triangles)",
                mesh.triangle_count()
            ));
        }
        None
    }
}

/// The vertices of each connected component of a mesh's surface (components joined through
/// shared vertices), in index order; unused vertices are left out.
pub(crate) fn components(mesh: &TriMesh) -> Vec<Vec<u32>> {
    let n = mesh.vertices().len();
    let mut parent: Vec<u32> = (0..n as u32).collect();
    fn find(parent: &mut [u32], mut x: u32) -> u32 {
        while parent[x as usize] != x {
            let up = parent[parent[x as usize] as usize];
            parent[x as usize] = up;
            x = up;
        }
        x
    }
    let mut used = vec![false; n];
    for t in mesh.triangles() {
        for &v in t {
            used[v as usize] = true;
        }
        for k in 1..3 {
            let (a, b) = (find(&mut parent, t[0]), find(&mut parent, t[k]));
            if a != b {
                parent[a.max(b) as usize] = a.min(b);
            }
        }
    }
    let mut slot = vec![usize::MAX; n];
    let mut out: Vec<Vec<u32>> = Vec::new();
    for v in 0..n as u32 {
        if !used[v as usize] {
            continue;
        }
        let root = find(&mut parent, v) as usize;
        if slot[root] == usize::MAX {
            slot[root] = out.len();
            out.push(Vec::new());
        }
        out[slot[root]].push(v);
    }
    out
}

/// A closed, consistently oriented mesh whose triangles face outward: what the interference,
/// containment, volume and mass-property methods need.
#[derive(Clone, Debug)]
pub struct Solid {
    mesh: TriMesh,
    topology: Topology,
    reoriented: bool,
    /// The vertices of each connected surface component ([`components`]).
    components: Vec<Vec<u32>>,
    /// The mesh's box ([`TriMesh::aabb`]) in f64: it holds every vertex exactly.
    bounds: (DVec3, DVec3),
}

impl Solid {
    /// Checks that `mesh` is closed and consistently oriented. An inside-out mesh (negative
    /// volume) is accepted with its triangles flipped; [`Solid::was_reoriented`] says so.
    pub fn new(mesh: TriMesh) -> Result<Self, MeshError> {
        let topology = Topology::of(&mesh);
        if let Some(problem) = topology.solid_problem(&mesh) {
            return Err(MeshError::NotClosed(problem));
        }
        if topology.signed_volume < 0.0 {
            let mesh = mesh.flipped();
            let topology = Topology::of(&mesh);
            return Ok(Self::with(mesh, topology, true));
        }
        Ok(Self::with(mesh, topology, false))
    }

    fn with(mesh: TriMesh, topology: Topology, reoriented: bool) -> Self {
        let components = components(&mesh);
        let aabb = mesh.aabb();
        let bounds = (aabb.min.as_dvec3(), aabb.max.as_dvec3());
        Self {
            mesh,
            topology,
            reoriented,
            components,
            bounds,
        }
    }

    /// The vertices of each connected component of the surface (joined through shared
    /// vertices), in index order.
    pub(crate) fn components(&self) -> &[Vec<u32>] {
        &self.components
    }

    /// The mesh's box in f64: every vertex lies in it, exactly.
    pub(crate) fn bounds(&self) -> (DVec3, DVec3) {
        self.bounds
    }

    /// The surface.
    pub fn mesh(&self) -> &TriMesh {
        &self.mesh
    }

    /// Its topology (edges with adjacent faces).
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// Whether the input was inside-out and got flipped.
    pub fn was_reoriented(&self) -> bool {
        self.reoriented
    }

    /// Enclosed volume (positive).
    pub fn volume(&self) -> f64 {
        self.topology.signed_volume
    }

    /// Unwraps the mesh.
    pub fn into_mesh(self) -> TriMesh {
        self.mesh
    }
}

impl std::ops::Deref for Solid {
    type Target = TriMesh;
    fn deref(&self) -> &TriMesh {
        &self.mesh
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    fn tetra(tris: Vec<[u32; 3]>) -> TriMesh {
        TriMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::Z], tris).unwrap()
    }

    #[test]
    fn closed_tetrahedron_is_a_solid() {
        let mesh = tetra(vec![[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]);
        let topo = Topology::of(&mesh);
        assert_eq!(topo.edges.len(), 6);
        assert!(topo.is_closed() && topo.is_consistently_oriented());
        let solid = Solid::new(mesh.clone()).unwrap();
        assert!(!solid.was_reoriented());
        let inside_out = Solid::new(mesh.flipped()).unwrap();
        assert!(inside_out.was_reoriented());
        assert!((inside_out.volume() - 1.0 / 6.0).abs() < 1e-12);
    }

    #[test]
    fn open_and_inconsistent_meshes_are_refused_with_the_reason() {
        let open = tetra(vec![[0, 2, 1], [0, 1, 3], [0, 3, 2]]);
        let err = Solid::new(open).unwrap_err();
        assert!(
            matches!(&err, MeshError::NotClosed(s) if s.contains("3 boundary edge")),
            "{err}"
        );
        let inconsistent = tetra(vec![[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 3, 2]]);
        let err = Solid::new(inconsistent).unwrap_err();
        assert!(
            matches!(&err, MeshError::NotClosed(s) if s.contains("inconsistent")),
            "{err}"
        );
    }
}

//! Conversion between Bevy's `Mesh` asset and Interfere's `TriMesh`.
//!
//! Bevy meshes usually split vertices along UV and normal seams, which would make a closed solid
//! look open; [`trimesh_from_bevy`] therefore welds vertices with identical positions.

use bevy::asset::RenderAssetUsages;
use bevy::mesh::{Indices, Mesh, PrimitiveTopology, VertexAttributeValues};
use interfere_geometry::{MeshError, MeshOptions, TriMesh, ValidationReport};

/// How a `TriMesh` is shaded when turned into a Bevy mesh.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Shading {
    /// One normal per face (vertices duplicated per triangle): crisp facets.
    #[default]
    Flat,
    /// Angle-weighted vertex normals shared between faces.
    Smooth,
}

/// Why a Bevy mesh could not become a collider.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum MeshConversionError {
    /// Only triangle lists can be colliders.
    #[error("the mesh uses {0:?}; colliders need a triangle list")]
    Topology(String),
    /// No `Mesh::ATTRIBUTE_POSITION` of type `Float32x3`.
    #[error("the mesh has no Float32x3 position attribute")]
    NoPositions,
    /// The index count is not a multiple of three.
    #[error("the mesh has {0} indices, not a multiple of 3")]
    IndexCount(usize),
    /// The triangles do not form a valid mesh.
    #[error(transparent)]
    Invalid(#[from] MeshError),
}

/// Builds a Bevy render mesh from a `TriMesh`.
pub fn bevy_mesh_from_trimesh(mesh: &TriMesh, shading: Shading) -> Mesh {
    let usage = RenderAssetUsages::default();
    match shading {
        Shading::Flat => {
            let mut positions = Vec::with_capacity(mesh.triangle_count() * 3);
            let mut normals = Vec::with_capacity(mesh.triangle_count() * 3);
            for t in 0..mesh.triangle_count() {
                let n = mesh.face_normal(t).to_array();
                for p in mesh.triangle(t) {
                    positions.push(p.to_array());
                    normals.push(n);
                }
            }
            Mesh::new(PrimitiveTopology::TriangleList, usage)
                .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, positions)
                .with_inserted_attribute(Mesh::ATTRIBUTE_NORMAL, normals)
        }
        Shading::Smooth => {
            let positions: Vec<[f32; 3]> = mesh.vertices().iter().map(|v| v.to_array()).collect();
            let normals: Vec<[f32; 3]> =
                mesh.vertex_normals().iter().map(|v| v.to_array()).collect();
            let indices: Vec<u32> = mesh.triangles().iter().flatten().copied().collect();
            Mesh::new(PrimitiveTopology::TriangleList, usage)
                .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, positions)
                .with_inserted_attribute(Mesh::ATTRIBUTE_NORMAL, normals)
                .with_inserted_indices(Indices::U32(indices))
        }
    }
}

/// Reads a Bevy triangle-list mesh into a `TriMesh`, welding vertices with identical positions.
pub fn trimesh_from_bevy(mesh: &Mesh) -> Result<(TriMesh, ValidationReport), MeshConversionError> {
    if mesh.primitive_topology() != PrimitiveTopology::TriangleList {
        return Err(MeshConversionError::Topology(format!(
            "{:?}",
            mesh.primitive_topology()
        )));
    }
    let Some(VertexAttributeValues::Float32x3(positions)) =
        mesh.attribute(Mesh::ATTRIBUTE_POSITION)
    else {
        return Err(MeshConversionError::NoPositions);
    };
    let indices: Vec<u32> = match mesh.indices() {
        Some(Indices::U32(i)) => i.clone(),
        Some(Indices::U16(i)) => i.iter().map(|&x| x as u32).collect(),
        None => (0..positions.len() as u32).collect(),
    };
    if !indices.len().is_multiple_of(3) {
        return Err(MeshConversionError::IndexCount(indices.len()));
    }
    let vertices = positions.iter().map(|p| glam_vec3(*p)).collect();
    let triangles = indices
        .chunks_exact(3)
        .map(|c| [c[0], c[1], c[2]])
        .collect();
    let options = MeshOptions {
        weld_tolerance: Some(0.0),
        ..Default::default()
    };
    Ok(TriMesh::with_options(vertices, triangles, &options)?)
}

fn glam_vec3(p: [f32; 3]) -> interfere_geometry::glam::Vec3 {
    interfere_geometry::glam::Vec3::from_array(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use interfere_geometry::{Solid, shapes};

    #[test]
    fn round_trip_through_flat_shading_welds_back_to_a_solid() {
        let torus = shapes::torus(1.0, 0.3, 24, 12).unwrap();
        let bevy_mesh = bevy_mesh_from_trimesh(torus.mesh(), Shading::Flat);
        let (back, report) = trimesh_from_bevy(&bevy_mesh).unwrap();
        assert_eq!(back.triangle_count(), torus.triangle_count());
        assert_eq!(
            report.welded_vertices,
            torus.triangle_count() * 3 - torus.vertices().len()
        );
        let solid = Solid::new(back).unwrap();
        assert!((solid.volume() - torus.volume()).abs() < 1e-9);
    }

    #[test]
    fn non_triangle_meshes_are_refused() {
        let lines = Mesh::new(PrimitiveTopology::LineList, RenderAssetUsages::default());
        assert!(matches!(
            trimesh_from_bevy(&lines),
            Err(MeshConversionError::Topology(_))
        ));
        let empty = Mesh::new(
            PrimitiveTopology::TriangleList,
            RenderAssetUsages::default(),
        );
        assert_eq!(
            trimesh_from_bevy(&empty),
            Err(MeshConversionError::NoPositions)
        );
    }
}

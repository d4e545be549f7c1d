//! Typed errors for mesh construction, loading and the operations that need closed solids.

use std::path::PathBuf;
use thiserror::Error;

/// Why a mesh was refused.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum MeshError {
    /// No vertices or no triangles.
    #[error("the mesh is empty ({vertices} vertices, {triangles} triangles)")]
    Empty {
        /// Vertex count.
        vertices: usize,
        /// Triangle count.
        triangles: usize,
    },
    /// A triangle refers to a vertex that does not exist.
    #[error(
        "triangle {triangle} uses vertex index {index}, but the mesh has {vertex_count} vertices"
    )]
    IndexOutOfRange {
        /// The triangle's index.
        triangle: usize,
        /// The offending vertex index.
        index: u64,
        /// How many vertices there are.
        vertex_count: usize,
    },
    /// A vertex has a NaN or infinite coordinate.
    #[error("vertex {vertex} has a non-finite coordinate {value:?}")]
    NonFinite {
        /// The vertex index.
        vertex: usize,
        /// Its coordinates.
        value: [f32; 3],
    },
    /// A triangle has zero area (repeated vertex or collinear corners) and degenerate triangles
    /// were not to be dropped.
    #[error("triangle {triangle} is degenerate ({reason})")]
    Degenerate {
        /// The triangle's index.
        triangle: usize,
        /// Repeated index or collinear corners.
        reason: &'static str,
    },
    /// The operation needs a closed, consistently oriented solid.
    #[error("the mesh is not a closed solid: {0}")]
    NotClosed(String),
    /// Too many vertices or triangles for 32-bit indices.
    #[error("the mesh has {count} {what}, more than 32-bit indices allow")]
    TooLarge {
        /// Vertices or triangles.
        what: &'static str,
        /// How many.
        count: usize,
    },
}

/// Why a mesh file could not be loaded.
#[derive(Debug, Error)]
pub enum LoadError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file's extension is not one we read.
    #[error("{path}: unknown mesh format (expected .obj or .stl)")]
    UnknownFormat {
        /// The file.
        path: PathBuf,
    },
    /// The file could not be parsed.
    #[error("{path}: {reason}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What the parser said, with the line where it knows it.
        reason: String,
    },
    /// The file parsed, but the mesh in it is invalid.
    #[error("{path}: {source}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Why the mesh was refused.
        #[source]
        source: MeshError,
    },
}

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

/// Why a shape generator ([`crate::shapes`], [`crate::threads`]) refused its parameters.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum ShapeError {
    /// A parameter is outside the range the generator builds a valid solid for.
    #[error("{shape}: {parameter} = {value}: {reason}")]
    Parameter {
        /// The generator.
        shape: &'static str,
        /// The parameter (for vectors and specs, the component, e.g. `half_extents.y`).
        parameter: &'static str,
        /// Its value, as given.
        value: String,
        /// The range it breaks.
        reason: String,
    },
    /// The parameters ask for more triangles than [`crate::shapes::MAX_TRIANGLES`].
    #[error(
        "{shape}: the parameters ask for {triangles} triangles, more than the limit of {limit}"
    )]
    TooManyTriangles {
        /// The generator.
        shape: &'static str,
        /// How many triangles the parameters ask for.
        triangles: u128,
        /// The limit.
        limit: u64,
    },
    /// Every parameter is in range, but the solid cannot be represented in `f32`: a coordinate
    /// overflows, or rounding collapses a triangle (extreme ratios of the parameters).
    #[error("{shape}: the parameters give no valid solid in f32: {source}")]
    Mesh {
        /// The generator.
        shape: &'static str,
        /// What validation of the generated mesh found.
        #[source]
        source: MeshError,
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

/// Why a mesh file could not be written.
#[derive(Debug, Error)]
pub enum SaveError {
    /// The file could not be created or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file's extension is not one we write.
    #[error("{path}: unknown mesh format (expected .obj or .stl)")]
    UnknownFormat {
        /// The file.
        path: PathBuf,
    },
}

/// Why a sweep-and-prune request was refused.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum SapError {
    /// The proxy id was never issued or has been removed.
    #[error("unknown or removed proxy {0}")]
    UnknownProxy(u32),
    /// The box has a NaN coordinate or `min > max` on some axis.
    #[error("invalid box for sweep and prune: min {min:?}, max {max:?} (NaN or min > max)")]
    InvalidAabb {
        /// Lower corner.
        min: [f32; 3],
        /// Upper corner.
        max: [f32; 3],
    },
    /// More than 2^31 - 1 proxies.
    #[error("too many proxies (at most 2^31 - 1)")]
    TooManyProxies,
}

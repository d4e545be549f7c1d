//! Scene-file errors: every variant names the file, a field as a JSON path and, for a body,
//! its name.

use super::*;

/// The path that scene errors name for a scene that was not read from a file.
pub const MEMORY_SCENE: &str = "<memory>";

/// `" (body 'NAME')"` for errors about a body, nothing for the scene's own fields.
pub(super) fn body_label(body: &Option<String>) -> String {
    body.as_ref()
        .map(|b| format!(" (body '{b}')"))
        .unwrap_or_default()
}

/// Why a scene could not be read or built. Every variant names the scene file; those about a
/// field name it as a JSON path (`bodies[3].shape.icosphere.radius`) and, for a body, its name.
#[derive(Debug, thiserror::Error)]
pub enum SceneError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The scene file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The JSON is malformed or does not match the format.
    #[error("{path}: {field}: {message}")]
    Format {
        /// The scene file.
        path: PathBuf,
        /// The JSON path of the value at fault (`.` for the whole document).
        field: String,
        /// serde's message, with the line and column.
        message: String,
    },
    /// A value is out of range.
    #[error("{file}: {field}{}: {reason}", body_label(.body))]
    Invalid {
        /// The scene file.
        file: PathBuf,
        /// The JSON path of the value, e.g. `bodies[2].density`.
        field: String,
        /// The body's name, for a body's field.
        body: Option<String>,
        /// What is wrong.
        reason: String,
    },
    /// A shape generator refused the shape's parameters.
    #[error("{file}: {field} (body '{body}'): {source}")]
    Shape {
        /// The scene file.
        file: PathBuf,
        /// The JSON path of the shape, e.g. `bodies[2].shape.torus`.
        field: String,
        /// The body's name.
        body: String,
        /// The generator's reason (names the parameter).
        #[source]
        source: Box<ShapeError>,
    },
    /// A mesh file could not be loaded or is not a closed solid.
    #[error("{file}: {field} (body '{body}'): {reason}")]
    Mesh {
        /// The scene file.
        file: PathBuf,
        /// The JSON path, `bodies[i].shape.file.path`.
        field: String,
        /// The body's name.
        body: String,
        /// The loader's or validator's message (names the mesh file, and the line or triangle).
        reason: String,
    },
    /// Mass properties failed.
    #[error("{file}: {field} (body '{body}'): {source}")]
    Mass {
        /// The scene file.
        file: PathBuf,
        /// The JSON path of the body, `bodies[i]`.
        field: String,
        /// The body's name.
        body: String,
        /// Why.
        #[source]
        source: MassError,
    },
    /// The body's state was refused.
    #[error("{file}: {field} (body '{body}'): {source}")]
    Body {
        /// The scene file.
        file: PathBuf,
        /// The JSON path of the body, `bodies[i]`.
        field: String,
        /// The body's name.
        body: String,
        /// Why.
        #[source]
        source: BodyError,
    },
    /// The scene's step settings (`dt`, `substeps`, `gravity`) were refused.
    #[error("{file}: world settings: {source}")]
    StepSettings {
        /// The scene file.
        file: PathBuf,
        /// Why.
        #[source]
        source: StepSettingsError,
    },
}

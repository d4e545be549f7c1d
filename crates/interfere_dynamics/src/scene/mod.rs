//! Scene files: bodies, meshes (from a file or a generator), materials, initial state and the
//! world's settings, as JSON (format documented in `assets/scenes/README.md`). A scene builds a
//! [`Simulation`] (the same one the Bevy plugin steps); `interfere simulate` runs it headless.
//!
//! Malformed scenes give a [`SceneError`] that names the scene file, the field as a JSON path
//! (`bodies[3].shape.icosphere.radius`, with the body's name) and the reason; a mesh file at
//! fault is named too. Values for `f32` fields that overflow `f32` (`1e300`) or round to zero are
//! refused when the file is read, with the limit they break.

use crate::body::mass::MassError;
use crate::body::{Body, BodyError, Material};
use crate::character::{CharacterController, CharacterMove};
use crate::collision::shape::{BodyShape, HalfSpace, MeshShape, Shape};
use crate::contact::parts::sampled::{AdaptiveSampling, MeshSpacing};
use crate::contact::stage::{ContactSettings, VolumeMethod};
use crate::joint::{Joint, JointCompliance, JointKind};
use crate::simulation::{BodyHandle, Simulation, SimulationSettings};
use crate::solver::SolverSettings;
use crate::solver::integrator::{StepSettings, StepSettingsError};
use crate::solver::sleeping::SleepSettings;
use glam::{DQuat, DVec3, Vec3};
use interfere_geometry::primitives::Primitive;
use interfere_geometry::threads::{ThreadSpec, bolt, nut};
use interfere_geometry::{MeshOptions, ShapeError, Solid, Tolerance, io, shapes};
use serde::{Deserialize, Deserializer, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod build;
mod error;
mod schema;
#[cfg(test)]
mod tests;
mod validate;

use build::*;
pub use build::{BuiltScene, SceneCharacter};
pub use error::{MEMORY_SCENE, SceneError};
pub use schema::*;
use validate::*;

//! Scene files: bodies, meshes (from a file or a generator), materials, initial state and the
//! world's settings, as JSON (format documented in `assets/scenes/README.md`). A scene builds a
//! [`Simulation`] (the same one the Bevy plugin steps); `interfere simulate` runs it headless.
//!
//! Malformed scenes give a [`SceneError`] that names the field (serde reports the JSON path's
//! field and line), the body, or the mesh file at fault.

use crate::body::{BodyError, Material, RigidBody};
use crate::collider::{Collider, HalfSpace, MeshShape};
use crate::mass::MassError;
use crate::mesh_volume::{AdaptiveSampling, MeshSpacing};
use crate::simulation::{BodyHandle, Simulation, SimulationSettings};
use crate::sleeping::SleepSettings;
use crate::solver::SolverSettings;
use crate::stage::{ContactSettings, VolumeMethod};
use crate::world::{WorldError, WorldSettings};
use glam::{DQuat, DVec3, Vec3};
use interfere_geometry::threads::{ThreadSpec, bolt, nut};
use interfere_geometry::{MeshOptions, Solid, Tolerance, io, shapes};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why a scene could not be read or built.
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
    /// The JSON does not match the format (the message names the field, line and column).
    #[error("{path}: {message}")]
    Format {
        /// The scene file.
        path: PathBuf,
        /// serde's message.
        message: String,
    },
    /// A value is out of range.
    #[error("body '{body}': {field}: {reason}")]
    Invalid {
        /// The body's name (or `world`).
        body: String,
        /// The field.
        field: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A mesh file could not be loaded or is not a closed solid.
    #[error("body '{body}': {reason}")]
    Mesh {
        /// The body's name.
        body: String,
        /// The loader's or validator's message (names the file).
        reason: String,
    },
    /// Mass properties failed.
    #[error("body '{body}': {source}")]
    Mass {
        /// The body's name.
        body: String,
        /// Why.
        #[source]
        source: MassError,
    },
    /// The body's state was refused.
    #[error("body '{body}': {source}")]
    Body {
        /// The body's name.
        body: String,
        /// Why.
        #[source]
        source: BodyError,
    },
    /// The world's settings were refused.
    #[error("world: {0}")]
    World(#[from] WorldError),
}

/// A scene file.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scene {
    /// Gravity acceleration (default `[0, 0, -9.81]`).
    #[serde(default = "default_gravity")]
    pub gravity: [f64; 3],
    /// Fixed step in seconds (default 1/60).
    #[serde(default = "default_dt")]
    pub dt: f64,
    /// Substeps per step (default 4).
    #[serde(default = "default_substeps")]
    pub substeps: u32,
    /// Solver iterations, slops and thresholds (default [`SolverSettings::default`], made for
    /// metres; a scene in millimetres sets the slops and speed thresholds itself).
    #[serde(default)]
    pub solver: SolverSettings,
    /// Spacing of the volume-sampling lattice in world units (default: 1/8 of the smaller
    /// box's extent per pair, [`MeshSpacing::default`]).
    #[serde(default)]
    pub volume_spacing: Option<f64>,
    /// Pairs needing more volume rays than this are skipped (default 2¹⁸).
    #[serde(default)]
    pub max_rays_per_pair: Option<u64>,
    /// Adaptive (EBPI) contact sampling instead of the uniform lattice (Wang–Faure–Pai 2012
    /// §3–5; `volume_spacing` is then unused). Default: uniform.
    #[serde(default)]
    pub adaptive_sampling: Option<AdaptiveSpec>,
    /// Sleeping (default [`SleepSettings::default`], as in the plugin).
    #[serde(default)]
    pub sleep: Option<SleepSettings>,
    /// Static ground planes (half-spaces: exact volume contact with every body).
    #[serde(default)]
    pub planes: Vec<PlaneSpec>,
    /// The bodies.
    pub bodies: Vec<BodySpec>,
}

/// Adaptive contact sampling of a scene ([`crate::AdaptiveSampling`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdaptiveSpec {
    /// Rays one pair's query may cast over its three views.
    pub ray_budget: u64,
    /// Volume tolerance asked for first, as a fraction of the smaller solid's volume (default
    /// 10⁻⁴); loosened while the plan needs more than `ray_budget` rays.
    #[serde(default = "default_relative_tolerance")]
    pub relative_tolerance: f64,
    /// EBPI resolution, pixels per side (default 64).
    #[serde(default = "default_ebpi_resolution")]
    pub finest_resolution: u32,
}

fn default_relative_tolerance() -> f64 {
    1e-4
}
fn default_ebpi_resolution() -> u32 {
    64
}

impl AdaptiveSpec {
    fn sampling(&self) -> Result<AdaptiveSampling, SceneError> {
        let world_invalid = |field: &'static str, reason: String| SceneError::Invalid {
            body: "world".into(),
            field,
            reason,
        };
        if self.ray_budget == 0 {
            return Err(world_invalid(
                "adaptive_sampling.ray_budget",
                "must be > 0".into(),
            ));
        }
        let t = self.relative_tolerance;
        if !(t.is_finite() && t > 0.0 && t < 1.0) {
            return Err(world_invalid(
                "adaptive_sampling.relative_tolerance",
                format!("{t} is not in (0, 1)"),
            ));
        }
        if !(1..=4096).contains(&self.finest_resolution) {
            return Err(world_invalid(
                "adaptive_sampling.finest_resolution",
                format!("{} is not in 1..=4096", self.finest_resolution),
            ));
        }
        Ok(AdaptiveSampling {
            tolerance: Tolerance::Relative(t),
            finest_resolution: self.finest_resolution,
            ray_budget: self.ray_budget,
        })
    }
}

fn default_gravity() -> [f64; 3] {
    [0.0, 0.0, -9.81]
}
fn default_dt() -> f64 {
    1.0 / 60.0
}
fn default_substeps() -> u32 {
    4
}

/// A static plane: the solid half-space below it collides with every body by exact volume.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlaneSpec {
    /// Outward normal.
    pub normal: [f64; 3],
    /// A point on the plane.
    #[serde(default)]
    pub point: [f64; 3],
}

/// How a body moves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KindSpec {
    /// Moved by gravity and contacts.
    #[default]
    Dynamic,
    /// Never moves.
    Static,
    /// Moves with its set velocity, unaffected by contacts.
    Kinematic,
}

/// A body.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BodySpec {
    /// Name used in output and errors.
    pub name: String,
    /// Dynamic (default), static or kinematic.
    #[serde(default)]
    pub kind: KindSpec,
    /// The shape, in the body's mesh frame.
    pub shape: ShapeSpec,
    /// Position of the mesh frame's origin.
    #[serde(default)]
    pub position: [f64; 3],
    /// Orientation as a quaternion `[x, y, z, w]` (normalized on load).
    #[serde(default = "identity_quat")]
    pub orientation: [f64; 4],
    /// Initial linear velocity.
    #[serde(default)]
    pub velocity: [f64; 3],
    /// Initial angular velocity (rad/s, world axes).
    #[serde(default)]
    pub angular_velocity: [f64; 3],
    /// Density (kg/m³) for dynamic bodies; default 1000.
    #[serde(default = "default_density")]
    pub density: f64,
    /// Coulomb friction coefficient (static and dynamic); default 0.5.
    #[serde(default = "default_friction")]
    pub friction: f64,
    /// Restitution in [0, 1]; default 0.
    #[serde(default)]
    pub restitution: f64,
}

fn identity_quat() -> [f64; 4] {
    [0.0, 0.0, 0.0, 1.0]
}
fn default_density() -> f64 {
    1000.0
}
fn default_friction() -> f64 {
    0.5
}

/// A mesh: a file (relative to the scene file) or a generator.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ShapeSpec {
    /// An OBJ or STL file.
    File {
        /// Path, relative to the scene file.
        path: PathBuf,
    },
    /// A box.
    Cuboid {
        /// Half extents.
        half_extents: [f32; 3],
    },
    /// A subdivided icosahedron.
    Icosphere {
        /// Radius.
        radius: f32,
        /// Subdivisions (0–6).
        subdivisions: u32,
    },
    /// A torus about z.
    Torus {
        /// Major radius.
        major: f32,
        /// Tube radius.
        minor: f32,
        /// Segments around z.
        major_segments: u32,
        /// Segments around the tube.
        minor_segments: u32,
    },
    /// A cylinder along z.
    Cylinder {
        /// Radius.
        radius: f32,
        /// Half height.
        half_height: f32,
        /// Segments around z.
        segments: u32,
    },
    /// A polygonal wheel along z with slightly curved faces
    /// ([`interfere_geometry::shapes::polygon_wheel`]).
    PolygonWheel {
        /// Circumradius.
        radius: f32,
        /// Number of faces (3–1024).
        sides: u32,
        /// Half the width along z.
        half_width: f32,
        /// Bulge of each face at its middle (negative: hollow).
        sagitta: f32,
        /// Strips per face (1–1024).
        segments: u32,
    },
    /// An ISO metric bolt along +z, thread from z = 0 to `thread_length`, hex head on top
    /// ([`interfere_geometry::threads::bolt`]).
    Bolt {
        /// The thread.
        thread: ThreadShape,
        /// Length of the threaded shank.
        thread_length: f32,
    },
    /// A hex nut with the matching internal thread, from z = 0 to `height`
    /// ([`interfere_geometry::threads::nut`]).
    Nut {
        /// The thread.
        thread: ThreadShape,
        /// Height of the nut.
        height: f32,
    },
}

/// An ISO metric thread in a scene file ([`ThreadSpec`]).
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThreadShape {
    /// Nominal (major) diameter, e.g. 10 for M10.
    pub major_diameter: f32,
    /// Pitch (axial advance per turn), e.g. 1.5.
    pub pitch: f32,
    /// Facets per turn: a multiple of 16, at most 1024 (default 64).
    #[serde(default = "default_columns")]
    pub columns: u32,
    /// Radial clearance between bolt and nut (default 0.05).
    #[serde(default = "default_clearance")]
    pub clearance: f32,
}

fn default_columns() -> u32 {
    64
}
fn default_clearance() -> f32 {
    0.05
}

/// A scene ready to step: the simulation, and the bodies' names and handles.
pub struct BuiltScene {
    /// The simulation (a static `ground` body carrying the scene's planes comes first).
    pub simulation: Simulation,
    /// Body names, by [`crate::BodyId`] (the ground first).
    pub names: Vec<String>,
    /// Each body's handle, by [`crate::BodyId`].
    pub handles: Vec<BodyHandle>,
}

impl Scene {
    /// Reads a scene file.
    pub fn load(path: &Path) -> Result<Scene, SceneError> {
        let text = std::fs::read_to_string(path).map_err(|source| SceneError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let mut scene = Self::from_json(&text, path)?;
        let base = path.parent().unwrap_or(Path::new("."));
        for b in &mut scene.bodies {
            if let ShapeSpec::File { path } = &mut b.shape
                && path.is_relative()
            {
                *path = base.join(&*path);
            }
        }
        Ok(scene)
    }

    /// Parses scene JSON; `path` is only used in error messages.
    pub fn from_json(text: &str, path: &Path) -> Result<Scene, SceneError> {
        serde_json::from_str(text).map_err(|e| SceneError::Format {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
    }

    /// The simulation settings the scene asks for (world, contacts, sleeping).
    pub fn settings(&self) -> Result<SimulationSettings, SceneError> {
        let world_invalid = |field, reason: String| SceneError::Invalid {
            body: "world".into(),
            field,
            reason,
        };
        if !self.gravity.iter().all(|g| g.is_finite()) {
            return Err(world_invalid("gravity", "must be finite".into()));
        }
        let mut contact = ContactSettings::default();
        let mut spacing = MeshSpacing::default();
        if let Some(h) = self.volume_spacing {
            if !(h.is_finite() && h > 0.0) {
                return Err(world_invalid("volume_spacing", format!("{h} is not > 0")));
            }
            spacing = MeshSpacing::Absolute(h);
        }
        contact.volume = VolumeMethod::Uniform { spacing };
        if let Some(n) = self.max_rays_per_pair {
            if n == 0 {
                return Err(world_invalid("max_rays_per_pair", "must be > 0".into()));
            }
            contact.max_rays_per_pair = n;
        }
        if let Some(a) = &self.adaptive_sampling {
            contact.volume = VolumeMethod::Adaptive(a.sampling()?);
        }
        let sleep = self.sleep.unwrap_or_default();
        if !(sleep.linear_threshold >= 0.0
            && sleep.angular_threshold >= 0.0
            && sleep.time_to_sleep >= 0.0)
        {
            return Err(world_invalid(
                "sleep",
                format!("thresholds and time_to_sleep must be >= 0 (got {sleep:?})"),
            ));
        }
        let world = WorldSettings {
            gravity: DVec3::from_array(self.gravity),
            dt: self.dt,
            substeps: self.substeps,
            solver: self.solver,
        };
        Ok(SimulationSettings {
            world,
            contact,
            sleep,
        })
    }

    /// Builds the simulation.
    pub fn build(&self) -> Result<BuiltScene, SceneError> {
        let world_invalid = |field, reason: String| SceneError::Invalid {
            body: "world".into(),
            field,
            reason,
        };
        if self.bodies.is_empty() {
            return Err(world_invalid(
                "bodies",
                "the scene has no bodies: nothing to simulate".into(),
            ));
        }
        let mut simulation = Simulation::new(self.settings()?)?;
        let mut names = Vec::new();
        let mut handles = Vec::new();
        let ground_body =
            RigidBody::fixed(DVec3::ZERO, DQuat::IDENTITY).map_err(|source| SceneError::Body {
                body: "ground".into(),
                source,
            })?;
        let mut halves = Vec::with_capacity(self.planes.len());
        for p in &self.planes {
            let normal = DVec3::from_array(p.normal);
            halves.push(
                HalfSpace::new(normal, DVec3::from_array(p.point)).ok_or_else(|| {
                    world_invalid("planes.normal", format!("{normal} is not a usable normal"))
                })?,
            );
        }
        // The ground carries the first plane; each further plane is a static body of its own
        // (a body has one collider).
        let ground = insert(
            &mut simulation,
            "ground",
            ground_body.clone(),
            halves.first().map(|h| Collider::half_space(*h)),
        )?;
        names.push("ground".to_string());
        handles.push(ground);
        for (k, h) in halves.iter().enumerate().skip(1) {
            let name = format!("plane {k}");
            let h = insert(
                &mut simulation,
                &name,
                ground_body.clone(),
                Some(Collider::half_space(*h)),
            )?;
            names.push(name);
            handles.push(h);
        }
        for spec in &self.bodies {
            let (body, collider) = build_body(spec)?;
            handles.push(insert(&mut simulation, &spec.name, body, Some(collider))?);
            names.push(spec.name.clone());
        }
        Ok(BuiltScene {
            simulation,
            names,
            handles,
        })
    }
}

fn insert(
    simulation: &mut Simulation,
    name: &str,
    body: RigidBody,
    collider: Option<Collider>,
) -> Result<BodyHandle, SceneError> {
    simulation
        .insert(body, collider)
        .map_err(|e| SceneError::Invalid {
            body: name.to_string(),
            field: "state",
            reason: e.to_string(),
        })
}

fn build_body(spec: &BodySpec) -> Result<(RigidBody, Collider), SceneError> {
    let invalid = |field, reason: String| SceneError::Invalid {
        body: spec.name.clone(),
        field,
        reason,
    };
    let solid = build_shape(spec)?;
    let shape = Arc::new(MeshShape::new(solid).map_err(|source| SceneError::Mass {
        body: spec.name.clone(),
        source,
    })?);
    let q = DQuat::from_array(spec.orientation);
    if !(q.is_finite() && q.length() > 1e-9) {
        return Err(invalid(
            "orientation",
            "needs a non-zero finite quaternion".into(),
        ));
    }
    let q = q.normalize();
    let position = DVec3::from_array(spec.position);
    if !position.is_finite() {
        return Err(invalid("position", "must be finite".into()));
    }
    if !(spec.friction.is_finite() && spec.friction >= 0.0) {
        return Err(invalid(
            "friction",
            format!("{} is not >= 0", spec.friction),
        ));
    }
    if !(0.0..=1.0).contains(&spec.restitution) {
        return Err(invalid(
            "restitution",
            format!("{} is not in [0, 1]", spec.restitution),
        ));
    }
    let body_err = |source| SceneError::Body {
        body: spec.name.clone(),
        source,
    };
    let body = match spec.kind {
        KindSpec::Static => RigidBody::fixed(position, q).map_err(body_err)?,
        KindSpec::Kinematic => RigidBody::kinematic(position, q).map_err(body_err)?,
        KindSpec::Dynamic => {
            if !(spec.density.is_finite() && spec.density > 0.0) {
                return Err(invalid("density", format!("{} is not > 0", spec.density)));
            }
            RigidBody::dynamic(&shape.mass_at(spec.density), position, q).map_err(body_err)?
        }
    };
    let body = body
        .with_material(Material::new(spec.friction, spec.restitution))
        .with_velocity(
            DVec3::from_array(spec.velocity),
            DVec3::from_array(spec.angular_velocity),
        );
    Ok((body, Collider::mesh(shape)))
}

fn build_shape(spec: &BodySpec) -> Result<Solid, SceneError> {
    let invalid = |field, reason: String| SceneError::Invalid {
        body: spec.name.clone(),
        field,
        reason,
    };
    let positive = |v: f32| v.is_finite() && v > 0.0;
    Ok(match &spec.shape {
        ShapeSpec::File { path } => {
            let mesh =
                io::load_mesh(path, &MeshOptions::default()).map_err(|e| SceneError::Mesh {
                    body: spec.name.clone(),
                    reason: e.to_string(),
                })?;
            Solid::new(mesh).map_err(|e| SceneError::Mesh {
                body: spec.name.clone(),
                reason: format!("{}: {e}", path.display()),
            })?
        }
        ShapeSpec::Cuboid { half_extents } => {
            if !half_extents.iter().all(|&h| positive(h)) {
                return Err(invalid("shape.cuboid.half_extents", "must be > 0".into()));
            }
            shapes::cuboid(Vec3::from_array(*half_extents))
        }
        ShapeSpec::Icosphere {
            radius,
            subdivisions,
        } => {
            if !positive(*radius) || *subdivisions > 6 {
                return Err(invalid(
                    "shape.icosphere",
                    "radius must be > 0 and subdivisions at most 6".into(),
                ));
            }
            shapes::icosphere(*radius, *subdivisions)
        }
        ShapeSpec::Torus {
            major,
            minor,
            major_segments,
            minor_segments,
        } => {
            if !(positive(*minor)
                && *major > *minor
                && *major_segments >= 3
                && *minor_segments >= 3)
                || *major_segments > 1024
                || *minor_segments > 1024
            {
                return Err(invalid(
                    "shape.torus",
                    "needs major > minor > 0 and 3..=1024 segments".into(),
                ));
            }
            shapes::torus(*major, *minor, *major_segments, *minor_segments)
        }
        ShapeSpec::Cylinder {
            radius,
            half_height,
            segments,
        } => {
            if !(positive(*radius) && positive(*half_height) && (3..=1024).contains(segments)) {
                return Err(invalid(
                    "shape.cylinder",
                    "needs radius, half_height > 0 and 3..=1024 segments".into(),
                ));
            }
            shapes::cylinder(*radius, *half_height, *segments)
        }
        ShapeSpec::PolygonWheel {
            radius,
            sides,
            half_width,
            sagitta,
            segments,
        } => {
            if !(positive(*radius)
                && positive(*half_width)
                && sagitta.is_finite()
                && sagitta.abs() < *radius / 2.0
                && (3..=1024).contains(sides)
                && (1..=1024).contains(segments))
            {
                return Err(invalid(
                    "shape.polygon_wheel",
                    "needs radius, half_width > 0, |sagitta| < radius/2, 3..=1024 sides and \
                     1..=1024 segments"
                        .into(),
                ));
            }
            shapes::polygon_wheel(*radius, *sides, *half_width, *sagitta, *segments)
        }
        ShapeSpec::Bolt {
            thread,
            thread_length,
        } => {
            let spec = thread_spec(spec, thread)?;
            if !(positive(*thread_length) && *thread_length >= 2.0 * spec.pitch) {
                return Err(invalid(
                    "shape.bolt.thread_length",
                    format!("{thread_length} is shorter than two pitches"),
                ));
            }
            bolt(&spec, *thread_length)
        }
        ShapeSpec::Nut { thread, height } => {
            let spec = thread_spec(spec, thread)?;
            if !(positive(*height) && *height >= 2.0 * spec.pitch) {
                return Err(invalid(
                    "shape.nut.height",
                    format!("{height} is less than two pitches"),
                ));
            }
            nut(&spec, *height)
        }
    })
}

/// Checks a scene's thread and turns it into a [`ThreadSpec`].
fn thread_spec(body: &BodySpec, t: &ThreadShape) -> Result<ThreadSpec, SceneError> {
    let fine = t.major_diameter.is_finite()
        && t.pitch.is_finite()
        && t.clearance.is_finite()
        && t.pitch > 0.0
        && t.major_diameter > 2.0 * t.pitch
        && t.clearance >= 0.0
        && t.clearance < t.pitch / 8.0
        && t.columns.is_multiple_of(16)
        && (16..=1024).contains(&t.columns);
    if !fine {
        return Err(SceneError::Invalid {
            body: body.name.clone(),
            field: "shape.thread",
            reason: format!(
                "needs pitch > 0, major_diameter > 2 pitches, 0 <= clearance < pitch/8 and \
                 columns a multiple of 16 in 16..=1024 (got {t:?})"
            ),
        });
    }
    Ok(ThreadSpec {
        major_diameter: t.major_diameter,
        pitch: t.pitch,
        columns: t.columns,
        clearance: t.clearance,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const DROP: &str = r#"{
        "planes": [{ "normal": [0, 0, 1] }],
        "bodies": [
            { "name": "box", "shape": { "cuboid": { "half_extents": [0.5, 0.5, 0.5] } },
              "position": [0, 0, 2], "friction": 0.6 }
        ]
    }"#;

    #[test]
    fn a_dropped_box_comes_to_rest_on_the_plane() {
        let scene = Scene::from_json(DROP, Path::new("drop.json")).unwrap();
        let mut built = scene.build().unwrap();
        for _ in 0..180 {
            built.simulation.step();
        }
        let b = &built.simulation.bodies()[1];
        assert!((b.position.z - 0.5).abs() < 5e-3, "{}", b.position);
        assert!(b.linear_velocity.length() < 1e-2, "{}", b.linear_velocity);
        assert_eq!(built.names, ["ground", "box"]);
    }

    #[test]
    fn a_box_dropped_on_a_static_box_rests_on_it_by_volume_contact() {
        let text = r#"{
            "bodies": [
                { "name": "table", "kind": "static",
                  "shape": { "cuboid": { "half_extents": [2, 2, 0.5] } } },
                { "name": "box", "shape": { "cuboid": { "half_extents": [0.4, 0.3, 0.25] } },
                  "position": [0.2, 0, 1.2] }
            ]
        }"#;
        let mut built = Scene::from_json(text, Path::new("t.json"))
            .unwrap()
            .build()
            .unwrap();
        for _ in 0..150 {
            built.simulation.step();
        }
        let b = &built.simulation.bodies()[2];
        // Top of the table at z = 0.5, box half height 0.25: centre at 0.75 (within the
        // volume slop and a few mm of sampling).
        assert!((b.position.z - 0.75).abs() < 5e-3, "{}", b.position);
        assert!(b.linear_velocity.length() < 1e-2, "{}", b.linear_velocity);
        assert!(!built.simulation.world().last_contacts().volumes.is_empty());
    }

    #[test]
    fn malformed_scenes_name_the_field() {
        let err = |text: &str| {
            Scene::from_json(text, Path::new("s.json"))
                .and_then(|s| s.build().map(|_| ()))
                .unwrap_err()
                .to_string()
        };
        assert!(err(r#"{ "bodies": [ { "name": "a" } ] }"#).contains("shape"));
        assert!(err(r#"{ "bodies": [], "gravty": [0,0,0] }"#).contains("gravty"));
        let e = err(r#"{ "bodies": [] }"#);
        assert!(e.contains("bodies") && e.contains("no bodies"), "{e}");
        let bad_density = r#"{ "bodies": [ { "name": "heavy", "density": -1,
            "shape": { "cuboid": { "half_extents": [1, 1, 1] } } } ] }"#;
        let e = err(bad_density);
        assert!(e.contains("heavy") && e.contains("density"), "{e}");
        let bad_file = r#"{ "bodies": [ { "name": "f",
            "shape": { "file": { "path": "/no/such.obj" } } } ] }"#;
        let e = err(bad_file);
        assert!(e.contains("/no/such.obj"), "{e}");
        let bad_restitution = r#"{ "bodies": [ { "name": "r", "restitution": 2,
            "shape": { "icosphere": { "radius": 1, "subdivisions": 1 } } } ] }"#;
        assert!(err(bad_restitution).contains("restitution"));
    }

    #[test]
    fn every_shipped_scene_loads_and_builds() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/scenes");
        let mut names = Vec::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "json") {
                let built = Scene::load(&path)
                    .and_then(|s| s.build())
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                assert!(built.simulation.len() >= 2, "{}", path.display());
                names.push(path.file_name().unwrap().to_string_lossy().into_owned());
            }
        }
        names.sort();
        for scene in [
            "box_pile.json",
            "nut_and_bolt.json",
            "nut_and_bolt_locked.json",
            "ruina_wheels.json",
            "small_obstacle_adaptive.json",
            "small_obstacle_uniform.json",
        ] {
            assert!(
                names.iter().any(|n| n == scene),
                "{scene} missing: {names:?}"
            );
        }
    }

    #[test]
    fn adaptive_sampling_is_checked() {
        let build = |adaptive: &str| {
            let text = format!(
                r#"{{ "adaptive_sampling": {adaptive},
                     "bodies": [ {{ "name": "p", "shape": {{ "cuboid": {{ "half_extents": [1, 1, 1] }} }} }} ] }}"#
            );
            Scene::from_json(&text, Path::new("t.json")).and_then(|s| s.build())
        };
        let built = build(r#"{ "ray_budget": 512 }"#).expect("valid adaptive sampling");
        assert_eq!(
            built.simulation.settings().contact.volume,
            VolumeMethod::Adaptive(AdaptiveSampling {
                tolerance: Tolerance::Relative(1e-4),
                finest_resolution: 64,
                ray_budget: 512,
            })
        );
        for (bad, field) in [
            (r#"{ "ray_budget": 0 }"#, "adaptive_sampling.ray_budget"),
            (
                r#"{ "ray_budget": 64, "relative_tolerance": -1 }"#,
                "adaptive_sampling.relative_tolerance",
            ),
            (
                r#"{ "ray_budget": 64, "relative_tolerance": 1 }"#,
                "adaptive_sampling.relative_tolerance",
            ),
            (
                r#"{ "ray_budget": 64, "finest_resolution": 0 }"#,
                "adaptive_sampling.finest_resolution",
            ),
        ] {
            let e = build(bad).err().expect(bad).to_string();
            assert!(e.contains(field), "{bad}: {e}");
        }
        let e = build(r#"{ "ray_budget": 64, "budget": 3 }"#)
            .err()
            .expect("unknown field");
        assert!(e.to_string().contains("budget"), "{e}");
    }

    #[test]
    fn thread_and_wheel_shapes_are_checked() {
        let build = |shape: &str| {
            let text = format!(r#"{{ "bodies": [ {{ "name": "p", "shape": {shape} }} ] }}"#);
            Scene::from_json(&text, Path::new("t.json"))
                .and_then(|s| s.build())
                .map(|b| {
                    let c = b.simulation.colliders()[1].as_ref().unwrap();
                    c.shape.mesh().unwrap().solid().triangle_count()
                })
        };
        let thread = r#"{ "major_diameter": 10, "pitch": 1.5, "columns": 16 }"#;
        let n = build(&format!(
            r#"{{ "nut": {{ "thread": {thread}, "height": 4.5 }} }}"#
        ))
        .unwrap();
        assert!(n > 100, "{n}");
        let b = build(&format!(
            r#"{{ "bolt": {{ "thread": {thread}, "thread_length": 6 }} }}"#
        ))
        .unwrap();
        assert!(b > n, "{b} {n}");
        let w = build(
            r#"{ "polygon_wheel": { "radius": 0.1, "sides": 6, "half_width": 0.03,
                 "sagitta": -5e-4, "segments": 16 } }"#,
        )
        .unwrap();
        assert_eq!(w, 4 * 6 * 16);
        for bad in [
            r#"{ "nut": { "thread": { "major_diameter": 10, "pitch": 1.5, "columns": 17 }, "height": 8 } }"#,
            r#"{ "nut": { "thread": { "major_diameter": 10, "pitch": 1.5, "clearance": 1 }, "height": 8 } }"#,
            r#"{ "nut": { "thread": { "major_diameter": 10, "pitch": -1 }, "height": 8 } }"#,
            r#"{ "bolt": { "thread": { "major_diameter": 10, "pitch": 1.5 }, "thread_length": 1 } }"#,
            r#"{ "polygon_wheel": { "radius": 0.1, "sides": 2, "half_width": 0.03, "sagitta": 0, "segments": 4 } }"#,
        ] {
            let e = build(bad).unwrap_err().to_string();
            assert!(e.contains("'p'") && e.contains("shape."), "{bad}: {e}");
        }
        let e = Scene::from_json(
            r#"{ "volume_spacing": -1, "bodies": [ { "name": "p", "shape": { "cuboid": { "half_extents": [1, 1, 1] } } } ] }"#,
            Path::new("t.json"),
        )
        .and_then(|s| s.build())
        .map(|_| ())
        .unwrap_err()
        .to_string();
        assert!(e.contains("volume_spacing"), "{e}");
        let e = Scene::from_json(
            r#"{ "solver": { "linear_slp": 1 }, "bodies": [] }"#,
            Path::new("t.json"),
        )
        .map(|_| ())
        .unwrap_err()
        .to_string();
        assert!(e.contains("linear_slp"), "{e}");
    }
}

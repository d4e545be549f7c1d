//! Scene files: bodies, meshes (from a file or a generator), materials, initial state and the
//! world's settings, as JSON (format documented in `assets/scenes/README.md`). A scene builds a
//! [`Simulation`] (the same one the Bevy plugin steps); `interfere simulate` runs it headless.
//!
//! Malformed scenes give a [`SceneError`] that names the scene file, the field as a JSON path
//! (`bodies[3].shape.icosphere.radius`, with the body's name) and the reason; a mesh file at
//! fault is named too. Values for `f32` fields that overflow `f32` (`1e300`) or round to zero are
//! refused when the file is read, with the limit they break.

use crate::body::{BodyError, Material, RigidBody};
use crate::collider::{Collider, HalfSpace, MeshShape, Shape};
use crate::mass::MassError;
use crate::mesh_volume::{AdaptiveSampling, MeshSpacing};
use crate::simulation::{BodyHandle, Simulation, SimulationSettings};
use crate::sleeping::SleepSettings;
use crate::solver::SolverSettings;
use crate::stage::{ContactSettings, VolumeMethod};
use crate::world::{WorldError, WorldSettings};
use glam::{DQuat, DVec3, Vec3};
use interfere_geometry::primitives::Primitive;
use interfere_geometry::threads::{ThreadSpec, bolt, nut};
use interfere_geometry::{MeshOptions, ShapeError, Solid, Tolerance, io, shapes};
use serde::{Deserialize, Deserializer, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The path that scene errors name for a scene that was not read from a file.
pub const MEMORY_SCENE: &str = "<memory>";

/// `" (body 'NAME')"` for errors about a body, nothing for the scene's own fields.
fn body_label(body: &Option<String>) -> String {
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
    /// The world's settings (`dt`, `substeps`, `gravity`) were refused.
    #[error("{file}: world settings: {source}")]
    World {
        /// The scene file.
        file: PathBuf,
        /// Why.
        #[source]
        source: WorldError,
    },
}

/// Reads an `f32` field from a JSON number, refusing one that overflows `f32` (`1e300` would
/// become infinity) or that is not zero but rounds to zero.
fn f32_checked<'de, D: Deserializer<'de>>(d: D) -> Result<f32, D::Error> {
    to_f32(f64::deserialize(d)?).map_err(serde::de::Error::custom)
}

/// [`f32_checked`] for `[x, y, z]`.
fn f32x3_checked<'de, D: Deserializer<'de>>(d: D) -> Result<[f32; 3], D::Error> {
    let v = <[f64; 3]>::deserialize(d)?;
    let mut out = [0.0f32; 3];
    for (o, x) in out.iter_mut().zip(v) {
        *o = to_f32(x).map_err(serde::de::Error::custom)?;
    }
    Ok(out)
}

fn to_f32(v: f64) -> Result<f32, String> {
    let x = v as f32;
    if x.is_infinite() && v.is_finite() {
        return Err(format!(
            "{} exceeds the f32 range (±{:e})",
            short(v),
            f32::MAX
        ));
    }
    if x == 0.0 && v != 0.0 {
        return Err(format!(
            "{} is below the smallest f32 ({:e}) and would round to 0",
            short(v),
            f32::from_bits(1)
        ));
    }
    Ok(x)
}

/// A value for a message: plain when ordinary, `1e300` rather than 301 digits when not.
fn num(v: impl Into<f64>) -> String {
    let v = v.into();
    if v != 0.0 && v.is_finite() && !(1e-6..1e16).contains(&v.abs()) {
        short(v)
    } else {
        format!("{v}")
    }
}

/// `v` to 7 significant digits, trailing zeros dropped (the JSON reader's last-digit noise,
/// `9.999999999999999e-51` for `1e-50`, is not shown).
fn short(v: f64) -> String {
    let s = format!("{v:.6e}");
    let (mantissa, exponent) = s.split_once('e').unwrap_or((&s, "0"));
    let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
    format!("{mantissa}e{exponent}")
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
    /// How pair volumes are computed: `"exact"` (the default; no spacing to tune), `"uniform"`
    /// (rays every `volume_spacing`) or `"adaptive"` (EBPI, `adaptive_sampling`). Without it a
    /// scene that gives `volume_spacing` or `adaptive_sampling` gets that sampler.
    #[serde(default)]
    pub volume_method: Option<VolumeMethodSpec>,
    /// Sleeping (default [`SleepSettings::default`], as in the plugin).
    #[serde(default)]
    pub sleep: Option<SleepSettings>,
    /// Static ground planes (half-spaces: exact volume contact with every body).
    #[serde(default)]
    pub planes: Vec<PlaneSpec>,
    /// The bodies.
    pub bodies: Vec<BodySpec>,
    /// The file the scene was read from (set by [`Scene::load`] and [`Scene::from_json`]; not
    /// part of the JSON): build errors name it.
    #[serde(skip)]
    pub source_path: Option<PathBuf>,
}

/// The volume method of a scene ([`crate::VolumeMethod`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VolumeMethodSpec {
    /// The exact volume from the surfaces.
    Exact,
    /// Uniform rays (`volume_spacing`).
    Uniform,
    /// Adaptive EBPI rays (`adaptive_sampling`).
    Adaptive,
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
    fn sampling(&self, file: &Path) -> Result<AdaptiveSampling, SceneError> {
        let world_invalid = |field: &str, reason: String| SceneError::Invalid {
            file: file.to_path_buf(),
            field: field.into(),
            body: None,
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
                format!("{} is not in (0, 1)", num(t)),
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

/// A primitive collider in a scene file (closed-form contact where one exists; see
/// [`crate::Shape::Primitive`]), in the body's frame; capsule and cylinder along local y.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum PrimitiveSpec {
    /// A ball.
    Sphere {
        /// Radius.
        #[serde(deserialize_with = "f32_checked")]
        radius: f32,
    },
    /// The points within `radius` of a segment of half length `half_length` along y.
    Capsule {
        /// Half the segment's length.
        #[serde(deserialize_with = "f32_checked")]
        half_length: f32,
        /// Radius.
        #[serde(deserialize_with = "f32_checked")]
        radius: f32,
    },
    /// A box.
    Cuboid {
        /// Half extents.
        #[serde(deserialize_with = "f32x3_checked")]
        half_extents: [f32; 3],
    },
    /// A cylinder along y.
    Cylinder {
        /// Half the height.
        #[serde(deserialize_with = "f32_checked")]
        half_height: f32,
        /// Radius.
        #[serde(deserialize_with = "f32_checked")]
        radius: f32,
    },
}

/// A body's shape: a mesh (a file relative to the scene file, or a generator) or a primitive.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ShapeSpec {
    /// A primitive collider (no mesh).
    Primitive(PrimitiveSpec),
    /// An OBJ or STL file.
    File {
        /// Path, relative to the scene file.
        path: PathBuf,
    },
    /// A box.
    Cuboid {
        /// Half extents.
        #[serde(deserialize_with = "f32x3_checked")]
        half_extents: [f32; 3],
    },
    /// A subdivided icosahedron.
    Icosphere {
        /// Radius.
        #[serde(deserialize_with = "f32_checked")]
        radius: f32,
        /// Subdivisions (0–6).
        subdivisions: u32,
    },
    /// A torus about z.
    Torus {
        /// Major radius.
        #[serde(deserialize_with = "f32_checked")]
        major: f32,
        /// Tube radius.
        #[serde(deserialize_with = "f32_checked")]
        minor: f32,
        /// Segments around z.
        major_segments: u32,
        /// Segments around the tube.
        minor_segments: u32,
    },
    /// A cylinder along z.
    Cylinder {
        /// Radius.
        #[serde(deserialize_with = "f32_checked")]
        radius: f32,
        /// Half height.
        #[serde(deserialize_with = "f32_checked")]
        half_height: f32,
        /// Segments around z.
        segments: u32,
    },
    /// A polygonal wheel along z with slightly curved faces
    /// ([`interfere_geometry::shapes::polygon_wheel`]).
    PolygonWheel {
        /// Circumradius.
        #[serde(deserialize_with = "f32_checked")]
        radius: f32,
        /// Number of faces (3–1024).
        sides: u32,
        /// Half the width along z.
        #[serde(deserialize_with = "f32_checked")]
        half_width: f32,
        /// Bulge of each face at its middle (negative: hollow).
        #[serde(deserialize_with = "f32_checked")]
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
        #[serde(deserialize_with = "f32_checked")]
        thread_length: f32,
    },
    /// A hex nut with the matching internal thread, from z = 0 to `height`
    /// ([`interfere_geometry::threads::nut`]).
    Nut {
        /// The thread.
        thread: ThreadShape,
        /// Height of the nut.
        #[serde(deserialize_with = "f32_checked")]
        height: f32,
    },
}

/// An ISO metric thread in a scene file ([`ThreadSpec`]).
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThreadShape {
    /// Nominal (major) diameter, e.g. 10 for M10.
    #[serde(deserialize_with = "f32_checked")]
    pub major_diameter: f32,
    /// Pitch (axial advance per turn), e.g. 1.5.
    #[serde(deserialize_with = "f32_checked")]
    pub pitch: f32,
    /// Facets per turn: a multiple of 16, at most 1024 (default 64).
    #[serde(default = "default_columns")]
    pub columns: u32,
    /// Radial clearance between bolt and nut (default 0.05).
    #[serde(default = "default_clearance")]
    #[serde(deserialize_with = "f32_checked")]
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

    /// Parses scene JSON; `path` is named in error messages (and kept in
    /// [`Scene::source_path`] for [`Scene::build`]'s).
    pub fn from_json(text: &str, path: &Path) -> Result<Scene, SceneError> {
        let format = |field: String, e: serde_json::Error| SceneError::Format {
            path: path.to_path_buf(),
            field,
            message: e.to_string(),
        };
        let mut de = serde_json::Deserializer::from_str(text);
        let mut scene: Scene = serde_path_to_error::deserialize(&mut de)
            .map_err(|e| format(e.path().to_string(), e.into_inner()))?;
        // Trailing characters after the document.
        de.end().map_err(|e| format(".".into(), e))?;
        scene.source_path = Some(path.to_path_buf());
        Ok(scene)
    }

    /// The file build errors name.
    fn file(&self) -> PathBuf {
        self.source_path
            .clone()
            .unwrap_or_else(|| PathBuf::from(MEMORY_SCENE))
    }

    /// The simulation settings the scene asks for (world, contacts, sleeping).
    pub fn settings(&self) -> Result<SimulationSettings, SceneError> {
        let file = self.file();
        let world_invalid = |field: &str, reason: String| SceneError::Invalid {
            file: file.clone(),
            field: field.into(),
            body: None,
            reason,
        };
        for (k, g) in self.gravity.iter().enumerate() {
            if !g.is_finite() {
                return Err(world_invalid(
                    &format!("gravity[{k}]"),
                    format!("{} is not finite", num(*g)),
                ));
            }
        }
        self.check_solver(&file)?;
        let mut contact = ContactSettings::default();
        let spacing = match self.volume_spacing {
            Some(h) if !(h.is_finite() && h > 0.0) => {
                return Err(world_invalid(
                    "volume_spacing",
                    format!("{} is not > 0", num(h)),
                ));
            }
            Some(h) => MeshSpacing::Absolute(h),
            None => MeshSpacing::default(),
        };
        let adaptive = match &self.adaptive_sampling {
            Some(a) => Some(a.sampling(&file)?),
            None => None,
        };
        contact.volume = match self.volume_method {
            Some(VolumeMethodSpec::Exact) => {
                if self.volume_spacing.is_some() || adaptive.is_some() {
                    return Err(world_invalid(
                        "volume_method",
                        "\"exact\" casts no rays: volume_spacing and adaptive_sampling are \
                         not used with it"
                            .into(),
                    ));
                }
                VolumeMethod::Exact
            }
            Some(VolumeMethodSpec::Uniform) => VolumeMethod::Uniform { spacing },
            Some(VolumeMethodSpec::Adaptive) => {
                VolumeMethod::Adaptive(adaptive.unwrap_or_default())
            }
            // Older scenes: a spacing or an adaptive block chose the sampler.
            None => match (adaptive, self.volume_spacing) {
                (Some(a), _) => VolumeMethod::Adaptive(a),
                (None, Some(_)) => VolumeMethod::Uniform { spacing },
                (None, None) => VolumeMethod::Exact,
            },
        };
        if let Some(n) = self.max_rays_per_pair {
            if n == 0 {
                return Err(world_invalid("max_rays_per_pair", "must be > 0".into()));
            }
            contact.max_rays_per_pair = n;
        }
        let sleep = self.sleep.unwrap_or_default();
        for (name, v) in [
            ("sleep.linear_threshold", sleep.linear_threshold),
            ("sleep.angular_threshold", sleep.angular_threshold),
            ("sleep.time_to_sleep", sleep.time_to_sleep),
        ] {
            if v.is_nan() || v < 0.0 {
                return Err(world_invalid(name, format!("{} is not >= 0", num(v))));
            }
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
        let file = self.file();
        let world_invalid = |field: &str, reason: String| SceneError::Invalid {
            file: file.clone(),
            field: field.into(),
            body: None,
            reason,
        };
        if self.bodies.is_empty() {
            return Err(world_invalid(
                "bodies",
                "the scene has no bodies: nothing to simulate".into(),
            ));
        }
        let mut simulation =
            Simulation::new(self.settings()?).map_err(|source| SceneError::World {
                file: file.clone(),
                source,
            })?;
        let mut names = Vec::new();
        let mut handles = Vec::new();
        let ground_body =
            RigidBody::fixed(DVec3::ZERO, DQuat::IDENTITY).map_err(|source| SceneError::Body {
                file: file.clone(),
                field: "(ground)".into(),
                body: "ground".into(),
                source,
            })?;
        let mut halves = Vec::with_capacity(self.planes.len());
        for (i, p) in self.planes.iter().enumerate() {
            let normal = DVec3::from_array(p.normal);
            let point = DVec3::from_array(p.point);
            if !point.is_finite() {
                return Err(world_invalid(
                    &format!("planes[{i}].point"),
                    format!("{point} is not finite"),
                ));
            }
            halves.push(HalfSpace::new(normal, point).ok_or_else(|| {
                world_invalid(
                    &format!("planes[{i}].normal"),
                    format!("{normal} is not a usable normal (zero or not finite)"),
                )
            })?);
        }
        // The ground carries the first plane; each further plane is a static body of its own
        // (a body has one collider).
        let ground = insert(
            &mut simulation,
            &file,
            "(ground)",
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
                &file,
                &format!("planes[{k}]"),
                &name,
                ground_body.clone(),
                Some(Collider::half_space(*h)),
            )?;
            names.push(name);
            handles.push(h);
        }
        for (i, spec) in self.bodies.iter().enumerate() {
            let at = BodyAt {
                file: &file,
                index: i,
                spec,
            };
            let (body, collider) = build_body(&at)?;
            handles.push(insert(
                &mut simulation,
                &file,
                &at.field(""),
                &spec.name,
                body,
                Some(collider),
            )?);
            names.push(spec.name.clone());
        }
        Ok(BuiltScene {
            simulation,
            names,
            handles,
        })
    }

    /// The solver's lengths and speeds must be finite and not negative.
    fn check_solver(&self, file: &Path) -> Result<(), SceneError> {
        let s = &self.solver;
        for (name, v) in [
            ("restitution_threshold", s.restitution_threshold),
            ("static_friction_threshold", s.static_friction_threshold),
            ("linear_slop", s.linear_slop),
            ("volume_slop_depth", s.volume_slop_depth),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(SceneError::Invalid {
                    file: file.to_path_buf(),
                    field: format!("solver.{name}"),
                    body: None,
                    reason: format!("{} is not finite and >= 0", num(v)),
                });
            }
        }
        Ok(())
    }
}

/// Adds a body, naming the field and body when the simulation refuses its state.
fn insert(
    simulation: &mut Simulation,
    file: &Path,
    field: &str,
    name: &str,
    body: RigidBody,
    collider: Option<Collider>,
) -> Result<BodyHandle, SceneError> {
    simulation
        .insert(body, collider)
        .map_err(|e| SceneError::Invalid {
            file: file.to_path_buf(),
            field: field.to_string(),
            body: Some(name.to_string()),
            reason: e.to_string(),
        })
}

/// A body spec with where it is: the scene file and its index in `bodies`, for errors.
struct BodyAt<'a> {
    file: &'a Path,
    index: usize,
    spec: &'a BodySpec,
}

impl BodyAt<'_> {
    /// The JSON path `bodies[i]` followed by `rest` (`.density`, `.shape.torus.minor`, …).
    fn field(&self, rest: &str) -> String {
        format!("bodies[{}]{rest}", self.index)
    }

    /// A [`SceneError::Invalid`] for the field `rest` of this body.
    fn invalid(&self, rest: &str, reason: String) -> SceneError {
        SceneError::Invalid {
            file: self.file.to_path_buf(),
            field: self.field(rest),
            body: Some(self.spec.name.clone()),
            reason,
        }
    }
}

/// Builds a primitive body shape, each dimension checked and named.
fn build_primitive(at: &BodyAt, p: &PrimitiveSpec) -> Result<Shape, SceneError> {
    let f = f64::from;
    let made = match *p {
        PrimitiveSpec::Sphere { radius } => {
            positive(at, ".shape.primitive.sphere.radius", radius)?;
            Primitive::sphere(f(radius))
        }
        PrimitiveSpec::Capsule {
            half_length,
            radius,
        } => {
            positive(at, ".shape.primitive.capsule.half_length", half_length)?;
            positive(at, ".shape.primitive.capsule.radius", radius)?;
            Primitive::capsule(f(half_length), f(radius))
        }
        PrimitiveSpec::Cuboid { half_extents } => {
            for (k, &h) in half_extents.iter().enumerate() {
                positive(at, &format!(".shape.primitive.cuboid.half_extents[{k}]"), h)?;
            }
            Primitive::cuboid(Vec3::from_array(half_extents).as_dvec3())
        }
        PrimitiveSpec::Cylinder {
            half_height,
            radius,
        } => {
            positive(at, ".shape.primitive.cylinder.half_height", half_height)?;
            positive(at, ".shape.primitive.cylinder.radius", radius)?;
            Primitive::cylinder(f(half_height), f(radius))
        }
    };
    made.map(Shape::from_primitive)
        .map_err(|e| at.invalid(".shape.primitive", e.to_string()))
}

fn build_body(at: &BodyAt) -> Result<(RigidBody, Collider), SceneError> {
    let spec = at.spec;
    let shape = match &spec.shape {
        ShapeSpec::Primitive(p) => build_primitive(at, p)?,
        _ => {
            let solid = build_shape(at)?;
            Shape::Mesh(Arc::new(MeshShape::new(solid).map_err(|source| {
                SceneError::Mass {
                    file: at.file.to_path_buf(),
                    field: at.field(""),
                    body: spec.name.clone(),
                    source,
                }
            })?))
        }
    };
    let q = DQuat::from_array(spec.orientation);
    if !(q.is_finite() && q.length() > 1e-9) {
        return Err(at.invalid(
            ".orientation",
            format!("{:?} is not a non-zero finite quaternion", spec.orientation),
        ));
    }
    let q = q.normalize();
    for (name, v) in [
        ("position", spec.position),
        ("velocity", spec.velocity),
        ("angular_velocity", spec.angular_velocity),
    ] {
        if let Some(k) = v.iter().position(|x| !x.is_finite()) {
            return Err(at.invalid(&format!(".{name}[{k}]"), format!("{} is not finite", v[k])));
        }
    }
    let position = DVec3::from_array(spec.position);
    if !(spec.friction.is_finite() && spec.friction >= 0.0) {
        return Err(at.invalid(
            ".friction",
            format!("{} is not finite and >= 0", num(spec.friction)),
        ));
    }
    if !(0.0..=1.0).contains(&spec.restitution) {
        return Err(at.invalid(
            ".restitution",
            format!("{} is not in [0, 1]", num(spec.restitution)),
        ));
    }
    let body_err = |source| SceneError::Body {
        file: at.file.to_path_buf(),
        field: at.field(""),
        body: spec.name.clone(),
        source,
    };
    let body = match spec.kind {
        KindSpec::Static => RigidBody::fixed(position, q).map_err(body_err)?,
        KindSpec::Kinematic => RigidBody::kinematic(position, q).map_err(body_err)?,
        KindSpec::Dynamic => {
            if !(spec.density.is_finite() && spec.density > 0.0) {
                return Err(at.invalid(
                    ".density",
                    format!("{} is not finite and > 0", num(spec.density)),
                ));
            }
            let mass = shape
                .mass_at(spec.density)
                .ok_or_else(|| at.invalid(".shape", "has no finite volume".into()))?;
            RigidBody::dynamic(&mass, position, q).map_err(body_err)?
        }
    };
    let body = body
        .with_material(Material::new(spec.friction, spec.restitution))
        .with_velocity(
            DVec3::from_array(spec.velocity),
            DVec3::from_array(spec.angular_velocity),
        );
    Ok((body, Collider::from_shape(shape)))
}

/// Refuses a length that is not finite and > 0, naming the field.
fn positive(at: &BodyAt, field: &str, v: f32) -> Result<(), SceneError> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(at.invalid(field, format!("{} is not finite and > 0", num(v))))
    }
}

/// Refuses a count outside `range`, naming the field.
fn count_in(
    at: &BodyAt,
    field: &str,
    v: u32,
    range: std::ops::RangeInclusive<u32>,
) -> Result<(), SceneError> {
    if range.contains(&v) {
        Ok(())
    } else {
        Err(at.invalid(
            field,
            format!("{v} is not in {}..={}", range.start(), range.end()),
        ))
    }
}

/// Builds a body's shape. The scene's limits (segment counts up to 1024, at most 6
/// subdivisions, threads with a sane pitch and clearance) are checked here, field by field;
/// whatever they let through that the generator still refuses (extreme ratios that `f32` cannot
/// represent) comes back as [`SceneError::Shape`], never as a panic.
fn build_shape(at: &BodyAt) -> Result<Solid, SceneError> {
    let spec = at.spec;
    let (variant, result) = match &spec.shape {
        ShapeSpec::Primitive(_) => {
            return Err(at.invalid(".shape.primitive", "a primitive has no mesh".into()));
        }
        ShapeSpec::File { path } => {
            let field = at.field(".shape.file.path");
            let mesh =
                io::load_mesh(path, &MeshOptions::default()).map_err(|e| SceneError::Mesh {
                    file: at.file.to_path_buf(),
                    field: field.clone(),
                    body: spec.name.clone(),
                    reason: e.to_string(),
                })?;
            return Solid::new(mesh).map_err(|e| SceneError::Mesh {
                file: at.file.to_path_buf(),
                field,
                body: spec.name.clone(),
                reason: format!("{}: {e}", path.display()),
            });
        }
        ShapeSpec::Cuboid { half_extents } => {
            for (k, &h) in half_extents.iter().enumerate() {
                positive(at, &format!(".shape.cuboid.half_extents[{k}]"), h)?;
            }
            ("cuboid", shapes::cuboid(Vec3::from_array(*half_extents)))
        }
        ShapeSpec::Icosphere {
            radius,
            subdivisions,
        } => {
            positive(at, ".shape.icosphere.radius", *radius)?;
            count_in(at, ".shape.icosphere.subdivisions", *subdivisions, 0..=6)?;
            ("icosphere", shapes::icosphere(*radius, *subdivisions))
        }
        ShapeSpec::Torus {
            major,
            minor,
            major_segments,
            minor_segments,
        } => {
            positive(at, ".shape.torus.minor", *minor)?;
            if !(major.is_finite() && *major > *minor) {
                return Err(at.invalid(
                    ".shape.torus.major",
                    format!(
                        "{} is not finite and greater than minor ({})",
                        num(*major),
                        num(*minor)
                    ),
                ));
            }
            count_in(at, ".shape.torus.major_segments", *major_segments, 3..=1024)?;
            count_in(at, ".shape.torus.minor_segments", *minor_segments, 3..=1024)?;
            (
                "torus",
                shapes::torus(*major, *minor, *major_segments, *minor_segments),
            )
        }
        ShapeSpec::Cylinder {
            radius,
            half_height,
            segments,
        } => {
            positive(at, ".shape.cylinder.radius", *radius)?;
            positive(at, ".shape.cylinder.half_height", *half_height)?;
            count_in(at, ".shape.cylinder.segments", *segments, 3..=1024)?;
            (
                "cylinder",
                shapes::cylinder(*radius, *half_height, *segments),
            )
        }
        ShapeSpec::PolygonWheel {
            radius,
            sides,
            half_width,
            sagitta,
            segments,
        } => {
            positive(at, ".shape.polygon_wheel.radius", *radius)?;
            positive(at, ".shape.polygon_wheel.half_width", *half_width)?;
            if !(sagitta.is_finite() && sagitta.abs() < *radius / 2.0) {
                return Err(at.invalid(
                    ".shape.polygon_wheel.sagitta",
                    format!(
                        "|{}| is not below radius/2 ({})",
                        num(*sagitta),
                        num(radius / 2.0)
                    ),
                ));
            }
            count_in(at, ".shape.polygon_wheel.sides", *sides, 3..=1024)?;
            count_in(at, ".shape.polygon_wheel.segments", *segments, 1..=1024)?;
            (
                "polygon_wheel",
                shapes::polygon_wheel(*radius, *sides, *half_width, *sagitta, *segments),
            )
        }
        ShapeSpec::Bolt {
            thread,
            thread_length,
        } => {
            let t = thread_spec(at, ".shape.bolt.thread", thread)?;
            if !(thread_length.is_finite() && *thread_length >= 2.0 * t.pitch) {
                return Err(at.invalid(
                    ".shape.bolt.thread_length",
                    format!(
                        "{} is not finite and at least two pitches",
                        num(*thread_length)
                    ),
                ));
            }
            ("bolt", bolt(&t, *thread_length))
        }
        ShapeSpec::Nut { thread, height } => {
            let t = thread_spec(at, ".shape.nut.thread", thread)?;
            if !(height.is_finite() && *height >= 2.0 * t.pitch) {
                return Err(at.invalid(
                    ".shape.nut.height",
                    format!("{} is not finite and at least two pitches", num(*height)),
                ));
            }
            ("nut", nut(&t, *height))
        }
    };
    result.map_err(|source| SceneError::Shape {
        file: at.file.to_path_buf(),
        field: at.field(&format!(".shape.{variant}")),
        body: spec.name.clone(),
        source: Box::new(source),
    })
}

/// Checks a scene's thread (`field` is its JSON path after `bodies[i]`) and turns it into a
/// [`ThreadSpec`].
fn thread_spec(at: &BodyAt, field: &str, t: &ThreadShape) -> Result<ThreadSpec, SceneError> {
    let sub = |name: &str| format!("{field}.{name}");
    if !(t.pitch.is_finite() && t.pitch > 0.0) {
        return Err(at.invalid(
            &sub("pitch"),
            format!("{} is not finite and > 0", num(t.pitch)),
        ));
    }
    if !(t.major_diameter.is_finite() && t.major_diameter > 2.0 * t.pitch) {
        return Err(at.invalid(
            &sub("major_diameter"),
            format!(
                "{} is not finite and more than two pitches ({})",
                num(t.major_diameter),
                num(2.0 * t.pitch)
            ),
        ));
    }
    if !(t.clearance.is_finite() && t.clearance >= 0.0 && t.clearance < t.pitch / 8.0) {
        return Err(at.invalid(
            &sub("clearance"),
            format!(
                "{} is not in [0, pitch/8 = {})",
                num(t.clearance),
                num(t.pitch / 8.0)
            ),
        ));
    }
    if !(t.columns.is_multiple_of(16) && (16..=1024).contains(&t.columns)) {
        return Err(at.invalid(
            &sub("columns"),
            format!("{} is not a multiple of 16 in 16..=1024", t.columns),
        ));
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
        let mut touching_steps = 0;
        for _ in 0..150 {
            built.simulation.step();
            let volumes = &built.simulation.world().last_contacts().volumes;
            touching_steps += usize::from(volumes.iter().any(|v| v.body_a == 1 || v.body_b == 1));
        }
        let b = &built.simulation.bodies()[2];
        // Top of the table at z = 0.5, box half height 0.25: centre at 0.75 (within the
        // volume slop).
        assert!((b.position.z - 0.75).abs() < 5e-3, "{}", b.position);
        assert!(b.linear_velocity.length() < 1e-2, "{}", b.linear_velocity);
        // Held by volume contacts with the table (until it sleeps).
        assert!(
            touching_steps > 20,
            "{touching_steps} steps with table contacts"
        );
    }

    /// Primitive shapes in a scene file: a ball, a capsule lying down, a box and a cylinder
    /// standing dropped on the plane rest at their closed-form heights (radius, radius, half
    /// height, half height) within 2 mm; their masses are the closed forms; a bad dimension is
    /// refused naming its field.
    #[test]
    fn primitive_shapes_in_a_scene_rest_at_their_heights() {
        let text = r#"{
            "planes": [{ "normal": [0, 0, 1] }],
            "bodies": [
                { "name": "ball", "shape": { "primitive": { "sphere": { "radius": 0.2 } } },
                  "position": [0, 0, 0.5] },
                { "name": "capsule", "shape": { "primitive": { "capsule":
                    { "half_length": 0.3, "radius": 0.1 } } }, "position": [1, 0, 0.5] },
                { "name": "box", "shape": { "primitive": { "cuboid":
                    { "half_extents": [0.2, 0.3, 0.25] } } }, "position": [-1, 0, 0.6] },
                { "name": "drum", "shape": { "primitive": { "cylinder":
                    { "half_height": 0.15, "radius": 0.2 } } },
                  "orientation": [0.7071067811865476, 0, 0, 0.7071067811865476],
                  "position": [0, 1, 0.6] }
            ]
        }"#;
        let mut built = Scene::from_json(text, Path::new("p.json"))
            .unwrap()
            .build()
            .unwrap();
        let ball = &built.simulation.bodies()[1];
        let want = 1000.0 * 4.0 / 3.0 * std::f64::consts::PI * f64::from(0.2f32).powi(3);
        assert!((ball.mass() - want).abs() < 1e-9 * want, "{}", ball.mass());
        for _ in 0..240 {
            built.simulation.step();
        }
        let heights = [0.2, 0.1, 0.25, 0.15];
        for (k, h) in heights.iter().enumerate() {
            let b = &built.simulation.bodies()[k + 1];
            assert!(
                (b.position.z - h).abs() < 2e-3,
                "{}: centre at {}",
                built.names[k + 1],
                b.position
            );
            assert!(b.linear_velocity.length() < 1e-2, "{}", built.names[k + 1]);
        }
        let bad = r#"{ "bodies": [ { "name": "b",
            "shape": { "primitive": { "capsule": { "half_length": 0.3, "radius": -1 } } } } ] }"#;
        let e = Scene::from_json(bad, Path::new("p.json"))
            .and_then(|s| s.build().map(|_| ()))
            .unwrap_err()
            .to_string();
        assert!(e.contains(".shape.primitive.capsule.radius"), "{e}");
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
        // Paths, body names and limits: one of each kind of refusal.
        let two = |second: &str| {
            format!(
                r#"{{ "bodies": [ {{ "name": "ok", "shape": {{ "cuboid": {{ "half_extents": [1, 1, 1] }} }} }},
                                  {{ "name": "bad", {second} }} ] }}"#
            )
        };
        for (second, expected) in [
            (
                r#""shape": { "icosphere": { "radius": 1e300, "subdivisions": 1 } }"#,
                "s.json: bodies[1].shape.icosphere.radius: 1e300 exceeds the f32 range (±3.4028235e38) at line 2",
            ),
            (
                r#""shape": { "icosphere": { "radius": 1e-50, "subdivisions": 1 } }"#,
                "s.json: bodies[1].shape.icosphere.radius: 1e-50 is below the smallest f32",
            ),
            (
                r#""shape": { "cuboid": { "half_extents": [1, 0, 1] } }"#,
                "s.json: bodies[1].shape.cuboid.half_extents[1] (body 'bad'): 0 is not finite and > 0",
            ),
            (
                r#""shape": { "torus": { "major": 1, "minor": 1, "major_segments": 8, "minor_segments": 8 } }"#,
                "s.json: bodies[1].shape.torus.major (body 'bad'): 1 is not finite and greater than minor (1)",
            ),
            (
                r#""shape": { "cylinder": { "radius": 1, "half_height": 1, "segments": 4294967296 } }"#,
                "s.json: bodies[1].shape.cylinder.segments: invalid value: integer `4294967296`",
            ),
            (
                r#""shape": { "torus": { "major": 2e4, "minor": 1, "major_segments": 8, "minor_segments": 8 } }"#,
                "s.json: bodies[1].shape.torus (body 'bad'): torus: major = 20000.0: is more than 1e4 × minor (1.0)",
            ),
            (
                r#""position": [0, 0, 1], "density": 0, "shape": { "cuboid": { "half_extents": [1, 1, 1] } }"#,
                "s.json: bodies[1].density (body 'bad'): 0 is not finite and > 0",
            ),
            (
                r#""shape": { "nut": { "thread": { "major_diameter": 10, "pitch": 1.5, "columns": 17 }, "height": 8 } }"#,
                "s.json: bodies[1].shape.nut.thread.columns (body 'bad'): 17 is not a multiple of 16",
            ),
        ] {
            let e = err(&two(second));
            assert!(e.starts_with(expected), "{e}\nexpected {expected}");
        }
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

    /// Property tests (proptest): scene JSON and scene structs with arbitrary and structured
    /// random values never panic when read or built, and every refusal names the scene file and
    /// the field (`bodies[k]…`, or the world setting). 256 cases by default; `PROPTEST_CASES=N`
    /// raises it (docs/user-guide.md, "Property tests").
    mod proptests {
        use super::*;
        use proptest::prelude::*;

        fn cases(default: u32) -> ProptestConfig {
            let cases = std::env::var("PROPTEST_CASES")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(default);
            ProptestConfig {
                cases,
                failure_persistence: None,
                // The same sample on every run unless PROPTEST_RNG_SEED picks another one.
                rng_seed: match std::env::var("PROPTEST_RNG_SEED") {
                    Ok(_) => ProptestConfig::default().rng_seed,
                    Err(_) => proptest::test_runner::RngSeed::Fixed(0x1A7E_5FE5),
                },
                ..ProptestConfig::default()
            }
        }

        const FILE: &str = "scenes/prop test.json";

        /// JSON values for numeric fields: ordinary, zero, negative, beyond f32, below the
        /// smallest f32, beyond u32, fractional, and not numbers at all.
        fn number() -> impl Strategy<Value = &'static str> {
            // Ordinary values four times in five, so that a good share of the scenes get past
            // the reader to the builder and to `Ok`.
            prop_oneof![
                4 => prop::sample::select(vec!["1", "0.5", "2", "3", "16"]),
                1 => prop::sample::select(vec![
                    "0", "-0.0", "-1", "1e300", "-3.5e38", "3.4e38", "1e-50", "1e-300", "17",
                    "1025", "4294967296", "1.5", "null", "\"x\"", "[]",
                ]),
            ]
        }

        /// Like [`number`] without counts that build large meshes (threads: `thread_length /
        /// (pitch / columns)` rings).
        fn small_number() -> impl Strategy<Value = &'static str> {
            prop_oneof![
                4 => prop::sample::select(vec!["1", "0.5", "2", "3", "1.5"]),
                1 => prop::sample::select(vec!["0", "-1", "1e300", "3.4e38", "1e-50", "null"]),
            ]
        }

        fn thread() -> impl Strategy<Value = String> {
            (
                small_number(),
                small_number(),
                prop_oneof![
                    3 => prop::sample::select(vec!["16", "32"]),
                    1 => prop::sample::select(vec!["17", "0", "4294967296", "-16", "1.5"]),
                ],
                small_number(),
            )
                .prop_map(|(d, p, c, cl)| {
                    format!(
                        r#"{{ "major_diameter": {d}, "pitch": {p}, "columns": {c}, "clearance": {cl} }}"#
                    )
                })
        }

        fn shape() -> impl Strategy<Value = String> {
            prop_oneof![
                (number(), number(), number()).prop_map(|(a, b, c)| format!(
                    r#"{{ "cuboid": {{ "half_extents": [{a}, {b}, {c}] }} }}"#
                )),
                (number(), number()).prop_map(|(r, s)| format!(
                    r#"{{ "icosphere": {{ "radius": {r}, "subdivisions": {s} }} }}"#
                )),
                (number(), number(), number(), number()).prop_map(|(a, b, m, n)| format!(
                    r#"{{ "torus": {{ "major": {a}, "minor": {b}, "major_segments": {m}, "minor_segments": {n} }} }}"#
                )),
                (number(), number(), number()).prop_map(|(r, h, s)| format!(
                    r#"{{ "cylinder": {{ "radius": {r}, "half_height": {h}, "segments": {s} }} }}"#
                )),
                (number(), number(), number(), number(), number()).prop_map(
                    |(r, n, w, s, m)| format!(
                        r#"{{ "polygon_wheel": {{ "radius": {r}, "sides": {n}, "half_width": {w}, "sagitta": {s}, "segments": {m} }} }}"#
                    )
                ),
                (thread(), small_number()).prop_map(|(t, l)| format!(
                    r#"{{ "bolt": {{ "thread": {t}, "thread_length": {l} }} }}"#
                )),
                (thread(), small_number()).prop_map(|(t, h)| format!(
                    r#"{{ "nut": {{ "thread": {t}, "height": {h} }} }}"#
                )),
                Just(r#"{ "file": { "path": "no/such/mesh.obj" } }"#.to_string()),
                Just(r#"{ "sphere": { "radius": 1 } }"#.to_string()),
            ]
        }

        fn body(name: &str, shape: &str, fields: &str) -> String {
            format!(r#"{{ "name": "{name}", "shape": {shape}{fields} }}"#)
        }

        const GOOD_SHAPE: &str = r#"{ "cuboid": { "half_extents": [0.5, 0.5, 0.5] } }"#;

        fn parse_and_build(text: &str) -> Result<BuiltScene, SceneError> {
            Scene::from_json(text, Path::new(FILE)).and_then(|s| s.build())
        }

        proptest! {
            #![proptest_config(cases(256))]

            /// Any text: no panic, and the error names the file.
            #[test]
            fn arbitrary_text_never_panics(text in ".{0,200}") {
                if let Err(e) = parse_and_build(&text) {
                    prop_assert!(e.to_string().starts_with(FILE), "{e}");
                }
            }

            /// Bodies with random shapes and fields among valid ones: built (every solid closed
            /// with a positive volume), or refused naming the file and that body's JSON path.
            #[test]
            fn random_body_is_built_or_refused_by_path(
                k in 0usize..3,
                shape in shape(),
                density in number(),
                friction in number(),
                restitution in prop_oneof![
                    3 => prop::sample::select(vec!["0", "0.5", "1"]),
                    1 => number(),
                ],
                position in number(),
                kind in prop::sample::select(vec!["dynamic", "static", "kinematic"]),
            ) {
                let mut bodies = Vec::new();
                for i in 0..3 {
                    if i == k {
                        let fields = format!(
                            r#", "kind": "{kind}", "density": {density}, "friction": {friction}, "restitution": {restitution}, "position": [0, {position}, 0]"#
                        );
                        bodies.push(body(&format!("b{i}"), &shape, &fields));
                    } else {
                        bodies.push(body(&format!("b{i}"), GOOD_SHAPE, ""));
                    }
                }
                let text = format!(r#"{{ "bodies": [{}] }}"#, bodies.join(", "));
                match parse_and_build(&text) {
                    Ok(built) => {
                        prop_assert_eq!(built.handles.len(), 4);
                        let meshes: Vec<_> = built
                            .simulation
                            .colliders()
                            .iter()
                            .flatten()
                            .filter_map(|c| c.shape.mesh())
                            .collect();
                        prop_assert_eq!(meshes.len(), 3);
                        for m in meshes {
                            prop_assert!(m.solid().volume() > 0.0 && !m.solid().was_reoriented());
                        }
                    }
                    Err(e) => {
                        let shown = e.to_string();
                        prop_assert!(shown.starts_with(FILE), "{shown}");
                        prop_assert!(shown.contains(&format!("bodies[{k}]")), "{shown}\n{text}");
                        if !matches!(e, SceneError::Format { .. }) {
                            prop_assert!(shown.contains(&format!("(body 'b{k}')")), "{shown}");
                        }
                    }
                }
            }

            /// World settings with random values: built, or refused naming the setting.
            #[test]
            fn random_world_settings_are_built_or_refused_by_name(
                dt in number(),
                substeps in number(),
                spacing in number(),
                gravity in number(),
                rays in number(),
            ) {
                let text = format!(
                    r#"{{ "dt": {dt}, "substeps": {substeps}, "volume_spacing": {spacing},
                         "gravity": [0, 0, {gravity}], "max_rays_per_pair": {rays},
                         "bodies": [{}] }}"#,
                    body("b", GOOD_SHAPE, "")
                );
                if let Err(e) = parse_and_build(&text) {
                    let shown = e.to_string();
                    prop_assert!(shown.starts_with(FILE), "{shown}");
                    let named = ["dt", "substeps", "volume_spacing", "gravity", "max_rays_per_pair", "world settings"]
                        .iter()
                        .any(|f| shown.contains(f));
                    prop_assert!(named, "{shown}");
                    prop_assert!(!shown.contains("bodies["), "{shown}");
                }
            }

            /// Scenes made in code can hold what JSON cannot (NaN, infinities): built or refused
            /// naming the field, never a panic.
            #[test]
            fn scene_structs_with_non_finite_values(
                radius in prop_oneof![Just(f32::NAN), Just(f32::INFINITY), Just(-0.0f32), any::<f32>(), 0.1f32..2.0],
                sagitta in prop_oneof![Just(f32::NAN), any::<f32>(), -0.01f32..0.01],
                position in prop_oneof![Just(f64::NAN), Just(f64::NEG_INFINITY), any::<f64>()],
                density in prop_oneof![Just(f64::NAN), Just(f64::INFINITY), any::<f64>(), 1.0f64..1e4],
                gravity in prop_oneof![Just(f64::NAN), any::<f64>()],
            ) {
                let text = format!(r#"{{ "bodies": [{}] }}"#, body("w", GOOD_SHAPE, ""));
                let mut scene = Scene::from_json(&text, Path::new(FILE)).unwrap();
                scene.bodies[0].shape = ShapeSpec::PolygonWheel {
                    radius,
                    sides: 6,
                    half_width: radius,
                    sagitta,
                    segments: 4,
                };
                scene.bodies[0].position[1] = position;
                scene.bodies[0].density = density;
                scene.gravity[2] = gravity;
                match scene.build() {
                    Ok(built) => {
                        let wheel = built.simulation.collider(built.handles[1]);
                        let mesh = wheel.and_then(|c| c.shape.mesh());
                        prop_assert!(mesh.is_some_and(|m| m.solid().volume() > 0.0));
                    }
                    Err(e) => {
                        let shown = e.to_string();
                        prop_assert!(shown.starts_with(FILE), "{shown}");
                        prop_assert!(
                            shown.contains("bodies[0]") || shown.contains("gravity[2]"),
                            "{shown}"
                        );
                    }
                }
            }
        }
    }
}

//! The scene file's JSON schema (`assets/scenes/README.md`): the scene, its bodies, shapes,
//! primitives, thread generators and the world's settings, as serde types with defaults.

use super::*;

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
    /// Joints between named bodies (default none).
    #[serde(default)]
    pub joints: Vec<JointSpec>,
    /// Characters walking paths: the character controller moving kinematic bodies (default
    /// none).
    #[serde(default)]
    pub characters: Vec<CharacterSpec>,
    /// Contact overrides between named bodies, a contact hook written as data: drop a pair's
    /// forces, set its friction or restitution, or move a body's surface (a conveyor belt)
    /// (default none).
    #[serde(default)]
    pub contacts: Vec<ContactSpec>,
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
    pub(super) fn sampling(&self, file: &Path) -> Result<AdaptiveSampling, SceneError> {
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

/// A joint between two named bodies ([`crate::Joint`]), placed in world coordinates at the
/// bodies' initial poses: its frames meet at `anchor` with their X axes along `axis`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JointSpec {
    /// What it locks, with its limits and motor: `"fixed"`, `{"revolute": {"limit": {"min": …,
    /// "max": …}, "motor": {…}}}`, `{"prismatic": {…}}`, `{"spherical": {"swing_limit": …}}`,
    /// `{"distance": {"min": …, "max": …}}`.
    pub kind: JointKind,
    /// The two bodies' names (`"ground"` names the static ground).
    pub bodies: [String; 2],
    /// Where the joint is, world coordinates.
    pub anchor: [f64; 3],
    /// The joint axis (hinge, slide, swing cone), world coordinates; default `[1, 0, 0]`.
    #[serde(default = "x_axis")]
    pub axis: [f64; 3],
    /// The second body's anchor when it differs (a distance joint's other end); default `anchor`.
    #[serde(default)]
    pub anchor_b: Option<[f64; 3]>,
    /// Spring–damper rows instead of rigid ones.
    #[serde(default)]
    pub compliance: Option<JointCompliance>,
    /// Breaking force (N).
    #[serde(default)]
    pub break_force: Option<f64>,
    /// Breaking torque (N·m).
    #[serde(default)]
    pub break_torque: Option<f64>,
    /// Whether the two bodies collide with each other (default false).
    #[serde(default)]
    pub collide_connected: bool,
}

/// A character ([`crate::CharacterController`]) moving a kinematic body of the scene along a
/// path: each step towards its next waypoint at `speed` (the motion across `up`), falling under
/// gravity while off the ground; it takes the next waypoint within 5 cm of this one and stops
/// at the last.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CharacterSpec {
    /// The kinematic body it moves (the capsule's centre is the body's position).
    pub body: String,
    /// The capsule and the walking rules (every field optional; default
    /// [`crate::CharacterController::default`]).
    #[serde(default)]
    pub controller: CharacterController,
    /// The points it walks to, in turn (world coordinates).
    pub waypoints: Vec<[f64; 3]>,
    /// Walking speed, m/s (default 1.5).
    #[serde(default = "default_walk_speed")]
    pub speed: f64,
}

/// A contact override ([`crate::ContactHook`]) for the pairs of two named bodies, `"*"` naming
/// any body; the first entry that matches a pair applies to it.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContactSpec {
    /// The two bodies (`"*"`: any body).
    pub bodies: [String; 2],
    /// Whether the pair exerts contact forces (default true; a dropped pair is still reported).
    #[serde(default = "enabled")]
    pub enabled: bool,
    /// The pair's friction coefficient (default the bodies' combined one).
    #[serde(default)]
    pub friction: Option<f64>,
    /// The pair's restitution, in `[0, 1]` (default the bodies' combined one).
    #[serde(default)]
    pub restitution: Option<f64>,
    /// The first body's surface velocity under what touches it, world axes, m/s (a conveyor
    /// belt; the first body must be named).
    #[serde(default)]
    pub surface_velocity: Option<[f64; 3]>,
}

fn enabled() -> bool {
    true
}

fn default_walk_speed() -> f64 {
    1.5
}

fn x_axis() -> [f64; 3] {
    [1.0, 0.0, 0.0]
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
    /// A straight staircase climbing +x from x = 0, on z = 0, centred on y = 0
    /// ([`interfere_geometry::shapes::staircase`]).
    Staircase {
        /// Number of steps (1 or more).
        steps: u32,
        /// Height of each step.
        #[serde(deserialize_with = "f32_checked")]
        rise: f32,
        /// Depth of each step.
        #[serde(deserialize_with = "f32_checked")]
        tread: f32,
        /// Half the width along y.
        #[serde(deserialize_with = "f32_checked")]
        half_width: f32,
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

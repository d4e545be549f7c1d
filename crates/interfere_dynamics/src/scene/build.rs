//! Building a scene: reading and parsing the file, its settings, and every body's shape (from a
//! file, a generator or a primitive), mass and material, into a [`Simulation`].

use super::*;

/// A scene ready to step: the simulation, and the bodies' names and handles.
pub struct BuiltScene {
    /// The simulation (a static `ground` body carrying the scene's planes comes first).
    pub simulation: Simulation,
    /// Body names, by [`crate::BodyId`] (the ground first).
    pub names: Vec<String>,
    /// Each body's handle, by [`crate::BodyId`].
    pub handles: Vec<BodyHandle>,
    /// The scene's characters, moved before each step by [`BuiltScene::step`].
    pub characters: Vec<SceneCharacter>,
}

/// A character of a scene ([`CharacterSpec`]) and where it is on its path.
pub struct SceneCharacter {
    /// Its kinematic body.
    pub body: BodyHandle,
    /// Its capsule and rules.
    pub controller: CharacterController,
    /// Its path.
    pub waypoints: Vec<DVec3>,
    /// Its walking speed, m/s.
    pub speed: f64,
    /// The waypoint it walks to.
    pub next: usize,
    /// Its speed along `up` (negative: falling).
    fall: f64,
    /// Its last move.
    pub last: Option<CharacterMove>,
}

impl BuiltScene {
    /// One step: every character's move, then [`Simulation::step`].
    pub fn step(&mut self) {
        self.move_characters();
        self.simulation.step();
    }

    /// [`BuiltScene::step`] with another contact stage ([`Simulation::step_with`]).
    pub fn step_with(&mut self, stage: &mut dyn crate::ContactStage) {
        self.move_characters();
        self.simulation.step_with(stage);
    }

    /// Moves each character one step along its path (see [`CharacterSpec`]). A move the
    /// controller refuses (its body gone) leaves that character where it is.
    pub fn move_characters(&mut self) {
        let sim = &mut self.simulation;
        let dt = sim.settings().world.dt;
        let g = sim.settings().world.gravity.length();
        for c in &mut self.characters {
            let up = sim.character_up(&c.controller);
            let Some(at) = sim.body(c.body).map(|b| b.position) else {
                continue;
            };
            let across = |to: DVec3| to - up * to.dot(up);
            let mut to = across(c.waypoints[c.next] - at);
            while to.length() < 0.05 && c.next + 1 < c.waypoints.len() {
                c.next += 1;
                to = across(c.waypoints[c.next] - at);
            }
            let walk = if to.length() < 0.05 {
                DVec3::ZERO
            } else {
                to.normalize() * c.speed.min(to.length() / dt)
            };
            c.fall = if c.last.as_ref().is_some_and(|m| m.grounded) {
                0.0
            } else {
                c.fall - g * dt
            };
            let filter = sim.character_filter(c.body);
            let translation = (walk + up * c.fall) * dt;
            if let Ok(m) = sim.move_character(c.body, &c.controller, translation, &filter) {
                c.last = Some(m);
            }
        }
    }
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
    pub(super) fn file(&self) -> PathBuf {
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
        let world = StepSettings {
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
            Simulation::new(self.settings()?).map_err(|source| SceneError::StepSettings {
                file: file.clone(),
                source,
            })?;
        let mut names = Vec::new();
        let mut handles = Vec::new();
        let ground_body =
            Body::fixed(DVec3::ZERO, DQuat::IDENTITY).map_err(|source| SceneError::Body {
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
            halves.first().map(|h| BodyShape::half_space(*h)),
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
                Some(BodyShape::half_space(*h)),
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
        for (i, spec) in self.joints.iter().enumerate() {
            build_joint(&mut simulation, &file, i, spec, &names, &handles)?;
        }
        let characters = self
            .characters
            .iter()
            .enumerate()
            .map(|(i, spec)| build_character(self, &file, i, spec, &names, &handles))
            .collect::<Result<_, _>>()?;
        let overrides = self
            .contacts
            .iter()
            .enumerate()
            .map(|(i, spec)| build_contact(&file, i, spec, &names, &handles))
            .collect::<Result<Vec<_>, _>>()?;
        if !overrides.is_empty() {
            simulation.set_contact_hook(Some(Box::new(move |pair: &mut crate::HookedPair<'_>| {
                for o in &overrides {
                    if let Some(verdict) = o.apply(pair) {
                        return verdict;
                    }
                }
                true
            })));
        }
        Ok(BuiltScene {
            simulation,
            names,
            handles,
            characters,
        })
    }

    /// The solver's lengths and speeds must be finite and not negative.
    pub(super) fn check_solver(&self, file: &Path) -> Result<(), SceneError> {
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

/// Adds joint `i` between its named bodies.
/// A scene's contact override ([`ContactSpec`]) with its bodies found (`None`: any body).
struct ContactOverride {
    bodies: [Option<BodyHandle>; 2],
    enabled: bool,
    friction: Option<f64>,
    restitution: Option<f64>,
    surface_velocity: Option<DVec3>,
}

impl ContactOverride {
    /// What the override does to `pair` when it matches it: `Some(false)` drops the pair,
    /// `Some(true)` keeps it (with the override's values); `None` when it does not match.
    fn apply(&self, pair: &mut crate::HookedPair<'_>) -> Option<bool> {
        let fits = |x: Option<BodyHandle>, h: BodyHandle| x.is_none_or(|x| x == h);
        let first = if fits(self.bodies[0], pair.a) && fits(self.bodies[1], pair.b) {
            pair.a
        } else if fits(self.bodies[0], pair.b) && fits(self.bodies[1], pair.a) {
            pair.b
        } else {
            return None;
        };
        if !self.enabled {
            return Some(false);
        }
        if self.friction.is_some() {
            pair.friction = self.friction;
        }
        if self.restitution.is_some() {
            pair.restitution = self.restitution;
        }
        if let Some(v) = self.surface_velocity {
            pair.set_surface_velocity(first, v);
        }
        Some(true)
    }
}

/// A scene contact override: named bodies (or `"*"`), a friction not negative, a restitution in
/// `[0, 1]`, a finite surface velocity on a named first body.
fn build_contact(
    file: &Path,
    i: usize,
    spec: &ContactSpec,
    names: &[String],
    handles: &[BodyHandle],
) -> Result<ContactOverride, SceneError> {
    let invalid = |field: &str, reason: String| SceneError::Invalid {
        file: file.to_path_buf(),
        field: format!("contacts[{i}]{field}"),
        body: None,
        reason,
    };
    let mut bodies = [None; 2];
    for (k, name) in spec.bodies.iter().enumerate() {
        if name != "*" {
            let found = names.iter().position(|n| n == name).ok_or_else(|| {
                invalid(
                    &format!(".bodies[{k}]"),
                    format!("no body named '{name}' in the scene (\"*\" names any body)"),
                )
            })?;
            bodies[k] = Some(handles[found]);
        }
    }
    if let Some(f) = spec.friction
        && !(f.is_finite() && f >= 0.0)
    {
        return Err(invalid(
            ".friction",
            format!("{} is not finite and >= 0", num(f)),
        ));
    }
    if let Some(r) = spec.restitution
        && !(0.0..=1.0).contains(&r)
    {
        return Err(invalid(
            ".restitution",
            format!("{} is not in [0, 1]", num(r)),
        ));
    }
    let surface_velocity = spec.surface_velocity.map(DVec3::from_array);
    if let Some(v) = surface_velocity {
        if !v.is_finite() {
            return Err(invalid(".surface_velocity", format!("{v} is not finite")));
        }
        if bodies[0].is_none() {
            return Err(invalid(
                ".bodies[0]",
                "a surface velocity belongs to a named first body, not \"*\"".into(),
            ));
        }
    }
    Ok(ContactOverride {
        bodies,
        enabled: spec.enabled,
        friction: spec.friction,
        restitution: spec.restitution,
        surface_velocity,
    })
}

/// A scene character: its body must be a kinematic body of the scene; its controller, path
/// and speed valid.
fn build_character(
    scene: &Scene,
    file: &Path,
    i: usize,
    spec: &CharacterSpec,
    names: &[String],
    handles: &[BodyHandle],
) -> Result<SceneCharacter, SceneError> {
    let invalid = |field: &str, reason: String| SceneError::Invalid {
        file: file.to_path_buf(),
        field: format!("characters[{i}]{field}"),
        body: Some(spec.body.clone()),
        reason,
    };
    let found = names.iter().position(|n| *n == spec.body).ok_or_else(|| {
        invalid(
            ".body",
            format!("no body named '{}' in the scene", spec.body),
        )
    })?;
    let kinematic = scene
        .bodies
        .iter()
        .find(|b| b.name == spec.body)
        .is_some_and(|b| b.kind == KindSpec::Kinematic);
    if !kinematic {
        return Err(invalid(
            ".body",
            format!(
                "'{}' is not a kinematic body (the controller moves kinematic bodies)",
                spec.body
            ),
        ));
    }
    spec.controller.validate().map_err(|e| match e {
        crate::CharacterError::BadParameter {
            field,
            value,
            reason,
        } => invalid(
            &format!(".controller.{field}"),
            format!("{} is not {reason}", num(value)),
        ),
        other => invalid(".controller", other.to_string()),
    })?;
    if spec.waypoints.is_empty() {
        return Err(invalid(
            ".waypoints",
            "no waypoints: give at least one".into(),
        ));
    }
    let mut waypoints = Vec::with_capacity(spec.waypoints.len());
    for (k, w) in spec.waypoints.iter().enumerate() {
        let p = DVec3::from_array(*w);
        if !p.is_finite() {
            return Err(invalid(
                &format!(".waypoints[{k}]"),
                format!("{p} is not finite"),
            ));
        }
        waypoints.push(p);
    }
    if !(spec.speed.is_finite() && spec.speed > 0.0) {
        return Err(invalid(
            ".speed",
            format!("{} is not finite and > 0", num(spec.speed)),
        ));
    }
    Ok(SceneCharacter {
        body: handles[found],
        controller: spec.controller,
        waypoints,
        speed: spec.speed,
        next: 0,
        fall: 0.0,
        last: None,
    })
}

fn build_joint(
    simulation: &mut Simulation,
    file: &Path,
    i: usize,
    spec: &JointSpec,
    names: &[String],
    handles: &[BodyHandle],
) -> Result<(), SceneError> {
    let invalid = |field: &str, reason: String| SceneError::Invalid {
        file: file.to_path_buf(),
        field: format!("joints[{i}]{field}"),
        body: None,
        reason,
    };
    let mut ends = [handles[0]; 2];
    for (k, name) in spec.bodies.iter().enumerate() {
        let found = names.iter().position(|n| n == name).ok_or_else(|| {
            invalid(
                &format!(".bodies[{k}]"),
                format!("no body named '{name}' in the scene"),
            )
        })?;
        ends[k] = handles[found];
    }
    let anchor = DVec3::from_array(spec.anchor);
    let axis = DVec3::from_array(spec.axis);
    if !anchor.is_finite() {
        return Err(invalid(".anchor", format!("{anchor} is not finite")));
    }
    if !(axis.is_finite() && axis.length() > 1e-12) {
        return Err(invalid(
            ".axis",
            format!("{axis} is not a usable direction"),
        ));
    }
    let (a, b) = (
        simulation.body(ends[0]).expect("inserted"),
        simulation.body(ends[1]).expect("inserted"),
    );
    let mut joint = Joint::at_world(spec.kind, a, b, anchor, axis);
    if let Some(anchor_b) = spec.anchor_b {
        let anchor_b = DVec3::from_array(anchor_b);
        if !anchor_b.is_finite() {
            return Err(invalid(".anchor_b", format!("{anchor_b} is not finite")));
        }
        joint = joint.with_world_anchor_b(b, anchor_b);
    }
    joint.compliance = spec.compliance;
    joint.break_force = spec.break_force;
    joint.break_torque = spec.break_torque;
    joint.collide_connected = spec.collide_connected;
    simulation
        .insert_joint(ends[0], ends[1], joint)
        .map_err(|e| invalid("", e.to_string()))?;
    Ok(())
}

/// Adds a body, naming the field and body when the simulation refuses its state.
pub(super) fn insert(
    simulation: &mut Simulation,
    file: &Path,
    field: &str,
    name: &str,
    body: Body,
    collider: Option<BodyShape>,
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
pub(super) struct BodyAt<'a> {
    file: &'a Path,
    index: usize,
    spec: &'a BodySpec,
}

impl BodyAt<'_> {
    /// The JSON path `bodies[i]` followed by `rest` (`.density`, `.shape.torus.minor`, …).
    pub(super) fn field(&self, rest: &str) -> String {
        format!("bodies[{}]{rest}", self.index)
    }

    /// A [`SceneError::Invalid`] for the field `rest` of this body.
    pub(super) fn invalid(&self, rest: &str, reason: String) -> SceneError {
        SceneError::Invalid {
            file: self.file.to_path_buf(),
            field: self.field(rest),
            body: Some(self.spec.name.clone()),
            reason,
        }
    }
}

/// Builds a primitive body shape, each dimension checked and named.
pub(super) fn build_primitive(at: &BodyAt, p: &PrimitiveSpec) -> Result<Shape, SceneError> {
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

pub(super) fn build_body(at: &BodyAt) -> Result<(Body, BodyShape), SceneError> {
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
        KindSpec::Static => Body::fixed(position, q).map_err(body_err)?,
        KindSpec::Kinematic => Body::kinematic(position, q).map_err(body_err)?,
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
            Body::dynamic(&mass, position, q).map_err(body_err)?
        }
    };
    let body = body
        .with_material(Material::new(spec.friction, spec.restitution))
        .with_velocity(
            DVec3::from_array(spec.velocity),
            DVec3::from_array(spec.angular_velocity),
        );
    Ok((body, BodyShape::from_shape(shape)))
}

/// Builds a body's shape. The scene's limits (segment counts up to 1024, at most 6
/// subdivisions, threads with a sane pitch and clearance) are checked here, field by field;
/// whatever they let through that the generator still refuses (extreme ratios that `f32` cannot
/// represent) comes back as [`SceneError::Shape`], never as a panic.
pub(super) fn build_shape(at: &BodyAt) -> Result<Solid, SceneError> {
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
        ShapeSpec::Staircase {
            steps,
            rise,
            tread,
            half_width,
        } => {
            count_in(at, ".shape.staircase.steps", *steps, 1..=4096)?;
            positive(at, ".shape.staircase.rise", *rise)?;
            positive(at, ".shape.staircase.tread", *tread)?;
            positive(at, ".shape.staircase.half_width", *half_width)?;
            (
                "staircase",
                shapes::staircase(*steps, *rise, *tread, *half_width),
            )
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
pub(super) fn thread_spec(
    at: &BodyAt,
    field: &str,
    t: &ThreadShape,
) -> Result<ThreadSpec, SceneError> {
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

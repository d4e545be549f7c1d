//! Shared harness for the examples: command-line flags, windowed or headless apps, offscreen
//! screenshots and JSON reports.
//!
//! Every example runs windowed by default and headless with
//! `--headless --frames N --screenshot PATH --report PATH`: it then advances exactly one fixed
//! frame of simulated time per update with progress on standard error, renders the last frame
//! offscreen (on the software Vulkan driver where there is no GPU; `--render-every-frame` renders
//! them all), writes the PNG and the report, and exits.

#![allow(dead_code)]

use bevy::asset::RenderAssetUsages;
use bevy::camera::RenderTarget;
use bevy::prelude::*;
use bevy::render::RenderPlugin;
use bevy::render::render_resource::{
    Extent3d, PollType, TextureDimension, TextureFormat, TextureUsages,
};
use bevy::render::renderer::RenderDevice;
use bevy::render::view::screenshot::{Screenshot, ScreenshotCaptured};
use bevy::time::TimeUpdateStrategy;
use bevy::window::ExitCondition;
use bevy::winit::WinitPlugin;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Flags every example understands; unknown flags are kept in `extra` for the scene.
#[derive(Clone, Debug, Default)]
pub struct DemoArgs {
    /// Render offscreen and exit after `frames`.
    pub headless: bool,
    /// Frames to simulate when headless.
    pub frames: u32,
    /// Where to write the PNG (headless).
    pub screenshot: Option<PathBuf>,
    /// Where to write the JSON report.
    pub report: Option<PathBuf>,
    /// Offscreen image size.
    pub width: u32,
    /// Offscreen image size.
    pub height: u32,
    /// Other `--key value` pairs and flags, for the scene.
    pub extra: Vec<(String, Option<String>)>,
}

impl DemoArgs {
    /// Parses `std::env::args`, exiting with a usage message on malformed input.
    pub fn parse(default_frames: u32, scene_help: &str) -> Self {
        let mut args = DemoArgs {
            frames: default_frames,
            width: 960,
            height: 640,
            ..Default::default()
        };
        let mut it = std::env::args().skip(1).peekable();
        let fail = |msg: String| -> ! {
            eprintln!(
                "{msg}\n\nusage: [--headless] [--frames N] [--screenshot PATH] [--report PATH] \
                 [--size WxH] [--render-every-frame]{scene_help}"
            );
            std::process::exit(2)
        };
        while let Some(arg) = it.next() {
            let mut value = |name: &str| -> String {
                it.next()
                    .unwrap_or_else(|| fail(format!("{name} needs a value")))
            };
            match arg.as_str() {
                "--headless" => args.headless = true,
                "--frames" => {
                    let v = value("--frames");
                    args.frames = v
                        .parse()
                        .unwrap_or_else(|_| fail(format!("--frames: '{v}' is not a count")));
                }
                "--screenshot" => args.screenshot = Some(value("--screenshot").into()),
                "--report" => args.report = Some(value("--report").into()),
                "--size" => {
                    let v = value("--size");
                    let parsed = v
                        .split_once('x')
                        .and_then(|(w, h)| Some((w.parse().ok()?, h.parse().ok()?)));
                    match parsed {
                        Some((w, h)) if w > 0 && h > 0 => (args.width, args.height) = (w, h),
                        _ => fail(format!("--size: '{v}' is not WIDTHxHEIGHT")),
                    }
                }
                "--help" | "-h" => fail("help".into()),
                other if other.starts_with("--") => {
                    let v = match it.peek() {
                        Some(next) if !next.starts_with("--") => it.next(),
                        _ => None,
                    };
                    args.extra.push((other.to_string(), v));
                }
                other => fail(format!("unexpected argument '{other}'")),
            }
        }
        args
    }

    /// The value of a scene flag `--name VALUE`.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.extra
            .iter()
            .find(|(k, _)| k == name)
            .and_then(|(_, v)| v.as_deref())
    }

    /// Whether a scene flag `--name` was given.
    pub fn flag(&self, name: &str) -> bool {
        self.extra.iter().any(|(k, _)| k == name)
    }

    /// The narrow-phase backend of `--backend cpu|gpu|gpu-blocking` (default `cpu`); exits with
    /// a message on any other value.
    pub fn backend(&self) -> bevy_interfere::Backend {
        use bevy_interfere::Backend;
        match self.value("--backend").unwrap_or("cpu") {
            "cpu" => Backend::Cpu,
            "gpu" => Backend::Gpu,
            "gpu-blocking" => Backend::GpuBlocking,
            other => {
                eprintln!("--backend: '{other}' is not cpu, gpu or gpu-blocking");
                std::process::exit(2)
            }
        }
    }

    /// The volume contact of `--volume exact|uniform` (default `exact`: no spacing to tune);
    /// `uniform` casts rays every `--spacing` (in the scene's length unit, default
    /// `default_spacing`). Exits with a message on any other value. Also returns the spacing
    /// when rays are used, for the report.
    pub fn volume_method(
        &self,
        default_spacing: f64,
    ) -> (bevy_interfere::prelude::VolumeMethod, Option<f64>) {
        use bevy_interfere::prelude::{MeshSpacing, VolumeMethod};
        match self.value("--volume").unwrap_or("exact") {
            "exact" => {
                if self.value("--spacing").is_some() {
                    eprintln!("--spacing applies to --volume uniform only");
                    std::process::exit(2)
                }
                (VolumeMethod::Exact, None)
            }
            "uniform" => {
                let spacing: f64 = self.parsed("--spacing", default_spacing);
                if !(spacing.is_finite() && spacing > 0.0) {
                    eprintln!("--spacing must be positive, not {spacing}");
                    std::process::exit(2)
                }
                (
                    VolumeMethod::Uniform {
                        spacing: MeshSpacing::Absolute(spacing),
                    },
                    Some(spacing),
                )
            }
            other => {
                eprintln!("--volume: '{other}' is not exact or uniform");
                std::process::exit(2)
            }
        }
    }

    /// What [`Self::volume_method`] chose, for a report: `exact`, or the ray spacing in `unit`.
    pub fn volume_label(spacing: Option<f64>, unit: &str) -> String {
        match spacing {
            Some(h) => format!("uniform rays every {h} {unit}"),
            None => "exact".to_string(),
        }
    }

    /// A parsed scene value, or the default; exits with a message when malformed.
    pub fn parsed<T: std::str::FromStr>(&self, name: &str, default: T) -> T {
        match self.value(name) {
            None => default,
            Some(v) => v.parse().unwrap_or_else(|_| {
                eprintln!("{name}: cannot parse '{v}'");
                std::process::exit(2)
            }),
        }
    }
}

/// The value of `result`, or exits with a message naming the flag `name` it came from
/// (for shapes built from flags, whose generators refuse bad parameters).
pub fn or_exit<T, E: std::fmt::Display>(name: &str, result: Result<T, E>) -> T {
    result.unwrap_or_else(|e| {
        eprintln!("{name}: {e}");
        std::process::exit(2)
    })
}

/// The offscreen image that cameras render into when headless.
#[derive(Resource, Clone)]
pub struct OffscreenTarget(pub Handle<Image>);

/// Builds the base app: windowed `DefaultPlugins`, or headless ones without winit, with
/// synchronous pipeline compilation (no waiting for shaders) and one fixed step of simulated time
/// per update.
pub fn base_app(args: &DemoArgs, title: &str, fixed_hz: f64) -> App {
    let mut app = App::new();
    if args.headless {
        app.add_plugins(
            DefaultPlugins
                .set(WindowPlugin {
                    primary_window: None,
                    exit_condition: ExitCondition::DontExit,
                    ..default()
                })
                .set(RenderPlugin {
                    synchronous_pipeline_compilation: true,
                    ..default()
                })
                .disable::<WinitPlugin>(),
        );
        app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
            1.0 / fixed_hz,
        )));
        // Reproducible reports: every body joins in the step after it is spawned, whatever
        // the machine's speed (large meshes would otherwise join when their hierarchies are
        // built in the background).
        app.insert_resource(bevy_interfere::ColliderPreparation::Blocking);
    } else {
        app.add_plugins(DefaultPlugins.set(WindowPlugin {
            primary_window: Some(Window {
                title: title.into(),
                resolution: (args.width, args.height).into(),
                ..default()
            }),
            ..default()
        }));
    }
    app.insert_resource(Time::<Fixed>::from_hz(fixed_hz));
    if args.headless {
        let mut image = Image::new_uninit(
            Extent3d {
                width: args.width,
                height: args.height,
                depth_or_array_layers: 1,
            },
            TextureDimension::D2,
            TextureFormat::Rgba8UnormSrgb,
            RenderAssetUsages::RENDER_WORLD,
        );
        image.texture_descriptor.usage |=
            TextureUsages::RENDER_ATTACHMENT | TextureUsages::COPY_SRC;
        let handle = app.world_mut().resource_mut::<Assets<Image>>().add(image);
        app.insert_resource(OffscreenTarget(handle));
        app.add_systems(PostStartup, retarget_cameras);
    }
    app
}

/// Points every camera at the offscreen image.
fn retarget_cameras(
    mut commands: Commands,
    target: Res<OffscreenTarget>,
    cameras: Query<Entity, With<Camera>>,
) {
    for camera in &cameras {
        commands
            .entity(camera)
            .insert(RenderTarget::Image(target.0.clone().into()));
    }
}

/// Runs the app: windowed until closed, or headless for `args.frames` updates followed by a
/// screenshot and the report produced by `report` from the final world.
pub fn run(mut app: App, args: &DemoArgs, report: impl FnOnce(&mut World) -> serde_json::Value) {
    if !args.headless {
        app.run();
        return;
    }
    app.finish();
    app.cleanup();
    let render_all = args.flag("--render-every-frame");
    let started = std::time::Instant::now();
    let mut frame_ms = Vec::with_capacity(args.frames as usize);
    let mut progress = interfere_cli::progress::Progress::new("frames", u64::from(args.frames));
    for frame_index in 0..args.frames {
        let frame = std::time::Instant::now();
        app.update();
        if frame_index == 0 && !render_all {
            // Only the screenshot needs pixels: the cameras (spawned at start-up, in this first
            // update) stay off until then, so a headless run costs the simulation, not drawing
            // every frame on a software rasterizer (--render-every-frame draws them all).
            set_cameras_active(&mut app, false);
        }
        wait_for_gpu(&mut app);
        frame_ms.push(frame.elapsed().as_secs_f64() * 1e3);
        progress.tick(1);
    }
    progress.finish();
    let simulated_ms = started.elapsed().as_secs_f64() * 1e3;
    // The report describes the world after the last simulated frame (capturing updates the app
    // a few more times).
    let mut value = report(app.world_mut());
    let mut screenshot_written = None;
    if let Some(path) = &args.screenshot {
        set_cameras_active(&mut app, true);
        screenshot_written = Some(capture(&mut app, path.clone()));
    }
    if let serde_json::Value::Object(map) = &mut value {
        map.insert("frames".into(), args.frames.into());
        map.insert("wall_ms".into(), simulated_ms.into());
        map.insert("frame".into(), frame_summary(&mut frame_ms));
        map.insert("rendered_every_frame".into(), render_all.into());
        if let Some(path) = &args.screenshot {
            map.insert("screenshot".into(), path.display().to_string().into());
            map.insert(
                "screenshot_written".into(),
                screenshot_written.unwrap_or(false).into(),
            );
        }
        if let Some(adapter) = app
            .world()
            .get_resource::<bevy::render::renderer::RenderAdapterInfo>()
        {
            map.insert(
                "adapter".into(),
                format!("{} ({:?})", adapter.name, adapter.backend).into(),
            );
        }
    }
    let text = serde_json::to_string_pretty(&value).expect("report serializes");
    match &args.report {
        Some(path) => {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                let _ = std::fs::create_dir_all(dir);
            }
            if let Err(e) = std::fs::write(path, &text) {
                eprintln!("cannot write the report to {}: {e}", path.display());
                std::process::exit(1);
            }
            println!("report: {}", path.display());
        }
        None => println!("{text}"),
    }
    if screenshot_written == Some(false) {
        eprintln!("the screenshot could not be captured");
        std::process::exit(1);
    }
    if value.get("all_criteria_met") == Some(&serde_json::Value::Bool(false)) {
        eprintln!("the demo's criteria were not met (see the report's \"criteria\")");
        std::process::exit(1);
    }
}

/// Per-step physics figures from [`bevy_interfere::PhysicsStats`] and the collision messages,
/// recorded by [`log_stages`] (add it to `FixedLast`): the part of the report every plugin demo
/// shares.
#[derive(Resource, Default)]
pub struct StageLog {
    /// Whole step (ms).
    pub total_ms: Vec<f64>,
    /// Narrow phase (ms).
    pub narrow_ms: Vec<f64>,
    /// Volume stage (ms).
    pub volume_ms: Vec<f64>,
    /// Solver (ms).
    pub solver_ms: Vec<f64>,
    /// Solver contact constraints built, summed over the substeps.
    pub solver_contacts: Vec<f64>,
    /// Solver velocity sweeps, summed over the substeps.
    pub solver_sweeps: Vec<f64>,
    /// Solver contact updates over all sweeps and substeps.
    pub solver_updates: Vec<f64>,
    /// GPU end to end, on steps that had a GPU answer (ms).
    pub gpu_ms: Vec<f64>,
    /// Volume rays cast.
    pub rays: Vec<f64>,
    /// Most interfering pairs in one step.
    pub max_interfering: usize,
    /// Collision-started messages.
    pub started: usize,
    /// Collision-ended messages.
    pub ended: usize,
    /// The backend asked for at each step.
    pub backends: Vec<&'static str>,
    /// What actually ran the narrow phase and the volumes at each step (`narrow/volume`).
    pub ran: Vec<String>,
    /// CPU fallbacks of the asked backend, with their reasons (first of each kind).
    pub fallbacks: Vec<String>,
    /// Age in steps of the GPU answer used, on steps that used one.
    pub latency_steps: Vec<f64>,
    /// Candidate pairs of each step.
    pub candidate_pairs: Vec<f64>,
    /// Pairs an asynchronous GPU stage left to the CPU at each step (no answer covered them,
    /// or they had moved too far since it).
    pub cpu_decided_pairs: Vec<f64>,
}

/// Records one fixed step into [`StageLog`].
pub fn log_stages(
    stats: Res<bevy_interfere::PhysicsStats>,
    mut log: ResMut<StageLog>,
    mut started: MessageReader<bevy_interfere::CollisionStarted>,
    mut ended: MessageReader<bevy_interfere::CollisionEnded>,
) {
    let st = &stats.step;
    log.total_ms.push(stats.total_ms());
    log.narrow_ms.push(st.narrow_phase_ms);
    log.volume_ms.push(st.volume_ms);
    log.solver_ms.push(st.solver_ms);
    log.solver_contacts.push(st.solver_contacts as f64);
    log.solver_sweeps.push(st.solver_sweeps as f64);
    log.solver_updates.push(st.solver_updates as f64);
    log.rays.push(st.rays as f64);
    if let Some(g) = st.gpu_ms {
        log.gpu_ms.push(g);
    }
    if let Some(n) = st.latency_steps {
        log.latency_steps.push(n as f64);
    }
    log.candidate_pairs.push(st.candidate_pairs as f64);
    log.cpu_decided_pairs.push(st.latency_pairs as f64);
    log.max_interfering = log.max_interfering.max(st.interfering_pairs);
    log.started += started.read().count();
    log.ended += ended.read().count();
    log.backends.push(stats.backend.name());
    log.ran
        .push(format!("{}/{}", st.narrow_backend, st.volume_backend));
    if let Some(why) = &st.fallback
        && !log.fallbacks.contains(why)
    {
        log.fallbacks.push(why.clone());
    }
}

impl StageLog {
    /// The backends asked for, in order, without repeats.
    pub fn backends_used(&self) -> Vec<&'static str> {
        let mut b = self.backends.clone();
        b.dedup();
        b
    }

    /// What actually ran the narrow phase and volumes (`narrow/volume`), in order, without
    /// repeats.
    pub fn stages_ran(&self) -> Vec<String> {
        let mut r = self.ran.clone();
        r.dedup();
        r
    }

    /// The report's common "backend" section: asked, ran, fallbacks, GPU latency.
    pub fn backend_report(&self) -> serde_json::Value {
        let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
        serde_json::json!({
            "asked": self.backends_used(),
            "ran": self.stages_ran(),
            "fallbacks": self.fallbacks,
            "gpu_answer_steps": self.latency_steps.len(),
            "gpu_latency_steps_mean": mean(&self.latency_steps),
            "gpu_latency_steps_max": self.latency_steps.iter().copied().reduce(f64::max),
            "candidate_pairs_mean": mean(&self.candidate_pairs),
            "gpu_pairs_left_to_cpu_mean": mean(&self.cpu_decided_pairs),
        })
    }

    /// Per-step physics timings (ms): the whole step, narrow phase, volume stage, solver and
    /// GPU end to end, each as [`summary`].
    pub fn timing_report(&self) -> serde_json::Value {
        serde_json::json!({
            "steps": self.total_ms.len(),
            "step": summary(&self.total_ms),
            "narrow_phase": summary(&self.narrow_ms),
            "volume": summary(&self.volume_ms),
            "solver": summary(&self.solver_ms),
            "gpu_end_to_end": summary(&self.gpu_ms),
        })
    }

    /// Mean and largest rays per step.
    pub fn rays_per_step(&self) -> (f64, f64) {
        let mean = self.rays.iter().sum::<f64>() / self.rays.len().max(1) as f64;
        (mean, self.rays.iter().copied().fold(0.0, f64::max))
    }
}

/// Each body marked with `M` that has a mesh, with its lowest world-space mesh vertex (y).
pub fn lowest_vertices<M: Component>(world: &mut World) -> Vec<(Entity, f32)> {
    let mut q =
        world.query_filtered::<(Entity, &Transform, &bevy_interfere::ColliderShape), With<M>>();
    q.iter(world)
        .filter_map(|(e, t, shape)| {
            let low = shape
                .solid()?
                .vertices()
                .iter()
                .map(|v| t.transform_point(Vec3::from_array(v.to_array())).y)
                .fold(f32::INFINITY, f32::min);
            Some((e, low))
        })
        .collect()
}

/// The lowest world-space mesh vertex (y) of the bodies marked with `M`; infinity if none.
pub fn lowest_vertex<M: Component>(world: &mut World) -> f32 {
    lowest_of(&lowest_vertices::<M>(world))
}

/// The lowest of [`lowest_vertices`]' per-body lowest points; infinity if none.
pub fn lowest_of(per_body: &[(Entity, f32)]) -> f32 {
    per_body
        .iter()
        .map(|&(_, y)| y)
        .fold(f32::INFINITY, f32::min)
}

/// Mean, median, 95th percentile and maximum of `v` (times in milliseconds), `null` when empty.
pub fn summary(v: &[f64]) -> serde_json::Value {
    quantiles(v, "_ms")
}

/// [`summary`] of counts (keys without a unit).
pub fn count_summary(v: &[f64]) -> serde_json::Value {
    quantiles(v, "")
}

fn quantiles(v: &[f64], unit: &str) -> serde_json::Value {
    if v.is_empty() {
        return serde_json::Value::Null;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let mut out = serde_json::Map::new();
    for (key, x) in [
        ("mean", s.iter().sum::<f64>() / s.len() as f64),
        ("median", s[s.len() / 2]),
        ("p95", s[(s.len() * 95 / 100).min(s.len() - 1)]),
        ("max", s[s.len() - 1]),
    ] {
        out.insert(format!("{key}{unit}"), x.into());
    }
    serde_json::Value::Object(out)
}

/// Mean, median, 95th percentile and maximum of the frame times (one `App::update` and the
/// wait for the GPU queue each), the first tenth left out as warm-up (pipeline compilation).
fn frame_summary(ms: &mut [f64]) -> serde_json::Value {
    let skip = ms.len() / 10;
    let mut value = summary(&ms[skip..]);
    if let serde_json::Value::Object(map) = &mut value {
        map.insert("warm_up_frames_left_out".into(), skip.into());
    }
    value
}

/// Turns every camera on or off.
fn set_cameras_active(app: &mut App, active: bool) {
    let world = app.world_mut();
    let mut cameras = world.query::<&mut Camera>();
    for mut camera in cameras.iter_mut(world) {
        camera.is_active = active;
    }
}

fn wait_for_gpu(app: &mut App) {
    if let Some(device) = app.world().get_resource::<RenderDevice>() {
        let _ = device.wgpu_device().poll(PollType::wait_indefinitely());
    }
}

/// Captures the offscreen image to `path` (PNG), updating until the readback arrives.
fn capture(app: &mut App, path: PathBuf) -> bool {
    let Some(target) = app.world().get_resource::<OffscreenTarget>().cloned() else {
        return false;
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        let _ = std::fs::create_dir_all(dir);
    }
    let done: Arc<Mutex<Option<Result<(), String>>>> = Arc::default();
    let sink = done.clone();
    app.world_mut().spawn(Screenshot::image(target.0)).observe(
        move |captured: On<ScreenshotCaptured>| {
            let result = captured
                .image
                .clone()
                .try_into_dynamic()
                .map_err(|e| e.to_string())
                .and_then(|img| img.to_rgb8().save(&path).map_err(|e| e.to_string()));
            *sink.lock().expect("screenshot lock") = Some(result);
        },
    );
    for _ in 0..20 {
        app.update();
        wait_for_gpu(app);
        if let Some(result) = done.lock().expect("screenshot lock").take() {
            return match result {
                Ok(()) => true,
                Err(e) => {
                    eprintln!("screenshot failed: {e}");
                    false
                }
            };
        }
    }
    false
}

/// A camera looking at `target` from `eye`, with a key light and an ambient term.
pub fn spawn_camera_and_lights(commands: &mut Commands, eye: Vec3, target: Vec3, up: Vec3) {
    commands.spawn((
        Camera3d::default(),
        Transform::from_translation(eye).looking_at(target, up),
    ));
    commands.spawn((
        DirectionalLight {
            illuminance: 9_000.0,
            shadow_maps_enabled: false,
            ..default()
        },
        Transform::from_xyz(1.0, 2.0, 3.0).looking_at(Vec3::ZERO, Vec3::Z),
    ));
    commands.insert_resource(GlobalAmbientLight {
        brightness: 600.0,
        ..default()
    });
}

/// Spawns a static, flat-shaded cuboid of half extents `half` at `at`, with its own collider,
/// and `friction` when given (the body's default otherwise): the slabs, floors and walls of the
/// demos.
pub fn spawn_static_cuboid(
    commands: &mut Commands,
    meshes: &mut Assets<Mesh>,
    name: impl Into<std::borrow::Cow<'static, str>>,
    half: Vec3,
    material: Handle<StandardMaterial>,
    friction: Option<f32>,
    at: Transform,
) -> Entity {
    let solid =
        interfere_geometry::shapes::cuboid(half).expect("the examples' slabs are valid boxes");
    spawn_static_solid(commands, meshes, name, solid, material, friction, at)
}

/// Spawns a static, flat-shaded closed mesh `solid` at `at` with its own collider, and
/// `friction` when given (the body's default otherwise): floors, stairs, ramps and hills.
pub fn spawn_static_solid(
    commands: &mut Commands,
    meshes: &mut Assets<Mesh>,
    name: impl Into<std::borrow::Cow<'static, str>>,
    solid: interfere_geometry::Solid,
    material: Handle<StandardMaterial>,
    friction: Option<f32>,
    at: Transform,
) -> Entity {
    use bevy_interfere::mesh_convert::{Shading, bevy_mesh_from_trimesh};
    use bevy_interfere::prelude::{Collider, Friction, RigidBody};
    let mut entity = commands.spawn((
        Name::new(name),
        RigidBody::Static,
        Mesh3d(meshes.add(bevy_mesh_from_trimesh(&solid, Shading::Flat))),
        MeshMaterial3d(material),
        Collider::solid(solid),
        at,
    ));
    if let Some(f) = friction {
        entity.insert(Friction::new(f));
    }
    entity.id()
}

//! The GPU backends ([`crate::Backend::Gpu`], [`crate::Backend::GpuBlocking`]): the contact stages
//! of `interfere_gpu::contact_stage` (one GPU job per fixed step: CInDeR, Knott & Pai 2003; the
//! triangle traversal of Greß–Zachmann 2004 when asked; every pair's uniform volume, Wang–Faure–Pai
//! 2012 §2.2, in one batched dispatch), registered in [`ContactBackends`] at start-up.
//!
//! Where the jobs run ([`GpuSettings::job_device`]):
//! - When the app renders, on Bevy's render device: the asynchronous stage's executor is pumped
//!   by a system in the render world (non-blocking polls; the CPU part of a finished job runs on
//!   the [`AsyncComputeTaskPool`]), answers come back through a crossbeam channel. Not on a
//!   software rasterizer (lavapipe) unless asked for ([`GpuJobDevice::RenderWorld`]): its queue
//!   runs one submission after another, so Bevy's own frame submission waited for the physics
//!   job and every frame took as long as the job (measured: 0.7–1 s frames in
//!   `falling_meshes --bodies 200 --backend gpu`, against 0.03 s with a device of our own).
//! - Otherwise (`MinimalPlugins`, a server, a software adapter), on a headless device of our own,
//!   with the executor on a worker thread.
//! - A device given as [`InterfereGpuContext`] is used instead of either (tests share one).
//!
//! Both stages exist side by side, so the backend can be switched at run time. [`Plugin::finish`]
//! checks for a device and the kernels' limits; without them it warns, records why in
//! [`GpuSupport`] and switches a GPU backend to the CPU. A job that fails later (device lost)
//! falls back to the CPU for that step inside the simulation.

use crate::settings::Backend;
use crate::step::ContactBackends;
use bevy::prelude::*;
use bevy::render::renderer::{RenderAdapterInfo, RenderDevice, RenderQueue};
use bevy::render::{Render, RenderApp};
use bevy::tasks::AsyncComputeTaskPool;
use interfere_dynamics::{ContactStage, MeshSpacing, StageError, StageInput, StageOutput};
use interfere_gpu::{
    CinderSceneOptions, GpuAsyncContacts, GpuBlockingContacts, GpuContext, GpuStageOptions,
    JobServer,
};
use std::sync::{Arc, Mutex, PoisonError};

/// What the GPU backend found when it started.
#[derive(Resource, Clone, Debug, Default, PartialEq, Eq)]
pub struct GpuSupport {
    /// The adapter in use (name, backend, driver), if any.
    pub adapter: Option<String>,
    /// Whether it is Bevy's render device (otherwise a headless device of our own).
    pub shared_with_renderer: bool,
    /// Why there is no GPU backend, if there is none.
    pub unavailable: Option<String>,
}

/// A device to use for the GPU backends instead of Bevy's render device or a new headless one
/// (insert it before the app finishes; tests share one device this way).
#[derive(Resource, Clone)]
pub struct InterfereGpuContext(pub GpuContext);

/// Settings of the GPU backends (read at every step).
#[derive(Resource, Clone, Debug, PartialEq)]
pub struct GpuSettings {
    /// CInDeR image resolution (pixels along the longer side of a view).
    pub cinder_resolution: u32,
    /// Confirm every pair CInDeR reports without a sampled volume with the exact CPU test
    /// (CInDeR is conservative: its pixels see near misses).
    pub exact_confirm: bool,
    /// GPU volume ray spacing as a fraction of the smaller collider size of a pair (unless
    /// [`crate::PhysicsSettings::volume`] is uniform, whose spacing is then used).
    pub volume_spacing: f64,
    /// Where the asynchronous backend's jobs run (read when the app finishes building).
    pub job_device: GpuJobDevice,
}

impl Default for GpuSettings {
    fn default() -> Self {
        Self {
            cinder_resolution: 256,
            exact_confirm: true,
            volume_spacing: 0.125,
            job_device: GpuJobDevice::Auto,
        }
    }
}

/// Where the asynchronous GPU backend runs its jobs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GpuJobDevice {
    /// Bevy's render device, pumped in the render world, when the app renders on a hardware
    /// adapter; a device of our own on a worker thread otherwise (no renderer, or a software
    /// rasterizer, whose single queue would make the frame wait for the job).
    #[default]
    Auto,
    /// Bevy's render device whenever the app renders (a software rasterizer included).
    RenderWorld,
    /// Always a device of our own on a worker thread.
    Worker,
}

impl GpuJobDevice {
    /// Whether the jobs run in the render world, for an app that `renders` (has a render
    /// device and a render app) on a `software` adapter or not.
    pub fn in_render_world(self, renders: bool, software: bool) -> bool {
        renders
            && match self {
                GpuJobDevice::Auto => !software,
                GpuJobDevice::RenderWorld => true,
                GpuJobDevice::Worker => false,
            }
    }
}

#[cfg(test)]
mod tests {
    use super::GpuJobDevice;

    #[test]
    fn jobs_leave_a_software_renderer_alone_unless_asked() {
        use GpuJobDevice::*;
        // (setting, renders, software) -> in the render world
        let cases = [
            (Auto, true, false, true),
            (Auto, true, true, false),
            (Auto, false, false, false),
            (RenderWorld, true, true, true),
            (RenderWorld, false, false, false),
            (Worker, true, false, false),
        ];
        for (d, renders, software, want) in cases {
            assert_eq!(
                d.in_render_world(renders, software),
                want,
                "{d:?} {renders} {software}"
            );
        }
    }
}

impl GpuSettings {
    fn options(&self) -> GpuStageOptions {
        GpuStageOptions {
            cinder: Some(CinderSceneOptions {
                resolution: self.cinder_resolution,
                ..CinderSceneOptions::default()
            }),
            exact_confirm: self.exact_confirm,
            spacing: MeshSpacing::Relative(self.volume_spacing),
            ..GpuStageOptions::default()
        }
    }
}

/// The options every registered GPU stage reads at its next step (written from [`GpuSettings`]).
#[derive(Resource, Clone, Default)]
struct SharedOptions(Arc<Mutex<GpuStageOptions>>);

/// A GPU stage that takes the current [`GpuSettings`] before each step.
struct Configured<S> {
    stage: S,
    options: Arc<Mutex<GpuStageOptions>>,
}

macro_rules! configured_stage {
    ($t:ty) => {
        impl ContactStage for Configured<$t> {
            fn name(&self) -> &'static str {
                self.stage.name()
            }

            fn run(
                &mut self,
                input: &StageInput<'_>,
                out: &mut StageOutput,
            ) -> Result<(), StageError> {
                *self.stage.options_mut() =
                    *self.options.lock().unwrap_or_else(PoisonError::into_inner);
                self.stage.run(input, out)
            }
        }
    };
}
configured_stage!(GpuAsyncContacts);
configured_stage!(GpuBlockingContacts);

/// The asynchronous stage's executor in the render world.
#[derive(Resource)]
struct RenderJobServer(Mutex<JobServer>);

/// Submits the physics jobs that arrived and polls those in flight, never waiting; the CPU part
/// of finished jobs goes to the async compute pool.
fn pump_render_jobs(server: Res<RenderJobServer>) {
    let work = server
        .0
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .pump();
    for w in work {
        AsyncComputeTaskPool::get()
            .spawn(async move { w.run() })
            .detach();
    }
}

/// Copies [`GpuSettings`] to the stages when it changes.
fn share_settings(settings: Res<GpuSettings>, shared: Res<SharedOptions>) {
    if settings.is_changed() {
        *shared.0.lock().unwrap_or_else(PoisonError::into_inner) = settings.options();
    }
}

/// Adds the GPU backends ([`crate::Backend::Gpu`], [`crate::Backend::GpuBlocking`]).
#[derive(Default)]
pub struct GpuBackendPlugin;

impl Plugin for GpuBackendPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<GpuSupport>()
            .init_resource::<GpuSettings>()
            .init_resource::<SharedOptions>()
            .add_systems(PreUpdate, share_settings);
    }

    fn finish(&self, app: &mut App) {
        if let Err(reason) = start(app) {
            warn!("interfere: no GPU backend ({reason}); the GPU backends fall back to the CPU");
            app.world_mut().resource_mut::<GpuSupport>().unavailable = Some(reason);
            let world = app.world_mut();
            if let Some(mut backend) = world.get_resource_mut::<Backend>()
                && *backend != Backend::Cpu
            {
                *backend = Backend::Cpu;
            }
        }
    }
}

/// Finds a device, builds both stages and registers them.
fn start(app: &mut App) -> Result<(), String> {
    let world = app.world();
    if let Some(reason) = &world.resource::<GpuSupport>().unavailable {
        return Err(reason.clone());
    }
    let given = world.get_resource::<InterfereGpuContext>().cloned();
    let render =
        match (
            world.get_resource::<RenderDevice>(),
            world.get_resource::<RenderQueue>(),
            world.get_resource::<RenderAdapterInfo>(),
        ) {
            (Some(device), Some(queue), Some(info)) if given.is_none() => Some(
                GpuContext::from_parts(device.wgpu_device().clone(), (**queue.0).clone(), &info.0),
            ),
            _ => None,
        };
    let settings = world.resource::<GpuSettings>().clone();
    let software = render
        .as_ref()
        .is_some_and(|ctx| ctx.adapter.device_type == "Cpu");
    let shared_with_renderer = settings.job_device.in_render_world(
        render.is_some() && app.get_sub_app(RenderApp).is_some(),
        software,
    );
    let ctx = match (given, render) {
        (Some(InterfereGpuContext(ctx)), _) => ctx,
        (None, Some(ctx)) if shared_with_renderer => ctx,
        _ => GpuContext::headless().map_err(|e| e.to_string())?,
    };
    let options = settings.options();
    let shared = world.resource::<SharedOptions>().0.clone();
    *shared.lock().unwrap_or_else(PoisonError::into_inner) = options;
    let blocking = GpuBlockingContacts::new(ctx.clone(), options).map_err(|e| e.to_string())?;
    let asynchronous = if shared_with_renderer {
        let (stage, server) =
            GpuAsyncContacts::with_server(ctx.clone(), options).map_err(|e| e.to_string())?;
        let render_app = app
            .get_sub_app_mut(RenderApp)
            .expect("checked above that the render app exists");
        render_app
            .insert_resource(RenderJobServer(Mutex::new(server)))
            .add_systems(Render, pump_render_jobs);
        stage
    } else {
        GpuAsyncContacts::with_worker(ctx.clone(), options).map_err(|e| e.to_string())?
    };
    let world = app.world_mut();
    let mut backends = world.get_resource_or_init::<ContactBackends>();
    backends.register(
        Backend::Gpu,
        Box::new(Configured {
            stage: asynchronous,
            options: shared.clone(),
        }),
    );
    backends.register(
        Backend::GpuBlocking,
        Box::new(Configured {
            stage: blocking,
            options: shared,
        }),
    );
    let a = &ctx.adapter;
    *world.resource_mut::<GpuSupport>() = GpuSupport {
        adapter: Some(a.to_string()),
        shared_with_renderer,
        unavailable: None,
    };
    info!(
        "interfere: GPU backends on {a} ({})",
        if shared_with_renderer {
            "Bevy's render device, jobs pumped in the render world"
        } else {
            "a device of our own, jobs on a worker thread"
        }
    );
    Ok(())
}

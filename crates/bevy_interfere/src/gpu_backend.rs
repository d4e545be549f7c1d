//! The GPU backends (placeholder while the GPU stage is rebuilt on `interfere_gpu::step_job`):
//! the resources the overlay and games read exist, but no stage is registered, so selecting a
//! GPU backend falls back to the CPU with a warning.

use bevy::prelude::*;
use interfere_gpu::GpuContext;

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

/// Settings of the GPU backends.
#[derive(Resource, Clone, Debug, PartialEq)]
pub struct GpuSettings {
    /// CInDeR image resolution (pixels per side).
    pub cinder_resolution: u32,
    /// Confirm every pair CInDeR reports with the exact CPU test (CInDeR is conservative).
    pub exact_confirm: bool,
    /// GPU volume ray spacing as a fraction of the smaller collider size of a pair.
    pub volume_spacing: f64,
}

impl Default for GpuSettings {
    fn default() -> Self {
        Self {
            cinder_resolution: 256,
            exact_confirm: true,
            volume_spacing: 0.125,
        }
    }
}

/// Adds the GPU backends ([`crate::Backend::Gpu`], [`crate::Backend::GpuBlocking`]).
#[derive(Default)]
pub struct GpuBackendPlugin;

impl Plugin for GpuBackendPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<GpuSupport>()
            .init_resource::<GpuSettings>();
    }
}

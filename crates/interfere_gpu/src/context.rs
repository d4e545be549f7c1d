//! The GPU context: an adapter, a device and a queue, made headless for tests and tools or
//! wrapped around a device someone else owns (Bevy's `RenderDevice`).

use crate::error::GpuError;

/// A short description of the adapter in use, for logs and benchmark reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdapterSummary {
    /// The adapter's name, e.g. `llvmpipe (LLVM 15.0.6, 256 bits)`.
    pub name: String,
    /// The backend, e.g. `Vulkan`.
    pub backend: String,
    /// The device type, e.g. `Cpu` for a software rasterizer.
    pub device_type: String,
    /// The driver name and version.
    pub driver: String,
}

impl AdapterSummary {
    /// Builds the summary from wgpu's adapter information.
    pub fn from_info(info: &wgpu::AdapterInfo) -> Self {
        Self {
            name: info.name.clone(),
            backend: format!("{:?}", info.backend),
            device_type: format!("{:?}", info.device_type),
            driver: format!("{} {}", info.driver, info.driver_info)
                .trim()
                .to_string(),
        }
    }
}

impl std::fmt::Display for AdapterSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({}, {}, driver: {})",
            self.name, self.backend, self.device_type, self.driver
        )
    }
}

/// A device and queue with what is known about the adapter behind them.
#[derive(Clone, Debug)]
pub struct GpuContext {
    /// The device.
    pub device: wgpu::Device,
    /// The queue.
    pub queue: wgpu::Queue,
    /// What adapter is in use.
    pub adapter: AdapterSummary,
}

impl GpuContext {
    /// Creates a context without a window: picks the first adapter any enabled backend offers
    /// (software rasterizers included), preferring hardware, and asks for the adapter's own limits
    /// and the optional features the kernels can use (timestamp queries).
    ///
    /// Only the primary backends (Vulkan, Metal, DX12) are searched, since the kernels rely on
    /// compute shaders, occlusion queries and storage buffers that OpenGL ES handles unevenly;
    /// the `WGPU_BACKEND` environment variable overrides the choice (e.g. `WGPU_BACKEND=gl`).
    pub fn headless() -> Result<Self, GpuError> {
        pollster::block_on(Self::headless_async())
    }

    async fn headless_async() -> Result<Self, GpuError> {
        let mut descriptor = wgpu::InstanceDescriptor::new_without_display_handle();
        descriptor.backends = wgpu::Backends::PRIMARY;
        let descriptor = descriptor.with_env();
        let backends = format!("{:?}", descriptor.backends);
        let instance = wgpu::Instance::new(descriptor);
        let adapter = match instance
            .request_adapter(&wgpu::RequestAdapterOptions {
                power_preference: wgpu::PowerPreference::HighPerformance,
                force_fallback_adapter: false,
                compatible_surface: None,
            })
            .await
        {
            Ok(adapter) => adapter,
            Err(_) => return Err(GpuError::NoAdapter { backends }),
        };
        let info = adapter.get_info();
        let summary = AdapterSummary::from_info(&info);
        let optional = wgpu::Features::TIMESTAMP_QUERY
            | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS
            | wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES;
        let required_features = adapter.features() & optional;
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("interfere headless device"),
                required_features,
                required_limits: adapter.limits(),
                experimental_features: wgpu::ExperimentalFeatures::disabled(),
                memory_hints: wgpu::MemoryHints::Performance,
                trace: wgpu::Trace::Off,
            })
            .await
            .map_err(|source| GpuError::RequestDevice {
                adapter: summary.name.clone(),
                source,
            })?;
        log::info!("interfere: GPU adapter {summary}");
        Ok(Self {
            device,
            queue,
            adapter: summary,
        })
    }

    /// Wraps a device and queue someone else created (for example Bevy's render device).
    pub fn from_parts(device: wgpu::Device, queue: wgpu::Queue, info: &wgpu::AdapterInfo) -> Self {
        Self {
            device,
            queue,
            adapter: AdapterSummary::from_info(info),
        }
    }

    /// Whether GPU timestamps can be written inside passes and encoders on this device.
    pub fn has_timestamps(&self) -> bool {
        self.device.features().contains(
            wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS,
        )
    }

    /// Blocks until all submitted work is done.
    pub fn wait(&self) -> Result<(), GpuError> {
        self.device.poll(wgpu::PollType::wait_indefinitely())?;
        Ok(())
    }
}

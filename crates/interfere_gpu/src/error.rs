//! Typed errors for everything that talks to the GPU.

use thiserror::Error;

/// What can go wrong when setting up or running a GPU kernel.
#[derive(Debug, Error)]
pub enum GpuError {
    /// No adapter (hardware or software) was found for any enabled backend.
    #[error(
        "no GPU adapter found (backends tried: {backends}); on Linux without a GPU install Mesa's \
         software Vulkan driver: `apt-get install -y mesa-vulkan-drivers libvulkan1`"
    )]
    NoAdapter {
        /// The backends that were searched.
        backends: String,
    },
    /// The adapter refused to create a device.
    #[error("the GPU adapter '{adapter}' refused to create a device: {source}")]
    RequestDevice {
        /// Name of the adapter.
        adapter: String,
        /// The underlying wgpu error.
        #[source]
        source: wgpu::RequestDeviceError,
    },
    /// A buffer would exceed what the device allows.
    #[error(
        "{what} needs {requested} bytes but the device allows at most {limit} bytes per buffer"
    )]
    BufferTooLarge {
        /// Which buffer.
        what: &'static str,
        /// Bytes asked for.
        requested: u64,
        /// The device limit.
        limit: u64,
    },
    /// A dispatch would exceed the device's workgroup limits.
    #[error(
        "{what} needs {requested} workgroups but the device allows at most {limit} per dimension"
    )]
    DispatchTooLarge {
        /// Which kernel.
        what: &'static str,
        /// Workgroups asked for.
        requested: u64,
        /// The device limit.
        limit: u64,
    },
    /// Mapping a buffer for readback failed.
    #[error("reading back {what} from the GPU failed: {reason}")]
    Readback {
        /// Which buffer.
        what: &'static str,
        /// Why.
        reason: String,
    },
    /// Waiting for the device failed (lost device, timeout).
    #[error("waiting for the GPU failed: {0}")]
    Poll(#[from] wgpu::PollError),
    /// The device does not support a feature a kernel needs.
    #[error("the GPU adapter '{adapter}' lacks {feature}, which {what} needs")]
    MissingFeature {
        /// Name of the adapter.
        adapter: String,
        /// The missing feature.
        feature: &'static str,
        /// The kernel that needs it.
        what: &'static str,
    },
    /// Invalid input given to a kernel.
    #[error("invalid input to {what}: {reason}")]
    InvalidInput {
        /// Which kernel.
        what: &'static str,
        /// Why.
        reason: String,
    },
    /// A traversal step's next pair list would exceed the caller's capacity.
    #[error(
        "GPU pair list overflow after traversal step {step}: {needed} pairs needed, capacity \
         {capacity}"
    )]
    PairListOverflow {
        /// The step whose output did not fit.
        step: usize,
        /// Length the list would have had.
        needed: u64,
        /// The capacity.
        capacity: u32,
    },
    /// A volume query was refused: invalid options or pose, or too many sampling lines (the
    /// same reasons as the CPU reference's `VolumeError`).
    #[error("GPU volume query refused: {0}")]
    Volume(#[from] interfere_geometry::volume::VolumeError),
    /// A sampling line of the GPU volume crossed more triangles of the two meshes than one GPU
    /// thread can hold (`interfere_gpu::volume::MAX_HITS_PER_RAY`).
    #[error(
        "a GPU volume sampling line (axis {axis}, u = {u}, v = {v}) crosses more than {cap} \
         triangles of the two meshes"
    )]
    VolumeHitOverflow {
        /// The line's axis.
        axis: usize,
        /// Its coordinate along axis `(axis + 1) % 3`.
        u: f64,
        /// Its coordinate along axis `(axis + 2) % 3`.
        v: f64,
        /// Hits one thread holds.
        cap: u32,
    },
    /// The device lacks a limit a kernel needs (a device made with lower limits than the
    /// adapter offers, e.g. WebGPU's downlevel defaults).
    #[error(
        "the GPU device on '{adapter}' allows {limit} = {available}, but {what} needs at least \
         {needed}"
    )]
    LimitTooLow {
        /// Name of the adapter.
        adapter: String,
        /// The `wgpu::Limits` field.
        limit: &'static str,
        /// What the device allows.
        available: u64,
        /// What the kernel needs.
        needed: u64,
        /// The kernel that needs it.
        what: &'static str,
    },
    /// wgpu reported an error while recording or submitting GPU work (a validation error, out of
    /// memory, or an internal error; on a lost or destroyed device every new resource is invalid,
    /// so this is also how a lost device shows up).
    #[error("wgpu error during {what}: {message}")]
    Wgpu {
        /// What was being done.
        what: &'static str,
        /// wgpu's description.
        message: String,
    },
    /// The device stopped answering: its queue is empty but a readback never arrived (the
    /// device was lost or destroyed while a job was in flight).
    #[error("the GPU device was lost during {what}: {reason}")]
    DeviceLost {
        /// What was in flight.
        what: &'static str,
        /// What was seen.
        reason: String,
    },
}

//! # interfere_gpu
//!
//! GPU kernels for Interfere, written against a plain [`wgpu::Device`] and [`wgpu::Queue`] so that
//! the same code runs in tests, in the `interfere` command-line tool and inside Bevy's render world.
//! Every kernel has a CPU twin in `interfere_geometry` (or in this crate) and a parity test.
//!
//! Start with [`GpuContext::headless`] to get a device without a window; inside Bevy, wrap the
//! render device with [`GpuContext::from_parts`].
#![deny(missing_docs)]

pub mod bvh_traversal;
pub mod cinder;
mod compute;
pub mod context;
pub mod error;
pub mod readback;
pub mod scan;
pub mod shaders;
pub mod testing;
pub mod volume;

pub use bvh_traversal::{GpuBvhTraversal, GpuTree};
pub use cinder::{Cinder, CinderObject, CinderReport};
pub use context::{AdapterSummary, GpuContext};
pub use error::GpuError;
pub use scan::PrefixSum;
pub use volume::{GpuVolume, GpuVolumeMesh, GpuVolumeReport};

#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

pub use bevy_interfere as bevy_plugin;
pub use interfere_dynamics as dynamics;
pub use interfere_geometry as geometry;
#[cfg(feature = "gpu")]
pub use interfere_gpu as gpu;

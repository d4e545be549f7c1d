//! Interfere: mesh-mesh interference detection, intersection volumes and rigid-body contact for Bevy.
#![deny(missing_docs)]

pub use bevy_interfere as bevy_plugin;
pub use interfere_dynamics as dynamics;
pub use interfere_geometry as geometry;
pub use interfere_gpu as gpu;

//! # bevy_interfere
//!
//! The Bevy plugin for Interfere (under construction): mesh conversion is in place; components,
//! schedules, GPU passes and the debug overlay follow.
#![deny(missing_docs)]

pub mod mesh_convert;

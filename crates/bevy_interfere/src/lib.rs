//! bevy_interfere (under construction).
#![deny(missing_docs)]

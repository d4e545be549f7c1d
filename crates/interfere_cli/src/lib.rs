//! The tooling behind the `interfere` command, as a library the examples share: progress
//! reporting for long runs ([`progress`]) and the small-obstacle study of adaptive against
//! uniform sampling ([`small_obstacle_study`]). The physics lives in `interfere_dynamics`; nothing
//! here is part of a step.
#![deny(missing_docs)]

pub mod progress;
pub mod small_obstacle_study;

//! Sleeping: a dynamic body that has moved slower than the thresholds for long enough stops
//! being simulated (it acts as static: no gravity, no integration, infinite mass) until
//! something wakes it — the game setting its pose or velocity, or an interfering pair with a
//! body that moves.

use serde::{Deserialize, Serialize};

/// When resting bodies go to sleep.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SleepSettings {
    /// Whether bodies sleep at all.
    pub enabled: bool,
    /// Linear speed below which a body counts as resting.
    pub linear_threshold: f64,
    /// Angular speed below which a body counts as resting.
    pub angular_threshold: f64,
    /// Seconds a body must rest before it sleeps.
    pub time_to_sleep: f64,
}

impl Default for SleepSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            linear_threshold: 0.02,
            angular_threshold: 0.05,
            time_to_sleep: 1.0,
        }
    }
}

impl SleepSettings {
    /// Never sleeping (scene files and benches that measure every step).
    pub const NEVER: Self = Self {
        enabled: false,
        linear_threshold: 0.0,
        angular_threshold: 0.0,
        time_to_sleep: f64::INFINITY,
    };
}

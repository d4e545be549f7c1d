//! What the subcommands share when they report: stage timings and JSON on standard output.

use serde::Serialize;
use std::time::Instant;

/// Milliseconds spent in the load, build and query stages of one command.
#[derive(Serialize)]
pub struct Timings {
    /// Reading and validating the input files.
    pub load: f64,
    /// Building hierarchies.
    pub build: f64,
    /// The query itself.
    pub query: f64,
}

/// Milliseconds since `since`.
pub fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1e3
}

/// Prints `value` as pretty JSON.
pub fn print_json(value: &impl Serialize) -> Result<(), String> {
    println!(
        "{}",
        serde_json::to_string_pretty(value).map_err(|e| e.to_string())?
    );
    Ok(())
}

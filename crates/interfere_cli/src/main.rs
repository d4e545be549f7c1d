//! The `interfere` command: interference checks, intersection volumes, headless simulation and
//! benchmarks on OBJ/STL meshes.

mod bench;
mod check;
mod output;
mod pose_arg;
mod simulate;
mod volume;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Interference detection, intersection volumes and rigid-body simulation for triangle meshes.
#[derive(Parser)]
#[command(name = "interfere", version, about)]
struct Cli {
    /// No progress reports on standard error (long commands print them by default: a line
    /// redrawn in place on a terminal, otherwise one line every few seconds and a summary).
    #[arg(long, short, global = true)]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Do two meshes interfere? Exact triangle pairs plus nested-solid detection.
    Check(check::CheckArgs),
    /// Intersection volume of two closed meshes and the force/torque it implies.
    Volume(volume::VolumeArgs),
    /// Runs a scene file headless and writes trajectories and per-step stats.
    Simulate(simulate::SimulateArgs),
    /// Benchmarks, each against the peer or baseline in the same run.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// Lists the GPU adapters wgpu finds and the one Interfere would use.
    GpuInfo,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check(args) => check::run(args),
        Command::Bench(cmd) => bench::run(cmd, cli.quiet),
        Command::Volume(args) => volume::run(args),
        Command::Simulate(args) => simulate::run(args, cli.quiet),
        Command::GpuInfo => gpu_info(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("interfere: {message}");
            ExitCode::FAILURE
        }
    }
}

fn gpu_info() -> Result<(), String> {
    let ctx = interfere_gpu::GpuContext::headless().map_err(|e| e.to_string())?;
    println!("adapter: {}", ctx.adapter);
    println!("timestamp queries: {}", ctx.has_timestamps());
    let limits = ctx.device.limits();
    println!(
        "max storage binding: {} bytes, max workgroups per dimension: {}",
        limits.max_storage_buffer_binding_size, limits.max_compute_workgroups_per_dimension
    );
    Ok(())
}

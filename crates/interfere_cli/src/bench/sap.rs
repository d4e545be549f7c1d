//! `interfere bench sap`: sweep-and-prune (Lin–Manocha 1996, I-COLLIDE) with many coherently
//! moving boxes: the incremental insertion-sort update (with the paper's per-pair axis counters
//! and with our counter-free direct test) against a full re-sort and pair rebuild, same run.

use clap::Args;
use interfere_geometry::sap::bench::bench_sap;

/// Arguments of `interfere bench sap`.
#[derive(Args)]
pub struct SapArgs {
    /// Number of moving boxes.
    #[arg(long, default_value_t = 10_000)]
    boxes: usize,
    /// Timed frames.
    #[arg(long, default_value_t = 100)]
    frames: usize,
    /// Seed of the motion.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// Runs the benchmark and prints the report.
pub fn run(args: SapArgs) -> Result<(), String> {
    if args.boxes == 0 || args.frames == 0 {
        return Err("--boxes and --frames must be at least 1".into());
    }
    let report = bench_sap(args.boxes, args.frames, args.seed);
    print!("{report}");
    if !report.pairs_agree {
        return Err("the sweep-and-prune variants disagreed on the pair set".into());
    }
    Ok(())
}

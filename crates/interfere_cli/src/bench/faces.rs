//! `interfere bench faces`: Kitamura et al. 1995 colliding-face detection on two converging
//! spheres (the paper's experiment): serial against static (round-robin) and dynamic
//! (producer/consumer) parallel load distribution, per thread count, with the speedups.

use clap::Args;
use interfere_geometry::kitamura::bench_spheres;

/// Arguments of `interfere bench faces`.
#[derive(Args)]
pub struct FacesArgs {
    /// Approximate faces per sphere.
    #[arg(long, default_value_t = 4000)]
    faces: usize,
    /// Thread counts to try, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "1,2")]
    threads: Vec<usize>,
    /// Face-octree depth.
    #[arg(long, default_value_t = 3)]
    depth: u32,
    /// Repetitions; the best time of each driver is kept.
    #[arg(long, default_value_t = 10)]
    runs: usize,
}

/// Runs the benchmark.
pub fn run(args: FacesArgs) -> Result<(), String> {
    println!(
        "{:>8} {:>6} {:>11} {:>10} {:>10} {:>10} {:>10} {:>8} {:>8}",
        "faces",
        "thr",
        "candidates",
        "colliding",
        "serial",
        "static",
        "dynamic",
        "x static",
        "x dyn"
    );
    for &threads in &args.threads {
        let r = bench_spheres(args.faces, threads, args.depth, args.runs.max(1))
            .map_err(|e| e.to_string())?;
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        println!(
            "{:>8} {:>6} {:>11} {:>10} {:>10.3} {:>10.3} {:>10.3} {:>8.2} {:>8.2}",
            r.faces_per_sphere,
            threads,
            r.candidates,
            r.colliding,
            ms(r.serial),
            ms(r.static_time),
            ms(r.dynamic_time),
            ms(r.serial) / ms(r.static_time).max(1e-9),
            ms(r.serial) / ms(r.dynamic_time).max(1e-9),
        );
    }
    println!(
        "times in ms (best of {} runs), depth {}",
        args.runs, args.depth
    );
    Ok(())
}

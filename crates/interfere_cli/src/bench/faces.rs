//! `interfere bench faces`: Kitamura et al. 1995 colliding-face detection between two objects
//! moving over one step: serial against static (round-robin) and dynamic (producer/consumer)
//! parallel load distribution, per thread count, with the speedups. By default two converging
//! spheres (the paper's experiment); with `--mesh`, two copies of that mesh scaled into
//! [-1,1]^3 converging along x (centres from ∓start to ∓end, turning 3° about y and z; the
//! second copy faces the first).

use clap::Args;
use interfere_cli::progress::Progress;
use interfere_geometry::glam::{DMat3, DVec3};
use interfere_geometry::kitamura::{
    Detection, KitamuraConfig, KitamuraError, MovingMesh, best_of, converging_spheres, detect,
    detect_dynamic, detect_static,
};
use interfere_geometry::{DPose, MeshOptions, io};
use std::path::PathBuf;

/// Arguments of `interfere bench faces`.
#[derive(Args)]
pub struct FacesArgs {
    /// Approximate faces per sphere (ignored with --mesh).
    #[arg(long, default_value_t = 4000)]
    faces: usize,
    /// Use two copies of this mesh instead of spheres.
    #[arg(long)]
    mesh: Option<PathBuf>,
    /// Thread counts to try, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "1,2")]
    threads: Vec<usize>,
    /// With --mesh: centre distance from the origin at the start of the step.
    #[arg(long, default_value_t = 1.08)]
    start: f64,
    /// With --mesh: centre distance from the origin at the end of the step.
    #[arg(long, default_value_t = 0.97)]
    end: f64,
    /// Face-octree depth.
    #[arg(long, default_value_t = 3)]
    depth: u32,
    /// Repetitions; the best time of each driver is kept.
    #[arg(long, default_value_t = 10)]
    runs: usize,
}

fn pose(x: f64, turn_deg: f64) -> DPose {
    let a = turn_deg.to_radians();
    DPose {
        rotation: DMat3::from_rotation_z(a) * DMat3::from_rotation_y(a),
        translation: DVec3::new(x, 0.0, 0.0),
    }
}

fn objects(args: &FacesArgs) -> Result<(String, [MovingMesh; 2]), String> {
    match &args.mesh {
        None => Ok((
            "two converging spheres".into(),
            converging_spheres(args.faces).map_err(|e| e.to_string())?,
        )),
        Some(path) => {
            let mesh = io::load_mesh(path, &MeshOptions::default())
                .map_err(|e| e.to_string())?
                .normalized_to_unit_cube();
            let (s, e) = (args.start, args.end);
            let a = MovingMesh::from_poses(&mesh, &pose(-s, 0.0), &pose(-e, 3.0))
                .map_err(|e| e.to_string())?;
            let b = MovingMesh::from_poses(&mesh, &pose(s, 180.0), &pose(e, 177.0))
                .map_err(|e| e.to_string())?;
            Ok((
                format!("two converging copies of {}", path.display()),
                [a, b],
            ))
        }
    }
}

fn best_ms(
    runs: usize,
    f: impl FnMut() -> Result<Detection, KitamuraError>,
) -> Result<(f64, Detection), String> {
    let (best, d) = best_of(runs, f).map_err(|e| e.to_string())?;
    Ok((best.as_secs_f64() * 1e3, d))
}

/// Runs the benchmark; progress goes to standard error unless `quiet`.
pub fn run(args: FacesArgs, quiet: bool) -> Result<(), String> {
    let (what, objs) = objects(&args)?;
    let config = KitamuraConfig { depth: args.depth };
    println!(
        "colliding faces: {what} ({} + {} faces), depth {}, best of {} runs",
        objs[0].face_count(),
        objs[1].face_count(),
        args.depth,
        args.runs
    );
    // One untimed run first, so page faults and cold caches do not land on the serial figure.
    detect(&objs, &config).map_err(|e| e.to_string())?;
    let (serial, reference) = best_ms(args.runs, || detect(&objs, &config))?;
    println!(
        "{:>6} {:>11} {:>10} {:>10} {:>10} {:>10} {:>8} {:>8}",
        "thr", "candidates", "colliding", "serial", "static", "dynamic", "x static", "x dyn"
    );
    let mut progress = Progress::unless_quiet("bench faces", args.threads.len() as u64, quiet)
        .unit("thread counts");
    for &threads in &args.threads {
        let (st, ds) = best_ms(args.runs, || detect_static(&objs, &config, threads))?;
        let (dy, dd) = best_ms(args.runs, || detect_dynamic(&objs, &config, threads))?;
        if ds != reference || dd != reference {
            return Err(format!(
                "parallel drivers disagree with serial at {threads} threads"
            ));
        }
        println!(
            "{:>6} {:>11} {:>10} {:>10.3} {:>10.3} {:>10.3} {:>8.2} {:>8.2}",
            threads,
            reference.candidates,
            reference.colliding.len(),
            serial,
            st,
            dy,
            serial / st.max(1e-9),
            serial / dy.max(1e-9),
        );
        progress.tick(1);
    }
    progress.finish();
    println!("times in ms");
    Ok(())
}

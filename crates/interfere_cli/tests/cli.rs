//! End-to-end tests of the `interfere` binary on meshes the test generates.

use interfere_geometry::glam::Vec3;
use interfere_geometry::{io, shapes};
use std::path::PathBuf;
use std::process::Command;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("interfere-cli-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn interfere(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_interfere"))
        .args(args)
        .output()
        .expect("run interfere");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json(stdout: &str) -> serde_json::Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("bad JSON ({e}): {stdout}"))
}

#[test]
fn check_reports_pairs_containment_and_separation_as_json() {
    let dir = temp_dir("check");
    let sphere = dir.join("sphere.obj");
    let cube = dir.join("cube.stl");
    io::save_mesh(shapes::icosphere(1.0, 2).unwrap().mesh(), &sphere).unwrap();
    io::save_mesh(shapes::cuboid(Vec3::splat(0.25)).unwrap().mesh(), &cube).unwrap();
    let (s, c) = (sphere.to_str().unwrap(), cube.to_str().unwrap());

    let mut methods = vec!["obb", "aabb", "bfs", "brute"];
    // The GPU path fails the test under CI=true when there is no adapter, skips it otherwise.
    if interfere_gpu::testing::gpu_or_skip("interfere check --method gpu").is_some() {
        methods.push("gpu");
        methods.push("cinder");
    }
    for method in methods {
        // Overlapping: the cube straddles the sphere's surface.
        let (ok, out, err) = interfere(&[
            "check",
            s,
            c,
            "--pose-b",
            "1,0,0@0,0,1:30",
            "--method",
            method,
            "--all-pairs",
            "--json",
        ]);
        assert!(ok, "{err}");
        let v = json(&out);
        assert_eq!(v["intersecting"], true, "{method}");
        if method == "cinder" {
            // Image space: a boolean per object pair, no triangle pairs.
            assert_eq!(v["pair_count"], 0);
        } else {
            assert!(v["pair_count"].as_u64().unwrap() > 0);
        }
        assert_eq!(
            v["pairs"].as_array().unwrap().len() as u64,
            v["pair_count"].as_u64().unwrap()
        );

        // Nested: no pair crosses, but the cube is inside the sphere.
        let (ok, out, _) = interfere(&["check", s, c, "--method", method, "--json"]);
        assert!(ok);
        let v = json(&out);
        assert_eq!(v["intersecting"], true, "{method} nested");
        if method != "cinder" {
            assert_eq!(v["contained"], "b_inside_a");
        }
        assert_eq!(v["pair_count"], 0);

        // Apart.
        let (ok, out, _) = interfere(&[
            "check", s, c, "--pose-b", "3,0,0", "--method", method, "--json",
        ]);
        assert!(ok);
        let v = json(&out);
        assert_eq!(v["intersecting"], false, "{method} apart");
        assert!(v["contained"].is_null());
    }
}

#[test]
fn bad_files_and_poses_fail_with_a_message_naming_them() {
    let dir = temp_dir("bad");
    let good = dir.join("good.obj");
    io::save_mesh(shapes::cuboid(Vec3::ONE).unwrap().mesh(), &good).unwrap();
    let garbage = dir.join("garbage.stl");
    std::fs::write(
        &garbage,
        b"solid x\n facet normal 0 0 1\n  outer loop\n   vertex 1 2\n",
    )
    .unwrap();
    let g = good.to_str().unwrap();

    let (ok, _, err) = interfere(&["check", g, "/no/such/mesh.obj"]);
    assert!(!ok);
    assert!(err.contains("/no/such/mesh.obj"), "{err}");

    let (ok, _, err) = interfere(&["check", g, garbage.to_str().unwrap()]);
    assert!(!ok);
    assert!(err.contains("garbage.stl"), "{err}");

    let (ok, _, err) = interfere(&["check", g, g, "--pose-b", "1,2,x"]);
    assert!(!ok);
    assert!(
        err.contains("--pose-b: translation '1,2,x': 'x' is not a number"),
        "{err}"
    );
    let (ok, _, err) = interfere(&["check", g, g, "--pose-a", "0,0,0@0,0,1:1e300"]);
    assert!(!ok);
    assert!(
        err.contains("--pose-a: rotation angle '1e300': '1e300' exceeds the f32 range"),
        "{err}"
    );
    // A coordinate beyond f32 in a mesh file: the file, the line and the limit.
    let huge = dir.join("huge.obj");
    std::fs::write(&huge, b"v 0 0 0\nv 1 0 0\nv 0 1e300 0\nv 0 0 1\nf 1 3 2\n").unwrap();
    let (ok, _, err) = interfere(&["check", g, huge.to_str().unwrap()]);
    assert!(!ok);
    assert!(
        err.contains("huge.obj: line 3: vertex coordinate 1e300 exceeds the f32 range"),
        "{err}"
    );

    let unknown = dir.join("mesh.ply");
    std::fs::write(&unknown, b"ply\n").unwrap();
    let (ok, _, err) = interfere(&["check", g, unknown.to_str().unwrap()]);
    assert!(!ok);
    assert!(err.contains("mesh.ply"), "{err}");
}

#[test]
fn volume_of_two_offset_cubes_is_exact_and_pushes_them_apart() {
    let dir = temp_dir("volume");
    let cube = dir.join("cube.obj");
    io::save_mesh(shapes::cuboid(Vec3::splat(0.5)).unwrap().mesh(), &cube).unwrap();
    let c = cube.to_str().unwrap();
    let (ok, out, err) = interfere(&["volume", c, c, "--pose-b", "0.5,0,0", "--json"]);
    assert!(ok, "{err}");
    let v = json(&out);
    let volume = v["volume"].as_f64().unwrap();
    assert!((volume - 0.5).abs() < 1e-9, "{volume}");
    let fb = v["on_b"]["force"][0].as_f64().unwrap();
    let fa = v["on_a"]["force"][0].as_f64().unwrap();
    // -dV/dx of B: V = 1 - x for the offset x, so the force on B is +1 along x, on A -1.
    assert!(
        (fb - 1.0).abs() < 1e-6 && (fa + 1.0).abs() < 1e-6,
        "{fa} {fb}"
    );

    // Adaptive sampling honours the tolerance on a rotated overlap (exact value by the uniform
    // method's limit is not needed: a cube rotated about z by 45° around the shared centre
    // line of the offset cubes keeps the overlap a convex prism whose volume the uniform
    // sampler at a fine resolution pins to 1e-6).
    let pose = "0.5,0.1,0@0,0,1:30";
    let (ok, out, err) = interfere(&[
        "volume",
        c,
        c,
        "--pose-b",
        pose,
        "--resolution",
        "512",
        "--json",
    ]);
    assert!(ok, "{err}");
    let fine = json(&out)["volume"].as_f64().unwrap();
    // The uniform sampler estimates its error, and `--fit` (a first pass finding the extent)
    // converges to the same volume.
    let (ok, out, err) = interfere(&[
        "volume",
        c,
        c,
        "--pose-b",
        pose,
        "--resolution",
        "48",
        "--fit",
        "6",
        "--json",
    ]);
    assert!(ok, "{err}");
    let v = json(&out);
    let (fitted, estimate) = (
        v["volume"].as_f64().unwrap(),
        v["estimated_error"].as_f64().unwrap(),
    );
    assert!((fitted - fine).abs() < 2e-3 * fine, "{fitted} vs {fine}");
    assert!(estimate > 0.0 && estimate < 0.05 * fine, "{estimate}");
    assert_eq!(v["rays"], 3 * (36 + 48 * 48));
    // The volume alone from one axis, refined to a relative tolerance: within it, no forces.
    let (ok, out, err) = interfere(&[
        "volume",
        c,
        c,
        "--pose-b",
        pose,
        "--method",
        "one-axis",
        "--resolution",
        "8",
        "--tolerance",
        "0.002",
        "--json",
    ]);
    assert!(ok, "{err}");
    let v = json(&out);
    assert_eq!(v["method"], "one-axis");
    assert_eq!(v["tolerance_met"], true);
    let one = v["volume"].as_f64().unwrap();
    assert!((one - fine).abs() <= 2e-3 * fine, "{one} vs {fine}");
    assert!(v["resolution"].as_u64().unwrap() > 8);
    assert!(v["on_b"].is_null() && v["axis_volumes"].is_null());
    for bad in [
        &["--tolerance", "1e-3abs"][..],
        &["--gpu"],
        &["--spacing", "0.1"],
    ] {
        let mut args = vec!["volume", c, c, "--method", "one-axis"];
        args.extend_from_slice(bad);
        let (ok, _, err) = interfere(&args);
        assert!(!ok && err.contains("one-axis"), "{bad:?}: {err}");
    }
    for (tol, view) in [
        ("3e-2abs", "axes"),
        ("1e-2abs", "axes"),
        ("3e-2abs", "optimised"),
    ] {
        let (ok, out, err) = interfere(&[
            "volume",
            c,
            c,
            "--pose-b",
            pose,
            "--method",
            "adaptive",
            "--tolerance",
            tol,
            "--view",
            view,
            "--json",
        ]);
        assert!(ok, "{err}");
        let v = json(&out);
        let t = v["tolerance"].as_f64().unwrap();
        let got = v["volume"].as_f64().unwrap();
        assert_eq!(v["method"], "adaptive");
        assert!(v["error_bound"].as_f64().unwrap() <= t);
        assert!(
            v["estimated_error"].is_null(),
            "the adaptive method has a bound instead"
        );
        assert!(
            (got - fine).abs() <= t,
            "tolerance {tol}, view {view}: {got} vs {fine}"
        );
    }
    // The GPU volume equals the CPU's (lines too close to call are recast exactly).
    if interfere_gpu::testing::gpu_or_skip("cli volume --gpu").is_some() {
        let (ok, out, err) = interfere(&[
            "volume",
            c,
            c,
            "--pose-b",
            pose,
            "--resolution",
            "64",
            "--json",
        ]);
        assert!(ok, "{err}");
        let cpu = json(&out)["volume"].as_f64().unwrap();
        let (ok, out, err) = interfere(&[
            "volume",
            c,
            c,
            "--pose-b",
            pose,
            "--resolution",
            "64",
            "--gpu",
            "--json",
        ]);
        assert!(ok, "{err}");
        let v = json(&out);
        assert_eq!(v["method"], "uniform-gpu");
        let gpu = v["volume"].as_f64().unwrap();
        assert!((gpu - cpu).abs() <= 1e-6 * cpu, "gpu {gpu} vs cpu {cpu}");
    }
    let (ok, _, err) = interfere(&["volume", c, c, "--method", "adaptive", "--tolerance=-1"]);
    assert!(!ok && err.contains("tolerance"), "{err}");

    // Open meshes are refused by a method that needs closed ones, with the reason.
    let open = dir.join("open.obj");
    let closed = shapes::cuboid(Vec3::splat(0.5)).unwrap().into_mesh();
    let mut tris = closed.triangles().to_vec();
    tris.pop();
    let open_mesh = interfere_geometry::TriMesh::new(closed.vertices().to_vec(), tris).unwrap();
    io::save_mesh(&open_mesh, &open).unwrap();
    let (ok, _, err) = interfere(&["volume", c, open.to_str().unwrap()]);
    assert!(!ok);
    assert!(err.contains("open.obj"), "{err}");
}

#[test]
fn simulate_runs_the_shipped_scene_and_writes_trajectories() {
    let scene = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../assets/scenes/boxes_on_ground.json"
    );
    let dir = temp_dir("simulate");
    let out = dir.join("run.json");
    let (ok, stdout, err) = interfere(&[
        "simulate",
        scene,
        "--steps",
        "240",
        "--json",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    assert!(stdout.contains("dropped"), "{stdout}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(v["stats"].as_array().unwrap().len(), 240);
    let dropped = &v["trajectories"][1];
    let last = dropped.as_array().unwrap().last().unwrap();
    // The dropped box has landed on the plane (centre at half its size, within 5 mm; measured
    // 0.1 mm).
    let z = last["position"][2].as_f64().unwrap();
    assert!((z - 0.5).abs() < 5e-3, "box centre z {z}");
    // The box dropped on the static table rests on it by mesh-mesh volume contact.
    assert_eq!(v["bodies"][5], "on_table");
    let last = v["trajectories"][5]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    let z = last["position"][2].as_f64().unwrap();
    assert!((z - 0.7).abs() < 5e-3, "box on table centre z {z}");

    // Malformed scene: the error names the field.
    let bad = dir.join("bad.json");
    std::fs::write(
        &bad,
        r#"{ "bodies": [ { "name": "x", "shape": { "cuboid": {} } } ] }"#,
    )
    .unwrap();
    let (ok, _, err) = interfere(&["simulate", bad.to_str().unwrap()]);
    assert!(!ok);
    assert!(err.contains("bad.json: bodies[0].shape"), "{err}");
    assert!(err.contains("half_extents"), "{err}");
    // Finite but beyond f32: refused with the limit, not as "not finite".
    std::fs::write(
        &bad,
        r#"{ "bodies": [ { "name": "x", "shape": { "icosphere": { "radius": 1e300, "subdivisions": 1 } } } ] }"#,
    )
    .unwrap();
    let (ok, _, err) = interfere(&["simulate", bad.to_str().unwrap()]);
    assert!(!ok);
    assert!(
        err.contains("bad.json: bodies[0].shape.icosphere.radius: 1e300 exceeds the f32 range"),
        "{err}"
    );
}

#[test]
fn bench_volume_reports_time_and_error_per_resolution() {
    let dir = temp_dir("bench-volume");
    let sphere = dir.join("sphere.obj");
    io::save_mesh(shapes::icosphere(1.0, 3).unwrap().mesh(), &sphere).unwrap();
    let (ok, out, err) = interfere(&[
        "bench",
        "volume",
        "--mesh",
        sphere.to_str().unwrap(),
        "--distances",
        "1,2.5",
        "--resolutions",
        "4,16",
        "--coarse",
        "0,4",
        "--axes",
        "3,1",
        "--tolerance",
        "0.01",
        "--steps",
        "3",
        "--json",
    ]);
    assert!(ok, "{err}");
    let v = json(&out);
    let d = v["distances"].as_array().unwrap();
    assert_eq!(d.len(), 2);
    // Two unit spheres (the icosphere is its own [-1,1]^3 cube) 1 apart overlap in every pose;
    // 2.5 apart never do.
    assert_eq!(d[0]["overlapping_poses"], 3);
    assert_eq!(d[1]["overlapping_poses"], 0);
    // Rows: (R, coarse, axes) = (4, 0, 3), (4, 0, 1), (4, 4, 3), (4, 4, 1), then the same at 16.
    let all = d[0]["resolutions"].as_array().unwrap();
    assert_eq!(all.len(), 8);
    let fitted = &all[6];
    assert_eq!((&fitted["coarse"], &fitted["axes"]), (&4.into(), &3.into()));
    assert!(
        fitted["baseline_mean_ms"].is_null(),
        "no baseline for fitted rows"
    );
    let rays = |r: &serde_json::Value| r["rays_per_query"].as_f64().unwrap();
    assert!(
        rays(fitted) > rays(&all[4]),
        "the first pass's rays are counted"
    );
    // One-axis rows refine to the 1 % tolerance: every pose met it by the sampler's own
    // estimate, from R = 4 upwards, and no pose's actual error against the reference exceeds
    // 1 % (measured: at most 0.48 % at R = 4, 0.06 % at R = 16).
    for one in [&all[1], &all[5]] {
        assert_eq!(one["axes"], 1);
        assert_eq!(one["tolerance"], 0.01);
        assert!(one["baseline_mean_ms"].is_null());
        assert_eq!(one["tolerance_met_share"], 1.0, "{one:?}");
        assert_eq!(one["over_tolerance_share"], 0.0, "{one:?}");
        assert!(
            one["max_relative_error"].as_f64().unwrap() <= 0.01,
            "{one:?}"
        );
    }
    assert!(all[1]["mean_final_resolution"].as_f64().unwrap() > 4.0);
    assert!(
        fitted["max_relative_error"].as_f64().unwrap() < 0.02,
        "{fitted:?}"
    );
    let rows = [all[0].clone(), all[4].clone()];
    let err = |i: usize| rows[i]["max_relative_error"].as_f64().unwrap();
    assert!(
        err(1) < err(0),
        "finer sampling is closer to the reference: {rows:?}"
    );
    assert!(err(1) < 0.02, "{rows:?}");
    assert!(rows[1]["mean_ms"].as_f64().unwrap() > 0.0);
    // The baseline ran (and gave the same volumes, or the bench would have failed).
    assert!(rows[1]["baseline_mean_ms"].as_f64().unwrap() > 0.0);
    // The sampler's error estimate is reported against the actual error.
    assert!(rows[1]["mean_estimated_error"].as_f64().unwrap() > 0.0);
    assert!(
        rows[1]["p95_error_over_estimate"]
            .as_f64()
            .unwrap()
            .is_finite()
    );
    // The exact rows: narrow phase + exact on its pairs (1 and 2 threads), and the fused
    // traversals (1 and 2 threads each), all with the same volume (the bench checks
    // bit-equality), which is the reference of the errors; the peer parry3d ran on the same
    // poses.
    let exact = d[0]["exact"].as_array().unwrap();
    let variants: Vec<&str> = exact
        .iter()
        .map(|e| e["variant"].as_str().unwrap())
        .collect();
    assert_eq!(
        variants,
        [
            "narrow+exact",
            "narrow+exact",
            "fused-obb",
            "fused-obb",
            "fused-aabb",
            "fused-aabb"
        ]
    );
    let threads: Vec<u64> = exact
        .iter()
        .map(|e| e["threads"].as_u64().unwrap())
        .collect();
    assert_eq!(threads, [1, 2, 1, 2, 1, 2]);
    for e in exact {
        assert!(e["mean_ms"].as_f64().unwrap() > 0.0);
        assert!(e["crossing_pairs"].as_f64().unwrap() > 0.0);
        assert_eq!(e["regions"], 1.0);
    }
    assert!(exact[0]["narrow_mean_ms"].as_f64().unwrap() > 0.0);
    assert!(exact[0]["exact_mean_ms"].as_f64().unwrap() > 0.0);
    // Two unit icospheres 1 apart: a lens of the polyhedra, about 1.25 (the balls' lens is
    // 5π/12 = 1.309).
    let mean = d[0]["mean_exact_volume"].as_f64().unwrap();
    assert!((mean - 1.25).abs() < 0.06, "{mean}");
    let parry = &d[0]["parry"];
    assert_eq!(parry["failures"], 0);
    assert!(parry["mean_ms"].as_f64().unwrap() > 0.0);
    // parry3d's f32 boolean agrees with the exact volume to its tolerances.
    assert!(
        parry["max_relative_error"].as_f64().unwrap() < 1e-2,
        "{parry:?}"
    );
    assert_eq!(d[1]["exact"][0]["crossing_pairs"], 0.0);
    // manifold3d is an outside reference only: text, no ratio.
    assert!(
        v["outside_reference"]
            .as_str()
            .unwrap()
            .contains("not run here")
    );
    // Bad arguments are refused with a message.
    let (ok, _, err) = interfere(&[
        "bench",
        "volume",
        "--mesh",
        sphere.to_str().unwrap(),
        "--steps",
        "0",
    ]);
    assert!(!ok && err.contains("--steps"), "{err}");
    let (ok, _, err) = interfere(&[
        "bench",
        "volume",
        "--mesh",
        sphere.to_str().unwrap(),
        "--axes",
        "2",
    ]);
    assert!(!ok && err.contains("--axes"), "{err}");
}

#[test]
fn volume_method_exact_reports_volume_gradient_and_regions() {
    let dir = temp_dir("volume-exact");
    let cube = dir.join("cube.obj");
    io::save_mesh(shapes::cuboid(Vec3::splat(0.5)).unwrap().mesh(), &cube).unwrap();
    let c = cube.to_str().unwrap();
    // Offset by 0.5 along x: V = 1 − x exactly, and the force pushes B along +x.
    let (ok, out, err) = interfere(&[
        "volume", c, c, "--pose-b", "0.5,0,0", "--method", "exact", "--json",
    ]);
    assert!(ok, "{err}");
    let v = json(&out);
    assert_eq!(v["method"], "exact");
    assert!((v["volume"].as_f64().unwrap() - 0.5).abs() < 1e-12, "{v}");
    let fb = v["on_b"]["force"][0].as_f64().unwrap();
    let fa = v["on_a"]["force"][0].as_f64().unwrap();
    assert!(
        (fb - 1.0).abs() < 1e-12 && (fa + 1.0).abs() < 1e-12,
        "{fa} {fb}"
    );
    let regions = v["regions"].as_array().unwrap();
    assert_eq!(regions.len(), 1);
    assert!((regions[0]["normal"][0].as_f64().unwrap() - 1.0).abs() < 1e-12);
    assert!((regions[0]["volume"].as_f64().unwrap() - 0.5).abs() < 1e-12);
    assert!(v["crossing_pairs"].as_u64().unwrap() > 0);
    // With A posed in the world (rotated 90° about z and moved): the same volume; the force on B
    // turns with A's frame (B sits at +y of A in the world now).
    let (ok, out, err) = interfere(&[
        "volume",
        c,
        c,
        "--pose-a",
        "3,0,0@0,0,1:90",
        "--pose-b",
        "3,0.5,0@0,0,1:90",
        "--method",
        "exact",
        "--json",
    ]);
    assert!(ok, "{err}");
    let v = json(&out);
    assert!((v["volume"].as_f64().unwrap() - 0.5).abs() < 1e-6, "{v}");
    let f = &v["on_b"]["force"];
    assert!((f[1].as_f64().unwrap() - 1.0).abs() < 1e-5, "{f}");
    assert!(f[0].as_f64().unwrap().abs() < 1e-5, "{f}");
    // Text output names the regions; sampling options are refused.
    let (ok, out, err) = interfere(&["volume", c, c, "--pose-b", "0.5,0,0", "--method", "exact"]);
    assert!(ok, "{err}");
    assert!(out.contains("(exact)") && out.contains("region 0"), "{out}");
    let (ok, _, err) = interfere(&["volume", c, c, "--method", "exact", "--tolerance", "0.01"]);
    assert!(!ok && err.contains("--method exact"), "{err}");
}

#[test]
fn long_commands_report_progress_on_stderr_unless_quiet() {
    let scene = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../assets/scenes/boxes_on_ground.json"
    );
    // Not a terminal here: one line per interval (none in so short a run) and a summary.
    let (ok, stdout, err) = interfere(&["simulate", scene, "--steps", "20"]);
    assert!(ok, "{err}");
    assert!(stdout.contains("20 steps"), "{stdout}");
    let summary = err.lines().last().unwrap_or_default();
    assert!(
        summary.starts_with("simulate ") && summary.contains(": done, 20 steps in "),
        "{err}"
    );
    assert!(!err.contains('\r') && !err.contains('\x1b'), "{err:?}");
    let (ok, _, err) = interfere(&["simulate", scene, "--steps", "20", "--quiet"]);
    assert!(ok && err.is_empty(), "{err}");
    let (ok, _, err) = interfere(&["-q", "simulate", scene, "--steps", "5"]);
    assert!(ok && err.is_empty(), "{err}");

    // A benchmark with --json: standard output is the JSON alone, progress goes to stderr.
    let dir = temp_dir("bench-build");
    let sphere = dir.join("sphere.obj");
    io::save_mesh(shapes::icosphere(1.0, 3).unwrap().mesh(), &sphere).unwrap();
    let (ok, out, err) = interfere(&[
        "bench",
        "build",
        "--mesh",
        sphere.to_str().unwrap(),
        "--reps",
        "3",
        "--json",
    ]);
    assert!(ok, "{err}");
    let v = json(&out);
    let mesh = &v["meshes"][0];
    assert_eq!(mesh["triangles"], 1280);
    let rows = mesh["rows"].as_array().unwrap();
    let names: Vec<&str> = rows
        .iter()
        .map(|r| r["builder"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "OBBTree, 1 thread",
            "OBBTree, 2 threads",
            "balanced AABB tree",
            "parry3d TriMesh::new (BVH)"
        ]
    );
    for r in rows {
        let (median, min) = (
            r["median_ms"].as_f64().unwrap(),
            r["min_ms"].as_f64().unwrap(),
        );
        assert!(min > 0.0 && min <= median, "{r}");
    }
    assert!(err.contains("bench build: done, 12 builds in"), "{err}");
    let (ok, _, err) = interfere(&["bench", "build", "--reps", "2"]);
    assert!(!ok && err.contains("--mesh"), "{err}");
}

/// `bench coherence`: a bumpy sphere resting on its copy; the coherent query's answers equal the
/// full traversal's (the command fails otherwise), at rest it runs a small part of its box
/// tests, and it reports how many of them were one-axis re-tests.
#[test]
fn bench_coherence_checks_answers_and_reports_both_ways() {
    let dir = temp_dir("bench-coherence");
    let ball = dir.join("bumpy.obj");
    let bumpy = shapes::bumpy_sphere(1.0, 0.2, 5.0, 3, 7).unwrap();
    io::save_mesh(bumpy.mesh(), &ball).unwrap();
    let (ok, out, err) = interfere(&[
        "bench",
        "coherence",
        "--mesh",
        ball.to_str().unwrap(),
        "--steps",
        "6",
        "--threads",
        "2",
        "--json",
    ]);
    assert!(ok, "{err}");
    let v = json(&out);
    let rows = v["rows"].as_array().unwrap();
    let motions: Vec<&str> = rows.iter().map(|r| r["motion"].as_str().unwrap()).collect();
    assert_eq!(motions, ["at rest", "sliding", "turning"]);
    let rest = &rows[0];
    assert!(
        rest["crossing_pairs_mean"].as_f64().unwrap() > 0.0,
        "{rest}"
    );
    let (full, front) = (
        rest["full_box_tests_mean"].as_f64().unwrap(),
        rest["coherent_box_tests_mean"].as_f64().unwrap(),
    );
    assert!(
        front * 5.0 < full,
        "at rest: {front} box tests against {full}"
    );
    // The one-axis re-tests are a part of the box tests, and a turning pair has some.
    for r in rows {
        let axis = r["coherent_axis_tests_mean"].as_f64().unwrap();
        assert!(
            axis <= r["coherent_box_tests_mean"].as_f64().unwrap(),
            "{r}"
        );
    }
    assert!(
        rows[2]["coherent_axis_tests_mean"].as_f64().unwrap() > 0.0,
        "{}",
        rows[2]
    );
    let (ok, _, err) = interfere(&["bench", "coherence", "--steps", "2"]);
    assert!(!ok && err.contains("--mesh"), "{err}");
}

/// `simulate --backend gpu-blocking` and `--backend gpu` run the scene with the GPU contact
/// stages (on lavapipe in CI; skipped loudly without an adapter outside CI) and report GPU answers.
#[test]
fn simulate_runs_the_gpu_backends() {
    if interfere_gpu::testing::gpu_or_skip("simulate_runs_the_gpu_backends").is_none() {
        return;
    }
    let scene = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../assets/scenes/boxes_on_ground.json"
    );
    for backend in ["gpu-blocking", "gpu"] {
        let (ok, out, err) = interfere(&[
            "-q",
            "simulate",
            scene,
            "--steps",
            "30",
            "--backend",
            backend,
            // Paced so that a lavapipe job answers within the stage's latency limit even on a
            // machine busy with other tests.
            "--frame-ms",
            "150",
        ]);
        assert!(ok, "{backend}: {err}");
        assert!(out.contains(&format!("backend {backend}:")), "{out}");
        assert!(out.contains(", 0 fallbacks"), "{backend}: {out}");
        assert!(!out.contains("GPU answers on 0 steps"), "{backend}: {out}");
    }
    let (ok, _, err) = interfere(&["simulate", scene, "--backend", "tpu"]);
    assert!(!ok && err.contains("--backend"), "{err}");
}

/// `bench gpu-job`: the falling heap and `--nut-bolt` pairs, each frame's job checked against
/// the separate GPU calls and the CPU's exact triangle pairs and uniform volume (the command
/// fails when any differ); on lavapipe in CI, skipped loudly without an adapter elsewhere.
#[test]
fn bench_gpu_job_checks_the_heap_and_nut_bolt_pairs_against_the_cpu() {
    if interfere_gpu::testing::gpu_or_skip("bench_gpu_job_checks_the_heap_and_nut_bolt_pairs")
        .is_none()
    {
        return;
    }
    let (ok, out, err) = interfere(&[
        "bench", "gpu-job", "--bodies", "6", "--frames", "2", "--json",
    ]);
    assert!(ok, "{err}");
    let v = json(&out);
    let heap = &v["rows"][0];
    assert_eq!(heap["bodies"], 6);
    assert_eq!(heap["cinder"], true);
    assert!(heap["candidate_pairs"].as_f64().unwrap() > 0.0, "{heap}");
    let (ok, out, err) = interfere(&[
        "bench",
        "gpu-job",
        "--nut-bolt",
        "1",
        "--frames",
        "2",
        "--json",
    ]);
    assert!(ok, "{err}");
    let v = json(&out);
    let row = &v["rows"][0];
    assert_eq!(row["nut_bolt_pairs"], 1);
    assert_eq!(row["bodies"], 2);
    assert_eq!(row["cinder"], false);
    assert_eq!(row["candidate_pairs"].as_f64(), Some(1.0));
    // The nut rests on its flanks 30 µm off the axis: thousands of crossing triangle pairs.
    assert!(row["triangle_pairs"].as_f64().unwrap() > 1000.0, "{row}");
    assert!(row["volume_lines"].as_f64().unwrap() > 100.0, "{row}");
    let (ok, _, err) = interfere(&["bench", "gpu-job", "--nut-bolt", "0"]);
    assert!(!ok && err.contains("--nut-bolt"), "{err}");
}

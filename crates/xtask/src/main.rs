//! `cargo xtask`: project automation that keeps the top level clean.
//!
//! - `cargo xtask test`: checks for a Vulkan loader and driver (installing Mesa's software driver
//!   when running as root with apt-get), then runs rustfmt --check, clippy -D warnings (also on
//!   the plugin and the facade without their `gpu` feature), the
//!   criterion benches' build (`cargo bench --no-run`) and the whole test suite, GPU tests
//!   included.
//! - `cargo xtask demo [--headless] [-- EXTRA ARGS]`: the same check, then builds the nut-and-bolt
//!   example in release mode and runs it: windowed when a display exists, otherwise headless,
//!   writing `target/demo/nut_and_bolt.png` and `target/demo/nut_and_bolt.json`.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const APT_PACKAGES: &[&str] = &["mesa-vulkan-drivers", "libvulkan1"];
const DEMO_EXAMPLE: &str = "nut_and_bolt";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("test") => test(&args[1..]),
        Some("demo") => demo(&args[1..]),
        Some("vulkan") => ensure_vulkan(),
        _ => {
            eprintln!(
                "usage: cargo xtask <command>\n\n\
                 commands:\n  \
                 test [--no-lint] [-- CARGO TEST ARGS]  rustfmt, clippy and rustdoc -D warnings, all tests (GPU included)\n  \
                 demo [--headless] [-- EXAMPLE ARGS]    build and run the nut-and-bolt demo\n  \
                 vulkan                                 check for (and install) the Vulkan loader and a driver"
            );
            Err("unknown or missing command".into())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

type Result<T = ()> = std::result::Result<T, String>;

/// The checkout being worked on: from the `CARGO_MANIFEST_DIR` that `cargo run` (the `xtask`
/// alias) sets at run time, else the one this binary was built from. The run-time value matters
/// when checkouts share a `CARGO_TARGET_DIR`: the binary built for one checkout is then reused
/// for another, and its compile-time path would point at the first.
fn workspace_root() -> PathBuf {
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    manifest_dir
        .ancestors()
        .nth(2)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

fn cargo() -> Command {
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    command.current_dir(workspace_root());
    command
}

fn run(mut command: Command, what: &str) -> Result {
    eprintln!("xtask: running {what}: {command:?}");
    let status = command
        .status()
        .map_err(|e| format!("could not start {what}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{what} failed ({status})"))
    }
}

/// Splits `args` at `--`: flags for xtask before, pass-through arguments after.
fn split_args(args: &[String]) -> (Vec<&str>, Vec<String>) {
    match args.iter().position(|a| a == "--") {
        Some(i) => (
            args[..i].iter().map(String::as_str).collect(),
            args[i + 1..].to_vec(),
        ),
        None => (args.iter().map(String::as_str).collect(), Vec::new()),
    }
}

fn test(args: &[String]) -> Result {
    let (flags, passthrough) = split_args(args);
    ensure_vulkan()?;
    if !flags.contains(&"--no-lint") {
        let mut fmt = cargo();
        fmt.args(["fmt", "--all", "--", "--check"]);
        run(fmt, "rustfmt --check")?;
        let mut clippy = cargo();
        clippy.args([
            "clippy",
            "--workspace",
            "--all-targets",
            "--locked",
            "--",
            "-D",
            "warnings",
        ]);
        run(clippy, "clippy -D warnings")?;
        // The plugin and the facade build without the GPU kernels too (a headless server).
        let mut no_gpu = cargo();
        no_gpu.args([
            "clippy",
            "--locked",
            "-p",
            "bevy_interfere",
            "-p",
            "interfere",
            "--no-default-features",
            "--lib",
            "--",
            "-D",
            "warnings",
        ]);
        run(no_gpu, "clippy -D warnings without the gpu feature")?;
        // The API documentation builds without warnings (no broken or private links); it reuses
        // clippy's checked dependencies, so only rustdoc on the workspace's crates runs.
        let mut doc = cargo();
        doc.args(["doc", "--workspace", "--no-deps", "--locked"])
            .env("RUSTDOCFLAGS", "-D warnings");
        run(doc, "rustdoc -D warnings")?;
    }
    // The criterion benches build (they run with `cargo bench`; docs/benchmarks.md quotes them),
    // in one invocation naming each bench: `--benches` would also build every library's unit
    // tests in release.
    let mut benches = cargo();
    benches.args(["bench", "--no-run", "--locked"]);
    for package in CRITERION_PACKAGES {
        benches.args(["-p", package]);
    }
    for bench in CRITERION_BENCHES {
        benches.args(["--bench", bench]);
    }
    run(benches, "the criterion benches build")?;
    let mut test = cargo();
    test.args(["test", "--workspace", "--locked"]);
    test.args(&passthrough);
    run(test, "the test suite")
}

/// The packages with criterion benches.
const CRITERION_PACKAGES: [&str; 2] = ["interfere_geometry", "interfere_dynamics"];
/// Their benches (each name is unique across the two packages).
const CRITERION_BENCHES: [&str; 4] = [
    "hierarchies",
    "closest_features",
    "colliding_faces",
    "resting_boxes",
];

fn demo(args: &[String]) -> Result {
    let (flags, passthrough) = split_args(args);
    ensure_vulkan()?;
    let mut build = cargo();
    build.args(["build", "--release", "--locked", "--example", DEMO_EXAMPLE]);
    run(build, "the demo build")?;
    let root = workspace_root();
    let target_dir = std::env::var("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root.join("target"));
    let binary = target_dir.join("release/examples").join(DEMO_EXAMPLE);
    let has_display = ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|v| std::env::var(v).is_ok_and(|s| !s.is_empty()));
    let headless = flags.contains(&"--headless") || !has_display;
    let mut command = Command::new(&binary);
    command.current_dir(&root);
    if headless {
        let out = root.join("target/demo");
        std::fs::create_dir_all(&out)
            .map_err(|e| format!("could not create {}: {e}", out.display()))?;
        let png = out.join(format!("{DEMO_EXAMPLE}.png"));
        let json = out.join(format!("{DEMO_EXAMPLE}.json"));
        command
            .arg("--headless")
            .arg("--screenshot")
            .arg(&png)
            .arg("--report")
            .arg(&json);
        command.args(&passthrough);
        if !has_display {
            eprintln!("xtask: no display found (DISPLAY/WAYLAND_DISPLAY unset): running headless");
        }
        // Mesa's Vulkan window-system code prints "XDG_RUNTIME_DIR is invalid or not set" on a
        // machine without a session (a container, CI); a private runtime directory silences it.
        if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
            let runtime = out.join("xdg-runtime");
            std::fs::create_dir_all(&runtime)
                .map_err(|e| format!("could not create {}: {e}", runtime.display()))?;
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700))
                    .map_err(|e| format!("could not restrict {}: {e}", runtime.display()))?;
            }
            command.env("XDG_RUNTIME_DIR", &runtime);
        }
        run(command, "the demo")?;
        println!("screenshot: {}", png.display());
        println!("summary:    {}", json.display());
    } else {
        command.args(&passthrough);
        run(command, "the demo")?;
    }
    Ok(())
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .is_some_and(|s| s.trim() == "0")
}

fn which(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

fn has_vulkan_loader() -> bool {
    let from_ldconfig = Command::new("ldconfig")
        .arg("-p")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .is_some_and(|s| s.contains("libvulkan.so.1"));
    from_ldconfig
        || [
            "/usr/lib/x86_64-linux-gnu",
            "/usr/lib/aarch64-linux-gnu",
            "/usr/lib64",
            "/usr/lib",
            "/usr/local/lib",
        ]
        .iter()
        .any(|dir| Path::new(dir).join("libvulkan.so.1").exists())
}

fn has_vulkan_driver() -> bool {
    for var in ["VK_DRIVER_FILES", "VK_ICD_FILENAMES"] {
        if let Ok(files) = std::env::var(var) {
            return std::env::split_paths(&files).any(|p| p.is_file());
        }
    }
    [
        "/usr/share/vulkan/icd.d",
        "/etc/vulkan/icd.d",
        "/usr/local/share/vulkan/icd.d",
    ]
    .iter()
    .any(|dir| {
        std::fs::read_dir(dir).is_ok_and(|entries| {
            entries
                .flatten()
                .any(|e| e.path().extension().is_some_and(|x| x == "json"))
        })
    })
}

/// Makes sure a Vulkan loader and at least one driver are installed; installs Mesa's software
/// driver (lavapipe) with apt-get when running as root, otherwise prints the exact command.
fn ensure_vulkan() -> Result {
    if cfg!(not(target_os = "linux")) {
        return Ok(());
    }
    let loader = has_vulkan_loader();
    let driver = has_vulkan_driver();
    if loader && driver {
        eprintln!("xtask: Vulkan loader and driver found");
        return Ok(());
    }
    let missing = match (loader, driver) {
        (false, false) => "the Vulkan loader and a Vulkan driver",
        (false, true) => "the Vulkan loader",
        _ => "a Vulkan driver",
    };
    let command = format!(
        "apt-get update && apt-get install -y {}",
        APT_PACKAGES.join(" ")
    );
    if is_root() && which("apt-get") {
        eprintln!("xtask: {missing} missing; installing: {command}");
        let mut update = Command::new("apt-get");
        update.arg("update");
        run(update, "apt-get update")?;
        let mut install = Command::new("apt-get");
        install
            .args(["install", "-y", "--no-install-recommends"])
            .args(APT_PACKAGES)
            .env("DEBIAN_FRONTEND", "noninteractive");
        run(install, "apt-get install")?;
        if has_vulkan_loader() && has_vulkan_driver() {
            return Ok(());
        }
        return Err(format!(
            "{missing} still missing after installing {APT_PACKAGES:?}"
        ));
    }
    let prefix = if is_root() { "" } else { "sudo " };
    Err(format!(
        "{missing} missing. Install Mesa's software Vulkan driver (or your GPU's driver):\n    \
         {prefix}apt-get update && {prefix}apt-get install -y {}",
        APT_PACKAGES.join(" ")
    ))
}

#[cfg(test)]
mod tests {
    //! Architecture guard: within each crate, no top-level module uses a module that uses it
    //! back (`crate::x` paths in code, comments and test modules aside).

    use std::collections::{BTreeMap, BTreeSet};
    use std::path::Path;

    fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                rust_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    /// The `crate::name` paths used in `text`'s code (not in comments, not after a test module).
    fn uses(text: &str) -> BTreeSet<String> {
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or(text);
        let mut found = BTreeSet::new();
        for line in code.lines() {
            let line = line.trim_start();
            if line.starts_with("//") {
                continue;
            }
            for (i, _) in line.match_indices("crate::") {
                let name: String = line[i + 7..]
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    found.insert(name);
                }
            }
        }
        found
    }

    #[test]
    fn no_module_imports_a_module_that_imports_it_back() {
        let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut checked = 0;
        for krate in std::fs::read_dir(&crates).unwrap().flatten() {
            let src = krate.path().join("src");
            if !src.is_dir() {
                continue;
            }
            let mut files = Vec::new();
            rust_files(&src, &mut files);
            let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
            for file in files {
                let rel = file.strip_prefix(&src).unwrap();
                let module = rel
                    .components()
                    .next()
                    .unwrap()
                    .as_os_str()
                    .to_string_lossy()
                    .trim_end_matches(".rs")
                    .to_string();
                if module == "lib" || module == "main" {
                    continue;
                }
                let text = std::fs::read_to_string(&file).unwrap();
                let mut deps = uses(&text);
                deps.remove(&module);
                graph.entry(module).or_default().extend(deps);
            }
            for (a, deps) in &graph {
                for b in deps {
                    let back = graph.get(b).is_some_and(|d| d.contains(a));
                    assert!(
                        !back,
                        "{}: modules `{a}` and `{b}` use each other",
                        krate.path().display()
                    );
                }
            }
            checked += graph.len();
        }
        assert!(checked > 50, "only {checked} modules found");
    }
}

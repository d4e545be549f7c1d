//! Test support: get a GPU context, or decide what to do without one.
//!
//! Under `CI=true` (or `INTERFERE_REQUIRE_GPU=1`) a missing adapter fails the test with the reason;
//! elsewhere the test is skipped with a loud message on standard error. The adapter's name is
//! written once per test binary straight to standard error (not through the test harness's
//! capture), so every test log says which adapter the GPU tests ran on.

use crate::context::GpuContext;
use std::io::Write;
use std::sync::OnceLock;

/// Whether the environment demands a GPU: `CI` is `true`/`1` or `INTERFERE_REQUIRE_GPU` is `1`.
pub fn gpu_required() -> bool {
    let flag = |name: &str| {
        std::env::var(name)
            .map(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true" | "yes"))
            .unwrap_or(false)
    };
    flag("CI") || flag("INTERFERE_REQUIRE_GPU")
}

/// Returns a shared headless context, or `None` (after a loud message) when no adapter exists and
/// the environment does not require one. Panics with the reason when a GPU is required.
pub fn gpu_or_skip(test: &str) -> Option<GpuContext> {
    static CONTEXT: OnceLock<Result<GpuContext, String>> = OnceLock::new();
    let result = CONTEXT.get_or_init(|| match GpuContext::headless() {
        Ok(ctx) => {
            let _ = writeln!(
                std::io::stderr(),
                "interfere GPU tests: using adapter {}",
                ctx.adapter
            );
            Ok(ctx)
        }
        Err(e) => Err(e.to_string()),
    });
    match result {
        Ok(ctx) => Some(ctx.clone()),
        Err(reason) if gpu_required() => panic!(
            "GPU test '{test}' needs a GPU adapter and CI=true/INTERFERE_REQUIRE_GPU=1 forbids \
             skipping: {reason}"
        ),
        Err(reason) => {
            let _ = writeln!(
                std::io::stderr(),
                "\n!!!!!!!! SKIPPING GPU TEST '{test}': {reason}\n!!!!!!!! (set CI=true or \
                 INTERFERE_REQUIRE_GPU=1 to make this a failure)\n"
            );
            None
        }
    }
}

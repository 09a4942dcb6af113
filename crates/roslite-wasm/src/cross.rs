//! The lean host built for another CPU architecture (aarch64) and run under qemu-user on this
//! one: what the cross-architecture migration test and `roslite bench migrate --aarch64` run
//! (docs/migration.md, "Another CPU architecture").
//!
//! The host is linked with Debian's cross linker (`.cargo/config.toml`) and run by
//! `qemu-aarch64 -L /usr/aarch64-linux-gnu`, the aarch64 C library of Debian's
//! libc6-arm64-cross; `cargo xtask test` installs them and the Rust target.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

pub const AARCH64: &str = "aarch64-unknown-linux-gnu";
/// Where Debian's libc6-arm64-cross puts the aarch64 C library and loader: qemu-aarch64's
/// `-L`, for the dynamically linked host.
pub const AARCH64_SYSROOT: &str = "/usr/aarch64-linux-gnu";
pub const CROSS_LINKER: &str = "aarch64-linux-gnu-gcc";
pub const QEMU: &str = "qemu-aarch64";
/// The cargo profile of the aarch64 host: a clean build takes under 4 minutes of a loaded
/// 2-core machine where the release profile's fat LTO takes over 20, and it runs fast enough
/// under qemu.
pub const PROFILE: &str = "dev";
/// The emulated host's callback deadline (`--deadline-ms`): qemu-user runs the aarch64 code
/// about ten times slower than the machine would, and a guest's start (its node, endpoints
/// and their discovery, set up by imports it calls) runs within its deadline.
pub const EMULATED_DEADLINE: Duration = Duration::from_secs(30);

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

/// What of the cross toolchain is missing, with how to get it; empty when all is there.
pub fn missing_toolchain() -> Vec<String> {
    let mut missing = Vec::new();
    if !on_path(CROSS_LINKER) {
        missing.push(format!(
            "{CROSS_LINKER} (Debian package gcc-aarch64-linux-gnu)"
        ));
    }
    if !Path::new(AARCH64_SYSROOT)
        .join("lib/ld-linux-aarch64.so.1")
        .exists()
    {
        missing.push(format!(
            "the aarch64 C library in {AARCH64_SYSROOT} (Debian package libc6-arm64-cross)"
        ));
    }
    if !on_path(QEMU) {
        missing.push(format!("{QEMU} (Debian package qemu-user)"));
    }
    let target_installed = Command::new("rustc")
        .args(["--print", "target-libdir", "--target", AARCH64])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
        .is_some_and(|dir| {
            std::fs::read_dir(dir).is_ok_and(|mut entries| {
                entries.any(|e| {
                    e.is_ok_and(|e| e.file_name().to_string_lossy().starts_with("libstd-"))
                })
            })
        });
    if !target_installed {
        missing.push(format!(
            "Rust's standard library for {AARCH64} (`rustup target add {AARCH64}`)"
        ));
    }
    missing
}

/// `roslite-wasm-host` for aarch64, built (or found up to date) from the workspace at
/// `workspace` into `target_dir`, with the smallest set of features that runs both engines:
/// wasmtime's runtime (`.cwasm` only, no Cranelift) and wasmi (which needs the instrumentation
/// pass), without `definitions`. A target directory of its own, so that a cargo running this
/// does not wait for the lock of the cargo that runs its caller. Returns the program and how
/// long the build took.
///
/// # Errors
/// The toolchain is missing (the message says what and how to get it), or cargo failed.
pub fn build_host(workspace: &Path, target_dir: &Path) -> Result<(PathBuf, Duration), String> {
    let missing = missing_toolchain();
    if !missing.is_empty() {
        return Err(format!(
            "the cross-architecture toolchain is missing: {}",
            missing.join(", ")
        ));
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let started = Instant::now();
    let output = Command::new(&cargo)
        .current_dir(workspace)
        .args(["build", "--profile", PROFILE, "-p", "roslite-wasm"])
        .args(["--no-default-features", "--features", "wasmi"])
        .args(["--bin", "roslite-wasm-host", "--target", AARCH64])
        .arg("--target-dir")
        .arg(target_dir)
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "building the aarch64 host failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    // Cargo's folder of the dev profile is named debug.
    let folder = if PROFILE == "dev" { "debug" } else { PROFILE };
    Ok((
        target_dir
            .join(AARCH64)
            .join(folder)
            .join("roslite-wasm-host"),
        started.elapsed(),
    ))
}

/// A command that runs the aarch64 `program` (from [`build_host`]) under qemu-user with the
/// emulated callback deadline; add the host's other arguments.
pub fn command(program: &Path) -> Command {
    let mut command = Command::new(QEMU);
    command
        .args(["-L", AARCH64_SYSROOT])
        .arg(program)
        .args(["--deadline-ms", &EMULATED_DEADLINE.as_millis().to_string()]);
    command
}

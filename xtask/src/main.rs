//! Project automation: `cargo xtask test` (everything CI checks) and `cargo xtask codegen`.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

mod install;

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  test      install what the tests need, then run rustfmt --check, clippy -D warnings, rustdoc
            -D warnings and every test in the workspace (what CI runs), then fuzz each cargo-fuzz
            target briefly (ROSLITE_FUZZ_SECONDS each, default 20) when nightly Rust is installed
  codegen   regenerate crates/roslite-msgs/src/generated from the vendored interface files
  install   --prefix DIR: the roslite tool, the C ABI libraries, the C/C++/mROS 2 headers and
            the built-in message types, a pkg-config module (roslite) and a CMake package
            (find_package(roslite))
  install-check   install into target/install-check and build and run the C and C++ examples
            against it with CMake and pkg-config (part of `test`)
";

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = workspace_root();
    std::env::set_current_dir(&root)?;
    match args.first().map(String::as_str) {
        Some("test" | "ci") => test(&root),
        Some("codegen") => codegen(&root),
        Some("install") => install::install(&root, &args[1..]),
        Some("install-check") => install::check(&root),
        Some("-h" | "--help") | None => {
            print!("{USAGE}");
            Ok(())
        }
        Some(other) => bail!("unknown xtask command '{other}'\n\n{USAGE}"),
    }
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_owned()
}

fn test(root: &Path) -> Result<()> {
    report_free_disk(root);
    install_prerequisites(root)?;
    step("rustfmt", cargo(&["fmt", "--all", "--check"]))?;
    step(
        "clippy",
        cargo(&[
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ]),
    )?;
    // Intra-doc links that stop resolving after a rename fail here, not in a reader's browser.
    // The CLI's binary is also called `roslite`, like the library, so it is documented on its
    // own: together they would write the same output file.
    step(
        "rustdoc",
        rustdoc(&["--workspace", "--exclude", "roslite-cli"]),
    )?;
    step("rustdoc (roslite-cli)", rustdoc(&["-p", "roslite-cli"]))?;
    step("tests", cargo(&["test", "--workspace", "--no-fail-fast"]))?;
    // The C ABI without its `definitions` feature, as the size-optimised nodes build it.
    step(
        "tests (roslite-c, size-optimised)",
        cargo(&["test", "-p", "roslite-c", "--no-default-features", "--lib"]),
    )?;
    install::check(root)?;
    fuzz_smoke(root)?;
    println!("xtask: all checks passed");
    Ok(())
}

/// Seconds each fuzz target runs in `cargo xtask test` unless `ROSLITE_FUZZ_SECONDS` says.
const FUZZ_SECONDS_DEFAULT: u64 = 20;

/// A short fuzz run of every cargo-fuzz target in `fuzz/` (docs/robustness.md, "Fuzzing"),
/// when nightly Rust is installed; cargo-fuzz is installed if missing. Without them it says so
/// and goes on: the corpus is replayed on stable by `xtask/tests/fuzz_corpus.rs` anyway.
///
/// New inputs go to `target/fuzz-smoke/<target>/`, not to the corpus in the repository; a
/// crash fails the step and leaves its input under `target/fuzz-smoke/artifacts/<target>/`.
fn fuzz_smoke(root: &Path) -> Result<()> {
    let seconds = match std::env::var("ROSLITE_FUZZ_SECONDS") {
        Ok(text) => text
            .trim()
            .parse::<u64>()
            .with_context(|| format!("ROSLITE_FUZZ_SECONDS={text}: expected whole seconds"))?,
        Err(_) => FUZZ_SECONDS_DEFAULT,
    };
    if seconds == 0 {
        println!("xtask: fuzz smoke run skipped: ROSLITE_FUZZ_SECONDS=0");
        return Ok(());
    }
    let nightly = Command::new("cargo")
        .args(["+nightly", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !nightly {
        println!(
            "xtask: fuzz smoke run NOT RUN: no nightly toolchain (`rustup toolchain install \
             nightly` enables it); the fuzz corpus was still replayed on stable by \
             xtask/tests/fuzz_corpus.rs"
        );
        return Ok(());
    }
    let has_cargo_fuzz = || {
        Command::new("cargo")
            .args(["+nightly", "fuzz", "--version"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !has_cargo_fuzz() {
        let mut install = Command::new("cargo");
        install.args(["install", "cargo-fuzz", "--locked"]);
        if let Err(e) = step("cargo install cargo-fuzz", install) {
            println!(
                "xtask: fuzz smoke run NOT RUN: cargo-fuzz is missing and could not be \
                 installed ({e}); the fuzz corpus was still replayed on stable by \
                 xtask/tests/fuzz_corpus.rs"
            );
            return Ok(());
        }
    }
    let fuzz = root.join("fuzz");
    let mut targets: Vec<String> = std::fs::read_dir(fuzz.join("fuzz_targets"))
        .context("listing fuzz/fuzz_targets")?
        .filter_map(|e| {
            let path = e.ok()?.path();
            (path.extension()? == "rs").then(|| path.file_stem()?.to_str().map(str::to_owned))?
        })
        .collect();
    targets.sort();
    let scratch = root.join("target/fuzz-smoke");
    for target in &targets {
        let new_inputs = scratch.join(target);
        let artifacts = scratch.join("artifacts").join(target);
        std::fs::create_dir_all(&new_inputs)?;
        std::fs::create_dir_all(&artifacts)?;
        let mut run = Command::new("cargo");
        run.current_dir(&fuzz)
            .args(["+nightly", "fuzz", "run", target])
            .arg(&new_inputs)
            .arg(fuzz.join("corpus").join(target))
            .arg("--")
            .arg(format!("-max_total_time={seconds}"))
            .args(["-rss_limit_mb=1024", "-workers=1"])
            // shm_channel waits for its endpoint's thread (connect, attach, reclaim), which a
            // loaded machine can hold back for seconds; the others must answer within 2 s.
            .arg(if target == "shm_channel" {
                "-timeout=12"
            } else {
                "-timeout=2"
            })
            .arg(format!("-artifact_prefix={}/", artifacts.display()));
        if target == "rtps_message" {
            run.arg("-max_len=65536");
        }
        step(&format!("fuzz {target} for {seconds} s"), run).with_context(|| {
            format!(
                "fuzz target {target} found an input that fails (kept in {}): fix it, and add \
                 the input to fuzz/regressions/{target}/",
                artifacts.display()
            )
        })?;
    }
    Ok(())
}

/// The real ROS 2 (Kilted, rclpy over Fast DDS) and Cyclone DDS peers, from PyPI.
const PYTHON_PEERS: &[&str] = &[
    "ros-rclpy",
    "ros-rmw-fastrtps-cpp",
    "ros-std-msgs",
    "ros-geometry-msgs",
    "ros-std-srvs",
    "ros-sensor-msgs",
    "ros-rosgraph-msgs",
    "ros-test-msgs",
    "cyclonedds",
];

/// What the checks and benchmarks need, so a clean machine needs nothing but
/// `cargo xtask test`: rustfmt and clippy, and `./.venv` with the real ROS 2 and Cyclone peers
/// (used as baselines by `roslite bench ...`).
fn install_prerequisites(root: &Path) -> Result<()> {
    ensure_rust_components()?;
    ensure_debian_packages()?;
    ensure_python_peers(root)
}

/// Programs the network tests run, with the Debian package that provides each: `ip` creates
/// the test network namespaces, `nft` drops packets inside them, `ddsperf` is Cyclone's
/// benchmark (the baseline of `roslite bench rtt`), `cc`/`c++` build the Humble-era peers, the
/// raspimouse_msgs typesupport for rclpy and the C and C++ test nodes, which `cmake` and
/// `pkg-config` also build against an install; `clang` and `wasm-ld` build the WebAssembly
/// guests and `wasm-opt` prepares them for parking (roslite-wasm's guest_build);
/// `aarch64-linux-gnu-gcc` links the aarch64 WebAssembly host of the cross-architecture tests
/// (`.cargo/config.toml` names it as that target's linker) and `qemu-aarch64` runs it
/// (roslite-wasm's cross_arch); `musl-gcc` (with `<arch>-linux-musl-gcc`) builds the C parts
/// of the programs for a small board against musl (roslite-linetrace's small_build).
const DEBIAN_TOOLS: &[(&str, &str)] = &[
    ("ip", "iproute2"),
    ("nft", "nftables"),
    ("ddsperf", "cyclonedds-tools"),
    ("cc", "gcc"),
    ("c++", "g++"),
    ("cmake", "cmake"),
    ("pkg-config", "pkg-config"),
    ("clang", "clang"),
    ("wasm-ld", "lld"),
    ("wasm-opt", "binaryen"),
    ("aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu"),
    ("qemu-aarch64", "qemu-user"),
    ("musl-gcc", "musl-tools"),
];

/// Libraries the Humble-era interop peers (tests/interop_humble.rs) are built against:
/// Cyclone DDS 0.10 and Fast DDS 2.9, as Debian bookworm ships them. Checked with
/// `dpkg-query`, since they put no program on PATH. With them, what WebAssembly guests are
/// linked against: WASI's C library, libc++ for wasm32 and the wasm32 compiler builtins. And
/// the aarch64 C library the aarch64 host is linked against and qemu-aarch64 loads it with
/// (`-L /usr/aarch64-linux-gnu`); the cross compiler only recommends it.
const DEBIAN_LIBRARIES: &[&str] = &[
    "cyclonedds-dev",
    "libfastrtps-dev",
    "wasi-libc",
    "libc++-dev-wasm32",
    "libclang-rt-dev-wasm32",
    "libc6-dev-arm64-cross",
];

fn debian_package_installed(package: &str) -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f", "${Status}", package])
        .output()
        .is_ok_and(|o| o.status.success() && o.stdout.ends_with(b"installed"))
}

fn ensure_debian_packages() -> Result<()> {
    let missing: Vec<&str> = DEBIAN_TOOLS
        .iter()
        .filter(|(program, _)| !on_path(program))
        .map(|(_, package)| *package)
        .chain(
            DEBIAN_LIBRARIES
                .iter()
                .copied()
                .filter(|p| !debian_package_installed(p)),
        )
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let mut update = Command::new("apt-get");
    update.args(["update", "-q"]);
    step("apt-get update", update)?;
    let mut install = Command::new("apt-get");
    install
        .args(["install", "-y", "-q"])
        .args(&missing)
        .env("DEBIAN_FRONTEND", "noninteractive");
    step(&format!("apt-get install {}", missing.join(" ")), install)?;
    // The downloaded .deb files are not needed once installed; on a small CI disk they are
    // space the test build needs.
    let mut clean = Command::new("apt-get");
    clean.arg("clean");
    step("apt-get clean", clean)
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

fn ensure_python_peers(root: &Path) -> Result<()> {
    let python = root.join(".venv/bin/python");
    let probe = "import rclpy, std_msgs.msg, rosgraph_msgs.msg, cyclonedds";
    let ready = || {
        Command::new(&python)
            .args(["-c", probe])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !ready() {
        install_python_peers(root, &python)?;
        if !ready() {
            bail!("the venv at .venv was set up but `{probe}` still fails");
        }
    }
    // raspimouse_msgs is not on PyPI: generate and build its typesupport into the venv with
    // the rosidl generators the ROS wheels brought (idempotent; fast when already built).
    let mut build = Command::new(&python);
    build.arg(root.join("interop/python/linetrace/build_raspimouse_msgs.py"));
    step("build raspimouse_msgs for rclpy", build)
}

fn install_python_peers(root: &Path, python: &Path) -> Result<()> {
    if !python.exists() {
        let mut venv = Command::new("python3");
        venv.args(["-m", "venv"]).arg(root.join(".venv"));
        step("python3 -m venv .venv", venv)?;
    }
    let mut pip = Command::new(python);
    pip.args(["-m", "pip", "install", "--quiet", "--no-cache-dir"])
        .args(PYTHON_PEERS);
    step("pip install the ROS 2 and Cyclone DDS peers", pip)
}

fn ensure_rust_components() -> Result<()> {
    ensure_rust_targets()?;
    for component in ["rustfmt", "clippy"] {
        let probe = if component == "rustfmt" {
            "fmt"
        } else {
            "clippy"
        };
        let present = Command::new("cargo")
            .args([probe, "--version"])
            .output()
            .is_ok_and(|o| o.status.success());
        if !present {
            let mut rustup = Command::new("rustup");
            rustup.args(["component", "add", component]);
            step(&format!("rustup component add {component}"), rustup)?;
        }
    }
    Ok(())
}

/// Rust targets the tests build for besides this machine's: wasm32-wasip1 for Rust guests,
/// aarch64-unknown-linux-gnu for the WebAssembly host of the cross-architecture tests
/// (roslite-wasm's cross_arch, run under qemu-user), and this architecture's musl target, the C
/// library of the programs built for a small board (roslite-linetrace's small_build).
const RUST_TARGETS: &[&str] = &["wasm32-wasip1", "aarch64-unknown-linux-gnu", MUSL_TARGET];

const MUSL_TARGET: &str = if cfg!(target_arch = "aarch64") {
    "aarch64-unknown-linux-musl"
} else {
    "x86_64-unknown-linux-musl"
};

/// Adds the [`RUST_TARGETS`] that are missing. Without rustup (a distribution's Rust) they
/// cannot be added here: that is a note, not a failure (the C and C++ guests need no Rust
/// target; the cross-architecture tests say what is missing, and fail under CI).
fn ensure_rust_targets() -> Result<()> {
    let installed = match Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
    {
        Ok(output) if output.status.success() => output.stdout,
        _ => {
            println!(
                "xtask: rustup not found; add the targets {} to your Rust by hand",
                RUST_TARGETS.join(", ")
            );
            return Ok(());
        }
    };
    let installed = String::from_utf8_lossy(&installed);
    for target in RUST_TARGETS {
        if installed.lines().any(|line| line.trim() == *target) {
            continue;
        }
        let mut rustup = Command::new("rustup");
        rustup.args(["target", "add", target]);
        step(&format!("rustup target add {target}"), rustup)?;
    }
    Ok(())
}

fn codegen(root: &Path) -> Result<()> {
    let interfaces = root.join("crates/roslite-msgs/interfaces");
    let out = root.join("crates/roslite-msgs/src/generated");
    let written = roslite_msg_gen::build::regenerate_builtin(&interfaces, &out)
        .map_err(|e| anyhow::anyhow!("{e}"))
        .context("regenerating roslite-msgs")?;
    println!(
        "xtask: wrote {} files under {}",
        written.len(),
        out.display()
    );
    Ok(())
}

fn cargo(args: &[&str]) -> Command {
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    command.args(args);
    if running_in_ci() {
        // CI machines may have little disk: a clean build of the ~70 test binaries needs about
        // 0.45 GB this way, 1.1 GB with the dev profile's line tables and incremental caches.
        // Test failures still name file and line (panic locations do not need debuginfo).
        command
            .env("CARGO_INCREMENTAL", "0")
            .env("CARGO_PROFILE_DEV_DEBUG", "false")
            .env("CARGO_PROFILE_DEV_STRIP", "debuginfo");
    }
    command
}

fn running_in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// What a clean `cargo xtask test` writes under the checkout, measured on a fresh clone with
/// `CI=true`: target/ about 0.62 GB, .venv about 0.3 GB; and the aarch64 host the
/// cross-architecture tests build in target/cross-aarch64, 0.54 GB with the same settings
/// (measured on its own).
const DISK_NEEDED_BYTES: u64 = 1_750_000_000;

/// Printed first, so that a build that dies with "No space left on device" can be told apart
/// from a broken one at a glance; warns when there is clearly too little.
fn report_free_disk(root: &Path) {
    match free_disk_bytes(root) {
        Some(free) if free < DISK_NEEDED_BYTES => println!(
            "xtask: warning: {:.2} GB free at {}; a clean run writes about {:.1} GB there \
             (target/ and .venv) and may fail with \"No space left on device\"",
            free as f64 / 1e9,
            root.display(),
            DISK_NEEDED_BYTES as f64 / 1e9
        ),
        Some(free) => println!(
            "xtask: {:.1} GB free at {}",
            free as f64 / 1e9,
            root.display()
        ),
        None => println!("xtask: could not learn the free disk space (df failed)"),
    }
}

/// Bytes available to us on the file system holding `path`, from `df`.
fn free_disk_bytes(path: &Path) -> Option<u64> {
    let output = Command::new("df")
        .args(["-B1", "--output=avail"])
        .arg(path)
        .output()
        .ok()?;
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .nth(1)
        .and_then(|line| line.trim().parse().ok())
}

/// `cargo doc` of `packages` with every rustdoc warning (a broken intra-doc link, a stray
/// `<tag>` in a comment) an error, private items included.
fn rustdoc(packages: &[&str]) -> Command {
    let mut args = vec!["doc", "--no-deps", "--document-private-items"];
    args.extend_from_slice(packages);
    let mut command = cargo(&args);
    command.env("RUSTDOCFLAGS", "-D warnings");
    command
}

fn step(name: &str, mut command: Command) -> Result<()> {
    println!("xtask: == {name} ==");
    let status = command
        .status()
        .with_context(|| format!("starting {name}"))?;
    if !status.success() {
        bail!("{name} failed ({status})");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_disk_is_read_from_df() {
        let free = free_disk_bytes(&workspace_root()).expect("df answers for the checkout");
        assert!(free > 0);
        // A path that does not exist: df fails, and that is reported as unknown.
        assert_eq!(
            free_disk_bytes(Path::new("/nonexistent/roslite-xtask")),
            None
        );
    }
}

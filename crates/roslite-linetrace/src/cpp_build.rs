//! Builds the C++ nodes the benches and the demo measure next to their Rust twins, as a small
//! board would get them: the C ABI's static library in the size profile (`cargo rustc
//! --profile release-small -p roslite-c --no-default-features --lib --crate-type staticlib`:
//! opt-level s, fat LTO, panic=abort, stripped, as [`crate::small_build`] builds the Rust
//! nodes; without the `definitions` feature, so types roslite does not ship are known by the
//! name they were registered under rather than by a hash computed from their definition, see
//! roslite-c's `types`), the generated C++
//! message types (`roslite_msg_gen::native`, what `roslite interface generate --lang cpp`
//! writes), and one `c++ -std=c++17 -Os -static` of the node's source against them, stripped.
//!
//! The library is built in the size profile rather than `release` because a static node's
//! resident memory follows its binary's size (docs/footprint.md): with the `release` library
//! (opt-level 3, unwinding) the line follower is 3.2 MB of text, with the size profile's
//! 2.4 MB, as big as the Rust node it is compared with. With panic=abort, a fault inside
//! roslite ends the process instead of returning `ROSLITE_ERROR`; none is expected in a bench.
//!
//! A latency comparison with Rust nodes of the `release` profile (the CLI's, as `roslite bench
//! rtt` runs them) builds the library in that profile instead ([`RELEASE`]: opt-level 3,
//! unwinding), so that the same Rust code runs on both sides.
//!
//! Everything goes under `<target>/cpp-nodes/<profile>/<name>/` of the target directory this
//! binary lives in; a program whose executable is newer than its source, the headers and the
//! library is not compiled again.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

use crate::small_build;

/// A C++ node of the workspace.
#[derive(Clone, Copy, Debug)]
pub struct CppProgram<'a> {
    /// The executable's name.
    pub name: &'a str,
    /// Its one source file, relative to the workspace root.
    pub source: &'a str,
    /// Interface packages whose C++ types it includes (their dependencies are generated too).
    pub packages: &'a [&'a str],
}

/// The C++ line follower (`cpp/follower.cpp`), on the mROS 2 API.
pub const FOLLOWER: CppProgram<'static> = CppProgram {
    name: "linetrace-follower",
    source: "crates/roslite-linetrace/cpp/follower.cpp",
    packages: &["raspimouse_msgs", "geometry_msgs", "std_msgs", "std_srvs"],
};

/// The compiler's flags before the sources (size-optimised, static, unused sections dropped,
/// stripped).
pub const CXX_FLAGS: [&str; 7] = [
    "-std=c++17",
    "-Os",
    "-static",
    "-ffunction-sections",
    "-fdata-sections",
    "-Wl,--gc-sections",
    "-s",
];

/// What the static library needs from the C library, after it.
pub const LIBS: [&str; 5] = ["-lpthread", "-lm", "-ldl", "-lrt", "-lutil"];

/// The `release` profile, for comparisons with Rust nodes built in it.
pub const RELEASE: &str = "release";

/// The cargo command that builds the static library in `profile` (for messages and docs).
pub fn library_command(profile: &str) -> String {
    format!(
        "cargo rustc --profile {profile} -p roslite-c --no-default-features --lib --crate-type \
         staticlib"
    )
}

fn tail(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.contains("in statically linked applications") && !l.contains("in function"))
        .collect();
    lines[lines.len().saturating_sub(8)..].join(" | ")
}

/// Builds the static library (or finds it up to date) and returns its path.
fn build_library(root: &Path, target_dir: &Path, profile: &str) -> Result<PathBuf, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(&cargo)
        .current_dir(root)
        .args(["rustc", "--quiet", "--profile", profile, "-p", "roslite-c"])
        .arg("--no-default-features")
        .args(["--lib", "--crate-type", "staticlib", "--target-dir"])
        .arg(target_dir)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", Path::new(&cargo).display()))?;
    if !output.status.success() {
        return Err(format!(
            "`{}` failed: {}",
            library_command(profile),
            tail(&output.stderr)
        ));
    }
    let library = target_dir.join(profile).join("libroslite_c.a");
    if library.is_file() {
        Ok(library)
    } else {
        Err(format!(
            "cargo succeeded but {} is not there",
            library.display()
        ))
    }
}

/// Writes the C++ types of `packages` (and of what they use) into `dir`.
pub(crate) fn generate_types(packages: &[&str], dir: &Path) -> Result<(), String> {
    use roslite_msg_gen::native::{self, Lang};
    let mut set = roslite_msg_gen::registry::InterfaceSet::new();
    roslite_msg_gen::build::add_builtin_interfaces(&mut set).map_err(|e| e.to_string())?;
    set.check().map_err(|e| format!("{e:?}"))?;
    let requests: Vec<String> = packages.iter().map(|p| (*p).to_owned()).collect();
    let interfaces = native::select(&set, &requests, true).map_err(|e| e.to_string())?;
    let files = native::generate(&set, &interfaces, Lang::Cpp).map_err(|e| e.to_string())?;
    native::write(dir, &files).map_err(|e| e.to_string())?;
    Ok(())
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// The newest modification time of the files under `dir`.
pub(crate) fn newest_under(dir: &Path) -> Option<SystemTime> {
    let mut newest = None;
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        let time = if path.is_dir() {
            newest_under(&path)
        } else {
            modified(&path)
        };
        newest = newest.max(time);
    }
    newest
}

/// The executable [`build`] makes of `program` with the library in `profile`, under the
/// target directory this binary lives in (it may not be built yet).
pub fn executable(program: CppProgram<'_>, profile: &str) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = small_build::target_dir_of(&exe)?;
    Some(
        dir.join("cpp-nodes")
            .join(profile)
            .join(program.name)
            .join(program.name),
    )
}

/// Builds `program` against the library in cargo profile `profile`
/// ([`small_build::PROFILE`], the size profile, or [`RELEASE`]), or finds it up to date, in
/// the target directory this binary lives in, and returns the executable's path.
///
/// # Errors
/// Why not: no source tree, no cargo or `c++`, or their failure (the tail of their output).
pub fn build(program: CppProgram<'_>, profile: &str) -> Result<PathBuf, String> {
    let root = small_build::workspace_root()
        .ok_or("the roslite source tree this binary was built from is not there any more")?;
    let target_dir = std::env::current_exe()
        .ok()
        .and_then(|exe| small_build::target_dir_of(&exe))
        .unwrap_or_else(|| root.join("target"));
    let library = build_library(&root, &target_dir, profile)?;
    let dir = target_dir
        .join("cpp-nodes")
        .join(profile)
        .join(program.name);
    let generated = dir.join("include");
    generate_types(program.packages, &generated)?;
    let source = root.join(program.source);
    let headers = root.join("crates/roslite-c/include");
    let exe = dir.join(program.name);
    let inputs = [
        modified(&source),
        modified(&library),
        newest_under(&headers),
        newest_under(&generated),
    ];
    if let Some(built) = modified(&exe) {
        if inputs.iter().all(|t| t.is_some_and(|t| t <= built)) {
            return Ok(exe);
        }
    }
    // Compiled under a name of its own and renamed: a concurrent build never runs a half file.
    let partial = dir.join(format!("{}.{}.partial", program.name, std::process::id()));
    let compiler = std::env::var_os("CXX").unwrap_or_else(|| "c++".into());
    let output = Command::new(&compiler)
        .args(CXX_FLAGS)
        .arg("-o")
        .arg(&partial)
        .arg(&source)
        .arg("-I")
        .arg(&headers)
        .arg("-I")
        .arg(headers.join("mros2-posix"))
        .arg("-I")
        .arg(&generated)
        .arg(&library)
        .args(LIBS)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", Path::new(&compiler).display()))?;
    if !output.status.success() {
        let _ = std::fs::remove_file(&partial);
        return Err(format!(
            "compiling {} failed: {}",
            source.display(),
            tail(&output.stderr)
        ));
    }
    std::fs::rename(&partial, &exe).map_err(|e| format!("{}: {e}", exe.display()))?;
    Ok(exe)
}

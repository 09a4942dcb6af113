//! Builds WebAssembly nodes from C and C++ sources: the user's files together with the guest
//! library (`guest/c/roslite_guest.c`, the C ABI of `roslite.h` over the `roslite_v1` imports)
//! into one `wasm32-wasip1` command module, as docs/wasm.md describes it.
//!
//! The toolchain is Debian's: clang and wasm-ld (packages `clang`, `lld`), WASI's C library
//! (`wasi-libc`), libc++ for wasm32 (`libc++-dev-wasm32`) and clang's wasm32 builtins
//! (`libclang-rt-dev-wasm32`); `cargo xtask test` installs them. A sysroot elsewhere (wasi-sdk's,
//! `/usr/share/wasi-sysroot`) is used when `WASI_SYSROOT` names it or it is in that place.
//!
//! The include and source paths are those of this source tree, so tests, the demo and the
//! benchmarks can build guests; an installed roslite does not ship them.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What to install when part of the toolchain is missing.
pub const TOOLCHAIN_PACKAGES: &str =
    "clang lld wasi-libc libc++-dev-wasm32 libclang-rt-dev-wasm32 binaryen";

/// The target triple clang is given: clang 14 knows `wasm32-wasi`, which is what Rust calls
/// `wasm32-wasip1`.
const CLANG_TARGET: &str = "--target=wasm32-wasi";

/// The shadow stack (C's stack in linear memory). Small, because a migration snapshot copies
/// the whole memory, and nodes keep their data on the heap.
pub const STACK_SIZE: u32 = 65536;

#[derive(Debug)]
pub enum GuestBuildError {
    /// A part of the toolchain is not installed: `what` it is and the Debian `package` that
    /// has it.
    Missing {
        what: String,
        package: &'static str,
    },
    /// The compiler or linker ran and failed.
    Failed {
        command: String,
        output: String,
    },
    Io {
        what: String,
        error: std::io::Error,
    },
}

impl fmt::Display for GuestBuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GuestBuildError::Missing { what, package } => write!(
                f,
                "{what} not found (Debian package {package}): install Debian packages \
                 {TOOLCHAIN_PACKAGES} (`cargo xtask test` installs them)"
            ),
            GuestBuildError::Failed { command, output } => {
                write!(
                    f,
                    "building a WebAssembly guest failed: {command}\n{output}"
                )
            }
            GuestBuildError::Io { what, error } => write!(f, "{what}: {error}"),
        }
    }
}

impl std::error::Error for GuestBuildError {}

/// The C and C++ toolchain for wasm32 guests, found on this machine.
#[derive(Clone, Debug)]
pub struct Toolchain {
    pub clang: PathBuf,
    /// `--sysroot`: where `include/wasm32-wasi` and `lib/wasm32-wasi` (Debian's layout) or
    /// `include` and `lib/wasm32-wasi` (wasi-sdk's) are.
    pub sysroot: PathBuf,
    /// libc++'s headers for wasm32, when installed (C++ guests need them).
    pub libcxx_include: Option<PathBuf>,
    /// Binaryen's optimizer, which prepares a linked module for parking ([`prepare_for_parking`]).
    pub wasm_opt: PathBuf,
}

fn missing(what: impl Into<String>, package: &'static str) -> GuestBuildError {
    GuestBuildError::Missing {
        what: what.into(),
        package,
    }
}

fn runs(program: &Path, args: &[&str]) -> Option<String> {
    let output = Command::new(program).args(args).output().ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// clang under the names Debian and others give it: unversioned first, then the newest.
fn find_clang() -> Option<PathBuf> {
    if let Some(clang) = std::env::var_os("ROSLITE_WASM_CLANG") {
        return Some(PathBuf::from(clang));
    }
    let versioned = (14..=22).rev().map(|v| format!("clang-{v}"));
    std::iter::once("clang".to_owned())
        .chain(versioned)
        .map(PathBuf::from)
        .find(|clang| runs(clang, &["--version"]).is_some())
}

fn find_sysroot() -> Result<PathBuf, GuestBuildError> {
    let has_libc = |root: &Path| root.join("lib/wasm32-wasi/libc.a").is_file();
    let candidates = std::env::var_os("WASI_SYSROOT")
        .map(PathBuf::from)
        .into_iter()
        .chain([
            PathBuf::from("/usr/share/wasi-sysroot"),
            // Debian's wasi-libc: /usr/include/wasm32-wasi and /usr/lib/wasm32-wasi.
            PathBuf::from("/usr"),
        ]);
    for root in candidates {
        if has_libc(&root) {
            return Ok(root);
        }
    }
    Err(missing(
        "WASI's C library (lib/wasm32-wasi/libc.a)",
        "wasi-libc",
    ))
}

fn find_libcxx_include(sysroot: &Path) -> Option<PathBuf> {
    ["include/wasm32-wasi/c++/v1", "include/c++/v1"]
        .iter()
        .map(|dir| sysroot.join(dir))
        .find(|dir| {
            dir.join("vector").is_file() && sysroot.join("lib/wasm32-wasi/libc++.a").is_file()
        })
}

impl Toolchain {
    /// Finds clang, wasm-ld, the WASI sysroot and clang's wasm32 builtins; libc++ is checked
    /// only when a C++ guest is built.
    pub fn find() -> Result<Toolchain, GuestBuildError> {
        let clang = find_clang().ok_or_else(|| missing("clang", "clang"))?;
        let linker = runs(&clang, &["-print-prog-name=wasm-ld"]).unwrap_or_default();
        let linker_found =
            Path::new(&linker).is_absolute() && Path::new(&linker).is_file() || on_path("wasm-ld");
        if !linker_found {
            return Err(missing("wasm-ld (the WebAssembly linker)", "lld"));
        }
        let sysroot = find_sysroot()?;
        let builtins = runs(&clang, &[CLANG_TARGET, "-print-libgcc-file-name"]).unwrap_or_default();
        if builtins.is_empty() || !Path::new(&builtins).is_file() {
            return Err(missing(
                format!("clang's wasm32 builtins ({builtins})"),
                "libclang-rt-dev-wasm32",
            ));
        }
        let libcxx_include = find_libcxx_include(&sysroot);
        let wasm_opt = find_wasm_opt().ok_or_else(|| missing("wasm-opt (Binaryen)", "binaryen"))?;
        Ok(Toolchain {
            clang,
            sysroot,
            libcxx_include,
            wasm_opt,
        })
    }

    fn command(&self, cxx: bool) -> Command {
        let mut command = Command::new(&self.clang);
        if cxx {
            command.arg("--driver-mode=g++");
        }
        command
            .arg(CLANG_TARGET)
            .arg(format!("--sysroot={}", self.sysroot.display()))
            .args(["-O2", "-mexec-model=command"]);
        command
    }

    /// Compiles the guest library alone, to an object `out`.
    pub fn compile_guest_library(
        &self,
        include_dirs: &[&Path],
        out: &Path,
    ) -> Result<(), GuestBuildError> {
        let mut command = self.command(false);
        command
            .args(["-std=c11", "-Wall", "-Wextra", "-c", "-o"])
            .arg(out);
        add_includes(&mut command, include_dirs);
        command.arg(guest_library_source());
        run(command)
    }

    /// Compiles and links `sources` (C) with the guest library into the module `out`.
    pub fn compile_c(
        &self,
        sources: &[&Path],
        include_dirs: &[&Path],
        out: &Path,
    ) -> Result<(), GuestBuildError> {
        let mut command = self.command(false);
        command
            .arg("-std=c11")
            .args(link_flags())
            .arg("-o")
            .arg(out);
        add_includes(&mut command, include_dirs);
        command.args(sources).arg(guest_library_source());
        run(command)?;
        self.prepare_for_parking(out, out)
    }

    /// Compiles and links `sources` (C++17) with the guest library into the module `out`.
    pub fn compile_cpp(
        &self,
        sources: &[&Path],
        include_dirs: &[&Path],
        out: &Path,
    ) -> Result<(), GuestBuildError> {
        if self.libcxx_include.is_none() {
            return Err(missing(
                "libc++ for wasm32 (its headers and libc++.a)",
                "libc++-dev-wasm32",
            ));
        }
        // The guest library is C11, the sources C++: one clang run cannot give each its own
        // -std, so the library is compiled on its own first, next to the output.
        let library = out.with_extension("roslite_guest.o");
        self.compile_guest_library(include_dirs, &library)?;
        let mut command = self.command(true);
        command
            .arg("-std=c++17")
            .args(link_flags())
            .arg("-o")
            .arg(out);
        add_includes(&mut command, include_dirs);
        command.args(sources).arg(&library);
        let result = run(command);
        let _ = std::fs::remove_file(&library);
        result?;
        self.prepare_for_parking(out, out)
    }

    /// [`prepare_for_parking`] with this toolchain's `wasm-opt`.
    pub fn prepare_for_parking(&self, wasm: &Path, out: &Path) -> Result<(), GuestBuildError> {
        asyncify(&self.wasm_opt, wasm, out)
    }
}

/// Runs Binaryen's Asyncify pass over the module `wasm` (any guest: C, C++, WebAssembly text,
/// or Rust built by cargo), writing `out` (which may be `wasm`): the guest can then park at its
/// waits (crate::park), which lets its callbacks run on the thread that receives their work
/// and lets a snapshot be taken between callbacks. Only the functions that can reach one of
/// the waiting imports are changed; `-O2` afterwards keeps the cost small. Needs only
/// `wasm-opt` (Debian package `binaryen`).
pub fn prepare_for_parking(wasm: &Path, out: &Path) -> Result<(), GuestBuildError> {
    let wasm_opt = find_wasm_opt().ok_or_else(|| missing("wasm-opt (Binaryen)", "binaryen"))?;
    asyncify(&wasm_opt, wasm, out)
}

fn asyncify(wasm_opt: &Path, wasm: &Path, out: &Path) -> Result<(), GuestBuildError> {
    let mut command = Command::new(wasm_opt);
    command
        .arg(wasm)
        .args(GUEST_FEATURES)
        .args([
            "--asyncify",
            &crate::waiting::asyncify_imports_argument(),
            "-O2",
            "-o",
        ])
        .arg(out);
    run(command)
}

/// What current compilers emit for wasm32-wasip1 by default (Rust since 1.87 and clang alike),
/// and what both engines run: Binaryen's own default is the first WebAssembly version alone.
const GUEST_FEATURES: &[&str] = &[
    "--enable-bulk-memory",
    "--enable-sign-ext",
    "--enable-mutable-globals",
    "--enable-nontrapping-float-to-int",
    "--enable-multivalue",
    "--enable-reference-types",
];

fn find_wasm_opt() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("wasm-opt"))
        .find(|p| p.is_file())
}

/// What every guest is linked with: the small shadow stack of [`STACK_SIZE`], and no
/// crt1-command.o: the guest library has the `_start` (which runs the constructors once;
/// see roslite_guest.c). The exports (`_start`, `roslite_guest_dispatch`, `_alloc`, `_free`)
/// are the library's `export_name` attributes.
fn link_flags() -> [String; 2] {
    [
        format!("-Wl,-zstack-size={STACK_SIZE}"),
        "-nostartfiles".to_owned(),
    ]
}

fn add_includes(command: &mut Command, include_dirs: &[&Path]) {
    for dir in roslite_include_dirs() {
        command.arg("-I").arg(dir);
    }
    for dir in include_dirs {
        command.arg("-I").arg(dir);
    }
}

fn run(mut command: Command) -> Result<(), GuestBuildError> {
    let shown = format!("{command:?}");
    let output = command.output().map_err(|error| GuestBuildError::Io {
        what: format!("running {shown}"),
        error,
    })?;
    if output.status.success() {
        return Ok(());
    }
    Err(GuestBuildError::Failed {
        command: shown,
        output: format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ),
    })
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

/// The guest library's one source file.
pub fn guest_library_source() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("guest/c/roslite_guest.c")
}

/// The headers every guest is compiled against: `roslite/roslite.h` and the rclcpp API
/// (`crates/roslite-c/include`), and the mROS 2 API (its `mros2-posix` directory, which
/// mROS 2 applications include from as `"mros2.h"`, `"cmsis_os.h"`).
pub fn roslite_include_dirs() -> Vec<PathBuf> {
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("../roslite-c/include");
    vec![include.join("mros2-posix"), include]
}

/// [`Toolchain::find`] and [`Toolchain::compile_c`].
pub fn compile_c_guest(
    sources: &[&Path],
    include_dirs: &[&Path],
    out: &Path,
) -> Result<(), GuestBuildError> {
    Toolchain::find()?.compile_c(sources, include_dirs, out)
}

/// [`Toolchain::find`] and [`Toolchain::compile_cpp`].
pub fn compile_cpp_guest(
    sources: &[&Path],
    include_dirs: &[&Path],
    out: &Path,
) -> Result<(), GuestBuildError> {
    Toolchain::find()?.compile_cpp(sources, include_dirs, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_tool_names_its_package_and_the_whole_toolchain() {
        let text = missing("wasm-ld (the WebAssembly linker)", "lld").to_string();
        assert!(text.contains("Debian package lld"), "{text}");
        assert!(text.contains(TOOLCHAIN_PACKAGES), "{text}");
    }

    #[test]
    fn the_guest_library_and_headers_are_where_guests_are_built_from() {
        assert!(guest_library_source().is_file());
        let dirs = roslite_include_dirs();
        assert!(dirs.iter().any(|d| d.join("roslite/roslite.h").is_file()));
        assert!(dirs.iter().any(|d| d.join("mros2.h").is_file()));
    }
}

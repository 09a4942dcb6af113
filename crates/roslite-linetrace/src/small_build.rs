//! Builds the lean programs whose memory the benches and the demo measure, the way a small
//! board would get them: the size profile (`release-small`: opt-level s, fat LTO, one codegen
//! unit, panic=abort, stripped) and a static, position-dependent link, so no glibc, libm or
//! ld.so pages are mapped next to the program. `cargo run` builds only the CLI, hence this:
//! cargo is run again (the first time it compiles the dependencies with that profile, later it
//! finds everything up to date).
//!
//! The link flags go to the final link only (`cargo rustc ... -- <flags>`): set workspace-wide,
//! crt-static breaks the proc-macro crates.
//!
//! The C library is musl (`<arch>-unknown-linux-musl`) when this machine can build for it: the
//! Rust target (`rustup target add x86_64-unknown-linux-musl`) and musl's C compiler (Debian
//! package `musl-tools`, which wasmtime's build script needs); `cargo xtask test` installs both.
//! Otherwise it is glibc, and [`glibc_note`] says what that costs. Why musl: a static program's
//! resident memory follows its size (docs/footprint.md), and static glibc brings about 0.8 MB
//! into every node (its stdio, locale, iconv and dynamic loader, which its own `assert` and
//! `getaddrinfo` reach) where musl brings about 0.1 MB: the talker measured 2.62 MB VmRSS
//! against glibc and 1.77 MB against musl. `ROSLITE_SMALL_LIBC=glibc` (or `musl`) overrides the
//! choice.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Cargo profile of the lean programs.
pub const PROFILE: &str = "release-small";
/// Flags for the final link (see the module docs).
pub const STATIC_LINK_FLAGS: [&str; 4] = [
    "-C",
    "target-feature=+crt-static",
    "-C",
    "relocation-model=static",
];

/// The environment variable that picks the C library of the lean programs: `glibc` or `musl`.
pub const LIBC_ENV: &str = "ROSLITE_SMALL_LIBC";

/// The C library the lean programs are linked with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Libc {
    Glibc,
    Musl,
}

impl Libc {
    /// `glibc` or `musl`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Glibc => "glibc",
            Self::Musl => "musl",
        }
    }
}

/// The musl target of this machine's architecture (`x86_64-unknown-linux-musl`).
pub fn musl_target() -> String {
    format!("{}-unknown-linux-musl", std::env::consts::ARCH)
}

/// The C library the lean programs are built with (see the module docs); decided once.
pub fn libc() -> Libc {
    static CHOSEN: OnceLock<Libc> = OnceLock::new();
    *CHOSEN.get_or_init(|| match std::env::var(LIBC_ENV).as_deref() {
        Ok("glibc") => Libc::Glibc,
        Ok("musl") => Libc::Musl,
        other => {
            if let Some(value) = other.ok().filter(|v| !v.is_empty()) {
                eprintln!(
                    "warning: {LIBC_ENV}={value:?} is neither `glibc` nor `musl`; choosing by \
                     what is installed"
                );
            }
            if musl_available() {
                Libc::Musl
            } else {
                Libc::Glibc
            }
        }
    })
}

/// When the lean programs fall back on glibc although the user did not ask for it: what it
/// costs and how to get musl.
pub fn glibc_note() -> Option<String> {
    (libc() == Libc::Glibc && std::env::var(LIBC_ENV).as_deref() != Ok("glibc")).then(|| {
        format!(
            "the lean programs are linked with glibc, which adds about 0.8 MB to each node's \
             memory; for musl: `rustup target add {}` and the Debian package musl-tools",
            musl_target()
        )
    })
}

/// Whether the Rust standard library for [`musl_target`] is installed and musl's C compiler
/// (`<arch>-linux-musl-gcc`) is on the path.
fn musl_available() -> bool {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let std_installed = Command::new(rustc)
        .args(["--print", "target-libdir", "--target", &musl_target()])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .and_then(|out| {
            let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
            std::fs::read_dir(dir).ok()
        })
        .is_some_and(|entries| {
            entries
                .flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with("libstd-"))
        });
    let compiler = format!("{}-linux-musl-gcc", std::env::consts::ARCH);
    std_installed
        && std::env::var_os("PATH").is_some_and(|path| {
            std::env::split_paths(&path).any(|dir| dir.join(&compiler).is_file())
        })
}

/// One program of a workspace package.
#[derive(Clone, Copy, Debug)]
pub enum Program<'a> {
    Bin {
        package: &'a str,
        name: &'a str,
    },
    Example {
        package: &'a str,
        name: &'a str,
    },
    /// A binary built with only `features` (comma-separated; empty: none) instead of the
    /// package's default ones (`--no-default-features --features ...`).
    BinFeatures {
        package: &'a str,
        name: &'a str,
        features: &'a str,
    },
}

impl<'a> Program<'a> {
    /// The cargo command that builds it (for messages and docs).
    pub fn cargo_command(self) -> String {
        let (package, kind, name) = self.parts();
        let features = self.feature_args().join(" ");
        let features = if features.is_empty() {
            String::new()
        } else {
            format!("{features} ")
        };
        let target = match libc() {
            Libc::Musl => format!("--target {} ", musl_target()),
            Libc::Glibc => String::new(),
        };
        format!(
            "cargo rustc --profile {PROFILE} -p {package} {features}{target}{kind} {name} -- {}",
            STATIC_LINK_FLAGS.join(" ")
        )
    }

    fn parts(self) -> (&'a str, &'static str, &'a str) {
        match self {
            Self::Bin { package, name } | Self::BinFeatures { package, name, .. } => {
                (package, "--bin", name)
            }
            Self::Example { package, name } => (package, "--example", name),
        }
    }

    /// Cargo's feature flags for it (none: the default features).
    fn feature_args(self) -> Vec<&'a str> {
        match self {
            Self::BinFeatures { features: "", .. } => {
                vec!["--no-default-features"]
            }
            Self::BinFeatures { features, .. } => {
                vec!["--no-default-features", "--features", features]
            }
            _ => Vec::new(),
        }
    }
}

/// Cargo's target directory holding `exe` (`<target>/<profile>/<exe>`), recognised by the
/// `CACHEDIR.TAG` cargo writes there.
pub fn target_dir_of(exe: &Path) -> Option<PathBuf> {
    let dir = exe.parent()?.parent()?;
    dir.join("CACHEDIR.TAG")
        .is_file()
        .then(|| dir.to_path_buf())
}

/// The workspace this binary was compiled from, if it is still there.
pub fn workspace_root() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?.parent()?;
    root.join("Cargo.toml")
        .is_file()
        .then(|| root.to_path_buf())
}

/// Builds `program` (or finds it up to date) into the target directory this binary lives in
/// and returns its path.
///
/// # Errors
/// Why not: no source tree, no cargo, or cargo's failure (the tail of its output).
pub fn build(program: Program<'_>) -> Result<PathBuf, String> {
    let root = workspace_root()
        .ok_or("the roslite source tree this binary was built from is not there any more")?;
    let target_dir = std::env::current_exe()
        .ok()
        .and_then(|exe| target_dir_of(&exe));
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let (package, kind, name) = program.parts();
    let mut command = Command::new(&cargo);
    command
        .current_dir(&root)
        .args(["rustc", "--quiet", "--profile", PROFILE, "-p", package]);
    command.args(program.feature_args());
    if libc() == Libc::Musl {
        command.args(["--target", &musl_target()]);
    }
    command.args([kind, name]);
    if let Some(dir) = &target_dir {
        command.arg("--target-dir").arg(dir);
    }
    command.arg("--").args(STATIC_LINK_FLAGS);
    let output = command
        .output()
        .map_err(|e| format!("cannot run {}: {e}", Path::new(&cargo).display()))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let mut tail: Vec<&str> = stderr.lines().rev().take(6).collect();
        tail.reverse();
        return Err(format!(
            "`{}` failed: {}",
            program.cargo_command(),
            tail.join(" | ")
        ));
    }
    let exe = output_path(program, &target_dir.unwrap_or_else(|| root.join("target")));
    if exe.is_file() {
        Ok(exe)
    } else {
        Err(format!(
            "cargo succeeded but {} is not there",
            exe.display()
        ))
    }
}

/// Where [`build`] puts `program` under cargo's target directory `target_dir`.
fn output_path(program: Program<'_>, target_dir: &Path) -> PathBuf {
    let mut dir = target_dir.to_path_buf();
    if libc() == Libc::Musl {
        dir.push(musl_target());
    }
    dir.push(PROFILE);
    match program {
        Program::Bin { name, .. } | Program::BinFeatures { name, .. } => dir.join(name),
        Program::Example { name, .. } => dir.join("examples").join(name),
    }
}

/// `program` if an earlier [`build`] made it, in the target directory this binary lives in.
pub fn built(program: Program<'_>) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    Some(output_path(program, &target_dir_of(&exe)?)).filter(|path| path.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_cargo_target_directories_are_recognised() {
        let dir = std::env::temp_dir().join(format!("roslite-small-build-{}", std::process::id()));
        let exe = dir.join("release").join("roslite");
        std::fs::create_dir_all(exe.parent().unwrap()).unwrap();
        assert_eq!(target_dir_of(&exe), None);
        std::fs::write(
            dir.join("CACHEDIR.TAG"),
            "Signature: 8a477f597d28d172789f06886806bc55\n",
        )
        .unwrap();
        assert_eq!(target_dir_of(&exe), Some(dir.clone()));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_printed_command_is_the_one_run() {
        let p = Program::Example {
            package: "roslite",
            name: "talker",
        };
        let target = match libc() {
            Libc::Musl => format!("--target {} ", musl_target()),
            Libc::Glibc => String::new(),
        };
        assert_eq!(
            p.cargo_command(),
            format!(
                "cargo rustc --profile release-small -p roslite {target}--example talker -- -C \
                 target-feature=+crt-static -C relocation-model=static"
            )
        );
        let p = Program::BinFeatures {
            package: "roslite-wasm",
            name: "roslite-wasm-host",
            features: "wasmi",
        };
        assert_eq!(
            p.cargo_command(),
            format!(
                "cargo rustc --profile release-small -p roslite-wasm --no-default-features \
                 --features wasmi {target}--bin roslite-wasm-host -- -C \
                 target-feature=+crt-static -C relocation-model=static"
            )
        );
    }
}

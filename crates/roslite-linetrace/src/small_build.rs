//! Builds the lean programs whose memory the benches and the demo measure, the way a small
//! board would get them: the size profile (`release-small`: opt-level s, fat LTO, one codegen
//! unit, panic=abort, stripped) and a static, position-dependent link, so no glibc, libm or
//! ld.so pages are mapped next to the program. `cargo run` builds only the CLI, hence this:
//! cargo is run again (the first time it compiles the dependencies with that profile, later it
//! finds everything up to date).
//!
//! The link flags go to the final link only (`cargo rustc ... -- <flags>`): set workspace-wide,
//! crt-static breaks the proc-macro crates.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Cargo profile of the lean programs.
pub const PROFILE: &str = "release-small";
/// Flags for the final link (see the module docs).
pub const STATIC_LINK_FLAGS: [&str; 4] = [
    "-C",
    "target-feature=+crt-static",
    "-C",
    "relocation-model=static",
];

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
        format!(
            "cargo rustc --profile {PROFILE} -p {package} {features}{kind} {name} -- {}",
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
    command.args(program.feature_args()).args([kind, name]);
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
    let dir = target_dir
        .unwrap_or_else(|| root.join("target"))
        .join(PROFILE);
    let exe = match program {
        Program::Bin { .. } | Program::BinFeatures { .. } => dir.join(name),
        Program::Example { .. } => dir.join("examples").join(name),
    };
    if exe.is_file() {
        Ok(exe)
    } else {
        Err(format!(
            "cargo succeeded but {} is not there",
            exe.display()
        ))
    }
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
        assert_eq!(
            p.cargo_command(),
            "cargo rustc --profile release-small -p roslite --example talker -- -C \
             target-feature=+crt-static -C relocation-model=static"
        );
        let p = Program::BinFeatures {
            package: "roslite-wasm",
            name: "roslite-wasm-host",
            features: "wasmi",
        };
        assert_eq!(
            p.cargo_command(),
            "cargo rustc --profile release-small -p roslite-wasm --no-default-features \
             --features wasmi --bin roslite-wasm-host -- -C target-feature=+crt-static -C \
             relocation-model=static"
        );
    }
}

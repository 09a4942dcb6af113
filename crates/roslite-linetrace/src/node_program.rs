//! Which executable runs the application's roslite processes.
//!
//! The measured processes should carry the nodes and nothing else, as on the robot's board:
//! the `roslite-linetrace-node` binary of this crate, built with the size profile
//! (`release-small`: opt-level s, fat LTO, panic=abort, stripped) and linked statically (no
//! glibc, libm or ld.so pages mapped next to it). `cargo run --release -- demo` builds only the
//! CLI, so [`resolve`] builds that binary with cargo on first use ([`crate::small_build`];
//! later runs find it up to date in a second); without cargo or a checkout it falls back to the
//! CLI's own `roslite linetrace-node` role, which runs the same code in a bigger process. The
//! demo and `roslite bench linetrace` both start their processes this way.

use std::path::PathBuf;
use std::process::Command;

use crate::small_build::{self, Program};

/// The binary's name (`src/bin/roslite-linetrace-node.rs`).
pub const NODE_BINARY: &str = "roslite-linetrace-node";

/// The node executable, as [`small_build`] builds it.
pub const NODE: Program<'static> = Program::Bin {
    package: "roslite-linetrace",
    name: NODE_BINARY,
};

/// The environment variable that overrides [`resolve`]: a path names a prebuilt node
/// executable, `cli` picks the CLI's own `linetrace-node` role.
pub const NODE_ENV: &str = "ROSLITE_LINETRACE_NODE";

/// What the roslite processes run: the lean [`NODE`] executable built by
/// [`small_build::build`] (`ROSLITE_LINETRACE_NODE=<path>` names a prebuilt one,
/// `ROSLITE_LINETRACE_NODE=cli` forces the fallback), else `cli` (the running CLI binary, whose
/// `linetrace-node` role runs the same code). The second value, when the fallback was taken
/// because the build failed, is a warning for the user saying why and what it means for the
/// memory figures.
pub fn resolve(cli: PathBuf) -> (NodeProgram, Option<String>) {
    match std::env::var_os(NODE_ENV) {
        Some(v) if v == "cli" => return (NodeProgram::Cli(cli), None),
        Some(v) if !v.is_empty() => return (NodeProgram::Standalone(PathBuf::from(v)), None),
        _ => {}
    }
    match small_build::build(NODE) {
        Ok(exe) => (NodeProgram::Standalone(exe), None),
        Err(why) => {
            let warning = format!(
                "the lean node binary could not be built ({why}); the roslite processes run as \
                 `{} linetrace-node`, so their memory includes the whole CLI",
                cli.display()
            );
            (NodeProgram::Cli(cli), Some(warning))
        }
    }
}

/// How to start one process of the application.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeProgram {
    /// `roslite-linetrace-node <role> ...`.
    Standalone(PathBuf),
    /// `roslite linetrace-node <role> ...`: the CLI binary.
    Cli(PathBuf),
}

impl NodeProgram {
    /// A command that runs `role` (`robot`, `follower`, `both`); the caller adds the options.
    pub fn command(&self, role: &str) -> Command {
        match self {
            Self::Standalone(exe) => {
                let mut c = Command::new(exe);
                c.arg(role);
                c
            }
            Self::Cli(exe) => {
                let mut c = Command::new(exe);
                c.args(["linetrace-node", role]);
                c
            }
        }
    }

    /// For tables and reports: which executable the roslite processes are.
    pub fn describe(&self) -> String {
        match self {
            Self::Standalone(exe) => format!(
                "{} (an executable of its own)",
                exe.file_name().unwrap_or_default().to_string_lossy()
            ),
            Self::Cli(exe) => format!(
                "{} linetrace-node (the CLI binary)",
                exe.file_name().unwrap_or_default().to_string_lossy()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_put_the_role_where_each_program_expects_it() {
        let standalone = NodeProgram::Standalone("/x/roslite-linetrace-node".into());
        let args: Vec<_> = standalone
            .command("robot")
            .get_args()
            .map(|a| a.to_owned())
            .collect();
        assert_eq!(args, ["robot"]);
        let cli = NodeProgram::Cli("/x/roslite".into());
        let args: Vec<_> = cli
            .command("follower")
            .get_args()
            .map(|a| a.to_owned())
            .collect();
        assert_eq!(args, ["linetrace-node", "follower"]);
    }
}

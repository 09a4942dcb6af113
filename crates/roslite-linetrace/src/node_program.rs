//! Which executable runs the application's roslite processes.
//!
//! The measured processes should carry the nodes and nothing else, as on the robot's board:
//! the `roslite-linetrace-node` binary of this crate, built with the size profile
//! (`release-small`: opt-level s, fat LTO, panic=abort, stripped) and linked statically (no
//! glibc, libm or ld.so pages mapped next to it). `cargo run --release -- demo` builds only the
//! CLI, so the CLI builds that binary with cargo on first use (later runs find it up to date in
//! a second); without cargo or a checkout it falls back to its own `roslite linetrace-node`
//! role, which runs the same code in a bigger process.

use std::path::PathBuf;
use std::process::Command;

/// The binary's name (`src/bin/roslite-linetrace-node.rs`).
pub const NODE_BINARY: &str = "roslite-linetrace-node";

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

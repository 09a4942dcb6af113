//! roslite's benchmarks: what `roslite bench ...` runs. Figures, not tests: each bench prints
//! a table, or one JSON object with `--json`, and some write SVG charts.
//!
//! Layers, bottom up:
//! - [`toolkit`]: what the benches share: helper processes, roslite contexts confined to this
//!   host, `/proc` memory figures, statistics, roslite's ping-pong, the bare transports and this
//!   machine's floors, the peers measured next to roslite (Cyclone DDS's `ddsperf`, a Fast DDS
//!   ping-pong, rclpy), and the JSON output and SVG charts. A toolkit module never imports a
//!   bench module.
//! - `bench`: one module per bench (`intra`, `timer`, `rtt` for the long RTPS/UDP run,
//!   `rtt_sweep` with its loaned series in `rtt_sweep::loan`, `footprint`, `service`, `large`,
//!   `linetrace`, `soak`). A bench module imports the toolkit, never another bench.
//! - [`BenchCommand`] and [`run`]: the command line and the dispatch the CLI calls.
//!
//! Several benches run the `roslite` binary again as their helper processes (echoes, peers,
//! publishers): as hidden `roslite bench ...` subcommands, through [`run_helper_before_clap`]
//! for the ones that must start lean, and through [`run_child_if_requested`] for the echoes of
//! the bare transports and floors. The CLI's `main` calls both before it parses anything.

mod bench;
mod command;
pub mod toolkit;

pub use command::{run, run_helper_before_clap, BenchCommand};

/// Runs the echo process of a bare-transport or floor measurement if this process was started
/// as one (it then exits), and returns at once otherwise; see [`toolkit::transport`].
pub fn run_child_if_requested() {
    toolkit::transport::run_child_if_requested();
}

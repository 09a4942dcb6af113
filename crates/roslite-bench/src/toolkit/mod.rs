//! The toolkit: what the benches share. No toolkit module imports a bench module; a
//! measurement that two benches use lives here.
//!
//! - [`units`]: sizes and durations as the command line takes them and the tables print them.
//! - [`stats`]: order statistics of samples, and the choice of a median round.
//! - [`process`]: helper processes (this binary in a helper role, or a peer's program), killed
//!   when dropped.
//! - [`context`]: roslite contexts confined to this host, and the path the graph says a remote
//!   endpoint's samples take.
//! - [`capture`]: the RTPS traffic of a network namespace, counted by kind from a raw socket.
//! - [`cpu`]: a process's CPU time from `/proc`, read at two instants.
//! - [`memory`]: a process's memory as `/proc` reports it: status, smaps by mapping, and the
//!   pages it touches per message.
//! - [`pingpong`]: roslite's ping-pong through the user API (pings, echoes, chains of pings
//!   sent back to back or by a timer) and the per-size [`pingpong::Point`] of a series.
//! - [`transport`]: the same ping-pong on a bare roslite-shm transport, and this machine's
//!   floors (futex, raw Unix socket, memcpy), with the echo processes they start.
//! - [`cyclone`], [`fastdds`], [`rclpy`]: the peers measured next to roslite.
//! - [`veth`]: two network namespaces joined by a veth pair.
//! - [`json`] and [`plot`]: the `--json` output and the SVG charts.

pub mod capture;
pub mod context;
pub mod cpu;
pub mod cyclone;
pub mod fastdds;
pub mod json;
pub mod memory;
pub mod pingpong;
pub mod plot;
pub mod process;
pub mod rclpy;
pub mod stats;
pub mod transport;
pub mod units;
pub mod veth;

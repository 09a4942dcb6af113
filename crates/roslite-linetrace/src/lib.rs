//! The Raspberry Pi Mouse line follower, the application of the mROS 2 line-follower evaluation
//! (docs/experiments.md), on roslite.
//!
//! Layers, bottom up:
//! - [`course`]: the floor and its line (geometry, reflectance);
//! - [`robot`]: the simulated robot (kinematics, motors, light sensors, switches) and the
//!   scripted operator who calibrates and starts it;
//! - [`follower`]: upstream's line-follower logic as a pure state machine;
//! - [`sim`]: both in one deterministic loop on simulated time (tests);
//! - [`nodes`]: the two as roslite nodes (`raspimouse`, `follower`) with latency tracing;
//! - [`node_program`]: the lean static executable the roslite processes run, built by
//!   [`small_build`] (the size profile, statically linked: what a small board would run);
//! - [`launch`]: runs a configuration (roslite or rclpy robot and follower, separate processes
//!   or one) on loopback and collects its latencies, memory and path; the CLI's demo and
//!   `roslite bench linetrace` both start it from here;
//! - [`report`]: tables, Markdown and SVG;
//! - [`cpp_build`] and (feature `wasm`) `wasm_build`: the C++ follower (`cpp/follower.cpp`)
//!   as a native program and as a WebAssembly node with its lean host.

pub mod course;
pub mod cpp_build;
pub mod follower;
pub mod launch;
#[cfg(feature = "wasm")]
pub mod migrating;
pub mod node_program;
pub mod nodes;
pub mod process;
pub mod report;
pub mod rng;
pub mod robot;
pub mod sim;
pub mod small_build;
#[cfg(feature = "wasm")]
pub mod wasm_build;

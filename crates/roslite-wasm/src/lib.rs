//! The WebAssembly node host (docs/wasm.md): runs ROS 2 nodes compiled to `wasm32-wasip1` on
//! roslite's native runtime, one sandboxed instance per node, several to a process.

pub mod guest_build;
pub mod memory;

//! The WebAssembly node host (docs/wasm.md): runs ROS 2 nodes compiled to `wasm32-wasip1` on
//! roslite's native runtime, one sandboxed instance per node, several to a process.
//!
//! - [`abi`]: the guest ABI (imports, exports, dispatch kinds, layouts); [`module`] checks a
//!   module against it before linking.
//! - [`imports`]: the `roslite_v1` imports, each a call of the C ABI function of its name;
//!   [`calls`] is the seam to the engines, [`guest`] what the host keeps per guest.
//! - [`wasi`]: the WASI preview 1 sandbox; [`memory`]: bounds-checked guest memory.
//! - [`engine`]: wasmtime and wasmi; [`host`]: the threads running guests.

pub mod abi;
pub mod calls;
pub mod carried;
pub mod cli;
pub mod cross;
pub mod engine;
pub mod fault;
pub mod guest;
pub mod guest_build;
pub mod host;
pub mod hosting;
pub mod imports;
pub mod inflight;
pub mod instrument;
pub mod journal;
pub mod memory;
pub mod migrate;
pub mod module;
pub mod park;
pub mod published;
pub mod recorded;
pub mod snapshot;
pub mod waiting;
pub mod wasi;

pub use engine::{EngineKind, Limits};
pub use fault::Fault;
pub use host::{GuestEnd, GuestSpec, Host, HostOptions};

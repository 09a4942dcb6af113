//! The C ABI of roslite (`include/roslite/roslite.h`): ROS 2 nodes written in C, and the base
//! that the C++ API and WebAssembly nodes build on.
//!
//! The ABI is shaped so that a WebAssembly guest can import it unchanged: objects are integer
//! handles, never pointers ([`handles`]); messages cross as CDR bytes tagged with a ROS type
//! name and RIHS01 hash; callbacks are (function, user data) pairs. Every function returns a
//! status, sets the thread's last error on failure ([`status`]) and catches any panic inside
//! roslite, so none crosses the boundary.
//!
//! The files: `status` (codes, last error, the guard around every call), `text` and
//! `convert` (what crosses the boundary, read and written), `types` (the message types the
//! runtime knows, `roslite_type_register`), `handles` (the handle table),
//! then one file per family: `context`, `node`, `pubsub`, `filter` (content-filtered
//! subscriptions), `timer`, `client`, `introspection` (service events), `events`, `params`,
//! `log`, `executor`, `lifecycle` (managed nodes and their publishers), and `signals`
//! (SIGINT/SIGTERM as a shutdown).

//!
//! The modules are public for the WebAssembly host (`roslite-wasm`), which calls the same
//! functions with what a guest passed, so a Wasm node behaves exactly as a C node.

#![allow(clippy::missing_safety_doc)] // the header documents each function's contract

pub mod handles;
pub mod status;

pub mod client;
pub mod context;
pub mod convert;
pub mod events;
pub mod executor;
pub mod filter;
pub mod introspection;
pub mod lifecycle;
pub mod log;
pub mod node;
pub mod params;
pub mod pubsub;
pub mod signals;
pub mod text;
pub mod timer;
pub mod types;

pub use status::*;
